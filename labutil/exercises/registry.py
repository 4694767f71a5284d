"""The exercise registry: the :class:`Exercise` class, ``register`` and the look-ups ``exercise(key)``,
``chapter_exercises(chapter)``, ``load_all()``.

Each chapter's module ``labutil/exercises/chNN.py`` registers its exercises when imported; ``exercise``
imports the chapter module on first use. Grading uses :mod:`.answers` (reading the learner's answer)
and :mod:`.feedback` (the one message shown, slip detection).
"""

from __future__ import annotations

import importlib
import math
import numbers
import pkgutil
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ..validate import closest_names
from .answers import _as_number, _norm_choice
from .feedback import _SLIPS, _SLIPS_OTHER, _SLIPS_PERCENT, PERCENT_CONVENTION, CheckResult, Feedback, _in_ipython, _show

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
    rtol/atol: relative / absolute tolerance for numeric answers (|given-expected| <= atol + rtol*|expected|).
    choices: for a choice exercise, the canonical options (the answer is one of them).
    synonyms: for a choice exercise, other accepted spellings of each option, e.g.
        {"memory": ("memory-bound", "访存受限")}; comparison ignores case, quotes and separators.
    kind: "model", "by_hand" (pen and paper from the chapter text) or "judgement" (a choice decided by a model).
    """

    key: str
    prompt: str
    answer: Callable[[], object]
    unit: str = ""
    rtol: float = 0.02
    atol: float = 0.0
    hints: Sequence[str] = field(default_factory=tuple)
    solution_text: str = ""
    choices: Sequence[str] = field(default_factory=tuple)
    synonyms: Mapping[str, Sequence[str]] = field(default_factory=dict)
    kind: str = "model"

    def __post_init__(self):
        if self.unit == "%" and "percent" not in self.prompt.lower():  # the course convention, in every prompt
            object.__setattr__(self, "prompt", f"{self.prompt.rstrip()} (answer in percent: 45 % is entered as 45)")
        if self.kind not in KINDS:
            raise ValueError(f"exercise {self.key}: kind must be one of {KINDS}; got {self.kind!r}")
        unknown = set(self.synonyms) - set(self.choices)
        if unknown:
            raise ValueError(f"exercise {self.key}: synonyms for options not in choices: {sorted(unknown)}")

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

    def _empty_message(self) -> str:
        if self.choices:
            what = f"填一个选项：{' / '.join(self.choices)}；大小写、空格和 -_/ 分隔符不计"
            if self.synonyms:
                what += "，中文写法也接受"
        else:
            what = f"填一个数，单位：{self.unit or '无量纲'}"
            if self.unit == "%":
                what += "。" + PERCENT_CONVENTION
        return f"[{self.key}] 尚未作答：把答案填进上面的变量（{what}），再运行本单元格。"

    # -- grading ----------------------------------------------------------------------------
    def grade(self, given) -> CheckResult:
        """Grade without displaying anything; never raises on a learner's input."""
        if given is None or given is Ellipsis or (isinstance(given, str) and not given.strip()):
            return CheckResult(self.key, "empty", self._empty_message(), None, given)
        expected = self.expected()
        more = self._hint_pointer()
        if isinstance(expected, str):
            if isinstance(given, numbers.Real) and not isinstance(given, bool) and math.isfinite(float(given)):
                given = f"{float(given):g}" if float(given) != int(given) else str(int(given))  # 4096 -> "4096"
            if not isinstance(given, str):
                return CheckResult(self.key, "invalid",
                                   f"[{self.key}] 本题要填文字选项，收到 {type(given).__name__}。可以填的写法：{self._spellings_text()}。",
                                   None, given)
            option = self._canonical(given) if self.choices else (
                expected if _norm_choice(given) == _norm_choice(expected) else None)
            if option == expected:
                return CheckResult(self.key, "correct", f"[{self.key}] ✓ 正确！答案：{self._fmt(expected)}。", expected, given)
            if option is None and self.choices:
                msg = (f"[{self.key}] ✗ 没有认出「{given.strip()[:40]}」。可以填的写法：{self._spellings_text()}。{more}")
            else:
                msg = f"[{self.key}] ✗ 还不对：「{given.strip()[:40]}」不是模型给出的答案。{more}"
            return CheckResult(self.key, "wrong", msg, None, given)
        value, reason = _as_number(given, self.unit)
        if reason is not None:
            return CheckResult(self.key, "invalid", f"[{self.key}] {reason}。", None, given)
        if self._close(value, expected):
            return CheckResult(self.key, "correct", f"[{self.key}] ✓ 正确！参考答案 {self._fmt(expected)}。", expected, given)
        slip = self._slip(value, expected)
        direction = "偏大" if value > expected else "偏小"
        msg = f"[{self.key}] ✗ 还不对（你的答案{direction}）。" + (slip + " " if slip else "") + more
        return CheckResult(self.key, "wrong", msg.rstrip(), None, given)

    def _close(self, value: float, target: float) -> bool:
        return abs(value - target) <= self.atol + self.rtol * abs(target)

    def _slip(self, value: float, expected: float) -> str:
        if expected == 0 or value == 0 or (value > 0) != (expected > 0):
            return ""
        table = (_SLIPS_PERCENT if self.unit == "%" else _SLIPS_OTHER) + _SLIPS
        hits = [(abs(math.log(value / (expected * factor))), message) for factor, message in table
                if self._close(value, expected * factor)]
        return min(hits)[1] if hits else ""  # the closest factor (x1024 beats x1000 for 102,400 vs 100)

    def _hint_pointer(self) -> str:
        if not self.hints:
            return ""
        n = len(self.hints)
        return f'看提示：exercise("{self.key}").hint(1)' + (f"（共 {n} 条，编号 1–{n}）。" if n > 1 else "。")

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
            return _show(f"[{self.key}] {rule}；收到 {i!r}。")
        try:
            ok = math.isfinite(float(i)) and float(i) == int(i)
        except (OverflowError, ValueError):
            ok = False
        if not ok:
            return _show(f"[{self.key}] {rule}；收到 {i!r}。")
        k = int(i)
        if not 1 <= k <= n:
            return _show(f"[{self.key}] 本题有 {n} 条提示，{rule}；收到 {k}。")
        return _show(f"[{self.key}] 提示 {k}/{n}：{self.hints[k - 1]}")

    def solution(self) -> Feedback:
        """The reference answer and the worked solution."""
        return _show(self.solution_report())

    def solution_report(self) -> str:
        return f"[{self.key}] 参考答案：{self._fmt(self.expected())}\n{self.solution_text}".rstrip()

    def _fmt(self, value) -> str:
        if isinstance(value, str):
            alt = [s for s in self.synonyms.get(value, ()) if not s.isascii()]
            return f"{value}（{alt[0]}）" if alt else value
        unit = f" {self.unit}" if self.unit else ""
        if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
            return f"{value:.4g}{unit}"
        return f"{value:,.4g}{unit}"


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


def exercise(key: str) -> Exercise:
    """The exercise ``key`` (e.g. 'ch01.1'); imports its chapter module on first use.

    An unknown or malformed key raises :class:`ExerciseKeyError` (a KeyError) whose one-line
    message lists the closest keys; Jupyter shows that line without a traceback.
    """
    if not isinstance(key, str) or not key.strip():
        raise ExerciseKeyError(f"exercise key must be a string like 'ch01.1'; got {key!r}")
    key = key.strip()
    chapter = key.split(".", 1)[0]
    if chapter in _chapter_modules():
        importlib.import_module(f"{_PACKAGE}.{chapter}")
    if key not in _REGISTRY:
        known = sorted(load_all())
        close = closest_names(key, known)
        near = f" Closest: {', '.join(close)}." if close else ""
        raise ExerciseKeyError(f"unknown exercise {key!r}.{near} Keys look like 'ch01.1' (chapters ch01-ch{len(_chapter_modules()):02d}).")
    return _REGISTRY[key]


def chapter_exercises(chapter: str) -> list[Exercise]:
    """All exercises of a chapter ('ch01'), in key order; an unknown chapter raises ExerciseKeyError."""
    if not isinstance(chapter, str) or chapter.strip() not in _chapter_modules():
        raise ExerciseKeyError(f"unknown chapter {chapter!r}; chapters with exercises: "
                               f"{_chapter_modules()[0]}..{_chapter_modules()[-1]}")
    chapter = chapter.strip()
    importlib.import_module(f"{_PACKAGE}.{chapter}")
    return sorted((ex for k, ex in _REGISTRY.items() if k.split(".", 1)[0] == chapter),
                  key=lambda ex: _key_order(ex.key))


def _key_order(key: str):
    ch, _, num = key.partition(".")
    return (ch, int(num) if num.isdigit() else 0, num)
