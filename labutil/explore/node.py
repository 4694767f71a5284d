"""Explorer and figures for ch09 服务器节点设计.

- ``gpu_nic_path_explorer()``: NIC speed, PCIe generations of the NIC slot / GPU / switch uplink,
  the ``nvidia-smi topo`` link between GPU and NIC, GPUDirect RDMA on/off, one- or two-way
  traffic -> per-stage capacity bars and the rate the GPU actually gets (``node.gpu_nic_path``).
- ``server_ratio_figure()``: cores and RAM per GPU of the catalog servers vs seed 003's 16 / 256 rule.
- ``interconnect_figure()``: per-direction GB/s per GPU of NVLink (catalog GPUs), PCIe x16 by
  generation and one NIC per GPU.
- ``cores_needed_figure()``: CPU cores per GPU that JPEG decoding needs vs the per-core decode rate
  (``dataloading.cores_needed_per_gpu``), with the catalog servers' cores per GPU.

The explorer creates its artists once and then only updates them (update < 50 ms,
benchmarks/bench_node_rdma_explorers.py). Axis labels in English with units.
"""

from __future__ import annotations

import numpy as np

from .. import comm, dataloading, hardware, links, node
from .. import widgets as w
from ..plotting import PALETTE, new_figure, reset_axes
from ..widgets import Explorer

__all__ = ["STAGE_ZH", "gpu_nic_path_explorer", "server_ratio_figure", "interconnect_figure", "cores_needed_figure"]

_STAGES = ("NIC line rate", "NIC PCIe slot", "GPU PCIe link", "host bounce (uplink)")
#: The stages as the chapter names them (the summary is Chinese; the figure keeps English labels).
STAGE_ZH = {"NIC line rate": "网卡线速", "NIC PCIe slot": "网卡的 PCIe 插槽", "GPU PCIe link": "GPU 的 PCIe 链路",
            "host bounce (uplink)": "经主机内存中转（PCIe Switch 上行）"}


def _path_model(nic_gbps, nic_pcie_gen, gpu_pcie_gen, uplink_pcie_gen, link, gdr, bidirectional):
    return node.gpu_nic_path(float(nic_gbps), nic_pcie_gen=nic_pcie_gen, gpu_pcie_gen=gpu_pcie_gen,
                             uplink_pcie_gen=uplink_pcie_gen, link=link, gdr=gdr, bidirectional=bidirectional)


def _path_draw(fig, res, values):
    ax = fig.axes[0]
    st = fig.__dict__.setdefault("_lab_state", {})
    vals = [res["stages_gbs"].get(s, 0.0) for s in _STAGES]
    # with GPUDirect RDMA the uplink is off the path: drawn hatched and faint, at what it would carry
    ghost = res["uplink_gbs"] / (2.0 if values["bidirectional"] else 1.0)
    if "bars" not in st:
        reset_axes(ax)
        st["bars"] = ax.barh(range(len(_STAGES)), vals, color=[PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[3]])
        ax.set_yticks(range(len(_STAGES)), list(_STAGES))
        ax.invert_yaxis()
        ax.set_xlabel("Capacity per direction (GB/s)")
        st["line"] = ax.axvline(res["rate_gbs"], color="k", ls="--", lw=1.5)
        st["title"] = ax.set_title("")
        # white box: the limit line often runs through a label
        st["labels"] = [ax.text(0, i, "", va="center", ha="left", fontsize=9,
                                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85))
                        for i in range(len(_STAGES))]
    off_path = min(vals) <= 0
    xmax = max(max(vals) * 1.35, ghost * 1.75 if off_path else 0.0)  # room for the off-path label
    for i, (b, v) in enumerate(zip(st["bars"], vals)):
        off = v <= 0
        b.set_width(ghost if off else v)
        b.set_alpha(0.25 if off else 1.0)
        b.set_hatch("//" if off else None)
        st["labels"][i].set_position(((ghost if off else v) + 0.01 * xmax, i))   # a fixed gap at every scale
        st["labels"][i].set_text(f"{ghost:.1f}: not on path (GPUDirect RDMA)" if off else f"{v:.1f}")
    st["line"].set_xdata([res["rate_gbs"], res["rate_gbs"]])
    ax.set_xlim(0, xmax)
    st["title"].set_text(f"GPU gets {res['rate_gbs']:.1f} GB/s = {100 * res['fraction_of_nic']:.0f} % of the NIC "
                         f"(limit: {res['bottleneck']})")


def _path_summary(res, values):
    mode = "GPUDirect RDMA（NIC 直接读写显存）" if res["gdr"] else "经主机内存中转（bounce buffer）"
    return (f"数据路径：<b>{mode}</b>；每方向实际 <b>{res['rate_gbs']:.1f} GB/s</b>，"
            f"为网卡线速的 {100 * res['fraction_of_nic']:.0f}%，瓶颈是 <b>{STAGE_ZH.get(res['bottleneck'], res['bottleneck'])}</b>；"
            f"这条流给主机内存带来 {res['host_dram_gbs']:.0f} GB/s 的读写流量。<br>{_path_note(res, values)}")


def _path_note(res, v) -> str:
    """Why the uplink, the topo distance and one- vs two-way traffic matter or not on this path."""
    up = (f"PCIe Switch 上行 Gen{v['uplink_pcie_gen']}（每方向 {res['uplink_gbs']:.1f} GB/s"
          + ("，双向同时收发时每个字节在上行上走两次" if v["bidirectional"] else "，单向收发") + "）")
    level = node.GDR_MAX_LINK
    if res["gdr"]:
        return (f"GPU↔NIC 为 {v['link']}，不远于 NCCL 默认的 NCCL_NET_GDR_LEVEL={level}：数据经 PCIe Switch 直接"
                f"在网卡和显存之间走、不经过 CPU，{up}不在路径上，所以上行代数和单/双向都不影响速率。")
    why = ("GPUDirect RDMA 已关闭" if not v["gdr"] else
           f"GPUDirect RDMA 已打开，但 {v['link']} 远于 NCCL_NET_GDR_LEVEL={level}，NCCL 不用它")
    return f"{why}：数据经主机内存中转，{up}成为路径的一段。"


def gpu_nic_path_explorer() -> Explorer:
    """ch09: how NIC speed, PCIe generations, topo distance and GPUDirect RDMA set a GPU's network rate."""
    controls = {
        "nic_gbps": w.choice_slider("网卡速率 Gb/s", [100, 200, 400, 800], 400),
        "nic_pcie_gen": w.choice_slider("网卡插槽 PCIe 代", [3, 4, 5, 6], 5),
        "gpu_pcie_gen": w.choice_slider("GPU PCIe 代", [3, 4, 5, 6], 5),
        "uplink_pcie_gen": w.choice_slider("PCIe Switch 上行 代", [3, 4, 5, 6], 5),
        "link": w.dropdown("GPU↔NIC (topo -m)", list(node.LINK_CODES), "PIX"),
        "gdr": w.toggle("GPUDirect RDMA", True),
        "bidirectional": w.toggle("双向同时收发 (all-reduce)", True),
    }
    return Explorer(controls, _path_model, _path_draw, summary=_path_summary,
                    title="GPU 到网卡的数据路径", figsize=(8.5, 3.6))


# ---------------------------------------------------------------------------------- figures
def server_ratio_figure(names=None):
    """Cores and RAM per GPU of catalog servers against seed 003's 16-core / 256 GB rule."""
    rows = node.server_table(names)
    fig, (ax1, ax2) = new_figure(1, 2, figsize=(9.5, 3.8))
    x = np.arange(len(rows))
    labels = [r["server"] for r in rows]
    cores = [r["cores_per_gpu"] for r in rows]
    ram = [r["ram_gb_per_gpu"] for r in rows]
    ax1.bar(x, cores, color=[PALETTE[2] if r["meets_core_rule"] else PALETTE[3] for r in rows])
    ax1.axhline(node.RULE_CORES_PER_GPU, color="k", ls="--", lw=1.2, label="rule: 16 cores/GPU")
    ax1.set_ylabel("Physical CPU cores per GPU")
    ax2.bar(x, ram, color=[PALETTE[2] if r["meets_ram_rule"] else PALETTE[3] for r in rows])
    ax2.axhline(node.RULE_RAM_GB_PER_GPU, color="k", ls="--", lw=1.2, label="rule: 256 GB/GPU")
    ax2.set_ylabel("Host RAM per GPU (GB)")
    for ax, vals, fmt in ((ax1, cores, "{:.0f}"), (ax2, ram, "{:.0f}")):
        ax.set_xticks(x, labels, rotation=15)
        for xi, v in zip(x, vals):
            ax.text(xi, v, fmt.format(v), ha="center", va="bottom", fontsize=9)
        ax.set_ylim(0, max(vals) * 1.25)
        ax.legend(loc="upper left")
    ax1.set_title("CPU cores per GPU (green: meets rule)")
    ax2.set_title("RAM per GPU (green: meets rule)")
    return fig


def interconnect_figure(gpus=("B200", "H100-SXM", "H200-SXM", "A100-80G-SXM", "H800-SXM", "A800-SXM")):
    """Per-direction GB/s per GPU: NVLink (catalog, bidirectional / 2), PCIe x16 by generation, NICs."""
    items = [(f"NVLink {g}", comm.nvlink_per_direction_gbs(g), PALETTE[0]) for g in gpus]
    items += [(f"PCIe {gen.capitalize()} x16", links.pcie_gbs(gen, 16), PALETTE[1]) for gen in ("gen4", "gen5", "gen6")]
    items += [(f"NIC {r} Gb/s", r / 8.0, PALETTE[2]) for r in (200, 400)]
    items.sort(key=lambda t: t[1])
    fig, ax = new_figure(figsize=(8.5, 4.6))
    y = np.arange(len(items))
    ax.barh(y, [v for _, v, _ in items], color=[c for _, _, c in items])
    ax.set_yticks(y, [n for n, _, _ in items])
    for yi, (_, v, _) in zip(y, items):
        ax.text(v * 1.08, yi, f"{v:.0f}", va="center", fontsize=9)
    ax.set_xscale("log")
    ax.set_xlim(10, 2000)
    ax.set_xlabel("Bandwidth per GPU, one direction (GB/s, log scale)")
    ax.set_title("NVLink vs PCIe x16 vs one NIC per GPU")
    return fig


def cores_needed_figure(reserved_cores_per_gpu: float = 1.0):
    """Cores per GPU JPEG decode needs for ResNet-50 on A100 vs per-core decode rate; servers as lines."""
    per_core = np.linspace(60.0, 400.0, 200)
    need = dataloading.cores_needed_per_gpu(dataloading.RESNET50_A100_IMG_S, per_core, reserved_cores_per_gpu)
    fig, ax = new_figure(figsize=(8.0, 4.2))
    ax.plot(per_core, need, color=PALETTE[0], lw=2, label="vision: ResNet-50 on A100 (2,470 img/s)")
    ax.axvline(dataloading.JPEG_DECODE_IMG_S_PER_CORE_ASSUMED, color="gray", ls=":", lw=1.2,
               label="assumed 150 img/s per core")
    for i, r in enumerate(node.server_table()):
        ax.axhline(r["cores_per_gpu"], color=PALETTE[(i + 2) % len(PALETTE)], ls="--", lw=1.1,
                   label=f"{r['server']}: {r['cores_per_gpu']:.0f} cores/GPU")
    ax.set_xlabel("JPEG decode + augment rate per core (images/s)")
    ax.set_ylabel("CPU cores needed per GPU")
    ax.set_ylim(0, 45)
    ax.legend(fontsize=8, loc="upper right")
    ax.set_title("Cores per GPU needed to keep the GPU fed (vision training)")
    return fig
