"""Chapter 1 exercises: failures at scale, effective compute, scaling efficiency."""

from .. import compute, hardware, reliability
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))


def _ideal_gpus(n_gpus: int, scaling_efficiency: float) -> float:
    """Effective cluster compute expressed in single-GPU peaks: N x peak x eta / peak (compute.effective_cluster_tflops)."""
    peak = hardware.gpu("H100-SXM").bf16_tflops
    return compute.effective_cluster_tflops(n_gpus, peak, scaling_efficiency) / peak

register(Exercise(
    key="ch01.1",
    prompt="10,000 GPUs, per-GPU MTBF 100,000 h: expected GPU failures per day?",
    answer=lambda: reliability.failures_per_day(10_000, 100_000),
    kind="by_hand",
    unit="次/天", rtol=0.02,
    hints=("集群故障率 = 部件数 / 单部件 MTBF（每小时），再乘以 24 小时。",
           "10,000 / 100,000 = 0.1 次/小时。"),
    solution_text="λ_day = 24·N/MTBF = 24 × 10,000 / 100,000 = 2.4 次/天（只算 GPU；主机、网卡、链路会再加上去）。",
))

register(Exercise(
    key="ch01.2",
    prompt="1,024 H100-SXM, MFU 0.45, scaling efficiency 1.0: effective cluster compute in PFLOP/s (BF16 dense)?",
    answer=lambda: compute.effective_cluster_tflops(1024, hardware.gpu("H100-SXM").bf16_tflops, 0.45) / 1e3,
    unit="PFLOP/s", rtol=0.02,
    hints=("从目录取 H100-SXM 的 bf16_tflops（稠密峰值，不是带稀疏的数字）。",
           "有效算力 = N × 峰值 × MFU × 扩展效率，再把 TFLOP/s 除以 1000 换成 PFLOP/s。"),
    solution_text=lambda: (f"1024 × {hardware.gpu('H100-SXM').bf16_tflops:,.1f} TFLOP/s × 0.45 = "
                           f"{compute.effective_cluster_tflops(1024, hardware.gpu('H100-SXM').bf16_tflops, 0.45):,.0f} "
                           f"TFLOP/s ≈ {compute.effective_cluster_tflops(1024, hardware.gpu('H100-SXM').bf16_tflops, 0.45) / 1e3:,.1f}"
                           " PFLOP/s。"),
))

register(Exercise(
    key="ch01.3",
    prompt="Plan A: 2,048 GPUs at 70 % scaling efficiency. How many ideal GPUs is it worth?",
    answer=lambda: _ideal_gpus(2048, 0.70),
    unit="张", rtol=0.01,
    hints=("扩展效率 η = N 卡吞吐 / (N × 单卡吞吐)。", "等效理想 GPU 数 = N × η。"),
    solution_text=lambda: (f"2048 × 0.70 = {_ideal_gpus(2048, 0.70):,.1f} 张理想 GPU；方案 B 为 1024 × 0.90 = "
                           f"{_ideal_gpus(1024, 0.90):,.1f} 张。A 更多，但每张卡的性价比更低（练习 5）。"),
))

register(Exercise(
    key="ch01.4",
    prompt="The 10,000-GPU cluster of exercise 1 (GPUs only): cluster MTBF in hours?",
    answer=lambda: 24 / reliability.failures_per_day(10_000, 100_000),
    kind="by_hand",
    unit="h", rtol=0.02,
    hints=("集群 MTBF = 1 / 集群故障率。", "集群故障率是 10,000 / 100,000 = 0.1 次/小时。"),
    solution_text="MTBF_cluster = MTBF / N = 100,000 h / 10,000 = 10 h：平均每 10 小时就有一张卡坏掉。",
))


def _gpu_hours(n_gpus: int, scaling_efficiency: float, total_flops: float = 1e24, mfu: float = 0.45) -> float:
    """GPU-hours one job of ``total_flops`` costs on ``n_gpus`` at ``mfu`` x scaling efficiency (compute.time_to_train_s)."""
    peak = hardware.gpu("H100-SXM").bf16_tflops
    return compute.time_to_train_s(total_flops, n_gpus, peak, mfu * scaling_efficiency) * n_gpus / 3600.0


def _why_ch01_5(option: str) -> str:
    """Why ``option`` costs more GPU-hours: its own GPU-h beside the other plan's (same model call as the answer)."""
    eff = {"A": 0.70, "B": 0.90}
    gpus = {"A": 2048, "B": 1024}
    other = "B" if option == "A" else "A"
    mine, theirs = _gpu_hours(gpus[option], eff[option]), _gpu_hours(gpus[other], eff[other])
    return (f"按模型这个方案要 {mine:,.0f} GPU·h，另一个只要 {theirs:,.0f} GPU·h（多 {mine / theirs - 1:.0%}）。"
            f"GPU·h = C /（峰值 × MFU × η）：GPU 数约掉了，只剩扩展效率 η = {eff[option]:.2f} 决定花费")


register(Exercise(
    key="ch01.5",
    prompt=("Judgement: the same job (1e24 FLOPs, H100-SXM, MFU 0.45) on plan A (2,048 GPUs, 70 % scaling efficiency) "
            "or plan B (1,024 GPUs, 90 %), same price per GPU-hour. Which plan costs fewer GPU-hours? ('A' or 'B')"),
    answer=lambda: "A" if _gpu_hours(2048, 0.70) < _gpu_hours(1024, 0.90) else "B",
    choices=("A", "B"), synonyms={"A": ("plan A", "方案A", "方案 A"), "B": ("plan B", "方案B", "方案 B")},
    kind="judgement",
    explain=_why_ch01_5,
    hints=("训练时间 T = C / (N × 峰值 × MFU × η)，花费的 GPU·h = N × T。",
           "N 在分子分母里消掉了：GPU·h 只和 η 有关。"),
    solution_text=lambda: (f"GPU·h = C / (峰值 × MFU × η)：A 约 {_gpu_hours(2048, 0.70):,.0f} GPU·h，B 约 "
                           f"{_gpu_hours(1024, 0.90):,.0f} GPU·h。B 省 {1 - _gpu_hours(1024, 0.90) / _gpu_hours(2048, 0.70):.0%}"
                           f"（1 − 0.70/0.90），A 只是更快（T_A/T_B = 1024×0.9 / (2048×0.7) = {1024 * 0.9 / (2048 * 0.7):.2f}）。"
                           "要快还是要省，是预算和截止日期的权衡。"),
))
