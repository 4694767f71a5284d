"""environment.yml (conda route) and pyproject.toml (pip route) install the same set."""

import re
import tomllib

from conftest import ROOT

# PyPI name -> conda-forge name where they differ.
PYPI_TO_CONDA = {"torch": "pytorch", "matplotlib": "matplotlib-base"}


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[; ]", req.strip(), maxsplit=1)[0].lower()


def _spec(req: str) -> str:
    return req.strip()[len(_name(req)):].replace(" ", "")


def pyproject_requirements() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = list(data["project"]["dependencies"])
    for extra in ("lab", "test", "gpu"):
        reqs += data["project"]["optional-dependencies"][extra]
    return {PYPI_TO_CONDA.get(_name(r), _name(r)): _spec(r) for r in reqs}


def environment_requirements() -> dict[str, str]:
    out = {}
    in_deps = False
    for line in (ROOT / "environment.yml").read_text().splitlines():
        if line.startswith("dependencies:"):
            in_deps = True
            continue
        m = re.match(r"^  - ([A-Za-z0-9_.\-]+)(.*)$", line)
        if in_deps and m and m.group(1) not in ("python", "pip"):
            out[m.group(1).lower()] = m.group(2).strip().replace(" ", "")
    return out


def test_same_packages_and_pins():
    assert environment_requirements() == pyproject_requirements()


def test_environment_installs_labutil_itself():
    text = (ROOT / "environment.yml").read_text()
    assert "- -e ." in text and "conda-forge" in text


def test_the_pinned_torch_is_the_ci_pin():
    assert pyproject_requirements()["pytorch"] == "==2.13.0"
