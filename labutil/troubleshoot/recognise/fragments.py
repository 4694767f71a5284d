"""Run the recognisers over a pasted text: split it into fragments (at prompts, ``==> file <==``
headers and separators), run every block recogniser and the line recognisers on each fragment, and
the recognisers that need the whole bundle (:func:`global_signals`)."""

from __future__ import annotations

import re

from ... import parsers as P
from ...parsers._common import normalise_text
from .blocks import BLOCK_KINDS, _gid_check, _kv_budget, _perfquery_pairs
from .lines import _XID_LINE, _line_signals
from .prose import prose_signals
from .signals import Fragment, Signal, _quote, lines_containing

__all__ = ["split_fragments", "recognise", "global_signals"]

# ---------------------------------------------------------------------------------- fragments
_SPLIT = re.compile(r"^(?:\$\s+\S|#\s*\$\s+\S|==>\s.*<==\s*$|-{3,}\s*[^-\s].*[^-\s]\s*-{3,}\s*$|#{2,}\s+\S|\[?[\w.-]+@[\w.-]+"
                    r"[^\s]*\]?[$#]\s+\S)")


def split_fragments(name: str, text: str) -> list[tuple[str, str]]:
    """Split one pasted text at command prompts (``$ cmd``, ``user@host:~$ cmd``), ``==> file <==``
    headers (``tail`` / ``head`` of several files) and ``--- title ---`` / ``## title`` separators."""
    lines = text.split("\n")
    out, cur, title = [], [], name
    for ln in lines:
        if _SPLIT.match(ln.strip()) and any(x.strip() for x in cur):
            out.append((title, "\n".join(cur)))
            cur = []
        if _SPLIT.match(ln.strip()):
            title = f"{name}: {ln.strip()[:60]}"
        cur.append(ln)
    if any(x.strip() for x in cur):
        out.append((title, "\n".join(cur)))
    return out or [(name, text)]


def _damage(name: str, text: str, ctx: dict) -> None:
    """Record in ``ctx['unread']`` what of this text cannot be read (so that a damaged paste does
    not answer 'healthy'): bytes that decoded to U+FFFD, and kernel lines that name an NVRM Xid but
    are not in the XID line format (cut, re-wrapped or re-worded on the way)."""
    bad = text.count("\ufffd")
    if bad:
        ctx.setdefault("unread", []).append(f"{name}: {bad} character(s) could not be decoded (shown as U+FFFD): "
                                            "binary data or an unknown encoding; those parts were not read")
    lost = [ln for ln in lines_containing(text, "xid") if "nvrm" in ln.lower() and not _XID_LINE.search(ln)]
    if lost:
        ctx.setdefault("unread", []).append(f"{name}: {len(lost)} line(s) mention NVRM and Xid but are not XID event "
                                            f"lines, e.g. '{_quote(lost[0], 100)}'; check the kernel log itself "
                                            "(dmesg -T | grep -i xid)")


#: line kinds a block recogniser already judged when it read the whole tool output (the same port or GPU
#: state would otherwise count twice): block kind -> line kinds it owns
_BLOCK_OWNS = {"ibstat": ("ib_port_down",), "ibv_devinfo": ("ib_port_down",),
               "nvidia-smi -q": ("remap_pending", "ecc_count")}


def recognise(name: str, text: str, ctx: dict, notes: bool = False) -> list[Fragment]:
    """Recognise every fragment of one pasted text; never raises on any string. ``notes``: the whole text
    is what the engineer wrote (the symptom), read against the failure signatures as it is."""
    frags = []
    # as the tool printed it: ANSI colour (grep/dmesg --color), BOMs anywhere, NBSP, NULs of UTF-16, CRLF
    text = normalise_text(text)
    _damage(name, text, ctx)
    for fname, ftext in split_fragments(name, text):
        kinds, sigs = [], []
        for fn in BLOCK_KINDS:
            try:
                res = fn(ftext, fname, ctx)
            except (P.ParseError, ValueError, KeyError, IndexError, TypeError, AttributeError, ZeroDivisionError,
                    OverflowError, StopIteration, re.error):
                res = None
            if res is not None:
                kinds.append(res[0])
                sigs += res[1]
        try:
            ls, lk = _line_signals(ftext, fname, ctx)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, OverflowError, StopIteration, P.ParseError):
            ls, lk = [], set()
        owned = {k for b in kinds for k in _BLOCK_OWNS.get(b, ())}
        if owned:   # a whole tool output judged by its block recogniser: its lines are not counted again
            ls = [x for x in ls if x.kind not in owned]
        kinds += sorted(lk)
        sigs += ls
        try:
            ps = prose_signals(ftext, fname, ctx, prose=ftext if notes else None)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, re.error):
            ps = []
        if ps:
            kinds.append("notes (failure signatures)")
            sigs += ps
        frags.append(Fragment(fname, ftext, kinds, sigs))
    return frags


# NCCL_DEBUG=INFO channel lines: "host:pid:tid [dev] NCCL INFO Channel 00/0 : 0[7000] -> 8[7000] [send] via
# NET/IB/1/GDRDMA" - the /GDRDMA suffix says the NIC reads/writes GPU memory directly (GPUDirect RDMA)
_NET_CHANNEL = re.compile(r"(?m)^(?:\S*\s)?([\w.-]+):\d+:\d+ \[\d+\] NCCL INFO Channel [^\n]{0,200}? via NET/(?:IB|IBext)"
                          r"[\w/]*?/\d+(/GDRDMA)?")


def _gdr_asymmetry(ctx) -> list[Signal]:
    """GPUDirect RDMA on some hosts' NET channels and not on others: the hosts without it cannot register GPU
    memory with the NIC - the peer-memory module (nvidia-peermem / nv_peer_mem) is not loaded there (NVIDIA/nccl
    #897: GDRDMA on one node only, maintainer: 'the nv_peer_mem or nvidia-peermem module is not installed/loaded
    on the second node'); inter-node bandwidth drops to the slower side's."""
    text = ctx.get("all_text", "")
    if "GDRDMA" not in text or "NET/IB" not in text:
        return []
    gdr: dict = {}
    for m in _NET_CHANNEL.finditer(text[:2_000_000]):
        gdr.setdefault(m.group(1), set()).add(bool(m.group(2)))
    with_gdr = sorted(h for h, v in gdr.items() if True in v)
    without = sorted(h for h, v in gdr.items() if v == {False})
    if not with_gdr or not without:
        return []
    line = f"NET channels via GDRDMA on {', '.join(with_gdr[:3])}; without GDRDMA on {', '.join(without[:3])}"
    return [Signal("software", "gdr_missing_on_host", "fail", 0.7, _quote(line),
                   f"GPUDirect RDMA works on {', '.join(with_gdr[:3])} but not on {', '.join(without[:3])}: the "
                   "peer-memory module (nvidia-peermem / nv_peer_mem) is not loaded there (or GDR is disabled by "
                   "configuration); traffic from those hosts is staged through host memory", "channels", "gdr_module")]


def global_signals(ctx) -> list[Signal]:
    """Signals that need every fragment: perfquery pairs, GID index vs show_gids, versions across hosts, GPUDirect
    RDMA on some hosts only."""
    out = _perfquery_pairs(ctx) + _gid_check(ctx) + _kv_budget(ctx) + _gdr_asymmetry(ctx)
    by: dict = {}
    frags: dict = {}
    for item in ctx["versions"]:
        comp, ver, origin = item[:3]
        src = item[3] if len(item) > 3 else origin
        by.setdefault(comp, {}).setdefault(ver, set()).add(origin)
        frags.setdefault(comp, {}).setdefault(ver, set()).add(src)
    for comp, vers in by.items():
        origins = {o for s in vers.values() for o in s}
        if len(vers) > 1 and len(origins) > 1:
            desc = "; ".join(f"{v} on {', '.join(sorted(o)[:3])}" for v, o in sorted(vers.items()))
            # Versions seen inside one log (several hosts of one job) or in files the user named are one job's
            # evidence; versions from unnamed pasted items may come from different people's machines (an issue
            # thread), so they only raise a warning.
            srcs = {f for fs in frags[comp].values() for f in fs}
            same_log = len(srcs) == 1
            named = all(not (f.startswith("item ") or f.startswith("evidence")) for f in srcs)
            strong = same_log or named
            out.append(Signal("software", "version_mismatch", "fail" if strong else "warn", 0.8 if strong else 0.4,
                              _quote(f"{comp}: {desc}"), f"{comp} differs between nodes/ranks: collectives can hang or "
                              "fail (every node must run the same image)", "versions", "versions"))
    return out
