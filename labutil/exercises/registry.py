"""The exercise registry: the :class:`Exercise` class, ``register`` and the look-ups ``exercise(key)``,
``chapter_exercises(chapter)``, ``load_all()``.

Each chapter's module ``labutil/exercises/chNN.py`` registers its exercises when imported; ``exercise``
imports the chapter module on first use. Grading uses :mod:`.answers` (reading the learner's answer,
with its unit) and :mod:`.feedback` (the one message shown, slip detection); the unit table is
:mod:`.answer_units`.
"""

from __future__ import annotations

import importlib
import math
import numbers
import pkgutil
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ..validate import closest_names
from .answer_units import SLIP_FAMILIES, Unit, lookup
from .answers import _norm_choice, read_number, safe_text, short_repr
from .feedback import PERCENT_CONVENTION, CheckResult, Feedback, _in_ipython, _show, slip_message

__all__ = ["BOUND_SYNONYMS", "KINDS", "Exercise", "ExerciseKeyError", "chapter_exercises", "chapters", "exercise",
           "load_all", "register"]

_REGISTRY: dict[str, "Exercise"] = {}
_PACKAGE = __name__.rsplit(".", 1)[0]          # labutil.exercises
_PACKAGE_DIR = Path(__file__).resolve().parent
_CHAPTER_MODULE = re.compile(r"ch\d\d")

KINDS = ("model", "by_hand", "judgement")

# Accepted spellings shared by every "memory- or compute-bound?" exercise.
BOUND_SYNONYMS = {
    "memory": ("memory-bound", "memory bound", "bandwidth-bound", "访存受限", "内存受限", "带宽受限", "显存带宽受限"),
    "compute": ("compute-bound", "compute bound", "算力受限", "计算受限"),
}

_MAX_SAFE_INT = 10**18   # a choice typed as a number: larger ints are no option of any exercise


class ExerciseKeyError(KeyError):
    """Unknown or malformed exercise key; shows as one line in Jupyter (no traceback)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown exercise"

    def _render_traceback_(self) -> list[str]:  # IPython shows only these lines
        return [f"ExerciseKeyError: {self}"]


@dataclass(frozen=True)
class Exercise:
    """A numeric or choice exercise whose answer comes from a model call.

    answer: zero-argument callable returning the reference answer (float, or str for a choice).
    unit: the answer's unit as the prompt writes it; it must be a row of the unit table
        (:data:`.answer_units.UNITS`), which decides the units a learner may type and the slips named.
    rtol/atol: relative / absolute tolerance for numeric answers (|given-expected| <= atol + rtol*|expected|).
    choices: for a choice exercise, the canonical options (the answer is one of them).
    synonyms: for a choice exercise, other accepted spellings of each option, e.g.
        {"memory": ("memory-bound", "访存受限")}; comparison ignores case, quotes and separators.
    kind: "model", "by_hand" (pen and paper from the chapter text) or "judgement" (a choice decided by a model).
    explain: for a choice exercise, ``explain(option) -> str``: why ``option`` is not the answer, with the
        numbers from the model that decide it (shown as "「X」不对：…"). It must not name the right option.
    params: the model calls this exercise shares with a chapter cell and the values it uses, as
        ``{"memory.model_states_gb": {"n_params": 70e9, "dp": 64}}`` (callable path inside ``labutil``);
        ``tests/test_exercise_params.py`` checks that the chapter's source calls it with the same values.
    slip_families: the unit-slip families to name (:data:`.answer_units.SLIP_FAMILIES`); ``None`` takes
        those of the unit's row (e.g. a count of 8-GPU servers in "台" adds ``("gpu_node",)``).
    solution_text: the worked solution; a zero-argument callable is called each time, so a solution can
        quote numbers computed by the model.
    """

    key: str
    prompt: str
    answer: Callable[[], object]
    unit: str = ""
    rtol: float = 0.02
    atol: float = 0.0
    hints: Sequence[str] = field(default_factory=tuple)
    solution_text: str | Callable[[], str] = ""
    choices: Sequence[str] = field(default_factory=tuple)
    synonyms: Mapping[str, Sequence[str]] = field(default_factory=dict)
    kind: str = "model"
    explain: Callable[[str], str] | None = None
    params: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    slip_families: Sequence[str] | None = None

    #: the function a learner calls to reach this exercise (the hint pointer prints it)
    lookup_name = "exercise"

    def __post_init__(self):
        if self.unit == "%" and "percent" not in self.prompt.lower():  # the course convention, in every prompt
            object.__setattr__(self, "prompt", f"{self.prompt.rstrip()} (answer in percent: 45 % is entered as 45)")
        if self.kind not in KINDS:
            raise ValueError(f"exercise {self.key}: kind must be one of {KINDS}; got {self.kind!r}")
        unknown = set(self.synonyms) - set(self.choices)
        if unknown:
            raise ValueError(f"exercise {self.key}: synonyms for options not in choices: {sorted(unknown)}")
        if self.slip_families is not None:
            bad = set(self.slip_families) - set(SLIP_FAMILIES)
            if bad:
                raise ValueError(f"exercise {self.key}: unknown slip families {sorted(bad)}; known: {sorted(SLIP_FAMILIES)}")
        if self.explain is not None and not self.choices:
            raise ValueError(f"exercise {self.key}: explain is for choice exercises (it explains a wrong option)")

    # -- reference --------------------------------------------------------------------------
    def expected(self):
        """The reference answer (instructors, tests and ``solution()``; never shown by ``check``)."""
        value = self.answer()
        if isinstance(value, str):
            canon = self._canonical(value)
            if self.choices and canon is None:
                raise ValueError(f"exercise {self.key}: the model's answer {value!r} is not one of {list(self.choices)}")
            return canon or value
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"exercise {self.key}: the model returned a non-finite answer {value!r}")
        return value

    @property
    def unit_row(self) -> Unit | None:
        """This exercise's row of the unit table (None for a choice exercise or a unit outside the table)."""
        return lookup(self.unit)

    def families(self) -> tuple[str, ...]:
        """The unit-slip families named for this exercise (its own ``slip_families``, else its unit's)."""
        if self.slip_families is not None:
            return tuple(self.slip_families)
        row = self.unit_row
        return row.families if row is not None else ()

    def accepted_spellings(self) -> dict[str, tuple[str, ...]]:
        """Each option with every spelling the checker accepts for it."""
        return {c: (c, *tuple(self.synonyms.get(c, ()))) for c in self.choices}

    def _canonical(self, text: str) -> str | None:
        key = _norm_choice(text)
        for option, spellings in self.accepted_spellings().items():
            if key in {_norm_choice(s) for s in spellings}:
                return option
        return None

    def _spellings_text(self) -> str:
        return "；".join(" / ".join(sp) for sp in self.accepted_spellings().values())

    def why(self, option: str) -> str:
        """Why ``option`` (any accepted spelling) is not the answer, from ``explain``; '' when there is none.

        Never raises: an unknown option, the right option, or an ``explain`` that fails give ''.
        """
        if self.explain is None or not isinstance(option, str):
            return ""
        canon = self._canonical(option)
        if canon is None:
            return ""
        try:
            if canon == self.expected():
                return ""
            text = self.explain(canon)
        except Exception:  # noqa: BLE001 - a failing explanation falls back to the plain message
            return ""
        return " ".join(str(text).split()).rstrip("。.") if text else ""

    def _empty_message(self) -> str:
        if self.choices:
            what = f"填一个选项：{' / '.join(self.choices)}；大小写、空格和 -_/ 分隔符不计"
            if self.synonyms:
                what += "，中文写法也接受"
        else:
            what = f"填一个数，单位：{self.unit or '无量纲'}"
            row = self.unit_row
            if row is not None and row.name and row.quantity != "share" or self.unit == "%":
                what += f"（只填数字即可，带上单位 {self.unit} 也行）"
            if self.unit == "%":
                what += "。" + PERCENT_CONVENTION
        return f"[{self.key}] 尚未作答：把答案填进上面的变量（{what}），再运行本单元格。"

    # -- grading ----------------------------------------------------------------------------
    def grade(self, given) -> CheckResult:
        """Grade without displaying anything; never raises on a learner's input."""
        if given is None or given is Ellipsis or (isinstance(given, str) and not given.strip()):
            return CheckResult(self.key, "empty", self._empty_message(), None, given)
        expected = self.expected()
        if isinstance(expected, str):
            return self._grade_choice(given, expected)
        return self._grade_number(given, expected)

    def _grade_choice(self, given, expected: str) -> CheckResult:
        more = self._hint_pointer()
        if isinstance(given, numbers.Real) and not isinstance(given, bool):
            text = _number_as_option(given)
            if text is None:
                return CheckResult(self.key, "invalid",
                                   f"[{self.key}] 数字太大或无效（{short_repr(given)}），不是任何一个选项。"
                                   f"可以填的写法：{self._spellings_text()}。", None, given)
            given = text
        if not isinstance(given, str):
            return CheckResult(self.key, "invalid",
                               f"[{self.key}] 本题要填文字选项，收到 {type(given).__name__}。可以填的写法：{self._spellings_text()}。",
                               None, given)
        option = self._canonical(given) if self.choices else (
            expected if _norm_choice(given) == _norm_choice(expected) else None)
        if option == expected:
            return CheckResult(self.key, "correct", f"[{self.key}] ✓ 正确！答案：{self._fmt(expected)}。", expected, given)
        shown = safe_text(given.strip())
        if option is None and self.choices:
            msg = f"[{self.key}] ✗ 没有认出「{shown}」。可以填的写法：{self._spellings_text()}。{more}"
        else:
            reason = self.why(option) if option else ""
            if reason:
                msg = f"[{self.key}] ✗ 「{shown}」不对：{reason}。{more}"
            else:
                msg = f"[{self.key}] ✗ 还不对：「{shown}」不是模型给出的答案。{more}"
        return CheckResult(self.key, "wrong", msg, None, given)

    def _grade_number(self, given, expected: float) -> CheckResult:
        reading = read_number(given, self.unit)
        if reading.reason is not None:
            return CheckResult(self.key, "invalid", f"[{self.key}] {reading.reason}。", None, given)
        value = reading.value
        note = f"（{reading.note}）" if reading.note else ""
        if self._close(value, expected):
            return CheckResult(self.key, "correct", f"[{self.key}] ✓ 正确！{note}参考答案 {self._fmt(expected)}。",
                               expected, given)
        slip = slip_message(value, expected, self.unit_row, self.families(), self._close)
        direction = "偏大" if value > expected else "偏小"
        msg = f"[{self.key}] ✗ 还不对（你的答案{direction}）。{note}" + (slip + " " if slip else "") + self._hint_pointer()
        return CheckResult(self.key, "wrong", msg.rstrip(), None, given)

    def _close(self, value: float, target: float) -> bool:
        return abs(value - target) <= self.atol + self.rtol * abs(target)

    def _slip(self, value: float, expected: float) -> str:
        """The slip message for ``value`` against ``expected`` ('' if none); see :func:`.feedback.slip_message`."""
        return slip_message(value, expected, self.unit_row, self.families(), self._close)

    def hint_call(self, i: int = 1) -> str:
        """The code a learner runs for hint ``i``: ``exercise("ch01.1").hint(1)`` (``lab_exercise`` for labs)."""
        return f'{self.lookup_name}("{self.key}").hint({i})'

    def _hint_pointer(self) -> str:
        if not self.hints:
            return ""
        n = len(self.hints)
        return f"看提示：{self.hint_call(1)}" + (f"（共 {n} 条，编号 1–{n}）。" if n > 1 else "。")

    def check(self, given) -> CheckResult:
        """Grade and return the result; as a cell's last line Jupyter shows its ONE message."""
        result = self.grade(given)
        if not _in_ipython():
            print(result.message)
        return result

    def hint(self, i=1) -> Feedback:
        """Hint number ``i`` (1 = first); a bad number gets a one-line explanation, never an error."""
        n = len(self.hints)
        if n == 0:
            return _show(f"[{self.key}] 本题没有提示。")
        rule = f"提示编号是 1 到 {n} 的整数，例如 .hint(1)"
        if isinstance(i, bool) or not isinstance(i, numbers.Real):
            return _show(f"[{self.key}] {rule}；收到 {short_repr(i)}。")
        try:
            ok = math.isfinite(float(i)) and float(i) == int(i)
        except (OverflowError, ValueError):
            ok = False
        if not ok:
            return _show(f"[{self.key}] {rule}；收到 {short_repr(i)}。")
        k = int(i)
        if not 1 <= k <= n:
            return _show(f"[{self.key}] 本题有 {n} 条提示，{rule}；收到 {short_repr(k)}。")
        return _show(f"[{self.key}] 提示 {k}/{n}：{self.hints[k - 1]}")

    def solution(self) -> Feedback:
        """The reference answer and the worked solution."""
        return _show(self.solution_report())

    def solution_body(self) -> str:
        """The worked solution's text (``solution_text``, called when it is a callable)."""
        text = self.solution_text
        return str(text() if callable(text) else text)

    def solution_report(self) -> str:
        return f"[{self.key}] 参考答案：{self._fmt(self.expected())}\n{self.solution_body()}".rstrip()

    def _fmt(self, value) -> str:
        if isinstance(value, str):
            alt = [s for s in self.synonyms.get(value, ()) if not s.isascii()]
            return f"{value}（{alt[0]}）" if alt else value
        return fmt_number(value) + (f" {self.unit}" if self.unit else "")


def fmt_number(value: float) -> str:
    """A reference value for display: 4 significant digits, whole numbers from 10,000 with separators
    (82,123 not 8.212e+04), scientific only beyond 10^12 or below 10^-3."""
    if value != 0 and (abs(value) >= 1e12 or abs(value) < 1e-3):
        return f"{value:.4g}"
    if abs(value) >= 1e4:
        return f"{value:,.0f}"
    return f"{value:,.4g}"


def _number_as_option(given) -> str | None:
    """A number typed for a choice ('4096' for the option "4096"); None when it is huge, inf or NaN."""
    if isinstance(given, numbers.Integral):
        return str(int(given)) if abs(int(given)) < _MAX_SAFE_INT else None
    try:
        x = float(given)
    except (OverflowError, TypeError, ValueError):
        return None
    if not math.isfinite(x) or abs(x) >= _MAX_SAFE_INT:
        return None
    return str(int(x)) if x == int(x) else f"{x:g}"


def register(ex: Exercise) -> Exercise:
    """Add an exercise to the registry (called at import of a chapter's exercise module)."""
    if ex.key in _REGISTRY and _REGISTRY[ex.key] is not ex:
        raise ValueError(f"exercise key {ex.key!r} is registered twice")
    _REGISTRY[ex.key] = ex
    return ex


def _chapter_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(_PACKAGE_DIR)]) if _CHAPTER_MODULE.fullmatch(m.name))


def load_all() -> dict[str, Exercise]:
    """Import every chapter's exercise module and return the whole registry."""
    for name in _chapter_modules():
        importlib.import_module(f"{_PACKAGE}.{name}")
    return dict(_REGISTRY)


def chapters() -> list[str]:
    """The chapters that have exercises ('ch01', ...)."""
    return _chapter_modules()


def normalise_key(key: str) -> str:
    """'CH01.1', ' ch01.1 ', 'ｃｈ０１．１' -> 'ch01.1' (width folded, case folded, spaces dropped)."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", key)).casefold().replace("。", ".")


def exercise(key: str) -> Exercise:
    """The exercise ``key`` (e.g. 'ch01.1'; case and width do not matter); imports its chapter module on first use.

    An unknown or malformed key raises :class:`ExerciseKeyError` (a KeyError) whose one-line
    message lists the closest keys (the key itself is echoed cut to 40 characters); Jupyter shows
    that line without a traceback.
    """
    if not isinstance(key, str) or not key.strip():
        raise ExerciseKeyError(f"exercise key must be a string like 'ch01.1'; got {short_repr(key)}")
    key = normalise_key(key)
    chapter = key.split(".", 1)[0]
    if chapter in _chapter_modules():
        importlib.import_module(f"{_PACKAGE}.{chapter}")
    if key not in _REGISTRY:
        known = sorted(load_all())
        close = closest_names(key[:40], known)
        near = f" Closest: {', '.join(close)}." if close else ""
        raise ExerciseKeyError(f"unknown exercise {short_repr(key)}.{near} Keys look like 'ch01.1' "
                               f"(chapters ch01-ch{len(_chapter_modules()):02d}).")
    return _REGISTRY[key]


def chapter_exercises(chapter: str) -> list[Exercise]:
    """All exercises of a chapter ('ch01'), in key order; an unknown chapter raises ExerciseKeyError."""
    if not isinstance(chapter, str) or normalise_key(chapter) not in _chapter_modules():
        names = _chapter_modules()
        raise ExerciseKeyError(f"unknown chapter {short_repr(chapter)}; chapters with exercises: {names[0]}..{names[-1]}")
    chapter = normalise_key(chapter)
    importlib.import_module(f"{_PACKAGE}.{chapter}")
    return sorted((ex for k, ex in _REGISTRY.items() if k.split(".", 1)[0] == chapter),
                  key=lambda ex: _key_order(ex.key))


def _key_order(key: str):
    ch, _, num = key.partition(".")
    return (ch, int(num) if num.isdigit() else 0, num)
