"""The labs as guides a learner completes alone (issue 17): what their numbers rest on.

- lab04's copy bandwidth is the DRAM/HBM plateau, never a cache-resident row (review 2026-12-03:
  57.8 GB/s at 1 MiB against a 17.4 GB/s plateau);
- lab02 prints how far its alpha-beta fit can be trusted, and the CPU sweep times each call;
- lab06 alternates 1-rank and 2-rank runs and refuses a conclusion the spread cannot carry
  (review: E(2) = 108 %, 31 %, 24 %, 97 % in four CPU runs);
- lab01 reports torch's bundled NCCL without a GPU, and shows what healthy output looks like;
- lab05 warns when the test file is smaller than RAM;
- the Slurm template sizes MAXBYTES from the GPU's memory (8G needs ~24 GiB per rank).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import types

import numpy as np
import pytest

from labutil import comm
from labutil.bench import analysis, ddp, membw
from labutil.machine import doctor, launch
from labutil.machine import run as labs


# ------------------------------------------------------------------------------------------ lab04
def test_copy_plateau_ignores_cache_resident_rows():
    # the review's CPU run: 57.8 GB/s at 1 MiB (cache), 17.7 at 16 MiB, 17.4 at 64 MiB; LLC 32 MiB here
    res = {"llc_bytes": 32 << 20, "rows": [{"size_bytes": 1 << 20, "copy_gbs": 57.8},
                                            {"size_bytes": 16 << 20, "copy_gbs": 17.7},
                                            {"size_bytes": 64 << 20, "copy_gbs": 17.4}]}
    p = analysis.copy_plateau(res)
    assert p["gbs"] == 17.4 and p["max_gbs"] == 57.8 and not p["cache_safe"]  # 64 MiB < 4 x 32 MiB
    res["rows"] += [{"size_bytes": 128 << 20, "copy_gbs": 17.0}, {"size_bytes": 256 << 20, "copy_gbs": 16.0}]
    p = analysis.copy_plateau(res)
    assert p["gbs"] == pytest.approx(16.5) and p["cache_safe"] and p["sizes_bytes"] == [128 << 20, 256 << 20]
    res.pop("llc_bytes")  # unknown cache: the largest size
    assert analysis.copy_plateau(res)["gbs"] == 16.0
    with pytest.raises(ValueError):
        analysis.copy_plateau({"rows": []})


def test_host_llc_from_sysfs(tmp_path):
    for idx, (level, kind, size) in enumerate([(1, "Data", "32K"), (1, "Instruction", "32K"), (2, "Unified", "1024K"),
                                               (3, "Unified", "32768K")]):
        d = tmp_path / f"index{idx}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    assert membw.host_llc_bytes(str(tmp_path)) == 32 << 20
    assert membw.host_llc_bytes(str(tmp_path / "missing")) is None


def test_membw_records_the_plateau_as_best():
    res = membw.run([1 << 20, 2 << 20], iters=3, warmup=1, device="cpu")
    assert res["best_gbs"] == analysis.copy_plateau(res)["gbs"] and res["max_gbs"] >= res["best_gbs"]
    assert "plateau_rule" in res and "llc_bytes" in res


def test_membw_cpu_default_sizes_start_at_64_mib():
    a = membw.parse_args(["--device", "cpu"])
    assert a.size_list[0] == 64 << 20 and max(a.size_list) <= membw.CPU_MAX_BYTES


# ------------------------------------------------------------------------------------------ lab02
def test_fit_quality_passes_a_clean_sweep_and_refuses_two_regimes():
    s = np.array([1024 * 4.0**k for k in range(8)])
    t = comm.collective_time_s("all_reduce", s, 2, 5.0, 50e-6, "ring")
    fit = analysis.fit_alpha_beta(s, t, "all_reduce", 2)
    q = analysis.fit_quality(fit, s, t)
    assert q["extrapolation_ok"] and q["max_abs_residual_pct"] < 1e-6 and q["r2_log"] == pytest.approx(1.0)
    t2 = t.copy()
    t2[-2:] *= 15  # the CPU path's cliff above 1 MiB, measured in this lab
    fit2 = analysis.fit_alpha_beta(s, t2, "all_reduce", 2)
    q2 = analysis.fit_quality(fit2, s, t2)
    assert not q2["extrapolation_ok"] and q2["upper_max_abs_residual_pct"] > analysis.MAX_RESIDUAL_PCT
    assert len(q2["residual_pct"]) == 8
    # an NCCL-like bend in the middle of the sweep (a protocol switch) does not condemn the large-message slope
    s3 = np.array([8 * 4.0**k for k in range(14)])
    t3 = comm.collective_time_s("all_reduce", s3, 8, 370.0, 5e-6, "ring")
    t3[5] *= 1.6
    fit3 = analysis.fit_alpha_beta(s3, t3, "all_reduce", 8)
    q3 = analysis.fit_quality(fit3, s3, t3)
    assert q3["max_abs_residual_pct"] > analysis.MAX_RESIDUAL_PCT and q3["upper_max_abs_residual_pct"] < 5
    assert q3["extrapolation_ok"]


def test_lab_sweeps_use_20_timed_calls(monkeypatch):
    seen = {}

    def fake(module, args, **kw):
        seen["args"] = args
        return types.SimpleNamespace(json={"rows": []}, stdout="")

    monkeypatch.setattr(labs.launch, "run_module", fake)
    monkeypatch.setattr(labs, "backend", lambda: "gloo")
    labs.run_collectives("all_reduce", name="x")
    a = seen["args"]
    assert a[a.index("-n") + 1] == "20"


# ------------------------------------------------------------------------------------------ lab06
def test_efficiency_spread_and_the_review_runs():
    sp = analysis.efficiency_spread([108, 31, 24, 97])
    assert (sp["min_pct"], sp["max_pct"], sp["spread_pts"]) == (24, 108, 84) and not sp["conclusive"]
    assert analysis.efficiency_spread([81, 84, 79])["conclusive"]
    assert not analysis.efficiency_spread([81, 84])["conclusive"]  # two repeats are not enough


def test_median_pair_picks_the_median_efficiency():
    base = {"step_s": 0.01, "samples_per_s": 100.0}
    pairs = [(base, {"world_size": 2, "step_s": 0.01, "step_s_no_sync": 0.009, "comm_s_per_step": 0.001,
                     "samples_per_s": thr}) for thr in (150.0, 60.0, 210.0)]
    chosen, rows = ddp.median_pair(pairs)
    assert chosen == 0 and [round(r["efficiency"], 2) for r in rows] == [0.75, 0.3, 1.05]


def test_repeats_need_the_single_rank_baseline(capsys):
    assert ddp.main(["--repeats", "3", "--dry-run", "--backend", "gloo"]) == 2
    assert "--single-rank-baseline" in capsys.readouterr().err
    assert ddp.main(["--repeats", "3", "--single-rank-baseline", "--dry-run", "--backend", "gloo"]) == 0


@pytest.mark.torch
def test_ddp_alternates_and_keeps_every_repeat(tmp_path):
    """A real 2-rank gloo launch: 3 alternating (1 rank, 2 ranks) pairs, the record is the median one."""
    pytest.importorskip("torch")
    out = tmp_path / "ddp2.json"
    res = launch.run_module("labutil.bench.ddp", ["--backend", "gloo", "--steps", "3", "--warmup-steps", "1",
                                                  "--hidden", "32", "--layers", "2", "--batch", "8",
                                                  "--single-rank-baseline", "--repeats", "3"],
                            nproc=2, out=out, timeout_s=240)
    rec = res.json
    assert len(rec["repeats"]) == 3 and 0 <= rec["repeat_chosen"] < 3
    effs = sorted(r["efficiency"] for r in rec["repeats"])
    e = ddp.scaling_efficiency([rec["baseline_1rank"], rec])
    assert e[1]["efficiency"] == pytest.approx(effs[1])  # the record is the median repetition
    assert res.stdout.count("# repeat ") == 3


@pytest.mark.torch
def test_gloo_sweep_times_each_call_and_keeps_the_median(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "ar.json"
    res = launch.run_module("labutil.bench.collectives", ["--op", "all_reduce", "-b", "1K", "-e", "4K", "-f", "4",
                                                          "-n", "3", "-w", "1", "--backend", "gloo"],
                            nproc=2, out=out, timeout_s=240)
    assert "median of the 3 calls" in res.stdout and "median" in res.json["timer"]


# ------------------------------------------------------------------------------------------ lab01
def _fake_torch(cuda: str | None, nccl=(2, 30, 7)):
    def version():
        if nccl is None:
            raise AttributeError("module 'torch._C' has no attribute '_nccl_version'")
        return nccl

    cuda_mod = types.SimpleNamespace(is_available=lambda: False, device_count=lambda: 0,
                                     nccl=types.SimpleNamespace(version=version))
    return types.SimpleNamespace(__version__="2.14.1+cu130" if cuda else "2.13.0+cpu",
                                 version=types.SimpleNamespace(cuda=cuda), cuda=cuda_mod,
                                 distributed=types.SimpleNamespace(is_available=lambda: True))


def test_doctor_reads_the_bundled_nccl_without_a_gpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", _fake_torch("13.0"))
    info = doctor._torch_info()
    assert info["cuda_available"] is False and info["nccl_version"] == "2.30.7"
    assert "2.30.7" in labs.nccl_line(info) and "no GPU needed" in labs.nccl_line(info)
    monkeypatch.setitem(sys.modules, "torch", _fake_torch(None, nccl=None))
    info = doctor._torch_info()
    assert info["nccl_version"] is None and "CPU-only" in info["nccl_note"]
    assert "none" in labs.nccl_line(info) and "CPU-only" in labs.nccl_line(info)


def test_example_reports_are_healthy_and_rendered_by_doctor():
    dgx = labs.example_doctor_report("dgx-h100")
    assert "lab case    nvlink: 8 GPUs" in dgx and "NVLS): yes" in dgx and "NCCL 2.30.7" in dgx
    assert "PASS: 0 critical, 0 warning" in dgx and "8 active, 400 Gb/s" in dgx and "~ 480 GB/s" in dgx
    cpu = labs.example_doctor_report("cpu")
    assert "lab case    cpu" in cpu and "no NCCL bundled" in cpu and "PASS" in cpu
    with pytest.raises(ValueError):
        labs.example_doctor_report("laptop")


# ------------------------------------------------------------------------------------------ lab05
def test_storage_args_and_the_page_cache_warning():
    assert labs.storage_args("/lustre/me", "64G")[:4] == ["--dir", "/lustre/me", "--size", "64G"]
    assert "--dir" not in labs.storage_args(None, "64M")
    small = {"sequential": {"bytes": 64 << 20, "cache_dropped": True}}
    w = labs.page_cache_warning(small, ram_bytes=25 * 10**9)
    # the suggested size is ABOVE the RAM (25 GB = 23.3 GiB: "23G" would be below it), or O_DIRECT
    assert w.startswith("WARNING") and "smaller than this host's RAM" in w and "e.g. 26G" in w and "DIRECT" in w
    assert labs.page_cache_warning({"sequential": {"bytes": 64 << 20, "direct": True}}, ram_bytes=25 * 10**9) == ""
    assert labs.storage_args(None, "64M", direct=True)[-1] == "--direct" and "--direct" not in labs.storage_args()
    big = {"sequential": {"bytes": 64 << 30, "cache_dropped": True}}
    assert labs.page_cache_warning(big, ram_bytes=25 * 10**9) == ""
    stuck = {"sequential": {"bytes": 64 << 30, "cache_dropped": False}}
    assert "could NOT be dropped" in labs.page_cache_warning(stuck, ram_bytes=25 * 10**9)


# ------------------------------------------------------------------------------------------ Slurm
def _maxbytes_block() -> str:
    text = launch.render_sbatch("nccl_bench")
    start = text.index("if [ -z \"${MAXBYTES:-}\" ]; then")
    end = text.index("\nfi\n", start) + 4
    return text[start:end]


@pytest.mark.parametrize("gpu_mib, want", [(81559, "8G"), (46068, "8G"), (23034, "4G"), (15360, "2G"), (4096, "512M")])
def test_sbatch_maxbytes_follows_the_smallest_gpu(tmp_path, gpu_mib, want):
    """80 GB (H100 SXM: 81559 MiB) and 48 GB cards: 8G; a 24 GB card (about 23,000 MiB usable): 4G, where 8G
    (3 x 8 GiB + slack) would OOM; 16 GB: 2G."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    smi = bindir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\nprintf '{gpu_mib + 100}\\n{gpu_mib}\\n'\n")  # the smallest one counts
    smi.chmod(0o755)
    script = "set -euo pipefail\nBACKEND=nccl\n" + _maxbytes_block() + 'echo "RESULT=$MAXBYTES"\n'
    p = subprocess.run(["bash", "-c", script], env={"PATH": f"{bindir}:/usr/bin:/bin"}, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == f"RESULT={want}" == f"RESULT={launch._maxbytes_for_gpu_mib(gpu_mib)}"
    if want != "8G":  # 3 x MAXBYTES + 1 GiB fits in 80 % of the card
        g = {"4G": 4, "2G": 2, "512M": 0.5}[want]
        assert (3 * g + 1) * 1024 <= 0.8 * gpu_mib


def test_sbatch_maxbytes_keeps_an_explicit_value_and_warns_without_nvidia_smi(tmp_path):
    block = _maxbytes_block()
    bash = shutil.which("bash")
    p = subprocess.run([bash, "-c", "set -euo pipefail\nBACKEND=nccl\nMAXBYTES=1G\n" + block + 'echo "R=$MAXBYTES"'],
                       env={"PATH": str(tmp_path)}, capture_output=True, text=True)
    assert p.stdout.strip() == "R=1G" and p.stderr == ""
    p = subprocess.run([bash, "-c", "set -euo pipefail\nBACKEND=nccl\n" + block + 'echo "R=$MAXBYTES"'],
                       env={"PATH": str(tmp_path)}, capture_output=True, text=True)
    assert p.stdout.strip() == "R=8G" and "24 GiB" in p.stderr and "MAXBYTES=4G on 24 GB" in p.stderr
    text = launch.render_sbatch("nccl_bench")
    assert "8G messages need ~24 GiB per GPU" in text  # said in the header too


def test_storage_io_direct_bypasses_the_cache_or_says_why_not(tmp_path, monkeypatch):
    """--direct: O_DIRECT writes and reads where the file system allows them (fio --direct=1), else
    buffered I/O and the reason in the record; the size is no longer capped at 64 GiB (lab05 tells a
    512 GB node to use 600G without --direct)."""
    from labutil.bench import cli, storage_io

    seq = storage_io.sequential(tmp_path / "a.bin", 2 << 20, 1 << 20, progress=False, direct=True)
    assert seq["bytes"] == 2 << 20 and seq["read_gbs"] > 0
    assert seq["direct"] or "O_DIRECT" in seq["direct_error"]   # ext4/xfs: direct; a file system that refuses: why
    monkeypatch.setattr(storage_io, "_open_direct", lambda path, flags: (-1, "the file system refused O_DIRECT (test)"))
    fb = storage_io.sequential(tmp_path / "b.bin", 1 << 20, 1 << 20, progress=False, direct=True)
    assert fb["direct"] is False and fb["direct_error"].endswith("(test)") and fb["cache_dropped"] in (True, False)
    assert "direct_error" not in storage_io.sequential(tmp_path / "c.bin", 1 << 20, 1 << 20, progress=False)
    with pytest.raises(ValueError, match="multiple of 4096"):
        storage_io.sequential(tmp_path / "d.bin", 1 << 20, 1000, progress=False, direct=True)
    with pytest.raises(cli.UsageError, match="multiple of 4096"):
        storage_io.parse_args(["--block", "1000", "--direct", "--dir", str(tmp_path)])
    monkeypatch.setattr(storage_io, "check_fits", lambda *a, **k: None)  # 600G on a disk that has it
    assert storage_io.parse_args(["--size", "600G", "--dir", str(tmp_path)]).size_b == 600 << 30


# ------------------------------------------------------------------------------------------ lab02-04 GPU path
def test_gpu_sweep_ends_at_1_gib_and_the_cpu_sweep_stays_small(monkeypatch):
    """lab02 says 1 GiB is the last row of the GPU sweep: with -b 8 -f 4 it would be 512 MiB."""
    from labutil.bench import collectives

    b, e, f = labs.SWEEPS["gpu"]
    from labutil.units import parse_size
    assert collectives.size_sweep(parse_size(b), parse_size(e), f)[-1] == 2**30
    assert collectives.size_sweep(8, 2**30, 4)[-1] == 2**29          # the old lab03 example's last row
    seen = {}
    monkeypatch.setattr(labs.launch, "run_module",
                        lambda module, args, **kw: seen.setdefault("args", args) and types.SimpleNamespace(
                            json={"rows": []}, stdout=""))
    monkeypatch.setattr(labs, "backend", lambda: "nccl")
    monkeypatch.setattr(labs, "lab_ranks", lambda max_ranks=4: 4)
    labs.run_collectives("all_reduce", name="x")
    a = seen["args"]
    assert (a[a.index("-b") + 1], a[a.index("-e") + 1], a[a.index("-f") + 1]) == ("8", "1G", "2")
    assert "-f 2" in labs.sweep_command() and "--nproc-per-node=4" in labs.sweep_command()


def test_lab04_gpu_gemm_is_timed_as_the_mamf_table(monkeypatch):
    """50 warm-up + 100 timed GEMMs per size on a GPU (stas00/ml-engineering MAMF table method), 5 on the CPU."""
    monkeypatch.setattr(labs, "gpu_count", lambda: 1)
    gemm, copy = labs.lab04_jobs("bf16")
    assert gemm[0] == "labutil.bench.gemm" and gemm[1][gemm[1].index("--warmup") + 1] == "50"
    assert gemm[1][gemm[1].index("--iters") + 1] == "100" and gemm[2] == "lab04_gemm" and copy[2] == "lab04_membw"
    monkeypatch.setattr(labs, "gpu_count", lambda: 0)
    gemm, _ = labs.lab04_jobs()
    assert gemm[1][gemm[1].index("--iters") + 1] == "5"


def test_lab03_tuner_table_is_the_figures_model():
    """lab03's table and figure are one model call (NCCL 2.7.5's tuner on the DGX A100 node, 230 GB/s)."""
    from labutil.explore import bench as bench_fig
    from labutil.explore import nccl as nccl_fig

    rows = {r["setting"]: r for r in bench_fig.nccl_env_table()}
    t = nccl_fig.tuning_model(n_nodes=1, gpus_per_node=8)
    i = list(nccl_fig.SIZES).index(2.0**30)
    assert rows["default (all enabled)"]["1 GiB"] == f"{t.busbw_gbs(8)[i]:.0f} ({t.choice[i]})"
    default = float(rows["default (all enabled)"]["1 GiB"].split()[0])
    assert 200 <= default <= 230 and "Simple" in rows["default (all enabled)"]["1 GiB"]
    assert float(rows["NCCL_PROTO=LL"]["1 GiB"].split()[0]) == pytest.approx(default / 4, rel=0.05)  # LL: 1/4
    with pytest.raises(ValueError, match="powers of two"):
        bench_fig.nccl_env_table(sizes_bytes=(1000,))


def test_gemm_defaults_follow_the_path(monkeypatch):
    """Without --warmup/--iters the GPU path times 50 + 100 multiplications (the MAMF method, also for
    the GPU acceptance script), the CPU path 3 + 20; given values win."""
    from labutil.bench import gemm

    monkeypatch.setattr(gemm, "check_fits", lambda *a, **k: None)
    monkeypatch.setattr(gemm, "_cuda_available", lambda: True)
    a = gemm.parse_args([])
    assert (a.warmup, a.iters) == gemm.GPU_COUNTS == (50, 100) and a.size_list[-1] == 8192
    assert (gemm.parse_args(["--iters", "7", "--warmup", "0"]).iters, gemm.parse_args(["--warmup", "0"]).warmup) == (7, 0)
    monkeypatch.setattr(gemm, "_cuda_available", lambda: False)
    a = gemm.parse_args([])
    assert (a.warmup, a.iters) == (3, 20) and a.size_list == [128, 256, 512]
    assert (membw.parse_args([]).warmup, membw.parse_args([]).iters) == (3, 20)
