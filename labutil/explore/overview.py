"""Chapter 1 explorers and figures: effective cluster compute, failures at scale.

Models used: ``labutil.compute.effective_cluster_tflops`` (N × peak × efficiency),
``labutil.dp.strong_scaling`` on a ``labutil.cluster.Cluster`` (data-parallel strong scaling of a
fixed global batch: the gradient all-reduce timed by the cluster model, NVLink inside a server or an
NVL72 rack, the NICs across) and ``labutil.reliability.failures_per_day`` (24·N/MTBF).
"""

from __future__ import annotations

import textwrap

import numpy as np

from .. import comm, compute, coursemap, dp, hardware, memory, models, reliability, scenarios, validate
from ..plotting import new_figure, reset_axes
from ..widgets import Explorer, dropdown, pow2_slider, slider

__all__ = ["EFFECTIVE_BAND", "SCALING_MODEL", "GLOBAL_BATCH_TOKENS", "OVERLAP", "NETWORKS", "N_GRID",
           "network_cluster", "scaling_efficiency_curve", "effective_compute", "effective_compute_explorer",
           "peak_vs_effective_figure", "failures_figure", "PHASE_COLORS", "course_map_figure"]

# seed 004 (1.1 关键认知): effective compute is typically 40-70 % of theoretical peak.
EFFECTIVE_BAND = (0.40, 0.70)

#: The example job whose scaling the explorer shows: Llama-3-70B with a FIXED global batch of
#: 16M tokens per step (the batch of Llama 3 405B's pre-training, Llama 3 paper Table 4). More GPUs
#: split the same batch, so each GPU computes less per step while the gradient all-reduce does not
#: shrink; it is overlapped with the backward pass (2/3 of the step). With tensor and pipeline
#: parallelism inside the data-parallel replica the per-GPU gradient traffic is the same as this
#: pure data-parallel picture with packed (hierarchical) all-reduces.
SCALING_MODEL = "llama3-70b"
GLOBAL_BATCH_TOKENS = 16 * 2**20
OVERLAP = 2.0 / 3.0

#: Compute networks a learner can pick (labutil/data/scenarios.toml): "8x400G" is the vendor reference
#: design (one 400 Gb/s NIC per GPU, seed 004 §1.4); "1x25GbE" is seed 003's mistake.
NETWORKS = scenarios.networks()

N_GRID = 2 ** np.arange(0, 17)      # 1 ... 65,536 GPUs


def network_cluster(gpu: str, network: str, n_gpus):
    """The ``labutil.cluster.Cluster`` of ``n_gpus`` ``gpu`` GPUs with the ``network`` choice (NETWORKS):
    the catalog system of ``gpu`` (GB200: NVL72 racks, the NVLink domain is the 72-GPU rack), sized in
    whole NVLink domains (``dp.catalog_cluster``)."""
    validate.choice("network", network, tuple(NETWORKS))
    e = NETWORKS[network]
    return dp.catalog_cluster(gpu, n_gpus, e["nic_gbps"], e["nics_per_node"])


def scaling_efficiency_curve(gpu: str, network: str, mfu_1gpu, n_grid=N_GRID):
    """Scaling efficiency η(N) of the example job on ``network`` (arrays over ``n_grid``):
    ``labutil.dp.strong_scaling`` (a FIXED 16M-token global batch split over N GPUs, 16-bit gradients
    all-reduced on the cluster model in one bucket per layer, as Megatron-LM's distributed optimizer and
    FSDP reduce them, overlapped with the last 2/3 of the step). η(N) = T_N / (N · T_1) = compute / step."""
    spec = hardware.gpu(gpu)
    m = validate.fraction("mfu_1gpu", mfu_1gpu)
    grid = np.asarray(validate.integer("n_grid", n_grid, lo=1))
    model = models.transformer(SCALING_MODEL)
    cl = network_cluster(spec.name, network, int(grid.max()))
    return dp.strong_scaling(float(model.params()), grid, global_batch_tokens=GLOBAL_BATCH_TOKENS,
                             peak_tflops=spec.bf16_tflops, mfu=m, cluster=cl, overlap=OVERLAP,
                             bucket_bytes=2.0 * float(model.params_per_layer()),
                             active_params=float(model.active_params()))


def effective_compute(gpu: str, n_gpus, mfu_1gpu, network: str = "8x400G"):
    """Peak and effective cluster compute (PFLOP/s, BF16 dense) for ``n_gpus`` of ``gpu`` on ``network``.

    effective = n · peak · MFU(1 GPU) · η(n), where η(n) is derived, not chosen: the strong-scaling
    efficiency of the example data-parallel workload (a fixed global batch split over n GPUs) on the
    cluster's network
    (:func:`scaling_efficiency_curve`). cluster_mfu = MFU(1 GPU) · η(n) is the cluster-level MFU
    that papers report (Llama 3: 38-43 %), which already contains the scaling losses.
    """
    spec = hardware.gpu(gpu)
    n = validate.integer("n_gpus", n_gpus, lo=1)
    m = validate.fraction("mfu_1gpu", mfu_1gpu)
    curve = scaling_efficiency_curve(spec.name, network, m, np.array(sorted({1, n, *N_GRID.tolist()})))
    idx = int(np.flatnonzero(curve["n_gpus"] == n)[0])
    eta = float(curve["scaling_efficiency"][idx])
    eff = m * eta
    peak_pflops = compute.effective_cluster_tflops(n, spec.bf16_tflops, 1.0) / 1e3
    effective_pflops = compute.effective_cluster_tflops(n, spec.bf16_tflops, eff) / 1e3
    # the example job is idealised (pure DP, no memory plan): say when its model states could not even be held,
    # fully sharded (ZeRO-3, 16 B/param for mixed-precision Adam) over the n GPUs (labutil.memory, ch07)
    states_gb = float(memory.model_states_gb(float(models.transformer(SCALING_MODEL).params()), n, 3).total_gb)
    return {"gpu": spec.name, "n_gpus": n, "network": network, "mfu_1gpu": m, "scaling_efficiency": eta,
            "states_gb_per_gpu": states_gb, "states_fit": states_gb < spec.hbm_gb,
            "comm_s": float(curve["comm_s"][idx]), "compute_s": float(curve["compute_s"][idx]),
            "peak_pflops": peak_pflops, "effective_pflops": effective_pflops, "efficiency": eff,
            "cluster_mfu": eff, "in_band": EFFECTIVE_BAND[0] <= eff <= EFFECTIVE_BAND[1],
            "curve_n": curve["n_gpus"], "curve_eta": curve["scaling_efficiency"]}


def _draw_effective(fig, r, values):
    ax, ax2 = fig.axes[0], fig.axes[1]
    art = getattr(fig, "_effective_artists", None)
    if art is None:  # build once; redraws only move the bars, the band and the curve
        reset_axes(ax)
        reset_axes(ax2)
        bars = ax.barh(["peak (datasheet)", "effective (model)"], [1.0, 1.0], color=["#bbbbbb", "#1f77b4"])
        band = ax.axvspan(0.0, 1.0, color="#2ca02c", alpha=0.15, label="typical 40-70 % of peak")
        ax.set_xlabel("Cluster compute (PFLOP/s, BF16 dense)")
        ax.set_ylim(-0.6, 1.95)  # a free strip above the bars for the legend: it never covers a bar
        ax.legend(loc="upper right", fontsize=8)
        (line,) = ax2.plot([1, 2], [1, 1], "-", color="#1f77b4")
        (dot,) = ax2.plot([1], [1], "o", color="#d62728", ms=8)
        ax2.set_xscale("log", base=2)
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        ax2.xaxis.set_major_locator(LogLocator(base=8))  # 8, 64, 512, 4,096, 32,768: plain GPU counts
        ax2.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax2.xaxis.set_minor_formatter(NullFormatter())
        ax2.set_ylim(0, 1.05)
        ax2.set_xlabel("GPUs in the cluster")
        ax2.set_ylabel("scaling efficiency η(N)")
        art = fig._effective_artists = (bars, band, line, dot)
    bars, band, line, dot = art
    peak = r["peak_pflops"]
    lo, hi = EFFECTIVE_BAND
    bars[0].set_width(peak)
    bars[1].set_width(r["effective_pflops"])
    bars[1].set_color("#1f77b4" if r["in_band"] else "#d62728")
    band.set_x(lo * peak)
    band.set_width((hi - lo) * peak)
    ax.set_xlim(0, peak * 1.05)
    ax.set_title(f"{r['n_gpus']} x {r['gpu']}: effective = {r['efficiency']:.0%} of peak", fontsize=9)
    line.set_data(r["curve_n"], r["curve_eta"])
    dot.set_data([r["n_gpus"]], [r["scaling_efficiency"]])
    ax2.set_xlim(1, float(np.max(r["curve_n"])))
    ax2.set_title(f"{SCALING_MODEL}, {GLOBAL_BATCH_TOKENS / 2**20:.0f}M tokens per step, network {r['network']}",
                  fontsize=9)


def _pct(x: float) -> str:
    """A share for the summary: one decimal below 10 % (0.4 % is not '0 %'), none above."""
    return f"{x:.1%}" if x < 0.1 else f"{x:.0%}"


def _summary_effective(r, values):
    note = "在 40–70% 的常见区间内" if r["in_band"] else "落在 40–70% 常见区间之外"
    text = (f"峰值 <b>{r['peak_pflops']:,.0f} PFLOP/s</b>，有效 <b>{r['effective_pflops']:,.0f} PFLOP/s</b>"
            f"（单卡 MFU {_pct(r['mfu_1gpu'])} × 扩展效率 {_pct(r['scaling_efficiency'])} = 集群 MFU {_pct(r['efficiency'])}，"
            f"{note}）；每卡每步计算 {r['compute_s']:.2f} s、梯度同步 {r['comm_s']:.2f} s（集群模型，可与反向重叠 2/3）")
    if not r["states_fit"]:
        text += (f"。<br>注意：这是只看计算与通信的示意作业——{SCALING_MODEL} 的权重、梯度与 Adam 状态即使用 ZeRO-3 切到 "
                 f"{r['n_gpus']:,} 张卡上，每卡也要 {r['states_gb_per_gpu']:,.0f} GB，超过 {r['gpu']} 的 "
                 f"{hardware.gpu(r['gpu']).hbm_gb:.0f} GB 显存，真实作业在这个卡数下放不下（第 7 章）")
    return text


def effective_compute_explorer() -> Explorer:
    """GPU model × count × network × single-GPU MFU → peak vs effective cluster compute, η(N) derived."""
    controls = {
        "gpu": dropdown("GPU 型号", [n for n in hardware.gpus() if hardware.gpu(n).nvlink_gbs > 0], "H100-SXM"),
        "n_gpus": pow2_slider("GPU 数量", 1024, 8, 65536),
        "network": dropdown("计算网络", {v["label"]: k for k, v in NETWORKS.items()}, "8x400G"),
        "mfu_1gpu": slider("单卡 MFU", 0.55, 0.2, 0.8, 0.01, fmt=".2f"),
    }
    return Explorer(controls, compute=effective_compute, draw=_draw_effective, summary=_summary_effective,
                    title="有效算力 = GPU 数 × 单卡峰值 × 单卡 MFU × 扩展效率 η(N)（η 由集群网络算出）",
                    figsize=(10, 3.4), ncols=2)


def peak_vs_effective_figure(gpus=("A100-80G-SXM", "H100-SXM", "H200-SXM", "B200", "MI300X", "Ascend-910B"),
                             n_gpus: int = 1000):
    """Bars of peak cluster compute for ``n_gpus`` of each GPU, with the 40-70 % effective band."""
    n_gpus = validate.integer("n_gpus", n_gpus)
    specs = [hardware.gpu(g) for g in gpus]
    peak = np.array([compute.effective_cluster_tflops(n_gpus, s.bf16_tflops, 1.0) / 1e3 for s in specs])
    fig, ax = new_figure(figsize=(8, 4))
    x = np.arange(len(specs))
    ax.bar(x, peak, color="#cccccc", label="peak (datasheet, BF16 dense)")
    lo, hi = EFFECTIVE_BAND
    ax.bar(x, peak * (hi - lo), bottom=peak * lo, color="#2ca02c", alpha=0.6, label="effective: 40-70 % of peak")
    ax.set_xticks(x, [s.name for s in specs], rotation=15)
    ax.set_ylabel(f"PFLOP/s for {n_gpus:,} accelerators")
    ax.set_title("Theoretical peak vs. typically delivered compute")
    ax.legend()
    return fig


def failures_figure(n_max: int = 20000, mtbf_hours=(50_000, 100_000, 200_000), mark_n: int = 10_000,
                    llama3: bool = True):
    """Expected GPU failures per day vs cluster size for several per-GPU MTBFs; with ``llama3`` the
    interruptions Meta counted on 16,384 H100 (Llama 3 Table 5: all causes, and the GPU rows alone)."""
    n = np.linspace(100, validate.integer("n_max", n_max, lo=100), 200)
    fig, ax = new_figure(figsize=(8, 4))
    for m in mtbf_hours:
        ax.plot(n, reliability.failures_per_day(n, m), label=f"MTBF {m:,} h per GPU")
    y = reliability.failures_per_day(mark_n, 100_000)
    ax.plot([mark_n], [y], "o", color="k")
    ax.annotate(f"{mark_n:,} GPUs, 100,000 h: {y:.1f}/day", (mark_n, y), xytext=(-190, 30), textcoords="offset points",
                arrowprops=dict(arrowstyle="->", color="k"))
    if llama3:
        # what a real 16,384-GPU run saw (Llama 3 paper Table 5, labutil/data/reliability.toml): all unexpected
        # interruptions, and the GPU rows alone (faulty GPU, HBM3, SRAM, GSP, SDC, thermal)
        ref = reliability.reference_data()["llama3"]
        n3 = ref["gpus"]
        all_causes = float(reliability.llama3_failures_per_day())
        gpu_rows = reliability.llama3_counts_by_part()["gpu"] / ref["snapshot_days"]
        ax.plot([n3], [all_causes], "D", color="#9467bd", ms=7, label=f"Llama 3, {n3:,} H100: all interruptions")
        ax.plot([n3], [gpu_rows], "s", color="#9467bd", mfc="white", ms=7, label="Llama 3: GPU causes only")
        ax.annotate(f"{all_causes:.1f}/day", (n3, all_causes), xytext=(8, -4), textcoords="offset points", fontsize=8)
        ax.annotate(f"{gpu_rows:.1f}/day", (n3, gpu_rows), xytext=(8, -4), textcoords="offset points", fontsize=8)
    ax.set_xlabel("GPUs in the cluster")
    ax.set_ylabel("Failures (job interruptions) per day")
    ax.set_title("Failures grow linearly with scale (lines: GPU failures only)")
    ax.legend(fontsize=8, loc="upper left")
    return fig


# ---------------------------------------------------------------------------------------------
# the course map (data and prerequisites: labutil.coursemap)
# ---------------------------------------------------------------------------------------------
PHASE_COLORS = {"design": "#1f77b4", "deploy/verify": "#2ca02c", "operate": "#d62728"}
_TITLE_CHARS = 32      # characters of a 10 pt bold module title that fit in a 3.55-unit box
_TITLE_LINE = 0.3      # height of one more title line, in the map's units


def course_map_figure(highlight_chapter: int | None = None):
    """The six modules as boxes (chapters listed inside), arrows for prerequisites.

    Columns follow dependency depth; each box is as tall as its chapter list, and the modules that
    share a column are stacked and centred, so no column leaves a blank band.
    """
    mods = coursemap.modules()
    titles = coursemap.chapter_titles()
    depth = {}
    for m in mods:  # columns by dependency depth (modules are listed after their prerequisites)
        depth[m.id] = 0 if not m.requires else 1 + max(depth[r] for r in m.requires)
    n_cols = max(depth.values()) + 1
    col_w, w, line, head, gap = 3.75, 3.55, 0.42, 0.62, 0.35
    # a module title wider than its box (M6 at 10 pt bold is ~35 characters) wraps onto a second line
    title_lines = {m.id: textwrap.wrap(f"M{m.id} {m.title_en}", _TITLE_CHARS) for m in mods}
    heads = {m.id: head + _TITLE_LINE * (len(title_lines[m.id]) - 1) for m in mods}
    heights = {m.id: heads[m.id] + line * len(m.chapters) + 0.12 for m in mods}
    cols: dict[int, list[coursemap.Module]] = {}
    for m in mods:
        cols.setdefault(depth[m.id], []).append(m)
    col_h = {d: sum(heights[m.id] for m in ms) + gap * (len(ms) - 1) for d, ms in cols.items()}
    top = max(col_h.values())
    pos = {}
    for d, ms in cols.items():
        x = 0.1 + d * col_w
        y_top = top - (top - col_h[d]) / 2
        for m in ms:
            pos[m.id] = (x, y_top - heights[m.id])
            y_top -= heights[m.id] + gap
    fig, ax = new_figure(figsize=(16, 0.9 + 1.0 * top))
    ax.set_axis_off()
    ax.set_xlim(0, 0.1 + n_cols * col_w)
    ax.set_ylim(-0.55, top + 0.1)
    for m in mods:
        x, y = pos[m.id]
        h = heights[m.id]
        color = PHASE_COLORS.get(m.phase, "#7f7f7f")
        ax.add_patch(_box(x, y, w, h, color))
        ax.text(x + 0.1, y + h - 0.14, "\n".join(title_lines[m.id]), fontsize=10, fontweight="bold", va="top",
                color=color, linespacing=1.25)
        for j, c in enumerate(m.chapters):
            here = c == highlight_chapter
            y_text = y + h - heads[m.id] - j * line
            if here:  # "you are here": a highlighted row inside the box
                ax.add_patch(_box(x + 0.07, y_text - 0.25, w - 0.14, 0.33, "#ffbf00"))
            ax.text(x + 0.15, y_text, f"ch{c:02d} {titles[c]}", fontsize=9.5, va="top",
                    fontweight="bold" if here else "normal")
    for m in mods:
        # draw the transitive reduction only: an edge implied by another path is left out
        implied = set().union(*(coursemap.prerequisites(r) for r in m.requires)) if m.requires else set()
        for r in m.requires:
            if r in implied:
                continue
            (x0, y0), (x1, y1) = pos[r], pos[m.id]
            ax.annotate("", xy=(x1, y1 + heights[m.id] / 2), xytext=(x0 + w, y0 + heights[r] / 2),
                        arrowprops=dict(arrowstyle="->", color="#555", lw=1.0, shrinkA=2, shrinkB=2,
                                        connectionstyle="arc3,rad=0.05"))
    handles = [_box(0, 0, 1, 1, c) for c in PHASE_COLORS.values()]
    labels = [f"phase: {p}" for p in PHASE_COLORS]
    if highlight_chapter is not None:
        handles.append(_box(0, 0, 1, 1, "#ffbf00"))
        labels.append(f"you are here: ch{highlight_chapter:02d}")
    ax.legend(handles, labels, loc="lower right", fontsize=9, frameon=False, ncol=len(labels))
    ax.set_title("Course map: 6 modules, 30 chapters (arrows = direct prerequisites)")
    return fig


def _box(x, y, w, h, color):
    from matplotlib.patches import FancyBboxPatch

    return FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08", facecolor=color + "14",
                          edgecolor=color, lw=1.4)
