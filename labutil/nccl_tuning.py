"""NCCL's own cost model: which algorithm (Ring / Tree) and protocol (LL / LL128 / Simple) it
picks for an all-reduce of a given size, and why (ch15 NCCL深入).

This is a transcription of NCCL's tuner, ``src/graph/tuning.cc`` (``ncclTopoTuneModel`` and
``ncclTopoGetAlgoTime``) of the NCCL 2.8 era (NVIDIA/nccl, commit 01afd20), for all-reduce:

- every (algorithm, protocol) pair gets a bandwidth and a latency; the predicted time is
  ``t_us = latency_us + bytes / (1000 · algbw_GBps)``; NCCL runs the pair with the smallest t;
- bus bandwidth = nChannels × per-channel speed, then per pair (tuning.cc "model refinements"):
  Ring/LL × 1/4; Ring/LL128 × 0.92 (0.7 when < 2 ranks per node), capped at 16.7 GB/s per
  channel (``ll128MaxBwPerCh`` for all-reduce); Tree: min(busBw × 0.9, 80 GB/s for > 2 nodes,
  110 GB/s otherwise); Tree/LL × 1/3.8; Tree/LL128 × 7/9 (one node) or 0.915, capped at
  16.7 × 7/9 GB/s per channel; algbw = busBw × n / (2(n-1)) for Ring and busBw × 0.5 for Tree;
- latency (µs) = baseLat[algo][proto] + hardware latencies ``hwLat`` per step: Ring adds
  (2(n-1) - 2(nodes-1)) intra-node steps and 2(nodes-1) network steps; Tree adds
  2·((ppn-1)·intra + log2(nodes)·net). LL's intra-node latency × 1.8 on multi-node jobs. Tree
  bandwidth is scaled by ``treeCorrectionFactor`` (sizes 64 B … 128 MiB) and multi-node Ring/Simple
  latency × 1.9 above nRanks/16 × 64 KiB ("plateau effect of ring").

Later NCCL versions add CollNet (SHARP in-network reduction), NVLS (NVLink SHARP on NVSwitch
systems, Hopper+) and PAT, and retune the constants; the structure — latency + size/bandwidth
per (algorithm, protocol), minimum wins — is the same. The numbers here reproduce that older
tuner, not a measurement: compare with ``NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING`` on your
NCCL version, which prints its own table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import validate

__all__ = ["ALGOS", "PROTOS", "HW", "BASE_LAT_US", "HW_LAT_US", "LL128_MAX_BW_PER_CH_ALLREDUCE", "TREE_CORRECTION",
           "TuningTable", "allreduce_table"]

ALGOS = ("tree", "ring")
PROTOS = ("LL", "LL128", "Simple")
HW = ("nvlink", "pci")

# tuning.cc: Latencies in us. baseLat[algo][proto], algo order Tree, Ring.
BASE_LAT_US = {"tree": (4.4, 4.4, 0.0), "ring": (3.6, 10.0, 8.4)}
# hwLat[hw][algo][proto] (us): NVLink, PCI, network.
HW_LAT_US = {
    "nvlink": {"tree": (0.52, 1.2, 28.0), "ring": (0.47, 1.9, 3.4)},
    "pci": {"tree": (1.0, 1.9, 28.0), "ring": (1.0, 2.5, 5.7)},
    "net": {"tree": (5.0, 8.5, 50.0), "ring": (2.7, 4.0, 9.6)},
}
LL128_MAX_BW_PER_CH_ALLREDUCE = 16.7  # GB/s, ll128MaxBwPerCh[ncclCollAllReduce]
# treeCorrectionFactor[proto][log2(bytes/64)], 64 B .. 128 MiB
TREE_CORRECTION = {
    "LL": (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0),
    "LL128": (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .5, .6, .6, .7, .7, .8, .9, .9, 1.0),
    "Simple": (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .5, .5, .6, .6, .7, .8, .9),
}


@dataclass(frozen=True)
class TuningTable:
    """Per (algo, proto): latency_us, algbw_gbs (GB/s), and predicted time_us over ``size_bytes``."""

    size_bytes: np.ndarray
    latency_us: dict
    algbw_gbs: dict
    time_us: dict
    choice: list  # per size: "ring/Simple" etc. (NCCL's argmin)

    @property
    def best_time_us(self) -> np.ndarray:
        return np.min(np.vstack([v for v in self.time_us.values()]), axis=0)

    def busbw_gbs(self, n: int) -> np.ndarray:
        """busbw of the chosen pair, as nccl-tests would print it (algbw × 2(n-1)/n)."""
        return self.size_bytes / (self.best_time_us * 1e-6) / 1e9 * 2 * (n - 1) / n


def allreduce_table(size_bytes, n_ranks: int, n_nodes: int = 1, *, n_channels: int = 16,
                    speed_gbs: float = 20.0, intra: str = "nvlink", enabled: tuple[str, ...] | None = None) -> TuningTable:
    """NCCL 2.8's predicted all-reduce time for every (algorithm, protocol) pair.

    size_bytes: message size(s) in bytes (array for a sweep). n_ranks: GPUs; n_nodes: servers
    (n_ranks must be a multiple). n_channels × speed_gbs is the bus bandwidth NCCL's topology search
    found (per rank, GB/s). intra: 'nvlink' or 'pci' inside a node. enabled: subset such as
    ('ring/Simple', 'tree/LL') — what NCCL_ALGO / NCCL_PROTO would leave (default: all).
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
    ppn = n / nodes
    nsteps, inter_steps = 2 * (n - 1), 2 * (nodes - 1)
    lat, bw, t = {}, {}, {}
    log_size = np.clip(np.floor(np.log2(np.maximum(s / 64.0, 1.0))).astype(int), 0, None)
    for a in ALGOS:
        for i, p in enumerate(PROTOS):
            bus = nch * speed
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
    return TuningTable(size_bytes=s, latency_us=lat, algbw_gbs=bw, time_us=t, choice=choice)
