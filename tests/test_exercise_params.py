"""Issue 17: an exercise that refers to a chapter cell uses the same parameters as that cell.

An exercise declares the model calls it shares with its chapter and the values it uses::

    register(Exercise(key="ch07.5", ..., params={"memory.model_states_gb": {"params": 7.5e9, "dp": 64,
                                                                               "zero_stage": 3}}))

This test reads the chapter's source (``chapters/chNN_*.py``) with ``ast`` and checks that at least one
call of that function (``memory.model_states_gb(...)``, ``mem.model_states_gb(...)`` or a bare
``model_states_gb(...)``) binds every declared parameter to the declared value. Arguments are bound
with the real function's signature (positional or keyword, defaults filled in); an argument written
as a name is resolved through the chapter's assignments and ``for`` loops over literal sequences or
``range`` (a loop variable stands for each of its values). The review's cases this prevents: ch16.4
graded with a disk efficiency of 1.0 where the prompt and the chapter use 0.38.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import math
from pathlib import Path

import pytest

from labutil.exercises import load_all

ROOT = Path(__file__).resolve().parents[1]
ALL = load_all()
DECLARED = sorted(k for k, e in ALL.items() if e.params)
UNKNOWN = object()
_MAX_COMBOS = 256


def chapter_source(key: str) -> Path:
    chapter = key.split(".")[0]
    hits = sorted((ROOT / "chapters").glob(f"{chapter}_*.py"))
    assert len(hits) == 1, f"{key}: no single chapter source for {chapter}: {hits}"
    return hits[0]


def resolve_callable(path: str):
    """'memory.model_states_gb' or 'cluster.Cluster.system' inside labutil -> the object."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module("labutil." + ".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise LookupError(f"cannot resolve {path!r} inside labutil")


class Env:
    """Possible values of the chapter's names (every literal assigned to them, every loop value)."""

    def __init__(self, tree: ast.Module):
        self.values: dict[str, list] = {}
        self.modules: dict[str, object] = {}     # local name -> labutil module (from the chapter's imports)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "labutil":
                for alias in node.names:
                    try:
                        mod = importlib.import_module(f"{node.module}.{alias.name}")
                    except ModuleNotFoundError:
                        continue
                    self.modules[alias.asname or alias.name] = mod
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("labutil.") and alias.asname:
                        self.modules[alias.asname] = importlib.import_module(alias.name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    self._bind(target, node.value)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None and isinstance(node.target, ast.Name):
                self._bind(node.target, node.value)
            elif isinstance(node, (ast.For, ast.comprehension)):
                items = self._iterate(node.iter)
                if items is not None:
                    self._bind_many(node.target, items)

    def _add(self, name: str, value) -> None:
        self.values.setdefault(name, []).append(value)

    def _bind(self, target, value_node) -> None:
        if isinstance(target, ast.Name):
            for v in self.eval(value_node):
                if v is not UNKNOWN:
                    self._add(target.id, v)
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value_node, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value_node.elts):
            for t, v in zip(target.elts, value_node.elts):
                self._bind(t, v)

    def _bind_many(self, target, items) -> None:
        for item in items:
            if isinstance(target, ast.Name):
                self._add(target.id, item)
            elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(item, (tuple, list)) \
                    and len(item) == len(target.elts):
                for t, v in zip(target.elts, item):
                    if isinstance(t, ast.Name):
                        self._add(t.id, v)

    def _iterate(self, node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
            args = [self.eval(a) for a in node.args]
            if all(len(a) == 1 and isinstance(a[0], int) for a in args):
                return list(range(*[a[0] for a in args]))
            return None
        vals = self.eval(node)
        if len(vals) == 1 and isinstance(vals[0], (tuple, list)):
            return list(vals[0])
        return None

    def eval(self, node) -> list:
        """All values ``node`` may have ([UNKNOWN] when it is not a literal computation)."""
        try:
            return [ast.literal_eval(node)]
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
        if isinstance(node, ast.Name):
            return list(self.values.get(node.id, [UNKNOWN]))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in self.modules:
            value = getattr(self.modules[node.value.id], node.attr, UNKNOWN)   # e.g. dataloading.RESNET50_A100_IMG_S
            if isinstance(value, dict):
                value = tuple(value)
            return [value if isinstance(value, (int, float, str, tuple, list)) else UNKNOWN]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return [(-v if isinstance(v, (int, float)) else UNKNOWN) for v in self.eval(node.operand)]
        if isinstance(node, ast.BinOp):
            ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
                   ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Pow: lambda a, b: a ** b}
            op = ops.get(type(node.op))
            if op is None:
                return [UNKNOWN]
            out = []
            for a, b in itertools.islice(itertools.product(self.eval(node.left), self.eval(node.right)), _MAX_COMBOS):
                try:
                    out.append(op(a, b) if UNKNOWN not in (a, b) else UNKNOWN)
                except Exception:  # noqa: BLE001 - a non-numeric operand is simply unknown
                    out.append(UNKNOWN)
            return out or [UNKNOWN]
        if isinstance(node, (ast.Tuple, ast.List)):
            parts = [self.eval(e) for e in node.elts]
            if all(len(p) == 1 for p in parts):
                return [tuple(p[0] for p in parts)]
        return [UNKNOWN]


def _called_name(call: ast.Call) -> str | None:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def bound_calls(source: str, func_path: str) -> list[dict[str, list]]:
    """Every call of ``func_path``'s function in ``source``: {parameter: possible values}, defaults filled."""
    tree = ast.parse(source)
    env = Env(tree)
    func = resolve_callable(func_path)
    sig = inspect.signature(func)
    params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")]
    sig = sig.replace(parameters=params)
    name = func_path.rsplit(".", 1)[-1]
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _called_name(node) != name:
            continue
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            continue
        args = [("pos", i, a) for i, a in enumerate(node.args)] + [("kw", k.arg, k.value) for k in node.keywords]
        try:
            ba = sig.bind_partial(*[object() for _ in node.args], **{k.arg: object() for k in node.keywords})
        except TypeError:
            continue
        values: dict[str, list] = {}
        positional = list(ba.arguments)
        for kind, where, expr in args:
            pname = positional[where] if kind == "pos" else where
            values[pname] = env.eval(expr)
        for p in sig.parameters.values():
            if p.name not in values and p.default is not inspect.Parameter.empty:
                values[p.name] = [p.default]
        values["_line"] = [node.lineno]
        out.append(values)
    return sorted(out, key=lambda c: c["_line"][0])


def _same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def matches(call: dict[str, list], declared: dict[str, object]) -> bool:
    return all(any(_same(v, want) for v in call.get(p, [])) for p, want in declared.items())


def test_some_exercises_declare_their_cells_parameters():
    assert len(DECLARED) >= 10, DECLARED


@pytest.mark.parametrize("key", DECLARED)
def test_exercise_uses_the_same_parameters_as_its_chapter_cell(key):
    ex = ALL[key]
    src = chapter_source(key)
    text = src.read_text(encoding="utf-8")
    for func_path, declared in ex.params.items():
        sig = inspect.signature(resolve_callable(func_path))
        unknown = set(declared) - set(sig.parameters)
        assert not unknown, f"{key}: {func_path} has no parameter(s) {sorted(unknown)}"
        calls = bound_calls(text, func_path)
        assert calls, f"{key}: {src.name} never calls {func_path}"
        if not any(matches(c, declared) for c in calls):
            seen = "; ".join(f"line {c['_line'][0]}: " + ", ".join(f"{p}={c.get(p, ['?'])}" for p in declared)
                             for c in calls)
            pytest.fail(f"{key} uses {func_path}({declared}) but {src.name} calls it with {seen}")


def _owner_and_name(path: str):
    parts = path.split(".")
    owner = resolve_callable(".".join(parts[:-1])) if len(parts) > 2 else importlib.import_module("labutil." + parts[0])
    return owner, parts[-1]


def answer_calls(ex, monkeypatch) -> dict[str, list[dict]]:
    """{function path: [bound arguments of each call]} made while computing ``ex``'s answer."""
    seen: dict[str, list[dict]] = {}
    for func_path in ex.params:
        owner, name = _owner_and_name(func_path)
        original = getattr(owner, name)
        sig = inspect.signature(original)

        def spy(*args, __path=func_path, __orig=original, __sig=sig, **kwargs):
            try:
                ba = __sig.bind(*args, **kwargs)
                ba.apply_defaults()
                seen.setdefault(__path, []).append(dict(ba.arguments))
            except TypeError:
                pass
            return __orig(*args, **kwargs)

        monkeypatch.setattr(owner, name, spy)
    ex.expected()
    return seen


def uses_declared(ex, seen) -> bool:
    return all(any(all(_same(c.get(p), v) for p, v in declared.items()) for c in seen.get(func_path, []))
               for func_path, declared in ex.params.items())


@pytest.mark.parametrize("key", DECLARED)
def test_exercise_answer_really_uses_the_declared_parameters(key, monkeypatch):
    """The declaration is not a comment: computing the answer calls the function with those values."""
    ex = ALL[key]
    seen = answer_calls(ex, monkeypatch)
    assert uses_declared(ex, seen), (key, {k: v[:3] for k, v in seen.items()})


def test_a_declaration_the_answer_does_not_use_is_caught(monkeypatch):
    from labutil import memory
    from labutil.exercises import Exercise

    ex = Exercise(key="t.p", prompt="p", answer=lambda: memory.model_states_gb(7.5e9, 64, 3).total_gb,
                  params={"memory.model_states_gb": {"params": 7.5e9, "dp": 32}}, hints=("h",), solution_text="s")
    assert not uses_declared(ex, answer_calls(ex, monkeypatch))


def test_the_checker_finds_a_mismatch(tmp_path):
    """The reading itself: loop values, names, defaults and a wrong value."""
    src = ("from labutil import memory\nN = 64\nfor stage in range(4):\n"
           "    ms = memory.model_states_gb(7.5e9, N, stage)\nmemory.model_states_gb(1e9, dp=8)\n")
    calls = bound_calls(src, "memory.model_states_gb")
    assert len(calls) == 2
    assert matches(calls[0], {"params": 7.5e9, "dp": 64, "zero_stage": 3})
    assert not matches(calls[0], {"params": 7.5e9, "dp": 32})
    assert matches(calls[1], {"params": 1e9, "dp": 8, "zero_stage": 0, "optimizer": "adam"})
