"""Full nbval run of every chapter and lab, as ``make test`` runs it (2 xdist workers, one notebook
per scope), timed; per-notebook durations saved so the suite can schedule the longest first.

Target (issue 12): <= 120 s wall on the 2-core machine. The floor is one kernel start-up plus the
imports of numpy/matplotlib/labutil per notebook. Wall time depends on what else the machine runs,
so the 1-minute load average before/after and the CPU seconds used are saved with it.
Writes benchmarks/results/nbval.json; exits 1 when the run fails or misses the target.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict

from _common import ROOT, save

TARGET_S = 120.0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", "--workers", default="2")
    p.add_argument("paths", nargs="*", default=["chapters", "labs"])
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        junit = os.path.join(tmp, "nbval.xml")
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", args.workers,
                "--dist", "loadscope", "--nbval-lax", "--nbval-current-env",
                "--nbval-sanitize-with", "tests/nbval_sanitize.cfg", "--timeout", "900",
                f"--junitxml={junit}", *args.paths]
        load0 = os.getloadavg()[0]
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        rc = subprocess.call(argv, cwd=ROOT)
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        load1 = os.getloadavg()[0]
        per_nb: dict[str, float] = defaultdict(float)
        for case in ET.parse(junit).getroot().iter("testcase"):
            cls = case.get("classname", "")  # "chapters.ch01_intro.ipynb" -> "chapters/ch01_intro.ipynb"
            stem, _, ext = cls.rpartition(".")
            f = case.get("file") or (stem.replace(".", "/") + "." + ext if ext == "ipynb" else cls)
            per_nb[f] += float(case.get("time", 0.0))
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    ranked = dict(sorted(((k, round(v, 2)) for k, v in per_nb.items()), key=lambda kv: -kv[1]))
    ok = rc == 0 and wall <= TARGET_S
    save("nbval", {"target_s": TARGET_S, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "pytest_rc": rc,
                   "ok": ok, "workers": args.workers, "notebooks": len(ranked),
                   "per_notebook_s": ranked, "loadavg_1min_before": load0, "loadavg_1min_after": load1,
                   "when_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    print(f"nbval of {len(ranked)} notebooks: {wall:.1f} s wall, {cpu:.1f} s CPU (children), rc {rc}; "
          f"load {load0:.2f} -> {load1:.2f}; slowest: {list(ranked.items())[:5]}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
