"""Shared pieces of the tool-output parsers: the one error type and small tolerant helpers.

Every parser in ``labutil.parsers`` either returns a result or raises :class:`ParseError` (a
``ValueError``) with a message that names the tool and what was missing. Helpers here never
raise anything else: they return ``None`` for a value that is not a number.
"""

from __future__ import annotations

import math
import re

__all__ = ["ParseError", "require_text", "decode_text", "normalise_text", "to_float", "to_int", "clean_lines",
           "MPI_PREFIX", "ANSI", "strip_launcher_prefix"]


class ParseError(ValueError):
    """Raised by every ``labutil.parsers`` function on garbage, empty or truncated input."""


# mpirun/srun prefixes such as "[1,0]<stdout>:" or "0: " in front of each line
MPI_PREFIX = re.compile(r"^\s*(?:\[\d+,\d+\]<std(?:out|err)>:|\d+:\s)")


def require_text(text, tool: str) -> str:
    """Check that ``text`` is a non-empty string and normalise it (:func:`normalise_text`): bytes are
    decoded whatever their encoding (:func:`decode_text`), ANSI colour codes, byte-order marks and
    NULs of a mis-decoded UTF-16 file are dropped, non-breaking spaces become spaces, CR/CRLF -> LF."""
    if isinstance(text, (bytes, bytearray)):
        text = decode_text(bytes(text))
    if not isinstance(text, str):
        raise ParseError(f"{tool}: expected the tool's output as a string; got {type(text).__name__}")
    text = normalise_text(text)
    if not text.strip():
        raise ParseError(f"{tool}: the output is empty")
    return text


_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
         (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def decode_text(data: bytes) -> str:
    """Bytes of a pasted/saved tool output -> text, whatever the encoding a real file has:

    - a byte-order mark picks UTF-8 / UTF-16 / UTF-32 (Windows PowerShell ``>`` writes UTF-16 LE
      with a BOM);
    - UTF-16 without a BOM is recognised by its NUL bytes: ASCII text in UTF-16 LE has a NUL at
      every odd offset (BE: every even offset);
    - otherwise UTF-8; if that fails, GB18030 (the Chinese Windows code page, a superset of GBK)
      when it decodes cleanly and yields CJK text; else UTF-8 with U+FFFD for the bad bytes.
    Never raises."""
    for bom, enc in _BOMS:
        if data.startswith(bom):
            return data.decode(enc, errors="replace")
    head = data[:4096]
    if len(head) >= 4:
        odd, even = head[1::2], head[0::2]
        if odd.count(0) >= 0.4 * len(odd) and even.count(0) < 0.1 * len(even):
            return data.decode("utf-16-le", errors="replace")
        if even.count(0) >= 0.4 * len(even) and odd.count(0) < 0.1 * len(odd):
            return data.decode("utf-16-be", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        t = data.decode("gb18030")
        if _CJK.search(t):
            return t
    except UnicodeDecodeError:
        pass
    return data.decode("utf-8", errors="replace")


_CJK = re.compile(r"[\u4e00-\u9fff]")
# Unicode spaces that web pages, chat tools and word processors put where a terminal had ASCII
# spaces: NBSP, the U+2000-U+200A spaces, narrow NBSP, medium mathematical space, ideographic space.
_USPACE = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_ZW = re.compile("[\ufeff\u200b\u200c\u200d\u2060]")


def normalise_text(text: str) -> str:
    """A pasted text as the tool printed it: ANSI colour/cursor codes (``grep --color``, ``dmesg
    --color``, coloured loggers) removed, byte-order marks anywhere (two files concatenated) and
    zero-width characters removed, Unicode spaces (NBSP from a web page or chat) -> ' ', CR/CRLF ->
    LF, and the NULs of a UTF-16 file that was decoded as 8-bit text removed. Linear; never raises."""
    if "\x00" in text:
        n0 = text.count("\x00")
        if n0 >= 0.3 * len(text):     # UTF-16 read as 8-bit: every other character is NUL
            text = text.replace("\x00", "")
            text = text.lstrip("\ufffd\xff\xfe\xfe\xff")
    if "\x1b" in text:
        text = ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ZW.sub("", text)
    return _USPACE.sub(" ", text)


# ANSI colour / cursor codes (terminals, `kubectl logs` of coloured output, Ray's "\x1b[36m(pid=..)")
# CSI sequences (ESC [ params intermediates final) and OSC strings (ESC ] ... BEL or ESC \); an OSC
# without its terminator stops at the end of the line (linear: no scan to the end of the text).
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[()][0-9A-B]|\x1b[=>]")

# Prefixes that launchers and log collectors put in front of every line of a tool's output:
# Open MPI --tag-output "[1,0]<stdout>:", srun -l "0: ", pdsh/clush "node01: ", Ray
# "(RayWorkerWrapper pid=4009) ", milabench/torchx "host [stderr] ", ISO-8601 timestamps of
# `kubectl logs --timestamps` / `docker logs -t` and "[2026-03-13 22:26:02] " log stamps.
_LAUNCHER_PREFIXES = (
    MPI_PREFIX,
    re.compile(r"^\s*\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s+"),
    re.compile(r"^\s*\[\d{4}-\d\d-\d\d[T ][\d:.,]+\]\s*"),
    re.compile(r"^\s*\([A-Za-z_][\w.]*(?:\s+pid=\d+)?(?:,\s*ip=[\d.]+)?\)\s+"),
    re.compile(r"^\s*\S+\s+\[std(?:out|err)\]\s*:?\s*"),
    re.compile(r"^\s*[A-Za-z][\w.-]*:(?:\s+(?=[#\d])|\s{2,}|\s*$)"),
)


def strip_launcher_prefix(line: str) -> str:
    """``line`` without ANSI codes and without the launcher/log prefixes above (applied repeatedly,
    e.g. a timestamp in front of an mpirun tag). Never raises."""
    s = ANSI.sub("", line)
    for _ in range(4):
        before = s
        for rx in _LAUNCHER_PREFIXES:
            s = rx.sub("", s, count=1)
        if s == before:
            break
    return s


def clean_lines(text: str) -> list[str]:
    """Lines with mpirun/srun rank prefixes removed (trailing whitespace stripped)."""
    return [MPI_PREFIX.sub("", line).rstrip() for line in text.split("\n")]


_NUM = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def to_float(value) -> float | None:
    """Leading number of ``value`` ("81559 MiB" -> 81559.0); None for N/A, [Not Supported], text."""
    if value is None:
        return None
    m = _NUM.match(str(value).strip())
    if not m:
        return None
    try:
        x = float(m.group(0))
    except ValueError:  # pragma: no cover - the regex only matches numbers
        return None
    return x if math.isfinite(x) else None


def to_int(value) -> int | None:
    """Integer value of a decimal or 0x-hex string; None when it is not one."""
    if value is None:
        return None
    s = str(value).strip()
    try:
        if s.lower().startswith("0x"):
            return int(s, 16)
        x = to_float(s)
        if x is None or x != int(x):
            return None
        return int(x)
    except (ValueError, OverflowError):
        return None


# "NCCL version 2.18.3+cuda12.2": printed by NCCL_DEBUG=INFO logs and by nccl-tests' header
NCCL_VERSION = re.compile(r"NCCL version\s+(\d+\.\d+\.\d+\S*)")
