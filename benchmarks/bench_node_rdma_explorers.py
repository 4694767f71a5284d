"""Update latency of the ch09 (node design) and ch11 (RDMA) explorers.

Target (common brief): explorer update = model + redraw into the Figure < 50 ms median, measured
with ``_common.explorer_update_ms``. The Agg rasterisation is reported, not gated.

Run: python benchmarks/bench_node_rdma_explorers.py -> benchmarks/results/node_rdma_explorers.json
"""

from __future__ import annotations

import importlib
import sys

from _common import run_explorer_benchmark

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
    cases = {name: (getattr(importlib.import_module(mod), name), changes) for (mod, name), changes in CASES.items()}
    return run_explorer_benchmark("node_rdma_explorers", cases, TARGET_MS)


if __name__ == "__main__":
    sys.exit(main())
