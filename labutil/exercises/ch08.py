"""Chapter 8 exercises: pipeline bubble, communication volume, layout search."""

from .. import parallel, steptime
from ..cluster import Cluster
from ..models import transformer
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

register(Exercise(
    key="ch08.1",
    prompt="1F1B pipeline with pp = 16 stages and 64 micro-batches per step: bubble as a share of the TOTAL "
           "step time, in percent?",
    answer=lambda: 100 * parallel.pipeline_bubble_fraction(16, 64),
    kind="by_hand",
    unit="%", rtol=0.02,
    hints=("气泡相对理想时间是 (p−1)/m（Narayanan 2021 §2.2.1）。",
           "占总时间的比例 = (p−1)/(m + p − 1) = 15/79。"),
    solution_text="15/64 = 23.4% 的理想时间，即 15/79 = 19.0% 的总时间；交错调度 v = 2 可降到 15/143 = 10.5%。",
))

def _ch08_2_solution() -> str:
    v = parallel.comm_volume_gb(transformer("gpt3-175b"), parallel.Layout(16, 8, 8, 1, 1536))
    return (f"4 × 2 × 7/8 × (2 × 2048 × 12288 B) × 12 × 96 ≈ {v.tp_gb:.0f} GB/步：每卡的 TP 流量 ∝ (t−1)·L·B/N，"
            "与 pp 无关。这就是 TP 必须留在 NVLink 域内的原因（NVLink 约 1 s，一块 400 Gb/s 网卡要约 8 s）。")


register(Exercise(
    key="ch08.2",
    prompt="GPT-3 175B, layout dp=16 tp=8 pp=8, micro-batch 1, global batch 1536: bytes each GPU sends per step "
           "for tensor-parallel all-reduces, in GB?",
    answer=lambda: parallel.comm_volume_gb(transformer("gpt3-175b"), parallel.Layout(16, 8, 8, 1, 1536)).tp_gb,
    unit="GB", rtol=0.02,
    hints=("每层每个 micro-batch 4 次 all-reduce（前向 2、反向 2），消息 2·s·b·h 字节。",
           "ring all-reduce 每卡发送 2(t−1)/t 倍消息；每个 stage 96/8 = 12 层，m = 1536/16 = 96 个 micro-batch。"),
    solution_text=_ch08_2_solution(),
))


def _near_best_gpt3():
    return steptime.search_layouts(transformer("gpt3-175b"), 1024, "H100-SXM", 1536).near_best(0.05)


def _ch08_3_solution() -> str:
    near = _near_best_gpt3()
    best = near[0]
    rows = "；".join(f"{e.layout.label()}（{e.step_s:.2f} s）" for e in near)
    tps = sorted({e.layout.tp for e in near})
    return (f"模型给出 {len(near)} 个布局与最快者（{best.layout.label()}，单步 {best.step_s:.2f} s、MFU {best.mfu:.0%}）"
            f"相差 5% 以内：{rows}。它们的 tp 取 {'、'.join(map(str, tps))}，都不超过 8；模型误差约 ±10%，"
            "组内的差别分不出谁更快，选择看显存余量、流水线深度和工程复杂度。")


register(Exercise(
    key="ch08.3",
    prompt="Search all layouts of gpt3-175b on 1,024 H100-SXM, global batch 1536 (labutil defaults). The model is "
           "good to about ±10 %, so layouts within 5 % of the fastest are equally good: how many layouts are "
           "within 5 % of the fastest (SearchResult.near_best(0.05))?",
    answer=lambda: float(len(_near_best_gpt3())),
    unit="个", rtol=0.0, atol=0.5,
    hints=("r = steptime.search_layouts(transformer('gpt3-175b'), 1024, 'H100-SXM', 1536)；看 r.near_best(0.05)。",
           "near_best 返回单步时间 ≤ 最快者 × 1.05、且放得下的全部布局；数一数它的长度。"),
    solution_text=_ch08_3_solution(),
))


def _seed003_estimate():
    return steptime.estimate_layout(transformer("llama2-7b"), parallel.Layout(32, 1, 1, 1, 64, zero_stage=1), 32,
                                    "H800-SXM", cluster=Cluster.seed003(n_nodes=4))


def _ch08_4_solution() -> str:
    e = _seed003_estimate()
    return (f"梯度同步约 {e.dp_comm_s:.1f} s（NCCL 先在节点内用 NVLink 归约，跨节点只有一个 25 GbE 口），计算约 {e.compute_s:.1f} s："
            f"GPU 忙碌比例约 {100 * e.compute_s / e.step_s:.0f}%，远低于种子课程说的“利用率不足 30%”——25 GbE 对 8×H800 训练是数量级上的错配。")


register(Exercise(
    key="ch08.4",
    prompt="Pure data parallelism of llama2-7b on 32 H800 GPUs (4 servers) with ZeRO-1, micro-batch 1, global batch 64, "
           "on seed 003's servers with ONE 25 GbE port each (labutil.cluster.Cluster.seed003(n_nodes=4)): share of "
           "the step the GPUs compute, in percent?",
    answer=lambda: 100 * (lambda e: e.compute_s / e.step_s)(_seed003_estimate()),
    unit="%", rtol=0.03,
    hints=("用 steptime.estimate_layout(..., cluster=Cluster.seed003(n_nodes=4))，看 compute_s / step_s。",
           "梯度 2 B × 6.74e9 = 13.5 GB；节点内走 NVLink，节点间 4 台服务器只靠各自一个 25 GbE 口（约 3 GB/s）。"),
    solution_text=_ch08_4_solution(),
))


_CH08_LAYOUTS = {"dp16-tp8-pp8": (16, 8, 8), "dp8-tp16-pp8": (8, 16, 8), "dp2-tp8-pp64": (2, 8, 64),
                 "dp1024-tp1-pp1": (1024, 1, 1)}


def _valid_gpt3_layout() -> str:
    """The one layout of _CH08_LAYOUTS that parallel.check_layout accepts (gpt3-175b, 1,024 GPUs, mb 1, gb 1536)."""
    spec = transformer("gpt3-175b")
    valid = []
    for name, (dp, tp, pp) in _CH08_LAYOUTS.items():
        try:
            parallel.check_layout(spec, parallel.Layout(dp=dp, tp=tp, pp=pp, micro_batch=1, global_batch=1536), 1024)
        except ValueError:
            continue
        valid.append(name)
    if len(valid) != 1:
        raise ValueError(f"ch08.5 expects exactly one valid layout; got {valid}")
    return valid[0]


def _why_ch08_5(option: str) -> str:
    """Why layout ``option`` is not valid: the rule parallel.check_layout says it breaks."""
    dp, tp, pp = _CH08_LAYOUTS[option]
    try:
        parallel.check_layout(transformer("gpt3-175b"),
                              parallel.Layout(dp=dp, tp=tp, pp=pp, micro_batch=1, global_batch=1536), 1024)
    except ValueError as exc:
        return f"parallel.check_layout 拒绝它：{exc}"
    return "它本身合法，但题目里只有一个布局合法，另一个才是模型给出的答案"


register(Exercise(
    key="ch08.5",
    prompt=("Judgement: GPT-3 175B (96 layers) on 1,024 GPUs, 8 per NVLink node, micro-batch 1, global batch 1536. "
            "Which layout is valid: 'dp16-tp8-pp8', 'dp8-tp16-pp8', 'dp2-tp8-pp64' or 'dp1024-tp1-pp1'?"),
    answer=_valid_gpt3_layout,
    choices=tuple(_CH08_LAYOUTS),
    kind="judgement",
    explain=_why_ch08_5,
    hints=("三条规则：dp·tp·pp = GPU 数；tp 不能跨出 NVLink 节点（≤ 8）；pp 要整除层数。",
           "还有一条：全局批量要能被 dp × micro-batch 整除。"),
    solution_text=("dp16-tp8-pp8 合法。dp8-tp16-pp8：tp=16 跨出了 8 卡的 NVLink 域；dp2-tp8-pp64：64 不整除 96 层；"
                   "dp1024-tp1-pp1：1536 不能被 1024 整除（而且 175B 的模型状态放不进一张卡）。"),
))
