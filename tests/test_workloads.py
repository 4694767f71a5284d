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
    """Inside one DGX H100 the all-reduce runs over NVLink only: not free, but independent of the NICs."""
    from labutil.cluster import Cluster

    w = W.workload("finetune", gpus=8)
    p = W.profile(w)
    s = 2.0 * models.transformer("llama3-8b").params()
    nvlink = Cluster.system("DGX-H100", 1).collective_time_s("all_reduce", s, 8, ranks_per_node=8)
    assert p.required_gbps == 0 and p.comm_s == pytest.approx(nvlink)
    # 16 GB over NVLink (NVLS ~480 GB/s busbw): tens of ms against a 3 s step
    assert 0.02 < p.comm_s < 0.1 and 0.96 < p.scaling_efficiency < 1
    assert [W.profile(w, g).comm_s for g in (25, 400, 800)] == pytest.approx([p.comm_s] * 3)
    assert W.latency_budget_ms(w) == 0  # no network interaction to budget for


def test_fp32_gradient_reduction_doubles_the_bytes_and_the_need():
    """grad_bytes = 4 (Megatron-LM's default for BF16 training, torch.autocast + DDP): twice the bytes,
    about twice the per-GPU line rate for the same efficiency (the bandwidth term dominates)."""
    for key in ("llm-pretrain", "finetune", "multimodal"):
        b, f = W.workload(key), W.workload(key, grad_bytes=4)
        assert f.sync_bytes_per_step == pytest.approx(2 * b.sync_bytes_per_step)
        rb, rf = W.profile(b).required_gbps, W.profile(f).required_gbps
        assert rf == pytest.approx(2 * rb, rel=0.02)
        assert W.profile(f).scaling_efficiency < W.profile(b).scaling_efficiency
    # an explicit message size (the MPI job's 1 MB) does not depend on the gradient precision
    assert W.workload("science", grad_bytes=4).sync_bytes_per_step == 1e6
    with pytest.raises(ValueError, match="grad_bytes"):
        W.workload("finetune", grad_bytes=3)


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
    assert "NVLink" in ex._summary.value and "NVLink" in ex.figure._workload_artists["note"].get_text()
    ex.set(gpus=32)
    need_bf16 = ex.result["profile"].required_gbps
    ex.set(grad_bytes=4)  # FP32 gradient reduction: the summary and the bars follow
    assert ex.result["profile"].required_gbps == pytest.approx(2 * need_bf16, rel=0.02)
    assert "FP32" in ex._summary.value
    ex.set(grad_bytes=2)
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


def test_latency_axis_is_the_time_budget():
    # serving: the SLO; a synchronous job: t_c (1/0.9 - 1); a job that never waits: 0
    assert W.latency_budget_ms(W.workload("recsys-inference")) == 50
    assert W.latency_budget_ms(W.workload("science")) == pytest.approx(50 * (1 / 0.9 - 1))
    assert W.latency_budget_ms(W.workload("llm-pretrain")) == pytest.approx(6000 * (1 / 0.9 - 1))
    assert W.latency_budget_ms(W.workload("data-processing")) == 0
    assert W.latency_budget_ms(W.workload("finetune", gpus=8)) == 0  # one node: NVLink only
    # ch02 radar: the MPI code is the most latency-bound of the four drawn, its bandwidth need is < 1 Gb/s
    sci = W.profile(W.workload("science"))
    drawn = [W.profile(W.workload(k)) for k in ("llm-pretrain", "multimodal", "recsys-inference")]
    assert sci.scores["latency"] > max(p.scores["latency"] for p in drawn)
    assert 0 < sci.required_gbps < 1 and sci.scores["network"] == 0


def test_mpi_allreduce_algorithms_thakur_2005():
    # Thakur, Rabenseifner & Gropp 2005 §4.5: ring 2(p-1)a + 2(p-1)/p n/B; recursive doubling
    # lg p (a + n/B); Rabenseifner 2 lg p a + 2(p-1)/p n/B
    a, b, p, n = 5e-6, 24.0, 512, 1e6
    nb = n / (b * 1e9)
    assert W.mpi_allreduce_time_s(n, p, b, a, "ring") == pytest.approx(2 * 511 * a + 2 * 511 / 512 * nb)
    assert W.mpi_allreduce_time_s(n, p, b, a, "recursive_doubling") == pytest.approx(9 * (a + nb))
    assert W.mpi_allreduce_time_s(n, p, b, a, "rabenseifner") == pytest.approx(18 * a + 2 * 511 / 512 * nb)
    # 8 bytes: pure latency; 1 MB: Rabenseifner beats ring by ~30x at 512 ranks on IB
    assert W.mpi_allreduce_time_s(8, p, b, a, "recursive_doubling") == pytest.approx(9 * a, rel=1e-3)
    assert W.mpi_allreduce_time_s(n, p, b, a, "ring") > 25 * W.mpi_allreduce_time_s(n, p, b, a, "rabenseifner")
    # MPICH: <= 2048 bytes recursive doubling, above Rabenseifner (MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE)
    assert W.mpich_allreduce_algo(2048) == "recursive_doubling" and W.mpich_allreduce_algo(2049) == "rabenseifner"
    t = W.mpi_allreduce_time_s([8, 1e6], p, b, a, "rabenseifner")
    assert t.shape == (2,)
    with pytest.raises(ValueError, match="algo"):
        W.mpi_allreduce_time_s(n, p, b, a, "tree")
    with pytest.raises(ValueError, match="ranks"):
        W.mpi_allreduce_time_s(n, 0, b, a)


def test_llama3_405b_gradients_are_fp32():
    # Llama 3 §3.3.2: gradients reduce-scattered in FP32; Table 4: TP 8, PP 16, DP 128
    t = W.llama3_405b_dp_traffic()
    assert t.params_per_gpu == pytest.approx(405e9 / 128)
    assert t.grad_fp32_gb == pytest.approx(12.66, abs=0.01) and t.weights_bf16_gb == pytest.approx(6.33, abs=0.01)
    assert t.allreduce_fp32_s == pytest.approx(2 * t.allreduce_bf16_s, rel=0.02)
    assert 0.05 < t.allreduce_fp32_s / t.step_s < 0.15  # ~10 % of the 5.9 s step
    assert t.reduce_scatter_fp32_s < t.fsdp_s < t.allreduce_fp32_s
    assert t.step_s == pytest.approx(6 * 405e9 * 16e6 / (16384 * 400e12), rel=1e-6)


def test_explorer_snaps_to_the_representative_size_and_explains_latency():
    ex = EW.workload_explorer()
    ex.set(workload="finetune")
    assert ex.values()["gpus"] == W.workload("finetune").gpus
    ex.set(workload="science")
    assert "不到 1 Gb/s" in ex._summary.value and "5.56 ms" in ex._summary.value
    assert "latency" in ex.figure._workload_artists["note"].get_text()
