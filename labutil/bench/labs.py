"""Orchestration used by the lab notebooks (labs/lab0N_*.py), so their cells stay thin.

Each helper launches a harness in a subprocess (argument list, free port, timeout) on the GPUs
when there are any, else on the clearly labelled CPU path (2 gloo ranks), and returns the loaded
JSON record. Results go to ``labs/_runs/`` (git-ignored).
"""

from __future__ import annotations

import sys

from . import launch

# NCCL environment experiments of lab03 (NCCL docs, "Environment Variables": all of these are in
# the *debugging* group — for diagnosis runs, not to keep in job scripts).
NCCL_ENV_EXPERIMENTS = {
    "default": {},
    "NCCL_P2P_DISABLE=1": {"NCCL_P2P_DISABLE": "1"},
    "NCCL_SHM_DISABLE=1": {"NCCL_SHM_DISABLE": "1"},
    "NCCL_P2P+SHM_DISABLE": {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1"},
    "NCCL_ALGO=Ring": {"NCCL_ALGO": "Ring"},
    "NCCL_ALGO=Tree": {"NCCL_ALGO": "Tree"},
    "NCCL_PROTO=LL": {"NCCL_PROTO": "LL"},
    "NCCL_PROTO=LL128": {"NCCL_PROTO": "LL128"},
    "NCCL_PROTO=Simple": {"NCCL_PROTO": "Simple"},
}


def gpu_count() -> int:
    """CUDA GPUs visible to torch in *this* process (0 without torch or without a CUDA build)."""
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def lab_ranks(max_ranks: int = 4) -> int:
    """Ranks for a lab: every GPU up to ``max_ranks`` (>= 2 needed), else 2 CPU (gloo) ranks."""
    n = gpu_count()
    return min(n, max_ranks) if n >= 2 else 2


def backend() -> str:
    return "nccl" if gpu_count() >= 2 else "gloo"


def run_collectives(op: str = "all_reduce", *, minbytes: str | None = None, maxbytes: str | None = None,
                    stepfactor: int = 4, iters: int | None = None, warmup: int = 3, nproc: int | None = None,
                    env: dict | None = None, tag: str = "", timeout_s: float = 240.0) -> dict:
    """One nccl-tests-style sweep; GPU defaults 8 B..1 GiB, CPU defaults 1 KiB..16 MiB (seconds).

    The CPU sweep goes up to 16 MiB so that the largest sizes are dominated by transfer time,
    not by the scheduling noise of a shared machine (the α-β fit needs times that grow with S).
    """
    gpu = backend() == "nccl"
    nproc = nproc or lab_ranks()
    minbytes = minbytes or ("8" if gpu else "1K")
    maxbytes = maxbytes or ("1G" if gpu else "16M")
    iters = iters or (20 if gpu else 5)
    out = launch.runs_dir() / f"collectives_{op}_{nproc}r{('_' + tag) if tag else ''}.json"
    res = launch.run_module("labutil.bench.collectives",
                            ["--op", op, "-b", minbytes, "-e", maxbytes, "-f", str(stepfactor), "-n", str(iters),
                             "-w", str(warmup), "--backend", "nccl" if gpu else "gloo", "--timeout-s", "120"],
                            nproc=nproc, out=out, timeout_s=timeout_s, env_extra=env)
    data = res.json
    data["stdout"] = res.stdout
    return data


def run_env_experiments(names=None, **kwargs) -> dict:
    """lab03 on GPUs: the same all_reduce sweep under each NCCL environment setting."""
    names = list(names or NCCL_ENV_EXPERIMENTS)
    for n in names:
        if n not in NCCL_ENV_EXPERIMENTS:
            from ..validate import unknown_name
            raise unknown_name("NCCL experiment", n, NCCL_ENV_EXPERIMENTS)
    return {n: run_collectives(env=NCCL_ENV_EXPERIMENTS[n], tag=n.replace("=", "_").replace("+", "_"), **kwargs)
            for n in names}


def run_single(module: str, args: list[str], name: str, timeout_s: float = 180.0) -> dict:
    """``python -m module args --out labs/_runs/<name>.json`` (gemm, membw, storage_io)."""
    res = launch.run_python_module(module, args, out=launch.runs_dir() / f"{name}.json", timeout_s=timeout_s)
    data = res.json
    data["stdout"] = res.stdout
    return data


def run_ddp(nproc: int, *, steps: int | None = None, timeout_s: float = 240.0, **model) -> dict:
    gpu = backend() == "nccl"
    args = ["--backend", "nccl" if gpu else "gloo", "--steps", str(steps or (30 if gpu else 8)),
            "--warmup-steps", "3" if not gpu else "10"]
    for k, v in model.items():
        args += [f"--{k.replace('_', '-')}", str(v)]
    out = launch.runs_dir() / f"ddp_{nproc}r.json"
    return launch.run_module("labutil.bench.ddp", args, nproc=nproc, out=out, timeout_s=timeout_s).json


def doctor_json(timeout_s: float = 120.0) -> dict:
    """``python -m labutil doctor --json``, loaded."""
    import json

    res = launch.run([sys.executable, "-m", "labutil", "doctor", "--json"], timeout_s=timeout_s,
                     env=launch.cpu_env(), cwd=launch.REPO_ROOT)
    if not res.ok:
        raise RuntimeError(f"labutil doctor failed (exit {res.returncode}): {res.stderr[-1000:]}")
    try:
        return json.loads(res.stdout)
    except json.JSONDecodeError as exc:
        raise ValueError(f"labutil doctor --json printed invalid JSON: {exc}") from None
