"""Notes are evidence: recognise what an engineer WROTE (English or Chinese) next to what tools printed.

- :func:`is_prose` tells a sentence of notes from a tool's or a log's line (timestamps, ``host:pid:tid``
  prefixes, ``NCCL INFO``, ``NVRM:``, tracebacks, tables, indentation are log/tool output);
- :func:`quoted_spans` pulls the quoted / backticked log fragments out of a sentence
  (``"NET/IB : Got completion ... error 12"``, `` `Xid 79` ``, “...”, 「...」): the line
  recognisers read them like log lines, while the sentence around them only reaches the rules
  whose text is an unambiguous error message (``lines.LOG_ONLY_KINDS`` need a log line: a rule
  must not fire on prose that merely mentions "NVLink" or "killed");
- :func:`prose_signals` matches the notes against the failure-signature catalogue
  (:mod:`labutil.troubleshoot.signatures`) and turns each match into a :class:`Signal`.

Weights (course policy): a FULL signature match is an observation in words, 0.55 (+0.05 when a
number with its unit or code backs it, +0.05 for a four-concept observation), so a verdict that
rests on prose alone stays below one from tool output (0.75-0.95) - ``triage`` also caps a layer
supported by prose only at 0.7; a PARTIAL match is a hint, 0.2, a symptom that never makes a
verdict on its own.
"""

from __future__ import annotations

import re

from ..signatures import SignatureMatch, match_text
from .signals import Signal, _quote

__all__ = ["is_prose", "is_sentence", "quoted_spans", "embedded_spans", "prose_text", "prose_signals", "PROSE_FULL_WEIGHT",
           "PROSE_HINT_WEIGHT"]

PROSE_FULL_WEIGHT = 0.55
PROSE_HINT_WEIGHT = 0.2

_CJK = re.compile(r"[\u3400-\u9fff]")
# what marks a line as a tool's / a log's line rather than a sentence of notes
_LOG_MARK = re.compile(
    r"^\s*(?:\[[^\]\n]{1,60}\]|\d{4}-\d\d-\d\d|[A-Z][a-z]{2}\s+\d{1,2}\s+\d\d:\d\d|\d\d:\d\d:\d\d|[\w.-]+:\d+:\d+\s+\[|"
    r"[$#>]\s|File \"|Traceback|\||\+-|={3,}|-{3,}|\s{4,}\S|\t)"
    r"|NCCL (?:INFO|WARN)|NVRM:|kernel:|^\s*[\w.]+(?:Error|Exception|Warning):|\b\w+\s*:\s*\.{3,}|\s:\s+\S+\s*$")
_QUOTES = re.compile(r"`([^`\n]{6,})`|\"([^\"\n]{8,})\"|“([^”\n]{6,})”|「([^」\n]{6,})」|『([^』\n]{6,})』|'([^'\n]{12,})'")
# program prefixes of syslog / scheduler / launcher lines ("nv-fabricmanager[1507]:", "slurmstepd: error:",
# "ERROR:", "srun: fatal:")
_LOG_PREFIX = re.compile(r"^\s*(?:[\w.-]+\[\d+\]:|[a-z][\w.-]*:\s+(?:error|warning|warn|info|fatal|critical)\b|"
                         r"(?:error|warning|warn|fatal|critical|info)\s*:)", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
# a log message pasted into the middle of a sentence without quotes ("training dies with NCCL WARN NET/IB ...")
_MID_MARK = re.compile(r"NCCL (?:INFO|WARN)|NVRM:|\bkernel:|\b[A-Z]\w*(?:Error|Exception):|\bCUDA error\b|"
                       r"\bXid\s*\(?(?:PCI|\d)")
# what makes a run of ASCII inside a Chinese sentence a log fragment rather than a product name
_LOGGY = re.compile(r"[:/_=<>]|\b(?:error|fail|warn|timeout|timed out|exceed|refused|reset|mismatch|lost|catastroph|"
                    r"unhandled|invalid|denied|cannot|unable|not found|no device|no such)\w*", re.I)
_CJK_RUN = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]+")


def _plain_prefix(line: str, end: int) -> bool:
    """The text before ``end`` reads as a sentence (>= 4 words, most of them plain words, no log marker)."""
    head = line[:end]
    if _LOG_MARK.search(head) or _LOG_PREFIX.search(head):
        return False
    toks = head.split()
    words = [t for t in toks if _WORD.fullmatch(t.strip(",.;:!?()\"'"))]
    return len(toks) >= 4 and len(words) >= 0.6 * len(toks)


def embedded_spans(line: str) -> list[str]:
    """Log fragments pasted into a sentence WITHOUT quotes: in a Chinese sentence, the runs of ASCII that read
    like a log message ("...就报 NCCL error in: ...ProcessGroupNCCL.cpp:260, unhandled system error，单机没问题");
    in an English sentence, the text from a log marker (NCCL WARN, NVRM:, SomeError:) to the end of the line,
    when a sentence precedes it. The line rules read them like quoted fragments."""
    out = []
    if _CJK.search(line):
        for run in _CJK_RUN.split(line[:4000]):
            run = run.strip(" ,.;:()[]'\"")
            if len(run) >= 16 and len(run.split()) >= 3 and _LOGGY.search(run):
                out.append(run)
        return out
    m = _MID_MARK.search(line[:4000])
    if m and m.start() > 0 and _plain_prefix(line, m.start()):
        out.append(line[m.start():4000].strip())
    return out


def is_prose(line: str) -> bool:
    """A sentence of notes (not a tool's or a log's line). A line with >= 6 Chinese characters is notes
    (even when it quotes a log fragment); shorter Chinese text counts unless the line carries a log
    marker; English needs >= 4 words, most of them plain words, and no log marker - except a log message
    that follows a sentence on the same line (:func:`embedded_spans`): then the sentence before it decides."""
    line = _QUOTES.sub(" ", line)        # judge the sentence around what it quotes
    s = line.strip()
    if not s:
        return False
    n_cjk = len(_CJK.findall(s))
    if n_cjk >= 6:            # a Chinese sentence, even when it quotes a log fragment inline
        return True
    if _LOG_MARK.search(line) or _LOG_PREFIX.search(line):
        m = _MID_MARK.search(line)
        if not (m and m.start() > 0 and n_cjk == 0 and _plain_prefix(line, m.start())):
            return False
        return True
    if n_cjk >= 2:
        return True
    toks = s.split()
    if len(toks) < 4:
        return False
    words = [t for t in toks if _WORD.fullmatch(t.strip(",.;:!?()\"'"))]
    # mostly plain words; or a long sentence whose numbers and settings ("node1+node2 = 25 GB/s busbw,
    # NCCL_ALGO=RING") crowd out the words but that still carries eight or more of them
    return len(words) >= 0.6 * len(toks) or (len(words) >= 8 and len(words) >= 0.35 * len(toks))


# softer log marks: a "prefix:" at the start (libceph:, nfs:), an IP address, a hex value, key=value
_SOFT_LOG = re.compile(r"^\s*[\w.-]+:\s|\b\d{1,3}(?:\.\d{1,3}){3}\b|\b0x[0-9a-fA-F]{2,}|\b\w+=\S")


def is_sentence(line: str) -> bool:
    """Stricter than :func:`is_prose`: a line the line rules treat as a sentence of notes (rules of
    ``LOG_ONLY_KINDS`` do not fire on it). A kernel line without a timestamp ("libceph: mon0 10.0.0.1:6789
    session lost") is not a sentence, although its words would pass :func:`is_prose`."""
    return is_prose(line) and (len(_CJK.findall(line)) >= 6 or not _SOFT_LOG.search(_QUOTES.sub(" ", line)))




def quoted_spans(line: str) -> list[str]:
    """Quoted or backticked fragments of a sentence (candidates for log lines quoted in notes)."""
    return [next(g for g in m.groups() if g) for m in _QUOTES.finditer(line)]


#: notes read per paste: nobody writes more; a log that looks like prose beyond this is not read as notes
MAX_NOTES_CHARS = 200_000


def prose_text(text: str, max_chars: int = MAX_NOTES_CHARS) -> str:
    """The lines of ``text`` that are notes (see :func:`is_prose`), joined by newlines; at most
    ``max_chars`` characters of notes (a line of notes longer than 2,000 characters is cut there)."""
    out, n = [], 0
    for ln in text.split("\n"):
        if is_prose(ln[:4000]):
            ln = ln[:2000]
            out.append(ln)
            n += len(ln) + 1
            if n >= max_chars:
                break
    return "\n".join(out)


def _signal(m: SignatureMatch, src: str) -> Signal:
    sig = m.signature
    if m.full:
        w = PROSE_FULL_WEIGHT + (0.05 if m.numeric else 0.0) + (0.05 if len(sig.cues) >= 4 else 0.0)
        msg = f"the notes describe '{sig.title}' ({', '.join(c.split(':', 1)[-1] for c in m.cues)}): {sig.root_cause}"
        return Signal(sig.layer, f"sig:{sig.id}", "fail", round(w, 2), _quote(m.quote), msg, src, f"sig:{sig.id}", True,
                      "failure signature")
    msg = (f"the notes partly match '{sig.title}' ({len(m.cues)} of {len(sig.cues)} concepts: "
           f"{', '.join(c.split(':', 1)[-1] for c in m.cues)}): a hint, not evidence")
    return Signal(sig.layer, f"sig:{sig.id}", "warn", PROSE_HINT_WEIGHT, _quote(m.quote), msg, src, f"sig:{sig.id}",
                  False, "failure signature")


def prose_signals(text: str, src: str, ctx: dict, prose: str | None = None) -> list[Signal]:
    """Signals of the failure signatures observed in the notes of ``text`` (or in ``prose`` when the
    caller already knows it is notes, e.g. the symptom). Matches are kept in
    ``ctx['signature_matches']`` for the diagnosis (which signature matched, similar incidents)."""
    notes = prose[:MAX_NOTES_CHARS] if prose is not None else prose_text(text)
    if not notes.strip():
        return []
    ctx.setdefault("notes", []).append(notes)      # read again by the layer lexicon when nothing else decides
    out = []
    for m in match_text(notes, source=src):
        ctx.setdefault("signature_matches", []).append(m)
        out.append(_signal(m, src))
    return out
