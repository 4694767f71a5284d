"""Chapter 30 exercises: the capstone design, budget trade-off, 10,000-GPU operations."""

from .. import capstone, compute, hardware, models, power
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))


def _design():
    return capstone.design_cluster(simulate=False)


register(Exercise(
    key="ch30.1",
    prompt="The default customer (llama3-70b, 4e12 tokens, 55-day deadline, planning MFU 0.40 and goodput 0.90, "
           "H100-SXM): how many GPUs does compute.gpus_for_deadline give before rounding to scalable units?",
    answer=lambda: float(compute.gpus_for_deadline(
        compute.train_flops(models.transformer("llama3-70b").params(), 4e12), 55 * 0.90,
        hardware.gpu("H100-SXM").bf16_tflops, 0.40)),
    unit="张", rtol=0.01,
    hints=("C = 6·N·D，N 用 models.transformer('llama3-70b').params()（约 70.55B）。",
           "可用墙钟时间 = 55 天 × 0.90 goodput；n = C / (时间 × 989.4 TFLOP/s × 0.40)，向上取整。"),
    solution_text="C = 6 × 70.55e9 × 4e12 = 1.693e24 FLOPs；n = 1.693e24 / (49.5 × 86400 × 989.4e12 × 0.40) "
                  "= 1000.9 → 1001 张；按 32 台一个 SU 取整为 4 SU = 128 台 = 1,024 张。",
))

register(Exercise(
    key="ch30.2",
    prompt="Same design: facility power in MW (training + inference servers, optics, PUE 1.3)?",
    answer=lambda: float(_design().power.facility_kw) / 1e3,
    unit="MW", rtol=0.02,
    hints=("129 台 DGX H100 × 10.2 kW 是服务器 IT 功率，再加上计算网络光模块的功率。",
           "设施功率 = IT 功率 × PUE（1.3）。"),
    solution_text="129 × 10.2 kW = 1,315.8 kW，加光模块约 35 kW，IT ≈ 1,350 kW；× 1.3 ≈ 1.76 MW。",
))

register(Exercise(
    key="ch30.3",
    prompt="Same design scaled to 10,000 GPUs with Llama 3 failure rates: spare GPUs to hold for a 14-day RMA "
           "lead time at a 99 % service level?",
    answer=lambda: float(capstone.operations_view(_design(), 10_000, trials=20).spares["gpu"]),
    unit="张", rtol=0.0, atol=1.0,
    hints=("GPU 故障率：10,000 × 24 / MTBF_gpu（按 Llama 3 表 5 标定，约 79,000 h），约 3.0 次/天。",
           "14 天内的故障数服从均值 λ·14 的泊松分布；备件数 = 它的 99% 分位数。"),
    solution_text="λ_gpu ≈ 3.03 次/天，14 天均值 ≈ 42.4；Poisson(42.4) 的 99% 分位数是 58 张（只靠均值 43 张，"
                  "约一半的月份会缺货）。",
))

register(Exercise(
    key="ch30.4",
    prompt="Same 10,000-GPU fleet: Young's optimal checkpoint interval in minutes (checkpoint write time of the "
           "design, job MTBF from the Llama 3 rates)?",
    answer=lambda: capstone.operations_view(_design(), 10_000, trials=20).interval_s / 60.0,
    unit="min", rtol=0.03,
    hints=("作业 MTBF = 86400 / 每天中断次数（约 4.74 次/天）。",
           "τ = √(2 δ M)，δ 是设计中检查点写完的时间（约 13.5 s）。"),
    solution_text="M = 86400 / 4.74 ≈ 18,240 s，δ ≈ 13.5 s，τ = √(2 × 13.5 × 18,240) ≈ 702 s ≈ 11.7 min。",
))


def _best_budget_option() -> str:
    return max(capstone.budget_alternatives(50e6), key=lambda o: o.delivered_pflops).label


def _why_ch30_5(option: str) -> str:
    """Why budget option ``option`` delivers less: its GPUs, scaling efficiency and PFLOP/s against the best."""
    opts = {o.label: o for o in capstone.budget_alternatives(50e6)}
    o = opts[option]
    best = max(x.delivered_pflops for x in opts.values())
    return (f"{option}：{o.n_gpus:,} 张卡、峰值 {o.peak_pflops:,.0f} PFLOP/s，扩展效率 {o.scaling_efficiency:.2f}，"
            f"交付 {o.delivered_pflops:,.0f} PFLOP/s；最好的选项交付 {best:,.0f} PFLOP/s")


register(Exercise(
    key="ch30.5",
    prompt=("Judgement: a 50 M USD budget (capstone.budget_alternatives(50e6)). Which option delivers the most "
            "PFLOP/s: 'top GPU + 25GbE', 'top GPU + 400G IB', 'mid GPU + 200G IB (balanced)' or 'mid GPU + 25GbE'?"),
    answer=_best_budget_option,
    choices=tuple(o.label for o in capstone.budget_alternatives(50e6)),
    kind="judgement",
    explain=_why_ch30_5,
    hints=("交付算力 = 峰值 × 扩展效率：网络太慢时，GPU 再强也只剩零头。",
           "逐个看 budget_alternatives 的 delivered_pflops。"),
    solution_text=lambda: "；".join(
        f"{o.label}：{o.n_gpus:,} 张卡、扩展效率 {o.scaling_efficiency:.2f}，交付 {o.delivered_pflops:,.0f} PFLOP/s"
        for o in sorted(capstone.budget_alternatives(50e6), key=lambda o: -o.delivered_pflops))
        + f"。最多的是 {_best_budget_option()}：省下网络的钱买更多 GPU 是最贵的错误。",
))

register(Exercise(
    key="ch30.6",
    prompt="By hand: 1,000 H100 in DGX H100 servers (8 GPUs and 10.2 kW each), PUE 1.3, servers only: facility power in MW?",
    answer=lambda: power.cluster_power(1000, server="DGX-H100", pue=1.3).facility_kw / 1000,
    unit="MW", rtol=0.02, kind="by_hand",
    hints=("服务器台数 = ⌈1000 / 8⌉ = 125 台。", "设施功率 = 台数 × 10.2 kW × PUE。"),
    solution_text="125 × 10.2 kW = 1,275 kW（IT）；× 1.3 = 1,657.5 kW ≈ 1.66 MW。网络、存储和推理服务器还要另加。",
))
