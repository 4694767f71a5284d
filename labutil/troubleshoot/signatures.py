"""Failure signatures: what an engineer WRITES about an incident, matched to a known failure mechanism.

The catalogue is data, ``labutil/data/failure_signatures.toml`` (one file, reviewed like the GPU
catalog). Each signature is a described observation with its layer (network / storage / gpu /
software), root cause, the command that confirms it, the evidence that would contradict it (and
which layer that evidence points to), and the public incident(s) it comes from (title + URL).

An observation is written as cue groups, every group a concept with its phrasings in English and
Chinese: ``[["switch", "tor", "交换机"], ["firmware", "upgrad", "固件", "升级"], ["busbw", "带宽"],
["@drop", "halv", "一半"]]``. Matching (:func:`match_text`):

- an ASCII phrasing is a stem matched at a word start ("halv" matches "halved"; spaces match any
  run of blanks, '-' or '_'); a trailing ``$`` asks for the whole word; a phrasing with Chinese
  characters is a substring; ``@name`` is a structural cue (:data:`NUMERIC_CUES`: temperatures
  with their unit ("90 °C", "90C", "90度"), error codes, XID numbers, two node counts, a drop to a
  fraction of before, a full file system);
- a phrasing preceded by a negation ("no", "not", "without", "没有", "无", "未", ...) does not count
  ("no Xid in dmesg" is not an Xid observation);
- groups must all be found within three consecutive sentences of the notes: a FULL match (every
  group) is an observation; a PARTIAL match (the first, anchor group and >= 60 % of the groups,
  at least two) is only a hint. One keyword alone never matches.

How strongly a match counts is decided by :mod:`labutil.troubleshoot.triage` (course policy stated
there): prose is weaker evidence than a tool's output.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from .. import validate

__all__ = ["Signature", "Incident", "SignatureMatch", "catalogue", "signature", "signature_ids", "match_text",
           "similar_incidents", "NUMERIC_CUES", "LAYERS_OF_CATALOGUE", "sentences", "tokens", "cue_specificity",
           "groups_hit"]

LAYERS_OF_CATALOGUE = ("network", "storage", "gpu", "software")
_CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass(frozen=True)
class Incident:
    """A public incident a signature (or a walkthrough) comes from."""

    title: str
    url: str
    fixed_by: str
    layer: str = ""


@dataclass(frozen=True)
class Signature:
    id: str
    layer: str
    title: str
    observation: str
    root_cause: str
    confirm: str
    check: str
    minutes: float
    contradicts: tuple            # ((layer, evidence), ...): what would move the verdict to that layer
    kinds: tuple                  # recogniser kinds this mechanism explains (links tool-output verdicts)
    cues: tuple                   # ((phrasing, ...), ...) cue groups
    incidents: tuple              # (Incident, ...)
    compiled: tuple = field(default=(), repr=False, compare=False)


@dataclass(frozen=True)
class SignatureMatch:
    """One signature found in a text: ``score`` = share of cue groups found (1.0 = full match)."""

    signature: Signature
    score: float
    full: bool
    quote: str
    cues: tuple
    numeric: bool
    source: str = ""


# ------------------------------------------------------------------------------ normalisation
def normalise(text: str) -> str:
    """Lowercase, full-width forms folded (NFKC: "９０℃" -> "90°c", "：" -> ":"), degree signs unified."""
    t = unicodedata.normalize("NFKC", text).lower()
    return t.replace("℃", "°c").replace("º", "°")


# sentence ends: . ! ? ; (not inside a number such as 2.5 or a version 2.18.3), CJK 。！？；, line ends
_SENT = re.compile(r"(?<!\d)[.!?;](?!\d)|[。！？；\n]")


def sentences(text: str) -> list[str]:
    out, start = [], 0
    for m in _SENT.finditer(text):
        s = text[start:m.end()].strip()
        if s:
            out.append(s)
        start = m.end()
    s = text[start:].strip()
    if s:
        out.append(s)
    return out


# an English negation reaches at most two words forward, and never across Chinese text: in mixed notes
# ("... (directory not found)，明明另一个节点刚写完") the "not" of the English quote does not negate the Chinese
# sentence after it
_NEG_EN = re.compile(r"(?:^|[^a-z])(?:no|not|never|without|none|zero|nothing|isn't|wasn't|aren't|weren't|doesn't|"
                     r"didn't|don't|cannot|can't|free of|clean of)[^a-z0-9\u3400-\u9fff:;,]+"
                     r"(?:[a-z0-9/._-]+[^a-z0-9\u3400-\u9fff:;,]+){0,2}$")   # a ':' ';' ',' ends the negation's scope
_NEG_ZH = re.compile(r"(?:没有|没|无|未|不是|不|非|并无)\s*\S{0,3}$")


# "... error counters all 0", "errors: 0", "xid = none": a count of zero states that nothing happened
_ZERO_AFTER = re.compile(r"^[a-z_]*\s*(?:counters?|counts?)?\s*(?:are\s+|were\s+|is\s+)?(?:all\s+)?[:=]?\s*(?:0|zero|none)(?![\d.])"
                         r"|^[a-z_]*\s*(?:为|均为|都是)\s*0")


#: nouns followed by an index ("rank 0", "GPU 0", "port 1"): a 0 after them is a name, not a count of zero
_ORDINAL_NOUN = re.compile(r"(?:rank|ranks|gpu|gpus|node|device|port|card|hca|nic|link|socket|index|id|卡)$")


def _negated(text: str, start: int, end: int | None = None) -> bool:
    before = text[max(0, start - 40):start]
    if _NEG_EN.search(before) or _NEG_ZH.search(before[-6:]):
        return True
    if end is None or _ORDINAL_NOUN.search(text[start:end]):   # "rank 0", "GPU 0": an index, not a zero count
        return False
    return bool(_ZERO_AFTER.search(text[end:end + 30]))


# ------------------------------------------------------------------------------ structural cues
_TEMP = re.compile(r"(?<![\d.])(\d{2,3}(?:\.\d)?)\s*(?:°\s*c\b|° ?celsius|degrees?\s*c?\b|deg\s*c\b|c\b|度)")
_NUM_TOKEN = re.compile(r"(?<![\d.])(\d{1,6})(?![\d.])")
_ERRWORD = re.compile(r"error|err\b|code|status|cuda|xid|错误|报错|异常|返回")
_XID = re.compile(r"xid\s*[:#(]?\s*(?:\(pci:[^)]{0,20}\)\s*[:,]?\s*)?(\d{1,3})\b")
_NODES = re.compile(r"(?<![\d.])(\d{1,6})\s*(?:x\s*)?(?:nodes?\b|hosts?\b|machines?\b|servers?\b|racks?\b|节点|台机器|台服务器|台|个节点|机柜)")
_MORE_THAN = re.compile(r"(?:more than|beyond|over|above|超过|以上|大于)\s*\d+|\d+\s*(?:以上|之后|以后)")
_DROP_WORDS = re.compile(r"halv|\bhalf\b|一半|减半|折半|掉了?一半|降了?一半|只有一半|掉到|降到|跌到|down to|drop(?:ped|s)? to|fell to|"
                         r"only\s+\d+\s*%|(?:lost|drop(?:ped)?|fell|down|decreas\w*|reduc\w*)\s+(?:by\s+)?\d{2}\s*%|"
                         r"下降了?\s*\d{2}\s*%|掉了?\s*\d{2}\s*%|\b\d\.?\d*\s*x\s+slower|慢了?\s*\d+\s*倍|一倍|x\s*slower")
_FROM_TO = re.compile(r"from\s+(\d+(?:\.\d+)?)\s*\S{0,8}\s+to\s+(\d+(?:\.\d+)?)|从\s*(\d+(?:\.\d+)?)\s*\S{0,8}?\s*(?:降|掉|跌)?到\s*(\d+(?:\.\d+)?)|"
                      r"(\d+(?:\.\d+)?)\s*\S{0,8}\s*(?:->|→|=>)\s*(\d+(?:\.\d+)?)")
_FULL = re.compile(r"(?<![\d.])(?:100|9[5-9])\s*%|\bfull\b|满了|写满|占满|已满|满\b|no space left|enospc|空间不足")


def _cue_temp(text, arg):
    lo = float(arg or 80)
    return [m for m in _TEMP.finditer(text) if lo <= float(m.group(1)) <= 130]


def _cue_code(text, arg):
    wanted = {a for a in (arg or "").split("|") if a}
    if not wanted or not _ERRWORD.search(text):
        return []
    return [m for m in _NUM_TOKEN.finditer(text) if m.group(1) in wanted]


def _cue_xid(text, arg):
    wanted = {a for a in (arg or "").split("|") if a}
    return [m for m in _XID.finditer(text) if not wanted or m.group(1) in wanted]


_AT_COUNT = re.compile(r"(?:\bon|\bat|\bto|\bwith|在|到|用)\s*(\d{1,6})(?![\d.])")


def _cue_nodes(text, arg):
    """Two different node counts ("works on 64 nodes, hangs on 128"; "64 节点正常，128 节点卡住"), or one
    count with "more than / beyond / 以上"."""
    ms = list(_NODES.finditer(text))
    counts = {m.group(1) for m in ms}
    if len(counts) >= 2:
        return ms
    if ms:
        other = [m for m in _AT_COUNT.finditer(text) if m.group(1) not in counts and int(m.group(1)) >= 2]
        if other:
            return ms + other
        if _MORE_THAN.search(text):
            return ms + list(_MORE_THAN.finditer(text))
    return []


def _cue_drop(text, arg):
    out = list(_DROP_WORDS.finditer(text))
    for m in _FROM_TO.finditer(text):
        a, b = [float(x) for x in m.groups() if x is not None][:2]
        if a > 0 and b <= 0.7 * a:
            out.append(m)
    return out


def _cue_full(text, arg):
    return list(_FULL.finditer(text))


# per-rank counts written next to their ranks: "rank0/1/3 是 4，rank2 是 8", "rank 2: 8 batches, rank 0: 4"
_RANK_COUNT = re.compile(r"\brank\s*(\d{1,5}(?:\s*[/,、]\s*\d{1,5})*)\s*(?:是|为|有|跑了|跑|做了|:|=|has|have|gets?|got|with|"
                         r"runs?|ran|did)?\s*(\d{1,7})(?![\d.])")


_VERSION_NUM = re.compile(r"(?<![\w.])v?(\d{1,3}\.\d{1,3}(?:\.\d{1,4})?)(?:[-+.]\w+)?(?![\w.])")


def _cue_versions(text, arg):
    """Two different version numbers ("fails on 2.17.1 and 2.18.x, not on 2.16.5")."""
    ms = list(_VERSION_NUM.finditer(text))
    return ms if len({m.group(1) for m in ms}) >= 2 else []


def _cue_rank_counts(text, arg):
    """Two groups of ranks with different counts (the counts differ between ranks)."""
    ms = list(_RANK_COUNT.finditer(text))
    return ms if len({m.group(2) for m in ms}) >= 2 else []


#: structural cues usable in the catalogue as "@name" or "@name:arg" (@temp:85, @code:803|804, @xid:79)
NUMERIC_CUES = {"temp": _cue_temp, "code": _cue_code, "xid": _cue_xid, "nodes": _cue_nodes, "drop": _cue_drop,
                "full": _cue_full, "rank_counts": _cue_rank_counts, "versions": _cue_versions}


# ------------------------------------------------------------------------------ the catalogue
_REQUIRED = {"layer", "title", "observation", "root_cause", "confirm", "contradicts", "cues", "incident"}
_OPTIONAL = {"check", "minutes", "kinds"}


def _compile_group(group):
    """(regex of the ASCII stems | None, CJK substrings, structural cues) of one cue group."""
    stems, cjk, special = [], [], []
    for p in group:
        p = normalise(p).strip()
        if not p:
            continue
        if p.startswith("@"):
            name, _, arg = p[1:].partition(":")
            if name not in NUMERIC_CUES:
                raise ValueError(f"unknown structural cue {p!r}; known: {sorted(NUMERIC_CUES)}")
            special.append((name, arg))
        elif _CJK.search(p):
            cjk.append(p)
        else:
            exact = p.endswith("$")
            body = re.escape(p.rstrip("$")).replace(r"\ ", r"[\s_-]+")
            stems.append(body + (r"(?![a-z0-9])" if exact else ""))
    rx = re.compile(r"(?<![a-z0-9])(?:" + "|".join(stems) + ")") if stems else None
    return rx, tuple(cjk), tuple(special)


def _load(text: str) -> dict:
    data = tomllib.loads(text)
    sigs = data.get("signature")
    if not isinstance(sigs, dict) or not sigs:
        raise ValueError("failure_signatures.toml: no [signature.<id>] tables")
    out = {}
    for sid, e in sigs.items():
        keys = set(e)
        missing, unknown = _REQUIRED - keys, keys - _REQUIRED - _OPTIONAL
        if missing or unknown:
            raise ValueError(f"signature {sid!r}: missing {sorted(missing)}, unknown {sorted(unknown)}")
        layer = validate.choice(f"signature {sid} layer", e["layer"], LAYERS_OF_CATALOGUE)
        contra = []
        for c in e["contradicts"]:
            if not isinstance(c, list) or len(c) != 2 or c[0] not in LAYERS_OF_CATALOGUE + ("none",):
                raise ValueError(f"signature {sid!r}: contradicts items are [layer, evidence]; got {c!r}")
            contra.append((c[0], c[1]))
        incidents = []
        for inc in e["incident"]:
            if set(inc) - {"title", "url", "fixed_by"} or not inc.get("url", "").startswith("https://"):
                raise ValueError(f"signature {sid!r}: an incident needs title, an https url and fixed_by; got {inc!r}")
            incidents.append(Incident(inc["title"], inc["url"], inc.get("fixed_by", ""), layer))
        cues = tuple(tuple(g) for g in e["cues"])
        if len(cues) < 2:
            raise ValueError(f"signature {sid!r}: an observation needs at least two cue groups (one keyword never "
                             "matches)")
        out[sid] = Signature(sid, layer, e["title"], e["observation"], e["root_cause"], e["confirm"],
                             e.get("check", ""), float(e.get("minutes", 5.0)), tuple(contra), tuple(e.get("kinds", ())),
                             cues, tuple(incidents), tuple(_compile_group(g) for g in cues))
    return out


@lru_cache(maxsize=None)
def catalogue() -> dict:
    """id -> :class:`Signature` of ``labutil/data/failure_signatures.toml`` (validated on load)."""
    return _load(resources.files("labutil").joinpath("data", "failure_signatures.toml").read_text(encoding="utf-8"))


def signature_ids() -> list[str]:
    return list(catalogue())


def signature(sid: str) -> Signature:
    table = catalogue()
    if sid not in table:
        raise validate.unknown_name("signature", sid, table)
    return table[sid]


# ------------------------------------------------------------------------------ matching
def _group_hits(compiled, text: str) -> list[str]:
    """Phrasings of one group found (not negated) in ``text`` (normalised)."""
    rx, cjk, special = compiled
    hits = []
    for name, arg in special:     # structural cues first: a number with its unit is the stronger statement
        ms = [m for m in NUMERIC_CUES[name](text, arg) if not _negated(text, m.start(), m.end())]
        if ms:
            hits.append("@" + name + ":" + ms[0].group(0).strip())
    if rx is not None:
        best = None        # the longest phrasing found (".lock ... FileLock": "filelock" says more than "lock")
        for m in rx.finditer(text):
            if (best is None or len(m.group(0)) > len(best)) and not _negated(text, m.start(), m.end()):
                best = m.group(0)
        if best is not None:
            hits.append(best)
    for s in cjk:
        i = text.find(s)
        while i >= 0:
            if not _negated(text, i, i + len(s)):
                hits.append(s)
                break
            i = text.find(s, i + 1)
    return hits


MAX_SENTENCES = 4000   # a paste with more prose than this is read up to here (linear bound)


def match_text(text: str, source: str = "", window: int = 3) -> list[SignatureMatch]:
    """Signatures observed in ``text`` (prose: notes, a symptom), best first. Never raises on a string."""
    if not isinstance(text, str) or not text.strip():
        return []
    raw = sentences(text)[:MAX_SENTENCES]
    sents = [normalise(s) for s in raw]
    whole = "\n".join(sents)
    out = []
    for sig in catalogue().values():
        n = len(sig.compiled)
        # cheap pre-check on the whole text: the anchor and at least two concepts must occur somewhere
        if not _group_hits(sig.compiled[0], whole) or sum(bool(_group_hits(g, whole)) for g in sig.compiled) < 2:
            continue
        per = [[_group_hits(g, s) for g in sig.compiled] for s in sents]
        best = None
        for i in range(len(sents)):
            found: dict = {}
            for j in range(i, min(i + window, len(sents))):
                for gi, h in enumerate(per[j]):
                    if h and gi not in found:
                        found[gi] = max(h, key=lambda c: cue_specificity((c,)))
            if 0 not in found:       # the anchor (the component the observation is about) must be there
                continue
            score = len(found) / n
            spec = cue_specificity(tuple(found.values()))   # of equal windows, the one with the most specific words
            if best is None or (score, spec) > (best[0], best[3]):
                best = (score, i, found, spec)
        if best is None:
            continue
        score, i, found, _ = best
        full = score == 1.0
        if not full and (len(found) < 2 or score < 0.6):
            continue
        quote = " ".join(" ".join(r.split()) for r in raw[i:i + window])
        quote = quote if len(quote) <= 220 else quote[:217] + "..."
        cues = tuple(found[k] for k in sorted(found))
        out.append(SignatureMatch(sig, round(score, 3), full, quote, cues, any(c.startswith("@") for c in cues),
                                  source))
    out.sort(key=lambda m: (-m.full, -m.score, -cue_specificity(m.cues), m.signature.id))
    # a full match is subsumed by a full match of more concepts on the same words: same sentence window, same
    # anchor phrasing ("ib_write_bw ... normal but nccl-tests far below" is not also "ib_write_bw far below")
    return [m for m in out if not (m.full and any(
        k.full and len(k.signature.cues) > len(m.signature.cues) and k.quote == m.quote and k.cues[:1] == m.cues[:1]
        for k in out))]


def cue_specificity(cues) -> float:
    """How specific the matched phrasings are (course heuristic): per cue its length in characters, a Chinese
    character counting 2 and a structural cue (a number with its unit, an XID, a count) 8, each capped at 12;
    the mean over the cues (a long, rare phrasing such as "reserved but unallocated" says more than "two").
    Orders matches that cover the same share of their signature's concepts."""
    vals = [8.0 if c.startswith("@") else float(min(12, sum(2 if _CJK.match(ch) else 1 for ch in c.strip())))
            for c in cues]
    return sum(vals) / len(vals) if vals else 0.0


def groups_hit(sig: "Signature", text: str) -> int:
    """How many of ``sig``'s cue groups occur (not negated) in ``text`` (a log line or a sentence)."""
    t = normalise(text) if isinstance(text, str) else ""
    return sum(bool(_group_hits(g, t)) for g in sig.compiled) if t else 0


# ------------------------------------------------------------------------------ similar incidents
_STOP = frozenset("the and for with that this from was were are has have had not but all any can its into our out "
                  "after before when then than they them their there what which while will would could should "
                  "run runs job jobs node nodes gpu gpus one two".split())
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")


def tokens(text: str) -> set:
    """Words (>= 3 letters, no stop words) and Chinese character bigrams of ``text``."""
    t = normalise(text)
    out = {w for w in _WORD.findall(t) if w not in _STOP}
    for run in re.findall(r"[\u3400-\u9fff]+", t):
        out.update(run[i:i + 2] for i in range(max(1, len(run) - 1)))
    return out


def _jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


@lru_cache(maxsize=None)
def _walkthrough_incidents() -> tuple:
    """(Incident, tokens) of the ch28 walkthroughs (labutil/data/troubleshoot_incidents.toml)."""
    text = resources.files("labutil").joinpath("data", "troubleshoot_incidents.toml").read_text(encoding="utf-8")
    out = []
    for name, w in tomllib.loads(text).items():
        url = re.search(r"https://\S+", w.get("source", ""))
        if not url:
            continue
        body = " ".join([w.get("title", ""), w.get("symptom", ""), w.get("lesson", "")] +
                        [str(v) for v in w.get("evidence", {}).values()])
        out.append((Incident(w.get("title", name), url.group(0).rstrip(";,)"), w.get("lesson", ""),
                             w.get("expected_layer", "")), frozenset(tokens(body)), name))
    return tuple(out)


@lru_cache(maxsize=None)
def _signature_tokens() -> dict:
    return {sid: frozenset(tokens(" ".join([s.title, s.observation, s.root_cause] + [i.title for i in s.incidents])))
            for sid, s in catalogue().items()}


@lru_cache(maxsize=None)
def _incident_tokens() -> dict:
    """url -> tokens of the incident's own title and fix (what tells two incidents of one signature apart)."""
    return {i.url: frozenset(tokens(i.title + " " + i.fixed_by)) for s in catalogue().values() for i in s.incidents}


def similar_incidents(text: str, matches=(), kinds=(), verdict: str | None = None, k: int = 5,
                      mechanism: str | None = None) -> list[dict]:
    """The public incidents closest to a paste, best first (at most ``k``).

    similarity (course heuristic, 0-1) = 0.55 x the signature's match score (full 1.0, partial its
    share of cue groups) + 0.25 when the signature explains a recognised kind of the paste (its
    ``kinds``) + 0.10 x min(1, 4 x the word / Chinese-bigram overlap (Jaccard) of the paste and the
    signature's text) + 0.10 x min(1, 4 x the overlap with the incident's own title and fix (so the
    incidents of one signature are ordered by how close each is to the paste); a ch28 walkthrough
    incident (no cue groups) scores 0.6 x min(1, 4 x its overlap); an incident of another layer than
    the verdict counts 0.7 x; the incidents of the signature the diagnosis names as its mechanism
    (``mechanism``) get + 0.25 (the mechanism was chosen from the deciding line or the notes' words, so its
    incidents are the closest known ones even when the paste shares few words with them). Incidents below
    0.15 are left out."""
    toks = tokens(text) if isinstance(text, str) else set()
    kinds = set(kinds)
    by_sig = {m.signature.id: m for m in matches}
    stoks = _signature_tokens()
    itoks = _incident_tokens()
    rows = []
    for sid, sig in catalogue().items():
        m = by_sig.get(sid)
        kind_hit = bool(kinds & set(sig.kinds))
        overlap = _jaccard(toks, stoks[sid])
        base = 0.55 * (m.score if m else 0.0) + (0.25 if kind_hit else 0.0) + 0.10 * min(1.0, 4 * overlap)
        if mechanism is not None and sid == mechanism and not m and not kind_hit:
            base += 0.25
        for inc in sig.incidents:
            sim = base + 0.10 * min(1.0, 4 * _jaccard(toks, itoks.get(inc.url, frozenset())))
            if verdict is not None and sig.layer != verdict:
                sim *= 0.7
            rows.append((round(min(sim, 1.0), 2), inc, f"signature:{sid}"))
    for inc, wt, name in _walkthrough_incidents():
        sim = 0.6 * min(1.0, 4 * _jaccard(toks, wt))
        if verdict is not None and inc.layer != verdict:
            sim *= 0.7
        rows.append((round(sim, 2), inc, f"walkthrough:{name}"))
    rows.sort(key=lambda r: (-r[0], r[1].url))
    out, seen = [], set()
    for sim, inc, src in rows:
        if sim < 0.15 or inc.url in seen:
            continue
        seen.add(inc.url)
        out.append({"title": inc.title, "url": inc.url, "layer": inc.layer, "fixed_by": inc.fixed_by,
                    "similarity": sim, "from": src})
        if len(out) >= k:
            break
    return out
