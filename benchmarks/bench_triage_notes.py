"""Size budget of ``triage`` on NOTES (triage round 3: the layer lexicon and the log fragments read inside
sentences, ``labutil.troubleshoot.lexicon`` / ``recognise.prose.embedded_spans``).

Shapes, at 1 MB and 4 MB, alone and in front of a real incident log (tests/fixtures/incident_xid79_watchdog.txt):

- ``fail_prose``: one English line of failure notes naming network parts, repeated (the lexicon reads it: the
  notes fallback runs, the regex of ~800 terms scans every sentence);
- ``zh_prose``: the same in Chinese (the Chinese terms' regex, overlap resolution on a character map);
- ``mixed_lines``: Chinese lines each carrying an unquoted NCCL log fragment (``embedded_spans`` + the line rules
  on every line);
- ``term_soup``: one sentence of lexicon terms and failure words without a full stop (worst case of overlapping
  candidates in one sentence - quadratic before the character-map fix).

Targets (course policy, the same as ``bench_parsers.py`` for triage): at most ``BUDGET_S_PER_MB`` seconds per MB
at 4 MB and growth 1 MB -> 4 MB at most ``MAX_GROWTH`` x where the 4 MB run takes >= 1 s (best of two).
Results go to ``benchmarks/results/triage_notes.json``.
"""

from __future__ import annotations

import os
import sys
import time

from _common import ROOT, save

from labutil.troubleshoot import triage  # noqa: E402

BUDGET_S_PER_MB = 4.0
MAX_GROWTH = 6.0
MB = 1_000_000
_SOUP = "nic switch 超时 网卡 掉卡 xid nfs lustre docker version mismatch fails error 12 hang ".split()
SHAPES = {
    "fail_prose": lambda n: "the nic on node 7 keeps failing and the switch drops packets. " * (n // 62),
    "zh_prose": lambda n: "两台机器之间一直断连，怀疑网卡或交换机丢包。" * (n // 22),
    "mixed_lines": lambda n: "\n".join(["训练卡住了，日志里报 Got async event : local catastrophic error，别的节点正常"]
                                       * (n // 60)),
    "term_soup": lambda n: " ".join(_SOUP[i % len(_SOUP)] for i in range(n // 6)),
}


def _best(text: str) -> float:
    best = None
    for _ in range(2):
        t0 = time.perf_counter()
        triage(text)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best


def main() -> int:
    seed = (ROOT / "tests" / "fixtures" / "incident_xid79_watchdog.txt").read_text(encoding="utf-8")
    rows = {}
    for name, shape in SHAPES.items():
        for with_seed in (False, True):
            t = {size: _best(shape(size) + ("\n" + seed if with_seed else "")) for size in (MB, 4 * MB)}
            per_mb = t[4 * MB] / 4
            growth = t[4 * MB] / max(t[MB], 1e-3)
            ok = per_mb <= BUDGET_S_PER_MB and (growth <= MAX_GROWTH or t[4 * MB] < 1.0)
            key = name + ("+log" if with_seed else "")
            rows[key] = {"s_1mb": round(t[MB], 3), "s_4mb": round(t[4 * MB], 3), "s_per_mb": round(per_mb, 3),
                         "growth_1_to_4": round(growth, 2), "ok": ok}
            print(f"{key:<18} 1 MB {t[MB]:6.2f} s  4 MB {t[4 * MB]:6.2f} s  x{growth:5.2f}  "
                  f"{'OK' if ok else 'MISSED'}", flush=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    ok = all(r["ok"] for r in rows.values())
    save("triage_notes", {"results": rows, "budget_s_per_mb": BUDGET_S_PER_MB, "max_growth": MAX_GROWTH,
                          "loadavg_1min": load, "ok": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
