"""Figures for measured results (labs 02-06): busbw vs size, α-β fit, roofline, storage, scaling.

Every builder takes the JSON record a harness wrote (``labutil.bench.*``) and returns a
matplotlib Figure; axis labels are English with units. CPU-path results are titled as such.
"""

from __future__ import annotations

import numpy as np

from .. import compute, hardware
from ..plotting import PALETTE, new_figure
from ..bench import analysis

__all__ = ["busbw_figure", "alpha_beta_figure", "roofline_figure", "storage_figure", "scaling_figure",
           "nccl_env_table"]


def _size_axis(ax) -> None:
    ax.set_xscale("log", base=2)
    ticks = [2.0**k for k in range(0, 41, 4)]
    lo, hi = ax.get_xlim()
    shown = [t for t in ticks if lo <= t <= hi]
    labels = []
    for t in shown:
        for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10), ("B", 1)):
            if t >= div:
                labels.append(f"{t / div:g} {unit}")
                break
    if shown:
        ax.set_xticks(shown, labels)
    ax.set_xlabel("message size (bytes, log2)")


def _path_tag(result: dict) -> str:
    return " [CPU path: gloo, not NCCL]" if result.get("cpu_path") else ""


def busbw_figure(results, labels=None, fit: analysis.AlphaBetaFit | None = None):
    """busbw (GB/s) against message size for one or several collectives results (lab02, lab03)."""
    if isinstance(results, dict):
        results = [results]
    if not results:
        raise ValueError("results must hold at least one collectives result")
    labels = labels or [f"{r['op']} n={r['world_size']} {r['backend']}" for r in results]
    fig, ax = new_figure(figsize=(8.0, 4.5))
    for i, (res, lab) in enumerate(zip(results, labels)):
        arr = analysis.collective_arrays(res)
        ax.plot(arr["size_bytes"], arr["busbw_gbs"], "o-", color=PALETTE[i % len(PALETTE)], label=f"{lab} out-of-place")
        if any(r.get("in_place") for r in res["rows"]):
            ip = analysis.collective_arrays(res, "in_place")
            ax.plot(ip["size_bytes"], ip["busbw_gbs"], "s--", color=PALETTE[i % len(PALETTE)], alpha=0.5,
                    label=f"{lab} in-place")
    if fit is not None:
        s = np.geomspace(min(r["size_bytes"] for res in results for r in res["rows"]),
                         max(r["size_bytes"] for res in results for r in res["rows"]), 100)
        t = fit.model_s(s)
        factor = float(analysis.comm.busbw_factor(fit.op, fit.n))
        ax.plot(s, s / t / 1e9 * factor, "k:", label=f"alpha-beta fit: alpha={fit.latency_s * 1e6:.3g} us/step, "
                f"B={fit.bw_gbs:.3g} GB/s")
    _size_axis(ax)
    ax.set_ylabel("bus bandwidth busbw (GB/s)")
    ax.set_title("Measured busbw vs message size" + _path_tag(results[0]))
    ax.legend(loc="upper left", fontsize=8)
    return fig


def alpha_beta_figure(result: dict, fit: analysis.AlphaBetaFit, reference: dict | None = None):
    """Time per call against size (log-log): measured points, the α-β fit, and an optional reference
    model ``{"label": ..., "bw_gbs": ..., "latency_s": ...}`` through labutil.comm.collective_time_s."""
    arr = analysis.collective_arrays(result)
    fig, ax = new_figure(figsize=(8.0, 4.5))
    ax.plot(arr["size_bytes"], arr["time_s"] * 1e6, "o", color=PALETTE[0], label="measured (out-of-place)")
    s = np.geomspace(arr["size_bytes"].min(), arr["size_bytes"].max(), 100)
    ax.plot(s, fit.model_s(s) * 1e6, "-", color=PALETTE[1],
            label=f"fit t = a + b*S  (a={fit.a_s * 1e6:.3g} us, B={fit.bw_gbs:.3g} GB/s)")
    if reference is not None:
        from .. import comm

        t_ref = comm.collective_time_s(fit.op, s, fit.n, reference["bw_gbs"], reference["latency_s"], "ring")
        ax.plot(s, t_ref * 1e6, "--", color=PALETTE[2], label=reference["label"])
    ax.set_yscale("log")
    _size_axis(ax)
    ax.set_ylabel("time per call (us, log)")
    ax.set_title(f"{fit.op} on {fit.n} ranks: alpha-beta model" + _path_tag(result))
    ax.legend(loc="upper left", fontsize=8)
    return fig


def roofline_figure(points: dict, reference_gpu: str = "H100-SXM", precision: str = "bf16"):
    """Measured GEMM points on a roofline: the device's catalog roof (GPU path) or its measured roof
    (CPU path), with a catalog GPU's datasheet roof drawn for reference."""
    fig, ax = new_figure(figsize=(8.0, 4.8))
    x = np.geomspace(0.1, 10_000, 200)
    ref = hardware.gpu(reference_gpu)
    ax.plot(x, compute.roofline_tflops(x, ref.peak_tflops(precision), ref.hbm_gbs), color="0.6", lw=2,
            label=f"{ref.name} datasheet roof ({precision}, {ref.hbm_gbs:g} GB/s)")
    if points.get("catalog_gpu") and points.get("peak_tflops") and points.get("datasheet_gbs"):
        ax.plot(x, compute.roofline_tflops(x, points["peak_tflops"], points["datasheet_gbs"]), color=PALETTE[3],
                lw=2, label=f"{points['catalog_gpu']} datasheet roof (this GPU)")
    if points.get("measured_gbs"):
        peak_meas = float(np.max(points["tflops"]))
        ax.plot(x, compute.roofline_tflops(x, peak_meas, points["measured_gbs"]), "--", color=PALETTE[1],
                label=f"measured roof: {points['measured_gbs']:.3g} GB/s copy, {peak_meas:.3g} TFLOP/s best GEMM")
    ax.plot(points["intensity"], points["tflops"], "o", color=PALETTE[0], ms=8, label="measured GEMM (n x n x n)")
    for xi, yi, s in zip(points["intensity"], points["tflops"], points["sizes"]):
        ax.annotate(f"n={s}", (xi, yi), textcoords="offset points", xytext=(4, -12), fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte, log)")
    ax.set_ylabel("throughput (TFLOP/s, log)")
    ax.set_title("Roofline: measured GEMM vs datasheet" + (" [CPU path: host BLAS]" if points.get("cpu_path") else ""))
    ax.legend(loc="upper left", fontsize=8)
    return fig


def storage_figure(result: dict, reference_gbs: dict | None = None):
    """Bars of write / read / checkpoint save / load bandwidth (GB/s) of a storage_io result."""
    s, c = result["sequential"], result["checkpoint"]
    how = "O_DIRECT" if s.get("direct") else "buffered"
    names = [f"seq write\n(+fsync, {how})", f"seq read\n({how})", "ckpt save\n(torch.save+fsync)",
             "ckpt load\n(torch.load)"]
    vals = [s["write_gbs"], s["read_gbs"], c["save_gbs"], c["load_gbs"]]
    fig, ax = new_figure(figsize=(7.5, 4.2))
    bars = ax.bar(names, vals, color=PALETTE[:4])
    for b, v in zip(bars, vals):
        ax.annotate(f"{v:.3g}", (b.get_x() + b.get_width() / 2, v), ha="center", va="bottom", fontsize=9)
    for i, (lab, v) in enumerate((reference_gbs or {}).items()):
        ax.axhline(v, ls="--", color=PALETTE[4 + i], label=lab)
    if reference_gbs:
        ax.legend(fontsize=8)
    ax.set_ylabel("bandwidth (GB/s)")
    ax.set_title(f"Storage I/O on {result['directory']}, {s['bytes'] / 2**20:,.0f} MiB file, one writer"
                 if isinstance(s.get("bytes"), (int, float)) else f"Storage I/O on {result['directory']}")
    return fig


def scaling_figure(rows: list[dict], spreads: dict | None = None, cpu_path: bool = False):
    """Speedup and scaling efficiency against ranks (rows of labutil.bench.ddp.scaling_efficiency).

    ``spreads``: {ranks: analysis.efficiency_spread(...)} of repeated runs; the efficiency bars then
    carry a min..max whisker and every repetition as a dot, and the title says when the spread is too
    wide for a conclusion ("noise-dominated"). ``cpu_path`` marks the CPU/gloo figure as such."""
    if not rows:
        raise ValueError("rows must not be empty")
    spreads = spreads or {}
    n = np.array([r["world_size"] for r in rows], dtype=float)
    fig, (a1, a2) = new_figure(1, 2, figsize=(9.0, 4.0))
    a1.plot(n, [r["speedup"] for r in rows], "o-", color=PALETTE[0], label="measured")
    a1.plot(n, n, "k:", label="ideal (linear)")
    a1.set_xlabel("ranks")
    a1.set_ylabel("speedup (samples/s vs 1 rank)")
    a1.set_xticks(n)
    a1.legend(fontsize=8)
    labels = [str(int(x)) for x in n]
    a2.bar(labels, [100 * r["efficiency"] for r in rows], color=PALETTE[1], label="median repetition")
    noisy = False
    for i, r in enumerate(rows):
        sp = spreads.get(int(r["world_size"]))
        if not sp:
            continue
        a2.errorbar([i], [sp["median_pct"]], yerr=[[sp["median_pct"] - sp["min_pct"]], [sp["max_pct"] - sp["median_pct"]]],
                    fmt="none", ecolor="k", capsize=6, label="min..max of repeats")
        noisy = noisy or not sp["conclusive"]
    a2.axhline(100, color="k", ls=":")
    a2.set_xlabel("ranks")
    a2.set_ylabel("scaling efficiency (%)")
    if spreads:  # below the axes: the bars and the 100 % line fill the plot area
        a2.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    tag = " [CPU path: gloo]" if cpu_path else ""
    verdict = "\nnoise-dominated: the repeats disagree, this is not a scaling result" if noisy else ""
    fig.suptitle(f"DDP weak scaling (fixed batch per rank){tag}{verdict}")
    return fig


def nccl_env_table(n_nodes: int = 1, gpus_per_node: int = 8, sizes_bytes=(2**10, 2**20, 2**30)) -> list[dict]:
    """lab03: NCCL's own predicted all-reduce busbw under each NCCL_ALGO / NCCL_PROTO preset at a few sizes,
    from the SAME tuner call as :func:`labutil.explore.nccl.tuning_figure` (NCCL 2.7.5's tuner on the
    catalog DGX A100 node), one row per preset: ``"<busbw> (<algo/proto>)"`` per size."""
    from . import nccl as nccl_fig

    grid = [float(x) for x in nccl_fig.SIZES]
    cols = []
    for sz in sizes_bytes:
        if float(sz) not in grid:
            raise ValueError(f"sizes_bytes must be powers of two in the tuner grid {int(grid[0])}..{int(grid[-1])} B; "
                             f"got {sz!r}")
        cols.append(grid.index(float(sz)))
    rows = []
    for name in nccl_fig.ENV_PRESETS:
        t = nccl_fig.tuning_model(n_nodes=n_nodes, gpus_per_node=gpus_per_node, env=name)
        b = t.busbw_gbs(n_nodes * gpus_per_node)
        row = {"setting": name}
        for sz, i in zip(sizes_bytes, cols):
            label = next(f"{sz / d:g} {u}" for u, d in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10), ("B", 1)) if sz >= d)
            row[label] = f"{b[i]:.{2 if b[i] < 10 else 0}f} ({t.choice[i]})"
        rows.append(row)
    return rows

