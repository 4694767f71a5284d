"""Chapter 2 workload profiles: computed from the course's models, validated inputs."""

import math

import pytest

from labutil import comm, hardware, memory, models, workloads as W
from labutil.explore import workloads as EW


def test_seed_tables_are_complete():
    tables = W.seed_tables()
    assert [t["seed"] for t in tables] == ["000", "003", "004"]
    assert len(tables[0]["rows"]) == 5 and len(tables[1]["rows"]) == 3 and len(tables[2]["rows"]) == 5
    for t in tables:
        assert all(len(r) == len(t["columns"]) for r in t["rows"])
    assert any("P99延迟 < 100ms" in cell for row in tables[1]["rows"] for cell in row)


def test_every_workload_profiles_to_finite_scores():
    for key in W.workload_names():
        p = W.profile(W.workload(key))
        assert set(p.scores) == set(W.AXES)
        assert all(0.0 <= v <= 1.0 and math.isfinite(v) for v in p.scores.values())
        assert 0 < p.scaling_efficiency <= 1


def test_network_need_matches_the_cluster_model():
    from labutil.cluster import Cluster

    w = W.workload("finetune")  # 32 x H100, pure data parallel (8 ranks of the group per node)
    p = W.profile(w, 100.0, target_efficiency=0.9)
    s = 2.0 * models.transformer("llama3-8b").params()
    c = Cluster.system("DGX-H100", 4, nic_gbps=100.0, net_latency_s=W.DEFAULT_ALPHA_S)
    t = c.collective_time_s("all_reduce", s, 32)
    assert p.comm_s == pytest.approx(t)
    # the node's 8 rails add up: busbw 8 x 12.5 x 0.96 = 96 GB/s, not one GPU's 12.5 (the old flat ring)
    assert t == pytest.approx(2 * 31 / 32 * s / 96e9, rel=0.01)
    assert p.scaling_efficiency == pytest.approx(3.0 / (3.0 + t))
    # at the required bandwidth the efficiency is exactly the target
    at_need = W.profile(w, p.required_gbps, target_efficiency=0.9)
    assert at_need.scaling_efficiency == pytest.approx(0.9, rel=1e-6)


def test_more_bandwidth_never_lowers_efficiency():
    for key in W.workload_names():
        effs = [W.profile(W.workload(key), g).scaling_efficiency for g in (10, 25, 100, 400, 800)]
        assert effs == sorted(effs)


def test_one_node_needs_no_network():
    p = W.profile(W.workload("finetune", gpus=8))
    assert p.required_gbps == 0 and p.comm_s == 0 and p.scaling_efficiency == 1


def test_memory_axis_is_unsharded_state_over_hbm():
    p = W.profile(W.workload("llm-pretrain"))
    states = memory.model_states_gb(models.transformer("llama3-70b").params()).total_gb
    assert p.memory_gpus == pytest.approx(states / hardware.gpu("H100-SXM").hbm_gb)
    assert 13 < p.memory_gpus < 15  # ~16 B/param x 70.6e9 / 80 GB


def test_unreachable_target_is_inf_not_nan():
    # 512 ranks on 64 nodes: NCCL's tree latency 2(log2(64) x 5 us + 7 x 3.4 us) = 108 us > 10 % of a
    # 0.5 ms step: no bandwidth reaches 90 %
    p = W.profile(W.workload("science", step_compute_s=0.0005))
    assert math.isinf(p.required_gbps) and p.scores["network"] == 1.0


def test_bad_input():
    with pytest.raises(KeyError):
        W.workload("pretrain")
    with pytest.raises(ValueError, match="gpus must be divisible by tp_pp"):
        W.workload("llm-pretrain", gpus=100)
    with pytest.raises(ValueError, match="link_gbps"):
        W.profile(W.workload("finetune"), 0)
    with pytest.raises(ValueError, match="unknown workload field"):
        W.workload("finetune", foo=1)


def test_explorer_headless():
    ex = EW.workload_explorer()
    e400 = ex.result["profile"].scaling_efficiency
    ex.set(link_gbps=25)
    assert ex.result["profile"].scaling_efficiency < e400
    ex.set(workload="finetune", gpus=8)
    assert ex.result["profile"].required_gbps == 0
    with pytest.raises(ValueError, match="gpus"):  # 8 is not a multiple of tp_pp = 32: not offered (issue 9)
        ex.set(workload="llm-pretrain", gpus=8)


def test_figures_render(tmp_path):
    from labutil.plotting import save_png

    for fig in (EW.radar_figure(), EW.efficiency_vs_link_figure()):
        assert save_png(fig, tmp_path / "f.png").stat().st_size > 10_000


def test_sync_time_vectorised_matches_profile():
    import numpy as np

    w = W.workload("llm-pretrain")  # TP x PP = 32 > 8: one DP rank per node, one rail
    rates = np.array([25.0, 100.0, 400.0])
    t = W.sync_time_s(w, rates)
    assert t.shape == (3,) and np.all(np.diff(t) < 0)
    for r, ti in zip(rates, t):
        assert W.profile(w, r).comm_s == pytest.approx(ti)
    assert np.allclose(W.scaling_efficiency(w, rates), w.step_compute_s / (w.step_compute_s + t))
