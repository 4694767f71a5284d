"""Chapter 12 exercises: fat-tree arithmetic, fabric sizing, bisection, torus."""

from .. import hardware, topology
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

register(Exercise(
    key="ch12.1",
    prompt="A k-ary fat tree built from 32-port switches: how many hosts does it connect at full bisection?",
    answer=lambda: topology.fat_tree(32).hosts,
    unit="台", rtol=0.0, atol=0.5, kind="by_hand",
    hints=("k-ary fat tree 的主机数是 k³/4。", "32³ = 32,768。"),
    solution_text="32³/4 = 8,192 台主机；交换机 5k²/4 = 1,280 台。",
))

register(Exercise(
    key="ch12.2",
    prompt="2,048 H100 GPUs (256 DGX H100, 8 rails), QM9700 64-port, 1:1, rail-optimized: how many spine switches?",
    answer=lambda: topology.size_fabric(2048, switch_ports=64).spine_switches,
    unit="台", rtol=0.0, atol=0.5,
    hints=("每个 leaf 32 口向下、32 口向上；8 条轨道 × ceil(256/32) = 64 个 leaf。",
           "上行端口总数 64 × 32 = 2,048，每台 spine 64 口。"),
    solution_text="64 个 leaf × 32 上行 = 2,048 条 leaf-spine 链路 ÷ 64 口 = 32 台 spine；这正是两层的上限 r²/2 = 2,048。",
))

register(Exercise(
    key="ch12.3",
    prompt="4,096 GPUs, 400G NICs, leaf oversubscription 3:1 (QM9700): per-GPU bisection bandwidth in Gbit/s?",
    answer=lambda: topology.size_fabric(4096, oversubscription=3.0).per_gpu_bisection_gbps,
    unit="Gbit/s", rtol=0.02,
    hints=("64 口按 3:1 切分：down = floor(64×3/4) = 48，up = 16。",
           "每张卡跨对分面的带宽 = 400 × up/down。"),
    solution_text="48:16 = 3:1，每 GPU 400 / 3 ≈ 133 Gbit/s；整网对分带宽只有无收敛时的三分之一。",
))

register(Exercise(
    key="ch12.4",
    prompt="A 16 x 16 2D torus (with wraparound): how many links cross its bisection?",
    answer=lambda: topology.torus((16, 16)).bisection,
    unit="条", rtol=0.0, atol=0.5, kind="by_hand",
    hints=("沿一个维度从中间切开，每一行环被切断两次（因为有回绕链路）。", "16 行 × 2。"),
    solution_text="2 × 256 / 16 = 32 条链路；同样 256 个端点的无阻塞 fat tree 对分面有 128 条。",
))


def _smallest_two_tier_switch(n_gpus: int = 4096, names=("SN4700", "QM9700", "SN5600")) -> str:
    """The catalog switch with the fewest ports among ``names`` whose 1:1 fabric for n_gpus has 2 tiers."""
    fits = []
    for name in names:
        sw = hardware.switch(name)
        if topology.size_fabric(n_gpus, switch_ports=sw.ports, link_gbps=sw.port_gbps).tiers <= 2:
            fits.append((sw.ports, name))
    if not fits:
        raise ValueError(f"no switch in {names} keeps {n_gpus} GPUs at two tiers")
    return min(fits)[1]


def _why_ch12_5(option: str) -> str:
    """Why switch ``option`` is not the answer: its two-tier capacity against 4,096 NICs, or a smaller switch fits."""
    sw = hardware.switch(option)
    two_tier = topology.max_nics(sw.ports, 2)
    if two_tier < 4096:
        tiers = topology.size_fabric(4096, switch_ports=sw.ports, link_gbps=sw.port_gbps).tiers
        return f"{sw.ports} 口交换机两层最多接 {two_tier:,} 个网卡端口（r²/2），4,096 个要 {tiers} 层"
    return f"{sw.ports} 口交换机两层能接 {two_tier:,} 个端口，够了，但题目要端口最少的那一款"


register(Exercise(
    key="ch12.5",
    prompt=("Judgement. 4,096 GPUs, one 400G NIC each, 1:1: which 400G switch with the fewest ports keeps the "
            "compute fabric at two tiers: 'SN4700' (32 ports), 'QM9700' (64 ports) or 'SN5600' (64 x 800G ports split into 128 x 400G)?"),
    answer=lambda: _smallest_two_tier_switch(4096),
    choices=("SN4700", "QM9700", "SN5600"),
    synonyms={"SN4700": ("sn-4700",), "QM9700": ("qm-9700", "quantum-2"), "SN5600": ("sn-5600", "spectrum-4")},
    kind="judgement",
    explain=_why_ch12_5,
    hints=("两层 leaf-spine 最多接 r²/2 个网卡端口（r 为交换机端口数）。",
           "32 口：512；64 口：2,048；128 口：8,192。哪个第一次不小于 4,096？"),
    solution_text=("SN5600：它的 64 个 800G OSFP 口各拆成 2 个 400G，对 400G 网卡相当于 128 口；两层上限 r²/2，128 口时为 8,192 ≥ 4,096；64 口的 QM9700 只有 2,048，4,096 卡必须上三层。"
                   "端口数（radix）翻倍，两层能接的规模翻四倍，这就是 51.2T 交换机改变拓扑选择的原因。"),
))
