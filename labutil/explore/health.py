"""Explorer and figures for health checks and acceptance (ch23).

- ``acceptance_explorer()``: rail rate, rails per node, degraded rails and their rate, NCCL
  efficiency, pass fraction -> expected vs degraded all_reduce busbw vs message size (the cluster
  model, NCCL_ALGO=Ring across two nodes), the pass / fail lines at 80 % / 60 % of the expected
  busbw, the line-rate bound as a reference line, and the verdict the rule engine would give.
- ``busbw_samples_figure()``: the two parsed nccl-tests samples (healthy / one rail at 200G)
  against the same lines (``labutil.health.acceptance_lines``, as ch22's figure).
- ``counter_delta_figure()``: IB error-counter increases between two parsed perfquery samples,
  coloured by the severity ``labutil.health`` assigns.
Axis labels in English with units. Artists are created once and only updated (fast redraw).
"""

from __future__ import annotations

import numpy as np

from .. import comm, health, validate
from ..cluster import NIC_EFFICIENCY, Cluster
from .. import parsers as P
from ..parsers import samples
from ..plotting import PALETTE, figure_cache, new_figure
from ..widgets import Explorer, choice_slider, dropdown, int_slider, slider

__all__ = ["SIZES_BYTES", "RAIL_CHOICES_GBPS", "LATENCY_US", "SEV_COLORS", "busbw_curve_gbs", "acceptance_model",
           "acceptance_explorer", "busbw_samples_figure", "counter_delta_figure"]

SIZES_BYTES = 8.0 * 4.0 ** np.arange(16)   # 8 B .. 8 GiB, like `all_reduce_perf -b 8 -e 8G -f 4`
RAIL_CHOICES_GBPS = (100, 200, 400, 800)   # EDR, HDR, NDR, XDR 4X ports (labutil.links)
LATENCY_US = 38.0                          # small-message time of the 16-rank sample (labutil/data/samples_nccl.toml)
SEV_COLORS = {"info": PALETTE[2], "warning": PALETTE[1], "critical": PALETTE[3]}
GPU = "H100-SXM"                           # the explorer's nodes: two DGX H100-class nodes (16 ranks)


def busbw_curve_gbs(sizes_bytes, peak_busbw_gbs: float, n_ranks: int = 16, latency_us: float = LATENCY_US):
    """all_reduce busbw vs size for t = latency + S x 2(n-1)/n / peak: ``comm.model_busbw_gbs`` of a
    ring whose 2(n-1) steps add up to ``latency_us`` (the α-β shape of nccl-tests rows)."""
    n = validate.integer("n_ranks", n_ranks, lo=2)
    lat = validate.positive("latency_us", latency_us, allow_zero=True) * 1e-6
    return comm.model_busbw_gbs("all_reduce", validate.positive("sizes_bytes", sizes_bytes),
                                n, validate.positive("peak_busbw_gbs", peak_busbw_gbs), lat / (2 * (n - 1)), "ring")


def rail_cluster(rail_gbps=400, n_rails=8, efficiency=None):
    """Two nodes of ``GPU`` with ``n_rails`` NICs of ``rail_gbps`` (``labutil.cluster``)."""
    kw = {} if efficiency is None else {"nic_efficiency": validate.fraction("efficiency", efficiency)}
    return Cluster.for_gpu(GPU, 2, nic_gbps=float(rail_gbps), nics_per_node=int(n_rails), **kw)


def acceptance_model(rail_gbps=400, n_rails=8, slow_rails=1, slow_rail_gbps=200, efficiency=None,
                     pass_fraction=0.8) -> dict:
    """Everything the explorer shows, from the cluster model (``labutil.cluster``) and ``labutil.health``.

    expected: ``Cluster.acceptance_busbw_gbs`` of the healthy nodes (NCCL_ALGO=Ring across two nodes:
    min(NVLink ring 370, rails x rate x efficiency)); pass / fail lines: 80 % / 60 % of it
    (``health.acceptance_lines``); the line-rate bound (``Cluster.line_bound_gbs``) is a reference
    line. The curves are the cluster model's ring busbw vs size, healthy and with the slow rails.
    """
    spec = health.AcceptanceSpec(busbw_pass_fraction=pass_fraction, busbw_fail_fraction=min(0.6, pass_fraction))
    c = rail_cluster(rail_gbps, n_rails, efficiency)
    lines = health.acceptance_lines(c, spec=spec)
    measured = float(c.acceptance_busbw_gbs(slow_rails=slow_rails, slow_rail_gbps=slow_rail_gbps))
    slow_rate = min(float(rail_gbps), float(slow_rail_gbps)) if slow_rails else float(rail_gbps)
    exp = lines["expected_gbs"]
    return {"bound_gbs": lines["bound_gbs"], "healthy_gbs": exp, "expected_gbs": exp, "measured_gbs": measured,
            "pass_gbs": lines["pass_gbs"], "fail_gbs": lines["fail_gbs"], "sizes": SIZES_BYTES,
            "healthy_curve": c.busbw_gbs("all_reduce", SIZES_BYTES, algo="ring"),
            "measured_curve": c.busbw_gbs("all_reduce", SIZES_BYTES, algo="ring", nic_gbps=slow_rate),
            "severity": health.busbw_severity(measured, exp, spec), "fraction": measured / exp,
            "limit": "NVLink 环" if c.ring_busbw_gbs <= c.node_net_gbs else "网卡"}


_TICKS = [8, 2**10, 2**15, 2**20, 2**25, 2**30, 2**33]
_TICK_LABELS = ["8 B", "1 KiB", "32 KiB", "1 MiB", "32 MiB", "1 GiB", "8 GiB"]


def _size_axis(ax) -> None:
    """Log2 size axis with plain-text tick labels (mathtext labels cost ~100 ms per redraw)."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(_TICKS, _TICK_LABELS)
    ax.minorticks_off()


def _draw_acceptance(fig, r, values, cache=None):
    cache, key = (figure_cache(fig) if cache is None else cache), "artists"
    ax = fig.axes[0]
    if cache.get(key) is None:
        _size_axis(ax)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("all_reduce busbw (GB/s)")
        ax.set_title("Inter-node all_reduce: healthy vs degraded rails")
        art = {
            "healthy": ax.plot(r["sizes"], r["healthy_curve"], color=PALETTE[0], lw=2, label="all rails healthy")[0],
            "measured": ax.plot(r["sizes"], r["measured_curve"], color=PALETTE[3], lw=2, ls="--",
                                label="with degraded rails")[0],
            "bound": ax.axhline(r["bound_gbs"], color="0.45", lw=1, ls="-.", label="line-rate bound (reference)"),
            "expected": ax.axhline(r["expected_gbs"], color="k", lw=1, ls=":", label="expected"),
            # the same styles as acceptance_hlines (ch22's and ch23's sample figures)
            "pass": ax.axhline(r["pass_gbs"], color=PALETTE[2], lw=1.2, ls="--", label="pass threshold"),
            "fail": ax.axhline(r["fail_gbs"], color=PALETTE[1], lw=1.2, ls="--", label="fail threshold"),
        }
        # below the axes: inside, the ring-bound and threshold lines ran behind it
        art["legend"] = ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=8, ncols=3,
                                  frameon=False)
        ax.set_xlim(SIZES_BYTES[0], SIZES_BYTES[-1])
        ax.set_ylim(0, r["bound_gbs"] * 1.12)
        fig.draw_without_rendering()     # solve the constrained layout once ...
        fig.set_layout_engine("none")    # ... then keep it: labels never change, redraws stay fast
        cache[key] = art
    art = cache[key]
    slow = values["slow_rails"]
    label = (f"{slow} of {values['n_rails']} rails at {values['slow_rail_gbps']}G" if slow
             else "no degraded rail")
    texts = art["legend"].get_texts()
    texts[1].set_text(label)  # the dashed curve's entry says how many rails are slow
    e = r["expected_gbs"]     # the threshold entries say where the lines are: a fraction of the expected busbw
    texts[2].set_text(f"line-rate bound {r['bound_gbs']:.0f} GB/s (reference)")
    texts[3].set_text(f"expected {e:.0f} GB/s (cluster model)")
    texts[4].set_text(f"pass: {r['pass_gbs'] / e:.0%} of expected ({r['pass_gbs']:.0f} GB/s)")
    texts[5].set_text(f"fail: {r['fail_gbs'] / e:.0%} of expected ({r['fail_gbs']:.0f} GB/s)")
    art["healthy"].set_ydata(r["healthy_curve"])
    art["measured"].set_ydata(r["measured_curve"])
    for k, v in (("bound", "bound_gbs"), ("expected", "expected_gbs"), ("pass", "pass_gbs"), ("fail", "fail_gbs")):
        art[k].set_ydata([r[v], r[v]])
    ax.set_ylim(0, r["bound_gbs"] * 1.12)


def _summary(r, values) -> str:
    verdict = {"info": "PASS", "warning": "WARN", "critical": "FAIL"}[r["severity"]]
    color = {"info": "#2ca02c", "warning": "#ff7f0e", "critical": "#d62728"}[r["severity"]]
    return (f"期望 {r['expected_gbs']:.0f} GB/s（集群模型，NCCL_ALGO=Ring，由{r['limit']}限制；线速上限 {r['bound_gbs']:.0f} GB/s 只作参考）；"
            f"当前 {r['measured_gbs']:.0f} GB/s = 期望的 {r['fraction']:.0%} → <b style='color:{color}'>{verdict}</b>"
            f"（通过线 {r['pass_gbs']:.0f}，失败线 {r['fail_gbs']:.0f} GB/s）<br>{_slow_note(values)}")


def _slow_note(v) -> str:
    """Why the number of slow rails does not matter, only their rate: the slowest ring ends the collective."""
    k, slow, rate, slow_rate = v["n_rails"], v["slow_rails"], v["rail_gbps"], v["slow_rail_gbps"]
    if slow == 0:
        return f"唯一的一条轨道以 {rate} Gb/s 运行。" if k == 1 else f"{k} 条轨道都以 {rate} Gb/s 运行。"
    if slow_rate >= rate:
        return (f"{slow} 条轨道的「降速后速率」{slow_rate} Gb/s 不低于轨道速率 {rate} Gb/s，"
                "等于没有降速。")
    return (f"{slow} / {k} 条轨道降到 {slow_rate} Gb/s：NCCL 把数据均分到每条轨道的环上，集合通信在<b>最慢的环</b>"
            f"结束时才结束，所以 busbw = min(NVLink 环, {k} × {slow_rate} Gb/s / 8 × 效率)——"
            "慢轨道是 1 条还是多条结果一样，只有它的速率要紧。")


def acceptance_explorer() -> Explorer:
    controls = {
        "rail_gbps": choice_slider("每条轨道速率 (Gb/s)", RAIL_CHOICES_GBPS, 400),
        "n_rails": int_slider("每节点轨道数", 8, 1, 8),
        "slow_rails": int_slider("降速的轨道数", 1, 0, 8),
        "slow_rail_gbps": dropdown("降速后速率 (Gb/s)", (25, 50, 100, 200, 400), 200),
        "efficiency": slider("NCCL 效率", NIC_EFFICIENCY, 0.5, 1.0, 0.01, fmt=".2f"),
        "pass_fraction": slider("通过线（占期望值比例）", 0.8, 0.6, 0.95, 0.05, fmt=".2f"),
    }

    # never offer more slow rails than rails: the slow_rails slider ends at n_rails
    def _bound_slow(change):
        controls["slow_rails"].max = change["new"]

    controls["n_rails"].observe(_bound_slow, names="value")
    controls["slow_rails"].max = controls["n_rails"].value

    def compute(**v):
        if v["slow_rails"] > v["n_rails"]:
            raise ValueError(f"slow_rails must be <= n_rails ({v['n_rails']}); got {v['slow_rails']}")
        return acceptance_model(**v)

    return Explorer(controls, compute, _draw_acceptance, summary=_summary, title="验收：一条慢轨道拖慢整个 all_reduce",
                    figsize=(8.0, 4.2))


def busbw_samples_figure():
    """The healthy and degraded nccl-tests samples (2 x DGX H100), parsed, against the acceptance lines
    of ``health.acceptance_lines`` (80 % / 60 % of the cluster's expected busbw) and the line-rate
    bound as a separate reference line: the same lines as ch22's ``explore.nccl.nccl_samples_figure``."""
    fig, ax = new_figure(figsize=(8.0, 4.2))
    runs = {}
    for name, label, color in (("nccl_tests_all_reduce_2node", "sample: 8 rails healthy", PALETTE[0]),
                               ("nccl_tests_all_reduce_degraded", "sample: one rail at 200G", PALETTE[3])):
        r = runs[name] = P.parse_nccl_tests(samples.sample(name))
        ax.plot([x.size_bytes for x in r.rows], [x.busbw_gbs for x in r.rows], "o-", ms=3, color=color, label=label)
    lines = health.acceptance_lines(SAMPLE_CLUSTER(), runs["nccl_tests_all_reduce_2node"])
    acceptance_hlines(ax, lines)
    _size_axis(ax)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title("all_reduce_perf on 2 x 8 H100: parsed samples")
    ax.set_ylim(0, lines["bound_gbs"] * 1.12)
    # below the axes: inside, the ring-bound and threshold lines ran behind it
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=8, ncols=2, frameon=False)
    return fig


def SAMPLE_CLUSTER():
    """The cluster of the course's 2-node nccl-tests samples: two DGX H100 (8 x 400G NDR each)."""
    return Cluster.system("DGX-H100", 2)


def acceptance_hlines(ax, lines: dict) -> None:
    """The expected / pass / fail lines and the line-rate bound (``health.acceptance_lines``), labelled
    with their values; ch22's and ch23's sample figures both draw them with this function."""
    e = lines["expected_gbs"]
    if lines.get("bound_gbs") is not None:
        ax.axhline(lines["bound_gbs"], color="0.45", lw=1, ls="-.",
                   label=f"line-rate bound {lines['bound_gbs']:.0f} GB/s (reference)")
    ax.axhline(e, color="k", lw=1, ls=":", label=f"expected {e:.0f} GB/s (cluster model)")
    ax.axhline(lines["pass_gbs"], color=PALETTE[2], ls="--",
               label=f"pass: {lines['pass_fraction']:.0%} of expected ({lines['pass_gbs']:.0f} GB/s)")
    ax.axhline(lines["fail_gbs"], color=PALETTE[1], ls="--",
               label=f"fail: {lines['fail_fraction']:.0%} of expected ({lines['fail_gbs']:.0f} GB/s)")


def counter_delta_figure(before: str = "perfquery_t0", after: str = "perfquery_t1"):
    """Increase of each IB error counter between two perfquery samples (log scale), by severity."""
    a = P.parse_perfquery(samples.sample(before))
    b = P.parse_perfquery(samples.sample(after))
    sev = {f.check: f.severity for f in health.check_perfquery(a, b)}
    names = list(P.ERROR_COUNTERS)
    deltas = [b.counters.get(k, 0) - a.counters.get(k, 0) for k in names]
    fig, ax = new_figure(figsize=(8.0, 4.2))
    colors = [SEV_COLORS.get(sev.get(k, "info")) if d > 0 else "#bbbbbb" for k, d in zip(names, deltas)]
    y = np.arange(len(names))
    ax.barh(y, [max(d, 0) + 1 for d in deltas], color=colors)
    ax.set_yticks(y, names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("counter increase between samples + 1 (count, log scale)")
    ax.set_title("perfquery: error-counter increase on one port\n"
                 "(red = critical, orange = warning, grey = no increase)", fontsize=10)
    ax.set_xlim(0.7, max(deltas + [1]) * 8)
    for yy, d in zip(y, deltas):
        if d > 0:
            ax.text(d + 1, yy, f" +{d}", va="center", fontsize=8)
    return fig
