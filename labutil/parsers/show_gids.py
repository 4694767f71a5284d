"""Parser for ``show_gids``: the GID table of every RDMA port (RoCE), taught in ch11.

Format (the ``show_gids`` script of mlnx-tools / MLNX_OFED, ``sbin/show_gids``): a header
``DEV PORT INDEX GID IPv4 VER DEV``, a line of dashes, then one row per GID printed as
``echo -e "$dev\\t$port\\t$gidnum\\t$gid\\t$ipv4 \\t$ver\\t$ndev"`` (the IPv4 column is empty for a GID
that is not an IPv4-mapped address, ``::ffff:a.b.c.d``), and a last line ``n_gids_found=N``. The
script reads ``/sys/class/infiniband/<dev>/ports/<port>/gids/<i>`` and ``gid_attrs/{types,ndevs}/<i>``
(kernel ``Documentation/ABI/testing/sysfs-class-infiniband``: the type is "IB/RoCE v1" or "RoCE v2").

Reading: every IP address of the netdev appears twice, once as RoCE v1 and once as RoCE v2. Only a
RoCE v2 GID is routable across IP subnets (RoCEv2 = IB transport in UDP/IP, destination port 4791);
the ``fe80::`` link-local entries stay inside one L2 domain. ``GidTable.roce_v2_index(dev)`` returns the
index a tool must be given (``ib_write_bw -x``, ``NCCL_IB_GID_INDEX`` on NCCL before 2.21, whose
default was 0 = link-local RoCE v1) for the port's IPv4 address. Garbage raises one
:class:`ShowGidsParseError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._common import ANSI, ParseError, require_text

__all__ = ["ShowGidsParseError", "GidEntry", "GidTable", "parse_show_gids"]

_GID = r"[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}"
# mlx5_0  1  3  0000:...:c0a8:d3f2  192.168.211.242  v2  rdma0   (IPv4 and netdev may be empty)
_ROW = re.compile(rf"^\s*(\S+)\s+(\d+)\s+(\d+)\s+({_GID})\s+(?:(\d{{1,3}}(?:\.\d{{1,3}}){{3}})\s+)?(v[12])\b\s*(\S+)?\s*$")
_COUNT = re.compile(r"^\s*n_gids_found=(\d+)\s*$")


class ShowGidsParseError(ParseError):
    """``show_gids`` output without a single GID row."""


@dataclass(frozen=True)
class GidEntry:
    dev: str                 # RDMA device, e.g. mlx5_0
    port: int
    index: int               # the GID index (ib_write_bw -x, NCCL_IB_GID_INDEX)
    gid: str                 # 8 groups of 4 hex digits
    ipv4: str | None         # the IPv4 address of an IPv4-mapped GID, else None
    version: str             # 'v1' (RoCE v1, L2 only) or 'v2' (RoCE v2, UDP/IP, routable)
    netdev: str | None       # the Ethernet interface the GID belongs to

    @property
    def link_local(self) -> bool:
        return self.gid.lower().startswith("fe80:")

    @property
    def routable(self) -> bool:
        """RoCE v2 and not a link-local address: usable across IP subnets."""
        return self.version == "v2" and not self.link_local


@dataclass
class GidTable:
    entries: list = field(default_factory=list)
    n_found: int | None = None       # the script's own count (n_gids_found=N), None if the line is missing

    def devices(self) -> list[str]:
        return list(dict.fromkeys(e.dev for e in self.entries))

    def for_dev(self, dev: str, port: int | None = None) -> list[GidEntry]:
        rows = [e for e in self.entries if e.dev == dev and (port is None or e.port == port)]
        if not rows:
            raise KeyError(f"no GID of device {dev!r}" + (f" port {port}" if port is not None else "")
                           + f" in this show_gids output; devices: {self.devices()}")
        return rows

    def roce_v2_index(self, dev: str, port: int | None = None, ipv4: str | None = None) -> int:
        """The GID index of ``dev``'s RoCE v2 IPv4 entry (the one to pass as ``-x`` / ``NCCL_IB_GID_INDEX``).

        Raises ValueError when the port has no routable RoCE v2 IPv4 GID (no IP address on the netdev,
        or RoCE v2 disabled) or several (several addresses: name one with ``ipv4``).
        """
        rows = [e for e in self.for_dev(dev, port) if e.version == "v2" and e.ipv4 and (ipv4 is None or e.ipv4 == ipv4)]
        if not rows:
            raise ValueError(f"{dev}: no RoCE v2 GID with an IPv4 address (is an IP configured on the netdev, "
                             "is RoCE v2 enabled?); only link-local or v1 entries exist")
        if len(rows) > 1:
            raise ValueError(f"{dev}: several RoCE v2 IPv4 GIDs {[(e.index, e.ipv4) for e in rows]}; pass ipv4= to choose")
        return rows[0].index


def parse_show_gids(text) -> GidTable:
    """Parse ``show_gids`` output (one or several devices) into a :class:`GidTable`."""
    try:
        text = require_text(text, "show_gids")
    except ParseError as e:  # one error type per tool: ShowGidsParseError
        raise ShowGidsParseError(str(e)) from None
    table = GidTable()
    for raw in text.splitlines():
        line = ANSI.sub("", raw).replace("\t", " ")
        m = _ROW.match(line)
        if m:
            dev, port, idx, gid, ip, ver, ndev = m.groups()
            table.entries.append(GidEntry(dev=dev, port=int(port), index=int(idx), gid=gid.lower(), ipv4=ip,
                                          version=ver, netdev=ndev))
            continue
        c = _COUNT.match(line)
        if c:
            table.n_found = int(c.group(1))
    if not table.entries:
        raise ShowGidsParseError("not show_gids output: no 'DEV PORT INDEX GID [IPv4] VER [DEV]' row")
    if table.n_found is not None and table.n_found != len(table.entries):
        raise ShowGidsParseError(f"show_gids output truncated: n_gids_found={table.n_found} but "
                                 f"{len(table.entries)} GID rows were read")
    return table
