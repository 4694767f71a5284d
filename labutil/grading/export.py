"""Export the chapters' exercises as an nbgrader course, and write the learner build of labutil.

``python -m labutil.grading assignments --out assignments`` (``make assignments``) writes::

    assignments/
      nbgrader_config.py          course id, the answer stub, a generous execution timeout
      source/chNN/chNN_slug.ipynb one assignment per chapter: the chapter notebook with each exercise
                                  as an autograded answer cell (solution region) + a graded test
                                  cell (visible check + hidden autograder test)
      release/chNN/...            written by `nbgrader generate_assignment` when nbgrader is there
      .gitignore                  everything here is generated

``python -m labutil.grading learner-build --out DIR`` writes ``DIR/labutil`` (plus the
``pyproject.toml``/``README.md`` beside it, so ``pip install DIR`` works): the package with every
chapter exercise module replaced by its withheld version (see :mod:`labutil.grading`).
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import labutil

from .. import exercises as _exercises
from .. import nbtools
from ..exercises import chapter_exercises, chapters, exercise

__all__ = ["COURSE_ID", "POINTS", "PACKAGE", "CODE_STUB", "SCHEMA_VERSION", "NBGRADER_CONFIG", "graded_cells",
           "assignment_notebook", "write_course", "release", "learner_build"]

COURSE_ID = "gpu-cluster-course"
POINTS = 1                 # per exercise; instructors change it in the source notebooks
PACKAGE = Path(labutil.__file__).resolve().parent
CODE_STUB = "# ↑ 答案填进上一行的 answer 变量（YOUR ANSWER ABOVE）"
SCHEMA_VERSION = 3         # nbgrader's cell metadata schema (nbgrader 0.9)

NBGRADER_CONFIG = '''"""nbgrader configuration of the graded course (written by `python -m labutil.grading assignments`)."""
import os

c = get_config()  # noqa: F821 - provided by nbgrader
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = {course_id!r}
# the release keeps the learner's `answer_k = None` line; the solution region becomes this comment
c.ClearSolutions.code_stub = {{"python": {code_stub!r}}}
c.ClearSolutions.text_stub = "在这里写你的答案（YOUR ANSWER HERE）"
# autograde runs whole chapters (explorers included): seconds per cell, minutes on a busy machine
c.Execute.timeout = 600
# feedback without the hidden tests' source (it holds the reference values); their verdicts stay
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
# the exchange (release/fetch/submit/collect) on a shared file system; on Kubernetes a shared
# volume mounted there in every server, or nbexchange (classroom/README.md)
c.Exchange.root = os.environ.get("NBGRADER_EXCHANGE", "/srv/nbgrader/exchange")
'''


def _meta(grade_id: str, *, solution: bool, grade: bool, locked: bool, points: float = 0) -> dict:
    meta = {"schema_version": SCHEMA_VERSION, "grade_id": grade_id, "solution": solution, "grade": grade,
            "locked": locked, "task": False}
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


def _literal(value) -> str:
    return repr(value) if isinstance(value, str) else repr(float(value))


def graded_cells(key: str, var: str, points: float = POINTS) -> list:
    """The answer cell (with the solution region) and the graded test cell of exercise ``key``."""
    import nbformat

    ex = exercise(key)
    expected = ex.expected()
    grade_id = key.replace(".", "_")
    unit = f"（单位：{ex.unit}）" if ex.unit else ""
    answer = nbformat.v4.new_code_cell(
        f"{var} = None  # 在这里填入你的答案{unit}\n"
        "### BEGIN SOLUTION\n"
        f"{var} = {nbtools.reference_literal(ex)}\n"
        "### END SOLUTION")
    answer.metadata.update(_meta(f"{grade_id}_answer", solution=True, grade=False, locked=False))
    options = dict(unit=ex.unit, rtol=ex.rtol, atol=ex.atol, choices=tuple(ex.choices),
                   synonyms={k: tuple(v) for k, v in dict(ex.synonyms).items()}, kind=ex.kind)
    test = nbformat.v4.new_code_cell(
        f"# 自动评分 {key}（{points:g} 分）：提交后由讲师运行隐藏测试，判分规则与课程自检相同\n"
        f'assert {var} is not None, "{key}：还没有作答，把答案填进 {var}"\n'
        "### BEGIN HIDDEN TESTS\n"
        "from labutil.grading import autograde\n"
        f"autograde({key!r}, {var}, {_literal(expected)}, "
        + ", ".join(f"{k}={v!r}" for k, v in options.items()) + ")\n"
        "### END HIDDEN TESTS")
    test.metadata.update(_meta(f"{grade_id}_test", solution=False, grade=True, locked=True, points=points))
    return [answer, test]


def assignment_notebook(source: Path, points: float = POINTS):
    """Chapter ``source`` (py:percent) as an nbgrader source notebook (solutions, hidden tests)."""
    import nbformat

    nb = nbtools.read_source(Path(source))
    found = {i: (key, var) for i, key, var in nbtools.exercise_cells(nb)}
    if not found:
        raise ValueError(f"{source}: no exercise cells (`answer_k = None` + `exercise(...).check(answer_k)`)")
    cells = []
    for i, cell in enumerate(nb.cells):
        if i not in found:
            cells.append(cell)
            continue
        key, var = found[i]
        rest = [ln for ln in cell.source.splitlines()
                if ln.strip() and not re.match(rf"\s*{re.escape(var)}\s*=\s*None\b", ln) and ".check(" not in ln]
        if rest:
            raise ValueError(f"{source}: exercise cell {key} holds more than the answer and its check: {rest}")
        cells += graded_cells(key, var, points)
    chapter = Path(source).stem.split("_", 1)[0]
    n = len(found)
    head = nbformat.v4.new_markdown_cell(
        f"> **评分作业 {chapter}**（{n} 题，每题 {points:g} 分，共 {n * points:g} 分）\n"
        ">\n"
        "> 这是本章的评分版：把答案填进每道练习的 `answer_k` 变量（单位见题目；比例一律填百分数，45 % 填 45），"
        "运行全部单元格后保存并提交。评分课堂里 `exercise(...).check(...)` 不判对错、`solution()` 不可用，"
        "`exercise(...).hint(1)` 照常可用；提交后由讲师用 nbgrader 自动评分，判分规则（单位、容差、可接受的写法）"
        "与自学版的自检相同。提交前可在 Assignments 面板点 Validate，检查每题都已作答。")
    head.metadata.update(_meta(f"{chapter}_instructions", solution=False, grade=False, locked=True))
    nb.cells = [head] + cells
    return nb


def _chapter_sources(wanted: list[str] | None) -> dict[str, Path]:
    by_chapter = {p.stem.split("_", 1)[0]: p for p in nbtools.sources() if p.parent.name == "chapters"}
    if not wanted:
        return dict(sorted(by_chapter.items()))
    unknown = sorted(set(wanted) - set(by_chapter))
    if unknown:
        raise KeyError(f"unknown chapter(s) {unknown}; chapters: {min(by_chapter)}..{max(by_chapter)}")
    return {ch: by_chapter[ch] for ch in wanted}


def write_course(out: Path, wanted: list[str] | None = None, points: float = POINTS) -> dict:
    """nbgrader course directory ``out`` with source/ (solutions); returns {assignment: notebook}."""
    import nbformat

    out = Path(out)
    sources = _chapter_sources(wanted)
    out.mkdir(parents=True, exist_ok=True)
    (out / ".gitignore").write_text("# written by python -m labutil.grading assignments\n*\n", encoding="utf-8")
    (out / "nbgrader_config.py").write_text(NBGRADER_CONFIG.format(course_id=COURSE_ID, code_stub=CODE_STUB),
                                            encoding="utf-8")
    written = {}
    for chapter, src in sources.items():
        folder = out / "source" / chapter
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        path = folder / f"{src.stem}.ipynb"
        nbformat.write(assignment_notebook(src, points), path)
        written[chapter] = path
    return written


def release(out: Path, assignments: list[str], nbgrader: str = "nbgrader", timeout_s: float = 600) -> list[str]:
    """`nbgrader generate_assignment` for each assignment (cwd = the course): release/ without solutions."""
    done = []
    # nbgrader runs its environment's `alembic` to create the gradebook: its bin/ first on PATH
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(nbgrader).parent), os.environ.get("PATH", "")]))
    for name in assignments:
        proc = subprocess.run([nbgrader, "generate_assignment", name, "--force"], cwd=out, capture_output=True,
                              text=True, timeout=timeout_s, env=env)
        if proc.returncode != 0:
            errors = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "ERROR" in ln or "Error" in ln]
            raise RuntimeError(f"nbgrader generate_assignment {name} failed (exit {proc.returncode}): "
                               + " | ".join(errors[:3] or (proc.stdout + proc.stderr).strip().splitlines()[-1:]))
        done.append(name)
    return done


# -- the learner build -----------------------------------------------------------------------------
def _stub_module(chapter: str) -> str:
    module = importlib.import_module(f"{_exercises.__name__}.{chapter}")
    title = (module.__doc__ or f"{chapter} exercises").strip().splitlines()[0]
    lines = [f'"""{title} -- graded-class learner build.', "",
             "Generated by `python -m labutil.grading learner-build`: prompts, units, tolerances, choices and",
             "hints only; the reference answers and worked solutions are withheld (labutil.grading).", '"""', "",
             "from ..grading import withheld", "from . import Exercise, register", ""]
    for ex in chapter_exercises(chapter):
        fields = dict(key=ex.key, prompt=ex.prompt, unit=ex.unit, rtol=ex.rtol, atol=ex.atol,
                      hints=tuple(ex.hints), choices=tuple(ex.choices),
                      synonyms={k: tuple(v) for k, v in dict(ex.synonyms).items()}, kind=ex.kind)
        args = ",\n    ".join(f"{k}={v!r}" for k, v in fields.items())
        lines += [f"register(Exercise(\n    {args},\n    answer=withheld({ex.key!r}),\n))", ""]
    return "\n".join(lines)


def learner_build(out: Path) -> dict:
    """Copy labutil to ``out/labutil`` with every chapter exercise module withheld; returns a summary."""
    out = Path(out)
    target = out / "labutil"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo"))
    for name in ("pyproject.toml", "README.md"):
        if (PACKAGE.parent / name).exists():
            shutil.copy2(PACKAGE.parent / name, out / name)
    withheld_keys = []
    for chapter in chapters():
        module = importlib.import_module(f"{_exercises.__name__}.{chapter}")
        rel = Path(module.__file__).resolve().relative_to(PACKAGE)
        (target / rel).write_text(_stub_module(chapter), encoding="utf-8")
        withheld_keys += [ex.key for ex in chapter_exercises(chapter)]
    leaks = _leaks(target)
    if leaks:
        raise RuntimeError(f"learner build still holds worked solutions: {leaks[:3]}")
    return {"out": str(out), "withheld": len(withheld_keys), "chapters": len(chapters())}


def _leaks(target: Path) -> list[str]:
    """Files of a learner build that contain any exercise's worked solution text."""
    texts = [(ex.key, ex.solution_body().strip()) for ch in chapters() for ex in chapter_exercises(ch)
             if len(ex.solution_body().strip()) >= 12]
    found = []
    for path in target.rglob("*.py"):
        body = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(target)}: {key}" for key, text in texts if text in body]
    return found
