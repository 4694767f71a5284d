"""One description of a GPU cluster and the one collective-communication model built on it.

Every chapter, explorer, exercise and the capstone passes a ``Cluster`` around; every DP / TP /
PP / EP communication estimate of the course goes through ``Cluster.collective_time_s`` (or the
vectorised ``collective_cost_arrays`` behind it), and every acceptance threshold through
``Cluster.expected_busbw_gbs``.

>>> c = Cluster.system("DGX-H100", n_nodes=2)
>>> round(c.expected_busbw_gbs("all_reduce", ranks=8))      # one node, NVLink SHARP
480
>>> round(c.expected_busbw_gbs("all_reduce"))               # 16 ranks: min(NVLink ring 370, 8 x 48)
370

What the model knows
--------------------
A cluster is ``n_nodes`` nodes of ``gpus_per_node`` GPUs. GPUs inside one *scale-up domain*
(``scaleup_domain_gpus``: the 8 GPUs of an HGX baseboard on NVSwitch, or the 72 GPUs of a GB200
NVL72 rack) talk over NVLink; everything else crosses the scale-out network through
``nics_per_node`` NICs of ``nic_gbps`` each per node (one per GPU, "rail", in DGX-class nodes).

Achievable bandwidths, not line rates (sources in ``labutil/data/systems.toml``):

- NVLink ring: the large-message NCCL busbw with ``NCCL_ALGO=RING`` inside the domain:
  370 GB/s on 8x H100 / H200 (450 GB/s line), 230 on A100 (300), 160 on A800 / H800 (200),
  695 on NVLink 5 (900). A hand-built cluster uses 370/450 of its line rate.
- NVLink SHARP (NVLS, H100 and later NVSwitch systems, on by default for all_reduce): 480 GB/s
  busbw on 8x H100, 475 on 8x H200, 215 on 8x H800, ~830 on 8x B200.
- Network: 0.96 of the NIC line rate per NIC (~24 GB/s per 200G HDR, ~48 GB/s per 400G NDR;
  S. Jeaugey, NVIDIA).

The algorithms (latency α per step: NCCL's NET 9.6 µs / NVLink 3.4 µs, ``labutil.comm``):

- inside one domain: ``ring`` (busbw = NVLink ring), ``tree`` (double binary tree),
  ``nvls`` (all_reduce only: busbw = NVLS; for fewer ranks than the 8 of the measurement the
  NVLS algbw is held at its 8-GPU value, floored at the ring, after github.com/NVIDIA/nccl/issues/1455).
- across domains: ``ring`` = NCCL's rings, one per rail: every ring crosses each node once
  through one NIC, so the busbw is bounded by min(NVLink ring, q x per-GPU network share) where q
  is the number of the collective's ranks per node (8 for a full-node job: the node's NICs add up;
  1 for a DP group strided across TP/PP groups: one rail). ``tree`` and ``hierarchical`` are the
  two-level schemes of ``comm.collective_cost`` (reduce-scatter over NVLink/NVLS, per-rail
  tree / ring between nodes over S/q, all-gather over NVLink), with NCCL's pipelining of the levels.
- ``auto`` (what NCCL's tuner does, approximately): the fastest of ring and tree, NVLS for
  all_reduce inside an NVLS domain, the two-level scheme for all_to_all across nodes.

The per-GPU network share assumes every GPU of a node is communicating at the same time (a
full-cluster training job or an nccl-tests run on whole nodes): each GPU gets
``nics_per_node x nic_gbps / gpus_per_node``. When a job spans more than ``nodes_per_leaf`` nodes
the cross-leaf traffic is slowed by ``oversubscription``.

Not modelled: NVLS-Tree across 2-4 nodes, which can show a higher all_reduce busbw than the ring
bound (github.com/NVIDIA/nccl-tests/issues/309, github.com/NVIDIA/nccl/issues/1031): acceptance
thresholds use the sustainable per-rail ring bound.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from . import comm, data_files, validate
from .units import BITS_PER_BYTE, BYTES_PER_GB

__all__ = ["Cluster", "ALGOS", "systems", "expected_busbw_gbs", "collective_time_s", "collective_cost_arrays",
           "NIC_EFFICIENCY", "SCALEUP_RING_EFFICIENCY", "NVLS_GAIN", "NVLS_REFERENCE_RANKS"]

ALGOS = ("auto", "ring", "tree", "nvls", "hierarchical")

#: Number of ranks of the published NVLS figures (8-GPU NVSwitch baseboards).
NVLS_REFERENCE_RANKS = 8
#: NVLS over ring for all_reduce when a hand-built cluster gives no NVLS figure: "for the Allreduce
#: operation ... we can get a 30% improvement using NVLink SHARP" (S. Jeaugey,
#: github.com/NVIDIA/nccl/issues/1442); 480 / 370 = 1.30 on 8x H100.
NVLS_GAIN = 480.0 / 370.0
#: Up to this many ranks NVLS all_reduce measured no faster than the ring (nccl/issues/1455).
NVLS_MIN_RANKS = 4


def _data() -> dict:
    return data_files.load("systems.toml")


#: Achievable fraction of a NIC's line rate in NCCL busbw (0.96; systems.toml [network]).
NIC_EFFICIENCY = float(_data()["network"]["nic_efficiency"])
#: Achievable fraction of the NVLink per-direction line rate with NCCL's ring (370/450; [scaleup]).
SCALEUP_RING_EFFICIENCY = float(_data()["scaleup"]["ring_efficiency"])


def systems() -> list[str]:
    """Canonical names of the catalog systems (``Cluster.system`` accepts these and their aliases)."""
    return list(_data()["systems"])


def _system_entry(name: str) -> tuple[str, dict]:
    return data_files.table("systems.toml", "systems", kind="system").item(name)


# ============================================================================================
# the vectorised model (arrays in, arrays out); Cluster methods and labutil.comm call it
# ============================================================================================
def _ring_busbw_cap(op, q, ring_gbs, net_gpu_gbs):
    """Per-rail ring bound across domains: min(NVLink ring busbw, q x per-GPU network share)."""
    return np.minimum(ring_gbs, q * net_gpu_gbs)


def collective_cost_arrays(op: str, size_bytes, ranks, *, ranks_per_domain, ring_busbw_gbs, nvls_busbw_gbs,
                           net_gbs_per_gpu, net_latency_s=comm.NET_STEP_LATENCY_S,
                           scaleup_latency_s=comm.NVLINK_STEP_LATENCY_S, algo: str = "auto", pipelined: bool = True,
                           include_latency: bool = True) -> comm.CollectiveCost:
    """The collective-time model on raw (broadcastable) arrays; see the module docstring.

    size_bytes: nccl-tests size (per-rank buffer; total buffer for all_gather/reduce_scatter/all_to_all).
    ranks: ranks of the collective; ranks_per_domain: how many of them share one NVLink domain (q;
        ranks must be q x m for m domains).
    ring_busbw_gbs / nvls_busbw_gbs: achievable NVLink ring busbw and NVLS all_reduce busbw (0: no NVLS).
    net_gbs_per_gpu: achievable network GB/s per GPU (node NICs x rate x efficiency / GPUs per node,
        already divided by any oversubscription).
    Returns ``comm.CollectiveCost`` (time, latency, bandwidth, intra, inter parts).
    """
    comm.check_op(op)
    validate.choice("algo", algo, ALGOS)
    scalar = validate.is_scalar(size_bytes, ranks, ranks_per_domain, ring_busbw_gbs, nvls_busbw_gbs, net_gbs_per_gpu)
    s = np.asarray(validate.positive("size_bytes", size_bytes, allow_zero=True), dtype=float)
    n = np.asarray(validate.integer("ranks", ranks, lo=1), dtype=float)
    q = np.asarray(validate.integer("ranks_per_domain", ranks_per_domain, lo=1), dtype=float)
    ring = np.asarray(validate.positive("ring_busbw_gbs", ring_busbw_gbs), dtype=float)
    nvls = np.asarray(validate.positive("nvls_busbw_gbs", nvls_busbw_gbs, allow_zero=True), dtype=float)
    net = np.asarray(validate.positive("net_gbs_per_gpu", net_gbs_per_gpu), dtype=float)
    a_net = float(validate.positive("net_latency_s", net_latency_s, allow_zero=True))
    a_nvl = float(validate.positive("scaleup_latency_s", scaleup_latency_s, allow_zero=True))
    if not include_latency:
        a_net = a_nvl = 0.0
    s, n, q, ring, nvls, net = np.broadcast_arrays(s, n, q, ring, nvls, net)
    q = np.minimum(q, n)
    if np.any(np.mod(n, q) != 0):
        i = np.flatnonzero(np.mod(n, q).ravel() != 0)[0]
        raise ValueError(f"ranks ({int(n.ravel()[i])}) must be a multiple of ranks_per_domain "
                         f"({int(q.ravel()[i])}): place the same number of ranks in every NVLink domain")
    inside = n == q  # the whole collective stays in one NVLink domain
    m = n / q
    if algo == "nvls":
        if op != "all_reduce":
            raise ValueError(f"algo='nvls' applies to all_reduce only (NVLink SHARP); got op={op!r}")
        if np.any(nvls <= 0):
            raise ValueError("algo='nvls' needs NVLink SHARP (NVSwitch gen 3+, H100 and later); this cluster has none")

    # NVLS all_reduce busbw at q ranks (github.com/NVIDIA/nccl/issues/1455, 8x H100: ring-like 370 GB/s
    # for 2-4 GPUs, then 420/440/460/480 for 5-8 with algbw ~258-273): above 4 ranks the algbw of
    # the 8-rank figure is held (busbw x 2(q-1)/q), at most the 8-rank busbw (no published
    # figure for larger NVLS domains), never below the ring
    f_ref = 2.0 * (NVLS_REFERENCE_RANKS - 1) / NVLS_REFERENCE_RANKS
    f_q = np.minimum(2.0 * (q - 1) / np.maximum(q, 1.0), f_ref)
    nvls_q = np.where((nvls > 0) & (q > NVLS_MIN_RANKS), np.maximum(ring, nvls / f_ref * f_q), ring)
    intra_bw = nvls_q if op == "all_reduce" else ring  # NVLS in the node phase of a two-level all_reduce

    with np.errstate(divide="ignore", invalid="ignore"):
        def ring_cost():
            bw = np.where(inside, ring, _ring_busbw_cap(op, q, ring, net))
            lat = np.where(inside, a_nvl, a_net)
            return comm.collective_cost(op, s, n.astype(np.int64), bw, lat, "ring")

        def tree_cost():
            # NCCL's own tree model (src/graph/tuning.cc): busbw as the ring's (same per-rail links),
            # algbw = busbw / 2, latency 2(log2(nodes) x NET + (ranks per node - 1) x NVLink)
            bw = np.where(inside, ring, _ring_busbw_cap(op, q, ring, net))
            tc = comm.collective_cost(op, s, n.astype(np.int64), bw, np.where(inside, a_nvl, a_net), "tree")
            if op != "all_reduce" or np.all(inside):
                return tc
            lat = 2.0 * (np.ceil(np.log2(np.maximum(m, 1.0))) * a_net + (q - 1) * a_nvl)
            lat = np.where(inside, tc.latency_s, lat)
            return comm.CollectiveCost(lat + tc.bandwidth_s, lat, tc.bandwidth_s,
                                       np.where(inside, tc.time_s, 0.0), np.where(inside, 0.0, lat + tc.bandwidth_s))

        def hier_cost():
            return _two_level(op, s, n, q, intra_bw, net, a_net, a_nvl, "ring", pipelined, inside, ring)

        def nvls_cost():
            # in the domain: t = 2(q-1)/q * S / busbw_nvls(q) + ring latency terms (NVLS changes bandwidth)
            rc = comm.collective_cost("all_reduce", s, n.astype(np.int64), nvls_q, a_nvl, "ring")
            if np.all(inside):
                return rc
            return hier_cost()

    if algo == "ring":
        c = ring_cost()
    elif algo == "tree":
        c = tree_cost()
    elif algo == "hierarchical":
        c = hier_cost()
    elif algo == "nvls":
        c = nvls_cost()
    else:  # auto
        if op == "all_to_all":
            c = hier_cost()  # a plain NVLink ring inside one domain (see _two_level)
        else:
            c = _min_cost(ring_cost(), tree_cost())
            if op == "all_reduce" and np.any((nvls > 0) & inside):
                c = _pick(_min_cost(nvls_cost(), c), c, (nvls > 0) & inside)
    return comm.CollectiveCost(*(validate.scalar_or_array(np.asarray(x, dtype=float) * np.ones_like(s), scalar) for x in
                                 (c.time_s, c.latency_s, c.bandwidth_s, c.intra_s, c.inter_s)))


def _two_level(op, s, n, q, intra_bw, net, a_net, a_nvl, inter_algo, pipelined, inside, ring):
    """comm's hierarchical scheme with q ranks per domain (q = 1: flat across nodes on one rail)."""
    out = {k: np.zeros_like(s) for k in ("t", "l", "b", "i", "o")}
    for qv in np.unique(q):
        sel = q == qv
        c = _hier_one(op, s[sel], n[sel], int(qv), intra_bw[sel], net[sel], a_net, a_nvl, inter_algo, pipelined)
        for k, v in zip("tlbio", c):
            out[k][sel] = v
    # a collective inside one domain is a plain NVLink ring
    rc = comm.collective_cost(op, s, n.astype(np.int64), np.where(op == "all_reduce", intra_bw, ring), a_nvl, "ring")
    t = np.where(inside, rc.time_s, out["t"])
    return comm.CollectiveCost(t, np.where(inside, rc.latency_s, out["l"]), np.where(inside, rc.bandwidth_s, out["b"]),
                               np.where(inside, rc.time_s, out["i"]), np.where(inside, 0.0, out["o"]))


_FREE_GBS = 1e30  # a link so fast that its term vanishes (to split comm's two-level cost into its levels)


def _hier_one(op, s, n, q, intra_bw, net, a_net, a_nvl, inter_algo, pipelined):
    """comm.collective_cost('hierarchical') for one q, with an array of intra bandwidths."""
    # comm.collective_cost takes a scalar intra bandwidth: evaluate the NVLink and network levels
    # separately (both are linear in 1/B) and combine them as comm does.
    c_net = comm.collective_cost(op, s, n.astype(np.int64), net, a_net, "hierarchical", gpus_per_node=q,
                                 intra_bw_gbs=_FREE_GBS, intra_latency_s=0.0,
                                 inter_algo=inter_algo, pipelined=False)
    # intra part at the real NVLink bandwidth: the same formula with the network made free
    c_in = comm.collective_cost(op, s, n.astype(np.int64), _FREE_GBS, 0.0, "hierarchical", gpus_per_node=q,
                                intra_bw_gbs=1.0, intra_latency_s=a_nvl, inter_algo=inter_algo, pipelined=False)
    bw_in = np.asarray(c_in.bandwidth_s) / intra_bw  # bandwidth_s was computed at 1 GB/s
    lat_in = np.asarray(c_in.latency_s)
    bw_net, lat_net = np.asarray(c_net.bandwidth_s), np.asarray(c_net.latency_s)
    lat = lat_in + lat_net
    bw = np.maximum(bw_in, bw_net) if pipelined else bw_in + bw_net
    t = lat + bw
    return t, lat, bw, lat_in + bw_in, lat_net + bw_net


def _min_cost(a: comm.CollectiveCost, b: comm.CollectiveCost) -> comm.CollectiveCost:
    return _pick(a, b, np.asarray(a.time_s) <= np.asarray(b.time_s))


def _pick(a: comm.CollectiveCost, b: comm.CollectiveCost, mask) -> comm.CollectiveCost:
    return comm.CollectiveCost(*(np.where(mask, np.asarray(x, dtype=float), np.asarray(y, dtype=float))
                                 for x, y in zip((a.time_s, a.latency_s, a.bandwidth_s, a.intra_s, a.inter_s),
                                                 (b.time_s, b.latency_s, b.bandwidth_s, b.intra_s, b.inter_s))))


# ============================================================================================
# the Cluster
# ============================================================================================
@dataclass(frozen=True)
class Cluster:
    """A GPU cluster: nodes, their NVLink domain and their scale-out network (frozen).

    gpu: catalog GPU name ("" for a communication-only cluster built from link rates).
    gpus_per_node, n_nodes: GPUs per server (or compute tray) and number of servers.
    scaleup_gbs: NVLink/NVSwitch line rate per GPU, per direction, GB/s (H100: 450).
    scaleup_domain_gpus: GPUs in one NVLink domain (8 in an HGX node, 72 in an NVL72 rack).
    nvls: NVLink SHARP available (NVSwitch gen 3+: H100, H200, H800, B200, GB200).
    nics_per_node, nic_gbps: compute NICs per node and the line rate of one NIC, Gbit/s.
    rail_optimized: NIC i of every node on leaf (rail) i (DGX SuperPOD); per-rail rings stay on a leaf.
    fabric_tiers, oversubscription, nodes_per_leaf: the fabric (1, 2 or 3 switch tiers); traffic of a
        job spanning more than ``nodes_per_leaf`` nodes crosses the spine at 1/oversubscription
        (None: non-blocking at any size).
    scaleup_ring_busbw_gbs: achievable NCCL ring busbw in the domain (None: line x 370/450).
    scaleup_nvls_busbw_gbs: achievable NVLS all_reduce busbw on 8 ranks (None: ring x 1.30 if nvls).
    nic_efficiency: achievable fraction of the NIC line rate (0.96).
    """

    gpu: str
    gpus_per_node: int
    n_nodes: int
    scaleup_gbs: float
    scaleup_domain_gpus: int
    nvls: bool
    nics_per_node: int
    nic_gbps: float
    rail_optimized: bool = True
    fabric_tiers: int = 2
    oversubscription: float = 1.0
    nodes_per_leaf: int | None = None
    scaleup_ring_busbw_gbs: float | None = None
    scaleup_nvls_busbw_gbs: float | None = None
    nic_efficiency: float = NIC_EFFICIENCY
    net_latency_s: float = comm.NET_STEP_LATENCY_S
    scaleup_latency_s: float = comm.NVLINK_STEP_LATENCY_S
    name: str = "custom"
    source: str = field(default="", compare=False, repr=False)

    def __post_init__(self):
        if not isinstance(self.gpu, str):
            raise TypeError(f"gpu must be a catalog GPU name (str); got {self.gpu!r}")
        if self.gpu:
            from .hardware import gpu as gpu_spec

            object.__setattr__(self, "gpu", gpu_spec(self.gpu).name)
        for k in ("gpus_per_node", "n_nodes", "scaleup_domain_gpus", "nics_per_node"):
            object.__setattr__(self, k, validate.integer(k, getattr(self, k), lo=1))
        validate.integer("fabric_tiers", self.fabric_tiers, lo=1, hi=3)
        for k in ("nvls", "rail_optimized"):
            if not isinstance(getattr(self, k), (bool, np.bool_)):
                raise TypeError(f"{k} must be a bool; got {getattr(self, k)!r}")
        object.__setattr__(self, "scaleup_gbs", validate.positive("scaleup_gbs", self.scaleup_gbs))
        object.__setattr__(self, "nic_gbps", validate.positive("nic_gbps", self.nic_gbps))
        validate.number("oversubscription", self.oversubscription, lo=1.0)
        if self.nodes_per_leaf is not None:
            validate.integer("nodes_per_leaf", self.nodes_per_leaf, lo=1)
        if self.scaleup_ring_busbw_gbs is not None:
            validate.positive("scaleup_ring_busbw_gbs", self.scaleup_ring_busbw_gbs)
        if self.scaleup_nvls_busbw_gbs is not None:
            validate.positive("scaleup_nvls_busbw_gbs", self.scaleup_nvls_busbw_gbs, allow_zero=True)
        validate.fraction("nic_efficiency", self.nic_efficiency)
        validate.positive("net_latency_s", self.net_latency_s, allow_zero=True)
        validate.positive("scaleup_latency_s", self.scaleup_latency_s, allow_zero=True)
        d, g = self.scaleup_domain_gpus, self.gpus_per_node
        if not (d <= g and g % d == 0) and not (d > g and d % g == 0):
            raise ValueError(f"scaleup_domain_gpus ({d}) must divide gpus_per_node ({g}) or be a multiple of it")
        if d > g and (self.n_nodes * g) % d != 0 and self.n_nodes * g > d:
            raise ValueError(f"n_nodes x gpus_per_node ({self.n_nodes * g}) must fill whole NVLink domains of {d} GPUs")

    # -- constructors ----------------------------------------------------------------------
    @classmethod
    def system(cls, name: str, n_nodes: int = 1, **overrides) -> "Cluster":
        """A catalog system (``systems()``: DGX-H100, DGX-H200, DGX-B200, DGX-A100, HGX-H800,
        HGX-A800, GB200-NVL72, HGX-H20; aliases such as 'HGX H100' work) with ``n_nodes`` nodes.
        For GB200-NVL72 a node is a 4-GPU compute tray; 18 trays make one 72-GPU NVLink domain."""
        from .hardware import gpu as gpu_spec, nic as nic_spec

        key, e = _system_entry(name)
        g = gpu_spec(e["gpu"])
        kw = dict(gpu=g.name, gpus_per_node=e["gpus_per_node"], n_nodes=n_nodes, scaleup_gbs=g.nvlink_gbs / 2.0,
                  scaleup_domain_gpus=e["scaleup_domain_gpus"], nvls=bool(e["nvls"]), nics_per_node=e["nics_per_node"],
                  nic_gbps=float(e.get("nic_gbps", nic_spec(e["nic"]).port_gbps)),
                  scaleup_ring_busbw_gbs=float(e["scaleup_ring_busbw_gbs"]),
                  scaleup_nvls_busbw_gbs=float(e["scaleup_nvls_busbw_gbs"]), name=key,
                  source=f"{e['source']}. Achievable busbw: {e['busbw_source']}")
        kw.update(overrides)
        return cls(**kw)

    @classmethod
    def seed003(cls, n_nodes: int = 4) -> "Cluster":
        """Seed 003's scenario (误区一): servers of 8x H800 with ONE 25 GbE port per server.

        HGX-H800 nodes (NVLink 400 GB/s bidirectional, NVLS) whose only compute network is one
        25 Gbit/s Ethernet port per server; NCCL over RoCE is assumed to reach the same 0.96 of the
        line rate as on InfiniBand (over TCP sockets it reaches less). Default 4 servers = 32 GPUs.
        """
        c = cls.system("HGX-H800", n_nodes=n_nodes, nics_per_node=1, nic_gbps=25.0, fabric_tiers=1)
        return replace(c, name="seed 003: 8x H800 per server, 1x 25GbE per server")

    @classmethod
    def for_gpu(cls, gpu: str, n_nodes: int = 1, **overrides) -> "Cluster":
        """The catalog system built on ``gpu`` (e.g. 'H800-SXM' -> HGX-H800, 'H100' -> DGX-H100) with
        ``n_nodes`` nodes and any field overridden (e.g. ``nic_gbps=25, nics_per_node=1``). A GPU of
        no catalog system gets an 8-GPU node on its own NVLink (ring at 370/450 of the line rate, no
        NVLS) and one 400G NIC per GPU unless overridden."""
        from .hardware import gpu as gpu_spec

        g = gpu_spec(gpu)
        for key, e in _data()["systems"].items():
            if e["gpu"] == g.name:
                return cls.system(key, n_nodes, **overrides)
        if g.nvlink_gbs <= 0:
            raise ValueError(f"gpu {g.name!r} has no NVLink-class link in the catalog; build the Cluster by hand")
        kw = dict(gpu=g.name, gpus_per_node=8, n_nodes=n_nodes, scaleup_gbs=g.nvlink_gbs / 2.0, scaleup_domain_gpus=8,
                  nvls=False, nics_per_node=8, nic_gbps=400.0, name=f"8x {g.name} (generic node)")
        kw.update(overrides)
        return cls(**kw)

    @classmethod
    def from_links(cls, *, nic_gbps, nics_per_node: int = 1, gpus_per_node: int = 8, scaleup_gbs, n_nodes: int = 1,
                   gpu: str = "", nvls: bool = False, **kw) -> "Cluster":
        """A cluster given only by its link rates (NIC line rate, NVLink per-direction line rate)."""
        return cls(gpu=gpu, gpus_per_node=gpus_per_node, n_nodes=n_nodes, scaleup_gbs=scaleup_gbs,
                   scaleup_domain_gpus=kw.pop("scaleup_domain_gpus", gpus_per_node), nvls=nvls,
                   nics_per_node=nics_per_node, nic_gbps=nic_gbps, **kw)

    def with_nodes(self, n_nodes: int) -> "Cluster":
        """The same cluster with ``n_nodes`` nodes."""
        return replace(self, n_nodes=n_nodes)

    # -- derived quantities (per GPU / per NIC / per node in the names) --------------------
    @property
    def n_gpus(self) -> int:
        return self.gpus_per_node * self.n_nodes

    @property
    def ring_busbw_gbs(self) -> float:
        """Achievable NCCL ring busbw inside the NVLink domain, GB/s per GPU."""
        if self.scaleup_ring_busbw_gbs is not None:
            return float(self.scaleup_ring_busbw_gbs)
        return self.scaleup_gbs * SCALEUP_RING_EFFICIENCY

    @property
    def nvls_busbw_gbs(self) -> float:
        """Achievable NVLS all_reduce busbw on 8 ranks (0 without NVLink SHARP)."""
        if not self.nvls:
            return 0.0
        if self.scaleup_nvls_busbw_gbs:
            return float(self.scaleup_nvls_busbw_gbs)
        return self.ring_busbw_gbs * NVLS_GAIN

    @property
    def nic_gbs(self) -> float:
        """Achievable NCCL bandwidth of one NIC, GB/s (line rate / 8 x nic_efficiency)."""
        return self.nic_gbps / BITS_PER_BYTE * self.nic_efficiency

    @property
    def node_net_gbs(self) -> float:
        """Achievable network bandwidth of one node, all its NICs, GB/s per direction."""
        return self.nics_per_node * self.nic_gbs

    @property
    def node_net_gbps(self) -> float:
        """Line rate of one node's compute NICs together, Gbit/s."""
        return self.nics_per_node * self.nic_gbps

    @property
    def net_gbs_per_gpu(self) -> float:
        """Achievable network share of one GPU, GB/s (node network / GPUs per node)."""
        return self.node_net_gbs / self.gpus_per_node

    @property
    def domain_gpus(self) -> int:
        """GPUs in one NVLink domain of this cluster (capped by the cluster size)."""
        return min(self.scaleup_domain_gpus, self.n_gpus)

    # -- the model -------------------------------------------------------------------------
    def _ranks(self, ranks, ranks_per_node):
        r = self.n_gpus if ranks is None else ranks
        r_arr = np.asarray(validate.integer("ranks", r, lo=1, hi=self.n_gpus))
        if ranks_per_node is None:
            q = np.minimum(r_arr, self.scaleup_domain_gpus)
            if np.any(np.mod(r_arr, q) != 0):
                bad = int(r_arr[np.mod(r_arr, q) != 0].ravel()[0]) if r_arr.ndim else int(r_arr)
                raise ValueError(f"ranks={bad} spans several NVLink domains of {self.scaleup_domain_gpus} GPUs but is "
                                 "not a multiple of it: give ranks_per_node")
        else:
            q = np.asarray(validate.integer("ranks_per_node", ranks_per_node, lo=1, hi=self.gpus_per_node))
            # ranks on one node that share an NVLink domain; NVL72: several nodes per domain
            if self.scaleup_domain_gpus > self.gpus_per_node:
                q = np.minimum(r_arr, q * (self.scaleup_domain_gpus // self.gpus_per_node))
            else:
                q = np.minimum(q, self.scaleup_domain_gpus)
            q = np.minimum(q, r_arr)
        return r, r_arr, q

    def _net_per_gpu(self, r_arr, q):
        """Per-GPU network share for a collective of r ranks, q per domain (oversubscription applied)."""
        nodes = np.asarray(r_arr, dtype=float) / np.minimum(np.asarray(q, dtype=float), self.gpus_per_node)
        b = np.full(np.shape(nodes), self.net_gbs_per_gpu)
        if self.nodes_per_leaf is not None and self.oversubscription > 1:
            b = np.where(nodes > self.nodes_per_leaf, b / self.oversubscription, b)
        return b

    def collective_cost(self, op: str, size_bytes, ranks=None, algo: str = "auto", *, ranks_per_node=None,
                        pipelined: bool = True) -> comm.CollectiveCost:
        """Cost of one collective (``comm.CollectiveCost``: time, latency, bandwidth, NVLink and network parts).

        ranks: ranks of the collective (default: every GPU). ranks_per_node: how many of them share a
        node (default: packed, min(ranks, GPUs per domain)); 1 for a DP group strided across TP/PP groups.
        Vectorised over size_bytes and ranks.
        """
        _, r_arr, q = self._ranks(ranks, ranks_per_node)
        return collective_cost_arrays(op, size_bytes, r_arr, ranks_per_domain=q, ring_busbw_gbs=self.ring_busbw_gbs,
                                      nvls_busbw_gbs=self.nvls_busbw_gbs, net_gbs_per_gpu=self._net_per_gpu(r_arr, q),
                                      net_latency_s=self.net_latency_s, scaleup_latency_s=self.scaleup_latency_s,
                                      algo=algo, pipelined=pipelined)

    def collective_time_s(self, op: str, size_bytes, ranks=None, algo: str = "auto", *, ranks_per_node=None):
        """Time (s) of one collective: THE collective-time model of the course (see module docstring)."""
        return self.collective_cost(op, size_bytes, ranks, algo, ranks_per_node=ranks_per_node).time_s

    def busbw_gbs(self, op: str, size_bytes, ranks=None, algo: str = "auto", *, ranks_per_node=None):
        """busbw (GB/s) nccl-tests would print for the modelled time at ``size_bytes`` (0 where S = 0)."""
        r = self.n_gpus if ranks is None else ranks
        t = np.asarray(self.collective_time_s(op, size_bytes, r, algo, ranks_per_node=ranks_per_node), dtype=float)
        s = np.broadcast_to(np.asarray(size_bytes, dtype=float), t.shape)
        alg = np.divide(s, t, out=np.zeros_like(t), where=t > 0) / BYTES_PER_GB
        out = alg * np.asarray(comm.busbw_factor(op, np.broadcast_to(np.asarray(r), t.shape)), dtype=float)
        return validate.scalar_or_array(out, validate.is_scalar(size_bytes, r))

    def expected_busbw_gbs(self, op: str = "all_reduce", ranks=None, *, ranks_per_node=None, algo: str = "auto"):
        """busbw (GB/s) an nccl-tests run of ``ranks`` GPUs should reach at large messages.

        The model's large-message limit (latency terms dropped): NVLS / NVLink ring inside one
        domain, min(NVLink ring, node NICs x achievable rate) across nodes (per-rail rings).
        E.g. 8x H100 all_reduce 480 (NVLS; ring 370), 2x DGX H100 370, 8x A100 230.
        Used by every acceptance threshold (ch15, ch19, ch22, ch23, ch28, labutil.health).
        """
        r = self.n_gpus if ranks is None else ranks
        _, r_arr, q = self._ranks(r, ranks_per_node)
        s = 1e12
        c = collective_cost_arrays(op, s, r_arr, ranks_per_domain=q, ring_busbw_gbs=self.ring_busbw_gbs,
                                   nvls_busbw_gbs=self.nvls_busbw_gbs, net_gbs_per_gpu=self._net_per_gpu(r_arr, q),
                                   algo=algo, include_latency=False)
        t = np.asarray(c.time_s, dtype=float)
        f = np.asarray(comm.busbw_factor(op, r_arr), dtype=float)
        out = np.divide(s / BYTES_PER_GB * f, t, out=np.full_like(t, np.inf), where=t > 0)
        if np.any(~np.isfinite(out)):
            raise ValueError("expected busbw is undefined for a 1-rank collective (nothing is sent); use ranks >= 2")
        return validate.scalar_or_array(out, np.ndim(r) == 0)

    def dp_sync_time_s(self, params, dp_ranks=None, bytes_per_grad=2, *, bucket_bytes=None, ranks_per_node=None,
                       algo: str = "auto"):
        """Data-parallel gradient all-reduce time per optimizer step (s).

        One all_reduce of params x bytes_per_grad over ``dp_ranks`` GPUs (default: all). With
        ``bucket_bytes`` (PyTorch DDP: 25 MiB, ``comm.DDP_BUCKET_BYTES``) the gradient goes in
        ceil(S / bucket) equal buckets, each one collective (latency paid per bucket). ZeRO-1/2 and
        FSDP move the same bytes (reduce-scatter + all-gather). Vectorised over params and dp_ranks.
        """
        s = np.asarray(comm.gradient_bytes(params, bytes_per_grad), dtype=float)
        if bucket_bytes is None:
            return self.collective_time_s("all_reduce", validate.scalar_or_array(s, np.ndim(s) == 0), dp_ranks, algo,
                                          ranks_per_node=ranks_per_node)
        bb = validate.positive("bucket_bytes", bucket_bytes)
        nb = np.ceil(s / bb)
        t = np.asarray(self.collective_time_s("all_reduce", s / nb, dp_ranks, algo, ranks_per_node=ranks_per_node))
        return validate.scalar_or_array(nb * t, validate.is_scalar(params, dp_ranks if dp_ranks is not None else 1))

    def p2p_time_s(self, size_bytes, *, cross_node: bool = True):
        """Point-to-point send of ``size_bytes`` (pipeline-parallel activations): one α + S / B, with
        B the GPU's network share (one rail) across nodes or the NVLink ring busbw inside a domain."""
        s = np.asarray(validate.positive("size_bytes", size_bytes, allow_zero=True), dtype=float)
        if cross_node:
            t = self.net_latency_s + s / (self.net_gbs_per_gpu * BYTES_PER_GB)
        else:
            t = self.scaleup_latency_s + s / (self.ring_busbw_gbs * BYTES_PER_GB)
        return validate.scalar_or_array(t, np.ndim(size_bytes) == 0)

    def describe(self) -> str:
        """One line for a chapter: the cluster in words with its per-GPU / per-node figures."""
        g = self.gpu or "GPU"
        dom = (f"NVLink domain {self.scaleup_domain_gpus} GPUs" if self.scaleup_domain_gpus != self.gpus_per_node
               else "NVLink in the node")
        return (f"{self.n_nodes} x {self.gpus_per_node} {g} = {self.n_gpus} GPUs; {dom} "
                f"({self.scaleup_gbs:g} GB/s per GPU per direction, ring {self.ring_busbw_gbs:g}"
                + (f", NVLS {self.nvls_busbw_gbs:g}" if self.nvls else "") + " GB/s busbw); "
                f"{self.nics_per_node} x {self.nic_gbps:g} Gb/s NIC per node "
                f"(~{self.node_net_gbs:.4g} GB/s per node, {self.net_gbs_per_gpu:.3g} GB/s per GPU)")


# -- module-level forms ------------------------------------------------------------------------
def expected_busbw_gbs(cluster: Cluster, op: str = "all_reduce", ranks=None, **kw):
    """``cluster.expected_busbw_gbs(op, ranks)``."""
    if not isinstance(cluster, Cluster):
        raise TypeError(f"cluster must be a labutil.cluster.Cluster; got {type(cluster).__name__}")
    return cluster.expected_busbw_gbs(op, ranks, **kw)


def collective_time_s(cluster: Cluster, op: str, size_bytes, ranks=None, algo: str = "auto", **kw):
    """``cluster.collective_time_s(op, size_bytes, ranks, algo)``."""
    if not isinstance(cluster, Cluster):
        raise TypeError(f"cluster must be a labutil.cluster.Cluster; got {type(cluster).__name__}")
    return cluster.collective_time_s(op, size_bytes, ranks, algo, **kw)
