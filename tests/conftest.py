"""Test configuration shared by the whole suite."""

import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # this process only; notebook kernels keep the inline backend

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("HYPOTHESIS_PROFILE", "ci")
try:
    from hypothesis import HealthCheck, settings

    # derandomize: every CI run draws the same examples, so a property failure is reproducible, not a flake
    settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
except ImportError:  # pragma: no cover
    pass


# -- scheduling: longest first ------------------------------------------------------------------
# `make test` runs 2 xdist workers with one scope per file. Handing out the longest files first
# (longest-processing-time scheduling) keeps one worker from starting a slow notebook at the end
# while the other idles. Durations come from the last `benchmarks/bench_nbval.py` run
# (benchmarks/results/nbval.json); files not in it keep their place after the known ones, except
# the browser test, which waits on a browser and a kernel for about a minute.
_KNOWN_SLOW_S = {"tests/test_browser.py": 90.0}


def _file_costs() -> dict:
    import json

    costs = dict(_KNOWN_SLOW_S)
    try:
        data = json.loads((ROOT / "benchmarks" / "results" / "nbval.json").read_text())
        costs.update({k: float(v) for k, v in data.get("per_notebook_s", {}).items()})
    except (OSError, ValueError, AttributeError):
        pass
    return costs


def pytest_collection_modifyitems(session, config, items):
    costs = _file_costs()
    if not costs:
        return

    def key(pair):
        index, item = pair
        rel = Path(str(item.fspath)).resolve()
        try:
            rel = rel.relative_to(ROOT).as_posix()
        except ValueError:
            rel = rel.as_posix()
        return (-costs.get(rel, 0.0), index)  # stable: cells of a notebook stay in order

    items[:] = [item for _, item in sorted(enumerate(items), key=key)]
