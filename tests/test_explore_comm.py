"""Headless tests of the ch13/ch14 explorers and figures (labutil.explore.comm)."""

import numpy as np
import pytest

from labutil import comm, dp, hardware, models
from labutil.explore import comm as ec


def test_collective_explorer_builds_and_matches_the_model():
    ex = ec.collective_time_explorer()
    r = ex.result
    assert ex.error is None
    assert set(r.time_s) == set(comm.ALGOS)
    assert np.allclose(r.time_s["ring"], comm.collective_time_s("all_reduce", ec.SIZES_BYTES, 16, 50.0, 9.6e-6))
    # the figure shows the model's data
    ax_t, ax_b = ex.figure.axes[:2]
    assert np.allclose(ax_t.lines[0].get_ydata(), r.time_s["ring"])
    assert np.allclose(ax_b.lines[1].get_ydata(), r.busbw_gbs["ring"])


def test_collective_explorer_more_ranks_raise_ring_latency_and_lower_algbw():
    ex = ec.collective_time_explorer(n=16)
    t16 = ex.result.time_s["ring"].copy()
    alg16 = ex.result.algbw_gbs.copy()
    ex.set(n=256)
    assert ex.result.n == 256
    assert ex.result.time_s["ring"][0] == pytest.approx(t16[0] * 255 / 15)  # 2(n-1)α, tiny message
    assert ex.result.algbw_gbs[-1] < alg16[-1]
    # busbw at 8 GiB stays close to the link rate (the reason nccl-tests prints it)
    assert ex.result.busbw_gbs["ring"][-1] == pytest.approx(50.0, rel=0.02)
    assert np.allclose(ex.figure.axes[0].lines[0].get_ydata(), ex.result.time_s["ring"])


def test_collective_explorer_bandwidth_and_latency_controls():
    ex = ec.collective_time_explorer()
    big = ex.result.time_s["ring"][-1]
    small = ex.result.time_s["ring"][0]
    ex.set(bw_gbs=100.0)
    assert ex.result.time_s["ring"][-1] < big * 0.55
    ex.set(latency_us=50.0)
    assert ex.result.time_s["ring"][0] > small * 5
    ex.set(op="all_gather", algo="hierarchical")
    assert ex.result.op == "all_gather" and ex.result.crossover_bytes is None
    assert ex.figure.axes[1].get_title().startswith("hierarchical")


def test_collective_explorer_reports_invalid_hierarchical_layout_without_crashing():
    ex = ec.collective_time_explorer()
    before = ex.result
    ex.set(algo="hierarchical", n=4)  # one node: fine
    assert ex.error is None
    assert ex.result.n == 4
    assert before is not ex.result


def test_dp_explorer_default_reproduces_seed003():
    ex = ec.dp_bandwidth_explorer()
    r = ex.result
    assert r.gpu == "H800-SXM" and r.n_gpus == 32
    assert r.comm_s > r.compute_s
    assert float(r.step.utilisation) < 0.30
    u_grid = ex.figure.axes[0].lines[0].get_ydata()
    assert np.allclose(u_grid, 100 * r.utilisation_grid)
    assert np.all(np.diff(r.utilisation_grid) >= -1e-12)  # more bandwidth never lowers utilisation


def test_dp_explorer_faster_network_and_overlap_raise_utilisation():
    ex = ec.dp_bandwidth_explorer()
    u0 = float(ex.result.step.utilisation)
    ex.set(nic_gbps=400, nics_per_node=8)
    u1 = float(ex.result.step.utilisation)
    assert u1 > 0.85 > u0
    ex.set(overlap=2 / 3)
    assert float(ex.result.step.utilisation) == pytest.approx(1.0)
    assert ex.figure.axes[0].lines[1].get_ydata()[0] == pytest.approx(100.0)


def test_dp_explorer_tree_beats_ring_at_scale_and_matches_scaling_curve():
    from labutil.cluster import Cluster

    ex = ec.dp_bandwidth_explorer(nic_gbps=400, nics_per_node=8, n_gpus=4096, algo="NCCL_ALGO=Ring")
    ring_eff = ex.result.efficiency_grid.copy()
    ex.set(algo="NCCL_ALGO=Tree")
    tree_eff = ex.result.efficiency_grid
    assert tree_eff[-1] > ring_eff[-1]
    # the explorer's curve is the cluster model on the catalog HGX H800 system
    params = models.transformer("llama2-7b").params()
    c = Cluster.system("HGX-H800", 512)
    curve = dp.scaling_curve(params, ec.N_GPUS_GRID, compute_s=ex.result.compute_s, cluster=c, algo="tree")
    assert np.allclose(tree_eff, curve.scaling_efficiency)
    assert np.allclose(ex.figure.axes[1].lines[0].get_ydata(), 100 * tree_eff)
    ex.set(algo="auto (NCCL)")
    assert np.all(ex.result.efficiency_grid >= np.maximum(ring_eff, tree_eff) - 1e-12)


def test_dp_explorer_required_bandwidth_in_summary_is_consistent():
    ex = ec.dp_bandwidth_explorer()
    req70 = ex.result.required_gbps[0.7]
    assert req70 is not None
    r = ec.dp_bandwidth(nic_gbps=req70, nics_per_node=1)
    assert float(r.step.utilisation) == pytest.approx(0.7, rel=2e-3)  # interpolated on the explorer's grid
    assert "GPU 利用率" in ex.summary(ex.result, ex.values())


def test_dp_explorer_bad_algorithm_name():
    with pytest.raises(KeyError):
        ec.dp_bandwidth(algo="butterfly")


def test_seed003_rows_order_and_threshold():
    rows = ec.seed003_rows()
    assert rows[0]["config"] == "1 x 25GbE" and rows[0]["utilisation"] < 0.30
    assert rows[-1]["config"] == "8 x 400G IB" and rows[-1]["utilisation"] > 0.85
    assert all(a["utilisation"] < b["utilisation"] for a, b in zip(rows, rows[1:]))


@pytest.mark.parametrize("name", ["cost_terms_figure", "busbw_vs_size_figure", "algbw_vs_ranks_figure",
                                  "seed003_figure", "utilisation_vs_bandwidth_figure", "scaling_efficiency_figure",
                                  "oversubscription_figure"])
def test_figures_have_data_and_labelled_axes(name):
    fig = getattr(ec, name)()
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel()
        assert ax.lines or ax.patches
        assert "(" in ax.get_xlabel() or "GPUs" in ax.get_xlabel() or "ranks" in ax.get_xlabel()


def test_oversubscription_curves_split_after_one_leaf():
    curves = ec.scaling_curves(overlap=0.0, scenarios=ec.OVERSUB_SCENARIOS)
    flat, two, four = (c.scaling_efficiency for c in curves.values())
    inside = ec.N_GPUS_GRID <= 32
    assert np.allclose(flat[inside], two[inside]) and np.allclose(flat[inside], four[inside])
    assert np.all(flat[~inside] > two[~inside]) and np.all(two[~inside] > four[~inside])


def test_busbw_vs_size_shows_nccl_default_beside_the_flat_algorithms_with_one_figure_legend():
    from labutil.cluster import Cluster
    from labutil.explore import comm as ce

    fig = ce.busbw_vs_size_figure(ns=(16, 1024))
    assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in fig.axes)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "flat ring (1 channel)" in labels and "flat tree (1 channel)" in labels
    for ax, n in zip(fig.axes, (16, 1024)):
        line = [ln for ln in ax.lines if ln.get_label().startswith("NCCL's default")][0]
        c = Cluster.system("DGX-H100").with_gpus(n)
        assert line.get_ydata()[-1] == pytest.approx(float(c.busbw_gbs("all_reduce", ce.SIZES_BYTES[-1], n, "auto")))
    # two nodes: NCCL's default (NVLS-Tree) ends above the per-rail ring bound
    assert fig.axes[0].lines[-2].get_ydata()[-1] > fig.axes[0].lines[-3].get_ydata()[-1]


def test_collective_explorer_writes_large_crossovers_in_gb_or_tb():
    from labutil.explore import comm as ce

    ex = ce.collective_time_explorer()
    ex.set(n=4096)
    assert "TB" in ex._summary.value and "MB：" not in ex._summary.value
    assert ex.figure.axes[0].get_legend() is not None


def test_dp_explorer_says_what_a_node_is_for_gb200():
    from labutil.explore import comm as ce

    ex = ce.dp_bandwidth_explorer()
    assert ex.figure.axes[0].get_xlabel() == "network bandwidth per 8-GPU server (Gbit/s)"
    ex.set(gpu="GB200", nic_gbps=400, nics_per_node=4, n_gpus=4096)
    assert ex.figure.axes[0].get_xlabel() == "network bandwidth per 4-GPU compute tray (Gbit/s)"
    assert "每个 4 卡计算托盘" in ex._summary.value
