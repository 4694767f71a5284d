"""Parser for ``ibdiagnet`` (NVIDIA ibutils2 / ibdiag): the fabric-wide InfiniBand check.

Format (ibdiagnet2 standard output; NVIDIA "ibdiagnet User Manual" and public runs such as
pastebin.com/cY8nDJyD): stages separated by dashed rules, each a title line then messages prefixed
``-I-`` (info), ``-W-`` (warning) or ``-E-`` (error); the run ends with a ``Summary`` table::

    ---------------------------------------------
    Summary
    -I- Stage                     Warnings   Errors     Comment
    -I- Discovery                 0          0
    -I- Port Counters             2          0
    -I- Speed / Width checks      1          0
    -I- You can find detailed errors/warnings in: /var/tmp/ibdiagnet2/ibdiagnet2.log

Message texts change between releases; this parser keeps them as text and relies only on the
prefixes, the stage titles and the summary table. Garbage raises :class:`IbdiagnetParseError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._common import ANSI, ParseError, require_text

__all__ = ["IbdiagnetParseError", "Ibdiagnet", "IbdiagnetStage", "parse_ibdiagnet"]

_RULE = re.compile(r"^\s*-{10,}\s*$")
_MSG = re.compile(r"^\s*-([IWE])-\s?(.*)$")
_SUMMARY_HEAD = re.compile(r"^\s*Stage\s+Warnings\s+Errors\s+Comment\s*$")
_SUMMARY_ROW = re.compile(r"^\s*(\S.*?)\s{2,}(\d+)\s+(\d+)(?:\s+(.*?))?\s*$")
_NODES = re.compile(r"(\d+)\s+nodes\s*\((\d+)\s+Switches\s*&\s*(\d+)\s+CA-s\)", re.IGNORECASE)


class IbdiagnetParseError(ParseError):
    """``ibdiagnet`` output without any stage or message."""


@dataclass
class IbdiagnetStage:
    name: str
    warnings: int
    errors: int
    comment: str = ""


@dataclass
class Ibdiagnet:
    """Parsed run: the summary table, every message by stage, and the discovered node counts."""

    stages: list = field(default_factory=list)        # IbdiagnetStage rows of the Summary table
    messages: list = field(default_factory=list)      # (stage title, level 'I'/'W'/'E', text)
    nodes: int | None = None
    switches: int | None = None
    cas: int | None = None

    def stage(self, name: str) -> IbdiagnetStage | None:
        for s in self.stages:
            if s.name.lower() == name.lower():
                return s
        return None

    @property
    def total_warnings(self) -> int:
        return sum(s.warnings for s in self.stages) if self.stages else sum(1 for m in self.messages if m[1] == "W")

    @property
    def total_errors(self) -> int:
        return sum(s.errors for s in self.stages) if self.stages else sum(1 for m in self.messages if m[1] == "E")

    def findings(self, level: str = "W") -> list:
        """(stage, text) of every message of ``level`` ('W' or 'E')."""
        if level not in ("I", "W", "E"):
            raise ValueError(f"level must be 'I', 'W' or 'E'; got {level!r}")
        return [(st, txt) for st, lv, txt in self.messages if lv == level]


def parse_ibdiagnet(text) -> Ibdiagnet:
    """Parse ``ibdiagnet`` standard output. Raises :class:`IbdiagnetParseError` on garbage.

    >>> r = parse_ibdiagnet("Summary\\n-I- Stage  Warnings   Errors     Comment\\n-I- Discovery   0   0\\n")
    >>> r.stage("Discovery").errors
    0
    """
    try:
        text = require_text(text, "ibdiagnet")
    except ParseError as e:
        raise IbdiagnetParseError(str(e)) from None
    out = Ibdiagnet()
    stage = None
    in_summary = False
    lines = [ANSI.sub("", ln).rstrip() for ln in text.split("\n")]
    for i, line in enumerate(lines):
        if not line.strip() or _RULE.match(line):
            continue
        prev = lines[i - 1] if i else ""
        m = _MSG.match(line)
        if m is None:
            # a stage title: a bare line right after a dashed rule (or the first bare line)
            if _RULE.match(prev) or stage is None or line.strip() == "Summary":
                stage = line.strip()
                in_summary = stage == "Summary"
            elif line[:1].isspace() and out.messages:
                # an indented detail line belongs to the message above it (counter name : value)
                st, lv, txt = out.messages[-1]
                out.messages[-1] = (st, lv, f"{txt} | {' '.join(line.split())}")
            continue
        level, body = m.group(1), m.group(2).strip()
        if in_summary:
            if _SUMMARY_HEAD.match(body):
                continue
            row = _SUMMARY_ROW.match(body)
            if row and level == "I":
                out.stages.append(IbdiagnetStage(row.group(1), int(row.group(2)), int(row.group(3)),
                                                 (row.group(4) or "").strip()))
                continue
        out.messages.append((stage or "", level, body))
        n = _NODES.search(body)
        if n:
            out.nodes, out.switches, out.cas = (int(n.group(k)) for k in (1, 2, 3))
    if not out.stages and not out.messages:
        raise IbdiagnetParseError("ibdiagnet: no '-I-/-W-/-E-' message and no Summary table found")
    return out
