"""Update latency of the ch10 facility-power and ch12 fabric-sizing explorers (target: < 50 ms median).

Run: python benchmarks/bench_infra_explorers.py  -> benchmarks/results/infra_explorers.json
"""

from __future__ import annotations

import sys

from _common import explorer_update_ms, save

from labutil.explore.power import facility_power_explorer
from labutil.explore.topology import fabric_sizing_explorer

TARGET_MS = 50.0


def main() -> int:
    fab = fabric_sizing_explorer()
    fab_ms = explorer_update_ms(fab, [{"n_gpus": 1024}, {"n_gpus": 8192}, {"oversubscription": 2.0},
                                      {"rail_optimized": False}, {"n_gpus": 256, "oversubscription": 1.0,
                                                                  "rail_optimized": True}])
    pw = facility_power_explorer()
    pw_ms = explorer_update_ms(pw, [{"n_gpus": 1024}, {"pue": 1.3}, {"rack_kw_limit": 60.0},
                                    {"n_gpus": 8192, "pue": 1.5, "rack_kw_limit": 40.0}])
    rows = {"fabric_sizing_explorer_ms": round(fab_ms, 2), "facility_power_explorer_ms": round(pw_ms, 2)}
    ok = all(v < TARGET_MS for v in rows.values())
    for k, v in rows.items():
        print(f"{k:32s} {v:8.2f} ms  (target < {TARGET_MS:g} ms)")
    save("infra_explorers", {"target_ms": TARGET_MS, "results": rows, "passed": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
