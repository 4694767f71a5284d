"""Update latency of the chapter 1, 2 and 3 explorers (target: median < 50 ms on the 2-core CI machine)."""

import sys

from _common import run_explorer_benchmark

from labutil.explore import architecture, overview, workloads

CASES = {
    "ch01 effective compute": (overview.effective_compute_explorer,
                               [{"n_gpus": 2048}, {"gpu": "B200"}, {"mfu_1gpu": 0.4}, {"network": "1x25GbE"},
                                {"n_gpus": 512, "gpu": "H100-SXM"}]),
    "ch02 workload profile": (workloads.workload_explorer,
                              [{"link_gbps": 25}, {"gpus": 4096}, {"workload": "multimodal", "gpus": 512},
                               {"workload": "llm-pretrain", "gpus": 2048, "link_gbps": 400}]),
    "ch03 network planes": (architecture.architecture_explorer,
                            [{"n_gpus": 8192}, {"oversubscription": 2.0}, {"server": "DGX-A100"},
                             {"n_gpus": 1024, "server": "DGX-H100", "oversubscription": 1.0}]),
}

if __name__ == "__main__":
    sys.exit(run_explorer_benchmark("course_explorers", CASES))
