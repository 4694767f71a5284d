"""Update latency of the ch23 acceptance explorer (model + redraw + Agg render, the shared
``explorer_update_ms`` convention); target < 50 ms median. A trivial one-line figure is rendered
the same way as a baseline, so a result taken on a loaded machine can be read in context.
"""

from __future__ import annotations

import os
import sys

from _common import explorer_update_ms, median_ms, save

from labutil.explore import health as EH

TARGET_MS = 50.0
CHANGES = [{"slow_rails": k % 4, "rail_gbps": (200, 400, 800)[k % 3], "efficiency": 0.8 + 0.05 * (k % 3)}
           for k in range(6)]


def baseline_ms() -> float:
    from labutil.raster import CourseCanvasAgg

    from labutil.plotting import new_figure

    fig, ax = new_figure(figsize=(8.0, 4.2))
    ax.plot([1, 2, 3])
    ax.set_xlabel("x (s)")
    canvas = CourseCanvasAgg(fig)
    canvas.draw()
    fig.set_layout_engine("none")
    return median_ms(canvas.draw, repeats=15)


def main() -> int:
    ms = explorer_update_ms(EH.acceptance_explorer(), CHANGES)
    base = baseline_ms()
    ok = ms < TARGET_MS
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(f"acceptance_explorer: median update {ms:.1f} ms (target < {TARGET_MS:.0f} ms) {'OK' if ok else 'MISSED'}; "
          f"trivial-figure render baseline {base:.1f} ms; load average {load}")
    save("health_explorer", {"acceptance_explorer_median_ms": round(ms, 2), "trivial_figure_render_ms": round(base, 2),
                             "load_average_1m": load, "target_ms": TARGET_MS, "ok": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
