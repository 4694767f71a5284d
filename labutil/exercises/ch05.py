"""Chapter 5 exercises: energy cost, cost per GPU-hour, break-even, downtime, budget comparison.

Worked solutions are generated from the same model calls as the answers (at import), so a price or
model change cannot leave a stale number in them.
"""

from .. import cost, hardware
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))
_CLOUD = 4.916  # USD/GPU-h, AWS Capacity Blocks p5 (prices.toml), as the prompts state


def _t():
    return cost.tco(1024, 4, 0.8)


def _sol_1() -> str:
    o = cost.opex_per_year(1024, server="DGX-H100", pue=1.5, usd_per_kwh=0.08)
    kw = hardware.server("DGX-H100").max_power_w / 1000
    return (f"128 × {kw:g} kW = {o.it_kw:,.1f} kW；× 1.5 = {o.facility_kw:,.0f} kW；× 8,760 h × 0.08 = "
            f"{o.power_usd / 1e6:.2f} M USD/年。")


def _sol_2() -> str:
    t = _t()
    gpu_h = 1024 * 8760 * 4 * 0.8
    return (f"tco(1024, 4, 0.8).total_usd ≈ {t.total_usd / 1e6:.1f} M USD；除以 1,024 × 8,760 × 4 × 0.8 ≈ "
            f"{gpu_h / 1e6:.1f} M GPU·h → 约 {t.usd_per_gpu_hour:.2f} USD/GPU·h。")


def _breakeven_pct() -> float:
    return 100.0 * cost.breakeven_utilisation(_t(), _CLOUD)


def _sol_3() -> str:
    return (f"u* = {_t().total_usd / 1e6:.1f} M / (1,024 × 8,760 × 4 × {_CLOUD}) ≈ {_breakeven_pct():.1f}%："
            f"利用率低于它时租比买划算。")


def _downtime_delta_musd() -> float:
    return (cost.downtime_cost(1024, 0.5, 6 * 3600, 3600, 3.0).usd_per_year
            - cost.downtime_cost(1024, 0.5, 600, 3600, 3.0).usd_per_year) / 1e6


def _sol_4() -> str:
    servers = _downtime_delta_musd() * 1e6 / cost.server_price_usd("DGX-H100")
    return (f"(6 − 1/6) h × 1,024 × 3 USD × 182.5 次 ≈ {_downtime_delta_musd():.2f} M USD/年——"
            f"按示意价格足够买约 {servers:.0f} 台 DGX H100 的冗余与自动化。")


def _options():
    return {x.label: x for x in cost.budget_comparison(50e6)}


def _sol_5() -> str:
    o = _options()
    b, t = o["mid GPU + 200G IB (balanced)"], o["top GPU + 25GbE"]
    return (f"平衡方案 {b.n_gpus:,} 张 A100，交付 {b.delivered_pflops:.0f} PFLOP/s（扩展效率 {100 * b.scaling_efficiency:.1f}%）；"
            f"顶配+25GbE {t.n_gpus:,} 张 H100，交付 {t.delivered_pflops:.0f} PFLOP/s（扩展效率 {100 * t.scaling_efficiency:.1f}%）；"
            f"约 {b.delivered_pflops / t.delivered_pflops:.2f} 倍（扩展效率来自 labutil.cluster：每台 2×25GbE 只有 "
            f"50 × 0.96 / 8 = 6 GB/s 的 busbw）。")


def _sol_6() -> str:
    u = _breakeven_pct()
    verdict = "租用云更便宜（cloud）" if 40 < u else "自建更便宜（own）"
    return f"盈亏平衡利用率约 {u:.1f} %；40 % {'低于' if 40 < u else '高于'}它，{verdict}。只有确信集群能长期满载、利用率稳定高于门槛时，自建才划算。"

register(Exercise(
    key="ch05.1",
    prompt=("128 DGX H100 servers (1,024 GPUs) at full power, PUE 1.5, electricity 0.08 USD/kWh: "
            "yearly electricity bill in million USD?"),
    answer=lambda: cost.opex_per_year(1024, server="DGX-H100", pue=1.5, usd_per_kwh=0.08).power_usd / 1e6,
    kind="by_hand",
    unit="M USD/年", rtol=0.03,
    hints=("IT 功率 = 服务器数 × 单台最大功率（DGX H100 约 10.2 kW）；设施功率 = IT × PUE。",
           "电费 = 设施 kW × 8,760 h × 电价。"),
    solution_text=_sol_1(),
))

register(Exercise(
    key="ch05.2",
    prompt=("Default TCO of 1,024 H100 GPUs (DGX-H100, IB-NDR-400G) over 4 years at 80 % utilisation: "
            "cost per used GPU-hour in USD? (use labutil.cost.tco)"),
    answer=lambda: cost.tco(1024, 4, 0.8).usd_per_gpu_hour,
    unit="USD/GPU·h", rtol=0.02,
    params={"cost.tco": {"n_gpus": 1024, "years": 4, "utilisation": 0.8, "server": "DGX-H100", "fabric": "IB-NDR-400G"}},
    hints=("TCO = capex + 4 × opex/年。", "每 GPU·小时成本 = TCO / (1,024 × 8,760 × 4 × 0.8)。"),
    solution_text=_sol_2(),
))

register(Exercise(
    key="ch05.3",
    prompt=("Same cluster, cloud at 4.916 USD/GPU-h (AWS Capacity Blocks, H100): above which utilisation "
            "(in percent) does owning win over 4 years?"),
    answer=_breakeven_pct,
    unit="%", rtol=0.02,
    params={"cost.tco": {"n_gpus": 1024, "years": 4, "utilisation": 0.8, "server": "DGX-H100", "fabric": "IB-NDR-400G"}},
    hints=("利用率不影响自建的总成本（机器买了就在那里），只影响云账单。",
           "u* = TCO / (N × 8,760 × 年数 × 云单价)。"),
    solution_text=_sol_3(),
))

register(Exercise(
    key="ch05.4",
    prompt=("1,024 GPUs, 0.5 failures/day, hourly checkpoints, idle cost 3 USD/GPU-h. How much more per year "
            "(million USD) does a 6-hour manual recovery cost than a 10-minute automatic one?"),
    answer=_downtime_delta_musd,
    unit="M USD/年", rtol=0.02,
    hints=("每次故障损失 = 重启时间 R + 检查点间隔的一半（重算）。",
           "差值只来自 R：(6 h − 10 min) × 1,024 GPU × 3 USD × 每年故障次数 (0.5 × 365)。"),
    solution_text=_sol_4(),
))

register(Exercise(
    key="ch05.5",
    prompt=("Budget 50 M USD (default options of labutil.cost.budget_comparison). How many times more "
            "delivered PFLOP/s does 'mid GPU + 200G IB (balanced)' give than 'top GPU + 25GbE'?"),
    answer=lambda: (lambda o: o["mid GPU + 200G IB (balanced)"].delivered_pflops / o["top GPU + 25GbE"].delivered_pflops)(
        {x.label: x for x in cost.budget_comparison(50e6)}),
    unit="倍", rtol=0.02,
    params={"cost.budget_comparison": {"budget_usd": 50e6}},
    hints=("交付算力 = N × 峰值 × MFU × 扩展效率；两种方案 MFU 相同，差别在 N、峰值和扩展效率。",
           "看 budget_comparison 返回的 scaling_efficiency：25GbE 上的 H100 大部分时间在等梯度同步。"),
    solution_text=_sol_5(),
))


def _why_ch05_6(option: str) -> str:
    """Why ``option`` is the dearer choice at 40 % utilisation: the break-even utilisation that decides it."""
    breakeven = cost.breakeven_utilisation(cost.tco(1024, 4, 0.8), 4.916)
    if option == "own":
        return (f"盈亏平衡利用率是 {breakeven:.1%}，预期只有 40 %：自建的 TCO 不随利用率下降，"
                f"用得少时每个真正用上的 GPU·h 比云上 4.916 USD 更贵")
    return (f"盈亏平衡利用率是 {breakeven:.1%}，预期有 40 %：高于它时，按小时付费的云账单超过了自建的 TCO")


register(Exercise(
    key="ch05.6",
    prompt=("Judgement: the default 1,024-GPU H100 cluster over 4 years against the cloud at 4.916 USD/GPU-h, but the "
            "expected utilisation is only 40 %. 'own' or 'cloud'?"),
    answer=lambda: "own" if 40 > _breakeven_pct() else "cloud",
    choices=("own", "cloud"),
    synonyms={"own": ("buy", "自建", "买"), "cloud": ("rent", "租", "上云", "租用")},
    kind="judgement",
    explain=_why_ch05_6,
    params={"cost.tco": {"n_gpus": 1024, "years": 4, "utilisation": 0.8, "server": "DGX-H100", "fabric": "IB-NDR-400G"}},
    hints=("先用练习 3 的盈亏平衡利用率：自建的 TCO 和利用率无关，云账单和使用时长成正比。",
           "利用率低于盈亏平衡点时，租比买便宜。"),
    solution_text=_sol_6(),
))


def _facility20():
    return cost.tco(1024, 4, 0.8, facility_years=20)


def _sol_7() -> str:
    t, base = _facility20(), _t()
    return (f"机房建设 {t.capex.facility_usd / 1e6:.1f} M USD × 4/20 = {t.facility_charged_usd / 1e6:.2f} M 计入 4 年的 TCO"
            f"（默认是全部 {base.capex.facility_usd / 1e6:.1f} M）；TCO 从 {base.total_usd / 1e6:.1f} M 降到 {t.total_usd / 1e6:.1f} M，"
            f"除以 1,024 × 8,760 × 4 × 0.8 GPU·h ≈ {t.usd_per_gpu_hour:.2f} USD/GPU·h（默认 {base.usd_per_gpu_hour:.2f}）。")


register(Exercise(
    key="ch05.7",
    prompt=("The default 1,024-GPU H100 cluster over 4 years at 80 % utilisation, but the facility build-out is "
            "written off over its own 20-year life (labutil.cost.tco(..., facility_years=20)): cost per used GPU-hour in USD?"),
    answer=lambda: _facility20().usd_per_gpu_hour,
    unit="USD/GPU·h", rtol=0.02,
    hints=("4 年的 TCO 只承担机房建设的 4/20，其余各项不变。",
           "TCO = 硬件 capex + 机房建设 × 4/20 + 4 × opex/年；再除以 1,024 × 8,760 × 4 × 0.8。"),
    solution_text=_sol_7(),
))
