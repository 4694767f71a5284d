"""The docstring examples of every labutil module run and print what they show.

The same as ``python -m pytest --doctest-modules labutil``, run as part of the suite (whose
``testpaths`` is ``tests``): one test per module that has examples. A module imports no heavy
optional package at import time (the harnesses of ``labutil.bench`` import torch inside their
functions), so every module is collected; ``test_no_module_imports_torch`` keeps it that way.
Set ``EXCLUDED`` only for a module that cannot be imported without an optional package, with the
reason.
"""

from __future__ import annotations

import doctest
import importlib
import os
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest

import labutil

matplotlib.use("Agg")
PKG = Path(labutil.__file__).resolve().parent

#: module -> why its examples are not run here (none today).
EXCLUDED: dict[str, str] = {}


def _names() -> list[str]:
    out = []
    for p in sorted(PKG.rglob("*.py")):
        parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append(".".join(parts))
    return out


NAMES = _names()


def _doctests(name: str) -> list[doctest.DocTest]:
    mod = importlib.import_module(name)
    return [t for t in doctest.DocTestFinder(exclude_empty=True).find(mod, name) if t.examples]


WITH_EXAMPLES = [n for n in NAMES if n not in EXCLUDED and _doctests(n)]


def test_the_examples_are_found():
    assert {"labutil.validate", "labutil.hardware", "labutil.data_files", "labutil.tables",
            "labutil.cluster"} <= set(WITH_EXAMPLES)


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples(name):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for test in _doctests(name):
        runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)


def test_no_module_imports_torch():
    """Importing every module of labutil (what doctest collection does) loads no torch."""
    code = ("import importlib, sys\n"
            f"for n in {NAMES!r}:\n"
            "    importlib.import_module(n)\n"
            "print('torch' in sys.modules)")
    env = {**os.environ, "MPLBACKEND": "Agg",
           "PYTHONPATH": os.pathsep.join([str(PKG.parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         cwd=PKG.parent, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"
