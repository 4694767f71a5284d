"""Slurm templates: generated from labutil.machine.launch, fixed for Slurm >= 22.05, and run under a REAL Slurm.

The static tests always run; one of them runs a whole template under bash with stand-ins for
``scontrol`` and ``srun`` (their argument lists recorded), so the launch line is checked without
Slurm. The live tests start a real Slurm of TWO nodes on this host (Debian slurm-wlm 22.05:
slurmctld + two slurmd in multiple-slurmd mode, nodes named 127.0.0.1 and 127.0.0.2, + munge) with
tests/slurm/setup_slurm.sh and submit the committed ``labs/slurm/*.sbatch`` unchanged with
``sbatch --wait``, on the CPU path (BACKEND=gloo, 2 ranks per node, small sizes): on one node, and
on two nodes (one srun task and one torchrun per node, c10d rendezvous on the first node, 4
ranks), including a stuck rank that must end the job with the timeout message. They check the
job log, the slurmd logs and the result JSON. Where Slurm is not installed or cannot
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

from labutil.machine import launch

ROOT = launch.REPO_ROOT
SETUP = ROOT / "tests" / "slurm" / "setup_slurm.sh"


@pytest.mark.parametrize("name", sorted(launch.SBATCH_TEMPLATES))
def test_committed_templates_equal_the_generated_ones(name):
    committed = (ROOT / "labs" / "slurm" / f"{name}.sbatch").read_text(encoding="utf-8")
    assert committed == launch.render_sbatch(name), (
        f"labs/slurm/{name}.sbatch differs from labutil.machine.launch.render_sbatch({name!r}); "
        "regenerate: python -m labutil.machine.launch --write-sbatch labs/slurm")


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


@pytest.mark.parametrize("name", sorted(launch.SBATCH_TEMPLATES))
def test_templates_guard_the_real_cluster_failures(name):
    text = launch.render_sbatch(name)
    directives = re.findall(r"^#SBATCH (\S+)$", text, re.M)
    assert {"--exclusive", "--mem=0", "--ntasks-per-node=1", "--gpus-per-node=8"} <= set(directives)
    assert "--kill-on-bad-exit=1" in text and "--max-restarts=0" in text and '"--rdzv-id=$SLURM_JOB_ID"' in text
    # no `| head` anywhere in a pipefail script (see the SIGPIPE test below)
    assert "head -n" not in text.replace("`| head -n 1`", "")
    assert 'MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 1p)' in text
    assert "export TORCH_NCCL_ASYNC_ERROR_HANDLING=${TORCH_NCCL_ASYNC_ERROR_HANDLING:-1}" in text
    assert "TORCH_NCCL_BLOCKING_WAIT=1" not in text.replace("Not\n# TORCH_NCCL_BLOCKING_WAIT=1", "")
    # the fabric hints are there, commented (system-specific: never forced)
    for var in ("NCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "GLOO_SOCKET_IFNAME"):
        assert re.search(rf"^# export {var}=", text, re.M) and not re.search(rf"^export {var}=", text, re.M)
    assert text.rstrip().endswith('echo "result: $OUT"')


def _fake_bin(tmp_path, srun_rc=0):
    """Stand-ins for scontrol (a 2-node allocation) and srun (records its argv, one per line)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "scontrol").write_text("#!/bin/sh\n[ \"$1 $2\" = \"show hostnames\" ] || exit 9\n"
                                     "printf 'gpu-a07\\ngpu-b11\\n'\n")
    (bindir / "srun").write_text(f"#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done > \"$SRUN_ARGV\"\nexit {srun_rc}\n")
    for f in bindir.iterdir():
        f.chmod(0o755)
    return bindir


def _slurm_env(tmp_path, bindir, **extra):
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": str(tmp_path), "SLURM_JOB_ID": "4242", "SLURM_JOB_NUM_NODES": "2",
           "SLURM_JOB_NODELIST": "gpu-a07,gpu-b11", "SLURM_CPUS_PER_TASK": "32", "SLURM_GPUS_ON_NODE": "4",
           "SLURM_SUBMIT_DIR": str(ROOT), "PYTHON": sys.executable, "BACKEND": "gloo",
           # the CPU path: the template's GPU default (-e 8G) on 4 gloo ranks needs ~97 GiB of host memory
           "MAXBYTES": "64M",
           "RUNS_DIR": str(tmp_path / "runs"), "SRUN_ARGV": str(tmp_path / "srun_argv")}
    env.update(extra)
    return env


@pytest.mark.parametrize("name", sorted(launch.SBATCH_TEMPLATES))
def test_template_launch_line_without_slurm(tmp_path, name):
    """The committed script, run by bash as the batch step would: srun gets one task per node,
    torchrun the allocation's node count, the first host, a per-job port and the job id."""
    bindir = _fake_bin(tmp_path)
    env = _slurm_env(tmp_path, bindir, BENCH_ARGS="--timeout-s 77")
    script = ROOT / "labs" / "slurm" / f"{name}.sbatch"
    p = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    argv = (tmp_path / "srun_argv").read_text().splitlines()
    out = str(tmp_path / "runs" / (f"nccl_all_reduce_2n_4242.json" if name == "nccl_bench" else "ddp_2n_4242.json"))
    assert argv[:6] == ["--nodes=2", "--ntasks-per-node=1", "--ntasks=2", "--cpus-per-task=32",
                        "--kill-on-bad-exit=1", sys.executable]
    i = argv.index("torch.distributed.run")
    assert argv[i + 1:i + 7] == ["--nnodes=2", "--nproc-per-node=4", "--rdzv-backend=c10d",
                                 "--rdzv-endpoint=gpu-a07:" + str(launch.SBATCH_TEMPLATES[name]["port"] + 4242 % 1000),
                                 "--rdzv-id=4242", "--max-restarts=0"]
    assert argv[i + 8] == launch.SBATCH_TEMPLATES[name]["module"]
    assert argv[-4:] == ["--out", out, "--timeout-s", "77"]  # BENCH_ARGS come last: they override
    assert p.stdout.strip().splitlines()[-1] == f"result: {out}"
    assert "flags OK" in p.stdout  # the --dry-run check ran first, in this process


def test_template_refuses_a_sweep_the_node_cannot_hold(tmp_path):
    """The template's own default -e 8G on the CPU path with 4 ranks per node (4 x (3 x 8 GiB + 128 MiB)
    of host memory): refused with one line by the --dry-run check, before srun starts any rank."""
    bindir = _fake_bin(tmp_path)
    env = _slurm_env(tmp_path, bindir, MAXBYTES="1T")
    p = subprocess.run(["bash", str(ROOT / "labs" / "slurm" / "nccl_bench.sbatch")], env=env, capture_output=True,
                       text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    line, = p.stderr.strip().splitlines()
    assert line.startswith("labutil.bench.collectives: error: -e/--maxbytes 1.0 TiB on 4 ranks of this host")
    assert "is available" in line and not (tmp_path / "srun_argv").exists()


def test_template_stops_with_one_line_outside_sbatch_or_the_repo(tmp_path):
    bindir = _fake_bin(tmp_path)
    script = str(ROOT / "labs" / "slurm" / "nccl_bench.sbatch")
    env = _slurm_env(tmp_path, bindir)
    del env["SLURM_JOB_ID"]
    p = subprocess.run(["bash", script], env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert p.returncode != 0 and "submit this script with sbatch" in p.stderr and not (tmp_path / "srun_argv").exists()
    env = _slurm_env(tmp_path, bindir, SLURM_SUBMIT_DIR=str(tmp_path))
    p = subprocess.run(["bash", script], env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert p.returncode == 2 and "submit from the repository root" in p.stderr.strip()
    assert "Traceback" not in p.stderr and not (tmp_path / "srun_argv").exists()


def test_a_failed_srun_fails_the_job_and_prints_no_result(tmp_path):
    bindir = _fake_bin(tmp_path, srun_rc=3)
    p = subprocess.run(["bash", str(ROOT / "labs" / "slurm" / "ddp_scaling.sbatch")], env=_slurm_env(tmp_path, bindir),
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 3 and "result:" not in p.stdout


def test_first_host_survives_a_long_node_list_under_pipefail(tmp_path):
    """`scontrol show hostnames | head -n 1` under `set -o pipefail` ends the job once the list
    outgrows a pipe write (scontrol dies of SIGPIPE: status 141); the templates' `sed -n 1p` reads
    it all. The stand-in prints 200,000 names (2.4 MB), far past the 64 KiB pipe buffer."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "scontrol").write_text("#!/bin/sh\nexec seq -f 'gpu-node-%06g' 1 200000\n")
    (bindir / "scontrol").chmod(0o755)
    line = next(ln for ln in launch.render_sbatch("nccl_bench").splitlines() if ln.startswith("MASTER_ADDR="))
    env = {"PATH": f"{bindir}:/usr/bin:/bin", "SLURM_JOB_NODELIST": "gpu-node-[000001-200000]"}
    ok = subprocess.run(["bash", "-c", f"set -euo pipefail; {line}; echo \"$MASTER_ADDR\""], env=env,
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and ok.stdout.strip() == "gpu-node-000001"
    bad = subprocess.run(["bash", "-c", "set -euo pipefail; " + line.replace("sed -n 1p", "head -n 1") + "; echo x"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 141 and bad.stdout == ""


def test_rendezvous_port_is_per_job_and_below_the_ephemeral_range():
    line = next(ln for ln in launch.render_sbatch("nccl_bench").splitlines() if ln.startswith("MASTER_PORT="))
    ports = set()
    for job in (1, 999, 1001, 123456, 4294967):
        p = subprocess.run(["bash", "-c", f"set -eu; {line}; echo $MASTER_PORT"], env={"SLURM_JOB_ID": str(job)},
                           capture_output=True, text=True, timeout=30)
        port = int(p.stdout)
        assert 29500 <= port < 30500 < 32768 and port == 29500 + job % 1000
        ports.add(port)
    assert len(ports) == 4  # jobs 1 and 1001 share a port (1000 jobs apart); the others differ
    p = subprocess.run(["bash", "-c", f"set -eu; {line}; echo $MASTER_PORT"],
                       env={"SLURM_JOB_ID": "7", "MASTER_PORT": "31000"}, capture_output=True, text=True, timeout=30)
    assert p.stdout.strip() == "31000"  # an explicit port wins


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
    conf = Path(p.stdout.strip().splitlines()[-1].split("=", 1)[1])
    env = dict(os.environ, SLURM_CONF=str(conf))
    yield env


def _two_nodes(slurm_env):
    """Skip (with the setup script's reason) where only one slurmd could start."""
    why = Path(slurm_env["SLURM_CONF"]).parent / "two_nodes_unavailable"
    if why.exists():
        pytest.skip(why.read_text().strip())


def _submit(slurm_env, name, runs, extra_env, timeout_s=300, nodes=1, expect_ok=True):
    env = launch.cpu_env(slurm_env)
    env.update({"BACKEND": "gloo", "NPROC_PER_NODE": "2", "RUNS_DIR": str(runs), "PYTHON": sys.executable,
                "MASTER_PORT": str(launch.free_port()), **extra_env})
    args = launch.submit_args(name, nodes=nodes, gpus_per_node=8, runs_dir=runs, time_limit="00:05:00")
    args.insert(1, "--wait")  # sbatch blocks until the job ends and exits with its status
    res = launch.run(args, timeout_s=timeout_s, env=env, cwd=ROOT)
    m = re.search(r"Submitted batch job (\d+)", res.stdout)
    assert m, f"sbatch did not submit: {res.stdout} {res.stderr}"
    job = m.group(1)
    log = runs / f"{launch.SBATCH_TEMPLATES[name]['job_name']}_{job}.out"
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else "(no log)"
    if expect_ok:
        assert res.returncode == 0, f"job {job} failed (exit {res.returncode}); log:\n{text[-3000:]}\n{res.stderr}"
    return job, text, res


def _steps_on_nodes(slurm_env, job) -> dict:
    """Per node: did its slurmd launch a task of step <job>.0 (the srun line)?"""
    d = Path(slurm_env["SLURM_CONF"]).parent
    return {n: f"launch task StepId={job}.0 " in (d / f"slurmd-{n}.log").read_text(errors="replace")
            for n in ("127.0.0.1", "127.0.0.2") if (d / f"slurmd-{n}.log").exists()}


@pytest.mark.slow
def test_nccl_bench_template_runs_under_real_slurm(slurm, tmp_path):
    runs = tmp_path / "runs"
    job, log, _ = _submit(slurm, "nccl_bench", runs, {"MINBYTES": "1K", "MAXBYTES": "64K", "STEPFACTOR": "4",
                                                      "ITERS": "3", "WARMUP": "1"})
    assert "labutil.bench.collectives: flags OK" in log            # the pre-check ran before srun
    assert "# Out of bounds values : 0 OK" in log and "Collective test concluded: all_reduce_perf" in log
    data = launch.load_json(runs / f"nccl_all_reduce_1n_{job}.json")
    assert data["world_size"] == 2 and data["backend"] == "gloo" and data["wrong_total"] == 0
    assert [r["size_bytes"] for r in data["rows"]] == [1024, 4096, 16384, 65536]
    sl = data["environment"]["slurm"]
    assert sl["job_id"] == job and "step_id" in sl                 # rank 0 ran inside an srun step
    assert sl["cpus_per_task"] == "32"                             # srun got --cpus-per-task itself
    assert sl["job_num_nodes"] == "1" and log.rstrip().endswith(f"result: {runs}/nccl_all_reduce_1n_{job}.json")


@pytest.mark.slow
def test_ddp_template_runs_under_real_slurm(slurm, tmp_path):
    runs = tmp_path / "runs"
    job, log, _ = _submit(slurm, "ddp_scaling", runs, {"STEPS": "3", "WARMUP": "1"})
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


# --------------------------------------------------------------------------- two nodes
@pytest.mark.slow
def test_nccl_bench_template_runs_on_two_real_slurm_nodes(slurm, tmp_path):
    """One srun task per node, one torchrun per node, both meet at the c10d rendezvous on the
    first node (127.0.0.1): 2 nodes x 2 ranks = 4 ranks in one process group."""
    _two_nodes(slurm)
    runs = tmp_path / "runs"
    job, log, _ = _submit(slurm, "nccl_bench", runs, {"OP": "all_gather", "MINBYTES": "4K", "MAXBYTES": "64K",
                                                      "STEPFACTOR": "4", "ITERS": "3", "WARMUP": "1",
                                                      "BENCH_ARGS": "-d bfloat16"}, nodes=2)
    assert _steps_on_nodes(slurm, job) == {"127.0.0.1": True, "127.0.0.2": True}  # srun ran on both slurmd
    data = launch.load_json(runs / f"nccl_all_gather_2n_{job}.json")
    assert data["world_size"] == 4 and data["wrong_total"] == 0 and data["dtype"] == "bfloat16"
    assert sorted(d["rank"] for d in data["environment"]["ranks"]) == [0, 1, 2, 3]
    assert sorted(d["device"] for d in data["environment"]["ranks"]) == [0, 0, 1, 1]  # LOCAL_RANK 0,1 per node
    sl = data["environment"]["slurm"]
    assert sl["job_num_nodes"] == "2" and sl["job_nodelist"] == "127.0.0.[1-2]" and sl["cpus_per_task"] == "32"
    assert [r["size_bytes"] for r in data["rows"]] == [4096, 16384, 65536]
    assert log.rstrip().endswith(f"result: {runs}/nccl_all_gather_2n_{job}.json")


@pytest.mark.slow
def test_ddp_template_runs_on_two_real_slurm_nodes(slurm, tmp_path):
    _two_nodes(slurm)
    runs = tmp_path / "runs"
    job, log, _ = _submit(slurm, "ddp_scaling", runs, {"STEPS": "2", "WARMUP": "1"}, nodes=2)
    assert _steps_on_nodes(slurm, job) == {"127.0.0.1": True, "127.0.0.2": True}
    data = launch.load_json(runs / f"ddp_2n_{job}.json")
    assert data["world_size"] == 4 and data["replica_max_abs_diff"] == 0.0  # replicas agree across nodes
    assert data["environment"]["slurm"]["job_num_nodes"] == "2" and "# DDP world_size=4" in log


@pytest.mark.slow
def test_a_stuck_rank_on_two_nodes_ends_the_job_with_the_timeout(slurm, tmp_path):
    """Rank 3 never joins the first collective: the others give up after TIMEOUT_S with one clear
    line, torchrun stops the stuck rank, and the job fails long before its --time (5 min)."""
    _two_nodes(slurm)
    runs = tmp_path / "runs"
    job, log, res = _submit(slurm, "nccl_bench", runs, {"MINBYTES": "1K", "MAXBYTES": "1K", "ITERS": "2",
                                                        "WARMUP": "1", "TIMEOUT_S": "10",
                                                        "BENCH_ARGS": "--debug-stall-rank 3 --debug-stall-s 600"},
                            nodes=2, expect_ok=False)
    # it failed by itself: not at the outer guard, and not at Slurm's --time (slurmstepd would log
    # "CANCELLED ... DUE TO TIME LIMIT"); how long it took is not asserted (a loaded machine)
    assert res.returncode != 0 and not res.timed_out and "DUE TO TIME LIMIT" not in log
    assert "did not complete within --timeout-s=10 s" in log, log[-3000:]
    assert "result:" not in log and not (runs / f"nccl_all_reduce_2n_{job}.json").exists()
