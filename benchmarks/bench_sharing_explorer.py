"""Update latency of the ch29 GPU-sharing explorer (model for all four modes + in-place redraw);
target < 50 ms median. Agg rasterisation is reported separately.
"""

from __future__ import annotations

import os
import sys

from _common import explorer_render_ms, explorer_update_ms, save

from labutil.explore import sharing as ES

TARGET_MS = 50.0
CHANGES = [{"n_tenants": (8, 14, 40, 64)[k % 4], "qps": (10.0, 20.0, 80.0)[k % 3], "gpu_fill": (0.2, 0.3, 0.6, 1.0)[k % 4],
            "mode": ("dedicated", "time_slicing", "mps", "mig")[k % 4], "gpu": ("H100-80GB", "A100-80GB")[k % 2]}
           for k in range(12)]


def main() -> int:
    ex = ES.sharing_explorer()
    ms = explorer_update_ms(ex, CHANGES)
    render = explorer_render_ms(ex)
    ok = ms < TARGET_MS and ex.error is None
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(f"sharing_explorer: median update {ms:.1f} ms (target < {TARGET_MS:.0f} ms) {'OK' if ok else 'MISSED'}; "
          f"Agg render {render:.1f} ms; load average {load}")
    save("sharing_explorer", {"sharing_explorer_median_ms": round(ms, 2), "agg_render_ms": round(render, 2),
                              "load_average_1m": load, "target_ms": TARGET_MS, "ok": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
