"""The layered engine of ``labutil.troubleshoot`` (ch28): network -> storage -> GPU -> software.

Everything here is re-exported by the package; two entry points:

- :func:`triage` (``labutil.troubleshoot.triage``): what an on-call engineer runs. Paste anything -
  one text, a list of texts or paths, a mapping name -> text - and it recognises every fragment
  (:mod:`labutil.troubleshoot.recognise`), scores the four layers, and returns a :class:`Diagnosis`
  with ``confidence``, the quoted ``reasons`` and ``next_checks`` cheapest first; thresholds from a
  :class:`labutil.cluster.Cluster` (``cluster=``) or an explicit :class:`labutil.health.AcceptanceSpec`.
  ``python -m labutil triage FILE... | -`` is its command line. Incident walkthroughs from public
  threads: :func:`walkthrough_names`, :func:`triage_walkthrough`.
- :func:`diagnose`: the teaching engine below, over evidence already sorted by tool.

The engine (:func:`diagnose`) takes a symptom and whatever evidence is at hand (raw tool output in
the tools' real formats, keyed by :data:`EVIDENCE`), walks the four layers IN ORDER, runs every
check of a layer whose evidence is available (reusing the rules of :mod:`labutil.health` and the
triage helpers of :mod:`labutil.reliability`), and stops at the first layer that fails: later
layers are reported as ``not_run`` (the layered method never needs them). It returns a
:class:`Diagnosis`: per layer the checks run and their verdicts, the first failing layer and
check, the next command to run, and numbers that say how much of the symptom the fault explains:

- network: step time with the MEASURED inter-node busbw vs the EXPECTED one (``labutil.health``
  ring bound x NCCL efficiency), using t = S x 2(n-1)/n / busbw (nccl-tests ``doc/PERFORMANCE.md``)
  and ``labutil.comm.step_time``;
- storage: required read GB/s (``labutil.storage.data_read_requirements``) vs the pool read GB/s
  measured by fio, and the stall per checkpoint burst (``labutil.storage.read_write_interference``);
- GPU: XID meaning/action (``labutil.reliability.triage_xid``) and per-GPU memory action
  (``reliability.gpu_memory_action``);
- software: PyTorch ProcessGroupNCCL watchdog lines (format of torch >= 2.2
  ``ProcessGroupNCCL.cpp``: ``[Rank r] Watchdog caught collective operation timeout:
  WorkNCCL(SeqNum=..., OpType=..., ...)``): a collective mismatch (ranks in different operations)
  is a software fault; ranks that never reported point to a dead process.

Cost of the search (:func:`search_cost`): the layered order runs checks in ladder order until the
first failing one; a random order of the same N checks with k failing ones needs on average
(N + 1) / (k + 1) checks (expected minimum of a random k-subset of {1..N}, a standard order
statistic), and E[time] = sum(t_pass) / (k + 1) + mean(t_fail) (each passing check precedes all k
failing ones with probability 1 / (k + 1)).

Check durations in :data:`CHECKS` are COURSE ESTIMATES of wall time on one node, except
``dcgmi diag -r 3`` (~15 min, DCGM ``dcgmi diag`` reference: level 1 seconds, level 2 ~2 min,
level 3 ~15 min).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import numpy as np

from .. import comm, data_files, fioparse, health, reliability, storage, validate
from ..cluster import Cluster
from .. import parsers as P
from ..health import Finding
from ..tables import MarkdownTable
from ..parsers import samples as tool_samples
from ..parsers._common import require_text

__all__ = ["LAYERS", "EVIDENCE", "CHECKS", "CheckSpec", "CheckResult", "LayerResult", "Diagnosis", "Workload",
           "WatchdogEvent", "parse_watchdog_log", "diagnose", "search_cost", "expected_random_checks",
           "comm_time_from_busbw_s", "network_slowdown", "storage_shortfall", "straggler_step_s",
           "straggler_slowdown", "blind_restart_cost", "pair_test_plan", "pair_test_rounds", "case_names", "case", "load_case",
           "diagnose_case", "LAYER_LADDER", "VERDICTS", "missing_ranks", "MAX_RANKS"]

LAYERS = ("network", "storage", "gpu", "software")
VERDICTS = ("pass", "warn", "fail", "unknown", "not_run")

#: evidence key -> (layer, what it is). Values passed to :func:`diagnose` are raw text (or parsed objects).
EVIDENCE = {
    "ibstat": ("network", "ibstat"),
    "perfquery_before": ("network", "perfquery -x (first sample)"),
    "perfquery_after": ("network", "perfquery -x (second sample, minutes later)"),
    "nccl_log": ("network", "NCCL_DEBUG=INFO log"),
    "nccl_tests": ("network", "all_reduce_perf between the job's nodes"),
    "lfs_df": ("storage", "lfs df -h"),
    "fio_read": ("storage", "fio read test of the data pool (normal text output)"),
    "dmesg": ("gpu", "dmesg | grep -i xid"),
    "nvidia_smi_q": ("gpu", "nvidia-smi -q"),
    "dcgmi_diag": ("gpu", "dcgmi diag -r 3"),
    "watchdog_log": ("software", "PyTorch ProcessGroupNCCL watchdog lines of the job log"),
}


@dataclass(frozen=True)
class CheckSpec:
    name: str
    layer: str
    evidence: tuple
    command: str
    minutes: float


#: The ladder: checks in the order the layered method runs them (durations: see module docstring).
CHECKS = (
    CheckSpec("ib_ports", "network", ("ibstat",), "ibstat", 1.0),
    CheckSpec("ib_counters", "network", ("perfquery_before", "perfquery_after"),
              "perfquery -x <lid> <port>; sleep 600; perfquery -x <lid> <port>", 10.0),
    CheckSpec("nccl_transport", "network", ("nccl_log",), "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET <job>", 5.0),
    CheckSpec("nccl_busbw", "network", ("nccl_tests",),
              "mpirun -np 16 -N 8 -H nodeA,nodeB ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1", 10.0),
    CheckSpec("ost_fill", "storage", ("lfs_df",), "lfs df -h /lustre", 1.0),
    CheckSpec("read_bandwidth", "storage", ("fio_read",),
              "fio --name=read --rw=read --bs=1M --direct=1 --numjobs=16 --group_reporting ...", 10.0),
    CheckSpec("xid", "gpu", ("dmesg",), "dmesg -T | grep -i xid", 1.0),
    CheckSpec("gpu_state", "gpu", ("nvidia_smi_q",), "nvidia-smi -q -d ECC,ROW_REMAPPER,PERFORMANCE,TEMPERATURE", 1.0),
    CheckSpec("gpu_diag", "gpu", ("dcgmi_diag",), "dcgmi diag -r 3", 15.0),
    CheckSpec("collectives", "software", ("watchdog_log",),
              "grep -h 'Watchdog caught' rank*.log; TORCH_DISTRIBUTED_DEBUG=DETAIL <job>; py-spy dump --pid <pid>", 5.0),
)

#: Per-layer command ladder shown in the chapter (first command = cheapest first look).
LAYER_LADDER = {
    "network": ["ibstat", "perfquery -x (twice, minutes apart)", "iblinkinfo | grep -v 'NDR\\|LinkUp'",
                "all_reduce_perf between node pairs (bisection)"],
    "storage": ["lfs df -h", "lfs check servers", "fio read test of the data pool"],
    "gpu": ["dmesg -T | grep -i xid", "nvidia-smi -q", "dcgmi diag -r 3"],
    "software": ["NCCL_DEBUG=INFO", "TORCH_DISTRIBUTED_DEBUG=DETAIL", "py-spy dump --pid <pid>"],
}

_SEV = {"critical": 2, "warning": 1, "info": 0}


def _verdict(findings) -> str:
    worst = max((_SEV[f.severity] for f in findings), default=0)
    return ("pass", "warn", "fail")[worst]


@dataclass(frozen=True)
class Workload:
    """What the job does per step and needs from storage (all optional; quantification uses what is given).

    n_gpus, gpus_per_node; compute_s: per-GPU compute per step; allreduce_bytes: bytes all-reduced per
    step (e.g. BF16 gradients = 2 x params); overlap: share of compute that hides communication
    (``comm.step_time``); nic_gbps, nics_per_node, gpu: the cluster whose expected inter-node busbw
    is the course's cluster model (``labutil.cluster.Cluster.for_gpu(...).acceptance_busbw_gbs``: 2x DGX
    H100 -> min(NVLink ring 370, 8 x 48) = 370 GB/s); nccl_efficiency (optional, legacy): expected =
    line-rate ring bound x this efficiency instead; baseline_step_s / observed_step_s: the symptom.
    Storage: samples_per_s, sample_bytes (the job's reads), checkpoint_gb, checkpoint_interval_s,
    prefetch_s, read_weight (``storage.read_write_interference``).
    """

    n_gpus: int = 16
    gpus_per_node: int = 8
    compute_s: float | None = None
    allreduce_bytes: float | None = None
    overlap: float = 0.0
    nic_gbps: float = 400.0
    nics_per_node: int = 8
    gpu: str = "H100-SXM"
    nccl_efficiency: float | None = None
    baseline_step_s: float | None = None
    observed_step_s: float | None = None
    samples_per_s: float | None = None
    sample_bytes: float | None = None
    checkpoint_gb: float | None = None
    checkpoint_interval_s: float | None = None
    prefetch_s: float = 2.0
    read_weight: float = 0.5

    def __post_init__(self):
        validate.integer("n_gpus", self.n_gpus, lo=2)
        validate.integer("gpus_per_node", self.gpus_per_node, lo=1)
        validate.number("overlap", self.overlap, lo=0.0, hi=1.0)
        validate.positive("nic_gbps", self.nic_gbps)
        validate.integer("nics_per_node", self.nics_per_node, lo=1)
        if self.nccl_efficiency is not None:
            validate.fraction("nccl_efficiency", self.nccl_efficiency)
        validate.positive("prefetch_s", self.prefetch_s, allow_zero=True)
        validate.number("read_weight", self.read_weight, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        for k in ("compute_s", "allreduce_bytes", "baseline_step_s", "observed_step_s", "samples_per_s",
                  "sample_bytes", "checkpoint_interval_s"):
            v = getattr(self, k)
            if v is not None:
                validate.positive(k, v)
        if self.checkpoint_gb is not None:
            validate.positive("checkpoint_gb", self.checkpoint_gb, allow_zero=True)

    @property
    def cluster_model(self):
        """The job's ``labutil.cluster.Cluster`` (catalog system of ``gpu`` with these NICs, whole nodes)."""
        nodes = -(-self.n_gpus // self.gpus_per_node)
        return Cluster.for_gpu(self.gpu, n_nodes=nodes, gpus_per_node=self.gpus_per_node,
                               nics_per_node=self.nics_per_node, nic_gbps=float(self.nic_gbps))

    @property
    def expected_busbw_gbs(self) -> float:
        if self.nccl_efficiency is not None:
            bound = health.ring_busbw_bound_gbs("inter", nic_gbps=self.nic_gbps, nics_per_node=self.nics_per_node,
                                                gpu=self.gpu)
            return health.expected_busbw_gbs(bound, self.nccl_efficiency)
        c = self.cluster_model
        ranks = min(self.n_gpus, c.n_gpus)
        return float(c.acceptance_busbw_gbs("all_reduce", ranks))

    @property
    def required_read_gbs(self) -> float | None:
        if self.samples_per_s is None or self.sample_bytes is None:
            return None
        return storage.data_read_requirements(self.samples_per_s, self.sample_bytes).read_gbs


# ------------------------------------------------------------------------------ quantitative models
# all_reduce time from a bus bandwidth (t = S x 2(n-1)/n / busbw): the inverse of comm.busbw_gbs lives
# beside it in labutil.comm; re-exported here, where the triage models use it
comm_time_from_busbw_s = comm.comm_time_from_busbw_s


def network_slowdown(compute_s, allreduce_bytes, n_gpus, expected_busbw_gbs, measured_busbw_gbs, overlap=0.0) -> dict:
    """Step time at the expected vs the measured busbw (``comm.step_time``) and the slowdown the
    network explains: step_measured / step_expected - 1. Vectorised over measured_busbw_gbs."""
    c_exp = comm_time_from_busbw_s(allreduce_bytes, n_gpus, expected_busbw_gbs)
    c_meas = comm_time_from_busbw_s(allreduce_bytes, n_gpus, measured_busbw_gbs)
    s_exp = comm.step_time(compute_s, c_exp, overlap).step_s
    s_meas = comm.step_time(compute_s, c_meas, overlap).step_s
    slow = np.asarray(s_meas) / np.asarray(s_exp) - 1.0
    return {"comm_expected_s": c_exp, "comm_measured_s": c_meas, "step_expected_s": s_exp,
            "step_measured_s": s_meas, "slowdown": float(slow) if slow.ndim == 0 else slow}


def storage_shortfall(required_read_gbs, pool_read_gbs) -> float:
    """Step-time increase when the pool cannot feed the job: GPUs run at pool/required of their
    speed, so time grows by required/pool - 1 (0 when the pool is fast enough). Vectorised."""
    r = validate.positive("required_read_gbs", required_read_gbs)
    p = validate.positive("pool_read_gbs", pool_read_gbs)
    out = np.maximum(0.0, np.asarray(r) / np.asarray(p) - 1.0)
    return float(out) if np.ndim(out) == 0 else out


def straggler_step_s(per_rank_compute_s, comm_s=0.0):
    """Synchronous step time: every collective waits for the slowest rank, so
    step = max over ranks (last axis) of compute + comm. Vectorised over leading axes."""
    x = np.asarray(validate.positive("per_rank_compute_s", per_rank_compute_s), dtype=float)
    if x.ndim == 0 or x.shape[-1] < 1:
        raise ValueError("per_rank_compute_s must be a non-empty array of per-rank compute times")
    c = validate.positive("comm_s", comm_s, allow_zero=True)
    out = x.max(axis=-1) + np.asarray(c)
    return float(out) if np.ndim(out) == 0 else out


def straggler_slowdown(n_gpus, slow_factor, step_s=1.0, comm_s=0.0) -> dict:
    """One rank ``slow_factor`` x slower (e.g. thermal throttling): the whole job's step becomes
    slow_factor x compute + comm; lost GPU-hours per hour = n_gpus x (1 - step / step_slow).
    ``step_s`` is the healthy step (compute + comm). Vectorised over slow_factor."""
    n = validate.integer("n_gpus", n_gpus, lo=1)
    f = np.asarray(validate.number("slow_factor", slow_factor, lo=1.0), dtype=float)
    s = validate.positive("step_s", step_s)
    c = validate.positive("comm_s", comm_s, allow_zero=True)
    if c >= s:
        raise ValueError(f"comm_s must be < step_s ({step_s}); got {comm_s}")
    slow = (s - c) * f + c
    lost = n * (1.0 - s / slow)

    def g(v):
        return float(v) if np.ndim(v) == 0 else v

    return {"step_s": s, "step_slow_s": g(slow), "slowdown": g(slow / s - 1.0), "lost_gpu_per_hour": g(lost)}


def blind_restart_cost(n_gpus, restart_s, checkpoint_interval_s, repeats, diagnose_s=0.0) -> dict:
    """GPU-hours lost by restarting a job on a faulty node ``repeats`` times before anyone localises
    the fault, vs one diagnosis of ``diagnose_s`` with the job stopped.

    Each repeat failure costs n_gpus x (restart_s + interval/2) (restart plus, on average, half a
    checkpoint interval of recomputed work; the same accounting as ``reliability.goodput``)."""
    n = validate.integer("n_gpus", n_gpus, lo=1)
    r = validate.positive("restart_s", restart_s, allow_zero=True)
    t = validate.positive("checkpoint_interval_s", checkpoint_interval_s)
    k = np.asarray(validate.positive("repeats", repeats, allow_zero=True), dtype=float)
    d = validate.positive("diagnose_s", diagnose_s, allow_zero=True)
    blind = k * n * (r + t / 2.0) / 3600.0
    diag = n * (d + r) / 3600.0
    return {"blind_gpu_h": float(blind) if np.ndim(blind) == 0 else blind, "diagnose_gpu_h": float(diag),
            "per_failure_gpu_h": n * (r + t / 2.0) / 3600.0}


def _pair_args(a: str, b: str) -> list[str]:
    return ["mpirun", "-np", "16", "-N", "8", "-H", f"{a}:8,{b}:8", "./build/all_reduce_perf", "-b", "1G", "-e", "8G",
            "-f", "2", "-g", "1"]


def pair_test_rounds(hosts) -> list[list[list[str]]]:
    """A pairwise nccl-tests bisection as rounds of ``mpirun`` argument lists. Round 1: disjoint node
    pairs, all run at once (no node in two tests at the same time: two tests sharing a node share its
    GPUs and NICs and slow each other down). With an odd count the node left over runs in round 2,
    paired with the first node (which round 1 has already tested). A pair that fails round 1 is split
    afterwards by pairing each member with a node of a passing pair."""
    hosts = list(hosts)
    if len(hosts) < 2:
        raise ValueError(f"hosts must name at least 2 nodes; got {len(hosts)}")
    if len(set(hosts)) != len(hosts):
        raise ValueError("hosts must be distinct")
    rounds = [[_pair_args(hosts[i], hosts[i + 1]) for i in range(0, len(hosts) - 1, 2)]]
    if len(hosts) % 2:
        rounds.append([_pair_args(hosts[-1], hosts[0])])
    return rounds


def pair_test_plan(hosts) -> list[list[str]]:
    """Round 1 of the pairwise bisection (:func:`pair_test_rounds`): disjoint node pairs, all run at
    once. With an odd count the last host is NOT in round 1 (it needs a second round: see
    :func:`pair_test_rounds`). Returns ``mpirun`` argument lists."""
    return pair_test_rounds(hosts)[0]


# ------------------------------------------------------------------------- PyTorch watchdog parser
# "[Rank 3] Watchdog caught ..." (torch 1.x-2.6); the prefix may also be "[PG 1 Rank 3]" or
# "[PG ID 0 PG GUID 0(default_pg) Rank 3]"; some launchers wrap the line after "timeout:" (the
# WorkNCCL(...) part on the next line, milabench logs), and WorkNCCL(...) may hold only some of
# SeqNum / OpType / NumelIn / NumelOut / Timeout(ms), with or without "ran for N milliseconds".
_WATCHDOG_MARK = "Watchdog caught collective operation timeout"
_RANK_TAG = re.compile(r"\[(?:PG\b[^\]\n]{0,200}?\s)?Rank\s+(\d+)\]")
_WORK = re.compile(r"WorkNCCL\(([^)\n]*(?:\)[^)\n]*)?)\)(?:[ \t]*ran for[ \t]+(\d+)[ \t]+milliseconds)?")
_RANK_PREFIX = re.compile(r"\[rank(\d+)\]:")
_TIMEOUT_MS = re.compile(r"Timeout\(ms\)=(\d+)")
_SEQ = re.compile(r"SeqNum=(\d+)")
_OPTYPE = re.compile(r"OpType=([A-Za-z_]+)")
_NUMEL = re.compile(r"NumelIn=(\d+)(?:,\s*NumelOut=(\d+))?")


@dataclass(frozen=True)
class WatchdogEvent:
    """One rank's first watchdog timeout. ``seq`` / ``ran_ms`` are None when the line does not
    print them; ``numel_in`` / ``numel_out`` (torch >= 2.2) None likewise; ``n_seqs`` counts the
    distinct SeqNums the same rank reported (> 1: several process groups timed out)."""

    rank: int
    seq: int | None
    op: str
    ran_ms: int | None
    timeout_ms: int | None
    numel_in: int | None = None
    numel_out: int | None = None
    n_seqs: int = 1


def parse_watchdog_log(text) -> list[WatchdogEvent]:
    """``Watchdog caught collective operation timeout`` lines of torch's ProcessGroupNCCL (one per
    rank, first occurrence kept). Text without such lines gives ``[]``; non-text raises ParseError.

    The rank comes from ``[Rank r]`` (or ``[PG .. Rank r]``), else from a ``[rankr]:`` line prefix;
    a line with neither is skipped (it cannot be attributed)."""
    if isinstance(text, str) and not text.strip():
        return []
    text = require_text(text, "PyTorch watchdog log")
    seen: dict = {}
    seqs: dict = {}
    i = text.find(_WATCHDOG_MARK)
    while i >= 0:
        # linear: each occurrence looks at most 300 characters back (its prefix) and at its own line
        # and the next one (a launcher may wrap the WorkNCCL(...) part onto the next line)
        line_start = max(text.rfind("\n", 0, i) + 1, i - 300)
        prefix = text[line_start:i]
        tags = _RANK_TAG.findall(prefix)
        rank = tags[-1] if tags else None
        if rank is None:
            rp = _RANK_PREFIX.search(prefix)
            rank = rp.group(1) if rp else None
        end = text.find("\n", i)
        end = len(text) if end < 0 else end
        nxt = text.find("\n", end + 1)
        nxt = len(text) if nxt < 0 else nxt
        w = _WORK.search(text, i, end) or (_WORK.search(text, end, nxt) if not text[i:end].split(":", 1)[-1].strip()
                                           else None)
        i = text.find(_WATCHDOG_MARK, end)
        if rank is None:
            continue              # a line without [Rank r] or [rankr]: cannot be attributed
        r = int(rank)
        body = w.group(1) if w else ""
        sq, op, nm, t = _SEQ.search(body), _OPTYPE.search(body), _NUMEL.search(body), _TIMEOUT_MS.search(body)
        seq = int(sq.group(1)) if sq else None
        if w is not None:
            seqs.setdefault(r, set()).add(seq)
        if r not in seen:         # a timeout line whose WorkNCCL(...) part was lost still names the rank
            seen[r] = WatchdogEvent(r, seq, op.group(1) if op else "UNKNOWN",
                                    int(w.group(2)) if w and w.group(2) else None, int(t.group(1)) if t else None,
                                    int(nm.group(1)) if nm else None,
                                    int(nm.group(2)) if nm and nm.group(2) else None)
    return [replace(seen[r], n_seqs=max(1, len(seqs.get(r, ())))) for r in sorted(seen)]


#: the largest world size triage accepts (no cluster has 10^7 ranks; it bounds nothing else: the
#: missing-rank count below costs O(ranks seen + k), not O(n_ranks))
MAX_RANKS = 10_000_000


def missing_ranks(n_ranks: int, seen, k: int = 16) -> tuple[int, list[int]]:
    """(how many of ranks 0..n_ranks-1 are not in ``seen``, the first ``k`` of them), in
    O(len(seen) + k) time and memory, never O(n_ranks): a world size of 10^7 costs nothing."""
    n = validate.integer("n_ranks", n_ranks, lo=1, hi=MAX_RANKS)
    got = {r for r in seen if 0 <= r < n}
    first, r = [], 0
    while len(first) < k and r < n:
        if r not in got:
            first.append(r)
        r += 1
    return n - len(got), first


def _check_watchdog(events, n_ranks: int | None) -> list[Finding]:
    """Findings of the watchdog events.

    A collective mismatch is reported (critical) only where ranks disagree on the SAME collective:
    the same SeqNum with a different OpType or element count (the call differs between ranks).
    Ranks at different SeqNums are a weaker sign (warning, ``collective_desync``): either one rank
    skipped or added a collective, or the timeouts come from different process groups (TP / DP
    groups number their collectives separately; a rank that reports several SeqNums shows this,
    e.g. pytorch/pytorch #118369), so it is not called a mismatch."""
    if not events:
        return [Finding("info", "torch", "watchdog", "no collective timeout in the log")]
    out = []
    by_seq: dict = {}
    for e in events:
        if e.seq is not None:
            by_seq.setdefault(e.seq, []).append(e)
    clash = []
    for seq, evs in sorted(by_seq.items()):
        calls = {(e.op, e.numel_in, e.numel_out) for e in evs}
        if len({c[0] for c in calls}) > 1 or len({c[1:] for c in calls if c[1] is not None}) > 1:
            clash.append((seq, evs))
    if clash:
        seq, evs = clash[0]
        groups: dict = {}
        for e in evs:
            groups.setdefault((e.op, e.numel_in), []).append(e.rank)
        major = max(groups, key=lambda k: len(groups[k]))
        odd = sorted(r for k, rs in groups.items() if k != major for r in rs)
        other = sorted({f"{op}#{seq}" for (op, _n) in groups if (op, _n) != major})
        out.append(Finding("critical", "torch", "collective_mismatch",
                           f"ranks {odd} wait in {', '.join(other)} while the others wait in "
                           f"{major[0]}#{seq}: the ranks took different code paths (rerun with "
                           "TORCH_DISTRIBUTED_DEBUG=DETAIL to get the mismatching call)", odd, "same collective"))
    else:
        seqs = {e.seq for e in events if e.seq is not None}
        multi_pg = any(e.n_seqs > 1 for e in events)
        if len(seqs) > 1 and not multi_pg:
            groups = {}
            for e in events:
                if e.seq is not None:
                    groups.setdefault(e.seq, []).append(e.rank)
            major = max(groups, key=lambda k: len(groups[k]))
            odd = sorted(r for k, rs in groups.items() if k != major for r in rs)
            out.append(Finding("warning", "torch", "collective_desync",
                               f"ranks {odd} time out at another collective sequence number than the others "
                               f"(#{major}): a rank skipped or added a collective, or the timeouts come from "
                               "different process groups; TORCH_DISTRIBUTED_DEBUG=DETAIL tells which", odd,
                               "same SeqNum"))
    if n_ranks is not None:
        n_missing, missing = missing_ranks(n_ranks, (e.rank for e in events))
        if n_missing:
            which = f"ranks {missing}" if n_missing == len(missing) else \
                f"{n_missing} ranks (the first {len(missing)}: {missing})"
            out.append(Finding("warning", "torch", "silent_ranks",
                               f"{which} never reported a timeout: their process died or hangs outside "
                               "NCCL; look at their node first (dmesg, nvidia-smi, py-spy dump)", missing, "none"))
    if not out:
        e = events[0]
        out.append(Finding("warning", "torch", "collective_timeout",
                           f"all ranks time out in {e.op}#{e.seq}: a peer is slow or gone (check lower layers)",
                           e.op, None))
    return out


# ------------------------------------------------------------------------------------- the engine
@dataclass
class CheckResult:
    name: str
    layer: str
    verdict: str
    command: str
    minutes: float
    findings: list = field(default_factory=list)

    @property
    def worst(self) -> Finding | None:
        return max(self.findings, key=lambda f: _SEV[f.severity], default=None)


@dataclass
class LayerResult:
    layer: str
    verdict: str
    checks: list = field(default_factory=list)


@dataclass
class Diagnosis:
    symptom: str
    layers: list
    first_failing_layer: str | None
    root_check: str | None
    root_finding: Finding | None
    next_command: str
    quant: dict
    cost: dict
    skipped_layers: list = field(default_factory=list)
    confidence: float = 0.0
    reasons: list = field(default_factory=list)
    next_checks: list = field(default_factory=list)
    unrecognised: list = field(default_factory=list)
    signals: list = field(default_factory=list, repr=False)
    recognised: list = field(default_factory=list)
    scores: dict = field(default_factory=dict)
    #: what of the evidence could not be read (undecodable bytes, a tool's output that its parser
    #: rejected, XID lines in an unknown form): a verdict - or "nothing found" - covers only the rest
    warnings: list = field(default_factory=list)
    #: the evidence the verdict rests on: layer, kind, the line, its source and origin (tool output, a line
    #: quoted in notes, an observation in words matched to a failure signature, or - the weakest - the layer
    #: lexicon: the notes name parts of one layer, no catalogued mechanism matched)
    decided_by: dict = field(default_factory=dict)
    #: failure signatures the notes matched (labutil/data/failure_signatures.toml), best first
    matched_signatures: list = field(default_factory=list)
    #: evidence that would move the verdict to another layer (or clear it): [{layer, evidence, source}]
    change_my_mind: list = field(default_factory=list)
    #: closest known public incidents: [{title, url, layer, fixed_by, similarity, from}], best first
    similar_incidents: list = field(default_factory=list)
    #: the failure mechanism the verdict points to: {id, title, root_cause, confirm, from} - the signature the
    #: notes matched when words decided, else the signature that explains the deciding tool line (its kinds);
    #: empty without a verdict or when no catalogued mechanism explains it
    mechanism: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready summary (what ``python -m labutil triage --json`` prints)."""
        return {"symptom": self.symptom, "first_failing_layer": self.first_failing_layer,
                "root_check": self.root_check, "confidence": self.confidence, "scores": self.scores,
                "reasons": list(self.reasons), "next_checks": list(self.next_checks),
                "layers": {lr.layer: lr.verdict for lr in self.layers},
                "recognised": [{"fragment": n, "kinds": list(k)} for n, k in self.recognised],
                "unrecognised": list(self.unrecognised), "next_command": self.next_command,
                "warnings": list(self.warnings), "decided_by": dict(self.decided_by),
                "matched_signatures": list(self.matched_signatures),
                "what_would_change_my_mind": list(self.change_my_mind),
                "similar_incidents": list(self.similar_incidents), "mechanism": dict(self.mechanism)}

    def layer(self, name: str) -> LayerResult:
        validate.choice("layer", name, LAYERS)
        return next(lr for lr in self.layers if lr.layer == name)

    @property
    def path(self) -> list[tuple]:
        """(layer, check, verdict) for every check the walk touched, in order."""
        return [(lr.layer, c.name, c.verdict) for lr in self.layers for c in lr.checks]

    def rows(self) -> list[dict]:
        out = []
        for lr in self.layers:
            if not lr.checks:
                out.append({"layer": lr.layer, "check": "-", "verdict": lr.verdict, "finding": ""})
            for c in lr.checks:
                w = c.worst
                out.append({"layer": lr.layer, "check": c.name, "verdict": c.verdict,
                            "finding": "" if w is None or w.severity == "info" else f"{w.check}: {w.message}"})
        return out

    def table(self) -> MarkdownTable:
        if self.scores:  # a triage() result: verdict, confidence, the deciding lines, next checks
            out = [f"**verdict**: {self.first_failing_layer or 'no failing layer'} — **confidence** "
                   f"{self.confidence:.2f} — scores: " + ", ".join(f"{k} {v:.2f}" for k, v in self.scores.items()), ""]
            out += [f"- {r.replace('|', '/')}" for r in self.reasons]
            # confirm the verdict first, then rule out the other layers; cheapest first within each (as text())
            out += ["", "| next check | layer | ~min | purpose |", "|---|---|---|---|"]
            out += [f"| {c['command'].replace('|', chr(92) + '|')} | {c['layer']} | {c['minutes']:g} | {c['purpose']} |"
                    for c in sorted(self.next_checks, key=lambda c: c["purpose"] != "confirm")]
            if self.unrecognised:
                out += ["", "unrecognised: " + "; ".join(u.replace("|", "/") for u in self.unrecognised)]
            if self.decided_by:
                b = self.decided_by
                out += ["", f"**decided by** ({b['origin']}): `{b['line'].replace('`', chr(39))}`"]
            if self.mechanism:
                m = self.mechanism
                out += ["", f"**mechanism**: {m['title'].replace('|', '/')} (`{m['id']}`): "
                            f"{m['root_cause'].replace('|', '/')}"]
            if self.change_my_mind:
                out += ["", "**what would change my mind**:"] + [f"- {c['layer']}: {c['evidence'].replace('|', '/')}"
                                                                 for c in self.change_my_mind]
            if self.similar_incidents:
                out += ["", "**similar public incidents**:"] + [
                    f"- {i['similarity']:.2f} [{i['title'].replace('|', '/').replace('[', '(').replace(']', ')')}]"
                    f"({i['url']}) ({i['layer']}) - fixed by: {i['fixed_by'].replace('|', '/')}"
                    for i in self.similar_incidents[:3]]
            out += [f"\n**WARNING**: {w.replace('|', '/')}" for w in self.warnings]
            return MarkdownTable("\n".join(out))
        head = (f"**symptom**: {self.symptom} — **first failing layer**: {self.first_failing_layer or 'none'}"
                f" ({self.root_check or '-'}); **next**: `{self.next_command}`\n\n")
        lines = ["| layer | check | verdict | finding |", "|---|---|---|---|"]
        for r in self.rows():
            lines.append("| " + " | ".join(str(r[k]).replace("|", "/") for k in ("layer", "check", "verdict",
                                                                                 "finding")) + " |")
        return MarkdownTable(head + "\n".join(lines))

    def text(self) -> str:
        lines = [f"symptom: {self.symptom}"]
        if self.scores:
            lines.append(f"verdict: {self.first_failing_layer or 'no failing layer'} (confidence {self.confidence:.2f})")
            if self.first_failing_layer is not None:
                lines.append(f"root cause: {self.first_failing_layer}/{self.root_check} (first reason below; the others "
                             "are its consequences or weaker)")
            lines.append("reasons (layer/kind, the evidence line quoted -> what it means):")
            for r in self.reasons:
                lines.append(f"  - {r}")
            if self.next_checks:  # confirm the verdict first, then rule out the rest; cheapest first within each
                lines.append("next checks (confirm the verdict first, then rule out; cheapest first):")
                for c in sorted(self.next_checks, key=lambda c: c["purpose"] != "confirm"):
                    lines.append(f"  [{c['purpose']}, ~{c['minutes']:g} min, {c['layer']}] {c['command']}")
            if self.decided_by:
                b = self.decided_by
                lines.append(f"decided by ({b['origin']}): [{b['layer']}/{b['kind']}] \"{b['line']}\"")
            if self.mechanism:
                m = self.mechanism
                lines.append(f"mechanism ({m['from']}): {m['title']} [{m['id']}]")
                lines.append(f"  root cause: {m['root_cause']}")
            if self.matched_signatures:
                lines.append("failure signatures in the notes: " + "; ".join(
                    f"{m['id']} ({m['layer']}, {'full' if m['full'] else 'partial'} {m['score']:.2f})"
                    for m in self.matched_signatures[:4]))
            if self.change_my_mind:
                lines.append("what would change my mind:")
                for c in self.change_my_mind:
                    lines.append(f"  -> {c['layer']}: {c['evidence']}")
            if self.similar_incidents:
                lines.append("similar public incidents:")
                for i in self.similar_incidents[:3]:
                    lines.append(f"  {i['similarity']:.2f}  [{i['layer']}] {i['title'][:90]} - {i['url']}")
                    if i.get("fixed_by"):
                        lines.append(f"        fixed by: {i['fixed_by'][:150]}")
            for n, k in self.recognised:
                lines.append(f"recognised: {n}: {', '.join(k)}")
            for u in self.unrecognised:
                lines.append(f"unrecognised: {u}")
            for w in self.warnings:
                lines.append(f"WARNING: {w}")
            return "\n".join(lines)
        for lr in self.layers:
            checks = ", ".join(f"{c.name}={c.verdict}" for c in lr.checks) or "-"
            lines.append(f"  {lr.layer:<8s} {lr.verdict:<8s} {checks}")
        lines.append(f"first failing layer: {self.first_failing_layer} ({self.root_check})")
        lines.append(f"next command: {self.next_command}")
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:  # pragma: no cover - notebook display
        return str(self.table())


def _parse(key, value, parser):
    if value is None or not isinstance(value, (str, bytes)):
        return value, None
    try:
        return parser(value), None
    except P.ParseError as exc:
        return None, Finding("critical", key, "parse", f"cannot read the tool output: {exc}")


def _run_check(spec: CheckSpec, ev: dict, wl: Workload, quant: dict, cluster=None) -> list[Finding]:
    """Findings of one check (evidence is present)."""
    if spec.name == "ib_ports":
        cas, bad = _parse("ibstat", ev["ibstat"], P.parse_ibstat)
        acc = health.AcceptanceSpec.for_cluster(cluster) if cluster is not None else health.AcceptanceSpec()
        return [bad] if bad else health.check_ibstat(cas, acc)
    if spec.name == "ib_counters":
        b, bad1 = _parse("perfquery", ev["perfquery_before"], P.parse_perfquery)
        a, bad2 = _parse("perfquery", ev["perfquery_after"], P.parse_perfquery)
        if bad1 or bad2:
            return [f for f in (bad1, bad2) if f]
        return health.check_perfquery(b, a)
    if spec.name == "nccl_transport":
        lg, bad = _parse("NCCL log", ev["nccl_log"], P.parse_nccl_debug_log)
        if bad:
            return [bad]
        # NCCL WARN lines are evidence: transport failures (completion errors, refused connects) are
        # critical, other WARN lines warnings (labutil.health.NCCL_FATAL_WARN).
        return health.check_nccl_log(lg)
    if spec.name == "nccl_busbw":
        r, bad = _parse("nccl-tests", ev["nccl_tests"], P.parse_nccl_tests)
        if bad:
            return [bad]
        exp = health.cluster_expected_busbw_gbs(cluster, r) if cluster is not None else wl.expected_busbw_gbs
        out = health.check_nccl_tests(r, exp)
        quant["busbw_measured_gbs"] = r.peak_busbw_gbs
        quant["busbw_expected_gbs"] = exp
        if wl.compute_s is not None and wl.allreduce_bytes is not None:
            ns = network_slowdown(wl.compute_s, wl.allreduce_bytes, wl.n_gpus, exp, r.peak_busbw_gbs, wl.overlap)
            quant["network"] = ns
            if wl.baseline_step_s and wl.observed_step_s and wl.observed_step_s > wl.baseline_step_s:
                observed = wl.observed_step_s - wl.baseline_step_s
                quant["network_explains_fraction"] = min(1.0, max(0.0, ns["step_measured_s"] - ns["step_expected_s"])
                                                         / observed)
        return out
    if spec.name == "ost_fill":
        df, bad = _parse("lfs df", ev["lfs_df"], fioparse.parse_lfs_df)
        if bad:
            return [bad]
        out = []
        for t in df.osts:
            if t.use_pct >= 90:   # course policy: a >= 90 % full OST gets new stripes slowly / ENOSPC
                out.append(Finding("warning", f"OST {t.index}", "ost_fill", f"{t.uuid} is {t.use_pct:.0f}% full "
                                   "(rebalance with lfs_migrate)", t.use_pct, "< 90"))
        quant["ost_imbalance_pct"] = df.ost_imbalance
        return out
    if spec.name == "read_bandwidth":
        res, bad = _parse("fio", ev["fio_read"], fioparse.parse_fio_summary)
        if bad:
            return [bad]
        pool = sum(x.read_gbs for x in res)
        quant["pool_read_gbs"] = pool
        need = wl.required_read_gbs
        if need is None:
            return [Finding("info", "storage", "read_bandwidth", "no workload demand given", round(pool, 2), None)]
        quant["required_read_gbs"] = need
        if pool <= 0:
            return [Finding("critical", "storage", "read_bandwidth", "fio read nothing", 0.0, round(need, 2))]
        if need >= pool:
            quant["storage_slowdown"] = storage_shortfall(need, pool)
            return [Finding("critical", "storage", "read_bandwidth", f"the job needs {need:.1f} GB/s, the pool "
                            f"delivers {pool:.1f} GB/s: the loader starves all the time", round(pool, 2), round(need, 2))]
        out = [Finding("info", "storage", "read_bandwidth", f"pool {pool:.1f} GB/s >= need {need:.1f} GB/s",
                       round(pool, 2), round(need, 2))]
        if wl.checkpoint_gb and wl.checkpoint_interval_s:
            it = storage.read_write_interference(need, pool, wl.checkpoint_gb, wl.checkpoint_interval_s,
                                                 prefetch_s=wl.prefetch_s, read_weight=wl.read_weight)
            quant["checkpoint_burst_s"] = it.shared_burst_s
            quant["stall_per_checkpoint_s"] = it.shared_stall_s
            quant["stall_fraction"] = it.shared_stall_fraction
            if it.shared_stall_s > 0:
                out.append(Finding("critical", "storage", "checkpoint_interference",
                                   f"each {wl.checkpoint_gb:g} GB checkpoint takes the shared pool for "
                                   f"{it.shared_burst_s:.0f} s; reads drop to {it.shared_read_gbs:.1f} GB/s and the "
                                   f"loader stalls {it.shared_stall_s:.1f} s every {wl.checkpoint_interval_s / 60:.0f} min",
                                   round(it.shared_stall_s, 2), 0.0))
        return out
    if spec.name == "xid":
        evs, bad = _parse("kernel log", ev["dmesg"], P.parse_xid_errors)
        if bad:
            return [bad]
        quant["xid_triage"] = reliability.triage_xid(evs)
        return health.check_xid(evs)
    if spec.name == "gpu_state":
        q, bad = _parse("nvidia-smi -q", ev["nvidia_smi_q"], P.parse_nvidia_smi_q)
        if bad:
            return [bad]
        quant["gpu_actions"] = {g.bus_id: reliability.gpu_memory_action(g) for g in q.gpus}
        return health.check_nvidia_smi_q(q)
    if spec.name == "gpu_diag":
        d, bad = _parse("dcgmi diag", ev["dcgmi_diag"], P.parse_dcgmi_diag)
        return [bad] if bad else health.check_dcgmi_diag(d)
    if spec.name == "collectives":
        evs, bad = _parse("watchdog log", ev["watchdog_log"], parse_watchdog_log)
        return [bad] if bad else _check_watchdog(evs, wl.n_gpus)
    raise KeyError(spec.name)  # pragma: no cover - CHECKS and this function are kept in step


_NEXT = {  # first failing check -> the command that confirms / fixes it
    "ib_ports": "iblinkinfo --switch-guid <leaf> | grep -v LinkUp; reseat or replace the cable/transceiver of the port",
    "ib_counters": "perfquery -x again in 10 min; if symbol errors still rise, replace the cable (then perfquery -R)",
    "nccl_transport": "ibv_devinfo inside the container; check /dev/infiniband is mounted and NCCL_IB_HCA",
    "nccl_busbw": "all_reduce_perf on node pairs (pair_test_plan) to isolate the slow node, then ibstat on it",
    "ost_fill": "lfs_migrate files off the full OST; lfs setstripe -c -1 for new large files",
    "read_bandwidth": "move checkpoints to a separate tier or write them asynchronously; re-run fio during a save",
    "xid": "scontrol update nodename=<node> state=drain reason=xid; follow the XID action (reset / RMA)",
    "gpu_state": "drain the node, nvidia-smi -r (or reboot) to apply the row remap, then dcgmi diag -r 3",
    "gpu_diag": "drain the node; reset the GPU and rerun dcgmi diag -r 3; RMA if it fails again",
    "collectives": "TORCH_DISTRIBUTED_DEBUG=DETAIL to name the mismatching call; py-spy dump --pid on a silent rank",
}


def diagnose(symptom: str, evidence: dict, workload: Workload | None = None, *, exhaustive: bool = False,
             cluster=None) -> Diagnosis:
    """Walk network -> storage -> GPU -> software over the available ``evidence`` (keys of
    :data:`EVIDENCE`; ``None`` = not collected; ``''`` = the command ran and printed nothing).

    A layer is 'fail' if any of its checks has a critical finding, 'warn' for warnings only, 'pass'
    when its checks are clean, 'unknown' when none of its evidence is available. The walk stops after
    the first failing layer (later layers 'not_run') unless ``exhaustive``. The next command is the
    fix/confirm step of the first failing check, or else the first command of the first layer
    without evidence, or else the software deep-dive. With a ``cluster``
    (:class:`labutil.cluster.Cluster`) the port rate and the expected busbw are the cluster's
    (``AcceptanceSpec.for_cluster``, ``cluster.expected_busbw_gbs(op, ranks)``) instead of the
    workload's 400G defaults. For free-form pasted evidence use :func:`triage`.
    """
    if not isinstance(symptom, str) or not symptom.strip():
        raise ValueError("symptom must be a non-empty string describing what was observed")
    if not isinstance(evidence, dict):
        raise ValueError("evidence must be a dict {evidence key: tool output text}")
    for k in evidence:
        if k not in EVIDENCE:
            raise validate.unknown_name("evidence", k, EVIDENCE)
    wl = workload or Workload()
    quant: dict = {}
    layers, first_fail, root_check, root_finding = [], None, None, None
    ladder: list[tuple[CheckSpec, str]] = []   # (spec, verdict) of every available check, for the cost model
    for layer in LAYERS:
        specs = [s for s in CHECKS if s.layer == layer]
        if first_fail is not None and not exhaustive:
            layers.append(LayerResult(layer, "not_run"))
            ladder += [(s, "not_run") for s in specs if all(evidence.get(k) is not None for k in s.evidence)]
            continue
        results = []
        for s in specs:
            if any(evidence.get(k) is None for k in s.evidence):
                continue
            f = _run_check(s, evidence, wl, quant, cluster)
            cr = CheckResult(s.name, layer, _verdict(f), s.command, s.minutes, f)
            results.append(cr)
            ladder.append((s, cr.verdict))
            if cr.verdict == "fail" and first_fail is None:
                first_fail, root_check = layer, s.name
                root_finding = max((x for x in f if x.severity == "critical"), key=lambda x: _SEV[x.severity])
        verdict = "unknown" if not results else max((c.verdict for c in results), key=("pass", "warn", "fail").index)
        layers.append(LayerResult(layer, verdict, results))
    skipped = []
    for lr in layers:
        if lr.layer == first_fail:
            break
        if lr.verdict == "unknown":
            skipped.append(lr.layer)
    if root_check is not None:
        nxt = _NEXT[root_check]
    elif skipped:
        nxt = LAYER_LADDER[skipped[0]][0]
    else:
        nxt = "py-spy dump --pid <rank pid> on every node; TORCH_DISTRIBUTED_DEBUG=DETAIL"
    cost = _ladder_cost(ladder, evidence, wl, cluster)
    return Diagnosis(symptom.strip(), layers, first_fail, root_check, root_finding, nxt, quant, cost, skipped)


def _ladder_cost(ladder, evidence, wl, cluster=None) -> dict:
    """Checks/minutes until the first failing check in ladder order vs a random order."""
    # verdicts of checks not run by the layered walk are needed for the random order: run them quietly
    verdicts = []
    for s, v in ladder:
        if v == "not_run":
            v = _verdict(_run_check(s, evidence, wl, {}, cluster))
        verdicts.append((s, v))
    fails = np.array([v == "fail" for _, v in verdicts], dtype=bool)
    minutes = np.array([s.minutes for s, _ in verdicts], dtype=float)
    return search_cost(fails, minutes)


def expected_random_checks(n_checks, n_failing):
    """Expected number of checks, in a uniformly random order, until the first of ``n_failing``
    failing checks among ``n_checks``: (N + 1) / (k + 1); N when k = 0 (all must run). Vectorised."""
    n = np.asarray(validate.integer("n_checks", n_checks, lo=0), dtype=float)
    k = np.asarray(validate.integer("n_failing", n_failing, lo=0), dtype=float)
    if np.any(k > n):
        raise ValueError(f"n_failing must be <= n_checks; got {n_failing} > {n_checks}")
    out = np.where(k > 0, (n + 1) / (k + 1), n)
    return float(out) if out.ndim == 0 else out


def search_cost(failing, minutes=None) -> dict:
    """Cost of the layered order (the given order) vs a random order of the same checks.

    ``failing``: bool per check in ladder order; ``minutes``: duration per check (default 1 each).
    Layered: checks up to and including the first failing one (all when none fails). Random:
    E[checks] = (N + 1) / (k + 1); E[minutes] = sum(t_pass) / (k + 1) + mean(t_fail).
    """
    f = np.asarray(failing, dtype=bool).ravel()
    if f.size == 0:  # no check could run (no evidence at all): nothing to search, nothing found
        return {"n_checks": 0, "n_failing": 0, "layered_checks": 0, "random_checks": 0.0, "layered_minutes": 0.0,
                "random_minutes": 0.0}
    t = np.ones(f.size) if minutes is None else np.asarray(validate.positive("minutes", minutes), dtype=float).ravel()
    if t.size != f.size:
        raise ValueError(f"minutes must have one entry per check ({f.size}); got {t.size}")
    n, k = int(f.size), int(f.sum())
    if k:
        first = int(np.argmax(f))
        lay_n, lay_t = first + 1, float(t[: first + 1].sum())
        rnd_t = float(t[~f].sum() / (k + 1) + t[f].mean())
    else:
        lay_n, lay_t, rnd_t = n, float(t.sum()), float(t.sum())
    return {"n_checks": n, "n_failing": k, "layered_checks": lay_n, "random_checks": expected_random_checks(n, k),
            "layered_minutes": lay_t, "random_minutes": rnd_t}


# ----------------------------------------------------------------------------------- case studies
def _cases() -> dict:
    return data_files.load("troubleshoot_cases.toml")


def case_names() -> list[str]:
    return list(_cases())


def case(name: str) -> dict:
    """Raw case entry (title, symptom, root_layer, root_check, root_cause, workload, evidence, sources)."""
    table = _cases()
    if name not in table:
        raise validate.unknown_name("case", name, table)
    return table[name]


def _resolve(ref: str) -> str:
    """'sample:<name>' -> labutil.parsers.samples; 'storage:<name>' -> fioparse samples; else inline text."""
    if ref.startswith("sample:"):
        return tool_samples.sample(ref.split(":", 1)[1])
    if ref.startswith("storage:"):
        return fioparse.sample(ref.split(":", 1)[1])
    return ref


def load_case(name: str) -> tuple[str, dict, Workload]:
    """(symptom, evidence texts, Workload) of a shipped case."""
    c = case(name)
    ev = {k: _resolve(v) for k, v in c.get("evidence", {}).items()}
    return c["symptom"], ev, Workload(**c.get("workload", {}))


def diagnose_case(name: str, available=None, *, exhaustive: bool = False) -> Diagnosis:
    """Diagnose a shipped case; ``available`` (iterable of evidence keys) keeps only that evidence."""
    symptom, ev, wl = load_case(name)
    if available is not None:
        keep = set(available)
        for k in keep:
            if k not in EVIDENCE:
                raise validate.unknown_name("evidence", k, EVIDENCE)
        ev = {k: v for k, v in ev.items() if k in keep}
    return diagnose(symptom, ev, wl, exhaustive=exhaustive)

