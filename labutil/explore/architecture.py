"""Chapter 3 explorer and figures: size the four network planes of a cluster description and draw them.

Model: ``labutil.architecture.plan_cluster`` (every number drawn comes from the ``ClusterPlan`` it returns).
"""

from __future__ import annotations

import numpy as np

from .. import architecture, hardware
from ..plotting import new_figure, reset_axes
from ..widgets import Explorer, choice_slider, dropdown, pow2_slider

__all__ = ["architecture_explorer", "architecture_figure", "plane_bandwidth_figure"]

_PLANES = ("compute", "storage", "frontend", "oob")
_COLORS = {"compute": "#d62728", "storage": "#2ca02c", "frontend": "#1f77b4", "oob": "#7f7f7f"}


def _compute(n_gpus, server, oversubscription):
    return architecture.plan_cluster(n_gpus, server=server, compute_oversubscription=oversubscription)


def _draw(fig, plan, values):
    ax1, ax2 = fig.axes
    art = getattr(fig, "_arch_artists", None)
    if art is None:
        reset_axes(ax1)
        reset_axes(ax2)
        sw_bars = ax1.bar(list(_PLANES), np.ones(len(_PLANES)), color=[_COLORS[p] for p in _PLANES])
        ax1.set_ylabel("Switches")
        tier_bars = ax2.bar(["leaf", "spine", "core"], np.ones(3), color=["#ff9896", "#d62728", "#8c1c13"])
        ax2.set_ylabel("Compute-fabric switches")
        # value labels on the bars (created once, moved and rewritten on every update)
        labels = tuple(ax.text(b.get_x() + b.get_width() / 2, 0, "", ha="center", va="bottom", fontsize=8)
                       for ax, bars in ((ax1, sw_bars), (ax2, tier_bars)) for b in bars)
        art = fig._arch_artists = (sw_bars, tier_bars, labels)
    sw_bars, tier_bars, labels = art
    counts = [plan.plane(p).switches for p in _PLANES]
    for b, c in zip(sw_bars, counts):
        b.set_height(c)
    ax1.set_ylim(0, max(counts) * 1.15)
    ax1.set_title(f"{plan.n_gpus} GPUs in {plan.nodes} x {plan.server}: {plan.total_switches} switches")
    f = plan.compute_fabric
    tiers = [f.leaf_switches, f.spine_switches, f.core_switches]
    for b, c in zip(tier_bars, tiers):
        b.set_height(c)
    ax2.set_ylim(0, max(tiers) * 1.15 + 1)
    for t, b, c in zip(labels, list(sw_bars) + list(tier_bars), counts + tiers):
        t.set_position((b.get_x() + b.get_width() / 2, c))
        t.set_text(f"{c:,}")
    ax2.set_title(f"compute fabric: {f.tiers} tier(s), {f.per_gpu_bisection_gbps:.0f} Gb/s per GPU bisection")


def _summary(plan, values):
    f = plan.compute_fabric
    return (f"{plan.nodes:,} 台 {plan.server}、{plan.n_gpus:,} 张卡。计算网络 {f.tiers} 层："
            f"{f.leaf_switches} 叶 + {f.spine_switches} 脊 + {f.core_switches} 核心，"
            f"{f.cables:,} 根线缆、{f.transceivers:,} 个光模块；每卡跨二分带宽 {f.per_gpu_bisection_gbps:.0f} Gb/s"
            f"（网卡 {plan.plane('compute').port_gbps:g} Gb/s，收敛比 {values['oversubscription']:g}:1）。"
            f"四张网一共 {plan.total_switches:,} 台交换机。")


def architecture_explorer() -> Explorer:
    """GPUs, server model and compute-fabric oversubscription -> switches per plane and fabric tiers."""
    controls = {
        "n_gpus": pow2_slider("GPU 数量", 1024, 64, 16384),
        "server": dropdown("服务器", hardware.servers(), "DGX-H100"),
        "oversubscription": choice_slider("计算网收敛比", [1.0, 1.5, 2.0, 3.0, 4.0], 1.0),
    }
    return Explorer(controls, compute=_compute, draw=_draw, summary=_summary, title="集群描述 → 四张网络",
                    figsize=(10, 3.8), ncols=2)


def architecture_figure(plan: architecture.ClusterPlan, max_nodes_drawn: int = 6):
    """Block diagram: software stack, compute nodes, the four network planes, storage and management."""
    from matplotlib.patches import FancyBboxPatch

    fig, ax = new_figure(figsize=(11, 6.2))
    ax.set_axis_off()
    ax.set_xlim(0, 11)
    ax.set_ylim(0, 7.4)

    def box(x, y, w, h, text, color, fs=8):
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.06",
                                    facecolor=color + "22", edgecolor=color, lw=1.2))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fs)

    # software layer
    box(0.3, 6.55, 10.4, 0.6, "Software: driver / CUDA / NCCL / containers / Slurm or K8s / PyTorch, DeepSpeed, Megatron",
        "#9467bd", 8.5)
    # compute nodes
    shown = min(plan.nodes, max_nodes_drawn)
    xs = [0.5 + i * (8.2 / max(shown, 1)) for i in range(shown)]
    w = min(1.2, 8.2 / max(shown, 1) - 0.3)
    for i, x in enumerate(xs):
        label = f"node {i}" if i < shown - 1 or plan.nodes == shown else f"node {plan.nodes - 1}"
        box(x, 5.2, w, 0.95, f"{label}\n{plan.gpus_per_node} GPU", "#ff7f0e", 7.5)
    if plan.nodes > shown and shown > 1:
        ax.text((xs[-2] + w + xs[-1]) / 2, 5.65, "...", ha="center", fontsize=12)
    ax.text(9.0, 5.65, f"{plan.nodes} x {plan.server}\n{plan.n_gpus} GPUs", fontsize=8.5, va="center")
    # planes as buses
    ys = {"compute": 4.4, "storage": 3.5, "frontend": 2.6, "oob": 1.7}
    for p in plan.planes:
        y = ys[p.name]
        c = _COLORS[p.name]
        ax.plot([0.4, 8.8], [y, y], color=c, lw=3 if p.name == "compute" else 2)
        for x in xs:
            ax.plot([x + w / 2, x + w / 2], [5.2, y], color=c, lw=0.6, alpha=0.6)
            ax.plot([x + w / 2], [y], "o", color=c, ms=3.5)  # the node attaches to this plane
        if p.name == "compute":
            f = plan.compute_fabric
            split = f"\n= {f.leaf_switches} leaf + {f.spine_switches} spine" + (f" + {f.core_switches} core" if
                                                                               f.core_switches else "")
        else:
            split = ""
        ax.text(8.95, y, f"{p.name}: {p.ports_per_node} x {p.port_gbps:g} Gb/s per node\n"
                         f"{p.total_ports} ports, {p.switches} switches, {p.tiers} tier(s){split}", fontsize=7.5,
                va="center", color=c)
    box(0.5, 0.2, 3.3, 1.0, "Parallel file system /\nobject store (storage plane)", "#2ca02c", 8)
    box(4.2, 0.2, 2.2, 1.0, "Login / scheduler\n(front-end)", "#1f77b4", 8)
    box(6.8, 0.2, 2.0, 1.0, "BMC / monitoring\n(OOB)", "#7f7f7f", 8)
    for x, name in ((2.15, "storage"), (5.3, "frontend"), (7.8, "oob")):
        ax.plot([x, x], [1.2, ys[name]], color=_COLORS[name], lw=1.2)
    ax.set_title(f"Cluster architecture: {plan.n_gpus} GPUs, four layers, four network planes")
    return fig


def plane_bandwidth_figure(plan: architecture.ClusterPlan):
    """Per-node bandwidth of each plane (log scale): the compute fabric dwarfs the others."""
    fig, ax = new_figure(figsize=(7, 3.6))
    names = [p.name for p in plan.planes]
    vals = [p.node_gbps for p in plan.planes]
    ax.barh(names, vals, color=[_COLORS[n] for n in names])
    ax.set_xscale("log")
    for i, v in enumerate(vals):
        ax.text(v * 1.1, i, f"{v:,.0f} Gb/s", va="center", fontsize=8)
    ax.set_xlim(0.5, max(vals) * 6)
    ax.set_xlabel("Bandwidth per node (Gb/s, log scale)")
    ax.set_title(f"Network planes of one {plan.server} node")
    return fig
