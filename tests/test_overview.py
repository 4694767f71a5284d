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
    r = overview.effective_compute("H100-SXM", 1024, 0.5, 0.85)
    assert r["peak_pflops"] == pytest.approx(1024 * 989.4 / 1e3)
    assert r["effective_pflops"] == pytest.approx(r["peak_pflops"] * 0.425)
    assert r["in_band"]
    assert not overview.effective_compute("H100-SXM", 1024, 0.8, 1.0)["in_band"]
    with pytest.raises(ValueError, match="mfu"):
        overview.effective_compute("H100-SXM", 8, 1.5, 1.0)
    with pytest.raises(KeyError):
        overview.effective_compute("H1000", 8, 0.5, 1.0)


def test_effective_compute_explorer_headless():
    ex = overview.effective_compute_explorer()
    before = ex.result["effective_pflops"]
    ex.set(n_gpus=2048)
    assert ex.result["effective_pflops"] == pytest.approx(2 * before)
    ex.set(gpu="A100-80G-SXM")
    assert ex.result["peak_pflops"] == pytest.approx(2048 * 312 / 1e3)
    bars = ex.figure.axes[0].patches
    assert bars[1].get_width() == pytest.approx(ex.result["effective_pflops"])


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

    for fig in (coursemap.course_map_figure(1), overview.peak_vs_effective_figure(), overview.failures_figure()):
        p = save_png(fig, tmp_path / "f.png")
        assert p.stat().st_size > 10_000
