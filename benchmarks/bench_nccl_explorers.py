"""Speed target: the ch15 / ch22 explorers update (model + redraw + canvas draw) in < 50 ms median.

Writes benchmarks/results/nccl_explorers.json; exits 1 if a target is missed.
"""

from __future__ import annotations

import sys

from _common import explorer_update_ms, save

from labutil.explore.nccl import acceptance_explorer, nccl_tuning_explorer

TARGET_MS = 50.0


def main() -> int:
    results = {
        "nccl_tuning_explorer": explorer_update_ms(nccl_tuning_explorer(), [
            {"n_nodes": 1}, {"n_nodes": 16}, {"env": "NCCL_ALGO=Tree"}, {"env": "default (all enabled)", "n_channels": 8}]),
        "acceptance_explorer": explorer_update_ms(acceptance_explorer(), [
            {"sample": "nccl_tests_all_reduce_degraded"}, {"fabric": "8 x 200G HDR"}, {"efficiency": 0.8},
            {"sample": "nccl_tests_all_reduce_2node", "fabric": "8 x 400G NDR (DGX H100 class)", "efficiency": 0.9}]),
    }
    ok = all(v < TARGET_MS for v in results.values())
    for name, ms in results.items():
        print(f"{name:24s} median update {ms:6.1f} ms  (target < {TARGET_MS:.0f} ms)")
    save("nccl_explorers", {"target_ms": TARGET_MS, "median_update_ms": results, "ok": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
