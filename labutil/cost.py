"""Cost of a GPU cluster: capex, opex, TCO, cost per GPU-hour, cloud vs owned, downtime.

Taught in ch05 (成本与TCO); used by ch27 (cost of failures) and ch30 (the end-to-end plan).

All money is in US dollars (``_usd``). Every price has a documented default taken from
``labutil/data/prices.toml``, where each entry says whether it is a published list price (with
date and source) or an ILLUSTRATIVE assumption with the range it was picked from. Pass your own
prices as arguments: the model is the point, not the default numbers.

Formulas (standard TCO accounting, e.g. the structure of the Uptime Institute / Barroso et al.
"The Datacenter as a Computer", 3rd ed. 2018, ch. 6 "Modeling Costs"):

- capex = servers + back-end network + storage + facility build-out (USD per kW of IT load)
- opex/yr = energy (IT kW × load × PUE × 8,760 h × USD/kWh) + staff + maintenance (% of hardware)
- TCO(Y) = capex + Y · opex/yr;  cost per GPU-hour = TCO / (N · 8,760 · Y · utilisation)

Two refinements a finance review asks for, both off by default (ch05 §1.1 shows their size):

- ``facility_years``: a building and its power/cooling plant outlive one GPU generation (component
  lives of 20-40 years in data-centre REIT filings, e.g. DuPont Fabros Technology 10-K 2013, "Real
  Estate Assets"); with it the TCO carries only the straight-line share Y / facility_years of the
  build-out (a yearly charge, like a colocation fee), instead of writing the whole facility off
  over the cluster's horizon (the default: a facility built for this cluster alone).
- ``interest_rate``: the cost of the money tied up in the up-front spend, as an annuity:
  capital recovery factor CRF(r, Y) = r (1+r)^Y / ((1+r)^Y − 1); financing over Y years =
  up-front × (CRF · Y − 1) (standard engineering-economics annuity; r = 0 gives 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import data_files, hardware, validate
from .units import HOURS_PER_YEAR, SECONDS_PER_HOUR

__all__ = ["HOURS_PER_MONTH", "price_data", "server_price_usd", "fabrics", "network_usd_per_gpu", "fabric_node_gbps",
           "cloud_usd_per_gpu_hour", "DEFAULT_USD_PER_KWH", "DEFAULT_FACILITY_USD_PER_KW",
           "DEFAULT_STAFF_USD_PER_FTE_YEAR", "DEFAULT_SERVERS_PER_FTE", "DEFAULT_MAINTENANCE_FRACTION",
           "DEFAULT_STORAGE_USD_PER_TB", "DEFAULT_UTILISATION", "cluster_power_kw", "Capex", "capex", "Opex", "opex_per_year", "TCO", "tco",
           "capital_recovery_factor", "TCO_ITEMS", "tco_parts", "tco_items", "tco_rank",
           "cloud_cost_usd", "breakeven_utilisation", "breakeven_months", "cumulative_costs", "DowntimeCost",
           "downtime_cost", "dp_scaling_efficiency", "ClusterOption", "DEFAULT_OPTIONS", "budget_comparison"]

HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0


def price_data() -> dict:
    """The raw price assumptions of ``labutil/data/prices.toml``."""
    return data_files.load("prices.toml")


def _entry(section: str, name: str) -> dict:
    return data_files.table("prices.toml", section, kind=f"{section} price entry")[name]


def server_price_usd(server: str) -> float:
    """Default price of one server (``prices.toml [server.*]``; list or illustrative, see entry)."""
    canonical = hardware.server(server).name
    return float(_entry("server", canonical)["price_usd"])


def fabrics() -> list[str]:
    """Names of the back-end fabrics with a price entry."""
    return list(price_data()["network"])


def network_usd_per_gpu(fabric: str) -> float:
    """Default back-end fabric cost per GPU endpoint (illustrative, see ``prices.toml``)."""
    return float(_entry("network", fabric)["usd_per_gpu"])


def fabric_node_gbps(fabric: str) -> float:
    """Compute-network bandwidth of one 8-GPU server on ``fabric`` (Gbit/s)."""
    return float(_entry("network", fabric)["node_gbps"])


def cloud_usd_per_gpu_hour(gpu: str) -> float:
    """Published cloud rental price per GPU-hour for ``gpu`` (``prices.toml [cloud.*]``)."""
    canonical = hardware.gpu(gpu).name
    return float(_entry("cloud", canonical)["usd_per_gpu_hour"])


def _d(section: str, key: str) -> float:
    return float(price_data()[section][key])


DEFAULT_USD_PER_KWH = _d("electricity", "usd_per_kwh")
DEFAULT_FACILITY_USD_PER_KW = _d("facility", "usd_per_kw")
DEFAULT_STAFF_USD_PER_FTE_YEAR = _d("staff", "usd_per_fte_year")
DEFAULT_SERVERS_PER_FTE = _d("staff", "servers_per_fte")
DEFAULT_MAINTENANCE_FRACTION = _d("maintenance", "fraction_of_hardware_per_year")
DEFAULT_STORAGE_USD_PER_TB = float(price_data()["storage"]["parallel-fs"]["usd_per_tb"])
#: the utilisation ch05's text, figures and explorer start from (a planning assumption, not a measurement)
DEFAULT_UTILISATION = 0.8


# -- power ------------------------------------------------------------------------------------------
def cluster_power_kw(n_gpus, server: str = "DGX-H100", pue=1.5):
    """(servers, it_kw, facility_kw) for ``n_gpus`` GPUs in ``server`` boxes at ``pue``.

    Delegates to ``labutil.power.cluster_power`` (servers × the catalog server power, facility =
    IT × PUE; PUE = facility power / IT power, The Green Grid WP#49, 2012), so ch05's power line
    and ch10's power chapter use one model. Vectorised over ``n_gpus``.
    """
    n = validate.integer("n_gpus", n_gpus, lo=1)
    p = validate.number("pue", pue, lo=1.0, hi=3.0)
    try:
        from . import power as _power
    except ImportError:  # pragma: no cover - power.py is part of the course
        _power = None
    if _power is not None:
        r = _power.cluster_power(n, server=server, pue=p)
        servers, it_kw, fac = r.servers, r.it_kw, r.facility_kw
    else:  # pragma: no cover
        s = hardware.server(server)
        servers = np.ceil(np.asarray(n) / s.gpus)
        it_kw = servers * s.max_power_w / 1000.0
        fac = it_kw * p
    if np.ndim(servers) == 0 and np.ndim(it_kw) == 0 and np.ndim(fac) == 0:
        return float(servers), float(it_kw), float(fac)
    return np.asarray(servers, dtype=float), np.asarray(it_kw, dtype=float), np.asarray(fac, dtype=float)


# -- capex / opex / TCO ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Capex:
    servers: float
    servers_usd: float
    network_usd: float
    storage_usd: float
    facility_usd: float

    @property
    def hardware_usd(self) -> float:
        return self.servers_usd + self.network_usd + self.storage_usd

    @property
    def total_usd(self) -> float:
        return self.hardware_usd + self.facility_usd


def capex(n_gpus, *, server: str = "DGX-H100", fabric: str = "IB-NDR-400G", storage_tb_per_gpu=2.0,
          storage_usd_per_tb=DEFAULT_STORAGE_USD_PER_TB, facility_usd_per_kw=DEFAULT_FACILITY_USD_PER_KW,
          pue=1.5, server_price=None, network_per_gpu=None) -> Capex:
    """Up-front cost of an owned cluster of ``n_gpus`` (USD).

    servers = ceil(N / GPUs per server) × server price; network = N × fabric cost per GPU
    endpoint; storage = N × TB per GPU × USD/TB; facility = IT kW × USD per kW of IT load
    (build-out of power and cooling: construction costs are quoted per MW of critical IT
    capacity, the cooling and distribution plant that PUE counts is inside that price, so the
    facility is NOT priced on IT × PUE). Defaults: ``prices.toml`` (illustrative unless marked
    "list"). ``server_price`` / ``network_per_gpu`` override the catalog defaults; ``pue`` is
    accepted for symmetry with :func:`opex_per_year` and does not change the capex.
    """
    n = validate.integer("n_gpus", n_gpus, lo=1)
    s = hardware.server(server)
    sp = server_price_usd(server) if server_price is None else validate.positive("server_price", server_price)
    npg = network_usd_per_gpu(fabric) if network_per_gpu is None else \
        validate.positive("network_per_gpu", network_per_gpu, allow_zero=True)
    stb = validate.positive("storage_tb_per_gpu", storage_tb_per_gpu, allow_zero=True)
    sut = validate.positive("storage_usd_per_tb", storage_usd_per_tb, allow_zero=True)
    fk = validate.positive("facility_usd_per_kw", facility_usd_per_kw, allow_zero=True)
    servers, it_kw, _fac_kw = cluster_power_kw(n, server, pue)
    return Capex(servers=servers, servers_usd=servers * sp, network_usd=n * npg, storage_usd=n * stb * sut,
                 facility_usd=it_kw * fk)


@dataclass(frozen=True)
class Opex:
    """Yearly operating cost (USD per year) and the power it is based on."""

    it_kw: float
    facility_kw: float
    power_usd: float
    staff_usd: float
    maintenance_usd: float

    @property
    def total_usd(self) -> float:
        return self.power_usd + self.staff_usd + self.maintenance_usd


def opex_per_year(n_gpus, *, server: str = "DGX-H100", fabric: str = "IB-NDR-400G", pue=1.5,
                  usd_per_kwh=DEFAULT_USD_PER_KWH, load_factor=1.0,
                  staff_usd_per_fte_year=DEFAULT_STAFF_USD_PER_FTE_YEAR, servers_per_fte=DEFAULT_SERVERS_PER_FTE,
                  maintenance_fraction=DEFAULT_MAINTENANCE_FRACTION, hardware_usd=None, **capex_kw) -> Opex:
    """Yearly opex (USD/yr): energy + staff + maintenance.

    energy = IT kW × ``load_factor`` × PUE × 8,760 h × USD/kWh (``load_factor`` 1.0 = budget at
    the servers' published maximum power, the conservative planning assumption); staff =
    ceil(servers / servers per FTE) × cost per FTE; maintenance = fraction × hardware capex.
    """
    n = validate.positive("n_gpus", n_gpus)
    price = validate.positive("usd_per_kwh", usd_per_kwh, allow_zero=True)
    lf = validate.fraction("load_factor", load_factor)
    fte_cost = validate.positive("staff_usd_per_fte_year", staff_usd_per_fte_year, allow_zero=True)
    spf = validate.positive("servers_per_fte", servers_per_fte)
    mf = validate.fraction("maintenance_fraction", maintenance_fraction, allow_zero=True)
    servers, it_kw, fac_kw = cluster_power_kw(n, server, pue)
    if hardware_usd is None:
        hardware_usd = capex(n, server=server, fabric=fabric, pue=pue, **capex_kw).hardware_usd
    else:
        hardware_usd = validate.positive("hardware_usd", hardware_usd, allow_zero=True)
    power_usd = fac_kw * lf * HOURS_PER_YEAR * price
    staff = np.ceil(np.asarray(servers) / spf) * fte_cost
    staff = float(staff) if np.ndim(staff) == 0 else staff
    return Opex(it_kw=it_kw, facility_kw=fac_kw, power_usd=power_usd, staff_usd=staff,
                maintenance_usd=mf * hardware_usd)


def capital_recovery_factor(rate, years):
    """Annual payment per unit of up-front money repaid over ``years`` at ``rate`` (an annuity):
    CRF = r (1+r)^Y / ((1+r)^Y − 1), and 1 / Y at r = 0 (straight line).

    >>> round(capital_recovery_factor(0.08, 4), 4)
    0.3019
    """
    r = validate.number("rate", rate, lo=0.0, hi=1.0)
    y = validate.positive("years", years)
    if np.ndim(r) == 0 and r == 0:
        return 1.0 / y
    g = (1.0 + np.asarray(r, dtype=float)) ** y
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(np.asarray(r) > 0, np.asarray(r) * g / (g - 1.0), 1.0 / y)
    return float(out) if np.ndim(out) == 0 else out


@dataclass(frozen=True)
class TCO:
    n_gpus: float
    years: float
    utilisation: float
    capex: Capex
    opex: Opex
    facility_years: float | None = None   # None: the build-out is written off over ``years``
    interest_rate: float = 0.0

    @property
    def facility_charged_usd(self) -> float:
        """The part of the facility build-out this horizon carries: all of it, or years / facility_years."""
        if self.facility_years is None:
            return self.capex.facility_usd
        return self.capex.facility_usd * min(1.0, self.years / self.facility_years)

    @property
    def upfront_usd(self) -> float:
        """Money spent at purchase: the hardware, plus the facility when it is written off over ``years``."""
        return self.capex.hardware_usd + (self.capex.facility_usd if self.facility_years is None else 0.0)

    @property
    def financing_usd(self) -> float:
        """Cost of the money tied up in the up-front spend over the horizon: upfront × (CRF · years − 1)."""
        if self.interest_rate == 0:
            return 0.0
        return self.upfront_usd * (capital_recovery_factor(self.interest_rate, self.years) * self.years - 1.0)

    @property
    def yearly_usd(self) -> float:
        """Everything charged per year after purchase: opex, the facility share, the financing (spread evenly)."""
        facility = 0.0 if self.facility_years is None else self.facility_charged_usd / self.years
        return self.opex.total_usd + facility + self.financing_usd / self.years

    @property
    def total_usd(self) -> float:
        return self.upfront_usd + self.years * self.yearly_usd

    @property
    def per_year_usd(self) -> float:
        return self.total_usd / self.years

    @property
    def usd_per_gpu_hour(self) -> float:
        """TCO divided by the GPU-hours actually used (N × 8,760 × years × utilisation)."""
        return self.total_usd / (self.n_gpus * HOURS_PER_YEAR * self.years * self.utilisation)

    @property
    def usd_per_cluster_hour(self) -> float:
        """What one wall-clock hour of the whole cluster costs, used or idle (TCO / hours owned)."""
        return self.total_usd / (HOURS_PER_YEAR * self.years)


def tco(n_gpus, years=4.0, utilisation=DEFAULT_UTILISATION, *, server: str = "DGX-H100", fabric: str = "IB-NDR-400G",
        pue=1.5, usd_per_kwh=DEFAULT_USD_PER_KWH, facility_years=None, interest_rate=0.0, **kw) -> TCO:
    """Total cost of ownership over ``years`` and the cost per used GPU-hour.

    ``kw`` go to :func:`capex` (storage, facility, price overrides) and :func:`opex_per_year`
    (staff, maintenance, load factor). ``facility_years`` (None: write the build-out off over
    ``years``) and ``interest_rate`` (0: no cost of capital) are the refinements of the module
    docstring.
    """
    n = validate.positive("n_gpus", n_gpus)
    y = validate.positive("years", years)
    u = validate.fraction("utilisation", utilisation)
    fy = None if facility_years is None else float(validate.positive("facility_years", facility_years))
    r = float(validate.number("interest_rate", interest_rate, lo=0.0, hi=1.0))
    capex_keys = {"storage_tb_per_gpu", "storage_usd_per_tb", "facility_usd_per_kw", "server_price", "network_per_gpu"}
    ck = {k: v for k, v in kw.items() if k in capex_keys}
    ok = {k: v for k, v in kw.items() if k not in capex_keys}
    c = capex(n, server=server, fabric=fabric, pue=pue, **ck)
    o = opex_per_year(n, server=server, fabric=fabric, pue=pue, usd_per_kwh=usd_per_kwh,
                      hardware_usd=c.hardware_usd, **ok)
    return TCO(n_gpus=n, years=y, utilisation=u, capex=c, opex=o, facility_years=fy, interest_rate=r)


#: The TCO line items in the order ``tco_items`` reports them: (key, where it lives, label).
TCO_ITEMS = (("servers_usd", "capex", "servers"), ("network_usd", "capex", "network"),
             ("storage_usd", "capex", "storage"), ("facility_usd", "capex", "facility build-out"),
             ("power_usd", "opex", "power"), ("staff_usd", "opex", "staff"),
             ("maintenance_usd", "opex", "maintenance"))


def tco_parts(owned: TCO) -> dict[str, float]:
    """Each line of the TCO over its horizon (USD), in the fixed order of ``TCO_ITEMS``: capex items
    once (the facility: the share this horizon carries), opex items × years, then "financing" when
    ``interest_rate`` > 0. They add up to ``owned.total_usd``. Vectorised like the TCO itself."""
    out = {}
    for key, part, label in TCO_ITEMS:
        if key == "facility_usd":
            out[label] = owned.facility_charged_usd
        elif part == "capex":
            out[label] = getattr(owned.capex, key)
        else:
            out[label] = getattr(owned.opex, key) * owned.years
    if owned.interest_rate > 0:
        out["financing"] = owned.financing_usd
    return out


def tco_items(owned: TCO) -> dict[str, float]:
    """Each line of the TCO over its horizon (USD): capex items once, opex items × years, largest
    first (``tco_parts`` sorted). Scalar TCOs only (the ranking of ch05 and ch10).

    >>> [k for k in tco_items(tco(1024, 4, 0.8))][:2]
    ['servers', 'facility build-out']
    """
    if np.ndim(owned.n_gpus):
        raise ValueError("tco_items takes a TCO of a scalar n_gpus")
    out = {label: float(v) for label, v in tco_parts(owned).items()}
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def tco_rank(owned: TCO, item: str) -> int:
    """Rank (1 = largest) of one TCO line item over the horizon; ``item`` is a label of ``TCO_ITEMS``."""
    items = tco_items(owned)
    if item not in items:
        raise validate.unknown_name("TCO item", item, list(items))
    return list(items).index(item) + 1


# -- cloud vs owned ----------------------------------------------------------------------------------
def cloud_cost_usd(n_gpus, hours, utilisation, usd_per_gpu_hour):
    """Cloud rental: you pay only for the GPU-hours you use: N × hours × utilisation × price."""
    n = validate.positive("n_gpus", n_gpus)
    h = validate.positive("hours", hours, allow_zero=True)
    u = validate.fraction("utilisation", utilisation)
    p = validate.positive("usd_per_gpu_hour", usd_per_gpu_hour)
    return n * h * u * p


def breakeven_utilisation(owned: TCO, usd_per_gpu_hour):
    """Utilisation above which owning is cheaper than renting over the TCO horizon.

    u* = TCO / (N × 8,760 × years × cloud price). A value above 1 means renting wins at any
    utilisation over this horizon (owning never pays back). Always finite.
    """
    p = validate.positive("usd_per_gpu_hour", usd_per_gpu_hour)
    return owned.total_usd / (owned.n_gpus * HOURS_PER_YEAR * owned.years * p)


def breakeven_months(owned: TCO, usd_per_gpu_hour):
    """Months after which the cumulative cost of owning drops below renting, or ``None`` if never.

    Owned cost(t) = up-front + yearly · t (``TCO.upfront_usd``, ``TCO.yearly_usd``: capex and opex
    by default); cloud cost(t) = N · u · price · t (t in hours). The curves cross at
    t* = up-front / (cloud rate − yearly rate) if the cloud rate is higher. Scalar only.
    """
    p = validate.positive("usd_per_gpu_hour", usd_per_gpu_hour)
    if np.ndim(owned.n_gpus):
        raise ValueError("breakeven_months takes a scalar n_gpus")
    cloud_per_h = owned.n_gpus * owned.utilisation * p
    yearly_per_h = owned.yearly_usd / HOURS_PER_YEAR
    if cloud_per_h <= yearly_per_h:
        return None
    return float(owned.upfront_usd / (cloud_per_h - yearly_per_h) / HOURS_PER_MONTH)


def cumulative_costs(owned: TCO, usd_per_gpu_hour, months):
    """(owned_usd, cloud_usd) cumulative cost curves at ``months`` (array) for a break-even figure."""
    p = validate.positive("usd_per_gpu_hour", usd_per_gpu_hour)
    m = np.asarray(validate.positive("months", months, allow_zero=True), dtype=float)
    hours = m * HOURS_PER_MONTH
    own = owned.upfront_usd + owned.yearly_usd * hours / HOURS_PER_YEAR
    cloud = owned.n_gpus * owned.utilisation * p * hours
    return own, cloud


# -- downtime ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DowntimeCost:
    failures_per_year: float
    hours_lost_per_failure: float       # wall-clock hours the whole job loses per failure
    usd_per_failure: float
    usd_per_year: float
    gpu_hours_lost_per_year: float


def downtime_cost(n_gpus, failures_per_day, restart_s, interval_s, usd_per_gpu_hour):
    """Cost of failures: each one idles the whole synchronous job for R and throws away τ/2 of work.

    Lost wall-clock per failure = restart R + interval/2 (the expected re-computation, see
    ``reliability.goodput``); cost = N × that × USD per GPU-hour (what an idle hour of the
    cluster costs: use :attr:`TCO.usd_per_cluster_hour` / N for an owned cluster, or the cloud
    price). This is seed 004's 误区三 "只算硬件采购成本，不算停机成本" made explicit.
    """
    n = validate.positive("n_gpus", n_gpus)
    f = validate.positive("failures_per_day", failures_per_day, allow_zero=True)
    r = validate.positive("restart_s", restart_s, allow_zero=True)
    tau = validate.positive("interval_s", interval_s)
    p = validate.positive("usd_per_gpu_hour", usd_per_gpu_hour)
    hours = (r + tau / 2.0) / SECONDS_PER_HOUR
    per_failure = n * hours * p
    per_year = f * 365.0
    return DowntimeCost(failures_per_year=per_year, hours_lost_per_failure=hours, usd_per_failure=per_failure,
                        usd_per_year=per_failure * per_year, gpu_hours_lost_per_year=n * hours * per_year)


# -- delivered throughput per money: balanced vs "top GPU + slow network" -----------------------------
def dp_scaling_efficiency(n_gpus, params, tokens_per_gpu_step, peak_tflops, mfu, node_gbps, *,
                          gpus_per_node: int = 8, grad_bytes_per_param=2.0, intra_bw_gbs=300.0, overlap=0.0,
                          cluster=None):
    """Data-parallel scaling efficiency t_compute / (t_compute + exposed t_comm) on a fabric.

    Compute per step t_c = 6·P·tokens / (peak·MFU) (Kaplan et al. 2020, C ≈ 6N per token);
    gradient sync = a hierarchical all-reduce of P × ``grad_bytes_per_param`` bytes whose
    inter-node stage runs over each server's compute NICs (``node_gbps`` in total) and whose
    intra-node stage runs over NVLink (``intra_bw_gbs`` per direction). Both come from
    ``labutil.compute.dense_compute_time_s`` and ``labutil.dp`` on the ``labutil.cluster`` model
    (``dp_comm_time_s``, ``scaling_efficiency``), so ch05 and ch14 use one communication model. With ``cluster`` (a
    ``labutil.cluster.Cluster``) its measured NVLink ring / NVLS busbw are used and ``node_gbps``
    replaces its NICs; without it ``intra_bw_gbs`` is the NVLink line rate per direction.
    ``overlap`` is the fraction of compute time that can hide communication.
    """
    from . import comm, compute, dp

    n = validate.integer("n_gpus", n_gpus)
    g = validate.integer("gpus_per_node", gpus_per_node)
    t_c = compute.dense_compute_time_s(params, tokens_per_gpu_step, peak_tflops, mfu)
    link = dict(intra_bw_gbs=intra_bw_gbs) if cluster is None else dict(cluster=cluster)
    t_comm = dp.dp_comm_time_s(params, n, nic_gbps=validate.positive("node_gbps", node_gbps), nics_per_node=1,
                               gpus_per_node=g, bytes_per_grad=grad_bytes_per_param, **link)
    eff = comm.scaling_efficiency(t_c, t_comm, overlap)
    return float(eff) if np.ndim(eff) == 0 else np.asarray(eff)


@dataclass(frozen=True)
class ClusterOption:
    """One configuration bought with a fixed budget (see :func:`budget_comparison`)."""

    label: str
    server: str
    fabric: str
    storage: str
    usd_per_gpu: float
    n_gpus: int
    peak_pflops: float
    scaling_efficiency: float
    delivered_pflops: float

    @property
    def delivered_pflops_per_musd(self) -> float:
        return self.delivered_pflops / (self.n_gpus * self.usd_per_gpu / 1e6)


DEFAULT_OPTIONS = (
    ("top GPU + 25GbE", "DGX-H100", "Ethernet-25G", "nas"),
    ("top GPU + 400G IB", "DGX-H100", "IB-NDR-400G", "parallel-fs"),
    ("mid GPU + 200G IB (balanced)", "DGX-A100", "IB-HDR-200G", "parallel-fs"),
    ("mid GPU + 25GbE", "DGX-A100", "Ethernet-25G", "nas"),
)


def budget_comparison(budget_usd, options=DEFAULT_OPTIONS, *, params=7e9, tokens_per_gpu_step=16384, mfu=0.45,
                      storage_tb_per_gpu=2.0, overlap=0.0, precision: str = "bf16") -> list[ClusterOption]:
    """What a fixed hardware budget buys, and how fast it trains (delivered PFLOP/s).

    For each (label, server, fabric, storage) option: cost per GPU = server price / GPUs per
    server + fabric cost per GPU + storage TB per GPU × USD/TB; N = whole servers the budget buys;
    delivered = N × peak × MFU × scaling efficiency, the scaling efficiency from
    :func:`dp_scaling_efficiency` on the fabric's per-node bandwidth (reference workload: a
    ``params`` model trained data-parallel, ``tokens_per_gpu_step`` tokens per GPU per step).
    Seed 004 误区一: a balanced configuration beats "top GPU + slow network" per money.
    """
    b = validate.positive("budget_usd", budget_usd)
    out = []
    for label, server, fabric, storage in options:
        s = hardware.server(server)
        g = s.gpu_spec
        store = price_data()["storage"].get(storage)
        if store is None:
            raise validate.unknown_name("storage price entry", storage, price_data()["storage"])
        per_gpu = server_price_usd(server) / s.gpus + network_usd_per_gpu(fabric) + storage_tb_per_gpu * store["usd_per_tb"]
        servers = int(b // (per_gpu * s.gpus))
        if servers < 1:
            raise ValueError(f"budget_usd={b:,.0f} does not buy one {server} server with {fabric} "
                             f"(needs {per_gpu * s.gpus:,.0f})")
        n = servers * s.gpus
        peak = g.peak_tflops(precision)
        from .cluster import Cluster

        cl = Cluster.for_gpu(g.name, servers, nic_gbps=fabric_node_gbps(fabric), nics_per_node=1)
        eff = dp_scaling_efficiency(n, params, tokens_per_gpu_step, peak, mfu, fabric_node_gbps(fabric),
                                    gpus_per_node=s.gpus, overlap=overlap, cluster=cl)
        out.append(ClusterOption(label=label, server=server, fabric=fabric, storage=storage, usd_per_gpu=per_gpu,
                                 n_gpus=n, peak_pflops=n * peak / 1e3, scaling_efficiency=eff,
                                 delivered_pflops=n * peak * mfu * eff / 1e3))
    return out
