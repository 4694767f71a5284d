"""The package map in ``labutil/__init__.py`` is the layer table, and every import follows it.

The map lists every module of labutil in seven layers (base, catalog, model, ops, course, ui,
tools). The rule: a module imports only modules of earlier layers and modules listed above it in
its own layer. The imports are read with ``ast`` from every module of the package: module-level
and function-level, absolute and relative, ``from . import x`` and ``from .x import y``, and
``importlib.import_module("labutil....")`` with a literal name. The cycle check also follows what
Python runs: importing ``labutil.a.b`` from outside package ``a`` first runs ``a/__init__.py``.

Each check reports every offending import as ``file:line  module (layer) -> module (layer)``.
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import labutil

PKG = Path(labutil.__file__).resolve().parent
UI_LAYER = "ui"
MODEL_LAYERS = ("base", "catalog", "model")


# ------------------------------------------------------------------------------------ the map
_LAYER = re.compile(r"^Layer (\d+) · (\w+)")
_ENTRY = re.compile(r"^ {4}(\S+) {2,}\S")


@dataclass(frozen=True)
class Line:
    layer: int
    layer_name: str
    rank: int          # position of the line within its layer
    name: str          # module name relative to labutil, or a prefix ending in '*'


def package_map() -> list[Line]:
    """The lines of the package map (the docstring of ``labutil/__init__.py``), read without importing."""
    doc = ast.get_docstring(ast.parse((PKG / "__init__.py").read_text(encoding="utf-8")))
    lines, layer, name, rank = [], None, None, 0
    for text in doc.splitlines():
        m = _LAYER.match(text)
        if m:
            layer, name, rank = int(m.group(1)), m.group(2), 0
            continue
        m = _ENTRY.match(text)
        if m and layer is not None:
            lines.append(Line(layer, name, rank, m.group(1)))
            rank += 1
    return lines


def modules() -> dict[str, Path]:
    """Every module of the package by name relative to labutil ('comm', 'explore.comm', 'parsers');
    the package itself is ''."""
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = list(p.relative_to(PKG).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


MODULES = modules()
MAP = package_map()


def _place(name: str) -> Line | None:
    exact = [ln for ln in MAP if ln.name == name]
    if exact:
        return exact[0]
    pattern = [ln for ln in MAP if ln.name.endswith("*") and name.startswith(ln.name[:-1])]
    return pattern[0] if pattern else None


PLACE = {name: _place(name) for name in MODULES if name}


# -------------------------------------------------------------------------------- the imports
@dataclass(frozen=True)
class Edge:
    src: str
    dst: str
    line: int
    in_function: bool
    implicit: bool = False   # the package __init__ Python runs before dst's submodule

    def where(self) -> str:
        path = MODULES[self.src].relative_to(PKG.parent)
        how = " (in a function)" if self.in_function else ""
        how += " (package __init__ run by this import)" if self.implicit else ""
        return f"{path}:{self.line}  {_label(self.src)} -> {_label(self.dst)}{how}"


def _label(name: str) -> str:
    if not name:
        return "labutil"
    p = PLACE.get(name)
    return f"{name} ({p.layer_name})" if p else f"{name} (not in the map)"


def _target(base: list[str], name: str | None) -> str:
    full = ".".join(base + ([name] if name else []))
    return full if full in MODULES else ".".join(base)


def _edges_of(src: str, path: Path) -> list[Edge]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    parent = {c: n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}

    def in_function(node) -> bool:
        while node in parent:
            node = parent[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return True
        return False

    here = src.split(".") if src else []
    pkg = here if is_pkg else here[:-1]
    out = []
    for node in ast.walk(tree):
        dsts: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[:len(pkg) - (node.level - 1)] if node.level > 1 else list(pkg)
                base += node.module.split(".") if node.module else []
            elif node.module == "labutil" or (node.module or "").startswith("labutil."):
                base = node.module.split(".")[1:]
            else:
                continue
            dsts = [_target(base, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            dsts = [_target(a.name.split(".")[1:], None) for a in node.names
                    if a.name == "labutil" or a.name.startswith("labutil.")]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str) and node.args[0].value.startswith("labutil")):
            dsts = [_target(node.args[0].value.split(".")[1:], None)]
        for dst in dsts:
            if dst != src:
                out.append(Edge(src, dst, node.lineno, in_function(node)))
    return out


EDGES = [e for name, path in MODULES.items() for e in _edges_of(name, path)]
#: The edges between modules the map places (a module missing from the map fails the map test instead).
PLACED = [e for e in EDGES if e.src and e.dst and PLACE[e.src] and PLACE[e.dst]]


def _implicit(edges: list[Edge]) -> list[Edge]:
    """Importing ``a.b.c`` from outside package ``a.b`` first runs ``a/b/__init__.py`` (and ``a``'s)."""
    out = []
    for e in edges:
        parts = e.dst.split(".")
        for k in range(1, len(parts)):
            p = ".".join(parts[:k])
            if p in MODULES and e.src != p and not e.src.startswith(p + "."):
                out.append(Edge(e.src, p, e.line, e.in_function, implicit=True))
    return out


def _report(bad: list[Edge], what: str) -> str:
    lines = sorted({e.where() for e in bad})
    return f"{len(lines)} import(s) {what}:\n" + "\n".join(lines)


# ---------------------------------------------------------------------------------- the checks
def test_the_map_lists_every_module_once():
    assert [ln.layer for ln in MAP] == sorted(ln.layer for ln in MAP), "layers must appear in order"
    assert {ln.layer_name for ln in MAP} == {"base", "catalog", "model", "ops", "course", "ui", "tools"}
    missing = sorted(n for n, p in PLACE.items() if p is None)
    assert not missing, f"modules missing from the package map in labutil/__init__.py: {missing}"
    explicit = [ln.name for ln in MAP if not ln.name.endswith("*")]
    assert len(explicit) == len(set(explicit)), "a module listed twice"
    stale = sorted(n for n in explicit if n not in MODULES)
    assert not stale, f"the package map lists modules that do not exist: {stale}"
    empty = [ln.name for ln in MAP if ln.name.endswith("*") and not any(p is ln for p in PLACE.values())]
    assert not empty, f"patterns that match no module: {empty}"


def test_the_package_itself_imports_nothing():
    assert not [e for e in EDGES if e.src == ""], "labutil/__init__.py must import nothing (it is the map)"
    tree = ast.parse((PKG / "__init__.py").read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def test_no_import_from_a_later_layer():
    bad = [e for e in PLACED if PLACE[e.dst].layer > PLACE[e.src].layer]
    assert not bad, _report(bad, "reach a LATER layer")


def test_imports_within_a_layer_follow_the_map_order():
    bad = [e for e in PLACED if PLACE[e.dst].layer == PLACE[e.src].layer
           and PLACE[e.dst].rank >= PLACE[e.src].rank]
    assert not bad, _report(bad, "reach a module listed at or below the importer in its own layer")


def _cycles(edges: list[Edge]) -> list[list[str]]:
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.src, set()).add(e.dst)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found = []

    def visit(v: str) -> None:   # Tarjan's strongly connected components (depth < number of modules)
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    edges = EDGES + _implicit(EDGES)
    cycles = _cycles(edges)
    detail = [e.where() for c in cycles for e in edges if e.src in c and e.dst in c]
    assert not cycles, f"import cycles {cycles}:\n" + "\n".join(sorted(set(detail)))


def test_the_cycle_check_finds_a_cycle():
    a, b, c = (Edge("x", "y", 1, False), Edge("y", "z", 1, True), Edge("z", "x", 1, True))
    assert _cycles([a, b, c]) == [["x", "y", "z"]] and _cycles([a, b]) == []


def test_models_never_import_the_ui():
    bad = [e for e in PLACED if PLACE[e.src].layer_name in MODEL_LAYERS
           and PLACE[e.dst].layer_name == UI_LAYER]
    assert not bad, _report(bad, "from a model module into explore / plotting / widgets / notebook / raster")


def test_exercises_never_import_explore():
    bad = [e for e in EDGES if (e.src == "exercises" or e.src.startswith("exercises."))
           and (e.dst == "explore" or e.dst.startswith("explore."))]
    assert not bad, _report(bad, "from an exercise module into explore (answers come from the models)")


def test_comm_never_imports_cluster():
    """The bare α-β model sits below Cluster; the data-parallel model on a Cluster is dp."""
    bad = [e for e in EDGES if e.src == "comm" and e.dst in ("cluster", "dp")]
    assert not bad, _report(bad, "from comm into cluster/dp")


def test_the_layer_table_itself():
    """A few placements the course relies on, so the map cannot drift into a weaker order."""
    order = {n: (p.layer, p.rank) for n, p in PLACE.items() if p}
    assert order["units"] < order["data_files"] < order["hardware"] < order["compute"]
    assert order["comm"] < order["cluster"] < order["dp"] < order["health"] < order["exercises"]
    assert PLACE["tables"].layer_name == "base" and PLACE["plotting"].layer_name == UI_LAYER
    assert {PLACE[n].layer_name for n in MODULES if n.startswith("explore")} == {UI_LAYER}
    assert {PLACE[n].layer_name for n in MODULES if n.startswith("exercises")} == {"course"}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_declares_all(name):
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    declared = [n for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                and any(isinstance(t, ast.Name) and t.id == "__all__"
                        for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
    assert declared, f"{MODULES[name]} has no __all__"
    mod = importlib.import_module("labutil" + (f".{name}" if name else ""))
    names = list(mod.__all__)
    assert len(names) == len(set(names)), f"{name}.__all__ lists a name twice"
    absent = [n for n in names if not hasattr(mod, n)]
    assert not absent, f"{name}.__all__ names what the module does not define: {absent}"
