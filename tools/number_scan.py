"""Find the numbers the course quotes in more than one place, so that none of them can drift.

Every chapter and lab states numbers in its prose (the markdown cells of its py:percent source) and
prints numbers in its checked outputs (``# NBVAL_CHECK_OUTPUT`` cells of the built notebook). This
script extracts every number written with a unit ("370 GB/s", "2.45 TB", "约 90 倍", "34–55 %",
"2.4 次/天") together with the words around it, and reports:

- ``shared``: the same value in the same unit quoted by two or more notebooks, grouped, each mention
  with its context — the candidates for a course fact (``labutil/facts.py``);
- ``conflicts``: mentions in two notebooks whose units agree and whose surrounding words overlap
  strongly but whose values differ — the candidates for drift (one of them was written against an
  older model, or they are different scenarios that the prose must name);
- ``uncovered``: with either report, ``--uncovered`` keeps only the mentions that no registered fact's
  pattern reads (what is not yet protected by ``tests/test_consistency.py``);
- ``coverage``: for each registered fact, how many (notebook, mention) pairs its patterns check;
- ``fact KEY...``: every mention a fact's patterns read, in context, with ok / WRONG (writing a pattern).

Usage (from the repository root)::

    python tools/number_scan.py shared [--min-notebooks 2] [--unit GB/s] [--uncovered]
    python tools/number_scan.py conflicts [--min-similarity 0.35] [--unit %]
    python tools/number_scan.py coverage
    python tools/number_scan.py fact dgx_h100_2node   # every key starting with it

``corpus()`` is also the reader ``tests/test_consistency.py`` checks the facts against, so the scan
and the test see the same text.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIRS = ("chapters", "labs")
CHECK_MARK = "NBVAL_CHECK_OUTPUT"

__all__ = ["ROOT", "Mention", "corpus", "markdown", "checked_outputs", "mentions", "shared", "conflicts", "covered_spans"]


# ------------------------------------------------------------------------------------------ corpus
def markdown(py: Path) -> str:
    """The markdown cells of a jupytext py:percent source, comment markers stripped."""
    out, md = [], False
    for line in py.read_text(encoding="utf-8").splitlines():
        if line.startswith("# %%"):
            md = "[markdown]" in line
            continue
        if md:
            out.append(re.sub(r"^# ?", "", line))
    return "\n".join(out)


def checked_outputs(nb: Path) -> str:
    """The stored outputs of the notebook's ``# NBVAL_CHECK_OUTPUT`` cells (what nbval compares)."""
    if not nb.exists():
        return ""
    out = []
    for c in json.loads(nb.read_text(encoding="utf-8")).get("cells", []):
        src = "".join(c.get("source", ""))
        if c.get("cell_type") != "code" or not src.lstrip().startswith("# " + CHECK_MARK):
            continue
        for o in c.get("outputs", []):
            if "text" in o:
                out.append("".join(o["text"]))
            elif "data" in o and "text/plain" in o["data"]:
                out.append("".join(o["data"]["text/plain"]))
    return "\n".join(out)


def corpus(root: Path = ROOT, dirs: tuple[str, ...] = NOTEBOOK_DIRS) -> dict[str, dict[str, str]]:
    """notebook stem (``ch03_architecture``, ``lab02_nccl_allreduce``) -> {'prose': ..., 'outputs': ...}."""
    out = {}
    for d in dirs:
        for py in sorted((root / d).glob("*.py")):
            if not py.read_text(encoding="utf-8").startswith("# ---"):
                continue  # not a notebook source
            out[py.stem] = {"prose": markdown(py), "outputs": checked_outputs(py.with_suffix(".ipynb"))}
    return out


# ------------------------------------------------------------------------------------- extraction
# units as the course writes them, longest first; each maps to a canonical unit
_UNITS = [
    (r"GB/s|GB/秒", "GB/s"), (r"GiB/s", "GiB/s"), (r"MB/s", "MB/s"), (r"TB/s", "TB/s"), (r"MiB/s", "MiB/s"),
    (r"Gb/s|Gbps|Gbit/s|GbE|G 以太网|G以太网", "Gb/s"), (r"Tb/s|Tbps", "Tb/s"), (r"Mb/s|Mbps", "Mb/s"),
    (r"PFLOP/s|PFLOPS|PFLOP", "PFLOP/s"), (r"EFLOP/s|EFLOPS", "EFLOP/s"), (r"TFLOP/s|TFLOPS", "TFLOP/s"),
    (r"FLOP/byte|FLOP/B", "FLOP/byte"), (r"FLOPs?", "FLOP"),
    (r"TiB", "TiB"), (r"GiB", "GiB"), (r"MiB", "MiB"), (r"KiB", "KiB"),
    (r"PB", "PB"), (r"TB", "TB"), (r"GB", "GB"), (r"MB", "MB"), (r"KB|kB", "kB"),
    (r"kWh|千瓦时|度电", "kWh"), (r"MWh", "MWh"), (r"MW|兆瓦", "MW"), (r"kW|千瓦", "kW"), (r"W|瓦", "W"),
    (r"次/天|次每天|failures per day|次中断/天", "1/day"), (r"次/小时", "1/h"), (r"次/周", "1/week"),
    (r"µs|us|微秒", "us"), (r"ms|毫秒", "ms"), (r"ns|纳秒", "ns"), (r"s\b|秒", "s"), (r"min\b|分钟", "min"),
    (r"小时|h\b|hours?", "h"), (r"天|days?", "day"), (r"周|weeks?", "week"), (r"个月|months?", "month"),
    (r"年|years?", "year"),
    (r"%|％|个百分点", "%"), (r"倍|×(?!\s*\d)|x\b", "x"),
    (r"万亿|T tokens|T token", "T"), (r"亿元|亿", "1e8"), (r"万元|万美元|万", "1e4"), (r"元|美元|\$", "CNY/USD"),
    (r"°C|℃", "degC"), (r"张(?:卡|GPU)?|块(?:GPU|卡)?|GPUs?\b|卡", "GPU"), (r"台(?:服务器)?|nodes?\b|节点", "node"),
    (r"个?端口|ports?\b", "port"), (r"台交换机|switches\b", "switch"), (r"tokens?\b", "token"),
    (r"B\b(?= ?(?:参数|模型|params|model|dense|MoE))|B(?=[- ]?(?:参数|模型))", "params_B"),
]
_UNIT_RE = "|".join(f"(?:{p})" for p, _ in _UNITS)
_NUM = r"(?<![\w.,/])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
_RANGE = r"(?:\s*(?:%|％)?\s*(?:–|-|~|～|到|至)\s*(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?))?"  # 34–55 %, 34%–55%
_MENTION = re.compile(_NUM + _RANGE + r"\s?(" + _UNIT_RE + ")")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_+\-]{1,}|[\u4e00-\u9fff]{2,}")
_STOP = set("的 是 约 为 和 与 在 了 一 个 这 那 时 上 下 中 每 按 用 比 从 到 就 也 都 而 但 或 及 被 把 对 只".split()) | {
    "the", "of", "and", "to", "in", "is", "at", "for", "on", "per", "with", "by", "a", "an", "as", "GB", "s"}


def _canon_unit(u: str) -> str:
    for p, c in _UNITS:
        if re.fullmatch(p, u):
            return c
    return u


def _keywords(text: str) -> frozenset[str]:
    """ASCII words and Chinese character bigrams: the words that say what a number is."""
    out = set()
    for w in _WORD.findall(text):
        if w[0].isascii():
            if w not in _STOP and not w.isdigit():
                out.add(w.lower())
        else:
            out.update(w[i:i + 2] for i in range(len(w) - 1))
    return frozenset(out - _STOP)


@dataclass(frozen=True)
class Mention:
    notebook: str
    where: str          # 'prose' or 'outputs'
    start: int          # offset of the number in that text
    end: int
    value: float
    printed: str        # as written, e.g. '2.45' or '34–55'
    unit: str           # canonical unit
    context: str        # the sentence around it (one line)
    keywords: frozenset[str]

    @property
    def line(self) -> str:
        return f"{self.notebook}:{self.where}  {self.printed} {self.unit}  | {self.context}"


def mentions(texts: dict[str, dict[str, str]], before: int = 40, after: int = 12) -> list[Mention]:
    """Every number written with a unit in every notebook's prose and checked outputs."""
    out = []
    for nb, parts in texts.items():
        for where, txt in parts.items():
            for m in _MENTION.finditer(txt):
                a = max(txt.rfind("\n", 0, m.start()) + 1, m.start() - before)
                e = txt.find("\n", m.end())
                b = min(e if e >= 0 else len(txt), m.end() + after)
                ctx = txt[a:b]
                value = float(m.group(1).replace(",", ""))
                printed = m.group(1) + (f"–{m.group(2)}" if m.group(2) else "")
                kw = _keywords(txt[a:m.start()] + " " + txt[m.end():b])
                out.append(Mention(nb, where, m.start(1), m.end(), value, printed, _canon_unit(m.group(3)), ctx, kw))
    return out


# ------------------------------------------------------------------------------------------ reports
def covered_spans(texts: dict[str, dict[str, str]]) -> dict[tuple[str, str], list[tuple[int, int, str]]]:
    """(notebook, where) -> [(start, end, fact key)] of every number a registered fact's pattern reads."""
    from labutil import facts

    out: dict[tuple[str, str], list[tuple[int, int, str]]] = defaultdict(list)
    for key in facts.keys():
        for p in facts.fact(key).patterns:
            for nb, parts in texts.items():
                for where, txt in parts.items():
                    for m in re.finditer(p, txt):
                        out[(nb, where)].append((m.start(1), m.end(1), key))
    return out


def _is_covered(m: Mention, spans) -> str | None:
    for s, e, key in spans.get((m.notebook, m.where), ()):
        if s <= m.start < e or m.start <= s < m.end:
            return key
    return None


def shared(ms: list[Mention], min_notebooks: int = 2) -> list[tuple[tuple[str, str], list[Mention]]]:
    """Groups (unit, printed value) quoted by at least ``min_notebooks`` notebooks, most widely quoted first."""
    groups: dict[tuple[str, str], list[Mention]] = defaultdict(list)
    for m in ms:
        groups[(m.unit, m.printed)].append(m)
    out = [(k, v) for k, v in groups.items() if len({m.notebook for m in v}) >= min_notebooks]
    return sorted(out, key=lambda kv: (-len({m.notebook for m in kv[1]}), kv[0]))


def conflicts(ms: list[Mention], min_similarity: float = 0.35, min_shared: int = 3) -> list[tuple[float, Mention, Mention]]:
    """Pairs of mentions in different notebooks, same unit, similar words, different values."""
    by_unit: dict[str, list[Mention]] = defaultdict(list)
    for m in ms:
        if m.unit not in ("x",) or m.keywords:
            by_unit[m.unit].append(m)
    out = []
    for unit, group in by_unit.items():
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if a.notebook == b.notebook or a.printed == b.printed or (a.where == b.where == "outputs"):
                    continue  # two model outputs cannot drift from each other: only prose can
                common = a.keywords & b.keywords
                if len(common) < min_shared:
                    continue
                sim = len(common) / max(1, len(a.keywords | b.keywords))
                if sim >= min_similarity and abs(a.value - b.value) > 0.005 * max(abs(a.value), abs(b.value)):
                    out.append((sim, a, b))
    return sorted(out, key=lambda t: -t[0])


def coverage(texts: dict[str, dict[str, str]]) -> dict[str, list[tuple[str, str, str]]]:
    """fact key -> [(notebook, where, printed)] that its patterns check."""
    from labutil import facts

    return {k: [(nb, w, v) for nb, parts in texts.items() for w, t in parts.items() for v in facts.find_values(k, t)]
            for k in facts.keys()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("shared", help="the same value+unit quoted by two or more notebooks")
    s.add_argument("--min-notebooks", type=int, default=2)
    c = sub.add_parser("conflicts", help="similar mentions with different values in two notebooks")
    c.add_argument("--min-similarity", type=float, default=0.35)
    c.add_argument("--min-shared", type=int, default=3)
    for p in (s, c):
        p.add_argument("--unit", help="only this canonical unit (GB/s, TB, %, x, s, day, 1/day, ...)")
        p.add_argument("--uncovered", action="store_true", help="only mentions no registered fact reads")
        p.add_argument("--limit", type=int, default=0)
    sub.add_parser("coverage", help="how many (notebook, mention) pairs each fact checks")
    f = sub.add_parser("fact", help="every mention a fact's patterns read, in context, with its verdict")
    f.add_argument("keys", nargs="*", help="fact keys (default: all); a prefix selects every key starting with it")
    a = ap.parse_args(argv)

    texts = corpus()
    if a.cmd == "fact":
        from labutil import facts

        keys = [k for k in facts.keys() if not a.keys or any(k.startswith(p) for p in a.keys)]
        for k in keys:
            print(f"== {k} = {facts.text(k)}  ({facts.fact(k).description})")
            for nb, parts in texts.items():
                for where, txt in parts.items():
                    for p in facts.fact(k).patterns:
                        for m in re.finditer(p, txt):
                            ok = "ok   " if facts.matches(k, m.group(1)) else "WRONG"
                            a0 = max(txt.rfind("\n", 0, m.start()) + 1, m.start() - 30)
                            e = txt.find("\n", m.end())
                            ctx = txt[a0:min(e if e >= 0 else len(txt), m.end() + 10)]
                            print(f"   {ok} {nb}:{where} {m.group(1)!r:>8}  | {ctx}")
        return 0
    if a.cmd == "coverage":
        cov = coverage(texts)
        for k, hits in cov.items():
            print(f"{len(hits):4d} {len({h[0] for h in hits}):3d} nb  {k}: " + ", ".join(f"{n}:{v}" for n, _, v in hits[:8]))
        print(f"{len(cov)} facts, {sum(map(len, cov.values()))} (notebook, mention) pairs checked")
        return 0
    ms = mentions(texts)
    if a.unit:
        ms = [m for m in ms if m.unit == a.unit]
    if a.uncovered:
        spans = covered_spans(texts)
        ms = [m for m in ms if _is_covered(m, spans) is None]
    n = 0
    if a.cmd == "shared":
        for (unit, printed), group in shared(ms, a.min_notebooks):
            nbs = sorted({m.notebook[:5] for m in group})
            print(f"== {printed} {unit}  ({len(nbs)} notebooks: {' '.join(nbs)})")
            for m in group:
                print("   ", m.line)
            n += 1
            if a.limit and n >= a.limit:
                break
    else:
        for sim, x, y in conflicts(ms, a.min_similarity, a.min_shared):
            print(f"== {sim:.2f}  {x.printed} vs {y.printed} {x.unit}\n    {x.line}\n    {y.line}")
            n += 1
            if a.limit and n >= a.limit:
                break
    return 0


if __name__ == "__main__":
    sys.exit(main())
