"""The cluster model against public nccl-tests results (labutil/data/nccl_public_results.toml).

Every row carries the URL of the issue thread it was read from and is marked calibration (a constant
of the model came from it) or held out. This file checks the calibration rows reproduce, reports the
held-out error as it is (misses are listed by id, not hidden), and guards the count so a change to
the model that loses held-out rows is seen. Property tests of the model (NCCL's algorithms) follow.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labutil import busbw_validation as V
from labutil.cluster import ALGOS, Cluster, ecmp_efficiency, socket_nic_gbs

# the held-out rows the model misses today (see ch22 §3); a change that fixes one must move it out of
# this list, a change that breaks another must add it here with the reason in the commit message
KNOWN_MISSES = {
    "h100-roce-4node",            # 4 nodes of 8x 400G RoCE measured 320 GB/s; the model's ring/NVLS-Tree bound is 370-372
    "h100-roce-200g-2node-nvls",  # NVLS-Tree on 2 nodes reached 1.6x the network, the model's bytes-on-wire bound 1.875x
    "h100-roce-32node-allgather",  # 256-rank all_gather at 2 GB: 200 measured, the model's ring 312
    "socket-100g-4x8-v100",       # 100G TCP: 4-6 GB/s measured with 4 streams; 2.06 GB/s per stream predicts 8.2
}


@pytest.fixture(scope="module")
def table():
    return V.compare()


def test_table_has_enough_cited_rows(table):
    s = V.summary()
    assert s["rows"] >= 25 and s["held_out"] >= 20 and s["calibration"] >= 5
    for r in V.rows():
        assert r.url.startswith("https://github.com/"), r.id
    # different GPUs, transports, algorithms and node counts
    setups = {x["setup"] for x in table}
    assert len(setups) >= 15
    assert {r.algo for r in V.rows()} >= {"auto", "ring", "tree", "nvls"}
    assert any("TCP" in x["setup"] for x in table)
    assert {x["model_algo"].split("/")[0] for x in table} >= {"ring", "tree", "nvls", "nvls_tree"}


def test_calibration_rows_reproduce(table):
    for x in table:
        if x["role"] == "calibration":
            assert x["within"], x


def test_held_out_rows_as_reported(table):
    s = V.summary()
    # ch22 prints these numbers: 18 of 22 held-out rows inside their tolerance, mean |error| 11 %
    assert set(s["held_out_misses"]) == KNOWN_MISSES
    assert s["held_out_within"] == s["held_out"] - len(KNOWN_MISSES)
    assert s["held_out_mean_abs_error"] < 0.15


def test_specific_public_rows(table):
    by = {x["id"]: x for x in table}
    # 2 x 8 H100 NDR with NCCL's defaults: NVLS-Tree, ~470 GB/s; the same nodes with NVLS off 368.76 (the
    # acceptance expectation 370), 4 nodes 365.84 (nccl-tests#309, quoted by nccl#2409)
    assert by["h100-ib-2node-default"]["model_algo"] == "nvls_tree/Simple"
    assert by["h100-ib-2node-default"]["model_gbs"] == pytest.approx(470, rel=0.03)
    assert by["h100-ib-2node-nvls-off"]["model_gbs"] == pytest.approx(368.76, rel=0.01)
    assert by["h100-ib-4node-default"]["model_gbs"] == pytest.approx(365.84, rel=0.03)
    assert all(x["url"].endswith("nccl-tests/issues/309") for k, x in by.items() if k.startswith("h100-ib-"))
    # multi-node Tree is not optimistic by 25 % any more (nccl#1368: 150 vs ring 190)
    assert by["h100-roce-4x400-5node-tree"]["error"] < 0.15
    # the no-MPI paste of nccl-tests#107 (two 1-rank jobs) is not a 2-node socket result: not in the table
    assert not any("nccl-tests/issues/107" in r.url for r in V.rows())


# -- NCCL's algorithms, properties ---------------------------------------------------------------
def _nvl(domain, nic_gbps):
    """288 trays of 4 GB200-class GPUs, one NIC per GPU, in NVLink domains of ``domain`` GPUs."""
    return Cluster.from_links(nic_gbps=nic_gbps, nics_per_node=4, gpus_per_node=4, scaleup_gbs=900.0, n_nodes=288,
                              scaleup_ring_busbw_gbs=695.0, scaleup_nvls_busbw_gbs=830.0, nvls=True,
                              scaleup_domain_gpus=domain)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([72, 144, 288, 576, 1152]), st.sampled_from([100.0, 200.0, 400.0, 800.0]),
       st.floats(1e3, 1e10), st.sampled_from([4, 8, 36]))
def test_bigger_nvlink_domain_never_slower(n_gpus, nic_gbps, size, small_domain):
    # the same GPUs and NICs per GPU, the same ranks: a 72-GPU NVL72 domain against smaller domains.
    # The hierarchical (two-level) all_reduce at every size (issue 15: a bigger NVLink domain never makes
    # it slower); the ring from 1 MiB on; NCCL's own choice ('auto') from 64 MiB on. Below that, latency
    # counts: NCCL's tree chains the q ranks of a node ((q-1) hops of 0.6 us), so on 1,152 GPUs with 800G
    # NICs a 72-GPU domain's tree is ~40 us longer than an 8-GPU domain's and a 8-20 MiB all_reduce can
    # be a few percent slower (found by hypothesis in the lowest-versions run: 576 GPUs, 1 MiB, 400G).
    big, small = _nvl(72, nic_gbps), _nvl(small_domain, nic_gbps)
    for algo, from_bytes in (("hierarchical", 0), ("ring", 2**20), ("auto", 64 * 2**20)):
        if size < from_bytes:
            continue
        t_big = big.collective_time_s("all_reduce", size, n_gpus, algo)
        t_small = small.collective_time_s("all_reduce", size, n_gpus, algo)
        assert t_big <= t_small * (1 + 1e-6), (algo, n_gpus, size, small_domain)
    # and the DP sync of a 70B model on 1,024 GPUs (the ch01 GB200 case) is no slower on NVL72
    a, b = _nvl(72, nic_gbps), _nvl(8, nic_gbps)
    assert a.dp_sync_time_s(70e9, 576, bucket_bytes=25 * 2**20) <= b.dp_sync_time_s(70e9, 576, bucket_bytes=25 * 2**20)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["DGX-H100", "DGX-A100", "HGX-H800", "DGX-B200"]), st.integers(2, 64),
       st.sampled_from([25.0, 100.0, 200.0, 400.0]), st.floats(1e4, 1e10))
def test_socket_never_faster_than_rdma(system, nodes, nic_gbps, size):
    rdma = Cluster.system(system, nodes, nic_gbps=nic_gbps)
    sock = Cluster.system(system, nodes, nic_gbps=nic_gbps, transport="socket")
    assert sock.nic_gbs <= rdma.nic_gbs
    for algo in ("auto", "ring", "tree"):
        assert sock.collective_time_s("all_reduce", size, algo=algo) >= \
            rdma.collective_time_s("all_reduce", size, algo=algo) * (1 - 1e-12)
    for algo in (None, "auto"):
        assert sock.expected_busbw_gbs(algo=algo) <= rdma.expected_busbw_gbs(algo=algo) + 1e-9


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["DGX-H100", "DGX-A100", "HGX-H800", "DGX-B200", "GB200-NVL72"]), st.integers(1, 40),
       st.sampled_from([25.0, 100.0, 200.0, 400.0, 800.0]), st.integers(1, 8),
       st.sampled_from(["all_reduce", "all_gather", "reduce_scatter"]))
def test_ring_busbw_never_above_the_line_bound(system, nodes, nic_gbps, nics, op):
    if system == "GB200-NVL72":
        nodes = 18 * max(1, nodes // 18)
    c = Cluster.system(system, nodes, nic_gbps=nic_gbps, nics_per_node=min(nics, 4 if system == "GB200-NVL72" else 8))
    if c.n_gpus < 2:
        return
    assert c.expected_busbw_gbs(op, algo="ring") <= c.line_bound_gbs() + 1e-9
    # no algorithm beats NVLS or 2(n-1)/n x the line bound (a tree on 2 domains halves the network bytes)
    n = c.n_gpus
    assert c.expected_busbw_gbs(op) <= max(c.nvls_busbw_gbs, 2 * (n - 1) / n * c.line_bound_gbs()) + 1e-9


def test_nccl_algo_ring_is_the_best_ring_protocol():
    # 1,024 ranks on 128 H800 nodes (8 x 400G), a 25 MiB DDP bucket: NCCL_ALGO=Ring lets NCCL pick LL/LL128
    c = Cluster.system("HGX-H800", 128)
    s = 25 * 2**20
    ring = c.collective_cost("all_reduce", s, algo="ring")
    simple = c.collective_cost("all_reduce", s, algo="ring", protocol="Simple")
    assert ring.time_s < simple.time_s and ring.choice in ("ring/LL", "ring/LL128")
    # NVLink hops are charged NVLink latency, network hops the network latency: far below 2(n-1) x 14 us
    assert simple.latency_s < 2 * 1023 * 14e-6 * 0.5
    # the default (tree / NVLS-Tree at this size) is faster still
    assert c.collective_time_s("all_reduce", s) < ring.time_s


def test_socket_transport_and_ecmp():
    # one 100 GbE port per node, NCCL's default 2 TCP streams of ~2.06 GB/s: ~4.1 GB/s per node
    assert socket_nic_gbs(100.0) == pytest.approx(4.12)
    assert socket_nic_gbs(25.0) == pytest.approx(25 / 8 * 0.9415)
    c = Cluster.system("DGX-H100", 2, transport="socket", nic_gbps=100.0, nics_per_node=1)
    assert c.expected_busbw_gbs(algo="ring") == pytest.approx(4.12)
    assert "TCP sockets" in c.describe()
    assert Cluster.for_gpu("H100", 2, transport="socket").transport == "socket"
    assert Cluster.from_links(nic_gbps=100, scaleup_gbs=450, transport="socket").nic_gbs == pytest.approx(4.12)
    # ECMP: few long flows collide on the uplinks; more flows per link (QP scaling) balance better
    assert ecmp_efficiency(2, 1) == 1.0
    assert ecmp_efficiency(2, 32) < ecmp_efficiency(16, 32) < 1.0
    roce = Cluster.system("DGX-H100", 8, nodes_per_leaf=4, ecmp_flows_per_nic=2)
    ib = Cluster.system("DGX-H100", 8, nodes_per_leaf=4)
    assert roce.expected_busbw_gbs(algo="ring") < ib.expected_busbw_gbs(algo="ring")
    assert roce.expected_busbw_gbs("all_reduce", 32, algo="ring") == \
        pytest.approx(ib.expected_busbw_gbs("all_reduce", 32, algo="ring"))  # 4 nodes: one leaf
    with pytest.raises(ValueError, match="nodes_per_leaf"):
        Cluster.system("DGX-H100", 8, ecmp_flows_per_nic=2)
    with pytest.raises(ValueError):
        Cluster.system("DGX-H100", 2, transport="tcp")


def test_degraded_rails_and_line_bound():
    c = Cluster.system("DGX-H100", 2)
    assert c.line_bound_gbs() == pytest.approx(400) and c.line_bound_gbs(8) == pytest.approx(450)
    assert c.acceptance_busbw_gbs(slow_rails=1, slow_rail_gbps=200) == pytest.approx(192)
    assert c.line_bound_gbs(slow_rails=1, slow_rail_gbps=200) == pytest.approx(200)
    # NCCL's default on 2 nodes (NVLS-Tree) hides most of a slow rail: why acceptance forces the ring
    assert c.expected_busbw_gbs(slow_rails=1, slow_rail_gbps=200, algo="auto") == pytest.approx(2 * 15 / 16 * 192)
    with pytest.raises(ValueError, match="slow_rail_gbps"):
        c.expected_busbw_gbs(slow_rails=1)
    with pytest.raises(ValueError, match="slow_rails"):
        c.expected_busbw_gbs(slow_rails=9, slow_rail_gbps=200)


@pytest.mark.parametrize("algo", ALGOS)
def test_every_algorithm_names_its_choice(algo):
    c = Cluster.system("DGX-H100", 4)
    cost = c.collective_cost("all_reduce", np.array([1e3, 1e9]), algo=algo)
    assert len(cost.choice) == 2 and all(isinstance(x, str) for x in cost.choice)
