"""Shared figure style and helpers.

Figures are built with ``matplotlib.figure.Figure`` (not pyplot), so building one in a library
function never pops up a second copy in a notebook and works headless in tests. Axis labels are
in English with units (CJK fonts are not guaranteed on a learner's machine); the surrounding
notebook prose is Chinese.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import Formatter, LogFormatterMathtext

__all__ = ["PALETTE", "new_figure", "figure_cache", "reset_axes", "save_png", "mathtext_to_unicode",
           "plain_log_labels", "figure_png", "si_format"]

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf"]

_RC = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    # A fixed title height: matplotlib otherwise measures the axes' tick labels on every draw to
    # lift the title over top-side ticks, which the course's figures never have (~13 % of a redraw).
    "axes.titley": 1.0,
}


def new_figure(nrows: int = 1, ncols: int = 1, figsize=(8.0, 4.5), **subplot_kw):
    """A constrained-layout Figure and its axes (a single Axes when 1x1, else an array)."""
    import matplotlib as mpl

    with mpl.rc_context(_RC):
        fig = Figure(figsize=figsize, layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=True, subplot_kw=subplot_kw or None)
    for ax in np.atleast_1d(axes).ravel():
        _style(ax)
    return fig, axes


def _style(ax) -> None:
    ax.grid(True, alpha=0.3)
    for side in ("top", "right"):
        if side in ax.spines:
            ax.spines[side].set_visible(False)


def figure_cache(fig) -> dict:
    """A dict that lives and dies with ``fig``: the artists an explorer's draw keeps between updates.

    Not a module-level dict keyed by ``id(fig)``: that keeps every figure ever drawn alive (and makes
    each garbage collection slower), and once a figure is freed and its id reused it hands the new
    figure the old one's artists, so the new figure stays blank."""
    cache = getattr(fig, "_course_artists", None)
    if cache is None:
        cache = {}
        fig._course_artists = cache
    return cache


def reset_axes(ax) -> None:
    """Clear an axes for a redraw and re-apply the course style."""
    ax.clear()
    _style(ax)


def save_png(fig: Figure, path, dpi: int = 110) -> Path:
    """Render a figure to PNG (used by tests and by authors to look at figures)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path


_SUPERSCRIPT = str.maketrans("0123456789-", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b")
_MATH_POWER = re.compile(r"^(?P<sign>-?)(?:(?P<coeff>[0-9.]+)\\times)?(?P<base>[0-9.]+|e)\^\{(?P<exp>-?[0-9]+)\}$")


def mathtext_to_unicode(label: str) -> str:
    """``$\\mathdefault{2\\times10^{-3}}$`` -> ``2×10⁻³``: the same tick label without mathtext.

    Matplotlib's log-axis labels are mathtext, and parsing one costs 5-30 ms (pyparsing) the
    first time a label is seen; an explorer that moves across decades pays that on every update.
    The Unicode form renders with the ordinary text path (DejaVu Sans has the superscripts).
    Labels this does not recognise are returned unchanged.
    """
    if len(label) < 2 or label[0] != "$" or label[-1] != "$":
        return label
    body = label[1:-1]
    if body.startswith("\\mathdefault{") and body.endswith("}"):
        body = body[len("\\mathdefault{"):-1]
    m = _MATH_POWER.match(body)
    if m is None:
        return label if "\\" in body or "^" in body or "{" in body else body
    coeff = f"{m['coeff']}\u00d7" if m["coeff"] else ""
    return f"{m['sign']}{coeff}{m['base']}{m['exp'].translate(_SUPERSCRIPT)}"


class _PlainTextLogFormatter(Formatter):
    """Wraps a log-axis mathtext formatter; same ticks and labels, plain text (see above)."""

    def __init__(self, inner):
        self.inner = inner

    def set_axis(self, axis):
        self.axis = axis
        self.inner.set_axis(axis)

    def set_locs(self, locs):
        self.inner.set_locs(locs)

    def __call__(self, x, pos=None):
        return mathtext_to_unicode(self.inner(x, pos))

    def format_ticks(self, values):
        self.set_locs(values)
        return [self(v, i) for i, v in enumerate(values)]

    def format_data(self, value):
        return self.inner.format_data(value)

    def format_data_short(self, value):
        return self.inner.format_data_short(value)

    def get_offset(self):
        return self.inner.get_offset()


def plain_log_labels(fig: Figure) -> None:
    """Give every log axis of ``fig`` plain-text tick labels (idempotent; call before drawing)."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for get, set_ in ((axis.get_major_formatter, axis.set_major_formatter),
                              (axis.get_minor_formatter, axis.set_minor_formatter)):
                f = get()
                if isinstance(f, LogFormatterMathtext):
                    set_(_PlainTextLogFormatter(f))


def figure_png(fig: Figure, compress_level: int = 1) -> bytes:
    """PNG of a figure as a notebook shows it, with one Agg draw instead of the inline backend's two.

    The inline backend prints with ``bbox_inches="tight"``, which draws the figure once to measure
    it and once more to render it. The course's figures use constrained layout, so the tight box
    almost always lies inside the figure already: draw once, check the box (cheap after a draw:
    text metrics are cached), and only when something sticks out fall back to the tight print.
    Log-axis labels are made plain text first (:func:`plain_log_labels`).
    """
    import io

    from .raster import CourseCanvasAgg, encode_png

    plain_log_labels(fig)
    canvas = fig.canvas if isinstance(fig.canvas, CourseCanvasAgg) else CourseCanvasAgg(fig)
    canvas.draw()
    bb = fig.get_tightbbox(canvas.get_renderer())
    w, h = fig.get_size_inches()
    tol = 0.01  # inches
    if bb is not None and (bb.x0 < -tol or bb.y0 < -tol or bb.x1 > w + tol or bb.y1 > h + tol):
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight", facecolor=fig.get_facecolor())
        return buf.getvalue()
    return encode_png(np.asarray(canvas.buffer_rgba()), compress_level)


def si_format(x: float, unit: str = "") -> str:
    """Format 1.25e6 as '1.25M' (decimal prefixes) for annotations."""
    for div, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.3g}{prefix}{unit}"
    return f"{x:.3g}{unit}"
