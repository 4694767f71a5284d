"""Parsers for storage benchmark and file-system tools: fio (JSON and text summary), dd, lfs df.

Used in ch16/ch17 实操命令. Every parser raises one ``StorageParseError`` (a ``ValueError``)
naming the tool and the expected format when given text it does not recognise; it never returns
a half-filled result. Sample outputs in the tools' real formats are in
``labutil/data/storage_samples.toml`` (:func:`sample`), each with its provenance.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from . import validate
from .units import BYTES_PER_GB


from .parsers._common import ParseError


class StorageParseError(ParseError):
    """Text that is not the output format a storage tool parser expects (a ``labutil.parsers.ParseError``)."""


# -- fio -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FioResult:
    """One fio job (or group with ``group_reporting``), both directions. Bandwidth in decimal GB/s."""

    jobname: str
    read_gbs: float
    write_gbs: float
    read_iops: float
    write_iops: float
    read_clat_mean_us: float
    write_clat_mean_us: float
    read_clat_p99_us: float
    write_clat_p99_us: float

    @property
    def gbs(self) -> float:
        return self.read_gbs + self.write_gbs

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops


def _num(d: dict, key: str, where: str) -> float:
    if key not in d:
        raise StorageParseError(f"fio JSON: missing '{key}' in {where}")
    try:
        v = float(d[key])
    except (TypeError, ValueError):
        raise StorageParseError(f"fio JSON: '{key}' in {where} is not a number: {d[key]!r}") from None
    if v != v or v < 0:
        raise StorageParseError(f"fio JSON: '{key}' in {where} must be >= 0; got {v!r}")
    return v


def _clat(side: dict, where: str) -> tuple[float, float]:
    clat = side.get("clat_ns")
    if not isinstance(clat, dict):
        return 0.0, 0.0
    mean = _num(clat, "mean", f"{where}.clat_ns") / 1e3 if "mean" in clat else 0.0
    pct = clat.get("percentile") or {}
    p99 = 0.0
    for k, v in pct.items():
        try:
            if abs(float(k) - 99.0) < 1e-9:
                p99 = float(v) / 1e3
        except (TypeError, ValueError):
            raise StorageParseError(f"fio JSON: bad percentile entry {k!r}: {v!r} in {where}") from None
    return mean, p99


def parse_fio_json(text: str) -> list[FioResult]:
    """Parse ``fio --output-format=json`` (fio 3.x): one :class:`FioResult` per entry of ``jobs``.

    Uses ``bw_bytes`` (bytes/s) and ``iops`` of the ``read``/``write`` objects, and ``clat_ns``
    (mean and the 99.000000 percentile) — field names as documented in the fio HOWTO, "JSON output".
    """
    if not isinstance(text, str) or not text.strip():
        raise StorageParseError("fio JSON: empty input; expected the output of `fio --output-format=json`")
    start = text.find("{")
    try:
        doc = json.loads(text[start:]) if start >= 0 else None
    except json.JSONDecodeError as exc:
        raise StorageParseError(f"fio JSON: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list) or not doc["jobs"]:
        raise StorageParseError("fio JSON: expected an object with a non-empty 'jobs' list "
                                "(the output of `fio --output-format=json`)")
    out = []
    for i, job in enumerate(doc["jobs"]):
        if not isinstance(job, dict):
            raise StorageParseError(f"fio JSON: jobs[{i}] is not an object")
        name = str(job.get("jobname", f"job{i}"))
        vals = {}
        for side in ("read", "write"):
            d = job.get(side)
            if not isinstance(d, dict):
                raise StorageParseError(f"fio JSON: jobs[{i}] ({name}) has no '{side}' object")
            where = f"jobs[{i}].{side}"
            bw = _num(d, "bw_bytes", where) if "bw_bytes" in d else _num(d, "bw", where) * 1024.0
            vals[side] = (bw / BYTES_PER_GB, _num(d, "iops", where), *_clat(d, where))
        out.append(FioResult(name, vals["read"][0], vals["write"][0], vals["read"][1], vals["write"][1],
                             vals["read"][2], vals["write"][2], vals["read"][3], vals["write"][3]))
    return out


_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9}
_BIN = {"B/S": 1.0, "KIB/S": 1024.0, "MIB/S": 1024.0 ** 2, "GIB/S": 1024.0 ** 3, "TIB/S": 1024.0 ** 4}
_SUMMARY = re.compile(r"^\s*(read|write)\s*:\s*IOPS=([0-9.]+)([kKmMgG]?)\s*,\s*BW=([0-9.]+)\s*([KMGT]?i?B/s)",
                      re.MULTILINE)
_HEADER = re.compile(r"^(\S[^:]*):\s*\(groupid=", re.MULTILINE)


def parse_fio_summary(text: str) -> list[FioResult]:
    """Parse fio's normal (text) output: the ``read: IOPS=..., BW=...`` line under each job header.

    Format of fio 3.x, e.g. ``  write: IOPS=3532, BW=3532MiB/s (3704MB/s)(207GiB/60012msec)``;
    IOPS may carry k/M suffixes (decimal), BW is in binary units (KiB/s, MiB/s, GiB/s).
    """
    if not isinstance(text, str) or not text.strip():
        raise StorageParseError("fio summary: empty input; expected fio's text output with "
                                "'read: IOPS=..., BW=...' lines")
    headers = [(m.start(), m.group(1).strip()) for m in _HEADER.finditer(text)]
    lines = list(_SUMMARY.finditer(text))
    if not lines:
        raise StorageParseError("fio summary: no 'read: IOPS=..., BW=...' or 'write: IOPS=...' line found")
    jobs: dict[str, dict] = {}
    order: list[str] = []
    for m in lines:
        name = "job0"
        for pos, h in headers:
            if pos < m.start():
                name = h
        if name not in jobs:
            jobs[name] = {"read": (0.0, 0.0), "write": (0.0, 0.0)}
            order.append(name)
        unit = m.group(5).upper()
        if unit not in _BIN:
            raise StorageParseError(f"fio summary: unknown bandwidth unit {m.group(5)!r}")
        iops = float(m.group(2)) * _SUFFIX[m.group(3).lower()]
        bw = float(m.group(4)) * _BIN[unit] / BYTES_PER_GB
        jobs[name][m.group(1)] = (bw, iops)
    return [FioResult(n, jobs[n]["read"][0], jobs[n]["write"][0], jobs[n]["read"][1], jobs[n]["write"][1],
                      0.0, 0.0, 0.0, 0.0) for n in order]


# -- dd ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DdResult:
    bytes: int
    seconds: float

    @property
    def gbs(self) -> float:
        return self.bytes / self.seconds / BYTES_PER_GB


_DD = re.compile(r"^(\d+)\s+bytes\b.*?copied,\s*([0-9.]+(?:e[-+]?\d+)?)\s*s,", re.MULTILINE)


def parse_dd(text: str) -> DdResult:
    """Parse GNU dd's final line: ``N bytes (… GB, … GiB) copied, T s, R GB/s``.

    The rate is recomputed from bytes and seconds (dd rounds it to two significant digits).
    """
    if not isinstance(text, str):
        raise StorageParseError(f"dd: expected text, got {type(text).__name__}")
    m = None
    for m in _DD.finditer(text):
        pass
    if m is None:
        raise StorageParseError("dd: no 'N bytes (...) copied, T s, R GB/s' line found")
    n, s = int(m.group(1)), float(m.group(2))
    if s <= 0:
        raise StorageParseError(f"dd: elapsed time must be > 0 s; got {s}")
    return DdResult(bytes=n, seconds=s)


# -- lfs df ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LfsTarget:
    uuid: str
    kind: str  # "MDT", "OST" or "summary"
    index: int
    size_bytes: float
    used_bytes: float
    avail_bytes: float
    use_pct: float
    mount: str


@dataclass(frozen=True)
class LfsDf:
    targets: tuple

    @property
    def osts(self) -> list:
        return [t for t in self.targets if t.kind == "OST"]

    @property
    def mdts(self) -> list:
        return [t for t in self.targets if t.kind == "MDT"]

    @property
    def summary(self) -> LfsTarget:
        for t in self.targets:
            if t.kind == "summary":
                return t
        raise StorageParseError("lfs df: no filesystem_summary line")

    @property
    def ost_imbalance(self) -> float:
        """Max OST fill minus mean OST fill, in percentage points (a hot, too-full OST)."""
        fills = [t.use_pct for t in self.osts]
        return max(fills) - sum(fills) / len(fills)


_LFS_SIZE = re.compile(r"^([0-9.]+)([KMGTPE]?)$")
_LFS_LINE = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)%\s+(\S+?)(?:\[(MDT|OST):(\d+)\])?\s*$")


def _lfs_size(tok: str, human: bool) -> float:
    m = _LFS_SIZE.match(tok)
    if not m:
        raise StorageParseError(f"lfs df: bad size {tok!r}")
    mult = 1024.0 ** ("KMGTPE".index(m.group(2)) + 1) if m.group(2) else 1.0
    return float(m.group(1)) * (mult if human else 1024.0)  # without -h lfs prints 1K-blocks


def parse_lfs_df(text: str) -> LfsDf:
    """Parse ``lfs df`` or ``lfs df -h``: one row per MDT/OST plus ``filesystem_summary``.

    Format of the Lustre Operations Manual ("Checking File System Free Space"): header
    ``UUID bytes Used Available Use% Mounted on`` (``1K-blocks`` without ``-h``); sizes with ``-h``
    carry binary suffixes (K = 1024).
    """
    if not isinstance(text, str) or not text.strip():
        raise StorageParseError("lfs df: empty input")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines[0].split() or lines[0].split()[0] != "UUID":
        raise StorageParseError("lfs df: expected a header line starting with 'UUID'")
    human = "bytes" in lines[0].split()
    if not human and "1K-blocks" not in lines[0]:
        raise StorageParseError("lfs df: header must name 'bytes' (-h) or '1K-blocks'")
    targets = []
    for ln in lines[1:]:
        m = _LFS_LINE.match(ln.strip())
        if not m:
            raise StorageParseError(f"lfs df: unrecognised line {ln.strip()!r}")
        uuid = m.group(1).rstrip(":")
        kind = m.group(7) or ("summary" if uuid == "filesystem_summary" else "")
        if not kind:
            raise StorageParseError(f"lfs df: line is neither an MDT/OST nor the summary: {ln.strip()!r}")
        targets.append(LfsTarget(uuid=uuid, kind=kind, index=int(m.group(8)) if m.group(8) else -1,
                                 size_bytes=_lfs_size(m.group(2), human), used_bytes=_lfs_size(m.group(3), human),
                                 avail_bytes=_lfs_size(m.group(4), human), use_pct=float(m.group(5)),
                                 mount=m.group(6)))
    if not any(t.kind == "OST" for t in targets):
        raise StorageParseError("lfs df: no OST lines found")
    return LfsDf(targets=tuple(targets))


# -- samples ---------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _samples() -> dict:
    text = resources.files("labutil").joinpath("data", "storage_samples.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def sample(name: str) -> str:
    """The text of a stored sample output (see ``sample_source`` for where its format comes from)."""
    s = _samples()
    if name not in s:
        raise validate.unknown_name("storage sample", name, s)
    return s[name]["text"]


def sample_source(name: str) -> str:
    s = _samples()
    if name not in s:
        raise validate.unknown_name("storage sample", name, s)
    return s[name]["source"]


def sample_names() -> list[str]:
    return list(_samples())
