"""Timing budgets of the measurement harnesses and their launcher (moved out of tests/, which assert
behaviour only: a wall-clock assertion there fails on a loaded machine for no fault of the code).

- ``launch.run`` ends a process group within KILL_BUDGET_S of its timeout (SIGTERM, then SIGKILL 5 s
  later: :func:`labutil.machine.launch._kill_group`);
- a stalled rank ends a collectives run within STALL_BUDGET_S when ``--timeout-s`` is 4 s (gloo's
  timeout, the surviving rank's one error line and exit status 3, then torchrun stops the stalled one);
- the result check (``-c 1``) of a collectives sweep costs less than CHECK_RATIO_TARGET of the timed
  calls (``-w 5 -n 20``): one extra call and a vectorised compare per block, not a multiple of the run.

Runs on the CPU path (2 gloo ranks). Writes benchmarks/results/harness_timing.json; exits 1 if a
budget is missed.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from _common import save

from labutil.machine import launch

KILL_BUDGET_S = 15.0
STALL_BUDGET_S = 60.0
CHECK_RATIO_TARGET = 0.5


def kill_on_timeout_s() -> float:
    t0 = time.perf_counter()
    res = launch.run([sys.executable, "-c", "import time; time.sleep(600)"], timeout_s=1.0)
    assert res.timed_out, res
    return time.perf_counter() - t0


def _collectives(out: Path, extra: list[str]) -> list[str]:
    return launch.torchrun_args("labutil.bench.collectives", ["--backend", "gloo", *extra, "--out", str(out)],
                                nproc_per_node=2)


def stalled_rank_s(tmp: Path) -> tuple[float, bool]:
    """Seconds until the run ended, and whether it ended by the harness's timeout (its one line)."""
    out = tmp / "stall.json"
    t0 = time.perf_counter()
    res = launch.run(_collectives(out, ["--op", "all_reduce", "-b", "1K", "-e", "1K", "-n", "2", "-w", "1",
                                        "--timeout-s", "4", "--debug-stall-rank", "1", "--debug-stall-s", "300"]),
                     timeout_s=240, env=launch.cpu_env(), cwd=launch.REPO_ROOT)
    return time.perf_counter() - t0, "did not complete within --timeout-s=4 s" in res.stderr


def check_ratio(tmp: Path) -> tuple[float, float]:
    out = tmp / "check.json"
    res = launch.run(_collectives(out, ["--op", "all_reduce", "-b", "4M", "-e", "16M", "-f", "2"]), timeout_s=240,
                     env=launch.cpu_env(), cwd=launch.REPO_ROOT)
    assert res.ok, res.stderr[-2000:]
    data = launch.load_json(out)
    blocks = [r[k] for r in data["rows"] for k in ("out_of_place", "in_place")]
    check_s = sum(b["check_s"] for b in blocks)
    timed_s = sum(b["time_us"] * 1e-6 * data["iters"] for b in blocks)
    return check_s, timed_s


def main() -> int:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    with tempfile.TemporaryDirectory(prefix="bench-harness-") as d:
        tmp = Path(d)
        kill_s = kill_on_timeout_s()
        stall_s, by_timeout = stalled_rank_s(tmp)
        check_s, timed_s = check_ratio(tmp)
    ratio = check_s / timed_s
    rows = {"kill_on_timeout_s": (kill_s, KILL_BUDGET_S, kill_s < KILL_BUDGET_S),
            "stalled_rank_end_s": (stall_s, STALL_BUDGET_S, stall_s < STALL_BUDGET_S and by_timeout),
            "check_over_timed_ratio": (ratio, CHECK_RATIO_TARGET, ratio < CHECK_RATIO_TARGET)}
    for name, (value, budget, ok) in rows.items():
        print(f"{name:24s} {value:8.3f}  (budget < {budget:g}) {'OK' if ok else 'MISSED'}")
    print(f"stalled run ended by the --timeout-s error line: {by_timeout}; 1-minute load {load}")
    ok = all(r[2] for r in rows.values())
    save("harness_timing", {"load_1min": load, "stalled_run_ended_by_timeout": by_timeout,
                            "results": {k: {"value": v, "budget": b, "ok": o} for k, (v, b, o) in rows.items()},
                            "check_s": check_s, "timed_s": timed_s, "ok": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
