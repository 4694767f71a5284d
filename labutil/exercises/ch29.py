"""Chapter 29 exercises: MIG slice arithmetic, GPUs saved by sharing, the noisy neighbour."""

from .. import sharing
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

register(Exercise(
    key="ch29.1",
    prompt="One H100-80GB cut into seven 1g.10gb instances: what share of the whole GPU's SMs (MIG off) do the seven "
           "instances hold together? (in %)",
    answer=lambda: 100.0 * 7 * sharing.mig_profile("H100-80GB", "1g.10gb").sm / sharing.mig_gpu("H100-80GB").sm_full,
    kind="by_hand",
    unit="%", rtol=0.01,
    hints=("nvidia-smi mig -lgip 的 SM 列给出每个 1g.10gb 实例的 SM 数（H100 上是 16）。",
           "整卡关闭 MIG 时 H100 SXM5 有 132 个 SM；7 × 16 / 132 = ?"),
    solution_text="7 × 16 = 112 个 SM，112 / 132 = 84.8%：切成 7 份后有约 15% 的 SM 不属于任何实例，"
                  "显存也只剩 7 × 9.75 = 68.25 GiB（整卡 7g.80gb 为 79.25 GiB）。",
))

register(Exercise(
    key="ch29.2",
    prompt="20 small inference services on H100-80GB, each 20 req/s, 8 ms per request on a whole GPU (one request keeps "
           "30 % of the SMs busy), 8 GB of memory, P99 <= 100 ms. How many GPUs does MIG save against one dedicated "
           "GPU per service?",
    answer=lambda: sharing.gpus_saved(20, 20.0, 8.0, 8.0, 100.0, "mig", gpu="H100-80GB", gpu_fill=0.3),
    unit="张", rtol=0.01,
    hints=("先看独占：每个服务一张卡就满足 P99，共 20 张。",
           "1g.10gb 的 SM 占比 16/132 = 12.1% < 30%，单请求耗时变为 8 × 0.3 / 0.121 ≈ 19.8 ms；检查 M/D/1 的 P99 是否仍 ≤ 100 ms，"
           "再算 20 个实例要几张卡（每卡 7 个）。"),
    solution_text="每个服务放进一个 1g.10gb（9.75 GiB ≥ 8 GB），19.8 ms 服务时间、20 req/s（利用率 40%）下 P99 ≈ 80 ms ≤ 100 ms。"
                  "20 个实例 / 每卡 7 个 = 3 张卡，比独占的 20 张省 17 张。",
))

register(Exercise(
    key="ch29.3",
    prompt="Time-slicing: a quiet tenant (10 req/s, 8 ms per request) shares one GPU with a neighbour whose requests also "
           "take 8 ms. What is the quiet tenant's P99 (ms) when the neighbour sends 80 req/s?",
    answer=lambda: sharing.noisy_neighbour_p99_ms(80.0, qps=10.0, service_ms=8.0, neighbour_service_ms=8.0,
                                                  mode="time_slicing"),
    unit="ms", rtol=0.03,
    hints=("时间片下 GPU 一次只跑一个上下文：两个租户的请求进入同一个队列，总到达率 90 req/s，利用率 0.72。",
           "用 inference.p99_latency_ms(90, 1, 8) 求合并队列的 P99（M/D/1），减去平均服务时间再加上自己的 8 ms。"),
    solution_text="合并队列利用率 90 × 8 ms = 0.72，M/D/1 的 P99 约 69 ms；邻居空闲时只有 17 ms。"
                  "若放在 MIG 实例上，安静租户的 P99 与邻居负载无关。",
))


def _why_ch29_4(option: str) -> str:
    """Why sharing mode ``option`` needs more GPUs: both plans."""
    plans = {m: sharing.plan_sharing(20, 20.0, 8.0, 8.0, 100.0, m, gpu="H100-80GB", gpu_fill=0.3)
             for m in ("time_slicing", "mig")}
    mine = plans[option]
    return (f"{option} 要 {mine.gpus} 张卡（每张 {mine.tenants_per_gpu:g} 个租户，P99 {mine.p99_ms:.0f} ms），"
            f"另一种方式只要 {min(p.gpus for p in plans.values())} 张")


register(Exercise(
    key="ch29.4",
    prompt=("Judgement: the 20 services of ch29.2 (20 req/s each, 8 ms on a whole GPU using 30 % of the SMs, 8 GB, "
            "P99 <= 100 ms). Which needs fewer H100-80GB GPUs: 'time_slicing' or 'mig'?"),
    answer=lambda: min(("time_slicing", "mig"), key=lambda m: sharing.plan_sharing(
        20, 20.0, 8.0, 8.0, 100.0, m, gpu="H100-80GB", gpu_fill=0.3).gpus),
    choices=("time_slicing", "mig"),
    synonyms={"time_slicing": ("time-slicing", "时间片"), "mig": ("multi-instance gpu", "多实例")},
    kind="judgement",
    explain=_why_ch29_4,
    hints=("时间片：任一时刻只有一个租户在跑，一个请求只用 30 % 的 SM，其余 70 % 空着。",
           "MIG：每个 1g.10gb 实例有自己的 SM 和显存，租户真正并行。"),
    solution_text="time_slicing 需要 4 张卡，mig 只要 3 张（每张 7 个 1g.10gb 实例），而且 MIG 还隔离了显存和故障：选 mig。",
))
