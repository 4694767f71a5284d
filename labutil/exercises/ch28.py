"""Chapter 28 exercises: how much a degraded network explains, stragglers, blind restarts, search cost, evidence scores."""

from .. import troubleshoot as T
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

register(Exercise(
    key="ch28.1",
    prompt=("16 GPUs, 0.6 s compute per step, 60 GB all-reduced per step, no overlap. Expected inter-node busbw "
            "370 GB/s (2x DGX H100, labutil.cluster), measured 184 GB/s (one rail at 200G). By how many percent "
            "does the step time grow?"),
    answer=lambda: T.network_slowdown(0.6, 60e9, 16, 370.0, 184.0)["slowdown"] * 100,
    unit="%", rtol=0.03,
    hints=("all-reduce 时间 t = S × 2(n−1)/n ÷ busbw：先分别用 370 与 184 GB/s 算出两个通信时间。",
           "步时 = 计算 + 通信（不重叠）；增幅 = 新步时 / 旧步时 − 1。"),
    solution_text=("2(n−1)/n = 1.875；t_exp = 60e9 × 1.875 / 370e9 = 0.304 s，t_meas = 60e9 × 1.875 / 184e9 = 0.611 s；"
                   "步时 0.904 s → 1.211 s，增加约 34.0 %。"),
))

register(Exercise(
    key="ch28.2",
    prompt=("A 1,024-GPU synchronous job, healthy step 1.0 s of which 0.2 s exposed communication. One GPU is "
            "thermally throttled and computes 1.3x slower. How many GPU-equivalents does the job lose?"),
    answer=lambda: T.straggler_slowdown(1024, 1.3, step_s=1.0, comm_s=0.2)["lost_gpu_per_hour"],
    unit="张 GPU", rtol=0.03,
    hints=("同步训练每一步都等最慢的 rank：步时 = 1.3 × 计算 + 通信。",
           "损失的 GPU 当量 = N × (1 − 健康步时 / 变慢后的步时)。"),
    solution_text="慢步时 = 0.8 × 1.3 + 0.2 = 1.24 s；损失 = 1024 × (1 − 1/1.24) ≈ 198 张 GPU 当量——一张卡拖慢了整个任务。",
))

register(Exercise(
    key="ch28.3",
    prompt=("A 2,048-GPU job on a node with a bad GPU is restarted blindly 3 times (restart 600 s, checkpoint "
            "every 1,800 s) before anyone looks at dmesg. GPU-hours lost by the 3 repeat failures?"),
    answer=lambda: T.blind_restart_cost(2048, 600, 1800, 3)["blind_gpu_h"],
    unit="GPU·h", rtol=0.02,
    hints=("每次重复故障损失 = 重启时间 + 平均半个检查点间隔的重算，乘以全部 GPU。",
           "3 × 2048 × (600 + 900) s ÷ 3600。"),
    solution_text="3 × 2048 × 1500 s / 3600 = 2,560 GPU·h；而先花 10 分钟看 dmesg、隔离节点，只多花 2048 × 1/6 h ≈ 341 GPU·h 的等待。",
))

register(Exercise(
    key="ch28.4",
    prompt=("10 checks of equal cost in a uniformly random order, exactly 2 of them fail. Expected number of "
            "checks until the first failing one?"),
    answer=lambda: T.expected_random_checks(10, 2),
    unit="项", rtol=0.01,
    hints=("随机顺序下，第一个失败项的期望位置是 (N+1)/(k+1)。",
           "N = 10，k = 2。"),
    solution_text="(10 + 1) / (2 + 1) = 3.67 项。",
))

register(Exercise(
    key="ch28.5",
    prompt=("triage() combines independent signals of one layer as S = 1 - prod(1 - w). A Lustre 'Connection ... was "
            "lost' line (w = 0.85) and a 'task blocked for more than 120 seconds' line (w = 0.5) both point at "
            "storage. What is the storage layer's score?"),
    answer=lambda: T.signal_score([0.85, 0.5]),
    unit="(0-1)", rtol=0.01,
    kind="by_hand",
    hints=("把每条证据看成一个独立的探测器：两条都「没说中」的概率是 (1 − 0.85) × (1 − 0.5)。",
           "S = 1 − 0.15 × 0.5。"),
    solution_text="S = 1 − (1 − 0.85)(1 − 0.5) = 1 − 0.075 = 0.925：两条独立证据比任何一条单独都更可信。",
))


def _why_ch28_6(option: str) -> str:
    """Why layer ``option`` is not the root cause: its evidence score against the top layer's."""
    d = T.triage_walkthrough("lustre_after_oom")
    mine = d.scores.get(option, 0.0)
    if mine == 0:
        return f"日志里没有任何指向 {option} 层的证据（得分 0），最高的一层得分 {max(d.scores.values()):.2f}"
    return (f"{option} 层的证据得分只有 {mine:.2f}（最高的一层 {max(d.scores.values()):.2f}）：Lustre 断连发生在同一节点的"
            f" OOM kill 之后，是后果而不是原因")


register(Exercise(
    key="ch28.6",
    prompt=("Walkthrough 'lustre_after_oom' (aws/aws-parallelcluster #2701): the kernel log shows 'Out of memory: Killed "
            "process ... (python)', then 'Lustre: ... Connection to ... MDT0000 ... was lost'. In which layer does the "
            "root cause lie? (network / storage / gpu / software)"),
    answer=lambda: T.triage_walkthrough("lustre_after_oom").first_failing_layer,
    choices=tuple(T.LAYERS),
    synonyms={"network": ("网络",), "storage": ("存储", "lustre"), "gpu": ("GPU",), "software": ("软件", "软件栈")},
    kind="judgement",
    explain=_why_ch28_6,
    hints=("两条内核日志谁先发生？一个内存被耗尽、进程被 OOM killer 杀掉的节点，还能及时回应 Lustre 服务器的 ping 吗？",
           "连接丢失是后果：根因是作业把主机内存用光了（软件 / 作业配置），不是存储服务器。"),
    solution_text=("software：OOM kill 在前，Lustre 断连在后且发生在同一节点；内存耗尽的节点无法回应服务器而被断开。"
                   "triage 把同一片段里 OOM 之后的断连降为「后果」，软件层 0.75 > 存储层 0.43。"),
))


_CH28_7_NOTE = "after the switch firmware upgrade busbw halved on two racks"


def _why_ch28_7(option: str) -> str:
    """Why layer ``option`` is not triage's verdict for the note: the matched signature and the layer scores."""
    d = T.triage(_CH28_7_NOTE)
    sigs = list(d.matched_signatures or ())
    top = sigs[0]["id"] if sigs else None
    mine = d.scores.get(option, 0.0)
    best = max(d.scores.values()) if d.scores else 0.0
    what = f"笔记匹配的故障签名是 {top}，" if top else ""
    return (f"{what}{option} 层的证据得分 {mine:.2f}，最高的一层得分 {best:.2f}：笔记里变化的是升级了固件的那台设备，"
            f"症状是 busbw 减半，两者都不属于 {option} 层")


register(Exercise(
    key="ch28.7",
    kind="judgement",
    prompt=("An engineer's note, no log attached: 'after the switch firmware upgrade busbw halved on two racks'. "
            "Which layer does labutil.troubleshoot.triage put it in? (network / storage / gpu / software)"),
    choices=("network", "storage", "gpu", "software"),
    synonyms={"network": ("网络", "fabric", "交换机"), "storage": ("存储",), "gpu": ("GPU", "显卡"),
              "software": ("软件", "软件栈")},
    answer=lambda: T.triage(_CH28_7_NOTE).first_failing_layer,
    explain=_why_ch28_7,
    hints=("笔记里有三个概念：变化的部件（交换机）、变化（固件升级）和症状（busbw 减半）：它们属于哪一层？",
           "看 d.matched_signatures：匹配到的故障签名 switch_change_regression 的 layer 字段。"),
    solution_text=("network：笔记完整匹配故障签名 switch_change_regression（交换机 + 固件升级 + busbw + 减半），置信度约 0.65，"
                   "低于工具输出给出的结论；下一步先在升级的机柜内外做节点对 all_reduce_perf。"),
))
