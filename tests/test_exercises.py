"""Every registered exercise: its own answer grades correct, None 'empty', a wrong answer 'wrong',
and the feedback teaches without giving the reference value away (see also test_exercise_leak.py)."""

import html
import re

import pytest

from labutil.exercises import (PERCENT_CONVENTION, CheckResult, Exercise, ExerciseKeyError, chapters, exercise,
                               load_all)

ALL = load_all()


def numbers_in(text: str) -> list[float]:
    """Every number written in ``text`` (commas allowed), after removing the exercise key and hint pointers."""
    text = html.unescape(text)
    text = re.sub(r"\[ch\d+\.\d+\]", "", text)
    text = re.sub(r'exercise\("ch\d+\.\d+"\)\.hint\(1\)(（共 \d+ 条，编号 1–\d+）)?', "", text)
    out = []
    for tok in re.findall(r"\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?", text):
        try:
            out.append(float(tok.replace(",", "")))
        except ValueError:
            pass
    return out


def leaks(text: str, ex: Exercise, expected, given=None) -> bool:
    """True if ``text`` shows the reference answer (a choice's name, or a number within tolerance).

    The learner's own answer, echoed back, is removed first (a wrong option may contain the right one
    as a substring, e.g. 'tree/LL128' and 'tree/LL')."""
    if isinstance(expected, str):
        if isinstance(given, str):
            text = text.replace(given.strip(), "")
        return any(re.search(r"(?<![A-Za-z0-9_])" + re.escape(s) + r"(?![A-Za-z0-9_])", text, re.IGNORECASE)
                   for s in ex.accepted_spellings()[expected])
    tol = ex.atol + max(ex.rtol, 1e-6) * abs(expected)
    return any(abs(x - abs(expected)) <= tol for x in numbers_in(text))


def wrong_answer(ex: Exercise, expected):
    if isinstance(expected, str):
        others = [c for c in ex.choices if c != expected]
        return others[0] if others else "definitely-not-an-option"
    return expected * 1.5 if expected != 0 else 1.0


def test_registry_is_not_empty():
    assert len(ALL) >= 120


@pytest.mark.parametrize("key", sorted(ALL))
def test_exercise_grades(key):
    ex = exercise(key)
    expected = ex.expected()
    right = ex.check(expected)
    assert right.correct and right.expected == expected
    empty = ex.grade(None)
    assert empty.status == "empty" and empty.message.count("尚未作答") == 1
    given = wrong_answer(ex, expected)
    wrong = ex.grade(given)
    assert wrong.status == "wrong"
    # the learner-facing result never carries the reference before a correct answer
    assert wrong.expected is None and empty.expected is None
    for res in (wrong, empty):
        shown = repr(res) + str(res) + res._repr_html_()
        assert "expected=" not in shown and "CheckResult(" not in shown
        if res is wrong:
            assert not leaks(shown, ex, expected, given), shown
    assert ex.hints, f"{key} has no hints"
    assert ex.prompt and ex.solution_text, f"{key} lacks a prompt or a worked solution"
    assert ex.kind in ("model", "by_hand", "judgement")


@pytest.mark.parametrize("key", sorted(ALL))
def test_units_follow_the_percent_convention(key):
    """One convention course-wide: shares are answered in percent and every such prompt says so."""
    ex = ALL[key]
    if ex.unit == "%":
        assert "percent" in ex.prompt.lower(), ex.prompt
        assert PERCENT_CONVENTION in ex.grade(None).message
    assert "fraction" not in ex.prompt.lower() and "(0-1)" not in ex.prompt and "0..1" not in ex.unit, (
        f"{key}: shares are answered in percent ({PERCENT_CONVENTION})")


@pytest.mark.parametrize("key", sorted(k for k, e in ALL.items() if e.choices))
def test_choice_exercises_accept_their_synonyms(key):
    ex = ALL[key]
    expected = ex.expected()
    assert expected in ex.choices
    for spelling in ex.accepted_spellings()[expected]:
        assert ex.grade(spelling).correct, spelling
        assert ex.grade(f"  {spelling.upper()} ").correct, spelling
    for other in ex.choices:
        if other != expected:
            assert ex.grade(other).status == "wrong"
    garbage = ex.grade("no-such-option")
    assert garbage.status == "wrong"
    for option in ex.choices:  # an unrecognised answer is told every accepted spelling
        assert option in garbage.message
    assert ex.grade([1]).status == "invalid" and ex.grade(True).status == "invalid"


def test_memory_bound_synonyms_issue_examples():
    """Issue 9: ch06.4 and ch15.4 rejected the spellings their own prompts suggest."""
    assert exercise("ch06.4").grade("访存受限").correct
    assert exercise("ch06.4").grade("memory-bound").correct
    assert exercise("ch06.4").grade("Memory Bound").correct
    assert exercise("ch15.4").grade("Tree/LL").correct and exercise("ch15.4").grade("tree LL").correct


@pytest.mark.parametrize("chapter", chapters())
def test_every_chapter_has_a_hand_and_a_judgement_exercise(chapter):
    exs = [e for k, e in ALL.items() if k.startswith(chapter + ".")]
    kinds = {e.kind for e in exs}
    assert len(exs) >= 4, f"{chapter}: {len(exs)} exercises"
    assert "by_hand" in kinds, f"{chapter} has no pen-and-paper exercise"
    assert "judgement" in kinds, f"{chapter} has no judgement exercise"
    for e in exs:
        if e.kind == "judgement":
            assert e.choices and isinstance(e.expected(), str)


def _numeric():
    return Exercise(key="t.1", prompt="p", answer=lambda: 100.0, unit="GB", rtol=0.05, hints=("h1", "h2"),
                    solution_text="s")


def test_tolerance_and_invalid_input():
    ex = _numeric()
    assert ex.grade(104).correct and ex.grade(96).correct and ex.grade("100").correct
    assert ex.grade(106).status == "wrong"
    for bad in ("abc", float("nan"), float("inf"), [1, 2], {"a": 1}, 1j, "50%"):
        assert ex.grade(bad).status == "invalid", bad
    assert ex.grade("").status == "empty" and ex.grade("   ").status == "empty"


def test_bools_are_not_numbers():
    one = Exercise(key="t.b", prompt="p", answer=lambda: 1.0, hints=("h",), solution_text="s")
    for b in (True, False):
        res = one.grade(b)
        assert res.status == "invalid" and "True/False" in res.message
    import numpy as np
    assert one.grade(np.bool_(True)).status == "invalid"
    assert one.grade(np.float64(1.0)).correct and one.grade(np.int64(1)).correct


def test_huge_numbers_give_a_message_not_a_traceback():
    res = _numeric().check(10**400)
    assert res.status == "invalid" and "太大" in res.message


def test_feedback_names_the_slip():
    ex = _numeric()
    assert "1000" in ex.grade(100e3).message and "前缀" in ex.grade(0.1).message
    assert "bit" in ex.grade(800).message and "byte" in ex.grade(12.5).message
    assert "GiB" in ex.grade(100e9 / 2**30).message and "GiB" in ex.grade(100 * 2**30 / 1e9).message
    assert "1024" in ex.grade(100 * 1024).message
    assert "分钟" not in ex.grade(6000).message   # x60 is a time slip: never told for a GB answer
    mins = Exercise(key="t.m", prompt="p", answer=lambda: 100.0, unit="s", rtol=0.05, hints=("h",), solution_text="s")
    assert "分钟" in mins.grade(6000).message and "分钟" in mins.grade(100 / 60).message
    assert "偏大" in ex.grade(150).message and "偏小" in ex.grade(50).message
    assert "差了" not in ex.grade(150).message
    pct = Exercise(key="t.p", prompt="share in percent?", answer=lambda: 45.0, unit="%", hints=("h",),
                   solution_text="s")
    frac = pct.grade(0.45)
    assert frac.status == "wrong" and "百分数" in frac.message and PERCENT_CONVENTION in frac.message
    assert pct.grade("45%").correct and pct.grade(4500).status == "wrong" and "100" in pct.grade(4500).message


def test_hints_are_numbered_from_one_and_never_raise():
    ex = _numeric()
    assert "提示 1/2：h1" in ex.hint(1) and "提示 2/2：h2" in ex.hint(2)
    assert "提示 1/2" in ex.hint()
    for bad in (None, float("nan"), 0, 3, -1, True, "1", 1.5, 10**400, float("inf")):
        text = ex.hint(bad)
        assert "1 到 2" in text and "\n" not in text, (bad, text)
    assert repr(ex.hint(1)) == str(ex.hint(1))  # shown once, without quotes
    assert "本题没有提示" in Exercise(key="t.n", prompt="p", answer=lambda: 1.0).hint(1)


def test_no_chapter_cell_asks_for_hint_zero():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "chapters"
    for src in sorted(root.glob("ch*.py")):
        assert ".hint(0)" not in src.read_text(encoding="utf-8"), src.name


def test_result_displays_one_message():
    res = _numeric().check(150)
    assert isinstance(res, CheckResult)
    assert repr(res) == str(res) == res.message
    assert res.message in res._repr_html_().replace("&gt;", ">") or "偏大" in res._repr_html_()


def test_choice_exercise_without_synonyms():
    ex = Exercise(key="t.2", prompt="p", answer=lambda: "network", choices=("network", "gpu"), hints=("h",),
                  solution_text="s", kind="judgement")
    assert ex.grade("Network ").correct and ex.grade("gpu").status == "wrong"
    with pytest.raises(ValueError, match="synonyms"):
        Exercise(key="t.3", prompt="p", answer=lambda: "a", choices=("a",), synonyms={"b": ("x",)})
    with pytest.raises(ValueError, match="kind"):
        Exercise(key="t.4", prompt="p", answer=lambda: 1.0, kind="essay")


@pytest.mark.parametrize("key", [None, "", 3, "ch99.9", "ch01.99", "ch1.1"])
def test_unknown_or_malformed_exercise_key(key):
    with pytest.raises(ExerciseKeyError) as info:
        exercise(key)
    assert isinstance(info.value, KeyError)
    lines = info.value._render_traceback_()  # what Jupyter shows instead of a traceback
    assert len(lines) == 1 and "exercise" in lines[0] and "\n" not in lines[0]


def test_solutions_view_runs(capsys):
    from labutil.exercises.__main__ import main

    assert main(["--solutions", "ch01"]) == 0
    out = capsys.readouterr().out
    assert "参考答案" in out and "ch01.1" in out


def test_solutions_view_unknown_chapter_is_one_line(capsys):
    from labutil.exercises.__main__ import main

    assert main(["--solutions", "ch99"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "ch99" in captured.err and "Traceback" not in captured.err


def test_solutions_view_command_line():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "labutil.exercises", "--solutions", "ch99"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    assert "ch01" in proc.stderr  # names the chapters that exist
