"""``python -m labutil doctor``: what this machine offers for the course's labs, with findings.

Reports GPUs (``nvidia-smi``), driver and CUDA version, torch (+ ``torch.version.cuda`` and the
NCCL bundled with torch), the GPU/NIC topology (``nvidia-smi topo -m`` parsed, with the closest
NIC per GPU), RDMA devices (``/sys/class/infiniband`` and ``ibstat``), CPU cores, RAM and the
size of ``/dev/shm`` (NCCL's shared-memory transport fails in Docker's default 64 MB /dev/shm:
NVIDIA/nccl #290, #342 — run containers with ``--shm-size=1g`` or ``--ipc=host``). Missing tools are
findings, never crashes; the exit code is 0 whatever the findings (used by lab01 on CPU-only
machines too). Tools run as argument lists with a timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from .. import health
from .. import parsers as P
from ..health import Finding
from .expect import expected_busbw_gbs, machine_profile

__all__ = ["run_tool", "collect", "findings", "render", "main", "SHM_MIN_BYTES", "CORES_PER_GPU", "RAM_GB_PER_GPU",
           "physical_cores",
           "driver_finding", "torch_wheel_for_driver", "TORCH_CUDA_WHEELS", "COURSE_TORCH_WHEELS",
           "recommended_torch_wheel"]

SHM_MIN_BYTES = 64 * 2**20   # Docker's default /dev/shm; NCCL needs more (NVIDIA/nccl #290, #342)
CORES_PER_GPU = 16           # seed 003 rule of thumb: >= 16 PHYSICAL cores per GPU (taught in ch09, which shows that
                             # it depends on the workload: DGX H100 has 14, BLOOM trained on 8, CPU image decoding needs ~17)
RAM_GB_PER_GPU = 256         # seed 003 rule of thumb: >= 256 GB RAM per GPU (taught in ch09)
TIMEOUT_S = 20.0


def run_tool(args: list[str], timeout_s: float = TIMEOUT_S) -> tuple[int, str]:
    """Run a tool (argument list, no shell) and return (returncode, stdout+stderr); never raises:
    a missing tool gives (127, message), a timeout (124, message)."""
    if not isinstance(args, (list, tuple)) or not all(isinstance(a, str) for a in args):
        raise ValueError(f"args must be a list of strings; got {args!r}")
    try:
        p = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout_s, check=False)
    except FileNotFoundError:
        return 127, f"{args[0]}: not found"
    except subprocess.TimeoutExpired:
        return 124, f"{args[0]}: no answer within {timeout_s:g} s"
    except OSError as exc:
        return 126, f"{args[0]}: {exc}"
    return p.returncode, (p.stdout or "") + (p.stderr or "")


def _meminfo_gb(path) -> float | None:
    try:
        text = Path(path).read_text()
    except OSError:
        return None
    m = re.search(r"^MemTotal:\s+(\d+)\s+kB", text, re.M)
    return int(m.group(1)) * 1024 / 1e9 if m else None


def physical_cores(cpus, sysfs: str = "/sys/devices/system/cpu") -> int | None:
    """Physical cores among the logical CPUs ``cpus``: distinct (physical_package_id, core_id) pairs in
    sysfs (``topology/``), so the two hyper-threads of one core count once. None when sysfs does not say
    (then only the logical count is known)."""
    seen = set()
    for c in cpus:
        try:
            base = Path(sysfs) / f"cpu{int(c)}" / "topology"
            seen.add((base.joinpath("physical_package_id").read_text().strip(),
                      base.joinpath("core_id").read_text().strip()))
        except (OSError, ValueError):
            return None
    return len(seen) or None


def _shm_bytes(path) -> int | None:
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_frsize * st.f_blocks


def _torch_info() -> dict:
    try:
        import torch  # noqa: PLC0415 - optional, heavy
    except Exception as exc:  # ImportError or a broken install
        return {"installed": False, "error": f"{type(exc).__name__}: {exc}"}
    info = {"installed": True, "version": torch.__version__, "cuda_build": torch.version.cuda,
            "cuda_available": False, "device_count": 0, "nccl_version": None, "devices": []}
    try:
        info["cuda_available"] = bool(torch.cuda.is_available())
        if info["cuda_available"]:
            info["device_count"] = torch.cuda.device_count()
            info["devices"] = [torch.cuda.get_device_name(i) for i in range(info["device_count"])]
        info["distributed"] = bool(torch.distributed.is_available())
    except Exception as exc:  # a driver problem shows up here
        info["error"] = f"{type(exc).__name__}: {exc}"
    # The NCCL that a CUDA wheel bundles is known without a GPU: torch.cuda.nccl.version() reads the
    # linked library (torch 2.14.1+cu130 on a machine with no GPU returns (2, 30, 7)); a CPU-only
    # build has no NCCL at all (torch._C has no _nccl_version).
    if torch.version.cuda is None:
        info["nccl_note"] = "CPU-only torch build: no NCCL bundled"
        return info
    try:
        v = torch.cuda.nccl.version()
        info["nccl_version"] = ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
    except Exception as exc:  # noqa: BLE001 - a build without NCCL (e.g. ROCm/RCCL naming)
        info["nccl_note"] = f"torch.cuda.nccl.version() failed: {type(exc).__name__}"
    return info


def collect(*, runner=run_tool, which=shutil.which, sysfs_ib="/sys/class/infiniband", shm_path="/dev/shm",
            meminfo="/proc/meminfo", torch_info=_torch_info, sysfs_cpu="/sys/devices/system/cpu") -> dict:
    """Gather the facts (a JSON-able dict). Every probe is optional.

    ``cpu_cores`` counts the logical CPUs this process may run on (hyper-threads included, as
    ``nproc``); ``cpu_physical_cores`` the physical cores among them (sysfs topology; None if unknown),
    which is what the seed course's "16 physical cores per GPU" rule counts."""
    facts: dict = {"host": platform.node(), "os": platform.platform(), "python": platform.python_version()}
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = list(range(os.cpu_count() or 1))
    facts["cpu_cores"] = len(cpus)
    facts["cpu_physical_cores"] = physical_cores(cpus, sysfs_cpu)
    facts["ram_gb"] = _meminfo_gb(meminfo)
    facts["shm_bytes"] = _shm_bytes(shm_path)
    facts["nccl_env"] = {k: v for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")}
    # GPUs
    gpu: dict = {"nvidia_smi": bool(which("nvidia-smi")), "gpus": [], "driver": None, "cuda": None,
                 "compute_caps": [], "topology": None, "gpu_nic": None, "pcie": None, "errors": []}
    if gpu["nvidia_smi"]:
        rc, out = runner(["nvidia-smi", "--query-gpu=index,name,memory.total,driver_version,pci.bus_id",
                          "--format=csv"])
        if rc == 0:
            try:
                table = P.parse_nvidia_smi_csv(out)
                gpu["gpus"] = table.rows
                gpu["driver"] = table.rows[0].get("driver_version")
            except P.ParseError as exc:
                gpu["errors"].append(str(exc))
        else:
            gpu["errors"].append(f"nvidia-smi exited {rc}: {out.strip()[:300]}")
        rc, out = runner(["nvidia-smi"])
        m = re.search(r"CUDA Version:\s*([\d.]+)", out or "")
        gpu["cuda"] = m.group(1) if m else None
        # PCIe link of GPU 0 (max = what GPU and slot can train to; "current" drops at idle)
        rc, out = runner(["nvidia-smi", "--query-gpu=index,pcie.link.gen.max,pcie.link.width.max", "--format=csv"])
        if rc == 0:
            try:
                row = P.parse_nvidia_smi_csv(out).rows[0]
                gen, width = row.get("pcie.link.gen.max"), row.get("pcie.link.width.max")
                gpu["pcie"] = {"gen": int(gen) if isinstance(gen, (int, float)) and 1 <= gen <= 7 else None,
                               "width": int(width) if isinstance(width, (int, float)) and width >= 1 else None}
            except (P.ParseError, IndexError):
                pass
        # compute capability per GPU (a separate query: older drivers do not know the field)
        rc, out = runner(["nvidia-smi", "--query-gpu=index,compute_cap", "--format=csv"])
        if rc == 0:
            try:
                caps = [r.get("compute_cap") for r in P.parse_nvidia_smi_csv(out).rows]
                gpu["compute_caps"] = [float(c) for c in caps if isinstance(c, (int, float)) and 1.0 <= c < 100.0]
            except (P.ParseError, IndexError):
                pass
        rc, out = runner(["nvidia-smi", "topo", "-m"])
        if rc == 0:
            try:
                topo = P.parse_nvidia_smi_topo(out)
                gpu["topology"] = {f"{a}-{b}": c for (a, b), c in topo.matrix.items() if a < b}
                gpu["gpu_nic"] = {g: list(v) for g, v in topo.gpu_nic_map().items()} if topo.nics else {}
            except (P.ParseError, KeyError) as exc:
                gpu["errors"].append(f"topo: {exc}")
    facts["gpu"] = gpu
    # RDMA
    rdma: dict = {"devices": [], "ibstat": bool(which("ibstat")), "ports": [], "errors": []}
    try:
        rdma["devices"] = sorted(p.name for p in Path(sysfs_ib).iterdir())
    except OSError:
        pass
    if rdma["ibstat"]:
        rc, out = runner(["ibstat"])
        try:
            for ca in P.parse_ibstat(out):
                for p in ca.ports:
                    rdma["ports"].append({"ca": ca.name, "port": p.port, "state": p.state,
                                          "physical_state": p.physical_state, "rate_gbps": p.rate_gbps,
                                          "link_layer": p.link_layer})
        except P.ParseError as exc:
            rdma["errors"].append(str(exc))
    facts["rdma"] = rdma
    facts["torch"] = torch_info() if torch_info else {"installed": None}
    try:
        facts["profile"] = machine_profile(facts)
    except (KeyError, ValueError, TypeError) as exc:  # a profile is advice; never crash the report
        facts["profile"] = {"case": "unknown", "summary": f"topology not classified: {exc}"}
    return facts


# PyTorch's CUDA wheel variants (pytorch.org "Get Started" selector and the release notes of
# torch 2.5-2.9: cu118, cu121, cu124, cu126, cu128, cu129, cu130), newest first.
TORCH_CUDA_WHEELS = ("13.0", "12.9", "12.8", "12.6", "12.4", "12.1", "11.8")


def torch_wheel_for_driver(driver: str) -> str | None:
    """The newest torch CUDA wheel ('cu126', ...) whose toolkit the driver fully supports (Table 3),
    over every variant PyTorch has ever published (:data:`TORCH_CUDA_WHEELS`) — some exist only for
    old torch releases (cu124: torch <= 2.6). For the course's torch use :func:`recommended_torch_wheel`."""
    from .. import inventory

    for v in TORCH_CUDA_WHEELS:
        try:
            if inventory.cuda_driver_status(driver, v)["status"] == "ok":
                return "cu" + v.replace(".", "")
        except (KeyError, ValueError, inventory.InventoryParseError):
            continue
    return None


# The CUDA builds of the torch release this course pins (Makefile TORCH_CPU_VERSION = 2.13.0), which
# `make gpu CUDA=...` installs from https://download.pytorch.org/whl/<wheel>: PyTorch RELEASE.md,
# "Release Compatibility Matrix", row 2.13 (pytorch/pytorch PR #187075): stable CUDA 12.6 and 13.0,
# experimental 13.2. There are no cu128/cu129 wheels since torch 2.12 (RFC pytorch/pytorch#178665),
# so `--index-url .../whl/cu128` silently installs an older torch (2.11). Architectures, same file,
# "PyTorch CUDA Support Matrix" (2.12-2.14): 12.6.3 builds Maxwell 5.0 ... Hopper 9.0; 13.0 builds
# Turing 7.5 ... Blackwell — CUDA 13 has no pre-Turing targets, so a V100 (7.0) needs cu126 whatever
# the driver ("no kernel image is available for execution on the device" otherwise).
# (wheel tag, CUDA toolkit x.y looked up in NVIDIA Table 3 / Table 2, lowest compute capability built)
COURSE_TORCH_WHEELS = (("cu130", "13.0", 7.5), ("cu126", "12.6", 5.0))


def recommended_torch_wheel(driver: str | None, compute_caps=()) -> dict | None:
    """Which of the course's torch CUDA builds runs on this driver (and these GPUs).

    Newest first, the first wheel whose toolkit the driver FULLY supports (NVIDIA CUDA Toolkit
    Release Notes, Table 3: CUDA 13.0 GA needs >= 580.65.06, CUDA 12.6 GA >= 560.28.03; course table
    labutil/data/cuda_compat.toml); else the first it runs under minor-version compatibility
    (Table 2 / NVIDIA "CUDA Compatibility", Minor Version Compatibility: CUDA 12.x on 525 <= driver
    < 580, i.e. >= 525.60.13; CUDA 13.x needs >= 580 — no 13.x wheel below it). Wheels without
    kernels for the oldest GPU's compute capability are skipped. Returns {'wheel', 'cuda', 'support'
    ('full' | 'minor-compat'), 'min_driver', 'make'} or None when the driver is too old for all.
    """
    if not driver:
        return None
    from .. import inventory

    caps = [float(c) for c in (compute_caps or ()) if c is not None]
    oldest = min(caps) if caps else None
    fits = [w for w in COURSE_TORCH_WHEELS if oldest is None or oldest >= w[2]]
    best = {}
    for wheel, cuda, _arch in fits:
        try:
            st = inventory.cuda_driver_status(str(driver), cuda)
        except (KeyError, ValueError, inventory.InventoryParseError):
            return None  # not a driver version this table can read
        if st["status"] in ("ok", "minor-compat") and st["status"] not in best:
            best[st["status"]] = {"wheel": wheel, "cuda": cuda, "min_driver": st["min_driver"],
                                  "support": "full" if st["status"] == "ok" else "minor-compat",
                                  "make": f"make gpu CUDA={wheel}"}
    return best.get("ok") or best.get("minor-compat")


def _wheel_advice(driver, compute_caps=()) -> str:
    rec = recommended_torch_wheel(driver, compute_caps)
    if rec is None:
        return (f"no torch CUDA build of this course runs on driver {driver}: upgrade the driver to >= 560.28.03 "
                "(CUDA 12.6, NVIDIA Table 3) or >= 580.65.06 (CUDA 13.0)")
    how = (f"`{rec['make']}` (= pip install \"torch>=2.7.1,<3\" --index-url https://download.pytorch.org/whl/"
           f"{rec['wheel']})")
    if rec["support"] == "full":
        return f"the torch build for driver {driver} is {how}: CUDA {rec['cuda']} needs >= {rec['min_driver']} (NVIDIA Table 3)"
    return (f"the torch build for driver {driver} is {how}, which runs under CUDA minor-version compatibility (no PTX "
            f"JIT, some newer APIs fail); full support needs driver >= {rec['min_driver']} (NVIDIA Table 3)")


def driver_finding(driver: str | None, torch_cuda: str | None, compute_caps=()) -> Finding | None:
    """Is the driver new enough for the CUDA that torch was built with? (course table cuda_compat.toml)."""
    if not driver or not torch_cuda:
        return None
    from .. import inventory

    try:
        st = inventory.cuda_driver_status(str(driver), str(torch_cuda))
    except (KeyError, ValueError, inventory.InventoryParseError):
        return Finding("info", "torch", "cuda_driver", f"CUDA {torch_cuda} of torch is not in the course's "
                       "CUDA/driver table (labutil/data/cuda_compat.toml); cannot check the driver", driver, None)
    if st["status"] == "ok":
        return None
    fix = f"either upgrade the driver to >= {st['min_driver']}, or install another build: {_wheel_advice(driver, compute_caps)}"
    if st["status"] == "minor-compat":
        return Finding("warning", "torch", "cuda_driver",
                       f"driver {driver} is older than {st['label']} needs ({st['min_driver']}, NVIDIA Table 3), which "
                       f"torch was built with; it runs under minor-version compatibility (no PTX JIT, some APIs "
                       f"fail): {fix}", driver, f">= {st['min_driver']}")
    return Finding("critical", "torch", "cuda_driver",
                   f"driver {driver} cannot run {st['label']} of this torch build (needs >= {st['min_driver']}; below the "
                   f"CUDA {str(torch_cuda).split('.')[0]}.x floor {st.get('floor')}): CUDA init will fail. {fix}",
                   driver, f">= {st['min_driver']}")


def findings(facts: dict) -> list[Finding]:
    """Course findings from the facts (see module docstring for the thresholds' sources)."""
    out: list[Finding] = []
    gpu, rdma, tinfo = facts.get("gpu", {}), facts.get("rdma", {}), facts.get("torch", {})
    n_gpu = len(gpu.get("gpus") or [])
    if not gpu.get("nvidia_smi"):
        out.append(Finding("info", "GPU", "nvidia-smi", "no nvidia-smi: no NVIDIA driver here; the labs run their "
                           "clearly labelled CPU path (gloo, 2 ranks)", None, "nvidia-smi"))
    elif n_gpu == 0:
        out.append(Finding("warning", "GPU", "gpus", "nvidia-smi is installed but lists no GPU: "
                           + "; ".join(gpu.get("errors") or ["driver not loaded?"]), 0, ">= 1"))
    for e in gpu.get("errors") or []:
        if n_gpu:
            out.append(Finding("warning", "GPU", "nvidia-smi", e))
    if tinfo.get("installed") is False:
        out.append(Finding("warning", "torch", "import", f"torch is not importable ({tinfo.get('error')}); "
                           "the NCCL labs need it", None, "torch"))
    elif tinfo.get("installed"):
        if n_gpu and not tinfo.get("cuda_available"):
            fix = _wheel_advice(gpu["driver"], gpu.get("compute_caps")) if gpu.get("driver") else \
                "install the CUDA build of torch (README: 选择 torch 版本)"
            out.append(Finding("critical", "torch", "cuda", f"GPUs present but torch {tinfo.get('version')} "
                               f"sees no CUDA (CUDA build: {tinfo.get('cuda_build')}): {fix}", False, True))
        if tinfo.get("error"):
            out.append(Finding("warning", "torch", "cuda", tinfo["error"]))
        f = driver_finding(gpu.get("driver"), tinfo.get("cuda_build"), gpu.get("compute_caps"))
        if f is not None and n_gpu:
            out.append(f)
    if n_gpu and gpu.get("driver"):
        rec = recommended_torch_wheel(gpu["driver"], gpu.get("compute_caps"))
        out.append(Finding("info" if rec else "warning", "torch", "wheel_for_driver",
                           _wheel_advice(gpu["driver"], gpu.get("compute_caps")),
                           rec["wheel"] if rec else None, "cu130 | cu126"))
    shm = facts.get("shm_bytes")
    if shm is not None and shm <= SHM_MIN_BYTES:
        out.append(Finding("warning", "/dev/shm", "shm_size", f"/dev/shm is {shm / 2**20:.0f} MiB: NCCL's SHM "
                           "transport fails ('No space left on device'); run the container with --shm-size=1g or "
                           "--ipc=host", shm, f"> {SHM_MIN_BYTES}"))
    logical, ram = facts.get("cpu_cores"), facts.get("ram_gb")
    phys = facts.get("cpu_physical_cores")
    cores = phys or logical
    if n_gpu and cores and cores / n_gpu < CORES_PER_GPU:
        kind = (f"physical cores ({logical} logical CPUs)" if phys and logical and logical != phys else
                "physical cores" if phys else "logical CPUs (physical cores unknown)")
        # info, not warning: the rule depends on the workload (ch09 misconception 1; ch18's model)
        out.append(Finding("info", "CPU", "cores_per_gpu", f"{cores / n_gpu:.1f} {kind} per GPU, below the "
                           f"{CORES_PER_GPU}-physical-core rule of thumb: enough for LLM training on pre-tokenised "
                           "data, possibly too few for CPU-side image decoding (ch09, ch18)", round(cores / n_gpu, 1),
                           f">= {CORES_PER_GPU}"))
    if n_gpu and ram and ram / n_gpu < RAM_GB_PER_GPU:
        out.append(Finding("warning", "RAM", "ram_per_gpu", f"{ram / n_gpu:.0f} GB RAM per GPU (< {RAM_GB_PER_GPU})",
                           round(ram / n_gpu, 1), f">= {RAM_GB_PER_GPU}"))
    if not rdma.get("devices") and not rdma.get("ports"):
        out.append(Finding("info", "RDMA", "devices", "no RDMA device (/sys/class/infiniband is empty): multi-node "
                           "NCCL would fall back to TCP sockets", 0, ">= 1"))
    for p in rdma.get("ports") or []:
        comp = f"{p['ca']} port {p['port']}"
        if (p.get("state") or "").lower() != "active":
            out.append(Finding("critical", comp, "ib_state", f"port state {p.get('state')}", p.get("state"), "Active"))
        elif (p.get("physical_state") or "").lower() != "linkup":
            out.append(Finding("critical", comp, "ib_physical_state", f"physical state {p.get('physical_state')}",
                               p.get("physical_state"), "LinkUp"))
    for e in rdma.get("errors") or []:
        out.append(Finding("warning", "RDMA", "ibstat", e))
    return out


def render(facts: dict, found: list[Finding]) -> str:
    gpu, tinfo, rdma = facts["gpu"], facts["torch"], facts["rdma"]
    lines = ["labutil doctor — environment report", "",
             f"host        {facts['host']}  ({facts['os']}, Python {facts['python']})",
             f"CPU cores   {facts['cpu_cores']} logical" + (f", {facts['cpu_physical_cores']} physical"
                                                            if facts.get("cpu_physical_cores") else ""),
             f"RAM         {facts['ram_gb']:.1f} GB" if facts.get("ram_gb") else "RAM         unknown",
             f"/dev/shm    {facts['shm_bytes'] / 2**30:.2f} GiB" if facts.get("shm_bytes") else "/dev/shm    unknown"]
    if gpu["gpus"]:
        lines.append(f"driver      {gpu['driver']}   CUDA (driver) {gpu['cuda']}")
        for g in gpu["gpus"]:
            lines.append(f"GPU{g.get('index')}        {g.get('name')}  {g.get('memory.total')} MiB  {g.get('pci.bus_id')}")
        if gpu.get("gpu_nic"):
            lines.append("GPU -> NIC  " + ", ".join(f"{k}->{v[0]} ({v[1]})" for k, v in gpu["gpu_nic"].items()))
    else:
        lines.append("GPUs        none found")
    if tinfo.get("installed"):
        lines.append(f"torch       {tinfo['version']}  CUDA build {tinfo['cuda_build']}  CUDA available "
                     f"{tinfo.get('cuda_available')}  NCCL {tinfo.get('nccl_version') or tinfo.get('nccl_note') or None}")
    else:
        lines.append("torch       not installed")
    if gpu["gpus"] and gpu.get("driver"):
        rec = recommended_torch_wheel(gpu["driver"], gpu.get("compute_caps"))
        lines.append("torch wheel " + (f"{rec['make']} ({'full support' if rec['support'] == 'full' else 'minor-version compatibility'}"
                                        f", CUDA {rec['cuda']})" if rec else "none for this driver: upgrade it"))
    lines.append(f"RDMA        {', '.join(rdma['devices']) or 'none'}")
    for p in rdma["ports"]:
        lines.append(f"  {p['ca']} port {p['port']}: {p['state']}/{p['physical_state']} {p['rate_gbps']} Gb/s "
                     f"{p['link_layer']}")
    prof = facts.get("profile") or {}
    if prof:
        lines.append(f"lab case    {prof.get('case')}: {prof.get('summary')}")
        if prof.get("nic_gbps"):
            lines.append(f"NICs        {prof.get('nics_active')} active, {prof['nic_gbps']:g} Gb/s each")
        try:
            bw = expected_busbw_gbs(prof, "all_reduce") if prof.get("case") in ("pcie", "nvlink") else None
        except (KeyError, ValueError, TypeError):
            bw = None
        if bw is not None:
            lines.append(f"expected    all_reduce busbw on {prof['n_gpus']} GPUs ~ {bw:.0f} GB/s (labutil.cluster model)")
    if facts["nccl_env"]:
        lines.append("NCCL env    " + " ".join(f"{k}={v}" for k, v in facts["nccl_env"].items()))
    rep = health.Report(found, ["doctor"])
    lines += ["", rep.text()]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m labutil doctor", description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true", help="print facts and findings as JSON")
    ap.add_argument("--no-torch", action="store_true", help="do not import torch (faster)")
    args = ap.parse_args(argv)
    facts = collect(torch_info=None if args.no_torch else _torch_info)
    found = findings(facts)
    text = (json.dumps({"facts": facts, "findings": [asdict(f) for f in found],
                        "status": health.Report(found).status}, indent=2, default=str)
            if args.json else render(facts, found))
    try:
        print(text, flush=True)
    except BrokenPipeError:  # `doctor | head`: the reader left; no traceback (Python docs, "Note on SIGPIPE")
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
