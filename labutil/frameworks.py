"""Distributed training frameworks from a plan: torchrun, DDP buckets, DeepSpeed, Megatron-LM, FSDP.

Taught in ch24 (分布式训练框架配置). A parallel layout (``labutil.parallel.Layout``, ch08) is turned
into the configuration each framework reads, and the run's log back into scaling efficiency.

- :func:`deepspeed_config` — a DeepSpeed JSON config (dict) whose batch fields obey
  ``train_batch_size = train_micro_batch_size_per_gpu × gradient_accumulation_steps × dp``
  (DeepSpeed docs, "DeepSpeed Configuration JSON", Batch Size Related Parameters);
  :func:`check_deepspeed_batch` verifies that identity on any config.
- :func:`torchrun_command` / :func:`srun_torchrun_script` — torchrun argument lists (built with
  ``labutil.machine.launch``) and a Slurm batch script running one torchrun per node.
- :func:`megatron_pretrain_args` / :func:`parse_megatron_args` — the full ``pretrain_gpt.py``
  argument list of a model + layout, and the layout read back from an argument list.
- :func:`ddp_bucket_plan` — PyTorch DDP gradient buckets and their overlap with the backward pass
  (Li et al., "PyTorch Distributed: Experiences on Accelerating Data Parallel Training", VLDB 2020,
  §3.2.3 gradient bucketing, §3.2.4 overlapping computation with communication).
- :func:`fsdp_vs_zero_table` — PyTorch FSDP sharding strategies next to DeepSpeed ZeRO stages
  (Zhao et al., "PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel", VLDB 2023,
  §3.2; PyTorch docs ``torch.distributed.fsdp.ShardingStrategy``; Rajbhandari et al., "ZeRO",
  SC 2020, §5 and §7).
- :func:`run_throughput` / :func:`scaling_efficiency_from_logs` — throughput, MFU and scaling
  efficiency from Megatron-LM logs (``labutil.parsers.megatron.parse_megatron_log``).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

import numpy as np

from . import comm, compute, hardware, memory, parallel, validate
from .machine import launch
from .parallel import Layout
from .parsers.megatron import parse_megatron_log

__all__ = ["DEEPSPEED_BUCKET_ELEMENTS", "OFFLOAD_DEVICES", "deepspeed_config", "check_deepspeed_batch",
           "deepspeed_json", "torchrun_command", "validate_arg", "srun_torchrun_script", "megatron_pretrain_args",
           "parse_megatron_args", "DDP_BUCKET_MB", "DDP_FIRST_BUCKET_MB", "MIB", "BucketPlan", "ddp_backward_s",
           "ddp_bucket_plan", "bucket_sweep", "best_bucket_mb", "AccumulationComm", "grad_accumulation_comm", "fsdp_vs_zero_table",
           "MEGATRON_LOG_SAMPLE_512", "RunThroughput", "run_throughput", "scaling_efficiency_from_logs",
           "tokens_per_step"]

# ---------------------------------------------------------------------------------------------
# DeepSpeed
# ---------------------------------------------------------------------------------------------
#: DeepSpeed ZeRO defaults (DeepSpeed docs, config-json, "ZeRO Optimizations for FP16 Training"):
#: reduce_bucket_size and allgather_bucket_size default to 5e8 ELEMENTS (not bytes).
DEEPSPEED_BUCKET_ELEMENTS = 500_000_000
OFFLOAD_DEVICES = ("none", "cpu", "nvme")


def deepspeed_config(layout: Layout, *, bf16: bool = True, overlap_comm: bool = True,
                     contiguous_gradients: bool = True, reduce_bucket_size=DEEPSPEED_BUCKET_ELEMENTS,
                     allgather_bucket_size=DEEPSPEED_BUCKET_ELEMENTS, offload_optimizer: str = "none",
                     gradient_clipping: float = 1.0) -> dict:
    """DeepSpeed config (a dict, ``json.dumps`` it to ds_config.json) for ``layout``.

    Fields (DeepSpeed documentation, "DeepSpeed Configuration JSON", deepspeed.ai/docs/config-json):

    - ``train_batch_size`` = ``layout.global_batch``; ``train_micro_batch_size_per_gpu`` =
      ``layout.micro_batch``; ``gradient_accumulation_steps`` = global / (micro × dp), so that
      train_batch_size = micro × GA × dp holds (DeepSpeed raises at start-up otherwise). dp is the
      data-parallel size world / (tp·pp) — with pipeline parallelism DeepSpeed's pipeline engine
      runs GA micro-batches through the pipeline per step.
    - ``zero_optimization.stage`` = ``layout.zero_stage``; ``overlap_comm``, ``contiguous_gradients``;
      ``reduce_bucket_size`` / ``allgather_bucket_size`` in elements (default 5e8);
      ``offload_optimizer`` {"device": "cpu"|"nvme", "pin_memory": true} — valid only for ZeRO
      stages 1–3 (docs: "Enable offloading of optimizer state to CPU or NVMe ... valid only with
      stage 1, 2 and 3").
    - ``bf16.enabled`` (bf16 mixed precision, ZeRO-compatible); ``fp16.enabled`` is its complement.

    ZeRO stages 2 and 3 cannot be combined with DeepSpeed pipeline parallelism (DeepSpeed docs,
    Pipeline Parallelism): pp > 1 with zero_stage ≥ 2 raises ValueError.
    """
    if not isinstance(layout, Layout):
        raise ValueError(f"layout must be a labutil.parallel.Layout; got {type(layout).__name__}")
    for name, v in (("bf16", bf16), ("overlap_comm", overlap_comm), ("contiguous_gradients", contiguous_gradients)):
        if not isinstance(v, (bool, np.bool_)):
            raise ValueError(f"{name} must be a bool; got {v!r}")
    rb = validate.integer("reduce_bucket_size", reduce_bucket_size, lo=1)
    ab = validate.integer("allgather_bucket_size", allgather_bucket_size, lo=1)
    validate.choice("offload_optimizer", offload_optimizer, OFFLOAD_DEVICES)
    clip = validate.positive("gradient_clipping", gradient_clipping, allow_zero=True)
    if layout.pp > 1 and layout.zero_stage >= 2:
        raise ValueError(f"zero_optimization.stage={layout.zero_stage} with pp={layout.pp}: DeepSpeed supports "
                         "only ZeRO stage 0 or 1 together with pipeline parallelism")
    if offload_optimizer != "none" and layout.zero_stage == 0:
        raise ValueError("offload_optimizer needs zero_optimization.stage in [1, 3]; got stage 0")
    zero: dict = {"stage": layout.zero_stage, "overlap_comm": bool(overlap_comm),
                  "contiguous_gradients": bool(contiguous_gradients), "reduce_bucket_size": rb,
                  "allgather_bucket_size": ab}
    if offload_optimizer != "none":
        zero["offload_optimizer"] = {"device": offload_optimizer, "pin_memory": True}
    cfg = {
        "train_batch_size": layout.global_batch,
        "train_micro_batch_size_per_gpu": layout.micro_batch,
        "gradient_accumulation_steps": layout.n_microbatches,
        "gradient_clipping": clip,
        "zero_optimization": zero,
        "bf16": {"enabled": bool(bf16)},
        "fp16": {"enabled": not bool(bf16)},
    }
    check_deepspeed_batch(cfg, layout.dp)
    return cfg


def check_deepspeed_batch(config: dict, dp: int) -> dict:
    """Check DeepSpeed's batch identity train_batch_size = micro × GA × dp; return ``config``.

    Raises ValueError naming the offending field. DeepSpeed lets one of the three be omitted and
    derives it; here all three must be present (what :func:`deepspeed_config` writes).
    """
    d = validate.integer("dp", dp, lo=1)
    if not isinstance(config, dict):
        raise ValueError(f"config must be a dict (a parsed ds_config.json); got {type(config).__name__}")
    vals = {}
    for key in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"):
        if key not in config:
            raise ValueError(f"DeepSpeed config is missing field {key!r}")
        vals[key] = validate.integer(key, config[key], lo=1)
    product = vals["train_micro_batch_size_per_gpu"] * vals["gradient_accumulation_steps"] * d
    if vals["train_batch_size"] != product:
        raise ValueError(f"train_batch_size={vals['train_batch_size']} must equal train_micro_batch_size_per_gpu "
                         f"({vals['train_micro_batch_size_per_gpu']}) x gradient_accumulation_steps "
                         f"({vals['gradient_accumulation_steps']}) x dp ({d}) = {product}")
    return config


def deepspeed_json(config: dict) -> str:
    """The config as ds_config.json text (2-space indent, keys in insertion order)."""
    if not isinstance(config, dict):
        raise ValueError(f"config must be a dict; got {type(config).__name__}")
    return json.dumps(config, indent=2)


# ---------------------------------------------------------------------------------------------
# torchrun and Slurm
# ---------------------------------------------------------------------------------------------
def torchrun_command(target: str, target_args=(), *, nnodes: int = 1, nproc_per_node: int = 8,
                     rdzv_endpoint: str = "$MASTER_ADDR:$MASTER_PORT", rdzv_id: str = "$SLURM_JOB_ID",
                     max_restarts: int = 0, module: bool = False, launcher: str = "torchrun") -> list[str]:
    """``torchrun`` argument list launching a script (``pretrain_gpt.py``) or, with module=True, a module.

    Flags are those of ``torchrun --help`` (PyTorch docs, torchrun (Elastic Launch)):
    --nnodes, --nproc-per-node, --rdzv-backend=c10d, --rdzv-endpoint=host:port, --rdzv-id,
    --max-restarts. Validation and the flag list come from ``labutil.machine.launch.torchrun_args``;
    the default endpoint/id are shell variables for a Slurm script (see :func:`srun_torchrun_script`).
    """
    if not isinstance(target, str) or not target.strip():
        raise ValueError(f"target must be a script path or module name; got {target!r}")
    args = [validate_arg("target_args", a) for a in target_args]
    common = dict(nproc_per_node=nproc_per_node, nnodes=nnodes, rdzv_endpoint=rdzv_endpoint, rdzv_id=rdzv_id,
                  max_restarts=max_restarts, launcher=launcher)
    if module:
        return launch.torchrun_args(target, args, **common)
    # torchrun_args ends with ["-m", module]; keep its validated launcher flags, then the script.
    head = launch.torchrun_args("labutil", (), **common)[:-2]
    return head + [target, *args]


def validate_arg(name: str, a) -> str:
    """An argument-list element: a str (numbers are converted), no NUL or newline."""
    if isinstance(a, bool) or not isinstance(a, (str, int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must hold strings or numbers; got {a!r}")
    s = str(a)
    if "\n" in s or "\x00" in s:
        raise ValueError(f"{name} elements must not contain newlines or NUL; got {s!r}")
    return s


_SHELL_VAR = re.compile(r"^[A-Za-z0-9_.,:=/+@%-]*(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?[A-Za-z0-9_.,:=/+@%-]*)+$")


def _shell_word(a: str) -> str:
    """Quote one argument for a bash script: shlex.quote, except a word with $VAR references is
    double-quoted so the variable expands (only letters, digits and ``_.,:=/+@%-`` around it)."""
    if "$" in a:
        if not _SHELL_VAR.match(a):
            raise ValueError(f"argument {a!r} mixes a shell variable with characters that need quoting")
        return f'"{a}"'
    return shlex.quote(a)


def _wrap(words: list[str], indent: str = "  ", width: int = 96) -> str:
    """Join shell words into continuation lines no wider than ``width`` (never splitting a word)."""
    units, i = [], 0
    while i < len(words):     # keep "--flag value" pairs on one line
        w = words[i]
        if w.startswith("--") and "=" not in w and i + 1 < len(words) and not words[i + 1].startswith("-"):
            units.append(f"{w} {words[i + 1]}")
            i += 2
        else:
            units.append(w)
            i += 1
    lines, cur = [], ""
    for w in units:
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur + " \\")
            cur = indent + w
        else:
            cur = f"{cur} {w}" if cur else w
    lines.append(cur)
    return "\n".join(lines)


_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")


def srun_torchrun_script(target: str, target_args=(), *, nodes: int, gpus_per_node: int = 8,
                         job_name: str = "train", time_limit: str = "24:00:00", partition: str | None = None,
                         cpus_per_task: int | None = None, master_port: int = 29500, env: dict | None = None,
                         module: bool = False) -> str:
    """A Slurm batch script (text) that runs ``target`` with one torchrun per node.

    Pattern of ``labs/slurm/*.sbatch``: ``#SBATCH --nodes/--ntasks-per-node=1/--gpus-per-node``,
    MASTER_ADDR = first host of the allocation (``scontrol show hostnames``), then
    ``srun`` (one task per node, ``launch.srun_args``) running ``torchrun`` (``torchrun_command``)
    with a c10d rendezvous at $MASTER_ADDR:$MASTER_PORT and rdzv id $SLURM_JOB_ID. ``env`` adds
    ``export NAME=value`` lines (e.g. NCCL_DEBUG=INFO, NCCL_IB_HCA). Every value is quoted.
    """
    n = validate.integer("nodes", nodes, lo=1)
    g = validate.integer("gpus_per_node", gpus_per_node, lo=1, hi=64)
    port = validate.integer("master_port", master_port, lo=1, hi=65535)
    if not re.match(r"^[A-Za-z0-9_.-]+$", str(job_name)):
        raise ValueError(f"job_name must use letters, digits, '_', '.', '-' only; got {job_name!r}")
    if partition is not None and not re.match(r"^[A-Za-z0-9_.,-]+$", str(partition)):
        raise ValueError(f"partition must use letters, digits, '_', '.', ',', '-' only; got {partition!r}")
    if not isinstance(time_limit, str) or not re.match(r"^(\d+-)?\d{1,2}:\d{2}:\d{2}$", time_limit):
        raise ValueError(f"time_limit must look like 'HH:MM:SS' or 'D-HH:MM:SS'; got {time_limit!r}")
    inner = torchrun_command(target, target_args, nnodes=n, nproc_per_node=g, module=module)
    srun = launch.srun_args(inner, nodes=n, cpus_per_task=cpus_per_task)
    head = ["#!/bin/bash", f"#SBATCH --job-name={job_name}", f"#SBATCH --nodes={n}", "#SBATCH --ntasks-per-node=1",
            f"#SBATCH --gpus-per-node={g}"]
    if cpus_per_task is not None:
        head.append(f"#SBATCH --cpus-per-task={validate.integer('cpus_per_task', cpus_per_task, lo=1)}")
    if partition:
        head.append(f"#SBATCH --partition={partition}")
    head += [f"#SBATCH --time={time_limit}", "set -euo pipefail", "",
             'MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 1p)',
             f"MASTER_PORT={port}", "export MASTER_ADDR MASTER_PORT"]
    for k, v in (env or {}).items():
        if not isinstance(k, str) or not _ENV_NAME.match(k):
            raise ValueError(f"env names must be UPPER_CASE shell names; got {k!r}")
        head.append(f"export {k}={shlex.quote(validate_arg('env', v))}")
    return "\n".join(head) + "\n\n" + _wrap([_shell_word(a) for a in srun]) + "\n"


# ---------------------------------------------------------------------------------------------
# Megatron-LM
# ---------------------------------------------------------------------------------------------
def megatron_args(layout: Layout, *, seq_len: int | None = None, num_layers: int | None = None) -> list[str]:
    """Megatron-LM ``pretrain_gpt.py`` parallelism arguments for ``layout`` (an argument list).

    Flag names are Megatron-LM's (megatron/training/arguments.py): --tensor-model-parallel-size,
    --pipeline-model-parallel-size, --sequence-parallel, --micro-batch-size, --global-batch-size,
    --recompute-granularity {selective,full} (full also needs --recompute-method/--recompute-num-layers),
    --use-distributed-optimizer (Megatron's ZeRO-1-style sharding of optimizer states over dp).
    dp is not a flag: Megatron derives it as world_size / (tp · pp).
    """
    args = ["--tensor-model-parallel-size", str(layout.tp), "--pipeline-model-parallel-size", str(layout.pp),
            "--micro-batch-size", str(layout.micro_batch), "--global-batch-size", str(layout.global_batch)]
    if seq_len is not None:
        args += ["--seq-length", str(validate.integer("seq_len", seq_len, lo=1))]
    if layout.sp:
        args.append("--sequence-parallel")
    if layout.recompute == "selective":
        args += ["--recompute-granularity", "selective"]
    elif layout.recompute == "full":
        args += ["--recompute-granularity", "full", "--recompute-method", "uniform", "--recompute-num-layers", "1"]
    if layout.zero_stage == 1:
        args.append("--use-distributed-optimizer")
    elif layout.zero_stage > 1:
        raise ValueError(f"zero_stage={layout.zero_stage}: Megatron-LM's distributed optimizer shards optimizer "
                         "states only (ZeRO-1); use DeepSpeed or PyTorch FSDP for ZeRO-2/3")
    if layout.ep > 1:
        args += ["--expert-model-parallel-size", str(layout.ep)]
    if layout.cp > 1:
        args += ["--context-parallel-size", str(layout.cp)]
    if layout.interleave > 1:
        if num_layers is None:
            raise ValueError("interleave > 1: pass num_layers (the model's layer count) to compute "
                             "--num-layers-per-virtual-pipeline-stage")
        per = validate.integer("num_layers", num_layers, lo=1)
        if per % (layout.pp * layout.interleave):
            raise ValueError(f"num_layers={per} is not divisible by pp*interleave = {layout.pp * layout.interleave}")
        args += ["--num-layers-per-virtual-pipeline-stage", str(per // (layout.pp * layout.interleave))]
    return args


def megatron_pretrain_args(spec, layout: Layout, *, seq_len: int | None = None, precision: str = "bf16") -> list[str]:
    """``pretrain_gpt.py`` model + parallelism arguments for ``spec`` trained with ``layout``.

    Architecture flags (Megatron-LM megatron/training/arguments.py): --num-layers, --hidden-size,
    --ffn-hidden-size, --num-attention-heads, --max-position-embeddings; GQA via
    --group-query-attention --num-query-groups; --swiglu for gated MLPs; --normalization RMSNorm;
    --position-embedding-type rope when there are no learned position embeddings;
    --untie-embeddings-and-output-weights; --disable-bias-linear; --bf16/--fp16. Parallelism flags
    from :func:`megatron_args` (raises for ZeRO-2/3, which Megatron does not have).
    The layout is checked against the model first (``parallel.check_layout`` with its world size).
    """
    validate.choice("precision", precision, ("bf16", "fp16"))
    parallel.check_layout(spec, layout, layout.world_size, gpus_per_node=max(8, layout.tp))
    s = spec.seq_len if seq_len is None else validate.integer("seq_len", seq_len, lo=1)
    a = ["--num-layers", str(spec.layers), "--hidden-size", str(spec.hidden), "--ffn-hidden-size",
         str(spec.ffn_hidden), "--num-attention-heads", str(spec.heads), "--max-position-embeddings", str(s)]
    if spec.kv_heads != spec.heads:
        a += ["--group-query-attention", "--num-query-groups", str(spec.kv_heads)]
    if memory.is_gated_mlp(spec):
        a.append("--swiglu")
    if getattr(spec, "norm", "layernorm") == "rmsnorm":
        a += ["--normalization", "RMSNorm"]
    if not getattr(spec, "learned_pos_emb", True):
        a += ["--position-embedding-type", "rope"]
    if not getattr(spec, "tied_embeddings", True):
        a.append("--untie-embeddings-and-output-weights")
    if not getattr(spec, "bias", True):
        a.append("--disable-bias-linear")
    a.append(f"--{precision}")
    return a + megatron_args(layout, seq_len=s)


_INT_FLAGS = {"--tensor-model-parallel-size": "tp", "--pipeline-model-parallel-size": "pp",
              "--micro-batch-size": "micro_batch", "--global-batch-size": "global_batch",
              "--expert-model-parallel-size": "ep", "--seq-length": "seq_len"}


def parse_megatron_args(args, world_size: int) -> Layout:
    """The :class:`Layout` a Megatron-LM argument list describes on ``world_size`` GPUs.

    Reads --tensor-model-parallel-size, --pipeline-model-parallel-size (default 1 each, as in
    Megatron), --micro-batch-size, --global-batch-size (required), --sequence-parallel,
    --recompute-granularity, --use-distributed-optimizer (ZeRO-1), --expert-model-parallel-size.
    Both ``--flag value`` and ``--flag=value`` forms are accepted. dp = world_size / (tp·pp), as
    Megatron derives it; raises ValueError when that is not an integer or a value is malformed.
    """
    n = validate.integer("world_size", world_size, lo=1)
    if isinstance(args, str) or not all(isinstance(a, str) for a in args):
        raise ValueError("args must be a list of strings (an argument list, not a shell string)")
    toks = []
    for a in args:
        if a.startswith("--") and "=" in a:
            toks += a.split("=", 1)
        else:
            toks.append(a)
    vals: dict = {"tp": 1, "pp": 1, "ep": 1}
    flags = {"sp": False, "recompute": "none", "zero_stage": 0}
    i = 0
    while i < len(toks):
        t = toks[i]
        if t in _INT_FLAGS or t == "--recompute-granularity":
            if i + 1 >= len(toks):
                raise ValueError(f"Megatron argument {t} needs a value")
            v = toks[i + 1]
            if t == "--recompute-granularity":
                flags["recompute"] = validate.choice("--recompute-granularity", v, ("selective", "full"))
            else:
                try:
                    vals[_INT_FLAGS[t]] = validate.integer(t, int(v), lo=1)
                except ValueError:
                    raise ValueError(f"Megatron argument {t} must be a positive integer; got {v!r}") from None
            i += 2
            continue
        if t == "--sequence-parallel":
            flags["sp"] = True
        elif t == "--use-distributed-optimizer":
            flags["zero_stage"] = 1
        i += 1
    for need in ("micro_batch", "global_batch"):
        if need not in vals:
            flag = [k for k, v in _INT_FLAGS.items() if v == need][0]
            raise ValueError(f"Megatron arguments lack {flag}")
    mp = vals["tp"] * vals["pp"]
    if n % mp:
        raise ValueError(f"world_size={n} is not divisible by tensor x pipeline size = {mp}")
    return Layout(n // mp, vals["tp"], vals["pp"], vals["micro_batch"], vals["global_batch"], flags["zero_stage"],
                  flags["sp"], flags["recompute"], vals["ep"])


# ---------------------------------------------------------------------------------------------
# PyTorch DDP gradient buckets
# ---------------------------------------------------------------------------------------------
#: PyTorch DDP defaults: bucket_cap_mb = 25 (MiB, DistributedDataParallel docs; comm.DDP_BUCKET_BYTES)
#: and a smaller first bucket of 1 MiB (torch.distributed._DEFAULT_FIRST_BUCKET_BYTES = 1048576,
#: used when bucket_cap_mb is left at its default) so the first all-reduce starts early.
DDP_BUCKET_MB = 25.0
DDP_FIRST_BUCKET_MB = 1.0
MIB = 2**20


@dataclass(frozen=True)
class BucketPlan:
    """DDP buckets of one backward pass and how much of their all-reduce the backward hides.

    Per-bucket arrays (in the order DDP reduces them, last layers first): ``bucket_bytes``,
    ``ready_s`` (time into the backward when the bucket's last gradient is ready), ``start_s`` /
    ``finish_s`` (its all-reduce on the single NCCL stream). Scalars: ``n_buckets``,
    ``grad_bytes``, ``backward_s``, ``first_bucket_ready_s`` (first-bucket latency: when the first
    all-reduce can start), ``overlap_window_s`` (backward time left after that, during which
    all-reduces can run), ``comm_s`` (sum of all-reduce times), ``latency_s_total`` (its α part),
    ``exposed_comm_s`` (communication after the backward ends: what the step pays).
    """

    params: float
    n_gpus: int
    bucket_mb: float
    bucket_bytes: np.ndarray
    ready_s: np.ndarray
    start_s: np.ndarray
    finish_s: np.ndarray
    grad_bytes: float
    backward_s: float
    comm_s: float
    latency_s_total: float
    exposed_comm_s: float

    @property
    def n_buckets(self) -> int:
        return int(self.bucket_bytes.size)

    @property
    def first_bucket_ready_s(self) -> float:
        return float(self.ready_s[0])

    @property
    def overlap_window_s(self) -> float:
        return float(self.backward_s - self.ready_s[0])

    @property
    def hidden_fraction(self) -> float:
        """Share of the all-reduce time hidden behind the backward pass."""
        return float(1.0 - self.exposed_comm_s / self.comm_s) if self.comm_s > 0 else 1.0


def ddp_backward_s(params, tokens_per_gpu=16384, gpu: str = "H100-SXM", mfu=0.4) -> float:
    """Backward-pass time of one DDP step: 2/3 of 6·N·T / (peak · MFU) (backward = 4 of 6 N·T FLOPs;
    Kaplan et al. 2020 §2.1; ``compute.dense_compute_time_s``). ``gpu`` is a catalog name (BF16 peak)."""
    peak = hardware.gpu(gpu).peak_tflops("bf16")
    return float(2.0 / 3.0 * compute.dense_compute_time_s(params, tokens_per_gpu, peak, mfu))


def _dp_cluster(cluster, n: int, gpu: str):
    """The cluster of a DP job of ``n`` ranks and its ranks per node: ``cluster`` (default the catalog
    system of ``gpu``) resized to hold the ranks, packed as evenly as the node size allows (the
    largest divisor of n not above the GPUs per node, so every node holds the same number)."""
    from .cluster import Cluster

    if cluster is None:
        cluster = Cluster.for_gpu(gpu)
    elif not isinstance(cluster, Cluster):
        raise TypeError(f"cluster must be a labutil.cluster.Cluster; got {type(cluster).__name__}")
    g = cluster.gpus_per_node
    q = max(d for d in range(1, min(n, g) + 1) if n % d == 0)
    return cluster.with_nodes(max(1, n // q) if n > g else 1), q


def ddp_bucket_plan(params, bucket_mb=DDP_BUCKET_MB, *, n_gpus: int = 16, bw_gbs=None,
                    latency_s=None, bytes_per_grad=4, backward_s=None,
                    first_bucket_mb=DDP_FIRST_BUCKET_MB, tokens_per_gpu=16384, gpu: str = "H100-SXM",
                    mfu=0.4, cluster=None) -> BucketPlan:
    """Gradient buckets of PyTorch DDP and their overlap with the backward pass.

    Li et al. 2020 (VLDB), §3.2.3–3.2.4: DDP packs gradients into buckets of ``bucket_cap_mb``
    MiB (default 25) in reverse parameter order and launches a bucket's all-reduce as soon as all
    of its gradients are ready, so communication runs during the rest of the backward pass; the
    paper's Figure 2(b)/§5.2 show that both very small buckets (per-message latency) and very large
    ones (late start, nothing to overlap at the end) are slower. The model:

    - S = params × bytes_per_grad (4: DDP reduces gradients in the parameters' dtype, fp32 under
      torch.amp; pass 2 for a model cast to bf16). A first bucket of ``first_bucket_mb`` MiB
      (PyTorch's 1 MiB default; None = same as bucket_mb), then buckets of ``bucket_mb`` MiB,
      the last one holding the rest. Parameters are assumed much smaller than a bucket.
    - Gradients become ready uniformly over ``backward_s`` (default :func:`ddp_backward_s` with
      ``tokens_per_gpu``, the cluster's GPU, ``mfu``); bucket k is ready at backward_s · (bytes up to k)/S.
    - Each bucket's all-reduce over ``n_gpus`` ranks takes the course's one collective model,
      ``labutil.cluster.Cluster.collective_cost`` on ``cluster`` (default: the catalog system of
      ``gpu``, e.g. DGX H100 with 8 GPUs on NVSwitch and 8 x 400G NICs per node), resized to hold
      the ranks (packed: 16 ranks = 2 full nodes): NVLink / NVLS inside a node, one ring per rail
      across nodes, NCCL's ring / tree choice. ``latency_s`` overrides the cluster's network step
      latency. ``bw_gbs`` (optional) instead models one flat ring whose every hop is a link of
      ``bw_gbs`` GB/s per direction (a link you measured), through the same model.
      All-reduces run one after another on one NCCL stream: finish_k = max(ready_k, finish_{k−1}) + t_k.
    - exposed = max(0, finish_last − backward_s): the communication the step waits for.
    """
    from dataclasses import replace

    p = validate.positive("params", params)
    bmb = validate.positive("bucket_mb", bucket_mb)
    n = validate.integer("n_gpus", n_gpus, lo=2)
    lat = None if latency_s is None else validate.positive("latency_s", latency_s, allow_zero=True)
    by = validate.positive("bytes_per_grad", bytes_per_grad)
    fmb = bmb if first_bucket_mb is None else validate.positive("first_bucket_mb", first_bucket_mb)
    if np.ndim(p) or np.ndim(bmb):
        raise ValueError("params and bucket_mb must be scalars (use bucket_sweep for a sweep of bucket_mb)")
    if bw_gbs is None:
        c, q = _dp_cluster(cluster, n, gpu)
        if lat is not None:
            c = replace(c, net_latency_s=lat)
        gpu = c.gpu or gpu
    else:
        bw = validate.positive("bw_gbs", bw_gbs)
        if cluster is not None:
            raise ValueError("give either bw_gbs (one flat ring of measured links) or cluster, not both")
    bwd = ddp_backward_s(p, tokens_per_gpu, gpu, mfu) if backward_s is None \
        else validate.positive("backward_s", backward_s)
    S = float(p) * float(by)
    cap, first = float(bmb) * MIB, min(float(fmb) * MIB, S)
    rest = S - first
    n_full = int(rest // cap)
    tail = rest - n_full * cap
    if n_full > 5_000_000:
        raise ValueError(f"bucket_mb={bmb} gives {n_full} buckets for {S:.3g} bytes; use bucket_mb >= "
                         f"{S / 5e6 / MIB:.3g}")
    sizes = np.concatenate([[first], np.full(n_full, cap), [tail] if tail > 0.5 else []])
    cum = np.cumsum(sizes)
    ready = bwd * cum / S
    uniq, inv = np.unique(sizes, return_inverse=True)  # at most 3 distinct bucket sizes
    if bw_gbs is None:
        cost = c.collective_cost("all_reduce", uniq, n, ranks_per_node=q)
    else:
        a = comm.NET_STEP_LATENCY_S if lat is None else lat
        # one flat ring of measured links: the bare α-β ring of labutil.comm (no NCCL protocol choice)
        cost = comm.collective_cost("all_reduce", uniq, n, bw, a, "ring")
    t = np.asarray(cost.time_s, float).reshape(-1)[inv]
    C = np.cumsum(t)
    finish = C + np.maximum.accumulate(ready - (C - t))
    start = finish - t
    lat_total = float(np.asarray(cost.latency_s, float).reshape(-1)[inv].sum())
    exposed = max(0.0, float(finish[-1]) - bwd)
    return BucketPlan(float(p), n, float(bmb), sizes, ready, start, finish, S, float(bwd), float(C[-1]), lat_total,
                      exposed)


def bucket_sweep(params, bucket_mbs, **kwargs) -> dict:
    """``ddp_bucket_plan`` for each bucket size: arrays n_buckets, comm_s, exposed_comm_s, hidden_fraction."""
    mbs = np.atleast_1d(np.asarray(validate.positive("bucket_mbs", bucket_mbs), float))
    plans = [ddp_bucket_plan(params, float(b), **kwargs) for b in mbs]
    return {"bucket_mb": mbs, "n_buckets": np.array([pl.n_buckets for pl in plans]),
            "comm_s": np.array([pl.comm_s for pl in plans]),
            "exposed_comm_s": np.array([pl.exposed_comm_s for pl in plans]),
            "hidden_fraction": np.array([pl.hidden_fraction for pl in plans]),
            "backward_s": plans[0].backward_s}


def best_bucket_mb(params, bucket_mbs, **kwargs) -> tuple[float, float]:
    """The bucket size of ``bucket_mbs`` (MiB) with the least exposed all-reduce time, and that time (s):
    the minimum of :func:`bucket_sweep` (ties: the smaller bucket)."""
    sw = bucket_sweep(params, bucket_mbs, **kwargs)
    i = int(np.argmin(sw["exposed_comm_s"]))
    return float(sw["bucket_mb"][i]), float(sw["exposed_comm_s"][i])


@dataclass(frozen=True)
class AccumulationComm:
    """Gradient communication per optimizer step with ``ga_steps`` micro-steps of accumulation."""

    ga_steps: int
    no_sync: bool
    allreduces: int
    bytes_sent_per_gpu: float
    comm_s: float
    exposed_comm_s: float


def grad_accumulation_comm(plan: BucketPlan, ga_steps: int, no_sync: bool = True) -> AccumulationComm:
    """DDP communication per optimizer step with gradient accumulation.

    With ``model.no_sync()`` on the first ga−1 micro-steps (PyTorch DDP docs, ``no_sync``) the
    gradients are reduced once, during the last backward: one bucket plan's traffic and exposed
    time per optimizer step. Without it DDP all-reduces after EVERY micro-step: ga × the traffic
    and ga × the exposed time — accumulation is then not "free" at all.
    """
    if not isinstance(plan, BucketPlan):
        raise ValueError(f"plan must be a BucketPlan from ddp_bucket_plan; got {type(plan).__name__}")
    ga = validate.integer("ga_steps", ga_steps, lo=1)
    k = 1 if no_sync else ga
    sent = float(comm.bytes_sent_per_rank("all_reduce", plan.grad_bytes, plan.n_gpus))
    return AccumulationComm(ga, bool(no_sync), k, k * sent, k * plan.comm_s, k * plan.exposed_comm_s)


# ---------------------------------------------------------------------------------------------
# FSDP vs ZeRO
# ---------------------------------------------------------------------------------------------
_FSDP_ROWS = (
    # (FSDP ShardingStrategy, FSDP2 fully_shard equivalent, ZeRO equivalent, sharded states, zero stage, group)
    ("NO_SHARD", "(use DDP)", "DDP / ZeRO-0", "nothing (replicated)", 0, "all"),
    ("SHARD_GRAD_OP", "fully_shard(reshard_after_forward=False)", "ZeRO-2", "gradients + optimizer states", 2, "all"),
    ("FULL_SHARD", "fully_shard(reshard_after_forward=True)", "ZeRO-3", "parameters + gradients + optimizer states",
     3, "all"),
    ("HYBRID_SHARD", "fully_shard(mesh=2-D (replicate, shard))", "ZeRO-3 inside a node + DDP across nodes (ZeRO++ hpZ/MiCS)",
     "parameters + gradients + optimizer states, within the node", 3, "node"),
)


def fsdp_vs_zero_table(params=7e9, dp: int = 64, gpus_per_node: int = 8, optimizer: str = "adam",
                       micro_batches: int = 1) -> list[dict]:
    """FSDP sharding strategies mapped to ZeRO stages, with per-GPU model states and traffic.

    Mapping: PyTorch docs (torch.distributed.fsdp.ShardingStrategy: FULL_SHARD "shards parameters,
    gradients and optimizer states", SHARD_GRAD_OP "shards gradients and optimizer states during
    computation", NO_SHARD "similar to DDP", HYBRID_SHARD "FULL_SHARD within a node, replicate
    across nodes"); Zhao et al. 2023 (VLDB) §3.2 full and hybrid sharding; ZeRO stages in
    Rajbhandari et al. 2020 §5. Columns:

    - ``states_gb``: per-GPU weights + gradients + optimizer states (``memory.model_states_gb``,
      mixed-precision Adam 16 B/param), sharded over dp (HYBRID_SHARD: over the node's GPUs).
    - ``comm_vs_ddp``: gradient/parameter traffic per GPU relative to DDP — 1.0 for ZeRO-1/2
      (reduce-scatter + all-gather = all-reduce), 1.5 for ZeRO-3 (extra parameter all-gather in
      the backward; ZeRO §7.2–7.3: 3Ψ vs 2Ψ).
    - ``sent_gb_per_gpu``: bytes each GPU sends per step for gradients/parameters with 16-bit
      tensors, ring collectives (``comm.bytes_sent_per_rank``): 2(d−1)/d·2Ψ × comm_vs_ddp. HYBRID_SHARD:
      ZeRO-3 traffic inside the node (g ranks, NVLink) plus an all-reduce of its 1/g gradient shard
      across the d/g nodes.
    - ``network_ranks``: how many ranks the collective that crosses the network spans (d, or d/g
      for HYBRID_SHARD: the reason it scales to many nodes).
    ``micro_batches`` (m, gradient accumulation): NO_SHARD (with ``no_sync``) and ZeRO-1 still reduce once
    per step; SHARD_GRAD_OP (ZeRO-2) reduce-scatters every micro-batch and gathers the updated parameters
    once; FULL_SHARD (ZeRO-3) and HYBRID_SHARD gather and reduce-scatter every micro-batch (m ×), as
    ``labutil.parallel.comm_volume_gb`` counts them.
    """
    p = validate.positive("params", params)
    d = validate.integer("dp", dp, lo=1)
    g = validate.integer("gpus_per_node", gpus_per_node, lo=1)
    validate.choice("optimizer", optimizer, memory.OPTIMIZERS)
    m = validate.integer("micro_batches", micro_batches, lo=1)
    if d % g and d > g:
        raise ValueError(f"dp={d} must be a multiple of gpus_per_node={g} (or at most one node)")
    grad = 2.0 * float(p)     # 16-bit gradients, bytes
    out = []
    for fsdp, fsdp2, zero_name, sharded, stage, group in _FSDP_ROWS:
        shard = min(g, d) if group == "node" else d
        states = memory.model_states_gb(p, shard, stage, optimizer=optimizer).total_gb
        factor = 1.5 if stage == 3 else 1.0
        # per micro-batch or per step (module docstring): ZeRO-3 repeats everything, ZeRO-2 its reduce-scatter
        reps = m if stage == 3 else 1.0
        if group == "node":
            nodes = max(1, d // g)
            intra = factor * float(comm.bytes_sent_per_rank("all_reduce", grad, shard))
            inter = float(comm.bytes_sent_per_rank("all_reduce", grad / shard, nodes))
            sent, span = (intra + inter) * reps, nodes
        else:
            sent = factor * float(comm.bytes_sent_per_rank("all_reduce", grad, d))
            if stage == 2:
                sent = sent / 2.0 * (m + 1)          # reduce-scatter per micro-batch + one all-gather per step
            sent, span = sent * reps, d
        out.append({"fsdp": fsdp, "fsdp2": fsdp2, "zero": zero_name, "sharded": sharded, "zero_stage": stage,
                    "states_gb": float(states), "comm_vs_ddp": factor, "sent_gb_per_gpu": sent / 1e9,
                    "network_ranks": int(span)})
    return out


# ---------------------------------------------------------------------------------------------
# Throughput, MFU and scaling efficiency from Megatron-LM logs
# ---------------------------------------------------------------------------------------------
#: Illustrative Megatron-LM log of the same gpt3-175b job as ``labutil.parsers.megatron.MEGATRON_LOG_SAMPLE`` on
#: 512 H100 (dp=4 tp=4 pp=32, global batch 1536), same format (megatron/training/training.py
#: ``training_log`` with --log-throughput); elapsed times invented, TFLOP/s/GPU consistent with
#: them via ``compute.megatron_flops_per_iter`` (as Megatron computes it).
MEGATRON_LOG_SAMPLE_512 = """\
[2026-03-01 08:02:13] iteration       10/  500000 | consumed samples:        15360 | elapsed time per iteration (ms): 13951.6 | throughput per GPU (TFLOP/s/GPU): 474.0 | learning rate: 1.500000E-06 | global batch size:  1536 | lm loss: 9.868410E+00 | loss scale: 1.0 | grad norm: 4.498 | number of skipped iterations:   0 | number of nan iterations:   0 |
[2026-03-01 08:04:32] iteration       20/  500000 | consumed samples:        30720 | elapsed time per iteration (ms): 13907.2 | throughput per GPU (TFLOP/s/GPU): 475.5 | learning rate: 3.000000E-06 | global batch size:  1536 | lm loss: 8.899871E+00 | loss scale: 1.0 | grad norm: 2.381 | number of skipped iterations:   0 | number of nan iterations:   0 |
[2026-03-01 08:06:51] iteration       30/  500000 | consumed samples:        46080 | elapsed time per iteration (ms): 13932.9 | throughput per GPU (TFLOP/s/GPU): 474.6 | learning rate: 4.500000E-06 | global batch size:  1536 | lm loss: 8.212034E+00 | loss scale: 1.0 | grad norm: 1.911 | number of skipped iterations:   0 | number of nan iterations:   0 |
"""


@dataclass(frozen=True)
class RunThroughput:
    """A run's throughput from its log: median step time, samples/s, tokens/s, TFLOP/s/GPU, MFU."""

    n_gpus: int
    iterations: int
    step_s: float
    samples_per_s: float
    tokens_per_s: float
    tflops_per_gpu: float
    mfu: float

    @property
    def samples_per_s_per_gpu(self) -> float:
        return self.samples_per_s / self.n_gpus


def run_throughput(log_text, n_gpus: int, seq_len: int, gpu: str = "H100-SXM") -> RunThroughput:
    """Throughput of a Megatron-LM run from its log (``labutil.parsers.megatron.parse_megatron_log``).

    step = median elapsed time per iteration; samples/s = global batch / step; tokens/s =
    samples/s × seq_len; TFLOP/s/GPU = median of the logged values; MFU = that / the GPU's dense
    BF16 peak (``compute.mfu``; Chowdhery et al. 2022, PaLM, App. B). Lines without a global batch
    or throughput field raise ValueError (run Megatron with --log-throughput).
    """
    n = validate.integer("n_gpus", n_gpus, lo=1)
    s = validate.integer("seq_len", seq_len, lo=1)
    its = parse_megatron_log(log_text)
    if any(i.global_batch is None for i in its):
        raise ValueError("megatron log lines lack 'global batch size'; cannot compute samples/s")
    if any(i.tflops_per_gpu is None for i in its):
        raise ValueError("megatron log lines lack 'throughput per GPU (TFLOP/s/GPU)'; run with --log-throughput")
    step = float(np.median([i.elapsed_ms for i in its])) / 1e3
    if step <= 0:
        raise ValueError(f"elapsed time per iteration must be > 0; got a median of {step * 1e3} ms")
    gb = float(np.median([i.global_batch for i in its]))
    tfl = float(np.median([i.tflops_per_gpu for i in its]))
    peak = hardware.gpu(gpu).peak_tflops("bf16")
    return RunThroughput(n, len(its), step, gb / step, gb / step * s, tfl, float(compute.mfu(tfl, peak)))


def scaling_efficiency_from_logs(base: RunThroughput, scaled: RunThroughput) -> float:
    """Scaling efficiency between two runs: (samples/s per GPU of ``scaled``) / (that of ``base``).

    η = (T_N / N) / (T_M / M), the ch01 definition T_N / (N·T_1) with the smaller run M as the
    reference instead of one GPU. Above 1 when the larger run is more efficient per GPU (e.g. a
    smaller pipeline bubble); raises ValueError if ``scaled`` does not have more GPUs.
    """
    for name, r in (("base", base), ("scaled", scaled)):
        if not isinstance(r, RunThroughput):
            raise ValueError(f"{name} must be a RunThroughput from run_throughput; got {type(r).__name__}")
    if scaled.n_gpus <= base.n_gpus:
        raise ValueError(f"scaled.n_gpus ({scaled.n_gpus}) must exceed base.n_gpus ({base.n_gpus})")
    return scaled.samples_per_s_per_gpu / base.samples_per_s_per_gpu


def tokens_per_step(global_batch, seq_len):
    """Tokens per optimizer step: global batch (sequences) × sequence length. Arrays broadcast."""
    b = validate.integer("global_batch", global_batch, lo=1)
    s = validate.integer("seq_len", seq_len, lo=1)
    out = np.asarray(b, float) * np.asarray(s, float)
    return float(out) if np.ndim(out) == 0 else out
