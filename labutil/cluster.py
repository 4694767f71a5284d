"""One description of a GPU cluster and the one collective-communication model built on it.

Every chapter, explorer, exercise and the capstone passes a ``Cluster`` around; every DP / TP /
PP / EP communication estimate of the course goes through ``Cluster.collective_time_s`` (or the
vectorised ``collective_cost_arrays`` behind it), and every acceptance threshold through
``Cluster.expected_busbw_gbs`` / ``Cluster.acceptance_busbw_gbs``.

>>> c = Cluster.system("DGX-H100", n_nodes=2)
>>> round(c.expected_busbw_gbs("all_reduce", ranks=8))      # one node, NVLink SHARP
480
>>> round(c.expected_busbw_gbs("all_reduce"))               # 16 ranks, acceptance run (NCCL_ALGO=Ring): min(NVLink ring 370, 8 x 48)
370
>>> round(c.expected_busbw_gbs("all_reduce", algo="auto"))  # 16 ranks, NCCL's own choice on 2 nodes: NVLS-Tree
480
>>> round(c.line_bound_gbs())                               # line rates: min(NVLink 450, 8 x 400G / 8)
400

What the model knows
--------------------
A cluster is ``n_nodes`` nodes of ``gpus_per_node`` GPUs. GPUs inside one *scale-up domain*
(``scaleup_domain_gpus``: the 8 GPUs of an HGX baseboard on NVSwitch, or the 72 GPUs of a GB200
NVL72 rack) talk over NVLink; everything else crosses the scale-out network through
``nics_per_node`` NICs of ``nic_gbps`` each per node (one per GPU, "rail", in DGX-class nodes).
NCCL treats one NVLink domain as one "node": an NVL72 rack is one node of 72 ranks.

Achievable bandwidths, not line rates (sources in ``labutil/data/systems.toml``):

- NVLink ring: the large-message NCCL busbw with ``NCCL_ALGO=RING`` inside the domain:
  370 GB/s on 8x H100 / H200 (450 GB/s line), 230 on A100 (300), 160 on A800 / H800 (200),
  695 on NVLink 5 (900). A hand-built cluster uses 370/450 of its line rate.
- NVLink SHARP (NVLS, H100 and later NVSwitch systems, on by default for all_reduce): 480 GB/s
  busbw on 8x H100, 475 on 8x H200, 215 on 8x H800, ~830 on 8x B200.
- Network, ``transport='rdma'`` (InfiniBand or RoCE, GPUDirect RDMA): 0.96 of the NIC line rate per
  NIC (~24 GB/s per 200G HDR, ~48 GB/s per 400G NDR; S. Jeaugey, NVIDIA).
- Network, ``transport='socket'`` (NCCL's TCP socket transport: no IB/RoCE device, ``NCCL_IB_DISABLE=1``,
  or an IB fallback): per NIC min(TCP payload efficiency x line, streams x per-stream rate): 0.94 of
  the line at MTU 1500, and every TCP stream is driven by a CPU thread copying through the kernel
  (about 2 GB/s per stream; NCCL opens 2 streams per NIC by default). One 100 GbE port gives ~4 GB/s.

The algorithms are NCCL's, with NCCL's own tuning model (``src/graph/tuning.cc`` of NCCL 2.30.7,
``labutil.nccl_tuning.CURRENT``): each (algorithm, protocol) pair has a bus bandwidth B and a
latency L, the time is L + S x busbw_factor(op, n) / B, and NCCL (``algo='auto'``) runs the fastest.

- ``ring``: one ring per rail across NVLink domains, so busbw = min(NVLink ring, q x per-GPU network
  share) (q = the collective's ranks per domain; 8 for a full-node job: the node's NICs add up; 1
  for a DP group strided across TP/PP groups: one rail). Latency per NCCL: base + intra-domain hops
  x NVLink per-hop latency + 2(m-1) inter-domain hops x network per-hop latency (m domains), never
  the network latency on NVLink hops. ``NCCL_ALGO=Ring`` is the best of its three protocols:
  LL (B x 1/2, capped; 0.6 us per NVLink hop), LL128 (B x 0.92) and Simple (B; 3.4 / 14 us per hop).
- ``tree`` (all_reduce): NCCL's double binary tree across domains, a chain inside. Bytes on the
  wire: on 2 domains each domain sends S (busbw up to 2(n-1)/n x the network), on 3+ domains 2S
  (busbw ~ the network); x 0.92 (NCCL's tree refinement), latency 2(log2 m x net + (q-1) x NVLink).
- ``nvls`` (all_reduce inside one NVLS domain): the measured 8-GPU NVLS figure; for other rank
  counts the NVLS algbw is held at its 8-GPU value, floored at the ring (github.com/NVIDIA/nccl/issues/1455
  for 5-8 GPUs; an assumption above 8: 935 GB/s busbw on a 72-GPU NVL72 domain).
- ``nvls_tree`` (all_reduce across NVLS domains): NVLS inside each domain, a tree between domains:
  busbw = min(NVLS, 2(n-1)/n x network) on 2 domains (~470 GB/s measured on 2 x 8 H100 NDR, nccl-tests#309), min(NVLS,
  (n-1)/n x network) beyond (no gain over the ring from 4 nodes: github.com/NVIDIA/nccl/issues/1221).
- ``hierarchical``: the two-level scheme of ``comm.collective_cost`` (Horovod-style), for teaching.
- ``auto``: the fastest of the above (all_reduce), the ring (all_gather, reduce_scatter, broadcast,
  reduce), the two-level scheme for all_to_all.

The per-GPU network share assumes every GPU of a node is communicating at the same time (a
full-cluster training job or an nccl-tests run on whole nodes): each GPU gets
``nics_per_node x NIC rate / gpus_per_node``. When a job spans more than ``nodes_per_leaf`` nodes
the cross-leaf traffic is slowed by ``oversubscription`` and, with ``ecmp_flows_per_nic`` set (an
Ethernet/RoCE fabric that hashes flows onto uplinks, ECMP), by the expected hash collisions
(``ecmp_efficiency``).

Acceptance (``acceptance_busbw_gbs``) compares a run with ``NCCL_ALGO=Ring`` across domains:
NVLS-Tree and Tree on 2 nodes move half the bytes over the network and hide a slow rail
(github.com/NVIDIA/nccl-tests/issues/196, github.com/NVIDIA/nccl/issues/1031).

Validation: ``labutil/data/nccl_public_results.toml`` holds public nccl-tests results (issue
threads of NVIDIA/nccl and NVIDIA/nccl-tests), each marked calibration or held out;
``tests/test_cluster_public.py`` compares ``expected_busbw_gbs`` with every row and ch22 prints the table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from . import comm, data_files, nccl_tuning, scenarios, validate
from .hardware import gpu as gpu_spec
from .hardware import nic as nic_spec
from .units import BITS_PER_BYTE, BYTES_PER_GB

__all__ = ["Cluster", "ALGOS", "PROTOCOLS", "TRANSPORTS", "systems", "expected_busbw_gbs", "collective_time_s",
           "collective_cost_arrays", "ecmp_efficiency", "socket_nic_gbs", "tuner_node", "NIC_EFFICIENCY",
           "SCALEUP_RING_EFFICIENCY", "NVLS_GAIN", "NVLS_REFERENCE_RANKS", "TCP_EFFICIENCY", "SOCKET_STREAM_GBS",
           "SOCKET_STREAMS_PER_NIC"]

ALGOS = ("auto", "ring", "tree", "nvls", "nvls_tree", "hierarchical")
PROTOCOLS = ("LL", "LL128", "Simple")
TRANSPORTS = ("rdma", "socket")
CPU_VENDORS = ("intel", "amd")

#: Number of ranks of the published NVLS figures (8-GPU NVSwitch baseboards).
NVLS_REFERENCE_RANKS = 8
#: NVLS over ring for all_reduce when a hand-built cluster gives no NVLS figure: "for the Allreduce
#: operation ... we can get a 30% improvement using NVLink SHARP" (S. Jeaugey,
#: github.com/NVIDIA/nccl/issues/1442); 480 / 370 = 1.30 on 8x H100.
NVLS_GAIN = 480.0 / 370.0
#: Up to this many ranks NVLS all_reduce measured no faster than the ring (nccl/issues/1455).
NVLS_MIN_RANKS = 4
#: NCCL's channels per node in the ring-plateau condition of ncclTopoGetAlgoTime (16 on DGX-class
#: nodes: two per NIC; the condition only matters below ~1 MiB per rank).
_PLATEAU_CHANNELS = 16


def _data() -> dict:
    return data_files.load("systems.toml")


#: Achievable fraction of a NIC's line rate in NCCL busbw over RDMA (0.96; systems.toml [network]).
NIC_EFFICIENCY = float(_data()["network"]["nic_efficiency"])
#: Achievable fraction of the NVLink per-direction line rate with NCCL's ring (370/450; [scaleup]).
SCALEUP_RING_EFFICIENCY = float(_data()["scaleup"]["ring_efficiency"])
#: TCP payload per wire byte at MTU 1500 (1448 / 1538; systems.toml [socket]).
TCP_EFFICIENCY = float(_data()["socket"]["tcp_efficiency"])
#: One NCCL socket stream, CPU-bound, GB/s (calibration row github.com/NVIDIA/nccl/issues/209).
SOCKET_STREAM_GBS = float(_data()["socket"]["stream_gbs"])
#: TCP streams NCCL opens per NIC by default (2 channels per NIC x 1 socket).
SOCKET_STREAMS_PER_NIC = int(_data()["socket"]["default_streams_per_nic"])

_T = nccl_tuning.CURRENT
_P = {p: i for i, p in enumerate(PROTOCOLS)}
_ARCH_INDEX = {"Volta": 0, "Turing": 0, "Ampere": 1, "Ada Lovelace": 1, "Hopper": 2, "Blackwell": 3}
_ARCH_NAME = ("Volta", "Ampere", "Hopper", "Blackwell")


def systems() -> list[str]:
    """Canonical names of the catalog systems (``Cluster.system`` accepts these and their aliases)."""
    return list(_data()["systems"])


def _system_entry(name: str) -> tuple[str, dict]:
    return data_files.table("systems.toml", "systems", kind="system").item(name)


# ============================================================================================
# network building blocks
# ============================================================================================
def socket_nic_gbs(nic_gbps, streams=SOCKET_STREAMS_PER_NIC, stream_gbs=SOCKET_STREAM_GBS,
                   tcp_efficiency=TCP_EFFICIENCY):
    """Achievable NCCL bandwidth (GB/s) of one NIC over the TCP socket transport.

    min(tcp_efficiency x line rate / 8, streams x stream_gbs): TCP/IP framing caps the wire at 0.94
    of the line (MTU 1500), and NCCL's socket transport moves every byte through host memory with a
    CPU thread per stream (``labutil/data/systems.toml`` [socket], calibrated on one public row).
    E.g. one 100 GbE port with NCCL's default 2 streams: min(11.8, 4.1) = 4.1 GB/s; with AWS's 2 x 8
    sockets per connection (x 2 channels = 32 streams): 11.8 GB/s. Vectorised over nic_gbps.

    >>> round(socket_nic_gbs(100.0), 2), round(socket_nic_gbs(100.0, streams=32), 2)
    (4.12, 11.77)
    """
    r = validate.positive("nic_gbps", nic_gbps)
    k = validate.positive("streams", streams)
    g = validate.positive("stream_gbs", stream_gbs)
    e = validate.fraction("tcp_efficiency", tcp_efficiency)
    out = np.minimum(np.asarray(e) * np.asarray(r) / BITS_PER_BYTE, np.asarray(k) * np.asarray(g))
    return validate.scalar_or_array(out, validate.is_scalar(nic_gbps, streams))


def ecmp_efficiency(flows_per_link, links):
    """Throughput left by ECMP hash collisions: (flows / links) / E[max flows on one link].

    ``flows_per_link x links`` equal long flows (RDMA queue pairs) are hashed uniformly onto
    ``links`` equal uplinks; a collective advances at its slowest flow, which shares the busiest
    link. E[max load] is the balls-into-bins maximum (M. Raab, A. Steger, "Balls into Bins - A Simple
    and Tight Analysis", RANDOM 1998), computed with the Poisson approximation
    P(max <= k) = F_Poisson(k; lambda)^links. Few long flows per link (NCCL's rings: 2 channels per
    NIC) collide badly; spreading each connection over more QPs (NCCL_IB_QPS_PER_CONNECTION, Meta's
    "QP scaling") raises the entropy: Gangidi et al., "RDMA over Ethernet for Distributed AI
    Training at Meta Scale", SIGCOMM 2024, §5 (ECMP, low flow entropy, QP scaling). 1.0 for one link.

    >>> round(ecmp_efficiency(2, 1), 3), round(ecmp_efficiency(2, 32), 2), round(ecmp_efficiency(16, 32), 2)
    (1.0, 0.37, 0.64)
    """
    f = float(validate.positive("flows_per_link", flows_per_link))
    u = int(validate.integer("links", links, lo=1))
    if u == 1:
        return 1.0
    lam = f  # balls per bin
    kmax = int(lam + 12.0 * math.sqrt(lam) + 20.0)
    k = np.arange(kmax + 1)
    logpmf = -lam + k * math.log(lam) - np.array([math.lgamma(x + 1.0) for x in k])
    cdf = np.minimum(np.cumsum(np.exp(logpmf)), 1.0)
    e_max = float(np.sum(1.0 - cdf ** u))
    return float(min(1.0, lam / max(e_max, lam)))


# ============================================================================================
# NCCL's cost model on raw (broadcastable) arrays
# ============================================================================================
def _hw(link: str, algo: str, proto: str) -> float:
    """NCCL per-hop latency (s) of ``link`` ('nvlink', 'pci', 'net') for (algo, proto)."""
    return float(_T["hw_lat_us"][link][algo][_P[proto]]) * 1e-6


def _base(algo: str, proto: str) -> float:
    return float(_T["base_lat_us"][algo][_P[proto]]) * 1e-6


def _ll_max(inside, m, arch_idx: int, cpu: str):
    """NCCL's llMaxBw (GB/s): one node by GPU generation, several by CPU vendor and node count."""
    single = float(_T["ll_max_bw_single_node_gbs"][_ARCH_NAME[arch_idx]])
    two, more = (float(x) for x in _T["ll_max_bw_multi_node_gbs"][cpu])
    return np.where(inside, single, np.where(m <= 2, two, more))


def _tree_correction(proto: str, s):
    """NCCL's treeCorrectionFactor for Tree all_reduce (sizes 64 B .. 256 MiB; 1 outside)."""
    table = np.asarray(_T["tree_correction"][proto], dtype=float)
    with np.errstate(divide="ignore"):
        idx = np.floor(np.log2(np.maximum(s, 1.0) / 64.0))
    ok = (s >= 64) & (idx < 23)
    return np.where(ok, table[np.clip(idx, 0, table.size - 1).astype(int)], 1.0)


def _nccl_candidates(op, s, n, q, ring, nvls_q, net, *, a_net, a_nvl, arch_idx, cpu, transport,
                     include_latency):
    """{(algo, proto): (latency_s, busbw_gbs)} for every NCCL (algorithm, protocol) that ``op`` can run.

    Bandwidths are nccl-tests busbw (GB/s); the time of a pair is latency + S x factor(op, n) / busbw.
    Formulas and constants: NCCL 2.30.7 ``ncclTopoTuneModel`` / ``ncclTopoGetAlgoTime``
    (``labutil.nccl_tuning.CURRENT``); see the module docstring.
    """
    m = n / q
    inside = m <= 1
    multi = ~inside
    lg = np.floor(np.log2(np.maximum(m, 1.0)))        # NCCL's log2i(nNodes)
    net_node = q * net                                 # the NICs of the collective's q ranks in a domain
    ll_max = _ll_max(inside, m, arch_idx, cpu)
    overhead = float(_T["net_overhead_us"][cpu]) * 1e-6
    plateau = float(_T["ring_plateau_factor"]["ampere_plus" if arch_idx >= 1 else "pre_ampere"])
    ar = op == "all_reduce"
    out = {}
    # net_latency_s / scaleup_latency_s override the Simple ring hop; every other (algorithm, protocol)
    # hop latency of that link scales with it (a slower network is slower for LL and Tree too)
    s_net = a_net / _hw("net", "ring", "Simple")
    s_nvl = a_nvl / _hw("nvlink", "ring", "Simple")

    def lat(x):
        return x if include_latency else np.zeros_like(s)

    # -- ring (every op but all_to_all): per-rail rings across domains
    if op != "all_to_all":
        b_simple = np.where(inside, ring, np.minimum(ring, net_node))
        nsteps = 2.0 * (n - 1) if ar else (n - 1)
        n_inter = np.where(inside, 0.0, 2.0 * (m - 1) if ar else (m - 1))
        for p in PROTOCOLS:
            if p == "LL":
                bw = np.minimum(ll_max, float(_T["ring_ll_factor"]) * b_simple)
            elif p == "LL128":
                bw = float(_T["ring_ll128_factor"]) * b_simple
                if transport == "socket":  # LL128 is enabled only with GPU-NIC paths up to PXN (no GDR: off)
                    bw = np.where(inside, bw, 0.0)
            else:
                bw = b_simple
            intra = _hw("nvlink", "ring", p) * s_nvl
            inter_ring = _hw("net", "ring", p) * s_net
            inter_tree = _hw("net", "tree", p) * s_net
            inter = np.where(q <= 1, inter_tree, inter_ring)  # ppn = 1: NCCL charges the tree's network latency
            over = overhead * (float(_T["net_overhead_simple_factor"]) if p == "Simple" else 1.0)
            intra_eff = np.where(multi, np.maximum(intra, over), intra)
            L = _base("ring", p) + (nsteps - n_inter) * intra_eff + n_inter * inter
            if ar and p == "Simple":
                big = multi & (s / (_PLATEAU_CHANNELS * n) >= float(_T["ring_plateau_min_bytes_per_channel_rank"]))
                L = np.where(big, L * plateau, L)
            out[("ring", p)] = (lat(L), bw)

    if not ar:
        return out

    # -- tree (all_reduce): chain inside a domain, double binary tree across domains
    k_tree = np.where(m <= 2, 2.0, 1.0)                # 2 domains: each sends S, not 2S (half the bytes)
    b_link = np.where(inside, ring, np.minimum(ring, k_tree * net_node))
    tuner = float(_T["tree_factor"]) * b_link          # NCCL: busBw x 0.92 for Tree all_reduce
    to_busbw = (n - 1) / np.maximum(n, 1.0)            # tree algbw = busBw / 2 -> nccl-tests busbw
    for p in PROTOCOLS:
        if p == "LL":
            bw = np.minimum(tuner * float(_T["tree_ll_factor"]), ll_max)
        elif p == "LL128":
            bw = tuner * np.where(inside, float(_T["tree_ll128_factor_one_node"]),
                                  float(_T["tree_ll128_factor_multi_node"]))
            if transport == "socket":
                bw = np.where(inside, bw, 0.0)
        else:
            bw = tuner
        bw = bw * to_busbw * _tree_correction(p, s)
        intra = _hw("nvlink", "tree", p) * s_nvl
        inter = _hw("net", "tree", p) * s_net
        L = _base("tree", p) + 2.0 * ((q - 1) * intra + lg * inter)
        out[("tree", p)] = (lat(L), bw)

    # -- NVLink SHARP inside one domain, NVLS-Tree across domains (Simple protocol only)
    has_nvls = (nvls_q > 0) & (q >= 2)
    nvls_bw = np.where(has_nvls & inside, nvls_q, 0.0)
    out[("nvls", "Simple")] = (lat(np.full_like(s, _hw("nvlink", "nvls", "Simple") * s_nvl)), nvls_bw)
    k_nt = np.where(m <= 2, 2.0 * (n - 1) / np.maximum(n, 1.0), (n - 1) / np.maximum(n, 1.0))
    nt_bw = np.where(has_nvls & multi, np.minimum(nvls_q, k_nt * net_node), 0.0)
    L = _base("nvls_tree", "Simple") + _hw("nvlink", "nvls_tree", "Simple") * s_nvl \
        + 2.0 * lg * _hw("net", "nvls_tree", "Simple") * s_net
    out[("nvls_tree", "Simple")] = (lat(L), nt_bw)
    return out


def _choose(cands: dict, keys, s, f, n):
    """The fastest of ``keys`` per element: (time, latency, bandwidth term, labels)."""
    best_t = best_l = best_b = None
    labels = None
    for key in keys:
        if key not in cands:
            continue
        L, B = cands[key]
        L = np.broadcast_to(np.asarray(L, dtype=float), s.shape)
        B = np.broadcast_to(np.asarray(B, dtype=float), s.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            bt = np.where(B > 0, s * f / np.where(B > 0, B, 1.0) / BYTES_PER_GB, np.inf)
        t = np.where(B > 0, L + bt, np.inf)
        if best_t is None:
            best_t, best_l, best_b = t, np.where(B > 0, L, np.inf), bt
            labels = np.full(s.shape, f"{key[0]}/{key[1]}", dtype=object)
        else:
            better = t < best_t
            best_t = np.where(better, t, best_t)
            best_l = np.where(better, L, best_l)
            best_b = np.where(better, bt, best_b)
            labels = np.where(better, f"{key[0]}/{key[1]}", labels)
    if best_t is None:
        return None
    one = n <= 1  # nothing to send
    return (np.where(one, 0.0, best_t), np.where(one, 0.0, best_l), np.where(one, 0.0, best_b),
            np.where(one, "none", labels))


def collective_cost_arrays(op: str, size_bytes, ranks, *, ranks_per_domain, ring_busbw_gbs, nvls_busbw_gbs,
                           net_gbs_per_gpu, net_latency_s=None, scaleup_latency_s=None, algo: str = "auto",
                           pipelined: bool = True, include_latency: bool = True, protocol: str | None = None,
                           arch: str = "Hopper", cpu_vendor: str = "intel", transport: str = "rdma") -> comm.CollectiveCost:
    """The collective-time model on raw (broadcastable) arrays; see the module docstring.

    size_bytes: nccl-tests size (per-rank buffer; total buffer for all_gather/reduce_scatter/all_to_all).
    ranks: ranks of the collective; ranks_per_domain: how many of them share one NVLink domain (q;
        ranks must be q x m for m domains).
    ring_busbw_gbs / nvls_busbw_gbs: achievable NVLink ring busbw and NVLS all_reduce busbw on 8
        ranks (0: no NVLS).
    net_gbs_per_gpu: achievable network GB/s per GPU (node NICs x achievable rate / GPUs per node,
        already divided by any oversubscription; the transport's rate for sockets).
    net_latency_s / scaleup_latency_s: per-hop latency of the Simple protocol over the network /
        NVLink (default NCCL 2.30.7's 14 / 3.4 us); the other (algorithm, protocol) hop latencies of
        that link are NCCL's own, scaled by the same factor (override / default).
    algo: one of ALGOS; protocol: None (the best, as NCCL_PROTO unset) or 'LL' / 'LL128' / 'Simple'.
    arch, cpu_vendor: GPU generation and host CPU, for NCCL's LL bandwidth cap and ring plateau.
    transport: 'rdma' or 'socket' (LL128 is off across nodes on sockets).
    Returns ``comm.CollectiveCost`` (time, latency, bandwidth, intra, inter parts; ``choice`` names
    the chosen 'algo/protocol' per element).
    """
    comm.check_op(op)
    validate.choice("algo", algo, ALGOS)
    if protocol is not None:
        validate.choice("protocol", protocol, PROTOCOLS)
    validate.choice("transport", transport, TRANSPORTS)
    validate.choice("cpu_vendor", cpu_vendor, CPU_VENDORS)
    arch_idx = _ARCH_INDEX.get(arch, 2)
    scalar = validate.is_scalar(size_bytes, ranks, ranks_per_domain, ring_busbw_gbs, nvls_busbw_gbs, net_gbs_per_gpu)
    s = np.asarray(validate.positive("size_bytes", size_bytes, allow_zero=True), dtype=float)
    n = np.asarray(validate.integer("ranks", ranks, lo=1), dtype=float)
    q = np.asarray(validate.integer("ranks_per_domain", ranks_per_domain, lo=1), dtype=float)
    ring = np.asarray(validate.positive("ring_busbw_gbs", ring_busbw_gbs), dtype=float)
    nvls = np.asarray(validate.positive("nvls_busbw_gbs", nvls_busbw_gbs, allow_zero=True), dtype=float)
    net = np.asarray(validate.positive("net_gbs_per_gpu", net_gbs_per_gpu), dtype=float)
    a_net = _hw("net", "ring", "Simple") if net_latency_s is None else \
        float(validate.positive("net_latency_s", net_latency_s, allow_zero=True))
    a_nvl = _hw("nvlink", "ring", "Simple") if scaleup_latency_s is None else \
        float(validate.positive("scaleup_latency_s", scaleup_latency_s, allow_zero=True))
    s, n, q, ring, nvls, net = np.broadcast_arrays(s, n, q, ring, nvls, net)
    q = np.minimum(q, n)
    if np.any(np.mod(n, q) != 0):
        i = np.flatnonzero(np.mod(n, q).ravel() != 0)[0]
        raise ValueError(f"ranks ({int(n.ravel()[i])}) must be a multiple of ranks_per_domain "
                         f"({int(q.ravel()[i])}): place the same number of ranks in every NVLink domain")
    inside = n == q  # the whole collective stays in one NVLink domain
    f = np.asarray(comm.busbw_factor(op, n.astype(np.int64)), dtype=float)
    if algo in ("nvls", "nvls_tree"):
        if op != "all_reduce":
            raise ValueError(f"algo={algo!r} applies to all_reduce only (NVLink SHARP); got op={op!r}")
        if np.any(nvls <= 0):
            raise ValueError(f"algo={algo!r} needs NVLink SHARP (NVSwitch gen 3+, H100 and later); this cluster has none")

    # NVLS all_reduce busbw at q ranks (github.com/NVIDIA/nccl/issues/1455, 8x H100: ring-like 370 GB/s
    # for 2-4 GPUs, then 420/440/460/480 for 5-8 with algbw ~258-273): above 4 ranks the algbw of
    # the 8-rank figure is held (busbw x 2(q-1)/q), never below the ring. Each GPU sends its buffer
    # into the switch once and reads the sum back once, so the algbw is a per-GPU NVLink figure:
    # ASSUMPTION (no public NVLS figure above 8 GPUs): it holds on larger domains (NVL72: busbw
    # 830 / 1.75 x 142/72 = 935 GB/s), so a bigger NVLS domain never lowers the algbw.
    f_ref = 2.0 * (NVLS_REFERENCE_RANKS - 1) / NVLS_REFERENCE_RANKS
    f_q = 2.0 * (q - 1) / np.maximum(q, 1.0)
    nvls_q = np.where((nvls > 0) & (q > NVLS_MIN_RANKS), np.maximum(ring, nvls / f_ref * f_q), np.where(nvls > 0, ring, 0.0))
    intra_bw = np.where(nvls_q > 0, nvls_q, ring) if op == "all_reduce" else ring

    a_lat_net = a_net if include_latency else 0.0
    a_lat_nvl = a_nvl if include_latency else 0.0
    protos = PROTOCOLS if protocol is None else (protocol,)

    def pick(keys):
        cands = _nccl_candidates(op, s, n, q, ring, nvls_q, net, a_net=a_net, a_nvl=a_nvl, arch_idx=arch_idx,
                                 cpu=cpu_vendor, transport=transport, include_latency=include_latency)
        r = _choose(cands, keys, s, f, n)
        if r is None or np.any(~np.isfinite(r[0])):
            raise ValueError(f"no {'/'.join(sorted({k[0] for k in keys}))} algorithm with protocol "
                             f"{protocol or 'any'} can run op={op!r} here")
        t, L, b, lab = r
        return comm.CollectiveCost(t, L, b, np.where(inside, t, 0.0), np.where(inside, 0.0, t), lab)

    with np.errstate(divide="ignore", invalid="ignore"):
        def legacy(algo_name):
            """comm's flat α-β formulas at the cluster's bandwidths (ops without an NCCL tree)."""
            bw = np.where(inside, ring, np.minimum(ring, q * net))
            c = comm.collective_cost(op, s, n.astype(np.int64), bw, np.where(inside, a_lat_nvl, a_lat_net), algo_name)
            return comm.CollectiveCost(c.time_s, c.latency_s, c.bandwidth_s, np.where(inside, c.time_s, 0.0),
                                       np.where(inside, 0.0, c.time_s), np.full(s.shape, f"{algo_name}", dtype=object))

        def hier_cost():
            nl = np.where(nvls_q > 0, _hw("nvlink", "nvls", "Simple") if include_latency else 0.0, 0.0)
            c = _two_level(op, s, n, q, intra_bw, net, a_lat_net, a_lat_nvl, "ring", pipelined, inside, ring, nl)
            return comm.CollectiveCost(c.time_s, c.latency_s, c.bandwidth_s, c.intra_s, c.inter_s,
                                       np.full(s.shape, "hierarchical", dtype=object))

        if op == "all_to_all":
            if algo in ("auto", "hierarchical"):
                c = hier_cost()
            elif algo == "tree":
                c = legacy("tree")
            else:
                c = legacy("ring")
        elif algo == "hierarchical":
            c = hier_cost()
        elif algo == "ring":
            c = pick([("ring", p) for p in protos])
        elif algo == "tree":
            c = pick([("tree", p) for p in protos]) if op == "all_reduce" else legacy("tree")
        elif algo in ("nvls", "nvls_tree"):
            c = pick([("nvls", "Simple"), ("nvls_tree", "Simple")])
        else:  # auto
            keys = [(a, p) for a in ("ring", "tree") for p in protos]
            if protocol in (None, "Simple"):
                keys += [("nvls", "Simple"), ("nvls_tree", "Simple")]
            c = pick(keys)
    choice = np.asarray(c.choice, dtype=object)
    out = [validate.scalar_or_array(np.asarray(x, dtype=float) * np.ones_like(s), scalar) for x in
           (c.time_s, c.latency_s, c.bandwidth_s, c.intra_s, c.inter_s)]
    return comm.CollectiveCost(*out, choice.reshape(()).item() if scalar else choice)


def _two_level(op, s, n, q, intra_bw, net, a_net, a_nvl, inter_algo, pipelined, inside, ring, nvls_lat=None):
    """comm's hierarchical scheme with q ranks per domain (q = 1: flat across nodes on one rail).

    ``nvls_lat`` (array, 0 where the domain has no NVLink SHARP): an all_reduce's in-domain phase on an
    NVLS domain is one NVLS operation (NCCL 2.30.7 latency 25 us) instead of 2(q-1) NVLink ring hops,
    so a bigger NVLS domain never adds latency."""
    out = {k: np.zeros_like(s) for k in ("t", "l", "b", "i", "o")}
    use_nvls = np.zeros(s.shape, bool) if nvls_lat is None or op != "all_reduce" else (np.asarray(nvls_lat) > 0) & (q >= 2)
    for qv in np.unique(q):
        sel = q == qv
        c = _hier_one(op, s[sel], n[sel], int(qv), intra_bw[sel], net[sel], a_net, a_nvl, inter_algo, pipelined,
                      None if nvls_lat is None else np.where(use_nvls[sel], np.broadcast_to(nvls_lat, s.shape)[sel], -1.0))
        for k, v in zip("tlbio", c):
            out[k][sel] = v
    # a collective inside one domain is a plain NVLink ring (one NVLS operation on an NVLS domain)
    rc = comm.collective_cost(op, s, n.astype(np.int64), np.where(op == "all_reduce", intra_bw, ring), a_nvl, "ring")
    r_lat, r_t = np.asarray(rc.latency_s, float), np.asarray(rc.time_s, float)
    if np.any(use_nvls):
        nl = np.broadcast_to(np.asarray(nvls_lat, float), s.shape)
        r_lat = np.where(use_nvls, nl, r_lat)
        r_t = np.where(use_nvls, nl + np.asarray(rc.bandwidth_s, float), r_t)
    t = np.where(inside, r_t, out["t"])
    return comm.CollectiveCost(t, np.where(inside, r_lat, out["l"]), np.where(inside, rc.bandwidth_s, out["b"]),
                               np.where(inside, r_t, out["i"]), np.where(inside, 0.0, out["o"]))


_FREE_GBS = 1e30  # a link so fast that its term vanishes (to split comm's two-level cost into its levels)


def _hier_one(op, s, n, q, intra_bw, net, a_net, a_nvl, inter_algo, pipelined, nvls_lat=None):
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
    if nvls_lat is not None:  # the in-domain reduce-scatter + all-gather as one NVLS operation
        lat_in = np.where(np.asarray(nvls_lat) >= 0, nvls_lat, lat_in)
    bw_net, lat_net = np.asarray(c_net.bandwidth_s), np.asarray(c_net.latency_s)
    lat = lat_in + lat_net
    bw = np.maximum(bw_in, bw_net) if pipelined else bw_in + bw_net
    t = lat + bw
    return t, lat, bw, lat_in + bw_in, lat_net + bw_net


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
    nic_efficiency: achievable fraction of the NIC line rate over RDMA (0.96).
    net_latency_s, scaleup_latency_s: per-hop latency of NCCL's Simple protocol over the network and
        over NVLink (NCCL 2.30.7: 14 us and 3.4 us); NCCL's other per-(algorithm, protocol) hop latencies
        of that link are scaled by the same factor (override / default).
    transport: 'rdma' (InfiniBand / RoCE with GPUDirect) or 'socket' (NCCL over TCP).
    socket_streams_per_nic: TCP streams per NIC on the socket transport (None: NCCL's default 2).
    ecmp_flows_per_nic: flows each NIC hashes onto the spine uplinks (an Ethernet/RoCE fabric with
        ECMP; None: balanced routing, no collision loss). Needs ``nodes_per_leaf``.
    cpu_vendor: 'intel' or 'amd' host CPUs (NCCL's LL cap and network overhead differ).
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
    net_latency_s: float = _hw("net", "ring", "Simple")
    scaleup_latency_s: float = _hw("nvlink", "ring", "Simple")
    name: str = "custom"
    source: str = field(default="", compare=False, repr=False)
    transport: str = "rdma"
    socket_streams_per_nic: int | None = None
    ecmp_flows_per_nic: float | None = None
    cpu_vendor: str = "intel"

    def __post_init__(self):
        if not isinstance(self.gpu, str):
            raise TypeError(f"gpu must be a catalog GPU name (str); got {self.gpu!r}")
        if self.gpu:
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
        validate.choice("transport", self.transport, TRANSPORTS)
        validate.choice("cpu_vendor", self.cpu_vendor, CPU_VENDORS)
        if self.socket_streams_per_nic is not None:
            validate.integer("socket_streams_per_nic", self.socket_streams_per_nic, lo=1, hi=64 * 16)
        if self.ecmp_flows_per_nic is not None:
            validate.positive("ecmp_flows_per_nic", self.ecmp_flows_per_nic)
            if self.nodes_per_leaf is None:
                raise ValueError("ecmp_flows_per_nic needs nodes_per_leaf (the servers under one leaf switch, whose "
                                 "uplinks the flows are hashed onto)")
        d, g = self.scaleup_domain_gpus, self.gpus_per_node
        if not (d <= g and g % d == 0) and not (d > g and d % g == 0):
            raise ValueError(f"scaleup_domain_gpus ({d}) must divide gpus_per_node ({g}) or be a multiple of it")
        if d > g and (self.n_nodes * g) % d != 0 and self.n_nodes * g > d:
            raise ValueError(f"n_nodes x gpus_per_node ({self.n_nodes * g}) must fill whole NVLink domains of {d} GPUs")

    # -- constructors ----------------------------------------------------------------------
    @classmethod
    def system(cls, name: str, n_nodes: int = 1, *, transport: str = "rdma", **overrides) -> "Cluster":
        """A catalog system (``systems()``: DGX-H100, DGX-H200, DGX-B200, DGX-A100, HGX-H800,
        HGX-A800, GB200-NVL72, HGX-H20; aliases such as 'HGX H100' work) with ``n_nodes`` nodes.
        For GB200-NVL72 a node is a 4-GPU compute tray; 18 trays make one 72-GPU NVLink domain.
        ``transport='socket'`` models NCCL over TCP on the same NICs (e.g. an IB fallback)."""
        key, e = _system_entry(name)
        g = gpu_spec(e["gpu"])
        kw = dict(gpu=g.name, gpus_per_node=e["gpus_per_node"], n_nodes=n_nodes, scaleup_gbs=g.nvlink_gbs / 2.0,
                  scaleup_domain_gpus=e["scaleup_domain_gpus"], nvls=bool(e["nvls"]), nics_per_node=e["nics_per_node"],
                  nic_gbps=float(e.get("nic_gbps", nic_spec(e["nic"]).port_gbps)),
                  scaleup_ring_busbw_gbs=float(e["scaleup_ring_busbw_gbs"]),
                  scaleup_nvls_busbw_gbs=float(e["scaleup_nvls_busbw_gbs"]), name=key, transport=transport,
                  source=f"{e['source']}. Achievable busbw: {e['busbw_source']}")
        kw.update(overrides)
        return cls(**kw)

    @classmethod
    def scenario(cls, name: str, n_nodes: int | None = None, **overrides) -> "Cluster":
        """A named cluster of ``labutil/data/scenarios.toml`` (``labutil.scenarios.cluster_names()``),
        e.g. 'one-25gbe-port-per-server' (seed 003: 8x H800 per server, one 25 GbE port per server)."""
        e = scenarios.cluster_entry(name)
        kw = {k: v for k, v in e.items() if k not in ("key", "aliases", "system", "n_nodes", "description")}
        kw.update(overrides)
        nodes = e.get("n_nodes", 1) if n_nodes is None else n_nodes
        c = cls.system(e["system"], n_nodes=nodes, **{k: v for k, v in kw.items() if k != "name"})
        return replace(c, name=kw.get("name", e["key"]))

    @classmethod
    def seed003(cls, n_nodes: int = 4) -> "Cluster":
        """Seed 003's scenario (误区一), ``Cluster.scenario("one-25gbe-port-per-server")``: servers of
        8x H800 with ONE 25 GbE port per server (NCCL over RoCE, 0.96 of the line rate); 4 servers."""
        return cls.scenario(scenarios.SEED003, n_nodes=n_nodes)

    @classmethod
    def for_gpu(cls, gpu: str, n_nodes: int = 1, *, transport: str = "rdma", **overrides) -> "Cluster":
        """The catalog system built on ``gpu`` (e.g. 'H800-SXM' -> HGX-H800, 'H100' -> DGX-H100,
        'GB200' -> GB200-NVL72 with its 72-GPU NVLink domain) with ``n_nodes`` nodes and any field
        overridden (e.g. ``nic_gbps=25, nics_per_node=1``). A GPU of no catalog system gets an 8-GPU
        node on its own NVLink (ring at 370/450 of the line rate, no NVLS) and one 400G NIC per GPU
        unless overridden."""
        g = gpu_spec(gpu)
        for key, e in _data()["systems"].items():
            if e["gpu"] == g.name:
                return cls.system(key, n_nodes, transport=transport, **overrides)
        if g.nvlink_gbs <= 0:
            raise ValueError(f"gpu {g.name!r} has no NVLink-class link in the catalog; build the Cluster by hand")
        kw = dict(gpu=g.name, gpus_per_node=8, n_nodes=n_nodes, scaleup_gbs=g.nvlink_gbs / 2.0, scaleup_domain_gpus=8,
                  nvls=False, nics_per_node=8, nic_gbps=400.0, name=f"8x {g.name} (generic node)", transport=transport)
        kw.update(overrides)
        return cls(**kw)

    @classmethod
    def from_links(cls, *, nic_gbps, nics_per_node: int = 1, gpus_per_node: int = 8, scaleup_gbs, n_nodes: int = 1,
                   gpu: str = "", nvls: bool = False, transport: str = "rdma", **kw) -> "Cluster":
        """A cluster given only by its link rates (NIC line rate, NVLink per-direction line rate)."""
        return cls(gpu=gpu, gpus_per_node=gpus_per_node, n_nodes=n_nodes, scaleup_gbs=scaleup_gbs,
                   scaleup_domain_gpus=kw.pop("scaleup_domain_gpus", gpus_per_node), nvls=nvls,
                   nics_per_node=nics_per_node, nic_gbps=nic_gbps, transport=transport, **kw)

    def with_nodes(self, n_nodes: int) -> "Cluster":
        """The same cluster with ``n_nodes`` nodes."""
        return replace(self, n_nodes=n_nodes)

    def with_gpus(self, n_gpus: int) -> "Cluster":
        """The same cluster resized to hold ``n_gpus`` GPUs (whole nodes, whole NVLink domains)."""
        n = validate.integer("n_gpus", n_gpus, lo=1)
        nodes = -(-n // self.gpus_per_node)
        per_domain = max(1, self.scaleup_domain_gpus // self.gpus_per_node)
        if per_domain > 1 and nodes * self.gpus_per_node > self.scaleup_domain_gpus:
            nodes = -(-nodes // per_domain) * per_domain
        return replace(self, n_nodes=max(nodes, 1))

    # -- derived quantities (per GPU / per NIC / per node in the names) --------------------
    @property
    def n_gpus(self) -> int:
        return self.gpus_per_node * self.n_nodes

    @property
    def arch(self) -> str:
        """GPU generation ('Hopper', ...; 'Hopper' for a link-only cluster)."""
        return gpu_spec(self.gpu).arch if self.gpu else "Hopper"

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

    def _nic_gbs(self, nic_gbps):
        """Achievable NCCL GB/s of one NIC of ``nic_gbps`` on this cluster's transport."""
        if self.transport == "socket":
            streams = SOCKET_STREAMS_PER_NIC if self.socket_streams_per_nic is None else self.socket_streams_per_nic
            return socket_nic_gbs(nic_gbps, streams)
        return validate.scalar_or_array(np.asarray(nic_gbps, dtype=float) / BITS_PER_BYTE * self.nic_efficiency,
                                        np.ndim(nic_gbps) == 0)

    @property
    def nic_gbs(self) -> float:
        """Achievable NCCL bandwidth of one NIC, GB/s (RDMA: line / 8 x nic_efficiency; sockets:
        ``socket_nic_gbs``)."""
        return float(self._nic_gbs(self.nic_gbps))

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

    def _rail_rate(self, nic_gbps=None, slow_rails=0, slow_rail_gbps=None):
        """Per-NIC line rate the rings run at: NCCL splits the data evenly over one ring per rail and
        the collective ends with the slowest ring, so one slow rail sets the pace of all."""
        rate = self.nic_gbps if nic_gbps is None else validate.positive("nic_gbps", nic_gbps)
        k = validate.integer("slow_rails", slow_rails, lo=0, hi=self.nics_per_node)
        if k:
            if slow_rail_gbps is None:
                raise ValueError("slow_rail_gbps (the degraded rails' line rate, Gbit/s) is required with slow_rails > 0")
            rate = np.minimum(np.asarray(rate, dtype=float), validate.positive("slow_rail_gbps", slow_rail_gbps))
        return rate

    def _net_per_gpu(self, r_arr, q, nic_gbps=None):
        """Per-GPU network share for a collective of r ranks, q per domain (oversubscription and ECMP applied)."""
        nodes = np.asarray(r_arr, dtype=float) / np.minimum(np.asarray(q, dtype=float), self.gpus_per_node)
        rate = self.nic_gbps if nic_gbps is None else nic_gbps
        per_nic = np.asarray(self._nic_gbs(rate), dtype=float)
        b = self.nics_per_node * per_nic / self.gpus_per_node
        nodes, b = np.broadcast_arrays(nodes, b)
        if self.nodes_per_leaf is not None:
            cross = nodes > self.nodes_per_leaf
            if self.oversubscription > 1:
                b = np.where(cross, b / self.oversubscription, b)
            if self.ecmp_flows_per_nic is not None:
                b = np.where(cross, b * ecmp_efficiency(self.ecmp_flows_per_nic, self.nodes_per_leaf), b)
        return b

    def collective_cost(self, op: str, size_bytes, ranks=None, algo: str = "auto", *, ranks_per_node=None,
                        pipelined: bool = True, protocol: str | None = None, nic_gbps=None) -> comm.CollectiveCost:
        """Cost of one collective (``comm.CollectiveCost``: time, latency, bandwidth, NVLink and network
        parts, and ``choice``: the NCCL 'algorithm/protocol' the model picks).

        ranks: ranks of the collective (default: every GPU). ranks_per_node: how many of them share a
        node (default: packed, min(ranks, GPUs per domain)); 1 for a DP group strided across TP/PP groups.
        algo: one of ``ALGOS`` ('ring' = NCCL_ALGO=Ring: the best ring protocol); protocol: force
        one of ``PROTOCOLS`` (NCCL_PROTO). nic_gbps: sweep the NIC line rate (array).
        Vectorised over size_bytes, ranks and nic_gbps.
        """
        _, r_arr, q = self._ranks(ranks, ranks_per_node)
        return collective_cost_arrays(op, size_bytes, r_arr, ranks_per_domain=q, ring_busbw_gbs=self.ring_busbw_gbs,
                                      nvls_busbw_gbs=self.nvls_busbw_gbs,
                                      net_gbs_per_gpu=self._net_per_gpu(r_arr, q, nic_gbps),
                                      net_latency_s=self.net_latency_s, scaleup_latency_s=self.scaleup_latency_s,
                                      algo=algo, pipelined=pipelined, protocol=protocol, arch=self.arch,
                                      cpu_vendor=self.cpu_vendor, transport=self.transport)

    def collective_time_s(self, op: str, size_bytes, ranks=None, algo: str = "auto", *, ranks_per_node=None,
                          protocol: str | None = None, nic_gbps=None):
        """Time (s) of one collective: THE collective-time model of the course (see module docstring)."""
        return self.collective_cost(op, size_bytes, ranks, algo, ranks_per_node=ranks_per_node, protocol=protocol,
                                    nic_gbps=nic_gbps).time_s

    def algorithm(self, op: str, size_bytes, ranks=None, algo: str = "auto", *, ranks_per_node=None,
                  protocol: str | None = None):
        """The 'algorithm/protocol' the model picks for each size (what NCCL_DEBUG=INFO would print)."""
        return self.collective_cost(op, size_bytes, ranks, algo, ranks_per_node=ranks_per_node,
                                    protocol=protocol).choice

    def busbw_gbs(self, op: str, size_bytes, ranks=None, algo: str = "auto", *, ranks_per_node=None,
                  protocol: str | None = None, nic_gbps=None):
        """busbw (GB/s) nccl-tests would print for the modelled time at ``size_bytes`` (0 where S = 0)."""
        r = self.n_gpus if ranks is None else ranks
        t = np.asarray(self.collective_time_s(op, size_bytes, r, algo, ranks_per_node=ranks_per_node,
                                              protocol=protocol, nic_gbps=nic_gbps), dtype=float)
        s = np.broadcast_to(np.asarray(size_bytes, dtype=float), t.shape)
        alg = np.divide(s, t, out=np.zeros_like(t), where=t > 0) / BYTES_PER_GB
        out = alg * np.asarray(comm.busbw_factor(op, np.broadcast_to(np.asarray(r), t.shape)), dtype=float)
        return validate.scalar_or_array(out, validate.is_scalar(size_bytes, r, nic_gbps if nic_gbps is not None else 0))

    def expected_busbw_gbs(self, op: str = "all_reduce", ranks=None, *, ranks_per_node=None, algo: str | None = None,
                           protocol: str | None = None, slow_rails: int = 0, slow_rail_gbps=None, nic_gbps=None):
        """busbw (GB/s) an nccl-tests run of ``ranks`` GPUs should reach at large messages.

        The model's large-message limit (latency terms dropped). ``algo=None`` (default): the course's
        acceptance run, NCCL's own choice inside one NVLink domain and ``NCCL_ALGO=Ring`` across
        domains (see ``acceptance_busbw_gbs``); ``algo='auto'``: NCCL's own choice everywhere;
        ``algo='ring'`` / 'tree' / 'nvls' / 'nvls_tree': forced (``NCCL_ALGO=...``). NVLS / NVLink ring
        inside one domain; across domains min(NVLink ring, node NICs x achievable rate) for the ring,
        NVLS-Tree and Tree as in the module docstring. E.g. 8x H100 all_reduce 480 (NVLS; ring 370);
        2x DGX H100 370 (ring), 480 with ``algo='auto'`` (NVLS-Tree, NCCL's default on 2 nodes); 8x
        A100 230. ``slow_rails`` of the node's NICs trained down to ``slow_rail_gbps``: every ring runs
        at the slowest rail.
        """
        r = self.n_gpus if ranks is None else ranks
        _, r_arr, q = self._ranks(r, ranks_per_node)
        if algo is None:  # acceptance: NCCL's choice inside a domain, NCCL_ALGO=Ring across domains
            inside = np.asarray(r_arr) == np.asarray(q)
            kw = dict(ranks_per_node=ranks_per_node, protocol=protocol, slow_rails=slow_rails,
                      slow_rail_gbps=slow_rail_gbps, nic_gbps=nic_gbps)
            if np.all(inside) or np.all(~inside):
                return self.expected_busbw_gbs(op, r, algo="auto" if np.all(inside) else "ring", **kw)
            return np.where(inside, self.expected_busbw_gbs(op, r, algo="auto", **kw),
                            self.expected_busbw_gbs(op, r, algo="ring", **kw))
        rate = self._rail_rate(nic_gbps, slow_rails, slow_rail_gbps)
        s = 2.0 ** 40
        c = collective_cost_arrays(op, s, r_arr, ranks_per_domain=q, ring_busbw_gbs=self.ring_busbw_gbs,
                                   nvls_busbw_gbs=self.nvls_busbw_gbs, net_gbs_per_gpu=self._net_per_gpu(r_arr, q, rate),
                                   algo=algo, protocol=protocol, include_latency=False, arch=self.arch,
                                   cpu_vendor=self.cpu_vendor, transport=self.transport)
        t = np.asarray(c.time_s, dtype=float)
        f = np.asarray(comm.busbw_factor(op, np.broadcast_to(r_arr, t.shape)), dtype=float)
        out = np.divide(s / BYTES_PER_GB * f, t, out=np.full_like(t, np.inf), where=t > 0)
        if np.any(~np.isfinite(out)):
            raise ValueError("expected busbw is undefined for a 1-rank collective (nothing is sent); use ranks >= 2")
        return validate.scalar_or_array(out, np.ndim(r) == 0 and np.ndim(rate) == 0)

    def acceptance_busbw_gbs(self, op: str = "all_reduce", ranks=None, *, ranks_per_node=None, slow_rails: int = 0,
                             slow_rail_gbps=None, nic_gbps=None):
        """The expected busbw of the course's acceptance run, the number 80 % / 60 % thresholds apply to.

        Inside one NVLink domain: NCCL's default (8x H100 all_reduce: NVLS 480 GB/s). Across domains:
        the run uses ``NCCL_ALGO=Ring``, so the expectation is the ring (2x DGX H100: 370 GB/s):
        NVLS-Tree / Tree on 2 nodes send half the bytes over the network and would hide a slow rail
        (github.com/NVIDIA/nccl-tests/issues/196, github.com/NVIDIA/nccl/issues/1031).
        """
        return self.expected_busbw_gbs(op, ranks, ranks_per_node=ranks_per_node, algo=None,
                                       slow_rails=slow_rails, slow_rail_gbps=slow_rail_gbps, nic_gbps=nic_gbps)

    def line_bound_gbs(self, ranks=None, *, ranks_per_node=None, slow_rails: int = 0, slow_rail_gbps=None,
                       nic_gbps=None):
        """Line-rate bound of the ring busbw (GB/s): the reference line, not an expectation.

        Inside one NVLink domain: the NVLink per-direction line rate (H100: 450). Across domains: one
        ring per rail, so min(NVLink line, q x per-GPU NIC line share) with q ranks per domain (8 x 400G
        for 8 GPUs -> 400 GB/s; one 25 GbE port for 8 GPUs -> 3.125 GB/s). Degraded rails as in
        ``expected_busbw_gbs``. NVLS-Tree and Tree on 2 nodes can print more than this bound.
        """
        r = self.n_gpus if ranks is None else ranks
        _, r_arr, q = self._ranks(r, ranks_per_node)
        rate = np.asarray(self._rail_rate(nic_gbps, slow_rails, slow_rail_gbps), dtype=float)
        per_gpu_line = self.nics_per_node * rate / BITS_PER_BYTE / self.gpus_per_node
        inside = np.asarray(r_arr) == np.asarray(q)
        out = np.where(inside, self.scaleup_gbs, np.minimum(self.scaleup_gbs, np.asarray(q) * per_gpu_line))
        return validate.scalar_or_array(out, np.ndim(r) == 0 and np.ndim(rate) == 0)

    def dp_sync_time_s(self, params, dp_ranks=None, bytes_per_grad=2, *, bucket_bytes=None, ranks_per_node=None,
                       algo: str = "auto", nic_gbps=None, pipelined: bool = True, protocol: str | None = None):
        """Data-parallel gradient all-reduce time per optimizer step (s): THE DP-sync path of the course.

        One all_reduce of params x bytes_per_grad over ``dp_ranks`` GPUs (default: all). With
        ``bucket_bytes`` (PyTorch DDP: 25 MiB, ``comm.DDP_BUCKET_BYTES``) the gradient goes in
        ceil(S / bucket) equal buckets, each one collective timed on its own (NCCL picks the algorithm
        and protocol per bucket; latency paid per bucket). ZeRO-1/2 (and FSDP SHARD_GRAD_OP) move the same
        bytes (reduce-scatter + all-gather); ZeRO-3 / FSDP FULL_SHARD move 1.5x (the parameters are
        all-gathered again in the backward pass, ZeRO paper §7.2). ``labutil.dp.dp_comm_time_s`` and the explorers call this.
        nic_gbps: sweep the NIC line rate; pipelined: overlap the levels of algo='hierarchical';
        protocol: force one protocol (NCCL_PROTO).
        Vectorised over params, dp_ranks and nic_gbps.
        """
        s = np.asarray(comm.gradient_bytes(params, bytes_per_grad), dtype=float)
        scalar = validate.is_scalar(params, dp_ranks if dp_ranks is not None else 1, nic_gbps if nic_gbps is not None else 0)
        nb = np.ones_like(s) if bucket_bytes is None else np.ceil(s / validate.positive("bucket_bytes", bucket_bytes))
        t = np.asarray(self.collective_cost("all_reduce", s / nb, dp_ranks, algo, ranks_per_node=ranks_per_node,
                                            nic_gbps=nic_gbps, pipelined=pipelined, protocol=protocol).time_s)
        return validate.scalar_or_array(nb * t, scalar)

    def p2p_time_s(self, size_bytes, *, cross_node: bool = True):
        """Point-to-point send of ``size_bytes`` (pipeline-parallel activations): one α + S / B, with
        B the GPU's network share (one rail) across nodes or the NVLink ring busbw inside a domain."""
        s = np.asarray(validate.positive("size_bytes", size_bytes, allow_zero=True), dtype=float)
        if cross_node:
            t = self.net_latency_s + s / (self.net_gbs_per_gpu * BYTES_PER_GB)
        else:
            t = self.scaleup_latency_s + s / (self.ring_busbw_gbs * BYTES_PER_GB)
        return validate.scalar_or_array(t, np.ndim(size_bytes) == 0)

    # -- expert parallelism (MoE dispatch / combine; used by labutil.steptime; added by the "train" work) --
    def all_to_all_time_s(self, size_bytes, ranks, *, ranks_per_node=None):
        """Time (s) of one all-to-all over ``ranks`` GPUs, ``size_bytes`` being what each rank holds
        (nccl-tests ``alltoall_perf`` size): the dispatch or the combine of a mixture-of-experts layer.

        Each rank keeps 1/ranks of its buffer and sends the rest, (ranks−1)/ranks of it, one piece to every
        other rank (GShard, Lepikhin et al. 2020 §2.2; Megatron-Core's token dispatcher); the collective
        model of this class times it (``collective_time_s("all_to_all", ...)``: inside an NVLink domain a
        ring over NVLink, across domains the two-level scheme). Vectorised; 0 where ranks == 1.
        """
        r = np.asarray(validate.integer("ranks", ranks, lo=1))
        if np.all(r == 1):
            return comm._ret(np.zeros(np.broadcast(np.asarray(size_bytes, float), r).shape), np.ndim(size_bytes) == 0
                             and r.ndim == 0)
        return self.collective_time_s("all_to_all", size_bytes, ranks, ranks_per_node=ranks_per_node)

    def expert_all_to_all_time_s(self, tokens, hidden, top_k, ep, *, bytes_per_elem=2, ranks_per_node=None):
        """One MoE dispatch (or combine) of ``tokens`` tokens per GPU to their ``top_k`` experts spread over
        ``ep`` expert-parallel ranks: each rank's buffer is tokens·top_k·hidden·bytes_per_elem
        (:meth:`all_to_all_time_s`). A training step runs two per MoE layer in the forward pass and two in
        the backward (four with full recomputation's second forward: six)."""
        t = validate.positive("tokens", tokens)
        h = validate.positive("hidden", hidden)
        k = validate.positive("top_k", top_k)
        b = validate.positive("bytes_per_elem", bytes_per_elem)
        size = np.asarray(t, float) * np.asarray(k, float) * np.asarray(h, float) * np.asarray(b, float)
        return self.all_to_all_time_s(comm._ret(size, np.ndim(size) == 0), ep, ranks_per_node=ranks_per_node)

    def describe(self) -> str:
        """One line for a chapter: the cluster in words with its per-GPU / per-node figures."""
        g = self.gpu or "GPU"
        dom = (f"NVLink domain {self.scaleup_domain_gpus} GPUs" if self.scaleup_domain_gpus != self.gpus_per_node
               else "NVLink in the node")
        via = "" if self.transport == "rdma" else ", TCP sockets"
        return (f"{self.n_nodes} x {self.gpus_per_node} {g} = {self.n_gpus} GPUs; {dom} "
                f"({self.scaleup_gbs:g} GB/s per GPU per direction, ring {self.ring_busbw_gbs:g}"
                + (f", NVLS {self.nvls_busbw_gbs:g}" if self.nvls else "") + " GB/s busbw); "
                f"{self.nics_per_node} x {self.nic_gbps:g} Gb/s NIC per node{via} "
                f"(~{self.node_net_gbs:.4g} GB/s per node, {self.net_gbs_per_gpu:.3g} GB/s per GPU)")


def tuner_node(name: str = "DGX-A100") -> dict:
    """A catalog node as NCCL's tuner sees it (ch15): ``n_channels`` ring channels and a per-channel
    speed such that channels x speed = the node's measured NVLink ring busbw (``systems.toml``:
    DGX-A100 has 24 channels, nccl-tests#100, and 230 GB/s, nccl-tests#149 -> 9.58 GB/s per channel),
    and ``inter_bus_gbs``: what its compute NICs carry per GPU across nodes (``node_net_gbs``: DGX A100
    8 x 200G HDR x 0.96 = 192 GB/s), the inter-node graph NCCL's tuner uses on more than two nodes."""
    key, e = _system_entry(name)
    if "nccl_channels" not in e:
        raise KeyError(f"system {key!r} has no nccl_channels in labutil/data/systems.toml")
    nch = int(e["nccl_channels"])
    bus = float(e["scaleup_ring_busbw_gbs"])
    return {"system": key, "gpus_per_node": int(e["gpus_per_node"]), "n_channels": nch, "speed_gbs": bus / nch,
            "busbw_gbs": bus, "inter_bus_gbs": float(Cluster.system(key, 2).node_net_gbs)}


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
