"""Notebook set-up used in the first code cell of every chapter and lab."""

from __future__ import annotations

import numpy as np


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


class MarkdownTable(str):
    """A Markdown table that renders as a table in a notebook and prints as text elsewhere."""

    def _repr_markdown_(self) -> str:
        return str(self)


def show_table(rows: list[dict], columns: list[str] | None = None, floatfmt: str = ",.4g") -> MarkdownTable:
    """Render a list of dicts as a Markdown table (put it last in a cell to display it)."""
    if not rows:
        raise ValueError("rows must not be empty")
    columns = columns or list(rows[0])

    def fmt(v):
        if isinstance(v, float):
            return format(v, floatfmt)
        return str(v)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        lines.append("| " + " | ".join(fmt(r.get(c, "")) for c in columns) + " |")
    return MarkdownTable("\n".join(lines))
