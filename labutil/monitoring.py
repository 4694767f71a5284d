"""Monitoring and alerting for GPU training clusters (ch26).

Four pieces, all pure (numpy, no widgets):

1. **Prometheus text exposition** (:func:`parse_prometheus_text`, :func:`format_prometheus_text`):
   the parser of ``curl localhost:9400/metrics`` lives in :mod:`labutil.parsers.prometheus` (ch14
   reads it too) and is re-exported here; the dcgm-exporter sample (:data:`DCGM_EXPORTER_SAMPLE`) and
   the counter lists that decide which fields dcgm-exporter exports (:func:`parse_dcgm_counters_csv`).
2. **Alert rules** (:class:`AlertRule`, :func:`evaluate_rule`) with Prometheus ``for:`` semantics
   (Prometheus docs, "Alerting rules"): at each evaluation an alert whose expression is true
   becomes *pending*; it *fires* once the expression has been true at every evaluation for at
   least ``for`` seconds; one false evaluation resets it. Vectorised over series and time.
   :func:`alert_rules_yaml` emits the rules file (``groups:`` / ``rules:`` / ``alert:`` / ``expr:`` /
   ``for:`` / ``labels:`` / ``annotations:``), optionally wrapped in a prometheus-operator
   ``PrometheusRule`` object (apiVersion ``monitoring.coreos.com/v1``).
3. **Straggler detection** (:func:`detect_stragglers`): per-rank compute time per step (the time
   from step start until the rank enters the gradient all-reduce), smoothed over a sliding window,
   scored across ranks with the modified z-score ``M = 0.6745 (x - median) / MAD`` and flagged at
   ``M > 3.5`` (Iglewicz & Hoaglin, *How to Detect and Handle Outliers*, ASQC 1993, ch. 3).
   :func:`straggler_throughput_loss`: a synchronous data-parallel step waits for the slowest rank,
   so ``T_step = max_i(t_compute,i) + t_comm``.
4. **Synthetic telemetry** (:func:`synthetic_telemetry`): a seeded, illustrative training job on
   ``n_gpus`` GPUs scraped every ``interval_s`` with one injected fault ('thermal_throttle', 'xid79',
   'slow_nic', or 'none'), and :func:`score_alerts` for detection delay and false positives.
The rules as files a real Prometheus reads, with unit tests for ``promtool test rules``, are in
:mod:`labutil.promrules`.

The dcgm-exporter metric names and HELP strings are those of dcgm-exporter's
``etc/default-counters.csv`` / ``etc/dcp-metrics-included.csv`` (NVIDIA/dcgm-exporter); the
labels (``gpu``, ``UUID``, ``pci_bus_id``, ``device``, ``modelName``, ``Hostname``,
``DCGM_FI_DRIVER_VERSION``) are those shown in NVIDIA's DCGM-Exporter documentation output.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

import numpy as np

from . import validate
from .parsers import ParseError
from .parsers import samples as _samples
from .parsers import parse_nvidia_smi_q
from .parsers.prometheus import (METRIC_NAME, Exposition, MetricFamily, PromParseError, PromSample,
                                 escape_label_value, format_prometheus_text, format_value, parse_prometheus_text)

__all__ = [
    "PromParseError", "PromSample", "MetricFamily", "Exposition", "parse_prometheus_text", "format_prometheus_text",
    "DCGM_EXPORTER_SAMPLE", "DCGM_EXPORTER_SAMPLE_SOURCE", "DCGM_FIELDS", "gpu_metrics", "utilisation_gap",
    "AlertRule", "RuleEvaluation", "evaluate_rule", "format_duration", "alert_rules_yaml", "default_rules",
    "StragglerReport", "detect_stragglers", "rolling_mean", "straggler_throughput_loss",
    "FAULTS", "Telemetry", "synthetic_telemetry", "AlertScore", "score_alerts", "watched_rule",
    "hang_cost_usd",
    "DCGM_COUNTER_LISTS", "DCGM_PROM_TYPES", "DcgmCsvError", "DcgmCounter", "parse_dcgm_counters_csv",
    "dcgm_counter_path", "dcgm_counter_list", "enabled_metrics", "rule_metric_coverage",
    "RULES_INTERVAL_S",
]


# ======================================================================= 1. exposition format
# The parser lives in labutil.parsers.prometheus (ch14 reads it too); re-exported here.
TOOL = "Prometheus text exposition"
_NAME = METRIC_NAME


# ------------------------------------------------------------------ dcgm-exporter counter lists
# Which DCGM fields dcgm-exporter exports is set by a CSV ("DCGM FIELD, Prometheus metric type, help";
# '#' starts a comment). Shipped in labutil/data/dcgm_exporter/: the two upstream lists verbatim
# (NVIDIA/dcgm-exporter etc/*.csv at commit d5e5f510a1b6, 2026-05-12) and the course's list, which
# enables every field the course's rules and chapters read. Reader semantics: dcgm-exporter
# internal/pkg/counters/counter_config.go (encoding/csv with Comment '#', fields trimmed, exactly 3
# per record) and variables.go (types gauge, counter, histogram, summary, label).
DCGM_COUNTER_LISTS = {
    "default-counters": ("upstream", "default-counters.csv"),       # dcgm-exporter's -f default (pkg/cmd/app.go)
    "dcp-metrics-included": ("upstream", "dcp-metrics-included.csv"),  # GPU Operator's default
    "course": ("course-counters.csv",),
}
DCGM_PROM_TYPES = ("gauge", "counter", "histogram", "summary", "label")
_DCGM_FIELD = re.compile(r"DCGM_(?:FI|EXP)_[A-Z0-9_]+")


class DcgmCsvError(ParseError):
    """A dcgm-exporter counters CSV line dcgm-exporter itself would refuse (a ``ValueError``)."""


@dataclass(frozen=True)
class DcgmCounter:
    field: str          # DCGM field name = Prometheus metric name
    prom_type: str      # gauge / counter / ... / label (a label on the other metrics, not a metric)
    help: str
    enabled: bool       # False: present only as a commented-out line
    line: int


def parse_dcgm_counters_csv(text) -> list[DcgmCounter]:
    """Read a dcgm-exporter counters CSV: enabled lines and commented-out field lines (``# DCGM_FI_..., type, help``).

    Other comment lines are skipped; an enabled line that is not ``FIELD, type, help`` with a known type
    raises :class:`DcgmCsvError` naming the line (dcgm-exporter refuses to start on it).
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str) or not text.strip():
        raise DcgmCsvError("dcgm-exporter counters CSV: expected non-empty text")
    out, seen = [], set()
    for lineno, raw in enumerate(text.lstrip("\ufeff").replace("\r\n", "\n").split("\n"), start=1):
        enabled = not raw.startswith("#")
        body = raw if enabled else raw[1:].strip()
        if not body.strip() or (not enabled and not _DCGM_FIELD.match(body)):
            continue
        # enabled: exactly 3 CSV fields as Go's encoding/csv reads them (a comma in HELP needs quotes)
        parts = ([p.strip(" ") for p in next(csv.reader([body]))] if enabled else
                 [p.strip() for p in body.split(",", 2)])
        if len(parts) != 3 or not all(parts[:2]):
            if not enabled:
                continue
            raise DcgmCsvError(f"dcgm-exporter counters CSV: line {lineno}: expected 'FIELD, type, help': {raw!r}")
        field_, typ, help_ = parts
        if not _DCGM_FIELD.fullmatch(field_) or typ not in DCGM_PROM_TYPES:
            if not enabled:
                continue
            raise DcgmCsvError(f"dcgm-exporter counters CSV: line {lineno}: field {field_!r} / type {typ!r} "
                               f"(types: {list(DCGM_PROM_TYPES)}): {raw!r}")
        if enabled and field_ in seen:
            raise DcgmCsvError(f"dcgm-exporter counters CSV: line {lineno}: {field_} enabled twice")
        if enabled:
            seen.add(field_)
        out.append(DcgmCounter(field_, typ, help_, enabled, lineno))
    if not any(c.enabled for c in out):
        raise DcgmCsvError("dcgm-exporter counters CSV: no enabled field")
    return out


def dcgm_counter_path(name: str = "course"):
    """Path of a shipped counters list: 'course', 'default-counters' or 'dcp-metrics-included'."""
    validate.choice("name", name, list(DCGM_COUNTER_LISTS))
    return resources.files("labutil").joinpath("data", "dcgm_exporter", *DCGM_COUNTER_LISTS[name])


@lru_cache(maxsize=None)
def dcgm_counter_list(name: str = "course") -> tuple:
    """The parsed shipped list ``name`` (see :data:`DCGM_COUNTER_LISTS`)."""
    return tuple(parse_dcgm_counters_csv(dcgm_counter_path(name).read_text(encoding="utf-8")))


def enabled_metrics(name: str = "course") -> set[str]:
    """Metric names a dcgm-exporter started with list ``name`` exports (enabled fields that are not labels)."""
    return {c.field for c in dcgm_counter_list(name) if c.enabled and c.prom_type != "label"}


def rule_metric_coverage(rules=None) -> list[dict]:
    """Per rule on a DCGM metric: is its metric exported by each shipped list? Rows
    {alert, metric, <list name>: bool ...}; a rule whose metric is off never fires (its series is absent)."""
    rules = default_rules() if rules is None else list(rules)
    lists = {n: enabled_metrics(n) for n in DCGM_COUNTER_LISTS}
    return [{"alert": r.name, "metric": r.metric, **{n: r.metric in m for n, m in lists.items()}}
            for r in rules if r.metric.startswith("DCGM_")]


# ------------------------------------------------------------------ the dcgm-exporter sample
_SAMPLE_FIELDS = ("DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL",
                  "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                  "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE",
                  "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE")
# (metric, type, HELP) of the sample's fields, read from the course's counters list (= upstream text)
DCGM_FIELDS = {c.field: (c.prom_type, c.help) for f in _SAMPLE_FIELDS for c in dcgm_counter_list("course")
               if c.field == f and c.enabled}

DCGM_EXPORTER_SAMPLE_SOURCE = (
    "Illustrative, in the output format of `curl localhost:9400/metrics` of NVIDIA dcgm-exporter "
    "(Prometheus text exposition; metric names and HELP strings from dcgm-exporter "
    "etc/default-counters.csv and etc/dcp-metrics-included.csv; labels gpu, UUID, pci_bus_id, device, "
    "modelName, Hostname, DCGM_FI_DRIVER_VERSION as in the output shown in NVIDIA's DCGM-Exporter "
    "documentation). One 4-GPU slice of an H100 node; UUIDs, host name and values invented: GPU 0-1 "
    "train normally, GPU 2 spins in an NCCL wait (GPU_UTIL 100 % with almost no tensor work), GPU 3 "
    "reports XID 79 and uncorrectable ECC errors.")


def _make_sample() -> str:
    uuids = ["GPU-3f1c7a52-9b1e-4c0d-8e62-1a7d2f0b9c41", "GPU-8b2e4d17-60aa-4f3b-b0c9-5e1f7a3c2d68",
             "GPU-c47d9e30-1f85-4a26-9d3b-7e0c6a5f8b12", "GPU-e91a0b6c-2d74-4e58-a1f3-9c8b7d6e5f04"]
    bus = ["00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0"]
    values = {  # per GPU 0..3
        "DCGM_FI_DEV_SM_CLOCK": [1980, 1980, 1980, 0],
        "DCGM_FI_DEV_GPU_TEMP": [67, 71, 58, 0],
        "DCGM_FI_DEV_POWER_USAGE": [612.431, 648.112, 247.9, 0],
        "DCGM_FI_DEV_GPU_UTIL": [100, 100, 100, 0],
        "DCGM_FI_DEV_FB_USED": [71234, 71230, 71188, 0],
        "DCGM_FI_DEV_XID_ERRORS": [0, 0, 0, 79],
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": [0, 0, 0, 2],
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": [0, 0, 0, 1],
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE": [0.991234, 0.993410, 0.999871, 0],
        "DCGM_FI_PROF_SM_ACTIVE": [0.812345, 0.824410, 0.031250, 0],
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": [0.452301, 0.468877, 0.000412, 0],
        "DCGM_FI_PROF_DRAM_ACTIVE": [0.381102, 0.377245, 0.004103, 0],
    }
    lines = []
    for metric, (typ, help_) in DCGM_FIELDS.items():
        lines.append(f"# HELP {metric} {help_}")
        lines.append(f"# TYPE {metric} {typ}")
        for g in range(4):
            lab = (f'gpu="{g}",UUID="{uuids[g]}",pci_bus_id="{bus[g]}",device="nvidia{g}",'
                   f'modelName="NVIDIA H100 80GB HBM3",Hostname="gpu-node-017",DCGM_FI_DRIVER_VERSION="550.90.07"')
            lines.append(f"{metric}{{{lab}}} {values[metric][g]}")
    return "\n".join(lines) + "\n"


DCGM_EXPORTER_SAMPLE = _make_sample()


def gpu_metrics(expo: Exposition) -> list[dict]:
    """One row per GPU (by the ``gpu`` label) with the dcgm-exporter fields present, unit-suffixed.

    Keys: gpu, hostname, util_pct, sm_active, tensor_active, dram_active, gr_active, temp_c, power_w,
    fb_used_mib, sm_clock_mhz, xid, ecc_dbe, remapped_rows_uncorrectable (absent fields are None).
    """
    keys = {"DCGM_FI_DEV_GPU_UTIL": "util_pct", "DCGM_FI_PROF_SM_ACTIVE": "sm_active",
            "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": "tensor_active", "DCGM_FI_PROF_DRAM_ACTIVE": "dram_active",
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE": "gr_active", "DCGM_FI_DEV_GPU_TEMP": "temp_c",
            "DCGM_FI_DEV_POWER_USAGE": "power_w", "DCGM_FI_DEV_FB_USED": "fb_used_mib",
            "DCGM_FI_DEV_SM_CLOCK": "sm_clock_mhz", "DCGM_FI_DEV_XID_ERRORS": "xid",
            "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": "ecc_dbe",
            "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": "remapped_rows_uncorrectable"}
    rows: dict = {}
    for s in expo.samples:
        if s.name not in keys or s.label("gpu") is None:
            continue
        g = s.label("gpu")
        row = rows.setdefault(g, {"gpu": g, "hostname": s.label("Hostname"), **{v: None for v in keys.values()}})
        row[keys[s.name]] = s.value if math.isfinite(s.value) else None
    if not rows:
        raise PromParseError(f"{TOOL}: no dcgm-exporter GPU metrics (DCGM_FI_*{{gpu=...}}) in the exposition")
    out = sorted(rows.values(), key=lambda r: (len(r["gpu"]), r["gpu"]))
    for r in out:
        for k in ("xid", "ecc_dbe", "remapped_rows_uncorrectable"):
            if r[k] is not None:
                r[k] = int(r[k])
    return out


def utilisation_gap(row: dict) -> dict:
    """GPU_UTIL (any kernel running, %) vs what the SMs and tensor cores actually did.

    DCGM_FI_DEV_GPU_UTIL is the fraction of time *one or more kernels* ran (NVML
    ``nvmlDeviceGetUtilizationRates``); an NCCL kernel spinning on a hung peer counts as 100 %.
    DCGM_FI_PROF_SM_ACTIVE / PIPE_TENSOR_ACTIVE are the fractions of SM / tensor-pipe cycles
    actually busy (DCGM "Profiling Metrics" documentation). Returns the three as fractions and
    ``util_minus_tensor`` (how much of "100 %" was not tensor work).
    """
    for k in ("util_pct", "sm_active", "tensor_active"):
        if row.get(k) is None:
            raise ValueError(f"row needs {k!r} (enable the DCP/profiling metrics in dcgm-exporter); got {row.get(k)!r}")
    util = validate.number("util_pct", row["util_pct"], lo=0, hi=100) / 100.0
    sm = validate.fraction("sm_active", row["sm_active"], allow_zero=True)
    tensor = validate.fraction("tensor_active", row["tensor_active"], allow_zero=True)
    return {"util": util, "sm_active": sm, "tensor_active": tensor, "util_minus_tensor": util - tensor}


# ============================================================================== 2. alert rules
_OPS = {">": np.greater, ">=": np.greater_equal, "<": np.less, "<=": np.less_equal, "==": np.equal, "!=": np.not_equal}
SEVERITIES = ("critical", "warning", "info")


@dataclass(frozen=True)
class AlertRule:
    """A threshold rule ``metric op threshold`` held for ``for_s`` seconds (Prometheus ``for:``).

    ``selector`` is an optional PromQL label matcher string such as ``'job="train"'``.
    """
    name: str
    metric: str
    op: str
    threshold: float
    for_s: float = 0.0
    severity: str = "warning"
    summary: str = ""
    selector: str = ""

    def __post_init__(self):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.name or ""):
            raise ValueError(f"name must be an identifier like 'GpuTooHot'; got {self.name!r}")
        if not _NAME.fullmatch(self.metric or ""):
            raise ValueError(f"metric must be a Prometheus metric name; got {self.metric!r}")
        validate.choice("op", self.op, list(_OPS))
        validate.number("threshold", self.threshold)
        validate.positive("for_s", self.for_s, allow_zero=True)
        validate.choice("severity", self.severity, SEVERITIES)
        _parse_selector(self.selector)

    @property
    def expr(self) -> str:
        sel = f"{{{self.selector}}}" if self.selector else ""
        return f"{self.metric}{sel} {self.op} {self.threshold:g}"

    @property
    def matchers(self) -> dict:
        """The ``selector`` as {label: value} (equality matchers ``a="x",b="y"`` only)."""
        return _parse_selector(self.selector)

    def summary_template(self) -> str:
        """The ``summary`` annotation with its Prometheus template: DCGM metrics name the host and GPU,
        other metrics (``up``) the scrape target."""
        text = self.summary or f"{self.metric} {self.op} {self.threshold:g} for {format_duration(self.for_s)}"
        where = ("on {{ $labels.Hostname }} GPU {{ $labels.gpu }}" if self.metric.startswith("DCGM_")
                 else "on {{ $labels.instance }}")
        return f"{text} {where}"


_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*')


def _parse_selector(selector: str) -> dict:
    out: dict = {}
    rest = (selector or "").strip()
    while rest:
        m = _MATCHER.match(rest)
        if not m:
            raise ValueError(f"selector must be equality matchers like 'job=\"train\"'; got {selector!r}")
        out[m.group(1)] = m.group(2)
        rest = rest[m.end():]
        if rest.startswith(","):
            rest = rest[1:]
        elif rest:
            raise ValueError(f"selector must be equality matchers like 'job=\"train\"'; got {selector!r}")
    return out


@dataclass
class RuleEvaluation:
    t_s: np.ndarray          # evaluation times (s)
    condition: np.ndarray    # (n_series, n_t) expression true
    pending: np.ndarray      # condition true but not yet for_s long
    firing: np.ndarray       # (n_series, n_t)
    first_fire_s: list       # per series: first firing time (s) or None

    @property
    def episodes(self) -> list[tuple[int, float, float]]:
        """(series, start_s, end_s) of each firing episode; end_s is the last firing evaluation."""
        f = self.firing
        pad = np.zeros((f.shape[0], 1), dtype=bool)
        d = np.diff(np.concatenate([pad, f, pad], axis=1).astype(np.int8), axis=1)
        s_up, i_up = np.nonzero(d == 1)          # row-major order: rises and falls pair up one-to-one
        _, i_dn = np.nonzero(d == -1)
        out = list(zip(s_up.tolist(), self.t_s[i_up].tolist(), self.t_s[i_dn - 1].tolist()))
        return sorted(out, key=lambda e: (e[1], e[0]))


def evaluate_rule(rule: AlertRule, t_s, values) -> RuleEvaluation:
    """Evaluate ``rule`` at times ``t_s`` (strictly increasing, s) over ``values`` (n_t,) or (n_series, n_t).

    Prometheus semantics: the alert becomes pending at the first evaluation where the expression
    is true (activeAt) and fires at every later evaluation with ``t - activeAt >= for_s`` while the
    expression stays true; a false evaluation resets it. With ``for_s = 0`` it fires at once.
    Vectorised: the start of the current true-run is a running maximum over the indices of false
    evaluations.
    """
    t = validate.number("t_s", t_s)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    if t.ndim != 1 or t.size < 1 or (t.size > 1 and np.any(np.diff(t) <= 0)):
        raise ValueError("t_s must be a 1-D strictly increasing array of times (s)")
    v = np.asarray(values, dtype=float)
    if v.ndim == 1:
        v = v[None, :]
    if v.ndim != 2 or v.shape[1] != t.size:
        raise ValueError(f"values must have shape (n_t,) or (n_series, n_t) with n_t = {t.size}; got {np.shape(values)}")
    finite = np.isfinite(v)           # a missing scrape (NaN) makes the expression false, as an absent series does
    cond = np.zeros(v.shape, dtype=bool)
    cond[finite] = _OPS[rule.op](v[finite], rule.threshold)
    idx = np.arange(t.size)
    last_false = np.maximum.accumulate(np.where(cond, -1, idx[None, :]), axis=1)
    start = np.minimum(last_false + 1, t.size - 1)
    held = t[None, :] - t[start]
    firing = cond & (held >= rule.for_s - 1e-9)
    pending = cond & ~firing
    first = [float(t[np.argmax(row)]) if row.any() else None for row in firing]
    return RuleEvaluation(t, cond, pending, firing, first)


def format_duration(seconds) -> str:
    """Prometheus duration string: 0 -> '0s', 90 -> '90s', 120 -> '2m', 3600 -> '1h' (integer seconds)."""
    s = validate.positive("seconds", seconds, allow_zero=True)
    if s != int(s):
        raise ValueError(f"seconds must be a whole number of seconds; got {seconds!r}")
    s = int(s)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s and s % size == 0:
            return f"{s // size}{unit}"
    return f"{s}s"


def _q(s: str) -> str:
    """YAML single-quoted scalar."""
    return "'" + str(s).replace("'", "''") + "'"


def alert_rules_yaml(rules, group: str = "gpu-health", *, prometheus_rule: bool = False,
                     namespace: str = "monitoring", interval_s: float | None = None) -> str:
    """The Prometheus alerting-rules file for ``rules`` (text, no PyYAML needed).

    ``prometheus_rule=True`` wraps the groups in a prometheus-operator ``PrometheusRule`` object
    (apiVersion monitoring.coreos.com/v1, kind PrometheusRule, spec.groups), as applied with
    ``kubectl apply -f``. Format: Prometheus docs "Alerting rules" / "Recording rules" (rule file
    syntax) and prometheus-operator API reference.
    """
    rules = list(rules)
    if not rules:
        raise ValueError("rules must contain at least one AlertRule")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", group or ""):
        raise ValueError(f"group must be a name of letters, digits, '-', '_' or '.'; got {group!r}")
    names = [r.name for r in rules]
    if len(set(names)) != len(names):
        raise ValueError(f"rule names must be unique; got {names}")
    ind = "  " if prometheus_rule else ""
    lines = []
    if prometheus_rule:
        lines += ["apiVersion: monitoring.coreos.com/v1", "kind: PrometheusRule", "metadata:",
                  f"  name: {group}", f"  namespace: {namespace}", "spec:"]
    lines.append(f"{ind}groups:")
    lines.append(f"{ind}- name: {group}")
    if interval_s is not None:
        lines.append(f"{ind}  interval: {format_duration(interval_s)}")
    lines.append(f"{ind}  rules:")
    for r in rules:
        lines.append(f"{ind}  - alert: {r.name}")
        lines.append(f"{ind}    expr: {_q(r.expr)}")
        if r.for_s:
            lines.append(f"{ind}    for: {format_duration(r.for_s)}")
        lines.append(f"{ind}    labels:")
        lines.append(f"{ind}      severity: {r.severity}")
        lines.append(f"{ind}    annotations:")
        lines.append(f"{ind}      summary: {_q(r.summary_template())}")
    return "\n".join(lines) + "\n"


def default_rules(slowdown_temp_c: float = 87.0) -> list[AlertRule]:
    """The chapter's starting rule set (COURSE POLICY; thresholds illustrative, see ch26).

    GPU too hot: ``slowdown_temp_c - 5`` for 5 min (slowdown temperature from ``nvidia-smi -q``,
    87 C in the course's H100 sample); XID 79 / any uncorrectable ECC at once; a training job
    whose tensor pipes are idle for 10 min (hang) is critical; and the monitor itself: dcgm-exporter
    not scraped (``up == 0``, which Prometheus writes for every failed scrape) for 2 min, because
    then every other rule on that node is silent.
    """
    hot = validate.number("slowdown_temp_c", slowdown_temp_c, lo=40, hi=120)
    return [
        AlertRule("GpuTemperatureHigh", "DCGM_FI_DEV_GPU_TEMP", ">", hot - 5, 300, "warning",
                  "GPU temperature near its slowdown point"),
        AlertRule("GpuFellOffBus", "DCGM_FI_DEV_XID_ERRORS", "==", 79, 0, "critical", "XID 79: GPU has fallen off the bus"),
        AlertRule("GpuUncorrectableEcc", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", ">", 0, 0, "critical",
                  "Double-bit (uncorrectable) ECC errors"),
        AlertRule("TrainingTensorIdle", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "<", 0.05, 600, "critical",
                  "Tensor pipes idle: job hung or stalled", selector='job="train"'),
        AlertRule("DcgmExporterDown", "up", "==", 0, 120, "critical",
                  "dcgm-exporter not scraped: every GPU rule on this node is blind", selector='job="dcgm-exporter"'),
    ]


RULES_INTERVAL_S = 30          # evaluation interval of the shipped rules file and its promtool tests


# ======================================================================== 3. stragglers
def rolling_mean(x, window: int):
    """Trailing mean over the last ``window`` columns (fewer at the start), along the last axis."""
    a = np.asarray(x, dtype=float)
    w = validate.integer("window", window, lo=1)
    c = np.cumsum(a, axis=-1)
    out = c.copy()
    out[..., w:] = c[..., w:] - c[..., :-w]
    counts = np.minimum(np.arange(1, a.shape[-1] + 1), w)
    return out / counts


@dataclass
class StragglerReport:
    z: np.ndarray              # (n_ranks, n_steps) modified z-score of the windowed compute time
    slowdown: np.ndarray       # (n_ranks, n_steps) windowed compute time / median across ranks
    flagged: np.ndarray        # (n_ranks, n_steps) z > threshold
    first_flag_step: dict      # rank -> first step index it was flagged
    threshold: float

    @property
    def ranks(self) -> list[int]:
        """Ranks flagged at the last step (the current stragglers)."""
        return [int(r) for r in np.nonzero(self.flagged[:, -1])[0]]


MAD_TO_SIGMA = 0.6745  # Phi^-1(0.75): MAD of a normal = 0.6745 sigma (Iglewicz & Hoaglin 1993)


def detect_stragglers(compute_s, window: int = 20, threshold: float = 3.5, rel_floor: float = 0.005) -> StragglerReport:
    """Flag slow ranks from per-rank compute time per step, ``compute_s`` shape (n_ranks, n_steps).

    x_r = trailing mean over ``window`` steps; M_r = 0.6745 (x_r - median_r x) / MAD_r x, flagged
    when M_r > ``threshold`` (3.5: Iglewicz & Hoaglin 1993). MAD is floored at ``rel_floor`` x the
    median so that a perfectly uniform fleet does not divide by zero (a rank must then be at least
    ~``threshold x rel_floor / 0.6745`` slower than the median to be flagged).
    """
    a = np.asarray(compute_s, dtype=float)
    if a.ndim != 2 or a.shape[0] < 3:
        raise ValueError(f"compute_s must be a 2-D array (n_ranks >= 3, n_steps); got shape {a.shape}")
    validate.positive("compute_s", a)
    thr = validate.positive("threshold", threshold)
    floor = validate.positive("rel_floor", rel_floor)
    x = rolling_mean(a, window)
    med = np.median(x, axis=0)
    mad = np.median(np.abs(x - med), axis=0)
    mad = np.maximum(mad, floor * med)
    z = MAD_TO_SIGMA * (x - med) / mad
    flagged = z > thr
    first = {int(r): int(np.argmax(flagged[r])) for r in range(a.shape[0]) if flagged[r].any()}
    return StragglerReport(z, x / med, flagged, first, thr)


def straggler_throughput_loss(slowdown, n_gpus=1024, compute_fraction=1.0, n_slow=1):
    """Throughput lost when ``n_slow >= 1`` of ``n_gpus`` ranks compute ``slowdown`` x slower.

    Synchronous step: T = max_i(c_i) + m with c the compute time (fraction ``compute_fraction``
    of the healthy step, the rest exposed communication m). One slow rank makes the step
    1 + (slowdown - 1) f times longer, however many ranks are slow: loss = 1 - 1/(1 + (s-1) f).
    Returns dict(loss_fraction, gpus_equivalent_lost, step_time_ratio); vectorised over slowdown.
    """
    s = validate.number("slowdown", slowdown, lo=1.0)
    n = validate.integer("n_gpus", n_gpus, lo=1)
    f = validate.fraction("compute_fraction", compute_fraction)
    validate.integer("n_slow", n_slow, lo=1, hi=n)
    ratio = 1.0 + (np.asarray(s) - 1.0) * f
    loss = 1.0 - 1.0 / ratio
    sc = np.ndim(slowdown) == 0
    g = (lambda v: float(v)) if sc else (lambda v: v)
    return {"loss_fraction": g(loss), "gpus_equivalent_lost": g(loss * n), "step_time_ratio": g(ratio)}


def hang_cost_usd(n_gpus, hang_s, usd_per_gpu_hour):
    """Cost of a whole job standing still for ``hang_s`` (every GPU of a synchronous job idles)."""
    n = validate.integer("n_gpus", n_gpus, lo=1)
    h = validate.positive("hang_s", hang_s, allow_zero=True)
    p = validate.positive("usd_per_gpu_hour", usd_per_gpu_hour)
    return n * np.asarray(h) / 3600.0 * p if np.ndim(hang_s) else n * h / 3600.0 * p


# ====================================================================== 4. synthetic telemetry
FAULTS = ("none", "thermal_throttle", "xid79", "slow_nic")


@dataclass
class Telemetry:
    """Seeded synthetic scrape data of one training job (illustrative values, see synthetic_telemetry)."""
    fault: str
    t_s: np.ndarray             # scrape times (s)
    onset_s: float | None       # fault onset (None for 'none')
    faulty_gpu: int | None
    affected: np.ndarray        # (n_gpus,) bool: series whose behaviour the fault changes
    temp_c: np.ndarray          # (n_gpus, n_t) DCGM_FI_DEV_GPU_TEMP
    util_pct: np.ndarray        # DCGM_FI_DEV_GPU_UTIL
    tensor_active: np.ndarray   # DCGM_FI_PROF_PIPE_TENSOR_ACTIVE
    power_w: np.ndarray         # DCGM_FI_DEV_POWER_USAGE
    xid: np.ndarray             # DCGM_FI_DEV_XID_ERRORS (last XID, 0 = none)
    step_s: np.ndarray          # train_step_seconds as each rank reports it (sync job: the same step)
    compute_s: np.ndarray       # per-rank compute time before the all-reduce (straggler signal)
    params: dict

    @property
    def n_gpus(self) -> int:
        return self.temp_c.shape[0]

    def series(self, attr: str) -> np.ndarray:
        validate.choice("attr", attr, ["temp_c", "util_pct", "tensor_active", "power_w", "xid", "step_s", "compute_s"])
        return getattr(self, attr)


def _ar1(rng, shape, phi: float, sigma: float) -> np.ndarray:
    """Stationary AR(1) noise (std ``sigma``, lag-1 correlation ``phi``) along the last axis."""
    e = rng.standard_normal(shape) * sigma * math.sqrt(1 - phi * phi)
    out = np.empty(shape)
    out[..., 0] = rng.standard_normal(shape[:-1]) * sigma
    for i in range(1, shape[-1]):
        out[..., i] = phi * out[..., i - 1] + e[..., i]
    return out


@lru_cache(maxsize=1)
def _sample_slowdown_temp_c() -> float:
    """'GPU Slowdown Temp' of the course's nvidia-smi -q sample (87 C, an H100 SXM)."""
    q = parse_nvidia_smi_q(_samples.sample("nvidia_smi_q"))
    temps = [g.slowdown_temp_c for g in q.gpus if getattr(g, "slowdown_temp_c", None)]
    return float(temps[0]) if temps else 87.0


def synthetic_telemetry(fault: str = "thermal_throttle", *, n_gpus: int = 64, duration_s: float = 6 * 3600,
                        interval_s: float = 15.0, onset_s: float = 3 * 3600, faulty_gpu: int = 13, seed: int = 0,
                        checkpoint_every_s: float = 1800.0, checkpoint_stall_s: float = 60.0,
                        throttle_slowdown: float = 1.25, nic_slowdown: float = 4.0,
                        compute_fraction: float = 0.7) -> Telemetry:
    """A training job on ``n_gpus`` GPUs scraped every ``interval_s`` with one injected fault.

    Healthy behaviour (illustrative numbers, chosen to look like an H100 job, not measured):
    temperature 60-70 C per GPU (fixed per-GPU airflow offset) + AR(1) noise (sigma 1.5 C);
    tensor-pipe activity 0.45 +- 0.03; step time 1.0 s (compute 0.7 s + exposed all-reduce 0.3 s)
    with 2 % jitter; every ``checkpoint_every_s`` a synchronous checkpoint stalls all GPUs for
    ``checkpoint_stall_s`` (tensor activity ~0.02, step time x3) - the classic source of false alerts.

    Faults at ``onset_s`` on ``faulty_gpu``:
    - 'thermal_throttle': its temperature climbs (tau 10 min) towards slowdown + 5 C (slowdown
      temperature from the course's nvidia-smi -q sample); above the slowdown temperature its
      compute is ``throttle_slowdown`` x slower, and every rank's step waits for it.
    - 'xid79': the GPU falls off the bus (XID 79, all its metrics 0); the other ranks hang in NCCL:
      GPU_UTIL stays 100 % while tensor activity drops to ~0 and no step completes.
    - 'slow_nic': one rail runs ``nic_slowdown`` x slower; the ring all-reduce runs at the slowest
      link, so every rank's step time grows by the same amount (per-GPU metrics look alike).
    """
    validate.choice("fault", fault, FAULTS)
    n = validate.integer("n_gpus", n_gpus, lo=3)
    dur = validate.positive("duration_s", duration_s)
    dt = validate.positive("interval_s", interval_s)
    if dur / dt > 200_000:
        raise ValueError(f"duration_s / interval_s must be <= 200000 scrapes; got {dur / dt:g}")
    onset = validate.number("onset_s", onset_s, lo=0, hi=dur)
    fg = validate.integer("faulty_gpu", faulty_gpu, lo=0, hi=n - 1)
    cke = validate.positive("checkpoint_every_s", checkpoint_every_s)
    cks = validate.positive("checkpoint_stall_s", checkpoint_stall_s, allow_zero=True)
    ts = validate.number("throttle_slowdown", throttle_slowdown, lo=1.0, hi=10.0)
    ns = validate.number("nic_slowdown", nic_slowdown, lo=1.0, hi=100.0)
    cf = validate.fraction("compute_fraction", compute_fraction)
    rng = np.random.default_rng(validate.integer("seed", seed, lo=0))

    t = np.arange(0.0, dur + 1e-9, dt)
    nt = t.size
    slow_c = _sample_slowdown_temp_c()
    base_temp = 60.0 + 10.0 * rng.random(n)
    temp = base_temp[:, None] + _ar1(rng, (n, nt), 0.9, 1.5)
    tensor = 0.45 + _ar1(rng, (n, nt), 0.7, 0.03)
    compute = cf * (1.0 + 0.02 * rng.standard_normal((n, nt)))
    comm = (1.0 - cf) * np.ones(nt)
    stall = ((t % cke) < cks) & (t >= cke)           # synchronous checkpoint after every interval
    tensor[:, stall] = 0.02 + 0.01 * rng.random((n, int(stall.sum())))

    after = t >= onset
    affected = np.zeros(n, dtype=bool)
    hung = np.zeros(nt, dtype=bool)
    util = np.full((n, nt), 100.0)
    xid = np.zeros((n, nt))
    if fault == "thermal_throttle":
        affected[fg] = True
        target = slow_c + 5.0
        rise = (target - base_temp[fg]) * (1 - np.exp(-np.clip(t - onset, 0, None) / 600.0))
        temp[fg] += np.where(after, rise, 0.0)
        throttled = after & (temp[fg] > slow_c)
        compute[fg, throttled] *= ts
    elif fault == "xid79":
        affected[:] = True
        hung = after
        xid[fg, after] = 79
    elif fault == "slow_nic":
        affected[:] = True
        comm = np.where(after, comm * ns, comm)

    step = compute.max(axis=0) + comm
    step = np.where(stall, 3.0 * step, step)
    step_s = step[None, :] * (1.0 + 0.002 * rng.standard_normal((n, nt)))   # per-rank timer noise
    # ranks that wait for the slowest one leave their tensor pipes idle for the difference
    tensor = tensor * (compute / step[None, :]) / cf
    power = 250.0 + 900.0 * tensor + 2.0 * (temp - 60.0)
    if fault == "xid79":
        tensor[:, hung] = 0.001 + 0.001 * rng.random((n, int(hung.sum())))
        power[:, hung] = 260.0 + 5.0 * rng.random((n, int(hung.sum())))
        step_s[:, hung] = np.nan                      # no step completes: the gauge stops updating
        for arr, v in ((util, 0.0), (tensor, 0.0), (power, 0.0), (temp, 0.0)):
            arr[fg, hung] = v
    tensor = np.clip(tensor, 0.0, 1.0)
    util[:, stall] = 100.0
    return Telemetry(fault, t, None if fault == "none" else float(onset), None if fault == "none" else fg,
                     affected, temp, util, tensor, power, xid, step_s, compute,
                     {"n_gpus": n, "interval_s": dt, "slowdown_temp_c": slow_c, "seed": seed,
                      "checkpoint_every_s": cke, "checkpoint_stall_s": cks})


# signal each fault is watched by: (metric, op, Telemetry attribute)
_WATCH = {"none": ("DCGM_FI_DEV_GPU_TEMP", ">", "temp_c"),
          "thermal_throttle": ("DCGM_FI_DEV_GPU_TEMP", ">", "temp_c"),
          "xid79": ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "<", "tensor_active"),
          "slow_nic": ("train_step_seconds", ">", "step_s")}


def watched_rule(tel: Telemetry, k_sigma: float, for_s: float) -> AlertRule:
    """The rule the explorer puts on ``tel``: threshold = healthy baseline +- ``k_sigma`` x healthy std.

    Baseline = median and std = 1.4826 x MAD (the robust sigma) over all GPUs before the onset (the
    whole run for 'none'): the rare checkpoint stalls do not inflate it, so they are what a too
    sensitive rule (small k, short ``for:``) fires on.
    """
    metric, op, attr = _WATCH[tel.fault]
    k = validate.positive("k_sigma", k_sigma)
    validate.positive("for_s", for_s, allow_zero=True)
    x = tel.series(attr)
    calm = x[:, tel.t_s < tel.onset_s] if tel.onset_s else x
    calm = calm[np.isfinite(calm)]
    mu = float(np.median(calm))
    sd = max(1.4826 * float(np.median(np.abs(calm - mu))), 1e-6 * max(abs(mu), 1.0))
    thr = mu + k * sd if op == ">" else mu - k * sd
    return AlertRule(f"Watch_{tel.fault}", metric, op, round(thr, 4), for_s, "warning")


@dataclass
class AlertScore:
    detection_delay_s: float | None   # first firing on an affected series at/after onset - onset (None: missed)
    false_positives: int              # firing episodes on unaffected series, or before the onset
    true_episodes: int
    evaluation: RuleEvaluation
    rule: AlertRule

    @property
    def detected(self) -> bool:
        return self.detection_delay_s is not None

    def false_positives_per_1000_gpu_days(self, n_gpus: int, duration_s: float) -> float:
        n = validate.integer("n_gpus", n_gpus, lo=1)
        d = validate.positive("duration_s", duration_s)
        return self.false_positives / (n * d / 86400.0) * 1000.0


def score_alerts(tel: Telemetry, rule: AlertRule) -> AlertScore:
    """Evaluate ``rule`` on the watched signal of ``tel`` and score detection delay / false positives."""
    _, _, attr = _WATCH[tel.fault]
    ev = evaluate_rule(rule, tel.t_s, tel.series(attr))
    fp = tp = 0
    delay = None
    for s, start, _end in ev.episodes:
        true = tel.onset_s is not None and tel.affected[s] and start >= tel.onset_s
        if true:
            tp += 1
        else:
            fp += 1
    if tel.onset_s is not None:
        after = tel.t_s >= tel.onset_s
        hits = ev.firing[tel.affected][:, after]
        if hits.any():
            first_idx = int(np.min(np.argmax(hits, axis=1)[hits.any(axis=1)]))
            delay = float(tel.t_s[after][first_idx] - tel.onset_s)
    return AlertScore(delay, fp, tp, ev, rule)
