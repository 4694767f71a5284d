"""Reliability at scale: failure rates, MTBF, checkpoint intervals, goodput.

Taught in ch01 (failures per day) and ch27 (reliability engineering); ch05 uses it for the cost
of downtime.

Model (the standard series-system / exponential-lifetime model, e.g. Kokolis et al. 2024,
arXiv:2410.21680 s5): every component fails independently at a constant rate 1/MTBF and any
single failure interrupts the synchronous training job. The job's failure process is then a
Poisson process with rate Λ = Σ n_i / MTBF_i, so the job MTBF is 1 / Λ.

Reference data (Llama 3 Table 5, Kokolis et al.) live in ``labutil/data/reliability.toml``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np

from . import data_files, validate
from .units import HOURS_PER_DAY, SECONDS_PER_DAY, SECONDS_PER_HOUR

__all__ = ["failures_per_day", "Component", "failure_rates_per_hour", "cluster_failures_per_day",
           "cluster_mtbf_hours", "failure_breakdown", "reference_data", "llama3_table5", "llama3_counts_by_part",
           "llama3_component_mtbf_hours", "llama3_components", "llama3_failures_per_day",
           "llama3_rate_per_1000_node_days", "job_mttf_hours_from_node_rate", "young_daly_interval_s",
           "daly_interval_s", "goodput", "optimal_goodput", "max_restart_s_for_goodput", "time_breakdown",
           "interval_completion_probability", "mean_rework_s", "opt175b_restarts_per_day", "Timeline",
           "SimulationResult", "simulate_timelines", "simulate_run", "XID_GUIDE", "triage_xid", "gpu_memory_action",
           "SacctRecord", "parse_sacct", "sample_text"]


def failures_per_day(n_components, mtbf_hours):
    """Expected failures per day of ``n_components`` identical parts, each with ``mtbf_hours``.

    With independent exponential lifetimes the fleet failure rate is n / MTBF per hour, so
    failures/day = 24 · n / MTBF (the standard series-system result, e.g. Meta's Llama 3 paper §3.3.4
    reports interruptions per day the same way).
    """
    n = validate.positive("n_components", n_components)
    m = validate.positive("mtbf_hours", mtbf_hours)
    return HOURS_PER_DAY * n / m


# -- mixed components: series system ---------------------------------------------------------
@dataclass(frozen=True)
class Component:
    """``count`` identical parts, each failing at rate 1/``mtbf_hours`` (count may be an array)."""

    name: str
    count: float
    mtbf_hours: float
    source: str = ""


def _components(components) -> list[Component]:
    if isinstance(components, Mapping):
        out = []
        for name, value in components.items():
            if isinstance(value, Component):
                out.append(value)
                continue
            try:
                count, mtbf = value
            except (TypeError, ValueError):
                raise ValueError(f"components[{name!r}] must be a (count, mtbf_hours) pair; got {value!r}") from None
            out.append(Component(str(name), count, mtbf))
    else:
        try:
            out = list(components)
        except TypeError:
            raise ValueError("components must be a mapping name -> (count, mtbf_hours) or a list of Component; "
                             f"got {components!r}") from None
        for c in out:
            if not isinstance(c, Component):
                raise ValueError(f"components list must hold Component objects; got {c!r}")
    if not out:
        raise ValueError("components must not be empty")
    return out


def failure_rates_per_hour(components) -> dict:
    """Failure rate (per hour) of each component group: n_i / MTBF_i. Counts may be arrays."""
    rates = {}
    for c in _components(components):
        n = validate.positive(f"count of {c.name!r}", c.count, allow_zero=True)
        m = validate.positive(f"mtbf_hours of {c.name!r}", c.mtbf_hours)
        rates[c.name] = n / m
    return rates


def cluster_failures_per_day(components):
    """Expected job-interrupting failures per day of a series system: 24 · Σ n_i / MTBF_i."""
    rates = failure_rates_per_hour(components)
    return HOURS_PER_DAY * sum(rates.values())


def cluster_mtbf_hours(components):
    """MTBF (hours) of a series system of mixed components: 1 / Σ (n_i / MTBF_i).

    ``components`` is a mapping ``name -> (count, mtbf_hours)`` or a list of :class:`Component`
    (GPUs, HBM, hosts, NICs, switches, cables...). Counts may be numpy arrays (a sweep over cluster
    size). Source: the series-system formula for independent exponential lifetimes (any failure
    stops the synchronous job), as in Kokolis et al. 2024 (arXiv:2410.21680) s5.
    """
    rates = failure_rates_per_hour(components)
    total = sum(rates.values())
    if np.any(np.asarray(total) <= 0):
        raise ValueError("components must contain at least one part with count > 0")
    return 1.0 / total


def failure_breakdown(components) -> dict:
    """Share of failures per component group (sums to 1)."""
    rates = failure_rates_per_hour(components)
    total = sum(rates.values())
    if np.any(np.asarray(total) <= 0):
        raise ValueError("components must contain at least one part with count > 0")
    return {k: v / total for k, v in rates.items()}


# -- reference data -------------------------------------------------------------------------------
def reference_data() -> dict:
    """The raw reference data of ``labutil/data/reliability.toml`` (Llama 3 Table 5, Kokolis et al.)."""
    return data_files.load("reliability.toml")


def llama3_table5() -> list[dict]:
    """Rows of Llama 3 Table 5 (component, category, count, printed_pct, part)."""
    return [dict(r) for r in reference_data()["llama3"]["table5"]]


def llama3_counts_by_part() -> dict:
    """Table 5 counts grouped by the failing part: gpu, host, network, software, maintenance, unknown."""
    out: dict[str, int] = {}
    for r in llama3_table5():
        out[r["part"]] = out.get(r["part"], 0) + int(r["count"])
    return out


def llama3_component_mtbf_hours() -> dict:
    """Per-unit MTBF (hours) calibrated from Llama 3 Table 5 (counts over the 54-day snapshot).

    Exposure: 16,384 GPUs and 2,048 hosts (8 GPUs per host) for 54 days. Returned keys:

    - ``gpu``: per GPU, from the GPU rows (faulty GPU, HBM3, SRAM, system processor, SDC,
      thermal) = 268 interruptions;
    - ``host``: per host, from the host hardware rows (NIC, SSD, PSU, chassis, IO board, CPU,
      system memory) = 21;
    - ``host_maintenance``: per host, unplanned host maintenance = 32;
    - ``network_link``: per GPU network endpoint (each GPU has one 400 Gb/s RoCE link; the
      paper's 'Network Switch/Cable' row = 35 is spread over the links, switches and cables that
      serve them);
    - ``software``: per GPU, software bugs + dependency + NCCL watchdog timeouts = 63 (a job-level
      rate expressed per GPU so that it scales with job size; an assumption, not a measurement).
    """
    d = reference_data()["llama3"]
    hours = d["snapshot_days"] * HOURS_PER_DAY
    gpu_h = d["gpus"] * hours
    host_h = d["gpus"] / d["gpus_per_host"] * hours
    c = llama3_counts_by_part()
    return {
        "gpu": gpu_h / c["gpu"],
        "host": host_h / c["host"],
        "host_maintenance": host_h / c["maintenance"],
        "network_link": gpu_h / c["network"],
        "software": gpu_h / (c["software"] + c["unknown"]),
    }


def llama3_components(n_gpus, gpus_per_host: int = 8) -> list[Component]:
    """A cluster of ``n_gpus`` described with the per-unit rates calibrated from Llama 3 Table 5."""
    n = validate.positive("n_gpus", n_gpus)
    g = validate.integer("gpus_per_host", gpus_per_host)
    m = llama3_component_mtbf_hours()
    src = "calibrated from Llama 3 Table 5 (arXiv:2407.21783)"
    return [
        Component("gpu", n, m["gpu"], src),
        Component("host", n / g, m["host"], src),
        Component("host_maintenance", n / g, m["host_maintenance"], src),
        Component("network_link", n, m["network_link"], src),
        Component("software", n, m["software"], src),
    ]


def llama3_failures_per_day(n_gpus=None):
    """Unexpected interruptions per day at the Llama 3 rate, scaled linearly to ``n_gpus``.

    At 16,384 GPUs this is 419 / 54 = 7.76 per day (Llama 3 §3.3.4, Table 5).
    """
    d = reference_data()["llama3"]
    per_day = d["unexpected_interruptions"] / d["snapshot_days"]
    if n_gpus is None:
        return per_day
    n = validate.positive("n_gpus", n_gpus)
    return per_day * n / d["gpus"]


def llama3_rate_per_1000_node_days() -> float:
    """The Llama 3 unexpected-interruption rate in Kokolis et al.'s unit (failures per 1000 node-days)."""
    d = reference_data()["llama3"]
    node_days = d["gpus"] / d["gpus_per_host"] * d["snapshot_days"]
    return 1000.0 * d["unexpected_interruptions"] / node_days


def opt175b_restarts_per_day() -> float:
    """Restarts per day of the OPT-175B run, at least: (35 manual + 70 automatic) over ~2 months.

    Zhang et al. 2022 (OPT, arXiv:2205.01068), "Hardware Failures": "at least 35 manual restarts and
    the cycling of over 100 hosts over the course of 2 months", "we estimate 70+ automatic restarts";
    992 A100 80 GB. The two months are taken as 61 days (a lower bound on the rate stays a lower bound
    to within the rounding of "2 months")."""
    d = reference_data()["opt175b"]
    return (d["manual_restarts_min"] + d["automatic_restarts_min"]) / d["days"]


def job_mttf_hours_from_node_rate(n_gpus, failures_per_1000_node_days, gpus_per_node: int = 8):
    """Job MTTF (hours) of an ``n_gpus`` job at a per-node failure rate (Kokolis et al. 2024, s5 model).

    MTTF = 24 / (N_nodes · r_f / 1000); e.g. RSC-1 (6.50) at 16,384 GPUs -> 1.8 h as the paper projects.
    """
    n = validate.positive("n_gpus", n_gpus)
    r = validate.positive("failures_per_1000_node_days", failures_per_1000_node_days)
    g = validate.integer("gpus_per_node", gpus_per_node)
    return HOURS_PER_DAY / (n / g * r / 1000.0)


# -- checkpoint interval and goodput -------------------------------------------------------------
def young_daly_interval_s(checkpoint_s, mtbf_s):
    """Young's optimum checkpoint interval τ = √(2·δ·M) (seconds of compute between checkpoints).

    δ = ``checkpoint_s`` (time to write one checkpoint), M = ``mtbf_s`` (job MTBF).
    Source: J. W. Young, "A first order approximation to the optimum checkpoint interval",
    Commun. ACM 17(9):530-531, 1974 (minimises δ/τ + τ/(2M)). Vectorised.
    """
    d = validate.positive("checkpoint_s", checkpoint_s)
    m = validate.positive("mtbf_s", mtbf_s)
    return np.sqrt(2.0 * d * m) if np.ndim(d) or np.ndim(m) else math.sqrt(2.0 * d * m)


def daly_interval_s(checkpoint_s, mtbf_s):
    """Daly's higher-order optimum checkpoint interval (seconds).

    τ = √(2δM)·[1 + ⅓·√(δ/2M) + (1/9)·(δ/2M)] − δ  for δ < 2M, and τ = M otherwise.
    Source: J. T. Daly, "A higher order estimate of the optimum checkpoint interval for restart
    dumps", Future Generation Computer Systems 22(3):303-312, 2006 (the higher-order optimum).
    """
    d = np.asarray(validate.positive("checkpoint_s", checkpoint_s), dtype=float)
    m = np.asarray(validate.positive("mtbf_s", mtbf_s), dtype=float)
    x = d / (2.0 * m)
    tau = np.where(x < 1.0, np.sqrt(2.0 * d * m) * (1.0 + np.sqrt(x) / 3.0 + x / 9.0) - d, m)
    return float(tau) if tau.ndim == 0 else tau


def goodput(failures_per_day, restart_s, interval_s, checkpoint_s):
    """Expected fraction of wall-clock time that becomes useful (kept) training progress.

    Work runs in cycles of ``interval_s`` (τ) of compute followed by a blocking checkpoint of
    ``checkpoint_s`` (δ); failures arrive as a Poisson process of rate λ = failures_per_day /
    86,400 s (M = 1/λ); after each failure the job restarts (R = ``restart_s``; a failure during
    the restart starts it again) and resumes from the last completed checkpoint. The expected
    wall-clock time per τ of useful work is M·e^{R/M}·(e^{(τ+δ)/M} − 1) (Daly 2006, FGCS 22(3),
    the exponential-failure model), so

        goodput = τ / [ M · e^{R/M} · (e^{(τ+δ)/M} − 1) ]      (= τ/(τ+δ) when λ = 0).

    To first order in 1/M this is 1 − δ/τ − λ·(R + τ/2): each failure costs the restart plus
    half an interval of re-computation, and checkpoints cost δ/τ; its optimum is Young's
    τ = √(2δM) (Young 1974), the exact optimum is Daly's (:func:`daly_interval_s`). The result
    lies in [0, 1], falls with λ and with R. All arguments broadcast (numpy arrays).
    The Monte Carlo :func:`simulate_timelines` simulates exactly this model.
    """
    lam = validate.positive("failures_per_day", failures_per_day, allow_zero=True) / SECONDS_PER_DAY
    r = validate.positive("restart_s", restart_s, allow_zero=True)
    tau = validate.positive("interval_s", interval_s)
    d = validate.positive("checkpoint_s", checkpoint_s, allow_zero=True)
    lam, r, tau, d = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (lam, r, tau, d)))
    c = tau + d
    safe = np.where(lam > 0, lam, 1.0)
    with np.errstate(over="ignore"):
        # tau / (M e^{R/M} (e^{c/M} - 1)) written with lam = 1/M; expm1 keeps precision for small lam*c
        denom = np.exp(safe * r) * np.expm1(safe * c) / safe
        g = np.where(lam > 0, tau / denom, tau / c)
    g = np.clip(np.nan_to_num(g, nan=0.0, posinf=0.0), 0.0, 1.0)
    return float(g) if g.ndim == 0 else g


def checkpoint_waste(interval_s, checkpoint_s, mtbf_s, restart_s=0.0):
    """Fraction of wall-clock time lost to checkpoints and failures: ``1 - goodput``.

    The same exact model as :func:`goodput` (Daly 2006), parameterised by the job MTBF ``mtbf_s``
    instead of failures per day; ``restart_s`` defaults to 0 so that only the two terms Young's
    formula trades off remain (save overhead and re-computation). To first order this is
    δ/τ + τ/(2M) (Young 1974); the exact curve is a little lower and its minimum is at
    :func:`daly_interval_s`. Vectorised over every argument (ch17's figure and its §5 numbers).

    >>> round(checkpoint_waste(24 * 60, 98.0, 3 * 3600.0), 3)
    0.129
    """
    m = validate.positive("mtbf_s", mtbf_s)
    return 1.0 - goodput(SECONDS_PER_DAY / np.asarray(m, dtype=float) if np.ndim(m) else SECONDS_PER_DAY / m,
                         restart_s, interval_s, checkpoint_s)


def optimal_goodput(failures_per_day, restart_s, checkpoint_s):
    """Goodput at Young's interval τ* = √(2δM) (M = 86,400 / failures_per_day seconds)."""
    f = validate.positive("failures_per_day", failures_per_day)
    mtbf_s = SECONDS_PER_DAY / f
    tau = young_daly_interval_s(checkpoint_s, mtbf_s)
    return goodput(f, restart_s, tau, checkpoint_s)


def max_restart_s_for_goodput(target, failures_per_day, checkpoint_s, interval_s=None):
    """Largest restart time R (s) that still reaches goodput ``target`` (0 if even R = 0 misses it).

    Solves the :func:`goodput` formula for R at the given (default: Young-optimal) interval:
    R = M · ln( τ / (target · M · (e^{(τ+δ)/M} − 1)) ).
    """
    t = validate.fraction("target", target)
    f = validate.positive("failures_per_day", failures_per_day)
    d = validate.positive("checkpoint_s", checkpoint_s, allow_zero=True)
    m = SECONDS_PER_DAY / f
    tau = young_daly_interval_s(max(d, 1e-9), m) if interval_s is None else \
        validate.positive("interval_s", interval_s)
    arg = tau / (t * m * np.expm1((tau + d) / m))
    r = m * np.log(np.maximum(arg, 1.0))
    return np.asarray(r) if np.ndim(r) else float(r)


def interval_completion_probability(failures_per_day, interval_s, checkpoint_s):
    """Probability that one interval of compute plus its checkpoint (τ + δ) runs without a failure:
    e^{−(τ+δ)/M} with M = 86,400 / failures_per_day s (the exponential model of :func:`goodput`)."""
    lam = validate.positive("failures_per_day", failures_per_day, allow_zero=True) / SECONDS_PER_DAY
    c = validate.positive("interval_s", interval_s) + validate.positive("checkpoint_s", checkpoint_s, allow_zero=True)
    out = np.exp(-np.asarray(lam, dtype=float) * np.asarray(c, dtype=float))
    return float(out) if np.ndim(out) == 0 else out


def mean_rework_s(failures_per_day, interval_s, checkpoint_s):
    """Expected work (s) a failure throws away: the time since the last completed checkpoint.

    For a failure that strikes a segment of length c = τ + δ, E[X | X < c] with X exponential of mean
    M: M − c / (e^{c/M} − 1). It is ≈ c/2 when c ≪ M (the "half an interval" of Young's first-order
    argument) and tends to M when c ≫ M: a failure cannot throw away more than the time since the
    previous failure."""
    lam = validate.positive("failures_per_day", failures_per_day) / SECONDS_PER_DAY
    c = validate.positive("interval_s", interval_s) + validate.positive("checkpoint_s", checkpoint_s, allow_zero=True)
    lam, c = np.broadcast_arrays(np.asarray(lam, dtype=float), np.asarray(c, dtype=float))
    out = 1.0 / lam - c / np.expm1(lam * c)
    return float(out) if out.ndim == 0 else out


def time_breakdown(failures_per_day, restart_s, interval_s, checkpoint_s) -> dict:
    """Where the wall-clock time goes, as shares that sum to 1 (the model of :func:`goodput`).

    Per completed cycle (τ of kept work) the expected wall time is W = M·e^{R/M}·(e^{c/M} − 1), c = τ + δ.
    The cycle's failed attempts number q = e^{c/M} − 1 on average; each throws away
    :func:`mean_rework_s` and is followed by a restart of expected length M·(e^{R/M} − 1) (a failure
    during the restart restarts it). So: ``useful`` = τ/W (= goodput), ``checkpoint`` = δ/W (the
    checkpoint of the completed cycle), ``rework`` = (q·M − c)/W, ``restart`` = q·M·(e^{R/M} − 1)/W.

    >>> b = time_breakdown(7.76, 600, 900, 30)
    >>> round(sum(b.values()), 12), round(b["useful"], 3) == round(goodput(7.76, 600, 900, 30), 3)
    (1.0, True)
    """
    lam = validate.positive("failures_per_day", failures_per_day) / SECONDS_PER_DAY
    r = validate.positive("restart_s", restart_s, allow_zero=True)
    tau = validate.positive("interval_s", interval_s)
    d = validate.positive("checkpoint_s", checkpoint_s, allow_zero=True)
    lam, r, tau, d = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (lam, r, tau, d)))
    m = 1.0 / lam
    c = tau + d
    q = np.expm1(c / m)
    w = m * np.exp(r / m) * q
    parts = {"useful": tau / w, "checkpoint": d / w, "rework": (q * m - c) / w, "restart": q * m * np.expm1(r / m) / w}
    return {k: (float(v) if v.ndim == 0 else v) for k, v in parts.items()}


# -- Monte Carlo of a training run -----------------------------------------------------------------
@dataclass
class Timeline:
    """One simulated run, for a figure: piecewise-linear useful progress vs wall-clock time.

    ``t_s`` / ``progress_s``: points of the curve (seconds of kept useful work, including work
    not yet checkpointed; it drops back to the last checkpoint at each failure).
    ``failure_s``: failure times; ``failure_part``: which component group failed (if given).
    """

    t_s: np.ndarray
    progress_s: np.ndarray
    failure_s: np.ndarray
    failure_part: list
    duration_s: float
    useful_s: float


@dataclass
class SimulationResult:
    """Per-trial results of :func:`simulate_timelines` (arrays of length ``trials``)."""

    interruptions: np.ndarray
    lost_hours: np.ndarray          # wall-clock hours lost to restarts and re-computation
    checkpoint_hours: np.ndarray    # wall-clock hours spent writing checkpoints
    useful_hours: np.ndarray
    goodput: np.ndarray
    duration_s: float
    timeline: Timeline
    parts: tuple = ()
    interruptions_by_part: dict = field(default_factory=dict)   # part -> per-trial counts

    @property
    def mean_goodput(self) -> float:
        return float(self.goodput.mean())

    @property
    def mean_interruptions(self) -> float:
        return float(self.interruptions.mean())


def _part_weights(parts):
    if parts is None:
        return (), None
    if isinstance(parts, Mapping) and all(np.ndim(v) == 0 and not isinstance(v, Component) for v in parts.values()):
        names = tuple(str(k) for k in parts)
        w = np.array([validate.positive(f"parts[{k!r}]", v, allow_zero=True) for k, v in parts.items()], dtype=float)
    else:
        comps = _components(parts)
        rates = failure_rates_per_hour(comps)
        names = tuple(rates)
        w = np.array([float(np.asarray(v)) for v in rates.values()])
    if w.sum() <= 0:
        raise ValueError("parts must have at least one positive weight")
    return names, w / w.sum()


def simulate_timelines(failures_per_day, days, *, restart_s, interval_s, checkpoint_s,
                       trials: int = 1000, seed: int = 0, parts=None) -> SimulationResult:
    """Seeded Monte Carlo of a synchronous training run with failures, vectorised over trials.

    Failures are a Poisson process in wall-clock time with rate ``failures_per_day`` (the
    superposition of independent exponential component lifetimes, e.g.
    ``cluster_failures_per_day(llama3_components(16384))``). Between two failures the job first
    restarts (``restart_s``; none before the first segment), then repeats ``interval_s`` of compute
    + ``checkpoint_s`` of blocking checkpoint; only work covered by a completed checkpoint survives a
    failure. At the end of the run (``days``) the work in progress counts as done.

    ``parts`` (optional): mapping part -> weight, or components (mapping name -> (count,
    mtbf_hours) or a list of :class:`Component`), to attribute each failure to a
    part (categorical draw with probability ∝ rate). Returns a :class:`SimulationResult` whose
    ``timeline`` holds trial 0 for a figure.
    """
    f = validate.positive("failures_per_day", failures_per_day, allow_zero=True)
    dur = validate.positive("days", days) * SECONDS_PER_DAY
    r = validate.positive("restart_s", restart_s, allow_zero=True)
    tau = validate.positive("interval_s", interval_s)
    d = validate.positive("checkpoint_s", checkpoint_s, allow_zero=True)
    n = validate.integer("trials", trials, lo=1, hi=1_000_000)
    seed = validate.integer("seed", seed, lo=0)
    if np.ndim(f) or np.ndim(dur) or np.ndim(r) or np.ndim(tau) or np.ndim(d):
        raise ValueError("simulate_timelines takes scalar parameters (sweep by calling it per point)")
    names, weights = _part_weights(parts)
    rng = np.random.default_rng(seed)
    cycle = tau + d

    expected = f * dur / SECONDS_PER_DAY
    if f > 0:
        k = int(expected + 6.0 * math.sqrt(expected) + 16)
        mean_gap = SECONDS_PER_DAY / f
        times = np.cumsum(rng.exponential(mean_gap, size=(n, k)), axis=1)
        while times[:, -1].min() < dur:  # rare: extend the rows that have not reached the end
            more = np.cumsum(rng.exponential(mean_gap, size=(n, k)), axis=1) + times[:, -1:]
            times = np.concatenate([times, more], axis=1)
        fail = times < dur
        k_used = int(fail.sum(axis=1).max()) + 1
        times = times[:, :k_used]
        fail = fail[:, :k_used]
    else:
        times = np.full((n, 1), dur)
        fail = np.zeros((n, 1), dtype=bool)
    starts = np.concatenate([np.zeros((n, 1)), times[:, :-1]], axis=1)
    ends = np.minimum(times, dur)
    valid = starts < dur
    seg = np.where(valid, ends - starts, 0.0)
    restart = np.zeros_like(seg)
    restart[:, 1:] = r
    restart = np.where(valid, np.minimum(restart, seg), 0.0)
    prod = seg - restart
    full = np.floor(prod / cycle)
    rem = prod - full * cycle
    last = valid & ~fail                                   # the segment that the end of the run closes
    useful = full * tau + np.where(last, np.minimum(rem, tau), 0.0)
    ckpt = full * d + np.where(last, np.maximum(rem - tau, 0.0), 0.0)
    useful_s = useful.sum(axis=1)
    ckpt_s = ckpt.sum(axis=1)
    interruptions = fail.sum(axis=1)
    lost_s = np.maximum(dur - useful_s - ckpt_s, 0.0)

    by_part: dict = {}
    fail_part0: list = []
    if names:
        idx = rng.choice(len(names), size=fail.shape, p=weights)
        for j, name in enumerate(names):
            by_part[name] = ((idx == j) & fail).sum(axis=1)
        fail_part0 = [names[i] for i in idx[0][fail[0]]]

    timeline = _timeline(starts[0], ends[0], restart[0], fail[0], valid[0], tau, d, dur, fail_part0)
    return SimulationResult(
        interruptions=interruptions, lost_hours=lost_s / SECONDS_PER_HOUR, checkpoint_hours=ckpt_s / SECONDS_PER_HOUR,
        useful_hours=useful_s / SECONDS_PER_HOUR, goodput=useful_s / dur, duration_s=dur, timeline=timeline,
        parts=names, interruptions_by_part=by_part)


def _timeline(starts, ends, restart, fail, valid, tau, d, dur, parts) -> Timeline:
    """Exact piecewise-linear progress curve of one trial (points at restart/compute/checkpoint edges)."""
    cycle = tau + d
    ts, ps = [], []
    committed = 0.0
    for s, e, rs, failed in zip(starts[valid], ends[valid], restart[valid], fail[valid]):
        t0 = s + rs
        prod = e - t0
        nfull = int(prod // cycle)
        ts += [s, t0]
        ps += [committed, committed]
        if nfull:
            kk = np.arange(1, nfull + 1)
            tc = np.empty(2 * nfull)
            pc = np.empty(2 * nfull)
            tc[0::2] = t0 + (kk - 1) * cycle + tau
            tc[1::2] = t0 + kk * cycle
            pc[0::2] = committed + kk * tau
            pc[1::2] = committed + kk * tau
            ts += tc.tolist()
            ps += pc.tolist()
        base = committed + nfull * tau
        partial = min(prod - nfull * cycle, tau)
        ts += [t0 + nfull * cycle + partial, e]
        ps += [base + partial, base + partial]
        if failed:
            ts.append(e)
            ps.append(base)
            committed = base
        else:
            committed = base + partial
    return Timeline(t_s=np.asarray(ts), progress_s=np.asarray(ps), failure_s=ends[fail & valid].copy(),
                    failure_part=list(parts), duration_s=float(dur), useful_s=float(committed))


def simulate_run(failures_per_day, days, *, restart_s, interval_s, checkpoint_s, seed: int = 0,
                 parts=None) -> SimulationResult:
    """One seeded simulated run (``trials=1`` of :func:`simulate_timelines`); see its ``timeline``."""
    return simulate_timelines(failures_per_day, days, restart_s=restart_s, interval_s=interval_s,
                              checkpoint_s=checkpoint_s, trials=1, seed=seed, parts=parts)


# -- operations: triage of XID events and GPU memory health, Slurm accounting -------------------------
# Meaning and first action for the XIDs seen most in training fleets. Source: NVIDIA "XID Errors"
# (docs.nvidia.com/deploy/xid-errors) and "GPU Memory Error Management" (docs.nvidia.com/deploy/
# a100-gpu-mem-error-mgmt: a pending row remap needs a GPU reset; a remapping failure means RMA).
XID_GUIDE = {
    13: ("Graphics engine exception", "usually the application (bad kernel / out-of-range access): check the job first"),
    31: ("GPU memory page fault", "usually the application; repeated on one GPU across jobs -> drain and test"),
    43: ("GPU stopped processing", "often follows another XID; check the first XID in the log"),
    48: ("Double-bit ECC error", "drain the node, reset the GPU, check retired pages / remapped rows"),
    63: ("ECC page retirement or row remapping recorded", "reset the GPU at the next drain to activate the remap"),
    64: ("ECC page retirement or row remapper recording failure", "drain the node and RMA the GPU"),
    74: ("NVLink error", "drain the node; check NVLink/NVSwitch (nvidia-smi nvlink -e, fabric manager)"),
    79: ("GPU has fallen off the bus", "drain the node; power-cycle, reseat or RMA (hardware)"),
    92: ("High single-bit ECC error rate", "watch; drain if it repeats"),
    94: ("Contained ECC error", "the affected process was killed; restart the job, reset the GPU at the next drain"),
    95: ("Uncontained ECC error", "drain the node and reset the GPU before reuse"),
    # GSP (GPU System Processor) firmware, R515+ drivers: NVIDIA "XID Errors" catalog; NVIDIA/open-gpu-kernel-modules
    # #446 ("Timeout waiting for RPC from GSP": a 525-branch bug fixed in 525.105.17), Azure/azurehpc #714
    119: ("GSP RPC timeout", "drain the node and reset the GPU; check the driver branch and GSP firmware version"),
    120: ("GSP error", "drain the node and reset the GPU; check the driver branch and GSP firmware version"),
}

_HARDWARE_XIDS = {48, 64, 74, 79, 95, 119, 120}


def triage_xid(events) -> list[dict]:
    """For parsed XID events (``labutil.parsers.parse_xid_errors``): meaning, action and whether
    the node should be isolated (drained) now. Unknown XIDs are reported as such, never dropped."""
    out = []
    for e in events:
        meaning, action = XID_GUIDE.get(e.xid, ("(not in the course's table)", "look it up in NVIDIA's XID catalog"))
        out.append({"bus_id": e.bus_id, "xid": e.xid, "meaning": meaning, "action": action,
                    "isolate_node": e.xid in _HARDWARE_XIDS})
    return out


def gpu_memory_action(gpu) -> str:
    """Action for one GPU of ``parse_nvidia_smi_q`` from its row-remapping / page-retirement state.

    Remapping failure -> 'rma'; a pending remap or pending page retirement -> 'reset'; any
    uncorrectable remapped rows -> 'watch'; otherwise 'ok' (NVIDIA GPU Memory Error Management).
    """
    if getattr(gpu, "remapping_failure", None):
        return "rma"
    if getattr(gpu, "remapped_rows_pending", None) or getattr(gpu, "retired_pages_pending", None):
        return "reset"
    if (getattr(gpu, "remapped_rows_uncorrectable", None) or 0) > 0:
        return "watch"
    return "ok"


@dataclass(frozen=True)
class SacctRecord:
    job_id: str
    name: str
    state: str
    exit_code: str
    elapsed_s: float
    nodes: int | None
    node_list: str


def _elapsed_s(text: str) -> float:
    """Slurm elapsed time '[D-]HH:MM:SS' or 'MM:SS(.fff)' -> seconds; raises ValueError."""
    days = 0
    t = text.strip()
    if "-" in t:
        d, t = t.split("-", 1)
        days = int(d)
    if not re.fullmatch(r"\d+(?::\d+){0,2}(?:\.\d+)?", t):  # digits only: no '1e400', 'nan', 'inf'
        raise ValueError(text)
    parts = [float(p) for p in t.split(":")]
    if not 1 <= len(parts) <= 3 or any(p < 0 for p in parts):
        raise ValueError(text)
    while len(parts) < 3:
        parts.insert(0, 0.0)
    h, m, s = parts
    return days * 86400.0 + h * 3600.0 + m * 60.0 + s


def parse_sacct(text) -> list[SacctRecord]:
    """Parse ``sacct -P`` (pipe-separated, with header) output that includes JobID, JobName, State,
    ExitCode and Elapsed (NNodes and NodeList optional). Raises ``labutil.parsers.ParseError``
    on garbage. Format: Slurm ``sacct`` man page (``--parsable2``/``-P``, ``--format``)."""
    from .parsers._common import ParseError, require_text

    text = require_text(text, "sacct")
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    header = [h.strip() for h in lines[0].split("|")]
    need = ("JobID", "JobName", "State", "ExitCode", "Elapsed")
    missing = [h for h in need if h not in header]
    if missing:
        raise ParseError(f"sacct: the header must name {list(need)} (run sacct -P --format=...); missing {missing}")
    col = {h: i for i, h in enumerate(header)}
    out = []
    for ln in lines[1:]:
        cells = ln.split("|")
        if len(cells) != len(header):
            raise ParseError(f"sacct: expected {len(header)} '|'-separated fields, got {len(cells)} in {ln!r}")
        try:
            el = _elapsed_s(cells[col["Elapsed"]])
        except ValueError:
            raise ParseError(f"sacct: Elapsed {cells[col['Elapsed']]!r} is not [D-]HH:MM:SS") from None
        nn = cells[col["NNodes"]].strip() if "NNodes" in col else ""
        out.append(SacctRecord(job_id=cells[col["JobID"]].strip(), name=cells[col["JobName"]].strip(),
                               state=cells[col["State"]].strip().split()[0] if cells[col["State"]].strip() else "",
                               exit_code=cells[col["ExitCode"]].strip(), elapsed_s=el,
                               nodes=int(nn) if nn.isdigit() else None,
                               node_list=cells[col["NodeList"]].strip() if "NodeList" in col else ""))
    if not out:
        raise ParseError("sacct: a header but no job records")
    return out


def sample_text(name: str) -> str:
    """Illustrative tool output stored in reliability.toml ``[samples.*]`` (e.g. 'sacct_requeue')."""
    table = reference_data().get("samples", {})
    if name not in table:
        raise validate.unknown_name("reliability sample", name, table)
    return table[name]["text"]
