"""GEMM throughput (TFLOP/s) by dtype and size, placed on the catalog roofline (lab04).

    python -m labutil.bench.gemm --dtype bf16 --sizes 1024,4096,8192 --out gemm.json

Each size runs C = A·B (square m = n = k) ``--warmup`` untimed times, then ``--iters`` times
between two CUDA events (GPU; default 50 and 100, :data:`GPU_COUNTS`, as the MAMF table; CPU 3 and
20) and reports FLOPs / time with FLOPs = 2·m·n·k (``labutil.compute.gemm_flops``). The datasheet peak comes from the catalog entry matching the
device name (``labutil.bench.catalog_gpu_name``): bf16/fp16 use the dense tensor peak, tf32 the
TF32 peak; ``fp32`` (TF32 disabled) has no catalog peak (the tables list tensor-core peaks only).

Without a GPU the CPU path multiplies small float32 matrices on the host and says so: its
numbers are host BLAS numbers, not tensor-core numbers.
"""

from __future__ import annotations

import sys

from .. import compute, validate
from ..fileio import write_json_atomic
from . import cli, fit
from .common import catalog_gpu_name, cuda_available, environment, median_call_s, parse_sizes

__all__ = ["DTYPES", "CATALOG_PRECISION", "BYTES", "CPU_BANNER", "CPU_MAX_SIZE", "GPU_COUNTS", "peak_for", "run", "PROG",
           "parse_args", "main"]

DTYPES = {"bf16": "bfloat16", "fp16": "float16", "tf32": "float32", "fp32": "float32"}
CATALOG_PRECISION = {"bf16": "bf16", "fp16": "fp16", "tf32": "tf32"}
BYTES = {"bf16": 2, "fp16": 2, "tf32": 4, "fp32": 4}
CPU_BANNER = "CPU path: host matmul (float32 BLAS), not a GPU: numbers are not tensor-core numbers"
CPU_MAX_SIZE = 1024
#: GPU default (warm-up, timed) multiplications per size: the method of the published MAMF table lab04
#: compares with (stas00/ml-engineering, compute/accelerator README: "a mean of 100 iterations after 50
#: warmup iterations for each shape"); a few calls of 8192^3 last milliseconds on an H100, before the
#: power limit has settled the clocks
GPU_COUNTS = (50, 100)


def peak_for(device_name: str, dtype: str) -> tuple[str | None, float | None]:
    """(catalog name, dense peak TFLOP/s) for a device string and a bench dtype; None when unknown."""
    validate.choice("dtype", dtype, tuple(DTYPES))
    name = catalog_gpu_name(device_name)
    if name is None or dtype not in CATALOG_PRECISION:
        return name, None
    from ..hardware import gpu

    try:
        return name, gpu(name).peak_tflops(CATALOG_PRECISION[dtype])
    except ValueError:
        return name, None


def run(sizes: list[int], dtype: str = "bf16", iters: int = 20, warmup: int = 3, device: str = "auto") -> dict:
    """Measure every size; returns the result record (also what ``--out`` writes)."""
    import torch

    validate.choice("dtype", dtype, tuple(DTYPES))
    validate.choice("device", device, ("auto", "cuda", "cpu"))
    iters = validate.integer("iters", iters, lo=1)
    warmup = validate.integer("warmup", warmup, lo=0)
    use_cuda = torch.cuda.is_available() if device == "auto" else device == "cuda"
    if use_cuda and not torch.cuda.is_available():
        raise ValueError("device 'cuda' requested but torch.cuda.is_available() is False")
    if not use_cuda:
        dtype_run = "fp32"
        big = [s for s in sizes if s > CPU_MAX_SIZE]
        if big:
            raise ValueError(f"on the CPU path sizes must be <= {CPU_MAX_SIZE} (seconds, not minutes); got {big}")
    else:
        dtype_run = dtype
        torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    tdtype = getattr(torch, DTYPES[dtype_run])
    dev = torch.device("cuda" if use_cuda else "cpu")
    dev_name = torch.cuda.get_device_name(0) if use_cuda else "CPU"
    gen = torch.Generator(device=dev).manual_seed(0)
    rows = []
    for s in sizes:
        s = validate.integer("size", s, lo=16)
        a = torch.randn(s, s, device=dev, dtype=tdtype, generator=gen)
        b = torch.randn(s, s, device=dev, dtype=tdtype, generator=gen)
        for _ in range(warmup):
            torch.matmul(a, b)
        if use_cuda:
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                torch.matmul(a, b)
            end.record()
            end.synchronize()
            t = start.elapsed_time(end) / 1e3 / iters
        else:
            t = median_call_s(lambda: torch.matmul(a, b), iters)
        flops = compute.gemm_flops(s, s, s)
        rows.append({"m": s, "n": s, "k": s, "time_s": t, "tflops": flops / t / 1e12,
                     "intensity_flop_per_byte": compute.gemm_intensity(s, s, s, BYTES[dtype_run])})
        del a, b
    catalog, peak = peak_for(dev_name, dtype_run) if use_cuda else (None, None)
    best = max(r["tflops"] for r in rows)
    return {"benchmark": "gemm", "device": "cuda" if use_cuda else "cpu", "device_name": dev_name,
            "cpu_path": not use_cuda, "banner": "" if use_cuda else CPU_BANNER, "dtype": dtype_run,
            "requested_dtype": dtype, "iters": iters, "warmup": warmup, "timer": "cuda_events (mean over the loop)" if use_cuda else "perf_counter (median per call)",
            "catalog_gpu": catalog, "peak_tflops": peak, "best_tflops": best,
            "fraction_of_peak": (best / peak) if peak else None, "rows": rows, "environment": environment()}


PROG = "labutil.bench.gemm"


def parse_args(argv=None):
    p = cli.Parser(prog="python -m labutil.bench.gemm", description="GEMM TFLOP/s by dtype and size")
    p.add_argument("--dtype", default="bf16", choices=tuple(DTYPES))
    cli.add_sweep_flags(p, "square sizes, comma-separated (default GPU 1024..8192, CPU 128..512)")
    a = p.parse_args(argv)
    on_gpu = cli.resolve_sweep(a, _cuda_available(), parse_sizes, [1024, 2048, 4096, 8192], [128, 256, 512],
                               counts_gpu=GPU_COUNTS)
    limit = 65536 if on_gpu else CPU_MAX_SIZE
    bad = [s for s in a.size_list if not 16 <= s <= limit]
    if bad:
        raise cli.UsageError(f"--sizes must be matrix sizes in [16, {limit}] on the {'GPU' if on_gpu else 'CPU'} path; got {bad}")
    check_fits(max(a.size_list), a.dtype if on_gpu else "fp32", on_gpu)
    cli.writable_out(a.out)
    return a


def memory_bytes(size: int, dtype: str) -> int:
    """Bytes alive while the largest size runs: A, B and the product C, each size² elements."""
    size = validate.integer("size", size, lo=1)
    validate.choice("dtype", dtype, tuple(DTYPES))
    return 3 * size * size * BYTES[dtype]


def check_fits(size: int, dtype: str, on_gpu: bool, *, available=None) -> None:
    """Refuse a matrix size whose three matrices do not fit in the GPU's free memory (GPU path) or
    in the host's available memory (CPU path), before any is allocated."""
    need = memory_bytes(size, dtype)
    what = f"--sizes {size} ({dtype}): A, B and C = 3 x {size}^2 elements"
    if on_gpu:
        fit.require_device(what, need, "use smaller --sizes", available=available)
    else:
        fit.require_host(what, need, "use smaller --sizes", available=available)


def _cuda_available() -> bool:
    return cuda_available()


def main(argv=None) -> int:
    try:
        a = parse_args(argv)
    except cli.UsageError as exc:
        return cli.report(PROG, exc)
    try:
        res = run(a.size_list, a.dtype, a.iters, a.warmup, a.device)
        if res["cpu_path"]:
            print(f"# {CPU_BANNER}")
        print(f"# device {res['device_name']} (catalog: {res['catalog_gpu']}), dtype {res['dtype']}, "
              f"peak {res['peak_tflops']} TFLOP/s")
        print(f"{'size':>8} {'time_ms':>10} {'TFLOP/s':>10} {'FLOP/B':>8}")
        for r in res["rows"]:
            print(f"{r['m']:8d} {r['time_s'] * 1e3:10.3f} {r['tflops']:10.3f} {r['intensity_flop_per_byte']:8.1f}")
        if a.out:
            write_json_atomic(a.out, res)
    except (OSError, RuntimeError, ValueError, MemoryError) as exc:  # a full disk, an allocation the GPU refused
        return cli.error(PROG, exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
