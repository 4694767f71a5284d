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
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from . import cluster as cluster_mod
from . import comm, validate
from .comm import DDP_BUCKET_BYTES, StepTime, gradient_bytes, scaling_efficiency, step_time

__all__ = ["ScalingCurve", "dp_cluster", "dp_comm_time_s", "scaling_curve", "required_bandwidth_gbps", "dp_comm_coefficients",
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
