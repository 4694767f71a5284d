"""Issue 9: in a real Jupyter kernel an exercise cell shows ONE message and never the reference value.

Runs every registered exercise through nbclient twice: once with a wrong answer (1.5x the reference,
or another option of a choice) and once unanswered (None), and inspects what the notebook stores.
"""

import nbformat
import pytest
from nbclient import NotebookClient

from labutil.exercises import load_all
from tests.test_exercises import leaks, wrong_answer

ALL = load_all()
pytestmark = pytest.mark.slow


def _texts(output) -> list[str]:
    """Every text the front-end may show for one output (all mime types, stream text, error lines)."""
    if output.get("output_type") == "stream":
        return [output.get("text", "")]
    if output.get("output_type") == "error":
        return [output.get("ename", ""), output.get("evalue", ""), *output.get("traceback", [])]
    return [v if isinstance(v, str) else "".join(v) for v in output.get("data", {}).values()]


@pytest.fixture(scope="module")
def executed():
    keys = sorted(ALL)
    cells = [nbformat.v4.new_code_cell("from labutil.exercises import exercise")]
    for key in keys:
        ex = ALL[key]
        wrong = wrong_answer(ex, ex.expected())
        cells.append(nbformat.v4.new_code_cell(f"answer = {wrong!r}\nexercise({key!r}).check(answer)"))
        cells.append(nbformat.v4.new_code_cell(f"answer = None\nexercise({key!r}).check(answer)"))
    nb = nbformat.v4.new_notebook(cells=cells)
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    return {key: (nb.cells[1 + 2 * i], nb.cells[2 + 2 * i]) for i, key in enumerate(keys)}


@pytest.mark.parametrize("key", sorted(ALL))
def test_wrong_answer_does_not_leak_the_reference(executed, key):
    ex = ALL[key]
    cell, _ = executed[key]
    assert len(cell.outputs) == 1, cell.outputs  # one message, no extra printed line
    out = cell.outputs[0]
    assert out["output_type"] == "execute_result"
    shown = "\n".join(_texts(out))
    assert "✗" in shown and "expected" not in shown and "CheckResult(" not in shown
    assert not leaks(shown, ex, ex.expected(), wrong_answer(ex, ex.expected())), shown


@pytest.mark.parametrize("key", sorted(ALL))
def test_unanswered_cell_shows_exactly_one_message(executed, key):
    _, cell = executed[key]
    assert len(cell.outputs) == 1, cell.outputs
    out = cell.outputs[0]
    assert out["output_type"] == "execute_result"
    assert out["data"]["text/plain"].count("尚未作答") == 1
    assert "尚未作答" in out["data"]["text/html"]


def test_bad_key_in_a_kernel_is_one_line():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("from labutil.exercises import exercise\nexercise(None)"),
        nbformat.v4.new_code_cell("exercise('ch01.1').hint(float('nan'))"),
        nbformat.v4.new_code_cell("exercise('ch01.1').check(10**400)"),
    ])
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    err = nb.cells[0].outputs[0]
    assert err["output_type"] == "error" and len(err["traceback"]) == 1
    for cell in nb.cells[1:]:
        assert len(cell.outputs) == 1 and cell.outputs[0]["output_type"] == "execute_result"
        assert "Traceback" not in "\n".join(_texts(cell.outputs[0]))
