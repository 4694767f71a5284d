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
from typing import Any, Callable, Mapping, Sequence

import ipywidgets as W

from .plotting import new_figure


class Explorer:
    """Controls + model + figure.

    controls: name -> widget; each widget's ``value`` is passed to ``compute`` as keyword ``name``.
    compute:  pure model call ``compute(**values) -> result`` (raise ValueError on bad input).
    draw:     ``draw(fig, result, values)`` redraws the figure from the result.
    summary:  optional ``summary(result, values) -> str`` (HTML) shown above the figure.
    """

    def __init__(self, controls: Mapping[str, W.ValueWidget], compute: Callable[..., Any],
                 draw: Callable[[Any, Any, dict], None], *, summary: Callable[[Any, dict], str] | None = None,
                 title: str = "", figsize=(8.0, 4.5), nrows: int = 1, ncols: int = 1):
        self.controls = dict(controls)
        self.compute = compute
        self.draw = draw
        self.summary = summary
        self.title = title
        self.figure, self.axes = new_figure(nrows, ncols, figsize=figsize)
        self.result: Any = None
        self.error: Exception | None = None
        self.n_updates = 0
        self.last_update_s = 0.0
        self._out = W.Output()
        self._summary = W.HTML()
        self._batch = False
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
                self.controls[k].value = v
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
            self.update()

    # -- view ------------------------------------------------------------------------------
    def _render(self) -> None:
        values = self.values()
        self.draw(self.figure, self.result, values)
        if self.summary is not None:
            self._summary.value = self.summary(self.result, values)
        self._show_figure()

    def _show_figure(self) -> None:
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover
            return
        if get_ipython() is None:
            return  # headless (tests): nothing to display
        from IPython.display import clear_output, display

        with self._out:
            clear_output(wait=True)
            display(self.figure)

    @property
    def widget(self) -> W.Widget:
        header = [W.HTML(f"<b>{html.escape(self.title)}</b>")] if self.title else []
        box = W.GridBox(list(self.controls.values()),
                        layout=W.Layout(grid_template_columns="repeat(2, minmax(260px, 1fr))"))
        return W.VBox(header + [box, self._summary, self._out])

    def _ipython_display_(self):  # pragma: no cover - exercised in notebooks
        from IPython.display import display

        display(self.widget)


# -- control builders: ranges and defaults live in one place, the caller -------------------
_STYLE = {"description_width": "150px"}
_LAYOUT = W.Layout(width="95%")


def slider(description: str, value: float, lo: float, hi: float, step: float, *, fmt: str = ".3g") -> W.FloatSlider:
    return W.FloatSlider(value=value, min=lo, max=hi, step=step, description=description,
                         readout_format=fmt, continuous_update=False, style=_STYLE, layout=_LAYOUT)


def int_slider(description: str, value: int, lo: int, hi: int, step: int = 1) -> W.IntSlider:
    return W.IntSlider(value=value, min=lo, max=hi, step=step, description=description,
                       continuous_update=False, style=_STYLE, layout=_LAYOUT)


def choice_slider(description: str, options: Sequence, value) -> W.SelectionSlider:
    """A slider over explicit values (e.g. powers of two over five orders of magnitude)."""
    return W.SelectionSlider(options=list(options), value=value, description=description,
                             continuous_update=False, style=_STYLE, layout=_LAYOUT)


def pow2_slider(description: str, value: int, lo: int, hi: int) -> W.SelectionSlider:
    opts, v = [], lo
    while v <= hi:
        opts.append(v)
        v *= 2
    return choice_slider(description, opts, value)


def dropdown(description: str, options: Sequence, value) -> W.Dropdown:
    return W.Dropdown(options=list(options), value=value, description=description, style=_STYLE, layout=_LAYOUT)


def toggle(description: str, value: bool) -> W.Checkbox:
    return W.Checkbox(value=value, description=description, style=_STYLE, layout=_LAYOUT)
