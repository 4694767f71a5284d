"""Explorers and figures of ch15 (NCCL深入) and ch22 (NCCL Test与带宽验收).

- ``nccl_tuning_explorer``: NCCL's tuner (``labutil.nccl_tuning``) — predicted time of every
  algorithm/protocol pair against message size, and the pair NCCL would pick; NCCL_ALGO /
  NCCL_PROTO restrict the choice as the environment variables do.
- ``acceptance_explorer``: expected all_reduce busbw of a fabric (``labutil.cluster``'s
  ``expected_busbw_gbs`` and modelled busbw curve; the line-rate bound of ``labutil.health`` for
  reference) against an nccl-tests run parsed from text, with the pass / warning / critical bands
  of ``labutil.health.AcceptanceSpec``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import health, links, nccl_tuning, validate, widgets
from ..cluster import NIC_EFFICIENCY, Cluster, tuner_node
from ..parsers import parse_nccl_tests, samples
from ..plotting import PALETTE, new_figure
from ..widgets import Explorer
from .health import acceptance_hlines

__all__ = ["SIZES", "ENV_PRESETS", "NIC_PRESETS", "nic_bus_gbs", "tuning_model", "nccl_tuning_explorer", "tuning_figure", "FABRICS", "SAMPLES",
           "fabric_cluster", "acceptance_model", "acceptance_explorer", "fabric_expectation_figure",
           "nccl_samples_figure"]

SIZES = 2.0 ** np.arange(6, 33)  # 64 B .. 4 GiB
ENV_PRESETS = {
    "default (all enabled)": None,
    "NCCL_ALGO=Ring": ("ring/LL", "ring/LL128", "ring/Simple"),
    "NCCL_ALGO=Tree": ("tree/LL", "tree/LL128", "tree/Simple"),
    "NCCL_PROTO=Simple": ("ring/Simple", "tree/Simple"),
    "NCCL_PROTO=LL": ("ring/LL", "tree/LL"),
    "NCCL_PROTO=^LL128": ("ring/LL", "ring/Simple", "tree/LL", "tree/Simple"),
}
_STYLE = {"LL": ":", "LL128": "--", "Simple": "-"}
_MARK = {"LL": "v", "LL128": "s", "Simple": "o"}
_COLOR = {"ring": PALETTE[0], "tree": PALETTE[1]}


#: The explorer's default node: the catalog DGX A100 as NCCL's tuner sees it (24 channels x 230/24 GB/s)
TUNER_NODE = tuner_node("DGX-A100")


#: The node's compute NICs (label -> NIC Gbit/s, NICs per node); across more than two nodes NCCL 2.7.5's
#: tuner uses the inter-node graph, whose channels x speed is what these NICs carry (``nic_bus_gbs``)
NIC_PRESETS = {
    "8 x 200G HDR (DGX A100)": (200.0, 8),
    "8 x 400G NDR": (400.0, 8),
    "4 x 200G HDR": (200.0, 4),
    "1 x 100G": (100.0, 1),
}


def nic_bus_gbs(nic: str) -> float:
    """What a node's NICs carry per GPU across nodes, GB/s: ``Cluster.node_net_gbs`` of the explorer's
    node (``TUNER_NODE``) with the NIC preset ``nic`` (8 x 200G HDR x 0.96 = 192 for a DGX A100)."""
    if nic not in NIC_PRESETS:
        raise validate.unknown_name("NIC preset", nic, NIC_PRESETS)
    gbps, k = NIC_PRESETS[nic]
    return float(Cluster.system(TUNER_NODE["system"], 2, nic_gbps=gbps, nics_per_node=k).node_net_gbs)


def tuning_model(n_nodes: int = 4, gpus_per_node: int = 8, n_channels: int = TUNER_NODE["n_channels"],
                 speed_gbs: float = round(TUNER_NODE["speed_gbs"], 2), intra: str = "nvlink",
                 env: str = "default (all enabled)", nic: str = "8 x 200G HDR (DGX A100)"):
    if env not in ENV_PRESETS:
        raise validate.unknown_name("NCCL env preset", env, ENV_PRESETS)
    return nccl_tuning.allreduce_table(SIZES, n_nodes * gpus_per_node, n_nodes, n_channels=n_channels,
                                       speed_gbs=speed_gbs, intra=intra, enabled=ENV_PRESETS[env],
                                       max_bus_gbs=intra_cap_gbs(intra), inter_bus_gbs=nic_bus_gbs(nic))


def intra_cap_gbs(intra: str) -> float:
    """What the intra-node link of the explorer's node carries per GPU (GB/s): the catalog DGX H100's
    achievable NVLink ring busbw (370) for 'nvlink', one PCIe Gen5 x16 link per direction for 'pci'."""
    validate.choice("intra", intra, nccl_tuning.HW)
    if intra == "nvlink":
        return Cluster.system("DGX-H100").ring_busbw_gbs
    return float(links.pcie_gbs("gen5", 16))


def _cache(fig) -> dict:
    """Artists built on the first draw and updated afterwards (a redraw stays well under 50 ms)."""
    if not hasattr(fig, "_labutil_cache"):
        fig._labutil_cache = {}
    return fig._labutil_cache


def _draw_tuning(fig, table, values) -> None:
    ax1, ax2 = fig.axes[:2]
    c = _cache(fig)
    pairs = list(table.time_us)
    n = values["n_nodes"] * values["gpus_per_node"]
    bus = table.busbw_gbs(n)
    if not c:
        for key in pairs:
            a, p = key.split("/")
            c[("t", key)], = ax1.plot(table.size_bytes, table.time_us[key], _STYLE[p], color=_COLOR[a], label=key)
            c[("b", key)], = ax2.plot(table.size_bytes, bus, _MARK[p], ms=5, ls="none", color=_COLOR[a],
                                      label=f"picked {key}")
        for ax in (ax1, ax2):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("message size (bytes, log2)")
        ax1.set_yscale("log")
        ax1.set_ylabel("predicted time (us, log)")
        ax1.set_title("NCCL tuner: time per algorithm/protocol")
        ax1.legend(fontsize=7, ncol=2, loc="upper left")
        ax2.set_ylabel("busbw of the picked pair (GB/s)")
        ax2.legend(fontsize=7, loc="upper left")
        c["title"] = ax2.set_title("")
    for key in pairs:
        t = table.time_us[key]
        c[("t", key)].set_ydata(np.where(np.isfinite(t), t, np.nan))
        mask = np.array([ch == key for ch in table.choice])
        c[("b", key)].set_ydata(np.where(mask, bus, np.nan))
    finite = np.concatenate([t[np.isfinite(t)] for t in table.time_us.values()])
    ax1.set_ylim(finite.min() / 1.5, finite.max() * 1.5)
    ax2.set_ylim(0, float(np.nanmax(bus)) * 1.25)
    nodes = values["n_nodes"]
    c["title"].set_text(f"all_reduce on {n} GPUs ({nodes} node{'s' if nodes > 1 else ''})")
    # layout: solved once by the Explorer at its first render (labutil.widgets), not here


def _tuning_summary(table, values) -> str:
    parts = []
    for s, label in ((2**10, "1 KiB"), (2**20, "1 MiB"), (2**30, "1 GiB")):
        i = int(np.argmin(np.abs(table.size_bytes - s)))
        parts.append(f"{label}: <b>{table.choice[i]}</b> ({table.best_time_us[i]:.1f} us)")
    note = (f"<br>channels × 速度 = {values['n_channels']} × {values['speed_gbs']:.2f} = {table.channels_bus_gbs:.0f} GB/s；"
            f"模型用的 busBw = {table.bus_gbs:.0f} GB/s。")
    if table.capped:
        note += (f"<br>它超过了节点内链路能承载的 "
                f"{intra_cap_gbs(values['intra']):.0f} GB/s（{'NVLink 环' if values['intra'] == 'nvlink' else 'PCIe Gen5 x16'}），"
                "按后者计算：NCCL 的拓扑搜索不会找到比链路更快的 channel 组合。")
    if table.inter_limited:
        note += (f"<br>{values['n_nodes']} 个节点（多于 2 个）：NCCL 2.7.5 的 tuning.cc 改用跨节点图的速度（speedInter），"
                 f"它受网卡限制——{values['nic']} 每卡只能分到 {table.bus_gbs:.0f} GB/s，busBw 按这个数算。")
    elif values["n_nodes"] > 2:
        note += (f"<br>{values['n_nodes']} 个节点：跨节点图的速度（speedInter）由网卡决定，{values['nic']} 每卡能分到 "
                 f"{nic_bus_gbs(values['nic']):.0f} GB/s，不低于节点内的 busBw，所以这里仍由节点内决定。")
    elif values["n_nodes"] == 2:
        note += ("<br>2 个节点：NCCL 2.7.5 在 ≤ 2 个节点时仍用节点内图的速度（speedIntra），"
                 "网卡预设在这里不起作用；节点数调到 4 以上再看。")
    return "NCCL 会选：" + "；".join(parts) + note


def nccl_tuning_explorer() -> Explorer:
    controls = {
        "n_nodes": widgets.pow2_slider("节点数 n_nodes", 4, 1, 64),
        "gpus_per_node": widgets.choice_slider("每节点 GPU", [2, 4, 8], 8),
        "n_channels": widgets.int_slider("channels", TUNER_NODE["n_channels"], 1, 32),
        "speed_gbs": widgets.slider("每 channel 速度 (GB/s)", round(TUNER_NODE["speed_gbs"], 2), 1.0, 40.0, 0.01, fmt=".2f"),
        "intra": widgets.dropdown("节点内互联", ["nvlink", "pci"], "nvlink"),
        "env": widgets.dropdown("环境变量", list(ENV_PRESETS), "default (all enabled)"),
        "nic": widgets.dropdown("每节点网卡", list(NIC_PRESETS), "8 x 200G HDR (DGX A100)"),
    }
    return Explorer(controls, compute=tuning_model, draw=_draw_tuning, summary=_tuning_summary,
                    title="NCCL 算法/协议选择（NCCL 2.7.5 tuning.cc 模型）", figsize=(10.0, 4.2), nrows=1, ncols=2)


def tuning_figure(n_nodes: int = 4, gpus_per_node: int = 8, n_channels: int = TUNER_NODE["n_channels"],
                  speed_gbs: float = round(TUNER_NODE["speed_gbs"], 2), nic: str = "8 x 200G HDR (DGX A100)"):
    """Static version of the explorer's figure (for the chapter text)."""
    values = {"n_nodes": n_nodes, "gpus_per_node": gpus_per_node, "n_channels": n_channels, "speed_gbs": speed_gbs,
              "intra": "nvlink", "env": "default (all enabled)", "nic": nic}
    fig, _ = new_figure(1, 2, figsize=(10.0, 4.2))
    _draw_tuning(fig, tuning_model(**values), values)
    return fig


# -------------------------------------------------------------------------------- ch22 acceptance
FABRICS = {
    # label -> (catalog system, nic_gbps per NIC, NICs per node, inside one node?); the expectation is
    # labutil.cluster's acceptance_busbw_gbs on that cluster (NCCL_ALGO=Ring across nodes), the
    # line-rate bound Cluster.line_bound_gbs (health.acceptance_lines)
    "NVLink intra-node (8x H100, NVLS)": ("DGX-H100", 400.0, 8, True),
    "8 x 400G NDR (DGX H100 class)": ("DGX-H100", 400.0, 8, False),
    "8 x 200G HDR": ("DGX-H100", 200.0, 8, False),
    "4 x 400G": ("DGX-H100", 400.0, 4, False),
    "1 x 25GbE (misconfigured)": ("DGX-H100", 25.0, 1, False),
}
SAMPLES = ("nccl_tests_all_reduce_2node", "nccl_tests_all_reduce_degraded")
#: NCCL 2.30.7's per-hop network latency of Ring/Simple (labutil.nccl_tuning.CURRENT), µs
DEFAULT_LATENCY_US = float(nccl_tuning.CURRENT["hw_lat_us"]["net"]["ring"][2])


@lru_cache(maxsize=None)
def _parsed_sample(name: str):
    return parse_nccl_tests(samples.sample(name))


def fabric_cluster(fabric: str, n_ranks: int = 16, *, efficiency: float | None = None, latency_us: float | None = None):
    """(Cluster, ranks) of a ``FABRICS`` preset for an nccl-tests run of about ``n_ranks`` GPUs: one
    node (at most 8 ranks) for the NVLink preset, otherwise whole 8-GPU nodes (at least 2)."""
    if fabric not in FABRICS:
        raise validate.unknown_name("fabric", fabric, FABRICS)
    system, nic, k, intra = FABRICS[fabric]
    n = int(n_ranks)
    kw = dict(nic_gbps=nic, nics_per_node=k)
    if efficiency is not None:
        kw["nic_efficiency"] = efficiency
    if latency_us is not None:
        kw["net_latency_s"] = latency_us * 1e-6
    if intra:
        c = Cluster.system(system, 1, **kw)
        return c, max(2, min(n, c.gpus_per_node))
    nodes = max(2, -(-n // 8))
    return Cluster.system(system, nodes, **kw), nodes * 8


def acceptance_model(fabric: str = "8 x 400G NDR (DGX H100 class)", n_ranks: int = 16, efficiency: float = NIC_EFFICIENCY,
                     latency_us: float = DEFAULT_LATENCY_US, sample: str = "nccl_tests_all_reduce_2node",
                     pass_fraction: float = 0.8, fail_fraction: float = 0.6) -> dict:
    """Expected all_reduce busbw of a fabric preset against a parsed nccl-tests sample.

    The expectation and the lines are ``health.acceptance_lines`` on the fabric's cluster
    (``labutil.cluster``: NVLS / NVLink ring in a node; across nodes the acceptance run uses
    NCCL_ALGO=Ring: min(NVLink ring, NICs x ``efficiency`` of the line rate)). ``ranks_note`` says
    when the rank count was changed to fit the fabric (one node holds at most 8; a multi-node fabric
    needs whole nodes, at least 2); ``inconsistent`` flags a sample whose peak is above 1.05 x the
    fabric's line-rate bound (it cannot have been measured on this fabric)."""
    c, ranks = fabric_cluster(fabric, n_ranks, efficiency=efficiency, latency_us=latency_us)
    system, nic, k, intra = FABRICS[fabric]
    spec = health.AcceptanceSpec(busbw_pass_fraction=pass_fraction, busbw_fail_fraction=fail_fraction)
    lines = health.acceptance_lines(c, op="all_reduce", ranks=ranks, spec=spec)
    expected = lines["expected_gbs"]
    algo = "auto" if intra else "ring"
    model = c.busbw_gbs("all_reduce", SIZES, ranks, algo)
    run = _parsed_sample(sample)
    findings = health.check_nccl_tests(run, expected, spec)
    ranks_note = "" if ranks == int(n_ranks) else (
        f"GPU 数 {int(n_ranks)} 已改为 {ranks}：" + ("单节点最多 8 个 rank。" if intra else
                                                   "多节点网络按整机计算，至少 2 台 × 8 卡。"))
    inconsistent = run.peak_busbw_gbs > 1.05 * lines["bound_gbs"]
    return {"bound_gbs": lines["bound_gbs"], "expected_gbs": expected, "lines": lines, "model_busbw": model,
            "run": run, "findings": findings, "severity": health.busbw_severity(run.peak_busbw_gbs, expected, spec),
            "spec": spec, "ranks": ranks, "cluster": c, "intra": intra, "ring_gbs": c.ring_busbw_gbs,
            "node_net_gbs": c.node_net_gbs, "ranks_note": ranks_note, "inconsistent": inconsistent,
            "sample_ranks": run.n_ranks}


def _draw_acceptance(fig, r, values) -> None:
    """Build the artists once; later updates only move them (no new artists, no new legend)."""
    ax = fig.axes[0]
    c = _cache(fig)
    e, spec, run = r["expected_gbs"], r["spec"], r["run"]
    top = max(r["bound_gbs"], e, max(x.best_busbw_gbs for x in run.rows)) * 1.15
    lo, mid, hi = 0.0, e * spec.busbw_fail_fraction, e * spec.busbw_pass_fraction
    labels = [f"critical band (< {spec.busbw_fail_fraction:.0%} of expected)",
              f"warning band ({spec.busbw_fail_fraction:.0%} to {spec.busbw_pass_fraction:.0%} of expected)",
              f"cluster model ({r['ranks']} ranks), expected {e:.0f} GB/s",
              f"line-rate bound {r['bound_gbs']:.0f} GB/s", f"sample '{values['sample']}'"]
    if not c:
        c["crit"] = ax.axhspan(lo, mid, color="#d62728", alpha=0.12)
        c["warn"] = ax.axhspan(mid, hi, color="#ff7f0e", alpha=0.15)
        c["model"], = ax.plot(SIZES, r["model_busbw"], "-", color=PALETTE[0])
        c["bound"] = ax.axhline(r["bound_gbs"], ls=":", color="k")
        c["run"], = ax.plot(run.sizes_bytes, [x.busbw_gbs for x in run.rows], "o", color=PALETTE[3], ms=4)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes, log2)")
        ax.set_ylabel("all_reduce busbw (GB/s)")
        c["title"] = ax.set_title("")
        # below the axes: inside, the line-rate bound ran behind it
        c["legend"] = ax.legend([c[k] for k in ("crit", "warn", "model", "bound", "run")], labels, fontsize=7,
                                loc="upper center", bbox_to_anchor=(0.5, -0.14), ncols=3, frameon=False)
    else:
        c["model"].set_ydata(r["model_busbw"])
        c["bound"].set_ydata([r["bound_gbs"], r["bound_gbs"]])
        c["run"].set_data(run.sizes_bytes, [x.busbw_gbs for x in run.rows])
        for t, lab in zip(c["legend"].get_texts(), labels):
            t.set_text(lab)
    for key, (y0, y1) in (("crit", (lo, mid)), ("warn", (mid, hi))):
        patch = c[key]
        if hasattr(patch, "set_height"):  # matplotlib >= 3.9: a Rectangle in axes-x / data-y coordinates
            patch.set_y(y0)
            patch.set_height(y1 - y0)
        else:  # older matplotlib: a Polygon
            xy = patch.get_xy()
            xy[:, 1] = [y0, y1, y1, y0, y0][: len(xy)]
            patch.set_xy(xy)
    ax.set_ylim(0, top)
    c["title"].set_text(f"Acceptance: {values['fabric']}")


def _acceptance_summary(r, values) -> str:
    verdict = {"info": "✓ 通过", "warning": "⚠ 警告", "critical": "✗ 不通过"}[r["severity"]]
    if r["inconsistent"]:
        verdict = "不判定（样例与所选网络不符，见下）"
    how = "NCCL 默认（NVLS）" if r["intra"] else "NCCL_ALGO=Ring"
    head = (f"期望 busbw = {r['expected_gbs']:.1f} GB/s（集群模型，{r['ranks']} 个 rank，{how}；线速上限 {r['bound_gbs']:.1f}，"
            f"只作参考），样例峰值 {r['run'].peak_busbw_gbs:.1f} GB/s → {verdict}")
    notes = []
    if r["inconsistent"]:
        notes.append(f"<b>注意：这个样例不可能来自所选网络</b>——它的峰值 {r['run'].peak_busbw_gbs:.0f} GB/s 高出该网络的线速上限 "
                     f"{r['bound_gbs']:.1f} GB/s 的 1.05 倍，判定结论没有意义：换一个样例或换回测出它的网络。")
    if r["ranks_note"]:
        notes.append(r["ranks_note"])
    if r["sample_ranks"] and r["sample_ranks"] != r["ranks"]:
        notes.append(f"样例本身是 {r['sample_ranks']} 个 rank 的运行，期望值按 {r['ranks']} 个 rank 计算。")
    notes.append(_limit_note(r, values))
    return head + "<br>" + "<br>".join(notes)


def _limit_note(r, values) -> str:
    """Which side sets the expected busbw: the NVLink ring in the node or the node's NICs (x efficiency)."""
    eff = values["efficiency"]
    if r["intra"]:
        return f"单节点内只走 NVLink / NVLS，不经过网卡：网卡效率 {eff:.2f} 不影响期望值。"
    c = r["cluster"]
    nic = f"{c.nics_per_node} × {c.nic_gbps:g} Gb/s / 8 × {eff:.2f} = {r['node_net_gbs']:.1f} GB/s"
    if r["node_net_gbs"] >= r["ring_gbs"]:
        line = c.nics_per_node * c.nic_gbps / 8.0
        return (f"跨节点 busbw = min(节点内 NVLink 环 {r['ring_gbs']:.0f} GB/s，网卡 {nic}) → <b>NVLink 环</b>限制："
                f"网卡效率再高也不会超过它，效率低于 {r['ring_gbs'] / line:.3f} 时才由网卡决定。")
    return f"跨节点 busbw = min(节点内 NVLink 环 {r['ring_gbs']:.0f} GB/s，网卡 {nic}) → <b>网卡</b>限制。"


def acceptance_explorer() -> Explorer:
    controls = {
        "fabric": widgets.dropdown("网络", list(FABRICS), "8 x 400G NDR (DGX H100 class)"),
        "n_ranks": widgets.pow2_slider("GPU 数", 16, 2, 1024),
        "efficiency": widgets.slider("网卡效率 (busbw/线速)", NIC_EFFICIENCY, 0.5, 1.0, 0.01, fmt=".2f"),
        "latency_us": widgets.slider("网络每跳 α (µs，Simple 协议)", DEFAULT_LATENCY_US, 1.0, 50.0, 0.1),
        "sample": widgets.dropdown("nccl-tests 样例", list(SAMPLES), SAMPLES[0]),
        "pass_fraction": widgets.slider("通过线 (×期望)", 0.8, 0.5, 1.0, 0.01, fmt=".2f"),
        "fail_fraction": widgets.slider("失败线 (×期望)", 0.6, 0.3, 0.9, 0.01, fmt=".2f"),
    }
    # the two lines can never cross: the fail line stays at least 0.01 below the pass line and vice versa
    pass_w, fail_w = controls["pass_fraction"], controls["fail_fraction"]

    def _bound_fail(change):
        fail_w.max = min(0.9, round(change["new"] - 0.01, 2))

    def _bound_pass(change):
        pass_w.min = max(0.5, round(change["new"] + 0.01, 2))

    pass_w.observe(_bound_fail, names="value")
    fail_w.observe(_bound_pass, names="value")
    _bound_fail({"new": pass_w.value})
    _bound_pass({"new": fail_w.value})
    return Explorer(controls, compute=acceptance_model, draw=_draw_acceptance, summary=_acceptance_summary,
                    title="nccl-tests 带宽验收", figsize=(8.5, 4.5))


def fabric_expectation_figure(n_ranks: int = 16, efficiency: float | None = None, latency_us: float | None = None):
    """Expected all_reduce busbw against size for every fabric preset (``labutil.cluster`` model)."""
    fig, ax = new_figure(figsize=(8.5, 5.6))
    seen: dict[tuple, str] = {}
    styles = ("-", "-", "-", (0, (5, 3)), "-")
    for i, label in enumerate(FABRICS):
        c, ranks = fabric_cluster(label, n_ranks, efficiency=efficiency, latency_us=latency_us)
        exp = float(c.acceptance_busbw_gbs("all_reduce", ranks))
        intra = FABRICS[label][3]
        alpha_us = 1e6 * (c.scaleup_latency_s if intra else c.net_latency_s)  # NVLink steps vs network steps
        y = c.busbw_gbs("all_reduce", SIZES, ranks, "auto" if intra else "ring")
        key = (ranks, round(exp, 3), tuple(np.round(y, 6)))
        same = f"; same curve as {seen[key]!r} (same Gb/s per node)" if key in seen else ""
        seen.setdefault(key, label.split(" (")[0])
        # a curve that coincides with an earlier one is drawn dashed with markers on top, so both stay visible
        ax.plot(SIZES, y, color=PALETTE[i], ls=styles[i % len(styles)] if not same else (0, (4, 3)),
                marker="o" if same else None, markevery=4, ms=4, lw=2.2 if not same else 1.6, zorder=3 if same else 2,
                label=f"{label}: {ranks} ranks, α {alpha_us:.1f} µs/step, plateau {exp:.1f} GB/s{same}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_ylim(1e-3, 1e3)
    ax.set_xlabel("message size (bytes, log2)")
    ax.set_ylabel("expected all_reduce busbw (GB/s, log)")
    ax.set_title(f"Expected busbw per fabric (labutil.cluster model, about {n_ranks} ranks)")
    # below the axes: inside, the five long entries covered the small-message end of the curves
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13))
    return fig


def nccl_samples_figure(names=("nccl_tests_all_reduce_2node", "nccl_tests_all_reduce_degraded"),
                        expected_gbs: float | None = None, cluster=None):
    """busbw vs size of nccl-tests outputs (course samples by name) parsed with parse_nccl_tests.

    With ``cluster`` the acceptance lines of ``health.acceptance_lines`` are drawn (expected, 80 % /
    60 % of it, and the line-rate bound as a reference line): the same lines as ch23's
    ``explore.health.busbw_samples_figure`` for the same samples. ``expected_gbs`` (without a
    cluster) draws the expected / pass / fail lines around a given number."""
    fig, ax = new_figure(figsize=(8.5, 4.5))
    runs = []
    for i, name in enumerate(names):
        run = _parsed_sample(name)
        runs.append(run)
        ax.plot(run.sizes_bytes, [r.busbw_gbs for r in run.rows], "o-", ms=4, color=PALETTE[i],
                label=f"{name} (peak {run.peak_busbw_gbs:.0f} GB/s)")
    if cluster is not None:
        acceptance_hlines(ax, health.acceptance_lines(cluster, runs[0]))
    elif expected_gbs is not None:
        spec = health.AcceptanceSpec()
        acceptance_hlines(ax, {"expected_gbs": expected_gbs, "pass_gbs": expected_gbs * spec.busbw_pass_fraction,
                               "fail_gbs": expected_gbs * spec.busbw_fail_fraction, "bound_gbs": None,
                               "pass_fraction": spec.busbw_pass_fraction, "fail_fraction": spec.busbw_fail_fraction})
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes, log2)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title("nccl-tests all_reduce_perf: healthy vs degraded (course samples)")
    # below the axes: the expected / pass / fail lines and the bound run across the plot
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncols=2, frameon=False)
    return fig
