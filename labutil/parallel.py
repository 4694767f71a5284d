"""Parallel layouts (DP/TP/PP/SP/CP/EP, ZeRO, recompute): validity, pipeline bubble, communication volume.

Taught in ch08 (并行策略: DP/TP/PP/SP/EP与3D并行). What a layout IS and what it moves: the
:class:`Layout` record, the rules that make it valid (:func:`layout_problems`), the pipeline bubble
and the bytes each strategy sends per step (:func:`comm_volume_gb`). How LONG a step takes on a
cluster, and the search over every layout, live one layer up in ``labutil.steptime``; the
Megatron-LM command line of a layout in ``labutil.frameworks.megatron_args`` and its log parser in
``labutil.parsers.megatron``.

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
- Context parallelism: Megatron-Core ``--context-parallel-size``; expert parallelism carved out of
  the data-parallel ranks (Megatron-Core ``--expert-model-parallel-size``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import memory, validate
from .units import BYTES_PER_GB

__all__ = ["RECOMPUTE", "Layout", "layout_problems", "check_layout", "OBSTACLES", "layout_obstacles",
           "pipeline_bubble", "pipeline_bubble_fraction", "CommVolume", "comm_volume_gb"]

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
    interleave: model chunks per GPU of the interleaved 1F1B schedule (Narayanan 2021 §2.2.2);
    shard: ZeRO/FSDP shard-group size for hybrid sharding (HSDP, PyTorch FSDP ``HYBRID_SHARD``): model
    states are sharded over ``shard`` data-parallel ranks and replicated across the dp·cp/shard groups;
    0 (default) shards over all dp·cp ranks.
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
    shard: int = 0

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
        object.__setattr__(self, "shard", validate.integer("shard", self.shard, lo=0))
        if self.shard:
            if (self.dp * self.cp) % self.shard:
                raise ValueError(f"shard must divide dp*cp = {self.dp * self.cp} (hybrid sharding replicates whole "
                                 f"shard groups); got shard={self.shard}")
            if self.zero_stage == 0:
                raise ValueError("shard (hybrid sharding) needs zero_stage >= 1: with ZeRO-0 nothing is sharded")

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
        if self.shard and self.shard < self.dp * self.cp:
            extra.append(f"hsdp={self.shard}")
        tail = (" " + " ".join(extra)) if extra else ""
        return f"dp={self.dp} tp={self.tp} pp={self.pp} mb={self.micro_batch}{tail}"


def layout_problems(spec, layout: Layout, n_gpus: int, gpus_per_node: int = 8) -> list[str]:
    """Reasons why ``layout`` cannot train ``spec`` on ``n_gpus`` GPUs (empty list when valid).

    Rules: dp·tp·pp·cp == n_gpus; cp divides seq_len; tp divides heads, kv_heads (Megatron splits whole KV groups) and
    ffn_hidden; tp ≤ gpus_per_node and divides it (TP all-reduces stay on NVLink, Narayanan 2021 §3.2); pp
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
    elif g % layout.tp:
        # ranks are placed node by node: a tp group that does not divide the node (tp = 6 on 8 GPUs) straddles two
        # nodes, so its all-reduces leave NVLink (the step-time model times every tp group inside one node)
        out.append(f"tp={layout.tp} does not divide gpus_per_node={g} (some tensor-parallel groups would straddle two nodes)")
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



#: Reasons :func:`layout_obstacles` counts, in the order a learner fixes them.
OBSTACLES = ("gpus", "tp_node", "heads", "layers", "batch")


def layout_obstacles(spec, n_gpus: int, global_batch: int, micro_batch: int = 1, gpus_per_node: int = 8,
                     tp_options=(1, 2, 4, 8, 16, 32, 64), pp_options=(1, 2, 4, 8, 16, 32, 64)) -> dict:
    """Why (tp, pp) layouts of ``spec`` on ``n_gpus`` are invalid: for every (tp, pp) pair, the rules of
    :func:`layout_problems` it breaks (cp = ep = 1), counted per rule.

    Rules (:data:`OBSTACLES`): "gpus" tp·pp does not divide n_gpus; "tp_node" tp > gpus_per_node or tp does not
    divide it; "heads" tp
    does not divide heads / kv_heads / ffn_hidden; "layers" pp does not divide the layers; "batch" the
    data-parallel size times ``micro_batch`` does not divide ``global_batch``. Returns {"pairs": number of
    pairs, "valid": number with no problem, "counts": {rule: pairs it blocks}, "examples": {rule: (tp, pp)}}.
    """
    n = validate.integer("n_gpus", n_gpus, lo=1)
    B = validate.integer("global_batch", global_batch, lo=1)
    b = validate.integer("micro_batch", micro_batch, lo=1)
    g = validate.integer("gpus_per_node", gpus_per_node, lo=1)
    counts = {k: 0 for k in OBSTACLES}
    examples: dict = {}
    pairs = valid = 0
    for t in tp_options:
        for p in pp_options:
            pairs += 1
            broken = []
            if n % (t * p):
                broken.append("gpus")
            if t > g or g % t:
                broken.append("tp_node")
            if spec.heads % t or spec.kv_heads % t or spec.ffn_hidden % t:
                broken.append("heads")
            if spec.layers % p:
                broken.append("layers")
            if "gpus" not in broken and B % ((n // (t * p)) * b):
                broken.append("batch")
            for k in broken:
                counts[k] += 1
                examples.setdefault(k, (t, p))
            valid += not broken
    return {"pairs": pairs, "valid": valid, "counts": counts, "examples": examples}

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
    - DP over the d = dp·cp data-parallel ranks, Ψ = Ψ_stage/t elements per GPU (ring: a
      reduce-scatter or all-gather sends (d−1)/d of its buffer per GPU, an all-reduce twice that):
      ZeRO-0/1 reduce the accumulated gradients once per step, 2(d−1)/d·Ψ (ZeRO-1 as reduce-scatter +
      all-gather, ZeRO §7); ZeRO-2 reduce-scatters every micro-batch and all-gathers the parameters
      once per step, (m + 1)(d−1)/d·Ψ; ZeRO-3 / FSDP all-gathers the parameters before every
      micro-batch's forward and backward and reduce-scatters its gradients, 3m(d−1)/d·Ψ: the ZeRO
      paper's "1.5× data parallelism" holds for ONE micro-batch per step, and the traffic grows
      with the micro-batch count. Hybrid sharding (``layout.shard`` = s) runs those collectives in
      groups of s and adds an all-reduce of the Ψ/s gradient shard across the d/s replicas, once per
      step (ZeRO-1) or per micro-batch (ZeRO-2/3).
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
    dd = d * layout.cp
    sh = layout.shard if layout.shard and layout.zero_stage else dd
    r = dd // sh
    z = layout.zero_stage
    ring = (sh - 1) / sh * dp_msg                    # one reduce-scatter or all-gather in the shard group
    rep = 2.0 * (r - 1) / r * dp_msg / sh             # all-reduce of the gradient shard across replicas
    if z <= 1:
        dp_bytes = 2.0 * ring + rep
    elif z == 2:
        dp_bytes = (m + 1) * ring + m * rep
    else:
        dp_bytes = m * (3.0 * ring + rep)
    dp_gb = dp_bytes / BYTES_PER_GB
    return CommVolume(tp_gb, pp_gb, dp_gb, tp_msg / BYTES_PER_GB, dp_msg / BYTES_PER_GB)
