"""Update latency of the chapter 1, 2 and 3 explorers (target: median < 50 ms on the 2-core CI machine)."""

import sys

from _common import explorer_render_ms, explorer_update_ms, save

from labutil.explore import architecture, overview, workloads

TARGET_MS = 50.0


def main() -> int:
    cases = {
        "ch01 effective compute": (overview.effective_compute_explorer(),
                                   [{"n_gpus": 2048}, {"gpu": "B200"}, {"mfu": 0.4}, {"n_gpus": 512, "gpu": "H100-SXM"}]),
        "ch02 workload profile": (workloads.workload_explorer(),
                                  [{"link_gbps": 25}, {"gpus": 4096}, {"workload": "multimodal", "gpus": 512},
                                   {"workload": "llm-pretrain", "gpus": 2048, "link_gbps": 400}]),
        "ch03 network planes": (architecture.architecture_explorer(),
                                [{"n_gpus": 8192}, {"oversubscription": 2.0}, {"server": "DGX-A100"},
                                 {"n_gpus": 1024, "server": "DGX-H100", "oversubscription": 1.0}]),
    }
    results = {name: explorer_update_ms(ex, changes) for name, (ex, changes) in cases.items()}
    render = {name: explorer_render_ms(ex) for name, (ex, _) in cases.items()}
    for name, ms in results.items():
        print(f"{name:<28} median update {ms:6.1f} ms  (target < {TARGET_MS:.0f} ms); Agg render {render[name]:6.1f} ms")
    ok = all(ms < TARGET_MS for ms in results.values())
    save("course_explorers", {"target_ms": TARGET_MS, "median_update_ms": results, "median_render_ms": render,
                              "pass": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
