"""Chapter 12 explorers and figures: fabric sizing, drawn leaf-spine topologies, fat-tree scaling.

Models: ``labutil.topology.size_fabric`` (rail-optimized leaf-spine / three-tier fat tree), ``fat_tree``,
``torus``. Figures are drawn with plain matplotlib (no networkx).
"""

from __future__ import annotations

import numpy as np

from .. import hardware, topology, validate
from ..plotting import PALETTE, new_figure, reset_axes
from ..widgets import Explorer, choice_slider, dropdown, pow2_slider, toggle

__all__ = ["TIER_COLORS", "fabric_for", "fabric_geometry", "draw_fabric", "rail_vs_plain_figure",
           "fabric_scaling_figure", "fat_tree_capacity_figure", "torus_vs_fat_tree_figure", "fabric_sizing_explorer"]

TIER_COLORS = {"node": "#7f7f7f", "leaf": "#1f77b4", "spine": "#ff7f0e", "core": "#2ca02c"}


def fabric_for(n_gpus, switch="QM9700", link_gbps=400.0, oversubscription=1.0, rail_optimized=True,
               server="DGX-H100") -> topology.Fabric:
    """``size_fabric`` for catalog ``switch`` and the NIC layout of catalog ``server``.

    ``link_gbps`` is the NIC speed; it must not exceed the switch's native port speed.
    """
    sw = hardware.switch(switch)
    srv = hardware.server(server)
    link = validate.positive("link_gbps", link_gbps)
    if link > sw.port_gbps:
        raise ValueError(f"link_gbps must be <= the {sw.name} port speed ({sw.port_gbps:g} Gbit/s); got {link:g}")
    return topology.size_fabric(n_gpus, nics_per_node=srv.compute_nics, gpus_per_node=srv.gpus,
                                switch_ports=sw.ports, link_gbps=link, oversubscription=oversubscription,
                                rail_optimized=rail_optimized)


# ---------------------------------------------------------------------------------------------
# Drawing a fabric (a window on the first nodes / switches when it is large)
# ---------------------------------------------------------------------------------------------
def _leaf_of(f: topology.Fabric, node: int, nic: int) -> int:
    """Index of the leaf that NIC ``nic`` of ``node`` plugs into (rule 2 of size_fabric)."""
    if f.tiers == 1:
        return 0
    d = f.down_ports_per_leaf
    if f.rail_optimized and f.nics_per_node > 1:
        per_rail = f.leaf_switches // f.nics_per_node
        return nic * per_rail + node // d
    return (node * f.nics_per_node + nic) // d


_YS = {"node": 0.08, "leaf": 0.40, "spine": 0.68, "core": 0.93}
_HALF_H = 0.035


def _xs(n_show):
    return np.linspace(0, 1, n_show + 2)[1:-1] if n_show else np.array([])


def fabric_geometry(f: topology.Fabric, max_nodes: int = 8, max_switches: int = 16) -> dict:
    """Positions of the drawn boxes per tier, link segments with colors, and row labels (no drawing).

    A window on the first ``max_nodes`` nodes and the switches they reach (at most ``max_switches`` per
    tier) when the fabric is large; the labels state the full counts.
    """
    n_nodes = min(f.n_nodes, max_nodes)
    leaves = sorted({_leaf_of(f, n, i) for n in range(n_nodes) for i in range(f.nics_per_node)})[:max_switches]
    leaf_pos = {lf: k for k, lf in enumerate(leaves)}
    node_x, leaf_x = _xs(n_nodes), _xs(len(leaves))
    spine_x = _xs(min(f.spine_switches, max_switches))
    core_x = _xs(min(f.core_switches, max_switches))
    segs, colors = [], []
    y0, y1, y2, y3 = _YS["node"], _YS["leaf"], _YS["spine"], _YS["core"]
    for n in range(n_nodes):
        for i in range(f.nics_per_node):
            lf = _leaf_of(f, n, i)
            if lf in leaf_pos:
                segs.append([(node_x[n], y0 + _HALF_H), (leaf_x[leaf_pos[lf]], y1 - _HALF_H)])
                colors.append(PALETTE[i % len(PALETTE)] if f.rail_optimized else "#555555")
    for lx in leaf_x:
        for sx in spine_x:
            segs.append([(lx, y1 + _HALF_H), (sx, y2 - _HALF_H)])
            colors.append("#999999")
    if len(core_x):
        planes = f.up_ports_per_leaf                      # spine j of every pod belongs to plane j
        per_plane = max(f.core_switches // planes, 1)
        for s_idx, sx in enumerate(spine_x):
            plane = s_idx % planes
            for c_idx in range(plane * per_plane, min((plane + 1) * per_plane, len(core_x))):
                segs.append([(sx, y2 + _HALF_H), (core_x[c_idx], y3 - _HALF_H)])
                colors.append("#999999")

    def label(name, shown, total):
        # two short lines, so the label fits left of the first box instead of running into it
        return f"{name}: {total:,}" + (f"\n(first {shown} drawn)" if shown < total else "")

    return {"xs": {"node": node_x, "leaf": leaf_x, "spine": spine_x, "core": core_x},
            "labels": {"node": label("nodes", n_nodes, f.n_nodes), "leaf": label("leaf", len(leaves), f.leaf_switches),
                       "spine": label("spine", len(spine_x), f.spine_switches),
                       "core": label("core", len(core_x), f.core_switches)},
            "segments": segs, "colors": colors,
            "top": "core" if f.core_switches else ("spine" if f.spine_switches else "leaf")}


def _title(f: topology.Fabric) -> str:
    kind = "rail-optimized (NIC color = rail)" if f.rail_optimized else "not rail-optimized"
    return f"{f.n_gpus:,} GPUs, {f.tiers}-tier, {kind}"


class _FabricArtists:
    """The artists of one fabric drawing, updated in place (ax.clear() costs ~100 ms per redraw)."""

    def __init__(self, ax):
        from matplotlib.collections import LineCollection

        reset_axes(ax)
        ax.grid(False)
        ax.set_axis_off()
        self.ax = ax
        self.lines = LineCollection([], linewidths=0.6, zorder=1)
        ax.add_collection(self.lines)
        self.boxes = {t: ax.scatter([], [], marker="s", s=90, color=TIER_COLORS[t], edgecolors="k",
                                    linewidths=0.5, zorder=3) for t in _YS}
        self.texts = {t: ax.text(-0.03, _YS[t], "", ha="right", va="center", fontsize=8) for t in _YS}
        ax.set_xlim(-0.42, 1.02)
        self.title = ax.set_title("", fontsize=10)

    def update(self, f: topology.Fabric, max_nodes=8, max_switches=16) -> dict:
        g = fabric_geometry(f, max_nodes, max_switches)
        self.lines.set_segments(g["segments"])
        self.lines.set_color(g["colors"] or ["k"])
        for t, xs in g["xs"].items():
            self.boxes[t].set_offsets(np.column_stack([xs, np.full(len(xs), _YS[t])]) if len(xs)
                                      else np.empty((0, 2)))
            self.texts[t].set_text(g["labels"][t] if len(xs) else "")
        self.ax.set_ylim(0, _YS[g["top"]] + 0.08)
        self.title.set_text(_title(f))
        return {"nodes": len(g["xs"]["node"]), "leaves": len(g["xs"]["leaf"]), "spines": len(g["xs"]["spine"]),
                "lines": len(g["segments"])}


def draw_fabric(ax, f: topology.Fabric, max_nodes: int = 8, max_switches: int = 16) -> dict:
    """Draw nodes, leaves, spines and cores of ``f`` on ``ax`` (a window when large). Returns what was drawn."""
    return _FabricArtists(ax).update(f, max_nodes, max_switches)


def rail_vs_plain_figure(n_nodes: int = 4, nics_per_node: int = 4, switch_ports: int = 8):
    """Side by side: the same small cluster wired rail-optimized and not (NIC colors = rail index)."""
    n_nodes = validate.integer("n_nodes", n_nodes, lo=1, hi=16)
    fig, axes = new_figure(1, 2, figsize=(10, 4.2))
    out = []
    for ax, rail in zip(axes, (True, False)):
        f = topology.size_fabric(n_nodes * nics_per_node, nics_per_node=nics_per_node, gpus_per_node=nics_per_node,
                                 switch_ports=switch_ports, rail_optimized=rail)
        draw_fabric(ax, f, max_nodes=n_nodes)
        ax.set_title(("Rail-optimized" if rail else "Not rail-optimized (node per leaf)") +
                     f": {f.leaf_switches} leaf + {f.spine_switches} spine, {switch_ports}-port switches\n"
                     f"same-rail peers one switch hop away: {f.rail_peers_one_hop} node(s)", fontsize=9)
        out.append(f)
    fig.rail_fabrics = out
    return fig


# ---------------------------------------------------------------------------------------------
# Scaling figures
# ---------------------------------------------------------------------------------------------
def fabric_scaling_figure(switch: str = "QM9700", ratios=(1.0, 2.0), gpu_counts=None):
    """Switches and cables vs GPU count (DGX H100 nodes, rail-optimized) for several oversubscriptions."""
    sw = hardware.switch(switch)
    if gpu_counts is None:
        gpu_counts = [2 ** i for i in range(5, 17)]
    fig, (a1, a2) = new_figure(1, 2, figsize=(10, 4))
    for k, o in enumerate(ratios):
        fabs = [fabric_for(n, switch=sw.name, oversubscription=o) for n in gpu_counts]
        col = PALETTE[k]
        a1.plot(gpu_counts, [f.total_switches for f in fabs], "o-", color=col, label=f"{o:g}:1 switches")
        cables = [f.cables for f in fabs]
        optics = [f.transceivers for f in fabs]
        if cables == optics:
            # all-optical links with dual-port modules: one module per two link ends, so the two counts are
            # equal by construction; one series, said so, instead of two lines drawn on top of each other
            a2.plot(gpu_counts, cables, "o-", color=col, label=f"{o:g}:1 cables = transceivers")
        else:
            a2.plot(gpu_counts, cables, "o-", color=col, label=f"{o:g}:1 cables")
            a2.plot(gpu_counts, optics, "s--", color=col, alpha=0.7, label=f"{o:g}:1 transceivers")
        if k == 0:
            for f_prev, f in zip(fabs, fabs[1:]):
                if f.tiers != f_prev.tiers:
                    for ax in (a1, a2):
                        ax.axvline(f.n_gpus, color="k", ls=":", lw=1)
                    # label at the bottom of the axes, right of the dotted line: every count right of a tier
                    # change is far above the bottom, so the label never sits on a data marker
                    a1.annotate(f"{f.tiers} tiers from {f.n_gpus:,} GPUs", (f.n_gpus, 0.03),
                                xycoords=("data", "axes fraction"), xytext=(4, 0), textcoords="offset points",
                                fontsize=8, va="bottom", ha="left",
                                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.9))
    for ax in (a1, a2):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("GPUs (DGX H100 nodes, 1 NIC per GPU)")
        ax.legend(fontsize=8, loc="upper left")
    a1.set_ylabel(f"{sw.name} switches (count)")
    a2.set_ylabel("Cables / transceivers (count)")
    a1.set_title(f"Switches vs scale ({sw.ports}-port {sw.port_gbps:g}G)")
    a2.set_title("Links and optics grow ~ tiers x GPUs")
    return fig


def fat_tree_capacity_figure(radices=(32, 40, 64, 128)):
    """Hosts a 2-tier (r^2/2) and 3-tier (r^3/4) non-blocking fat tree connects vs switch radix."""
    r = np.array([validate.integer("radix", x, lo=4) for x in radices])
    fig, ax = new_figure(figsize=(8, 4))
    x = np.arange(len(r))
    # the model's counts: topology.max_nics (leaf-spine, r^2/2 at 1:1) and topology.fat_tree (k^3/4 hosts)
    two = np.array([topology.max_nics(int(v), 2) for v in r], dtype=float)
    three = np.array([topology.fat_tree(int(v)).hosts for v in r], dtype=float)
    ax.bar(x - 0.2, two, 0.4, label="2 tiers: r^2/2", color=PALETTE[0])
    ax.bar(x + 0.2, three, 0.4, label="3 tiers: r^3/4 (k-ary fat tree)", color=PALETTE[2])
    for xi, a, b in zip(x, two, three):
        ax.text(xi - 0.2, a, f"{a:,.0f}", ha="center", va="bottom", fontsize=8)
        ax.text(xi + 0.2, b, f"{b:,.0f}", ha="center", va="bottom", fontsize=8)
    ax.set_yscale("log")
    ax.set_xticks(x, [f"{v}-port" for v in r])
    ax.set_ylabel("Max NIC ports at 1:1 (count, log scale)")
    ax.set_xlabel("Switch radix")
    ax.set_title("Non-blocking fat tree capacity vs switch radix")
    ax.legend(loc="upper left")
    return fig


def torus_vs_fat_tree_figure(n_side=(4, 6, 8, 10, 12, 16)):
    """3D torus k x k x k vs a full k-ary fat tree with at least as many hosts: path length and bisection.

    Both sides count the same thing: links on the path from one endpoint to another (a fat tree's host
    links included), mean over all destinations including the source (``Torus.avg_hops`` and
    ``topology.fat_tree_path_links``), and the maximum (diameter).
    """
    ks = [validate.integer("n_side", k, lo=2) for k in n_side]
    tor = [topology.torus((k, k, k)) for k in ks]
    nodes = np.array([t.nodes for t in tor])
    ft_k = [int(2 * np.ceil((4 * n) ** (1 / 3) / 2 - 1e-9)) for n in nodes]   # smallest even k with k^3/4 >= n
    ft_k = [k + 2 if k ** 3 // 4 < n else k for k, n in zip(ft_k, nodes)]
    ft = [topology.fat_tree_path_links(k) for k in ft_k]
    fig, (a1, a2) = new_figure(1, 2, figsize=(10, 3.8))
    a1.plot(nodes, [t.diameter for t in tor], "o-", color=PALETTE[0], label="3D torus: max")
    a1.plot(nodes, [t.avg_hops for t in tor], "s--", color=PALETTE[0], label="3D torus: mean")
    a1.plot(nodes, [f["max_links"] for f in ft], "o-", color=PALETTE[2], label="3-tier fat tree: max")
    a1.plot(nodes, [f["mean_links"] for f in ft], "s--", color=PALETTE[2], label="3-tier fat tree: mean")
    a1.set_xlabel("Endpoints (count)")
    a1.set_ylabel("Path length (links, endpoint to endpoint)")
    a1.set_title("Path length, counted the same way")
    a2.plot(nodes, [t.bisection / (t.nodes / 2) for t in tor], "o-", label="3D torus")
    a2.axhline(1.0, color=PALETTE[2], label="non-blocking fat tree")
    a2.set_xlabel("Endpoints (count)")
    a2.set_ylabel("Bisection links per endpoint in a half")
    a2.set_title("Bisection shrinks as k grows: 4/k")
    for ax in (a1, a2):
        ax.set_xscale("log")
        ax.legend(fontsize=8)
    return fig


# ---------------------------------------------------------------------------------------------
# Explorer
# ---------------------------------------------------------------------------------------------
_BAR_LABELS = ["leaf", "spine", "core", "cables", "transceivers"]


def _bar_values(f: topology.Fabric):
    return [f.leaf_switches, f.spine_switches, f.core_switches, f.cables, f.transceivers]


def _draw_explorer(fig, f: topology.Fabric, values):
    """Update the drawing and the count bars in place (artists are built on the first call)."""
    ax1, ax2 = fig.axes[0], fig.axes[1]
    state = getattr(fig, "_fabric_state", None)
    if state is None:
        art = _FabricArtists(ax1)
        reset_axes(ax2)
        colors = [TIER_COLORS["leaf"], TIER_COLORS["spine"], TIER_COLORS["core"], "#9467bd", "#8c564b"]
        bars = ax2.bar(_BAR_LABELS, [1] * 5, color=colors)
        texts = [ax2.text(b.get_x() + b.get_width() / 2, 1, "", ha="center", va="bottom", fontsize=8) for b in bars]
        ax2.set_yscale("log")
        ax2.set_ylabel("Count (log scale)")
        state = fig._fabric_state = {"art": art, "bars": bars, "texts": texts, "title": ax2.set_title("", fontsize=10)}
    state["art"].update(f)
    vals = _bar_values(f)
    for b, t, v in zip(state["bars"], state["texts"], vals):
        b.set_height(v if v > 0 else 0.7)  # a zero count draws no bar (0.7 is the axis floor), only its "0"
        t.set_position((b.get_x() + b.get_width() / 2, max(v, 0.8)))
        t.set_text(f"{v:,}" if v > 0 else "0 (none)")
    ax2.set_ylim(0.7, max(vals) * 3)
    state["title"].set_text(f"Per-GPU bisection {f.per_gpu_bisection_gbps:,.0f} Gbit/s "
                            f"(leaf {f.down_ports_per_leaf}:{f.up_ports_per_leaf})")


def _summary(f: topology.Fabric, values):
    rail = "轨道优化" if f.rail_optimized else "非轨道优化"
    return (f"{f.n_gpus:,} GPU / {f.n_nodes:,} 节点 / {f.n_nics:,} 个网卡端口 → <b>{f.tiers} 层</b>（{rail}）："
            f"leaf <b>{f.leaf_switches}</b>、spine <b>{f.spine_switches}</b>、core <b>{f.core_switches}</b>，"
            f"线缆 <b>{f.cables:,}</b> 根、光模块 <b>{f.transceivers:,}</b> 个；"
            f"对分带宽 <b>{f.bisection_gbps / 1e3:,.1f} Tbit/s</b>（每 GPU {f.per_gpu_bisection_gbps:,.0f} Gbit/s）；"
            f"同轨一跳可达 {f.rail_peers_one_hop} 个节点。")


def _explorer_fabric(n_gpus, switch, link_gbps, oversubscription, rail_optimized) -> topology.Fabric:
    """``fabric_for`` for the explorer; a size beyond three tiers is refused with the learner's reason:
    the three-tier capacity r * (r/2) * d of this switch at this oversubscription (``topology.max_nics``)."""
    sw = hardware.switch(switch)
    srv = hardware.server("DGX-H100")
    n_nics = -(-int(n_gpus) // srv.gpus) * srv.compute_nics
    cap = topology.max_nics(sw.ports, 3, oversubscription)
    if n_nics > cap:
        raise ValueError(f"{n_nics:,} 个网卡端口超过了 {sw.ports} 口交换机三层 fat tree 在收敛比 {oversubscription:g}:1 下"
                         f"最多能接的 {cap:,} 个（r·(r/2)·d）；本模型不搭四层网络：换端口更多的交换机，或减少 GPU")
    return fabric_for(n_gpus, switch=switch, link_gbps=link_gbps, oversubscription=oversubscription,
                      rail_optimized=rail_optimized)


def fabric_sizing_explorer() -> Explorer:
    """GPUs x switch model x NIC speed x oversubscription x rail-optimized -> counts and a drawing."""
    controls = {
        "n_gpus": pow2_slider("GPU 数量", 1024, 16, 65536),
        "switch": dropdown("交换机型号", hardware.switches(), "QM9700"),
        "link_gbps": dropdown("网卡速率 (Gbit/s)", [100.0, 200.0, 400.0], 400.0),
        "oversubscription": choice_slider("收敛比 (down:up)", [1.0, 1.5, 2.0, 3.0, 4.0], 1.0),
        "rail_optimized": toggle("轨道优化 (rail-optimized)", True),
    }
    return Explorer(controls, compute=_explorer_fabric, draw=_draw_explorer, summary=_summary,
                    title="计算网络规模估算：交换机、线缆、光模块与对分带宽", figsize=(11, 4.2), ncols=2)
