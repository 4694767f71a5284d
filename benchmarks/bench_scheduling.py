"""Speed targets of the ch21 scheduling simulation and explorer.

- ``simulate``: 1,000 jobs on 128 GPUs, every policy, target < 1 s each (median of 3 runs).
- ``scheduling_explorer``: median update (model + redraw, the shared ``explorer_update_ms``
  convention), target < 50 ms.
Writes ``benchmarks/results/scheduling.json`` atomically; exits 1 if a target is missed.
"""

from __future__ import annotations

import os
import sys

from _common import explorer_update_ms, median_ms, save

from labutil import scheduling as S
from labutil.explore import scheduling as ES

SIM_TARGET_S = 1.0
EXPLORER_TARGET_MS = 50.0
CHANGES = [{"policy": p, "inference_share": 0.2 + 0.1 * (i % 4), "load": 0.7 + 0.1 * (i % 4),
            "train_quota_gpus": ES.QUOTA_CHOICES[i % len(ES.QUOTA_CHOICES)]}
           for i, p in enumerate(list(S.POLICIES) * 2)]


def main() -> int:
    wl = S.generate_workload(1000, 128, load=0.9, inference_share=0.3, seed=0)
    sim_s = {p: median_ms(lambda p=p: S.simulate(wl, 128, p), repeats=3, warmup=1) / 1e3 for p in S.POLICIES}
    ex_ms = explorer_update_ms(ES.scheduling_explorer(), CHANGES, repeats=24)
    ok_sim = max(sim_s.values()) < SIM_TARGET_S
    ok_ex = ex_ms < EXPLORER_TARGET_MS
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    for p, s in sim_s.items():
        print(f"simulate {p:18s} 1000 jobs / 128 GPUs: {s * 1e3:7.1f} ms (target < {SIM_TARGET_S * 1e3:.0f} ms)")
    print(f"scheduling_explorer: median update {ex_ms:.1f} ms (target < {EXPLORER_TARGET_MS:.0f} ms) "
          f"{'OK' if ok_ex else 'MISSED'}; load average {load}")
    save("scheduling", {"simulate_1000_jobs_128_gpus_s": {p: round(s, 4) for p, s in sim_s.items()},
                        "explorer_median_ms": round(ex_ms, 2), "load_average_1m": load,
                        "sim_target_s": SIM_TARGET_S, "explorer_target_ms": EXPLORER_TARGET_MS,
                        "ok": ok_sim and ok_ex})
    return 0 if ok_sim and ok_ex else 1


if __name__ == "__main__":
    sys.exit(main())
