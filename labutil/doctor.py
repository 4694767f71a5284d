"""``labutil.doctor``: the old import path of :mod:`labutil.machine.doctor` (re-exported; it sits
above ``machine``). ``python -m labutil doctor`` and ``python -m labutil.doctor`` run the same report."""

from __future__ import annotations

import sys

from .machine.doctor import (  # noqa: F401 - re-exports
    CORES_PER_GPU, COURSE_TORCH_WHEELS, RAM_GB_PER_GPU, SHM_MIN_BYTES, TORCH_CUDA_WHEELS, collect, driver_finding,
    findings, main, recommended_torch_wheel, render, run_tool, torch_wheel_for_driver)

__all__ = ["run_tool", "collect", "findings", "render", "main", "SHM_MIN_BYTES", "CORES_PER_GPU", "RAM_GB_PER_GPU",
           "driver_finding", "torch_wheel_for_driver", "TORCH_CUDA_WHEELS", "COURSE_TORCH_WHEELS",
           "recommended_torch_wheel"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
