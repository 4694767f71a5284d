"""What the harnesses share: device detection, the map from a CUDA device name to the hardware
catalog, the backend choice, the environment record stored with every result, a median timer and
the size-list parser.

Everything here is stdlib at import time; torch is imported only inside the functions that need
it (and not at all to learn that a CPU-only torch build has no GPU).
"""

from __future__ import annotations

import os
import platform
import re
import socket
import time

__all__ = ["CPU_BANNER", "catalog_gpu_name", "torch_is_cpu_only_build", "cuda_available", "resolve_backend",
           "environment", "median_call_s", "parse_sizes"]

CPU_BANNER = "CPU path (gloo), not NCCL: numbers are not GPU-fabric numbers"

# torch.cuda.get_device_name() strings -> catalog names (labutil/data/gpus.toml). Patterns are
# tried in order (most specific first). The device strings are what the CUDA driver reports,
# e.g. "NVIDIA H100 80GB HBM3" (SXM5) vs "NVIDIA H100 PCIe"; "NVIDIA H200"; "NVIDIA A100-SXM4-80GB".
_DEVICE_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"\bH100\b.*\b(PCIe|NVL)\b", "H100-PCIe"),
    (r"\bH100\b", "H100-SXM"),
    (r"\bH200\b", "H200-SXM"),
    (r"\bH800\b", "H800-SXM"),
    (r"\bA800\b", "A800-SXM"),
    (r"\bA100\b.*80\s*GB", "A100-80G-SXM"),
    (r"\bB200\b", "B200"),
    (r"\bL40S\b", "L40S"),
    (r"\bL4\b", "L4"),
    (r"\bMI300X\b", "MI300X"),
    (r"\b910B", "Ascend-910B"),
)


def catalog_gpu_name(device_name: str) -> str | None:
    """The catalog name for a device string from ``torch.cuda.get_device_name()``, or None.

    >>> catalog_gpu_name("NVIDIA H100 80GB HBM3")
    'H100-SXM'
    >>> catalog_gpu_name("NVIDIA H200")
    'H200-SXM'
    """
    if not isinstance(device_name, str):
        raise ValueError(f"device_name must be a string; got {device_name!r}")
    for pattern, name in _DEVICE_PATTERNS:
        if re.search(pattern, device_name, flags=re.IGNORECASE):
            return name
    return None


def _cpu_only_from_version_source(text: str) -> bool | None:
    """From the text of ``torch/version.py``: True when ``cuda`` and ``hip`` are both the literal
    None (a CPU-only build), False when either names a toolkit, None when the text does not say."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    found: dict[str, object] = {}
    for node in tree.body:
        target = value = None
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target, value = node.target.id, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        if target in ("cuda", "hip"):
            if not isinstance(value, ast.Constant):
                return None
            found[target] = value.value
    if set(found) != {"cuda", "hip"}:
        return None
    return found["cuda"] is None and found["hip"] is None


def torch_is_cpu_only_build() -> bool:
    """True when the installed torch is a CPU-only build (``torch.version.cuda`` and
    ``torch.version.hip`` both None), so ``torch.cuda.is_available()`` is False whatever the machine.

    Read from ``torch/version.py`` without importing torch: the import costs about 1.5 s of CPU
    (measured on the course's 2-core CI machine, torch 2.13 +cpu), which every lab kernel paid just
    to learn that there is no GPU. Uses the imported module when torch is already loaded. False when
    torch is absent or its version file cannot be read or does not say (callers then import torch).
    """
    import sys

    mod = sys.modules.get("torch")
    if mod is not None and getattr(mod, "version", None) is not None:
        return getattr(mod.version, "cuda", None) is None and getattr(mod.version, "hip", None) is None
    try:
        import importlib.util

        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return False
    for folder in (spec.submodule_search_locations or []) if spec else []:
        try:
            text = open(os.path.join(folder, "version.py"), encoding="utf-8").read()
        except OSError:
            continue
        return bool(_cpu_only_from_version_source(text))
    return False


def cuda_available() -> bool:
    if torch_is_cpu_only_build():  # no torch import needed to know the answer
        return False
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def resolve_backend(backend: str) -> str:
    """'auto' -> 'nccl' when CUDA GPUs are visible, else 'gloo'; 'nccl' without a GPU is an error."""
    from .. import validate

    validate.choice("backend", backend, ("auto", "nccl", "gloo"))
    if backend == "auto":
        return "nccl" if cuda_available() else "gloo"
    if backend == "nccl" and not cuda_available():
        raise ValueError("backend 'nccl' needs CUDA GPUs, but torch.cuda.is_available() is False; "
                         "use --backend gloo (the CPU path) or 'auto'")
    return backend


# The Slurm job facts stored with a result launched by labs/slurm/*.sbatch (srun/sbatch man page, OUTPUT
# ENVIRONMENT VARIABLES): SLURM_STEP_ID exists only inside an srun step; SLURM_CPUS_PER_TASK there is
# the step's own value (srun --cpus-per-task), which Slurm >= 22.05 no longer inherits from sbatch.
_SLURM_VARS = ("SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_JOB_NUM_NODES", "SLURM_JOB_NODELIST", "SLURM_CPUS_PER_TASK",
               "SLURM_NTASKS", "SLURM_GPUS_ON_NODE")


def environment(backend: str | None = None) -> dict:
    """torch / CUDA / NCCL versions and the local devices, stored with every result."""
    env = {"hostname": socket.gethostname(), "python": platform.python_version(),
           "platform": platform.platform(), "cpu_count": os.cpu_count(),
           "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    try:
        import torch
    except ImportError:
        env["torch"] = None
        return env
    env["torch"] = torch.__version__
    env["cuda"] = torch.version.cuda
    env["cuda_available"] = bool(torch.cuda.is_available())
    env["nccl"] = None
    env["devices"] = []
    if torch.cuda.is_available():
        try:
            v = torch.cuda.nccl.version()
            env["nccl"] = ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
        except Exception:  # noqa: BLE001 - a CUDA build without NCCL (e.g. ROCm/RCCL naming)
            env["nccl"] = None
        for i in range(torch.cuda.device_count()):
            name = torch.cuda.get_device_name(i)
            env["devices"].append({"index": i, "name": name, "catalog": catalog_gpu_name(name)})
    if backend is not None:
        env["backend"] = backend
    slurm = {k[6:].lower(): os.environ[k] for k in _SLURM_VARS if k in os.environ}
    if slurm:  # launched by srun inside a Slurm job (labs/slurm/*.sbatch)
        env["slurm"] = slurm
    return env


def median_call_s(fn, iters: int) -> float:
    """Median wall time of ``iters`` calls of ``fn`` (host timer, CPU paths).

    Each call is timed on its own and the median is kept: on a shared machine a few calls are
    preempted by other processes, and the median ignores them where a mean would not.
    """
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    mid = len(times) // 2
    return times[mid] if len(times) % 2 else 0.5 * (times[mid - 1] + times[mid])


def parse_sizes(text: str) -> list[int]:
    """Comma-separated sizes with binary suffixes ('256,1K,4M') as integers (units.parse_size)."""
    from ..units import parse_size

    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"sizes must be a comma-separated list like '1024,2048'; got {text!r}")
    out = [parse_size(part) for part in text.split(",") if part.strip()]
    if not out or min(out) <= 0:
        raise ValueError(f"sizes must all be > 0; got {text!r}")
    return out
