"""Parser for ``ethtool -S <netdev>``: the NIC's counter dump (mlx5 / ConnectX naming taught in ch11).

Format (Linux ``ethtool``, ``do_gstats``): an optional ``NIC statistics:`` line, then one counter per
line, ``<indent><name>: <unsigned integer>``. Drivers choose the names; the ones ch11 reads are the
mlx5 names documented in the kernel tree, ``Documentation/networking/device_drivers/ethernet/
mellanox/mlx5/counters.rst``:

- ``rx_prio<p>_pause`` / ``tx_prio<p>_pause``: PFC pause frames received / sent on priority p;
  ``*_pause_duration``: how long (microseconds) the port was paused / asked its peer to pause;
  ``rx_prio<p>_pause_transition``: Xoff -> Xon transitions;
- ``rx_pause_ctrl_phy`` / ``tx_pause_ctrl_phy``: link-layer pause frames received / sent (all
  priorities, and 802.3x global pause: ``rx_global_pause`` / ``tx_global_pause`` and durations);
- ``tx_pause_storm_warning_events`` / ``tx_pause_storm_error_events``: the device kept sending
  pause for long (warning) / until the stall watchdog disabled pause (error, drops may follow);
- ``rx_discards_phy``, ``rx_prio<p>_discards``, ``rx_prio<p>_buf_discard``,
  ``rx_prio<p>_cong_discard``, ``rx_out_of_buffer``: packets dropped for lack of buffers;
  ``rx_prio<p>_marked``: packets ECN-marked by the device.

``ethtool -S eth0 | grep prio3`` (no header) parses as well. Some drivers prefix per-queue counters
with ``[q]:`` (bnx2x) or print ``rxq0: rx_bytes`` (be2net): such names are kept whole
(``"[0]: rx_bytes"``, ``"rxq0: rx_bytes"``) so no counter overwrites another. A line whose value is
not an unsigned integer is skipped; text with no counter at all raises :class:`EthtoolParseError`.
The pause *rules* (PFC storm vs normal back-pressure) are a model: ``labutil.rdma.diagnose_pause``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._common import ANSI, MPI_PREFIX, ParseError, require_text

__all__ = ["EthtoolParseError", "EthtoolStats", "parse_ethtool_stats"]

# "     rx_prio3_pause: 142", "     [0]: rx_bytes: 2094", "     rxq0: rx_pkts: 3888"
_LINE = re.compile(r"^\s*((?:\[\d+\]:\s*)?(?:[A-Za-z][\w.\-/]*:\s+)?[A-Za-z_][\w.\-/\[\]]*)\s*:\s*(\d+)\s*(?:#.*)?$")
_HEADER = re.compile(r"^\s*NIC statistics\s*:?\s*$", re.IGNORECASE)
_PRIO = re.compile(r"^(rx|tx)_prio(\d)_(.+)$")
_MAX_COUNTER = 2 ** 64  # the kernel exports u64 counters


class EthtoolParseError(ParseError):
    """``ethtool -S`` output without a single ``name: integer`` counter line."""


@dataclass
class EthtoolStats:
    """Counters of one ``ethtool -S`` dump (name -> int), in output order."""

    counters: dict = field(default_factory=dict)
    header: bool = False      # the output started with "NIC statistics:"
    skipped: int = 0          # lines that looked like counters but had no integer value

    def get(self, name: str, default: int | None = None) -> int | None:
        return self.counters.get(name, default)

    def __contains__(self, name: str) -> bool:
        return name in self.counters

    def prio(self, priority: int) -> dict:
        """Counters of one PFC priority, without the prefix: {'rx_pause': .., 'tx_pause_duration': ..}."""
        if not isinstance(priority, int) or isinstance(priority, bool) or not 0 <= priority <= 7:
            raise ValueError(f"priority must be an integer in [0, 7]; got {priority!r}")
        out = {}
        for name, v in self.counters.items():
            m = _PRIO.match(name)
            if m and int(m.group(2)) == priority:
                out[f"{m.group(1)}_{m.group(3)}"] = v
        return out

    def priorities_with(self, suffix: str = "pause") -> list[int]:
        """Priorities that have an ``rx_prio<p>_<suffix>`` counter (mlx5 prints pause counters only
        for priorities with PFC enabled)."""
        out = []
        for name in self.counters:
            m = _PRIO.match(name)
            if m and m.group(1) == "rx" and m.group(3) == suffix and int(m.group(2)) not in out:
                out.append(int(m.group(2)))
        return sorted(out)

    def delta(self, later: "EthtoolStats") -> dict:
        """``later - self`` for every counter present in both dumps (two reads of the same port).

        A counter that went down (driver reload, port reset, wrap) raises ValueError naming it:
        the difference would be meaningless."""
        if not isinstance(later, EthtoolStats):
            raise TypeError(f"later must be an EthtoolStats; got {type(later).__name__}")
        out = {}
        for name, v in later.counters.items():
            if name in self.counters:
                d = v - self.counters[name]
                if d < 0:
                    raise ValueError(f"counter {name} went down ({self.counters[name]} -> {v}): the port or driver was "
                                     "reset between the two reads; take two fresh samples")
                out[name] = d
        return out


def parse_ethtool_stats(text) -> EthtoolStats:
    """Parse ``ethtool -S`` (optionally grepped). Raises :class:`EthtoolParseError` on garbage.

    >>> s = parse_ethtool_stats("NIC statistics:\\n     rx_prio3_pause: 142\\n     tx_prio3_pause: 87\\n")
    >>> s.prio(3)
    {'rx_pause': 142, 'tx_pause': 87}
    """
    try:
        text = require_text(text, "ethtool -S")
    except ParseError as e:  # one error type per tool: EthtoolParseError
        raise EthtoolParseError(str(e)) from None
    out = EthtoolStats()
    for raw in text.split("\n"):
        # only ANSI codes and mpirun/srun rank tags: the generic "host: " prefix rule of
        # strip_launcher_prefix would eat "rx_prio3_pause: " itself
        line = MPI_PREFIX.sub("", ANSI.sub("", raw)).rstrip()
        if not line.strip():
            continue
        if _HEADER.match(line):
            out.header = True
            continue
        m = _LINE.match(line)
        if m is None:
            if re.match(r"^\s*[A-Za-z_][\w.\-/\[\]]*\s*:\s*\S", line):
                out.skipped += 1  # e.g. "not_a_number: abc", a negative or decimal value
            continue
        value = int(m.group(2))
        if value >= _MAX_COUNTER:
            out.skipped += 1
            continue
        out.counters[re.sub(r"\s+", " ", m.group(1).strip())] = value
    if not out.counters:
        raise EthtoolParseError("ethtool -S: no 'name: integer' counter line found (is this `ethtool -S <netdev>` output?)")
    return out
