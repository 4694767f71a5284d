"""Parser for the stdout of NVIDIA nccl-tests (``all_reduce_perf`` & co.) and of our own
``labutil.bench.collectives`` (which prints the same table).

Format (NVIDIA/nccl-tests ``src/common.cu``, README and ``doc/PERFORMANCE.md``; samples pasted
in nccl-tests issues #82, #176, #287 and in stas00/ml-engineering)::

    # nccl-tests version 2.18.3 nccl-headers=22809 nccl-library=22809      (>= 2.17)
    # Collective test starting: all_reduce_perf                            (>= 2.17)
    # nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 ...
    # Using devices
    #  Rank  0 Group  0 Pid   6899 on node-a device  0 [0000:04:00] NVIDIA H100 80GB HBM3
    #                                                   out-of-place                       in-place
    #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
    #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
               8             2     float     sum      -1    135.8    0.00    0.00      0    123.5    0.00    0.00      0
    # Out of bounds values : 0 OK
    # Avg bus bandwidth    : 70.742

The column header is read by name, so older layouts work too (no ``redop``/``root`` columns,
an ``error`` column with the max error such as ``1e-06`` instead of ``#wrong``, ``N/A`` when
``-c 0``; builds that print a ``redop``/``root`` header but no value under it for alltoall /
all_gather); NCCL INFO lines and mpirun ``[1,0]<stdout>:`` prefixes between rows are skipped.
A UTF-8 BOM, CRLF line ends and a truncated last row are tolerated (the partial row is counted
in ``skipped_lines``; a row cut after its out-of-place block - a run that hung or died during the
in-place pass - keeps its out-of-place values with ``inplace_*`` None). Variants of real pastes
that are read as well: comment lines whose ``#`` was lost (GitHub renders ``# ...`` as a heading,
e.g. NVIDIA/nccl #583), the ``cputime`` column of ``-C 1`` and the trailing ``timestamp`` column
(two tokens, date and time) of nccl-tests >= 2.14 (``src/util.cu`` ``writeResultHeader``), the
per-iteration ``i_min i_max i_p99 i_cv%`` columns, launcher prefixes (``[1,0]<stdout>:``,
``0: ``, ``host: ``, ``(RayWorkerWrapper pid=1)``, ``host [stderr]``, ISO timestamps) and ANSI colour
codes. Several processes of a binary built without ``MPI=1`` each print a header and run alone
(every device line says ``Rank 0``; NVIDIA/nccl-tests #107): :attr:`NcclTestsResult.independent_runs`
is True and ``single_rank`` too, since each process's busbw is that of a one-rank run. ``Avg bus bandwidth : 0`` of a single-rank run is a real value: busbw =
algbw x 2(n-1)/n is 0 for n = 1 (see :attr:`NcclTestsResult.single_rank`).
Units: time in microseconds, algbw/busbw in GB/s (1e9 B/s), as nccl-tests prints them.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

from ._common import NCCL_VERSION, ParseError, require_text, strip_launcher_prefix, to_float, to_int

__all__ = ["NcclTestRow", "NcclTestDevice", "NcclTestsResult", "parse_nccl_tests", "OP_NAMES", "parse_nccl_tests_json",
           "looks_like_nccl_tests_json"]

TOOL = "nccl-tests output"

# binary name stem -> canonical collective name (labutil.comm.OPS spelling)
OP_NAMES = {
    "all_reduce": "all_reduce", "allreduce": "all_reduce",
    "all_gather": "all_gather", "allgather": "all_gather",
    "reduce_scatter": "reduce_scatter", "reducescatter": "reduce_scatter",
    "alltoall": "all_to_all", "all_to_all": "all_to_all",
    "broadcast": "broadcast", "reduce": "reduce", "sendrecv": "sendrecv",
    "gather": "gather", "scatter": "scatter", "hypercube": "hypercube",
}


@dataclass(frozen=True)
class NcclTestRow:
    """One message size. ``wrong`` is the #wrong count (None when ``N/A``, i.e. run with -c 0);
    ``max_error`` is the old ``error`` column (float) of nccl-tests < 2.10, else None.
    In-place fields are None where the tool printed ``N/A`` or no in-place block."""

    size_bytes: int
    count: int
    dtype: str
    redop: str
    root: int
    time_us: float
    algbw_gbs: float
    busbw_gbs: float
    wrong: int | None
    inplace_time_us: float | None
    inplace_algbw_gbs: float | None
    inplace_busbw_gbs: float | None
    inplace_wrong: int | None
    max_error: float | None = None
    inplace_max_error: float | None = None

    @property
    def best_busbw_gbs(self) -> float:
        """The larger of out-of-place and in-place busbw."""
        return max(self.busbw_gbs, self.inplace_busbw_gbs or 0.0)


@dataclass(frozen=True)
class NcclTestDevice:
    rank: int
    group: int | None
    pid: int
    host: str
    device: int
    bus_id: str
    name: str


@dataclass
class NcclTestsResult:
    """Parsed nccl-tests run. ``op`` is the canonical collective in ``labutil.comm.OPS`` spelling
    ('all_reduce', 'all_gather', 'reduce_scatter', 'all_to_all', 'broadcast', ...)
    or None when the output does not say which test ran (pass ``op=`` to the parser then)."""

    op: str | None
    binary: str | None
    rows: list[NcclTestRow]
    avg_busbw_gbs: float | None
    devices: list[NcclTestDevice] = field(default_factory=list)
    params: dict = field(default_factory=dict)
    nccl_version: str | None = None
    nccl_tests_version: str | None = None
    out_of_bounds: int | None = None
    columns: tuple[str, ...] = ()
    skipped_lines: int = 0

    @property
    def n_ranks(self) -> int | None:
        """Ranks of the communicator (distinct rank numbers of the device lines)."""
        return len({d.rank for d in self.devices}) or None

    @property
    def independent_runs(self) -> bool:
        """True when several processes each printed a device list with the same rank numbers: the
        binary was built without MPI support (``make MPI=1``) and each process ran its own one-rank
        test (NVIDIA/nccl-tests #107, #294: 'Avg bus bandwidth : 0')."""
        ranks = [d.rank for d in self.devices]
        return len(ranks) != len(set(ranks))

    @property
    def hosts(self) -> list[str]:
        seen = []
        for d in self.devices:
            if d.host not in seen:
                seen.append(d.host)
        return seen

    @property
    def single_rank(self) -> bool:
        """True for a one-rank run (one device line, or nThread x nGpus = 1 and no device list
        with more than one rank): busbw is 0 by definition there (factor 2(n-1)/n = 0)."""
        if self.devices:
            return self.n_ranks == 1
        n = self.params.get("nThread", 1) * self.params.get("nGpus", 1)
        return n == 1 and all(r.busbw_gbs == 0 and (r.inplace_busbw_gbs or 0) == 0 for r in self.rows) \
            and any(r.algbw_gbs > 0 for r in self.rows)

    @property
    def peak_algbw_gbs(self) -> float:
        """Largest algbw over all rows (out-of-place and in-place)."""
        return max(max(r.algbw_gbs, r.inplace_algbw_gbs or 0.0) for r in self.rows)

    @property
    def peak_busbw_gbs(self) -> float:
        """Largest busbw over all rows (out-of-place and in-place)."""
        return max(r.best_busbw_gbs for r in self.rows)

    @property
    def sizes_bytes(self) -> list[int]:
        return [r.size_bytes for r in self.rows]

    def total_wrong(self) -> int:
        """Sum of #wrong over all rows (N/A counted as 0)."""
        return sum((r.wrong or 0) + (r.inplace_wrong or 0) for r in self.rows)

    def row_at(self, size_bytes: int) -> NcclTestRow:
        for r in self.rows:
            if r.size_bytes == size_bytes:
                return r
        raise KeyError(f"no row with size_bytes={size_bytes}; sizes: {self.sizes_bytes}")


_DEVICE = re.compile(r"^Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+"
                     r"\[([^\]]*)\]\s*(.*)$")
_STARTING = re.compile(r"^Collective test starting:\s*(\S+)")
_VERSION = NCCL_VERSION
_TESTS_VERSION = re.compile(r"^nccl-tests version\s+(\S+)")
_AVG = re.compile(r"^Avg bus bandwidth\s*:\s*(\S+)")
_OOB = re.compile(r"^Out of bounds values\s*:\s*(\d+)")
_META = re.compile(r"^(?:nThread\s|Using devices|out-of-place|\(B\)|Collective test|nccl-tests version|"
                   r"Out of bounds values|Avg bus bandwidth|Rank\s+\d+\s+(?:Group\s+\d+\s+)?Pid\s)")
_BINARY = re.compile(r"(?:^|[/\s])([a-z_]+)_perf(?:_mpi)?\b")
_PARAM = re.compile(r"(nThread|nGpus|minBytes|maxBytes|warmup iters|iters|agg iters|validation|graph|unalign)"
                    r":?\s+(-?\d+)")
_STAMP = re.compile(r"^\d{4}-\d\d-\d\d$")
_CLOCK = re.compile(r"^\d\d:\d\d:\d\d(?:\.\d+)?$")


def _op_from_binary(binary: str | None) -> str | None:
    if not binary:
        return None
    stem = re.sub(r"_perf(_mpi)?$", "", binary.rsplit("/", 1)[-1])
    return OP_NAMES.get(stem)


def _is_header(tokens: list[str]) -> bool:
    return "size" in tokens and "count" in tokens and "busbw" in tokens and ("time" in tokens or "cputime" in tokens)


def _layout(tokens: list[str]):
    """Split header tokens into leading columns and the out-of-place / in-place blocks
    (``cputime`` of ``-C 1`` read as ``time``; the trailing ``timestamp`` column dropped)."""
    tokens = ["time" if t == "cputime" else t for t in tokens if t != "timestamp"]
    first = tokens.index("time")
    lead = tokens[:first]
    blocks, cur = [], []
    for t in tokens[first:]:
        if t == "time" and cur:
            blocks.append(cur)
            cur = []
        cur.append(t)
    blocks.append(cur)
    return lead, blocks[:2]


def _block_values(names: list[str], values: list[str]):
    d = dict(zip(names, values))
    time_us = to_float(d.get("time"))
    algbw = to_float(d.get("algbw"))
    busbw = to_float(d.get("busbw"))
    wrong = max_err = None
    if "#wrong" in d:
        wrong = to_int(d["#wrong"])
    elif "error" in d:
        max_err = to_float(d["error"])
    return time_us, algbw, busbw, wrong, max_err


def parse_nccl_tests(text, op: str | None = None) -> NcclTestsResult:
    """Parse the stdout of an nccl-tests binary (or of ``labutil.bench.collectives``).

    ``op`` overrides/supplies the collective when the output does not name it. Raises
    :class:`ParseError` when no column header or no data row is found.
    """
    text = require_text(text, TOOL)
    if looks_like_nccl_tests_json(text):      # the -J file: same result from the JSON
        return parse_nccl_tests_json(text, op)
    lines = text.split("\n")
    binary = None
    devices: list[NcclTestDevice] = []
    params: dict = {}
    nccl_version = tests_version = None
    avg = None
    oob = None
    lead = blocks = None
    header_tokens: tuple[str, ...] = ()
    rows: list[NcclTestRow] = []
    skipped = 0
    for raw in lines:
        line = strip_launcher_prefix(raw).strip()
        if not line:
            continue
        hashed = line.startswith("#")
        body = line.lstrip("#").strip()
        tokens = body.split()
        if _is_header(tokens):
            try:
                lead, blocks = _layout(tokens)
            except ValueError:
                continue
            header_tokens = tuple(tokens)
            continue
        if hashed or _META.match(body):
            m = _STARTING.match(body)
            if m:
                binary = m.group(1)
                continue
            m = _TESTS_VERSION.match(body)
            if m:
                tests_version = m.group(1)
                continue
            m = _DEVICE.match(body)
            if m:
                devices.append(NcclTestDevice(int(m.group(1)), to_int(m.group(2)), int(m.group(3)), m.group(4),
                                              int(m.group(5)), m.group(6), m.group(7).strip()))
                continue
            m = _AVG.match(body)
            if m:
                avg = to_float(m.group(1))
                continue
            m = _OOB.match(body)
            if m:
                oob = int(m.group(1))
                continue
            if "nThread" in body:
                for k, v in _PARAM.findall(body):
                    params[k.replace(" ", "_")] = int(v)
            continue
        m = _VERSION.search(line)
        if m and nccl_version is None:
            nccl_version = m.group(1)
        if binary is None:
            mb = _BINARY.search(line)
            if mb and not line[:1].isdigit():
                binary = mb.group(1) + "_perf"
        if blocks is None or not line[:1].isdigit():
            skipped += 1 if line[:1].isdigit() else 0
            continue
        tokens = line.split()
        if len(tokens) > 2 and _STAMP.match(tokens[-2]) and _CLOCK.match(tokens[-1]):
            tokens = tokens[:-2]  # the timestamp column (date and time) of -T / report_timestamps
        row = None
        for blks in (blocks, blocks[:1]):  # full row, else a row cut after its out-of-place block
            row_lead = _row_lead(tokens, lead, blks)
            if row_lead is not None:
                row = _row(tokens, row_lead, blks)
                break
        if row is None:
            skipped += 1
        else:
            rows.append(row)
    if blocks is None:
        raise ParseError(f"{TOOL}: no column header line ('#  size  count  type ... time  algbw  busbw') found")
    if not rows:
        raise ParseError(f"{TOOL}: found the column header but no complete data row (truncated output?)")
    resolved = op if op is not None else _op_from_binary(binary)
    if op is not None and op not in OP_NAMES.values():
        raise ParseError(f"{TOOL}: op must be one of {sorted(set(OP_NAMES.values()))}; got {op!r}")
    return NcclTestsResult(op=resolved, binary=binary, rows=rows, avg_busbw_gbs=avg, devices=devices,
                           params=params, nccl_version=nccl_version, nccl_tests_version=tests_version,
                           out_of_bounds=oob, columns=header_tokens, skipped_lines=skipped)


_OPTIONAL_LEAD = ("redop", "root")


def _row_lead(tokens: list[str], lead: list[str], blocks: list[list[str]]) -> list[str] | None:
    """The leading columns this row actually fills.

    Some nccl-tests builds print a ``redop`` / ``root`` header but leave the cells empty for
    collectives without a reduction or a root (alltoall, all_gather of 2.10-2.12 builds): the row
    then has fewer tokens than the header. The missing optional columns are identified by type
    (``redop`` is a word, ``root`` an integer); a row with fewer tokens than that (truncated
    output) gives None."""
    n_block = sum(len(b) for b in blocks)
    extra = len(tokens) - n_block - len(lead)
    if extra == 0:
        return lead
    if extra > 0:
        return None
    fixed = [c for c in lead if c not in _OPTIONAL_LEAD]
    optional = [c for c in lead if c in _OPTIONAL_LEAD]
    present = len(tokens) - n_block - len(fixed)
    if present < 0 or present > len(optional):
        return None
    cand = tokens[len(fixed):len(fixed) + present]
    keep = []
    for tok in cand:
        col = "root" if to_int(tok) is not None else "redop"
        if col not in optional or col in keep:
            return None
        keep.append(col)
    return fixed + [c for c in optional if c in keep]


def _row(tokens: list[str], lead: list[str], blocks: list[list[str]]) -> NcclTestRow | None:
    n_lead = len(lead)
    d = dict(zip(lead, tokens[:n_lead]))
    size = to_int(d.get("size"))
    count = to_int(d.get("count"))
    if size is None or count is None or size < 0 or count < 0:
        return None
    root = to_int(d.get("root", "-1"))
    if d.get("type", "x")[:1].isdigit():
        return None
    out = _block_values(blocks[0], tokens[n_lead:n_lead + len(blocks[0])])
    if out[0] is None or out[1] is None or out[2] is None or out[0] <= 0 or out[1] < 0 or out[2] < 0:
        return None
    if len(blocks) > 1:
        start = n_lead + len(blocks[0])
        inp = _block_values(blocks[1], tokens[start:start + len(blocks[1])])
    else:
        inp = (None, None, None, None, None)
    return NcclTestRow(size_bytes=size, count=count, dtype=d.get("type", ""), redop=d.get("redop", "none"),
                       root=-1 if root is None else root, time_us=out[0], algbw_gbs=out[1], busbw_gbs=out[2],
                       wrong=out[3], inplace_time_us=inp[0], inplace_algbw_gbs=inp[1], inplace_busbw_gbs=inp[2],
                       inplace_wrong=inp[3], max_error=out[4], inplace_max_error=inp[4])


# ----------------------------------------------------------------------------- -J JSON (nccl-tests >= 2.18.5)
# Format: see the docstring of parse_nccl_tests_json (nccl-tests src/util.cu, JSON_FILE_VERSION 3).
def looks_like_nccl_tests_json(text: str) -> bool:
    head = text.lstrip()[:4096]
    return head.startswith("{") and ('"results"' in head or '"nccl_version"' in head or '"config"' in head)


def _num(v, what: str):
    if v is None:
        return None
    if isinstance(v, str):
        if v.strip().lower() == "nan":
            return None
        x = to_float(v)
    elif isinstance(v, bool):
        raise ParseError(f"nccl-tests JSON: {what} is a boolean ({v!r})")
    elif isinstance(v, (int, float)):
        x = float(v)
    else:
        raise ParseError(f"nccl-tests JSON: {what} is not a number ({v!r})")
    if x is None or not math.isfinite(x):
        return None
    return x


def parse_nccl_tests_json(text, op: str | None = None) -> NcclTestsResult:
    """Parse the ``-J/--output_file <file>.json`` output of an nccl-tests binary into an
    :class:`NcclTestsResult` (the same result as the text table).

    Format (nccl-tests ``src/util.cu``, JSON_FILE_VERSION 3; JSON output added in commit ad956f1,
    2025-10-17, first released in v2.18.5): one object with ``version``, ``start_time``, ``args``
    (argv), ``env``, ``nccl_version`` (int, 22703 = 2.27.3), ``config`` (``nthreads``, ``ngpus``,
    ``minimum_bytes``, ``maximum_bytes``, ..., ``devices``: [{``rank``, ``group``, ``pid``,
    ``hostname``, ``device``, ``device_hex``, ``device_info``}]), ``results``: [{``size``, ``count``,
    ``type``, ``redop``, ``root``, ``out_of_place``: {``time`` | ``cpu_time``, ``alg_bw``, ``bus_bw``,
    ``nwrong``}, ``in_place``: {...}, ``actual_iterations``, ``experiment_name``}],
    ``out_of_bounds``: {``count``, ``okay``}, ``average_bus_bandwidth``: {``bandwidth``, ``okay``},
    ``errors``, ``end_time``. Units as in the table (us, GB/s); NaN is the string ``"nan"``;
    ``nwrong`` is null without validation (``-c 0``). Raises ParseError on anything else."""
    text = require_text(text, "nccl-tests JSON")
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"nccl-tests JSON: not JSON ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise ParseError("nccl-tests JSON: no 'results' list (is this an nccl-tests -J output file?)")
    rows = []
    for i, r in enumerate(doc["results"]):
        if not isinstance(r, dict):
            raise ParseError(f"nccl-tests JSON: results[{i}] is not an object")
        oop, inp = r.get("out_of_place"), r.get("in_place")
        blk = oop if isinstance(oop, dict) else inp if isinstance(inp, dict) else None
        size = to_int(r.get("size"))
        if blk is None or size is None:
            raise ParseError(f"nccl-tests JSON: results[{i}] has no size or no out_of_place/in_place block")
        t = _num(blk.get("time", blk.get("cpu_time")), "time")
        alg, bus = _num(blk.get("alg_bw"), "alg_bw"), _num(blk.get("bus_bw"), "bus_bw")
        if t is None or alg is None or bus is None or min(t, alg, bus) < 0:
            raise ParseError(f"nccl-tests JSON: results[{i}] lacks a time / alg_bw / bus_bw number")
        ip = inp if isinstance(inp, dict) and blk is oop else None

        def wrong(b):
            w = _num(b.get("nwrong"), "nwrong") if b else None
            return int(w) if w is not None else None

        rows.append(NcclTestRow(
            size_bytes=size, count=to_int(r.get("count")) or 0, dtype=str(r.get("type", "")).strip(),
            redop=str(r.get("redop", "")).strip(), root=to_int(str(r.get("root", "-1")).strip()) or -1,
            time_us=t, algbw_gbs=alg, busbw_gbs=bus, wrong=wrong(blk),
            inplace_time_us=_num(ip.get("time", ip.get("cpu_time")), "time") if ip else None,
            inplace_algbw_gbs=_num(ip.get("alg_bw"), "alg_bw") if ip else None,
            inplace_busbw_gbs=_num(ip.get("bus_bw"), "bus_bw") if ip else None,
            inplace_wrong=wrong(ip)))
    if not rows:
        raise ParseError("nccl-tests JSON: the results list is empty (the test did not run)")
    cfg = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    devices = []
    for d in cfg.get("devices") or []:
        if isinstance(d, dict) and to_int(d.get("rank")) is not None:
            devices.append(NcclTestDevice(to_int(d.get("rank")), to_int(d.get("group")), to_int(d.get("pid")) or 0,
                                          str(d.get("hostname", "")), to_int(d.get("device")) or 0,
                                          str(d.get("device_hex", "")).strip("[]"), str(d.get("device_info", ""))))
    args = doc.get("args") if isinstance(doc.get("args"), list) else []
    binary = str(args[0]).rsplit("/", 1)[-1] if args else None
    the_op = OP_NAMES.get(op, op) if op else _op_from_binary(binary)
    avg = doc.get("average_bus_bandwidth")
    oob = doc.get("out_of_bounds")
    v = to_int(doc.get("nccl_version"))
    ver = f"{v // 10000}.{v // 100 % 100}.{v % 100}" if v and v >= 10000 else None
    params = {k: cfg[k] for k in ("nthreads", "ngpus", "minimum_bytes", "maximum_bytes", "iterations") if k in cfg}
    if "nthreads" in params:
        params["nThread"] = params["nthreads"]
    if "ngpus" in params:
        params["nGpus"] = params["ngpus"]
    return NcclTestsResult(op=the_op, binary=binary, rows=rows,
                           avg_busbw_gbs=_num(avg.get("bandwidth"), "bandwidth") if isinstance(avg, dict) else None,
                           devices=devices, params=params, nccl_version=ver,
                           nccl_tests_version=f"json v{doc.get('version')}" if doc.get("version") is not None else None,
                           out_of_bounds=to_int(oob.get("count")) if isinstance(oob, dict) else None,
                           columns=("json",))
