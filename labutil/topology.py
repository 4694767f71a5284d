"""Network topology arithmetic: k-ary fat trees, leaf-spine / three-tier fabric sizing, torus, dragonfly.

Taught in ch12 (网络拓扑: Fat-Tree、轨道优化与Torus); ch10 and ch30 reuse the switch/optics counts.

Sources
-------
- k-ary fat tree: M. Al-Fares, A. Loukissas, A. Vahdat, "A Scalable, Commodity Data Center Network
  Architecture", SIGCOMM 2008, §3.2: k pods, each with k/2 edge and k/2 aggregation switches of k ports,
  (k/2)^2 core switches, k^3/4 hosts; 5k^2/4 switches in total.
- Rail-optimized leaf-spine / three-tier: NVIDIA DGX SuperPOD Reference Architecture featuring DGX H100
  (RA-11333-001), "Network Fabrics", Table 4 "Compute fabric component count" (1-4 SUs of 32 DGX H100,
  8 rails, QM9700 leaf and spine: 8/4, 16/8, 24/16, 32/16 leaf/spine), and the DGX SuperPOD B200 RA,
  "DGX SuperPOD Architecture", larger-configuration table (2-64 SUs: 2-tier up to 8 SUs = 2,048 GPUs,
  then leaf/spine/core 128/128/64 at 16 SUs, 256/256/128 at 32 SUs, 512/512/256 at 64 SUs).
- Torus: W. J. Dally, B. Towles, "Principles and Practices of Interconnection Networks" (2004), ch. 5
  (k-ary n-cube: diameter n*floor(k/2), bisection 2*k^(n-1) channels for even k with wraparound).
- Dragonfly: J. Kim, W. J. Dally, S. Scott, D. Abts, "Technology-Driven, Highly-Scalable Dragonfly
  Topology", ISCA 2008, §3: p terminals, a routers, h global links per router; g = a*h + 1 groups at most;
  balanced when a = 2p = 2h.

Design rules of ``size_fabric`` (stated, so a learner can check them against a vendor design)
---------------------------------------------------------------------------------------------
1. A leaf of radix r splits its ports into d down (NIC-facing) and u = r - d up ports with
   d = floor(r * o / (o + 1)) for oversubscription o (down:up = o:1, never worse than asked).
2. Rail-optimized: NIC i of every node goes to a leaf of rail i; a rail needs ceil(nodes / d) leaves,
   so leaves = nics_per_node * ceil(nodes / d) (one SU = d nodes = 32 DGX H100 at r = 64, o = 1).
   Not rail-optimized: NICs are packed onto leaves in node order, leaves = ceil(nics / d).
3. Two tiers: spines = the smallest divisor of u that is >= ceil(leaves * u / r), so every leaf has the
   same number (u / spines) of parallel links to every spine (balanced ECMP, the SuperPOD shape:
   3 SUs use 16 spines, not 12). Feasible while leaves <= r, i.e. NICs <= r * d = r^2/2 at 1:1.
4. Three tiers (pods): a spine splits r/2 down, r/2 up (non-blocking above the leaf); a pod holds r/2
   leaves and the smallest divisor of u >= ceil(pod_leaves * u / (r/2)) spines; spine j of every pod
   belongs to plane j whose core switches are the smallest divisor of r/2 >= ceil(pods * (r/2) / r).
   Feasible while pods <= r (r^3/4 NICs at 1:1). Beyond that a fourth tier is needed: ValueError.
5. The leaf down/up split may use fewer down ports than rule 1 allows if that builds the same GPUs with
   fewer switches (a lower ratio than asked is always acceptable); among equal totals, fewer spines win.
6. Every leaf uplink and spine uplink is cabled (a fabric is built for full leaves, as the RA advises).
   Cables = node-leaf + leaf-spine + spine-core links. Transceivers: every link is optical (SuperPOD
   puts leaf switches in network racks); a switch OSFP cage holds a twin-port 2x400G transceiver that
   terminates 2 links (QM9700 user manual); a node uses ``node_ports_per_transceiver`` links per
   transceiver (2 for DGX H100's twin-port OSFP cages, 1 for single-port ConnectX-7 PCIe cards).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from . import validate


from .parsers._common import ParseError  # noqa: E402  one parse-error type for every tool parser

__all__ = ["FatTree", "fat_tree", "fat_tree_path_links", "Fabric", "size_fabric", "max_nics", "fabric_optics_kw",
           "Torus", "torus", "Dragonfly", "dragonfly", "parse_ibswitches", "parse_iblinkinfo", "summarize_links"]


def _int(name, value, lo=1, hi=None):
    """validate.integer that also refuses strings ("8" is not a port count)."""
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be an integer >= {lo}; got the string {value!r}")
    return validate.integer(name, value, lo=lo, hi=hi)


# ---------------------------------------------------------------------------------------------
# k-ary fat tree (Al-Fares et al. 2008)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FatTree:
    """A k-ary three-tier fat tree built from identical k-port switches (Al-Fares et al. 2008, §3.2)."""

    k: int
    pods: int
    hosts: int
    edge_switches: int
    agg_switches: int
    core_switches: int
    total_switches: int
    links: int
    bisection_links: int


def fat_tree(k) -> FatTree:
    """k-ary fat tree: k^3/4 hosts, k pods of k/2 edge + k/2 aggregation switches, (k/2)^2 core.

    Links: k^3/4 host-edge + k^3/4 edge-aggregation + k^3/4 aggregation-core; bisection k^3/8 links
    (full bisection bandwidth: half the hosts can send to the other half at line rate).
    """
    k = _int("k", k, lo=2)
    if k % 2:
        raise ValueError(f"k must be an even integer >= 2 (k-port switches split k/2 down, k/2 up); got {k}")
    half = k // 2
    edge = agg = k * half
    core = half * half
    hosts = k ** 3 // 4
    return FatTree(k=k, pods=k, hosts=hosts, edge_switches=edge, agg_switches=agg, core_switches=core,
                   total_switches=edge + agg + core, links=3 * hosts, bisection_links=hosts // 2)


def fat_tree_path_links(k) -> dict:
    """Host-to-host path lengths in a full k-ary fat tree, counted in links (the host links included).

    Same edge switch: 2 links; same pod, other edge: 4; other pod (through a core switch): 6
    (Al-Fares et al. 2008, §3.2). ``mean_links`` averages over every destination host *including the
    source itself* (distance 0), the same convention as :attr:`Torus.avg_hops`, so the two can be
    compared directly; ``max_links`` is the diameter, 6 (every k-ary fat tree has k >= 2 pods).
    """
    ft = fat_tree(k)
    half = ft.k // 2
    same_edge = half - 1
    same_pod = half * half - half
    other_pod = ft.hosts - half * half
    mean = (2 * same_edge + 4 * same_pod + 6 * other_pod) / ft.hosts
    return {"k": ft.k, "hosts": ft.hosts, "mean_links": float(mean), "max_links": 6}


# ---------------------------------------------------------------------------------------------
# Leaf-spine / three-tier fabric sizing
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Fabric:
    """A sized compute fabric. Counts are integers; bandwidths in Gbit/s."""

    n_gpus: int
    n_nodes: int
    n_nics: int
    gpus_per_node: int
    nics_per_node: int
    switch_ports: int
    link_gbps: float
    oversubscription: float          # requested down:up ratio
    actual_oversubscription: float   # d/u of the built leaves (<= requested)
    rail_optimized: bool
    tiers: int
    down_ports_per_leaf: int
    up_ports_per_leaf: int
    leaf_switches: int
    spine_switches: int
    core_switches: int
    total_switches: int
    pods: int
    node_leaf_cables: int
    leaf_spine_cables: int
    spine_core_cables: int
    cables: int
    transceivers: int
    bisection_gbps: float
    per_gpu_bisection_gbps: float
    max_nics_at_tiers: int            # capacity of this many tiers with these leaves
    rail_peers_one_hop: int           # nodes whose same-rail NIC shares this NIC's leaf

    @property
    def switch_counts(self) -> dict:
        return {"leaf": self.leaf_switches, "spine": self.spine_switches, "core": self.core_switches}


def _smallest_divisor_at_least(n: int, lo: int) -> int:
    """Smallest divisor of n that is >= lo (n itself when lo > n is impossible: caller checks)."""
    lo = max(1, lo)
    for s in range(lo, n + 1):
        if n % s == 0:
            return s
    return n


def _design(n_nodes, nics_per_node, r, d, rail_optimized):
    """Switch counts for leaves with d down / r-d up ports, or None if > 3 tiers would be needed."""
    u = r - d
    n_nics = n_nodes * nics_per_node
    if rail_optimized and nics_per_node > 1:
        leaves = nics_per_node * math.ceil(n_nodes / d)
    else:
        leaves = math.ceil(n_nics / d)
    if n_nics <= r:
        # one switch carries every NIC (all its ports can face NICs; every pair is one hop): a single tier
        return dict(tiers=1, d=min(r, n_nics), u=0, leaves=1, spines=0, cores=0, pods=0,
                    leaf_spine=0, spine_core=0, max_nics=r)
    if leaves <= r:
        need = math.ceil(leaves * u / r)
        spines = _smallest_divisor_at_least(u, need)
        return dict(tiers=2, d=d, u=u, leaves=leaves, spines=spines, cores=0, pods=0,
                    leaf_spine=leaves * u, spine_core=0, max_nics=r * d)
    half = r // 2
    pods = math.ceil(leaves / half)
    if pods > r:
        return None
    spines = 0
    full_pod_spines = _smallest_divisor_at_least(u, math.ceil(half * u / half))  # = u
    for p in range(pods):
        lp = min(half, leaves - p * half)
        spines += _smallest_divisor_at_least(u, math.ceil(lp * u / half))
    cores_per_plane = _smallest_divisor_at_least(half, math.ceil(pods * half / r))
    cores = full_pod_spines * cores_per_plane
    return dict(tiers=3, d=d, u=u, leaves=leaves, spines=spines, cores=cores, pods=pods,
                leaf_spine=leaves * u, spine_core=spines * half, max_nics=r * half * d)


def size_fabric(n_gpus, nics_per_node=8, gpus_per_node=8, switch_ports=64, link_gbps=400.0,
                oversubscription=1.0, rail_optimized=True, node_ports_per_transceiver=2,
                nic_leaf_optical=True) -> Fabric:
    """Size a rail-optimized (or plain) leaf-spine or three-tier fat-tree compute fabric.

    See the module docstring for the design rules. Bisection bandwidth (Gbit/s) is the capacity across
    the worst-case cut when half of the NICs send to the other half:
    ``B = (n_nics / 2) * link_gbps * min(1, u / d)`` (the leaf uplinks are the only oversubscribed layer;
    a single switch is non-blocking). Per GPU: ``B / (n_gpus / 2)``.

    Validated against NVIDIA DGX SuperPOD H100 RA Table 4 and the B200 RA larger-configuration table
    (see tests/test_topology.py).
    """
    n_gpus = _int("n_gpus", n_gpus, lo=1)
    nics_per_node = _int("nics_per_node", nics_per_node, lo=1, hi=64)
    gpus_per_node = _int("gpus_per_node", gpus_per_node, lo=1, hi=1024)
    r = _int("switch_ports", switch_ports, lo=4, hi=4096)
    if r % 2:
        raise ValueError(f"switch_ports must be an even integer >= 4; got {r}")
    link = validate.positive("link_gbps", link_gbps)
    o = validate.number("oversubscription", oversubscription, lo=1.0, hi=float(r - 1))
    if not isinstance(rail_optimized, (bool, np.bool_)):
        raise ValueError(f"rail_optimized must be True or False; got {rail_optimized!r}")
    nppt = _int("node_ports_per_transceiver", node_ports_per_transceiver, lo=1, hi=8)

    n_nodes = math.ceil(n_gpus / gpus_per_node)
    n_nics = n_nodes * nics_per_node
    d_max = int(math.floor(r * o / (o + 1) + 1e-9))
    best = None
    for d in range(d_max, r // 2 - 1, -1):
        des = _design(n_nodes, nics_per_node, r, d, bool(rail_optimized))
        if des is None:
            continue
        key = (des["leaves"] + des["spines"] + des["cores"], des["spines"], -d)
        if best is None or key < best[0]:
            best = (key, des)
        if des["tiers"] == 1:
            break
    if best is None:
        half = r // 2
        cap = r * half * d_max
        raise ValueError(f"n_gpus={n_gpus} needs {n_nics} NIC ports, more than a three-tier fat tree of "
                         f"{r}-port switches at oversubscription {o:g} connects ({cap}); use a higher-radix "
                         f"switch_ports or fewer GPUs (four tiers are not modelled)")
    des = best[1]
    d, u = des["d"], des["u"]
    o_act = d / u if u else 1.0
    node_leaf = n_nics
    cables = node_leaf + des["leaf_spine"] + des["spine_core"]
    # transceivers: switch side twin-port (2 link ends per transceiver), node side nppt ends per transceiver
    leaf_ends = (node_leaf if nic_leaf_optical else 0) + des["leaf_spine"]
    spine_ends = des["leaf_spine"] + des["spine_core"]
    core_ends = des["spine_core"]
    sw_xcvr = math.ceil(leaf_ends / 2) + math.ceil(spine_ends / 2) + math.ceil(core_ends / 2)
    node_xcvr = n_nodes * math.ceil(nics_per_node / nppt) if nic_leaf_optical else 0
    bisection = n_nics / 2 * link * min(1.0, 1.0 / o_act)
    per_gpu = bisection / (n_gpus / 2) if n_gpus > 1 else link * nics_per_node / gpus_per_node
    per_gpu = min(per_gpu, link * nics_per_node / gpus_per_node * min(1.0, 1.0 / o_act))
    if des["tiers"] == 1:
        peers = n_nodes
    elif rail_optimized and nics_per_node > 1:
        peers = min(n_nodes, d)
    else:
        peers = min(n_nodes, max(1, d // nics_per_node))
    total = des["leaves"] + des["spines"] + des["cores"]
    return Fabric(n_gpus=n_gpus, n_nodes=n_nodes, n_nics=n_nics, gpus_per_node=gpus_per_node,
                  nics_per_node=nics_per_node, switch_ports=r, link_gbps=link, oversubscription=o,
                  actual_oversubscription=o_act, rail_optimized=bool(rail_optimized), tiers=des["tiers"],
                  down_ports_per_leaf=d, up_ports_per_leaf=u, leaf_switches=des["leaves"],
                  spine_switches=des["spines"], core_switches=des["cores"], total_switches=total,
                  pods=des["pods"], node_leaf_cables=node_leaf, leaf_spine_cables=des["leaf_spine"],
                  spine_core_cables=des["spine_core"], cables=cables, transceivers=sw_xcvr + node_xcvr,
                  bisection_gbps=bisection, per_gpu_bisection_gbps=per_gpu, max_nics_at_tiers=des["max_nics"],
                  rail_peers_one_hop=peers)


def max_nics(switch_ports, tiers, oversubscription=1.0) -> int:
    """NIC ports a fat tree of ``tiers`` tiers of ``switch_ports``-port switches connects (rules 1, 3, 4).

    1 tier: r; 2 tiers: r*d (= r^2/2 at 1:1); 3 tiers: r*(r/2)*d (= r^3/4 at 1:1).
    """
    r = _int("switch_ports", switch_ports, lo=4)
    if r % 2:
        raise ValueError(f"switch_ports must be an even integer >= 4; got {r}")
    t = _int("tiers", tiers, lo=1, hi=3)
    o = validate.number("oversubscription", oversubscription, lo=1.0, hi=float(r - 1))
    d = int(math.floor(r * o / (o + 1) + 1e-9))
    return {1: r, 2: r * d, 3: r * (r // 2) * d}[t]


def fabric_optics_kw(fabric: Fabric, transceiver_power_w: float) -> float:
    """Power of the fabric's transceivers in kW (e.g. 17 W per Class-8 twin-port OSFP, QM9700 manual)."""
    p = validate.positive("transceiver_power_w", transceiver_power_w)
    return fabric.transceivers * p / 1e3


# ---------------------------------------------------------------------------------------------
# Torus and dragonfly
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Torus:
    dims: tuple
    nodes: int
    links: int
    degree: int
    diameter: int
    bisection: int          # links crossing the minimum bisection
    avg_hops: float


def torus(dims) -> Torus:
    """k-ary n-dimensional torus with wraparound (Dally & Towles 2004, ch. 5).

    nodes = prod(k_i); each dimension with k_i >= 3 adds nodes links (a ring per line), k_i = 2 adds
    nodes/2 (the two wrap directions are the same link); diameter = sum(floor(k_i/2));
    bisection (cut across the largest dimension k_max) = 2*nodes/k_max links for k_max >= 3
    (the ring is cut twice), nodes/2 for k_max = 2. Average hops: sum over dims of the mean ring distance.
    """
    try:
        dims_t = tuple(dims)
    except TypeError:
        raise ValueError(f"dims must be a sequence of integers >= 2, e.g. (8, 8, 8); got {dims!r}") from None
    if not dims_t:
        raise ValueError("dims must not be empty; e.g. (8, 8, 8)")
    ks = tuple(_int(f"dims[{i}]", k, lo=2) for i, k in enumerate(dims_t))
    nodes = int(np.prod(ks, dtype=np.int64))
    links = sum(nodes if k >= 3 else nodes // 2 for k in ks)
    degree = sum(2 if k >= 3 else 1 for k in ks)
    diameter = sum(k // 2 for k in ks)
    kmax = max(ks)
    bisection = 2 * nodes // kmax if kmax >= 3 else nodes // 2
    avg = sum(float(np.mean(np.minimum(np.arange(k), k - np.arange(k)))) for k in ks)
    return Torus(dims=ks, nodes=nodes, links=links, degree=degree, diameter=diameter, bisection=bisection,
                 avg_hops=avg)


@dataclass(frozen=True)
class Dragonfly:
    p: int
    a: int
    h: int
    groups: int
    routers: int
    terminals: int
    router_radix: int
    global_links: int
    balanced: bool


def dragonfly(p, a, h, groups=None) -> Dragonfly:
    """Dragonfly (Kim et al., ISCA 2008): router radix p + (a-1) + h; at most g = a*h + 1 groups.

    terminals = a*p*g; global links = g*a*h/2; balanced when a = 2p = 2h.
    """
    p = _int("p", p, lo=1)
    a = _int("a", a, lo=1)
    h = _int("h", h, lo=1)
    g_max = a * h + 1
    g = g_max if groups is None else _int("groups", groups, lo=1, hi=g_max)
    return Dragonfly(p=p, a=a, h=h, groups=g, routers=a * g, terminals=a * p * g, router_radix=p + a - 1 + h,
                     global_links=(g * a * h) // 2, balanced=(a == 2 * p == 2 * h))


# ---------------------------------------------------------------------------------------------
# Parsers for InfiniBand discovery tools (infiniband-diags)
# ---------------------------------------------------------------------------------------------
_IBSW = re.compile(r'^Switch\s*:\s*(0x[0-9a-fA-F]+)\s+ports\s+(\d+)\s+"([^"]*)"\s+(.*?)\blid\s+(\d+)')


def parse_ibswitches(text: str) -> list[dict]:
    """Parse ``ibswitches`` output: one ``Switch : <GUID> ports <N> "<desc>" ... lid <L> lmc <M>`` per line.

    ``ports`` as printed counts switch port 0 (the management port), so physical ports = N - 1.
    Returns dicts with guid, ports, physical_ports, description, lid. Raises ParseError on anything else.
    """
    if not isinstance(text, str) or not text.strip():
        raise ParseError("ibswitches output is empty; expected lines like "
                         "'Switch : 0x... ports 65 \"desc\" enhanced port 0 lid 1 lmc 0'")
    out = []
    for i, line in enumerate(text.strip().splitlines(), 1):
        if not line.strip():
            continue
        m = _IBSW.match(line.strip())
        if not m:
            raise ParseError(f"ibswitches line {i} is not in the 'Switch : <GUID> ports <N> \"<desc>\" ... lid <L>' "
                             f"format: {line.strip()[:80]!r}")
        ports = int(m.group(2))
        out.append({"guid": m.group(1).lower(), "ports": ports, "physical_ports": max(ports - 1, 0),
                    "description": m.group(3), "lid": int(m.group(5))})
    return out


_LINK = re.compile(r'^\s*(?:(0x[0-9a-fA-F]+)\s+)?(\d+)\s+(\d+)\[\s*\]\s+==\(\s*(\d+)X\s+([\d.]+)\s+Gbps\s+'
                   r'(\w+)\s*/\s*(\w+)\s*\)==>\s+(\d+)\s+(\d+)\[\s*\]\s+"([^"]*)"')
_DOWN = re.compile(r'^\s*(?:(0x[0-9a-fA-F]+)\s+)?(\d+)\s+(\d+)\[\s*\]\s+==\(\s*(.*?)\s*\)==>\s*\[\s*\]\s*"\s*"')
_HDR = re.compile(r'^(Switch|CA):\s+(0x[0-9a-fA-F]+)?\s*(.*?):?\s*$')


def parse_iblinkinfo(text: str) -> list[dict]:
    """Parse ``iblinkinfo`` output into links.

    Format (infiniband-diags ``iblinkinfo``): a header ``Switch: <GUID> <name>:`` (or ``CA: <name>:``),
    then one line per port: ``<LID> <port>[  ] ==( <W>X <lane Gbps> Gbps <Phys>/ <Logical>)==> <peer LID>
    <peer port>[  ] "<peer name>" ( )``; a port without a link prints ``==(  Down/ Polling)==>  [  ] "" ( )``.
    Returns one dict per active port: device, device_type, lid, port, width, lane_gbps, link_gbps
    (= width x lane rate, signalling), state, phys_state, peer_lid, peer_port, peer.
    """
    if not isinstance(text, str) or not text.strip():
        raise ParseError("iblinkinfo output is empty; expected 'Switch: <GUID> <name>:' blocks")
    links, device, dtype = [], None, None
    for i, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        h = _HDR.match(line.strip())
        if h and "==(" not in line:
            dtype, device = h.group(1), h.group(3).strip()
            continue
        m = _LINK.match(line)
        if m:
            if device is None:
                raise ParseError(f"iblinkinfo line {i}: a port line before any 'Switch:'/'CA:' header")
            width, lane = int(m.group(4)), float(m.group(5))
            links.append({"device": device, "device_type": dtype, "lid": int(m.group(2)), "port": int(m.group(3)),
                          "width": width, "lane_gbps": lane, "link_gbps": width * lane,
                          "phys_state": m.group(6), "state": m.group(7), "peer_lid": int(m.group(8)),
                          "peer_port": int(m.group(9)), "peer": m.group(10)})
            continue
        if _DOWN.match(line):
            continue
        raise ParseError(f"iblinkinfo line {i} is neither a device header nor a port line: {line.strip()[:80]!r}")
    if not links:
        raise ParseError("iblinkinfo output has no active links")
    return links


def summarize_links(links: list[dict]) -> dict:
    """Counts from parsed iblinkinfo links: switches, switch-to-switch links, host links, slow/narrow ports.

    A link appears twice (once from each end) when both ends are switches; counted once here.
    """
    if not links:
        raise ValueError("links must not be empty (parse iblinkinfo output first)")
    switches = sorted({lk["device"] for lk in links if lk["device_type"] == "Switch"})
    sw_set = set(switches)
    isl = {tuple(sorted([(lk["device"], lk["port"]), (lk["peer"], lk["peer_port"])]))
           for lk in links if lk["device_type"] == "Switch" and lk["peer"] in sw_set}
    host = [lk for lk in links if lk["device_type"] == "Switch" and lk["peer"] not in sw_set]
    top = max(lk["link_gbps"] for lk in links)
    degraded = [f'{lk["device"]} port {lk["port"]}' for lk in links
                if lk["device_type"] == "Switch" and (lk["link_gbps"] < top or lk["state"] != "LinkUp")]
    return {"switches": len(switches), "switch_links": len(isl), "host_links": len(host),
            "max_link_gbps": top, "degraded_ports": degraded}
