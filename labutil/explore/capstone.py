"""Capstone explorer and figures (ch30 综合案例: 千卡集群端到端设计).

The explorer: deadline, GPU server type, compute fabric (network speed) and capex budget ->
``labutil.capstone.design_cluster`` re-runs the whole chain (GPUs, switches, MW, USD, goodput)
and three panels update in place: capex vs budget, facility power, schedule vs deadline.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import FuncFormatter

from .. import capstone as CS
from .. import widgets
from ..plotting import PALETTE, new_figure

__all__ = ["CAPEX_PARTS", "POWER_PARTS", "draw_design", "design_for", "capstone_explorer", "design_summary_figure",
           "budget_figure", "operations_figure"]

CAPEX_PARTS = (("servers_usd", "GPU servers"), ("network_usd", "compute network"), ("storage_usd", "storage"),
               ("facility_usd", "facility build-out"))
POWER_PARTS = ("GPU servers", "optics", "cooling + losses (PUE)")


def _power_parts_kw(d: CS.Design):
    p = d.power
    return [float(p.server_kw), float(d.network.optics_kw), float(p.overhead_kw)]


def _build(fig, axes):
    a0, a1, a2 = axes
    art = {"capex": [], "power": []}
    bottom = 0.0
    for i, (_k, label) in enumerate(CAPEX_PARTS):
        art["capex"].append(a0.bar(0, 1.0, bottom=bottom, color=PALETTE[i], width=0.6, label=label)[0])
    art["budget"] = a0.axhline(1.0, color="k", ls="--", lw=1.5, label="budget")
    art["capex_text"] = a0.text(0, 1.0, "", ha="center", va="bottom", fontsize=8)
    a0.set_xticks([0], ["capex"])
    a0.set_xlim(-0.6, 1.9)
    a0.set_ylabel("capex (million USD)")
    a0.legend(fontsize=7, loc="upper right")
    for i, label in enumerate(POWER_PARTS):
        art["power"].append(a1.bar(0, 1.0, color=PALETTE[4 + i], width=0.6, label=label)[0])
    art["power_text"] = a1.text(0, 1.0, "", ha="center", va="bottom", fontsize=8)
    a1.set_xticks([0], ["facility"])
    a1.set_xlim(-0.6, 1.9)
    a1.set_ylabel("facility power (MW)")
    a1.legend(fontsize=7, loc="upper right")
    art["sched"] = a2.bar([0, 1], [1.0, 1.0], color=["0.6", PALETTE[2]], width=0.6)
    art["sched_text"] = [a2.text(i, 1.0, "", ha="center", va="bottom", fontsize=8) for i in (0, 1)]
    a2.set_xticks([0, 1], ["deadline", "estimated"])
    a2.set_ylabel("training time (days)")
    fig._capstone = art
    return art


def draw_design(fig, d: CS.Design, axes=None) -> None:
    """Draw (or update in place) the three panels for design ``d``."""
    axes = fig.axes if axes is None else axes
    art = getattr(fig, "_capstone", None) or _build(fig, axes)
    a0, a1, a2 = axes[:3]
    c = d.tco.capex
    bottom = 0.0
    for bar, (k, _l) in zip(art["capex"], CAPEX_PARTS):
        h = getattr(c, k) / 1e6
        bar.set_y(bottom)
        bar.set_height(h)
        bottom += h
    b = d.req.budget_usd / 1e6
    art["budget"].set_ydata([b, b])
    art["capex_text"].set_position((0, bottom))
    art["capex_text"].set_text(f"{bottom:,.1f}")
    a0.set_ylim(0, 1.7 * max(bottom, b))  # the legend (top quarter) stays clear of the budget line
    a0.set_title(("within" if d.within_budget else "OVER") + f" budget {b:,.0f} M USD", fontsize=9)
    bottom = 0.0
    for bar, h in zip(art["power"], _power_parts_kw(d)):
        bar.set_y(bottom / 1e3)
        bar.set_height(h / 1e3)
        bottom += h
    art["power_text"].set_position((0, bottom / 1e3))
    art["power_text"].set_text(f"{bottom / 1e3:.2f} MW")
    a1.set_ylim(0, 1.3 * bottom / 1e3)
    a1.set_title(f"{int(d.power.racks)} racks, {d.cooling}", fontsize=9)
    days = [d.req.deadline_days, d.compute.estimated_days]
    for bar, t, v in zip(art["sched"], art["sched_text"], days):
        bar.set_height(v)
        t.set_position((bar.get_x() + bar.get_width() / 2, v))
        t.set_text(f"{v:.0f}")
    art["sched"][1].set_color(PALETTE[2] if d.compute.meets_deadline else PALETTE[3])
    a2.set_ylim(0, 1.2 * max(days))
    a2.set_title(f"{d.compute.training_gpus:,} GPUs, MFU {d.compute.estimated_mfu:.0%}, "
                 f"goodput {d.reliability.goodput:.1%}", fontsize=9)


def design_for(deadline_days, server, fabric, budget_musd) -> CS.Design:
    """Model behind the explorer: the default customer with these four requirements changed."""
    req = CS.requirements(deadline_days=float(deadline_days), server=server, fabric=fabric,
                          budget_usd=float(budget_musd) * 1e6)
    return CS.design_cluster(req, simulate=False)


def _summary(d: CS.Design, values) -> str:
    s = d.summary()
    budget_musd = d.req.budget_usd / 1e6
    if s["within_budget"]:
        money = f"capex {s['capex_musd']:.1f} M USD（预算 {budget_musd:.0f} M USD 以内）"
    else:
        money = (f"<b style='color:#b00'>超预算</b>：capex {s['capex_musd']:.1f} M USD，比预算 {budget_musd:.0f} M USD "
                 f"多 {s['capex_musd'] - budget_musd:.1f} M USD")
    late = "" if s["meets_deadline"] else "，<b style='color:#b00'>赶不上截止日期</b>"
    return (f"训练 {s['training_gpus']:,} 卡 + 推理 {s['inference_gpus']} 卡，{s['nodes']} 台服务器，"
            f"交换机 {s['switches']} 台，设施功率 {s['facility_mw']:.2f} MW，{money}，"
            f"{d.req.years:g} 年 TCO {s['tco_musd']:.1f} M USD，goodput {s['goodput']:.1%}，"
            f"预计 {s['estimated_days']:.0f} 天（截止 {d.req.deadline_days:.0f} 天）{late}")


def capstone_explorer() -> widgets.Explorer:
    """Deadline, GPU server, compute fabric, budget -> the whole design updates."""
    r = CS.Requirements()
    controls = {
        "deadline_days": widgets.slider("训练截止 (天)", r.deadline_days, 20.0, 180.0, 5.0, fmt=".0f"),
        "server": widgets.dropdown("GPU 服务器", CS.SERVERS, r.server),
        "fabric": widgets.dropdown("计算网络", tuple(CS.FABRIC_BUILDS), r.fabric),
        "budget_musd": widgets.slider("capex 预算 (M USD)", r.budget_usd / 1e6, 20.0, 300.0, 5.0, fmt=".0f"),
    }
    return widgets.Explorer(controls, compute=design_for, draw=lambda fig, d, v: draw_design(fig, d),
                            summary=_summary, title="千卡集群端到端设计", figsize=(10.0, 4.2), ncols=3)


def design_summary_figure(d: CS.Design | None = None):
    """Static version of the explorer's three panels for one design."""
    d = CS.design_cluster(simulate=False) if d is None else d
    fig, axes = new_figure(1, 3, figsize=(10.0, 4.2))
    draw_design(fig, d, list(axes))
    return fig


def budget_figure(options):
    """Balanced vs 'top GPU + slow network' under one budget (``capstone.budget_alternatives`` rows)."""
    fig, (a0, a1) = new_figure(1, 2, figsize=(10.0, 4.2))
    labels = [o.label.replace(" (balanced)", "\n(balanced)").replace(" + ", "\n+ ") for o in options]
    x = np.arange(len(options))
    a0.bar(x, [o.n_gpus for o in options], color=[PALETTE[i] for i in range(len(options))])
    for i, o in enumerate(options):
        a0.text(i, o.n_gpus, f"{o.n_gpus:,}", ha="center", va="bottom", fontsize=8)
    a0.set_xticks(x, labels, fontsize=7)
    a0.set_ylabel("GPUs bought (count)")
    a0.set_title("same budget, GPUs bought", fontsize=9)
    a1.bar(x - 0.2, [o.peak_pflops for o in options], width=0.4, color="0.7", label="peak")
    a1.bar(x + 0.2, [o.delivered_pflops for o in options], width=0.4, color=PALETTE[2],
           label="delivered (MFU x scaling eff.)")
    for i, o in enumerate(options):
        a1.text(i + 0.2, o.delivered_pflops, f"{o.delivered_pflops:,.0f}", ha="center", va="bottom", fontsize=8)
    a1.set_xticks(x, labels, fontsize=7)
    a1.set_ylabel("BF16 compute (PFLOP/s)")
    a1.legend(fontsize=7)
    a1.set_title("delivered compute", fontsize=9)
    return fig


def operations_figure(d: CS.Design | None = None, n_gpus=None):
    """Failures/day and goodput vs fleet size for a fleet built like ``d``; 1k design and 10k marked."""
    d = CS.design_cluster(simulate=False) if d is None else d
    sw = CS.scale_sweep(d, n_gpus)
    fig, (a0, a1) = new_figure(1, 2, figsize=(10.0, 4.0))
    a0.plot(sw["n_gpus"], sw["failures_per_day"], "o-", color=PALETTE[3])
    a0.set_xscale("log", base=2)
    a0.set_xlabel("GPUs in one synchronous job (count)")
    a0.set_ylabel("interruptions per day")
    a1.plot(sw["n_gpus"], 100 * sw["goodput"], "o-", color=PALETTE[0], label="goodput at Young interval")
    a1.set_xscale("log", base=2)
    a1.set_xlabel("GPUs in one synchronous job (count)")
    a1.set_ylabel("goodput (%)")
    for ax in (a0, a1):
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))  # 1,024 rather than 2^10
        ax.axvline(d.compute.training_gpus, color="0.5", ls=":", lw=1)
        ax.axvline(10_000, color="k", ls="--", lw=1)
    # both panels name their two vertical lines: at the top on the left (the curve rises), at the bottom on
    # the right (the curve falls), where they cross no data
    for ax, top in ((a0, True), (a1, False)):
        lo, hi = ax.get_ylim()
        y, va = (hi - 0.03 * (hi - lo), "top") if top else (lo + 0.03 * (hi - lo), "bottom")
        ax.text(10_000, y, " 10k GPUs", fontsize=8, va=va)
        ax.text(d.compute.training_gpus, y, f" design ({d.compute.training_gpus:,} GPUs)", fontsize=8, va=va,
                color="0.4")
    a1.legend(fontsize=7, loc="upper right")
    a0.set_title("interruptions = sum of part rates x count (Llama 3 rates)", fontsize=9)
    a1.set_title(f"goodput (restart {d.req.restart_s / 60:.0f} min, checkpoint {d.reliability.checkpoint_s:.0f} s)",
                 fontsize=9)
    return fig
