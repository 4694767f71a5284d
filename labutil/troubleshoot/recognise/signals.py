"""The evidence type every recogniser emits (:class:`Signal`) and the helpers block and line
recognisers share: quoting a line, trying a parser, turning :mod:`labutil.health` findings into signals."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ... import parsers as P

__all__ = ["Signal", "Fragment", "quote", "host_of", "try_parse", "findings_to_signals", "lines_containing"]

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
    #: where the line came from: "tool output" (a tool's / a log's line), "notes" (a sentence of notes that
    #: quotes an error message verbatim), "quoted in notes" (a fragment quoted, or pasted without quotes, inside a
    #: sentence), "failure signature" (an observation described in words, signatures.toml) or "layer lexicon"
    #: (the notes name parts of one layer: labutil.troubleshoot.lexicon, the low-confidence fallback)
    origin: str = "tool output"


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



def _try(parser, text, ctx=None, what=None):
    """``parser(text)``, or None when it raises. With ``ctx`` and ``what`` (the tool), a ParseError on
    a block of output (>= 4 non-blank lines: not a single quoted line) is recorded in
    ``ctx['unread']``, so the diagnosis can say that part of the paste could not be read instead
    of answering from the rest as if it were complete."""
    try:
        return parser(text)
    except P.ParseError as exc:
        if ctx is not None and what and sum(1 for ln in text.split("\n") if ln.strip()) >= 4:
            ctx.setdefault("unread", []).append(f"looks like {what} output but could not be read: {exc}")
        return None
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, ZeroDivisionError):
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

def lines_containing(text: str, word: str, low: str | None = None):
    """The lines of ``text`` that contain ``word`` (lowercase; matched in ``low = text.lower()``),
    found with str.find: linear in the text however many lines it has and however long they are."""
    low = text.lower() if low is None else low
    i = low.find(word)
    while i >= 0:
        a = low.rfind("\n", 0, i) + 1
        b = low.find("\n", i)
        b = len(low) if b < 0 else b
        yield text[a:b]
        i = low.find(word, b)


# public spellings (the underscore names stay for the recognisers' own use)
quote, host_of, try_parse, findings_to_signals = _quote, _host_of, _try, _findings_to_signals
