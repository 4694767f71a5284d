"""Chapter 25 exercises: KV cache, max batch, decode roofline, Erlang C, GPUs for a P99 target."""

from .. import hardware, inference
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))
# Solutions are generated from the model (issue 17: no hand-typed model numbers).
_KV70 = inference.kv_cache_gb("llama3-70b", 16, 8192)
_W8 = inference.weights_gb("llama3-8b")
_KV8_SEQ = inference.kv_bytes_per_token("llama3-8b") * 4096 / 1e9
_BUDGET8 = inference.kv_budget_gb("llama3-8b", "H100-SXM")
_TPOT = inference.decode_step("llama3-8b", "L40S", 1, 1024)
_L40S_BW = hardware.gpu("L40S").hbm_gbs
_SEED = dict(gpu="L40S", qps=1000, p99_ms=100, batch=1, model="vit_h_14_518")


_SEED_GF, _SEED_N = inference.cv_model(_SEED["model"])
_SEED_MS = inference.cv_batch_ms(_SEED["gpu"], 1, gflops_per_image=_SEED_GF, params=_SEED_N)


def _seed_plan(routing="random"):
    return inference.cv_cluster_plan(_SEED["gpu"], _SEED["qps"], _SEED["p99_ms"], _SEED["batch"], model=_SEED["model"],
                                     routing=routing)

register(Exercise(
    key="ch25.1",
    prompt="Llama-3-70B (80 layers, 8 KV heads, head_dim 128), FP16 KV cache, TP=1: KV cache of 16 sequences x 8192 tokens, in GB?",
    answer=lambda: inference.kv_cache_gb("llama3-70b", 16, 8192),
    kind="by_hand",
    unit="GB", rtol=0.02,
    hints=("每个 token 每层要存 K 和 V 两个向量，GQA 只存 kv_heads 个头：2 × layers × kv_heads × head_dim × 2 字节。",
           "每 token 2 × 80 × 8 × 128 × 2 = 327,680 B；再乘以 16 × 8192 个 token。"),
    solution_text=(f"2 × 80 × 8 × 128 × 2 B = {inference.kv_bytes_per_token('llama3-70b'):,.0f} B/token；× 16 × 8192 = "
                   f"{_KV70:.1f} GB——比 FP8 权重（{inference.weights_gb('llama3-70b', 'fp8'):.1f} GB）的一半还多，"
                   "长上下文服务的显存瓶颈在 KV cache 而不是权重。"),
))

register(Exercise(
    key="ch25.2",
    prompt=("Llama-3-8B in BF16 on one H100-SXM (80 GB), vLLM gpu-memory-utilization 0.9: how many 4096-token sequences "
            "fit at once? (GB = 1e9 B throughout, as in the catalog -- not the MiB that nvidia-smi prints)"),
    answer=lambda: inference.max_batch("llama3-8b", "H100-SXM", 4096),
    unit="条", rtol=0.02,
    hints=("可用于 KV 的显存 = 80 × 0.9 − 权重 (8.03e9 × 2 B)。",
           "每条序列 KV = 4096 × 2 × 32 × 8 × 128 × 2 B = 0.537 GB，向下取整。"),
    solution_text=(f"(72 − {_W8:.2f}) GB / {_KV8_SEQ:.3f} GB = {_BUDGET8 / _KV8_SEQ:.1f} → "
                   f"{inference.max_batch('llama3-8b', 'H100-SXM', 4096)} 条并发序列。"),
))

register(Exercise(
    key="ch25.3",
    prompt="Llama-3-8B BF16 on one L40S, batch 1, 1024 cached tokens: decode time per token (TPOT) in ms, "
           "with the course's 80 % of HBM bandwidth?",
    answer=lambda: inference.decode_step("llama3-8b", "L40S", 1, 1024).time_s * 1e3,
    unit="ms", rtol=0.03,
    hints=("batch 1 的 decode 是显存带宽受限：每生成一个 token 都要把全部权重读一遍。",
           "字节数 = 16.06 GB 权重 + 1024 × 131,072 B KV；除以 864 GB/s × 0.8。"),
    solution_text=(f"({_W8:.2f}e9 + {1024 * inference.kv_bytes_per_token('llama3-8b') / 1e9:.3f}e9) B / "
                   f"({_L40S_BW:g}e9 × 0.8 B/s) = {_TPOT.time_s * 1e3:.1f} ms/token；此时算力只用了 "
                   f"{100 * _TPOT.compute_s / _TPOT.time_s:.1f}%，换一张峰值更高但带宽相同的卡不会更快。"),
))

register(Exercise(
    key="ch25.4",
    prompt="Erlang C: 4 servers, offered load 3 Erlangs (utilisation 75 %). Probability (in percent) that an arriving "
           "request has to wait?",
    answer=lambda: 100 * inference.erlang_c(4, 3.0),
    kind="by_hand",
    unit="%", rtol=0.02,
    hints=("C(c, a) = [a^c/c! · c/(c−a)] / [Σ_{k<c} a^k/k! + a^c/c! · c/(c−a)]。",
           "a^4/4! × 4/(4−3) = 13.5；Σ_{k<4} 3^k/k! = 1 + 3 + 4.5 + 4.5 = 13。"),
    solution_text=(f"C = 13.5 / (13 + 13.5) = {inference.erlang_c(4, 3.0):.3f}，即 {100 * inference.erlang_c(4, 3.0):.1f} %："
                   "利用率只有 75% 时，也有一半的请求要排队。"),
))

register(Exercise(
    key="ch25.5",
    prompt="Seed case: 1,000 req/s, P99 <= 100 ms, model ViT-H/14 at 518 px on L40S, batch 1, random routing "
           "(K8s Service). How many GPUs does the queueing model say?",
    answer=lambda: _seed_plan().gpus,
    unit="张", rtol=0.01,
    params={"inference.cv_cluster_plan": {"gpu": "L40S", "qps": 1000, "p99_ms": 100, "batch": 1, "model": "vit_h_14_518"}},
    hints=(f"先算单张图的服务时间：{_SEED_GF:,.2f} GFLOP /({hardware.gpu('L40S').bf16_tflops:g} TFLOP/s × 0.4) + 0.5 ms ≈ "
           f"{_SEED_MS:.1f} ms。",
           "每个副本是一个 M/D/1 队列，到达率 1000/n；找 P99 ≤ 100 ms 的最小 n（用 inference.gpus_for_slo）。"),
    solution_text=(lambda p: f"单卡容量约 {p.replica_capacity_qps:.0f} req/s，「1000 ÷ {p.replica_capacity_qps:.0f}」给出 "
                   f"{p.naive_replicas} 张；但 {p.naive_replicas} 张时每张卡利用率 "
                   f"{100 * 1000 / (p.naive_replicas * p.replica_capacity_qps):.0f}%，P99 约 "
                   f"{inference.p99_latency_ms(1000, p.naive_replicas, _SEED_MS) / 1e3:.1f} 秒。"
                   f"满足 P99 ≤ 100 ms 需要 {p.gpus} 张（利用率约 {100 * p.utilization:.0f}%）。")(_seed_plan()),
))


def _why_ch25_6(option: str) -> str:
    """Why routing ``option`` needs more GPUs: both plans of the queueing model."""
    plans = {r: inference.cv_cluster_plan("L40S", 1000, 100, 1, model="vit_h_14_518", routing=r) for r in inference.ROUTINGS}
    mine = plans[option]
    return (f"{option} 要 {mine.gpus} 张卡才守住 P99 ≤ 100 ms（每卡利用率只能到 {mine.utilization:.0%}），"
            f"另一种路由只要 {min(p.gpus for p in plans.values())} 张")


register(Exercise(
    key="ch25.6",
    prompt=("Judgement: the seed case of ch25.5 (1,000 req/s, P99 <= 100 ms, ViT-H/14 at 518 px on L40S, batch 1). "
            "Which routing needs fewer GPUs: 'random' (a plain Kubernetes Service) or 'pooled' (one shared queue, "
            "least-loaded)?"),
    answer=lambda: min(inference.ROUTINGS, key=lambda r: _seed_plan(r).gpus),
    choices=tuple(inference.ROUTINGS),
    synonyms={"random": ("round-robin", "k8s service", "随机"), "pooled": ("least-loaded", "shared queue", "JSQ", "共享队列")},
    kind="judgement",
    explain=_why_ch25_6,
    params={"inference.cv_cluster_plan": {"gpu": "L40S", "qps": 1000, "p99_ms": 100, "batch": 1, "model": "vit_h_14_518"}},
    hints=("随机路由时每张卡是一个独立的 M/D/1 队列；共享队列是一个 M/D/c 队列。",
           "同样的利用率下，c 个服务台共享一个队列，排队的概率和尾延迟都小得多。"),
    solution_text=(lambda r, q: f"random 要 {r} 张卡，pooled 只要 {q} 张：同一个 SLO，换一个路由策略就省下 {r - q} 张 L40S"
                   f"（约 {100 * (r - q) / r:.0f} %）。")(_seed_plan("random").gpus, _seed_plan("pooled").gpus),
))


_DS_TOUCHED = inference.experts_touched("deepseek-v3", 32)

register(Exercise(
    key="ch25.7",
    prompt=("DeepSeek-V3: 256 routed experts per MoE layer, each token picks 8. A decode step of batch 32 on one replica "
            "(uniform, independent routing): how many distinct routed experts per layer does the step touch, on average?"),
    answer=lambda: inference.experts_touched("deepseek-v3", 32),
    kind="by_hand",
    unit="个", rtol=0.02,
    params={"inference.experts_touched": {"model": "deepseek-v3"}},
    hints=("一个 token 没选中某个专家的概率是 1 − 8/256；32 个 token 都没选中它的概率是 (1 − 8/256)^32。",
           "期望被碰到的专家数 = 256 × [1 − (1 − 8/256)^32]。"),
    solution_text=(f"256 × [1 − (248/256)^32] = 256 × (1 − {(1 - 8 / 256) ** 32:.3f}) = {_DS_TOUCHED:.0f} 个："
                   f"batch 只有 32 时一步就要读 {_DS_TOUCHED / 256:.0%} 的路由专家，每个专家却平均只分到 "
                   f"{32 * 8 / _DS_TOUCHED:.1f} 个 token——MoE 的 decode 要靠专家并行把每个专家的 batch 做大。"),
))
