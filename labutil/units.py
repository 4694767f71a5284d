"""Units used across the course, and conversions between them.

Conventions (see CONTRIBUTING.md, "Units"):

- ``_gb``   decimal gigabytes, 1e9 bytes (what vendors and nccl-tests print)
- ``_gib``  binary gibibytes, 2**30 bytes (what ``nvidia-smi`` and ``free -g`` print)
- ``_gbps`` gigabits per second, 1e9 bit/s (link rates: "400G" NDR, "25 GbE")
- ``_gbs``  gigabytes per second, 1e9 byte/s (memory and bus bandwidth, algbw/busbw)
- ``_tflops`` 1e12 floating-point operations per second
- ``_s``, ``_ms``, ``_us`` seconds, milliseconds, microseconds
- ``_w``, ``_kw``, ``_mw`` watts, kilowatts, megawatts

All functions accept Python numbers or numpy arrays and return the same kind. A string, bytes or
a bool is refused (``ArgumentTypeError``, a TypeError and a ValueError): ``"12" * 8`` would
otherwise be string repetition, not a unit conversion.
"""

from __future__ import annotations

from .validate import ArgumentTypeError
__all__ = ["BYTES_PER_GB", "BYTES_PER_GIB", "BYTES_PER_TB", "BYTES_PER_MB", "BYTES_PER_MIB", "BITS_PER_BYTE",
           "FLOPS_PER_TFLOP", "SECONDS_PER_HOUR", "SECONDS_PER_DAY", "HOURS_PER_DAY", "HOURS_PER_YEAR", "gb_to_gib",
           "gib_to_gb", "bytes_to_gb", "gb_to_bytes", "gbps_to_gbs", "gbs_to_gbps", "tflops_to_flops",
           "flops_to_tflops", "s_to_days", "days_to_s", "MAX_SIZE_BYTES", "parse_size", "format_bytes", "time_unit",
           "format_duration_s"]

BYTES_PER_GB = 1e9
BYTES_PER_GIB = 2.0**30
BYTES_PER_TB = 1e12
BYTES_PER_MB = 1e6
BYTES_PER_MIB = 2.0**20
BITS_PER_BYTE = 8
FLOPS_PER_TFLOP = 1e12
SECONDS_PER_HOUR = 3600.0
SECONDS_PER_DAY = 86400.0
HOURS_PER_DAY = 24.0
HOURS_PER_YEAR = 8760.0  # 365 days


def _num(name: str, x):
    """``x`` unchanged, unless it is a string, bytes or a bool (cheap: no array conversion)."""
    if isinstance(x, (str, bytes, bool)) or (type(x).__module__ == "numpy" and type(x).__name__ in ("bool", "bool_")):
        raise ArgumentTypeError(f"{name} must be a number or an array of numbers; got {x!r}")
    return x


def gb_to_gib(x_gb):
    """Decimal GB -> binary GiB (1 GB = 0.9313 GiB)."""
    return _num("x_gb", x_gb) * BYTES_PER_GB / BYTES_PER_GIB


def gib_to_gb(x_gib):
    """Binary GiB -> decimal GB (1 GiB = 1.0737 GB)."""
    return _num("x_gib", x_gib) * BYTES_PER_GIB / BYTES_PER_GB


def bytes_to_gb(n_bytes):
    return _num("n_bytes", n_bytes) / BYTES_PER_GB


def gb_to_bytes(x_gb):
    return _num("x_gb", x_gb) * BYTES_PER_GB


def gbps_to_gbs(x_gbps):
    """Link rate in Gbit/s -> GB/s (divide by 8). 400 Gbit/s NDR -> 50 GB/s."""
    return _num("x_gbps", x_gbps) / BITS_PER_BYTE


def gbs_to_gbps(x_gbs):
    """GB/s -> Gbit/s (multiply by 8)."""
    return _num("x_gbs", x_gbs) * BITS_PER_BYTE


def tflops_to_flops(x_tflops):
    return _num("x_tflops", x_tflops) * FLOPS_PER_TFLOP


def flops_to_tflops(x_flops):
    return _num("x_flops", x_flops) / FLOPS_PER_TFLOP


def s_to_days(x_s):
    return _num("x_s", x_s) / SECONDS_PER_DAY


def days_to_s(x_days):
    return _num("x_days", x_days) * SECONDS_PER_DAY


MAX_SIZE_BYTES = 2**40  # 1 TiB: above any single GPU's or lab node's memory; a larger size is a typo


def parse_size(text: str) -> int:
    """Parse a byte size as nccl-tests' ``-b/-e`` flags take it: ``8``, ``128K``, ``64M``, ``1G``.

    Suffixes are binary (K = 1024), as in nccl-tests ``src/common.cu`` (``parsesize``); a trailing
    ``B`` is allowed (``64MB`` = 64 MiB). The result must be finite and at most
    ``MAX_SIZE_BYTES`` (1 TiB): ``inf``, ``nan``, ``1e400`` and ``1e30T`` raise ValueError (a typo
    in a size flag must not allocate a node's whole memory). Raises ValueError naming the accepted form.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"size must be a non-empty string like '8', '128K', '64M' or '1G'; got {text!r}")
    s = text.strip().upper()
    if s.endswith("B") and len(s) > 1 and s[-2] in "KMGT":
        s = s[:-1]
    mult = 1
    if s[-1] in "KMGT":
        mult = 1024 ** ("KMGT".index(s[-1]) + 1)
        s = s[:-1]
    try:
        value = float(s)
    except ValueError:
        raise ValueError(f"size must be a number with an optional K/M/G/T suffix (binary); got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"size must be a finite number of bytes (<= 1T); got {text!r}")
    if value < 0:
        raise ValueError(f"size must be >= 0; got {text!r}")
    total = value * mult
    if total > MAX_SIZE_BYTES:
        raise ValueError(f"size must be <= {MAX_SIZE_BYTES} bytes (1T); got {text!r}")
    return int(total)


def format_bytes(n_bytes: float) -> str:
    """Human-readable binary size as nccl-tests prints sizes in its sweep (e.g. '128 MiB').

    NaN, inf and numbers beyond float's range raise ValueError."""
    try:
        n = float(_num("n_bytes", n_bytes))
    except OverflowError:
        raise ValueError(f"n_bytes must be a finite number of bytes; got an integer of {len(str(n_bytes))} digits") from None
    if n != n or n in (float("inf"), float("-inf")):
        raise ValueError(f"n_bytes must be a finite number of bytes; got {n_bytes!r}")
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" or n == int(n) else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


_TIME_UNITS = (("s", 1.0), ("min", 60.0), ("h", 3600.0), ("d", 86400.0))


def time_unit(seconds) -> tuple[str, float]:
    """The unit to print a duration (or the largest of several) in: ('s', 1) below 1 min, ('min', 60)
    below 2 h, ('h', 3600) below 3 days, else ('d', 86400). One sentence, one unit: pass the largest value."""
    s = abs(float(seconds))
    if s != s:
        raise ValueError(f"seconds must be a number; got {seconds!r}")
    if s < 60:
        return _TIME_UNITS[0]
    if s < 2 * 3600:
        return _TIME_UNITS[1]
    if s < 3 * 86400:
        return _TIME_UNITS[2]
    return _TIME_UNITS[3]


def format_duration_s(seconds, unit: str | None = None) -> str:
    """'1.6 s', '14 min', '2.4 h', '6.1 d' (3 significant digits at most, no '-0'); ``unit`` forces s/min/h/d."""
    scale = dict(_TIME_UNITS)
    if unit is None:
        unit, _ = time_unit(seconds)
    elif unit not in scale:
        raise ValueError(f"unit must be one of {list(scale)}; got {unit!r}")
    v = float(seconds) / scale[unit]
    if abs(v) < 0.05:
        return f"0 {unit}"
    text = f"{v:.1f}" if abs(v) < 10 else f"{v:.0f}"
    return f"{text} {unit}"
