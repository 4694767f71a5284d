"""Finding the real tools the artefact tests run (promtool, the Kubernetes schema validator).

A test that needs a tool calls :func:`require` with the tool's name and the environment variable CI
sets once ``.ci/run`` has installed it. Where the tool is missing the test skips with the reason and
the install command; where the variable is ``1`` (CI installed the tool) a missing tool FAILS the test,
so a broken install cannot turn the real-tool checks into silent skips.
"""

import os
import shutil
import subprocess

import pytest

__all__ = ["require", "run"]


def require(tool: str, env: str, install: str) -> str:
    """Path of executable ``tool``; skip (or fail when ``$env == 1``) if it is not on PATH."""
    path = shutil.which(tool)
    if path:
        return path
    reason = f"{tool} is not installed ({install}; .ci/run installs it)"
    if os.environ.get(env) == "1":
        pytest.fail(f"{env}=1 but {reason}")
    pytest.skip(reason)


def run(argv: list, *, stdin: str | None = None, cwd=None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run a tool with an argument list (never a shell string); text in, text out."""
    return subprocess.run([str(a) for a in argv], input=stdin, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, check=False)
