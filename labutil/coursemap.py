"""The course map: modules, chapters and prerequisites (data in ``labutil/data/course.toml``)."""

from __future__ import annotations

from dataclasses import dataclass

from . import data_files, validate
from .plotting import new_figure

PHASE_COLORS = {"design": "#1f77b4", "deploy/verify": "#2ca02c", "operate": "#d62728"}


@dataclass(frozen=True)
class Module:
    id: int
    title_zh: str
    title_en: str
    phase: str
    chapters: tuple[int, ...]
    requires: tuple[int, ...]


def _data() -> dict:
    return data_files.load("course.toml")


def modules() -> list[Module]:
    return [Module(m["id"], m["title_zh"], m["title_en"], m["phase"], tuple(m["chapters"]), tuple(m["requires"]))
            for m in _data()["module"]]


def chapter_titles() -> dict[int, str]:
    return {int(k): v for k, v in _data()["chapters"].items()}


def module_of(chapter: int) -> Module:
    chapter = validate.integer("chapter", chapter, lo=1, hi=30)
    for m in modules():
        if chapter in m.chapters:
            return m
    raise ValueError(f"chapter {chapter} is in no module")  # pragma: no cover - data invariant


def prerequisites(module_id: int) -> set[int]:
    """All modules that must come before ``module_id`` (transitive closure of ``requires``)."""
    by_id = {m.id: m for m in modules()}
    if module_id not in by_id:
        raise validate.unknown_name("module", str(module_id), [str(i) for i in by_id])
    seen: set[int] = set()
    stack = list(by_id[module_id].requires)
    while stack:
        m = stack.pop()
        if m not in seen:
            seen.add(m)
            stack.extend(by_id[m].requires)
    return seen


def course_map_figure(highlight_chapter: int | None = None):
    """The six modules as boxes (chapters listed inside), arrows for prerequisites."""
    mods = modules()
    titles = chapter_titles()
    depth = {}
    for m in mods:  # columns by dependency depth (modules are listed after their prerequisites)
        depth[m.id] = 0 if not m.requires else 1 + max(depth[r] for r in m.requires)
    n_cols = max(depth.values()) + 1
    fig, ax = new_figure(figsize=(14, 6.4))
    ax.set_axis_off()
    ax.set_xlim(0, 0.2 + n_cols * 3.0)
    ax.set_ylim(-0.4, 7)
    cols: dict[int, list[Module]] = {}
    for m in mods:
        cols.setdefault(depth[m.id], []).append(m)
    pos = {}
    w, h = 2.8, 2.9
    for d, ms in cols.items():
        x = 0.2 + d * 3.0
        for i, m in enumerate(ms):
            y = 3.6 - h / 2 if len(ms) == 1 else (6.95 - h) - i * (h + 0.35)
            pos[m.id] = (x, y)
    for m in mods:
        x, y = pos[m.id]
        color = PHASE_COLORS.get(m.phase, "#7f7f7f")
        ax.add_patch(_box(x, y, w, h, color))
        ax.text(x + 0.1, y + h - 0.12, f"M{m.id} {m.title_en}", fontsize=8.2, fontweight="bold", va="top", color=color)
        for j, c in enumerate(m.chapters):
            bold = "bold" if c == highlight_chapter else "normal"
            ax.text(x + 0.15, y + h - 0.5 - j * 0.36, f"ch{c:02d} {titles[c]}", fontsize=7.2, va="top", fontweight=bold)
    for m in mods:
        # draw the transitive reduction only: an edge implied by another path is left out
        implied = set().union(*(prerequisites(r) for r in m.requires)) if m.requires else set()
        for r in m.requires:
            if r in implied:
                continue
            (x0, y0), (x1, y1) = pos[r], pos[m.id]
            ax.annotate("", xy=(x1, y1 + h / 2), xytext=(x0 + w, y0 + h / 2),
                        arrowprops=dict(arrowstyle="->", color="#555", lw=1.0, shrinkA=2, shrinkB=2,
                                        connectionstyle="arc3,rad=0.05"))
    handles = [_box(0, 0, 1, 1, c) for c in PHASE_COLORS.values()]
    ax.legend(handles, [f"phase: {p}" for p in PHASE_COLORS], loc="lower right", fontsize=8, frameon=False, ncol=3)
    ax.set_title("Course map: 6 modules, 30 chapters (arrows = direct prerequisites)")
    return fig


def _box(x, y, w, h, color):
    from matplotlib.patches import FancyBboxPatch

    return FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08", facecolor=color + "14",
                          edgecolor=color, lw=1.4)
