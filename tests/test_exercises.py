"""Every registered exercise grades its own answer correct, an empty answer 'empty', a wrong one 'wrong'."""

import math

import pytest

from labutil.exercises import Exercise, exercise, load_all

ALL = load_all()


def test_registry_is_not_empty():
    assert ALL, "no exercises registered"


@pytest.mark.parametrize("key", sorted(ALL))
def test_exercise_grades(key, capsys):
    ex = exercise(key)
    expected = ex.expected()
    assert ex.check(expected).correct
    assert ex.grade(None).status == "empty"
    assert "尚未作答" in capsys.readouterr().out + ex.grade(None).message
    if isinstance(expected, str):
        wrong = "definitely-not-" + expected
    else:
        assert math.isfinite(expected)
        wrong = expected * 1.5 if expected != 0 else 1.0
    assert ex.grade(wrong).status == "wrong"
    assert ex.hints, f"{key} has no hints"
    assert ex.prompt and ex.solution_text, f"{key} lacks a prompt or a worked solution"


def test_tolerance_and_invalid_input(capsys):
    ex = Exercise(key="t.1", prompt="p", answer=lambda: 100.0, rtol=0.05, hints=("h",), solution_text="s")
    assert ex.grade(104).correct and ex.grade(96).correct
    assert ex.grade(106).status == "wrong"
    assert ex.grade("abc").status == "invalid"
    assert ex.grade(float("nan")).status == "invalid"
    assert ex.grade("").status == "empty"
    ex.hint(5)
    assert "提示 1/1" in capsys.readouterr().out


def test_choice_exercise():
    ex = Exercise(key="t.2", prompt="p", answer=lambda: "network", hints=("h",), solution_text="s")
    assert ex.grade("Network ").correct and ex.grade("gpu").status == "wrong"


def test_unknown_exercise_key():
    with pytest.raises(KeyError):
        exercise("ch99.9")


def test_solutions_view_runs(capsys):
    from labutil.exercises.__main__ import main

    assert main(["--solutions", "ch01"]) == 0
    assert "参考答案" in capsys.readouterr().out
