"""Chapter 24 exercises: DeepSpeed batch identity, DDP buckets, ZeRO-3 traffic, scaling from logs."""

from .. import compute, frameworks, parallel
from ..parsers import megatron as megatron_log
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

register(Exercise(
    key="ch24.1",
    prompt="GPT-3 175B on 1,024 GPUs with tp = 4, pp = 32, micro-batch 2 and global batch 1536: what "
           "gradient_accumulation_steps must ds_config.json contain?",
    answer=lambda: frameworks.deepspeed_config(parallel.Layout(8, 4, 32, 2, 1536, zero_stage=1))[
        "gradient_accumulation_steps"],
    kind="by_hand",
    unit="步", rtol=0.0, atol=0.5,
    hints=("先求数据并行度 dp = 1024 / (tp × pp)。",
           "train_batch_size = micro × GA × dp，所以 GA = 1536 / (2 × 8)。"),
    solution_text="dp = 1024 / (4 × 32) = 8，GA = 1536 / (2 × 8) = 96；写成 95 或 100 时 DeepSpeed 启动即报 batch 不一致。",
))

register(Exercise(
    key="ch24.2",
    prompt="PyTorch DDP, a 1.3B-parameter model with fp32 gradients and the default buckets (1 MiB first "
           "bucket, then 25 MiB): how many buckets does one backward pass all-reduce?",
    answer=lambda: frameworks.ddp_bucket_plan(1.3e9).n_buckets,
    unit="个", rtol=0.0, atol=0.5,
    hints=("梯度字节数 = 1.3e9 × 4 B = 5.2 GB；1 MiB = 1,048,576 B。",
           "1 个 1 MiB 首桶 + ⌈(5.2e9 − 1 MiB) / 25 MiB⌉ 个桶。"),
    solution_text="(5.2e9 − 1,048,576) / 26,214,400 = 198.3 → 199 个 25 MiB 桶（最后一个不满）+ 1 个首桶 = 200 个。",
))

register(Exercise(
    key="ch24.3",
    prompt="A 7B model trained with FSDP FULL_SHARD (ZeRO-3) on 64 GPUs, 16-bit gradients: bytes each GPU "
           "sends per step, in GB (ring collectives)?",
    answer=lambda: {r["fsdp"]: r for r in frameworks.fsdp_vs_zero_table(7e9, 64, 8)}["FULL_SHARD"]["sent_gb_per_gpu"],
    unit="GB", rtol=0.02,
    hints=("DDP：ring all-reduce 每卡发送 2(n−1)/n × 2Ψ 字节。",
           "ZeRO-3 多一次参数 all-gather：3Ψ 对 2Ψ，即 DDP 的 1.5 倍（ZeRO §7）。"),
    solution_text="DDP：2 × 63/64 × 14 GB = 27.6 GB；ZeRO-3：1.5 × 27.6 = 41.3 GB/步。显存省了 98%，通信却多了 50%。",
))

register(Exercise(
    key="ch24.4",
    prompt="From the two sample Megatron-LM logs of this chapter (512 GPUs and 1,024 GPUs, same global batch): "
           "scaling efficiency of the 1,024-GPU run relative to the 512-GPU run, in percent?",
    answer=lambda: 100 * frameworks.scaling_efficiency_from_logs(
        frameworks.run_throughput(frameworks.MEGATRON_LOG_SAMPLE_512, 512, 2048),
        frameworks.run_throughput(megatron_log.MEGATRON_LOG_SAMPLE, 1024, 2048)),
    unit="%", rtol=0.01,
    hints=("每个 run 取 elapsed time per iteration 的中位数，samples/s = 1536 / 步时。",
           "η = (samples/s ÷ GPU 数)₁₀₂₄ / (samples/s ÷ GPU 数)₅₁₂。"),
    solution_text="512 卡：1536 / 13.933 s = 110.2 samples/s → 0.2153 /GPU；1024 卡：1536 / 7.189 s = 213.7 → 0.2087 /GPU；"
                  "η = 96.9%。",
))

register(Exercise(
    key="ch24.5",
    prompt="The 1,024-GPU sample log reports a median 460.4 TFLOP/s per H100 SXM. What MFU is that, in percent?",
    answer=lambda: 100 * frameworks.run_throughput(megatron_log.MEGATRON_LOG_SAMPLE, 1024, 2048).mfu,
    unit="%", rtol=0.01,
    hints=("MFU = 实际模型 TFLOP/s ÷ 稠密峰值。", "H100 SXM 的 BF16 稠密峰值是 989.4 TFLOP/s（目录）。"),
    solution_text=lambda: (f"460.4 / 989.4 = 46.5%，落在公开大规模训练 {compute.PUBLISHED_MFU_RANGE[0]:.0%}–"
                           f"{compute.PUBLISHED_MFU_RANGE[1]:.0%} 的 MFU 范围里（第 4 章）。"),
))


def _fsdp_choice(budget_gb: float = 40.0) -> str:
    rows = [r for r in frameworks.fsdp_vs_zero_table(7e9, 64) if r["states_gb"] <= budget_gb]
    return min(rows, key=lambda r: (r["sent_gb_per_gpu"], -r["states_gb"]))["fsdp"]


def _why_ch24_6(option: str) -> str:
    """Why strategy ``option`` is not the answer: its model states against 40 GB, or what it sends per GPU."""
    rows = {r["fsdp"]: r for r in frameworks.fsdp_vs_zero_table(7e9, 64)}
    r = rows[option]
    if r["states_gb"] > 40.0:
        return f"{option} 每卡模型状态 {r['states_gb']:.1f} GB，超过 40 GB 的上限"
    least = min(x["sent_gb_per_gpu"] for x in rows.values() if x["states_gb"] <= 40.0)
    return (f"{option} 放得下（{r['states_gb']:.2f} GB），但每卡每步要发 {r['sent_gb_per_gpu']:.1f} GB，"
            f"放得下的策略里最少只要 {least:.1f} GB（前向不再 all-gather 权重）")


register(Exercise(
    key="ch24.6",
    prompt=("Judgement: a 7B model with Adam on 64 GPUs (8 per node). Model states may use at most 40 GB per GPU. "
            "Which FSDP sharding strategy fits AND sends the least per GPU: 'NO_SHARD', 'SHARD_GRAD_OP', "
            "'FULL_SHARD' or 'HYBRID_SHARD'?"),
    answer=_fsdp_choice,
    choices=("NO_SHARD", "SHARD_GRAD_OP", "FULL_SHARD", "HYBRID_SHARD"),
    synonyms={"NO_SHARD": ("DDP", "ZeRO-0"), "SHARD_GRAD_OP": ("ZeRO-2",), "FULL_SHARD": ("ZeRO-3",),
              "HYBRID_SHARD": ("HSDP", "ZeRO++")},
    kind="judgement",
    explain=_why_ch24_6,
    params={"frameworks.fsdp_vs_zero_table": {"params": 7e9, "dp": 64, "gpus_per_node": 8}},
    hints=("先排除放不下的：不切分时 16 B/参数 × 7e9 = 112 GB。",
           "剩下的里比较通信量：ZeRO-3 前向还要多一次 all-gather（1.5 倍）。"),
    solution_text=("NO_SHARD 要 112 GB，放不下；SHARD_GRAD_OP（ZeRO-2）15.5 GB、通信量和 DDP 一样（每卡约 27.6 GB）；"
                   "FULL_SHARD 1.75 GB 但通信 1.5 倍（41.3 GB）；HYBRID_SHARD 14 GB、39.8 GB。选 SHARD_GRAD_OP。"),
))
