"""Reliability explorer and figures (ch27 可靠性工程; ch01 uses failures per day).

The explorer: cluster size and per-component MTBF -> failures/day; checkpoint cost, interval and
restart time -> goodput vs checkpoint interval with the Young/Daly optimum marked, and one
simulated training timeline (seeded Monte Carlo, ``labutil.reliability.simulate_timelines``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import reliability as R
from .. import validate
from .. import widgets
from ..plotting import PALETTE, new_figure, reset_axes
from ..units import SECONDS_PER_DAY, SECONDS_PER_HOUR

__all__ = ["MTBF_CHOICES_H", "ReliabilityView", "reliability_view", "reliability_explorer",
           "failures_vs_scale_figure", "llama3_table5_figure", "goodput_vs_interval_figure", "timeline_figure",
           "interruptions_histogram_figure"]

MTBF_CHOICES_H = (10_000, 20_000, 50_000, 80_000, 100_000, 200_000, 300_000, 500_000, 1_000_000, 2_000_000)


def _nearest(options, value):
    return min(options, key=lambda o: abs(o - value))


@dataclass
class ReliabilityView:
    """Everything the reliability explorer shows (also handy in tests)."""

    failures_per_day: float
    mtbf_h: float
    breakdown: dict
    young_s: float
    daly_s: float
    interval_s: float
    goodput: float
    goodput_at_young: float
    curve_interval_s: np.ndarray
    curve_goodput: np.ndarray
    sim: R.SimulationResult
    time_shares: dict | None = None     # where the wall-clock goes at the chosen interval (R.time_breakdown)


#: Most failures simulated per explorer update (trials x expected failures per trial).
SIM_FAILURE_BUDGET = 1_000_000


def reliability_view(n_gpus, gpu_mtbf_h, host_mtbf_h, link_mtbf_h, checkpoint_s, interval_min, restart_min,
                     sim_days=7, software_mtbf_h=None, gpus_per_host: int = 8, trials: int = 200,
                     seed: int = 0) -> ReliabilityView:
    """Model behind the explorer: a GPU + host + network-link (+ software) series system and its goodput."""
    comps = {
        "gpu": (n_gpus, gpu_mtbf_h),
        "host": (n_gpus / gpus_per_host, host_mtbf_h),
        "network_link": (n_gpus, link_mtbf_h),
    }
    if software_mtbf_h is not None:
        comps["software"] = (n_gpus, software_mtbf_h)
    f = R.cluster_failures_per_day(comps)
    mtbf_h = R.cluster_mtbf_hours(comps)
    tau = float(interval_min) * 60.0
    r = float(restart_min) * 60.0
    young = R.young_daly_interval_s(checkpoint_s, mtbf_h * SECONDS_PER_HOUR)
    daly = R.daly_interval_s(checkpoint_s, mtbf_h * SECONDS_PER_HOUR)
    xs = np.geomspace(60.0, 24 * 3600.0, 160)
    curve = R.goodput(f, r, xs, checkpoint_s)
    # compute budget (robustness review R13: 131,072 GPUs at 10,000 h MTBFs for 54 days is ~53,000 failures per
    # trial, and 200 trials took 5.4 s); with that many failures per trial a few dozen trials are plenty, and the
    # figure draws trial 0, which does not depend on the number of trials
    expected = f * float(sim_days)
    trials = max(1, min(int(trials), int(SIM_FAILURE_BUDGET // max(expected, 1.0))))
    sim = R.simulate_timelines(f, sim_days, restart_s=r, interval_s=tau, checkpoint_s=checkpoint_s,
                               trials=trials, seed=seed, parts=comps)
    return ReliabilityView(failures_per_day=f, mtbf_h=mtbf_h, breakdown=R.failure_breakdown(comps), young_s=young,
                           daly_s=daly, interval_s=tau, goodput=R.goodput(f, r, tau, checkpoint_s),
                           goodput_at_young=R.goodput(f, r, young, checkpoint_s), curve_interval_s=xs,
                           curve_goodput=curve, sim=sim, time_shares=R.time_breakdown(f, r, tau, checkpoint_s))


def _draw_goodput(ax, v: ReliabilityView) -> None:
    ax.plot(v.curve_interval_s / 60.0, 100 * v.curve_goodput, color=PALETTE[0], lw=2, label="goodput model")
    ax.axvline(v.young_s / 60.0, color=PALETTE[2], ls="--", lw=1.2, label=f"Young {v.young_s / 60:.0f} min")
    ax.axvline(v.daly_s / 60.0, color=PALETTE[4], ls=":", lw=1.2, label=f"Daly {v.daly_s / 60:.0f} min")
    ax.plot([v.interval_s / 60.0], [100 * v.goodput], "o", color=PALETTE[3], ms=7, label="chosen interval")
    ax.set_xscale("log")
    ax.set_xlabel("checkpoint interval (min)")
    ax.set_ylabel("goodput (% of wall-clock)")
    lo = max(0.0, 100 * float(v.curve_goodput.min()) - 5)
    ax.set_ylim(lo, 100)
    # below the axes: inside, the falling right end of the curve ran through it
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=8, ncols=2)
    ax.set_title(f"{v.failures_per_day:.2f} failures/day, MTBF {v.mtbf_h:.1f} h")


def _draw_timeline(ax, sim: R.SimulationResult, max_failure_marks: int = 400) -> None:
    tl = sim.timeline
    days = tl.t_s / SECONDS_PER_DAY
    ax.plot([0, tl.duration_s / SECONDS_PER_DAY], [0, tl.duration_s / SECONDS_PER_HOUR], color="0.6", ls="--",
            lw=1, label="no failures, no checkpoints")
    ax.plot(days, tl.progress_s / SECONDS_PER_HOUR, color=PALETTE[0], lw=1.2, label="useful work kept")
    fx = tl.failure_s[:max_failure_marks] / SECONDS_PER_DAY
    if len(fx):
        ax.plot(fx, np.zeros_like(fx), "|", color=PALETTE[3], ms=10, mew=1, label=f"{len(tl.failure_s)} failures")
    ax.set_xlabel("wall-clock time (days)")
    ax.set_ylabel("useful training (hours)")
    ax.set_title(f"simulated run: goodput {100 * tl.useful_s / tl.duration_s:.1f} %")
    ax.legend(loc="upper left", fontsize=8)
    ax.set_xlim(0, tl.duration_s / SECONDS_PER_DAY)
    ax.set_ylim(bottom=-0.02 * tl.duration_s / SECONDS_PER_HOUR)


class _ExplorerArtists:
    """Artists created once and updated in place (ax.clear() + re-plot costs ~70 ms; this ~10 ms)."""

    def __init__(self, fig):
        ax1, ax2 = fig.axes
        self.ax1, self.ax2 = ax1, ax2
        (self.curve,) = ax1.plot([], [], color=PALETTE[0], lw=2, label="goodput model")
        self.young = ax1.axvline(1.0, color=PALETTE[2], ls="--", lw=1.2, label="Young")
        self.daly = ax1.axvline(1.0, color=PALETTE[4], ls=":", lw=1.2, label="Daly")
        (self.point,) = ax1.plot([], [], "o", color=PALETTE[3], ms=7, label="chosen interval")
        ax1.set_xscale("log")
        ax1.set_xlim(1.0, 24 * 60.0)
        ax1.set_xlabel("checkpoint interval (min)")
        ax1.set_ylabel("goodput (% of wall-clock)")
        # below the axes: inside, the falling right end of the curve ran through it
        self.leg1 = ax1.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=8, ncols=2)
        (self.ideal,) = ax2.plot([], [], color="0.6", ls="--", lw=1, label="no failures, no checkpoints")
        (self.progress,) = ax2.plot([], [], color=PALETTE[0], lw=1.2, label="useful work kept")
        (self.fails,) = ax2.plot([], [], "|", color=PALETTE[3], ms=10, mew=1, label="failures")
        ax2.set_xlabel("wall-clock time (days)")
        ax2.set_ylabel("useful training (hours)")
        self.leg2 = ax2.legend(loc="upper left", fontsize=8)

    def update(self, v: ReliabilityView) -> None:
        g = 100 * v.curve_goodput
        self.curve.set_data(v.curve_interval_s / 60.0, g)
        self.young.set_xdata([v.young_s / 60.0, v.young_s / 60.0])
        self.daly.set_xdata([v.daly_s / 60.0, v.daly_s / 60.0])
        self.point.set_data([v.interval_s / 60.0], [100 * v.goodput])
        texts = self.leg1.get_texts()
        texts[1].set_text(f"Young {v.young_s / 60:.0f} min")
        texts[2].set_text(f"Daly {v.daly_s / 60:.0f} min")
        self.ax1.set_ylim(max(0.0, float(g.max()) - 60.0), 100.0)
        self.ax1.set_title(f"{v.failures_per_day:.2f} failures/day, MTBF {v.mtbf_h:.1f} h")
        tl = v.sim.timeline
        dur_d, dur_h = tl.duration_s / SECONDS_PER_DAY, tl.duration_s / SECONDS_PER_HOUR
        self.ideal.set_data([0, dur_d], [0, dur_h])
        self.progress.set_data(tl.t_s / SECONDS_PER_DAY, tl.progress_s / SECONDS_PER_HOUR)
        fx = tl.failure_s / SECONDS_PER_DAY
        self.fails.set_data(fx, np.zeros_like(fx))
        self.leg2.get_texts()[2].set_text(f"{len(fx)} failures")
        self.ax2.set_xlim(0, dur_d)
        self.ax2.set_ylim(-0.02 * dur_h, 1.05 * dur_h)
        self.ax2.set_title(f"simulated run: goodput {100 * tl.useful_s / tl.duration_s:.1f} %")


def reliability_explorer(n_gpus: int = 16_384) -> widgets.Explorer:
    """GPUs, MTBF per component, checkpoint cost, interval and restart time -> failures/day,
    goodput vs interval (Young/Daly marked) and a simulated timeline. Defaults: the per-unit rates
    calibrated from Llama 3 Table 5 (``reliability.llama3_component_mtbf_hours``), rounded to the
    slider's stops: GPU ~80k h, host incl. unplanned maintenance ~50k h, network link ~500k h,
    software/unknown per GPU ~500k h."""
    m = R.llama3_component_mtbf_hours()
    host_all = 1.0 / (1.0 / m["host"] + 1.0 / m["host_maintenance"])
    controls = {
        "n_gpus": widgets.pow2_slider("GPU 数量", n_gpus, 256, 131_072),
        "gpu_mtbf_h": widgets.choice_slider("单卡 MTBF (h)", MTBF_CHOICES_H, _nearest(MTBF_CHOICES_H, m["gpu"])),
        "host_mtbf_h": widgets.choice_slider("单机(主机) MTBF (h)", MTBF_CHOICES_H, _nearest(MTBF_CHOICES_H, host_all)),
        "link_mtbf_h": widgets.choice_slider("每条网络链路 MTBF (h)", MTBF_CHOICES_H,
                                             _nearest(MTBF_CHOICES_H, m["network_link"])),
        "software_mtbf_h": widgets.choice_slider("软件故障 (每卡等效) MTBF (h)", MTBF_CHOICES_H,
                                                 _nearest(MTBF_CHOICES_H, m["software"])),
        "checkpoint_s": widgets.slider("检查点写入 δ (s)", 30.0, 5.0, 600.0, 5.0, fmt=".0f"),
        "interval_min": widgets.slider("检查点间隔 τ (min)", 20.0, 2.0, 240.0, 1.0, fmt=".0f"),
        "restart_min": widgets.slider("重启耗时 R (min)", 10.0, 1.0, 240.0, 1.0, fmt=".0f"),
        "sim_days": widgets.choice_slider("模拟天数", (1, 3, 7, 14, 54), 7),
    }

    def draw(fig, v: ReliabilityView, values):
        artists = getattr(fig, "_reliability_artists", None)
        if artists is None:
            artists = fig._reliability_artists = _ExplorerArtists(fig)
        artists.update(v)

    def summary(v: ReliabilityView, values):
        s = v.sim
        return (f"每天故障 <b>{v.failures_per_day:.2f}</b> 次（集群 MTBF {v.mtbf_h:.1f} h）；"
                f"Young 最优间隔 <b>{v.young_s / 60:.0f} min</b>（Daly {v.daly_s / 60:.0f} min）；"
                f"所选间隔 goodput <b>{100 * v.goodput:.1f}%</b>（最优 {100 * v.goodput_at_young:.1f}%），"
                f"其余墙钟时间：写检查点 {100 * v.time_shares['checkpoint']:.1f}%、重算 {100 * v.time_shares['rework']:.1f}%、"
                f"重启 {100 * v.time_shares['restart']:.1f}%；"
                f"Monte Carlo {len(s.goodput)} 次：平均中断 {s.mean_interruptions:.1f} 次，"
                f"goodput {100 * s.mean_goodput:.1f}% ± {100 * s.goodput.std():.1f}%")

    return widgets.Explorer(controls, compute=reliability_view, draw=draw, summary=summary,
                            title="可靠性：故障率、检查点间隔与 goodput", figsize=(10.0, 4.2), ncols=2)


# -- figures for the chapter ------------------------------------------------------------------------------
def failures_vs_scale_figure(gpu_mtbf_hours=(20_000, 100_000, 500_000)):
    """Failures/day vs cluster size: GPUs only at several MTBFs, and the Llama 3-calibrated full mix."""
    fig, ax = new_figure(figsize=(7.5, 4.3))
    n = np.geomspace(64, 131_072, 60)
    for i, m in enumerate(gpu_mtbf_hours):
        ax.plot(n, R.failures_per_day(n, m), color=PALETTE[i], label=f"GPUs only, MTBF {m:,} h")
    full = R.cluster_failures_per_day(R.llama3_components(n))
    ax.plot(n, full, color="k", lw=2, ls="--", label="all parts, Llama 3-calibrated")
    ax.plot([16_384], [R.llama3_failures_per_day(16_384)], "s", color=PALETTE[3], ms=8,
            label="Llama 3: 419 in 54 days")
    ax.plot([10_000], [R.failures_per_day(10_000, 100_000)], "o", color=PALETTE[1], ms=8,
            label="seed: 10k GPUs, 100k h -> 2.4/day")
    ax.axhline(1.0, color="0.5", ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("GPUs in the job (count)")
    ax.set_ylabel("job interruptions per day (count/day)")
    ax.legend(fontsize=8, loc="upper left")
    return fig


def llama3_table5_figure():
    """Llama 3 Table 5: the 419 unexpected interruptions by root cause (counts), coloured by part."""
    rows = sorted(R.llama3_table5(), key=lambda r: r["count"])
    colors = {"gpu": PALETTE[3], "host": PALETTE[0], "network": PALETTE[2], "software": PALETTE[4],
              "maintenance": PALETTE[1], "unknown": PALETTE[7]}
    fig, ax = new_figure(figsize=(7.5, 5.0))
    y = np.arange(len(rows))
    ax.barh(y, [r["count"] for r in rows], color=[colors[r["part"]] for r in rows])
    ax.set_yticks(y, [r["component"] for r in rows], fontsize=8)
    for yi, r in zip(y, rows):
        ax.text(r["count"] + 1.5, yi, f"{r['count']}", va="center", fontsize=8)
    ax.set_xlabel("unexpected interruptions in 54 days (count)")
    handles = [ax.bar(0, 0, color=c, label=k) for k, c in colors.items()]
    ax.legend(handles=handles, fontsize=8, loc="lower right", title="part")
    ax.set_xlim(0, 170)
    ax.set_title("Unexpected interruptions by root cause: Llama 3 405B on 16,384 H100\n"
                 "(Llama 3 paper, Table 5)", fontsize=10)
    return fig


def goodput_vs_interval_figure(failures_per_day, restart_s, checkpoint_s_values=(10.0, 30.0, 120.0)):
    """Goodput vs checkpoint interval for several checkpoint costs, with Young's optimum marked.

    failures_per_day must be > 0 (with no failures there is no optimum: checkpoint as rarely as you like)."""
    failures_per_day = validate.positive("failures_per_day", failures_per_day)
    restart_s = validate.positive("restart_s", restart_s, allow_zero=True)
    for d in checkpoint_s_values:
        validate.positive("checkpoint_s_values", d)
    fig, ax = new_figure(figsize=(7.5, 4.3))
    xs = np.geomspace(60.0, 6 * 3600.0, 200)
    mtbf_s = SECONDS_PER_DAY / failures_per_day
    for i, d in enumerate(checkpoint_s_values):
        g = R.goodput(failures_per_day, restart_s, xs, d)
        ax.plot(xs / 60, 100 * g, color=PALETTE[i], label=f"checkpoint {d:.0f} s")
        t = R.young_daly_interval_s(d, mtbf_s)
        ax.plot([t / 60], [100 * R.goodput(failures_per_day, restart_s, t, d)], "o", color=PALETTE[i])
    ax.axhline(90, color="0.5", ls=":", lw=1, label="90 % (Llama 3 reported > 90 %)")
    ax.set_xscale("log")
    ax.set_xlabel("checkpoint interval (min)")
    ax.set_ylabel("goodput (% of wall-clock)")
    ax.set_title(f"{failures_per_day:.2f} failures/day, restart {restart_s / 60:.0f} min; dots = Young optimum")
    ax.legend(fontsize=8, loc="lower center")
    return fig


def timeline_figure(sim: R.SimulationResult):
    """One simulated run: useful progress vs wall-clock time, failures marked."""
    fig, ax = new_figure(figsize=(8.0, 4.0))
    _draw_timeline(ax, sim)
    return fig


def interruptions_histogram_figure(sim: R.SimulationResult, reference=None, reference_label: str = ""):
    """Distribution over Monte Carlo trials of the number of interruptions (and a reference count)."""
    fig, ax = new_figure(figsize=(7.0, 3.8))
    x = sim.interruptions
    ax.hist(x, bins=min(40, max(5, int(x.max() - x.min() + 1))), color=PALETTE[0], alpha=0.8)
    if reference is not None:
        ax.axvline(reference, color=PALETTE[3], lw=2, label=reference_label or f"reference {reference}")
        ax.legend(fontsize=8)
    ax.set_xlabel("interruptions per run (count)")
    ax.set_ylabel("trials (count)")
    ax.set_title(f"{len(x)} simulated runs: mean {x.mean():.1f}, std {x.std():.1f}")
    return fig
