"""The evidence type every recogniser emits (:class:`Signal`) and the helpers block and line
recognisers share: quoting a line, trying a parser, turning :mod:`labutil.health` findings into signals."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ... import parsers as P

__all__ = ["Signal", "Fragment", "quote", "host_of", "try_parse", "findings_to_signals"]

_LAYER_OF_SEV = {"critical": "fail", "warning": "warn", "info": "info"}


@dataclass(frozen=True)
class Signal:
    """One piece of evidence: ``verdict`` 'fail' | 'warn' (points at ``layer``), 'pass' (the layer
    looked healthy) or 'info'; ``weight`` 0-1; ``direct`` False for symptoms that any layer can
    cause (they are discounted when that layer has healthy evidence); ``line`` the quoted text."""

    layer: str
    kind: str
    verdict: str
    weight: float
    line: str
    message: str
    source: str
    check: str
    direct: bool = True


@dataclass
class Fragment:
    name: str
    text: str
    kinds: list
    signals: list



_HOST_PREFIX = re.compile(r"(?:^|\s)([A-Za-z][\w.-]*):(\d+):(\d+)\s+\[\d+\]")


def _host_of(line: str) -> str | None:
    m = _HOST_PREFIX.search(line)
    return m.group(1) if m else None


def _quote(line: str, n: int = 220) -> str:
    s = " ".join(line.strip().split())
    return s if len(s) <= n else s[: n - 3] + "..."



def _try(parser, text):
    try:
        return parser(text)
    except (P.ParseError, ValueError, KeyError, IndexError, TypeError, AttributeError, ZeroDivisionError):
        return None


def _findings_to_signals(findings, layer, kind, source, check, quote_fn=None, healthy_weight=0.0,
                         healthy_msg="", fail_weight=0.85, warn_weight=0.5, fallback_line=""):
    out = []
    bad = [f for f in findings if f.severity in ("critical", "warning")]
    for f in bad:
        v = _LAYER_OF_SEV[f.severity]
        line = quote_fn(f) if quote_fn else f"{f.component}: {f.check} = {f.value} (expected {f.expected})"
        out.append(Signal(layer, kind, v, fail_weight if v == "fail" else warn_weight, _quote(line),
                          f"{f.component}: {f.message}", source, check))
    if not bad and healthy_weight > 0:
        out.append(Signal(layer, kind, "pass", healthy_weight, _quote(fallback_line), healthy_msg, source, check))
    return out

# public spellings (the underscore names stay for the recognisers' own use)
quote, host_of, try_parse, findings_to_signals = _quote, _host_of, _try, _findings_to_signals
