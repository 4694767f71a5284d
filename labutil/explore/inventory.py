"""Explorers and figures for ch19 (上架与基础环境): inventory checks and rack elevations.

- ``inventory_explorer()``: pick a node of the sample inventory and plant one misconfiguration ->
  findings (``labutil.inventory.run_inventory_checks``) and a bar chart of each PCIe device's
  deliverable bandwidth at its capability vs as trained, plus the node's usable GPUs.
- ``rack_explorer()``: rack power budget and server model -> the rack elevation (``rack_layout``).
- ``link_loss_figure()``: bandwidth of every device of one node, capability vs trained.
- ``rack_elevation_figure()``: one or several rack elevations side by side.
- ``version_matrix_figure()``: the version of each component on each node, drift highlighted.
Axis labels in English with units. Explorer artists are created once and only updated.
"""

from __future__ import annotations

import html

import numpy as np
from matplotlib.patches import Patch, Rectangle

from .. import inventory as INV
from ..plotting import PALETTE, new_figure
from ..widgets import Explorer, dropdown, slider

__all__ = ["KIND_COLORS", "SEV_COLORS", "inventory_model", "inventory_explorer", "link_loss_figure", "MAX_ITEMS",
           "rack_elevation_figure", "rack_explorer", "version_matrix_figure"]

KIND_COLORS = {"server": PALETTE[0], "switch": PALETTE[2], "cable": "#999999", "empty": "#f2f2f2"}
SEV_COLORS = {"critical": "#d62728", "warning": "#ff7f0e", "info": "#2ca02c"}


# ------------------------------------------------------------------------------------------ inventory
def inventory_model(hostname: str = "gpu-node-01", drift: str = "none") -> dict:
    """Sample inventory with ``drift`` planted on ``hostname``: report, link table and usable GPUs of that node."""
    inv = INV.inject_drift(INV.sample_inventory(), hostname, drift)
    node = inv.node(hostname)
    rep = INV.run_inventory_checks(inv, hostname)
    rows = INV.node_links(node)
    return {"report": rep, "links": rows, "usable_gpus": INV.usable_gpus(node, inv.nvswitch), "gpus": node.gpus,
            "cap_gbs": np.array([r["cap_gbs"] for r in rows]), "trained_gbs": np.array([r["trained_gbs"] for r in rows]),
            "names": [r["name"] for r in rows], "lost_gbs": sum(r["lost_gbs"] for r in rows), "node": node}


def _bars(ax, r, width=0.4):
    x = np.arange(len(r["names"]))
    cap = ax.bar(x - width / 2, r["cap_gbs"], width, color="#bbbbbb", label="capability (LnkCap)")
    tr = ax.bar(x + width / 2, r["trained_gbs"], width, color=PALETTE[0], label="as trained (LnkSta)")
    ax.set_xticks(x, r["names"], rotation=60, fontsize=8)
    ax.set_ylabel("deliverable bandwidth per direction (GB/s)")
    ax.set_ylim(0, 80)
    # the trained bars change colour when a link trained down: the legend names every colour a bar can take
    pct = f"{INV.LOSS_CRITICAL_FRACTION:.0%}"
    down = [Patch(color=SEV_COLORS["critical"], label=f"trained down, >= {pct} lost (critical)"),
            Patch(color=SEV_COLORS["warning"], label=f"trained down, < {pct} lost (warning)")]
    ax.legend(handles=[cap, tr, *down], loc="upper right", fontsize=7.5, ncols=2)
    return cap, tr


def _draw_inventory(fig, r, values):
    ax = fig.axes[0]
    art = getattr(fig, "_inv_artists", None)
    if art is None:
        _, tr = _bars(ax, r)
        ax.set_title("PCIe devices of the node: capability vs trained link")
        fig.draw_without_rendering()
        fig.set_layout_engine("none")
        art = fig._inv_artists = {"trained": tr}
    for rect, h, lost in zip(art["trained"], r["trained_gbs"], r["cap_gbs"] - r["trained_gbs"]):
        rect.set_height(h)
        rect.set_color(SEV_COLORS["critical"] if lost / max(h + lost, 1e-9) >= INV.LOSS_CRITICAL_FRACTION
                       else (SEV_COLORS["warning"] if lost > 1e-9 else PALETTE[0]))
    ax.set_title(f"{values['hostname']}: PCIe devices, capability vs trained link "
                 f"({r['lost_gbs']:.1f} GB/s lost)")


def _inventory_summary(r, values) -> str:
    rep = r["report"]
    color = {"PASS": "#2ca02c", "WARN": "#ff7f0e", "FAIL": "#d62728"}[rep.status]
    rows = "".join(
        f"<tr><td style='color:{SEV_COLORS[f['severity']]}'>{f['severity']}</td><td>{html.escape(f['check'])}</td>"
        f"<td>{html.escape(f['component'])}</td><td style='text-align:left'>{html.escape(f['reason'])}</td></tr>"
        for f in rep.rows())
    table = (f"<table style='font-size:85%'><tr><th>severity</th><th>check</th><th>component</th><th>reason</th></tr>"
             f"{rows}</table>") if rows else "无发现（与基线一致）"
    return (f"<b style='color:{color}'>{rep.status}</b>：{rep.count('critical')} critical，{rep.count('warning')} warning；"
            f"可用 GPU {r['usable_gpus']} / {r['gpus']}；PCIe 损失合计 {r['lost_gbs']:.1f} GB/s<br>{table}")


def inventory_explorer() -> Explorer:
    """Node + planted drift -> findings table and bandwidth bars."""
    inv = INV.sample_inventory()
    controls = {
        "hostname": dropdown("节点", inv.hostnames, inv.hostnames[0]),
        "drift": dropdown("注入一个配置错误", INV.DRIFT_KINDS, "none"),
    }
    return Explorer(controls, inventory_model, _draw_inventory, summary=_inventory_summary,
                    title="清单检查：选一个节点，注入一个配置错误", figsize=(8.0, 4.0))


def link_loss_figure(hostname: str = "gpu-node-03"):
    """Capability vs trained bandwidth of every PCIe device of ``hostname`` in the sample (critical in red)."""
    r = inventory_model(hostname)
    fig, ax = new_figure(figsize=(8.0, 4.0))
    _, tr = _bars(ax, r)
    for rect, c, t in zip(tr, r["cap_gbs"], r["trained_gbs"]):
        lost = c - t
        if lost > 1e-9:
            rect.set_color(SEV_COLORS["critical"] if lost / c >= INV.LOSS_CRITICAL_FRACTION else SEV_COLORS["warning"])
            ax.text(rect.get_x() + rect.get_width() / 2, t + 1.5, f"-{lost / c:.0%}", ha="center", fontsize=8,
                    color=SEV_COLORS["critical"])
    ax.set_title(f"{hostname}: PCIe capability vs trained link")
    return fig


# ------------------------------------------------------------------------------------------ racks
MAX_ITEMS = 32


def _draw_rack(ax, lay, x0=0.0, width=1.0, label=True):
    """Draw one rack elevation at x0 (static, for figures)."""
    ru = lay["rack_units"]
    ax.add_patch(Rectangle((x0, 0.5), width, ru, fill=False, lw=1.5, ec="k"))
    for it in lay["items"]:
        ax.add_patch(Rectangle((x0, it.u_bottom - 0.5), width, it.height_u, fc=KIND_COLORS[it.kind], ec="k", lw=0.6))
        if label:
            txt = it.label + (f"  {it.kw:.1f} kW" if it.kind == "server" else "")
            ax.text(x0 + width / 2, it.u_bottom - 0.5 + it.height_u / 2, txt, ha="center", va="center",
                    fontsize=7 if it.height_u < 3 else 8)
    fr = lay["feeds"]["feed_rating_kw"]
    for k, side in enumerate((x0 - 0.09, x0 + width + 0.02)):
        ax.add_patch(Rectangle((side, 1.5), 0.07, ru - 2, fc=PALETTE[1], ec="k", lw=0.5))
        ax.text(side + 0.035, ru / 2, f"PDU {'AB'[k]} ({fr:.0f} kW)", rotation=90, ha="center", va="center", fontsize=7)
    ax.text(x0 + width / 2, ru + 1.6, f"limit {lay['rack_kw_limit']:.0f} kW: {lay['servers']} x {lay['server']}\n"
            f"{lay['rack_kw']:.1f} kW, {lay['gpus']} GPUs, {lay['cooling']}", ha="center", va="bottom", fontsize=8)


def _rack_axes(ax, ru, n_racks=1):
    ax.set_xlim(-0.3, n_racks * 1.45 - 0.15)
    ax.set_ylim(0, ru + 5.5)
    ax.set_yticks(range(1, ru + 1, 4))
    ax.set_ylabel("rack unit (U, 1 = bottom)")
    ax.set_xticks([])
    ax.grid(False)


def rack_elevation_figure(rack_kw_limits=(30.0, 41.0, 60.0), server: str = "DGX-H100"):
    """Rack elevations of ``server`` side by side, one per power budget (kW)."""
    lays = [INV.rack_layout(server, k) for k in rack_kw_limits]
    fig, ax = new_figure(figsize=(8.5, 6.0))
    for i, lay in enumerate(lays):
        _draw_rack(ax, lay, x0=i * 1.45)
    _rack_axes(ax, lays[0]["rack_units"], len(lays))
    ax.set_title(f"{server} rack elevations ({lays[0]['rack_units']}U) by rack power budget")
    return fig


def _draw_rack_explorer(fig, lay, values):
    ax = fig.axes[0]
    art = getattr(fig, "_rack_artists", None)
    ru = lay["rack_units"]
    if art is None:
        _rack_axes(ax, ru)
        ax.set_xlim(-0.3, 1.3)
        ax.add_patch(Rectangle((0, 0.5), 1, ru, fill=False, lw=1.5, ec="k"))
        rects = [ax.add_patch(Rectangle((0, 0), 1, 1, fc="w", ec="k", lw=0.6, visible=False)) for _ in range(MAX_ITEMS)]
        texts = [ax.text(0.5, 0, "", ha="center", va="center", fontsize=8) for _ in range(MAX_ITEMS)]
        pdus = [ax.add_patch(Rectangle((x, 1.5), 0.07, ru - 2, fc=PALETTE[1], ec="k", lw=0.5)) for x in (-0.09, 1.02)]
        pdu_txt = [ax.text(x + 0.035, ru / 2, "", rotation=90, ha="center", va="center", fontsize=7) for x in (-0.09, 1.02)]
        head = ax.text(0.5, ru + 1.6, "", ha="center", va="bottom", fontsize=9)
        ax.set_title("Rack elevation")
        fig.draw_without_rendering()
        fig.set_layout_engine("none")
        art = fig._rack_artists = {"rects": rects, "texts": texts, "pdu_txt": pdu_txt, "head": head}
    items = lay["items"][:MAX_ITEMS]
    for k, (rect, txt) in enumerate(zip(art["rects"], art["texts"])):
        if k < len(items):
            it = items[k]
            rect.set_bounds(0, it.u_bottom - 0.5, 1, it.height_u)
            rect.set_facecolor(KIND_COLORS[it.kind])
            rect.set_visible(True)
            txt.set_position((0.5, it.u_bottom - 0.5 + it.height_u / 2))
            txt.set_text(it.label + (f"  {it.kw:.1f} kW" if it.kind == "server" else ""))
        else:
            rect.set_visible(False)
            txt.set_text("")
    fr = lay["feeds"]["feed_rating_kw"]
    for k, t in enumerate(art["pdu_txt"]):
        t.set_text(f"PDU {'AB'[k]} ({fr:.0f} kW)")
    art["head"].set_text(f"{lay['servers']} x {lay['server']} = {lay['rack_kw']:.1f} kW of {lay['rack_kw_limit']:.0f} kW "
                         f"({lay['limit_by']}-limited), {lay['gpus']} GPUs")


def _rack_summary(lay, values) -> str:
    return (f"每机柜 {lay['servers']} 台 {lay['server']}（受{'功率' if lay['limit_by'] == 'power' else '空间'}限制：按功率可放 "
            f"{lay['by_power']} 台，按空间可放 {lay['by_space']} 台），{lay['gpus']} 张 GPU，{lay['rack_kw']:.1f} kW；"
            f"2N 供电每路 PDU 额定 ≥ {lay['feeds']['feed_rating_kw']:.1f} kW；散热建议：{lay['cooling']}")


def rack_explorer() -> Explorer:
    """Rack power budget and server model -> rack elevation."""
    controls = {
        "rack_kw_limit": slider("机柜功率上限 (kW)", 41.0, 12.0, 80.0, 1.0, fmt=".0f"),
        "server": dropdown("服务器", ("DGX-H100", "DGX-A100", "HGX-H800"), "DGX-H100"),
    }

    def compute(rack_kw_limit, server):
        return INV.rack_layout(server, rack_kw_limit)

    return Explorer(controls, compute, _draw_rack_explorer, summary=_rack_summary,
                    title="机柜立面图：功率预算决定一柜放几台", figsize=(6.0, 6.5))


# ------------------------------------------------------------------------------------------ drift matrix
def version_matrix_figure(fields=("driver", "fabric_manager", "cuda", "ofed", "nccl", "bios_version")):
    """Component versions per node of the sample; cells that differ from the majority in orange,
    fabric manager != driver in red."""
    inv = INV.sample_inventory()
    drift = {(f.component, f.check.split(".", 1)[1]) for f in INV.check_drift(inv, fields)}
    fig, ax = new_figure(figsize=(8.5, 3.4))
    for i, n in enumerate(inv.nodes):
        for j, f in enumerate(fields):
            v = n.versions.get(f, "-")
            color = "#e8f4e8"
            if (n.hostname, f) in drift:
                color = SEV_COLORS["warning"]
            if f == "fabric_manager" and v != n.versions["driver"]:
                color = SEV_COLORS["critical"]
            ax.add_patch(Rectangle((j, i), 1, 1, fc=color, ec="w", lw=2))
            ax.text(j + 0.5, i + 0.5, v, ha="center", va="center", fontsize=8)
    ax.set_xlim(0, len(fields))
    ax.set_ylim(len(inv.nodes), 0)
    ax.set_xticks(np.arange(len(fields)) + 0.5, fields, fontsize=9)
    ax.set_yticks(np.arange(len(inv.nodes)) + 0.5, inv.hostnames, fontsize=9)
    ax.tick_params(length=0)
    ax.grid(False)
    ax.set_title("Version matrix (orange: differs from the majority; red: fabric manager != driver)", fontsize=10)
    return fig
