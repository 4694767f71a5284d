"""Containers for GPU clusters (ch20): a run-spec linter, the GPU Operator as data, image pull arithmetic.

1. Linter. :func:`lint_command` takes a docker / podman / nerdctl / enroot / apptainer / singularity /
   srun (Pyxis) command line as an ARGUMENT LIST (split it with ``shlex.split`` in the caller; nothing
   is ever executed) and :func:`lint_pod` a Kubernetes Pod / Job / Deployment spec dict. Both return a
   :class:`labutil.health.Report` of :class:`labutil.health.Finding` for the usual GPU-container
   mistakes. Checks (``CHECKS``) and their sources:

   - gpu_access: Docker needs ``--gpus`` (or ``--runtime=nvidia`` / a CDI ``--device nvidia.com/gpu=all``)
     so the NVIDIA Container Toolkit injects /dev/nvidia* and the driver libraries (NVIDIA Container
     Toolkit docs, "Running a Sample Workload"); Apptainer needs ``--nv`` / ``--nvccli`` (Apptainer user
     guide, "GPU Support"); a pod needs ``resources.limits["nvidia.com/gpu"]`` (Kubernetes "Schedule GPUs").
   - shm_size: Docker's default /dev/shm is 64 MB (Docker ``run`` reference, ``--shm-size``), too small
     for NCCL >= 2.7 ("Error while creating shared memory segment ... No space left on device":
     NVIDIA/nccl #342, #290); fix ``--shm-size`` or ``--ipc=host``. The need is estimated by
     :func:`nccl_shm_need_bytes`; 1 GiB is the course floor (NGC containers' own hint suggests
     ``--shm-size=1g`` or ``--ipc=host``; PyTorch DataLoader workers also use /dev/shm).
   - memlock: RDMA memory registration pins pages and is bounded by RLIMIT_MEMLOCK unless the process
     has CAP_IPC_LOCK (man 2 mlock / ibv_reg_mr); ``--ulimit memlock=-1`` or ``--cap-add IPC_LOCK``;
     in Kubernetes ``securityContext.capabilities.add: [IPC_LOCK]``.
   - rdma_devices: verbs need /dev/infiniband/uverbs* in the container (``--device=/dev/infiniband``;
     in Kubernetes an RDMA device-plugin resource such as ``rdma/rdma_shared_device_a``).
   - network: multi-node NCCL bootstrap and RoCE GIDs need a routable host interface: ``--network=host``
     (a Docker bridge address 172.17.x is NATed and unreachable from other nodes); in Kubernetes
     ``hostNetwork: true`` or a secondary RDMA network (Multus annotation ``k8s.v1.cni.cncf.io/networks``).
   - privileged: ``--privileged`` grants every device and capability; it satisfies rdma_devices and
     memlock but is flagged (warning) as unnecessary.
   - cuda_driver: the image's CUDA toolkit vs the host driver, NVIDIA CUDA release notes Tables 2/3 via
     :func:`labutil.inventory.cuda_driver_status` (data: ``labutil/data/cuda_compat.toml``).
   - image_uri: enroot/Pyxis image URIs separate the registry host with ``#``
     (``docker://nvcr.io#nvidia/pytorch:24.05-py3``; enroot docs ``usage.md``, Pyxis README).

2. GPU Operator components (``labutil/data/gpu_operator.toml``): :func:`operator_components`,
   :func:`startup_order` (Kahn topological sort), :func:`missing_impact` (what breaks without one).

3. Pull arithmetic: :func:`pull_time_s` (vectorised) for a central registry, a P2P distribution and an
   Enroot squashfs imported once onto a shared filesystem; :func:`enroot_import_plan`.

Parsers (never crash: :class:`ContainerParseError`): ``kubectl get pods -n gpu-operator``,
``kubectl describe node | grep nvidia.com/gpu``, ``docker inspect --format '{{json .Config.Env}}'``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

import numpy as np

from . import data_files, inventory, validate
from .health import Finding, Report
from .parsers import ParseError

__all__ = ["CHECKS", "RunSpec", "parse_command", "lint_command", "lint_pod", "nccl_shm_need_bytes",
           "DOCKER_DEFAULT_SHM_BYTES", "SHM_FLOOR_BYTES", "NCCL_BUFFSIZE_BYTES", "DEFAULT_CHANNELS",
           "image_cuda_version", "operator_components", "startup_order", "missing_impact",
           "PULL_METHODS", "pull_time_s", "registry_egress_gb", "enroot_import_plan",
           "ContainerParseError", "PodStatus", "parse_kubectl_pods", "operator_readiness",
           "NodeGpu", "parse_node_gpu", "parse_image_env", "SAMPLE_KUBECTL_PODS",
           "SAMPLE_DESCRIBE_NODE_GPU", "SAMPLE_DOCKER_INSPECT_ENV", "check_status"]

CHECKS = ("gpu_access", "shm_size", "memlock", "rdma_devices", "network", "privileged", "cuda_driver",
          "image_uri")

DOCKER_DEFAULT_SHM_BYTES = 64 * 2**20   # Docker run reference: --shm-size default 64MB (64 MiB tmpfs)
SHM_FLOOR_BYTES = 2**30                 # course floor 1 GiB (NGC hint --shm-size=1g; see module docstring)
NCCL_BUFFSIZE_BYTES = 4 * 2**20         # NCCL env docs: NCCL_BUFFSIZE default 4194304 (4 MiB)
DEFAULT_CHANNELS = 16                   # course assumption: a typical "coll channels" count of an
#                                         8-GPU NVLink node in NCCL_DEBUG=INFO logs; read yours there

_DOCKER_LIKE = ("docker", "podman", "nerdctl")
_APPTAINER = ("apptainer", "singularity")
# docker/podman run options that take a value (docker run --help); others are flags
_VALUE_OPTS = {
    "--gpus", "--runtime", "--shm-size", "--ipc", "--network", "--net", "--ulimit", "--device", "--cap-add",
    "--cap-drop", "-e", "--env", "-v", "--volume", "--mount", "--name", "-w", "--workdir", "-u", "--user", "-p",
    "--publish", "--entrypoint", "-h", "--hostname", "--env-file", "--label", "-l", "--memory", "-m", "--cpus",
    "--cpuset-cpus", "--security-opt", "--pid", "--uts", "--platform", "--pull", "--restart", "--tmpfs",
    "--add-host", "--dns", "--group-add", "--log-driver", "--log-opt", "--stop-signal", "--label-file",
    "--sysctl", "--userns", "--storage-opt", "--device-cgroup-rule", "--cgroupns", "--memory-swap",
    "--shm-size-systemd", "--cidfile", "--expose", "--link", "--volumes-from", "--ulimit-nofile",
}
_APPTAINER_VALUE_OPTS = {"-B", "--bind", "--env", "--env-file", "-H", "--home", "--mount", "-W", "--workdir",
                         "--overlay", "-o", "--pwd", "--security", "--network", "--network-args", "--app"}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([bkmgt]?)(?:i?b)?\s*$", re.I)
_SIZE_MULT = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}   # docker sizes are binary


@dataclass(frozen=True)
class RunSpec:
    """What a container launch asks for (parsed, nothing executed).

    shm_bytes: /dev/shm size inside the container (None = the host's /dev/shm is shared).
    """

    tool: str
    action: str
    image: str
    gpus: bool | None
    shm_bytes: float | None
    memlock_unlimited: bool
    ipc_lock: bool
    rdma_devices: bool
    network_host: bool
    rdma_network: bool
    privileged: bool
    contained: bool = False
    gpu_note: str = ""


def _parse_size_bytes(text: str, param: str) -> float:
    m = _SIZE.match(str(text))
    if not m:
        raise ValueError(f"{param} must be a size like '1g', '512m' or '8589934592'; got {text!r}")
    return float(m.group(1)) * _SIZE_MULT[m.group(2).lower()]


_K8S_QTY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(Ki|Mi|Gi|Ti|k|K|M|G|T)?\s*$")
_K8S_MULT = {None: 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9,
             "T": 1e12}


def _parse_k8s_quantity(text, param: str) -> float:
    """Kubernetes resource quantity ('16Gi' binary, '16G' decimal) in bytes."""
    m = _K8S_QTY.match(str(text))
    if not m:
        raise ValueError(f"{param} must be a Kubernetes quantity like '16Gi' or '8G'; got {text!r}")
    return float(m.group(1)) * _K8S_MULT[m.group(2)]


def _options(tokens: list[str], value_opts: set[str]):
    """Yield (option, value) for options and ('', positional) for the first positional, then stop."""
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t == "--":
            if i + 1 < len(tokens):
                yield "", tokens[i + 1]
            return
        if t.startswith("-") and len(t) > 1:
            if "=" in t and t.startswith("--"):
                k, v = t.split("=", 1)
                yield k, v
            elif t in value_opts:
                if i + 1 >= len(tokens):
                    raise ValueError(f"option {t} expects a value but the command ends there")
                yield t, tokens[i + 1]
                i += 1
            else:
                yield t, None
            i += 1
            continue
        yield "", t
        return
    return


def _is_ib_path(v: str) -> bool:
    return v.split(":", 1)[0].rstrip("/").startswith("/dev/infiniband")


def _ulimit_memlock_unlimited(v: str) -> bool | None:
    name, _, lim = v.partition("=")
    if name.strip() != "memlock":
        return None
    soft = lim.split(":", 1)[0].strip()
    return soft in ("-1", "unlimited")


def parse_command(argv) -> RunSpec:
    """Parse a container launch given as an argument list (``shlex.split(cmd)``); never executes it.

    Supported: ``docker|podman|nerdctl run|create``, ``enroot import|create|start``,
    ``apptainer|singularity exec|run|shell|pull``, ``srun ... --container-image=...`` (Pyxis).
    A leading ``sudo`` is skipped. Raises ValueError for anything else (naming what is accepted).
    """
    if isinstance(argv, str) or not isinstance(argv, (list, tuple)) or not argv:
        raise ValueError("argv must be a non-empty list of arguments (use shlex.split on a command string); "
                         f"got {argv!r}")
    toks = [str(t) for t in argv]
    while toks and toks[0] in ("sudo", "-E"):
        toks = toks[1:]
    if not toks:
        raise ValueError("argv holds only 'sudo'")
    tool = toks[0].rsplit("/", 1)[-1]
    rest = toks[1:]
    if tool in _DOCKER_LIKE:
        return _parse_docker(tool, rest)
    if tool == "enroot":
        return _parse_enroot(rest)
    if tool in _APPTAINER:
        return _parse_apptainer(tool, rest)
    if tool == "srun":
        return _parse_srun(rest)
    raise ValueError(f"argv[0] must be one of docker, podman, nerdctl, enroot, apptainer, singularity, srun; "
                     f"got {toks[0]!r}")


def _parse_docker(tool: str, rest: list[str]) -> RunSpec:
    if rest[:2] == ["container", "run"] or rest[:2] == ["container", "create"]:
        rest = rest[1:]
    if not rest or rest[0] not in ("run", "create"):
        raise ValueError(f"{tool}: only '{tool} run' / '{tool} create' can be linted; got {' '.join(rest[:1])!r}")
    gpus, gpu_note, shm, ipc_host, net_host = None, "", float(DOCKER_DEFAULT_SHM_BYTES), False, False
    memlock, ipc_lock, ib, priv, image = False, False, False, False, ""
    for k, v in _options(rest[1:], _VALUE_OPTS):
        if k == "":
            image = v
        elif k == "--gpus":
            gpus, gpu_note = True, f"--gpus {v}"
        elif k == "--runtime" and v == "nvidia":
            gpus, gpu_note = True, "--runtime=nvidia (GPUs chosen by NVIDIA_VISIBLE_DEVICES)"
        elif k == "--device" and v.startswith("nvidia.com/gpu"):
            gpus, gpu_note = True, f"CDI device {v}"
        elif k == "--device" and _is_ib_path(v):
            ib = True
        elif k in ("-v", "--volume") and _is_ib_path(v):
            ib = True
        elif k == "--shm-size":
            shm = _parse_size_bytes(v, "--shm-size")
        elif k == "--ipc" and v == "host":
            ipc_host = True
        elif k in ("--network", "--net") and v == "host":
            net_host = True
        elif k == "--ulimit":
            u = _ulimit_memlock_unlimited(v)
            if u is not None:
                memlock = u
        elif k == "--cap-add" and v.upper().removeprefix("CAP_") in ("IPC_LOCK", "ALL"):
            ipc_lock = True
        elif k == "--privileged":
            priv = True
    if not image:
        raise ValueError(f"{tool} run: no image found in the command")
    return RunSpec(tool=tool, action=rest[0], image=image, gpus=bool(gpus), shm_bytes=None if ipc_host else shm,
                   memlock_unlimited=memlock, ipc_lock=ipc_lock, rdma_devices=ib, network_host=net_host,
                   rdma_network=net_host, privileged=priv, gpu_note=gpu_note)


def _host_namespace_spec(tool, action, image, gpus, note, contained=False) -> RunSpec:
    """enroot / Pyxis / Apptainer share the host network, IPC (/dev/shm), /dev and limits by default."""
    return RunSpec(tool=tool, action=action, image=image, gpus=gpus, shm_bytes=None, memlock_unlimited=not contained,
                   ipc_lock=False, rdma_devices=not contained, network_host=True, rdma_network=True,
                   privileged=False, contained=contained, gpu_note=note)


def _parse_enroot(rest: list[str]) -> RunSpec:
    if not rest or rest[0] not in ("import", "create", "start"):
        raise ValueError(f"enroot: only 'enroot import|create|start' can be linted; got {' '.join(rest[:1])!r}")
    action = rest[0]
    image = ""
    env_gpu = None
    for k, v in _options(rest[1:], {"-o", "--output", "-n", "--name", "-m", "--mount", "-e", "--env", "-c",
                                    "--conf", "-a", "--arch"}):
        if k == "":
            image = v
        elif k in ("-e", "--env") and v.startswith("NVIDIA_VISIBLE_DEVICES"):
            env_gpu = v.partition("=")[2] not in ("", "void", "none")
    if not image:
        raise ValueError(f"enroot {action}: no image/container name found in the command")
    note = ("enroot's 98-nvidia hook mounts the GPUs when NVIDIA_VISIBLE_DEVICES is set "
            "(NGC/CUDA images set it; Slurm/Pyxis sets it from the GPU allocation)")
    return _host_namespace_spec("enroot", action, image, env_gpu, note)


def _parse_apptainer(tool: str, rest: list[str]) -> RunSpec:
    if not rest or rest[0] not in ("exec", "run", "shell", "pull", "build"):
        raise ValueError(f"{tool}: only '{tool} exec|run|shell|pull|build' can be linted; got {' '.join(rest[:1])!r}")
    action = rest[0]
    gpus, note, contained, image = False, "", False, ""
    for k, v in _options(rest[1:], _APPTAINER_VALUE_OPTS):
        if k == "":
            image = v
        elif k in ("--nv", "--nvccli"):
            gpus, note = True, k
        elif k in ("-c", "--contain", "-C", "--containall"):
            contained = True
    if not image:
        raise ValueError(f"{tool} {action}: no image found in the command")
    if action in ("pull", "build"):
        gpus = None   # no GPU needed to fetch/build an image
    return _host_namespace_spec(tool, action, image, gpus, note, contained)


def _parse_srun(rest: list[str]) -> RunSpec:
    image, gpus, note = "", False, ""
    srun_value = {"-N", "--nodes", "-n", "--ntasks", "-p", "--partition", "-G", "--gpus", "--gres", "-t", "--time",
                  "--container-image", "--container-mounts", "--container-name", "--container-workdir",
                  "--ntasks-per-node", "--gpus-per-node", "--gpus-per-task", "-c", "--cpus-per-task", "--mpi",
                  "-A", "--account", "-J", "--job-name", "--mem", "-o", "--output", "-e", "--error", "--export"}
    for k, v in _options(rest, srun_value):
        if k == "--container-image":
            image = v
        elif k in ("-G", "--gpus", "--gpus-per-node", "--gpus-per-task"):
            gpus, note = True, f"{k}={v}"
        elif k == "--gres" and "gpu" in v:
            gpus, note = True, f"--gres={v}"
        elif k == "":
            break
    if not image:
        raise ValueError("srun: no --container-image (Pyxis) in the command; only Pyxis container launches "
                         "can be linted")
    if not gpus:
        note = "no --gres=gpu/--gpus on srun: fine only if the enclosing sbatch allocation requested GPUs"
    return _host_namespace_spec("srun", "pyxis", image, gpus if gpus else None, note)


# ------------------------------------------------------------------------------------------ shm model
def nccl_shm_need_bytes(n_local_ranks, n_channels=DEFAULT_CHANNELS, buffsize_bytes=NCCL_BUFFSIZE_BYTES,
                        conns_per_channel: int = 2):
    """Rough /dev/shm need of NCCL's SHM transport on one node (bytes), vectorised.

    need = n_local_ranks x n_channels x conns_per_channel x NCCL_BUFFSIZE. Each rank receives through one
    shared-memory buffer of NCCL_BUFFSIZE (default 4 MiB, NCCL env docs) per channel and per SHM
    connection (ring: one peer; tree: its parent/child -> 2 by default). This is the order of magnitude
    when intra-node traffic goes through SHM (no P2P); it is why the 64 MB Docker default fails and why
    1 GiB is the usual fix (NVIDIA/nccl #342, #290). A single local rank needs no SHM buffers.
    """
    n = validate.integer("n_local_ranks", n_local_ranks, lo=1)
    ch = validate.integer("n_channels", n_channels, lo=1, hi=64)
    b = validate.positive("buffsize_bytes", buffsize_bytes)
    c = validate.integer("conns_per_channel", conns_per_channel, lo=1, hi=3)
    n_arr = np.asarray(n, dtype=float)
    out = np.where(n_arr > 1, n_arr * np.asarray(ch, dtype=float) * c * np.asarray(b, dtype=float), 0.0)
    return float(out) if out.ndim == 0 else out


# ------------------------------------------------------------------------------------------ CUDA in image
_CUDA_TAG = re.compile(r"(?:^|/)cuda:(\d+\.\d+(?:\.\d+)?)")


def image_cuda_version(image: str) -> str | None:
    """CUDA toolkit version from an ``nvidia/cuda:X.Y.Z-...`` tag (Docker Hub / NGC naming), else None.

    Other images (e.g. ``nvcr.io/nvidia/pytorch:24.05-py3``) carry it in their ``CUDA_VERSION`` environment
    variable: read it with ``docker inspect`` and :func:`parse_image_env`.
    """
    if not isinstance(image, str):
        raise ValueError(f"image must be a string; got {image!r}")
    m = _CUDA_TAG.search(image.replace("#", "/"))
    return m.group(1) if m else None


def _cuda_finding(image_cuda: str | None, host_driver: str | None) -> Finding | None:
    if host_driver is None or image_cuda is None:
        return Finding("info", "image", "cuda_driver",
                       "image CUDA version or host driver unknown: compare CUDA_VERSION (docker inspect) with "
                       "the driver (nvidia-smi) against NVIDIA Table 3", image_cuda, host_driver)
    try:
        st = inventory.cuda_driver_status(host_driver, image_cuda)
    except KeyError as exc:
        return Finding("warning", "image", "cuda_driver", f"CUDA {image_cuda} not in NVIDIA Table 3: {exc}",
                       image_cuda, None)
    if st["status"] == "ok":
        return Finding("info", "image", "cuda_driver", f"driver {host_driver} >= {st['min_driver']} for {st['label']}",
                       host_driver, f">= {st['min_driver']}")
    if st["status"] == "minor-compat":
        return Finding("warning", "image", "cuda_driver",
                       f"{st['label']} wants driver >= {st['min_driver']}; {host_driver} runs it only under minor "
                       "version compatibility (no PTX JIT of newer PTX, some APIs fail)", host_driver,
                       f">= {st['min_driver']}")
    return Finding("critical", "image", "cuda_driver",
                   f"{st['label']} needs driver >= {st['min_driver']}; host driver {host_driver} is too old "
                   "(CUDA error 803/35 at init) unless the image's forward-compat package (cuda-compat, data-center "
                   "GPUs only) supports this branch", host_driver, f">= {st['min_driver']}")


# ------------------------------------------------------------------------------------------ lint rules
def _lint_spec(s: RunSpec, *, host_driver, image_cuda, multi_node, rdma, n_local_ranks, n_channels,
               component: str, default_runtime: str = "runc") -> Report:
    f: list[Finding] = []
    run = list(CHECKS)
    # gpu_access
    if s.gpus is False and s.tool == "docker" and default_runtime == "nvidia":
        # /etc/docker/daemon.json "default-runtime": "nvidia": the toolkit's hook runs for EVERY container and
        # injects the driver when the image sets NVIDIA_VISIBLE_DEVICES (the CUDA/NGC images set "all")
        # [NVIDIA Container Toolkit User Guide: "Adding the NVIDIA Runtime" (daemon.json) and "Environment variables
        # (OCI spec)": NVIDIA_VISIBLE_DEVICES; `nvidia-ctk runtime configure --set-as-default`].
        f.append(Finding("info", component, "gpu_access",
                         "no --gpus, but Docker's default runtime is nvidia: GPUs and driver libraries are injected "
                         "if the image sets NVIDIA_VISIBLE_DEVICES (CUDA/NGC images set 'all') -- implicit, so every "
                         "container on this host sees all GPUs unless it sets NVIDIA_VISIBLE_DEVICES=void"))
    elif s.gpus is False:
        msg = {"apptainer": "no --nv/--nvccli: the driver libraries and /dev/nvidia* are not bound in",
               "singularity": "no --nv/--nvccli: the driver libraries and /dev/nvidia* are not bound in"}.get(
            s.tool, "no --gpus / --runtime=nvidia / CDI device: the NVIDIA Container Toolkit injects nothing"
                    + (" (--privileged exposes /dev/nvidia* but not libcuda)" if s.privileged else ""))
        f.append(Finding("critical", component, "gpu_access", msg, "missing", "--gpus all" if s.tool not in
                         _APPTAINER else "--nv"))
    elif s.gpus is None:
        if s.action not in ("pull", "build", "import"):
            f.append(Finding("info", component, "gpu_access", s.gpu_note or "GPU exposure decided outside this command"))
    # shm
    need = nccl_shm_need_bytes(n_local_ranks, n_channels)
    if s.contained:
        f.append(Finding("warning", component, "shm_size", "--contain/--containall gives a minimal /dev (and with "
                         "--containall a private IPC namespace): bind /dev/shm and /dev/infiniband explicitly",
                         "contained", "host /dev"))
    elif s.shm_bytes is not None:
        if s.shm_bytes < need:
            f.append(Finding("critical", component, "shm_size",
                             f"/dev/shm {s.shm_bytes / 2**20:.0f} MiB < NCCL SHM need ~{need / 2**20:.0f} MiB for "
                             f"{n_local_ranks} local ranks x {n_channels} channels: 'Error while creating shared "
                             "memory segment' (use --ipc=host or --shm-size)", f"{s.shm_bytes / 2**20:.0f} MiB",
                             f">= {max(need, SHM_FLOOR_BYTES) / 2**20:.0f} MiB"))
        elif s.shm_bytes < SHM_FLOOR_BYTES:
            f.append(Finding("warning", component, "shm_size", "/dev/shm below the 1 GiB floor (DataLoader workers "
                             "share it too)", f"{s.shm_bytes / 2**20:.0f} MiB", ">= 1024 MiB"))
    # RDMA-related checks only matter for multi-node RDMA jobs
    if multi_node and rdma:
        if not (s.memlock_unlimited or s.ipc_lock or s.privileged):
            f.append(Finding("critical", component, "memlock",
                             "RDMA memory registration is limited by RLIMIT_MEMLOCK: add --ulimit memlock=-1 "
                             "(or CAP_IPC_LOCK); NCCL fails with 'ibv_reg_mr failed' / falls back",
                             "default", "memlock=-1 or IPC_LOCK"))
        if not (s.rdma_devices or s.privileged):
            f.append(Finding("critical", component, "rdma_devices",
                             "no /dev/infiniband in the container: NCCL finds no IB device and uses TCP sockets",
                             "missing", "--device=/dev/infiniband"))
        if not (s.network_host or s.rdma_network):
            f.append(Finding("critical", component, "network",
                             "bridge network: NCCL bootstrap binds a NATed 172.17.x address other nodes cannot reach, "
                             "and RoCE GIDs of the host are not visible", "bridge", "--network=host"))
    if s.privileged:
        f.append(Finding("warning", component, "privileged",
                         "--privileged grants every device and capability; --gpus, --device=/dev/infiniband and "
                         "--ulimit memlock=-1 / --cap-add IPC_LOCK are enough", True, False))
    # CUDA vs driver
    if s.action not in ("pull", "build"):
        cf = _cuda_finding(image_cuda or image_cuda_version(s.image), host_driver)
        if cf is not None:
            f.append(cf)
    # enroot / pyxis URI
    if s.tool in ("enroot", "srun") and s.action in ("import", "pyxis"):
        img = s.image.removeprefix("docker://")
        first = img.split("/", 1)[0].split("#", 1)[0]
        if "#" not in img and "/" in img and ("." in first or ":" in first.split("@")[-1]):
            f.append(Finding("critical", component, "image_uri",
                             f"{s.image!r}: enroot/Pyxis separate the registry with '#' "
                             f"(docker://{first}#{img.split('/', 1)[1]}); as written it is looked up on Docker Hub",
                             s.image, f"{first}#{img.split('/', 1)[1]}"))
    return Report(findings=f, checks_run=run)


def _validate_context(multi_node, rdma, n_local_ranks, n_channels, host_driver):
    validate.integer("n_local_ranks", n_local_ranks, lo=1, hi=64)
    validate.integer("n_channels", n_channels, lo=1, hi=64)
    if not isinstance(multi_node, bool) or not isinstance(rdma, bool):
        raise ValueError(f"multi_node and rdma must be booleans; got {multi_node!r}, {rdma!r}")
    if host_driver is not None:
        inventory.parse_version(host_driver)


def lint_command(argv, *, host_driver: str | None = None, image_cuda: str | None = None, multi_node: bool = True,
                 rdma: bool = True, n_local_ranks: int = 8, n_channels: int = DEFAULT_CHANNELS,
                 default_runtime: str = "runc") -> Report:
    """Lint a container launch (argument list) for multi-GPU / multi-node training; see the module docstring.

    default_runtime: Docker's default OCI runtime on the host ('runc', Docker's default, or 'nvidia' when
    /etc/docker/daemon.json sets "default-runtime": "nvidia"); with 'nvidia' a docker run without --gpus still
    gets the GPUs if the image sets NVIDIA_VISIBLE_DEVICES, so gpu_access is not critical.

    host_driver: e.g. '535.104.05' (nvidia-smi); image_cuda overrides the CUDA version read from the tag.
    multi_node/rdma: the job spans nodes over RDMA (enables memlock, rdma_devices, network checks).
    """
    _validate_context(multi_node, rdma, n_local_ranks, n_channels, host_driver)
    validate.choice("default_runtime", default_runtime, ("runc", "nvidia"))
    s = parse_command(argv)
    return _lint_spec(s, host_driver=host_driver, image_cuda=image_cuda, multi_node=multi_node, rdma=rdma,
                      n_local_ranks=n_local_ranks, n_channels=n_channels, component=s.tool,
                      default_runtime=default_runtime)


def _pod_spec(obj) -> tuple[dict, dict]:
    if not isinstance(obj, dict):
        raise ValueError(f"pod spec must be a dict (yaml.safe_load of the manifest); got {type(obj).__name__}")
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        raise ValueError("pod spec has no 'spec' mapping")
    meta = obj.get("metadata") or {}
    if "template" in spec:          # Deployment / Job / StatefulSet / DaemonSet
        tmpl = spec["template"] or {}
        meta = {**meta, **(tmpl.get("metadata") or {})}
        spec = tmpl.get("spec") or {}
    if not isinstance(spec.get("containers"), list) or not spec["containers"]:
        raise ValueError("pod spec has no 'containers' list")
    return spec, meta if isinstance(meta, dict) else {}


def lint_pod(obj: dict, *, host_driver: str | None = None, image_cuda: str | None = None, multi_node: bool = True,
             rdma: bool = True, n_local_ranks: int = 8, n_channels: int = DEFAULT_CHANNELS) -> Report:
    """Lint a Kubernetes Pod (or Job/Deployment: its pod template) for GPU/RDMA training; one row per container.

    Default /dev/shm of a container is the runtime's 64 MiB; a memory-backed emptyDir mounted at /dev/shm
    (its sizeLimit, else unbounded) or hostIPC: true replaces it.
    """
    _validate_context(multi_node, rdma, n_local_ranks, n_channels, host_driver)
    spec, meta = _pod_spec(obj)
    shm_vols = {}
    ib_vols = set()
    for v in spec.get("volumes") or []:
        if not isinstance(v, dict):
            continue
        ed = v.get("emptyDir")
        if isinstance(ed, dict) and str(ed.get("medium", "")).lower() == "memory":
            lim = ed.get("sizeLimit")
            shm_vols[v.get("name")] = _parse_k8s_quantity(lim, "emptyDir.sizeLimit") if lim else math.inf
        hp = v.get("hostPath")
        if isinstance(hp, dict) and str(hp.get("path", "")).startswith("/dev/infiniband"):
            ib_vols.add(v.get("name"))
    annotations = meta.get("annotations") or {}
    multus = "k8s.v1.cni.cncf.io/networks" in annotations
    host_net = bool(spec.get("hostNetwork"))
    host_ipc = bool(spec.get("hostIPC"))
    report = Report(checks_run=list(CHECKS))
    for c in spec["containers"]:
        if not isinstance(c, dict):
            raise ValueError("each container must be a mapping")
        name = str(c.get("name", "container"))
        res = c.get("resources") or {}
        limits = {**(res.get("requests") or {}), **(res.get("limits") or {})}
        gpus = any(k == "nvidia.com/gpu" or k.startswith("nvidia.com/mig-") for k in limits)
        rdma_res = any("rdma" in k or "hostdev" in k or "sriov" in k for k in limits)
        sc = c.get("securityContext") or {}
        caps = [str(x).upper().removeprefix("CAP_") for x in ((sc.get("capabilities") or {}).get("add") or [])]
        shm = None if host_ipc else float(DOCKER_DEFAULT_SHM_BYTES)
        ib_mount = False
        for m in c.get("volumeMounts") or []:
            if not isinstance(m, dict):
                continue
            if m.get("mountPath") == "/dev/shm" and m.get("name") in shm_vols and not host_ipc:
                shm = shm_vols[m["name"]]
            if m.get("name") in ib_vols:
                ib_mount = True
        priv = bool(sc.get("privileged"))
        s = RunSpec(tool="kubernetes", action="pod", image=str(c.get("image", "")), gpus=gpus,
                    shm_bytes=None if shm is None or math.isinf(shm) else shm,
                    memlock_unlimited=False, ipc_lock="IPC_LOCK" in caps or "ALL" in caps,
                    rdma_devices=rdma_res or (ib_mount and priv), network_host=host_net,
                    rdma_network=host_net or multus or rdma_res, privileged=priv,
                    gpu_note="resources.limits nvidia.com/gpu")
        r = _lint_spec(s, host_driver=host_driver, image_cuda=image_cuda, multi_node=multi_node, rdma=rdma,
                       n_local_ranks=n_local_ranks, n_channels=n_channels, component=f"container {name}")
        fixed = []
        for x in r.findings:   # Kubernetes spelling of the fixes
            exp = {"gpu_access": "limits nvidia.com/gpu", "memlock": "capabilities.add IPC_LOCK",
                   "rdma_devices": "rdma/* device-plugin resource", "network": "hostNetwork or Multus RDMA net",
                   }.get(x.check, x.expected)
            fixed.append(Finding(x.severity, x.component, x.check, x.message.replace("--network=host", "hostNetwork"),
                                 x.value, exp))
        report.findings.extend(fixed)
    return report


def check_status(report: Report) -> dict[str, str]:
    """Per check: worst severity among its findings, 'pass' if it ran without one at or above warning."""
    out = {}
    for c in CHECKS:
        sev = {x.severity for x in report.findings if x.check == c}
        if "critical" in sev:
            out[c] = "critical"
        elif "warning" in sev:
            out[c] = "warning"
        else:
            out[c] = "pass" if c in report.checks_run else "n/a"
    return out


# ------------------------------------------------------------------------------------------ GPU Operator
def _operator_data() -> dict:
    return data_files.load("gpu_operator.toml")


def operator_components() -> list[dict]:
    """The GPU Operator components (name, k8s_object, role, depends_on, optional, breaks_if_missing)."""
    return [dict(c) for c in _operator_data()["component"]]


def _component_names() -> list[str]:
    return [c["name"] for c in _operator_data()["component"]]


def startup_order(components: list[dict] | None = None, disabled=()) -> list[list[str]]:
    """Readiness order as levels (Kahn's topological sort): every component of level k depends only on
    components of levels < k. ``disabled`` components are dropped together with their dependency edges
    (e.g. ``disabled=['driver']`` for hosts with a pre-installed driver). Raises ValueError on a cycle or an
    unknown dependency, KeyError on an unknown name in ``disabled``.
    """
    comps = operator_components() if components is None else [dict(c) for c in components]
    names = [c["name"] for c in comps]
    for d in disabled:
        if d not in names:
            raise validate.unknown_name("GPU Operator component", d, names)
    keep = [c for c in comps if c["name"] not in set(disabled)]
    deps = {}
    for c in keep:
        for d in c.get("depends_on", []):
            if d not in names:
                raise ValueError(f"component {c['name']!r} depends on unknown {d!r}; known: {names}")
        deps[c["name"]] = {d for d in c.get("depends_on", []) if d not in set(disabled)}
    levels, done = [], set()
    while len(done) < len(deps):
        ready = sorted(n for n, ds in deps.items() if n not in done and ds <= done)
        if not ready:
            raise ValueError(f"dependency cycle among {sorted(set(deps) - done)}")
        levels.append(ready)
        done |= set(ready)
    return levels


def missing_impact(name: str) -> dict:
    """What breaks if component ``name`` is missing: its own failure and every component that (transitively)
    waits for it. Returns {'component', 'breaks', 'blocked': [names in startup order]}."""
    names = _component_names()
    if name not in names:
        raise validate.unknown_name("GPU Operator component", name, names)
    comps = {c["name"]: c for c in operator_components()}
    blocked, frontier = set(), {name}
    while frontier:
        nxt = {n for n, c in comps.items() if set(c["depends_on"]) & frontier} - blocked - {name}
        blocked |= nxt
        frontier = nxt
    order = [n for lvl in startup_order() for n in lvl]
    return {"component": name, "breaks": comps[name]["breaks_if_missing"],
            "blocked": [n for n in order if n in blocked]}


# ------------------------------------------------------------------------------------------ pull arithmetic
PULL_METHODS = ("registry", "p2p", "shared_fs")


def pull_time_s(image_gb, n_nodes, registry_gbps, *, method: str = "registry", node_gbps=100.0,
                cache_hit_fraction=0.0, fs_gbs=100.0, chunk_mb=64.0):
    """Time until every node has the image (transfer only, a lower bound: layer decompression is extra).

    S = image_gb (compressed, as downloaded), N = nodes, N_miss = ceil(N (1 - cache_hit_fraction)) nodes
    without a cached copy, B_reg = registry egress, B_node = node NIC used for pulls (Gb/s):

    - registry:  T = max(N_miss S / B_reg, S / B_node)        (the registry's egress is shared by all)
    - p2p:       T = S / min(B_reg, B_node) + ceil(log2 N_miss) c / B_node   (pipelined chunked broadcast,
      e.g. Dragonfly/Kraken/Spegel; the α-β cost of a pipelined tree broadcast with chunk c)
    - shared_fs: T = S / min(B_reg, B_node) + max(N_miss S / B_fs, S / B_node)  (Enroot/Apptainer: import the
      image ONCE into a squashfs/SIF on the parallel filesystem, then every node reads it at aggregate B_fs)

    Vectorised over image_gb, n_nodes, registry_gbps, node_gbps, cache_hit_fraction, fs_gbs. Returns 0 when
    every node already has the image.
    """
    validate.choice("method", method, PULL_METHODS)
    s = np.asarray(validate.positive("image_gb", image_gb), dtype=float)
    n = np.asarray(validate.integer("n_nodes", n_nodes, lo=1), dtype=float)
    breg = np.asarray(validate.positive("registry_gbps", registry_gbps), dtype=float)
    bnode = np.asarray(validate.positive("node_gbps", node_gbps), dtype=float)
    hit = np.asarray(validate.fraction("cache_hit_fraction", cache_hit_fraction, allow_zero=True), dtype=float)
    bfs = np.asarray(validate.positive("fs_gbs", fs_gbs), dtype=float)
    c = np.asarray(validate.positive("chunk_mb", chunk_mb), dtype=float)
    miss = np.maximum(np.ceil(n * (1.0 - hit) - 1e-9), 0.0)     # +0.0, never -0.0
    bits = s * 8.0
    if method == "registry":
        t = np.maximum(miss * bits / breg, bits / bnode)
    elif method == "p2p":
        t = bits / np.minimum(breg, bnode) + np.ceil(np.log2(np.maximum(miss, 1.0))) * c * 8e-3 / bnode
    else:
        t = bits / np.minimum(breg, bnode) + np.maximum(miss * s / bfs, bits / bnode)
    t = np.where(miss > 0, t, 0.0)
    return float(t) if t.ndim == 0 else t


def registry_egress_gb(image_gb, n_nodes, *, method: str = "registry", cache_hit_fraction=0.0):
    """GB served by the central registry: N_miss x S for 'registry', S once for 'p2p' and 'shared_fs'."""
    validate.choice("method", method, PULL_METHODS)
    s = np.asarray(validate.positive("image_gb", image_gb), dtype=float)
    n = np.asarray(validate.integer("n_nodes", n_nodes, lo=1), dtype=float)
    hit = np.asarray(validate.fraction("cache_hit_fraction", cache_hit_fraction, allow_zero=True), dtype=float)
    miss = np.maximum(np.ceil(n * (1.0 - hit) - 1e-9), 0.0)     # +0.0, never -0.0
    out = miss * s if method == "registry" else np.where(miss > 0, s, 0.0)
    return float(out) if np.ndim(out) == 0 else out


def enroot_import_plan(image_gb: float, n_nodes: int, registry_gbps: float, *, node_gbps: float = 100.0,
                       fs_gbs: float = 100.0) -> dict:
    """Enroot: every node runs ``enroot import`` (N pulls) vs one import to a shared .sqsh read by all."""
    per_node = pull_time_s(image_gb, n_nodes, registry_gbps, method="registry", node_gbps=node_gbps)
    shared = pull_time_s(image_gb, n_nodes, registry_gbps, method="shared_fs", node_gbps=node_gbps, fs_gbs=fs_gbs)
    return {"per_node_import_s": per_node, "shared_sqsh_s": shared, "speedup": per_node / shared,
            "registry_gb_per_node_import": registry_egress_gb(image_gb, n_nodes, method="registry"),
            "registry_gb_shared": registry_egress_gb(image_gb, n_nodes, method="shared_fs")}


# ------------------------------------------------------------------------------------------ parsers
class ContainerParseError(ParseError):
    """Text is not the output of the expected kubectl / docker command."""


@dataclass(frozen=True)
class PodStatus:
    name: str
    ready: int
    total: int
    status: str
    restarts: int
    component: str | None


_POD_PREFIX = (  # pod name prefix -> component (names from the GPU Operator install docs)
    ("nvidia-driver-daemonset", "driver"), ("nvidia-container-toolkit-daemonset", "container-toolkit"),
    ("nvidia-operator-validator", "operator-validator"), ("nvidia-cuda-validator", "operator-validator"),
    ("nvidia-device-plugin", "device-plugin"), ("gpu-feature-discovery", "gpu-feature-discovery"),
    ("nvidia-dcgm-exporter", "dcgm-exporter"), ("nvidia-mig-manager", "mig-manager"),
)
_POD_LINE = re.compile(r"^(\S+)\s+(\d+)/(\d+)\s+(\S+)\s+(\d+)(?:\s+\(.*?\))?\s+\S+\s*$")


def _component_of(pod: str) -> str | None:
    if "node-feature-discovery" in pod:
        return "node-feature-discovery"
    for prefix, comp in _POD_PREFIX:
        if pod.startswith(prefix):
            return comp
    return None


def parse_kubectl_pods(text: str) -> list[PodStatus]:
    """Parse ``kubectl get pods -n gpu-operator`` (columns NAME READY STATUS RESTARTS AGE)."""
    if not isinstance(text, str):
        raise ContainerParseError(f"kubectl output must be text; got {type(text).__name__}")
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if not lines or not re.match(r"^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE", lines[0]):
        raise ContainerParseError("not 'kubectl get pods' output: expected a header 'NAME READY STATUS RESTARTS AGE'")
    pods = []
    for ln in lines[1:]:
        m = _POD_LINE.match(ln)
        if not m:
            raise ContainerParseError(f"cannot parse kubectl pod line: {ln!r}")
        name = m.group(1)
        pods.append(PodStatus(name, int(m.group(2)), int(m.group(3)), m.group(4), int(m.group(5)), _component_of(name)))
    if not pods:
        raise ContainerParseError("kubectl get pods output has a header but no pods")
    return pods


def operator_readiness(pods: list[PodStatus], disabled=()) -> Report:
    """GPU Operator health from parsed pods: not-ready pods are critical, missing components are reported
    with what breaks (critical for required ones, warning for optional ones), restarts are warnings."""
    f = []
    seen = set()
    for p in pods:
        if p.component is None:
            continue
        seen.add(p.component)
        done = p.status == "Completed"
        if not done and (p.status != "Running" or p.ready < p.total):
            waiting = missing_impact(p.component)["blocked"]
            f.append(Finding("critical", p.component, "pod_ready",
                             f"{p.name} is {p.status} {p.ready}/{p.total} ({missing_impact(p.component)['breaks']}); waiting on it: "
                             f"{', '.join(waiting) or 'no other component'}",
                             f"{p.status} {p.ready}/{p.total}", f"Running {p.total}/{p.total}"))
        if p.restarts > 0:
            f.append(Finding("warning", p.component, "restarts", f"{p.name} restarted {p.restarts} times",
                             p.restarts, 0))
    comps = {c["name"]: c for c in operator_components()}
    for name, c in comps.items():
        if name in seen or name in disabled:
            continue
        f.append(Finding("warning" if c["optional"] else "critical", name, "present",
                         f"no {name} pod: {c['breaks_if_missing']}", "absent", "present"))
    return Report(findings=f, checks_run=["pod_ready", "restarts", "present"])


@dataclass(frozen=True)
class NodeGpu:
    capacity: int
    allocatable: int
    requested: int | None
    product: str | None
    labels: dict


def parse_node_gpu(text: str) -> NodeGpu:
    """Parse ``kubectl describe node <n> | grep nvidia.com/gpu``: labels (nvidia.com/gpu.*=...), the Capacity
    and Allocatable lines (``nvidia.com/gpu:  8``) and the Allocated-resources line (``nvidia.com/gpu  4  4``)."""
    if not isinstance(text, str):
        raise ContainerParseError(f"kubectl output must be text; got {type(text).__name__}")
    labels, counts, requested = {}, [], None
    for ln in text.splitlines():
        s = ln.strip()
        m = re.search(r"(nvidia\.com/gpu\.[\w.\-]+)=(\S+)", s)
        if m:
            labels[m.group(1)] = m.group(2)
            continue
        m = re.match(r"^nvidia\.com/gpu:\s+(\d+)$", s)
        if m:
            counts.append(int(m.group(1)))
            continue
        m = re.match(r"^nvidia\.com/gpu\s+(\d+)(?:\s+\(\d+%\))?\s+(\d+)", s)
        if m:
            requested = int(m.group(1))
    if len(counts) < 2:
        raise ContainerParseError("no 'nvidia.com/gpu: N' Capacity and Allocatable lines: is the device plugin "
                                  "running, and is this 'kubectl describe node' output?")
    return NodeGpu(counts[0], counts[1], requested, labels.get("nvidia.com/gpu.product"), labels)


def parse_image_env(text: str) -> dict:
    """Parse ``docker inspect --format '{{json .Config.Env}}' IMAGE`` (a JSON list of 'K=V') into a dict."""
    try:
        env = json.loads(text)
    except (TypeError, ValueError):
        raise ContainerParseError("not docker inspect '{{json .Config.Env}}' output (a JSON list of 'K=V')") from None
    if not isinstance(env, list) or not all(isinstance(e, str) and "=" in e for e in env):
        raise ContainerParseError("expected a JSON list of 'KEY=VALUE' strings")
    return dict(e.split("=", 1) for e in env)


# Illustrative samples in the real formats (pod names follow the GPU Operator install docs; the ages,
# hashes, counts and versions are made up for teaching).
SAMPLE_KUBECTL_PODS = """\
NAME                                                         READY   STATUS             RESTARTS      AGE
gpu-feature-discovery-4gk78                                  1/1     Running            0             12m
gpu-operator-7bfc5f55-q2mfl                                  1/1     Running            0             13m
gpu-operator-node-feature-discovery-gc-7ccc8d8f6-9xb2n       1/1     Running            0             13m
gpu-operator-node-feature-discovery-master-d8597d549-qk5mg   1/1     Running            0             13m
gpu-operator-node-feature-discovery-worker-wr9tk             1/1     Running            0             13m
nvidia-container-toolkit-daemonset-j4dsd                     1/1     Running            0             12m
nvidia-cuda-validator-m7vqf                                  0/1     Completed          0             9m
nvidia-dcgm-exporter-vlttv                                   1/1     Running            0             12m
nvidia-device-plugin-daemonset-xdnfq                         0/1     CrashLoopBackOff   6 (41s ago)   12m
nvidia-driver-daemonset-hf6gs                                1/1     Running            2             13m
nvidia-operator-validator-89xsk                              0/1     Init:3/4           0             12m
"""

SAMPLE_DESCRIBE_NODE_GPU = """\
                    nvidia.com/gpu.count=8
                    nvidia.com/gpu.memory=81559
                    nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3
  nvidia.com/gpu:     8
  nvidia.com/gpu:     8
  nvidia.com/gpu     6           6
"""

SAMPLE_DOCKER_INSPECT_ENV = ('["PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:'
                             '/usr/sbin:/usr/bin:/sbin:/bin","CUDA_VERSION=12.4.1.003",'
                             '"NVIDIA_VISIBLE_DEVICES=all","NVIDIA_DRIVER_CAPABILITIES=compute,utility,video",'
                             '"NCCL_VERSION=2.21.5"]')
