"""Explorers and figures for training memory (ch07 训练显存剖析).

Explorer: ``memory_explorer()`` — model preset, data-parallel size, ZeRO stage, precision,
optimizer, micro-batch, sequence length, tensor parallelism, sequence parallelism, recompute and
the GPU whose HBM line is drawn -> stacked bars of weights / gradients / optimizer states /
activations per GPU for ZeRO stages 0-3 (the chosen stage highlighted).

Figures: ``zero_figure`` (ZeRO paper Figure 1 reproduced), ``model_states_figure`` (weights
alone and 16 B/param per preset against one GPU's HBM), ``activation_figure`` (activations vs
sequence length with and without SP / recompute), ``footprint_7b_figure`` (a 7B model's whole
training footprint, step by step).

The explorer creates its bars once and only changes their heights (no ``ax.clear()``), and
freezes the layout after the first draw, so an update stays well under 50 ms
(benchmarks/bench_memory_explorers.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.ticker import FuncFormatter

from .. import hardware, memory, models, steptime
from ..parallel import Layout
from ..plotting import PALETTE, new_figure, reset_axes
from ..widgets import Explorer, dropdown, int_slider, pow2_slider, toggle

__all__ = ["COMPONENTS", "COMPONENT_LABELS", "COLORS", "STAGE_LABELS", "MemoryStudy", "memory_study",
           "memory_explorer", "zero_figure", "model_states_figure", "activation_figure", "footprint_steps",
           "footprint_7b_figure", "NVIDIA_SMI_TRAINING_SAMPLE", "smi_vs_model"]

COMPONENTS = ("weights_gb", "grads_gb", "optimizer_gb", "activations_gb")
COMPONENT_LABELS = ("weights", "gradients", "optimizer states", "activations")
COLORS = (PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[4])
STAGE_LABELS = ("ZeRO-0\n(DDP)", "ZeRO-1\n(P_os)", "ZeRO-2\n(P_os+g)", "ZeRO-3\n(P_os+g+p)")


@dataclass(frozen=True)
class MemoryStudy:
    """Per-GPU breakdown (GB) for ZeRO stages 0..3 at one setting; rows = stages, cols = COMPONENTS."""

    model: str
    params: float
    table_gb: np.ndarray          # shape (4, 4)
    totals_gb: np.ndarray         # shape (4,)
    zero_stage: int
    hbm_gb: float
    gpu: str

    @property
    def chosen(self) -> dict:
        return dict(zip(COMPONENTS, self.table_gb[self.zero_stage]), total_gb=float(self.totals_gb[self.zero_stage]))

    @property
    def fits(self) -> bool:
        return bool(self.totals_gb[self.zero_stage] <= self.hbm_gb)


def memory_study(model="llama2-7b", dp=8, zero_stage=0, precision="bf16", optimizer="adam", micro_batch=1,
                 seq_len=4096, tp=1, sp=False, recompute="none", gpu="H100-SXM") -> MemoryStudy:
    """Model of the explorer: :func:`labutil.memory.training_memory_gb` for ZeRO stages 0..3."""
    spec = models.transformer(model)
    g = hardware.gpu(gpu)
    rows, totals = [], []
    for z in range(4):
        lay = Layout(dp=dp, tp=tp, pp=1, micro_batch=micro_batch, global_batch=dp * micro_batch, zero_stage=z,
                     sp=bool(sp), recompute=recompute)
        mem = memory.training_memory_gb(spec, lay, optimizer=optimizer, precision=precision, seq_len=seq_len)
        rows.append([mem.weights_gb, mem.grads_gb, mem.optimizer_gb, mem.activations_gb + mem.logits_gb])
        totals.append(mem.total_gb)
    chosen = Layout(dp=dp, tp=tp, pp=1, micro_batch=micro_batch, global_batch=dp * micro_batch,
                    zero_stage=zero_stage, sp=bool(sp), recompute=recompute)
    return MemoryStudy(model, float(spec.params()), np.array(rows), np.array(totals), chosen.zero_stage,
                       float(g.hbm_gb), g.name)


def _draw_study(fig, st: MemoryStudy, values, cache: dict) -> None:
    ax = fig.axes[0]
    x = np.arange(4)
    if "bars" not in cache:
        reset_axes(ax)
        cache["bars"] = []
        bottom = np.zeros(4)
        for j, (lab, col) in enumerate(zip(COMPONENT_LABELS, COLORS)):
            bars = ax.bar(x, st.table_gb[:, j], 0.6, bottom=bottom, color=col, label=lab)
            cache["bars"].append(bars)
            bottom = bottom + st.table_gb[:, j]
        cache["hbm"] = ax.axhline(st.hbm_gb, color=PALETTE[3], ls="--", lw=1.5, label="GPU HBM capacity")
        cache["texts"] = [ax.text(i, 0, "", ha="center", va="bottom", fontsize=9) for i in x]
        ax.set_xticks(x, STAGE_LABELS)
        ax.set_ylabel("memory per GPU (GB)")
        from matplotlib.patches import Patch

        handles, _ = ax.get_legend_handles_labels()
        handles.append(Patch(facecolor="none", edgecolor="black", linewidth=2.0, label="ZeRO stage chosen"))
        # outside the axes: with activations dominating (long s, big b) all four bars reach the top
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
        cache["title"] = ax.set_title(_title(st, values), fontsize=9)
        # layout: solved by the Explorer at its first render and again when the y tick labels
        # change width (labutil.widgets._layout_key), e.g. 80 GB -> 11,453 GB (deepseek-v3)
    bottom = np.zeros(4)
    for j, bars in enumerate(cache["bars"]):
        for i, rect in enumerate(bars):
            rect.set_height(st.table_gb[i, j])
            rect.set_y(bottom[i])
            rect.set_edgecolor("black" if i == st.zero_stage else "none")
            rect.set_linewidth(2.0 if i == st.zero_stage else 0.0)
        bottom = bottom + st.table_gb[:, j]
    for i, t in enumerate(cache["texts"]):
        t.set_position((i, st.totals_gb[i]))
        t.set_text(f"{st.totals_gb[i]:.1f} GB")
    cache["hbm"].set_ydata([st.hbm_gb, st.hbm_gb])
    ax.set_ylim(0, 1.15 * max(float(st.totals_gb.max()), st.hbm_gb))
    cache["title"].set_text(_title(st, values))


def _title(st: MemoryStudy, values) -> str:
    return (f"{st.model}: {st.params / 1e9:.1f}B params, dp={values['dp']}, tp={values['tp']}, "
            f"b={values['micro_batch']}, s={values['seq_len']}, recompute={values['recompute']}"
            f"{', SP' if values['sp'] else ''}, {values['precision']}/{values['optimizer']} "
            f"(dashed: {st.gpu} {st.hbm_gb:.0f} GB)")


def _summary(st: MemoryStudy, values) -> str:
    c = st.chosen
    verdict = "放得下 ✓" if st.fits else "放不下 ✗"
    usable = (1 - steptime.DEFAULT_RESERVE_FRAC) * st.hbm_gb   # what ch08's layout search lets a layout use
    if st.fits and c["total_gb"] > usable:
        verdict += (f"（但超过了留出 {steptime.DEFAULT_RESERVE_FRAC:.0%} 余量后的 {usable:.0f} GB：CUDA 上下文、NCCL 缓冲和碎片"
                    "不在这张图里，实际很可能 OOM）")
    note = ""
    if values.get("sp") and values.get("tp", 1) == 1:
        note = "<br><span style='color:#555'>序列并行只在 tp > 1 时起作用（它把张量并行切不到的激活再除以 tp）：tp = 1 时打开它什么也不变。</span>"
    return (f"ZeRO-{st.zero_stage}：权重 {c['weights_gb']:.1f} GB，梯度 {c['grads_gb']:.1f} GB，优化器状态 "
            f"{c['optimizer_gb']:.1f} GB，激活 {c['activations_gb']:.1f} GB，合计 <b>{c['total_gb']:.1f} GB</b>"
            f"；{st.gpu} 显存 {st.hbm_gb:.0f} GB：{verdict}" + note)


def memory_explorer(model: str = "llama2-7b") -> Explorer:
    """Stacked per-GPU memory bars for ZeRO stages 0-3 (see module docstring)."""
    cache: dict = {}
    controls = {
        "model": dropdown("模型", models.transformer_names(), model),
        "dp": pow2_slider("数据并行 dp", 8, 1, 1024),
        "zero_stage": int_slider("ZeRO stage", 0, 0, 3),
        "precision": dropdown("训练精度", list(memory.PRECISIONS), "bf16"),
        "optimizer": dropdown("优化器", list(memory.OPTIMIZERS), "adam"),
        "micro_batch": pow2_slider("micro-batch b", 1, 1, 16),
        "seq_len": pow2_slider("序列长度 s", 4096, 512, 32768),
        "tp": pow2_slider("张量并行 tp", 1, 1, 8),
        "sp": toggle("序列并行 SP", False),
        "recompute": dropdown("重计算", list(memory.RECOMPUTE), "none"),
        "gpu": dropdown("GPU", [n for n in hardware.gpus()], "H100-SXM"),
    }
    return Explorer(controls, compute=memory_study, draw=lambda f, r, v: _draw_study(f, r, v, cache),
                    summary=_summary, title="训练显存分解：权重 / 梯度 / 优化器状态 / 激活（每 GPU）", figsize=(9.0, 4.8))


# ============================================================================================
# Figures
# ============================================================================================
def zero_figure(params: float = 7.5e9, dp: int = 64, optimizer: str = "adam"):
    """ZeRO (Rajbhandari et al. 2020) Figure 1: per-GPU model states for stages 0-3."""
    rows = [memory.model_states_gb(params, dp, z, optimizer) for z in range(4)]
    fig, ax = new_figure(figsize=(7.5, 4.2))
    x = np.arange(4)
    bottom = np.zeros(4)
    for key, lab, col in zip(("weights_gb", "grads_gb", "optimizer_gb"), COMPONENT_LABELS, COLORS):
        h = np.array([getattr(r, key) for r in rows])
        ax.bar(x, h, 0.6, bottom=bottom, color=col, label=lab)
        bottom += h
    for i, r in enumerate(rows):
        ax.text(i, r.total_gb, f"{r.total_gb:.3g} GB", ha="center", va="bottom")
    ax.set_xticks(x, STAGE_LABELS)
    ax.set_ylabel("model states per GPU (GB)")
    ax.set_ylim(0, bottom.max() * 1.15)
    ax.set_title(f"Psi = {params / 1e9:g}B params, Nd = {dp}, K = {memory.optimizer_k(optimizer):g} (mixed-precision {optimizer})")
    ax.legend()
    return fig


def model_states_figure(names=("llama2-7b", "llama3-8b", "llama2-13b", "llama3-70b", "gpt3-175b", "llama3-405b"),
                        gpu: str = "H100-SXM"):
    """16-bit weights alone and the full mixed-precision Adam states (16 B/param) per preset, log scale."""
    g = hardware.gpu(gpu)
    params = np.array([models.transformer(n).params() for n in names], float)
    w = memory.fp16_weights_gb(params)
    full = memory.model_states_gb(params).total_gb
    fig, ax = new_figure(figsize=(8.0, 4.2))
    x = np.arange(len(names))
    ax.bar(x - 0.2, w, 0.4, color=COLORS[0], label="bf16 weights (2 B/param)")
    ax.bar(x + 0.2, full, 0.4, color=COLORS[2], label="weights + grads + Adam states (16 B/param)")
    ax.axhline(g.hbm_gb, color=PALETTE[3], ls="--", label=f"one {g.name} ({g.hbm_gb:g} GB)")
    for i, v in enumerate(w):
        ax.text(i - 0.2, v * 1.08, f"{v:.0f}", ha="center", fontsize=8)
    for i, v in enumerate(full):
        ax.text(i + 0.2, v * 1.08, f"{v:.0f}", ha="center", fontsize=8)
    ax.set_yscale("log")
    ax.set_xticks(x, names, rotation=15)
    ax.set_ylabel("memory (GB, log scale)")
    ax.set_ylim(5, full.max() * 4)
    ax.legend(loc="upper left", fontsize=8)
    return fig


def activation_figure(model: str = "gpt3-175b", tp: int = 8, micro_batch: int = 1):
    """Activation memory of all layers vs sequence length: TP baseline, +SP, +selective, full recompute."""
    spec = models.transformer(model)
    s = np.array([512, 1024, 2048, 4096, 8192, 16384, 32768])
    cases = [("tp only", False, "none"), ("tp + SP", True, "none"), ("tp + selective", False, "selective"),
             ("tp + SP + selective", True, "selective"), ("full recompute", False, "full")]
    fig, ax = new_figure(figsize=(7.8, 4.4))
    for (lab, sp, rc), col, ls in zip(cases, PALETTE, ("-", "-", "--", "-", ":")):
        ax.plot(s, memory.activation_gb(spec, micro_batch, s, tp, sp, rc), ls, color=col, marker="o", ms=3, label=lab)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))   # 4,096 tokens, not 2^12
    ax.set_yscale("log")
    ax.set_xlabel("sequence length s (tokens)")
    ax.set_ylabel("activations, all layers (GB per GPU)")
    ax.set_title(f"{model}, t = {tp}, b = {micro_batch} (Korthikanti et al. 2022, Table 2)")
    ax.legend(fontsize=8)
    return fig


def footprint_steps(model: str = "llama2-7b", micro_batch: int = 1, seq_len: int | None = None):
    """Per-GPU memory of a 7B-class model, one technique at a time (rows: label, GB dict)."""
    spec = models.transformer(model)
    s = spec.seq_len if seq_len is None else seq_len
    steps = [("1 GPU, no tricks", Layout(1, 1, 1, micro_batch, micro_batch)),
             ("selective recompute", Layout(1, 1, 1, micro_batch, micro_batch, recompute="selective")),
             ("full recompute", Layout(1, 1, 1, micro_batch, micro_batch, recompute="full")),
             ("+ ZeRO-1, dp=8", Layout(8, 1, 1, micro_batch, 8 * micro_batch, zero_stage=1, recompute="full")),
             ("+ ZeRO-3, dp=8", Layout(8, 1, 1, micro_batch, 8 * micro_batch, zero_stage=3, recompute="full"))]
    out = []
    for label, lay in steps:
        m = memory.training_memory_gb(spec, lay, seq_len=s)
        out.append((label, {"weights_gb": m.weights_gb, "grads_gb": m.grads_gb, "optimizer_gb": m.optimizer_gb,
                            "activations_gb": m.activations_gb + m.logits_gb, "total_gb": m.total_gb}))
    return out


def footprint_7b_figure(model: str = "llama2-7b", gpu: str = "H100-SXM"):
    """Horizontal stacked bars: a 7B model's training footprint as techniques are added."""
    g = hardware.gpu(gpu)
    rows = footprint_steps(model)
    fig, ax = new_figure(figsize=(8.0, 3.8))
    y = np.arange(len(rows))[::-1]
    left = np.zeros(len(rows))
    for key, lab, col in zip(COMPONENTS, COMPONENT_LABELS, COLORS):
        w = np.array([r[1][key] for r in rows])
        ax.barh(y, w, 0.6, left=left, color=col, label=lab)
        left += w
    for yi, r in zip(y, rows):
        ax.text(r[1]["total_gb"] + 1, yi, f"{r[1]['total_gb']:.1f} GB", va="center", fontsize=8)
    ax.axvline(g.hbm_gb, color=PALETTE[3], ls="--", label=f"{g.name} {g.hbm_gb:g} GB")
    ax.set_yticks(y, [r[0] for r in rows])
    ax.set_xlabel("memory per GPU (GB)")
    ax.set_xlim(0, left.max() * 1.18)
    ax.set_title(f"{model}: mixed-precision Adam, s = {models.transformer(model).seq_len}, b = 1")
    ax.legend(fontsize=8, loc="lower right")
    return fig


# ============================================================================================
# 实操: nvidia-smi during training, compared with the model
# ============================================================================================
#: Illustrative output of ``nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv``
#: on one node of a llama2-7b job (dp=8, ZeRO-3, full recompute, s=4096, b=1). Format: nvidia-smi
#: documentation (``field [unit]`` headers, values with ``MiB``); the values are invented for the
#: course (model prediction + CUDA context + caching-allocator slack), not measured.
NVIDIA_SMI_TRAINING_SAMPLE = """\
index, name, memory.used [MiB], memory.total [MiB]
0, NVIDIA H100 80GB HBM3, 19873 MiB, 81559 MiB
1, NVIDIA H100 80GB HBM3, 19801 MiB, 81559 MiB
2, NVIDIA H100 80GB HBM3, 19845 MiB, 81559 MiB
3, NVIDIA H100 80GB HBM3, 19801 MiB, 81559 MiB
4, NVIDIA H100 80GB HBM3, 19833 MiB, 81559 MiB
5, NVIDIA H100 80GB HBM3, 19801 MiB, 81559 MiB
6, NVIDIA H100 80GB HBM3, 19857 MiB, 81559 MiB
7, NVIDIA H100 80GB HBM3, 19801 MiB, 81559 MiB
"""


def smi_vs_model(text: str = NVIDIA_SMI_TRAINING_SAMPLE, model: str = "llama2-7b", dp: int = 8, zero_stage: int = 3,
                 recompute: str = "full") -> list[dict]:
    """Parse nvidia-smi CSV and compare each GPU's memory.used (MiB -> GB) with the model's prediction.

    Returns rows {gpu, used_gb, total_gb, model_gb, unexplained_gb}. ``unexplained_gb`` is what the
    model does not count: CUDA context, NCCL buffers, the PyTorch caching allocator's reserve.
    """
    from ..parsers import parse_nvidia_smi_csv
    from ..units import BYTES_PER_GB, BYTES_PER_MIB

    parsed = parse_nvidia_smi_csv(text)
    for f in ("index", "memory.used", "memory.total"):
        if f not in parsed.fields:
            raise ValueError(f"text must be nvidia-smi CSV with an {f!r} column; fields: {list(parsed.fields)}")
    spec = models.transformer(model)
    pred = memory.training_memory_gb(spec, Layout(dp, 1, 1, 1, dp, zero_stage=zero_stage, recompute=recompute)).total_gb
    rows = []
    for r in parsed.rows:
        used = r["memory.used"] * BYTES_PER_MIB / BYTES_PER_GB
        rows.append({"gpu": r["index"], "used_gb": round(used, 2),
                     "total_gb": round(r["memory.total"] * BYTES_PER_MIB / BYTES_PER_GB, 2),
                     "model_gb": round(pred, 2), "unexplained_gb": round(used - pred, 2)})
    return rows
