"""Update latency of the ch20 explorers (pull-time and lint demo): model + redraw, the shared
``explorer_update_ms`` convention; target < 50 ms median."""

from __future__ import annotations

import os
import sys

from _common import explorer_update_ms, save

from labutil.explore import containers as E

TARGET_MS = 50.0
PULL_CHANGES = [{"n_nodes": (8, 64, 512, 4096)[k % 4], "image_gb": 10.0 + 5 * (k % 5),
                 "cache_hit_fraction": 0.25 * (k % 3)} for k in range(8)]
LINT_CHANGES = [{"case": c, "n_local_ranks": 1 + k % 8} for k, c in enumerate(E.LINT_CASES)]


def main() -> int:
    pull_ms = explorer_update_ms(E.pull_explorer(), PULL_CHANGES)
    lint_ms = explorer_update_ms(E.lint_explorer(), LINT_CHANGES)
    ok = pull_ms < TARGET_MS and lint_ms < TARGET_MS
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(f"pull_explorer: median update {pull_ms:.1f} ms; lint_explorer: {lint_ms:.1f} ms "
          f"(target < {TARGET_MS:.0f} ms) {'OK' if ok else 'MISSED'}; load average {load}")
    save("containers_explorer", {"pull_explorer_median_ms": round(pull_ms, 2), "lint_explorer_median_ms": round(lint_ms, 2),
                                 "load_average_1m": load, "target_ms": TARGET_MS, "ok": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
