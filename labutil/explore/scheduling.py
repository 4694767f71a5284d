"""Explorer and figures for job scheduling (ch21 作业调度: Slurm 与 Kubernetes).

- ``scheduling_explorer()``: policy, inference share, offered load, training-namespace GPU quota
  -> a Gantt-like chart of GPU occupancy (one row per GPU, coloured by job class) and P50 / P95
  wait per class, from ``labutil.scheduling.simulate`` on a seeded 64-GPU workload.
- ``policy_comparison_figure()``: inference P95 wait, training P50 wait and utilisation per policy.
- ``backfill_gantt_figure()``: the same five hand-made jobs under FIFO and FIFO + EASY backfill.
- ``fairshare_figure()``: Slurm's classic fair-share factor 2^(-U/S).
- ``partition_tradeoff_figure()``: dedicating nodes to inference vs utilisation and waits.
Axis labels in English with units. Explorer artists are created once and updated in place.
"""

from __future__ import annotations

import numpy as np
from matplotlib.collections import PolyCollection

from .. import scheduling as S
from .. import validate
from ..plotting import PALETTE, figure_cache, new_figure
from ..units import format_duration_s, time_unit
from ..widgets import Explorer, choice_slider, dropdown, slider

__all__ = ["CLASS_COLORS", "EXPLORER_GPUS", "EXPLORER_JOBS", "QUOTA_CHOICES", "H", "gantt_verts", "occupancy_image",
           "backfill_example", "partition_tradeoff", "scheduling_model", "scheduling_explorer",
           "policy_comparison_figure", "backfill_gantt_figure", "fairshare_figure", "partition_tradeoff_figure"]

CLASS_COLORS = {"training": PALETTE[0], "inference": PALETTE[3], "interactive": PALETTE[2]}
EXPLORER_GPUS = 64          # seed 003 scene 3: 64~128 GPUs, training + inference on one cluster
EXPLORER_JOBS = 160
QUOTA_CHOICES = (16, 24, 32, 40, 48, 56, 64)
H = 3600.0


def gantt_verts(sched: S.Schedule, cls_index: int, t0_s: float = 0.0) -> np.ndarray:
    """(n, 4, 2) rectangles (hours, GPU row) of the segments of one class (vectorised)."""
    m = sched.workload.job_class[sched.seg_job] == cls_index
    x0 = (sched.seg_t0_s[m] - t0_s) / H
    x1 = (sched.seg_t1_s[m] - t0_s) / H
    y0 = sched.seg_gpu[m] - 0.45
    y1 = sched.seg_gpu[m] + 0.45
    return np.stack([np.stack([x0, y0], -1), np.stack([x1, y0], -1),
                     np.stack([x1, y1], -1), np.stack([x0, y1], -1)], axis=1)


occupancy_image = S.occupancy_image          # moved to the model (issue 19): re-exported
backfill_example = S.backfill_example
partition_tradeoff = S.partition_tradeoff


def scheduling_model(policy="fifo", inference_share=0.3, load=0.9, train_quota_gpus=64,
                     n_gpus: int = EXPLORER_GPUS, n_jobs: int = EXPLORER_JOBS, seed: int = 0) -> dict:
    """What the explorer shows: :func:`labutil.scheduling.mixed_cluster_schedule` at the explorer's size."""
    return S.mixed_cluster_schedule(policy, inference_share, load, train_quota_gpus, n_gpus=n_gpus, n_jobs=n_jobs,
                                    seed=seed)


def _draw(fig, r, values, cache=None):
    cache, key = (figure_cache(fig) if cache is None else cache), "artists"
    sched = r["schedule"]
    ax_g, ax_w = fig.axes[0], fig.axes[1]
    x = np.arange(len(S.CLASSES))
    img, t0, t1 = occupancy_image(sched)
    extent = (0.0, (t1 - t0) / H, -0.5, sched.n_gpus - 0.5)
    if cache.get(key) is None:
        from matplotlib.colors import ListedColormap
        from matplotlib.patches import Patch

        cmap = ListedColormap(["#f2f2f2"] + [CLASS_COLORS[c] for c in S.CLASSES])
        im = ax_g.imshow(img, cmap=cmap, vmin=-0.5, vmax=3.5, aspect="auto", origin="lower",
                         interpolation="nearest", extent=extent)
        ax_g.set_xlabel("time since first arrival (h)")
        ax_g.set_ylabel("GPU index")
        ax_g.set_title("GPU occupancy (one row per GPU, grey = idle)", loc="left")
        # above the axes, not on the occupancy image (it covered the top GPU rows)
        ax_g.legend(handles=[Patch(color=CLASS_COLORS[c], label=c) for c in S.CLASSES],
                    loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=8, ncols=3,
                    frameon=False, borderaxespad=0.2)
        ax_g.grid(False)
        b50 = ax_w.bar(x - 0.2, np.zeros(3), 0.4, color=PALETTE[7], label="P50 wait")
        b95 = ax_w.bar(x + 0.2, np.zeros(3), 0.4, color=PALETTE[1], label="P95 wait")
        ax_w.set_xticks(x, list(S.CLASSES))
        ax_w.set_ylabel("wait (h)")
        ax_w.set_title("Queue wait per job class", loc="left")
        ax_w.legend(loc="upper right", fontsize=8, ncols=2)
        fig.draw_without_rendering()
        fig.set_layout_engine("none")
        none = ax_w.text(list(S.CLASSES).index("inference"), 0.0, "no inference jobs", ha="center", va="bottom",
                         fontsize=8, color="0.4", visible=False)
        cache[key] = {"im": im, "b50": b50, "b95": b95, "none": none}
    art = cache[key]
    art["im"].set_data(img)
    art["im"].set_extent(extent)
    ax_g.set_xlim(extent[0], extent[1])
    top = 0.0
    for k, name in enumerate(S.CLASSES):
        w = r["waits"][name]
        art["b50"][k].set_height(w["p50_s"] / H)
        art["b95"][k].set_height(w["p95_s"] / H)
        top = max(top, w["p95_s"] / H)
    ax_w.set_ylim(0, max(top * 1.3, 0.5))        # headroom: the legend sits above the tallest bar
    art["none"].set_visible(r.get("n_inference", 1) == 0)


def _summary(r, values) -> str:
    s = r["summary"]
    quota = (f"不设（{EXPLORER_GPUS} 卡 = 整个集群）" if r["quota"] >= EXPLORER_GPUS
             else f"{r['quota']} 卡（共 {EXPLORER_GPUS} 卡）")
    if r["n_inference"] == 0:
        inf = "无推理作业（推理占比为 0）"
    else:
        unit, _ = time_unit(s["starvation_s"])          # one unit for the P95 and the maximum
        inf = (f"推理 P95 等待 <b>{format_duration_s(s['inference_p95_s'], unit)}</b>，"
               f"最长 {format_duration_s(s['starvation_s'], unit)}")
    return (f"GPU 利用率 <b>{s['utilisation']:.1%}</b>；{inf}；"
            f"训练 P50 等待 {format_duration_s(s['training_p50_s'])}；"
            f"有作业排队时空闲的 GPU 时间 {s['idle_while_waiting']:.1%}；碎片率 {s['fragmentation']:.0%}；"
            f"抢占 {s['preemptions']} 次；训练 namespace 配额 {quota}")


def scheduling_explorer() -> Explorer:
    controls = {
        "policy": dropdown("调度策略", list(S.POLICIES), "fifo"),
        "inference_share": slider("推理作业占比", 0.3, 0.0, 0.8, 0.05, fmt=".2f"),
        "load": slider("提交负载 (offered load)", 0.9, 0.5, 1.2, 0.05, fmt=".2f"),
        "train_quota_gpus": choice_slider("训练 namespace 配额 (GPU)", QUOTA_CHOICES, 64),
    }
    return Explorer(controls, scheduling_model, _draw, summary=_summary,
                    title=f"{EXPLORER_GPUS} 卡混合负载集群：调度策略如何决定谁在等", figsize=(9.0, 6.5), nrows=2)


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------
def policy_comparison_figure(n_gpus: int = 128, n_jobs: int = 1000, load: float = 0.9,
                             inference_share: float = 0.3, seed: int = 0):
    """Per policy: inference P95 and training P50 wait (h), and GPU utilisation (%)."""
    wl = S.generate_workload(n_jobs, n_gpus, load=load, inference_share=inference_share, seed=seed)
    res = S.compare_policies(wl, n_gpus)
    names = list(res)
    x = np.arange(len(names))
    fig, (a1, a2) = new_figure(1, 2, figsize=(10.0, 4.2))
    inf_h = [res[p]["inference_p95_s"] / H for p in names]
    tr_h = [res[p]["training_p50_s"] / H for p in names]
    a1.bar(x - 0.2, inf_h, 0.4, color=CLASS_COLORS["inference"], label="inference P95 wait")
    a1.bar(x + 0.2, tr_h, 0.4, color=CLASS_COLORS["training"], label="training P50 wait")
    top = max(inf_h + tr_h + [1e-9])
    for dx, vals in ((-0.2, inf_h), (0.2, tr_h)):      # a bar too short to see: say it is ~0, not missing
        for xi, v in zip(x, vals):
            if v < 0.01 * top:
                a1.text(xi + dx, 0.01 * top, f"{v:.1f}", ha="center", va="bottom", fontsize=8)
    a1.set_xticks(x, names, rotation=30, ha="right")
    a1.set_ylabel("wait (h)")
    a1.set_title(f"{n_jobs} jobs on {n_gpus} GPUs, offered load {load:.0%}")
    a1.legend()
    u = [res[p]["utilisation"] * 100 for p in names]
    a2.bar(x, u, 0.6, color=PALETTE[7])
    for xi, ui in zip(x, u):
        a2.text(xi, ui + 1, f"{ui:.1f}", ha="center", fontsize=8)
    a2.set_xticks(x, names, rotation=30, ha="right")
    a2.set_ylabel("GPU utilisation (%)")
    a2.set_ylim(0, 100)
    a2.set_title("Utilisation over the whole schedule")
    return fig


def backfill_gantt_figure():
    """The backfill example under FIFO and FIFO + EASY backfill, with the head's reservation."""
    wl = backfill_example()
    fig, axes = new_figure(2, 1, figsize=(8.5, 5.0), sharex=True)
    for ax, pol in zip(axes, ("fifo", "backfill")):
        sc = S.simulate(wl, 16, pol)
        for k, name in enumerate(S.CLASSES):
            ax.add_collection(PolyCollection(gantt_verts(sc, k), facecolors=CLASS_COLORS[name],
                                             edgecolors="white", label=name))
        for j in range(wl.n_jobs):
            rows = sc.seg_gpu[sc.seg_job == j]
            t0 = sc.seg_t0_s[sc.seg_job == j].min() / H
            ax.text(t0 + 0.03, rows.mean(), f"job {j}", va="center", fontsize=8, color="white")
        for j, t in sc.reservation_s.items():
            ax.axvline(t / H, color="k", ls="--", lw=1)
            ax.text(t / H + 0.02, 15.2, f"reservation of job {j}", fontsize=8, va="bottom")
        ax.set_ylim(-0.5, 17.0)
        ax.set_ylabel("GPU index")
        ax.set_title(f"{pol}: mean wait {sc.wait_s.mean() / 60:.0f} min, makespan {sc.makespan_s / H:.2f} h")
        ax.set_xlim(0, 3.0)
        ax.grid(False)
    axes[0].legend(loc="upper right", fontsize=8, ncols=3)
    axes[1].set_xlabel("time (h)")
    return fig


def fairshare_figure():
    """F = 2^(-U/S) against the usage share U for several normalised shares S."""
    fig, ax = new_figure(figsize=(7.0, 4.0))
    u = np.linspace(0, 1, 201)
    for i, s in enumerate((0.1, 0.25, 0.5, 1.0)):
        ax.plot(u * 100, S.fairshare_factor(u, s), color=PALETTE[i], lw=2, label=f"shares S = {s:.0%}")
        ax.plot([s * 100], [0.5], "o", color=PALETTE[i])
    ax.axhline(0.5, color="k", lw=0.8, ls=":")
    ax.set_xlabel("account's share of decayed cluster usage U (%)")
    ax.set_ylabel("fair-share factor F (0..1)")
    ax.set_title("Slurm classic fair-share: F = 2^(-U/S), F = 0.5 when U = S (dots)")
    ax.legend()
    return fig


def partition_tradeoff_figure(**kw):
    """Utilisation and waits vs nodes reserved for inference, against QOS priority on a shared pool."""
    r = partition_tradeoff(**kw)
    k = np.array(r["k"])
    fig, (a1, a2) = new_figure(1, 2, figsize=(10.0, 4.0))
    a1.plot(k, [x["inference_p95_s"] / 60 for x in r["rows"]], "o-", color=CLASS_COLORS["inference"],
            label="inference P95 wait, dedicated nodes")
    a1.axhline(r["shared_priority"]["inference_p95_s"] / 60, color=CLASS_COLORS["inference"], ls="--",
               label="inference P95, shared pool + QOS priority")
    a1.set_xlabel("nodes reserved for inference (8 GPUs each)")
    a1.set_ylabel("inference P95 wait (min)")
    a1.set_title("Reserving nodes removes inference waiting ...")
    a1.legend(fontsize=8)
    a2.plot(k, [x["utilisation"] * 100 for x in r["rows"]], "o-", color=PALETTE[7], label="GPU utilisation")
    a2.axhline(r["shared_priority"]["utilisation"] * 100, color=PALETTE[7], ls="--",
               label="utilisation, shared + QOS priority")
    a2.set_xlabel("nodes reserved for inference (8 GPUs each)")
    a2.set_ylabel("GPU utilisation (%)")
    ax2 = a2.twinx()
    ax2.plot(k, [x["training_p50_s"] / H for x in r["rows"]], "s-", color=CLASS_COLORS["training"],
             label="training P50 wait (right axis)")
    ax2.set_ylabel("training P50 wait (h)")
    ax2.grid(False)
    a2.set_title("... at the cost of utilisation and training waits")
    h1, l1 = a2.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    a2.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2)
    for a in (a1, a2):
        a.set_xticks(k)
    return fig
