"""Parsers for the RDMA tools: ``ibstat``, ``ibv_devinfo`` and ``perfquery``.

Formats: ``ibstat`` from infiniband-diags (rdma-core, ``infiniband-diags/ibstat.c``)::

    CA 'mlx5_0'
            CA type: MT4129
            Number of ports: 1
            Firmware version: 28.39.1002
            Port 1:
                    State: Active
                    Physical state: LinkUp
                    Rate: 400
                    Base lid: 5
                    SM lid: 1
                    Port GUID: 0x946dae0300f97b2c
                    Link layer: InfiniBand

``ibv_devinfo [-v]`` from rdma-core ``libibverbs/examples/devinfo.c`` (``hca_id:`` blocks, ports
with ``state: PORT_ACTIVE (4)``, ``active_mtu: 4096 (5)``, ``active_width: 4X (2)``,
``active_speed: 100.0 Gbps (128)``, ``link_layer:``), and ``perfquery [-x]`` from infiniband-diags
(``# Port counters: Lid 5 port 1`` then ``SymbolErrorCounter:..........0`` lines).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._common import ParseError, require_text, to_float, to_int

__all__ = ["IbPort", "IbCa", "parse_ibstat", "IbvPort", "IbvDevice", "parse_ibv_devinfo",
           "PerfQuery", "parse_perfquery", "ERROR_COUNTERS"]


@dataclass
class IbPort:
    port: int
    state: str | None
    physical_state: str | None
    rate_gbps: float | None
    base_lid: int | None
    sm_lid: int | None
    port_guid: str | None
    link_layer: str | None
    raw: dict = field(default_factory=dict, repr=False)


@dataclass
class IbCa:
    name: str
    ca_type: str | None
    firmware: str | None
    node_guid: str | None
    ports: list[IbPort]


def parse_ibstat(text) -> list[IbCa]:
    """Parse ``ibstat`` (all CAs). Raises ParseError without a ``CA '...'`` block with a port."""
    text = require_text(text, "ibstat")
    cas: list[IbCa] = []
    cur_ca: dict | None = None
    cur_port: dict | None = None

    def close_port():
        nonlocal cur_port
        if cur_ca is not None and cur_port is not None:
            cur_ca["ports"].append(cur_port)
        cur_port = None

    def close_ca():
        nonlocal cur_ca
        close_port()
        if cur_ca is not None:
            cas.append(cur_ca)
        cur_ca = None

    for line in text.split("\n"):
        s = line.strip()
        if not s:
            continue
        m = re.match(r"^CA\s+'([^']+)'\s*$", s)
        if m:
            close_ca()
            cur_ca = {"name": m.group(1), "kv": {}, "ports": []}
            continue
        if cur_ca is None:
            continue
        m = re.match(r"^Port\s+(\d+)\s*:\s*$", s)
        if m:
            close_port()
            cur_port = {"port": int(m.group(1)), "kv": {}}
            continue
        if ":" in s:
            k, v = s.split(":", 1)
            (cur_port or cur_ca)["kv"][k.strip().lower()] = v.strip()
    close_ca()
    out = []
    for ca in cas:
        ports = []
        for p in ca["ports"]:
            kv = p["kv"]
            if "state" not in kv:   # ibstat prints State for every port: the paste lost lines
                raise ParseError(f"ibstat: CA '{ca['name']}' port {p['port']} has no 'State:' line (the paste is cut "
                                 "or damaged; re-run ibstat and paste all of it)")
            ports.append(IbPort(p["port"], kv.get("state"), kv.get("physical state"), to_float(kv.get("rate")),
                                to_int(kv.get("base lid")), to_int(kv.get("sm lid")), kv.get("port guid"),
                                kv.get("link layer"), kv))
        kv = ca["kv"]
        out.append(IbCa(ca["name"], kv.get("ca type"), kv.get("firmware version"), kv.get("node guid"), ports))
    if not any(ca.ports for ca in out):
        raise ParseError("ibstat: no \"CA '...'\" block with a 'Port N:' section and its State found")
    return out


# ------------------------------------------------------------------------------- ibv_devinfo
@dataclass
class IbvPort:
    port: int
    state: str | None            # 'PORT_ACTIVE', 'PORT_DOWN', ...
    phys_state: str | None       # 'LINK_UP', 'POLLING', ... (ibv_devinfo -v)
    active_mtu: int | None       # bytes (4096)
    active_width: str | None     # '4X' (ibv_devinfo -v)
    active_speed_gbps: float | None  # per-lane data rate, Gbit/s (100.0 for NDR)
    link_layer: str | None
    port_lid: int | None
    sm_lid: int | None
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def width_lanes(self) -> int | None:
        m = re.match(r"^(\d+)X$", self.active_width or "")
        return int(m.group(1)) if m else None

    @property
    def rate_gbps(self) -> float | None:
        """Port data rate = lanes x per-lane speed (400 for 4X NDR); None without -v fields."""
        if self.width_lanes is None or self.active_speed_gbps is None:
            return None
        return self.width_lanes * self.active_speed_gbps


@dataclass
class IbvDevice:
    hca_id: str
    transport: str | None
    fw_ver: str | None
    node_guid: str | None
    vendor_part_id: int | None
    board_id: str | None
    ports: list[IbvPort]


def _enum_name(v: str | None) -> str | None:
    """'PORT_ACTIVE (4)' -> 'PORT_ACTIVE'."""
    if v is None:
        return None
    return re.sub(r"\s*\(\d+\)\s*$", "", v).strip() or None


def parse_ibv_devinfo(text) -> list[IbvDevice]:
    """Parse ``ibv_devinfo`` or ``ibv_devinfo -v``."""
    text = require_text(text, "ibv_devinfo")
    devs: list[dict] = []
    port: dict | None = None
    for line in text.split("\n"):
        s = line.strip()
        if not s or ":" not in s:
            continue
        k, v = s.split(":", 1)
        k, v = k.strip(), v.strip()
        if k == "hca_id":
            devs.append({"hca_id": v, "kv": {}, "ports": []})
            port = None
            continue
        if not devs:
            continue
        if k == "port" and to_int(v) is not None:
            port = {"port": to_int(v), "kv": {}}
            devs[-1]["ports"].append(port)
            continue
        target = port["kv"] if port is not None else devs[-1]["kv"]
        target.setdefault(k, v)
    out = []
    for d in devs:
        ports = []
        for p in d["ports"]:
            kv = p["kv"]
            if "state" not in kv:   # ibv_devinfo prints state for every port: the paste lost lines
                raise ParseError(f"ibv_devinfo: {d['hca_id']} port {p['port']} has no 'state:' line (the paste is cut "
                                 "or damaged)")
            width = kv.get("active_width")
            ports.append(IbvPort(p["port"], _enum_name(kv.get("state")), _enum_name(kv.get("phys_state")),
                                 to_int((kv.get("active_mtu") or "").split(" ")[0]),
                                 width.split(" ")[0] if width else None, to_float(kv.get("active_speed")),
                                 kv.get("link_layer"), to_int(kv.get("port_lid")), to_int(kv.get("sm_lid")), kv))
        kv = d["kv"]
        out.append(IbvDevice(d["hca_id"], kv.get("transport"), kv.get("fw_ver"), kv.get("node_guid"),
                             to_int(kv.get("vendor_part_id")), kv.get("board_id"), ports))
    if not any(d.ports for d in out):
        raise ParseError("ibv_devinfo: no 'hca_id:' block with a 'port:' section and its state found")
    return out


# ---------------------------------------------------------------------------------- perfquery
# The PortCounters error fields (IBTA spec Vol 1, PortCounters attribute; perfquery man page).
ERROR_COUNTERS = ("SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
                  "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
                  "PortXmitConstraintErrors", "PortRcvConstraintErrors", "LocalLinkIntegrityErrors",
                  "ExcessiveBufferOverrunErrors", "VL15Dropped")


@dataclass
class PerfQuery:
    lid: int | None
    port: int | None
    counters: dict

    def errors(self) -> dict:
        """Only the error counters (not data/packet counters)."""
        return {k: v for k, v in self.counters.items() if k in ERROR_COUNTERS}


def parse_perfquery(text) -> PerfQuery:
    """Parse ``perfquery`` / ``perfquery -x`` counters (``Name:.....value`` lines)."""
    text = require_text(text, "perfquery")
    lid = port = None
    counters: dict = {}
    for line in text.split("\n"):
        s = line.strip()
        m = re.match(r"^#\s*Port (?:extended )?counters:\s*Lid\s+(\d+)\s+port\s+(\d+)", s, re.I)
        if m:
            lid, port = int(m.group(1)), int(m.group(2))
            continue
        m = re.match(r"^([A-Za-z][A-Za-z0-9]+):\.*\s*(\S+)\s*$", s)
        if m:
            val = to_int(m.group(2))
            if val is not None:
                counters[m.group(1)] = val
    if not any(k in counters for k in ERROR_COUNTERS + ("PortXmitData", "PortRcvData")):
        raise ParseError("perfquery: no counter lines such as 'SymbolErrorCounter:.....0' found")
    return PerfQuery(lid, port, counters)
