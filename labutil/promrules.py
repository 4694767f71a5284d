"""The course's alert rules as a Prometheus rules file, and unit tests for ``promtool test rules`` (ch26).

:func:`rule_scenarios` are hand-written unit tests of every rule in
:func:`labutil.monitoring.default_rules` (fires when it should, stays silent when it should not,
meets a missed scrape or an absent series); :func:`promtool_test_yaml` writes them in promtool's
format (Prometheus docs, "Unit testing for rules"); :func:`scenario_firing` is what
:func:`labutil.monitoring.evaluate_rule` says at the same instants. :func:`prometheus_artefacts`
are the files shipped in ``labutil/data/prometheus/`` (tests/test_promtool.py runs promtool on them).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from importlib import resources

import numpy as np

from . import validate
from .monitoring import (RULES_INTERVAL_S, AlertRule, _q, alert_rules_yaml, default_rules, evaluate_rule,
                         format_duration)
from .parsers.prometheus import METRIC_NAME as _NAME
from .parsers.prometheus import escape_label_value as _esc_label
from .parsers.prometheus import format_value as _fmt_value

__all__ = ["PROMETHEUS_DIR", "RULES_FILE", "RULES_TEST_FILE", "RULES_INTERVAL_S", "RuleScenario", "rule_scenarios",
           "scenario_firing", "promtool_test_yaml", "prometheus_artefacts", "prometheus_artefact_path"]


# The course's rules as files a real Prometheus reads, and unit tests for `promtool test rules`
# (Prometheus docs, "Unit testing for rules"). Staleness: when a scrape fails, Prometheus writes a
# staleness marker for every series of the last scrape, so an instant selector returns nothing
# until the next good scrape (Prometheus docs, "Querying basics", Staleness; B. Brazil, "Staleness
# and PromQL", Robust Perception, 2017). `evaluate_rule` treats NaN the same way, so a missed
# scrape is NaN here and `stale` in promtool's input series.
PROMETHEUS_DIR = "prometheus"                        # labutil/data/prometheus/
RULES_FILE = "gpu-health-rules.yml"
RULES_TEST_FILE = "gpu-health-rules.test.yml"
_NODE = (("Hostname", "gpu-node-017"),)


@dataclass(frozen=True)
class RuleScenario:
    """One ``promtool test rules`` case: input series on a fixed scrape interval and, for one alert,
    the series expected to be FIRING at chosen evaluation times.

    ``series``: ((metric, ((label, value), ...), (v0, v1, ...)), ...), one value per ``interval_s``
    from t = 0; NaN = a missed scrape (staleness marker). ``expect``: ((eval_s, (i, ...)), ...) with
    i the indices into ``series`` of the firing series (empty: nothing fires).
    """
    name: str
    alert: str
    series: tuple
    expect: tuple
    interval_s: float = RULES_INTERVAL_S

    def __post_init__(self):
        validate.positive("interval_s", self.interval_s)
        for metric, labels, values in self.series:
            if not _NAME.fullmatch(metric):
                raise ValueError(f"series metric must be a Prometheus metric name; got {metric!r}")
            if not values:
                raise ValueError(f"series {metric}{dict(labels)} has no values")
        last = (min(len(v) for _, _, v in self.series) - 1) * self.interval_s if self.series else 0.0
        for t, idx in self.expect:
            validate.number("eval_s", t, lo=0, hi=last)   # within every series (promtool would look back 5 min)
            if any(not 0 <= i < len(self.series) for i in idx):
                raise ValueError(f"expect at {t} s names series {idx}; scenario {self.name!r} has {len(self.series)}")


def _rule_by_name(rules, alert: str) -> AlertRule:
    by = {r.name: r for r in rules}
    if alert not in by:
        raise validate.unknown_name("alert", alert, by)
    return by[alert]


def _series(metric: str, labels: dict, values) -> tuple:
    return (metric, tuple(sorted(labels.items())), tuple(float(v) for v in values))


def rule_scenarios(slowdown_temp_c: float = 87.0) -> list[RuleScenario]:
    """Hand-written unit tests of every rule in :func:`default_rules`: each rule fires when it should,
    stays silent when it should not, and meets a missed scrape or an absent series.

    The expectations are written from the rule text (threshold, ``for:``), not computed by
    :func:`evaluate_rule`; tests check that both ``promtool test rules`` and :func:`evaluate_rule`
    agree with them. Interval 30 s: value i is the scrape at t = 30 i s.
    """
    hot = validate.number("slowdown_temp_c", slowdown_temp_c, lo=40, hi=120) - 5   # the rule's threshold
    nan = math.nan
    g = lambda gpu, **kw: {**dict(_NODE), "gpu": str(gpu), "job": "dcgm-exporter", **kw}  # noqa: E731
    T, X, E, P = ("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                  "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE")
    up = lambda node: {"instance": f"{node}:9400", "job": "dcgm-exporter"}  # noqa: E731
    return [
        RuleScenario("temperature above the threshold for 5 min fires; a cool GPU never does", "GpuTemperatureHigh",
                     (_series(T, g(0), [hot - 12] * 4 + [hot + 8] * 16), _series(T, g(1), [hot - 7] * 20)),
                     ((390, ()), (420, (0,)), (570, (0,)))),
        RuleScenario("one cool scrape resets for: (fires 5 min after the dip, not at 5 min)", "GpuTemperatureHigh",
                     (_series(T, g(0), [hot + 8] * 8 + [hot - 2] + [hot + 8] * 12),),
                     ((300, ()), (540, ()), (570, (0,)))),
        RuleScenario("a missed scrape (staleness marker) resets for: like a cool one", "GpuTemperatureHigh",
                     (_series(T, g(0), [hot + 8] * 8 + [nan] + [hot + 8] * 12),),
                     ((300, ()), (540, ()), (570, (0,)))),
        RuleScenario("exporter down: no temperature series, the rule cannot fire (see DcgmExporterDown)",
                     "GpuTemperatureHigh", (_series("up", up("gpu-node-017"), [0] * 20),),
                     ((0, ()), (300, ()), (570, ()))),
        RuleScenario("XID 79 fires at the first scrape that shows it; a GPU without XID never", "GpuFellOffBus",
                     (_series(X, g(3), [0, 0, 0, 79, 79, 79]), _series(X, g(0), [0] * 6)),
                     ((60, ()), (90, (0,)), (150, (0,)))),
        RuleScenario("the gauge holds the LAST XID: a later XID 13 overwrites 79 and the alert resolves",
                     "GpuFellOffBus", (_series(X, g(3), [0, 79, 79, 13, 13]),), ((30, (0,)), (90, ()))),
        RuleScenario("a missed scrape drops a for: 0 alert for one evaluation (it resolves, then fires again)",
                     "GpuFellOffBus", (_series(X, g(3), [79, 79, nan, 79]),), ((30, (0,)), (60, ()), (90, (0,)))),
        RuleScenario("double-bit ECC counter above 0 fires at once; a clean GPU never", "GpuUncorrectableEcc",
                     (_series(E, g(3), [0, 0, 2, 2, 2]), _series(E, g(0), [0] * 5)),
                     ((30, ()), (60, (0,)), (120, (0,)))),
        RuleScenario("a GPU reset clears the volatile counter: the alert resolves", "GpuUncorrectableEcc",
                     (_series(E, g(3), [0, 2, 2, 0, 0]),), ((30, (0,)), (90, ()))),
        RuleScenario("ECC field not in the exporter's CSV (both upstream lists): no series, never fires",
                     "GpuUncorrectableEcc", (_series(T, g(3), [65] * 5),), ((0, ()), (60, ()), (120, ()))),
        RuleScenario("hung job: tensor pipes idle 10 min fires; another job's idle GPU is not selected",
                     "TrainingTensorIdle",
                     (_series(P, g(0, job="train"), [0.45] * 4 + [0.001] * 24),
                      _series(P, g(0, job="other"), [0.001] * 28)),
                     ((690, ()), (720, (0,)), (810, (0,)))),
        RuleScenario("a 60 s checkpoint stall never fires", "TrainingTensorIdle",
                     (_series(P, g(0, job="train"), [0.45] * 5 + [0.02] * 2 + [0.45] * 21),),
                     ((180, ()), (600, ()), (780, ()))),
        RuleScenario("a missed scrape during a hang restarts the 10 min", "TrainingTensorIdle",
                     (_series(P, g(0, job="train"), [0.001] * 10 + [nan] + [0.001] * 25),),
                     ((600, ()), (900, ()), (930, (0,)))),
        RuleScenario("exporter not scraped for 2 min fires; one failed scrape on another node does not",
                     "DcgmExporterDown",
                     (_series("up", up("gpu-node-017"), [1] * 4 + [0] * 8),
                      _series("up", up("gpu-node-018"), [1, 1, 0] + [1] * 9)),
                     ((210, ()), (240, (0,)), (330, (0,)))),
        RuleScenario("target removed from service discovery: no up series, so this rule is silent too "
                     "(absent() catches that case)", "DcgmExporterDown",
                     (_series(T, g(0), [65] * 6),), ((0, ()), (150, ()))),
    ]


def scenario_firing(scenario: RuleScenario, rules=None, eval_s=None) -> tuple:
    """What :func:`evaluate_rule` says fires in ``scenario``: ((eval_s, (series indices)), ...).

    The rule's metric name and ``selector`` pick the series (as the PromQL instant selector does);
    evaluation times default to the scenario's ``expect`` times, and must be multiples of its interval.
    """
    rule = _rule_by_name(default_rules() if rules is None else rules, scenario.alert)
    times = [t for t, _ in scenario.expect] if eval_s is None else list(eval_s)
    want = rule.matchers
    idx = [i for i, (m, lab, _) in enumerate(scenario.series)
           if m == rule.metric and all(dict(lab).get(k) == v for k, v in want.items())]
    out = []
    for t in times:
        k = t / scenario.interval_s
        if abs(k - round(k)) > 1e-9:
            raise ValueError(f"eval_s {t} is not a multiple of the scenario interval {scenario.interval_s:g} s")
        k = int(round(k))
        if not idx:
            out.append((t, ()))
            continue
        grid = np.arange(k + 1) * scenario.interval_s
        vals = np.full((len(idx), k + 1), np.nan)
        for row, i in enumerate(idx):
            v = np.asarray(scenario.series[i][2], dtype=float)[: k + 1]
            vals[row, : v.size] = v
        fire = evaluate_rule(rule, grid, vals).firing[:, -1]
        out.append((t, tuple(i for i, f in zip(idx, fire) if f)))
    return tuple(out)


def _render(template: str, labels: dict) -> str:
    return re.sub(r"\{\{\s*\$labels\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}", lambda m: labels.get(m.group(1), ""), template)


def _fmt_series_value(v: float) -> str:
    return "stale" if math.isnan(v) else _fmt_value(v)


def promtool_test_yaml(scenarios, rules=None, rule_file: str = RULES_FILE) -> str:
    """A ``promtool test rules`` file for ``scenarios`` against ``rule_file`` (path relative to the test file).

    Each scenario is one test group (its own input series); each expected instant becomes an
    ``alert_rule_test`` entry with the full label set and rendered ``summary`` of every firing alert
    (``exp_alerts: []`` when nothing fires).
    """
    rules = default_rules() if rules is None else list(rules)
    scenarios = list(scenarios)
    if not scenarios:
        raise ValueError("scenarios must contain at least one RuleScenario")
    intervals = {s.interval_s for s in scenarios}
    lines = ["# Unit tests of the course's alert rules: promtool test rules " + RULES_TEST_FILE,
             "# Generated by labutil.promrules.promtool_test_yaml(rule_scenarios()); do not edit by hand.",
             "rule_files:", f"  - {rule_file}", f"evaluation_interval: {format_duration(min(intervals))}", "tests:"]
    for sc in scenarios:
        rule = _rule_by_name(rules, sc.alert)
        lines.append(f"  # {sc.alert}: {sc.name}")
        lines += [f"  - interval: {format_duration(sc.interval_s)}", "    input_series:"]
        for metric, labels, values in sc.series:
            lab = ",".join(f'{k}="{_esc_label(v)}"' for k, v in labels)
            lines.append(f"      - series: {_q(f'{metric}{{{lab}}}')}")
            lines.append(f"        values: {_q(' '.join(_fmt_series_value(v) for v in values))}")
        lines.append("    alert_rule_test:")
        for t, firing in sc.expect:
            lines += [f"      - eval_time: {format_duration(t)}", f"        alertname: {rule.name}"]
            if not firing:
                lines.append("        exp_alerts: []")
                continue
            lines.append("        exp_alerts:")
            for i in firing:
                labels = dict(sc.series[i][1])
                lines.append("          - exp_labels:")
                for k, v in sorted({**labels, "severity": rule.severity}.items()):
                    lines.append(f"              {k}: {_q(v)}")
                lines.append("            exp_annotations:")
                lines.append(f"              summary: {_q(_render(rule.summary_template(), labels))}")
    return "\n".join(lines) + "\n"


def prometheus_artefacts(slowdown_temp_c: float = 87.0) -> dict:
    """The files shipped in ``labutil/data/prometheus/``: the rules file (for ``promtool check rules``
    and Prometheus' ``rule_files``) and its unit tests (``promtool test rules``), as {name: text}."""
    rules = default_rules(slowdown_temp_c)
    return {RULES_FILE: alert_rules_yaml(rules, interval_s=RULES_INTERVAL_S),
            RULES_TEST_FILE: promtool_test_yaml(rule_scenarios(slowdown_temp_c), rules)}


def prometheus_artefact_path(name: str = RULES_FILE):
    """Path of a shipped artefact (``RULES_FILE`` or ``RULES_TEST_FILE``) inside the installed package."""
    validate.choice("name", name, [RULES_FILE, RULES_TEST_FILE])
    return resources.files("labutil").joinpath("data", PROMETHEUS_DIR, name)
