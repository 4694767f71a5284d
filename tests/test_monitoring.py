"""Monitoring model (ch26): Prometheus exposition parser, alert `for:` semantics, rules YAML,
straggler detection, synthetic telemetry, explorer."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labutil import monitoring as M
from labutil.parsers import ParseError


# ------------------------------------------------------------------------------- parser
def test_dcgm_sample_parses_with_types_help_and_labels():
    e = M.parse_prometheus_text(M.DCGM_EXPORTER_SAMPLE)
    assert set(M.DCGM_FIELDS) <= set(e.names())
    f = e.family("DCGM_FI_DEV_GPU_UTIL")
    assert f.type == "gauge" and f.help == "GPU utilization (in %)."
    assert e.family("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL").type == "counter"
    assert len(f.samples) == 4
    s = f.samples[0]
    assert s.label("Hostname") == "gpu-node-017" and s.label("modelName") == "NVIDIA H100 80GB HBM3"
    assert e.value("DCGM_FI_DEV_XID_ERRORS", gpu=3) == 79
    assert e.value("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", gpu="0") == pytest.approx(0.452301)


def test_gpu_metrics_and_utilisation_gap_from_sample():
    rows = M.gpu_metrics(M.parse_prometheus_text(M.DCGM_EXPORTER_SAMPLE))
    assert [r["gpu"] for r in rows] == ["0", "1", "2", "3"]
    assert rows[3]["xid"] == 79 and rows[3]["ecc_dbe"] == 2 and rows[3]["remapped_rows_uncorrectable"] == 1
    gap = M.utilisation_gap(rows[2])           # GPU 2 spins in NCCL: 100 % util, no tensor work
    assert gap["util"] == 1.0 and gap["tensor_active"] < 0.001
    assert M.utilisation_gap(rows[0])["util_minus_tensor"] == pytest.approx(1 - 0.452301)


def test_parser_details_escapes_timestamps_special_values():
    text = ('# HELP m a\\nb \\\\ help\n# TYPE m counter\n'
            'm{a="x\\"y",b="1, 2",c="line\\nbreak",} 3 1700000000000\n'
            'n +Inf\nn2 NaN\nn3{} -1.5e3\n')
    e = M.parse_prometheus_text(text)
    assert e.family("m").help == "a\nb \\ help"
    s = e.family("m").samples[0]
    assert dict(s.labels) == {"a": 'x"y', "b": "1, 2", "c": "line\nbreak"} and s.timestamp_ms == 1700000000000
    assert e.value("n") == math.inf and math.isnan(e.value("n2")) and e.value("n3") == -1500.0


def test_round_trip_preserves_everything():
    e = M.parse_prometheus_text(M.DCGM_EXPORTER_SAMPLE)
    e2 = M.parse_prometheus_text(M.format_prometheus_text(e))
    assert e2.families == e.families


@pytest.mark.parametrize("bad", [
    "", "   \n", "# only a comment\n", "garbage line\n", 'm{gpu="0" 5\n', 'm{gpu="0"} \n', 'm{gpu="0"} abc\n',
    'm{gpu="unterminated} 5\n', 'm{0gpu="1"} 5\n', "m 1 2 3\n", "m 1 1.5\n", "# TYPE m bogus\nm 1\n",
    "# TYPE m gauge\n# TYPE m counter\nm 1\n", 'm{a="1"} 1\nm{a="1"} 2\n', "m{a=1} 1\n", b"\xff\xfe", 12345, None,
])
def test_garbage_raises_one_clear_parse_error(bad):
    with pytest.raises(M.PromParseError, match="Prometheus text exposition"):
        M.parse_prometheus_text(bad)
    assert issubclass(M.PromParseError, ParseError) and issubclass(M.PromParseError, ValueError)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('mDCG_{}="\\, \n#01.eE+-IfNa9TYPEHLgugeounter')), max_size=80))
def test_fuzz_only_parse_error(text):
    try:
        e = M.parse_prometheus_text(text)
    except M.PromParseError:
        return
    assert e.samples  # a successful parse has at least one sample


label_value = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["gpu", "UUID", "Hostname"]), label_value), max_size=3, unique_by=lambda x: x[0]),
       st.floats(allow_nan=False, width=64))
def test_round_trip_property(labels, value):
    e = M.Exposition({"DCGM_FI_DEV_GPU_TEMP": M.MetricFamily("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).",
                                                             [M.PromSample("DCGM_FI_DEV_GPU_TEMP", tuple(sorted(labels)), value)])})
    assert M.parse_prometheus_text(M.format_prometheus_text(e)).families == e.families


# ------------------------------------------------------------------------------ alert rules
def test_for_fires_only_after_condition_held_for_duration():
    t = np.arange(0, 1200.0, 15.0)
    v = np.where(t >= 300, 90.0, 60.0)
    v[(t >= 600) & (t < 630)] = 60.0            # a 30 s dip resets the pending alert
    rule = M.AlertRule("Hot", "DCGM_FI_DEV_GPU_TEMP", ">", 85, for_s=120)
    ev = M.evaluate_rule(rule, t, v)
    assert ev.first_fire_s == [420.0]           # activeAt 300 s, fires at 300 + 120
    assert not ev.firing[0, t < 420].any()
    assert ev.pending[0, (t >= 300) & (t < 420)].all()
    assert ev.episodes == [(0, 420.0, 585.0), (0, 750.0, float(t[-1]))]   # re-armed at 630 -> fires at 750


def test_for_zero_fires_immediately_and_never_without_condition():
    t = np.arange(0, 300.0, 15.0)
    v = np.stack([np.where(t >= 60, 1.0, 0.0), np.zeros_like(t)])
    ev = M.evaluate_rule(M.AlertRule("Xid", "DCGM_FI_DEV_XID_ERRORS", ">", 0), t, v)
    assert ev.first_fire_s == [60.0, None]
    ev_long = M.evaluate_rule(M.AlertRule("Xid", "DCGM_FI_DEV_XID_ERRORS", ">", 0, for_s=1e6), t, v)
    assert not ev_long.firing.any() and ev_long.pending[0, t >= 60].all()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=60), st.sampled_from([0, 15, 30, 60, 120]))
def test_for_semantics_property(cond, for_s):
    """Firing at i <=> the condition held at every evaluation in [i - for_s/15, i]."""
    t = np.arange(len(cond)) * 15.0
    ev = M.evaluate_rule(M.AlertRule("A", "x", ">", 0.5, for_s=for_s), t, np.array(cond, dtype=float))
    k = for_s // 15
    expect = [i >= k and all(cond[i - k:i + 1]) for i in range(len(cond))]
    assert ev.firing[0].tolist() == expect


def test_rule_and_evaluation_validation():
    with pytest.raises(ValueError, match="op"):
        M.AlertRule("A", "x", "=>", 1)
    with pytest.raises(ValueError, match="for_s"):
        M.AlertRule("A", "x", ">", 1, for_s=-1)
    with pytest.raises(ValueError, match="name"):
        M.AlertRule("bad name", "x", ">", 1)
    with pytest.raises(ValueError, match="strictly increasing"):
        M.evaluate_rule(M.AlertRule("A", "x", ">", 1), [0, 0, 1], [1, 2, 3])
    with pytest.raises(ValueError, match="shape"):
        M.evaluate_rule(M.AlertRule("A", "x", ">", 1), [0, 1, 2], [1, 2])


def test_rules_yaml_structure():
    y = M.alert_rules_yaml(M.default_rules(87), group="gpu-health")
    lines = y.splitlines()
    assert lines[0] == "groups:" and lines[1] == "- name: gpu-health" and lines[2] == "  rules:"
    assert y.count("  - alert: ") == 5
    assert "    expr: 'DCGM_FI_DEV_GPU_TEMP > 82'" in lines and "    for: 5m" in lines
    assert "    expr: 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{job=\"train\"} < 0.05'" in lines and "    for: 10m" in lines
    assert y.count("      severity: critical") == 4
    k8s = M.alert_rules_yaml(M.default_rules(), prometheus_rule=True, namespace="monitoring")
    assert k8s.startswith("apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n")
    assert "\nspec:\n  groups:\n  - name: gpu-health\n    rules:\n" in k8s
    yaml = pytest.importorskip("yaml")
    doc = yaml.safe_load(y)
    r0 = doc["groups"][0]["rules"][0]
    assert r0 == {"alert": "GpuTemperatureHigh", "expr": "DCGM_FI_DEV_GPU_TEMP > 82", "for": "5m",
                  "labels": {"severity": "warning"},
                  "annotations": {"summary": "GPU temperature near its slowdown point on {{ $labels.Hostname }} GPU {{ $labels.gpu }}"}}
    assert yaml.safe_load(k8s)["spec"]["groups"][0]["rules"][3]["for"] == "10m"
    with pytest.raises(ValueError, match="unique"):
        M.alert_rules_yaml([M.default_rules()[0]] * 2)


def test_format_duration():
    assert [M.format_duration(s) for s in (0, 15, 90, 120, 3600, 5400, 86400)] == ["0s", "15s", "90s", "2m", "1h", "90m", "1d"]
    with pytest.raises(ValueError):
        M.format_duration(1.5)


# ------------------------------------------------------------------------------ stragglers
def test_straggler_detector_finds_the_injected_rank():
    rng = np.random.default_rng(3)
    x = 0.7 * (1 + 0.02 * rng.standard_normal((128, 300)))
    x[77, 150:] *= 1.08                          # 8 % slower from step 150
    rep = M.detect_stragglers(x, window=20)
    assert rep.ranks == [77]
    assert 150 <= rep.first_flag_step[77] < 170
    assert rep.slowdown[77, -1] == pytest.approx(1.08, rel=0.01)
    assert not rep.flagged[:, :150].any()


def test_straggler_detector_finds_thermal_throttled_rank_in_telemetry():
    tel = M.synthetic_telemetry("thermal_throttle", seed=1)
    rep = M.detect_stragglers(tel.compute_s[:, ::4])
    assert rep.ranks == [tel.faulty_gpu]


def test_uniform_fleet_is_not_flagged_and_validation():
    assert M.detect_stragglers(np.ones((8, 10))).ranks == []
    with pytest.raises(ValueError, match="compute_s"):
        M.detect_stragglers(np.ones((2, 10)))


def test_straggler_cost_one_slow_gpu_of_1024():
    r = M.straggler_throughput_loss(1.10, 1024)
    assert r["loss_fraction"] == pytest.approx(1 - 1 / 1.1)
    assert r["gpus_equivalent_lost"] == pytest.approx(93.09, abs=0.01)
    assert M.straggler_throughput_loss(1.10, 1024, n_slow=512)["loss_fraction"] == r["loss_fraction"]
    arr = M.straggler_throughput_loss(np.array([1.0, 1.2]), 1024, compute_fraction=0.5)
    assert arr["step_time_ratio"].tolist() == pytest.approx([1.0, 1.1])
    with pytest.raises(ValueError, match="slowdown"):
        M.straggler_throughput_loss(0.9)


def test_hang_cost():
    assert M.hang_cost_usd(1024, 600, 4.916) == pytest.approx(1024 * 600 / 3600 * 4.916)
    with pytest.raises(ValueError, match="n_gpus"):
        M.hang_cost_usd(0, 600, 4.9)


# ------------------------------------------------------------------------------ telemetry
def test_telemetry_is_deterministic_with_a_seed():
    a = M.synthetic_telemetry("slow_nic", seed=7)
    b = M.synthetic_telemetry("slow_nic", seed=7)
    c = M.synthetic_telemetry("slow_nic", seed=8)
    assert np.array_equal(a.temp_c, b.temp_c) and np.array_equal(a.step_s, b.step_s, equal_nan=True)
    assert not np.array_equal(a.temp_c, c.temp_c)


def test_fault_signatures():
    x = M.synthetic_telemetry("xid79")
    after = x.t_s >= x.onset_s
    assert (x.xid[x.faulty_gpu, after] == 79).all() and (x.xid[:, ~after] == 0).all()
    others = np.arange(x.n_gpus) != x.faulty_gpu
    assert (x.util_pct[others][:, after] == 100).all() and x.tensor_active[others][:, after].max() < 0.01
    s = M.synthetic_telemetry("slow_nic")
    calm = s.step_s[:, (s.t_s < s.onset_s) & (s.t_s % 1800 > 120)]
    late = s.step_s[:, (s.t_s > s.onset_s) & (s.t_s % 1800 > 120)]
    assert np.median(late) / np.median(calm) == pytest.approx((0.7 + 0.3 * 4) / 1.0, rel=0.03)
    th = M.synthetic_telemetry("thermal_throttle")
    assert th.temp_c[th.faulty_gpu, -40:].mean() > th.params["slowdown_temp_c"]
    with pytest.raises(ValueError, match="fault"):
        M.synthetic_telemetry("meteor")


def test_sensitivity_trade_off():
    """A more sensitive rule detects sooner but raises more false positives; for: suppresses them."""
    tel = M.synthetic_telemetry("thermal_throttle")
    loose = M.score_alerts(tel, M.watched_rule(tel, 1.5, 0))
    strict = M.score_alerts(tel, M.watched_rule(tel, 4.0, 120))
    assert loose.detection_delay_s < strict.detection_delay_s
    assert loose.false_positives > 50 and strict.false_positives == 0
    stalls = M.synthetic_telemetry("xid79")
    # checkpoint stalls last 60 s: a for: shorter than that fires on each of them on every GPU
    assert M.score_alerts(stalls, M.watched_rule(stalls, 5, 0)).false_positives == 5 * stalls.n_gpus
    ok = M.score_alerts(stalls, M.watched_rule(stalls, 5, 120))
    assert ok.false_positives == 0 and ok.detection_delay_s == 120.0


# ------------------------------------------------------------------------------ explorer
def test_explorer_headless():
    from labutil.explore import monitoring as EM

    ex = EM.alert_rule_explorer()
    r0 = ex.result
    assert r0["score"].detected and r0["score"].false_positives == 0
    line = ex.figure.axes[0].lines[0]
    ex.set(k_sigma=1.5, for_s=0)
    assert ex.error is None and ex.result["score"].false_positives > r0["score"].false_positives
    assert ex.result["score"].detection_delay_s < r0["score"].detection_delay_s
    assert len(ex.figure.axes[1].collections[1].get_offsets()) == ex.result["score"].false_positives
    ex.set(fault="slow_nic")
    assert ex.figure.axes[0].get_ylabel() == "step time (s)"
    assert np.allclose(line.get_ydata(), ex.result["y_shown"], equal_nan=True)
    ex.set(fault="none")
    assert ex.result["score"].detection_delay_s is None and ex.result["score"].true_episodes == 0


def test_figures_build():
    from labutil.explore import monitoring as EM

    gap = EM.utilisation_gap_figure()
    heights = [p.get_height() for p in gap.axes[0].patches]
    assert heights[:4] == [100.0, 100.0, 100.0, 0.0] and heights[4] == pytest.approx(81.2345)
    for fig in (EM.alert_tradeoff_figure(), EM.straggler_figure()):
        assert all(ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes)
        assert all(len(ax.lines) >= 2 for ax in fig.axes)
