"""Parallel layouts (DP/TP/PP/SP/EP, ZeRO, recompute): validity, pipeline bubble, search.

Taught in ch08 (并行策略: DP/TP/PP/SP/EP与3D并行); memory comes from ``labutil.memory`` (ch07),
collective times from ``labutil.comm`` (ch13).

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from . import memory, validate
from .units import BYTES_PER_GB

RECOMPUTE = memory.RECOMPUTE


@dataclass(frozen=True)
class Layout:
    """One parallel layout of a training job.

    dp, tp, pp: data-, tensor- and pipeline-parallel sizes; micro_batch: sequences per
    micro-batch; global_batch: sequences per optimizer step; zero_stage 0..3 (over dp);
    sp: Megatron sequence parallelism (inside the TP group); recompute: "none", "selective",
    "full"; ep: expert-parallel size, carved out of the data-parallel ranks (Megatron-Core
    convention), so it must divide dp and does not change ``world_size``.
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

    def __post_init__(self):
        for name in ("dp", "tp", "pp", "micro_batch", "global_batch", "ep"):
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

    @property
    def world_size(self) -> int:
        """GPUs used: dp · tp · pp."""
        return self.dp * self.tp * self.pp

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
        tail = (" " + " ".join(extra)) if extra else ""
        return f"dp={self.dp} tp={self.tp} pp={self.pp} mb={self.micro_batch}{tail}"


def layout_problems(spec, layout: Layout, n_gpus: int, gpus_per_node: int = 8) -> list[str]:
    """Reasons why ``layout`` cannot train ``spec`` on ``n_gpus`` GPUs (empty list when valid).

    Rules: dp·tp·pp == n_gpus; tp divides heads, kv_heads (Megatron splits whole KV groups) and
    ffn_hidden; tp ≤ gpus_per_node (TP all-reduces stay on NVLink, Narayanan 2021 §3.2); pp
    divides layers (equal stages); ep == 1 for a dense model (or divides ``spec.num_experts``).
    """
    n = validate.integer("n_gpus", n_gpus, lo=1)
    g = validate.integer("gpus_per_node", gpus_per_node, lo=1)
    out = []
    if layout.world_size != n:
        out.append(f"dp*tp*pp = {layout.world_size} != n_gpus = {n}")
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
#: Default fraction of dense peak the GEMMs reach, before bubble and communication: the top of
#: the seed's "effective compute is 40-70 % of peak" (seed 004 §1.1, compute.EFFECTIVE_COMPUTE_RANGE);
#: the losses the search models explicitly (bubble, TP/PP/DP communication) are not in it.
DEFAULT_COMPUTE_EFFICIENCY = 0.70

#: Default share of HBM kept free for the CUDA context, NCCL buffers and allocator fragmentation.
#: An explicit planning allowance (an assumption, not a measurement): a layout must fit in
#: hbm_gb · (1 − reserve_frac).
DEFAULT_RESERVE_FRAC = 0.10

#: Default compute NIC per GPU: one 400 Gbit/s port per GPU (seed 004 §1.4: "每张GPU至少配1个400G端口"),
#: as in DGX H100 (8 × ConnectX-7 for 8 GPUs, labutil/data/servers.toml).
DEFAULT_NIC = "ConnectX-7-400G"


def _gpu(gpu):
    from .hardware import GPU, gpu as lookup

    if isinstance(gpu, GPU):
        return gpu
    return lookup(gpu)


def _executed_flops_per_token(spec, seq_len, rc):
    """(executed, model) training FLOPs per token for recompute codes ``rc`` (array).

    model = 6·N + 12·l·s·h (``compute.train_flops_per_token``, Narayanan 2021 eq. 3 per token).
    selective recompute re-runs the attention-core forward: + 4·l·s·h (1/3 of the 12·l·s·h);
    full recompute re-runs every layer's forward: + 2·N_layers + 4·l·s·h (Narayanan §5.1: 4 instead
    of 3 forward-equivalents; the logit layer is not recomputed).
    """
    from . import compute

    model = float(compute.train_flops_per_token(spec, seq_len))
    attn_fwd = float(compute.attention_flops_per_token(spec, seq_len)) / 3.0
    layers_fwd = 2.0 * float(spec.non_embedding_params()) if hasattr(spec, "non_embedding_params") \
        else 2.0 * spec.layers * memory.layer_params(spec)
    rc = np.asarray(rc)
    extra = np.where(rc == 1, attn_fwd, np.where(rc == 2, layers_fwd + attn_fwd, 0.0))
    return model + extra, model


def _ar_time(size_bytes, n, bw_gbs, latency_s):
    """Ring all-reduce time (labutil.comm, α-β model), 0 where n == 1."""
    from . import comm

    n = np.asarray(n)
    t = comm.collective_time_s("all_reduce", size_bytes, np.maximum(n, 1), bw_gbs, latency_s, "ring")
    return np.where(n > 1, t, 0.0)


def _estimate_arrays(spec, n_gpus, g, global_batch, seq_len, cols, *, optimizer, precision, efficiency,
                     net_gbs, nvlink_gbs, gpus_per_node, dp_overlap, overhead_gb):
    """Memory and step time for column arrays ``cols`` (dp, tp, pp, mb, zero, sp, rc)."""
    from . import comm

    dp, tp, pp, mb, zero, sp, rc = (cols[k] for k in ("dp", "tp", "pp", "micro_batch", "zero_stage", "sp", "recompute"))
    m = global_batch // (dp * mb)
    mem = memory._training_memory_arrays(spec, tp, pp, dp, mb, m, zero, sp, rc, seq_len, optimizer, precision,
                                         overhead_gb)
    s, h, L = float(seq_len), float(spec.hidden), float(spec.layers)
    peak = g.peak_tflops(precision if precision != "fp32" else "tf32") * 1e12
    exec_tok, model_tok = _executed_flops_per_token(spec, s, rc)
    tokens = float(global_batch) * s
    compute_s = exec_tok * tokens / (n_gpus * peak * efficiency)
    by = 4.0 if precision == "fp32" else 2.0
    act_bytes = by * s * mb * h
    tp_f, pp_f, dp_f, m_f = (np.asarray(x, float) for x in (tp, pp, dp, m))
    tp_s = (L / pp_f) * m_f * _tp_allreduces(rc) * _ar_time(act_bytes, tp, nvlink_gbs, comm.NVLINK_STEP_LATENCY_S)
    ideal = compute_s + tp_s
    bubble = (pp_f - 1.0) / m_f
    bubble_s = bubble * ideal
    p2p_bytes = act_bytes / tp_f
    pp_s = np.where(pp_f > 1, 2.0 * (m_f + pp_f - 1.0) * (p2p_bytes / (net_gbs * BYTES_PER_GB) + comm.NET_STEP_LATENCY_S), 0.0)
    grad_bytes = by * mem["stage_params"]
    intra = tp_f * dp_f <= gpus_per_node
    bw = np.where(intra, nvlink_gbs, net_gbs)
    lat = np.where(intra, comm.NVLINK_STEP_LATENCY_S, comm.NET_STEP_LATENCY_S)
    dp_s = _ar_time(grad_bytes, dp, bw, lat) * np.where(np.asarray(zero) == 3, 1.5, 1.0)
    window = dp_overlap * (2.0 / 3.0) * compute_s / m_f   # backward of the last micro-batch
    dp_exposed = np.maximum(0.0, dp_s - window)
    step = ideal + bubble_s + pp_s + dp_exposed
    model_tflops = model_tok * tokens / (n_gpus * step) / 1e12
    return mem, {"compute_s": compute_s, "tp_comm_s": tp_s, "bubble_s": bubble_s, "pp_comm_s": pp_s,
                 "dp_comm_s": dp_s, "dp_exposed_s": dp_exposed, "step_s": step, "bubble": bubble,
                 "model_tflops_per_gpu": model_tflops, "mfu": model_tflops * 1e12 / peak, "n_microbatches": m}


@dataclass(frozen=True)
class LayoutEstimate:
    """One layout with its per-GPU memory (GB) and estimated step time (s)."""

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

    @property
    def tokens_per_s(self) -> float:
        return float("nan") if self.step_s <= 0 else self.layout.global_batch / self.step_s


@dataclass(frozen=True)
class SearchResult:
    """Every candidate layout as numpy columns, best (shortest step) first.

    ``columns`` maps a name to an array (dp, tp, pp, micro_batch, zero_stage, sp, recompute code
    0/1/2, memory_gb, weights_gb, grads_gb, optimizer_gb, activations_gb, step_s, compute_s,
    bubble_s, tp_comm_s, pp_comm_s, dp_exposed_s, mfu, fits). ``len()``, indexing and iteration
    give :class:`LayoutEstimate` objects.
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
                     int(c["zero_stage"][i]), bool(c["sp"][i]), RECOMPUTE[int(c["recompute"][i])])
        f = {k: float(c[k][i]) for k in ("memory_gb", "weights_gb", "grads_gb", "optimizer_gb", "activations_gb",
                                         "step_s", "compute_s", "bubble_s", "tp_comm_s", "pp_comm_s",
                                         "dp_exposed_s", "mfu")}
        return LayoutEstimate(lay, f["memory_gb"], bool(c["fits"][i]), f["weights_gb"], f["grads_gb"],
                              f["optimizer_gb"], f["activations_gb"], f["step_s"], f["compute_s"], f["bubble_s"],
                              f["tp_comm_s"], f["pp_comm_s"], f["dp_exposed_s"], f["mfu"])

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    @property
    def best(self) -> LayoutEstimate:
        if not len(self):
            raise ValueError("no feasible layout: every candidate exceeds the usable memory "
                             f"({self.usable_gb:.1f} GB per GPU)")
        return self[0]

    def top(self, k: int = 5) -> list[LayoutEstimate]:
        k = validate.integer("k", k, lo=1)
        return [self[i] for i in range(min(k, len(self)))]

    def rows(self, k: int = 10) -> list[dict]:
        """Plain dicts of the best ``k`` layouts, for ``labutil.notebook.show_table``."""
        out = []
        for e in self.top(k):
            L = e.layout
            out.append({"dp": L.dp, "tp": L.tp, "pp": L.pp, "mb": L.micro_batch, "ZeRO": L.zero_stage,
                        "SP": "yes" if L.sp else "no", "recompute": L.recompute, "mem_GB": round(e.memory_gb, 1),
                        "step_s": round(e.step_s, 2), "bubble_%": round(100 * e.bubble_s / e.step_s, 1),
                        "MFU_%": round(100 * e.mfu, 1)})
        return out


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def candidate_columns(spec, n_gpus, global_batch, *, gpus_per_node=8, micro_batches=(1, 2, 4, 8),
                      zero_stages=(0, 1, 2, 3), recompute=RECOMPUTE, sp_options=(False, True),
                      allow_zero23_with_pp=False) -> dict:
    """All structurally valid (dp, tp, pp, micro_batch, zero, sp, recompute) combinations as arrays.

    tp runs over the divisors of n_gpus that divide heads, kv_heads and ffn_hidden and are
    ≤ gpus_per_node; pp over the divisors of layers with tp·pp | n_gpus; micro_batch such that
    dp·micro_batch divides global_batch. SP=True only with tp > 1 (it changes nothing at tp = 1).
    ZeRO-2/3 with pp > 1 are dropped unless ``allow_zero23_with_pp`` (DeepSpeed does not support it).
    """
    n = validate.integer("n_gpus", n_gpus, lo=1)
    B = validate.integer("global_batch", global_batch, lo=1)
    for name, seq in (("micro_batches", micro_batches), ("zero_stages", zero_stages)):
        if len(seq) == 0:
            raise ValueError(f"{name} must not be empty")
    mbs = np.array([validate.integer("micro_batches", x, lo=1) for x in micro_batches])
    zs = np.array([validate.integer("zero_stages", x, lo=0, hi=3) for x in zero_stages])
    rcs = np.array([RECOMPUTE.index(validate.choice("recompute", r, RECOMPUTE)) for r in recompute])
    if len(rcs) == 0:
        raise ValueError("recompute must not be empty")
    sps = [bool(x) for x in sp_options]
    if not sps:
        raise ValueError("sp_options must not be empty")
    mp = [(t, p) for t in _divisors(n) if t <= gpus_per_node and spec.heads % t == 0 and spec.kv_heads % t == 0
          and spec.ffn_hidden % t == 0 for p in _divisors(spec.layers) if n % (t * p) == 0]
    if not mp:
        return {k: np.zeros(0, dtype=int) for k in ("dp", "tp", "pp", "micro_batch", "zero_stage", "sp", "recompute")}
    tp = np.array([t for t, _ in mp])
    pp = np.array([p for _, p in mp])
    sp_arr = np.array(sps)
    # full grid: mp × mb × zero × sp × rc
    I, J, K, S, R = np.meshgrid(np.arange(len(mp)), np.arange(len(mbs)), np.arange(len(zs)),
                                np.arange(len(sp_arr)), np.arange(len(rcs)), indexing="ij")
    I, J, K, S, R = (x.ravel() for x in (I, J, K, S, R))
    t, p, b, z, s_, r = tp[I], pp[I], mbs[J], zs[K], sp_arr[S], rcs[R]
    d = n // (t * p)
    ok = (B % (d * b) == 0) & ~(s_ & (t == 1))
    if not allow_zero23_with_pp:
        ok &= ~((z >= 2) & (p > 1))
    return {"dp": d[ok], "tp": t[ok], "pp": p[ok], "micro_batch": b[ok], "zero_stage": z[ok], "sp": s_[ok],
            "recompute": r[ok]}


def search_layouts(spec, n_gpus, gpu, global_batch, *, seq_len=None, gpus_per_node=8, micro_batches=(1, 2, 4, 8),
                   zero_stages=(0, 1, 2, 3), recompute=RECOMPUTE, sp_options=(False, True), optimizer="adam",
                   precision="bf16", reserve_frac=DEFAULT_RESERVE_FRAC, efficiency=DEFAULT_COMPUTE_EFFICIENCY,
                   net_gbs=None, nvlink_gbs=None, dp_overlap=1.0, allow_zero23_with_pp=False,
                   include_infeasible=False) -> SearchResult:
    """Every feasible layout of ``spec`` on ``n_gpus`` GPUs of type ``gpu``, best (fastest) first.

    Memory: :func:`labutil.memory.training_memory_gb` (heaviest stage); a layout fits when it is
    ≤ hbm_gb·(1 − reserve_frac). Step time (per optimizer step of ``global_batch`` sequences)::

        compute   = executed FLOPs / (n_gpus · peak · efficiency)        (recompute adds FLOPs)
        tp        = (layers/pp) · m · 4 (6 with full recompute) ring all-reduces of s·b·h·2 B over NVLink
        ideal     = compute + tp;  bubble = (pp−1)/m · ideal             (Narayanan 2021 §2.2.1)
        pp        = 2·(m + pp − 1) sends of s·b·h·2/tp B over the network
        dp        = ring all-reduce of the stage's 16-bit gradients over dp (×1.5 for ZeRO-3), over
                    NVLink when tp·dp ≤ gpus_per_node else the NIC; exposed beyond dp_overlap × the
                    backward (2/3) of the last micro-batch (gradients are reduced once per step)
        step      = ideal + bubble + pp + exposed dp

    Collective times are ``labutil.comm.collective_time_s`` (α-β ring, NCCL latencies). Defaults:
    efficiency 0.70 (DEFAULT_COMPUTE_EFFICIENCY), one 400 Gbit/s NIC per GPU (50 GB/s), NVLink
    per direction = catalog bidirectional / 2. ``gpu``: catalog name or ``hardware.GPU``.
    Returns a :class:`SearchResult`; ``include_infeasible=True`` keeps layouts that do not fit
    (sorted after those that do). Vectorised over all candidates (no Python loop over layouts).
    """
    from . import comm
    from .hardware import nic

    g = _gpu(gpu)
    n = validate.integer("n_gpus", n_gpus, lo=1)
    B = validate.integer("global_batch", global_batch, lo=1)
    s = spec.seq_len if seq_len is None else validate.integer("seq_len", seq_len, lo=1)
    rf = validate.number("reserve_frac", reserve_frac, lo=0.0, hi=1.0, hi_open=True)
    eff = validate.fraction("efficiency", efficiency)
    ov = validate.number("dp_overlap", dp_overlap, lo=0.0, hi=1.0)
    gpn = validate.integer("gpus_per_node", gpus_per_node, lo=1)
    validate.choice("optimizer", optimizer, memory.OPTIMIZERS)
    validate.choice("precision", precision, memory.PRECISIONS)
    net = nic(DEFAULT_NIC).port_gbps / 8.0 if net_gbs is None else validate.positive("net_gbs", net_gbs)
    if nvlink_gbs is None:
        if g.nvlink_gbs <= 0:
            raise ValueError(f"gpu {g.name!r} has no NVLink in the catalog; pass nvlink_gbs (intra-node GB/s per direction)")
        nvl = g.nvlink_gbs / 2.0
    else:
        nvl = validate.positive("nvlink_gbs", nvlink_gbs)
    cols = candidate_columns(spec, n, B, gpus_per_node=gpn, micro_batches=micro_batches, zero_stages=zero_stages,
                             recompute=recompute, sp_options=sp_options, allow_zero23_with_pp=allow_zero23_with_pp)
    usable = g.hbm_gb * (1.0 - rf)
    n_cand = int(len(cols["dp"]))
    if n_cand:
        mem, t = _estimate_arrays(spec, n, g, B, s, cols, optimizer=optimizer, precision=precision, efficiency=eff,
                                  net_gbs=net, nvlink_gbs=nvl, gpus_per_node=gpn, dp_overlap=ov, overhead_gb=0.0)
    else:
        mem = {k: np.zeros(0) for k in ("weights_gb", "grads_gb", "optimizer_gb", "activations_gb", "total_gb")}
        t = {k: np.zeros(0) for k in ("compute_s", "tp_comm_s", "bubble_s", "pp_comm_s", "dp_exposed_s", "step_s", "mfu")}
    fits = mem["total_gb"] <= usable
    allc = dict(cols)
    allc.update({"memory_gb": mem["total_gb"], "weights_gb": mem["weights_gb"], "grads_gb": mem["grads_gb"],
                 "optimizer_gb": mem["optimizer_gb"], "activations_gb": mem["activations_gb"] + mem.get("logits_gb", 0.0),
                 "fits": fits})
    for k in ("compute_s", "tp_comm_s", "bubble_s", "pp_comm_s", "dp_exposed_s", "step_s", "mfu"):
        allc[k] = np.broadcast_to(np.asarray(t[k], float), fits.shape)
    keep = np.ones_like(fits) if include_infeasible else fits
    idx = np.flatnonzero(keep)
    order = np.lexsort((allc["memory_gb"][idx], allc["step_s"][idx], ~fits[idx]))
    sel = idx[order]
    out = {k: np.asarray(v)[sel] for k, v in allc.items()}
    return SearchResult(out, n, g.name, float(usable), B, n_cand,
                        {"efficiency": eff, "net_gbs": net, "nvlink_gbs": nvl, "reserve_frac": rf, "seq_len": s})


def estimate_layout(spec, layout: Layout, n_gpus, gpu, *, seq_len=None, gpus_per_node=8, optimizer="adam",
                    precision="bf16", reserve_frac=DEFAULT_RESERVE_FRAC, efficiency=DEFAULT_COMPUTE_EFFICIENCY,
                    net_gbs=None, nvlink_gbs=None, dp_overlap=1.0) -> LayoutEstimate:
    """Memory and step-time estimate of ONE layout (same model as :func:`search_layouts`).

    Checks the layout first (:func:`check_layout`); the result's ``fits`` says whether it fits.
    """
    check_layout(spec, layout, n_gpus, gpus_per_node)
    cols = {"dp": np.array([layout.dp]), "tp": np.array([layout.tp]), "pp": np.array([layout.pp]),
            "micro_batch": np.array([layout.micro_batch]), "zero_stage": np.array([layout.zero_stage]),
            "sp": np.array([layout.sp]), "recompute": np.array([RECOMPUTE.index(layout.recompute)])}
    from .hardware import nic

    g = _gpu(gpu)
    s = spec.seq_len if seq_len is None else validate.integer("seq_len", seq_len, lo=1)
    eff = validate.fraction("efficiency", efficiency)
    rf = validate.number("reserve_frac", reserve_frac, lo=0.0, hi=1.0, hi_open=True)
    net = nic(DEFAULT_NIC).port_gbps / 8.0 if net_gbs is None else validate.positive("net_gbs", net_gbs)
    nvl = (g.nvlink_gbs / 2.0 if g.nvlink_gbs > 0 else None) if nvlink_gbs is None else validate.positive("nvlink_gbs", nvlink_gbs)
    if nvl is None:
        raise ValueError(f"gpu {g.name!r} has no NVLink in the catalog; pass nvlink_gbs")
    mem, t = _estimate_arrays(spec, n_gpus, g, layout.global_batch, s, cols, optimizer=optimizer, precision=precision,
                              efficiency=eff, net_gbs=net, nvlink_gbs=nvl, gpus_per_node=gpus_per_node,
                              dp_overlap=validate.number("dp_overlap", dp_overlap, lo=0.0, hi=1.0), overhead_gb=0.0)
    f = lambda a: float(np.asarray(a).ravel()[0])  # noqa: E731
    total = f(mem["total_gb"])
    return LayoutEstimate(layout, total, total <= g.hbm_gb * (1 - rf), f(mem["weights_gb"]), f(mem["grads_gb"]),
                          f(mem["optimizer_gb"]), f(mem["activations_gb"]) + f(mem["logits_gb"]), f(t["step_s"]),
                          f(t["compute_s"]), f(t["bubble_s"]), f(t["tp_comm_s"]), f(t["pp_comm_s"]),
                          f(t["dp_exposed_s"]), f(t["mfu"]))


# ---------------------------------------------------------------------------------------------
# 实操: Megatron-LM arguments from a layout, and its iteration log parsed
# ---------------------------------------------------------------------------------------------
def megatron_args(layout: Layout, *, seq_len: int | None = None) -> list[str]:
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

        def num(key, cast=float):
            try:
                return cast(float(fields[key]))
            except (KeyError, ValueError):
                return None

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
