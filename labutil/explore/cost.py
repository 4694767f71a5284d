"""TCO explorer and cost figures (ch05 成本与TCO).

The explorer: GPUs, server type, fabric, years, utilisation, power price, PUE and a cloud price
per GPU-hour -> stacked capex/opex bars (owned vs cloud over the same horizon) and the
cumulative-cost break-even curve (``labutil.cost``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import cost as C
from .. import widgets
from ..plotting import PALETTE, new_figure, reset_axes

__all__ = ["SERVERS", "CAPEX_PARTS", "OPEX_PARTS", "COLORS", "FACILITY_YEARS", "TCOView", "tco_view", "tco_explorer",
           "tco_breakdown_figure", "breakeven_figure", "budget_comparison_figure", "downtime_figure"]

SERVERS = ("DGX-H100", "DGX-A100", "HGX-H800")
CAPEX_PARTS = (("servers_usd", "servers"), ("network_usd", "network"), ("storage_usd", "storage"),
               ("facility_usd", "facility build-out"))
OPEX_PARTS = (("power_usd", "power x PUE"), ("staff_usd", "staff"), ("maintenance_usd", "maintenance"))
COLORS = dict(zip([k for k, _ in CAPEX_PARTS + OPEX_PARTS], PALETTE))
COLORS["financing"] = "0.3"
#: the stacked bar: (tco_parts label, colour key, legend label, hatched = paid every year)
_STACK = tuple((label, key, label, False) for key, label in CAPEX_PARTS) + \
    (("power", "power_usd", "power x PUE", True), ("staff", "staff_usd", "staff", True),
     ("maintenance", "maintenance_usd", "maintenance", True), ("financing", "financing", "financing (interest)", True))
#: facility write-off choices of the explorer: 0 = over the cluster's own horizon (the model's default)
FACILITY_YEARS = {"随集群折旧（全部计入）": 0, "按 10 年摊": 10, "按 20 年摊": 20, "按 30 年摊": 30}


@dataclass
class TCOView:
    tco: C.TCO
    cloud_total_usd: float
    usd_per_gpu_hour_cloud: float
    breakeven_utilisation: float
    breakeven_months: float | None
    months: np.ndarray
    owned_curve_usd: np.ndarray
    cloud_curve_usd: np.ndarray


def tco_view(n_gpus, server, fabric, years, utilisation, usd_per_kwh, pue, cloud_usd_per_gpu_hour,
             facility_years=0, interest_rate=0.0) -> TCOView:
    """Model behind the TCO explorer (``facility_years`` 0: written off over ``years``)."""
    t = C.tco(n_gpus, years, utilisation, server=server, fabric=fabric, pue=pue, usd_per_kwh=usd_per_kwh,
              facility_years=facility_years or None, interest_rate=interest_rate)
    months = np.linspace(0.0, 12.0 * years, 121)
    own, cloud = C.cumulative_costs(t, cloud_usd_per_gpu_hour, months)
    return TCOView(tco=t, cloud_total_usd=float(cloud[-1]), usd_per_gpu_hour_cloud=cloud_usd_per_gpu_hour,
                   breakeven_utilisation=C.breakeven_utilisation(t, cloud_usd_per_gpu_hour),
                   breakeven_months=C.breakeven_months(t, cloud_usd_per_gpu_hour), months=months,
                   owned_curve_usd=own, cloud_curve_usd=cloud)


def _draw_bars(ax, v: TCOView) -> None:
    t = v.tco
    parts = C.tco_parts(t)
    bottom = 0.0
    for label, key, legend, yearly in _STACK:
        if label not in parts:
            continue
        h = parts[label] / 1e6
        ax.bar(0, h, bottom=bottom, color=COLORS[key], width=0.6, label=f"{legend} x {t.years:g} y" if yearly else legend,
               **(dict(hatch="//", edgecolor="white") if yearly else {}))
        bottom += h
    ax.bar(1, v.cloud_total_usd / 1e6, color="0.55", width=0.6, label="cloud rental")
    ax.text(0, bottom, f"{bottom:,.0f}", ha="center", va="bottom", fontsize=8)
    ax.text(1, v.cloud_total_usd / 1e6, f"{v.cloud_total_usd / 1e6:,.0f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks([0, 1], ["owned (TCO)", "cloud"])
    ax.set_xlim(-0.6, 2.6)
    ax.set_ylabel("cost over the horizon (million USD)")
    ax.legend(fontsize=7, loc="upper right")
    ax.set_title(f"{int(t.n_gpus):,} GPUs, {_years(t.years)}, utilisation {100 * t.utilisation:.0f} %")


def _breakeven_title(u: float) -> str:
    """Above 100 % the break-even utilisation is not reachable: say so instead of "above 509 %"."""
    if u > 1.0:
        return f"owning never wins (needs {100 * u:.0f} % utilisation)"
    return f"owning wins above {100 * u:.0f} % utilisation"


def _draw_breakeven(ax, v: TCOView) -> None:
    ax.plot(v.months, v.owned_curve_usd / 1e6, color=PALETTE[0], lw=2, label="owned: capex + opex")
    ax.plot(v.months, v.cloud_curve_usd / 1e6, color="0.4", lw=2, label=f"cloud at {v.usd_per_gpu_hour_cloud:.2f} USD/GPU-h")
    if v.breakeven_months is not None and v.breakeven_months <= v.months[-1]:
        y = float(C.cumulative_costs(v.tco, v.usd_per_gpu_hour_cloud, v.breakeven_months)[0]) / 1e6
        ax.plot([v.breakeven_months], [y], "o", color=PALETTE[3], ms=8,
                label=f"break-even {v.breakeven_months:.0f} months")
    ax.set_xlabel("time since purchase (months)")
    ax.set_ylabel("cumulative cost (million USD)")
    ax.set_xlim(0, v.months[-1])
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title(_breakeven_title(v.breakeven_utilisation))


class _TCOArtists:
    """Bars and lines created once and updated in place (re-creating bars costs ~300 ms)."""

    def __init__(self, fig):
        ax1, ax2 = fig.axes
        self.ax1, self.ax2 = ax1, ax2
        self.parts = []
        for label, key, legend, yearly in _STACK:
            (rect,) = ax1.bar(0, 0.0, color=COLORS[key], width=0.6, label=(f"{legend} (opex)" if yearly and key != "financing" else legend),
                              **(dict(hatch="//", edgecolor="white") if yearly else {}))
            self.parts.append((label, rect))
        (self.cloud_bar,) = ax1.bar(1, 0.0, color="0.55", width=0.6, label="cloud rental")
        self.own_text = ax1.text(0, 0, "", ha="center", va="bottom", fontsize=8)
        self.cloud_text = ax1.text(1, 0, "", ha="center", va="bottom", fontsize=8)
        ax1.set_xticks([0, 1], ["owned (TCO)", "cloud"])
        ax1.set_xlim(-0.6, 2.6)
        ax1.set_ylabel("cost over the horizon (million USD)")
        ax1.legend(fontsize=7, loc="upper right")
        (self.own_line,) = ax2.plot([], [], color=PALETTE[0], lw=2, label="owned: capex + opex")
        (self.cloud_line,) = ax2.plot([], [], color="0.4", lw=2, label="cloud")
        (self.be_point,) = ax2.plot([], [], "o", color=PALETTE[3], ms=8, label="break-even")
        ax2.set_xlabel("time since purchase (months)")
        ax2.set_ylabel("cumulative cost (million USD)")
        # "best": with a short horizon (1 year) the owned line runs through the upper left corner
        self.leg2 = ax2.legend(fontsize=8, loc="best")

    def update(self, v: TCOView) -> None:
        t = v.tco
        parts = C.tco_parts(t)
        bottom = 0.0
        for label, rect in self.parts:
            h = parts.get(label, 0.0) / 1e6
            rect.set_y(bottom)
            rect.set_height(h)
            bottom += h
        cloud = v.cloud_total_usd / 1e6
        self.cloud_bar.set_height(cloud)
        self.own_text.set_position((0, bottom))
        self.own_text.set_text(f"{bottom:,.0f}")
        self.cloud_text.set_position((1, cloud))
        self.cloud_text.set_text(f"{cloud:,.0f}")
        self.ax1.set_ylim(0, 1.12 * max(bottom, cloud))
        self.ax1.set_title(f"{int(t.n_gpus):,} GPUs, {_years(t.years)}, utilisation {100 * t.utilisation:.0f} %")
        self.own_line.set_data(v.months, v.owned_curve_usd / 1e6)
        self.cloud_line.set_data(v.months, v.cloud_curve_usd / 1e6)
        texts = self.leg2.get_texts()
        texts[1].set_text(f"cloud at {v.usd_per_gpu_hour_cloud:.2f} USD/GPU-h")
        if v.breakeven_months is not None and v.breakeven_months <= v.months[-1]:
            y = float(C.cumulative_costs(t, v.usd_per_gpu_hour_cloud, v.breakeven_months)[0]) / 1e6
            self.be_point.set_data([v.breakeven_months], [y])
            texts[2].set_text(f"break-even {v.breakeven_months:.0f} months")
        else:
            self.be_point.set_data([], [])
            texts[2].set_text("no break-even in horizon")
        self.ax2.set_xlim(0, v.months[-1])
        top = max(float(v.owned_curve_usd.max()), float(v.cloud_curve_usd.max())) / 1e6
        self.ax2.set_ylim(0, 1.05 * top)
        self.ax2.set_title(_breakeven_title(v.breakeven_utilisation))


def _years(y: float) -> str:
    return f"{y:g} year" + ("" if y == 1 else "s")


def _verdict(v: TCOView) -> str:
    """One consistent sentence: payback at the chosen utilisation, and the threshold over the horizon."""
    t, u_star, m = v.tco, v.breakeven_utilisation, v.breakeven_months
    u = 100 * t.utilisation
    horizon = f"{t.years:g} 年"
    if u_star > 1.0:
        return f"在 {horizon}里即使利用率 100% 自建也更贵（要 {100 * u_star:.0f}% 才追平）：租更便宜。"
    if m is None:
        return (f"按当前利用率 {u:.0f}% 永远回不了本（云的账单还低于自建的运营费），租更便宜；"
                f"利用率要高于 {100 * u_star:.0f}% 才值得自建。")
    if m > 12 * t.years:
        return (f"按当前利用率 {u:.0f}% 要 {m:.0f} 个月才回本，超过 {horizon}的折旧期，租更便宜；"
                f"利用率要高于 {100 * u_star:.0f}% 才值得自建。")
    return f"按当前利用率 {u:.0f}% 约 {m:.1f} 个月回本；利用率门槛 {100 * u_star:.0f}%（低于它，{horizon}内租更便宜）。"


def tco_explorer(n_gpus: int = 1024) -> widgets.Explorer:
    """TCO explorer: capex/opex stacked bars vs cloud, and the break-even curve."""
    controls = {
        "n_gpus": widgets.pow2_slider("GPU 数量", n_gpus, 64, 32_768),
        "server": widgets.dropdown("服务器型号", SERVERS, "DGX-H100"),
        "fabric": widgets.dropdown("后端网络", C.fabrics(), "IB-NDR-400G"),
        "years": widgets.slider("折旧年限 (年)", 4.0, 1.0, 7.0, 0.5, fmt=".1f"),
        "utilisation": widgets.slider("利用率", C.DEFAULT_UTILISATION, 0.05, 1.0, 0.05, fmt=".2f"),
        "usd_per_kwh": widgets.slider("电价 (USD/kWh)", C.DEFAULT_USD_PER_KWH, 0.02, 0.40, 0.01, fmt=".2f"),
        "pue": widgets.slider("PUE", 1.5, 1.05, 2.5, 0.05, fmt=".2f"),
        "cloud_usd_per_gpu_hour": widgets.slider("云上单价 (USD/GPU·h)", C.cloud_usd_per_gpu_hour("H100-SXM"),
                                                 0.5, 12.0, 0.05, fmt=".2f"),
        "facility_years": widgets.dropdown("机房建设摊销", FACILITY_YEARS, 0),
        "interest_rate": widgets.slider("资金成本 (年利率)", 0.0, 0.0, 0.15, 0.01, fmt=".2f"),
    }

    def draw(fig, v: TCOView, values):
        artists = getattr(fig, "_tco_artists", None)
        if artists is None:
            artists = fig._tco_artists = _TCOArtists(fig)
        artists.update(v)

    def summary(v: TCOView, values):
        t = v.tco
        extra = []
        if t.facility_years is not None:
            extra.append(f"机房建设 {t.capex.facility_usd / 1e6:,.1f} M 按 {t.facility_years:g} 年摊，本期计入 "
                         f"{t.facility_charged_usd / 1e6:,.1f} M")
        if t.interest_rate > 0:
            extra.append(f"资金成本 {t.interest_rate:.0%}/年：{t.financing_usd / 1e6:,.1f} M")
        extra_txt = ("；" + "，".join(extra)) if extra else ""
        return (f"capex <b>{t.capex.total_usd / 1e6:,.1f} M USD</b>，opex <b>{t.opex.total_usd / 1e6:,.2f} M USD/年</b>"
                f"（电费 {t.opex.power_usd / 1e6:,.2f} M，设施功率 {t.opex.facility_kw:,.0f} kW）{extra_txt}；"
                f"自建每 GPU·小时 <b>{t.usd_per_gpu_hour:.2f} USD</b>，云 {v.usd_per_gpu_hour_cloud:.2f} USD。"
                + _verdict(v) + "（价格为示意值，见 labutil/data/prices.toml）")

    return widgets.Explorer(controls, compute=tco_view, draw=draw, summary=summary,
                            title="TCO：自建 vs 云，capex / opex 与盈亏平衡", figsize=(10.0, 4.4), ncols=2)


# -- figures for the chapter ------------------------------------------------------------------------------
def tco_breakdown_figure(n_gpus=1024, years=4.0, utilisation=C.DEFAULT_UTILISATION, cloud_usd_per_gpu_hour=None, **kw):
    """Stacked capex/opex bars for an owned cluster next to the cloud bill over the same horizon."""
    price = C.cloud_usd_per_gpu_hour("H100-SXM") if cloud_usd_per_gpu_hour is None else cloud_usd_per_gpu_hour
    v = tco_view(n_gpus, kw.get("server", "DGX-H100"), kw.get("fabric", "IB-NDR-400G"), years, utilisation,
                 kw.get("usd_per_kwh", C.DEFAULT_USD_PER_KWH), kw.get("pue", 1.5), price)
    fig, ax = new_figure(figsize=(6.5, 4.6))
    _draw_bars(ax, v)
    return fig


def breakeven_figure(n_gpus=1024, years=4.0, utilisations=(0.3, 0.5, 0.8), cloud_usd_per_gpu_hour=None, **kw):
    """Cumulative cost of owning vs renting over time, for several utilisations."""
    price = C.cloud_usd_per_gpu_hour("H100-SXM") if cloud_usd_per_gpu_hour is None else cloud_usd_per_gpu_hour
    fig, ax = new_figure(figsize=(7.5, 4.3))
    months = np.linspace(0, 12 * years, 121)
    for i, u in enumerate(utilisations):
        t = C.tco(n_gpus, years, u, **kw)
        own, cloud = C.cumulative_costs(t, price, months)
        if i == 0:
            ax.plot(months, own / 1e6, color="k", lw=2, label="owned: capex + opex")
        ax.plot(months, cloud / 1e6, color=PALETTE[i], lw=1.5, ls="--", label=f"cloud, utilisation {100 * u:.0f} %")
        m = C.breakeven_months(t, price)
        if m is not None and m <= months[-1]:
            y = float(C.cumulative_costs(t, price, m)[0]) / 1e6
            ax.plot([m], [y], "o", color=PALETTE[i], ms=7)
    ax.set_xlabel("time since purchase (months)")
    ax.set_ylabel("cumulative cost (million USD)")
    ax.set_title(f"{n_gpus:,} GPUs, cloud at {price:.2f} USD/GPU-h; dots = break-even")
    ax.legend(fontsize=8, loc="upper left")
    ax.set_xlim(0, months[-1])
    ax.set_ylim(bottom=0)
    return fig


def budget_comparison_figure(budget_usd=50e6, **kw):
    """What one budget buys: peak vs delivered PFLOP/s for each configuration (seed 004 误区一)."""
    opts = C.budget_comparison(budget_usd, **kw)
    fig, ax = new_figure(figsize=(8.0, 4.4))
    y = np.arange(len(opts))
    ax.barh(y + 0.2, [o.peak_pflops for o in opts], height=0.4, color="0.75", label="peak (N x datasheet)")
    ax.barh(y - 0.2, [o.delivered_pflops for o in opts], height=0.4, color=PALETTE[0],
            label="delivered (x MFU x scaling eff.)")
    for yi, o in zip(y, opts):
        ax.text(o.delivered_pflops, yi - 0.2, f" {o.delivered_pflops:,.0f} ({100 * o.scaling_efficiency:.0f} % scaling)",
                va="center", fontsize=8)
        ax.text(o.peak_pflops, yi + 0.2, f" {o.n_gpus:,} GPUs", va="center", fontsize=8)
    ax.set_yticks(y, [o.label for o in opts], fontsize=8)
    ax.set_xlabel("BF16 PFLOP/s (dense)")
    ax.set_xlim(0, 1.35 * max(o.peak_pflops for o in opts))
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(f"budget {budget_usd / 1e6:,.0f} M USD (illustrative prices)")
    return fig


def downtime_figure(n_gpus=1024, failures_per_day=0.5, interval_s=3600.0, usd_per_gpu_hour=2.0,
                    restart_h=np.linspace(0.1, 48.0, 100), marks=()):
    """Yearly cost of downtime vs recovery time (restart R in hours); ``marks``: (label, hours) points
    to label on the line (e.g. the chapter's automatic / manual / waiting-for-a-part cases)."""
    fig, ax = new_figure(figsize=(7.0, 4.0))
    r = np.asarray(restart_h)
    d = C.downtime_cost(n_gpus, failures_per_day, r * 3600.0, interval_s, usd_per_gpu_hour)
    ax.plot(r, np.asarray(d.usd_per_year) / 1e6, color=PALETTE[3], lw=2)
    for label, h in marks:
        y = C.downtime_cost(n_gpus, failures_per_day, h * 3600.0, interval_s, usd_per_gpu_hour).usd_per_year / 1e6
        ax.plot([h], [y], "o", color="k", ms=6)
        ax.annotate(f"{label}: {y:.2f} M USD/yr", (h, y), xytext=(6, 8), textcoords="offset points", fontsize=8,
                    bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="none", alpha=0.85))
    ax.set_xlabel("recovery time per failure (hours)")
    ax.set_ylabel("downtime cost (million USD / year)")
    ax.set_title(f"{n_gpus:,} GPUs, {failures_per_day:.2f} failures/day, {usd_per_gpu_hour:.2f} USD/GPU-h")
    ax.set_xlim(0, r.max())
    ax.set_ylim(bottom=0)
    return fig
