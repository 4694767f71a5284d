"""Cluster architecture: the four layers and the network planes of a GPU cluster (chapter 3).

A cluster has four layers (seed 003): compute nodes, the network, storage and software. Its
network is not one network but several planes with different jobs:

- compute (back-end) fabric: GPU-to-GPU traffic, one NIC per GPU, rail-optimized, non-blocking
  (sized with ``labutil.topology.size_fabric``);
- storage network: checkpoints and training data between nodes and the parallel file system;
- front-end (in-band) network: logins, the scheduler, container images, user traffic;
- out-of-band management: BMC (IPMI/Redfish) ports of every server and switch, 1 GbE.

``plan_cluster`` sizes every plane for a catalog server; ``labutil.explore.architecture`` draws it
(``architecture_figure``, ``plane_bandwidth_figure``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import data_files, hardware, topology, validate

__all__ = ["VENDORS", "OOB_SWITCH_PORTS", "OOB_PORTS_PER_NODE", "Plane", "ClusterPlan", "plan_cluster",
           "software_stack", "stack_for"]

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
