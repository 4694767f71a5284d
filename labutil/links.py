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

__all__ = ["pcie_generations", "ib_generations", "pcie_link", "ib_link", "pcie_gbs", "ib_port_gbps",
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
