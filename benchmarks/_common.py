"""Shared helpers for the benchmark scripts in this folder.

Each ``bench_*.py`` measures a speed target of COURSE_PLAN / the issues, prints a table and writes
``benchmarks/results/<name>.json`` atomically, then exits 1 if a target is missed.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from labutil.fileio import write_json_atomic  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def machine() -> dict:
    return {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "platform": platform.platform()}


def median_ms(fn, repeats: int = 30, warmup: int = 3) -> float:
    """Median wall time of ``fn()`` in milliseconds."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def explorer_update_ms(explorer, changes: list[dict], repeats: int = 30) -> float:
    """Median latency (ms) of one explorer update (model + redraw + canvas draw), cycling ``changes``."""
    state = {"i": 0}

    def step():
        explorer.set(**changes[state["i"] % len(changes)])
        explorer.figure.canvas.draw()
        state["i"] += 1

    return median_ms(step, repeats=repeats)


def save(name: str, payload: dict) -> Path:
    payload = {"benchmark": name, "machine": machine(), **payload}
    return write_json_atomic(RESULTS / f"{name}.json", payload)
