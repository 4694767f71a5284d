"""What this machine should measure: its GPU topology case and the expected busbw from the course model.

``labutil doctor`` gathers the facts (``nvidia-smi topo -m``, the GPU names, the PCIe link,
``ibstat`` port rates); :func:`machine_profile` turns them into one of the lab cases

- ``cpu``     no CUDA GPU: the gloo CPU path, no fabric expectation;
- ``single``  one GPU: no peer, no collective to expect;
- ``pcie``    at least one GPU pair without NVLink (topo code PIX/PXB/PHB/NODE/SYS): NCCL's ring
  runs at the speed of the slowest hop, a PCIe x16 link (or worse, through the CPU);
- ``nvlink``  every GPU pair on NVLink (NV#), with NVLink SHARP (NVLS) where the node is a full
  NVSwitch baseboard of a GPU whose catalog system has NVLS (H100/H200/H800/B200 HGX),

and :func:`expected_busbw_gbs` gives the large-message busbw that the course's one
communication model (:class:`labutil.cluster.Cluster`) predicts for it:

- NVLink: ``Cluster.for_gpu(<catalog GPU>)`` (achievable NVLink ring / NVLS busbw from
  ``labutil/data/systems.toml``, each with its source); ranks below the node size use the same node.
- PCIe: ``Cluster.from_links`` with the PCIe x16 per-direction rate of the GPU's link generation
  (``labutil.links.pcie_gbs``, PCI-SIG base specifications) as the scale-up link and the model's
  hand-built ring efficiency (370/450, the H100 NVLink ring ratio — no published PCIe figure is
  in the catalog, so this is the model's estimate, an upper bound when the path crosses the CPU).
- several nodes: the same node with ``n_nodes`` and the measured NIC count and rate.
"""

from __future__ import annotations

from .. import validate
from ..bench.common import catalog_gpu_name

__all__ = ["CASES", "DEFAULT_PCIE_GEN", "machine_profile", "describe", "cluster_for", "expected_busbw_gbs",
           "reference_cases"]

CASES = ("cpu", "single", "pcie", "nvlink")
DEFAULT_PCIE_GEN = "gen4"  # assumed when nvidia-smi gives no link generation (stated in the profile)


def _pairs(topology: dict | None) -> dict:
    return {k: v for k, v in (topology or {}).items() if k.startswith("GPU") and "-GPU" in k}


def machine_profile(facts: dict) -> dict:
    """The lab case of a machine from ``labutil doctor`` facts (``collect()`` output or ``--json`` 'facts')."""
    if not isinstance(facts, dict):
        raise TypeError(f"facts must be the dict of labutil.machine.doctor.collect(); got {type(facts).__name__}")
    gpu = facts.get("gpu") or {}
    tinfo = facts.get("torch") or {}
    names = [g.get("name", "") for g in gpu.get("gpus") or []] or list(tinfo.get("devices") or [])
    n = len(names)
    pairs = _pairs(gpu.get("topology"))
    nv = {k: v for k, v in pairs.items() if v.startswith("NV")}
    pcie = {k: v for k, v in pairs.items() if not v.startswith("NV")}
    catalog = catalog_gpu_name(names[0]) if names else None
    ports = [p for p in (facts.get("rdma") or {}).get("ports") or []
             if (p.get("state") or "").lower() == "active" and p.get("rate_gbps")]
    nic_gbps = max((float(p["rate_gbps"]) for p in ports), default=None)
    gen = (gpu.get("pcie") or {}).get("gen")
    prof = {"n_gpus": n, "catalog_gpu": catalog, "nvlink_pairs": sorted(nv), "pcie_pairs": sorted(pcie),
            "pair_links": pairs, "nics_active": len(ports), "nic_gbps": nic_gbps,
            "pcie_gen": f"gen{gen}" if gen else None, "nvls": False}
    if n == 0 or not tinfo.get("cuda_available", n > 0):
        prof["case"] = "cpu"
    elif n == 1:
        prof["case"] = "single"
    elif pcie or not pairs:
        prof["case"] = "pcie"
    else:
        prof["case"] = "nvlink"
        if catalog:
            try:
                from ..cluster import Cluster

                c = Cluster.for_gpu(catalog)
                prof["nvls"] = bool(c.nvls and n == c.gpus_per_node)
            except (KeyError, ValueError):
                prof["nvls"] = False
    prof["summary"] = describe(prof)
    return prof


def describe(prof: dict) -> str:
    case, n = prof["case"], prof["n_gpus"]
    if case == "cpu":
        return "no CUDA GPU: CPU path (gloo over loopback); no fabric busbw to expect"
    if case == "single":
        return "1 GPU: no peer, collectives have nothing to cross"
    if case == "pcie":
        links = ", ".join(f"{k} {v}" for k, v in sorted(prof["pair_links"].items())[:6]) or "topology unknown"
        return (f"{n} GPUs, NOT all on NVLink ({links}): PCIe case, "
                f"{prof['pcie_gen'] or DEFAULT_PCIE_GEN + ' (assumed)'} x16")
    return f"{n} GPUs, all pairs on NVLink; NVLink SHARP (NVLS): {'yes' if prof['nvls'] else 'no'}"


def cluster_for(prof: dict, n_nodes: int = 1):
    """The :class:`labutil.cluster.Cluster` the model uses for this machine (None for cpu/single)."""
    from .. import links
    from ..cluster import Cluster

    n_nodes = validate.integer("n_nodes", n_nodes, lo=1)
    nics = max(1, prof.get("nics_active") or 1)
    nic = prof.get("nic_gbps") or 400.0
    if prof["case"] == "nvlink" and prof.get("catalog_gpu"):
        try:
            c = Cluster.for_gpu(prof["catalog_gpu"], n_nodes=n_nodes)
        except (KeyError, ValueError):
            c = None
        if c is not None:
            if prof.get("nic_gbps"):
                from dataclasses import replace

                c = replace(c, nic_gbps=float(nic), nics_per_node=min(nics, c.gpus_per_node))
            return c
    if prof["case"] in ("pcie", "nvlink"):
        gen = prof.get("pcie_gen") or DEFAULT_PCIE_GEN
        return Cluster.from_links(nic_gbps=float(nic), nics_per_node=nics, gpus_per_node=prof["n_gpus"],
                                  scaleup_gbs=float(links.pcie_gbs(gen, 16)), n_nodes=n_nodes,
                                  name=f"{prof['n_gpus']}x GPU on PCIe {gen} x16")
    return None


def expected_busbw_gbs(prof: dict, op: str = "all_reduce", ranks: int | None = None, n_nodes: int = 1):
    """Large-message busbw (GB/s) the course model expects here, or None (CPU path, one GPU)."""
    c = cluster_for(prof, n_nodes)
    if c is None:
        return None
    ranks = c.n_gpus if ranks is None else validate.integer("ranks", ranks, lo=2, hi=c.n_gpus)
    return float(c.expected_busbw_gbs(op, ranks=ranks))


def reference_cases(op: str = "all_reduce") -> list[dict]:
    """The five configurations each lab guide states expectations for, from the same model.

    2x and 4x PCIe Gen4 x16 GPUs (``Cluster.from_links``, PCI-SIG Gen4 rate), 4 and 8 GPUs of an
    H100 HGX node (DGX-H100 catalog system: NVLink ring 370 GB/s, NVLS 480 GB/s, sources in
    systems.toml), 2 DGX-H100 nodes (16 ranks; 8x 400G NDR per node, per-rail bound).
    """
    from .. import links
    from ..cluster import Cluster

    pcie = links.pcie_gbs("gen4", 16)
    rows = []
    for n in (2, 4):
        c = Cluster.from_links(nic_gbps=100.0, gpus_per_node=n, scaleup_gbs=float(pcie), name=f"{n}x PCIe Gen4")
        rows.append({"case": f"{n}x PCIe Gen4 x16", "ranks": n, "busbw_gbs": float(c.expected_busbw_gbs(op, ranks=n)),
                     "source": "PCI-SIG PCIe 4.0 x16 per direction x the model's ring efficiency (labutil.cluster)"})
    dgx = Cluster.system("DGX-H100")
    for n in (4, 8):
        rows.append({"case": f"{n}x H100 SXM (NVLink, HGX node)", "ranks": n,
                     "busbw_gbs": float(dgx.expected_busbw_gbs(op, ranks=n)), "source": _busbw_source(dgx)})
    two = dgx.with_nodes(2)
    rows.append({"case": "2 nodes x 8 H100 (8x 400G NDR each)", "ranks": 16,
                 "busbw_gbs": float(two.acceptance_busbw_gbs(op, ranks=16)),  # NCCL_ALGO=Ring (ch22 acceptance)
                 "source": "labutil.cluster per-rail bound: min(NVLink ring, 8 NICs x 400G x NIC efficiency); "
                 + _busbw_source(dgx)})
    return rows


def _busbw_source(c) -> str:
    return c.source.split("Achievable busbw: ")[-1]
