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
- latency: 1 / the time budget of one synchronous interaction: the serving SLO of an online
  service, or the communication budget per step of a data-parallel job or MPI code,
  ``t_c (1/eta_target - 1)`` (0 for jobs that never wait on each other); FP64: whether double
  precision is needed;
- churn: job starts per day (scheduling flexibility).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from . import comm, compute, data_files, dp, hardware, memory, models, validate
from .cluster import Cluster
from .units import BYTES_PER_GB, gbps_to_gbs

__all__ = ["AXES", "AXIS_LABELS", "KINDS", "GPUS_PER_NODE", "DEFAULT_ALPHA_S", "Workload", "Profile", "seed_tables",
           "workload_names", "workload", "sync_time_s", "scaling_efficiency", "latency_budget_ms", "profile",
           "profile_table", "MPI_ALLREDUCE_ALGOS", "MPICH_ALLREDUCE_SHORT_MSG_BYTES", "mpi_allreduce_time_s",
           "mpich_allreduce_algo", "LLAMA3_405B", "DpTraffic", "llama3_405b_dp_traffic"]

AXES = ("scale", "network", "memory", "storage_gbs", "small_files", "latency", "fp64", "churn")
AXIS_LABELS = {
    "scale": "Scale\n(GPUs)", "network": "Network\n(Gb/s per GPU)", "memory": "Memory\n(GPUs to hold state)",
    "storage_gbs": "Storage\n(GB/s read)", "small_files": "Small files\n(files/s)", "latency": "Latency\n(1/time budget)",
    "fp64": "FP64", "churn": "Churn\n(jobs/day)",
}
# log10 ranges mapped to 0..1 on the radar (below lo -> 0, above hi -> 1)
_LOG_RANGES = {"memory": (-2, 2), "scale": (1, 4), "network": (0, 3), "storage_gbs": (-2, 3), "small_files": (0, 6),
               "latency": (0, 3), "churn": (-1, 3)}
DEFAULT_ALPHA_S = 5e-6  # per-step network latency of the α-β model (an MPI-over-InfiniBand step), see labutil.comm
KINDS = ("train", "serve", "sim", "batch")
GPUS_PER_NODE = 8  # HGX/DGX-class nodes: data-parallel sync inside one node runs over NVLink, not the network


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
    grad_bytes: float
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
        validate.choice("grad_bytes", self.grad_bytes, (2, 4))
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
        """Bytes all-reduced per data-parallel step: when ``sync_bytes`` is -1, the gradients of the
        model shard, ``grad_bytes`` (2 = BF16, 4 = FP32) x params / (tp x pp)."""
        if self.sync_bytes == -1:
            return float(self.grad_bytes) * self.model_params / self.tp_pp
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
    latency_budget_ms: float  # serving SLO, or the communication budget of one step (0: never waits)
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
    link_gbps): the all_reduce of ``w.sync_bytes_per_step`` over ``w.dp`` ranks on the cluster model.
    Inside one node the all_reduce runs over NVLink only (the same for every ``link_gbps``); 0
    without sync (one replica, or a job that never synchronises)."""
    rate = validate.positive("link_gbps", link_gbps)
    s = w.sync_bytes_per_step
    if s <= 0 or w.dp <= 1:
        return 0.0 if np.ndim(rate) == 0 else np.zeros(np.shape(rate))
    c = _dp_cluster(w, float(np.max(rate)))
    if w.gpus <= GPUS_PER_NODE:  # NVLink only: the NICs are not used
        t = float(c.collective_time_s("all_reduce", s, w.dp, ranks_per_node=w.dp))
        return t if np.ndim(rate) == 0 else np.full(np.shape(rate), t)
    return dp.dp_comm_time_s(s, w.dp, cluster=c, nic_gbps=rate, bytes_per_grad=1, bucket_bytes=None,
                               ranks_per_node=_dp_ranks_per_node(w), latency_s=alpha_s)


def scaling_efficiency(w: "Workload", link_gbps=400.0, alpha_s: float = DEFAULT_ALPHA_S):
    """compute / (compute + sync) of ``w`` (no overlap), vectorised over link_gbps."""
    t = np.asarray(sync_time_s(w, link_gbps, alpha_s), dtype=float)
    out = w.step_compute_s / (w.step_compute_s + t)
    return float(out) if out.ndim == 0 else out


def latency_budget_ms(w: Workload, target_efficiency: float = 0.9) -> float:
    """How long one synchronous interaction of ``w`` may take, ms: the serving SLO of an online
    service; for a job whose ranks synchronise every step (data-parallel training, an MPI code)
    the communication budget that keeps the target efficiency, ``t_c (1/eta - 1)``
    (eta = t_c / (t_c + t_comm), no overlap); 0 for a job whose ranks never wait on each other.

    >>> round(latency_budget_ms(workload("science")), 2)   # 50 ms MPI step at 90 %
    5.56
    """
    u = validate.fraction("target_efficiency", target_efficiency, allow_one=False)
    if w.latency_ms > 0:
        return float(w.latency_ms)
    if w.sync_bytes_per_step > 0 and w.dp > 1 and w.gpus > GPUS_PER_NODE:
        return 1e3 * w.step_compute_s * (1.0 / u - 1.0)
    return 0.0


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
    if comm_s == 0.0 or w.gpus <= GPUS_PER_NODE:  # no sync, or NVLink only: no network needed
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
    budget_ms = latency_budget_ms(w, u)
    scores = {
        "scale": _log_score("scale", w.gpus),
        "network": _log_score("network", required),
        "memory": _log_score("memory", mem_gpus),
        "storage_gbs": _log_score("storage_gbs", read_gbs),
        "small_files": _log_score("small_files", files),
        "latency": _log_score("latency", 1000.0 / budget_ms) if budget_ms > 0 else 0.0,
        "fp64": 1.0 if w.fp64 else 0.0,
        "churn": _log_score("churn", w.jobs_per_day),
    }
    return Profile(w, link_gbps, comm_s, eff, required, u, mem_gpus, read_gbs, files, budget_ms, scores)


def _need_text(required_gbps: float) -> str:
    if required_gbps == 0:
        return "-"
    if math.isinf(required_gbps):
        return "unreachable"
    if required_gbps > 1000:
        return ">1000"
    return "<1" if required_gbps < 1 else f"{required_gbps:.0f}"


def profile_table(link_gbps: float = 400.0) -> list[dict]:
    """One row per representative workload with its computed requirements: t_c_s is the compute time
    of one step (s) of the jobs that synchronise, budget_ms the latency budget
    (``latency_budget_ms``: the SLO of a service, the communication budget of a synchronous step)."""
    rows = []
    for key in workload_names():
        p = profile(workload(key), link_gbps)
        w = p.workload
        syncs = w.sync_bytes_per_step > 0
        rows.append({"workload": w.name_zh, "GPUs": w.gpus, "GPU": w.gpu,
                     "params_B": round(w.model_params / 1e9, 1),
                     "t_c_s": f"{w.step_compute_s:g}" if syncs else "-",
                     f"eff@{link_gbps:g}G": f"{p.scaling_efficiency:.0%}",
                     "need_Gbps_per_GPU": _need_text(p.required_gbps),
                     "state/HBM": f"{p.memory_gpus:.2g}x", "read_GB/s": round(p.read_gbs, 2),
                     "files/s": int(p.files_per_s),
                     "budget_ms": f"{p.latency_budget_ms:.3g}" if p.latency_budget_ms else "-",
                     "FP64": "yes" if w.fp64 else "-"})
    return rows


# -- MPI all-reduce algorithms (ch02 §5: a scientific code's global reduction) -----------------
MPI_ALLREDUCE_ALGOS = ("ring", "recursive_doubling", "rabenseifner")
#: MPICH uses recursive doubling for all-reduces up to this many bytes and Rabenseifner's algorithm
#: above (MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE, default 2048; Thakur, Rabenseifner & Gropp 2005 §4.5).
MPICH_ALLREDUCE_SHORT_MSG_BYTES = 2048


def mpi_allreduce_time_s(size_bytes, ranks: int, bw_gbs: float, alpha_s: float = DEFAULT_ALPHA_S,
                         algo: str = "rabenseifner"):
    """α-β time of an MPI all-reduce of ``size_bytes`` on ``ranks`` processes (vectorised over size).

    Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication Operations in MPICH",
    IJHPCA 19(1), 2005, §4.5 (computation term γ left out; p a power of two, else ⌈lg p⌉):

    - ring:               2(p-1)·α + 2(p-1)/p · n/B  (``comm.collective_cost`` 'ring': bandwidth-optimal,
      latency linear in p; what NCCL runs for large messages)
    - recursive doubling:  lg p ·α +   lg p   · n/B  (every step exchanges the whole vector)
    - rabenseifner:      2 lg p ·α + 2(p-1)/p · n/B  (reduce-scatter by recursive halving, then
      all-gather by recursive doubling: the latency of a tree, the bandwidth of a ring)

    >>> t = {a: mpi_allreduce_time_s(1e6, 512, 24.0, 5e-6, a) for a in MPI_ALLREDUCE_ALGOS}
    >>> round(t["ring"] * 1e3, 2), round(t["rabenseifner"] * 1e3, 3)
    (5.19, 0.173)
    """
    validate.choice("algo", algo, MPI_ALLREDUCE_ALGOS)
    p = validate.integer("ranks", ranks, lo=1)
    ring = comm.collective_cost("all_reduce", size_bytes, p, bw_gbs, alpha_s, "ring")
    if algo == "ring":
        return ring.time_s
    lg = math.ceil(math.log2(p)) if p > 1 else 0
    s = np.asarray(validate.positive("size_bytes", size_bytes, allow_zero=True), dtype=float)
    per_byte = 1.0 / (validate.positive("bw_gbs", bw_gbs) * BYTES_PER_GB)
    a = validate.positive("alpha_s", alpha_s, allow_zero=True)
    if algo == "recursive_doubling":
        t = lg * a + lg * s * per_byte
    else:  # rabenseifner: the ring's bandwidth term, a logarithmic latency term
        t = 2 * lg * a + np.asarray(ring.bandwidth_s, dtype=float)
    return float(t) if np.ndim(t) == 0 else t


def mpich_allreduce_algo(size_bytes: float) -> str:
    """The all-reduce algorithm MPICH selects for a message of ``size_bytes`` (built-in operations)."""
    validate.positive("size_bytes", size_bytes, allow_zero=True)
    return "recursive_doubling" if size_bytes <= MPICH_ALLREDUCE_SHORT_MSG_BYTES else "rabenseifner"


# -- Llama 3 405B: the data-parallel traffic of a published run (ch02 §3.1) -------------------
#: The Llama 3 Herd of Models (arXiv:2407.21783), Table 4 row 2 and §3.4.1: 16,384 H100, TP 8,
#: PP 16, DP 128, ~400 TFLOP/s per GPU, 16M tokens per step, 405B parameters.
LLAMA3_405B = {"params": 405e9, "gpus": 16384, "tp": 8, "pp": 16, "dp": 128, "tflops_per_gpu": 400.0,
               "tokens_per_step": 16e6}


@dataclass(frozen=True)
class DpTraffic:
    """Per-step data-parallel traffic of one GPU of a 3D-parallel job and its time on the cluster model."""

    params_per_gpu: float
    grad_fp32_gb: float
    weights_bf16_gb: float
    step_s: float             # 6·N·D_step / (GPUs x achieved FLOP/s): the published throughput
    allreduce_bf16_s: float   # all-reduce of BF16 gradients (DDP-style)
    allreduce_fp32_s: float   # all-reduce of FP32 gradients = reduce-scatter + all-gather of FP32
    reduce_scatter_fp32_s: float  # FSDP: reduce-scatter of the FP32 gradients
    all_gather_bf16_s: float      # FSDP: one all-gather of the BF16 weights (not resharded after forward)

    @property
    def fsdp_s(self) -> float:
        """What Llama 3 runs: FP32 reduce-scatter + one BF16 all-gather per step."""
        return self.reduce_scatter_fp32_s + self.all_gather_bf16_s


def llama3_405b_dp_traffic(ranks_per_node: int = 1) -> DpTraffic:
    """Llama 3 405B's data-parallel traffic per step on DGX-H100-class nodes (cluster model).

    Meta: "reduce-scatter gradients in FP32 across data parallel workers in FSDP"; "for model shards
    we do not reshard after forward computation to avoid an extra all-gather ... during backward"
    (§3.3.2). One DP group has ``ranks_per_node`` ranks on a node (1: TP fills the node, one rail).

    >>> t = llama3_405b_dp_traffic()
    >>> round(t.grad_fp32_gb, 1), round(t.allreduce_fp32_s / t.step_s, 2)
    (12.7, 0.13)
    """
    q = validate.integer("ranks_per_node", ranks_per_node, lo=1, hi=GPUS_PER_NODE)
    L = LLAMA3_405B
    c = Cluster.system("DGX-H100", n_nodes=L["gpus"] // GPUS_PER_NODE)
    shard = L["params"] / (L["tp"] * L["pp"])
    peak = hardware.gpu("H100-SXM").bf16_tflops
    step_s = float(compute.time_to_train_s(compute.train_flops(L["params"], L["tokens_per_step"]), L["gpus"], peak,
                                           compute.mfu(L["tflops_per_gpu"], peak)))
    kw = dict(ranks_per_node=q)
    ar = {b: float(c.dp_sync_time_s(shard, dp_ranks=L["dp"], bytes_per_grad=b, bucket_bytes=comm.DDP_BUCKET_BYTES, **kw))
          for b in (2, 4)}
    rs = float(c.collective_time_s("reduce_scatter", 4 * shard, L["dp"], **kw))
    ag = float(c.collective_time_s("all_gather", 2 * shard, L["dp"], **kw))
    return DpTraffic(shard, 4 * shard / BYTES_PER_GB, 2 * shard / BYTES_PER_GB, step_s, ar[2], ar[4], rs, ag)
