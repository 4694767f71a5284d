"""Cluster inventory: versions, BIOS settings and PCIe links per node, and the rules that check them.

Taught in ch19 上架与基础环境. Reuses ``labutil.health`` (:class:`~labutil.health.Finding`,
:class:`~labutil.health.Report`), ``labutil.links`` / ``labutil.node`` (PCIe and NIC-slot rates),
``labutil.power`` / ``labutil.hardware`` (rack power and rack units).

The inventory
-------------
A TOML document (``labutil/data/inventory_sample.toml`` is a 4-node DGX H100 example with planted
drift): ``[cluster]`` (name, catalog ``server``, ``nvswitch``), ``[baseline.bios]`` (the golden
BIOS settings) and one ``[[node]]`` per server with ``driver``, ``cuda`` (toolkit x.y.z),
``fabric_manager`` (+ ``fabric_manager_state``), ``ofed``, ``nccl``, firmware versions, a ``bios``
table and a ``pcie`` list (per device: capability ``cap_gen``/``cap_width`` = lspci ``LnkCap``,
trained ``sta_gen``/``sta_width`` = ``LnkSta``, NIC line rate ``rate_gbps``).
:func:`parse_inventory` raises :class:`InventoryParseError` (a ``labutil.parsers.ParseError``) with
one message naming the node and field on any malformed input.

Rules and sources (severities are COURSE POLICY, stated with each rule)
-----------------------------------------------------------------------
- driver <-> CUDA: NVIDIA CUDA Toolkit Release Notes, Table 3 "CUDA Toolkit and Corresponding
  Driver Versions" (full support needs driver >= the toolkit's minimum) and Table 2 (minor version
  compatibility: 12.x runs on >= 525.60.13 with limited function, e.g. no JIT of newer PTX).
  Data: ``labutil/data/cuda_compat.toml``. Below the minimum but within minor compatibility ->
  warning; below the major's floor -> critical (the runtime returns cudaErrorInsufficientDriver).
- fabric manager: on NVSwitch systems (HGX/DGX A100/H100) the nvidia-fabricmanager package version
  must equal the driver version (NVIDIA Fabric Manager User Guide; NVIDIA/yum-packaging-fabric-manager
  README: "the version of fabricmanager must match the NVIDIA driver installed"). A mismatch stops
  the service; without a running fabric manager the GPUs are not registered with the NVSwitch fabric
  and CUDA initialisation fails (cudaErrorSystemNotReady) -> critical, 0 usable GPUs on the node.
- PCIe link trained below its capability (lspci LnkSta < LnkCap): lost bandwidth from
  ``links.pcie_gbs`` (GPU) or ``node.nic_slot`` (NIC: min(line rate, slot)). Loss >= 20 % of the
  device's deliverable bandwidth -> critical, > 0 -> warning, a narrower link with no loss -> info.
- BIOS baseline (:data:`BIOS_RULES`): ACS left on across PCIe switches redirects peer-to-peer
  traffic to the root complex: "significant performance reduction or even a hang" (NCCL User Guide,
  Troubleshooting, "PCI Access Control Services (ACS)"); IOMMU / VT-d likewise (same section);
  Above-4G decoding (64-bit MMIO-high) is what lets the firmware place the GPUs' large BAR1
  windows (:func:`bar1_bytes`, :func:`mmio_high_bytes`): critical; Resizable BAR only matters for
  PCIe workstation/consumer GPUs whose default BAR1 is 256 MiB (SXM data-center GPUs already expose
  a full-size BAR1), so a ReBAR deviation is reported as info; max PCIe speed below Gen5 caps every
  device of the node.
- drift: the same component with more than one version across nodes -> warning on every node
  that differs from the majority (a heterogeneous cluster is the classic source of "works on 31 of
  32 nodes" NCCL hangs and hard-to-reproduce crashes).
"""

from __future__ import annotations

import math
import re
import tomllib
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import data_files, hardware, links, node as nodemodel, power, validate
from .health import Finding, Report
from .parsers import ParseError

__all__ = ["parse_nvidia_smi_pci", "InventoryParseError", "PcieDevice", "Node", "Inventory", "VERSION_FIELDS", "BIOS_RULES",
           "LOSS_CRITICAL_FRACTION", "parse_version", "compare_versions", "cuda_table", "cuda_min_driver",
           "cuda_driver_status", "driver_cuda_version", "parse_inventory", "load_inventory", "sample_text",
           "sample_inventory", "tool_sample", "link_bandwidth", "node_links", "usable_gpus",
           "check_cuda_driver", "check_fabric_manager", "check_pcie_links", "check_bios", "check_drift",
           "run_inventory_checks", "DRIFT_KINDS", "inject_drift", "parse_lspci_links", "parse_dmidecode_bios",
           "parse_ofed_info", "bar1_bytes", "mmio_high_bytes",
           "rack_layout", "RackItem"]


class InventoryParseError(ParseError):
    """An inventory (or lspci / dmidecode text) could not be parsed; the message names the field."""


#: Version fields every node carries (the software/firmware stack of ch03's "firmware" and "os_drivers" layers).
VERSION_FIELDS = ("driver", "cuda", "fabric_manager", "ofed", "nccl", "bios_version", "bmc_firmware",
                  "nic_firmware", "gpu_vbios")
_REQUIRED = ("hostname", "driver", "cuda")
DEVICE_KINDS = ("gpu", "nic", "nvme", "switch", "other")

#: A trained-down link losing at least this fraction of its deliverable bandwidth is critical (COURSE POLICY:
#: the acceptance band of ch23 passes at >= 80 % of expected busbw; a device below that fails the node).
LOSS_CRITICAL_FRACTION = 0.2

def bar1_bytes(memory_bytes) -> int:
    """Size of a GPU's BAR1 window that maps all of ``memory_bytes``: the next power of two (PCIe BARs are
    naturally aligned powers of two). 80 GB -> 128 GiB; 141 GB -> 256 GiB.

    >>> bar1_bytes(80e9) // 2**30
    128
    """
    m = validate.positive("memory_bytes", memory_bytes)
    return 1 << max(0, math.ceil(math.log2(m)))


def mmio_high_bytes(n_gpus: int, memory_bytes) -> int:
    """64-bit MMIO the firmware must find above 4 GB for ``n_gpus`` full-size BAR1 windows (GPUs only;
    NICs, NVMe and the NVSwitches add a little). Eight 80 GB GPUs: 1 TiB, 256 times the 32-bit space."""
    n = validate.integer("n_gpus", n_gpus, lo=1, hi=1 << 20)
    return n * bar1_bytes(memory_bytes)


#: BIOS settings checked against the baseline: setting -> (severity when it differs, reason, source).
BIOS_RULES = {
    "acs": ("critical", "PCIe ACS redirects GPU<->GPU and GPU<->NIC peer-to-peer traffic to the CPU root complex: "
                        "GPUDirect P2P/RDMA slows down severely or hangs",
            "NCCL User Guide, Troubleshooting: PCI Access Control Services (ACS)"),
    "iommu": ("warning", "IOMMU/VT-d translation can redirect PCIe peer traffic through the root complex "
                         "(use disabled or iommu=pt)",
              "NCCL User Guide, Troubleshooting: PCI Access Control Services (ACS) / IO virtualization"),
    "resizable_bar": ("info", "differs from the baseline profile, but costs nothing on SXM/HGX data-center GPUs: they "
                              "already expose a BAR1 as large as their memory without ReBAR (only PCIe workstation/"
                              "consumer GPUs default to a 256 MiB BAR1 and need ReBAR to map all of it); what fails "
                              "HGX boards is Above-4G decoding / too little 64-bit MMIO-high space",
                      "JuliaComputing/nvidia-driver-pcie-rebar README ('data center GPUs generally have BAR sizes that "
                      "match the size of video memory'); PCI-SIG Resizable BAR ECN"),
    "above_4g_decoding": ("critical", "each GPU's BAR1 is a power of two at least as large as its memory (128 GiB for "
                                      "an 80 GB GPU), so eight GPUs need about 1 TiB of 64-bit MMIO above 4 GB; without "
                                      "Above-4G decoding and enough MMIO-high space the BARs cannot be assigned ('NVRM: "
                                      "This PCI I/O region assigned to your NVIDIA device is invalid') or the GPUs do "
                                      "not enumerate",
                          "PCI Express Base Specification (BARs are naturally aligned powers of two); PCI Firmware "
                          "Specification (64-bit MMIO); NVIDIA HGX platform BIOS requirements"),
    "pcie_max_speed": ("critical", "the root ports' maximum link speed caps every GPU and NIC of the node",
                       "PCI-SIG PCI Express Base Specification 5.0 (32 GT/s)"),
}


# ------------------------------------------------------------------------------------------ versions
_VERSION = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


def parse_version(text) -> tuple[int, ...]:
    """'550.54.15' -> (550, 54, 15); '24.01-0.3.3.1' -> (24, 1, 0, 3, 3, 1); 'MLNX_OFED_LINUX-24.01-0.3.3.1' too.

    Raises InventoryParseError when ``text`` contains no number.
    """
    if not isinstance(text, str):
        raise InventoryParseError(f"version must be a string like '550.54.15'; got {text!r}")
    s = text.strip()
    m = re.search(r"\d+(?:[.\-]\d+)*", s)
    if not m:
        raise InventoryParseError(f"version {text!r} contains no number (expected e.g. '550.54.15')")
    return tuple(int(p) for p in re.split(r"[.\-]", m.group(0)))


def compare_versions(a: str, b: str) -> int:
    """-1, 0 or 1 as version ``a`` is older than, equal to or newer than ``b`` (missing parts count as 0)."""
    va, vb = parse_version(a), parse_version(b)
    n = max(len(va), len(vb))
    va, vb = va + (0,) * (n - len(va)), vb + (0,) * (n - len(vb))
    return (va > vb) - (va < vb)


def _compat() -> dict:
    return data_files.load("cuda_compat.toml")


def cuda_table() -> list[dict]:
    """Rows of NVIDIA's Table 3 (oldest first): version, label, linux_min_driver, windows_min_driver."""
    return sorted(_compat()["toolkit"], key=lambda r: parse_version(r["version"]))


def _cuda_key(cuda: str) -> tuple[int, int, int]:
    if not isinstance(cuda, str):
        raise ValueError(f"cuda must be a toolkit version string like '12.4' or '12.4.1'; got {cuda!r}")
    try:
        v = parse_version(cuda)
    except InventoryParseError:
        raise ValueError(f"cuda must be a toolkit version 'major.minor[.update]' like '12.4.1'; got {cuda!r}") from None
    if len(v) < 2:
        raise ValueError(f"cuda must be a toolkit version 'major.minor[.update]' like '12.4.1'; got {cuda!r}")
    return (v[0], v[1], v[2] if len(v) > 2 else 0)


def cuda_min_driver(cuda: str, platform: str = "linux") -> dict:
    """Minimum driver for CUDA toolkit ``cuda`` ('12.4' = 12.4 GA, '12.4.1' = 12.4 Update 1), NVIDIA Table 3.

    An update not listed in the table (e.g. 12.3.2) takes the row of the newest listed update of the
    same minor release at or below it. Returns {'label', 'version', 'min_driver', 'source'}.
    Raises KeyError (closest known versions) for a minor release not in the table.
    """
    validate.choice("platform", platform, ("linux", "windows"))
    key = _cuda_key(cuda)
    rows = [r for r in cuda_table() if parse_version(r["version"])[:2] == key[:2]
            and parse_version(r["version"])[2] <= key[2]]
    if not rows:
        known = sorted({".".join(map(str, parse_version(r["version"])[:2])) for r in cuda_table()})
        raise validate.unknown_name("CUDA toolkit release", cuda, known)
    row = rows[-1]
    drv = row[f"{platform}_min_driver"]
    if not drv:
        raise KeyError(f"NVIDIA Table 3 lists no {platform} driver for {row['label']}")
    return {"label": row["label"], "version": row["version"], "min_driver": drv, "source": _compat()["source"]}


def _minor_floor(major: int) -> dict | None:
    for r in _compat()["minor_compat"]:
        if r["major"] == major:
            return r
    return None


def cuda_driver_status(driver: str, cuda: str) -> dict:
    """Can driver ``driver`` run CUDA toolkit ``cuda``? (Linux, NVIDIA Tables 2 and 3.)

    status: 'ok' (driver >= Table 3 minimum), 'minor-compat' (below it but >= the major's Table 2
    floor and below the next major's branch: runs with limited function), or 'unsupported'.
    """
    need = cuda_min_driver(cuda)
    if compare_versions(driver, need["min_driver"]) >= 0:
        return {"status": "ok", **need}
    floor = _minor_floor(_cuda_key(cuda)[0])
    if floor and compare_versions(driver, floor["min_driver"]) >= 0:
        return {"status": "minor-compat", "floor": floor["min_driver"], **need}
    return {"status": "unsupported", "floor": floor["min_driver"] if floor else None, **need}


def driver_cuda_version(driver: str) -> str:
    """Newest toolkit 'major.minor' whose Table 3 minimum driver is <= ``driver`` (what the driver fully supports;
    close to the 'CUDA Version' that nvidia-smi prints, which is the driver's CUDA API version)."""
    ok = [r for r in cuda_table() if compare_versions(driver, r["linux_min_driver"]) >= 0]
    if not ok:
        raise ValueError(f"driver {driver!r} is older than every toolkit in NVIDIA Table 3 (oldest: "
                         f"{cuda_table()[0]['label']} >= {cuda_table()[0]['linux_min_driver']})")
    v = parse_version(ok[-1]["version"])
    return f"{v[0]}.{v[1]}"


# ------------------------------------------------------------------------------------------ the model
@dataclass(frozen=True)
class PcieDevice:
    """One PCIe endpoint: capability (LnkCap) and trained link (LnkSta)."""

    name: str
    kind: str
    bdf: str
    cap_gen: int
    cap_width: int
    sta_gen: int
    sta_width: int
    rate_gbps: float | None = None   # NIC line rate; None for GPUs / NVMe

    @property
    def downtrained(self) -> bool:
        return self.sta_gen < self.cap_gen or self.sta_width < self.cap_width


@dataclass(frozen=True)
class Node:
    hostname: str
    versions: dict
    bios: dict
    pcie: tuple[PcieDevice, ...] = ()
    rack: str = ""
    rack_u: int | None = None
    fabric_manager_state: str | None = None

    def version(self, name: str) -> str | None:
        validate.choice("version name", name, VERSION_FIELDS)
        return self.versions.get(name)

    @property
    def gpus(self) -> int:
        return sum(d.kind == "gpu" for d in self.pcie)


@dataclass(frozen=True)
class Inventory:
    name: str
    server: str
    nvswitch: bool
    baseline_bios: dict
    nodes: tuple[Node, ...]
    source: str = ""

    @property
    def hostnames(self) -> list[str]:
        return [n.hostname for n in self.nodes]

    def node(self, hostname: str) -> Node:
        for n in self.nodes:
            if n.hostname == hostname:
                return n
        raise validate.unknown_name("node", hostname, self.hostnames)


def _field(d: dict, key: str, where: str, types, required: bool = True):
    if key not in d:
        if required:
            raise InventoryParseError(f"inventory: {where} is missing required field '{key}'")
        return None
    v = d[key]
    accepted = types if isinstance(types, tuple) else (types,)
    if not isinstance(v, accepted) or (isinstance(v, bool) and bool not in accepted):
        raise InventoryParseError(f"inventory: {where} field '{key}' must be {getattr(types, '__name__', types)}; got {v!r}")
    return v


def _device(d, where: str) -> PcieDevice:
    if not isinstance(d, dict):
        raise InventoryParseError(f"inventory: {where} must be a table like {{ name = 'GPU0', kind = 'gpu', ... }}; got {d!r}")
    name = _field(d, "name", where, str)
    w = f"{where} ({name})"
    kind = _field(d, "kind", w, str)
    if kind not in DEVICE_KINDS:
        raise InventoryParseError(f"inventory: {w} kind must be one of {list(DEVICE_KINDS)}; got {kind!r}")
    vals = {}
    for k, lo, hi in (("cap_gen", 1, 6), ("sta_gen", 1, 6), ("cap_width", 1, 32), ("sta_width", 1, 32)):
        v = _field(d, k, w, int)
        if isinstance(v, bool) or not lo <= v <= hi:
            raise InventoryParseError(f"inventory: {w} field '{k}' must be an integer in [{lo}, {hi}]; got {v!r}")
        vals[k] = v
    rate = _field(d, "rate_gbps", w, (int, float), required=False)
    if rate is not None and (isinstance(rate, bool) or not math.isfinite(rate) or rate <= 0):
        raise InventoryParseError(f"inventory: {w} field 'rate_gbps' must be > 0; got {rate!r}")
    if kind == "nic" and rate is None:
        raise InventoryParseError(f"inventory: {w} is a NIC and needs 'rate_gbps' (its line rate, e.g. 400)")
    return PcieDevice(name=name, kind=kind, bdf=str(d.get("bdf", "")), rate_gbps=float(rate) if rate else None, **vals)


def parse_inventory(text) -> Inventory:
    """Parse an inventory TOML document (format: module docstring). Raises InventoryParseError on any problem."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str) or not text.strip():
        raise InventoryParseError("inventory: expected TOML text with [cluster] and [[node]] sections; got "
                                  f"{'an empty string' if isinstance(text, str) else type(text).__name__}")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InventoryParseError(f"inventory: not valid TOML ({exc})") from None
    cluster = doc.get("cluster")
    if not isinstance(cluster, dict):
        raise InventoryParseError("inventory: missing the [cluster] table (name, server, nvswitch)")
    server = _field(cluster, "server", "[cluster]", str)
    try:
        hardware.server(server)
    except KeyError as exc:
        raise InventoryParseError(f"inventory: [cluster] server: {exc.args[0]}") from None
    nvswitch = _field(cluster, "nvswitch", "[cluster]", bool, required=False)
    baseline = doc.get("baseline", {}).get("bios", {})
    if not isinstance(baseline, dict):
        raise InventoryParseError("inventory: [baseline.bios] must be a table of setting = value")
    raw_nodes = doc.get("node")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        raise InventoryParseError("inventory: no [[node]] entries")
    nodes = []
    seen = set()
    for i, n in enumerate(raw_nodes):
        where = f"node #{i + 1}"
        if not isinstance(n, dict):
            raise InventoryParseError(f"inventory: {where} must be a table")
        host = _field(n, "hostname", where, str)
        where = f"node {host!r}"
        if host in seen:
            raise InventoryParseError(f"inventory: hostname {host!r} appears twice")
        seen.add(host)
        versions = {}
        for k in VERSION_FIELDS:
            v = _field(n, k, where, str, required=k in _REQUIRED)
            if v is not None:
                if k in ("driver", "cuda", "fabric_manager", "nccl"):
                    parse_version(v)
                versions[k] = v.strip()
        try:
            _cuda_key(versions["cuda"])
        except ValueError as exc:
            raise InventoryParseError(f"inventory: {where}: {exc}") from None
        bios = n.get("bios", {})
        if not isinstance(bios, dict) or not all(isinstance(v, str) for v in bios.values()):
            raise InventoryParseError(f"inventory: {where} 'bios' must be a table of setting = \"value\" strings")
        pcie = n.get("pcie", [])
        if not isinstance(pcie, list):
            raise InventoryParseError(f"inventory: {where} 'pcie' must be a list of device tables")
        devs = tuple(_device(d, f"{where} pcie[{j}]") for j, d in enumerate(pcie))
        rack_u = _field(n, "rack_u", where, int, required=False)
        nodes.append(Node(hostname=host, versions=versions, bios={k: v.strip().lower() for k, v in bios.items()},
                          pcie=devs, rack=str(n.get("rack", "")), rack_u=rack_u,
                          fabric_manager_state=n.get("fabric_manager_state")))
    return Inventory(name=str(cluster.get("name", "")), server=hardware.server(server).name,
                     nvswitch=bool(nvswitch), baseline_bios={k: str(v).lower() for k, v in baseline.items()},
                     nodes=tuple(nodes), source=str(cluster.get("source", "")))


def load_inventory(path) -> Inventory:
    """Read and parse an inventory TOML file."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"inventory file {str(p)!r} does not exist")
    return parse_inventory(p.read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def sample_text() -> str:
    """The shipped 4-node sample inventory (TOML text)."""
    return data_files.text("inventory_sample.toml")


@lru_cache(maxsize=1)
def sample_inventory() -> Inventory:
    """The shipped 4-node DGX H100 sample: gpu-node-01/02 clean, 03 and 04 with planted drift.

    Parsed once and shared (frozen dataclasses; use :func:`inject_drift` / ``dataclasses.replace`` to vary it).
    """
    return parse_inventory(sample_text())


def tool_sample(name: str) -> str:
    """Illustrative tool output stored with the sample (``[samples.<name>]``): lspci_vvv, dmidecode_bios, ..."""
    s = data_files.load("inventory_sample.toml").get("samples", {})
    if name not in s:
        raise validate.unknown_name("inventory tool sample", name, s)
    return s[name]["text"]


# ------------------------------------------------------------------------------------------ PCIe links
def _pcie_gbs(gen, width):
    return links.pcie_gbs(f"gen{int(gen)}", width)


def link_bandwidth(dev: PcieDevice) -> dict:
    """See :func:`_link_bandwidth` (memoised per device: devices are frozen, so the result cannot go stale)."""
    if not isinstance(dev, PcieDevice):
        raise TypeError(f"dev must be an inventory.PcieDevice; got {type(dev).__name__}")
    return dict(_link_bandwidth(dev))


@lru_cache(maxsize=4096)
def _link_bandwidth(dev: PcieDevice) -> dict:
    """Deliverable bandwidth (GB/s per direction) of a device at its capability and as trained.

    GPU/NVMe/other: the PCIe link itself (``links.pcie_gbs``). NIC: ``node.nic_slot`` = min(line rate / 8,
    slot), so a 200G NIC in a Gen4 x16 slot loses nothing while a 400G NIC loses 37 %.
    """
    if dev.kind == "nic":
        cap = nodemodel.nic_slot(dev.rate_gbps, dev.cap_gen, dev.cap_width)["delivered_gbs"]
        sta = nodemodel.nic_slot(dev.rate_gbps, dev.sta_gen, dev.sta_width)["delivered_gbs"]
    else:
        cap = _pcie_gbs(dev.cap_gen, dev.cap_width)
        sta = _pcie_gbs(dev.sta_gen, dev.sta_width)
    lost = max(cap - sta, 0.0)
    return {"name": dev.name, "kind": dev.kind, "cap": f"Gen{dev.cap_gen} x{dev.cap_width}",
            "trained": f"Gen{dev.sta_gen} x{dev.sta_width}", "cap_gbs": cap, "trained_gbs": sta,
            "lost_gbs": lost, "loss_fraction": lost / cap}


def node_links(node: Node) -> list[dict]:
    """:func:`link_bandwidth` for every PCIe device of ``node``."""
    return [link_bandwidth(d) for d in node.pcie]


# ------------------------------------------------------------------------------------------ rules
def check_cuda_driver(node: Node) -> list[Finding]:
    """Driver vs CUDA toolkit (NVIDIA Tables 2 and 3)."""
    drv, cuda = node.versions["driver"], node.versions["cuda"]
    try:
        st = cuda_driver_status(drv, cuda)
    except KeyError as exc:
        return [Finding("warning", node.hostname, "cuda_driver", f"CUDA {cuda} is not in the compatibility table: {exc}",
                        cuda, None)]
    if st["status"] == "ok":
        return []
    if st["status"] == "minor-compat":
        return [Finding("warning", node.hostname, "cuda_driver",
                        f"driver {drv} is below {st['label']}'s minimum {st['min_driver']} (NVIDIA Table 3); it runs only "
                        f"under minor version compatibility (>= {st['floor']}): no JIT of newer PTX, new APIs fail "
                        f"with cudaErrorCallRequiresNewerDriver", drv, f">= {st['min_driver']}")]
    return [Finding("critical", node.hostname, "cuda_driver",
                    f"driver {drv} cannot run {st['label']} (needs >= {st['min_driver']}; major-version floor "
                    f"{st['floor']}): the CUDA runtime fails with cudaErrorInsufficientDriver", drv, f">= {st['min_driver']}")]


def usable_gpus(node: Node, nvswitch: bool = True) -> int:
    """GPUs CUDA can use on ``node``: 0 on an NVSwitch system whose fabric manager is missing, not active or not
    the driver's exact version (Fabric Manager User Guide), otherwise every GPU in the inventory."""
    if not nvswitch:
        return node.gpus
    fm = node.versions.get("fabric_manager")
    state = (node.fabric_manager_state or "active").lower()
    if fm is None or fm != node.versions["driver"] or state != "active":
        return 0
    return node.gpus


def check_fabric_manager(node: Node, nvswitch: bool = True) -> list[Finding]:
    """Fabric manager present, active and the same version as the driver (NVSwitch systems only)."""
    if not nvswitch:
        return []
    drv = node.versions["driver"]
    fm = node.versions.get("fabric_manager")
    if fm is None:
        return [Finding("critical", node.hostname, "fabric_manager",
                        f"no nvidia-fabricmanager on an NVSwitch system: CUDA init fails (cudaErrorSystemNotReady), "
                        f"0 of {node.gpus} GPUs usable", None, drv)]
    if fm != drv:
        return [Finding("critical", node.hostname, "fabric_manager",
                        f"fabric manager {fm} != driver {drv}: the service refuses to start, NVSwitch GPUs cannot "
                        f"initialise, 0 of {node.gpus} GPUs usable", fm, drv)]
    state = (node.fabric_manager_state or "active").lower()
    if state != "active":
        return [Finding("critical", node.hostname, "fabric_manager",
                        f"nvidia-fabricmanager is {state}, not active: 0 of {node.gpus} GPUs usable", state, "active")]
    return []


def check_pcie_links(node: Node) -> list[Finding]:
    """Every device trained below its capability, with the bandwidth it loses."""
    out = []
    for d, r in zip(node.pcie, node_links(node)):
        if not d.downtrained:
            continue
        loss = r["loss_fraction"]
        sev = "critical" if loss >= LOSS_CRITICAL_FRACTION else ("warning" if loss > 1e-9 else "info")
        what = (f"{d.name} ({d.bdf}) trained {r['trained']} < capability {r['cap']}: "
                f"{r['trained_gbs']:.1f} of {r['cap_gbs']:.1f} GB/s, {loss:.0%} lost")
        if sev == "info":
            what += " (the device needs no more than the trained link carries)"
        out.append(Finding(sev, f"{node.hostname}/{d.name}", "pcie_link", what, r["trained"], r["cap"]))
    return out


def check_bios(node: Node, baseline: dict) -> list[Finding]:
    """BIOS settings that differ from the baseline (severity and reason from :data:`BIOS_RULES`)."""
    out = []
    for key, want in baseline.items():
        have = node.bios.get(key)
        if have is None:
            out.append(Finding("warning", node.hostname, f"bios.{key}", f"setting {key} not reported by the BMC; "
                               f"cannot verify (baseline {want})", None, want))
            continue
        if key == "iommu" and want == "disabled" and have == "passthrough":
            continue   # iommu=pt: no translation for DMA, accepted (NCCL troubleshooting)
        if have != want:
            sev, why, src = BIOS_RULES.get(key, ("warning", "differs from the golden BIOS profile", "site baseline"))
            out.append(Finding(sev, node.hostname, f"bios.{key}", f"{key} = {have}, baseline {want}: {why} [{src}]",
                               have, want))
    return out


def check_drift(inv: Inventory, fields=VERSION_FIELDS) -> list[Finding]:
    """Components with more than one version across the nodes: a warning per node that differs from the majority."""
    out = []
    for f in fields:
        vals = {n.hostname: n.versions.get(f) for n in inv.nodes if n.versions.get(f) is not None}
        counts = Counter(vals.values())
        if len(counts) <= 1:
            continue
        majority = max(counts.items(), key=lambda kv: (kv[1], parse_version(kv[0]) if _has_digit(kv[0]) else ()))[0]
        for host, v in vals.items():
            if v != majority:
                out.append(Finding("warning", host, f"drift.{f}",
                                   f"{f} {v} differs from {counts[majority]} of {len(vals)} nodes ({majority})",
                                   v, majority))
    return out


def _has_digit(s: str) -> bool:
    return any(c.isdigit() for c in s)


def run_inventory_checks(inv: Inventory, hostname: str | None = None) -> Report:
    """All rules over the inventory (or one node of it; drift is always judged against the whole cluster)."""
    rep = Report(checks_run=["cuda_driver", "fabric_manager", "pcie_link", "bios", "drift"])
    nodes = inv.nodes if hostname is None else (inv.node(hostname),)
    for n in nodes:
        rep.findings += check_cuda_driver(n)
        rep.findings += check_fabric_manager(n, inv.nvswitch)
        rep.findings += check_pcie_links(n)
        rep.findings += check_bios(n, inv.baseline_bios)
    hosts = {n.hostname for n in nodes}
    rep.findings += [f for f in check_drift(inv) if f.component in hosts]
    return rep


# ------------------------------------------------------------------------------------------ drift injection
DRIFT_KINDS = ("none", "fm_mismatch", "old_driver", "nic_gen4", "nic_x8", "gpu_x8", "acs_enabled", "rebar_off",
               "bios_gen4")


def inject_drift(inv: Inventory, hostname: str, kind: str) -> Inventory:
    """A copy of ``inv`` with one misconfiguration planted on ``hostname`` (for the explorer and exercises).

    fm_mismatch: fabric manager one patch release behind the driver; old_driver: driver 535.104.05 (CUDA 12.2 U2);
    nic_gen4 / nic_x8: NIC0 trained at Gen4 x16 / Gen5 x8; gpu_x8: GPU0 at Gen5 x8; acs_enabled; rebar_off;
    bios_gen4: max PCIe speed Gen4 in BIOS, so every device trains at Gen4.
    """
    validate.choice("kind", kind, DRIFT_KINDS)
    n = inv.node(hostname)
    if kind == "none":
        return inv
    v, b, pcie = dict(n.versions), dict(n.bios), list(n.pcie)

    def retrain(pred, gen=None, width=None):
        for i, d in enumerate(pcie):
            if pred(d):
                pcie[i] = replace(d, sta_gen=min(d.sta_gen, gen or d.sta_gen), sta_width=min(d.sta_width, width or d.sta_width))
                return

    if kind == "fm_mismatch":
        p = parse_version(v["driver"])
        v["fabric_manager"] = ".".join(map(str, p[:-1] + (max(p[-1] - 1, 0),))) if p[-1] > 0 else "0.0"
    elif kind == "old_driver":
        v["driver"] = v["fabric_manager"] = "535.104.05"
    elif kind == "nic_gen4":
        retrain(lambda d: d.kind == "nic", gen=4)
    elif kind == "nic_x8":
        retrain(lambda d: d.kind == "nic", width=8)
    elif kind == "gpu_x8":
        retrain(lambda d: d.kind == "gpu", width=8)
    elif kind == "acs_enabled":
        b["acs"] = "enabled"
    elif kind == "rebar_off":
        b["resizable_bar"] = "disabled"
    elif kind == "bios_gen4":
        b["pcie_max_speed"] = "gen4"
        pcie = [replace(d, sta_gen=min(d.sta_gen, 4)) for d in pcie]
    new = replace(n, versions=v, bios=b, pcie=tuple(pcie))
    return replace(inv, nodes=tuple(new if x.hostname == hostname else x for x in inv.nodes))


# ------------------------------------------------------------------------------------------ tool parsers
# ``lspci -vvv`` links are read by ch09 and ch19: the parser lives in labutil.parsers.lspci (issue 19,
# step 8) and is re-exported here under its old name; it raises LspciParseError (a ParseError).
from .parsers.lspci import LspciParseError, parse_lspci_links  # noqa: E402,F401


def parse_dmidecode_bios(text) -> dict:
    """Parse ``dmidecode -t bios`` (SMBIOS type 0, "BIOS Information"): vendor, version, release_date.

    Format (dmidecode ``dmidecode.c``, dmi_decode case 0): a ``BIOS Information`` header then tab-indented
    ``Vendor:``, ``Version:``, ``Release Date:`` lines. Raises InventoryParseError when absent.
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str) or "BIOS Information" not in text:
        raise InventoryParseError("dmidecode -t bios: no 'BIOS Information' section")
    out = {}
    body = text.split("BIOS Information", 1)[1]
    for key, label in (("vendor", "Vendor"), ("version", "Version"), ("release_date", "Release Date")):
        m = re.search(rf"^[ \t]+{label}:[ \t]*(.+?)[ \t]*$", body, flags=re.M)
        if not m:
            raise InventoryParseError(f"dmidecode -t bios: 'BIOS Information' has no '{label}:' line")
        out[key] = m.group(1)
    return out


_SMI_GPU = re.compile(r"^GPU ([0-9A-Fa-f]{8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$", re.M)


def parse_nvidia_smi_pci(text) -> list[dict]:
    """Each GPU's PCIe link and BAR1 size from ``nvidia-smi -q`` (or ``-q -d PCI,MEMORY``).

    Reads, per ``GPU <bus id>`` block, the ``GPU Link Info`` (``PCIe Generation`` Max/Current,
    ``Link Width`` Max/Current such as ``16x``) and ``BAR1 Memory Usage`` ``Total`` in MiB (the layout of
    nvidia-smi R450+; the header-level fields are ``labutil.parsers.parse_nvidia_smi_q``'s job). Returns
    ``[{"bus_id", "gen_max", "gen_cur", "width_max", "width_cur", "bar1_total_mib"}]`` in file order.
    Raises InventoryParseError when there is no GPU block or a block lacks one of these fields.
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise InventoryParseError(f"nvidia-smi -q: expected text; got {type(text).__name__}")
    heads = list(_SMI_GPU.finditer(text))
    if not heads:
        raise InventoryParseError("nvidia-smi -q: no 'GPU 00000000:xx:00.0' block")
    out = []
    for k, h in enumerate(heads):
        block = text[h.end(): heads[k + 1].start() if k + 1 < len(heads) else len(text)]

        def field(section: str, key: str, pattern: str, block=block, bus=h.group(1)):
            i = block.find(section)
            m = re.search(rf"^[ \t]+{key}[ \t]*:[ \t]*{pattern}[ \t]*$", block[i:], re.M) if i >= 0 else None
            if not m:
                raise InventoryParseError(f"nvidia-smi -q: GPU {bus} has no '{section}' / '{key}' line")
            return int(m.group(1))

        out.append({"bus_id": h.group(1),
                    "gen_max": field("PCIe Generation", "Max", r"(\d+)"),
                    "gen_cur": field("PCIe Generation", "Current", r"(\d+)"),
                    "width_max": field("Link Width", "Max", r"(\d+)x"),
                    "width_cur": field("Link Width", "Current", r"(\d+)x"),
                    "bar1_total_mib": field("BAR1 Memory Usage", "Total", r"(\d+) MiB")})
    return out


def parse_ofed_info(text) -> str:
    """Parse ``ofed_info -s`` ('MLNX_OFED_LINUX-24.01-0.3.3.1:' or 'OFED-internal-24.10-1.1.4:') -> '24.01-0.3.3.1'."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise InventoryParseError(f"ofed_info -s: expected text; got {type(text).__name__}")
    m = re.search(r"^[ \t]*(?:MLNX_OFED_LINUX|OFED-internal|DOCA[\w-]*?)-(\d+\.\d+-[\d.]+):?[ \t]*$", text, flags=re.M)
    if not m:
        raise InventoryParseError("ofed_info -s: no 'MLNX_OFED_LINUX-<version>:' line")
    return m.group(1)


# ------------------------------------------------------------------------------------------ racks
@dataclass(frozen=True)
class RackItem:
    label: str
    kind: str          # 'server', 'switch', 'cable', 'empty'
    u_bottom: int      # lowest U occupied (1 = bottom of the rack)
    height_u: int
    kw: float = 0.0


def rack_layout(server: str = "DGX-H100", rack_kw_limit=40.0, rack_units=None, reserved_units=None,
                redundancy: str = "2N", mgmt_switch_kw: float = 0.1) -> dict:
    """Rack elevation for catalog ``server`` under a power budget of ``rack_kw_limit`` kW.

    Servers per rack = min(floor(limit / server kW), floor((U - reserved) / server U)) (``power.cluster_power``
    formula, reused through it). Layout: servers stacked from U1 (heavy equipment low), the reserved units at the
    top for a 1U management (out-of-band) switch and 1U cable management (``labutil/data/facility.toml`` [rack]
    ASSUMPTION), PDUs as the two zero-U vertical strips of the A and B feeds sized by ``power.feed_requirements``.
    ``mgmt_switch_kw``: power of the 1U management switch (COURSE ASSUMPTION, ~100 W for a 48-port 1G switch).
    Raises ValueError when not even one server fits in the power budget.
    """
    s = hardware.server(server)
    limit = validate.positive("rack_kw_limit", rack_kw_limit)
    if np.ndim(limit):
        raise ValueError("rack_kw_limit must be a single number for rack_layout")
    fac = power.facility_data()["rack"]
    ru = validate.integer("rack_units", fac["rack_units"] if rack_units is None else rack_units, lo=1, hi=60)
    res = validate.integer("reserved_units", fac["reserved_units"] if reserved_units is None else reserved_units,
                           lo=0, hi=ru - 1)
    mgmt = validate.positive("mgmt_switch_kw", mgmt_switch_kw, allow_zero=True)
    cp = power.cluster_power(s.gpus, server=s.name, rack_kw_limit=limit, rack_units=ru, reserved_units=res)
    n = cp.servers_per_rack
    limit_by = cp.rack_limit_by
    if res >= 1 and n * cp.server_unit_kw + mgmt > limit + 1e-9:   # the management switch shares the budget
        n, limit_by = n - 1, "power"
    if n < 1:
        raise ValueError(f"rack_kw_limit must be >= one {s.name} ({cp.server_unit_kw:.1f} kW); got {limit}")
    unit_kw = cp.server_unit_kw
    items = [RackItem(f"{s.name} #{i + 1}", "server", 1 + i * s.rack_units, s.rack_units, unit_kw) for i in range(n)]
    top = ru
    if res >= 1:
        items.append(RackItem("mgmt switch (1U)", "switch", top, 1, mgmt))
        top -= 1
    for k in range(res - 1):
        items.append(RackItem("cable mgmt", "cable", top - k, 1, 0.0))
    used = n * s.rack_units
    free_lo, free_hi = used + 1, ru - res
    if free_hi >= free_lo:
        items.append(RackItem(f"empty ({free_hi - free_lo + 1}U)", "empty", free_lo, free_hi - free_lo + 1, 0.0))
    rack_kw = n * unit_kw + (mgmt if res >= 1 else 0.0)
    feeds = power.feed_requirements(rack_kw, redundancy=redundancy)
    return {"server": s.name, "servers": n, "gpus": n * s.gpus, "limit_by": limit_by,
            "server_kw": unit_kw, "rack_kw": rack_kw, "rack_kw_limit": limit, "rack_units": ru,
            "used_units": used + res, "items": items, "feeds": feeds, "cooling": power.cooling_advice(rack_kw),
            "by_power": int(math.floor(limit / unit_kw + 1e-9)), "by_space": (ru - res) // s.rack_units}

