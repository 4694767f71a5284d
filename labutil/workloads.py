"""Workload profiles: what each application scenario demands of a cluster (chapter 2).

The seed courses describe scenarios in tables (scale, bottleneck, emphasis). This module turns
one representative job per scenario (``labutil/data/workloads.toml``, illustrative parameters)
into numbers computed with the course's models, and those numbers into a requirement radar:

- scale: GPUs in the job;
- network: per-GPU link rate (Gbit/s) that data-parallel sync needs for a target scaling
  efficiency, from the course's cluster model (``labutil.cluster`` through
  ``dp.dp_comm_time_s`` / ``dp.required_bandwidth_gbps``: NVLink inside a node, one NIC of
  ``link_gbps`` per GPU, per-rail rings across nodes, cited achievable efficiencies);
- memory: the memory one full replica needs (training: weights + gradients + mixed-precision Adam
  states, ``labutil.memory.model_states_gb``; serving: BF16 weights; simulation: FP64 state) in
  units of one GPU's HBM, i.e. how many GPUs must share it before activations are even counted;
- storage throughput and small-file rate: aggregate read GB/s and files opened per second;
- latency: the serving SLO (0 for batch jobs); FP64: whether double precision is needed;
- churn: job starts per day (scheduling flexibility).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from . import comm, data_files, dp, hardware, memory, models, validate
from .units import BYTES_PER_GB, gbps_to_gbs

__all__ = ["AXES", "AXIS_LABELS", "DEFAULT_ALPHA_S", "KINDS", "GPUS_PER_NODE", "Workload", "Profile", "seed_tables",
           "workload_names", "workload", "sync_time_s", "scaling_efficiency", "profile", "profile_table"]

AXES = ("scale", "network", "memory", "storage_gbs", "small_files", "latency", "fp64", "churn")
AXIS_LABELS = {
    "scale": "Scale\n(GPUs)", "network": "Network\n(Gb/s per GPU)", "memory": "Memory\n(GPUs to hold state)",
    "storage_gbs": "Storage\n(GB/s read)", "small_files": "Small files\n(files/s)", "latency": "Latency\n(1/SLO)",
    "fp64": "FP64", "churn": "Churn\n(jobs/day)",
}
# log10 ranges mapped to 0..1 on the radar (below lo -> 0, above hi -> 1)
_LOG_RANGES = {"memory": (-2, 2), "scale": (1, 4), "network": (0, 3), "storage_gbs": (-2, 3), "small_files": (0, 6),
               "latency": (0, 3), "churn": (-1, 3)}
DEFAULT_ALPHA_S = 5e-6
KINDS = ("train", "serve", "sim", "batch")
GPUS_PER_NODE = 8  # HGX/DGX-class nodes: data-parallel sync inside one node runs over NVLink, not the network  # per-step network latency of the α-β model, see labutil.comm


@dataclass(frozen=True)
class Workload:
    key: str
    kind: str
    name_zh: str
    name_en: str
    gpus: int
    gpu: str
    model: str
    params: float
    tp_pp: int
    step_compute_s: float
    sync_bytes: float
    read_mb_per_gpu_s: float
    files_per_gpu_s: float
    latency_ms: float
    fp64: bool
    jobs_per_day: float
    run_days: float

    def __post_init__(self):
        validate.choice("kind", self.kind, KINDS)
        validate.integer("gpus", self.gpus)
        validate.integer("tp_pp", self.tp_pp)
        if self.gpus % self.tp_pp:
            raise ValueError(f"gpus must be divisible by tp_pp; got gpus={self.gpus}, tp_pp={self.tp_pp}")
        hardware.gpu(self.gpu)
        validate.positive("step_compute_s", self.step_compute_s)
        for f in ("read_mb_per_gpu_s", "files_per_gpu_s", "latency_ms", "jobs_per_day", "run_days"):
            validate.positive(f, getattr(self, f), allow_zero=True)
        if self.sync_bytes != -1:
            validate.positive("sync_bytes", self.sync_bytes, allow_zero=True)
        if not self.model:
            validate.positive("params", self.params)

    @property
    def model_params(self) -> float:
        return float(models.transformer(self.model).params()) if self.model else float(self.params)

    @property
    def dp(self) -> int:
        return self.gpus // self.tp_pp

    @property
    def is_serving(self) -> bool:
        return self.kind == "serve"

    @property
    def sync_bytes_per_step(self) -> float:
        """Bytes all-reduced per data-parallel step: BF16 gradients of the model shard when -1."""
        if self.sync_bytes == -1:
            return 2.0 * self.model_params / self.tp_pp
        return float(self.sync_bytes)


@dataclass(frozen=True)
class Profile:
    """Computed requirements of one workload at one per-GPU link rate."""

    workload: Workload
    link_gbps: float
    comm_s: float
    scaling_efficiency: float
    required_gbps: float  # per GPU, for the target efficiency (inf when unreachable)
    target_efficiency: float
    memory_gpus: float  # one replica's state / one GPU's HBM
    read_gbs: float
    files_per_s: float
    scores: dict


def _data() -> dict:
    return data_files.load("workloads.toml")


def seed_tables() -> list[dict]:
    """The scenario tables of seeds 000, 003 and 004 (title, columns, rows)."""
    return list(_data()["seed_table"])


def workload_names() -> list[str]:
    return [w["key"] for w in _data()["workload"]]


def workload(key: str, **overrides) -> Workload:
    """The representative workload ``key``, optionally with fields overridden (e.g. gpus=1024)."""
    for w in _data()["workload"]:
        if w["key"] == key:
            names = {f.name for f in fields(Workload)}
            unknown = set(overrides) - names
            if unknown:
                raise ValueError(f"unknown workload field(s) {sorted(unknown)}; known: {sorted(names)}")
            return Workload(**{**w, **overrides})
    raise validate.unknown_name("workload", key, workload_names())


def _dp_cluster(w: "Workload", link_gbps: float):
    """The workload's cluster: the catalog system of its GPU with one ``link_gbps`` NIC per GPU."""
    from .cluster import Cluster

    return Cluster.for_gpu(w.gpu, max(1, w.gpus // GPUS_PER_NODE), nic_gbps=link_gbps, nics_per_node=GPUS_PER_NODE)


def _dp_ranks_per_node(w: "Workload") -> int:
    """Ranks of one DP group on a node: 8 / (model-parallel degree) when a replica fits a node, else 1."""
    return max(1, GPUS_PER_NODE // w.tp_pp) if w.tp_pp <= GPUS_PER_NODE else 1


def _log_score(axis: str, value: float) -> float:
    lo, hi = _LOG_RANGES[axis]
    if value <= 0:
        return 0.0
    if math.isinf(value):
        return 1.0
    return float(np.clip((math.log10(value) - lo) / (hi - lo), 0.0, 1.0))


def sync_time_s(w: "Workload", link_gbps=400.0, alpha_s: float = DEFAULT_ALPHA_S):
    """Data-parallel sync time per step of ``w`` on one NIC of ``link_gbps`` per GPU (vectorised over
    link_gbps): the all_reduce of ``w.sync_bytes_per_step`` over ``w.dp`` ranks on the cluster model;
    0 inside one node or without sync."""
    rate = validate.positive("link_gbps", link_gbps)
    s = w.sync_bytes_per_step
    if w.gpus <= GPUS_PER_NODE or s <= 0 or w.dp <= 1:
        return 0.0 if np.ndim(rate) == 0 else np.zeros(np.shape(rate))
    c = _dp_cluster(w, float(np.max(rate)))
    return dp.dp_comm_time_s(s, w.dp, cluster=c, nic_gbps=rate, bytes_per_grad=1, bucket_bytes=None,
                               ranks_per_node=_dp_ranks_per_node(w), latency_s=alpha_s)


def scaling_efficiency(w: "Workload", link_gbps=400.0, alpha_s: float = DEFAULT_ALPHA_S):
    """compute / (compute + sync) of ``w`` (no overlap), vectorised over link_gbps."""
    t = np.asarray(sync_time_s(w, link_gbps, alpha_s), dtype=float)
    out = w.step_compute_s / (w.step_compute_s + t)
    return float(out) if out.ndim == 0 else out


def profile(w: Workload, link_gbps: float = 400.0, target_efficiency: float = 0.9,
            alpha_s: float = DEFAULT_ALPHA_S) -> Profile:
    """Requirements of workload ``w`` on a network of ``link_gbps`` per GPU (no compute/comm overlap).

    scaling efficiency = compute / (compute + sync), sync = all_reduce of ``w.sync_bytes_per_step``
    over the ``w.dp`` data-parallel ranks on the cluster model (``_dp_cluster``; a DP group has
    8 / model-parallel-degree ranks per node); required_gbps inverts it (per-GPU line rate).
    """
    link_gbps = validate.positive("link_gbps", link_gbps)
    u = validate.fraction("target_efficiency", target_efficiency, allow_one=False)
    s = w.sync_bytes_per_step
    comm_s = float(sync_time_s(w, link_gbps, alpha_s))
    if comm_s == 0.0:
        required = 0.0
    else:
        kw = dict(cluster=_dp_cluster(w, link_gbps), bytes_per_grad=1, bucket_bytes=None,
                  ranks_per_node=_dp_ranks_per_node(w), latency_s=alpha_s)
        try:
            required = float(dp.required_bandwidth_gbps(s, w.dp, compute_s=w.step_compute_s, target_utilisation=u,
                                                          per="gpu", **{k: v for k, v in kw.items() if k != "latency_s"},
                                                          latency_s=alpha_s))
        except ValueError:  # NVLink / latency terms alone exceed the budget
            required = math.inf
    eff = w.step_compute_s / (w.step_compute_s + comm_s)
    spec = hardware.gpu(w.gpu)
    if w.kind == "train":  # weights + grads + mixed-precision Adam states, unsharded (ZeRO stage 0)
        state_gb = memory.model_states_gb(w.model_params, dp=1, zero_stage=0).total_gb
    elif w.kind == "sim":  # FP64 state elements
        state_gb = 8.0 * w.model_params / BYTES_PER_GB
    else:  # serve / batch: BF16 weights
        state_gb = 2.0 * w.model_params / BYTES_PER_GB
    mem_gpus = state_gb / spec.hbm_gb
    read_gbs = w.gpus * w.read_mb_per_gpu_s / 1e3
    files = w.gpus * w.files_per_gpu_s
    scores = {
        "scale": _log_score("scale", w.gpus),
        "network": _log_score("network", required),
        "memory": _log_score("memory", mem_gpus),
        "storage_gbs": _log_score("storage_gbs", read_gbs),
        "small_files": _log_score("small_files", files),
        "latency": _log_score("latency", 1000.0 / w.latency_ms) if w.latency_ms > 0 else 0.0,
        "fp64": 1.0 if w.fp64 else 0.0,
        "churn": _log_score("churn", w.jobs_per_day),
    }
    return Profile(w, link_gbps, comm_s, eff, required, u, mem_gpus, read_gbs, files, scores)


def profile_table(link_gbps: float = 400.0) -> list[dict]:
    """One row per representative workload with its computed requirements."""
    rows = []
    for key in workload_names():
        p = profile(workload(key), link_gbps)
        w = p.workload
        rows.append({"workload": w.name_zh, "GPUs": w.gpus, "GPU": w.gpu,
                     "params_B": round(w.model_params / 1e9, 1),
                     f"eff@{link_gbps:g}G": f"{p.scaling_efficiency:.0%}",
                     "need_Gbps_per_GPU": ("-" if p.required_gbps == 0 else
                                           ">1000" if p.required_gbps > 1000 else f"{p.required_gbps:.0f}"),
                     "state/HBM": f"{p.memory_gpus:.2g}x", "read_GB/s": round(p.read_gbs, 2),
                     "files/s": int(p.files_per_s), "SLO_ms": w.latency_ms or "-", "FP64": "yes" if w.fp64 else "-"})
    return rows
