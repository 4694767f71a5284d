"""Chapter 27 exercises: failures of a mixed cluster, Young's interval, goodput, restart budget."""

import math

from .. import reliability
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))
# Solutions are generated from the model (issue 17: no hand-typed model numbers).
_MIX = {"gpu": (4096, 80_000), "host": (512, 50_000), "network_link": (4096, 500_000)}
_MIX_PER_H = {k: n / m for k, (n, m) in _MIX.items()}
_MIX_DAY = reliability.cluster_failures_per_day(_MIX)
_L3 = reliability.llama3_failures_per_day(16_384)
_M = 86_400.0 / _L3
_TAU4 = reliability.young_daly_interval_s(30.0, _M)
_R4 = reliability.max_restart_s_for_goodput(0.90, _L3, 30.0)
_G3 = reliability.goodput(_L3, 600.0, 900.0, 30.0)
_G3_FIRST = 1 - 30.0 / 930.0 - (600.0 + 930.0 / 2) / _M
_BASE5 = reliability.optimal_goodput(_L3, 600.0, 30.0)
_RESTART5 = reliability.optimal_goodput(_L3, 300.0, 30.0)
_CKPT5 = reliability.optimal_goodput(_L3, 600.0, 15.0)

register(Exercise(
    key="ch27.1",
    prompt=("A 4,096-GPU job (512 hosts). Per-unit MTBF: GPU 80,000 h, host 50,000 h, network link "
            "(one per GPU) 500,000 h. Expected job interruptions per day?"),
    answer=lambda: reliability.cluster_failures_per_day(
        {"gpu": (4096, 80_000), "host": (512, 50_000), "network_link": (4096, 500_000)}),
    unit="次/天", rtol=0.02,
    hints=("串联系统：任何一个部件坏了作业就中断，总故障率 = Σ nᵢ / MTBFᵢ。",
           "4096/80000 + 512/50000 + 4096/500000 次/小时，再乘 24。"),
    solution_text=(f"λ = 4096/80,000 + 512/50,000 + 4096/500,000 = {_MIX_PER_H['gpu']:.4f} + {_MIX_PER_H['host']:.5f} + "
                   f"{_MIX_PER_H['network_link']:.6f} = {sum(_MIX_PER_H.values()):.5f} 次/小时，× 24 = {_MIX_DAY:.2f} 次/天："
                   f"集群 MTBF 约 {24 / _MIX_DAY:.1f} 小时。"),
))

register(Exercise(
    key="ch27.2",
    prompt="Job MTBF 6 h, one checkpoint takes 90 s to write. Young's optimal checkpoint interval, in minutes?",
    answer=lambda: reliability.young_daly_interval_s(90.0, 6 * 3600.0) / 60.0,
    kind="by_hand",
    unit="min", rtol=0.02,
    hints=("Young 1974：τ* = √(2 δ M)，δ 与 M 用同一单位（秒）。",
           "√(2 × 90 × 21,600) 秒，再除以 60。"),
    solution_text=(f"τ* = √(2 × 90 s × 21,600 s) = √{2 * 90 * 21_600:,} ≈ "
                   f"{reliability.young_daly_interval_s(90.0, 21_600.0):,.0f} s ≈ "
                   f"{reliability.young_daly_interval_s(90.0, 21_600.0) / 60:.1f} min。"),
))

register(Exercise(
    key="ch27.3",
    prompt=("Llama 3 rate (419 unexpected interruptions in 54 days on 16,384 GPUs), restart 10 min, "
            "checkpoint 30 s every 15 min. Expected goodput in percent?"),
    answer=lambda: 100.0 * reliability.goodput(reliability.llama3_failures_per_day(16_384), 600.0, 900.0, 30.0),
    unit="%", rtol=0.01,
    hints=("M = 86,400 / (419/54) 秒；用本章的 goodput 公式 τ / [M·e^{R/M}·(e^{(τ+δ)/M} − 1)]。",
           "一阶近似可以验算：每次故障损失 R + (τ+δ)/2，检查点开销 δ/(τ+δ)，结果应在 88% 左右。"),
    solution_text=(f"M = 86,400/{_L3:.3f} = {_M:,.0f} s；e^{{600/M}} = {math.exp(600 / _M):.4f}，"
                   f"e^{{930/M}} − 1 = {math.expm1(930 / _M):.5f}；goodput = 900 / ({_M:,.0f} × {math.exp(600 / _M):.4f} × "
                   f"{math.expm1(930 / _M):.5f}) = {_G3:.3f} → {100 * _G3:.1f}%（一阶近似 {100 * _G3_FIRST:.1f}%）。"),
))

register(Exercise(
    key="ch27.4",
    prompt=("Same Llama 3 failure rate, checkpoint 30 s at Young's interval. What is the longest restart "
            "time (minutes) that still reaches 90 % goodput?"),
    answer=lambda: reliability.max_restart_s_for_goodput(0.90, reliability.llama3_failures_per_day(16_384), 30.0) / 60.0,
    unit="min", rtol=0.03,
    hints=("先用 Young 公式求 τ*（M = 86,400/7.76 秒），再把 goodput 公式解出 R。",
           "R = M · ln( τ / (0.9 · M · (e^{(τ+δ)/M} − 1)) )。"),
    solution_text=(f"M = {_M:,.0f} s，τ* = √(2×30×{_M:,.0f}) = {_TAU4:.0f} s；e^{{{_TAU4 + 30:.0f}/M}} − 1 = "
                   f"{math.expm1((_TAU4 + 30) / _M):.4f}；R = M · ln({_TAU4:.0f} / (0.9 × {_M:,.0f} × "
                   f"{math.expm1((_TAU4 + 30) / _M):.4f})) ≈ {_R4:.0f} s ≈ {_R4 / 60:.1f} min。"
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
    solution_text=(f"基线 goodput ≈ {100 * _BASE5:.1f} %；重启减半 → {100 * _RESTART5:.1f} %，检查点写入减半 → "
                   f"{100 * _CKPT5:.1f} %：{'restart' if _RESTART5 > _CKPT5 else 'checkpoint'} 收益更大。"
                   f"每天 {_L3:.1f} 次中断，每次省下 5 分钟重启，比写检查点快 15 s 更值钱。"),
))
