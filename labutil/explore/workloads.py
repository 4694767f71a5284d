"""Chapter 2 figures and explorer: requirement radars of the representative workloads."""

from __future__ import annotations

import numpy as np

from .. import workloads as W
from ..plotting import PALETTE, new_figure, reset_axes
from ..widgets import Explorer, dropdown, pow2_slider

__all__ = ["LINK_OPTIONS_GBPS", "GRAD_PRECISIONS", "radar_figure", "efficiency_vs_link_figure", "workload_explorer"]

LINK_OPTIONS_GBPS = (25, 100, 200, 400, 800)


def _radar(ax, profiles, labels):
    angles = np.linspace(0, 2 * np.pi, len(W.AXES), endpoint=False)
    closed = np.concatenate([angles, angles[:1]])
    for i, (p, label) in enumerate(zip(profiles, labels)):
        vals = np.array([p.scores[a] for a in W.AXES])
        vals = np.concatenate([vals, vals[:1]])
        color = PALETTE[i % len(PALETTE)]
        ax.plot(closed, vals, color=color, lw=1.6, label=label)
        ax.fill(closed, vals, color=color, alpha=0.12)
    ax.set_xticks(angles, [W.AXIS_LABELS[a] for a in W.AXES], fontsize=7.5)
    ax.set_ylim(0, 1)
    ax.set_yticks([0.25, 0.5, 0.75, 1.0], ["", "", "", ""])


def radar_figure(keys=("llm-pretrain", "multimodal", "recsys-inference", "science"), link_gbps: float = 400.0):
    """Requirement radars of several representative workloads on one polar chart."""
    fig, ax = new_figure(figsize=(7, 6.6), projection="polar")
    profiles = [W.profile(W.workload(k), link_gbps) for k in keys]
    _radar(ax, profiles, [p.workload.name_en for p in profiles])
    # below the chart, outside the polar axes (a legend in a corner covers the Network/Storage spokes)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=2, fontsize=8, frameon=False)
    ax.set_title("Requirement profiles (0 = none, 1 = extreme; log scales)", pad=30)  # clears the 2-line "Memory" label
    return fig


def efficiency_vs_link_figure(link_options=LINK_OPTIONS_GBPS):
    """Data-parallel scaling efficiency of each training workload vs per-GPU link rate."""
    fig, ax = new_figure(figsize=(8, 4))
    keys = [k for k in W.workload_names() if W.workload(k).sync_bytes_per_step > 0]
    x = np.arange(len(link_options))
    width = 0.8 / len(keys)
    for i, k in enumerate(keys):
        effs = W.scaling_efficiency(W.workload(k), np.asarray(link_options, dtype=float))
        ax.bar(x + i * width, effs, width, label=W.workload(k).name_en, color=PALETTE[i])
    ax.set_xticks(x + width * (len(keys) - 1) / 2, [f"{g} Gb/s" for g in link_options])
    ax.set_xlabel("Network link rate per GPU")
    ax.set_ylabel("Scaling efficiency (no overlap)")
    ax.set_ylim(0, 1.05)
    ax.axhline(0.7, color="k", lw=0.8, ls="--")
    ax.text(-0.45, 0.71, "70 %", fontsize=8)  # at the left end: on the right it sat on a bar
    # outside, below: inside the axes every corner holds bars
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=4, fontsize=8, frameon=False)
    ax.set_title("Same GPUs, different networks: who needs bandwidth?")
    return fig


GRAD_PRECISIONS = {"BF16 (2 B)": 2, "FP32 (4 B)": 4}


def _compute(workload, gpus, link_gbps, grad_bytes=2):
    w = W.workload(workload)
    if gpus % w.tp_pp:
        raise ValueError(f"gpus must be a multiple of the model-parallel degree {w.tp_pp}; got {gpus}")
    w = W.workload(workload, gpus=gpus, grad_bytes=grad_bytes)
    return {"profile": W.profile(w, link_gbps),
            "by_link": list(W.scaling_efficiency(w, np.asarray(LINK_OPTIONS_GBPS, dtype=float)))}


def _artists(fig):
    """Axes and artists of the explorer, created once; redraws only update their data."""
    art = getattr(fig, "_workload_artists", None)
    if art is None:
        fig.clear()
        ax1 = fig.add_subplot(1, 2, 1, projection="polar")
        ax2 = fig.add_subplot(1, 2, 2)
        reset_axes(ax2)
        angles = np.linspace(0, 2 * np.pi, len(W.AXES), endpoint=False)
        closed = np.concatenate([angles, angles[:1]])
        (line,) = ax1.plot(closed, np.zeros_like(closed), color=PALETTE[0], lw=1.6)
        (poly,) = ax1.fill(closed, np.zeros_like(closed), color=PALETTE[0], alpha=0.15)
        ax1.set_xticks(angles, [W.AXIS_LABELS[a] for a in W.AXES], fontsize=7.5)
        ax1.set_ylim(0, 1)
        ax1.set_yticks([0.25, 0.5, 0.75, 1.0], ["", "", "", ""])
        bars = ax2.bar([str(g) for g in LINK_OPTIONS_GBPS], np.zeros(len(LINK_OPTIONS_GBPS)))
        ax2.set_ylim(0, 1.05)
        ax2.set_xlabel("Link rate per GPU (Gb/s)")
        ax2.set_ylabel("Scaling efficiency (no overlap)")
        note = ax2.text(0.5, 0.5, "", transform=ax2.transAxes, ha="center", va="center", fontsize=9,
                        bbox=dict(boxstyle="round", fc="white", ec="0.6"))
        art = fig._workload_artists = {"ax1": ax1, "ax2": ax2, "line": line, "poly": poly, "bars": bars,
                                       "closed": closed, "note": note}
    return art


def _draw(fig, r, values):
    a = _artists(fig)
    p = r["profile"]
    vals = np.array([p.scores[k] for k in W.AXES])
    vals = np.concatenate([vals, vals[:1]])
    a["line"].set_data(a["closed"], vals)
    a["poly"].set_xy(np.column_stack([a["closed"], vals]))
    a["ax1"].set_title(p.workload.name_en, pad=28, fontsize=10)  # clears the 2-line "Memory" label
    for bar, eff, g in zip(a["bars"], r["by_link"], LINK_OPTIONS_GBPS):
        bar.set_height(eff)
        bar.set_color("#d62728" if g == values["link_gbps"] else "#1f77b4")
    a["ax2"].set_title(f"{p.workload.gpus} x {p.workload.gpu} (red: chosen link rate)")
    reason = _no_sync_reason(p.workload)
    if reason == "one_node":
        note = _NO_SYNC_NOTE[reason].format(ms=1e3 * p.comm_s)
    elif p.comm_s == 0:
        note = _NO_SYNC_NOTE[reason]
    elif p.required_gbps < 1:
        note = (f"small messages: < 1 Gb/s per GPU is enough;\nthe limit is latency "
                f"(budget {p.latency_budget_ms:.3g} ms per step)")
    else:
        note = ""
    a["note"].set_text(note)
    a["note"].set_visible(bool(note))


_NO_SYNC_NOTE = {
    "one_node": "one node: gradient sync over NVLink ({ms:.0f} ms),\nthe same at any network link rate",
    "one_replica": "one model replica: no data-parallel sync\n(TP/PP traffic not counted here)",
    "none": "no gradient sync in this workload:\n1.0 at any link rate",
}


def _no_sync_reason(w) -> str:
    """Why the network does not limit ``w``: 'one_node' (NVLink only), 'one_replica' (no data
    parallelism), 'none' (no gradient sync at all), or '' when it does sync over the network."""
    if w.sync_bytes_per_step <= 0:
        return "none"
    if w.dp <= 1:
        return "one_replica"
    if w.gpus <= W.GPUS_PER_NODE:
        return "one_node"
    return ""


def _bytes(n: float) -> str:
    return f"{n / 1e9:.3g} GB" if n >= 1e9 else f"{n / 1e6:.3g} MB"


def _num(x: float) -> str:
    """A rate for the summary: thousands separators, 3 significant digits, never 1.23e+03."""
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def _summary(r, values):
    p = r["profile"]
    w = p.workload
    reason = _no_sync_reason(w)
    if reason == "one_node":
        no_sync = f"单节点：梯度同步走 NVLink（每步约 {1e3 * p.comm_s:.0f} ms），与网卡速率无关，不需要跨节点网络"
    elif reason == "one_replica":
        no_sync = (f"{w.gpus} 张卡只放得下 1 个模型副本（模型并行度 {w.tp_pp}），没有数据并行的梯度同步；"
                   "模型并行（TP/PP）的流量这张图没有计入（第 8、14 章）")
    else:
        no_sync = "这个场景每步没有梯度同步，不需要跨节点网络"
    if reason:
        need = no_sync
    elif np.isinf(p.required_gbps):
        need = "任何带宽都达不到 90%（延迟项已超出预算）"
    elif p.required_gbps < 1:
        need = "每卡不到 1 Gb/s（消息小，瓶颈是延迟不是带宽）"
    else:
        need = f"每卡约 {p.required_gbps:,.0f} Gb/s"
    if not reason or reason == "one_node":
        what = ("FP32" if w.grad_bytes == 4 else "BF16") + " 梯度" if w.sync_bytes == -1 else "数据"
        need += f"；每卡每步同步 {_bytes(w.sync_bytes_per_step)} {what}"
    budget = ""
    if p.latency_budget_ms > 0:
        what = "延迟目标（SLO）" if w.latency_ms > 0 else "每步通信预算（保 90% 效率）"
        budget = f"；{what} {p.latency_budget_ms:,.3g} ms"
    net = f"网络：{need}" if reason else f"要达到 90%：{need}"
    return (f"{p.workload.name_zh}（{w.gpus} 张 {w.gpu}）：在 {values['link_gbps']} Gb/s 下扩展效率 "
            f"<b>{p.scaling_efficiency:.0%}</b>；{net}{budget}；"
            f"一份完整的训练状态/权重相当于 {p.memory_gpus:.2g} 张卡的显存；聚合读带宽 {_num(p.read_gbs)} GB/s、"
            f"每秒打开 {_num(p.files_per_s)} 个文件")


def workload_explorer() -> Explorer:
    """Pick a scenario, change its GPU count and the network: the radar and efficiency follow."""
    controls = {
        "workload": dropdown("场景", W.workload_names(), "llm-pretrain"),
        "gpus": pow2_slider("GPU 数量", 2048, 8, 16384),
        "link_gbps": dropdown("每卡网络 (Gb/s)", LINK_OPTIONS_GBPS, 400),
        # the profile counts BF16 gradients (the optimistic case, as ch14); FP32 is Megatron-LM's and
        # torch.autocast DDP's default: a learner can double the bytes and watch the need double
        "grad_bytes": dropdown("梯度归约精度", GRAD_PRECISIONS, 2),
    }
    all_gpus = list(controls["gpus"].options)

    def _feasible_gpus(change):
        # only GPU counts that hold at least one model-parallel group (llm-pretrain: tp x pp = 32, so no 8 or 16)
        # and jump to the workload's representative size, so the first view matches the chapter's table
        w = W.workload(change["new"])
        opts = [g for g in all_gpus if g % w.tp_pp == 0]
        keep = w.gpus if w.gpus in opts else (controls["gpus"].value if controls["gpus"].value in opts else opts[0])
        controls["gpus"].options = opts
        controls["gpus"].value = keep

    controls["workload"].observe(_feasible_gpus, names="value")
    _feasible_gpus({"new": controls["workload"].value})
    return Explorer(controls, compute=_compute, draw=_draw, summary=_summary, title="场景需求画像", figsize=(10, 4.2))
