"""The course's alert rules and metric samples, read by the real Prometheus tool.

promtool 2.42 (Debian 12 package ``prometheus``; ``.ci/run`` installs it and sets
``LABUTIL_REQUIRE_PROMTOOL=1``, so in CI these tests cannot skip):

- ``promtool check rules`` accepts the shipped rules file and the ``spec`` of the PrometheusRule;
- ``promtool test rules`` passes the hand-written unit tests of every rule (firing, silent, missed
  scrape, absent series) in ``labutil/data/prometheus/gpu-health-rules.test.yml``;
- ``promtool test rules`` and ``monitoring.evaluate_rule`` agree at every evaluation instant of
  seeded random series (with missed scrapes), and a deliberately wrong expectation FAILS;
- ``promtool check metrics`` parses the dcgm-exporter sample and finds only the two lint classes
  that real dcgm-exporter output has (camelCase labels, counters without ``_total``).
Prometheus docs: "Unit testing for rules", "Recording/Alerting rules", promtool ``--help``.
"""

import math

import numpy as np
import pytest

from conftest import ROOT
from labutil import monitoring as M
from labutil import promrules as R
from realtools import require, run

DATA = ROOT / "labutil" / "data" / "prometheus"


def promtool() -> str:
    return require("promtool", "LABUTIL_REQUIRE_PROMTOOL", "Debian: apt-get install prometheus")


# ------------------------------------------------------------------ no promtool needed
def test_shipped_files_are_what_labutil_generates():
    for name, text in R.prometheus_artefacts().items():
        assert (DATA / name).read_text(encoding="utf-8") == text, (
            f"labutil/data/prometheus/{name} is stale: regenerate it from promrules.prometheus_artefacts()")
    assert R.prometheus_artefact_path(R.RULES_FILE).read_text(encoding="utf-8").startswith("groups:\n")


def test_every_rule_has_firing_silent_and_missed_or_absent_cases():
    scen = R.rule_scenarios()
    for rule in M.default_rules():
        mine = [s for s in scen if s.alert == rule.name]
        fires = [s for s in mine if any(idx for _, idx in s.expect)]
        silent = [s for s in mine if any(not idx for _, idx in s.expect)]
        missed = [s for s in mine if any(any(math.isnan(v) for v in vals) for _, _, vals in s.series)]
        absent = [s for s in mine if not any(m == rule.metric for m, _, _ in s.series)]
        assert fires and silent, rule.name
        assert missed or absent, f"{rule.name}: no missed-scrape or absent-series case"
    assert sum(1 for s in scen for _, _, v in s.series if any(math.isnan(x) for x in v)) >= 3


def test_evaluate_rule_agrees_with_the_hand_written_expectations():
    for sc in R.rule_scenarios():
        assert R.scenario_firing(sc) == sc.expect, f"{sc.alert}: {sc.name}"


def test_scenario_validation():
    with pytest.raises(ValueError, match="eval_s"):
        R.RuleScenario("x", "GpuFellOffBus", (("DCGM_FI_DEV_XID_ERRORS", (), (0.0, 79.0)),), ((90, ()),))
    with pytest.raises(ValueError, match="names series"):
        R.RuleScenario("x", "GpuFellOffBus", (("DCGM_FI_DEV_XID_ERRORS", (), (0.0, 79.0)),), ((30, (1,)),))
    with pytest.raises(KeyError):
        R.scenario_firing(R.RuleScenario("x", "NoSuchAlert", (("up", (), (1.0,)),), ((0, ()),)))
    with pytest.raises(ValueError, match="selector"):
        M.AlertRule("A", "up", "==", 0, selector="job=~'x'")


# ------------------------------------------------------------------------- promtool
def test_promtool_check_rules_accepts_the_rules_file_and_the_prometheusrule_spec(tmp_path):
    exe = promtool()
    r = run([exe, "check", "rules", DATA / R.RULES_FILE])
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"SUCCESS: {len(M.default_rules())} rules found" in r.stdout
    # the PrometheusRule object is not a rules file (promtool rejects the wrapper by design); its spec is
    yaml = pytest.importorskip("yaml")
    cr = yaml.safe_load(M.alert_rules_yaml(M.default_rules(), prometheus_rule=True))
    spec = tmp_path / "spec.yml"
    spec.write_text(yaml.safe_dump(cr["spec"]), encoding="utf-8")
    r = run([exe, "check", "rules", spec])
    assert r.returncode == 0 and "SUCCESS: 5 rules found" in r.stdout, r.stdout + r.stderr


def test_promtool_rejects_a_broken_rules_file(tmp_path):
    """Negative control: the check is real (a PromQL syntax error and a bad duration fail)."""
    exe = promtool()
    good = M.alert_rules_yaml(M.default_rules())
    for broken in (good.replace("DCGM_FI_DEV_GPU_TEMP > 82", "DCGM_FI_DEV_GPU_TEMP >"),
                   good.replace("for: 5m", "for: 5 minutes")):
        f = tmp_path / "broken.yml"
        f.write_text(broken, encoding="utf-8")
        r = run([exe, "check", "rules", f])
        assert r.returncode != 0 and "FAILED" in r.stdout + r.stderr, r.stdout + r.stderr


def test_promtool_test_rules_passes_the_unit_tests_of_every_rule():
    r = run([promtool(), "test", "rules", R.RULES_TEST_FILE], cwd=DATA)
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr


def _random_scenarios(seed: int, n_steps: int = 60):
    """Per rule, three series that switch between a value that satisfies the rule and one that does not
    (Markov, so runs are long enough to pass ``for:``), with ~4 % missed scrapes, scored at every step."""
    rng = np.random.default_rng(seed)
    levels = {"GpuTemperatureHigh": (70.0, 90.0), "GpuFellOffBus": (13.0, 79.0), "GpuUncorrectableEcc": (0.0, 2.0),
              "TrainingTensorIdle": (0.45, 0.01), "DcgmExporterDown": (1.0, 0.0)}
    out = []
    for rule in M.default_rules():
        series = []
        for k in range(3):
            state = rng.random() < 0.5
            vals = []
            for _ in range(n_steps):
                if rng.random() < (0.06 if rule.for_s >= 300 else 0.2):
                    state = not state
                vals.append(math.nan if rng.random() < 0.04 else levels[rule.name][int(state)])
            labels = ({"instance": f"node{k}:9400", "job": "dcgm-exporter"} if rule.metric == "up" else
                      {"Hostname": f"node{k}", "gpu": str(k), "job": "other" if (k == 2 and rule.selector) else
                       rule.matchers.get("job", "dcgm-exporter")})
            series.append((rule.metric, tuple(sorted(labels.items())), tuple(vals)))
        probe = R.RuleScenario(f"random seed {seed}", rule.name, tuple(series), ())
        times = [i * M.RULES_INTERVAL_S for i in range(n_steps)]
        out.append(R.RuleScenario(probe.name, rule.name, probe.series, R.scenario_firing(probe, eval_s=times)))
    return out


def test_promtool_and_evaluate_rule_agree_at_every_instant_and_a_wrong_expectation_fails(tmp_path):
    exe = promtool()
    (tmp_path / R.RULES_FILE).write_text(M.alert_rules_yaml(M.default_rules(), interval_s=M.RULES_INTERVAL_S),
                                         encoding="utf-8")
    scen = _random_scenarios(seed=2026)
    n_points = sum(len(s.expect) for s in scen)
    n_firing = sum(len(idx) for s in scen for _, idx in s.expect)
    assert n_points == 300 and n_firing > 50          # both states well represented
    test_file = tmp_path / "agree.test.yml"
    test_file.write_text(R.promtool_test_yaml(scen), encoding="utf-8")
    r = run([exe, "test", "rules", test_file.name], cwd=tmp_path)
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr
    # negative control: claim one firing alert is silent one step early -> promtool must report FAILED
    sc = next(s for s in scen if any(idx for _, idx in s.expect))
    k = next(i for i, (_, idx) in enumerate(sc.expect) if idx)
    wrong = R.RuleScenario(sc.name, sc.alert, sc.series, sc.expect[:k] + ((sc.expect[k][0], ()),) + sc.expect[k + 1:])
    test_file.write_text(R.promtool_test_yaml([wrong]), encoding="utf-8")
    r = run([exe, "test", "rules", test_file.name], cwd=tmp_path)
    assert r.returncode != 0 and "FAILED" in r.stdout + r.stderr, r.stdout + r.stderr


def test_promtool_check_metrics_parses_the_dcgm_exporter_sample_with_only_its_real_lint():
    exe = promtool()
    r = run([exe, "check", "metrics"], stdin=M.DCGM_EXPORTER_SAMPLE)
    findings = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip()]
    # exit 3 = lint problems only (promtool: 1 = parse error); dcgm-exporter's own output has exactly
    # these two: camelCase labels (modelName, Hostname, UUID) and counters without the _total suffix
    assert r.returncode == 3, findings
    kinds = {ln.split(" ", 1)[1] for ln in findings}
    assert kinds == {"label names should be written in 'snake_case' not 'camelCase'",
                     'counter metrics should have "_total" suffix'}
    counters = {ln.split(" ", 1)[0] for ln in findings if "_total" in ln}
    assert counters == {m for m, (t, _) in M.DCGM_FIELDS.items() if t == "counter"}
    # the course's writer produces text promtool parses the same way
    r2 = run([exe, "check", "metrics"], stdin=M.format_prometheus_text(M.parse_prometheus_text(M.DCGM_EXPORTER_SAMPLE)))
    assert r2.returncode == 3 and sorted(r2.stdout.splitlines()) == sorted(r.stdout.splitlines())


def test_promtool_check_metrics_rejects_what_the_course_parser_rejects():
    exe = promtool()
    for bad in ('m{gpu="0" 5\n', "m abc\n", 'm{gpu="unterminated} 5\n'):
        with pytest.raises(M.PromParseError):
            M.parse_prometheus_text(bad)
        r = run([exe, "check", "metrics"], stdin=bad)
        assert r.returncode == 1 and "parsing error" in r.stdout + r.stderr, (bad, r.stdout + r.stderr)
