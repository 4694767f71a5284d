"""Launch the harnesses: torchrun / srun / sbatch argument lists, a free port, a guarded runner.

Everything here builds *argument lists* (never shell strings), so a value with a space or a
``;`` cannot turn into a second command. A notebook cell launches a benchmark as::

    res = launch.run_module("labutil.bench.collectives", ["--op", "all_reduce", "-b", "8", "-e", "1M"],
                            nproc=2, out=path, timeout_s=120)
    data = res.json

which runs ``python -m torch.distributed.run --nnodes=1 --nproc-per-node=2 --rdzv-backend=c10d
--rdzv-endpoint=127.0.0.1:<free port> -m labutil.bench.collectives ... --out <path>`` in a
subprocess with its own process group (``torch.multiprocessing.spawn`` of a function defined in a
notebook cell fails: the child cannot unpickle ``__main__`` functions, jupyter/notebook #6258,
pytorch/pytorch #20375).
Multi-node: the same torchrun line, one per node, with ``--nnodes``, a shared ``--rdzv-id`` and a
``--rdzv-endpoint`` on the first node; under Slurm one ``srun`` task per node runs it
(``labs/slurm/*.sbatch``). Flags are those of ``torchrun --help`` (PyTorch elastic/run docs).
"""

from __future__ import annotations

import argparse
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

__all__ = ["REPO_ROOT", "free_port", "torchrun_args", "srun_args", "sbatch_args", "submit_args", "SBATCH_TEMPLATES",
           "render_sbatch", "write_sbatch_templates", "cpu_env", "RunResult", "run", "precheck", "run_module",
           "RENDEZVOUS_RETRIES", "run_python_module", "load_json", "main", "runs_dir"]

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
                export: dict[str, str] | None = None, output: str | None = None,
                cpus_per_task: int | None = None) -> list[str]:
    """``sbatch`` submitting one of ``labs/slurm/*.sbatch`` with the node/GPU counts as options.

    Options given on the command line override the script's ``#SBATCH`` lines (sbatch man page).
    ``output`` is the job log path (``%x`` job name, ``%j`` job id); Slurm opens it before the
    script runs, so its folder must already exist (:func:`submit_args` creates it).
    """
    nodes = validate.integer("nodes", nodes, lo=1)
    gpus_per_node = validate.integer("gpus_per_node", gpus_per_node, lo=1, hi=64)
    if not isinstance(time_limit, str) or not time_limit.replace(":", "").replace("-", "").isdigit():
        raise ValueError(f"time_limit must look like 'HH:MM:SS' or 'D-HH:MM:SS'; got {time_limit!r}")
    out = ["sbatch", f"--job-name={job_name}", f"--nodes={nodes}", "--ntasks-per-node=1",
           f"--gpus-per-node={gpus_per_node}", f"--time={time_limit}"]
    if cpus_per_task is not None:
        out.append(f"--cpus-per-task={validate.integer('cpus_per_task', cpus_per_task, lo=1)}")
    if output is not None:
        if not isinstance(output, str) or not output or "\n" in output:
            raise ValueError(f"output must be a file path pattern like 'labs/_runs/%x_%j.out'; got {output!r}")
        out.append(f"--output={output}")
    if partition:
        out.append(f"--partition={partition}")
    if export is not None and not isinstance(export, dict):
        raise ValueError(f"export must be a dict NAME -> value; got {type(export).__name__} {export!r}")
    if export:
        for k, v in export.items():
            if not k.replace("_", "").isalnum() or "," in str(v):
                raise ValueError(f"export must map NAME -> value without commas; got {k!r}={v!r}")
        out.append("--export=ALL," + ",".join(f"{k}={v}" for k, v in export.items()))
    return out + [str(script)]


def submit_args(name: str, *, nodes: int, gpus_per_node: int, runs_dir=None, **kwargs) -> list[str]:
    """``sbatch`` for the committed template ``labs/slurm/<name>.sbatch`` with the job log in
    ``runs_dir`` (default ``labs/_runs``), which is created NOW, before sbatch: Slurm opens
    ``--output`` before the script starts, and a missing folder fails the job with no log."""
    if name not in SBATCH_TEMPLATES:
        raise validate.unknown_name("sbatch template", name, SBATCH_TEMPLATES)
    d = Path(runs_dir) if runs_dir is not None else REPO_ROOT / "labs" / "_runs"
    d.mkdir(parents=True, exist_ok=True)
    kwargs.setdefault("job_name", SBATCH_TEMPLATES[name]["job_name"])
    return sbatch_args(REPO_ROOT / "labs" / "slurm" / f"{name}.sbatch", nodes=nodes, gpus_per_node=gpus_per_node,
                       output=str(d / "%x_%j.out"), **kwargs)


# ---------------------------------------------------------------------------------------------
# Slurm batch templates: labs/slurm/*.sbatch are GENERATED from this table (one source of truth;
# tests/test_slurm.py checks the committed files equal render_sbatch(); regenerate with
# `python -m labutil.machine.launch --write-sbatch labs/slurm`). ch24's frameworks.srun_torchrun_script
# builds the same srun + torchrun pattern for arbitrary training scripts.
# ---------------------------------------------------------------------------------------------
SBATCH_TEMPLATES: dict[str, dict] = {
    "nccl_bench": {
        "job_name": "nccl-bench", "module": "labutil.bench.collectives", "port": 29500,
        "title": "Multi-node collective benchmark (lab02 / ch22) with torchrun under Slurm.",
        "defaults": {"OP": "all_reduce", "MINBYTES": "8", "MAXBYTES": "8G", "STEPFACTOR": "2", "ITERS": "20",
                     "WARMUP": "5"},
        "gpu_sized": {"MAXBYTES"},  # unset: from the smallest GPU's memory (_MAXBYTES_FROM_GPU)
        "out": "$RUNS_DIR/nccl_${OP}_${SLURM_JOB_NUM_NODES}n_${SLURM_JOB_ID}.json",
        "args": ["--op", "$OP", "-b", "$MINBYTES", "-e", "$MAXBYTES", "-f", "$STEPFACTOR", "-n", "$ITERS",
                 "-w", "$WARMUP", "--backend", "$BACKEND", "--timeout-s", "$TIMEOUT_S", "--out", "$OUT"],
        "result": "$RUNS_DIR/nccl_<op>_<nodes>n_<jobid>.json",
        "example": "sbatch --nodes=2 --gpus-per-node=8 labs/slurm/nccl_bench.sbatch     # OP=all_gather sbatch ...",
        "extra_example": 'BENCH_ARGS="-d bfloat16 -o max" sbatch ...',
    },
    "ddp_scaling": {
        "job_name": "ddp-scaling", "module": "labutil.bench.ddp", "port": 29501,
        "title": "DDP scaling run (lab06) across nodes; repeat at 1, 2, 4 ... nodes and compare samples/s per GPU.",
        "defaults": {"STEPS": "50", "WARMUP": "10"},
        "out": "$RUNS_DIR/ddp_${SLURM_JOB_NUM_NODES}n_${SLURM_JOB_ID}.json",
        "args": ["--backend", "$BACKEND", "--steps", "$STEPS", "--warmup-steps", "$WARMUP", "--timeout-s", "$TIMEOUT_S",
                 "--out", "$OUT"],
        "result": "$RUNS_DIR/ddp_<nodes>n_<jobid>.json",
        "example": "sbatch --nodes=4 --gpus-per-node=8 labs/slurm/ddp_scaling.sbatch",
        "extra_example": 'BENCH_ARGS="--hidden 8192 --batch 1024" sbatch ...',
    },
}

# MAXBYTES unset on the GPU path: the largest message whose buffers fit the smallest GPU. Each rank
# holds MEMORY_FACTOR x S + 128 MiB (labutil.bench.collectives: 3 S + 128 MiB) plus the CUDA
# context and NCCL's buffers, so the 8G default needs about 24 GiB per rank: a CUDA OOM at the 8 GiB
# row on 24 GB cards (L4, A10, RTX 4090; review 2026-12-03). The rule: the largest of 8G..1G whose
# 3 x S + 1 GiB fits in 80 % of memory.total (the 1 GiB and 20 % are the course's margin for the
# context, NCCL and the allocator, not an outside number): 8G on 40/48/80 GB cards, 4G on 24 GB,
# 2G on 16 GB. _maxbytes_for_gpu_mib() is the same rule in Python (tests/test_labs_guides.py).
_MAXBYTES_STEPS_GIB = (8, 4, 2, 1)
_MAXBYTES_FROM_GPU = [
    "# MAXBYTES (the largest message): each rank holds about 3 x MAXBYTES + 128 MiB of GPU memory plus",
    "# the CUDA context and NCCL's buffers, so 8G needs ~24 GiB per rank and runs out of memory on",
    "# 24 GB cards (L4, A10, RTX 4090). Unset, it is the largest of 8G/4G/2G/1G whose 3 x size + 1 GiB",
    "# fits in 80 % of the smallest GPU's memory (nvidia-smi): 8G on 40-80 GB cards, 4G on 24 GB, 2G on 16 GB.",
    'if [ -z "${MAXBYTES:-}" ]; then',
    "  MAXBYTES=8G",
    '  GPU_MIB=""',
    '  if [ "$BACKEND" = nccl ] && command -v nvidia-smi >/dev/null 2>&1; then',
    "    GPU_MIB=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | sort -n | sed -n 1p || true)",
    "  fi",
    '  if [[ "$GPU_MIB" =~ ^[0-9]+$ ]]; then',
    "    MAXBYTES=512M",
    f"    for g in {' '.join(str(g) for g in _MAXBYTES_STEPS_GIB)}; do",
    "      if (( (3 * g + 1) * 1024 * 10 <= GPU_MIB * 8 )); then MAXBYTES=${g}G; break; fi",
    "    done",
    '    echo "MAXBYTES=$MAXBYTES (from the smallest GPU: $GPU_MIB MiB; set MAXBYTES=... to override)"',
    '  elif [ "$BACKEND" = nccl ]; then',
    '    echo "warning: GPU memory unknown (no nvidia-smi): MAXBYTES=8G needs ~24 GiB per GPU; use MAXBYTES=4G on 24 GB cards, 2G on 16 GB" >&2',
    "  fi",
    "fi",
]


def _maxbytes_for_gpu_mib(gpu_mib: int) -> str:
    """The template's MAXBYTES rule for a GPU of ``gpu_mib`` MiB (nvidia-smi memory.total)."""
    gpu_mib = validate.integer("gpu_mib", gpu_mib, lo=1)
    for g in _MAXBYTES_STEPS_GIB:
        if (3 * g + 1) * 1024 * 10 <= gpu_mib * 8:
            return f"{g}G"
    return "512M"


# Extra harness flags from the environment (BENCH_ARGS="-d bfloat16"), split into words by bash
# `read -a` (no glob expansion). Expanded as ${A[@]+"${A[@]}"}: an empty array under `set -u` is
# an "unbound variable" error in bash < 4.4 (RHEL/CentOS 7 ship 4.2).
_BENCH_ARGS = "@BENCH_ARGS@"
_BENCH_ARGS_SHELL = '${BENCH_ARGS_ARRAY[@]+"${BENCH_ARGS_ARRAY[@]}"}'


def _shell_word(arg: str) -> str:
    """Quote one argument for bash: "$VAR" references stay expandable inside double quotes."""
    import shlex

    if arg == _BENCH_ARGS:
        return _BENCH_ARGS_SHELL
    if "$" in arg:
        if any(c in arg for c in '"`\\'):
            raise ValueError(f"a templated argument may not contain quotes or backslashes; got {arg!r}")
        return f'"{arg}"'
    return shlex.quote(arg)


def render_sbatch(name: str, *, nodes: int = 2, gpus_per_node: int = 8, cpus_per_task: int = 32,
                  time_limit: str = "00:20:00") -> str:
    """The text of ``labs/slurm/<name>.sbatch``.

    What it guards against, each a failure seen on real clusters:

    1. since Slurm 22.05 ``srun`` no longer inherits ``--cpus-per-task`` from sbatch (Slurm 22.05
       release notes / sbatch man page: "srun will not inherit the --cpus-per-task value requested
       by salloc or sbatch"; set it again or use SRUN_CPUS_PER_TASK), so the srun line passes
       ``--cpus-per-task=$SLURM_CPUS_PER_TASK`` — else torchrun's ranks share one core;
    2. ``#SBATCH --output`` is opened by Slurm before the script runs, so it names the submit
       directory (always exists); :func:`submit_args` puts the log in ``labs/_runs`` after creating it;
    3. the first host comes from ``scontrol show hostnames ... | sed -n 1p``, not ``| head -n 1``:
       under ``set -o pipefail`` head exits after one line, scontrol dies of SIGPIPE once the node
       list outgrows one pipe write, and the assignment ends the job (measured here with Slurm
       22.05's scontrol: 2 of 5 runs at 2,000 nodes, 5 of 5 at 5,000; tests/test_slurm.py);
    4. the rendezvous port is derived from the job id (29500 + id mod 1000, below Linux's ephemeral
       range 32768+), so two jobs sharing a first node do not race for one fixed port;
    5. ``--exclusive --mem=0``: whole nodes, so a neighbour job's traffic is not measured too
       (``sbatch --oversubscribe`` on the command line overrides it: command-line options win
       over ``#SBATCH`` lines, sbatch man page);
    6. a stuck rank ends the job instead of holding the nodes until ``--time``: ``--timeout-s``
       (``$TIMEOUT_S``) is the process-group timeout, NCCL's watchdog then tears the process down
       (``TORCH_NCCL_ASYNC_ERROR_HANDLING=1``, the value torchrun gives its workers; PyTorch
       "ProcessGroupNCCL Environment Variables"), torchrun stops the node's other ranks and
       ``srun --kill-on-bad-exit=1`` the other nodes' tasks;
    7. run outside sbatch, or from another folder, it stops with one line instead of a traceback.

    Flags are checked by ``--dry-run`` before srun starts any rank. Environment overrides
    (``BACKEND=gloo NPROC_PER_NODE=2 ...``) give the CPU path used by ``make slurm-test``.
    """
    if name not in SBATCH_TEMPLATES:
        raise validate.unknown_name("sbatch template", name, SBATCH_TEMPLATES)
    spec = SBATCH_TEMPLATES[name]
    nodes = validate.integer("nodes", nodes, lo=1)
    gpus_per_node = validate.integer("gpus_per_node", gpus_per_node, lo=1, hi=64)
    cpus_per_task = validate.integer("cpus_per_task", cpus_per_task, lo=1)
    args = [*spec["args"], _BENCH_ARGS]
    inner = torchrun_args(spec["module"], args, nproc_per_node=gpus_per_node, nnodes=max(nodes, 2),
                          rdzv_endpoint="$MASTER_ADDR:$MASTER_PORT", rdzv_id="$SLURM_JOB_ID", python="$PYTHON")
    # the node and rank counts come from the allocation at run time, not from the defaults above
    inner = [{f"--nnodes={max(nodes, 2)}": "--nnodes=$SLURM_JOB_NUM_NODES",
              f"--nproc-per-node={gpus_per_node}": "--nproc-per-node=$NPROC_PER_NODE"}.get(a, a) for a in inner]
    srun = ["srun", "--nodes=$SLURM_JOB_NUM_NODES", "--ntasks-per-node=1", "--ntasks=$SLURM_JOB_NUM_NODES",
            "--cpus-per-task=$SLURM_CPUS_PER_TASK", "--kill-on-bad-exit=1"] + inner
    # LOCAL_WORLD_SIZE: the ranks each node will run, so the memory check counts all of them
    check = ["env", "LOCAL_WORLD_SIZE=$NPROC_PER_NODE", "$PYTHON", "-m", spec["module"], *args, "--dry-run"]
    lines = ["#!/bin/bash",
             f"# {spec['title']}",
             "# GENERATED by labutil.machine.launch.render_sbatch — edit SBATCH_TEMPLATES there, then run",
             "#   python -m labutil.machine.launch --write-sbatch labs/slurm",
             "#",
             "# Pattern: ONE srun task per node; on each node torchrun starts one rank per GPU and all nodes",
             "# meet at a c10d rendezvous on the first node of the allocation (PyTorch torchrun docs: the",
             "# same --nnodes/--rdzv-backend=c10d/--rdzv-endpoint=host:port/--rdzv-id on every node).",
             "# Submit from the repository root, on a file system every node sees (the log, the result and",
             "# the Python environment are read and written there by all nodes):",
             f"#   {spec['example']}",
             f"#   sbatch --nodes=1 --gpus-per-node=4 --cpus-per-task=16 labs/slurm/{name}.sbatch  # one 4-GPU node",
             "# or, with the job log in labs/_runs (created before submission):",
             f"#   python -m labutil.machine.launch --submit {name} --nodes 2 --gpus-per-node 8 --partition gpu",
             *(["# GPU memory: 8G messages need ~24 GiB per GPU. Unset, MAXBYTES follows the smallest GPU's",
                "#   memory (8G on 40-80 GB, 4G on 24 GB cards such as L4/A10, 2G on 16 GB); MAXBYTES=... overrides."]
               if spec.get("gpu_sized") else []),
             f"# Result: {spec['result']} (rank 0, written atomically); the job log",
             "# says where. Extra harness flags: " + spec["extra_example"],
             "# CPU path (no GPU): BACKEND=gloo NPROC_PER_NODE=2 sbatch ... (what `make slurm-test` submits)",
             f"#SBATCH --job-name={spec['job_name']}",
             f"#SBATCH --nodes={nodes}",
             "#SBATCH --ntasks-per-node=1",
             f"#SBATCH --gpus-per-node={gpus_per_node}",
             f"#SBATCH --cpus-per-task={cpus_per_task}",
             "#SBATCH --exclusive",
             "#SBATCH --mem=0",
             f"#SBATCH --time={time_limit}",
             "#SBATCH --output=%x_%j.out",
             "# --exclusive --mem=0: whole nodes (all CPUs, memory and NICs), so no neighbour job's traffic",
             "#   is measured too; on a shared cluster `sbatch --oversubscribe ...` overrides it (options on",
             "#   the command line win over #SBATCH lines).",
             "# --output is relative to the submit directory, which exists when Slurm opens the log (a",
             "#   folder that this script would create does not exist yet at that moment).",
             "set -euo pipefail",
             ': "${SLURM_JOB_ID:?submit this script with sbatch: it reads the allocation from SLURM_* variables}"',
             "",
             'cd "${SLURM_SUBMIT_DIR:-.}"',
             'if [ ! -d labutil ]; then echo "submit from the repository root (there is no ./labutil in $PWD)" >&2; exit 2; fi',
             "# the course's virtual environment when there is one (an absolute path: every node runs it)",
             'if [ -z "${PYTHON:-}" ]; then',
             '  if [ -x .venv/bin/python ]; then PYTHON=$PWD/.venv/bin/python; else PYTHON=python; fi',
             "fi",
             'export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"',
             'BACKEND=${BACKEND:-nccl}',
             "# one rank per GPU of the node (SLURM_GPUS_ON_NODE: what --gpus-per-node or --gres gave it)",
             'NPROC_PER_NODE=${NPROC_PER_NODE:-${SLURM_GPUS_ON_NODE:-' + str(gpus_per_node) + '}}',
             'RUNS_DIR=${RUNS_DIR:-labs/_runs}',
             "TIMEOUT_S=${TIMEOUT_S:-300}"]
    for k, v in spec["defaults"].items():
        if k in spec.get("gpu_sized", ()):
            lines += _MAXBYTES_FROM_GPU
        else:
            lines.append(f"{k}=${{{k}:-{v}}}")
    lines += ['read -r -a BENCH_ARGS_ARRAY <<< "${BENCH_ARGS:-}"',
              f'OUT="{spec["out"]}"',
              "# The first host of the allocation (where this script runs) hosts the rendezvous. Not",
              "# `| head -n 1`: under pipefail, scontrol dies of SIGPIPE on a long node list and ends the job.",
              'MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 1p)',
              "# per job, below the ephemeral port range (32768+): jobs sharing a first node do not collide",
              f"MASTER_PORT=${{MASTER_PORT:-$(({spec['port']} + SLURM_JOB_ID % 1000))}}",
              'mkdir -p "$RUNS_DIR"',
              "",
              "# NCCL system configuration for your fabric (NCCL docs, \"Environment Variables\"). Uncomment and",
              "# adapt when NCCL_DEBUG=INFO shows the wrong interface or HCAs (`ip -br addr`, `ibv_devinfo`):",
              "# export NCCL_SOCKET_IFNAME=ib0       # bootstrap/socket interface: prefix list, =ib0 exact, ^docker,lo exclude",
              "# export NCCL_IB_HCA=mlx5_0,mlx5_1    # the RDMA NICs NCCL may use (prefix list, =mlx5_0 exact)",
              # NCCL_IB_GID_INDEX defaults to -1 = pick the RoCE v2 GID by itself (NCCL source net_ib/connect.cc
              # NCCL_PARAM(IbGidIndex, "IB_GID_INDEX", -1); Juniper JVD AI-DC appendix: "Starting with NCCL 2.21, the
              # GID index no longer needs to be specified manually"); older NCCL needs it on RoCE
              "# export NCCL_IB_GID_INDEX=3          # RoCE, NCCL < 2.21 only: the RoCE v2 GID (show_gids, ch11); newer NCCL picks it",
              "# export GLOO_SOCKET_IFNAME=ib0       # CPU path (gloo) across nodes: the interface the nodes reach each other on",
              "# Debugging variables (NCCL_DEBUG=INFO, NCCL_P2P_DISABLE, NCCL_ALGO) only for a diagnosis run.",
              "export NCCL_DEBUG=${NCCL_DEBUG:-WARN}",
              "# A stuck rank ends the job instead of holding the nodes until --time: TIMEOUT_S is the",
              "# process-group timeout, after which NCCL's watchdog tears the process down (PyTorch",
              "# \"ProcessGroupNCCL Environment Variables\"; 1 is what torchrun sets for its workers), torchrun",
              "# stops the node's other ranks and srun --kill-on-bad-exit=1 the other nodes. Not",
              "# TORCH_NCCL_BLOCKING_WAIT=1: it makes the CPU wait for every collective and changes the timings.",
              "export TORCH_NCCL_ASYNC_ERROR_HANDLING=${TORCH_NCCL_ASYNC_ERROR_HANDLING:-1}",
              "",
              "# Every flag, the result folder and whether the sizes fit in this node's memory for",
              "# NPROC_PER_NODE ranks are checked once, here, before any rank starts: a bad flag ends the",
              "# job with one line and exit status 2.",
              " \\\n  ".join(_chunks([_shell_word(a) for a in check])),
              "",
              "# srun does NOT inherit --cpus-per-task from sbatch since Slurm 22.05: pass it again.",
              " \\\n  ".join(_chunks([_shell_word(a) for a in srun])),
              'echo "result: $OUT"',
              ""]
    return "\n".join(lines)


def _chunks(words: list[str], width: int = 96) -> list[str]:
    out, cur = [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > width:
            out.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    out.append(cur)
    return out


def write_sbatch_templates(directory) -> list[Path]:
    """Write every template to ``directory/<name>.sbatch`` (executable); returns the paths."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in SBATCH_TEMPLATES:
        p = d / f"{name}.sbatch"
        p.write_text(render_sbatch(name), encoding="utf-8")
        p.chmod(0o755)
        paths.append(p)
    return paths


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


def precheck(module: str, module_args: list[str], nproc: int | None = None) -> None:
    """Validate a harness's flags in this process (its ``parse_args``); raises UsageError (one line).

    ``nproc``: the ranks torchrun will start on this host, for the harnesses whose memory check
    counts them (their ``parse_args`` takes ``local_ranks``)."""
    import importlib
    import inspect

    if not module.startswith("labutil.bench."):
        return
    mod = importlib.import_module(module)
    parse = getattr(mod, "parse_args", None)
    if parse is None:
        return
    if nproc is not None and "local_ranks" in inspect.signature(parse).parameters:
        parse(list(module_args), local_ranks=nproc)
    else:
        parse(list(module_args))


def run_module(module: str, module_args: list[str], *, nproc: int = 2, out=None, timeout_s: float = 180.0,
               env_extra: dict | None = None) -> RunResult:
    """torchrun ``module`` on ``nproc`` local ranks (gloo-ready env), writing ``--out out``.

    The flags are checked here first, in this process (the module's ``parse_args``): a bad flag
    raises :class:`labutil.bench.cli.UsageError` with one line and torchrun is never started.
    """
    args = list(module_args)
    if out is not None:
        out = Path(out)
        args += ["--out", str(out)]
    precheck(module, args, nproc=nproc)
    env = cpu_env()
    for k, v in (env_extra or {}).items():
        env[str(k)] = str(v)
    # The rendezvous port is picked free just before torchrun binds it; on a busy machine another
    # process can take it in between (torchrun then fails with RendezvousConnectionError before
    # any rank runs). That start-up race is retried on a fresh port; any other failure is returned.
    for attempt in range(RENDEZVOUS_RETRIES + 1):
        res = run(torchrun_args(module, args, nproc_per_node=nproc), timeout_s=timeout_s, env=env, cwd=REPO_ROOT)
        if res.returncode == 0 or res.timed_out or not _rendezvous_race(res.stderr):
            break
    res.out = out
    return res


RENDEZVOUS_RETRIES = 2


def _rendezvous_race(stderr: str) -> bool:
    """True when torchrun failed to set up its c10d store (port taken / store not reachable)."""
    return ("RendezvousConnectionError" in stderr or "EADDRINUSE" in stderr
            or "address already in use" in stderr.lower())


def run_python_module(module: str, module_args: list[str], *, out=None, timeout_s: float = 180.0) -> RunResult:
    """``python -m module`` (single process, e.g. gemm/membw/storage_io) with ``--out out``."""
    args = [sys.executable, "-m", module, *module_args]
    if out is not None:
        out = Path(out)
        args += ["--out", str(out)]
    precheck(module, args[3:])
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


class _OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are ONE line (``prog: error: ...``, exit status 2), without the usage block."""

    def error(self, message):  # noqa: D401 - argparse hook
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def main(argv=None) -> int:
    """``python -m labutil.machine.launch --write-sbatch DIR`` or ``--submit NAME --nodes N --gpus-per-node G``."""
    ap = _OneLineParser(prog="python -m labutil.machine.launch")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write-sbatch", metavar="DIR", help="write labs/slurm/*.sbatch from SBATCH_TEMPLATES")
    g.add_argument("--submit", metavar="NAME", choices=sorted(SBATCH_TEMPLATES), help="sbatch a template")
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--cpus-per-task", type=int, default=None, help="CPU cores per node's task (default: the script's 32)")
    ap.add_argument("--partition", default=None, help="Slurm partition (most clusters require one)")
    ap.add_argument("--time", default="00:30:00", help="time limit, HH:MM:SS or D-HH:MM:SS")
    ap.add_argument("--print-only", action="store_true", help="print the sbatch command instead of running it")
    a = ap.parse_args(argv)
    prog = ap.prog
    if a.write_sbatch:
        try:
            for p in write_sbatch_templates(a.write_sbatch):
                print(p)
        except OSError as exc:
            print(f"{prog}: error: cannot write the templates to {a.write_sbatch!r}: {exc.strerror or exc}",
                  file=sys.stderr)
            return 2
        return 0
    try:
        cmd = submit_args(a.submit, nodes=a.nodes, gpus_per_node=a.gpus_per_node, cpus_per_task=a.cpus_per_task,
                          partition=a.partition, time_limit=a.time)
    except (ValueError, KeyError) as exc:
        ap.error(exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc))
    except OSError as exc:  # labs/_runs cannot be created
        print(f"{prog}: error: cannot create the job log folder: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(" ".join(cmd), flush=True)
    if a.print_only:
        return 0
    try:
        return subprocess.call(cmd, cwd=REPO_ROOT)
    except FileNotFoundError:
        print(f"{prog}: error: 'sbatch' was not found on PATH: submit from a Slurm login node "
              "(or print the command with --print-only)", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{prog}: error: could not run sbatch: {exc.strerror or exc}", file=sys.stderr)
        return 2


def runs_dir() -> Path:
    """``labs/_runs`` (git-ignored): where the lab notebooks put their result files."""
    d = REPO_ROOT / "labs" / "_runs"
    d.mkdir(parents=True, exist_ok=True)
    return d


if __name__ == "__main__":
    sys.exit(main())
