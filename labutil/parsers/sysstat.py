"""Parsers for the data-pipeline probes of ch18: ``iostat -x`` (sysstat) and ``nvidia-smi dmon``.

Formats:

* ``iostat -x [-d] [-t] [-z] [-m] INTERVAL`` from sysstat. Both header generations are read by
  column *name*: sysstat >= 12 (``Device r/s rkB/s rrqm/s %rrqm r_await rareq-sz w/s wkB/s ...
  aqu-sz %util``, see the sysstat ``iostat(1)`` man page) and sysstat <= 11 (``Device: rrqm/s
  wrqm/s r/s w/s rkB/s wkB/s avgrq-sz avgqu-sz await r_await w_await svctm %util``). ``-m``
  (``rMB/s``) and ``-t`` timestamps are accepted; the ``avg-cpu`` block gives ``%iowait``.
  iostat's kB and MB are 1024-based (the man page: "kilobytes"), converted here to decimal GB/s.
* ``nvidia-smi dmon -s um [-o DT]``: two ``#`` header lines (names, then units), then one row
  per GPU per sample. Columns depend on the driver (older drivers print ``gpu sm mem enc dec`` for
  ``-s u``, e.g. influxdata/telegraf issue #5532 (2020); current ones print ``gpu sm mem enc dec jpg
  ofa fb bar1 ccpm`` for ``-s um``), so they are read by name; ``-`` means "not supported" and
  becomes ``None``. ``sm`` is the percentage of the sample period in which at
  least one kernel ran (``nvidia-smi --help-query-gpu``: utilization.gpu), not SM occupancy.

Every parser returns dataclasses with unit-suffixed fields or raises :class:`ParseError`.
The ``SAMPLE_*`` strings are in the tools' real formats with illustrative values (a loader-bound
training node: NVMe reading ~2 GB/s, GPUs idling between batches).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._common import ParseError, clean_lines, require_text, to_float

__all__ = ["IostatDevice", "IostatReport", "parse_iostat_x", "DmonRow", "DmonLog", "parse_nvidia_smi_dmon",
           "SAMPLE_IOSTAT_X", "SAMPLE_IOSTAT_X_OLD", "SAMPLE_DMON_UM"]

_KIB = 1024.0
_MIB = 1024.0 * 1024.0


# -- iostat -x ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class IostatDevice:
    """One device line of one ``iostat -x`` report. Bandwidth in decimal GB/s, latency in ms."""

    device: str
    r_per_s: float
    w_per_s: float
    read_gbs: float
    write_gbs: float
    r_await_ms: float | None
    w_await_ms: float | None
    queue_depth: float | None   # aqu-sz (new) / avgqu-sz (old)
    util_pct: float             # %util, 0-100 (percent of wall time with >= 1 request in flight)

    @property
    def read_req_kib(self) -> float | None:
        """Average read request size, KiB (rareq-sz in sysstat 12), from bandwidth / IOPS."""
        if self.r_per_s <= 0:
            return None
        return self.read_gbs * 1e9 / self.r_per_s / _KIB


@dataclass(frozen=True)
class IostatReport:
    """One interval of ``iostat -x``: the CPU block (if printed) and the device lines."""

    iowait_pct: float | None
    devices: tuple[IostatDevice, ...]

    def device(self, name: str) -> IostatDevice:
        for d in self.devices:
            if d.device == name:
                return d
        raise KeyError(f"device {name!r} not in this report; devices: {[d.device for d in self.devices]}")


def _col(row: dict, *names: str) -> float | None:
    for n in names:
        if n in row:
            return to_float(row[n])
    return None


def parse_iostat_x(text) -> list[IostatReport]:
    """Parse ``iostat -x`` output into one :class:`IostatReport` per interval.

    The first report of ``iostat -x 1`` is the average since boot (use ``-y`` to drop it); this
    parser returns all of them in order, so ``reports[-1]`` is the latest interval.
    """
    text = require_text(text, "iostat -x")
    lines = clean_lines(text)
    reports: list[IostatReport] = []
    iowait: float | None = None
    cpu_header: list[str] | None = None
    header: list[str] | None = None
    devices: list[IostatDevice] = []

    def close() -> None:
        nonlocal devices, iowait, header
        if header is not None:
            if not devices:
                raise ParseError("iostat -x: a 'Device' header with no device lines under it (truncated output?)")
            reports.append(IostatReport(iowait_pct=iowait, devices=tuple(devices)))
        devices, iowait, header = [], None, None

    for line in lines:
        s = line.strip()
        if not s:
            if header is not None and devices:
                close()
            continue
        toks = s.split()
        if toks[0] == "avg-cpu:":
            close()
            cpu_header = toks[1:]
            continue
        if cpu_header is not None:
            vals = [to_float(t) for t in toks]
            if len(vals) != len(cpu_header) or any(v is None for v in vals):
                raise ParseError(f"iostat -x: avg-cpu line does not match its header {cpu_header}: {s!r}")
            if "%iowait" in cpu_header:
                iowait = vals[cpu_header.index("%iowait")]
            cpu_header = None
            continue
        if toks[0] in ("Device:", "Device"):
            if header is not None and devices:
                close()
            header = [t.rstrip(":") for t in toks]
            if "%util" not in header:
                raise ParseError(f"iostat -x: device header has no %util column (not extended statistics?): {s!r}")
            continue
        if header is None:
            continue  # the "Linux 5.15 (host) date _x86_64_ (N CPU)" banner and -t timestamps
        if len(toks) != len(header):
            raise ParseError(f"iostat -x: device line has {len(toks)} fields, header has {len(header)}: {s!r}")
        row = dict(zip(header[1:], toks[1:]))
        if "rkB/s" in row:
            rd, wr, scale = _col(row, "rkB/s"), _col(row, "wkB/s"), _KIB
        elif "rMB/s" in row:
            rd, wr, scale = _col(row, "rMB/s"), _col(row, "wMB/s"), _MIB
        else:
            raise ParseError(f"iostat -x: header has neither rkB/s nor rMB/s: {header}")
        r_s, w_s, util = _col(row, "r/s"), _col(row, "w/s"), _col(row, "%util")
        for name, v in (("r/s", r_s), ("w/s", w_s), ("read bandwidth", rd), ("write bandwidth", wr), ("%util", util)):
            if v is None or v < 0:
                raise ParseError(f"iostat -x: {name} of device {toks[0]!r} is not a non-negative number: {s!r}")
        devices.append(IostatDevice(
            device=toks[0], r_per_s=r_s, w_per_s=w_s,
            read_gbs=rd * scale / 1e9, write_gbs=wr * scale / 1e9,
            r_await_ms=_col(row, "r_await"), w_await_ms=_col(row, "w_await"),
            queue_depth=_col(row, "aqu-sz", "avgqu-sz"), util_pct=util))
    if header is not None:
        close()
    if not reports:
        raise ParseError("iostat -x: no 'Device' table found (run `iostat -x`, extended statistics)")
    return reports


# -- nvidia-smi dmon ----------------------------------------------------------------------------
@dataclass(frozen=True)
class DmonRow:
    """One GPU at one ``nvidia-smi dmon`` sample. Percentages 0-100; ``None`` where dmon printed '-'."""

    gpu: int
    sm_pct: float | None
    mem_pct: float | None
    fb_mib: float | None
    values: dict  # every column by its header name (float or None), incl. enc/dec/jpg/ofa/bar1/ccpm


@dataclass(frozen=True)
class DmonLog:
    columns: tuple[str, ...]
    units: tuple[str, ...]
    rows: tuple[DmonRow, ...]

    @property
    def gpus(self) -> list[int]:
        return sorted({r.gpu for r in self.rows})

    def mean(self, column: str, gpu: int | None = None) -> float:
        """Mean of ``column`` over the samples (of one GPU, or of all), skipping '-' entries."""
        if column not in self.columns:
            raise KeyError(f"column {column!r} not printed; columns: {list(self.columns)}")
        vals = [r.values[column] for r in self.rows if (gpu is None or r.gpu == gpu) and r.values[column] is not None]
        if not vals:
            raise ValueError(f"column {column!r} has no numeric samples" + ("" if gpu is None else f" for gpu {gpu}"))
        return sum(vals) / len(vals)


def parse_nvidia_smi_dmon(text) -> DmonLog:
    """Parse ``nvidia-smi dmon`` output (any ``-s`` selection, optional ``-o D``/``-o T`` columns).

    The header repeats every screenful; repeats must match the first one.
    """
    text = require_text(text, "nvidia-smi dmon")
    columns: list[str] | None = None
    units: list[str] | None = None
    rows: list[DmonRow] = []
    expect_units = False
    for line in clean_lines(text):
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            toks = s.lstrip("#").split()
            if expect_units:
                if len(toks) != len(columns):
                    raise ParseError(f"nvidia-smi dmon: unit line has {len(toks)} fields, header {len(columns)}: {s!r}")
                units = units or toks
                expect_units = False
                continue
            if not toks or toks[0] not in ("gpu", "Date", "Time"):
                raise ParseError(f"nvidia-smi dmon: unexpected comment line {s!r}")
            if columns is not None and toks != columns:
                raise ParseError(f"nvidia-smi dmon: repeated header {toks} differs from the first {columns}")
            columns = toks
            expect_units = True
            continue
        if columns is None:
            raise ParseError(f"nvidia-smi dmon: data before the '# gpu ...' header: {s!r}")
        toks = s.split()
        if len(toks) != len(columns):
            raise ParseError(f"nvidia-smi dmon: row has {len(toks)} fields, header has {len(columns)}: {s!r}")
        vals: dict = {}
        for name, tok in zip(columns, toks):
            if name in ("Date", "Time"):
                vals[name] = tok
                continue
            v = None if tok == "-" else to_float(tok)
            if tok != "-" and (v is None or v < 0):
                raise ParseError(f"nvidia-smi dmon: column {name!r} is not a number or '-': {tok!r} in {s!r}")
            vals[name] = v
        if "gpu" not in vals or vals["gpu"] is None or vals["gpu"] != int(vals["gpu"]):
            raise ParseError(f"nvidia-smi dmon: no integer gpu index in {s!r}")
        for name in ("sm", "mem"):
            if vals.get(name) is not None and vals[name] > 100:
                raise ParseError(f"nvidia-smi dmon: {name} = {vals[name]} % is above 100: {s!r}")
        rows.append(DmonRow(gpu=int(vals["gpu"]), sm_pct=vals.get("sm"), mem_pct=vals.get("mem"),
                            fb_mib=vals.get("fb"), values=vals))
    if columns is None:
        raise ParseError("nvidia-smi dmon: no '# gpu ...' header line found")
    if not rows:
        raise ParseError("nvidia-smi dmon: header but no sample rows (stopped before the first sample?)")
    return DmonLog(columns=tuple(columns), units=tuple(units or ()), rows=tuple(rows))


# -- samples (real formats, illustrative values) -----------------------------------------------
# sysstat 12.5 `iostat -x -y 5 1` on a training node whose loader reads small JPEG shards from local NVMe:
SAMPLE_IOSTAT_X = """\
Linux 5.15.0-105-generic (gpu-node-017) 	12/02/2026 	_x86_64_	(224 CPU)

avg-cpu:  %user   %nice %system %iowait  %steal   %idle
          38.41    0.00    6.12   21.37    0.00   34.10

Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util
nvme0n1          8.20     65.60     0.00   0.00    0.11     8.00   12.40    198.40     3.20  20.51    0.02    16.00    0.00      0.00     0.00   0.00    0.00     0.00    0.00    0.00    0.00   0.60
nvme1n1      16842.00 1953672.00    0.00   0.00    1.38   116.00    0.00      0.00     0.00   0.00    0.00     0.00    0.00      0.00     0.00   0.00    0.00     0.00    0.00    0.00   23.24  99.80
"""

# sysstat 11 (e.g. CentOS 7) header generation, `iostat -x 5`, same situation:
SAMPLE_IOSTAT_X_OLD = """\
Linux 3.10.0-1160.el7.x86_64 (gpu-node-003) 	12/02/2026 	_x86_64_	(96 CPU)

avg-cpu:  %user   %nice %system %iowait  %steal   %idle
          35.02    0.00    5.88   19.90    0.00   39.20

Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await r_await w_await  svctm  %util
sda               0.00     2.40    0.60    9.80     4.80    98.40    19.85     0.01    0.52    0.33    0.53   0.21   0.22
nvme0n1           0.00     0.00 15120.00    0.00 1753920.00     0.00   232.00    21.05    1.39    1.39    0.00   0.07  99.90
"""

# `nvidia-smi dmon -s um -c 3` (current drivers: the u group prints sm mem enc dec jpg ofa, the m group fb bar1 ccpm;
# column widths as printed by the tool),
# GPUs of the same node waiting for data between batches:
SAMPLE_DMON_UM = """\
# gpu    sm   mem   enc   dec   jpg   ofa    fb  bar1  ccpm
# Idx     %     %     %     %     %     %    MB    MB    MB
    0    41    18     0     0     0     0 61234     5     0
    1    39    17     0     0     0     0 61198     5     0
    2    43    19     0     0     0     0 61240     5     0
    3    40    18     0     0     0     0 61212     5     0
    0    37    16     0     0     0     0 61234     5     0
    1    45    20     0     0     0     0 61198     5     0
    2    38    17     0     0     0     0 61240     5     0
    3    42    18     0     0     0     0 61212     5     0
    0    44    19     0     0     0     0 61234     5     0
    1    40    18     0     0     0     0 61198     5     0
    2    41    18     0     0     0     0 61240     5     0
    3    39    17     0     0     0     0 61212     5     0
"""
