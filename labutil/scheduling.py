"""Cluster job scheduling: a seeded discrete-event simulation of a shared GPU cluster (ch21).

What it models
--------------
A cluster of ``n_gpus`` GPUs in nodes of ``gpus_per_node`` (8 for HGX/DGX-class servers). Jobs
have an arrival time, a runtime, a GPU request, a class (``training`` / ``inference`` /
``interactive``), a QOS priority and a namespace (Slurm account / Kubernetes namespace).
Placement is node-aware, like Slurm's ``select/cons_tres`` with ``--gres=gpu:N`` or the
Kubernetes scheduler with the NVIDIA device plugin: a job of at most one node's GPUs is placed
on one node (best fit: the node with the fewest free GPUs that still fits it), a larger job takes
whole free nodes (its request must be a multiple of ``gpus_per_node``, as multi-node training
jobs are). Idle GPUs scattered over partly used nodes are therefore *fragmented*: a whole-node
job cannot use them.

Policies (``POLICIES``)
-----------------------
- ``fifo``: strict arrival order; a job that does not fit blocks every job behind it.
- ``backfill``: FIFO + EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001): when the head job
  does not fit it gets a reservation at the earliest time enough GPUs free up (the *shadow
  time*, computed from the running jobs' end times); a later job may start now only if it does
  not delay that reservation (it ends by the shadow time, or it uses GPUs the head will not
  need). Runtimes are known exactly here (the user estimate equals the runtime).
- ``priority``: QOS priority order (higher first, then arrival), strict: a blocked
  higher-priority job blocks lower ones in its partition (Slurm ``sched/builtin``: "once any job
  in a partition is left pending, no other jobs in that partition will be scheduled",
  Slurm Scheduling Configuration Guide).
- ``priority_backfill``: QOS order + EASY backfill (Slurm ``sched/backfill`` with QOS priority).
- ``priority_preempt``: QOS order; a job that does not fit preempts running jobs of lower
  priority (Slurm ``PreemptType=preempt/qos``, ``PreemptMode=REQUEUE``); a victim is requeued
  with its remaining runtime (it had checkpointed) plus ``restart_overhead_s``.
- ``fairshare``: order by Slurm's classic fair-share factor per account (namespace)
  :math:`F = 2^{-U/S}` (Slurm "Classic Fairshare Algorithm"), U = the account's share of the
  decayed usage (half-life ``halflife_s``, Slurm's ``PriorityDecayHalfLife`` default is 7 days),
  S = its normalised shares; with EASY backfill.

Isolation
---------
- ``quotas={namespace: gpus}``: Kubernetes ``ResourceQuota`` on ``requests.nvidia.com/gpu``. A job
  whose request alone exceeds its namespace quota is rejected (the API server answers
  ``403 Forbidden: exceeded quota``); a job that would push the namespace's in-use GPUs over the
  quota is not admitted and stays pending without blocking other namespaces (its pods are never
  created, so the scheduler never sees them).
- ``inference_nodes=k``: a dedicated partition of ``k`` nodes that only inference jobs use (and
  that inference jobs are confined to), like a Slurm partition or a K8s node pool with a taint.

Metrics: GPU utilisation, wait-time percentiles per class, starvation (max inference wait),
GPU time idle while jobs wait, fragmentation. All event times are exact (no time steps).

The squeue / sinfo / ``kubectl describe quota`` parsers at the end read the tools' default text
output (formats from the squeue(1) and sinfo(1) man pages and kubectl's describe printer) and
raise :class:`SchedParseError` on garbage.
"""

from __future__ import annotations

import heapq
import math
import re
from dataclasses import dataclass, field

import numpy as np

from . import validate
from .parsers._common import ParseError, require_text

__all__ = ["CLASSES", "TRAINING", "INFERENCE", "INTERACTIVE", "DEFAULT_QOS", "POLICIES", "SLURM_DECAY_HALFLIFE_S",
           "JOB_SHAPES", "Workload", "make_workload", "generate_workload", "Schedule", "simulate", "compare_policies",
           "backfill_example", "mixed_cluster_schedule", "occupancy_image", "partition_tradeoff", "fairshare_factor",
           "SchedParseError", "slurm_time_s", "SqueueJob", "SQUEUE_STATES", "parse_squeue", "SinfoRow", "parse_sinfo",
           "sinfo_node_states", "QuotaStatus", "parse_kubectl_quota", "SAMPLE_SQUEUE", "SAMPLE_SINFO",
           "SAMPLE_KUBECTL_QUOTA"]

CLASSES = ("training", "inference", "interactive")
TRAINING, INFERENCE, INTERACTIVE = 0, 1, 2

# QOS priority per class used by the generator (higher = more important). Illustrative site
# policy, like `sacctmgr add qos high Priority=...`: only the order matters to the simulation.
DEFAULT_QOS = {"training": 1, "inference": 3, "interactive": 2}

# name -> (queue order, EASY backfill, preemption)
POLICIES = {
    "fifo": ("arrival", False, False),
    "backfill": ("arrival", True, False),
    "priority": ("priority", False, False),
    "priority_backfill": ("priority", True, False),
    "priority_preempt": ("priority", False, True),
    "fairshare": ("fairshare", True, False),
}

# Slurm PriorityDecayHalfLife default: 7-0 (7 days) (slurm.conf(5)).
SLURM_DECAY_HALFLIFE_S = 7 * 86400.0

# Workload generator shapes (illustrative assumptions of this course, not measurements):
# GPU request choices and probabilities, lognormal runtime median (s), sigma, clip range (s).
JOB_SHAPES = {
    "training": {"gpus": (8, 16, 32, 64), "p": (0.4, 0.3, 0.2, 0.1),
                 "median_s": 4 * 3600.0, "sigma": 1.0, "clip_s": (600.0, 72 * 3600.0)},
    "inference": {"gpus": (1, 2, 4, 8), "p": (0.4, 0.3, 0.2, 0.1),
                  "median_s": 15 * 60.0, "sigma": 0.8, "clip_s": (60.0, 4 * 3600.0)},
    "interactive": {"gpus": (1, 2), "p": (0.7, 0.3),
                    "median_s": 30 * 60.0, "sigma": 0.7, "clip_s": (300.0, 8 * 3600.0)},
}


# ---------------------------------------------------------------------------------------------
# Workload
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Workload:
    """Jobs as parallel arrays (index = job id). ``job_class`` indexes ``CLASSES``."""

    arrival_s: np.ndarray
    runtime_s: np.ndarray
    gpus: np.ndarray
    job_class: np.ndarray
    priority: np.ndarray
    namespace: tuple

    @property
    def n_jobs(self) -> int:
        return int(self.arrival_s.size)

    def gpu_seconds(self) -> float:
        return float(np.sum(self.gpus * self.runtime_s))

    def class_mask(self, cls: str) -> np.ndarray:
        return self.job_class == CLASSES.index(validate.choice("cls", cls, CLASSES))


def make_workload(arrival_s, runtime_s, gpus, job_class, priority=None, namespace=None) -> Workload:
    """Build a validated :class:`Workload` from per-job sequences.

    job_class: class names (``CLASSES``) or their indices. priority: QOS priorities (default
    ``DEFAULT_QOS`` per class). namespace: per-job namespace/account (default: the class name).
    """
    arr = np.atleast_1d(validate.positive("arrival_s", arrival_s, allow_zero=True)).astype(float)
    n = arr.size
    rt = np.atleast_1d(validate.positive("runtime_s", runtime_s)).astype(float)
    g = np.atleast_1d(validate.integer("gpus", gpus, lo=1)).astype(np.int64)
    cls_in = list(np.atleast_1d(job_class))
    cls = []
    for c in cls_in:
        if isinstance(c, str):
            cls.append(CLASSES.index(validate.choice("job_class", c, CLASSES)))
        else:
            cls.append(validate.integer("job_class", c, lo=0, hi=len(CLASSES) - 1))
    cls = np.asarray(cls, dtype=np.int64)
    if priority is None:
        pr = np.array([DEFAULT_QOS[CLASSES[c]] for c in cls], dtype=np.int64)
    else:
        pr = np.atleast_1d(validate.integer("priority", priority, lo=0)).astype(np.int64)
    ns = tuple(CLASSES[c] for c in cls) if namespace is None else tuple(str(x) for x in namespace)
    for name, a in (("runtime_s", rt), ("gpus", g), ("job_class", cls), ("priority", pr), ("namespace", ns)):
        if len(a) != n:
            raise ValueError(f"{name} must have one entry per job ({n}); got {len(a)}")
    return Workload(arr, rt, g, cls, pr, ns)


def generate_workload(n_jobs: int = 1000, n_gpus: int = 128, *, load: float = 0.9, inference_share: float = 0.3,
                      interactive_share: float = 0.1, gpus_per_node: int = 8, seed: int = 0,
                      qos: dict | None = None, max_job_gpus: int | None = None) -> Workload:
    """A seeded mixed workload whose offered load is exactly ``load``.

    Classes are drawn with probabilities (1 - inference - interactive, inference, interactive);
    GPU requests and lognormal runtimes follow ``JOB_SHAPES`` (illustrative). Arrivals are a
    Poisson process rescaled so that offered load = sum(gpus x runtime) / (n_gpus x T) = ``load``,
    with T the time of the last arrival. ``load`` > 1 means the queue grows without bound.
    ``max_job_gpus`` caps a job's request (a site limit such as a QOS ``MaxTRESPerJob=gres/gpu=``);
    default: half the cluster (at least one node), so no single job needs every GPU.
    """
    n_jobs = validate.integer("n_jobs", n_jobs, lo=1)
    n_gpus = validate.integer("n_gpus", n_gpus, lo=1)
    gpn = validate.integer("gpus_per_node", gpus_per_node, lo=1)
    load = validate.number("load", load, lo=0.0, hi=3.0, lo_open=True)
    inf = validate.number("inference_share", inference_share, lo=0.0, hi=1.0)
    itv = validate.number("interactive_share", interactive_share, lo=0.0, hi=1.0)
    if inf + itv > 1.0 + 1e-12:
        raise ValueError(f"inference_share + interactive_share must be <= 1; got {inf + itv:g}")
    cap = max(n_gpus // 2, min(gpn, n_gpus)) if max_job_gpus is None else validate.integer("max_job_gpus", max_job_gpus, lo=1)
    qos = dict(DEFAULT_QOS if qos is None else qos)
    for c in CLASSES:
        if c not in qos:
            raise validate.unknown_name("qos class", c, qos)
    rng = np.random.default_rng(validate.integer("seed", seed, lo=0))
    probs = np.array([max(0.0, 1.0 - inf - itv), inf, itv])
    cls = rng.choice(3, size=n_jobs, p=probs / probs.sum())
    gpus = np.zeros(n_jobs, dtype=np.int64)
    rt = np.zeros(n_jobs)
    for k, name in enumerate(CLASSES):
        m = cls == k
        shape = JOB_SHAPES[name]
        choices = np.array(shape["gpus"])
        p = np.array(shape["p"])
        ok = (choices <= min(n_gpus, cap)) & ((choices <= gpn) | (choices % gpn == 0))
        if not ok.any():
            raise ValueError(f"n_gpus={n_gpus}, gpus_per_node={gpn}, max_job_gpus={cap} allow no {name} job size "
                             f"{shape['gpus']}")
        gpus[m] = rng.choice(choices[ok], size=int(m.sum()), p=p[ok] / p[ok].sum())
        lo, hi = shape["clip_s"]
        rt[m] = np.clip(shape["median_s"] * np.exp(shape["sigma"] * rng.standard_normal(int(m.sum()))), lo, hi)
    gaps = rng.exponential(1.0, size=n_jobs)
    t = np.cumsum(gaps) - gaps[0]
    span_s = float(np.sum(gpus * rt)) / (load * n_gpus)
    arrival = t / t[-1] * span_s if t[-1] > 0 else np.zeros(n_jobs)
    prio = np.array([qos[CLASSES[c]] for c in cls], dtype=np.int64)
    return Workload(arrival, rt, gpus, cls.astype(np.int64), prio, tuple(CLASSES[c] for c in cls))


# ---------------------------------------------------------------------------------------------
# Result
# ---------------------------------------------------------------------------------------------
@dataclass
class Schedule:
    """Result of :func:`simulate`.

    Per job: ``start_s`` (first start), ``end_s`` (completion), ``wait_s`` (first start - arrival),
    ``preemptions``, ``rejected`` (never admitted; its start/end/wait are +inf).
    Per GPU segment (one row per GPU a job held for one uninterrupted run): ``seg_job``,
    ``seg_gpu`` (global GPU index = node x gpus_per_node + slot), ``seg_t0_s``, ``seg_t1_s``.
    Timeline (piecewise constant after each event time ``tl_t_s``): ``tl_busy`` GPUs,
    ``tl_waiting`` admitted jobs waiting, ``tl_free_partial`` free GPUs on partly used nodes,
    ``tl_ns_used`` (dict namespace -> GPUs in use). ``reservation_s``: job -> first EASY
    reservation (shadow time) it got as the blocked head job.
    """

    workload: Workload
    n_gpus: int
    gpus_per_node: int
    policy: str
    start_s: np.ndarray
    end_s: np.ndarray
    wait_s: np.ndarray
    preemptions: np.ndarray
    rejected: np.ndarray
    seg_job: np.ndarray
    seg_gpu: np.ndarray
    seg_t0_s: np.ndarray
    seg_t1_s: np.ndarray
    tl_t_s: np.ndarray
    tl_busy: np.ndarray
    tl_waiting: np.ndarray
    tl_free_partial: np.ndarray
    tl_ns_used: dict
    reservation_s: dict = field(default_factory=dict)

    # -- metrics ------------------------------------------------------------------------------
    @property
    def makespan_s(self) -> float:
        done = ~self.rejected
        if not done.any():
            return 0.0
        return float(self.end_s[done].max() - self.workload.arrival_s.min())

    def utilisation(self, until_s: float | None = None) -> float:
        """Busy GPU-seconds / (n_gpus x window); window = first arrival .. last completion
        (or .. ``until_s``, e.g. the last arrival, to leave out the final drain)."""
        t0 = float(self.workload.arrival_s.min())
        t1 = t0 + self.makespan_s if until_s is None else float(validate.positive("until_s", until_s))
        if t1 <= t0:
            return 0.0
        busy = np.clip(np.minimum(self.seg_t1_s, t1) - np.maximum(self.seg_t0_s, t0), 0.0, None).sum()
        return float(busy / (self.n_gpus * (t1 - t0)))

    def wait_stats(self) -> dict:
        """class -> {'n', 'p50_s', 'p95_s', 'max_s', 'mean_s'} over admitted jobs (zeros if none)."""
        out = {}
        for k, name in enumerate(CLASSES):
            w = self.wait_s[(self.workload.job_class == k) & ~self.rejected]
            if w.size == 0:
                out[name] = {"n": 0, "p50_s": 0.0, "p95_s": 0.0, "max_s": 0.0, "mean_s": 0.0}
            else:
                p50, p95 = np.percentile(w, (50, 95))
                out[name] = {"n": int(w.size), "p50_s": float(p50), "p95_s": float(p95), "max_s": float(w.max()),
                             "mean_s": float(w.mean())}
        return out

    @property
    def starvation_s(self) -> float:
        """Longest wait of any inference job (0 if there is none)."""
        return self.wait_stats()["inference"]["max_s"]

    def _intervals(self):
        t = self.tl_t_s
        dt = np.diff(np.append(t, t[-1] if t.size else 0.0))
        return dt

    def idle_while_waiting(self) -> float:
        """Share of GPU time that was idle while at least one admitted job was waiting."""
        dt = self._intervals()
        total = dt.sum() * self.n_gpus
        if total <= 0:
            return 0.0
        idle = (self.n_gpus - self.tl_busy) * dt * (self.tl_waiting > 0)
        return float(idle.sum() / total)

    def fragmentation(self) -> float:
        """Time-averaged share of the free GPUs that sit on partly used nodes (unusable by a
        whole-node job), over the intervals where GPUs are free and a job waits."""
        dt = self._intervals()
        free = self.n_gpus - self.tl_busy
        m = (self.tl_waiting > 0) & (free > 0) & (dt > 0)
        if not m.any():
            return 0.0
        return float(np.sum(self.tl_free_partial[m] / free[m] * dt[m]) / dt[m].sum())

    def summary(self) -> dict:
        ws = self.wait_stats()
        starvation = ws["inference"]["max_s"]
        return {"policy": self.policy, "utilisation": self.utilisation(),
                "inference_p50_s": ws["inference"]["p50_s"], "inference_p95_s": ws["inference"]["p95_s"],
                "training_p50_s": ws["training"]["p50_s"], "training_p95_s": ws["training"]["p95_s"],
                "interactive_p95_s": ws["interactive"]["p95_s"], "starvation_s": starvation,
                "idle_while_waiting": self.idle_while_waiting(), "fragmentation": self.fragmentation(),
                "preemptions": int(self.preemptions.sum()), "rejected": int(self.rejected.sum()),
                "makespan_s": self.makespan_s}


# ---------------------------------------------------------------------------------------------
# Simulation
# ---------------------------------------------------------------------------------------------
def _fit(free, g, gpn, nodes):
    """Placement [(node, gpus)] of a ``g``-GPU job on ``nodes`` given per-node ``free``, or None."""
    if g <= gpn:
        best, bf = -1, gpn + 1
        for n in nodes:
            f = free[n]
            if g <= f < bf:
                best, bf = n, f
                if f == g:
                    break
        return None if best < 0 else [(best, g)]
    k = g // gpn
    picked = [n for n in nodes if free[n] == gpn]
    if len(picked) < k:
        return None
    return [(n, gpn) for n in picked[:k]]


def simulate(workload: Workload, n_gpus: int = 128, policy: str = "fifo", *, gpus_per_node: int = 8,
             quotas: dict | None = None, shares: dict | None = None, inference_nodes: int = 0,
             halflife_s: float = SLURM_DECAY_HALFLIFE_S, restart_overhead_s: float = 0.0) -> Schedule:
    """Run ``workload`` on ``n_gpus`` GPUs under ``policy`` (see module docstring); deterministic.

    quotas: {namespace: max GPUs in use} (K8s ResourceQuota ``requests.nvidia.com/gpu``).
    shares: {namespace: fair-share shares} for ``fairshare`` (default: equal shares).
    inference_nodes: nodes reserved for (and confining) inference jobs; 0 = one shared pool.
    """
    if not isinstance(workload, Workload):
        raise ValueError(f"workload must be a Workload (make_workload / generate_workload); got {type(workload).__name__}")
    if policy not in POLICIES:
        raise validate.unknown_name("scheduling policy", policy, POLICIES)
    order, backfill, preempt = POLICIES[policy]
    n_gpus = validate.integer("n_gpus", n_gpus, lo=1)
    gpn = validate.integer("gpus_per_node", gpus_per_node, lo=1)
    if n_gpus % gpn:
        raise ValueError(f"n_gpus must be a multiple of gpus_per_node ({gpn}); got {n_gpus}")
    n_nodes = n_gpus // gpn
    k_inf = validate.integer("inference_nodes", inference_nodes, lo=0, hi=n_nodes)
    halflife_s = validate.positive("halflife_s", halflife_s)
    overhead = validate.positive("restart_overhead_s", restart_overhead_s, allow_zero=True)
    wl = workload
    N = wl.n_jobs
    bad = (wl.gpus > gpn) & (wl.gpus % gpn != 0)
    if bad.any():
        j = int(np.argmax(bad))
        raise ValueError(f"gpus of a multi-node job must be a multiple of gpus_per_node ({gpn}); job {j} asks {wl.gpus[j]}")
    namespaces = sorted(set(wl.namespace))
    quotas = {} if quotas is None else dict(quotas)
    for ns, q in quotas.items():
        validate.integer(f"quotas[{ns!r}]", q, lo=0)
    shares = {ns: 1.0 for ns in namespaces} if shares is None else dict(shares)
    for ns in namespaces:
        if ns not in shares:
            raise validate.unknown_name("namespace in shares", ns, shares)
        validate.positive(f"shares[{ns!r}]", shares[ns])
    share_tot = sum(shares[ns] for ns in namespaces)

    # partitions: 0 = general pool, 1 = inference pool (only when k_inf > 0)
    part_nodes = [list(range(k_inf, n_nodes)), list(range(k_inf))] if k_inf else [list(range(n_nodes))]
    part = [int(x) for x in np.where((wl.job_class == INFERENCE) & (k_inf > 0), 1, 0)]
    n_parts = len(part_nodes)

    arrival = wl.arrival_s
    gpus = [int(x) for x in wl.gpus]
    prio = [int(x) for x in wl.priority]
    ns_of = list(wl.namespace)
    rem = [float(x) for x in wl.runtime_s]
    start = np.full(N, np.inf)
    end = np.full(N, np.inf)
    npre = np.zeros(N, dtype=np.int64)
    rejected = np.zeros(N, dtype=bool)

    free = [gpn] * n_nodes
    free_slots = [list(range(gpn)) for _ in range(n_nodes)]
    node_jobs = [set() for _ in range(n_nodes)]
    running: dict[int, list] = {}          # job -> [t_start, t_end, alloc [(node, [slots])], version]
    version = [0] * N
    ns_used = {ns: 0 for ns in namespaces}
    usage = {ns: 0.0 for ns in namespaces}
    pending: list[int] = []
    segs: list[tuple] = []
    reservation: dict[int, float] = {}
    tl_t, tl_busy, tl_wait, tl_fp = [], [], [], []
    tl_ns = {ns: [] for ns in namespaces}

    events = [(float(arrival[j]), 1, j, 0) for j in range(N)]   # kind 0 = completion first, 1 = arrival
    heapq.heapify(events)

    def capacity(p):
        return len(part_nodes[p]) * gpn

    def do_start(j, place, t):
        alloc = []
        for n, c in place:
            slots = free_slots[n][:c]
            del free_slots[n][:c]
            free[n] -= c
            node_jobs[n].add(j)
            alloc.append((n, slots))
        if not math.isfinite(start[j]):
            start[j] = t
        t_end = t + rem[j]
        running[j] = [t, t_end, alloc, version[j]]
        ns_used[ns_of[j]] += gpus[j]
        heapq.heappush(events, (t_end, 0, j, version[j]))

    def do_release(j, t):
        t0, _, alloc, _ = running.pop(j)
        for n, slots in alloc:
            free[n] += len(slots)
            free_slots[n].extend(slots)
            free_slots[n].sort()
            node_jobs[n].discard(j)
            for s in slots:
                segs.append((j, n * gpn + s, t0, t))
        ns_used[ns_of[j]] -= gpus[j]
        return t0

    q_of = [quotas.get(ns) for ns in ns_of]

    def quota_ok(j):
        q = q_of[j]
        return q is None or ns_used[ns_of[j]] + gpus[j] <= q

    def shadow_for(h, t):
        """EASY reservation of head job h: (shadow time, per-node free GPUs at that time)."""
        nodes = part_nodes[part[h]]
        fas = list(free)
        ends = sorted((r[1], j) for j, r in running.items() if part[j] == part[h])
        shadow = t
        i = 0
        while _fit(fas, gpus[h], gpn, nodes) is None and i < len(ends):
            shadow = ends[i][0]
            while i < len(ends) and ends[i][0] <= shadow:
                for n, slots in running[ends[i][1]][2]:
                    fas[n] += len(slots)
                i += 1
        return shadow, fas

    def try_preempt(h, t):
        nodes = part_nodes[part[h]]
        g = gpus[h]
        victims_ok = lambda j: prio[j] < prio[h]  # noqa: E731
        best = None
        if g <= gpn:
            for n in nodes:
                need = g - free[n]
                if need <= 0:
                    continue
                cand = sorted((j for j in node_jobs[n] if victims_ok(j)), key=lambda j: (prio[j], -running[j][0]))
                got, vic, cost = 0, [], 0
                for j in cand:
                    if got >= need:
                        break
                    got += sum(len(s) for nn, s in running[j][2] if nn == n)
                    vic.append(j)
                    cost += gpus[j]
                if got >= need and (best is None or cost < best[0]):
                    best = (cost, vic)
        else:
            k = g // gpn
            opts = []
            for n in nodes:
                if all(victims_ok(j) for j in node_jobs[n]):
                    opts.append((sum(gpus[j] for j in node_jobs[n]), n))
            if len(opts) >= k:
                opts.sort()
                vic = sorted({j for _, n in opts[:k] for j in node_jobs[n]})
                best = (0, vic)
        if best is None:
            return False
        for v in best[1]:
            t0 = do_release(v, t)
            rem[v] = rem[v] - (t - t0) + overhead
            version[v] += 1
            npre[v] += 1
            pending.append(v)
        return True

    arr_l = [float(x) for x in arrival]
    static_key = ([(arr_l[j], j) for j in range(N)] if order == "arrival"
                  else [(-prio[j], arr_l[j], j) for j in range(N)])

    def sort_key():
        if order != "fairshare":
            return static_key.__getitem__
        tot = sum(usage.values())
        fs = {ns: 2.0 ** (-(usage[ns] / tot if tot > 0 else 0.0) / (shares[ns] / share_tot)) for ns in namespaces}
        return lambda j: (-fs[ns_of[j]], arr_l[j], j)

    def schedule_pass(t):
        pending.sort(key=sort_key())
        heads: dict[int, list] = {}     # partition -> [head, shadow, free_at_shadow]
        started = []
        cap = {}                        # partition -> (max free GPUs on a node, fully free nodes)

        def fits_somewhere(j, p):
            if p not in cap:
                fr = [free[n] for n in part_nodes[p]]
                cap[p] = (max(fr), fr.count(gpn))
            mx, full = cap[p]
            return gpus[j] <= mx if gpus[j] <= gpn else gpus[j] // gpn <= full
        for j in pending:
            p = part[j]
            if not quota_ok(j):
                continue
            hd = heads.get(p)
            if hd is not None and not backfill:
                if len(heads) == n_parts:
                    break               # strict order: every partition has a blocked head
                continue
            if hd is None:
                place = _fit(free, gpus[j], gpn, part_nodes[p])
                if place is None and preempt and try_preempt(j, t):
                    place = _fit(free, gpus[j], gpn, part_nodes[p])
                if place is not None:
                    do_start(j, place, t)
                    started.append(j)
                    continue
                if not backfill:
                    heads[p] = [j, None, None]
                    continue
                shadow, fas = shadow_for(j, t)
                reservation.setdefault(j, shadow)
                heads[p] = [j, shadow, fas]
                continue
            if not fits_somewhere(j, p):
                continue
            place = _fit(free, gpus[j], gpn, part_nodes[p])
            h, shadow, fas = hd
            if t + rem[j] <= shadow:
                do_start(j, place, t)
                started.append(j)
                cap.pop(p, None)
                continue
            fas2 = list(fas)
            for n, c in place:
                fas2[n] -= c
            if _fit(fas2, gpus[h], gpn, part_nodes[p]) is not None:
                hd[2] = fas2
                do_start(j, place, t)
                started.append(j)
                cap.pop(p, None)
        if started:
            s = set(started)
            pending[:] = [j for j in pending if j not in s]

    t_prev = float(arrival.min()) if N else 0.0
    while events:
        t = events[0][0]
        dt = t - t_prev
        if dt > 0:
            decay = 2.0 ** (-dt / halflife_s)
            for ns in namespaces:
                usage[ns] = usage[ns] * decay + ns_used[ns] * dt
        t_prev = t
        while events and events[0][0] == t:
            _, kind, j, ver = heapq.heappop(events)
            if kind == 0:
                if j in running and running[j][3] == ver:
                    do_release(j, t)
                    end[j] = t
            else:
                q = quotas.get(ns_of[j])
                if gpus[j] > capacity(part[j]) or (q is not None and gpus[j] > q):
                    rejected[j] = True
                else:
                    pending.append(j)
        schedule_pass(t)
        busy = n_gpus - sum(free)
        tl_t.append(t)
        tl_busy.append(busy)
        tl_wait.append(sum(1 for j in pending if quota_ok(j)) if quotas else len(pending))
        tl_fp.append(sum(f for f in free if 0 < f < gpn))
        for ns in namespaces:
            tl_ns[ns].append(ns_used[ns])

    wait = np.where(rejected, np.inf, start - arrival)
    seg = np.array(segs, dtype=float).reshape(-1, 4)
    o = np.lexsort((seg[:, 2], seg[:, 1])) if seg.size else np.arange(0)
    seg = seg[o]
    return Schedule(wl, n_gpus, gpn, policy, start, end, wait, npre, rejected,
                    seg[:, 0].astype(np.int64), seg[:, 1].astype(np.int64), seg[:, 2], seg[:, 3],
                    np.array(tl_t), np.array(tl_busy, dtype=np.int64), np.array(tl_wait, dtype=np.int64),
                    np.array(tl_fp, dtype=np.int64), {ns: np.array(v, dtype=np.int64) for ns, v in tl_ns.items()},
                    reservation)


def compare_policies(workload: Workload, n_gpus: int = 128, policies=("fifo", "backfill", "priority",
                     "priority_backfill", "priority_preempt", "fairshare"), **kw) -> dict:
    """policy -> ``Schedule.summary()`` for the same workload."""
    return {p: simulate(workload, n_gpus, p, **kw).summary() for p in policies}


def backfill_example() -> Workload:
    """Five hand-made jobs on 16 GPUs (2 nodes) where EASY backfill starts jobs 2 and 4 early (ch21 §4).

    job 0: 8 GPUs, 1 h; job 1: 16 GPUs, 30 min (needs both nodes: the blocked head); job 2: 4-GPU
    inference, 40 min; job 3: 4 GPUs, 90 min; job 4: 2-GPU interactive, 10 min; one arrival a minute.
    """
    return make_workload(arrival_s=[0, 60, 120, 180, 240], runtime_s=[3600, 1800, 2400, 5400, 600],
                         gpus=[8, 16, 4, 4, 2], job_class=["training", "training", "inference",
                                                            "training", "interactive"])


def mixed_cluster_schedule(policy: str = "fifo", inference_share: float = 0.3, load: float = 0.9,
                           train_quota_gpus: int = 64, *, n_gpus: int = 64, n_jobs: int = 160, seed: int = 0) -> dict:
    """Seed-003 scene 3 in small: a seeded mixed workload of ``n_jobs`` on ``n_gpus`` GPUs under ``policy``,
    with the training namespace capped at ``train_quota_gpus`` (no cap when >= n_gpus).

    Returns {'schedule', 'summary', 'waits', 'quota', 'n_inference'} (the ch21 explorer draws this).
    """
    wl = generate_workload(n_jobs, n_gpus, load=load, inference_share=inference_share, seed=seed)
    q = validate.integer("train_quota_gpus", train_quota_gpus, lo=8, hi=n_gpus)
    quotas = None if q >= n_gpus else {"training": q}
    sched = simulate(wl, n_gpus, policy, quotas=quotas)
    return {"schedule": sched, "summary": sched.summary(), "waits": sched.wait_stats(), "quota": q,
            "n_inference": int(wl.class_mask("inference").sum())}


def occupancy_image(sched: Schedule, n_bins: int = 600, t0_s: float | None = None,
                    t1_s: float | None = None) -> tuple[np.ndarray, float, float]:
    """GPU x time-bin image of the class occupying each GPU (0 idle, 1 + class index), vectorised.

    A bin shows the class that held the GPU at the bin's midpoint. Returns (image, t0_s, t1_s).
    """
    n_bins = validate.integer("n_bins", n_bins, lo=1)
    t0 = float(sched.workload.arrival_s.min()) if t0_s is None else float(t0_s)
    t1 = t0 + max(sched.makespan_s, 1.0) if t1_s is None else float(t1_s)
    mids = t0 + (np.arange(n_bins) + 0.5) * (t1 - t0) / n_bins
    b0 = np.searchsorted(mids, sched.seg_t0_s, side="left")      # first bin whose midpoint >= start
    b1 = np.searchsorted(mids, sched.seg_t1_s, side="left")      # first bin whose midpoint >= end
    cls = sched.workload.job_class[sched.seg_job] + 1
    diff = np.zeros((sched.n_gpus, n_bins + 1), dtype=np.int64)
    np.add.at(diff, (sched.seg_gpu, b0), cls)
    np.add.at(diff, (sched.seg_gpu, b1), -cls)
    return np.cumsum(diff[:, :-1], axis=1), t0, t1


def partition_tradeoff(n_gpus: int = 64, n_jobs: int = 400, load: float = 0.85, inference_share: float = 0.3,
                       seed: int = 0, max_nodes: int = 4) -> dict:
    """Dedicated inference nodes k = 0..max_nodes (FIFO + backfill) vs one shared pool with QOS priority."""
    wl = generate_workload(n_jobs, n_gpus, load=load, inference_share=inference_share, seed=seed)
    ks = list(range(0, validate.integer("max_nodes", max_nodes, lo=1) + 1))
    rows = [simulate(wl, n_gpus, "backfill", inference_nodes=k).summary() for k in ks]
    shared = simulate(wl, n_gpus, "priority_backfill").summary()
    return {"k": ks, "rows": rows, "shared_priority": shared}


def fairshare_factor(usage_share, norm_shares):
    """Slurm classic fair-share factor F = 2^(-U/S) (Slurm docs, "Classic Fairshare Algorithm").

    usage_share U: the account's share of the (decayed) cluster usage, in [0, 1];
    norm_shares S: its normalised shares, in (0, 1]. F = 1 for an idle account, 0.5 when it used
    exactly its share, -> 0 for heavy over-use. Vectorised.
    """
    u = validate.number("usage_share", usage_share, lo=0.0, hi=1.0)
    s = validate.fraction("norm_shares", norm_shares)
    f = np.power(2.0, -np.asarray(u, dtype=float) / np.asarray(s, dtype=float))
    return float(f) if f.ndim == 0 else f


# ---------------------------------------------------------------------------------------------
# Parsers of squeue / sinfo / kubectl describe quota text
# ---------------------------------------------------------------------------------------------
class SchedParseError(ParseError):
    """Raised on garbage, empty or truncated squeue / sinfo / kubectl output."""


def _text(text, tool: str) -> str:
    try:
        return require_text(text, tool)
    except SchedParseError:
        raise
    except ParseError as exc:
        raise SchedParseError(str(exc)) from None


def slurm_time_s(text: str):
    """Slurm time string -> seconds: 'MM:SS', 'HH:MM:SS', 'D-HH[:MM[:SS]]', 'MM'; None for
    'UNLIMITED' / 'INFINITE' / 'N/A'. Raises SchedParseError otherwise (squeue(1) TIME, sinfo(1) TIMELIMIT)."""
    s = str(text).strip()
    if s.upper() in ("UNLIMITED", "INFINITE", "N/A", "NONE"):
        return None
    m = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", s)
    if not m:
        raise SchedParseError(f"slurm time: cannot read {text!r} (expected [D-]HH:MM:SS or MM:SS)")
    d, a, b, c = m.groups()
    parts = [int(x) for x in (a, b, c) if x is not None]
    if d is not None:               # D-HH, D-HH:MM, D-HH:MM:SS
        h, mi, se = (parts + [0, 0])[:3]
        return int(d) * 86400 + h * 3600 + mi * 60 + se
    if len(parts) == 3:
        return parts[0] * 3600 + parts[1] * 60 + parts[2]
    if len(parts) == 2:
        return parts[0] * 60 + parts[1]
    return parts[0] * 60            # a bare number is minutes (sinfo TIMELIMIT)


@dataclass(frozen=True)
class SqueueJob:
    job_id: str
    partition: str
    name: str
    user: str
    state: str
    time_s: int
    nodes: int
    nodelist: str
    reason: str

    @property
    def pending(self) -> bool:
        return self.state == "PD"


SQUEUE_STATES = {"PD", "R", "CG", "CD", "CF", "CA", "F", "TO", "PR", "NF", "S", "ST", "RQ", "RH", "RF", "RS", "SE",
                 "SI", "SO", "OOM", "BF", "DL", "RD", "RV"}


def parse_squeue(text) -> list[SqueueJob]:
    """Parse ``squeue`` default output (format ``%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R``, squeue(1)).

    The last column is the node list for running jobs and ``(Reason)`` for pending ones.
    """
    text = _text(text, "squeue")
    lines = [ln for ln in text.split("\n") if ln.strip()]
    head = lines[0].split()
    want = ["JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES"]
    if head[:7] != want or len(head) != 8 or not head[7].startswith("NODELIST"):
        raise SchedParseError(f"squeue: expected the header {' '.join(want)} NODELIST(REASON); got {lines[0].strip()!r}")
    jobs = []
    for ln in lines[1:]:
        f = ln.split(None, 7)
        if len(f) != 8:
            raise SchedParseError(f"squeue: a row needs 8 columns; got {len(f)} in {ln.strip()!r}")
        jid, partn, name, user, st, tm, nn, last = f
        if not re.fullmatch(r"\d+(?:_\d+|_\[[\d\-,%]+\])?(?:\+\d+)?", jid):
            raise SchedParseError(f"squeue: JOBID {jid!r} is not a Slurm job id in {ln.strip()!r}")
        if st not in SQUEUE_STATES:
            raise SchedParseError(f"squeue: unknown job state {st!r} in {ln.strip()!r}")
        if not nn.isdigit():
            raise SchedParseError(f"squeue: NODES {nn!r} is not an integer in {ln.strip()!r}")
        last = last.strip()
        reason = last[1:-1] if last.startswith("(") and last.endswith(")") else ""
        nodelist = "" if reason else last
        jobs.append(SqueueJob(jid, partn, name, user, st, int(slurm_time_s(tm) or 0), int(nn), nodelist, reason))
    return jobs


@dataclass(frozen=True)
class SinfoRow:
    partition: str
    default: bool
    avail: str
    timelimit_s: int | None
    nodes: int
    state: str
    nodelist: str


def parse_sinfo(text) -> list[SinfoRow]:
    """Parse ``sinfo`` default output (``PARTITION AVAIL TIMELIMIT NODES STATE NODELIST``, sinfo(1));
    a ``*`` after the partition name marks the default partition."""
    text = _text(text, "sinfo")
    lines = [ln for ln in text.split("\n") if ln.strip()]
    want = ["PARTITION", "AVAIL", "TIMELIMIT", "NODES", "STATE", "NODELIST"]
    if lines[0].split() != want:
        raise SchedParseError(f"sinfo: expected the header {' '.join(want)}; got {lines[0].strip()!r}")
    rows = []
    for ln in lines[1:]:
        f = ln.split()
        if len(f) != 6:
            raise SchedParseError(f"sinfo: a row needs 6 columns; got {len(f)} in {ln.strip()!r}")
        p, avail, tl, nn, state, nl = f
        if not nn.isdigit():
            raise SchedParseError(f"sinfo: NODES {nn!r} is not an integer in {ln.strip()!r}")
        rows.append(SinfoRow(p.rstrip("*"), p.endswith("*"), avail, slurm_time_s(tl), int(nn), state, nl))
    return rows


def sinfo_node_states(rows: list[SinfoRow], partition: str | None = None) -> dict:
    """state -> node count (``*``/``~``/``#`` state suffixes stripped), optionally for one partition."""
    out: dict[str, int] = {}
    for r in rows:
        if partition is None or r.partition == partition:
            s = r.state.rstrip("*~#!%$@^-")
            out[s] = out.get(s, 0) + r.nodes
    return out


@dataclass(frozen=True)
class QuotaStatus:
    name: str
    namespace: str
    used: dict
    hard: dict

    def gpu(self, key: str = "requests.nvidia.com/gpu") -> tuple[int, int]:
        """(used, hard) GPUs of the quota line ``key``."""
        if key not in self.hard:
            raise validate.unknown_name("quota resource", key, self.hard)
        try:
            return int(self.used.get(key, "0")), int(self.hard[key])
        except ValueError:
            raise SchedParseError(f"kubectl describe quota: {key} values are not integers: "
                                  f"{self.used.get(key)!r} / {self.hard[key]!r}") from None


def parse_kubectl_quota(text) -> list[QuotaStatus]:
    """Parse ``kubectl describe quota`` (or ``describe resourcequota``) text: for each quota,
    ``Name:``, ``Namespace:`` and the ``Resource  Used  Hard`` table."""
    text = _text(text, "kubectl describe quota")
    out, cur, in_table = [], None, False
    for ln in text.split("\n"):
        s = ln.strip()
        if not s:
            continue
        if s.startswith("Name:"):
            if cur is not None:
                out.append(cur)
            cur = {"name": s.split(":", 1)[1].strip(), "namespace": "", "used": {}, "hard": {}}
            in_table = False
            continue
        if cur is None:
            raise SchedParseError(f"kubectl describe quota: expected 'Name:' first; got {s!r}")
        if s.startswith("Namespace:"):
            cur["namespace"] = s.split(":", 1)[1].strip()
        elif s.split() == ["Resource", "Used", "Hard"]:
            in_table = True
        elif set(s.replace(" ", "")) == {"-"}:
            continue
        elif in_table:
            f = s.split()
            if len(f) != 3:
                raise SchedParseError(f"kubectl describe quota: a resource row needs 3 columns; got {s!r}")
            cur["used"][f[0]] = f[1]
            cur["hard"][f[0]] = f[2]
    if cur is not None:
        out.append(cur)
    quotas = [QuotaStatus(c["name"], c["namespace"], c["used"], c["hard"]) for c in out]
    if not quotas or any(not q.hard for q in quotas):
        raise SchedParseError("kubectl describe quota: no 'Resource Used Hard' table found")
    return quotas


# Sample outputs in the tools' real formats (values illustrative, written for this course).
SAMPLE_SQUEUE = """\
             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)
             41873       gpu pretrain    alice  R 2-03:11:45      8 gpu[001-008]
             41902       gpu  sft-7b      bob  R    5:42:10      2 gpu[009-010]
             41977       gpu llm-eval    carol  R      12:03      1 gpu011
             41990       gpu pretrain    alice PD       0:00      8 (Resources)
             41991       gpu  serve-a     dave PD       0:00      1 (Priority)
             41995       gpu  sweep-3      bob PD       0:00      2 (QOSMaxGRESPerUser)
"""

SAMPLE_SINFO = """\
PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST
gpu*         up 7-00:00:00     11  alloc gpu[001-011]
gpu*         up 7-00:00:00      3    mix gpu[012-014]
gpu*         up 7-00:00:00      1  drain gpu015
gpu*         up 7-00:00:00      1   idle gpu016
infer        up 1-00:00:00      2    mix infer[01-02]
"""

SAMPLE_KUBECTL_QUOTA = """\
Name:                    gpu-quota
Namespace:               team-infer
Resource                 Used  Hard
--------                 ----  ----
requests.nvidia.com/gpu  12    16
"""
