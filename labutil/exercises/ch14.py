"""Chapter 14 exercises: gradient volume, seed 003's utilisation, required bandwidth, scaling.

Every answer and every number in a hint or solution text is computed by ``labutil.dp`` /
``labutil.cluster`` (no explorer module involved).
"""

import math
from functools import lru_cache

from .. import comm, compute, dp, hardware, models
from ..cluster import Cluster
from . import Exercise, register
from . import exercise as _exercise

_H800 = hardware.gpu("H800-SXM")


@lru_cache(maxsize=None)
def _seed003():
    """Seed 003 (ch14.2/14.3): Llama-2-7B on 4 x 8 H800, one 25 GbE port per server, through the model."""
    p = float(models.transformer("llama2-7b").params())
    c = Cluster.seed003()
    cs = float(compute.dense_compute_time_s(p, 16384, _H800.bf16_tflops, 0.45))
    nb = math.ceil(comm.gradient_bytes(p, 2) / comm.DDP_BUCKET_BYTES)
    bucket = c.collective_cost("all_reduce", comm.gradient_bytes(p, 2) / nb, 32)
    sync = float(c.dp_sync_time_s(p, 32, bucket_bytes=comm.DDP_BUCKET_BYTES))
    busbw = float(c.expected_busbw_gbs(algo="ring"))
    only_bw = 2 * 31 / 32 * comm.gradient_bytes(p, 2) / (busbw * 1e9)
    req70 = float(dp.required_bandwidth_gbps(p, 32, compute_s=cs, target_utilisation=0.70, cluster=c))
    return {"p": p, "cs": cs, "nb": nb, "lat_ms": 1e3 * float(bucket.latency_s), "algo": str(bucket.choice),
            "sync": sync, "busbw": busbw, "only_bw": only_bw, "util": cs / (cs + sync),
            "util_bw_only": cs / (cs + only_bw), "req70": req70}


@lru_cache(maxsize=None)
def _ring_1024():
    """ch14.4: 1,024 H800 (128 servers x 8 x 400G), 25 MiB buckets, NCCL_ALGO=Ring vs NCCL's default."""
    c = Cluster.system("HGX-H800", 128)
    p = float(models.transformer("llama2-7b").params())
    nb = math.ceil(comm.gradient_bytes(p, 2) / comm.DDP_BUCKET_BYTES)
    size = comm.gradient_bytes(p, 2) / nb
    ring = c.collective_cost("all_reduce", size, 1024, "ring")
    simple = c.collective_cost("all_reduce", size, 1024, "ring", protocol="Simple")
    auto = c.collective_cost("all_reduce", size, 1024)
    cs = float(compute.dense_compute_time_s(p, 16384, _H800.bf16_tflops, 0.45))
    return {"nb": nb, "ring_ms": 1e3 * float(ring.time_s), "ring_choice": str(ring.choice),
            "simple_lat_ms": 1e3 * float(simple.latency_s), "auto_ms": 1e3 * float(auto.time_s),
            "auto_choice": str(auto.choice), "cs": cs, "sync": nb * float(ring.time_s)}


_S = _seed003()
_R = _ring_1024()
__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

register(Exercise(
    key="ch14.1",
    prompt="Llama-2-7B (catalog preset), bf16 gradients: gradient bytes per optimizer step, in GB (1e9 B)?",
    answer=lambda: comm.gradient_bytes(models.transformer("llama2-7b").params(), 2) / 1e9,
    kind="by_hand",
    unit="GB", rtol=0.02,
    hints=("通信量 = 参数量 × 每个梯度的字节数。", "bf16 每个梯度 2 字节；参数量用 models.transformer('llama2-7b').params()。"),
    solution_text=lambda: (f"{_S['p'] / 1e9:.3f}e9 × 2 B ≈ {comm.gradient_bytes(_S['p'], 2) / 1e9:.2f} GB；环形 all-reduce "
                           "每卡还要再乘 2(n−1)/n 才是它发出的字节数。若框架在 FP32 里 all-reduce（DDP + autocast、Megatron 的 "
                           f"BF16 训练默认如此），是 {comm.gradient_bytes(_S['p'], 4) / 1e9:.2f} GB。"),
))

register(Exercise(
    key="ch14.2",
    prompt="Seed 003: Llama-2-7B on 32 x H800 (4 servers), one 25 GbE port per server, 16,384 tokens/GPU/step, "
           "MFU 0.45, no overlap, DDP 25 MiB buckets, NCCL's algorithm choice: GPU utilisation in %? "
           "(The busbw-only estimate of §9, which leaves out the per-bucket latency, is within the tolerance.)",
    answer=lambda: 100 * float(dp.dp_bandwidth("llama2-7b", "H800-SXM", 16384, 0.45, 32, 25, 1, 0.0).step.utilisation),
    unit="%", rtol=0.03,
    hints=("先算计算时间 6·N·T/(峰值×MFU)，再算梯度同步时间：NCCL 的环每经过一台服务器都要穿过它唯一的 25 GbE 口。",
           f"busbw 上限 = 25/8 × 0.96 = {_S['busbw']:.1f} GB/s（整台服务器的网卡）；同步 ≈ 2(n−1)/n × 13.48 GB ÷ "
           f"{_S['busbw']:.1f} GB/s，再加 {_S['nb']} 个桶各自的延迟。"),
    solution_text=(f"计算 ≈ {_S['cs']:.2f} s；同步的带宽项 ≈ 2·31/32 × 13.48 GB ÷ {_S['busbw']:.1f} GB/s ≈ {_S['only_bw']:.2f} s，"
                   f"加 {_S['nb']} 个桶 × {_S['lat_ms']:.2f} ms 延迟（{_S['algo']}：节点内 NVLink 每跳 3.4 µs，只有 6 跳走网络）"
                   f"≈ {_S['nb'] * _S['lat_ms'] / 1e3:.2f} s，共 ≈ {_S['sync']:.2f} s；利用率 = {_S['cs']:.2f} / "
                   f"{_S['cs'] + _S['sync']:.2f} ≈ {100 * _S['util']:.1f}%。只算带宽项得 {100 * _S['util_bw_only']:.1f}%，"
                   "差别就是那些桶的延迟。"),
))

register(Exercise(
    key="ch14.3",
    prompt="Same job as ch14.2: network bandwidth per server (Gbit/s) needed for 70 % GPU utilisation without overlap?",
    answer=lambda: dp.required_bandwidth_gbps(
        models.transformer("llama2-7b").params(), 32,
        compute_s=compute.dense_compute_time_s(models.transformer("llama2-7b").params(), 16384, _H800.bf16_tflops, 0.45),
        target_utilisation=0.70, cluster=Cluster.seed003()),
    unit="Gbit/s", rtol=0.03,
    hints=("允许的暴露通信 = 计算 × (1/u − 1)。",
           "这个带宽下 NCCL 对每个 25 MiB 桶选 NVLS-Tree（4 台之间一棵树，节点内 NVLink SHARP，每桶延迟约 0.1 ms）："
           "扣掉延迟，剩下的时间要装下约 2 × 梯度字节 ÷ 节点网卡。"),
    solution_text=(f"预算 = {_S['cs']:.2f} × (1/0.7 − 1) ≈ {_S['cs'] * (1 / 0.7 - 1):.2f} s；在这个预算里放下 {_S['nb']} 个桶的"
                   f" all-reduce，模型解出每台约 {_S['req70']:.0f} Gbit/s（节点网卡的实际带宽约 {_S['req70'] / 8 * 0.96:.0f} GB/s）："
                   "也就是至少一块 400G 网卡，而不是 25 GbE。"),
))

register(Exercise(
    key="ch14.4",
    prompt="Llama-2-7B, H800 servers with 8 x 400G IB, 16,384 tokens/GPU/step, MFU 0.45, overlap 2/3, NCCL_ALGO=Ring "
           "(NCCL still picks the best ring protocol per bucket) with DDP 25 MiB buckets: scaling efficiency at "
           "1,024 GPUs, in %?",
    answer=lambda: 100 * float(dp.dp_bandwidth("llama2-7b", "H800-SXM", 16384, 0.45, 1024, 400, 8, 2 / 3,
                                               "NCCL_ALGO=Ring").efficiency_grid[list(dp.N_GPUS_GRID).index(1024)]),
    unit="%", rtol=0.03,
    hints=("1,024 个 rank 的环每个桶要走 2 × 1,023 步：其中只有 2 × (128 − 1) 步跨节点（网络每跳 14 µs），"
           "其余在节点内走 NVLink（Simple 每跳 3.4 µs，LL128 1.9 µs，LL 0.6 µs）。",
           f"NCCL_ALGO=Ring 仍由 NCCL 按桶选协议：这个规模下每个桶选 {_R['ring_choice']}，约 {_R['ring_ms']:.1f} ms；"
           f"{_R['nb']} 个桶相乘就是同步时间，再和可隐藏的 2/3 × 计算时间比。"),
    solution_text=(f"每桶 {_R['ring_choice']} ≈ {_R['ring_ms']:.2f} ms（只用 Simple 时光延迟就有 {_R['simple_lat_ms']:.1f} ms），"
                   f"同步 ≈ {_R['nb']} × {_R['ring_ms']:.2f} ms ≈ {_R['sync']:.2f} s；计算 {_R['cs']:.2f} s，可隐藏 "
                   f"{2 / 3 * _R['cs']:.2f} s，效率 ≈ {_R['cs']:.2f} / ({_R['cs']:.2f} + {_R['sync'] - 2 / 3 * _R['cs']:.2f}) "
                   f"≈ {100 * _R['cs'] / (_R['cs'] + max(0.0, _R['sync'] - 2 / 3 * _R['cs'])):.0f}%。NCCL 默认会选 "
                   f"{_R['auto_choice']}（每桶约 {_R['auto_ms']:.2f} ms），同步全部藏进反向传播，效率 100%。"),
))


def _ch14_required_gbps() -> float:
    return float(_exercise("ch14.3").expected())


def _why_ch14_5(option: str) -> str:
    """Why ``option`` Gbit/s is not the answer: below the required bandwidth, or not the smallest above it."""
    need = _ch14_required_gbps()
    if float(option) < need:
        return f"{option} Gbit/s 低于所需的约 {need:.0f} Gbit/s（练习 3），达不到 70 % 利用率"
    return f"{option} Gbit/s 够用（所需约 {need:.0f} Gbit/s），但低一档也够，题目要最小的档位"


def _ch14_5_solution() -> str:
    """The required bandwidth, the tiers below it and the smallest tier above, from the model."""
    need = _ch14_required_gbps()
    tiers = ("100", "200", "400", "800")
    pick = next(c for c in tiers if float(c) >= need)
    below = [c for c in tiers if float(c) < need]
    return (f"所需约 {need:.0f} Gbit/s（练习 3），{' / '.join(below) + 'G 不够，' if below else ''}最小的可行档位是 "
            f"{pick} Gbit/s（每台服务器），是原来 25 GbE 的 {float(pick) / 25:.0f} 倍——或者用计算/通信重叠把需求压下来。")


register(Exercise(
    key="ch14.5",
    prompt=("Judgement: the seed-003 job of ch14.2/14.3 must reach 70 % GPU utilisation without overlap. Smallest "
            "per-server network among '100', '200', '400' and '800' Gbit/s that does it?"),
    answer=lambda: next(c for c in ("100", "200", "400", "800") if float(c) >= _ch14_required_gbps()),
    choices=("100", "200", "400", "800"),
    synonyms={"100": ("100G", "100 Gbit/s"), "200": ("200G", "200 Gbit/s"), "400": ("400G", "400 Gbit/s"),
              "800": ("800G", "800 Gbit/s")},
    kind="judgement",
    explain=_why_ch14_5,
    hints=("先做练习 3：所需带宽约几百 Gbit/s。", "选不小于所需带宽的最小档位。"),
    solution_text=lambda: _ch14_5_solution(),
))
