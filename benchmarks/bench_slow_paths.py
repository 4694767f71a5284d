"""Budgets of two paths the robustness review (R13) found slow, moved here from timed unit tests
(the unit tests keep their behavioural assertions; no wall-clock assertion lives in ``tests/``):

- ``fio_2mb_many_jobs``: ``parsers.fio.parse_fio_summary`` on a ~2 MB paste of a real-format sample
  repeated (~2,000 job headers and result lines): one binary search per result line, not a scan of
  every header (a 5 MB paste took 41 s before). Budget 5 s.
- ``reliability_worst_corner``: ch27's ``reliability_view`` at 131,072 GPUs, every MTBF 10,000 h,
  54 days, 2-minute interval (5.4 s before the simulation's failure budget). Budget 3 s.

Best of three runs each. Writes ``benchmarks/results/slow_paths.json``; exits 1 if a budget is missed.
"""

from __future__ import annotations

import sys
import time

from _common import save

from labutil.explore import reliability as reliability_x
from labutil.parsers import fio

BUDGET_S = {"fio_2mb_many_jobs": 5.0, "reliability_worst_corner": 3.0}


def _best_of(fn, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> int:
    one = fio.sample("fio_nvme_text") + "\n"
    big = one * (2_000_000 // len(one))
    cases = {
        "fio_2mb_many_jobs": lambda: fio.parse_fio_summary(big),
        "reliability_worst_corner": lambda: reliability_x.reliability_view(
            131072, 10000, 10000, 10000, 5.0, 2.0, 1.0, sim_days=54, software_mtbf_h=10000),
    }
    rows, ok = {}, True
    print("| path | best of 3 (s) | budget (s) |")
    for name, fn in cases.items():
        s = _best_of(fn)
        rows[name] = {"best_s": round(s, 3), "budget_s": BUDGET_S[name], "passed": s < BUDGET_S[name]}
        ok &= s < BUDGET_S[name]
        print(f"| {name} | {s:.2f} | {BUDGET_S[name]:.0f} |")
    save("slow_paths", {"results": rows, "passed": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
