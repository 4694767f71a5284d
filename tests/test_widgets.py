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
