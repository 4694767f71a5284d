"""classroom/: the container recipes agree with pyproject.toml, the JupyterHub configurations
serve 30-100 learners with the course image and sizes that fit what a learner really uses, and
the Slurm route renders a valid job script."""

import os
import re
import stat
import subprocess
import sys
import tomllib

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from conftest import ROOT

CLASSROOM = ROOT / "classroom"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
GPU_RANGE = Requirement(PYPROJECT["project"]["optional-dependencies"]["gpu"][0])
LEARNERS_MAX = 100


def _dockerfile() -> str:
    return (CLASSROOM / "Dockerfile").read_text(encoding="utf-8")


def _def() -> str:
    return (CLASSROOM / "course.def").read_text(encoding="utf-8")


def _values() -> dict:
    return yaml.safe_load((CLASSROOM / "z2jh-values.yaml").read_text(encoding="utf-8"))


def _hub_config():
    from traitlets.config import Config

    cfg = Config()
    code = (CLASSROOM / "jupyterhub_config.py").read_text(encoding="utf-8")
    env = {"COURSE_SIF": "/shared/images/course.sif", "COURSE_PARTITION": "interactive"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        exec(compile(code, "jupyterhub_config.py", "exec"), {"get_config": lambda: cfg, "__name__": "config"})
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    return cfg


def _bytes(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)\s*([KMGT]i?)?", str(text).strip())
    assert m, text
    mult = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    return float(m.group(1)) * mult.get(m.group(2) or "", 1)


# -- recipes vs pyproject -----------------------------------------------------------------------------
@pytest.mark.parametrize("text_fn, from_re", [(_dockerfile, r"^FROM python:(\d+\.\d+)"),
                                                (_def, r"^From: python:(\d+\.\d+)")])
def test_recipe_matches_pyproject(text_fn, from_re):
    text = text_fn()
    (pyver,) = re.findall(from_re, text, re.M)
    assert SpecifierSet(PYPROJECT["project"]["requires-python"]).contains(pyver)
    env_yml = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    assert f"python={pyver}" in env_yml["dependencies"], "image and conda environment use one Python"
    torch_specs = re.findall(r'"(torch[^"]*)"', text)
    assert torch_specs and all(Requirement(s).specifier == GPU_RANGE.specifier for s in torch_specs), torch_specs
    assert "whl/cpu" in text, "the default image build takes the CPU torch (no CUDA download)"
    assert "[lab]" in text, "the learner's extra is installed"
    assert '"jupyterhub>=5.2,<6"' in text, "the single-user server matches the hub's JupyterHub major"
    for extra in ("test", "book"):
        assert f"[{extra}" not in text and f",{extra}" not in text, "no test/book tools in the learner image"


def test_recipes_copy_what_exists_and_the_course_jupyter_config():
    docker = _dockerfile()
    for src in re.findall(r"^COPY\s+(.+?)\s+\S+$", docker, re.M):
        for part in src.split():
            assert (ROOT / part).exists(), f"Dockerfile copies {part}, which is not in the repository"
    assert "COPY labutil/data/jupyter/ /etc/jupyter/" in docker
    files = _def().split("%files", 1)[1].split("%", 1)[0]
    pairs = [ln.split() for ln in files.strip().splitlines() if ln.strip()]
    for src, dst in pairs:
        assert (ROOT / src).exists(), src
    assert ["labutil/data/jupyter/jupyter_server_config.json", "/etc/jupyter/jupyter_server_config.json"] in pairs
    assert ["labutil/data/jupyter/labconfig", "/etc/jupyter/labconfig"] in pairs
    assert 'CMD ["jupyterhub-singleuser"' in docker
    label = re.search(r"org.opencontainers.image.version (\S+)", _def()).group(1)
    assert label == PYPROJECT["project"]["version"]


# -- Zero to JupyterHub -------------------------------------------------------------------------------
def test_z2jh_values_serve_a_class_with_the_course_image():
    v = _values()
    assert set(v) <= {"hub", "proxy", "singleuser", "scheduling", "prePuller", "cull", "ingress", "debug"}
    su = v["singleuser"]
    assert su["image"]["name"] == "gpu-cluster-course" and su["image"]["tag"] == PYPROJECT["project"]["version"]
    assert su["cmd"] == "jupyterhub-singleuser"
    assert v["hub"]["activeServerLimit"] >= LEARNERS_MAX
    assert 1 <= v["hub"]["concurrentSpawnLimit"] <= v["hub"]["activeServerLimit"]
    assert v["cull"]["enabled"] and 600 <= v["cull"]["timeout"] <= 4 * 3600
    assert su["memory"]["guarantee"] and _bytes(su["memory"]["limit"]) >= _bytes(su["memory"]["guarantee"])
    assert su["cpu"]["limit"] >= su["cpu"]["guarantee"] > 0
    hook = " ".join(su["lifecycleHooks"]["postStart"]["exec"]["command"])
    assert "cp -rn" in hook and "chapters" in hook and "labs" in hook, "copy the course without overwriting"
    assert su["defaultUrl"].endswith("chapters/ch01_intro.ipynb")
    gpu = [p for p in su["profileList"] if "kubespawner_override" in p]
    assert gpu and gpu[0]["kubespawner_override"]["extra_resource_limits"]["nvidia.com/gpu"] in ("2", "4")
    assert gpu[0]["kubespawner_override"]["image"].startswith(f"gpu-cluster-course:{su['image']['tag']}-cu")
    # the hub's own database and proxy: requests below limits
    for part in (v["hub"]["resources"], v["proxy"]["chp"]["resources"]):
        assert _bytes(part["requests"]["memory"]) <= _bytes(part["limits"]["memory"])


# -- Slurm / batchspawner -------------------------------------------------------------------------------
def test_slurm_hub_config_matches_the_k8s_sizes_and_renders_a_valid_job_script(tmp_path):
    cfg = _hub_config()
    v = _values()
    assert cfg.JupyterHub.spawner_class == "batchspawner.SlurmSpawner"
    assert cfg.JupyterHub.active_server_limit >= LEARNERS_MAX
    assert cfg.Spawner.cpu_limit == v["singleuser"]["cpu"]["limit"]
    assert _bytes(cfg.Spawner.mem_limit) == _bytes(v["singleuser"]["memory"]["limit"])
    assert cfg.Spawner.default_url == v["singleuser"]["defaultUrl"]
    jinja2 = pytest.importorskip("jinja2")
    script = jinja2.Template(cfg.SlurmSpawner.batch_script).render(
        homedir="/home/alice", username="alice", keepvars="ALL", partition=cfg.SlurmSpawner.req_partition,
        runtime=cfg.SlurmSpawner.req_runtime, memory=cfg.SlurmSpawner.req_memory, nprocs=cfg.SlurmSpawner.req_nprocs,
        options="", prologue="", epilogue="", srun="srun", cmd="jupyterhub-singleuser")
    assert "#SBATCH --partition=interactive" in script and "#SBATCH --mem=3G" in script
    assert "apptainer exec" in script and "/shared/images/course.sif jupyterhub-singleuser" in script
    assert "{{" not in script and "{%" not in script
    path = tmp_path / "job.sh"
    path.write_text(script)
    subprocess.run(["bash", "-n", str(path)], check=True)


def test_apptainer_python_wrapper_runs_python_in_the_image(tmp_path):
    wrapper = CLASSROOM / "apptainer-python"
    assert wrapper.stat().st_mode & stat.S_IXUSR
    subprocess.run(["sh", "-n", str(wrapper)], check=True)
    env = dict(os.environ)
    env.pop("COURSE_SIF", None)
    no_sif = subprocess.run([str(wrapper), "-c", "pass"], capture_output=True, text=True, env=env)
    assert no_sif.returncode != 0 and "COURSE_SIF" in no_sif.stderr
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "apptainer").write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    (fake / "apptainer").chmod(0o755)
    env.update(COURSE_SIF="/shared/course.sif", PATH=f"{fake}:{env['PATH']}")
    out = subprocess.run([str(wrapper), "-m", "labutil.bench.collectives", "--op", "all_reduce"],
                         capture_output=True, text=True, env=env, check=True, cwd=tmp_path).stdout.split("\n")
    assert out[:2] == ["exec", "--nv"] and "/shared/course.sif" in out
    assert out[out.index("/shared/course.sif") + 1:out.index("/shared/course.sif") + 5] == [
        "python", "-m", "labutil.bench.collectives", "--op"]
    # the Slurm templates take their interpreter from $PYTHON, so the wrapper drops in unchanged
    # (a learner's $PYTHON wins; only when it is unset do they pick the repo's .venv or `python`)
    for sbatch in (ROOT / "labs" / "slurm").glob("*.sbatch"):
        text = sbatch.read_text(encoding="utf-8")
        assert 'if [ -z "${PYTHON:-}" ]; then' in text and '"$PYTHON" -m torch.distributed.run' in text, sbatch


@pytest.mark.slow
def test_a_learner_fits_the_memory_guarantee(tmp_path):
    """Peak memory of a course kernel running the heaviest chapter stays well inside the
    per-learner guarantee (the JupyterLab server itself takes the rest; README has both)."""
    psutil = pytest.importorskip("psutil")
    import threading

    from nbclient import NotebookClient

    from labutil.nbtools import read_source

    src = ROOT / "chapters" / "ch30_capstone.py"
    nb = read_source(src)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(src.parent)}})
    peak, done = [0], threading.Event()

    def poll():
        while not done.is_set():
            try:
                proc = psutil.Process(client.km.provisioner.process.pid)
                rss = proc.memory_info().rss + sum(ch.memory_info().rss for ch in proc.children(recursive=True))
                peak[0] = max(peak[0], rss)
            except Exception:  # noqa: BLE001 - kernel not started yet / already gone
                pass
            done.wait(0.1)

    t = threading.Thread(target=poll, daemon=True)
    t.start()
    client.execute()
    done.set()
    t.join()
    guarantee = _bytes(_values()["singleuser"]["memory"]["guarantee"])
    assert 50e6 < peak[0] < guarantee / 2, f"kernel peak {peak[0] / 1e6:.0f} MB vs guarantee {guarantee / 1e6:.0f} MB"
