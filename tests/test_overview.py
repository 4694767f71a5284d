"""Chapter 1 models and figures."""

import numpy as np
import pytest

from labutil import coursemap, reliability
from labutil.explore import overview


def test_failures_per_day_seed_000():
    # seed 000 误区三: 10,000 GPUs at MTBF 100,000 h still fail every day: 24 * 1e4 / 1e5 = 2.4
    assert reliability.failures_per_day(10_000, 100_000) == pytest.approx(2.4)
    arr = reliability.failures_per_day(np.array([1000, 10000]), 100_000)
    assert arr == pytest.approx([0.24, 2.4])
    with pytest.raises(ValueError, match="mtbf_hours"):
        reliability.failures_per_day(10, 0)


def test_effective_compute_band():
    r = overview.effective_compute("H100-SXM", 1024, 0.5, "8x400G")
    assert r["peak_pflops"] == pytest.approx(1024 * 989.4 / 1e3)
    assert r["effective_pflops"] == pytest.approx(r["peak_pflops"] * 0.5 * r["scaling_efficiency"])
    assert r["in_band"] and r["cluster_mfu"] == pytest.approx(r["efficiency"])
    assert not overview.effective_compute("H100-SXM", 1024, 0.8, "8x400G")["in_band"]
    with pytest.raises(ValueError, match="mfu_1gpu"):
        overview.effective_compute("H100-SXM", 8, 1.5)
    with pytest.raises(KeyError):
        overview.effective_compute("H1000", 8, 0.5)
    with pytest.raises(ValueError, match="network"):
        overview.effective_compute("H100-SXM", 8, 0.5, "10GbE")


def test_scaling_efficiency_falls_with_cluster_size_and_weaker_network():
    # the same 16M-token step split over more GPUs: eta(N) is derived from the cluster model
    n = np.array([8, 1024, 4096, 16384, 65536])
    fast = overview.scaling_efficiency_curve("H100-SXM", "8x400G", 0.55, n)["scaling_efficiency"]
    two = overview.scaling_efficiency_curve("H100-SXM", "2x400G", 0.55, n)["scaling_efficiency"]
    seed = overview.scaling_efficiency_curve("H100-SXM", "1x25GbE", 0.55, n)["scaling_efficiency"]
    assert fast[0] == 1.0 and np.all(np.diff(fast) <= 1e-12) and fast[-1] < 0.5
    assert np.all(two <= fast + 1e-12) and np.all(seed <= two + 1e-12)
    assert seed[1] < 0.3                       # seed 003: 1x 25 GbE per server cannot feed 1,024 GPUs
    # Llama 3 scale: 16,384 H100, single-GPU MFU 0.55 -> cluster MFU in the published 38-43 % range
    r = overview.effective_compute("H100-SXM", 16384, 0.55, "8x400G")
    assert 0.38 <= r["cluster_mfu"] <= 0.45


def test_effective_compute_explorer_headless():
    ex = overview.effective_compute_explorer()
    before = ex.result["effective_pflops"]
    ex.set(n_gpus=2048)
    assert ex.result["effective_pflops"] == pytest.approx(2 * before * ex.result["scaling_efficiency"]
                                                          / overview.effective_compute("H100-SXM", 1024, 0.55)[
                                                              "scaling_efficiency"])
    ex.set(gpu="A100-80G-SXM")
    assert ex.result["peak_pflops"] == pytest.approx(2048 * 312 / 1e3)
    bars = ex.figure.axes[0].patches
    assert bars[1].get_width() == pytest.approx(ex.result["effective_pflops"])
    ex.set(network="1x25GbE")
    assert ex.result["scaling_efficiency"] < 0.3
    assert ex.figure.axes[1].lines[1].get_ydata()[0] == pytest.approx(ex.result["scaling_efficiency"])


def test_course_map_has_six_modules_thirty_chapters_acyclic():
    mods = coursemap.modules()
    assert len(mods) == 6
    chapters = sorted(c for m in mods for c in m.chapters)
    assert chapters == list(range(1, 31))
    for m in mods:
        assert m.id not in coursemap.prerequisites(m.id)
    # seed 000: GPU architecture (module 2) comes before NCCL (module 3)
    assert 2 in coursemap.prerequisites(3)
    assert coursemap.module_of(15).id == 3


def test_figures_render(tmp_path):
    from labutil.plotting import save_png

    for fig in (overview.course_map_figure(1), overview.peak_vs_effective_figure(), overview.failures_figure()):
        p = save_png(fig, tmp_path / "f.png")
        assert p.stat().st_size > 10_000


def test_explorer_says_when_the_example_job_cannot_fit_and_keeps_a_decimal_below_ten_percent():
    from labutil import memory, models

    ex = overview.effective_compute_explorer()
    ex.set(n_gpus=8)
    # 70.6B params x 16 B (mixed-precision Adam) / 8 GPUs = 141 GB per GPU even fully sharded: more than 80 GB
    states = memory.model_states_gb(float(models.transformer(overview.SCALING_MODEL).params()), 8, 3).total_gb
    assert ex.result["states_gb_per_gpu"] == pytest.approx(states) and states > 80
    assert not ex.result["states_fit"] and "放不下" in ex._summary.value
    ex.set(n_gpus=1024)
    assert ex.result["states_fit"] and "放不下" not in ex._summary.value
    ex.set(gpu="Ascend-910B", n_gpus=65536, network="1x25GbE", mfu_1gpu=0.8)
    eta = ex.result["scaling_efficiency"]
    assert 0 < eta < 0.01 and f"扩展效率 {eta:.1%}" in ex._summary.value  # 0.4 %, not "0%"


def test_course_map_wraps_long_titles_and_failures_figure_has_llama3_points():
    from labutil import reliability

    fig = overview.course_map_figure(1)
    titles = [t.get_text() for t in fig.axes[0].texts if t.get_text().startswith("M")]
    assert any("\n" in t for t in titles if t.startswith("M6"))          # 35 characters: wrapped
    assert all("\n" not in t for t in titles if t.startswith("M2"))
    fig = overview.failures_figure()
    pts = {ln.get_label(): ln.get_ydata()[0] for ln in fig.axes[0].lines if ln.get_label().startswith("Llama 3")}
    ref = reliability.reference_data()["llama3"]
    assert pts[f"Llama 3, {ref['gpus']:,} H100: all interruptions"] == pytest.approx(419 / 54)   # Table 5
    assert pts["Llama 3: GPU causes only"] == pytest.approx(reliability.llama3_counts_by_part()["gpu"] / 54)
