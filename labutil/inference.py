"""Inference serving: KV cache, weights by precision, decode/prefill roofline, P99 under load.

Taught in ch25 (推理集群). Every function validates its input with ``labutil.validate`` and
accepts numpy arrays for the parameters a learner sweeps (batch, context length, QPS).

Formulas and their sources
--------------------------
- KV cache per token and GPU: ``2 · layers · kv_heads · head_dim · bytes / tp`` (K and V for
  every layer). Kwon et al. 2023, "Efficient Memory Management for Large Language Model Serving
  with PagedAttention" (vLLM, SOSP'23), §3: for OPT-13B/LLaMA-13B "the KV cache of a single token
  demands 800 KB of space, calculated as 2 (key and value vectors) × 5120 (hidden state size) ×
  40 (number of layers) × 2 (bytes per FP16)". With grouped-query attention only the
  ``kv_heads`` KV heads are cached (Ainslie et al. 2023, "GQA: Training Generalized Multi-Query
  Transformer Models from Multi-Head Checkpoints", §2.2). Under tensor parallelism each GPU holds
  ``kv_heads / tp`` heads; when ``tp > kv_heads`` the heads are replicated, one per GPU (vLLM's
  ``get_num_kv_heads``: ``max(1, total_num_kv_heads // tp_size)``).
- Multi-head latent attention (MLA, DeepSeek-V2/V3) caches one compressed latent of
  ``kv_lora_rank`` plus a decoupled RoPE key of ``rope_head_dim`` per token and layer, shared by
  all heads: ``layers · (kv_lora_rank + rope_head_dim) · bytes`` (DeepSeek-AI 2024, "DeepSeek-V2",
  §2.1.3 and Table 1: (d_c + d_h^R)·l elements; DeepSeek-V3 config.json: kv_lora_rank 512,
  qk_rope_head_dim 64, 61 layers -> 70,272 B/token in BF16). The latent is one "KV head": tensor
  parallelism does not split it, every TP rank holds the whole latent (SGLang documentation "DP,
  DPA and SGLang DP Router": MLA models "only have one KV head", TP duplicates the KV cache, hence
  data-parallel attention).
- Weights: ``params · bytes_per_param / (tp · pp)`` with 2 B (BF16/FP16), 1 B (FP8, INT8), 0.5 B (INT4);
  pipeline parallelism splits the layers into ``pp`` stages (vLLM distributed-serving docs: TP =
  GPUs per node, PP = nodes).
  INT8/INT4 here are weight-only schemes (W8A16, W4A16: GPTQ, Frantar et al. 2023; AWQ, Lin et
  al. 2024): weights are de-quantised to BF16 for the matmul, so compute runs at the BF16 rate;
  FP8 is W8A8 and runs at the FP8 tensor-core rate (requires a GPU with FP8 in the catalog).
  Group-wise scales (e.g. one FP16 scale per 128 weights, +3 %) are not counted.
- Decode step (one new token for each of ``batch`` sequences):
  ``t = max(bytes / (HBM_bw · bw_eff), FLOPs / (peak · compute_eff)) + t_TP`` with bytes = the
  weights (read once per step, shared by the batch) + the KV cache of every sequence, and FLOPs =
  ``batch · (2 · N_matmul + 4 · layers · hidden · context)`` (2 FLOPs per weight per token,
  Kaplan et al. 2020 Table 1; attention QK^T and AV 2·2·hidden·context per layer). At small
  batch the byte term dominates: decode is memory-bandwidth-bound (Pope et al. 2022, "Efficiently
  Scaling Transformer Inference", §2 and §3.1: "during generation ... the cost of loading weights
  from memory dominates at small batch sizes"); the roofline is Williams et al. 2009.
- Mixture of experts (Mixtral, DeepSeek-V3): a decode token multiplies only the ACTIVE parameters
  (attention, dense MLPs, shared experts, its top-k routed experts), so the FLOPs use
  ``active_params``; but the bytes a step reads are the non-expert weights plus every expert that
  at least one of the ``batch`` tokens routes to. With uniform, independent top-k routing (what
  DeepSeek-V3's auxiliary-loss-free load balancing aims at, report §2.1.2) the expected number of
  distinct experts touched per MoE layer is ``E · (1 − (1 − k/E)^batch)`` (each expert is missed by
  one token with probability 1 − k/E): batch 1 reads k experts, a large batch reads nearly all E.
  That is why MoE decode wants large per-GPU batches and expert parallelism (DeepSeek-V3 report
  §3.4.2: decode on 320 GPUs, EP320, one expert per GPU).
- Prefill of a prompt of P tokens: compute-bound, FLOPs = ``batch · (2 · N_matmul · P + 2 ·
  layers · hidden · P²)`` (causal attention does half of the 4·l·h·P² non-causal count).
- Tensor parallelism: 2 all-reduces of ``batch · tokens · hidden · 2`` bytes per layer
  (Shoeybi et al. 2019, Megatron-LM §3: one after attention, one after the MLP), on the critical
  path, timed with ``labutil.comm.collective_time_s`` (ring, NVLink per-direction bandwidth and
  NCCL's NVLink step latency; PCIe Gen4 x16 when the catalog GPU has no NVLink).
- Queueing: c identical servers fed by Poisson arrivals (a shared queue, as with least-loaded
  routing). Erlang C ``C(c, a)`` (probability of waiting, a = λ/μ offered load) via the Erlang B
  recursion ``B(k) = a·B(k−1) / (k + a·B(k−1))``, ``C = c·B / (c − a·(1 − B))`` (Kleinrock 1975,
  "Queueing Systems Vol. 1", §3.5; Gross & Harris, "Fundamentals of Queueing Theory", §2.3).
  The waiting-time tail ``P(W > t) = C · exp(−(cμ − λ)·t / k)`` is exact for M/M/c with k = 1;
  for general arrival/service variability k = (ca² + cs²)/2, the Allen–Cunneen approximation
  (Allen 1990, "Probability, Statistics, and Queueing Theory", §6.7; Whitt 1993, "Approximations
  for the GI/G/m queue"). Deterministic GPU service (M/D/c) is cs² = 0. Dynamic batching of b
  requests turns Poisson request arrivals into Erlang-b batch arrivals (ca² = 1/b).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import comm, hardware, models, storage, validate
from .models import TransformerSpec
from .parsers._common import ParseError
from .units import BYTES_PER_GB, FLOPS_PER_TFLOP

__all__ = ["WEIGHT_BYTES", "COMPUTE_PRECISION", "PRECISIONS", "VLLM_GPU_MEMORY_UTILIZATION", "DEFAULT_BW_EFF",
           "DEFAULT_COMPUTE_EFF", "PCIE4_X16_GBS", "RESNET50_GMACS", "RESNET50_GFLOPS", "RESNET50_PARAMS",
           "CV_MODELS", "SEED_CV_P99_MS", "SEED_CV_QPS", "weight_bytes_per_param", "kv_heads_per_gpu",
           "kv_bytes_per_token", "kv_cache_gb", "weights_gb", "is_mla", "experts_touched", "decode_weight_bytes", "kv_budget_gb", "max_batch", "matmul_params",
           "tp_cluster", "tp_comm_s", "StepTime", "decode_step", "prefill", "ReplicaPerf", "llm_replica",
           "throughput_curve", "static_batching_utilization", "erlang_b", "erlang_c", "ROUTINGS", "p99_latency_ms",
           "SloPlan", "gpus_for_slo", "max_qps_per_replica", "cv_batch_ms", "cv_model", "cv_cluster_plan",
           "llm_gpus_for_slo", "PerfAnalyzerRow", "PerfAnalyzerParseError", "parse_perf_analyzer",
           "SAMPLE_PERF_ANALYZER", "SAMPLE_NVIDIA_SMI_SERVING"]

#: Bytes per weight of each serving precision (see module docstring).
WEIGHT_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}
#: Tensor-core rate used for the matmuls: weight-only INT8/INT4 de-quantise to BF16.
COMPUTE_PRECISION = {"bf16": "bf16", "fp16": "bf16", "fp8": "fp8", "int8": "bf16", "int4": "bf16"}
PRECISIONS = tuple(WEIGHT_BYTES)

#: vLLM's default ``--gpu-memory-utilization`` (vLLM engine arguments documentation): the
#: fraction of GPU memory the engine may use for weights, activations and the KV cache.
VLLM_GPU_MEMORY_UTILIZATION = 0.9

#: Course assumptions (stated, adjustable in every call): decode kernels move bytes at 80 % of
#: the datasheet HBM bandwidth; prefill matmuls run at 50 % of the dense tensor peak. Measure
#: your own GPU in lab04 (GEMM TFLOP/s and memory bandwidth) and pass the measured fractions.
DEFAULT_BW_EFF = 0.8
DEFAULT_COMPUTE_EFF = 0.5

#: PCIe Gen4 x16 payload rate per direction (PCI-SIG; ``labutil.storage.pcie_gbs``): the TP
#: link of catalog GPUs without NVLink (L4, L40S).
PCIE4_X16_GBS = float(storage.pcie_gbs(4, 16))

#: ResNet-50 (He et al. 2016, Table 1: 3.8e9 multiply-adds; torchvision model card
#: ResNet50_Weights.IMAGENET1K_V1: "GFLOPS 4.09", which counts one multiply-add as one op,
#: and 25.6 M parameters). 2 FLOPs per multiply-add.
RESNET50_GMACS = 4.09
RESNET50_GFLOPS = 2 * RESNET50_GMACS
RESNET50_PARAMS = 25.6e6

#: Vision models for the CV service: (G multiply-adds per image, parameters, source). torchvision
#: model cards ("GFLOPS" there counts one multiply-add as one op; 2 FLOPs each here).
CV_MODELS = {
    "resnet50": (RESNET50_GMACS, RESNET50_PARAMS,
                 "He et al. 2016 Table 1; torchvision ResNet50_Weights.IMAGENET1K_V1: 4.09 GFLOPS, 25.6 M params, 224 px"),
    "vit_l_16": (61.55, 304.3e6,
                 "Dosovitskiy et al. 2021 (ViT-L/16); torchvision ViT_L_16_Weights.IMAGENET1K_V1: 61.55 GFLOPS, 304.3 M params, 224 px"),
    "vit_h_14_518": (1016.72, 633.5e6,
                     "torchvision ViT_H_14_Weights.IMAGENET1K_SWAG_E2E_V1 (Singh et al. 2022, SWAG): 1016.72 GFLOPS, 633.5 M params, 518 px"),
}

#: The seed's CV/multimodal inference target (seed 003, 场景二): P99 < 100 ms, > 1000 QPS.
SEED_CV_P99_MS = 100.0
SEED_CV_QPS = 1000.0


_out = validate.scalar_or_array  # Python float for 0-d results, the array otherwise

def _spec(model) -> TransformerSpec:
    if isinstance(model, TransformerSpec):
        return model
    if isinstance(model, str):
        return models.transformer(model)
    raise ValueError(f"model must be a TransformerSpec or a preset name from {models.transformer_names()}; "
                     f"got {model!r}")


def _pp(spec: TransformerSpec, pp) -> int:
    pp = validate.integer("pp", pp, lo=1, hi=spec.layers)
    return pp


def _gpu(gpu) -> hardware.GPU:
    return gpu if isinstance(gpu, hardware.GPU) else hardware.gpu(gpu)


def _tp(spec: TransformerSpec, tp) -> int:
    tp = validate.integer("tp", tp, lo=1, hi=64)
    if spec.heads % tp:
        raise ValueError(f"tp must divide the {spec.heads} attention heads of {spec.name}; got tp={tp}")
    if tp <= spec.kv_heads and spec.kv_heads % tp:
        raise ValueError(f"tp must divide the {spec.kv_heads} KV heads of {spec.name}; got tp={tp}")
    if tp > spec.kv_heads and tp % spec.kv_heads:
        raise ValueError(f"tp > kv_heads must be a multiple of the {spec.kv_heads} KV heads of {spec.name}; got tp={tp}")
    return tp


def weight_bytes_per_param(precision: str) -> float:
    """Bytes per weight: bf16/fp16 2, fp8/int8 1, int4 0.5."""
    validate.choice("precision", precision, PRECISIONS)
    return WEIGHT_BYTES[precision]


# -- memory -----------------------------------------------------------------------------------
def is_mla(model) -> bool:
    """True for multi-head latent attention (DeepSeek-V2/V3: ``kv_lora_rank`` > 0)."""
    return _spec(model).kv_lora_rank > 0


def kv_heads_per_gpu(model, tp=1) -> int:
    """KV heads each GPU caches: kv_heads / tp, or 1 (replicated) when tp > kv_heads.

    MLA caches one latent shared by every head: 1 on every TP rank (see module docstring)."""
    spec = _spec(model)
    tp = _tp(spec, tp)
    if spec.kv_lora_rank > 0:
        return 1
    return max(1, spec.kv_heads // tp)


def kv_bytes_per_token(model, bytes_per_elem=2, tp=1, pp=1) -> float:
    """KV-cache bytes per token on one GPU: 2 · layers/pp · kv_heads/tp · head_dim · bytes.

    Llama-2-13B in FP16: 2 · 40 · 40 · 128 · 2 = 819,200 B ≈ the "800 KB" of the vLLM paper §3.
    MLA (DeepSeek-V3): layers/pp · (kv_lora_rank + rope_head_dim) · bytes, the same on every TP rank
    (61 · 576 · 2 = 70,272 B in BF16). ``pp`` pipeline stages each cache their own layers.
    """
    spec = _spec(model)
    b = validate.positive("bytes_per_elem", bytes_per_elem)
    pp = _pp(spec, pp)
    layers = spec.layers / pp
    if spec.kv_lora_rank > 0:
        _tp(spec, tp)
        return _out(layers * (spec.kv_lora_rank + spec.rope_head_dim) * np.asarray(b))
    return _out(2.0 * layers * kv_heads_per_gpu(spec, tp) * spec.head_dim * np.asarray(b))


def kv_cache_gb(spec, batch, seq_len, bytes_per_elem=2, tp=1):
    """KV cache (GB, per GPU) of ``batch`` sequences of ``seq_len`` tokens.

    = 2 · layers · kv_heads · head_dim · seq_len · batch · bytes / tp (see module docstring:
    Kwon et al. 2023 §3; Ainslie et al. 2023). ``spec``: a TransformerSpec or a preset name.
    """
    b = validate.positive("batch", batch, allow_zero=True)
    s = validate.positive("seq_len", seq_len, allow_zero=True)
    per_tok = kv_bytes_per_token(spec, bytes_per_elem, tp)
    return _out(per_tok * np.asarray(b) * np.asarray(s) / BYTES_PER_GB)


def weights_gb(model, precision: str = "bf16", tp=1, pp=1):
    """Weight memory (GB, per GPU) = params · bytes_per_param(precision) / (tp · pp).

    Llama-3.1-405B in BF16 is 812 GB: 101 GB per GPU at tp=8 (does not fit an 80 GB H100), 51 GB
    at tp=8, pp=2 (two 8-GPU nodes) or in FP8 at tp=8 (one node)."""
    spec = _spec(model)
    tp = _tp(spec, tp)
    pp = _pp(spec, pp)
    return spec.params() * weight_bytes_per_param(precision) / tp / pp / BYTES_PER_GB


def experts_touched(model, tokens):
    """Expected distinct routed experts per MoE layer that ``tokens`` tokens route to.

    E · (1 − (1 − k/E)^tokens) with E routed experts and top-k routing, assuming uniform and
    independent routing (module docstring). A dense model returns 0. Vectorised over ``tokens``.

    >>> round(experts_touched("deepseek-v3", 1)), round(experts_touched("deepseek-v3", 256))
    (8, 256)
    """
    spec = _spec(model)
    n = np.asarray(validate.positive("tokens", tokens), dtype=float)
    if not spec.num_experts:
        return _out(np.zeros_like(n))
    e, k = float(spec.num_experts), float(spec.experts_per_token)
    return _out(e * (1.0 - (1.0 - k / e) ** n))


def decode_weight_bytes(model, batch, precision: str = "bf16", tp=1):
    """Weight bytes one decode step of ``batch`` tokens reads, per GPU (weights split over ``tp``).

    Dense model: all weights. MoE: the non-routed weights (attention, dense MLPs, shared experts,
    router, embeddings) plus :func:`experts_touched` routed experts in each MoE layer. Vectorised
    over ``batch``."""
    spec = _spec(model)
    tp = _tp(spec, tp)
    b = np.asarray(validate.positive("batch", batch), dtype=float)
    per_param = weight_bytes_per_param(precision)
    if not spec.num_experts:
        return _out(np.full_like(b, spec.params() * per_param / tp))
    fixed = spec.params() - spec.expert_params_total()
    routed = np.asarray(experts_touched(spec, b)) * spec.expert_params() * spec.moe_layers
    return _out((fixed + routed) * per_param / tp)


def kv_budget_gb(model, gpu, precision: str = "bf16", tp=1, mem_util=VLLM_GPU_MEMORY_UTILIZATION,
                 reserve_gb=0.0, pp=1) -> float:
    """GB per GPU left for the KV cache: HBM · mem_util − weights/(tp · pp) − reserve (may be < 0:
    the weights alone do not fit).

    ``reserve_gb``: activation workspace / CUDA graphs you want to keep free beyond mem_util.
    """
    g = _gpu(gpu)
    u = validate.fraction("mem_util", mem_util)
    r = validate.positive("reserve_gb", reserve_gb, allow_zero=True)
    return g.hbm_gb * u - weights_gb(model, precision, tp, pp) - r


def max_batch(model, gpu, seq_len, precision: str = "bf16", kv_bytes_per_elem=2, tp=1,
              mem_util=VLLM_GPU_MEMORY_UTILIZATION, reserve_gb=0.0):
    """Largest number of concurrent sequences of ``seq_len`` tokens whose KV cache fits.

    floor((HBM · mem_util − weights/tp − reserve) / KV per sequence); 0 when the weights alone
    do not fit. Vectorised over ``seq_len``. Paged KV wastes at most one block per sequence (vLLM
    ``--block-size`` 8/16/32 tokens; Kwon et al. 2023 Fig. 2: 96.3 % of vLLM's KV memory holds token
    states), ignored here.
    """
    s = validate.positive("seq_len", seq_len)
    budget = kv_budget_gb(model, gpu, precision, tp, mem_util, reserve_gb)
    per_seq = kv_cache_gb(model, 1, s, kv_bytes_per_elem, tp)
    n = np.floor(np.maximum(budget, 0.0) / np.asarray(per_seq))
    n = n.astype(np.int64)
    return int(n) if n.ndim == 0 else n


# -- time -------------------------------------------------------------------------------------
def matmul_params(model) -> float:
    """Weights that take part in a matmul per token: all but the input-embedding lookup.

    For a mixture of experts, only the active ones (top-k routed + shared experts, attention, dense
    MLPs): ``TransformerSpec.active_params``."""
    spec = _spec(model)
    n = spec.active_params() if spec.num_experts else spec.params()
    if not spec.tied_embeddings:
        n -= spec.vocab * spec.hidden  # untied input embedding: a lookup, no FLOPs
    if spec.learned_pos_emb:
        n -= spec.seq_len * spec.hidden
    return float(n)


def _peak_tflops(g: hardware.GPU, precision: str) -> float:
    key = COMPUTE_PRECISION[precision]
    try:
        return g.peak_tflops(key)
    except ValueError:
        raise ValueError(f"precision {precision!r} needs {key.upper()} tensor cores, which the catalog does not list "
                         f"for {g.name}; use 'bf16', 'int8' or 'int4' (weight-only) instead") from None


def _tp_link_gbs(g: hardware.GPU) -> float:
    """Line rate of the GPU-to-GPU link per direction, GB/s (NVLink, else PCIe 4.0 x16)."""
    return g.nvlink_gbs / 2.0 if g.nvlink_gbs > 0 else PCIE4_X16_GBS


def tp_cluster(gpu, tp: int = 8):
    """The ``labutil.cluster.Cluster`` a TP group of ``tp`` GPUs of ``gpu`` runs on: the catalog
    system of the GPU (``Cluster.for_gpu``: HGX/DGX node, NVLink ring and NVLS busbw from
    labutil/data/systems.toml) with enough nodes for ``tp`` ranks. A GPU without NVLink in the
    catalog (PCIe cards such as L40S) gets an 8-GPU node whose GPUs talk over PCIe 4.0 x16; no
    measured NCCL busbw for it is in the catalog, so its ring busbw is taken as the PCIe line rate
    (an upper bound), no NVLS."""
    g = _gpu(gpu)
    n = validate.integer("tp", tp, lo=1)
    try:
        return _tp_cluster(g, n)
    except TypeError:  # an unhashable GPU record: build it uncached
        return _tp_cluster.__wrapped__(g, n)


@lru_cache(maxsize=128)
def _tp_cluster(g: hardware.GPU, n: int):
    from .cluster import Cluster

    name = g.name if g.name in hardware.gpus() else ""
    if g.nvlink_gbs > 0 and name:
        c = Cluster.for_gpu(name)
    else:
        link = _tp_link_gbs(g)
        c = Cluster.from_links(gpu=name, nic_gbps=400.0, nics_per_node=8, scaleup_gbs=link,
                               scaleup_ring_busbw_gbs=link if g.nvlink_gbs <= 0 else None,
                               name=f"8x {g.name} ({'NVLink' if g.nvlink_gbs > 0 else 'PCIe 4.0 x16'})")
    return c.with_nodes(max(1, -(-n // c.gpus_per_node)))


def tp_comm_s(model, gpu, tokens, tp=1, cluster=None):
    """Time of the 2·layers TP all-reduces of ``tokens · hidden · 2`` bytes (one forward pass).

    Each all-reduce goes through the course's one collective model
    (``labutil.cluster.Cluster.collective_time_s``, algo 'auto'): inside an NVSwitch node that is
    NCCL's NVLS (NVLink SHARP, H100 and later) or ring at the achievable busbw (8x H100: 480 / 370
    GB/s, not the 450 GB/s line rate), plus NVLink per-step latency. ``cluster``: the cluster the
    TP group runs on (default :func:`tp_cluster` of ``gpu``). Vectorised over tokens.
    """
    spec = _spec(model)
    tp = _tp(spec, tp)
    tok = validate.positive("tokens", tokens)
    if tp == 1:
        return _out(np.zeros_like(np.asarray(tok, dtype=float)))
    g = _gpu(gpu)
    if cluster is None:
        cluster = tp_cluster(g, tp)
    else:
        from .cluster import Cluster

        if not isinstance(cluster, Cluster):
            raise TypeError(f"cluster must be a labutil.cluster.Cluster; got {type(cluster).__name__}")
        cluster = cluster.with_nodes(max(cluster.n_nodes, -(-tp // cluster.gpus_per_node)))
    size = np.asarray(tok, dtype=float) * spec.hidden * 2.0
    one = cluster.collective_time_s("all_reduce", size, tp)
    return _out(2.0 * spec.layers * np.asarray(one))


@dataclass(frozen=True)
class StepTime:
    """A roofline step time: seconds (floats or arrays), and which bound wins."""

    time_s: object
    memory_s: object
    compute_s: object
    comm_s: object
    flops: object
    bytes: object

    @property
    def memory_bound(self):
        return np.asarray(self.memory_s) >= np.asarray(self.compute_s)


def decode_step(model, gpu, batch, context_len, precision: str = "bf16", kv_bytes_per_elem=2, tp=1,
                bw_eff=DEFAULT_BW_EFF, compute_eff=DEFAULT_COMPUTE_EFF) -> StepTime:
    """One decode step (one token for each of ``batch`` sequences with ``context_len`` cached tokens).

    time = max(bytes / (HBM · bw_eff), FLOPs / (peak · compute_eff)) + TP all-reduces, per GPU,
    with bytes = weights/tp + batch · context · KV bytes per token / tp and FLOPs = batch · (2 ·
    N_matmul + 4 · layers · hidden · context) / tp. Vectorised over batch and context_len.
    For a mixture of experts the weights read are :func:`decode_weight_bytes` (the experts the
    batch touches) and N_matmul the active parameters.
    """
    spec = _spec(model)
    g = _gpu(gpu)
    tp = _tp(spec, tp)
    b = np.asarray(validate.positive("batch", batch), dtype=float)
    L = np.asarray(validate.positive("context_len", context_len), dtype=float)
    be = validate.fraction("bw_eff", bw_eff)
    ce = validate.fraction("compute_eff", compute_eff)
    peak = _peak_tflops(g, precision) * FLOPS_PER_TFLOP
    w_bytes = np.asarray(decode_weight_bytes(spec, b, precision, tp))
    kv_tok = kv_bytes_per_token(spec, kv_bytes_per_elem, tp)
    nbytes = w_bytes + b * L * kv_tok
    flops = b * (2.0 * matmul_params(spec) + 4.0 * spec.layers * spec.hidden * L) / tp
    mem_s = nbytes / (g.hbm_gbs * 1e9 * be)
    cmp_s = flops / (peak * ce)
    com_s = np.asarray(tp_comm_s(spec, g, b, tp))
    t = np.maximum(mem_s, cmp_s) + com_s
    return StepTime(_out(t), _out(mem_s), _out(cmp_s), _out(com_s), _out(flops), _out(nbytes))


def prefill(model, gpu, prompt_tokens, batch=1, precision: str = "bf16", tp=1,
            bw_eff=DEFAULT_BW_EFF, compute_eff=DEFAULT_COMPUTE_EFF) -> StepTime:
    """Prefill of ``batch`` prompts of ``prompt_tokens`` tokens (compute-bound for long prompts).

    FLOPs = batch · (2 · N_matmul · P + 2 · layers · hidden · P²) / tp (causal attention);
    bytes = weights/tp + the KV written; time = max(compute, memory) + TP all-reduces.
    """
    spec = _spec(model)
    g = _gpu(gpu)
    tp = _tp(spec, tp)
    P = np.asarray(validate.positive("prompt_tokens", prompt_tokens), dtype=float)
    b = np.asarray(validate.positive("batch", batch), dtype=float)
    be = validate.fraction("bw_eff", bw_eff)
    ce = validate.fraction("compute_eff", compute_eff)
    peak = _peak_tflops(g, precision) * FLOPS_PER_TFLOP
    flops = b * (2.0 * matmul_params(spec) * P + 2.0 * spec.layers * spec.hidden * P**2) / tp
    nbytes = weights_gb(spec, precision, tp) * BYTES_PER_GB + b * P * kv_bytes_per_token(spec, 2, tp)
    mem_s = nbytes / (g.hbm_gbs * 1e9 * be)
    cmp_s = flops / (peak * ce)
    com_s = np.asarray(tp_comm_s(spec, g, b * P, tp))
    t = np.maximum(mem_s, cmp_s) + com_s
    return StepTime(_out(t), _out(mem_s), _out(cmp_s), _out(com_s), _out(flops), _out(nbytes))


@dataclass(frozen=True)
class ReplicaPerf:
    """One serving replica (tp GPUs) of an LLM at a given batch (concurrent sequences)."""

    model: str
    gpu: str
    precision: str
    tp: int
    weights_gb: float        # per GPU
    kv_per_seq_gb: float     # per GPU, at prompt + output tokens
    max_batch: int           # sequences whose KV fits (per replica)
    batch: int               # sequences decoded together
    ttft_ms: float           # prefill of one prompt (no queueing)
    tpot_ms: float           # time per output token at ``batch``
    e2e_ms: float            # ttft + (output_tokens - 1) · tpot
    tokens_per_s: float      # decode tokens/s of the replica
    requests_per_s: float    # batch / e2e
    decode_memory_bound: bool


def llm_replica(model, gpu, precision: str = "bf16", tp=1, prompt_tokens=1024, output_tokens=256, batch=None,
                kv_bytes_per_elem=2, mem_util=VLLM_GPU_MEMORY_UTILIZATION, reserve_gb=0.0,
                bw_eff=DEFAULT_BW_EFF, compute_eff=DEFAULT_COMPUTE_EFF) -> ReplicaPerf:
    """Memory, TTFT, TPOT and throughput of one replica with continuous batching.

    ``batch=None`` uses the largest batch whose KV cache fits. TPOT is the decode step at the mean
    context (prompt + output/2). Raises ValueError when the weights do not fit or batch > max.
    """
    spec = _spec(model)
    g = _gpu(gpu)
    tp = _tp(spec, tp)
    P = validate.integer("prompt_tokens", prompt_tokens, lo=1)
    n_out = validate.integer("output_tokens", output_tokens, lo=1)
    seq = P + n_out
    mb = max_batch(spec, g, seq, precision, kv_bytes_per_elem, tp, mem_util, reserve_gb)
    if mb < 1:
        need = weights_gb(spec, precision, tp) + kv_cache_gb(spec, 1, seq, kv_bytes_per_elem, tp)
        raise ValueError(f"{spec.name} in {precision} with tp={tp} does not fit on {g.name}: needs {need:.1f} GB "
                         f"per GPU for weights + one {seq}-token sequence, {g.hbm_gb * mem_util:.1f} GB usable; "
                         f"raise tp or use a lower precision")
    b = mb if batch is None else validate.integer("batch", batch, lo=1)
    if b > mb:
        raise ValueError(f"batch must be <= {mb} (the KV cache of more {seq}-token sequences does not fit); got {b}")
    ttft = prefill(spec, g, P, 1, precision, tp, bw_eff, compute_eff).time_s
    step = decode_step(spec, g, b, P + n_out / 2.0, precision, kv_bytes_per_elem, tp, bw_eff, compute_eff)
    tpot = step.time_s
    e2e = ttft + (n_out - 1) * tpot
    return ReplicaPerf(spec.name, g.name, precision, tp, weights_gb(spec, precision, tp),
                       float(kv_cache_gb(spec, 1, seq, kv_bytes_per_elem, tp)), int(mb), int(b),
                       ttft * 1e3, tpot * 1e3, e2e * 1e3, b / tpot, b / e2e, bool(step.memory_bound))


def throughput_curve(model, gpu, batches, context_len, precision: str = "bf16", kv_bytes_per_elem=2, tp=1,
                     bw_eff=DEFAULT_BW_EFF, compute_eff=DEFAULT_COMPUTE_EFF):
    """(tokens/s per replica, TPOT in ms) for each batch size in ``batches`` (arrays)."""
    step = decode_step(model, gpu, batches, context_len, precision, kv_bytes_per_elem, tp, bw_eff, compute_eff)
    t = np.asarray(step.time_s)
    return _out(np.asarray(batches, dtype=float) / t), _out(t * 1e3)


def static_batching_utilization(output_lengths, batch):
    """Fraction of decode slots doing useful work with static (request-level) batching.

    Requests are grouped in arrival order into batches of ``batch``; a static batch runs until its
    longest request finishes, so utilisation = Σ lengths / Σ (batch · max length per batch).
    Continuous (iteration-level) batching refills a slot as soon as its request ends (Yu et al.
    2022, "Orca", OSDI'22, §3.2; vLLM), so its utilisation is ~1 at steady load.
    """
    lens = np.asarray(validate.positive("output_lengths", output_lengths), dtype=float).ravel()
    b = validate.integer("batch", batch, lo=1)
    n = (lens.size // b) * b
    if n == 0:
        raise ValueError(f"output_lengths needs at least batch={b} values; got {lens.size}")
    grid = lens[:n].reshape(-1, b)
    return float(grid.sum() / (b * grid.max(axis=1)).sum())


# -- queueing ---------------------------------------------------------------------------------
def erlang_b(c, a):
    """Erlang B blocking probability of c servers at offered load a (Erlangs); vectorised."""
    c_arr = np.asarray(validate.integer("c", c, lo=1))
    a_arr = np.asarray(validate.positive("a", a, allow_zero=True), dtype=float)
    return _out(_erlang_b(c_arr, a_arr))


def _erlang_b(c_arr, a_arr):
    c_b, a_b = np.broadcast_arrays(np.asarray(c_arr, dtype=np.int64), np.asarray(a_arr, dtype=float))
    kmax = int(c_b.max())
    if c_b.size * (kmax + 1) <= 4_000_000:
        # closed form in log space: B = (a^c/c!) / sum_{k<=c} a^k/k!  (a stable log-sum-exp)
        k = np.arange(kmax + 1, dtype=float)
        log_fact = np.concatenate(([0.0], np.cumsum(np.log(k[1:]))))
        with np.errstate(divide="ignore", invalid="ignore"):
            log_a = np.log(a_b.ravel())[:, None]
            terms = np.where(k[None, :] == 0, 0.0, k[None, :] * log_a) - log_fact[None, :]
        terms = np.where(k[None, :] <= c_b.ravel()[:, None], terms, -np.inf)
        top = terms.max(axis=1, keepdims=True)
        lse = top[:, 0] + np.log(np.exp(terms - top).sum(axis=1))
        log_term_c = terms[np.arange(terms.shape[0]), c_b.ravel()]
        return np.exp(log_term_c - lse).reshape(a_b.shape)
    bvals = np.ones(a_b.shape)  # recursion B(k) = a B(k-1) / (k + a B(k-1)), B(0) = 1
    out = np.empty(a_b.shape)
    for kk in range(1, kmax + 1):
        bvals = a_b * bvals / (kk + a_b * bvals)
        hit = c_b == kk
        out[hit] = bvals[hit]
    return out


def erlang_c(c, a):
    """Erlang C: probability an arrival waits in M/M/c, a = λ/μ < c (Kleinrock 1975, §3.5).

    C = c·B / (c − a·(1 − B)) with B the Erlang B value. M/M/2 at a = 1: 1/3.
    """
    c_arr = np.asarray(validate.integer("c", c, lo=1), dtype=float)
    a_arr = np.asarray(validate.positive("a", a, allow_zero=True), dtype=float)
    ab, cb = np.broadcast_arrays(a_arr, c_arr)
    if (ab >= cb).any():
        raise ValueError("a must be < c (offered load below the number of servers, utilisation < 1); "
                         f"got a={a!r}, c={c!r}")
    return _out(_erlang_c(c_arr, a_arr))


def _erlang_c(c_arr, a_arr):
    B = _erlang_b(c_arr, a_arr)
    return c_arr * B / (c_arr - a_arr * (1.0 - B))


def _wait_quantile_s(C, c, rate_jobs, service_s, k, quantile):
    """t with P(W > t) = quantile tail: C · exp(−(c/s − λ) t / k) = 1 − q (0 if C <= 1 − q)."""
    slack = c / service_s - rate_jobs
    tail = 1.0 - quantile
    ratio = np.maximum(np.asarray(C) / tail, 1.0)
    return k * np.log(ratio) / slack


ROUTINGS = ("random", "pooled")


def _cv2(value) -> float:
    v = validate.number("service_cv2", value, lo=0.0, hi=1.0)
    if v not in (0.0, 1.0):
        raise ValueError(f"service_cv2 must be 0 (deterministic service) or 1 (exponential service); got {value!r}")
    return v


def p99_latency_ms(qps, replicas, service_ms, *, batch=1, slots_per_replica=1, queue_delay_ms=0.0,
                   service_cv2=0.0, quantile=0.99, routing: str = "random"):
    """Tail latency (ms) of requests at ``qps`` on ``replicas`` replicas (vectorised).

    Each replica runs ``slots_per_replica`` jobs at once (continuous-batching slots; 1 for a
    CV model instance); a job is a batch of ``batch`` requests taking ``service_ms``. Latency =
    batching delay (``queue_delay_ms`` when batch > 1: Triton's max_queue_delay, the longest a
    request waits for its batch to fill) + queue wait quantile (Erlang C tail, Allen–Cunneen
    k = (1/batch + service_cv2)/2) + service. ``service_cv2``: 0 = deterministic service (M/D/c,
    T = W + service_ms), 1 = exponential service (M/M/c: exact sojourn-time quantile); other
    values are rejected. Raises ValueError when utilisation >= 1.

    ``routing``: 'random' (each replica its own queue fed λ/replicas — Kubernetes Service traffic
    through kube-proxy in iptables mode picks a backend at random, kubernetes.io "Virtual IPs and
    Service Proxies") or 'pooled' (one shared queue over all replicas' slots: least-outstanding-
    requests routing, or one Triton server's dynamic batcher feeding several GPU instances).
    """
    lam = np.asarray(validate.positive("qps", qps), dtype=float)
    r = np.asarray(validate.integer("replicas", replicas, lo=1))
    s = np.asarray(validate.positive("service_ms", service_ms), dtype=float) / 1e3
    b = validate.integer("batch", batch, lo=1)
    m = validate.integer("slots_per_replica", slots_per_replica, lo=1)
    d = validate.positive("queue_delay_ms", queue_delay_ms, allow_zero=True)
    cv2 = _cv2(service_cv2)
    q = validate.number("quantile", quantile, lo=0.5, hi=1.0, hi_open=True)
    validate.choice("routing", routing, ROUTINGS)
    return _out(_p99_core(lam, r, s, b, m, d, cv2, q, routing))


def _p99_core(lam, r, s, b, m, d, cv2, q, routing):
    """p99_latency_ms without argument checks (inputs already validated; s in seconds)."""
    if routing == "pooled":
        c = r * m
        rate = lam / b
    else:
        c = np.broadcast_to(np.asarray(m), np.broadcast(lam, r).shape)
        rate = lam / r / b
    a = rate * s
    rho = np.broadcast_to(a / c, np.broadcast(a, c).shape)
    if (rho >= 1.0).any():
        worst = float(rho.max())
        need = int(np.ceil(float(np.max(lam * s / b / m)) + 1e-9))
        raise ValueError(f"replicas too few: utilisation must be < 1, got {worst:.3g} (the load needs more than "
                         f"{need} replicas of {m} slot(s) at {float(np.max(s)) * 1e3:.3g} ms per batch of {b})")
    C = _erlang_c(c, a)
    k = (1.0 / b + cv2) / 2.0
    delay = d / 1e3 if b > 1 else 0.0
    if cv2 == 0.0:  # deterministic service: T = W + s exactly
        w = _wait_quantile_s(C, c, rate, s, k, q)
        return (delay + w + s) * 1e3
    return (delay + _sojourn_quantile_exp_s(C, c, rate, s, k, q)) * 1e3


def _sojourn_quantile_exp_s(C, c, rate, s, k, q):
    """Quantile of T = W + S with W = 0 w.p. 1−C else Exp(θ), θ = (c/s − λ)/k, and S ~ Exp(1/s).

    P(T > t) = (1−C)·e^{−μt} + C·(θ e^{−μt} − μ e^{−θt})/(θ − μ)  (hypo-exponential sum); solved
    by vectorised bisection. Exact for M/M/c (k = 1).
    """
    mu = np.broadcast_to(1.0 / np.asarray(s, dtype=float), np.broadcast(C, s).shape).astype(float)
    C = np.broadcast_to(np.asarray(C, dtype=float), mu.shape)
    theta = np.broadcast_to((np.asarray(c) / np.asarray(s) - np.asarray(rate)) / k, mu.shape).astype(float)
    theta = np.where(np.abs(theta - mu) < 1e-9 * mu, mu * (1 + 1e-6), theta)
    tail = 1.0 - q

    def surv(t):
        return (1 - C) * np.exp(-mu * t) + C * (theta * np.exp(-mu * t) - mu * np.exp(-theta * t)) / (theta - mu)

    lo = np.zeros(mu.shape)
    hi = np.log(2.0 / tail) / mu + np.log(np.maximum(2.0 * C / tail, 1.0)) / theta + 1e-12
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        above = surv(mid) > tail
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    return hi


@dataclass(frozen=True)
class SloPlan:
    """GPUs for a QPS and tail-latency target."""

    replicas: int
    gpus: int
    p99_ms: float            # modelled tail latency at that size
    utilization: float       # busy fraction of the servers
    naive_replicas: int      # ceil(qps / replica capacity): the "QPS ÷ per-GPU QPS" answer
    replica_capacity_qps: float


def gpus_for_slo(qps, p99_ms, service_ms, *, batch=1, slots_per_replica=1, gpus_per_replica=1,
                 queue_delay_ms=0.0, service_cv2=0.0, quantile=0.99, routing: str = "random",
                 max_replicas=100_000) -> SloPlan:
    """Fewest replicas (and GPUs = replicas · gpus_per_replica) whose modelled P99 <= ``p99_ms``.

    Model: ``p99_latency_ms``. Raises ValueError when even an idle cluster misses the target
    (service_ms + batching delay > p99_ms) or more than ``max_replicas`` would be needed.
    """
    lam = validate.positive("qps", qps)
    target = validate.positive("p99_ms", p99_ms)
    s_ms = validate.positive("service_ms", service_ms)
    b = validate.integer("batch", batch, lo=1)
    m = validate.integer("slots_per_replica", slots_per_replica, lo=1)
    gpr = validate.integer("gpus_per_replica", gpus_per_replica, lo=1)
    d = validate.positive("queue_delay_ms", queue_delay_ms, allow_zero=True)
    cap = validate.integer("max_replicas", max_replicas, lo=1)
    cv2 = _cv2(service_cv2)
    q = validate.number("quantile", quantile, lo=0.5, hi=1.0, hi_open=True)
    validate.choice("routing", routing, ROUTINGS)
    floor_ms = s_ms + (d if b > 1 else 0.0)
    if floor_ms > target:
        raise ValueError(f"p99_ms={target:g} is below the unloaded latency {floor_ms:.3g} ms (service "
                         f"{s_ms:.3g} ms + batching delay): no replica count meets it; use a faster GPU, a smaller "
                         f"batch, a shorter queue delay or more tensor parallelism")
    capacity = m * b / (s_ms / 1e3)  # requests/s of one replica at 100 % busy
    naive = max(1, math.ceil(lam / capacity - 1e-12))
    lo = max(1, math.floor(lam / capacity) + 1)
    step = 8
    while True:
        rs = np.arange(lo, min(lo + step, cap + 1))
        if rs.size == 0:
            raise ValueError(f"more than max_replicas={cap} replicas would be needed for qps={lam:g}")
        p = _p99_core(lam, rs, s_ms / 1e3, b, m, d, cv2, q, routing)
        ok = np.nonzero(p <= target * (1 + 1e-12))[0]
        if ok.size:
            r = int(rs[ok[0]])
            return SloPlan(r, r * gpr, float(p[ok[0]]), lam / (r * capacity), naive, capacity)
        lo, step = int(rs[-1]) + 1, step * 2


def max_qps_per_replica(p99_ms, service_ms, *, batch=1, slots_per_replica=1, queue_delay_ms=0.0, service_cv2=0.0,
                        quantile=0.99) -> float:
    """Highest request rate one replica takes with its P99 <= ``p99_ms`` (random routing).

    With random routing every replica sees qps / replicas, so the replicas needed for any load
    are ceil(qps / this value): a vectorised way to draw GPUs-vs-QPS curves. Found on two nested
    grids of utilisation (resolution capacity / 4096); 0 when the target is unreachable.
    """
    target = validate.positive("p99_ms", p99_ms)
    s_ms = validate.positive("service_ms", service_ms)
    b = validate.integer("batch", batch, lo=1)
    m = validate.integer("slots_per_replica", slots_per_replica, lo=1)
    d = validate.positive("queue_delay_ms", queue_delay_ms, allow_zero=True)
    cv2 = _cv2(service_cv2)
    q = validate.number("quantile", quantile, lo=0.5, hi=1.0, hi_open=True)
    capacity = m * b / (s_ms / 1e3)
    if s_ms + (d if b > 1 else 0.0) > target:
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(2):
        u = np.linspace(lo, hi, 65)[1:-1]
        p = _p99_core(u * capacity, np.ones(u.shape), s_ms / 1e3, b, m, d, cv2, q, "random")
        ok = np.nonzero(p <= target * (1 + 1e-12))[0]
        if ok.size == 0:
            hi = u[0]
            continue
        i = int(ok[-1])
        lo = float(u[i])
        hi = float(u[i + 1]) if i + 1 < u.size else hi
    return lo * capacity


# -- CV models (seed 003 场景二) ----------------------------------------------------------------
def cv_batch_ms(gpu, batch=1, *, gflops_per_image=RESNET50_GFLOPS, params=RESNET50_PARAMS, precision: str = "fp16",
                compute_eff=0.4, bw_eff=DEFAULT_BW_EFF, overhead_ms=0.5):
    """Service time (ms) of one batch of images on one GPU (TensorRT-style engine).

    = overhead_ms + max(weights / (HBM · bw_eff), batch · FLOPs / (peak · compute_eff)).
    ``precision``: 'fp16' (BF16/FP16 tensor rate) or 'int8' (W8A8; the INT8 dense TOPS of Ada /
    Hopper datasheets equal their FP8 TFLOP/s, the catalog's fp8 field). ``compute_eff`` 0.4 and
    ``overhead_ms`` 0.5 (kernel launches, input copy) are course assumptions: measure yours with
    ``trtexec`` / ``perf_analyzer`` and pass them. Vectorised over ``batch``.
    """
    g = _gpu(gpu)
    bt = np.asarray(validate.positive("batch", batch), dtype=float)
    f = validate.positive("gflops_per_image", gflops_per_image) * 1e9
    n = validate.positive("params", params)
    validate.choice("precision", precision, ("fp16", "int8"))
    ce = validate.fraction("compute_eff", compute_eff)
    be = validate.fraction("bw_eff", bw_eff)
    ov = validate.positive("overhead_ms", overhead_ms, allow_zero=True)
    peak = _peak_tflops(g, "bf16" if precision == "fp16" else "fp8") * FLOPS_PER_TFLOP
    wbytes = n * (2.0 if precision == "fp16" else 1.0)
    t = ov / 1e3 + np.maximum(wbytes / (g.hbm_gbs * 1e9 * be), bt * f / (peak * ce))
    return _out(t * 1e3)


def cv_model(name: str) -> tuple[float, float]:
    """(GFLOPs per image, parameters) of a catalog vision model in ``CV_MODELS``."""
    if name not in CV_MODELS:
        raise validate.unknown_name("CV model", name, CV_MODELS)
    gmacs, params, _ = CV_MODELS[name]
    return 2.0 * gmacs, params


def cv_cluster_plan(gpu, qps=SEED_CV_QPS, p99_ms=SEED_CV_P99_MS, batch=1, *, model: str = "resnet50",
                    queue_delay_ms=None, routing: str = "random", **cv_kwargs) -> SloPlan:
    """GPUs for the seed's CV service: ``qps`` requests of one image, P99 <= ``p99_ms``.

    With ``batch > 1`` (Triton dynamic batching) the default queue delay is the mean time the
    whole service needs to collect batch − 1 further requests, (batch − 1) / qps.
    """
    lam = validate.positive("qps", qps)
    b = validate.integer("batch", batch, lo=1)
    d = (b - 1) / lam * 1e3 if queue_delay_ms is None else queue_delay_ms
    gf, n = cv_model(model)
    s = cv_batch_ms(gpu, b, gflops_per_image=gf, params=n, **cv_kwargs)
    return gpus_for_slo(lam, p99_ms, s, batch=b, queue_delay_ms=d, routing=routing)


def llm_gpus_for_slo(qps, p99_e2e_ms, model, gpu, precision: str = "bf16", tp=1, prompt_tokens=1024,
                     output_tokens=256, batch=None, routing: str = "random", service_cv2=0.0, **kwargs) -> SloPlan:
    """GPUs for an LLM service: each replica has ``batch`` continuous-batching slots, each slot
    serves one request for its end-to-end time (TTFT + output · TPOT) — an M/D/c queue with
    c = replicas · batch."""
    rep = llm_replica(model, gpu, precision, tp, prompt_tokens, output_tokens, batch, **kwargs)
    return gpus_for_slo(qps, p99_e2e_ms, rep.e2e_ms, slots_per_replica=rep.batch, gpus_per_replica=rep.tp,
                        routing=routing, service_cv2=service_cv2)


# -- a tool output parser (perf_analyzer) ---------------------------------------------------
@dataclass(frozen=True)
class PerfAnalyzerRow:
    concurrency: int
    throughput_infer_s: float
    p99_latency_ms: float


class PerfAnalyzerParseError(ParseError):
    """The text is not perf_analyzer's concurrency summary (a :class:`labutil.parsers.ParseError`).

    The parser stays here because only ch25 reads perf_analyzer (a tool read by two chapters lives in
    ``labutil.parsers``); its error follows the parsers' rule so triage and tests catch one class."""


def parse_perf_analyzer(text) -> list[PerfAnalyzerRow]:
    """Parse the summary block that Triton's ``perf_analyzer --concurrency-range`` prints last::

        Inferences/Second vs. Client p99 Batch Latency
        Concurrency: 1, throughput: 482.8 infer/sec, latency 2254 usec

    (format: triton-inference-server/perf_analyzer, docs/quick_start.md and README example
    output; the latency column is the percentile passed with ``--percentile``, default average).
    Raises PerfAnalyzerParseError on anything else.
    """
    import re

    if not isinstance(text, str) or not text.strip():
        raise PerfAnalyzerParseError("perf_analyzer: empty or non-text output")
    pat = re.compile(r"^\s*Concurrency:\s*(\d+),\s*throughput:\s*([0-9.]+)\s*infer/sec,\s*latency\s+([0-9.]+)\s*usec\s*$")
    rows = []
    for line in text.splitlines():
        mt = pat.match(line)
        if mt:
            rows.append(PerfAnalyzerRow(int(mt.group(1)), float(mt.group(2)), float(mt.group(3)) / 1e3))
    if not rows:
        raise PerfAnalyzerParseError("perf_analyzer: no 'Concurrency: N, throughput: X infer/sec, latency Y usec' "
                                     "line found (run with --concurrency-range and keep the final summary)")
    return rows


#: Illustrative ``perf_analyzer -m resnet50 --concurrency-range 1:8:2 --percentile=99`` output.
#: The layout follows the example output in triton-inference-server/perf_analyzer docs
#: (quick_start.md); the numbers are made up for teaching, not measured.
SAMPLE_PERF_ANALYZER = """\
*** Measurement Settings ***
  Batch size: 1
  Service Kind: TRITON
  Using "time_windows" mode for stabilization
  Stabilizing using p99 latency and throughput
  Measurement window: 5000 msec
  Latency limit: 0 msec
  Concurrency limit: 8 concurrent requests
  Using synchronous calls for inference

Request concurrency: 1
  Client:
    Request count: 4012
    Throughput: 802.4 infer/sec
    p50 latency: 1221 usec
    p90 latency: 1302 usec
    p95 latency: 1347 usec
    p99 latency: 1488 usec
    Avg HTTP time: 1236 usec (send/recv 71 usec + response wait 1165 usec)
  Server:
    Inference count: 4012
    Execution count: 4012
    Successful request count: 4012
    Avg request latency: 1023 usec (overhead 19 usec + queue 24 usec + compute input 35 usec + compute infer 921 usec + compute output 24 usec)

Inferences/Second vs. Client p99 Batch Latency
Concurrency: 1, throughput: 802.4 infer/sec, latency 1488 usec
Concurrency: 2, throughput: 1391.6 infer/sec, latency 1702 usec
Concurrency: 4, throughput: 1687.2 infer/sec, latency 2911 usec
Concurrency: 8, throughput: 1745.8 infer/sec, latency 5733 usec
"""

#: Illustrative ``nvidia-smi --query-gpu=index,name,utilization.gpu,memory.used,memory.total
#: --format=csv`` on a vLLM node (format: nvidia-smi man page; values made up for teaching:
#: vLLM pre-allocates 90 % of memory for weights + KV cache, so memory.used says nothing about load).
SAMPLE_NVIDIA_SMI_SERVING = """\
index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB]
0, NVIDIA H100 80GB HBM3, 97 %, 73420 MiB, 81559 MiB
1, NVIDIA H100 80GB HBM3, 96 %, 73420 MiB, 81559 MiB
2, NVIDIA H100 80GB HBM3, 12 %, 73418 MiB, 81559 MiB
3, NVIDIA H100 80GB HBM3, 11 %, 73418 MiB, 81559 MiB
"""
