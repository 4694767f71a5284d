"""Parser for NCCL debug logs (``NCCL_DEBUG=INFO``) and for kernel XID lines.

NCCL line format (NCCL ``src/debug.cc``: ``host:pid:tid [cudaDev] NCCL INFO message``; samples in
NVIDIA/nccl issues, e.g. #342, #541, and the NCCL user guide "Troubleshooting")::

    node-a:1234:1234 [0] NCCL INFO NCCL version 2.18.3+cuda12.2
    node-a:1234:1290 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>
    node-a:1234:1290 [0] NCCL INFO Using network IB
    node-a:1234:1290 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0
    node-a:1234:1290 [0] NCCL INFO Channel 00/02 :    0   1   2   3
    node-a:1234:1290 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1
    node-a:1234:1290 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC
    node-a:1234:1290 [0] NCCL INFO Channel 00/0 : 1[1] -> 2[0] [send] via NET/IB/0/GDRDMA
    node-a:1234:1290 [0] NCCL INFO comm 0x55d8 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 18000 commId 0x1 - Init COMPLETE

XID lines (Linux kernel log of the NVIDIA driver; NVIDIA "XID Errors" documentation)::

    NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._common import NCCL_VERSION, ParseError, clean_lines, require_text, to_int

__all__ = ["NcclRing", "NcclTree", "NcclConnection", "NcclRank", "NcclDebugLog", "parse_nccl_debug_log",
           "XidEvent", "parse_xid_errors"]

# NCCL >= 2.4 puts the source location before the level on WARN lines
# ("host:pid:tid [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion ..."); torch and
# launchers may prefix "[rank3]:", "[1,0]<stderr>:" or ANSI colour codes.
_LINE = re.compile(r"(?:^|\s|\]:?)(?P<host>[A-Za-z0-9][^\s:\[\]]*):(?P<pid>\d+):(?P<tid>\d+)\s+\[(?P<dev>\d+)\]\s+"
                   r"(?:(?P<src>[\w./-]+\.(?:cc|cu|h|cpp|c):\d+)\s+)?NCCL\s+"
                   r"(?P<level>INFO|WARN|TRACE|ABORT)\s?(?P<msg>.*)$")
_VERSION = NCCL_VERSION
_ANSI = re.compile(r"\x1b\[[0-9;]*m|\[0m\s")
_RING = re.compile(r"^Channel\s+(\d+)/(\d+)\s*:\s*((?:-?\d+(?:\s+|$))+)$")
_CONN = re.compile(r"^Channel\s+(\d+)(?:/\d+)?\s*:\s*(\d+)\[([0-9a-fA-Fx]+)\]\s*->\s*(\d+)\[([0-9a-fA-Fx]+)\]\s*"
                   r"(?:\[(send|receive)\]\s*)?via\s+(\S+)")
_TREE = re.compile(r"\[(\d+)\]\s+((?:-?\d+/)*-?\d+)->(-?\d+)->(-?\d+)")
_ENV = re.compile(r"^(NCCL_[A-Z0-9_]+)\s+set\s+(?:by environment\s+)?to\s+(.*?)\.?$")
_NETWORK = re.compile(r"^Using network\s+(\S+)")
_NETDEV = re.compile(r"^NET/(\w+)\s*:\s*Using\s+(.*?)(?:\s*;\s*OOB.*)?$")
_COMM = re.compile(r"\brank\s+(\d+)\s+nranks\s+(\d+)\s+cudaDev\s+(\d+)(?:\s+nvmlDev\s+\d+)?\s+busId\s+([0-9a-fA-F]+)")


@dataclass(frozen=True)
class NcclRing:
    channel: int
    n_channels: int
    ranks: tuple[int, ...]


@dataclass(frozen=True)
class NcclTree:
    channel: int
    rank: int
    children: tuple[int, ...]
    parent: int


@dataclass(frozen=True)
class NcclConnection:
    """One peer connection: ``transport`` is 'P2P', 'SHM', 'NET' (or 'COLLNET', 'NVLS');
    ``via`` the whole path ('P2P/IPC', 'SHM/direct/direct', 'NET/IB/0/GDRDMA', 'NET/Socket/0')."""

    channel: int
    src_rank: int
    dst_rank: int
    via: str
    direction: str | None
    host: str

    @property
    def transport(self) -> str:
        return self.via.split("/")[0]

    @property
    def net(self) -> str | None:
        """'IB' or 'Socket' (or a plugin name) for NET connections."""
        parts = self.via.split("/")
        return parts[1] if self.transport == "NET" and len(parts) > 1 else None

    @property
    def gdr(self) -> bool:
        """GPUDirect RDMA in use on this connection."""
        return "GDRDMA" in self.via


@dataclass(frozen=True)
class NcclRank:
    rank: int
    nranks: int
    host: str
    pid: int
    cuda_dev: int
    bus_id: str


@dataclass
class NcclDebugLog:
    version: str | None
    hosts: list[str]
    ranks: list[NcclRank]
    rings: list[NcclRing]
    trees: list[NcclTree]
    connections: list[NcclConnection]
    network: str | None
    net_devices: list[str]
    env: dict
    warnings: list[str]
    n_lines: int = 0

    @property
    def nranks(self) -> int | None:
        if self.ranks:
            return max(r.nranks for r in self.ranks)
        if self.rings:
            return max(len(r.ranks) for r in self.rings)
        return None

    def transports(self) -> dict:
        """Count of connections per transport, e.g. {'P2P': 24, 'NET': 8}."""
        out: dict = {}
        for c in self.connections:
            out[c.transport] = out.get(c.transport, 0) + 1
        return out

    @property
    def uses_gdr(self) -> bool:
        return any(c.gdr for c in self.connections)


def parse_nccl_debug_log(text) -> NcclDebugLog:
    """Parse an ``NCCL_DEBUG=INFO`` log (any mix of ranks, other program output ignored)."""
    text = require_text(text, "NCCL debug log")
    version = network = None
    hosts: list[str] = []
    ranks: dict = {}
    rings: dict = {}
    trees: dict = {}
    conns: list[NcclConnection] = []
    netdevs: list[str] = []
    env: dict = {}
    warns: list[str] = []
    n = 0
    for line in clean_lines(text):
        s = _ANSI.sub("", line).strip()
        m = _LINE.search(s)
        if not m:
            mv = _VERSION.search(s)
            if mv and version is None:
                version = mv.group(1)
            continue
        n += 1
        host, msg = m.group("host"), m.group("msg").strip()
        if host not in hosts:
            hosts.append(host)
        if m.group("level") in ("WARN", "ABORT"):
            warns.append(f"{host}: {msg}")
            continue
        mv = _VERSION.search(msg)
        if mv:
            version = version or mv.group(1)
            continue
        mc = _CONN.match(msg)
        if mc:
            conns.append(NcclConnection(int(mc.group(1)), int(mc.group(2)), int(mc.group(4)), mc.group(7),
                                        mc.group(6), host))
            continue
        mr = _RING.match(msg)
        if mr:
            key = (int(mr.group(1)), tuple(int(x) for x in mr.group(3).split()))
            rings.setdefault(key, NcclRing(key[0], int(mr.group(2)), key[1]))
            continue
        if msg.startswith("Trees"):
            for ch, kids, rank, parent in _TREE.findall(msg):
                kids_t = tuple(int(k) for k in kids.split("/") if int(k) >= 0)
                trees.setdefault((int(ch), int(rank)), NcclTree(int(ch), int(rank), kids_t, int(parent)))
            continue
        me = _ENV.match(msg)
        if me:
            env[me.group(1)] = me.group(2).strip()
            continue
        mn = _NETWORK.match(msg)
        if mn:
            network = mn.group(1)
            continue
        md = _NETDEV.match(msg)
        if md:
            for dev in re.findall(r"\[\d+\]([^\s;]+)", md.group(2)):
                if dev not in netdevs:
                    netdevs.append(dev)
            continue
        mk = _COMM.search(msg)
        if mk and "Init COMPLETE" in msg:
            r = int(mk.group(1))
            ranks.setdefault(r, NcclRank(r, int(mk.group(2)), host, int(m.group("pid")), int(mk.group(3)),
                                         mk.group(4)))
    if n == 0:
        raise ParseError("NCCL debug log: no 'host:pid:tid [dev] NCCL INFO ...' line found "
                         "(was the job run with NCCL_DEBUG=INFO?)")
    return NcclDebugLog(version=version, hosts=hosts, ranks=[ranks[k] for k in sorted(ranks)],
                        rings=[rings[k] for k in sorted(rings)], trees=[trees[k] for k in sorted(trees)],
                        connections=conns, network=network, net_devices=netdevs, env=env, warnings=warns,
                        n_lines=n)


# ------------------------------------------------------------------------------------------ XID
_XID = re.compile(r"NVRM:\s+Xid\s+\((?:PCI:)?([0-9a-fA-F:.]+)\)\s*:\s*(\d+)\s*,?\s*(.*)$")


@dataclass(frozen=True)
class XidEvent:
    bus_id: str
    xid: int
    detail: str


def parse_xid_errors(text) -> list[XidEvent]:
    """XID events in ``dmesg`` / ``journalctl -k`` text. An empty list means no XID lines (a
    clean log is valid input); garbage that is not text raises ParseError."""
    if isinstance(text, str) and not text.strip():
        return []
    text = require_text(text, "kernel log")
    out = []
    for line in text.split("\n"):
        m = _XID.search(line)
        if m:
            xid = to_int(m.group(2))
            if xid is not None:
                out.append(XidEvent(m.group(1), xid, m.group(3).strip()))
    return out
