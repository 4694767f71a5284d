"""Tests of labutil.frameworks (ch24) and its explorer: configs, round trips, bucket arithmetic."""

import json
import shlex

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labutil import comm, frameworks as F, memory, parallel, steptime
from labutil.parsers import megatron as megatron_log
from labutil.machine import launch
from labutil.explore import frameworks as EF
from labutil.models import transformer
from labutil.parsers import ParseError

MIB = 2**20


# -- DeepSpeed -----------------------------------------------------------------------------------
def test_deepspeed_config_fields_and_batch_identity():
    L = parallel.Layout(8, 4, 32, 2, 1536, zero_stage=1)
    cfg = F.deepspeed_config(L, offload_optimizer="cpu")
    assert cfg["train_batch_size"] == 1536
    assert cfg["train_micro_batch_size_per_gpu"] == 2
    assert cfg["gradient_accumulation_steps"] == 96          # 1536 / (2 x 8)
    z = cfg["zero_optimization"]
    assert z["stage"] == 1 and z["overlap_comm"] is True and z["contiguous_gradients"] is True
    assert z["reduce_bucket_size"] == z["allgather_bucket_size"] == 500_000_000   # DeepSpeed default (elements)
    assert z["offload_optimizer"] == {"device": "cpu", "pin_memory": True}
    assert cfg["bf16"] == {"enabled": True} and cfg["fp16"] == {"enabled": False}
    assert json.loads(F.deepspeed_json(cfg)) == cfg                 # valid JSON, all plain types


@settings(max_examples=60, deadline=None)
@given(dp=st.integers(1, 64), mb=st.integers(1, 8), ga=st.integers(1, 64), zero=st.integers(0, 3))
def test_deepspeed_batch_identity_property(dp, mb, ga, zero):
    L = parallel.Layout(dp, 1, 1, mb, dp * mb * ga, zero_stage=zero)
    cfg = F.deepspeed_config(L)
    assert cfg["train_batch_size"] == cfg["train_micro_batch_size_per_gpu"] * cfg["gradient_accumulation_steps"] * dp
    assert cfg["gradient_accumulation_steps"] == ga


def test_check_deepspeed_batch_names_the_field():
    cfg = F.deepspeed_config(parallel.Layout(8, 1, 1, 1, 64))
    with pytest.raises(ValueError, match="train_batch_size=64 must equal .* = 128"):
        F.check_deepspeed_batch(cfg, 16)
    bad = dict(cfg)
    del bad["gradient_accumulation_steps"]
    with pytest.raises(ValueError, match="gradient_accumulation_steps"):
        F.check_deepspeed_batch(bad, 8)
    with pytest.raises(ValueError, match="train_micro_batch_size_per_gpu"):
        F.check_deepspeed_batch(dict(cfg, train_micro_batch_size_per_gpu=0), 8)


def test_deepspeed_rejects_unsupported_combinations():
    with pytest.raises(ValueError, match="pipeline"):
        F.deepspeed_config(parallel.Layout(8, 1, 4, 1, 64, zero_stage=2))
    with pytest.raises(ValueError, match="offload_optimizer needs"):
        F.deepspeed_config(parallel.Layout(8, 1, 1, 1, 64), offload_optimizer="cpu")
    with pytest.raises(ValueError, match="offload_optimizer must be one of"):
        F.deepspeed_config(parallel.Layout(8, 1, 1, 1, 64, zero_stage=1), offload_optimizer="gpu")
    with pytest.raises(ValueError, match="reduce_bucket_size"):
        F.deepspeed_config(parallel.Layout(8, 1, 1, 1, 64), reduce_bucket_size=0)
    with pytest.raises(ValueError, match="layout"):
        F.deepspeed_config({"dp": 8})


# -- Megatron-LM ------------------------------------------------------------------------------------
@pytest.mark.parametrize("model,layout", [
    ("gpt3-175b", parallel.Layout(8, 4, 32, 1, 1536, zero_stage=1, sp=True, recompute="selective")),
    ("llama3-70b", parallel.Layout(16, 8, 4, 1, 512, recompute="full")),
    ("llama2-7b", parallel.Layout(32, 2, 1, 4, 1024, sp=True)),
])
def test_megatron_args_parse_back(model, layout):
    spec = transformer(model)
    args = F.megatron_pretrain_args(spec, layout)
    back = F.parse_megatron_args(args, layout.world_size)
    assert back == layout
    assert back.tp == layout.tp and back.pp == layout.pp and back.dp == layout.dp
    i = args.index("--num-layers")
    assert args[i + 1] == str(spec.layers)
    assert ("--group-query-attention" in args) == (spec.kv_heads != spec.heads)
    # --flag=value form works too
    eq = ["--tensor-model-parallel-size=" + str(layout.tp), "--micro-batch-size=1", "--global-batch-size=64"]
    assert F.parse_megatron_args(eq, layout.tp * 4).dp == 4


def test_megatron_llama_architecture_flags():
    a = F.megatron_pretrain_args(transformer("llama3-8b"), parallel.Layout(8, 1, 1, 1, 64))
    for flag in ("--swiglu", "--untie-embeddings-and-output-weights", "--disable-bias-linear", "--bf16"):
        assert flag in a
    assert a[a.index("--normalization") + 1] == "RMSNorm"
    assert a[a.index("--num-query-groups") + 1] == "8"
    assert a[a.index("--position-embedding-type") + 1] == "rope"


def test_megatron_bad_input():
    spec = transformer("gpt3-175b")
    with pytest.raises(ValueError, match="ZeRO-1"):
        F.megatron_pretrain_args(spec, parallel.Layout(8, 1, 1, 1, 64, zero_stage=3))
    with pytest.raises(ValueError, match="does not divide"):
        F.megatron_pretrain_args(spec, parallel.Layout(1, 5, 1, 1, 8))
    with pytest.raises(ValueError, match="not divisible"):
        F.parse_megatron_args(["--tensor-model-parallel-size", "8", "--micro-batch-size", "1",
                               "--global-batch-size", "8"], 12)
    with pytest.raises(ValueError, match="--global-batch-size"):
        F.parse_megatron_args(["--micro-batch-size", "1"], 8)
    with pytest.raises(ValueError, match="positive integer"):
        F.parse_megatron_args(["--micro-batch-size", "x", "--global-batch-size", "8"], 8)
    with pytest.raises(ValueError, match="argument list"):
        F.parse_megatron_args("--micro-batch-size 1", 8)


# -- torchrun / Slurm ---------------------------------------------------------------------------
def test_torchrun_command_script_and_module():
    a = F.torchrun_command("pretrain_gpt.py", ["--micro-batch-size", 1], nnodes=4, nproc_per_node=8)
    assert a[:7] == ["torchrun", "--nnodes=4", "--nproc-per-node=8", "--rdzv-backend=c10d",
                     "--rdzv-endpoint=$MASTER_ADDR:$MASTER_PORT", "--rdzv-id=$SLURM_JOB_ID", "--max-restarts=0"]
    assert a[7:] == ["pretrain_gpt.py", "--micro-batch-size", "1"]
    m = F.torchrun_command("labutil.bench.ddp", ["--steps", "5"], module=True, rdzv_endpoint="node1:29500",
                           nnodes=2)
    assert m == launch.torchrun_args("labutil.bench.ddp", ["--steps", "5"], nnodes=2, nproc_per_node=8,
                                     rdzv_endpoint="node1:29500", rdzv_id="$SLURM_JOB_ID", launcher="torchrun")
    with pytest.raises(ValueError, match="rdzv_endpoint"):
        F.torchrun_command("train.py", rdzv_endpoint="nohostport")
    with pytest.raises(ValueError, match="target"):
        F.torchrun_command("  ")
    with pytest.raises(ValueError, match="newlines"):
        F.torchrun_command("train.py", ["a\nrm -rf /"])


def test_srun_torchrun_script_is_valid_bash_and_quotes_values(tmp_path):
    s = F.srun_torchrun_script("pretrain_gpt.py", ["--data-path", "/data/my corpus"], nodes=16,
                               env={"NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "mlx5_0,mlx5_1"})
    assert s.startswith("#!/bin/bash\n#SBATCH --job-name=train\n#SBATCH --nodes=16\n")
    assert "export NCCL_DEBUG=INFO" in s
    assert "'/data/my corpus'" in s                     # a space is quoted, not split
    assert '"--rdzv-endpoint=$MASTER_ADDR:$MASTER_PORT"' in s
    # the srun line, re-joined, tokenises to srun + the torchrun list
    body = s.rsplit("\n\n", 1)[1].replace("\\\n", " ")
    toks = shlex.split(body)
    assert toks[:4] == ["srun", "--nodes=16", "--ntasks-per-node=1", "--ntasks=16"]
    assert toks[4] == "torchrun" and "--nnodes=16" in toks
    import shutil
    import subprocess
    if shutil.which("bash"):
        f = tmp_path / "job.sbatch"
        f.write_text(s)
        assert subprocess.run(["bash", "-n", str(f)], capture_output=True).returncode == 0
    for bad in ({"nodes": 0}, {"nodes": 2, "job_name": "a b"}, {"nodes": 2, "time_limit": "1h"},
                {"nodes": 2, "env": {"nccl_debug": "x"}}):
        with pytest.raises(ValueError):
            F.srun_torchrun_script("train.py", **bad)


# -- DDP buckets -------------------------------------------------------------------------------
def test_ddp_bucket_arithmetic():
    p = F.ddp_bucket_plan(1.3e9, 25, n_gpus=16, bw_gbs=50.0, backward_s=0.2)
    S = 1.3e9 * 4
    assert p.grad_bytes == S
    assert p.bucket_bytes.sum() == pytest.approx(S)
    assert p.bucket_bytes[0] == MIB                                  # PyTorch's 1 MiB first bucket
    assert np.all(p.bucket_bytes[1:-1] == 25 * MIB)
    assert p.n_buckets == 1 + int(np.ceil((S - MIB) / (25 * MIB)))  # 200
    assert p.n_buckets == 200
    # first-bucket latency and overlap window: gradients ready uniformly over the backward
    assert p.first_bucket_ready_s == pytest.approx(0.2 * MIB / S)
    assert p.overlap_window_s == pytest.approx(0.2 - 0.2 * MIB / S)
    # total all-reduce time = sum of per-bucket ring times = bandwidth term + one latency per bucket
    ring = comm.collective_time_s("all_reduce", S, 16, 50.0)
    assert p.comm_s == pytest.approx(ring + (p.n_buckets - 1) * 2 * 15 * comm.NET_STEP_LATENCY_S, rel=1e-9)
    assert p.latency_s_total == pytest.approx(p.n_buckets * 2 * 15 * comm.NET_STEP_LATENCY_S)
    # causality: a bucket never starts before it is ready or before the previous one finished
    assert np.all(p.start_s >= p.ready_s - 1e-15)
    assert np.all(p.start_s[1:] >= p.finish_s[:-1] - 1e-12)
    assert p.exposed_comm_s == pytest.approx(max(0.0, p.finish_s[-1] - 0.2))
    # exposed is at least the last bucket's all-reduce (it is ready only at the end of the backward)
    last = comm.collective_time_s("all_reduce", p.bucket_bytes[-1], 16, 50.0)
    assert p.exposed_comm_s >= last - 1e-12


def test_bucket_size_trade_off():
    sw = F.bucket_sweep(1.3e9, [0.5, 25, 100_000], n_gpus=16, backward_s=0.25)
    # tiny buckets pay latency, one huge bucket cannot overlap: the middle is best
    assert sw["exposed_comm_s"][1] < sw["exposed_comm_s"][0]
    assert sw["exposed_comm_s"][1] < sw["exposed_comm_s"][2]
    assert sw["n_buckets"][2] == 2                                     # 1 MiB first bucket + the rest
    assert sw["comm_s"][0] > sw["comm_s"][1] > sw["comm_s"][2]


@settings(max_examples=40, deadline=None)
@given(params=st.floats(1e7, 5e9), mb=st.floats(0.5, 2000), n=st.integers(2, 512), bwd=st.floats(0.01, 5.0))
def test_bucket_plan_properties(params, mb, n, bwd):
    p = F.ddp_bucket_plan(params, mb, n_gpus=n, backward_s=bwd)
    assert p.bucket_bytes.sum() == pytest.approx(params * 4, rel=1e-9)
    assert 0.0 <= p.exposed_comm_s <= p.comm_s + 1e-12
    assert p.finish_s[-1] >= max(bwd, p.comm_s) - 1e-9
    assert 0.0 <= p.hidden_fraction <= 1.0


def test_grad_accumulation_without_no_sync_multiplies_traffic():
    p = F.ddp_bucket_plan(1.3e9, n_gpus=16, backward_s=0.2)
    a = F.grad_accumulation_comm(p, 8, no_sync=True)
    b = F.grad_accumulation_comm(p, 8, no_sync=False)
    assert a.allreduces == 1 and b.allreduces == 8
    assert b.bytes_sent_per_gpu == pytest.approx(8 * a.bytes_sent_per_gpu)
    assert a.bytes_sent_per_gpu == pytest.approx(2 * 15 / 16 * 1.3e9 * 4)
    assert b.exposed_comm_s == pytest.approx(8 * p.exposed_comm_s)


def test_ddp_bad_input():
    with pytest.raises(ValueError, match="params"):
        F.ddp_bucket_plan(-1)
    with pytest.raises(ValueError, match="bucket_mb"):
        F.ddp_bucket_plan(1e9, 0)
    with pytest.raises(ValueError, match="n_gpus"):
        F.ddp_bucket_plan(1e9, n_gpus=1)
    with pytest.raises(ValueError, match="backward_s"):
        F.ddp_bucket_plan(1e9, backward_s=float("nan"))
    with pytest.raises(KeyError):
        F.ddp_bucket_plan(1e9, gpu="H999")
    with pytest.raises(ValueError, match="ga_steps"):
        F.grad_accumulation_comm(F.ddp_bucket_plan(1e9), 0)


def test_default_backward_time():
    # 2/3 of 6·N·T/(peak·MFU): 1.3e9 params, 16384 tokens, H100 BF16 989.4 TFLOP/s, MFU 0.4
    assert F.ddp_backward_s(1.3e9) == pytest.approx(4 * 1.3e9 * 16384 / (989.4e12 * 0.4))


# -- FSDP vs ZeRO ----------------------------------------------------------------------------------
def test_fsdp_vs_zero_table():
    rows = {r["fsdp"]: r for r in F.fsdp_vs_zero_table(7.5e9, 64, 8)}
    assert set(rows) == {"NO_SHARD", "SHARD_GRAD_OP", "FULL_SHARD", "HYBRID_SHARD"}
    # ZeRO paper Figure 1: Ψ = 7.5B, Nd = 64 -> 120, 16.6 (stage 2), 1.88 GB (stage 3)
    assert rows["NO_SHARD"]["states_gb"] == pytest.approx(120.0)
    assert rows["SHARD_GRAD_OP"]["states_gb"] == pytest.approx(16.6, abs=0.05)
    assert rows["FULL_SHARD"]["states_gb"] == pytest.approx(1.875)
    assert rows["HYBRID_SHARD"]["states_gb"] == pytest.approx(memory.model_states_gb(7.5e9, 8, 3).total_gb)
    # ZeRO §7: stage 3 moves 1.5x the data-parallel volume
    assert rows["FULL_SHARD"]["sent_gb_per_gpu"] == pytest.approx(1.5 * rows["NO_SHARD"]["sent_gb_per_gpu"])
    assert rows["NO_SHARD"]["sent_gb_per_gpu"] == pytest.approx(2 * 63 / 64 * 15e9 / 1e9)
    assert rows["HYBRID_SHARD"]["network_ranks"] == 8 and rows["FULL_SHARD"]["network_ranks"] == 64
    with pytest.raises(ValueError, match="multiple of gpus_per_node"):
        F.fsdp_vs_zero_table(7e9, 12, 8)
    with pytest.raises(ValueError, match="optimizer"):
        F.fsdp_vs_zero_table(7e9, 64, 8, optimizer="lion")


# -- logs -> throughput, MFU, scaling efficiency -------------------------------------------------
def test_run_throughput_and_scaling_efficiency():
    a = F.run_throughput(F.MEGATRON_LOG_SAMPLE_512, 512, 2048)
    b = F.run_throughput(megatron_log.MEGATRON_LOG_SAMPLE, 1024, 2048)
    assert a.step_s == pytest.approx(13.9329)                     # median of the three lines
    assert a.samples_per_s == pytest.approx(1536 / 13.9329)
    assert b.tokens_per_s == pytest.approx(1536 * 2048 / 7.1889)
    assert b.mfu == pytest.approx(460.4 / 989.4)
    eff = F.scaling_efficiency_from_logs(a, b)
    assert eff == pytest.approx((1536 / 7.1889 / 1024) / (1536 / 13.9329 / 512))
    assert 0.9 < eff < 1.0
    with pytest.raises(ValueError, match="must exceed"):
        F.scaling_efficiency_from_logs(b, a)
    with pytest.raises(ParseError):
        F.run_throughput("garbage\nmore garbage", 8, 2048)
    with pytest.raises(ValueError, match="TFLOP"):
        F.run_throughput("iteration 1/ 10 | elapsed time per iteration (ms): 100.0 | global batch size: 8 |", 8, 2048)


def test_sample_log_tflops_consistent_with_megatron_formula():
    from labutil import compute
    f = compute.megatron_flops_per_iter(transformer("gpt3-175b"), 1536)
    for it in megatron_log.parse_megatron_log(F.MEGATRON_LOG_SAMPLE_512):
        assert it.tflops_per_gpu == pytest.approx(f / (it.elapsed_ms / 1e3 * 512) / 1e12, abs=0.06)


def test_tokens_per_step():
    assert F.tokens_per_step(1536, 2048) == 3_145_728
    np.testing.assert_allclose(F.tokens_per_step(np.array([1536, 3072]), 2048), [3145728, 6291456])
    with pytest.raises(ValueError, match="global_batch"):
        F.tokens_per_step(0, 2048)


# -- explorer and figures ---------------------------------------------------------------------------
def test_framework_explorer_follows_search():
    ex = EF.framework_explorer()
    assert ex.error is None
    p = ex.result
    ref = steptime.search_layouts(transformer("gpt3-175b"), 1024, "H100-SXM", 1536)
    assert p.best.layout == ref.best.layout
    assert F.parse_megatron_args(p.megatron_args, 1024) == ref.best.layout
    assert p.deepspeed["train_batch_size"] == 1536
    ax_m = ex.figure.axes[0]
    bars = [pch.get_height() for pch in ax_m.patches]
    assert bars[:len(p.top)] == pytest.approx([e.memory_gb for e in p.top])
    ex.set(model="llama3-8b", n_gpus=8)
    assert ex.error is None and ex.n_updates == 1
    q = ex.result
    assert q.best.layout.world_size == 8
    assert [pch.get_height() for pch in ax_m.patches][:len(q.top)] == pytest.approx([e.memory_gb for e in q.top])
    if q.best.layout.zero_stage >= 2:
        assert q.megatron_args is None and "ZeRO-1" in q.megatron_note


def test_framework_explorer_no_feasible_layout():
    p = EF.framework_plan("llama3-405b", 8, "H100-SXM", 64)
    assert p.best is None and p.deepspeed is None
    assert "没有" in EF._summary(p, {})


def test_figures_build():
    import matplotlib.pyplot as plt
    for fig in (EF.ddp_bucket_figure(), EF.zero_fsdp_figure()):
        assert len(fig.axes) == 2 and all(ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes)
        plt.close(fig)


def test_ddp_buckets_go_through_the_cluster_model():
    # issue 8: by default each bucket's all-reduce is the cluster model's (2x DGX H100 for 16 ranks:
    # NVLink in the node, 8 rails across), not a flat ring at a per-GPU bandwidth
    from labutil.cluster import Cluster

    dgx = Cluster.system("DGX-H100", 2)
    p = F.ddp_bucket_plan(1.3e9, 25, n_gpus=16, backward_s=0.2)
    q = F.ddp_bucket_plan(1.3e9, 25, n_gpus=16, backward_s=0.2, cluster=dgx)
    t = dgx.collective_time_s("all_reduce", p.bucket_bytes, 16)
    assert p.comm_s == pytest.approx(float(np.sum(t))) == pytest.approx(q.comm_s)
    # one 400G NIC per node instead of 8: the network is the bottleneck, the all-reduce ~3-9x longer
    # (NCCL's NVLS-Tree on 2 nodes sends half the bytes over the one NIC, so less than the 8x NIC ratio)
    one = F.ddp_bucket_plan(1.3e9, 25, n_gpus=16, backward_s=0.2, cluster=Cluster.system("DGX-H100", 2, nics_per_node=1))
    assert 3 < one.comm_s / p.comm_s < 10 and one.exposed_comm_s > p.exposed_comm_s
    # a rank count that does not fill nodes evenly is packed evenly (12 ranks -> 6 per node on 2 nodes)
    assert F.ddp_bucket_plan(1e9, n_gpus=12, backward_s=0.1).comm_s > 0
    with pytest.raises(ValueError):
        F.ddp_bucket_plan(1e9, bw_gbs=50.0, cluster=dgx)
    with pytest.raises(TypeError):
        F.ddp_bucket_plan(1e9, cluster="DGX-H100")


def test_fsdp_table_counts_traffic_per_micro_batch():
    # gradient accumulation over m micro-batches: DDP (no_sync) once per step, SHARD_GRAD_OP reduce-scatters every
    # micro-batch, FULL_SHARD gathers and reduce-scatters every micro-batch (as parallel.comm_volume_gb counts)
    one = {r["fsdp"]: r["sent_gb_per_gpu"] for r in F.fsdp_vs_zero_table(7e9, 64, 8)}
    four = {r["fsdp"]: r["sent_gb_per_gpu"] for r in F.fsdp_vs_zero_table(7e9, 64, 8, micro_batches=4)}
    assert four["NO_SHARD"] == pytest.approx(one["NO_SHARD"])
    assert four["SHARD_GRAD_OP"] == pytest.approx(one["SHARD_GRAD_OP"] * 5 / 2)
    assert four["FULL_SHARD"] == pytest.approx(4 * one["FULL_SHARD"])
    with pytest.raises(ValueError, match="micro_batches"):
        F.fsdp_vs_zero_table(7e9, 64, 8, micro_batches=0)


def test_best_bucket_is_the_minimum_of_the_sweep():
    # 4 nodes x 8 H100 with one 400G NIC each (ch24 §3): the all-reduce outlasts the 215 ms backward, so the
    # bucket size matters; the best bucket is the sweep's minimum and beats PyTorch's 25 MiB default
    from labutil.cluster import Cluster
    one = Cluster.system("DGX-H100", n_nodes=4, nics_per_node=1)
    grid = [2.0 ** k for k in range(-2, 13)]
    best_mb, best_s = F.best_bucket_mb(1.3e9, grid, n_gpus=32, cluster=one)
    sw = F.bucket_sweep(1.3e9, grid, n_gpus=32, cluster=one)
    assert best_s == pytest.approx(float(sw["exposed_comm_s"].min())) and best_mb in grid
    default = F.ddp_bucket_plan(1.3e9, 25, n_gpus=32, cluster=one)
    assert best_s < default.exposed_comm_s and default.comm_s > default.backward_s
    assert 1 < best_mb < 4096                                  # neither tiny (latency) nor one bucket (no overlap)


def test_framework_explorer_says_when_deepspeed_cannot_run_the_layout():
    # global batch 4096 on 1,024 H100: the best layout uses ZeRO-2 with a pipeline (PyTorch FSDP can; DeepSpeed's
    # pipeline engine takes ZeRO 0/1 only): the explorer says so instead of failing
    p = EF.framework_plan("gpt3-175b", 1024, "H100-SXM", 4096)
    L = p.best.layout
    if L.pp > 1 and L.zero_stage >= 2:
        assert p.deepspeed is None and "pipeline" in p.deepspeed_note
        assert "DeepSpeed 不适用" in EF._summary(p, {})
    else:
        assert p.deepspeed is not None and p.deepspeed_note == ""
    ex = EF.framework_explorer()
    ex.set(n_gpus=8)                                            # 175B on 8 GPUs: nothing fits
    assert ex.result.best is None and ex.error is None
