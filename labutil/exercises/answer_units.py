"""The units an exercise can be answered in: one table that drives both the reading of a typed unit
("156.5 GB", "2.4 次/天", "45％") and the unit slips the feedback may name.

Each row of :data:`UNITS` is one unit as an exercise writes it (``Exercise.unit``): the quantity it
measures, its size in that quantity's base unit (bytes, bytes/s, seconds, ...), the other spellings
a learner may type for it, and the *slip families* that make sense for it. A slip family
(:data:`SLIP_FAMILIES`) is a set of factors with the mistake each one suggests:

========== ============================================ =========================================
family     factors (given / reference)                  applies to
========== ============================================ =========================================
prefix     1000, 10^6 (k/M/G/T, ms vs s, kW vs MW)      units with an SI prefix in use
binary     1024, 2^20, 2^30/10^9 (7.4 %), 2^20/10^6     byte sizes and rates only: a 2-7 % ratio is a
           (4.9 %), 1.024 (2.4 %)                       unit slip nowhere else (an exercise on bits may
                                                        opt in: ch11.6, perftest's MB = 2^20 B)
bits       8 (bit vs byte)                              data sizes and rates only
time       between the unit's time and its neighbours   durations and per-time rates (年: 365, 12,
                                                        8760; 次/天: 24, 1440, 86400, 365 ...)
gpu_node   8 (GPUs per 8-GPU server)                    GPU counts ("张"), and server counts an
                                                        exercise marks with ``slip_families``
percent    100 (percent vs fraction)                    shares: "%", percentage points, factors
                                                        on 0..1
cny        10^4, 10^8 (元 vs 万元 vs 亿元)              amounts in yuan
========== ============================================ =========================================

A unit outside every family (PFLOP/s and FLOP/byte get ``prefix`` only; "倍", "条", "次" none) gets
only the neutral "check the order of magnitude" message for x10/x100/x1000, never a byte, bit or
time message. ``tests/test_exercises.py`` checks every registered exercise's unit is in this table
and that each applicable family's slip is named and no other family's is.

Typed units: the exercise's own unit and its aliases are accepted as written; another unit of the
same quantity is converted (GiB -> GB, Gb/s -> GB/s, min -> s, % -> fraction) with a note; a unit
of another quantity, or an unknown one, is refused with a message naming the expected unit.
Matching is exact after normalising width (NFKC), spaces and the multiplication dot; the case of
letters counts only where it carries meaning (b vs B), so "gbps" is Gb/s and "GBps" is GB/s.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .. import units as U

__all__ = ["NEUTRAL", "QUANTITIES", "SLIP_FAMILIES", "UNITS", "Slip", "Unit", "all_family_texts", "family_slips", "find_unit",
           "lookup", "normalise_unit"]


@dataclass(frozen=True)
class Slip:
    """One factor of a slip family; ``up``/``down`` is the message when the answer is factor x too big/small."""

    factor: float
    up: str
    down: str


def _sym(factor: float, text: str) -> Slip:
    return Slip(factor, text, text)


_PREFIX = "检查单位前缀（{examples}）"
SLIP_FAMILIES: dict[str, tuple[Slip, ...]] = {
    "prefix": (
        _sym(1e3, "差了 1000 倍：" + _PREFIX),
        _sym(1e6, "差了 10^6 倍：单位前缀差了两级（{examples}）"),
    ),
    "binary": (
        _sym(1024.0, "差了 1024 倍：KiB/MiB/GiB（2 的幂）与一级前缀混用了。"),
        _sym(2.0**20, "差了 2^20 倍：字节与 MiB（或 KiB 与 GiB）混用了。"),
        _sym(2.0**30 / 1e9, "差了约 7.4 %（= 2^30 / 10^9）：GB（10^9 B）与 GiB（2^30 B）混用了，nvidia-smi 的 MiB 也是 2 的幂。"),
        _sym(2.0**20 / 1e6, "差了约 4.9 %（= 2^20 / 10^6）：MB（10^6 B）与 MiB（2^20 B）混用了。"),
        _sym(1.024, "差了 2.4 %（= 1024 / 1000）：1000 与 1024 的前缀混用了（GB 与 GiB、kB 与 KiB）。"),
    ),
    "bits": (
        Slip(8.0, "差了 8 倍：你的数像是 bit 数，本题要 byte（Gb/s ÷ 8 = GB/s）。",
             "差了 8 倍：你的数像是 byte 数，本题要 bit（GB/s × 8 = Gb/s）。"),
    ),
    "time": (),   # generated per unit from its time base: see family_slips()
    "gpu_node": (
        Slip(8.0, "差了 8 倍：你的数像是 GPU 张数，本题问的是台数（一台 8 卡服务器 = 8 张 GPU）。",
             "差了 8 倍：你的数像是服务器台数，本题问的是 GPU 张数（一台 8 卡服务器 = 8 张 GPU）。"),
    ),
    "percent": (
        Slip(100.0, "差了 100 倍：是不是把已经是百分数的值又乘了 100？",
             "差了 100 倍：看起来你填的是小数（0–1）。" + "{convention}"),
    ),
    "fraction": (
        Slip(100.0, "差了 100 倍：本题填 0–1 之间的因子，不是百分数。", "差了 100 倍：检查小数点位置。"),
    ),
    "cny": (
        _sym(1e4, "差了 10^4 倍：元与万元混用了。"),
        _sym(1e8, "差了 10^8 倍：元与亿元混用了。"),
    ),
}

# Order-of-magnitude slips every unit may be told about (only when no family above matched).
NEUTRAL = (
    _sym(10.0, "差了 10 倍：检查小数点位置和数量级。"),
    _sym(100.0, "差了 100 倍：检查小数点位置和数量级。"),
    _sym(1000.0, "差了 1000 倍：检查数量级（千位、小数点）。"),
    _sym(1e6, "差了 10^6 倍：检查数量级。"),
)


@dataclass(frozen=True)
class Quantity:
    """What a unit measures; ``prefix_examples`` fills the prefix-slip message."""

    name: str
    prefix_examples: str = ""


QUANTITIES = {q.name: q for q in (
    Quantity("data", "B/kB/MB/GB/TB，MB 与 GB"),
    Quantity("data_rate", "MB/s 与 GB/s，Gb/s 与 Tb/s"),
    Quantity("time", "ms 与 s，µs 与 ms"),
    Quantity("frequency"),
    Quantity("flop", "GFLOP/TFLOP/PFLOP"),
    Quantity("flop_rate", "TFLOP/s 与 PFLOP/s"),
    Quantity("intensity", "TFLOP/s 除以 GB/s 时先换成同一级前缀"),
    Quantity("power", "W/kW/MW"),
    Quantity("usd", "USD 与 k/M USD"),
    Quantity("usd_per_year", "USD 与 M USD"),
    Quantity("cny_per_year"),
    Quantity("usd_per_gpu_hour"),
    Quantity("gpu_time"),
    Quantity("share"),
    Quantity("share_points"),
    Quantity("ratio"),
    Quantity("sample_rate"),
)}


@dataclass(frozen=True)
class Unit:
    """One row of the unit table (see the module docstring)."""

    name: str
    quantity: str
    scale: float
    aliases: tuple[str, ...] = ()
    families: tuple[str, ...] = ()
    noun_suffix: bool = False   # a count unit may be followed by its noun: "96 台交换机", "1024 个端口"
    time_base_s: float = 0.0    # the time in the unit (h: 3600) or in its denominator (次/天: 86400), for time slips
    per_time: bool = False      # a rate per time ("每天"), not a duration


_DATA = ("prefix", "binary", "bits")     # byte units
_BITS = ("prefix", "bits")               # bit units: a 2-7 % ratio is no unit slip (ch11.6 opts in for perftest MiB)
_HOUR, _DAY, _YEAR = U.SECONDS_PER_HOUR, U.SECONDS_PER_DAY, U.HOURS_PER_YEAR * U.SECONDS_PER_HOUR


def _count(name: str, quantity: str, *aliases: str, families: tuple[str, ...] = ()) -> Unit:
    return Unit(name, quantity, 1.0, aliases, families, noun_suffix=True)


UNITS_LIST: tuple[Unit, ...] = (
    # data sizes (base: byte)
    Unit("B", "data", 1.0, ("byte", "bytes", "字节", "Byte", "Bytes"), _DATA),
    Unit("KB", "data", 1e3, ("kB", "千字节"), _DATA),
    Unit("KiB", "data", 2.0**10, ("KIB", "kib"), _DATA),
    Unit("MB", "data", U.BYTES_PER_MB, ("兆字节", "Mbyte", "MByte"), _DATA),
    Unit("MiB", "data", U.BYTES_PER_MIB, ("MIB", "mib"), _DATA),
    Unit("GB", "data", U.BYTES_PER_GB, ("G", "GByte", "Gbyte", "吉字节"), _DATA),
    Unit("GiB", "data", U.BYTES_PER_GIB, ("GIB", "gib"), _DATA),
    Unit("TB", "data", U.BYTES_PER_TB, ("TByte",), _DATA),
    Unit("TiB", "data", 2.0**40, ("TIB", "tib"), _DATA),
    Unit("GB/卡", "data", U.BYTES_PER_GB, ("GB/GPU", "GB每卡", "GB/张", "GB per GPU", "GB"), _DATA),
    Unit("Gb", "data", U.BYTES_PER_GB / U.BITS_PER_BYTE, ("Gbit", "gbit"), _BITS),
    # data rates (base: byte/s)
    Unit("MB/s", "data_rate", U.BYTES_PER_MB, ("MBps", "MB/sec"), _DATA),
    Unit("GB/s", "data_rate", U.BYTES_PER_GB, ("GBps", "GB/sec", "GByte/s", "G字节/秒", "GB每秒"), _DATA),
    Unit("TB/s", "data_rate", U.BYTES_PER_TB, ("TBps", "TB/sec"), _DATA),
    Unit("GiB/s", "data_rate", U.BYTES_PER_GIB, ("GiBps",), _DATA),
    Unit("Mb/s", "data_rate", U.BYTES_PER_MB / 8, ("Mbps", "Mbit/s", "mbps", "mbit/s"), _BITS),
    Unit("Gb/s", "data_rate", U.BYTES_PER_GB / 8, ("Gbps", "gbps", "Gbit/s", "gbit/s", "Gb/sec", "Gbits/s", "G"), _BITS),
    Unit("Gbit/s", "data_rate", U.BYTES_PER_GB / 8, ("Gbps", "gbps", "Gb/s", "gbit/s", "Gbits/s", "G"), _BITS),
    Unit("Tb/s", "data_rate", U.BYTES_PER_TB / 8, ("Tbps", "tbps", "Tbit/s"), _BITS),
    # time (base: second)
    Unit("us", "time", 1e-6, ("µs", "μs", "微秒", "usec"), ("prefix",)),
    Unit("µs", "time", 1e-6, ("us", "μs", "微秒", "usec"), ("prefix",)),
    Unit("ms", "time", 1e-3, ("毫秒", "msec"), ("prefix",)),
    Unit("s", "time", 1.0, ("秒", "sec", "secs", "second", "seconds", "秒钟"), ("prefix", "time"), time_base_s=1.0),
    Unit("min", "time", 60.0, ("分钟", "分", "mins", "minute", "minutes"), ("time",), time_base_s=60.0),
    Unit("h", "time", _HOUR, ("小时", "个小时", "hr", "hrs", "hour", "hours"), ("time",), time_base_s=_HOUR),
    Unit("天", "time", _DAY, ("d", "day", "days", "日"), ("time",), time_base_s=_DAY),
    Unit("年", "time", _YEAR, ("y", "yr", "yrs", "year", "years"), ("time",), time_base_s=_YEAR),
    # frequencies (base: per second)
    Unit("次/天", "frequency", 1 / _DAY, ("/天", "次每天", "次/日", "/日", "/day", "per day", "/d", "次/d", "times/day"),
         ("time",), time_base_s=_DAY, per_time=True),
    Unit("次/小时", "frequency", 1 / _HOUR, ("/小时", "/h", "per hour", "次/h"), ("time",), time_base_s=_HOUR,
         per_time=True),
    Unit("次/年", "frequency", 1 / _YEAR, ("/年", "/year", "per year", "次/y"), ("time",), time_base_s=_YEAR,
         per_time=True),
    # compute
    Unit("FLOPs", "flop", 1.0, ("FLOP", "flop", "flops", "次浮点运算"), ("prefix",)),
    Unit("PFLOP", "flop", 1e15, ("PFLOPs",), ("prefix",)),
    Unit("TFLOP/s", "flop_rate", 1e12, ("TFLOPS", "TFLOPs/s", "tflops", "TFLOP/sec"), ("prefix",)),
    Unit("PFLOP/s", "flop_rate", 1e15, ("PFLOPS", "PFLOPs/s", "pflops", "PFLOP/sec"), ("prefix",)),
    Unit("EFLOP/s", "flop_rate", 1e18, ("EFLOPS", "eflops"), ("prefix",)),
    Unit("FLOP/byte", "intensity", 1.0, ("FLOP/B", "FLOPs/byte", "FLOPs/B", "flop/byte", "flop/B", "FLOP/字节"),
         ("prefix",)),
    Unit("FLOP/B", "intensity", 1.0, ("FLOP/byte", "FLOPs/byte", "FLOPs/B", "flop/byte", "flop/B", "FLOP/字节"),
         ("prefix",)),
    # power
    Unit("W", "power", 1.0, ("瓦",), ("prefix",)),
    Unit("kW", "power", 1e3, ("KW", "kw", "千瓦"), ("prefix",)),
    Unit("MW", "power", 1e6, ("mw", "兆瓦"), ("prefix",)),
    # money
    Unit("USD", "usd", 1.0, ("$", "美元", "usd", "US$"), ("prefix",)),
    Unit("M USD", "usd", 1e6, ("MUSD", "M$", "百万美元"), ("prefix",)),
    Unit("M USD/年", "usd_per_year", 1e6, ("MUSD/年", "M$/年", "百万美元/年", "M USD/yr", "M USD/year", "M USD"),
         ("prefix", "time"), time_base_s=_YEAR, per_time=True),
    Unit("USD/年", "usd_per_year", 1.0, ("$/年", "美元/年", "USD/yr", "USD/year"), ("prefix", "time"),
         time_base_s=_YEAR, per_time=True),
    Unit("元/年", "cny_per_year", 1.0, ("元", "元每年", "CNY/年", "RMB/年"), ("cny", "time"), time_base_s=_YEAR,
         per_time=True),
    Unit("万元/年", "cny_per_year", 1e4, ("万元", "万元每年"), ("cny", "time"), time_base_s=_YEAR, per_time=True),
    Unit("USD/GPU·h", "usd_per_gpu_hour", 1.0, ("USD/GPU-h", "USD/GPUh", "$/GPU·h", "$/GPU-h", "$/GPUh", "美元/GPU·h",
                                               "USD/GPU-hour", "美元/卡时", "USD/卡时", "USD/h", "$/h"), ("time",),
         time_base_s=_HOUR, per_time=True),
    Unit("GPU·h", "gpu_time", _HOUR, ("GPU-h", "GPUh", "GPU-hours", "GPU hours", "卡时", "GPU小时", "GPU·小时"), ("time",),
         time_base_s=_HOUR),
    # shares and ratios
    Unit("%", "share", 0.01, ("percent", "pct", "百分之"), ("percent",)),
    Unit("个百分点", "share_points", 1.0, ("百分点", "pp", "%", "percentage points", "percentage point"), ("percent",)),
    Unit("(0-1)", "share", 1.0, (), ("fraction",)),
    Unit("（0–1 之间的因子，不是百分数）", "share", 1.0, ("(0-1)",), ("fraction",)),
    Unit("", "ratio", 1.0, ("x", "×", "倍"), ()),
    Unit("倍", "ratio", 1.0, ("x", "×", "times", "X"), ()),
    Unit("样本/s", "sample_rate", 1.0, ("samples/s", "sample/s", "样本每秒", "个样本/s", "img/s", "张/s"), ("time",),
         time_base_s=1.0, per_time=True),
    # counts: each its own quantity (a server count is not convertible to a GPU count)
    _count("张", "gpus", "张卡", "张GPU", "GPU", "GPUs", "卡", "块", "块卡", families=("gpu_node",)),
    _count("张 GPU", "gpus", "张", "张卡", "张GPU", "GPU", "GPUs", "卡", "块", families=("gpu_node",)),
    _count("台", "machines", "台机器"),
    _count("个", "items"),
    _count("条", "lines"),
    _count("次", "events", "回"),
    _count("步", "steps", "steps", "step"),
    _count("项", "checks", "个", "checks"),
    _count("核", "cores", "个核", "cores", "core", "个CPU核", "CPU核"),
    _count("核/卡", "cores", "核/GPU", "核每卡", "cores/GPU", "个核/卡", "核", "个核", "cores"),
    _count("核/GPU", "cores", "核/卡", "核每卡", "cores/GPU", "个核/GPU", "核", "个核", "cores"),
    _count("对", "pairs", "pairs", "pair"),
)

UNITS: dict[str, Unit] = {u.name: u for u in UNITS_LIST}

# The time slips: the factors between the unit's own time (its denominator for a rate) and its neighbours.
_MONTH = _YEAR / 12
_TIME_NAMES = {1.0: "秒", 60.0: "分钟", _HOUR: "小时", _DAY: "天", _YEAR: "年"}
_MAX_TIME_FACTOR = 1e5   # s vs year (3.2e7) is no slip a learner makes


def _time_slips(unit: Unit) -> tuple[Slip, ...]:
    own = unit.time_base_s
    if own not in _TIME_NAMES:
        return ()
    others = dict(_TIME_NAMES)
    if own == _YEAR:
        others[_MONTH] = "月"
    by_factor: dict[float, list[str]] = {}
    for base, name in others.items():
        if base == own:
            continue
        factor = max(base, own) / min(base, own)
        if factor <= _MAX_TIME_FACTOR:
            by_factor.setdefault(round(factor, 6), []).append(name)
    me = _TIME_NAMES[own]
    slips = []
    for factor, names in sorted(by_factor.items()):
        each = [f"「每{me}」与「每{n}」" if unit.per_time else f"{me}与{n}" for n in names]
        pairs = each[0] + "".join(f"（或{e}）" for e in each[1:])
        slips.append(_sym(factor, f"差了 {factor:,.0f} 倍：{pairs}混用了。"))
    return tuple(slips)


def family_slips(family: str, unit: Unit | None) -> tuple[Slip, ...]:
    """The slips of ``family`` for ``unit`` (the time family depends on the unit's own time)."""
    if family == "time":
        return _time_slips(unit) if unit is not None else ()
    return SLIP_FAMILIES[family]


def all_family_texts(family: str) -> set[str]:
    """Every message ``family`` can produce, over all units of the table (for tests)."""
    if family == "time":
        return {t for u in UNITS_LIST for s in _time_slips(u) for t in (s.up, s.down)}
    return {t for s in SLIP_FAMILIES[family] for t in (s.up, s.down)}


def normalise_unit(text: str) -> str:
    """Width (NFKC), spaces and dots normalised, case kept: '％' -> '%', 'GPU ・ h' -> 'GPU·h'."""
    t = unicodedata.normalize("NFKC", str(text)).strip().replace("\u2013", "-").replace("\u2212", "-")
    t = re.sub(r"\s*[·•・⋅∙*]\s*", "·", t)
    t = re.sub(r"\s*/\s*", "/", t)
    t = re.sub(r"\s+", " ", t)
    return t.replace("μ", "µ")


def _fold(text: str) -> str:
    """Case-folded spelling for units whose letters carry no b/B distinction."""
    return normalise_unit(text).replace(" ", "").lower()


def _bit_or_byte_sensitive(text: str) -> bool:
    return bool(re.search(r"[bB]", text))


def lookup(unit_name: str) -> Unit | None:
    """The table row of an exercise's unit (``Exercise.unit``), or None when it is not in the table."""
    return UNITS.get(unit_name)


def _spellings(u: Unit) -> tuple[str, ...]:
    return (u.name, *u.aliases)


def _match(typed: str, spelling: str) -> bool:
    a, b = normalise_unit(typed), normalise_unit(spelling)
    if a == b or a.replace(" ", "") == b.replace(" ", ""):
        return True
    if _bit_or_byte_sensitive(b):       # Gb vs GB, Mb/s vs MB/s: only the exact case
        return False
    return _fold(a) == _fold(b)


def matches(typed: str, unit: Unit) -> bool:
    """True if ``typed`` is ``unit`` or one of its aliases (a count unit may carry its noun: '台交换机')."""
    if any(_match(typed, s) for s in _spellings(unit)):
        return True
    if unit.noun_suffix and unit.name:
        t = normalise_unit(typed).replace(" ", "")
        for s in _spellings(unit):
            s = normalise_unit(s).replace(" ", "")
            if s and t.startswith(s) and re.fullmatch(r"[\u4e00-\u9fffA-Za-z]{1,8}", t[len(s):] or "x"):
                return True
    return False


def find_unit(typed: str, prefer: Unit | None = None) -> Unit | None:
    """The table row ``typed`` names: ``prefer`` (the exercise's own unit) first, then the rest of the table.

    Among several rows that match (an alias shared by two units), one of the same quantity as
    ``prefer`` wins, so 'G' is GB in a GB exercise and Gb/s in a Gb/s exercise.
    """
    if prefer is not None and matches(typed, prefer):
        return prefer
    hits = [u for u in UNITS_LIST if u.name and any(_match(typed, s) for s in _spellings(u))]
    if not hits:
        return None
    if prefer is not None:
        same = [u for u in hits if u.quantity == prefer.quantity]
        if same:
            exact = [u for u in same if _match(typed, u.name)]
            return (exact or same)[0]
    exact = [u for u in hits if _match(typed, u.name)]
    return (exact or hits)[0]
