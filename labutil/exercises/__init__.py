"""Self-grading exercises.

Each chapter registers its exercises in ``labutil/exercises/chNN.py``. An exercise's answer is
computed from the course's models (never a hard-coded magic number), and the checker compares
the learner's value within a tolerance. In a notebook::

    from labutil.exercises import exercise
    answer_1 = None          # 在这里填入你的答案
    exercise("ch01.1").check(answer_1)

``check(None)`` prints a friendly "尚未作答" and never raises, so a shipped notebook runs clean
with the answers left empty. ``hint(i)`` prints the i-th hint; ``solution()`` prints the worked
solution (the instructors' solutions view is ``python -m labutil.exercises --solutions ch01``).
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from dataclasses import dataclass, field
from typing import Callable, Sequence

_REGISTRY: dict[str, "Exercise"] = {}


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one check: status is 'empty', 'correct', 'wrong' or 'invalid'."""

    key: str
    status: str
    message: str
    expected: object = None
    given: object = None

    @property
    def correct(self) -> bool:
        return self.status == "correct"


@dataclass(frozen=True)
class Exercise:
    """A numeric or choice exercise whose answer comes from a model call.

    answer: zero-argument callable returning the reference answer (float, or str for a choice).
    rtol/atol: relative / absolute tolerance for numeric answers (|given-expected| <= atol + rtol*|expected|).
    choices: for a choice exercise, the accepted spellings (compared case-insensitively).
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

    def expected(self):
        value = self.answer()
        if isinstance(value, str):
            return value
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"exercise {self.key}: the model returned a non-finite answer {value!r}")
        return value

    def grade(self, given) -> CheckResult:
        """Grade without printing."""
        if given is None or (isinstance(given, str) and not given.strip()) or given is Ellipsis:
            return CheckResult(self.key, "empty", f"[{self.key}] 尚未作答：把你的答案填进上面的变量，再运行本单元格。", None, given)
        expected = self.expected()
        if isinstance(expected, str):
            ok = str(given).strip().lower() == expected.strip().lower()
            status = "correct" if ok else "wrong"
        else:
            try:
                value = float(given)
            except (TypeError, ValueError):
                return CheckResult(self.key, "invalid", f"[{self.key}] 答案应是一个数字（单位：{self.unit or '无'}），收到 {given!r}。", expected, given)
            if not math.isfinite(value):
                return CheckResult(self.key, "invalid", f"[{self.key}] 答案不能是 NaN 或无穷大。", expected, given)
            ok = abs(value - expected) <= self.atol + self.rtol * abs(expected)
            status = "correct" if ok else "wrong"
        if status == "correct":
            msg = f"[{self.key}] ✅ 正确！参考答案 {self._fmt(expected)}。"
        else:
            direction = ""
            if not isinstance(expected, str):
                direction = "偏大" if float(given) > expected else "偏小"
                direction = f"（你的答案{direction}）"
            hint = f" 提示：{self.hints[0]}" if self.hints else ""
            msg = f"[{self.key}] ❌ 还不对{direction}。{hint} 可以调用 .hint(1) 看下一条提示。"
        return CheckResult(self.key, status, msg, expected, given)

    def check(self, given) -> CheckResult:
        """Grade and print a friendly message; never raises on a learner's input."""
        result = self.grade(given)
        print(result.message)
        return result

    def hint(self, i: int = 0) -> str:
        if not self.hints:
            text = f"[{self.key}] 本题没有更多提示。"
        else:
            i = max(0, min(int(i), len(self.hints) - 1))
            text = f"[{self.key}] 提示 {i + 1}/{len(self.hints)}：{self.hints[i]}"
        print(text)
        return text

    def solution(self) -> str:
        expected = self.expected()
        text = f"[{self.key}] 参考答案：{self._fmt(expected)}\n{self.solution_text}".rstrip()
        print(text)
        return text

    def _fmt(self, value) -> str:
        if isinstance(value, str):
            return value
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
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("ch"))


def load_all() -> dict[str, Exercise]:
    """Import every chapter's exercise module and return the whole registry."""
    for name in _chapter_modules():
        importlib.import_module(f"{__name__}.{name}")
    return dict(_REGISTRY)


def exercise(key: str) -> Exercise:
    """The exercise ``key`` (e.g. 'ch01.1'); imports its chapter module on first use."""
    chapter = key.split(".", 1)[0]
    if chapter in _chapter_modules():
        importlib.import_module(f"{__name__}.{chapter}")
    if key not in _REGISTRY:
        from ..validate import unknown_name
        raise unknown_name("exercise", key, load_all())
    return _REGISTRY[key]


def chapter_exercises(chapter: str) -> list[Exercise]:
    """All exercises of a chapter ('ch01'), in key order."""
    importlib.import_module(f"{__name__}.{chapter}")
    return [ex for k, ex in sorted(_REGISTRY.items()) if k.split(".", 1)[0] == chapter]
