"""What a learner meets in `make lab`: each chapter listed once, the interface in Simplified
Chinese by default with English available. Runs the real JupyterLab on loopback with the
environment `labutil.serve` gives it."""

import json
import secrets
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from conftest import ROOT
from labutil.serve import CONFIG_DIR, lab_command, lab_env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_lab_env_puts_the_course_config_first():
    env = lab_env({"JUPYTER_CONFIG_PATH": "/somewhere/else"})
    assert env["JUPYTER_CONFIG_PATH"].split(":") == [str(CONFIG_DIR), "/somewhere/else"]
    assert lab_env({})["JUPYTER_CONFIG_PATH"] == str(CONFIG_DIR)
    server = json.loads((CONFIG_DIR / "jupyter_server_config.json").read_text())
    globs = server["ContentsManager"]["hide_globs"]
    assert {"ch[0-9][0-9]_*.py", "lab[0-9][0-9]_*.py", "__pycache__", "*.pyc"} <= set(globs)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    port, token = _free_port(), secrets.token_hex(8)
    runtime = tmp_path_factory.mktemp("rt")
    env = lab_env()
    env["JUPYTERLAB_SETTINGS_DIR"] = str(tmp_path_factory.mktemp("user-settings"))  # no personal choice
    proc = subprocess.Popen(lab_command(port=port, token=token, open_browser=False)
                            + [f"--ServerApp.runtime_dir={runtime}"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    base = f"http://127.0.0.1:{port}"

    def get(path):
        sep = "&" if "?" in path else "?"
        with urllib.request.urlopen(f"{base}{path}{sep}token={token}", timeout=10) as r:  # noqa: S310 - loopback
            return json.loads(r.read())

    while True:  # until it answers, or fail when it ended (no wall-clock limit; pytest-timeout bounds a hang)
        try:
            get("/api/status")
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab did not start: {proc.stdout.read()[-2000:]}")
            time.sleep(0.5)
    yield get
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.mark.server
@pytest.mark.slow
def test_file_browser_lists_each_chapter_once(lab):
    for folder, prefix, n in (("chapters", "ch", 30), ("labs", "lab", 6)):
        names = [item["name"] for item in lab(f"/api/contents/{folder}")["content"]]
        notebooks = sorted(n_ for n_ in names if n_.endswith(".ipynb"))
        stems = [n_.rsplit(".", 1)[0] for n_ in names if n_.startswith(prefix) and n_[len(prefix):len(prefix) + 2].isdigit()]
        assert len(notebooks) == n == len(set(stems)) == len(stems), sorted(names)
        assert not [n_ for n_ in names if n_.endswith(".py") and n_.startswith(prefix)], names
        expected = sorted(p.name for p in (ROOT / folder).glob(f"{prefix}[0-9][0-9]_*.ipynb"))
        assert notebooks == expected
    # The source is hidden from the listing, not from an author who opens it by path.
    src = lab("/api/contents/chapters/ch01_intro.py?content=0")
    assert src["type"] in ("notebook", "file") and src["name"] == "ch01_intro.py"  # jupytext opens it as a notebook
    # Library code elsewhere is listed as usual (the globs only match chapter/lab sources).
    names = [item["name"] for item in lab("/api/contents/labutil/exercises")["content"]]
    assert "ch01.py" in names


@pytest.mark.server
@pytest.mark.slow
def test_interface_defaults_to_simplified_chinese_with_english_available(lab):
    plugin = lab("/lab/api/settings/@jupyterlab/translation-extension:plugin")
    assert plugin["schema"]["properties"]["locale"]["default"] == "zh_CN"
    languages = lab("/lab/api/translations/")["data"]
    assert "zh_CN" in languages and "en" in languages, sorted(languages)
    zh = lab("/lab/api/translations/zh_CN")["data"]
    # The pack really translates JupyterLab's own strings (the File menu).
    strings = json.dumps(zh, ensure_ascii=False)
    assert "文件" in strings and len(zh) > 10
