"""``lspci -vvv`` PCIe links: capability vs. status generation and width, ACS redirect state.

Read by ch09 (GPU/NIC links of a node) and ch19 (inventory acceptance: a downtrained link); formerly
``labutil.inventory.parse_lspci_links`` (still re-exported there). Format: pciutils ``ls-caps.c``.
Garbage raises :class:`LspciParseError`, never IndexError/KeyError.
"""

from __future__ import annotations

import re

from ._common import ParseError, require_text

__all__ = ["LspciParseError", "parse_lspci_links"]


class LspciParseError(ParseError):
    """Text that is not ``lspci -vvv`` output with LnkCap/LnkSta lines."""


_SPEED_GEN = {"2.5": 1, "5": 2, "8": 3, "16": 4, "32": 5, "64": 6}
_DEV_HEAD = re.compile(r"^([0-9a-fA-F]{4}:)?([0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(.+?):\s+(.*)$")
_LNK = re.compile(r"^\s*(LnkCap|LnkSta):\s*(?:Port #\d+,\s*)?Speed\s+([\d.]+)GT/s[^,]*,\s*Width\s+x(\d+)")
_ACSCTL = re.compile(r"^\s*ACSCtl:\s*(.*)$")


def parse_lspci_links(text) -> list[dict]:
    """Parse ``lspci -vvv`` (as root): per device bdf, class, name, cap/sta gen and width, ACS redirect state.

    Format (pciutils ``ls-caps.c``): a device header line ``bb:dd.f Class: Name`` followed by indented
    capability lines, e.g. ``LnkCap: Port #0, Speed 32GT/s, Width x16, ...`` and
    ``LnkSta: Speed 16GT/s (downgraded), Width x16 (ok)``; bridges with ACS print
    ``ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ ...`` (``+`` = enabled). Speeds map to generations
    2.5/5/8/16/32/64 GT/s = Gen1..Gen6. Devices without both LnkCap and LnkSta are skipped.
    Raises :class:`LspciParseError` (a :class:`labutil.parsers.ParseError`) when no device with link information is found.
    """
    try:   # decodes UTF-16/GB18030 bytes, drops ANSI colour and BOMs, NBSP -> space, CRLF -> LF
        text = require_text(text, "lspci -vvv")
    except ParseError as e:  # one error type per tool: LspciParseError
        raise LspciParseError(str(e)) from None
    devs, cur = [], None
    for line in text.split("\n"):
        line = line.rstrip()   # trailing blanks of a paste change nothing
        m = _DEV_HEAD.match(line) if line[:1] not in (" ", "\t") else None
        if m:
            cur = {"bdf": m.group(2), "class": m.group(3), "device": m.group(4), "acs_redirect": None}
            devs.append(cur)
            continue
        if cur is None:
            continue
        lm = _LNK.match(line)
        if lm:
            gen = _SPEED_GEN.get(lm.group(2).rstrip("0").rstrip(".") if "." in lm.group(2) else lm.group(2))
            if gen is None:
                raise LspciParseError(f"lspci -vvv: device {cur['bdf']}: unknown link speed {lm.group(2)} GT/s")
            pre = "cap" if lm.group(1) == "LnkCap" else "sta"
            cur[f"{pre}_gen"], cur[f"{pre}_width"] = gen, int(lm.group(3))
            continue
        am = _ACSCTL.match(line)
        if am:
            flags = dict(re.findall(r"(\w+)([+-])", am.group(1)))
            cur["acs_redirect"] = flags.get("ReqRedir") == "+" or flags.get("CmpltRedir") == "+"
    out = [d for d in devs if "cap_gen" in d and "sta_gen" in d]
    if not out:
        raise LspciParseError("lspci -vvv: no device with both LnkCap and LnkSta lines (run as root for -vvv "
                                  "capabilities)")
    for d in out:
        d["downtrained"] = d["sta_gen"] < d["cap_gen"] or d["sta_width"] < d["cap_width"]
    return out
