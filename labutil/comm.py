"""Collective communication: the α-β cost model, algbw/busbw, and data-parallel step time.

Taught in ch13 (集合通信原理) and ch14 (带宽规划与计算通信重叠); used by ch22 (nccl-tests) and the
NCCL lab (lab02).

Conventions
-----------
- ``size_bytes`` is the buffer size as nccl-tests prints it in its ``size`` column: for
  all_reduce / broadcast / reduce the per-rank buffer; for all_gather / reduce_scatter /
  all_to_all the *total* buffer (``count_per_rank × dtype_size × n``; nccl-tests
  ``doc/PERFORMANCE.md``).
- ``bw_gbs`` is the per-rank, per-direction link bandwidth in decimal GB/s (1e9 B/s): what one
  GPU can send (and, at the same time, receive). A 400 Gbit/s NIC per GPU is 50 GB/s; one
  25 GbE port shared by 8 GPUs is 25/8/8 = 0.39 GB/s per GPU (``per_gpu_net_bw_gbs``). NVLink
  catalog figures are bidirectional totals, so the per-direction rate is half
  (``nvlink_per_direction_gbs``).
- ``latency_s`` is α, the fixed cost of one message step (launch + wire + protocol).
- The γ term (reduction arithmetic) of Thakur et al. is left out: a GPU reduces at HBM speed,
  far above any link bandwidth.

The α-β model (Hockney; Thakur, Rabenseifner & Gropp 2005, "Optimization of Collective
Communication Operations in MPICH", IJHPCA 19(1), §2 cost model and the per-algorithm costs of
§3-§4) charges ``steps·α + bytes_on_the_busiest_link/B``. Per operation and algorithm
(n ranks, S bytes, ⌈lg n⌉ = ceil(log2 n)):

=============== ================================= ============================================
op              ring (NCCL default)               tree / logarithmic algorithm
=============== ================================= ============================================
all_reduce      2(n-1)α + 2(n-1)/n·S/B            NCCL double binary tree: 2⌈lg n⌉α + 2·S/B
                (Patarasuk & Yuan 2009: optimal)  (S/B for n = 2)
reduce_scatter  (n-1)α + (n-1)/n·S/B              recursive halving: ⌈lg n⌉α + (n-1)/n·S/B
all_gather      (n-1)α + (n-1)/n·S/B              recursive doubling: ⌈lg n⌉α + (n-1)/n·S/B
all_to_all      pairwise: (n-1)α + (n-1)/n·S/B    Bruck: ⌈lg n⌉α + ⌈lg n⌉/2·S/B
broadcast       pipelined chain: (n-1)α + S/B     binomial tree: ⌈lg n⌉(α + S/B)
reduce          pipelined chain: (n-1)α + S/B     binomial tree: ⌈lg n⌉(α + S/B)
=============== ================================= ============================================

Sources: ring / recursive-doubling / recursive-halving / pairwise / Bruck / binomial costs are
those of Thakur et al. 2005 §4 (allgather, reduce-scatter, alltoall, broadcast); the ring
all-reduce bandwidth term 2(n-1)/n·S/B is the lower bound of Patarasuk & Yuan 2009 ("Bandwidth
optimal all-reduce algorithms for clusters of workstations", JPDC 69(2)) and the bound of
nccl-tests PERFORMANCE.md. The double binary tree is from NVIDIA's blog "Massively Scale Your
Deep Learning Training with NCCL 2.4" (Jeaugey, 2019): two complementary binary trees, each
carrying half the data, give full bandwidth with logarithmic latency. Its costs match NCCL's own
tuning model (``src/graph/tuning.cc``, ``ncclTopoTuneModel``): tree algbw = busbw × 0.5, i.e.
t = 2·S/B, and tree latency = 2·(log2(nNodes)·interLat + (ppn-1)·intraLat); ring algbw =
busbw × n / (2(n-1)). Derivation of the tree β term: in the double binary tree every rank is an
inner node in one tree (receives S/2 from each of two children on the way up and sends S/2 to
each child on the way down) and a leaf in the other, so the busiest rank sends 2·S in total
(S for n = 2, where the two trees degenerate into one exchange).

The functions above are the bare α-β model (one per-rank bandwidth B), as ch13 teaches it. Every
estimate of a real cluster goes through ``labutil.cluster`` (``Cluster.collective_time_s``), which
builds on them: achievable NVLink ring / NVLS busbw inside the NVLink domain, per-rail rings (the
node's NICs add up) or NCCL's tree across nodes, cited efficiencies. The data-parallel planning
functions that run on that model (``dp_comm_time_s``, ``scaling_curve``,
``required_bandwidth_gbps``) live in ``labutil.dp``, one layer above ``labutil.cluster``; this
module imports only ``validate`` and ``units`` (the step-time algebra ``step_time`` /
``scaling_efficiency`` stays here: it needs no cluster).

"hierarchical" (all_reduce) is the two-level scheme of Horovod / NCCL on NVLink servers: a
reduce-scatter inside each node over NVLink, an all-reduce of S/g across the m = n/g nodes over
the NICs (g parallel rings, one per local GPU index, i.e. one per rail), then an all-gather
inside the node. The other ops use the analogous two-level split (see ``collective_cost``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import hardware, validate
from .units import BITS_PER_BYTE, BYTES_PER_GB

__all__ = ["OPS", "ALGOS", "NET_STEP_LATENCY_S", "NVLINK_STEP_LATENCY_S", "DDP_BUCKET_BYTES", "check_op",
           "busbw_factor", "algbw_gbs", "busbw_gbs", "comm_time_from_busbw_s", "CollectiveCost", "collective_cost",
           "collective_time_s", "model_busbw_gbs", "bytes_sent_per_rank", "ring_tree_crossover_bytes",
           "per_gpu_net_bw_gbs", "nvlink_per_direction_gbs", "gradient_bytes", "dp_sync_time_s", "StepTime",
           "step_time", "scaling_efficiency"]

OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce")
ALGOS = ("ring", "tree", "hierarchical")

# Per-step latencies of NCCL's own performance model (NVIDIA/nccl src/graph/tuning.cc, table
# hwLat, Ring / Simple protocol, the protocol NCCL uses for large messages such as gradient
# buckets): NET 9.6 us, NVLink 3.4 us. They are the α defaults of this module.
NET_STEP_LATENCY_S = 9.6e-6
NVLINK_STEP_LATENCY_S = 3.4e-6

# PyTorch DistributedDataParallel default bucket_cap_mb = 25 (MiB), pytorch.org/docs
# torch.nn.parallel.DistributedDataParallel: gradients are all-reduced bucket by bucket.
DDP_BUCKET_BYTES = 25 * 2**20

# busbw = algbw × factor(n): NVIDIA/nccl-tests doc/PERFORMANCE.md, "Summary".
_BUSBW_FACTORS = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "all_to_all": lambda n: (n - 1) / n,
    "broadcast": lambda n: np.ones_like(n, dtype=float),
    "reduce": lambda n: np.ones_like(n, dtype=float),
}


def check_op(op: str) -> str:
    """``op`` if it is one of ``OPS``, else a KeyError listing the known collectives."""
    if op not in OPS:
        raise validate.unknown_name("collective op", op, OPS)
    return op


_op = check_op  # the historical private name (labutil.bench.analysis)
_ret = validate.scalar_or_array
_is_scalar = validate.is_scalar


# -- nccl-tests bandwidths -------------------------------------------------------------------
def busbw_factor(op: str, n):
    """nccl-tests' correction factor busbw/algbw for ``op`` on ``n`` ranks (PERFORMANCE.md):
    all_reduce 2(n-1)/n; reduce_scatter, all_gather, all_to_all (n-1)/n; broadcast, reduce 1."""
    _op(op)
    nn = validate.integer("n", n, lo=1)
    return _ret(_BUSBW_FACTORS[op](np.asarray(nn, dtype=float)), np.ndim(n) == 0)


def algbw_gbs(size_bytes, time_s):
    """Algorithm bandwidth as nccl-tests prints it: algbw = S / t, in decimal GB/s (S/t/1e9)."""
    s = validate.positive("size_bytes", size_bytes, allow_zero=True)
    t = validate.positive("time_s", time_s)
    return _ret(np.asarray(s) / np.asarray(t) / BYTES_PER_GB, _is_scalar(size_bytes, time_s))


def busbw_gbs(op: str, algbw_gbs, n):
    """Bus bandwidth from algorithm bandwidth: busbw = algbw × factor(op, n) (nccl-tests PERFORMANCE.md).

    busbw is comparable with the per-rank hardware link rate whatever n is; for all_gather /
    reduce_scatter the nccl-tests size is the total buffer (count_per_rank × dtype × n)."""
    a = validate.positive("algbw_gbs", algbw_gbs, allow_zero=True)
    f = busbw_factor(op, n)
    return _ret(np.asarray(a) * np.asarray(f), _is_scalar(algbw_gbs, n))


def comm_time_from_busbw_s(size_bytes, n, busbw_gbs, op: str = "all_reduce"):
    """Collective time from a bus bandwidth, the inverse of ``busbw_gbs``: t = S × factor(op, n) / busbw
    (nccl-tests busbw = algbw × factor, algbw = S / t; doc/PERFORMANCE.md). For all_reduce
    t = S × 2(n-1)/n / busbw. Vectorised.

    >>> round(comm_time_from_busbw_s(1e9, 16, 370.0) * 1e3, 2)   # 1 GB on 2x DGX H100 at 370 GB/s, ms
    5.07
    """
    s = validate.positive("size_bytes", size_bytes, allow_zero=True)
    b = validate.positive("busbw_gbs", busbw_gbs)
    f = busbw_factor(op, n)
    return _ret(np.asarray(s) * np.asarray(f) / (np.asarray(b) * BYTES_PER_GB), _is_scalar(size_bytes, n, busbw_gbs))


# -- α-β coefficients ------------------------------------------------------------------------
def _ceil_log2(n: np.ndarray) -> np.ndarray:
    return np.ceil(np.log2(np.maximum(n, 1.0)))


def _coefficients(op: str, algo: str, n: np.ndarray):
    """(number of α steps, β multiplier of S/B) for a flat algorithm on n ranks (arrays)."""
    n = np.asarray(n, dtype=float)
    lg = _ceil_log2(n)
    one = (n > 1).astype(float)
    if algo == "ring":
        if op == "all_reduce":
            return 2.0 * (n - 1), 2.0 * (n - 1) / n
        if op in ("reduce_scatter", "all_gather", "all_to_all"):
            return n - 1, (n - 1) / n
        return n - 1, one  # broadcast / reduce: pipelined chain, the root link carries S
    # algo == "tree": the logarithmic-latency algorithm of each op
    if op == "all_reduce":
        beta = np.where(n >= 3, 2.0, np.where(n == 2, 1.0, 0.0))
        return 2.0 * lg, beta
    if op in ("reduce_scatter", "all_gather"):
        return lg, (n - 1) / n
    if op == "all_to_all":
        return lg, lg / 2.0
    return lg, lg  # broadcast / reduce: binomial tree


@dataclass(frozen=True)
class CollectiveCost:
    """Cost of one collective: ``time_s = latency_s + bandwidth_s`` (floats or arrays).

    For algo='hierarchical' ``intra_s`` / ``inter_s`` split the time into the NVLink part and the
    network part (with ``pipelined=True`` the bandwidth terms overlap: time = α terms + max of β terms).
    """

    time_s: object
    latency_s: object
    bandwidth_s: object
    intra_s: object
    inter_s: object
    choice: object = None  # labutil.cluster: the 'algorithm/protocol' NCCL's model picks (per element)


def collective_cost(op: str, size_bytes, n, bw_gbs, latency_s=NET_STEP_LATENCY_S, algo: str = "ring", *,
                    gpus_per_node: int = 8, intra_bw_gbs=None, intra_latency_s=NVLINK_STEP_LATENCY_S,
                    inter_algo: str = "ring", pipelined: bool = False) -> CollectiveCost:
    """α-β cost of ``op`` on ``n`` ranks; see the module docstring for every formula and its source.

    size_bytes: nccl-tests size (per-rank buffer; total buffer for all_gather/reduce_scatter/all_to_all).
    n: number of ranks (integer >= 1; n = 1 costs nothing).
    bw_gbs: per-rank per-direction bandwidth, GB/s. For 'hierarchical' it is the per-GPU *network*
        bandwidth (NIC rate shared by the GPUs that use it; see ``per_gpu_net_bw_gbs``).
    latency_s: α per step (network α for 'hierarchical'). Default: NCCL's NET ring latency.
    algo: 'ring', 'tree' or 'hierarchical'.
    gpus_per_node, intra_bw_gbs, intra_latency_s: the NVLink level of 'hierarchical' (intra_bw_gbs
        required there). With n <= gpus_per_node everything stays inside one node; otherwise n must
        be a multiple of gpus_per_node.
    inter_algo: 'ring' or 'tree' for the network level of 'hierarchical'.
    pipelined: hierarchical only; overlap the intra- and inter-node bandwidth terms (NCCL pipelines
        chunks through the levels) instead of running the phases one after the other (Horovod).

    Vectorised over size_bytes, n, bw_gbs and latency_s (numpy broadcasting).
    """
    _op(op)
    validate.choice("algo", algo, ALGOS)
    scalar = _is_scalar(size_bytes, n, bw_gbs, latency_s)
    s = np.asarray(validate.positive("size_bytes", size_bytes, allow_zero=True), dtype=float)
    nn = np.asarray(validate.integer("n", n, lo=1), dtype=float)
    b = np.asarray(validate.positive("bw_gbs", bw_gbs), dtype=float) * BYTES_PER_GB
    a = np.asarray(validate.positive("latency_s", latency_s, allow_zero=True), dtype=float)
    s, nn, b, a = np.broadcast_arrays(s, nn, b, a)
    zero = np.zeros_like(s)
    if algo in ("ring", "tree"):
        steps, beta = _coefficients(op, algo, nn)
        lat = steps * a
        bw = beta * s / b
        t = lat + bw
        return CollectiveCost(_ret(t, scalar), _ret(lat, scalar), _ret(bw, scalar), _ret(zero, scalar), _ret(t, scalar))

    # hierarchical
    validate.choice("inter_algo", inter_algo, ("ring", "tree"))
    g = validate.integer("gpus_per_node", gpus_per_node, lo=1)
    if intra_bw_gbs is None:
        raise ValueError("intra_bw_gbs (per-direction NVLink bandwidth per GPU, GB/s) is required for algo='hierarchical'")
    bi = validate.positive("intra_bw_gbs", intra_bw_gbs) * BYTES_PER_GB
    ai = validate.positive("intra_latency_s", intra_latency_s, allow_zero=True)
    if np.any((nn > g) & (np.mod(nn, g) != 0)):
        bad = nn[(nn > g) & (np.mod(nn, g) != 0)].ravel()[0]
        raise ValueError(f"n must be <= gpus_per_node ({g}) or a multiple of it for algo='hierarchical'; got {int(bad)}")
    gl = np.minimum(nn, g)  # GPUs per node actually used
    m = nn / gl  # nodes
    if op == "all_reduce":
        st_i, be_i = _coefficients("reduce_scatter", "ring", gl)
        st_n, be_n = _coefficients("all_reduce", inter_algo, m)
        lat_i, bw_i = 2 * st_i * ai, 2 * be_i * s / bi  # reduce-scatter + all-gather in the node
        lat_n, bw_n = st_n * a, be_n * (s / gl) / b
    elif op in ("all_gather", "reduce_scatter"):
        st_i, be_i = _coefficients(op, "ring", gl)
        st_n, be_n = _coefficients(op, inter_algo, m)
        lat_i, bw_i = st_i * ai, be_i * s / bi
        lat_n, bw_n = st_n * a, be_n * (s / gl) / b
    elif op == "all_to_all":
        # each GPU sends S/n to each of the gl-1 local peers (NVLink) and the n-gl remote ones (NIC)
        lat_i, bw_i = (gl - 1) * ai, (gl - 1) / nn * s / bi
        st_n, _ = _coefficients("all_to_all", inter_algo, m)
        lat_n, bw_n = st_n * a, (nn - gl) / nn * s / b
    else:  # broadcast / reduce: between node roots over the network, then a chain inside each node
        st_i, be_i = _coefficients(op, "ring", gl)
        st_n, be_n = _coefficients(op, inter_algo, m)
        lat_i, bw_i = st_i * ai, be_i * s / bi
        lat_n, bw_n = st_n * a, be_n * s / b
    lat = lat_i + lat_n
    if pipelined:
        bw = np.maximum(bw_i, bw_n)
    else:
        bw = bw_i + bw_n
    t = lat + bw
    return CollectiveCost(_ret(t, scalar), _ret(lat, scalar), _ret(bw, scalar),
                          _ret(lat_i + bw_i, scalar), _ret(lat_n + bw_n, scalar))


def collective_time_s(op: str, size_bytes, n, bw_gbs, latency_s=NET_STEP_LATENCY_S, algo: str = "ring", **kwargs):
    """Time (s) of one collective under the α-β model; ``collective_cost(...).time_s``.

    Ring all-reduce: t = 2(n-1)·α + 2(n-1)/n · S/B (Thakur et al. 2005; Patarasuk & Yuan 2009).
    ``bw_gbs`` is the per-rank per-direction link bandwidth in GB/s. Extra keyword arguments
    (gpus_per_node, intra_bw_gbs, intra_latency_s, inter_algo, pipelined) are those of
    ``collective_cost``.
    """
    return collective_cost(op, size_bytes, n, bw_gbs, latency_s, algo, **kwargs).time_s


def model_busbw_gbs(op: str, size_bytes, n, bw_gbs, latency_s=NET_STEP_LATENCY_S, algo: str = "ring", **kwargs):
    """busbw that nccl-tests would print for the modelled time (algbw × factor); 0 where S = 0."""
    t = np.asarray(collective_time_s(op, size_bytes, n, bw_gbs, latency_s, algo, **kwargs), dtype=float)
    s = np.broadcast_to(np.asarray(size_bytes, dtype=float), t.shape)
    nn = np.broadcast_to(np.asarray(n), t.shape)
    alg = np.divide(s, t, out=np.zeros_like(t), where=t > 0) / BYTES_PER_GB
    out = alg * np.asarray(busbw_factor(op, nn), dtype=float)
    return _ret(out, _is_scalar(size_bytes, n, bw_gbs, latency_s))


def bytes_sent_per_rank(op: str, size_bytes, n, algo: str = "ring"):
    """Bytes the busiest rank sends in one collective (the β term × B), flat ring or tree.

    Ring all-reduce: 2(n-1)/n·S (each rank forwards n-1 chunks of S/n twice).
    """
    _op(op)
    validate.choice("algo", algo, ("ring", "tree"))
    s = validate.positive("size_bytes", size_bytes, allow_zero=True)
    nn = validate.integer("n", n, lo=1)
    _, beta = _coefficients(op, algo, np.asarray(nn, dtype=float))
    return _ret(beta * np.asarray(s, dtype=float), _is_scalar(size_bytes, n))


def ring_tree_crossover_bytes(n, bw_gbs, latency_s=NET_STEP_LATENCY_S):
    """Message size above which flat ring all-reduce beats the double binary tree (n >= 3).

    Setting 2(n-1)α + 2(n-1)/n·S/B = 2⌈lg n⌉α + 2·S/B gives S* = ((n-1) - ⌈lg n⌉)·α·B·n.
    Below S* the tree's logarithmic latency wins; above it the ring's slightly smaller β term.
    """
    nn = validate.integer("n", n, lo=3)
    b = validate.positive("bw_gbs", bw_gbs) * BYTES_PER_GB
    a = validate.positive("latency_s", latency_s, allow_zero=True)
    n_f = np.asarray(nn, dtype=float)
    out = ((n_f - 1) - _ceil_log2(n_f)) * np.asarray(a) * np.asarray(b) * n_f
    return _ret(out, _is_scalar(n, bw_gbs, latency_s))


# -- hardware helpers --------------------------------------------------------------------------
def per_gpu_net_bw_gbs(nic_gbps, nics_per_node=1, gpus_per_node: int = 8):
    """Per-GPU network bandwidth (GB/s, per direction) when ``nics_per_node`` NICs of ``nic_gbps``
    Gbit/s serve ``gpus_per_node`` GPUs: nic_gbps × nics / gpus / 8 (line rate). E.g. 8×400G for 8 GPUs ->
    50 GB/s; 1×25 GbE for 8 GPUs -> 0.39 GB/s. This is each GPU's share when every GPU of the node
    sends at once; a collective whose ring passes through the node uses the node's NICs together
    (``labutil.cluster``: a ring's busbw across nodes is bounded by the node total, not this share)."""
    r = validate.positive("nic_gbps", nic_gbps)
    k = validate.positive("nics_per_node", nics_per_node)
    g = validate.integer("gpus_per_node", gpus_per_node, lo=1)
    return _ret(np.asarray(r) * np.asarray(k) / g / BITS_PER_BYTE, _is_scalar(nic_gbps, nics_per_node))


def nvlink_per_direction_gbs(gpu_name: str) -> float:
    """Per-direction NVLink bandwidth of a catalog GPU: the catalog stores the bidirectional total
    (e.g. H100 SXM 900 GB/s -> 450 GB/s each way; H800 400 -> 200)."""
    g = hardware.gpu(gpu_name)
    if g.nvlink_gbs <= 0:
        raise ValueError(f"gpu_name {gpu_name!r} has no NVLink-class GPU-to-GPU link in the catalog")
    return g.nvlink_gbs / 2.0


# -- data parallelism --------------------------------------------------------------------------
def gradient_bytes(params, bytes_per_grad=2):
    """Bytes of one full gradient: params × bytes_per_grad (2 for bf16/fp16, 4 for fp32)."""
    p = validate.positive("params", params)
    k = validate.positive("bytes_per_grad", bytes_per_grad)
    return _ret(np.asarray(p) * np.asarray(k), _is_scalar(params, bytes_per_grad))


def dp_sync_time_s(params, n_gpus, bw_gbs, latency_s=NET_STEP_LATENCY_S, bytes_per_grad=2, algo: str = "ring", *,
                   bucket_bytes=None, **kwargs):
    """Gradient all-reduce time per optimizer step of data parallelism (s).

    One all-reduce of S = params × bytes_per_grad (collective_time_s). With ``bucket_bytes`` the
    gradient is reduced in ⌈S / bucket_bytes⌉ buckets, as PyTorch DDP does (default cap 25 MiB,
    ``DDP_BUCKET_BYTES``): the bandwidth term is unchanged, the latency term is paid per bucket.
    ZeRO-1/2 and FSDP move the same 2(n-1)/n·S per rank (reduce-scatter + all-gather;
    Rajbhandari et al. 2020, ZeRO, §7.2), so the same time applies to them.
    Other keyword arguments go to ``collective_cost`` (gpus_per_node, intra_bw_gbs, ...).
    """
    s = gradient_bytes(params, bytes_per_grad)
    cost = collective_cost("all_reduce", s, n_gpus, bw_gbs, latency_s, algo, **kwargs)
    if bucket_bytes is None:
        return cost.time_s
    bb = validate.positive("bucket_bytes", bucket_bytes)
    n_buckets = np.ceil(np.asarray(s) / bb)
    out = np.asarray(cost.latency_s) * n_buckets + np.asarray(cost.bandwidth_s)
    return _ret(out, np.ndim(out) == 0)


@dataclass(frozen=True)
class StepTime:
    """One training step with communication partly hidden behind compute.

    step_s = compute_s + exposed_comm_s, exposed_comm_s = max(0, comm_s - overlap·compute_s).
    comm_ratio = exposed_comm_s / step_s (通信占比: the share of the step the GPU waits on the network).
    utilisation = compute_s / step_s (the share of the step the GPU computes; multiply by the MFU of
    the compute phase for the share of peak FLOP/s).
    """

    compute_s: object
    comm_s: object
    step_s: object
    exposed_comm_s: object
    comm_ratio: object
    utilisation: object


def step_time(compute_s, comm_s, overlap=0.0) -> StepTime:
    """Step time with compute/communication overlap: step = compute + max(0, comm − overlap·compute).

    ``overlap`` in [0, 1] is the fraction of the compute time during which communication can run
    (DDP launches each bucket's all-reduce during the backward pass, so at most the backward share,
    about 2/3 of 6N FLOPs, can hide communication; Li et al. 2020, "PyTorch Distributed", VLDB, §3.2.3).
    Vectorised over all three arguments.
    """
    c = np.asarray(validate.positive("compute_s", compute_s), dtype=float)
    m = np.asarray(validate.positive("comm_s", comm_s, allow_zero=True), dtype=float)
    o = np.asarray(validate.number("overlap", overlap, lo=0.0, hi=1.0), dtype=float)
    exposed = np.maximum(0.0, m - o * c)
    step = c + exposed
    scalar = _is_scalar(compute_s, comm_s, overlap)
    return StepTime(_ret(np.broadcast_to(c, step.shape), scalar), _ret(np.broadcast_to(m, step.shape), scalar),
                    _ret(step, scalar), _ret(exposed, scalar), _ret(exposed / step, scalar), _ret(c / step, scalar))


def scaling_efficiency(compute_s, comm_s, overlap=0.0):
    """Weak-scaling efficiency of data parallelism: throughput(N) / (N × throughput(1)).

    With a fixed per-GPU batch one GPU needs ``compute_s`` per step and N GPUs need
    ``step_time(compute_s, comm_s(N), overlap).step_s``, so efficiency = compute_s / step_s (the
    definition used by Horovod, Sergeev & Del Balso 2018, Fig. 1/§4).
    """
    return step_time(compute_s, comm_s, overlap).utilisation
