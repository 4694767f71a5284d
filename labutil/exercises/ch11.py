"""Chapter 11 exercises: IB encoding, PFC headroom, gradient sync per port speed, DCQCN."""

from .. import links, rdma
from . import Exercise, register

register(Exercise(
    key="ch11.1",
    prompt="FDR InfiniBand signals at 14.0625 Gbaud per lane with 64b/66b encoding. Data rate of a 4X FDR port, in Gb/s?",
    answer=lambda: links.ib_port_gbps("FDR", 4),
    unit="Gb/s", rtol=0.01,
    hints=("数据速率 = 每 lane 信号速率 × 编码效率 × lane 数。", "64b/66b 的效率是 64/66 ≈ 0.970。"),
    solution_text="14.0625 × 64/66 × 4 = 54.5 Gb/s（市场上叫「56G」，那是信号速率）。",
))

register(Exercise(
    key="ch11.2",
    prompt=("PFC headroom of one 100GbE port, 300 m of single-mode fibre, largest frame 9,216 B, sender reaction per "
            "IEEE 802.3 Table 31B-1 (394 pause quanta). In bytes?"),
    answer=lambda: rdma.pfc_headroom(100, 300, mtu_bytes=9216)["total_b"],
    unit="B", rtol=0.02,
    hints=("H = MTU_R + MTU_S + R × 2 × L × t_m / 8 + 反应时间/8；光纤 t_m = 5.13 ns/m。",
           "反应时间 = 394 × 512 bit；线缆项 = 100e9 × 2 × 300 × 5.13e-9 / 8 字节。"),
    solution_text="9216 + 9216 + 38,475（线缆往返）+ 25,216（394 × 512 / 8）= 82,123 B ≈ 82 KB。",
))

register(Exercise(
    key="ch11.3",
    prompt=("Seed 003 LLM case: 70B model on 2,048 H100 (TP 8 x PP 8 -> DP 32), 4M tokens per step, MFU 0.45. With ONE "
            "200 Gb/s port per GPU, gradient all-reduce time / compute time per step (a fraction)?"),
    answer=lambda: rdma.dp_gradient_sync(70e9, 2048, nic_gbps=200)["sync_ratio"],
    unit="", rtol=0.03,
    hints=("每卡梯度分片 = 70e9 / 64 × 2 B = 2.19 GB；DP 32 个副本做 ring all-reduce，带宽是每卡 200/8 = 25 GB/s。",
           "每卡计算时间 = 6 × 70e9 × 4e6 / (2048 × 989.4e12 × 0.45)。"),
    solution_text="all-reduce ≈ 2 × 31/32 × 2.19 / 25 = 0.170 s，计算 1.84 s，比值 ≈ 0.092：200G 也只暴露 9% 的通信，再加重叠几乎可以全部隐藏。",
))

register(Exercise(
    key="ch11.4",
    prompt="A 400 Gb/s RoCE flow receives 3 CNPs in a row (DCQCN, alpha starting at 1, g = 1/256). Its rate afterwards, in Gb/s?",
    answer=lambda: float(rdma.dcqcn_rate_after_cnps(400, 3)[-1]),
    unit="Gb/s", rtol=0.02,
    hints=("每个 CNP：Rc ← Rc × (1 − α/2)，然后 α ← (1 − g)α + g。", "α 从 1 开始，g 很小，α 基本保持 1。"),
    solution_text="400 → 200 → 100 → 50 Gb/s：每个 CNP 减半。之后靠定时器和字节计数器逐步恢复（fast recovery / additive increase）。",
))
