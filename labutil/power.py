"""Facility power: server, rack and cluster power, PUE, racks and cooling, energy and its cost.

Taught in ch10 (供电、散热与机房); reused by ch05 (TCO) and ch30 (千卡集群端到端设计).

Formulas
--------
- server power: the catalog's ``max_power_w`` (``labutil.hardware.server``; DGX H100 = 10.2 kW from
  its datasheet; ``power_is_estimate`` flags OEM estimates). With a GPU power cap (``nvidia-smi -pl``)
  the model removes ``gpus * (tdp_w - cap_w)`` and keeps every other component at its maximum
  (a stated ASSUMPTION: CPUs, fans, NICs and PSU losses are not reduced by a GPU cap).
- IT power: ``it_kw = servers * server_kw + network_kw + storage_kw`` (network and storage listed
  separately; they are inputs because switch power depends on the vendor and the fabric, see
  ``labutil.topology.fabric_optics_kw`` for the optics part).
- PUE (The Green Grid; ISO/IEC 30134-2): ``facility_kw = pue * it_kw``; the difference is cooling,
  power distribution (UPS, transformers) and lighting.
- racks: ``servers_per_rack = min(floor(rack_kw_limit / server_kw), floor((rack_units - reserved_units) / server_u))``.
- cooling by rack density: thresholds in ``labutil/data/facility.toml`` (each with its source).
- energy: ``MWh = it_kw * pue * 24 * days / 1000``; cost per year ``= facility_kw * 8760 * price * load``.
- rack-scale systems (GB200 NVL72): the rack is the unit. ``racks = ceil(n_gpus / gpus per rack)``; the
  rack's planning power is NVIDIA's SuperPOD budget per scalable unit divided by its racks (GB200: 1.2 MW
  for 8 racks = 150 kW per rack, ``facility.toml`` [rack_scale], with its source); cooling from the same
  thresholds (any such rack is far above the rear-door range).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from . import data_files, hardware, topology, validate
from .units import HOURS_PER_DAY, HOURS_PER_YEAR


from .parsers._common import ParseError  # noqa: E402  one parse-error type for every tool parser

__all__ = ["facility_data", "COOLING_METHODS", "cooling_advice", "server_power_kw", "ClusterPower", "cluster_power",
           "energy_mwh", "energy_cost_per_year", "pue_for", "feed_requirements", "parse_ipmitool_dcmi_power",
           "parse_nvidia_smi_power_csv", "RackScaleSystem", "rack_scale_system", "rack_scale_systems",
           "RackScalePower", "rack_scale_power"]


def facility_data() -> dict:
    """The facility assumptions (cooling thresholds, reference PUEs, rack size) with their sources."""
    return data_files.load("facility.toml")


COOLING_METHODS = ("air", "air+containment", "rear-door", "direct-liquid")


def cooling_advice(rack_kw) -> str:
    """Cooling method for a rack of ``rack_kw`` kW: 'air' (room air, <= 15 kW), 'air+containment'
    (<= 35 kW), 'rear-door' (rear-door heat exchanger, <= 75 kW) or 'direct-liquid' (direct-to-chip).

    Thresholds and sources: ``labutil/data/facility.toml`` [cooling].
    """
    kw = validate.positive("rack_kw", rack_kw)
    if np.ndim(kw):
        raise ValueError("rack_kw must be a single number for cooling_advice")
    c = facility_data()["cooling"]
    if kw <= c["air_room_max_kw"]:
        return "air"
    if kw <= c["air_containment_max_kw"]:
        return "air+containment"
    if kw <= c["rear_door_max_kw"]:
        return "rear-door"
    return "direct-liquid"


def server_power_kw(server="DGX-H100", gpu_power_cap_w=None) -> float:
    """Maximum input power of one catalog server in kW, optionally with every GPU capped at ``gpu_power_cap_w``."""
    s = hardware.server(server)
    w = s.max_power_w
    if gpu_power_cap_w is not None:
        tdp = s.gpu_spec.tdp_w
        cap = validate.number("gpu_power_cap_w", gpu_power_cap_w, lo=0.0, hi=tdp, lo_open=True)
        w = w - s.gpus * (tdp - cap)
    return w / 1e3


@dataclass(frozen=True)
class ClusterPower:
    """Power stack of a cluster. kW fields are floats for scalar input, numpy arrays for swept input."""

    n_gpus: object
    server: str
    gpus_per_server: int
    servers: object
    server_unit_kw: float      # one server
    server_kw: object          # all servers
    network_kw: float
    storage_kw: float
    it_kw: object
    pue: object
    facility_kw: object
    overhead_kw: object        # facility - IT: cooling, distribution losses, lighting
    servers_per_rack: int
    rack_limit_by: str         # 'power' or 'space'
    racks: object
    rack_kw: float             # a full rack of servers
    cooling: str
    power_is_estimate: bool
    kw_per_gpu: float          # facility kW per GPU

    @property
    def servers_in_fullest_rack(self):
        """Servers actually placed in the fullest rack: min(servers, servers_per_rack) (a small cluster
        does not fill a rack; ``servers_per_rack`` is the capacity)."""
        out = np.minimum(self.servers, self.servers_per_rack)
        return int(out) if np.ndim(out) == 0 else out

    @property
    def fullest_rack_kw(self):
        """kW drawn by the fullest rack (what its power feed and cooling must carry)."""
        return self.servers_in_fullest_rack * self.server_unit_kw

    @property
    def cooling_actual(self) -> str:
        """Cooling for the load actually placed in the fullest rack (``cooling`` is for a full rack)."""
        return cooling_advice(float(np.max(self.fullest_rack_kw)))

    @property
    def facility_mw(self):
        return self.facility_kw / 1e3

    @property
    def it_mw(self):
        return self.it_kw / 1e3


def _ret(x):
    x = np.asarray(x)
    return x.item() if x.ndim == 0 else x


def cluster_power(n_gpus, server="DGX-H100", pue=1.5, rack_kw_limit=40.0, network_kw=0.0, storage_kw=0.0,
                  gpu_power_cap_w=None, rack_units=None, reserved_units=None) -> ClusterPower:
    """Servers, IT power, facility power and racks for ``n_gpus`` GPUs in catalog ``server``s.

    ``n_gpus`` and ``pue`` may be numpy arrays (a sweep). Servers = ceil(n_gpus / gpus per server).
    Raises ValueError when a rack of ``rack_kw_limit`` cannot hold a single server.
    """
    s = hardware.server(server)
    if isinstance(n_gpus, (str, bytes)):
        raise ValueError(f"n_gpus must be an integer >= 1; got the string {n_gpus!r}")
    n = validate.integer("n_gpus", n_gpus, lo=1)
    p = validate.number("pue", pue, lo=1.0, hi=5.0)
    limit = validate.positive("rack_kw_limit", rack_kw_limit)
    net = validate.positive("network_kw", network_kw, allow_zero=True)
    sto = validate.positive("storage_kw", storage_kw, allow_zero=True)
    rack = facility_data()["rack"]
    ru = validate.integer("rack_units", rack["rack_units"] if rack_units is None else rack_units, lo=1, hi=60)
    res = validate.integer("reserved_units", rack["reserved_units"] if reserved_units is None else reserved_units,
                           lo=0, hi=ru - 1)
    unit_kw = server_power_kw(s.name, gpu_power_cap_w)
    servers = np.ceil(np.asarray(n, dtype=float) / s.gpus).astype(np.int64)
    by_power = int(math.floor(limit / unit_kw + 1e-9))
    by_space = (ru - res) // s.rack_units
    per_rack = min(by_power, by_space)
    if per_rack < 1:
        if by_space < 1:
            raise ValueError(f"rack_units={ru} (minus reserved_units={res}) cannot hold one {s.name} "
                             f"({s.rack_units}U)")
        raise ValueError(f"rack_kw_limit must be >= one {s.name} server ({unit_kw:.2f} kW); got {limit:g}")
    racks = np.ceil(servers / per_rack).astype(np.int64)
    server_kw = servers * unit_kw
    it_kw = server_kw + net + sto
    facility_kw = it_kw * p
    rack_kw = per_rack * unit_kw
    return ClusterPower(n_gpus=_ret(n), server=s.name, gpus_per_server=s.gpus, servers=_ret(servers),
                        server_unit_kw=unit_kw, server_kw=_ret(server_kw), network_kw=net, storage_kw=sto,
                        it_kw=_ret(it_kw), pue=_ret(p), facility_kw=_ret(facility_kw),
                        overhead_kw=_ret(facility_kw - it_kw), servers_per_rack=per_rack,
                        rack_limit_by="power" if by_power <= by_space else "space", racks=_ret(racks),
                        rack_kw=rack_kw, cooling=cooling_advice(rack_kw), power_is_estimate=s.power_is_estimate,
                        kw_per_gpu=_ret(facility_kw / n))


def racks_vs_limit(servers, server="DGX-H100", rack_kw_limits=40.0, gpu_power_cap_w=None, rack_units=None,
                   reserved_units=None):
    """Racks needed for ``servers`` catalog servers at each rack power limit (vectorised over
    ``rack_kw_limits``): ceil(servers / min(floor(limit / server kW), usable U / server U)); NaN where
    a rack of that limit cannot hold one server. The sweep behind ch10's racks-vs-limit curve; at one
    limit it equals ``cluster_power(...).racks``."""
    s = hardware.server(server)
    n = validate.integer("servers", servers, lo=1)
    lim = np.asarray(validate.positive("rack_kw_limits", rack_kw_limits), dtype=float)
    rack = facility_data()["rack"]
    ru = validate.integer("rack_units", rack["rack_units"] if rack_units is None else rack_units, lo=1, hi=60)
    res = validate.integer("reserved_units", rack["reserved_units"] if reserved_units is None else reserved_units,
                           lo=0, hi=ru - 1)
    unit_kw = server_power_kw(s.name, gpu_power_cap_w)
    per = np.minimum(np.floor(lim / unit_kw + 1e-9), (ru - res) // s.rack_units)
    out = np.where(per >= 1, np.ceil(n / np.maximum(per, 1.0)), np.nan)
    return float(out) if out.ndim == 0 else out


def optics_kw(n_gpus, server="DGX-H100", switch="QM9700") -> float:
    """Power of the compute fabric's transceivers (kW) for ``n_gpus`` in ``server``s on ``switch``es.

    Uses ``topology.size_fabric`` (1:1, rail-optimized) and the catalog's per-transceiver power
    (QM9700: Class 8 twin-port OSFP, 17 W). Switch ASICs/fans are NOT included (vendor-specific).
    """
    srv = hardware.server(server)
    sw = hardware.switch(switch)
    f = topology.size_fabric(n_gpus, nics_per_node=srv.compute_nics, gpus_per_node=srv.gpus,
                             switch_ports=sw.ports, link_gbps=min(sw.port_gbps, srv.nic_spec.port_gbps))
    return topology.fabric_optics_kw(f, sw.transceiver_power_w)


def facility_power(n_gpus, server="DGX-H100", pue=1.5, rack_kw_limit=40.0, price_per_kwh=0.10,
                   storage_kw=0.0, include_optics=True) -> dict:
    """``cluster_power`` plus fabric optics, annual energy and its cost (``price_per_kwh`` in any
    currency; the cost comes back in the same one). One dict for ch10's explorer."""
    net = optics_kw(n_gpus, server) if include_optics else 0.0
    c = cluster_power(n_gpus, server=server, pue=pue, rack_kw_limit=rack_kw_limit, network_kw=net,
                      storage_kw=storage_kw)
    price = validate.positive("price_per_kwh", price_per_kwh, allow_zero=True)
    return {"power": c, "annual_mwh": energy_mwh(c.it_kw, 365, c.pue),
            "annual_cost": energy_cost_per_year(c.facility_kw, price), "price_per_kwh": price}


def energy_mwh(it_kw, days, pue):
    """Facility energy in MWh: ``it_kw * pue * 24 * days / 1000`` (constant load)."""
    it = validate.positive("it_kw", it_kw, allow_zero=True)
    d = validate.positive("days", days, allow_zero=True)
    p = validate.number("pue", pue, lo=1.0, hi=5.0)
    return it * p * HOURS_PER_DAY * d / 1e3


def energy_cost_per_year(facility_kw, price_per_kwh, load_factor=1.0):
    """Electricity cost per year (currency of ``price_per_kwh``): facility_kw * 8760 h * price * load_factor."""
    f = validate.positive("facility_kw", facility_kw, allow_zero=True)
    price = validate.positive("price_per_kwh", price_per_kwh, allow_zero=True)
    lf = validate.fraction("load_factor", load_factor)
    return f * HOURS_PER_YEAR * price * lf


def pue_for(it_kw, facility_kw):
    """The PUE that turns ``it_kw`` into ``facility_kw`` (facility / IT); must come out >= 1."""
    it = validate.positive("it_kw", it_kw)
    f = validate.positive("facility_kw", facility_kw)
    ratio = f / it
    if np.any(np.asarray(ratio) < 1.0):
        raise ValueError(f"facility_kw must be >= it_kw (PUE >= 1); got facility {facility_kw!r} < IT {it_kw!r}")
    return ratio


def feed_requirements(rack_kw, redundancy="2N", continuous_derate=0.8) -> dict:
    """Power feed sizing for one rack with A+B (2N) or single (N) feeds.

    In 2N each of the two feeds (A and B, from separate UPS/PDU paths) must carry the whole rack alone
    when the other fails, so each is sized for 100 % of the load and runs at <= 50 % in normal operation.
    A breaker may carry ``continuous_derate`` (80 %) of its rating continuously (NFPA 70 / NEC 210.20(A):
    continuous loads at 125 %), so each feed's rating must be >= rack_kw / 0.8.
    """
    kw = validate.positive("rack_kw", rack_kw)
    validate.choice("redundancy", redundancy, ("N", "2N"))
    der = validate.fraction("continuous_derate", continuous_derate)
    feeds = 2 if redundancy == "2N" else 1
    rating = kw / der
    return {"feeds": feeds, "feed_rating_kw": rating, "provisioned_kw": feeds * rating,
            "normal_load_per_feed": 1.0 / feeds, "failover_load_per_feed": 1.0}


# ---------------------------------------------------------------------------------------------
# Rack-scale systems: the rack is the unit (GB200 NVL72)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RackScaleSystem:
    """A rack-scale system of ``facility.toml`` [rack_scale] (numbers per rack) with its source."""

    name: str
    gpus: int
    compute_trays: int
    cpus: int
    cpu: str
    cpu_cores: int
    cpu_memory_gb: float
    compute_nics: int
    rack_kw: float             # planning budget per rack: su_kw / su_racks
    cooling: str
    source: str

    @property
    def cores_per_gpu(self) -> float:
        return self.cpu_cores / self.gpus

    @property
    def cpu_memory_gb_per_gpu(self) -> float:
        return self.cpu_memory_gb / self.gpus

    @property
    def kw_per_gpu(self) -> float:
        return self.rack_kw / self.gpus


def rack_scale_systems() -> list[str]:
    """Names of the rack-scale systems in ``facility.toml`` (e.g. 'GB200-NVL72')."""
    return list(facility_data().get("rack_scale", {}))


def rack_scale_system(name="GB200-NVL72") -> RackScaleSystem:
    """The rack-scale system ``name`` (KeyError listing the known names if unknown)."""
    table = facility_data().get("rack_scale", {})
    if name not in table:
        raise validate.unknown_name("rack-scale system", name, table)
    e = table[name]
    return RackScaleSystem(name=name, gpus=int(e["gpus"]), compute_trays=int(e["compute_trays"]), cpus=int(e["cpus"]),
                           cpu=e["cpu"], cpu_cores=int(e["cpu_cores"]), cpu_memory_gb=float(e["cpu_memory_gb"]),
                           compute_nics=int(e["compute_nics"]), rack_kw=float(e["su_kw"]) / int(e["su_racks"]),
                           cooling=e["cooling"], source=e["source"])


@dataclass(frozen=True)
class RackScalePower:
    """Racks, IT and facility power of ``n_gpus`` GPUs in rack-scale systems (all racks full)."""

    system: str
    n_gpus: int
    racks: int
    gpus_installed: int        # racks * gpus per rack (>= n_gpus)
    rack_kw: float
    it_kw: float
    pue: float
    facility_kw: float
    cooling: str               # cooling_advice(rack_kw)

    @property
    def it_mw(self) -> float:
        return self.it_kw / 1e3


def rack_scale_power(n_gpus, system="GB200-NVL72", pue=1.5) -> RackScalePower:
    """``n_gpus`` GPUs in whole racks of a rack-scale system: racks = ceil(n / gpus per rack),
    IT = racks x the rack's planning budget, facility = PUE x IT (the rack is bought and powered whole)."""
    s = rack_scale_system(system)
    n = int(validate.integer("n_gpus", n_gpus, lo=1))
    p = float(validate.number("pue", pue, lo=1.0, hi=5.0))
    racks = -(-n // s.gpus)
    it = racks * s.rack_kw
    return RackScalePower(system=s.name, n_gpus=n, racks=racks, gpus_installed=racks * s.gpus, rack_kw=s.rack_kw,
                          it_kw=it, pue=p, facility_kw=it * p, cooling=cooling_advice(s.rack_kw))


# ---------------------------------------------------------------------------------------------
# Parsers for power tools
# ---------------------------------------------------------------------------------------------
_DCMI = {
    "instantaneous_w": r"Instantaneous power reading",
    "min_w": r"Minimum during sampling period",
    "max_w": r"Maximum during sampling period",
    "avg_w": r"Average power reading over sample period",
}


def parse_ipmitool_dcmi_power(text: str) -> dict:
    """Parse ``ipmitool dcmi power reading``.

    The tool prints (ipmitool ``lib/ipmi_dcmi.c``, ``ipmi_dcmi_pwr_rd``) lines such as
    ``Instantaneous power reading:   498 Watts``, ``Minimum/Maximum during sampling period``,
    ``Average power reading over sample period``, ``Sampling period: 00000001 Seconds.`` and
    ``Power reading state is: activated``. Returns watts as floats plus ``sampling_period_s`` and ``state``.
    """
    if not isinstance(text, str) or not text.strip():
        raise ParseError("ipmitool dcmi power reading output is empty")
    out = {}
    for key, label in _DCMI.items():
        m = re.search(label + r"\s*:\s*(\d+(?:\.\d+)?)\s*Watts", text)
        if not m:
            raise ParseError(f"not ipmitool 'dcmi power reading' output: missing '{label}: <N> Watts'")
        out[key] = float(m.group(1))
    m = re.search(r"Sampling period\s*:\s*(\d+)\s*Seconds", text)
    out["sampling_period_s"] = float(int(m.group(1))) if m else None
    m = re.search(r"Power reading state is\s*:\s*(\w+)", text)
    out["state"] = m.group(1) if m else None
    return out


def parse_nvidia_smi_power_csv(text: str) -> list[dict]:
    """Parse ``nvidia-smi --query-gpu=index,power.draw,power.limit --format=csv`` (index optional).

    Header ``power.draw [W], power.limit [W]`` (nvidia-smi appends the unit in brackets); values like
    ``69.45 W``; ``[N/A]`` becomes None. Returns one dict per GPU with ``power_draw_w`` and ``power_limit_w``.
    """
    if not isinstance(text, str) or not text.strip():
        raise ParseError("nvidia-smi CSV output is empty")
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    header = [h.strip().split(" [")[0] for h in lines[0].split(",")]
    if "power.draw" not in header or "power.limit" not in header:
        raise ParseError(f"nvidia-smi CSV header must contain power.draw and power.limit; got {lines[0]!r}")
    rows = []
    for i, line in enumerate(lines[1:], 2):
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(header):
            raise ParseError(f"nvidia-smi CSV line {i} has {len(cells)} fields, header has {len(header)}")
        row = {}
        for h, c in zip(header, cells):
            if h == "index":
                if not c.isdigit():
                    raise ParseError(f"nvidia-smi CSV line {i}: index {c!r} is not an integer")
                row["index"] = int(c)
                continue
            if c in ("[N/A]", "N/A", "[Not Supported]"):
                val = None
            else:
                m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*W?", c)
                if not m:
                    raise ParseError(f"nvidia-smi CSV line {i}: {h} value {c!r} is not '<number> W'")
                val = float(m.group(1))
            row[h.replace(".", "_") + "_w"] = val
        rows.append(row)
    if not rows:
        raise ParseError("nvidia-smi CSV output has a header but no GPU rows")
    return rows
