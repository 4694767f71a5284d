"""Explorers and figures for collective communication (ch13) and bandwidth planning (ch14).

Explorers (``labutil.widgets.Explorer``):

- ``collective_time_explorer()``: op, ranks, per-rank bandwidth, latency, NVLink bandwidth ->
  time vs message size for ring / tree / hierarchical, and algbw vs busbw of one algorithm.
- ``dp_bandwidth_explorer()``: model preset, GPU, tokens per GPU, MFU, GPUs, NIC speed and count,
  overlap, algorithm -> GPU utilisation vs server network bandwidth, and scaling efficiency vs GPUs.

Figures (``*_figure()`` returning a matplotlib Figure; axis labels in English with units):
``cost_terms_figure``, ``busbw_vs_size_figure``, ``algbw_vs_ranks_figure``, ``seed003_figure``,
``utilisation_vs_bandwidth_figure``, ``scaling_efficiency_figure``.

Explorer figures create their artists once and then only update data, which keeps an update
well under 50 ms (benchmarks/bench_comm_explorers.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import cluster as cluster_mod
from .. import comm, dp, hardware, models, scenarios, validate
from ..bench import collectives as bc
from ..plotting import PALETTE, new_figure
from ..widgets import Explorer, choice_slider, dropdown, pow2_slider, slider

__all__ = ["SIZES_BYTES", "ALGO_COLORS", "BW_CHOICES_GBS", "LATENCY_CHOICES_US", "NVLINK_CHOICES_GBS",
           "NIC_CHOICES_GBPS", "NICS_PER_NODE_CHOICES", "DP_ALGOS", "GPUS_PER_NODE", "SERVER_GBPS_GRID",
           "N_GPUS_GRID", "CollectiveSweep", "collective_sweep", "collective_time_explorer", "DPBandwidthResult",
           "dp_cluster", "dp_bandwidth", "REFERENCE_SERVER_GBPS", "dp_bandwidth_explorer", "cost_terms_figure",
           "busbw_vs_size_figure", "algbw_vs_ranks_figure", "SEED003_CONFIGS", "seed003_rows", "seed003_figure",
           "utilisation_vs_bandwidth_figure", "SCALING_SCENARIOS", "OVERSUB_SCENARIOS", "scaling_curves",
           "scaling_efficiency_figure", "oversubscription_figure", "nccl_tests_sample_text"]

SIZES_BYTES = 2.0 ** np.arange(3, 34)  # 8 B .. 8 GiB, nccl-tests `-b 8 -e 8G -f 2`
ALGO_COLORS = {"ring": PALETTE[0], "tree": PALETTE[1], "hierarchical": PALETTE[2]}
#: What the bare α-β algorithms are, in the legends: comm's ring is ONE ring over links of B (one channel)
ALGO_LABELS = {"ring": "flat ring (1 channel)", "tree": "flat tree (1 channel)", "hierarchical": "hierarchical"}
# per-rank bandwidth choices (GB/s): one 25 GbE port shared by 8 GPUs, then one NIC per GPU at
# 25/50/100/200/400/800 Gbit/s
BW_CHOICES_GBS = (0.39, 3.125, 6.25, 12.5, 25.0, 50.0, 100.0)
LATENCY_CHOICES_US = (0.5, 1.0, 2.0, 3.4, 5.0, 9.6, 20.0, 50.0, 100.0)
# per-direction NVLink per GPU (half the catalog bidirectional figure): A800/H800 200, A100 300, H100 450, B200 900
NVLINK_CHOICES_GBS = (200.0, 300.0, 450.0, 900.0)
NIC_CHOICES_GBPS = (25, 100, 200, 400)
NICS_PER_NODE_CHOICES = (1, 2, 4, 8)
# the DP explorer's algorithms, grids and model live in labutil.dp (re-exported here)
DP_ALGOS = dp.DP_ALGOS
GPUS_PER_NODE = dp.GPUS_PER_SERVER
SERVER_GBPS_GRID = dp.SERVER_GBPS_GRID
N_GPUS_GRID = dp.N_GPUS_GRID
EP_CHOICES = (1, 2, 4, 8)


def _pow2_ticks(ax, grid) -> None:
    ticks = [int(x) for x in grid[::2]]
    ax.set_xticks(ticks, [f"{t:,}" for t in ticks])
    ax.minorticks_off()


def _fmt_bytes(b: float) -> str:
    """Bytes in the unit a reader expects (decimal: MB = 1e6 B)."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if b >= scale:
            return f"{b / scale:,.3g} {unit}"
    return f"{b:.0f} B"


def _fmt_s(t: float) -> str:
    if t >= 1:
        return f"{t:.3g} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3g} ms"
    return f"{t * 1e6:.3g} µs"


# ============================================================================================
# collective-time explorer (ch13)
# ============================================================================================
@dataclass(frozen=True)
class CollectiveSweep:
    """Model output over ``sizes_bytes`` for one op on ``n`` ranks."""

    op: str
    n: int
    algo: str
    bw_gbs: float
    intra_bw_gbs: float
    sizes_bytes: np.ndarray
    time_s: dict  # algo -> array
    busbw_gbs: dict  # algo -> array
    algbw_gbs: np.ndarray  # of ``algo``
    crossover_bytes: float | None  # ring vs tree all_reduce; None when not applicable


def collective_sweep(op: str = "all_reduce", n: int = 16, bw_gbs: float = 50.0, latency_us: float = 9.6,
                     intra_bw_gbs: float = 450.0, algo: str = "ring", gpus_per_node: int = GPUS_PER_NODE,
                     sizes_bytes=SIZES_BYTES) -> CollectiveSweep:
    """Times and bandwidths of ``op`` for every algorithm over a size sweep (the explorer's model)."""
    validate.choice("algo", algo, comm.ALGOS)
    lat = validate.positive("latency_us", latency_us, allow_zero=True) * 1e-6
    s = np.asarray(sizes_bytes, dtype=float)
    kw_h = dict(gpus_per_node=gpus_per_node, intra_bw_gbs=intra_bw_gbs)
    times, bus = {}, {}
    for a in comm.ALGOS:
        kw = kw_h if a == "hierarchical" else {}
        times[a] = comm.collective_time_s(op, s, n, bw_gbs, lat, a, **kw)
        bus[a] = comm.model_busbw_gbs(op, s, n, bw_gbs, lat, a, **kw)
    alg = s / times[algo] / 1e9
    cross = None
    if op == "all_reduce" and n >= 3:
        cross = comm.ring_tree_crossover_bytes(n, bw_gbs, lat)
    return CollectiveSweep(op, int(n), algo, float(bw_gbs), float(intra_bw_gbs), s, times, bus, alg, cross)


def _draw_sweep(fig, r: CollectiveSweep, values, cache: dict) -> None:
    ax_t, ax_b = fig.axes[0], fig.axes[1]
    if "lines" not in cache:
        cache["lines"] = {}
        for a in comm.ALGOS:
            (cache["lines"][a],) = ax_t.loglog(r.sizes_bytes, r.time_s[a], color=ALGO_COLORS[a], lw=1.8,
                                               label=ALGO_LABELS[a])
        cache["cross"] = ax_t.axvline(r.sizes_bytes[0], color="0.4", ls=":", lw=1.0, label="ring = tree crossover (all_reduce only)")
        ax_t.set_xlabel("message size (bytes)")
        ax_t.set_ylabel("time per collective (s)")
        # below the axes: no corner of a log-log time plot stays empty for every op / n / alpha
        ax_t.legend(loc="upper center", bbox_to_anchor=(0.5, -0.17), fontsize=8, ncols=2, frameon=False)
        (cache["alg"],) = ax_b.semilogx(r.sizes_bytes, r.algbw_gbs, color=PALETTE[4], lw=1.8, label="algbw = S / t")
        (cache["bus"],) = ax_b.semilogx(r.sizes_bytes, r.busbw_gbs[r.algo], color=PALETTE[3], lw=1.8,
                                        label="busbw = algbw x factor")
        cache["link"] = ax_b.axhline(r.bw_gbs, color="0.3", ls="--", lw=1.0, label="per-rank network bandwidth B")
        ax_b.set_xlabel("message size (bytes)")
        ax_b.set_ylabel("bandwidth (GB/s)")
        ax_b.legend(loc="upper left", fontsize=8)
    for a in comm.ALGOS:
        cache["lines"][a].set_ydata(r.time_s[a])
        cache["lines"][a].set_linewidth(3.0 if a == r.algo else 1.4)
    if r.crossover_bytes is not None and r.sizes_bytes[0] <= r.crossover_bytes <= r.sizes_bytes[-1]:
        cache["cross"].set_xdata([r.crossover_bytes, r.crossover_bytes])
        cache["cross"].set_visible(True)
    else:
        cache["cross"].set_visible(False)
    tmin = min(float(np.min(v[v > 0])) for v in r.time_s.values())
    tmax = max(float(np.max(v)) for v in r.time_s.values())
    ax_t.set_ylim(tmin / 2, tmax * 2)
    ax_t.set_title(f"{r.op}, n = {r.n} ranks (thick line: {r.algo})")
    cache["alg"].set_ydata(r.algbw_gbs)
    cache["bus"].set_ydata(r.busbw_gbs[r.algo])
    cache["link"].set_ydata([r.bw_gbs, r.bw_gbs])
    top = max(float(np.max(r.busbw_gbs[r.algo])), float(np.max(r.algbw_gbs)), r.bw_gbs)
    ax_b.set_ylim(0, top * 1.15)
    ax_b.set_title(f"{r.algo}: algbw vs busbw")
    # layout: solved once by the Explorer at its first render (labutil.widgets), not here


def _sweep_summary(r: CollectiveSweep, values) -> str:
    s_big = r.sizes_bytes[-1]
    parts = [f"<b>{r.op}</b>，{r.n} 个 rank，每 rank 网络带宽 {r.bw_gbs:g} GB/s，α = {values['latency_us']:g} µs。"
             f"8 GiB 时：" + "，".join(f"{a} {_fmt_s(float(r.time_s[a][-1]))}" for a in comm.ALGOS) + "。",
             f"{r.algo} 在 8 GiB 的 busbw = {float(r.busbw_gbs[r.algo][-1]):.1f} GB/s"
             f"（busbw/algbw 系数 {float(comm.busbw_factor(r.op, r.n)):.3f}）。"]
    if r.crossover_bytes is not None:
        parts.append(f"ring 与 tree 的交叉点 S* ≈ {_fmt_bytes(r.crossover_bytes)}：小于它 tree 更快（延迟项 ∝ log n），"
                     f"大于它 ring 更快（带宽项系数 2(n−1)/n &lt; 2）。")
    if s_big > 0 and r.algo == "hierarchical" and float(r.busbw_gbs["hierarchical"][-1]) > r.bw_gbs:
        parts.append("注意：hierarchical 的 busbw 可以高于网卡带宽——节点内那部分流量走的是 NVLink。")
    return "<br>".join(parts)


def collective_time_explorer(op: str = "all_reduce", n: int = 16, bw_gbs: float = 50.0, latency_us: float = 9.6,
                             intra_bw_gbs: float = 450.0, algo: str = "ring") -> Explorer:
    """Explorer: collective time vs message size (ring / tree / hierarchical) and algbw vs busbw."""
    comm.check_op(op)
    controls = {
        "op": dropdown("集合操作", comm.OPS, op),
        "algo": dropdown("右图算法", comm.ALGOS, algo),
        "n": pow2_slider("rank 数 n", n, 2, 4096),
        "bw_gbs": choice_slider("每 rank 网络带宽 (GB/s)", sorted(set(BW_CHOICES_GBS) | {float(bw_gbs)}), float(bw_gbs)),
        "latency_us": choice_slider("每步延迟 α (µs)", sorted(set(LATENCY_CHOICES_US) | {float(latency_us)}),
                                    float(latency_us)),
        "intra_bw_gbs": choice_slider("NVLink 单向 (GB/s)", sorted(set(NVLINK_CHOICES_GBS) | {float(intra_bw_gbs)}),
                                      float(intra_bw_gbs)),
    }
    cache: dict = {}
    return Explorer(controls, compute=collective_sweep, draw=lambda fig, r, v: _draw_sweep(fig, r, v, cache),
                    summary=_sweep_summary, title="集合通信 α-β 模型：时间与 algbw / busbw", figsize=(10.0, 4.2),
                    nrows=1, ncols=2)


# ============================================================================================
# data-parallel bandwidth / utilisation / scaling explorer (ch14)
# ============================================================================================
#: The explorer's model is labutil.dp's (names kept as re-exports).
DPBandwidthResult = dp.DPPlan
dp_bandwidth = dp.dp_bandwidth


def dp_cluster(gpu: str, n_gpus: int, nic_gbps: float, nics_per_node: int):
    """The ``labutil.cluster.Cluster`` of the DP explorer: ``dp.catalog_cluster``."""
    return dp.catalog_cluster(gpu, n_gpus, nic_gbps, nics_per_node)


REFERENCE_SERVER_GBPS = {"1x25G": 25, "2x25G": 50, "1x100G": 100, "1x400G": 400, "8x400G": 3200}


def _draw_dp(fig, r: DPBandwidthResult, values, cache: dict) -> None:
    ax_u, ax_s = fig.axes[0], fig.axes[1]
    if "util" not in cache:
        (cache["util"],) = ax_u.semilogx(r.server_gbps_grid, 100 * r.utilisation_grid, color=PALETTE[0], lw=2,
                                         label="GPU utilisation")
        (cache["upt"],) = ax_u.plot([r.server_gbps], [100 * float(r.step.utilisation)], "o", color=PALETTE[3], ms=9,
                                    label="chosen NIC config")
        ax_u.axhline(30, color="0.5", ls=":", lw=1.0, label="30 %")
        for label, x in REFERENCE_SERVER_GBPS.items():
            ax_u.axvline(x, color="0.85", lw=0.8, zorder=0)
            ax_u.text(x, 101, label, rotation=90, fontsize=7, ha="center", va="bottom", color="0.35")
        ax_u.set_xlim(r.server_gbps_grid[0], r.server_gbps_grid[-1])
        ax_u.set_ylim(0, 118)
        ax_u.set_xlabel("network bandwidth per server (Gbit/s)")
        ax_u.set_ylabel("GPU utilisation (% of step time computing)")
        ax_u.legend(loc="lower right", fontsize=8)
        (cache["eff"],) = ax_s.semilogx(r.n_gpus_grid, 100 * r.efficiency_grid, "o-", color=PALETTE[2], lw=2, ms=4,
                                        base=2, label="scaling efficiency")
        (cache["spt"],) = ax_s.plot([r.n_gpus], [100 * float(r.step.utilisation)], "o", color=PALETTE[3], ms=9,
                                    label="chosen GPU count")
        ax_s.axhline(70, color="0.5", ls=":", lw=1.0, label="70 % (seed 000)")
        ax_s.set_xlim(r.n_gpus_grid[0] / 1.3, r.n_gpus_grid[-1] * 1.3)
        _pow2_ticks(ax_s, r.n_gpus_grid)
        ax_s.set_ylim(0, 118)
        ax_s.set_xlabel("number of GPUs (data parallel)")
        ax_s.set_ylabel("scaling efficiency (%)")
        ax_s.legend(loc="upper right", fontsize=8, ncol=3)
    cache["util"].set_ydata(100 * r.utilisation_grid)
    cache["upt"].set_data([r.server_gbps], [100 * float(r.step.utilisation)])
    g = _node_gpus(r, values)
    ax_u.set_xlabel(f"network bandwidth per {g}-GPU {'compute tray' if g < 8 else 'server'} (Gbit/s)")
    ax_u.set_title(f"{r.model} on {r.n_gpus} x {r.gpu}")
    cache["eff"].set_ydata(100 * r.efficiency_grid)
    x_eff = np.interp(np.log2(r.n_gpus), np.log2(r.n_gpus_grid), 100 * r.efficiency_grid)
    cache["spt"].set_data([r.n_gpus], [x_eff])
    ax_s.set_title(f"{values['nics_per_node']} x {values['nic_gbps']:g}G per {'tray' if g < 8 else 'server'}, "
                   f"{values['algo']}")


def _node_gpus(r: DPBandwidthResult, values) -> int:
    """GPUs behind one node's NICs (8 on HGX/DGX, 4 on a GB200 compute tray): what 'per server' means."""
    return dp.catalog_cluster(r.gpu, r.n_gpus, values["nic_gbps"], values["nics_per_node"]).gpus_per_node


def _dp_summary(r: DPBandwidthResult, values) -> str:
    st = r.step
    g = _node_gpus(r, values)
    per = "每台" if g >= 8 else f"每个 {g} 卡计算托盘"
    grad_gb = comm.gradient_bytes(r.sync_params, 2) / 1e9
    if r.comm_n_gpus <= dp.catalog_cluster(r.gpu, r.n_gpus, values["nic_gbps"], values["nics_per_node"]).scaleup_domain_gpus:
        req = "一个 NVLink 域内（单台服务器或一个 NVL72 机柜）不走网络，不需要网卡带宽"
    else:
        req = "，".join(f"{int(k * 100)}% 需{per} ≥ {v:,.0f} Gbit/s" if v is not None
                       else f"{int(k * 100)}% 在 6.4 Tbit/s 以内达不到（NVLink/延迟项已超预算，或网络之外的部分）"
                       for k, v in r.required_gbps.items())
    what = f"{r.model}（{r.params / 1e9:.2f}B 参数"
    if r.moe:
        what += (f"，MoE：计算按激活参数 {r.active_params / 1e9:.1f}B，梯度按 {r.sync_params / 1e9:.1f}B 同步"
                 + ("——纯数据并行时每个 rank 都持有全部专家" if r.ep == 1 else f"——EP={r.ep}：专家梯度只在持有同一批专家的 "
                    f"{r.comm_n_gpus // r.ep} 个 rank 之间同步"))
    elif values.get("ep", 1) > 1:
        what += "，稠密模型：EP 不起作用"
    what += f"，bf16 梯度 {grad_gb:.1f} GB/步）"
    placed = "" if r.comm_n_gpus == r.n_gpus else f"（通信按整柜 {r.comm_n_gpus} 张卡计算）"
    return (f"{what}；每卡计算 {_fmt_s(r.compute_s)}，梯度同步 {_fmt_s(r.comm_s)}{placed}，"
            f"暴露通信 {_fmt_s(float(st.exposed_comm_s))}。<br>"
            f"<b>GPU 利用率 {float(st.utilisation):.1%}</b>，通信占比 {float(st.comm_ratio):.1%}。反推带宽：{req}。")


def dp_bandwidth_explorer(model: str = "llama2-7b", gpu: str = "H800-SXM", tokens_per_gpu: int = 16384,
                          mfu: float = 0.45, n_gpus: int = 32, nic_gbps: float = 25, nics_per_node: int = 1,
                          overlap: float = 0.0, algo: str = "auto (NCCL)", ep: int = 1) -> Explorer:
    """Explorer: utilisation vs server network bandwidth, and scaling efficiency vs GPU count."""
    models.transformer(model)
    gpus = [n for n in hardware.gpus() if hardware.gpu(n).nvlink_gbs > 0 and hardware.gpu(n).bf16_tflops > 0]
    controls = {
        "model": dropdown("模型", models.transformer_names(), model),
        "gpu": dropdown("GPU", gpus, hardware.gpu(gpu).name),
        "tokens_per_gpu": pow2_slider("每卡每步 token", tokens_per_gpu, 1024, 262144),
        "mfu": slider("计算阶段 MFU", mfu, 0.10, 0.80, 0.01, fmt=".2f"),
        "n_gpus": pow2_slider("GPU 数量", n_gpus, 8, 8192),
        "nic_gbps": choice_slider("网卡速率 (Gbit/s)", sorted(set(NIC_CHOICES_GBPS) | {nic_gbps}), nic_gbps),
        "nics_per_node": choice_slider("每台网卡数", sorted(set(NICS_PER_NODE_CHOICES) | {nics_per_node}), nics_per_node),
        "overlap": slider("可重叠比例 overlap", overlap, 0.0, 1.0, 0.05, fmt=".2f"),
        "algo": dropdown("梯度同步算法", list(DP_ALGOS), dp._DP_ALGO_ALIASES.get(algo, algo)),
        "ep": choice_slider("专家并行 EP（仅 MoE）", EP_CHOICES, ep),
    }
    cache: dict = {}
    return Explorer(controls, compute=dp_bandwidth, draw=lambda fig, r, v: _draw_dp(fig, r, v, cache),
                    summary=_dp_summary, title="带宽 → GPU 利用率 / 扩展效率（数据并行）", figsize=(10.0, 4.2),
                    nrows=1, ncols=2)


# ============================================================================================
# static figures
# ============================================================================================
def cost_terms_figure(n: int = 64, bw_gbs: float = 50.0, latency_s: float = comm.NET_STEP_LATENCY_S):
    """Ring vs tree all-reduce: latency term and bandwidth term vs message size (log-log)."""
    fig, ax = new_figure(figsize=(7.5, 4.2))
    s = SIZES_BYTES
    for algo, ls in (("ring", "-"), ("tree", "--")):
        c = comm.collective_cost("all_reduce", s, n, bw_gbs, latency_s, algo)
        ax.loglog(s, np.full_like(s, c.latency_s[0]), ls=ls, color=PALETTE[3], lw=1.2,
                  label=f"{algo}: latency term")
        ax.loglog(s, c.bandwidth_s, ls=ls, color=PALETTE[0], lw=1.2, label=f"{algo}: bandwidth term")
        ax.loglog(s, c.time_s, ls=ls, color="k", lw=2.2, label=f"{algo}: total")
    x = comm.ring_tree_crossover_bytes(n, bw_gbs, latency_s)
    ax.axvline(x, color="0.5", ls=":", lw=1)
    ax.annotate(f"ring = tree\n{x / 1e6:.0f} MB", (x, 1e-5), xytext=(6, 0), textcoords="offset points", fontsize=8)
    ax.set_ylim(1e-6, None)
    ax.set_xlabel("message size S (bytes)")
    ax.set_ylabel("all_reduce time (s)")
    ax.set_title(f"alpha-beta model, n = {n}, B = {bw_gbs:g} GB/s, alpha = {latency_s * 1e6:g} us")
    ax.legend(fontsize=7, ncol=2, loc="upper left")
    return fig


def busbw_vs_size_figure(ns=(16, 1024), bw_gbs: float = 50.0, intra_bw_gbs: float = 450.0,
                         latency_s: float = comm.NET_STEP_LATENCY_S):
    """Modelled nccl-tests busbw vs size for all_reduce at two scales: the bare α-β algorithms of
    ``labutil.comm`` (the flat ring is ONE ring, one channel, over links of ``bw_gbs``) and, beside
    them, the cluster model's per-rail rings on DGX H100 nodes (``Cluster.busbw_gbs``, NCCL_ALGO=Ring:
    8 rails together, capped by the NVLink ring)."""
    fig, axes = new_figure(1, len(ns), figsize=(10.0, 4.0))
    axes = np.atleast_1d(axes)
    s = SIZES_BYTES
    dgx = cluster_mod.Cluster.system("DGX-H100")
    for ax, n in zip(axes, ns):
        for algo in comm.ALGOS:
            kw = dict(gpus_per_node=8, intra_bw_gbs=intra_bw_gbs) if algo == "hierarchical" else {}
            ax.semilogx(s, comm.model_busbw_gbs("all_reduce", s, n, bw_gbs, latency_s, algo, **kw),
                        color=ALGO_COLORS[algo], lw=2, label=ALGO_LABELS[algo])
        c = dgx.with_gpus(n)
        ax.semilogx(s, c.busbw_gbs("all_reduce", s, n, "ring"), color=PALETTE[4], lw=2, ls="--",
                    label="per-rail rings, NCCL_ALGO=Ring (cluster model, DGX H100)")
        ax.semilogx(s, c.busbw_gbs("all_reduce", s, n, "auto"), color=PALETTE[5], lw=1.6, ls="-.",
                    label="NCCL's default choice (cluster model, DGX H100)")
        ax.axhline(bw_gbs, color="0.3", ls=":", lw=1, label="NIC bandwidth per GPU")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("busbw (GB/s)")
        ax.set_title(f"all_reduce, n = {n} GPUs ({max(1, n // 8)} nodes of 8)")
    # one legend for both panels, outside the axes (six entries would cover the curves inside); the figure's
    # constrained layout reserves the strip for it, so the two panels keep equal widths
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="outside lower center", ncols=3, frameon=False)
    return fig


def algbw_vs_ranks_figure(bw_gbs: float = 50.0, size_bytes: float = 8 * 2**30):
    """Why busbw: for a fixed link, algbw of a large ring all_reduce falls with n, busbw stays at B."""
    fig, ax = new_figure(figsize=(7.0, 3.8))
    n = 2 ** np.arange(1, 13)
    t = comm.collective_time_s("all_reduce", size_bytes, n, bw_gbs, 0.0)
    alg = comm.algbw_gbs(size_bytes, t)
    ax.semilogx(n, alg, "o-", base=2, color=PALETTE[4], label="algbw = S / t")
    ax.semilogx(n, comm.busbw_gbs("all_reduce", alg, n), "s-", base=2, color=PALETTE[3], label="busbw = algbw x 2(n-1)/n")
    _pow2_ticks(ax, n)  # plain rank counts (2, 8, 32, ... 2,048), not 2^k
    ax.axhline(bw_gbs, color="0.3", ls="--", lw=1, label="link bandwidth B")
    ax.set_ylim(0, bw_gbs * 1.2)
    ax.set_xlabel("ranks n")
    ax.set_ylabel("bandwidth (GB/s)")
    ax.set_title(f"ring all_reduce of {size_bytes / 2**30:g} GiB, alpha = 0")
    ax.legend(fontsize=8, loc="lower left")
    return fig


#: Seed 003's per-server NIC configurations (labutil/data/scenarios.toml).
SEED003_CONFIGS = scenarios.dp_configs()


def seed003_rows(model: str = "llama2-7b", gpu: str = "H800-SXM", n_gpus: int = 32, tokens_per_gpu: int = 16384,
                 mfu: float = 0.45, overlap: float = 0.0, configs=SEED003_CONFIGS) -> list[dict]:
    """Seed 003's case per server NIC configuration: ``labutil.dp.config_rows``."""
    return dp.config_rows(model, gpu, n_gpus, tokens_per_gpu, mfu, overlap, configs)


def seed003_figure(overlaps=(0.0, 2 / 3), **kwargs):
    """Step time split into compute and exposed communication for each NIC configuration."""
    fig, axes = new_figure(1, len(overlaps), figsize=(10.5, 3.8))
    axes = np.atleast_1d(axes)
    for ax, ov in zip(axes, overlaps):
        rows = seed003_rows(overlap=ov, **kwargs)
        y = np.arange(len(rows))[::-1]
        comp = np.array([r["compute_s"] for r in rows])
        exp_ = np.array([r["exposed_s"] for r in rows])
        ax.barh(y, comp, color=PALETTE[0], label="compute")
        ax.barh(y, exp_, left=comp, color=PALETTE[3], label="exposed communication")
        for yi, r, c, e in zip(y, rows, comp, exp_):
            ax.text(c + e, yi, f" {r['utilisation']:.0%}", va="center", fontsize=8)
        ax.set_yticks(y, [r["config"] for r in rows])
        ax.set_xlabel("time per training step (s)")
        ax.set_ylabel("network per 8-GPU server")
        ax.set_xlim(0, float(np.max(comp + exp_)) * 1.18)
        ax.set_title(f"overlap = {ov:.2f}  (label: GPU utilisation)")
        ax.grid(axis="y", visible=False)
        ax.legend(fontsize=8, loc="lower right")
    return fig


def utilisation_vs_bandwidth_figure(model: str = "llama2-7b", gpu: str = "H800-SXM", n_gpus: int = 32,
                                    tokens_choices=(4096, 16384, 65536), mfu: float = 0.45, overlap: float = 0.0):
    """GPU utilisation vs network bandwidth per server, one curve per tokens-per-GPU-per-step.

    For data parallelism both the gradient (2·N bytes) and the compute (6·N·T FLOPs) scale with N,
    so the curve depends on the tokens per GPU per step, not on the model size.
    """
    fig, ax = new_figure(figsize=(7.5, 4.2))
    for i, t in enumerate(tokens_choices):
        r = dp_bandwidth(model, gpu, t, mfu, n_gpus, 25, 1, overlap)
        ax.semilogx(r.server_gbps_grid, 100 * r.utilisation_grid, color=PALETTE[i], lw=2,
                    label=f"{t:,} tokens/GPU/step (compute {r.compute_s:.2f} s)")
    for label, x in REFERENCE_SERVER_GBPS.items():
        ax.axvline(x, color="0.85", lw=0.8, zorder=0)
        ax.text(x, 101, label, rotation=90, fontsize=7, ha="center", va="bottom", color="0.35")
    ax.axhline(30, color="0.5", ls=":", lw=1)
    ax.text(r.server_gbps_grid[0] * 1.1, 31, "30 %", fontsize=8, color="0.4")
    ax.set_ylim(0, 118)
    ax.set_xlabel("network bandwidth per 8-GPU server (Gbit/s)")
    ax.set_ylabel("GPU utilisation (%)")
    ax.set_title(f"{model} on {n_gpus} x {gpu}, MFU {mfu:.0%}, overlap {overlap:.2f}")
    ax.legend(fontsize=8, loc="lower right")
    return fig


#: ch14's network scenarios (labutil/data/scenarios.toml).
SCALING_SCENARIOS = scenarios.scaling_scenarios("default")
OVERSUB_SCENARIOS = scenarios.scaling_scenarios("oversubscribed")


def scaling_curves(model: str = "llama2-7b", gpu: str = "H800-SXM", tokens_per_gpu: int = 16384, mfu: float = 0.45,
                   overlap: float = 2 / 3, scenarios=SCALING_SCENARIOS) -> dict:
    """label -> ScalingCurve over ``N_GPUS_GRID``: ``labutil.dp.scaling_curves``."""
    return dp.scaling_curves(model, gpu, tokens_per_gpu, mfu, overlap, scenarios)


def scaling_efficiency_figure(model: str = "llama2-7b", gpu: str = "H800-SXM", tokens_per_gpu: int = 16384,
                              mfu: float = 0.45, overlap: float = 2 / 3, scenarios=SCALING_SCENARIOS,
                              leaf_gpus: int | None = None):
    """Weak-scaling efficiency vs GPU count for several network configurations."""
    fig, ax = new_figure(figsize=(8.0, 4.4))
    curves = scaling_curves(model, gpu, tokens_per_gpu, mfu, overlap, scenarios)
    for i, (label, c) in enumerate(curves.items()):
        ax.semilogx(N_GPUS_GRID, 100 * c.scaling_efficiency, "o-", base=2, ms=3.5, lw=1.8, color=PALETTE[i], label=label)
    ax.axhline(70, color="0.5", ls=":", lw=1)
    ax.text(N_GPUS_GRID[-1], 71, "70 %", fontsize=8, color="0.4", ha="right")
    if leaf_gpus:
        ax.axvline(leaf_gpus, color="0.6", ls="--", lw=1)
        ax.text(leaf_gpus * 1.08, 97, f"one leaf switch: {leaf_gpus} GPUs", fontsize=8, color="0.35", va="top")
    _pow2_ticks(ax, N_GPUS_GRID)
    ax.set_ylim(0, 105)
    ax.set_xlabel("number of GPUs (8 per server)")
    ax.set_ylabel("scaling efficiency (%)")
    ax.set_title(f"{model} data parallel on {gpu}, overlap {overlap:.2f}, DDP 25 MiB buckets")
    # where the curves leave room: lower left hid the 25GbE curve's drop; the oversubscription curves
    # all stay above 50 %, so the lower right is empty there
    ax.legend(fontsize=8, loc="lower right" if leaf_gpus else "center right")
    return fig


def oversubscription_figure(**kwargs):
    """Seed 004 "beyond 32 GPUs the network becomes the bottleneck": a leaf of 4 servers (32 GPUs),
    oversubscribed uplinks beyond it (no overlap, so every byte on the wire shows)."""
    kw = dict(overlap=0.0, scenarios=OVERSUB_SCENARIOS, leaf_gpus=32)
    kw.update(kwargs)
    return scaling_efficiency_figure(**kw)


# ============================================================================================
# illustrative nccl-tests output (ch13/ch14 实操命令)
# ============================================================================================
def nccl_tests_sample_text(op: str = "all_reduce", n_nodes: int = 2, gpus_per_node: int = GPUS_PER_NODE,
                           bw_gbs: float = 50.0, latency_s: float = comm.NET_STEP_LATENCY_S, algo: str | None = None,
                           intra_bw_gbs: float = 450.0, gpu_name: str = "NVIDIA H100 80GB HBM3",
                           minbytes: int = 8, maxbytes: int = 8 * 2**30, cluster=None) -> str:
    """An ILLUSTRATIVE ``*_perf -b 8 -e 8G -f 2 -g 1`` output: model times printed in nccl-tests'
    table format (column layout and number formatting of NVIDIA/nccl-tests src/common.cu, reproduced
    by ``labutil.bench.collectives.format_row``). Not a measurement: the first comment line says so,
    and ``labutil.parsers.parse_nccl_tests`` reads it like real output.

    With ``cluster`` (a ``labutil.cluster.Cluster``) the times are the cluster model's
    (``cluster.collective_time_s``, algo default 'auto') on ``n_nodes`` of its nodes; without it the
    bare α-β model of ``labutil.comm`` with per-rank bandwidth ``bw_gbs`` (algo default 'ring')."""
    from ..bench import collectives as bc

    op = comm.check_op(op)
    nodes = validate.integer("n_nodes", n_nodes, lo=1)
    if cluster is not None:
        algo = "auto" if algo is None else algo
        validate.choice("algo", algo, cluster_mod.ALGOS)
        cluster = cluster.with_nodes(nodes)
        g = cluster.gpus_per_node
        head = (f"# ILLUSTRATIVE sample: labutil.cluster model ({cluster.name}, algo={algo}), "
                "printed in nccl-tests format; not a measurement")
    else:
        algo = "ring" if algo is None else algo
        validate.choice("algo", algo, comm.ALGOS)
        g = validate.integer("gpus_per_node", gpus_per_node, lo=1)
        head = (f"# ILLUSTRATIVE sample: alpha-beta model (labutil.comm, algo={algo}, B={bw_gbs:g} GB/s, "
                f"alpha={latency_s * 1e6:g} us), printed in nccl-tests format; not a measurement")
    n = nodes * g
    sizes = bc.size_sweep(int(minbytes), int(maxbytes), 2)
    kw = dict(gpus_per_node=g, intra_bw_gbs=intra_bw_gbs) if algo == "hierarchical" and cluster is None else {}
    lines = [head,
             f"# Collective test starting: {bc.PERF_BINARY[op]}",
             f"# nThread 1 nGpus 1 minBytes {minbytes} maxBytes {maxbytes} step: 2(factor) warmup iters: 5 iters: 20 "
             "agg iters: 1 validation: 1 graph: 0",
             "#", "# Using devices"]
    for r in range(n):
        host = f"node-{chr(ord('a') + r // g)}"
        lines.append(f"#  Rank {r:2d} Group  0 Pid {40000 + r:6d} on {host:>10s} device {r % g:2d} "
                     f"[0000:{16 * (r % g) + 8:02x}:00] {gpu_name}")
    header = bc.format_header(op=op, backend="nccl", minbytes=minbytes, maxbytes=maxbytes, stepfactor=2, stepbytes=0,
                              warmup=5, iters=20, check=1, devices=[], average=1).splitlines()
    lines += header[-4:]  # "#", the two-line column header and the units line
    busbws = []
    redop = "sum" if op in ("all_reduce", "reduce_scatter", "reduce") else "none"
    root = 0 if op in ("broadcast", "reduce") else -1
    for s in sizes:
        lay = bc.layout(op, s, n, 4)
        size = lay["size_bytes"]
        if size == 0:
            continue
        if cluster is not None:
            t = float(cluster.collective_time_s(op, size, n, algo))
        else:
            t = float(comm.collective_time_s(op, size, n, bw_gbs, latency_s, algo, **kw))
        alg, bus = bc.bandwidths(op, size, t, n)
        busbws.append(bus)
        block = {"time_us": t * 1e6, "algbw_gbs": alg, "busbw_gbs": bus, "wrong": 0}
        lines.append(bc.format_row({"size_bytes": size, "count": lay["count"], "type": "float", "redop": redop,
                                    "root": root, "out_of_place": block, "in_place": block}))
    lines.append(bc.format_footer(op, 0, float(np.mean(busbws))))
    return "\n".join(lines) + "\n"
