"""Recognisers: turn pasted evidence (job logs, tool outputs, notes) into :class:`Signal` objects.

Two kinds of recogniser run over every fragment of a bundle:

- **block recognisers** find a tool's output inside a fragment (its header or its key lines) and
  hand that block to the tool's parser in :mod:`labutil.parsers` / :mod:`labutil.fioparse`, then to
  the rules of :mod:`labutil.health` (ibstat, ibv_devinfo, perfquery pairs, nccl-tests, the
  ``NCCL_DEBUG=INFO`` transport, nvidia-smi table / ``-q`` / csv throttle reasons, dcgmi diag,
  lfs df, lfs check servers, fio, IOR, mdtest, show_gids, mounts, nfsstat, per-rank step timings, py-spy dumps);
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


from .blocks import BLOCK_KINDS, catalog_gpu, catalog_model
from .fragments import global_signals, recognise, split_fragments
from .lines import LINE_RULES, SYMPTOM_CUES, LineRule, needed_literals, symptom_signals
from .signals import Fragment, Signal

__all__ = ["Signal", "Fragment", "LineRule", "LINE_RULES", "recognise", "split_fragments", "BLOCK_KINDS",
           "global_signals", "symptom_signals", "SYMPTOM_CUES", "needed_literals", "catalog_model", "catalog_gpu"]
