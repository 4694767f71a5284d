"""Capstone (ch30 综合案例): an end-to-end cluster design that CHAINS the course's models.

``design_cluster(requirements)`` does not re-implement anything; each step is a call into the
module that teaches it:

====================  ===========================================================================
step                  model
====================  ===========================================================================
compute budget        ``compute.train_flops`` (6·N·D), ``compute.gpus_for_deadline`` (ch04)
scalable units        GPUs rounded up to whole scalable units of ``nodes_per_su`` servers
                      (NVIDIA DGX SuperPOD H100 reference architecture: one SU = 32 DGX H100)
parallel layout       ``steptime.search_layouts`` on the chosen fabric's per-GPU bandwidth (ch08)
network               ``architecture.plan_cluster`` (storage / front-end / OOB planes, ch03) and
                      ``topology.size_fabric`` (compute fabric, switches, cables, optics, ch12)
storage               ``storage.checkpoint_gb``, ``data_read_requirements``, ``plan_tiers``,
                      ``checkpoint_write_s`` (ch16-18)
power                 ``power.cluster_power``, ``energy_cost_per_year``, ``cooling_advice`` (ch10)
cost                  ``cost.tco`` (capex + opex, ch05)
reliability           ``reliability.llama3_components`` → ``cluster_failures_per_day``,
                      ``young_daly_interval_s``, ``goodput``, ``simulate_timelines`` (ch27)
inference             ``inference.llm_gpus_for_slo`` (ch24)
====================  ===========================================================================

``bill_of_materials(design)`` turns the design into rows (选型清单); ``to_markdown`` and
``write_csv`` export it (atomic write, ``labutil.fileio``). ``operations_view`` gives the
10,000-GPU operations numbers (failures/day, spares, on-call load, checkpoint interval, goodput).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import asdict, dataclass, fields, replace

import numpy as np

from . import architecture, compute, cost, hardware, inference, models, power, reliability, steptime, \
    storage, topology, validate
from .fileio import write_text_atomic
from .units import HOURS_PER_DAY, SECONDS_PER_DAY

# -- compute-fabric builds for each priced fabric of labutil/data/prices.toml ---------------------
#: fabric (a ``cost.fabrics()`` name) -> (NIC catalog name, NICs per 8-GPU node or None = the
#: server's compute NICs, switch catalog name, switch ports at this link speed, source).
#: Link speed per NIC = ``cost.fabric_node_gbps(fabric) / NICs per node`` (prices.toml).
FABRIC_BUILDS = {
    "IB-NDR-400G": ("ConnectX-7-400G", None, "QM9700", 64,
                    "DGX SuperPOD H100 RA: one 400G NDR NIC per GPU, QM9700 64 x 400G leaves/spines"),
    "RoCE-400G": ("ConnectX-7-400G", None, "SN5600", 128,
                  "NVIDIA Spectrum-X RA: one 400GbE NIC per GPU, SN5600 128 x 400GbE"),
    "IB-HDR-200G": ("ConnectX-6-200G", None, "QM9700", 128,
                    "QM9700 user manual: 32 OSFP cages run as 128 x 200G (NDR200 split), HDR-compatible"),
    "Ethernet-25G": ("Ethernet-25G", 2, "SN4700", 128,
                     "SN4700 datasheet: 32 QSFP-DD ports, 4-way breakout to 128 lower-speed ports; "
                     "prices.toml Ethernet-25G = 2 x 25 GbE per node"),
}

#: servers with a price in prices.toml (the explorer's "GPU type" choice)
SERVERS = ("DGX-H100", "HGX-H800", "DGX-A100")

#: DGX SuperPOD H100 reference architecture: a scalable unit (SU) is 32 DGX H100 nodes (256 GPUs).
SUPERPOD_NODES_PER_SU = 32


@dataclass(frozen=True)
class Requirements:
    """What the customer asks for. Every field is validated (ValueError naming the field).

    Defaults: the chapter's virtual customer, a medical-AI company (see ch30): pre-train a 70B
    medical multimodal LLM on 4e12 tokens in 55 days, serve report generation at 50 requests/s
    with P99 end-to-end <= 40 s, capex budget 80 M USD. The planning values (MFU 0.40, goodput
    0.90) are design inputs: 0.90 is the ">90 % effective training time" Meta reports for Llama 3
    (arXiv:2407.21783 §3.3.4); MFU 0.38-0.43 is what Llama 3 405B reached on 16k H100 (Table 4).
    """

    customer: str = "MedVision AI (virtual customer)"
    model: str = "llama3-70b"                 # largest model to train (labutil.models preset)
    tokens: float = 4e12                      # training tokens
    deadline_days: float = 55.0
    server: str = "DGX-H100"
    fabric: str = "IB-NDR-400G"
    budget_usd: float = 80e6                  # capex budget
    planning_mfu: float = 0.40
    planning_goodput: float = 0.90
    global_batch: int = 1024                  # sequences per step
    nodes_per_su: int = SUPERPOD_NODES_PER_SU
    tokens_per_sample: int = 2048             # text tokens per image-text sample
    sample_bytes: float = 1.0e6               # bytes read per sample (a preprocessed image tile + text)
    dataset_tb: float = 2000.0                # raw images + reports + tokenised corpus
    checkpoint_blocking_s: float = 60.0       # target: a checkpoint persists within this
    checkpoints_kept: int = 3
    restart_s: float = 600.0                  # detect + reschedule + reload after a failure
    inference_model: str = "llama3-70b"
    inference_qps: float = 50.0               # requests/s (0 = no inference pool)
    inference_p99_s: float = 40.0
    inference_tp: int = 8
    pue: float = 1.3
    rack_kw_limit: float = 40.0
    years: float = 4.0
    utilisation: float = 0.8
    usd_per_kwh: float = cost.DEFAULT_USD_PER_KWH

    def __post_init__(self):
        validate.positive("tokens", self.tokens)
        validate.positive("deadline_days", self.deadline_days)
        validate.choice("server", self.server, SERVERS)
        validate.choice("fabric", self.fabric, tuple(FABRIC_BUILDS))
        validate.positive("budget_usd", self.budget_usd)
        validate.fraction("planning_mfu", self.planning_mfu)
        validate.fraction("planning_goodput", self.planning_goodput)
        validate.integer("global_batch", self.global_batch, lo=1)
        validate.integer("nodes_per_su", self.nodes_per_su, lo=1, hi=1024)
        validate.integer("tokens_per_sample", self.tokens_per_sample, lo=1)
        validate.positive("sample_bytes", self.sample_bytes)
        validate.positive("dataset_tb", self.dataset_tb)
        validate.positive("checkpoint_blocking_s", self.checkpoint_blocking_s)
        validate.integer("checkpoints_kept", self.checkpoints_kept, lo=1, hi=100)
        validate.positive("restart_s", self.restart_s, allow_zero=True)
        validate.positive("inference_qps", self.inference_qps, allow_zero=True)
        validate.positive("inference_p99_s", self.inference_p99_s)
        validate.integer("inference_tp", self.inference_tp, lo=1, hi=64)
        validate.number("pue", self.pue, lo=1.0, hi=3.0)
        validate.positive("rack_kw_limit", self.rack_kw_limit)
        validate.positive("years", self.years)
        validate.fraction("utilisation", self.utilisation)
        validate.positive("usd_per_kwh", self.usd_per_kwh)
        for name in ("model", "inference_model"):
            v = getattr(self, name)
            if v not in models.transformer_names():
                raise ValueError(f"{name} must be one of {models.transformer_names()}; got {v!r}")
        for name in ("tokens", "deadline_days", "budget_usd", "sample_bytes", "dataset_tb"):
            if np.ndim(getattr(self, name)):
                raise ValueError(f"{name} must be a single number (one design at a time)")


def requirements(**changes) -> Requirements:
    """The default virtual customer with ``changes`` applied (validated)."""
    return replace(Requirements(), **changes)


# -- the design tree ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ComputeDesign:
    params: float
    total_flops: float
    peak_tflops: float
    gpus_for_deadline: int           # compute.gpus_for_deadline at planning MFU and goodput
    training_gpus: int               # rounded up to whole scalable units
    training_nodes: int
    scalable_units: int
    layout: steptime.LayoutEstimate          # best feasible layout on this fabric
    global_batch: int                        # the requested one, or the next multiple of the node count
    layouts_feasible: int
    per_gpu_net_gbs: float           # compute-fabric bandwidth per GPU (GB/s)
    estimated_mfu: float             # the layout's MFU on this fabric
    estimated_days: float            # wall-clock days at the layout's MFU / modelled goodput
    meets_deadline: bool


@dataclass(frozen=True)
class InferenceDesign:
    replicas: int
    gpus: int
    nodes: int
    p99_s: float
    utilization: float


@dataclass(frozen=True)
class NetworkDesign:
    fabric: str
    nic: str
    nics_per_node: int
    link_gbps: float
    switch: str
    compute_fabric: topology.Fabric
    plan: architecture.ClusterPlan    # storage / front-end / OOB planes for all nodes
    optics_kw: float
    cluster: object = None            # labutil.cluster.Cluster of the training pool (every comm estimate)


@dataclass(frozen=True)
class StorageDesign:
    checkpoint_gb: float
    required_write_gbs: float
    read: storage.ReadRequirements
    tiers: storage.TierPlan
    checkpoint_write_s: float         # on the sized checkpoint tier, one writer per training node


@dataclass(frozen=True)
class ReliabilityDesign:
    failures_per_day: float
    mtbf_h: float
    checkpoint_s: float
    interval_s: float                 # Young's optimum
    goodput: float
    simulated_goodput: float | None   # Monte Carlo mean over the run (None if not simulated)
    simulated_interruptions: float | None


@dataclass(frozen=True)
class Design:
    req: Requirements
    compute: ComputeDesign
    inference: InferenceDesign
    network: NetworkDesign
    storage: StorageDesign
    power: power.ClusterPower
    energy_usd_per_year: float
    cooling: str
    tco: cost.TCO
    reliability: ReliabilityDesign

    @property
    def total_gpus(self) -> int:
        return self.compute.training_gpus + self.inference.gpus

    @property
    def total_nodes(self) -> int:
        return self.compute.training_nodes + self.inference.nodes

    @property
    def capex_usd(self) -> float:
        return self.tco.capex.total_usd

    @property
    def within_budget(self) -> bool:
        return self.capex_usd <= self.req.budget_usd

    @property
    def budget_headroom_usd(self) -> float:
        return self.req.budget_usd - self.capex_usd

    def summary(self) -> dict:
        """Headline numbers (plain floats/ints) for tables and the explorer."""
        c, n, r = self.compute, self.network, self.reliability
        return {"training_gpus": c.training_gpus, "inference_gpus": self.inference.gpus, "nodes": self.total_nodes,
                "switches": n.compute_fabric.total_switches + sum(p.switches for p in n.plan.planes
                                                                  if p.name != "compute"),
                "facility_mw": float(self.power.facility_kw) / 1e3, "capex_musd": self.capex_usd / 1e6,
                "tco_musd": self.tco.total_usd / 1e6, "estimated_days": c.estimated_days,
                "goodput": r.goodput, "within_budget": self.within_budget, "meets_deadline": c.meets_deadline}


def _fabric_build(fabric: str, server: hardware.Server):
    nic_name, nics, switch, ports, _src = FABRIC_BUILDS[fabric]
    nics = server.compute_nics if nics is None else nics
    link = cost.fabric_node_gbps(fabric) / nics
    return nic_name, nics, switch, ports, link


def design_cluster(req: Requirements | None = None, *, simulate: bool = True, trials: int = 200,
                   seed: int = 0) -> Design:
    """Design the whole cluster for ``req`` by chaining the course's models (see module docstring).

    Steps: (1) C = 6·N·D; GPUs for ``deadline_days × planning_goodput`` of wall clock at
    ``planning_mfu``, rounded up to whole SUs; (2) the best feasible parallel layout of the model
    on that many GPUs with the fabric's per-GPU bandwidth, whose MFU and the modelled goodput give
    the estimated days; (3) inference replicas for the SLO; (4) network planes and compute fabric;
    (5) checkpoint size, the write bandwidth to persist it in ``checkpoint_blocking_s``, data-read
    rate at the design's token throughput, storage tiers; (6) power, racks, cooling, energy cost;
    (7) TCO with the storage capacity of the tier plan; (8) failures/day from the Llama 3 calibrated
    component rates, Young's interval, goodput (and a seeded Monte Carlo when ``simulate``).
    """
    req = Requirements() if req is None else req
    if not isinstance(req, Requirements):
        raise ValueError(f"req must be a labutil.capstone.Requirements; got {type(req).__name__}")
    srv = hardware.server(req.server)
    g = srv.gpu_spec
    spec = models.transformer(req.model)
    peak = g.peak_tflops("bf16")

    # (1) compute budget
    total_flops = compute.train_flops(compute.flop_params(spec), req.tokens)
    n_deadline = compute.gpus_for_deadline(total_flops, req.deadline_days * req.planning_goodput, peak,
                                           req.planning_mfu)
    nodes = math.ceil(n_deadline / srv.gpus)
    su = math.ceil(nodes / req.nodes_per_su)
    nodes = su * req.nodes_per_su
    n_train = nodes * srv.gpus

    # (2) network build and the layout on it
    nic_name, nics, switch_name, ports, link = _fabric_build(req.fabric, srv)
    per_gpu_gbs = link * nics / srv.gpus / 8.0  # line rate per GPU (reported); the model uses the Cluster
    from .cluster import Cluster

    train_cluster = Cluster.for_gpu(g.name, nodes, nic_gbps=link, nics_per_node=nics, gpus_per_node=srv.gpus)
    # the requested global batch first; if no layout divides it (e.g. 13 x 2^k GPUs), the smallest
    # multiple of the node count above it (data parallelism across nodes needs B % dp == 0)
    batch = req.global_batch
    res = steptime.search_layouts(spec, n_train, g, batch, cluster=train_cluster)
    if not len(res):
        batch = math.ceil(req.global_batch / nodes) * nodes
        res = steptime.search_layouts(spec, n_train, g, batch, cluster=train_cluster)
    if not len(res):
        raise ValueError(f"model {req.model!r} has no feasible parallel layout on {n_train} x {g.name} with "
                         f"global_batch {req.global_batch} or {batch}: choose another global_batch, nodes_per_su "
                         "or a GPU with more memory")
    best = res.best

    # (4) network: compute fabric for the training pool; other planes for every node
    fab = topology.size_fabric(n_train, nics_per_node=nics, gpus_per_node=srv.gpus, switch_ports=ports,
                               link_gbps=link, rail_optimized=nics > 1)
    sw = hardware.switch(switch_name)

    # (3) inference pool
    if req.inference_qps > 0:
        slo = inference.llm_gpus_for_slo(req.inference_qps, req.inference_p99_s * 1e3, req.inference_model, g.name,
                                         tp=req.inference_tp)
        inf_nodes = math.ceil(slo.gpus / srv.gpus)
        inf = InferenceDesign(slo.replicas, inf_nodes * srv.gpus, inf_nodes, slo.p99_ms / 1e3, slo.utilization)
    else:
        inf = InferenceDesign(0, 0, 0, 0.0, 0.0)
    n_total = n_train + inf.gpus
    plan = architecture.plan_cluster(n_total, srv.name, compute_switch=switch_name)
    optics_kw = topology.fabric_optics_kw(fab, sw.transceiver_power_w) if sw.transceiver_power_w > 0 else 0.0
    net = NetworkDesign(req.fabric, nic_name, nics, link, switch_name, fab, plan, optics_kw, train_cluster)

    # (5) storage
    ckpt_gb = float(storage.checkpoint_gb(spec.params()))
    write_gbs = ckpt_gb / req.checkpoint_blocking_s
    tokens_per_s = n_train * peak * 1e12 * best.mfu / (6.0 * compute.flop_params(spec))
    read = storage.data_read_requirements(tokens_per_s / req.tokens_per_sample, req.sample_bytes)
    tiers = storage.plan_tiers(req.dataset_tb, ckpt_gb / 1e3, read.read_gbs, write_gbs,
                               checkpoints_kept=req.checkpoints_kept, compute_server=srv.name)
    ck_tier = tiers.tier("checkpoint")
    per_node_storage_gbs = plan.plane("storage").node_gbps / 8.0
    ckpt_s = float(storage.checkpoint_write_s(ckpt_gb, ck_tier.provided_gbs, nodes, per_node_storage_gbs))
    sto = StorageDesign(ckpt_gb, write_gbs, read, tiers, ckpt_s)

    # (6) power
    pw = power.cluster_power(n_total, srv.name, pue=req.pue, rack_kw_limit=req.rack_kw_limit, network_kw=optics_kw)
    energy = float(power.energy_cost_per_year(pw.facility_kw, req.usd_per_kwh))

    # (7) cost: storage capacity of every tier, spread per GPU as cost.capex expects
    storage_tb = sum(t.usable_tb for t in tiers.tiers)
    t = cost.tco(n_total, req.years, req.utilisation, server=srv.name, fabric=req.fabric, pue=req.pue,
                 usd_per_kwh=req.usd_per_kwh, storage_tb_per_gpu=storage_tb / n_total)

    # (8) reliability of the training job
    comps = reliability.llama3_components(n_train, srv.gpus)
    f_day = float(reliability.cluster_failures_per_day(comps))
    mtbf_s = SECONDS_PER_DAY / f_day
    tau = float(reliability.young_daly_interval_s(ckpt_s, mtbf_s))
    gp = float(reliability.goodput(f_day, req.restart_s, tau, ckpt_s))
    sim_g = sim_i = None
    if simulate:
        sim = reliability.simulate_timelines(f_day, req.deadline_days, restart_s=req.restart_s, interval_s=tau,
                                             checkpoint_s=ckpt_s, trials=trials, seed=seed)
        sim_g, sim_i = float(sim.mean_goodput), float(sim.mean_interruptions)
    rel = ReliabilityDesign(f_day, HOURS_PER_DAY / f_day, ckpt_s, tau, gp, sim_g, sim_i)

    if gp <= 0:
        raise ValueError(f"goodput is 0 at {f_day:.3g} failures/day with restart_s={req.restart_s:g}: the job "
                         "never completes an interval; shorten restart_s")
    days = float(compute.time_to_train_days(total_flops, n_train, peak, best.mfu)) / gp
    comp = ComputeDesign(float(spec.params()), float(total_flops), peak, int(n_deadline), n_train, nodes, su, best,
                         batch, len(res), per_gpu_gbs, best.mfu, days, bool(days <= req.deadline_days))
    return Design(req, comp, inf, net, sto, pw, energy, pw.cooling, t, rel)


# -- bill of materials --------------------------------------------------------------------------
BOM_COLUMNS = ("item", "model", "quantity", "unit", "source", "notes")


@dataclass(frozen=True)
class BomRow:
    item: str
    model: str
    quantity: float
    unit: str
    source: str
    notes: str = ""


def bill_of_materials(design: Design) -> list[BomRow]:
    """The hardware selection list (选型清单): servers, NICs, switches, cables, optics, storage servers,
    racks, power and cooling. Quantities come from the design; ``source`` names the catalog entry."""
    d = design
    srv = hardware.server(d.req.server)
    fab = d.network.compute_fabric
    rows = [
        BomRow("GPU server (training)", srv.name, d.compute.training_nodes, "servers", f"servers.toml [{srv.name}]",
               f"{d.compute.scalable_units} SU x {d.req.nodes_per_su} nodes; {srv.gpus}x {srv.gpu}"),
        BomRow("GPU server (inference)", srv.name, d.inference.nodes, "servers", f"servers.toml [{srv.name}]",
               f"{d.inference.replicas} replicas of {d.req.inference_model} at TP={d.req.inference_tp}"),
        BomRow("GPU", srv.gpu, d.total_gpus, "GPUs", f"gpus.toml [{srv.gpu}]", "inside the servers above"),
        BomRow("compute NIC", d.network.nic, fab.n_nics, "ports", f"nics.toml [{d.network.nic}]",
               f"{d.network.nics_per_node} per training node at {d.network.link_gbps:g} Gb/s"),
    ]
    for tier, n in (("leaf", fab.leaf_switches), ("spine", fab.spine_switches), ("core", fab.core_switches)):
        if n:
            rows.append(BomRow(f"compute {tier} switch", d.network.switch, n, "switches",
                               f"switches.toml [{d.network.switch}]",
                               f"{fab.tiers}-tier {'rail-optimized ' if fab.rail_optimized else ''}fat tree, "
                               f"{fab.switch_ports} ports"))
    rows += [
        BomRow("compute cables", f"{d.network.link_gbps:g}G links", fab.cables, "cables", "topology.size_fabric",
               f"node-leaf {fab.node_leaf_cables}, leaf-spine {fab.leaf_spine_cables}, spine-core {fab.spine_core_cables}"),
        BomRow("compute optics", "transceivers", fab.transceivers, "transceivers", "topology.size_fabric",
               f"{d.network.optics_kw:.1f} kW"),
    ]
    for p in d.network.plan.planes:
        if p.name == "compute":
            continue
        rows.append(BomRow(f"{p.name} switch", f"{p.port_gbps:g}G Ethernet" if p.name != "oob" else "1GbE",
                           p.switches, "switches", "architecture.plan_cluster",
                           f"{p.total_ports} ports, {p.tiers} tier(s), oversubscription {p.oversubscription:g}"))
    for t in d.storage.tiers.tiers:
        rows.append(BomRow(f"storage: {t.name}", t.server, t.servers, "servers", f"storage.toml [server.{t.server}]",
                           f"{t.usable_tb:,.0f} TB usable, {t.provided_gbs:,.0f} GB/s {t.bandwidth_kind}; "
                           f"limited by {t.limited_by}"))
    pw = d.power
    rows += [
        BomRow("rack", f"{d.req.rack_kw_limit:g} kW rack", pw.racks, "racks", "power.cluster_power",
               f"{pw.servers_per_rack} servers/rack ({pw.rack_limit_by}-limited), {pw.rack_kw:.1f} kW/rack"),
        BomRow("cooling", pw.cooling, pw.racks, "racks", "power.cooling_advice", "facility.toml [cooling]"),
        BomRow("facility power", f"PUE {d.req.pue:g}", round(float(pw.facility_kw), 1), "kW", "power.cluster_power",
               f"IT {float(pw.it_kw):,.0f} kW incl. optics {d.network.optics_kw:.1f} kW; storage and switch "
               "ASIC power not in the catalog"),
    ]
    return rows


def bom_rows(design: Design) -> list[dict]:
    """``bill_of_materials`` as plain dicts (for ``labutil.notebook.show_table``)."""
    return [asdict(r) for r in bill_of_materials(design)]


def _fmt_qty(q) -> str:
    return f"{int(q)}" if float(q).is_integer() else f"{q:.1f}"


def to_markdown(rows) -> str:
    """Markdown table of BOM rows (``BomRow`` objects or dicts)."""
    rows = [asdict(r) if isinstance(r, BomRow) else r for r in rows]
    lines = ["| " + " | ".join(BOM_COLUMNS) + " |", "|" + "---|" * len(BOM_COLUMNS)]
    for r in rows:
        cells = [_fmt_qty(r[c]) if c == "quantity" else str(r[c]) for c in BOM_COLUMNS]
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def write_csv(rows, path):
    """Write BOM rows to ``path`` as CSV (atomic). Returns the path."""
    rows = [asdict(r) if isinstance(r, BomRow) else r for r in rows]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(BOM_COLUMNS), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({c: r[c] for c in BOM_COLUMNS})
    return write_text_atomic(path, buf.getvalue())


def write_markdown(rows, path):
    """Write the Markdown BOM to ``path`` (atomic). Returns the path."""
    return write_text_atomic(path, to_markdown(rows))


def read_csv(path) -> list[BomRow]:
    """Read a BOM CSV written by :func:`write_csv` (raises ValueError on a malformed file)."""
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames is None or tuple(reader.fieldnames) != BOM_COLUMNS:
            raise ValueError(f"not a BOM CSV: header {reader.fieldnames!r}, expected {list(BOM_COLUMNS)}")
        out = []
        for i, r in enumerate(reader, start=2):
            try:
                q = float(r["quantity"])
            except (TypeError, ValueError):
                raise ValueError(f"BOM CSV line {i}: quantity {r['quantity']!r} is not a number") from None
            out.append(BomRow(r["item"], r["model"], q, r["unit"], r["source"], r["notes"]))
    return out


# -- budget alternatives --------------------------------------------------------------------------
def budget_alternatives(budget_usd, *, params=None, tokens_per_gpu_step=16384, mfu=0.45):
    """Balanced vs "top GPU + slow network" under one budget: ``cost.budget_comparison`` rows.

    ``params`` defaults to the default customer's model (labutil.models ``llama3-70b``)."""
    p = models.transformer(Requirements().model).params() if params is None else params
    return cost.budget_comparison(budget_usd, params=p, tokens_per_gpu_step=tokens_per_gpu_step, mfu=mfu)


# -- hidden costs -------------------------------------------------------------------------------
def downtime_view(design: Design):
    """``cost.downtime_cost`` of the design's training job (failures at its rate, its restart time and
    checkpoint interval), priced at what one GPU-hour of this cluster costs (TCO / GPU-hours owned)."""
    usd_per_gpu_hour = design.tco.usd_per_cluster_hour / float(design.tco.n_gpus)
    r = design.reliability
    return cost.downtime_cost(design.compute.training_gpus, r.failures_per_day, design.req.restart_s, r.interval_s,
                              usd_per_gpu_hour)


# -- 10,000-GPU operations view -------------------------------------------------------------------
def poisson_quantile(mean, q):
    """Smallest k with P(X <= k) >= q for X ~ Poisson(mean) (vectorised over ``mean``)."""
    m = np.asarray(validate.positive("mean", mean, allow_zero=True), dtype=float)
    qq = validate.number("q", q, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    kmax = int(np.max(m) + 12 * np.sqrt(np.max(m)) + 20)
    k = np.arange(kmax + 1)
    # log pmf via lgamma, stable for large means
    from math import lgamma
    lg = np.array([lgamma(x + 1.0) for x in k])
    with np.errstate(divide="ignore"):
        logm = np.log(np.where(m > 0, m, 1.0))
    logpmf = k[None, :] * logm.reshape(-1, 1) - m.reshape(-1, 1) - lg[None, :]
    cdf = np.cumsum(np.exp(logpmf), axis=1)
    cdf[m.reshape(-1) == 0] = 1.0
    out = np.argmax(cdf >= qq, axis=1)
    return int(out[0]) if np.ndim(mean) == 0 else out.reshape(m.shape)


@dataclass(frozen=True)
class OperationsView:
    n_gpus: int
    failures_per_day: float
    failures_by_part_per_day: dict
    gpu_failures_per_day_seed: float      # seed 000: per-GPU MTBF 100,000 h
    mtbf_h: float
    incidents_per_week: float
    p_quiet_shift: float                  # probability a 12 h on-call shift sees no interruption
    spares: dict                          # part -> spare units for the RMA lead time at the service level
    rma_days: float
    service_level: float
    checkpoint_s: float
    interval_s: float
    goodput: float
    simulated_goodput: float
    gpu_hours_lost_per_day: float


def operations_view(design: Design, n_gpus=10_000, *, rma_days=14.0, service_level=0.99, shift_h=12.0,
                    days=30.0, trials=200, seed=0) -> OperationsView:
    """Operations numbers of a ``n_gpus`` fleet built like ``design`` (same server, checkpoint, restart).

    Failures: ``reliability.llama3_components`` (per-part rates calibrated on Llama 3 Table 5),
    series-system sum. Spares per part type: the ``service_level`` quantile of the Poisson number of
    failures during the ``rma_days`` replacement lead time (a design input: vendor RMA turnaround).
    On-call: P(no interruption in a ``shift_h`` shift) = exp(-λ·shift). Checkpoint: the design's
    write time (same model and storage); interval Young's optimum; goodput analytic and Monte Carlo.
    """
    n = validate.integer("n_gpus", n_gpus, lo=1)
    L = validate.positive("rma_days", rma_days)
    sl = validate.number("service_level", service_level, lo=0.5, hi=1.0, hi_open=True)
    sh = validate.positive("shift_h", shift_h)
    gpn = hardware.server(design.req.server).gpus
    comps = reliability.llama3_components(n, gpn)
    rates = reliability.failure_rates_per_hour(comps)
    by_part = {k: float(v) * HOURS_PER_DAY for k, v in rates.items()}
    f = float(sum(by_part.values()))
    spares = {k: poisson_quantile(v * L, sl) for k, v in by_part.items() if k in ("gpu", "host", "network_link")}
    ck = design.reliability.checkpoint_s
    tau = float(reliability.young_daly_interval_s(ck, SECONDS_PER_DAY / f))
    gp = float(reliability.goodput(f, design.req.restart_s, tau, ck))
    sim = reliability.simulate_timelines(f, days, restart_s=design.req.restart_s, interval_s=tau, checkpoint_s=ck,
                                         trials=trials, seed=seed)
    return OperationsView(n_gpus=n, failures_per_day=f, failures_by_part_per_day=by_part,
                          gpu_failures_per_day_seed=float(reliability.failures_per_day(n, 100_000)),
                          mtbf_h=HOURS_PER_DAY / f, incidents_per_week=7.0 * f,
                          p_quiet_shift=float(math.exp(-f * sh / HOURS_PER_DAY)), spares=spares, rma_days=L,
                          service_level=sl, checkpoint_s=ck, interval_s=tau, goodput=gp,
                          simulated_goodput=float(sim.mean_goodput), gpu_hours_lost_per_day=n * 24.0 * (1 - gp))


def scale_sweep(design: Design, n_gpus=None):
    """Failures/day and goodput vs fleet size for a figure (vectorised): dict of arrays."""
    n = np.asarray([512, 1024, 2048, 4096, 8192, 10_000, 16_384, 32_768] if n_gpus is None else n_gpus, float)
    validate.positive("n_gpus", n)
    gpn = hardware.server(design.req.server).gpus
    f = np.asarray(reliability.cluster_failures_per_day(reliability.llama3_components(n, gpn)), float)
    ck = design.reliability.checkpoint_s
    tau = np.asarray(reliability.young_daly_interval_s(ck, SECONDS_PER_DAY / f), float)
    gp = np.asarray(reliability.goodput(f, design.req.restart_s, tau, ck), float)
    return {"n_gpus": n, "failures_per_day": f, "interval_s": tau, "goodput": gp}


# -- acceptance checklist -----------------------------------------------------------------------
def acceptance_checklist(design: Design) -> list[dict]:
    """Acceptance commands (ch22/ch23) with pass criteria computed from the design."""
    from . import health

    srv = hardware.server(design.req.server)
    bound = health.ring_busbw_bound_gbs("inter", nic_gbps=design.network.link_gbps,
                                        nics_per_node=design.network.nics_per_node, gpu=srv.gpu)
    # pairwise test of two training nodes with NCCL_ALGO=Ring: labutil.cluster's acceptance busbw
    # (NVLink ring vs NICs x 0.96), the number health.run_checks(cluster=...) grades against
    expected = design.network.cluster.with_nodes(2).acceptance_busbw_gbs("all_reduce")
    ck = design.storage.tiers.tier("checkpoint")
    return [
        {"step": 1, "command": "nvidia-smi -q", "chapter": "ch23",
         "criterion": f"{srv.gpus} x {srv.gpu} per node, no pending row remap, no volatile uncorrected ECC"},
        {"step": 2, "command": "ibstat", "chapter": "ch22/23",
         "criterion": f"{design.network.nics_per_node} ports Active/LinkUp at {design.network.link_gbps:g} Gb/s"},
        {"step": 3, "command": "dcgmi diag -r 3", "chapter": "ch23", "criterion": "every test Pass"},
        {"step": 4, "command": "NCCL_ALGO=Ring all_reduce_perf -b 8 -e 8G -f 2 -g 1", "chapter": "ch22",
         "criterion": f"busbw >= {0.8 * expected:.0f} GB/s at 8 GB (80 % of the expected {expected:.0f}; "
                      f"line-rate ring bound {bound:.0f})"},
        {"step": 5, "command": "fio --rw=write --bs=1M --direct=1 --numjobs=16 ...", "chapter": "ch17/23",
         "criterion": f"aggregate write >= {design.storage.required_write_gbs:.1f} GB/s "
                      f"(tier provides {ck.provided_gbs:.0f})"},
        {"step": 6, "command": "lfs df -h", "chapter": "ch16/23",
         "criterion": f"checkpoint tier >= {ck.capacity_needed_tb:.1f} TB, no OST above 80 % full"},
    ]


def requirement_fields() -> list[str]:
    """Names of the requirement fields (for tables and error messages)."""
    return [f.name for f in fields(Requirements)]


__all__ = ["Requirements", "requirements", "Design", "design_cluster", "bill_of_materials", "bom_rows",
           "to_markdown", "write_csv", "write_markdown", "read_csv", "budget_alternatives", "downtime_view",
           "operations_view", "scale_sweep", "acceptance_checklist", "poisson_quantile", "FABRIC_BUILDS",
           "SERVERS", "BOM_COLUMNS"]

