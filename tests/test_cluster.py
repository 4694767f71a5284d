"""labutil.cluster: the one cluster description and collective-time model.

The expected-busbw tests reproduce published NCCL figures (sources in labutil/data/systems.toml):
8x H100 ring 370 / NVLS 480 GB/s (nccl-tests#212), 8x H200 NVLS 475 (nccl-tests#272), 8x A100 230
(nccl-tests#149), 8x A800 160 and 24 GB/s per HDR NIC (nccl#412), 48 GB/s per NDR NIC
(nccl-tests#119: 24 per 200G), NVLS ramp for 5-8 H100 ranks (nccl#1455).
"""

import dataclasses

import numpy as np
import pytest

from labutil import comm
from labutil.cluster import (ALGOS, Cluster, collective_time_s, expected_busbw_gbs, systems, NIC_EFFICIENCY,
                             SCALEUP_RING_EFFICIENCY)


@pytest.fixture(scope="module")
def dgx2():
    return Cluster.system("DGX-H100", n_nodes=2)


def test_contract_fields(dgx2):
    c = dgx2
    assert (c.gpu, c.gpus_per_node, c.n_nodes, c.n_gpus) == ("H100-SXM", 8, 2, 16)
    assert c.scaleup_gbs == 450.0 and c.scaleup_domain_gpus == 8 and c.nvls is True
    assert (c.nics_per_node, c.nic_gbps, c.rail_optimized) == (8, 400.0, True)
    assert c.fabric_tiers >= 1 and c.oversubscription == 1.0
    assert c.with_nodes(4).n_gpus == 32 and c.with_nodes(4).gpu == c.gpu
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.n_nodes = 3
    assert set(systems()) >= {"DGX-H100", "DGX-H200", "DGX-B200", "DGX-A100", "HGX-H800", "HGX-A800", "GB200-NVL72"}
    assert Cluster.system("HGX H100").name == "DGX-H100"  # alias


def test_published_intra_node_busbw():
    # nccl-tests#212: ring 370, NVLS ~480 on 8x H100; nccl-tests#272: 475 on 8x H200
    h100 = Cluster.system("DGX-H100")
    assert h100.expected_busbw_gbs("all_reduce", 8) == pytest.approx(480)
    assert h100.expected_busbw_gbs("all_reduce", 8, algo="ring") == pytest.approx(370)
    assert h100.expected_busbw_gbs("all_gather", 8) == pytest.approx(370)  # NVLS helps all_reduce only
    assert Cluster.system("DGX-H200").expected_busbw_gbs("all_reduce", 8) == pytest.approx(475)
    # nccl-tests#149 (A100 ~230), nccl#412 (A800 ~160): no NVLS before Hopper
    assert Cluster.system("DGX-A100").expected_busbw_gbs("all_reduce", 8) == pytest.approx(230)
    assert Cluster.system("HGX-A800").expected_busbw_gbs("all_reduce", 8) == pytest.approx(160)
    assert Cluster.system("DGX-A100").nvls is False


def test_nvls_ramp_matches_nccl_1455():
    # nccl#1455 (8x H100, NCCL_ALGO=NVLS): ~370 for 2-4 GPUs, 420/440/460/480 for 5/6/7/8
    c = Cluster.system("DGX-H100")
    measured = {2: 370, 3: 370, 4: 370, 5: 420, 6: 440, 7: 460, 8: 480}
    got = c.expected_busbw_gbs("all_reduce", np.array(list(measured)))
    assert np.allclose(got, list(measured.values()), rtol=0.06)


def test_inter_node_bound_per_rail(dgx2):
    # 8 NICs x 400G x 0.96 = 384 GB/s per node; NVLink ring 370 is the tighter link (NCCL_ALGO=Ring)
    assert dgx2.node_net_gbs == pytest.approx(384)
    assert dgx2.expected_busbw_gbs("all_reduce", algo="ring") == pytest.approx(370)
    assert dgx2.acceptance_busbw_gbs("all_reduce") == pytest.approx(370)
    # DGX A100: 8 x 200G HDR -> 8 x 24 = 192 GB/s (nccl-tests#119: 24 GB/s per 200G NIC; nccl#812:
    # "On an Nvidia DGX-A100 system ... we measure 192GB/s AllReduce BusBW")
    assert Cluster.system("DGX-A100", 4).expected_busbw_gbs("all_reduce") == pytest.approx(192)
    # one NIC per node (nccl#412's A800 + one HDR NIC): 24 GB/s
    one = Cluster.system("HGX-A800", 2, nics_per_node=1)
    assert one.expected_busbw_gbs("all_reduce", algo="ring") == pytest.approx(24)
    # a DP group strided one rank per node rides one rail: 48 GB/s on NDR
    big = Cluster.system("DGX-H100", 128)
    assert big.expected_busbw_gbs("all_reduce", 128, ranks_per_node=1) == pytest.approx(48)


def test_two_nodes_nccl_default_is_nvls_tree(dgx2):
    # NCCL's default on 2 NVLS nodes is NVLS-Tree: each node sends S, not 2(n-1)/n S, over the network,
    # so the busbw is min(NVLS 480, 2(n-1)/n x 384 = 720) = 480 (public: ~469, nccl-tests#309 via nccl#2409)
    assert dgx2.expected_busbw_gbs("all_reduce", algo="auto") == pytest.approx(480)
    # the acceptance expectation (default algo=None) forces the ring across nodes
    assert dgx2.expected_busbw_gbs("all_reduce") == pytest.approx(370) == dgx2.acceptance_busbw_gbs()
    assert dgx2.algorithm("all_reduce", 8 * 2**30) == "nvls_tree/Simple"
    # from 3 nodes on each node sends 2S: no gain over the ring (nccl#1221)
    c4 = dgx2.with_nodes(4)
    assert c4.expected_busbw_gbs("all_reduce", algo="nvls_tree") == pytest.approx(384 * 31 / 32)
    assert c4.expected_busbw_gbs("all_reduce", algo="auto") == pytest.approx(max(370, 384 * 31 / 32))
    # the A3 Mega run of ch13 (2 x 8 H100, 8 x 200G): 338.82 GB/s is above the ring's 192 -> a tree algorithm
    a3 = Cluster.system("DGX-H100", 2, nic_gbps=200.0)
    assert a3.expected_busbw_gbs("all_reduce", algo="ring") < 338.82 < 1.1 * a3.expected_busbw_gbs("all_reduce", algo="auto")
    # Tree on 2 nodes without NVLS (nccl#1221, NVLS off: 330): 0.92 x 15/16 x min(370, 2 x 384)
    assert dgx2.expected_busbw_gbs("all_reduce", algo="tree") == pytest.approx(0.92 * 15 / 16 * 370)


def test_seed003():
    c = Cluster.seed003()
    assert (c.gpu, c.gpus_per_node, c.nics_per_node, c.nic_gbps, c.n_gpus) == ("H800-SXM", 8, 1, 25.0, 32)
    # 25 Gb/s x 0.96 / 8 = 3.0 GB/s for the whole node
    assert c.expected_busbw_gbs("all_reduce") == pytest.approx(3.0)
    assert c.net_gbs_per_gpu == pytest.approx(0.375)
    # llama2-7b gradient (6.74e9 x 2 B) over 32 ranks: ring bound 2(n-1)/n S / 3 GB/s
    s = 6.738e9 * 2
    t = c.dp_sync_time_s(6.738e9)
    assert t == pytest.approx(2 * 31 / 32 * s / 3.0e9, rel=1e-3)


def test_all_to_all_across_nodes(dgx2):
    # each GPU sends (n-g)/n of S through its own 48 GB/s rail: busbw = (n-1)/(n-g) x 48 = 90
    assert dgx2.expected_busbw_gbs("all_to_all", algo="auto") == pytest.approx(15 / 8 * 48)


def test_oversubscription():
    c = Cluster.system("DGX-H100", 4, nodes_per_leaf=2, oversubscription=2.0)
    assert c.expected_busbw_gbs("all_reduce", algo="ring") == pytest.approx(192)
    assert c.expected_busbw_gbs("all_reduce", 16, algo="ring") == pytest.approx(370)  # 2 nodes: one leaf


def test_time_matches_comm_alpha_beta_inside_node():
    # in a node ring/Simple is comm's α-β ring at the achievable busbw and NVLink α, plus NCCL's base
    # latency of Ring/Simple (8.4 us, tuning.cc baseLatencies)
    c = Cluster.system("DGX-A100")
    s = np.array([1e3, 1e6, 1e9])
    want = comm.collective_time_s("all_reduce", s, 8, 230.0, comm.NVLINK_STEP_LATENCY_S, "ring") + 8.4e-6
    assert np.allclose(c.collective_time_s("all_reduce", s, 8, algo="ring", protocol="Simple"), want)
    # NCCL_ALGO=Ring is the best ring protocol: LL for 1 KB, LL128 for 10 MB, Simple for 1 GB
    got = c.algorithm("all_reduce", np.array([1e3, 1e7, 1e9]), 8, algo="ring")
    assert list(got) == ["ring/LL", "ring/LL128", "ring/Simple"]


def test_vectorised_and_monotone(dgx2):
    big = dgx2.with_nodes(64)
    sizes = 2.0 ** np.arange(3, 34)
    t = big.collective_time_s("all_reduce", sizes, 512)
    assert t.shape == sizes.shape and np.all(np.diff(t) >= 0)
    ranks = np.array([2, 8, 16, 64, 512])
    tr = big.collective_time_s("all_reduce", 1e9, ranks)
    assert tr.shape == (5,) and np.all(np.isfinite(tr)) and tr[2] > tr[1]
    b = big.busbw_gbs("all_reduce", sizes, 512)
    assert b[-1] == pytest.approx(370, rel=0.05) and b[0] < 1  # latency-bound at 8 B
    assert isinstance(big.collective_time_s("all_reduce", 1e6, 16), float)


@pytest.mark.parametrize("algo", ALGOS)
def test_every_algo_positive(dgx2, algo):
    op = "all_reduce"
    t = dgx2.collective_time_s(op, np.array([0.0, 1e6, 1e9]), 8 if algo == "nvls" else 16, algo=algo)
    assert t[0] >= 0 and np.all(np.diff(t) > 0)


def test_auto_never_slower_than_ring_or_tree(dgx2):
    s = 2.0 ** np.arange(3, 34)
    auto = dgx2.collective_time_s("all_reduce", s, 16)
    assert np.all(auto <= dgx2.collective_time_s("all_reduce", s, 16, "ring") + 1e-15)
    assert np.all(auto <= dgx2.collective_time_s("all_reduce", s, 16, "tree") + 1e-15)
    # tree wins small messages (logarithmic latency), ring large ones
    assert dgx2.collective_time_s("all_reduce", 8, 16, "tree") < dgx2.collective_time_s("all_reduce", 8, 16, "ring")


def test_dp_sync_buckets(dgx2):
    t1 = dgx2.dp_sync_time_s(7e9)
    tb = dgx2.dp_sync_time_s(7e9, bucket_bytes=comm.DDP_BUCKET_BYTES)
    assert tb > t1  # latency paid per bucket
    assert dgx2.dp_sync_time_s(np.array([1e9, 7e9])).shape == (2,)


def test_nvl72_domain_spans_trays():
    c = Cluster.system("GB200-NVL72", n_nodes=36)  # 144 GPUs, two racks
    assert (c.gpus_per_node, c.scaleup_domain_gpus, c.n_gpus) == (4, 72, 144)
    # all in NVLink: the 8-GPU NVLS algbw (830 / 1.75) held on 72 GPUs (an assumption: no public figure)
    assert c.expected_busbw_gbs("all_reduce", 72) == pytest.approx(830 / 1.75 * 2 * 71 / 72)
    assert c.expected_busbw_gbs("all_reduce", 144, algo="ring") == pytest.approx(695)  # NVLink ring-bound
    assert c.expected_busbw_gbs("all_reduce", 144, algo="auto") == pytest.approx(830 / 1.75 * 2 * 71 / 72)  # NVLS-Tree


def test_custom_cluster_defaults():
    c = Cluster.from_links(nic_gbps=400, nics_per_node=8, scaleup_gbs=450)
    assert c.ring_busbw_gbs == pytest.approx(450 * SCALEUP_RING_EFFICIENCY) == pytest.approx(370)
    assert c.nic_gbs == pytest.approx(400 / 8 * NIC_EFFICIENCY) == pytest.approx(48)
    assert c.nvls_busbw_gbs == 0.0


def test_module_level_forms(dgx2):
    assert expected_busbw_gbs(dgx2, "all_reduce", 8) == dgx2.expected_busbw_gbs("all_reduce", 8)
    assert collective_time_s(dgx2, "all_gather", 1e9, 16) == dgx2.collective_time_s("all_gather", 1e9, 16)
    with pytest.raises(TypeError):
        expected_busbw_gbs("DGX-H100", "all_reduce")


@pytest.mark.parametrize("bad", [
    dict(n_nodes=0), dict(n_nodes="2"), dict(n_nodes=True), dict(nic_gbps=-1), dict(nic_gbps=float("nan")),
    dict(nvls="yes"), dict(oversubscription=0.5), dict(scaleup_domain_gpus=3), dict(gpu="H1000"),
])
def test_validation(bad):
    with pytest.raises((ValueError, TypeError, KeyError)):
        Cluster.system("DGX-H100", **bad) if "n_nodes" not in bad else Cluster.system("DGX-H100", bad["n_nodes"])


def test_bad_calls(dgx2):
    with pytest.raises(KeyError):
        Cluster.system("DGX-H1000")
    with pytest.raises(ValueError):
        dgx2.collective_time_s("all_reduce", 1e6, 17)  # more ranks than GPUs
    with pytest.raises(ValueError):
        dgx2.collective_time_s("all_reduce", 1e6, 12)  # 12 ranks on 8-GPU nodes: say ranks_per_node
    assert dgx2.collective_time_s("all_reduce", 1e6, 12, ranks_per_node=6) > 0
    with pytest.raises(ValueError):
        dgx2.collective_time_s("all_reduce", -1, 16)
    with pytest.raises(ValueError):
        dgx2.collective_time_s("all_gather", 1e6, 8, algo="nvls")
    with pytest.raises(ValueError):
        Cluster.system("DGX-A100").collective_time_s("all_reduce", 1e6, 8, algo="nvls")
    with pytest.raises(ValueError):
        dgx2.collective_time_s("all_reduce", 1e6, 16, algo="bogus")
    with pytest.raises(KeyError):
        dgx2.collective_time_s("allreduce", 1e6, 16)
    with pytest.raises(ValueError):
        dgx2.expected_busbw_gbs("all_reduce", 1)


def test_for_gpu_picks_the_catalog_system():
    assert Cluster.for_gpu("H800", 4).name == "HGX-H800"
    one = Cluster.for_gpu("H100-SXM", 2, nic_gbps=25.0, nics_per_node=1)
    assert one.expected_busbw_gbs(algo="ring") == pytest.approx(3.0)
    assert one.expected_busbw_gbs(algo="auto") == pytest.approx(2 * 15 / 16 * 3.0)  # NVLS-Tree on 2 nodes
    assert Cluster.for_gpu("GB200", 18).scaleup_domain_gpus == 72
    # a GPU of no catalog system: its own NVLink at 370/450 of the line rate, no NVLS, 8 x 400G
    mi = Cluster.for_gpu("MI300X", 2)
    assert mi.ring_busbw_gbs == pytest.approx(896 / 2 * SCALEUP_RING_EFFICIENCY) and not mi.nvls
    with pytest.raises(ValueError):
        Cluster.for_gpu("L40S")  # no NVLink-class link: build the Cluster by hand


def test_p2p_and_describe(dgx2):
    # a pipeline send of 100 MB over one 48 GB/s rail vs over NVLink (ring busbw 370)
    assert dgx2.p2p_time_s(100e6) == pytest.approx(dgx2.net_latency_s + 100e6 / 48e9)
    assert dgx2.p2p_time_s(100e6, cross_node=False) == pytest.approx(dgx2.scaleup_latency_s + 100e6 / 370e9)
    assert "NVLS 480" in dgx2.describe() and "384 GB/s per node" in dgx2.describe()
