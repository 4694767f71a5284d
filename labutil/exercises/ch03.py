"""Chapter 3 exercises: network planes of a cluster."""

from .. import architecture, hardware
from . import Exercise, register

register(Exercise(
    key="ch03.1",
    prompt="1,024 H100 in DGX H100 nodes: how many 400G compute-fabric NIC ports?",
    answer=lambda: architecture.plan_cluster(1024).plane("compute").total_ports,
    unit="个", rtol=0.0, atol=0.5,
    hints=("计算网络是「每张 GPU 一块网卡」。", "128 台 DGX H100 × 8 块 ConnectX-7。"),
    solution_text="1,024 / 8 = 128 台服务器，每台 8 个计算网端口：1,024 个 400G 端口。",
))

register(Exercise(
    key="ch03.2",
    prompt="Compute-fabric bandwidth of one DGX H100 (all 8 NICs together) in Gb/s?",
    answer=lambda: hardware.server("DGX-H100").compute_nics * hardware.server("DGX-H100").nic_spec.port_gbps,
    unit="Gb/s", rtol=0.0, atol=0.5,
    hints=("从目录查 DGX-H100 的 compute_nics 和网卡速率。",),
    solution_text="8 × 400 Gb/s = 3,200 Gb/s（= 400 GB/s）。",
))

register(Exercise(
    key="ch03.3",
    prompt="architecture.plan_cluster(2048) with defaults: compute-fabric switches (leaf + spine + core)?",
    answer=lambda: architecture.plan_cluster(2048).compute_fabric.total_switches,
    unit="台", rtol=0.0, atol=0.5,
    hints=("调用 architecture.plan_cluster(2048).compute_fabric，看 leaf/spine/core 三个字段。",
           "2,048 个网卡端口，64 口交换机每台叶交换机 32 口向下。"),
    solution_text="2,048 个端口 / 32 = 64 台叶交换机；两层 leaf-spine 的上限是 64×32 = 2,048 个端口，刚好容纳，脊交换机 32 台，共 96 台。",
))

register(Exercise(
    key="ch03.4",
    prompt="8 GPUs sharing 2 x 200G ports instead of one 400G NIC each: per-GPU bandwidth as a fraction?",
    answer=lambda: (2 * 200 / 8) / 400,
    unit="", rtol=0.01,
    hints=("每张 GPU 分到 (2 × 200) / 8 Gb/s。",),
    solution_text="2 × 200 / 8 = 50 Gb/s，是 400 Gb/s 的 0.125（1/8）。",
))
