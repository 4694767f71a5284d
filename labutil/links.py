"""PCIe and InfiniBand link generations: per-lane signalling, encoding efficiency, data rates.

Data in ``labutil/data/links.toml`` (each entry with its source: PCI-SIG base specifications,
IBTA InfiniBand Architecture Specification Vol 2). Taught in ch09 (PCIe) and ch11 (IB).

Formula: data rate per lane = signalling rate x encoding efficiency (8b/10b -> 0.8,
64b/66b -> 64/66, 128b/130b -> 128/130, PAM4 + RS(544,514) FEC + 256b/257b -> 0.941);
a link of ``lanes`` lanes carries ``lanes`` x that, per direction. GB/s = Gbit/s / 8.

>>> round(pcie_gbs("gen5", 16), 1)   # PCIe 5.0 x16, one direction
63.0
>>> round(ib_port_gbps("NDR", 4))    # NDR 4X port
400
"""

from __future__ import annotations


import numpy as np

from . import data_files, validate
from .units import BITS_PER_BYTE

__all__ = ["EFFECTIVE_BER_LIMIT", "RAW_BER_WARN", "diagnose_link", "pcie_generations", "ib_generations", "pcie_link", "ib_link", "pcie_gbs", "ib_port_gbps",
           "ib_generation_for_rate"]


def _data() -> dict:
    return data_files.load("links.toml")


def pcie_generations() -> list[str]:
    return list(_data()["pcie"])


def ib_generations() -> list[str]:
    return list(_data()["ib"])


def _entry(kind: str, name: str) -> dict:
    table = _data()[kind]
    if not isinstance(name, str):
        raise KeyError(f"{kind} generation must be a string; got {name!r}")
    key = name.strip()
    for k in table:
        if k.lower() == key.lower() or k.lower() == key.lower().replace(" ", "").replace("pcie", "gen"):
            return {"name": k, **table[k]}
    raise validate.unknown_name(f"{'PCIe' if kind == 'pcie' else 'InfiniBand'} generation", name, table)


def pcie_link(gen: str) -> dict:
    """Catalog entry of PCIe ``gen`` ('gen1'..'gen6'), plus ``lane_gbps`` (data rate per lane)."""
    e = _entry("pcie", gen)
    return {**e, "lane_gbps": e["signal_gbps"] * e["efficiency"]}


def ib_link(gen: str) -> dict:
    """Catalog entry of InfiniBand ``gen`` ('SDR'..'XDR'), plus ``lane_gbps`` (data rate per lane)."""
    e = _entry("ib", gen)
    return {**e, "lane_gbps": e["signal_gbps"] * e["efficiency"]}


def pcie_gbs(gen: str, lanes=16):
    """Usable PCIe bandwidth per direction in GB/s: GT/s x efficiency x lanes / 8 (vectorised over lanes)."""
    n = validate.integer("lanes", lanes, lo=1, hi=32)
    out = pcie_link(gen)["lane_gbps"] * np.asarray(n, dtype=float) / BITS_PER_BYTE
    return float(out) if np.ndim(out) == 0 else out


def ib_port_gbps(gen: str, lanes=4):
    """InfiniBand port data rate in Gbit/s: per-lane data rate x lanes (1X, 2X, 4X, 8X or 12X)."""
    n = validate.integer("lanes", lanes, lo=1, hi=12)
    out = ib_link(gen)["lane_gbps"] * np.asarray(n, dtype=float)
    return float(out) if np.ndim(out) == 0 else out


def ib_generation_for_rate(rate_gbps: float, lanes: int = 4) -> str:
    """The IB generation whose ``lanes``-wide data rate is closest to ``rate_gbps`` (e.g. 400 -> 'NDR')."""
    r = validate.positive("rate_gbps", rate_gbps)
    return min(ib_generations(), key=lambda g: abs(ib_port_gbps(g, lanes) - r))


# -- link health from mlxlink counters (ch12 §8) ---------------------------------------------------
#: ibdiagnet's default BER threshold (10^-12, "--ber_thresh": NVIDIA ibdiagnet User Manual, "Bit Error
#: Rate (BER)"): an effective (post-FEC) BER above it fails the port.
EFFECTIVE_BER_LIMIT = 1e-12
#: Raw (pre-FEC) BER at which NVIDIA calls a link "unclean" (Quantum firmware 27.2008.0232 release notes,
#: known issue 2145881: "unclean RAW BER (10e-6)"). A course operating threshold: the FEC still corrects
#: it, but the margin is being used up - plan a reseat / cable swap in the next window.
RAW_BER_WARN = 1e-6
#: mlxlink prints 15E-255 for "no error seen"; anything below this is zero.
_BER_ZERO = 1e-250


def diagnose_link(m, *, expected_width: int = 4, expected_speed: str | None = None) -> dict:
    """Pass / degraded / down verdict for one port from a parsed ``mlxlink`` (``parsers.mlxlink.Mlxlink``).

    Rules, most severe first: not Active/LinkUp -> 'down'; width below ``expected_width`` or speed not
    ``expected_speed`` -> 'degraded' (trained down: the link runs, slower); effective (post-FEC) errors
    > 0 or effective BER > ``EFFECTIVE_BER_LIMIT`` -> 'degraded' (the FEC no longer hides the errors:
    packets are lost and retried); link-down or error-recovery events -> 'degraded' (flapping);
    raw BER >= ``RAW_BER_WARN`` -> 'watch' (FEC margin shrinking); otherwise 'ok'. The mlxlink
    'Recommendation' line is reported as it is.

    Returns {'verdict', 'reasons', 'raw_ber', 'effective_ber', 'raw_errors_per_hour'}.
    """
    for attr in ("state", "physical_state", "width", "speed", "has_counters"):
        if not hasattr(m, attr):
            raise TypeError(f"m must be a parsed mlxlink (labutil.parsers.parse_mlxlink); got {type(m).__name__}")
    w = validate.integer("expected_width", expected_width, lo=1, hi=16)
    reasons: list[str] = []
    order = ("ok", "watch", "degraded", "down")
    verdict = "ok"

    def worse(v, why):
        nonlocal verdict
        reasons.append(why)
        if order.index(v) > order.index(verdict):
            verdict = v

    if m.state is not None and (m.state != "Active" or (m.physical_state not in (None, "LinkUp", "N/A"))):
        worse("down", f"state {m.state}/{m.physical_state}")
    if m.width is not None and m.width < w:
        worse("degraded", f"width {m.width}x below {w}x: trained down")
    if expected_speed is not None and m.speed is not None and expected_speed not in m.speed:
        worse("degraded", f"speed {m.speed}, expected {expected_speed}: trained down")
    raw = eff = per_hour = None
    if m.has_counters:
        eff, raw = m.effective_ber, m.raw_ber
        eff = 0.0 if eff is not None and eff < _BER_ZERO else eff
        raw = 0.0 if raw is not None and raw < _BER_ZERO else raw
        if (m.effective_errors or 0) > 0 or (eff or 0) > EFFECTIVE_BER_LIMIT:
            ber = f", BER {eff:.1e}" if eff else ""
            worse("degraded", f"effective (post-FEC) errors {m.effective_errors}{ber}: the FEC no longer hides the errors")
        if (m.link_down or 0) > 0 or (m.link_error_recovery or 0) > 0:
            worse("degraded", f"link down {m.link_down}, error recovery {m.link_error_recovery} since the last clear: "
                  "the link flaps")
        if raw is not None and raw >= RAW_BER_WARN:
            worse("watch", f"raw (pre-FEC) BER {raw:.1e} >= {RAW_BER_WARN:.0e}: FEC margin shrinking")
        mins = m.minutes_since_clear
        lanes = m.raw_errors_per_lane
        if mins and lanes:
            per_hour = sum(lanes) / (mins / 60.0)
    if m.recommendation and "no issue" not in m.recommendation.lower():
        reasons.append(f"mlxlink recommends: {m.recommendation}")
    if not reasons:
        reasons.append("active, full width, no post-FEC errors, no flaps")
    return {"verdict": verdict, "reasons": reasons, "raw_ber": raw, "effective_ber": eff,
            "raw_errors_per_hour": per_hour}

