"""Update latency of the ch26 alert-rule explorer (model + redraw, the shared ``explorer_update_ms``
convention); target < 50 ms median. Threshold / for: changes reuse the cached telemetry; a fault
change regenerates nothing after the first visit (lru_cache), so it is measured in the same cycle.
"""

from __future__ import annotations

import sys

from _common import explorer_render_ms, explorer_update_ms, save

from labutil.explore import monitoring as EM

TARGET_MS = 50.0
CHANGES = [{"k_sigma": 1.5 + 0.5 * (k % 8), "for_s": (0, 60, 120, 300, 600)[k % 5],
            "fault": ("thermal_throttle", "xid79", "slow_nic", "none")[k // 3 % 4]} for k in range(12)]


def main() -> int:
    ex = EM.alert_rule_explorer()
    ms = explorer_update_ms(ex, CHANGES)
    render = explorer_render_ms(ex)
    ok = ms < TARGET_MS
    print(f"alert_rule_explorer: median update {ms:.1f} ms (target < {TARGET_MS:.0f} ms) {'OK' if ok else 'MISSED'}; "
          f"Agg render {render:.1f} ms (reported)")
    save("monitoring_explorer", {"alert_rule_explorer_median_ms": round(ms, 2), "agg_render_ms": round(render, 2),
                                 "target_ms": TARGET_MS, "ok": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
