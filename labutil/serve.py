"""Start the course in JupyterLab: ``python -m labutil.serve`` (what ``make lab`` runs).

Jupyter Server refuses to start as root without ``--allow-root`` (lab machines and CI often run
as root), so the flag is added only when running as root. Opens chapters/ch01_intro.ipynb.

The course's Jupyter configuration lives in ``labutil/data/jupyter/`` (a Jupyter config
directory, put first on ``JUPYTER_CONFIG_PATH`` by :func:`lab_env`; the classroom image copies it
to ``/etc/jupyter``):

- ``jupyter_server_config.json``: ``ContentsManager.hide_globs`` keeps the py:percent sources
  (``chNN_*.py``, ``labNN_*.py``) out of the file browser, so each chapter is listed once, as
  its notebook. The sources stay on disk and open by path (authors edit them; see CONTRIBUTING).
- ``labconfig/default_setting_overrides.json``: the interface language defaults to Simplified
  Chinese (``jupyterlab-language-pack-zh-CN``); English is one click away (设置 → 语言 →
  English), and a learner's own choice is stored in their user settings and wins.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import secrets
import subprocess
import sys
from pathlib import Path

from . import validate
from .nbtools import ROOT

__all__ = ["START_PAGE", "CONFIG_DIR", "lab_env", "lab_command", "is_loopback", "main"]

START_PAGE = "chapters/ch01_intro.ipynb"
CONFIG_DIR = Path(__file__).resolve().parent / "data" / "jupyter"


def lab_env(base: dict | None = None) -> dict:
    """The environment for JupyterLab: the course config directory first on JUPYTER_CONFIG_PATH."""
    env = dict(os.environ if base is None else base)
    rest = env.get("JUPYTER_CONFIG_PATH", "")
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join([str(CONFIG_DIR)] + ([rest] if rest else []))
    return env


def is_loopback(ip: str) -> bool:
    """True for an address only this machine can reach: 127.0.0.0/8, ::1 or the name 'localhost'."""
    if not isinstance(ip, str):
        raise ValueError(f"ip must be a string; got {ip!r}")
    if ip.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(ip.strip().strip("[]")).is_loopback
    except ValueError:
        return False  # a host name or an interface address: reachable from elsewhere


def lab_command(*, port: int = 8888, token: str | None = None, ip: str = "127.0.0.1",
                root_dir: Path = ROOT, open_browser: bool = True) -> list[str]:
    """The argument list that starts JupyterLab on the course folder.

    ``token=None`` leaves Jupyter's own default (a random token it prints); ``token=''`` turns
    authentication off and is only built here — :func:`main` refuses it unless asked with ``--no-auth``."""
    port = validate.integer("port", port, lo=1, hi=65535)
    if not isinstance(ip, str) or not ip.strip() or any(c.isspace() for c in ip):
        raise ValueError(f"ip must be an address like '127.0.0.1' (or '0.0.0.0' for every interface); got {ip!r}")
    if token is not None and (not isinstance(token, str) or any(c.isspace() for c in token)):
        raise ValueError(f"token must be a string without spaces; got {token!r}")
    argv = [sys.executable, "-m", "jupyterlab", f"--ServerApp.ip={ip}", f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root_dir}",
            f"--LabApp.default_url=/lab/tree/{START_PAGE}"]
    if token is not None:
        argv.append(f"--IdentityProvider.token={token}")
    if not open_browser:
        argv.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")
    return argv


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer in [1, 65535]; got {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be an integer in [1, 65535]; got {text!r}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are ONE line (``prog: error: ...``, exit status 2), without the usage block."""

    def error(self, message):  # noqa: D401 - argparse hook
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def main(argv=None) -> int:
    """Check the options, print the URL, then BECOME JupyterLab (``os.execve`` on POSIX).

    Exec, not a child process: a SIGTERM or SIGINT sent to ``python -m labutil.serve`` (a process
    manager, ``timeout``, Ctrl-C) reaches JupyterLab itself, which shuts down and frees the port;
    a parent waiting on a child would die and leave the server orphaned on its port. Where exec is
    not available (Windows) the child is terminated when the parent is interrupted.
    """
    p = _Parser(prog="python -m labutil.serve", description="Open the course in JupyterLab")
    p.add_argument("--port", type=_port, default=8888, help="TCP port, 1-65535 (default 8888)")
    p.add_argument("--ip", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 = every interface)")
    p.add_argument("--token", default=None, help="access token (default: a random one, printed below)")
    p.add_argument("--no-auth", action="store_true",
                   help="run WITHOUT a token: anyone who can reach the port can run code as you (loopback only)")
    p.add_argument("--no-browser", action="store_true")
    args = p.parse_args(argv)
    if not args.ip.strip() or any(c.isspace() for c in args.ip):
        p.error(f"--ip must be an address like 127.0.0.1 (or 0.0.0.0 for every interface); got {args.ip!r}")
    if args.no_auth and args.token:
        p.error("--no-auth and --token contradict each other: give one of them")
    if args.token == "" and not args.no_auth:
        p.error("--token '' would turn authentication off; pass --no-auth to ask for that explicitly "
                "(or omit --token for a random one)")
    if args.token is not None and any(c.isspace() for c in args.token):
        p.error("--token must not contain spaces")
    if args.no_auth and not is_loopback(args.ip):
        p.error(f"--no-auth is refused with --ip {args.ip}: a server without a token must listen on loopback "
                "(127.0.0.1) only; use a token to serve other machines")
    token = "" if args.no_auth else (args.token if args.token is not None else secrets.token_hex(16))
    cmd = lab_command(port=args.port, token=token, ip=args.ip, open_browser=not args.no_browser)
    host = f"[{args.ip}]" if ":" in args.ip else args.ip
    url = f"http://{host}:{args.port}/lab/tree/{START_PAGE}" + (f"?token={token}" if token else "")
    if args.no_auth:
        print("WARNING: --no-auth: JupyterLab runs without a token; every local user can reach it.",
              file=sys.stderr, flush=True)
    print(f"Course: {url}", flush=True)
    env = lab_env()
    if os.name == "posix":
        try:
            os.execve(cmd[0], cmd, env)
        except OSError as exc:
            print(f"python -m labutil.serve: error: cannot start JupyterLab: {exc.strerror or exc}", file=sys.stderr)
            return 2
    proc = subprocess.Popen(cmd, env=env)  # pragma: no cover - non-POSIX
    try:  # pragma: no cover
        return proc.wait()
    except KeyboardInterrupt:  # pragma: no cover
        proc.terminate()
        return proc.wait()


if __name__ == "__main__":
    raise SystemExit(main())
