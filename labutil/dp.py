"""Data parallelism on a cluster: gradient-sync time, weak-scaling curves and the network a DP
job needs (ch14 带宽规划; used by ch01, ch02, ch05 and the DP explorers).

These functions sit one layer above ``labutil.cluster``: every all_reduce they time is the
cluster model's (``labutil.cluster.collective_cost_arrays``, the vectorised core of
``Cluster.collective_time_s``). ``labutil.comm`` holds the bare α-β algorithms and the step-time
algebra (``comm.step_time``) and never imports this module or ``cluster``.

- ``dp_comm_time_s``: gradient all_reduce per step, DDP-bucketed, for a cluster or raw line rates.
- ``scaling_curve`` / ``ScalingCurve``: data-parallel weak scaling over a GPU-count grid.
- ``required_bandwidth_gbps``: "先估算通信量，再反推所需网络带宽" (the NIC rate for a target utilisation).
- ``dp_comm_coefficients``: the sync time as A + K / b for the sequential two-level scheme.
- ``dp_bandwidth`` / ``DPPlan``: the ch14 planning numbers for a model preset on a catalog system
  (compute with the ACTIVE parameters, sync of the gradients actually all-reduced: ``moe_sync_split``);
  ``config_rows`` (seed 003's NIC configurations), ``scaling_curves`` (ch14's network scenarios),
  ``strong_scaling`` (ch01: a fixed global batch split over N GPUs).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from . import cluster as cluster_mod
from . import comm, compute, hardware, models, scenarios, validate
from .comm import DDP_BUCKET_BYTES, StepTime, gradient_bytes, scaling_efficiency, step_time

__all__ = ["ScalingCurve", "DPPlan", "DP_ALGOS", "SERVER_GBPS_GRID", "N_GPUS_GRID", "dp_algo", "catalog_cluster",
           "comm_ranks", "moe_sync_split", "sync_time_s", "dp_bandwidth", "config_rows", "scaling_curves",
           "strong_scaling", "dp_cluster", "dp_comm_time_s", "scaling_curve", "required_bandwidth_gbps", "dp_comm_coefficients",
           "DDP_BUCKET_BYTES", "StepTime", "step_time", "scaling_efficiency", "gradient_bytes"]


@dataclass(frozen=True)
class ScalingCurve:
    """Arrays over ``n_gpus`` (see ``scaling_curve``)."""

    n_gpus: np.ndarray
    net_bw_gbs: np.ndarray
    comm_s: np.ndarray
    step: comm.StepTime

    @property
    def scaling_efficiency(self) -> np.ndarray:
        return np.asarray(self.step.utilisation)

    @property
    def utilisation(self) -> np.ndarray:
        return np.asarray(self.step.utilisation)

    @property
    def comm_ratio(self) -> np.ndarray:
        return np.asarray(self.step.comm_ratio)


def dp_cluster(n_gpus, *, nic_gbps=None, nics_per_node=None, gpus_per_node=None, intra_bw_gbs=None,
               oversubscription=None, nodes_per_leaf=None, latency_s=None, intra_latency_s=None, cluster=None):
    """The ``labutil.cluster.Cluster`` a DP estimate runs on, and the NIC line rate(s) to sweep.

    From ``cluster`` (explicit arguments override its fields, e.g. ``nic_gbps`` for a sweep) or from
    raw line rates: ``nic_gbps`` (per NIC, Gbit/s), ``nics_per_node`` (default 1), ``gpus_per_node``
    (default 8) and ``intra_bw_gbs`` (NVLink per GPU per direction, GB/s; ring at 370/450 of it, no
    NVLS). The cluster is resized to hold max(n_gpus) GPUs (whole nodes and NVLink domains).
    Returns (cluster, nic_gbps): nic_gbps None, or the array of line rates to pass as a sweep.
    """
    n_max = int(np.max(validate.integer("n_gpus", n_gpus, lo=1)))
    if cluster is not None:
        if not isinstance(cluster, cluster_mod.Cluster):
            raise TypeError(f"cluster must be a labutil.cluster.Cluster; got {type(cluster).__name__}")
        kw = {}
        if gpus_per_node is not None:
            g = validate.integer("gpus_per_node", gpus_per_node, lo=1)
            if g != cluster.gpus_per_node:
                kw.update(gpus_per_node=g, scaleup_domain_gpus=g if cluster.scaleup_domain_gpus <= cluster.gpus_per_node
                          else cluster.scaleup_domain_gpus)
        if nics_per_node is not None:
            kw["nics_per_node"] = validate.integer("nics_per_node", nics_per_node, lo=1)
        if intra_bw_gbs is not None:
            kw.update(scaleup_gbs=validate.positive("intra_bw_gbs", intra_bw_gbs), scaleup_ring_busbw_gbs=None,
                      scaleup_nvls_busbw_gbs=None, nvls=False)
        if oversubscription is not None:
            kw["oversubscription"] = validate.number("oversubscription", oversubscription, lo=1.0)
        if nodes_per_leaf is not None:
            kw["nodes_per_leaf"] = validate.integer("nodes_per_leaf", nodes_per_leaf, lo=1)
        if latency_s is not None:
            kw["net_latency_s"] = validate.positive("latency_s", latency_s, allow_zero=True)
        if intra_latency_s is not None:
            kw["scaleup_latency_s"] = validate.positive("intra_latency_s", intra_latency_s, allow_zero=True)
        c = replace(cluster, **kw) if kw else cluster
    else:
        if nic_gbps is None or intra_bw_gbs is None:
            raise ValueError("give a cluster= (labutil.cluster.Cluster) or both nic_gbps (per NIC, Gbit/s) and "
                             "intra_bw_gbs (NVLink per GPU per direction, GB/s)")
        kw = {}
        if latency_s is not None:
            kw["net_latency_s"] = validate.positive("latency_s", latency_s, allow_zero=True)
        if intra_latency_s is not None:
            kw["scaleup_latency_s"] = validate.positive("intra_latency_s", intra_latency_s, allow_zero=True)
        c = cluster_mod.Cluster.from_links(
            nic_gbps=float(np.max(validate.positive("nic_gbps", nic_gbps))),
            nics_per_node=validate.integer("nics_per_node", 1 if nics_per_node is None else nics_per_node, lo=1),
            gpus_per_node=validate.integer("gpus_per_node", 8 if gpus_per_node is None else gpus_per_node, lo=1),
            scaleup_gbs=validate.positive("intra_bw_gbs", intra_bw_gbs),
            oversubscription=1.0 if oversubscription is None else validate.number("oversubscription", oversubscription, lo=1.0),
            nodes_per_leaf=nodes_per_leaf, **kw)
    rate = None if nic_gbps is None else validate.positive("nic_gbps", nic_gbps)
    return (c if c.n_gpus >= n_max else c.with_gpus(n_max)), rate


def _dp_algo(algo: str, inter_algo: str) -> str:
    validate.choice("algo", algo, cluster_mod.ALGOS)
    validate.choice("inter_algo", inter_algo, ("ring", "tree"))
    if algo == "hierarchical" and inter_algo == "tree":
        return "tree"  # chains in the node, tree across nodes: NCCL's tree
    return algo


def dp_comm_time_s(params, n_gpus, *, nic_gbps=None, nics_per_node=None, gpus_per_node=None, intra_bw_gbs=None,
                   algo: str = "auto", bytes_per_grad=2, latency_s=None, intra_latency_s=None,
                   bucket_bytes=comm.DDP_BUCKET_BYTES, oversubscription=None, nodes_per_leaf=None, pipelined: bool = False,
                   inter_algo: str = "ring", cluster=None, ranks_per_node=None):
    """Gradient sync time per step for ``n_gpus`` data-parallel GPUs: ``Cluster.dp_sync_time_s``.

    The one DP-sync path of the course: the cluster (``dp_cluster``: a ``labutil.cluster.Cluster``
    with overrides, or raw line rates) times ceil(S / bucket) DDP buckets (default 25 MiB) with its
    collective model (NCCL's algorithm and protocol per bucket, NVLink inside a domain, per-rail rings
    / trees / NVLS-Tree across). Without buckets (``bucket_bytes=None``) it is one all_reduce of S;
    the two differ by the per-bucket latency (and by the algorithm NCCL picks for each size).

    algo: one of ``labutil.cluster.ALGOS`` ('hierarchical' with inter_algo='tree' means NCCL's
        tree). pipelined: overlap the levels of the 'hierarchical' scheme.
    ranks_per_node: DP ranks per node (default packed: min(n, GPUs per NVLink domain); 1 when the DP
        group is strided across TP/PP groups and rides one rail).
    Vectorised over n_gpus and nic_gbps.
    """
    n = validate.integer("n_gpus", n_gpus, lo=1)
    c, rate = dp_cluster(n, nic_gbps=nic_gbps, nics_per_node=nics_per_node, gpus_per_node=gpus_per_node,
                         intra_bw_gbs=intra_bw_gbs, oversubscription=oversubscription, nodes_per_leaf=nodes_per_leaf,
                         latency_s=latency_s, intra_latency_s=intra_latency_s, cluster=cluster)
    out = c.dp_sync_time_s(params, n, bytes_per_grad, bucket_bytes=bucket_bytes, ranks_per_node=ranks_per_node,
                           algo=_dp_algo(algo, inter_algo), nic_gbps=rate, pipelined=pipelined)
    return validate.scalar_or_array(out, validate.is_scalar(n_gpus, nic_gbps if nic_gbps is not None else 0, params))


def scaling_curve(params, n_gpus, *, compute_s, nic_gbps=None, nics_per_node=None, gpus_per_node=None,
                  intra_bw_gbs=None, overlap=0.0, algo: str = "auto", bytes_per_grad=2, latency_s=None,
                  intra_latency_s=None, bucket_bytes=comm.DDP_BUCKET_BYTES, oversubscription=None, nodes_per_leaf=None,
                  inter_algo: str = "ring", cluster=None, pipelined: bool = False) -> ScalingCurve:
    """Data-parallel weak scaling over ``n_gpus`` (array): comm time, step time, utilisation,
    communication ratio and scaling efficiency (= compute_s / step_s, see ``scaling_efficiency``).

    ``compute_s`` is the per-GPU compute time of one step (fixed per-GPU batch). Other arguments
    as ``dp_comm_time_s`` (a ``cluster`` or raw line rates). ``net_bw_gbs`` is the achievable
    network share per GPU.
    """
    n = np.atleast_1d(np.asarray(validate.integer("n_gpus", n_gpus, lo=1)))
    kw = dict(nic_gbps=nic_gbps, nics_per_node=nics_per_node, gpus_per_node=gpus_per_node, intra_bw_gbs=intra_bw_gbs,
              oversubscription=oversubscription, nodes_per_leaf=nodes_per_leaf, latency_s=latency_s,
              intra_latency_s=intra_latency_s, cluster=cluster)
    comm_s = np.atleast_1d(dp_comm_time_s(params, n, algo=algo, bytes_per_grad=bytes_per_grad, bucket_bytes=bucket_bytes,
                                          inter_algo=inter_algo, pipelined=pipelined, **kw))
    st = comm.step_time(np.full(comm_s.shape, float(validate.positive("compute_s", compute_s))), comm_s, overlap)
    c, _ = dp_cluster(n, **kw)
    net = c.net_gbs_per_gpu if nic_gbps is None else np.asarray(c._net_per_gpu(np.ones(1), np.ones(1), nic_gbps))
    return ScalingCurve(n_gpus=n, net_bw_gbs=np.array(np.broadcast_to(net, comm_s.shape), dtype=float), comm_s=comm_s,
                        step=st)


def required_bandwidth_gbps(params, n_gpus, *, compute_s, target_utilisation, overlap=0.0, gpus_per_node=None,
                            intra_bw_gbs=None, algo: str = "auto", bytes_per_grad=2, latency_s=None,
                            intra_latency_s=None, bucket_bytes=comm.DDP_BUCKET_BYTES, per: str = "server",
                            inter_algo: str = "ring", cluster=None, nics_per_node=None, ranks_per_node=None):
    """Network line rate (Gbit/s) needed so that data-parallel training reaches ``target_utilisation``.

    "先估算通信量，再反推所需网络带宽": the step model allows an exposed communication of
    compute·(1/u − 1), i.e. a total communication budget C = compute·(1/u − 1) + overlap·compute.
    The sync time (``dp_comm_time_s``, the cluster model) falls monotonically with the network
    rate, so the rate where it equals C is found by bracketing on log grids (vectorised, relative
    precision 1e-9). ``per='server'`` returns the total NIC line rate of one server (all its NICs), ``per='gpu'``
    the per-GPU share; both are line rates (the model applies the NIC efficiency). A job inside one
    server needs no network (returns 0). Raises ValueError if even an infinitely fast network cannot
    reach the target (NVLink and latency terms alone exceed C). ``ranks_per_node`` as in
    ``dp_comm_time_s``. Vectorised over n_gpus, compute_s and target_utilisation.
    """
    validate.choice("per", per, ("server", "gpu"))
    u = np.asarray(validate.number("target_utilisation", target_utilisation, lo=0.0, hi=1.0, lo_open=True, hi_open=True))
    c = np.asarray(validate.positive("compute_s", compute_s), dtype=float)
    o = np.asarray(validate.number("overlap", overlap, lo=0.0, hi=1.0))
    n = np.asarray(validate.integer("n_gpus", n_gpus, lo=1), dtype=float)
    n, c, u, o = np.broadcast_arrays(n, c, u, o)
    g = (cluster.gpus_per_node if cluster is not None else 8) if gpus_per_node is None else \
        validate.integer("gpus_per_node", gpus_per_node, lo=1)
    k = g  # sweep one NIC per GPU: the per-GPU line rate is the NIC rate
    budget = c * (1.0 / u - 1.0) + o * c
    kw = dict(nics_per_node=k, gpus_per_node=g, intra_bw_gbs=intra_bw_gbs, algo=algo, bytes_per_grad=bytes_per_grad,
              latency_s=latency_s, intra_latency_s=intra_latency_s, bucket_bytes=bucket_bytes, inter_algo=inter_algo,
              cluster=cluster, ranks_per_node=ranks_per_node)
    dom = g if cluster is None or cluster.scaleup_domain_gpus <= cluster.gpus_per_node else cluster.scaleup_domain_gpus
    q = dom if ranks_per_node is None else validate.integer("ranks_per_node", ranks_per_node, lo=1, hi=g)
    inside = n <= q  # one NVLink domain (an NVL72 rack): no network
    nn = np.where(inside, q, n).astype(np.int64)

    def sync(per_gpu_gbps):
        return np.asarray(dp_comm_time_s(params, nn, nic_gbps=per_gpu_gbps, **kw), dtype=float)

    fastest = sync(np.full(n.shape, 1e12))
    short = (~inside) & (fastest >= budget)
    if np.any(short):
        i = np.flatnonzero(short.ravel())[0]
        a = fastest.ravel()[i]
        u_max = c.ravel()[i] / (c.ravel()[i] + max(0.0, a - o.ravel()[i] * c.ravel()[i]))
        raise ValueError(f"target_utilisation {u.ravel()[i]:.3g} is unreachable for n_gpus={int(n.ravel()[i])}: "
                         f"NVLink and latency terms alone take {a:.3g} s; the maximum is {u_max:.3g}")
    # bracketing on log-spaced grids, one vectorised model call per round: 1e-6 .. 1e12 Gbit/s, then
    # each round zooms into the cell where the sync time crosses the budget (64 points a round)
    lo, hi = np.log(np.full(n.shape, 1e-6)), np.log(np.full(n.shape, 1e12))
    k = np.linspace(0.0, 1.0, 65)
    nn_b, budget_b = nn[..., None], budget[..., None]
    for _ in range(6):  # cell width shrinks 64x a round: 41 e-folds -> < 1e-9 relative
        grid = lo[..., None] + (hi - lo)[..., None] * k
        t = np.asarray(dp_comm_time_s(params, nn_b, nic_gbps=np.exp(grid), **kw), dtype=float)
        ok = t <= budget_b  # monotone in the rate: False ... False True ... True
        first = np.argmax(ok, axis=-1)
        first = np.where(ok.any(axis=-1), first, k.size - 1)
        i0 = np.maximum(first - 1, 0)
        lo = np.take_along_axis(grid, i0[..., None], -1)[..., 0]
        hi = np.take_along_axis(grid, first[..., None], -1)[..., 0]
    per_gpu = np.where(inside, 0.0, np.exp(hi))
    out = per_gpu * (g if per == "server" else 1)
    return validate.scalar_or_array(out, validate.is_scalar(n_gpus, compute_s, target_utilisation, overlap))


def dp_comm_coefficients(params, n_gpus, *, gpus_per_node: int = 8, intra_bw_gbs, algo: str = "hierarchical",
                         bytes_per_grad=2, latency_s=None, intra_latency_s=None,
                         bucket_bytes=comm.DDP_BUCKET_BYTES, inter_algo: str = "ring"):
    """(A seconds, K GB) with ``dp_comm_time_s = A + K / b`` for a per-GPU achievable network bandwidth b (GB/s).

    Exact for the sequential two-level scheme (algo='hierarchical', inter_algo='ring'), whose cost
    is linear in 1/b: two evaluations give A and K. A holds the
    latency and NVLink terms, K the gigabytes each GPU pushes through its NIC share (0 when the job
    fits in one server). The 'auto' and 'ring' choices are not of this form (min / caps): use
    ``dp_comm_time_s`` directly for them.
    """
    validate.choice("algo", algo, ("hierarchical",))
    validate.choice("inter_algo", inter_algo, ("ring",))
    kw = dict(nics_per_node=gpus_per_node, gpus_per_node=gpus_per_node, intra_bw_gbs=intra_bw_gbs, algo=algo,
              bytes_per_grad=bytes_per_grad, latency_s=latency_s, intra_latency_s=intra_latency_s,
              bucket_bytes=bucket_bytes, inter_algo=inter_algo)
    # one NIC per GPU with achievable per-GPU rates 1 and 2 GB/s
    t1 = np.asarray(dp_comm_time_s(params, n_gpus, nic_gbps=8.0 / cluster_mod.NIC_EFFICIENCY, **kw), dtype=float)
    t2 = np.asarray(dp_comm_time_s(params, n_gpus, nic_gbps=16.0 / cluster_mod.NIC_EFFICIENCY, **kw), dtype=float)
    k = 2.0 * (t1 - t2)
    a = t1 - k
    scalar = np.ndim(n_gpus) == 0
    return validate.scalar_or_array(a, scalar), validate.scalar_or_array(k, scalar)


# ============================================================================================
# data-parallel planning on a catalog system (the ch14 explorer, seed 003 and the scaling figures)
# ============================================================================================
#: Gradient-sync algorithms a learner can pick -> labutil.cluster algo (old labels accepted too).
DP_ALGOS = {"auto (NCCL)": "auto", "NCCL_ALGO=Ring": "ring", "NCCL_ALGO=Tree": "tree",
            "hierarchical (two-level)": "hierarchical"}
_DP_ALGO_ALIASES = {"ring (per rail)": "NCCL_ALGO=Ring", "tree (NCCL)": "NCCL_ALGO=Tree"}
GPUS_PER_SERVER = 8
#: Total network line rate per 8-GPU server swept by the planning curves, Gbit/s (10 .. 6,400).
SERVER_GBPS_GRID = np.logspace(np.log10(10.0), np.log10(6400.0), 96)
#: GPU counts of the scaling curves (8 .. 8,192).
N_GPUS_GRID = 2 ** np.arange(3, 14)
TARGETS = (0.7, 0.9)


def dp_algo(label: str) -> str:
    """The ``labutil.cluster`` algorithm of a ``DP_ALGOS`` label (or a raw cluster algorithm name)."""
    label = _DP_ALGO_ALIASES.get(label, label)
    if label in DP_ALGOS:
        return DP_ALGOS[label]
    if label in cluster_mod.ALGOS:
        return label
    raise validate.unknown_name("algorithm", label, DP_ALGOS)


def catalog_cluster(gpu: str, n_gpus, nic_gbps: float, nics_per_node: int, **overrides) -> "cluster_mod.Cluster":
    """The catalog system of ``gpu`` (its measured NVLink ring / NVLS busbw, its NVLink domain: an
    NVL72 rack for GB200) with the chosen NICs per server, sized to hold ``n_gpus`` GPUs."""
    c = cluster_mod.Cluster.for_gpu(gpu, 1, nic_gbps=float(nic_gbps), nics_per_node=int(nics_per_node), **overrides)
    return c.with_gpus(int(np.max(validate.integer("n_gpus", n_gpus, lo=1))))


def comm_ranks(cluster, n_gpus):
    """GPU counts the collective model can place on ``cluster``: whole NVLink domains above one domain
    (an NVL72 rack holds 72 GPUs: 1,024 GPUs are timed as 1,008 = 14 racks; HGX nodes: unchanged)."""
    n = np.asarray(validate.integer("n_gpus", n_gpus, lo=1))
    d = cluster.scaleup_domain_gpus
    out = np.where(n > d, np.maximum(1, np.round(n / d)) * d, n).astype(np.int64)
    return int(out) if out.ndim == 0 else out


def moe_sync_split(spec, ep: int = 1) -> tuple[float, float]:
    """(dense parameters, routed-expert parameters each rank all-reduces) of a model with expert
    parallelism ``ep``: every rank holds all dense parameters (attention, embeddings, dense and shared
    MLPs, routers) and 1/ep of the routed experts. ASSUMPTION (pure data parallelism with optional EP,
    as the ch14 explorer): the dense gradients are all-reduced over all DP ranks, the expert gradients
    over the n/ep ranks that hold the same experts (the expert-data-parallel group, as Megatron-LM and
    DeepSpeed-MoE do). ep = 1: every rank holds every expert and the whole gradient is all-reduced."""
    e = validate.integer("ep", ep, lo=1)
    experts = float(spec.expert_params_total())
    if e > 1 and spec.num_experts and spec.num_experts % e:
        raise ValueError(f"ep ({e}) must divide the {spec.num_experts} experts of {spec.name}")
    return float(spec.params()) - experts, experts / e


def sync_time_s(spec, cluster, n_gpus, *, ep: int = 1, algo: str = "auto", nic_gbps=None, bytes_per_grad=2,
                bucket_bytes=comm.DDP_BUCKET_BYTES):
    """Gradient sync per step of ``spec`` (a ``models.TransformerSpec``) data-parallel on ``n_gpus``
    GPUs of ``cluster``: ``Cluster.dp_sync_time_s`` of the dense gradients over all ranks, plus (MoE with
    ``ep`` > 1) that of the routed-expert gradients over the n/ep ranks of each expert-data-parallel group
    (``moe_sync_split``). Vectorised over n_gpus and nic_gbps."""
    dense, experts = moe_sync_split(spec, ep)
    e = validate.integer("ep", ep, lo=1)
    n = np.asarray(comm_ranks(cluster, n_gpus))
    if e == 1:
        return cluster.dp_sync_time_s(dense + experts, n, bytes_per_grad, bucket_bytes=bucket_bytes, algo=algo,
                                      nic_gbps=nic_gbps)
    if np.any(n % e):
        raise ValueError(f"n_gpus must be a multiple of ep ({e})")
    t = cluster.dp_sync_time_s(dense, n, bytes_per_grad, bucket_bytes=bucket_bytes, algo=algo, nic_gbps=nic_gbps)
    # the expert-DP group: one rank of each EP group; an EP group of e <= GPUs per node leaves g/e per node
    rpn = max(1, cluster.gpus_per_node // e) if e <= cluster.gpus_per_node else 1
    ne = np.maximum(n // e, 1)
    te = np.where(ne > 1, cluster.dp_sync_time_s(experts, np.maximum(ne, 2), bytes_per_grad, bucket_bytes=bucket_bytes,
                                                 algo=algo, nic_gbps=nic_gbps, ranks_per_node=np.minimum(rpn, ne)), 0.0)
    return validate.scalar_or_array(np.asarray(t) + te, np.ndim(n_gpus) == 0 and np.ndim(nic_gbps) == 0)


@dataclass(frozen=True)
class DPPlan:
    """Data-parallel planning numbers at one configuration plus the two curves of the ch14 explorer.

    params: total parameters (what memory and, without EP, the gradient sync see); active_params: the
    parameters one token multiplies (MoE: the top-k experts), what the compute sees; sync_params: the
    gradient elements each rank all-reduces per step (``moe_sync_split``)."""

    model: str
    params: float
    gpu: str
    n_gpus: int
    compute_s: float
    comm_s: float
    step: StepTime
    server_gbps: float  # network Gbit/s per 8-GPU server at the chosen NIC config
    server_gbps_grid: np.ndarray
    utilisation_grid: np.ndarray
    n_gpus_grid: np.ndarray
    efficiency_grid: np.ndarray
    required_gbps: dict  # target utilisation -> Gbit/s per server (None when unreachable)
    active_params: float = 0.0
    sync_params: float = 0.0
    moe: bool = False
    ep: int = 1
    comm_n_gpus: int = 0  # the GPU count the collective was timed on (whole NVLink domains)


def dp_bandwidth(model: str = "llama2-7b", gpu: str = "H800-SXM", tokens_per_gpu: int = 16384, mfu: float = 0.45,
                 n_gpus: int = 32, nic_gbps: float = 25, nics_per_node: int = 1, overlap: float = 0.0,
                 algo: str = "auto (NCCL)", ep: int = 1, *, server_gbps_grid=SERVER_GBPS_GRID,
                 n_gpus_grid=N_GPUS_GRID) -> DPPlan:
    """DP gradient sync (``Cluster.dp_sync_time_s``, DDP 25 MiB buckets) vs compute for a model preset on
    the catalog system of ``gpu`` with ``nics_per_node`` NICs of ``nic_gbps`` per server.

    Compute per GPU per step = 6 x ACTIVE parameters x tokens / (peak x MFU) (an MoE computes with the
    top-k experts only: DeepSeek-V3 37.6 of 671 B); the gradient sync moves the parameters that are
    all-reduced across DP (``moe_sync_split``: all of them without expert parallelism). Utilisation
    over ``server_gbps_grid`` (8 NICs of grid / 8 each: the node total is what counts), scaling
    efficiency over ``n_gpus_grid``, and the per-server bandwidth for 70 % / 90 % utilisation.
    """
    spec = models.transformer(model)
    g = hardware.gpu(gpu)
    a = dp_algo(algo)
    e = validate.integer("ep", ep, lo=1)
    if not spec.is_moe:
        e = 1
    grid_n = np.asarray(n_gpus_grid)
    c = catalog_cluster(g.name, max(int(n_gpus), int(grid_n.max())), nic_gbps, nics_per_node)
    active = float(spec.active_params())
    compute_s = float(compute.dense_compute_time_s(active, tokens_per_gpu, g.bf16_tflops, mfu))
    dense, experts = moe_sync_split(spec, e)
    n_comm = comm_ranks(c, n_gpus)
    comm_s = float(sync_time_s(spec, c, n_gpus, ep=e, algo=a)) if n_gpus > 1 else 0.0
    st = step_time(compute_s, comm_s, overlap)
    c8 = catalog_cluster(g.name, max(int(n_gpus), int(grid_n.max())), float(np.max(server_gbps_grid)) / 8, 8)
    grid = np.asarray(server_gbps_grid, dtype=float)
    sync_grid = np.asarray(sync_time_s(spec, c8, n_gpus, ep=e, algo=a, nic_gbps=grid / 8), dtype=float) \
        if n_gpus > 1 else np.zeros_like(grid)
    util_grid = np.asarray(step_time(compute_s, sync_grid, overlap).utilisation)
    eff = np.ones(grid_n.shape)
    multi = grid_n > 1
    sync_n = np.asarray(sync_time_s(spec, c, grid_n[multi], ep=e, algo=a), dtype=float)
    eff[multi] = np.asarray(step_time(np.full(sync_n.shape, compute_s), sync_n, overlap).utilisation)
    req = {}
    for target in TARGETS:
        if int(n_comm) <= c.scaleup_domain_gpus:
            req[target] = 0.0
        elif util_grid[-1] >= target:  # inside the grid: interpolate (utilisation rises with bandwidth)
            req[target] = float(np.exp(np.interp(target, util_grid, np.log(grid))))
        elif e == 1:
            try:
                req[target] = float(required_bandwidth_gbps(dense + experts, int(n_comm), compute_s=compute_s,
                                                            target_utilisation=target, overlap=overlap, cluster=c,
                                                            algo=a))
            except ValueError:
                req[target] = None
        else:
            req[target] = None
    return DPPlan(spec.name, float(spec.params()), g.name, int(n_gpus), compute_s, comm_s, st,
                  float(nic_gbps) * float(nics_per_node), grid, util_grid, grid_n, eff, req,
                  active_params=active, sync_params=dense + experts, moe=bool(spec.is_moe), ep=e,
                  comm_n_gpus=int(n_comm))


def config_rows(model: str = "llama2-7b", gpu: str = "H800-SXM", n_gpus: int = 32, tokens_per_gpu: int = 16384,
                mfu: float = 0.45, overlap: float = 0.0, configs=None) -> list[dict]:
    """Seed 003's case per server NIC configuration (``scenarios.dp_configs()``): compute, sync, exposed
    comm, utilisation."""
    rows = []
    for label, gbps, k in (scenarios.dp_configs() if configs is None else configs):
        r = dp_bandwidth(model, gpu, tokens_per_gpu, mfu, n_gpus, gbps, k, overlap)
        rows.append({"config": label, "server_gbps": gbps * k, "compute_s": r.compute_s, "sync_s": r.comm_s,
                     "exposed_s": float(r.step.exposed_comm_s), "utilisation": float(r.step.utilisation)})
    return rows


def scaling_curves(model: str = "llama2-7b", gpu: str = "H800-SXM", tokens_per_gpu: int = 16384, mfu: float = 0.45,
                   overlap: float = 2 / 3, scenarios_=None, n_gpus_grid=N_GPUS_GRID) -> dict:
    """label -> ``ScalingCurve`` over ``n_gpus_grid`` for each network scenario (``scenarios.scaling_scenarios()``:
    label, Gbit/s per NIC, NICs, algorithm, (oversubscription, servers per leaf) or None) on the catalog
    system of ``gpu``."""
    spec = models.transformer(model)
    g = hardware.gpu(gpu)
    params = float(spec.params())
    compute_s = float(compute.dense_compute_time_s(float(spec.active_params()), tokens_per_gpu, g.bf16_tflops, mfu))
    out = {}
    for label, gbps, k, algo, osub in (scenarios.scaling_scenarios() if scenarios_ is None else scenarios_):
        extra = {} if osub is None else dict(oversubscription=osub[0], nodes_per_leaf=osub[1])
        c = catalog_cluster(g.name, int(np.max(n_gpus_grid)), gbps, k, **extra)
        out[label] = scaling_curve(params, n_gpus_grid, compute_s=compute_s, cluster=c, overlap=overlap,
                                   algo=dp_algo(algo))
    return out


# -- strong scaling of a fixed global batch (ch01) ------------------------------------------------
def strong_scaling(params, n_gpus, *, global_batch_tokens, peak_tflops, mfu, cluster, overlap=2.0 / 3.0,
                   bucket_bytes=comm.DDP_BUCKET_BYTES, active_params=None):
    """Scaling efficiency η(N) of a FIXED global batch split over N data-parallel GPUs (strong scaling).

    Each GPU computes 6 x active params x (global_batch_tokens / N) / (peak x mfu) per step; the
    16-bit gradients are all-reduced over the N GPUs on ``cluster`` (``Cluster.dp_sync_time_s`` in
    ``bucket_bytes`` buckets, whole NVLink domains: ``comm_ranks``), overlapped with ``overlap`` of the
    step (``comm.step_time``). η(N) = compute / step (1 for one GPU). Returns a dict of arrays
    (n_gpus, scaling_efficiency, comm_s, compute_s). Vectorised over n_gpus.
    """
    n = np.atleast_1d(np.asarray(validate.integer("n_gpus", n_gpus, lo=1)))
    a = float(params if active_params is None else active_params)
    compute_s = np.asarray(compute.dense_compute_time_s(a, validate.positive("global_batch_tokens", global_batch_tokens)
                                                        / n, peak_tflops, mfu), dtype=float)
    multi = n > 1
    comm_s = np.zeros(n.shape)
    if np.any(multi):
        c = cluster if cluster.n_gpus >= int(np.max(comm_ranks(cluster, n))) else \
            cluster.with_gpus(int(np.max(comm_ranks(cluster, n))))
        comm_s[multi] = np.asarray(c.dp_sync_time_s(params, np.atleast_1d(comm_ranks(c, n[multi])),
                                                    bucket_bytes=bucket_bytes), dtype=float)
    eta = np.asarray(step_time(compute_s, comm_s, overlap).utilisation, dtype=float)
    return {"n_gpus": n, "scaling_efficiency": eta, "comm_s": comm_s, "compute_s": compute_s}
