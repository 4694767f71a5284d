"""Chapter 16 exercises: storage architecture — read demand, read/write separation, tier sizing.

ch16.2 and ch16.4 share one scenario (``_shared``): the same pool, the same 0.38 HDD mixed efficiency
the chapter uses, only the prefetch differs; hints and solutions are generated from the model.
"""

from .. import dataloading as dl
from .. import storage
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))
#: The shared-pool scenario of ch16 §5, exercise 2 and exercise 4 (review 2026-12-03: ch16.4 once used
#: mixed efficiency 1.0 while its prompt and the chapter used the HDD's 0.38).
SHARED = dict(read_gbs=60.0, pool_gbs=100.0, checkpoint_gb=2450.0, interval_s=1800.0, read_weight=0.5)


def _shared(prefetch_s: float):
    return storage.read_write_interference(SHARED["read_gbs"], SHARED["pool_gbs"], SHARED["checkpoint_gb"],
                                           SHARED["interval_s"], prefetch_s=prefetch_s, read_weight=SHARED["read_weight"],
                                           mixed_efficiency=storage.mixed_efficiency())


def _prefetch_to_hide() -> float:
    """Seconds of prefetch that absorb the whole burst: (R - r) T_b / R."""
    i = _shared(0.0)
    return i.shared_stall_s

register(Exercise(
    key="ch16.1",
    prompt=("1,024 A100 train ResNet-50 at 2,470 img/s each from ImageNet-style JPEGs of 107.7 kB, one file per "
            "image. Aggregate read bandwidth the storage must deliver, in GB/s?"),
    answer=lambda: storage.data_read_requirements(1024 * dl.RESNET50_A100_IMG_S, dl.IMAGENET_MEAN_JPEG_BYTES).read_gbs,
    kind="by_hand",
    unit="GB/s", rtol=0.02,
    hints=("读带宽 = 每秒样本数 × 每个样本的字节数。",
           "1,024 × 2,470 = 2,529,280 张/s；乘以 107.7e3 B 再除以 1e9。"),
    solution_text="2,529,280 img/s × 107.7 kB = 272.4 GB/s；同时每秒要打开 253 万个文件（元数据压力，见第 18 章）。",
))

register(Exercise(
    key="ch16.2",
    prompt=("Shared pool of 100 GB/s; training reads need 60 GB/s; a 2,450 GB checkpoint is written every 30 min; "
            "readers get half of the pool during the burst, which runs at the HDD random/sequential efficiency at "
            "1 MiB requests (storage.mixed_efficiency(), about 38 %); the loader prefetches 2 s. GPU stall per "
            "checkpoint, in seconds?"),
    answer=lambda: _shared(2.0).shared_stall_s,
    unit="s", rtol=0.03,
    hints=("1 MiB 随机请求：定位 1/168 s = 5.95 ms + 传输 1 MiB / 285 MB/s = 3.68 ms，只剩顺序速率的 38 %；"
           "突发期间池子只剩 B' = 0.382 × 100 = 38.2 GB/s，读得到 r = min(60, 0.5 × 38.2) = 19.1 GB/s，写得到其余 19.1 GB/s。",
           "突发时长 T_b = 2450 / 19.1；缓冲被抽干的数据量 (60 − 19.1)·T_b，减去预取的 2 s × 60 GB/s，再除以 60。"),
    solution_text=(lambda i: f"T_b = 2450/{i.shared_read_gbs:.1f} = {i.shared_burst_s:.0f} s；缺口 "
                   f"{60 - i.shared_read_gbs:.1f} × {i.shared_burst_s:.0f} = {(60 - i.shared_read_gbs) * i.shared_burst_s:,.0f} GB，"
                   f"预取挡掉 120 GB，停顿 ≈ {i.shared_stall_s:.1f} s。读写分离后（训练数据走独立的热层），停顿为 0。")(_shared(2.0)),
))

register(Exercise(
    key="ch16.3",
    prompt=("Checkpoint tier built from the 'nvme-pfs-2u' building block (storage.toml). It must absorb 500 GB/s "
            "of checkpoint writes. How many servers (bandwidth-driven)?"),
    answer=lambda: storage.plan_tiers(100.0, 2.45, 100.0, 500.0).tier("checkpoint").servers,
    unit="台", rtol=0.0, atol=0.5,
    hints=("一台的写带宽 = min(24 块盘 × 3.8 GB/s × 0.8, 2 × 400 Gb/s ÷ 8)。",
           "24 × 3.8 × 0.8 = 72.96 GB/s < 100 GB/s 网卡上限，所以是盘限速；500 / 72.96 向上取整。"),
    solution_text="每台 72.96 GB/s（RAID-6 8+2：每 10 块盘的带宽里有 2 块用来写校验，用户数据只占 80%），500/72.96 = 6.85 → 7 台。",
))


def _why_ch16_4(option: str) -> str:
    """Why ``option`` is wrong: the burst, the reads' share of the pool and the stall the model computes."""
    r = _shared(10.0)  # the same scenario as the answer (ch16 §5, HDD mixed efficiency)
    # the synonyms of both options are single characters (会/是/否): the reason avoids them
    return (f"按模型：突发持续 {r.shared_burst_s:.0f} s，期间读只拿到 {r.shared_read_gbs:.0f} GB/s"
            f"（需要 {r.read_gbs:.0f} GB/s）；预取 10 s 时每次突发停顿 {r.shared_stall_s:.1f} s")


register(Exercise(
    key="ch16.4",
    prompt=("Judgement: the shared pool of ch16.2 (100 GB/s, reads need 60 GB/s, 2,450 GB checkpoint every 30 min, "
            "readers get half the pool during the burst), but each reader now prefetches 10 s of data instead of 2 s. "
            "Do the reads still stall during the burst? ('yes' or 'no')"),
    answer=lambda: "yes" if _shared(10.0).shared_stall_s > 0 else "no",
    choices=("yes", "no"), synonyms={"yes": ("stall", "会停顿", "会"), "no": ("no stall", "不会停顿", "不会", "否")},
    kind="judgement",
    explain=_why_ch16_4,
    hints=(f"用练习 2 的同一个模型（HDD 混合效率 {storage.mixed_efficiency():.2f}）：突发期间读只拿到 "
           f"{_shared(10.0).shared_read_gbs:.1f} GB/s，比需要的 60 GB/s 少一大截，突发持续约 {_shared(10.0).shared_burst_s:.0f} s。",
           "预取缓冲能顶住缺口就不停顿：比较缓冲里的数据（10 s × 60 GB/s）和突发期间累积的缺口。"),
    solution_text=(f"yes：预取 2 s 时每次突发停顿约 {_shared(2.0).shared_stall_s:.1f} s，预取 10 s 仍停顿约 "
                   f"{_shared(10.0).shared_stall_s:.1f} s——缺口是 {(60 - _shared(10.0).shared_read_gbs) * _shared(10.0).shared_burst_s:,.0f} GB，"
                   f"10 s 的缓冲只有 600 GB。要完全挡住需要约 {_prefetch_to_hide():.0f} s 的预取；"
                   "根本的办法是把检查点写到独立的存储层（读写分离）。"),
))
