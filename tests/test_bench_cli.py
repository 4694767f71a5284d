"""Harness command lines: every bad flag gives ONE line on stderr and exit status 2, before any work.

The flag list is the one of issue 10 (``-b 0``, ``-e 1K -b 1M``, ``-f 0``, ``-n -3``, ``-w -1``,
``--timeout-s 0/nan/inf``, ``--backend nccl`` without a GPU, ``--op nonsense``, an unwritable
``--out``) for every harness that takes it.
"""

import os
import subprocess
import sys

import pytest

from labutil.bench import cli, collectives, ddp, gemm, membw, storage_io
from labutil.machine import launch
from labutil import units

UNWRITABLE = "/proc/labutil-no-such-dir/result.json"

COLLECTIVES_BAD = [["-b", "0"], ["-e", "1K", "-b", "1M"], ["-f", "0"], ["-n", "-3"], ["-w", "-1"],
                   ["--timeout-s", "0"], ["--timeout-s", "nan"], ["--timeout-s", "inf"], ["--timeout-s", "-1"],
                   ["--op", "nonsense"], ["-d", "float8"], ["-o", "xor"], ["-b", "1e400"], ["-e", "1e30T"],
                   ["-b", "inf"], ["-i", "0", "-f", "1"], ["-c", "2"], ["-a", "7"], ["-r", "-1"],
                   ["--out", UNWRITABLE], ["--bogus"], ["-n", "x"]]
DDP_BAD = [["--hidden", "0"], ["--layers", "-1"], ["--batch", "0"], ["--steps", "0"], ["--warmup-steps", "-1"],
           ["--timeout-s", "0"], ["--timeout-s", "nan"], ["--timeout-s", "inf"], ["--dtype", "fp8"],
           ["--out", UNWRITABLE], ["--backend", "mpi"]]
GEMM_BAD = [["--sizes", "0"], ["--sizes", "1e400"], ["--sizes", "100000"], ["--iters", "0"], ["--warmup", "-1"],
            ["--dtype", "int4"], ["--out", UNWRITABLE]]
MEMBW_BAD = [["--sizes", "0"], ["--sizes", "inf"], ["--sizes", "1G"], ["--iters", "-3"], ["--warmup", "-1"],
             ["--out", UNWRITABLE]]
STORAGE_BAD = [["--size", "0"], ["--size", "inf"], ["--size", "1e30T"], ["--block", "1"], ["--block", "1G"],
               ["--ckpt-params", "1"], ["--dir", "/no/such/dir"], ["--out", UNWRITABLE]]


def _one_line(capsys, main, argv, prog):
    code = main(argv)
    cap = capsys.readouterr()
    lines = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert code == 2, (argv, cap.err)
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: error: "), (argv, cap.err)
    assert "Traceback" not in cap.err and cap.out == "", (argv, cap.out)
    return lines[0]


@pytest.mark.parametrize("argv", COLLECTIVES_BAD, ids=" ".join)
def test_collectives_bad_flags(capsys, argv):
    _one_line(capsys, collectives.main, ["--backend", "gloo", *argv], "labutil.bench.collectives")


def test_collectives_messages_name_the_flag(capsys):
    assert "-f/--stepfactor" in _one_line(capsys, collectives.main, ["-f", "0"], "labutil.bench.collectives")
    assert "--timeout-s" in _one_line(capsys, collectives.main, ["--timeout-s", "nan"], "labutil.bench.collectives")
    assert "not writable" in _one_line(capsys, collectives.main, ["--out", UNWRITABLE], "labutil.bench.collectives")
    msg = _one_line(capsys, collectives.main, ["-e", "1K", "-b", "1M"], "labutil.bench.collectives")
    assert "-e/--maxbytes" in msg and "-b/--minbytes" in msg


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="this machine has a GPU")
def test_nccl_without_gpu_is_a_usage_error(capsys):
    msg = _one_line(capsys, collectives.main, ["--backend", "nccl"], "labutil.bench.collectives")
    assert "nccl" in msg and "gloo" in msg
    _one_line(capsys, ddp.main, ["--backend", "nccl"], "labutil.bench.ddp")


@pytest.mark.parametrize("argv", DDP_BAD, ids=" ".join)
def test_ddp_bad_flags(capsys, argv):
    _one_line(capsys, ddp.main, argv, "labutil.bench.ddp")


@pytest.mark.parametrize("argv", GEMM_BAD, ids=" ".join)
def test_gemm_bad_flags(capsys, argv):
    _one_line(capsys, gemm.main, argv, "labutil.bench.gemm")


@pytest.mark.parametrize("argv", MEMBW_BAD, ids=" ".join)
def test_membw_bad_flags(capsys, argv):
    _one_line(capsys, membw.main, argv, "labutil.bench.membw")


@pytest.mark.parametrize("argv", STORAGE_BAD, ids=" ".join)
def test_storage_io_bad_flags(capsys, argv):
    _one_line(capsys, storage_io.main, argv, "labutil.bench.storage_io")


def test_unwritable_out_is_found_before_the_run(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "x").mkdir()
    for main, prog in ((gemm.main, "labutil.bench.gemm"), (membw.main, "labutil.bench.membw"),
                       (storage_io.main, "labutil.bench.storage_io")):
        msg = _one_line(capsys, main, ["--out", str(ro / "x")], prog)   # a directory, not a file
        assert "is a directory" in msg


def test_dry_run_checks_and_starts_nothing(capsys, tmp_path):
    """--dry-run checks that the result folder could be made, and makes none of it."""
    assert collectives.main(["--backend", "gloo", "-b", "1K", "-e", "1M", "-f", "2", "--dry-run",
                             "--out", str(tmp_path / "a" / "b" / "c" / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "flags OK" in out and "11 sizes" in out
    assert ddp.main(["--backend", "gloo", "--dry-run", "--out", str(tmp_path / "d" / "r.json")]) == 0
    assert "263,425 params" in capsys.readouterr().out  # the CPU default model
    assert list(tmp_path.iterdir()) == []


def test_out_problems_are_named_on_one_line(capsys, tmp_path):
    (tmp_path / "afile").write_text("x")
    msg = _one_line(capsys, collectives.main, ["--backend", "gloo", "--dry-run", "--out",
                                               str(tmp_path / "afile" / "c.json")], "labutil.bench.collectives")
    assert "is a file, not a folder" in msg and "afile" in msg
    long = str(tmp_path / ("x" * 300 + ".json"))                              # ENAMETOOLONG
    for main, prog in ((collectives.main, "labutil.bench.collectives"), (ddp.main, "labutil.bench.ddp")):
        msg = _one_line(capsys, main, ["--backend", "gloo", "--dry-run", "--out", long], prog)
        assert msg.endswith("is not writable: File name too long") and len(msg) < 300
    # 250 bytes is a legal name, but the atomic write's temporary name (+14) is not
    msg = _one_line(capsys, collectives.main, ["--backend", "gloo", "--dry-run", "--out",
                                               str(tmp_path / ("z" * 245 + ".json"))], "labutil.bench.collectives")
    assert "the file name is 250 bytes; this file system allows 241 (NAME_MAX 255" in msg
    msg = _one_line(capsys, gemm.main, ["--out", str(tmp_path / ("y" * 300) / "r.json")], "labutil.bench.gemm")
    assert "not writable: File name too long" in msg
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


@pytest.mark.parametrize("harness,argv", [(gemm, ["--sizes", "32", "--iters", "1", "--warmup", "0"]),
                                          (membw, ["--sizes", "4K", "--iters", "1", "--warmup", "0"]),
                                          (storage_io, ["--size", "4K", "--block", "4K", "--ckpt-params", "16",
                                                        "--no-progress"])],
                         ids=["gemm", "membw", "storage_io"])
def test_a_full_disk_at_the_write_is_one_error_line(monkeypatch, capsys, tmp_path, harness, argv):
    """ENOSPC when the result is written (the run itself succeeded): one ERROR line, status 2."""
    def full(path, obj):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(harness, "write_json_atomic", full)
    assert harness.main([*argv, "--out", str(tmp_path / "r.json")]) == cli.EXIT_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"{harness.PROG}: ERROR: OSError: [Errno 28] No space left on device"]


def test_a_hung_peer_is_exit_status_3_in_every_harness():
    """The errors torch.distributed gives for a stalled peer (gloo: 'Timed out waiting 20000ms'; NCCL's
    watchdog) map to EXIT_TIMEOUT in collectives and ddp alike; a dead peer stays a plain error (2)."""
    for text in ("Timed out waiting 20000ms for recv operation to complete",
                 "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE)",
                 "Connection closed by peer [127.0.0.1]:29500"):
        assert cli.is_timeout(RuntimeError(text)), text
    assert not cli.is_timeout(RuntimeError("Connection reset by peer"))
    assert cli.EXIT_TIMEOUT == 3 and cli.EXIT_ERROR == cli.EXIT_USAGE == 2
    import inspect
    for mod in (collectives, ddp):
        src = inspect.getsource(mod.main)
        assert "cli.is_timeout(exc)" in src and "code = cli.EXIT_TIMEOUT" in src


def _launch_cli(args, **env):
    full = dict(launch.cpu_env(), **env)
    return subprocess.run([sys.executable, "-m", "labutil.machine.launch", *args], capture_output=True, text=True,
                          cwd=launch.REPO_ROOT, env=full, timeout=120)


def test_launch_cli_failures_are_one_line(tmp_path):
    p = _launch_cli(["--submit", "nccl_bench", "--nodes", "2", "--gpus-per-node", "8"],
                    PATH=os.path.dirname(sys.executable))                      # no sbatch on PATH
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.strip() == ("python -m labutil.machine.launch: error: 'sbatch' was not found on PATH: submit from "
                                "a Slurm login node (or print the command with --print-only)")
    (tmp_path / "afile").write_text("x")
    p = _launch_cli(["--write-sbatch", str(tmp_path / "afile" / "slurm")])
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "cannot write the templates" in p.stderr
    p = _launch_cli(["--submit", "nope"])
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "invalid choice: 'nope'" in p.stderr


def test_only_rank_zero_reports_under_torchrun(capsys, monkeypatch):
    monkeypatch.setattr(cli, "NON_PRIMARY_EXIT_DELAY_S", 0.0)
    monkeypatch.setenv("RANK", "1")
    assert collectives.main(["-b", "0"]) == 2
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("RANK", "0")
    assert collectives.main(["-b", "0"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_silent_rank_waits_so_rank_zero_reports_first(monkeypatch, capsys):
    """torchrun ends the job when the first rank exits: the silent ranks must not beat rank 0."""
    slept = []
    monkeypatch.setattr(cli.time, "sleep", slept.append)
    monkeypatch.setenv("RANK", "3")
    assert cli.report("prog", ValueError("bad")) == 2
    assert slept == [cli.NON_PRIMARY_EXIT_DELAY_S] and cli.NON_PRIMARY_EXIT_DELAY_S >= 1.0
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("RANK", "0")
    assert cli.report("prog", ValueError("bad")) == 2
    assert slept == [cli.NON_PRIMARY_EXIT_DELAY_S]                             # rank 0 reports at once


@pytest.mark.slow
def test_torchrun_two_ranks_print_the_error_once():
    args = launch.torchrun_args("labutil.bench.collectives", ["--backend", "gloo", "-f", "0"], nproc_per_node=2)
    res = launch.run(args, timeout_s=300, env=launch.cpu_env(), cwd=launch.REPO_ROOT)
    assert res.returncode != 0 and not res.timed_out, res.stderr[-1500:]
    assert (res.stdout + res.stderr).count("labutil.bench.collectives: error:") == 1, res.stderr[-1500:]


def test_lab_helpers_check_flags_before_starting_torchrun(tmp_path):
    with pytest.raises(cli.UsageError, match="-f/--stepfactor"):
        launch.run_module("labutil.bench.collectives", ["--backend", "gloo", "-f", "0"], out=tmp_path / "x.json")
    with pytest.raises(cli.UsageError, match="--sizes"):
        launch.run_python_module("labutil.bench.membw", ["--sizes", "0"], out=tmp_path / "y.json")


@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "NaN", "1e400", "1e30T", "2T", "-1", "1e13"])
def test_parse_size_rejects_non_finite_negative_and_huge(text):
    with pytest.raises(ValueError, match="size"):
        units.parse_size(text)


def test_parse_size_bound_and_forms():
    assert units.parse_size("1T") == units.MAX_SIZE_BYTES == 2**40
    assert units.parse_size("64MB") == 64 << 20 and units.parse_size("1.5K") == 1536


def test_python_m_labutil_without_arguments_prints_usage_to_stderr():
    p = subprocess.run([sys.executable, "-m", "labutil"], capture_output=True, text=True,
                       cwd=launch.REPO_ROOT, env=launch.cpu_env())
    assert p.returncode == 2 and p.stdout == "" and p.stderr.startswith("usage: python -m labutil")
    p = subprocess.run([sys.executable, "-m", "labutil", "--help"], capture_output=True, text=True,
                       cwd=launch.REPO_ROOT, env=launch.cpu_env())
    assert p.returncode == 0 and p.stdout.startswith("usage:")


def test_membw_refuses_a_size_the_gpu_cannot_hold_twice(monkeypatch, capsys):
    """64 GiB passes the flag range but needs 128 GiB (source + copy): on an 80 GB GPU that must be a
    one-line error before any allocation, not an OOM in the middle of the sweep."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda *a: (79 * 2**30, 80 * 2**30))
    allocations = []
    monkeypatch.setattr(torch, "ones", lambda *a, **k: allocations.append(a) or pytest.fail("allocated"))
    with pytest.raises(ValueError, match=r"needs 2 x 64\.00 GiB .* 79\.0 GiB free of 80\.0 GiB"):
        membw.run([64 << 30], device="cuda")
    assert allocations == []


def test_helpers_refuse_non_finite_and_wrongly_typed_values():
    """R10/R12 of the robustness review: ValueError naming the parameter, not OverflowError/AttributeError."""
    with pytest.raises(ValueError, match="size_bytes"):
        collectives.layout("all_reduce", float("inf"), 2, 4)
    with pytest.raises(ValueError, match="size_bytes"):
        collectives.layout("all_reduce", 10**400, 2, 4)
    with pytest.raises(ValueError, match="export must be a dict"):
        launch.sbatch_args("x.sbatch", nodes=1, gpus_per_node=8, export=float("nan"))
    assert collectives.layout("all_reduce", 1024, 2, 4)["count"] == 256
