"""Chapter 3: network planes sized from a cluster description, software stack data."""

import pytest

from labutil import architecture as A, hardware, topology
from labutil.explore import architecture as EA


def test_compute_plane_is_one_nic_per_gpu_and_matches_size_fabric():
    plan = A.plan_cluster(1024)
    c = plan.plane("compute")
    assert plan.nodes == 128 and c.total_ports == 1024 and c.node_gbps == 3200
    ref = topology.size_fabric(1024, nics_per_node=8, gpus_per_node=8, switch_ports=64, link_gbps=400)
    assert c.switches == ref.total_switches and c.tiers == ref.tiers


def test_superpod_scalable_unit():
    # NVIDIA DGX SuperPOD (DGX H100) RA: one SU of 32 DGX H100 uses 8 leaf + 4 spine QM9700 in the compute fabric.
    f = A.plan_cluster(256).compute_fabric
    assert (f.leaf_switches, f.spine_switches, f.core_switches) == (8, 4, 0)


def test_planes_bandwidth_order_and_oob_counts_switch_bmcs():
    plan = A.plan_cluster(1024)
    bw = {p.name: p.node_gbps for p in plan.planes}
    assert bw["compute"] > bw["storage"] > bw["frontend"] > bw["oob"]
    oob = plan.plane("oob")
    others = sum(p.switches for p in plan.planes if p.name != "oob")
    assert oob.total_ports == plan.nodes + others
    assert oob.switches == -(-oob.total_ports // A.OOB_SWITCH_PORTS)


def test_more_gpus_never_fewer_switches():
    counts = [A.plan_cluster(n).total_switches for n in (64, 256, 1024, 4096, 8192)]
    assert counts == sorted(counts)
    assert A.plan_cluster(8192).compute_fabric.tiers == 3


def test_other_servers_and_bad_input():
    a = A.plan_cluster(512, server="DGX-A100")
    assert a.plane("compute").port_gbps == hardware.nic("ConnectX-6-200G").port_gbps
    with pytest.raises(KeyError):
        A.plan_cluster(512, server="DGX-Z")
    with pytest.raises(ValueError, match="n_gpus"):
        A.plan_cluster(0)
    with pytest.raises(KeyError):
        A.plan_cluster(64).plane("backbone")


def test_software_stack_covers_three_vendors():
    layers = A.software_stack()
    assert [l["name"] for l in layers][0] == "firmware" and len(layers) >= 7
    assert dict(A.stack_for("nvidia"))["collectives"] == "NCCL"
    assert dict(A.stack_for("huawei"))["collectives"] == "HCCL"
    with pytest.raises(ValueError, match="vendor"):
        A.stack_for("intel")


def test_explorer_headless():
    ex = EA.architecture_explorer()
    s1024 = ex.result.compute_fabric.total_switches
    ex.set(n_gpus=8192)
    assert ex.result.compute_fabric.tiers == 3 and ex.result.compute_fabric.total_switches > s1024
    ex.set(n_gpus=1024, oversubscription=2.0)
    assert ex.result.compute_fabric.spine_switches < A.plan_cluster(1024).compute_fabric.spine_switches
    assert ex.figure.axes[1].patches[1].get_height() == ex.result.compute_fabric.spine_switches


def test_figures_render(tmp_path):
    from labutil.plotting import save_png

    plan = A.plan_cluster(1024)
    for fig in (EA.architecture_figure(plan), EA.plane_bandwidth_figure(plan)):
        assert save_png(fig, tmp_path / "f.png").stat().st_size > 10_000


def test_architecture_explorer_labels_bars_with_the_plan_counts():
    from labutil import architecture
    from labutil.explore import architecture as ea

    ex = ea.architecture_explorer()
    ex.set(n_gpus=8192)
    plan = architecture.plan_cluster(8192)
    texts = [t.get_text() for ax in ex.figure.axes for t in ax.texts]
    f = plan.compute_fabric
    for c in [p.switches for p in plan.planes] + [f.leaf_switches, f.spine_switches, f.core_switches]:
        assert f"{c:,}" in texts
    assert f"{plan.total_switches:,} 台交换机" in ex._summary.value and "3 层" in ex._summary.value
    fig = ea.architecture_figure(plan)
    label = [t.get_text() for t in fig.axes[0].texts if t.get_text().startswith("compute:")][0]
    assert f"{f.leaf_switches} leaf + {f.spine_switches} spine + {f.core_switches} core" in label
