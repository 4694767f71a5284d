"""Training memory per GPU: model states (weights, gradients, optimizer) and activations.

Taught in ch07 (训练显存剖析) and used by ch08 (``labutil.steptime.search_layouts``).

Sources
-------
- Model states: Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion
  Parameter Models", SC 2020, §3.1 and Figure 1. Mixed-precision training keeps 2Ψ bytes of
  fp16/bf16 weights, 2Ψ of fp16/bf16 gradients and K·Ψ of fp32 optimizer states; for Adam
  K = 12 (fp32 master weights 4 + momentum 4 + variance 4). ZeRO stage 1 (P_os) partitions the
  optimizer states over the Nd data-parallel ranks, stage 2 (P_os+g) also the gradients, stage 3
  (P_os+g+p) also the parameters. Figure 1 (Ψ = 7.5B, Nd = 64, K = 12): 120 GB, 31.4 GB,
  16.6 GB, 1.88 GB per GPU — reproduced exactly by :func:`model_states_gb`.
- Activations: Korthikanti et al., "Reducing Activation Recomputation in Large Transformer
  Models", MLSys 2023 (arXiv:2205.05198), §4 and Table 2. Per transformer layer, with 16-bit
  activations and 1-byte dropout masks, s = sequence length, b = micro-batch, h = hidden,
  a = attention heads, t = tensor-parallel size:
    no parallelism          s·b·h·(34 + 5·a·s/h)                    (Eq. 1)
    tensor parallel          s·b·h·(10 + 24/t + 5·a·s/(h·t))         (Eq. 2)
    tensor + sequence par.   s·b·h/t·(34 + 5·a·s/h)                  (Eq. 3)
    selective recompute      the 5·a·s/h term (attention scores, softmax, dropout) is recomputed
    full recompute           2·s·b·h (only the layer input is kept)   (Table 2, last row);
                             2·s·b·h/t with sequence parallelism: between layers the
                             residual stream is split along the sequence over the t ranks
                             (§4.2.2), so each rank checkpoints only its s/t slice
  The paper's model is GPT-style: multi-head attention (kv_heads = heads), a 4h GeLU MLP, dropout.

Generalisation (documented, reduces exactly to the paper for GPT-style specs)
----------------------------------------------------------------------------
Per layer, the bytes that tensor parallelism does NOT split (without SP) are
``R = 10·s·b·h``: two norm inputs (2+2), the QKV input (2), the MLP input (2), two dropout
masks (1+1). The bytes it splits are ``S·s·b·h`` with
``S = 4 + 4·kv_heads/heads + m·ffn_hidden/h`` where 4 = Q and the attention-output projection
input, 4·kv/heads = K and V (smaller under GQA), and m = 4 for a GeLU MLP (GeLU input +
second-linear input, 2 bytes each) or m = 6 for a gated (SwiGLU) MLP, which stores the
2·ffn-wide first-linear output and the ffn-wide second-linear input (Megatron-LM fused SwiGLU).
GPT-style (kv = heads, ffn = 4h, GeLU): S = 4 + 4 + 16 = 24, as in Eq. 2. Llama-style models
are trained without dropout (``TransformerSpec.dropout`` False): they store no masks, R = 8 and
the score term 4·a·s/h instead of 5·a·s/h. Flash-attention kernels never store the s×s scores,
which has the same effect on memory as selective recompute.

Units: every ``_gb`` is decimal GB (1e9 bytes). All functions take numpy arrays where a learner
sweeps a parameter (dp, micro_batch, seq_len, tp, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import validate
from .units import BYTES_PER_GB

__all__ = ["OPTIMIZERS", "PRECISIONS", "RECOMPUTE", "bytes_per_param", "optimizer_k", "ModelStates",
           "model_states_gb", "fp16_weights_gb", "is_gated_mlp", "layer_activation_coeffs", "activation_gb",
           "layer_params", "stage_params", "TrainingMemory", "training_memory_gb"]

OPTIMIZERS = ("adam", "adamw", "sgd")
PRECISIONS = ("bf16", "fp16", "fp32")
RECOMPUTE = ("none", "selective", "full")

# fp32 optimizer-state tensors per parameter (each 4 bytes): Adam/AdamW keep momentum + variance
# (Kingma & Ba 2015, Algorithm 1; ZeRO §3.1), SGD with momentum keeps one momentum buffer
# (torch.optim.SGD with momentum > 0 keeps ``momentum_buffer``).
_OPT_STATES = {"adam": 2, "adamw": 2, "sgd": 1}


def bytes_per_param(optimizer: str = "adam", precision: str = "bf16") -> tuple[float, float, float]:
    """(weight, gradient, optimizer) bytes per parameter for an optimizer and training precision.

    Mixed precision (``bf16``/``fp16``): 2 B weights, 2 B gradients and K B of fp32 optimizer
    states, K = 4 (fp32 master copy) + 4 per state tensor: Adam/AdamW K = 12 (ZeRO §3.1), SGD
    with momentum K = 8 (master copy + momentum). ``fp32`` training: 4 B weights, 4 B gradients
    and 4 B per state tensor with no master copy (Adam 8 B, SGD-momentum 4 B).
    """
    validate.choice("optimizer", optimizer, OPTIMIZERS)
    validate.choice("precision", precision, PRECISIONS)
    n_states = _OPT_STATES[optimizer]
    if precision == "fp32":
        return 4.0, 4.0, 4.0 * n_states
    return 2.0, 2.0, 4.0 + 4.0 * n_states


def optimizer_k(optimizer: str = "adam", precision: str = "bf16") -> float:
    """ZeRO's memory multiplier K (optimizer bytes per parameter): 12 for mixed-precision Adam."""
    return bytes_per_param(optimizer, precision)[2]


@dataclass(frozen=True)
class ModelStates:
    """Per-GPU model-state memory in GB (floats, or arrays when an input was an array)."""

    weights_gb: float
    grads_gb: float
    optimizer_gb: float
    total_gb: float


def _zero_divisors(dp, zero_stage):
    """Divisors (weights, grads, optimizer) of ZeRO stage ``zero_stage`` over ``dp`` ranks."""
    one = np.ones_like(dp)
    d_opt = np.where(zero_stage >= 1, dp, one)
    d_grad = np.where(zero_stage >= 2, dp, one)
    d_w = np.where(zero_stage >= 3, dp, one)
    return d_w, d_grad, d_opt


_ret = validate.scalar_or_array

def model_states_gb(params, dp=1, zero_stage=0, optimizer: str = "adam", precision: str = "bf16") -> ModelStates:
    """Per-GPU weights, gradients and optimizer states of ``params`` parameters under ZeRO.

    ``params`` is Ψ, the parameters this GPU's data-parallel group replicates (the whole model,
    or the Ψ/(tp·pp) shard of one model-parallel rank). Following ZeRO (§3.1, §5, Figure 1)::

        stage 0: (2 + 2 + K)·Ψ             stage 1: (2 + 2)·Ψ + K·Ψ/Nd
        stage 2: 2·Ψ + (2 + K)·Ψ/Nd        stage 3: (2 + 2 + K)·Ψ/Nd

    with K from :func:`bytes_per_param`. Ψ = 7.5e9, Nd = 64 gives 120, 31.4, 16.6 and 1.88 GB.
    ``params``, ``dp`` and ``zero_stage`` may be numpy arrays (broadcast together).
    """
    p = validate.positive("params", params)
    d = validate.integer("dp", dp, lo=1)
    z = validate.integer("zero_stage", zero_stage, lo=0, hi=3)
    wb, gb, ob = bytes_per_param(optimizer, precision)
    scalar = all(np.ndim(x) == 0 for x in (p, d, z))
    p, d, z = np.broadcast_arrays(np.asarray(p, float), np.asarray(d, float), np.asarray(z))
    d_w, d_g, d_o = _zero_divisors(d, z)
    w = wb * p / d_w / BYTES_PER_GB
    g = gb * p / d_g / BYTES_PER_GB
    o = ob * p / d_o / BYTES_PER_GB
    return ModelStates(_ret(w, scalar), _ret(g, scalar), _ret(o, scalar), _ret(w + g + o, scalar))


def fp16_weights_gb(params):
    """Memory of the 16-bit weights alone: 2 bytes × params (GPT-3 175B -> 350 GB)."""
    return 2.0 * validate.positive("params", params) / BYTES_PER_GB


# ---------------------------------------------------------------------------------------------
# Activations (Korthikanti et al. 2022)
# ---------------------------------------------------------------------------------------------
def _recompute_code(recompute) -> int:
    validate.choice("recompute", recompute, RECOMPUTE)
    return RECOMPUTE.index(recompute)


def is_gated_mlp(spec) -> bool:
    """Whether ``spec`` has a gated (SwiGLU) MLP.

    Uses ``spec.gated_mlp`` (or ``spec.mlp``/``spec.activation`` naming swiglu/geglu) when the
    spec has it; otherwise infers it from the shape: GPT-style MLPs are exactly 4·hidden wide,
    Llama-style SwiGLU MLPs are not (e.g. llama2-7b 11008 = 2.69·4096).
    """
    for attr in ("gated_mlp", "gated", "swiglu"):
        v = getattr(spec, attr, None)
        if isinstance(v, bool):
            return v
    for attr in ("mlp", "activation", "act"):
        v = getattr(spec, attr, None)
        if isinstance(v, str):
            return v.lower() in ("swiglu", "geglu", "gated", "silu_glu")
    return int(spec.ffn_hidden) != 4 * int(spec.hidden)


def layer_activation_coeffs(spec) -> tuple[float, float, float]:
    """(R, S, Q) so that one layer stores s·b·h·(R + S/t + Q·a·s/(h·t)) bytes under plain TP.

    GPT-style spec: (10, 24, 5), i.e. Korthikanti Eq. 2. See the module docstring for the
    generalisation to GQA (kv_heads < heads) and SwiGLU MLPs. A model trained without dropout
    (``spec.dropout`` False: the Llama family) stores no masks: R = 8, Q = 4.
    """
    h = float(spec.hidden)
    kv_ratio = float(spec.kv_heads) / float(spec.heads)
    mlp_factor = 6.0 if is_gated_mlp(spec) else 4.0
    s_coeff = 4.0 + 4.0 * kv_ratio + mlp_factor * float(spec.ffn_hidden) / h
    # the 1-byte dropout masks (two per layer in R, the attention-probability mask in Q) exist only when
    # the model is trained with dropout (``spec.dropout``; GPT / Megatron recipes yes, Llama family no)
    dropout = bool(getattr(spec, "dropout", True))
    return (10.0, s_coeff, 5.0) if dropout else (8.0, s_coeff, 4.0)


def _layer_bytes(s, b, h, a, t, sp, rc, R, S, Q, s_kv=None):
    """Vectorised bytes of one layer's stored activations (see :func:`activation_gb`).

    ``s``: tokens of the sequence this GPU holds (seq_len / cp under context parallelism);
    ``s_kv``: keys each query attends to (the full seq_len; defaults to ``s``).
    """
    sbh = s * b * h
    kv = s if s_kv is None else s_kv
    score = Q * a * kv / (h * t)                # 5as/(ht): attention scores, softmax, dropout
    plain = R + S / t + score                   # Eq. 2 (tensor parallel)
    seqp = (R + S) / t + score                  # Eq. 3 (tensor + sequence parallel)
    coeff = np.where(sp, seqp, plain)
    coeff = np.where(rc == 1, coeff - score, coeff)   # selective: scores recomputed (Eq. 4-6)
    # full: only the layer input is kept, 2·s·b·h, and with sequence parallelism each TP rank holds
    # only its s/t slice of it (the residual stream is sequence-split between layers, Korthikanti §4.2.2)
    coeff = np.where(rc == 2, np.where(sp, 2.0 / t, 2.0), coeff)
    return sbh * coeff


def activation_gb(spec, micro_batch, seq_len, tp=1, sp: bool = False, recompute: str = "none"):
    """Stored activations (GB per GPU) of ALL ``spec.layers`` layers for one micro-batch.

    No pipeline split: a pipeline stage holds ``layers/pp`` of them per in-flight micro-batch
    (see :func:`training_memory_gb`). Per layer (Korthikanti et al. 2022, Table 2)::

        tp only:           s·b·h·(10 + 24/t + 5·a·s/(h·t))
        tp + sp:           s·b·h/t·(34 + 5·a·s/h)
        selective:         the 5·a·s/(h·t) term removed
        full recompute:    2·s·b·h (2·s·b·h/t with sp: each rank keeps its sequence slice)

    (GPT-style coefficients shown; GQA/SwiGLU specs use :func:`layer_activation_coeffs`.)
    The embedding, final norm and output layer are not included (the paper, §4.3, finds them
    small next to the layers); :func:`training_memory_gb` adds the fp32 logits.
    """
    b = validate.integer("micro_batch", micro_batch, lo=1)
    s = validate.integer("seq_len", seq_len, lo=1)
    t = validate.integer("tp", tp, lo=1)
    if not isinstance(sp, (bool, np.bool_)) and not isinstance(sp, np.ndarray):
        raise ValueError(f"sp must be a bool; got {sp!r}")
    rc = _recompute_code(recompute)
    R, S, Q = layer_activation_coeffs(spec)
    scalar = all(np.ndim(x) == 0 for x in (b, s, t, sp))
    per_layer = _layer_bytes(np.asarray(s, float), np.asarray(b, float), float(spec.hidden), float(spec.heads),
                             np.asarray(t, float), np.asarray(sp, bool), rc, R, S, Q)
    total = int(spec.layers) * per_layer / BYTES_PER_GB
    return _ret(total, scalar)


# ---------------------------------------------------------------------------------------------
# Whole per-GPU training memory for a parallel layout
# ---------------------------------------------------------------------------------------------
def layer_params(spec) -> float:
    """Parameters of one transformer layer (``spec.params_per_layer()`` when the spec has it).

    Attention: Q and O projections h·h each, K and V h·(h·kv/heads) each; MLP: 2·h·ffn (GeLU)
    or 3·h·ffn (gated SwiGLU: gate, up, down); two norms 2·h.
    """
    if hasattr(spec, "params_per_layer"):
        return float(spec.params_per_layer())   # labutil.models.TransformerSpec (biases, norms exact)
    h = float(spec.hidden)
    h_kv = h * float(spec.kv_heads) / float(spec.heads)
    mlp = (3.0 if is_gated_mlp(spec) else 2.0) * h * float(spec.ffn_hidden)
    return 2.0 * h * h + 2.0 * h * h_kv + mlp + 2.0 * h


def stage_params(spec, pp=1):
    """Parameters held by the heaviest pipeline stage (before tensor parallelism).

    ``pp = 1``: all of ``spec.params()``. ``pp > 1``: ``layers/pp`` layers plus one vocab·hidden
    embedding matrix: the first stage holds the input embedding, the last stage the output
    layer (Megatron-LM keeps a copy of tied word embeddings on the last stage too).
    """
    p = validate.integer("pp", pp, lo=1)
    total = float(spec.params())
    layers_part = float(spec.non_embedding_params()) if hasattr(spec, "non_embedding_params") \
        else int(spec.layers) * layer_params(spec)
    emb = float(spec.vocab) * float(spec.hidden)
    staged = layers_part / np.asarray(p, float) + emb
    out = np.where(np.asarray(p) == 1, total, np.minimum(staged, total))
    return _ret(out, np.ndim(p) == 0)


@dataclass(frozen=True)
class TrainingMemory:
    """Per-GPU memory (GB) of the heaviest pipeline stage for a layout.

    ``total_gb = weights + grads + optimizer + activations + logits + overhead``; ``overhead_gb``
    is the caller's explicit allowance (default 0: CUDA context, NCCL buffers, allocator
    fragmentation are NOT included unless asked for).
    """

    weights_gb: float
    grads_gb: float
    optimizer_gb: float
    activations_gb: float
    logits_gb: float
    overhead_gb: float
    total_gb: float
    stage_params: float
    inflight_microbatches: int

    @property
    def model_states_gb(self) -> float:
        return self.weights_gb + self.grads_gb + self.optimizer_gb


def uneven_stage_layers(layers: int, pp: int) -> list[int]:
    """Layers of each of ``pp`` pipeline stages when pp does not divide ``layers``: ceil(layers/pp) each,
    the shortfall taken one layer at a time from the first and the last stage inwards (Llama 3 §3.3.2:
    126 layers on 16 stages -> 7, 8 x 14, 7)."""
    L = validate.integer("layers", layers, lo=1)
    p = validate.integer("pp", pp, lo=1)
    base = -(-L // p)
    out = [base] * p
    short = base * p - L
    order = [i for pair in zip(range(p), range(p - 1, -1, -1)) for i in pair]
    seen = []
    for i in order:
        if i not in seen:
            seen.append(i)
    for i in seen[:short]:
        out[i] -= 1
    return out


def uneven_stage_peak(layers: int, pp, m):
    """max over stages of (in-flight micro-batches under 1F1B, min(pp − i, m)) × (layers of stage i):
    the activation peak of :func:`uneven_stage_layers` in units of one layer's activations. Arrays of
    (pp, m) are evaluated element by element (only single layouts use uneven stages)."""
    pp_a, m_a = np.broadcast_arrays(np.asarray(pp, int), np.asarray(m, int))
    out = np.empty(pp_a.shape, float)
    for idx in np.ndindex(pp_a.shape):
        p, mm = int(pp_a[idx]), int(m_a[idx])
        st = uneven_stage_layers(layers, p)
        out[idx] = max(min(p - i, mm) * st[i] for i in range(p))
    return out if out.ndim else float(out)


def _training_memory_arrays(spec, tp, pp, dp, mb, m, zero, sp, rc, seq_len, optimizer, precision, overhead_gb,
                            cp=1, ep=1, shard=0, reshard_after_forward=True, uneven_stages=False):
    """Vectorised core shared by :func:`training_memory_gb` and ``steptime.search_layouts``.

    Returns a dict of arrays (GB). The first stage holds min(pp, m) in-flight micro-batches
    (1F1B schedule, Narayanan et al. 2021 §2.2.1; Korthikanti §4.2.3); the last stage holds one
    micro-batch plus the fp32 logits 4·s·b·vocab/t of the cross-entropy (Korthikanti §4.3). The
    larger of the two stages is reported. Context parallelism (cp) splits every sequence, so the
    stored activations and logits shrink by cp (the attention scores keep the full key length);
    weights are replicated over cp and ZeRO shards over dp·cp (Megatron-Core's distributed
    optimizer). Expert parallelism (ep) splits the routed experts' weights over ep ranks; their
    ZeRO shards run over dp·cp/ep. ``shard`` > 0 (hybrid sharding) shards over that many ranks instead.
    ZeRO-3 keeps two layers' 16-bit weights gathered (the running layer and the one prefetched behind
    it; FSDP's forward/backward prefetch, DeepSpeed's prefetch bucket), all of the stage's when
    ``reshard_after_forward`` is False (kept from forward to backward); ZeRO-2/3 hold one layer's full
    gradients until they are reduce-scattered.
    """
    wb, gb_, ob = bytes_per_param(optimizer, precision)
    tp = np.asarray(tp, float)
    pp_i = np.asarray(pp)
    pp = pp_i.astype(float)
    cp = np.asarray(cp, float)
    ep = np.asarray(ep, float)
    dp = np.asarray(dp, float) * cp
    shard = np.asarray(shard, float)
    dp = np.where(shard > 0, np.minimum(shard, dp), dp)
    L = float(spec.layers)
    h = float(spec.hidden)
    experts = float(spec.expert_params_total()) if hasattr(spec, "expert_params_total") else 0.0
    psi_all = np.asarray(stage_params(spec, pp_i), float)
    psi_exp = experts / pp
    psi_dense = (psi_all - psi_exp) / tp
    psi_exp = psi_exp / (tp * ep)
    zero = np.asarray(zero)
    d_w, d_g, d_o = _zero_divisors(dp, zero)
    e_w, e_g, e_o = _zero_divisors(np.maximum(dp / ep, 1.0), zero)
    # ZeRO-3 materialises layers' full (tp-sharded) 16-bit weights while they run (ZeRO §5.3: parameters
    # are all-gathered layer by layer and released after use): the running layer and the prefetched
    # next one; without resharding after forward the whole stage stays gathered until its backward.
    # ZeRO-2/3 also hold one layer's unsharded gradients until its reduce-scatter. Counted with weights/grads.
    one_layer = layer_params(spec) / tp
    if reshard_after_forward:
        live = np.where(zero == 3, 2.0 * wb * one_layer, 0.0)
    else:
        live = np.where(zero == 3, wb * (psi_dense + psi_exp) * (1.0 - 1.0 / d_w), 0.0)
    live_g = np.where(zero >= 2, gb_ * one_layer, 0.0)
    w = (wb * (psi_dense / d_w + psi_exp / e_w) + live) / BYTES_PER_GB
    g = (gb_ * (psi_dense / d_g + psi_exp / e_g) + live_g) / BYTES_PER_GB
    o = ob * (psi_dense / d_o + psi_exp / e_o) / BYTES_PER_GB
    psi = psi_dense + psi_exp
    R, S, Q = layer_activation_coeffs(spec)
    s = float(seq_len)
    per_layer = _layer_bytes(s / cp, np.asarray(mb, float), h, float(spec.heads), tp, np.asarray(sp, bool),
                             np.asarray(rc), R, S, Q, s_kv=s)
    layers_per_stage = L / pp
    inflight = np.minimum(pp, np.asarray(m, float))
    act_first = inflight * layers_per_stage * per_layer / BYTES_PER_GB
    if uneven_stages:
        act_first = act_first * uneven_stage_peak(int(L), pp_i, m) / (inflight * layers_per_stage)
    act_last = layers_per_stage * per_layer / BYTES_PER_GB
    logits = 4.0 * s / cp * np.asarray(mb, float) * float(spec.vocab) / tp / BYTES_PER_GB
    first = act_first + np.where(pp_i == 1, logits, 0.0)
    last = act_last + logits
    use_first = first >= last
    act = np.where(use_first, act_first, act_last)
    lg = np.where(use_first, np.where(pp_i == 1, logits, 0.0), logits)
    total = w + g + o + act + lg + overhead_gb
    return {"weights_gb": w, "grads_gb": g, "optimizer_gb": o, "activations_gb": act, "logits_gb": lg,
            "total_gb": total, "stage_params": psi, "stage_params_dense": psi_dense, "stage_params_expert": psi_exp,
            "inflight": np.where(use_first, inflight, 1.0)}


def training_memory_gb(spec, layout, *, optimizer: str = "adam", precision: str = "bf16",
                       seq_len: int | None = None, overhead_gb: float = 0.0,
                       flash_attention: bool = False) -> TrainingMemory:
    """Whole per-GPU training memory (GB) of ``spec`` trained with ``layout`` (a parallel.Layout).

    - model states: the heaviest pipeline stage's parameters (:func:`stage_params`) divided by
      ``layout.tp``, then ZeRO ``layout.zero_stage`` over ``layout.dp`` (:func:`model_states_gb`);
      under ZeRO-3 the weights also include two layers' gathered 16-bit weights (the running layer and
      the prefetched next one), under ZeRO-2/3 the grads one layer's unsharded gradients (the live buffers);
    - activations: ``layers/pp`` layers × in-flight micro-batches of 1F1B (the first stage keeps
      min(pp, n_microbatches)); with pp micro-batches this equals :func:`activation_gb` of the
      whole model, independent of pp (Korthikanti Eq. 5);
    - logits: fp32 cross-entropy input 4·s·b·vocab/t on the last stage;
    - overhead: exactly ``overhead_gb`` (default 0, no hidden allowance);
    - ``flash_attention=True``: the fused attention kernel never stores the s×s scores (the same
      saving as selective recompute; ``steptime.search_layouts`` assumes it by default).
    ``seq_len`` defaults to ``spec.seq_len``. Interleaved schedules (which keep somewhat more
    in flight) are not modelled.
    """
    s = spec.seq_len if seq_len is None else validate.integer("seq_len", seq_len, lo=1)
    oh = validate.positive("overhead_gb", overhead_gb, allow_zero=True)
    rc = _recompute_code(layout.recompute)
    if not isinstance(flash_attention, (bool, np.bool_)):
        raise TypeError(f"flash_attention must be a bool; got {flash_attention!r}")
    if flash_attention and rc == 0:
        rc = 1
    r = _training_memory_arrays(spec, layout.tp, layout.pp, layout.dp, layout.micro_batch, layout.n_microbatches,
                                layout.zero_stage, layout.sp, rc, s, optimizer, precision, oh,
                                cp=getattr(layout, "cp", 1), ep=getattr(layout, "ep", 1),
                                shard=getattr(layout, "shard", 0))
    f = {k: float(np.asarray(v)) for k, v in r.items()}
    return TrainingMemory(f["weights_gb"], f["grads_gb"], f["optimizer_gb"], f["activations_gb"], f["logits_gb"],
                          float(oh), f["total_gb"], f["stage_params"], int(round(f["inflight"])))
