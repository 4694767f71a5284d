"""environment.yml (conda route) and pyproject.toml (pip route) install the same set.

Structural check (parsed YAML, parsed requirements, markers evaluated for the yml's Python):
the same packages with the same version ranges; where conda or mamba is installed, the file is
also resolved by it (`--dry-run`), otherwise that part skips with its reason.
"""

import json
import shutil
import subprocess
import tomllib

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from conftest import ROOT

# PyPI name -> conda-forge name where they differ (torch: the yml ships the CPU build).
PYPI_TO_CONDA = {"torch": "pytorch-cpu", "matplotlib": "matplotlib-base"}
# Extras the conda environment carries (everything but a GPU choice, which the README explains).
EXTRAS = ("lab", "book", "test", "gpu")


def _env() -> dict:
    return yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))


def _python_version(env: dict) -> str:
    for dep in env["dependencies"]:
        if isinstance(dep, str) and dep.startswith("python="):
            return dep.split("=", 1)[1]
    raise AssertionError("environment.yml pins no python=X.Y")


def pyproject_requirements(python_version: str) -> dict[str, SpecifierSet]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    reqs = list(data["project"]["dependencies"])
    for extra in EXTRAS:
        reqs += data["project"]["optional-dependencies"][extra]
    out: dict[str, SpecifierSet] = {}
    for text in reqs:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"python_version": python_version}):
            continue
        name = PYPI_TO_CONDA.get(req.name.lower(), req.name.lower())
        assert name not in out, f"{name} listed twice for Python {python_version}"
        out[name] = req.specifier
    return out


def environment_requirements(env: dict) -> dict[str, SpecifierSet]:
    out: dict[str, SpecifierSet] = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):  # the pip: section, PyPI names and pip syntax
            for line in dep["pip"]:
                if line.startswith("-"):
                    continue
                req = Requirement(line)
                out[req.name.lower()] = req.specifier
            continue
        name, _, spec = dep.partition(" ")
        for i, ch in enumerate(dep):
            if ch in "<>=!":
                name, spec = dep[:i], dep[i:]
                break
        if name in ("python", "pip"):
            continue
        out[name.strip().lower()] = SpecifierSet(spec.replace(" ", ""))
    return out


def test_yml_is_a_conda_environment_on_conda_forge():
    env = _env()
    assert env["name"] == "gpu-cluster-course"
    assert env["channels"] == ["conda-forge"]
    pip_sections = [d for d in env["dependencies"] if isinstance(d, dict)]
    assert len(pip_sections) == 1 and "-e ." in pip_sections[0]["pip"], "labutil itself is installed editable"


def test_python_is_the_project_floor():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    floor = data["project"]["requires-python"]
    assert SpecifierSet(floor).contains(_python_version(_env()))
    assert floor == ">=3.11", "tomllib is imported by the catalog loaders (Python 3.11+)"


def test_same_packages_and_ranges():
    env = _env()
    yml = environment_requirements(env)
    pyp = pyproject_requirements(_python_version(env))
    assert sorted(yml) == sorted(pyp), (set(yml) ^ set(pyp))
    for name, spec in pyp.items():
        assert yml[name] == spec, f"{name}: environment.yml {yml[name]} vs pyproject {spec}"


def test_gpu_extra_is_a_range_with_a_cpu_build_for_tests():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (torch,) = data["project"]["optional-dependencies"]["gpu"]
    spec = Requirement(torch).specifier
    assert not any(s.operator == "==" for s in spec), "the gpu extra must not pin one CUDA build"
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    cpu_version = make.split("TORCH_CPU_VERSION ?= ", 1)[1].split()[0]
    assert spec.contains(cpu_version), f"make test's CPU torch {cpu_version} is outside the gpu extra {spec}"
    assert "+cpu" in make and "download.pytorch.org/whl/cpu" in make


def _conda() -> str | None:
    for exe in ("mamba", "micromamba", "conda"):
        if shutil.which(exe):
            return shutil.which(exe)
    return None


@pytest.mark.slow
@pytest.mark.skipif(_conda() is None, reason="no conda/mamba/micromamba on this machine: the structural tests above stand in")
def test_conda_resolves_the_environment(tmp_path):
    exe = _conda()
    proc = subprocess.run([exe, "env", "create", "--dry-run", "--json", "-f", str(ROOT / "environment.yml"),
                           "-p", str(tmp_path / "env")], capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    json.loads(proc.stdout)  # a resolved plan, not an error page


def test_constraints_pin_what_pyproject_allows():
    """constraints.txt (``make lock``) pins one tested version of every package of the lab, book and test
    extras, inside pyproject's ranges for CI's Python (3.11), without torch (chosen per machine) and
    labutil; the Makefile installs every extra with ``-c constraints.txt``."""
    from packaging.version import Version

    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        req = Requirement(line)
        assert len(req.specifier) == 1 and next(iter(req.specifier)).operator == "==", line
        pins[req.name.lower().replace("_", "-")] = Version(next(iter(req.specifier)).version)
    assert "torch" not in pins and "labutil" not in pins
    wanted = pyproject_requirements("3.11")
    for name, spec in wanted.items():
        pypi = {v: k for k, v in PYPI_TO_CONDA.items()}.get(name, name).replace("_", "-")
        if pypi == "torch":
            continue
        assert pypi in pins, f"{pypi} (pyproject) is not pinned in constraints.txt: run `make lock`"
        assert spec.contains(pins[pypi], prereleases=True), f"{pypi}=={pins[pypi]} is outside pyproject's {spec}"
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    installs = [ln for ln in makefile.splitlines() if "pip install" in ln and "$(PY)" in ln and '".[' in ln]
    assert installs and all("$(PIP_C)" in ln for ln in installs), installs
