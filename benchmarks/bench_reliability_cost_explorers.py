"""Speed target: update latency (model + redraw into the Figure) of the reliability and TCO
explorers, median < 50 ms. Writes benchmarks/results/reliability_cost_explorers.json; exits 1 if
a target is missed.
"""

from __future__ import annotations

import sys

from _common import explorer_update_ms, save

from labutil.explore import cost as EC, reliability as ER

TARGET_MS = 50.0


def main() -> int:
    cases = {
        "reliability_explorer": (ER.reliability_explorer(), [
            {"interval_min": 10.0}, {"restart_min": 30.0}, {"n_gpus": 4096}, {"checkpoint_s": 120.0},
            {"interval_min": 60.0, "restart_min": 5.0}, {"n_gpus": 16_384, "sim_days": 14}, {"sim_days": 7},
        ]),
        "tco_explorer": (EC.tco_explorer(), [
            {"utilisation": 0.4}, {"usd_per_kwh": 0.15}, {"n_gpus": 4096}, {"server": "DGX-A100"},
            {"fabric": "IB-HDR-200G"}, {"cloud_usd_per_gpu_hour": 2.0}, {"years": 5.0}, {"pue": 1.2},
        ]),
    }
    rows, ok = {}, True
    print("| explorer | median update (ms) | target (ms) |")
    for name, (ex, changes) in cases.items():
        ms = explorer_update_ms(ex, changes, repeats=30)
        rows[name] = {"median_ms": round(ms, 2), "target_ms": TARGET_MS, "passed": ms < TARGET_MS}
        ok &= ms < TARGET_MS
        print(f"| {name} | {ms:.1f} | {TARGET_MS:.0f} |")
    save("reliability_cost_explorers", {"results": rows, "passed": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
