"""The lab runner: orchestration used by the lab notebooks (labs/lab0N_*.py), so their cells stay thin.

Each helper launches a harness in a subprocess (argument list, free port, timeout) on the GPUs
when there are any, else on the clearly labelled CPU path (2 gloo ranks), and returns the loaded
JSON record. Results go to ``labs/_runs/`` (git-ignored).
"""

from __future__ import annotations

import sys

from .. import validate
from ..bench.common import torch_is_cpu_only_build
from . import doctor, launch
from .expect import expected_busbw_gbs
from .expect import machine_profile as profile_from_facts

__all__ = ["NCCL_ENV_EXPERIMENTS", "gpu_count", "lab_ranks", "backend", "SWEEPS", "sweep_command", "run_collectives",
           "PROTO_WARNING", "run_env_experiments", "run_single", "run_singles", "LAB04_GEMM_ITERS", "LAB04_COPY_ITERS",
           "lab04_jobs", "sequence_main", "run_ddp", "run_ddp_scaling", "doctor_json", "result_path", "machine_profile",
           "expectation"]

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
    """CUDA GPUs visible to torch in *this* process (0 without torch or without a CUDA build).

    A CPU-only torch build is recognised without importing torch (:func:`labutil.bench.common.torch_is_cpu_only_build`),
    so a lab kernel on the CPU path does not pay the ~1.5 s import just to learn it has no GPU."""
    if torch_is_cpu_only_build():
        return 0
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


#: the sweeps of lab02/lab03 per path: (minbytes, maxbytes, stepfactor). GPU: the nccl-tests README's
#: ``-b 8 ... -f 2`` up to 1 GiB (28 sizes, 1 GiB is the last row: with -f 4 from 8 B the sweep would stop at
#: 512 MiB); CPU: 1 KiB..16 MiB x4 (8 sizes, seconds on a shared 2-core machine).
SWEEPS = {"gpu": ("8", "1G", 2), "cpu": ("1K", "16M", 4)}


def sweep_command(op: str = "all_reduce", nproc: int | None = None, env: dict | None = None) -> str:
    """The shell command a learner would type for this machine's lab02/lab03 sweep (what
    :func:`run_collectives` runs, with torchrun's short form)."""
    gpu = backend() == "nccl"
    b, e, f = SWEEPS["gpu" if gpu else "cpu"]
    pre = " ".join(f"{k}={v}" for k, v in (env or {}).items())
    return ((pre + " " if pre else "") + f"torchrun --standalone --nproc-per-node={nproc or lab_ranks()} -m "
            f"labutil.bench.collectives --op {op} -b {b} -e {e} -f {f} -n 20 -w 3 --backend {'nccl' if gpu else 'gloo'}")


def run_collectives(op: str = "all_reduce", *, minbytes: str | None = None, maxbytes: str | None = None,
                    stepfactor: int | None = None, iters: int | None = None, warmup: int = 3, nproc: int | None = None,
                    env: dict | None = None, tag: str = "", timeout_s: float = 300.0, name: str | None = None) -> dict:
    """One nccl-tests-style sweep (:data:`SWEEPS`): GPU 8 B..1 GiB x2, CPU 1 KiB..16 MiB x4 (seconds).

    ``-n 20`` on both paths. On the CPU path (gloo) the harness times each of the 20 calls alone
    and keeps the median (``labutil.bench.collectives``), so one preempted call cannot move a row;
    with the mean of 5 calls the lab saw one 1 KiB row at 752 µs out-of-place and 3,064 µs in-place.
    The CPU sweep goes up to 16 MiB so that the largest sizes are dominated by transfer time,
    not by the scheduling noise of a shared machine (the α-β fit needs times that grow with S).
    """
    gpu = backend() == "nccl"
    nproc = nproc or lab_ranks()
    b0, e0, f0 = SWEEPS["gpu" if gpu else "cpu"]
    minbytes, maxbytes, stepfactor = minbytes or b0, maxbytes or e0, stepfactor or f0
    iters = iters or 20
    out = launch.runs_dir() / (f"{name}.json" if name else f"collectives_{op}_{nproc}r{('_' + tag) if tag else ''}.json")
    res = launch.run_module("labutil.bench.collectives",
                            ["--op", op, "-b", minbytes, "-e", maxbytes, "-f", str(stepfactor), "-n", str(iters),
                             "-w", str(warmup), "--backend", "nccl" if gpu else "gloo", "--timeout-s", "120"],
                            nproc=nproc, out=out, timeout_s=timeout_s, env_extra=env)
    data = res.json
    data["stdout"] = res.stdout
    return data


# NCCL User Guide, Environment Variables, NCCL_PROTO: users are discouraged from setting it except
# to disable a protocol when an NCCL bug is suspected; "in particular, enabling LL128 on platforms
# that don't support it can lead to data corruption" (NCCL 2.18.1 release notes list such a case on
# HGX H100 with the Tree algorithm). lab03 prints this before any run that sets NCCL_PROTO.
PROTO_WARNING = ("WARNING (NCCL docs, NCCL_PROTO): forcing a protocol is for diagnosis only. Enabling LL128 on a "
                 "platform that does not support it can lead to DATA CORRUPTION; NCCL enables LL128 by itself only "
                 "where it is known to be safe. The #wrong column of every run below is the check.")


def run_env_experiments(names=None, **kwargs) -> dict:
    """lab03 on GPUs: the same all_reduce sweep under each NCCL environment setting.

    Prints :data:`PROTO_WARNING` once before the first run that forces ``NCCL_PROTO``.
    """
    names = list(names or NCCL_ENV_EXPERIMENTS)
    for n in names:
        if n not in NCCL_ENV_EXPERIMENTS:
            raise validate.unknown_name("NCCL experiment", n, NCCL_ENV_EXPERIMENTS)
    if any("NCCL_PROTO" in NCCL_ENV_EXPERIMENTS[n] for n in names):
        print(PROTO_WARNING)
    out = {}
    for n in names:
        tag = n.replace("=", "_").replace("+", "_")
        out[n] = run_collectives(env=NCCL_ENV_EXPERIMENTS[n], name=f"lab03_{tag}", **kwargs)
    return out


def run_single(module: str, args: list[str], name: str, timeout_s: float = 180.0) -> dict:
    """``python -m module args --out labs/_runs/<name>.json`` (gemm, membw, storage_io)."""
    res = launch.run_python_module(module, args, out=launch.runs_dir() / f"{name}.json", timeout_s=timeout_s)
    data = res.json
    data["stdout"] = res.stdout
    return data


#: timed steps per DDP measurement on either path (lab06: fewer steps on a shared CPU made E(2)
#: range from 24 % to 108 % between runs)
DDP_STEPS = 30
#: alternating (1 rank, N ranks) repetitions per lab06 run: CPU path in one launch, GPU path one launch each
DDP_REPEATS = {"cpu": 5, "gpu": 3}


def _ddp_args(gpu: bool, steps: int | None, model: dict) -> list[str]:
    args = ["--backend", "nccl" if gpu else "gloo", "--steps", str(steps or DDP_STEPS),
            "--warmup-steps", "5" if not gpu else "10"]
    for k, v in model.items():
        args += [f"--{k.replace('_', '-')}", str(v)]
    return args


_SEQ_SEP = "::"
_SEQ_MARK = "#### labutil.machine.run sequence:"


def run_singles(jobs, *, one_process: bool | None = None, timeout_s: float = 240.0) -> list[dict]:
    """Several single-process harnesses, each ``(module, args, name)`` as for :func:`run_single`;
    returns their results (with ``stdout``) in order.

    GPU path: one ``python -m module`` per job, as :func:`run_single`. CPU path (``one_process``
    default): all jobs run one after another in ONE interpreter
    (``python -m labutil.machine.run MODULE ARGS... :: MODULE ARGS...``), which imports torch once
    instead of once per job (~1.5 s of CPU each on the 2-core CI machine); each harness's own
    ``main`` runs with the same flags and writes the same result file.
    """
    jobs = [(str(m), [str(x) for x in a], str(n)) for m, a, n in jobs]
    if not jobs:
        raise ValueError("jobs must hold at least one (module, args, name)")
    for module, args, _ in jobs:
        if not module.startswith("labutil.bench.") or _SEQ_SEP in args:
            raise ValueError(f"jobs must run labutil.bench harnesses with no {_SEQ_SEP!r} argument; got {module!r} {args!r}")
    one_process = (backend() != "nccl") if one_process is None else bool(one_process)
    if not one_process:
        return [run_single(m, a, n, timeout_s=timeout_s) for m, a, n in jobs]
    argv, outs = [], []
    for module, args, name in jobs:
        out = launch.runs_dir() / f"{name}.json"
        full = [*args, "--out", str(out)]
        launch.precheck(module, full)  # a bad flag: one line here, nothing started
        argv += ([_SEQ_SEP] if argv else []) + [module, *full]
        outs.append(out)
    res = launch.run([sys.executable, "-m", "labutil.machine.run", *argv], timeout_s=timeout_s, env=launch.cpu_env(),
                     cwd=launch.REPO_ROOT)
    parts = _split_sequence_stdout(res.stdout)
    results = []
    for (module, _, _), out in zip(jobs, outs):
        if module not in parts or parts[module][1] != 0 or not res.ok:
            why = f"timed out after {res.elapsed_s:.0f} s" if res.timed_out else f"exit code {res.returncode}"
            tail = "\n".join((res.stdout + "\n" + res.stderr).strip().splitlines()[-15:])
            raise RuntimeError(f"benchmark {module} failed ({why}); last output lines:\n{tail}")
        data = launch.load_json(out)
        data["stdout"] = parts[module][0]
        results.append(data)
    return results


def _split_sequence_stdout(text: str) -> dict:
    """{module: (its stdout, exit status)} from the marker lines of :func:`sequence_main`."""
    out, cur, buf = {}, None, []
    for line in text.splitlines(keepends=True):
        if line.startswith(_SEQ_MARK):
            words = line[len(_SEQ_MARK):].split()
            if len(words) == 2 and words[0] == "begin":
                cur, buf = words[1], []
            elif len(words) == 4 and words[0] == "end" and words[1] == cur and words[2] == "exit":
                out[cur] = ("".join(buf), int(words[3]) if words[3].lstrip("-").isdigit() else 1)
                cur = None
            continue
        if cur is not None:
            buf.append(line)
    return out


def sequence_main(argv=None) -> int:
    """``python -m labutil.machine.run MODULE ARGS... [:: MODULE ARGS...]``: each harness's ``main(ARGS)``
    in turn, in this one process, between marker lines; stops at the first non-zero exit."""
    import importlib

    argv = list(sys.argv[1:] if argv is None else argv)
    groups, cur = [], []
    for a in argv:
        if a == _SEQ_SEP:
            groups.append(cur)
            cur = []
        else:
            cur.append(a)
    groups.append(cur)
    if not all(groups) or not all(g[0].startswith("labutil.bench.") for g in groups):
        print(f"labutil.machine.run: error: usage: python -m labutil.machine.run MODULE ARGS... [{_SEQ_SEP} MODULE ARGS...] "
              f"(MODULE a labutil.bench harness); got {argv!r}", file=sys.stderr)
        return 2
    for module, *args in groups:
        main = getattr(importlib.import_module(module), "main", None)
        if main is None:
            print(f"labutil.machine.run: error: {module} has no main()", file=sys.stderr)
            return 2
        print(f"{_SEQ_MARK} begin {module}", flush=True)
        rc = main(args)
        sys.stdout.flush()
        print(f"{_SEQ_MARK} end {module} exit {int(rc or 0)}", flush=True)
        if rc:
            return int(rc)
    return 0


def run_ddp(nproc: int, *, steps: int | None = None, timeout_s: float = 240.0, name: str | None = None,
            **model) -> dict:
    """One DDP run on ``nproc`` ranks; the model is the path's default (GPU: 134 M params bf16,
    CPU: 263 k fp32; labutil.bench.ddp) unless ``hidden=/layers=/batch=/dtype=`` override it."""
    gpu = backend() == "nccl"
    out = launch.runs_dir() / (f"{name}.json" if name else f"ddp_{nproc}r.json")
    return launch.run_module("labutil.bench.ddp", _ddp_args(gpu, steps, model), nproc=nproc, out=out,
                             timeout_s=timeout_s).json


def run_ddp_scaling(ranks, *, name: str = "ddp", one_launch: bool | None = None, steps: int | None = None,
                    repeats: int | None = None, timeout_s: float = 300.0, **model) -> list[dict]:
    """DDP runs at every rank count in ``ranks`` (which must include 1), saved as
    ``labs/_runs/<name>_<N>r.json``; returns them in the order of ``ranks``.

    Every run times :data:`DDP_STEPS` steps, and the 1-rank and N-rank measurements ALTERNATE
    ``repeats`` times (default :data:`DDP_REPEATS`), so that a shared machine's drift hits both.
    Each N-rank record keeps every repetition in ``repeats`` (with its E(N)) and its own numbers are
    those of the repetition whose E(N) is the median; ``efficiency_spread`` summarises them
    (:func:`labutil.bench.analysis.efficiency_spread`: min/median/max and whether the spread allows a
    conclusion). The 1-rank file is the baseline of the median repetition of the smallest N.

    CPU path (``one_launch`` default): ONE torchrun launch of 2 ranks with
    ``--single-rank-baseline --repeats R`` — rank 0 trains alone over a 1-rank group while the other
    waits, then both train, R times — which saves R−1 launches of ~4.5 s of CPU each (launcher
    and ranks import torch) on the 2-core CI machine. GPU path: one launch per rank count per
    repetition, in the order 1, 2, (4), 1, 2, (4), ...
    """
    from ..bench import analysis
    from ..bench.ddp import median_pair
    from ..fileio import write_json_atomic

    ranks = [validate.integer("ranks", r, lo=1, hi=64) for r in ranks]
    if 1 not in ranks or len(set(ranks)) != len(ranks):
        raise ValueError(f"ranks must be distinct rank counts including 1 (the efficiency baseline); got {ranks!r}")
    gpu = backend() == "nccl"
    repeats = validate.integer("repeats", DDP_REPEATS["gpu" if gpu else "cpu"] if repeats is None else repeats,
                               lo=1, hi=50)
    one_launch = (not gpu) if one_launch is None else bool(one_launch)
    multi = sorted(r for r in ranks if r > 1)
    results: dict[int, dict] = {}
    if one_launch and multi:
        first = multi[0]
        out = launch.runs_dir() / f"{name}_{first}r.json"
        args = _ddp_args(gpu, steps, model) + ["--single-rank-baseline", "--repeats", str(repeats)]
        res = launch.run_module("labutil.bench.ddp", args, nproc=first, out=out, timeout_s=timeout_s).json
        results[first], results[1] = res, res["baseline_1rank"]
        if "repeats" not in res:  # one repetition: the pair itself
            res["repeats"] = median_pair([(res["baseline_1rank"], res)])[1]
    todo = [n for n in ranks if n not in results]
    if todo:
        runs = {n: [] for n in todo}
        for k in range(repeats):
            for n in todo:
                runs[n].append(run_ddp(n, steps=steps, timeout_s=timeout_s, name=f"{name}_{n}r", **model))
        if 1 in runs:
            for n in (m for m in todo if m > 1):
                chosen, rows = median_pair(list(zip(runs[1], runs[n])))
                results[n] = dict(runs[n][chosen], repeats=rows, repeat_chosen=chosen)
                if n == min(m for m in todo if m > 1):
                    results[1] = runs[1][chosen]
            results.setdefault(1, runs[1][0])
        else:
            for n in todo:
                results[n] = runs[n][0]
    for n, r in results.items():
        if n > 1 and r.get("repeats"):
            r["efficiency_spread"] = analysis.efficiency_spread([100.0 * x["efficiency"] for x in r["repeats"]])
        write_json_atomic(launch.runs_dir() / f"{name}_{n}r.json", r)
    return [results[n] for n in ranks]


def doctor_json(timeout_s: float = 120.0, save_as: str | None = "lab01_doctor") -> dict:
    """``python -m labutil doctor --json``, loaded (and saved to ``labs/_runs/<save_as>.json``)."""
    import json

    res = launch.run([sys.executable, "-m", "labutil", "doctor", "--json"], timeout_s=timeout_s,
                     env=launch.cpu_env(), cwd=launch.REPO_ROOT)
    if not res.ok:
        raise RuntimeError(f"labutil doctor failed (exit {res.returncode}): {res.stderr[-1000:]}")
    try:
        data = json.loads(res.stdout)
    except json.JSONDecodeError as exc:
        raise ValueError(f"labutil doctor --json printed invalid JSON: {exc}") from None
    if save_as:
        from ..fileio import write_json_atomic

        write_json_atomic(launch.runs_dir() / f"{save_as}.json", data)
    return data


# ------------------------------------------------------------------------------------------- lab01
# What `labutil doctor` prints on two reference machines, produced by doctor itself from format-true
# inputs (so the example cannot drift from the real report). Values are ILLUSTRATIVE, with their basis:
# - DGX H100: 8x "NVIDIA H100 80GB HBM3" (81559 MiB, the name and size nvidia-smi reports for H100 SXM5),
#   the course's `nvidia-smi topo -m` sample of a DGX-H100-class node (labutil.parsers.samples), 8 ConnectX-7
#   ports Active at 400 Gb/s (the healthy port of the course's ibstat sample, repeated), 112 physical cores as 224
#   logical CPUs and 2 TB RAM (NVIDIA DGX H100 datasheet: 2x Xeon Platinum 8480C, 112 cores; 2 TB system memory), driver
#   580.65.06 (NVIDIA CUDA 13.0 GA minimum driver, Table 3) and torch 2.14.1+cu130, whose PyPI wheel depends on
#   nvidia-nccl-cu13 2.30.7 (pip resolution; torch.cuda.nccl.version() returns (2, 30, 7) even without a GPU).
# - CPU box: a 2-core VM with 25.3 GB of RAM and the CPU-only torch 2.13.0 the course's CI installs.
_EXAMPLE_MACHINES = ("cpu", "dgx-h100")


def example_doctor_report(machine: str) -> str:
    """``labutil doctor``'s text report on an illustrative ``machine`` ('cpu' or 'dgx-h100'), rendered by
    doctor from format-true tool outputs (see the comment above for every value's basis)."""
    import tempfile
    from pathlib import Path

    from ..parsers import samples

    validate.choice("machine", machine, _EXAMPLE_MACHINES)
    dgx = machine == "dgx-h100"
    ib_block = samples.sample("ibstat_ndr").split("CA 'mlx5_1'")[0]  # the healthy 400 Gb/s port

    def runner(args, timeout_s=None):
        if args[:2] == ["nvidia-smi", "--query-gpu=index,name,memory.total,driver_version,pci.bus_id"]:
            rows = ["index, name, memory.total [MiB], driver_version, pci.bus_id"]
            bus = ("18", "2A", "3A", "5D", "9A", "AB", "BA", "DB")  # the bus ids of the course's nvidia-smi sample
            rows += [f"{i}, NVIDIA H100 80GB HBM3, 81559 MiB, 580.65.06, 00000000:{b}:00.0" for i, b in enumerate(bus)]
            return 0, "\n".join(rows)
        if args == ["nvidia-smi"]:
            return 0, "| NVIDIA-SMI 580.65.06   Driver Version: 580.65.06   CUDA Version: 13.0 |"
        if args[:2] == ["nvidia-smi", "--query-gpu=index,pcie.link.gen.max,pcie.link.width.max"]:
            return 0, "index, pcie.link.gen.max, pcie.link.width.max\n" + "\n".join(f"{i}, 5, 16" for i in range(8))
        if args[:2] == ["nvidia-smi", "--query-gpu=index,compute_cap"]:
            return 0, "index, compute_cap\n" + "\n".join(f"{i}, 9.0" for i in range(8))
        if args == ["nvidia-smi", "topo", "-m"]:
            return 0, samples.sample("nvidia_smi_topo_dgx_h100")
        if args == ["ibstat"]:
            return 0, "".join(ib_block.replace("mlx5_0", f"mlx5_{k}") for k in range(8))
        return 127, f"{args[0]}: not found"

    if dgx:
        tinfo = {"installed": True, "version": "2.14.1+cu130", "cuda_build": "13.0", "cuda_available": True,
                 "device_count": 8, "nccl_version": "2.30.7", "devices": ["NVIDIA H100 80GB HBM3"] * 8}
    else:
        tinfo = _cpu_build_torch_info()
        tinfo["version"] = "2.13.0+cpu"
    with tempfile.TemporaryDirectory(prefix="labutil-example-") as tmp:
        ib = Path(tmp) / "ib"
        ib.mkdir()
        for k in range(8 if dgx else 0):
            (ib / f"mlx5_{k}").mkdir()
        mem = Path(tmp) / "meminfo"
        mem_kb = 2113929216 if dgx else 24707584
        mem.write_text(f"MemTotal:       {mem_kb} kB\n", encoding="ascii")
        facts = doctor.collect(runner=runner, which=(lambda name: f"/usr/bin/{name}") if dgx else (lambda name: None),
                               sysfs_ib=ib, shm_path=tmp, meminfo=mem, torch_info=lambda: tinfo)
    facts.update(host="dgx-h100-01" if dgx else "cpu-box", os="Linux (illustrative)", python="3.11",
                 cpu_cores=224 if dgx else 2, cpu_physical_cores=112 if dgx else 2,
                 shm_bytes=mem_kb * 1024 // 2, nccl_env={})  # tmpfs default: half the RAM
    return doctor.render(facts, doctor.findings(facts))


# ------------------------------------------------------------------------------------------- lab04
#: lab04's GEMM timing per path. GPU: 50 untimed warm-up and 100 timed multiplications per size, the
#: method of the published MAMF table lab04 compares with (stas00/ml-engineering, compute/accelerator
#: README: "a mean of 100 iterations after 50 warmup iterations for each shape"), long enough for the
#: clocks to settle under the power limit (a 5-call burst of 8192^3 on an H100 lasts ~7 ms); CPU: 5 calls
#: per size (the median; the host BLAS needs seconds, not minutes).
LAB04_GEMM_ITERS = {"gpu": (50, 100), "cpu": (3, 5)}
#: lab04's copy timing per path: (warm-up, timed copies)
LAB04_COPY_ITERS = {"gpu": (5, 20), "cpu": (3, 9)}


def lab04_jobs(dtype: str = "bf16") -> list[tuple[str, list[str], str]]:
    """lab04's two measurements for :func:`run_singles`: GEMM (``labs/_runs/lab04_gemm.json``) and copy
    bandwidth (``lab04_membw.json``), with the warm-up and iteration counts of this path."""
    path = "gpu" if gpu_count() else "cpu"
    gw, gi = LAB04_GEMM_ITERS[path]
    cw, ci = LAB04_COPY_ITERS[path]
    return [("labutil.bench.gemm", ["--dtype", str(dtype), "--warmup", str(gw), "--iters", str(gi)], "lab04_gemm"),
            ("labutil.bench.membw", ["--warmup", str(cw), "--iters", str(ci)], "lab04_membw")]


# ------------------------------------------------------------------------------------------- lab05
def storage_args(test_dir=None, size: str = "64M", ckpt_params: str = "8M", block: str = "4M",
                 direct: bool = False) -> list[str]:
    """lab05's ``labutil.bench.storage_io`` flags: ``--dir TEST_DIR`` (None: a temp folder), ``--size SIZE``,
    ``--direct`` (O_DIRECT, falling back to buffered I/O where the file system refuses it)."""
    args = ["--size", str(size), "--block", str(block), "--ckpt-params", str(ckpt_params), "--no-progress"]
    if direct:
        args.append("--direct")
    if test_dir is not None:
        args = ["--dir", str(test_dir)] + args
    return args


def run_storage(test_dir=None, size: str = "64M", ckpt_params: str = "8M", name: str = "lab05_storage_io",
                direct: bool = False) -> dict:
    """lab05: storage_io on ``test_dir`` with a ``size`` file; the timeout grows with the size (50 MB/s floor)."""
    from ..units import parse_size

    nbytes = parse_size(str(size))
    return run_single("labutil.bench.storage_io", storage_args(test_dir, size, ckpt_params, direct=direct), name,
                      timeout_s=180.0 + 3 * nbytes / 50e6)


def host_ram_bytes(meminfo: str = "/proc/meminfo") -> int | None:
    """MemTotal of this host in bytes (None when unknown)."""
    try:
        with open(meminfo, encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def page_cache_warning(io: dict, ram_bytes: int | None = None) -> str:
    """'' when the read test can be trusted (O_DIRECT, or a file larger than RAM with the cache dropped);
    else why not (file smaller than RAM, cache not dropped)."""
    import math

    ram = host_ram_bytes() if ram_bytes is None else ram_bytes
    seq = io.get("sequential") or {}
    size, dropped = seq.get("bytes"), seq.get("cache_dropped")
    if seq.get("direct"):  # O_DIRECT: neither read nor write went through this host's page cache
        return ""
    notes = []
    if dropped is False:
        notes.append("the page cache could NOT be dropped before the read (posix_fadvise failed): the read "
                     "bandwidth may be memory speed")
    if ram and size and size < ram:
        notes.append(f"the test file ({size / 1e9:.2f} GB) is smaller than this host's RAM ({ram / 1e9:.1f} GB): "
                     + ("the cache was dropped (cache_dropped True), which works on local file systems, but a network "
                        "file system's client or server cache can still serve the read" if dropped else
                        "all of it can sit in the page cache")
                     + (f"; for a read number you can trust, set DIRECT = True (O_DIRECT)"
                        + (f" or SIZE above RAM (e.g. {math.ceil(1.1 * ram / 2**30)}G)" if 1.1 * ram < 2**40 else "")
                        + (f" ({seq['direct_error']})" if seq.get("direct_error") else "")))
    return ("WARNING: " + "; ".join(notes) + ".") if notes else ""


def result_path(name: str):
    """``labs/_runs/<name>.json``: where a lab keeps the result its self-graded questions read."""
    return launch.runs_dir() / f"{name}.json"


def machine_profile() -> dict:
    """This machine's lab case (cpu / single / pcie / nvlink) from ``labutil doctor`` (in-process)."""
    if torch_is_cpu_only_build():  # the profile needs only "no CUDA here": skip doctor's torch import
        return profile_from_facts(doctor.collect(torch_info=_cpu_build_torch_info))
    return profile_from_facts(doctor.collect())


def _cpu_build_torch_info() -> dict:
    """doctor's torch facts for a CPU-only torch build, known from torch/version.py alone."""
    return {"installed": True, "cuda_build": None, "cuda_available": False, "device_count": 0,
            "nccl_version": None, "nccl_note": "CPU-only torch build: no NCCL bundled", "devices": [],
            "source": "torch/version.py (CPU-only build; torch not imported)"}


def nccl_line(torch_facts: dict) -> str:
    """What lab01 prints about torch's NCCL: the bundled version (known without a GPU on a CUDA
    build: ``torch.cuda.nccl.version()``), or why there is none."""
    t = torch_facts or {}
    if not t.get("installed"):
        return "NCCL: unknown (torch is not installed)"
    if t.get("nccl_version"):
        return f"NCCL bundled with torch: {t['nccl_version']} (torch.cuda.nccl.version(); no GPU needed to read it)"
    if t.get("cuda_build") is None:
        return "NCCL bundled with torch: none — this is a CPU-only torch build (torch.version.cuda is None)"
    return f"NCCL bundled with torch: unknown ({t.get('nccl_note') or 'torch.cuda.nccl.version() gave nothing'})"


def expectation(result: dict, profile: dict | None = None) -> dict:
    """Measured large-message busbw of a collectives result next to the model's expectation here.

    Returns measured (peak out-of-place busbw), expected (None on the CPU path / one GPU, with
    ``why``), ratio, the case and its summary. The expectation is the course model's
    (:mod:`labutil.machine.expect`, :class:`labutil.cluster.Cluster`) for this topology and rank count.
    """
    prof = profile if profile is not None else machine_profile()
    measured = max(r["out_of_place"]["busbw_gbs"] for r in result["rows"] if r.get("out_of_place"))
    out = {"case": prof.get("case"), "summary": prof.get("summary"), "measured_gbs": measured,
           "expected_gbs": None, "ratio": None, "why": ""}
    if result.get("backend") != "nccl" or prof.get("case") not in ("pcie", "nvlink"):
        out["why"] = "CPU path (gloo over loopback): no GPU-fabric expectation applies"
        return out
    ranks = int(result["world_size"])
    n_nodes = max(1, ranks // max(1, prof["n_gpus"]))  # a multi-node run: the same node n_nodes times
    exp = expected_busbw_gbs(prof, result["op"], ranks=ranks, n_nodes=n_nodes)
    out.update(expected_gbs=exp, ratio=measured / exp if exp else None)
    return out


if __name__ == "__main__":
    sys.exit(sequence_main())
