"""Sizes that cannot fit are refused before any work (host memory with cgroup limits, GPU memory,
disk space), with one line; storage_io cleans up on SIGTERM/SIGINT and after a killed run."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labutil.bench import cli, collectives, ddp, fit, gemm, membw, storage_io
from labutil.machine import launch

GIB = 2**30


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _meminfo(tmp_path, avail_kib: int) -> Path:
    p = tmp_path / "meminfo"
    p.write_text(f"MemTotal:       32000000 kB\nMemFree:         1000000 kB\nMemAvailable:   {avail_kib} kB\n")
    return p


def test_host_available_is_memavailable_without_a_cgroup_limit(tmp_path):
    mi = _meminfo(tmp_path, 20 * 2**20)                                       # 20 GiB
    cg = tmp_path / "cg"
    _write(tmp_path / "self_cgroup", "0::/user.slice/job\n")
    _write(cg / "user.slice" / "job" / "memory.max", "max\n")
    _write(cg / "user.slice" / "job" / "memory.current", "1000\n")
    assert fit.host_available(mi, cg, tmp_path / "self_cgroup") == (20 * GIB, "MemAvailable in /proc/meminfo")


def test_cgroup_v2_limit_counts_its_working_set_not_its_page_cache(tmp_path):
    """limit 3 GiB, 2.5 GiB charged of which 1 GiB inactive file cache: 3 - 1.5 = 1.5 GiB left."""
    mi = _meminfo(tmp_path, 20 * 2**20)
    cg = tmp_path / "cg"
    job = cg / "kubepods" / "pod1"
    _write(tmp_path / "self_cgroup", "0::/kubepods/pod1\n")
    _write(job / "memory.max", f"{3 * GIB}\n")
    _write(job / "memory.current", f"{int(2.5 * GIB)}\n")
    _write(job / "memory.stat", f"anon 100\nfile {GIB}\ninactive_file {GIB}\nactive_file 0\n")
    have, why = fit.host_available(mi, cg, tmp_path / "self_cgroup")
    assert have == int(1.5 * GIB) and why.startswith("cgroup v2 limit 3.0 GiB")
    # a tighter limit on an ancestor wins
    _write(cg / "kubepods" / "memory.max", f"{2 * GIB}\n")
    _write(cg / "kubepods" / "memory.current", f"{int(1.9 * GIB)}\n")
    have, why = fit.host_available(mi, cg, tmp_path / "self_cgroup")
    assert have == 2 * GIB - int(1.9 * GIB) and "kubepods" in why


def test_cgroup_v1_unlimited_and_limited(tmp_path):
    mi = _meminfo(tmp_path, 8 * 2**20)                                        # 8 GiB
    cg = tmp_path / "cg"
    _write(tmp_path / "self_cgroup", "4:memory:/slurm/uid_0/job_7\n0::/\n")
    job = cg / "memory" / "slurm" / "uid_0" / "job_7"
    _write(job / "memory.limit_in_bytes", "9223372036854771712\n")           # the v1 "no limit"
    _write(job / "memory.usage_in_bytes", "5000\n")
    assert fit.host_available(mi, cg, tmp_path / "self_cgroup")[0] == 8 * GIB
    _write(job / "memory.limit_in_bytes", f"{4 * GIB}\n")                     # Slurm --mem=4G
    _write(job / "memory.usage_in_bytes", f"{GIB}\n")
    _write(job / "memory.stat", f"cache 0\ntotal_inactive_file {GIB // 2}\n")
    have, why = fit.host_available(mi, cg, tmp_path / "self_cgroup")
    assert have == 4 * GIB - GIB // 2 and why.startswith("cgroup v1 limit 4.0 GiB")


def test_unreadable_sources_skip_the_check(tmp_path):
    assert fit.host_available(tmp_path / "none", tmp_path / "none", tmp_path / "none") == (None, "")
    fit.require_host("x", 10**18, "fix", available=(None, ""))                  # nothing to compare with


def test_collectives_refuses_a_sweep_per_rank_count(monkeypatch):
    """3 S + 128 MiB per rank, times the ranks on this host (gloo): -e 1G needs 3.125 GiB a rank."""
    monkeypatch.setattr(fit, "host_available", lambda: (7 * GIB, "MemAvailable in /proc/meminfo"))
    base = ["--backend", "gloo", "-b", "1K", "-e", "1G"]
    collectives.parse_args(base, local_ranks=2)                               # 6.25 GiB <= 7 GiB
    with pytest.raises(cli.UsageError) as e:
        collectives.parse_args(base, local_ranks=3)                           # 9.375 GiB
    msg = str(e.value)
    assert msg.startswith("-e/--maxbytes 1.0 GiB on 3 ranks of this host (3 x (3 x S + 128 MiB)")
    assert "needs about 9.4 GiB but only 7.0 GiB is available (MemAvailable" in msg and "lower -e" in msg
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "3")                               # what torchrun sets
    with pytest.raises(cli.UsageError, match="on 3 ranks"):
        collectives.parse_args(base)


def test_collectives_gpu_path_checks_the_gpus_free_memory(monkeypatch):
    with pytest.raises(cli.UsageError, match=r"on its GPU\) needs about 24\.1 GiB but only 20\.0 GiB"):
        collectives.check_fits(8 * GIB, "nccl", 8, available=(20 * GIB, "nvidia-smi memory.free"))
    collectives.check_fits(4 * GIB, "nccl", 8, available=(20 * GIB, "nvidia-smi memory.free"))


def test_launcher_precheck_counts_its_ranks(monkeypatch, tmp_path):
    monkeypatch.setattr(fit, "host_available", lambda: (5 * GIB, "test"))
    args = ["--backend", "gloo", "-b", "1K", "-e", "512M"]                    # 1.625 GiB a rank
    launch.precheck("labutil.bench.collectives", args, nproc=2)
    with pytest.raises(cli.UsageError, match="on 4 ranks"):
        launch.precheck("labutil.bench.collectives", args, nproc=4)
    with pytest.raises(cli.UsageError, match="on 4 ranks"):                   # torchrun is never started
        launch.run_module("labutil.bench.collectives", args, nproc=4, out=tmp_path / "r.json")


def test_collectives_one_terabyte_is_refused_by_the_real_check():
    """-e 1T (the flag's own cap) needs 3 TiB a rank: more than any machine this runs on."""
    p = subprocess.run([sys.executable, "-m", "labutil.bench.collectives", "--backend", "gloo", "-b", "1T", "-e", "1T",
                        "--dry-run"], capture_output=True, text=True, env=launch.cpu_env(), cwd=launch.REPO_ROOT,
                       timeout=300)
    assert p.returncode == 2 and p.stdout == "", p.stdout
    line, = p.stderr.strip().splitlines()
    assert line.startswith("labutil.bench.collectives: error: -e/--maxbytes 1.0 TiB on 1 rank of this host")
    assert "is available" in line


def test_ddp_memory_is_counted_from_what_the_run_allocates():
    # CPU default: P = 4 x (256^2 + 256) + 257 = 263,425 fp32 parameters
    # 3 x 4 B (weights, grads, DDP buckets) + 8 B (replica check) a parameter, plus
    # (2 x 4 + 3) x 64 x 256 x 4 B of activations
    assert ddp.mlp_params(256, 4) == 263_425
    assert ddp.memory_bytes(256, 4, 64, "fp32") == 263_425 * 20 + 11 * 64 * 256 * 4 == 5_989_396
    assert ddp.memory_bytes(256, 4, 64, "bf16") == 263_425 * 14 + 11 * 64 * 256 * 2


def test_ddp_refuses_a_model_the_host_cannot_hold(monkeypatch):
    """--hidden 16384 --layers 64: 17.2 G fp32 parameters, 344 GB before activations."""
    monkeypatch.setattr(fit, "host_available", lambda: (64 * GIB, "test"))
    with pytest.raises(cli.UsageError) as e:
        ddp.parse_args(["--backend", "gloo", "--hidden", "16384", "--layers", "64", "--dry-run"], local_ranks=1)
    assert str(e.value).startswith("--hidden 16384 --layers 64 --batch 64 (17,180,934,145 fp32 parameters) on 1 rank")
    a = ddp.parse_args(["--backend", "gloo", "--dry-run"], local_ranks=2)    # the CPU default fits anywhere
    assert a.hidden == 256
    with pytest.raises(cli.UsageError, match="each rank's weights, gradients, DDP buckets and activations on its GPU"):
        a.backend = "nccl"
        a.hidden, a.layers = 16384, 64
        ddp.check_fits(a, 8, available=(80 * GIB, "torch.cuda.mem_get_info(0)"))


def test_gemm_and_membw_refuse_before_allocating():
    with pytest.raises(cli.UsageError, match=r"--sizes 65536 \(bf16\): A, B and C = 3 x 65536\^2 elements needs about "
                                             r"24\.0 GiB but only 20\.0 GiB"):
        gemm.check_fits(65536, "bf16", True, available=(20 * GIB, "nvidia-smi memory.free"))
    gemm.check_fits(32768, "bf16", True, available=(20 * GIB, "nvidia-smi memory.free"))       # 6 GiB
    with pytest.raises(cli.UsageError, match=r"source and copy \(2 x size\) needs about 128\.0 GiB"):
        membw.check_fits(64 * GIB, True, available=(79 * GIB, "torch.cuda.mem_get_info(0)"))
    membw.check_fits(256 * 2**20, False, available=(GIB, "MemAvailable in /proc/meminfo"))


def test_storage_io_refuses_a_checkpoint_or_file_that_cannot_fit(monkeypatch, tmp_path):
    with pytest.raises(cli.UsageError, match=r"--ckpt-params 17,179,869,184: the saved and the loaded fp32 state dict "
                                             r"needs about 128\.0 GiB but only 23\.0 GiB"):
        storage_io.check_fits(tmp_path, 64 << 20, 16 * GIB, host_available=(23 * GIB, "MemAvailable"))

    class Usage:
        free = 10 * GIB
    monkeypatch.setattr(fit.shutil, "disk_usage", lambda folder: Usage)
    with pytest.raises(cli.UsageError, match=rf"needs about 16\.0 GiB but only 10\.0 GiB is available \(free space on "
                                             rf"{tmp_path}\); lower --size or --ckpt-params, or test another --dir"):
        storage_io.check_fits(tmp_path, 12 * GIB, GIB, host_available=(64 * GIB, "test"))   # 12 GiB + 4 GiB


def test_storage_io_cli_refusal_is_one_line(monkeypatch, capsys):
    monkeypatch.setattr(fit, "host_available", lambda: (8 * GIB, "MemAvailable in /proc/meminfo"))
    assert storage_io.main(["--ckpt-params", "16G"]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1
    assert cap.err.startswith("labutil.bench.storage_io: error: --ckpt-params 17,179,869,184")


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_remove_stale_removes_only_what_no_live_run_owns(tmp_path):
    here = storage_io._tmp_prefix().rsplit("-", 2)[0]
    dead = tmp_path / f"{here}-{_dead_pid()}-abc123"
    live = tmp_path / f"{here}-{os.getpid()}-def456"
    other_new = tmp_path / "labutil-io-otherhost-123-ghi789"
    other_old = tmp_path / "labutil-io-otherhost-456-jkl012"
    legacy_old = tmp_path / "labutil-io-mno345"                               # a name without host and pid
    unrelated = tmp_path / "labutil-iox"
    for d in (dead, live, other_new, other_old, legacy_old, unrelated):
        d.mkdir()
        (d / "seq.bin").write_bytes(b"x" * 10)
    old = time.time() - 3 * 86400
    for d in (other_old, legacy_old):
        os.utime(d / "seq.bin", (old, old))
        os.utime(d, (old, old))
    (tmp_path / "labutil-io-link").symlink_to(live)
    removed = storage_io.remove_stale(tmp_path)
    assert sorted(removed) == sorted([dead, other_old, legacy_old])
    assert live.is_dir() and other_new.is_dir() and unrelated.is_dir() and (tmp_path / "labutil-io-link").is_symlink()
    assert not dead.exists() and not other_old.exists()


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_storage_io_cleans_up_when_stopped(tmp_path, sig):
    """SIGTERM is what Slurm sends at the time limit and the lab runner on its timeout: the test
    file must go, the exit status is 128 + signal, and the message is one line."""
    import shutil

    if shutil.disk_usage(tmp_path).free < 12 * GIB:
        pytest.skip("needs 12 GiB free to write a file that is still being written when the signal comes")
    p = subprocess.Popen([sys.executable, "-m", "labutil.bench.storage_io", "--dir", str(tmp_path), "--size", "8G",
                          "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=launch.cpu_env(), cwd=launch.REPO_ROOT)
    try:
        while True:                                # until the test file is being written (no time limit:
            files = list(tmp_path.glob("labutil-io-*/seq.bin"))    # pytest-timeout bounds a hang)
            if files and files[0].stat().st_size > 0:
                break
            assert p.poll() is None, p.communicate()
            time.sleep(0.05)
        p.send_signal(sig)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 128 + sig, (p.returncode, err)
    assert err.strip() == f"labutil.bench.storage_io: stopped by {sig.name}; its temporary files were removed"
    assert list(tmp_path.iterdir()) == []
