"""Block recognisers: find a tool's output inside a fragment and judge it.

Each recogniser looks for the tool's header or key lines, hands the block to the tool's parser in
:mod:`labutil.parsers` / :mod:`labutil.fioparse`, then to the rules of :mod:`labutil.health`
(ibstat, ibv_devinfo, perfquery pairs, nccl-tests, the ``NCCL_DEBUG=INFO`` transport, nvidia-smi
table / ``-q`` / csv throttle reasons, dcgmi diag, lfs df, lfs check servers, fio, IOR, mdtest, show_gids,
mounts, nfsstat, per-rank step timings, py-spy dumps, checkpoint logs, perftest, ``ethtool -S``,
kernel link events, lsmod, NCCL interfaces). A recogniser returns ``(kind label, [Signal, ...])``
or None when the fragment holds no such block. :data:`BLOCK_KINDS` lists them in the order they run.
"""

from __future__ import annotations

import re

import numpy as np

from ... import fioparse, health, hardware, inference, links, models, topology
from ... import parsers as P
from ...parsers.nccl_tests import looks_like_nccl_tests_json
from ...parsers.nvidia_smi import looks_like_nvidia_smi_xml
from ..engine import straggler_slowdown
from .signals import Signal, _findings_to_signals, _quote, _try, lines_containing

__all__ = ["BLOCK_KINDS", "catalog_model", "catalog_gpu", "perfquery_pairs", "gid_check", "kv_budget"]

def _ibstat(text, src, ctx):
    if "CA '" not in text or "State:" not in text:
        return None
    cas = _try(P.parse_ibstat, text, ctx, "ibstat")
    if not cas:
        return None
    spec = ctx["spec"]
    if spec is None:  # no cluster / spec: judge each port against its siblings (no fixed 400 Gb/s)
        rates = [p.rate_gbps for ca in cas for p in ca.ports if p.rate_gbps and (p.state or "").lower() == "active"]
        spec = health.AcceptanceSpec(ib_rate_gbps=max(rates) if rates else 1.0, ib_width=None)
    f = health.check_ibstat(cas, spec)
    n = sum(len(ca.ports) for ca in cas)
    rate = {p.rate_gbps for ca in cas for p in ca.ports}
    return "ibstat", _findings_to_signals(
        f, "network", "ib_ports", src, "ib_ports",
        quote_fn=lambda x: f"{x.component}: {x.check} {x.value} (expected {x.expected})",
        healthy_weight=0.45, healthy_msg=f"{n} port(s) Active / LinkUp at {', '.join(f'{r:g}' for r in rate if r)} Gb/s",
        fallback_line=f"ibstat: {n} port(s) State: Active, Physical state: LinkUp")


def _ibv_devinfo(text, src, ctx):
    if "hca_id:" not in text:
        return None
    devs = _try(P.parse_ibv_devinfo, text, ctx, "ibv_devinfo")
    if not devs:
        return None
    spec = ctx["spec"]
    if spec is None:
        rates = [p.rate_gbps for d in devs for p in d.ports if p.rate_gbps and p.state == "PORT_ACTIVE"]
        spec = health.AcceptanceSpec(ib_rate_gbps=max(rates) if rates else 1.0, ib_width=None)
    f = health.check_ibv_devinfo(devs, spec)
    sig = _findings_to_signals(f, "network", "ib_ports", src, "ib_ports", healthy_weight=0.45,
                               healthy_msg="all ports PORT_ACTIVE / LINK_UP",
                               fallback_line="ibv_devinfo: state: PORT_ACTIVE (4)")
    roce = [p for d in devs for p in d.ports if (p.link_layer or "").lower() == "ethernet"]
    if roce and ctx.get("gid_index") is None:
        sig.append(Signal("network", "roce", "info", 0.0, _quote(f"link_layer: Ethernet ({len(roce)} port(s))"),
                          "RoCE ports: NCCL needs the RoCE v2 GID of the routable IP (NCCL_IB_GID_INDEX, see "
                          "show_gids) and a lossless or ECN-marked fabric", src, "roce_gid"))
    return "ibv_devinfo", sig


_PQ_BLOCK = re.compile(r"#\s*Port (?:extended )?counters:\s*Lid\s+\d+\s+port\s+\d+", re.I)


def _perfquery(text, src, ctx):
    starts = [m.start() for m in _PQ_BLOCK.finditer(text)]
    if not starts:
        if "SymbolErrorCounter" not in text:
            return None
        starts = [0]
    blocks = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    parsed = [q for q in (_try(P.parse_perfquery, b) for b in blocks) if q is not None]
    if not parsed:
        return None
    ctx["perfquery"].extend((q, src) for q in parsed)
    return "perfquery", []


def _perfquery_pairs(ctx) -> list[Signal]:
    by_port: dict = {}
    for q, src in ctx["perfquery"]:
        by_port.setdefault((q.lid, q.port), []).append((q, src))
    out = []
    for (lid, port), qs in by_port.items():
        if len(qs) < 2:
            continue
        (b, src), (a, _) = qs[0], qs[-1]
        f = health.check_perfquery(b, a, ctx["spec"] or health.AcceptanceSpec())
        out += _findings_to_signals(f, "network", "ib_counters", src, "ib_counters", healthy_weight=0.3,
                                    healthy_msg=f"lid {lid} port {port}: no error counter rose between samples",
                                    fallback_line=f"perfquery lid {lid} port {port}: error counters unchanged",
                                    quote_fn=lambda x: f"{x.component}: {x.check} +{x.value} between samples")
    return out


def _nccl_tests(text, src, ctx):
    if ("busbw" not in text or "algbw" not in text) and not looks_like_nccl_tests_json(text):
        return None
    r = _try(P.parse_nccl_tests, text, ctx, "nccl-tests")
    if r is None:
        return None
    cluster, spec = ctx["cluster"], ctx["spec"] or health.AcceptanceSpec()
    exp = None
    if cluster is not None:
        try:
            exp = health.cluster_expected_busbw_gbs(cluster, r)
        except (ValueError, KeyError, TypeError):
            exp = None
    elif ctx.get("expected_busbw_gbs"):
        exp = ctx["expected_busbw_gbs"]
    if r.independent_runs:
        return "nccl-tests", [Signal("software", "nccl_tests_no_mpi", "fail", 0.7, _quote(
            f"{len(r.devices)} device lines, ranks {sorted({d.rank for d in r.devices})}; Avg bus bandwidth : "
            f"{r.avg_busbw_gbs}"), "every process printed its own device list as rank 0: nccl-tests was built "
            "without MPI (make MPI=1) and each process ran a one-rank test (busbw 0 by definition); the "
            "fabric was not tested (NVIDIA/nccl-tests #107)", src, "nccl_tests_build")]
    if r.single_rank:
        return "nccl-tests", [Signal("network", "nccl_busbw", "info", 0.0, _quote(
            f"# Avg bus bandwidth : {r.avg_busbw_gbs}"), "single-rank run: busbw is 0 by definition (2(n-1)/n = 0); "
            "it tests no link", src, "nccl_busbw")]
    if exp is None:
        return "nccl-tests", [Signal("network", "nccl_busbw", "info", 0.0, _quote(
            f"peak busbw {r.peak_busbw_gbs:.1f} GB/s over {r.n_ranks or '?'} ranks"), "no expected busbw to compare "
            "with: pass cluster= (labutil.cluster.Cluster) or an acceptance spec", src, "nccl_busbw")]
    f = health.check_nccl_tests(r, exp, spec)
    ctx["quant"]["busbw_measured_gbs"] = r.peak_busbw_gbs
    ctx["quant"]["busbw_expected_gbs"] = exp
    return "nccl-tests", _findings_to_signals(
        f, "network", "nccl_busbw", src, "nccl_busbw", healthy_weight=0.5,
        healthy_msg=f"peak busbw {r.peak_busbw_gbs:.1f} GB/s >= {spec.busbw_pass_fraction:.0%} of {exp:.1f} GB/s",
        fallback_line=f"peak busbw {r.peak_busbw_gbs:.1f} GB/s of expected {exp:.1f} GB/s",
        quote_fn=lambda x: f"peak busbw {x.value} GB/s, expected {x.expected} GB/s ({x.message.split(':')[0]})")


def _nccl_log(text, src, ctx):
    if " NCCL INFO " not in text and " NCCL WARN " not in text:
        return None
    lg = _try(P.parse_nccl_debug_log, text)
    if lg is None:
        return None
    gid = lg.env.get("NCCL_IB_GID_INDEX")
    if gid is not None and gid.strip().isdigit():
        ctx["gid_index"] = int(gid.strip())
    out = []
    spec = ctx["spec"] or health.AcceptanceSpec()
    if spec.expect_network and lg.network and lg.network.lower() != spec.expect_network.lower():
        w = 0.8 if ctx["cluster"] is not None else 0.6
        out.append(Signal("network", "nccl_transport", "fail" if w >= 0.8 else "warn", w,
                          f"NCCL INFO Using network {lg.network}", "NCCL runs inter-node traffic over TCP sockets "
                          "instead of RDMA (no IB/RoCE device visible to the job)", src, "nccl_transport"))
    net = [c for c in lg.connections if c.transport == "NET"]
    if net and spec.expect_gdr and not any(c.gdr for c in net) and (lg.network or "").lower() == "ib":
        out.append(Signal("software", "gdr_disabled", "warn", 0.35, _quote(f"Channel ... via {net[0].via}"),
                          "no NET connection uses GPUDirect RDMA (GDRDMA): data is staged through host memory "
                          "(nvidia-peermem not loaded, or NCCL judged the GPU-NIC path too far: NVIDIA/nccl #465)",
                          src, "gdr_module"))
    if not out and (lg.network or "").lower() == "ib" and lg.ranks:
        out.append(Signal("network", "nccl_transport", "pass", 0.3, f"NCCL INFO Using network IB ({len(lg.ranks)} "
                          "ranks Init COMPLETE)", "NCCL initialised over RDMA", src, "nccl_transport"))
    return "NCCL_DEBUG=INFO log", out


_SHOW_GIDS = re.compile(r"^[ \t]*(\S+)[ \t]+(\d+)[ \t]+(\d+)[ \t]+([0-9a-fA-F:]{20,})[ \t]+(?:(\d+\.\d+\.\d+\.\d+)[ \t]+)?(v[12])[ \t]+(\S+)",
                        re.M)
_IBV_GID = re.compile(r"GID\[\s*(\d+)\]:\s*(\S+?),?\s+RoCE\s*(v[12])", re.I)


def _show_gids(text, src, ctx):
    if "v2" not in text and "v1" not in text:
        return None
    rows = [(m.group(1), int(m.group(3)), m.group(4), m.group(5), m.group(6)) for m in _SHOW_GIDS.finditer(text)]
    if not rows:
        rows = [("?", int(m.group(1)), m.group(2), None if m.group(2).lower().startswith("fe80") else m.group(2),
                 m.group(3).lower()) for m in _IBV_GID.finditer(text)]
    if not rows:
        return None
    ctx["gids"] = rows
    return "show_gids", []


def _gid_check(ctx) -> list[Signal]:
    rows, idx = ctx.get("gids"), ctx.get("gid_index")
    if not rows:
        return []
    good = sorted({r[1] for r in rows if r[3] and r[4] == "v2"})
    src = "show_gids"
    if idx is None:
        if not good:
            return [Signal("network", "roce_gid", "fail", 0.7, _quote(f"{rows[0][0]} GIDs: no RoCE v2 entry with an IPv4 "
                           "address"), "no routable RoCE v2 GID: the RoCE interface has no IP address", src, "roce_gid")]
        return [Signal("network", "roce_gid", "info", 0.0, _quote(f"RoCE v2 GID index with IPv4: {good}"),
                       f"set NCCL_IB_GID_INDEX={good[0]} on every node if NCCL picks another one", src, "roce_gid")]
    chosen = [r for r in rows if r[1] == idx]
    if not chosen or all(not (r[3] and r[4] == "v2") for r in chosen):
        what = "does not exist" if not chosen else f"is {chosen[0][4]} {'link-local' if not chosen[0][3] else ''}".strip()
        return [Signal("network", "roce_gid", "fail", 0.85, _quote(f"NCCL_IB_GID_INDEX={idx}; show_gids: index {idx} {what}"),
                       f"NCCL uses GID index {idx}, which is not a routable RoCE v2 GID; the routable ones are {good}: "
                       "QPs time out (completion error 12)", src, "roce_gid")]
    return [Signal("network", "roce_gid", "pass", 0.3, f"NCCL_IB_GID_INDEX={idx} is RoCE v2 with an IP",
                   "GID index matches a routable RoCE v2 GID", src, "roce_gid")]


def _nvidia_smi_table(text, src, ctx):
    if "NVIDIA-SMI" not in text and "No devices were found" not in text and "NVIDIA-SMI has failed" not in text:
        return None
    if "Driver Version" not in text and "NVIDIA-SMI has failed" not in text and "No devices were found" not in text:
        return None
    t = _try(P.parse_nvidia_smi, text, ctx, "nvidia-smi")
    if t is None:
        return None
    ctx["nvsmi_tables"].append(t)
    spec = ctx["spec"] or health.AcceptanceSpec()
    f = health.check_nvidia_smi(t, spec)
    sig = _findings_to_signals(f, "gpu", "gpu_state", src, "gpu_state", healthy_weight=0.35,
                               healthy_msg=f"{len(t.gpus)} GPU(s) readable, no volatile uncorrectable ECC",
                               fallback_line=f"nvidia-smi: {len(t.gpus)} GPUs, Volatile Uncorr. ECC 0",
                               quote_fn=lambda x: f"{x.component}: {x.check} ({x.value})", fail_weight=0.85)
    busy = [g for g in t.gpus if g.utilization_pct is not None]
    if len(busy) >= 2:
        idle = [g.index for g in busy if g.utilization_pct == 0]
        if idle and any(g.utilization_pct >= 90 for g in busy):
            sig.append(Signal("software", "gpu_idle_rank", "warn", 0.4, _quote(f"GPU-Util 0% on GPU {idle}, >= 90% on others"),
                              "the other GPUs spin inside an NCCL kernel waiting; the idle GPU's rank is not in the "
                              "collective (py-spy dump that rank)", src, "pyspy", direct=False))
    for k, v in (("driver", t.driver_version), ("CUDA", t.cuda_version)):
        if v:
            ctx["versions"].append((k, v, src))
    return "nvidia-smi", sig


# Sections of `nvidia-smi -q -d ...` that threads paste on their own, without the "GPU 0000..." header
# (gpud #80 pastes only "Remapped Rows"; open_clip #703 only "Clocks Event Reasons").
_NVQ_SECTION = re.compile(r"^[ \t]*(?:Remapped Rows|Clocks (?:Throttle|Event) Reasons|Retired Pages|ECC Errors)[ \t]*\r?$", re.M)
_NVQ_NO_BUS = "00000000:00:00.0"


def _nvidia_smi_q(text, src, ctx):
    excerpt = False
    if "==============NVSMI LOG==============" not in text and not re.search(r"^GPU [0-9A-Fa-f]{4,8}:", text, re.M) \
            and not looks_like_nvidia_smi_xml(text):
        m = _NVQ_SECTION.search(text)
        if not m:
            return None
        body = text[m.start():]
        if not body[:1].isspace():
            body = "\n".join("    " + ln for ln in body.split("\n"))
        text, excerpt = f"GPU {_NVQ_NO_BUS}\n" + body, True
    q = _try(P.parse_nvidia_smi_q, text, ctx, "nvidia-smi -q")
    if q is None:
        return None
    if excerpt:
        q.gpus[0].bus_id = "(bus id not in the excerpt)"
    f = health.check_nvidia_smi_q(q, ctx["spec"] or health.AcceptanceSpec())
    if q.driver_version:
        ctx["versions"].append(("driver", q.driver_version, src))
    return "nvidia-smi -q", _findings_to_signals(
        f, "gpu", "gpu_state", src, "gpu_state", healthy_weight=0.5,
        healthy_msg=f"{len(q.gpus)} GPU(s): no pending remap, no uncorrectable ECC, no thermal throttle",
        fallback_line=f"nvidia-smi -q: {len(q.gpus)} GPUs healthy",
        quote_fn=lambda x: f"{x.component}: {x.check} = {x.value}")


_THROTTLE_FIELD = re.compile(r"clocks_(?:throttle|event)_reasons\.(\w+)")


def _nvidia_smi_csv(text, src, ctx):
    if not _THROTTLE_FIELD.search(text) and "temperature.gpu" not in text:
        return None
    c = _try(P.parse_nvidia_smi_csv, text)
    if c is None:
        return None
    out = []
    for i, row in enumerate(c.rows):
        active = [k.split(".")[-1] for k, v in row.items() if _THROTTLE_FIELD.search(k) and isinstance(v, str)
                  and v.lower() == "active" and not k.endswith(("gpu_idle", "applications_clocks_setting",
                                                                 "sw_power_cap", "sync_boost", "active"))]
        if active:
            thermal = any("thermal" in a or "power_brake" in a for a in active)
            out.append(Signal("gpu", "throttle", "fail" if thermal else "warn", 0.75 if thermal else 0.45,
                              _quote(f"GPU {row.get('index', i)}: " + ", ".join(f"{a}: Active" for a in active)),
                              f"clocks slowed by {', '.join(active)}: this GPU's rank is a straggler", src, "gpu_thermal"))
    if not out:
        out.append(Signal("gpu", "throttle", "pass", 0.3, f"{len(c.rows)} GPU(s): no thermal/power-brake reason active",
                          "clocks not throttled", src, "gpu_thermal"))
    return "nvidia-smi --query-gpu csv", out


def _dcgmi(text, src, ctx):
    if not ("Diagnostic" in text and "|" in text) and '"test_categories"' not in text:
        return None
    d = _try(P.parse_dcgmi_diag, text, ctx, "dcgmi diag")
    if d is None:
        return None
    f = health.check_dcgmi_diag(d)
    ran = [t for t in d.tests if t.status != "Skip"]
    if not ran:  # every test skipped (NVIDIA/DCGM #55, #139): no evidence about the GPUs either way
        return "dcgmi diag", [Signal("gpu", "gpu_diag", "info", 0.0, _quote(f"dcgmi diag: all {len(d.tests)} tests Skip"),
                                     "every diagnostic was skipped (DCGM not allowed to run them on this SKU / "
                                     "is_allowed, or the GPUs were busy): it proves nothing about the GPUs", src,
                                     "gpu_diag")]
    return "dcgmi diag", _findings_to_signals(f, "gpu", "gpu_diag", src, "gpu_diag", healthy_weight=0.6 * len(ran) / len(d.tests),
                                              healthy_msg=f"dcgmi diag: {len(ran)} tests ran and passed "
                                                          f"({len(d.tests) - len(ran)} skipped)",
                                              fallback_line="dcgmi diag: all Pass", fail_weight=0.9,
                                              quote_fn=lambda x: f"| {x.check} | Fail | {x.message[:120]}")


def _lfs_df(text, src, ctx):
    if "UUID" not in text or "OST" not in text:
        return None
    df = _try(fioparse.parse_lfs_df, text, ctx, "lfs df")
    if df is None:
        return None
    out = []
    for t in df.osts:
        if t.use_pct >= 95:  # course policy: >= 95 % full -> ENOSPC on stripes that land there
            out.append(Signal("storage", "ost_fill", "fail", 0.7, _quote(f"{t.uuid} {t.use_pct:.0f}%"),
                              f"{t.uuid} is {t.use_pct:.0f}% full: writes striped onto it fail with ENOSPC",
                              src, "storage_capacity"))
        elif t.use_pct >= 90:  # >= 90 %: new stripes slow / rebalance (course policy, ch16)
            out.append(Signal("storage", "ost_fill", "warn", 0.35, _quote(f"{t.uuid} {t.use_pct:.0f}%"),
                              f"{t.uuid} is {t.use_pct:.0f}% full (rebalance with lfs_migrate)", src, "storage_capacity"))
    ctx["quant"]["ost_imbalance_pct"] = df.ost_imbalance
    if not out:
        out.append(Signal("storage", "ost_fill", "pass", 0.3, f"lfs df: {len(df.osts)} OSTs below 90%",
                          "no OST is full", src, "storage_capacity"))
    return "lfs df", out


_LFS_CHECK = re.compile(r"^(\S+-(?:OST|MDT)[0-9a-fA-F]{4}\S*?)[ \t]*(?::[ \t]*)?(active|check error.*|inactive|"
                        r".*Resource temporarily unavailable.*)\.?[ \t]*$", re.M)


def _lfs_check(text, src, ctx):
    if "-OST" not in text and "-MDT" not in text:
        return None
    rows = _LFS_CHECK.findall(text)
    if not rows:
        return None
    bad = [(t, s) for t, s in rows if s != "active"]
    if bad:
        return "lfs check servers", [Signal("storage", "lustre_targets", "fail", 0.85, _quote(f"{t}: {s}"),
                                            f"Lustre target {t} is not reachable from this client", src,
                                            "lustre_servers") for t, s in bad[:4]]
    return "lfs check servers", [Signal("storage", "lustre_targets", "pass", 0.35, f"{len(rows)} targets active",
                                        "all Lustre targets answer", src, "lustre_servers")]


def _fio(text, src, ctx):
    if not any(k in text for k in ("IOPS=", '"jobs"', "iops=", ";fio-", "READ: bw=", "aggrb=")):
        return None
    res = (_try(fioparse.parse_fio_summary, text) or _try(fioparse.parse_fio_json, text)
           or _try(fioparse.parse_fio_terse, text))
    if not res:
        return None
    pool = sum(x.read_gbs for x in res)
    need = (ctx["spec"].storage_read_gbs if ctx["spec"] is not None else None) or ctx.get("required_read_gbs")
    ctx["quant"]["pool_read_gbs"] = pool
    if need is None:
        return "fio", [Signal("storage", "read_bandwidth", "info", 0.0, _quote(f"fio read {pool:.2f} GB/s"),
                              "no required read bandwidth to compare with (give AcceptanceSpec(storage_read_gbs=...))",
                              src, "read_bandwidth")]
    if pool < need:
        return "fio", [Signal("storage", "read_bandwidth", "fail", 0.8, _quote(f"fio read {pool:.2f} GB/s < {need:.2f} GB/s"),
                              f"the pool delivers {pool:.2f} GB/s, the job needs {need:.2f} GB/s: the loader starves",
                              src, "read_bandwidth")]
    return "fio", [Signal("storage", "read_bandwidth", "pass", 0.4, _quote(f"fio read {pool:.2f} GB/s >= {need:.2f} GB/s"),
                          "the pool delivers the job's read bandwidth", src, "read_bandwidth")]


_IOR_CMD = re.compile(r"^Command line\s*:\s*(.*)$", re.M)


def _ior(text, src, ctx):
    """IOR (hpc/ior): the pool's aggregate write and read bandwidth, read judged like fio's.

    A read far above the write of the same run, without ``-C`` (reorder tasks) or ``-Z`` in the
    command line, is the classic IOR trap: each rank reads back what it just wrote from its own
    page cache (IOR's documentation on ``-C``: "changes task ordering for readback (useful to avoid
    client cache)"), so the number is the clients' memory, not the file system.
    """
    if "Max Write:" not in text and "Max Read:" not in text and "Summary of all tests:" not in text:
        return None
    r = _try(fioparse.parse_ior, text, ctx, "IOR")
    if r is None:
        return None
    write_gbs, read_gbs = r.max_write_gbs, r.max_read_gbs
    out = []
    if write_gbs:
        ctx["quant"]["ior_write_gbs"] = write_gbs
        out.append(Signal("storage", "write_bandwidth", "info", 0.0, _quote(f"IOR max write {write_gbs:.1f} GB/s"),
                          "aggregate write bandwidth of the pool (compare with checkpoint size / allowed stall)",
                          src, "checkpoint_timing"))
    cmd = _IOR_CMD.search(text)
    flags = cmd.group(1).split() if cmd else []
    if read_gbs and write_gbs and read_gbs > 1.5 * write_gbs and cmd and "-C" not in flags and "-Z" not in flags:
        out.append(Signal("storage", "read_bandwidth", "warn", 0.4,
                          _quote(f"IOR read {read_gbs:.1f} GB/s vs write {write_gbs:.1f} GB/s without -C"),
                          "the read-back ran on the rank that wrote the data: it may come from the client page "
                          "cache, not the file system (rerun with -C, or -e and a cache drop)", src, "read_bandwidth"))
        return "IOR", out
    if read_gbs:
        ctx["quant"]["pool_read_gbs"] = read_gbs
        need = (ctx["spec"].storage_read_gbs if ctx["spec"] is not None else None) or ctx.get("required_read_gbs")
        if need is None:
            out.append(Signal("storage", "read_bandwidth", "info", 0.0, _quote(f"IOR max read {read_gbs:.1f} GB/s"),
                              "no required read bandwidth to compare with (give AcceptanceSpec(storage_read_gbs=...))",
                              src, "read_bandwidth"))
        elif read_gbs < need:
            out.append(Signal("storage", "read_bandwidth", "fail", 0.8,
                              _quote(f"IOR read {read_gbs:.1f} GB/s < {need:.1f} GB/s"),
                              f"the pool delivers {read_gbs:.1f} GB/s, the job needs {need:.1f} GB/s: the loader starves",
                              src, "read_bandwidth"))
        else:
            out.append(Signal("storage", "read_bandwidth", "pass", 0.4,
                              _quote(f"IOR read {read_gbs:.1f} GB/s >= {need:.1f} GB/s"),
                              "the pool delivers the job's read bandwidth", src, "read_bandwidth"))
    return ("IOR", out) if out else None


def _mdtest(text, src, ctx):
    """mdtest's SUMMARY rate table: metadata rates reported (file creates/stats per second)."""
    if "SUMMARY rate" not in text:
        return None
    r = _try(fioparse.parse_mdtest, text, ctx, "mdtest")
    if r is None:
        return None
    parts = [f"{op.lower()} {r.rows[op][2]:,.0f}/s" for op in ("File creation", "File stat") if op in r.rows]
    for op in ("File creation", "File stat"):
        if op in r.rows:
            ctx["quant"]["mdtest_" + op.lower().replace(" ", "_") + "_per_s"] = r.rows[op][2]
    line = "mdtest: " + (", ".join(parts) if parts else f"{len(r.rows)} operations")
    return "mdtest", [Signal("storage", "metadata_rate", "info", 0.0, _quote(line),
                             "metadata rates of the file system (compare with files opened per second by the "
                             "loader and the checkpoint's files per save)", src, "metadata_rate")]


_FS_WORD = re.compile(r"[ \t](?:nfs4?|lustre|gpfs|beegfs|wekafs|fuse\.\S+|xfs|ext4)[ \t]")
_MOUNT = re.compile(r"^(\S+)[ \t]+on[ \t]+(\S+)[ \t]+type[ \t]+(nfs4?|lustre|gpfs|beegfs|fuse\.\S+|wekafs|xfs|ext4)[ \t]+"
                    r"\(([^)\n]*)\)|^(\S+)[ \t]+(\S+)[ \t]+(nfs4?|lustre|gpfs|beegfs|wekafs)[ \t]+(\S+)[ \t]+\d+[ \t]+\d+[ \t]*$",
                    re.M)


def _mounts(text, src, ctx):
    if not _FS_WORD.search(text):
        return None
    ms = list(_MOUNT.finditer(text))
    if not ms:
        return None
    out = []
    for m in ms:
        dev, path, fs, opts = (m.group(1), m.group(2), m.group(3), m.group(4)) if m.group(1) else \
            (m.group(5), m.group(6), m.group(7), m.group(8))
        o = {kv.split("=")[0]: (kv.split("=", 1)[1] if "=" in kv else True) for kv in opts.split(",")}
        line = _quote(f"{dev} on {path} type {fs} ({opts})", 160)
        if fs.startswith("nfs"):
            if "soft" in o:  # nfs(5): soft mounts return EIO after retrans timeouts ("silent data corruption")
                out.append(Signal("storage", "mount_options", "warn", 0.3, line, f"{path} is a soft NFS mount: a slow "
                                  "server turns into EIO errors in the job (nfs(5) warns of data corruption)", src,
                                  "storage_mount"))
            rs = o.get("rsize")
            if isinstance(rs, str) and rs.isdigit() and int(rs) < 262144:  # course policy: < 256 KiB reads
                out.append(Signal("storage", "mount_options", "warn", 0.2, line, f"{path}: rsize={rs} B, small reads "
                                  "per RPC cap the client's bandwidth", src, "storage_mount"))
    if not out:
        out.append(Signal("storage", "mount_options", "pass", 0.15, _quote(f"{len(ms)} mount(s), no risky option"),
                          "mount options look normal", src, "storage_mount"))
    return "mounts", out


_NFSSTAT = re.compile(r"calls[ \t]+retrans[ \t]+authrefrsh[ \t]*\n[ \t]*(\d+)[ \t]+(\d+)", re.I)


def _nfsstat(text, src, ctx):
    m = _NFSSTAT.search(text)
    if not m:
        return None
    calls, retrans = int(m.group(1)), int(m.group(2))
    frac = retrans / calls if calls else 0.0
    line = _quote(f"nfsstat -c: calls {calls} retrans {retrans} ({frac:.2%})")
    # course policy: retransmissions above 1 % of calls = the server or the path drops requests
    if frac >= 0.05:
        return "nfsstat", [Signal("storage", "nfs_retrans", "fail", 0.7, line, "NFS retransmits >= 5% of calls: the "
                                  "server is overloaded or the path drops packets", src, "nfs_server")]
    if frac >= 0.01:
        return "nfsstat", [Signal("storage", "nfs_retrans", "warn", 0.45, line, "NFS retransmits >= 1% of calls", src,
                                  "nfs_server")]
    return "nfsstat", [Signal("storage", "nfs_retrans", "pass", 0.3, line, "NFS client retransmits < 1%", src, "nfs_server")]


# "rank 3 ... step time: 1.23 s" (one line): the rank, then the first duration after it. Two searches
# per line instead of one ".*?" pattern (which is quadratic on a long line with many "rank" words).
_RANK_ID = re.compile(r"\brank[ \t]*(?:[:=#\[][ \t]*)?(\d+)\]?\b", re.I)
_STEP_DUR = re.compile(r"\b(?:step[_ ]?time|iter(?:ation)?[_ ]?time|time(?:/step)?|elapsed|step took)[ \t]*"
                       r"(?:[:=][ \t]*)?(\d+(?:\.\d+)?)[ \t]*(ms|s|sec)\b", re.I)
_TIMING_CSV = re.compile(r"^[ \t]*rank[ \t]*,[ \t]*(?:step[ \t]*,[ \t]*)?(step_time_s|step_time_ms|time_s|time_ms|compute_s)\b",
                         re.I | re.M)


def _timings(text, src, ctx):
    per: dict = {}
    for ln in lines_containing(text, "rank"):
        pos = 0
        while True:
            mr = _RANK_ID.search(ln, pos)
            if not mr:
                break
            md = _STEP_DUR.search(ln, mr.end())
            if not md:
                break              # no duration after this rank: none after any later one either
            v = float(md.group(1)) * (1e-3 if md.group(2).lower() == "ms" else 1.0)
            if v > 0:
                per.setdefault(int(mr.group(1)), []).append(v)
            pos = md.end()
    hm = _TIMING_CSV.search(text)
    if hm:
        scale = 1e-3 if hm.group(1).endswith("ms") else 1.0
        for ln in text[hm.end():].split("\n"):
            parts = [p.strip() for p in ln.split(",")]
            if len(parts) >= 2 and parts[0].isdigit():
                try:
                    v = float(parts[-1]) * scale
                except ValueError:
                    continue
                if v > 0:
                    per.setdefault(int(parts[0]), []).append(v)
    if len(per) < 3:
        return None
    med = {r: float(np.median(v)) for r, v in per.items()}
    overall = float(np.median(list(med.values())))
    slow = sorted((r for r, v in med.items() if v > 1.15 * overall), key=lambda r: -med[r])  # course policy: > 15 %
    if not slow:
        return "per-rank timings", [Signal("gpu", "straggler", "pass", 0.25, _quote(
            f"{len(per)} ranks, step times within 15% of the median {overall:.3f} s"), "no straggler rank", src, "straggler")]
    r = slow[0]
    s = straggler_slowdown(len(per), med[r] / overall, step_s=1.0)
    ctx["quant"]["straggler"] = {"rank": r, "slow_factor": med[r] / overall, "lost_gpu_equivalents": s["lost_gpu_per_hour"]}
    return "per-rank timings", [Signal("gpu", "straggler", "warn", 0.5, _quote(
        f"rank {r}: median step {med[r]:.3f} s vs {overall:.3f} s for the others ({med[r] / overall:.2f}x)"),
        f"rank(s) {slow[:4]} are slower than the rest and every step waits for them: {s['lost_gpu_per_hour']:.1f} of "
        f"{len(per)} GPUs' worth of work is lost. Check that node's GPU clocks/temperature, then its data loader",
        src, "straggler")]


_PYSPY_THREAD = re.compile(r"^Thread[ \t]+(?:0x[0-9A-Fa-f]+|\d+)[ \t]+\((active|idle|active\+gil|gil)\)", re.M)
_PYSPY_FRAME = re.compile(r"^[ \t]+(\S+)[ \t]+\(([^:()\n]+):(\d+)\)[ \t]*$", re.M)
_COLLECTIVE_FN = re.compile(r"^(?:all_reduce|allreduce|all_gather\w*|_all_gather_base|reduce_scatter\w*|_reduce_scatter_base|"
                            r"broadcast|barrier|monitored_barrier|all_to_all\w*|send|recv|irecv|isend|wait|synchronize|"
                            r"_wait_for_pending_works|gather|scatter)$")
_IO_FN = re.compile(r"^(?:read|readinto|readline|open|_io_open|load|np_load|torch_load|stat|listdir|scandir|getsize|"
                    r"_read\w*|read_\w+|fread|pread|loadtxt|fromfile|imread|decode|get_file|_load_from_file|__getitem__|"
                    r"fetch|_get_data|_try_get_data|_next_data|get|_recv_bytes|poll)$")


def _pyspy(text, src, ctx):
    if not _PYSPY_THREAD.search(text):
        return None
    procs = re.split(r"^Process \d+:", text, flags=re.M)
    tops = []
    for chunk in procs:
        for th in re.split(r"(?=^Thread\s)", chunk, flags=re.M):
            if not th.startswith("Thread"):
                continue
            frames = _PYSPY_FRAME.findall(th)
            if not frames or "MainThread" not in th.split("\n")[0]:
                continue
            tops.append([(fn, f) for fn, f, _ in frames[:8]])
    if not tops:
        return "py-spy dump", []
    out = []
    coll, io = [], []
    for fr in tops:
        names = [fn for fn, _ in fr]
        files = " ".join(f for _, f in fr)
        if names and _COLLECTIVE_FN.match(names[0]) or "distributed_c10d" in fr[0][1]:
            coll.append(names[0])
        elif any(_IO_FN.match(n) for n in names[:3]) and ("dataloader" in files or "dataset" in files.lower()
                                                          or any(n in ("read", "readinto", "open", "load", "stat")
                                                                 for n in names[:2])):
            io.append(f"{names[0]} ({fr[0][1]})")
    if io:
        out.append(Signal("storage", "stalled_reads", "fail", 0.7, _quote(f"MainThread: {io[0]}"),
                          f"{len(io)} of {len(tops)} dumped main thread(s) wait in data loading / file reads, not in "
                          "compute or NCCL: the hang is on the data path", src, "storage_mount"))
    if len(set(coll)) > 1:
        out.append(Signal("software", "pyspy_mismatch", "fail", 0.7, _quote(f"main threads in {sorted(set(coll))}"),
                          "ranks wait in different collectives: a code-path difference between ranks", src,
                          "collective_debug"))
    elif coll and not io and len(coll) < len(tops):
        out.append(Signal("software", "pyspy_outlier", "warn", 0.5, _quote(f"{len(coll)} of {len(tops)} ranks in "
                          f"{coll[0]}; the others elsewhere"), "most ranks wait in a collective while some are "
                          "elsewhere: those are the ones to look at", src, "pyspy"))
    elif coll:
        out.append(Signal("software", "pyspy_collective", "warn", 0.25, _quote(f"all dumped ranks in {coll[0]}"),
                          "every dumped rank waits in the same collective: a missing peer (dump the other nodes)",
                          src, "pyspy", direct=False))
    return "py-spy dump", out


# Checkpoint logs: Megatron-LM timers ("save-checkpoint ...: (2345.67, 2346.01)" in ms), generic
# "saved checkpoint ... in 312.4 s" / "Checkpoint ... took 95 s" lines (DeepSpeed, Lightning, HF Trainer
# callbacks print such lines); sizes "... 420 GB" on the same line give the write GB/s.
_CKPT_TIMER = re.compile(r"save-checkpoint[ \t.]*:[ \t]*(?:\([ \t]*)?(\d+(?:\.\d+)?)", re.I)
# a line naming a save and a checkpoint, then a duration after both words (three linear searches)
_CKPT_SAVE = re.compile(r"\bsav(?:e|ed|ing)", re.I)
_CKPT_DUR = re.compile(r"(?:took|in|time[:=]?|duration[:=]?)[ \t]*(\d+(?:\.\d+)?)[ \t]*"
                       r"(ms|s|sec|secs|seconds|min|minutes)\b", re.I)
_SIZE_GB = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)[ \t]*(GB|GiB|TB)\b")


def _checkpoint_log(text, src, ctx):
    if "checkpoint" not in text.lower():
        return None
    durs, lines, gbs = [], [], []
    for m in _CKPT_TIMER.finditer(text):
        durs.append(float(m.group(1)) / 1e3)
        lines.append(m.group(0))
    for ln in lines_containing(text, "checkpoint"):
        low = ln.lower()
        c = low.find("checkpoint")
        sv = _CKPT_SAVE.search(ln) if c >= 0 else None
        m = _CKPT_DUR.search(ln, max(c + 10, sv.end())) if sv else None
        if not m:
            continue
        unit = m.group(2).lower()
        v = float(m.group(1)) * (1e-3 if unit == "ms" else 60.0 if unit.startswith("min") else 1.0)
        durs.append(v)
        lines.append(ln)
        sz = _SIZE_GB.search(ln)
        if sz and v > 0:
            g = float(sz.group(1)) * {"GB": 1.0, "GIB": 1.073741824, "TB": 1000.0}[sz.group(2).upper()]
            gbs.append(g / v)
    if not durs:
        return None
    if gbs:
        ctx["quant"]["checkpoint_write_gbs"] = min(gbs)
    lo, hi = min(durs), max(durs)
    i = durs.index(hi)
    # course policy: a save 3x slower than the fastest one and >= 60 s long = contention on the pool
    if len(durs) >= 2 and hi >= 3 * lo and hi >= 60:
        return "checkpoint log", [Signal("storage", "checkpoint_slow", "warn", 0.45, _quote(lines[i]),
                                         f"checkpoint saves slowed from {lo:.0f} s to {hi:.0f} s: the file system is "
                                         "contended or degraded (check OST/MDS load, and if saves share the data pool)",
                                         src, "read_bandwidth")]
    return "checkpoint log", [Signal("storage", "checkpoint_slow", "pass", 0.15, _quote(lines[i]),
                                     f"{len(durs)} checkpoint save(s), {lo:.0f}-{hi:.0f} s", src, "checkpoint_files")]


_IMPORT_STATE = re.compile(r"(?:^|\n)[ \t]*(?:osc|mdc)\.(\S+?)\.import=?[ \t]*\n(?:.*\n){0,6}?[ \t]*state:[ \t]*(\w+)",
                           re.I)


def _lustre_import(text, src, ctx):
    if ".import" not in text.lower():
        return None
    rows = _IMPORT_STATE.findall(text)
    if not rows:
        return None
    bad = [(t, st) for t, st in rows if st.upper() != "FULL"]
    if bad:
        return "lctl import", [Signal("storage", "lustre_targets", "fail", 0.8, _quote(f"{t}.import state: {st}"),
                                      f"Lustre import {t} is {st} (not FULL): the client is disconnected from it",
                                      src, "lustre_servers") for t, st in bad[:4]]
    return "lctl import", [Signal("storage", "lustre_targets", "pass", 0.35, f"{len(rows)} imports state: FULL",
                                  "all Lustre imports connected", src, "lustre_servers")]


# nfsiostat: the line after a "... retrans  avg RTT (ms) ..." header holds "ops/s kB/s kB/op retrans (pct%) rtt"
_NFSIO = re.compile(r"^[ \t]*[\d.]+[ \t]+[\d.]+[ \t]+[\d.]+[ \t]+\d+[ \t]+\([ \t]*(\d+(?:\.\d+)?)%\)[ \t]+(\d+(?:\.\d+)?)")


def _nfsiostat(text, src, ctx):
    lines = text.split("\n")
    ms = []
    for i, ln in enumerate(lines[:-1]):
        if "avg RTT (ms)" in ln and "retrans" in ln.lower():
            m = _NFSIO.match(lines[i + 1])
            if m:
                ms.append(m.groups())
    if not ms:
        return None
    worst = max(float(p) for p, _ in ms)
    rtt = max(float(r) for _, r in ms)
    line = _quote(f"nfsiostat: retrans {worst:.1f}%, avg RTT {rtt:.1f} ms")
    if worst >= 1.0:  # same course policy as nfsstat: >= 1 % retransmissions
        return "nfsiostat", [Signal("storage", "nfs_retrans", "fail" if worst >= 5 else "warn",
                                    0.7 if worst >= 5 else 0.45, line, "NFS operations are being retransmitted",
                                    src, "nfs_server")]
    return "nfsiostat", [Signal("storage", "nfs_retrans", "pass", 0.25, line, "no NFS retransmissions", src, "nfs_server")]


def _dd(text, src, ctx):
    if "copied" not in text or "bytes" not in text:
        return None
    r = _try(fioparse.parse_dd, text)
    if r is None:
        return None
    gbs = getattr(r, "gbs", None) or getattr(r, "bandwidth_gbs", None)
    what = f"dd: {gbs:.2f} GB/s" if isinstance(gbs, (int, float)) else "dd transfer"
    return "dd", [Signal("storage", "dd", "info", 0.0, _quote(what), "a single-stream dd measures one client's "
                         "sequential speed, not the pool (use fio with several jobs and nodes)", src, "read_bandwidth")]


def _perftest(text, src, ctx):
    if "BW Test" not in text and "#bytes" not in text:
        return None
    r = _try(P.parse_perftest_bw, text, ctx, "perftest")
    if r is None or not r.rows:
        return None
    if r.limit_failed:   # the run set -w/--limit_bw and perftest says the average is below it
        return "perftest", [Signal("network", "rdma_bw", "fail", 0.75, _quote("Error: BW result is below bw limit"),
                                   "perftest's own verifier (-w/--limit_bw) failed: the link's average bandwidth is "
                                   "below the limit the run demanded (a degraded port, cable or PCIe path)", src,
                                   "ib_path")]
    bw = max(x.bw_avg_gbps for x in r.rows)
    line = _quote(f"{r.test or 'perftest'} {r.device or ''}: BW average {bw:.1f} Gb/s")
    cluster = ctx["cluster"]
    if cluster is None:
        return "perftest", [Signal("network", "rdma_bw", "info", 0.0, line, "no port rate to compare with (pass "
                                   "cluster=)", src, "ib_path")]
    exp = cluster.nic_gbps * getattr(cluster, "nic_efficiency", 1.0)
    spec = ctx["spec"] or health.AcceptanceSpec()
    frac = bw / exp
    if frac < spec.busbw_fail_fraction:  # the same acceptance bands as busbw (AcceptanceSpec)
        return "perftest", [Signal("network", "rdma_bw", "fail", 0.8, line, f"one RDMA link reaches {frac:.0%} of the "
                                   f"achievable {exp:.0f} Gb/s: a degraded port, cable or PCIe path", src, "ib_path")]
    if frac < spec.busbw_pass_fraction:
        return "perftest", [Signal("network", "rdma_bw", "warn", 0.45, line, f"RDMA link at {frac:.0%} of {exp:.0f} Gb/s",
                                   src, "ib_path")]
    return "perftest", [Signal("network", "rdma_bw", "pass", 0.45, line, f"RDMA link at {frac:.0%} of the achievable "
                               f"{exp:.0f} Gb/s", src, "ib_path")]


def _topo(text, src, ctx):
    if "GPU0" not in text or "Legend" not in text and "CPU Affinity" not in text:
        return None
    t = _try(P.parse_nvidia_smi_topo, text, ctx, "nvidia-smi topo -m")
    if t is None:
        return None
    far = [g for g, (nic, link) in (t.gpu_nic_map().items() if t.nics else []) if link in ("SYS", "SOC")]
    if far:
        return "nvidia-smi topo -m", [Signal("network", "gpu_nic_affinity", "warn", 0.3, _quote(
            f"{', '.join(far[:4])}: nearest NIC across the CPU interconnect (SYS)"), "GPUDirect RDMA crosses the "
            "CPU socket for these GPUs: lower inter-node bandwidth", src, "nccl_transport")]
    return "nvidia-smi topo -m", [Signal("gpu", "topology", "info", 0.0, _quote(
        f"{len(t.gpus)} GPUs, {len(t.nics)} NICs"), "topology read (every GPU has a NIC on its PCIe switch or NUMA node)",
        src, "nvlink")]


# vLLM engine configuration as printed at start-up ("Initializing an LLM engine (v0.6.4) with config:
# model='...', ..., tensor_parallel_size=4, ..., dtype=torch.bfloat16, ...") or given on the command line.
_SERVE_MODEL = re.compile(r"model='([^']+)'|--model[= ]+(\S+)")
_SERVE_TP = re.compile(r"tensor_parallel_size=(\d+)|--tensor-parallel-size[= ]+(\d+)|\s-tp[= ]+(\d+)")
_SERVE_UTIL = re.compile(r"gpu_memory_utilization=([\d.]+)|--gpu-memory-utilization[= ]+([\d.]+)")
_SERVE_QUANT = re.compile(r"quantization=(?!None)(\w+)|--quantization[= ]+(\w+)")


def _first_group(m):
    return next((g for g in m.groups() if g), None) if m else None


def _serving(text, src, ctx):
    if "cache blocks" not in text and "KV cache" not in text and "GPU blocks" not in text and "--model" not in text \
            and "tensor_parallel_size" not in text:
        return None
    model = _first_group(_SERVE_MODEL.search(text))
    if model is None:
        return None
    cfg = ctx.setdefault("serving", {})
    cfg["model"] = model
    for key, rx in (("tp", _SERVE_TP), ("mem_util", _SERVE_UTIL), ("quant", _SERVE_QUANT)):
        v = _first_group(rx.search(text))
        if v is not None:
            cfg[key] = v
    cfg["source"] = src
    return "serving config", []


def catalog_model(name: str) -> str | None:
    """Catalog preset whose name (letters and digits only) is contained in a Hugging Face model id."""
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    hits = [m for m in models.transformer_names() if re.sub(r"[^a-z0-9]", "", m.lower()) in key]
    return max(hits, key=len) if hits else None


def catalog_gpu(name: str) -> str | None:
    """Catalog GPU for an nvidia-smi product name ('NVIDIA H100 80GB HBM3' -> 'H100-SXM')."""
    n = name.upper().replace("NVIDIA", " ")
    pcie = "PCIE" in n
    best = None
    for g in hardware.gpus():
        e = hardware.gpu(g)
        stem = re.split(r"[- ]", g)[0].upper()
        if not re.search(rf"\b{re.escape(stem)}\b", n):
            continue
        if ("PCIE" in g.upper()) != pcie:
            continue
        size = re.search(r"(\d+)\s*GB", n)
        if size and int(size.group(1)) != int(e.hbm_gb):
            continue
        best = best or g
    return best


def _kv_budget(ctx) -> list[Signal]:
    cfg = ctx.get("serving")
    if not cfg or cfg.get("quant"):
        return []
    model = catalog_model(cfg["model"])
    gpu = getattr(ctx["cluster"], "gpu", None) or next(
        (catalog_gpu(g.name) for t in ctx["nvsmi_tables"] for g in t.gpus if catalog_gpu(g.name)), None)
    if model is None or not gpu:
        return []
    try:
        tp = int(cfg.get("tp", 1))
        util = float(cfg.get("mem_util", inference.VLLM_GPU_MEMORY_UTILIZATION))
        kv = inference.kv_budget_gb(model, gpu, tp=tp, mem_util=util)
        w = inference.weights_gb(model, tp=tp)
    except (ValueError, KeyError, TypeError):
        return []
    ctx["quant"]["kv_budget_gb"] = kv
    line = _quote(f"kv_budget_gb({model}, {gpu}, tp={tp}, mem_util={util:g}) = {kv:.1f} GB (weights {w:.1f} GB/GPU)")
    if kv <= 0:
        return [Signal("software", "kv_budget", "fail", 0.85, line, "the weights alone exceed the memory this "
                       "configuration gives the engine: raise tensor_parallel_size or use a larger GPU / quantised "
                       "weights", cfg["source"], "kv_budget")]
    return [Signal("software", "kv_budget", "info", 0.0, line, f"{kv:.1f} GB per GPU left for the KV cache by the "
                   "model (labutil.inference.kv_budget_gb; activations and CUDA graphs take part of it)",
                   cfg["source"], "kv_budget")]


# `ethtool -S <netdev>` counters of mlx5 RoCE ports (NVIDIA/Mellanox "Understanding mlx5 ethtool
# Counters"): tx_pause_storm_warning/error_events count PFC pause storms the NIC detected,
# rx_discards_phy / rx_out_of_buffer / rx_prioN_discards packets dropped for lack of buffer.
_ETHTOOL = re.compile(r"^[ \t]*((?:rx|tx)_\w*(?:pause_storm_\w+_events|discards_phy|out_of_buffer|prio\d_discards|"
                      r"prio\d_pause|pause_ctrl_phy))[ \t]*:[ \t]*(\d+)[ \t]*$", re.M)


def _ethtool_stats(text, src, ctx):
    if "pause" not in text and "discard" not in text and "out_of_buffer" not in text:
        return None
    rows = {k: int(v) for k, v in _ETHTOOL.findall(text)}
    if not rows:
        return None
    storm_err = sum(v for k, v in rows.items() if k.endswith("pause_storm_error_events"))
    storm_warn = sum(v for k, v in rows.items() if k.endswith("pause_storm_warning_events"))
    drops = {k: v for k, v in rows.items() if ("discard" in k or "out_of_buffer" in k) and v > 0}
    out = []
    if storm_err:
        out.append(Signal("network", "pfc_storm", "fail", 0.75, _quote(f"tx_pause_storm_error_events: {storm_err}"),
                          "the NIC detected a PFC pause storm and stopped honouring pause (a stuck receiver or a "
                          "misconfigured lossless class): RoCE traffic stalls or drops", src, "pfc"))
    elif storm_warn:
        out.append(Signal("network", "pfc_storm", "warn", 0.5, _quote(f"tx_pause_storm_warning_events: {storm_warn}"),
                          "the NIC saw long pause periods (pause storm warnings): congestion spreading through PFC",
                          src, "pfc"))
    if drops:
        k, v = max(drops.items(), key=lambda kv: kv[1])
        out.append(Signal("network", "roce_drops", "warn", 0.35, _quote(f"{k}: {v}"),
                          "the NIC dropped received packets (counters since boot; sample twice to see them rise): "
                          "RoCE without working PFC/ECN loses packets and retransmits", src, "pfc"))
    if not out:
        out.append(Signal("network", "pfc_storm", "pass", 0.2, _quote(f"{len(rows)} pause/discard counters, no storm, "
                          "no drops"), "no PFC storm and no receive drops on this port", src, "pfc"))
    return "ethtool -S", out


# A NIC port that goes down more than once in one kernel log is flapping (cable, transceiver, switch
# port): mlx5 prints "mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN" / "... Link ACTIVE" (journalctl -k
# excerpt in leptonai/gpud #1209), Ethernet drivers "<netdev>: Link down" / "NIC Link is Down".
_LINK_EVT = re.compile(r"\b((?:mlx5_\d+|ib[a-z]*\d\w*|en[a-z]\w*|eth\d+)(?::\s*Port:\s*\d+)?)[:\s]+(?:NIC\s+)?"
                       r"Link (?:is )?(DOWN|down|Down|ACTIVE|up|Up|UP)\b")


def _link_flap(text, src, ctx):
    if "Link " not in text:
        return None
    downs: dict = {}
    ups: dict = {}
    for m in _LINK_EVT.finditer(text):
        dev = m.group(1)
        (downs if m.group(2).lower() == "down" else ups).setdefault(dev, []).append(m.group(0))
    flapping = {d: v for d, v in downs.items() if len(v) >= 2 or (v and d in ups and len(v) + len(ups[d]) >= 3)}
    if not flapping:
        return None
    dev, lines = max(flapping.items(), key=lambda kv: len(kv[1]))
    return "kernel link events", [Signal("network", "link_flap", "fail", 0.75, _quote(lines[-1]),
                                         f"{dev} went down {len(lines)} times in this log: a flapping link (cable, "
                                         "transceiver or switch port); every flap stalls or kills RDMA connections",
                                         src, "ib_ports")]


# `lsmod | grep nvidia_peermem` (or nv_peer_mem, its pre-R470 name): the kernel module that lets the HCA
# read/write GPU memory (GPUDirect RDMA). A prompt with no output line under it means the module is not
# loaded (NVIDIA/nccl #988, #1343: "modprobe nvidia_peermem" restored GDR).
_LSMOD_CMD = re.compile(r"^\S*[$#][ \t]*(?:sudo[ \t]+)?lsmod[ \t]*\|[ \t]*grep[ \t]+(?:-\w+[ \t]+)*['\"]?"
                        r"([\w|]*peer_?mem[\w|]*)", re.M)
_PEERMEM_ROW = re.compile(r"^[ \t]*(nvidia_peermem|nv_peer_mem)[ \t]+\d+[ \t]+\d+", re.M)


def _lsmod_peermem(text, src, ctx):
    if "lsmod" not in text and "peermem" not in text and "peer_mem" not in text:
        return None
    cmds = list(_LSMOD_CMD.finditer(text))
    if not cmds and not _PEERMEM_ROW.search(text):
        return None
    row = _PEERMEM_ROW.search(text)
    if row:
        return "lsmod", [Signal("software", "peermem_module", "pass", 0.3, _quote(row.group(0)),
                                f"{row.group(1)} is loaded: GPUDirect RDMA is available to NCCL", src, "gdr_module")]
    if ctx.setdefault("reported", set()) & {"peermem_absent"}:  # one fact, however many prompts show it
        return "lsmod", []
    ctx["reported"].add("peermem_absent")
    return "lsmod", [Signal("software", "peermem_module", "warn", 0.5, _quote(cmds[0].group(0)) + " -> (no output)",
                            "no peer-memory module is loaded (nvidia-peermem / nv_peer_mem): NCCL cannot use GPUDirect "
                            "RDMA and stages inter-node traffic through host memory (or uses DMA-BUF where the kernel "
                            "and driver support it)", src, "gdr_module")]


# NCCL's bootstrap/socket interface on a container's private bridge: Docker's default bridge network is
# 172.17.0.0/16 with the host side named docker0 (Docker "Networking with standalone containers"); other
# nodes cannot route to it, so connections fail or hang (NVIDIA/nccl #331, #929; horovod/horovod #310).
_NCCL_IFACE = re.compile(r"NCCL INFO (?:Bootstrap|NET/Socket|NET/IB) : Using (?:\[\d+\])?(\w[\w.-]*):"
                         r"((?:\d+\.){3}\d+)")
_NCCL_OOB = re.compile(r"OOB (\w[\w.-]*):((?:\d+\.){3}\d+)")


def _socket_bridge(text, src, ctx):
    if "NCCL INFO" not in text:
        return None
    found = [(m.group(1), m.group(2), m.group(0)) for rx in (_NCCL_IFACE, _NCCL_OOB) for m in rx.finditer(text)]
    bad = [(i, a, q) for i, a, q in found if i.startswith(("docker", "veth", "virbr", "lo")) or a.startswith(("172.17.",
                                                                                                         "127."))]
    if not bad:
        return None
    iface, addr, q = bad[0]
    return "NCCL interface", [Signal(
        "network", "socket_iface", "warn", 0.55, _quote(q), f"NCCL talks over {iface} ({addr}): a loopback or "
        "container-bridge address (Docker's default bridge is 172.17.0.0/16) that other nodes cannot reach. Run the "
        "container with host networking or set NCCL_SOCKET_IFNAME to the node's routable interface", src, "socket_path")]


# A collective timeout that fires while a checkpoint is being saved: the saving rank(s) were busy gathering
# and writing longer than the process-group timeout while the others waited in the next collective
# (meta-pytorch/torchtune #2651, #2093; OpenRLHF #1126). The save's duration decides: slow writes -> the
# checkpoint target; slow gathers -> the save method (sharded / asynchronous save, a longer timeout around it).
_CKPT_START = re.compile(r"sav(?:e|es|ed|ing)\w*\b[^\n]{0,40}?\bcheckpoint|checkpoint[^\n]{0,40}?\bsav(?:e|ing)\b|"
                         r"save_checkpoint|full (?:model|optimizer) state dict|Retrieving (?:full )?\w* ?state dict|"
                         r"torch\.save\(", re.I)
_WATCHDOG_HIT = re.compile(r"Watchdog caught collective operation timeout|Timeout at NCCL work|"
                           r"Some NCCL operations have failed or timed out")


def _checkpoint_timeout(text, src, ctx):
    w = _WATCHDOG_HIT.search(text)
    if not w:
        return None
    before = text[:w.start()].split("\n")[-60:]
    hits = [ln for ln in before if _CKPT_START.search(ln)]
    if not hits:
        return None
    return "checkpoint at timeout", [Signal(
        "storage", "timeout_in_checkpoint", "warn", 0.5, _quote(hits[0]), "the collective timed out while a "
        "checkpoint was being saved: the saving rank(s) stayed away longer than the process-group timeout. Time the "
        "save (gather vs write) and measure the checkpoint target's write bandwidth; a slow write points at the "
        "storage, a slow gather at the save method (sharded or asynchronous save, a longer timeout around it)",
        src, "checkpoint_timing")]


# ---- fabric acceptance tools (ch12): mlxlink -c, ibdiagnet, iblinkinfo, ibswitches -------------------------
# Parsed by labutil.parsers.mlxlink / .ibdiagnet and labutil.topology; the degraded-link rule is
# labutil.links.diagnose_link (down / trained down / post-FEC errors / flaps -> degraded; raw BER -> watch).
def _mlxlink(text, src, ctx):
    if "Raw Physical BER" not in text and "Effective Physical BER" not in text and "Operational Info" not in text:
        return None
    m = _try(P.parse_mlxlink, text)
    if m is None:
        return None
    try:
        d = links.diagnose_link(m)
    except (TypeError, ValueError):
        return None
    why = "; ".join(d["reasons"])
    verdict, weight = {"down": ("fail", 0.8), "degraded": ("fail", 0.7), "watch": ("warn", 0.4),
                       "ok": ("pass", 0.3)}[d["verdict"]]
    return "mlxlink", [Signal("network", "link_ber", verdict, weight, _quote(
        f"mlxlink: raw BER {d['raw_ber']:.1e}, effective BER {d['effective_ber']:.1e}" if d["raw_ber"] is not None
        else "mlxlink: " + why), f"link {d['verdict']}: {why} (labutil.links.diagnose_link)", src, "ib_ports")]


def _ibdiagnet(text, src, ctx):
    if "-I- " not in text and "-W- " not in text and "-E- " not in text:
        return None
    d = _try(P.parse_ibdiagnet, text)
    if d is None or not (d.stages or d.findings("E") or d.findings("W")):
        return None
    errs = [msg for _st, msg in d.findings("E")]
    warns = [msg for _st, msg in d.findings("W")]
    n_e, n_w = d.total_errors, d.total_warnings
    if n_e or errs:
        return "ibdiagnet", [Signal("network", "fabric_scan", "fail", 0.7, _quote(errs[0] if errs else
                             f"ibdiagnet: {n_e} error(s)"), f"ibdiagnet reports {n_e} error(s) and {n_w} warning(s): "
                             "read the -E- lines (links, LIDs, SM) before anything else", src, "ib_ports")]
    if n_w or warns:
        return "ibdiagnet", [Signal("network", "fabric_scan", "warn", 0.45, _quote(warns[0] if warns else
                             f"ibdiagnet: {n_w} warning(s)"), f"ibdiagnet: {n_w} warning(s) (counters rising during "
                             "the scan, links trained below what both ends support)", src, "ib_ports")]
    return "ibdiagnet", [Signal("network", "fabric_scan", "pass", 0.35, _quote(f"ibdiagnet: {len(d.stages)} stages, 0 "
                         "warnings, 0 errors"), "fabric scan clean", src, "ib_ports")]


def _iblinkinfo(text, src, ctx):
    if "==(" not in text or ")==>" not in text:
        return None
    lks = _try(topology.parse_iblinkinfo, text)
    if not lks:
        return None
    s = topology.summarize_links(lks)
    if s["degraded_ports"]:
        return "iblinkinfo", [Signal("network", "ib_ports", "warn", 0.5, _quote(
            f"{', '.join(s['degraded_ports'][:4])}: below {s['max_link_gbps']:g} Gb/s or not LinkUp"),
            f"{len(s['degraded_ports'])} switch port(s) slower than the fabric's {s['max_link_gbps']:g} Gb/s "
            "(trained down: cable or transceiver)", src, "ib_ports")]
    return "iblinkinfo", [Signal("network", "ib_ports", "pass", 0.3, _quote(
        f"iblinkinfo: {s['switches']} switches, {s['switch_links']} switch links, all at {s['max_link_gbps']:g} Gb/s"),
        "every listed port LinkUp at the fabric's rate", src, "ib_ports")]


def _ibswitches(text, src, ctx):
    if "Switch" not in text or " ports " not in text:
        return None
    sw = _try(topology.parse_ibswitches, text)
    if not sw:
        return None
    return "ibswitches", [Signal("network", "fabric_inventory", "info", 0.0, _quote(
        f"{len(sw)} switch(es), {sw[0]['physical_ports']} ports each" if len({x['ports'] for x in sw}) == 1
        else f"{len(sw)} switches"), "switch inventory read (compare the count with the fabric design)", src,
        "ib_ports")]


BLOCK_KINDS = (_ibstat, _ibv_devinfo, _perfquery, _nccl_tests, _nccl_log, _show_gids, _nvidia_smi_table, _nvidia_smi_q,
               _nvidia_smi_csv, _dcgmi, _lfs_df, _lfs_check, _fio, _ior, _mdtest, _mounts, _nfsstat, _timings, _pyspy,
               _checkpoint_log, _lustre_import, _nfsiostat, _perftest, _topo, _dd, _serving, _ethtool_stats, _link_flap,
               _lsmod_peermem, _socket_bridge, _checkpoint_timeout, _mlxlink, _ibdiagnet, _iblinkinfo, _ibswitches)

perfquery_pairs, gid_check, kv_budget = _perfquery_pairs, _gid_check, _kv_budget
