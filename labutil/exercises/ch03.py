"""Chapter 3 exercises: network planes of a cluster."""

from .. import architecture, hardware, topology
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))


def _shared_vs_compute() -> float:
    """Per-GPU bandwidth over the storage plane's 2 x 200G ports / per-GPU bandwidth of the compute fabric (DGX H100)."""
    plan = architecture.plan_cluster(8, "DGX-H100", storage_ports_per_node=2, storage_port_gbps=200.0)
    per_gpu_shared = plan.plane("storage").node_gbps / plan.gpus_per_node
    per_gpu_compute = plan.plane("compute").node_gbps / plan.gpus_per_node
    return per_gpu_shared / per_gpu_compute

register(Exercise(
    key="ch03.1",
    prompt="1,024 H100 in DGX H100 nodes: how many 400G compute-fabric NIC ports?",
    answer=lambda: architecture.plan_cluster(1024).plane("compute").total_ports,
    kind="by_hand",
    unit="个", rtol=0.0, atol=0.5,
    hints=("计算网络是「每张 GPU 一块网卡」。", "128 台 DGX H100 × 8 块 ConnectX-7。"),
    solution_text="1,024 / 8 = 128 台服务器，每台 8 个计算网端口：1,024 个 400G 端口。",
))

register(Exercise(
    key="ch03.2",
    prompt="Compute-fabric bandwidth of one DGX H100 (all 8 NICs together) in Gb/s?",
    answer=lambda: hardware.server("DGX-H100").compute_nics * hardware.server("DGX-H100").nic_spec.port_gbps,
    kind="by_hand",
    unit="Gb/s", rtol=0.0, atol=0.5,
    hints=("从目录查 DGX-H100 的 compute_nics 和网卡速率。",),
    solution_text="8 × 400 Gb/s = 3,200 Gb/s（= 400 GB/s）。",
))

def _leaf_spine_2048() -> int:
    """Leaf + spine switches of a two-tier 1:1 fat tree of 64-port switches for 2,048 NIC ports
    (topology.size_fabric; the same design rules as ch12)."""
    f = topology.size_fabric(2048, switch_ports=64)
    assert f.tiers == 2 and f.core_switches == 0
    return f.leaf_switches + f.spine_switches


register(Exercise(
    key="ch03.3",
    prompt=("Reasoning: 2,048 H100 with one 400G NIC each (2,048 compute ports) on 64-port switches, two tiers, "
            "1:1 (no oversubscription). How many switches in all (leaves + spines)?"),
    answer=_leaf_spine_2048,
    kind="by_hand",
    unit="台", rtol=0.0, atol=0.5,
    hints=("1:1 无收敛：每台叶交换机一半端口向下接网卡，一半向上接脊交换机。",
           "叶交换机数 = 端口数 / 每台向下的口数；每台脊交换机的 64 个口各接一条叶上行链路。"),
    solution_text=lambda: ("每台叶交换机 32 口向下、32 口向上：2,048 / 32 = 64 台叶交换机，上行链路共 64 × 32 = 2,048 条，"
                           "每台脊交换机 64 口，需 2,048 / 64 = 32 台脊交换机，共 96 台。两层 64 口 fat tree 的上限正好是 "
                           "64²/2 = 2,048 个端口；再多一个端口就要第三层（topology.size_fabric(2048) 给出 "
                           f"{_leaf_spine_2048()} 台）。"),
))

register(Exercise(
    key="ch03.4",
    prompt=("A DGX H100 whose 8 GPUs had to share 2 x 200G ports (what its storage plane has) instead of the "
            "8 x 400G compute NICs: per-GPU network bandwidth as a percent of the compute fabric's?"),
    answer=lambda: 100 * _shared_vs_compute(),
    unit="%", rtol=0.01,
    hints=("每张 GPU 分到 (2 × 200) / 8 Gb/s；计算网络每张 GPU 一块 400G 网卡。",
           "比值 = 50 / 400，按课程约定写成百分数。"),
    solution_text="2 × 200 / 8 = 50 Gb/s，是 400 Gb/s 的 12.5 %（1/8）：这就是为什么计算网络要「一卡一网卡」。",
))


def _why_ch03_5(option: str) -> str:
    """Why ``option`` is not the plane with most switches: its switch count beside the largest plane's."""
    planes = {p.name: p.switches for p in architecture.plan_cluster(2048).planes}
    return (f"{option} 平面只要 {planes[option]} 台交换机，最大的平面要 {max(planes.values())} 台："
            f"交换机数跟着端口数走，每张 GPU 一个 400G 端口的那个平面端口最多")


def _ch03_5_solution() -> str:
    """The switch count of every plane of plan_cluster(2048), from the model."""
    plan = architecture.plan_cluster(2048)
    sw = {p.name: p.switches for p in plan.planes}
    return (f"compute：{plan.plane('compute').total_ports:,} 个 400G 端口、1:1 无收敛，需 {sw['compute']} 台交换机"
            f"（{plan.compute_fabric.leaf_switches} 叶 + {plan.compute_fabric.spine_switches} 脊）；存储 {sw['storage']} 台、"
            f"前端 {sw['frontend']} 台、带外 {sw['oob']} 台。计算网络是集群网络成本的大头。")


register(Exercise(
    key="ch03.5",
    prompt=("Judgement: architecture.plan_cluster(2048) with defaults (DGX H100). Which network plane needs the most "
            "switches: 'compute', 'storage', 'frontend' or 'oob'?"),
    answer=lambda: max(architecture.plan_cluster(2048).planes, key=lambda p: p.switches).name,
    choices=("compute", "storage", "frontend", "oob"),
    synonyms={"compute": ("计算网络", "back-end", "backend"), "storage": ("存储网络",),
              "frontend": ("front-end", "前端网络", "业务网络"), "oob": ("out-of-band", "带外管理网络", "管理网络")},
    kind="judgement",
    explain=_why_ch03_5,
    hints=("计算网络每张 GPU 一个 400G 端口，存储网络每台服务器 2 个口，前端 2 个口，带外 1 个口。",
           "端口越多，交换机越多：比较 plan.planes 里每个平面的 switches。"),
    solution_text=lambda: _ch03_5_solution(),
))
