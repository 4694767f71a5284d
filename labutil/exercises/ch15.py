"""Chapter 15 exercises: NCCL algorithms and protocols (NCCL 2.7.5 tuner model on the catalog DGX A100),
busbw of a ring."""

from .. import comm, nccl_tuning
from ..cluster import tuner_node
from . import Exercise, register

_N = tuner_node("DGX-A100")  # 24 channels x 230/24 GB/s (labutil/data/systems.toml)
_NODE = dict(n_channels=_N["n_channels"], speed_gbs=_N["speed_gbs"], inter_bus_gbs=_N["inter_bus_gbs"])
__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))


def _ring_simple_us(size_bytes: float) -> float:
    t = nccl_tuning.allreduce_table([size_bytes], 8, 1, intra="nvlink", **_NODE)
    return float(t.time_us["ring/Simple"][0])


def _ll_ratio() -> float:
    return float(nccl_tuning.allreduce_table([2**30], 8, 1, enabled=("ring/LL", "tree/LL"), **_NODE).best_time_us[0]
                 / nccl_tuning.allreduce_table([2**30], 8, 1, **_NODE).best_time_us[0])


_ALG = _N["busbw_gbs"] * 8 / 14
_T4 = nccl_tuning.allreduce_table([4096], 32, 4, **_NODE)


register(Exercise(
    key="ch15.1",
    prompt="NCCL 2.7.5 tuner, one DGX A100 (8 GPUs on NVSwitch, 24 channels x 230/24 GB/s = busBw 230 GB/s): "
           "predicted Ring/Simple all_reduce time for 1 GiB, in microseconds?",
    answer=lambda: _ring_simple_us(2**30),
    unit="us", rtol=0.02,
    hints=(f"busBw = 24 × {_N['speed_gbs']:.2f} = {_N['busbw_gbs']:.0f} GB/s；Ring 的 algbw = busBw × n / (2(n−1)) = "
           f"{_N['busbw_gbs']:.0f} × 8/14。",
           "延迟 = baseLat 8.4 µs + 2(n−1) × NVLink 上 Ring/Simple 的 hwLat 3.4 µs；时间 = 延迟 + S/(1000·algbw) µs。"),
    solution_text=(f"algbw = {_N['busbw_gbs']:.0f} × 8/14 = {_ALG:.1f} GB/s；延迟 = 8.4 + 14 × 3.4 = 56 µs；"
                   f"t = 56 + 1,073,741,824 / (1000 × {_ALG:.1f}) ≈ {_ring_simple_us(2**30):,.0f} µs。"),
))

register(Exercise(
    key="ch15.2",
    prompt="Same node: with NCCL_PROTO=LL forced, how many times slower than the default choice is a 1 GiB "
           "all_reduce predicted to be? (time ratio)",
    answer=_ll_ratio,
    unit="倍", rtol=0.03,
    hints=("LL 每 8 字节只携带 4 字节数据（另 4 字节是标志位），tuning.cc 把 Ring/LL 的带宽乘以 1/4。",
           "大消息时延迟可以忽略，比值 ≈ Simple 的 algbw / LL 的 algbw。"),
    solution_text=(f"默认选 Ring/Simple（{_ALG:.1f} GB/s algbw）；强制 LL 后最好的是 Ring/LL（{_ALG / 4:.1f} GB/s），"
                   f"1 GiB 时比值 ≈ {_ll_ratio():.1f}：LL 是为小消息的低延迟设计的，不能留在生产脚本里。"),
))

register(Exercise(
    key="ch15.3",
    prompt="An all_reduce of 256 MiB over 16 GPUs takes 2.2 ms. What busbw (GB/s) does nccl-tests print?",
    answer=lambda: comm.busbw_gbs("all_reduce", comm.algbw_gbs(256 * 2**20, 2.2e-3), 16),
    kind="by_hand",
    unit="GB/s", rtol=0.02,
    hints=("algbw = S / t，S 用字节、结果用 GB/s（1e9）。", "all_reduce 的 busbw = algbw × 2(n−1)/n。"),
    solution_text="algbw = 268,435,456 / 2.2e-3 / 1e9 = 122.0 GB/s；busbw = 122.0 × 30/16 = 228.8 GB/s。",
))


def _why_ch15_4(option: str) -> str:
    """Why ``option`` is not NCCL's pick for 4 KiB: its predicted time against the fastest combination."""
    table = nccl_tuning.allreduce_table([4096], 32, 4, **_NODE)
    mine = float(table.time_us[option][0])
    best = float(table.best_time_us[0])
    return (f"{option} 预计 {mine:.1f} µs（其中延迟 {table.latency_us[option]:.1f} µs），"
            f"最快的组合只要 {best:.1f} µs：4 KiB 时传输时间可以忽略，延迟最小的组合胜出")


register(Exercise(
    key="ch15.4",
    prompt="NCCL 2.7.5 tuner, 4 DGX A100 nodes (24 channels x 230/24 GB/s each): which algorithm/protocol does it "
           "pick for a 4 KiB all_reduce? (answer like 'ring/Simple')",
    answer=lambda: nccl_tuning.allreduce_table([4096], 32, 4, **_NODE).choice[0],
    choices=tuple(f"{a}/{p}" for a in nccl_tuning.ALGOS for p in nccl_tuning.PROTOS),
    synonyms={f"{a}/{p}": (f"{zh}/{p}", f"{a} {p}", f"{a.capitalize()}/{p}")
              for a, zh in (("tree", "树"), ("ring", "环")) for p in nccl_tuning.PROTOS if a in nccl_tuning.ALGOS},
    kind="judgement",
    explain=_why_ch15_4,
    hints=("小消息时延迟项占主导：比较各组合的 latency。",
           "多机时 Tree 的延迟随 log2(节点数) 增长，Ring 随 2(n−1) 增长。"),
    solution_text=(f"{_T4.choice[0]}：4 KiB 时传输时间可以忽略，Tree/LL 的延迟（约 {_T4.latency_us['tree/LL']:.1f} µs）"
                   f"远低于 Ring 的任何协议（≥ {min(_T4.latency_us[k] for k in _T4.latency_us if k.startswith('ring')):.0f} µs）。"),
))
