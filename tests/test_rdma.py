"""labutil.rdma (ch11): IB rates, PFC headroom (Cisco PFC white paper + IEEE 802.3 Table 31B-1), ECN/DCQCN."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labutil import rdma
from labutil.explore import rdma as er


def test_ib_rate_table_encodings():
    rows = {r["gen"]: r for r in rdma.ib_rate_table()}
    assert rows["SDR"]["port_gbps"] == pytest.approx(8.0)          # 4 x 2.5 x 8/10
    assert rows["QDR"]["port_gbps"] == pytest.approx(32.0)         # 40G signalling, 32G data (8b/10b)
    assert rows["FDR"]["port_gbps"] == pytest.approx(54.545, abs=0.01)  # 4 x 14.0625 x 64/66
    assert rows["EDR"]["port_gbps"] == pytest.approx(100.0)
    assert rows["NDR"]["port_gbps"] == pytest.approx(400.0)
    assert rows["XDR"]["port_gbps"] == pytest.approx(800.0)
    assert rdma.ib_rate_table(1)[0]["port_gbps"] == pytest.approx(2.0)


def test_pfc_headroom_cisco_10g_example():
    # Cisco white paper: at 10 Gb/s, 100 m of single-mode fibre holds 641 B each way (513 ns);
    # the sender's reaction is 60 pause quanta = 3,840 B (IEEE 802.3 Table 31B-1).
    h = rdma.pfc_headroom(10, 100, mtu_bytes=1500)
    assert h["cable_b"] == pytest.approx(2 * 641.25)
    assert h["response_b"] == pytest.approx(3840.0)
    assert h["total_b"] == pytest.approx(1500 + 1500 + 2 * 641.25 + 3840)


def test_pfc_headroom_400g():
    h = rdma.pfc_headroom(400, 100)
    assert h["response_b"] == pytest.approx(905 * 512 / 8)
    assert h["cable_b"] == pytest.approx(51_300)
    assert h["total_b"] == pytest.approx(127_652)
    assert rdma.pfc_headroom(400, 100, medium="copper")["cable_b"] < h["cable_b"]
    arr = rdma.pfc_headroom(400, np.array([1.0, 10.0, 100.0]))["total_b"]
    assert arr.shape == (3,) and np.all(np.diff(arr) > 0)
    with pytest.raises(KeyError):
        rdma.pfc_headroom(800, 100)
    assert rdma.pfc_headroom(800, 100, response_bit_times=0)["total_b"] == pytest.approx(2 * 9216 + 102_600)
    for bad in (dict(port_gbps=0, cable_m=1), dict(port_gbps=400, cable_m=-1), dict(port_gbps=400, cable_m=float("nan"))):
        with pytest.raises(ValueError):
            rdma.pfc_headroom(**bad)
    with pytest.raises(ValueError):
        rdma.pfc_headroom(400, 10, medium="air")


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(sorted(rdma.PAUSE_REACTION_QUANTA)), st.floats(0, 5000), st.floats(0, 5000),
       st.sampled_from([1500, 4200, 9216]))
def test_headroom_monotone_in_length(speed, l1, l2, mtu):
    a = rdma.pfc_headroom(speed, min(l1, l2), mtu_bytes=mtu)["total_b"]
    b = rdma.pfc_headroom(speed, max(l1, l2), mtu_bytes=mtu)["total_b"]
    assert 0 < a <= b
    assert a >= 2 * mtu


def test_ecn_marking_curve():
    p = rdma.ecn_mark_probability(np.array([0, 5e3, 102.5e3, 200e3, 200.1e3]))
    assert list(p) == pytest.approx([0, 0, 0.005, 0.01, 1.0])
    with pytest.raises(ValueError):
        rdma.ecn_mark_probability(10, kmin_bytes=100, kmax_bytes=50)


def test_dcqcn_cuts():
    r = rdma.dcqcn_rate_after_cnps(400, 3)
    assert list(r) == pytest.approx([400, 200, 100, 50])   # alpha starts at 1 and stays 1
    slow = rdma.dcqcn_rate_after_cnps(400, 1, alpha0=0.0)
    assert slow[1] == pytest.approx(400.0)                  # alpha 0: first cut does nothing
    assert np.all(np.diff(rdma.dcqcn_rate_after_cnps(100, 20, alpha0=0.3)) <= 0)
    with pytest.raises(ValueError):
        rdma.dcqcn_rate_after_cnps(-1, 3)


def test_ib_vs_roce_table_rows():
    assert {r["aspect"] for r in rdma.IB_VS_ROCE} >= {"link layer", "congestion control"}


def test_explorer_headless():
    ex = er.pfc_headroom_explorer()
    base = ex.result["per_port_b"]
    assert base == pytest.approx(127_652)
    ex.set(cable_m=300.0)
    assert ex.result["per_port_b"] > base
    assert ex.figure.axes[0].patches[1].get_width() == pytest.approx(ex.result["parts_b"][1] / 1e3)
    ex.set(priorities=2, ports=128)
    assert ex.result["switch_b"] == pytest.approx(ex.result["per_port_b"] * 256)


def test_figures():
    for fig in (er.ib_rates_figure(), er.headroom_vs_length_figure(), er.ecn_dcqcn_figure()):
        for ax in fig.axes:
            assert (ax.patches or ax.lines) and "(" in ax.get_ylabel()


def test_dp_gradient_sync_seed003_case():
    # 70B, 2048 H100, TP8 x PP8 -> DP 32; shard 70e9/64 x 2 B = 2.1875 GB
    r = rdma.dp_gradient_sync(70e9, 2048, nic_gbps=400)
    assert r["dp"] == 32 and r["shard_gb"] == pytest.approx(2.1875)
    # through the cluster model: DP 32 strided over 32 nodes (one rank per node, one rail each), ring
    # all-reduce at 0.96 of 400G = 48 GB/s: 2(n-1)/n S/B + NCCL 2.30.7's ring latency: base 8.4 us + 62
    # network hops of 14 us, x 1.4 (the multi-node ring "plateau" factor of ncclTopoGetAlgoTime)
    assert r["sync_s"] == pytest.approx(2 * 31 / 32 * 2.1875 / 48 + 1.4 * (8.4e-6 + 62 * 14e-6))
    from labutil.cluster import Cluster
    c = Cluster.system("DGX-H100", 256)
    assert r["sync_s"] == pytest.approx(c.dp_sync_time_s(70e9 / 64, 32, ranks_per_node=1))
    # an explicit cluster gives the same answer; a slower rail is slower
    assert rdma.dp_gradient_sync(70e9, 2048, cluster=c)["sync_s"] == pytest.approx(r["sync_s"])
    assert rdma.dp_gradient_sync(70e9, 2048, nic_gbps=200)["sync_s"] > 1.9 * r["sync_s"]
    with pytest.raises(TypeError):
        rdma.dp_gradient_sync(70e9, 2048, cluster="DGX-H100")
    # compute: 6 N T / (n peak MFU)
    assert r["compute_s"] == pytest.approx(6 * 70e9 * 4e6 / (2048 * 989.4e12 * 0.45), rel=1e-3)
    arr = rdma.dp_gradient_sync(70e9, 2048, nic_gbps=np.array([100.0, 200.0, 400.0]))["sync_ratio"]
    assert np.all(np.diff(arr) < 0)
    with pytest.raises(ValueError):
        rdma.dp_gradient_sync(70e9, 100)
    with pytest.raises(ValueError):
        rdma.dp_gradient_sync(70e9, 64)


def test_pfc_explorer_says_a_long_copper_run_is_not_real():
    from labutil.explore import rdma as rdma_x

    ex = rdma_x.pfc_headroom_explorer()
    assert "只能用光纤" not in ex._summary.value
    ex.set(medium="copper", cable_m=100.0)
    assert ex.error is None and "只能用光纤" in ex._summary.value
    ex.set(cable_m=3.0)
    assert "只能用光纤" not in ex._summary.value
