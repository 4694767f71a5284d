"""Summarise the JSON files of run_gpu_checks.sh into RESULTS_DIR/summary.json (and print it).

Key numbers next to their datasheet values from the catalog: GEMM TFLOP/s vs the dense peak,
copy bandwidth vs HBM, peak all_reduce busbw (and its α-β fit), #wrong, DDP step time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from labutil.bench import analysis  # noqa: E402
from labutil.machine import expect  # noqa: E402
from labutil.fileio import write_json_atomic  # noqa: E402


def _load(d: Path, name: str):
    p = d / name
    return json.loads(p.read_text()) if p.exists() else None


def summarize(d: Path) -> dict:
    out: dict = {"files": sorted(p.name for p in d.glob("*.json") if p.name != "summary.json")}
    g = _load(d, "gemm_bf16.json")
    if g:
        out["gemm"] = {"device": g["device_name"], "catalog": g["catalog_gpu"], "best_tflops": g["best_tflops"],
                       "peak_tflops": g["peak_tflops"], "fraction_of_peak": g["fraction_of_peak"], "cpu_path": g["cpu_path"]}
    m = _load(d, "membw.json")
    if m:
        out["membw"] = {"best_gbs": m["best_gbs"], "datasheet_gbs": m["datasheet_gbs"],
                        "fraction_of_datasheet": m["fraction_of_datasheet"]}
    doc = _load(d, "doctor.json")
    prof = (doc or {}).get("facts", {}).get("profile") if isinstance(doc, dict) else None
    if prof:
        out["machine"] = {"case": prof.get("case"), "summary": prof.get("summary")}
    for op in ("all_reduce", "all_gather"):
        c = _load(d, f"collectives_{op}.json")
        if not c:
            continue
        entry = {"world_size": c["world_size"], "backend": c["backend"], "wrong_total": c["wrong_total"],
                 "avg_busbw_gbs": c["avg_busbw_gbs"],
                 "peak_busbw_gbs": max(r[k]["busbw_gbs"] for r in c["rows"] for k in ("out_of_place", "in_place") if r[k]),
                 "nccl": c["environment"].get("nccl")}
        mem = c.get("memory") or {}
        entry["memory_within_bound"] = mem.get("within_bound")
        entry["memory_max_growth_bytes"] = mem.get("max_growth_bytes")
        entry["memory_bound_bytes"] = mem.get("bound_bytes")
        if prof and c["backend"] == "nccl" and prof.get("case") in ("pcie", "nvlink") and c["world_size"] >= 2:
            exp = expect.expected_busbw_gbs(prof, op, ranks=c["world_size"])
            entry["expected_busbw_gbs"] = exp
            entry["measured_over_expected"] = entry["peak_busbw_gbs"] / exp if exp else None
        else:
            entry["expected_busbw_gbs"] = None
            entry["expected_note"] = ("one GPU: no peer, no fabric expectation" if c["world_size"] < 2 else
                                      "CPU path: no GPU-fabric expectation")
        if c["world_size"] >= 2:
            arr = analysis.collective_arrays(c)
            try:
                f = analysis.fit_alpha_beta(arr["size_bytes"], arr["time_s"], op, c["world_size"])
                entry["fit"] = {"latency_us_per_step": f.latency_s * 1e6, "bw_gbs": f.bw_gbs, "r2_log": f.r2_log}
            except ValueError as exc:  # e.g. the CPU path's small sweep on a busy host: times do not grow with S
                entry["fit"] = None
                entry["fit_note"] = str(exc)
        out[f"collectives_{op}"] = entry
    s = _load(d, "storage_io.json")
    if s:
        out["storage_io"] = {"write_gbs": s["sequential"]["write_gbs"], "read_gbs": s["sequential"]["read_gbs"],
                             "ckpt_save_s": s["checkpoint"]["save_s"], "ckpt_load_s": s["checkpoint"]["load_s"]}
    p = _load(d, "ddp.json")
    if p:
        out["ddp"] = {k: p.get(k) for k in ("world_size", "params", "dtype", "buckets_estimate", "step_s",
                                            "comm_s_per_step", "samples_per_s", "replica_max_abs_diff")}
    if doc is not None:
        out["doctor_keys"] = sorted(doc)[:20] if isinstance(doc, dict) else type(doc).__name__
    return out


if __name__ == "__main__":
    d = Path(sys.argv[1])
    res = summarize(d)
    write_json_atomic(d / "summary.json", res)
    print(json.dumps(res, indent=2))
