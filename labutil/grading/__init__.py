"""Graded classes: the chapters' exercises as nbgrader assignments, and a learner build of
``labutil`` in which the answers are not importable.

Why: in the self-paced course any learner can call ``exercise("ch01.1").solution()`` (the
reference answers are computed by the exercise registry inside the learner's own kernel), so the
self-checks cannot be used for marks. A graded class therefore splits the registry in two:

- **Instructor side** (``python -m labutil.grading assignments``, ``make assignments``): an
  nbgrader course directory. Each chapter becomes an assignment whose notebook is the chapter with
  every exercise cell turned into an autograded answer cell (the reference answer from the registry
  between ``### BEGIN SOLUTION`` / ``### END SOLUTION``) and a locked, graded test cell whose hidden
  part (``### BEGIN HIDDEN TESTS``) holds the reference value as a literal and calls
  :func:`autograde` with the exercise's own unit, tolerances and accepted spellings.
  ``nbgrader generate_assignment`` strips both regions from the release; the literal then lives only
  in the instructor's source folder and gradebook.
- **Learner side** (``python -m labutil.grading learner-build``): a copy of the ``labutil``
  package whose chapter exercise modules keep prompts, units, tolerances, choices and hints but
  whose answers are withheld (:func:`withheld`): ``expected()``, ``solution()`` and a non-empty
  ``check()`` raise :class:`AnswerWithheld`, and no answer code or worked solution is in the build.
  The graded images install it (``--build-arg GRADED_CLASS=1``). ``nbgrader autograde`` runs the
  submissions in this environment too: the hidden tests need no answer code, and a submission that
  tries to read the answer off ``labutil`` gets nothing.

This module holds only what a learner build needs at run time (the hidden tests' grader and the
withheld-answer stub); the export lives in :mod:`labutil.grading.export`.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from ..exercises import Exercise

__all__ = ["AnswerWithheld", "GradeError", "withheld", "autograde"]


class AnswerWithheld(LookupError):
    """The reference answer of a graded exercise is not in this build (a graded class)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "answer withheld in this graded class"

    def _render_traceback_(self) -> list[str]:  # IPython shows this line instead of a traceback
        return [f"AnswerWithheld: {self}"]


def withheld(key: str):
    """The ``answer`` callable of an exercise in a learner build: always raises AnswerWithheld."""

    def answer():
        raise AnswerWithheld(f"[{key}] 评分课堂：参考答案不在学员环境中（讲师用 nbgrader 自动评分）。"
                             "把答案填进作业笔记本的 answer 变量，提交后由讲师评分。")

    answer.__qualname__ = f"withheld[{key}]"
    return answer


class GradeError(AssertionError):
    """A hidden test's verdict. Jupyter shows only this line (no traceback, so no source line with the
    reference value); nbgrader scores the cell 0 because it raised."""

    def _render_traceback_(self) -> list[str]:
        return [f"GradeError: {self.args[0] if self.args else ''}"]


def autograde(key: str, given, expected, *, unit: str = "", rtol: float = 0.02, atol: float = 0.0,
              choices: Sequence[str] = (), synonyms: Mapping[str, Sequence[str]] | None = None,
              kind: str = "model") -> str:
    """The hidden test of one graded exercise: grade ``given`` against ``expected`` exactly as the
    course's self-check does (``Exercise.grade``: the same unit and percent handling, tolerance
    ``|given - expected| <= atol + rtol * |expected|``, accepted spellings of a choice), and raise
    GradeError (an AssertionError) with the checker's message, which never shows the answer, unless it
    is correct. The test cell's visible part has already failed on a missing or empty answer, so this
    line only runs on a real answer; its one-line error keeps the reference value out of feedback."""
    ex = Exercise(key=key, prompt=f"graded exercise {key}", answer=lambda: expected, unit=unit, rtol=rtol,
                  atol=atol, choices=tuple(choices), synonyms=dict(synonyms or {}), kind=kind)
    try:
        result = ex.grade(given)
    except Exception as exc:  # noqa: BLE001 - any failure is a wrong answer, told in one line
        raise GradeError(f"[{key}] 无法判分：{type(exc).__name__}") from None
    if not result.correct:
        raise GradeError(result.message)
    return result.message
