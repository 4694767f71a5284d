"""Figure fixes from issue 9 (ch06 roofline labels, ch10 rack-limit control, ch12 fabric figures)."""

import numpy as np

from labutil import compute, hardware
from labutil.explore import compute as XC


def test_roofline_op_labels_sit_below_every_roof_and_names_go_to_a_legend():
    gpus = ("A100-80G-SXM", "H100-SXM", "L40S")
    fig = XC.roofline_figure(gpus=gpus)
    ax = fig.axes[0]
    ymin, _ = ax.get_ylim()
    # no op name is drawn inside the axes as free text any more: only short number tags
    tags = [t for t in ax.texts if t.get_text()]
    assert tags and all(set(t.get_text()) <= set("0123456789,") for t in tags)
    for t in tags:
        x = t.xy[0]
        lowest_roof = min(compute.roofline_tflops(x, hardware.gpu(g).bf16_tflops, hardware.gpu(g).hbm_gbs) for g in gpus)
        # the tag sits at 2 % of the (log) axis height: far below the lowest roofline at that intensity
        lo, hi = np.log10(ax.get_ylim())
        y_tag = 10 ** (lo + 0.02 * (hi - lo))
        assert y_tag * 3 < lowest_roof
    # the second legend lists every operation with its intensity
    legends = [c for c in ax.get_children() if c.__class__.__name__ == "Legend"]
    texts = [t.get_text() for leg in legends for t in leg.get_texts()]
    assert sum("FLOP/B" in s and s.startswith("[") for s in texts) == 5
    assert ymin > 0


def test_fat_tree_path_links_by_hand():
    from labutil import topology
    # k = 4 (Al-Fares Fig. 3): 16 hosts; from one host: 1 at 2 links, 2 at 4 links, 12 at 6 links, itself at 0
    p = topology.fat_tree_path_links(4)
    assert p["hosts"] == 16 and p["max_links"] == 6
    assert p["mean_links"] == (1 * 2 + 2 * 4 + 12 * 6) / 16
    # mean -> 6 as the tree grows (almost every host is in another pod)
    assert 5.85 < topology.fat_tree_path_links(16)["mean_links"] < topology.fat_tree_path_links(64)["mean_links"] < 6


def test_torus_vs_fat_tree_counts_links_on_both_sides():
    from labutil import topology
    from labutil.explore import topology as XT
    fig = XT.torus_vs_fat_tree_figure(n_side=(4, 8))
    ax = fig.axes[0]
    assert "links" in ax.get_ylabel()
    lines = {l.get_label(): l.get_ydata() for l in ax.lines}
    assert list(lines["3D torus: max"]) == [6, 12] and list(lines["3D torus: mean"]) == [3.0, 6.0]
    # the smallest full k-ary fat tree with as many hosts: 4^3 = 64 -> k = 8 (128 hosts; k = 6 has 54);
    # 8^3 = 512 -> k = 14 (686 hosts; k = 12 has 432)
    assert list(lines["3-tier fat tree: max"]) == [6, 6]
    assert np.allclose(lines["3-tier fat tree: mean"],
                       [topology.fat_tree_path_links(8)["mean_links"], topology.fat_tree_path_links(14)["mean_links"]])


def test_fabric_scaling_figure_no_coinciding_series_and_labels_off_markers():
    from labutil.explore import topology as XT
    fig = XT.fabric_scaling_figure()
    a1, a2 = fig.axes
    ys = [tuple(l.get_ydata()) for l in a2.lines if not l.get_label().startswith("_")]
    assert len(ys) == len(set(ys)), "two series drawn on top of each other"
    assert any("cables = transceivers" in l.get_label() for l in a2.lines)
    lo, hi = np.log10(a1.get_ylim())
    for t in a1.texts:
        assert "tiers" in t.get_text()
        y_label = 10 ** (lo + t.xy[1] * (hi - lo))
        x = t.xy[0]
        for line in a1.lines:
            xd, yd = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
            if line.get_label().startswith("_") or len(xd) < 3:
                continue
            near = yd[(xd >= x) & (np.log2(xd) - np.log2(x) <= 2)]     # markers under the label (it runs right)
            assert np.all(near > y_label * 3)


def test_rack_limit_control_never_below_one_dgx_h100():
    from labutil import power
    from labutil.explore import power as XP
    ex = XP.facility_power_explorer()
    c = ex.controls["rack_kw_limit"]
    assert c.min >= power.server_power_kw("DGX-H100") and XP.RACK_KW_MIN == 11.0
    ex.set(rack_kw_limit=c.min)
    assert ex.error is None
