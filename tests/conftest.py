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
