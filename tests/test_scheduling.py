"""labutil.scheduling: hand-computed schedules, conservation, EASY backfill, priority, quotas, parsers;
labutil.explore.scheduling: the explorer and figures."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labutil import scheduling as S
from labutil.explore import scheduling as ES

H = 3600.0


# -- hand-computed schedules --------------------------------------------------------------------
def test_fifo_hand_computed():
    # 2 nodes x 8 GPUs. job0 takes both nodes for 10 s; job1 (8 GPUs) and job2 (1 GPU) wait for it.
    wl = S.make_workload([0, 1, 2], [10, 5, 3], [16, 8, 1], ["training", "training", "inference"])
    sc = S.simulate(wl, 16, "fifo")
    assert sc.start_s.tolist() == [0, 10, 10]
    assert sc.end_s.tolist() == [10, 15, 13]
    assert sc.wait_s.tolist() == [0, 9, 8]
    # job1 on node 0 (first of two equally free nodes), job2 best-fits the other node
    assert set(sc.seg_gpu[sc.seg_job == 1]) == set(range(8))
    assert set(sc.seg_gpu[sc.seg_job == 2]) == {8}


def test_fifo_head_of_line_blocking_and_easy_backfill_hand_computed():
    # job0 holds node 0 until t=10; job1 needs both nodes -> reservation (shadow time) t=10.
    # job2 (4 GPUs, 5 s) ends at 7 <= 10: EASY starts it at once. job3 (4 GPUs, 20 s) would end at
    # 23 on node 1 which job1 needs at t=10 -> not backfilled, it runs after job1.
    wl = S.make_workload([0, 1, 2, 3], [10, 5, 5, 20], [8, 16, 4, 4], "training training inference training".split())
    fifo = S.simulate(wl, 16, "fifo")
    bf = S.simulate(wl, 16, "backfill")
    assert fifo.start_s.tolist() == [0, 10, 15, 15]
    assert bf.start_s.tolist() == [0, 10, 2, 15]
    assert bf.reservation_s == {1: 10.0, 3: 15.0}   # job3 heads the queue once job1 starts
    assert bf.wait_stats()["inference"]["max_s"] == 0.0 and fifo.wait_stats()["inference"]["max_s"] == 13.0


def test_backfill_uses_gpus_the_head_does_not_need():
    # head job1 (8 GPUs) waits for node 0 or node 1; job2 (2 GPUs, long) fits next to job0's 4 GPUs on
    # node 0 ... the head then still gets node 1 at its shadow time, so job2 may start although it ends late.
    wl = S.make_workload([0, 0, 1, 2], [10, 10, 5, 100], [4, 8, 8, 2], "training training training inference".split())
    bf = S.simulate(wl, 16, "backfill")
    assert bf.start_s[2] == 10.0 and bf.reservation_s[2] == 10.0
    assert bf.start_s[3] == 2.0        # backfilled beside job0 without delaying job2


def test_priority_and_preemption_hand_computed():
    # one node; two 8-GPU training jobs of 100 s, then a 1-GPU inference job at t=2.
    wl = S.make_workload([0, 1, 2], [100, 100, 10], [8, 8, 1], ["training", "training", "inference"])
    assert S.simulate(wl, 8, "fifo").start_s.tolist() == [0, 100, 200]
    pr = S.simulate(wl, 8, "priority")
    assert pr.start_s.tolist() == [0, 110, 100]          # inference jumps the queue at t=100
    pp = S.simulate(wl, 8, "priority_preempt", restart_overhead_s=5)
    # job0 preempted at t=2 (98 s left + 5 s restart), re-runs 12..115; job1 115..215
    assert pp.start_s.tolist() == [0, 115, 2]
    assert pp.end_s.tolist() == [115, 215, 12]
    assert pp.preemptions.tolist() == [1, 0, 0]
    held = [np.sum(pp.seg_t1_s[pp.seg_job == j] - pp.seg_t0_s[pp.seg_job == j]) for j in range(3)]
    assert held == [8 * (100 + 5), 8 * 100, 1 * 10]


def test_fairshare_orders_by_two_to_minus_u_over_s():
    # account A used the node for 100 s; at t=100 B's job (F=1) goes before A's (F<0.5) although later.
    wl = S.make_workload([0, 1, 2], [100, 10, 10], [8, 8, 8], ["training"] * 3, namespace=["A", "A", "B"])
    assert S.simulate(wl, 8, "fifo").start_s.tolist() == [0, 100, 110]
    assert S.simulate(wl, 8, "fairshare").start_s.tolist() == [0, 110, 100]
    # Slurm classic fair-share factor: F = 2^(-U/S)
    assert S.fairshare_factor(0.0, 0.25) == 1.0
    assert S.fairshare_factor(0.25, 0.25) == pytest.approx(0.5)
    assert S.fairshare_factor(0.5, 0.25) == pytest.approx(0.25)
    np.testing.assert_allclose(S.fairshare_factor(np.array([0.0, 0.5, 1.0]), 0.5), [1.0, 0.5, 0.25])


def test_quota_pending_and_rejected():
    # namespace quota 8 GPUs on a 16-GPU cluster: the second 8-GPU job waits although node 1 is idle;
    # a 16-GPU job exceeds the quota by itself -> rejected (403 exceeded quota); other namespaces flow.
    wl = S.make_workload([0, 0, 1, 2], [10, 10, 10, 5], [8, 8, 16, 4],
                         ["training", "training", "training", "inference"])
    sc = S.simulate(wl, 16, "fifo", quotas={"training": 8})
    assert sc.start_s[:2].tolist() == [0, 10]
    assert sc.rejected.tolist() == [False, False, True, False]
    assert sc.start_s[3] == 2.0 and np.isinf(sc.wait_s[2])
    assert max(sc.tl_ns_used["training"]) == 8


def test_dedicated_inference_partition():
    wl = S.make_workload([0, 0, 1], [10, 10, 10], [8, 16, 8], ["inference", "training", "training"])
    sc = S.simulate(wl, 16, "fifo", inference_nodes=1)
    assert sc.rejected.tolist() == [False, True, False]       # 16 GPUs never fit in the 8 left for training
    assert set(sc.seg_gpu[sc.seg_job == 0]) == set(range(8))  # inference confined to node 0
    assert set(sc.seg_gpu[sc.seg_job == 2]) == set(range(8, 16))
    assert sc.start_s[2] == 1.0


# -- properties over random small workloads -----------------------------------------------------
SIZES = [1, 2, 4, 8, 16, 24]


@st.composite
def workloads(draw):
    n = draw(st.integers(1, 25))
    arr = draw(st.lists(st.integers(0, 200), min_size=n, max_size=n))
    rt = draw(st.lists(st.integers(1, 300), min_size=n, max_size=n))
    g = draw(st.lists(st.sampled_from(SIZES), min_size=n, max_size=n))
    cls = draw(st.lists(st.sampled_from(S.CLASSES), min_size=n, max_size=n))
    return S.make_workload(arr, rt, g, cls)


def _check_conservation(sc, overhead=0.0):
    wl = sc.workload
    # a GPU never holds two jobs at once (so never more GPUs allocated than exist)
    o = np.lexsort((sc.seg_t0_s, sc.seg_gpu))
    g, t0, t1 = sc.seg_gpu[o], sc.seg_t0_s[o], sc.seg_t1_s[o]
    same = g[1:] == g[:-1]
    assert np.all(t0[1:][same] >= t1[:-1][same] - 1e-9)
    assert sc.seg_gpu.min(initial=0) >= 0 and sc.seg_gpu.max(initial=0) < sc.n_gpus
    assert np.all(sc.tl_busy <= sc.n_gpus)
    for j in range(wl.n_jobs):
        m = sc.seg_job == j
        if sc.rejected[j]:
            assert not m.any()
            continue
        held = np.sum(sc.seg_t1_s[m] - sc.seg_t0_s[m])
        expect = wl.gpus[j] * (wl.runtime_s[j] + overhead * sc.preemptions[j])
        assert held == pytest.approx(expect)
        assert sc.start_s[j] >= wl.arrival_s[j]
        if sc.preemptions[j] == 0:          # ran exactly once, for exactly its runtime
            assert np.all(sc.seg_t0_s[m] == sc.start_s[j]) and np.all(sc.seg_t1_s[m] == sc.end_s[j])
            assert sc.end_s[j] - sc.start_s[j] == pytest.approx(wl.runtime_s[j])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wl=workloads(), policy=st.sampled_from(list(S.POLICIES)))
def test_conservation_every_policy(wl, policy):
    sc = S.simulate(wl, 32, policy, restart_overhead_s=7.0)
    _check_conservation(sc, overhead=7.0)
    assert not sc.rejected.any()
    assert 0.0 <= sc.utilisation() <= 1.0 + 1e-12
    assert 0.0 <= sc.fragmentation() <= 1.0 and 0.0 <= sc.idle_while_waiting() <= 1.0


@settings(max_examples=40, deadline=None)
@given(wl=workloads(), policy=st.sampled_from(["backfill", "fairshare"]))
def test_easy_backfill_never_delays_the_head_reservation(wl, policy):
    sc = S.simulate(wl, 32, policy)
    if policy == "backfill":   # FIFO order: the head only changes when it starts
        for j, shadow in sc.reservation_s.items():
            assert sc.start_s[j] <= shadow + 1e-9
    _check_conservation(sc)


@settings(max_examples=30, deadline=None)
@given(wl=workloads(), q=st.sampled_from([8, 16, 24]))
def test_quotas_never_exceeded(wl, q):
    quotas = {"training": q, "inference": 8}
    sc = S.simulate(wl, 32, "backfill", quotas=quotas)
    for ns, used in sc.tl_ns_used.items():
        if ns in quotas:
            assert used.max(initial=0) <= quotas[ns]
    # also from the segments: GPUs held by a namespace at every segment start
    ns = np.array(wl.namespace)[sc.seg_job]
    for name, q_ns in quotas.items():
        m = ns == name
        for t in np.unique(sc.seg_t0_s[m]):
            assert np.sum(m & (sc.seg_t0_s <= t) & (sc.seg_t1_s > t)) <= q_ns
    ns_all = np.array(wl.namespace)
    big = ((wl.gpus > 8) & (ns_all == "inference")) | ((wl.gpus > q) & (ns_all == "training"))
    assert np.array_equal(sc.rejected, big)


# -- generated workloads ------------------------------------------------------------------------
def test_generator_is_deterministic_and_hits_the_offered_load():
    a = S.generate_workload(500, 128, load=0.8, inference_share=0.3, seed=3)
    b = S.generate_workload(500, 128, load=0.8, inference_share=0.3, seed=3)
    c = S.generate_workload(500, 128, load=0.8, inference_share=0.3, seed=4)
    for f in ("arrival_s", "runtime_s", "gpus", "job_class", "priority"):
        assert np.array_equal(getattr(a, f), getattr(b, f))
    assert not np.array_equal(a.arrival_s, c.arrival_s)
    assert a.gpu_seconds() / (128 * a.arrival_s.max()) == pytest.approx(0.8)
    assert a.gpus.max() <= 64 and np.all((a.gpus <= 8) | (a.gpus % 8 == 0))
    s1, s2 = S.simulate(a, 128, "priority_backfill"), S.simulate(b, 128, "priority_backfill")
    assert np.array_equal(s1.start_s, s2.start_s) and s1.summary() == s2.summary()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_qos_priority_cuts_inference_p95_wait(seed):
    wl = S.generate_workload(600, 128, load=0.9, inference_share=0.3, seed=seed)
    fifo = S.simulate(wl, 128, "fifo").summary()
    pri = S.simulate(wl, 128, "priority").summary()
    pre = S.simulate(wl, 128, "priority_preempt").summary()
    bf = S.simulate(wl, 128, "backfill").summary()
    assert pri["inference_p95_s"] < 0.5 * fifo["inference_p95_s"]
    assert pre["inference_p95_s"] <= pri["inference_p95_s"] and pre["starvation_s"] <= pri["starvation_s"]
    assert bf["utilisation"] > fifo["utilisation"]         # backfill fills holes the FIFO head leaves
    assert bf["idle_while_waiting"] < fifo["idle_while_waiting"]


def test_reserving_nodes_for_inference_costs_utilisation():
    r = ES.partition_tradeoff(n_gpus=128, n_jobs=600, max_nodes=3)
    util = [x["utilisation"] for x in r["rows"]]
    assert r["rows"][1]["inference_p95_s"] < r["rows"][0]["inference_p95_s"]
    assert util[3] < util[0]
    assert r["rows"][3]["training_p50_s"] > r["rows"][0]["training_p50_s"]


def test_bad_input_raises():
    wl = S.make_workload([0], [10], [8], ["training"])
    with pytest.raises(KeyError, match="policy"):
        S.simulate(wl, 16, "lottery")
    with pytest.raises(ValueError, match="multiple of gpus_per_node"):
        S.simulate(wl, 12, "fifo")
    with pytest.raises(ValueError, match="multiple of gpus_per_node"):
        S.simulate(S.make_workload([0], [10], [12], ["training"]), 16, "fifo")
    with pytest.raises(ValueError, match="runtime_s"):
        S.make_workload([0], [0], [8], ["training"])
    with pytest.raises(ValueError, match="job_class"):
        S.make_workload([0], [1], [8], ["batch"])
    with pytest.raises(ValueError, match="one entry per job"):
        S.make_workload([0, 1], [1], [8], ["training"])
    with pytest.raises(ValueError, match="load"):
        S.generate_workload(10, 64, load=0)
    with pytest.raises(ValueError, match="inference_share"):
        S.generate_workload(10, 64, inference_share=0.8, interactive_share=0.5)
    with pytest.raises(ValueError, match="quotas"):
        S.simulate(wl, 16, "fifo", quotas={"training": -1})
    with pytest.raises(ValueError, match="norm_shares"):
        S.fairshare_factor(0.5, 0.0)


# -- parsers ------------------------------------------------------------------------------------
def test_parse_squeue_sample():
    jobs = S.parse_squeue(S.SAMPLE_SQUEUE)
    assert len(jobs) == 6
    assert jobs[0].job_id == "41873" and jobs[0].state == "R" and jobs[0].nodes == 8
    assert jobs[0].time_s == 2 * 86400 + 3 * 3600 + 11 * 60 + 45
    assert jobs[2].time_s == 12 * 60 + 3 and jobs[2].nodelist == "gpu011"
    assert [j.reason for j in jobs if j.pending] == ["Resources", "Priority", "QOSMaxGRESPerUser"]


def test_parse_sinfo_and_quota_samples():
    rows = S.parse_sinfo(S.SAMPLE_SINFO)
    assert rows[0].partition == "gpu" and rows[0].default and rows[0].timelimit_s == 7 * 86400
    assert S.sinfo_node_states(rows, "gpu") == {"alloc": 11, "mix": 3, "drain": 1, "idle": 1}
    assert rows[-1].partition == "infer" and not rows[-1].default
    q = S.parse_kubectl_quota(S.SAMPLE_KUBECTL_QUOTA)
    assert q[0].namespace == "team-infer" and q[0].gpu() == (12, 16)
    assert S.slurm_time_s("UNLIMITED") is None and S.slurm_time_s("1-00:00:00") == 86400
    assert S.slurm_time_s("30") == 1800 and S.slurm_time_s("0:00") == 0


@pytest.mark.parametrize("fn", [S.parse_squeue, S.parse_sinfo, S.parse_kubectl_quota])
@pytest.mark.parametrize("text", ["", "   \n", "hello world", "JOBID PARTITION\n1 2", 42,
                                  S.SAMPLE_SQUEUE.replace(" R ", " ?? ", 1)])
def test_parsers_raise_one_clear_error_on_garbage(fn, text):
    if fn is S.parse_squeue and text == S.SAMPLE_SQUEUE:
        return
    with pytest.raises(S.SchedParseError):
        fn(text)


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=300))
def test_parsers_never_crash(text):
    for fn in (S.parse_squeue, S.parse_sinfo, S.parse_kubectl_quota):
        try:
            fn(text)
        except S.SchedParseError:
            pass


# -- explorer and figures -----------------------------------------------------------------------
def test_explorer_reacts_to_controls():
    ex = ES.scheduling_explorer()
    fifo = ex.result["summary"]
    img0 = ex.figure.axes[0].images[0].get_array().copy()
    ex.set(policy="priority_preempt")
    assert ex.error is None
    pre = ex.result["summary"]
    assert pre["inference_p95_s"] < fifo["inference_p95_s"] and pre["preemptions"] > 0
    assert not np.array_equal(ex.figure.axes[0].images[0].get_array(), img0)
    heights = [b.get_height() for b in ex.figure.axes[1].patches]
    assert heights[4] == pytest.approx(pre["inference_p95_s"] / H)     # P95 bars follow P50 bars
    ex.set(policy="fifo", train_quota_gpus=16)
    assert ex.result["schedule"].tl_ns_used["training"].max() <= 16


def test_occupancy_image_matches_busy_gpus():
    wl = ES.backfill_example()
    sc = S.simulate(wl, 16, "backfill")
    img, t0, t1 = ES.occupancy_image(sc, n_bins=400)
    mids = t0 + (np.arange(400) + 0.5) * (t1 - t0) / 400
    busy_at = np.array([sc.tl_busy[np.searchsorted(sc.tl_t_s, t, side="right") - 1] for t in mids])
    assert np.array_equal((img > 0).sum(axis=0), busy_at)
    assert set(np.unique(img)) <= {0, 1, 2, 3}


def test_figures_build(tmp_path):
    from labutil.plotting import save_png

    for fig in (ES.backfill_gantt_figure(), ES.fairshare_figure(),
                ES.policy_comparison_figure(n_jobs=200, n_gpus=64)):
        assert fig.axes and save_png(fig, tmp_path / "f.png").stat().st_size > 10_000


def test_explorer_models_live_in_the_model_module_and_the_summary_uses_one_unit():
    import ast
    import pathlib
    from labutil.explore import scheduling as ES
    assert ES.backfill_example is S.backfill_example and ES.partition_tradeoff is S.partition_tradeoff
    src = pathlib.Path(S.__file__).parent.joinpath("exercises", "ch21.py").read_text(encoding="utf-8")
    imported = [n.module for n in ast.walk(ast.parse(src)) if isinstance(n, ast.ImportFrom)]
    assert not any("explore" in (m or "") for m in imported)
    r = ES.scheduling_model("fifo", 0.0, 0.9, 64)
    assert r["n_inference"] == 0 and "无推理作业" in ES._summary(r, {}) and "min" not in ES._summary(r, {})
    text = ES._summary(ES.scheduling_model("fifo", 0.3, 0.9, 64), {})
    inf = text.split("；")[1]
    assert "推理 P95" in inf and inf.count(" h") == 2 and "min" not in inf        # P95 and max in the same unit
