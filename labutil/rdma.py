"""RDMA fabrics: InfiniBand rates, lossless Ethernet (PFC headroom), ECN marking and DCQCN rate cuts.

Taught in ch11 RDMA基础: InfiniBand与RoCEv2. Link rates come from ``labutil.links`` (IBTA data
in ``data/links.toml``); collective-communication numbers from ``labutil.comm``.

PFC headroom (per port, per lossless priority), after Cisco's white paper "Priority Flow Control:
Build Reliable Layer 2 Infrastructure" (2009/2015, section on buffer requirements), which counts
what can still arrive after the receiver decides to send PAUSE:

    H = MTU_R + MTU_S + R x (2 x L x t_m) / 8 + D_resp / 8        [bytes]

- MTU_R: a maximum-size frame the receiver is already transmitting delays its PAUSE frame;
- 2 x L x t_m: the PAUSE travels the cable (L metres at t_m s/m) while the sender keeps sending,
  and the cable is full of data already in flight (R x L x t_m bits each way);
- D_resp: the sender's reaction time in bit times: IEEE 802.3 Annex 31B, Table 31B-1 (PAUSE
  reaction timing, in pause_quanta of 512 bit times): 10G 60, 25G 80, 40G 118, 100G 394,
  400G 905 quanta (``PAUSE_REACTION_QUANTA``);
- MTU_S: the frame the sender has just started when it reacts must finish.
Propagation: 65 % of c in single-mode fibre (513 ns per 100 m), 70 % in twin-ax copper (476 ns per
100 m), Cisco, same paper.

ECN / DCQCN: Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015.
The switch marks ECN with a RED-like probability that rises linearly from 0 at Kmin to Pmax at
Kmax and is 1 above Kmax (§3.1, CP algorithm; the paper's setting Kmin = 5 KB, Kmax = 200 KB,
Pmax = 1 %). The sender (RP, §3.2) on each CNP: Rt <- Rc; Rc <- Rc (1 - alpha/2);
alpha <- (1 - g) alpha + g, with g = 1/256 and alpha starting at 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import links, validate
from .units import BITS_PER_BYTE

__all__ = ["PAUSE_REACTION_QUANTA", "PAUSE_QUANTUM_BITS", "PROPAGATION_S_PER_M", "ib_rate_table",
           "pfc_headroom", "ecn_mark_probability", "dcqcn_rate_after_cnps", "DCQCN_G", "DCQCN_KMIN_BYTES",
           "DCQCN_KMAX_BYTES", "DCQCN_PMAX", "IB_VS_ROCE", "dp_gradient_sync", "PAUSE_HEAVY_FRACTION",
           "PAUSE_STORM_FRACTION", "PauseDiagnosis", "diagnose_pause"]

#: IEEE 802.3 Annex 31B, Table 31B-1: maximum PAUSE reaction time in pause_quanta per PHY speed (Gb/s).
PAUSE_REACTION_QUANTA = {10: 60, 25: 80, 40: 118, 100: 394, 400: 905}
PAUSE_QUANTUM_BITS = 512
#: Cisco PFC white paper: copper 70 % of c (476 ns / 100 m), single-mode fibre 65 % (513 ns / 100 m).
PROPAGATION_S_PER_M = {"fiber": 5.13e-9, "copper": 4.76e-9}

#: DCQCN (Zhu et al. 2015) parameters quoted in the paper.
DCQCN_G = 1.0 / 256.0
DCQCN_KMIN_BYTES = 5e3
DCQCN_KMAX_BYTES = 200e3
DCQCN_PMAX = 0.01


def ib_rate_table(lanes: int = 4) -> list[dict]:
    """One row per InfiniBand generation: signalling, encoding, efficiency, per-lane and port data rate.

    Port data rate = lanes x signal_gbps x efficiency (``links.ib_port_gbps``); 4X by default.
    """
    n = validate.integer("lanes", lanes, lo=1, hi=12)
    rows = []
    for gen in links.ib_generations():
        e = links.ib_link(gen)
        rows.append({"gen": gen, "year": e.get("year"), "signal_gbps": e["signal_gbps"], "encoding": e["encoding"],
                     "efficiency": e["efficiency"], "lane_gbps": e["lane_gbps"],
                     "port_signal_gbps": e["signal_gbps"] * n, "port_gbps": links.ib_port_gbps(gen, n)})
    return rows


def pfc_headroom(port_gbps, cable_m, *, mtu_bytes=9216, medium: str = "fiber", response_bit_times=None) -> dict:
    """PFC headroom of one port and one lossless priority, in bytes, with its four components.

    ``response_bit_times`` defaults to IEEE 802.3 Table 31B-1 for ``port_gbps`` in 10/25/40/100/400;
    other speeds need it given explicitly (KeyError otherwise). Vectorised over cable_m and mtu_bytes.
    Returns {'mtu_receiver_b', 'cable_b', 'response_b', 'mtu_sender_b', 'total_b'}.
    """
    r = validate.positive("port_gbps", port_gbps)
    length = validate.positive("cable_m", cable_m, allow_zero=True)
    mtu = validate.number("mtu_bytes", mtu_bytes, lo=64, hi=16384)
    validate.choice("medium", medium, tuple(PROPAGATION_S_PER_M))
    if response_bit_times is None:
        if float(r) not in PAUSE_REACTION_QUANTA:
            raise KeyError(f"port_gbps {r!r} has no IEEE 802.3 Table 31B-1 entry here; known: "
                           f"{sorted(PAUSE_REACTION_QUANTA)} -- pass response_bit_times explicitly")
        resp = PAUSE_REACTION_QUANTA[int(r)] * PAUSE_QUANTUM_BITS
    else:
        resp = validate.positive("response_bit_times", response_bit_times, allow_zero=True)
    t_m = PROPAGATION_S_PER_M[medium]
    cable_b = np.asarray(r, dtype=float) * 1e9 * 2.0 * np.asarray(length, dtype=float) * t_m / BITS_PER_BYTE
    mtu_a = np.asarray(mtu, dtype=float)
    resp_b = np.asarray(resp, dtype=float) / BITS_PER_BYTE
    total = mtu_a + cable_b + resp_b + mtu_a
    scalar = np.ndim(cable_m) == 0 and np.ndim(mtu_bytes) == 0

    def f(x):
        x = np.broadcast_to(np.asarray(x, dtype=float), np.shape(total))
        return float(x) if scalar else np.array(x)

    return {"mtu_receiver_b": f(mtu_a), "cable_b": f(cable_b), "response_b": f(resp_b), "mtu_sender_b": f(mtu_a),
            "total_b": f(total)}


def ecn_mark_probability(queue_bytes, kmin_bytes=DCQCN_KMIN_BYTES, kmax_bytes=DCQCN_KMAX_BYTES, pmax=DCQCN_PMAX):
    """RED-style ECN marking probability of DCQCN's congestion point (Zhu et al. 2015 §3.1).

    0 below Kmin; pmax x (q - Kmin) / (Kmax - Kmin) between; 1 above Kmax. Vectorised over queue_bytes.
    """
    q = np.asarray(validate.positive("queue_bytes", queue_bytes, allow_zero=True), dtype=float)
    lo = validate.positive("kmin_bytes", kmin_bytes, allow_zero=True)
    hi = validate.positive("kmax_bytes", kmax_bytes)
    if hi <= lo:
        raise ValueError(f"kmax_bytes must be > kmin_bytes ({lo}); got {hi}")
    p = validate.fraction("pmax", pmax)
    out = np.where(q <= lo, 0.0, np.where(q > hi, 1.0, p * (q - lo) / (hi - lo)))
    return float(out) if np.ndim(queue_bytes) == 0 else out


def dcqcn_rate_after_cnps(line_gbps, n_cnps, g=DCQCN_G, alpha0=1.0):
    """Sending rate (Gbit/s) after ``n_cnps`` consecutive CNPs, DCQCN reaction point (Zhu et al. §3.2).

    Each CNP: Rc <- Rc (1 - alpha/2), then alpha <- (1 - g) alpha + g. Returns an array of the rate
    after 0, 1, ..., n_cnps CNPs (rate increase between CNPs not modelled: this is the back-off).
    """
    r0 = validate.positive("line_gbps", line_gbps)
    n = validate.integer("n_cnps", n_cnps, lo=0, hi=10_000)
    gg = validate.fraction("g", g)
    a = validate.fraction("alpha0", alpha0, allow_zero=True)
    k = np.arange(n)
    # alpha before the (k+1)-th cut: alpha_k = 1 - (1 - a)(1 - g)^k  (closed form of the EWMA towards 1)
    alpha = 1.0 - (1.0 - a) * (1.0 - gg) ** k
    factors = np.concatenate([[1.0], np.cumprod(1.0 - alpha / 2.0)])
    return r0 * factors


#: IB vs RoCEv2, the comparison table of ch11 (qualitative rows; sources in the chapter's 参考资料).
IB_VS_ROCE = [
    {"aspect": "link layer", "InfiniBand": "IB (own L2, credit-based flow control: lossless by design)",
     "RoCEv2": "Ethernet + IP/UDP (port 4791); lossless needs PFC, or a NIC that tolerates loss"},
    {"aspect": "routing / management", "InfiniBand": "subnet manager (OpenSM / UFM) assigns LIDs and routes",
     "RoCEv2": "ordinary IP routing (BGP/ECMP); configured switch by switch"},
    {"aspect": "congestion control", "InfiniBand": "credit flow control + IB CC (FECN/BECN), adaptive routing",
     "RoCEv2": "ECN + DCQCN at the NICs, PFC as the backstop"},
    {"aspect": "port rates", "InfiniBand": "HDR 200, NDR 400, XDR 800 Gb/s",
     "RoCEv2": "100/200/400/800 GbE"},
    {"aspect": "operations", "InfiniBand": "separate fabric, vendor tools (ibstat, ibdiagnet, UFM)",
     "RoCEv2": "same tools and staff as the Ethernet data centre; PFC/ECN tuning is the hard part"},
]


def dp_gradient_sync(params, n_gpus, *, tp=8, pp=8, nic_gbps=None, global_batch_tokens=4e6,
                     gpu: str = "H100-SXM", mfu=0.45, bytes_per_grad=2, cluster=None) -> dict:
    """Seed 003's LLM case: is "one 400G port per GPU" needed? Gradient all-reduce vs compute per step.

    3D parallelism: each GPU holds params / (tp x pp) parameters; the dp = n_gpus / (tp x pp)
    replicas all-reduce those gradients once per step. The time comes from the course's one
    collective model, ``labutil.cluster.Cluster.dp_sync_time_s``: a DP group strided across the
    TP x PP groups has one rank per node (``ranks_per_node``), so each DP ring crosses every node on
    that GPU's own rail at 0.96 of the NIC line rate (``Cluster.nic_efficiency``), with NCCL's
    ring / tree choice and per-step latency. TP stays inside the NVLink domain, PP sends only
    activations.

    cluster: a ``labutil.cluster.Cluster`` (its GPU, NICs and NVLink); default: the catalog system of
        ``gpu`` (``Cluster.for_gpu``; DGX H100: 8 GPUs and 8 NICs per node). Resized to
        ``n_gpus`` GPUs. nic_gbps: line rate of each NIC (one per GPU in a DGX-class node),
        overriding the cluster's; default the cluster's (400 Gb/s for DGX H100).
    Per-GPU compute per step = 6 N T / (n_gpus x peak x MFU) (``compute.dense_compute_time_s`` with
    T / n_gpus tokens). Returns compute_s, sync_s, sync_ratio = sync_s / compute_s, dp, shard_gb.
    Vectorised over nic_gbps.
    """
    from dataclasses import replace

    from . import comm, compute, hardware
    from .cluster import Cluster

    n = validate.integer("n_gpus", n_gpus, lo=1)
    t = validate.integer("tp", tp, lo=1)
    p = validate.integer("pp", pp, lo=1)
    if n % (t * p):
        raise ValueError(f"n_gpus ({n}) must be a multiple of tp x pp ({t * p})")
    dp = n // (t * p)
    if dp < 2:
        raise ValueError(f"n_gpus / (tp x pp) = {dp}: no data-parallel gradient sync to model (need dp >= 2)")
    validate.positive("global_batch_tokens", global_batch_tokens)
    if cluster is None:
        cluster = Cluster.for_gpu(gpu)
    elif not isinstance(cluster, Cluster):
        raise TypeError(f"cluster must be a labutil.cluster.Cluster; got {type(cluster).__name__}")
    g = cluster.gpus_per_node
    if n % g:
        raise ValueError(f"n_gpus ({n}) must fill whole nodes of {g} GPUs (cluster {cluster.name})")
    c = cluster.with_nodes(n // g)
    peak = hardware.gpu(c.gpu).bf16_tflops
    compute_s = compute.dense_compute_time_s(params, global_batch_tokens / n, peak, mfu)
    # DP ranks per node: a model replica of tp x pp GPUs spans >= 1 node -> one DP rank per node
    q = g // (t * p) if (t * p) < g and g % (t * p) == 0 else 1
    shard_params = validate.positive("params", params) / (t * p)
    nic = None if nic_gbps is None else np.asarray(validate.positive("nic_gbps", nic_gbps), dtype=float)
    if nic is None:
        sync_s = c.dp_sync_time_s(shard_params, dp, bytes_per_grad, ranks_per_node=q)
    else:
        sync_s = np.array([replace(c, nic_gbps=float(x)).dp_sync_time_s(shard_params, dp, bytes_per_grad,
                                                                       ranks_per_node=q)
                           for x in nic.ravel()], dtype=float).reshape(nic.shape)
        sync_s = float(sync_s) if sync_s.ndim == 0 else sync_s
    shard_bytes = comm.gradient_bytes(shard_params, bytes_per_grad)
    return {"dp": dp, "compute_s": compute_s, "sync_s": sync_s, "sync_ratio": sync_s / compute_s,
            "shard_gb": shard_bytes / 1e9}


# -- reading PFC / pause counters (ch11 §RoCE operations) ----------------------------------------
#: Course thresholds for the share of an interval a port spends sending / receiving pause. They are
#: operating rules of this course, not published limits: below PAUSE_HEAVY_FRACTION pause is the
#: normal, bursty back-pressure of incast that PFC exists to absorb; above it ECN/DCQCN is not acting
#: before PFC; above PAUSE_STORM_FRACTION the port is paused most of the time (a stuck receiver or a
#: congestion tree). mlx5 itself calls it a storm when the device keeps sending pause until its stall
#: watchdog fires (``tx_pause_storm_error_events``; 8 s by default, 100 ms in 'auto' mode,
#: /sys/class/net/<if>/settings/pfc_stall_prevention).
PAUSE_HEAVY_FRACTION = 0.05
PAUSE_STORM_FRACTION = 0.5


@dataclass(frozen=True)
class PauseDiagnosis:
    """What a port's pause / discard counters say (``diagnose_pause``)."""

    verdict: str                 # 'ok', 'back-pressure', 'heavy congestion', 'receiver congested', 'PFC storm', 'lossless drops'
    severity: str                # 'ok', 'info', 'warning', 'critical'
    reasons: tuple
    who_sends_pause: str         # 'this port', 'the network', 'both', 'nobody'
    sent_pause_fraction: float | None      # of the interval (needs interval_s)
    received_pause_fraction: float | None
    discard_fraction: float | None         # dropped for lack of buffers / received


_SEVERITY = ("ok", "info", "warning", "critical")


def diagnose_pause(counters, *, priority=3, interval_s=None, heavy_fraction=PAUSE_HEAVY_FRACTION,
                   storm_fraction=PAUSE_STORM_FRACTION) -> PauseDiagnosis:
    """Tell a PFC storm from normal back-pressure from ``ethtool -S`` counters (mlx5 names).

    counters: a mapping name -> int: the difference of two reads of one port taken ``interval_s``
    apart (``EthtoolStats.delta``), or one cumulative dump (``interval_s=None``: only the ratio
    rules apply). priority: the lossless PFC priority (RoCE usually 3), or None for 802.3x global
    pause (``*_pause_ctrl_phy``, ``*_global_pause*``, ``rx_discards_phy``).

    Rules, in order (counter meanings: kernel mlx5 counters.rst):
      1. ``tx_pause_storm_error_events`` > 0: the stall watchdog disabled pause -> 'PFC storm', critical;
      2. discards on the lossless priority (``rx_prio<p>_discards/_buf_discard/_cong_discard``) -> 'lossless
         drops', critical: PFC is not protecting it (headroom, DSCP/priority mapping, trust mode);
      3. with an interval: pause duration (us) / interval. Sending > storm_fraction or a storm warning
         event -> 'PFC storm' (this host cannot drain: PCIe, host memory, a hung receiver); receiving >
         storm_fraction -> 'PFC storm' upstream (the network pauses this port most of the time);
         either > heavy_fraction -> 'heavy congestion' (ECN should act before PFC); any pause ->
         'back-pressure' (normal; ECN marks show DCQCN working);
      4. one cumulative dump (global pause): the port sends pause AND drops -> 'receiver congested'.
    Who sends pause is the congested one: tx_* counts pause this port sent (its receive path is full),
    rx_* pause it received (the next hop is full).

    >>> d = diagnose_pause({"rx_prio3_pause": 120, "rx_prio3_pause_duration": 20_000, "rx_prio3_marked": 900},
    ...                    interval_s=10.0)
    >>> d.verdict, d.severity, round(d.received_pause_fraction, 4)
    ('back-pressure', 'info', 0.002)
    """
    if not hasattr(counters, "get"):
        raise TypeError(f"counters must be a mapping of counter name -> int; got {type(counters).__name__}")
    if priority is not None:
        validate.integer("priority", priority, lo=0, hi=7)
    t = None if interval_s is None else float(validate.positive("interval_s", interval_s))
    h = validate.fraction("heavy_fraction", heavy_fraction, allow_one=False)
    s = validate.fraction("storm_fraction", storm_fraction, allow_one=False)
    if h >= s:
        raise ValueError(f"heavy_fraction must be below storm_fraction; got {h} >= {s}")

    def c(name):
        v = counters.get(name)
        return None if v is None else int(v)

    if priority is None:
        tx, rx = c("tx_pause_ctrl_phy"), c("rx_pause_ctrl_phy")
        tx_us, rx_us = c("tx_global_pause_duration"), c("rx_global_pause_duration")
        drops = [c("rx_discards_phy")]
        received = c("rx_packets_phy")  # counts buffer discards too (counters.rst excludes only FCS/size errors)
        marked = None
    else:
        p = f"prio{priority}"
        tx, rx = c(f"tx_{p}_pause"), c(f"rx_{p}_pause")
        tx_us, rx_us = c(f"tx_{p}_pause_duration"), c(f"rx_{p}_pause_duration")
        drops = [c(f"rx_{p}_discards"), c(f"rx_{p}_buf_discard"), c(f"rx_{p}_cong_discard")]
        pk = c(f"rx_{p}_packets")
        received = None if pk is None else pk + sum(d for d in drops if d)
        marked = c(f"rx_{p}_marked")
    dropped = sum(d for d in drops if d) if any(d is not None for d in drops) else None
    sent_any, recv_any = bool(tx) or bool(tx_us), bool(rx) or bool(rx_us)
    who = {(True, True): "both", (True, False): "this port", (False, True): "the network"}.get((sent_any, recv_any), "nobody")
    sent_f = None if (t is None or tx_us is None) else tx_us / (t * 1e6)
    recv_f = None if (t is None or rx_us is None) else rx_us / (t * 1e6)
    disc_f = None if (dropped is None or not received) else dropped / received
    storm_err, storm_warn = c("tx_pause_storm_error_events") or 0, c("tx_pause_storm_warning_events") or 0
    reasons: list[str] = []
    verdict, sev = "ok", "ok"

    def worse(v, level, why):
        nonlocal verdict, sev
        reasons.append(why)
        if _SEVERITY.index(level) > _SEVERITY.index(sev):
            verdict, sev = v, level

    if storm_err:
        worse("PFC storm", "critical", f"tx_pause_storm_error_events = {storm_err}: the NIC sent pause until its stall "
              "watchdog disabled pause; drops may have followed")
    if priority is not None and dropped:
        worse("lossless drops", "critical", f"{dropped:,} packets dropped on lossless priority {priority}: PFC is not "
              "protecting it (headroom, DSCP-to-priority mapping, trust mode)")
    if t is not None:
        if storm_warn:
            worse("PFC storm", "warning", f"tx_pause_storm_warning_events = {storm_warn}: the NIC kept sending pause for a "
                  "long time")
        for frac, side in ((sent_f, "sent"), (recv_f, "received")):
            if frac is None or frac <= 0:
                continue
            where = ("this host cannot drain its receive buffer (PCIe, host memory, a hung process)" if side == "sent"
                     else "the next hop pauses this port: follow the pause upstream to the port that sends it")
            if frac > s:
                worse("PFC storm", "critical", f"pause {side} {frac:.0%} of the interval: {where}")
            elif frac > h:
                worse("heavy congestion", "warning", f"pause {side} {frac:.1%} of the interval: ECN/DCQCN is not acting "
                      "before PFC (check the switch ECN thresholds and CNP counters)")
            else:
                worse("back-pressure", "info", f"pause {side} {frac:.2%} of the interval: bursty back-pressure that PFC absorbs")
        if marked:
            reasons.append(f"{marked:,} packets ECN-marked: DCQCN is being told to slow down")
    elif sent_any or recv_any:
        if who in ("this port", "both") and dropped:
            worse("receiver congested", "critical" if (disc_f or 0) > 0.01 else "warning",
                  f"this port sent {tx or 0:,} pause frames and still dropped {dropped:,} packets "
                  f"({disc_f:.1%} of received)" if disc_f is not None else
                  f"this port sent {tx or 0:,} pause frames and still dropped {dropped:,} packets")
        else:
            worse("back-pressure", "info", f"pause frames: sent {tx or 0:,}, received {rx or 0:,} (cumulative; take two "
                  "reads some seconds apart to see how much of the time the port is paused)")
    elif dropped and priority is None:
        worse("receiver congested", "warning", f"{dropped:,} packets dropped for lack of buffers without pause")
    if not reasons:
        reasons.append("no pause and no discards")
    return PauseDiagnosis(verdict, sev, tuple(reasons), who, sent_f, recv_f, disc_f)
