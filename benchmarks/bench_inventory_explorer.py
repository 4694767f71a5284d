"""Update latency of the ch19 explorers (inventory checks, rack elevation): model + redraw, the shared
``explorer_update_ms`` convention; target < 50 ms median. Agg render time reported, no target."""

from __future__ import annotations

import os
import sys

from _common import explorer_render_ms, explorer_update_ms, save

from labutil.explore import inventory as E

TARGET_MS = 50.0
INV_CHANGES = [{"hostname": h, "drift": d} for h, d in (("gpu-node-01", "nic_gen4"), ("gpu-node-03", "none"),
                                                         ("gpu-node-02", "fm_mismatch"), ("gpu-node-04", "bios_gen4"))]
RACK_CHANGES = [{"rack_kw_limit": kw, "server": s} for kw, s in ((21.0, "DGX-H100"), (41.0, "DGX-H100"),
                                                                 (70.0, "DGX-A100"), (33.0, "HGX-H800"))]


def main() -> int:
    inv_ex, rack_ex = E.inventory_explorer(), E.rack_explorer()
    inv_ms = explorer_update_ms(inv_ex, INV_CHANGES)
    rack_ms = explorer_update_ms(rack_ex, RACK_CHANGES)
    render = {"inventory": explorer_render_ms(inv_ex), "rack": explorer_render_ms(rack_ex)}
    ok = inv_ms < TARGET_MS and rack_ms < TARGET_MS
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(f"inventory_explorer: median update {inv_ms:.1f} ms; rack_explorer: {rack_ms:.1f} ms "
          f"(target < {TARGET_MS:.0f} ms) {'OK' if ok else 'MISSED'}; Agg render {render['inventory']:.0f} / "
          f"{render['rack']:.0f} ms; load average {load}")
    save("inventory_explorer", {"inventory_explorer_median_ms": round(inv_ms, 2), "rack_explorer_median_ms": round(rack_ms, 2),
                                "render_ms": {k: round(v, 1) for k, v in render.items()}, "load_average_1m": load,
                                "target_ms": TARGET_MS, "ok": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
