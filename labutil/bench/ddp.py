"""DDP scaling efficiency (lab06), launched by torchrun.

    torchrun --nproc-per-node=4 -m labutil.bench.ddp --out ddp4.json     # repeat with 1, 2, 4

Weak scaling: every rank trains the same MLP (``--layers`` x ``--hidden``²) on its own
synthetic batch of ``--batch`` samples, so N ranks process N x batch samples per step.

Model size by path (defaults, each flag overrides):

- GPU (NCCL): hidden 4096, 8 layers = 134 M parameters in **bf16** (268 MB of gradients, about
  11 DDP buckets of 25 MiB — DDP's default ``bucket_cap_mb``, PyTorch DDP docs), batch 2048 per
  rank, so the backward pass (~1.6 TFLOP per step) is long enough for bucketed all-reduces to
  overlap with it. A 263 k-parameter model on an H100 measures kernel-launch latency, not DDP.
- CPU (gloo): hidden 256, 4 layers (263 k parameters, fp32), batch 64: seconds, not minutes. After
``--warmup-steps`` untimed steps, each of ``--steps`` steps is timed on every rank (CUDA
synchronised on GPU); per step the max over ranks is kept (the slowest rank sets the pace of a
synchronous step) and the step time is the median of those (a shared machine preempts a few
steps; the median ignores them). The same number of steps is then timed inside ``model.no_sync()`` (no gradient
all-reduce): the difference is the exposed communication time per step.

With ONE rank there is no peer: DDP's all-reduce is a local no-op, so no communication time is
reported (``comm_s_per_step`` is None) and the no_sync pass is skipped.

``--single-rank-baseline`` (what lab06 uses on the CPU path) measures that 1-rank run inside an
N-rank launch, before the N-rank one: rank 0 trains the same model alone, in DDP over a process
group holding only itself, while the other ranks wait at a barrier (a gloo barrier sleeps in the
kernel, it does not spin). The record is stored as ``baseline_1rank``, shaped like a 1-rank run's.
It saves one whole torchrun launch — a launcher and a rank that each import torch (about 4.5 s
of CPU on the course's 2-core machine) — for the same measurement.

``--repeats R`` (with ``--single-rank-baseline``) alternates the two R times — rank 0 alone, all
ranks, rank 0 alone, ... — so both see the same drift of a shared machine, and keeps every pair
in ``repeats`` (each with its E(N)). The record's own numbers and ``baseline_1rank`` are the pair
whose E(N) is the median (``repeat_chosen``), so ``scaling_efficiency`` of the two gives exactly the
median. On the course's 2-core CI machine single CPU runs gave E(2) = 24 %, 31 %, 97 % and 108 %:
one pair says nothing; the spread of R pairs says how much a number can be trusted (lab06).

Scaling efficiency (ch01, ch14, ch24): E(N) = throughput(N) / (N x throughput(1)) with throughput
in samples/s, :func:`scaling_efficiency`. On the CPU path (gloo, a few cores shared by all
ranks) the ranks also compete for cores, so E falls for reasons a GPU cluster does not have —
the result says so in ``banner``.
"""

from __future__ import annotations

import datetime
import os
import sys
import time

from .. import validate
from ..fileio import write_json_atomic
from . import cli, fit
from .common import CPU_BANNER, environment, resolve_backend

__all__ = ["scaling_efficiency", "PROG", "GPU_DEFAULTS", "CPU_DEFAULTS", "BUCKET_CAP_MB", "mlp_params",
           "build_parser", "parse_args", "main"]


def scaling_efficiency(results: list[dict]) -> list[dict]:
    """E(N) = samples/s(N) / (N · samples/s(1)) for ddp results (one with world_size 1 required)."""
    if not results:
        raise ValueError("results must hold at least the 1-rank run")
    base = [r for r in results if r.get("world_size") == 1]
    if not base:
        raise ValueError(f"results need a world_size=1 run; got sizes {[r.get('world_size') for r in results]}")
    thr1 = validate.positive("samples_per_s of the 1-rank run", base[0]["samples_per_s"])
    out = []
    for r in sorted(results, key=lambda r: r["world_size"]):
        n = validate.integer("world_size", r["world_size"], lo=1)
        thr = validate.positive("samples_per_s", r["samples_per_s"])
        out.append({"world_size": n, "samples_per_s": thr, "speedup": thr / thr1, "efficiency": thr / (n * thr1),
                    "comm_s_per_step": r.get("comm_s_per_step")})
    return out


def _model(torch, hidden: int, layers: int):
    mods = []
    for _ in range(layers):
        mods += [torch.nn.Linear(hidden, hidden), torch.nn.ReLU()]
    return torch.nn.Sequential(*mods, torch.nn.Linear(hidden, 1))


def _measure(torch, dist, DDP, group, a, dev, dtype, local_rank: int, backend: str) -> dict:
    """Warm-up, timed synchronous steps, the replica check and timed no_sync steps on ``group``
    (None = every rank). Returns the result record (without ``environment``) on every member."""
    n = dist.get_world_size(group)
    hidden, layers, batch, steps = a.hidden, a.layers, a.batch, a.steps
    torch.manual_seed(0)  # same initial weights everywhere (DDP also broadcasts rank 0's)
    model = _model(torch, hidden, layers).to(device=dev, dtype=dtype)
    ddp = DDP(model, device_ids=[local_rank] if backend == "nccl" else None, process_group=group)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    gen = torch.Generator(device=dev).manual_seed(1234 + dist.get_rank())
    x = torch.randn(batch, hidden, device=dev, generator=gen).to(dtype)
    y = torch.randn(batch, 1, device=dev, generator=gen).to(dtype)
    params = sum(q.numel() for q in model.parameters())

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        opt.step()
        return loss

    def timed(k: int, sync: bool) -> float:
        """Median over steps of the slowest rank's step time (robust to preempted steps)."""
        times = torch.zeros(k, dtype=torch.float64)
        dist.barrier(group=group)
        for i in range(k):
            if dev.type == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            if sync:
                step()
            else:
                with ddp.no_sync():
                    step()
            if dev.type == "cuda":
                torch.cuda.synchronize()
            times[i] = time.perf_counter() - t0
        v = times.to(dev)
        dist.all_reduce(v, op=dist.ReduceOp.MAX, group=group)
        return float(v.median().item()) if k % 2 else float(v.sort().values[k // 2 - 1:k // 2 + 1].mean().item())

    for _ in range(a.warmup_steps):
        step()
    t_sync = timed(steps, True)
    # replicas must agree after synchronous steps: a real DDP correctness check
    w = torch.cat([q.detach().flatten().float() for q in model.parameters()])
    ref = w.clone()
    dist.broadcast(ref, src=0, group=group)
    max_diff = float((w - ref).abs().max().item())
    d = torch.tensor([max_diff], dtype=torch.float64, device=dev)
    dist.all_reduce(d, op=dist.ReduceOp.MAX, group=group)
    # local steps (replicas diverge from here on, measured above); with one rank there is no
    # peer and nothing to compare: no communication figure at all
    t_local = timed(steps, False) if n > 1 else None
    elem = 2 if a.dtype == "bf16" else 4
    return {"benchmark": "ddp", "backend": backend, "world_size": n, "cpu_path": backend == "gloo",
            "banner": CPU_BANNER if backend == "gloo" else "", "params": params, "dtype": a.dtype,
            "grad_bytes": params * elem, "bucket_cap_mb": BUCKET_CAP_MB,
            "buckets_estimate": -(-params * elem // (BUCKET_CAP_MB << 20)),
            "hidden": hidden, "layers": layers, "batch_per_rank": batch, "steps": steps,
            "step_s": t_sync, "step_s_no_sync": t_local,
            "comm_s_per_step": max(0.0, t_sync - t_local) if t_local is not None else None,
            "samples_per_s": n * batch / t_sync, "replica_max_abs_diff": float(d.item())}


PROG = "labutil.bench.ddp"
# (hidden, layers, batch, dtype) per path; see the module docstring
GPU_DEFAULTS = {"hidden": 4096, "layers": 8, "batch": 2048, "dtype": "bf16"}
CPU_DEFAULTS = {"hidden": 256, "layers": 4, "batch": 64, "dtype": "fp32"}
BUCKET_CAP_MB = 25  # torch.nn.parallel.DistributedDataParallel default bucket_cap_mb


def mlp_params(hidden: int, layers: int) -> int:
    """Parameters of the benchmark MLP: layers x (hidden² + hidden) + (hidden + 1)."""
    return layers * (hidden * hidden + hidden) + hidden + 1


def memory_bytes(hidden: int, layers: int, batch: int, dtype: str) -> int:
    """Bytes one rank holds at its peak (host on the CPU path, its GPU on the GPU path), counted
    from what the run allocates; P parameters of e bytes (bf16 2, fp32 4):

    - weights, gradients and DDP's gradient buckets: 3 P e (DDP copies every gradient into its
      communication buckets unless ``gradient_as_bucket_view=True``: PyTorch DDP docs, whose
      "saved memory size will be equal to the total gradients size"); SGD without momentum
      keeps no optimizer state;
    - the replica check: every parameter concatenated in fp32, and a broadcast copy: 8 P;
    - activations kept for the backward pass: each layer's Linear input and ReLU output
      (2 x layers x batch x hidden e), plus the input batch, its gradient and the targets.

    CUDA's context, NCCL's buffers and torch's own libraries are not counted: this is a lower
    bound on the need, so a refusal is never a false alarm.
    """
    hidden = validate.integer("hidden", hidden, lo=1)
    layers = validate.integer("layers", layers, lo=1)
    batch = validate.integer("batch", batch, lo=1)
    validate.choice("dtype", dtype, ("bf16", "fp32"))
    e = 2 if dtype == "bf16" else 4
    params = mlp_params(hidden, layers)
    return params * (3 * e + 8) + (2 * layers + 3) * batch * hidden * e


def check_fits(a, local_ranks: int, *, available=None) -> None:
    """Refuse a model that does not fit, before torch.distributed starts: CPU path (gloo),
    ``local_ranks`` x :func:`memory_bytes` of host memory; GPU path, :func:`memory_bytes` of each
    rank's GPU. ``available`` (bytes, source) replaces the measured quantity (tests)."""
    need = memory_bytes(a.hidden, a.layers, a.batch, a.dtype)
    model = (f"--hidden {a.hidden} --layers {a.layers} --batch {a.batch} ({mlp_params(a.hidden, a.layers):,} "
             f"{a.dtype} parameters)")
    fix = "lower --hidden, --layers or --batch"
    if a.backend == "nccl":
        fit.require_device(f"{model}: each rank's weights, gradients, DDP buckets and activations on its GPU",
                           need, fix, available=available)
    else:
        fit.require_host(f"{model} on {local_ranks} rank{'s' if local_ranks > 1 else ''} of this host "
                         f"({local_ranks} x {fit.fmt_bytes(need)} of host memory)", local_ranks * need,
                         fix + " or run fewer ranks per host", available=available)


def build_parser():
    p = cli.Parser(prog="torchrun ... -m labutil.bench.ddp", description="DDP weak-scaling step time")
    p.add_argument("--hidden", type=int, default=None, help="width (default GPU 4096, CPU 256)")
    p.add_argument("--layers", type=int, default=None, help="hidden layers (default GPU 8, CPU 4)")
    p.add_argument("--batch", type=int, default=None, help="samples per rank per step (default GPU 2048, CPU 64)")
    p.add_argument("--dtype", default=None, choices=("bf16", "fp32"), help="parameter dtype (default GPU bf16, CPU fp32)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup-steps", type=int, default=5)
    p.add_argument("--backend", default="auto", choices=("auto", "nccl", "gloo"))
    p.add_argument("--timeout-s", type=float, default=120.0)
    p.add_argument("--out", default=None)
    p.add_argument("--single-rank-baseline", action="store_true",
                   help="first time rank 0 alone (DDP over a 1-rank group, the others waiting): the 1-rank "
                        "baseline of the scaling efficiency, stored as baseline_1rank, without a second launch")
    p.add_argument("--repeats", type=int, default=1,
                   help="with --single-rank-baseline: alternate the 1-rank and the N-rank measurement this many "
                        "times; the record is the median pair, every pair is kept in 'repeats'")
    p.add_argument("--dry-run", action="store_true", help="check the flags and --out, then exit")
    return p


def median_pair(pairs: list[tuple[dict, dict]]) -> tuple[int, list[dict]]:
    """(index of the pair whose E(N) is the (lower) median, one summary row per pair) for alternating
    ``(1-rank record, N-rank record)`` pairs; E(N) = samples/s(N) / (N x samples/s(1))."""
    rows = []
    for base, res in pairs:
        n = res["world_size"]
        rows.append({"step_s_1rank": base["step_s"], "samples_per_s_1rank": base["samples_per_s"],
                     "step_s": res["step_s"], "step_s_no_sync": res["step_s_no_sync"],
                     "comm_s_per_step": res["comm_s_per_step"], "samples_per_s": res["samples_per_s"],
                     "efficiency": res["samples_per_s"] / (n * base["samples_per_s"])})
    order = sorted(range(len(rows)), key=lambda i: rows[i]["efficiency"])
    return order[(len(order) - 1) // 2], rows


def parse_args(argv=None, local_ranks: int | None = None):
    """Parse and validate every flag; raises :class:`labutil.bench.cli.UsageError` (one line).

    ``local_ranks``: ranks that will share this host (default torchrun's LOCAL_WORLD_SIZE, else 1);
    the model must fit (:func:`check_fits`)."""
    a = build_parser().parse_args(argv)
    try:
        a.backend = resolve_backend(a.backend)
    except ValueError as exc:
        raise cli.UsageError(cli.message(exc)) from None
    d = GPU_DEFAULTS if a.backend == "nccl" else CPU_DEFAULTS
    a.hidden = cli.int_flag("--hidden", d["hidden"] if a.hidden is None else a.hidden, lo=8, hi=16384)
    a.layers = cli.int_flag("--layers", d["layers"] if a.layers is None else a.layers, lo=1, hi=64)
    a.batch = cli.int_flag("--batch", d["batch"] if a.batch is None else a.batch, lo=1, hi=1 << 20)
    a.dtype = a.dtype or d["dtype"]
    cli.int_flag("--steps", a.steps, lo=1, hi=100_000)
    cli.int_flag("--warmup-steps", a.warmup_steps, lo=0, hi=100_000)
    cli.int_flag("--repeats", a.repeats, lo=1, hi=50)
    if a.repeats > 1 and not a.single_rank_baseline:
        raise cli.UsageError("--repeats alternates the 1-rank and the N-rank runs: it needs --single-rank-baseline")
    cli.timeout_s(a.timeout_s)
    ranks_here = fit.local_ranks() if local_ranks is None else cli.int_flag("local_ranks", local_ranks, lo=1, hi=1024)
    check_fits(a, ranks_here)
    cli.writable_out(a.out)
    return a


def main(argv=None) -> int:
    try:
        a = parse_args(argv)
    except cli.UsageError as exc:
        return cli.report(PROG, exc)
    hidden, layers, batch, steps, backend = a.hidden, a.layers, a.batch, a.steps, a.backend
    if a.dry_run:
        print(f"{PROG}: flags OK: backend {backend}, MLP {layers} x {hidden} ({mlp_params(hidden, layers):,} params, "
              f"{a.dtype}), batch {batch}/rank, {steps} steps"
              + (", 1-rank baseline first" if a.single_rank_baseline else "")
              + (f", {a.repeats} alternating repeats" if a.repeats > 1 else "") + (f", result -> {a.out}" if a.out else ""))
        return 0
    if "RANK" not in os.environ:
        return cli.report(PROG, cli.UsageError("must be launched by torchrun (python -m torch.distributed.run ...); "
                                               "use --dry-run to check the flags alone"))

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    timeout = datetime.timedelta(seconds=a.timeout_s)
    if backend == "nccl":
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl", timeout=timeout, device_id=torch.device("cuda", local_rank))
        dev = torch.device("cuda", local_rank)
    else:
        dist.init_process_group("gloo", timeout=timeout)
        dev = torch.device("cpu")
    code = 0
    try:
        rank, n = dist.get_rank(), dist.get_world_size()
        dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float32
        # every rank must create the group; only rank 0 is in it
        solo = dist.new_group([0]) if a.single_rank_baseline and n > 1 else None
        pairs = []
        for _ in range(a.repeats):  # alternating: rank 0 alone, then all ranks, --repeats times
            base = None
            if solo is not None:
                if rank == 0:
                    base = _measure(torch, dist, DDP, solo, a, dev, dtype, local_rank, backend)
                dist.barrier()  # the other ranks sleep here while rank 0 trains alone
            pairs.append((base, _measure(torch, dist, DDP, None, a, dev, dtype, local_rank, backend)))
        base, res = pairs[0]
        if rank == 0 and base is not None and len(pairs) > 1:
            chosen, rows = median_pair(pairs)
            base, res = pairs[chosen]
            res["repeats"], res["repeat_chosen"] = rows, chosen
            for k, r in enumerate(rows):
                print(f"# repeat {k + 1}/{len(rows)}: 1 rank {r['step_s_1rank'] * 1e3:.2f} ms/step, {n} ranks "
                      f"{r['step_s'] * 1e3:.2f} ms/step, E({n}) = {100 * r['efficiency']:.0f} %", flush=True)
        res["environment"] = environment(backend)
        if rank == 0:
            if backend == "gloo":
                print(f"# {CPU_BANNER}")
            if base is not None:
                base["environment"] = res["environment"]
                base["measured_in"] = (f"rank 0 of a {n}-rank launch, alone: DDP over a 1-rank process group while "
                                       f"the other ranks waited at a barrier (--single-rank-baseline)")
                res["baseline_1rank"] = base
                if "repeats" in res:
                    print(f"# median repeat ({res['repeat_chosen'] + 1}) below", flush=True)
                print(f"# DDP world_size=1 (baseline: rank 0 alone in this launch) params={base['params']} {a.dtype} "
                      f"step={base['step_s'] * 1e3:.2f} ms (1 rank: no peer, no communication measured) "
                      f"samples/s={base['samples_per_s']:.1f}", flush=True)
            t_local = res["step_s_no_sync"]
            comm = (f"(no_sync {t_local * 1e3:.2f} ms, exposed comm {res['comm_s_per_step'] * 1e3:.2f} ms)"
                    if t_local is not None else "(1 rank: no peer, no communication measured)")
            print(f"# DDP world_size={n} params={res['params']} {a.dtype} step={res['step_s'] * 1e3:.2f} ms {comm} "
                  f"samples/s={res['samples_per_s']:.1f}", flush=True)
            if a.out:
                write_json_atomic(a.out, res)
    except Exception as exc:  # noqa: BLE001 - one clear message per failure, then a non-zero exit
        where = f"on rank {dist.get_rank() if dist.is_initialized() else '?'}"
        if cli.is_timeout(exc):
            print(f"{PROG}: ERROR {where}: a collective did not complete within --timeout-s={a.timeout_s:g} s (a rank "
                  f"stalled or crashed, or the fabric hung). Underlying error: {type(exc).__name__}: "
                  f"{cli.message(exc)[:300]}", file=sys.stderr, flush=True)
            code = cli.EXIT_TIMEOUT
        else:
            code = cli.error(PROG, exc, where)
    finally:
        if dist.is_initialized():
            if code == cli.EXIT_TIMEOUT:
                # peers are gone or stuck: do not wait on them (abort instead of a collective shutdown)
                os._exit(code)
            dist.destroy_process_group()
    return code


if __name__ == "__main__":
    sys.exit(main())
