"""Chapter 3 explorer: size the four network planes of a cluster description."""

from __future__ import annotations

import numpy as np

from .. import architecture, hardware
from ..plotting import reset_axes
from ..widgets import Explorer, choice_slider, dropdown, pow2_slider

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
        art = fig._arch_artists = (sw_bars, tier_bars)
    sw_bars, tier_bars = art
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
    ax2.set_title(f"compute fabric: {f.tiers} tier(s), {f.per_gpu_bisection_gbps:.0f} Gb/s per GPU bisection")


def _summary(plan, values):
    f = plan.compute_fabric
    return (f"计算网络 {f.tiers} 层：{f.leaf_switches} 叶 + {f.spine_switches} 脊 + {f.core_switches} 核心，"
            f"{f.cables:,} 根线缆、{f.transceivers:,} 个光模块；每卡跨二分带宽 {f.per_gpu_bisection_gbps:.0f} Gb/s")


def architecture_explorer() -> Explorer:
    """GPUs, server model and compute-fabric oversubscription -> switches per plane and fabric tiers."""
    controls = {
        "n_gpus": pow2_slider("GPU 数量", 1024, 64, 16384),
        "server": dropdown("服务器", hardware.servers(), "DGX-H100"),
        "oversubscription": choice_slider("计算网收敛比", [1.0, 1.5, 2.0, 3.0, 4.0], 1.0),
    }
    return Explorer(controls, compute=_compute, draw=_draw, summary=_summary, title="集群描述 → 四张网络",
                    figsize=(10, 3.8), ncols=2)
