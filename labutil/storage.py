"""Storage models: checkpoint size and write time, read/write interference, data-read demand,
device throughput vs I/O size, and a hot/checkpoint/cold tier planner.

Taught in ch16 存储架构 (tiers, throughput vs IOPS, read/write separation), ch17 检查点
(size, write bandwidth, async/sharded saves) and ch18 数据加载流水线 (read bandwidth and IOPS
for a sample rate; the stage model itself is in ``labutil.dataloading``).

Units follow ``labutil.units``: ``_gb`` = 1e9 B, ``_tb`` = 1e12 B, ``_gbs`` = 1e9 B/s, ``_s``.
Reference drives and storage servers live in ``labutil/data/storage.toml`` with sources.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import data_files, links, memory, validate
from .units import BYTES_PER_GB, BYTES_PER_TB, BITS_PER_BYTE

__all__ = ["OPTIMIZERS", "PRECISIONS", "checkpoint_breakdown", "checkpoint_bytes_per_param", "checkpoint_gb",
           "params_for_checkpoint_gb", "pcie_gbs", "effective_write_gbs", "checkpoint_write_s", "CheckpointSave",
           "checkpoint_save", "checkpoint_overhead_fraction", "Interference", "read_write_interference",
           "DEFAULT_IO_SIZE_BYTES", "ReadRequirements", "data_read_requirements", "Media", "StorageServer", "media",
           "media_names", "server_spec", "server_names", "device_throughput_gbs", "mixed_efficiency", "Tier",
           "TierPlan", "plan_tiers"]

# ---------------------------------------------------------------------------------------------
# Checkpoint size
# ---------------------------------------------------------------------------------------------
#: Optimizers: those of ``labutil.memory`` ("sgd" = SGD with momentum) plus "none" (weights-only export).
OPTIMIZERS = tuple(memory.OPTIMIZERS) + ("none",)
PRECISIONS = tuple(memory.PRECISIONS)


def checkpoint_breakdown(params, optimizer: str = "adam", precision: str = "bf16", *,
                         include_model_weights: bool = True) -> dict:
    """Bytes per parameter of each part of a training checkpoint, as a dict ``part -> B/param``.

    The per-parameter bytes come from :func:`labutil.memory.bytes_per_param` (ch07): what a
    checkpoint saves is the model states minus the gradients. Mixed precision (``precision``
    bf16/fp16) with Adam, the layout DeepSpeed and Megatron-LM save:

    - fp32 master weights 4 B + Adam m 4 B + v 4 B = 12 B/param (the "K = 12" optimizer state of
      ZeRO, Rajbhandari et al. 2020, §3.1). DeepSpeed writes them to ``*_optim_states.pt``;
      Megatron-LM's distributed optimizer to ``distrib_optim.pt``;
    - the bf16/fp16 model weights 2 B/param (DeepSpeed ``mp_rank_*_model_states.pt``, Megatron
      ``model_optim_rng.pt``), kept unless ``include_model_weights=False``.

    Total 14 B/param (12 without the half-precision copy). ``precision="fp32"``: the weights are the
    master copy (4 B) plus the optimizer states (Adam 8 B). ``optimizer="none"``: a weights-only
    export (2 B/param in bf16), what is published for inference. Gradients are never saved.
    ``params`` is only validated here (the breakdown is per parameter).
    """
    validate.positive("params", params)
    validate.choice("optimizer", optimizer, OPTIMIZERS)
    validate.choice("precision", precision, PRECISIONS)
    parts: dict[str, float] = {}
    if optimizer == "none":
        parts["weights"] = memory.bytes_per_param("adam", precision)[0]
        return parts
    w, _grad, k = memory.bytes_per_param(optimizer, precision)
    if precision == "fp32":
        parts["fp32 weights"] = w
        parts["optimizer states"] = k
    else:
        parts["fp32 master weights"] = 4.0
        parts["optimizer states"] = k - 4.0
        if include_model_weights:
            parts[f"{precision} weights"] = w
    return parts


def checkpoint_bytes_per_param(optimizer: str = "adam", precision: str = "bf16", *,
                               include_model_weights: bool = True) -> float:
    """Sum of :func:`checkpoint_breakdown` (14 for mixed-precision Adam, 2 for a bf16 export)."""
    return float(sum(checkpoint_breakdown(1.0, optimizer, precision,
                                          include_model_weights=include_model_weights).values()))


def checkpoint_gb(params, optimizer: str = "adam", precision: str = "bf16", *,
                  include_model_weights: bool = True):
    """Full training-checkpoint size in decimal GB: ``params x bytes/param / 1e9``.

    Mixed-precision Adam: 14 B/param (see :func:`checkpoint_breakdown`), so GPT-3 175B gives
    2,450 GB (2,100 GB without the bf16 copy) and BLOOM-176B 2,467 GB = 2.24 TiB, which ``du -h``
    prints as the "2.3TB" of the BigScience model summary (bf16 weights alone 352 GB = 328 GiB,
    printed "329GB"). Vectorised over ``params``.
    """
    p = validate.positive("params", params)
    bpp = checkpoint_bytes_per_param(optimizer, precision, include_model_weights=include_model_weights)
    return p * bpp / BYTES_PER_GB


def params_for_checkpoint_gb(size_gb, optimizer: str = "adam", precision: str = "bf16", *,
                             include_model_weights: bool = True):
    """Inverse of :func:`checkpoint_gb`: the parameter count whose checkpoint is ``size_gb``."""
    s = validate.positive("size_gb", size_gb)
    bpp = checkpoint_bytes_per_param(optimizer, precision, include_model_weights=include_model_weights)
    return s * BYTES_PER_GB / bpp


# ---------------------------------------------------------------------------------------------
# Checkpoint write time, sharded and asynchronous saves
# ---------------------------------------------------------------------------------------------
def pcie_gbs(gen: int, lanes: int = 16):
    """Raw PCIe payload rate per direction in GB/s for generation number ``gen`` (3..6).

    A thin wrapper of :func:`labutil.links.pcie_gbs` (GT/s x encoding x lanes / 8, PCI-SIG base
    specifications): Gen4 x4 = 7.88 GB/s, the ceiling of any Gen4 NVMe SSD; Gen5 x16 = 63.0 GB/s.
    Protocol overhead (TLP headers) makes measured rates ~10-20 % lower.
    """
    g = validate.integer("gen", gen, lo=3, hi=6)
    return links.pcie_gbs(f"gen{g}", lanes)


def effective_write_gbs(write_gbs, n_writers=1, per_writer_gbs=None):
    """Aggregate write bandwidth actually reached: ``min(write_gbs, n_writers x per_writer_gbs)``.

    ``write_gbs`` is the file system's aggregate write bandwidth; ``per_writer_gbs`` what one
    writer process/node can push (its NIC, its client, its single-stream limit). ``None`` means
    no per-writer limit. Vectorised.
    """
    w = validate.positive("write_gbs", write_gbs)
    n = validate.integer("n_writers", n_writers, lo=1)
    if per_writer_gbs is None:
        out = w + 0.0 * np.asarray(n, dtype=float)
    else:
        pw = validate.positive("per_writer_gbs", per_writer_gbs)
        out = np.minimum(w, n * pw)
    return float(out) if np.ndim(out) == 0 else out


def checkpoint_write_s(size_gb, write_gbs, n_writers=1, per_writer_gbs=None, *, latency_s=0.0):
    """Time to persist a checkpoint: ``size_gb / min(write_gbs, n_writers x per_writer_gbs) + latency_s``.

    A sharded save (every data-parallel shard owner writes its own file, as DeepSpeed ZeRO and
    torch.distributed.checkpoint do) raises ``n_writers``; once ``n_writers x per_writer_gbs``
    exceeds the file system's aggregate ``write_gbs`` more writers no longer help. ``latency_s``
    is a fixed per-save cost (file creation, fsync, the metadata commit). Vectorised.
    """
    s = validate.positive("size_gb", size_gb, allow_zero=True)
    lat = validate.positive("latency_s", latency_s, allow_zero=True)
    bw = effective_write_gbs(write_gbs, n_writers, per_writer_gbs)
    return s / bw + lat


@dataclass(frozen=True)
class CheckpointSave:
    """Timing of one checkpoint save. ``blocking_s`` stops training; ``background_s`` overlaps it."""

    size_gb: float
    write_s: float
    blocking_s: float
    background_s: float
    async_save: bool
    host_buffer_gb_per_writer: float

    def overhead_fraction(self, interval_s):
        """Fraction of wall time lost to checkpointing at one save every ``interval_s`` of training."""
        return checkpoint_overhead_fraction(self.blocking_s, interval_s, self.background_s)


def checkpoint_save(size_gb, write_gbs, n_writers=1, per_writer_gbs=None, *, async_save: bool = False,
                    d2h_gbs_per_writer=None, latency_s=0.0) -> CheckpointSave:
    """Synchronous vs asynchronous save of a ``size_gb`` checkpoint sharded over ``n_writers``.

    Synchronous: training waits for the whole write, ``blocking_s = write_s``.
    Asynchronous (two-phase snapshot + persist of CheckFreq, Mohan et al., FAST'21; PyTorch
    ``torch.distributed.checkpoint.async_save``; Megatron-LM ``--async-save``): training waits only
    for the copy of each writer's shard from GPU to pinned host memory,
    ``blocking_s = size_gb / n_writers / d2h_gbs_per_writer``; the file-system write runs in the
    background (``background_s = write_s``) and needs ``size_gb / n_writers`` of host RAM per
    writer. ``d2h_gbs_per_writer`` defaults to the raw PCIe Gen5 x16 rate (63 GB/s), a best case.
    """
    async_save = bool(async_save)
    s = validate.positive("size_gb", size_gb, allow_zero=True)
    n = validate.integer("n_writers", n_writers, lo=1)
    write_s = checkpoint_write_s(s, write_gbs, n, per_writer_gbs, latency_s=latency_s)
    shard_gb = s / n
    if async_save:
        d2h = pcie_gbs(5, 16) if d2h_gbs_per_writer is None else validate.positive("d2h_gbs_per_writer",
                                                                                 d2h_gbs_per_writer)
        blocking = shard_gb / d2h
        background = write_s
    else:
        blocking = write_s
        background = 0.0 * write_s
    return CheckpointSave(size_gb=s, write_s=write_s, blocking_s=blocking, background_s=background,
                          async_save=async_save, host_buffer_gb_per_writer=shard_gb if async_save else 0.0 * shard_gb)


def checkpoint_overhead_fraction(blocking_s, interval_s, background_s=0.0):
    """Share of wall time lost to checkpoints: ``stall / (interval_s + stall)``.

    ``stall = blocking_s + max(0, background_s - interval_s)``: an asynchronous save whose
    background write is slower than the interval makes the next save wait for it (one write in
    flight at a time). ``interval_s`` is the training time between saves. Vectorised.
    """
    b = validate.positive("blocking_s", blocking_s, allow_zero=True)
    t = validate.positive("interval_s", interval_s)
    bg = validate.positive("background_s", background_s, allow_zero=True)
    stall = b + np.maximum(0.0, bg - t)
    out = stall / (t + stall)
    return float(out) if np.ndim(out) == 0 else out


# ---------------------------------------------------------------------------------------------
# Read/write interference in a shared pool (seed 003, 误区二)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Interference:
    """Training reads vs checkpoint bursts, one shared pool against separate tiers.

    All ``*_s`` are per checkpoint; ``*_fraction`` are shares of wall time at one save per
    ``interval_s``. ``read_slowdown`` = how much longer a data read takes during the burst.
    """

    read_gbs: float
    pool_gbs: float
    shared_read_gbs: float
    shared_burst_s: float
    shared_stall_s: float
    shared_stall_fraction: float
    read_slowdown: float
    separate_burst_s: float
    separate_stall_s: float
    separate_stall_fraction: float


def read_write_interference(read_gbs, pool_gbs, checkpoint_gb, interval_s, *, prefetch_s=2.0,
                            read_weight=0.5, mixed_efficiency=1.0, separate_write_gbs=None) -> Interference:
    """Data-loading stall caused by checkpoint bursts that share the pool with training reads.

    Model (shared pool of aggregate bandwidth B, training reads need R < B):
    during a burst the pool delivers ``B' = mixed_efficiency·B`` (1.0 for flash; an HDD pool whose
    sequential streams interleave into random requests drops to the random/sequential ratio of
    :func:`device_throughput_gbs`, e.g. 0.38 at 1 MiB requests on the reference HDD), and the greedy
    checkpoint writers and the readers share it by weighted max-min fairness (Bertsekas & Gallager,
    *Data Networks*, §6.5.2): reads get ``r = min(R, w·B')`` (``w = read_weight``, the readers'
    share of the streams), writes the rest, so the burst lasts ``T_b = S / (B' - r)``. The loader's
    prefetch buffer holds ``prefetch_s`` seconds of data; it drains at ``R - r`` and once empty the
    GPUs run at ``r/R`` of their speed, so the stall per checkpoint is
    ``max(0, (R - r)·T_b - prefetch_s·R) / R``.
    Separate tiers: reads come from their own tier (stall 0) and the checkpoint tier
    (``separate_write_gbs``, default B) absorbs the burst alone, ``S / separate_write_gbs``.
    Vectorised over every argument.
    """
    R = validate.positive("read_gbs", read_gbs)
    B = validate.positive("pool_gbs", pool_gbs)
    S = validate.positive("checkpoint_gb", checkpoint_gb, allow_zero=True)
    T = validate.positive("interval_s", interval_s)
    P = validate.positive("prefetch_s", prefetch_s, allow_zero=True)
    w = validate.number("read_weight", read_weight, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    if np.any(np.asarray(R) >= np.asarray(B)):
        raise ValueError(f"read_gbs must be < pool_gbs (the pool cannot feed training even without "
                         f"checkpoints); got read_gbs={read_gbs!r}, pool_gbs={pool_gbs!r}")
    eff = validate.fraction("mixed_efficiency", mixed_efficiency)
    W = B if separate_write_gbs is None else validate.positive("separate_write_gbs", separate_write_gbs)
    Be = B * eff
    r = np.minimum(R, w * Be)
    burst = S / (Be - r)
    stall = np.maximum(0.0, (R - r) * burst - P * R) / R
    sep_burst = S / W

    def f(x):
        return float(x) if np.ndim(x) == 0 else x

    return Interference(read_gbs=f(R + 0 * B), pool_gbs=f(B + 0 * R), shared_read_gbs=f(r),
                        shared_burst_s=f(burst), shared_stall_s=f(stall),
                        shared_stall_fraction=f(stall / (T + stall)), read_slowdown=f(R / r),
                        separate_burst_s=f(sep_burst), separate_stall_s=f(0.0 * stall),
                        separate_stall_fraction=f(0.0 * stall))


# ---------------------------------------------------------------------------------------------
# Data-read demand: bandwidth, IOPS, metadata operations
# ---------------------------------------------------------------------------------------------
#: Default I/O request size: Lustre's default stripe size and RPC size, 1 MiB (Lustre Operations
#: Manual, "Setting the File Layout/Striping Configuration (lfs setstripe)": stripe_size default 1 MB).
DEFAULT_IO_SIZE_BYTES = 1 << 20


@dataclass(frozen=True)
class ReadRequirements:
    """Aggregate storage demand of a data loader (all rates per second)."""

    samples_per_s: float
    sample_bytes: float
    file_bytes: float
    read_gbs: float
    files_per_s: float
    read_iops: float
    metadata_ops_per_s: float


def data_read_requirements(samples_per_s, sample_bytes, file_bytes=None, *,
                           io_size_bytes=DEFAULT_IO_SIZE_BYTES, metadata_ops_per_file=2) -> ReadRequirements:
    """Read bandwidth, file opens, read IOPS and metadata operations for a sample rate.

    ``read_gbs = samples_per_s x sample_bytes / 1e9``. Files are read whole and in order:
    ``files_per_s = read bytes/s / file_bytes`` (``file_bytes=None``: one file per sample, the
    small-file case; a packed shard such as a WebDataset tar or Megatron ``.bin`` holds many
    samples). Each file costs ``ceil(file_bytes / io_size_bytes)`` read requests and
    ``metadata_ops_per_file`` metadata operations (open + close = 2; a stat adds one), served by
    the metadata server (Lustre MDS, GPFS metanode) not by the data servers. Vectorised.
    """
    n = validate.positive("samples_per_s", samples_per_s)
    sb = validate.positive("sample_bytes", sample_bytes)
    fb = sb if file_bytes is None else validate.positive("file_bytes", file_bytes)
    io = validate.positive("io_size_bytes", io_size_bytes)
    mo = validate.positive("metadata_ops_per_file", metadata_ops_per_file, allow_zero=True)
    bytes_per_s = n * sb
    files = bytes_per_s / fb
    iops = files * np.ceil(fb / io)

    def f(x):
        return float(x) if np.ndim(x) == 0 else x

    return ReadRequirements(samples_per_s=f(n + 0 * bytes_per_s), sample_bytes=f(sb + 0 * bytes_per_s),
                            file_bytes=f(fb + 0 * bytes_per_s), read_gbs=f(bytes_per_s / BYTES_PER_GB),
                            files_per_s=f(files), read_iops=f(iops), metadata_ops_per_s=f(files * mo))


# ---------------------------------------------------------------------------------------------
# Reference drives and storage servers (labutil/data/storage.toml)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Media:
    name: str
    kind: str
    interface: str
    capacity_tb: float
    read_gbs: float
    write_gbs: float
    read_iops: float
    write_iops: float
    source: str
    aliases: tuple = ()


@dataclass(frozen=True)
class StorageServer:
    """A storage building block; bandwidths are computed (drives vs NIC), not copied."""

    name: str
    role: str
    media: str
    drives: int
    nics: int
    nic_gbps: float
    data_efficiency: float
    source: str
    aliases: tuple = ()

    @property
    def media_spec(self) -> Media:
        return media(self.media)

    @property
    def raw_tb(self) -> float:
        return self.drives * self.media_spec.capacity_tb

    @property
    def usable_tb(self) -> float:
        return self.raw_tb * self.data_efficiency

    @property
    def nic_gbs(self) -> float:
        return self.nics * self.nic_gbps / BITS_PER_BYTE

    @property
    def read_gbs(self) -> float:
        return min(self.drives * self.media_spec.read_gbs * self.data_efficiency, self.nic_gbs)

    @property
    def write_gbs(self) -> float:
        return min(self.drives * self.media_spec.write_gbs * self.data_efficiency, self.nic_gbs)

    @property
    def read_iops(self) -> float:
        return self.drives * self.media_spec.read_iops


def _catalog() -> tuple[data_files.Table, data_files.Table]:
    return (data_files.table("storage.toml", "media", kind="storage media", cls=Media),
            data_files.table("storage.toml", "server", kind="storage server", cls=StorageServer))


def _find(kind: str, table: data_files.Table, name):
    return table[name]


def media(name: str) -> Media:
    """A reference drive from storage.toml, e.g. ``media("nvme-gen4")``."""
    return _find("storage media", _catalog()[0], name)


def media_names() -> list[str]:
    return list(_catalog()[0])


def server_spec(name: str) -> StorageServer:
    """A storage building block from storage.toml, e.g. ``server_spec("nvme-pfs-2u")``."""
    return _find("storage server", _catalog()[1], name)


def server_names() -> list[str]:
    return list(_catalog()[1])


def device_throughput_gbs(media_name: str, io_size_bytes, *, op: str = "read", pattern: str = "random"):
    """Throughput of one drive at a request size: the IOPS-vs-bandwidth bound.

    Random, flash: ``min(seq_gbs, iops x io_size)`` (a roofline-style bound: small requests are limited
    by IOPS, large ones by the sequential rate; an SSD overlaps many requests internally).
    Random, HDD (``kind = "hdd"``): one head serves one request at a time, so each request costs its
    positioning time (1 / datasheet 4 KiB IOPS) PLUS its transfer time io / seq:
    ``io / (1/iops + io/seq)``. At 4 KiB that is 0.69 MB/s against 285 MB/s sequential; at 1 MiB
    it is 5.95 ms + 3.68 ms per request = 109 MB/s, 38 % of sequential (the min() bound would say
    62 %, ignoring that the transfer cannot overlap the seek). Sequential: the datasheet rate.
    Vectorised over ``io_size_bytes``.
    """
    m = media(media_name)
    validate.choice("op", op, ("read", "write"))
    validate.choice("pattern", pattern, ("random", "sequential"))
    io = validate.positive("io_size_bytes", io_size_bytes)
    seq = m.read_gbs if op == "read" else m.write_gbs
    if pattern == "sequential":
        return seq + 0.0 * io
    iops = m.read_iops if op == "read" else m.write_iops
    if m.kind == "hdd":
        out = (np.asarray(io) / BYTES_PER_GB) / (1.0 / iops + (np.asarray(io) / BYTES_PER_GB) / seq)
    else:
        out = np.minimum(seq, iops * io / BYTES_PER_GB)
    return float(out) if np.ndim(out) == 0 else out


def mixed_efficiency(media_name: str = "hdd-20tb", io_size_bytes=1 << 20) -> float:
    """Share of a drive's sequential read rate left when streams interleave into random ``io_size_bytes`` requests.

    ``device_throughput_gbs(random) / sequential``: 0.38 for the reference HDD at 1 MiB requests, 1.0 for
    flash at large requests. Used as ``mixed_efficiency`` of :func:`read_write_interference`.
    """
    m = media(media_name)
    return float(device_throughput_gbs(media_name, io_size_bytes) / m.read_gbs)


# ---------------------------------------------------------------------------------------------
# Tier planner
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tier:
    """One tier of a plan. ``servers = max(servers_for_capacity, servers_for_bandwidth)``."""

    name: str
    role: str
    server: str
    capacity_needed_tb: float
    bandwidth_needed_gbs: float
    bandwidth_kind: str
    servers_for_capacity: int
    servers_for_bandwidth: int
    servers: int
    drives: int
    usable_tb: float
    provided_gbs: float

    @property
    def limited_by(self) -> str:
        return "bandwidth" if self.servers_for_bandwidth > self.servers_for_capacity else "capacity"


@dataclass(frozen=True)
class TierPlan:
    tiers: tuple
    local_nvme_tb_per_node: float
    hot_fits_local_nvme: bool

    def tier(self, name: str) -> Tier:
        for t in self.tiers:
            if t.name == name:
                return t
        raise validate.unknown_name("tier", name, [t.name for t in self.tiers])

    def rows(self) -> list[dict]:
        return [{"tier": t.name, "server": t.server, "need_tb": t.capacity_needed_tb,
                 "need_gbs": t.bandwidth_needed_gbs, "kind": t.bandwidth_kind, "servers": t.servers,
                 "drives": t.drives, "usable_tb": t.usable_tb, "provided_gbs": t.provided_gbs,
                 "limited_by": t.limited_by} for t in self.tiers]


def _tier(name, role, server, cap_tb, bw_gbs, kind, max_fill) -> Tier:
    s = server_spec(server)
    per_bw = s.read_gbs if kind == "read" else s.write_gbs
    n_cap = max(1, math.ceil(cap_tb / (s.usable_tb * max_fill) - 1e-9))
    n_bw = max(1, math.ceil(bw_gbs / per_bw - 1e-9))
    n = max(n_cap, n_bw)
    return Tier(name=name, role=role, server=s.name, capacity_needed_tb=cap_tb, bandwidth_needed_gbs=bw_gbs,
                bandwidth_kind=kind, servers_for_capacity=n_cap, servers_for_bandwidth=n_bw, servers=n,
                drives=n * s.drives, usable_tb=n * s.usable_tb, provided_gbs=n * per_bw)


def plan_tiers(dataset_tb, checkpoint_tb, read_gbs, write_gbs, *, hot_fraction=1.0, checkpoints_kept=3,
               archived_checkpoints=10, restage_hours=24.0, max_fill=0.8, hot_server="nvme-pfs-2u",
               checkpoint_server="nvme-pfs-2u", cold_server="object-hdd-2u",
               compute_server="DGX-H100") -> TierPlan:
    """Size three tiers, following seed 003's read/write separation:

    - ``hot``: training data on flash (``hot_fraction`` of the dataset), sized for ``read_gbs``;
    - ``checkpoint``: a separate parallel file system for ``checkpoints_kept`` checkpoints of
      ``checkpoint_tb``, sized for the burst ``write_gbs``;
    - ``cold``: an object store for the whole dataset plus ``archived_checkpoints``, able to
      re-stage the hot set in ``restage_hours``.

    Each tier needs ``max(ceil(capacity / (usable_tb x max_fill)), ceil(bandwidth / server_gbs))``
    servers; ``max_fill`` (default 0.8) is a design choice that keeps free-space headroom.
    Also reports whether the hot set fits in one compute node's local NVMe (a per-node cache).
    """
    d = validate.positive("dataset_tb", dataset_tb)
    c = validate.positive("checkpoint_tb", checkpoint_tb)
    r = validate.positive("read_gbs", read_gbs)
    w = validate.positive("write_gbs", write_gbs)
    h = validate.fraction("hot_fraction", hot_fraction)
    k = validate.integer("checkpoints_kept", checkpoints_kept, lo=1)
    a = validate.integer("archived_checkpoints", archived_checkpoints, lo=0)
    rh = validate.positive("restage_hours", restage_hours)
    fill = validate.fraction("max_fill", max_fill)
    for arg, v in (("d", d), ("c", c), ("r", r), ("w", w)):
        if np.ndim(v):
            raise ValueError("plan_tiers takes scalars (one plan at a time); sweep it in a loop")
    hot_tb = d * h
    tiers = (
        _tier("hot", "training data (read)", hot_server, hot_tb, r, "read", fill),
        _tier("checkpoint", "checkpoints (write bursts)", checkpoint_server, c * k, w, "write", fill),
        _tier("cold", "raw data, archive, logs", cold_server, d + c * a, hot_tb * BYTES_PER_TB / BYTES_PER_GB
              / (rh * 3600.0), "read", fill),
    )
    from .hardware import server as compute_spec
    local = compute_spec(compute_server).nvme_tb
    return TierPlan(tiers=tiers, local_nvme_tb_per_node=float(local), hot_fits_local_nvme=bool(hot_tb <= local))
