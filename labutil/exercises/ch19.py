"""Chapter 19 exercises: a down-trained NIC slot, servers per rack, usable GPUs, one slow rail."""

from .. import health, inventory, node
from ..cluster import Cluster
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))


def _gen4_rail_gbps() -> float:
    """Line rate a 400G NIC delivers in a PCIe Gen4 x16 slot, in Gbit/s."""
    return node.nic_slot(400, 4, 16)["delivered_gbs"] * 8


register(Exercise(
    key="ch19.1",
    prompt="A 400 Gb/s ConnectX-7 capable of PCIe Gen5 x16 trained at Gen4 x16 (lspci LnkSta 16GT/s). "
           "What percentage of its line rate is lost?",
    answer=lambda: (1 - node.nic_slot(400, 4, 16)["fraction"]) * 100,
    unit="%", rtol=0.02,
    hints=("网卡能交付的带宽 = min(线速 / 8, PCIe 插槽带宽)。",
           "Gen4 每 lane 16 GT/s、128b/130b 编码：16 × 128/130 × 16 / 8 ≈ 31.5 GB/s；400G 线速是 50 GB/s。"),
    solution_text="Gen4 x16 = 31.5 GB/s < 50 GB/s，网卡只能交付 63%，损失 37%——正是种子课程说的「性能下降 30% 以上」。",
))

register(Exercise(
    key="ch19.2",
    prompt="A 42U rack (2U reserved for the management switch and cable management) has a 40 kW power budget. "
           "How many DGX H100 (10.2 kW, 8U) fit?",
    answer=lambda: inventory.rack_layout("DGX-H100", 40.0)["servers"],
    kind="by_hand",
    unit="台", rtol=0.02, slip_families=("gpu_node",),  # DGX servers: x8 is the GPU count
    hints=("每柜台数 = min(⌊功率上限 / 单台功率⌋, ⌊(42 − 2) / 8⌋)。",
           "按功率 ⌊40 / 10.2⌋ = 3，按空间 ⌊40 / 8⌋ = 5，取小者。"),
    solution_text="min(3, 5) = 3 台（24 张 GPU，30.7 kW）：DGX H100 机柜几乎总是受功率而不是空间限制，41 kW 才能放下第 4 台。",
))

register(Exercise(
    key="ch19.3",
    prompt="Run the inventory checks on the 4-node sample (inventory.sample_inventory()). "
           "How many GPUs of the cluster can CUDA actually use?",
    answer=lambda: sum(inventory.usable_gpus(n) for n in inventory.sample_inventory().nodes),
    unit="张", rtol=0.02,
    hints=("NVSwitch 系统上 fabric manager 版本必须与驱动版本完全一致，否则该节点所有 GPU 都无法初始化。",
           "找出 fabric_manager 与 driver 不一致的节点：那一台的 8 张卡全部不可用。"),
    solution_text="gpu-node-03 的驱动被单独升级/回退成 550.54.14，而 fabric manager 仍是 550.54.15：服务起不来，"
                  "该节点 0 张卡可用。其余 3 台 × 8 = 24 张。",
))

register(Exercise(
    key="ch19.4",
    prompt="Two DGX H100 (8 rails of 400G each); in one node a NIC trained at Gen4 x16 delivers only what the slot "
           "carries. Expected inter-node all_reduce busbw (GB/s) by the course's cluster model?",
    answer=lambda: Cluster.system("DGX-H100", 2, nic_gbps=_gen4_rail_gbps()).acceptance_busbw_gbs("all_reduce"),
    unit="GB/s", rtol=0.02,
    hints=("NCCL 把数据平均分到 8 个环，每个环走一条轨道，集合通信要等最慢的那个环：整机相当于 8 块最慢速率的网卡。",
           "期望 = min(NVLink 环 370, 8 × 最慢轨道 × 0.96)；最慢那条只有 Gen4 x16 的 31.5 GB/s。"),
    solution_text="min(370, 8 × 31.5 × 0.96 ≈ 242) ≈ 242 GB/s，健康时是 min(370, 8 × 48 = 384) = 370 GB/s："
                  "一个插槽训练错误，整机跨节点带宽掉 35%。",
))


def _node_to_drain() -> str:
    """The node of the sample inventory with the most critical findings (inventory.run_inventory_checks)."""
    inv = inventory.sample_inventory()
    report = inventory.run_inventory_checks(inv)
    names = [n.hostname for n in inv.nodes]
    crit = {n: sum(1 for f in report.findings if f.severity == "critical" and f.component.split("/")[0] == n)
            for n in names}
    return max(names, key=lambda n: (crit[n], -names.index(n)))


def _why_ch19_5(option: str) -> str:
    """Why node ``option`` is not the one to drain: its critical and warning counts against the worst node's."""
    report = inventory.run_inventory_checks(inventory.sample_inventory())

    def count(node: str, severity: str) -> int:
        return sum(1 for f in report.findings if f.severity == severity and f.component.split("/")[0] == node)

    worst = max(count(n.hostname, "critical") for n in inventory.sample_inventory().nodes)
    warn = count(option, "warning")
    later = "（版本漂移、偏旧的驱动，可以排期修）" if warn else ""
    return (f"{option} 只有 {count(option, 'critical')} 条 critical、{warn} 条 warning{later}，"
            f"另一台机器有 {worst} 条 critical：GPU 用不了或 PCIe 降速")


register(Exercise(
    key="ch19.5",
    prompt=("Judgement: run inventory.run_inventory_checks on inventory.sample_inventory(). Which node do you drain "
            "before the cluster is handed over? (its hostname, e.g. 'gpu-node-01')"),
    answer=_node_to_drain,
    choices=tuple(n.hostname for n in inventory.sample_inventory().nodes),
    kind="judgement",
    explain=_why_ch19_5,
    hints=("只看 critical 级别的发现：哪台机器的 GPU 根本用不了，或者 PCIe/ACS 会让 GPUDirect 变慢、挂死？",
           "fabric manager 和驱动版本不一致时，NVSwitch 系统的 8 张 GPU 全部不可用。"),
    solution_text=("gpu-node-03：fabric manager 550.54.15 ≠ 驱动 550.54.14（0/8 张 GPU 可用）、ACS 开着、"
                   "一张 GPU 训练成 x8、一块网卡降到 Gen4。其余节点只有 warning（驱动偏旧、版本漂移），可以排期修。"),
))
