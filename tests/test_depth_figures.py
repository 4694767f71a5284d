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
