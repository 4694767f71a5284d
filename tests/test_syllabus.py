"""The syllabus that ships with the course is current, and no tracked file cites a file that does not ship."""

import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from labutil import coursemap, syllabus


def test_committed_syllabus_is_generated_from_the_sources():
    assert syllabus.SYLLABUS.read_text(encoding="utf-8") == syllabus.syllabus_markdown(), (
        "docs/SYLLABUS.md is out of date: run `python -m labutil.syllabus` (make syllabus)")


def test_syllabus_lists_every_chapter_and_lab_with_its_objectives():
    text = syllabus.syllabus_markdown()
    for m in coursemap.modules():
        assert f"## 模块{m.id}：{m.title_zh}（{m.title_en}）" in text
    for c in range(1, 31):
        assert f"### 第{c}章 " in text
    assert text.count("### 实验 ") == len(list((ROOT / "labs").glob("lab[0-9][0-9]_*.py"))) == 6
    ch1 = syllabus.read_intro(next((ROOT / "chapters").glob("ch01_*.py")))
    assert ch1.title.startswith("第1章") and len(ch1.objectives) >= 3
    assert all(f"- {o}" in text for o in ch1.objectives)
    for title in syllabus.SEED_COURSES:                       # the seed courses, by title only
        assert title in text


def test_read_intro_joins_wrapped_items_and_refuses_a_missing_section(tmp_path):
    src = tmp_path / "ch99_x.py"
    src.write_text("# %% [markdown]\n# # 第99章 标题\n#\n# > 模块说明，\n# > 第二行。\n#\n# ## 学习目标\n#\n"
                   "# - 第一条，很长\n#   接着写；\n# - second item with `code`\n#   continued\n\n# %%\nx = 1\n",
                   encoding="utf-8")
    intro = syllabus.read_intro(src)
    assert intro.title == "第99章 标题" and intro.note == "模块说明，第二行。"
    assert intro.objectives == ["第一条，很长接着写。", "second item with `code` continued。"]
    src.write_text("# %% [markdown]\n# # 第99章 标题\n", encoding="utf-8")
    with pytest.raises(ValueError, match="学习目标"):
        syllabus.read_intro(src)


def _tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        files = [ROOT / f for f in out.splitlines()]
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [f for f in files if f.suffix in {".py", ".md", ".ipynb", ".toml", ".yml", ".yaml", ".cfg", ".txt", ".sh",
                                             ".sbatch", ".def", ""} and f.is_file()]


def test_no_tracked_file_cites_a_file_that_does_not_ship():
    """The course ships without the authors' planning notes: cite the seed courses by title, public
    sources by URL, and the syllabus as docs/SYLLABUS.md."""
    needles = ("shared/seeds", "COURSE_PLAN", "ECOSYSTEM_NOTES", "STYLE_ANCHORS", "../shared/")
    bad = []
    for f in _tracked_text_files():
        if f.name == "test_syllabus.py":
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        bad += [f"{f.relative_to(ROOT)}: {n}" for n in needles if n in text]
    assert not bad, bad
