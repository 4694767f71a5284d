"""Parallel layouts (DP/TP/PP/SP/CP/EP, ZeRO, recompute): validity, pipeline bubble, step time, search.

Taught in ch08 (并行策略: DP/TP/PP/SP/EP与3D并行); memory comes from ``labutil.memory`` (ch07),
every collective time from ``labutil.cluster`` (ch13: NVLink vs network hops), FLOPs from
``labutil.compute.hardware_flops_per_iter`` and GEMM efficiency from ``compute.gemm_efficiency``;
the model is validated against published runs in ``labutil.published_runs`` (±10 %).

Sources
-------
- Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
  Megatron-LM", SC 2021 (arXiv:2104.04473): 1F1B pipeline bubble (p−1)/m of the ideal time
  (§2.2.1), interleaved schedule (p−1)/(v·m) (§2.2.2), tensor parallelism with two all-reduces
  in the forward and two in the backward pass of every layer (§2.3, Figure 5), scatter/gather
  of pipeline sends (§4.1), and the guidance that TP stays within a node (Takeaway #1, §3.2).
- Shoeybi et al., "Megatron-LM", 2019, §3 (the f/g all-reduce operators of tensor parallelism).
- Rajbhandari et al., "ZeRO", SC 2020, §7: stages 1 and 2 move the same 2Ψ per step as plain
  data parallelism (reduce-scatter + all-gather); stage 3 moves 3Ψ (1.5×).
- Korthikanti et al. 2022, §4.2.2: sequence parallelism replaces each TP all-reduce by an
  all-gather + reduce-scatter of the same total volume.
- DeepSpeed documentation (Pipeline Parallelism): ZeRO stages 2 and 3 are not supported together
  with pipeline parallelism; :func:`search_layouts` follows that by default.
- Context parallelism: Liu et al. 2023, "Ring Attention with Blockwise Transformers" (K/V blocks
  passed around a ring, overlapped with the attention of the current block); Megatron-Core
  ``--context-parallel-size``; used by Llama 3 405B with cp = 16 for 128K context (Llama 3, Table 4).
- Attention FLOPs actually executed: Dao et al. 2022 (FlashAttention) and Dao 2023 (FlashAttention-2):
  the fused kernel never stores the s×s scores, its backward recomputes S = QKᵀ and P (2.5× the
  forward FLOPs) and a causal kernel skips the masked half of the tiles (``compute.attention_passes``,
  ``compute.FLASH_CAUSAL_FRACTION``). So Korthikanti's selective recompute costs nothing extra under
  flash attention; without it, it re-runs the attention core (Korthikanti Eq. 8).
- Llama 3 (Dubey et al. 2024) §3.3.2: its CP all-gathers K and V before attention and leaves that
  latency exposed (``cp_overlap=0``); a ring (Megatron-Core) overlaps it (``cp_overlap=1``, default).
- Expert parallelism: Lepikhin et al. 2020 (GShard) and Fedus et al. 2021 (Switch Transformer):
  tokens dispatched to and combined from their experts by two all-to-alls per MoE layer and pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import memory, validate
from .units import BYTES_PER_GB

__all__ = ["RECOMPUTE", "Layout", "layout_problems", "check_layout", "pipeline_bubble", "pipeline_bubble_fraction",
           "CommVolume", "comm_volume_gb", "DEFAULT_RESERVE_FRAC", "DEFAULT_SYSTEM_FOR_GPU",
           "ELEMENTWISE_ELEMS_PER_HIDDEN", "SCORE_ELEMS", "OPTIMIZER_BYTES_PER_PARAM", "default_cluster",
           "group_collective_time_s", "tp_layer_times", "LayoutEstimate", "SearchResult", "candidate_columns",
           "search_layouts", "estimate_layout", "megatron_args", "MegatronIteration", "parse_megatron_log",
           "MEGATRON_LOG_SAMPLE"]

RECOMPUTE = memory.RECOMPUTE


@dataclass(frozen=True)
class Layout:
    """One parallel layout of a training job.

    dp, tp, pp: data-, tensor- and pipeline-parallel sizes; micro_batch: sequences per
    micro-batch; global_batch: sequences per optimizer step; zero_stage 0..3 (over dp);
    sp: Megatron sequence parallelism (inside the TP group); recompute: "none", "selective",
    "full"; ep: expert-parallel size, carved out of the data-parallel ranks (Megatron-Core
    convention), so it must divide dp and does not change ``world_size``; cp: context-parallel
    size (Megatron-Core ``--context-parallel-size``): each sequence is split over cp GPUs, which
    exchange K and V in a ring, so activations shrink by cp and ``world_size = dp·tp·pp·cp``;
    interleave: model chunks per GPU of the interleaved 1F1B schedule (Narayanan 2021 §2.2.2).
    """

    dp: int
    tp: int
    pp: int
    micro_batch: int
    global_batch: int
    zero_stage: int = 0
    sp: bool = False
    recompute: str = "none"
    ep: int = 1
    cp: int = 1
    interleave: int = 1

    def __post_init__(self):
        for name in ("dp", "tp", "pp", "micro_batch", "global_batch", "ep", "cp", "interleave"):
            object.__setattr__(self, name, validate.integer(name, getattr(self, name), lo=1))
        object.__setattr__(self, "zero_stage", validate.integer("zero_stage", self.zero_stage, lo=0, hi=3))
        if not isinstance(self.sp, (bool, np.bool_)):
            raise ValueError(f"sp must be a bool; got {self.sp!r}")
        object.__setattr__(self, "sp", bool(self.sp))
        validate.choice("recompute", self.recompute, RECOMPUTE)
        if self.global_batch % (self.dp * self.micro_batch):
            raise ValueError(f"global_batch must be divisible by dp*micro_batch = {self.dp * self.micro_batch}; "
                             f"got global_batch={self.global_batch}")
        if self.dp % self.ep:
            raise ValueError(f"ep must divide dp (expert parallelism uses data-parallel ranks); got ep={self.ep}, dp={self.dp}")
        if self.interleave > 1 and self.pp == 1:
            raise ValueError(f"interleave={self.interleave} needs pipeline parallelism (pp > 1)")

    @property
    def world_size(self) -> int:
        """GPUs used: dp · tp · pp · cp."""
        return self.dp * self.tp * self.pp * self.cp

    @property
    def n_microbatches(self) -> int:
        """Micro-batches per pipeline per step: global_batch / (dp · micro_batch)."""
        return self.global_batch // (self.dp * self.micro_batch)

    def label(self) -> str:
        extra = []
        if self.zero_stage:
            extra.append(f"ZeRO-{self.zero_stage}")
        if self.sp:
            extra.append("SP")
        if self.recompute != "none":
            extra.append(f"rc={self.recompute}")
        if self.ep > 1:
            extra.append(f"ep={self.ep}")
        if self.cp > 1:
            extra.append(f"cp={self.cp}")
        if self.interleave > 1:
            extra.append(f"v={self.interleave}")
        tail = (" " + " ".join(extra)) if extra else ""
        return f"dp={self.dp} tp={self.tp} pp={self.pp} mb={self.micro_batch}{tail}"


def layout_problems(spec, layout: Layout, n_gpus: int, gpus_per_node: int = 8) -> list[str]:
    """Reasons why ``layout`` cannot train ``spec`` on ``n_gpus`` GPUs (empty list when valid).

    Rules: dp·tp·pp·cp == n_gpus; cp divides seq_len; tp divides heads, kv_heads (Megatron splits whole KV groups) and
    ffn_hidden; tp ≤ gpus_per_node (TP all-reduces stay on NVLink, Narayanan 2021 §3.2); pp
    divides layers (equal stages); ep == 1 for a dense model (or divides ``spec.num_experts``).
    """
    n = validate.integer("n_gpus", n_gpus, lo=1)
    g = validate.integer("gpus_per_node", gpus_per_node, lo=1)
    out = []
    if layout.world_size != n:
        out.append(f"dp*tp*pp*cp = {layout.world_size} != n_gpus = {n}")
    if spec.seq_len % layout.cp:
        out.append(f"cp={layout.cp} does not divide seq_len={spec.seq_len}")
    if spec.layers % (layout.pp * layout.interleave):
        out.append(f"pp*interleave = {layout.pp * layout.interleave} does not divide layers={spec.layers}")
    if spec.heads % layout.tp:
        out.append(f"tp={layout.tp} does not divide heads={spec.heads}")
    if spec.kv_heads % layout.tp:
        out.append(f"tp={layout.tp} does not divide kv_heads={spec.kv_heads}")
    if spec.ffn_hidden % layout.tp:
        out.append(f"tp={layout.tp} does not divide ffn_hidden={spec.ffn_hidden}")
    if layout.tp > g:
        out.append(f"tp={layout.tp} > gpus_per_node={g} (tensor parallelism must stay inside the NVLink domain)")
    if spec.layers % layout.pp:
        out.append(f"pp={layout.pp} does not divide layers={spec.layers}")
    experts = getattr(spec, "num_experts", 0) or 0
    if layout.ep > 1 and (experts == 0 or experts % layout.ep):
        out.append(f"ep={layout.ep} needs a mixture-of-experts model whose expert count it divides "
                   f"(model has {experts} experts)")
    return out


def check_layout(spec, layout: Layout, n_gpus: int, gpus_per_node: int = 8) -> Layout:
    """Raise ValueError listing every problem of ``layout`` for ``spec`` on ``n_gpus``; return it if valid."""
    problems = layout_problems(spec, layout, n_gpus, gpus_per_node)
    if problems:
        raise ValueError("invalid layout: " + "; ".join(problems))
    return layout


# ---------------------------------------------------------------------------------------------
# Pipeline bubble
# ---------------------------------------------------------------------------------------------
def pipeline_bubble(pp, n_microbatches, interleave=1):
    """Pipeline bubble as a fraction of the IDEAL (bubble-free) step time: (p−1)/(v·m).

    Narayanan et al. 2021 §2.2.1 (1F1B/GPipe: t_pb/t_id = (p−1)/m) and §2.2.2 (interleaved with
    v model chunks per GPU: (p−1)/(v·m)). pp = 8, m = 32: 0.219. Arrays broadcast.
    See :func:`pipeline_bubble_fraction` for the share of the TOTAL step time.
    """
    p = validate.integer("pp", pp, lo=1)
    m = validate.integer("n_microbatches", n_microbatches, lo=1)
    v = validate.integer("interleave", interleave, lo=1)
    out = (np.asarray(p, float) - 1.0) / (np.asarray(v, float) * np.asarray(m, float))
    return float(out) if np.ndim(out) == 0 else out


def pipeline_bubble_fraction(pp, n_microbatches, interleave=1):
    """Share of the total step time spent in the bubble: (p−1)/(v·m + p − 1).

    Same schedule as :func:`pipeline_bubble`: total = ideal·(1 + (p−1)/(v·m)).
    """
    r = np.asarray(pipeline_bubble(pp, n_microbatches, interleave), float)
    out = r / (1.0 + r)
    return float(out) if np.ndim(out) == 0 else out


# ---------------------------------------------------------------------------------------------
# Communication volume per strategy
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CommVolume:
    """Bytes each GPU sends per training step (GB), by strategy, and the message sizes."""

    tp_gb: float
    pp_gb: float
    dp_gb: float
    tp_message_gb: float
    dp_message_gb: float

    @property
    def total_gb(self) -> float:
        return self.tp_gb + self.pp_gb + self.dp_gb


def _tp_allreduces(rc):
    """All-reduces per layer per micro-batch: 2 forward + 2 backward, +2 when the forward is re-run."""
    return np.where(np.asarray(rc) == 2, 6.0, 4.0)


def comm_volume_gb(spec, layout: Layout, seq_len: int | None = None, precision_bytes: int = 2) -> CommVolume:
    """Per-GPU bytes sent per step by each strategy (ring algorithms, 16-bit tensors).

    - TP: per layer and micro-batch, 4 all-reduces (6 with full recompute) of s·b·h elements
      (Narayanan 2021 §2.3); a ring all-reduce sends 2(t−1)/t of the message per GPU. SP turns
      each into all-gather + reduce-scatter, same volume (Korthikanti §4.2.2).
    - PP: each micro-batch sends its activations forward and its gradient backward across a
      stage boundary, s·b·h elements split over the t TP ranks (scatter/gather, Narayanan §4.1).
    - DP: gradients of this GPU's stage shard, Ψ_stage/t elements, all-reduced: 2(d−1)/d of it;
      ZeRO-1/2 the same (reduce-scatter + all-gather), ZeRO-3 1.5× (ZeRO §7).
    """
    s = spec.seq_len if seq_len is None else validate.integer("seq_len", seq_len, lo=1)
    by = validate.positive("precision_bytes", precision_bytes)
    t, p, d, b, m = layout.tp, layout.pp, layout.dp, layout.micro_batch, layout.n_microbatches
    rc = RECOMPUTE.index(layout.recompute)
    act_bytes = by * s * b * spec.hidden
    tp_msg = act_bytes
    tp_gb = float(_tp_allreduces(rc)) * 2.0 * (t - 1) / t * act_bytes * (spec.layers / p) * m / BYTES_PER_GB
    pp_gb = (2.0 * m * act_bytes / t / BYTES_PER_GB) if p > 1 else 0.0
    psi = float(memory.stage_params(spec, p)) / t
    dp_msg = by * psi
    dp_gb = 2.0 * (d - 1) / d * dp_msg * (1.5 if layout.zero_stage == 3 else 1.0) / BYTES_PER_GB
    return CommVolume(tp_gb, pp_gb, dp_gb, tp_msg / BYTES_PER_GB, dp_msg / BYTES_PER_GB)


# ---------------------------------------------------------------------------------------------
# Step-time estimate and layout search (vectorised)
# ---------------------------------------------------------------------------------------------
#: Default share of HBM kept free for the CUDA context, NCCL buffers and allocator fragmentation.
#: An explicit planning allowance (an assumption, not a measurement): a layout must fit in
#: hbm_gb · (1 − reserve_frac).
DEFAULT_RESERVE_FRAC = 0.10

#: Catalog system (labutil/data/systems.toml, via ``labutil.cluster.Cluster.system``) used when a
#: search is given a GPU but no cluster: the vendor's 8-GPU reference server with one compute NIC
#: per GPU (seed 004 §1.4: "每张GPU至少配1个400G端口").
DEFAULT_SYSTEM_FOR_GPU = {"H100-SXM": "DGX-H100", "H200-SXM": "DGX-H200", "B200": "DGX-B200",
                          "A100-80G-SXM": "DGX-A100", "H800-SXM": "HGX-H800", "A800-SXM": "HGX-A800"}

#: HBM bytes moved per element of the memory-bound (non-GEMM) kernels of one transformer layer's
#: forward pass, 16-bit activations. Counted from the kernels Megatron-LM runs (Korthikanti et al.
#: 2022 §4.1 lists the same tensors for the activation-memory count): two LayerNorms (read + write
#: 2 × 2 elements of h), two dropout + residual adds (read 2, write 1, 1-byte mask: ~3.5 elements of
#: h each) = 11 elements per hidden unit, plus the MLP activation (bias-GeLU reads and writes the
#: ffn-wide tensor: 2 elements per ffn unit; SwiGLU reads 2·ffn and writes ffn: 3).
ELEMENTWISE_ELEMS_PER_HIDDEN = 11.0
#: Attention without a fused (flash) kernel also streams the s × s score matrix: QKᵀ written,
#: read by the fused scale-mask-softmax, softmax written, dropout read/written (+1-byte mask),
#: read by the P·V GEMM: 6.5 two-byte accesses per score element (Dao et al. 2022, Algorithm 0).
SCORE_ELEMS = 6.5
#: Optimizer step (Adam, mixed precision): read fp32 master, m, v (12 B) and the gradient (2-4 B),
#: write master, m, v (12 B) and the 16-bit weights (2 B): ~30 B of HBM traffic per local parameter.
OPTIMIZER_BYTES_PER_PARAM = 30.0


def _gpu(gpu):
    from .hardware import GPU, gpu as lookup

    if isinstance(gpu, GPU):
        return gpu
    return lookup(gpu)


def _executed_flops_per_token(spec, seq_len, rc, flash_attention=False):
    """(hardware, model) training FLOPs per token for recompute codes ``rc`` (array).

    Both from :func:`labutil.compute.hardware_flops_per_iter`. Without flash attention (Korthikanti
    et al. 2022 Eq. 7/8, Narayanan et al. 2021 eq. 3): selective recompute counts the attention core
    twice (GPT-3: +2.7 %), full recompute adds one forward pass of every layer (+33 % of the layer
    FLOPs). With flash attention the kernel's backward recomputes S and P itself (3.5 forward counts
    of the core, :func:`labutil.compute.attention_passes`), so "selective" executes exactly what
    "none" does, and the causal kernel skips the masked half of the scores. The model FLOPs (MFU
    numerator) stay PaLM's / Megatron's non-causal count in every case.
    """
    from . import compute

    s = float(seq_len)
    fa = bool(flash_attention)
    per = np.array([float(compute.hardware_flops_per_iter(spec, 1, s, r, flash_attention=fa)) / s
                    for r in RECOMPUTE])
    model = float(compute.model_flops_per_iter(spec, 1, s)) / s
    return per[np.asarray(rc)], model


def default_cluster(gpu, n_gpus, gpus_per_node=None, net_gbs=None):
    """The ``labutil.cluster.Cluster`` a search uses when none is given.

    ``Cluster.for_gpu``: the catalog system built on ``gpu`` (DGX/HGX reference servers: one compute
    NIC per GPU) with enough nodes for ``n_gpus``. ``net_gbs`` (legacy): achievable network
    bandwidth per GPU in GB/s, applied through the NIC line rate (nics_per_node · nic_gbps ·
    nic_efficiency / gpus_per_node = net_gbs · 8).
    """
    from .cluster import Cluster

    g = _gpu(gpu)
    n = validate.integer("n_gpus", n_gpus, lo=1)
    c = Cluster.for_gpu(g.name)
    if gpus_per_node is not None and validate.integer("gpus_per_node", gpus_per_node, lo=1) != c.gpus_per_node:
        import dataclasses

        c = dataclasses.replace(c, gpus_per_node=gpus_per_node,
                                scaleup_domain_gpus=max(gpus_per_node, min(c.scaleup_domain_gpus, gpus_per_node)))
    per_domain = max(1, c.scaleup_domain_gpus // c.gpus_per_node)   # NVL72: whole 72-GPU domains
    c = c.with_nodes(-(-max(1, -(-n // c.gpus_per_node)) // per_domain) * per_domain)
    if net_gbs is not None:
        import dataclasses

        per_gpu = validate.positive("net_gbs", net_gbs)
        c = dataclasses.replace(c, nic_gbps=per_gpu * 8.0 * c.gpus_per_node / (c.nics_per_node * c.nic_efficiency))
    return c


def group_collective_time_s(cluster, op, size_bytes, ranks, ranks_per_node):
    """Time of collective ``op`` over one parallel group, through the ``Cluster`` model.

    A group of ``ranks`` GPUs with ``ranks_per_node`` of them on each node: a TP group sits inside
    a node; the DP group of a layout with tp·pp ≥ 8 has one member per node, each reaching the
    others through its own NIC (per-rail rings). ``cluster.collective_time_s`` decides which hops
    are NVLink and which cross the network. Vectorised; 0 where ranks == 1.
    """
    size_bytes, ranks, per = np.broadcast_arrays(np.asarray(size_bytes, float), np.asarray(ranks, int),
                                                 np.asarray(ranks_per_node, int))
    one = ranks <= 1
    r = np.where(one, 2, ranks)
    q = np.clip(np.minimum(per, r), 1, cluster.gpus_per_node)
    # a group strided over nodes: q members per node must divide it (Megatron's rank order does)
    q = np.where(r % q == 0, q, 1)
    # one vectorised cluster call over the distinct (size, ranks, per-node) triples
    key = np.stack([size_bytes.ravel(), r.ravel().astype(float), q.ravel().astype(float)], axis=1)
    uniq, inv = np.unique(key, axis=0, return_inverse=True)
    dom = int(cluster.scaleup_domain_gpus)
    uneven = np.zeros(len(uniq), dtype=bool)
    if dom > cluster.gpus_per_node:
        # NVL72-style domains span several nodes: the group's members per domain must divide it;
        # a group that cannot be spread evenly is timed as if NVLink ended at the node (pessimistic)
        f = dom // cluster.gpus_per_node
        for i, row in enumerate(uniq):
            n_r, q_r = int(row[1]), int(row[2])
            while q_r > 1 and n_r % min(n_r, q_r * f):
                q_r -= 1
            row[2] = q_r
            uneven[i] = n_r % min(n_r, q_r * f) != 0
    tu = np.zeros(len(uniq))
    for mask, cl in ((~uneven, cluster), (uneven, None)):
        if not mask.any():
            continue
        if cl is None:
            import dataclasses

            cl = dataclasses.replace(cluster, scaleup_domain_gpus=cluster.gpus_per_node)
        tu[mask] = np.asarray(cl.collective_time_s(op, uniq[mask, 0], uniq[mask, 1].astype(int),
                                                   ranks_per_node=uniq[mask, 2].astype(int)), dtype=float)
    t = np.atleast_1d(tu)[np.asarray(inv).ravel()].reshape(size_bytes.shape)
    return np.where(one, 0.0, t)


def _estimate_arrays(spec, n_gpus, g, cluster, global_batch, seq_len, cols, *, optimizer, precision, efficiency,
                     dp_overlap, overhead_gb, interleave, flash_attention, gemm_precision=None, ep_overlap=0.0,
                     cp_overlap=1.0):
    """Memory and step time for column arrays ``cols`` (dp, tp, pp, cp, ep, mb, zero, sp, rc).

    The step-time model (per optimizer step of ``global_batch`` sequences), documented in
    :func:`search_layouts`. Returns (memory dict, time dict) of arrays.
    """
    from . import compute

    dp, tp, pp, cp, ep, mb, zero, sp, rc = (np.asarray(cols[k]) for k in (
        "dp", "tp", "pp", "cp", "ep", "micro_batch", "zero_stage", "sp", "recompute"))
    m = global_batch // (dp * mb)
    # a fused (flash) attention kernel never stores the s×s scores: for memory that is what
    # selective recompute does (labutil.memory module docstring)
    rc_mem = np.where(rc == 0, 1, rc) if flash_attention else rc
    mem = memory._training_memory_arrays(spec, tp, pp, dp, mb, m, zero, sp, rc_mem, seq_len, optimizer, precision,
                                         overhead_gb, cp=cp, ep=ep)
    f = lambda x: np.asarray(x, float)  # noqa: E731
    tp_f, pp_f, dp_f, cp_f, ep_f, mb_f, m_f = map(f, (tp, pp, dp, cp, ep, mb, m))
    s, h, L, V = float(seq_len), float(spec.hidden), float(spec.layers), float(spec.vocab)
    peak = g.peak_tflops(precision if precision != "fp32" else "tf32") * 1e12
    # the weight GEMMs may run in another format than the rest (FP8 training: DeepSeek-V3 §3.3 runs
    # the linear layers' GEMMs in FP8, attention and the rest in BF16); MFU stays against ``peak``
    peak_gemm = peak if gemm_precision is None else g.peak_tflops(gemm_precision) * 1e12
    hbm = g.hbm_gbs * 1e9
    by = 4.0 if precision == "fp32" else 2.0
    gpn = int(cluster.gpus_per_node)

    tokens = mb_f * s / cp_f                                   # GEMM rows on this GPU per micro-batch
    # the efficiency constants were fitted on A100; another GPU's matmuls reach a different share of its
    # peak (measured maximum achievable matmul FLOPS, compute.gemm_ceiling_scale)
    base_prec = "tf32" if precision == "fp32" else precision
    scale_gemm = compute.gemm_ceiling_scale(g, gemm_precision or base_prec)
    scale_attn = compute.gemm_ceiling_scale(g, base_prec)
    if efficiency is None:
        eff = np.asarray(compute.gemm_efficiency(tokens, h / tp_f)) * scale_gemm
    else:
        eff = np.full(np.broadcast(tokens, tp_f).shape, float(efficiency))
    # per layer, per micro-batch, forward, on one GPU
    n_act_layer = float(spec.non_embedding_params(active=True)) / L
    attn_fwd_tok = float(compute.attention_core_flops_per_token(spec, s)) / L
    gemm_flops = 2.0 * tokens * n_act_layer / tp_f
    # executed forward FLOPs of the attention core: a causal flash kernel skips the masked half of the
    # score tiles; an unfused one computes the whole s×s product (compute.FLASH_CAUSAL_FRACTION)
    attn_flops = tokens * attn_fwd_tok / tp_f * (compute.FLASH_CAUSAL_FRACTION if flash_attention else 1.0)
    ffn_act = (spec.experts_per_token + spec.shared_experts) * spec.moe_ffn_hidden if spec.is_moe else spec.ffn_hidden
    act_elems = (3.0 if spec.gated_mlp else 2.0) * ffn_act
    elt_bytes = by * tokens * (ELEMENTWISE_ELEMS_PER_HIDDEN * h / np.where(sp, tp_f, 1.0) + act_elems / tp_f)
    score_bytes = 0.0 if flash_attention else by * SCORE_ELEMS * tokens * s * spec.heads / tp_f
    # the attention score/value products are batched GEMMs whose inner dimension is head_dim
    # (QKᵀ: s × head_dim × s): they run at the efficiency of that narrow shape, fused or not.
    eff_attn = eff if efficiency is not None else \
        np.asarray(compute.gemm_efficiency(tokens, float(spec.head_dim))) * scale_attn
    t_gemm = gemm_flops / (peak_gemm * eff)
    t_attn = attn_flops / (peak * eff_attn)
    t_mem_other = elt_bytes / hbm
    t_mem_score = score_bytes / hbm
    fwd = t_gemm + t_attn + t_mem_other + t_mem_score          # one layer, one micro-batch, forward
    # backward = 2 × forward, except the flash kernel's backward, which recomputes S = QKᵀ and P inside
    # (2.5 × its forward, compute.FLASH_BWD_PER_FWD). Recompute: full re-runs the forward; selective
    # without flash attention counts the attention core twice more (Korthikanti Eq. 8: 3 × its forward
    # FLOPs) and re-streams the scores once; selective WITH flash attention adds nothing (the s×s
    # activations are never stored, the kernel's backward already recomputes them).
    attn_bwd = (compute.FLASH_BWD_PER_FWD - 2.0) * t_attn if flash_attention else 0.0
    sel_extra = 0.0 if flash_attention else 3.0 * t_attn + t_mem_score
    rc_extra = np.where(rc == 2, fwd, np.where(rc == 1, sel_extra, 0.0))
    compute_layer = 3.0 * fwd + attn_bwd + rc_extra

    # tensor parallelism: 2 all-reduces of tokens·h forward, 2 backward, 2 more when the forward is
    # re-run (Narayanan 2021 §2.3; SP: all-gather + reduce-scatter of the same volume, Korthikanti
    # §4.2.2). On the critical path (not overlapped in Megatron-LM).
    act_bytes = by * tokens * h
    n_tp = np.where(rc == 2, 6.0, 4.0)
    tp_one = group_collective_time_s(cluster, "all_reduce", act_bytes, tp, np.minimum(tp, gpn))
    tp_layer = n_tp * tp_one
    # context parallelism: every rank needs the K and V of the whole sequence (forward; K, V and their
    # gradients backward). A ring (Liu et al. 2023 ring attention; Megatron-Core CP) overlaps each block's
    # transfer with the attention core it feeds: cp_overlap = 1 hides it behind t_attn. Llama 3's CP
    # all-gathers K and V first and leaves that latency on the critical path (Llama 3 §3.3.2):
    # cp_overlap = 0. Same bytes either way.
    kv_bytes = 2.0 * by * tokens * spec.kv_dim / tp_f
    cp_one = group_collective_time_s(cluster, "all_gather", kv_bytes * cp_f, cp, np.clip(gpn // tp, 1, None))
    n_cp = np.where(rc == 2, 4.0, 3.0)
    cp_layer = n_cp * np.maximum(0.0, cp_one - cp_overlap * t_attn)
    # expert parallelism: dispatch + combine all-to-all of each token's hidden state to its top-k
    # experts, forward and backward (+2 with full recompute), on the MoE layers only.
    if spec.is_moe:
        a2a_bytes = by * tokens * h * spec.experts_per_token / tp_f
        ep_one = group_collective_time_s(cluster, "all_to_all", a2a_bytes, ep, np.clip(gpn // (tp * cp), 1, None))
        ep_layer = np.where(rc == 2, 6.0, 4.0) * ep_one * (spec.moe_layers / L) * (1.0 - ep_overlap)
    else:
        ep_layer = np.zeros_like(tokens)
    layers_stage = L / pp_f
    # the last stage also runs the logit layer (forward + backward, never recomputed)
    logits = 3.0 * 2.0 * tokens * h * V / tp_f / (peak_gemm * eff)
    # pipeline: each stage boundary sends the activations forward and their gradient back
    # (scatter/gather over the tp ranks, Narayanan §4.1); v model chunks per GPU multiply the sends.
    send_bytes = act_bytes / tp_f
    stride = tp * cp * dp
    cross = stride >= gpn
    pp_one = np.where(cross, np.asarray(cluster.p2p_time_s(send_bytes, cross_node=True), float),
                      np.asarray(cluster.p2p_time_s(send_bytes, cross_node=False), float))
    pp_mb = np.where(pp > 1, 2.0 * interleave * pp_one, 0.0)
    t_mb = layers_stage * (compute_layer + tp_layer + cp_layer + ep_layer) + logits + pp_mb
    compute_mb = layers_stage * compute_layer + logits
    bubble = (pp_f - 1.0) / (interleave * m_f)
    busy = m_f * t_mb
    bubble_s = bubble * busy
    # data parallelism: gradients of this GPU's stage shard reduced over dp·cp ranks (experts over
    # dp·cp/ep); ZeRO-3 also all-gathers the parameters again (1.5×, ZeRO §7). Overlapped with the
    # backward pass of the last micro-batch (Megatron-LM / PyTorch DDP bucketed reduction).
    grad_dense = by * mem["stage_params_dense"]
    grad_exp = by * mem["stage_params_expert"]
    dp_ranks = dp * cp
    dp_dom = np.clip(gpn // tp, 1, None)
    dp_s = group_collective_time_s(cluster, "all_reduce", grad_dense, dp_ranks, dp_dom)
    if spec.is_moe:
        dpe = np.maximum(dp_ranks // ep, 1)
        dp_s = dp_s + group_collective_time_s(cluster, "all_reduce", grad_exp, dpe, np.clip(gpn // (tp * cp * ep), 1, None))
    dp_s = dp_s * np.where(np.asarray(zero) == 3, 1.5, 1.0)
    window = dp_overlap * (2.0 / 3.0) * compute_mb
    dp_exposed = np.maximum(0.0, dp_s - window)
    local_params = (mem["stage_params_dense"] + mem["stage_params_expert"]) / np.where(np.asarray(zero) >= 1, dp_ranks, 1)
    opt_s = OPTIMIZER_BYTES_PER_PARAM * local_params / hbm
    step = busy + bubble_s + dp_exposed + opt_s
    hw_tok, model_tok = _executed_flops_per_token(spec, s, rc, flash_attention)
    total_tokens = float(global_batch) * s
    model_tflops = model_tok * total_tokens / (n_gpus * step) / 1e12
    hw_tflops = hw_tok * total_tokens / (n_gpus * step) / 1e12
    return mem, {"compute_s": m_f * compute_mb, "tp_comm_s": m_f * layers_stage * tp_layer,
                 "cp_comm_s": m_f * layers_stage * cp_layer, "ep_comm_s": m_f * layers_stage * ep_layer,
                 "bubble_s": bubble_s, "pp_comm_s": m_f * pp_mb, "dp_comm_s": dp_s, "dp_exposed_s": dp_exposed,
                 "optimizer_s": opt_s, "step_s": step, "bubble": bubble, "gemm_efficiency": eff,
                 "model_tflops_per_gpu": model_tflops, "hw_tflops_per_gpu": hw_tflops,
                 "mfu": model_tflops * 1e12 / peak, "hfu": hw_tflops * 1e12 / peak, "n_microbatches": m}


def tp_layer_times(spec, tp, cluster, *, micro_batch=1, seq_len=None, precision="bf16"):
    """Per layer and micro-batch (forward + backward): GEMM/attention time and TP all-reduce time vs tp.

    Why tensor parallelism stays inside a node: each doubling of tp halves the work per GPU and
    thins its GEMMs (:func:`labutil.compute.gemm_efficiency`), while every one of the 4 all-reduces
    per layer still moves the whole micro-batch's activations (2·s·b·h bytes) on the critical path;
    beyond ``cluster.gpus_per_node`` they also leave NVLink (``ranks_per_node`` = GPUs per node).
    Returns a dict of arrays over ``tp``: compute_s, comm_s, comm_share = comm / (compute + comm).
    """
    from . import compute

    t = np.atleast_1d(np.asarray(validate.integer("tp", tp, lo=1)))
    b = validate.integer("micro_batch", micro_batch, lo=1)
    s = float(spec.seq_len if seq_len is None else validate.integer("seq_len", seq_len, lo=1))
    validate.choice("precision", precision, memory.PRECISIONS)
    g = _gpu(cluster.gpu)
    peak = g.peak_tflops(precision if precision != "fp32" else "tf32") * 1e12
    by = 4.0 if precision == "fp32" else 2.0
    tokens = b * s
    scale = compute.gemm_ceiling_scale(g, "tf32" if precision == "fp32" else precision)
    eff = np.asarray(compute.gemm_efficiency(tokens, spec.hidden / t)) * scale
    eff_attn = float(compute.gemm_efficiency(tokens, float(spec.head_dim))) * scale
    n_layer = float(spec.non_embedding_params(active=True)) / spec.layers
    attn = float(compute.attention_core_flops_per_token(spec, s)) / spec.layers
    comp = 3.0 * tokens * (2.0 * n_layer / (peak * eff) + attn / (peak * eff_attn)) / t
    ar = group_collective_time_s(cluster.with_nodes(max(cluster.n_nodes, -(-int(t.max()) // cluster.gpus_per_node))),
                                 "all_reduce", by * tokens * spec.hidden, t, np.minimum(t, cluster.gpus_per_node))
    comm_s = 4.0 * ar
    return {"tp": t, "compute_s": comp, "comm_s": comm_s, "comm_share": comm_s / (comp + comm_s)}


_TIME_KEYS = ("step_s", "compute_s", "bubble_s", "tp_comm_s", "pp_comm_s", "dp_exposed_s", "mfu", "cp_comm_s",
              "ep_comm_s", "dp_comm_s", "optimizer_s", "hfu", "gemm_efficiency", "model_tflops_per_gpu",
              "hw_tflops_per_gpu")
_MEM_KEYS = ("memory_gb", "weights_gb", "grads_gb", "optimizer_gb", "activations_gb")


@dataclass(frozen=True)
class LayoutEstimate:
    """One layout with its per-GPU memory (GB) and estimated step time (s) and its parts.

    ``step_s = compute + tp + cp + ep + pp sends (all × micro-batches) + bubble + exposed dp +
    optimizer``; ``mfu`` / ``hfu``: model / hardware (recompute counted) FLOPs per GPU per second
    over the dense peak (cluster-level, as PaLM and Llama 3 report MFU).
    """

    layout: Layout
    memory_gb: float
    fits: bool
    weights_gb: float
    grads_gb: float
    optimizer_gb: float
    activations_gb: float
    step_s: float
    compute_s: float
    bubble_s: float
    tp_comm_s: float
    pp_comm_s: float
    dp_exposed_s: float
    mfu: float
    cp_comm_s: float = 0.0
    ep_comm_s: float = 0.0
    dp_comm_s: float = 0.0
    optimizer_s: float = 0.0
    hfu: float = 0.0
    gemm_efficiency: float = 0.0
    model_tflops_per_gpu: float = 0.0
    hw_tflops_per_gpu: float = 0.0

    @property
    def tokens_per_s(self) -> float:
        return float("nan") if self.step_s <= 0 else self.layout.global_batch / self.step_s


@dataclass(frozen=True)
class SearchResult:
    """Every candidate layout as numpy columns, best (shortest step) first.

    ``columns`` maps a name to an array (dp, tp, pp, cp, ep, micro_batch, zero_stage, sp, recompute
    code 0/1/2, memory_gb, weights_gb, grads_gb, optimizer_gb, activations_gb, step_s, compute_s,
    bubble_s, tp_comm_s, pp_comm_s, cp_comm_s, ep_comm_s, dp_comm_s, dp_exposed_s, optimizer_s,
    mfu, hfu, gemm_efficiency, fits). ``len()``, indexing and iteration give :class:`LayoutEstimate`.
    """

    columns: dict
    n_gpus: int
    gpu: str
    usable_gb: float
    global_batch: int
    n_candidates: int = 0
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return int(len(self.columns["step_s"]))

    def __getitem__(self, i) -> LayoutEstimate:
        c = self.columns
        if not -len(self) <= i < len(self):
            raise IndexError(f"layout index {i} out of range for {len(self)} layouts")
        lay = Layout(int(c["dp"][i]), int(c["tp"][i]), int(c["pp"][i]), int(c["micro_batch"][i]), self.global_batch,
                     int(c["zero_stage"][i]), bool(c["sp"][i]), RECOMPUTE[int(c["recompute"][i])], int(c["ep"][i]),
                     cp=int(c["cp"][i]), interleave=int(self.meta.get("interleave", 1)))
        v = {k: float(c[k][i]) for k in _MEM_KEYS + _TIME_KEYS}
        return LayoutEstimate(lay, v["memory_gb"], bool(c["fits"][i]), v["weights_gb"], v["grads_gb"],
                              v["optimizer_gb"], v["activations_gb"], v["step_s"], v["compute_s"], v["bubble_s"],
                              v["tp_comm_s"], v["pp_comm_s"], v["dp_exposed_s"], v["mfu"], v["cp_comm_s"],
                              v["ep_comm_s"], v["dp_comm_s"], v["optimizer_s"], v["hfu"], v["gemm_efficiency"],
                              v["model_tflops_per_gpu"], v["hw_tflops_per_gpu"])

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    @property
    def best(self) -> LayoutEstimate:
        if not len(self) or not bool(self.columns["fits"][0]):
            raise ValueError("no feasible layout: every candidate exceeds the usable memory "
                             f"({self.usable_gb:.1f} GB per GPU)")
        return self[0]

    def top(self, k: int = 5) -> list[LayoutEstimate]:
        k = validate.integer("k", k, lo=1)
        return [self[i] for i in range(min(k, len(self)))]

    def near_best(self, within: float = 0.05) -> list[LayoutEstimate]:
        """Every feasible layout whose step time is within ``within`` (fraction) of the best one.

        The model's uncertainty (±10 % against published runs, ``labutil.published_runs``) is larger
        than the gaps between these layouts: treat them as equally good and choose among them by
        other criteria (memory headroom, fewer pipeline stages, simpler configuration).
        """
        w = validate.number("within", within, lo=0.0, hi=1.0)
        best = self.best.step_s
        c = self.columns
        idx = np.flatnonzero(c["fits"] & (c["step_s"] <= best * (1.0 + w)))
        return [self[int(i)] for i in idx]

    def rows(self, k: int = 10) -> list[dict]:
        """Plain dicts of the best ``k`` layouts, for ``labutil.notebook.show_table``."""
        out = []
        for e in self.top(k):
            L = e.layout
            row = {"dp": L.dp, "tp": L.tp, "pp": L.pp}
            if L.cp > 1 or L.ep > 1:
                row.update({"cp": L.cp, "ep": L.ep})
            row.update({"mb": L.micro_batch, "ZeRO": L.zero_stage, "SP": "yes" if L.sp else "no",
                        "recompute": L.recompute, "mem_GB": round(e.memory_gb, 1), "step_s": round(e.step_s, 2),
                        "bubble_%": round(100 * e.bubble_s / e.step_s, 1), "MFU_%": round(100 * e.mfu, 1)})
            out.append(row)
        return out


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


_COLS = ("dp", "tp", "pp", "cp", "ep", "micro_batch", "zero_stage", "sp", "recompute")


def candidate_columns(spec, n_gpus, global_batch, *, gpus_per_node=8, micro_batches=(1, 2, 4, 8),
                      zero_stages=(0, 1, 2, 3), recompute=RECOMPUTE, sp_options=(False, True),
                      cp_options=(1,), ep_options=(1,), allow_zero23_with_pp=False) -> dict:
    """All structurally valid (dp, tp, pp, cp, ep, micro_batch, zero, sp, recompute) combinations as arrays.

    tp runs over the divisors of n_gpus that divide heads, kv_heads and ffn_hidden and are
    ≤ gpus_per_node; pp over the divisors of layers; cp over ``cp_options`` dividing seq_len;
    with tp·pp·cp | n_gpus; ep over ``ep_options`` dividing dp and the expert count (MoE only);
    micro_batch such that dp·micro_batch divides global_batch. SP=True only with tp > 1.
    ZeRO-2/3 with pp > 1 are dropped unless ``allow_zero23_with_pp`` (DeepSpeed does not support it).
    """
    n = validate.integer("n_gpus", n_gpus, lo=1)
    B = validate.integer("global_batch", global_batch, lo=1)
    for name, seq in (("micro_batches", micro_batches), ("zero_stages", zero_stages), ("cp_options", cp_options),
                      ("ep_options", ep_options)):
        if len(seq) == 0:
            raise ValueError(f"{name} must not be empty")
    mbs = np.array([validate.integer("micro_batches", x, lo=1) for x in micro_batches])
    zs = np.array([validate.integer("zero_stages", x, lo=0, hi=3) for x in zero_stages])
    cps = [validate.integer("cp_options", x, lo=1) for x in cp_options]
    eps = [validate.integer("ep_options", x, lo=1) for x in ep_options]
    rcs = np.array([RECOMPUTE.index(validate.choice("recompute", r, RECOMPUTE)) for r in recompute])
    if len(rcs) == 0:
        raise ValueError("recompute must not be empty")
    sps = [bool(x) for x in sp_options]
    if not sps:
        raise ValueError("sp_options must not be empty")
    experts = spec.num_experts if getattr(spec, "is_moe", False) else 0
    mp = [(t, p, c, e) for t in _divisors(n) if t <= gpus_per_node and spec.heads % t == 0
          and spec.kv_heads % t == 0 and spec.ffn_hidden % t == 0
          for p in _divisors(spec.layers) for c in cps if spec.seq_len % c == 0 and n % (t * p * c) == 0
          for e in eps if (e == 1 or (experts and experts % e == 0 and (n // (t * p * c)) % e == 0))]
    if not mp:
        return {k: np.zeros(0, dtype=int) for k in _COLS}
    arr = np.array(mp)
    sp_arr = np.array(sps)
    I, J, K, S, R = np.meshgrid(np.arange(len(mp)), np.arange(len(mbs)), np.arange(len(zs)),
                                np.arange(len(sp_arr)), np.arange(len(rcs)), indexing="ij")
    I, J, K, S, R = (x.ravel() for x in (I, J, K, S, R))
    t, p, c, e = arr[I, 0], arr[I, 1], arr[I, 2], arr[I, 3]
    b, z, s_, r = mbs[J], zs[K], sp_arr[S], rcs[R]
    d = n // (t * p * c)
    ok = (B % (d * b) == 0) & ~(s_ & (t == 1))
    if not allow_zero23_with_pp:
        ok &= ~((z >= 2) & (p > 1))
    return {"dp": d[ok], "tp": t[ok], "pp": p[ok], "cp": c[ok], "ep": e[ok], "micro_batch": b[ok],
            "zero_stage": z[ok], "sp": s_[ok], "recompute": r[ok]}


def _gemm_precision(g, gemm_precision):
    """Validated GEMM number format (None = the training precision); must have a catalog peak on ``g``."""
    if gemm_precision is None:
        return None
    from .hardware import PRECISIONS as GPU_PRECISIONS

    validate.choice("gemm_precision", gemm_precision, GPU_PRECISIONS)
    g.peak_tflops(gemm_precision)      # raises if the GPU has no such peak (A100: no FP8)
    return gemm_precision


def _resolve_cluster(g, n, cluster, gpus_per_node, net_gbs, nvlink_gbs):
    if nvlink_gbs is not None:
        raise ValueError("nvlink_gbs is no longer a parameter: NVLink bandwidth comes from the cluster model; "
                         "pass cluster=labutil.cluster.Cluster(...)")
    if cluster is None:
        return default_cluster(g, n, gpus_per_node, net_gbs)
    if net_gbs is not None:
        raise ValueError("pass either cluster or net_gbs, not both")
    if cluster.n_gpus < n:
        cluster = cluster.with_nodes(-(-n // cluster.gpus_per_node))
    return cluster


def search_layouts(spec, n_gpus, gpu, global_batch, *, cluster=None, seq_len=None, gpus_per_node=None,
                   micro_batches=(1, 2, 4, 8), zero_stages=(0, 1, 2, 3), recompute=RECOMPUTE,
                   sp_options=(False, True), cp_options=(1,), ep_options=(1,), interleave=1, optimizer="adam",
                   precision="bf16", reserve_frac=DEFAULT_RESERVE_FRAC, efficiency=None, net_gbs=None,
                   nvlink_gbs=None, dp_overlap=1.0, flash_attention=True, allow_zero23_with_pp=False,
                   include_infeasible=False, gemm_precision=None, ep_overlap=0.0,
                   cp_overlap=1.0) -> SearchResult:
    """Every feasible layout of ``spec`` on ``n_gpus`` GPUs of type ``gpu``, best (fastest) first.

    Memory: :func:`labutil.memory.training_memory_gb` (heaviest stage; activations split by tp/sp and
    cp, expert weights by ep); a layout fits when it is ≤ hbm_gb·(1 − reserve_frac). Step time per
    optimizer step of ``global_batch`` sequences, per GPU of the slowest (last) stage::

        per layer and micro-batch (forward; backward = 2×, full recompute +1×; without flash
        attention selective recompute adds 3× the attention core, Korthikanti Eq. 8):
          GEMMs      2·tokens·N_active/L / tp  at  peak · gemm_efficiency(tokens, hidden/tp)
                     · gemm_ceiling_scale(gpu) (the measured matmul ceiling relative to the A100 fit)
          attention  attention-core FLOPs / tp at gemm_efficiency(tokens, head_dim); with flash
                     attention (default) the causal kernel executes half of them and its backward
                     is 2.5× its forward (S, P recomputed in the kernel; compute.attention_passes),
                     so selective recompute costs nothing extra there
          memory-bound kernels  (norms, dropout, residual, activation; the s×s scores without
                     flash attention) bytes / HBM bandwidth
          tp         4 all-reduces of tokens·h (6 with full recompute) over the TP group  (exposed)
          cp         K/V exchange over the CP group, exposed beyond cp_overlap × the attention it feeds
          ep         4 all-to-alls (6 with full recompute) of tokens·h·top_k on MoE layers  (exposed)
        tokens = micro_batch · seq_len / cp
        t_mb   = layers/pp · (compute + tp + cp + ep) + logit layer + 2·v pipeline sends
        step   = m · t_mb · (1 + (pp−1)/(v·m))          (1F1B, v = interleave; Narayanan 2021 §2.2)
                 + dp all-reduce of the stage's gradients over dp·cp, exposed beyond dp_overlap × the
                   backward of one micro-batch (×1.5 for ZeRO-3) + optimizer step (HBM-bound)

    ``gemm_precision`` (e.g. "fp8") runs the weight GEMMs at that format's peak (FP8 training);
    With ``flash_attention`` (default) selective recompute is identical to none in memory and time, so
    when both are asked for only "none" is enumerated.
    ``cp_overlap`` ∈ [0, 1]: how much of the CP K/V exchange hides behind the attention core (1: a ring
    overlapped with it, Megatron-Core; 0: Llama 3's all-gather before attention, exposed, §3.3.2).
    ``ep_overlap`` ∈ [0, 1] hides that share of the expert all-to-alls behind computation (DeepSeek-V3's
    DualPipe overlaps them almost fully; default 0 = on the critical path).

    Every collective goes through ``labutil.cluster`` (:func:`group_collective_time_s`): ``cluster``
    (a ``Cluster``; default: the catalog reference system of ``gpu``, ``default_cluster``) decides
    which hops are NVLink and which cross the network. ``efficiency`` (optional) replaces the
    shape-dependent :func:`labutil.compute.gemm_efficiency` by a constant. Returns a
    :class:`SearchResult`; ``include_infeasible=True`` keeps layouts that do not fit (sorted after
    those that do). Vectorised over all candidates (no Python loop over layouts).
    """
    g = _gpu(gpu)
    n = validate.integer("n_gpus", n_gpus, lo=1)
    B = validate.integer("global_batch", global_batch, lo=1)
    s = spec.seq_len if seq_len is None else validate.integer("seq_len", seq_len, lo=1)
    rf = validate.number("reserve_frac", reserve_frac, lo=0.0, hi=1.0, hi_open=True)
    eff = None if efficiency is None else validate.fraction("efficiency", efficiency)
    ov = validate.number("dp_overlap", dp_overlap, lo=0.0, hi=1.0)
    v = validate.integer("interleave", interleave, lo=1)
    validate.choice("optimizer", optimizer, memory.OPTIMIZERS)
    validate.choice("precision", precision, memory.PRECISIONS)
    if not isinstance(flash_attention, (bool, np.bool_)):
        raise TypeError(f"flash_attention must be a bool; got {flash_attention!r}")
    gp, eo = _gemm_precision(g, gemm_precision), validate.number("ep_overlap", ep_overlap, lo=0.0, hi=1.0)
    co = validate.number("cp_overlap", cp_overlap, lo=0.0, hi=1.0)
    cl = _resolve_cluster(g, n, cluster, gpus_per_node, None if net_gbs is None else net_gbs, nvlink_gbs)
    # tensor parallelism may span the whole NVLink domain (8 GPUs in an HGX node, 72 in a GB200 NVL72 rack)
    gpn = cl.scaleup_domain_gpus if gpus_per_node is None else validate.integer("gpus_per_node", gpus_per_node, lo=1)
    if flash_attention and "none" in recompute and "selective" in recompute:
        # under flash attention "selective" is "none" (same memory, same FLOPs): one candidate, not two
        recompute = tuple(r for r in recompute if r != "selective")
    cols = candidate_columns(spec, n, B, gpus_per_node=gpn, micro_batches=micro_batches, zero_stages=zero_stages,
                             recompute=recompute, sp_options=sp_options, cp_options=cp_options, ep_options=ep_options,
                             allow_zero23_with_pp=allow_zero23_with_pp)
    if v > 1:
        keep_v = (spec.layers % (cols["pp"] * v) == 0) & (cols["pp"] > 1)
        cols = {k: a[keep_v] for k, a in cols.items()}
    usable = g.hbm_gb * (1.0 - rf)
    n_cand = int(len(cols["dp"]))
    if n_cand:
        mem, t = _estimate_arrays(spec, n, g, cl, B, s, cols, optimizer=optimizer, precision=precision,
                                  efficiency=eff, dp_overlap=ov, overhead_gb=0.0, interleave=v,
                                  flash_attention=bool(flash_attention), gemm_precision=gp, ep_overlap=eo,
                                  cp_overlap=co)
    else:
        mem = {k: np.zeros(0) for k in ("weights_gb", "grads_gb", "optimizer_gb", "activations_gb", "logits_gb",
                                        "total_gb")}
        t = {k: np.zeros(0) for k in _TIME_KEYS}
    fits = mem["total_gb"] <= usable
    allc = dict(cols)
    allc.update({"memory_gb": mem["total_gb"], "weights_gb": mem["weights_gb"], "grads_gb": mem["grads_gb"],
                 "optimizer_gb": mem["optimizer_gb"], "activations_gb": mem["activations_gb"] + mem["logits_gb"],
                 "fits": fits})
    for k in _TIME_KEYS:
        allc[k] = np.broadcast_to(np.asarray(t[k], float), fits.shape)
    keep = np.ones_like(fits) if include_infeasible else fits
    idx = np.flatnonzero(keep)
    order = np.lexsort((allc["memory_gb"][idx], allc["step_s"][idx], ~fits[idx]))
    sel = idx[order]
    out = {k: np.asarray(a)[sel] for k, a in allc.items()}
    return SearchResult(out, n, g.name, float(usable), B, n_cand,
                        {"efficiency": eff, "cluster": cl, "reserve_frac": rf, "seq_len": s, "interleave": v,
                         "flash_attention": bool(flash_attention)})


def estimate_layout(spec, layout: Layout, n_gpus, gpu, *, cluster=None, seq_len=None, gpus_per_node=None,
                    optimizer="adam", precision="bf16", reserve_frac=DEFAULT_RESERVE_FRAC, efficiency=None,
                    net_gbs=None, nvlink_gbs=None, dp_overlap=1.0, flash_attention=True,
                    uneven_stages=False, gemm_precision=None, ep_overlap=0.0, cp_overlap=1.0) -> LayoutEstimate:
    """Memory and step-time estimate of ONE layout (same model as :func:`search_layouts`).

    Checks the layout first (:func:`check_layout`); the result's ``fits`` says whether it fits.
    ``layout.interleave`` sets the number of model chunks per GPU (interleaved 1F1B).
    ``uneven_stages=True`` accepts pp (·interleave) that does not divide the layer count (stages of
    unequal depth, e.g. Llama 3 405B's 126 layers on 16 stages, Llama 3 §3.3.2); the stage depth
    is then the average layers/pp.
    """
    g = _gpu(gpu)
    n = validate.integer("n_gpus", n_gpus, lo=1)
    cl = _resolve_cluster(g, n, cluster, gpus_per_node, net_gbs, nvlink_gbs)
    # tensor parallelism may span the whole NVLink domain (8 GPUs in an HGX node, 72 in a GB200 NVL72 rack)
    gpn = cl.scaleup_domain_gpus if gpus_per_node is None else validate.integer("gpus_per_node", gpus_per_node, lo=1)
    problems = [p for p in layout_problems(spec, layout, n, gpn)
                if not (uneven_stages and "does not divide layers" in p)]
    if problems:
        raise ValueError("invalid layout: " + "; ".join(problems))
    cols = {"dp": np.array([layout.dp]), "tp": np.array([layout.tp]), "pp": np.array([layout.pp]),
            "cp": np.array([layout.cp]), "ep": np.array([layout.ep]),
            "micro_batch": np.array([layout.micro_batch]), "zero_stage": np.array([layout.zero_stage]),
            "sp": np.array([layout.sp]), "recompute": np.array([RECOMPUTE.index(layout.recompute)])}
    s = spec.seq_len if seq_len is None else validate.integer("seq_len", seq_len, lo=1)
    eff = None if efficiency is None else validate.fraction("efficiency", efficiency)
    rf = validate.number("reserve_frac", reserve_frac, lo=0.0, hi=1.0, hi_open=True)
    if not isinstance(flash_attention, (bool, np.bool_)):
        raise TypeError(f"flash_attention must be a bool; got {flash_attention!r}")
    mem, t = _estimate_arrays(spec, n, g, cl, layout.global_batch, s, cols, optimizer=optimizer,
                              precision=precision, efficiency=eff,
                              dp_overlap=validate.number("dp_overlap", dp_overlap, lo=0.0, hi=1.0), overhead_gb=0.0,
                              interleave=layout.interleave, flash_attention=bool(flash_attention),
                              gemm_precision=_gemm_precision(g, gemm_precision),
                              ep_overlap=validate.number("ep_overlap", ep_overlap, lo=0.0, hi=1.0),
                              cp_overlap=validate.number("cp_overlap", cp_overlap, lo=0.0, hi=1.0))
    f = lambda a: float(np.asarray(a).ravel()[0])  # noqa: E731
    total = f(mem["total_gb"])
    v = {k: f(t[k]) for k in _TIME_KEYS}
    return LayoutEstimate(layout, total, total <= g.hbm_gb * (1 - rf), f(mem["weights_gb"]), f(mem["grads_gb"]),
                          f(mem["optimizer_gb"]), f(mem["activations_gb"]) + f(mem["logits_gb"]), v["step_s"],
                          v["compute_s"], v["bubble_s"], v["tp_comm_s"], v["pp_comm_s"], v["dp_exposed_s"], v["mfu"],
                          v["cp_comm_s"], v["ep_comm_s"], v["dp_comm_s"], v["optimizer_s"], v["hfu"],
                          v["gemm_efficiency"], v["model_tflops_per_gpu"], v["hw_tflops_per_gpu"])


# ---------------------------------------------------------------------------------------------
# 实操: Megatron-LM arguments from a layout, and its iteration log parsed
# ---------------------------------------------------------------------------------------------
def megatron_args(layout: Layout, *, seq_len: int | None = None, num_layers: int | None = None) -> list[str]:
    """Megatron-LM ``pretrain_gpt.py`` parallelism arguments for ``layout`` (an argument list).

    Flag names are Megatron-LM's (megatron/training/arguments.py): --tensor-model-parallel-size,
    --pipeline-model-parallel-size, --sequence-parallel, --micro-batch-size, --global-batch-size,
    --recompute-granularity {selective,full} (full also needs --recompute-method/--recompute-num-layers),
    --use-distributed-optimizer (Megatron's ZeRO-1-style sharding of optimizer states over dp).
    dp is not a flag: Megatron derives it as world_size / (tp · pp).
    """
    args = ["--tensor-model-parallel-size", str(layout.tp), "--pipeline-model-parallel-size", str(layout.pp),
            "--micro-batch-size", str(layout.micro_batch), "--global-batch-size", str(layout.global_batch)]
    if seq_len is not None:
        args += ["--seq-length", str(validate.integer("seq_len", seq_len, lo=1))]
    if layout.sp:
        args.append("--sequence-parallel")
    if layout.recompute == "selective":
        args += ["--recompute-granularity", "selective"]
    elif layout.recompute == "full":
        args += ["--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1"]
    if layout.zero_stage == 1:
        args.append("--use-distributed-optimizer")
    elif layout.zero_stage > 1:
        raise ValueError(f"zero_stage={layout.zero_stage}: Megatron-LM's distributed optimizer shards optimizer "
                         "states only (ZeRO-1); use DeepSpeed or PyTorch FSDP for ZeRO-2/3")
    if layout.ep > 1:
        args += ["--expert-model-parallel-size", str(layout.ep)]
    if layout.cp > 1:
        args += ["--context-parallel-size", str(layout.cp)]
    if layout.interleave > 1:
        if num_layers is None:
            raise ValueError("interleave > 1: pass num_layers (the model's layer count) to compute "
                             "--num-layers-per-virtual-pipeline-stage")
        per = validate.integer("num_layers", num_layers, lo=1)
        if per % (layout.pp * layout.interleave):
            raise ValueError(f"num_layers={per} is not divisible by pp*interleave = {layout.pp * layout.interleave}")
        args += ["--num-layers-per-virtual-pipeline-stage", str(per // (layout.pp * layout.interleave))]
    return args


@dataclass(frozen=True)
class MegatronIteration:
    """One Megatron-LM training log line (values as printed; None where absent)."""

    iteration: int
    elapsed_ms: float
    global_batch: int | None
    tflops_per_gpu: float | None
    lm_loss: float | None




def parse_megatron_log(text) -> list[MegatronIteration]:
    """Parse Megatron-LM iteration lines (training_log in megatron/training/training.py), e.g.::

        iteration       10/  500000 | consumed samples:        15360 | elapsed time per iteration (ms): 6310.2 |
        throughput per GPU (TFLOP/s/GPU): 524.6 | learning rate: 1.5E-05 | global batch size:  1536 |
        lm loss: 8.0721E+00 | loss scale: 1.0 | grad norm: 2.013 | number of skipped iterations:   0 | ...

    Lines that are not iteration lines are ignored; raises ``labutil.parsers.ParseError`` (a
    ValueError) when no iteration line is found.
    """
    import re

    from .parsers._common import ParseError, clean_lines, require_text

    text = require_text(text, "megatron log")
    it_re = re.compile(r"iteration\s+(\d+)\s*/\s*\d+")
    out = []
    for line in clean_lines(text):
        m = it_re.search(line)
        if not m or "|" not in line:
            continue
        fields = {}
        for part in line.split("|"):
            if ":" in part:
                k, _, v = part.rpartition(":")
                fields[k.strip().lower()] = v.strip()
        try:
            elapsed = float(fields["elapsed time per iteration (ms)"])
        except (KeyError, ValueError):
            continue
        if not (math.isfinite(elapsed) and elapsed > 0):
            continue  # a garbled time is not an iteration we can use

        def num(key, cast=float):
            try:
                x = float(fields[key])
            except (KeyError, ValueError):
                return None
            return cast(x) if math.isfinite(x) else None

        out.append(MegatronIteration(int(m.group(1)), elapsed, num("global batch size", int),
                                     num("throughput per gpu (tflop/s/gpu)"), num("lm loss")))
    if not out:
        raise ParseError("megatron log: no 'iteration N/ M | ... | elapsed time per iteration (ms): X |' line found")
    return out


#: Illustrative Megatron-LM log lines of a gpt3-175b run on 1,024 H100 (dp=8 tp=4 pp=32), in the
#: format of megatron/training/training.py ``training_log`` with --log-throughput; values invented.
MEGATRON_LOG_SAMPLE = """\
[2026-03-02 10:12:41] iteration       10/  500000 | consumed samples:        15360 | elapsed time per iteration (ms): 7204.8 | throughput per GPU (TFLOP/s/GPU): 459.4 | learning rate: 1.500000E-06 | global batch size:  1536 | lm loss: 9.871203E+00 | loss scale: 1.0 | grad norm: 4.512 | number of skipped iterations:   0 | number of nan iterations:   0 |
[2026-03-02 10:13:53] iteration       20/  500000 | consumed samples:        30720 | elapsed time per iteration (ms): 7161.3 | throughput per GPU (TFLOP/s/GPU): 462.2 | learning rate: 3.000000E-06 | global batch size:  1536 | lm loss: 8.903114E+00 | loss scale: 1.0 | grad norm: 2.377 | number of skipped iterations:   0 | number of nan iterations:   0 |
[2026-03-02 10:15:05] iteration       30/  500000 | consumed samples:        46080 | elapsed time per iteration (ms): 7188.9 | throughput per GPU (TFLOP/s/GPU): 460.4 | learning rate: 4.500000E-06 | global batch size:  1536 | lm loss: 8.215550E+00 | loss scale: 1.0 | grad norm: 1.904 | number of skipped iterations:   0 | number of nan iterations:   0 |
"""
