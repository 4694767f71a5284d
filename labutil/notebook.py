"""Notebook set-up used in the first code cell of every chapter and lab.

``from labutil.notebook import setup, show_table``: ``setup()`` turns on inline figures and returns
a seeded RNG; ``show_table`` (defined in ``labutil.tables``) renders rows as a Markdown table.
Building and checking the notebooks themselves is ``labutil.nbtools``.
"""

from __future__ import annotations

import numpy as np

from .tables import MarkdownTable, show_table

__all__ = ["setup", "freeze_startup_objects", "show_table", "MarkdownTable"]


def setup(seed: int = 0) -> np.random.Generator:
    """Inline figures, compact numpy printing, and a seeded RNG for reproducible cells."""
    try:
        from IPython import get_ipython

        ip = get_ipython()
        if ip is not None:
            ip.run_line_magic("matplotlib", "inline")
            _fast_figure_display(ip)
    except ImportError:  # pragma: no cover
        pass
    np.set_printoptions(precision=4, suppress=True)
    freeze_startup_objects()
    return np.random.default_rng(seed)


def freeze_startup_objects() -> int:
    """Move what is alive after the imports (modules, matplotlib's and labutil's tables: ~90k objects)
    out of the cyclic garbage collector's sight (``gc.freeze``, Python >= 3.7). They live for the whole
    kernel anyway; without this each full collection scans them again, and one landing while an
    explorer is built or redrawn cost 100-200 ms (benchmarks/bench_explorer_latency.py, gc.callbacks).
    Returns how many objects are frozen."""
    import gc

    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def _fast_figure_display(ip) -> None:
    """A figure at the end of a cell is shown with one Agg draw (``plotting.figure_png``) instead
    of the inline backend's two; this roughly halves what a chapter's figures cost to show."""
    import base64

    from matplotlib.figure import Figure

    from .plotting import figure_png

    def png_b64(fig):
        if not fig.axes and not fig.lines:
            return None  # as the inline backend: an empty figure shows nothing
        return base64.b64encode(figure_png(fig)).decode("ascii")

    ip.display_formatter.formatters["image/png"].for_type(Figure, png_b64)
