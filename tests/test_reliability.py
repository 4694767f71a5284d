"""Tests of labutil.reliability: series-system MTBF, Young/Daly, goodput, Monte Carlo.

Validation targets: Llama 3 (arXiv:2407.21783) s3.3.4 / Table 5; Kokolis et al. 2024
(arXiv:2410.21680) failure rates per 1000 node-days; Young 1974; Daly 2006 (FGCS 22(3)); seed 000.
"""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from labutil import reliability as R


# -- failures per day and series systems ------------------------------------------------------------
def test_seed000_ten_thousand_gpus_fail_2_4_per_day():
    # seed 000 误区三: 10,000 GPUs at 100,000 h MTBF -> 24 * 10^4 / 10^5 = 2.4 GPU failures per day
    assert R.failures_per_day(10_000, 100_000) == pytest.approx(2.4)


def test_cluster_mtbf_series_formula_mapping_and_dataclasses():
    comps = {"gpu": (10_000, 100_000), "host": (1_250, 50_000)}
    expected = 1.0 / (10_000 / 100_000 + 1_250 / 50_000)
    assert R.cluster_mtbf_hours(comps) == pytest.approx(expected)
    as_list = [R.Component("gpu", 10_000, 100_000), R.Component("host", 1_250, 50_000)]
    assert R.cluster_mtbf_hours(as_list) == pytest.approx(expected)
    assert R.cluster_failures_per_day(comps) == pytest.approx(24.0 / expected)
    shares = R.failure_breakdown(comps)
    assert sum(shares.values()) == pytest.approx(1.0)
    assert shares["gpu"] == pytest.approx(0.1 / 0.125)


def test_cluster_mtbf_vectorised_over_counts():
    n = np.array([1_000, 10_000, 100_000])
    m = R.cluster_mtbf_hours({"gpu": (n, 100_000)})
    assert np.allclose(m, 100_000 / n)


def test_adding_hosts_nics_switches_cables_keeps_seed_claim():
    # seed 000: with the other parts of a 10,000-GPU cluster (Llama 3-calibrated rates) the
    # cluster sees well over one interruption per day, not "several per year".
    base = R.failures_per_day(10_000, 100_000)
    comps = {c.name: (c.count, c.mtbf_hours) for c in R.llama3_components(10_000)}
    comps["gpu"] = (10_000, 100_000)  # the seed's GPU MTBF
    total = R.cluster_failures_per_day(comps)
    assert total > base
    assert 2.4 < total < 10.0


# -- Llama 3 validation ------------------------------------------------------------------------------
def test_llama3_table5_counts_sum_to_419_unexpected():
    rows = R.llama3_table5()
    assert len(rows) == 18
    assert sum(r["count"] for r in rows) == 419  # Table 5
    d = R.reference_data()["llama3"]
    assert d["total_interruptions"] - d["planned_interruptions"] == d["unexpected_interruptions"] == 419
    by = R.llama3_counts_by_part()
    assert by["gpu"] == 268 and by["host"] == 21 and by["network"] == 35 and by["maintenance"] == 32
    # printed shares: HBM3 72/419 = 17.2 %, software 54/419 = 12.9 % (Table 5)
    hbm = next(r for r in rows if r["component"] == "GPU HBM3 Memory")
    assert 100 * hbm["count"] / 419 == pytest.approx(hbm["printed_pct"], abs=0.05)


def test_llama3_rate_is_7_8_per_day_and_components_reproduce_it():
    # Llama 3 s3.3.4: 419 unexpected interruptions in 54 days on 16,384 H100 -> 7.76 per day
    assert R.llama3_failures_per_day() == pytest.approx(419 / 54)
    assert R.llama3_failures_per_day(16_384) == pytest.approx(7.76, abs=0.01)
    comps = R.llama3_components(16_384)
    assert R.cluster_failures_per_day(comps) * 54 == pytest.approx(419, rel=1e-9)
    assert R.cluster_mtbf_hours(comps) == pytest.approx(54 * 24 / 419)  # ~3.1 h
    m = R.llama3_component_mtbf_hours()
    assert m["gpu"] == pytest.approx(16_384 * 54 * 24 / 268)


def test_llama3_rate_lies_between_kokolis_rsc2_and_rsc1():
    # Kokolis et al. 2024: 6.50 (RSC-1) and 2.34 (RSC-2) failures per 1000 node-days; their
    # projected MTTF of a 16k-GPU job on RSC-1 is 1.8 h.
    k = R.reference_data()["kokolis2024"]
    r = R.llama3_rate_per_1000_node_days()
    assert r == pytest.approx(3.79, abs=0.01)
    assert k["rsc2_failures_per_1000_node_days"] < r < k["rsc1_failures_per_1000_node_days"]
    assert R.job_mttf_hours_from_node_rate(16_384, 6.50) == pytest.approx(k["rsc1_projected_mttf_16k_gpus_h"], abs=0.05)


def test_monte_carlo_reproduces_llama3_interruptions():
    f = R.llama3_failures_per_day(16_384)
    sim = R.simulate_timelines(f, 54, restart_s=600, interval_s=1800, checkpoint_s=60, trials=1000, seed=1,
                               parts=R.llama3_components(16_384))
    assert sim.mean_interruptions == pytest.approx(419, rel=0.01)
    assert sim.interruptions.std() == pytest.approx(math.sqrt(419), rel=0.15)  # Poisson
    gpu_share = sim.interruptions_by_part["gpu"].sum() / sim.interruptions.sum()
    assert gpu_share == pytest.approx(268 / 419, abs=0.01)


def test_llama3_90_percent_needs_minutes_scale_restart():
    # Llama 3 reports > 90 % effective training time at 7.76 interruptions/day. With a 30-second
    # checkpoint the restart budget that still allows 90 % is a few minutes, not hours; with a
    # blocking 60-second checkpoint 90 % is out of reach even with an instant restart.
    f = R.llama3_failures_per_day(16_384)
    r_max = R.max_restart_s_for_goodput(0.90, f, 30.0)
    assert 60 < r_max < 15 * 60
    assert R.optimal_goodput(f, r_max, 30.0) == pytest.approx(0.90, abs=1e-6)
    assert R.max_restart_s_for_goodput(0.90, f, 60.0) == 0.0
    assert R.optimal_goodput(f, 0.0, 60.0) < 0.90
    assert R.optimal_goodput(f, 3 * 3600, 30.0) < 0.5  # hours of manual recovery: goodput collapses


# -- Young / Daly -------------------------------------------------------------------------------------
def test_young_textbook_example():
    # 5-minute checkpoint, 24 h MTBF: sqrt(2 * 300 s * 86,400 s) = 7,200 s = 2 h
    assert R.young_daly_interval_s(300, 86_400) == pytest.approx(7_200.0)


def test_daly_higher_order_formula():
    d, m = 300.0, 86_400.0
    x = d / (2 * m)
    expected = math.sqrt(2 * d * m) * (1 + math.sqrt(x) / 3 + x / 9) - d  # Daly 2006 higher-order optimum
    assert R.daly_interval_s(d, m) == pytest.approx(expected)
    assert R.daly_interval_s(500.0, 100.0) == pytest.approx(100.0)  # delta >= 2M -> tau = M
    assert abs(R.daly_interval_s(d, m) - R.young_daly_interval_s(d, m)) / 7200 < 0.05


def test_young_interval_is_the_goodput_optimum():
    f, r, d = 7.76, 600.0, 60.0
    tau = np.linspace(60, 7200, 20_000)
    g = R.goodput(f, r, tau, d)
    best = tau[np.argmax(g)]
    young = R.young_daly_interval_s(d, 86_400 / f)
    # Daly's higher-order interval is the optimum of this model (Daly 2006); Young's first-order
    # interval is close, and the curve is flat there: goodput within 0.1 % of the best
    assert best == pytest.approx(R.daly_interval_s(d, 86_400 / f), rel=0.01)
    assert best == pytest.approx(young, rel=0.10)
    assert R.goodput(f, r, young, d) == pytest.approx(g.max(), abs=1e-3)
    g0 = R.goodput(1.0, 0.0, tau, 10.0)  # delta << M, R = 0: optimum -> Young
    assert tau[np.argmax(g0)] == pytest.approx(R.young_daly_interval_s(10.0, 86_400.0), rel=0.02)


@given(m1=st.floats(10.0, 1e7), m2=st.floats(10.0, 1e7), d=st.floats(0.1, 1e4))
def test_young_interval_grows_with_mtbf(m1, m2, d):
    lo, hi = sorted((m1, m2))
    assert R.young_daly_interval_s(d, lo) <= R.young_daly_interval_s(d, hi)


@given(m1=st.floats(10.0, 1e7), m2=st.floats(10.0, 1e7), d=st.floats(0.1, 5.0))
def test_daly_interval_grows_with_mtbf_in_its_domain(m1, m2, d):
    lo, hi = sorted((m1, m2))  # d < 2M on both
    assert R.daly_interval_s(d, lo) <= R.daly_interval_s(d, hi) + 1e-9


# -- goodput -------------------------------------------------------------------------------------------
def test_goodput_formula_and_bounds():
    g = R.goodput(7.76, 600, 1800, 60)
    m = 86_400 / 7.76
    assert g == pytest.approx(1800 / (m * math.exp(600 / m) * math.expm1(1860 / m)))  # Daly 2006, exponential-failure model
    lam = 1 / m
    assert g == pytest.approx((1 - lam * (600 + 930)) * 1800 / 1860, abs=0.01)  # first order: R + tau/2 per failure
    assert R.goodput(0.0, 600, 1800, 0.0) == 1.0
    assert R.goodput(0.0, 600, 1800, 60.0) == pytest.approx(1800 / 1860)
    g_bad = R.goodput(1e4, 3600, 1800, 60)  # fails far faster than it restarts: tiny, never negative or NaN
    assert 0.0 <= g_bad < 1e-6


@given(f1=st.floats(0, 500), f2=st.floats(0, 500), r=st.floats(0, 1e4), tau=st.floats(1, 1e5), d=st.floats(0, 1e3))
def test_more_failures_never_raise_goodput(f1, f2, r, tau, d):
    lo, hi = sorted((f1, f2))
    g_lo, g_hi = R.goodput(lo, r, tau, d), R.goodput(hi, r, tau, d)
    assert g_hi <= g_lo + 1e-12
    assert 0.0 <= g_hi <= 1.0


@given(f=st.floats(0, 500), r1=st.floats(0, 1e5), r2=st.floats(0, 1e5), tau=st.floats(1, 1e5), d=st.floats(0, 1e3))
def test_longer_restart_never_raises_goodput(f, r1, r2, tau, d):
    lo, hi = sorted((r1, r2))
    assert R.goodput(f, hi, tau, d) <= R.goodput(f, lo, tau, d) + 1e-12


def test_goodput_vectorised():
    g = R.goodput(np.array([1.0, 5.0, 10.0]), 600, 1800, 60)
    assert g.shape == (3,) and np.all(np.diff(g) < 0)


@pytest.mark.parametrize("call, name", [
    (lambda: R.goodput(-1, 600, 1800, 60), "failures_per_day"),
    (lambda: R.goodput(1, -5, 1800, 60), "restart_s"),
    (lambda: R.goodput(1, 600, 0, 60), "interval_s"),
    (lambda: R.goodput(1, 600, 1800, float("nan")), "checkpoint_s"),
    (lambda: R.young_daly_interval_s(0, 100), "checkpoint_s"),
    (lambda: R.young_daly_interval_s(60, -1), "mtbf_s"),
    (lambda: R.daly_interval_s(60, 0), "mtbf_s"),
    (lambda: R.cluster_mtbf_hours({"gpu": (10, 0)}), "mtbf_hours"),
    (lambda: R.cluster_mtbf_hours({"gpu": (-1, 100)}), "count"),
    (lambda: R.cluster_mtbf_hours({"gpu": 5}), "components"),
    (lambda: R.cluster_mtbf_hours({}), "components"),
    (lambda: R.simulate_timelines(1, 0, restart_s=1, interval_s=1, checkpoint_s=1), "days"),
    (lambda: R.simulate_timelines(1, 1, restart_s=1, interval_s=1, checkpoint_s=1, trials=0), "trials"),
    (lambda: R.max_restart_s_for_goodput(1.5, 1, 60), "target"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# -- Monte Carlo -----------------------------------------------------------------------------------------
def test_simulation_is_seeded_and_matches_the_analytic_goodput():
    f = 7.76
    a = R.simulate_timelines(f, 54, restart_s=600, interval_s=1200, checkpoint_s=60, trials=400, seed=3)
    b = R.simulate_timelines(f, 54, restart_s=600, interval_s=1200, checkpoint_s=60, trials=400, seed=3)
    assert np.array_equal(a.interruptions, b.interruptions) and np.array_equal(a.goodput, b.goodput)
    assert a.mean_goodput == pytest.approx(R.goodput(f, 600, 1200, 60), abs=0.003)
    assert np.all((a.goodput >= 0) & (a.goodput <= 1))
    # accounting: useful + checkpoint + lost = wall clock
    total = a.useful_hours + a.checkpoint_hours + a.lost_hours
    assert np.allclose(total, 54 * 24)


def test_simulation_without_failures_is_pure_checkpoint_overhead():
    sim = R.simulate_timelines(0.0, 2, restart_s=600, interval_s=1800, checkpoint_s=60, trials=3, seed=0)
    assert np.all(sim.interruptions == 0)
    assert sim.goodput == pytest.approx(np.full(3, 1800 / 1860), abs=2e-3)


def test_simulation_timeline_is_consistent():
    sim = R.simulate_run(7.76, 3, restart_s=600, interval_s=1200, checkpoint_s=60, seed=2,
                         parts={"gpu": 268, "other": 151})
    tl = sim.timeline
    assert len(tl.failure_s) == sim.interruptions[0] == len(tl.failure_part)
    assert np.all(np.diff(tl.t_s) >= -1e-9)              # time never goes backwards
    assert tl.t_s[-1] == pytest.approx(3 * 86_400)
    assert tl.progress_s.max() <= tl.t_s[-1]
    assert tl.useful_s == pytest.approx(sim.useful_hours[0] * 3600)
    # progress drops only at failures
    drops = np.where(np.diff(tl.progress_s) < -1e-9)[0]
    assert len(drops) <= len(tl.failure_s)


def test_more_failures_lower_simulated_goodput():
    lo = R.simulate_timelines(2, 20, restart_s=600, interval_s=1200, checkpoint_s=60, trials=200, seed=0)
    hi = R.simulate_timelines(20, 20, restart_s=600, interval_s=1200, checkpoint_s=60, trials=200, seed=0)
    assert hi.mean_goodput < lo.mean_goodput
    assert hi.lost_hours.mean() > lo.lost_hours.mean()


# -- operations helpers ----------------------------------------------------------------------------------
def test_parse_sacct_sample_and_garbage():
    from labutil.parsers import ParseError

    recs = R.parse_sacct(R.sample_text("sacct_requeue"))
    assert [r.state for r in recs] == ["NODE_FAIL", "REQUEUED", "FAILED", "RUNNING"]
    assert recs[0].elapsed_s == 13 * 3600 + 41 * 60 + 7
    assert recs[3].elapsed_s == 86400 + 4 * 3600 + 12 * 60 + 55
    assert recs[0].nodes == 128
    for bad in ("", "garbage", "JobID|State\n1|FAILED", b"\x00\x01",
                "JobID|JobName|State|ExitCode|Elapsed\n1|x|FAILED|0:0|yesterday", 42):
        with pytest.raises(ParseError):
            R.parse_sacct(bad)


def test_xid_triage_and_gpu_memory_actions():
    from labutil.parsers import parse_nvidia_smi_q, parse_xid_errors, samples

    rows = R.triage_xid(parse_xid_errors(samples.sample("dmesg_xid")))
    by = {r["xid"]: r for r in rows}
    assert by[79]["isolate_node"] and not by[13]["isolate_node"]
    q = parse_nvidia_smi_q(samples.sample("nvidia_smi_q"))
    assert [R.gpu_memory_action(g) for g in q.gpus] == ["ok", "reset"]


# -- where the wall-clock goes (ch27 §2, misconception 2) -------------------------------------------
def test_time_breakdown_sums_to_one_and_its_useful_share_is_goodput():
    import numpy as np

    from labutil import reliability as R

    f = R.llama3_failures_per_day(16_384)
    for tau, d, r in ((300.0, 120.0, 600.0), (900.0, 30.0, 600.0), (8 * 3600.0, 120.0, 0.0), (60.0, 0.0, 3600.0)):
        b = R.time_breakdown(f, r, tau, d)
        assert set(b) == {"useful", "checkpoint", "rework", "restart"}
        assert sum(b.values()) == pytest.approx(1.0, abs=1e-12)
        assert b["useful"] == pytest.approx(R.goodput(f, r, tau, d), rel=1e-9)
        assert all(v >= 0 for v in b.values())
    assert R.time_breakdown(f, 0.0, 900.0, 30.0)["restart"] == 0.0
    # vectorised over the interval
    arr = R.time_breakdown(f, 600.0, np.array([300.0, 900.0]), 30.0)
    assert arr["useful"].shape == (2,)


def test_rework_is_half_an_interval_when_short_and_at_most_the_mtbf_when_long():
    from labutil import reliability as R

    f = 1.0                                   # one failure a day: M = 86,400 s
    assert R.mean_rework_s(f, 600.0, 0.0) == pytest.approx(300.0, rel=0.01)
    long = R.mean_rework_s(f, 30 * 86_400.0, 0.0)
    assert long < 86_400.0 and long == pytest.approx(86_400.0, rel=0.01)
    assert R.interval_completion_probability(f, 86_400.0, 0.0) == pytest.approx(math.exp(-1.0))
    assert R.interval_completion_probability(0.0, 3600.0, 10.0) == 1.0


def test_opt175b_logbook_rate():
    # Zhang et al. 2022 (OPT) "Hardware Failures": >= 35 manual + 70+ automatic restarts in ~2 months on 992 A100
    from labutil import reliability as R

    d = R.reference_data()["opt175b"]
    assert (d["gpus"], d["manual_restarts_min"], d["automatic_restarts_min"]) == (992, 35, 70)
    assert R.opt175b_restarts_per_day() == pytest.approx(105 / 61)
    # more than three times the Llama 3-calibrated rate at the same GPU count
    assert R.opt175b_restarts_per_day() > 3 * R.llama3_failures_per_day(992)
