"""nbval really guards the course: it fails on a broken chapter and passes on the real one."""

import json
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

CH01 = ROOT / "chapters" / "ch01_intro.ipynb"


def _nbval(path, tmp_path):
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax", "--nbval-current-env",
           "-p", "no:python", "--rootdir", str(tmp_path), str(path)]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)


def _copy(tmp_path):
    dst = tmp_path / "ch01_intro.ipynb"
    shutil.copy(CH01, dst)
    return dst


@pytest.mark.slow
def test_nbval_passes_on_real_chapter(tmp_path):
    r = _nbval(_copy(tmp_path), tmp_path)
    assert r.returncode == 0, r.stdout[-3000:]


@pytest.mark.slow
def test_nbval_fails_when_a_key_number_changes(tmp_path):
    dst = _copy(tmp_path)
    nb = json.loads(dst.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and "NBVAL_CHECK_OUTPUT" in "".join(cell["source"]) and cell["outputs"]:
            out = cell["outputs"][0]
            text = "".join(out["text"]) if "text" in out else "".join(out["data"]["text/plain"])
            changed = text.replace("2.4", "9.9", 1) if "2.4" in text else "tampered " + text
            if "text" in out:
                out["text"] = changed
            else:
                out["data"]["text/plain"] = changed
            break
    else:
        pytest.fail("ch01 has no checked cell with output")
    dst.write_text(json.dumps(nb))
    r = _nbval(dst, tmp_path)
    assert r.returncode == 1, r.stdout[-3000:]


@pytest.mark.slow
def test_nbval_fails_when_a_cell_raises(tmp_path):
    dst = _copy(tmp_path)
    nb = json.loads(dst.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    code[1]["source"] = "raise RuntimeError('broken chapter')\n"
    dst.write_text(json.dumps(nb))
    r = _nbval(dst, tmp_path)
    assert r.returncode == 1 and "broken chapter" in r.stdout
