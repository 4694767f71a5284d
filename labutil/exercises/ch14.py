"""Chapter 14 exercises: gradient volume, seed 003's utilisation, required bandwidth, scaling."""

from .. import comm, compute, dp, models
from ..cluster import Cluster
from ..explore import comm as ec
from . import Exercise, register
from . import exercise as _exercise

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

register(Exercise(
    key="ch14.1",
    prompt="Llama-2-7B (catalog preset), bf16 gradients: gradient bytes per optimizer step, in GB (1e9 B)?",
    answer=lambda: comm.gradient_bytes(models.transformer("llama2-7b").params(), 2) / 1e9,
    kind="by_hand",
    unit="GB", rtol=0.02,
    hints=("通信量 = 参数量 × 每个梯度的字节数。", "bf16 每个梯度 2 字节；参数量用 models.transformer('llama2-7b').params()。"),
    solution_text="6.738e9 × 2 B ≈ 13.48 GB；环形 all-reduce 每卡还要再乘 2(n−1)/n 才是它发出的字节数。",
))

register(Exercise(
    key="ch14.2",
    prompt="Seed 003: Llama-2-7B on 32 x H800 (4 servers), one 25 GbE port per server, 16,384 tokens/GPU/step, "
           "MFU 0.45, no overlap, DDP 25 MiB buckets, NCCL's algorithm choice: GPU utilisation in %?",
    answer=lambda: 100 * float(ec.dp_bandwidth("llama2-7b", "H800-SXM", 16384, 0.45, 32, 25, 1, 0.0).step.utilisation),
    unit="%", rtol=0.03,
    hints=("先算计算时间 6·N·T/(峰值×MFU)，再算梯度同步时间：NCCL 的环每经过一台服务器都要穿过它唯一的 25 GbE 口。",
           "busbw 上限 = 25/8 × 0.96 = 3.0 GB/s（整台服务器的网卡）；同步 ≈ 2(n−1)/n × 13.48 GB ÷ 3.0 GB/s + 延迟。"),
    solution_text="计算 ≈ 1.49 s；同步 ≈ 2·31/32 × 13.48 GB ÷ 3.0 GB/s ≈ 8.70 s，加 515 个桶 × 62 步 × 9.6 µs ≈ 0.31 s 延迟，"
                  "共 ≈ 9.01 s；利用率 = 1.49 / 10.50 ≈ 14%。",
))

register(Exercise(
    key="ch14.3",
    prompt="Same job as ch14.2: network bandwidth per server (Gbit/s) needed for 70 % GPU utilisation without overlap?",
    answer=lambda: dp.required_bandwidth_gbps(
        models.transformer("llama2-7b").params(), 32,
        compute_s=compute.dense_compute_time_s(models.transformer("llama2-7b").params(), 16384, 989.4, 0.45),
        target_utilisation=0.70, cluster=Cluster.seed003()),
    unit="Gbit/s", rtol=0.03,
    hints=("允许的暴露通信 = 计算 × (1/u − 1)。",
           "这个带宽下 NCCL 选 tree（延迟只有 2(log2 4 × 9.6 + 7 × 3.4) µs 每桶）：扣掉延迟，剩下的时间要装下 2 × 梯度字节 ÷ 节点网卡。"),
    solution_text="预算 = 1.49 × (1/0.7 − 1) ≈ 0.64 s，扣掉 515 个桶的 tree 延迟约 0.04 s，剩 0.60 s 传 2 × 13.48 GB → "
                  "节点要 ≈ 45 GB/s 的实际带宽，÷ 0.96 × 8 ≈ 379 Gbit/s 每台：也就是至少一块 400G 网卡，而不是 25 GbE。",
))

register(Exercise(
    key="ch14.4",
    prompt="Llama-2-7B, H800 servers with 8 x 400G IB, 16,384 tokens/GPU/step, MFU 0.45, overlap 2/3, NCCL_ALGO=Ring "
           "(per-rail rings only) with DDP 25 MiB buckets: scaling efficiency at 1,024 GPUs, in %?",
    answer=lambda: 100 * float(ec.dp_bandwidth("llama2-7b", "H800-SXM", 16384, 0.45, 1024, 400, 8, 2 / 3,
                                               "ring (per rail)").efficiency_grid[list(ec.N_GPUS_GRID).index(1024)]),
    unit="%", rtol=0.03,
    hints=("1,024 个 rank 的环每个桶要走 2×1,023 步，跨节点时每步 9.6 µs。",
           "梯度 13.48 GB / 25 MiB ≈ 515 个桶，延迟项要乘以桶数；带宽项受 H800 的 NVLink 环（160 GB/s）限制。"),
    solution_text="延迟 ≈ 515 × 2·1023 × 9.6 µs ≈ 10.1 s，带宽项 ≈ 2 × 13.48 GB / 160 GB/s ≈ 0.17 s，同步 ≈ 10.3 s；"
                  "可隐藏 0.99 s，暴露 ≈ 9.3 s，效率 ≈ 1.49/10.8 ≈ 14%。NCCL 默认在这个规模选 tree（log2 128 = 7 步），"
                  "同步 ≈ 0.26 s，全部藏进反向传播，效率 100%。",
))


def _ch14_required_gbps() -> float:
    return float(_exercise("ch14.3").expected())


def _why_ch14_5(option: str) -> str:
    """Why ``option`` Gbit/s is not the answer: below the required bandwidth, or not the smallest above it."""
    need = _ch14_required_gbps()
    if float(option) < need:
        return f"{option} Gbit/s 低于所需的约 {need:.0f} Gbit/s（练习 3），达不到 70 % 利用率"
    return f"{option} Gbit/s 够用（所需约 {need:.0f} Gbit/s），但低一档也够，题目要最小的档位"


register(Exercise(
    key="ch14.5",
    prompt=("Judgement: the seed-003 job of ch14.2/14.3 must reach 70 % GPU utilisation without overlap. Smallest "
            "per-server network among '100', '200', '400' and '800' Gbit/s that does it?"),
    answer=lambda: next(c for c in ("100", "200", "400", "800") if float(c) >= _ch14_required_gbps()),
    choices=("100", "200", "400", "800"),
    synonyms={"100": ("100G", "100 Gbit/s"), "200": ("200G", "200 Gbit/s"), "400": ("400G", "400 Gbit/s"),
              "800": ("800G", "800 Gbit/s")},
    kind="judgement",
    explain=_why_ch14_5,
    hints=("先做练习 3：所需带宽约几百 Gbit/s。", "选不小于所需带宽的最小档位。"),
    solution_text=("所需约 379 Gbit/s，200G 不够，最小的可行档位是 400 Gbit/s（每台服务器）。"
                   "比原来的 25 GbE 高 16 倍——或者用计算/通信重叠把需求压下来。"),
))
