"""The Explorer: ipywidgets controls bound to a pure model function, redrawing a figure.

Pattern (see CONTRIBUTING.md, "Explorers"): a chapter's explorer is built by a ``labutil``
function that returns an ``Explorer``; the notebook cell only displays it. The model runs once
at construction, outside any event handler, so a broken model fails the notebook build loudly.
Later updates triggered by a control store ``result`` and ``error`` (the error is shown to the
learner in red instead of being swallowed, as ``ipywidgets.interactive`` would). Tests drive the
controls headlessly (``explorer.set(n_gpus=1024)``) and assert on ``explorer.result``.
"""

from __future__ import annotations

import html
import time
from contextlib import contextmanager
from typing import Any, Callable, Mapping, Sequence

import ipywidgets as W

from .plotting import _RC, new_figure, plain_log_labels

__all__ = ["Explorer", "gc_deferred", "slider", "int_slider", "choice_slider", "pow2_slider", "dropdown", "toggle"]


class Explorer:
    """Controls + model + figure.

    controls: name -> widget; each widget's ``value`` is passed to ``compute`` as keyword ``name``.
    compute:  pure model call ``compute(**values) -> result`` (raise ValueError on bad input).
    draw:     ``draw(fig, result, values)`` redraws the figure from the result.
    summary:  optional ``summary(result, values) -> str`` (HTML) shown above the figure.

    What the learner waits for after moving a control is model + draw + one Agg rasterisation +
    PNG encoding + one binary comm message. The figure is rasterised once per update by the
    explorer's own Agg canvas and sent to an ``ipywidgets.Image`` (not ``display(fig)`` into an
    ``Output``: the inline backend's ``bbox_inches="tight"`` draws the figure twice and the
    Output widget re-creates its output area on every update). The constrained layout is solved
    on the first render and again only when the texts that set the margins change length
    (see :meth:`_layout_key`); PNG is written with zlib level 1 (a few % bigger, 2-3x faster).
    Rasterising is lazy: headless (tests, no display) only the model and the artists are
    updated; :meth:`png` rasterises on demand. Measured in ``benchmarks/bench_explorer_latency.py``.
    """

    #: PNG zlib level: 1 is the fast end (the figure is mostly flat colour, so size barely changes).
    PNG_COMPRESS_LEVEL = 1

    def __init__(self, controls: Mapping[str, W.ValueWidget], compute: Callable[..., Any],
                 draw: Callable[[Any, Any, dict], None], *, summary: Callable[[Any, dict], str] | None = None,
                 title: str = "", figsize=(8.0, 4.5), nrows: int = 1, ncols: int = 1):
        self.controls = dict(controls)
        self.compute = compute
        self.draw = draw
        self.summary = summary
        self.title = title
        self.result: Any = None
        self.error: Exception | None = None
        self.n_updates = 0
        self.last_update_s = 0.0
        self.last_render_s = 0.0
        self.n_layouts = 0
        self._summary = W.HTML()
        self._image = W.Image(format="png", layout=W.Layout(max_width="100%", height="auto"))
        self._canvas = None
        self._layout = None          # _FreezableLayout once the first render has run
        self._layout_key_done = None
        self._png: bytes | None = None
        self._live = False           # True once displayed: every update is rasterised and sent
        self._widget: W.Widget | None = None
        self._batch = False
        with gc_deferred():  # figure, model and first draw: what the learner waits for after running the cell
            self.figure, self.axes = new_figure(nrows, ncols, figsize=figsize)
            # Run once, outside any handler: a model error here must fail loudly.
            self.result = self.compute(**self.values())
            self._render()
        for w in self.controls.values():
            w.observe(self._on_change, names="value")

    # -- state -----------------------------------------------------------------------------
    def values(self) -> dict:
        return {k: w.value for k, w in self.controls.items()}

    def set(self, **values) -> "Explorer":
        """Set several controls at once (one redraw), as a learner would by moving them."""
        unknown = set(values) - set(self.controls)
        if unknown:
            raise KeyError(f"unknown control(s) {sorted(unknown)}; known: {sorted(self.controls)}")
        self._batch = True
        try:
            for k, v in values.items():
                w = self.controls[k]
                if hasattr(w, "options") and v not in _option_values(w.options):
                    raise ValueError(f"control {k!r} ({w.description}) cannot be set to {v!r}; "
                                     f"allowed: {_option_values(w.options)}")
                if isinstance(w, (W.IntSlider, W.FloatSlider)) and not (
                        not isinstance(v, bool) and isinstance(v, (int, float)) and w.min <= v <= w.max):
                    raise ValueError(f"control {k!r} ({w.description}) cannot be set to {v!r}; "
                                     f"allowed: a number in [{w.min:g}, {w.max:g}]")
                w.value = v
        finally:
            self._batch = False
        self.update()
        return self

    def update(self) -> None:
        """Recompute and redraw; on a model error keep the last figure and show the error."""
        t0 = time.perf_counter()
        values = self.values()
        try:
            result = self.compute(**values)
        except (ValueError, KeyError) as exc:
            self.error = exc
            self._summary.value = f"<span style='color:#b00'>输入无效：{html.escape(str(exc))}</span>"
            self.last_update_s = time.perf_counter() - t0
            return
        self.error = None
        self.result = result
        self._render()
        self.n_updates += 1
        self.last_update_s = time.perf_counter() - t0

    def _on_change(self, change) -> None:
        if not self._batch:
            with gc_deferred():  # the new figure is sent before any garbage collection runs
                self.update()

    # -- view ------------------------------------------------------------------------------
    def _render(self) -> None:
        values = self.values()
        import matplotlib as mpl

        with mpl.rc_context(_RC):  # an ``ax.clear()`` inside draw keeps the course style
            self.draw(self.figure, self.result, values)
        if self.summary is not None:
            self._summary.value = self.summary(self.result, values)
        self._png = None
        if self._live:
            self._image.value = self.png()

    def png(self) -> bytes:
        """The current figure as PNG bytes (rasterised once per update, on demand)."""
        if self._png is None:
            t0 = time.perf_counter()
            self._png = self._rasterize()
            self.last_render_s = time.perf_counter() - t0
        return self._png

    def _rasterize(self) -> bytes:
        import numpy as np

        from .raster import CourseCanvasAgg, encode_png

        fig = self.figure
        plain_log_labels(fig)
        if self._canvas is None or fig.canvas is not self._canvas:
            self._canvas = CourseCanvasAgg(fig)
            self._layout = _FreezableLayout.install(fig)
        if self._layout is not None:
            key = _layout_key(fig)
            self._layout.active = key != self._layout_key_done
            if self._layout.active:
                self._layout_key_done = key
                self.n_layouts += 1
        try:
            self._canvas.draw()
        finally:
            if self._layout is not None:
                self._layout.active = False
        return encode_png(np.asarray(self._canvas.buffer_rgba()), self.PNG_COMPRESS_LEVEL)

    @property
    def widget(self) -> W.Widget:
        """The controls, the summary and the figure; from now on every update is sent to it."""
        if self._widget is None:
            header = [W.HTML(f"<b>{html.escape(self.title)}</b>")] if self.title else []
            box = W.GridBox(list(self.controls.values()),
                            layout=W.Layout(grid_template_columns="repeat(2, minmax(260px, 1fr))"))
            self._widget = W.VBox(header + [box, self._summary, self._image])
        if not self._live:
            self._live = True
            with gc_deferred():
                self._image.value = self.png()
        return self._widget

    def _repr_mimebundle_(self, include=None, exclude=None):  # pragma: no cover - exercised in notebooks
        """The live widget for JupyterLab, plus the current figure as PNG for viewers without a
        kernel (a static site, GitHub, exported HTML), which cannot show the widget."""
        import base64

        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data = dict(data)
        data["image/png"] = base64.b64encode(self.png()).decode("ascii")
        data["text/plain"] = f"<{type(self).__name__} {self.title!r}: interactive in JupyterLab>"
        return data


@contextmanager
def gc_deferred():
    """Hold Python's cyclic garbage collector while the learner waits (one build or one update:
    model, draw, PNG, send), and let it run right after. Building a figure allocates tens of
    thousands of objects; a full collection landing in the middle cost 100-200 ms of a 250 ms build
    (benchmarks/bench_explorer_latency.py, measured with gc.callbacks). Reference counting still
    frees everything acyclic at once; a learner's own ``gc.disable()`` is respected."""
    import gc

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _layout_key(fig) -> tuple:
    """What the constrained layout depends on that an update can change: the length of the tick
    labels (width of the y labels, height of the x labels), the line counts of labels and titles,
    and the legends. Tick values moving inside the same label width do not change the margins."""
    key = []
    for ax in fig.axes:
        if not ax.get_visible():
            key.append(None)
            continue
        row = [ax.get_position().bounds if ax.get_axes_locator() else None]
        for axis in (ax.xaxis, ax.yaxis):
            labels = _drawn_tick_labels(axis) if axis.get_visible() else []
            row.append((max((len(s) for s in labels), default=0), max((s.count("\n") for s in labels), default=0),
                        axis.label.get_text().count("\n"), bool(axis.label.get_text())))
        row.append(tuple(t.get_text().count("\n") + 1 if t.get_text() else 0
                         for t in (ax.title, ax._left_title, ax._right_title)))
        leg = ax.get_legend()
        row.append(None if leg is None else (len(leg.texts), max((len(t.get_text()) for t in leg.texts), default=0)))
        key.append(tuple(row))
    for leg in fig.legends:
        key.append((len(leg.texts), max((len(t.get_text()) for t in leg.texts), default=0)))
    sup = getattr(fig, "_suptitle", None)
    key.append(None if sup is None else sup.get_text().count("\n") + 1)
    return tuple(key)


def _drawn_tick_labels(axis) -> list[str]:
    """The major tick labels the axis will draw: those inside the view interval. The locator also
    returns ticks just outside it (``10⁻¹`` below a view that starts at 0.3), which are not drawn and
    do not set the margins; counting them hid a change when a move brought such a label into view
    (the roofline explorer's y label was then clipped at the left edge)."""
    lo, hi = sorted(axis.get_view_interval())
    tol = 1e-9 * max(abs(lo), abs(hi), 1e-300)
    labels = axis.get_majorticklabels()  # updates the labels to the current locator and formatter
    locs = axis.get_majorticklocs()
    return [t.get_text() for loc, t in zip(locs, labels) if lo - tol <= loc <= hi + tol]


class _FreezableLayout:
    """Wraps a figure's ConstrainedLayoutEngine so that ``Figure.draw`` runs it only when asked."""

    @staticmethod
    def install(fig):
        from matplotlib.layout_engine import ConstrainedLayoutEngine

        eng = fig.get_layout_engine()
        if type(eng) is not ConstrainedLayoutEngine:
            return None  # tight/none/custom: leave the figure as its builder made it

        class Switchable(ConstrainedLayoutEngine):
            active = True

            def execute(self, fig):
                if self.active:
                    return super().execute(fig)
                return None

        params = eng.get()
        sw = Switchable(compress=getattr(eng, "_compress", False), **params)
        fig.set_layout_engine(sw)
        return sw


# -- control builders: ranges and defaults live in one place, the caller -------------------
_STYLE = {"description_width": "150px"}
_LAYOUT = W.Layout(width="95%")


def _off_grid(description: str, value, allowed: str) -> ValueError:
    """The one error for a control given a value it cannot show (an explorer builder's keyword argument)."""
    return ValueError(f"control {description!r} cannot be set to {value!r}; allowed: {allowed}")


def _option_values(options) -> list:
    """The values of a widget's options: plain values, (label, value) pairs or a {label: value} mapping."""
    if isinstance(options, Mapping):
        return list(options.values())
    return [o[1] if isinstance(o, tuple) and len(o) == 2 else o for o in options]


def _check_range(description: str, value, lo, hi) -> None:
    # ipywidgets sliders silently clamp an out-of-range value: refuse it instead of showing another setting
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
        raise _off_grid(description, value, f"a number in [{lo:g}, {hi:g}]")


def slider(description: str, value: float, lo: float, hi: float, step: float, *, fmt: str = ".3g") -> W.FloatSlider:
    _check_range(description, value, lo, hi)
    return W.FloatSlider(value=value, min=lo, max=hi, step=step, description=description,
                         readout_format=fmt, continuous_update=False, style=_STYLE, layout=_LAYOUT)


def int_slider(description: str, value: int, lo: int, hi: int, step: int = 1) -> W.IntSlider:
    _check_range(description, value, lo, hi)
    if value != int(value):
        raise _off_grid(description, value, f"an integer in [{lo}, {hi}]")
    return W.IntSlider(value=value, min=lo, max=hi, step=step, description=description,
                       continuous_update=False, style=_STYLE, layout=_LAYOUT)


def choice_slider(description: str, options: Sequence, value) -> W.SelectionSlider:
    """A slider over explicit values (e.g. powers of two over five orders of magnitude)."""
    values = _option_values(options)
    if value not in values:
        raise _off_grid(description, value, values)
    opts = list(options.items()) if isinstance(options, Mapping) else list(options)
    return W.SelectionSlider(options=opts, value=value, description=description,
                             continuous_update=False, style=_STYLE, layout=_LAYOUT)


def pow2_slider(description: str, value: int, lo: int, hi: int) -> W.SelectionSlider:
    """Powers-of-two steps lo, 2·lo, 4·lo, ... <= hi; lo must be an integer >= 1 and hi finite (else no end)."""
    for name, x in (("lo", lo), ("hi", hi)):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or x != x or x in (float("inf"), float("-inf")):
            raise ValueError(f"pow2_slider {description!r}: {name} must be a finite number; got {x!r}")
    if lo < 1 or lo != int(lo):
        raise ValueError(f"pow2_slider {description!r}: lo must be an integer >= 1; got {lo!r}")
    if hi < lo:
        raise ValueError(f"pow2_slider {description!r}: hi must be >= lo = {lo!r}; got {hi!r}")
    opts, v = [], int(lo)
    while v <= hi:
        opts.append(v)
        v *= 2
    return choice_slider(description, opts, value)


def dropdown(description: str, options: Sequence, value) -> W.Dropdown:
    values = _option_values(options)
    if value not in values:
        raise _off_grid(description, value, values)
    opts = list(options.items()) if isinstance(options, Mapping) else list(options)  # {label: value} -> pairs
    return W.Dropdown(options=opts, value=value, description=description, style=_STYLE, layout=_LAYOUT)


def toggle(description: str, value: bool) -> W.Checkbox:
    return W.Checkbox(value=value, description=description, style=_STYLE, layout=_LAYOUT)
