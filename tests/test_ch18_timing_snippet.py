"""ch18 §6.1: the `next(data_iter)` timing snippet the chapter prints is the code the chapter runs.

The notebook keeps no `def` (CONTRIBUTING: thin cells); it shows `labutil.dataloading.timed_loop` as a
fenced block a learner pastes into a training loop and calls the library function. This test keeps
the two identical, line by line.
"""
import inspect
import re
from pathlib import Path

import pytest

from labutil import dataloading

CHAPTER = Path(__file__).resolve().parents[1] / "chapters" / "ch18_data_pipeline.py"


def _fenced_snippet() -> list[str]:
    text = CHAPTER.read_text(encoding="utf-8")
    m = re.search(r"# ```python\n(.*?)# ```\n", text, re.S)
    assert m, "ch18 lost its fenced timed_loop snippet"
    lines = [ln[2:] if ln.startswith("# ") else ln[1:] for ln in m.group(1).splitlines()]
    return [ln for ln in lines if ln.strip()]


def test_every_line_of_the_printed_snippet_is_in_the_library_function():
    src = inspect.getsource(dataloading.timed_loop)
    body = [ln for ln in _fenced_snippet() if not ln.startswith("import ")]
    assert body[0].startswith("def timed_loop(")
    missing = [ln for ln in body if ln not in src]
    assert not missing, f"snippet lines not in dataloading.timed_loop: {missing}"


def test_timed_loop_runs_a_simulated_loader_and_returns_a_share():
    frac = dataloading.timed_loop(dataloading.simulated_loader(1.0, prefetch=2, n=12), lambda batch: None, steps=10,
                                  report_every=5)
    assert 0.0 <= frac < 1.0


@pytest.mark.parametrize("kw", [dict(batch_ms=0.0), dict(batch_ms=1.0, prefetch=0), dict(batch_ms=1.0, n=1)])
def test_simulated_loader_rejects_impossible_settings(kw):
    with pytest.raises(ValueError):
        dataloading.simulated_loader(**kw)


def test_timed_loop_rejects_zero_steps():
    with pytest.raises(ValueError, match="steps"):
        dataloading.timed_loop(iter([]), lambda b: None, steps=0)
