"""Chapter 17 exercises: checkpoint size, write time, asynchronous saves, interval."""

from .. import reliability, storage
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))
_MTBF_S, _SYNC_S, _RESTART_S = 3 * 3600.0, 98.0, 600.0  # ch17.3 / ch17.4 scenario (ch17 §5)


def _goodput(minutes: str) -> float:
    return reliability.goodput(86400.0 / _MTBF_S, _RESTART_S, float(minutes) * 60.0, _SYNC_S)

register(Exercise(
    key="ch17.1",
    prompt="Full mixed-precision Adam checkpoint (fp32 master + m + v + bf16 weights) of a 70B-parameter model, in GB?",
    answer=lambda: storage.checkpoint_gb(70e9),
    kind="by_hand",
    unit="GB", rtol=0.02,
    hints=("混合精度 Adam：fp32 主权重 4 B + m 4 B + v 4 B + bf16 权重 2 B。",
           "70e9 × 14 B / 1e9。"),
    solution_text=(f"70e9 × 14 B = {storage.checkpoint_gb(70e9):.0f} GB（去掉 bf16 副本是 "
                   f"{storage.checkpoint_gb(70e9, include_model_weights=False):.0f} GB；只导出 bf16 权重是 "
                   f"{storage.checkpoint_gb(70e9, optimizer='none'):.0f} GB）。"),
))

register(Exercise(
    key="ch17.2",
    prompt=("That 980 GB checkpoint is written by 256 writers, each limited to 2 GB/s, to a file system "
            "with 400 GB/s aggregate write bandwidth. Write time in seconds?"),
    answer=lambda: storage.checkpoint_write_s(980.0, 400.0, n_writers=256, per_writer_gbs=2.0),
    unit="s", rtol=0.02,
    hints=("有效带宽 = min(文件系统聚合带宽, 写入者数 × 单写入者上限)。",
           "min(400, 256 × 2 = 512) = 400 GB/s。"),
    solution_text=(f"有效带宽 {storage.effective_write_gbs(400.0, 256, 2.0):.0f} GB/s（文件系统饱和，再加写入者也没用），"
                   f"980/400 = {storage.checkpoint_write_s(980.0, 400.0, n_writers=256, per_writer_gbs=2.0):.2f} s。"),
))

register(Exercise(
    key="ch17.3",
    prompt=("Synchronous saves block for 98 s; the job MTBF is 3 h. Young's optimal checkpoint interval, "
            "in minutes?"),
    answer=lambda: reliability.young_daly_interval_s(98.0, 3 * 3600.0) / 60.0,
    kind="by_hand",
    unit="min", rtol=0.02,
    hints=("Young 公式：τ* = √(2 δ M)，δ 是一次保存的阻塞时间，M 是作业 MTBF（都用秒）。",
           "√(2 × 98 × 10,800) s，再除以 60。"),
    solution_text=(f"τ* = √(2 × 98 × 10,800) = {reliability.young_daly_interval_s(98.0, 3 * 3600.0):,.0f} s ≈ "
                   f"{reliability.young_daly_interval_s(98.0, 3 * 3600.0) / 60:.1f} min（精确模型的最优点是 Daly 的 "
                   f"{reliability.daly_interval_s(98.0, 3 * 3600.0) / 60:.1f} min）。异步保存把 δ 压到 0.24 s 后，τ* 只有 "
                   f"{reliability.young_daly_interval_s(0.24, 3 * 3600.0) / 60:.1f} min。"),
))


def _why_ch17_4(option: str) -> str:
    """Why interval ``option`` is not the best: its goodput against the best of the three and Young's interval."""
    g = {m: reliability.goodput(24 / 3, 600.0, float(m) * 60, 98.0) for m in ("10", "30", "60")}
    young_min = reliability.young_daly_interval_s(98.0, 3 * 3600.0) / 60
    side = "太频繁，保存开销大" if float(option) < young_min else "太稀疏，故障后重算的多"
    return (f"每 {option} min 保存一次 goodput 为 {g[option]:.1%}，三档里最高的是 {max(g.values()):.1%}；"
            f"Young 最优间隔约 {young_min:.0f} min，{option} min {side}")


register(Exercise(
    key="ch17.4",
    prompt=("Judgement: synchronous saves block for 98 s, job MTBF 3 h, restart 10 min. Checkpoint every '10', '30' or "
            "'60' minutes: which interval gives the highest goodput?"),
    answer=lambda: max(("10", "30", "60"), key=_goodput),
    choices=("10", "30", "60"),
    # with and without the space: the choice normaliser turns a space into '/', so "30分钟" is its own spelling
    synonyms={"10": ("10 min", "10 分钟", "10分钟", "10min"), "30": ("30 min", "30 分钟", "30分钟", "30min", "半小时", "0.5 h"),
              "60": ("60 min", "60 分钟", "60分钟", "60min", "1 h", "1h", "一小时", "1 小时", "1小时")},
    kind="judgement",
    explain=_why_ch17_4,
    hints=("太频繁：保存本身的开销大；太稀疏：故障后要重算的工作多。",
           "Young 最优间隔 √(2δM) = √(2 × 98 × 10,800) s，看哪个档位离它最近。"),
    solution_text=(f"Young 间隔 ≈ {reliability.young_daly_interval_s(_SYNC_S, _MTBF_S):,.0f} s ≈ "
                   f"{reliability.young_daly_interval_s(_SYNC_S, _MTBF_S) / 60:.0f} min；goodput（reliability.goodput，含 10 分钟重启）："
                   + "，".join(f"{m} min ≈ {100 * _goodput(m):.1f} %" for m in ("10", "30", "60"))
                   + f"，选 {max(('10', '30', '60'), key=_goodput)} min。曲线在最优点附近很平，偏一点没关系，偏一倍就开始吃亏。"),
))
