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

_TABLE_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[(Gb|MB)/sec\]\s+BW average\[(Gb|MB)/sec\]\s+MsgRate\[Mpps\]",
                           re.IGNORECASE)
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([-+]?\d+(?:\.\d*)?)\s+([-+]?\d+(?:\.\d*)?)\s+([-+]?\d+(?:\.\d*)?)\s*$")
_TITLE = re.compile(r"^\s*(\S.*\bBW Test)\s*$")
_PAIR = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_ .*/()-]*?)\s*:\s*(\S.*?)\s*$")
# a header line holds one or two "key : value" pairs split by tabs or (copied from a terminal) spaces
_SPLIT = re.compile(r"\t+|\s{3,}(?=[A-Za-z][^:]*:)")
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
    rows: list[PerftestRow] = []
    for line in lines:
        if not line.strip():
            continue
        h = _TABLE_HEADER.search(line)
        if h:
            if h.group(1).lower() != h.group(2).lower():
                raise ParseError(f"perftest: peak and average columns use different units: {line.strip()!r}")
            unit = h.group(1)
            continue
        if unit is not None:
            m = _ROW.match(line)
            if m:
                peak = float(m.group(3))
                avg = float(m.group(4))
                if avg < 0 or peak < 0:
                    raise ParseError(f"perftest: negative bandwidth in row {line.strip()!r}")
                rows.append(PerftestRow(size_bytes=int(m.group(1)), iterations=int(m.group(2)),
                                        bw_peak_gbps=_to_gbps(peak, unit) if peak > 0 else None,
                                        bw_avg_gbps=_to_gbps(avg, unit), msg_rate_mpps=float(m.group(5))))
            continue
        stripped = line.strip()
        if stripped.startswith(_SKIP):
            continue
        t = _TITLE.match(line)
        if t and ":" not in line:
            test = t.group(1).strip()
            continue
        for chunk in _SPLIT.split(re.sub(r"\s*\t+\s*:", " :", line)):
            m = _PAIR.match(chunk)
            if m:
                settings[m.group(1).strip()] = m.group(2)
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
        report_unit=f"{unit}/sec", rows=rows, settings=settings)
