"""`make lab` really serves the course: JupyterLab on loopback with a token, lab page + chapter 1."""

import json
import secrets
import socket
import subprocess
import time
import urllib.request

import pytest

from labutil.serve import lab_command


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 5.0):
    with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 - loopback only
        return r.status, r.read()


def test_lab_command_is_an_argument_list():
    argv = lab_command(port=9999, token="t", open_browser=False)
    assert isinstance(argv, list) and "--no-browser" in argv and "--ServerApp.port=9999" in argv
    with pytest.raises(ValueError, match="port"):
        lab_command(port=0)


@pytest.mark.server
@pytest.mark.slow
def test_server_serves_lab_and_chapter1(tmp_path):
    port, token = _free_port(), secrets.token_hex(8)
    argv = lab_command(port=port, token=token, open_browser=False)
    proc = subprocess.Popen(argv + [f"--ServerApp.runtime_dir={tmp_path}"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            try:
                status, _ = _get(f"{base}/api/status?token={token}")
                if status == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                out = proc.stdout.read() if proc.poll() is not None else ""
                pytest.fail(f"JupyterLab did not start: {out[-2000:]}")
            time.sleep(0.5)
        status, body = _get(f"{base}/lab?token={token}")
        assert status == 200 and b"JupyterLab" in body
        status, body = _get(f"{base}/api/contents/chapters/ch01_intro.ipynb?token={token}")
        model = json.loads(body)
        assert status == 200 and model["type"] == "notebook"
        assert any("学习目标" in "".join(c["source"]) for c in model["content"]["cells"])
        # Without the token the API refuses.
        with pytest.raises(urllib.error.HTTPError):
            _get(f"{base}/api/contents/chapters/ch01_intro.ipynb")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
