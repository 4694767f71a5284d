"""Explorers and figures for parallel layouts (ch08 并行策略: DP/TP/PP/SP/EP与3D并行).

Explorer: ``layout_explorer()`` — model preset, GPU count, catalog GPU, global batch,
micro-batch, ZeRO stage, recompute, SP -> two heatmaps over tp × pp (per-GPU memory and
estimated step time; 'OOM' = does not fit, 'invalid' = no such layout), the fastest layout boxed and
every layout within 5 % of it boxed dashed, with the fastest layout's memory, bubble and
communication in the summary. The model is ``steptime.search_layouts`` on the catalog cluster of the GPU.

Figures: ``bubble_figure`` (bubble vs micro-batches, 1F1B and interleaved), ``comm_volume_figure``
(bytes per GPU per step by strategy for several layouts), ``layout_heatmap_figure`` (static
version of the explorer), ``scale_figure`` (best layout's MFU and step time for 512-2048 GPUs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.ticker import FormatStrFormatter, FuncFormatter

from .. import hardware, models, parallel, steptime
from ..plotting import PALETTE, new_figure, reset_axes
from ..widgets import Explorer, choice_slider, dropdown, int_slider, pow2_slider, toggle

__all__ = ["TP_AXIS", "PP_AXIS", "BATCH_CHOICES", "NEAR_BEST", "INVALID_NOTE", "LayoutGrid", "layout_grid",
           "layout_explorer", "bubble_figure", "comm_volume_rows", "comm_volume_figure", "layout_heatmap_figure",
           "scale_rows", "scale_figure"]

TP_AXIS = (1, 2, 4, 8)
PP_AXIS = (1, 2, 4, 8, 16, 32, 64)
BATCH_CHOICES = (64, 128, 256, 512, 1024, 1536, 2048, 4096)
#: Layouts whose step time is within this fraction of the best one are drawn as equally good: the
#: model is validated to about ±10 % against published runs (labutil.published_runs).
NEAR_BEST = 0.05
INVALID_NOTE = ("blank 'invalid' cells: no such layout (tp·pp must divide the GPU count; tp the heads, KV heads "
                "and FFN width; pp the layers; dp·micro-batch the global batch)")


@dataclass(frozen=True)
class LayoutGrid:
    """Best layout per (tp, pp) cell for fixed micro-batch / ZeRO / recompute / SP choices.

    memory_gb, step_s, bubble, comm_gb: arrays of shape (len(TP_AXIS), len(PP_AXIS)); NaN where
    the layout is invalid; ``fits`` False where it does not fit in the usable HBM.
    """

    model: str
    n_gpus: int
    gpu: str
    usable_gb: float
    memory_gb: np.ndarray
    step_s: np.ndarray
    bubble: np.ndarray
    tp_comm_s: np.ndarray
    dp_exposed_s: np.ndarray
    fits: np.ndarray
    best: object   # steptime.LayoutEstimate or None
    near_best: np.ndarray = None   # bool grid: fits and step within NEAR_BEST of the best cell


def layout_grid(model="gpt3-175b", n_gpus=1024, gpu="H100-SXM", global_batch=1536, micro_batch=1, zero_stage=1,
                recompute="selective", sp=True) -> LayoutGrid:
    """Model of the explorer: one ``search_layouts`` call restricted to the chosen options."""
    spec = models.transformer(model)
    r = steptime.search_layouts(spec, n_gpus, gpu, global_batch, micro_batches=(micro_batch,),
                                zero_stages=(zero_stage,), recompute=(recompute,),
                                sp_options=(False, True) if sp else (False,), allow_zero23_with_pp=True,
                                include_infeasible=True)
    c = r.columns
    shape = (len(TP_AXIS), len(PP_AXIS))
    grids = {k: np.full(shape, np.nan) for k in ("memory_gb", "step_s", "bubble", "tp_comm_s", "dp_exposed_s")}
    fits = np.zeros(shape, bool)
    best_i = None
    for i in range(len(r)):          # rows are sorted best first
        t, p, s = int(c["tp"][i]), int(c["pp"][i]), bool(c["sp"][i])
        if t not in TP_AXIS or p not in PP_AXIS or (sp and t > 1 and not s):
            continue
        if best_i is None and c["fits"][i]:
            best_i = i
        a, b = TP_AXIS.index(t), PP_AXIS.index(p)
        grids["memory_gb"][a, b] = c["memory_gb"][i]
        grids["step_s"][a, b] = c["step_s"][i]
        grids["bubble"][a, b] = c["bubble_s"][i] / c["step_s"][i]
        grids["tp_comm_s"][a, b] = c["tp_comm_s"][i]
        grids["dp_exposed_s"][a, b] = c["dp_exposed_s"][i]
        fits[a, b] = bool(c["fits"][i])
    best = r[best_i] if best_i is not None else None
    near = np.zeros(shape, bool)
    if best is not None:
        near = fits & (grids["step_s"] <= best.step_s * (1.0 + NEAR_BEST))
    return LayoutGrid(model, int(n_gpus), r.gpu, r.usable_gb, grids["memory_gb"], grids["step_s"], grids["bubble"],
                      grids["tp_comm_s"], grids["dp_exposed_s"], fits, best, near)


def _heat(ax, data, fits, fmt, cmap, cache, key, title, oom_value=False):
    """Annotated heatmap over TP_AXIS × PP_AXIS; blank = invalid layout, 'OOM' = does not fit."""
    shown = np.where(fits, data, np.nan)
    if key not in cache:
        cache[key] = ax.imshow(np.ma.masked_invalid(shown), cmap=cmap, aspect="auto", origin="lower")
        cache[key + "_txt"] = [[ax.text(j, i, "", ha="center", va="center", fontsize=7)
                                for j in range(len(PP_AXIS))] for i in range(len(TP_AXIS))]
        ax.set_xticks(range(len(PP_AXIS)), [str(p) for p in PP_AXIS])
        ax.set_yticks(range(len(TP_AXIS)), [str(t) for t in TP_AXIS])
        ax.set_xlabel("pipeline parallel size pp")
        ax.set_ylabel("tensor parallel size tp")
        ax.set_title(title, fontsize=9)
        ax.grid(False)
    im = cache[key]
    im.set_data(np.ma.masked_invalid(shown))
    finite = shown[np.isfinite(shown)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    hi = hi if hi > lo else lo + 1.0
    im.set_clim(lo, hi)
    for i in range(len(TP_AXIS)):
        for j in range(len(PP_AXIS)):
            v, txt_artist = data[i, j], cache[key + "_txt"][i][j]
            if not np.isfinite(v):
                txt_artist.set_text("invalid")
                txt_artist.set_color("#888888")
            elif fits[i, j]:
                txt_artist.set_text(format(v, fmt))
                dark = (v - lo) / (hi - lo) > 0.5 if cmap.endswith("_r") else (v - lo) / (hi - lo) < 0.5
                txt_artist.set_color("white" if dark else "black")
            else:
                txt_artist.set_text(f"OOM\n{format(v, fmt)}" if oom_value else "OOM")
                txt_artist.set_color("#b00000")


def _draw_grid(fig, g: LayoutGrid, values, cache: dict) -> None:
    ax_m, ax_t = fig.axes[0], fig.axes[1]
    if "init" not in cache:
        reset_axes(ax_m)
        reset_axes(ax_t)
    mem_fits = g.fits & np.isfinite(g.memory_gb)
    _heat(ax_m, g.memory_gb, mem_fits, ".0f", "viridis_r", cache, "mem",
          f"memory per GPU (GB); OOM = above usable {g.usable_gb:.0f} GB", oom_value=True)
    _heat(ax_t, g.step_s, g.fits, ".2f", "magma_r", cache, "step",
          f"estimated step time (s); solid box = best, dashed = within {100 * NEAR_BEST:.0f} %")
    if "init" not in cache:
        from matplotlib.patches import Rectangle

        cache["boxes"] = [[ax_t.add_patch(Rectangle((j - 0.46, i - 0.46), 0.92, 0.92, fill=False, lw=2.2,
                                                    edgecolor="cyan", visible=False))
                           for j in range(len(PP_AXIS))] for i in range(len(TP_AXIS))]
        # One line at 7.5 pt fits the 11-inch figure; wrap=True would measure every word prefix (~0.1 s).
        fig.text(0.01, 0.005, INVALID_NOTE, fontsize=7.5, color="#555555", ha="left", va="bottom")
        fig.draw_without_rendering()
        fig.set_layout_engine("none")
        for ax in (ax_m, ax_t):                 # room for the note under the axes
            pos = ax.get_position()
            ax.set_position([pos.x0, pos.y0 + 0.05, pos.width, pos.height - 0.05])
        cache["init"] = True
    ax_m.set_title(f"{g.model} on {g.n_gpus:,} x {g.gpu}: memory per GPU (GB), OOM above {g.usable_gb:.0f} GB",
                   fontsize=9)
    best_ij = None if g.best is None else (TP_AXIS.index(g.best.layout.tp), PP_AXIS.index(g.best.layout.pp))
    near = g.near_best if g.near_best is not None else np.zeros_like(g.fits)
    for i in range(len(TP_AXIS)):
        for j in range(len(PP_AXIS)):
            box = cache["boxes"][i][j]
            box.set_visible(bool(near[i, j]) or (i, j) == best_ij)
            box.set_linestyle("-" if (i, j) == best_ij else "--")


_OBSTACLE_TEXT = {
    "gpus": "tp×pp 不整除 GPU 数",
    "tp_node": "tp 超过或不整除每节点 GPU 数（TP 组必须整个留在一台服务器的 NVLink 域内）",
    "heads": "tp 不整除注意力头数 / KV 头数 / FFN 宽度",
    "layers": "pp 不整除层数 {layers}",
    "batch": "dp × micro-batch 不整除 global batch {batch}（dp = GPU 数 ÷ (tp×pp)）",
}


def _summary(g: LayoutGrid, values) -> str:
    if g.best is None:
        spec = models.transformer(values["model"])
        obs = parallel.layout_obstacles(spec, values["n_gpus"], values["global_batch"], values["micro_batch"],
                                        tp_options=TP_AXIS, pp_options=PP_AXIS)
        if obs["valid"] == 0:
            why = "；".join(f"{_OBSTACLE_TEXT[k].format(layers=spec.layers, batch=values['global_batch'])}"
                           f"（{n} 个，例如 tp={obs['examples'][k][0]}、pp={obs['examples'][k][1]}）"
                           for k, n in obs["counts"].items() if n)
            return (f"{g.model} 在 {g.n_gpus} 张 {g.gpu} 上<b>没有合法的布局</b>：图中 {obs['pairs']} 个 (tp, pp) 组合"
                    f"每一个都违反至少一条规则——{why}。加显存或 ZeRO 都没用：先调 global batch、micro-batch 或 GPU 数。")
        moe = ("这是 MoE 模型，而这里不切专家（ep = 1），每张卡要存本段的全部专家：带专家并行的搜索见第 24 章的探索器；"
               if getattr(spec, "is_moe", False) else "")
        return (f"在 {g.n_gpus} 张 {g.gpu} 上，{g.model} 有 {obs['valid']} 个合法的 (tp, pp) 组合，但在所选的 ZeRO、"
                f"重计算与 micro-batch 下没有一个能放进可用显存 {g.usable_gb:.0f} GB（红字 OOM）：{moe}提高 ZeRO 阶段、"
                f"打开重计算、减小 micro-batch，或增加 GPU。")
    e = g.best
    L = e.layout
    n_near = int(np.count_nonzero(g.near_best)) if g.near_best is not None else 1
    spec = models.transformer(values["model"])
    c = steptime.plausibility(spec, e, g.gpu)   # where the estimate leaves the model's checked ground
    warn = ""
    if c["mfu_above_published"]:
        warn += (f"<br><span style='color:#b00'>⚠ 估计 MFU {100 * c['mfu']:.0f}% 高于公开大规模训练报告过的最高值 "
                 f"{100 * c['mfu_limit']:.0f}%：已超出模型校准过的范围，实际多半更低。</span>")
    if not c["gemm_ceiling_measured"]:
        warn += (f"<br><span style='color:#b00'>⚠ {g.gpu} 没有实测的矩阵乘效率上限，GEMM 效率沿用 A100 的拟合值（假设）。</span>")
    if c["moe_without_ep"]:
        warn += ("<br><span style='color:#b00'>⚠ 这是 MoE 模型，而这个探索器只搜索 tp × pp（不切专家，ep = 1）：每张卡存着本段的"
                 "全部专家。带专家并行的搜索见第 8 章扩展阅读 A 与第 24 章的探索器。</span>")
    return (f"最快布局：<b>{L.label()}</b>，每卡显存 {e.memory_gb:.1f} GB（可用 {g.usable_gb:.0f} GB），"
            f"单步 {e.step_s:.2f} s，其中计算 {e.compute_s:.2f} s、流水线气泡 {e.bubble_s:.2f} s、"
            f"TP 通信 {e.tp_comm_s:.2f} s、未被重叠的 DP 通信 {e.dp_exposed_s:.2f} s；MFU ≈ {100 * e.mfu:.0f}%。"
            f"与它相差不到 {100 * NEAR_BEST:.0f}% 的 (tp, pp) 格子共 {n_near} 个（虚线框），模型精度内视为同样好。" + warn)


def layout_explorer(model: str = "gpt3-175b") -> Explorer:
    """Heatmaps over tp × pp of memory and step time (see module docstring)."""
    cache: dict = {}
    controls = {
        "model": dropdown("模型", models.transformer_names(), model),
        "n_gpus": pow2_slider("GPU 数量", 1024, 8, 8192),
        "gpu": dropdown("GPU", [n for n in hardware.gpus() if hardware.gpu(n).nvlink_gbs > 0], "H100-SXM"),
        "global_batch": choice_slider("global batch（序列）", BATCH_CHOICES, 1536),
        "micro_batch": pow2_slider("micro-batch b", 1, 1, 8),
        "zero_stage": int_slider("ZeRO stage", 1, 0, 3),
        "recompute": dropdown("重计算", list(parallel.RECOMPUTE), "selective"),
        "sp": toggle("序列并行 SP", True),
    }
    return Explorer(controls, compute=layout_grid, draw=lambda f, r, v: _draw_grid(f, r, v, cache), summary=_summary,
                    title="3D 并行布局：tp × pp 的每卡显存与单步时间", figsize=(11.0, 4.2), ncols=2)


# ============================================================================================
# Figures
# ============================================================================================
def bubble_figure(pps=(2, 4, 8, 16, 32), interleave: int = 2):
    """Bubble share of the step time vs micro-batches per step, 1F1B and interleaved."""
    m = np.arange(1, 257)
    fig, ax = new_figure(figsize=(7.8, 4.2))
    for p, col in zip(pps, PALETTE):
        ax.plot(m, 100 * parallel.pipeline_bubble_fraction(p, m), color=col, label=f"pp = {p}")
    p_il = 8
    ax.plot(m, 100 * parallel.pipeline_bubble_fraction(p_il, m, interleave), color="black", ls=":", lw=1.5,
            label=f"pp = {p_il}, interleaved v = {interleave}")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))   # 16 micro-batches, not 2^4
    ax.set_xlabel("micro-batches per step m")
    ax.set_ylabel("bubble share of step time (%)")
    ax.set_title("1F1B pipeline bubble (p-1)/(m+p-1) (Narayanan et al. 2021, section 2.2)")
    ax.legend(fontsize=8)
    return fig


def comm_volume_rows(model="gpt3-175b", global_batch=1536, layouts=None):
    """(label, CommVolume) for a few 1,024-GPU layouts of ``model`` (default: GPT-3 175B)."""
    spec = models.transformer(model)
    if layouts is None:
        # the last one is the FSDP-style layout (t = 2, ZeRO-3; 1,024 GPUs cannot run pure data parallelism at
        # a global batch of 1,536): its DP traffic is the gathers and reduce-scatters of every micro-batch
        layouts = [parallel.Layout(64, 8, 2, 1, global_batch, zero_stage=1),
                   parallel.Layout(16, 8, 8, 1, global_batch, zero_stage=1),
                   parallel.Layout(8, 8, 16, 1, global_batch, zero_stage=1),
                   parallel.Layout(32, 4, 8, 1, global_batch, zero_stage=1),
                   parallel.Layout(8, 4, 32, 1, global_batch, zero_stage=1),
                   parallel.Layout(512, 2, 1, 1, global_batch, zero_stage=3)]
    return [(f"dp{L.dp} tp{L.tp} pp{L.pp}" + (" Z3" if L.zero_stage == 3 else ""), parallel.comm_volume_gb(spec, L))
            for L in layouts]


def comm_volume_figure(model="gpt3-175b", global_batch=1536):
    """Per-GPU bytes sent per step by TP, PP and DP for several layouts (stacked bars)."""
    rows = comm_volume_rows(model, global_batch)
    fig, ax = new_figure(figsize=(8.2, 4.2))
    x = np.arange(len(rows))
    bottom = np.zeros(len(rows))
    for key, lab, col in (("tp_gb", "TP all-reduce (NVLink)", PALETTE[0]), ("pp_gb", "PP send/recv (network)", PALETTE[1]),
                          ("dp_gb", "DP / ZeRO traffic (network)", PALETTE[2])):
        h = np.array([getattr(v, key) for _, v in rows])
        ax.bar(x, h, 0.6, bottom=bottom, color=col, label=lab)
        bottom += h
    for i, (_, v) in enumerate(rows):
        ax.text(i, v.total_gb, f"{v.total_gb:.0f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, [r[0] for r in rows], rotation=12)
    ax.set_ylabel("bytes sent per GPU per step (GB)")
    ax.set_ylim(0, bottom.max() * 1.15)
    ax.set_title(f"{model}, global batch {global_batch}, 1,024 GPUs: where the traffic goes")
    ax.legend(fontsize=8)
    return fig


def layout_heatmap_figure(model="gpt3-175b", n_gpus=1024, gpu="H100-SXM", global_batch=1536, **kw):
    """Static tp × pp heatmaps (memory, step time) for one setting; same model as the explorer."""
    g = layout_grid(model, n_gpus, gpu, global_batch, **kw)
    fig, _ = new_figure(1, 2, figsize=(11.0, 4.4))
    fig.suptitle(f"{model} on {n_gpus} x {g.gpu}, global batch {global_batch}", fontsize=10)
    _draw_grid(fig, g, {}, {})
    return fig


def scale_rows(model="gpt3-175b", gpu="H100-SXM", global_batch=1536, n_list=(256, 512, 1024, 2048)):
    """Best layout per GPU count (the seed's 512~2048-GPU LLM clusters use 3D parallelism)."""
    spec = models.transformer(model)
    out = []
    for n in n_list:
        r = steptime.search_layouts(spec, n, gpu, global_batch)
        out.append((n, r.best if len(r) else None))
    return out


def scale_figure(model="gpt3-175b", gpu="H100-SXM", global_batch=1536, n_list=(256, 512, 1024, 2048)):
    """Step time and MFU of the best layout vs GPU count (ideal linear scaling for reference)."""
    rows = [(n, e) for n, e in scale_rows(model, gpu, global_batch, n_list) if e is not None]
    n = np.array([r[0] for r in rows], float)
    step = np.array([r[1].step_s for r in rows])
    mfu = np.array([r[1].mfu for r in rows])
    fig, (a1, a2) = new_figure(1, 2, figsize=(10.0, 4.0))
    a1.plot(n, step, "o-", color=PALETTE[0], label="best layout (model)")
    a1.plot(n, step[0] * n[0] / n, "--", color="grey", label="ideal linear scaling")
    for ni, si, r in zip(n, step, rows):
        L = r[1].layout
        a1.annotate(f"tp{L.tp} pp{L.pp} dp{L.dp}", (ni, si), textcoords="offset points", xytext=(4, 6), fontsize=7)
    a1.set_xscale("log", base=2)
    a1.set_yscale("log")
    a1.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    a1.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
    a1.xaxis.set_major_formatter(FormatStrFormatter("%d"))
    a1.set_xlabel("number of GPUs")
    a1.set_ylabel("step time (s)")
    a1.legend(fontsize=8)
    a2.bar(np.arange(len(n)), 100 * mfu, color=PALETTE[2])
    a2.set_xticks(np.arange(len(n)), [str(int(v)) for v in n])
    a2.set_xlabel("number of GPUs")
    a2.set_ylabel("model FLOPs utilisation (%)")
    a2.set_ylim(0, 100)
    for i, v in enumerate(mfu):
        a2.text(i, 100 * v + 1, f"{100 * v:.0f}%", ha="center", fontsize=8)
    fig.suptitle(f"{model}, global batch {global_batch} sequences, {gpu}", fontsize=10)
    return fig
