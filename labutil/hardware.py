"""The hardware catalog: GPUs, NICs, switches and reference servers.

The data live in ``labutil/data/*.toml``; every entry carries its ``source`` (datasheet or
paper). Look-ups accept the canonical name or an alias, case-insensitively; an unknown name
raises KeyError listing the closest known names.

>>> gpu("H100-SXM").bf16_tflops
989.4
"""

from __future__ import annotations

from dataclasses import dataclass

from . import data_files, validate

__all__ = ["GPU", "NIC", "Switch", "Server", "PRECISIONS", "catalog", "gpu", "gpus", "nic", "nics", "switch",
           "switches", "server", "servers", "gpu_table"]


@dataclass(frozen=True)
class GPU:
    """One accelerator. TFLOP/s are dense tensor peaks; 0 means the precision is unsupported."""

    name: str
    bf16_tflops: float
    fp8_tflops: float
    tf32_tflops: float
    fp64_tflops: float
    hbm_gb: float
    hbm_gbs: float
    nvlink_gbs: float
    tdp_w: float
    source: str
    vendor: str = ""
    arch: str = ""
    form_factor: str = ""
    fp64_tensor_tflops: float = 0.0
    aliases: tuple[str, ...] = ()
    published_range: str = ""

    def peak_tflops(self, precision: str = "bf16") -> float:
        """Dense peak for ``precision`` in {'bf16', 'fp16', 'fp8', 'tf32', 'fp64'}."""
        validate.choice("precision", precision, PRECISIONS)
        key = "bf16" if precision == "fp16" else precision
        value = getattr(self, f"{key}_tflops")
        if value <= 0:
            raise ValueError(f"precision {precision!r} is not supported (or not published) for {self.name}")
        return value

    @property
    def ridge_flop_per_byte(self) -> float:
        """Roofline ridge point (BF16 peak / HBM bandwidth), FLOP per byte."""
        return self.bf16_tflops * 1e12 / (self.hbm_gbs * 1e9)


PRECISIONS = ("bf16", "fp16", "fp8", "tf32", "fp64")


@dataclass(frozen=True)
class NIC:
    name: str
    port_gbps: float
    ports: int
    pcie_gen: int
    pcie_lanes: int
    protocols: tuple[str, ...]
    power_w: float
    source: str
    vendor: str = ""
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Switch:
    name: str
    ports: int
    port_gbps: float
    switching_tbps: float
    source: str
    vendor: str = ""
    family: str = ""
    form_factor_u: int = 1
    transceiver_power_w: float = 0.0
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Server:
    name: str
    gpu: str
    gpus: int
    cpu: str
    cpu_cores: int
    ram_gb: float
    compute_nic: str
    compute_nics: int
    storage_nics: int
    nvme_tb: float
    rack_units: int
    max_power_w: float
    power_is_estimate: bool
    source: str
    vendor: str = ""
    aliases: tuple[str, ...] = ()

    @property
    def gpu_spec(self) -> GPU:
        return gpu(self.gpu)

    @property
    def nic_spec(self) -> NIC:
        return nic(self.compute_nic)


_KINDS = {"gpus": ("GPU", GPU), "nics": ("NIC", NIC), "switches": ("switch", Switch), "servers": ("server", Server)}


def catalog(kind: str) -> data_files.Table:
    """The catalog table ``kind`` ('gpus', 'nics', 'switches', 'servers'): canonical names in file order,
    look-up by name or alias, case-insensitively (``catalog("gpus")["h100"]``)."""
    validate.choice("kind", kind, tuple(_KINDS))
    label, cls = _KINDS[kind]
    return data_files.table(f"{kind}.toml", kind=label, cls=cls)


def gpu(name: str) -> GPU:
    """The catalog GPU ``name`` (or alias), e.g. ``gpu("H100-SXM")``."""
    return catalog("gpus")[name]


def gpus() -> list[str]:
    """Canonical names of all catalog GPUs, in catalog order."""
    return catalog("gpus").names()


def nic(name: str) -> NIC:
    return catalog("nics")[name]


def nics() -> list[str]:
    return catalog("nics").names()


def switch(name: str) -> Switch:
    return catalog("switches")[name]


def switches() -> list[str]:
    return catalog("switches").names()


def server(name: str) -> Server:
    return catalog("servers")[name]


def servers() -> list[str]:
    return catalog("servers").names()


def gpu_table(names: list[str] | None = None) -> list[dict]:
    """Rows (dicts) for a catalog table, in the order given (default: all GPUs)."""
    rows = []
    for n in names or gpus():
        g = gpu(n)
        rows.append({
            "name": g.name, "vendor": g.vendor, "bf16_tflops": g.bf16_tflops, "fp8_tflops": g.fp8_tflops,
            "tf32_tflops": g.tf32_tflops, "fp64_tflops": g.fp64_tflops, "hbm_gb": g.hbm_gb,
            "hbm_gbs": g.hbm_gbs, "nvlink_gbs": g.nvlink_gbs, "tdp_w": g.tdp_w,
        })
    return rows
