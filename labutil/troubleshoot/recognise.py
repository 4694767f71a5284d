"""Recognisers: turn pasted evidence (job logs, tool outputs, notes) into :class:`Signal` objects.

Two kinds of recogniser run over every fragment of a bundle:

- **block recognisers** find a tool's output inside a fragment (its header or its key lines) and
  hand that block to the tool's parser in :mod:`labutil.parsers` / :mod:`labutil.fioparse`, then to
  the rules of :mod:`labutil.health` (ibstat, ibv_devinfo, perfquery pairs, nccl-tests, the
  ``NCCL_DEBUG=INFO`` transport, nvidia-smi table / ``-q`` / csv throttle reasons, dcgmi diag,
  lfs df, lfs check servers, fio, show_gids, mounts, nfsstat, per-rank step timings, py-spy dumps);
- **line recognisers** (:data:`LINE_RULES`) match single log lines whose text has a fixed form in
  the software that prints it. Formats and meanings, with the public threads they were taken from:

  * NCCL ``WARN`` lines ``host:pid:tid [dev] file.cc:line NCCL WARN ...`` (NCCL ``src/debug.cc``):
    ``NET/IB : Got completion [from peer ...] with error 12`` / ``status=12`` = IBV_WC_RETRY_EXC_ERR,
    the peer NIC never acknowledged (link down, RoCE routing or GID index; NVIDIA/nccl #426, #902,
    #1814); ``Connect to <ip> failed : Connection refused`` / ``socketStartConnect`` during
    bootstrap (pytorch/pytorch #68893, NVIDIA/nccl-tests #166); ``Call to ibv_modify_qp failed``
    (NVIDIA/nccl #769); ``Mismatched collective detected`` (NVIDIA/nccl #296);
  * PyTorch ProcessGroupNCCL watchdog lines (``[Rank r] Watchdog caught collective operation
    timeout: WorkNCCL(SeqNum=..., OpType=..., ...) ran for N milliseconds``; torch 1.x-2.x,
    Megatron-LM #1207, LlamaFactory #7396) - a SYMPTOM: some rank did not arrive;
  * Python tracebacks: ``FileNotFoundError``, ``OSError: [Errno 5|28|116|122]``, ``torch.cuda.
    OutOfMemoryError: CUDA out of memory`` (both message vintages), ``CUDA error: uncorrectable ECC
    error encountered`` (vllm-project/vllm #5222, kohya-ss/sd-scripts #1434), ``PytorchStreamReader
    failed reading zip archive`` (truncated checkpoint);
  * kernel lines: ``NVRM: Xid (PCI:...): N, ...`` (NVIDIA "XID Errors"), ``NVRM: The NVIDIA GPU ...
    has fallen off the bus`` without an XID (NVIDIA/NVSentinel #155), ``nfs: server X not
    responding, still trying``, ``LustreError`` / ``Lustre: ... Connection to ... was lost`` /
    ``LNet: ... Timed out tx`` (aws/aws-parallelcluster #2701, jade-hpc-gpu #14), ``task ... blocked
    for more than 120 seconds``, ``Out of memory: Killed process``, ``mlx5_core ... Link DOWN``;
  * serving engines: vLLM ``No available memory for the cache blocks`` (vllm-project/vllm #2248,
    #10439), ``# GPU blocks: 0``, ``... is larger than the maximum number of tokens that can be
    stored in KV cache``, ``preempted by PreemptionMode.RECOMPUTE ... not enough KV cache space``;
  * version banners (``NCCL version 2.18.3+cuda12.2``, ``Driver Version: 535.x``, ``torch 2.1``,
    ``NET/Plugin`` paths) compared across hosts (NVIDIA/nccl #354 "different NCCL versions on
    different nodes", #1634 a net plugin on some nodes only).

  * configuration faults that look like hardware or network: ``Call to ibv_create_qp/ibv_reg_mr failed``
    = locked-memory limit or peer-memory module (NVIDIA/nccl-tests #206, NVIDIA/nccl #1129; the NCCL user
    guide "Troubleshooting" section on memlock limits in containers), ``insufficient shared memory (shm)``
    (PyTorch DataLoader), PCIe ACS / IOMMU blocking GPU peer-to-peer (NCCL user guide "Troubleshooting",
    PCI Access Control Services), ``message truncated : receiving N bytes instead of M`` (NVIDIA/nccl #1328).

Weights (how strongly one signal points at its layer, 0-1) are COURSE POLICY, stated next to each
rule: 0.9 for a line that names a failed component, 0.5-0.8 for a strong but indirect sign, <= 0.35
for a symptom that every layer can produce (watchdog timeouts, peers closing connections).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .. import fioparse, health
from ..reliability import XID_GUIDE as _XID_GUIDE
from .. import parsers as P

__all__ = ["Signal", "Fragment", "LineRule", "LINE_RULES", "recognise", "split_fragments", "BLOCK_KINDS"]

_LAYER_OF_SEV = {"critical": "fail", "warning": "warn", "info": "info"}


@dataclass(frozen=True)
class Signal:
    """One piece of evidence: ``verdict`` 'fail' | 'warn' (points at ``layer``), 'pass' (the layer
    looked healthy) or 'info'; ``weight`` 0-1; ``direct`` False for symptoms that any layer can
    cause (they are discounted when that layer has healthy evidence); ``line`` the quoted text."""

    layer: str
    kind: str
    verdict: str
    weight: float
    line: str
    message: str
    source: str
    check: str
    direct: bool = True


@dataclass
class Fragment:
    name: str
    text: str
    kinds: list
    signals: list


@dataclass(frozen=True)
class LineRule:
    kind: str
    layer: str
    verdict: str
    weight: float
    pattern: re.Pattern
    message: str
    check: str
    direct: bool = True


def _r(p):
    return re.compile(p, re.I)


# Data-like paths: a missing one means the data/storage side, not the code (course heuristic).
_DATA_PATH = re.compile(r"(/(?:lustre|gpfs|nfs|mnt|data|datasets?|scratch|shared|fsx|weka|beegfs|cpfs|juicefs)\b|"
                        r"\.(?:bin|idx|arrow|parquet|tar|npy|npz|jsonl|tfrecord|mds|safetensors|pt|pth|jpe?g|png|"
                        r"wav|mp4|h5|hdf5|zst|gz)\b|shard|_data_|dataset)", re.I)

#: Line recognisers: (kind, layer, verdict, weight, regex, message, next-check key, direct)
LINE_RULES: tuple[LineRule, ...] = tuple(LineRule(k, lay, v, w, _r(p), m, c, d) for k, lay, v, w, p, m, c, d in (
    # ------------------------------------------- software rules that must win over look-alike lines below
    ("shm_too_small", "software", "fail", 0.75,
     r"insufficient shared memory \(shm\)|Unexpected bus error encountered in worker|failed to extend /dev/shm|"
     r"Call to posix_fallocate failed|shm_open failed|Error while (?:creating|attaching to) shared memory segment|"
     r"No space left on device.*?/dev/shm|/dev/shm.*No space left",
     "the container's /dev/shm is too small (data-loader workers, NCCL's shared-memory transport): a "
     "container configuration fault (--shm-size / --ipc=host), not the storage", "container_shm", True),
    ("rdma_memlock", "software", "fail", 0.7,
     r"Call to ibv_(?:create_qp|create_cq|reg_mr\w*|alloc_pd) failed|ibv_create_cq\(.*\) failed: Cannot allocate memory|"
     r"set max locked memory \(ulimit -l\)",
     "creating RDMA resources failed: almost always the locked-memory limit (ulimit -l) of the container/job "
     "(docker --ulimit memlock=-1, /etc/security/limits.conf) or GPUDirect (nvidia-peermem) for GPU buffers; "
     "the fabric itself is not involved (NVIDIA/nccl-tests #206, NVIDIA/nccl #1129)", "rdma_limits", True),
    ("port_in_use", "software", "fail", 0.75, r"Address already in use|errno: 98\b|EADDRINUSE",
     "the rendezvous/master port is already taken on this node (a previous run still alive, or two jobs with the "
     "same MASTER_PORT)", "socket_path", True),
    ("nccl_size_mismatch", "software", "fail", 0.6, r"message truncated : receiving \d+ bytes instead of \d+",
     "two ranks disagree on a message size: different NCCL versions/settings on the nodes or mismatched calls "
     "(NVIDIA/nccl #1328)", "versions", True),
    ("driver_mismatch", "software", "fail", 0.8,
     r"CUDA driver version is insufficient|cudaErrorInsufficientDriver|Driver/library version mismatch|"
     r"forward compatibility was attempted on non supported HW|CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "the user-space CUDA/NVML libraries do not match the loaded kernel driver (a driver package upgraded under a "
     "running node, or an image built for another driver): lyulyul/shine-cluster #30, NVIDIA/gpu-operator #898",
     "driver_userspace", True),
    ("duplicate_gpu", "software", "fail", 0.8, r"Duplicate GPU detected",
     "two ranks were given the same GPU (LOCAL_RANK / CUDA_VISIBLE_DEVICES / torch.cuda.set_device): a launch "
     "configuration fault (NVIDIA/nccl #1005-style 'rank 1 and rank 0 both on CUDA device')", "launch_config", True),
    ("invalid_device", "software", "fail", 0.75, r"invalid device ordinal|CUDA_ERROR_INVALID_DEVICE|cudaErrorInvalidDevice",
     "the process asked for a GPU index that is not visible to it: more processes per node than GPUs, or "
     "CUDA_VISIBLE_DEVICES / LOCAL_RANK set wrong", "launch_config", True),
    ("fabric_manager", "gpu", "fail", 0.85,
     r"system not yet initialized|cudaErrorSystemNotReady|CUDA_ERROR_SYSTEM_NOT_READY|"
     r"NV_WARN_NOTHING_TO_DO|fabric manager (?:is )?not (?:running|started)|nvidia-fabricmanager\.service.*failed",
     "CUDA reports the system not ready: on NVSwitch systems (HGX/DGX) nvidia-fabricmanager is not running or does "
     "not match the driver version, so the GPUs cannot be used", "fabric_manager", True),
    ("pcie_acs", "gpu", "warn", 0.6, r"ACSCtl:\s*SrcValid\+",
     "PCIe Access Control Services are enabled on a bridge (lspci ACSCtl SrcValid+): GPU peer-to-peer traffic is "
     "redirected through the root complex, NCCL P2P hangs or crawls (NCCL user guide, PCI ACS)", "pcie_acs", True),
    # ---------------------------------------------------------------- network
    ("ib_completion_error", "network", "fail", 0.9,
     r"Got completion (?:from peer \S+ )?with (?:error|status=?)\s*(?:12|13)\b|IBV_WC_RETRY_EXC_ERR|"
     r"transport retry counter exceeded|mlx5: \S+: got completion with error",
     "RDMA work completion failed with a retry-exceeded status (12/13): the peer NIC never acknowledged. "
     "Link down or flapping, RoCE routing / wrong GID index, or PFC/ECN misconfiguration", "ib_path", True),
    ("ib_completion_other", "network", "warn", 0.6,
     r"Got completion (?:from peer \S+ )?with (?:error|status=?)\s*(?!12\b|13\b)\d+",
     "RDMA work completion failed (status other than retry-exceeded: e.g. 4 local protection = memory "
     "registration / GPUDirect RDMA, 5 flushed after an earlier error)", "ib_path", True),
    ("nccl_connect_failed", "network", "fail", 0.75,
     r"NCCL WARN.*(?:Connect to \S+ failed|socketStartConnect|Connection refused|Call to connect returned "
     r"Connection (?:timed out|refused)|Bootstrap.*(?:failed|timed? ?out))|socketStartConnect: Connect to \S+ failed|"
     r"Last error:.*Connect to \S+ failed|Call to connect returned Connection (?:timed out|refused)",
     "NCCL could not open a TCP connection to a peer (bootstrap / proxy): wrong NCCL_SOCKET_IFNAME, "
     "firewall, unroutable interface, or the peer process already died", "socket_path", True),
    ("store_connect_failed", "network", "fail", 0.7,
     r"(?:DistNetworkError|TCPStore|c10d).*(?:Connection refused|timed out while trying to connect|"
     r"Connection reset by peer|No route to host)|The client socket has timed out while trying to connect|"
     r"ConnectionRefusedError|\[Errno 111\] Connection refused|\[Errno 113\] No route to host|"
     r"client socket has failed to connect to|client socket has timed out(?: after \S+)? while trying to connect|"
     r"TCP client failed to connect",
     "torch.distributed could not reach the rendezvous store (MASTER_ADDR:MASTER_PORT): address, port, "
     "firewall, or the rank-0 process is not up", "socket_path", True),
    ("rendezvous_timeout", "network", "warn", 0.5,
     r"DistStoreError: Timed out after \d+ seconds waiting for clients|Timed out initializing process group in store "
     r"based barrier|RendezvousTimeoutError|RendezvousConnectionError|Socket Timeout",
     "not every rank reached the rendezvous: another node cannot reach MASTER_ADDR:PORT (network/firewall) or "
     "its processes never started (scheduler/container)", "socket_path", True),
    ("ibv_call_failed", "network", "fail", 0.8, r"NCCL WARN.*(?:Call to )?ibv_\w+ failed",
     "an ibverbs call failed while NCCL set up an RDMA connection (QP transition: GID index, MTU, "
     "unreachable peer)", "ib_path", True),
    ("ib_device_missing", "network", "warn", 0.6,
     r"NET/IB : No device found|Failed to open libibverbs|Unable to open device|NCCL_IB_DISABLE set by environment to 1",
     "NCCL found no usable RDMA device (no /dev/infiniband in the container, no rdma-core, or IB disabled): "
     "inter-node traffic falls back to TCP sockets", "nccl_transport", True),
    ("socket_network", "network", "warn", 0.6, r"NCCL INFO Using network Socket\b",
     "NCCL uses TCP sockets for inter-node traffic (several times slower than RDMA)", "nccl_transport", True),
    ("ib_async_event", "network", "warn", 0.5, r"NET/IB : Got async event\s*:\s*(?:port error|local catastrophic|"
     r"device fatal|GID table change)", "the HCA reported an asynchronous port/device event: the link went down "
     "or the device reset", "ib_ports", True),
    ("kernel_link_down", "network", "warn", 0.55,
     r"(?:mlx5_core|mlx5_\d+|ib\d|bnxt_re).*(?:Link DOWN|link down|Link is Down)|NETDEV WATCHDOG",
     "the kernel saw a NIC link go down (cable, transceiver, switch port)", "ib_ports", True),
    ("socket_iface", "network", "fail", 0.75,
     r"No interface found in the same subnet as remote address|Bootstrap : no socket interface found|"
     r"No usable listening interface found|Call to bind failed : Cannot assign requested address",
     "NCCL found no network interface that reaches the peers (NCCL_SOCKET_IFNAME names a missing interface, or a "
     "container on a private bridge network): set NCCL_SOCKET_IFNAME to the routable interface of every node / run "
     "the container with host networking (NVIDIA/nccl #331, #929; pytorch/pytorch #29482)", "socket_path", True),
    ("peer_closed", "network", "warn", 0.25,
     r"Connection closed by remote peer|Connection reset by peer|remote process exited or there was a network error",
     "a peer closed its connection: usually because that peer process died (look at its node), "
     "sometimes a network drop", "peer_node", False),
    # ---------------------------------------------------------------- storage
    ("nfs_not_responding", "storage", "fail", 0.9, r"nfs: server \S+ not responding",
     "the NFS client lost its server: every read of the mount blocks until it answers (hard mount)",
     "nfs_server", True),
    ("lustre_lost", "storage", "fail", 0.85,
     r"LustreError|Lustre: .*Connection to \S+ .*was lost|ptlrpc_expire_one_request.*(?:timed out|network error)|"
     r"LNet: .*Timed out tx|Lustre: .*evicted",
     "the Lustre client lost or timed out on an MDT/OST (or its LNet path): file operations on it hang "
     "until recovery", "lustre_servers", True),
    ("io_error", "storage", "fail", 0.85, r"(?:OSError|IOError).*\[Errno 5\]|Input/output error|I/O error, dev \S+|"
     r"EXT4-fs error|XFS \(\S+\): .*(?:I/O error|Corruption)|metadata I/O error",
     "an I/O error from the file system (EIO): failing storage target, soft-mounted NFS timing out, or "
     "an evicted Lustre client", "storage_mount", True),
    ("stale_handle", "storage", "fail", 0.9, r"\[Errno 116\]|Stale file handle",
     "stale NFS file handle: the file was replaced or the export changed under a running job", "storage_mount", True),
    ("no_space", "storage", "fail", 0.9, r"\[Errno 28\]|No space left on device|PytorchStreamWriter failed writing",
     "the target file system is full (or a full OST received the stripe): the write failed", "storage_capacity", True),
    ("quota", "storage", "fail", 0.85, r"\[Errno 122\]|Disk quota exceeded",
     "the user/project quota is exhausted: writes fail", "storage_capacity", True),
    ("read_only_fs", "storage", "fail", 0.8, r"\[Errno 30\]|Read-only file system",
     "the file system was remounted read-only (usually after an error)", "storage_mount", True),
    ("truncated_checkpoint", "storage", "fail", 0.7,
     r"PytorchStreamReader failed reading zip archive|failed finding central directory|"
     r"UnpicklingError|EOFError: Ran out of input|(?:checkpoint|\.pt\b|\.pth\b|\.bin\b|safetensors).*unexpected EOF|"
     r"unexpected EOF.*(?:checkpoint|\.pt\b|\.pth\b|safetensors)",
     "the checkpoint file is truncated or corrupt: a save was interrupted or did not reach the storage",
     "checkpoint_files", True),
    ("gpfs", "storage", "fail", 0.75, r"mmfs(?:d)?\b.*(?:expel|unmount|lost|error)|GPFS.*(?:expel|unmount|lost)|"
     r"libceph: .*(?:session lost|socket closed|connect .* error)|ceph: .*(?:hung|evicted|blocklisted)|"
     r"Connection reset by (?:weka|beegfs)|beegfs.*(?:communication error|unreachable)",
     "the parallel file system client lost its cluster (expelled / unmounted)", "storage_mount", True),
    ("object_store", "storage", "warn", 0.6, r"ReadTimeoutError: Read timeout on endpoint|(?-i:\bSlowDown\b|503 Slow Down)|"
     r"RequestTimeTooSkewed|botocore\.exceptions\.\w*(?:Timeout|ConnectionError)|s3fs.*(?:timeout|Timeout)",
     "the object store throttled or timed out reads (S3 SlowDown / read timeouts): the loader starves",
     "read_bandwidth", True),
    ("hung_task", "storage", "warn", 0.5, r"task \S+ blocked for more than \d+ seconds|hung_task_timeout_secs",
     "a process is stuck in uninterruptible I/O wait (D state): usually a hung file system", "storage_mount", True),
    # ---------------------------------------------------------------- GPU / node hardware
    ("fallen_off_bus", "gpu", "fail", 0.95, r"fallen off the bus|GPU is lost|RmInitAdapter failed|"
     r"Unable to determine the device handle for GPU\S*: (?:Unknown Error|GPU is lost)",
     "a GPU fell off the PCIe bus / cannot be initialised: hardware, power or PCIe fault (drain the node)",
     "xid", True),
    ("ecc_uncorrectable", "gpu", "fail", 0.9,
     r"uncorrectable ECC error encountered|CUDA_ERROR_ECC_UNCORRECTABLE|cudaErrorECCUncorrectable",
     "the GPU hit an uncorrectable memory (ECC) error: the GPU needs a reset / row remap, RMA if it recurs",
     "gpu_memory", True),
    ("nvlink_error", "gpu", "fail", 0.8, r"NVLink.*(?:error|fatal|down)|nvswitch.*(?:fatal|error)|fabric manager.*(?:fail|error)",
     "NVLink / NVSwitch / Fabric Manager error: intra-node GPU links are down", "nvlink", True),
    ("pcie_aer_fatal", "gpu", "warn", 0.6, r"AER: (?:Multiple )?Uncorrected \(Fatal\)|AER: Uncorrected|PCIe Bus Error: "
     r"severity=Uncorrected", "uncorrectable PCIe errors on the node (GPU/NIC/switch link): hardware",
     "xid", True),
    ("p2p_iommu", "gpu", "warn", 0.55, r"peer access is not supported between these two devices|"
     r"AMD-Vi: Event logged \[IO_PAGE_FAULT|DMAR: \[DMA (?:Read|Write)\]|DMAR: DRHD: handling fault",
     "GPU peer-to-peer traffic is blocked or faulting (IOMMU / PCIe ACS enabled on the node): intra-node "
     "collectives hang or fail; a node BIOS/kernel configuration issue", "nvlink", True),
    ("node_failed", "gpu", "fail", 0.55, r"DUE TO NODE FAILURE|Node failure on \S+|\bNODE_FAIL\b",
     "the scheduler lost a node during the job (slurmd stopped answering: crash, power, kernel panic or its "
     "management network): look at that node's console/kernel log first", "peer_node", True),
    ("node_hw", "gpu", "warn", 0.45, r"mce: \[Hardware Error\]|Machine check events logged|EDAC .*(?:UE|CE) |"
     r"NodeFail", "node hardware errors (CPU/memory machine checks, the scheduler saw the "
     "node fail)", "peer_node", True),
    ("no_gpu", "gpu", "warn", 0.5, r"no CUDA-capable device is detected|No CUDA GPUs are available|"
     r"CUDA_ERROR_NO_DEVICE", "the process sees no GPU: a lost GPU, or a visibility/cgroup configuration",
     "gpu_state", True),
    ("cpu_thermal", "gpu", "warn", 0.45, r"temperature above threshold|cpu clock throttled|thermal event",
     "the node's CPU is thermally throttled (cooling): its ranks slow down the whole job", "gpu_thermal", True),
    # ---------------------------------------------------------------- software
    ("cuda_oom", "software", "fail", 0.8, r"CUDA out of memory|CUDA error: out of memory|OutOfMemoryError|"
     r"CUBLAS_STATUS_ALLOC_FAILED|"
     r"Cuda failure 'out of memory'", "the job asked for more GPU memory than is free: batch/sequence size, "
     "activation memory, or another process on the same GPU (not a hardware fault)", "gpu_memory_plan", True),
    ("host_oom", "software", "fail", 0.75, r"Out of memory: Killed process|oom-kill|oom_kill event|exitcode\s*:\s*-9\b|"
     r"invoked oom-killer|\bOOM[ -]killer\b|"
     r"is killed by signal: Killed|Killed\s*$",
     "the kernel OOM killer ended a process (host RAM): data-loader workers, pinned memory or a "
     "checkpoint gathered on one rank", "host_memory", True),
    ("kv_cache_none", "software", "fail", 0.85,
     r"No available memory for the cache blocks|# GPU blocks: 0\b|larger than the maximum number of tokens that can "
     r"be stored in KV cache|Insufficient memory for KV cache|KV cache is needed, which is larger than the available "
     r"KV cache memory|Not enough memory\. Please try to increase --mem-fraction-static", "the serving engine has no room for the KV cache "
     "after the weights at this gpu_memory_utilization / max_model_len / tensor-parallel size: a configuration "
     "limit, not a broken GPU", "kv_budget", True),
    ("kv_cache_preempt", "software", "warn", 0.55,
     r"preempted by PreemptionMode|not enough KV cache space|KV cache usage: 9\d(?:\.\d+)?%",
     "requests are preempted because the KV cache is full: the load exceeds the cache the configuration "
     "leaves (latency spikes, recomputation)", "kv_budget", True),
    ("nccl_mismatch", "software", "fail", 0.85, r"Mismatched collective detected",
     "ranks called different collectives or sizes: a code-path difference between ranks", "collective_debug", True),
    ("nccl_invalid_usage", "software", "warn", 0.5, r"ncclInvalidUsage|invalid usage",
     "NCCL rejected a call as invalid usage (mismatched calls, duplicate GPUs, bad arguments): the 'Last error' "
     "line says which", "collective_debug", True),
    ("nccl_cuda_error", "gpu", "warn", 0.35, r"unhandled cuda error|ncclUnhandledCudaError",
     "NCCL hit a CUDA error: read the 'Last error' line; often a GPU fault (XID) or a driver/CUDA mismatch",
     "xid", False),
    ("illegal_address", "software", "warn", 0.5,
     r"an illegal memory access was encountered|device-side assert triggered|misaligned address",
     "a kernel faulted on a bad address: usually a software bug (index out of range, a custom kernel), a "
     "hardware fault only when dmesg also shows XID 48/94/95 on that GPU", "cuda_debug", True),
    ("watchdog_symptom", "software", "warn", 0.3,
     r"Watchdog caught collective operation timeout|Timeout at NCCL work|NCCL watchdog thread terminated|"
     r"ProcessGroupNCCL.*timed? ?out|Some NCCL operations have failed or timed out|watchdog got stuck for \d+ seconds|"
     r"Heartbeat monitor timed out|NCCL communicator was aborted",
     "a collective timed out: some rank did not arrive (a symptom every layer can cause)", "hang_first_look", False),
    ("child_failed", "software", "info", 0.0, r"ChildFailedError|torch\.distributed\.elastic.*failed",
     "torchrun reports a failed worker (look at the first error of the first failing rank)", "hang_first_look", False),
    ("allocator_pressure", "software", "warn", 0.35, r"pytorch allocator cache flushes since last step|"
     r"high memory pressure", "the job runs at the edge of GPU memory (allocator flushes every step): slow steps "
     "now, OOM next", "gpu_memory_plan", True),
    ("sigkill", "software", "warn", 0.35, r"Signal 9 \(SIGKILL\)|received signal SIGKILL",
     "a process was SIGKILLed: the OOM killer or the scheduler (check dmesg and the job's memory)", "host_memory",
     False),
    ("gdr_disabled", "software", "warn", 0.6, r"GPU Direct RDMA Disabled for HCA",
     "NCCL could not enable GPUDirect RDMA (no nvidia-peermem / DMA-BUF support on the node): inter-node traffic is "
     "staged through host memory, busbw drops several-fold (NVIDIA/nccl #1537, #1412); a node driver-stack "
     "configuration, not the fabric", "gdr_module", True),
    # last: any other NCCL WARN is weak evidence about the communication path (it is no longer ignored)
    ("nccl_warn", "network", "warn", 0.3, r"NCCL WARN", "an NCCL warning without a known meaning: read it with the "
     "NCCL_DEBUG=INFO context around it", "nccl_transport", False),
))

_CODE_ERRORS = {"KeyError", "ValueError", "TypeError", "AttributeError", "IndexError", "AssertionError",
                "ImportError", "ModuleNotFoundError", "NameError", "NotImplementedError", "ZeroDivisionError",
                "UnboundLocalError", "JSONDecodeError", "SyntaxError"}
_TRACE_EXC = re.compile(r"^(?:\[rank\d+\]:\s*)?([A-Za-z_][\w.]*(?:Error|Exception|Interrupt))\s*:\s*(.*)$")
_FNF = re.compile(r"(?:FileNotFoundError|No such file or directory)[^'\"]*['\"]([^'\"]+)['\"]")
_XID_LINE = re.compile(r"NVRM:\s+Xid\s+\((?:PCI:)?([0-9a-fA-F:.]+)\)\s*:\s*(\d+)")
_XID_FATAL = re.compile(r"(?<![Nn]on)(?<![Nn]on-)(?<![Nn]on )\b[Ff]atal\b|uncontained", re.I)
_HOST_PREFIX = re.compile(r"(?:^|\s)([A-Za-z][\w.-]*):(\d+):(\d+)\s+\[\d+\]")
_VERSIONS = (
    ("NCCL", re.compile(r"NCCL version\s+(\d+\.\d+\.\d+)")),
    ("driver", re.compile(r"(?:Driver Version:|Nvidia driver version:)\s*(\d+\.\d+(?:\.\d+)?)")),
    ("CUDA", re.compile(r"CUDA Version:\s*(\d+\.\d+)")),
    ("torch", re.compile(r"(?:\btorch(?:==|\s+version[:\s]+|\.__version__\s*[:=]?\s*|\s+)|PyTorch version:\s*)"
                         r"(\d+\.\d+\.\d+\S*)")),
    ("deepspeed", re.compile(r"(?:DeepSpeed info: version=|deepspeed==)(\d+\.\d+\.\d+\S*)")),
    ("vllm", re.compile(r"(?:vLLM (?:API server )?version\s+|vllm==|Initializing an? (?:V1 )?LLM engine \(v)"
                        r"(\d+\.\d+\.\d+[^\s)]*)")),
    ("NCCL net plugin", re.compile(r"(Plugin Path : \S+|Could not find: libnccl-net\.so|No plugin found \(libnccl-net\.so\))")),
)


# ---------------------------------------------------------------------------------- fragments
_SPLIT = re.compile(r"^(?:\$\s+\S|#\s*\$\s+\S|==>\s.*<==\s*$|-{3,}\s*[^-\s].*[^-\s]\s*-{3,}\s*$|#{2,}\s+\S|\[?[\w.-]+@[\w.-]+"
                    r"[^\s]*\]?[$#]\s+\S)")


def split_fragments(name: str, text: str) -> list[tuple[str, str]]:
    """Split one pasted text at command prompts (``$ cmd``, ``user@host:~$ cmd``), ``==> file <==``
    headers (``tail`` / ``head`` of several files) and ``--- title ---`` / ``## title`` separators."""
    lines = text.split("\n")
    out, cur, title = [], [], name
    for ln in lines:
        if _SPLIT.match(ln.strip()) and any(x.strip() for x in cur):
            out.append((title, "\n".join(cur)))
            cur = []
        if _SPLIT.match(ln.strip()):
            title = f"{name}: {ln.strip()[:60]}"
        cur.append(ln)
    if any(x.strip() for x in cur):
        out.append((title, "\n".join(cur)))
    return out or [(name, text)]


def _host_of(line: str) -> str | None:
    m = _HOST_PREFIX.search(line)
    return m.group(1) if m else None


def _quote(line: str, n: int = 220) -> str:
    s = " ".join(line.strip().split())
    return s if len(s) <= n else s[: n - 3] + "..."


# ------------------------------------------------------------------------------ block recognisers
def _try(parser, text):
    try:
        return parser(text)
    except (P.ParseError, ValueError, KeyError, IndexError, TypeError, AttributeError, ZeroDivisionError):
        return None


def _findings_to_signals(findings, layer, kind, source, check, quote_fn=None, healthy_weight=0.0,
                         healthy_msg="", fail_weight=0.85, warn_weight=0.5, fallback_line=""):
    out = []
    bad = [f for f in findings if f.severity in ("critical", "warning")]
    for f in bad:
        v = _LAYER_OF_SEV[f.severity]
        line = quote_fn(f) if quote_fn else f"{f.component}: {f.check} = {f.value} (expected {f.expected})"
        out.append(Signal(layer, kind, v, fail_weight if v == "fail" else warn_weight, _quote(line),
                          f"{f.component}: {f.message}", source, check))
    if not bad and healthy_weight > 0:
        out.append(Signal(layer, kind, "pass", healthy_weight, _quote(fallback_line), healthy_msg, source, check))
    return out


def _ibstat(text, src, ctx):
    if "CA '" not in text or "State:" not in text:
        return None
    cas = _try(P.parse_ibstat, text)
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
    devs = _try(P.parse_ibv_devinfo, text)
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
    if "busbw" not in text or "algbw" not in text:
        return None
    r = _try(P.parse_nccl_tests, text)
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


_SHOW_GIDS = re.compile(r"^\s*(\S+)\s+(\d+)\s+(\d+)\s+([0-9a-fA-F:]{20,})\s+(?:(\d+\.\d+\.\d+\.\d+)\s+)?(v[12])\s+(\S+)",
                        re.M)
_IBV_GID = re.compile(r"GID\[\s*(\d+)\]:\s*(\S+?),?\s+RoCE\s*(v[12])", re.I)


def _show_gids(text, src, ctx):
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
    t = _try(P.parse_nvidia_smi, text)
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
    if "==============NVSMI LOG==============" not in text and not re.search(r"^GPU [0-9A-Fa-f]{4,8}:", text, re.M):
        m = _NVQ_SECTION.search(text)
        if not m:
            return None
        body = text[m.start():]
        if not body[:1].isspace():
            body = "\n".join("    " + ln for ln in body.split("\n"))
        text, excerpt = f"GPU {_NVQ_NO_BUS}\n" + body, True
    q = _try(P.parse_nvidia_smi_q, text)
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
    d = _try(P.parse_dcgmi_diag, text)
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
    df = _try(fioparse.parse_lfs_df, text)
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


_LFS_CHECK = re.compile(r"^(\S+-(?:OST|MDT)[0-9a-fA-F]{4}\S*)\s*:?\s*(active|check error.*|inactive|.*Resource temporarily "
                        r"unavailable.*)\.?\s*$", re.M)


def _lfs_check(text, src, ctx):
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


_MOUNT = re.compile(r"^(\S+)\s+on\s+(\S+)\s+type\s+(nfs4?|lustre|gpfs|beegfs|fuse\.\S+|wekafs|xfs|ext4)\s+\(([^)]*)\)|"
                    r"^(\S+)\s+(\S+)\s+(nfs4?|lustre|gpfs|beegfs|wekafs)\s+(\S+)\s+\d+\s+\d+\s*$", re.M)


def _mounts(text, src, ctx):
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


_NFSSTAT = re.compile(r"calls\s+retrans\s+authrefrsh\s*\n\s*(\d+)\s+(\d+)", re.I)


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


_TIMING = re.compile(r"\brank\s*[:=#\[]?\s*(\d+)\]?\b.*?\b(?:step[_ ]?time|iter(?:ation)?[_ ]?time|time(?:/step)?|"
                     r"elapsed|step took)\s*[:=]?\s*([\d.]+)\s*(ms|s|sec)\b", re.I)
_TIMING_CSV = re.compile(r"^\s*rank\s*,\s*(?:step\s*,\s*)?(step_time_s|step_time_ms|time_s|time_ms|compute_s)\b", re.I | re.M)


def _timings(text, src, ctx):
    per: dict = {}
    for m in _TIMING.finditer(text):
        v = float(m.group(2)) * (1e-3 if m.group(3).lower() == "ms" else 1.0)
        if v > 0:
            per.setdefault(int(m.group(1)), []).append(v)
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
    from . import straggler_slowdown
    s = straggler_slowdown(len(per), med[r] / overall, step_s=1.0)
    ctx["quant"]["straggler"] = {"rank": r, "slow_factor": med[r] / overall, "lost_gpu_equivalents": s["lost_gpu_per_hour"]}
    return "per-rank timings", [Signal("gpu", "straggler", "warn", 0.5, _quote(
        f"rank {r}: median step {med[r]:.3f} s vs {overall:.3f} s for the others ({med[r] / overall:.2f}x)"),
        f"rank(s) {slow[:4]} are slower than the rest and every step waits for them: {s['lost_gpu_per_hour']:.1f} of "
        f"{len(per)} GPUs' worth of work is lost. Check that node's GPU clocks/temperature, then its data loader",
        src, "straggler")]


_PYSPY_THREAD = re.compile(r"^Thread\s+(?:0x[0-9A-Fa-f]+|\d+)\s+\((active|idle|active\+gil|gil)\)", re.M)
_PYSPY_FRAME = re.compile(r"^\s+(\S+)\s+\(([^:()]+):(\d+)\)\s*$", re.M)
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
_CKPT_TIMER = re.compile(r"save-checkpoint\s*\.*\s*:\s*\(?\s*([\d.]+)", re.I)
_CKPT_LINE = re.compile(r"(?:sav(?:e|ed|ing)\w*\b[^\n]*?checkpoint|checkpoint[^\n]*?\bsav(?:e|ed|ing)\w*)[^\n]*?"
                        r"(?:took|in|time[:=]?|duration[:=]?)\s*([\d.]+)\s*(ms|s|sec|secs|seconds|min|minutes)\b", re.I)
_SIZE_GB = re.compile(r"([\d.]+)\s*(GB|GiB|TB)\b")


def _checkpoint_log(text, src, ctx):
    durs, lines, gbs = [], [], []
    for m in _CKPT_TIMER.finditer(text):
        durs.append(float(m.group(1)) / 1e3)
        lines.append(m.group(0))
    for ln in text.split("\n"):
        m = _CKPT_LINE.search(ln)
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


_IMPORT_STATE = re.compile(r"(?:^|\n)\s*(?:osc|mdc)\.(\S+?)\.import=?\s*\n(?:.*\n){0,6}?\s*state:\s*(\w+)", re.I)


def _lustre_import(text, src, ctx):
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


_NFSIO = re.compile(r"retrans\s+avg RTT \(ms\)[^\n]*\n\s*[\d.]+\s+[\d.]+\s+[\d.]+\s+\d+\s+\(\s*([\d.]+)%\)\s+([\d.]+)",
                    re.I)


def _nfsiostat(text, src, ctx):
    ms = _NFSIO.findall(text)
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
    r = _try(P.parse_perftest_bw, text)
    if r is None or not r.rows:
        return None
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
    t = _try(P.parse_nvidia_smi_topo, text)
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
    from .. import models

    key = re.sub(r"[^a-z0-9]", "", name.lower())
    hits = [m for m in models.transformer_names() if re.sub(r"[^a-z0-9]", "", m.lower()) in key]
    return max(hits, key=len) if hits else None


def catalog_gpu(name: str) -> str | None:
    """Catalog GPU for an nvidia-smi product name ('NVIDIA H100 80GB HBM3' -> 'H100-SXM')."""
    from .. import hardware

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
    from .. import inference

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
_ETHTOOL = re.compile(r"^\s*((?:rx|tx)_\w*(?:pause_storm_\w+_events|discards_phy|out_of_buffer|prio\d_discards|"
                      r"prio\d_pause|pause_ctrl_phy))\s*:\s*(\d+)\s*$", re.M)


def _ethtool_stats(text, src, ctx):
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
_LSMOD_CMD = re.compile(r"^\S*[$#]\s*(?:sudo\s+)?lsmod\s*\|\s*grep\s+(?:-\w+\s+)*['\"]?([\w|]*peer_?mem[\w|]*)", re.M)
_PEERMEM_ROW = re.compile(r"^\s*(nvidia_peermem|nv_peer_mem)\s+\d+\s+\d+", re.M)


def _lsmod_peermem(text, src, ctx):
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


BLOCK_KINDS = (_ibstat, _ibv_devinfo, _perfquery, _nccl_tests, _nccl_log, _show_gids, _nvidia_smi_table, _nvidia_smi_q,
               _nvidia_smi_csv, _dcgmi, _lfs_df, _lfs_check, _fio, _mounts, _nfsstat, _timings, _pyspy,
               _checkpoint_log, _lustre_import, _nfsiostat, _perftest, _topo, _dd, _serving, _ethtool_stats, _link_flap,
               _lsmod_peermem, _socket_bridge, _checkpoint_timeout)


# ---- fabric acceptance tools (ch12): mlxlink -c, ibdiagnet, iblinkinfo, ibswitches -------------------------
# Parsed by labutil.parsers.mlxlink / .ibdiagnet and labutil.topology; the degraded-link rule is
# labutil.links.diagnose_link (down / trained down / post-FEC errors / flaps -> degraded; raw BER -> watch).
def _mlxlink(text, src, ctx):
    if "Raw Physical BER" not in text and "Effective Physical BER" not in text and "Operational Info" not in text:
        return None
    m = _try(P.parse_mlxlink, text)
    if m is None:
        return None
    from .. import links
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
    from .. import topology
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
    from .. import topology
    sw = _try(topology.parse_ibswitches, text)
    if not sw:
        return None
    return "ibswitches", [Signal("network", "fabric_inventory", "info", 0.0, _quote(
        f"{len(sw)} switch(es), {sw[0]['physical_ports']} ports each" if len({x['ports'] for x in sw}) == 1
        else f"{len(sw)} switches"), "switch inventory read (compare the count with the fabric design)", src,
        "ib_ports")]


BLOCK_KINDS = BLOCK_KINDS + (_mlxlink, _ibdiagnet, _iblinkinfo, _ibswitches)


# ------------------------------------------------------------------------------- line recogniser
# Speed: a 10 MB paste has ~10^5 lines and there are ~60 line rules; running every case-insensitive
# regex on every line takes ~15 s in CPython (no literal fast-scan under re.I). Every rule has
# literal text that any match must contain (extracted from the compiled pattern below); a line is
# tried only against the rules whose literal occurs in it (str.find over the lowercased text), which
# gives the same result as trying every rule (a rule cannot match a line without its literal).
try:  # CPython 3.11+
    from re import _parser as _sre_parse
    from re._constants import BRANCH as _BRANCH, LITERAL as _LITERAL, MAX_REPEAT as _MAXR, \
        MIN_REPEAT as _MINR, SUBPATTERN as _SUBP
except ImportError:  # pragma: no cover - older CPython
    import sre_parse as _sre_parse
    from sre_constants import BRANCH as _BRANCH, LITERAL as _LITERAL, MAX_REPEAT as _MAXR, \
        MIN_REPEAT as _MINR, SUBPATTERN as _SUBP


def _needed_seq(items):
    """A set of lowercase strings one of which every match of this sequence contains (or None)."""
    cands, run = [], []
    for op, av in list(items) + [(None, None)]:
        if op is _LITERAL:
            run.append(chr(av).lower())
            continue
        if run:
            cands.append(frozenset(["".join(run)]))
            run = []
        if op is _SUBP:
            cands.append(_needed_seq(av[-1]))
        elif op is _BRANCH:
            subs = [_needed_seq(b) for b in av[1]]
            cands.append(None if any(x is None for x in subs) else frozenset().union(*subs))
        elif op in (_MAXR, _MINR) and av[0] >= 1:
            cands.append(_needed_seq(av[2]))
    cands = [c for c in cands if c and min(map(len, c)) >= 3]
    return max(cands, key=lambda c: (min(map(len, c)), -len(c)), default=None)


def needed_literals(pattern: str):
    """Lowercase strings one of which every (case-insensitive) match of ``pattern`` contains; None
    when the pattern has no literal of >= 3 characters (then it is tried on every line)."""
    try:
        return _needed_seq(_sre_parse.parse(pattern, re.I))
    except (re.error, TypeError, ValueError, IndexError):  # pragma: no cover - defensive
        return None


_TRACE_LITS = frozenset({"error", "exception", "interrupt"})
_RULE_LITS = tuple(needed_literals(r.pattern.pattern) for r in LINE_RULES)
_VERSION_LITS = tuple(needed_literals(rx.pattern) for _, rx in _VERSIONS)
_XID_LITS = needed_literals(_XID_LINE.pattern)
_FNF_LITS = frozenset({"filenotfounderror"}) | (needed_literals(_FNF.pattern) or frozenset())
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def _candidates(text: str, n_lines: int) -> dict:
    """line index -> set of keys ('r<i>' rule, 'v<i>' version, 'xid', 'fnf', 'trace') whose literal
    occurs in that line. Keys with no literal are added for every line."""
    low = text.lower()
    nl = [i for i, ch in enumerate(low) if ch == "\n"] if len(low) < 4096 else \
        [m.start() for m in re.finditer("\n", low)]
    from bisect import bisect_left
    keys_of: dict = {}
    always = []
    groups = [(f"r{i}", lits) for i, lits in enumerate(_RULE_LITS)] + \
        [(f"v{i}", lits) for i, lits in enumerate(_VERSION_LITS)] + \
        [("xid", _XID_LITS), ("fnf", _FNF_LITS), ("trace", _TRACE_LITS)]
    by_lit: dict = {}
    for key, lits in groups:
        if not lits:
            always.append(key)
            continue
        for lit in lits:
            by_lit.setdefault(lit, []).append(key)
    for lit, keys in by_lit.items():
        i = low.find(lit)
        while i >= 0:
            k = keys_of.setdefault(bisect_left(nl, i), set())
            k.update(keys)
            i = low.find(lit, i + 1)
    if always:
        for j in range(n_lines):
            keys_of.setdefault(j, set()).update(always)
    return keys_of


def _line_signals(text: str, src: str, ctx) -> tuple[list[Signal], set]:
    out: list[Signal] = []
    kinds: set = set()
    seen: set = set()
    lines = text.split("\n")
    from . import parse_watchdog_log, _check_watchdog
    cand = _candidates(text, len(lines))
    for i in sorted(cand):
        keys = cand[i]
        raw = lines[i]
        line = raw.strip()
        if not line or len(line) > 4000:
            continue
        host = _host_of(line)
        for j, (comp, rx) in enumerate(_VERSIONS):
            if f"v{j}" not in keys:
                continue
            m = rx.search(line)
            if m:
                v = m.group(1)
                if comp == "NCCL net plugin":  # NCCL < 2.19 and >= 2.19 word "no plugin" differently
                    v = v.split(" : ", 1)[1] if v.startswith("Plugin Path") else "internal (no libnccl-net.so)"
                ctx["versions"].append((comp, v, host or src, src))
        mx = _XID_LINE.search(line) if "xid" in keys else None
        if mx:
            xid = int(mx.group(2))
            sev = health.XID_SEVERITY.get(xid, "warning")
            if xid not in health.XID_SEVERITY and _XID_FATAL.search(line[mx.end():]):
                sev = "critical"  # e.g. XID 144-150 NVLink 'NETIR Fatal' / 'Nonfatal' (leptonai/gpud #1174)
            key = ("xid", mx.group(1), xid)
            if key not in seen:
                seen.add(key)
                if xid in (13, 31, 43):  # NVIDIA "XID Errors": application-caused GPU exceptions
                    out.append(Signal("software", "xid_app", "warn", 0.45, _quote(line), f"XID {xid} on {mx.group(1)}: "
                                      "an application fault (bad address / killed kernel), not a hardware error",
                                      src, "cuda_debug"))
                else:
                    v = "fail" if sev == "critical" else "warn"
                    nonfatal = xid not in health.XID_SEVERITY and re.search(r"\bnon-?\s?fatal\b", line, re.I)
                    guide = _XID_GUIDE.get(xid)
                    what = (f"{guide[0]}: {guide[1]}" if guide else
                            f"NVIDIA XID catalogue: {'hardware/driver fault' if v == 'fail' else 'investigate'}")
                    out.append(Signal("gpu", "xid", v, 0.9 if v == "fail" else 0.4 if nonfatal else 0.55, _quote(line),
                                      f"XID {xid} on GPU {mx.group(1)} ({what})", src, _XID_CHECK.get(xid, "xid")))
                kinds.add("kernel log (XID)")
            continue
        mf = _FNF.search(line) if "fnf" in keys else None
        if mf or line.startswith("FileNotFoundError"):
            path = mf.group(1) if mf else line
            data = bool(_DATA_PATH.search(path))
            key = ("fnf", path)
            if key not in seen:
                seen.add(key)
                out.append(Signal("storage" if data else "software", "missing_file", "fail" if data else "warn",
                                  0.85 if data else 0.45, _quote(line),
                                  f"the job cannot find {path!s:.80}: " + ("a data file on the shared file system is "
                                  "missing or not visible on this node (unmounted, stale, deleted, wrong path per "
                                  "node); the other ranks then wait in the next collective" if data else
                                  "a file the code expects is missing"), src, "storage_mount" if data else "code_path"))
                kinds.add("traceback")
            continue
        for ri, rule in enumerate(LINE_RULES):
            if f"r{ri}" in keys and rule.pattern.search(line):
                key = (rule.kind, host)
                if key in seen:
                    break
                seen.add(key)
                sig = Signal(rule.layer, rule.kind, rule.verdict, rule.weight, _quote(line), rule.message, src,
                             rule.check, rule.direct)
                out.append(_REFINE[rule.kind](sig, line) if rule.kind in _REFINE else sig)
                kinds.add(_KIND_LABEL.get(rule.kind, rule.layer + " log line"))
                break
        else:
            me = _TRACE_EXC.match(line) if "trace" in keys else None
            if me and i > 0 and ("Traceback" in text or "Error" in me.group(1)):
                key = ("exc", me.group(1))
                if key not in seen:
                    seen.add(key)
                    exc = me.group(1)
                    if exc.endswith(("DistBackendError", "NCCLError")):
                        continue
                    base = exc.rsplit(".", 1)[-1]
                    # errors of the program's own logic (a complete traceback ending in a code/config error) are
                    # software with some confidence; RuntimeError & co. often relay lower-layer failures.
                    code = base in _CODE_ERRORS and "Traceback (most recent call last)" in text
                    out.append(Signal("software", "exception", "fail" if code else "warn", 0.55 if code else 0.35,
                                      _quote(line), f"the job raised {exc}: " + (
                                          "an error in the program or its configuration" if code else
                                          "a software error unless a lower layer explains it"), src, "code_path"))
                    kinds.add("traceback")
    evs = parse_watchdog_log(text) if "Watchdog caught" in text else []
    if evs:
        kinds.add("PyTorch watchdog")
        for f in _check_watchdog(evs, ctx.get("n_ranks")):
            if f.check == "collective_mismatch":
                rx = re.compile(rf"Rank\s+{f.value[0]}\]") if f.value else None
                quoted = next((ln for ln in lines if "Watchdog caught" in ln and rx is not None and rx.search(ln)),
                              f.message)
                out.append(Signal("software", "collective_mismatch", "fail", 0.85, _quote(quoted),
                                  f.message, src, "collective_debug"))
            elif f.check == "collective_desync":
                out.append(Signal("software", "collective_desync", "warn", 0.45, _quote(f.message, 160),
                                  f.message, src, "collective_debug"))
            elif f.check == "silent_ranks":
                out.append(Signal("gpu", "silent_ranks", "warn", 0.3, _quote(f"ranks {f.value} never reported a timeout"),
                                  f.message, src, "peer_node", direct=False))
    return out, kinds


_ALLOC = re.compile(r"Tried to allocate (?:more than )?([\d.]+)\s*([KMGTPE]i?B|B)\b", re.I)
_UNIT = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15, "EB": 1e18, "KIB": 2 ** 10,
         "MIB": 2 ** 20, "GIB": 2 ** 30, "TIB": 2 ** 40, "PIB": 2 ** 50, "EIB": 2 ** 60}


def _refine_oom(sig: Signal, line: str) -> Signal:
    """A request of >= 1 PB is no memory plan (the largest GPUs hold ~0.3 TB): the size was corrupted by an
    earlier failure, e.g. after an NCCL timeout (NVIDIA/nccl #1284, 'Tried to allocate more than 1EB')."""
    m = _ALLOC.search(line)
    if not m:
        return sig
    try:
        size = float(m.group(1)) * _UNIT[m.group(2).upper()]
    except (ValueError, KeyError):
        return sig
    if size < 1e15:
        return sig
    from dataclasses import replace
    return replace(sig, verdict="warn", weight=0.3, direct=False, check="hang_first_look",
                   message=f"an allocation of {m.group(1)} {m.group(2)} is impossible on any GPU: the size was "
                           "corrupted by an earlier failure (NVIDIA/nccl #1284: it followed an NCCL timeout). "
                           "Not a memory plan problem: find the first error")


_REFINE = {"cuda_oom": _refine_oom}

# XID -> the check that confirms it (memory XIDs: ECC / row-remapper state; NVLink XIDs: link state and the
# fabric manager; 144-150 are the NVLink5 XIDs of leptonai/gpud #1160/#1174); the others: the kernel log.
_XID_CHECK = {48: "gpu_state", 63: "gpu_state", 64: "gpu_state", 92: "gpu_state", 94: "gpu_state",
              95: "gpu_state", 74: "nvlink", **{x: "nvlink" for x in range(144, 151)}}

_KIND_LABEL = {"watchdog_symptom": "PyTorch watchdog", "cuda_oom": "traceback", "ecc_uncorrectable": "traceback",
               "kv_cache_none": "serving log", "kv_cache_preempt": "serving log", "nfs_not_responding": "kernel log",
               "lustre_lost": "kernel log", "fallen_off_bus": "kernel log", "hung_task": "kernel log",
               "ib_completion_error": "NCCL WARN", "nccl_connect_failed": "NCCL WARN", "ibv_call_failed": "NCCL WARN",
               "truncated_checkpoint": "checkpoint log", "no_space": "checkpoint/storage error"}


def recognise(name: str, text: str, ctx: dict) -> list[Fragment]:
    """Recognise every fragment of one pasted text; never raises on any string."""
    frags = []
    if "\x1b" in text:  # ANSI colour / cursor sequences of coloured terminals and log viewers
        text = _ANSI.sub("", text)
    for fname, ftext in split_fragments(name, text):
        kinds, sigs = [], []
        for fn in BLOCK_KINDS:
            try:
                res = fn(ftext, fname, ctx)
            except (P.ParseError, ValueError, KeyError, IndexError, TypeError, AttributeError, ZeroDivisionError,
                    OverflowError, StopIteration, re.error):
                res = None
            if res is not None:
                kinds.append(res[0])
                sigs += res[1]
        try:
            ls, lk = _line_signals(ftext, fname, ctx)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, OverflowError, StopIteration, P.ParseError):
            ls, lk = [], set()
        kinds += sorted(lk)
        sigs += ls
        frags.append(Fragment(fname, ftext, kinds, sigs))
    return frags


def global_signals(ctx) -> list[Signal]:
    """Signals that need every fragment: perfquery pairs, GID index vs show_gids, versions across hosts."""
    out = _perfquery_pairs(ctx) + _gid_check(ctx) + _kv_budget(ctx)
    by: dict = {}
    frags: dict = {}
    for item in ctx["versions"]:
        comp, ver, origin = item[:3]
        src = item[3] if len(item) > 3 else origin
        by.setdefault(comp, {}).setdefault(ver, set()).add(origin)
        frags.setdefault(comp, {}).setdefault(ver, set()).add(src)
    for comp, vers in by.items():
        origins = {o for s in vers.values() for o in s}
        if len(vers) > 1 and len(origins) > 1:
            desc = "; ".join(f"{v} on {', '.join(sorted(o)[:3])}" for v, o in sorted(vers.items()))
            # Versions seen inside one log (several hosts of one job) or in files the user named are one job's
            # evidence; versions from unnamed pasted items may come from different people's machines (an issue
            # thread), so they only raise a warning.
            srcs = {f for fs in frags[comp].values() for f in fs}
            same_log = len(srcs) == 1
            named = all(not (f.startswith("item ") or f.startswith("evidence")) for f in srcs)
            strong = same_log or named
            out.append(Signal("software", "version_mismatch", "fail" if strong else "warn", 0.8 if strong else 0.4,
                              _quote(f"{comp}: {desc}"), f"{comp} differs between nodes/ranks: collectives can hang or "
                              "fail (every node must run the same image)", "versions", "versions"))
    return out


# Symptom cues (course heuristics): what the reporter says narrows the search but never decides it
# (weight 0.25, a symptom: discounted by healthy evidence of that layer).
SYMPTOM_CUES = (
    ("network", re.compile(r"single[- ]node (?:works|is fine|ok)|multi[- ]node|across nodes|between nodes|inter-node|"
                           r"only (?:on|with) (?:2|two|more) nodes|跨节点|多机", re.I),
     "works on one node, fails across nodes: the inter-node path is the first suspect"),
    ("storage", re.compile(r"every \d+ ?(?:min|minutes)|checkpoint|data ?loader|dataset|epoch (?:start|boundary)|"
                           r"stall|I/O|存储|数据加载|检查点", re.I),
     "periodic stalls / data loading / checkpoints point at the storage path"),
    ("gpu", re.compile(r"one (?:node|gpu|rank) (?:is )?(?:slow|hot)|after (?:hours|days)|straggler|throttl|temperature|"
                       r"换卡|过热|降频", re.I),
     "one slow or hot node/GPU, or failures after hours of running, point at hardware"),
    ("software", re.compile(r"after (?:upgrad|updat|changing|switching)|new (?:image|container|version|release)|"
                            r"code change|升级|更新镜像", re.I),
     "it started after a software change: compare versions and configuration first"),
)


def symptom_signals(symptom: str | None) -> list[Signal]:
    if not symptom or not isinstance(symptom, str):
        return []
    out = []
    for layer, rx, msg in SYMPTOM_CUES:
        m = rx.search(symptom)
        if m:
            out.append(Signal(layer, "symptom_cue", "warn", 0.25, _quote(symptom, 160), msg, "symptom",
                              _SYMPTOM_CHECK[layer], direct=False))
    return out


_SYMPTOM_CHECK = {"network": "nccl_busbw", "storage": "storage_mount", "gpu": "straggler", "software": "versions"}
