"""Argument checks shared by every model, with one error style.

Every check raises ``ValueError`` whose message names the parameter, the accepted range and
the value received, e.g. ``n_gpus must be an integer >= 1; got 0``. A string or a bool where a
number is expected (``"12"``, ``True``) raises ``ArgumentTypeError``, which is both a TypeError
and a ValueError: numpy would silently read ``"12"`` as 12.0. Catalog look-ups raise
``KeyError`` listing the closest known names (see ``labutil.hardware``). Checks accept Python
numbers and numpy arrays; arrays are checked element-wise and returned as float arrays, so a
model never silently propagates NaN or a negative time.
"""

from __future__ import annotations

import difflib
import math
from typing import Iterable, Sequence

import numpy as np

__all__ = ["ArgumentTypeError", "is_scalar", "scalar_or_array", "number", "positive", "fraction", "integer", "choice",
           "closest_names", "unknown_name"]


class ArgumentTypeError(TypeError, ValueError):
    """A parameter of the wrong type (a string or a bool where a number is expected).

    Both a TypeError and a ValueError, so callers catching either see it."""


def _reject_non_numeric(name: str, value) -> None:
    """Strings, bytes and bools are not numbers, even when numpy could convert them ("12" -> 12.0)."""
    if isinstance(value, (bool, np.bool_)):
        raise ArgumentTypeError(f"{name} must be a number; got a bool ({value!r})")
    if isinstance(value, (str, bytes)):
        raise ArgumentTypeError(f"{name} must be a number; got a string ({value!r})")
    if isinstance(value, (list, tuple)):
        for v in value:
            _reject_non_numeric(name, v)
    elif isinstance(value, np.ndarray) and value.dtype.kind not in "iuf":
        if value.dtype.kind == "O":
            for v in value.ravel():
                _reject_non_numeric(name, v)
        else:
            raise ArgumentTypeError(f"{name} must be numeric; got an array of dtype {value.dtype}")


def _short(value) -> str:
    """repr of a value for an error message, shortened (a 400-digit int is not echoed whole)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:25]}...{text[-10:]} ({len(text)} characters)"


def _as_array(name: str, value) -> np.ndarray:
    _reject_non_numeric(name, value)
    try:
        arr = np.asarray(value, dtype=float)
    except OverflowError:  # an int beyond float's range (10**400): a value, not a type, problem
        raise ValueError(f"{name} must be a finite number (|x| < 1.8e308); got {_short(value)}") from None
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{name} must be a number or an array of numbers; got {_short(value)}") from None
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not be NaN; got {value!r}")
    return arr


def is_scalar(*values) -> bool:
    """True when every value is a scalar (0-d): a vectorised model then returns a Python float.

    >>> is_scalar(1.0, 2), is_scalar(1.0, [1, 2])
    (True, False)
    """
    return all(np.ndim(v) == 0 for v in values)


def scalar_or_array(x, scalar: bool | None = None):
    """A model's return value: ``float(x)`` when ``scalar`` (default: when ``x`` is 0-d), otherwise
    ``x`` as a float array. The one copy of "a float for scalar input, the array otherwise".

    >>> scalar_or_array(np.float64(2.5)), scalar_or_array([1, 2]).tolist()
    (2.5, [1.0, 2.0])
    >>> scalar_or_array(np.array([3.0]), scalar=False).shape
    (1,)
    """
    a = np.asarray(x, dtype=float)
    if scalar is None:
        scalar = a.ndim == 0
    return float(a.reshape(())) if scalar else a


def number(name: str, value, *, lo: float = -math.inf, hi: float = math.inf,
           lo_open: bool = False, hi_open: bool = False, allow_inf: bool = False):
    """Check ``lo <= value <= hi`` (open ends if asked) for a scalar or every array element."""
    arr = _as_array(name, value)
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite; got {value!r}")
    bad = (arr <= lo) if lo_open else (arr < lo)
    bad |= (arr >= hi) if hi_open else (arr > hi)
    if bad.any():
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        shown = value if arr.ndim == 0 else _g(arr[bad].ravel()[0])
        raise ValueError(f"{name} must be in {left}{_fmt(lo)}, {_fmt(hi)}{right}; got {shown!r}")
    return scalar_or_array(arr)


def positive(name: str, value, *, allow_zero: bool = False, allow_inf: bool = False):
    """Check value > 0 (or >= 0 with ``allow_zero``); scalars or arrays."""
    arr = _as_array(name, value)
    if not allow_inf and np.isinf(arr).any():
        raise ValueError(f"{name} must be finite; got {value!r}")
    bad = arr < 0 if allow_zero else arr <= 0
    if bad.any():
        shown = value if arr.ndim == 0 else _g(arr[bad].ravel()[0])
        rule = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be {rule}; got {shown!r}")
    return scalar_or_array(arr)


def fraction(name: str, value, *, allow_zero: bool = False, allow_one: bool = True):
    """Check 0 < value <= 1 (a utilisation, an efficiency, a probability)."""
    return number(name, value, lo=0.0, hi=1.0, lo_open=not allow_zero, hi_open=not allow_one)


def integer(name: str, value, *, lo: int = 1, hi: int | None = None):
    """Check an integer ``lo <= value <= hi``; scalars (returned as int) or integer arrays."""
    if isinstance(value, (bool, np.bool_)):
        raise ArgumentTypeError(f"{name} must be an integer >= {lo}; got a bool ({value!r})")
    arr = _as_array(name, value)
    if np.isinf(arr).any() or (arr != np.round(arr)).any():
        raise ValueError(f"{name} must be an integer >= {lo}; got {value!r}")
    bad = arr < lo
    if hi is not None:
        bad |= arr > hi
    if bad.any():
        shown = value if arr.ndim == 0 else _g(arr[bad].ravel()[0])
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise ValueError(f"{name} must be an integer {rng}; got {shown!r}")
    if arr.ndim == 0:
        return int(arr)
    if (np.abs(arr) > np.iinfo(np.int64).max).any():
        raise ValueError(f"{name} must be integers within int64 (|x| < 2**63) in an array; got {_g(arr.max())}")
    return arr.astype(np.int64)


def choice(name: str, value, choices: Sequence[str]):
    """Check that ``value`` is one of ``choices`` (for option strings such as algorithm names)."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}; got {value!r}")
    return value


def closest_names(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Names in ``known`` closest to ``name`` (case-insensitive), for KeyError messages."""
    known = list(known)
    lower = {k.lower(): k for k in known}
    hits = difflib.get_close_matches(name.lower(), list(lower), n=n, cutoff=0.3)
    return [lower[h] for h in hits]


def unknown_name(kind: str, name: str, known: Iterable[str]) -> KeyError:
    """A KeyError for an unknown catalog/preset name that lists the closest known names."""
    known = sorted(known)
    close = closest_names(str(name), known)
    hint = f" Closest: {close}." if close else ""
    return KeyError(f"unknown {kind} {name!r}.{hint} Known: {known}")


def _g(x) -> float | int:
    """A numpy scalar as a plain Python number, for readable messages."""
    x = float(x)
    return int(x) if x.is_integer() else x


def _fmt(x: float) -> str:
    if x == math.inf:
        return "inf"
    if x == -math.inf:
        return "-inf"
    return f"{x:g}"
