"""Issue 17 (exercises): a wrong choice is told why, with the model's numbers; no input crashes a check
(robustness review R6 and its 'Minor' list: huge ints, key echo, case-folding)."""

import math
import re

import numpy as np
import pytest

from labutil.exercises import Exercise, ExerciseKeyError, exercise, load_all
from tests.test_exercises import leaks

ALL = load_all()
JUDGEMENT = sorted(k for k, e in ALL.items() if e.kind == "judgement")
CHOICE = sorted(k for k, e in ALL.items() if e.choices)


def test_every_judgement_exercise_explains_its_wrong_options():
    missing = [k for k in JUDGEMENT if ALL[k].explain is None]
    assert not missing, f"judgement exercises without explain=: {missing}"


@pytest.mark.parametrize("key", CHOICE)
def test_a_wrong_option_is_told_why_with_numbers_and_no_answer(key):
    ex = ALL[key]
    expected = ex.expected()
    for option in ex.choices:
        if option == expected:
            assert ex.why(option) == ""          # the right option has nothing to explain
            continue
        reason = ex.why(option)
        if ex.explain is None:
            continue
        assert reason and re.search(r"\d", reason), (key, option, reason)   # the deciding numbers
        assert "\n" not in reason
        res = ex.grade(option)
        assert res.status == "wrong" and f"「{option}」不对：" in res.message, res.message
        assert "不是模型给出的答案" not in res.message
        assert not leaks(res.message, ex, expected, option), (key, option, res.message)
        # a synonym of the wrong option gets the same reason
        for spelling in ex.accepted_spellings()[option][1:]:
            assert ex.why(spelling) == reason


def test_explain_that_fails_falls_back_to_the_plain_message():
    def broken(option):
        raise RuntimeError("model changed")

    ex = Exercise(key="t.j", prompt="p", answer=lambda: "a", choices=("a", "b"), kind="judgement", explain=broken,
                  hints=("h",), solution_text="s")
    res = ex.grade("b")
    assert res.status == "wrong" and "不是模型给出的答案" in res.message
    assert ex.why("nonsense") == "" and ex.why(None) == ""
    with pytest.raises(ValueError, match="explain"):
        Exercise(key="t.k", prompt="p", answer=lambda: 1.0, explain=broken)


HUGE = [10**400, -10**400, 10**5000, float("inf"), -float("inf"), float("nan"), np.float64("inf"), "1e999", "9" * 5000]


@pytest.mark.parametrize("key", sorted(ALL))
def test_huge_or_invalid_numbers_never_crash_a_check(key):
    ex = ALL[key]
    for given in HUGE:
        res = ex.grade(given)
        assert res.status in ("invalid", "wrong"), (key, given, res.message)
        assert len(res.message) < 600 and "Traceback" not in res.message
        if isinstance(given, int) or (isinstance(given, float) and math.isinf(given)):
            assert res.status == "invalid" and ("太大" in res.message or "无穷" in res.message), (key, res.message)


def test_r6_reproduction():
    """robustness.md R6: exercise('ch01.5').check(10**400) raised OverflowError."""
    res = exercise("ch01.5").check(10**400)
    assert res.status == "invalid" and "太大" in res.message
    assert exercise("ch04.5").grade(4096).correct and exercise("ch04.5").grade(4096.0).correct


@pytest.mark.parametrize("spelling", ["CH01.1", " ch01.1 ", "Ch01.1", "ｃｈ０１．１", "ch01。1"])
def test_keys_are_case_and_width_folded(spelling):
    assert exercise(spelling) is exercise("ch01.1")


def test_long_keys_are_cut_in_the_message():
    with pytest.raises(ExerciseKeyError) as info:
        exercise("a" * 10000)
    text = info.value._render_traceback_()[0]
    assert len(text) < 300 and "…" in text
    hint = exercise("ch01.1").hint("x" * 10000)
    assert len(hint) < 200
    res = exercise("ch01.5").grade("y" * 10000)
    assert res.status == "wrong" and len(res.message) < 600
