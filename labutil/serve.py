"""Start the course in JupyterLab: ``python -m labutil.serve`` (what ``make lab`` runs).

Jupyter Server refuses to start as root without ``--allow-root`` (lab machines and CI often run
as root), so the flag is added only when running as root. Opens chapters/ch01_intro.ipynb.
"""

from __future__ import annotations

import argparse
import os
import secrets
import subprocess
import sys
from pathlib import Path

from .nbtools import ROOT

START_PAGE = "chapters/ch01_intro.ipynb"


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
    return subprocess.call(cmd)


if __name__ == "__main__":
    raise SystemExit(main())
