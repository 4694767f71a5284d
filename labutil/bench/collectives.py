"""nccl-tests-style collective benchmark over torch.distributed (lab02, lab03, ch22).

Launch with torchrun, one process per GPU (or 2 gloo processes on a CPU machine)::

    torchrun --nproc-per-node=4 -m labutil.bench.collectives --op all_reduce -b 8 -e 128M -f 2 \\
        --backend nccl --out result.json

Flags follow NVIDIA nccl-tests (``src/common.cu``): ``-b`` minbytes, ``-e`` maxbytes (binary
K/M/G suffixes), ``-f`` step factor, ``-i`` step bytes (used when ``-f`` is 1), ``-n`` timed
iterations (20), ``-w`` warm-up iterations (5), ``-c`` check 0/1, ``-d`` datatype, ``-o`` reduction
op, ``-r`` root, ``-a`` how the per-rank times are combined (0 = rank 0, 1 = mean (default, as
nccl-tests), 2 = min, 3 = max). Extra: ``--op``, ``--backend nccl|gloo|auto``, ``--out``,
``--timeout-s`` (the process-group timeout: a stuck rank ends the run with an error).

Method, per message size:

1. warm-up: ``-w`` untimed calls (the first collective also builds NCCL's connections, ~10^5 x
   slower than later ones, NVIDIA/nccl #1487);
2. ``dist.barrier()`` so ranks start together, then ``-n`` back-to-back calls timed with CUDA
   events on the current stream (GPU; time per call = total / n, as nccl-tests) or, on the CPU
   path, each call timed on its own with ``time.perf_counter`` (gloo's collectives are
   synchronous) and the **median** of the ``-n`` kept: on a shared machine a few calls are
   preempted and a mean would carry them (lab02 saw the same 1 KiB call take 752 µs in one block
   and 3,064 µs in the next with means of 5 calls);
3. the per-rank times are combined over ranks by ``-a``;
4. algbw = S / t and busbw = algbw x factor(op, n) exactly as nccl-tests ``doc/PERFORMANCE.md``
   (``labutil.comm.algbw_gbs`` / ``busbw_gbs``), where S is the size column: the whole array
   (all_gather / reduce_scatter: count per rank x n x dtype size);
5. with ``-c 1`` (the default) a separate call on patterned data is checked element-wise, on the
   device that holds it, against the analytic expected value in the message's dtype (tolerance
   CHECK_RTOL: 2 units of round-off; see "Result check" below); #wrong is summed over ranks. The
   check adds one call per block (against ``-w`` + ``-n``) and a vectorised compare, and keeps the
   memory per rank within MEMORY_FACTOR x the largest message + MEMORY_SLACK_BYTES.

Bad flags print one line and exit 2 before any rank starts work (:mod:`labutil.bench.cli`);
``--dry-run`` checks the flags alone.

Differences from nccl-tests, stated so the numbers are read correctly: torch's ``all_reduce`` and
``broadcast`` are in-place only, so their "out-of-place" column times the same call on a second,
separate buffer; torch.distributed defines no in-place all_to_all (gloo returned wrong data
when input and output alias, measured while writing this), so that block is printed as N/A and
left out of the average; sizes whose per-rank share rounds to 0 elements are skipped. Rank 0 prints the
nccl-tests table (parsed by ``labutil.parsers.parse_nccl_tests``) and writes the JSON result
atomically; a killed run leaves no result file.
"""

from __future__ import annotations

import argparse
import datetime
import os
import socket
import sys
import time

from .. import validate
from ..fileio import write_json_atomic
from . import cli, fit
from .common import CPU_BANNER, environment, resolve_backend

__all__ = ["OPS", "OP_ALIASES", "PERF_BINARY", "ROOTED", "DTYPES", "DTYPE_ALIASES", "REDOPS", "AVERAGE_MODES",
           "ALIGN", "BenchTimeout", "canonical_op", "canonical_dtype", "size_sweep", "layout", "bandwidths",
           "format_header", "format_row", "format_footer", "build_parser", "PATTERN_PERIOD", "CHECK_CHUNK_ELEMS",
           "CHECK_RTOL", "MEMORY_FACTOR", "MEMORY_SLACK_BYTES", "pattern_period", "pattern_values", "expected_values",
           "EXACT_INT_LIMIT", "count_wrong", "PROG", "parse_args", "main"]

OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")
OP_ALIASES = {"allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
              "alltoall": "all_to_all", "all2all": "all_to_all", "bcast": "broadcast"}
# nccl-tests binary per op (printed in "# Collective test starting: ...").
PERF_BINARY = {"all_reduce": "all_reduce_perf", "all_gather": "all_gather_perf",
               "reduce_scatter": "reduce_scatter_perf", "all_to_all": "alltoall_perf",
               "broadcast": "broadcast_perf"}
ROOTED = ("broadcast",)
# nccl-tests type names (src/common.cu test_typenames) and common aliases -> (torch dtype name, bytes)
DTYPES = {"int8": ("int8", 1), "uint8": ("uint8", 1), "int32": ("int32", 4), "int64": ("int64", 8),
          "half": ("float16", 2), "float": ("float32", 4), "double": ("float64", 8), "bfloat16": ("bfloat16", 2)}
DTYPE_ALIASES = {"fp16": "half", "float16": "half", "fp32": "float", "float32": "float", "fp64": "double",
                 "float64": "double", "bf16": "bfloat16", "int": "int32", "char": "int8"}
REDOPS = ("sum", "prod", "max", "min", "avg")
AVERAGE_MODES = {0: "rank 0", 1: "mean over ranks", 2: "min over ranks", 3: "max over ranks"}
ALIGN = 4  # nccl-tests all_gather.cu / reduce_scatter.cu: per-rank counts are multiples of 4


class BenchTimeout(RuntimeError):
    """A collective did not complete within --timeout-s (a rank stalled, crashed or the fabric hung)."""


# ---------------------------------------------------------------------------------------------
# pure helpers (unit-tested without torch.distributed)
# ---------------------------------------------------------------------------------------------
def canonical_op(op: str) -> str:
    key = str(op).strip().lower()
    key = OP_ALIASES.get(key, key)
    if key not in OPS:
        raise validate.unknown_name("collective op", op, list(OPS) + list(OP_ALIASES))
    return key


def canonical_dtype(name: str) -> str:
    key = str(name).strip().lower()
    key = DTYPE_ALIASES.get(key, key)
    if key not in DTYPES:
        raise validate.unknown_name("datatype", name, list(DTYPES) + list(DTYPE_ALIASES))
    return key


def size_sweep(minbytes: int, maxbytes: int, stepfactor: int = 1, stepbytes: int = 1 << 20) -> list[int]:
    """Message sizes as nccl-tests walks them: x stepfactor when > 1, else + stepbytes."""
    minbytes = validate.integer("minbytes", minbytes, lo=1)
    maxbytes = validate.integer("maxbytes", maxbytes, lo=1)
    if maxbytes < minbytes:
        raise ValueError(f"maxbytes must be >= minbytes ({minbytes}); got {maxbytes}")
    stepfactor = validate.integer("stepfactor", stepfactor, lo=1)
    if stepfactor == 1:
        stepbytes = validate.integer("stepbytes", stepbytes, lo=1)
    sizes, s = [], minbytes
    while s <= maxbytes:
        sizes.append(s)
        s = s * stepfactor if stepfactor > 1 else s + stepbytes
        if len(sizes) > 4096:
            raise ValueError("the sweep has more than 4096 sizes; raise -f/-i or narrow -b/-e")
    return sizes


def layout(op: str, size_bytes: int, n: int, elem_bytes: int) -> dict:
    """Element counts of one row, as nccl-tests' ``*GetCollByteCount`` computes them.

    Returns ``count`` (the printed count: per-rank for all_gather/reduce_scatter/all_to_all),
    ``in_numel``/``out_numel`` per rank, and ``size_bytes`` (the printed size, the S of algbw).
    """
    op = canonical_op(op)
    n = validate.integer("n", n, lo=1)
    size_bytes = validate.integer("size_bytes", size_bytes, lo=0)
    elem_bytes = validate.integer("elem_bytes", elem_bytes, lo=1, hi=16)
    count = size_bytes // elem_bytes
    if op in ("all_reduce", "broadcast"):
        return {"count": count, "in_numel": count, "out_numel": count, "size_bytes": count * elem_bytes}
    if op in ("all_gather", "reduce_scatter"):
        base = (count // (ALIGN * n)) * ALIGN
        big, small = base * n, base
        if op == "all_gather":
            return {"count": base, "in_numel": small, "out_numel": big, "size_bytes": big * elem_bytes}
        return {"count": base, "in_numel": big, "out_numel": small, "size_bytes": big * elem_bytes}
    per_peer = count // n  # all_to_all
    return {"count": per_peer, "in_numel": per_peer * n, "out_numel": per_peer * n,
            "size_bytes": per_peer * n * elem_bytes}


def bandwidths(op: str, size_bytes: float, time_s: float, n: int) -> tuple[float, float]:
    """(algbw, busbw) in GB/s for one row: nccl-tests doc/PERFORMANCE.md via labutil.comm."""
    from .. import comm

    alg = comm.algbw_gbs(size_bytes, time_s)
    return float(alg), float(comm.busbw_gbs(op, alg, n))


def _float_str(value: float, width: int) -> str:
    """nccl-tests ``getFloatStr`` (src/util.cu): 2 decimals while they fit, then fewer, then %e."""
    power, v = 0, 1
    while value >= v:
        power += 1
        v *= 10
    if power < width - 2:
        return f"{value:{width}.2f}"
    if power < width - 1:
        return f"{value:{width}.1f}"
    if power < width + 1:
        return f"{value:{width}.0f}"
    return f"{value:{width}.1e}"


def format_header(*, op: str, backend: str, minbytes: int, maxbytes: int, stepfactor: int, stepbytes: int,
                  warmup: int, iters: int, check: int, devices: list[dict], average: int) -> str:
    """The comment lines nccl-tests prints before its table (src/util.cu writeDeviceReport/ResultHeader)."""
    step = f"{stepfactor}(factor)" if stepfactor > 1 else f"{stepbytes}(bytes)"
    lines = [f"# labutil.bench.collectives (torch.distributed, backend {backend}); nccl-tests table format",
             f"# Collective test starting: {PERF_BINARY[op]}",
             f"# nThread 1 nGpus 1 minBytes {minbytes} maxBytes {maxbytes} step: {step} warmup iters: {warmup} "
             f"iters: {iters} agg iters: 1 validation: {check} graph: 0",
             f"# time: {AVERAGE_MODES[average]} of the per-rank time per call"
             + (f" (per rank: median of the {iters} calls, each timed alone)" if backend == "gloo" else ""),
             "#", "# Using devices"]
    if backend == "gloo":
        lines.insert(1, f"# {CPU_BANNER}")
    for d in devices:
        lines.append(f"#  Rank {d['rank']:2d} Group  0 Pid {d['pid']:6d} on {d['host']:>10s} device "
                     f"{d['device']:2d} [{d['bus_id']}] {d['name']}")
    lines += ["#",
              f"# {'':>10s}  {'':>12s}  {'':>8s}  {'':>6s}  {'':>6s}           out-of-place                       in-place          ",
              f"# {'size':>10s}  {'count':>12s}  {'type':>8s}  {'redop':>6s}  {'root':>6s}  {'time':>7s}  {'algbw':>6s}  "
              f"{'busbw':>6s}  {'#wrong':>6s}  {'time':>7s}  {'algbw':>6s}  {'busbw':>6s}  {'#wrong':>6s}",
              f"# {'(B)':>10s}  {'(elements)':>12s}  {'':>8s}  {'':>6s}  {'':>6s}  {'(us)':>7s}  {'(GB/s)':>6s}  "
              f"{'(GB/s)':>6s}  {'':>6s}  {'(us)':>7s}  {'(GB/s)':>6s}  {'(GB/s)':>6s}  {'':>6s}"]
    return "\n".join(lines)


def format_row(row: dict) -> str:
    """One table row, ``%12li  %12li  %8s  %6s  %6i`` then two ``  %7s  %6s  %6s  %6g`` blocks."""
    out = f"{row['size_bytes']:12d}  {row['count']:12d}  {row['type']:>8s}  {row['redop']:>6s}  {row['root']:6d}"
    for key in ("out_of_place", "in_place"):
        b = row[key]
        if b is None:
            out += f"  {'N/A':>7s}  {'N/A':>6s}  {'N/A':>6s}  {'N/A':>6s}"
            continue
        wrong = "   N/A" if b["wrong"] is None else f"{b['wrong']:6g}"
        out += (f"  {_float_str(b['time_us'], 7)}  {_float_str(b['algbw_gbs'], 6)}  "
                f"{_float_str(b['busbw_gbs'], 6)}  {wrong}")
    return out


def format_footer(op: str, wrong_rows: int, avg_busbw: float) -> str:
    return "\n".join([f"# {'Out of bounds values':<20s} : {wrong_rows} {'FAILED' if wrong_rows else 'OK'}",
                      f"# {'Avg bus bandwidth':<20s} : {avg_busbw:g} ",
                      "#", f"# Collective test concluded: {PERF_BINARY[op]}", "#"])


def build_parser() -> argparse.ArgumentParser:
    p = cli.Parser(prog="torchrun ... -m labutil.bench.collectives",
                                description="nccl-tests-style collective sweep over torch.distributed")
    p.add_argument("--op", default="all_reduce", help=f"one of {list(OPS)} (aliases: {sorted(OP_ALIASES)})")
    p.add_argument("-b", "--minbytes", default="32M", help="smallest message size (8, 1K, 64M, 1G; binary suffixes)")
    p.add_argument("-e", "--maxbytes", default="32M", help="largest message size")
    p.add_argument("-f", "--stepfactor", type=int, default=1, help="multiply the size by this between rows (>1)")
    p.add_argument("-i", "--stepbytes", default="1M", help="add this many bytes between rows (when -f is 1)")
    p.add_argument("-n", "--iters", type=int, default=20, help="timed iterations per size")
    p.add_argument("-w", "--warmup_iters", type=int, default=5, help="untimed warm-up iterations per size")
    p.add_argument("-c", "--check", type=int, default=1, choices=(0, 1), help="check results (#wrong)")
    p.add_argument("-d", "--datatype", default="float", help=f"one of {list(DTYPES)}")
    p.add_argument("-o", "--op_type", default="sum", help=f"reduction: one of {list(REDOPS)}")
    p.add_argument("-r", "--root", type=int, default=0, help="root rank of broadcast")
    p.add_argument("-a", "--average", type=int, default=1, choices=(0, 1, 2, 3),
                   help="combine per-rank times: 0=rank0 1=mean 2=min 3=max (nccl-tests default 1)")
    p.add_argument("--backend", default="auto", choices=("auto", "nccl", "gloo"))
    p.add_argument("--timeout-s", type=float, default=120.0, help="process-group timeout in seconds")
    p.add_argument("--out", default=None, help="JSON result file (written atomically by rank 0)")
    p.add_argument("--dry-run", action="store_true",
                   help="check every flag (and --out) and print the planned sweep, then exit; starts no rank")
    p.add_argument("--debug-stall-rank", type=int, default=-1, help=argparse.SUPPRESS)
    p.add_argument("--debug-stall-s", type=float, default=3600.0, help=argparse.SUPPRESS)
    return p


# ---------------------------------------------------------------------------------------------
# the distributed run
# ---------------------------------------------------------------------------------------------
# Result check, as nccl-tests does it (src/common.cu: InitData fills each rank's buffer with a
# deterministic pattern, CheckData compares on the device against the expected value and counts
# the elements off by more than a per-type tolerance). Here the pattern of rank r at element i is
#     v(i, r) = ((i + 3 r) mod m) + 1,   m = 4 (m = 2 for prod, so products stay small),
# small integers that every dtype represents exactly. Every expected result (a reduction over
# ranks, a gathered or scattered chunk) is then PERIODIC in i with period m: it is a table of m
# values computed analytically in float64 and rounded once to the message's dtype. The received
# buffer is viewed as rows of m elements and compared with that table on its own device, in
# chunks, so the check needs no copy of any other rank's data, no host round trip of the message
# and no int64 temporaries: at most 5 x CHECK_CHUNK_ELEMS x 8 bytes of scratch beyond the buffers
# (fp32 work dtype; 8 for double), within MEMORY_SLACK_BYTES.
PATTERN_PERIOD = 4
CHECK_CHUNK_ELEMS = 1 << 21          # 2 Mi elements per compare chunk (<= 5 fp32 chunk tensors = 40 MiB)
# Relative tolerance per dtype: 2 units of round-off of the dtype (u = 2^-11 half, 2^-8 bf16,
# 2^-24 float, 2^-53 double; IEEE 754 / bfloat16 formats), covering a different summation order
# for avg. Integer types and exactly representable sums compare exactly.
CHECK_RTOL = {"half": 2 * 2.0**-11, "bfloat16": 2 * 2.0**-8, "float": 2 * 2.0**-24, "double": 2 * 2.0**-53}
# Memory per rank (host on the CPU path, device on the GPU path): the timed buffers are freed
# before the check's buffers are built, so at most the two buffers of one call (input + output,
# <= 2 x the largest message S) plus the compare scratch (<= 40 MiB) are alive at a time.
# MEMORY_FACTOR is the stated bound used by tests/test_bench_memory.py: peak - baseline <= 3 S + 128 MiB
# (the slack covers the compare scratch, <= 40 MiB, and what the C allocator keeps of freed small buffers).
MEMORY_FACTOR = 3
MEMORY_SLACK_BYTES = 128 << 20


def pattern_period(redop: str) -> int:
    return 2 if redop == "prod" else PATTERN_PERIOD


def pattern_values(redop: str, rank: int, phase: int = 0) -> list[int]:
    """The m values of rank ``rank``'s pattern starting at element index ``phase``."""
    m = pattern_period(redop)
    return [((phase + j + 3 * rank) % m) + 1 for j in range(m)]


def expected_values(op: str, redop: str, n: int, rank: int, root: int = 0, phase: int = 0) -> list[list[float]]:
    """Analytic expected result on ``rank`` as one period-m table per output chunk (float64 values).

    all_reduce / broadcast: one table for the whole buffer; all_gather: chunk q = rank q's pattern;
    reduce_scatter: this rank's chunk of the reduction (phase = its offset in the input);
    all_to_all: chunk j = rank j's pattern at offset rank x chunk (phase).
    """
    m = pattern_period(redop)

    def reduce(tables):
        acc = [float(v) for v in tables[0]]
        for t in tables[1:]:
            for j in range(m):
                a, b = acc[j], float(t[j])
                acc[j] = {"sum": a + b, "avg": a + b, "prod": a * b, "max": max(a, b), "min": min(a, b)}[redop]
        if redop == "avg":
            acc = [a / len(tables) for a in acc]
        return acc

    if op == "all_reduce":
        return [reduce([pattern_values(redop, q, phase) for q in range(n)])]
    if op == "reduce_scatter":
        return [reduce([pattern_values(redop, q, phase) for q in range(n)])]
    if op == "broadcast":
        return [[float(v) for v in pattern_values(redop, root, phase)]]
    if op == "all_gather":
        return [[float(v) for v in pattern_values(redop, q, 0)] for q in range(n)]
    return [[float(v) for v in pattern_values(redop, j, phase)] for j in range(n)]  # all_to_all


def _pattern(torch, redop: str, numel: int, rank: int, dtype, device):
    """Rank ``rank``'s input: its period-m table tiled to ``numel`` elements (one buffer, no temporaries)."""
    m = pattern_period(redop)
    tile = torch.tensor(pattern_values(redop, rank), dtype=dtype, device=device)
    reps = -(-numel // m) if numel else 0
    return tile.repeat(reps)[:numel].contiguous()


# Largest integer up to which every integer is exact in each floating type (2^(mantissa bits + 1)).
EXACT_INT_LIMIT = {"half": 2**11, "bfloat16": 2**8, "float": 2**24, "double": 2**53}


def count_wrong(torch, got, table, dtype_key: str, phase: int = 0, integer_exact: bool = True):
    """Elements of ``got`` (1-D, on its device) that differ from the periodic ``table`` (float64
    values, period m, starting at ``phase``) beyond CHECK_RTOL[dtype] — a 0-d tensor on the device.

    The table is first rounded to the message's dtype (what a correct collective can return), then
    tiled once to one chunk (<= CHECK_CHUNK_ELEMS elements) that every chunk of ``got`` is compared
    with: scratch is a few chunk-sized tensors, whatever the message size. When every expected value
    is an integer the dtype represents exactly (and ``integer_exact``: sum/prod/max/min of the
    integer patterns, whose partial results are then exact in any order), the compare is exact —
    one pass; otherwise (avg, or sums beyond the dtype's exact integers) it uses CHECK_RTOL.
    """
    m = len(table)
    dev, dtype = got.device, got.dtype
    rolled = [table[(phase + j) % m] for j in range(m)]
    exact = not dtype.is_floating_point or (
        integer_exact and all(float(v).is_integer() and abs(v) <= EXACT_INT_LIMIT.get(dtype_key, 0) for v in rolled))
    work = torch.float64 if dtype == torch.float64 else torch.float32
    tab = torch.tensor(rolled, dtype=torch.float64).to(dtype)               # rounded to the dtype
    numel = got.numel()
    chunk = max(m, (min(CHECK_CHUNK_ELEMS, numel) // m) * m)
    ref = tab.to(dev).repeat(chunk // m)
    if exact:
        tol = None
    else:
        ref = ref.to(work)
        tol = ref.abs() * CHECK_RTOL.get(dtype_key, 0.0)
    wrong = torch.zeros((), dtype=torch.int64, device=dev)
    for start in range(0, numel, chunk):
        seg = got[start:start + chunk]
        k = seg.numel()
        if exact:
            wrong += (seg != ref[:k]).sum()
        else:
            wrong += ((seg.to(work) - ref[:k]).abs_() > tol[:k]).sum()
    return wrong


class _Runner:
    def __init__(self, args, torch, dist):
        self.a, self.torch, self.dist = args, torch, dist
        self.rank, self.n = dist.get_rank(), dist.get_world_size()
        self.op = canonical_op(args.op)
        self.dtype_key = canonical_dtype(args.datatype)
        self.dtype = getattr(torch, DTYPES[self.dtype_key][0])
        self.elem = DTYPES[self.dtype_key][1]
        self.redop = args.op_type
        self.device = torch.device("cuda", torch.cuda.current_device()) if args.backend == "nccl" else torch.device("cpu")
        ops = dist.ReduceOp
        self.red = {"sum": ops.SUM, "prod": ops.PRODUCT, "max": ops.MAX, "min": ops.MIN, "avg": getattr(ops, "AVG", None)}[self.redop]
        self._ag = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
        self._rs = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor

    # one call of the collective; in_place selects the buffer arrangement
    def call(self, inp, out, in_place: bool):
        d, op, r = self.dist, self.op, self.rank
        if op == "all_reduce":
            d.all_reduce(out if not in_place else inp, op=self.red)
        elif op == "broadcast":
            d.broadcast(out if not in_place else inp, src=self.a.root)
        elif op == "all_gather":
            c = inp.numel()
            self._ag(out, out[r * c:(r + 1) * c] if in_place else inp)
        elif op == "reduce_scatter":
            c = out.numel()
            self._rs(inp[r * c:(r + 1) * c] if in_place else out, inp, op=self.red)
        else:
            d.all_to_all_single(inp if in_place else out, inp)

    def buffers(self, lay):
        """The timed call's buffers (zeros; all_reduce/broadcast in place need no second one)."""
        t = self.torch
        inp = t.zeros(lay["in_numel"], dtype=self.dtype, device=self.device)
        out = t.zeros(lay["out_numel"], dtype=self.dtype, device=self.device)
        return inp, out

    def time_call(self, lay, in_place: bool) -> float:
        t, a = self.torch, self.a
        inp, out = self.buffers(lay)
        for _ in range(a.warmup_iters):
            self.call(inp, out, in_place)
        cuda = self.device.type == "cuda"
        if cuda:
            t.cuda.synchronize()
        self.dist.barrier()
        if cuda:
            start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(a.iters):
                self.call(inp, out, in_place)
            end.record()
            end.synchronize()
            per_call = start.elapsed_time(end) / 1e3 / a.iters
        else:  # gloo is synchronous: time every call, keep the median (robust to preempted calls)
            times = []
            for _ in range(a.iters):
                t0 = time.perf_counter()
                self.call(inp, out, in_place)
                times.append(time.perf_counter() - t0)
            times.sort()
            mid = len(times) // 2
            per_call = times[mid] if len(times) % 2 else 0.5 * (times[mid - 1] + times[mid])
        return self.combine(per_call)

    def combine(self, value: float) -> float:
        t, d = self.torch, self.dist
        x = t.tensor([value], dtype=t.float64, device=self.device)
        if self.a.average == 0:
            d.broadcast(x, src=0)
        else:
            d.all_reduce(x, op={1: d.ReduceOp.SUM, 2: d.ReduceOp.MIN, 3: d.ReduceOp.MAX}[self.a.average])
            if self.a.average == 1:
                x /= self.n
        return float(x.item())

    def check(self, lay, in_place: bool) -> int:
        """One call on patterned data, compared on the device with the analytic expected value
        (:func:`expected_values`, :func:`count_wrong`); #wrong elements summed over ranks."""
        t, op, r, n = self.torch, self.op, self.rank, self.n
        inp = _pattern(t, self.redop, lay["in_numel"], r, self.dtype, self.device)
        if op in ("all_reduce", "broadcast"):
            out = inp if in_place else inp.clone()
        else:
            out = t.zeros(lay["out_numel"], dtype=self.dtype, device=self.device)
        if op == "all_gather" and in_place:
            c = inp.numel()
            out[r * c:(r + 1) * c] = inp
        self.call(inp, out, in_place)
        if op in ("all_reduce", "broadcast"):
            got, chunks = (inp if in_place else out), 1
        elif op == "reduce_scatter":
            c = lay["out_numel"]
            got, chunks = (inp[r * c:(r + 1) * c] if in_place else out), 1
        else:
            got, chunks = (out if op == "all_gather" else (inp if in_place else out)), n
        c = got.numel() // chunks
        phase = 0
        if op == "reduce_scatter":
            phase = r * c
        elif op == "all_to_all":
            phase = r * c
        tables = expected_values(op, self.redop, n, r, self.a.root, phase)
        wrong = t.zeros((), dtype=t.int64, device=self.device)
        for q, table in enumerate(tables):  # tables already start at this rank's phase
            wrong += count_wrong(t, got[q * c:(q + 1) * c], table, self.dtype_key, 0, self.redop != "avg")
        del inp, out, got
        x = wrong.view(1)
        self.dist.all_reduce(x)
        return int(x.item())


def _devices(torch, dist, backend: str, local_rank: int) -> list[dict]:
    if backend == "nccl":
        props = torch.cuda.get_device_properties(local_rank)
        bus = f"{getattr(props, 'pci_domain_id', 0):04x}:{getattr(props, 'pci_bus_id', 0):02x}:" \
              f"{getattr(props, 'pci_device_id', 0):02x}"
        name = props.name
    else:
        bus, name = "cpu", "CPU (gloo)"
    mine = {"rank": dist.get_rank(), "pid": os.getpid(), "host": socket.gethostname(), "device": local_rank,
            "bus_id": bus, "name": name}
    allinfo = [None] * dist.get_world_size()
    dist.all_gather_object(allinfo, mine)
    return allinfo


def _rss_bytes() -> int:
    """Resident set size of this process now (Linux /proc/self/statm), 0 where unknown."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _reset_peak_rss() -> bool:
    """Reset this process's peak-RSS mark (Linux >= 4.0: ``echo 5 > /proc/self/clear_refs`` resets
    VmHWM, proc(5)), so the peak read after the sweep belongs to the sweep, not to torch's import."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss_bytes() -> int:
    """Peak RSS: VmHWM from /proc/self/status (since the last reset), else getrusage's lifetime peak."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:  # not POSIX
        return 0
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # Linux reports KiB


def _memory_now(torch, backend: str) -> dict:
    m = {"peak_reset": _reset_peak_rss(), "rss_bytes": _rss_bytes()}
    if backend == "nccl":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        m["device_bytes"] = int(torch.cuda.memory_allocated())
    return m


def _memory_record(torch, dist, backend: str, mem0: dict, max_message: int, runner) -> dict:
    """Per-rank memory of the sweep vs the stated bound MEMORY_FACTOR x largest message + slack.

    Host: peak RSS during the sweep (VmHWM after a reset at its start) minus the RSS before it. Device (NCCL path):
    torch.cuda.max_memory_allocated() minus the allocation before the sweep (NCCL's own
    internal buffers are outside torch's allocator and not counted; NCCL docs, NCCL_BUFFSIZE).
    """
    mine = {"rank": runner.rank, "baseline_rss_bytes": mem0["rss_bytes"], "peak_rss_bytes": _peak_rss_bytes(),
            "peak_reset": mem0["peak_reset"]}
    mine["host_growth_bytes"] = max(0, mine["peak_rss_bytes"] - mine["baseline_rss_bytes"])
    if backend == "nccl":
        mine["device_growth_bytes"] = max(0, int(torch.cuda.max_memory_allocated()) - mem0["device_bytes"])
    ranks = [None] * runner.n
    dist.all_gather_object(ranks, mine)
    bound = MEMORY_FACTOR * max_message + MEMORY_SLACK_BYTES
    key = "device_growth_bytes" if backend == "nccl" else "host_growth_bytes"
    worst = max(r[key] for r in ranks)
    return {"ranks": ranks, "max_message_bytes": max_message, "factor": MEMORY_FACTOR,
            "slack_bytes": MEMORY_SLACK_BYTES, "bound_bytes": bound, "measured": key,
            "max_growth_bytes": worst, "within_bound": worst <= bound}


PROG = "labutil.bench.collectives"


def memory_per_rank_bytes(max_message_bytes: int) -> int:
    """The stated per-rank bound of a sweep whose largest message is S: MEMORY_FACTOR x S + slack."""
    return MEMORY_FACTOR * int(max_message_bytes) + MEMORY_SLACK_BYTES


def check_fits(maxbytes: int, backend: str, local_ranks: int, *, available=None) -> None:
    """Refuse a sweep whose stated memory bound does not fit, before any rank allocates: on the CPU
    path (gloo) every rank on this host holds its buffers in host memory, so the need is
    ``local_ranks x (3 S + 128 MiB)``; on the GPU path (NCCL) each rank's buffers are on its own
    GPU, so the need is ``3 S + 128 MiB`` of that GPU's free memory. ``available`` (bytes, source)
    replaces the measured quantity (tests)."""
    per_rank = memory_per_rank_bytes(maxbytes)
    if backend == "nccl":
        fit.require_device(f"-e/--maxbytes {fit.fmt_bytes(maxbytes)}: each rank's buffers ({MEMORY_FACTOR} x S + "
                           f"{MEMORY_SLACK_BYTES >> 20} MiB on its GPU)", per_rank, "lower -e/--maxbytes",
                           available=available)
    else:
        fit.require_host(f"-e/--maxbytes {fit.fmt_bytes(maxbytes)} on {local_ranks} rank"
                         f"{'s' if local_ranks > 1 else ''} of this host ({local_ranks} x ({MEMORY_FACTOR} x S + "
                         f"{MEMORY_SLACK_BYTES >> 20} MiB) of host memory)", local_ranks * per_rank,
                         "lower -e/--maxbytes or run fewer ranks per host", available=available)


def parse_args(argv=None, local_ranks: int | None = None):
    """Parse and validate every flag; raises :class:`labutil.bench.cli.UsageError` (one line).

    ``local_ranks``: ranks that will share this host (default torchrun's LOCAL_WORLD_SIZE, else 1);
    the launcher's pre-check passes its ``nproc``. The sweep must fit in memory (:func:`check_fits`)."""
    args = build_parser().parse_args(argv)
    try:
        args.op = canonical_op(args.op)
        args.datatype = canonical_dtype(args.datatype)
    except KeyError as exc:
        raise cli.UsageError(cli.message(exc)) from None
    if args.op_type not in REDOPS:
        raise cli.UsageError(f"-o/--op_type must be one of {list(REDOPS)}; got {args.op_type!r}")
    args.minb = cli.size_flag("-b/--minbytes", args.minbytes)
    args.maxb = cli.size_flag("-e/--maxbytes", args.maxbytes)
    if args.maxb < args.minb:
        raise cli.UsageError(f"-e/--maxbytes ({args.maxbytes}) must be >= -b/--minbytes ({args.minbytes})")
    cli.int_flag("-f/--stepfactor", args.stepfactor, lo=1)
    args.stepb = cli.size_flag("-i/--stepbytes", args.stepbytes)
    cli.int_flag("-n/--iters", args.iters, lo=1, hi=100_000)
    cli.int_flag("-w/--warmup_iters", args.warmup_iters, lo=0, hi=100_000)
    cli.int_flag("-r/--root", args.root, lo=0)
    cli.timeout_s(args.timeout_s)
    try:
        args.sizes = size_sweep(args.minb, args.maxb, args.stepfactor, args.stepb)
        args.backend = resolve_backend(args.backend)
    except ValueError as exc:
        raise cli.UsageError(cli.message(exc)) from None
    ws = os.environ.get("WORLD_SIZE")
    if ws is not None and ws.isdigit() and not args.root < int(ws):
        raise cli.UsageError(f"-r/--root must be in [0, {int(ws) - 1}] for {ws} ranks; got {args.root}")
    ranks_here = fit.local_ranks() if local_ranks is None else cli.int_flag("local_ranks", local_ranks, lo=1, hi=1024)
    check_fits(args.maxb, args.backend, ranks_here)
    cli.writable_out(args.out)
    return args


def main(argv=None) -> int:
    try:
        args = parse_args(argv)
    except cli.UsageError as exc:
        return cli.report(PROG, exc)
    minb, maxb, stepb, sizes = args.minb, args.maxb, args.stepb, args.sizes
    if args.dry_run:
        print(f"{PROG}: flags OK: {args.op} {args.datatype} on backend {args.backend}, {len(sizes)} sizes "
              f"{minb}..{maxb} B, -n {args.iters} -w {args.warmup_iters} -c {args.check}"
              + (f", result -> {args.out}" if args.out else ""))
        return 0
    if "RANK" not in os.environ:
        return cli.report(PROG, cli.UsageError(
            "must be launched by torchrun (python -m torch.distributed.run --nproc-per-node=N -m "
            "labutil.bench.collectives ...); use --dry-run to check the flags alone"))

    import torch
    import torch.distributed as dist

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    timeout = datetime.timedelta(seconds=args.timeout_s)
    if args.backend == "nccl":
        torch.cuda.set_device(local_rank)  # before the process group, else barrier() may guess the device and hang (pytorch PR #134617, NVIDIA/nccl #541)
        dist.init_process_group("nccl", timeout=timeout, device_id=torch.device("cuda", local_rank))
    else:
        dist.init_process_group("gloo", timeout=timeout)
    rank, n = dist.get_rank(), dist.get_world_size()
    if not 0 <= args.root < n:  # WORLD_SIZE was checked before init; this guards a launcher without it
        dist.destroy_process_group()
        return cli.report(PROG, cli.UsageError(f"-r/--root must be in [0, {n - 1}] for {n} ranks; got {args.root}"))
    code = 0
    try:
        devices = _devices(torch, dist, args.backend, local_rank)
        runner = _Runner(args, torch, dist)
        header = format_header(op=args.op, backend=args.backend, minbytes=minb, maxbytes=maxb,
                               stepfactor=args.stepfactor, stepbytes=stepb, warmup=args.warmup_iters,
                               iters=args.iters, check=args.check, devices=devices, average=args.average)
        lines = [header]
        if rank == 0:
            print(header, flush=True)
        if rank == args.debug_stall_rank:
            time.sleep(args.debug_stall_s)  # test hook: this rank never joins the first collective
        mem0 = _memory_now(torch, args.backend)
        rows = []
        for size in sizes:
            lay = layout(args.op, size, n, runner.elem)
            if lay["out_numel"] == 0 or lay["in_numel"] == 0:
                continue
            row = {"size_bytes": lay["size_bytes"], "count": lay["count"], "type": args.datatype,
                   "redop": args.op_type if args.op in ("all_reduce", "reduce_scatter") else "none",
                   "root": args.root if args.op in ROOTED else -1}
            for key, in_place in (("out_of_place", False), ("in_place", True)):
                if in_place and args.op == "all_to_all":
                    row[key] = None  # no in-place all_to_all in torch.distributed (see module doc)
                    continue
                t_s = runner.time_call(lay, in_place)
                alg, bus = bandwidths(args.op, lay["size_bytes"], t_s, n)
                t_check = time.perf_counter()
                wrong = runner.check(lay, in_place) if args.check else None
                t_check = time.perf_counter() - t_check
                row[key] = {"time_us": t_s * 1e6, "algbw_gbs": alg, "busbw_gbs": bus, "wrong": wrong,
                            "check_s": t_check if args.check else None}
            rows.append(row)
            line = format_row(row)
            lines.append(line)
            if rank == 0:
                print(line, flush=True)
        if not rows:
            raise ValueError(f"no size in [{minb}, {maxb}] gives a non-empty {args.op} on {n} ranks; raise -e")
        mem = _memory_record(torch, dist, args.backend, mem0, max(r["size_bytes"] for r in rows), runner)
        blocks = [r[k] for r in rows for k in ("out_of_place", "in_place") if r[k] is not None]
        avg_bus = sum(b["busbw_gbs"] for b in blocks) / len(blocks)
        wrong_total = sum(b["wrong"] or 0 for b in blocks)
        wrong_rows = sum(1 for b in blocks if b["wrong"])
        footer = format_footer(args.op, wrong_rows, avg_bus)
        lines.append(footer)
        if rank == 0:
            print(footer, flush=True)
            if args.out:
                env = environment(args.backend)
                env.update({"world_size": n, "ranks": devices,
                            "hosts": sorted({d["host"] for d in devices}),
                            "nnodes": len({d["host"] for d in devices})})
                write_json_atomic(args.out, {
                    "benchmark": "collectives", "op": args.op, "backend": args.backend, "world_size": n,
                    "cpu_path": args.backend == "gloo", "banner": CPU_BANNER if args.backend == "gloo" else "",
                    "dtype": args.datatype, "redop": args.op_type, "root": args.root, "iters": args.iters,
                    "warmup_iters": args.warmup_iters, "check": args.check,
                    "time_combine": AVERAGE_MODES[args.average],
                    "timer": ("cuda_events" if args.backend == "nccl"
                              else "perf_counter (median of the n per-call times)"),
                    "check_method": "on-device compare with the analytic expected value in the message dtype",
                    "check_rtol": CHECK_RTOL.get(args.datatype, 0.0), "memory": mem,
                    "rows": rows, "avg_busbw_gbs": avg_bus, "wrong_total": wrong_total,
                    "environment": env, "table": "\n".join(lines) + "\n"})
        if args.check and wrong_total:
            code = 1
    except Exception as exc:  # noqa: BLE001 - one clear message per failure, then a non-zero exit
        if cli.is_timeout(exc):
            print(f"labutil.bench.collectives: ERROR on rank {rank}: a collective did not complete within "
                  f"--timeout-s={args.timeout_s:g} s (a rank stalled or crashed, or the fabric hung). "
                  f"Underlying error: {type(exc).__name__}: {str(exc)[:300]}", file=sys.stderr, flush=True)
            code = cli.EXIT_TIMEOUT
        else:
            print(f"labutil.bench.collectives: ERROR on rank {rank}: {type(exc).__name__}: {exc}",
                  file=sys.stderr, flush=True)
            code = 2
    finally:
        if dist.is_initialized():
            if code == cli.EXIT_TIMEOUT:
                # peers are gone or stuck: do not wait on them (abort instead of a collective shutdown)
                os._exit(code)
            dist.destroy_process_group()
    return code


if __name__ == "__main__":
    sys.exit(main())
