"""Reading a learner's answer: a number (with its unit, in any common spelling) or a choice."""

from __future__ import annotations

import math
import numbers
import re
import unicodedata

import numpy as np


def _norm_choice(text: str) -> str:
    """Normalise a spelling: NFKC, lower case, quotes dropped, separators collapsed to '/'."""
    t = unicodedata.normalize("NFKC", str(text)).strip().strip("'\"“”‘’「」").lower()
    t = re.sub(r"[\s,;:_\-+|/（）()]+", "/", t)
    return t.strip("/")


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
