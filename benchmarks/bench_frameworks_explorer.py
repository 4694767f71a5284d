"""Update latency of the ch24 framework explorer (model + redraw), target < 50 ms median.

Writes benchmarks/results/frameworks_explorer.json; exits 1 if the target is missed.
"""

from __future__ import annotations

import os
import sys

from _common import explorer_render_ms, explorer_update_ms, save

from labutil.explore.frameworks import framework_explorer

TARGET_MS = 50.0


def main() -> int:
    ex = framework_explorer()
    changes = [{"n_gpus": 2048}, {"model": "llama3-70b", "n_gpus": 256, "global_batch": 512},
               {"model": "llama3-8b", "n_gpus": 8, "global_batch": 64}, {"gpu": "A100-80G-SXM"},
               {"model": "gpt3-175b", "n_gpus": 1024, "global_batch": 1536, "gpu": "H100-SXM"},
               {"n_gpus": 8192, "global_batch": 4096}]
    ms = explorer_update_ms(ex, changes, repeats=24)
    agg_ms = explorer_render_ms(ex)
    assert ex.error is None, ex.error
    ok = ms < TARGET_MS
    print(f"framework_explorer median update {ms:6.1f} ms (target < {TARGET_MS:.0f} ms); Agg render {agg_ms:6.1f} ms (info)")
    save("frameworks_explorer", {"target_ms": TARGET_MS, "explorers": {"framework_explorer": {
        "median_update_ms": round(ms, 2), "median_agg_render_ms": round(agg_ms, 1), "passed": ok}},
        "passed": ok, "loadavg_1min": os.getloadavg()[0]})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
