"""Markdown tables for notebooks: ``show_table(rows)`` renders a list of dicts as a table.

A base-level module (imports nothing from labutil), so models and rule engines (``health``,
``troubleshoot``) can return tables without importing the notebook layer. Chapters import
``show_table`` from ``labutil.notebook``, which re-exports it.

>>> print(show_table([{"gpu": "H100-SXM", "bf16_tflops": 989.4}, {"gpu": "A100-80G-SXM", "bf16_tflops": 312.0}]))
| gpu | bf16_tflops |
|---|---|
| H100-SXM | 989.4 |
| A100-80G-SXM | 312 |
"""

from __future__ import annotations

__all__ = ["MarkdownTable", "show_table"]


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
