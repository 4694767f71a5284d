"""Shared figure style and helpers.

Figures are built with ``matplotlib.figure.Figure`` (not pyplot), so building one in a library
function never pops up a second copy in a notebook and works headless in tests. Axis labels are
in English with units (CJK fonts are not guaranteed on a learner's machine); the surrounding
notebook prose is Chinese.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

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


def si_format(x: float, unit: str = "") -> str:
    """Format 1.25e6 as '1.25M' (decimal prefixes) for annotations."""
    for div, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.3g}{prefix}{unit}"
    return f"{x:.3g}{unit}"
