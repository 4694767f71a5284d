"""Parser for the perftest bandwidth tools: ``ib_write_bw``, ``ib_read_bw``, ``ib_send_bw``.

Format: linux-rdma/perftest (``src/perftest_parameters.c`` prints the header block,
``src/perftest_resources.c`` the result table). A client run of
``ib_write_bw -d mlx5_0 -a -F --report_gbits <server>`` prints::

    ---------------------------------------------------------------------------------------
                        RDMA_Write BW Test
     Dual-port       : OFF          Device         : mlx5_0
     Number of qps   : 1            Transport type : IB
     Connection type : RC           Using SRQ      : OFF
     ...
     Mtu             : 4096[B]
     Link type       : IB
    ---------------------------------------------------------------------------------------
     local address: LID 0x05 QPN 0x0067 PSN 0x6d058e RKey 0x1fffb9 VAddr 0x007f58a406e000
     remote address: LID 0x0b QPN 0x0055 PSN 0xc6797b RKey 0x1fffb9 VAddr 0x007f71dddd9000
    ---------------------------------------------------------------------------------------
     #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
     65536      5000             392.41             391.87               0.747
    ---------------------------------------------------------------------------------------

The header pairs are separated by tabs (or runs of spaces once copied from a terminal). Units:
without ``--report_gbits`` the columns are ``BW peak[MB/sec]`` where perftest's MB is 2^20 bytes
(``format_factor = (report_fmt == MBS) ? 0x100000 : 125000000`` in ``perftest_resources.c``),
with it they are Gbit/s (1e9 bit/s). ``BW peak`` prints ``0.00`` when it is not measured
(duration mode ``-D``, ``--run_infinitely``, post lists): that is stored as ``None``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .. import units
from ._common import ParseError, clean_lines, require_text, to_float, to_int

__all__ = ["PerftestRow", "PerftestBw", "parse_perftest_bw", "mb_per_sec_to_gbps"]

# Result table headers (perftest_parameters.h RESULT_FMT*): "MB/sec" before perftest commit 1d202bb
# (2024-03, "Display proper unit for MiB/sec results"), "MiB/sec" after it (the same 2^20-byte unit);
# QoS runs (--sl / -S) add a "#sl" column, --report-per-port four port columns, CPU util one more.
_TABLE_HEADER = re.compile(r"#bytes\s+(#sl\s+)?#iterations\s+BW peak\[(Gb|MB|MiB)/sec\]\s+BW average\[(Gb|MB|MiB)/sec\]"
                           r"\s+MsgRate\[Mpps\]", re.IGNORECASE)
_TITLE = re.compile(r"^\s*(\S.*\bBW Test)\s*$")
# --limit_bw / -w ("Set verifier limit for bandwidth"): write_bw.c & co. print this on stderr when the
# average is below the limit (and the msg-rate twin for --limit_msgrate).
_LIMIT_FAIL = re.compile(r"Error: BW result is below bw limit|Error: Msg rate\s+is below msg_rate limit")
_WS_RUN = re.compile(r"\t|[ \t]{2,}")   # a tab, or two or more blanks: separates "key : value" pairs
_SKIP = ("local address", "remote address", "GID:", "---", "***", "* Waiting")


@dataclass
class PerftestRow:
    """One line of the result table; bandwidths converted to Gbit/s."""

    size_bytes: int
    iterations: int
    bw_peak_gbps: float | None
    bw_avg_gbps: float
    msg_rate_mpps: float


@dataclass
class PerftestBw:
    """A perftest bandwidth run: the header settings and the result rows."""

    test: str | None
    device: str | None
    n_qps: int | None
    transport: str | None
    connection: str | None
    link_type: str | None
    mtu_bytes: int | None
    bidirectional: bool
    report_unit: str
    rows: list[PerftestRow]
    settings: dict = field(default_factory=dict, repr=False)
    #: the run used ``-w/--limit_bw`` (or ``--limit_msgrate``) and perftest reported the result below it
    limit_failed: bool = False

    @property
    def largest(self) -> PerftestRow:
        """The row with the largest message (the one compared with the port rate)."""
        return max(self.rows, key=lambda r: r.size_bytes)

    @property
    def best_avg_gbps(self) -> float:
        """Highest average bandwidth over all message sizes, Gbit/s."""
        return max(r.bw_avg_gbps for r in self.rows)


def mb_per_sec_to_gbps(mb_per_sec):
    """perftest's ``MB/sec`` (2^20 bytes per second, perftest_resources.c) in Gbit/s (1e9 bit/s).

    Accepts a number or numpy array; negative or non-finite values raise ValueError.
    """
    from .. import validate
    x = validate.number("mb_per_sec", mb_per_sec, lo=0.0)
    return x * units.BYTES_PER_MIB * units.BITS_PER_BYTE / 1e9


def _to_gbps(value: float, unit: str) -> float:
    return value if unit.lower() == "gb" else float(mb_per_sec_to_gbps(value))


def parse_perftest_bw(text) -> PerftestBw:
    """Parse the client (or server) output of ``ib_write_bw`` / ``ib_read_bw`` / ``ib_send_bw``.

    Raises ParseError when the result table header or every result row is missing (a run that
    failed to connect prints the header block but no table).
    """
    text = require_text(text, "perftest")
    lines = clean_lines(text)
    test = None
    settings: dict[str, str] = {}
    unit = None
    qos = False
    rows: list[PerftestRow] = []
    limit_failed = False
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        h = _TABLE_HEADER.search(line)
        if h:
            peak_u, avg_u = h.group(2).lower().replace("mib", "mb"), h.group(3).lower().replace("mib", "mb")
            if peak_u != avg_u:
                raise ParseError(f"perftest: peak and average columns use different units: {line!r}")
            unit, qos = h.group(2), bool(h.group(1))
            continue
        if _LIMIT_FAIL.search(line):
            limit_failed = True
            continue
        if unit is not None:
            row = _row(line, qos)
            if row is not None:
                size, iters, peak, avg, rate = row
                if avg < 0 or peak < 0:
                    raise ParseError(f"perftest: negative bandwidth in row {line!r}")
                rows.append(PerftestRow(size_bytes=size, iterations=iters,
                                        bw_peak_gbps=_to_gbps(peak, unit) if peak > 0 else None,
                                        bw_avg_gbps=_to_gbps(avg, unit), msg_rate_mpps=rate))
            continue
        if line.startswith(_SKIP):
            continue
        t = _TITLE.match(line)
        if t and ":" not in line:
            test = t.group(1).strip()
            continue
        settings.update(_pairs(line))
    if unit is None:
        raise ParseError("perftest: no result table ('#bytes #iterations BW peak[...] BW average[...] MsgRate[Mpps]'); "
                         "did the client connect?")
    if not rows:
        raise ParseError("perftest: the result table has no rows (run interrupted?)")
    mtu = settings.get("Mtu")
    return PerftestBw(
        test=test, device=settings.get("Device"), n_qps=to_int(settings.get("Number of qps")),
        transport=settings.get("Transport type"), connection=settings.get("Connection type"),
        link_type=settings.get("Link type"),
        mtu_bytes=int(to_float(mtu)) if to_float(mtu) is not None else None,
        bidirectional=bool(test and "bidirectional" in test.lower()),
        report_unit=f"{unit}/sec", rows=rows, settings=settings, limit_failed=limit_failed)


def _row(line: str, qos: bool):
    """(bytes, iterations, peak, average, msg rate) of a result line, or None. Split on whitespace
    (linear; no regex backtracking over runs of blanks): extra trailing columns (per-port, CPU
    util) are ignored."""
    tok = line.split()
    if qos and len(tok) >= 6:
        tok = tok[:1] + tok[2:]
    if len(tok) < 5 or not tok[0].isdigit() or not tok[1].isdigit():
        return None
    vals = [to_float(t) for t in tok[2:5]]
    if any(v is None for v in vals) or any(not _is_number(t) for t in tok[2:5]):
        return None
    return int(tok[0]), int(tok[1]), vals[0], vals[1], vals[2]


def _is_number(tok: str) -> bool:
    return re.fullmatch(r"[-+]?\d+(?:\.\d*)?", tok) is not None


def _pairs(line: str) -> dict:
    """"key : value" pairs of a header line. Pairs are separated by tabs or runs of blanks (a copy
    from a terminal turns tabs into spaces); a key may be separated from its colon by blanks or a
    tab ("rdma_cm QPs\t : OFF"). Linear in the line: one split, then a walk over the pieces."""
    out = {}
    pending, need_colon = None, False   # a key whose colon / value is in a later piece
    for p in (p.strip() for p in _WS_RUN.split(line)):
        if not p:
            continue
        if pending is not None:
            if not need_colon:
                out[pending] = p
                pending = None
                continue
            if p.startswith(":"):
                v = p[1:].strip()
                if v:
                    out[pending] = v
                    pending = None
                else:
                    need_colon = False
                continue
            pending = None                  # no colon followed: that piece was not a key
        k, colon, v = p.partition(":")
        k, v = k.strip(), v.strip()
        if not colon:
            pending, need_colon = p, True
        elif k and k[0].isalpha():
            if v:
                out[k] = v
            else:
                pending, need_colon = k, False
    return out
