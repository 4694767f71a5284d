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
        _wait_http(f"{base}/api/status?token={token}", proc)
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


@pytest.mark.parametrize("argv,why", [
    (["--port", "0"], "argument --port: must be an integer in [1, 65535]; got '0'"),
    (["--port", "70000"], "argument --port: must be an integer in [1, 65535]; got '70000'"),
    (["--port", "inf"], "argument --port: must be an integer in [1, 65535]; got 'inf'"),
    (["--token", ""], "--token '' would turn authentication off; pass --no-auth"),
    (["--no-auth", "--ip", "0.0.0.0"], "--no-auth is refused with --ip 0.0.0.0"),
    (["--no-auth", "--ip", "gpu-login01"], "--no-auth is refused with --ip gpu-login01"),
    (["--no-auth", "--token", "abc"], "--no-auth and --token contradict each other"),
    (["--ip", ""], "--ip must be an address like 127.0.0.1"),
])
def test_serve_refuses_with_one_line(capsys, argv, why):
    from labutil import serve

    with pytest.raises(SystemExit) as e:
        serve.main(argv + ["--no-browser"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1, err
    assert err.startswith("python -m labutil.serve: error: ") and why in err, err


def test_loopback_addresses():
    from labutil.serve import is_loopback

    assert all(is_loopback(ip) for ip in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(ip) for ip in ("0.0.0.0", "::", "10.0.0.5", "gpu-login01", ""))
    with pytest.raises(ValueError, match="port"):
        lab_command(port=float("inf"))                                        # not an OverflowError


def _wait_http(url: str, proc) -> None:
    """Until ``url`` answers 200, or fail when the server process ended. No wall-clock limit: a slow
    start on a loaded machine is not a failure (pytest-timeout bounds a real hang)."""
    while True:
        try:
            if _get(url)[0] == 200:
                return
        except OSError:
            pass
        if proc.poll() is not None:
            pytest.fail(f"JupyterLab did not start: {proc.communicate()[0][-2000:]}")
        time.sleep(0.5)


def _port_is_free(port: int) -> bool:
    """Whether a new server could listen on ``port`` now (SO_REUSEADDR, as Jupyter's own listener sets:
    connections of the old server lingering in TIME_WAIT do not count, a listening socket does)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_stopping_serve_stops_jupyterlab_and_frees_the_port(tmp_path, sig):
    """`python -m labutil.serve` IS the JupyterLab process (exec): a SIGTERM from a process manager or
    `timeout`, or Ctrl-C, ends the server itself; nothing is left listening on the port."""
    import os
    import signal
    import sys

    from labutil.machine import launch

    port, token = _free_port(), secrets.token_hex(8)
    env = dict(launch.cpu_env(), JUPYTER_RUNTIME_DIR=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "labutil.serve", "--port", str(port), "--token", token,
                             "--no-browser"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            cwd=launch.REPO_ROOT, start_new_session=True)
    try:
        _wait_http(f"http://127.0.0.1:{port}/api/status?token={token}", proc)
        assert not _port_is_free(port)
        os.kill(proc.pid, getattr(signal, sig))          # the serve process only, not its group
        out, _ = proc.communicate(timeout=60)            # without a terminal Jupyter needs no confirmation
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert out.splitlines()[0] == f"Course: http://127.0.0.1:{port}/lab/tree/chapters/ch01_intro.ipynb?token={token}"
    assert _port_is_free(port), f"port {port} still taken after serve ended:\n{out[-1500:]}"
    # and no JupyterLab of ours is left: the process group holds nothing anymore
    try:
        os.killpg(proc.pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive, "a child of labutil.serve outlived it"
