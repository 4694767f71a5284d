"""`make editions`: the learner edition carries no answer, the instructor edition answers every
exercise with the models' reference value, and every checker grades its own solution correct
(and the learner's empty slot as empty)."""

import ast
import json

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import ROOT
from labutil.exercises import exercise, load_all
from labutil.nbtools import INSTRUCTOR_MARK, editions, exercise_cells, sources


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("editions")
    stats = editions(out)
    return out, stats


def _answers(cell_source: str) -> dict[str, object]:
    """{answer variable: literal value} assigned in an exercise cell."""
    out = {}
    for node in ast.parse(cell_source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id.startswith("answer_"):
            out[node.targets[0].id] = ast.literal_eval(node.value)
    return out


def test_both_editions_of_every_notebook(built):
    out, stats = built
    rels = [s.with_suffix(".ipynb").relative_to(ROOT) for s in sources()]
    assert stats["notebooks"] == len(rels) >= 36
    for rel in rels:
        assert (out / "learner" / rel).is_file() and (out / "instructor" / rel).is_file()
    assert (out / "instructor" / "SOLUTIONS.md").read_text(encoding="utf-8").count("参考答案") >= len(load_all())


def test_learner_edition_has_no_answers(built):
    out, _ = built
    n = 0
    for path in (out / "learner").rglob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        text = json.dumps(nb.cells, ensure_ascii=False)
        assert INSTRUCTOR_MARK not in text and ".solution()" not in text, path
        for i, key, var in exercise_cells(nb):
            assert _answers(nb.cells[i].source)[var] is None, (path, key)
            assert exercise(key).grade(None).status == "empty"
            n += 1
    assert n >= 90


def test_every_checker_grades_its_instructor_solution_correct(built):
    out, stats = built
    seen = set()
    for path in (out / "instructor").rglob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        for i, key, var in exercise_cells(nb):
            value = _answers(nb.cells[i].source)[var]
            assert value is not None, (path, key)
            result = exercise(key).grade(value)
            assert result.status == "correct", (path, key, value, result.message)
            # the next cell shows the worked solution
            assert nb.cells[i + 1].source.startswith(f'exercise("{key}").solution()')
            seen.add(key)
    registered = set(load_all())
    assert seen <= registered
    # every registered exercise of a chapter that has a notebook is asked in that notebook
    in_notebooks = {k for k in registered if any(s.name.startswith(k.split(".")[0] + "_") for s in sources())}
    assert in_notebooks - seen == set(), sorted(in_notebooks - seen)


@pytest.mark.slow
def test_instructor_edition_runs_and_shows_correct(built):
    """Executed in a real kernel, each answered cell shows ✓ and its solution cell the reference."""
    out, _ = built
    path = out / "instructor" / "chapters" / "ch01_intro.ipynb"
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT / "chapters")}}).execute()
    cells = exercise_cells(nb)
    assert cells
    for i, key, _var in cells:
        shown = json.dumps(nb.cells[i].outputs, ensure_ascii=False)
        assert "✓" in shown, (key, shown[:500])
        assert "参考答案" in json.dumps(nb.cells[i + 1].outputs, ensure_ascii=False)
