"""Chapter 29 explorer and figures: GPU sharing (dedicated, time-slicing, MPS, MIG) and MIG layouts.

Models: ``labutil.sharing`` (MIG profiles and placement, sharing plans, noisy neighbour, isolation
matrix), which uses ``labutil.inference`` queueing (Erlang C / Allen–Cunneen P99).
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullFormatter

from .. import sharing, validate
from ..plotting import PALETTE, new_figure, reset_axes
from ..widgets import Explorer, dropdown, int_slider, slider

__all__ = ["MODE_LABELS", "sharing_model", "MODE_LABELS_ZH", "ASPECT_ZH", "LEVEL_ZH", "sharing_explorer",
           "mig_layouts_figure", "mig_granularity_figure", "noisy_neighbour_figure", "gpus_vs_tenants_figure"]

MODE_LABELS = {"dedicated": "dedicated", "time_slicing": "time-slicing", "mps": "MPS", "mig": "MIG"}
_PROFILE_COLOURS = {"1g.10gb": PALETTE[0], "1g.10gb+me": PALETTE[9], "1g.20gb": PALETTE[1], "2g.20gb": PALETTE[2],
                    "3g.40gb": PALETTE[3], "4g.40gb": PALETTE[4], "7g.80gb": PALETTE[5]}


def sharing_model(gpu: str = "H100-80GB", n_tenants: int = 14, qps=20.0, service_ms=8.0, memory_gb=8.0,
                  p99_ms=100.0, gpu_fill=0.3, mode: str = "mig") -> dict:
    """Plans for every mode, the selected one, and the MIG layout of one GPU of the MIG plan."""
    plans = sharing.compare_sharing(n_tenants, qps, service_ms, memory_gb, p99_ms, gpu=gpu, gpu_fill=gpu_fill)
    validate.choice("mode", mode, sharing.MODES)
    mig = plans["mig"]
    layout = None
    if mig.profile and mig.profile != "MIG off":
        per_gpu = sharing.max_instances_per_gpu(gpu, mig.profile)
        layout = sharing.mig_layout(gpu, [mig.profile] * per_gpu)
    return {"plans": plans, "selected": plans[mode], "layout": layout, "p99_target_ms": float(p99_ms)}


def _draw_layout(ax, layout, y=0.0, height=0.8, texts=True):
    """Rectangles of one MIG layout on the 8-slice memory axis (static figures)."""
    for slot in layout.slots:
        ax.add_patch(Rectangle((slot.start, y), slot.memory_slices, height, facecolor=_PROFILE_COLOURS[slot.profile],
                               edgecolor="white", lw=2, alpha=0.85))
        if texts:
            ax.text(slot.start + slot.memory_slices / 2, y + height / 2, f"{slot.profile}\n{slot.compute_slices}g",
                    ha="center", va="center", fontsize=7, color="white")


def _build(fig):
    ax_g, ax_p, ax_m = fig.axes[:3]
    for ax in (ax_g, ax_p, ax_m):
        reset_axes(ax)
    x = np.arange(len(sharing.MODES))
    labels = [MODE_LABELS[m] for m in sharing.MODES]
    g_bars = ax_g.bar(x, np.ones(x.size), color="#bbbbbb")
    g_txt = [ax_g.text(i, 1, "", ha="center", va="bottom", fontsize=8) for i in x]
    ax_g.set_xticks(x, labels, fontsize=8)
    ax_g.set_ylabel("GPUs needed")
    ax_g.yaxis.set_major_locator(MaxNLocator(integer=True))       # a GPU count: no 2.5 / 7.5 ticks
    ax_g.set_title("GPUs for all tenants (colour = chosen mode)", fontsize=10)
    p_bars = ax_p.bar(x, np.ones(x.size), color="#bbbbbb")
    slo = ax_p.axhline(1.0, color="k", ls="--", lw=1, label="P99 target")
    ax_p.set_xticks(x, labels, fontsize=8)
    ax_p.set_ylabel("Worst tenant P99 (ms)")
    ax_p.set_title("Per-tenant P99", fontsize=10)
    ax_p.legend(loc="upper right", fontsize=7)
    rects = [ax_m.add_patch(Rectangle((0, 0.1), 1, 0.8, edgecolor="white", lw=2, visible=False)) for _ in range(7)]
    r_txt = [ax_m.text(0, 0.5, "", ha="center", va="center", fontsize=7, color="white", rotation=90) for _ in range(7)]
    msg = ax_m.text(4, 0.5, "", ha="center", va="center", fontsize=9)
    ax_m.set_xlim(0, 8)
    ax_m.set_ylim(0, 1)
    ax_m.set_yticks([])
    ax_m.set_xticks(range(9))
    ax_m.set_xlabel("Memory slice (of 8)")
    ax_m.set_title("MIG layout of one GPU", fontsize=10)
    fig._sharing = (g_bars, g_txt, p_bars, slo, rects, r_txt, msg)


def _draw(fig, result, values):
    if not hasattr(fig, "_sharing"):
        _build(fig)
    g_bars, g_txt, p_bars, slo, rects, r_txt, msg = fig._sharing
    ax_g, ax_p, ax_m = fig.axes[:3]
    plans = result["plans"]
    gpus = [plans[m].gpus for m in sharing.MODES]
    p99 = [plans[m].p99_ms for m in sharing.MODES]
    for i, m in enumerate(sharing.MODES):
        col = PALETTE[i] if m == values["mode"] else "#bbbbbb"
        g_bars[i].set_height(gpus[i])
        g_bars[i].set_color(col)
        g_txt[i].set_position((i, gpus[i]))
        extra = f"\n{plans[m].profile}" if m == "mig" and plans[m].profile else ""
        g_txt[i].set_text(f"{gpus[i]}{extra}")
        p_bars[i].set_height(p99[i])
        p_bars[i].set_color(col)
    ax_g.set_ylim(0, max(gpus) * 1.3 + 0.5)
    target = result["p99_target_ms"]
    slo.set_ydata([target, target])
    ax_p.set_ylim(0, max(max(p99), target) * 1.2)
    lay = result["layout"]
    slots = lay.slots if lay is not None else ()
    for k in range(7):
        if k < len(slots):
            s = slots[k]
            rects[k].set_bounds(s.start, 0.1, s.memory_slices, 0.8)
            rects[k].set_facecolor(_PROFILE_COLOURS[s.profile])
            rects[k].set_visible(True)
            r_txt[k].set_position((s.start + s.memory_slices / 2, 0.5))
            r_txt[k].set_text(s.profile)
            r_txt[k].set_visible(True)
        else:
            rects[k].set_visible(False)
            r_txt[k].set_visible(False)
    msg.set_text("" if slots else "MIG off: whole GPUs\nneed fewer")
    ax_m.set_title(f"MIG layout of one {result['selected'].gpu}", fontsize=10)


MODE_LABELS_ZH = {"dedicated": "独占", "time_slicing": "时间片", "mps": "MPS", "mig": "MIG"}
ASPECT_ZH = {"memory": "显存", "faults": "故障", "performance": "性能", "network": "网络"}
LEVEL_ZH = {"hard": "硬隔离", "partial": "部分隔离", "none": "不隔离", "n/a": "不适用"}


def _summary(result, values) -> str:
    sel = result["selected"]
    iso = "、".join(f"{ASPECT_ZH[a]}{LEVEL_ZH[lvl]}" for a, lvl in sel.isolation.items())
    saved = result["plans"]["dedicated"].gpus - sel.gpus
    mig_on = sel.mode == "mig" and sel.profile not in ("", "MIG off")
    prof = (f"，MIG profile {sel.profile}" if mig_on
            else "，MIG 关闭：整卡更省" if sel.profile == "MIG off" else "")
    vs = (f"比独占少用 {saved} 张卡" if saved > 0 else "与独占用卡一样多" if saved == 0
          else f"比独占多用 {-saved} 张卡")
    if sel.tenants_per_gpu >= 1:          # several tenants share a GPU
        per = f"每卡 {sel.tenants_per_gpu:.3g} 个租户{prof}"
    else:                                 # one tenant needs several GPUs / instances: say how many
        unit = f"个 {sel.profile} 实例" if mig_on else "张整卡"
        per = f"每个租户 {sel.instances_per_tenant} {unit}{prof if not mig_on else ''}"
    return (f"<b>{MODE_LABELS_ZH[sel.mode]}</b>：{sel.n_tenants} 个租户用 <b>{sel.gpus} 张卡</b>"
            f"（{per}），最差租户 P99 {sel.p99_ms:.1f} ms，{vs}。"
            f"隔离：{iso}。")


def sharing_explorer() -> Explorer:
    """Tenants (number, load, size, P99 target) and sharing mode -> GPUs, per-tenant P99, isolation."""
    controls = {
        "gpu": dropdown("GPU", sharing.mig_gpus(), "H100-80GB"),
        "n_tenants": int_slider("租户数", 14, 1, 64),
        "qps": slider("每租户 QPS", 20.0, 1.0, 300.0, 1.0),
        "service_ms": slider("整卡单请求耗时 ms", 8.0, 1.0, 40.0, 0.5),
        "memory_gb": slider("每租户显存 GB", 8.0, 1.0, 40.0, 0.5),
        "p99_ms": slider("P99 目标 ms", 100.0, 20.0, 500.0, 5.0),
        "gpu_fill": slider("单请求可用满的 SM 比例", 0.3, 0.05, 1.0, 0.05),
        "mode": dropdown("共享方式", list(sharing.MODES), "mig"),
    }
    return Explorer(controls, compute=sharing_model, draw=_draw, summary=_summary,
                    title="GPU 共享：独占 / 时间片 / MPS / MIG", figsize=(10.5, 3.8), nrows=1, ncols=3)


# -- static figures ------------------------------------------------------------------------------
def mig_layouts_figure(gpu: str = "H100-80GB", configs=None):
    """Valid MIG layouts of one GPU (one row each) on the 8 memory slices, from the placement search."""
    if configs is None:
        configs = [["7g.80gb"], ["4g.40gb", "3g.40gb"], ["3g.40gb", "3g.40gb"], ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"],
                   ["2g.20gb"] * 3 + ["1g.10gb"], ["1g.20gb"] * 4, ["1g.10gb"] * 7]
    layouts = [sharing.mig_layout(gpu, c) for c in configs]
    fig, ax = new_figure(figsize=(8.0, 0.55 * len(layouts) + 1.2))
    for i, lay in enumerate(layouts):
        _draw_layout(ax, lay, y=len(layouts) - 1 - i + 0.1)
    ax.set_xlim(0, 8)
    ax.set_ylim(0, len(layouts))
    ax.set_yticks([len(layouts) - 1 - i + 0.5 for i in range(len(layouts))],
                  [f"{lay.compute_slices}/7 compute, {lay.memory_slices}/8 mem" for lay in layouts], fontsize=8)
    ax.set_xticks(range(9))
    ax.set_xlabel("Memory slice index (nvidia-smi mig -lgipp start positions)")
    ax.set_title(f"Valid MIG layouts on one {gpu}")
    ax.grid(False)
    return fig


def mig_granularity_figure(gpu: str = "H100-80GB"):
    """Total SMs and memory of one GPU cut into N equal instances, vs the whole GPU with MIG off."""
    g = sharing.mig_gpu(gpu)
    names = ["1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]
    n = [sharing.max_instances_per_gpu(gpu, p) for p in names]
    sm = [k * g.profile(p).sm for k, p in zip(n, names)]
    mem = [k * g.profile(p).memory_gib for k, p in zip(n, names)]
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(9.5, 3.6))
    x = np.arange(len(names))
    lab = [f"{k}x {p}" for k, p in zip(n, names)]
    ax1.bar(x, sm, color=PALETTE[0])
    ax1.axhline(g.sm_full, color="k", ls="--", lw=1, label=f"whole GPU, MIG off ({g.sm_full} SMs)")
    ax1.set_xticks(x, lab, rotation=30, ha="right", fontsize=8)
    ax1.set_ylabel("SMs in use (all instances)")
    ax1.set_ylim(0, g.sm_full * 1.3)
    ax1.legend(fontsize=7, loc="upper left")
    ax2.bar(x, mem, color=PALETTE[1])
    ax2.set_xticks(x, lab, rotation=30, ha="right", fontsize=8)
    ax2.set_ylabel("Usable memory, all instances (GiB)")
    for ax, vals in ((ax1, sm), (ax2, mem)):
        for i, v in enumerate(vals):
            ax.text(i, v, f"{v:.0f}", ha="center", va="bottom", fontsize=7)
    fig.suptitle(f"Cutting one {gpu} into equal MIG instances")
    return fig


def noisy_neighbour_figure(qps=10.0, service_ms=8.0, neighbour_service_ms=8.0, gpu: str = "H100-80GB",
                           profile: str = "3g.40gb", gpu_fill=0.4):
    """P99 of a quiet tenant vs its co-tenant's load: time-slicing (one queue) vs MIG (own instance).

    The x axis runs up to the neighbour load that saturates the shared GPU, so every service time must be > 0
    and the quiet tenant alone must leave room (qps x service_ms < 1,000 ms per second)."""
    qps = validate.positive("qps", qps)
    service_ms = validate.positive("service_ms", service_ms)
    neighbour_service_ms = validate.positive("neighbour_service_ms", neighbour_service_ms)
    if qps * service_ms >= 1e3:
        raise ValueError(f"qps x service_ms must be < 1000 ms/s (the quiet tenant alone saturates the GPU); "
                         f"got {qps:g} x {service_ms:g} = {qps * service_ms:g}")
    top = (1e3 - qps * service_ms) / neighbour_service_ms
    nq = np.linspace(0.0, 0.97 * top, 80)
    ts = sharing.noisy_neighbour_p99_ms(nq, qps=qps, service_ms=service_ms, neighbour_service_ms=neighbour_service_ms)
    mig = sharing.noisy_neighbour_p99_ms(nq, qps=qps, service_ms=service_ms, neighbour_service_ms=neighbour_service_ms,
                                         mode="mig", gpu=gpu, profile=profile, gpu_fill=gpu_fill)
    fig, ax = new_figure(figsize=(7.5, 4.0))
    ax.plot(nq, ts, color=PALETTE[3], label="time-slicing (shared queue)")
    ax.plot(nq, mig, color=PALETTE[2], label=f"MIG {profile} (own instance)")
    ax.set_yscale("log")
    # plain millisecond ticks instead of 2x10^1, 3x10^1 ... minor labels
    ax.yaxis.set_major_locator(FixedLocator([10, 20, 50, 100, 200, 500, 1000, 2000, 5000]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("Neighbour load (requests/s)")
    ax.set_ylabel("Quiet tenant P99 (ms)")
    ax.set_title(f"Quiet tenant at {qps:g} req/s, {service_ms:g} ms per request on a whole GPU")
    ax.legend(fontsize=8)
    return fig


def gpus_vs_tenants_figure(qps=20.0, service_ms=8.0, memory_gb=8.0, p99_ms=100.0, gpu: str = "H100-80GB",
                           gpu_fill=0.3, max_tenants: int = 48):
    """GPUs needed for 1..max_tenants identical small services under each mode."""
    ns = np.arange(1, validate.integer("max_tenants", max_tenants, lo=2) + 1)
    fig, ax = new_figure(figsize=(7.5, 4.0))
    for i, m in enumerate(sharing.MODES):
        gp = [sharing.plan_sharing(int(n), qps, service_ms, memory_gb, p99_ms, m, gpu=gpu, gpu_fill=gpu_fill).gpus
              for n in ns]
        ax.step(ns, gp, where="post", color=PALETTE[i], label=MODE_LABELS[m])
    ax.set_xlabel("Number of tenants (small inference services)")
    ax.set_ylabel("GPUs needed")
    ax.set_title(f"{qps:g} req/s, {service_ms:g} ms, {memory_gb:g} GB each, P99 <= {p99_ms:g} ms ({gpu})")
    ax.legend(fontsize=8)
    return fig
