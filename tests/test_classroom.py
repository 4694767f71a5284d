"""classroom/: the container recipes agree with pyproject.toml, the JupyterHub configurations
serve 30-100 learners with the course image and sizes that fit what a learner really uses, the
Zero-to-JupyterHub values pass the chart's own schema, and the Slurm route's job script is the one
batchspawner really renders and runs (its own template code, its own `cmd`). The hubs themselves
are started for real in tests/test_hub_live.py."""

import copy
import json
import os
import re
import stat
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from conftest import ROOT

CLASSROOM = ROOT / "classroom"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
GPU_RANGE = Requirement(PYPROJECT["project"]["optional-dependencies"]["gpu"][0])
CLASSROOM_EXTRA = {Requirement(r).name: Requirement(r) for r in PYPROJECT["project"]["optional-dependencies"]["classroom"]}
Z2JH = ROOT / "tests" / "fixtures" / "z2jh"   # chart 4.4.0's values.yaml + values.schema.json (SOURCE.md)
LEARNERS_MAX = 100


def _dockerfile() -> str:
    return (CLASSROOM / "Dockerfile").read_text(encoding="utf-8")


def _def() -> str:
    return (CLASSROOM / "course.def").read_text(encoding="utf-8")


def _values() -> dict:
    return yaml.safe_load((CLASSROOM / "z2jh-values.yaml").read_text(encoding="utf-8"))


def _hub_config(**env):
    """classroom/jupyterhub_config.py loaded as JupyterHub loads it (a traitlets Config)."""
    from traitlets.config import Config

    pytest.importorskip("batchspawner", reason="the Slurm hub config imports batchspawner (test extra)")
    cfg = Config()
    path = CLASSROOM / "jupyterhub_config.py"
    env = {"COURSE_SIF": "/shared/images/course.sif", "COURSE_PARTITION": "interactive", "COURSE_VENV": None,
           **env}
    old = {k: os.environ.get(k) for k in env}
    for k, v in env.items():
        os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    try:
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"),
             {"get_config": lambda: cfg, "__name__": "config", "__file__": str(path)})
    finally:
        for k, v in old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    return cfg


def _render_job(cfg, user="alice", home="/home/alice"):
    """The job script exactly as batchspawner's SlurmSpawner.submit_batch_script builds it: its
    get_req_subvars(), its cmd_formatted_for_batch() (batchspawner-singleuser + Spawner.cmd +
    args) and its format_template(). keepvars is fixed here (the live test uses the real one)."""
    from batchspawner import SlurmSpawner
    from batchspawner.batchspawner import format_template

    fake_user = types.SimpleNamespace(name=user, escaped_name=user, url=f"/user/{user}/", id=1, server=None)
    spawner = SlurmSpawner(config=cfg, user=fake_user, req_homedir=home, req_username=user,
                           req_keepvars="JUPYTERHUB_API_TOKEN,JUPYTERHUB_API_URL,PATH")
    subvars = spawner.get_req_subvars()
    subvars["cmd"] = spawner.cmd_formatted_for_batch()
    return format_template(spawner.batch_script, **subvars), subvars["cmd"]


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
    (pyver,) = set(re.findall(from_re, text, re.M))  # every stage on the same Python
    assert SpecifierSet(PYPROJECT["project"]["requires-python"]).contains(pyver)
    env_yml = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    assert f"python={pyver}" in env_yml["dependencies"], "image and conda environment use one Python"
    torch_specs = re.findall(r'"(torch[^"]*)"', text)
    assert torch_specs and all(Requirement(s).specifier == GPU_RANGE.specifier for s in torch_specs), torch_specs
    assert "whl/cpu" in text, "the default image build takes the CPU torch (no CUDA download)"
    assert "[lab,classroom]" in text, "the learner's extra and the classroom extra are installed"
    # the classroom extra: the single-user server of the hub's JupyterHub major, and
    # batchspawner-singleuser, which the Slurm route's job runs (jupyterhub/batchspawner#226)
    assert CLASSROOM_EXTRA["jupyterhub"].specifier == SpecifierSet(">=5.2,<6")
    assert {"batchspawner", "jupyterhub-nativeauthenticator", "nbgrader"} <= set(CLASSROOM_EXTRA)
    assert "command -v batchspawner-singleuser jupyterhub-singleuser" in text, "the build fails without them"
    for extra in ("test", "book"):
        assert f"[{extra}" not in text and f",{extra}" not in text, "no test/book tools in the learner image"


def test_recipes_copy_what_exists_and_the_course_jupyter_config():
    docker = _dockerfile()
    for src in re.findall(r"^COPY\s+(?!--from)(.+?)\s+\S+$", docker, re.M):
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


def _def_sections(text: str) -> dict[str, str]:
    """%section -> body of an Apptainer definition (the header before the first % is '')."""
    parts = re.split(r"^%(\w+)[^\n]*\n", text, flags=re.M)
    out = {"": parts[0]}
    for name, body in zip(parts[1::2], parts[2::2]):
        out[name] = out.get(name, "") + body
    return out


def test_apptainer_definition_takes_build_arguments(tmp_path):
    """Apptainer >= 1.2 templating: every {{ NAME }} has a default in %arguments (or the build stops:
    'build var ... is not defined'); the CUDA index is a --build-arg, nobody edits the file."""
    text = _def()
    sections = _def_sections(text)
    defaults = dict(ln.strip().split("=", 1) for ln in sections["arguments"].splitlines() if ln.strip())
    used = set(re.findall(r"\{\{\s*(\w+)\s*\}\}", text))  # comments too: Apptainer templates the whole file
    assert used and used <= set(defaults), used - set(defaults)
    assert defaults["TORCH_INDEX"] == "https://download.pytorch.org/whl/cpu"
    assert "--build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu126" in text
    rendered = re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: defaults[m.group(1)], text)
    for name in ("post", "runscript", "test"):
        (tmp_path / name).write_text(_def_sections(rendered)[name])
        subprocess.run(["sh", "-n", str(tmp_path / name)], check=True)


def test_graded_images_withhold_the_answers():
    """GRADED_CLASS=1 builds install the learner build (labutil.grading): in Docker in a separate
    stage whose only output is the withheld package (no layer of the image holds the answers), in
    Apptainer in %post, replacing the installed package and deleting the full copy."""
    docker = _dockerfile()
    stage1, stage2 = docker.split("\nFROM ", 2)[1:]
    assert "ARG GRADED_CLASS=0" in stage1 and "python -m labutil.grading learner-build" in stage1
    assert "COPY labutil" in stage1 and "COPY labutil" not in stage2.replace("COPY labutil/data/jupyter/", "")
    assert "COPY --from=course-source /course/ ${COURSE_DIR}/" in stage2
    sections = _def_sections(_def())
    assert "GRADED_CLASS=0" in sections["arguments"]
    post = sections["post"]
    assert post.index("learner-build") > post.index('"/opt/course[lab,classroom]"')
    assert 'rm -rf "$site" /opt/course/labutil' in post


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
    assert "|| test -d $HOME/gpu-cluster-course/chapters" in hook, "a skipped file (coreutils 9.2-9.4) is no failure"
    assert su["defaultUrl"].endswith("chapters/ch01_intro.ipynb")
    gpu = [p for p in su["profileList"] if "kubespawner_override" in p]
    assert gpu and gpu[0]["kubespawner_override"]["extra_resource_limits"]["nvidia.com/gpu"] in ("2", "4")
    assert gpu[0]["kubespawner_override"]["image"].startswith(f"gpu-cluster-course:{su['image']['tag']}-cu")
    # JupyterHub 5: no allow rule = nobody gets in; NativeAuthenticator's authorization is the gate
    auth = v["hub"]["config"]
    assert auth["Authenticator"]["allow_all"] is True and auth["NativeAuthenticator"]["open_signup"] is False
    assert auth["JupyterHub"]["authenticator_class"] == "nativeauthenticator.NativeAuthenticator"
    # the hub's own database and proxy: requests below limits
    for part in (v["hub"]["resources"], v["proxy"]["chp"]["resources"]):
        assert _bytes(part["requests"]["memory"]) <= _bytes(part["limits"]["memory"])


def _coalesce(defaults, values):
    """Helm's merge of a chart's values.yaml with user values: maps merge key by key, anything
    else (lists, scalars) is replaced; a null user value deletes the key."""
    out = copy.deepcopy(defaults)
    for key, value in values.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _coalesce(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _chart_values(overrides=None):
    defaults = yaml.safe_load((Z2JH / "values.yaml").read_text(encoding="utf-8"))
    return _coalesce(_coalesce(defaults, _values()), overrides or {})


def _schema_errors(values) -> list[str]:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Z2JH / "values.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    return sorted(f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(values))


def test_z2jh_values_pass_the_charts_own_schema():
    """What `helm upgrade --values classroom/z2jh-values.yaml` checks before rendering (chart 4.4.0:
    its values.yaml coalesced with ours, then values.schema.json, Draft 7). A typo in a key is caught:
    the schema forbids unknown keys, shown by the two broken copies."""
    assert _schema_errors(_chart_values()) == []
    typo = _schema_errors(_chart_values({"singleuser": {"cpuu": {"limit": 2}}}))
    assert typo and "cpuu" in typo[0]
    wrong_type = _schema_errors(_chart_values({"prePuller": {"pullProfileListImages": "no"}}))
    assert wrong_type and wrong_type[0].startswith("prePuller.pullProfileListImages")


def _run_extra_config(values):
    """Run hub.extraConfig the way the chart's jupyterhub_config.py does: last, with `c` (profile_list
    already set from singleuser.profileList) and the chart's get_config("a.b.c") lookup."""
    from traitlets.config import Config

    def get_config(key, default=None):
        node = values
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    c = Config()
    c.KubeSpawner.profile_list = copy.deepcopy(values["singleuser"]["profileList"])
    for _key, code in sorted(values["hub"].get("extraConfig", {}).items()):
        exec(code, {"c": c, "get_config": get_config})
    return c.KubeSpawner.profile_list


def test_gpu_profile_image_follows_the_registry_option():
    """The README's one `--set singleuser.image.name=<registry>/gpu-cluster-course` also renames
    the GPU profile's image (same repository, the profile's CUDA tag): no unqualified
    docker.io/library/gpu-cluster-course pull on GPU nodes."""
    tag = _values()["singleuser"]["image"]["tag"]
    repo = "registry.example.edu:5000/course/gpu-cluster-course"
    profiles = _run_extra_config(_chart_values({"singleuser": {"image": {"name": repo}}}))
    gpu = [p["kubespawner_override"]["image"] for p in profiles if "image" in p.get("kubespawner_override", {})]
    assert gpu == [f"{repo}:{tag}-cu126"]
    # without the --set, the chart's default name stays (a local build tagged gpu-cluster-course)
    profiles = _run_extra_config(_chart_values())
    assert [p["kubespawner_override"]["image"] for p in profiles if "kubespawner_override" in p] == [
        f"gpu-cluster-course:{tag}-cu126"]


def test_the_cuda_image_is_prepulled_on_gpu_nodes_only():
    v = _chart_values()
    assert v["prePuller"]["pullProfileListImages"] is False, "the chart's pullers run on every user node"
    assert v["prePuller"]["hook"]["enabled"] and v["prePuller"]["continuous"]["enabled"], "the CPU image still is"
    ds = yaml.safe_load((CLASSROOM / "gpu-image-puller.yaml").read_text(encoding="utf-8"))
    assert ds["kind"] == "DaemonSet" and ds["apiVersion"] == "apps/v1"
    spec = ds["spec"]["template"]["spec"]
    (init,) = spec["initContainers"]
    gpu_tag = next(p["kubespawner_override"]["image"] for p in _values()["singleuser"]["profileList"]
                   if "kubespawner_override" in p).rsplit(":", 1)[1]
    assert init["image"] == f"REGISTRY/gpu-cluster-course:{gpu_tag}", "the GPU profile's image, registry left to sed"
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    keys = {e["key"]: e["values"] for term in terms for e in term["matchExpressions"]}
    assert keys == {"feature.node.kubernetes.io/pci-10de.present": ["true"], "nvidia.com/gpu.present": ["true"]}
    assert ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items()


# -- Slurm / batchspawner -------------------------------------------------------------------------------
def test_slurm_hub_config_matches_the_k8s_sizes_and_renders_a_valid_job_script(tmp_path):
    cfg = _hub_config()
    v = _values()
    assert cfg.JupyterHub.spawner_class == "batchspawner.SlurmSpawner"
    assert cfg.JupyterHub.active_server_limit >= LEARNERS_MAX
    assert cfg.Spawner.cpu_limit == v["singleuser"]["cpu"]["limit"]
    assert _bytes(cfg.Spawner.mem_limit) == _bytes(v["singleuser"]["memory"]["limit"])
    assert cfg.Spawner.default_url == v["singleuser"]["defaultUrl"]
    # the same admission rule as on Kubernetes (JupyterHub 5: allow_all, NativeAuthenticator decides)
    assert cfg.Authenticator.allow_all is True and cfg.NativeAuthenticator.open_signup is False
    assert cfg.Authenticator.admin_users == set(v["hub"]["config"]["Authenticator"]["admin_users"])
    script, cmd = _render_job(cfg)
    assert cmd == "batchspawner-singleuser jupyterhub-singleuser", "what batchspawner runs inside the job"
    assert "#SBATCH --partition=interactive" in script and "#SBATCH --mem=3G" in script
    assert "#SBATCH --chdir=/home/alice" in script and "#SBATCH --job-name=course-alice" in script
    assert "#SBATCH --export=JUPYTERHUB_API_TOKEN,JUPYTERHUB_API_URL,PATH" in script
    assert "apptainer exec" in script
    assert script.count("/shared/images/course.sif batchspawner-singleuser jupyterhub-singleuser") == 1
    # srun would otherwise pass the server only sbatch's --export list (no PATH): the live test's fix
    assert script.index("export SLURM_EXPORT_ENV=ALL") < script.index("\nsrun ")
    assert "{{" not in script and "{%" not in script
    path = tmp_path / "job.sh"
    path.write_text(script)
    subprocess.run(["bash", "-n", str(path)], check=True)


def test_a_hub_user_without_a_cluster_account_gets_one_clear_line():
    cfg = _hub_config()
    hook = cfg.Spawner.pre_spawn_hook
    hook(types.SimpleNamespace(user=types.SimpleNamespace(name="root")))  # an existing account passes
    with pytest.raises(RuntimeError, match="'no-such-learner-x9' has no account on this cluster"):
        hook(types.SimpleNamespace(user=types.SimpleNamespace(name="no-such-learner-x9")))


def test_venv_route_job_runs_the_environments_batchspawner_singleuser_and_survives_a_restart(tmp_path):
    """The no-container route (COURSE_VENV): the rendered job, run twice by bash with a stand-in
    srun, copies the course into $HOME without overwriting an edit, and hands srun the
    environment's own batchspawner-singleuser (present in this environment's bin/)."""
    venv_bin = Path(sys.prefix) / "bin"
    if not (venv_bin / "batchspawner-singleuser").exists():
        pytest.skip(f"batchspawner-singleuser is not in {venv_bin} (pip install batchspawner: test extra)")
    cfg = _hub_config(COURSE_VENV=sys.prefix, COURSE_SIF=None, COURSE_DIR=str(ROOT))
    home = tmp_path / "home"
    home.mkdir()
    script, _cmd = _render_job(cfg, home=str(home))
    assert "apptainer" not in script and f"export COURSE_DIR={ROOT}" in script
    fake = tmp_path / "fakebin"
    fake.mkdir()
    (fake / "srun").write_text('#!/bin/sh\nfor a in "$@"; do command -v "$a" || echo "$a"; done > "$SRUN_ARGV"\n')
    (fake / "srun").chmod(0o755)
    job = tmp_path / "job.sh"
    job.write_text(script)
    env = {"PATH": f"{fake}:/usr/bin:/bin", "HOME": str(home), "SRUN_ARGV": str(tmp_path / "argv")}
    for attempt in (1, 2):
        p = subprocess.run(["bash", str(job)], env=env, capture_output=True, text=True, timeout=300, cwd=home)
        assert p.returncode == 0, (attempt, p.stderr)
        if attempt == 1:
            edited = home / "gpu-cluster-course" / "chapters" / "ch01_intro.py"
            edited.write_text("# a learner's edit\n", encoding="utf-8")
    assert edited.read_text(encoding="utf-8") == "# a learner's edit\n", "a restart never overwrites the learner's work"
    assert (home / "gpu-cluster-course" / "chapters" / "ch02_workloads.ipynb").exists()
    argv = (tmp_path / "argv").read_text().split()
    assert argv == [str(venv_bin / "batchspawner-singleuser"), str(venv_bin / "jupyterhub-singleuser")]


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
