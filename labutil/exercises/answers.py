"""Reading a learner's answer: a number (with its unit, in any common spelling) or a choice.

:func:`read_number` accepts what a learner types in a notebook cell: ``156.5``, ``"156.5 GB"``,
``"2.4 次/天"``, ``"45%"``, ``"1,024"``, ``"3.2e3 GB/s"``, ``"3.2×10^3"``, full-width digits and
``％``, ``"1.2万"``. A trailing unit is read with the unit table (:mod:`.answer_units`): the
exercise's own unit or an alias is accepted, another unit of the same quantity is converted with a
note, anything else is refused with a message naming the expected unit. It never raises.
"""

from __future__ import annotations

import math
import numbers
import re
import unicodedata
from dataclasses import dataclass

import numpy as np

from .answer_units import find_unit, lookup, matches, normalise_unit

__all__ = ["Reading", "read_number", "safe_text", "short_repr"]

_MAX_ECHO = 40
_QUANTITY_WORDS = {
    "data": "数据量", "data_rate": "带宽", "time": "时间", "frequency": "频率（每单位时间的次数）", "flop": "计算量",
    "flop_rate": "算力", "intensity": "算术强度", "power": "功率", "usd": "金额", "usd_per_year": "每年金额",
    "cny_per_year": "每年金额", "usd_per_gpu_hour": "单价", "gpu_time": "GPU 时", "share": "比例",
    "share_points": "百分点", "ratio": "倍数（无量纲）", "sample_rate": "吞吐", "gpus": "GPU 张数",
    "machines": "台数", "items": "个数", "lines": "条数", "events": "次数", "steps": "步数", "checks": "项数",
    "cores": "核数", "pairs": "对数",
}


def short_repr(value, limit: int = _MAX_ECHO) -> str:
    """``repr`` cut to ``limit`` characters (a 10,000-character key or answer is not echoed whole)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - an object whose repr fails is still named
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def safe_text(text: str, limit: int = _MAX_ECHO) -> str:
    """A learner's text for echoing: one line, at most ``limit`` characters."""
    t = " ".join(str(text).split())
    return t if len(t) <= limit else t[: limit - 1] + "…"


def _norm_choice(text: str) -> str:
    """Normalise a spelling: NFKC, lower case, quotes dropped, separators collapsed to '/'."""
    t = unicodedata.normalize("NFKC", str(text)).strip().strip("'\"“”‘’「」").lower()
    t = re.sub(r"[\s,;:_\-+|/（）()]+", "/", t)
    return t.strip("/")


@dataclass(frozen=True)
class Reading:
    """A learner's numeric answer in the exercise's unit: ``value``, or ``reason`` it is not one.

    ``note`` says what was converted ("已把 156.5 GiB 换算成 168 GB"), empty otherwise.
    """

    value: float | None
    reason: str | None = None
    note: str = ""


_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_NUMBER = re.compile(
    r"""^(?P<sign>[-+]?)\s*
        (?P<num>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)
        (?:\s*(?:[eE](?P<exp>[-+]?\d+)|[x×*·]\s*10\s*(?:\^|\*\*)\s*(?P<exp2>[-+]?\d+)))?
        \s*(?P<mult>万|亿)?
        \s*(?P<unit>.*?)\s*$""", re.VERBOSE)
_MULT = {"万": 1e4, "亿": 1e8}


def _prepare(text: str) -> str:
    """Superscript exponents, minus signs and width normalised; a leading '≈', '~', '约' dropped."""
    t = re.sub(r"10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+)", lambda m: "10^" + m.group(1).translate(_SUPERSCRIPT), str(text))
    t = unicodedata.normalize("NFKC", t).replace("\u2212", "-").replace("\u2013", "-").strip()
    t = re.sub(r"^(?:约|大约|≈|~|about)\s*", "", t)
    return re.sub(r"(?<=\d)_(?=\d)", "", t)


def _fmt_value(x: float) -> str:
    if x != 0 and (abs(x) >= 1e9 or abs(x) < 1e-3):
        return f"{x:.4g}"
    return f"{x:,.4g}" if abs(x) < 1e4 else f"{x:,.0f}"


def _unit_label(name: str) -> str:
    return name or "无量纲"


def _parse_text(text: str, unit: str) -> Reading:
    t = _prepare(text)
    if re.match(r"^[-+]?\d+,\d{1,2}(?!\d)", t) or re.match(r"^[-+]?\d+(?:,\d{3})*,\d{4,}", t):
        return Reading(None, "逗号只用作千位分隔（如 1,024）；小数点请用「.」")
    m = _NUMBER.match(t)
    if not m:
        return Reading(None, f"答案应是一个数字（单位：{_unit_label(unit)}），收到文字 {safe_text(text)!r}")
    num = m.group("num").replace(",", "")
    exp = m.group("exp") or m.group("exp2")
    mult = _MULT.get(m.group("mult") or "", 1.0)
    try:
        value = float(num) * (10.0 ** int(exp) if exp else 1.0) * mult
    except (OverflowError, ValueError):
        return Reading(None, "数字太大，超出了浮点数范围：检查单位或指数")
    if not math.isfinite(value):
        return Reading(None, "数字太大，超出了浮点数范围：检查单位或指数")
    if m.group("sign") == "-":
        value = -value
    typed = m.group("unit")
    if not typed:
        return Reading(value)
    if re.fullmatch(r"[\d.,\s]+", typed):
        return Reading(None, "数字中间不要有空格（千位分隔用逗号，如 1,024）")
    return _with_unit(value, typed, unit)


def _with_unit(value: float, typed: str, unit: str) -> Reading:
    """``value`` typed with unit text ``typed``, in the exercise's ``unit`` (converted, or refused)."""
    own = lookup(unit)
    if own is None:   # a unit outside the table: only its exact spelling is understood
        if normalise_unit(typed) == normalise_unit(unit):
            return Reading(value)
        return Reading(None, f"本题的单位是 {_unit_label(unit)}：请只填数字")
    if matches(typed, own):
        return Reading(value)
    other = find_unit(typed, prefer=own)
    expected = _unit_label(own.name)
    if other is None:
        return Reading(None, f"认不出单位「{safe_text(typed, 20)}」：本题的单位是 {expected}，填数字即可"
                             f"{'（也可以带上 ' + own.name + '）' if own.name else ''}")
    if other.quantity != own.quantity:
        if other.name == "%" or other.quantity == "share":
            return Reading(None, f"本题的单位是 {expected}，不是百分数：请填不带 % 的数")
        what = _QUANTITY_WORDS.get(other.quantity, other.quantity)
        want = _QUANTITY_WORDS.get(own.quantity, own.quantity)
        return Reading(None, f"本题问的是{want}，单位 {expected}；你写的 {other.name} 是{what}的单位，换算不了："
                             f"请填以 {expected} 为单位的数")
    converted = value * other.scale / own.scale
    if not math.isfinite(converted):
        return Reading(None, "数字太大，超出了浮点数范围：检查单位或指数")
    note = f"已把 {_fmt_value(value)} {other.name} 换算成 {_fmt_value(converted)} {expected}"
    return Reading(converted, None, note)


def read_number(given, unit: str) -> Reading:
    """A learner's numeric answer in ``unit`` (see the module docstring); never raises."""
    if isinstance(given, bool) or isinstance(given, np.bool_):
        return Reading(None, "True/False 不是数字：请填一个数")
    if isinstance(given, str):
        return _parse_text(given, unit)
    if not isinstance(given, numbers.Number):
        try:
            arr = np.asarray(given)
        except Exception:  # noqa: BLE001 - any odd object is simply not a number
            arr = None
        if arr is None or arr.shape != () or arr.dtype.kind not in "iuf":
            return Reading(None, f"答案应是一个数字（单位：{_unit_label(unit)}），收到 {type(given).__name__}")
        given = arr.item()
        if isinstance(given, bool):
            return Reading(None, "True/False 不是数字：请填一个数")
    if isinstance(given, complex):
        return Reading(None, "答案应是实数，收到复数")
    try:
        value = float(given)
    except OverflowError:
        return Reading(None, "数字太大，超出了浮点数范围：检查单位或指数")
    except (TypeError, ValueError):
        return Reading(None, f"答案应是一个数字（单位：{_unit_label(unit)}）")
    if math.isnan(value):
        return Reading(None, "答案不能是 NaN 或无穷大")
    if not math.isfinite(value):
        return Reading(None, "答案不能是 NaN 或无穷大")
    return Reading(value)


def _as_number(given, unit: str):
    """(value, None) or (None, reason): the older two-value form of :func:`read_number`."""
    r = read_number(given, unit)
    return r.value, r.reason
