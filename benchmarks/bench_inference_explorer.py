"""Update latency of the ch25 serving explorer (model + redraw of the figure's artists, the shared
``explorer_update_ms`` convention); target < 50 ms median. Agg rasterisation is reported separately.
"""

from __future__ import annotations

import os
import sys

from _common import explorer_render_ms, explorer_update_ms, save

from labutil.explore import inference as EI

TARGET_MS = 50.0
CHANGES = [{"precision": ("bf16", "fp8")[k % 2], "batch": (16, 64, 256)[k % 3], "qps": 10.0 + 15 * (k % 4),
            "p99_s": 15.0 + 5 * (k % 3)} for k in range(12)]


def main() -> int:
    ex = EI.serving_explorer()
    ms = explorer_update_ms(ex, CHANGES)
    render = explorer_render_ms(ex)
    ok = ms < TARGET_MS
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(f"serving_explorer: median update {ms:.1f} ms (target < {TARGET_MS:.0f} ms) {'OK' if ok else 'MISSED'}; "
          f"Agg render {render:.1f} ms; load average {load}")
    save("inference_explorer", {"serving_explorer_median_ms": round(ms, 2), "agg_render_ms": round(render, 2),
                                "load_average_1m": load, "target_ms": TARGET_MS, "ok": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
