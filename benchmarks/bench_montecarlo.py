"""Speed target: the reliability Monte Carlo of a Llama 3-scale run.

16,384 GPUs x 54 days x 1,000 trials (labutil.reliability.simulate_timelines, Llama 3-calibrated
failure rate, with per-part attribution) must run in under 1 s. Writes
benchmarks/results/montecarlo.json; exits 1 if the target is missed.
"""

from __future__ import annotations

import sys

from _common import median_ms, save

from labutil import reliability as R

TARGET_S = 1.0


def main() -> int:
    comps = R.llama3_components(16_384)
    f = R.cluster_failures_per_day(comps)

    def run():
        return R.simulate_timelines(f, 54, restart_s=600, interval_s=1200, checkpoint_s=30, trials=1000, seed=0,
                                    parts=comps)

    ms = median_ms(run, repeats=7, warmup=1)
    sim = run()
    ok = ms / 1e3 < TARGET_S
    print(f"| case | median (s) | target (s) | mean interruptions | mean goodput |")
    print(f"| 16,384 GPUs x 54 d x 1,000 trials | {ms / 1e3:.3f} | {TARGET_S:.1f} | {sim.mean_interruptions:.1f} | "
          f"{sim.mean_goodput:.4f} |")
    save("montecarlo", {"case": "16384 GPUs x 54 days x 1000 trials", "median_s": round(ms / 1e3, 4),
                        "target_s": TARGET_S, "passed": ok, "mean_interruptions": round(sim.mean_interruptions, 2),
                        "llama3_unexpected_interruptions": 419, "mean_goodput": round(sim.mean_goodput, 4)})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
