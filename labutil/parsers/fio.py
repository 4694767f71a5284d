"""Parsers for storage benchmark and file-system tools: fio (JSON and text summary), dd, lfs df,
and the parallel-file-system acceptance pair IOR (bandwidth) and mdtest (metadata rates).

Used in ch16/ch17 实操命令 and by the triage engine. Every parser raises one ``StorageParseError``
(a :class:`labutil.parsers.ParseError`, itself a ``ValueError``)
naming the tool and the expected format when given text it does not recognise; it never returns
a half-filled result. Sample outputs in the tools' real formats are in
``labutil/data/storage_samples.toml`` (:func:`sample`), each with its provenance.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from bisect import bisect_left

from .. import data_files, validate
from ..units import BYTES_PER_GB
from ._common import ParseError, require_text

__all__ = ["StorageParseError", "FioResult", "parse_fio_json", "parse_fio_summary", "parse_fio_terse",
           "DdResult", "parse_dd", "LfsTarget", "LfsDf", "parse_lfs_df", "IorOperation", "IorResult", "parse_ior",
           "MdtestResult", "parse_mdtest", "sample", "sample_source", "sample_names"]


class StorageParseError(ParseError):
    """Text that is not the output format a storage tool parser expects (a ``labutil.parsers.ParseError``)."""


def _text(text, tool: str, expected: str = "") -> str:
    """The pasted output as the tool printed it (``labutil.parsers._common.require_text``: bytes in any
    encoding decoded, ANSI colour, BOMs and zero-width characters dropped, NBSP -> space, CRLF -> LF);
    a StorageParseError naming ``tool`` when it is not text or empty."""
    try:
        return require_text(text, tool)
    except StorageParseError:
        raise
    except ParseError as exc:
        raise StorageParseError(f"{exc}{'; expected ' + expected if expected else ''}") from None


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
    """(mean, p99) completion latency in microseconds: ``clat_ns`` (fio >= 3.0, nanoseconds) or
    ``clat`` (fio 2.x JSON, microseconds); (0.0, 0.0) when the job reports neither (e.g. no I/O)."""
    if isinstance(side.get("clat_ns"), dict):
        clat, scale, key = side["clat_ns"], 1e-3, "clat_ns"
    elif isinstance(side.get("clat"), dict):
        clat, scale, key = side["clat"], 1.0, "clat"
    else:
        return 0.0, 0.0
    mean = _num(clat, "mean", f"{where}.{key}") * scale if "mean" in clat else 0.0
    pct = clat.get("percentile") or {}
    if not isinstance(pct, dict):
        raise StorageParseError(f"fio JSON: {where}.{key}.percentile is not an object")
    p99 = 0.0
    for k, v in pct.items():
        try:
            if abs(float(k) - 99.0) < 1e-9:
                p99 = float(v) * scale
        except (TypeError, ValueError):
            raise StorageParseError(f"fio JSON: bad percentile entry {k!r}: {v!r} in {where}") from None
    return mean, p99


def parse_fio_json(text: str) -> list[FioResult]:
    """Parse ``fio --output-format=json`` (fio 3.x): one :class:`FioResult` per entry of ``jobs``.

    Uses ``bw_bytes`` (bytes/s) and ``iops`` of the ``read``/``write`` objects, and ``clat_ns``
    (mean and the 99.000000 percentile) — field names as documented in the fio HOWTO, "JSON output".
    """
    text = _text(text, "fio JSON", "the output of `fio --output-format=json`")
    text = text.lstrip("\ufeff")
    doc = None
    err = None
    # warnings ("fio: this platform does not support ...") may precede the document and
    # `--output-format=json,normal` text may follow it: decode the first object that has "jobs"
    for m in re.finditer(r"\{", text):
        try:
            cand, _end = json.JSONDecoder().raw_decode(text, m.start())
        except json.JSONDecodeError as exc:
            err = err or exc
            continue
        except RecursionError:
            raise StorageParseError("fio JSON: nested too deeply to be fio output") from None
        if isinstance(cand, dict) and "jobs" in cand:
            doc = cand
            break
    if doc is None and err is not None:
        raise StorageParseError(f"fio JSON: not valid JSON ({err.msg} at line {err.lineno})")
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
# fio 2.x prints KB/s, MB/s, GB/s meaning 1024-based units (kb_base=1024 was its default)
_BIN_OLD = {"B/S": 1.0, "KB/S": 1024.0, "MB/S": 1024.0 ** 2, "GB/S": 1024.0 ** 3, "TB/S": 1024.0 ** 4}
_SUMMARY = re.compile(r"^[ \t]*(read|write)[ \t]*:\s*IOPS=([0-9.]+)([kKmMgG]?)\s*,\s*BW=([0-9.]+)\s*([KMGT]?i?B/s)",
                      re.MULTILINE)
# fio 2.x: "  read : io=65474MB, bw=214088KB/s, iops=26760, runt=313167msec" (axboe/fio #165)
_SUMMARY_OLD = re.compile(r"^[ \t]*(read|write)[ \t]*:\s*io=[^,]*,\s*bw=([0-9.]+)\s*([KMGT]?B/s)\s*,\s*"
                          r"iops=([0-9.]+)([kKmMgG]?)", re.MULTILINE)
# "Run status group 0" totals: "   READ: bw=611MiB/s (641MB/s), 611MiB/s-611MiB/s (...), io=512MiB (537MB), ..."
# (fio 3.x) or "   READ: io=1024MB, aggrb=104857KB/s, ..." (fio 2.x); no IOPS there.
_GROUP = re.compile(r"^[ \t]*(READ|WRITE)[ \t]*:\s*(?:bw=([0-9.]+)\s*([KMGT]?i?B/s)|io=[^,]*,\s*aggrb=([0-9.]+)\s*"
                    r"([KMGT]?B/s))", re.MULTILINE)
_HEADER = re.compile(r"^(\S[^:\n]*):[ \t]*\(groupid=", re.MULTILINE)  # one line: a junk line above is no part of the name


def _bw_bytes(value: str, unit: str, table: dict) -> float:
    u = unit.upper()
    if u not in table:
        raise StorageParseError(f"fio summary: unknown bandwidth unit {unit!r}")
    return float(value) * table[u]


def parse_fio_summary(text: str) -> list[FioResult]:
    """Parse fio's normal (text) output: the ``read: IOPS=..., BW=...`` line under each job header.

    Format of fio 3.x, e.g. ``  write: IOPS=3532, BW=3532MiB/s (3704MB/s)(207GiB/60012msec)``;
    IOPS may carry k/M suffixes (decimal), BW is in binary units (KiB/s, MiB/s, GiB/s). fio 2.x
    lines (``read : io=65474MB, bw=214088KB/s, iops=26760, runt=...``, KB = 1024 B) are read too.
    Output that has only the ``Run status group`` totals (``READ: bw=611MiB/s ...``, e.g.
    Azure/azurehpc #433) gives one result per group with IOPS 0 (the totals print none).
    """
    text = _text(text, "fio summary", "fio's text output with 'read: IOPS=..., BW=...' lines")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    headers = [(m.start(), m.group(1).strip()) for m in _HEADER.finditer(text)]
    found = []  # (pos, direction, bytes/s, iops)
    for m in _SUMMARY.finditer(text):
        unit = m.group(5).upper()
        if unit not in _BIN:
            raise StorageParseError(f"fio summary: unknown bandwidth unit {m.group(5)!r}")
        found.append((m.start(), m.group(1), _bw_bytes(m.group(4), unit, _BIN),
                      float(m.group(2)) * _SUFFIX[m.group(3).lower()]))
    for m in _SUMMARY_OLD.finditer(text):
        found.append((m.start(), m.group(1), _bw_bytes(m.group(2), m.group(3), _BIN_OLD),
                      float(m.group(4)) * _SUFFIX[m.group(5).lower()]))
    if not found:
        groups: dict = {}
        for m in _GROUP.finditer(text):
            bw = _bw_bytes(m.group(2), m.group(3), _BIN) if m.group(2) else _bw_bytes(m.group(4), m.group(5), _BIN_OLD)
            n = sum(1 for k in groups if k[1] == m.group(1).lower())
            groups[(n, m.group(1).lower())] = bw
        if groups:
            out = []
            for n in sorted({k[0] for k in groups}):
                out.append(FioResult(f"group {n}", groups.get((n, "read"), 0.0) / BYTES_PER_GB,
                                     groups.get((n, "write"), 0.0) / BYTES_PER_GB, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
            return out
        raise StorageParseError("fio summary: no 'read: IOPS=..., BW=...' or 'write: IOPS=...' line found")
    jobs: dict[str, dict] = {}
    order: list[str] = []
    # the job a result line belongs to is the last header before it: one binary search per line
    # (robustness review R13: the old scan over every header made a 5 MB paste take 41 s)
    hpos = [p for p, _ in headers]
    for pos, direction, bw, iops in sorted(found):
        k = bisect_left(hpos, pos)
        name = headers[k - 1][1] if k else "job0"
        if name not in jobs:
            jobs[name] = {"read": (0.0, 0.0), "write": (0.0, 0.0)}
            order.append(name)
        jobs[name][direction] = (bw / BYTES_PER_GB, iops)
    return [FioResult(n, jobs[n]["read"][0], jobs[n]["write"][0], jobs[n]["read"][1], jobs[n]["write"][1],
                      0.0, 0.0, 0.0, 0.0) for n in order]


# fio --minimal / --output-format=terse, versions 3-5 (fio HOWTO "Terse output"): fields are
# terse_version;fio_version;jobname;groupid;error; then per direction (read, then write) 41 fields:
# io_kb;bw_kb (KiB/s);iops;runtime_ms;slat min;max;mean;dev (us);clat min;max;mean;dev (us);
# 20 clat percentiles "99.000000%=<us>";lat min;max;mean;dev;bw min;max;agg%;mean;dev.
_TERSE_DIR = 41
_TERSE_READ, _TERSE_WRITE = 5, 5 + _TERSE_DIR


def _terse_side(f: list[str], start: int, line_no: int) -> tuple[float, float, float, float]:
    def num(i: int, what: str) -> float:
        try:
            v = float(f[start + i])
        except (ValueError, IndexError):
            raise StorageParseError(f"fio terse: line {line_no}: field {start + i + 1} ({what}) is not a number: "
                                    f"{f[start + i]!r}") from None
        if v != v or v < 0 or v == float("inf"):
            raise StorageParseError(f"fio terse: line {line_no}: field {start + i + 1} ({what}) must be >= 0; got {v}")
        return v

    bw_kib, iops, clat_mean = num(1, "bw KiB/s"), num(2, "iops"), num(10, "clat mean us")
    p99 = 0.0
    for tok in f[start + 12:start + 32]:
        k, _, v = tok.partition("=")
        try:
            if abs(float(k.rstrip("%")) - 99.0) < 1e-9:
                p99 = float(v)
        except ValueError:
            raise StorageParseError(f"fio terse: line {line_no}: bad percentile field {tok!r}") from None
    return bw_kib * 1024.0 / BYTES_PER_GB, iops, clat_mean, p99


def parse_fio_terse(text: str) -> list[FioResult]:
    """Parse ``fio --minimal`` / ``--output-format=terse`` (terse versions 3, 4, 5): one
    :class:`FioResult` per ``3;fio-3.x;jobname;...`` line; other lines (warnings) are ignored.
    Bandwidth in the terse format is KiB/s, latencies in microseconds (fio HOWTO)."""
    text = _text(text, "fio terse", "`fio --minimal` lines '3;fio-3.x;job;...'")
    out = []
    for i, line in enumerate(text.replace("\r", "\n").split("\n"), 1):
        f = line.strip().split(";")
        if len(f) < 3 or not f[1].startswith("fio"):
            continue
        if f[0] not in ("3", "4", "5"):
            raise StorageParseError(f"fio terse: line {i}: terse version {f[0]!r} is not supported (3, 4 or 5)")
        if len(f) < _TERSE_WRITE + _TERSE_DIR:
            raise StorageParseError(f"fio terse: line {i} has {len(f)} fields, a v{f[0]} job line has at least "
                                    f"{_TERSE_WRITE + _TERSE_DIR} (truncated?)")
        r = _terse_side(f, _TERSE_READ, i)
        w = _terse_side(f, _TERSE_WRITE, i)
        out.append(FioResult(f[2], r[0], w[0], r[1], w[1], r[2], w[2], r[3], w[3]))
    if not out:
        raise StorageParseError("fio terse: no '3;fio-...;jobname;...' line found (run fio with --minimal)")
    return out


# -- dd ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DdResult:
    bytes: int
    seconds: float

    @property
    def gbs(self) -> float:
        return self.bytes / self.seconds / BYTES_PER_GB


_DD = re.compile(r"^(\d+)\s+bytes\b.*?copied,\s*(\d+(?:\.\d+)?(?:e[-+]?\d+)?|\.\d+)\s*s,", re.MULTILINE)


def parse_dd(text: str) -> DdResult:
    """Parse GNU dd's final line: ``N bytes (… GB, … GiB) copied, T s, R GB/s``.

    The rate is recomputed from bytes and seconds (dd rounds it to two significant digits).
    """
    text = _text(text, "dd", "dd's final 'N bytes (...) copied, T s, R GB/s' line")
    m = None
    for m in _DD.finditer(text):
        pass
    if m is None:
        raise StorageParseError("dd: no 'N bytes (...) copied, T s, R GB/s' line found")
    n, s = int(m.group(1)), float(m.group(2))
    if not s < float("inf"):
        raise StorageParseError(f"dd: elapsed time {m.group(2)!r} is not a finite number of seconds")
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


_LFS_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([KMGTPE]?)$")
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
    text = _text(text, "lfs df")
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


# -- IOR and mdtest (hpc/ior) -----------------------------------------------------------------------
MIB = 1024.0 ** 2


@dataclass(frozen=True)
class IorOperation:
    """One row of IOR's "Summary of all tests" table (bandwidths in MiB/s, as IOR prints them)."""

    operation: str  # "write" or "read"
    max_mib_s: float
    min_mib_s: float
    mean_mib_s: float
    mean_s: float
    tasks: int
    tasks_per_node: int
    repetitions: int
    file_per_proc: bool
    block_bytes: int
    xfer_bytes: int
    agg_mib: float
    api: str

    @property
    def max_gbs(self) -> float:
        """Best repetition in decimal GB/s (MiB/s x 2^20 / 1e9)."""
        return self.max_mib_s * MIB / BYTES_PER_GB

    @property
    def mean_gbs(self) -> float:
        return self.mean_mib_s * MIB / BYTES_PER_GB


@dataclass(frozen=True)
class IorResult:
    """An IOR run: the "Max Write/Max Read" lines and the "Summary of all tests" rows."""

    max_write_mib_s: float | None
    max_read_mib_s: float | None
    operations: tuple

    @property
    def max_write_gbs(self) -> float | None:
        """Best write in decimal GB/s: the summary row, else the "Max Write:" line; None if absent."""
        return self._max_gbs("write", self.max_write_mib_s)

    @property
    def max_read_gbs(self) -> float | None:
        """Best read in decimal GB/s: the summary row, else the "Max Read:" line; None if absent."""
        return self._max_gbs("read", self.max_read_mib_s)

    def _max_gbs(self, name, line_mib_s):
        for o in self.operations:
            if o.operation == name:
                return o.max_gbs
        return None if line_mib_s is None else line_mib_s * MIB / BYTES_PER_GB

    def op(self, name: str) -> IorOperation:
        for o in self.operations:
            if o.operation == name:
                return o
        raise StorageParseError(f"IOR: no '{name}' row in the summary; rows: {[o.operation for o in self.operations]}")


_NUM = r"\d+(?:\.\d+)?"
_IOR_MAX = re.compile(rf"^Max (Write|Read):\s*({_NUM})\s*MiB/sec\s*\(({_NUM})\s*MB/sec\)", re.MULTILINE)
#: Columns of the summary table this parser reads (IOR 3.x/4.x ``PrintLongSummaryHeader``; 3.3+ adds
#: Stonewall(s) and Stonewall(MiB), which are located by name so both layouts parse).
_IOR_NEEDED = ("Operation", "Max(MiB)", "Min(MiB)", "Mean(MiB)", "Mean(s)", "#Tasks", "tPN", "reps", "fPP",
               "blksiz", "xsize", "aggs(MiB)", "API")


def _ior_float(tok: str, col: str, line: str) -> float:
    try:
        v = float(tok)
    except ValueError:
        raise StorageParseError(f"IOR: column {col} is not a number ({tok!r}) in {line.strip()!r}") from None
    if v != v or v < 0:
        raise StorageParseError(f"IOR: column {col} must be >= 0; got {tok!r} in {line.strip()!r}")
    return v


def parse_ior(text: str) -> IorResult:
    """Parse the text output of IOR (``ior -a POSIX -F -t 1m -b 16g -w -r -i 3 ...``).

    Reads the ``Max Write: X MiB/sec (Y MB/sec)`` / ``Max Read:`` lines and the ``Summary of all
    tests:`` table whose header is ``Operation Max(MiB) Min(MiB) Mean(MiB) StdDev Max(OPs) ...
    Mean(s) [Stonewall(s) Stonewall(MiB)] Test# #Tasks tPN reps fPP ... blksiz xsize aggs(MiB) API
    RefNum`` (hpc/ior ``src/ior-output.c``). MiB = 2^20 B; ``IorOperation.max_gbs`` converts to the
    course's decimal GB/s. Raises ``StorageParseError`` when neither part is present.
    """
    text = _text(text, "IOR")
    maxes = {m.group(1).lower(): float(m.group(2)) for m in _IOR_MAX.finditer(text)}
    ops = []
    lines = text.splitlines()
    for i, ln in enumerate(lines):
        if ln.strip().startswith("Summary of all tests:"):
            rest = ln.strip()[len("Summary of all tests:"):].strip()
            j = i + 1
            header_line = rest
            while not header_line and j < len(lines):
                header_line, j = lines[j].strip(), j + 1
            header = header_line.split()
            missing = [c for c in _IOR_NEEDED if c not in header]
            if missing:
                raise StorageParseError(f"IOR: summary header lacks {missing}; got {header_line!r}")
            col = {c: header.index(c) for c in _IOR_NEEDED}
            for row in lines[j:]:
                tok = row.split()
                if not tok or tok[0] not in ("write", "read"):
                    break
                if len(tok) != len(header):
                    raise StorageParseError(f"IOR: summary row has {len(tok)} fields, header {len(header)}: "
                                            f"{row.strip()!r}")
                f = {c: tok[k] for c, k in col.items()}
                ops.append(IorOperation(
                    operation=f["Operation"], max_mib_s=_ior_float(f["Max(MiB)"], "Max(MiB)", row),
                    min_mib_s=_ior_float(f["Min(MiB)"], "Min(MiB)", row),
                    mean_mib_s=_ior_float(f["Mean(MiB)"], "Mean(MiB)", row),
                    mean_s=_ior_float(f["Mean(s)"], "Mean(s)", row), tasks=int(_ior_float(f["#Tasks"], "#Tasks", row)),
                    tasks_per_node=int(_ior_float(f["tPN"], "tPN", row)),
                    repetitions=int(_ior_float(f["reps"], "reps", row)),
                    file_per_proc=bool(int(_ior_float(f["fPP"], "fPP", row))),
                    block_bytes=int(_ior_float(f["blksiz"], "blksiz", row)),
                    xfer_bytes=int(_ior_float(f["xsize"], "xsize", row)),
                    agg_mib=_ior_float(f["aggs(MiB)"], "aggs(MiB)", row), api=f["API"]))
            break
    if not maxes and not ops:
        raise StorageParseError("IOR: no 'Max Write:'/'Max Read:' line and no 'Summary of all tests:' table")
    return IorResult(max_write_mib_s=maxes.get("write"), max_read_mib_s=maxes.get("read"), operations=tuple(ops))


@dataclass(frozen=True)
class MdtestResult:
    """mdtest's ``SUMMARY rate`` table: operation -> (max, min, mean, std dev) in ops/s, all tasks together."""

    iterations: int
    rows: dict

    def rate(self, operation: str) -> float:
        """Mean rate of one operation ("File creation", "File stat", "File read", ...), ops/s."""
        if operation not in self.rows:
            raise validate.unknown_name("mdtest operation", operation, self.rows)
        return self.rows[operation][2]


_MDTEST_HEAD = re.compile(r"^SUMMARY rate(?: \(in ops/sec\))?:\s*\(of (\d+) iterations?\)", re.MULTILINE)
_MDTEST_OPS = ("Directory creation", "Directory stat", "Directory read", "Directory rename", "Directory removal",
               "File creation", "File stat", "File read", "File removal", "Tree creation", "Tree removal")
_MDTEST_ROW = re.compile(r"^\s+(" + "|".join(_MDTEST_OPS) + r")\s*:?((?:\s+" + _NUM + r"){4,7})\s*$")


def parse_mdtest(text: str) -> MdtestResult:
    """Parse the ``SUMMARY rate`` table of mdtest (hpc/ior ``src/mdtest.c``).

    Each row is an operation (``File creation``, ``File stat``, ``File read``, ``File removal``,
    ``Directory ...``, ``Tree ...``) followed by Max, Min, Mean and Std Dev in ops/s over the
    iterations (with ``-P`` three per-rank columns come first; the last four are kept). Older
    releases put a colon after the name; both parse. ``SUMMARY time`` tables (``-T``) are refused.
    """
    text = _text(text, "mdtest")
    m = _MDTEST_HEAD.search(text)
    if not m:
        raise StorageParseError("mdtest: no 'SUMMARY rate: (of N iterations)' table (a 'SUMMARY time' table, run "
                                "with -T, is not read)")
    rows = {}
    for ln in text[m.end():].splitlines()[1:]:
        if not ln.strip() or ln.strip().startswith(("Operation", "---")):
            continue
        r = _MDTEST_ROW.match(ln)
        if not r:
            break
        vals = [float(x) for x in r.group(2).split()][-4:]
        rows[r.group(1)] = tuple(vals)
    if not rows:
        raise StorageParseError("mdtest: the SUMMARY rate table has no operation rows")
    return MdtestResult(iterations=int(m.group(1)), rows=rows)


# -- samples ---------------------------------------------------------------------------------------
def _samples() -> dict:
    return data_files.load("storage_samples.toml")


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
