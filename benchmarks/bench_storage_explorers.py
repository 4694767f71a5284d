"""Update latency of the storage explorers (ch16-18).

Target (common brief): explorer update latency = model + redraw into the Figure < 50 ms median,
measured with ``_common.explorer_update_ms`` (the Figure's own canvas, as the other benchmarks do).
Also reported, not gated: the full Agg rasterisation of the updated figure (what the inline backend
adds on top when it turns the figure into a PNG), which depends strongly on machine load; the
1-minute load average is recorded next to it.

Run: python benchmarks/bench_storage_explorers.py  -> benchmarks/results/bench_storage_explorers.json
"""

from __future__ import annotations

import sys

from _common import run_explorer_benchmark

from labutil.explore import storage as es

TARGET_MS = 50.0

CASES = {
    "checkpoint_explorer": [{"params_b": 175, "async_save": True}, {"params_b": 70, "async_save": False},
                            {"n_writers": 512, "write_gbs": 500}, {"n_writers": 64, "write_gbs": 100}],
    "pipeline_explorer": [{"cpu_cores_per_gpu": 8}, {"cpu_cores_per_gpu": 32}, {"sample_kb": 4, "iops_per_gpu": 500},
                          {"sample_kb": 256, "iops_per_gpu": 20000}],
    "tier_explorer": [{"dataset_tb": 3000}, {"dataset_tb": 300}, {"write_gbs": 2000, "params_b": 1000},
                      {"write_gbs": 500, "params_b": 175}],
}


def main() -> int:
    cases = {name: (getattr(es, name), changes) for name, changes in CASES.items()}
    return run_explorer_benchmark("bench_storage_explorers", cases, TARGET_MS)


if __name__ == "__main__":
    sys.exit(main())
