"""Launch the harnesses: torchrun / srun / sbatch argument lists, a free port, a guarded runner.

Everything here builds *argument lists* (never shell strings), so a value with a space or a
``;`` cannot turn into a second command. A notebook cell launches a benchmark as::

    res = launch.run_module("labutil.bench.collectives", ["--op", "all_reduce", "-b", "8", "-e", "1M"],
                            nproc=2, out=path, timeout_s=120)
    data = res.json

which runs ``python -m torch.distributed.run --nnodes=1 --nproc-per-node=2 --rdzv-backend=c10d
--rdzv-endpoint=127.0.0.1:<free port> -m labutil.bench.collectives ... --out <path>`` in a
subprocess with its own process group (``mp.spawn`` from a cell breaks, ECOSYSTEM_NOTES §5.1).
Multi-node: the same torchrun line, one per node, with ``--nnodes``, a shared ``--rdzv-id`` and a
``--rdzv-endpoint`` on the first node; under Slurm one ``srun`` task per node runs it
(``labs/slurm/*.sbatch``). Flags are those of ``torchrun --help`` (PyTorch elastic/run docs).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import validate

REPO_ROOT = Path(__file__).resolve().parents[2]


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free right now on ``host`` (bound with port 0, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _check_endpoint(endpoint: str) -> str:
    if not isinstance(endpoint, str) or ":" not in endpoint:
        raise ValueError(f"rdzv_endpoint must be 'host:port'; got {endpoint!r}")
    host, _, port = endpoint.rpartition(":")
    if not host or any(c.isspace() for c in host):
        raise ValueError(f"rdzv_endpoint host must be a non-empty name without spaces; got {endpoint!r}")
    if not port.startswith("$"):  # a shell variable in a template ($MASTER_PORT) is allowed
        try:
            validate.integer("rdzv_endpoint port", int(port), lo=1, hi=65535)
        except ValueError:
            raise ValueError(f"rdzv_endpoint port must be an integer in [1, 65535]; got {endpoint!r}") from None
    return endpoint


def torchrun_args(module: str, module_args: list[str] | tuple[str, ...] = (), *, nproc_per_node: int = 2,
                  nnodes: int = 1, rdzv_endpoint: str | None = None, rdzv_id: str = "labutil",
                  python: str | None = None, max_restarts: int = 0, launcher: str = "python") -> list[str]:
    """The torchrun command line (list) running ``python -m module module_args`` on every rank.

    launcher='python' gives ``[sys.executable, -m, torch.distributed.run, ...]`` (what a notebook
    uses: same interpreter, no PATH surprises); launcher='torchrun' gives ``[torchrun, ...]`` (what
    an sbatch script uses). Rendezvous is always c10d at ``rdzv_endpoint`` (default
    ``127.0.0.1:<free port>`` for one node).
    """
    if not isinstance(module, str) or not module or " " in module:
        raise ValueError(f"module must be a dotted module name like 'labutil.bench.collectives'; got {module!r}")
    nproc_per_node = validate.integer("nproc_per_node", nproc_per_node, lo=1, hi=64)
    nnodes = validate.integer("nnodes", nnodes, lo=1)
    max_restarts = validate.integer("max_restarts", max_restarts, lo=0, hi=100)
    validate.choice("launcher", launcher, ("python", "torchrun"))
    if rdzv_endpoint is None:
        if nnodes > 1:
            raise ValueError("rdzv_endpoint is required when nnodes > 1 (host:port of the first node)")
        rdzv_endpoint = f"127.0.0.1:{free_port()}"
    _check_endpoint(rdzv_endpoint)
    if not isinstance(rdzv_id, str) or not rdzv_id or any(c.isspace() for c in rdzv_id):
        raise ValueError(f"rdzv_id must be a non-empty string without spaces; got {rdzv_id!r}")
    for a in module_args:
        if not isinstance(a, str):
            raise ValueError(f"module_args must be strings; got {a!r} in {list(module_args)!r}")
    head = [python or sys.executable, "-m", "torch.distributed.run"] if launcher == "python" else ["torchrun"]
    return head + [f"--nnodes={nnodes}", f"--nproc-per-node={nproc_per_node}", "--rdzv-backend=c10d",
                   f"--rdzv-endpoint={rdzv_endpoint}", f"--rdzv-id={rdzv_id}", f"--max-restarts={max_restarts}",
                   "-m", module, *module_args]


def srun_args(inner: list[str], *, nodes: int, gpus_per_node: int | None = None, cpus_per_task: int | None = None,
              extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """``srun`` running ``inner`` (a torchrun list) as ONE task per node (torchrun forks the ranks)."""
    nodes = validate.integer("nodes", nodes, lo=1)
    out = ["srun", f"--nodes={nodes}", "--ntasks-per-node=1", f"--ntasks={nodes}"]
    if gpus_per_node is not None:
        out.append(f"--gpus-per-node={validate.integer('gpus_per_node', gpus_per_node, lo=1, hi=64)}")
    if cpus_per_task is not None:
        out.append(f"--cpus-per-task={validate.integer('cpus_per_task', cpus_per_task, lo=1)}")
    if not inner or not all(isinstance(a, str) for a in inner):
        raise ValueError("inner must be a non-empty list of strings (the torchrun command)")
    return out + list(extra) + list(inner)


def sbatch_args(script, *, nodes: int, gpus_per_node: int, partition: str | None = None,
                time_limit: str = "00:30:00", job_name: str = "labutil-bench",
                export: dict[str, str] | None = None) -> list[str]:
    """``sbatch`` submitting one of ``labs/slurm/*.sbatch`` with the node/GPU counts as options.

    Options given on the command line override the script's ``#SBATCH`` lines (sbatch man page).
    """
    nodes = validate.integer("nodes", nodes, lo=1)
    gpus_per_node = validate.integer("gpus_per_node", gpus_per_node, lo=1, hi=64)
    if not isinstance(time_limit, str) or not time_limit.replace(":", "").replace("-", "").isdigit():
        raise ValueError(f"time_limit must look like 'HH:MM:SS' or 'D-HH:MM:SS'; got {time_limit!r}")
    out = ["sbatch", f"--job-name={job_name}", f"--nodes={nodes}", "--ntasks-per-node=1",
           f"--gpus-per-node={gpus_per_node}", f"--time={time_limit}"]
    if partition:
        out.append(f"--partition={partition}")
    if export:
        for k, v in export.items():
            if not k.replace("_", "").isalnum() or "," in str(v):
                raise ValueError(f"export must map NAME -> value without commas; got {k!r}={v!r}")
        out.append("--export=ALL," + ",".join(f"{k}={v}" for k, v in export.items()))
    return out + [str(script)]


def cpu_env(base: dict | None = None) -> dict:
    """Environment for gloo on loopback: MASTER_ADDR=127.0.0.1, GLOO_SOCKET_IFNAME=lo, 1 thread/rank."""
    env = dict(os.environ if base is None else base)
    env.setdefault("MASTER_ADDR", "127.0.0.1")
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    env.setdefault("OMP_NUM_THREADS", "1")
    # The repo root on PYTHONPATH: `-m labutil...` must import this checkout in every rank.
    pp = env.get("PYTHONPATH", "")
    if str(REPO_ROOT) not in pp.split(os.pathsep):
        env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + pp if pp else "")
    return env


@dataclass
class RunResult:
    """Outcome of :func:`run`: exit code, captured output, wall time, and whether it timed out."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    elapsed_s: float
    timed_out: bool
    out: Path | None = None
    _json: dict | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def json(self) -> dict:
        """The result file, loaded (raises RuntimeError with the run's stderr if the run failed)."""
        if self._json is None:
            if not self.ok:
                tail = "\n".join((self.stdout + "\n" + self.stderr).strip().splitlines()[-15:])
                why = f"timed out after {self.elapsed_s:.0f} s" if self.timed_out else f"exit code {self.returncode}"
                raise RuntimeError(f"benchmark run failed ({why}); last output lines:\n{tail}")
            if self.out is None:
                raise RuntimeError("this run wrote no result file (out=None)")
            self._json = load_json(self.out)
        return self._json


def run(args: list[str], *, timeout_s: float = 120.0, env: dict | None = None, cwd=None) -> RunResult:
    """Run ``args`` (a list) in its own process group; kill the whole group on timeout."""
    if not isinstance(args, (list, tuple)) or not args or not all(isinstance(a, str) for a in args):
        raise ValueError(f"args must be a non-empty list of strings (no shell strings); got {args!r}")
    timeout_s = validate.positive("timeout_s", timeout_s)
    t0 = time.perf_counter()
    proc = subprocess.Popen(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=cwd, start_new_session=True)
    timed_out = False
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        stdout, stderr = proc.communicate()
    except BaseException:  # KeyboardInterrupt in a notebook: do not leave ranks behind
        _kill_group(proc)
        proc.communicate()
        raise
    return RunResult(list(args), proc.returncode, stdout or "", stderr or "", time.perf_counter() - t0, timed_out)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_module(module: str, module_args: list[str], *, nproc: int = 2, out=None, timeout_s: float = 180.0,
               env_extra: dict | None = None) -> RunResult:
    """torchrun ``module`` on ``nproc`` local ranks (gloo-ready env), writing ``--out out``."""
    args = list(module_args)
    if out is not None:
        out = Path(out)
        args += ["--out", str(out)]
    env = cpu_env()
    for k, v in (env_extra or {}).items():
        env[str(k)] = str(v)
    res = run(torchrun_args(module, args, nproc_per_node=nproc), timeout_s=timeout_s, env=env, cwd=REPO_ROOT)
    res.out = out
    return res


def run_python_module(module: str, module_args: list[str], *, out=None, timeout_s: float = 180.0) -> RunResult:
    """``python -m module`` (single process, e.g. gemm/membw/storage_io) with ``--out out``."""
    args = [sys.executable, "-m", module, *module_args]
    if out is not None:
        out = Path(out)
        args += ["--out", str(out)]
    res = run(args, timeout_s=timeout_s, env=cpu_env(), cwd=REPO_ROOT)
    res.out = out
    return res


def load_json(path) -> dict:
    """Load a result file; a missing or unreadable file raises one clear error."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"result file {path} does not exist (the run failed or was killed before writing it)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"result file {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"result file {path} must hold a JSON object; got {type(data).__name__}")
    return data


def runs_dir() -> Path:
    """``labs/_runs`` (git-ignored): where the lab notebooks put their result files."""
    d = REPO_ROOT / "labs" / "_runs"
    d.mkdir(parents=True, exist_ok=True)
    return d
