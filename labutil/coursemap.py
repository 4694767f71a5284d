"""The course map: modules, chapters and prerequisites (data in ``labutil/data/course.toml``).

The figure of the map is ``labutil.explore.overview.course_map_figure``.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import data_files, validate

__all__ = ["Module", "modules", "chapter_titles", "module_of", "prerequisites"]

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
