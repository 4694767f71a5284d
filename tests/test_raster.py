"""labutil.raster: the text-bitmap cache draws what matplotlib draws, and the PNG encoder's contract."""

import io

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from PIL import Image

from labutil import raster
from labutil.plotting import new_figure


def _figure(rotated_label="memory per GPU (GB), 10³"):
    fig, ax = new_figure(figsize=(6.0, 3.5))
    x = np.arange(1, 9)
    ax.plot(x, x ** 2, marker="o", label="ring all-reduce")
    ax.set_yscale("log")
    ax.set_xlabel("GPUs n")
    ax.set_ylabel(rotated_label)          # rotated 90 degrees
    ax.set_title("busbw vs message size")
    for i in x:
        ax.annotate(f"{i * 1.25:.2f}", (i, i ** 2), rotation=30, fontsize=8)
    ax.legend()
    return fig


def _pixels(canvas_cls, fig):
    canvas = canvas_cls(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].astype(int)


def test_cached_text_draws_the_same_picture_as_matplotlib():
    raster.clear_text_cache()
    ref = _pixels(FigureCanvasAgg, _figure())
    first = _pixels(raster.CourseCanvasAgg, _figure())     # cache misses: glyphs rendered and kept
    again = _pixels(raster.CourseCanvasAgg, _figure())     # cache hits: one blit per string
    stats = raster.text_cache_stats()
    assert np.array_equal(first, again), "a cached bitmap must give exactly the picture of its first draw"
    if not raster.GLYPH_CACHE:  # matplotlib < 3.11 (the floor): its own one-bitmap text path, untouched
        assert stats["misses"] == stats["hits"] == 0 and np.array_equal(first, ref)
        return
    assert stats["misses"] > 10 and stats["hits"] >= stats["misses"]
    diff = np.abs(first - ref).sum(axis=-1)
    # Only the anchor snap to the whole pixel differs: edges of glyphs move by < 1 px.
    assert (diff > 60).mean() < 0.02
    assert np.abs(first.mean(axis=(0, 1)) - ref.mean(axis=(0, 1))).max() < 0.5  # same amount of ink


def test_text_is_where_matplotlib_puts_it():
    """Ink of the rotated y label and of the title lies in the same rows/columns in both renderers."""
    def ink_box(img):
        dark = (img.sum(axis=-1) < 300)
        rows, cols = np.nonzero(dark)
        return rows.min(), rows.max(), cols.min(), cols.max()

    ref = _pixels(FigureCanvasAgg, _figure())
    got = _pixels(raster.CourseCanvasAgg, _figure())
    assert np.abs(np.array(ink_box(ref)) - np.array(ink_box(got))).max() <= 1


def test_text_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(raster, "TEXT_CACHE_ENTRIES", 5)
    raster.clear_text_cache()
    fig, ax = new_figure(figsize=(3.0, 2.0))
    for i in range(40):
        ax.text(0.1, 0.02 * i, f"label {i}")
    raster.CourseCanvasAgg(fig).draw()
    assert raster.text_cache_stats()["entries"] <= 5
    if raster.GLYPH_CACHE:
        assert raster.text_cache_stats()["misses"] >= 40   # the 40 labels and the tick labels


def test_font_height_metrics_match_matplotlib_layout():
    fig = _figure()
    canvas = raster.CourseCanvasAgg(fig)
    canvas.draw()
    ref_canvas = FigureCanvasAgg(_figure())
    ref_canvas.draw()
    ax_ref, ax = ref_canvas.figure.axes[0], canvas.figure.axes[0]
    for t_ref, t in ((ax_ref.title, ax.title), (ax_ref.xaxis.label, ax.xaxis.label)):
        b_ref = t_ref.get_window_extent(ref_canvas.get_renderer())
        b = t.get_window_extent(canvas.get_renderer())
        assert b.bounds == pytest.approx(b_ref.bounds, abs=1e-6)


def test_encode_png_writes_rgb_for_an_opaque_figure_and_rgba_otherwise():
    rgba = np.zeros((20, 30, 4), np.uint8)
    rgba[..., 0] = 200
    rgba[..., 3] = 255
    img = Image.open(io.BytesIO(raster.encode_png(rgba)))
    assert img.mode == "RGB" and img.size == (30, 20)
    assert np.array_equal(np.asarray(img), rgba[..., :3])
    rgba[0, 0, 3] = 10
    img = Image.open(io.BytesIO(raster.encode_png(rgba)))
    assert img.mode == "RGBA" and np.array_equal(np.asarray(img), rgba)


@pytest.mark.parametrize("bad, match", [
    (np.zeros((4, 4, 3), np.uint8), "H x W x 4 uint8"),
    (np.zeros((4, 4, 4), np.float32), "H x W x 4 uint8"),
])
def test_encode_png_rejects_what_is_not_an_agg_buffer(bad, match):
    with pytest.raises(ValueError, match=match):
        raster.encode_png(bad)


def test_encode_png_rejects_a_compress_level_outside_zlib():
    with pytest.raises(ValueError, match=r"compress_level must be in \[0, 9\]"):
        raster.encode_png(np.zeros((2, 2, 4), np.uint8), compress_level=12)


def test_text_extents_are_matplotlibs_and_shared_between_figures():
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    raster.clear_text_cache()
    prop = FontProperties(size=9)
    ref = RendererAgg(300, 200, 100.0)
    a = raster.CachedTextRendererAgg(300, 200, 100.0)
    b = raster.CachedTextRendererAgg(400, 100, 100.0)   # another figure's renderer
    for s in ("pipeline parallel size pp", "10³", "7.30", "OOM\n100"):
        want = ref.get_text_width_height_descent(s, prop, False)
        assert a.get_text_width_height_descent(s, prop, False) == want
        assert b.get_text_width_height_descent(s, prop, False) == want
    assert a.get_text_width_height_descent("x", FontProperties(size=18), False) != \
        a.get_text_width_height_descent("x", prop, False)


def test_without_the_private_api_the_stock_text_path_draws(monkeypatch):
    """matplotlib may rename the private pieces the cache replays (the upper bound in pyproject keeps
    an untested minor out, but a patch release could): then the picture is matplotlib's own. The
    private names are taken away from the cache only (matplotlib's own draw_text uses them too)."""
    class NoLayout:  # an FT2Font without _layout
        _render_glyph = _set_transform = None

    monkeypatch.setattr(raster, "FT2Font", NoLayout)
    assert raster.private_api_available() is False
    monkeypatch.undo()
    monkeypatch.setattr(raster, "RenderMode", None)
    assert raster.private_api_available() is False
    # at draw time: a private name is gone although the import-time check passed
    monkeypatch.setattr(raster, "GLYPH_CACHE", True)
    monkeypatch.setattr(raster, "FALLBACK_REASON", None)
    raster.clear_text_cache()
    ref = _pixels(FigureCanvasAgg, _figure())
    got = _pixels(raster.CourseCanvasAgg, _figure())
    assert raster.GLYPH_CACHE is False and raster.FALLBACK_REASON.startswith("AttributeError")
    assert np.array_equal(got, ref), "the fallback must be exactly matplotlib's own text path"
    assert raster.text_cache_stats()["entries"] == 0


def test_font_metrics_fall_back_when_the_font_manager_changes(monkeypatch):
    """The metrics hook reads fontManager._find_fonts_by_props (private): when that fails it answers
    (None, None, None) and matplotlib measures the font itself; the picture is unchanged."""
    from matplotlib.font_manager import FontProperties

    raster.clear_text_cache()
    ref = _pixels(raster.CourseCanvasAgg, _figure())

    def gone(prop, dpi):
        raise AttributeError("'FontManager' object has no attribute '_find_fonts_by_props'")
    monkeypatch.setattr(raster, "_font_height_metrics", gone)
    raster.clear_text_cache()
    canvas = raster.CourseCanvasAgg(_figure())
    assert canvas.get_renderer()._get_font_height_metrics(FontProperties(size=10)) == (None, None, None)
    assert np.array_equal(_pixels(raster.CourseCanvasAgg, _figure()), ref)
