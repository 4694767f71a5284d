"""Server node design: per-GPU ratios, the GPU <-> NIC PCIe data path, GPUDirect RDMA, NUMA affinity.

Taught in ch09 服务器节点设计. Reuses the catalog (``hardware``), link rates (``links``), the
data-loading model (``dataloading``), ZeRO's memory multiplier (``memory``) and the parsed
``nvidia-smi topo -m`` matrix (``parsers.parse_nvidia_smi_topo``).

Formulas and sources
--------------------
- Seed 003 (误区三) rule of thumb: >= 16 physical cores and >= 256 GB RAM per GPU
  (``RULE_CORES_PER_GPU``, ``RULE_RAM_GB_PER_GPU``); ``server_ratios`` checks catalog servers.
- PCIe per direction: ``links.pcie_gbs`` (GT/s x encoding x lanes / 8, PCI-SIG base specs).
- A NIC in a PCIe slot delivers ``min(line rate / 8, slot GB/s)``.
- GPUDirect RDMA: NCCL enables it when the GPU-NIC path is at most ``PXB`` (NVIDIA/nccl
  ``src/graph/paths.cc``, ``ncclTopoCheckGdr``: ``netGdrLevel = PATH_PXB`` on PCIe systems,
  overridable with ``NCCL_NET_GDR_LEVEL``). Without it, every byte is staged in host memory:
  sent data goes GPU -> host (up the switch's uplink) and host -> NIC (down the uplink), received
  data the reverse, so with traffic in both directions each direction of the uplink carries 2x the
  network rate, and host DRAM sees a write and a read of every byte in each direction. This is the
  data-path argument of NVIDIA's GPUDirect RDMA documentation ("Overview": the NIC reads and writes
  GPU memory directly instead of through a bounce buffer in system memory).
- Host RAM for fine-tuning with ZeRO-Offload: fp32 master weights + Adam momentum + variance
  (K = 12 B/param, ZeRO §3.1, ``memory.optimizer_k``) + fp16 gradients (2 B/param) live in host
  memory (Ren et al. 2021, "ZeRO-Offload: Democratizing Billion-Scale Model Training", USENIX ATC,
  §4.1 / Fig. 2: gradients, optimizer states and fp32 parameters are offloaded to the CPU).
"""

from __future__ import annotations

import re

import numpy as np

from . import hardware, links, memory, validate
from .parsers._common import ParseError
from .units import BITS_PER_BYTE, BYTES_PER_GB

__all__ = ["RULE_CORES_PER_GPU", "RULE_RAM_GB_PER_GPU", "LINK_CODES", "GDR_MAX_LINK", "server_ratios",
           "server_table", "nic_slot", "gdr_enabled", "gpu_nic_path", "parse_cpu_list", "numactl_command",
           "affinity_plan", "nic_roles", "nccl_ib_hca", "sequential_mapping_mismatches", "offload_host_ram_gb",
           "XEON_8480_DRAM_GBS_PER_SOCKET"]

#: Seed 003, 1.5 误区三: "每张GPU至少配16个物理核心和256GB内存".
RULE_CORES_PER_GPU = 16
RULE_RAM_GB_PER_GPU = 256.0

#: Peak DRAM bandwidth of one Xeon Platinum 8480C/8480+ socket (DGX H100's CPU): 8 channels of
#: DDR5-4800 (Intel ARK, Xeon Platinum 8480+ "Max # of Memory Channels 8", "DDR5 4800") x 8 B
#: per transfer = 307.2 GB/s. Measured STREAM rates are lower (typically 70-80 % of peak).
XEON_8480_DRAM_GBS_PER_SOCKET = 8 * 4800e6 * 8 / BYTES_PER_GB

#: ``nvidia-smi topo -m`` link codes from closest to farthest (its Legend; NVML nvmlGpuTopologyLevel_t).
LINK_CODES = ("PIX", "PXB", "PHB", "NODE", "SYS")
#: NCCL's default GPUDirect RDMA distance limit on PCIe systems (paths.cc, ncclTopoCheckGdr).
GDR_MAX_LINK = "PXB"


def _gen(gen) -> str:
    g = validate.integer("pcie_gen", gen, lo=1, hi=6)
    return f"gen{int(g)}"


# ------------------------------------------------------------------------------ per-GPU ratios
def server_ratios(name: str) -> dict:
    """Per-GPU resources of a catalog server and whether it meets seed 003's 16-core / 256 GB rule.

    Keys: server, gpu, gpus, cpu, cores_per_gpu, ram_gb_per_gpu, hbm_gb_per_gpu, ram_to_hbm,
    nic_gbps_per_gpu, nic_pcie (e.g. 'Gen5 x16'), nvlink_gbs (bidirectional, catalog),
    nvlink_dir_gbs (per direction), meets_core_rule, meets_ram_rule.
    """
    s = hardware.server(name)
    g = s.gpu_spec
    n = s.nic_spec
    cores = s.cpu_cores / s.gpus
    ram = s.ram_gb / s.gpus
    return {
        "server": s.name, "gpu": g.name, "gpus": s.gpus, "cpu": s.cpu,
        "cores_per_gpu": cores, "ram_gb_per_gpu": ram, "hbm_gb_per_gpu": g.hbm_gb,
        "ram_to_hbm": ram / g.hbm_gb,
        "nic_gbps_per_gpu": n.port_gbps * n.ports * s.compute_nics / s.gpus,
        "nic_pcie": f"Gen{n.pcie_gen} x{n.pcie_lanes}",
        "nvlink_gbs": g.nvlink_gbs, "nvlink_dir_gbs": g.nvlink_gbs / 2.0,
        "meets_core_rule": cores >= RULE_CORES_PER_GPU, "meets_ram_rule": ram >= RULE_RAM_GB_PER_GPU,
    }


def server_table(names=None) -> list[dict]:
    """``server_ratios`` for several catalog servers (all of them by default)."""
    return [server_ratios(n) for n in (names or hardware.servers())]


# ------------------------------------------------------------------------------ PCIe and the NIC
def nic_slot(nic_gbps, pcie_gen, lanes=16) -> dict:
    """What a NIC of ``nic_gbps`` line rate delivers in a PCIe ``pcie_gen`` x ``lanes`` slot.

    Returns nic_gbs (line rate / 8), slot_gbs (``links.pcie_gbs``, per direction),
    delivered_gbs = min of the two, fraction = delivered / nic_gbs. Vectorised over nic_gbps/lanes.
    E.g. 400G in Gen4 x16: 31.5 of 50 GB/s (63 %); in Gen5 x16: 50 of 50 GB/s.
    """
    r = validate.positive("nic_gbps", nic_gbps)
    slot = links.pcie_gbs(_gen(pcie_gen), lanes)
    nic_gbs = np.asarray(r, dtype=float) / BITS_PER_BYTE
    delivered = np.minimum(nic_gbs, slot)
    scalar = np.ndim(nic_gbps) == 0 and np.ndim(lanes) == 0

    def f(x):
        return float(x) if scalar else np.asarray(x, dtype=float)

    return {"nic_gbs": f(nic_gbs), "slot_gbs": f(slot), "delivered_gbs": f(delivered),
            "fraction": f(delivered / nic_gbs)}


def gdr_enabled(link: str, gdr_level: str = GDR_MAX_LINK) -> bool:
    """Whether NCCL uses GPUDirect RDMA for a GPU-NIC path of ``nvidia-smi topo`` code ``link``.

    True when ``link`` is no farther than ``gdr_level`` (default PXB, NCCL's default; set with
    ``NCCL_NET_GDR_LEVEL``). Order: PIX < PXB < PHB < NODE < SYS.
    """
    validate.choice("link", link, LINK_CODES)
    validate.choice("gdr_level", gdr_level, LINK_CODES)
    return LINK_CODES.index(link) <= LINK_CODES.index(gdr_level)


def gpu_nic_path(nic_gbps=400.0, *, nic_pcie_gen=5, gpu_pcie_gen=5, uplink_pcie_gen=5, lanes=16,
                 link: str = "PIX", gdr: bool = True, bidirectional: bool = True,
                 gdr_level: str = GDR_MAX_LINK) -> dict:
    """Network rate one GPU gets through its NIC, per direction, and which link limits it.

    Stages (GB/s per direction): NIC line rate, the NIC's PCIe slot, the GPU's PCIe link, and,
    when data is staged in host memory (``gdr`` off, or the path farther than ``gdr_level``), the
    PCIe switch's uplink to the CPU, which then carries every byte twice per direction when
    ``bidirectional`` (send and receive at once, as in ring all-reduce), once otherwise.
    The rate is the minimum (``bottleneck`` names it). ``host_dram_gbs`` is the host memory
    traffic this GPU's network stream causes (0 with GPUDirect RDMA; write + read of every byte
    per direction when staged). Vectorised over ``nic_gbps``.
    """
    validate.choice("link", link, LINK_CODES)
    nic = nic_slot(nic_gbps, nic_pcie_gen, lanes)
    gpu_gbs = links.pcie_gbs(_gen(gpu_pcie_gen), lanes)
    uplink = links.pcie_gbs(_gen(uplink_pcie_gen), lanes)
    direct = bool(gdr) and gdr_enabled(link, gdr_level)
    dirs = 2.0 if bidirectional else 1.0
    stages = {"NIC line rate": nic["nic_gbs"], "NIC PCIe slot": nic["slot_gbs"], "GPU PCIe link": gpu_gbs}
    if not direct:
        stages["host bounce (uplink)"] = uplink / dirs
    stack = np.stack(np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in stages.values())))
    rate = stack.min(axis=0)
    names = np.array(list(stages))[stack.argmin(axis=0)]
    dram = np.zeros_like(rate) if direct else 2.0 * dirs * rate
    scalar = np.ndim(nic_gbps) == 0

    def f(x):
        return float(x) if scalar else np.asarray(x, dtype=float)

    return {"stages_gbs": {k: f(v) for k, v in stages.items()}, "rate_gbs": f(rate),
            "bottleneck": str(names) if scalar else names, "gdr": direct,
            "fraction_of_nic": f(rate / np.asarray(nic["nic_gbs"])), "host_dram_gbs": f(dram),
            "uplink_gbs": uplink}


# ------------------------------------------------------------------------------ NUMA affinity
_CPU_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


_MAX_CPU_ID = 65536


def parse_cpu_list(text: str) -> list[int]:
    """Linux cpulist ('0-55,112-167', as in ``nvidia-smi topo -m`` / ``lscpu``) -> sorted CPU ids.

    Raises :class:`labutil.parsers.ParseError` (a ValueError) on anything else (empty, 'N/A', reversed range, garbage).
    """
    if not isinstance(text, str) or not text.strip():
        raise ParseError(f"cpu list must be a non-empty string like '0-55,112-167'; got {text!r}")
    cpus: set[int] = set()
    for part in text.strip().split(","):
        m = _CPU_RANGE.match(part.strip())
        if not m:
            raise ParseError(f"cpu list {text!r}: cannot parse {part!r} (expected 'N' or 'N-M')")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise ParseError(f"cpu list {text!r}: range {part!r} is reversed")
        if hi >= _MAX_CPU_ID:  # a garbled number must not make a list of 10^20 CPUs
            raise ParseError(f"cpu list {text!r}: CPU id {hi} is not below {_MAX_CPU_ID} (Linux NR_CPUS is at most "
                             "8192 on x86-64, arch/x86/Kconfig)")
        cpus.update(range(lo, hi + 1))
    return sorted(cpus)


def numactl_command(numa_node: int, argv: list[str]) -> list[str]:
    """Argument list that runs ``argv`` bound to the cores and memory of ``numa_node``."""
    n = validate.integer("numa_node", numa_node, lo=0, hi=1023)
    if not isinstance(argv, (list, tuple)) or not argv or not all(isinstance(a, str) for a in argv):
        raise ValueError(f"argv must be a non-empty list of strings; got {argv!r}")
    return ["numactl", f"--cpunodebind={n}", f"--membind={n}", *argv]


def affinity_plan(topo, gdr_level: str = GDR_MAX_LINK) -> list[dict]:
    """One row per GPU of a parsed ``nvidia-smi topo -m``: its NIC, link, GDR, NUMA node and cores.

    nic / link: the closest NIC (``topo.nic_for_gpu``, the choice NCCL makes); gdr: whether NCCL
    enables GPUDirect RDMA on that path (``gdr_enabled``); numa / cpus / n_cpus: from the CPU and
    NUMA Affinity columns; shared_nic: how many GPUs have the same closest NIC; advice: 'ok' or why not.
    """
    rows = []
    nic_users: dict[str, int] = {}
    pairs = topo.gpu_nic_map()
    for nic, _ in pairs.values():
        nic_users[nic] = nic_users.get(nic, 0) + 1
    for g, (nic, link) in pairs.items():
        cpus_txt = topo.cpu_affinity.get(g)
        cpus = parse_cpu_list(cpus_txt) if cpus_txt and cpus_txt != "N/A" else []
        code = link if link in LINK_CODES else "SYS"
        gdr = gdr_enabled(code, gdr_level)
        problems = []
        if not gdr:
            problems.append(f"{link} path: no GPUDirect RDMA (staged through host memory)")
        if nic_users[nic] > 1:
            problems.append(f"{nic} shared by {nic_users[nic]} GPUs")
        rows.append({"gpu": g, "nic": nic, "link": link, "gdr": gdr, "numa": topo.numa_affinity.get(g),
                     "cpus": cpus_txt or "", "n_cpus": len(cpus), "shared_nic": nic_users[nic],
                     "advice": "; ".join(problems) or "ok"})
    return rows


def nic_roles(topo) -> list[dict]:
    """One row per NIC of a parsed ``nvidia-smi topo -m``: which GPU uses it, and its PIX partners.

    gpu: the GPU whose closest NIC this is (``topo.nic_for_gpu``), or None; pix_partners: NICs at
    ``PIX`` distance from it (two ports of one dual-port card, or NICs under one PCIe switch);
    role: 'compute (GPUk)' for a NIC that a GPU picks, otherwise 'not next to a GPU' (on a DGX H100
    these are the two dual-port ConnectX-7 cards for storage and in-band management, DGX H100 User
    Guide "Network Ports"): such ports must be left out of ``NCCL_IB_HCA`` or given their own role.
    """
    users: dict[str, list[str]] = {}
    for g, (nic, _link) in topo.gpu_nic_map().items():
        users.setdefault(nic, []).append(g)
    rows = []
    for n in topo.nics:
        name = topo.nic_name(n)
        partners = [topo.nic_name(m) for m in topo.nics if m != n and topo.link(n, m) == "PIX"]
        gpus = users.get(name, [])
        rows.append({"nic": name, "column": n, "gpu": ", ".join(gpus) or None,
                     "link": topo.link(gpus[0], n) if gpus else None, "pix_partners": partners,
                     "role": f"compute ({', '.join(gpus)})" if gpus else "not next to a GPU"})
    return rows


def nccl_ib_hca(topo) -> str:
    """The ``NCCL_IB_HCA`` value that lists exactly the NICs the GPUs use, in GPU order
    ('mlx5_0,mlx5_3,...'): the storage / in-band ports stay out of the collective traffic."""
    seen: list[str] = []
    for nic, _link in topo.gpu_nic_map().values():
        if nic not in seen:
            seen.append(nic)
    return ",".join(seen)


def sequential_mapping_mismatches(topo) -> list[tuple[str, str]]:
    """(GPU, its NIC) pairs where the NIC is NOT the same-numbered one (GPUi -> mlx5_i), i.e. where a
    script that assumes 'GPU i uses mlx5_i' would pick a far NIC."""
    out = []
    for g, (nic, _link) in topo.gpu_nic_map().items():
        m = re.search(r"(\d+)$", nic)  # mlx5_11 -> 11
        if m is None or int(m.group(1)) != int(g[3:]):
            out.append((g, nic))
    return out


# ------------------------------------------------------------------------------ host RAM
def offload_host_ram_gb(params, optimizer: str = "adam", precision: str = "bf16", grad_bytes: float = 2.0):
    """Host RAM (GB) that ZeRO-Offload needs for a model of ``params`` parameters.

    (K + grad_bytes) x params: K = fp32 master + optimizer states (12 B for mixed-precision Adam,
    ``memory.optimizer_k``), plus the fp16/bf16 gradients (2 B) that are offloaded with them
    (Ren et al. 2021, ZeRO-Offload §4.1). 70B with Adam: 14 x 70e9 = 980 GB. Vectorised.
    """
    p = validate.positive("params", params)
    gb = validate.positive("grad_bytes", grad_bytes, allow_zero=True)
    return (memory.optimizer_k(optimizer, precision) + gb) * p / BYTES_PER_GB
