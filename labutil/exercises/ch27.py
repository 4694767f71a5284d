"""Chapter 27 exercises: failures of a mixed cluster, Young's interval, goodput, restart budget."""

from .. import reliability
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

register(Exercise(
    key="ch27.1",
    prompt=("A 4,096-GPU job (512 hosts). Per-unit MTBF: GPU 80,000 h, host 50,000 h, network link "
            "(one per GPU) 500,000 h. Expected job interruptions per day?"),
    answer=lambda: reliability.cluster_failures_per_day(
        {"gpu": (4096, 80_000), "host": (512, 50_000), "network_link": (4096, 500_000)}),
    unit="次/天", rtol=0.02,
    hints=("串联系统：任何一个部件坏了作业就中断，总故障率 = Σ nᵢ / MTBFᵢ。",
           "4096/80000 + 512/50000 + 4096/500000 次/小时，再乘 24。"),
    solution_text=("λ = 4096/80,000 + 512/50,000 + 4096/500,000 = 0.0512 + 0.01024 + 0.008192 = 0.06963 次/小时，"
                   "× 24 = 1.67 次/天：集群 MTBF 约 14.4 小时。"),
))

register(Exercise(
    key="ch27.2",
    prompt="Job MTBF 6 h, one checkpoint takes 90 s to write. Young's optimal checkpoint interval, in minutes?",
    answer=lambda: reliability.young_daly_interval_s(90.0, 6 * 3600.0) / 60.0,
    kind="by_hand",
    unit="min", rtol=0.02,
    hints=("Young 1974：τ* = √(2 δ M)，δ 与 M 用同一单位（秒）。",
           "√(2 × 90 × 21,600) 秒，再除以 60。"),
    solution_text="τ* = √(2 × 90 s × 21,600 s) = √3,888,000 ≈ 1,972 s ≈ 32.9 min。",
))

register(Exercise(
    key="ch27.3",
    prompt=("Llama 3 rate (419 unexpected interruptions in 54 days on 16,384 GPUs), restart 10 min, "
            "checkpoint 30 s every 15 min. Expected goodput in percent?"),
    answer=lambda: 100.0 * reliability.goodput(reliability.llama3_failures_per_day(16_384), 600.0, 900.0, 30.0),
    unit="%", rtol=0.01,
    hints=("M = 86,400 / (419/54) 秒；用本章的 goodput 公式 τ / [M·e^{R/M}·(e^{(τ+δ)/M} − 1)]。",
           "一阶近似可以验算：每次故障损失 R + (τ+δ)/2，检查点开销 δ/(τ+δ)，结果应在 88% 左右。"),
    solution_text=("M = 86,400/7.759 = 11,135 s；e^{600/M} = 1.0554，e^{930/M} − 1 = 0.08713；"
                   "goodput = 900 / (11,135 × 1.0554 × 0.08713) = 0.879 → 87.9%（一阶近似 87.5%）。"),
))

register(Exercise(
    key="ch27.4",
    prompt=("Same Llama 3 failure rate, checkpoint 30 s at Young's interval. What is the longest restart "
            "time (minutes) that still reaches 90 % goodput?"),
    answer=lambda: reliability.max_restart_s_for_goodput(0.90, reliability.llama3_failures_per_day(16_384), 30.0) / 60.0,
    unit="min", rtol=0.03,
    hints=("先用 Young 公式求 τ*（M = 86,400/7.76 秒），再把 goodput 公式解出 R。",
           "R = M · ln( τ / (0.9 · M · (e^{(τ+δ)/M} − 1)) )。"),
    solution_text=("M = 11,135 s，τ* = √(2×30×11,135) = 817 s；e^{847/M} − 1 = 0.0790；"
                   "R = M · ln(817 / (0.9 × 11,135 × 0.0790)) ≈ 345 s ≈ 5.8 min。"
                   "也就是说，要做到 Llama 3 报告的 >90%，重启必须是分钟级的全自动流程。"),
))


def _better_fix() -> str:
    rate = reliability.llama3_failures_per_day(16_384)
    restart = reliability.optimal_goodput(rate, 300.0, 30.0)
    ckpt = reliability.optimal_goodput(rate, 600.0, 15.0)
    return "restart" if restart > ckpt else "checkpoint"


def _why_ch27_5(option: str) -> str:
    """Why fix ``option`` raises goodput less: both goodputs at Young's interval."""
    rate = reliability.llama3_failures_per_day(16_384)
    base = reliability.optimal_goodput(rate, 600.0, 30.0)
    g = {"restart": reliability.optimal_goodput(rate, 300.0, 30.0), "checkpoint": reliability.optimal_goodput(rate, 600.0, 15.0)}
    other = "checkpoint" if option == "restart" else "restart"
    return (f"基线 goodput {base:.1%}，这一改法只提到 {g[option]:.1%}，另一个改法提到 {g[other]:.1%}："
            f"每天约 {rate:.1f} 次中断，每次省下的时间决定收益")


register(Exercise(
    key="ch27.5",
    prompt=("Judgement: Llama 3 failure rate on 16,384 GPUs, restart 10 min, checkpoint write 30 s, each at Young's "
            "interval. Which fix raises goodput more: 'restart' (halve the restart to 5 min) or 'checkpoint' (halve "
            "the write to 15 s)?"),
    answer=_better_fix,
    choices=("restart", "checkpoint"),
    synonyms={"restart": ("faster restart", "重启", "缩短重启"), "checkpoint": ("faster checkpoint", "检查点", "加快检查点")},
    kind="judgement",
    explain=_why_ch27_5,
    params={"reliability.optimal_goodput": {"restart_s": 300.0, "checkpoint_s": 30.0}},
    hints=("每次故障的损失 ≈ 重启时间 + 半个检查点间隔；检查点开销 ≈ δ/τ。",
           "τ* = √(2δM)：δ 减半，τ* 只缩小到 1/√2，两部分各少约 29 %。"),
    solution_text=("基线 goodput ≈ 88.0 %；重启减半 → 90.4 %，检查点写入减半 → 89.9 %：restart 收益更大。"
                   "每天 7.8 次中断，每次省下 5 分钟重启，比写检查点快 15 s 更值钱。"),
))
