"""Line recognisers: single log lines whose text has a fixed form in the software that prints it.

:data:`LINE_RULES` (kind, layer, verdict, weight, regex, message, next-check key, direct) and the
special lines (kernel XIDs with their per-XID meaning, ``FileNotFoundError`` paths, traceback
exceptions, version banners, PyTorch watchdog timeouts), plus the literal pre-filter that lets a
10 MB paste be scanned fast, and the symptom cues (:func:`symptom_signals`). Formats, meanings and
the public threads they come from: see :mod:`labutil.troubleshoot.recognise`.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, replace

from ... import health
from ...reliability import XID_GUIDE as _XID_GUIDE
from ..engine import _check_watchdog, parse_watchdog_log
from .prose import embedded_spans, is_sentence, quoted_spans
from .signals import Signal, _host_of, _quote

__all__ = ["LineRule", "LINE_RULES", "SYMPTOM_CUES", "LOG_ONLY_KINDS", "needed_literals", "line_signals",
           "symptom_signals"]

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
     r"forward compatibility was attempted on non supported HW|CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE|"
     r"system has unsupported display driver / cuda driver combination|cudaErrorSystemDriverMismatch|"
     r"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH|NVML (?:library )?version mismatch",
     "the user-space CUDA/NVML libraries do not match the loaded kernel driver (a driver package upgraded under a "
     "running node, or an image built for another driver): lyulyul/shine-cluster #30, NVIDIA/gpu-operator #898",
     "driver_userspace", True),
    # NVML cannot even be loaded: the container does not get the driver's user-space libraries (the NVIDIA container
    # runtime is not docker's/containerd's default runtime, or the toolkit is missing) - the k8s device plugin's
    # own hint on this line: "If this is a GPU node, did you set the docker default runtime to `nvidia`?"
    # (NVIDIA/k8s-device-plugin README, prerequisites)
    ("nvml_not_loaded", "software", "fail", 0.7,
     r"could not load NVML library|Failed to (?:start|initialize) NVML:? (?:with error:?\s*)?could not load|"
     r"libnvidia-ml\.so\.1: cannot open shared object file",
     "NVML (libnvidia-ml) cannot be loaded here: the NVIDIA container runtime is not the default runtime of "
     "docker/containerd on this node, or the container toolkit / driver libraries are missing - a node "
     "configuration fault, the GPUs are not involved", "k8s_gpu_resources", True),
    # the driver's kernel module cannot be built or loaded on this kernel (gpu-operator driver container, DKMS,
    # the .run installer): NVIDIA/gpu-operator #15 (418.87 on kernel 5.0), #583 (no /lib/modules/<k>/build)
    ("driver_kernel_module", "software", "fail", 0.8,
     r"GPL-incompatible module nvidia\S*\.ko uses GPL-only symbol|Unable to load the kernel module '?nvidia\S*\.ko|"
     r"Could not resolve Linux kernel version|/lib/modules/\S+/build: No such file or directory|"
     r"make\[\d\]: \*\*\* \[_module_/usr/src/nvidia|Failed to (?:build|install) (?:the )?(?:NVIDIA )?kernel module|"
     r"NVRM: GPU \S+ is already bound to (?:nouveau|NovaCore)|nouveau \S+: .*(?:fail|error|fault|timeout)",
     "the NVIDIA kernel module does not build or load on this node: a driver branch older than the kernel "
     "(GPL-only symbols), missing kernel headers, or the in-tree nouveau / nova driver bound to the GPU "
     "(NVIDIA/gpu-operator #15, #583; NVIDIA/cloud-native-docs #98)", "driver_build", True),
    # Kubernetes: the node advertises no GPU (kubectl describe node) or the scheduler finds none free
    ("k8s_no_gpu_resource", "software", "warn", 0.55,
     r"nvidia\.com/gpu:\s+0\s*$|Insufficient nvidia\.com/gpu",
     "Kubernetes sees no allocatable GPU on the node: the device plugin found none (container runtime not "
     "nvidia, driver/toolkit not ready, plugin not running) or every GPU is already allocated "
     "(NVIDIA/k8s-device-plugin #406; k3s-io/k3s #4391)", "k8s_gpu_resources", True),
    ("duplicate_gpu", "software", "fail", 0.8, r"Duplicate GPU detected",
     "two ranks were given the same GPU (LOCAL_RANK / CUDA_VISIBLE_DEVICES / torch.cuda.set_device): a launch "
     "configuration fault (NVIDIA/nccl #1005-style 'rank 1 and rank 0 both on CUDA device')", "launch_config", True),
    # CUDA error 46 (cudaErrorDevicesUnavailable): every visible GPU is held by another process in exclusive-process
    # compute mode (or the scheduler gave the job a GPU someone else is using)
    ("gpu_busy", "software", "fail", 0.7,
     r"all CUDA-capable devices are busy or unavailable|cudaErrorDevicesUnavailable|CUDA_ERROR_DEVICES_UNAVAILABLE",
     "the visible GPU(s) are busy: another process holds them in exclusive-process compute mode, or the scheduler "
     "gave this job a GPU another job uses (nvidia-smi: compute mode and the processes on that GPU)",
     "launch_config", True),
    # the dynamic loader cannot find a CUDA / NCCL / driver library: the environment, not the GPU
    ("missing_shared_lib", "software", "fail", 0.7,
     r"lib(?:cuda|cudart|cublas\w*|cudnn\w*|nccl|nvidia-ml|cufft|curand|cusparse|cusolver|nvrtc|nvJitLink)"
     r"\S*\.so[.\d]*: cannot open shared object file",
     "a CUDA, cuDNN, NCCL or driver library is not found by the dynamic loader: the image or virtualenv lacks it, "
     "LD_LIBRARY_PATH / ldconfig does not point at it, or a wheel for another CUDA major version is installed "
     "(ldd on the extension; python -c 'import torch; print(torch.version.cuda)'; the container's CUDA)",
     "versions", True),
    # NCCL's topology search found no path and fell back to a hard-coded NET id that NIC fusion had removed
    # (NVIDIA/nccl #1748: NCCL 2.26 with NIC fusion; fixed by 2.27, workaround NCCL_NET_MERGE_LEVEL)
    ("nccl_topo_net_id", "software", "fail", 0.7, r"Could not find NET with id \d+",
     "NCCL's topology search failed and fell back to a NET id that does not exist (NIC fusion in NCCL 2.26): an NCCL "
     "version bug, not the fabric; use NCCL >= 2.27 (a newer container) or NCCL_NET_MERGE_LEVEL=LOC "
     "(NVIDIA/nccl #1748)", "versions", True),
    # cudaErrorNoKernelImageForDevice (209): the binary has no SASS/PTX for this compute capability
    ("cuda_arch_missing", "software", "fail", 0.75,
     r"no kernel image is available for execution on the device|cudaErrorNoKernelImageForDevice|"
     r"CUDA_ERROR_NO_BINARY_FOR_GPU|with CUDA capability sm_\d+ is not compatible with the current PyTorch",
     "PyTorch or a CUDA extension was built without code for this GPU's compute capability (TORCH_CUDA_ARCH_LIST / "
     "-gencode; a toolkit too old for the GPU): rebuild or install a build for its sm_XX (mit-han-lab/bevfusion #283, "
     "OpenBMB/cpm_kernels #9)", "versions", True),
    ("invalid_device", "software", "fail", 0.75, r"invalid device ordinal|CUDA_ERROR_INVALID_DEVICE|cudaErrorInvalidDevice",
     "the process asked for a GPU index that is not visible to it: more processes per node than GPUs, or "
     "CUDA_VISIBLE_DEVICES / LOCAL_RANK set wrong", "launch_config", True),
    # nv-fabricmanager's own journal lines (dstackai/dstack #2348, NVIDIA/nvtrust #55): the answer is in the paste
    ("fabric_manager_version", "gpu", "fail", 0.9,
     r"driver interface version \S+ don.?t match with driver version|don.?t match with driver version",
     "Fabric Manager does not run: its version differs from the loaded driver's (nv-fabricmanager refuses to start), "
     "so CUDA reports 802 'system not yet initialized' on this NVSwitch system", "fabric_manager", True),
    ("fabric_manager_failed", "gpu", "fail", 0.85, r"nvidia-fabricmanager\.service:.*(?:FAILURE|Failed with result)",
     "the nvidia-fabricmanager service failed to start (systemd): on an NVSwitch system the GPUs cannot be used until it "
     "runs; its journal says why (most often a version that differs from the driver's)", "fabric_manager", True),
    ("fabric_manager", "gpu", "fail", 0.85,
     r"system not yet initialized|cudaErrorSystemNotReady|CUDA_ERROR_SYSTEM_NOT_READY|"
     r"NV_WARN_NOTHING_TO_DO|fabric manager (?:is )?not (?:running|started)|nvidia-fabricmanager\.service.*failed",
     "CUDA reports the system not ready: on NVSwitch systems (HGX/DGX) nvidia-fabricmanager is not running or does "
     "not match the driver version, so the GPUs cannot be used", "fabric_manager", True),
    ("pcie_acs", "gpu", "warn", 0.6, r"ACSCtl:\s*SrcValid\+",
     "PCIe Access Control Services are enabled on a bridge (lspci ACSCtl SrcValid+): GPU peer-to-peer traffic is "
     "redirected through the root complex, NCCL P2P hangs or crawls (NCCL user guide, PCI ACS)", "pcie_acs", True),
    # ---------------------------------------------------------------- network
    # SONiC orchagent pfcwdorch.cpp: "PFC Watchdog detected PFC storm on port %s, queue index %d, ..."
    ("pfc_watchdog_storm", "network", "fail", 0.75, r"PFC Watchdog detected PFC storm on port \S+",
     "the switch's PFC watchdog detected a pause storm on that port/queue (a receiver that stopped draining, or a "
     "PFC misconfiguration): lossless RoCE traffic through it stalls until the watchdog drops or forwards it",
     "pfc", True),
    ("ib_completion_error", "network", "fail", 0.9,
     r"Got completion (?:from peer (?:\S+ )?)?with (?:error|status=?)\s*(?:12|13)\b|IBV_WC_RETRY_EXC_ERR|"
     r"transport retry count(?:er)? exceeded|mlx5: \S+: got completion with error",
     "RDMA work completion failed with a retry-exceeded status (12/13): the peer NIC never acknowledged. "
     "Link down or flapping, RoCE routing / wrong GID index, or PFC/ECN misconfiguration", "ib_path", True),
    ("ib_completion_other", "network", "warn", 0.6,
     r"Got completion (?:from peer (?:\S+ )?)?with (?:error|status=?)\s*(?!12\b|13\b)\d+",
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
    # "NET/Socket : Using [0]<if>" is printed only when NCCL initialises its socket transport for the
    # inter-node traffic (no usable IB/RoCE device): NVIDIA/nccl #941
    ("socket_network", "network", "warn", 0.6, r"NCCL INFO Using network Socket\b|NET/Socket : Using \[\d+\]",
     "NCCL uses TCP sockets for inter-node traffic (several times slower than RDMA)", "nccl_transport", True),
    ("ib_async_event", "network", "warn", 0.5, r"(?:NET/IB\s*:\s*)?Got async event\s*:\s*(?:port error|local catastrophic|"
     r"device fatal|GID table change)", "the HCA reported an asynchronous port/device event: the link went down "
     "or the device reset", "ib_ports", True),
    # one port's state as ibstat / ibv_devinfo / `rdma link` / ethtool print it (a whole ibstat block is judged by
    # its block recogniser, which then owns these lines: recognise.fragments)
    ("ib_port_down", "network", "fail", 0.7,
     r"^State:\s*(?:Down|Initializing)\b|^Physical state:\s*(?:Polling|Disabled|LinkErrorRecovery)|"
     r"\bstate:?\s+(?:DOWN|INIT)\s+physical_state:?\s+(?:POLLING|DISABLED|LINK_UP)|^state:\s*PORT_(?:DOWN|INIT)\b|"
     r"^Link detected:\s*no\b",
     "an HCA/NIC port is not Active (Down / Polling / Disabled: no link partner, cable or transceiver; Initializing: "
     "no subnet manager): the ranks that use it cannot connect (Mellanox/network-operator #249, "
     "openshift/sriov-network-operator #635)", "ib_ports", True),
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
    # Ceph health warnings (ceph status / ceph health detail; the MDS's own log): clients of the file system
    # wait on the MDS or the OSDs (docs.ceph.com, CephFS troubleshooting: "slow requests", "behind on trimming")
    ("ceph_health", "storage", "fail", 0.7,
     r"MDSs? reports? slow (?:requests|metadata IOs)|behind on trimming|\d+ slow (?:ops|requests)(?:, oldest| are blocked)|"
     r"slow requests? are blocked|reporting \d+ slow ops|MDSs? report oversized cache|failed to (?:rd|wr|x)lock, waiting",
     "the Ceph cluster reports slow metadata / OSD operations: every client of CephFS (mounts, data loading, "
     "checkpoints) waits on them", "storage_mount", True),
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
    # fcntl/flock on a mount without locks (Lustre without -o flock, NFS without lockd): huggingface/datasets #1672
    ("file_lock_unsupported", "storage", "fail", 0.75, r"\[Errno 37\]|No locks available",
     "the file system refused a file lock (ENOLCK): the mount has no lock support (Lustre without flock, NFS "
     "without lockd); code that locks its cache there fails or waits forever", "storage_mount", True),
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
    # lspci reads 0xff from a device that no longer answers on PCIe: the GPU fell off the bus
    # (NVIDIA/kubevirt-gpu-device-plugin #93: skip cards that show 'rev ff')
    ("pci_rev_ff", "gpu", "fail", 0.85, r"NVIDIA Corporation .*\(rev ff\)",
     "lspci shows the NVIDIA device as 'rev ff': its configuration space reads back all ones, the GPU no longer "
     "answers on the PCIe bus (fallen off): drain the node, reseat / power-cycle, RMA if it recurs", "xid", True),
    # nvidia-smi -q lines quoted on their own (a whole nvidia-smi -q is judged by its block recogniser, which
    # then owns these lines): NVIDIA GPU memory error management (A100 and later: row remapping)
    ("remap_pending", "gpu", "fail", 0.75,
     r"^Pending(?: Page Blacklist| Page Retirement)?\s*:\s*Yes\b|^Remapping Failure Occurred\s*:\s*Yes\b",
     "a row remap / page retirement is pending (or failed) on this GPU: uncorrectable memory errors occurred; "
     "drain and reset the GPU to apply the remap, RMA when remapping fails (NVIDIA GPU memory error management)",
     "gpu_memory", True),
    ("ecc_count", "gpu", "warn", 0.5,
     r"^(?:Uncorrectable Error|DRAM Uncorrectable|SRAM Uncorrectable)\s*:\s*[1-9]\d*\s*$",
     "the GPU counted uncorrectable memory errors: look at the remap state (Pending / Failure) and the XID log",
     "gpu_memory", True),
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
    # "no CUDA-capable device": the CUDA runtime was shown no device at all. A GPU that died leaves its own
    # trace (XID 79, 'GPU is lost', rev ff) and the others visible; no device at all is a launch / container /
    # scheduler visibility setting (NVIDIA/pyxis #5: cgroup / gres; nvidia-docker without --gpus)
    ("no_gpu", "software", "warn", 0.5, r"no CUDA-capable device is detected|No CUDA GPUs are available|"
     r"CUDA_ERROR_NO_DEVICE", "the process sees no GPU at all: a visibility setting (container without --gpus / "
     "nvidia runtime, CUDA_VISIBLE_DEVICES, Slurm gres/cgroup) unless the node's log shows a lost GPU",
     "launch_config", True),
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
    # ncclSystemError ("unhandled system error", nccl.h): a system call or an external library failed - most often
    # the sockets between nodes (firewall, wrong interface), sometimes /dev/shm or the RDMA stack: a hint, the
    # 'Last error' line says which
    ("nccl_system_error", "network", "warn", 0.35, r"unhandled system error|ncclSystemError",
     "NCCL reports ncclSystemError (a system call or external library failed): most often the connection between "
     "nodes (firewall, interface choice), sometimes /dev/shm or the RDMA stack - read the 'Last error' line",
     "socket_path", False),
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
_XID_CAUSED_BY = re.compile(r"caused by previous Xid\s*(\d{1,3})", re.I)
_XID_FATAL = re.compile(r"(?<![Nn]on)(?<![Nn]on-)(?<![Nn]on )\b[Ff]atal\b|uncontained", re.I)
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



# ------------------------------------------------------------------------------- line recogniser
# Speed: a 10 MB paste has ~10^5 lines and there are ~60 line rules; running every case-insensitive
# regex on every line takes ~15 s in CPython (no literal fast-scan under re.I). Every rule has
# literal text that any match must contain (extracted from the compiled pattern below); a line is
# tried only against the rules whose literal occurs in it (str.find over the lowercased text), which
# gives the same result as trying every rule (a rule cannot match a line without its literal).
# The literals come from CPython's own regex parser (``re._parser``, private but stable since 3.11,
# the oldest Python this package supports). Should a future CPython move it, needed_literals()
# returns None for every rule and each rule is simply tried on every line: slower, same result.
try:
    from re import _parser as _sre_parse
    from re._constants import BRANCH as _BRANCH, LITERAL as _LITERAL, MAX_REPEAT as _MAXR, \
        MIN_REPEAT as _MINR, SUBPATTERN as _SUBP
except ImportError:  # pragma: no cover - a CPython without re._parser
    _sre_parse = None


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
    if _sre_parse is None:  # pragma: no cover
        return None
    try:
        return _needed_seq(_sre_parse.parse(pattern, re.I))
    except (re.error, TypeError, ValueError, IndexError):  # pragma: no cover - defensive
        return None


_TRACE_LITS = frozenset({"error", "exception", "interrupt"})
_RULE_LITS = tuple(needed_literals(r.pattern.pattern) for r in LINE_RULES)
_VERSION_LITS = tuple(needed_literals(rx.pattern) for _, rx in _VERSIONS)
_XID_LITS = needed_literals(_XID_LINE.pattern)
_FNF_LITS = frozenset({"filenotfounderror"}) | (needed_literals(_FNF.pattern) or frozenset())


def _candidates(text: str, n_lines: int) -> dict:
    """line index -> set of keys ('r<i>' rule, 'v<i>' version, 'xid', 'fnf', 'trace') whose literal
    occurs in that line. Keys with no literal are added for every line."""
    low = text.lower()
    nl = [i for i, ch in enumerate(low) if ch == "\n"] if len(low) < 4096 else \
        [m.start() for m in re.finditer("\n", low)]
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
            cause = _XID_CAUSED_BY.search(line, mx.end())
            if cause:        # "Xid 45 ... caused by previous Xid 149": the earlier error is the one to judge
                xid = int(cause.group(1))
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
                    if xid in _GSP_XIDS:     # GSP firmware RPC timeout: unambiguous, the GPU needs a reset
                        sev = "critical"
                    v = "fail" if sev == "critical" else "warn"
                    nonfatal = xid not in health.XID_SEVERITY and re.search(r"\bnon-?\s?fatal\b", line, re.I)
                    guide = _GSP_XIDS.get(xid) or _XID_GUIDE.get(xid)
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
        # a sentence of notes reaches only the rules whose text is an unambiguous error message; the log
        # fragments quoted in it are read like log lines (prose.quoted_spans)
        prose = is_sentence(raw)
        spans = quoted_spans(line) + embedded_spans(_QUOTED.sub(" ", line)) if prose else []
        targets = [(line, not prose)] + [(sp, True) for sp in dict.fromkeys(spans)]
        matched = False
        for tgt, all_rules in targets:
            for ri, rule in enumerate(LINE_RULES):
                if f"r{ri}" not in keys or (not all_rules and rule.kind in LOG_ONLY_KINDS):
                    continue
                if not rule.pattern.search(tgt):
                    continue
                matched = True
                key = (rule.kind, host)
                if key in seen:
                    break
                sig = Signal(rule.layer, rule.kind, rule.verdict, rule.weight, _quote(tgt), rule.message, src,
                             rule.check, rule.direct,
                             "tool output" if not prose else "notes" if tgt is line else "quoted in notes")
                sig = _REFINE[rule.kind](sig, tgt) if rule.kind in _REFINE else sig
                if sig is None:       # the refinement read the line as no evidence (e.g. an error counter of 0)
                    matched = False
                    continue
                seen.add(key)
                out.append(sig)
                kinds.add(_KIND_LABEL.get(rule.kind, rule.layer + " log line") + (" (in notes)" if prose else ""))
                break
            if matched:
                break
        if not matched:
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
    return replace(sig, verdict="warn", weight=0.3, direct=False, check="hang_first_look",
                   message=f"an allocation of {m.group(1)} {m.group(2)} is impossible on any GPU: the size was "
                           "corrupted by an earlier failure (NVIDIA/nccl #1284: it followed an NCCL timeout). "
                           "Not a memory plan problem: find the first error")


_QUOTED = re.compile(r"`[^`\n]*`|\"[^\"\n]*\"|“[^”\n]*”|「[^」\n]*」|『[^』\n]*』")

_ZERO_COUNT = re.compile(r"(?:errors?|counters?|count)\s*(?:are\s+|were\s+)?(?:all\s+)?[:=]?\s*0(?![\d.])|:\s*0\s*$", re.I)


def _refine_nvlink(sig: Signal, line: str) -> Signal | None:
    """'NVLink ... error' in a line of statistics ("NVLink error counters: 0", "CRC Errors: 0") reports that
    nothing happened: no evidence (the wrong-line verdict of issue 16). A fatal/down/XID line stays."""
    if _ZERO_COUNT.search(line) and not re.search(r"fatal|xid|\bdown\b|inactive", line, re.I):
        return None
    return sig


_PEER = re.compile(r"(?:from peer|peer)\s+([0-9a-fA-F.:]+?)(?:<\d+>|\s|$)")
_HCA = re.compile(r"\b(?:hca|dev)\s+([A-Za-z][\w]*\d)|\b(mlx5_\d+|bnxt_re\d+|irdma\d+)\b")


def _refine_retry_exc(sig: Signal, line: str) -> Signal:
    """Completion error 12 (retry exceeded): the most common cause is that the PEER process died first (its
    QP went to error), so the first check is the peer's own log, with the peer IP and the local HCA of the
    line filled in (reviewers' bundle B, deepseek-ai/DeepEP #411)."""
    peer = _PEER.search(line)
    hca = _HCA.search(line)
    p = peer.group(1) if peer else "<peer ip>"
    h = next((g for g in hca.groups() if g), "<hca>") if hca else "<hca>"
    return replace(sig, check=f"peer_first|{p}|{h}", message=sig.message + f" (peer {p}, local HCA {h}): first check "
                   "whether the peer's process died before this error")


_FM_VERSIONS = re.compile(r"interface version (\S+) don.?t match with driver version (\S+?)\.?(?:\s|$)")


def _refine_fm(sig: Signal, line: str) -> Signal:
    """The fabric manager names both versions: say what to install (the answer is in the paste)."""
    m = _FM_VERSIONS.search(line)
    if not m:
        return sig
    return replace(sig, message=f"Fabric Manager {m.group(1)} does not match the loaded driver {m.group(2)}: install the "
                   f"nvidia-fabricmanager package of version {m.group(2)} (or the driver {m.group(1)}), restart "
                   "nvidia-fabricmanager, then reset the GPUs (nvidia-smi -r) or reboot; CUDA reports 802 until then")


_OPEN_CALLS = re.compile(r"ibv_(?:open_device|get_device_list|query_device|query_port)\b")


def _refine_ibv(sig: Signal, line: str) -> Signal:
    """A failed ibv_open_device / ibv_get_device_list is not a connection-setup fault: the process cannot open the
    HCA at all (no /dev/infiniband in the container, permissions, rdma-core missing), so NCCL falls back to sockets
    (NVIDIA/nccl #451, pytorch/pytorch #111424)."""
    if not _OPEN_CALLS.search(line):
        return sig
    return replace(sig, check="nccl_transport", message="the process could not open the RDMA device (ibv_open_device / "
                   "device list): no /dev/infiniband in the container, missing permissions (IPC_LOCK, memlock) or "
                   "rdma-core; NCCL then falls back to TCP sockets")


_REFINE = {"cuda_oom": _refine_oom, "nvlink_error": _refine_nvlink, "ib_completion_error": _refine_retry_exc,
           "fabric_manager_version": _refine_fm, "ibv_call_failed": _refine_ibv}

# Rules whose trigger words are ordinary words in a sentence ("NVLink", "killed", "thermal event", "I/O
# error", a bare "NCCL WARN"): they fire on log lines and on fragments quoted in notes, never on the
# sentence of notes itself (rules must not fire on prose that merely mentions a word).
LOG_ONLY_KINDS = frozenset({"nvlink_error", "gpfs", "host_oom", "node_hw", "object_store", "kernel_link_down",
                            "lustre_lost", "nccl_invalid_usage", "cpu_thermal", "nccl_warn", "kv_cache_preempt",
                            "allocator_pressure", "child_failed", "io_error", "node_failed", "pcie_acs", "sigkill"})

# XID -> the check that confirms it (memory XIDs: ECC / row-remapper state; NVLink XIDs: link state and the
# fabric manager; 144-150 are the NVLink5 XIDs of leptonai/gpud #1160/#1174); the others: the kernel log.
# XID 119/120 (GSP): meaning and action from NVIDIA/open-gpu-kernel-modules #446 ("Timeout waiting for RPC from
# GSP!": a 525-branch driver bug fixed in 525.105.17, workaround NVreg_EnableGpuFirmware=0) and Azure/azurehpc #714
# (driver 510 GSP RPC timeouts; Xid 119/120 flag a GPU that must be reset).
_GSP_XIDS = {
    119: ("GSP RPC timeout", "the GPU System Processor firmware did not answer the driver: drain the node and reset the "
          "GPU; check the driver branch (NVIDIA/open-gpu-kernel-modules#446: fixed in 525.105.17) and the GSP firmware "
          "version; workaround NVreg_EnableGpuFirmware=0 where the branch allows it"),
    120: ("GSP error", "the GSP firmware reported an error: drain the node and reset the GPU; check the driver branch and "
          "the GSP firmware version (nvidia-smi -q | grep -i 'GSP Firmware')"),
}
_XID_CHECK = {119: "gsp", 120: "gsp", 48: "gpu_state", 63: "gpu_state", 64: "gpu_state", 92: "gpu_state", 94: "gpu_state",
              95: "gpu_state", 74: "nvlink", **{x: "nvlink" for x in range(144, 151)}}

_KIND_LABEL = {"watchdog_symptom": "PyTorch watchdog", "cuda_oom": "traceback", "ecc_uncorrectable": "traceback",
               "kv_cache_none": "serving log", "kv_cache_preempt": "serving log", "nfs_not_responding": "kernel log",
               "lustre_lost": "kernel log", "fallen_off_bus": "kernel log", "hung_task": "kernel log",
               "ib_completion_error": "NCCL WARN", "nccl_connect_failed": "NCCL WARN", "ibv_call_failed": "NCCL WARN",
               "truncated_checkpoint": "checkpoint log", "no_space": "checkpoint/storage error"}




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


line_signals = _line_signals
