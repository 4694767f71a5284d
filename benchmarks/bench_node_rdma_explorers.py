"""Update latency of the ch09 (node design) and ch11 (RDMA) explorers.

Target (common brief): explorer update = model + redraw into the Figure < 50 ms median, measured
with ``_common.explorer_update_ms``. The Agg rasterisation is reported, not gated.

Run: python benchmarks/bench_node_rdma_explorers.py -> benchmarks/results/node_rdma_explorers.json
"""

from __future__ import annotations

import importlib
import os
import sys

from _common import explorer_update_ms, median_ms, save
from matplotlib.backends.backend_agg import FigureCanvasAgg

TARGET_MS = 50.0

CASES = {
    ("labutil.explore.node", "gpu_nic_path_explorer"): [
        {"gdr": False}, {"gdr": True, "nic_pcie_gen": 4}, {"link": "SYS", "nic_pcie_gen": 5},
        {"link": "PIX", "nic_gbps": 800}],
}
try:  # ch11 explorers, when present
    importlib.import_module("labutil.explore.rdma")
    CASES[("labutil.explore.rdma", "pfc_headroom_explorer")] = [
        {"cable_m": 10.0}, {"cable_m": 300.0}, {"port_gbps": 25}, {"port_gbps": 400, "mtu_bytes": 4200}]
except ImportError:
    pass


def main() -> int:
    rows = {}
    for (mod, name), changes in CASES.items():
        ex = getattr(importlib.import_module(mod), name)()
        ms = explorer_update_ms(ex, changes)
        FigureCanvasAgg(ex.figure)
        render = median_ms(ex.figure.canvas.draw, repeats=5, warmup=1)
        rows[name] = {"update_median_ms": round(ms, 2), "target_ms": TARGET_MS, "ok": ms < TARGET_MS,
                      "agg_render_median_ms": round(render, 1)}
        print(f"{name:24s} update {ms:7.2f} ms (target < {TARGET_MS:.0f} ms)   Agg render {render:7.1f} ms")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    save("node_rdma_explorers", {"results": rows, "loadavg_1min": load})
    return 0 if all(r["ok"] for r in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
