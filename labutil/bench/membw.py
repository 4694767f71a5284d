"""Device-memory copy bandwidth (lab04): the "β" of the roofline, measured.

    python -m labutil.bench.membw --sizes 256M,1G --out membw.json

``dst.copy_(src)`` on one device moves every byte twice (read src, write dst), so the bandwidth
is 2·S / t, the convention of the STREAM "Copy" kernel (McCalpin, STREAM FAQ: bytes counted =
2 × 8 × N for Copy) and of BabelStream. GPU timing uses CUDA events around ``--iters`` copies
after ``--warmup`` untimed ones. The datasheet bandwidth comes from the catalog (``hbm_gbs``).

The CPU path copies host buffers (at most 256 MiB) with the same method and says so: it
measures host DRAM (and cache for small sizes), not HBM.

``best_gbs`` is the DRAM/HBM **plateau**, not the fastest row: the median over the sizes of at
least 4 x the last-level cache (``llc_bytes``: the GPU's L2, or the host's L3 from sysfs), else the
largest size (:func:`labutil.bench.analysis.copy_plateau`). A copy that fits in the cache runs at
several times DRAM speed (lab04 measured 57.8 GB/s at 1 MiB against a 17.4 GB/s plateau on the
course's CI machine), and a roofline built on it puts the ridge at a third of its real place.
``max_gbs`` keeps the fastest row.
"""

from __future__ import annotations

import sys

from .. import validate
from ..fileio import write_json_atomic
from . import analysis, cli, fit
from .common import catalog_gpu_name, cuda_available, environment, median_call_s, parse_sizes

__all__ = ["CPU_BANNER", "CPU_MAX_BYTES", "catalog_bandwidth_gbs", "run", "PROG", "parse_args", "main"]

CPU_BANNER = "CPU path: host memcpy (DRAM/cache), not GPU HBM"
CPU_MAX_BYTES = 256 * 2**20


def catalog_bandwidth_gbs(device_name: str) -> tuple[str | None, float | None]:
    name = catalog_gpu_name(device_name)
    if name is None:
        return None, None
    from ..hardware import gpu

    return name, float(gpu(name).hbm_gbs)


def host_llc_bytes(sysfs: str = "/sys/devices/system/cpu/cpu0/cache") -> int | None:
    """Size of the host CPU's last-level (highest-level unified or data) cache, from sysfs; None if unknown."""
    import os

    best = None
    try:
        entries = os.listdir(sysfs)
    except OSError:
        return None
    for name in entries:
        if not name.startswith("index"):
            continue
        try:
            with open(os.path.join(sysfs, name, "level"), encoding="ascii") as f:
                level = int(f.read().strip())
            with open(os.path.join(sysfs, name, "type"), encoding="ascii") as f:
                kind = f.read().strip()
            with open(os.path.join(sysfs, name, "size"), encoding="ascii") as f:
                text = f.read().strip()
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
        digits = text[:-1] if text[-1:].upper() in "KMG" else text
        if not digits.isdigit():
            continue
        if best is None or level > best[0]:
            best = (level, int(digits) * mult)
    return best[1] if best else None


def run(sizes_bytes: list[int], iters: int = 20, warmup: int = 3, device: str = "auto") -> dict:
    import torch

    validate.choice("device", device, ("auto", "cuda", "cpu"))
    iters = validate.integer("iters", iters, lo=1)
    warmup = validate.integer("warmup", warmup, lo=0)
    use_cuda = torch.cuda.is_available() if device == "auto" else device == "cuda"
    if use_cuda and not torch.cuda.is_available():
        raise ValueError("device 'cuda' requested but torch.cuda.is_available() is False")
    if not use_cuda and max(sizes_bytes) > CPU_MAX_BYTES:
        raise ValueError(f"on the CPU path sizes must be <= {CPU_MAX_BYTES} bytes; got {max(sizes_bytes)}")
    dev = torch.device("cuda" if use_cuda else "cpu")
    rows = []
    for size in sizes_bytes:
        size = validate.integer("size_bytes", size, lo=1024)
        if use_cuda:  # source and copy: 2x the size must fit, or the run dies in an OOM mid-sweep
            free_b, total_b = torch.cuda.mem_get_info()
            if 2 * size > 0.9 * free_b:
                raise ValueError(f"size_bytes {size} needs 2 x {size / 2**30:.2f} GiB (source and copy) of GPU "
                                 f"memory; this GPU has {free_b / 2**30:.1f} GiB free of {total_b / 2**30:.1f} GiB: "
                                 f"use sizes <= {int(0.45 * free_b)} bytes")
        src = torch.ones(size // 4, dtype=torch.float32, device=dev)
        dst = torch.empty_like(src)
        for _ in range(warmup):
            dst.copy_(src)
        if use_cuda:
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                dst.copy_(src)
            end.record()
            end.synchronize()
            t = start.elapsed_time(end) / 1e3 / iters
        else:
            t = median_call_s(lambda: dst.copy_(src), iters)
        nbytes = src.numel() * 4
        rows.append({"size_bytes": nbytes, "time_s": t, "copy_gbs": 2 * nbytes / t / 1e9})
        del src, dst
    dev_name = torch.cuda.get_device_name(0) if use_cuda else "CPU"
    catalog, hbm = catalog_bandwidth_gbs(dev_name) if use_cuda else (None, None)
    llc = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", None) if use_cuda else host_llc_bytes()
    plateau = analysis.copy_plateau({"rows": rows, "llc_bytes": llc})
    best = plateau["gbs"]
    return {"benchmark": "membw", "device": dev.type, "device_name": dev_name, "cpu_path": not use_cuda,
            "banner": "" if use_cuda else CPU_BANNER, "method": "dst.copy_(src), 2*S/t",
            "timer": "cuda_events (mean over the loop)" if use_cuda else "perf_counter (median per call)", "iters": iters, "warmup": warmup,
            "catalog_gpu": catalog, "datasheet_gbs": hbm, "best_gbs": best, "max_gbs": plateau["max_gbs"],
            "llc_bytes": llc, "plateau_rule": plateau["rule"], "plateau_cache_safe": plateau["cache_safe"],
            "fraction_of_datasheet": (best / hbm) if hbm else None, "rows": rows, "environment": environment()}


PROG = "labutil.bench.membw"


def parse_args(argv=None):
    p = cli.Parser(prog="python -m labutil.bench.membw", description="memory copy bandwidth")
    cli.add_sweep_flags(p, "bytes, comma-separated, binary suffixes (default GPU 64M,256M,1G; CPU 64M,128M,256M)")
    a = p.parse_args(argv)
    on_gpu = cli.resolve_sweep(a, cuda_available(), parse_sizes, [64 << 20, 256 << 20, 1 << 30],
                               [64 << 20, 128 << 20, 256 << 20])
    hi = (64 << 30) if on_gpu else CPU_MAX_BYTES
    bad = [s for s in a.size_list if not 1024 <= s <= hi]
    if bad:
        raise cli.UsageError(f"--sizes must be in [1024, {hi}] bytes on the {'GPU' if on_gpu else 'CPU'} path "
                             f"(source and copy together need 2x); got {bad}")
    check_fits(max(a.size_list), on_gpu)
    cli.writable_out(a.out)
    return a


def check_fits(size_bytes: int, on_gpu: bool, *, available=None) -> None:
    """Refuse a size whose source and copy (2 x size) do not fit in the GPU's free memory (GPU
    path) or the host's available memory (CPU path), before anything is allocated."""
    size_bytes = validate.integer("size_bytes", size_bytes, lo=1)
    what = f"--sizes {fit.fmt_bytes(size_bytes)}: source and copy (2 x size)"
    if on_gpu:
        fit.require_device(what, 2 * size_bytes, "use smaller --sizes", available=available)
    else:
        fit.require_host(what, 2 * size_bytes, "use smaller --sizes", available=available)


def main(argv=None) -> int:
    try:
        a = parse_args(argv)
    except cli.UsageError as exc:
        return cli.report(PROG, exc)
    try:
        res = run(a.size_list, a.iters, a.warmup, a.device)
        if res["cpu_path"]:
            print(f"# {CPU_BANNER}")
        print(f"# device {res['device_name']} (catalog: {res['catalog_gpu']}, datasheet {res['datasheet_gbs']} GB/s)")
        for r in res["rows"]:
            print(f"{r['size_bytes']:12d} B  {r['time_s'] * 1e6:10.1f} us  {r['copy_gbs']:8.1f} GB/s")
        print(f"# plateau (best_gbs) {res['best_gbs']:.1f} GB/s: {res['plateau_rule']}")
        if a.out:
            write_json_atomic(a.out, res)
    except (OSError, RuntimeError, ValueError, MemoryError) as exc:  # a full disk, an allocation refused
        return cli.error(PROG, exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
