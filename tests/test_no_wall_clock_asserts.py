"""No unit test asserts on wall-clock time (issue 18; the guide: speed is checked by benchmarks under
``benchmarks/``, not by timed unit tests, so ``make test`` passes on a loaded machine). An ``assert``
may not read a clock (``time.perf_counter/time/monotonic``) nor a name computed from one."""

import ast
from pathlib import Path

import pytest

TESTS = sorted(Path(__file__).resolve().parent.glob("test_*.py"))
CLOCKS = {"perf_counter", "time", "monotonic", "perf_counter_ns", "monotonic_ns", "time_ns"}


def _reads_clock(node) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Attribute) and f.attr in CLOCKS and isinstance(f.value, ast.Name) and f.value.id == "time":
                return True
            if isinstance(f, ast.Name) and f.id in {"perf_counter", "monotonic"}:
                return True
    return False


def _clock_asserts(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = []
    for fn in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        timed = set()
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and _reads_clock(n.value):
                timed |= {t.id for t in n.targets if isinstance(t, ast.Name)}
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign) and any(isinstance(x, ast.Name) and x.id in timed for x in ast.walk(n.value)):
                timed |= {t.id for t in n.targets if isinstance(t, ast.Name)}
        for n in ast.walk(fn):
            if isinstance(n, ast.Assert) and (_reads_clock(n.test) or any(
                    isinstance(x, ast.Name) and x.id in timed for x in ast.walk(n.test))):
                bad.append(f"{path.name}:{n.lineno} in {fn.name}")
    return bad


def test_the_scan_finds_a_timed_assert(tmp_path):
    p = tmp_path / "test_x.py"
    p.write_text("import time\ndef test_a():\n    t0 = time.perf_counter()\n    dt = time.perf_counter() - t0\n"
                 "    assert dt < 1.0\n", encoding="utf-8")
    assert _clock_asserts(p) == ["test_x.py:5 in test_a"]


@pytest.mark.parametrize("path", TESTS, ids=lambda p: p.stem)
def test_no_assert_reads_the_wall_clock(path):
    assert not _clock_asserts(path), "move the time budget to benchmarks/: " + ", ".join(_clock_asserts(path))
