"""Chapter 9 exercises: PCIe slot for a 400G NIC, cores per GPU, offload RAM, GPUDirect RDMA, reading a real topo matrix."""

from .. import dataloading, node
from ..parsers import parse_nvidia_smi_topo, samples
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

register(Exercise(
    key="ch09.1",
    prompt="A 400 Gb/s NIC sits in a PCIe Gen4 x16 slot. How many GB/s per direction can it actually move?",
    answer=lambda: node.nic_slot(400, 4)["delivered_gbs"],
    unit="GB/s", rtol=0.02, kind="by_hand",
    hints=("PCIe 4.0：每 lane 16 GT/s，128b/130b 编码；x16 = 16 条 lane；除以 8 换成字节。",
           "网卡能交付的是 min(线速/8, 插槽带宽)。400 Gb/s / 8 = 50 GB/s。"),
    solution_text="16 GT/s × 128/130 × 16 / 8 = 31.5 GB/s < 50 GB/s，网卡只剩 63%；Gen5 x16 为 63.0 GB/s，才装得下 400G。",
))

register(Exercise(
    key="ch09.2",
    prompt=("ResNet-50 trains at 2,470 img/s on one A100. If one core decodes + augments 200 img/s and the "
            "training process itself keeps 1 core, how many CPU cores does each GPU need?"),
    answer=lambda: dataloading.cores_needed_per_gpu(dataloading.RESNET50_A100_IMG_S, 200.0, 1.0),
    unit="核/卡", rtol=0.02,
    hints=("解码核数 = GPU 每秒消耗的样本数 / 每核每秒解码的样本数。",
           "再加上训练进程自己占用的 1 个核。"),
    solution_text="2470 / 200 + 1 = 13.35 核/卡：DGX H100 的 14 核/卡刚好够；若每核只有 150 张/秒，则要 17.5 核，16 核也不够。",
))

register(Exercise(
    key="ch09.3",
    prompt=("Full fine-tuning of a 70B model with ZeRO-Offload (Adam, bf16) on ONE 8-GPU server: host RAM "
            "per GPU for the offloaded states, in GB?"),
    answer=lambda: node.offload_host_ram_gb(70e9) / 8,
    unit="GB/卡", rtol=0.02,
    hints=("ZeRO-Offload 把 fp32 主权重 + Adam 的 m、v（K = 12 B/参数）和 2 B/参数的梯度放到主机内存。",
           "总量 = 14 B × 70e9，再平均到 8 张卡。"),
    solution_text="14 × 70e9 B = 980 GB，每卡 122.5 GB：256 GB/卡够用，128 GB/卡（Atlas 800T A2 的配比）就不够了。",
))

register(Exercise(
    key="ch09.4",
    prompt=("8 GPUs each send and receive at their full rate through 400G NICs WITHOUT GPUDirect RDMA "
            "(Gen5 switches and uplinks). Total host DRAM traffic this causes, in GB/s?"),
    answer=lambda: 8 * node.gpu_nic_path(400, gdr=False, bidirectional=True)["host_dram_gbs"],
    unit="GB/s", rtol=0.02,
    hints=("没有 GDR 时，每张卡双向同时收发，每个方向的上行链路都要过两遍数据，所以每卡只能跑到 Gen5 x16 的一半。",
           "每个方向的每个字节都要写一次、读一次主机内存：每卡 DRAM 流量 = 2 × 2 × 实际速率。"),
    solution_text=("每卡速率 = 63.0/2 = 31.5 GB/s，DRAM 流量 = 4 × 31.5 = 126 GB/s；8 卡共 1,008 GB/s，"
                   "超过两路 8480C 的 DDR5 峰值 2 × 307 = 614 GB/s——没有 GPUDirect RDMA，网络根本跑不满。"),
))


def _gpu3_path_on_pcie_server() -> str:
    """'gdr' or 'staged' for GPU3 of the course's 4-GPU PCIe server sample (NCCL's PXB rule, node.affinity_plan)."""
    plan = node.affinity_plan(parse_nvidia_smi_topo(samples.sample("nvidia_smi_topo_pcie_4gpu")))
    row = next(r for r in plan if r["gpu"] == "GPU3")
    return "gdr" if row["gdr"] else "staged"


def _why_ch09_5(option: str) -> str:
    """Why path ``option`` is wrong for GPU3: its topo distance to the NIC against NCCL's default GDR level (PXB)."""
    plan = node.affinity_plan(parse_nvidia_smi_topo(samples.sample("nvidia_smi_topo_pcie_4gpu")))
    row = next(r for r in plan if r["gpu"] == "GPU3")
    return (f"GPU3（NUMA {row['numa']}）到 {row['nic']} 的拓扑距离是 {row['link']}；NCCL 默认只在 PIX/PXB 之内"
            f"（NCCL_NET_GDR_LEVEL = PXB）走 GPUDirect RDMA，{'SYS/NODE 跨过了 CPU 之间的互联' if not row['gdr'] else '这条路径在门限之内'}")


register(Exercise(
    key="ch09.5",
    prompt=("Judgement. In the chapter's 4-GPU PCIe server (nvidia-smi topo -m sample 'nvidia_smi_topo_pcie_4gpu'), "
            "does NCCL move GPU3's inter-node traffic with 'gdr' (GPUDirect RDMA) or 'staged' (through host memory)?"),
    answer=_gpu3_path_on_pcie_server,
    choices=("gdr", "staged"),
    synonyms={"gdr": ("gpudirect", "gpudirect rdma", "gdrdma"), "staged": ("host", "host memory", "bounce buffer")},
    kind="judgement",
    explain=_why_ch09_5,
    hints=("看 topo 矩阵里 GPU3 到网卡那一格：PIX/PXB 之内 NCCL 才开 GDR（默认 NCCL_NET_GDR_LEVEL = PXB）。",
           "GPU3 挂在 CPU1 下，唯一的网卡挂在 CPU0 下：距离是 SYS。"),
    solution_text=("staged：GPU3 到 mlx5_0 的距离是 SYS（跨 socket），超过 NCCL 默认的 PXB 门限，NCCL 退回到主机内存中转，"
                   "每个字节都要经过两颗 CPU 之间的互联和主机内存。修法是给 CPU1 一侧也配网卡（每卡一张最好）。"),
))


def _dgx_topo():
    return parse_nvidia_smi_topo(samples.sample("nvidia_smi_topo_dgx_h100_public"))


def _gpu5_nic() -> str:
    return _dgx_topo().nic_for_gpu("GPU5")[0]


def _sol_6() -> str:
    t = _dgx_topo()
    nic, link = t.nic_for_gpu("GPU5")
    far = t.link("GPU5", next(n for n in t.nics if t.nic_name(n) == "mlx5_5"))
    return (f"{nic}：GPU5 那一行里只有 {nic} 是 {link}（其余是 NODE/SYS）。按编号猜的 mlx5_5 到 GPU5 是 {far}——"
            f"跨 NUMA，NCCL 不会对它开 GPUDirect RDMA。mlx5_7/mlx5_8 彼此 PIX、离任何 GPU 都不近，是存储/带内管理的双口卡。")


def _why_ch09_6(option: str) -> str:
    """Why NIC ``option`` is wrong for GPU5: its distance in the real matrix against the closest one's."""
    t = _dgx_topo()
    nic = next((n for n in t.nics if t.nic_name(n) == option), None)
    _best, best_link = t.nic_for_gpu("GPU5")
    if nic is None:
        return f"这台机器的矩阵里没有 {option}"
    return (f"矩阵里 GPU5 到 {option} 的距离是 {t.link('GPU5', nic)}，而 GPU5 那一行里最近的网卡是 {best_link}："
            f"走 {option} 的流量要多穿过 PCIe 交换/CPU 之间的链路，NCCL 也不会对它开 GPUDirect RDMA")


register(Exercise(
    key="ch09.6",
    prompt=("Judgement. In the chapter's real DGX H100 nvidia-smi topo -m (sample 'nvidia_smi_topo_dgx_h100_public'), "
            "which NIC should the process on GPU5 use for inter-node traffic? (answer with its name, e.g. 'mlx5_5')"),
    answer=_gpu5_nic,
    choices=tuple(f"mlx5_{i}" for i in range(12)),
    kind="judgement",
    explain=_why_ch09_6,
    hints=("在矩阵里找 GPU5 那一行，看哪一列网卡的距离最近（PIX < PXB < PHB < NODE < SYS）。",
           "不要按编号猜：这台机器上 GPU1 用的是 mlx5_3。"),
    solution_text=_sol_6(),
))
