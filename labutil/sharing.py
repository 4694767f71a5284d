"""GPU sharing between tenants: MIG profiles and placement, time-slicing, MPS; isolation (ch29).

Data
----
MIG GPU-instance profiles of the 80 GB A100 and H100 live in ``labutil/data/mig_profiles.toml``
(NVIDIA MIG User Guide, "Supported MIG Profiles"; ``nvidia-smi mig -lgip`` / ``-lgipp``), with
the isolation matrix (what each mechanism isolates: memory, faults, performance, network).

Placement rules (``mig_layout``)
--------------------------------
A GPU has 7 compute slices and 8 memory slices. A set of GPU instances fits when (1) each
profile appears at most ``max_instances`` times (the guide's "Number of Instances Available";
``1g.10gb+me`` at most once), (2) the compute slices add up to <= 7 and the memory slices to
<= 8, and (3) every instance gets a start index from its profile's ``-lgipp`` placement list such
that no two instances overlap on the 8-slice memory axis (NVML ``nvmlGpuInstancePlacement_t``:
start = first memory slice, size = memory slices). Example: 3g.40gb + 3g.40gb + 1g.10gb has 7
compute slices but 9 memory slices: rejected; 3g.40gb + 2g.20gb + 1g.10gb + 1g.10gb fits only
with the 3g at slice 4 (a greedy left-to-right fill fails, a search finds it). Simplification:
compute-slice positions are not modelled separately from memory positions (the guide's placement
diagrams tie them together); the driver may refuse a layout created in an unlucky order that a
different creation order would allow, which this validator does not model.

Service-time model on a fraction of a GPU
-----------------------------------------
``service_ms`` is one request's time on the whole GPU (MIG off). A request keeps a fraction
``gpu_fill`` of the GPU's SMs busy (a small model at batch 1 cannot fill 132 SMs). On a share
``f`` of the SMs (a MIG instance: its SM count over the whole GPU's; an MPS client:
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE / 100) the time is ``service_ms · max(1, gpu_fill / f)``:
unchanged while the share covers what the request can use, proportionally longer below it (a
roofline-style saturation model; course assumption, stated: measure your model on the slice).

Sharing modes (``plan_sharing`` / ``pack_services``)
----------------------------------------------------
- ``dedicated``: every tenant gets whole GPUs, sized with ``inference.gpus_for_slo``.
- ``time_slicing``: tenants' processes take turns on one GPU (the CUDA default and the
  k8s-device-plugin ``timeSlicing`` replicas). The GPU runs one context at a time, so every tenant
  waits behind all tenants' work: one work-conserving server fed by the sum of the arrivals
  (M/D/1, Allen–Cunneen tail, ``inference.p99_latency_ms``) with the load-weighted mean service
  time; tenant i's P99 = that queue's P99 wait + its own service time. Context-switch cost is not
  counted and mixed service times are treated as deterministic (both optimistic: real P99 is
  higher). Memory: the tenants' memory must fit in the GPU's.
- ``mps``: k clients, each limited to 1/k of the SMs (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE), each its
  own M/D/1 queue with the stretched service time; at most 48 clients per GPU (NVIDIA MPS docs,
  Volta MPS limits). Memory bandwidth and L2 are shared and their interference is not modelled.
- ``mig``: each tenant on its own instance(s) of one profile (its own queue); the plan takes the
  profile that needs the fewest GPUs, or MIG off (whole GPUs) when that needs fewer.

With one tenant per GPU every shared mode reduces to ``dedicated``, so no mode needs more GPUs
than dedicating GPUs (tested).

``parse_mig_lgip`` reads ``nvidia-smi mig -lgip`` (the table format of the MIG User Guide's
"List GPU Instance Profiles" example) and ``parse_nvidia_smi_list`` reads ``nvidia-smi -L`` with
MIG devices; both raise :class:`labutil.parsers.ParseError` on garbage.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import data_files, hardware, inference, validate
from .parsers._common import ParseError, require_text
from .units import BYTES_PER_GB

__all__ = ["MODES", "ISOLATION_LEVELS", "ISOLATION_ASPECTS", "MPS_MAX_CLIENTS", "MigProfile", "MigGpu", "mig_gpu",
           "mig_gpus", "mig_profile", "mig_profiles", "mig_profile_table", "MigPlacementError", "MigSlot",
           "MigLayout", "mig_layout", "mig_fits", "max_instances_per_gpu", "mig_configurations", "shared_service_ms",
           "time_sliced_p99_ms", "noisy_neighbour_p99_ms", "SharingPlan", "plan_sharing", "compare_sharing",
           "gpus_saved", "Service", "Packing", "pack_services", "isolation_matrix", "isolation", "not_isolated_by",
           "LgipRow", "parse_mig_lgip", "SmiDevice", "parse_nvidia_smi_list", "SAMPLE_LGIP_H100", "SAMPLE_SMI_L"]

MODES = ("dedicated", "time_slicing", "mps", "mig")
ISOLATION_LEVELS = ("hard", "partial", "none", "n/a")
ISOLATION_ASPECTS = ("memory", "faults", "performance", "network")

#: NVIDIA Multi-Process Service docs, "Limitations" / Volta MPS: up to 48 client CUDA contexts
#: per device.
MPS_MAX_CLIENTS = 48

_GIB_TO_GB = 2**30 / BYTES_PER_GB


# -- data ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MigProfile:
    """One MIG GPU-instance profile (``nvidia-smi mig -lgip`` row + ``-lgipp`` placements)."""

    name: str
    id: int
    compute_slices: int
    memory_slices: int
    max_instances: int
    placements: tuple[int, ...]
    memory_gib: float
    sm: int

    @property
    def memory_gb(self) -> float:
        return self.memory_gib * _GIB_TO_GB


@dataclass(frozen=True)
class MigGpu:
    """A MIG-capable GPU: 7 compute and 8 memory slices, its profiles, SMs with MIG off."""

    name: str
    catalog_gpu: str
    compute_slices: int
    memory_slices: int
    sm_full: int
    source: str
    profiles: tuple[MigProfile, ...]

    def profile(self, name: str) -> MigProfile:
        key = str(name).removeprefix("MIG ").strip().lower()
        for p in self.profiles:
            if p.name.lower() == key or str(p.id) == key:
                return p
        raise validate.unknown_name(f"MIG profile of {self.name}", str(name), [p.name for p in self.profiles])

    def sm_fraction(self, profile: str) -> float:
        """SMs of one instance over the SMs of the whole GPU with MIG off."""
        return self.profile(profile).sm / self.sm_full


def _data() -> dict:
    return data_files.load("mig_profiles.toml")


@lru_cache(maxsize=None)
def mig_gpu(name: str) -> MigGpu:
    """The MIG description of ``name`` ('A100-80GB', 'H100-80GB'); KeyError lists known names."""
    gpus = _data()["gpu"]
    for key, entry in gpus.items():
        if key.lower() == str(name).lower():
            profs = tuple(MigProfile(p["name"], int(p["id"]), int(p["compute_slices"]), int(p["memory_slices"]),
                                     int(p["max_instances"]), tuple(int(x) for x in p["placements"]),
                                     float(p["memory_gib"]), int(p["sm"])) for p in entry["profile"])
            return MigGpu(key, entry["catalog_gpu"], int(entry["compute_slices"]), int(entry["memory_slices"]),
                          int(entry["sm_full"]), entry["source"], profs)
    raise validate.unknown_name("MIG GPU", str(name), gpus)


def mig_gpus() -> list[str]:
    return list(_data()["gpu"])


def mig_profile(gpu: str, name: str) -> MigProfile:
    return mig_gpu(gpu).profile(name)


def mig_profiles(gpu: str, *, include_media: bool = False) -> list[MigProfile]:
    """Profiles of ``gpu`` from smallest to largest (``+me`` media-extension ones only if asked)."""
    return [p for p in mig_gpu(gpu).profiles if include_media or not p.name.endswith("+me")]


def mig_profile_table(gpu: str) -> list[dict]:
    """Rows for a notebook table: slices, memory, SMs, share of the whole GPU's SMs."""
    g = mig_gpu(gpu)
    return [{"profile": p.name, "id": p.id, "compute slices": f"{p.compute_slices}/{g.compute_slices}",
             "memory slices": f"{p.memory_slices}/{g.memory_slices}", "memory GiB": p.memory_gib, "SMs": p.sm,
             "SM share": f"{p.sm / g.sm_full:.1%}", "max instances": p.max_instances,
             "placements": "{" + ",".join(map(str, p.placements)) + f"}}:{p.memory_slices}"} for p in g.profiles]


# -- placement ----------------------------------------------------------------------------------
class MigPlacementError(ValueError):
    """A set of MIG profiles that cannot coexist on one GPU (the message says which rule)."""


@dataclass(frozen=True)
class MigSlot:
    profile: str
    start: int            # first memory slice
    memory_slices: int
    compute_slices: int


@dataclass(frozen=True)
class MigLayout:
    gpu: str
    slots: tuple[MigSlot, ...]

    @property
    def compute_slices(self) -> int:
        return sum(s.compute_slices for s in self.slots)

    @property
    def memory_slices(self) -> int:
        return sum(s.memory_slices for s in self.slots)

    def sm(self) -> int:
        g = mig_gpu(self.gpu)
        return sum(g.profile(s.profile).sm for s in self.slots)

    def memory_gib(self) -> float:
        g = mig_gpu(self.gpu)
        return sum(g.profile(s.profile).memory_gib for s in self.slots)

    def cgi_argument(self) -> str:
        """The ``nvidia-smi mig -cgi`` argument that creates this layout, largest first."""
        g = mig_gpu(self.gpu)
        return ",".join(str(g.profile(s.profile).id) for s in sorted(self.slots, key=lambda s: -s.memory_slices))


def _as_profile_list(profiles) -> list[str]:
    if isinstance(profiles, str):
        profiles = [p for p in re.split(r"[,\s]+", profiles) if p]
    try:
        items = list(profiles)
    except TypeError:
        raise ValueError(f"profiles must be a list of MIG profile names; got {profiles!r}") from None
    if not items:
        raise ValueError("profiles must name at least one MIG profile")
    return [str(p) for p in items]


def mig_layout(gpu: str, profiles) -> MigLayout:
    """Place ``profiles`` (names or IDs, e.g. ['3g.40gb', '2g.20gb', '1g.10gb']) on one GPU.

    Returns the layout (start slice of each instance) or raises :class:`MigPlacementError`
    naming the violated rule (instance limit, compute slices, memory slices, placement).
    Unknown names raise KeyError.
    """
    g = mig_gpu(gpu)
    profs = [g.profile(p) for p in _as_profile_list(profiles)]
    for p in {p.name: p for p in profs}.values():
        n = sum(q.name == p.name for q in profs)
        if n > p.max_instances:
            raise MigPlacementError(f"{g.name}: at most {p.max_instances} instance(s) of {p.name}; got {n}")
    media = sum(p.name.endswith("+me") for p in profs)
    if media > 1:
        raise MigPlacementError(f"{g.name}: at most one media-extension (+me) instance per GPU; got {media}")
    cs = sum(p.compute_slices for p in profs)
    if cs > g.compute_slices:
        raise MigPlacementError(f"{g.name}: {cs} compute slices requested, a GPU has {g.compute_slices}")
    ms = sum(p.memory_slices for p in profs)
    if ms > g.memory_slices:
        raise MigPlacementError(f"{g.name}: {ms} memory slices requested, a GPU has {g.memory_slices}")
    order = sorted(range(len(profs)), key=lambda i: (-profs[i].memory_slices, -profs[i].compute_slices))
    starts = [0] * len(profs)

    def place(k: int, used: int) -> bool:  # backtracking over the -lgipp start positions
        if k == len(order):
            return True
        p = profs[order[k]]
        for s in p.placements:
            mask = ((1 << p.memory_slices) - 1) << s
            if not used & mask:
                starts[order[k]] = s
                if place(k + 1, used | mask):
                    return True
        return False

    if not place(0, 0):
        names = "+".join(p.name for p in profs)
        raise MigPlacementError(f"{g.name}: {names} fits the slice counts but no placement exists "
                                f"(nvidia-smi mig -lgipp start positions overlap)")
    slots = tuple(sorted((MigSlot(p.name, starts[i], p.memory_slices, p.compute_slices) for i, p in enumerate(profs)),
                         key=lambda s: s.start))
    return MigLayout(g.name, slots)


def mig_fits(gpu: str, profiles) -> bool:
    """True when ``profiles`` can coexist on one GPU (see ``mig_layout``)."""
    try:
        mig_layout(gpu, profiles)
    except MigPlacementError:
        return False
    return True


def max_instances_per_gpu(gpu: str, profile: str) -> int:
    """Most instances of one profile a GPU holds (checked by the placement search)."""
    p = mig_profile(gpu, profile)
    n = p.max_instances
    while n > 1 and not mig_fits(gpu, [p.name] * n):
        n -= 1
    return n


@lru_cache(maxsize=None)
def mig_configurations(gpu: str, *, maximal: bool = True, include_media: bool = False) -> tuple[tuple[str, ...], ...]:
    """Every distinct multiset of profiles that fits one GPU (``maximal``: no further instance fits)."""
    profs = [p.name for p in mig_profiles(gpu, include_media=include_media)]
    found: set[tuple[str, ...]] = set()

    def grow(cur: list[str], start: int):
        for i in range(start, len(profs)):
            nxt = cur + [profs[i]]
            if mig_fits(gpu, nxt):
                found.add(tuple(nxt))
                grow(nxt, i)

    grow([], 0)
    if maximal:
        found = {c for c in found if not any(mig_fits(gpu, list(c) + [p]) for p in profs)}
    return tuple(sorted(found, key=lambda c: (-len(c), c)))


# -- service time on a share of the GPU ---------------------------------------------------------
def shared_service_ms(service_ms, share, gpu_fill=1.0):
    """Service time (ms) on a share of the SMs: ``service_ms · max(1, gpu_fill / share)`` (vectorised)."""
    s = validate.positive("service_ms", service_ms)
    f = validate.fraction("share", share)
    fill = validate.fraction("gpu_fill", gpu_fill)
    return np.asarray(s) * np.maximum(1.0, fill / np.asarray(f)) if np.ndim(s) or np.ndim(f) or np.ndim(fill) \
        else float(s * max(1.0, fill / f))


def time_sliced_p99_ms(qps, service_ms):
    """Per-tenant P99 (ms) of tenants time-slicing one GPU (arrays: one entry per tenant).

    One work-conserving server fed by all arrivals (M/D/1 with the load-weighted mean service
    time, ``inference.p99_latency_ms``); tenant i: the queue's P99 wait + its own service time.
    Raises ValueError when the tenants' total load reaches the GPU (utilisation >= 1).
    """
    lam = np.atleast_1d(np.asarray(validate.positive("qps", qps), dtype=float))
    s = np.atleast_1d(np.asarray(validate.positive("service_ms", service_ms), dtype=float))
    lam, s = np.broadcast_arrays(lam, s)
    total = float(lam.sum())
    s_bar = float((lam * s).sum() / total)
    if total * s_bar / 1e3 >= 1.0:
        raise ValueError(f"time-slicing: the tenants' load is {total * s_bar / 1e3:.3g} GPUs (qps x service time); "
                         "it must be < 1 for one GPU")
    wait = inference.p99_latency_ms(total, 1, s_bar) - s_bar
    return wait + s


def noisy_neighbour_p99_ms(neighbour_qps, *, qps=20.0, service_ms=10.0, neighbour_service_ms=10.0,
                           mode: str = "time_slicing", gpu: str = "H100-80GB", profile: str = "3g.40gb",
                           gpu_fill=0.4):
    """P99 (ms) of a quiet tenant as its co-tenant's load grows (vectorised over ``neighbour_qps``).

    ``time_slicing``: both share one queue (``time_sliced_p99_ms``), so the quiet tenant's P99
    rises with the neighbour's load. ``mig``: each tenant on its own ``profile`` instance: the
    quiet tenant's P99 is its own queue's and does not depend on the neighbour.
    """
    nq = np.asarray(validate.positive("neighbour_qps", neighbour_qps, allow_zero=True), dtype=float)
    lam = validate.positive("qps", qps)
    s = validate.positive("service_ms", service_ms)
    sn = validate.positive("neighbour_service_ms", neighbour_service_ms)
    validate.choice("mode", mode, ("time_slicing", "mig"))
    if mode == "mig":
        s_inst = shared_service_ms(s, mig_gpu(gpu).sm_fraction(profile), gpu_fill)
        out = np.full(nq.shape, inference.p99_latency_ms(lam, 1, s_inst))
    else:
        total = lam + nq
        s_bar = (lam * s + nq * sn) / total
        rho = total * s_bar / 1e3
        if (rho >= 1.0).any():
            raise ValueError(f"neighbour_qps too high: the shared GPU's utilisation reaches {float(rho.max()):.3g} "
                             f"(must be < 1; neighbour_qps < {(1e3 - lam * s) / sn:.4g})")
        out = inference.p99_latency_ms(total, 1, s_bar) - s_bar + s
    return float(out) if out.ndim == 0 else out


# -- planning -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class SharingPlan:
    """GPUs for ``n_tenants`` identical inference tenants under one sharing mode."""

    mode: str
    gpu: str
    n_tenants: int
    gpus: int
    tenants_per_gpu: float      # tenants one GPU serves (instances per GPU / instances per tenant for MIG)
    p99_ms: float               # worst tenant's modelled P99
    profile: str                # MIG profile used ('' otherwise; 'MIG off' when whole GPUs win)
    instances_per_tenant: int   # replicas (whole GPUs, MIG instances) per tenant
    isolation: dict             # aspect -> level, from the isolation matrix


def _gpu_memory_gb(g: MigGpu) -> float:
    return float(hardware.gpu(g.catalog_gpu).hbm_gb)


def _isolation_for(mode: str) -> dict:
    key = {"dedicated": "whole GPU + cgroup devices", "time_slicing": "time-slicing", "mps": "MPS", "mig": "MIG"}[mode]
    row = isolation(key)
    return {a: row[a] for a in ISOLATION_ASPECTS}


def _check_tenant(qps, service_ms, memory_gb, p99_ms, gpu_fill):
    return (validate.positive("qps", qps), validate.positive("service_ms", service_ms),
            validate.positive("memory_gb", memory_gb), validate.positive("p99_ms", p99_ms),
            validate.fraction("gpu_fill", gpu_fill))


def plan_sharing(n_tenants, qps, service_ms, memory_gb, p99_ms, mode: str = "mig", *, gpu: str = "H100-80GB",
                 gpu_fill=1.0) -> SharingPlan:
    """Fewest GPUs for ``n_tenants`` identical tenants (each ``qps`` at ``service_ms`` per request on a
    whole GPU, ``memory_gb`` of weights + runtime memory, P99 target ``p99_ms``) under ``mode``.

    Raises ValueError when a tenant does not fit a GPU's memory or even a whole idle GPU misses
    the P99 target. See the module docstring for each mode's model.
    """
    n = validate.integer("n_tenants", n_tenants, lo=1)
    lam, s, mem, target, fill = _check_tenant(qps, service_ms, memory_gb, p99_ms, gpu_fill)
    validate.choice("mode", mode, MODES)
    g = mig_gpu(gpu)
    hbm = _gpu_memory_gb(g)
    if mem > hbm:
        raise ValueError(f"memory_gb={mem:g} exceeds one {g.catalog_gpu}'s {hbm:g} GB: the tenant needs model parallelism, "
                         "not sharing")
    ded = inference.gpus_for_slo(lam, target, s)
    dedicated = SharingPlan("dedicated", g.name, n, n * ded.gpus, 1.0 / ded.gpus, ded.p99_ms, "", ded.replicas,
                            _isolation_for("dedicated"))
    if mode == "dedicated":
        return dedicated
    if mode in ("time_slicing", "mps"):
        if ded.replicas > 1:  # a tenant already needs several GPUs: nothing to share
            return SharingPlan(mode, g.name, n, dedicated.gpus, dedicated.tenants_per_gpu, dedicated.p99_ms, "",
                               ded.replicas, _isolation_for(mode))
        kmax = max(1, min(n, int(hbm // mem)))
        if mode == "mps":
            kmax = min(kmax, MPS_MAX_CLIENTS)
        k = np.arange(1, kmax + 1)
        if mode == "time_slicing":
            ok = k * lam * s / 1e3 < 1.0
            p = np.full(k.shape, np.inf)
            p[ok] = inference.p99_latency_ms(k[ok] * lam, 1, s)
        else:
            sk = s * np.maximum(1.0, fill * k)
            ok = lam * sk / 1e3 < 1.0
            p = np.full(k.shape, np.inf)
            if ok.any():
                p[ok] = inference.p99_latency_ms(lam, 1, sk[ok])
        good = np.nonzero(p <= target * (1 + 1e-12))[0]
        kbest = int(k[good[-1]]) if good.size else 1
        pk = float(p[kbest - 1]) if good.size else ded.p99_ms
        gpus = math.ceil(n / kbest)
        return SharingPlan(mode, g.name, n, gpus, float(kbest), pk, "", 1, _isolation_for(mode))
    # MIG: the profile that needs the fewest GPUs; MIG off when whole GPUs need fewer
    best = SharingPlan("mig", g.name, n, dedicated.gpus, dedicated.tenants_per_gpu, dedicated.p99_ms, "MIG off",
                       ded.replicas, _isolation_for("dedicated"))
    for prof in reversed(mig_profiles(gpu)):
        if prof.memory_gb < mem:
            continue
        s_p = float(shared_service_ms(s, prof.sm / g.sm_full, fill))
        if s_p > target:
            continue
        plan = inference.gpus_for_slo(lam, target, s_p)
        per_gpu = max_instances_per_gpu(gpu, prof.name)
        gpus = math.ceil(n * plan.replicas / per_gpu)
        if gpus <= best.gpus:
            best = SharingPlan("mig", g.name, n, gpus, per_gpu / plan.replicas, plan.p99_ms, prof.name, plan.replicas,
                               _isolation_for("mig"))
    return best


def compare_sharing(n_tenants, qps, service_ms, memory_gb, p99_ms, *, gpu: str = "H100-80GB",
                    gpu_fill=1.0) -> dict[str, SharingPlan]:
    """``plan_sharing`` for every mode: {mode: plan}."""
    return {m: plan_sharing(n_tenants, qps, service_ms, memory_gb, p99_ms, m, gpu=gpu, gpu_fill=gpu_fill) for m in MODES}


def gpus_saved(n_tenants, qps, service_ms, memory_gb, p99_ms, mode: str = "mig", *, gpu: str = "H100-80GB",
               gpu_fill=1.0) -> int:
    """GPUs saved by ``mode`` against dedicating whole GPUs to every tenant (>= 0)."""
    ded = plan_sharing(n_tenants, qps, service_ms, memory_gb, p99_ms, "dedicated", gpu=gpu, gpu_fill=gpu_fill)
    other = plan_sharing(n_tenants, qps, service_ms, memory_gb, p99_ms, mode, gpu=gpu, gpu_fill=gpu_fill)
    return ded.gpus - other.gpus


# -- heterogeneous services ---------------------------------------------------------------------
@dataclass(frozen=True)
class Service:
    """One inference service (tenant): load, service time on a whole GPU, memory, P99 target."""

    name: str
    qps: float
    service_ms: float
    memory_gb: float
    p99_ms: float
    gpu_fill: float = 1.0


@dataclass(frozen=True)
class Packing:
    mode: str
    gpu: str
    gpus: int
    assignment: tuple[tuple[str, ...], ...]     # per GPU: the services (or 'service:profile' for MIG)
    p99_ms: dict                                # service -> modelled P99 (worst replica)

    def meets(self, services) -> bool:
        return all(self.p99_ms[sv.name] <= sv.p99_ms * (1 + 1e-9) for sv in services)


def _services(services) -> list[Service]:
    out = []
    for sv in services:
        if not isinstance(sv, Service):
            raise ValueError(f"services must be Service objects; got {sv!r}")
        _check_tenant(sv.qps, sv.service_ms, sv.memory_gb, sv.p99_ms, sv.gpu_fill)
        out.append(sv)
    if not out:
        raise ValueError("services must not be empty")
    if len({sv.name for sv in out}) != len(out):
        raise ValueError("service names must be unique")
    return out


def pack_services(services, mode: str = "mig", *, gpu: str = "H100-80GB") -> Packing:
    """Pack heterogeneous services onto GPUs, first-fit decreasing by load (a heuristic, not optimal).

    ``dedicated``: whole GPUs per service (``gpus_for_slo``). ``time_slicing`` / ``mps``: a
    service joins the first GPU where memory fits and every co-tenant (itself included) still
    meets its P99 (MPS: equal SM shares, <= 48 clients); a service that needs more than one GPU
    alone keeps whole GPUs. ``mig``: each service takes the smallest profile (fewest compute
    slices) meeting its P99 with one instance (several instances, or whole GPUs, if none does);
    instances go first-fit onto GPUs whose layout ``mig_layout`` accepts.
    """
    svs = _services(services)
    validate.choice("mode", mode, MODES)
    g = mig_gpu(gpu)
    hbm = _gpu_memory_gb(g)
    for sv in svs:
        if sv.memory_gb > hbm:
            raise ValueError(f"service {sv.name!r}: memory_gb={sv.memory_gb:g} exceeds one GPU's {hbm:g} GB")
    order = sorted(svs, key=lambda sv: -sv.qps * sv.service_ms)
    ded = {sv.name: inference.gpus_for_slo(sv.qps, sv.p99_ms, sv.service_ms) for sv in svs}
    bins: list[list] = []
    p99: dict[str, float] = {}

    def dedicated(sv):
        plan = ded[sv.name]
        for _ in range(plan.gpus):
            bins.append([sv.name])
        p99[sv.name] = plan.p99_ms

    if mode == "dedicated":
        for sv in order:
            dedicated(sv)
    elif mode in ("time_slicing", "mps"):
        shared: list[list[Service]] = []
        for sv in order:
            if ded[sv.name].replicas > 1:
                dedicated(sv)
                continue
            for b in shared + [[]]:
                cand = b + [sv]
                if sum(x.memory_gb for x in cand) > hbm or (mode == "mps" and len(cand) > MPS_MAX_CLIENTS):
                    continue
                res = _bin_p99(cand, mode)
                if res is not None and all(res[x.name] <= x.p99_ms * (1 + 1e-9) for x in cand):
                    if not b:
                        shared.append(cand)
                    else:
                        b.append(sv)
                    break
            else:  # pragma: no cover - an empty GPU always accepts a service that fits alone
                raise AssertionError("unreachable")
        for b in shared:
            p99.update(_bin_p99(b, mode))
            bins.append([x.name for x in b])
    else:
        layouts: list[list[str]] = []
        for sv in order:
            choice = None
            for prof in mig_profiles(gpu):
                if prof.memory_gb < sv.memory_gb:
                    continue
                s_p = float(shared_service_ms(sv.service_ms, prof.sm / g.sm_full, sv.gpu_fill))
                if s_p > sv.p99_ms:
                    continue
                plan = inference.gpus_for_slo(sv.qps, sv.p99_ms, s_p)
                if plan.replicas == 1:
                    choice = (prof, plan)
                    break
                if choice is None or plan.replicas * prof.compute_slices < choice[1].replicas * choice[0].compute_slices:
                    choice = (prof, plan)
            if choice is None:
                dedicated(sv)
                continue
            prof, plan = choice
            for _ in range(plan.replicas):
                for lay in layouts:
                    if mig_fits(gpu, [x.split(":")[1] for x in lay] + [prof.name]):
                        lay.append(f"{sv.name}:{prof.name}")
                        break
                else:
                    layouts.append([f"{sv.name}:{prof.name}"])
            p99[sv.name] = plan.p99_ms
        bins.extend(layouts)
    return Packing(mode, g.name, len(bins), tuple(tuple(b) for b in bins), {sv.name: p99[sv.name] for sv in svs})


def _bin_p99(cand: list[Service], mode: str) -> dict | None:
    """Per-service P99 on one shared GPU, or None when the GPU would be saturated."""
    if mode == "time_slicing":
        lam = np.array([x.qps for x in cand])
        s = np.array([x.service_ms for x in cand])
        if (lam * s).sum() / 1e3 >= 1.0:
            return None
        return dict(zip((x.name for x in cand), map(float, time_sliced_p99_ms(lam, s))))
    k = len(cand)
    out = {}
    for x in cand:
        sk = x.service_ms * max(1.0, x.gpu_fill * k)
        if x.qps * sk / 1e3 >= 1.0:
            return None
        out[x.name] = float(inference.p99_latency_ms(x.qps, 1, sk))
    return out


# -- isolation matrix ---------------------------------------------------------------------------
def isolation_matrix() -> list[dict]:
    """Rows {mechanism, layer, memory, faults, performance, network, note, source}."""
    return [dict(r) for r in _data()["isolation"]]


def isolation(mechanism: str) -> dict:
    for r in _data()["isolation"]:
        if r["mechanism"].lower() == str(mechanism).lower():
            return dict(r)
    raise validate.unknown_name("isolation mechanism", str(mechanism), [r["mechanism"] for r in _data()["isolation"]])


def not_isolated_by(mechanism: str) -> list[str]:
    """Aspects (memory, faults, performance, network) that ``mechanism`` leaves shared ('none')."""
    row = isolation(mechanism)
    return [a for a in ISOLATION_ASPECTS if row[a] == "none"]


# -- parsers ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LgipRow:
    """One profile of ``nvidia-smi mig -lgip``."""

    gpu: int
    name: str
    id: int
    free: int
    total: int
    memory_gib: float
    p2p: bool
    sm: int
    dec: int
    enc: int
    ce: int | None = None
    jpeg: int | None = None
    ofa: int | None = None


_LGIP_ROW = re.compile(r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)/(\d+)\s+([\d.]+)\s+(Yes|No)\s+(\d+)\s+(\d+)\s+(\d+)\s*\|$")
_LGIP_CONT = re.compile(r"^\|\s+(\d+)\s+(\d+)\s+(\d+)\s*\|$")


def parse_mig_lgip(text) -> list[LgipRow]:
    """Parse ``nvidia-smi mig -lgip`` (format: MIG User Guide, "List GPU Instance Profiles").

    Each profile is a row ``| GPU  MIG <name>  ID  Free/Total  Memory-GiB  P2P  SM  DEC  ENC |``,
    optionally followed by a ``| CE JPEG OFA |`` line (newer drivers). Raises ParseError on text
    without the header or without any profile row.
    """
    text = require_text(text, "nvidia-smi mig -lgip")
    if "GPU instance profiles" not in text:
        raise ParseError("nvidia-smi mig -lgip: no 'GPU instance profiles:' header; is this -lgip output?")
    rows: list[LgipRow] = []
    for raw in text.split("\n"):
        line = raw.strip()
        m = _LGIP_ROW.match(line)
        if m:
            rows.append(LgipRow(int(m[1]), m[2], int(m[3]), int(m[4]), int(m[5]), float(m[6]), m[7] == "Yes",
                                int(m[8]), int(m[9]), int(m[10])))
            continue
        c = _LGIP_CONT.match(line)
        if c and rows and rows[-1].ce is None:
            r = rows[-1]
            rows[-1] = LgipRow(r.gpu, r.name, r.id, r.free, r.total, r.memory_gib, r.p2p, r.sm, r.dec, r.enc,
                               int(c[1]), int(c[2]), int(c[3]))
    if not rows:
        raise ParseError("nvidia-smi mig -lgip: header found but no profile rows ('| 0  MIG 1g.10gb  19  7/7 ...')")
    for r in rows:
        if r.free > r.total:
            raise ParseError(f"nvidia-smi mig -lgip: profile {r.name} shows {r.free}/{r.total} free/total instances")
    return rows


@dataclass(frozen=True)
class SmiDevice:
    """A line of ``nvidia-smi -L``: a GPU, or a MIG device under the GPU listed before it."""

    gpu: int
    name: str
    uuid: str
    mig_device: int | None = None   # MIG device index under its GPU (None for the GPU itself)
    profile: str = ""


_L_GPU = re.compile(r"^GPU\s+(\d+):\s+(.+?)\s+\(UUID:\s*(GPU-[0-9a-fA-F-]+)\)\s*$")
_L_MIG = re.compile(r"^MIG\s+(\S+)\s+Device\s+(\d+):\s+\(UUID:\s*(MIG-[0-9a-zA-Z/-]+)\)\s*$")


def parse_nvidia_smi_list(text) -> list[SmiDevice]:
    """Parse ``nvidia-smi -L``: GPUs and their MIG devices (``MIG 3g.40gb Device 0: (UUID: MIG-...)``).

    The MIG UUIDs are what ``CUDA_VISIBLE_DEVICES`` takes to pin a process to one instance
    (MIG User Guide, "CUDA Device Enumeration"). Raises ParseError on other text.
    """
    text = require_text(text, "nvidia-smi -L")
    out: list[SmiDevice] = []
    for raw in text.split("\n"):
        line = raw.strip()
        if not line:
            continue
        m = _L_GPU.match(line)
        if m:
            out.append(SmiDevice(int(m[1]), m[2], m[3]))
            continue
        k = _L_MIG.match(line)
        if k and out:
            out.append(SmiDevice(out[-1].gpu if out[-1].mig_device is None else out[-1].gpu, out[-1].name, k[3],
                                 int(k[2]), k[1]))
            continue
        raise ParseError(f"nvidia-smi -L: unrecognised line {line[:80]!r}")
    if not any(d.mig_device is None for d in out):
        raise ParseError("nvidia-smi -L: no 'GPU n: <name> (UUID: GPU-...)' line")
    return out


#: ``nvidia-smi mig -lgip`` on an H100 80GB HBM3 with MIG enabled and no instances yet: the table
#: format of the MIG User Guide's "List GPU Instance Profiles" example, values as the tool prints
#: them on that part (the same values as ``mig_profiles.toml``).
SAMPLE_LGIP_H100 = """\
+-----------------------------------------------------------------------------+
| GPU instance profiles:                                                      |
| GPU   Name             ID    Instances   Memory     P2P    SM    DEC   ENC  |
|                              Free/Total   GiB              CE    JPEG  OFA  |
|=============================================================================|
|   0  MIG 1g.10gb       19     7/7        9.75       No     16     1     0   |
|                                                             1     1     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 1g.10gb+me    20     1/1        9.75       No     16     1     0   |
|                                                             1     1     1   |
+-----------------------------------------------------------------------------+
|   0  MIG 1g.20gb       15     4/4        19.62      No     26     1     0   |
|                                                             1     1     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 2g.20gb       14     3/3        19.62      No     32     2     0   |
|                                                             2     2     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 3g.40gb        9     2/2        39.50      No     60     3     0   |
|                                                             3     3     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 4g.40gb        5     1/1        39.50      No     64     4     0   |
|                                                             4     4     0   |
+-----------------------------------------------------------------------------+
|   0  MIG 7g.80gb        0     1/1        79.25      No     132    7     0   |
|                                                             8     7     1   |
+-----------------------------------------------------------------------------+
"""

#: ``nvidia-smi -L`` after ``nvidia-smi mig -cgi 9,9 -C`` on GPU 0 (format of the MIG User Guide's
#: "CUDA Device Enumeration" example; the UUIDs are made up for illustration).
SAMPLE_SMI_L = """\
GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f)
  MIG 3g.40gb     Device  0: (UUID: MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f)
  MIG 3g.40gb     Device  1: (UUID: MIG-cba663e8-9bed-5b25-b243-5985ef7c9beb)
GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-0f2bd2d4-7c0a-2d4e-9d3e-6b1e2ad4c8a1)
"""
