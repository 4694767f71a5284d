"""Step time of a parallel layout on a cluster, and the search over every layout.

Taught in ch08 (并行策略) and used by ch04, ch07, ch24 and ch30: :func:`estimate_layout` times ONE
``labutil.parallel.Layout``; :func:`search_layouts` times every valid layout at once (numpy columns,
no Python loop over layouts) and ranks them. Memory comes from ``labutil.memory`` (ch07), every
collective from ``labutil.cluster`` (ch13: NVLink vs network hops), FLOPs from
``labutil.compute.hardware_flops_per_iter`` and GEMM efficiency from ``compute.gemm_efficiency``;
the model is compared with published runs in ``labutil.published_runs``.

Sources
-------
- Narayanan et al. 2021 (SC'21, arXiv:2104.04473): 1F1B and interleaved pipeline schedules
  (§2.2), TP all-reduces per layer (§2.3), scatter/gather of pipeline sends (§4.1).
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
- ZeRO-3 fetch granularity (:data:`ZERO3_FETCH`): DeepSpeed's 2021 code (one list-API collective per parameter
  tensor, device-synchronised, PRs 1188 and 1453) against FSDP's flat parameter per layer (Zhao et al. 2023);
  all_gather / reduce_scatter are NCCL rings, (n-1) hops (github.com/NVIDIA/nccl/issues/1473, 1594).
- LLaMA's checkpointing (Touvron et al. 2023a §2.4): linear outputs kept, element-wise ops re-run in backward
  (``nongemm_recompute``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from . import compute, memory, validate
from .cluster import Cluster
from .hardware import GPU, PRECISIONS as GPU_PRECISIONS, gpu as gpu_lookup
from .parallel import RECOMPUTE, Layout, layout_problems

__all__ = ["DEFAULT_RESERVE_FRAC", "DEFAULT_SYSTEM_FOR_GPU", "NONGEMM_BYTES", "KERNELS", "nongemm_bytes_per_token",
           "SCORE_ELEMS", "OPTIMIZER_BYTES_PER_PARAM", "default_cluster", "group_collective_time_s", "tp_layer_times",
           "LayoutEstimate", "SearchResult", "candidate_columns", "search_layouts", "estimate_layout", "plausibility",
           "expert_parallel_options", "tp_comm_share_rule", "hide_threshold_tokens"]

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

#: Time outside the GEMMs, per layer type: HBM bytes-equivalent per element of one layer's forward +
#: backward pass, 16-bit activations, for the two ways frameworks implement them. "fused": one kernel per
#: op (Megatron-LM's fused LayerNorm / bias-GeLU / bias-dropout-add, Transformer Engine, Liger-Kernel's
#: Triton kernels); "eager": PyTorch eager code as in Meta's reference Llama model (RMSNorm computed in
#: fp32 with pow/mean/rsqrt, rotary through complex tensors; facebookresearch/llama model.py, which the
#: PyTorch/IBM FSDP work started from) and Hugging Face's models.
#:
#: Measured (norm, rope, cross-entropy): Liger-Kernel's benchmark, linkedin/Liger-Kernel
#: benchmark/data/a100_all_benchmark_data.csv (liger 0.5.2, A100 80GB PCIe at 1,935 GB/s, bf16, median
#: of the "full" = forward + backward timing at the largest size, converted to bytes at that bandwidth):
#: rms_norm M=2048, H=16384: liger 0.281 ms -> 16.2 B/element, huggingface 3.609 ms -> 208 B/element;
#: rope T=16384 (32 q heads over 8,192, 8 kv heads): liger 0.817 ms -> 9.4 B per q/k element, huggingface
#: 8.679 ms -> 100 B; cross_entropy B·T=16384, V=131072: liger 25.3 ms -> 22.8 B per logit, huggingface
#: 61.1 ms -> 55.0 B. The ratio eager/fused these imply for a Llama-2-7B layer (≈ +19 % of its time on an
#: A100, ``nongemm_bytes_per_token``) matches what compiling Meta's eager Llama code bought on A100
#: (PyTorch blog "Maximizing Training Throughput Using PyTorch FSDP and Torch.compile", IBM/Meta 2024:
#: 7B from 57 % to 68 % MFU, +10-23 % over model sizes).
#: Counted (no isolating benchmark): the gated/GeLU activation and the residual adds, from the tensors
#: each kernel reads and writes (bf16, 1-byte dropout masks): SwiGLU fused 16 B per ffn element (forward
#: reads gate and up, writes the product; backward reads three, writes two), eager 26 B (silu and mul as
#: separate kernels and backward nodes); bias-GeLU fused 10 B, eager 18 B; residual add without dropout 6 B
#: per hidden element (the backward passes the gradient through), with dropout (bias-dropout-add) fused
#: 12 B, eager 18 B. Liger's SwiGLU-MLP benchmark (GEMMs included, T=8192, B=4) times huggingface 133 ms
#: and liger 135 ms: the activation is a few percent of the MLP either way, as these counts say.
#: Kernel-launch latency (a few µs per kernel) is not modelled: at the ≥ 2,048 tokens per micro-batch
#: of the runs modelled here every kernel runs far longer than its launch.
NONGEMM_BYTES = {
    "fused": {"norm": 16.2, "rope": 9.4, "cross_entropy": 22.8, "swiglu": 16.0, "gelu": 10.0,
              "residual": 6.0, "residual_dropout": 12.0},
    "eager": {"norm": 208.0, "rope": 100.0, "cross_entropy": 55.0, "swiglu": 26.0, "gelu": 18.0,
              "residual": 6.0, "residual_dropout": 18.0},
}
KERNELS = tuple(NONGEMM_BYTES)


def nongemm_bytes_per_token(spec, tp=1, sp=False, kernels: str = "fused"):
    """HBM bytes-equivalent (forward + backward) one token costs in one layer's non-GEMM kernels on a GPU.

    Two norms and two residual adds per layer over hidden/t with sequence parallelism (the sequence is
    split over the t ranks between the TP regions, Korthikanti et al. 2022 §4.2.2), over hidden without;
    rotary embedding of Q and K (q_dim + kv_dim)/t for rotary models (not GPT's learned positions, not
    ALiBi); the MLP activation over ffn/t (the top-k routed + shared experts' width for an MoE). Time =
    bytes / the GPU's HBM bandwidth (the constants include the kernels' achieved share of it).
    ``kernels``: "fused" or "eager" (:data:`NONGEMM_BYTES`). Arrays over tp / sp broadcast.
    """
    validate.choice("kernels", kernels, KERNELS)
    k = NONGEMM_BYTES[kernels]
    t = np.asarray(validate.integer("tp", tp, lo=1), float)
    tsp = np.where(np.asarray(sp, bool), t, 1.0)
    h = float(spec.hidden)
    res = k["residual_dropout"] if getattr(spec, "dropout", False) else k["residual"]
    per_h = (2.0 * k["norm"] + 2.0 * res) * h / tsp
    rope = k["rope"] * float(spec.q_dim + spec.kv_dim) / t if getattr(spec, "rotary", False) else 0.0
    if spec.is_moe:
        ffn = float((spec.experts_per_token + spec.shared_experts) * spec.moe_ffn_hidden)
    else:
        ffn = float(spec.ffn_hidden)
    act = (k["swiglu"] if spec.gated_mlp else k["gelu"]) * ffn / t
    return per_h + rope + act


#: Attention without a fused (flash) kernel also streams the s × s score matrix: QKᵀ written,
#: read by the fused scale-mask-softmax, softmax written, dropout read/written (+1-byte mask),
#: read by the P·V GEMM: 6.5 two-byte accesses per score element (Dao et al. 2022, Algorithm 0).
SCORE_ELEMS = 6.5
#: Optimizer step (Adam, mixed precision): read fp32 master, m, v (12 B) and the gradient (2-4 B),
#: write master, m, v (12 B) and the 16-bit weights (2 B): ~30 B of HBM traffic per local parameter.
OPTIMIZER_BYTES_PER_PARAM = 30.0


def _flag(name, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool; got {value!r}")
    return bool(value)


def _gpu(gpu):
    if isinstance(gpu, GPU):
        return gpu
    return gpu_lookup(gpu)


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
    g = _gpu(gpu)
    n = validate.integer("n_gpus", n_gpus, lo=1)
    c = Cluster.for_gpu(g.name)
    if gpus_per_node is not None and validate.integer("gpus_per_node", gpus_per_node, lo=1) != c.gpus_per_node:
        c = replace(c, gpus_per_node=gpus_per_node,
                                scaleup_domain_gpus=max(gpus_per_node, min(c.scaleup_domain_gpus, gpus_per_node)))
    per_domain = max(1, c.scaleup_domain_gpus // c.gpus_per_node)   # NVL72: whole 72-GPU domains
    c = c.with_nodes(-(-max(1, -(-n // c.gpus_per_node)) // per_domain) * per_domain)
    if net_gbs is not None:
        per_gpu = validate.positive("net_gbs", net_gbs)
        c = replace(c, nic_gbps=per_gpu * 8.0 * c.gpus_per_node / (c.nics_per_node * c.nic_efficiency))
    return c


#: How a ZeRO-3 / FSDP implementation fetches a layer's parameters (``zero3_fetch``):
#: - "layer": one all-gather (and one reduce-scatter) per layer and pass: PyTorch FSDP's flat parameter per
#:   wrapped transformer block (Zhao et al. 2023, "PyTorch FSDP", VLDB, §3.2.1 FlatParameter) and DeepSpeed
#:   since v0.6.0 (github.com/microsoft/DeepSpeed pull 1453, Jan 2022: "batching allgather calls to amortize
#:   fixed overhead and improve bandwidth utilization", the same for reduce_scatter, *_base variants);
#:   prefetching overlaps the next layer's gather with this layer's compute.
#: - "tensor": DeepSpeed ZeRO-3 as released in 2021 (v0.3.13-0.5.x; deepspeed/runtime/zero/partition_parameters.py
#:   and stage3.py at commit adac058, April 2021, in v0.3.15): ``_allgather_param`` issues one ``torch.distributed.all_gather`` per
#:   parameter tensor and ``_reduce_scatter_gradient`` one ``reduce_scatter`` per tensor, both with the list API
#:   (one output / input view per rank), and calls ``torch.cuda.synchronize()`` before each gather, so "the async
#:   version is not async at all" (DeepSpeed pull 1188, Oct 2021): nothing overlaps with compute. This is the
#:   ZeRO-3 that Narayanan et al. 2021 (SC'21) §5.2 Table 2 compared against PTD-P.
ZERO3_FETCH = ("layer", "tensor")
#: The list API (``torch.distributed.all_gather(list, ...)`` / ``reduce_scatter(..., list)``) adds host work per
#: rank of every collective: ProcessGroupNCCL flattens the list, runs the NCCL kernel and copies each
#: of the world_size chunks with its own ``copy_`` (PyTorch 1.8 ProcessGroupNCCL.cpp ``allgather``: "Copy the
#: flattened output tensors to the outputs", and ``flatten_for_scatter_gather``; DeepSpeed pull 1188: "the
#: torch.distributed.all_gather will do implicit memcpy at the end of each ncclAllgather"). One launch of a
#: small device copy through the PyTorch dispatcher, per rank. The host enqueues a gather's copies while its ring
#: runs on the GPU (after the ``synchronize``), and a bucket's reduce-scatters are launched back to back, so the
#: flattening copies of one overlap the ring of the previous: each collective takes max(ring, n copies).
#: :data:`LIST_API_COPY_S` is the host time of one such copy.

#: Host time of one ``copy_`` of the list API (s per rank and collective, ``zero3_fetch="tensor"`` only). A
#: calibration constant: fitted on the three GPT-3 175B ZeRO-3 rows of Narayanan et al. 2021 Table 2
#: (``published_runs.zero3_calibration``; the 530B rows stay held out). With the Cluster charging NVLink hops
#: NVLink's latency (~1.2 µs) and network hops NCCL 2.30's 14 µs, the best fit is 12 µs (max |error| 14 % on the
#: 175B rows) — the order of PyTorch's eager host time per dispatched op. Refit with ``zero3_calibration`` whenever
#: the Cluster's latency model changes (tests/test_steptime.py checks it is still a best fit).
LIST_API_COPY_S = 12.0e-6

#: Collectives NCCL runs only as rings across nodes (no tree): their latency is (n-1) ring hops.
RING_ONLY_OPS = ("all_gather", "reduce_scatter")


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
            cl = replace(cluster, scaleup_domain_gpus=cluster.gpus_per_node)
        if op == "all_to_all":      # the MoE dispatch / combine: Cluster's expert-parallel all-to-all
            tu[mask] = np.asarray(cl.all_to_all_time_s(uniq[mask, 0], uniq[mask, 1].astype(int),
                                                       ranks_per_node=uniq[mask, 2].astype(int)), dtype=float)
        else:
            # NCCL has no tree for all_gather / reduce_scatter: they run as rings whose latency grows with the
            # group, (n-1) hops (S. Jeaugey, github.com/NVIDIA/nccl/issues/1473: "the Tree algorithm implements
            # multiple reduce/broadcast operations, so it doesn't apply to allgather/reducescatter"; the PAT
            # algorithm of NCCL 2.23 covers one GPU per node only; K. Iskra, nccl/issues/1594: ring latency O(G))
            algo = "ring" if op in RING_ONLY_OPS else "auto"
            tu[mask] = np.asarray(cl.collective_time_s(op, uniq[mask, 0], uniq[mask, 1].astype(int), algo,
                                                       ranks_per_node=uniq[mask, 2].astype(int)), dtype=float)
    t = np.atleast_1d(tu)[np.asarray(inv).ravel()].reshape(size_bytes.shape)
    return np.where(one, 0.0, t)


def _dp_comm(spec, cluster, mem, cols, *, by, grad_bytes, layers_stage, fwd_layer, bwd_layer, fwd_mb, bwd_mb,
             dp_overlap, reshard_after_forward, overlap_grad_reduce, zero3_fetch="layer"):
    """Data-parallel / sharded-data-parallel traffic of every candidate, as the frameworks run it.

    Returns a dict of arrays: ``per_mb`` / ``per_step`` (collective seconds per micro-batch and per step)
    and ``exposed_mb`` / ``exposed_step`` (the part left on the critical path). Every collective is
    ``Cluster.collective_time_s`` over the group as it is placed (:func:`group_collective_time_s`): the
    data-parallel group of a layout is strided over tp (Megatron-Core order tp, cp, dp, pp), so
    gpus_per_node // tp of its ranks share a node and reach the others through their own NICs.

    - ZeRO-0 (DDP) and ZeRO-1 (Megatron's distributed optimizer): gradients are accumulated locally
      over the micro-batches (``no_sync``) and reduced ONCE per step: an all-reduce, or reduce-scatter +
      all-gather of the same volume (ZeRO §7), overlapped with the backward pass of the last micro-batch
      (PyTorch DDP buckets, Megatron ``--overlap-grad-reduce``) when ``overlap_grad_reduce``.
    - ZeRO-2 (gradients sharded): the gradients cannot be accumulated whole, so every micro-batch
      reduce-scatters them, hidden behind that micro-batch's backward (DeepSpeed's bucketed IPG
      reduction); the updated 16-bit parameters are all-gathered once per step after the optimizer,
      hidden behind the first forward.
    - ZeRO-3 / FSDP FULL_SHARD: every micro-batch all-gathers each layer's parameters before its forward,
      again before its backward (unless ``reshard_after_forward=False``: FSDP SHARD_GRAD_OP-style, Llama 3
      §3.3.2) and reduce-scatters its gradients after it (Rajbhandari et al. 2020 §5.3; Zhao et al. 2023,
      "PyTorch FSDP", §3.2). Prefetching hides the gather of layer i+1 behind the compute of layer i and
      nothing more: per layer the exposed time is max(0, gather − that layer's compute) (forward) and
      max(0, gather + reduce-scatter − that layer's backward) (backward), plus the first gather and the
      last reduce-scatter of every micro-batch, which have no compute to hide behind.
    - HSDP (``Layout.shard`` = s < dp·cp, FSDP HYBRID_SHARD): the gathers and reduce-scatters run inside
      the shard group of s ranks; each micro-batch's sharded gradients are then all-reduced across the
      dp·cp/s replicas (ZeRO-2/3), or once per step (ZeRO-0/1 ignore ``shard``).
    Expert parameters (MoE) are sharded and reduced over dp·cp/ep ranks (Megatron-Core expert data
    parallelism); ``dp_overlap`` scales every overlap window (0: nothing hidden).
    """
    dp, tp, cp, ep, zero, shard = (np.asarray(cols[k]) for k in ("dp", "tp", "cp", "ep", "zero_stage", "shard"))
    gpn = int(cluster.gpus_per_node)
    dp_ranks = dp * cp
    sh = np.where(shard > 0, np.minimum(shard, dp_ranks), dp_ranks)
    reps = dp_ranks // sh
    q_dp = np.clip(gpn // tp, 1, None)
    q_sh = np.minimum(sh, q_dp)
    q_rep = np.clip(gpn // (tp * sh), 1, None)
    dense, expert = mem["stage_params_dense"], mem["stage_params_expert"]
    dpe = np.maximum(dp_ranks // ep, 1)
    she = np.maximum(sh // ep, 1)
    q_e = np.clip(gpn // (tp * cp * ep), 1, None)
    gct = group_collective_time_s
    ov = float(dp_overlap)
    zero = np.asarray(zero)
    # -- ZeRO-0/1: one reduction per step, over the whole dp·cp group (dense) and dp·cp/ep (experts)
    ar_step = gct(cluster, "all_reduce", grad_bytes * dense, dp_ranks, q_dp)
    ar_step = ar_step + np.where(expert > 0, gct(cluster, "all_reduce", grad_bytes * expert, dpe, q_e), 0.0)
    win_bwd = ov * bwd_mb if overlap_grad_reduce else 0.0
    # -- ZeRO-2: reduce-scatter per micro-batch (+ cross-replica all-reduce under HSDP), all-gather per step
    rs_stage = gct(cluster, "reduce_scatter", grad_bytes * dense, sh, q_sh) \
        + np.where(expert > 0, gct(cluster, "reduce_scatter", grad_bytes * expert, she, q_e), 0.0)
    rep_stage = gct(cluster, "all_reduce", grad_bytes * dense / sh, reps, q_rep)
    ag_stage = gct(cluster, "all_gather", by * dense, sh, q_sh) \
        + np.where(expert > 0, gct(cluster, "all_gather", by * expert, she, q_e), 0.0)
    z2_mb = rs_stage + rep_stage
    # -- ZeRO-3: per layer and micro-batch (the stage's parameters spread evenly over its layers). A
    # layer is gathered as ONE collective (zero3_fetch="layer": FSDP's flat parameter per wrapped block;
    # DeepSpeed since its coalesced gathers, #1453) or as one collective per parameter tensor
    # (zero3_fetch="tensor": DeepSpeed <= 0.5): k ring latencies of the whole shard group per layer instead
    # of one, nothing overlapped with compute (:data:`ZERO3_FETCH`).
    per_layer = 1.0 / np.asarray(layers_stage, float)
    k = float(spec.param_tensors_per_layer()) if zero3_fetch == "tensor" else 1.0

    copies = LIST_API_COPY_S * np.asarray(sh, float) if zero3_fetch == "tensor" else 0.0

    def per_tensor(op, nbytes, ranks, q):
        ring = gct(cluster, op, nbytes / k, ranks, q)
        if zero3_fetch != "tensor":
            return ring
        # list API: the host enqueues n per-rank copies while the GPU runs a ring (this gather's, or the previous
        # tensor's reduce-scatter, launched back to back), so each collective takes the longer of the two
        return k * np.maximum(ring, copies)

    ag_l = per_tensor("all_gather", by * dense * per_layer, sh, q_sh) \
        + np.where(expert > 0, gct(cluster, "all_gather", by * expert * per_layer, she, q_e), 0.0)
    rs_l = per_tensor("reduce_scatter", grad_bytes * dense * per_layer, sh, q_sh) \
        + np.where(expert > 0, gct(cluster, "reduce_scatter", grad_bytes * expert * per_layer, she, q_e), 0.0)
    rep_l = gct(cluster, "all_reduce", grad_bytes * dense * per_layer / sh, reps, q_rep)
    n_ag_bwd = 1.0 if reshard_after_forward else 0.0
    bwd_comm_l = n_ag_bwd * ag_l + rs_l + rep_l
    z3_mb = ag_l * layers_stage + bwd_comm_l * layers_stage
    ov3 = 0.0 if zero3_fetch == "tensor" else ov     # torch.cuda.synchronize() before every gather: no overlap
    z3_exp_mb = (layers_stage * (np.maximum(0.0, ag_l - ov3 * fwd_layer) + np.maximum(0.0, bwd_comm_l - ov3 * bwd_layer))
                 + (ag_l + rs_l + rep_l if ov3 > 0 else 0.0))
    per_mb = np.where(zero == 3, z3_mb, np.where(zero == 2, z2_mb, 0.0))
    exposed_mb = np.where(zero == 3, z3_exp_mb,
                          np.where(zero == 2, np.maximum(0.0, z2_mb - (ov * bwd_mb if overlap_grad_reduce else 0.0)),
                                   0.0))
    per_step = np.where(zero <= 1, ar_step, np.where(zero == 2, ag_stage, 0.0))
    exposed_step = np.where(zero <= 1, np.maximum(0.0, ar_step - win_bwd),
                            np.where(zero == 2, np.maximum(0.0, ag_stage - ov * fwd_mb), 0.0))
    return {"per_mb": per_mb, "per_step": per_step, "exposed_mb": exposed_mb, "exposed_step": exposed_step}


def _estimate_arrays(spec, n_gpus, g, cluster, global_batch, seq_len, cols, *, optimizer, precision, efficiency,
                     dp_overlap, overhead_gb, interleave, flash_attention, gemm_precision=None, ep_overlap=0.0,
                     cp_overlap=1.0, reshard_after_forward=True, overlap_grad_reduce=True, kernels="fused",
                     uneven_stages=False, zero3_fetch="layer", nongemm_recompute=False):
    """Memory and step time for column arrays ``cols`` (dp, tp, pp, cp, ep, mb, zero, sp, rc).

    The step-time model (per optimizer step of ``global_batch`` sequences), documented in
    :func:`search_layouts`. Returns (memory dict, time dict) of arrays.
    """
    dp, tp, pp, cp, ep, mb, zero, sp, rc = (np.asarray(cols[k]) for k in (
        "dp", "tp", "pp", "cp", "ep", "micro_batch", "zero_stage", "sp", "recompute"))
    m = global_batch // (dp * mb)
    # a fused (flash) attention kernel never stores the s×s scores: for memory that is what
    # selective recompute does (labutil.memory module docstring)
    rc_mem = np.where(rc == 0, 1, rc) if flash_attention else rc
    mem = memory._training_memory_arrays(spec, tp, pp, dp, mb, m, zero, sp, rc_mem, seq_len, optimizer, precision,
                                         overhead_gb, cp=cp, ep=ep, shard=cols["shard"],
                                         reshard_after_forward=reshard_after_forward, uneven_stages=uneven_stages)
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
    # time outside the GEMMs (norms, rotary, activation, residual adds; forward + backward, measured per
    # layer type: NONGEMM_BYTES); a third of it is charged to the forward, two thirds to the backward
    elt_bytes = tokens * nongemm_bytes_per_token(spec, tp, sp, kernels) / 3.0
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
    # checkpointing that keeps only the expensive activations (the linear layers' outputs) re-runs the cheap
    # element-wise ops (norms, rotary, activation) in the backward pass: once more their forward time
    # (LLaMA, Touvron et al. 2023a §2.4: "we save the activations that are expensive to compute, such as the
    # outputs of linear layers"); full recompute already re-runs them
    if nongemm_recompute:
        rc_extra = rc_extra + np.where(rc == 2, 0.0, t_mem_other)
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
    # experts, forward and backward (+2 with full recompute), on the MoE layers only
    # (Cluster.all_to_all_time_s). Compute counts the ACTIVE parameters (top-k routed + shared experts,
    # n_act_layer above); memory and the experts' gradient reduction count all of them (stage_params_expert).
    if spec.is_moe:
        a2a_bytes = by * tokens * h * spec.experts_per_token / tp_f
        ep_one = group_collective_time_s(cluster, "all_to_all", a2a_bytes, ep, np.clip(gpn // (tp * cp), 1, None))
        ep_layer = np.where(rc == 2, 6.0, 4.0) * ep_one * (spec.moe_layers / L) * (1.0 - ep_overlap)
    else:
        ep_layer = np.zeros_like(tokens)
    # the slowest stage sets the pipeline's pace: with uneven stages it holds ceil(L/pp) layers
    layers_stage = np.ceil(L / pp_f) if uneven_stages else L / pp_f
    # the last stage also runs the logit layer (forward + backward, never recomputed) and the cross-entropy
    # over the vocabulary (vocab-parallel over tp, Megatron; NONGEMM_BYTES["cross_entropy"] per logit)
    logits = 3.0 * 2.0 * tokens * h * V / tp_f / (peak_gemm * eff) \
        + tokens * V / tp_f * NONGEMM_BYTES[kernels]["cross_entropy"] / hbm
    # pipeline: each stage boundary sends the activations forward and their gradient back
    # (scatter/gather over the tp ranks, Narayanan §4.1); v model chunks per GPU multiply the sends.
    send_bytes = act_bytes / tp_f
    stride = tp * cp * dp
    cross = stride >= gpn
    pp_one = np.where(cross, np.asarray(cluster.p2p_time_s(send_bytes, cross_node=True), float),
                      np.asarray(cluster.p2p_time_s(send_bytes, cross_node=False), float))
    pp_mb = np.where(pp > 1, 2.0 * interleave * pp_one, 0.0)
    fwd_mb = layers_stage * fwd + logits / 3.0
    bwd_mb = layers_stage * (compute_layer - fwd) + logits * (2.0 / 3.0)
    dpc = _dp_comm(spec, cluster, mem, cols, by=by, grad_bytes=by, layers_stage=layers_stage, fwd_layer=fwd,
                   bwd_layer=compute_layer - fwd, fwd_mb=fwd_mb, bwd_mb=bwd_mb, dp_overlap=dp_overlap,
                   reshard_after_forward=reshard_after_forward, overlap_grad_reduce=overlap_grad_reduce,
                   zero3_fetch=zero3_fetch)
    t_mb = layers_stage * (compute_layer + tp_layer + cp_layer + ep_layer) + logits + pp_mb + dpc["exposed_mb"]
    compute_mb = layers_stage * compute_layer + logits
    bubble = (pp_f - 1.0) / (interleave * m_f)
    busy = m_f * t_mb
    bubble_s = bubble * busy
    dp_s = dpc["per_mb"] * m_f + dpc["per_step"]
    dp_exposed = m_f * dpc["exposed_mb"] + dpc["exposed_step"]
    shard_c = np.asarray(cols["shard"])
    owners = np.where(shard_c > 0, np.minimum(shard_c, dp * cp), dp * cp)
    local_params = (mem["stage_params_dense"] + mem["stage_params_expert"]) / np.where(np.asarray(zero) >= 1, owners, 1)
    opt_s = OPTIMIZER_BYTES_PER_PARAM * local_params / hbm
    step = busy + bubble_s + dpc["exposed_step"] + opt_s
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
                     cp=int(c["cp"][i]), interleave=int(self.meta.get("interleave", 1)), shard=int(c["shard"][i]))
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


_COLS = ("dp", "tp", "pp", "cp", "ep", "micro_batch", "zero_stage", "sp", "recompute", "shard")


def candidate_columns(spec, n_gpus, global_batch, *, gpus_per_node=8, micro_batches=(1, 2, 4, 8),
                      zero_stages=(0, 1, 2, 3), recompute=RECOMPUTE, sp_options=(False, True),
                      cp_options=(1,), ep_options=(1,), allow_zero23_with_pp=True, shard_options=(0,)) -> dict:
    """All structurally valid (dp, tp, pp, cp, ep, micro_batch, zero, sp, recompute, shard) combinations as arrays.

    tp runs over the divisors of n_gpus that divide heads, kv_heads and ffn_hidden and are
    ≤ gpus_per_node; pp over the divisors of layers; cp over ``cp_options`` dividing seq_len;
    with tp·pp·cp | n_gpus; ep over ``ep_options`` dividing dp and the expert count (MoE only);
    micro_batch such that dp·micro_batch divides global_batch. SP=True only with tp > 1.
    ZeRO-2/3 with pp > 1 are kept (PyTorch FSDP composes with pipeline parallelism: Llama 3 §3.3.2,
    TorchTitan); ``allow_zero23_with_pp=False`` drops them (DeepSpeed's pipeline engine supports
    ZeRO-1 only). ``shard_options`` adds hybrid-sharding candidates (``Layout.shard``): a shard size s
    is kept where ZeRO ≥ 1 and s divides dp·cp with s < dp·cp; 0 (full sharding) is always searched.
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
    shs = np.array(sorted({0} | {validate.integer("shard_options", x, lo=0) for x in shard_options}))
    experts = spec.num_experts if getattr(spec, "is_moe", False) else 0
    # tp must tile the NVLink domain (tp = 6 on 8-GPU nodes would put some TP groups across two nodes)
    mp = [(t, p, c, e) for t in _divisors(n) if t <= gpus_per_node and gpus_per_node % t == 0 and spec.heads % t == 0
          and spec.kv_heads % t == 0 and spec.ffn_hidden % t == 0
          for p in _divisors(spec.layers) for c in cps if spec.seq_len % c == 0 and n % (t * p * c) == 0
          for e in eps if (e == 1 or (experts and experts % e == 0 and (n // (t * p * c)) % e == 0))]
    if not mp:
        return {k: np.zeros(0, dtype=int) for k in _COLS}
    arr = np.array(mp)
    sp_arr = np.array(sps)
    I, J, K, S, R, H = np.meshgrid(np.arange(len(mp)), np.arange(len(mbs)), np.arange(len(zs)),
                                   np.arange(len(sp_arr)), np.arange(len(rcs)), np.arange(len(shs)), indexing="ij")
    I, J, K, S, R, H = (x.ravel() for x in (I, J, K, S, R, H))
    t, p, c, e = arr[I, 0], arr[I, 1], arr[I, 2], arr[I, 3]
    b, z, s_, r, hs = mbs[J], zs[K], sp_arr[S], rcs[R], shs[H]
    d = n // (t * p * c)
    ok = (B % (d * b) == 0) & ~(s_ & (t == 1))
    ok &= (hs == 0) | ((z >= 1) & (hs < d * c) & ((d * c) % np.maximum(hs, 1) == 0))
    if not allow_zero23_with_pp:
        ok &= ~((z >= 2) & (p > 1))
    return {"dp": d[ok], "tp": t[ok], "pp": p[ok], "cp": c[ok], "ep": e[ok], "micro_batch": b[ok],
            "zero_stage": z[ok], "sp": s_[ok], "recompute": r[ok], "shard": hs[ok]}


def _gemm_precision(g, gemm_precision):
    """Validated GEMM number format (None = the training precision); must have a catalog peak on ``g``."""
    if gemm_precision is None:
        return None
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
                   nvlink_gbs=None, dp_overlap=1.0, flash_attention=True, allow_zero23_with_pp=True,
                   include_infeasible=False, gemm_precision=None, ep_overlap=0.0,
                   cp_overlap=1.0, shard_options=(0,), reshard_after_forward=True,
                   overlap_grad_reduce=True, kernels="fused", zero3_fetch="layer",
                   nongemm_recompute=False) -> SearchResult:
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
          outside the GEMMs  norms, rotary, activation, residual / dropout, cross-entropy:
                     measured bytes per element (``kernels`` = "fused" or "eager",
                     :data:`NONGEMM_BYTES`) / HBM bandwidth; the s×s scores without flash attention
          tp         4 all-reduces of tokens·h (6 with full recompute) over the TP group  (exposed)
          cp         K/V exchange over the CP group, exposed beyond cp_overlap × the attention it feeds
          ep         4 all-to-alls (6 with full recompute) of tokens·h·top_k on MoE layers  (exposed)
        tokens = micro_batch · seq_len / cp
        t_mb   = layers/pp · (compute + tp + cp + ep) + logit layer + 2·v pipeline sends
                 + the exposed per-micro-batch ZeRO-2/3 traffic (:func:`_dp_comm`)
        step   = m · t_mb · (1 + (pp−1)/(v·m))          (1F1B, v = interleave; Narayanan 2021 §2.2)
                 + the exposed per-step data-parallel traffic + optimizer step (HBM-bound)

    Data parallelism as the frameworks run it (:func:`_dp_comm`): ZeRO-0/1 reduce the accumulated
    gradients once per step, hidden behind the last micro-batch's backward; ZeRO-2 reduce-scatters every
    micro-batch; ZeRO-3 / FSDP all-gathers every layer before each micro-batch's forward and backward and
    reduce-scatters its gradients, the next layer's gather hidden behind the current layer's compute and
    no more. ``reshard_after_forward=False`` keeps the gathered weights from forward to backward (one
    gather per layer and micro-batch); ``Layout.shard`` (HSDP) shards inside groups and all-reduces the
    gradient shards across them; ``overlap_grad_reduce=False`` leaves the gradient reductions exposed
    (DeepSpeed's ``overlap_comm: false``). Every ZeRO stage is searched, with and without pipeline
    parallelism (``allow_zero23_with_pp=False`` for DeepSpeed's pipeline engine); ``shard_options``
    adds HSDP shard sizes.

    Rule of thumb the model follows: a layer's gather (2·P_layer bytes over the per-GPU gather bandwidth
    B) hides behind its forward (2·T·P_layer FLOPs at the achieved rate F) when the tokens per GPU and
    micro-batch T ≥ F / B, whatever the model size; DP gradient reduction hides the same way.

    ``zero3_fetch`` ("layer" default, "tensor"): how a ZeRO-3 implementation gathers a layer (:data:`ZERO3_FETCH`;
    "tensor" = DeepSpeed 2021: one ring collective per parameter tensor, nothing overlapped).
    ``nongemm_recompute``: the element-wise ops' forward runs again in backward (LLaMA §2.4 checkpointing).
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
                             allow_zero23_with_pp=allow_zero23_with_pp, shard_options=shard_options)
    if v > 1:
        keep_v = (spec.layers % (cols["pp"] * v) == 0) & (cols["pp"] > 1)
        cols = {k: a[keep_v] for k, a in cols.items()}
    usable = g.hbm_gb * (1.0 - rf)
    n_cand = int(len(cols["dp"]))
    if n_cand:
        mem, t = _estimate_arrays(spec, n, g, cl, B, s, cols, optimizer=optimizer, precision=precision,
                                  efficiency=eff, dp_overlap=ov, overhead_gb=0.0, interleave=v,
                                  flash_attention=bool(flash_attention), gemm_precision=gp, ep_overlap=eo,
                                  cp_overlap=co, reshard_after_forward=_flag("reshard_after_forward", reshard_after_forward),
                                  overlap_grad_reduce=_flag("overlap_grad_reduce", overlap_grad_reduce),
                                  kernels=validate.choice("kernels", kernels, KERNELS),
                                  zero3_fetch=validate.choice("zero3_fetch", zero3_fetch, ZERO3_FETCH),
                                  nongemm_recompute=_flag("nongemm_recompute", nongemm_recompute))
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
                    uneven_stages=False, gemm_precision=None, ep_overlap=0.0, cp_overlap=1.0,
                    reshard_after_forward=True, overlap_grad_reduce=True, kernels="fused",
                    zero3_fetch="layer", nongemm_recompute=False) -> LayoutEstimate:
    """Memory and step-time estimate of ONE layout (same model as :func:`search_layouts`).

    Checks the layout first (:func:`check_layout`); the result's ``fits`` says whether it fits.
    ``layout.interleave`` sets the number of model chunks per GPU (interleaved 1F1B).
    ``uneven_stages=True`` accepts pp (·interleave) that does not divide the layer count (stages of
    unequal depth, e.g. Llama 3 405B's 126 layers on 16 stages, Llama 3 §3.3.2): the slowest stage, with
    ceil(L/pp) layers, sets the pace, and memory is the peak over the stages of
    ``memory.uneven_stage_layers`` (one layer fewer on the first and the last stage).
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
            "sp": np.array([layout.sp]), "recompute": np.array([RECOMPUTE.index(layout.recompute)]),
            "shard": np.array([layout.shard])}
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
                              cp_overlap=validate.number("cp_overlap", cp_overlap, lo=0.0, hi=1.0),
                              reshard_after_forward=_flag("reshard_after_forward", reshard_after_forward),
                              overlap_grad_reduce=_flag("overlap_grad_reduce", overlap_grad_reduce),
                              kernels=validate.choice("kernels", kernels, KERNELS),
                              zero3_fetch=validate.choice("zero3_fetch", zero3_fetch, ZERO3_FETCH),
                              nongemm_recompute=_flag("nongemm_recompute", nongemm_recompute),
                              uneven_stages=bool(uneven_stages) and spec.layers % (layout.pp * layout.interleave) != 0)
    f = lambda a: float(np.asarray(a).ravel()[0])  # noqa: E731
    total = f(mem["total_gb"])
    v = {k: f(t[k]) for k in _TIME_KEYS}
    return LayoutEstimate(layout, total, total <= g.hbm_gb * (1 - rf), f(mem["weights_gb"]), f(mem["grads_gb"]),
                          f(mem["optimizer_gb"]), f(mem["activations_gb"]) + f(mem["logits_gb"]), v["step_s"],
                          v["compute_s"], v["bubble_s"], v["tp_comm_s"], v["pp_comm_s"], v["dp_exposed_s"], v["mfu"],
                          v["cp_comm_s"], v["ep_comm_s"], v["dp_comm_s"], v["optimizer_s"], v["hfu"],
                          v["gemm_efficiency"], v["model_tflops_per_gpu"], v["hw_tflops_per_gpu"])


def plausibility(spec, estimate: LayoutEstimate, gpu) -> dict:
    """Where an estimate leaves the ground the model was checked on (ch24's explorer warns on each).

    - ``mfu_above_published``: the estimated MFU exceeds the highest cluster MFU published for a large
      run (``compute.PUBLISHED_MFU_RANGE``, 55 %); the calibration rows span 34-55 %, and out of sample
      the model has been optimistic (``labutil.published_runs.HELD_OUT_RUNS``).
    - ``gemm_ceiling_measured``: False when no measured matmul ceiling exists for the GPU
      (``compute.MAMF_FRACTION``), so its GEMM efficiency is the A100 fit's, an assumption.
    - ``moe_without_ep``: a mixture-of-experts model laid out with ep = 1: every GPU then holds every
      expert of its stage (the memory of the total parameters) and no expert parallelism spreads them.
    Returns a dict of those flags plus ``mfu`` and ``mfu_limit`` (fractions).
    """
    g = _gpu(gpu)
    name = compute.MAMF_SAME_SILICON.get(g.name, g.name)
    lo, hi = compute.PUBLISHED_MFU_RANGE
    return {"mfu": float(estimate.mfu), "mfu_limit": hi, "mfu_above_published": bool(estimate.mfu > hi + 0.005),
            "gemm_ceiling_measured": (name, "bf16") in compute.MAMF_FRACTION,
            "moe_without_ep": bool(getattr(spec, "is_moe", False) and estimate.layout.ep == 1)}


def expert_parallel_options(spec, n_gpus: int) -> tuple[int, ...]:
    """Expert-parallel sizes worth searching for ``spec`` on ``n_gpus``: powers of two that divide the
    expert count (and the GPU count), up to 64; (1,) for a dense model."""
    n = validate.integer("n_gpus", n_gpus, lo=1)
    e = int(getattr(spec, "num_experts", 0) or 0)
    if not getattr(spec, "is_moe", False) or e <= 1:
        return (1,)
    return tuple(k for k in (1, 2, 4, 8, 16, 32, 64) if e % k == 0 and n % k == 0)


def tp_comm_share_rule(spec, tp, achieved_tflops, busbw_gbs):
    """Closed-form share of a layer's time spent in its tensor-parallel all-reduces (no overlap).

    Per layer and micro-batch of T tokens: 4 all-reduces of 2·T·h bytes (Narayanan 2021 §2.3), a ring
    moving 2(t−1)/t of each at busbw B, against 6·T·P_layer/t FLOPs at the achieved rate F, so
    comm/compute = (8/3)·(t−1)·h·F / (P_layer·B): T cancels. A GPT layer has P_layer ≈ 12h², giving
    (2/9)·(t−1)·F/(h·B). Returns comm / (comm + compute); arrays over tp broadcast. The step-time model
    (:func:`tp_layer_times`) adds the latencies and the GEMM efficiency of thinner matrices.
    """
    t = np.asarray(validate.integer("tp", tp, lo=1), float)
    f = validate.positive("achieved_tflops", achieved_tflops) * 1e12
    b = validate.positive("busbw_gbs", busbw_gbs) * 1e9
    p_layer = float(spec.non_embedding_params(active=True)) / spec.layers
    r = (8.0 / 3.0) * (t - 1.0) * spec.hidden * f / (p_layer * b)
    out = r / (1.0 + r)
    return float(out) if np.ndim(out) == 0 else out


def hide_threshold_tokens(achieved_tflops, busbw_gbs):
    """Tokens per GPU and micro-batch above which data-parallel traffic hides behind the computation: F / B.

    ZeRO-3: a layer's gather of 2·P/t bytes at busbw B against its forward, 2·T·P/t FLOPs at F. DP / ZeRO-1:
    the all-reduce of the stage's 2·Ψ bytes (≈ 4Ψ/B on a ring) against the last micro-batch's backward
    (4·T·Ψ FLOPs at F). Both reduce to T ≥ F/B, whatever the model size. Arrays broadcast.
    """
    f = np.asarray(validate.positive("achieved_tflops", achieved_tflops), float) * 1e12
    b = np.asarray(validate.positive("busbw_gbs", busbw_gbs), float) * 1e9
    out = f / b
    return float(out) if np.ndim(out) == 0 else out
