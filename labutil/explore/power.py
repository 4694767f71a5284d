"""Chapter 10 explorers and figures: the facility power stack, PUE, rack density and cooling.

Models: ``labutil.power.cluster_power`` (servers from the catalog, PUE, racks, cooling advice),
``power.facility_power`` / ``power.optics_kw`` (the compute fabric's optics via ``labutil.topology``),
``power.racks_vs_limit`` (the racks-vs-limit sweep).
"""

from __future__ import annotations

import numpy as np

from .. import hardware, power, validate
from ..plotting import PALETTE, new_figure, reset_axes
from ..widgets import Explorer, dropdown, pow2_slider, slider

__all__ = ["STACK_COLORS", "COOLING_COLORS", "COOLING_ZH", "optics_kw", "facility_power", "RACK_KW_MIN", "RACK_KW_MAX",
           "facility_power_explorer", "power_stack_figure", "pue_sweep_figure", "rack_density_figure"]

STACK_COLORS = {"servers": "#1f77b4", "fabric optics": "#9467bd", "storage": "#8c564b",
                "cooling + distribution": "#ff7f0e"}
COOLING_COLORS = {"air": "#d9d9d9", "air+containment": "#6baed6", "rear-door": "#fdd0a2", "direct-liquid": "#fc9272"}


# model functions that used to live here (issue 19: explorers draw, models compute); kept importable
optics_kw = power.optics_kw
facility_power = power.facility_power


def _stack(ax, x, c: power.ClusterPower, width=0.6, labels=True):
    parts = [("servers", c.server_kw), ("fabric optics", c.network_kw), ("storage", c.storage_kw),
             ("cooling + distribution", c.overhead_kw)]
    bottom = 0.0
    for name, kw in parts:
        if kw <= 0:
            continue
        ax.bar(x, kw / 1e3, width, bottom=bottom, color=STACK_COLORS[name], label=name if labels else None)
        bottom += kw / 1e3
    return bottom


_STACK_ORDER = ("servers", "fabric optics", "storage", "cooling + distribution")
# The rack-limit control starts at the first whole kW that holds one server of the explorer's default
# model (DGX H100: 10.2 kW -> 11 kW), so the 15 kW air-cooled band stays on the axis. A larger server
# (DGX B200, 14.3 kW) below its own power is refused with the reason (``_explorer_power``).
RACK_KW_MIN = float(np.ceil(power.server_power_kw("DGX-H100")))
RACK_KW_MAX = 130.0
_LIMITS = np.linspace(RACK_KW_MIN, RACK_KW_MAX, int(RACK_KW_MAX - RACK_KW_MIN) + 1)


def _build(fig, server):
    """Create the explorer's artists once; later updates only change their data (ax.clear() is slow)."""
    ax1, ax2 = fig.axes[0], fig.axes[1]
    reset_axes(ax1)
    bars = {name: ax1.bar([0], [0.0], 0.6, color=STACK_COLORS[name], label=name)[0] for name in _STACK_ORDER}
    total = ax1.text(0, 0, "", ha="center", va="bottom")
    ax1.set_xlim(-0.8, 0.8)
    ax1.set_xticks([0], [""])
    ax1.set_ylabel("Power (MW)")
    ax1.legend(fontsize=8, loc="upper left")
    reset_axes(ax2)
    lo = RACK_KW_MIN
    th = power.facility_data()["cooling"]
    for name, hi in (("air", th["air_room_max_kw"]), ("air+containment", th["air_containment_max_kw"]),
                     ("rear-door", th["rear_door_max_kw"]), ("direct-liquid", RACK_KW_MAX)):
        ax2.axvspan(lo, hi, color=COOLING_COLORS[name], alpha=0.5, label=name, lw=0)
        lo = hi
    (curve,) = ax2.plot(_LIMITS, np.ones_like(_LIMITS), color=PALETTE[0])
    (dot,) = ax2.plot([40.0], [1.0], "o", color="k")
    note = ax2.annotate("", (40.0, 1.0), xytext=(8, 8), textcoords="offset points", fontsize=8)
    ax2.set_xlim(RACK_KW_MIN, RACK_KW_MAX)
    ax2.set_xlabel("Rack power limit (kW per rack)")
    ax2.set_ylabel("Racks needed (count)")
    ax2.set_title("Racks vs rack limit (shading: cooling at that limit)")
    ax2.legend(fontsize=7, loc="upper right")
    return {"bars": bars, "total": total, "title": ax1.title, "curve": curve, "dot": dot, "note": note}


def _draw_explorer(fig, r, values):
    c = r["power"]
    st = getattr(fig, "_power_state", None)
    if st is None:
        st = fig._power_state = _build(fig, c.server)
    ax1, ax2 = fig.axes[0], fig.axes[1]
    bottom = 0.0
    for name, kw in zip(_STACK_ORDER, (c.server_kw, c.network_kw, c.storage_kw, c.overhead_kw)):
        b = st["bars"][name]
        b.set_y(bottom)
        b.set_height(kw / 1e3)
        bottom += kw / 1e3
    st["total"].set_position((0, bottom))
    st["total"].set_text(f"{bottom:,.2f} MW" if bottom >= 1 else f"{bottom * 1e3:,.1f} kW")
    ax1.set_ylim(0, bottom * 1.2)
    ax1.set_xticks([0], [f"{c.n_gpus:,} GPUs\n{c.servers:,} x {c.server}"])
    st["title"].set_text(f"Power stack at PUE {c.pue:.2f}")
    racks = power.racks_vs_limit(c.servers, c.server, _LIMITS)
    st["curve"].set_ydata(racks)
    lim = values["rack_kw_limit"]
    st["dot"].set_data([lim], [c.racks])
    st["note"].xy = (lim, c.racks)
    st["note"].set_text(f"{c.racks} rack{'s' if c.racks != 1 else ''}, fullest holds {c.servers_in_fullest_rack} "
                        f"({c.fullest_rack_kw:.1f} kW)")
    top = np.nanmax(racks)
    # keep the note inside the axes at the slider's ends: left of the dot in the right half,
    # below it when the dot sits near the top of the curve
    right = lim > (RACK_KW_MIN + RACK_KW_MAX) / 2
    high = c.racks > 0.8 * top
    st["note"].xyann = (-8 if right else 8, -8 if high else 8)
    st["note"].set_horizontalalignment("right" if right else "left")
    st["note"].set_verticalalignment("top" if high else "baseline")
    ax2.set_ylim(0, top * 1.1)


#: The cooling methods of ``power.COOLING_METHODS`` as the chapter names them.
COOLING_ZH = {"air": "房间级风冷", "air+containment": "风冷 + 冷/热通道封闭", "rear-door": "背板换热器（RDHx）",
              "direct-liquid": "冷板直接液冷"}


def _kw_or_mw(kw: float) -> str:
    return f"{kw / 1e3:,.2f} MW" if kw >= 1e3 else f"{kw:,.1f} kW"


def _explorer_power(n_gpus, server, pue, rack_kw_limit, price_per_kwh):
    """``facility_power`` for the explorer; a rack limit below one server of the chosen model is refused
    with the learner's reason (the server's catalog power, ``power.server_power_kw``)."""
    unit = power.server_power_kw(server)
    if rack_kw_limit < unit:
        raise ValueError(f"单柜 {rack_kw_limit:g} kW 放不下一台 {server}（整机最大 {unit:.1f} kW）：把单柜功率上限调到 "
                         f"{np.ceil(unit):.0f} kW 以上")
    return facility_power(n_gpus, server=server, pue=pue, rack_kw_limit=rack_kw_limit, price_per_kwh=price_per_kwh)


def _summary(r, values):
    c = r["power"]
    est = "（功耗为估算值）" if c.power_is_estimate else ""
    fill = (f"每柜最多 {c.servers_per_rack} 台，最满的一柜放 {c.servers_in_fullest_rack} 台、{c.fullest_rack_kw:.1f} kW"
            if c.servers_in_fullest_rack < c.servers_per_rack else f"每柜 {c.servers_per_rack} 台、{c.rack_kw:.1f} kW")
    return (f"{c.servers:,} 台 {c.server}{est}：服务器 <b>{c.server_kw:,.0f} kW</b> + 光模块 {c.network_kw:,.0f} kW"
            f" + 存储 {c.storage_kw:,.0f} kW = IT <b>{_kw_or_mw(c.it_kw)}</b>；× PUE {c.pue:.2f} = 机房总功耗 "
            f"<b>{_kw_or_mw(c.facility_kw)}</b>。机柜 <b>{c.racks}</b> 个（{fill}，受{'功率' if c.rack_limit_by == 'power' else '空间'}限制；"
            f"按实际负载建议散热：<b>{COOLING_ZH[c.cooling_actual]}</b>；右图底色是按单柜上限本身划分的散热方式）。"
            f"年耗电 <b>{r['annual_mwh']:,.0f} MWh</b>，电费约 <b>{r['annual_cost']:,.0f} 元</b>（{r['price_per_kwh']:.2f} 元/kWh）。")


def facility_power_explorer() -> Explorer:
    """GPUs x server x PUE x rack kW limit x price -> power stack, racks, cooling, annual energy cost."""
    controls = {
        "n_gpus": pow2_slider("GPU 数量", 1024, 8, 65536),
        "server": dropdown("服务器型号", hardware.servers(), "DGX-H100"),
        "pue": slider("PUE", 1.5, 1.05, 2.0, 0.01, fmt=".2f"),
        "rack_kw_limit": slider("单柜功率上限 (kW)", 40.0, RACK_KW_MIN, RACK_KW_MAX, 1.0, fmt=".0f"),
        "price_per_kwh": slider("电价 (元/kWh)", 0.60, 0.0, 1.5, 0.01, fmt=".2f"),
    }
    return Explorer(controls, compute=_explorer_power, draw=_draw_explorer, summary=_summary,
                    title="机房功耗估算：服务器 → IT → PUE → 总功耗、机柜与电费", figsize=(11, 4.2), ncols=2)


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------
def power_stack_figure(n_gpus: int = 1000, pues=(1.1, 1.3, 1.57, 1.8), server="DGX-H100", target_mw: float = 2.0):
    """Stacked bars (servers, optics, overhead) for ``n_gpus`` at several PUEs, with a ``target_mw`` line."""
    fig, ax = new_figure(figsize=(8, 4.2))
    net = optics_kw(n_gpus, server)
    for i, p in enumerate(pues):
        c = power.cluster_power(n_gpus, server=server, pue=p, network_kw=net)
        top = _stack(ax, i, c, labels=(i == 0))
        ax.text(i, top, f"{top:.2f} MW", ha="center", va="bottom", fontsize=9)
    ax.axhline(validate.positive("target_mw", target_mw), color="k", ls="--", lw=1, label=f"{target_mw:g} MW")
    ax.set_xticks(range(len(pues)), [f"PUE {p:.2f}" for p in pues])
    ax.set_ylabel("Power (MW)")
    ax.set_title(f"{n_gpus:,} GPUs in {server} servers: IT load and facility total")
    ax.set_ylim(0, ax.get_ylim()[1] * 1.1)
    ax.legend(fontsize=8, loc="upper left")
    return fig


def pue_sweep_figure(n_gpus=(512, 1000, 4096), server="DGX-H100"):
    """Facility MW vs PUE for several cluster sizes (vectorised), with reference PUEs marked."""
    p = np.linspace(1.05, 2.0, 96)
    fig, ax = new_figure(figsize=(8, 4))
    for i, n in enumerate(n_gpus):
        c = power.cluster_power(np.full_like(p, n, dtype=float), server=server, pue=p)
        ax.plot(p, c.facility_kw / 1e3, color=PALETTE[i], label=f"{n:,} GPUs ({int(np.ceil(n / 8))} servers)")
    ref = power.facility_data()["pue"]
    for key, label in (("hyperscale_best", "hyperscale best"), ("industry_average", "industry average 2023")):
        ax.axvline(ref[key], color="k", ls=":", lw=1)
        ax.text(ref[key], ax.get_ylim()[1] * 0.95, f" {label}\n {ref[key]:.2f}", fontsize=8, va="top")
    ax.set_xlabel("PUE (facility power / IT power)")
    ax.set_ylabel("Facility power (MW)")
    ax.set_title("Each +0.1 of PUE adds 10 % of the IT load at the meter")
    ax.legend(fontsize=8, loc="center right")
    return fig


def rack_density_figure(servers=("DGX-A100", "DGX-H100", "DGX-B200", "Atlas-800T-A2"),
                        rack_kw_limits=(15, 20, 30, 40, 41, 60)):
    """Servers per rack by rack power limit for catalog servers, shaded by the cooling the rack needs."""
    lims = [validate.positive("rack_kw_limit", x) for x in rack_kw_limits]
    fig, ax = new_figure(figsize=(8, 4))
    width = 0.8 / len(servers)
    for i, name in enumerate(servers):
        per, kws = [], []
        for lim in lims:
            try:
                c = power.cluster_power(hardware.server(name).gpus, server=name, rack_kw_limit=lim)
                per.append(c.servers_per_rack)
                kws.append(c.rack_kw)
            except ValueError:
                per.append(0)
                kws.append(0.0)
        x = np.arange(len(lims)) + (i - (len(servers) - 1) / 2) * width
        bars = ax.bar(x, per, width, color=PALETTE[i], label=f"{name} ({power.server_power_kw(name):.1f} kW)")
        for b, kw in zip(bars, kws):
            if kw:
                ax.text(b.get_x() + b.get_width() / 2, b.get_height(), f"{kw:.0f}", ha="center", va="bottom",
                        fontsize=7)
    ax.set_xticks(range(len(lims)), [f"{v:g} kW" for v in lims])
    ax.set_xlabel("Rack power limit (label on bar: rack kW actually used)")
    ax.set_ylabel("Servers per rack (count)")
    ax.set_title("Rack density: the power limit, not the 42U, decides")
    ax.legend(fontsize=8, loc="upper left")
    return fig
