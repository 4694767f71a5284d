"""Chapter 13 exercises: α-β costs of collectives, algbw vs busbw, ring vs tree vs hierarchical."""

from .. import comm, hardware
from ..cluster import Cluster
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

register(Exercise(
    key="ch13.1",
    prompt="Ring all_reduce of 1 GB (1e9 B) over 8 ranks, B = 50 GB/s per rank, alpha = 9.6 us: time in ms?",
    answer=lambda: comm.collective_time_s("all_reduce", 1e9, 8, 50.0, 9.6e-6, "ring") * 1e3,
    kind="by_hand",
    unit="ms", rtol=0.02,
    hints=("环形 all-reduce = reduce-scatter + all-gather，共 2(n−1) 步。",
           "t = 2(n−1)·α + 2(n−1)/n · S/B；S/B = 1e9 / 50e9 = 20 ms。"),
    solution_text=lambda: (lambda c: f"t = 2·7·9.6 µs + 2·7/8 × 20 ms = {c.latency_s * 1e3:.3f} ms + "
                                     f"{c.bandwidth_s * 1e3:.1f} ms ≈ {c.time_s * 1e3:.2f} ms：1 GB 的消息完全由带宽项决定。")(
        comm.collective_cost("all_reduce", 1e9, 8, 50.0, 9.6e-6, "ring")),
))

register(Exercise(
    key="ch13.2",
    prompt="all_reduce_perf on 16 ranks prints algbw = 180.71 GB/s for 8 GiB. What busbw does it print?",
    answer=lambda: comm.busbw_gbs("all_reduce", 180.71, 16),
    kind="by_hand",
    unit="GB/s", rtol=0.01,
    hints=("nccl-tests PERFORMANCE.md：all_reduce 的 busbw = algbw × 2(n−1)/n。",
           "n = 16 时系数为 2 × 15/16 = 1.875。"),
    solution_text=lambda: (f"busbw = 180.71 × {comm.busbw_factor('all_reduce', 16):.3f} ≈ "
                           f"{comm.busbw_gbs('all_reduce', 180.71, 16):.1f} GB/s（这正是一次公开的 2×8 H100 测试打印的值；"
                           "它高于那台机器的环上限，因为两节点上 NCCL 用了 tree / NVLS-Tree，见第 13 章第 5 节）。"),
))

register(Exercise(
    key="ch13.3",
    prompt="n = 64 ranks, B = 50 GB/s, alpha = 9.6 us: above which message size (MB, 1e6 B) is ring all_reduce "
           "faster than the double binary tree?",
    answer=lambda: comm.ring_tree_crossover_bytes(64, 50.0, 9.6e-6) / 1e6,
    unit="MB", rtol=0.02,
    hints=("令两式相等：2(n−1)α + 2(n−1)/n·S/B = 2⌈log2 n⌉α + 2·S/B。",
           "解得 S* = ((n−1) − ⌈log2 n⌉)·α·B·n。"),
    solution_text=lambda: (f"S* = (63 − 6) × 9.6e-6 s × 50e9 B/s × 64 ≈ {comm.ring_tree_crossover_bytes(64, 50.0, 9.6e-6):.3g} B ≈ "
                           f"{comm.ring_tree_crossover_bytes(64, 50.0, 9.6e-6) / 1e6:,.0f} MB：比这小的消息（包括 25 MiB 的 DDP 桶）"
                           "用 tree 更快。"),
))

def _ch13_4_solution() -> str:
    """Flat ring vs hierarchical for 1 GB on 2 x DGX H100, from the same calls as the answer."""
    nvl = hardware.gpu("H100-SXM").nvlink_gbs / 2
    flat = comm.collective_time_s("all_reduce", 1e9, 16, 50.0, algo="ring")
    hier = comm.collective_cost("all_reduce", 1e9, 16, 50.0, algo="hierarchical", gpus_per_node=8, intra_bw_gbs=nvl)
    return (f"平铺环 ≈ 2·15·9.6 µs + 1.875 × 20 ms ≈ {flat * 1e3:.1f} ms；分层 = 节点内 2·(7·3.4 µs + 7/8 × 1 GB / "
            f"{nvl:.0f} GB/s) ≈ {hier.intra_s * 1e3:.2f} ms + 跨节点 2·9.6 µs + 1/8 × 20 ms ≈ {hier.inter_s * 1e3:.2f} ms，"
            f"共 ≈ {hier.time_s * 1e3:.2f} ms，约快 {flat / hier.time_s:.1f} 倍。")


register(Exercise(
    key="ch13.4",
    prompt="2 x DGX H100 (16 GPUs, one 400G NIC per GPU = 50 GB/s, NVLink 450 GB/s per direction), 1 GB all_reduce: "
           "how many times faster is hierarchical than a flat ring over the NICs (alpha as the module defaults)?",
    answer=lambda: comm.collective_time_s("all_reduce", 1e9, 16, 50.0, algo="ring")
    / comm.collective_time_s("all_reduce", 1e9, 16, 50.0, algo="hierarchical", gpus_per_node=8,
                             intra_bw_gbs=hardware.gpu("H100-SXM").nvlink_gbs / 2),
    unit="倍", rtol=0.03,
    hints=("平铺环：每个 rank 经网卡发 2(n−1)/n·S。",
           "分层：节点内 reduce-scatter + all-gather 走 NVLink（各 7/8·S），跨节点只对 S/8 做 2 节点 all-reduce。"),
    solution_text=lambda: _ch13_4_solution(),
))


def _why_ch13_5(option: str) -> str:
    """Why algorithm ``option`` is slower for 64 KB: both alpha-beta times."""
    t = {a: comm.collective_time_s("all_reduce", 64e3, 64, 50.0, algo=a) for a in ("ring", "tree")}
    other = "tree" if option == "ring" else "ring"
    steps = {"ring": "2(n−1) = 126 步，每步都付一次 α", "tree": "约 2·log2(n) 步"}[option]
    return (f"按 α-β 模型它要 {t[option] * 1e3:.2f} ms（{steps}），另一种只要 {t[other] * 1e3:.2f} ms："
            f"64 KB 的传输项几乎为零，延迟项决定快慢")


register(Exercise(
    key="ch13.5",
    prompt=("Judgement: a 64 KB (64e3 B) all_reduce over 64 ranks, B = 50 GB/s per rank, alpha = 9.6 us. "
            "Which algorithm is faster under the alpha-beta model: 'ring' or 'tree'?"),
    answer=lambda: min(("ring", "tree"), key=lambda a: comm.collective_time_s("all_reduce", 64e3, 64, 50.0, algo=a)),
    choices=("ring", "tree"),
    synonyms={"ring": ("环", "环形"), "tree": ("double binary tree", "双二叉树", "树")},
    kind="judgement",
    explain=_why_ch13_5,
    hints=("小消息时延迟项占主导：ring 要走 2(n−1) 步，tree 只要约 2·log2(n) 步。",
           "练习 3 的交叉点约 1.75 GB；64 KB 远小于它。"),
    solution_text=lambda: (lambda r, t: f"ring：2 × 63 × 9.6 µs + 传输 ≈ {r * 1e3:.2f} ms；tree：约 {t * 1e3:.2f} ms。"
                                        f"tree 快约 {r / t:.0f} 倍——这就是 NCCL 对小消息选 Tree（或 LL 协议）的原因。")(
        comm.collective_time_s("all_reduce", 64e3, 64, 50.0, algo="ring"),
        comm.collective_time_s("all_reduce", 64e3, 64, 50.0, algo="tree")),
))


def _dgx2_acceptance() -> float:
    """2 x DGX H100, NCCL_ALGO=Ring, large all_reduce: min(NVLink ring, 8 NICs x achievable) (Cluster model)."""
    return float(Cluster.system("DGX-H100", 2).acceptance_busbw_gbs("all_reduce"))


register(Exercise(
    key="ch13.6",
    prompt=("2 x DGX H100 (8 x 400G NDR per node), all_reduce_perf with NCCL_ALGO=Ring, large messages: which busbw "
            "(GB/s) should the acceptance test expect? NCCL's ring inside a node reaches ~370 GB/s over NVLink, "
            "one 400G NIC ~48 GB/s."),
    answer=_dgx2_acceptance,
    kind="by_hand",
    unit="GB/s", rtol=0.02,
    hints=("每条环离开服务器时走一块网卡：8 条轨道的网卡带宽加在一起，才是一台服务器的跨节点上限。",
           "busbw ≤ min(NVLink 环, 每台网卡数 × 每块网卡可达带宽)。"),
    solution_text=lambda: (f"min(370, 8 × 48 = {Cluster.system('DGX-H100', 2).node_net_gbs:.0f}) = {_dgx2_acceptance():.0f} GB/s："
                           "瓶颈是 NVLink 环，不是网卡。两节点上 NCCL 默认的 NVLS-Tree 会更高，所以验收要固定 NCCL_ALGO=Ring。"),
))
