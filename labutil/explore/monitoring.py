"""Explorer and figures for monitoring and alerting (ch26).

- ``alert_rule_explorer()``: fault type, threshold (k x robust sigma from the healthy baseline) and
  ``for:`` duration -> the watched time series with the threshold, fault onset and every firing
  alert (true in red, false positives in orange), plus detection delay and false-positive count.
- ``utilisation_gap_figure()``: GPU_UTIL vs SM_ACTIVE vs PIPE_TENSOR_ACTIVE of the parsed
  dcgm-exporter sample.
- ``alert_tradeoff_figure()``: detection delay vs false positives for several ``for:`` durations.
- ``straggler_figure()``: modified z-score per rank (thermal-throttle telemetry) and the throughput a
  synchronous job loses to one slow rank.
Axis labels in English with units. The explorer's artists are created once and only updated.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import monitoring as M
from .. import validate
from ..plotting import PALETTE, figure_cache, new_figure
from ..widgets import Explorer, choice_slider, dropdown, slider

__all__ = ["FOR_CHOICES_S", "FAULT_LABELS", "telemetry", "alert_model", "alert_rule_explorer",
           "utilisation_gap_figure", "tradeoff_table", "alert_tradeoff_figure", "straggler_figure"]

FOR_CHOICES_S = (0, 15, 30, 60, 120, 300, 600, 900)
FAULT_LABELS = {"thermal_throttle": "thermal_throttle (fan / airflow failure)", "xid79": "xid79 (GPU fell off the bus)",
                "slow_nic": "slow_nic (one rail at 1/4 speed)", "none": "none (healthy run: only false alarms)"}
_YLABEL = {"temp_c": "GPU temperature (C)", "tensor_active": "tensor pipe active (ratio)", "step_s": "step time (s)"}


@lru_cache(maxsize=8)
def telemetry(fault: str, seed: int = 0) -> M.Telemetry:
    """The explorer's telemetry (cached: generating it is the slow part, ~25 ms)."""
    return M.synthetic_telemetry(validate.choice("fault", fault, M.FAULTS), seed=seed)


def alert_model(fault: str = "thermal_throttle", k_sigma: float = 3.0, for_s: float = 120, seed: int = 0) -> dict:
    """Everything the explorer shows (pure): telemetry, rule, evaluation and score."""
    tel = telemetry(fault, seed)
    rule = M.watched_rule(tel, k_sigma, for_s)
    score = M.score_alerts(tel, rule)
    attr = M._WATCH[fault][2]
    x = tel.series(attr)
    shown = tel.faulty_gpu if tel.faulty_gpu is not None else 0
    other = (shown + 1) % tel.n_gpus
    eps = score.evaluation.episodes
    true = [(s, a) for s, a, _ in eps if tel.onset_s is not None and tel.affected[s] and a >= tel.onset_s]
    false = [(s, a) for s, a, _ in eps if not (tel.onset_s is not None and tel.affected[s] and a >= tel.onset_s)]
    return {"tel": tel, "rule": rule, "score": score, "attr": attr, "t_h": tel.t_s / 3600.0,
            "shown": shown, "other": other, "y_shown": x[shown], "y_other": x[other],
            "true_xy": np.array([[a / 3600.0, s] for s, a in true]).reshape(-1, 2),
            "false_xy": np.array([[a / 3600.0, s] for s, a in false]).reshape(-1, 2),
            "fp_per_1000_gpu_days": score.false_positives_per_1000_gpu_days(tel.n_gpus, float(tel.t_s[-1]))}


def _draw_alerts(fig, r, values, cache=None):
    cache, key = (figure_cache(fig) if cache is None else cache), "artists"
    ax, axa = fig.axes[0], fig.axes[1]
    tel = r["tel"]
    if cache.get(key) is None:
        art = {
            "shown": ax.plot(r["t_h"], r["y_shown"], color=PALETTE[3], lw=1.0, label="faulty / shown GPU")[0],
            "other": ax.plot(r["t_h"], r["y_other"], color=PALETTE[7], lw=0.8, alpha=0.8, label="another GPU")[0],
            "thr": ax.axhline(r["rule"].threshold, color="k", lw=1.2, ls="--", label="alert threshold"),
            "onset": ax.axvline(0, color=PALETTE[4], lw=1.2, ls=":", label="fault onset"),
            "true": axa.scatter([], [], s=60, marker="v", color=PALETTE[3], edgecolors="k", linewidths=0.6, zorder=4, label="true alert"),
            "false": axa.scatter([], [], s=10, marker="x", color=PALETTE[1], alpha=0.6, zorder=2, label="false positive"),
        }
        ax.set_xlim(0, r["t_h"][-1])
        axa.set_xlim(0, r["t_h"][-1])
        axa.set_ylim(-1, tel.n_gpus + 14)
        axa.set_xlabel("time (h)")
        axa.set_ylabel("GPU index")
        axa.set_title("alerts starting to fire (one marker per alert episode)", fontsize=9)
        ax.legend(loc="upper left", fontsize=8, ncol=4)   # one row: stays in the headroom above the traces
        axa.legend(loc="upper left", fontsize=8, ncol=2)
        ax.set_ylabel(_YLABEL["temp_c"])
        fig.set_layout_engine("none")    # fixed margins: labels change with the fault, the layout does not
        ax.set_position([0.085, 0.55, 0.9, 0.38])
        axa.set_position([0.085, 0.09, 0.9, 0.36])
        cache[key] = art
    art = cache[key]
    art["shown"].set_ydata(r["y_shown"])
    art["other"].set_ydata(r["y_other"])
    art["thr"].set_ydata([r["rule"].threshold] * 2)
    on = tel.onset_s / 3600.0 if tel.onset_s is not None else -1.0
    art["onset"].set_xdata([on, on])
    art["true"].set_offsets(r["true_xy"])
    art["false"].set_offsets(r["false_xy"])
    y = np.concatenate([r["y_shown"], r["y_other"], [r["rule"].threshold]])
    y = y[np.isfinite(y)]
    lo, hi = float(y.min()), float(y.max())
    pad = 0.08 * (hi - lo or 1.0)
    ax.set_ylim(lo - pad, hi + pad * 5.0)    # headroom for the two-row legend above the traces
    ax.set_ylabel(_YLABEL[r["attr"]])
    ax.set_title(f"{r['rule'].expr}  for: {M.format_duration(r['rule'].for_s)}  (GPU {r['shown']} red)", fontsize=10)


def _summary(r, values) -> str:
    s = r["score"]
    det = f"检测延迟 <b>{s.detection_delay_s / 60:.1f} min</b>" if s.detected else (
        "<b style='color:#d62728'>故障未被发现</b>" if r["tel"].onset_s is not None else "无故障")
    return (f"规则 <code>{r['rule'].expr}</code>，for: {M.format_duration(r['rule'].for_s)}；{det}；"
            f"误报 <b>{s.false_positives}</b> 次（6 小时 × {r['tel'].n_gpus} 卡，"
            f"≈ {r['fp_per_1000_gpu_days']:.0f} 次 / 1000 卡·天）")


def alert_rule_explorer() -> Explorer:
    controls = {
        "fault": dropdown("注入的故障", [(v, k) for k, v in FAULT_LABELS.items()], "thermal_throttle"),
        "k_sigma": slider("阈值（基线 ± k·σ）", 3.0, 1.0, 10.0, 0.5, fmt=".1f"),
        "for_s": choice_slider("for: 持续时间 (s)", FOR_CHOICES_S, 120),
    }
    ex = Explorer(controls, alert_model, _draw_alerts, summary=_summary,
                  title="告警规则：灵敏度、for: 与误报", figsize=(8.5, 5.2), nrows=2)
    return ex


# ------------------------------------------------------------------------------------ figures
def utilisation_gap_figure(text: str | None = None):
    """GPU_UTIL vs SM_ACTIVE vs TENSOR_ACTIVE (%) per GPU from a dcgm-exporter scrape."""
    rows = M.gpu_metrics(M.parse_prometheus_text(text or M.DCGM_EXPORTER_SAMPLE))
    fig, ax = new_figure(figsize=(7.5, 3.8))
    x = np.arange(len(rows))
    w = 0.26
    for i, (k, lab, scale) in enumerate((("util_pct", "DCGM_FI_DEV_GPU_UTIL", 1.0),
                                         ("sm_active", "DCGM_FI_PROF_SM_ACTIVE", 100.0),
                                         ("tensor_active", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 100.0))):
        vals = [(r[k] or 0.0) * scale for r in rows]
        ax.bar(x + (i - 1) * w, vals, w, color=PALETTE[i], label=lab)
        for xi, v, r in zip(x, vals, rows):     # a bar too thin to see is labelled, so it does not look missing
            if 0 < v < 1.0 or (v == 0 and any(r[kk] for kk in ("util_pct", "sm_active", "tensor_active"))):
                ax.text(xi + (i - 1) * w, v + 1, f"{v:.2f} %", ha="center", va="bottom", fontsize=7)
    for xi, r in zip(x, rows):
        if not any(r[kk] for kk in ("util_pct", "sm_active", "tensor_active")):
            ax.text(xi, 4, "all three 0 %" + (f"\n(XID {r['xid']} reported)" if r["xid"] else ""),
                    ha="center", va="bottom", fontsize=8)
    labels = [f"GPU {r['gpu']}" + (f"\nXID {r['xid']}" if r["xid"] else "") for r in rows]
    ax.set_xticks(x, labels)
    ax.set_ylabel("busy (% of time / cycles)")
    ax.set_ylim(0, 125)
    ax.set_title("Same GPU_UTIL, very different work: dcgm-exporter sample")
    ax.legend(loc="upper right", fontsize=8, ncol=1)
    return fig


def tradeoff_table(fault: str = "thermal_throttle", k_values=(1.5, 2, 2.5, 3, 4, 5, 6), for_values=(0, 60, 120, 300, 600)):
    """Rows of (k, for_s, detection delay (s) or None, false positives) on the cached telemetry."""
    tel = telemetry(fault)
    rows = []
    for f in for_values:
        for k in k_values:
            s = M.score_alerts(tel, M.watched_rule(tel, k, f))
            rows.append({"k_sigma": k, "for_s": f, "delay_s": s.detection_delay_s, "false_positives": s.false_positives})
    return rows


def alert_tradeoff_figure(fault: str = "thermal_throttle"):
    """False positives vs detection delay as k and ``for:`` vary (one curve per ``for:``)."""
    rows = tradeoff_table(fault)
    fig, ax = new_figure(figsize=(7.5, 4.0))
    for i, f in enumerate(sorted({r["for_s"] for r in rows})):
        pts = [(r["delay_s"] / 60.0, r["false_positives"], r["k_sigma"]) for r in rows if r["for_s"] == f and r["delay_s"] is not None]
        if not pts:
            continue
        d, fp, k = zip(*pts)
        ax.plot(d, np.asarray(fp) + 0.5, "o-", color=PALETTE[i], label=f"for: {M.format_duration(f)}")
        ax.annotate(f"k={k[0]:g}σ", (d[0], fp[0] + 0.5), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.annotate(f"k={k[-1]:g}σ", (d[-1], fp[-1] + 0.5), fontsize=7, xytext=(3, -9), textcoords="offset points")
    ax.set_yscale("log")
    ax.set_xlabel("detection delay after fault onset (min)")
    ax.set_ylabel("false positives in 6 h x 64 GPUs (+0.5, log)")
    ax.set_title(f"Alert sensitivity trade-off ({fault})\n"
                 f"each dot: threshold at baseline ± k·σ, k = {min(r['k_sigma'] for r in rows):g} to "
                 f"{max(r['k_sigma'] for r in rows):g}", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def straggler_figure(seed: int = 0):
    """Left: modified z-score per rank of the windowed compute time (thermal throttle on one GPU).
    Right: throughput lost by a synchronous job vs the slowdown of one rank."""
    tel = telemetry("thermal_throttle", seed)
    every = 4                                   # one step per minute of the 15 s scrape grid
    rep = M.detect_stragglers(tel.compute_s[:, ::every])
    t_h = tel.t_s[::every] / 3600.0
    fig, (a1, a2) = new_figure(1, 2, figsize=(10.0, 4.0))
    for r in range(tel.n_gpus):
        if r != tel.faulty_gpu:
            a1.plot(t_h, rep.z[r], color=PALETTE[7], lw=0.5, alpha=0.5)
    a1.plot(t_h, rep.z[tel.faulty_gpu], color=PALETTE[3], lw=1.5, label=f"rank {tel.faulty_gpu} (throttled)")
    a1.axhline(rep.threshold, color="k", ls="--", lw=1, label=f"flag at M > {rep.threshold:g}")
    a1.axvline(tel.onset_s / 3600.0, color=PALETTE[4], ls=":", label="fan failure")
    a1.set_xlabel("time (h)")
    a1.set_ylabel("modified z-score of compute time")
    a1.set_title("Straggler detection over 64 ranks")
    a1.legend(fontsize=8, loc="upper left")
    s = np.linspace(1.0, 1.5, 101)
    for i, f in enumerate((1.0, 0.7, 0.5)):
        loss = M.straggler_throughput_loss(s, 1024, compute_fraction=f)["loss_fraction"]
        a2.plot((s - 1) * 100, loss * 100, color=PALETTE[i], label=f"compute = {f:.0%} of step")
    a2.set_xlabel("one rank slower by (%)")
    a2.set_ylabel("job throughput lost (%)")
    a2.set_title("A sync job runs at its slowest rank")
    a2.legend(fontsize=8)
    return fig
