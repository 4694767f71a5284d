"""Shared pieces of the tool-output parsers: the one error type and small tolerant helpers.

Every parser in ``labutil.parsers`` either returns a result or raises :class:`ParseError` (a
``ValueError``) with a message that names the tool and what was missing. Helpers here never
raise anything else: they return ``None`` for a value that is not a number.
"""

from __future__ import annotations

import math
import re

__all__ = ["ParseError", "require_text", "to_float", "to_int", "clean_lines", "MPI_PREFIX", "ANSI",
           "strip_launcher_prefix"]


class ParseError(ValueError):
    """Raised by every ``labutil.parsers`` function on garbage, empty or truncated input."""


# mpirun/srun prefixes such as "[1,0]<stdout>:" or "0: " in front of each line
MPI_PREFIX = re.compile(r"^\s*(?:\[\d+,\d+\]<std(?:out|err)>:|\d+:\s)")


def require_text(text, tool: str) -> str:
    """Check that ``text`` is a non-empty string (bytes are decoded as UTF-8, lossy)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise ParseError(f"{tool}: expected the tool's output as a string; got {type(text).__name__}")
    text = text.lstrip("\ufeff")  # a UTF-8 byte-order mark (Windows editors, PowerShell redirects)
    if not text.strip():
        raise ParseError(f"{tool}: the output is empty")
    return text.replace("\r\n", "\n").replace("\r", "\n")


# ANSI colour / cursor codes (terminals, `kubectl logs` of coloured output, Ray's "\x1b[36m(pid=..)")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")

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
