"""The package installs as pyproject.toml says: no build warnings, data files shipped, and the
model tests pass on the LOWEST versions pyproject allows (a floor that only looks right would
let a learner with an older numpy or matplotlib install a course that breaks)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import venv
import zipfile

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
# Runtime packages whose floors the model tests exercise: the core, and the widgets the
# explorers are built from; then the test tools the model tests need (also at their floors).
FLOOR_PACKAGES = ("numpy", "matplotlib", "ipywidgets", "pytest", "pytest-xdist", "hypothesis")
# Test modules that need something outside that set (Jupyter, nbformat, torch, YAML): they run
# in the full environment, not in the floor one.
NEEDS_MORE = re.compile(r"^\s*(import|from)\s+(nbformat|nbclient|jupytext|torch|yaml|packaging|playwright|jupyterlab)\b"
                        r"|labutil\.(serve|nbtools|bench)|labutil import (serve|nbtools|bench)", re.M)


def _env_clean() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # setuptools would warn that byte-compiling is off
    env.pop("PYTHONPATH", None)
    return env


def floor_pins(python_version: str | None = None) -> list[str]:
    """``name==floor`` for FLOOR_PACKAGES, from pyproject's ranges for this Python."""
    pyver = python_version or f"{sys.version_info.major}.{sys.version_info.minor}"
    reqs = list(PYPROJECT["project"]["dependencies"])
    for extra in ("lab", "test"):
        reqs += PYPROJECT["project"]["optional-dependencies"][extra]
    pins = {}
    for text in reqs:
        req = Requirement(text)
        name = req.name.lower()
        if name not in FLOOR_PACKAGES:
            continue
        if req.marker is not None and not req.marker.evaluate({"python_version": pyver}):
            continue
        lows = [s.version for s in req.specifier if s.operator == ">="]
        assert len(lows) == 1, f"{text}: give one >= floor"
        assert name not in pins, f"{name}: two ranges apply to Python {pyver}"
        pins[name] = f"{name}=={lows[0]}"
    assert sorted(pins) == sorted(FLOOR_PACKAGES), f"missing floors for {set(FLOOR_PACKAGES) - set(pins)}"
    return [pins[n] for n in FLOOR_PACKAGES]


def model_test_files() -> list[str]:
    out = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        if path.name in ("test_install.py", "test_environment.py"):
            continue
        if not NEEDS_MORE.search(path.read_text(encoding="utf-8")):
            out.append(str(path))
    return out


def test_every_supported_python_has_one_numpy_and_matplotlib_floor():
    for pyver in ("3.11", "3.12", "3.13", "3.14"):
        pins = dict(p.split("==") for p in floor_pins(pyver))
        assert pins["numpy"] and pins["matplotlib"]
    # Wheels exist from these releases on (pip download --only-binary=:all: --python-version X.Y):
    assert dict(p.split("==") for p in floor_pins("3.12"))["numpy"] == "1.26"
    assert dict(p.split("==") for p in floor_pins("3.13"))["numpy"] == "2.1"
    assert PYPROJECT["project"]["requires-python"] == ">=3.11"
    assert isinstance(PYPROJECT["project"]["license"], str), "SPDX string (PEP 639), not a table"


def test_lab_extra_has_no_test_tools_and_no_torch():
    lab = {Requirement(r).name.lower() for r in PYPROJECT["project"]["optional-dependencies"]["lab"]}
    core = {Requirement(r).name.lower() for r in PYPROJECT["project"]["dependencies"]}
    assert not (lab | core) & {"pytest", "nbval", "hypothesis", "torch", "playwright"}
    assert "jupyterlab-language-pack-zh-cn" in lab


def test_selection_covers_the_model_tests():
    files = {os.path.basename(f) for f in model_test_files()}
    assert {"test_comm.py", "test_widgets.py", "test_memory.py"} <= files
    assert "test_notebook_policy.py" not in files and "test_server.py" not in files


@pytest.mark.slow
def test_wheel_builds_without_warnings_and_ships_the_data(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(tmp_path), str(ROOT)],
                          capture_output=True, text=True, env=_env_clean(), timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    log = proc.stdout + proc.stderr
    warnings = [ln for ln in log.splitlines() if re.search(r"Warning|deprecated", ln) and "Location" not in ln]
    assert not warnings, "\n".join(warnings[:20])
    (wheel,) = tmp_path.glob("labutil-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "labutil/data/gpus.toml" in names and "labutil/data/cuda_compat.toml" in names
    assert any(n.startswith("labutil/data/jupyter/") and n.endswith(".json") for n in names)
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert "Requires-Python: >=3.11" in meta and "License-Expression: Apache-2.0" in meta


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_model_tests_pass_on_the_lowest_allowed_versions(tmp_path):
    env_dir = tmp_path / "floor"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = str(env_dir / "bin" / "python")
    install = subprocess.run([py, "-m", "pip", "install", "-q", *floor_pins()], capture_output=True, text=True,
                             env=_env_clean(), timeout=1200)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    versions = subprocess.run([py, "-c", "import numpy, matplotlib, ipywidgets; "
                               "print(numpy.__version__, matplotlib.__version__, ipywidgets.__version__)"],
                              capture_output=True, text=True, check=True).stdout.split()
    for pin, got in zip(floor_pins()[:3], versions):
        assert Version(got) == Version(pin.split("==")[1]), f"{pin}: installed {got}"
    # labutil itself, editable, as `make lab` installs it: no build warnings, no upgraded floors
    editable = subprocess.run([py, "-m", "pip", "install", "-v", "-e", str(ROOT)], capture_output=True, text=True,
                              env=_env_clean(), timeout=600)
    assert editable.returncode == 0, editable.stdout[-3000:] + editable.stderr[-3000:]
    warnings = [ln for ln in (editable.stdout + editable.stderr).splitlines()
                if re.search(r"Warning|deprecated", ln) and "Location" not in ln]
    assert not warnings, "\n".join(warnings[:20])
    after = subprocess.run([py, "-c", "import numpy, matplotlib; print(numpy.__version__, matplotlib.__version__)"],
                           capture_output=True, text=True, check=True).stdout.split()
    assert after == versions[:2], "installing labutil must not lift the floors"
    env = _env_clean()
    env["MPLBACKEND"] = "Agg"
    run = subprocess.run([py, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-n", "2",
                          "-m", "not slow and not server and not torch", *model_test_files()],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=1200)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-2000:]
    assert re.search(r"\d+ passed", run.stdout)
