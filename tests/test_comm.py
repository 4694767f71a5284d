"""Tests of labutil.comm: α-β collective costs, algbw/busbw, step time (the DP-on-cluster half: test_dp.py).

Validation tests cite the formula/table they reproduce; property tests use hypothesis.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from labutil import comm, hardware, models

GB = 1e9


# -- nccl-tests bandwidths: NVIDIA/nccl-tests doc/PERFORMANCE.md --------------------------------
@pytest.mark.parametrize("op,n,factor", [
    ("all_reduce", 8, 2 * 7 / 8), ("all_reduce", 16, 2 * 15 / 16), ("reduce_scatter", 8, 7 / 8),
    ("all_gather", 4, 3 / 4), ("all_to_all", 8, 7 / 8), ("broadcast", 8, 1.0), ("reduce", 32, 1.0),
])
def test_busbw_factors_are_those_of_nccl_tests_performance_md(op, n, factor):
    # PERFORMANCE.md "Summary": AllReduce 2(n-1)/n; ReduceScatter, AllGather, AlltoAll (n-1)/n; Broadcast, Reduce 1
    assert comm.busbw_factor(op, n) == pytest.approx(factor)
    assert comm.busbw_gbs(op, 100.0, n) == pytest.approx(100.0 * factor)


def test_algbw_is_size_over_time_in_decimal_gb():
    # PERFORMANCE.md: algbw = S/t; nccl-tests prints GB/s = 1e9 B/s
    assert comm.algbw_gbs(1e9, 0.5) == pytest.approx(2.0)
    assert comm.algbw_gbs(0, 1e-3) == 0.0


def test_busbw_reproduces_a_published_nccl_tests_row():
    # Public all_reduce_perf run on 2 nodes x 8 H100 (16 ranks), github.com/lessizzmore/create-a3mega-ztan-fork,
    # file ztan-NCCL-test-result, last row: size 8589934592 B, time 47535 us, algbw 180.71, busbw 338.82.
    alg = comm.algbw_gbs(8589934592, 47535e-6)
    assert alg == pytest.approx(180.71, abs=0.01)
    assert comm.busbw_gbs("all_reduce", alg, 16) == pytest.approx(338.82, abs=0.01)
    # and a mid-size row of the same run: 134217728 B, 1652.2 us -> algbw 81.24, busbw 152.32
    alg = comm.algbw_gbs(134217728, 1652.2e-6)
    assert alg == pytest.approx(81.24, abs=0.01)
    assert comm.busbw_gbs("all_reduce", alg, 16) == pytest.approx(152.32, abs=0.01)


def test_ring_without_latency_hits_the_performance_md_optimum():
    # PERFORMANCE.md: the best all-reduce time is t = (S/B)·2(n-1)/n, so busbw = B exactly
    for op in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce"):
        for n in (2, 3, 8, 64):
            bus = comm.model_busbw_gbs(op, 1e9, n, 50.0, latency_s=0.0)
            assert bus == pytest.approx(50.0), (op, n)


def test_ring_allreduce_formula_thakur_patarasuk():
    # Ring all-reduce 2(n-1)α + 2(n-1)/n·S/B (Thakur et al. 2005 §4; Patarasuk & Yuan 2009 lower bound)
    n, s, b, a = 8, 1e9, 50.0, 10e-6
    assert comm.collective_time_s("all_reduce", s, n, b, a) == pytest.approx(2 * 7 * a + 2 * 7 / 8 * s / (b * GB))
    # worked number used in ch13: 1 GB over 8 ranks at 50 GB/s with NCCL's 9.6 us -> 35.13 ms
    assert comm.collective_time_s("all_reduce", 1e9, 8, 50.0) == pytest.approx(0.0351344, rel=1e-6)


@pytest.mark.parametrize("op,steps,beta", [
    ("all_gather", 3, 7 / 8),       # recursive doubling: lg p·α + (p-1)/p·nβ (Thakur §4.1)
    ("reduce_scatter", 3, 7 / 8),   # recursive halving: lg p·α + (p-1)/p·nβ (Thakur §4.4, γ dropped)
    ("broadcast", 3, 3.0),          # binomial tree: ⌈lg p⌉(α + nβ) (Thakur §4.2)
    ("reduce", 3, 3.0),
    ("all_to_all", 3, 1.5),         # Bruck: lg p·α + (n/2)·lg p·β (Thakur §4.5)
    ("all_reduce", 6, 2.0),         # NCCL double binary tree: 2·lg n·α + 2·S/B (tuning.cc ratio .5)
])
def test_tree_family_costs(op, steps, beta):
    s, b, a = 2e8, 25.0, 5e-6
    cost = comm.collective_cost(op, s, 8, b, a, algo="tree")
    assert cost.latency_s == pytest.approx(steps * a)
    assert cost.bandwidth_s == pytest.approx(beta * s / (b * GB))


def test_tree_allreduce_two_ranks_degenerates_to_one_exchange():
    assert comm.collective_time_s("all_reduce", 1e9, 2, 10.0, 0.0, "tree") == pytest.approx(0.1)
    assert comm.collective_time_s("all_reduce", 1e9, 2, 10.0, 0.0, "ring") == pytest.approx(0.1)


def test_one_rank_costs_nothing():
    for op in comm.OPS:
        for algo in ("ring", "tree"):
            assert comm.collective_time_s(op, 1e9, 1, 10.0, 1e-5, algo) == 0.0


def test_ring_latency_linear_tree_logarithmic():
    # NCCL 2.4 blog: ring latency grows linearly with n, double binary tree logarithmically
    small = 8.0
    ring = comm.collective_time_s("all_reduce", small, np.array([64, 1024]), 50.0, algo="ring")
    tree = comm.collective_time_s("all_reduce", small, np.array([64, 1024]), 50.0, algo="tree")
    assert ring[1] / ring[0] == pytest.approx(1023 / 63, rel=1e-3)
    assert tree[1] / tree[0] == pytest.approx(10 / 6, rel=1e-3)


def test_ring_tree_crossover_is_where_times_are_equal():
    n, b, a = 64, 50.0, 9.6e-6
    s_star = comm.ring_tree_crossover_bytes(n, b, a)
    assert s_star == pytest.approx((63 - 6) * a * b * GB * n)
    t_ring = comm.collective_time_s("all_reduce", s_star, n, b, a, "ring")
    t_tree = comm.collective_time_s("all_reduce", s_star, n, b, a, "tree")
    assert t_ring == pytest.approx(t_tree)
    assert comm.collective_time_s("all_reduce", s_star / 10, n, b, a, "tree") < \
        comm.collective_time_s("all_reduce", s_star / 10, n, b, a, "ring")


# -- hierarchical ------------------------------------------------------------------------------------
H800_NVL = hardware.gpu("H800-SXM").nvlink_gbs / 2  # 200 GB/s per direction


def test_nvlink_per_direction_is_half_the_catalog_total():
    assert comm.nvlink_per_direction_gbs("H100-SXM") == pytest.approx(450.0)
    assert comm.nvlink_per_direction_gbs("H800") == pytest.approx(200.0)
    with pytest.raises(ValueError, match="gpu_name"):
        comm.nvlink_per_direction_gbs("L40S")


def test_hierarchical_allreduce_formula_16_gpus():
    s, g, bi, b, ai, a = 1e9, 8, 450.0, 50.0, 3e-6, 10e-6
    t = comm.collective_time_s("all_reduce", s, 16, b, a, "hierarchical", gpus_per_node=g, intra_bw_gbs=bi,
                               intra_latency_s=ai)
    intra = 2 * ((g - 1) * ai + (g - 1) / g * s / (bi * GB))   # reduce-scatter + all-gather over NVLink
    inter = 2 * (2 - 1) * a + 2 * (2 - 1) / 2 * (s / g) / (b * GB)  # ring all-reduce of S/g over 2 nodes
    assert t == pytest.approx(intra + inter)


def test_hierarchical_inside_one_node_is_an_nvlink_ring():
    t_h = comm.collective_time_s("all_reduce", 1e9, 8, 50.0, 1e-5, "hierarchical", intra_bw_gbs=450.0, intra_latency_s=3e-6)
    t_r = comm.collective_time_s("all_reduce", 1e9, 8, 450.0, 3e-6, "ring")
    assert t_h == pytest.approx(t_r)


def test_hierarchical_with_one_gpu_per_node_is_the_flat_algorithm():
    for op in ("all_reduce", "all_gather", "reduce_scatter", "broadcast"):
        t_h = comm.collective_time_s(op, 1e9, 16, 25.0, 1e-5, "hierarchical", gpus_per_node=1, intra_bw_gbs=450.0)
        assert t_h == pytest.approx(comm.collective_time_s(op, 1e9, 16, 25.0, 1e-5, "ring")), op


def test_hierarchical_beats_flat_ring_when_nvlink_is_fast():
    kw = dict(gpus_per_node=8, intra_bw_gbs=450.0)
    t_h = comm.collective_time_s("all_reduce", 1e9, 64, 50.0, algo="hierarchical", **kw)
    t_r = comm.collective_time_s("all_reduce", 1e9, 64, 50.0, algo="ring")
    assert t_h < t_r


def test_pipelined_hierarchical_is_faster_but_not_below_either_level():
    kw = dict(gpus_per_node=8, intra_bw_gbs=450.0)
    seq = comm.collective_cost("all_reduce", 8e9, 16, 25.0, algo="hierarchical", **kw)
    pip = comm.collective_cost("all_reduce", 8e9, 16, 25.0, algo="hierarchical", pipelined=True, **kw)
    assert pip.time_s < seq.time_s
    assert pip.time_s >= max(seq.intra_s, seq.inter_s) - 1e-12


# -- input validation ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,match", [
    (dict(size_bytes=-1), "size_bytes"), (dict(n=0), "n must"), (dict(n=2.5), "n must"),
    (dict(bw_gbs=0), "bw_gbs"), (dict(latency_s=float("nan")), "latency_s"), (dict(bw_gbs=float("inf")), "bw_gbs"),
    (dict(algo="butterfly"), "algo"),
])
def test_bad_inputs_raise_value_error_naming_the_parameter(kwargs, match):
    args = dict(op="all_reduce", size_bytes=1e6, n=8, bw_gbs=10.0, latency_s=1e-5, algo="ring")
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        comm.collective_time_s(**args)


def test_unknown_op_raises_key_error_with_close_names():
    with pytest.raises(KeyError, match="all_reduce"):
        comm.collective_time_s("allreduce", 1e6, 8, 10.0)
    with pytest.raises(KeyError):
        comm.busbw_factor("gather", 8)


def test_hierarchical_needs_nvlink_bandwidth_and_whole_nodes():
    with pytest.raises(ValueError, match="intra_bw_gbs"):
        comm.collective_time_s("all_reduce", 1e6, 16, 10.0, algo="hierarchical")
    with pytest.raises(ValueError, match="multiple"):
        comm.collective_time_s("all_reduce", 1e6, 12, 10.0, algo="hierarchical", intra_bw_gbs=450.0)


def test_vectorised_over_size_n_and_bandwidth():
    sizes = 2.0 ** np.arange(3, 34)
    t = comm.collective_time_s("all_reduce", sizes[:, None], np.array([8, 16, 32])[None, :], 25.0)
    assert t.shape == (31, 3)
    t2 = comm.collective_time_s("all_gather", 1e8, 8, np.array([1.0, 10.0, 100.0]))
    assert np.all(np.diff(t2) < 0)
    assert isinstance(comm.collective_time_s("all_reduce", 1e8, 8, 10.0), float)


def test_bytes_sent_per_rank_ring_allreduce():
    assert comm.bytes_sent_per_rank("all_reduce", 1e9, 8) == pytest.approx(2 * 7 / 8 * 1e9)
    assert comm.bytes_sent_per_rank("all_gather", 1e9, 8) == pytest.approx(7 / 8 * 1e9)


# -- hypothesis properties ------------------------------------------------------------------------------
ops = st.sampled_from(comm.OPS)
algos = st.sampled_from(("ring", "tree", "hierarchical"))
sizes = st.floats(min_value=0, max_value=1e11)
bws = st.floats(min_value=0.01, max_value=2000)
lats = st.floats(min_value=0, max_value=1e-3)
nodes = st.integers(min_value=1, max_value=512)


def _t(op, s, n_nodes, b, a, algo):
    n = n_nodes * 8 if algo == "hierarchical" else n_nodes
    return comm.collective_time_s(op, s, n, b, a, algo, gpus_per_node=8, intra_bw_gbs=450.0) \
        if algo == "hierarchical" else comm.collective_time_s(op, s, n, b, a, algo)


@given(ops, algos, sizes, nodes, bws, bws, lats)
def test_more_bandwidth_never_lengthens(op, algo, s, n, b1, b2, a):
    lo, hi = sorted((b1, b2))
    assert _t(op, s, n, hi, a, algo) <= _t(op, s, n, lo, a, algo) * (1 + 1e-12)


@given(ops, algos, sizes, nodes, bws, lats, lats)
def test_more_latency_never_shortens(op, algo, s, n, b, a1, a2):
    lo, hi = sorted((a1, a2))
    assert _t(op, s, n, b, hi, algo) >= _t(op, s, n, b, lo, algo) * (1 - 1e-12)


@given(ops, algos, sizes, sizes, nodes, bws, lats)
def test_time_monotone_in_size_finite_and_non_negative(op, algo, s1, s2, n, b, a):
    lo, hi = sorted((s1, s2))
    t_lo, t_hi = _t(op, lo, n, b, a, algo), _t(op, hi, n, b, a, algo)
    assert 0.0 <= t_lo <= t_hi * (1 + 1e-12)
    assert math.isfinite(t_hi)


@given(ops, st.sampled_from(("ring", "tree")), st.floats(min_value=1.0, max_value=1e11), st.integers(2, 4096), bws, lats)
def test_busbw_never_exceeds_the_link_rate(op, algo, s, n, b, a):
    assert comm.model_busbw_gbs(op, s, n, b, a, algo) <= b * (1 + 1e-9)


@given(st.integers(2, 2048), st.integers(2, 2048), st.floats(min_value=1.0, max_value=1e10), bws, lats)
def test_ring_allreduce_time_grows_with_ranks(n1, n2, s, b, a):
    lo, hi = sorted((n1, n2))
    assert comm.collective_time_s("all_reduce", s, hi, b, a) >= comm.collective_time_s("all_reduce", s, lo, b, a) * (1 - 1e-12)


# -- step time, scaling, seed 003 -------------------------------------------------------------------------
def test_step_time_formula():
    st_ = comm.step_time(1.0, 3.0, overlap=0.5)
    assert st_.exposed_comm_s == pytest.approx(2.5)
    assert st_.step_s == pytest.approx(3.5)
    assert st_.utilisation == pytest.approx(1 / 3.5)
    assert st_.comm_ratio + st_.utilisation == pytest.approx(1.0)
    hidden = comm.step_time(2.0, 1.0, overlap=0.6)
    assert hidden.step_s == pytest.approx(2.0) and hidden.utilisation == 1.0
    with pytest.raises(ValueError, match="overlap"):
        comm.step_time(1.0, 1.0, overlap=1.5)
    with pytest.raises(ValueError, match="compute_s"):
        comm.step_time(0.0, 1.0)


@given(st.floats(0.01, 100), st.floats(0, 100), st.floats(0, 1), st.floats(0, 1))
def test_more_overlap_never_lowers_utilisation(c, m, o1, o2):
    lo, hi = sorted((o1, o2))
    assert comm.step_time(c, m, hi).utilisation >= comm.step_time(c, m, lo).utilisation - 1e-12


def test_gradient_bytes_and_bucketed_latency():
    assert comm.gradient_bytes(7e9, 2) == pytest.approx(14e9)
    one = comm.dp_sync_time_s(1e9, 64, 50.0, 1e-5)
    buck = comm.dp_sync_time_s(1e9, 64, 50.0, 1e-5, bucket_bytes=comm.DDP_BUCKET_BYTES)
    n_buckets = math.ceil(2e9 / comm.DDP_BUCKET_BYTES)
    assert buck - one == pytest.approx((n_buckets - 1) * 2 * 63 * 1e-5)


def test_comm_imports_only_the_layers_below_it():
    # the α-β model sits below labutil.cluster: it must not import cluster, dp or compute (aesthetics review 2.8)
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(comm))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            names |= {node.module or ""} | {a.name for a in node.names}
    assert not names & {"cluster", "dp", "compute", "explore"}, names


def test_comm_time_from_busbw_inverts_busbw():
    t = comm.comm_time_from_busbw_s(2**30, 16, 370.0)
    alg = comm.algbw_gbs(2**30, t)
    assert comm.busbw_gbs("all_reduce", alg, 16) == pytest.approx(370.0)
    # troubleshoot keeps the name (re-export)
    from labutil import troubleshoot

    assert troubleshoot.comm_time_from_busbw_s is comm.comm_time_from_busbw_s
