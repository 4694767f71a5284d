"""The layer lexicon: a LOW-confidence layer for notes that no failure signature and no tool line explains.

Engineers name the part they suspect even when they describe no catalogued mechanism: "the card drops under
gpu_burn", "cephfs 卷挂不上, MDS slow requests", "两机比单机慢 10 倍, 走 overlay 网络, 没有 IB". The lexicon
(``labutil/data/troubleshoot_lexicon.toml``, reviewed like the signature catalogue) lists, per layer, the
components, daemons, tools and error names of that layer in English and Chinese; the signature catalogue
adds its own anchor phrasings (the first cue group of every signature that belongs to one layer only).

:func:`layer_evidence` scores each layer of a paste's notes (course heuristic, stated so it can be argued
with):

- nothing counts unless the notes report a failure: at least one word of the file's ``failure_*`` lists
  that is not negated ("no error", "错误为 0" do not count);
- every distinct term counts once with its weight (2: a component / error name of one layer; 1: a generic
  word of the layer), halved when no failure word is in its sentence or the sentences next to it;
- a term is dropped when it is negated before ("没有 IB", "no Xid") or declared healthy right after it
  ("GPU/CPU 都看着正常", "the switch is fine"); overlapping terms keep the longest ("网络盘" is storage, not
  "网络");
- "works on one node, fails/slower on two" adds 1 to the network (never a verdict alone).

:func:`lexicon_verdict` turns the scores into a layer when the best layer has at least
:data:`MIN_UNITS` units and leads the second by a factor :data:`MIN_LEAD` (and by at least one unit);
``triage`` then reports it with weight :data:`LEXICON_WEIGHT` and caps its confidence at
:data:`LEXICON_CONFIDENCE_CAP`: a verdict from the vocabulary of the notes is always below one from a
matched signature (0.5-0.7) and far below one from a tool's output. Linear in the notes' length (one regex
pass for the ASCII terms and one for the Chinese ones; overlaps resolved on a character map).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .. import data_files
from .signatures import LAYERS_OF_CATALOGUE, _cue_drop, _negated, catalogue, normalise, sentences

__all__ = ["Lexicon", "LexiconEvidence", "lexicon", "layer_evidence", "lexicon_verdict", "MIN_UNITS", "MIN_LEAD",
           "LEXICON_WEIGHT", "LEXICON_CONFIDENCE_CAP", "MAX_LEXICON_CHARS"]

#: units the best layer needs (one component/error name of weight 2, or two generic words)
MIN_UNITS = 2.0
#: the best layer must lead the second by this factor (and by one unit)
MIN_LEAD = 1.5
#: weight of a lexicon verdict's signal: exactly the verdict threshold, below a signature match (0.55-0.65)
LEXICON_WEIGHT = 0.5
#: a lexicon verdict never reports a confidence above this
LEXICON_CONFIDENCE_CAP = 0.4
#: notes read by the lexicon (linear bound)
MAX_LEXICON_CHARS = 100_000

_CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass(frozen=True)
class Lexicon:
    ascii_rx: re.Pattern | None        # every ASCII phrasing, longest first, at a word start
    cjk_rx: re.Pattern | None         # every Chinese phrasing (a substring), longest first
    term_info: dict                   # normalised phrase -> (layer, check, weight)
    fail_rx: re.Pattern               # failure words (ASCII stems)
    fail_cjk_rx: re.Pattern | None
    healthy_rx: re.Pattern            # "is fine" / "正常" right after a term
    scale_rx: tuple                   # compiled scale patterns
    canon: dict                       # canonical phrase ('-', '_' and blanks as one space) -> phrase


@dataclass(frozen=True)
class LexiconEvidence:
    units: dict                       # layer -> units
    named: dict                       # layer -> units from named terms only (no scale pattern)
    terms: dict                       # layer -> [term, ...] (distinct, in order of appearance)
    checks: dict                      # layer -> the check of its heaviest term
    sentence: dict                    # layer -> the sentence with most of its terms
    failure: bool                     # the notes report a failure at all
    scale: bool = False               # "works on one node, fails / slower on more" was said


def _stem_rx(phrases) -> re.Pattern | None:
    body = []
    for p in sorted(set(phrases), key=len, reverse=True):
        exact = p.endswith("$")
        core = re.escape(p.rstrip("$")).replace(r"\ ", r"[\s_-]+")
        body.append(core + (r"(?![a-z0-9_-])" if exact else ""))
    # a word start: not inside an identifier or a path-like token ("nvidia-bug-report" names no "bug")
    return re.compile(r"(?<![a-z0-9_.-])(?:" + "|".join(body) + ")") if body else None


def _sub_rx(phrases) -> re.Pattern | None:
    """Chinese phrasings: substrings (no word boundaries in Chinese), longest first."""
    body = [re.escape(p) for p in sorted(set(phrases), key=len, reverse=True)]
    return re.compile("|".join(body)) if body else None


@lru_cache(maxsize=None)
def lexicon() -> Lexicon:
    """The compiled lexicon: the data file's groups plus the catalogue's single-layer anchor phrasings."""
    data = data_files.load("troubleshoot_lexicon.toml")
    meta = data["meta"]
    info: dict = {}
    for g in data["group"]:
        layer = g["layer"]
        if layer not in LAYERS_OF_CATALOGUE:
            raise ValueError(f"troubleshoot_lexicon.toml: layer {layer!r} is not one of {LAYERS_OF_CATALOGUE}")
        w = float(g["weight"])
        for p in g["phrases"]:
            p = normalise(p).strip()
            if p and (p not in info or info[p][2] < w):
                info[p] = (layer, g["check"], w)
    stop = {normalise(s).strip() for s in meta["stop"]}
    anchors: dict = {}
    for sig in catalogue().values():       # the catalogue's own vocabulary: anchor phrasings of one layer only
        for p in sig.cues[0]:
            p = normalise(p).strip()
            if p and not p.startswith("@"):
                anchors.setdefault(p, set()).add((sig.layer, sig.check or ""))
    for p, owners in anchors.items():
        layers = {lay for lay, _ in owners}
        if len(layers) == 1 and p not in stop and p not in info and len(p.rstrip("$")) >= 2:
            layer = next(iter(layers))
            info[p] = (layer, _FIRST_CHECK[layer], 1.0)
    asc = [p for p in info if not _CJK.search(p)]
    cjk = sorted((p for p in info if _CJK.search(p)), key=len, reverse=True)
    fails = [normalise(f).strip() for f in meta["failure_en"] + meta["failure_zh"]]
    healthy = [normalise(h).strip() for h in meta["healthy_after_en"] + meta["healthy_after_zh"]]
    h_asc = [re.escape(h.rstrip("$")) + (r"(?![a-z0-9])" if h.endswith("$") else "") for h in healthy
             if not _CJK.search(h)]
    h_cjk = [re.escape(h) for h in healthy if _CJK.search(h)]
    # within a few words after the term, no sentence end in between ("GPU/CPU 都看着正常", "switch is fine")
    healthy_rx = re.compile(r"^[^.;!?。；！？\n]{0,24}?(?:(?<![a-z0-9])(?:" + "|".join(h_asc) + r")|" +
                            "|".join(h_cjk) + ")")
    scale = tuple(re.compile(normalise(p), re.I) for p in meta["scale_en"] + meta["scale_zh"])
    return Lexicon(_stem_rx(asc), _sub_rx(cjk), info, _stem_rx([f for f in fails if not _CJK.search(f)]),
                   _sub_rx([f for f in fails if _CJK.search(f)]), healthy_rx, scale,
                   {_canon(p): p for p in sorted(info, key=len)})


_FIRST_CHECK = {"network": "ib_ports", "storage": "storage_mount", "gpu": "xid", "software": "pyspy"}


def _failure_spans(lx: Lexicon, s: str) -> list:
    """Failure words of one sentence (not negated), and drops to a fraction of before ("from 180 to 10 GB/s",
    "掉了一半": the catalogue's @drop cue)."""
    out = [(m.start(), m.end()) for m in lx.fail_rx.finditer(s) if not _negated(s, m.start(), m.end())]
    out += [(m.start(), m.end()) for m in _cue_drop(s, "") if not _negated(s, m.start(), m.end())]
    if lx.fail_cjk_rx is not None and _CJK.search(s):
        out += [(m.start(), m.end()) for m in lx.fail_cjk_rx.finditer(s) if not _negated(s, m.start(), m.end())]
    return out


def _term_spans(lx: Lexicon, s: str) -> list:
    """(start, end, phrase) of the terms of ``s`` (normalised), overlaps resolved to the longest."""
    cands = []
    if lx.ascii_rx is not None:
        for m in lx.ascii_rx.finditer(s):
            cands.append((m.start(), m.end(), m.group(0)))
    if lx.cjk_rx is not None and _CJK.search(s):
        cands += [(m.start(), m.end(), m.group(0)) for m in lx.cjk_rx.finditer(s)]
    cands.sort(key=lambda c: (-(c[1] - c[0]), c[0]))
    used = bytearray(len(s) + 1)          # characters already taken by a longer term (linear: terms are short)
    taken: list = []
    for c in cands:
        if not any(used[c[0]:c[1]]):
            used[c[0]:c[1]] = b"\x01" * (c[1] - c[0])
            taken.append(c)
    return sorted(taken)


def _canon(text: str) -> str:
    return re.sub(r"[\s_-]+", " ", text.rstrip("$"))


def _phrase_of(lx: Lexicon, matched: str) -> str | None:
    """The lexicon phrase a matched text belongs to: ASCII phrasings are stems ('throttled' -> 'throttl'), so
    the longest phrase that is a prefix of the match (at most len(match) dictionary look-ups)."""
    key = _canon(matched)
    for k in range(len(key), 0, -1):
        p = lx.canon.get(key[:k])
        if p is not None:
            return p
    return None


def layer_evidence(notes: str) -> LexiconEvidence:
    """Score each layer of ``notes`` (see the module docstring). Never raises on a string."""
    empty = LexiconEvidence({L: 0.0 for L in LAYERS_OF_CATALOGUE}, {L: 0.0 for L in LAYERS_OF_CATALOGUE}, {}, {}, {},
                            False)
    if not isinstance(notes, str) or not notes.strip():
        return empty
    lx = lexicon()
    sents = [normalise(s) for s in sentences(notes[:MAX_LEXICON_CHARS])]
    fail_at = [bool(_failure_spans(lx, s)) for s in sents]
    if not any(fail_at):
        return empty
    best: dict = {}                # phrase -> (units, layer, check, sentence index)
    per_sent: dict = {}            # (layer, sentence index) -> units
    for i, s in enumerate(sents):
        near = any(fail_at[max(0, i - 1):i + 2])
        for a, b, matched in _term_spans(lx, s):
            phrase = _phrase_of(lx, matched)
            if phrase is None or _negated(s, a, b) or lx.healthy_rx.search(s[b:b + 40]):
                continue
            layer, check, w = lx.term_info[phrase]
            u = w if near else w / 2
            per_sent[(layer, i)] = per_sent.get((layer, i), 0.0) + u
            if phrase not in best or best[phrase][0] < u:
                best[phrase] = (u, layer, check, i)
    units = {L: 0.0 for L in LAYERS_OF_CATALOGUE}
    terms: dict = {}
    heaviest: dict = {}
    for phrase, (u, layer, check, i) in best.items():
        units[layer] += u
        terms.setdefault(layer, []).append(phrase.rstrip("$"))
        if layer not in heaviest or heaviest[layer][0] < u:
            heaviest[layer] = (u, check)
    named = dict(units)
    text = "\n".join(sents)
    scale = any(rx.search(text) for rx in lx.scale_rx)
    if scale:
        units["network"] += 1.0
        heaviest.setdefault("network", (1.0, "nccl_busbw"))
    sentence = {}
    raw = sentences(notes[:MAX_LEXICON_CHARS])
    for L in units:
        scored = [(u, i) for (lay, i), u in per_sent.items() if lay == L]
        if scored:
            i = max(scored)[1]
            sentence[L] = " ".join(raw[i].split()) if i < len(raw) else ""
    return LexiconEvidence(units, named, terms, {L: c for L, (_, c) in heaviest.items()}, sentence, True, scale)


def lexicon_verdict(ev: LexiconEvidence, bonus: dict | None = None) -> str | None:
    """The layer the notes name, or None when no layer leads clearly (``bonus``: extra units per layer, e.g.
    one for each layer a partly matched signature points at). The scale pattern and the bonus only add to a
    layer the notes NAME (at least one unit of named terms): they never make a verdict alone."""
    u = dict(ev.units)
    for L, b in (bonus or {}).items():
        if L in u and ev.named.get(L, 0.0) >= 1.0:
            u[L] += b
    order = sorted(u, key=lambda L: (-u[L], LAYERS_OF_CATALOGUE.index(L)))
    top, second = order[0], order[1]
    if (ev.named.get(top, 0.0) < 1.0 or u[top] < MIN_UNITS or u[top] < MIN_LEAD * u[second]
            or u[top] - u[second] < 1.0):
        return None
    return top
