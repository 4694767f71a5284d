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
import os
import secrets
import subprocess
import sys
from pathlib import Path

from .nbtools import ROOT

__all__ = ["START_PAGE", "CONFIG_DIR", "lab_env", "lab_command", "main"]

START_PAGE = "chapters/ch01_intro.ipynb"
CONFIG_DIR = Path(__file__).resolve().parent / "data" / "jupyter"


def lab_env(base: dict | None = None) -> dict:
    """The environment for JupyterLab: the course config directory first on JUPYTER_CONFIG_PATH."""
    env = dict(os.environ if base is None else base)
    rest = env.get("JUPYTER_CONFIG_PATH", "")
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join([str(CONFIG_DIR)] + ([rest] if rest else []))
    return env


def lab_command(*, port: int = 8888, token: str | None = None, ip: str = "127.0.0.1",
                root_dir: Path = ROOT, open_browser: bool = True) -> list[str]:
    """The argument list that starts JupyterLab on the course folder."""
    if not 0 < int(port) < 65536:
        raise ValueError(f"port must be in [1, 65535]; got {port!r}")
    argv = [sys.executable, "-m", "jupyterlab", f"--ServerApp.ip={ip}", f"--ServerApp.port={int(port)}",
            "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root_dir}",
            f"--LabApp.default_url=/lab/tree/{START_PAGE}"]
    if token is not None:
        argv.append(f"--IdentityProvider.token={token}")
    if not open_browser:
        argv.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")
    return argv


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Open the course in JupyterLab")
    p.add_argument("--port", type=int, default=8888)
    p.add_argument("--ip", default="127.0.0.1")
    p.add_argument("--token", default=None, help="access token (default: a random one, printed by Jupyter)")
    p.add_argument("--no-browser", action="store_true")
    args = p.parse_args(argv)
    token = args.token if args.token is not None else secrets.token_hex(16)
    cmd = lab_command(port=args.port, token=token, ip=args.ip, open_browser=not args.no_browser)
    print(f"Course: http://{args.ip}:{args.port}/lab/tree/{START_PAGE}?token={token}", flush=True)
    return subprocess.call(cmd, env=lab_env())


if __name__ == "__main__":
    raise SystemExit(main())
