"""Parser for ``mlxlink -d <dev> [-m] [-c] [-e]`` (NVIDIA MFT / mstflint): link state, FEC and BER of one port.

Format (mstflint ``mlxlink`` text mode): titled sections, each title underlined with dashes, then
``Key <spaces> : value`` lines::

    Operational Info
    ----------------
    State                              : Active
    Physical state                     : LinkUp
    Speed                              : IB-NDR
    Width                              : 4x
    FEC                                : Ethernet_Consortium_LL_50G_RS_FEC_PLR -(272,257+1)
    ...
    Troubleshooting Info
    --------------------
    Recommendation                     : No issue was observed

    Physical Counters and BER Info                  (-c)
    ------------------------------
    Time Since Last Clear [Min]        : 348349.5
    Effective Physical Errors          : 0
    Effective Physical BER             : 15E-255
    Raw Physical Errors Per Lane       : 3946476397,5120336064,7692183445,3026261414
    Link Down Counter                  : 0
    Link Error Recovery Counter        : 0
    Raw Physical BER                   : 2E-9

BER values are printed as ``<coef>E-<magnitude>`` (``15E-255`` is how mlxlink prints "no error
seen": ``labutil.links.diagnose_link`` treats anything below 1e-250 as zero). On a terminal mlxlink
colours values with ANSI codes; they are removed. ``-e`` adds the eye-opening section and
``--json`` a JSON form that this parser does not read. The link rules are a model:
``labutil.links.diagnose_link``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ._common import ANSI, ParseError, decode_text, normalise_text, require_text, to_float, to_int

__all__ = ["MlxlinkParseError", "Mlxlink", "parse_mlxlink", "parse_ber"]

_KV = re.compile(r"^\s*([^:\s][^:]*?)\s*:\s*(.*?)\s*$")   # a key starts with a character that is not ':'
_NA = ("", "N/A", "NA", "-", "--")
_RULE = re.compile(r"^\s*-{3,}\s*$")
_BER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*[eE]\s*([-+]?\d+)\s*$")


class MlxlinkParseError(ParseError):
    """``mlxlink`` output without one recognisable section."""


def parse_ber(text) -> float | None:
    """One BER value as mlxlink prints it: '2E-9' -> 2e-09, '15E-255' -> 1.5e-254, '0' -> 0.0.

    None for no value ('N/A', 'NA', '-', empty, ``None``). Anything else (words, several lines of a
    paste) raises :class:`MlxlinkParseError`: a damaged value is rejected, never read as 'no value'.
    Bytes in any encoding, ANSI colour, NBSP and byte-order marks are accepted like every parser's input.
    """
    if text is None:
        return None
    if isinstance(text, (bytes, bytearray)):
        text = decode_text(bytes(text))
    s = normalise_text(str(text)).strip()
    if s.upper() in _NA:
        return None
    m = _BER.match(s)
    if m:
        try:
            v = float(m.group(1)) * 10.0 ** int(m.group(2))
        except OverflowError:
            return None
        return v if math.isfinite(v) else None
    if re.fullmatch(r"[-+]?\d+(?:\.\d+)?", s):
        return to_float(s)
    raise MlxlinkParseError(f"mlxlink: not a BER value (expected e.g. '2E-9', '15E-255' or 'N/A'): {s[:60]!r}")


@dataclass
class Mlxlink:
    """Sections of one ``mlxlink`` run: {'Operational Info': {'State': 'Active', ...}, ...}."""

    sections: dict = field(default_factory=dict)

    def get(self, section: str, key: str, default=None):
        return self.sections.get(section, {}).get(key, default)

    @property
    def state(self) -> str | None:
        return self.get("Operational Info", "State")

    @property
    def physical_state(self) -> str | None:
        return self.get("Operational Info", "Physical state")

    @property
    def speed(self) -> str | None:
        return self.get("Operational Info", "Speed")

    @property
    def width(self) -> int | None:
        w = self.get("Operational Info", "Width")
        m = re.match(r"^\s*(\d+)\s*x\s*$", w or "", re.IGNORECASE)
        return int(m.group(1)) if m else None

    @property
    def fec(self) -> str | None:
        return self.get("Operational Info", "FEC")

    @property
    def recommendation(self) -> str | None:
        return self.get("Troubleshooting Info", "Recommendation")

    def _counter(self, key: str) -> int | None:
        return to_int(self.get("Physical Counters and BER Info", key))

    def _ber(self, key: str) -> float | None:
        try:
            return parse_ber(self.get("Physical Counters and BER Info", key))
        except ParseError:   # a field that is not a BER value reads as unknown
            return None

    @property
    def has_counters(self) -> bool:
        return "Physical Counters and BER Info" in self.sections

    @property
    def effective_errors(self) -> int | None:
        return self._counter("Effective Physical Errors")

    @property
    def effective_ber(self) -> float | None:
        return self._ber("Effective Physical BER")

    @property
    def raw_ber(self) -> float | None:
        return self._ber("Raw Physical BER")

    @property
    def raw_errors_per_lane(self) -> list:
        v = self.get("Physical Counters and BER Info", "Raw Physical Errors Per Lane") or ""
        out = [to_int(x) for x in v.split(",") if x.strip()]
        return [x for x in out if x is not None]

    @property
    def link_down(self) -> int | None:
        return self._counter("Link Down Counter")

    @property
    def link_error_recovery(self) -> int | None:
        return self._counter("Link Error Recovery Counter")

    @property
    def minutes_since_clear(self) -> float | None:
        v = to_float(self.get("Physical Counters and BER Info", "Time Since Last Clear [Min]"))
        return v if v is not None and v >= 0 else None


def parse_mlxlink(text) -> Mlxlink:
    """Parse ``mlxlink`` text output. Raises :class:`MlxlinkParseError` on garbage.

    >>> m = parse_mlxlink("Operational Info\\n----------------\\nState : Active\\nWidth : 4x\\n")
    >>> m.state, m.width
    ('Active', 4)
    """
    try:
        text = require_text(text, "mlxlink")
    except ParseError as e:
        raise MlxlinkParseError(str(e)) from None
    lines = [ANSI.sub("", ln).rstrip() for ln in text.split("\n")]
    out = Mlxlink()
    current = None
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if ":" not in line and _RULE.match(nxt):
            current = line.strip()
            out.sections.setdefault(current, {})
            continue
        if _RULE.match(line) or current is None:
            continue
        m = _KV.match(line)
        if m and re.search(r"[A-Za-z0-9]", m.group(1)):   # a key with no letter or digit is paste junk
            out.sections[current][m.group(1)] = m.group(2)
    out.sections = {k: v for k, v in out.sections.items() if v}
    if not out.sections:
        raise MlxlinkParseError("mlxlink: no 'Section\\n-----\\nKey : value' block found (is this `mlxlink -d <dev>` output?)")
    return out
