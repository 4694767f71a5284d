"""labutil.bench.collectives: nccl-tests semantics, a real 2-rank gloo run, timeout, no partial file.

The multi-process tests launch torchrun with 2 gloo ranks on loopback (the CPU path of lab02).
"""

import os
import signal
import subprocess
import time

import pytest
from hypothesis import given, strategies as st

from labutil import comm
from labutil.bench import collectives as C
from labutil.machine import launch
from labutil.parsers import parse_nccl_tests

torch = pytest.importorskip("torch")


# --- pure helpers -----------------------------------------------------------------------------
def test_size_sweep_matches_nccl_tests_walk():
    # -b 8 -e 128M -f 2: 8, 16, ..., 128 MiB (nccl-tests README example) -> 25 sizes
    sizes = C.size_sweep(8, 128 * 2**20, 2)
    assert sizes[0] == 8 and sizes[-1] == 128 * 2**20 and len(sizes) == 25
    # -f 1 uses the additive step -i
    assert C.size_sweep(1024, 4096, 1, 1024) == [1024, 2048, 3072, 4096]
    with pytest.raises(ValueError, match="maxbytes"):
        C.size_sweep(1024, 8)
    with pytest.raises(ValueError, match="stepfactor"):
        C.size_sweep(8, 64, 0)


def test_layout_follows_nccl_tests_counts():
    # all_gather on 8 ranks, float, 1 KiB: 256 elements total, 32 per rank (ALIGN 4)
    lay = C.layout("all_gather", 1024, 8, 4)
    assert (lay["count"], lay["in_numel"], lay["out_numel"], lay["size_bytes"]) == (32, 32, 256, 1024)
    rs = C.layout("reduce_scatter", 1024, 8, 4)
    assert (rs["in_numel"], rs["out_numel"], rs["size_bytes"]) == (256, 32, 1024)
    ar = C.layout("all_reduce", 1000, 3, 4)
    assert (ar["count"], ar["size_bytes"]) == (250, 1000)
    assert C.layout("all_gather", 8, 2, 4)["out_numel"] == 0  # skipped row: share rounds to 0
    with pytest.raises(KeyError, match="all_reduce"):
        C.layout("allreduse", 8, 2, 4)


@given(op=st.sampled_from(C.OPS), n=st.integers(2, 64), size=st.integers(1, 2**34), t=st.floats(1e-6, 10.0))
def test_bandwidths_are_nccl_tests_formulas(op, n, size, t):
    """PERFORMANCE.md: algbw = S/t; busbw = algbw * 2(n-1)/n (all_reduce), (n-1)/n (gather/scatter/alltoall), 1."""
    alg, bus = C.bandwidths(op, size, t, n)
    assert alg == pytest.approx(size / t / 1e9, rel=1e-12)
    factor = {"all_reduce": 2 * (n - 1) / n, "all_gather": (n - 1) / n, "reduce_scatter": (n - 1) / n,
              "all_to_all": (n - 1) / n, "broadcast": 1.0}[op]
    assert bus == pytest.approx(alg * factor, rel=1e-12)


def test_float_str_matches_nccl_tests_getfloatstr():
    assert C._float_str(123.456, 7) == " 123.46"
    assert C._float_str(12345.6, 7) == "12345.6"
    assert C._float_str(1234567.0, 7) == "1234567"
    assert C._float_str(0.0, 6) == "  0.00"
    assert C._float_str(178.34, 6) == "178.34"


def test_table_round_trips_through_the_nccl_tests_parser():
    row = {"size_bytes": 134217728, "count": 33554432, "type": "float", "redop": "sum", "root": -1,
           "out_of_place": {"time_us": 1211.2, "algbw_gbs": 110.81, "busbw_gbs": 193.92, "wrong": 0},
           "in_place": {"time_us": 1211.8, "algbw_gbs": 110.76, "busbw_gbs": 193.83, "wrong": 0}}
    devs = [{"rank": 0, "pid": 11, "host": "node-a", "device": 0, "bus_id": "0000:04:00", "name": "NVIDIA H100 80GB HBM3"}]
    text = "\n".join([C.format_header(op="all_reduce", backend="nccl", minbytes=8, maxbytes=134217728, stepfactor=2,
                                      stepbytes=1 << 20, warmup=5, iters=20, check=1, devices=devs, average=1),
                      C.format_row(row), C.format_footer("all_reduce", 0, 193.875)])
    parsed = parse_nccl_tests(text)
    assert parsed.op == "all_reduce" and len(parsed.rows) == 1
    r = parsed.rows[0]
    assert (r.size_bytes, r.count, r.busbw_gbs, r.inplace_busbw_gbs, r.wrong) == (134217728, 33554432, 193.92, 193.83, 0)
    assert parsed.avg_busbw_gbs == pytest.approx(193.875)
    assert parsed.devices[0].name == "NVIDIA H100 80GB HBM3"


def test_bad_arguments_fail_before_any_process_group(capsys):
    """Each bad flag: exit status 2 and ONE line on stderr naming the flag (no traceback)."""
    for argv, needle in ((["--op", "allreduse"], "collective op"), (["-d", "float8"], "datatype"),
                         (["-o", "xor"], "op_type"), (["-b", "lots"], "-b/--minbytes")):
        assert C.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and needle in err and "Traceback" not in err, err


# --- real multi-process runs (torchrun, 2 gloo ranks on loopback) -------------------------------
def _bench_args(out, extra=()):
    return launch.torchrun_args("labutil.bench.collectives",
                                ["--backend", "gloo", "--out", str(out), *extra], nproc_per_node=2)


@pytest.mark.slow
def test_two_rank_gloo_all_reduce_writes_checked_json(tmp_path):
    out = tmp_path / "ar.json"
    res = launch.run(_bench_args(out, ["--op", "all_reduce", "-b", "1K", "-e", "64K", "-f", "4", "-n", "3", "-w", "1",
                                       "--timeout-s", "60"]),
                     timeout_s=120, env=launch.cpu_env(), cwd=launch.REPO_ROOT)
    assert res.ok, res.stderr[-2000:]
    assert C.CPU_BANNER in res.stdout  # the CPU path says so
    data = launch.load_json(out)
    assert data["backend"] == "gloo" and data["world_size"] == 2 and data["cpu_path"] is True
    assert data["wrong_total"] == 0
    assert [r["size_bytes"] for r in data["rows"]] == [1024, 4096, 16384, 65536]
    n = data["world_size"]
    for r in data["rows"]:
        for k in ("out_of_place", "in_place"):
            b = r[k]
            assert b["wrong"] == 0 and b["time_us"] > 0
            assert b["algbw_gbs"] == pytest.approx(r["size_bytes"] / (b["time_us"] * 1e-6) / 1e9, rel=1e-9)
            assert b["busbw_gbs"] == pytest.approx(b["algbw_gbs"] * 2 * (n - 1) / n, rel=1e-9)
    env = data["environment"]
    assert env["torch"] == torch.__version__ and env["hosts"] and len(env["ranks"]) == 2
    # rank 0's stdout and the stored table are nccl-tests format
    parsed = parse_nccl_tests(res.stdout)
    assert parsed.op == "all_reduce" and parsed.sizes_bytes == [1024, 4096, 16384, 65536]
    assert parsed.total_wrong() == 0 and parsed.n_ranks == 2
    assert parsed.avg_busbw_gbs == pytest.approx(data["avg_busbw_gbs"], rel=1e-4)


@pytest.mark.slow
def test_stalled_rank_ends_with_timeout_error_not_a_hang(tmp_path):
    """Rank 1 sleeps 600 s before its first collective; rank 0 must give up at --timeout-s (4 s) with
    one line and exit status 3 (torchrun then stops rank 1). The outer guard (300 s) is half the stall:
    reaching it means the run waited for the stalled rank. How fast it ends is a budget in
    benchmarks/bench_harness_timing.py, not an assertion here."""
    out = tmp_path / "stall.json"
    res = launch.run(_bench_args(out, ["--op", "all_reduce", "-b", "1K", "-e", "1K", "-n", "2", "-w", "1",
                                       "--timeout-s", "4", "--debug-stall-rank", "1", "--debug-stall-s", "600"]),
                     timeout_s=300, env=launch.cpu_env(), cwd=launch.REPO_ROOT)
    assert not res.timed_out, "the run hung until the outer guard killed it"
    assert res.returncode != 0
    assert "did not complete within --timeout-s=4 s" in res.stderr
    assert "exitcode  : 3" in res.stderr or "exitcode: 3" in res.stderr.replace(" ", ""), res.stderr[-2000:]
    assert not out.exists()


@pytest.mark.slow
def test_killed_run_leaves_no_partial_result_file(tmp_path):
    out = tmp_path / "killed.json"
    args = _bench_args(out, ["--op", "all_reduce", "-b", "1K", "-e", "1G", "-f", "2", "-n", "50", "-w", "1"])
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=launch.cpu_env(), cwd=launch.REPO_ROOT, start_new_session=True)
    try:
        seen_row = False
        while True:  # until a row or the end of the output (pytest-timeout bounds a hang)
            line = proc.stdout.readline()
            if not line:
                break
            if line[:1] == " " and line.strip()[:1].isdigit():  # a table row: the sweep is under way
                seen_row = True
                break
        assert seen_row, "the benchmark never printed a row"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    time.sleep(0.5)
    assert not out.exists()
    assert not list(tmp_path.glob("*.tmp")), "a temporary file was left behind"
