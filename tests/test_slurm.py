"""Slurm templates: generated from labutil.bench.launch, fixed for Slurm >= 22.05, and run under a REAL Slurm.

The static tests always run. The live tests start a single-node Slurm (Debian slurm-wlm 22.05:
slurmctld + slurmd + munge) with tests/slurm/setup_slurm.sh and submit the committed
``labs/slurm/*.sbatch`` unchanged with ``sbatch --wait``, on the CPU path (BACKEND=gloo, 2 ranks,
small sizes), then check the job log and the result JSON. Where Slurm is not installed or cannot
start (no root, no apt), they skip with the script's reason; with LABUTIL_REQUIRE_SLURM=1
(``make slurm-test``, CI after installing Slurm) a failure to start is a test failure.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from labutil.bench import launch

ROOT = launch.REPO_ROOT
SETUP = ROOT / "tests" / "slurm" / "setup_slurm.sh"


@pytest.mark.parametrize("name", sorted(launch.SBATCH_TEMPLATES))
def test_committed_templates_equal_the_generated_ones(name):
    committed = (ROOT / "labs" / "slurm" / f"{name}.sbatch").read_text(encoding="utf-8")
    assert committed == launch.render_sbatch(name), (
        f"labs/slurm/{name}.sbatch differs from labutil.bench.launch.render_sbatch({name!r}); "
        "regenerate: python -m labutil.bench.launch --write-sbatch labs/slurm")


@pytest.mark.parametrize("name", sorted(launch.SBATCH_TEMPLATES))
def test_templates_fix_the_two_slurm_failures(name):
    text = launch.render_sbatch(name)
    srun = text[text.index("\nsrun "):]
    # 1. srun gets --cpus-per-task itself (Slurm 22.05: not inherited from sbatch)
    assert '"--cpus-per-task=$SLURM_CPUS_PER_TASK"' in srun
    assert "#SBATCH --cpus-per-task=32" in text
    # 2. the log goes to a folder that exists before the job starts (the submit dir)
    out = re.search(r"^#SBATCH --output=(\S+)$", text, re.M).group(1)
    assert "/" not in out and out == "%x_%j.out"
    # one task per node, torchrun inside, c10d rendezvous on the first node, flags checked first
    assert "--ntasks-per-node=1" in srun and "-m torch.distributed.run" in srun and "--rdzv-backend=c10d" in srun
    assert text.index("--dry-run") < text.index("\nsrun ")
    assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0


def test_submit_args_creates_the_log_folder_first(tmp_path):
    runs = tmp_path / "fresh" / "_runs"
    args = launch.submit_args("nccl_bench", nodes=2, gpus_per_node=8, runs_dir=runs, cpus_per_task=16)
    assert runs.is_dir()  # before sbatch is ever called
    assert args[0] == "sbatch" and args[-1].endswith("labs/slurm/nccl_bench.sbatch")
    assert f"--output={runs}/%x_%j.out" in args and "--cpus-per-task=16" in args and "--nodes=2" in args
    with pytest.raises(KeyError, match="sbatch template"):
        launch.submit_args("nccl_bnech", nodes=1, gpus_per_node=1)


# --------------------------------------------------------------------------- live Slurm
@pytest.fixture(scope="module")
def slurm():
    require = os.environ.get("LABUTIL_REQUIRE_SLURM") == "1"
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    p = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=240)
    reason = (p.stderr.strip().splitlines() or ["no output"])[-1]
    if p.returncode != 0:
        if require and p.returncode != 77:
            pytest.fail(f"Slurm did not start (exit {p.returncode}): {p.stderr[-1500:]}")
        if require:
            pytest.fail(f"LABUTIL_REQUIRE_SLURM=1 but: {reason}")
        pytest.skip(reason)
    conf = p.stdout.strip().splitlines()[-1].split("=", 1)[1]
    env = dict(os.environ, SLURM_CONF=conf)
    yield env


def _submit(slurm_env, name, runs, extra_env, timeout_s=300):
    env = launch.cpu_env(slurm_env)
    env.update({"BACKEND": "gloo", "NPROC_PER_NODE": "2", "RUNS_DIR": str(runs), "PYTHON": sys.executable,
                "MASTER_PORT": str(launch.free_port()), **extra_env})
    args = launch.submit_args(name, nodes=1, gpus_per_node=8, runs_dir=runs, time_limit="00:05:00")
    args.insert(1, "--wait")  # sbatch blocks until the job ends and exits with its status
    res = launch.run(args, timeout_s=timeout_s, env=env, cwd=ROOT)
    m = re.search(r"Submitted batch job (\d+)", res.stdout)
    assert m, f"sbatch did not submit: {res.stdout} {res.stderr}"
    job = m.group(1)
    log = runs / f"{launch.SBATCH_TEMPLATES[name]['job_name']}_{job}.out"
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else "(no log)"
    assert res.returncode == 0, f"job {job} failed (exit {res.returncode}); log:\n{text[-3000:]}\n{res.stderr}"
    return job, text


@pytest.mark.slow
def test_nccl_bench_template_runs_under_real_slurm(slurm, tmp_path):
    runs = tmp_path / "runs"
    job, log = _submit(slurm, "nccl_bench", runs, {"MINBYTES": "1K", "MAXBYTES": "64K", "STEPFACTOR": "4",
                                                   "ITERS": "3", "WARMUP": "1"})
    assert "labutil.bench.collectives: flags OK" in log            # the pre-check ran before srun
    assert "# Out of bounds values : 0 OK" in log and "Collective test concluded: all_reduce_perf" in log
    data = launch.load_json(runs / f"nccl_all_reduce_1n_{job}.json")
    assert data["world_size"] == 2 and data["backend"] == "gloo" and data["wrong_total"] == 0
    assert [r["size_bytes"] for r in data["rows"]] == [1024, 4096, 16384, 65536]
    sl = data["environment"]["slurm"]
    assert sl["job_id"] == job and "step_id" in sl                 # rank 0 ran inside an srun step
    assert sl["cpus_per_task"] == "32"                             # srun got --cpus-per-task itself


@pytest.mark.slow
def test_ddp_template_runs_under_real_slurm(slurm, tmp_path):
    runs = tmp_path / "runs"
    job, log = _submit(slurm, "ddp_scaling", runs, {"STEPS": "3", "WARMUP": "1"})
    assert "labutil.bench.ddp: flags OK" in log and "# DDP world_size=2" in log
    data = launch.load_json(runs / f"ddp_1n_{job}.json")
    assert data["world_size"] == 2 and data["replica_max_abs_diff"] == 0.0
    assert data["environment"]["slurm"]["job_id"] == job


@pytest.mark.slow
def test_bad_flag_ends_the_job_with_one_line_before_srun(slurm, tmp_path):
    runs = tmp_path / "runs"
    env = launch.cpu_env(slurm)
    env.update({"BACKEND": "gloo", "NPROC_PER_NODE": "2", "RUNS_DIR": str(runs), "PYTHON": sys.executable,
                "MAXBYTES": "1e30T"})
    args = launch.submit_args("nccl_bench", nodes=1, gpus_per_node=8, runs_dir=runs, time_limit="00:02:00")
    args.insert(1, "--wait")
    res = launch.run(args, timeout_s=180, env=env, cwd=ROOT)
    job = re.search(r"Submitted batch job (\d+)", res.stdout).group(1)
    log = (runs / f"nccl-bench_{job}.out").read_text()
    assert res.returncode != 0
    errors = [ln for ln in log.splitlines() if "error" in ln.lower()]
    assert errors == ["labutil.bench.collectives: error: -e/--maxbytes: size must be <= 1099511627776 bytes "
                      "(1T); got '1e30T'"], log
    assert "Traceback" not in log and "torch.distributed.run" not in log
