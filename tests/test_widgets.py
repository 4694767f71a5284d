"""The Explorer base: runs the model at construction, redraws on change, surfaces errors."""

import pytest

from labutil import widgets
from labutil.plotting import reset_axes


def _explorer():
    def model(a, b):
        if b == 0:
            raise ValueError("b must be > 0; got 0")
        return {"ratio": a / b}

    def draw(fig, r, values):
        ax = fig.axes[0]
        reset_axes(ax)
        ax.bar(["ratio"], [r["ratio"]])

    controls = {"a": widgets.slider("a", 1.0, 0.0, 10.0, 0.5), "b": widgets.int_slider("b", 2, 0, 10)}
    return widgets.Explorer(controls, model, draw, summary=lambda r, v: f"{r['ratio']:.2f}")


def test_runs_at_construction_and_on_change():
    ex = _explorer()
    assert ex.result == {"ratio": 0.5} and ex.error is None
    ex.controls["a"].value = 4.0
    assert ex.result == {"ratio": 2.0} and ex.n_updates == 1
    ex.set(a=6.0, b=3)
    assert ex.result == {"ratio": 2.0} and ex.n_updates == 2  # one redraw for a batch
    assert ex.figure.axes[0].patches[0].get_height() == pytest.approx(2.0)


def test_model_error_is_kept_and_shown_not_swallowed():
    ex = _explorer()
    ex.controls["b"].value = 0
    assert isinstance(ex.error, ValueError)
    assert ex.result == {"ratio": 0.5}  # last good result kept
    assert "输入无效" in ex._summary.value
    ex.controls["b"].value = 1
    assert ex.error is None and ex.result == {"ratio": 1.0}


def test_error_at_construction_raises():
    with pytest.raises(ValueError):
        widgets.Explorer({"b": widgets.int_slider("b", 0, 0, 3)}, lambda b: 1 / b if b else (_ for _ in ()).throw(ValueError("b")),
                         lambda fig, r, v: None)


def test_unknown_control_in_set():
    with pytest.raises(KeyError):
        _explorer().set(c=1)


def test_pow2_slider_options():
    s = widgets.pow2_slider("n", 64, 8, 1024)
    assert list(s.options) == [8, 16, 32, 64, 128, 256, 512, 1024] and s.value == 64


def test_widget_tree_builds():
    assert _explorer().widget.children


def test_png_is_rasterised_once_per_update_and_sent_when_live():
    ex = _explorer()
    assert ex._image.value == b""  # headless: nothing rasterised until asked
    png = ex.png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and ex.png() is png  # cached until the next update
    box = ex.widget  # displaying makes the explorer live
    assert ex._image in box.children and ex._image.value == png
    ex.controls["a"].value = 9.0
    assert ex._image.value != png and ex._image.value[:4] == b"\x89PNG"
    w, h = ex.figure.get_size_inches() * ex.figure.dpi
    from PIL import Image
    import io
    assert Image.open(io.BytesIO(ex._image.value)).size == (round(w), round(h))


def test_constrained_layout_is_solved_again_only_when_margin_texts_change():
    ex = _explorer()
    ex.png()
    assert ex.n_layouts == 1
    pos = ex.figure.axes[0].get_position().bounds
    ex.set(a=2.0)  # 1.0 -> same tick label widths
    ex.png()
    assert ex.n_layouts == 1 and ex.figure.axes[0].get_position().bounds == pos
    ex.set(a=10.0, b=1)  # ratio 10: y tick labels get wider ("10.0" vs "0.5") -> new layout
    ex.png()
    assert ex.n_layouts == 2


def test_mimebundle_has_the_widget_and_a_static_png():
    data = _explorer()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    import base64
    assert base64.b64decode(data["image/png"])[:4] == b"\x89PNG"


def test_log_tick_labels_are_plain_text():
    from labutil.plotting import mathtext_to_unicode, new_figure, plain_log_labels

    assert mathtext_to_unicode(r"$\mathdefault{10^{3}}$") == "10³"
    assert mathtext_to_unicode(r"$\mathdefault{10^{-12}}$") == "10⁻¹²"
    assert mathtext_to_unicode(r"$\mathdefault{2\times10^{3}}$") == "2×10³"
    assert mathtext_to_unicode(r"$\mathdefault{2^{10}}$") == "2¹⁰"
    assert mathtext_to_unicode(r"$\alpha$") == r"$\alpha$" and mathtext_to_unicode("1,024") == "1,024"
    fig, ax = new_figure()
    ax.loglog([1, 1e4], [1e-3, 1e3])
    plain_log_labels(fig)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.xaxis.get_majorticklabels() if t.get_text()]
    assert "10²" in labels and not any("$" in s for s in labels)
    plain_log_labels(fig)  # idempotent: no double wrapping
    assert not hasattr(ax.xaxis.get_major_formatter().inner, "inner")


def test_figure_png_single_draw_and_tight_fallback():
    import io

    from PIL import Image

    from labutil.plotting import figure_png, new_figure

    fig, ax = new_figure(figsize=(4.0, 3.0))
    ax.semilogy([1, 2, 3], [1, 10, 100])
    png = figure_png(fig)
    assert Image.open(io.BytesIO(png)).size == (400, 300)  # constrained layout: the whole figure, one draw
    fig.text(1.05, 0.5, "sticks out")  # outside the figure: falls back to the tight print, nothing is cut
    wide = Image.open(io.BytesIO(figure_png(fig))).size
    assert wide[0] > 400


def test_setup_registers_the_one_draw_figure_formatter():
    from IPython.core.interactiveshell import InteractiveShell

    from labutil.notebook import _fast_figure_display
    from labutil.plotting import new_figure

    ip = InteractiveShell.instance()
    try:
        _fast_figure_display(ip)  # what setup() does after %matplotlib inline
        fig, ax = new_figure(figsize=(4.0, 3.0))
        ax.plot([0, 1], [0, 1])
        data, _ = ip.display_formatter.format(fig)
        import base64

        assert base64.b64decode(data["image/png"])[:4] == b"\x89PNG"
    finally:
        InteractiveShell.clear_instance()


def test_figure_cache_lives_on_its_figure():
    from labutil.plotting import figure_cache, new_figure

    f1, _ = new_figure()
    f2, _ = new_figure()
    figure_cache(f1)["artists"] = "a"
    assert figure_cache(f1) == {"artists": "a"} and figure_cache(f2) == {}


def test_two_explorers_of_one_kind_keep_their_own_artists():
    """The per-figure artists are not shared between two explorers built by the same function
    (they once were kept in a module dict keyed by id(fig))."""
    from labutil.explore.containers import lint_explorer

    a, b = lint_explorer(), lint_explorer()
    a.set(n_local_ranks=1)
    shm = lambda ex: next(t.get_text() for t in ex.figure.axes[0].texts if "shm" in t.get_text() or "/dev/shm" in t.get_text())  # noqa: E731
    assert "floor" in shm(a) and "8 local ranks" in shm(b)


def test_startup_objects_are_frozen_and_updates_hold_the_collector():
    import gc

    from labutil.notebook import freeze_startup_objects
    from labutil.widgets import gc_deferred

    try:
        assert freeze_startup_objects() > 1000          # the imported modules' objects at least
        assert gc.isenabled()
        with gc_deferred():
            assert not gc.isenabled()                   # no collection while the learner waits
        assert gc.isenabled()
        gc.disable()                                    # a learner's own choice is kept
        with gc_deferred():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_layout_is_solved_again_when_a_move_brings_a_tick_label_into_view():
    """The locator also returns ticks just outside the view; only the drawn ones set the margins.
    Roofline explorer, H100-SXM -> H100-PCIe: the y axis gains the wider label 10⁻¹ at its foot, and
    without a new layout the y label was clipped at the figure's left edge."""
    from labutil.explore.compute import roofline_explorer

    ex = roofline_explorer()
    ex.png()
    x0 = ex.figure.axes[0].get_position().x0
    ex.set(gpu="H100-PCIe")
    ex.png()
    assert ex.n_layouts == 2
    assert ex.figure.axes[0].get_position().x0 > x0  # a wider left margin for the wider tick label
    renderer = ex._canvas.get_renderer()
    assert ex.figure.axes[0].yaxis.label.get_window_extent(renderer).x0 >= 0
