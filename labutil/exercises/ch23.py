"""Chapter 23 exercises: acceptance thresholds, a degraded rail, counters between two samples."""

from .. import health
from ..cluster import Cluster
from .. import parsers as P
from ..parsers import samples
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

register(Exercise(
    key="ch23.1",
    prompt="A DGX H100 node has 8 compute rails of 400 Gb/s NDR. Ring bound of inter-node all_reduce busbw (GB/s)?",
    answer=lambda: health.ring_busbw_bound_gbs("inter", nic_gbps=400, nics_per_node=8, gpu="H100-SXM"),
    kind="by_hand",
    unit="GB/s", rtol=0.02,
    hints=("每条轨道（rail）一个环，数据平均分到各个环上：各条轨道的带宽相加。",
           "400 Gb/s = 50 GB/s；8 条轨道 × 50 GB/s，再和 NVLink 单向 450 GB/s 取小。"),
    solution_text="8 × 400 / 8 = 400 GB/s，小于 H100 NVLink 单向 450 GB/s，所以环界是 400 GB/s。",
))

register(Exercise(
    key="ch23.2",
    prompt="Two such nodes (2 x DGX H100): course policy pass line = 80 % of the expected busbw "
           "(labutil.cluster: min(NVLink ring ~370, 8 NICs x ~48 GB/s)). Minimum peak busbw (GB/s) that passes?",
    answer=lambda: Cluster.system("DGX-H100", 2).acceptance_busbw_gbs("all_reduce")
    * health.AcceptanceSpec().busbw_pass_fraction,
    kind="by_hand",
    unit="GB/s", rtol=0.02,
    hints=("期望值 = min(NVLink 环 370, 8 × 400/8 × 0.96 = 384) GB/s。",
           "通过线 = 期望值 × busbw_pass_fraction（AcceptanceSpec().busbw_pass_fraction 是 0.8）。"),
    solution_text="期望 370 GB/s，× 0.8 = 296 GB/s。低于 222 GB/s（60%）判为 critical，两者之间为 warning。",
))

register(Exercise(
    key="ch23.3",
    prompt="8 rails of 400G, one rail trained down to 200G, NCCL reaching 0.96 of each NIC's line rate "
           "(labutil.cluster.NIC_EFFICIENCY): expected peak all_reduce busbw (GB/s)?",
    answer=lambda: health.rail_allreduce_busbw_gbs(400, 8, 1, 200),
    unit="GB/s", rtol=0.02,
    hints=("NCCL 把数据平均分给每条轨道上的环，集合通信要等最慢的那个环结束。",
           "busbw = 轨道数 × 最慢轨道速率 / 8 × 效率。"),
    solution_text="8 × 200 / 8 × 0.96 = 192 GB/s：一条慢轨道让整机 busbw 减半（健康时 min(NVLink 环 370, 8 × 48 = 384) = 370 GB/s）。",
))

register(Exercise(
    key="ch23.4",
    prompt="Parse the perfquery samples 'perfquery_t0' and 'perfquery_t1': by how much did SymbolErrorCounter rise?",
    answer=lambda: (P.parse_perfquery(samples.sample("perfquery_t1")).counters["SymbolErrorCounter"]
                    - P.parse_perfquery(samples.sample("perfquery_t0")).counters["SymbolErrorCounter"]),
    unit="次", rtol=0.0, atol=0.5,
    hints=("计数器是自上次清零以来的累计值，要看两次采样之间的增量。",
           "用 parse_perfquery(...).counters['SymbolErrorCounter'] 取两次的值相减。"),
    solution_text="4127 − 12 = 4115：十分钟内涨了四千多次，是光模块/线缆误码的典型信号，按课程策略判 critical。",
))


_ACTION = {"info": "ignore", "warning": "watch", "critical": "replace"}


def _perfquery_action() -> str:
    findings = health.check_perfquery(P.parse_perfquery(samples.sample("perfquery_t0")),
                                      P.parse_perfquery(samples.sample("perfquery_t1")))
    order = ("info", "warning", "critical")
    worst = max((f.severity for f in findings), key=order.index, default="info")
    return _ACTION[worst]


def _why_ch23_5(option: str) -> str:
    """Why action ``option`` does not fit: how much the error counters rose against the spec's lines."""
    findings = health.check_perfquery(P.parse_perfquery(samples.sample("perfquery_t0")),
                                      P.parse_perfquery(samples.sample("perfquery_t1")))
    rises = "，".join(f"{f.check} +{f.value:,}" for f in findings)
    return f"两次采样之间 {rises}；新增 ≥ 1 就要复查，≥ 100 或链路断过（LinkDowned）就是 critical，不能只是 {option}"


register(Exercise(
    key="ch23.5",
    prompt=("Judgement: the two perfquery samples of ch23.4, default acceptance spec (warn >= 1, critical >= 100 new "
            "errors). What do you do with that port: 'ignore', 'watch' (re-check later) or 'replace' (drain, "
            "reseat/replace the cable or transceiver)?"),
    answer=_perfquery_action,
    choices=("ignore", "watch", "replace"),
    synonyms={"ignore": ("忽略", "pass"), "watch": ("monitor", "观察", "复查"), "replace": ("drain", "更换", "换线", "隔离")},
    kind="judgement",
    explain=_why_ch23_5,
    hints=("绝对值意义不大，看两次采样之间涨了多少（练习 4）。", "新增 ≥ 100 个 SymbolError 就是 critical。"),
    solution_text="SymbolErrorCounter 两次采样间涨了 4,115，远超 100 的 critical 线：replace——先隔离端口，再重插或更换线缆/光模块。",
))
