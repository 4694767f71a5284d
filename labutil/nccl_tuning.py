"""NCCL's own cost model: which algorithm (Ring / Tree) and protocol (LL / LL128 / Simple) it
picks for an all-reduce of a given size, and why (ch15 NCCL深入).

``allreduce_table`` is a transcription of NCCL's tuner, ``src/graph/tuning.cc`` (``ncclTopoTuneModel``
and ``ncclTopoGetAlgoTime``) of NCCL 2.7.5 (NVIDIA/nccl commit 01afd20, tag v2.7.5-1, 2020-06-22),
for all-reduce -- the smallest tuner that still shows every idea:

- every (algorithm, protocol) pair gets a bandwidth and a latency; the predicted time is
  ``t_us = latency_us + bytes / (1000 · algbw_GBps)``; NCCL runs the pair with the smallest t;
- bus bandwidth = nChannels × per-channel speed -- the intra-node graph's speed (``speedIntra``) on one
  or two nodes, the inter-node graph's (``speedInter``, limited by the NICs) on more than two
  (tuning.cc: ``speed = nNodes <= 2 ? speedIntra : speedInter``) -- then per pair (tuning.cc "model refinements"):
  Ring/LL × 1/4; Ring/LL128 × 0.92 (0.7 when < 2 ranks per node), capped at 16.7 GB/s per
  channel (``ll128MaxBwPerCh`` for all-reduce); Tree: min(busBw × 0.9, 80 GB/s for > 2 nodes,
  110 GB/s otherwise); Tree/LL × 1/3.8; Tree/LL128 × 7/9 (one node) or 0.915, capped at
  16.7 × 7/9 GB/s per channel; algbw = busBw × n / (2(n-1)) for Ring and busBw × 0.5 for Tree;
- latency (µs) = baseLat[algo][proto] + hardware latencies ``hwLat`` per step: Ring adds
  (2(n-1) - 2(nodes-1)) intra-node steps and 2(nodes-1) network steps; Tree adds
  2·((ppn-1)·intra + log2(nodes)·net). LL's intra-node latency × 1.8 on multi-node jobs. Tree
  bandwidth is scaled by ``treeCorrectionFactor`` (sizes 64 B … 128 MiB) and multi-node Ring/Simple
  latency × 1.9 above nRanks/16 × 64 KiB ("plateau effect of ring").

Later NCCL versions add CollNet (SHARP in-network reduction), NVLS and NVLSTree (NVLink SHARP on
NVSwitch systems, Hopper+) and PAT, and retune the constants (the NET Ring/Simple per-hop latency
is 9.6 us in 2.7-2.11, 28 in 2.12, 9.6 in 2.17 and 14.0 from 2.18.1 to 2.30.7); the structure --
latency + size/bandwidth per (algorithm, protocol), minimum wins -- is the same. ``CURRENT`` holds
the constants of NCCL 2.30.7 (``labutil/data/nccl_tuning.toml``); ``labutil.cluster`` times every
collective of the course with them. The numbers reproduce a tuner, not a measurement: compare with
``NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING`` on your NCCL version, which prints its own table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import data_files, validate

__all__ = ["ALGOS", "PROTOS", "HW", "BASE_LAT_US", "HW_LAT_US", "LL128_MAX_BW_PER_CH_ALLREDUCE", "TREE_CORRECTION",
           "TuningTable", "allreduce_table"]

ALGOS = ("tree", "ring")
PROTOS = ("LL", "LL128", "Simple")
HW = ("nvlink", "pci")


def _data() -> dict:
    return data_files.load("nccl_tuning.toml")


def constants(version: str = "2.30.7") -> dict:
    """The tuner constants of one NCCL version ('2.7.5' or '2.30.7'), as stored in
    ``labutil/data/nccl_tuning.toml`` (with the source of each table)."""
    table = {e["version"]: e for e in _data().values()}
    if version not in table:
        raise validate.unknown_name("NCCL tuning version", version, table)
    return table[version]


#: The constants of the NCCL release the course's cluster model follows (2.30.7, 2026).
CURRENT = constants("2.30.7")
V2_7_5 = constants("2.7.5")

# NCCL 2.7.5 tables (the ones ``allreduce_table`` transcribes): baseLat[algo][proto], hwLat[hw][algo][proto].
BASE_LAT_US = {a: tuple(V2_7_5["base_lat_us"][a]) for a in ALGOS}
HW_LAT_US = {hw: {a: tuple(v[a]) for a in ALGOS} for hw, v in V2_7_5["hw_lat_us"].items()}
LL128_MAX_BW_PER_CH_ALLREDUCE = float(V2_7_5["ll128_max_bw_per_ch_allreduce_gbs"])  # GB/s, ll128MaxBwPerCh
# treeCorrectionFactor[proto][log2(bytes/64)], 64 B .. 128 MiB
TREE_CORRECTION = {p: tuple(V2_7_5["tree_correction"][p]) for p in PROTOS}


@dataclass(frozen=True)
class TuningTable:
    """Per (algo, proto): latency_us, algbw_gbs (GB/s), and predicted time_us over ``size_bytes``."""

    size_bytes: np.ndarray
    latency_us: dict
    algbw_gbs: dict
    time_us: dict
    choice: list  # per size: "ring/Simple" etc. (NCCL's argmin)
    bus_gbs: float = 0.0  # channels x speed, capped by max_bus_gbs (and by inter_bus_gbs on > 2 nodes)
    capped: bool = False  # True when max_bus_gbs cut channels x speed
    inter_limited: bool = False  # True when the inter-node graph (NICs) set the bus bandwidth (> 2 nodes)
    channels_bus_gbs: float = 0.0  # n_channels x speed_gbs as given, before any cap

    @property
    def best_time_us(self) -> np.ndarray:
        return np.min(np.vstack([v for v in self.time_us.values()]), axis=0)

    def busbw_gbs(self, n: int) -> np.ndarray:
        """busbw of the chosen pair, as nccl-tests would print it (algbw × 2(n-1)/n)."""
        return self.size_bytes / (self.best_time_us * 1e-6) / 1e9 * 2 * (n - 1) / n


def allreduce_table(size_bytes, n_ranks: int, n_nodes: int = 1, *, n_channels: int = 16,
                    speed_gbs: float = 20.0, intra: str = "nvlink", enabled: tuple[str, ...] | None = None,
                    max_bus_gbs: float | None = None, inter_bus_gbs: float | None = None) -> TuningTable:
    """NCCL 2.7.5's predicted all-reduce time for every (algorithm, protocol) pair.

    size_bytes: message size(s) in bytes (array for a sweep). n_ranks: GPUs; n_nodes: servers
    (n_ranks must be a multiple). n_channels × speed_gbs is the bus bandwidth NCCL's topology search
    found (per rank, GB/s). intra: 'nvlink' or 'pci' inside a node. enabled: subset such as
    ('ring/Simple', 'tree/LL') — what NCCL_ALGO / NCCL_PROTO would leave (default: all).
    max_bus_gbs: the intra-node link's achievable bandwidth per GPU; NCCL's topology search never
    finds more channels x speed than the links carry, so the bus bandwidth is capped there.
    inter_bus_gbs: channels x speed of the inter-node graph (``nChannels x speedInter``: what the
    node's NICs carry per GPU, e.g. 8 x 24 GB/s = 192 for a DGX A100 with 8 HDR NICs). NCCL 2.7.5
    uses it instead of the intra-node figure on more than two nodes (tuning.cc line 108:
    ``speed = nNodes <= 2 ? speedIntra : speedInter``); None: the same as the intra-node figure.
    """
    s = np.atleast_1d(np.asarray(validate.positive("size_bytes", size_bytes), dtype=float))
    n = validate.integer("n_ranks", n_ranks, lo=2)
    nodes = validate.integer("n_nodes", n_nodes, lo=1, hi=n)
    if n % nodes:
        raise ValueError(f"n_ranks must be a multiple of n_nodes; got n_ranks={n}, n_nodes={nodes}")
    nch = validate.integer("n_channels", n_channels, lo=1, hi=64)
    speed = validate.positive("speed_gbs", speed_gbs)
    validate.choice("intra", intra, HW)
    pairs = [f"{a}/{p}" for a in ALGOS for p in PROTOS]
    if enabled is None:
        enabled = tuple(pairs)
    for e in enabled:
        validate.choice("enabled", e, pairs)
    if not enabled:
        raise ValueError(f"enabled must name at least one of {pairs}")
    bus0 = nch * speed
    cap = None if max_bus_gbs is None else validate.positive("max_bus_gbs", max_bus_gbs)
    capped = cap is not None and bus0 > cap
    bus_total = min(bus0, cap) if cap is not None else bus0
    inter_limited = False
    if inter_bus_gbs is not None:
        inter = validate.positive("inter_bus_gbs", inter_bus_gbs)
        if nodes > 2 and inter < bus_total:
            bus_total, inter_limited = inter, True
    ppn = n / nodes
    nsteps, inter_steps = 2 * (n - 1), 2 * (nodes - 1)
    lat, bw, t = {}, {}, {}
    log_size = np.clip(np.floor(np.log2(np.maximum(s / 64.0, 1.0))).astype(int), 0, None)
    for a in ALGOS:
        for i, p in enumerate(PROTOS):
            bus = bus_total
            if a == "ring" and p == "LL":
                bus *= 0.25
            if a == "ring" and p == "LL128":
                bus = min(bus * (0.7 if ppn < 2 else 0.92), LL128_MAX_BW_PER_CH_ALLREDUCE * nch)
            if a == "tree":
                bus = min(bus * 0.9, 80.0 if nodes > 2 else 110.0)
                if p == "LL":
                    bus *= 1.0 / 3.8
                if p == "LL128":
                    bus = min(bus * (7.0 / 9.0 if nodes == 1 else 0.915), LL128_MAX_BW_PER_CH_ALLREDUCE * nch * 7.0 / 9.0)
            algbw = bus * (n / nsteps if a == "ring" else 0.5)
            intra_lat = HW_LAT_US[intra][a][i] * (1.8 if nodes > 1 and p == "LL" else 1.0)
            inter_lat = HW_LAT_US["net"][a][i]
            latency = BASE_LAT_US[a][i]
            if a == "ring":
                latency += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat
            else:
                latency += 2 * ((ppn - 1) * intra_lat + np.log2(nodes) * inter_lat)
            key = f"{a}/{p}"
            eff_bw = np.full_like(s, algbw)
            lat_arr = np.full_like(s, latency)
            if a == "tree":
                table = np.asarray(TREE_CORRECTION[p])
                small = log_size < table.size
                eff_bw = np.where(small, algbw * table[np.minimum(log_size, table.size - 1)], algbw)
            if a == "ring" and p == "Simple" and nodes > 1:
                lat_arr = np.where(s >= n / 16.0 * 65536, latency * 1.9, latency)
            lat[key], bw[key] = float(latency), float(algbw)
            t[key] = lat_arr + s / (1000.0 * eff_bw) if key in enabled else np.full_like(s, np.inf)
    stack = np.vstack([t[k] for k in pairs])
    idx = np.argmin(stack, axis=0)
    choice = [pairs[i] for i in idx]
    return TuningTable(size_bytes=s, latency_us=lat, algbw_gbs=bw, time_us=t, choice=choice, bus_gbs=float(bus_total),
                       capped=bool(capped), inter_limited=bool(inter_limited), channels_bus_gbs=float(bus0))
