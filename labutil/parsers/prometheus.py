r"""Prometheus text exposition format: parser and writer (ch14, ch26).

What ``curl localhost:9400/metrics`` returns from NVIDIA dcgm-exporter (or any Prometheus
exporter): ``# HELP`` / ``# TYPE`` lines and samples ``NAME{label="value",...} VALUE [TIMESTAMP_MS]``.
Format: Prometheus "Exposition formats" (text-based format, version 0.0.4): metric names
``[a-zA-Z_:][a-zA-Z0-9_:]*``, label names ``[a-zA-Z_][a-zA-Z0-9_]*``, label values escape ``\\``,
``\"`` and ``\n``, values are Go floats including ``NaN``, ``+Inf``, ``-Inf``. Garbage raises
:class:`PromParseError` (a :class:`ParseError`, hence a ``ValueError``) naming the line.
:func:`format_prometheus_text` writes an :class:`Exposition` back (round trip). Unlike
``prometheus_client.parser``, names are kept as exposed (that parser renames counters to
``..._total``, which would break PromQL on dcgm-exporter's counters). ``promtool check metrics``
parses the course's sample the same way (tests/test_promtool.py).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .. import validate
from ._common import ParseError

__all__ = ["PromParseError", "PromSample", "MetricFamily", "Exposition", "parse_prometheus_text",
           "format_prometheus_text", "METRIC_NAME", "format_value", "escape_label_value"]


class PromParseError(ParseError):
    """Garbage, empty or malformed Prometheus text exposition (a ``ValueError``)."""


TOOL = "Prometheus text exposition"
METRIC_TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_NAME = METRIC_NAME
_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_FLOAT = re.compile(r"^[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|[Nn]a[Nn]|[Ii]nf|[Ii]nfinity)$")
_TS = re.compile(r"^-?\d+$")
_ESC = {"\\": "\\", '"': '"', "n": "\n"}


@dataclass(frozen=True)
class PromSample:
    name: str
    labels: tuple           # sorted ((label, value), ...) pairs: hashable, order-independent
    value: float
    timestamp_ms: int | None = None

    def label(self, key: str, default=None):
        return dict(self.labels).get(key, default)


@dataclass
class MetricFamily:
    name: str
    type: str = "untyped"
    help: str = ""
    samples: list = field(default_factory=list)


@dataclass
class Exposition:
    families: dict                      # name -> MetricFamily, in order of first appearance

    @property
    def samples(self) -> list:
        return [s for f in self.families.values() for s in f.samples]

    def names(self) -> list[str]:
        return [n for n, f in self.families.items() if f.samples]

    def family(self, name: str) -> MetricFamily:
        if name not in self.families:
            raise validate.unknown_name("metric", name, self.families)
        return self.families[name]

    def select(self, name: str, **labels) -> list:
        """Samples of metric ``name`` whose labels include every ``label=value`` given."""
        want = {k: str(v) for k, v in labels.items()}
        return [s for s in self.family(name).samples if all(s.label(k) == v for k, v in want.items())]

    def value(self, name: str, **labels) -> float:
        """The single sample of ``name`` matching ``labels`` (KeyError if none, ValueError if several)."""
        hits = self.select(name, **labels)
        if not hits:
            raise KeyError(f"no sample of {name} with labels {labels}")
        if len(hits) > 1:
            raise ValueError(f"{len(hits)} samples of {name} match {labels}; add labels to pick one")
        return hits[0].value


def _fail(lineno: int, msg: str, line: str) -> PromParseError:
    shown = line if len(line) <= 120 else line[:117] + "..."
    return PromParseError(f"{TOOL}: line {lineno}: {msg}: {shown!r}")


def _parse_float(tok: str, lineno: int, line: str) -> float:
    if not _FLOAT.match(tok):
        raise _fail(lineno, f"value {tok!r} is not a number", line)
    low = tok.lower().lstrip("+")
    if low in ("nan",):
        return math.nan
    if low in ("inf", "infinity"):
        return math.inf
    if low in ("-inf", "-infinity"):
        return -math.inf
    return float(tok)


def _parse_labels(s: str, i: int, lineno: int, line: str):
    """Parse ``{a="x",b="y"}`` starting at s[i] == '{'; return (pairs, index after '}')."""
    pairs: dict = {}
    i += 1
    n = len(s)
    while True:
        while i < n and s[i] in " \t":
            i += 1
        if i < n and s[i] == "}":
            return tuple(sorted(pairs.items())), i + 1
        m = _LABEL.match(s, i)
        if not m:
            raise _fail(lineno, "expected a label name or '}'", line)
        key = m.group(0)
        i = m.end()
        while i < n and s[i] in " \t":
            i += 1
        if i >= n or s[i] != "=":
            raise _fail(lineno, f"expected '=' after label {key!r}", line)
        i += 1
        while i < n and s[i] in " \t":
            i += 1
        if i >= n or s[i] != '"':
            raise _fail(lineno, f"label {key!r} value must be double-quoted", line)
        i += 1
        buf = []
        while True:
            if i >= n:
                raise _fail(lineno, f"unterminated value of label {key!r}", line)
            c = s[i]
            if c == "\\":
                if i + 1 >= n:
                    raise _fail(lineno, f"dangling escape in label {key!r}", line)
                buf.append(_ESC.get(s[i + 1], "\\" + s[i + 1]))
                i += 2
                continue
            if c == '"':
                i += 1
                break
            buf.append(c)
            i += 1
        if key in pairs:
            raise _fail(lineno, f"duplicate label {key!r}", line)
        pairs[key] = "".join(buf)
        while i < n and s[i] in " \t":
            i += 1
        if i < n and s[i] == ",":
            i += 1
            continue
        if i < n and s[i] == "}":
            return tuple(sorted(pairs.items())), i + 1
        raise _fail(lineno, "expected ',' or '}' after a label value", line)


def _unescape_help(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "\\": "\\"}.get(m.group(1), "\\" + m.group(1)), s)


def parse_prometheus_text(text) -> Exposition:
    """Parse Prometheus text exposition (e.g. ``curl -s localhost:9400/metrics`` of dcgm-exporter).

    Returns an :class:`Exposition` (families with HELP, TYPE and samples). Raises
    :class:`PromParseError` on empty input, input without any sample, or any malformed line
    (bad metric or label name, unterminated label value, non-numeric value, conflicting TYPE).
    Comments other than HELP/TYPE are ignored, as Prometheus does.
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise PromParseError(f"{TOOL}: expected text; got {type(text).__name__}")
    if not text.strip():
        raise PromParseError(f"{TOOL}: the output is empty")
    families: dict = {}

    def fam(name: str) -> MetricFamily:
        if name not in families:
            families[name] = MetricFamily(name)
        return families[name]

    seen: set = set()
    for lineno, raw in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            parts = line[1:].strip().split(None, 2)
            if len(parts) >= 2 and parts[0] in ("HELP", "TYPE"):
                if not _NAME.fullmatch(parts[1]):
                    raise _fail(lineno, f"bad metric name {parts[1]!r} in # {parts[0]}", line)
                f = fam(parts[1])
                if parts[0] == "HELP":
                    f.help = _unescape_help(parts[2]) if len(parts) == 3 else ""
                else:
                    typ = parts[2].strip() if len(parts) == 3 else ""
                    if typ not in METRIC_TYPES:
                        raise _fail(lineno, f"unknown metric type {typ!r} (known: {list(METRIC_TYPES)})", line)
                    if f.type != "untyped" and f.type != typ:
                        raise _fail(lineno, f"second TYPE for {parts[1]!r}", line)
                    f.type = typ
            continue
        m = _NAME.match(line)
        if not m:
            raise _fail(lineno, "expected a metric name", line)
        name = m.group(0)
        i = m.end()
        labels: tuple = ()
        if i < len(line) and line[i] == "{":
            labels, i = _parse_labels(line, i, lineno, line)
        rest = line[i:]
        if rest and rest[0] not in " \t":
            raise _fail(lineno, "expected a space before the value", line)
        toks = rest.split()
        if not toks:
            raise _fail(lineno, "missing value", line)
        if len(toks) > 2:
            raise _fail(lineno, "trailing text after value and timestamp", line)
        value = _parse_float(toks[0], lineno, line)
        ts = None
        if len(toks) == 2:
            if not _TS.match(toks[1]):
                raise _fail(lineno, f"timestamp {toks[1]!r} is not an integer (ms)", line)
            ts = int(toks[1])
        key = (name, labels)
        if key in seen:
            raise _fail(lineno, "duplicate sample (same name and labels)", line)
        seen.add(key)
        fam(name).samples.append(PromSample(name, labels, value, ts))
    if not seen:
        raise PromParseError(f"{TOOL}: no metric samples found (only comments or blank lines)")
    return Exposition(families)


def format_value(v: float) -> str:
    """A sample value as Prometheus writes it (NaN, +Inf, -Inf, integers without '.0')."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v)) if not float(v).is_integer() or abs(v) >= 1e16 else str(int(v))


def escape_label_value(v: str) -> str:
    """Escape a label value for the text format (backslash, double quote, newline)."""
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def format_prometheus_text(expo: Exposition) -> str:
    """Write an :class:`Exposition` in the text format (HELP, TYPE, then samples per family)."""
    out = []
    for f in expo.families.values():
        if f.help:
            out.append(f"# HELP {f.name} {f.help.replace(chr(92), chr(92) * 2).replace(chr(10), chr(92) + 'n')}")
        if f.type != "untyped":
            out.append(f"# TYPE {f.name} {f.type}")
        for s in f.samples:
            lab = ",".join(f'{k}="{escape_label_value(v)}"' for k, v in s.labels)
            ts = f" {s.timestamp_ms}" if s.timestamp_ms is not None else ""
            out.append(f"{s.name}{{{lab}}} {format_value(s.value)}{ts}" if lab else f"{s.name} {format_value(s.value)}{ts}")
    return "\n".join(out) + "\n"
