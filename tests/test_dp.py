"""Tests of labutil.dp: data-parallel gradient sync, scaling curves and required bandwidth on the
cluster model (seed 003's 25 GbE case, ch14)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from labutil import comm, compute, dp, hardware, models
from labutil.cluster import Cluster

H800_NVL = hardware.gpu("H800-SXM").nvlink_gbs / 2  # 200 GB/s per direction

LLAMA2_7B = models.transformer("llama2-7b").params()
H800_PEAK = hardware.gpu("H800-SXM").bf16_tflops


def _seed003(nic_gbps, nics, overlap=0.0, n_gpus=32):
    compute_s = compute.dense_compute_time_s(LLAMA2_7B, 4 * 4096, H800_PEAK, 0.45)
    sync = dp.dp_comm_time_s(LLAMA2_7B, n_gpus, nic_gbps=nic_gbps, nics_per_node=nics, intra_bw_gbs=H800_NVL)
    return compute_s, sync, comm.step_time(compute_s, sync, overlap)


def test_seed003_h800_on_25gbe_stays_under_30_percent():
    # seed 003 误区一: 8×H800 servers on 25 Gbit/s Ethernet -> gradient sync longer than compute, GPU util < 30 %
    compute_s, sync, st_ = _seed003(25, 1)
    assert sync > compute_s
    assert st_.utilisation < 0.30
    # even if DDP hides the whole backward pass (2/3 of the compute), utilisation stays < 30 %
    assert _seed003(25, 1, overlap=2 / 3)[2].utilisation < 0.30


def test_seed003_contrast_8x400g_ib():
    compute_s, sync, st_ = _seed003(400, 8)
    assert sync < 0.2 * compute_s
    assert st_.utilisation > 0.85
    assert _seed003(400, 8, overlap=2 / 3)[2].utilisation == pytest.approx(1.0)


def test_required_bandwidth_round_trip():
    compute_s = compute.dense_compute_time_s(LLAMA2_7B, 16384, H800_PEAK, 0.45)
    kw = dict(compute_s=compute_s, intra_bw_gbs=H800_NVL)
    for target, overlap in ((0.5, 0.0), (0.8, 0.0), (0.9, 2 / 3)):
        gbps = dp.required_bandwidth_gbps(LLAMA2_7B, 32, target_utilisation=target, overlap=overlap, **kw)
        sync = dp.dp_comm_time_s(LLAMA2_7B, 32, nic_gbps=gbps, nics_per_node=1, intra_bw_gbs=H800_NVL)
        assert comm.step_time(compute_s, sync, overlap).utilisation == pytest.approx(target, rel=1e-6)
    per_gpu = dp.required_bandwidth_gbps(LLAMA2_7B, 32, target_utilisation=0.5, per="gpu", **kw)
    per_server = dp.required_bandwidth_gbps(LLAMA2_7B, 32, target_utilisation=0.5, **kw)
    assert per_server == pytest.approx(8 * per_gpu)
    assert dp.required_bandwidth_gbps(LLAMA2_7B, 8, target_utilisation=0.5, **kw) == 0.0
    with pytest.raises(ValueError, match="unreachable"):
        dp.required_bandwidth_gbps(LLAMA2_7B, 32, target_utilisation=0.99, **kw)
    with pytest.raises(ValueError, match="target_utilisation"):
        dp.required_bandwidth_gbps(LLAMA2_7B, 32, target_utilisation=1.0, **kw)


def test_required_bandwidth_grows_with_target():
    compute_s = compute.dense_compute_time_s(LLAMA2_7B, 16384, H800_PEAK, 0.45)
    bw = dp.required_bandwidth_gbps(LLAMA2_7B, 32, compute_s=compute_s, intra_bw_gbs=H800_NVL,
                                      target_utilisation=np.array([0.3, 0.5, 0.7, 0.85]))
    assert np.all(np.diff(bw) > 0)


def test_scaling_curve_shapes_and_monotonicity():
    compute_s = compute.dense_compute_time_s(LLAMA2_7B, 16384, H800_PEAK, 0.45)
    n = 2 ** np.arange(0, 13)
    kw = dict(compute_s=compute_s, nic_gbps=400, nics_per_node=8, intra_bw_gbs=H800_NVL)
    ring = dp.scaling_curve(LLAMA2_7B, n, algo="ring", **kw)
    tree = dp.scaling_curve(LLAMA2_7B, n, algo="tree", **kw)
    auto = dp.scaling_curve(LLAMA2_7B, n, **kw)
    hier = dp.scaling_curve(LLAMA2_7B, n, algo="hierarchical", **kw)
    assert ring.scaling_efficiency.shape == n.shape
    assert ring.scaling_efficiency[0] == 1.0  # one GPU: no communication
    assert np.all(np.diff(ring.comm_s[3:]) >= 0)  # beyond one node, more GPUs -> more sync time
    # per-rail ring: 2(n-1) latency steps per 25 MiB bucket; NCCL's tree: 2 log2(nodes) -> tree wins at scale
    assert np.all(tree.scaling_efficiency[5:] > ring.scaling_efficiency[5:])
    assert tree.scaling_efficiency[-1] > ring.scaling_efficiency[-1] + 0.5
    # 'auto' is NCCL's choice: the faster of the two, everywhere
    assert np.allclose(auto.comm_s, np.minimum(ring.comm_s, tree.comm_s))
    # the sequential two-level scheme pays its ring latency across nodes too
    assert hier.scaling_efficiency[-1] < auto.scaling_efficiency[-1]
    assert np.all(np.diff(ring.scaling_efficiency) <= 1e-12)


def test_oversubscription_only_hurts_beyond_the_leaf():
    compute_s = compute.dense_compute_time_s(LLAMA2_7B, 16384, H800_PEAK, 0.45)
    n = np.array([16, 32, 64, 128])
    kw = dict(compute_s=compute_s, nic_gbps=100, nics_per_node=8, intra_bw_gbs=H800_NVL)
    flat = dp.scaling_curve(LLAMA2_7B, n, **kw)
    over = dp.scaling_curve(LLAMA2_7B, n, oversubscription=2.0, nodes_per_leaf=4, **kw)
    assert np.allclose(flat.comm_s[:2], over.comm_s[:2])
    assert np.all(over.comm_s[2:] > flat.comm_s[2:])


@given(st.sampled_from([16, 32, 256, 2048]), st.floats(0.05, 200.0))
def test_dp_comm_coefficients_reproduce_the_sync_time(n, per_gpu_gbs):
    # the sequential two-level scheme is linear in 1/b (b = achievable per-GPU network GB/s)
    from labutil.cluster import NIC_EFFICIENCY

    kw = dict(gpus_per_node=8, intra_bw_gbs=H800_NVL, algo="hierarchical", inter_algo="ring")
    a, k = dp.dp_comm_coefficients(LLAMA2_7B, n, **kw)
    direct = dp.dp_comm_time_s(LLAMA2_7B, n, nic_gbps=per_gpu_gbs * 8 / NIC_EFFICIENCY, nics_per_node=8, **kw)
    assert a + k / per_gpu_gbs == pytest.approx(direct, rel=1e-9)
    assert a > 0 and k > 0


def test_dp_functions_go_through_the_cluster_model():
    from labutil.cluster import Cluster

    c = Cluster.seed003()
    # dp's sync with a Cluster is the cluster's bucketed all_reduce
    assert dp.dp_comm_time_s(LLAMA2_7B, 32, cluster=c) == pytest.approx(
        c.dp_sync_time_s(LLAMA2_7B, bucket_bytes=comm.DDP_BUCKET_BYTES), rel=1e-12)
    # raw line rates are a hand-built cluster with the same efficiencies
    raw = dp.dp_comm_time_s(LLAMA2_7B, 32, nic_gbps=400, nics_per_node=8, intra_bw_gbs=450, bucket_bytes=None)
    hand = Cluster.from_links(nic_gbps=400, nics_per_node=8, scaleup_gbs=450, n_nodes=4)
    assert raw == pytest.approx(hand.dp_sync_time_s(LLAMA2_7B), rel=1e-12)
    # the old flat ring limited every GPU to its own NIC share: the node's 8 rails now add up
    one_rail = Cluster.from_links(nic_gbps=25, nics_per_node=1, scaleup_gbs=200, n_nodes=4)
    assert one_rail.expected_busbw_gbs("all_reduce") == pytest.approx(25 / 8 * 0.96)
    with pytest.raises(ValueError, match="cluster"):
        dp.dp_comm_time_s(LLAMA2_7B, 32, nic_gbps=25)
    with pytest.raises(TypeError):
        dp.dp_comm_time_s(LLAMA2_7B, 32, cluster="DGX-H100")


@pytest.mark.parametrize("make,n", [
    (lambda: Cluster.seed003(), 32),
    (lambda: Cluster.system("DGX-H100", 16), 128),
    (lambda: Cluster.system("HGX-H800", 128), 1024),
    (lambda: Cluster.system("GB200-NVL72", 288), 1152),  # 16 NVL72 racks: the domain is the rack
])
def test_one_dp_sync_path_up_to_the_per_bucket_latency(make, n):
    # issue 15 item 5: the explorers' bucketed sync (dp.dp_comm_time_s) IS Cluster.dp_sync_time_s with
    # DDP buckets, and differs from the unbucketed Cluster.dp_sync_time_s by the latency the buckets add
    c = make()
    p = 70e9
    bucketed = dp.dp_comm_time_s(p, n, cluster=c)
    assert bucketed == pytest.approx(c.dp_sync_time_s(p, n, bucket_bytes=comm.DDP_BUCKET_BYTES), rel=1e-12)
    nb = np.ceil(2 * p / comm.DDP_BUCKET_BYTES)
    # one algorithm and protocol (NCCL_ALGO=Ring NCCL_PROTO=Simple): the difference IS the added latency
    kw = dict(algo="ring", protocol="Simple")
    one_rs = c.dp_sync_time_s(p, n, **kw)
    buck_rs = c.dp_sync_time_s(p, n, bucket_bytes=comm.DDP_BUCKET_BYTES, **kw)
    lat_b = c.collective_cost("all_reduce", 2 * p / nb, n, **kw).latency_s
    lat_1 = c.collective_cost("all_reduce", 2 * p, n, **kw).latency_s
    assert buck_rs - one_rs == pytest.approx(nb * lat_b - lat_1, rel=1e-6)
    # NCCL's own choice per bucket is never worse than that, and never beats the unbucketed bandwidth term
    one = c.dp_sync_time_s(p, n)
    assert one * (1 - 1e-9) <= bucketed <= buck_rs * (1 + 1e-9)


def test_gb200_syncs_no_slower_than_b200():
    # issue 15 item 6: a 72-GPU NVLink domain never makes the hierarchical DP sync slower than 8-GPU
    # B200 nodes with the same 400G NIC per GPU (ch01 showed GB200 1.48 s vs B200 0.75 s)
    gb = Cluster.system("GB200-NVL72", 288)
    b2 = Cluster.system("DGX-B200", 144)
    assert gb.n_gpus == b2.n_gpus == 1152
    assert dp.dp_comm_time_s(70e9, 1152, cluster=gb) <= dp.dp_comm_time_s(70e9, 1152, cluster=b2)


def test_net_exercises_take_no_answer_from_an_explorer():
    # issue 19 step 4: exercises compute their answers from model modules, never from labutil.explore
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "labutil" / "exercises"
    for ch in ("ch01", "ch03", "ch13", "ch14", "ch15", "ch22", "ch23"):
        tree = ast.parse((root / f"{ch}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert "explore" not in (node.module or ""), (ch, node.module)
                assert all(a.name != "explore" for a in node.names), ch


def test_moe_dp_uses_active_parameters_for_compute():
    # issue 15 item 2 / review N3: DeepSeek-V3 in pure DP computes with its 37.6 B active parameters and
    # all-reduces all 671 B: ~18x the 7B's sync per unit of compute, utilisation ~0.9 % (not 14 %)
    d = dp.dp_bandwidth("deepseek-v3")
    spec = models.transformer("deepseek-v3")
    assert d.active_params == pytest.approx(spec.active_params()) and d.sync_params == pytest.approx(spec.params())
    assert d.compute_s == pytest.approx(compute.dense_compute_time_s(spec.active_params(), 16384,
                                                                     hardware.gpu("H800-SXM").bf16_tflops, 0.45))
    assert float(d.step.utilisation) < 0.012 < float(dp.dp_bandwidth("llama2-7b").step.utilisation) / 10
    # with expert parallelism the expert gradients are all-reduced only within each expert-DP group
    dense, experts = dp.moe_sync_split(spec, 8)
    assert dense + 8 * experts == pytest.approx(spec.params())
    assert dp.dp_bandwidth("deepseek-v3", ep=8).sync_params < d.sync_params
    # a dense model ignores ep
    assert dp.dp_bandwidth("llama2-7b", ep=8).comm_s == pytest.approx(dp.dp_bandwidth("llama2-7b").comm_s)
