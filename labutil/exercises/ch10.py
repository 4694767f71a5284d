"""Chapter 10 exercises: cluster power, PUE, racks, energy cost.

Worked solutions are generated from the same ``labutil.power`` calls as the answers.
"""

from .. import power
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))
_KW = power.server_power_kw("DGX-H100")


def _sol_1() -> str:
    c = power.cluster_power(2048, server="DGX-H100", pue=1.4)
    return f"{c.servers} × {_KW:g} = {c.it_kw:,.1f} kW（IT）；× 1.4 = {c.facility_kw:,.1f} kW ≈ {c.facility_kw / 1e3:.2f} MW。"


def _sol_2() -> str:
    c = power.cluster_power(512, server="DGX-H100", rack_kw_limit=30.0)
    return (f"floor(30/{_KW:g}) = {c.servers_per_rack} 台/柜（受{'功率' if c.rack_limit_by == 'power' else '空间'}限制）；"
            f"{c.servers} 台 → {c.racks} 个机柜，每柜 {c.rack_kw:.1f} kW。")


def _sol_3() -> str:
    c = power.cluster_power(1000, pue=1.5)
    cost = power.energy_cost_per_year(c.facility_kw, 0.6)
    return (f"{c.servers} × {_KW:g} × 1.5 = {c.facility_kw:,.1f} kW；× 8,760 h = {c.facility_kw * 8760 / 1e6:.2f} GWh；"
            f"× 0.6 = {cost / 1e4:,.0f} 万元/年。")


def _sol_4() -> str:
    it = power.cluster_power(1000, pue=1.0).it_kw
    return (f"2000 / {it:,.0f} = {2000 / it:.2f}：行业平均 PUE（约 {power.facility_data()['pue']['industry_average']:.2f}）下，"
            f"千卡 H100 集群的总功耗就超过 2 MW。")


def _sol_5() -> str:
    c = power.cluster_power(1024, server="DGX-H100", rack_kw_limit=41.0)
    th = power.facility_data()["cooling"]
    three = power.cooling_advice(3 * _KW)
    return (f"{c.cooling}：每柜 {c.servers_per_rack} 台 × {_KW:g} = {c.rack_kw:.1f} kW，高于风冷 + 通道封闭的约 "
            f"{th['air_containment_max_kw']:g} kW，低于背板换热器的 {th['rear_door_max_kw']:g} kW，所以要把水引到机柜背门（RDHx）；"
            f"若降到 3 台/柜（{3 * _KW:.1f} kW），{three} 即可。")

register(Exercise(
    key="ch10.1",
    prompt="2,048 H100 GPUs in DGX H100 servers, PUE 1.4, no network/storage: facility power in kW?",
    answer=lambda: power.cluster_power(2048, server="DGX-H100", pue=1.4).facility_kw,
    unit="kW", rtol=0.02,
    hints=("先算服务器台数：2048 / 8 = 256 台；每台 DGX H100 最大 10.2 kW。",
           "IT 功耗 = 256 × 10.2 kW，机房总功耗 = IT × PUE。"),
    solution_text=_sol_1(),
))

register(Exercise(
    key="ch10.2",
    prompt="512 H100 GPUs (DGX H100), racks limited to 30 kW each: how many racks?",
    answer=lambda: power.cluster_power(512, server="DGX-H100", rack_kw_limit=30.0).racks,
    unit="个", rtol=0.0, atol=0.01, kind="by_hand",
    hints=("每柜台数 = floor(30 / 10.2)，同时不超过 (42−2)/8U = 5 台。",
           "64 台服务器 ÷ 每柜 2 台，向上取整。"),
    solution_text=_sol_2(),
))

register(Exercise(
    key="ch10.3",
    prompt="1,000 GPUs (DGX H100), PUE 1.5, running all year at full power, price 0.6 per kWh: yearly electricity cost?",
    answer=lambda: power.energy_cost_per_year(power.cluster_power(1000, pue=1.5).facility_kw, 0.6),
    unit="元/年", rtol=0.02,
    hints=("先算机房总功耗：125 台 × 10.2 kW × 1.5。",
           "一年 8,760 小时；电费 = kW × 8760 h × 单价。"),
    solution_text=_sol_3(),
))

register(Exercise(
    key="ch10.4",
    prompt="1,000 GPUs in DGX H100 servers (servers only): what PUE makes the facility draw exactly 2 MW?",
    answer=lambda: power.pue_for(power.cluster_power(1000, pue=1.0).it_kw, 2000.0),
    unit="", rtol=0.01,
    hints=("PUE = 机房总功耗 / IT 功耗。", "IT 功耗 = 125 × 10.2 kW = 1,275 kW。"),
    solution_text=_sol_4(),
))


def _why_ch10_5(option: str) -> str:
    """Why cooling ``option`` does not match: the rack's kW against the thresholds of facility.toml."""
    cp = power.cluster_power(1024, server="DGX-H100", rack_kw_limit=41.0)
    c = power.facility_data()["cooling"]
    upper = {"air": c["air_room_max_kw"], "air+containment": c["air_containment_max_kw"],
             "rear-door": c["rear_door_max_kw"]}
    where = f"每柜 {cp.servers_per_rack} 台 × {cp.server_unit_kw:g} kW = {cp.rack_kw:.1f} kW"
    if option in upper and cp.rack_kw > upper[option]:
        return f"{where}，超过了这种方式的上限约 {upper[option]:g} kW"
    lower = {"air+containment": c["air_room_max_kw"], "rear-door": c["air_containment_max_kw"],
             "direct-liquid": c["rear_door_max_kw"]}[option]
    return f"{where}，不到这种方式的起点 {lower:g} kW：更便宜的冷却方式就够了"


register(Exercise(
    key="ch10.5",
    prompt=("Judgement. Racks of 41 kW filled with DGX H100 servers up to the power limit: which cooling method do "
            "the chapter's thresholds call for: 'air', 'air+containment', 'rear-door' or 'direct-liquid'?"),
    answer=lambda: power.cluster_power(1024, server="DGX-H100", rack_kw_limit=41.0).cooling,
    choices=("air", "air+containment", "rear-door", "direct-liquid"),
    synonyms={"air": ("room air", "风冷"), "air+containment": ("containment", "风冷+封闭通道"),
              "rear-door": ("rdhx", "rear door", "背板换热"), "direct-liquid": ("liquid", "cold plate", "冷板液冷")},
    kind="judgement",
    explain=_why_ch10_5,
    params={"power.cluster_power": {"n_gpus": 1024, "server": "DGX-H100", "rack_kw_limit": 41.0}},
    hints=("先算每柜放几台：floor(41 / 10.2)，再乘以 10.2 kW 得到每柜的实际功率。",
           "每柜 4 台 = 40.8 kW：超过封闭通道风冷的约 35 kW，但低于背板换热的 75 kW 上限。"),
    solution_text=_sol_5(),
))
