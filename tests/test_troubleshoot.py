"""Layered fault localisation (labutil.troubleshoot) and its explorer (ch28)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labutil import comm
from labutil import troubleshoot as T
from labutil.explore import troubleshoot as E
from labutil.parsers import ParseError, samples


@pytest.mark.parametrize("name", T.case_names())
def test_every_case_finds_its_root_layer_and_check(name):
    c = T.case(name)
    d = T.diagnose_case(name)
    assert d.first_failing_layer == c["root_layer"]
    assert d.root_check == c["root_check"]
    assert d.root_finding is not None and d.root_finding.severity == "critical"
    # layers after the failing one are never needed
    idx = T.LAYERS.index(c["root_layer"])
    for later in T.LAYERS[idx + 1:]:
        assert d.layer(later).verdict == "not_run" and d.layer(later).checks == []
    # layers before it either passed or had no evidence
    for earlier in T.LAYERS[:idx]:
        assert d.layer(earlier).verdict in ("pass", "warn", "unknown")


def test_case_set_covers_every_layer_and_enough_cases():
    layers = {T.case(n)["root_layer"] for n in T.case_names()}
    assert layers == set(T.LAYERS)
    assert 4 <= len(T.case_names()) <= 6


def test_network_fault_reported_before_gpu_check_is_needed():
    # the degraded-rail case also carries a bad nvidia-smi -q: the walk must stop at the network
    sym, ev, wl = T.load_case("degraded_rail")
    ev["nvidia_smi_q"] = samples.sample("nvidia_smi_q")
    d = T.diagnose(sym, ev, wl)
    assert d.first_failing_layer == "network"
    assert d.layer("gpu").verdict == "not_run"
    full = T.diagnose(sym, ev, wl, exhaustive=True)
    assert full.layer("gpu").verdict == "fail"          # the GPU fault is real, just not needed first
    assert full.first_failing_layer == "network"


def test_nccl_timeout_is_not_always_the_network():
    """误区: 'NCCL error = network problem' — two NCCL-timeout cases end in GPU and software."""
    for name, layer in (("nccl_timeout_xid79", "gpu"), ("collective_mismatch", "software")):
        d = T.diagnose_case(name)
        assert d.layer("network").verdict == "pass"
        assert d.first_failing_layer == layer


def test_degraded_rail_numbers_from_comm_model():
    d = T.diagnose_case("degraded_rail")
    q = d.quant
    assert q["busbw_measured_gbs"] == pytest.approx(183.92)
    assert q["busbw_expected_gbs"] == pytest.approx(360.0)     # 8 x 400G / 8 x 0.9
    # t = S 2(n-1)/n / busbw (nccl-tests PERFORMANCE.md), n = 16
    assert q["network"]["comm_expected_s"] == pytest.approx(60e9 * 1.875 / 360e9)
    assert q["network"]["slowdown"] == pytest.approx((0.6 + 60e9 * 1.875 / 183.92e9) / 0.9125 - 1, rel=1e-9)
    assert 0.8 < q["network_explains_fraction"] < 0.95


def test_checkpoint_stall_numbers_from_storage_model():
    q = T.diagnose_case("checkpoint_stall").quant
    assert q["required_read_gbs"] == pytest.approx(3200 * 1.5e6 / 1e9)
    assert q["pool_read_gbs"] == pytest.approx(4 * 2000 * 2**20 * (1907 / 2000) / 1e9, rel=1e-3)
    # burst = S / (B - w B), stall = ((R - r) T_b - P R) / R  (storage.read_write_interference)
    B, R = q["pool_read_gbs"], 4.8
    r = 0.5 * B
    burst = 420 / (B - r)
    assert q["checkpoint_burst_s"] == pytest.approx(burst)
    assert q["stall_per_checkpoint_s"] == pytest.approx(((R - r) * burst - 2 * R) / R)


def test_missing_evidence_layer_gives_next_command_and_unknown():
    d = T.diagnose_case("nccl_timeout_xid79", available=["watchdog_log"])
    assert d.layer("network").verdict == "unknown"
    assert d.first_failing_layer is None       # timeout + silent rank is a warning, not a root cause
    assert d.next_command == T.LAYER_LADDER["network"][0]
    silent = [f for c in d.layer("software").checks for f in c.findings if f.check == "silent_ranks"]
    assert silent and silent[0].value == [14]


def test_watchdog_parser_real_format():
    line = ("[rank4]:[E321 02:07:08.414640780 ProcessGroupNCCL.cpp:607] [Rank 4] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, "
            "Timeout(ms)=600000) ran for 600067 milliseconds before timing out.")
    (e,) = T.parse_watchdog_log(line + "\n" + line)
    assert (e.rank, e.seq, e.op, e.ran_ms, e.timeout_ms) == (4, 1580, "ALLREDUCE", 600067, 600000)
    old = ("[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: "
           "WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing out.")
    assert T.parse_watchdog_log(old)[0].timeout_ms == 1800000
    assert T.parse_watchdog_log("") == []
    with pytest.raises(ParseError):
        T.parse_watchdog_log(12345)


def test_garbage_evidence_is_a_critical_parse_finding_not_a_crash():
    d = T.diagnose("job slow", {"ibstat": "%%% not ibstat %%%"})
    assert d.first_failing_layer == "network"
    assert d.root_finding.check == "parse"


def test_bad_inputs():
    with pytest.raises(KeyError, match="ibstat"):
        T.diagnose("slow", {"ibstatt": "x"})
    with pytest.raises(ValueError, match="symptom"):
        T.diagnose("  ", {})
    with pytest.raises(KeyError):
        T.case("no_such_case")
    with pytest.raises(ValueError, match="n_gpus"):
        T.Workload(n_gpus=0)
    with pytest.raises(ValueError, match="slow_factor"):
        T.straggler_slowdown(8, 0.5)
    with pytest.raises(ValueError, match="n_failing"):
        T.expected_random_checks(3, 4)
    with pytest.raises(ValueError, match="hosts"):
        T.pair_test_plan(["a"])


def test_search_cost_formulas():
    c = T.search_cost([False, False, True, False], [1, 2, 3, 4])
    assert c["layered_checks"] == 3 and c["layered_minutes"] == 6
    assert c["random_checks"] == pytest.approx(5 / 2)
    assert c["random_minutes"] == pytest.approx((1 + 2 + 4) / 2 + 3)
    none = T.search_cost([False] * 3, [1, 1, 1])
    assert none["random_checks"] == 3 and none["layered_minutes"] == 3


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=9), st.integers(0, 10_000))
def test_random_order_expectation_matches_enumeration(fails, seed):
    """E[checks] = (N+1)/(k+1) and E[minutes] formula against a Monte Carlo over permutations."""
    rng = np.random.default_rng(seed)
    f = np.array(fails)
    t = rng.uniform(0.5, 5.0, f.size)
    c = T.search_cost(f, t)
    if f.sum() == 0:
        assert c["random_minutes"] == pytest.approx(t.sum())
        return
    perms = np.array([rng.permutation(f.size) for _ in range(4000)])
    ff, tt = f[perms], t[perms]
    first = ff.argmax(axis=1)
    mins = np.array([tt[i, : first[i] + 1].sum() for i in range(len(perms))])
    assert (first + 1).mean() == pytest.approx(c["random_checks"], rel=0.06)
    assert mins.mean() == pytest.approx(c["random_minutes"], rel=0.06)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.05, 1.0))
def test_network_slowdown_monotone_and_zero_at_expected(frac):
    r = T.network_slowdown(0.6, 60e9, 16, 360.0, 360.0 * frac)
    assert r["slowdown"] >= -1e-12
    assert T.network_slowdown(0.6, 60e9, 16, 360.0, 360.0)["slowdown"] == pytest.approx(0.0)
    arr = T.network_slowdown(0.6, 60e9, 16, 360.0, np.array([100.0, 200.0, 300.0]))["slowdown"]
    assert np.all(np.diff(arr) < 0)


def test_comm_time_consistent_with_nccl_busbw_definition():
    t = T.comm_time_from_busbw_s(8 * 2**30, 16, 367.68)
    algbw = 8 * 2**30 / t / 1e9
    assert comm.busbw_gbs("all_reduce", algbw, 16) == pytest.approx(367.68)


def test_straggler_and_blind_restart():
    assert T.straggler_step_s([1.0, 1.0, 1.3, 1.0], 0.2) == pytest.approx(1.5)
    s = T.straggler_slowdown(1024, 1.3, step_s=1.0, comm_s=0.2)
    assert s["step_slow_s"] == pytest.approx(1.24)
    assert s["lost_gpu_per_hour"] == pytest.approx(1024 * (1 - 1 / 1.24))
    b = T.blind_restart_cost(2048, 600, 1800, 3, diagnose_s=600)
    assert b["blind_gpu_h"] == pytest.approx(3 * 2048 * 1500 / 3600)
    assert b["diagnose_gpu_h"] == pytest.approx(2048 * 1200 / 3600)


def test_pair_test_plan_argument_lists():
    plan = T.pair_test_plan(["n1", "n2", "n3"])
    assert len(plan) == 2 and all(isinstance(a, str) for p in plan for a in p)
    assert "n1:8,n2:8" in plan[0] and "n3:8,n1:8" in plan[1]


def test_explorer_toggles_change_the_path():
    ex = E.triage_explorer()
    assert ex.result["diagnosis"].first_failing_layer == "network"
    ex.set(case="checkpoint_stall")
    assert ex.result["states"]["read_bandwidth"] == "fail"
    assert ex.result["states"]["xid"] in ("missing", "not_run")
    ex.set(fio_read=False)
    assert ex.result["states"]["read_bandwidth"] == "missing"
    assert ex.result["diagnosis"].first_failing_layer is None
    ex.set(case="collective_mismatch", fio_read=True)
    r = ex.result
    assert r["diagnosis"].first_failing_layer == "software"
    assert r["diagnosis"].cost["layered_checks"] == 5
    heights = [p.get_height() for p in ex.figure.axes[1].patches]
    assert heights[0] == pytest.approx(r["diagnosis"].cost["layered_minutes"])
    assert heights[1] == pytest.approx(r["diagnosis"].cost["random_minutes"])
    assert ex.error is None


def test_figures_build():
    for fig in (E.decision_path_figure(), E.search_cost_figure(), E.network_slowdown_figure()):
        assert fig.axes
