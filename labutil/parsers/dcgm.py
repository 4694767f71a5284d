"""Parser for the ASCII result table of ``dcgmi diag -r 1|2|3|4`` (NVIDIA DCGM).

Format (DCGM ``dcgmi/Diag.cpp`` table writer; samples pasted in NVIDIA/DCGM issues #55, #198
and NVIDIA/go-dcgm #52)::

    +---------------------------+------------------------------------------------+
    | Diagnostic                | Result                                         |
    +===========================+================================================+
    |-----  Metadata  ----------+------------------------------------------------|
    | DCGM Version              | 3.3.7                                          |
    |-----  Deployment  --------+------------------------------------------------|
    | Denylist                  | Pass                                           |
    +-----  Hardware  ----------+------------------------------------------------+
    | GPU Memory                | Pass - GPU: 1                                  |
    |                           | Fail - GPU: 0                                  |
    | Warning                   | GPU 0 Error using CUDA API cuCtxCreate Check   |
    |                           | DCGM and system logs for errors. Reset GPU. R  |
    |                           | estart DCGM. ...                               |

Long messages are wrapped at a fixed cell width, mid-word; the parser re-joins them. DCGM 4 prints
the per-GPU results as continuation rows (``|   | GPU0: Pass |``); a name cell ``Warning: GPU0`` /
``Error: GPU1`` is read like ``Warning``. ``dcgmi diag -j`` JSON (``{"DCGM GPU Diagnostic":
{"test_categories": [{"category": ..., "tests": [{"name": ..., "results": [{"gpu_id": "0",
"status": "Skip"}]}]}]}}``, as attached to NVIDIA/DCGM #139) is parsed into the same result.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ._common import ParseError, require_text

__all__ = ["DcgmTest", "DcgmDiag", "parse_dcgmi_diag", "STATUS_ORDER"]

STATUS_ORDER = {"Pass": 0, "Skip": 1, "Warn": 2, "Fail": 3}
_STATUS = re.compile(r"^(Pass|Fail|Skip|Warn)\b\s*(?:-\s*(.*))?$", re.I)
_GPU_STATUS = re.compile(r"^GPU\s*(\d+)\s*:\s*(Pass|Fail|Skip|Warn)\b\s*(.*)$", re.I)
_CATEGORY = re.compile(r"^[|+]-{2,}\s+([A-Za-z][A-Za-z /]*?)\s+-{2,}\+")


@dataclass
class DcgmTest:
    """One diagnostic. ``results`` are (status, scope) pairs such as ('Fail', 'GPU: 0');
    ``status`` is the worst of them (Fail > Warn > Skip > Pass)."""

    category: str
    name: str
    results: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    info: list = field(default_factory=list)

    @property
    def status(self) -> str:
        if not self.results:
            return "Skip"
        return max((s for s, _ in self.results), key=lambda s: STATUS_ORDER[s])

    @property
    def failed_gpus(self) -> list[int]:
        out = []
        for s, scope in self.results:
            if s == "Fail":
                out += [int(x) for x in re.findall(r"\d+", scope or "")]
        return out


@dataclass
class DcgmDiag:
    metadata: dict
    tests: list[DcgmTest]
    level: int | None = None

    @property
    def passed(self) -> bool:
        """True when no test failed (Warn and Skip do not fail the run)."""
        return all(t.status != "Fail" for t in self.tests)

    def by_status(self, status: str) -> list[DcgmTest]:
        return [t for t in self.tests if t.status.lower() == status.lower()]

    def test(self, name: str) -> DcgmTest:
        for t in self.tests:
            if t.name.lower() == name.lower():
                return t
        raise KeyError(f"no test {name!r}; tests: {[t.name for t in self.tests]}")


def _norm_status(s: str) -> str:
    return s[:1].upper() + s[1:].lower()


def parse_dcgmi_diag(text) -> DcgmDiag:
    """Parse the table printed by ``dcgmi diag -r N``."""
    text = require_text(text, "dcgmi diag")
    brace = text.find("{")
    if brace >= 0 and not text[:brace].strip().count("|") and '"test_categories"' in text:
        return _parse_json(text[brace:])
    level = None
    m = re.search(r"dcgmi\s+diag\s+(?:.*?\s)?(?:-r|--run)\s+(\d)", text)
    if m:
        level = int(m.group(1))
    category = ""
    metadata: dict = {}
    tests: list[DcgmTest] = []
    last_kind = None  # 'result' | 'warning' | 'info'
    chunks: list[str] = []

    def flush():
        nonlocal chunks
        if chunks and tests and last_kind in ("warning", "info"):
            msg = " ".join("".join(chunks).split())
            (tests[-1].warnings if last_kind == "warning" else tests[-1].info).append(msg)
        chunks = []

    for line in text.split("\n"):
        s = line.strip()
        mc = _CATEGORY.match(s)
        if mc:
            flush()
            category = mc.group(1).strip()
            last_kind = None
            continue
        if not (s.startswith("|") and s.endswith("|") and s.count("|") >= 3):
            continue
        cells = s[1:-1].split("|")
        if len(cells) != 2:
            continue
        name, raw = cells[0].strip(), cells[1]
        value = raw.strip()
        width = max(len(raw) - 3, 1)
        chunk = raw[1:1 + width] if raw.startswith(" ") else raw
        if name in ("Diagnostic",) and value == "Result":
            continue
        if name:
            flush()
            if category.lower() == "metadata":
                metadata[name] = value
                last_kind = None
                continue
            kind_word = re.match(r"^(warning|error|info)\b\s*(?::\s*(.*))?$", name, re.I)
            if kind_word and kind_word.group(1).lower() in ("warning", "error"):
                scope = (kind_word.group(2) or "").strip()
                last_kind, chunks = "warning", ([f"{scope}: "] if scope else []) + [chunk]
                continue
            if kind_word:
                last_kind, chunks = "info", [chunk]
                continue
            st = _STATUS.match(value)
            if st:
                tests.append(DcgmTest(category, name, [(_norm_status(st.group(1)), (st.group(2) or "").strip())]))
                last_kind = "result"
            else:
                gm = _GPU_STATUS.match(value)
                if gm:
                    tests.append(DcgmTest(category, name, [(_norm_status(gm.group(2)), f"GPU: {gm.group(1)}")]))
                    last_kind = "result"
                else:
                    last_kind = None
            continue
        # continuation row (empty name cell)
        if last_kind in ("warning", "info"):
            chunks.append(chunk)
            continue
        if tests and last_kind == "result":
            st = _STATUS.match(value)
            gm = _GPU_STATUS.match(value)
            if st:
                tests[-1].results.append((_norm_status(st.group(1)), (st.group(2) or "").strip()))
            elif gm:
                tests[-1].results.append((_norm_status(gm.group(2)), f"GPU: {gm.group(1)}"))
    flush()
    if not tests:
        raise ParseError("dcgmi diag: no '| Test name | Pass/Fail/Skip/Warn |' row found in the result table")
    return DcgmDiag(metadata, tests, level)


def _as_list(v) -> list:
    return v if isinstance(v, list) else [] if v is None else [v]


def _parse_json(text: str) -> DcgmDiag:
    """``dcgmi diag -j``: any object holding a ``test_categories`` list (DCGM 3.x / 4.x)."""
    try:
        doc, _ = json.JSONDecoder().raw_decode(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"dcgmi diag: JSON output that does not decode ({exc})") from None
    stack, body = [doc], None
    while stack and body is None:
        cur = stack.pop()
        if isinstance(cur, dict):
            if isinstance(cur.get("test_categories"), list):
                body = cur
            else:
                stack += list(cur.values())
        elif isinstance(cur, list):
            stack += cur
    if body is None:
        raise ParseError("dcgmi diag: JSON without a 'test_categories' list")
    metadata = {k: str(v) for k, v in (doc.items() if isinstance(doc, dict) else []) if isinstance(v, (str, int, float))}
    metadata.update({k: str(v) for k, v in body.items() if isinstance(v, (str, int, float))})
    tests: list[DcgmTest] = []
    for cat in body["test_categories"]:
        if not isinstance(cat, dict):
            continue
        for t in _as_list(cat.get("tests")):
            if not isinstance(t, dict) or not isinstance(t.get("name"), str):
                continue
            test = DcgmTest(str(cat.get("category", "")), t["name"])
            for r in _as_list(t.get("results")):
                if not isinstance(r, dict):
                    continue
                st = _STATUS.match(str(r.get("status", "")).strip())
                if st:
                    gpu = r.get("gpu_id", r.get("entity_id"))
                    test.results.append((_norm_status(st.group(1)), f"GPU: {gpu}" if gpu is not None else ""))
                for w in _as_list(r.get("warnings")):
                    msg = w.get("warning") if isinstance(w, dict) else w
                    if isinstance(msg, str) and msg.strip():
                        test.warnings.append(" ".join(msg.split()))
                for i in _as_list(r.get("info")):
                    if isinstance(i, str) and i.strip():
                        test.info.append(" ".join(i.split()))
            tests.append(test)
    if not any(t.results for t in tests):
        raise ParseError("dcgmi diag: JSON with no test result (status Pass/Fail/Skip/Warn)")
    return DcgmDiag(metadata, tests, None)
