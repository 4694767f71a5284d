"""Graded classes (labutil.grading): the chapters' exercises as nbgrader assignments and a learner
build without the answers, checked against the exercise registry and run through real nbgrader.

- Every chapter exports; every hidden autograder test, run with the registry's reference answer,
  passes, and run with a classic slip fails with the self-check's message (never the answer).
- The learner build keeps prompts, units, tolerances and hints and withholds every answer:
  ``solution()``/``expected()``/a non-empty ``check()`` raise AnswerWithheld, and no worked solution
  is in its files.
- nbgrader 0.9 for real (its own environment, tests/classroom/setup_classroom.sh, with the learner
  build as labutil): ``generate_assignment`` (release without solutions or hidden tests),
  ``release_assignment`` -> ``fetch_assignment`` -> ``submit`` -> ``collect`` through an exchange
  folder, ``autograde``, ``export`` and ``generate_feedback``: the right answers score full marks,
  two wrong ones lose exactly their points, and a submission that reads the answers off labutil
  scores nothing.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from labutil import nbtools
from labutil.exercises import chapter_exercises, chapters, exercise
from labutil.grading import AnswerWithheld, autograde
from labutil.grading import export

CLASSROOM_DIR = Path(os.environ.get("LABUTIL_CLASSROOM_DIR", "/tmp/labutil-classroom"))
GRADING_VENV = CLASSROOM_DIR / "venv-graded"
SETUP = ROOT / "tests" / "classroom" / "setup_classroom.sh"


def _hidden(cell_source: str) -> str:
    return cell_source.split("### BEGIN HIDDEN TESTS\n", 1)[1].split("### END HIDDEN TESTS", 1)[0]


def _graded(nb) -> list[tuple[dict, str]]:
    return [(c.metadata["nbgrader"], c.source) for c in nb.cells if "nbgrader" in c.metadata]


# -- the export, checked against the registry ---------------------------------------------------------
def test_every_chapter_exports_and_each_hidden_test_accepts_the_reference_answer():
    n, exported = 0, set()
    for src in [p for p in nbtools.sources() if p.parent.name == "chapters"]:
        nb = export.assignment_notebook(src)
        graded = _graded(nb)
        ids = [m["grade_id"] for m, _s in graded]
        assert len(ids) == len(set(ids)), f"{src.name}: duplicate grade ids"
        keys = [k for _i, k, _v in nbtools.exercise_cells(nbtools.read_source(src))]
        answers = [(m, s) for m, s in graded if m["solution"]]
        tests = [(m, s) for m, s in graded if m["grade"]]
        assert len(answers) == len(tests) == len(keys) > 0
        assert "exercise(" not in "".join(s for _m, s in answers + tests), "no self-check left in graded cells"
        for key, (_m, answer_src), (meta, test_src) in zip(keys, answers, tests):
            assert meta["points"] == export.POINTS and meta["locked"] and meta["grade_id"] == key.replace(".", "_") + "_test"
            var = re.match(r"(answer_\w+) = None", answer_src).group(1)
            solution = answer_src.split("### BEGIN SOLUTION\n", 1)[1].split("\n### END SOLUTION", 1)[0]
            scope: dict = {}
            exec(solution, scope)                           # the instructor's filled-in answer
            assert exercise(key).grade(scope[var]).correct  # ... is right by the self-check
            exec(_hidden(test_src), scope)                  # ... and passes the hidden test
            n += 1
            exported.add(key)
    assert {k.split(".")[0] for k in exported} == set(chapters()), "every chapter with exercises is an assignment"
    assert n == len(exported)


def test_hidden_test_carries_the_registrys_answer_and_tolerances():
    nb = export.assignment_notebook(ROOT / "chapters" / "ch01_intro.py")
    tests = {m["grade_id"]: s for m, s in _graded(nb) if m["grade"]}
    src = tests["ch01_2_test"]
    ex = exercise("ch01.2")
    call = re.search(r"autograde\('ch01\.2', answer_2, ([^,]+), unit='([^']*)', rtol=([^,]+), atol=([^,]+),", src)
    assert call, src
    assert float(call.group(1)) == ex.expected() and call.group(2) == ex.unit
    assert float(call.group(3)) == ex.rtol and float(call.group(4)) == ex.atol
    expected = ex.expected()
    for given, ok in ((expected * (1 + 0.9 * ex.rtol), True), (expected * (1 + 1.1 * ex.rtol), False),
                      (expected * 1000, False), (None, False)):
        scope = {"answer_2": given}
        if ok:
            exec(_hidden(src), scope)
        else:
            with pytest.raises(AssertionError) as info:
                exec(_hidden(src), scope)
            assert f"{expected:.4g}" not in str(info.value), "a wrong answer is never told the answer"
    with pytest.raises(AssertionError, match="差了 1000 倍"):
        exec(_hidden(src), {"answer_2": expected * 1000})


def test_autograde_uses_the_self_checks_rules():
    autograde("x.1", "45 %", 45.0, unit="%", rtol=0.01)                      # percent spelled with %
    autograde("x.2", "memory-bound", "memory", choices=("memory", "compute"),
              synonyms={"memory": ("memory-bound", "访存受限")}, kind="judgement")
    with pytest.raises(AssertionError, match="尚未作答"):
        autograde("x.3", None, 2.4, unit="次/天")
    with pytest.raises(AssertionError, match="差了 100 倍"):
        autograde("x.4", 0.45, 45.0, unit="%", rtol=0.01)                     # a fraction for a percent


# -- the learner build ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def learner_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("learner")
    info = export.learner_build(out)
    assert info["withheld"] == sum(len(chapter_exercises(ch)) for ch in chapters())
    return out


def test_learner_build_withholds_every_answer_and_keeps_the_rest(learner_build):
    pkg = learner_build / "labutil"
    assert not list(pkg.rglob("__pycache__")) and not list(pkg.rglob("*.pyc")), "no compiled answer code"
    assert export._leaks(pkg) == []
    for ch in chapters():
        text = (pkg / "exercises" / f"{ch}.py").read_text(encoding="utf-8")
        assert "lambda" not in text and "import" in text and text.count("answer=withheld(") == len(chapter_exercises(ch))
    probe = r"""
import json, sys
import labutil
from labutil.exercises import chapters, chapter_exercises, exercise
from labutil.grading import AnswerWithheld
out = {"file": labutil.__file__, "exercises": {}}
for ch in chapters():
    for ex in chapter_exercises(ch):
        row = [ex.prompt, ex.unit, ex.rtol, ex.atol, list(ex.hints), list(ex.choices), ex.kind, ex.check(None).status]
        for call in (ex.expected, ex.solution, lambda: ex.check(1.0), ex.answer):
            try:
                call()
                row.append("LEAK")
            except AnswerWithheld:
                row.append("withheld")
        out["exercises"][ex.key] = row
json.dump(out, sys.stdout)
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(learner_build)
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300,
                       cwd=learner_build)
    assert p.returncode == 0, p.stderr[-2000:]
    seen = json.loads(p.stdout.splitlines()[-1])   # check() prints its message outside Jupyter
    assert seen["file"] == str(pkg / "__init__.py")
    full = {ex.key: ex for ch in chapters() for ex in chapter_exercises(ch)}
    assert set(seen["exercises"]) == set(full)
    for key, row in seen["exercises"].items():
        ex = full[key]
        assert row[:7] == [ex.prompt, ex.unit, ex.rtol, ex.atol, list(ex.hints), list(ex.choices), ex.kind], key
        assert row[7] == "empty" and row[8:] == ["withheld"] * 4, (key, row)


def test_cli_errors_are_one_line(tmp_path):
    p = subprocess.run([sys.executable, "-m", "labutil.grading", "assignments", "--out", str(tmp_path / "c"),
                        "--chapters", "ch99", "--nbgrader", "none"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "unknown chapter(s) ['ch99']" in p.stderr
    assert "Traceback" not in p.stderr
    p = subprocess.run([sys.executable, "-m", "labutil.grading", "assignments", "--out", str(tmp_path / "c"),
                        "--chapters", "ch01", "--nbgrader", "none"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0 and "1 assignments with solutions" in p.stdout
    assert (tmp_path / "c" / "source" / "ch01" / "ch01_intro.ipynb").exists()
    assert (tmp_path / "c" / ".gitignore").read_text().splitlines()[-1] == "*"


# -- nbgrader for real ---------------------------------------------------------------------------------
def _nbgrader_env(learner_build: Path, tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "JUPYTER", "VIRTUAL_ENV"))}
    env.update(PATH=f"{GRADING_VENV / 'bin'}:/usr/local/bin:/usr/bin:/bin", PYTHONPATH=str(learner_build),
               JUPYTER_DATA_DIR=str(tmp / "jupyter-data"), JUPYTER_CONFIG_DIR=str(tmp / "jupyter-config"),
               NBGRADER_EXCHANGE=str(tmp / "exchange"))
    return env


def _nbgrader(args: list[str], cwd: Path, env: dict, timeout_s: int = 900) -> str:
    p = subprocess.run([str(GRADING_VENV / "bin" / "nbgrader"), *args], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=timeout_s)
    assert p.returncode == 0, f"nbgrader {' '.join(args)} exited {p.returncode}:\n{(p.stdout + p.stderr)[-4000:]}"
    return p.stdout + p.stderr


def _fill(path: Path, answers: dict[str, str]):
    """A learner's edit: replace `answer_k = None` in the answer cells by the given source text."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        for var, value in answers.items():
            src = re.sub(rf"^{var} = None\b[^\n]*$", f"{var} = {value}", src, flags=re.M)
        cell["source"] = src
    path.write_text(json.dumps(nb, ensure_ascii=False, indent=1), encoding="utf-8")


@pytest.mark.slow
def test_nbgrader_generates_releases_collects_and_autogrades_a_chapter(learner_build, tmp_path):
    if not (GRADING_VENV / "bin" / "nbgrader").exists():
        reason = f"no nbgrader environment at {GRADING_VENV} (bash {SETUP.relative_to(ROOT)} --install)"
        if os.environ.get("LABUTIL_REQUIRE_CLASSROOM") == "1":
            pytest.fail(f"LABUTIL_REQUIRE_CLASSROOM=1 but: {reason}")
        pytest.skip(reason)
    course = tmp_path / "course"
    env = _nbgrader_env(learner_build, tmp_path)
    (tmp_path / "exchange").mkdir()
    (tmp_path / "exchange").chmod(0o777)

    # instructor: export (source with solutions) and generate the release with nbgrader
    p = subprocess.run([sys.executable, "-m", "labutil.grading", "assignments", "--out", str(course), "--chapters",
                        "ch01", "--nbgrader", str(GRADING_VENV / "bin" / "nbgrader")], capture_output=True, text=True,
                       timeout=900, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    released = course / "release" / "ch01" / "ch01_intro.ipynb"
    text = released.read_text(encoding="utf-8")
    assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text and "autograde(" not in text
    keys = [ex.key for ex in chapter_exercises("ch01")]
    right = {f"answer_{k.split('.')[1]}": nbtools.reference_literal(exercise(k)) for k in keys}
    for var, literal in right.items():
        if not literal.startswith("'"):
            assert f"{var} = {literal}" not in text, "the release holds no reference answer"
    assert text.count("= None  # 在这里填入你的答案") == len(keys)

    # the exchange: release -> a learner fetches, answers, submits -> the instructor collects
    _nbgrader(["release_assignment", "ch01", "--force"], course, env)
    student_home = tmp_path / "student"
    student_home.mkdir()
    student_env = {**env, "HOME": str(student_home)}
    exchange = f"--Exchange.root={tmp_path / 'exchange'}"
    _nbgrader(["fetch_assignment", "ch01", "--course", export.COURSE_ID, exchange], student_home, student_env)
    _fill(student_home / "ch01" / "ch01_intro.ipynb", right)
    _nbgrader(["submit", "ch01", "--course", export.COURSE_ID, exchange], student_home, student_env)
    _nbgrader(["collect", "ch01"], course, env)
    (collected,) = [d.name for d in (course / "submitted").iterdir()]

    # two more submissions placed as `collect` does: two slips, and one that reads the answers off labutil
    def submit_as(student: str, answers: dict[str, str]):
        folder = course / "submitted" / student / "ch01"
        folder.mkdir(parents=True)
        shutil.copy(released, folder / "ch01_intro.ipynb")
        _fill(folder / "ch01_intro.ipynb", answers)

    slips = dict(right, answer_2=f"{float(right['answer_2']) * 1000!r}",            # TFLOP/s vs PFLOP/s
                 answer_5=repr("B" if exercise("ch01.5").expected() == "A" else "A"))  # the other plan
    submit_as("learner-slips", slips)
    submit_as("learner-peeks", {f"answer_{k.split('.')[1]}": f"exercise({k!r}).expected()" for k in keys})

    _nbgrader(["autograde", "ch01", "--force"], course, env)
    _nbgrader(["export", "--to", str(tmp_path / "grades.csv")], course, env)
    rows = {r["student_id"]: r for r in csv.DictReader((tmp_path / "grades.csv").open(encoding="utf-8"))}
    max_score = float(rows[collected]["max_score"])
    assert max_score == len(keys) * export.POINTS
    assert float(rows[collected]["score"]) == max_score, "the right answers score full marks"
    assert float(rows["learner-slips"]["score"]) == max_score - 2 * export.POINTS, "two slips lose two points"
    assert float(rows["learner-peeks"]["score"]) == 0, "labutil holds no answers to read in the graded class"

    # feedback: the slip's own message, and no reference value or hidden test in it
    _nbgrader(["generate_feedback", "ch01", "--force"], course, env)
    feedback = (course / "feedback" / "learner-slips" / "ch01" / "ch01_intro.html").read_text(encoding="utf-8")
    assert "差了 1000 倍" in feedback and "AnswerWithheld" not in feedback
    peeks = (course / "feedback" / "learner-peeks" / "ch01" / "ch01_intro.html").read_text(encoding="utf-8")
    assert "AnswerWithheld" in peeks
    # neither the hidden tests' source nor a traceback line shows a reference value (ch01.2's is the
    # one that no chapter output prints: 455.91552 PFLOP/s; the chapter itself shows e.g. ch01.1's 2.4)
    assert "autograde(" not in feedback and "HIDDEN TESTS" not in feedback
    assert repr(exercise("ch01.2").expected()) not in feedback
    assert "GradeError: [ch01.2]" in feedback
