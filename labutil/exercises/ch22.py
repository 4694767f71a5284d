"""Chapter 22 exercises: nccl-tests numbers, expected busbw per fabric, acceptance verdicts."""

from .. import comm, health
from ..cluster import Cluster
from ..parsers import parse_nccl_tests, samples
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

register(Exercise(
    key="ch22.1",
    prompt="all_gather_perf on 8 GPUs prints size 1073741824 B and time 4,000 us. What busbw (GB/s) does it print?",
    answer=lambda: comm.busbw_gbs("all_gather", comm.algbw_gbs(2**30, 4000e-6), 8),
    kind="by_hand",
    unit="GB/s", rtol=0.02,
    hints=("nccl-tests 的 size 列对 all_gather 是整个输出缓冲（每 rank 份额 × n）。",
           "busbw = algbw × (n−1)/n。"),
    solution_text="algbw = 1,073,741,824 / 0.004 / 1e9 = 268.4 GB/s；busbw = 268.4 × 7/8 = 234.9 GB/s。",
))

register(Exercise(
    key="ch22.2",
    prompt="Two DGX H100 (8 x 400G NDR, one NIC per GPU; NCCL reaches 0.96 of a NIC's line rate and ~370 GB/s on the "
           "NVLink ring): the expected large-message all_reduce busbw over the 16 GPUs with NCCL_ALGO=Ring (the "
           "acceptance run), in GB/s?",
    answer=lambda: Cluster.system("DGX-H100", 2).acceptance_busbw_gbs("all_reduce"),
    unit="GB/s", rtol=0.02,
    hints=("每个 rail 一个环：节点的网卡合计 8 × 400/8 × 0.96 = 384 GB/s。",
           "环同时也穿过节点内的 NVLink：取二者较小值。"),
    solution_text=("min(NVLink 环 370, 8 × 48 = 384) = 370 GB/s（labutil.cluster 的 acceptance_busbw_gbs：两节点加 NCCL_ALGO=Ring；"
                   "不加时 NCCL 默认的 NVLS-Tree 会更高）。"),
))

register(Exercise(
    key="ch22.3",
    prompt="Parse the course sample 'nccl_tests_all_reduce_degraded': its peak busbw as a percent of the 370 GB/s "
           "expectation of two DGX H100?",
    answer=lambda: 100 * parse_nccl_tests(samples.sample("nccl_tests_all_reduce_degraded")).peak_busbw_gbs
    / Cluster.system("DGX-H100", 2).acceptance_busbw_gbs("all_reduce"),
    unit="%", rtol=0.02,
    hints=("用 labutil.parsers.parse_nccl_tests 解析样例文本，取 .peak_busbw_gbs。",
           "再除以 370 GB/s，写成百分数；低于 60 % 即为 critical（AcceptanceSpec 默认值）。"),
    solution_text="峰值约 184 GB/s，约为期望的 50%：低于 60% 的失败线——典型原因是一条 rail 降速到 200G。",
))

register(Exercise(
    key="ch22.4",
    prompt="One of the 8 rails trained down to 200G (others 400G), NIC efficiency 0.96 (labutil.cluster."
           "NIC_EFFICIENCY): predicted inter-node all_reduce busbw in GB/s?",
    answer=lambda: health.rail_allreduce_busbw_gbs(400, 8, 1, 200),
    unit="GB/s", rtol=0.02,
    hints=("NCCL 把数据平均分给每个 rail 的环，集合通信在最慢的环结束时才结束。",
           "busbw = rail 数 × 最慢 rail 的速率 / 8 × 效率。"),
    solution_text="8 × 200/8 × 0.96 = 192 GB/s：一条慢 rail 让整机带宽减半。",
))


_VERDICT = {"info": "pass", "warning": "warning", "critical": "critical"}


def _why_ch22_5(option: str) -> str:
    """Why verdict ``option`` is wrong: the peak busbw as a share of the expected, against the spec's lines."""
    peak = parse_nccl_tests(samples.sample("nccl_tests_all_reduce_degraded")).peak_busbw_gbs
    expected = Cluster.system("DGX-H100", 2).acceptance_busbw_gbs("all_reduce")
    share = peak / expected
    return (f"峰值 busbw {peak:.1f} GB/s 是期望 {expected:.0f} GB/s 的 {share:.1%}；"
            f"≥ 80 % 才通过，60 %–80 % 是警告，低于 60 % 是最重的一档")


register(Exercise(
    key="ch22.5",
    prompt=("Judgement: the course sample 'nccl_tests_all_reduce_degraded' against the 370 GB/s expectation and the "
            "default acceptance spec (pass >= 80 %, fail < 60 %). Verdict: 'pass', 'warning' or 'critical'?"),
    answer=lambda: _VERDICT[health.busbw_severity(
        parse_nccl_tests(samples.sample("nccl_tests_all_reduce_degraded")).peak_busbw_gbs,
        Cluster.system("DGX-H100", 2).acceptance_busbw_gbs("all_reduce"))],
    choices=("pass", "warning", "critical"),
    synonyms={"pass": ("info", "通过", "合格"), "warning": ("warn", "警告"), "critical": ("fail", "失败", "不合格", "严重")},
    kind="judgement",
    explain=_why_ch22_5,
    hints=("先做练习 3：峰值 busbw 是期望值的百分之几？", "≥ 80 % 通过，60 %–80 % 警告，< 60 % 严重。"),
    solution_text="峰值约 184 GB/s = 期望的 50 %，低于 60 % 的失败线：critical。不交付，先查哪条 rail 降速。",
))
