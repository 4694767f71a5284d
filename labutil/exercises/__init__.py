"""Self-grading exercises.

Each chapter registers its exercises in ``labutil/exercises/chNN.py``. An exercise's answer is
computed from the course's models (never a hard-coded magic number), and the checker compares
the learner's value within a tolerance. In a notebook::

    from labutil.exercises import exercise
    answer_1 = None          # 在这里填入你的答案
    exercise("ch01.1").check(answer_1)

``check`` returns a :class:`CheckResult` that Jupyter shows as ONE message (HTML, or text
outside a browser). Before a correct answer the result never contains the reference value:
a wrong answer is told which way it is off and, when the ratio to the reference is a
classic slip (x100 percent vs fraction, x1000 prefix, x1024 / x1.074 GiB vs GB, x8 bits vs
bytes, x60 minutes vs seconds ...), which slip that suggests. ``check(None)`` says "尚未作答"
once and never raises, so a shipped notebook runs clean with the answers left empty.

``hint(i)`` shows hint ``i`` (numbered from 1); ``solution()`` shows the worked solution (the
instructors' view of every solution is ``python -m labutil.exercises --solutions ch01``).

Course-wide convention (:data:`PERCENT_CONVENTION`): every share -- utilisation, efficiency,
MFU, goodput, probability, share of time -- is answered in percent (45 % is entered as 45,
unit ``"%"``); a factor that a tool defines on 0..1 (Slurm's fair-share factor) is the only
exception and its prompt says so.

Kinds of exercise (``kind``): ``"model"`` (computed with the chapter's model functions),
``"by_hand"`` (solvable with pen and paper from the chapter text) and ``"judgement"`` (a
choice -- which layout, which fabric, which fix -- whose right option is decided by a model
call). Choice exercises accept every spelling in ``synonyms`` (e.g. "memory", "memory-bound",
"访存受限") and, when they do not recognise an answer, list the accepted spellings.
"""

from __future__ import annotations

import html
import importlib
import math
import numbers
import pkgutil
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

_REGISTRY: dict[str, "Exercise"] = {}

PERCENT_CONVENTION = "课程约定：比例（利用率、效率、MFU、goodput、概率、占比）一律填百分数，45 % 填 45，不填 0.45。"
KINDS = ("model", "by_hand", "judgement")

# Accepted spellings shared by every "memory- or compute-bound?" exercise.
BOUND_SYNONYMS = {
    "memory": ("memory-bound", "memory bound", "bandwidth-bound", "访存受限", "内存受限", "带宽受限", "显存带宽受限"),
    "compute": ("compute-bound", "compute bound", "算力受限", "计算受限"),
}
_STATUSES = ("empty", "correct", "wrong", "invalid")


def _in_ipython() -> bool:
    """True inside an IPython shell or Jupyter kernel (results are then shown by the display hook)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of the course
        return False
    return get_ipython() is not None


class Feedback(str):
    """A message shown once: its repr is the text itself (no quotes), with an HTML view for Jupyter."""

    _colour = "#333333"

    def __repr__(self) -> str:
        return str.__str__(self)

    def _repr_html_(self) -> str:
        body = html.escape(str.__str__(self)).replace("\n", "<br>")
        return f'<div style="color:{self._colour};white-space:normal">{body}</div>'


def _show(text: str) -> Feedback:
    """Return ``text`` as Feedback; print it too when no IPython display hook will show it."""
    fb = Feedback(text)
    if not _in_ipython():
        print(fb)
    return fb


@dataclass(frozen=True, repr=False)
class CheckResult:
    """Outcome of one check: status is 'empty', 'correct', 'wrong' or 'invalid'.

    ``expected`` holds the reference value only when the answer was correct (None otherwise),
    so neither the display nor the attribute gives the answer away before it is found.
    """

    key: str
    status: str
    message: str
    expected: object = None
    given: object = None

    @property
    def correct(self) -> bool:
        return self.status == "correct"

    def __repr__(self) -> str:
        return self.message

    __str__ = __repr__

    def _repr_html_(self) -> str:
        colour = {"correct": "#1a7f37", "wrong": "#b42318", "invalid": "#b54708"}.get(self.status, "#475467")
        body = html.escape(self.message).replace("\n", "<br>")
        return f'<div style="color:{colour};white-space:normal">{body}</div>'


class ExerciseKeyError(KeyError):
    """Unknown or malformed exercise key; shows as one line in Jupyter (no traceback)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown exercise"

    def _render_traceback_(self) -> list[str]:  # IPython shows only these lines
        return [f"ExerciseKeyError: {self}"]


def _norm_choice(text: str) -> str:
    """Normalise a spelling: NFKC, lower case, quotes dropped, separators collapsed to '/'."""
    t = unicodedata.normalize("NFKC", str(text)).strip().strip("'\"“”‘’「」").lower()
    t = re.sub(r"[\s,;:_\-+|/（）()]+", "/", t)
    return t.strip("/")


# (factor given/expected, message). Checked in order; each message names the slip, never the answer.
_SLIPS_PERCENT = (
    (0.01, "差了 100 倍：看起来你填的是小数（0–1）。" + PERCENT_CONVENTION),
    (100.0, "差了 100 倍：是不是把已经是百分数的值又乘了 100？"),
)
_SLIPS_OTHER = (
    (100.0, "差了 100 倍：是不是把比例写成了百分数？本题不要百分号换算。"),
    (0.01, "差了 100 倍：检查百分数与小数的换算（或 c/厘 这类前缀）。"),
)
_SLIPS = (
    (1000.0, "差了 1000 倍：检查单位前缀（k/M/G/T，ms 与 s，MB 与 GB，kW 与 MW）。"),
    (0.001, "差了 1000 倍：检查单位前缀（k/M/G/T，ms 与 s，MB 与 GB，kW 与 MW）。"),
    (1024.0, "差了 1024 倍：KiB/MiB/GiB（2 的幂）与一级前缀混用了。"),
    (1 / 1024, "差了 1024 倍：KiB/MiB/GiB（2 的幂）与一级前缀混用了。"),
    (1e6, "差了 10^6 倍：单位前缀差了两级（如 µs 与 s、MB 与 TB）。"),
    (1e-6, "差了 10^6 倍：单位前缀差了两级（如 µs 与 s、MB 与 TB）。"),
    (2**30 / 1e9, "差了约 7.4 %（= 2^30 / 10^9）：GB（10^9 B）与 GiB（2^30 B）混用了，nvidia-smi 的 MiB 也是 2 的幂。"),
    (1e9 / 2**30, "差了约 7.4 %（= 2^30 / 10^9）：GB（10^9 B）与 GiB（2^30 B）混用了，nvidia-smi 的 MiB 也是 2 的幂。"),
    (2**20 / 1e6, "差了约 4.9 %（= 2^20 / 10^6）：MB（10^6 B）与 MiB（2^20 B）混用了。"),
    (1e6 / 2**20, "差了约 4.9 %（= 2^20 / 10^6）：MB（10^6 B）与 MiB（2^20 B）混用了。"),
    (1.024, "差了 2.4 %（= 1024 / 1000）：1000 与 1024 的前缀混用了（GB 与 GiB、kB 与 KiB）。"),
    (1 / 1.024, "差了 2.4 %（= 1024 / 1000）：1000 与 1024 的前缀混用了（GB 与 GiB、kB 与 KiB）。"),
    (8.0, "差了 8 倍：bit 与 byte 混用了（Gb/s ÷ 8 = GB/s）。"),
    (0.125, "差了 8 倍：bit 与 byte 混用了（Gb/s ÷ 8 = GB/s）。"),
    (60.0, "差了 60 倍：检查分钟、秒、小时的换算。"),
    (1 / 60, "差了 60 倍：检查分钟、秒、小时的换算。"),
    (3600.0, "差了 3600 倍：秒与小时混用了。"),
    (1 / 3600, "差了 3600 倍：秒与小时混用了。"),
    (24.0, "差了 24 倍：小时与天混用了。"),
    (1 / 24, "差了 24 倍：小时与天混用了。"),
    (10.0, "差了 10 倍：检查小数点位置和数量级。"),
    (0.1, "差了 10 倍：检查小数点位置和数量级。"),
)


def _as_number(given, unit: str):
    """(value, None) or (None, reason) for a learner's numeric answer; never raises."""
    if isinstance(given, bool):
        return None, "True/False 不是数字：请填一个数"
    if isinstance(given, str):
        text = unicodedata.normalize("NFKC", given).strip().replace(",", "").replace("_", "")
        if text.endswith("%"):
            if unit != "%":
                return None, f"本题的单位是 {unit or '无量纲'}，不是百分数：请填不带 % 的数"
            text = text[:-1].strip()
        try:
            given = float(text)
        except ValueError:
            return None, f"答案应是一个数字（单位：{unit or '无'}），收到文字 {given[:40]!r}"
    elif not isinstance(given, numbers.Number):
        try:
            import numpy as np
            arr = np.asarray(given)
        except Exception:  # noqa: BLE001 - any odd object is simply not a number
            arr = None
        if arr is None or arr.shape != () or arr.dtype.kind not in "iuf":
            return None, f"答案应是一个数字（单位：{unit or '无'}），收到 {type(given).__name__}"
        given = arr.item()
        if isinstance(given, bool):
            return None, "True/False 不是数字：请填一个数"
    if isinstance(given, complex):
        return None, "答案应是实数，收到复数"
    try:
        value = float(given)
    except OverflowError:
        return None, "数字太大，超出了浮点数范围：检查单位或指数"
    except (TypeError, ValueError):
        return None, f"答案应是一个数字（单位：{unit or '无'}）"
    if not math.isfinite(value):
        return None, "答案不能是 NaN 或无穷大"
    return value, None


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
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("ch"))


def load_all() -> dict[str, Exercise]:
    """Import every chapter's exercise module and return the whole registry."""
    for name in _chapter_modules():
        importlib.import_module(f"{__name__}.{name}")
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
        importlib.import_module(f"{__name__}.{chapter}")
    if key not in _REGISTRY:
        from ..validate import closest_names
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
    importlib.import_module(f"{__name__}.{chapter}")
    return sorted((ex for k, ex in _REGISTRY.items() if k.split(".", 1)[0] == chapter),
                  key=lambda ex: _key_order(ex.key))


def _key_order(key: str):
    ch, _, num = key.partition(".")
    return (ch, int(num) if num.isdigit() else 0, num)
