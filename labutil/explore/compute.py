"""Explorers and figures for compute sizing (ch04) and GPU architecture / roofline (ch06).

Explorers (``labutil.widgets.Explorer``):

- ``time_to_train_explorer()``: model preset, tokens, catalog GPU, MFU, GPU count and deadline ->
  training FLOPs (6·N·D), days on the chosen GPU count, GPUs needed for the deadline.
- ``roofline_explorer()``: catalog GPU and precision, an operation (GEMM of m×n×k or attention:
  fused/naive prefill or decode) -> its arithmetic intensity placed on that GPU's roofline. The
  shape controls the chosen operation does not read are greyed out and named in the summary.

Figures (``*_figure()`` returning a matplotlib Figure; axis labels in English with units):
``roofline_figure``, ``gpu_catalog_figure``, ``precision_figure``, ``time_to_train_figure``,
``training_compute_figure``, ``attention_intensity_figure``.

The explorer figures create their artists once and update their data on each change (no
``ax.clear()``), which keeps an update well under 50 ms (benchmarks/bench_compute_explorers.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.ticker import FuncFormatter

from .. import compute, hardware, models, validate
from ..plotting import PALETTE, new_figure, reset_axes, si_format
from ..widgets import Explorer, choice_slider, dropdown, pow2_slider, slider

__all__ = ["DEFAULT_ROOFLINE_GPUS", "PRECISION_LABELS", "TOKEN_CHOICES_T", "time_to_train_explorer", "OPS",
           "RooflinePoint", "roofline_point", "OP_INPUTS", "roofline_explorer", "roofline_figure",
           "gpu_catalog_figure", "precision_figure", "time_to_train_figure", "training_compute_figure",
           "attention_intensity_figure", "match_catalog_gpu"]

DEFAULT_ROOFLINE_GPUS = ("A100-80G-SXM", "H100-SXM", "H200-SXM", "B200", "MI300X", "L40S")
PRECISION_LABELS = {"fp64": "FP64 (matrix)", "tf32": "TF32", "bf16": "BF16/FP16", "fp8": "FP8"}
_INTENSITY_GRID = np.logspace(-1, 4, 200)  # FLOP/byte
#: token slider stops (T); they include every preset's published training tokens (0.3, 0.45, 2, 14.8, 15, 15.6),
#: to which the slider snaps when the learner picks another model
TOKEN_CHOICES_T = (0.1, 0.2, 0.3, 0.45, 0.5, 1.0, 1.4, 2.0, 3.0, 5.0, 8.0, 10.0, 14.8, 15.0, 15.6, 20.0, 30.0)


def _matrix_peak(g, precision: str) -> float:
    """The dense peak a GEMM sees on catalog GPU ``g``: the datasheet's Tensor Core / matrix figure; for
    FP64 that is the FP64 Tensor Core peak where one exists (DGEMM runs on it: H100 SXM 66.9 vs
    33.5 TFLOP/s vector, H100 whitepaper), else the vector FP64 peak."""
    if precision == "fp64" and g.fp64_tensor_tflops > 0:
        return g.fp64_tensor_tflops
    return g.peak_tflops(precision)


def _gpu_names_with(precision: str) -> list[str]:
    return [n for n in hardware.gpus() if getattr(hardware.gpu(n), f"{'bf16' if precision == 'fp16' else precision}_tflops") > 0]


# ============================================================================================
# time to train / GPUs for a deadline
# ============================================================================================
def _plan(model, tokens_t, gpu, mfu, n_gpus, deadline_days):
    return compute.plan_training(model, validate.positive("tokens_t", tokens_t) * 1e12, gpu, mfu, n_gpus,
                                 deadline_days)


def _draw_plan(fig, plan: compute.TrainingPlan, values, cache: dict) -> None:
    ax = fig.axes[0]
    lo, hi = compute.PUBLISHED_MFU_RANGE
    band_hi = compute.time_to_train_days(plan.total_flops, plan.n_grid, plan.peak_tflops, lo)
    band_lo = compute.time_to_train_days(plan.total_flops, plan.n_grid, plan.peak_tflops, hi)
    if "line" not in cache:
        reset_axes(ax)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        cache["band"] = ax.fill_between(plan.n_grid, band_lo, band_hi, color=PALETTE[0], alpha=0.12,
                                        label=f"published large-run MFU {lo:.0%}-{hi:.0%}")
        (cache["line"],) = ax.plot(plan.n_grid, plan.days_grid, color=PALETTE[0], lw=2, label="days at chosen MFU")
        cache["deadline"] = ax.axhline(plan.deadline_days, color=PALETTE[3], ls="--", lw=1.2, label="deadline")
        cache["need"] = ax.axvline(plan.gpus_for_deadline, color=PALETTE[3], ls=":", lw=1.2,
                                   label="GPUs needed for deadline")
        (cache["point"],) = ax.plot([plan.n_gpus], [plan.days], "o", color=PALETTE[1], ms=9, label="chosen GPU count")
        ax.set_xlabel("number of GPUs")
        ax.xaxis.set_major_formatter(_COUNT)
        ax.set_ylabel("time to train (days)")
        ax.set_xlim(plan.n_grid[0], plan.n_grid[-1])
        ax.legend(loc="upper right")
    else:
        cache["band"].remove()
        cache["band"] = ax.fill_between(plan.n_grid, band_lo, band_hi, color=PALETTE[0], alpha=0.12)
        cache["line"].set_data(plan.n_grid, plan.days_grid)
        cache["deadline"].set_ydata([plan.deadline_days, plan.deadline_days])
        cache["need"].set_xdata([plan.gpus_for_deadline, plan.gpus_for_deadline])
        cache["point"].set_data([plan.n_gpus], [plan.days])
    # the chosen-MFU line leaves the published-MFU band at the MFU slider's ends (5 %, 80 %): keep it in view
    days = np.asarray(plan.days_grid, dtype=float)
    ymin = max(min(float(band_lo.min()), float(days.min()), plan.deadline_days) / 2, 1e-3)
    ymax = max(float(band_hi.max()), float(days.max()), plan.deadline_days) * 2
    ax.set_ylim(ymin, ymax)
    n_label = f"N_active {plan.active_params / 1e9:.0f}B of {plan.params / 1e9:.0f}B" if plan.is_moe else "6ND"
    ax.set_title(f"{plan.model}: {plan.total_flops:.2e} FLOPs on {plan.gpu} ({n_label})")
    # layout: solved once by the Explorer at its first render (labutil.widgets), not here


#: GPU counts on the log-2 axis as plain numbers (1,024 rather than 2^10): ops readers think in 1,024 and 16,384
_COUNT = FuncFormatter(lambda v, _: f"{v:,.0f}")


def _plan_summary(plan: compute.TrainingPlan, values) -> str:
    if plan.is_moe:
        n_txt = (f"MoE：总参数 {plan.params / 1e9:.1f}B，<b>激活参数 N = {plan.active_params / 1e9:.1f}B</b>"
                 f"（每个 token 只经过 top-k 专家，6·N·D 用激活参数；显存与检查点仍按总参数）")
        chin = "Chinchilla 的每参数 20 token 是稠密模型的结论，不直接适用于 MoE"
    else:
        n_txt = f"参数量 N = {plan.params / 1e9:.1f}B"
        chin = f"Chinchilla 最优约 {plan.chinchilla_tokens / 1e12:.2f}T"
    lo, hi = compute.PUBLISHED_MFU_RANGE
    if plan.mfu > hi:
        mfu_note = (f"<br><span style='color:#b00'>⚠ MFU {plan.mfu:.0%} 高于公开大规模训练报告过的最高值 {hi:.0%}"
                    f"（MegaScale）：按它排期会低估天数。</span>")
    elif plan.mfu < lo:
        mfu_note = (f"<br><span style='color:#555'>MFU {plan.mfu:.0%} 低于公开大规模训练的下沿 {lo:.0%}："
                    "网络或并行布局有问题的集群会落在这里（第 8、14 章）。</span>")
    else:
        mfu_note = ""
    return (f"{n_txt}，训练 token D = {plan.tokens / 1e12:.2f}T "
            f"（{chin}）；总算力 6·N·D = {plan.total_flops:.3g} FLOPs。<br>"
            f"{plan.n_gpus:,} 张 {plan.gpu}（峰值 {plan.peak_tflops:g} TFLOP/s，MFU {plan.mfu:.0%}）需 "
            f"<b>{plan.days:,.1f} 天</b>（{plan.gpu_hours / 1e6:,.2f}M GPU·小时）；"
            f"要在 {plan.deadline_days:g} 天内完成至少需 <b>{plan.gpus_for_deadline:,} 张</b>。" + mfu_note)


def time_to_train_explorer(model: str = "llama3-70b", tokens_t: float = 15.0, gpu: str = "H100-SXM",
                           mfu: float = 0.40, n_gpus: int = 8192, deadline_days: float = 60.0) -> Explorer:
    """Explorer: days to train a preset on N catalog GPUs, and GPUs needed for a deadline."""
    models.transformer(model)
    hardware.gpu(gpu)
    controls = {
        "model": dropdown("模型", models.transformer_names(), model),
        "tokens_t": choice_slider("训练 token (T)", sorted(set(TOKEN_CHOICES_T) | {tokens_t}), tokens_t),
        "gpu": dropdown("GPU", _gpu_names_with("bf16"), hardware.gpu(gpu).name),
        "mfu": slider("MFU", mfu, 0.05, 0.80, 0.01, fmt=".2f"),
        "n_gpus": pow2_slider("GPU 数量", n_gpus, 8, 131072),
        "deadline_days": slider("期限 (天)", deadline_days, 1, 365, 1, fmt=".0f"),
    }
    def _published_tokens(change):
        # a preset brings its published training tokens (GPT-3 on 0.3T, not the previous model's 15T);
        # the learner can still move the token slider afterwards
        t = models.transformer(change["new"]).train_tokens / 1e12
        stop = [o for o in controls["tokens_t"].options if t > 0 and abs(o - t) <= 1e-9 * t]
        if stop:
            controls["tokens_t"].value = stop[0]

    controls["model"].observe(_published_tokens, names="value")
    cache: dict = {}
    return Explorer(controls, compute=_plan, draw=lambda fig, r, v: _draw_plan(fig, r, v, cache),
                    summary=_plan_summary, title="训练时间 / 期限所需 GPU 数（6·N·D）", figsize=(8.0, 4.5))


# ============================================================================================
# roofline explorer
# ============================================================================================
OPS = ("gemm", "attention-flash", "attention-naive", "attention-decode")


@dataclass(frozen=True)
class RooflinePoint:
    """An operation placed on a GPU's roofline."""

    gpu: str
    precision: str
    op: str
    peak_tflops: float
    mem_gbs: float
    ridge_flop_per_byte: float
    intensity_flop_per_byte: float
    attainable_tflops: float
    bound: str  # "memory" or "compute"
    flops: float
    bytes: float
    min_time_s: float  # lower bound: max(flops / peak, bytes / bandwidth)
    intensity_grid: np.ndarray
    roof_grid: np.ndarray


def roofline_point(gpu: str, precision: str, op: str, m: int = 4096, n: int = 4096, k: int = 4096,
                   seq_len: int = 4096, head_dim: int = 128, queries_per_kv: int = 1) -> RooflinePoint:
    """Place one operation on the roofline of a catalog GPU at ``precision``."""
    g = hardware.gpu(gpu)
    validate.choice("op", op, OPS)
    peak = _matrix_peak(g, precision)
    bpe = compute.bytes_per_element("bf16" if precision == "fp16" else precision)
    if op == "gemm":
        flops = compute.gemm_flops(m, n, k)
        nbytes = compute.gemm_bytes(m, n, k, bpe)
    else:
        kind = op.split("-", 1)[1]
        flops = compute.attention_flops(seq_len, head_dim, kind)
        nbytes = compute.attention_bytes(seq_len, head_dim, bpe, kind, queries_per_kv)
    intensity = flops / nbytes
    attainable = compute.roofline_tflops(intensity, peak, g.hbm_gbs)
    ridge = compute.ridge_intensity(peak, g.hbm_gbs)
    min_time = max(flops / (peak * 1e12), nbytes / (g.hbm_gbs * 1e9))
    return RooflinePoint(gpu=g.name, precision=precision, op=op, peak_tflops=peak, mem_gbs=g.hbm_gbs,
                         ridge_flop_per_byte=ridge, intensity_flop_per_byte=intensity,
                         attainable_tflops=attainable, bound="memory" if intensity < ridge else "compute",
                         flops=flops, bytes=nbytes, min_time_s=min_time, intensity_grid=_INTENSITY_GRID,
                         roof_grid=compute.roofline_tflops(_INTENSITY_GRID, peak, g.hbm_gbs))


def _draw_roofline(fig, r: RooflinePoint, values, cache: dict) -> None:
    ax = fig.axes[0]
    if "roof" not in cache:
        reset_axes(ax)
        ax.set_xscale("log")
        ax.set_yscale("log")
        (cache["roof"],) = ax.plot(r.intensity_grid, r.roof_grid, color=PALETTE[0], lw=2, label="roofline")
        cache["ridge"] = ax.axvline(r.ridge_flop_per_byte, color="0.5", ls=":", lw=1, label="ridge point")
        (cache["point"],) = ax.plot([r.intensity_flop_per_byte], [r.attainable_tflops], "o", color=PALETTE[3],
                                    ms=10, label="operation")
        cache["text"] = ax.annotate("", (r.intensity_flop_per_byte, r.attainable_tflops), xytext=(8, -14),
                                    textcoords="offset points", fontsize=9,
                                    # a white box: the label often sits across the ridge line or the roof
                                    bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="none", alpha=0.85))
        cache["text"].set_in_layout(False)  # the label moves; it must not shrink the frozen axes
        ax.set_xlabel("arithmetic intensity (FLOP/byte)")
        ax.set_ylabel("attainable throughput (TFLOP/s)")
        ax.set_xlim(_INTENSITY_GRID[0], _INTENSITY_GRID[-1])
        ax.legend(loc="lower right")
    else:
        cache["roof"].set_ydata(r.roof_grid)
        cache["ridge"].set_xdata([r.ridge_flop_per_byte, r.ridge_flop_per_byte])
        cache["point"].set_data([r.intensity_flop_per_byte], [r.attainable_tflops])
        cache["text"].xy = (r.intensity_flop_per_byte, r.attainable_tflops)
    cache["text"].set_text(f"{_num(r.intensity_flop_per_byte)} FLOP/B -> {_num(r.attainable_tflops)} TFLOP/s")
    right_half = r.intensity_flop_per_byte > 100.0  # keep the label inside the axes
    cache["text"].set_horizontalalignment("right" if right_half else "left")
    cache["text"].set_position((-8, -14) if right_half else (8, -14))
    ax.set_ylim(r.roof_grid[0] / 2, r.peak_tflops * 3)
    ax.set_title(f"{r.gpu} {PRECISION_LABELS.get(r.precision, r.precision)}: "
                 f"peak {r.peak_tflops:g} TFLOP/s, HBM {r.mem_gbs:g} GB/s, ridge {r.ridge_flop_per_byte:.0f} FLOP/B")


#: the controls each operation reads (roofline_point); the others are greyed out and named in the summary
OP_INPUTS = {"gemm": ("m", "n", "k"), "attention-flash": ("seq_len", "head_dim"),
             "attention-naive": ("seq_len", "head_dim"), "attention-decode": ("seq_len", "head_dim", "queries_per_kv")}
_SHAPE_CONTROLS = ("m", "n", "k", "seq_len", "head_dim", "queries_per_kv")


def _inputs_note(values) -> str:
    """Which shape controls the chosen operation reads, and why the others do not move the point."""
    v = values
    used = OP_INPUTS[v["op"]]
    if v["op"] == "gemm":
        return (f"GEMM {v['m']}×{v['n']}×{v['k']} 的强度只取决于 m、n、k；序列长度 s = {v['seq_len']}、"
                f"head_dim = {v['head_dim']}、GQA 组大小 {v['queries_per_kv']} 只作用于注意力算子（选 attention-* 后生效）。")
    note = (f"注意力（s = {v['seq_len']}，head_dim = {v['head_dim']}）不读取 GEMM 的 m×n×k = "
            f"{v['m']}×{v['n']}×{v['k']}")
    if "queries_per_kv" in used:
        return note + f"；decode 时每份 K/V 缓存由 GQA 组内 {v['queries_per_kv']} 个查询头共享读取，组越大强度越高。"
    if v["op"] == "attention-flash":
        note += "；flash 的强度 = s / 每元素字节数，与 head_dim 无关（head_dim 只改变计算量和访存量）"
    return note + (f"；GQA 组大小 {v['queries_per_kv']} 在本模型中只改变 decode 的访存（K/V 缓存被共享读取），"
                   "prefill 的强度由 s 决定。")


def _num(x: float) -> str:
    """3 significant digits without scientific notation (1,365 not 1.37e+03; 15.9; 0.333)."""
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _roofline_summary(r: RooflinePoint, values) -> str:
    bound = "访存受限（memory-bound）" if r.bound == "memory" else "算力受限（compute-bound）"
    return (f"算术强度 {_num(r.intensity_flop_per_byte)} FLOP/byte，拐点 {r.ridge_flop_per_byte:,.0f} FLOP/byte → "
            f"<b>{bound}</b>；屋顶线上限 {_num(r.attainable_tflops)} TFLOP/s（峰值的 "
            f"{r.attainable_tflops / r.peak_tflops:.1%}）。计算量 {si_format(r.flops, 'FLOP')}，"
            f"访存 {si_format(r.bytes, 'B')}，最短耗时 {r.min_time_s * 1e6:,.1f} µs。<br>"
            f"<span style='color:#555'>{_inputs_note(values)}</span>")


def _try_peak(gpu: str, precision: str):
    """The catalog peak of ``gpu`` in ``precision``, or None when the GPU lacks that precision."""
    try:
        return hardware.gpu(gpu).peak_tflops(precision)
    except ValueError:
        return None


def roofline_explorer(gpu: str = "H100-SXM", precision: str = "bf16", op: str = "gemm", m: int = 4096,
                      n: int = 4096, k: int = 4096, seq_len: int = 4096, head_dim: int = 128,
                      queries_per_kv: int = 1) -> Explorer:
    """Explorer: a GEMM or an attention kernel placed on a catalog GPU's roofline."""
    hardware.gpu(gpu)
    controls = {
        "gpu": dropdown("GPU", hardware.gpus(), hardware.gpu(gpu).name),
        "precision": dropdown("精度", ["bf16", "fp8", "tf32", "fp64"], precision),
        "op": dropdown("算子", list(OPS), op),
        "m": pow2_slider("GEMM m (tokens)", m, 1, 65536),
        "n": pow2_slider("GEMM n", n, 1, 65536),
        "k": pow2_slider("GEMM k", k, 1, 65536),
        "seq_len": pow2_slider("序列长度 s", seq_len, 128, 131072),
        "head_dim": choice_slider("head_dim", [64, 128, 256], head_dim),
        "queries_per_kv": choice_slider("GQA 组大小", [1, 2, 4, 8, 16], queries_per_kv),
    }
    all_precisions = list(controls["precision"].options)

    def _supported(change):
        # offer only the precisions the chosen GPU has (no fp8 on an A100): never an impossible setting
        g = hardware.gpu(change["new"])
        opts = []
        for p in all_precisions:
            try:
                g.peak_tflops(p)
            except ValueError:
                continue
            opts.append(p)
        w = controls["precision"]
        keep = w.value if w.value in opts else opts[0]
        if list(w.options) != opts:
            w.options = opts
        w.value = keep

    controls["gpu"].observe(_supported, names="value")

    def _grey_unused(change):
        # grey out the shape controls the chosen operation does not read (the summary says why)
        for key in _SHAPE_CONTROLS:
            controls[key].disabled = key not in OP_INPUTS[change["new"]]

    controls["op"].observe(_grey_unused, names="value")
    _grey_unused({"new": controls["op"].value})
    if precision not in all_precisions or _try_peak(gpu, precision) is None:
        raise ValueError(f"control 'precision' cannot be set to {precision!r} on {gpu}; allowed: "
                         f"{[p for p in all_precisions if _try_peak(gpu, p) is not None]}")
    _supported({"new": controls["gpu"].value})
    cache: dict = {}
    return Explorer(controls, compute=roofline_point, draw=lambda fig, r, v: _draw_roofline(fig, r, v, cache),
                    summary=_roofline_summary, title="屋顶线模型（Roofline）：算子落在哪里？", figsize=(8.0, 4.8))


# ============================================================================================
# figures
# ============================================================================================
def roofline_figure(gpus=DEFAULT_ROOFLINE_GPUS, precision: str = "bf16", ops: dict | None = None):
    """Rooflines of several catalog GPUs, with typical operations marked by their intensity.

    ops: label -> intensity (FLOP/byte); default: BF16 GEMV, decode attention, a 4096³ GEMM and
    fused attention at s = 4096 (computed with labutil.compute).
    """
    if ops is None:
        bpe = compute.bytes_per_element("bf16" if precision == "fp16" else precision)
        ops = {
            "decode attention (s=4096)": compute.attention_intensity(4096, 128, bpe, "decode"),
            "GEMV 1x8192x8192": compute.gemm_intensity(1, 8192, 8192, bpe),
            "GEMM 16x8192x8192": compute.gemm_intensity(16, 8192, 8192, bpe),
            "flash attention (s=4096)": compute.attention_intensity(4096, 128, bpe, "flash"),
            "GEMM 4096^3": compute.gemm_intensity(4096, 4096, 4096, bpe),
        }
    fig, ax = new_figure(figsize=(11.0, 5.0))
    ax.set_xscale("log")
    ax.set_yscale("log")
    for i, name in enumerate(gpus):
        g = hardware.gpu(name)
        peak = _matrix_peak(g, precision)
        roof = compute.roofline_tflops(_INTENSITY_GRID, peak, g.hbm_gbs)
        ridge = compute.ridge_intensity(peak, g.hbm_gbs)
        ax.plot(_INTENSITY_GRID, roof, color=PALETTE[i % len(PALETTE)], lw=2,
                label=f"{g.name} (ridge {ridge:.0f} FLOP/B)")
        ax.plot([ridge], [peak], "o", color=PALETTE[i % len(PALETTE)], ms=5)
    ymin = compute.roofline_tflops(_INTENSITY_GRID[0], 1e9, min(hardware.gpu(n).hbm_gbs for n in gpus)) / 2
    gpu_legend = ax.legend(loc="upper left", fontsize=8)
    # Operations: a dotted line each, a short number tag at the bottom of the axes (below every roofline),
    # and the full names in a legend outside the axes, so no text sits on a line. Ops whose intensities
    # are within 15 % of each other share one tag position ("1,2").
    handles, groups = [], []
    for k, (label, x) in enumerate(sorted(ops.items(), key=lambda kv: kv[1]), start=1):
        (h,) = ax.plot([x, x], [ymin, 1e9], color="0.4", ls=":", lw=1, label=f"[{k}] {label}: I = {x:,.1f} FLOP/B")
        handles.append(h)
        if groups and x <= groups[-1][0] * 1.15:
            groups[-1][1].append(k)
        else:
            groups.append((x, [k]))
    for x, ks in groups:
        ax.annotate(",".join(str(k) for k in ks), (x, 0.02), xycoords=("data", "axes fraction"), xytext=(3, 0),
                    textcoords="offset points", fontsize=8, color="0.2", ha="left", va="bottom",
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.9))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False,
              title="operations (dotted lines)", title_fontsize=8)
    ax.add_artist(gpu_legend)
    ax.set_ylim(ymin, max(_matrix_peak(hardware.gpu(n), precision) for n in gpus) * 2.5)
    ax.set_xlim(_INTENSITY_GRID[0], _INTENSITY_GRID[-1])
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel(f"attainable {PRECISION_LABELS.get(precision, precision)} throughput (TFLOP/s)")
    ax.set_title("Roofline of catalog GPUs (dense tensor peak, HBM bandwidth)")
    return fig


_METRICS = {
    "bf16_tflops": "BF16 dense (TFLOP/s)",
    "fp8_tflops": "FP8 dense (TFLOP/s)",
    "hbm_gb": "memory capacity (GB)",
    "hbm_gbs": "memory bandwidth (GB/s)",
    "nvlink_gbs": "GPU-GPU link, bidirectional (GB/s)",
    "tdp_w": "TDP (W)",
}


def gpu_catalog_figure(names=None, metrics=("bf16_tflops", "hbm_gb", "hbm_gbs", "nvlink_gbs")):
    """Bar charts comparing catalog GPUs on a few datasheet metrics (one panel per metric)."""
    names = list(names or hardware.gpus())
    for m in metrics:
        validate.choice("metric", m, tuple(_METRICS))
    ncols = 2
    nrows = int(np.ceil(len(metrics) / ncols))
    fig, axes = new_figure(nrows, ncols, figsize=(10.0, 3.2 * nrows))
    axes = np.atleast_1d(axes).ravel()
    x = np.arange(len(names))
    for ax, metric in zip(axes, metrics):
        vals = [getattr(hardware.gpu(n), metric) for n in names]
        ax.bar(x, vals, color=[PALETTE[i % len(PALETTE)] for i in range(len(names))])
        ax.set_xticks(x, names, rotation=45, ha="right", fontsize=8)
        ax.set_ylabel(_METRICS[metric])
        for xi, v in zip(x, vals):
            ax.text(xi, v, f"{v:,.0f}", ha="center", va="bottom", fontsize=7)
        ax.set_ylim(0, max(vals) * 1.18 if max(vals) > 0 else 1)
    for ax in axes[len(metrics):]:
        ax.set_visible(False)
    fig.suptitle("Catalog GPUs: datasheet metrics (0 = not available / not published)")
    return fig


def precision_figure(names=("A100-80G-SXM", "H100-SXM", "B200", "MI300X", "L40S")):
    """Grouped bars: dense peak TFLOP/s per precision (FP64, TF32, BF16, FP8), log scale."""
    precisions = ("fp64", "tf32", "bf16", "fp8")
    fig, ax = new_figure(figsize=(9.0, 4.5))
    x = np.arange(len(names))
    w = 0.2
    for i, p in enumerate(precisions):
        vals = []
        for n in names:
            g = hardware.gpu(n)
            vals.append(_matrix_peak(g, p) if getattr(g, f"{p}_tflops") > 0 else 0.0)
        vals = np.asarray(vals, dtype=float)
        shown = np.where(vals > 0, vals, np.nan)
        ax.bar(x + (i - 1.5) * w, shown, w, color=PALETTE[i], label=PRECISION_LABELS[p])
    ax.set_yscale("log")
    ax.set_xticks(x, [hardware.gpu(n).name for n in names])
    ax.set_ylabel("dense peak (TFLOP/s, log scale)")
    ax.set_title("Peak throughput by precision (FP64: tensor/matrix peak where one exists; missing bar = unsupported)")
    ax.legend(ncols=4, loc="upper left")
    ax.set_ylim(0.5, 2e4)
    return fig


def time_to_train_figure(model_names=("llama2-7b", "llama2-70b", "gpt3-175b", "llama3-70b", "llama3-405b"),
                         gpu: str = "H100-SXM", mfu: float = 0.4, deadline_days: float | None = 90.0):
    """Days to train each preset on its published token count vs GPU count (6·N·D at ``mfu``)."""
    fig, ax = new_figure(figsize=(8.5, 4.8))
    g = hardware.gpu(gpu)
    grid = 2 ** np.arange(3, 18)
    for i, name in enumerate(model_names):
        spec = models.transformer(name)
        if spec.train_tokens <= 0:
            raise ValueError(f"model {name!r} has no published train_tokens; pass another model")
        total = compute.train_flops(compute.flop_params(spec), spec.train_tokens)
        days = compute.time_to_train_days(total, grid, g.bf16_tflops, mfu)
        ax.plot(grid, days, "-o", ms=3, color=PALETTE[i % len(PALETTE)],
                label=f"{name} ({spec.train_tokens / 1e12:g}T tokens, {total:.1e} FLOPs)")
    if deadline_days:
        ax.axhline(deadline_days, color="0.3", ls="--", lw=1, label=f"{deadline_days:g}-day deadline")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(_COUNT)
    ax.set_yscale("log")
    ax.set_xlabel("number of GPUs")
    ax.set_ylabel("time to train (days)")
    ax.set_title(f"Time to train on {g.name} at MFU {mfu:.0%} (6ND)")
    ax.legend(fontsize=8, loc="upper right")
    return fig


def training_compute_figure(model_names=("llama2-7b", "llama2-13b", "llama2-70b", "gpt3-175b", "llama3-8b",
                                         "llama3-70b", "llama3-405b")):
    """Training compute 6·N·D of presets: published tokens vs Chinchilla-optimal 20 tokens/param."""
    fig, ax = new_figure(figsize=(9.0, 4.5))
    x = np.arange(len(model_names))
    pub, chin = [], []
    for name in model_names:
        s = models.transformer(name)
        n = compute.flop_params(s)          # active parameters of an MoE (6·N·D), all of a dense model
        pub.append(compute.train_flops(n, s.train_tokens) if s.train_tokens > 0 else np.nan)
        chin.append(compute.train_flops(n, compute.chinchilla_tokens(s.params())))
    ax.bar(x - 0.2, pub, 0.4, color=PALETTE[0], label="published tokens")
    ax.bar(x + 0.2, chin, 0.4, color=PALETTE[1], label="Chinchilla-optimal (20 tokens/param)")
    ax.set_yscale("log")
    ax.set_xticks(x, model_names, rotation=20)
    ax.set_ylabel("training compute 6ND (FLOPs, log scale)")
    ax.set_title("Training compute of model presets")
    ax.legend(loc="upper left")
    return fig


def attention_intensity_figure(gpu: str = "H100-SXM", head_dim: int = 128, precision: str = "bf16"):
    """Attention intensity vs sequence length (fused, naive, decode) against the GPU's ridge point."""
    g = hardware.gpu(gpu)
    bpe = compute.bytes_per_element("bf16" if precision == "fp16" else precision)
    s = 2.0 ** np.arange(7, 18)
    fig, ax = new_figure(figsize=(8.0, 4.5))
    for i, (kind, label) in enumerate((("flash", "fused (FlashAttention) prefill"), ("naive", "naive prefill (S, P in HBM)"),
                                       ("decode", "decode, no GQA"))):
        ax.plot(s, compute.attention_intensity(s, head_dim, bpe, kind), "-o", ms=3, color=PALETTE[i], label=label)
    ax.plot(s, compute.attention_intensity(s, head_dim, bpe, "decode", 8), "--", color=PALETTE[2],
            label="decode, GQA group 8")
    ridge = compute.ridge_intensity(g.peak_tflops(precision), g.hbm_gbs)
    ax.axhline(ridge, color=PALETTE[3], ls=":", lw=1.5, label=f"{g.name} ridge ({ridge:.0f} FLOP/B)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length (tokens)")
    ax.set_ylabel("arithmetic intensity (FLOP/byte)")
    ax.set_title(f"Attention intensity per head (head_dim {head_dim}, {PRECISION_LABELS.get(precision, precision)})")
    ax.legend(fontsize=8, loc="upper left")
    return fig


# ============================================================================================
# from a tool's output to the catalog
# ============================================================================================
def match_catalog_gpu(product_name: str) -> hardware.GPU:
    """The catalog GPU for an ``nvidia-smi`` product name, e.g. 'NVIDIA H100 80GB HBM3' -> H100-SXM.

    Matches the model token (H100, A100, H200, L40S, ...) and picks the PCIe variant only when the
    product name says PCIe (NVIDIA names its SXM parts 'H100 80GB HBM3', 'A100-SXM4-80GB').
    Raises KeyError listing the catalog names when nothing matches.
    """
    if not isinstance(product_name, str) or not product_name.strip():
        raise KeyError(f"product_name must be a non-empty string; got {product_name!r}")
    tokens = set(product_name.upper().replace("-", " ").replace("_", " ").split())
    pcie = "PCIE" in tokens
    hits = []
    for name in hardware.gpus():
        g = hardware.gpu(name)
        base = name.upper().split("-")[0]
        if base in tokens:
            hits.append(g)
    if not hits:
        raise validate.unknown_name("GPU (from nvidia-smi name)", product_name, hardware.gpus())
    preferred = [g for g in hits if ("PCIE" in g.name.upper()) == pcie]
    return (preferred or hits)[0]
