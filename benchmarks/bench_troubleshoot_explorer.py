"""Update latency of the ch28 triage explorer (diagnosis + recolouring the flow + bars); target < 50 ms median."""

from __future__ import annotations

import sys

from _common import explorer_update_ms, save

from labutil.explore import troubleshoot as ET

TARGET_MS = 50.0
CHANGES = [{"case": "degraded_rail"}, {"case": "checkpoint_stall", "fio_read": False},
           {"case": "nccl_timeout_xid79", "fio_read": True, "dmesg": False}, {"case": "collective_mismatch", "dmesg": True},
           {"case": "nan_after_node_swap", "nvidia_smi_q": False}, {"case": "socket_fallback", "nvidia_smi_q": True}]


def main() -> int:
    ms = explorer_update_ms(ET.triage_explorer(), CHANGES)
    ok = ms < TARGET_MS
    print(f"triage_explorer: median update {ms:.1f} ms (target < {TARGET_MS:.0f} ms) {'OK' if ok else 'MISSED'}")
    save("troubleshoot_explorer", {"triage_explorer_median_ms": round(ms, 2), "target_ms": TARGET_MS, "ok": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
