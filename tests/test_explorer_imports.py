"""Issue 19 step 12: every chapter and lab imports an explorer module with one spelling,
``from labutil.explore import <module> as <module>_x`` (one module per line), and never under
another alias or through ``import labutil.explore...`` — so a reader of any notebook finds the same
name for the same thing, and the model module keeps its plain name (``from labutil import comm``)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "chapters").glob("ch*.py")) + sorted((ROOT / "labs").glob("lab*.py"))


def _explore_imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("labutil.explore"):
            yield node.lineno, node.module, [(a.name, a.asname) for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("labutil.explore"):
                    yield node.lineno, a.name, [(a.name, a.asname)]
        elif isinstance(node, ast.ImportFrom) and node.module == "labutil" and any(a.name == "explore" for a in node.names):
            yield node.lineno, "labutil", [("explore", None)]


def test_the_sources_parse_and_some_import_explorers():
    found = [p for p in SOURCES if list(_explore_imports(p))]
    assert len(SOURCES) == 36 and len(found) >= 30


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_one_spelling_for_explorer_imports(path):
    bad = []
    for line, module, names in _explore_imports(path):
        ok = module == "labutil.explore" and len(names) == 1 and names[0][1] == f"{names[0][0]}_x"
        if not ok:
            bad.append(f"{path.name}:{line}: {module} {names}")
    assert not bad, ("write `from labutil.explore import <module> as <module>_x`, one module per line: " + "; ".join(bad))
