"""``triage()``: paste what you collected, get the layer, the deciding lines and the next check.

The bundle (one text, a list of texts, a mapping name -> text, or file paths) is split into
fragments, every fragment is recognised (:mod:`labutil.troubleshoot.recognise`) and each signal
scores its layer. Scoring (course model, stated so it can be argued with):

- a layer's score S = 1 - prod(1 - w_i) over its 'fail'/'warn' signals (independent pieces of
  evidence combine like independent detectors);
- symptom signals (``direct=False``: watchdog timeouts, peers closing connections, silent ranks)
  count only while the layer has no healthy evidence: with healthy evidence H = 1 - prod(1 - h_j)
  for the layer they are scaled by (1 - H). Direct failures are never discounted by healthy
  evidence (a clean ``ibstat`` does not cancel ``completion error 12``: a RoCE GID or routing fault
  leaves ports Active);
- the verdict is the layer with the highest S (ties -> the lower layer, the layered order); it is
  reported as ``first_failing_layer`` when S >= 0.5 (at least one strong direct signal), else None;
- confidence = S_top x (1 - S_second / 2): one clear cause -> high; two layers accused -> lower;
  symptoms only -> low. A layer with symptom signals only is capped at 0.45: two symptoms (a
  watchdog timeout and the garbage error it leaves behind) never add up to a verdict. With no failing layer the confidence of "nothing found" is the mean over
  the four layers of H x (1 - S): it grows with the healthy evidence collected.

Notes are evidence (issue 16): the sentences an engineer writes (English or Chinese, ``symptom=``
included) are matched against the failure-signature catalogue (:mod:`labutil.troubleshoot.signatures`);
a full match is a direct signal of 0.55-0.65, a partial one a 0.2 hint. A layer whose direct evidence
is prose only is capped at 0.7 (:data:`PROSE_CAP`), so a verdict from words is always below one from
a tool's output; log lines quoted inside the notes are read by the line rules like any log line.

When nothing reaches the threshold, the notes are read once more through the layer lexicon
(:mod:`labutil.troubleshoot.lexicon`: the components, tools and error names of each layer, EN/ZH): a layer
the notes clearly name becomes the verdict with weight 0.5, a layer score capped at 0.5 and a confidence
capped at 0.4 - a verdict from vocabulary is below one from a signature, which is below one from a tool.

Consequences a property test checks: adding healthy evidence never changes a verdict that rests on
direct signals (it can only lower other layers' symptom scores), and any input - garbage included -
gives a Diagnosis instead of an exception.
"""

from __future__ import annotations

import json
import re
import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from .. import data_files, validate
from ..health import AcceptanceSpec, Finding
from ..parsers._common import decode_text
from .engine import LAYERS, LAYER_LADDER, MAX_RANKS, CheckResult, Diagnosis, LayerResult
from .lexicon import LEXICON_CONFIDENCE_CAP, LEXICON_WEIGHT, layer_evidence, lexicon_verdict
from .recognise import Signal, global_signals, recognise, symptom_signals
from .recognise.signals import _quote
from .signatures import catalogue, cue_specificity, groups_hit, signature, similar_incidents

__all__ = ["triage", "NEXT_CHECKS", "walkthrough_names", "walkthrough", "triage_walkthrough", "signal_score",
           "VERDICT_THRESHOLD", "PROSE_CAP", "GENERIC_CONTRADICTIONS", "LEXICON_ORIGIN", "score_incidents"]

VERDICT_THRESHOLD = 0.5
#: highest score of a layer whose direct evidence is only prose (failure signatures matched in notes)
PROSE_CAP = 0.7
#: origin of the signal the layer lexicon adds when nothing else decides (labutil.troubleshoot.lexicon)
LEXICON_ORIGIN = "layer lexicon"
_PROSE_ORIGINS = ("failure signature", LEXICON_ORIGIN)
#: what would move a verdict to another layer when no signature says more (course wording)
GENERIC_CONTRADICTIONS = {
    "network": [("gpu", "the slowdown or hang reproduces inside one node (all_reduce_perf -g 8 on a single node): the "
                        "GPUs / NVLink, not the fabric"),
                ("software", "ibstat Active, error counters flat and node-pair all_reduce_perf at the expected busbw on "
                             "the job's nodes while the job still fails: the code or its configuration")],
    "storage": [("software", "the job stalls the same way with synthetic data (no file reads): not the storage"),
                ("network", "the storage servers are healthy and the node's path to them (IB/Ethernet) is down")],
    "gpu": [("software", "the fault follows the job to other nodes / GPUs after the node is drained: the code"),
            ("network", "dcgmi diag -r 3 passes and the other ranks waited on the network")],
    "software": [("gpu", "the same image works on other nodes and this node shows XIDs or a failed dcgmi diag: the "
                         "node's hardware"),
                 ("network", "versions and configuration identical everywhere and the error appears only across nodes: "
                             "the fabric")],
}
#: highest score a layer reaches on symptom signals only (below the verdict threshold)
_SYMPTOM_CAP = 0.45

#: check key -> (layer, command, minutes, what it confirms / rules out). Minutes are COURSE ESTIMATES
#: of wall time on one node, except dcgmi diag -r 3 (~15 min, DCGM documentation).
NEXT_CHECKS = {
    "ib_path": ("network", "ibstat; perfquery -x twice 60 s apart on both peers; ib_write_bw between the two nodes", 3.0,
                "a down/flapping port or rising error counters on the path confirms the network; clean ports on RoCE "
                "-> check the GID index and PFC/ECN"),
    "roce_gid": ("network", "show_gids; compare with NCCL_IB_GID_INDEX on every node (NCCL_DEBUG_SUBSYS=INIT,NET)", 1.0,
                 "NCCL must use the RoCE v2 GID that carries the node's routable IP"),
    "socket_path": ("network", "ip -br addr; nc -zv <master_addr> <port>; NCCL_SOCKET_IFNAME=<iface>; check the rank-0 "
                    "process is alive", 2.0, "a refused port with rank 0 alive -> firewall/interface; rank 0 dead -> "
                    "its own error first"),
    "nccl_transport": ("network", "ls /dev/infiniband; ibv_devinfo inside the container; NCCL_DEBUG=INFO "
                       "NCCL_DEBUG_SUBSYS=INIT,NET", 2.0, "'Using network IB' and GDRDMA connections confirm RDMA"),
    "ib_ports": ("network", "ibstat; iblinkinfo | grep -v LinkUp", 1.0, "Active/LinkUp at the cluster's rate"),
    "ib_counters": ("network", "perfquery -x <lid> <port>; sleep 600; perfquery -x <lid> <port>", 10.0,
                    "symbol/link-recovery counters rising -> replace the cable or transceiver"),
    "nccl_busbw": ("network", "all_reduce_perf on node pairs (pair_test_plan) to bisect the slow node", 10.0,
                   "busbw >= 80% of the cluster's expected value clears the fabric"),
    "peer_first": ("network", "did the peer {peer} die first? read its rank's log and `ssh {peer} dmesg -T | grep -iE "
                   "'xid|oom|killed'`; only if it was alive: ibstat {hca}; perfquery -x on {hca} and on the peer's HCA",
                   2.0, "a peer process that died first explains the retry-exceeded completion; both alive -> the "
                   "link or route between {hca} and {peer}"),
    "gsp": ("gpu", "dmesg -T | grep -iE 'xid|gsp'; nvidia-smi -q | grep -i 'GSP Firmware'; compare the driver with the "
            "fixed releases (NVIDIA/open-gpu-kernel-modules#446: 525.105.17); drain and reset the GPU (nvidia-smi -r) "
            "or reboot", 5.0, "the GSP timeouts stop after the reset / on a fixed driver branch"),
    "peer_node": ("gpu", "on the node of the silent / disconnected rank: dmesg -T | grep -iE 'xid|nvrm|oom'; nvidia-smi",
                  1.0, "the first rank that died explains the others' timeouts"),
    "nfs_server": ("storage", "dmesg -T | grep -i nfs; nfsstat -c; mount | grep nfs; ls the data path with a timeout", 1.0,
                   "'not responding' or rising retrans confirms the NFS server/path"),
    "lustre_servers": ("storage", "lfs check servers; lctl get_param osc.*.state mdc.*.state; dmesg -T | grep -i lustre",
                       1.0, "every target 'active'/FULL clears the Lustre client"),
    "storage_mount": ("storage", "timeout 10 ls -l <data path> on every node; mount | grep <fs>; dmesg -T | grep -iE "
                      "'nfs|lustre|blocked for'", 1.0, "the path readable on every node clears the storage"),
    "storage_capacity": ("storage", "df -h <path>; lfs df -h; lfs quota -u $USER <path>", 1.0,
                         "free space and quota on the target file system"),
    "checkpoint_files": ("storage", "ls -l <ckpt dir>; compare file sizes with a good checkpoint; python -c "
                         "\"import torch; torch.load(p, map_location='cpu')\"", 2.0,
                         "a short file confirms an interrupted save: resume from the previous checkpoint"),
    "metadata_rate": ("storage", "mdtest -n 10000 -F -u -i 3 on the data path from many nodes; lfs df -i (inodes); "
                      "count the files the loader opens per second and the checkpoint writes per save", 10.0,
                      "file creates/stats per second above the job's demand clear the metadata servers"),
    "read_bandwidth": ("storage", "fio read test of the data pool while the job runs (and during a checkpoint)", 10.0,
                       "pool read >= the job's need clears the storage bandwidth"),
    "xid": ("gpu", "dmesg -T | grep -iE 'xid|fallen off'; nvidia-smi -q -d ECC,ROW_REMAPPER; drain the node", 1.0,
            "hardware XIDs (48, 63/64, 74, 79, 94/95, 119/120) confirm the GPU; follow the XID action"),
    "gpu_state": ("gpu", "nvidia-smi -q -d ECC,ROW_REMAPPER,PERFORMANCE,TEMPERATURE", 1.0,
                  "pending remap / uncorrectable ECC / thermal slowdown on the suspect GPU"),
    "gpu_memory": ("gpu", "nvidia-smi -q -d ECC,ROW_REMAPPER; drain, reset the GPU; dcgmi diag -r 3", 15.0,
                   "uncorrectable ECC or a pending remap confirms; a failing diag -> RMA"),
    "gpu_diag": ("gpu", "drain the node; dcgmi diag -r 3", 15.0, "all tests Pass clears the GPUs"),
    "gpu_thermal": ("gpu", "nvidia-smi -q -d PERFORMANCE,TEMPERATURE on the slow rank's node; ipmitool sdr (fans, "
                    "inlet)", 1.0, "HW/SW thermal slowdown Active confirms a cooling problem"),
    "nvlink": ("gpu", "nvidia-smi nvlink -s; systemctl status nvidia-fabricmanager; dmesg | grep -i nvswitch", 1.0,
               "inactive links or a failed Fabric Manager confirm"),
    "straggler": ("gpu", "nvidia-smi -q -d PERFORMANCE on the slow rank's node; py-spy dump on that rank", 2.0,
                  "throttle reasons -> GPU; a rank waiting in the data loader -> storage"),
    "gpu_memory_plan": ("software", "nvidia-smi (other processes on the GPU?); torch.cuda.memory_summary(); reduce "
                        "micro-batch / enable activation checkpointing", 2.0,
                        "memory_reserved near the HBM size with no foreign process -> the job's memory plan"),
    "rdma_limits": ("software", "ulimit -l inside the job (mpirun/srun ... bash -c 'ulimit -l'); lsmod | grep "
                    "nvidia_peermem; docker run --ulimit memlock=-1", 1.0,
                    "'unlimited' memlock and a loaded nvidia-peermem clear it"),
    "gdr_module": ("software", "lsmod | grep -E 'nvidia_peermem|nv_peer_mem' on every node; modprobe nvidia-peermem (GPU "
                   "Operator: driver.rdma.enabled=true); rerun NCCL_DEBUG=INFO and look for 'via NET/IB/<n>/GDRDMA'",
                   2.0, "GDRDMA on the NET channels (and the pair busbw back up) confirms GPUDirect RDMA"),
    "checkpoint_timing": ("storage", "grep the save durations in every rank's log (gather vs write); fio --rw=write "
                          "--bs=1M --direct=1 on the checkpoint directory; compare with the Timeout(ms) of the watchdog "
                          "line", 10.0, "a save longer than the timeout: faster target, sharded/async save, or a "
                          "longer timeout around the save"),
    "container_shm": ("software", "df -h /dev/shm inside the container; docker run --shm-size=16g (or --ipc=host); "
                      "Kubernetes: an emptyDir medium Memory on /dev/shm", 1.0,
                      "a /dev/shm of 64 MB (docker default) confirms"),
    "host_memory": ("software", "dmesg -T | grep -i 'killed process'; free -g; sacct -j <job> -o MaxRSS", 1.0,
                    "the OOM killer's victim and RSS confirm"),
    "kv_budget": ("software", "labutil.inference.kv_budget_gb(model, gpu, tp=..., mem_util=...); lower max_model_len or "
                  "raise tensor_parallel_size / gpu_memory_utilization", 2.0,
                  "KV budget <= 0 (or below one max-length sequence) confirms a configuration limit"),
    "node_power": ("gpu", "ipmitool sel elist | tail (PSU / power-loss events); ipmitool sdr type 'Power Supply'; "
                   "nvidia-smi -q -d POWER", 2.0, "a PSU or power-loss event in the BMC log at the failure time confirms"),
    "driver_build": ("software", "the driver container's / installer's log (kubectl logs <nvidia-driver-daemonset pod> "
                     "-c nvidia-driver-ctr | tail -50; /var/log/nvidia-installer.log); uname -r; lsmod | grep -E "
                     "'nouveau|nova'; the driver branch's supported kernels (release notes)", 2.0,
                     "a kernel newer than the branch supports, missing headers, or nouveau/nova bound to the GPU"),
    "k8s_gpu_resources": ("software", "kubectl describe node <node> | grep -E 'nvidia.com/gpu' (Capacity / "
                          "Allocatable / Allocated); kubectl logs <device-plugin pod>; grep -n default_runtime_name "
                          "/etc/containerd/config.toml", 2.0,
                          "Allocatable 0 with a healthy driver: the device plugin or the container runtime "
                          "configuration; all GPUs allocated: a scheduling matter"),
    "launch_config": ("software", "print LOCAL_RANK, CUDA_VISIBLE_DEVICES and torch.cuda.current_device() on every "
                      "rank; nvidia-smi -L; processes per node <= GPUs per node", 1.0,
                      "one distinct GPU per local rank clears it"),
    "fabric_manager": ("gpu", "systemctl status nvidia-fabricmanager; journalctl -u nvidia-fabricmanager; compare "
                       "nv-fabricmanager --version with the driver version (nvidia-smi)", 1.0,
                       "an active Fabric Manager of the driver's exact version clears it"),
    "pcie_acs": ("gpu", "lspci -vvv | grep -i acsctl (SrcValid+ on PCIe switches = ACS on); disable ACS in the BIOS or "
                 "setpci; rerun all_reduce_perf -g 8 on the node", 5.0, "ACSCtl SrcValid- and a normal intra-node "
                 "busbw confirm the fix"),
    "pfc": ("network", "ethtool -S <roce netdev> | grep -E 'pause|discard|out_of_buffer' twice a minute apart; mlnx_qos -i "
            "<netdev>; switch PFC/ECN counters on the port", 2.0, "rising pause-storm or discard counters confirm a "
            "lossless-fabric (PFC/ECN) misconfiguration"),
    "nccl_tests_build": ("software", "cd nccl-tests && make MPI=1 MPI_HOME=<mpi prefix>; mpirun -np <N> ... "
                         "./build/all_reduce_perf; the '# Using devices' list must show ranks 0..N-1", 5.0,
                         "one device list with all ranks and a non-zero busbw"),
    # flight recorder: PyTorch ProcessGroupNCCL environment variables (TORCH_NCCL_DUMP_ON_TIMEOUT needs
    # TORCH_NCCL_TRACE_BUFFER_SIZE > 0); tutorial "Flight Recorder for Debugging Stuck Jobs" (PyTorch >= 2.5)
    "collective_debug": ("software", "TORCH_DISTRIBUTED_DEBUG=DETAIL (and NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL) on a "
                         "rerun, with TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 (flight recorder: "
                         "each rank dumps its last collectives on the timeout); py-spy dump --pid on every rank", 5.0,
                         "the call that differs between ranks"),
    "cuda_debug": ("software", "CUDA_LAUNCH_BLOCKING=1 rerun; compute-sanitizer on one rank; dmesg for XID 48/94/95",
                   10.0, "a reproducible fault without hardware XIDs is a software bug"),
    "code_path": ("software", "read the first traceback of the first failing rank; rerun that rank's step alone", 5.0,
                  "the exception reproduces without the cluster"),
    "driver_userspace": ("software", "cat /proc/driver/nvidia/version (loaded kernel module) vs 'NVML library version' "
                         "of nvidia-smi / the container's libnvidia-ml.so.*; grep -i nvidia /var/log/apt/history.log "
                         "(an unattended upgrade?); drain the node and reboot (or reload the nvidia modules)", 2.0,
                         "kernel module and user-space library of the same version clear it"),
    "versions": ("software", "on every node: python -c 'import torch; print(torch.__version__, "
                 "torch.cuda.nccl.version())'; nvidia-smi | head -4; ls $(dirname $NCCL_NET_PLUGIN)", 2.0,
                 "identical versions everywhere clear it"),
    "pyspy": ("software", "py-spy dump --pid <pid> on every rank (pdsh / srun --overlap)", 3.0,
              "which ranks are NOT in the collective, and where they are"),
    "hang_first_look": ("software", "dmesg -T | grep -iE 'xid|nfs|lustre|oom' on every node, then py-spy dump on every "
                        "rank", 3.0, "a hang needs the lower layers ruled out before the code"),
}

_FIRST_LOOK = {"network": "ib_ports", "storage": "storage_mount", "gpu": "xid", "software": "pyspy"}


def signal_score(weights) -> float:
    """1 - prod(1 - w): combined strength of independent signals (0 for none)."""
    p = 1.0
    for w in weights:
        p *= 1.0 - min(max(float(w), 0.0), 1.0)
    return 1.0 - p


def _read_item(item, default_name: str) -> tuple[str, str]:
    """(name, text) of one evidence item: a path to an existing file, bytes, or text."""
    if isinstance(item, Path) or (isinstance(item, str) and "\n" not in item and 0 < len(item) < 4096
                                  and not item.strip().startswith(("[", "{")) and os.path.isfile(item)):
        p = Path(item)
        try:
            return p.name, decode_text(p.read_bytes())
        except OSError as exc:
            return str(p), f"(could not read {p}: {exc})"
    if isinstance(item, (bytes, bytearray)):
        return default_name, decode_text(bytes(item))
    if isinstance(item, str):
        return default_name, item
    return default_name, "" if item is None else repr(item)


def _items(evidence) -> list[tuple[str, str]]:
    if isinstance(evidence, Mapping):
        out = []
        for k, v in evidence.items():
            name, text = _read_item(v, str(k))
            out.append((str(k), text))
        return out
    if isinstance(evidence, (list, tuple)):
        return [_read_item(v, f"item {i + 1}") for i, v in enumerate(evidence)]
    return [_read_item(evidence, "evidence")]


def _spec_from(cluster, spec):
    if spec is not None:
        if not isinstance(spec, AcceptanceSpec):
            raise TypeError(f"spec must be a labutil.health.AcceptanceSpec; got {type(spec).__name__}")
        return spec
    if cluster is not None:
        return AcceptanceSpec.for_cluster(cluster)
    return None


def triage(evidence, *, cluster=None, symptom: str | None = None, spec: AcceptanceSpec | None = None,
           n_ranks: int | None = None, required_read_gbs: float | None = None) -> Diagnosis:
    """Recognise and weigh everything in ``evidence``; return a :class:`Diagnosis`.

    evidence: one text (a job log with command outputs and notes mixed in), a list of texts or
    file paths, or a mapping name -> text/path. cluster: a :class:`labutil.cluster.Cluster` whose
    thresholds apply (port rate, GPUs per node, expected busbw via ``cluster.expected_busbw_gbs``);
    spec: an explicit :class:`labutil.health.AcceptanceSpec` (wins over the cluster's); n_ranks:
    world size (to name ranks that never reported a timeout); required_read_gbs: the job's read
    demand (judges fio). Never raises on the evidence's content; bad ``cluster``/``spec`` types
    raise TypeError.
    """
    sp = _spec_from(cluster, spec)
    if n_ranks is not None:
        validate.integer("n_ranks", n_ranks, lo=1, hi=MAX_RANKS)
    if required_read_gbs is not None:
        validate.positive("required_read_gbs", required_read_gbs)
    ctx = {"cluster": cluster, "spec": sp, "quant": {}, "versions": [], "perfquery": [], "nvsmi_tables": [],
           "n_ranks": n_ranks, "required_read_gbs": required_read_gbs}
    if n_ranks is None and cluster is not None:
        ctx["n_ranks"] = getattr(cluster, "n_gpus", None)
    frags = []
    texts = []
    for name, text in _items(evidence):
        if not isinstance(text, str) or not text.strip():
            continue
        texts.append(text[:200_000])
        frags += recognise(name, text, ctx)
    if isinstance(symptom, str) and symptom.strip():   # symptom= is evidence too: read it like notes
        texts.append(symptom)
        frags += recognise("symptom", symptom, ctx, notes=True)
    ctx["all_text"] = "\n".join(texts)
    signals = [s for f in frags for s in f.signals]
    try:
        signals += global_signals(ctx)
    except (ValueError, KeyError, TypeError, IndexError):
        pass
    signals += symptom_signals(symptom)
    signals += _lexicon_fallback(signals, ctx)
    unrecognised = [f"{f.name}: {_first_line(f.text)}" for f in frags if not f.kinds and not f.signals
                    and f.name != "symptom"]
    return _decide(signals, frags, unrecognised, symptom, ctx)


def _lexicon_fallback(signals: list[Signal], ctx: dict) -> list[Signal]:
    """The layer the notes name (layer lexicon) when no layer reaches the verdict threshold otherwise; a layer
    that a tool's output shows healthy is not accused by vocabulary."""
    score, healthy = _layer_scores(_apply_precedence(signals))
    if max(score.values()) >= VERDICT_THRESHOLD:
        return []
    notes = "\n".join(ctx.get("notes", []))
    if not notes.strip():
        return []
    ev = layer_evidence(notes)
    ctx["lexicon"] = ev
    hinted = {s.layer for s in signals if s.origin == "failure signature" and s.verdict == "warn"}
    layer = lexicon_verdict(ev, {L: 1.0 for L in hinted})
    if layer is None or healthy[layer] > 0:      # a tool's output found the layer healthy: words do not overrule it
        return []
    terms = ", ".join(ev.terms.get(layer, [])[:6] + (["works on one node, not on more"] if ev.scale and layer == "network"
                                                      else []))
    line = ev.sentence.get(layer) or notes.strip().split("\n")[0]
    return [Signal(layer, "lexicon", "fail", LEXICON_WEIGHT, _quote(line),
                   f"no catalogued mechanism matched, but the notes name parts of the {layer} layer ({terms}): a "
                   f"low-confidence lead - confirm it with the check below", "notes", ev.checks.get(layer, _FIRST_LOOK[layer]),
                   True, LEXICON_ORIGIN)]


def _first_line(text: str) -> str:
    for ln in text.split("\n"):
        if ln.strip():
            s = " ".join(ln.split())
            return s if len(s) <= 100 else s[:97] + "..."
    return ""


# Causal precedence (course rule): a node whose kernel OOM-killed a process stops answering its file
# servers and peers for a while, so connection losses reported in the SAME fragment are consequences
# of the OOM kill, not independent storage/network faults (aws/aws-parallelcluster #2701).
_OOM_CONSEQUENCES = {"lustre_lost", "nfs_not_responding", "peer_closed", "hung_task", "kernel_link_down"}


def _apply_precedence(signals: list[Signal]) -> list[Signal]:
    oom_src = {s.source for s in signals if s.kind == "host_oom"}
    if not oom_src:
        return signals

    def consequence(s):
        if s.kind in _OOM_CONSEQUENCES and s.source in oom_src:
            return True
        if s.origin == "failure signature":   # the notes describe the consequence (e.g. "Lustre reconnects")
            try:
                return bool(set(signature(s.kind[4:]).kinds) & _OOM_CONSEQUENCES)
            except KeyError:
                return False
        return False

    return [replace(s, direct=False, weight=s.weight * 0.5,
                    message=s.message + " (follows an OOM kill on the same node: a consequence)")
            if consequence(s) else s for s in signals]


def _layer_scores(signals: list[Signal]) -> tuple[dict, dict]:
    """(score, healthy) per layer (the model of the module docstring)."""
    healthy = {L: signal_score(s.weight for s in signals if s.layer == L and s.verdict == "pass") for L in LAYERS}
    direct = {L: [s for s in signals if s.layer == L and s.verdict in ("fail", "warn") and s.direct] for L in LAYERS}
    score = {}
    for L in LAYERS:
        ws = [s.weight for s in direct[L]]
        damp = 1.0 if direct[L] else 1.0 - healthy[L]
        ws += [s.weight * damp for s in signals if s.layer == L and s.verdict in ("fail", "warn") and not s.direct]
        score[L] = signal_score(ws)
        if not direct[L]:  # symptoms alone never make a verdict, however many of them (see the module docstring)
            score[L] = min(score[L], _SYMPTOM_CAP)
        elif all(s.origin == LEXICON_ORIGIN for s in direct[L]):        # vocabulary only: the lowest verdict
            score[L] = min(score[L], LEXICON_WEIGHT)
        elif all(s.origin in _PROSE_ORIGINS for s in direct[L]):        # words only: below tool output
            score[L] = min(score[L], PROSE_CAP)
    return score, healthy


def _decide(signals: list[Signal], frags, unrecognised, symptom, ctx) -> Diagnosis:
    signals = _apply_precedence(signals)
    score, healthy = _layer_scores(signals)
    order = sorted(LAYERS, key=lambda L: (-round(score[L], 9), LAYERS.index(L)))
    top, second = order[0], order[1]
    verdict = top if score[top] >= VERDICT_THRESHOLD else None
    if verdict is not None:
        conf = score[top] * (1.0 - score[second] / 2.0)
        if all(s.origin == LEXICON_ORIGIN for s in signals if s.layer == top and s.direct
               and s.verdict in ("fail", "warn")):
            conf = min(conf, LEXICON_CONFIDENCE_CAP)      # named by vocabulary only
    else:
        conf = sum(healthy[L] * (1.0 - score[L]) for L in LAYERS) / len(LAYERS)
    warnings = list(dict.fromkeys(ctx.get("unread", [])))[:8]
    if warnings and verdict is None:   # "nothing found" in a paste that was partly unreadable is weak
        conf *= 0.5
    conf = round(min(max(conf, 0.0), 1.0), 2)
    layers = []
    for L in LAYERS:
        sl = [s for s in signals if s.layer == L and s.verdict != "info"]
        v = ("fail" if score[L] >= VERDICT_THRESHOLD else "warn" if score[L] > 0 else
             "pass" if healthy[L] > 0 else "unknown")
        checks = []
        for kind in dict.fromkeys(s.kind for s in sl):
            ks = [s for s in sl if s.kind == kind]
            worst = "fail" if any(s.verdict == "fail" for s in ks) else "warn" if any(s.verdict == "warn" for s in ks) \
                else "pass"
            key = ks[0].check
            cmd, mins = NEXT_CHECKS.get(key, (L, key, 1.0, ""))[1:3]
            checks.append(CheckResult(kind, L, worst, cmd, mins, []))
        layers.append(LayerResult(L, v, checks))
    if verdict is not None:
        top_sigs = sorted((s for s in signals if s.layer == verdict and s.verdict in ("fail", "warn")),
                          key=lambda s: (-s.weight, not s.direct))
        root = top_sigs[0]
        reasons = [_reason(s) for s in top_sigs[:4]]
        others = [s for s in signals if s.layer != verdict and s.verdict in ("fail", "warn")]
        reasons += [_reason(s, prefix="also (explained by the verdict or weaker): ") for s in
                    sorted(others, key=lambda s: -s.weight)[:2]]
        reasons += [_reason(s, prefix="healthy: ") for s in signals if s.verdict == "pass" and s.layer != verdict][:2]
        root_check, root_finding = root.kind, _finding(root)
    else:
        ranked = sorted((s for s in signals if s.verdict in ("fail", "warn")), key=lambda s: -s.weight)
        reasons = [_reason(s, prefix="symptom only: " if not s.direct else "weak: ") for s in ranked[:4]]
        reasons += [_reason(s, prefix="healthy: ") for s in signals if s.verdict == "pass"][:4]
        root_check = root_finding = None
    reasons += [_reason(s, prefix="note: ") for s in signals if s.verdict == "info" and s.message][:3]
    if not frags:
        reasons.append("no evidence given: paste logs or tool outputs (text, list of texts, mapping or file paths)")
    nxt = _next_checks(verdict, signals, score, healthy)
    missing = [L for L in LAYERS if score[L] == 0 and healthy[L] == 0]
    sym = (symptom or "").strip() or "(no symptom given)"
    # the next command: the cheapest check that confirms the verdict (else the cheapest first look)
    first = next((c for c in nxt if c["purpose"] == "confirm"), nxt[0] if nxt else None)
    d = Diagnosis(sym, layers, verdict, root_check, root_finding, first["command"] if first else
                  LAYER_LADDER["network"][0], dict(ctx["quant"]), {}, missing)
    d.confidence = conf
    d.reasons = reasons
    d.next_checks = nxt
    d.unrecognised = unrecognised
    d.signals = signals
    d.recognised = [(f.name, f.kinds) for f in frags if f.kinds]
    d.scores = {L: round(score[L], 3) for L in LAYERS}
    d.warnings = warnings
    kinds = {s.kind for s in signals if s.verdict in ("fail", "warn") and s.origin != "failure signature"}
    matches = _best_matches(ctx.get("signature_matches", []), kinds)
    d.matched_signatures = [{"id": m.signature.id, "title": m.signature.title, "layer": m.signature.layer,
                             "score": m.score, "full": m.full, "cues": [c.split(":", 1)[-1] for c in m.cues],
                             "quote": m.quote, "source": m.source} for m in matches]
    if verdict is not None:
        d.decided_by = {"layer": root.layer, "kind": root.kind, "line": root.line, "source": root.source,
                        "origin": root.origin}
    lex = ctx.get("lexicon")
    lex_terms = [t for t in (lex.terms.get(verdict, []) if lex is not None and verdict else [])]
    d.mechanism = _mechanism(verdict, root if verdict is not None else None, matches, ctx.get("all_text", ""), lex_terms)
    d.change_my_mind = _change_my_mind(verdict, root if verdict is not None else None, signals, score, matches,
                                       d.mechanism.get("id"))
    d.similar_incidents = similar_incidents(ctx.get("all_text", ""), matches, kinds, verdict, k=5,
                                            mechanism=d.mechanism.get("id"))
    return d


def _shared_terms(sig, terms) -> int:
    """How many of the lexicon's terms a signature's own phrasings contain (or are contained in, for phrasings
    of >= 4 characters): the words that named the layer also name this mechanism."""
    phr = {p.rstrip("$") for g in sig.cues for p in g if not p.startswith("@")}

    def within(short, long):      # a whole word (or words) of the longer phrasing: "nvlink" in "nvlink error",
        return len(short) >= 3 and re.search(r"(?<![a-z0-9])" + re.escape(short) + r"s?(?![a-z0-9])", long) is not None

    return sum(1 for t in terms if any(t == p or within(t, p) or within(p, t) for p in phr))


def _term_mechanism(layer: str, terms, partial) -> tuple:
    """The mechanism behind a lexicon verdict: the signature of ``layer`` whose phrasings share most of the terms
    that named the layer (a partly matched one first on ties), else the first partly matched signature of the
    layer when it shares none either; (None, '') when no signature of the layer relates to the notes."""
    order = list(catalogue())
    cands = [(_shared_terms(sg, terms), sg in partial, -order.index(sg.id), sg) for sg in catalogue().values()
             if sg.layer == layer]
    best = max(cands, key=lambda c: c[:3], default=None)
    if best is not None and best[0] > 0:
        return best[3], ("the catalogued mechanism whose phrasings share the words that named the layer (" +
                         ("partly matched, " if best[1] else "") + "a hint)")
    part = [sg for sg in partial if sg.layer == layer]
    if part:
        return part[0], "the closest catalogued mechanism of the layer the notes name (partly matched: a hint)"
    return None, ""


def _mechanism(verdict, root, matches, text: str, lexicon_terms=None) -> dict:
    """The failure mechanism behind the verdict: the signature whose words decided it, else among the
    signatures of the verdict's layer that explain the deciding line's kind (their ``kinds``) the one the
    notes also matched, else the one whose cue groups the deciding line itself hits most (the line says
    'port error' -> a flapping link, not a GID change), ties to the catalogue's order."""
    if verdict is None or root is None:
        return {}
    sig, how = None, ""
    if root.origin == "failure signature":
        try:
            sig, how = signature(root.kind[4:]), "the notes describe it"
        except KeyError:
            sig = None
    if sig is None and root.origin == LEXICON_ORIGIN:
        sig, how = _term_mechanism(verdict, lexicon_terms or (), [m.signature for m in matches])
        if sig is None:
            return {}
    if sig is None:
        cands = [s for s in catalogue().values() if s.layer == verdict and root.kind in s.kinds]
        matched = [m.signature for m in matches if m.signature in cands]
        if matched:
            sig, how = matched[0], "explains the deciding line; the notes match it too"
        elif cands:
            order = list(catalogue())
            sig = max(cands, key=lambda s: (groups_hit(s, root.line), -order.index(s.id)))
            how = "explains the deciding line"
    if sig is None:
        return {}
    return {"id": sig.id, "title": sig.title, "root_cause": sig.root_cause, "confirm": sig.confirm, "from": how}


def _finding(s: Signal):
    sev = {"fail": "critical", "warn": "warning"}.get(s.verdict, "info")
    return Finding(sev, s.layer, s.kind, s.message, s.line, None)


def _reason(s: Signal, prefix: str = "") -> str:
    return f'{prefix}[{s.layer}/{s.kind}] "{s.line}" -> {s.message}'


def _next_checks(verdict, signals, score, healthy) -> list[dict]:
    keys = []
    if verdict is not None:
        keys += [s.check for s in sorted(signals, key=lambda s: -s.weight) if s.layer == verdict and s.verdict in
                 ("fail", "warn")]
    rivals = [L for L in LAYERS if L != verdict and score[L] > 0]
    for L in rivals:
        keys += [s.check for s in signals if s.layer == L and s.verdict in ("fail", "warn")][:1]
    for L in LAYERS:  # rule out layers with no evidence at all (cheap first looks)
        if L != verdict and score[L] == 0 and healthy[L] == 0:
            keys.append(_FIRST_LOOK[L])
    out, seen = [], set()
    for k in keys:
        if k in seen:
            continue
        if k.startswith("sig:"):
            try:
                sg = signature(k[4:])
            except KeyError:
                continue
            seen.add(k)
            layer, cmd, mins, why = sg.layer, sg.confirm, sg.minutes, f"confirms '{sg.title}'"
            role = "confirm" if layer == verdict else "rule out"
            out.append({"layer": layer, "command": cmd, "minutes": mins, "purpose": role, "why": why})
            continue
        base, *fills = k.split("|")
        if base not in NEXT_CHECKS:
            continue
        seen.add(k)
        layer, cmd, mins, why = NEXT_CHECKS[base]
        if fills:            # values read from the evidence (e.g. the peer IP and HCA of a completion error)
            sub = dict(zip(("peer", "hca"), fills))
            cmd, why = cmd.format(**sub), why.format(**sub)
        role = "confirm" if layer == verdict else "rule out"
        out.append({"layer": layer, "command": cmd, "minutes": mins, "purpose": role, "why": why})
    order = {"confirm": 0, "rule out": 1}
    out.sort(key=lambda c: (c["minutes"], order[c["purpose"]]))
    return out


def _best_matches(matches, kinds=()) -> list:
    """One match per signature (the best); full matches first, then the signatures that explain a line the
    tools printed in the same paste (their ``kinds``), then the share of concepts and how specific the
    matched phrasings are (:func:`labutil.troubleshoot.signatures.cue_specificity`)."""
    best: dict = {}
    for m in matches:
        b = best.get(m.signature.id)
        if b is None or (m.full, m.score) > (b.full, b.score):
            best[m.signature.id] = m
    kinds = set(kinds)
    return sorted(best.values(), key=lambda m: (-m.full, -bool(kinds & set(m.signature.kinds)), -m.score,
                                                -cue_specificity(m.cues), m.signature.id))


def _change_my_mind(verdict, root, signals, score, matches, mechanism: str | None = None) -> list[dict]:
    """Evidence that would move the verdict to another layer (or clear it), most specific first: the
    contradictions of the signature the verdict rests on (or of the signatures that explain the root
    signal's kind), the rival layers that already have some evidence, then the generic ones."""
    out: list[dict] = []

    def add(layer, evidence, source):
        if len(out) < 5 and all(o["evidence"] != evidence for o in out):
            out.append({"layer": layer, "evidence": evidence, "source": source})

    if verdict is None:
        for m in matches[:3]:
            add(m.signature.layer, f"'{m.signature.confirm}' confirms '{m.signature.title}'",
                f"signature:{m.signature.id}")
        for L in LAYERS:
            if score[L] > 0 and not any(o["layer"] == L for o in out):
                top = max((s for s in signals if s.layer == L and s.verdict in ("fail", "warn")), key=lambda s: s.weight)
                add(L, f"a direct failure behind the hint [{L}/{top.kind}] (run: {_cmd_of(top.check)})", "rival layer")
        return out
    sigs = []
    if mechanism:                     # the mechanism the verdict names says first what would refute it
        try:
            sigs.append(signature(mechanism))
        except KeyError:
            pass
    if root.kind.startswith("sig:") and root.kind[4:] != mechanism:
        try:
            sigs.append(signature(root.kind[4:]))
        except KeyError:
            pass
    sigs += [m.signature for m in matches if m.signature.layer == verdict and m.signature not in sigs][:1]
    sigs += [sg for sg in catalogue().values() if root.kind in sg.kinds and sg not in sigs][:2]
    for sg in sigs:
        for layer, evidence in sg.contradicts:
            add(layer, evidence, f"signature:{sg.id}")
    for L in sorted((L for L in LAYERS if L != verdict and score[L] > 0), key=lambda L: -score[L]):
        top = max((s for s in signals if s.layer == L and s.verdict in ("fail", "warn")), key=lambda s: s.weight)
        add(L, f"[{L}/{top.kind}] \"{top.line[:90]}\" confirmed as a direct failure (run: {_cmd_of(top.check)})",
            "rival layer")
    covered = {o["layer"] for o in out}
    for layer, evidence in GENERIC_CONTRADICTIONS.get(verdict, ()):
        if layer not in covered:      # a specific refutation for that layer already says it better
            add(layer, evidence, "generic")
    return out


def _cmd_of(check: str) -> str:
    if check.startswith("sig:"):
        try:
            return signature(check[4:]).confirm
        except KeyError:
            return check
    base, *fills = check.split("|")
    cmd = NEXT_CHECKS.get(base, (None, check))[1]
    return cmd.format(**dict(zip(("peer", "hca"), fills))) if fills else cmd


# ----------------------------------------------------------------------------------- walkthroughs
def _walkthroughs() -> dict:
    return data_files.load("troubleshoot_incidents.toml")


def walkthrough_names() -> list[str]:
    """Incident walkthroughs (labutil/data/troubleshoot_incidents.toml), each from a public thread."""
    return list(_walkthroughs())


def walkthrough(name: str) -> dict:
    """Raw entry: title, source (URL), symptom, expected_layer, obvious_layer, evidence (name -> text), lesson."""
    t = _walkthroughs()
    if name not in t:
        raise validate.unknown_name("walkthrough", name, t)
    return t[name]


def triage_walkthrough(name: str, hide=(), cluster=None) -> Diagnosis:
    """Triage walkthrough ``name`` with the evidence items in ``hide`` left out."""
    w = walkthrough(name)
    ev = w.get("evidence", {})
    hide = set(hide)
    for k in hide:
        if k not in ev:
            raise validate.unknown_name("evidence", k, ev)
    kept = {k: v for k, v in ev.items() if k not in hide}
    return triage(kept, cluster=cluster, symptom=w.get("symptom"), n_ranks=w.get("n_ranks"))


def score_incidents(cases: Mapping) -> dict:
    """Run :func:`triage` on incident write-ups and count the ones placed in the layer the thread settled on.

    ``cases``: ``{name: {"text": ..., "layer": ..., "lang": ...}}`` (the format of the evaluation sets in
    ``tests/fixtures/triage_*.toml``). Returns ``placed`` and ``total``, ``by_layer`` and ``by_lang``
    (``{key: (placed, total)}``; a language other than ``en`` counts as ``zh``: Chinese or mixed notes),
    the names ``missed`` and, among them, ``no_verdict`` (triage said "not known yet": verdict None) —
    the others were placed in a wrong layer.
    """
    if not isinstance(cases, Mapping):
        raise TypeError(f"cases must be a mapping of name -> case; got {type(cases).__name__}")
    by_layer: dict = {}
    by_lang: dict = {}
    missed, no_verdict = [], []
    for name, c in cases.items():
        for key in ("text", "layer"):
            if key not in c:
                raise KeyError(f"case {name!r} has no {key!r}; a case needs text, layer (and lang)")
        layer = validate.choice("layer", c["layer"], LAYERS)
        verdict = triage(c["text"]).first_failing_layer
        ok = verdict == layer
        lang = "en" if c.get("lang", "en") == "en" else "zh"
        for table, key in ((by_layer, layer), (by_lang, lang)):
            a, n = table.get(key, (0, 0))
            table[key] = (a + ok, n + 1)
        if not ok:
            missed.append(name)
            if verdict is None:
                no_verdict.append(name)
    placed = sum(a for a, _ in by_layer.values())
    return {"placed": placed, "total": len(cases), "by_layer": by_layer, "by_lang": by_lang, "missed": missed,
            "no_verdict": no_verdict}


def diagnosis_json(d: Diagnosis) -> str:
    return json.dumps(d.to_dict(), ensure_ascii=False, indent=2)


CLI_USAGE = ("usage: python -m labutil triage [--json] [--symptom TEXT] [--system NAME --nodes N] [--ranks N] "
             "FILE... | -")


def cli_main(argv) -> int:
    """``python -m labutil triage FILE... | -``: print the diagnosis (text or ``--json``); exit 0.

    Files that cannot be read are reported as unrecognised evidence, not as a crash. ``--system``
    and ``--nodes`` take the thresholds from ``labutil.cluster.Cluster.system(NAME, n_nodes=N)``."""
    import sys

    args = list(argv)
    as_json = False
    symptom = system = None
    nodes = ranks = None
    files = []
    it = iter(args)
    for a in it:
        if a in ("-h", "--help"):
            print(CLI_USAGE)
            return 0
        if a == "--json":
            as_json = True
        elif a in ("--symptom", "--system", "--nodes", "--ranks"):
            v = next(it, None)
            if v is None:
                print(f"{a} needs a value\n{CLI_USAGE}", file=sys.stderr)
                return 2
            if a == "--symptom":
                symptom = v
            elif a == "--system":
                system = v
            elif a == "--nodes":
                nodes = v
            else:
                ranks = v
        else:
            files.append(a)
    if not files:
        print(CLI_USAGE, file=sys.stderr)
        return 2
    evidence = {}
    for f in files:
        if f == "-":
            evidence["stdin"] = decode_text(sys.stdin.buffer.read()) if hasattr(sys.stdin, "buffer") else sys.stdin.read()
            continue
        try:
            evidence[f] = decode_text(Path(f).read_bytes())
        except OSError as exc:
            evidence[f] = f"(cannot read {f}: {exc.strerror or exc})"
    cluster = None
    if system is not None:
        try:
            from ..cluster import Cluster

            cluster = Cluster.system(system, n_nodes=int(nodes or 1))
        except (ImportError, KeyError, ValueError, TypeError) as exc:
            print(f"--system {system!r}: {exc}", file=sys.stderr)
            return 2
    try:
        n = int(ranks) if ranks is not None else None
    except ValueError:
        print(f"--ranks must be a whole number of ranks (1 to {MAX_RANKS}); got {ranks!r}\n{CLI_USAGE}", file=sys.stderr)
        return 2
    try:
        d = triage(evidence, cluster=cluster, symptom=symptom, n_ranks=n)
    except ValueError as exc:
        print(f"{exc}\n{CLI_USAGE}", file=sys.stderr)
        return 2
    print(diagnosis_json(d) if as_json else d.text())
    return 0


def _bundles() -> dict:
    return data_files.load("troubleshoot_bundles.toml")


def bundle(name: str) -> str:
    """Text of a shipped pasted bundle (labutil/data/troubleshoot_bundles.toml)."""
    t = _bundles()
    if name not in t:
        raise validate.unknown_name("bundle", name, t)
    return t[name]["text"]
