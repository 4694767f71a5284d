"""Health and acceptance rules over parsed tool output (ch23; used by ch15/ch22 and the doctor).

Each rule turns parsed data (``labutil.parsers``) into :class:`Finding` objects with a severity
('critical' = the node/link fails acceptance, 'warning' = investigate, 'info' = context), the
component, the check name, a reason, the observed value and the expected value. :func:`run_checks`
runs every rule for which data was given (raw text or parsed objects), never raises on bad tool
output (a parse failure becomes a critical finding) and returns a :class:`Report` that renders as
a table with an overall PASS / WARN / FAIL.

Thresholds are COURSE POLICY (stated here, in :class:`AcceptanceSpec`), informed by:
- busbw definition: NVIDIA/nccl-tests ``doc/PERFORMANCE.md`` (busbw = algbw x 2(n-1)/n for
  all_reduce, "should be compared with the hardware peak bandwidth"), factors in ``labutil.comm``;
- ring bound of busbw: one ring per rail, so inter-node all_reduce busbw <= sum of the node's NIC
  rails (8 x 400G = 400 GB/s for DGX H100) and intra-node <= per-direction NVLink (H100: 450 GB/s);
- IB port state/physical state: IBTA spec Vol 1 (PortInfo: PortState Active, PortPhysicalState
  LinkUp); counters: perfquery / IBTA PortCounters;
- GPU memory errors: NVIDIA "GPU Memory Error Management" (row remapping, pending remap needs a
  GPU reset; remapping failure -> RMA) and "XID Errors" (XID 48 DBE, 63/64 row remap, 74 NVLink,
  79 fallen off the bus, 94/95 contained/uncontained ECC, 119/120 GSP);
- clock event reasons: NVML ``nvmlClocksEventReasons`` (HW slowdown, HW thermal / power brake,
  SW thermal slowdown).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import parsers as P
from . import validate
from .cluster import Cluster
from .hardware import gpu as gpu_spec
from .tables import MarkdownTable

__all__ = ["Finding", "Report", "AcceptanceSpec", "SEVERITIES", "ring_busbw_bound_gbs", "expected_busbw_gbs",
           "check_ibstat", "check_ibv_devinfo", "check_perfquery", "check_nvidia_smi_q", "check_xid",
           "check_dcgmi_diag", "check_nccl_tests", "check_nccl_log", "run_checks", "XID_SEVERITY",
           "rail_allreduce_busbw_gbs", "busbw_severity", "check_nvidia_smi", "cluster_expected_busbw_gbs",
           "NCCL_FATAL_WARN", "acceptance_lines"]

SEVERITIES = ("critical", "warning", "info")


@dataclass(frozen=True)
class Finding:
    severity: str
    component: str
    check: str
    message: str
    value: object = None
    expected: object = None

    def __post_init__(self):
        validate.choice("severity", self.severity, SEVERITIES)


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    checks_run: list[str] = field(default_factory=list)

    def count(self, severity: str) -> int:
        validate.choice("severity", severity, SEVERITIES)
        return sum(f.severity == severity for f in self.findings)

    @property
    def passed(self) -> bool:
        """Acceptance passes when there is no critical finding."""
        return self.count("critical") == 0

    @property
    def status(self) -> str:
        if not self.passed:
            return "FAIL"
        return "WARN" if self.count("warning") else "PASS"

    def by_severity(self, severity: str) -> list[Finding]:
        return [f for f in self.findings if f.severity == severity]

    def rows(self) -> list[dict]:
        order = {s: i for i, s in enumerate(SEVERITIES)}
        out = []
        for f in sorted(self.findings, key=lambda f: order[f.severity]):
            out.append({"severity": f.severity, "component": f.component, "check": f.check,
                        "value": _fmt(f.value), "expected": _fmt(f.expected), "reason": f.message})
        return out

    def table(self) -> MarkdownTable:
        """Markdown table of the findings (critical first), headed by the overall status."""
        head = (f"**{self.status}** — {self.count('critical')} critical, {self.count('warning')} warning, "
                f"{self.count('info')} info; checks: {', '.join(self.checks_run) or 'none'}\n\n")
        rows = self.rows()
        if not rows:
            return MarkdownTable(head + "no findings")
        cols = ["severity", "component", "check", "value", "expected", "reason"]
        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        for r in rows:
            lines.append("| " + " | ".join(str(r[c]).replace("|", "/") for c in cols) + " |")
        return MarkdownTable(head + "\n".join(lines))

    def text(self) -> str:
        lines = [f"{self.status}: {self.count('critical')} critical, {self.count('warning')} warning, "
                 f"{self.count('info')} info"]
        for r in self.rows():
            lines.append(f"[{r['severity']:8s}] {r['component']}: {r['check']}: {r['reason']}")
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:  # pragma: no cover - notebook display
        return str(self.table())


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


@dataclass(frozen=True)
class AcceptanceSpec:
    """Course-policy acceptance thresholds (change them to your site's policy).

    ib_rate_gbps: expected port rate (400 for NDR 4X; the cluster's NIC rate with
    :meth:`for_cluster`, so an HDR 200G or a 25/100/200 GbE RoCE port passes on such a cluster);
    ib_width: '4X' (None: not checked; a port below ib_rate_gbps still fails); ib_mtu: 4096 bytes
    (InfiniBand link layer only). storage_read_gbs: read bandwidth the data pool must deliver
    (None: fio results are reported, not judged).
    busbw_pass_fraction: busbw >= this x expected passes (0.8, the usual 80-90 % acceptance band);
    busbw_fail_fraction: below this x expected is critical (0.6); between -> warning.
    temp_margin_c: warn when GPU temperature is within this of its slowdown temperature.
    counter_warn / counter_crit: increase of a link error counter between two samples.
    """

    ib_rate_gbps: float = 400.0
    ib_width: str = "4X"
    ib_mtu: int = 4096
    ib_link_layer: str | None = None
    busbw_pass_fraction: float = 0.8
    busbw_fail_fraction: float = 0.6
    temp_margin_c: float = 5.0
    counter_warn: int = 1
    counter_crit: int = 100
    expect_network: str | None = "IB"
    expect_gdr: bool = True
    storage_read_gbs: float | None = None
    gpus_per_node: int | None = None

    def __post_init__(self):
        validate.positive("ib_rate_gbps", self.ib_rate_gbps)
        if self.storage_read_gbs is not None:
            validate.positive("storage_read_gbs", self.storage_read_gbs)
        if self.gpus_per_node is not None:
            validate.integer("gpus_per_node", self.gpus_per_node, lo=1)
        validate.fraction("busbw_pass_fraction", self.busbw_pass_fraction)
        validate.fraction("busbw_fail_fraction", self.busbw_fail_fraction)
        if self.busbw_fail_fraction > self.busbw_pass_fraction:
            raise ValueError(f"busbw_fail_fraction must be <= busbw_pass_fraction ({self.busbw_pass_fraction}); "
                             f"got {self.busbw_fail_fraction}")
        validate.positive("temp_margin_c", self.temp_margin_c, allow_zero=True)
        validate.integer("counter_warn", self.counter_warn, lo=1)
        validate.integer("counter_crit", self.counter_crit, lo=self.counter_warn)

    @classmethod
    def for_cluster(cls, cluster, **overrides) -> "AcceptanceSpec":
        """Thresholds of ``cluster`` (a :class:`labutil.cluster.Cluster`): port rate = its NIC rate
        (``cluster.nic_gbps``), no fixed lane width (a 4X HDR, a 2X or a 1X Ethernet port is
        judged by its rate), GPUs per node, and its link layer when the cluster names one."""
        rate = getattr(cluster, "nic_gbps", None)
        if rate is None:
            raise TypeError(f"cluster must be a labutil.cluster.Cluster (with nic_gbps); got {type(cluster).__name__}")
        kw = {"ib_rate_gbps": float(rate), "ib_width": None,
              "gpus_per_node": getattr(cluster, "gpus_per_node", None)}
        layer = getattr(cluster, "link_layer", None)
        if isinstance(layer, str):
            kw["ib_link_layer"] = layer
        kw.update(overrides)
        return cls(**kw)


def cluster_expected_busbw_gbs(cluster, result) -> float:
    """Busbw an nccl-tests run should reach on ``cluster``: ``cluster.acceptance_busbw_gbs(op, ranks)``
    with the run's collective (all_reduce when the output does not name it) and rank count: NCCL's
    default inside one NVLink domain, the ring (``NCCL_ALGO=Ring``) across domains."""
    op = result.op or "all_reduce"
    expect = getattr(cluster, "acceptance_busbw_gbs", None) or cluster.expected_busbw_gbs  # duck-typed clusters
    return float(expect(op, result.n_ranks))


# ------------------------------------------------------------------------------ expected busbw
# One owner: labutil.cluster.Cluster. The names below are kept for chapters and exercises and are
# one-line calls into it.
def ring_busbw_bound_gbs(scope: str, *, nic_gbps: float = 400.0, nics_per_node: int = 8,
                         gpu: str = "H100-SXM") -> float:
    """Line-rate ring bound of all_reduce busbw in GB/s: ``Cluster.line_bound_gbs`` (nccl-tests
    PERFORMANCE.md: busbw is limited by the slowest link of the ring).

    - ``scope='intra'``: per-direction NVLink of ``gpu`` (catalog bidirectional / 2).
    - ``scope='inter'``: two nodes of ``gpu`` with ``nics_per_node`` NICs of ``nic_gbps``: one ring per
      rail, min(NVLink line, nics x rate / 8). E.g. DGX H100 (8 x 400G): inter 400 GB/s, intra 450 GB/s.
    """
    validate.choice("scope", scope, ("intra", "inter"))
    return float(_link_cluster(gpu, nic_gbps, nics_per_node, 1 if scope == "intra" else 2).line_bound_gbs())


def _link_cluster(gpu: str, nic_gbps, nics_per_node: int, n_nodes: int, **kw):
    """The catalog system of ``gpu`` with these NICs (a GPU without NVLink: an 8-GPU node whose
    scale-up link is never the bottleneck, so only the network counts)."""
    g = gpu_spec(gpu)
    nics = validate.integer("nics_per_node", nics_per_node, lo=1)
    rate = validate.positive("nic_gbps", nic_gbps)
    if g.nvlink_gbs <= 0:
        if n_nodes == 1:
            raise ValueError(f"gpu {gpu!r} has no NVLink in the catalog; give the intra-node bound explicitly")
        return Cluster.from_links(nic_gbps=rate, nics_per_node=nics, gpus_per_node=8, n_nodes=n_nodes,
                                  scaleup_gbs=max(1.0, float(nics * rate)), gpu=g.name, **kw)
    return Cluster.for_gpu(g.name, n_nodes, nic_gbps=float(rate), nics_per_node=nics, **kw)


def acceptance_lines(cluster, result=None, *, op: str = "all_reduce", ranks=None,
                     spec: "AcceptanceSpec | None" = None) -> dict:
    """The lines every acceptance figure draws (ch22 and ch23 use this one function).

    expected_gbs: ``cluster.acceptance_busbw_gbs`` for the run's collective and rank count (from a
    parsed nccl-tests ``result``, else ``op`` / ``ranks``); pass_gbs / fail_gbs: ``spec``'s fractions
    of it (80 % / 60 %); bound_gbs: the line-rate ring bound ``cluster.line_bound_gbs`` (a reference,
    not a threshold). 2x DGX H100: expected 370, pass 296, fail 222, bound 400.
    """
    spec = AcceptanceSpec() if spec is None else spec
    if result is not None:
        op = result.op or "all_reduce"
        ranks = result.n_ranks
    exp = float(cluster.acceptance_busbw_gbs(op, ranks))
    bound = float(cluster.line_bound_gbs(ranks))
    return {"expected_gbs": exp, "pass_gbs": exp * spec.busbw_pass_fraction, "fail_gbs": exp * spec.busbw_fail_fraction,
            "bound_gbs": bound, "pass_fraction": spec.busbw_pass_fraction, "fail_fraction": spec.busbw_fail_fraction}


def expected_busbw_gbs(bound_gbs: float, efficiency: float = 0.9) -> float:
    """LEGACY: bound x efficiency (an efficiency read from vendor guides, 80-95 % of the line-rate
    bound). The course's expectation is ``Cluster.expected_busbw_gbs`` / ``acceptance_busbw_gbs``
    (achievable NVLink ring and NIC rates, NCCL's algorithms); kept for old notebooks and
    ``troubleshoot.Workload(nccl_efficiency=...)``."""
    return validate.positive("bound_gbs", bound_gbs) * validate.fraction("efficiency", efficiency)


# ------------------------------------------------------------------------------------ IB rules
def check_ibstat(cas, spec: AcceptanceSpec = AcceptanceSpec()) -> list[Finding]:
    """Port State Active, Physical state LinkUp, Rate == spec.ib_rate_gbps, link layer if asked."""
    out = []
    for ca in cas:
        for p in ca.ports:
            comp = f"{ca.name} port {p.port}"
            if (p.state or "").lower() != "active":
                out.append(Finding("critical", comp, "ib_state", f"port state is {p.state!r}, not Active "
                                   "(Down: no cable/peer; Initializing: no subnet manager)", p.state, "Active"))
            if (p.physical_state or "").lower() != "linkup":
                out.append(Finding("critical", comp, "ib_physical_state",
                                   f"physical state is {p.physical_state!r} (Polling = no link partner)",
                                   p.physical_state, "LinkUp"))
            if (p.state or "").lower() == "active" and p.rate_gbps is not None and p.rate_gbps < spec.ib_rate_gbps:
                out.append(Finding("critical", comp, "ib_rate", f"link trained at {p.rate_gbps:g} Gb/s instead of "
                                   f"{spec.ib_rate_gbps:g}: bad cable/transceiver or a lane down",
                                   p.rate_gbps, spec.ib_rate_gbps))
            if spec.ib_link_layer and p.link_layer and p.link_layer.lower() != spec.ib_link_layer.lower():
                out.append(Finding("warning", comp, "link_layer", f"link layer {p.link_layer}",
                                   p.link_layer, spec.ib_link_layer))
    return out


def check_ibv_devinfo(devs, spec: AcceptanceSpec = AcceptanceSpec()) -> list[Finding]:
    """PORT_ACTIVE / LINK_UP, active_width == spec.ib_width, width x speed == rate, MTU."""
    out = []
    for d in devs:
        for p in d.ports:
            comp = f"{d.hca_id} port {p.port}"
            if p.state != "PORT_ACTIVE":
                out.append(Finding("critical", comp, "ib_state", f"port state {p.state}", p.state, "PORT_ACTIVE"))
            if p.phys_state is not None and p.phys_state != "LINK_UP":
                out.append(Finding("critical", comp, "ib_physical_state", f"phys_state {p.phys_state}",
                                   p.phys_state, "LINK_UP"))
            if spec.ib_width is not None and p.active_width is not None and p.active_width != spec.ib_width:
                out.append(Finding("critical", comp, "ib_width", f"link width {p.active_width}: lanes failed to "
                                   "train (cable or port damage)", p.active_width, spec.ib_width))
            if p.rate_gbps is not None and p.rate_gbps < spec.ib_rate_gbps:
                out.append(Finding("critical", comp, "ib_rate", f"{p.active_width} x {p.active_speed_gbps:g} Gb/s = "
                                   f"{p.rate_gbps:g} Gb/s", p.rate_gbps, spec.ib_rate_gbps))
            if p.active_mtu is not None and (p.link_layer or "").lower() == "infiniband" and p.active_mtu < spec.ib_mtu:
                out.append(Finding("warning", comp, "ib_mtu", f"active MTU {p.active_mtu} B", p.active_mtu,
                                   spec.ib_mtu))
    return out


_COUNTER_SEVERITY = {  # course policy: which counter increases fail acceptance outright
    "LinkDownedCounter": "critical", "LinkErrorRecoveryCounter": "critical", "LocalLinkIntegrityErrors": "critical",
    "ExcessiveBufferOverrunErrors": "critical",
}


def check_perfquery(before, after, spec: AcceptanceSpec = AcceptanceSpec(), component: str = "port") -> list[Finding]:
    """Error counters rising between two ``perfquery`` samples (absolute values mean little: they
    count since the last reset). Link down / error recovery: critical on any increase; other
    errors: warning from ``counter_warn``, critical from ``counter_crit``."""
    out = []
    if before.lid is not None and after.lid is not None and (before.lid, before.port) != (after.lid, after.port):
        raise ValueError(f"before and after are different ports: lid {before.lid} port {before.port} vs "
                         f"lid {after.lid} port {after.port}")
    if before.lid is not None:
        component = f"lid {before.lid} port {before.port}"
    b, a = before.errors(), after.errors()
    for k in P.ERROR_COUNTERS:
        if k not in a or k not in b:
            continue
        delta = a[k] - b[k]
        if delta < 0:
            out.append(Finding("info", component, k, "counter went down: it was reset between samples", delta, ">= 0"))
            continue
        if delta < spec.counter_warn:
            continue
        sev = _COUNTER_SEVERITY.get(k) or ("critical" if delta >= spec.counter_crit else "warning")
        out.append(Finding(sev, component, k, f"{k} rose by {delta} between the samples", delta, 0))
    return out


# ----------------------------------------------------------------------------------- GPU rules
_IGNORED_REASONS = {"idle", "applications clocks setting", "sync boost", "display clock setting",
                    "sw power cap"}


def check_nvidia_smi_q(q, spec: AcceptanceSpec = AcceptanceSpec()) -> list[Finding]:
    """ECC, retired pages / remapped rows, throttling and temperature of every GPU."""
    out = []
    for g in q.gpus:
        comp = f"GPU{g.index} {g.bus_id}"
        if g.ecc_mode is not None and g.ecc_mode.lower() != "enabled":
            out.append(Finding("warning", comp, "ecc_mode", "ECC is not enabled", g.ecc_mode, "Enabled"))
        if g.ecc_volatile_uncorrectable:
            out.append(Finding("critical", comp, "ecc_uncorrectable", "uncorrectable ECC errors since the last "
                               "driver load: jobs on this GPU may have crashed", g.ecc_volatile_uncorrectable, 0))
        elif g.ecc_aggregate_uncorrectable:
            out.append(Finding("warning", comp, "ecc_uncorrectable_aggregate", "uncorrectable ECC errors in the "
                               "GPU's lifetime", g.ecc_aggregate_uncorrectable, 0))
        if g.remapped_rows_pending:
            out.append(Finding("critical", comp, "row_remap_pending", "a row remap is pending: drain and reset "
                               "the GPU to activate it", True, False))
        if g.remapping_failure:
            out.append(Finding("critical", comp, "row_remap_failure", "row remapping failed: RMA candidate",
                               True, False))
        if g.retired_pages_pending:
            out.append(Finding("critical", comp, "page_retirement_pending", "page retirement pending: reset the "
                               "GPU", True, False))
        if g.retired_pages_dbe:
            out.append(Finding("warning", comp, "retired_pages_dbe", "pages retired for double-bit errors",
                               g.retired_pages_dbe, 0))
        bad = [r for r in g.throttle_active if r.lower() not in _IGNORED_REASONS]
        if bad:
            sev = "critical" if any("thermal" in r.lower() or "power brake" in r.lower() for r in bad) else "warning"
            out.append(Finding(sev, comp, "clock_throttle", f"clocks slowed by: {', '.join(bad)}", ", ".join(bad),
                               "none"))
        if g.temperature_c is not None and g.slowdown_temp_c is not None:
            if g.temperature_c >= g.slowdown_temp_c:
                out.append(Finding("critical", comp, "temperature", "at or above the slowdown temperature",
                                   g.temperature_c, f"< {g.slowdown_temp_c:g}"))
            elif g.temperature_c >= g.slowdown_temp_c - spec.temp_margin_c:
                out.append(Finding("warning", comp, "temperature", "close to the slowdown temperature",
                                   g.temperature_c, f"< {g.slowdown_temp_c - spec.temp_margin_c:g}"))
    return out


def check_nvidia_smi(table, spec: AcceptanceSpec = AcceptanceSpec()) -> list[Finding]:
    """The default ``nvidia-smi`` table: a driver error instead of a table, ERR! cells (the driver
    cannot read the GPU: XID 79 / fallen off the bus, NVIDIA "XID Errors"), volatile uncorrectable
    ECC errors, fewer GPUs than the node should have (``spec.gpus_per_node``)."""
    out = []
    for e in table.errors:
        out.append(Finding("critical", "nvidia-smi", "driver", e, e, "a table of GPUs"))
    for g in table.gpus:
        comp = f"GPU{g.index} {g.bus_id}"
        if g.errors:
            out.append(Finding("critical", comp, "gpu_err", f"nvidia-smi prints ERR! for {', '.join(g.errors)}: the "
                               "driver cannot read this GPU (look for XID 79/48/119 in dmesg)", "ERR!", "values"))
        if g.ecc_uncorrectable:
            out.append(Finding("critical", comp, "ecc_uncorrectable", "volatile uncorrectable ECC errors since the "
                               "driver loaded", g.ecc_uncorrectable, 0))
    if spec.gpus_per_node is not None and table.gpus and len(table.gpus) < spec.gpus_per_node:
        out.append(Finding("critical", "nvidia-smi", "gpu_count", f"{len(table.gpus)} GPUs visible, the node has "
                           f"{spec.gpus_per_node}: a GPU fell off the bus or is not bound to the driver",
                           len(table.gpus), spec.gpus_per_node))
    return out


# NVIDIA "XID Errors" documentation: XIDs that indicate hardware / driver trouble on the node.
XID_SEVERITY = {48: "critical", 63: "warning", 64: "critical", 74: "critical", 79: "critical", 92: "warning",
                94: "warning", 95: "critical", 119: "critical", 120: "critical", 31: "info", 13: "info", 43: "info"}


def check_xid(events) -> list[Finding]:
    """One finding per XID code and GPU: hardware XIDs critical/warning, application faults info."""
    seen = {}
    for e in events:
        seen.setdefault((e.bus_id, e.xid), e)
    out = []
    for (bus, xid), e in seen.items():
        sev = XID_SEVERITY.get(xid, "warning")
        out.append(Finding(sev, f"GPU {bus}", f"xid_{xid}", e.detail or f"XID {xid}", xid, "no XID"))
    return out


def check_dcgmi_diag(diag) -> list[Finding]:
    """Fail -> critical (with DCGM's message), Warn -> warning, Skip -> info."""
    out = []
    for t in diag.tests:
        msg = "; ".join(t.warnings) or t.status
        if t.status == "Fail":
            gpus = f" on GPU {', '.join(map(str, t.failed_gpus))}" if t.failed_gpus else ""
            out.append(Finding("critical", f"dcgmi {t.category}", t.name, f"failed{gpus}: {msg}", "Fail", "Pass"))
        elif t.status == "Warn":
            out.append(Finding("warning", f"dcgmi {t.category}", t.name, msg, "Warn", "Pass"))
        elif t.status == "Skip":
            out.append(Finding("info", f"dcgmi {t.category}", t.name, "skipped", "Skip", "Pass"))
    return out


# --------------------------------------------------------------------------------- NCCL rules
def check_nccl_tests(result, expected_busbw_gbs: float, spec: AcceptanceSpec = AcceptanceSpec()) -> list[Finding]:
    """Peak busbw (largest over all sizes) against ``expected_busbw_gbs``; #wrong must be 0."""
    exp = validate.positive("expected_busbw_gbs", expected_busbw_gbs)
    peak = result.peak_busbw_gbs
    comp = f"nccl-tests {result.op or result.binary or '?'}"
    out = []
    if getattr(result, "single_rank", False):
        out.append(Finding("info", comp, "busbw", "single-rank run: busbw = algbw x 2(n-1)/n is 0 by definition; "
                           f"peak algbw {result.peak_algbw_gbs:.1f} GB/s (run across GPUs/nodes to test the links)",
                           0.0, None))
        frac = None
    else:
        frac = peak / exp
    if frac is None:
        pass
    elif frac < spec.busbw_fail_fraction:
        out.append(Finding("critical", comp, "busbw", f"peak busbw is {frac:.0%} of expected (< "
                           f"{spec.busbw_fail_fraction:.0%}): a slow rail, a Socket fallback or a degraded link",
                           round(peak, 2), round(exp, 2)))
    elif frac < spec.busbw_pass_fraction:
        out.append(Finding("warning", comp, "busbw", f"peak busbw is {frac:.0%} of expected (< "
                           f"{spec.busbw_pass_fraction:.0%})", round(peak, 2), round(exp, 2)))
    elif frac is not None:
        out.append(Finding("info", comp, "busbw", f"peak busbw is {frac:.0%} of expected", round(peak, 2),
                           round(exp, 2)))
    wrong = result.total_wrong()
    if wrong:
        out.append(Finding("critical", comp, "wrong", "data corruption: #wrong > 0", wrong, 0))
    if result.out_of_bounds:
        out.append(Finding("critical", comp, "out_of_bounds", "out-of-bounds values reported",
                           result.out_of_bounds, 0))
    return out


def check_nccl_log(log, spec: AcceptanceSpec = AcceptanceSpec()) -> list[Finding]:
    """Network in use (IB vs Socket fallback), GPUDirect RDMA on NET connections, NCCL WARN lines."""
    out = []
    net_conns = [c for c in log.connections if c.transport == "NET"]
    if spec.expect_network and log.network and log.network.lower() != spec.expect_network.lower():
        out.append(Finding("critical", "NCCL", "network", f"NCCL uses network {log.network!r}: inter-node traffic "
                           "goes over TCP sockets", log.network, spec.expect_network))
    if spec.expect_gdr and net_conns and not any(c.gdr for c in net_conns):
        out.append(Finding("warning", "NCCL", "gdrdma", "no NET connection uses GPUDirect RDMA (GDRDMA): data "
                           "is staged through host memory", "off", "GDRDMA"))
    for w in log.warnings:
        sev = "critical" if NCCL_FATAL_WARN.search(w) else "warning"
        out.append(Finding(sev, "NCCL", "nccl_warn", w, None, None))
    return out


# NCCL WARN texts that mean the transport failed (not a tuning hint): IB work completions with an
# error status (ibv_wc_status: 12 = IBV_WC_RETRY_EXC_ERR, transport retry counter exceeded, i.e.
# the peer NIC could not be reached; NVIDIA/nccl #426, #902), socket connects refused / timed out
# during bootstrap (NVIDIA/nccl-tests #166, pytorch/pytorch #68893), failed QP transitions
# (NVIDIA/nccl #769) and unusable devices.
import re as _re

NCCL_FATAL_WARN = _re.compile(
    r"Got completion (?:from peer \S+ )?with (?:error|status=?)\s*\d+|Connect to \S+ failed|Connection refused|"
    r"Connection timed out|Connection reset|Connection closed by|Call to ibv_\w+ failed|Unable to open device|"
    r"Socket recv failed|unhandled system error|remote process exited|NET/IB : [^:]*failed|Proxy Service .*Failed|"
    r"Bootstrap.*(?:failed|timeout|timed out)|socketStartConnect|No device found", _re.I)


# ---------------------------------------------------------------------------------- run_checks
def _parsed(name, value, parser, report):
    if value is None:
        return None
    if isinstance(value, (str, bytes)):
        try:
            return parser(value)
        except P.ParseError as exc:
            report.findings.append(Finding("critical", name, "parse", f"cannot read the tool output: {exc}"))
            return None
    return value


def run_checks(*, ibstat=None, ibv_devinfo=None, perfquery=None, nvidia_smi_q=None, xid=None, dcgmi=None,
               nccl_tests=None, expected_busbw_gbs: float | None = None, nccl_log=None,
               spec: AcceptanceSpec | None = None, cluster=None, nvidia_smi=None) -> Report:
    """Run every rule for which data is given (raw text or parsed object) and collect a Report.

    ``perfquery`` is a pair (before, after); ``nccl_tests`` needs ``expected_busbw_gbs`` or a
    ``cluster`` (then ``cluster.expected_busbw_gbs(op, ranks)``). With a ``cluster`` and no
    ``spec`` the thresholds are :meth:`AcceptanceSpec.for_cluster`.
    """
    if spec is None:
        spec = AcceptanceSpec.for_cluster(cluster) if cluster is not None else AcceptanceSpec()
    rep = Report()
    cas = _parsed("ibstat", ibstat, P.parse_ibstat, rep)
    if cas is not None:
        rep.checks_run.append("ibstat")
        rep.findings += check_ibstat(cas, spec)
    devs = _parsed("ibv_devinfo", ibv_devinfo, P.parse_ibv_devinfo, rep)
    if devs is not None:
        rep.checks_run.append("ibv_devinfo")
        rep.findings += check_ibv_devinfo(devs, spec)
    if perfquery is not None:
        if not isinstance(perfquery, (tuple, list)) or len(perfquery) != 2:
            raise ValueError("perfquery must be a pair (before, after) of perfquery outputs")
        b = _parsed("perfquery", perfquery[0], P.parse_perfquery, rep)
        a = _parsed("perfquery", perfquery[1], P.parse_perfquery, rep)
        if a is not None and b is not None:
            rep.checks_run.append("perfquery")
            rep.findings += check_perfquery(b, a, spec)
    t = _parsed("nvidia-smi", nvidia_smi, P.parse_nvidia_smi, rep)
    if t is not None:
        rep.checks_run.append("nvidia-smi")
        rep.findings += check_nvidia_smi(t, spec)
    q = _parsed("nvidia-smi -q", nvidia_smi_q, P.parse_nvidia_smi_q, rep)
    if q is not None:
        rep.checks_run.append("nvidia-smi -q")
        rep.findings += check_nvidia_smi_q(q, spec)
    if xid is not None:
        ev = _parsed("kernel log", xid, P.parse_xid_errors, rep)
        if ev is not None:
            rep.checks_run.append("xid")
            rep.findings += check_xid(ev)
    d = _parsed("dcgmi diag", dcgmi, P.parse_dcgmi_diag, rep)
    if d is not None:
        rep.checks_run.append("dcgmi diag")
        rep.findings += check_dcgmi_diag(d)
    r = _parsed("nccl-tests", nccl_tests, P.parse_nccl_tests, rep)
    if r is not None:
        if expected_busbw_gbs is None and cluster is not None:
            expected_busbw_gbs = cluster_expected_busbw_gbs(cluster, r)
        if expected_busbw_gbs is None:
            raise ValueError("expected_busbw_gbs (or cluster=) is required with nccl_tests (see ring_busbw_bound_gbs)")
        rep.checks_run.append("nccl-tests")
        rep.findings += check_nccl_tests(r, expected_busbw_gbs, spec)
    lg = _parsed("NCCL log", nccl_log, P.parse_nccl_debug_log, rep)
    if lg is not None:
        rep.checks_run.append("NCCL log")
        rep.findings += check_nccl_log(lg, spec)
    return rep


# ------------------------------------------------------------------ rail model (ch23 explorer)
def rail_allreduce_busbw_gbs(rail_gbps, n_rails=8, slow_rails=0, slow_rail_gbps=None, efficiency=None, *,
                             gpu: str = "H100-SXM"):
    """Expected inter-node all_reduce busbw (GB/s) of two ``gpu`` nodes with ``n_rails`` rails of
    ``rail_gbps``, ``slow_rails`` of them trained down to ``slow_rail_gbps``: the acceptance
    expectation ``Cluster.acceptance_busbw_gbs`` (NCCL_ALGO=Ring across nodes).

    NCCL splits the data evenly over its rings, one per rail, and the collective ends when the
    slowest ring ends, so the network term is n_rails x min(rail rate) / 8 x efficiency, and the
    NVLink ring caps it: 8 x 400G on DGX H100 -> min(370, 384) = 370 GB/s; one rail at 200G ->
    min(370, 8 x 25 x 0.96) = 192 GB/s. ``efficiency`` defaults to the cluster model's achievable
    fraction of a NIC's line rate (``labutil.cluster.NIC_EFFICIENCY``, 0.96). Vectorised over rail_gbps.
    """
    kw = {} if efficiency is None else {"nic_efficiency": validate.fraction("efficiency", efficiency)}
    c = _link_cluster(gpu, float(np.max(validate.positive("rail_gbps", rail_gbps))), n_rails, 2, **kw)
    return c.acceptance_busbw_gbs("all_reduce", nic_gbps=rail_gbps, slow_rails=slow_rails, slow_rail_gbps=slow_rail_gbps)


def busbw_severity(busbw_gbs, expected_gbs, spec: AcceptanceSpec = AcceptanceSpec()):
    """'info' (pass), 'warning' or 'critical' for a measured busbw against the expected one."""
    frac = validate.positive("busbw_gbs", busbw_gbs, allow_zero=True) / validate.positive("expected_gbs", expected_gbs)
    if frac < spec.busbw_fail_fraction:
        return "critical"
    return "warning" if frac < spec.busbw_pass_fraction else "info"
