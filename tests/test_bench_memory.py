"""labutil.bench.collectives result check: analytic expected values, on-device compare, memory bound.

The check follows nccl-tests (src/common.cu InitData / CheckData): a deterministic pattern per
rank, an expected value computed without the other ranks' buffers, a per-dtype tolerance, and
#wrong counted where the data lives. The memory test runs a real 2-rank gloo sweep at 256 MiB
and fails when a rank's peak RSS grows by more than the stated bound
MEMORY_FACTOR x largest message + MEMORY_SLACK_BYTES.
"""

import itertools

import pytest
import torch

from labutil.bench import collectives as C
from labutil.machine import launch


def _brute(op, redop, n, rank, numel_per_rank, root=0):
    """The expected output built the slow way: every rank's full input, reduced element by element."""
    m = C.pattern_period(redop)
    inputs = [[((i + 3 * q) % m) + 1 for i in range(numel_per_rank * (n if op in ("reduce_scatter", "all_to_all") else 1))]
              for q in range(n)]
    red = {"sum": sum, "avg": lambda xs: sum(xs) / len(xs), "max": max, "min": min,
           "prod": lambda xs: __import__("math").prod(xs)}[redop]
    if op == "all_reduce":
        return [red([inputs[q][i] for q in range(n)]) for i in range(numel_per_rank)]
    if op == "broadcast":
        return inputs[root]
    if op == "all_gather":
        return [v for q in range(n) for v in inputs[q]]
    c = numel_per_rank
    if op == "reduce_scatter":
        return [red([inputs[q][rank * c + i] for q in range(n)]) for i in range(c)]
    return [v for j in range(n) for v in inputs[j][rank * c:(rank + 1) * c]]  # all_to_all


@pytest.mark.parametrize("op, redop, n", [(op, r, n) for op in C.OPS for r in C.REDOPS for n in (2, 3, 8)
                                         if op in ("all_reduce", "reduce_scatter") or r == "sum"])
def test_analytic_expected_equals_brute_force(op, redop, n):
    numel = 13  # not a multiple of the period: the tail path is exercised
    for rank in (0, n - 1):
        expect = _brute(op, redop, n, rank, numel)
        chunks = 1 if op in ("all_reduce", "broadcast", "reduce_scatter") else n
        c = len(expect) // chunks
        phase = rank * c if op in ("reduce_scatter", "all_to_all") else 0
        tables = C.expected_values(op, redop, n, rank, 0, phase)
        got = [tables[q][i % len(tables[q])] for q in range(chunks) for i in range(c)]
        assert got == pytest.approx(expect), (op, redop, n, rank)


@pytest.mark.parametrize("dtype, key", [(torch.float32, "float"), (torch.float16, "half"),
                                        (torch.bfloat16, "bfloat16"), (torch.int32, "int32"),
                                        (torch.float64, "double")])
def test_count_wrong_finds_each_corrupted_element(dtype, key):
    n, redop = 4, "sum"
    table = C.expected_values("all_reduce", redop, n, 0)[0]
    numel = 4 * 1000 + 3
    good = torch.tensor(table, dtype=torch.float64).to(dtype).repeat(numel // 4 + 1)[:numel].clone()
    assert int(C.count_wrong(torch, good, table, key)) == 0
    bad = good.clone()
    bad[7] += 1          # body
    bad[numel - 1] -= 1  # tail (numel is not a multiple of the period)
    assert int(C.count_wrong(torch, bad, table, key)) == 2
    if dtype.is_floating_point:  # an error inside the stated tolerance is not counted
        tiny = good.clone().to(torch.float64)
        tiny[5] *= 1 + 0.25 * C.CHECK_RTOL[key]
        assert int(C.count_wrong(torch, tiny.to(dtype), table, key)) == 0


def test_count_wrong_chunks_do_not_change_the_count(monkeypatch):
    table = C.expected_values("all_reduce", "max", 2, 0)[0]
    x = torch.tensor(table, dtype=torch.float32).repeat(5000)
    x[[0, 4097, 19999]] = -1
    monkeypatch.setattr(C, "CHECK_CHUNK_ELEMS", 1024)  # many chunks
    assert int(C.count_wrong(torch, x, table, "float")) == 3


def test_pattern_builds_one_buffer_of_the_dtype():
    x = C._pattern(torch, "sum", 10, 1, torch.bfloat16, torch.device("cpu"))
    assert x.dtype == torch.bfloat16 and x.numel() == 10
    assert x.tolist() == [float(((i + 3) % 4) + 1) for i in range(10)]


@pytest.mark.slow
@pytest.mark.parametrize("op", ["all_reduce", "all_gather"])
def test_peak_memory_per_rank_stays_within_the_stated_bound_at_256_mib(tmp_path, op):
    """Real 2-rank gloo run, 256 MiB messages, result check ON (-c 1, the default).

    The old host-side check needed about (n + 8) x S per rank (issue 10: 1.81 GB at 128 MiB);
    the bound here is 3 x S + 128 MiB, measured as the peak RSS of the sweep (VmHWM, reset at its start)
    minus the RSS before it.
    """
    size = 256 << 20
    out = tmp_path / f"{op}.json"
    args = launch.torchrun_args("labutil.bench.collectives", ["--backend", "gloo", "--op", op, "-b", "256M", "-e", "256M",
                                                              "-n", "1", "-w", "0", "--timeout-s", "120",
                                                              "--out", str(out)], nproc_per_node=2)
    res = launch.run(args, timeout_s=240, env=launch.cpu_env(), cwd=launch.REPO_ROOT)
    assert res.ok, res.stderr[-2000:]
    data = launch.load_json(out)
    assert data["wrong_total"] == 0 and data["check"] == 1
    mem = data["memory"]
    assert mem["max_message_bytes"] == size and mem["measured"] == "host_growth_bytes"
    bound = C.MEMORY_FACTOR * size + C.MEMORY_SLACK_BYTES
    assert mem["bound_bytes"] == bound
    for r in mem["ranks"]:
        assert r["peak_rss_bytes"] > r["baseline_rss_bytes"] > 0
        # the buffers really were allocated (at least one message), and no more than the bound
        assert size <= r["host_growth_bytes"] <= bound, (r, bound)
    assert mem["within_bound"] is True


def test_memory_constants_are_small_and_stated():
    assert C.MEMORY_FACTOR <= 3 and C.MEMORY_SLACK_BYTES <= 128 << 20
    assert C.CHECK_CHUNK_ELEMS * 4 * 5 <= C.MEMORY_SLACK_BYTES
    assert set(itertools.chain(C.CHECK_RTOL)) == {"half", "bfloat16", "float", "double"}


