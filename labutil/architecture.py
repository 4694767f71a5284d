"""Cluster architecture: the four layers and the network planes of a GPU cluster (chapter 3).

A cluster has four layers (seed 003): compute nodes, the network, storage and software. Its
network is not one network but several planes with different jobs:

- compute (back-end) fabric: GPU-to-GPU traffic, one NIC per GPU, rail-optimized, non-blocking
  (sized with ``labutil.topology.size_fabric``);
- storage network: checkpoints and training data between nodes and the parallel file system;
- front-end (in-band) network: logins, the scheduler, container images, user traffic;
- out-of-band management: BMC (IPMI/Redfish) ports of every server and switch, 1 GbE.

``plan_cluster`` sizes every plane for a catalog server and draws the architecture.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import data_files, hardware, topology, validate
from .plotting import new_figure

VENDORS = ("nvidia", "amd", "huawei")
OOB_SWITCH_PORTS = 48     # a typical 1 GbE management switch (48 RJ45 ports + uplinks)
OOB_PORTS_PER_NODE = 1    # one BMC port per server


@dataclass(frozen=True)
class Plane:
    """One network plane: per-node ports and speed, total ports and switches."""

    name: str
    role: str
    ports_per_node: int
    port_gbps: float
    node_gbps: float
    total_ports: int
    switches: int
    tiers: int
    oversubscription: float


@dataclass(frozen=True)
class ClusterPlan:
    n_gpus: int
    server: str
    nodes: int
    gpus_per_node: int
    planes: tuple[Plane, ...]
    compute_fabric: topology.Fabric

    def plane(self, name: str) -> Plane:
        for p in self.planes:
            if p.name == name:
                return p
        raise validate.unknown_name("plane", name, [p.name for p in self.planes])

    @property
    def total_switches(self) -> int:
        return sum(p.switches for p in self.planes)


def plan_cluster(n_gpus, server: str = "DGX-H100", compute_switch: str = "QM9700", *, compute_oversubscription=1.0,
                 storage_ports_per_node: int | None = None, storage_port_gbps: float = 200.0,
                 storage_oversubscription=2.0, frontend_ports_per_node: int = 2, frontend_port_gbps: float = 100.0,
                 frontend_oversubscription=4.0, ethernet_switch_ports: int = 64) -> ClusterPlan:
    """Size the four network planes of ``n_gpus`` GPUs in ``server`` nodes.

    Compute fabric: one NIC per GPU at the server's compute-NIC rate, rail-optimized, leaves and spines of
    ``compute_switch`` (NVIDIA DGX SuperPOD reference architecture). Storage and front-end: Ethernet
    leaf-spine fabrics of ``ethernet_switch_ports``-port switches at the given oversubscription
    (storage defaults to the server's storage NIC count). OOB: one 1 GbE BMC port per node.
    """
    n_gpus = validate.integer("n_gpus", n_gpus)
    srv = hardware.server(server)
    sw = hardware.switch(compute_switch)
    nodes = math.ceil(n_gpus / srv.gpus)
    nic = srv.nic_spec
    compute = topology.size_fabric(n_gpus, nics_per_node=srv.compute_nics, gpus_per_node=srv.gpus,
                                   switch_ports=sw.ports, link_gbps=nic.port_gbps,
                                   oversubscription=compute_oversubscription, rail_optimized=True)
    planes = [Plane("compute", "GPU-to-GPU collectives (back-end fabric)", srv.compute_nics, nic.port_gbps,
                    srv.compute_nics * nic.port_gbps, compute.n_nics, compute.total_switches, compute.tiers,
                    compute.actual_oversubscription)]
    sp = srv.storage_nics if storage_ports_per_node is None else validate.integer("storage_ports_per_node",
                                                                                  storage_ports_per_node)
    for name, role, ports, gbps, over in (
            ("storage", "checkpoints and datasets to the parallel file system", sp, storage_port_gbps,
             storage_oversubscription),
            ("frontend", "logins, scheduler, images, user and inference traffic (in-band)", frontend_ports_per_node,
             frontend_port_gbps, frontend_oversubscription)):
        fab = topology.size_fabric(nodes * ports, nics_per_node=ports, gpus_per_node=ports,
                                   switch_ports=ethernet_switch_ports, link_gbps=gbps, oversubscription=over,
                                   rail_optimized=False)
        planes.append(Plane(name, role, ports, float(gbps), ports * gbps, fab.n_nics, fab.total_switches, fab.tiers,
                            fab.actual_oversubscription))
    oob_ports = nodes * OOB_PORTS_PER_NODE + sum(p.switches for p in planes)  # servers and switches have BMCs
    oob_switches = math.ceil(oob_ports / OOB_SWITCH_PORTS)
    planes.append(Plane("oob", "out-of-band management: BMC (IPMI/Redfish), switch consoles", OOB_PORTS_PER_NODE, 1.0,
                        1.0, oob_ports, oob_switches, 1, 1.0))
    return ClusterPlan(n_gpus, srv.name, nodes, srv.gpus, tuple(planes), compute)


def software_stack() -> list[dict]:
    """The software layers, bottom to top, with each vendor's components and the chapter that teaches it."""
    return list(data_files.load("software_stack.toml")["layer"])


def stack_for(vendor: str) -> list[tuple[str, str]]:
    """(layer, components) for one accelerator vendor: 'nvidia', 'amd' or 'huawei'."""
    validate.choice("vendor", vendor, VENDORS)
    return [(layer["name"], layer[vendor]) for layer in software_stack()]


_PLANE_COLORS = {"compute": "#d62728", "storage": "#2ca02c", "frontend": "#1f77b4", "oob": "#7f7f7f"}


def architecture_figure(plan: ClusterPlan, max_nodes_drawn: int = 6):
    """Block diagram: software stack, compute nodes, the four network planes, storage and management."""
    from matplotlib.patches import FancyBboxPatch

    fig, ax = new_figure(figsize=(11, 6.2))
    ax.set_axis_off()
    ax.set_xlim(0, 11)
    ax.set_ylim(0, 7.4)

    def box(x, y, w, h, text, color, fs=8):
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.06",
                                    facecolor=color + "22", edgecolor=color, lw=1.2))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fs)

    # software layer
    box(0.3, 6.55, 10.4, 0.6, "Software: driver / CUDA / NCCL / containers / Slurm or K8s / PyTorch, DeepSpeed, Megatron",
        "#9467bd", 8.5)
    # compute nodes
    shown = min(plan.nodes, max_nodes_drawn)
    xs = [0.5 + i * (8.2 / max(shown, 1)) for i in range(shown)]
    w = min(1.2, 8.2 / max(shown, 1) - 0.3)
    for i, x in enumerate(xs):
        label = f"node {i}" if i < shown - 1 or plan.nodes == shown else f"node {plan.nodes - 1}"
        box(x, 5.2, w, 0.95, f"{label}\n{plan.gpus_per_node} GPU", "#ff7f0e", 7.5)
    if plan.nodes > shown and shown > 1:
        ax.text((xs[-2] + w + xs[-1]) / 2, 5.65, "...", ha="center", fontsize=12)
    ax.text(9.0, 5.65, f"{plan.nodes} x {plan.server}\n{plan.n_gpus} GPUs", fontsize=8.5, va="center")
    # planes as buses
    ys = {"compute": 4.4, "storage": 3.5, "frontend": 2.6, "oob": 1.7}
    for p in plan.planes:
        y = ys[p.name]
        c = _PLANE_COLORS[p.name]
        ax.plot([0.4, 8.8], [y, y], color=c, lw=3 if p.name == "compute" else 2)
        for x in xs:
            ax.plot([x + w / 2, x + w / 2], [5.2, y], color=c, lw=0.6, alpha=0.6)
        ax.text(8.95, y, f"{p.name}: {p.ports_per_node} x {p.port_gbps:g} Gb/s per node\n"
                         f"{p.total_ports} ports, {p.switches} switches, {p.tiers} tier(s)", fontsize=7.5, va="center",
                color=c)
    box(0.5, 0.2, 3.3, 1.0, "Parallel file system /\nobject store (storage plane)", "#2ca02c", 8)
    box(4.2, 0.2, 2.2, 1.0, "Login / scheduler\n(front-end)", "#1f77b4", 8)
    box(6.8, 0.2, 2.0, 1.0, "BMC / monitoring\n(OOB)", "#7f7f7f", 8)
    for x, name in ((2.15, "storage"), (5.3, "frontend"), (7.8, "oob")):
        ax.plot([x, x], [1.2, ys[name]], color=_PLANE_COLORS[name], lw=1.2)
    ax.set_title(f"Cluster architecture: {plan.n_gpus} GPUs, four layers, four network planes")
    return fig


def plane_bandwidth_figure(plan: ClusterPlan):
    """Per-node bandwidth of each plane (log scale): the compute fabric dwarfs the others."""
    fig, ax = new_figure(figsize=(7, 3.6))
    names = [p.name for p in plan.planes]
    vals = [p.node_gbps for p in plan.planes]
    ax.barh(names, vals, color=[_PLANE_COLORS[n] for n in names])
    ax.set_xscale("log")
    for i, v in enumerate(vals):
        ax.text(v * 1.1, i, f"{v:,.0f} Gb/s", va="center", fontsize=8)
    ax.set_xlim(0.5, max(vals) * 6)
    ax.set_xlabel("Bandwidth per node (Gb/s, log scale)")
    ax.set_title(f"Network planes of one {plan.server} node")
    return fig
