"""Chapter 1 explorers and figures: effective cluster compute, failures at scale.

Models used: ``labutil.compute.effective_cluster_tflops`` (N × peak × efficiency) and
``labutil.reliability.failures_per_day`` (24·N/MTBF).
"""

from __future__ import annotations

import numpy as np

from .. import compute, hardware, reliability, validate
from ..plotting import new_figure, reset_axes
from ..widgets import Explorer, dropdown, pow2_slider, slider

# seed 004 (1.1 关键认知): effective compute is typically 40-70 % of theoretical peak.
EFFECTIVE_BAND = (0.40, 0.70)


def effective_compute(gpu: str, n_gpus, mfu, scaling_efficiency):
    """Peak and effective cluster compute (PFLOP/s, BF16 dense) for ``n_gpus`` of ``gpu``.

    effective = n · peak · MFU · scaling_efficiency, where MFU is the single-GPU model-FLOPs
    utilisation and scaling_efficiency the fraction kept when going from 1 to n GPUs.
    """
    spec = hardware.gpu(gpu)
    mfu = validate.fraction("mfu", mfu)
    scaling_efficiency = validate.fraction("scaling_efficiency", scaling_efficiency)
    peak_pflops = compute.effective_cluster_tflops(n_gpus, spec.bf16_tflops, 1.0) / 1e3
    eff = mfu * scaling_efficiency
    effective_pflops = compute.effective_cluster_tflops(n_gpus, spec.bf16_tflops, eff) / 1e3
    return {"gpu": spec.name, "n_gpus": n_gpus, "peak_pflops": peak_pflops, "effective_pflops": effective_pflops,
            "efficiency": eff, "in_band": EFFECTIVE_BAND[0] <= eff <= EFFECTIVE_BAND[1]}


def _draw_effective(fig, r, values):
    ax = fig.axes[0]
    art = getattr(fig, "_effective_artists", None)
    if art is None:  # build once; redraws only move the bars and the band
        reset_axes(ax)
        bars = ax.barh(["peak (datasheet)", "effective (your settings)"], [1.0, 1.0], color=["#bbbbbb", "#1f77b4"])
        band = ax.axvspan(0.0, 1.0, color="#2ca02c", alpha=0.15, label="typical 40-70 % of peak")
        ax.set_xlabel("Cluster compute (PFLOP/s, BF16 dense)")
        ax.legend(loc="lower right")
        art = fig._effective_artists = (bars, band)
    bars, band = art
    peak = r["peak_pflops"]
    lo, hi = EFFECTIVE_BAND
    bars[0].set_width(peak)
    bars[1].set_width(r["effective_pflops"])
    bars[1].set_color("#1f77b4" if r["in_band"] else "#d62728")
    band.set_x(lo * peak)
    band.set_width((hi - lo) * peak)
    ax.set_xlim(0, peak * 1.05)
    ax.set_title(f"{r['n_gpus']} x {r['gpu']}: effective = {r['efficiency']:.0%} of peak")


def _summary_effective(r, values):
    note = "在 40–70% 的常见区间内" if r["in_band"] else "落在 40–70% 常见区间之外"
    return (f"峰值 <b>{r['peak_pflops']:,.0f} PFLOP/s</b>，有效 <b>{r['effective_pflops']:,.0f} PFLOP/s</b>"
            f"（{r['efficiency']:.0%}，{note}）")


def effective_compute_explorer() -> Explorer:
    """GPU model × count × MFU × scaling efficiency → peak vs effective cluster compute."""
    controls = {
        "gpu": dropdown("GPU 型号", hardware.gpus(), "H100-SXM"),
        "n_gpus": pow2_slider("GPU 数量", 1024, 8, 65536),
        "mfu": slider("单卡 MFU", 0.55, 0.2, 0.8, 0.01, fmt=".2f"),
        "scaling_efficiency": slider("扩展效率", 0.85, 0.3, 1.0, 0.01, fmt=".2f"),
    }
    return Explorer(controls, compute=effective_compute, draw=_draw_effective, summary=_summary_effective,
                    title="有效算力 = GPU 数 × 单卡峰值 × MFU × 扩展效率", figsize=(8, 3.2))


def peak_vs_effective_figure(gpus=("A100-80G-SXM", "H100-SXM", "H200-SXM", "B200", "MI300X", "Ascend-910B"),
                             n_gpus: int = 1000):
    """Bars of peak cluster compute for ``n_gpus`` of each GPU, with the 40-70 % effective band."""
    n_gpus = validate.integer("n_gpus", n_gpus)
    specs = [hardware.gpu(g) for g in gpus]
    peak = np.array([compute.effective_cluster_tflops(n_gpus, s.bf16_tflops, 1.0) / 1e3 for s in specs])
    fig, ax = new_figure(figsize=(8, 4))
    x = np.arange(len(specs))
    ax.bar(x, peak, color="#cccccc", label="peak (datasheet, BF16 dense)")
    lo, hi = EFFECTIVE_BAND
    ax.bar(x, peak * (hi - lo), bottom=peak * lo, color="#2ca02c", alpha=0.6, label="effective: 40-70 % of peak")
    ax.set_xticks(x, [s.name for s in specs], rotation=15)
    ax.set_ylabel(f"PFLOP/s for {n_gpus:,} accelerators")
    ax.set_title("Theoretical peak vs. typically delivered compute")
    ax.legend()
    return fig


def failures_figure(n_max: int = 20000, mtbf_hours=(50_000, 100_000, 200_000), mark_n: int = 10_000):
    """Expected GPU failures per day vs cluster size for several per-GPU MTBFs."""
    n = np.linspace(100, validate.integer("n_max", n_max, lo=100), 200)
    fig, ax = new_figure(figsize=(8, 4))
    for m in mtbf_hours:
        ax.plot(n, reliability.failures_per_day(n, m), label=f"MTBF {m:,} h per GPU")
    y = reliability.failures_per_day(mark_n, 100_000)
    ax.plot([mark_n], [y], "o", color="k")
    ax.annotate(f"{mark_n:,} GPUs, 100,000 h: {y:.1f}/day", (mark_n, y), xytext=(-190, 30), textcoords="offset points",
                arrowprops=dict(arrowstyle="->", color="k"))
    ax.set_xlabel("GPUs in the cluster")
    ax.set_ylabel("Expected GPU failures per day")
    ax.set_title("Failures grow linearly with scale (GPUs only; hosts, NICs, links add more)")
    ax.legend()
    return fig
