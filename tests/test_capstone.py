"""Capstone (ch30): the design chains the course's models; BOM, CSV, validation, explorer."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from labutil import architecture, capstone as CS, compute, cost, hardware, models, steptime, power, reliability, \
    storage, topology


@pytest.fixture(scope="module")
def design():
    return CS.design_cluster(simulate=True, trials=100)


def test_chain_equals_direct_model_calls(design):
    r = design.req
    spec = models.transformer(r.model)
    g = hardware.gpu("H100-SXM")
    flops = compute.train_flops(spec.params(), r.tokens)
    assert design.compute.total_flops == pytest.approx(flops)
    n = compute.gpus_for_deadline(flops, r.deadline_days * r.planning_goodput, g.bf16_tflops, r.planning_mfu)
    assert design.compute.gpus_for_deadline == n
    # whole scalable units of 32 nodes (DGX SuperPOD RA)
    assert design.compute.training_gpus == math.ceil(math.ceil(n / 8) / 32) * 32 * 8 == 1024
    from labutil.cluster import Cluster

    # the design's layout is the search on the training pool's Cluster (128 DGX H100, 8 x 400G)
    assert design.network.cluster == Cluster.system("DGX-H100", 128)
    best = steptime.search_layouts(spec, 1024, g, r.global_batch, cluster=Cluster.system("DGX-H100", 128)).best
    assert design.compute.layout == best
    fab = topology.size_fabric(1024, nics_per_node=8, gpus_per_node=8, switch_ports=64, link_gbps=400.0)
    assert design.network.compute_fabric == fab
    # the default build is exactly plan_cluster's compute plane (same server NIC, same QM9700)
    assert architecture.plan_cluster(1024, "DGX-H100", "QM9700").compute_fabric == fab
    assert design.network.plan == architecture.plan_cluster(design.total_gpus, "DGX-H100", "QM9700")
    assert design.storage.checkpoint_gb == pytest.approx(storage.checkpoint_gb(spec.params()))
    pw = power.cluster_power(design.total_gpus, "DGX-H100", pue=r.pue, rack_kw_limit=r.rack_kw_limit,
                             network_kw=design.network.optics_kw)
    assert design.power.facility_kw == pytest.approx(pw.facility_kw)
    assert design.energy_usd_per_year == pytest.approx(power.energy_cost_per_year(pw.facility_kw, r.usd_per_kwh))
    f = reliability.cluster_failures_per_day(reliability.llama3_components(1024))
    assert design.reliability.failures_per_day == pytest.approx(f)
    tau = reliability.young_daly_interval_s(design.reliability.checkpoint_s, 86400 / f)
    assert design.reliability.interval_s == pytest.approx(tau)
    assert design.reliability.goodput == pytest.approx(
        reliability.goodput(f, r.restart_s, tau, design.reliability.checkpoint_s))
    # Monte Carlo agrees with the analytic goodput (same model, 100 trials)
    assert design.reliability.simulated_goodput == pytest.approx(design.reliability.goodput, abs=0.01)
    storage_tb = sum(t.usable_tb for t in design.storage.tiers.tiers)
    t = cost.tco(design.total_gpus, r.years, r.utilisation, pue=r.pue, storage_tb_per_gpu=storage_tb / design.total_gpus)
    assert design.tco.total_usd == pytest.approx(t.total_usd)
    # estimated days = time at the layout's MFU / goodput
    days = compute.time_to_train_days(flops, 1024, g.bf16_tflops, best.mfu) / design.reliability.goodput
    assert design.compute.estimated_days == pytest.approx(days)


def test_bom_quantities_add_up(design):
    rows = {r.item: r for r in CS.bill_of_materials(design)}
    srv = hardware.server(design.req.server)
    nodes = rows["GPU server (training)"].quantity + rows["GPU server (inference)"].quantity
    assert rows["GPU"].quantity == nodes * srv.gpus == design.total_gpus
    assert rows["compute NIC"].quantity == design.compute.training_gpus  # one 400G NIC per training GPU
    fab = design.network.compute_fabric
    leaf, spine = rows["compute leaf switch"].quantity, rows["compute spine switch"].quantity
    assert leaf + spine == fab.total_switches
    # cables: every NIC to a leaf, every leaf uplink to a spine
    assert rows["compute cables"].quantity == fab.n_nics + leaf * fab.up_ports_per_leaf
    assert leaf * fab.down_ports_per_leaf >= fab.n_nics
    assert rows["rack"].quantity * design.power.servers_per_rack >= nodes
    assert sum(r.quantity for r in CS.bill_of_materials(design) if r.item.startswith("storage:")) == \
        sum(t.servers for t in design.storage.tiers.tiers)


def test_superpod_reference_numbers(design):
    # DGX SuperPOD H100 RA, 4 SU = 128 nodes = 1,024 GPUs: 32 leaf + 16 spine QM9700 per compute fabric
    fab = design.network.compute_fabric
    assert (fab.leaf_switches, fab.spine_switches) == (32, 16)


@settings(max_examples=15, deadline=None)
@given(d1=st.floats(20.0, 200.0), shrink=st.floats(0.3, 1.0))
def test_tighter_deadline_never_fewer_gpus(d1, shrink):
    a = CS.design_cluster(CS.requirements(deadline_days=d1), simulate=False)
    b = CS.design_cluster(CS.requirements(deadline_days=d1 * shrink), simulate=False)
    assert b.compute.training_gpus >= a.compute.training_gpus
    assert b.compute.gpus_for_deadline >= a.compute.gpus_for_deadline


def test_slow_network_misses_deadline_balanced_meets():
    fast = CS.design_cluster(simulate=False)
    slow = CS.design_cluster(CS.requirements(fabric="Ethernet-25G"), simulate=False)
    assert slow.compute.training_gpus == fast.compute.training_gpus
    assert slow.compute.estimated_mfu < fast.compute.estimated_mfu
    assert fast.compute.meets_deadline and not slow.compute.meets_deadline


def test_csv_and_markdown_round_trip(design, tmp_path):
    rows = CS.bill_of_materials(design)
    p = CS.write_csv(rows, tmp_path / "bom.csv")
    back = CS.read_csv(p)
    assert back == [CS.BomRow(r.item, r.model, float(r.quantity), r.unit, r.source, r.notes) for r in rows]
    md = CS.to_markdown(rows)
    assert md.count("\n") == len(rows) + 2
    assert "| GPU | H100-SXM | 1032 |" in md
    CS.write_markdown(rows, tmp_path / "bom.md")
    assert (tmp_path / "bom.md").read_text(encoding="utf-8") == md
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not a BOM CSV"):
        CS.read_csv(tmp_path / "bad.csv")


@pytest.mark.parametrize("field,value", [
    ("deadline_days", 0.0), ("deadline_days", -3.0), ("tokens", float("nan")), ("budget_usd", -1.0),
    ("planning_mfu", 1.5), ("server", "DGX-Z900"), ("fabric", "Token-Ring"), ("model", "gpt-5"),
    ("global_batch", 0), ("pue", 0.9), ("inference_qps", -1.0), ("restart_s", -5.0),
])
def test_bad_requirements_name_the_field(field, value):
    with pytest.raises((ValueError, KeyError), match=field):
        CS.requirements(**{field: value})


def test_design_rejects_non_requirements():
    with pytest.raises(ValueError, match="Requirements"):
        CS.design_cluster({"deadline_days": 10})


def test_no_layout_falls_back_to_node_multiple_batch():
    # DGX-A100: 3,328 GPUs = 13 x 2^8, so no dp divides 1,024 with tp*pp = 13; the batch moves to 1,248
    d = CS.design_cluster(CS.requirements(server="DGX-A100"), simulate=False)
    assert d.compute.training_gpus == 3328
    assert d.compute.global_batch == 1248 and d.compute.global_batch % d.compute.layout.layout.dp == 0
    assert np.isfinite(d.compute.estimated_days)


def test_operations_view_10k(design):
    o = CS.operations_view(design, 10_000, trials=100)
    assert o.failures_per_day == pytest.approx(reliability.cluster_failures_per_day(
        reliability.llama3_components(10_000)))
    # Llama 3 (16,384 GPUs, 419 interruptions / 54 days = 7.76/day) scaled to 10k GPUs
    assert o.failures_per_day == pytest.approx(419 / 54 * 10_000 / 16_384, rel=0.01)
    assert o.gpu_failures_per_day_seed == pytest.approx(2.4)  # seed 000: 10k GPUs, MTBF 100,000 h
    assert o.p_quiet_shift == pytest.approx(math.exp(-o.failures_per_day / 2))
    assert o.spares["gpu"] >= o.failures_by_part_per_day["gpu"] * 14
    assert o.interval_s < design.reliability.interval_s          # more failures -> checkpoint more often
    assert o.goodput < design.reliability.goodput
    assert o.simulated_goodput == pytest.approx(o.goodput, abs=0.01)


def test_poisson_quantile():
    assert CS.poisson_quantile(0.0, 0.99) == 0
    # P(X<=1 | mean 0.1) = 0.9953 >= 0.99, P(X<=0) = 0.905
    assert CS.poisson_quantile(0.1, 0.99) == 1
    # mean 10: P(X<=17) = 0.9857, P(X<=18) = 0.9928
    assert CS.poisson_quantile(10.0, 0.99) == 18
    assert list(CS.poisson_quantile(np.array([0.1, 10.0]), 0.99)) == [1, 18]
    with pytest.raises(ValueError, match="q"):
        CS.poisson_quantile(1.0, 1.0)


def test_downtime_and_budget_alternatives(design):
    dt = CS.downtime_view(design)
    assert dt.usd_per_year > 0 and dt.failures_per_year == pytest.approx(365 * design.reliability.failures_per_day)
    opts = {o.label: o for o in CS.budget_alternatives(80e6)}
    assert opts["mid GPU + 200G IB (balanced)"].delivered_pflops > opts["top GPU + 25GbE"].delivered_pflops


def test_acceptance_checklist(design):
    rows = CS.acceptance_checklist(design)
    cmds = " ".join(r["command"] for r in rows)
    for c in ("nvidia-smi", "ibstat", "dcgmi diag -r 3", "all_reduce_perf", "fio", "lfs df"):
        assert c in cmds
    # labutil.cluster: 2 x DGX H100 expect min(NVLink ring 370, 8 x 48) = 370 GB/s; pass line 80 % = 296
    assert "busbw >= 296 GB/s" in rows[3]["criterion"] and "expected 370" in rows[3]["criterion"]


def test_explorer_updates_whole_design():
    import matplotlib
    matplotlib.use("Agg")
    from labutil.explore import capstone as E

    ex = E.capstone_explorer()
    gpus0 = ex.result.compute.training_gpus
    h0 = ex.figure._capstone["capex"][0].get_height()
    ex.set(deadline_days=30.0)
    assert ex.error is None and ex.result.compute.training_gpus > gpus0
    assert ex.figure._capstone["capex"][0].get_height() > h0
    ex.set(fabric="Ethernet-25G", deadline_days=55.0)
    assert not ex.result.compute.meets_deadline
    assert ex.figure._capstone["sched"][1].get_height() == pytest.approx(ex.result.compute.estimated_days)
    ex.set(budget_musd=40.0)
    assert not ex.result.within_budget
    assert ex.figure._capstone["budget"].get_ydata()[0] == pytest.approx(40.0)
