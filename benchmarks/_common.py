"""Shared helpers for the benchmark scripts in this folder.

Each ``bench_*.py`` measures a speed target of the course (README, `make bench`), prints a table and writes
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
    """Median latency (ms) of one explorer update, cycling ``changes``.

    An update is what happens when a learner moves a control: the model call plus the redraw of
    the figure's artists (``Explorer.update``). Rasterising the figure to PNG for the browser is
    matplotlib's fixed cost and is reported separately by :func:`explorer_render_ms`.
    """
    state = {"i": 0}

    def step():
        explorer.set(**changes[state["i"] % len(changes)])
        state["i"] += 1

    return median_ms(step, repeats=repeats)


def explorer_render_ms(explorer, repeats: int = 5) -> float:
    """Median time (ms) to rasterise the explorer's figure with the course's Agg canvas (reported, no target)."""
    from labutil.raster import CourseCanvasAgg

    canvas = CourseCanvasAgg(explorer.figure)
    return median_ms(canvas.draw, repeats=repeats, warmup=1)


def save(name: str, payload: dict) -> Path:
    payload = {"benchmark": name, "machine": machine(), **payload}
    return write_json_atomic(RESULTS / f"{name}.json", payload)


def run_explorer_benchmark(result_name: str, cases: dict, target_ms: float = 50.0) -> int:
    """Time each explorer's update (gated: median < ``target_ms``) and its Agg render (reported only).

    ``cases`` maps a label to ``(factory, changes)``: a zero-argument callable building the explorer and
    the list of control changes to cycle. Prints one line per explorer, writes
    ``benchmarks/results/<result_name>.json`` atomically (with the 1-minute load average), and returns
    the process exit code (0 when every explorer meets the target).
    """
    rows = {}
    for label, (factory, changes) in cases.items():
        ex = factory()
        ms = explorer_update_ms(ex, changes)
        render = explorer_render_ms(ex)
        rows[label] = {"update_median_ms": round(ms, 2), "target_ms": target_ms, "ok": ms < target_ms,
                       "agg_render_median_ms": round(render, 1)}
        print(f"{label:<28} update {ms:7.2f} ms (target < {target_ms:.0f} ms)   Agg render {render:7.1f} ms")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    save(result_name, {"results": rows, "loadavg_1min": load})
    return 0 if all(r["ok"] for r in rows.values()) else 1
