# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 第24章 分布式训练框架配置
#
# > 模块五「部署与验收」的第 24 章。前置：第 7 章（训练显存）、第 8 章（并行布局搜索 `steptime.search_layouts`）、
# > 第 13–14 章（集合通信与计算通信重叠）、第 21 章（Slurm 调度）。本章把前面算出来的「方案」落成框架真正读取的
# > 启动命令和配置文件，再从训练日志里读回吞吐、MFU 和扩展效率；第 27 章（可靠性）和第 30 章（综合案例）会直接复用这里的生成器。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 写出多机 `torchrun` 的正确参数（`--nnodes`、`--nproc-per-node`、`--rdzv-backend=c10d`），并用 Slurm 的 `srun` 每节点启动一个；
# - 解释 PyTorch DDP 的梯度分桶（bucket）如何把 all-reduce 藏到反向传播里，并算出桶的个数、首桶延迟和暴露的通信时间；
# - 从一个并行布局生成 DeepSpeed 的 `ds_config.json`，保证 `train_batch_size = micro × GA × dp` 这条恒等式成立；
# - 为 Megatron-LM 的 `pretrain_gpt.py` 生成 3D 并行参数，并能反向从参数读出 tp/pp/dp；
# - 从两次不同卡数的训练日志算出 TFLOP/s、MFU 与扩展效率，并说清楚 FSDP 的分片策略对应 ZeRO 的哪一级。

# %%
from labutil.notebook import setup, show_table, MarkdownTable
from labutil import frameworks, parallel, steptime, compute, comm, hardware, models, published_runs
from labutil.parallel import Layout
from labutil.parsers import megatron as megatron_log
from labutil.cluster import Cluster
from labutil.explore import frameworks as frameworks_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 软件栈里的位置：从「方案」到「能跑起来的作业」
#
# 种子课程列出大模型训练集群的典型软件是 **Slurm + PyTorch + Megatron-LM/DeepSpeed**，分布式框架是 **PyTorch DDP / DeepSpeed**。
# 这几层各管一件事，部署时最常见的故障恰恰出在层与层的「接口」上：
#
# | 层 | 负责什么 | 你要给它什么 | 配错的典型症状 |
# |---|---|---|---|
# | Slurm（第 21 章） | 分配节点、GPU，启动每节点一个任务 | `--nodes`、`--gpus-per-node`、`--ntasks-per-node=1` | 作业卡在 rendezvous，或一台机器起了 8 个 torchrun |
# | torchrun | 每节点按 GPU 数 fork 进程，设置 `RANK/LOCAL_RANK/WORLD_SIZE`，c10d rendezvous | `--nnodes`、`--nproc-per-node`、`--rdzv-endpoint` | `world_size` 不对、端口冲突、超时 |
# | PyTorch DDP / FSDP | 数据并行：梯度分桶 all-reduce，或参数分片 | `bucket_cap_mb`、`sharding_strategy` | 通信没有重叠，GPU 利用率低 |
# | DeepSpeed | ZeRO 分片、offload、梯度累积、混合精度 | `ds_config.json` | 启动时报 batch 不一致；ZeRO-3 慢 |
# | Megatron-LM | 张量并行 + 流水线并行 + 序列并行 + 分布式优化器 | `pretrain_gpt.py` 的 `--tensor-model-parallel-size` 等 | tp 不整除 head 数、显存 OOM、气泡过大 |
#
# 一个带过千卡集群的人的经验是：**不要手写这些参数**。第 8 章的布局搜索已经告诉你 dp、tp、pp、micro-batch、ZeRO 级别；
# 本章的 `labutil.frameworks` 把同一个 `Layout` 翻译成三种框架各自的格式，保证它们彼此一致。下面先拿 GPT-3 175B 在 1,024 张 H100 上的
# 最佳布局做例子：它就是第 8 章的搜索（`steptime.search_layouts`）给出的最快布局，下一格把它打印出来，本节后面的参数、脚本都由它生成。

# %%
# NBVAL_CHECK_OUTPUT
spec = models.transformer("gpt3-175b")
search = steptime.search_layouts(spec, 1024, "H100-SXM", 1536)
best = search.best
L = best.layout
print(f"best layout: {L.label()}  world size {L.world_size}")
print(f"memory per GPU {best.memory_gb:.1f} GB, step {best.step_s:.2f} s, MFU {best.mfu:.1%}, "
      f"micro-batches per step (GA) {L.n_microbatches}")

# %% [markdown]
# ## 2. torchrun：每个节点一个启动器
#
# `torchrun`（即 `python -m torch.distributed.run`）是 PyTorch 的弹性启动器。它**在每个节点上运行一次**，
# 然后在本节点 fork 出 `--nproc-per-node` 个工作进程，每个进程拿到环境变量 `RANK`、`LOCAL_RANK`、`WORLD_SIZE`、`MASTER_ADDR`、`MASTER_PORT`。
# 所有节点通过 **rendezvous** 相互找到对方：`--rdzv-backend=c10d` 表示用 PyTorch 自带的 TCPStore，
# 由 `--rdzv-endpoint=host:port` 指定的那台机器（通常是分配到的第一个节点）托管；`--rdzv-id` 区分同一端点上的不同作业。
# 于是全局进程数为
#
# $$
# \text{WORLD\_SIZE} = \text{nnodes} \times \text{nproc\_per\_node}, \qquad
# \text{RANK} = \text{node\_rank} \times \text{nproc\_per\_node} + \text{LOCAL\_RANK}.
# $$
#
# 在 Slurm 下最常见的错误是让 `srun` 每个 GPU 起一个任务（`--ntasks-per-node=8`），结果每台机器上有 8 个 torchrun、各自又 fork 8 个进程，
# WORLD_SIZE 变成 64 倍。正确的模式是 `srun --ntasks-per-node=1`：Slurm 管节点，torchrun 管节点内的进程。
# `frameworks.srun_torchrun_script` 按课程 `labs/slurm/*.sbatch` 的同一模式生成完整的批处理脚本（参数都经过转义，不会把带空格的路径拆开）：

# %%
# NBVAL_CHECK_OUTPUT
nodes = L.world_size // 8
meg_args = frameworks.megatron_pretrain_args(spec, L)
script = frameworks.srun_torchrun_script(
    "pretrain_gpt.py", meg_args + ["--data-path", "/data/gpt_text_document"], nodes=nodes, job_name="gpt175b",
    cpus_per_task=hardware.server("DGX-H100").cpu_cores,  # one task per node gets the node's cores (srun needs it too)
    env={"NCCL_IB_HCA": "mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7", "CUDA_DEVICE_MAX_CONNECTIONS": "1"})
print(script)

# %% [markdown]
# 两个细节值得记住。第一，`CUDA_DEVICE_MAX_CONNECTIONS=1` 是 Megatron-LM 在开启张量并行 + 序列并行时要求的环境变量
# （它让通信 kernel 按提交顺序调度，便于与计算重叠）。第二，`--max-restarts=0` 表示进程失败就整作业失败——在千卡规模，
# 自动重启交给第 27 章的作业级机制（从检查点恢复）更可控。
#
# ## 3. PyTorch DDP：梯度分桶与计算通信重叠
#
# DDP 是最简单的数据并行：每张卡持有完整模型，反向传播后对梯度做 all-reduce 求平均。如果等整个反向结束再对全部梯度做一次 all-reduce，
# 通信时间就完全暴露在外。Li et al. 2020（VLDB，§3.2.3–3.2.4）描述了 DDP 的做法：把参数按**反向传播中梯度就绪的顺序**（大致是层的逆序）
# 装进若干个**桶**（bucket），默认每桶 `bucket_cap_mb = 25` MiB；一个桶里的梯度全部就绪，就立刻在独立的 CUDA stream 上启动这个桶的 all-reduce，
# 同时反向传播继续计算前面的层。PyTorch 还把**第一个桶**做得更小（1 MiB，`torch.distributed._DEFAULT_FIRST_BUCKET_BYTES`），让第一次通信尽早开始。
#
# 设梯度总字节数 $S = \Psi \times b$（fp32 梯度 $b=4$），桶容量 $C$，首桶 $C_0$，则桶数
#
# $$
# n_{\text{bucket}} = 1 + \left\lceil \frac{S - C_0}{C} \right\rceil .
# $$
#
# 每个桶的 ring all-reduce 时间是 $t_k = 2(n-1)\alpha + \frac{2(n-1)}{n}\frac{s_k}{B}$（第 13 章），桶在时刻 $r_k$ 就绪，
# 全部 all-reduce 在一个 NCCL stream 上依次执行：$f_k = \max(r_k, f_{k-1}) + t_k$。反向传播在 $T_{\text{bwd}}$ 结束，
# 真正让这一步变慢的只有**暴露的通信** $\max(0, f_{\text{last}} - T_{\text{bwd}})$。这里有一个两难：
#
# - 桶太小：每个桶都付一次 $2(n-1)\alpha$ 的延迟，总通信时间膨胀；
# - 桶太大：第一个桶要等很久才就绪，最后一个桶在反向结束时才开始传，几乎没有重叠。
#
# 用一个 1.3B 参数的模型（fp32 梯度 5.2 GB）、32 张 H100（4 台服务器）算一下默认配置。all-reduce 时间来自课程统一的集群模型 `labutil.cluster`
# （节点内走 NVLink/NVLS，跨节点每条轨道一个环，NCCL 在 ring/tree 间取快者）。先看四台标准 DGX H100（每节点 8 × 400G 网卡），
# 再看同样 4 × 8 张 H100、但**每节点只有一张 400G 网卡**的集群——桶大小的两难只在网络是瓶颈时才显现：

# %%
# NBVAL_CHECK_OUTPUT
dgx = Cluster.system("DGX-H100", n_nodes=4)                    # 8 x 400G NICs per node
one_nic = Cluster.system("DGX-H100", n_nodes=4, nics_per_node=1)  # one 400G NIC per node
full = frameworks.ddp_bucket_plan(1.3e9, 25, n_gpus=32, cluster=dgx)
print(f"4x DGX H100 (8x 400G per node): all-reduce total {full.comm_s * 1e3:.0f} ms, "
      f"exposed {full.exposed_comm_s * 1e3:.1f} ms -> {full.hidden_fraction:.1%} hidden")
plan = frameworks.ddp_bucket_plan(1.3e9, 25, n_gpus=32, cluster=one_nic)
print("4 x 8 H100, one 400G NIC per node:")
print(f"gradient bytes {plan.grad_bytes / 1e9:.2f} GB -> {plan.n_buckets} buckets "
      f"(first {plan.bucket_bytes[0] / 2**20:.0f} MiB, then 25 MiB)")
print(f"backward {plan.backward_s * 1e3:.0f} ms; first bucket ready after {plan.first_bucket_ready_s * 1e6:.0f} us, "
      f"overlap window {plan.overlap_window_s * 1e3:.0f} ms")
print(f"all-reduce total {plan.comm_s * 1e3:.0f} ms (latency part {plan.latency_s_total * 1e3:.0f} ms), "
      f"exposed {plan.exposed_comm_s * 1e3:.0f} ms -> {plan.hidden_fraction:.0%} hidden")

# %% [markdown]
# 读成一段话（由上一格和桶大小扫描的结果直接生成）：

# %%
# NBVAL_CHECK_OUTPUT
bucket_grid = [2.0 ** k for k in range(-2, 13)]          # 0.25 MiB ... 4 GiB
best_mb, best_exposed = frameworks.best_bucket_mb(1.3e9, bucket_grid, n_gpus=32, cluster=one_nic)
MarkdownTable(
    f"四台标准 DGX H100 上，32 个 rank 的 all-reduce 节点内走 NVLink、跨节点 8 条轨道并行，{full.grad_bytes / 1e9:.1f} GB 梯度总共只要 "
    f"{full.comm_s * 1e3:.0f} ms，几乎全部藏在 {full.backward_s * 1e3:.0f} ms 的反向传播后面——桶大小无关紧要。"
    f"每节点只剩一张 400G 网卡时就不同了：all-reduce 总共要 {plan.comm_s * 1e3:.0f} ms，"
    + (f"比反向传播还长，即使完美重叠也至少暴露 {(plan.comm_s - plan.backward_s) * 1e3:.0f} ms；"
       if plan.comm_s > plan.backward_s else "与反向传播差不多长；")
    + f"默认配置暴露 {plan.exposed_comm_s * 1e3:.0f} ms。左图（同一个单网卡集群）扫描桶大小：1 MiB 以下的桶让延迟项爆炸，"
    f"整个梯度一个桶（右端）几乎完全不能重叠；对这个配置，最优点在 {best_mb:.0f} MiB 附近（暴露 {best_exposed * 1e3:.0f} ms），"
    f"比默认的 25 MiB 少暴露 {(plan.exposed_comm_s - best_exposed) * 1e3:.0f} ms。")

# %% [markdown]
# 这就是为什么 `bucket_cap_mb` 值得针对集群调一调，而不是永远用默认值。右图是默认配置下「梯度就绪」和「梯度已同步」两条累计曲线：
# 红线始终落后于绿线，反向结束（虚线）后剩下的那一段就是暴露的通信。

# %%
frameworks_x.ddp_bucket_figure(1.3e9, n_gpus=32, cluster=one_nic)

# %% [markdown]
# ## 4. DeepSpeed：ZeRO 配置与 batch 恒等式
#
# DeepSpeed 通过一个 JSON 文件（`--deepspeed_config ds_config.json`）控制 ZeRO、混合精度和梯度累积。它在启动时强制检查
#
# $$
# \texttt{train\_batch\_size} = \texttt{train\_micro\_batch\_size\_per\_gpu} \times \texttt{gradient\_accumulation\_steps} \times d_{\text{dp}},
# $$
#
# 其中 $d_{\text{dp}} = \text{world} / (t \cdot p)$ 是数据并行度（不是总卡数！）。这是最常见的 DeepSpeed 启动错误：从 8 卡调试环境搬到 1,024 卡时，
# 只改了卡数，没有同步改 GA，DeepSpeed 直接报错退出；或者反过来，为了「不报错」改了 `train_batch_size`，却悄悄把 global batch 放大了 128 倍。
# ZeRO 相关字段（DeepSpeed 官方 config-json 文档）：
#
# | 字段 | 含义 | 取值建议 |
# |---|---|---|
# | `zero_optimization.stage` | 0：不分片；1：分片优化器状态；2：再分片梯度；3：再分片参数 | 有流水线并行时只能 0/1 |
# | `overlap_comm` | 梯度 reduce 与反向计算重叠 | 开；代价是多占 bucket 大小的显存 |
# | `contiguous_gradients` | 把梯度拷进连续缓冲区，减少碎片 | 开 |
# | `reduce_bucket_size` / `allgather_bucket_size` | 每次 reduce / all-gather 的**元素数**（默认 5e8，不是字节） | 显存紧张时调小 |
# | `offload_optimizer` | 把优化器状态放到 CPU 或 NVMe（ZeRO-Offload） | 仅 stage 1–3；吃 PCIe 与 CPU 内存带宽 |
# | `bf16.enabled` | BF16 混合精度 | Ampere/Hopper 上首选，不需要 loss scaling |
#
# 同一个布局生成的配置如下，`deepspeed_config` 会在返回前自己校验恒等式：

# %%
# NBVAL_CHECK_OUTPUT
ds = frameworks.deepspeed_config(L)
print(frameworks.deepspeed_json(ds))
print(f"check: {ds['train_micro_batch_size_per_gpu']} x {ds['gradient_accumulation_steps']} x dp {L.dp} = "
      f"{ds['train_micro_batch_size_per_gpu'] * ds['gradient_accumulation_steps'] * L.dp}")

# %% [markdown]
# 如果把 dp 写错（例如误用总卡数 1,024），校验会在作业提交前就失败，并指出是哪个字段：

# %%
# NBVAL_CHECK_OUTPUT
try:
    frameworks.check_deepspeed_batch(ds, 1024)
except ValueError as err:
    print("ValueError:", err)

# %% [markdown]
# ### FSDP 与 ZeRO 的对应关系
#
# PyTorch 原生的 FSDP（Zhao et al. 2023，VLDB）实现的是同一族思想，名字不同。`ShardingStrategy` 与 ZeRO 的对应如下；
# 显存用第 7 章的模型（混合精度 Adam 每参数 16 字节）算出，通信量按 ZeRO 论文 §7：ZeRO-1/2 的 reduce-scatter + all-gather 与 DDP 的 all-reduce 等量（$2\Psi$），
# ZeRO-3 在前向和反向各 all-gather 一次参数、再 reduce-scatter 一次梯度，共 $3\Psi$，即 **1.5 倍**——这是**每个 micro-batch** 的量。梯度累积 $m$ 步时，DDP（`no_sync`）和 ZeRO-1 仍只同步一次，
# SHARD_GRAD_OP（ZeRO-2）每个 micro-batch reduce-scatter 一次，FULL_SHARD（ZeRO-3）每个 micro-batch 都 all-gather 两遍、reduce-scatter 一遍，
# 每步是 DDP 的 $1.5m$ 倍（表里 `sent/step, m=4` 一列，`frameworks.fsdp_vs_zero_table(..., micro_batches=4)`）。HYBRID_SHARD 在节点内做 ZeRO-3、节点间做 DDP，
# 跨网络的环只包含 dp/8 个 rank，是 FSDP 扩到上千卡时常用的折中。表里的「7B」按整 7.0e9 个参数算（16 字节/参数即 112 GB）；
# 第 7 章的 Llama-2 7B 实际是 67.4 亿参数，所以那里是 108 GB。

# %%
rows = frameworks.fsdp_vs_zero_table(7e9, 64, 8)
rows4 = frameworks.fsdp_vs_zero_table(7e9, 64, 8, micro_batches=4)
show_table([{"FSDP": r["fsdp"], "ZeRO": r["zero"], "sharded": r["sharded"], "states GB/GPU": round(r["states_gb"], 2),
             "comm vs DDP": r["comm_vs_ddp"], "sent GB/GPU/step": round(r["sent_gb_per_gpu"], 1),
             "sent/step, m=4": round(r4["sent_gb_per_gpu"], 1), "network ring ranks": r["network_ranks"]}
            for r, r4 in zip(rows, rows4)])

# %%
frameworks_x.zero_fsdp_figure(7e9, 64, 8)

# %% [markdown]
# ### FSDP2（`fully_shard`）里的同一张表
#
# PyTorch 2.6 起推荐的 FSDP2（`torch.distributed.fsdp.fully_shard`）不再有 `ShardingStrategy` 这个枚举，上表的四行换成了三个参数：
# 设备网格（`mesh`）的维数、`reshard_after_forward`，以及混合精度策略。它按参数在第 0 维切分（DTensor），每次对一个
# `fully_shard` 过的模块（通常是一个 Transformer block）做一次 all-gather——所以要**自下而上**地对每个 block 调用，最后再包根模块：
#
# ```python
# import torch
# from torch.distributed.device_mesh import init_device_mesh
# from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy
#
# mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)  # bf16 计算、fp32 归约梯度
# mesh = init_device_mesh("cuda", (world_size,))                 # 1 维网格：FULL_SHARD（ZeRO-3）
# # mesh = init_device_mesh("cuda", (n_nodes, 8), mesh_dim_names=("replicate", "shard"))  # 2 维网格：HSDP
# for block in model.layers:
#     fully_shard(block, mesh=mesh, mp_policy=mp, reshard_after_forward=True)
#     # reshard_after_forward=False：前向后保留完整参数、反向不再 all-gather（SHARD_GRAD_OP / ZeRO-2 的做法，多占显存）
#     # reshard_after_forward=8：前向后只「退」到节点内 8 份，反向的 all-gather 只走 NVLink（类似 ZeRO++ 的 hpZ）
# fully_shard(model, mesh=mesh, mp_policy=mp)
# optim = torch.optim.AdamW(model.parameters(), lr=3e-4)          # 优化器要在 fully_shard 之后、用分片后的参数创建
# model.set_requires_gradient_sync(False)  # 梯度累积的前 m-1 个 micro-batch：不 reduce-scatter（FSDP1 的 no_sync）
# ```
#
# 对照本章的通信模型：1 维网格加默认的 `reshard_after_forward=True` 就是上表的 FULL_SHARD——每个 micro-batch 前向、反向各 all-gather 一次参数、
# reduce-scatter 一次梯度；2 维网格是 HYBRID_SHARD，all-gather 和 reduce-scatter 只在 `shard` 维（一台服务器）里，跨节点只 all-reduce 梯度。
# 梯度累积时用 `set_requires_gradient_sync(False)` 可以省掉前 $m-1$ 次 reduce-scatter，代价是这段时间要存完整的（未切分的）梯度；
# 参数的 all-gather 省不掉，这正是 ZeRO-3 在窄网络上输掉的那部分（误区一）。`reduce_dtype=torch.float32` 是 Llama 3 的做法
# （论文 §3.3.2：梯度在 FP32 里 reduce-scatter），归约的字节数随之翻倍。
#
# ## 5. Megatron-LM：3D 并行参数从方案生成
#
# Megatron-LM 的 `pretrain_gpt.py` 不读 JSON，而是读命令行。并行相关的参数只有几个，但每个都有硬约束（第 8 章）：
#
# - `--tensor-model-parallel-size` $t$：必须整除注意力头数、KV 头数和 FFN 宽度，且 $t \le 8$（留在 NVLink 域内）；
# - `--pipeline-model-parallel-size` $p$：必须整除层数（等长 stage）；
# - 数据并行度**不是参数**：Megatron 用 $d = \text{WORLD\_SIZE} / (t \cdot p)$ 推出，所以 torchrun 的卡数必须是 $t \cdot p$ 的倍数；
# - `--micro-batch-size` $b$ 和 `--global-batch-size` $B$：每步每条流水线跑 $m = B / (d \cdot b)$ 个 micro-batch，气泡是 $(p-1)/m$；
# - `--sequence-parallel`、`--recompute-granularity selective`、`--use-distributed-optimizer`（Megatron 的 ZeRO-1）。
#
# 模型结构参数同样从模型定义生成（层数、隐藏维度、GQA 的 `--num-query-groups`、SwiGLU、RMSNorm、RoPE），避免「方案是 Llama，启动的却是 GPT」这类低级错误。
# 生成之后再**反向解析**一次，确认参数描述的正是方案里的布局——这是一个值得放进 CI 的检查：

# %%
# NBVAL_CHECK_OUTPUT
print(" ".join(meg_args))
back = frameworks.parse_megatron_args(meg_args, world_size=1024)
print(f"parsed back: dp={back.dp} tp={back.tp} pp={back.pp} mb={back.micro_batch} gb={back.global_batch} "
      f"sp={back.sp} recompute={back.recompute} zero={back.zero_stage} -> same as plan: {back == L}")

# %% [markdown]
# 下面的探索器把前几节串起来：选模型、GPU 数量和型号、global batch，它调用 `steptime.search_layouts` 找出最快的几个布局，
# 左图是每卡显存（红线为扣除 10% 余量后的可用 HBM），右图是估计的单步时间与 MFU；摘要里给出最佳布局对应的 Megatron 参数、
# torchrun 命令和 DeepSpeed JSON。试试 `llama3-8b` + 8 张卡：最佳方案是不切模型、用 ZeRO-2/3 的纯数据并行，而 Megatron-LM 的分布式优化器
# 只相当于 ZeRO-1，摘要会告诉你该换 DeepSpeed 或 FSDP；把 global batch 拉到 4096，最佳方案变成流水线加 ZeRO-2（PyTorch FSDP 支持），
# 而 DeepSpeed 的流水线引擎只接受 ZeRO-0/1，摘要同样会写明。
# 再试两件事：把 GPU 换成 `Ascend-910B`，摘要会警告估计的 MFU 超出了公开大规模训练的上沿（55%），而且这张卡没有实测的矩阵乘效率上限，
# 模型在这里是外推；选 `deepseek-v3` 或 `mixtral-8x7b`（MoE），搜索会把专家并行（ep）也排进去，最佳布局没用上专家并行时摘要会提醒。

# %%
explorer = frameworks_x.framework_explorer()
explorer

# %% [markdown]
# ### 5.1 三个框架怎么选：公开训练的证据与运维的代价
#
# 选框架不是比谁「更先进」，而是看模型规模、团队和运维能承受什么。先看公开训练报告里各框架达到的效率。各家报的不是同一个数：
# Megatron-LM 的论文报**每卡 TFLOP/s，含重计算的那遍前向**（硬件 FLOPs，HFU 口径，Narayanan et al. 2021 式 3）；
# Korthikanti et al. 2022、Llama 3、MegaScale 报 **MFU**（模型 FLOPs，不含重计算）。能换算的都换算成两个数并排放：
# 报的是哪一个，另一个就由同一次迭代的 FLOPs 之比算出（`published_runs.utilisation_pair`，内部用 `compute.mfu_cluster` 与
# `compute.hfu`；Megatron 全量重计算时 MFU ≈ HFU × 3/4）；来源没说重计算设置的，只给「报的数 ÷ 峰值」并标明：

# %%
# NBVAL_CHECK_OUTPUT
show_table(published_runs.utilisation_evidence())

# %% [markdown]
# 读这张表要小心口径：常被引用的「Megatron-LM 52%」是 HFU，换成 MFU 只有 39%；GPT-3 在 1,024 张 A100 上的 140 TFLOP/s
# 同理是 HFU 45%、MFU 34%。Korthikanti 用序列并行加选择性重计算，把 530B 的 MFU 做到 54.2%，此时 HFU 只比 MFU 高约 1 个点——
# 重计算几乎不花算力了。Llama 3 的数字是 MFU，而且 H100 的算力比 A100 高约三倍、网络只快两倍，同样的并行方式通信占比更大，
# 再加上 128K 长上下文（CP=16）的注意力开销，MFU 自然更低。按同一口径（MFU）比较，公开大规模训练的 MFU 范围是 34%–55%（第 4 章用同一个范围），各框架都落在这个区间里：
# **框架本身不是 MFU 的主要杠杆，并行布局、网络和通信重叠才是**（第 8、13、14 章）。选框架时更该比较的是它对你的模型结构的支持、
# 检查点与生态的兼容，以及团队有没有能力在它出问题时读懂它的源码。
#
# 几条经验由此而来：
#
# - **Megatron-LM（Megatron-Core）**：几十 B 以上的稠密模型、需要张量并行加流水线并行时，它仍是效率的标杆，MegaScale 这类生产系统也建在它之上。
#   代价是模型必须按它的结构来写（`GPTModel` 与 TransformerConfig），换一个新结构要改框架代码；检查点是它自己的分布式格式，
#   和 Hugging Face 之间要用转换脚本来回倒，转换本身就是一个需要测试的环节（层顺序、QKV 拼接方式、RoPE 的实现差异都会让转换后的模型「能跑但不对」）。
# - **DeepSpeed**：最大的好处是几乎不改模型代码——Hugging Face 的模型加一个 JSON 就能用 ZeRO，ZeRO-Offload/Infinity 让显存不够的团队也能训大模型。
#   BLOOM-176B 用的是 Megatron-DeepSpeed（两者的组合）在 384 张 A100 上训练。它的代价在于配置项多、版本间行为变化频繁，
#   ZeRO-3 在网络不够快时比预想的慢（误区一）。
# - **PyTorch FSDP**：原生、和 PyTorch 新特性（`torch.compile`、DCP 检查点、FSDP2 的逐参数分片）同步演进，Meta 训练 OPT 和 Llama 3 都以它做数据并行维度，
#   再在其上叠加张量、流水线和上下文并行。单纯的 FSDP 在千卡以上要用 HYBRID_SHARD 把分片限制在节点内，否则每一层的 all-gather 都要跨网络。
#
# 运维上还有两个常被忽略的维度。一是**故障恢复**：三者都能从分片检查点恢复，但「换一个并行布局恢复」（少了几台机器后用更小的 dp 继续）
# DCP 和 Megatron 的分布式检查点加载时就能按新布局重切，DeepSpeed 则要先用 `ds_to_universal.py` 把 ZeRO 分片转换成它的 Universal Checkpoint 格式再加载。二是**版本锁定**：
# 框架、PyTorch、CUDA、NCCL 四者的版本要一起锁进容器镜像（第 20 章），一次「顺手升级」可能让通信重叠失效、让检查点读不回来。
# 生产集群的惯例是每个大版本组合先在几十卡上跑一遍基准（吞吐、loss 曲线与上一版本逐步对齐），通过后才推到大作业。
#
# ## 6. 实操命令
#
# ```bash
# # 单机 8 卡 / 多机：每个节点运行同一条 torchrun（c10d rendezvous 托管在第一个节点）
# torchrun --nnodes=2 --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=node001:29500 --rdzv-id=job42 train.py
# python -m torch.distributed.run --help          # 所有启动参数（与 torchrun 相同）
#
# # DeepSpeed 自带启动器：hostfile 每行 "node001 slots=8"
# deepspeed --hostfile=hostfile --num_nodes=2 --num_gpus=8 train.py --deepspeed --deepspeed_config ds_config.json
#
# # Megatron-LM（在 srun 脚本里；$TP、$PP 取第 1 节搜索出的布局，上文生成的 sbatch 里已经填好）
# torchrun ... pretrain_gpt.py --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP \
#     --sequence-parallel --micro-batch-size 1 --global-batch-size 1536 --bf16 --log-throughput ...
#
# # 第一次多机启动时打开 NCCL 日志，确认走的是 IB/RoCE 而不是 Socket（第 15 章解析它的输出）
# NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET torchrun ... train.py 2>&1 | grep -E "NET/|Using network"
# sbatch gpt175b.sbatch && squeue -u $USER          # 提交与查看
# ```
#
# 训练跑起来之后，判断它「健不健康」的第一手数据是 Megatron-LM 每 `--log-interval` 步打印的一行日志。下面是一个 GPT-3 175B 作业
# 在 512 卡（dp=4）和 1,024 卡（dp=8）上的日志样例。注意它用的**不是**第 1 节搜索出的最佳布局，而是一个按 Megatron-LM 论文的思路手工定的 3D 布局：
# tp=4 留在节点内、pp=32 把 96 层切得很深（这种深流水线正是论文里千卡级配置的风格），dp 随卡数变。第 6 节的气泡分析也针对这个 $p = 32$ 的布局。
# 日志格式与 Megatron-LM `megatron/training/training.py` 的 `training_log` 一致（打开 `--log-throughput`），
# 数值是**示意性的**（时间为虚构，TFLOP/s 按 Megatron 的 FLOPs 公式由时间算出，二者自洽）。`megatron_log.parse_megatron_log` 解析它：

# %%
print(frameworks.MEGATRON_LOG_SAMPLE_512.splitlines()[0][:160] + " ...")

# %%
# NBVAL_CHECK_OUTPUT
h100 = hardware.gpu("H100-SXM")
run512 = frameworks.run_throughput(frameworks.MEGATRON_LOG_SAMPLE_512, 512, spec.seq_len)
run1024 = frameworks.run_throughput(megatron_log.MEGATRON_LOG_SAMPLE, 1024, spec.seq_len)
for r in (run512, run1024):
    print(f"{r.n_gpus:5d} GPUs: step {r.step_s:6.2f} s, {r.samples_per_s:6.1f} samples/s, "
          f"{r.tokens_per_s / 1e3:6.1f} k tokens/s, {r.tflops_per_gpu:.1f} TFLOP/s/GPU -> MFU {r.mfu:.1%}")
eff = frameworks.scaling_efficiency_from_logs(run512, run1024)
print(f"scaling efficiency 512 -> 1024 GPUs: {eff:.1%}")

# %% [markdown]
# 扩展效率定义为 $\eta = \dfrac{T_{1024}/1024}{T_{512}/512}$（第 1 章的定义，以 512 卡为基准），见上一格。
# global batch 固定为 1536，卡数翻倍后 dp 从 4 变成 8，每条流水线的 micro-batch 数 $m$ 从 384 降到 192，气泡随之变大。
# 气泡有两种常见的写法，别混用：Narayanan 等（2021 §2.2.1）的 $(p-1)/m$ 是气泡**相对理想（无气泡）时间**的比例，
# $(p-1)/(m+p-1)$ 是气泡**占整步时间**的比例（`parallel.pipeline_bubble` 与 `parallel.pipeline_bubble_fraction`）。下面两种都打印：

# %%
# NBVAL_CHECK_OUTPUT
bub = {dp: parallel.pipeline_bubble_fraction(32, 1536 // dp) for dp in (4, 8)}
for dp, b in bub.items():
    print(f"dp={dp}: m={1536 // dp}, bubble (p-1)/m = {parallel.pipeline_bubble(32, 1536 // dp):.1%} of the ideal time, "
          f"(p-1)/(m+p-1) = {b:.1%} of the step")
print(f"bubble model predicts per-GPU throughput -{1 - (1 - bub[8]) / (1 - bub[4]):.1%}; sample logs show -{1 - eff:.1%}")

# %% [markdown]
# 气泡占整步的份额几乎翻倍；只看气泡，每卡吞吐的降幅应是示意日志里实际降幅的两倍多（上一格最后一行）。模型与实测之间的差距正是你在真实集群上要追查的：
# 把测得的 η 拆到气泡、DP 通信和其他开销上（第 8 章的 `estimate_layout` 给出每一项的估计），再决定下一步调什么——
# 例如用交错调度（`--num-layers-per-virtual-pipeline-stage`，$v=2$）把气泡减半，或者保持 $m$ 不变而增大 global batch（见误区三）。
#
# ## 7. 常见误区
#
# ### 误区一：「ZeRO-3 总是最省」
#
# ZeRO-3 省的是**显存**，付出的是**通信**，而且是每个 micro-batch 都付。用第 8 章的单步时间模型（`steptime.estimate_layout`，
# 通信经 `labutil.cluster` 计时）比较 64 张 H100 上的纯数据并行：每步 256 条 4,096 token 的序列（每卡 4 条、micro-batch 1，即每步 4 个 micro-batch），
# 两张网：8 台标准 DGX H100（每台 8 块 400G 网卡），和同样的服务器每台只配 1 块 400G 网卡：

# %%
# NBVAL_CHECK_OUTPUT
zero_steps = {}
for name in ("llama2-7b", "llama2-70b"):
    m_spec = models.transformer(name)
    rc = "full" if name == "llama2-70b" else "none"
    for net, c in (("8x 400G/node", dgx.with_nodes(8)), ("1x 400G/node", one_nic.with_nodes(8))):
        parts, step = [], {}
        for z in (1, 2, 3):
            e = steptime.estimate_layout(m_spec, Layout(64, 1, 1, 1, 256, zero_stage=z, recompute=rc), 64, "H100-SXM",
                                         cluster=c)
            step[z] = zero_steps[(name, net[:2], z)] = e.step_s
            parts.append(f"ZeRO-{z} {e.step_s:5.2f} s" + ("" if e.fits else " (OOM)"))
        print(f"{name:10s} {net}: " + ", ".join(parts) + f"; ZeRO-3/ZeRO-2 = {step[3] / step[2]:.2f}x")

# %% [markdown]
# 三种情形：
#
# - **ZeRO-3 划算**：70B 模型在 64 张卡上只有 ZeRO-3 放得下（ZeRO-1/2 的行标着 OOM），而且在 8 条轨道的 DGX 上它多出的通信全藏在计算后面。
# - **ZeRO-3 没必要**：7B 模型 ZeRO-2 就放得下；网络够宽时三者一样快，ZeRO-3 只是多省显存。
# - **ZeRO-3 输**：同样的 7B，换成每台只有一块网卡，ZeRO-3 每个 micro-batch 都要跨网络 all-gather 两遍整个模型（数字见下一格）。
#   70B 只能用 ZeRO-3 时，这张网同样拖慢它——这时应该改用张量并行把模型切在节点内（第 8 章），或用 HYBRID_SHARD 把分片限制在节点内。

# %%
# NBVAL_CHECK_OUTPUT
z7 = {net: (zero_steps[("llama2-7b", net, 2)], zero_steps[("llama2-7b", net, 3)]) for net in ("8x", "1x")}
z70 = {net: zero_steps[("llama2-70b", net, 3)] for net in ("8x", "1x")}
MarkdownTable(f"每台一块网卡时，7B 的 ZeRO-3 单步 {z7['1x'][1]:.2f} s，是 ZeRO-2（{z7['1x'][0]:.2f} s）的 {z7['1x'][1] / z7['1x'][0]:.1f} 倍，"
              f"而在 8 条轨道上两者只差 {abs(z7['8x'][1] / z7['8x'][0] - 1):.0%}；70B 的 ZeRO-3 在单网卡上要 {z70['1x']:.1f} s 一步，"
              f"是 8 条轨道上（{z70['8x']:.1f} s）的 {z70['1x'] / z70['8x']:.1f} 倍。")

# %% [markdown]
#
# 所以先看放不放得下，再按第 8 章的规则算通信藏不藏得住：每卡每个 micro-batch 的 token 数要不少于「每卡算力 ÷ 每卡分到的通信带宽」。
# 单机微调时 ZeRO-3 走 NVLink、几乎没有代价；多机预训练时才要认真算。
#
# ### 误区二：「梯度累积是免费的」
#
# 梯度累积（GA）用多个 micro-step 凑一个大 batch。如果在前 GA−1 个 micro-step 上没有用 `model.no_sync()`，DDP 会在**每个** micro-step 的反向后都做一次
# 完整的梯度 all-reduce：

# %%
# NBVAL_CHECK_OUTPUT
for no_sync in (True, False):
    a = frameworks.grad_accumulation_comm(plan, 8, no_sync=no_sync)
    print(f"GA=8, no_sync={str(no_sync):<5}: {a.allreduces} all-reduces, {a.bytes_sent_per_gpu / 1e9:5.1f} GB sent per GPU, "
          f"exposed {a.exposed_comm_s * 1e3:4.0f} ms per optimizer step")

# %%
# NBVAL_CHECK_OUTPUT
good, bad = (frameworks.grad_accumulation_comm(plan, 8, no_sync=ns) for ns in (True, False))
MarkdownTable(f"少了一个 `no_sync()`，同样的训练多发 {bad.bytes_sent_per_gpu / good.bytes_sent_per_gpu:.0f} 倍的数据"
              f"（{bad.bytes_sent_per_gpu / 1e9:.1f} GB 对 {good.bytes_sent_per_gpu / 1e9:.1f} GB），暴露的通信也从 "
              f"{good.exposed_comm_s * 1e3:.0f} ms 变成 {bad.exposed_comm_s * 1e3:.0f} ms（第 3 节每节点一张 400G 网卡的集群）。")

# %% [markdown]
# DeepSpeed 和 Megatron-LM 内部已经处理了这个问题，但手写的 DDP 训练循环里它是最常见的性能 bug 之一。
#
# ### 误区三：「加卡后把 global batch 跟着调大，不影响收敛」
#
# 加卡最省事的做法是保持 micro-batch 和 GA 不变，让 global batch 随 dp 线性增大。可是每步的 token 数随之翻倍：

# %%
# NBVAL_CHECK_OUTPUT
tokens_budget = 300e9           # GPT-3 training tokens (Brown et al. 2020)
for gb in (1536, 3072, 6144):
    tps = frameworks.tokens_per_step(gb, spec.seq_len)
    print(f"global batch {gb:5d}: {tps / 1e6:5.2f} M tokens/step, {tokens_budget / tps:8.0f} optimizer steps for 300B tokens")

# %% [markdown]
# GPT-3 175B 论文用的 batch 是 3.2M tokens（1536 × 2048 ≈ 3.1M）。McCandlish et al. 2018（"An Empirical Model of Large-Batch Training"）指出，
# batch 超过**临界 batch size** 后，再加倍 batch 几乎不再减少达到同样 loss 所需的步数——也就是说需要更多的 token（更多 GPU·小时）才能达到同一个效果，
# 学习率和 warmup 也要重新调。反过来，固定 global batch 加卡又会像上一节那样让 $m$ 变小、气泡变大。加卡从来不只是改一个 `--nnodes`，
# 两条路的代价都要算出来再选。
#
# ## 8. 练习
#
# 把答案填进 `answer_k`，运行单元格判分；卡住时调用 `exercise("ch24.k").hint(1)`。
#
# **练习 1**：GPT-3 175B 在 1,024 张卡上用 tp=4、pp=32、micro-batch 2、global batch 1536，`ds_config.json` 里的 `gradient_accumulation_steps` 应是多少？

# %%
answer_1 = None
exercise("ch24.1").check(answer_1)

# %% [markdown]
# **练习 2**：PyTorch DDP 训练一个 1.3B 参数、fp32 梯度的模型，默认桶配置（1 MiB 首桶，之后 25 MiB）下，一次反向要 all-reduce 多少个桶？

# %%
answer_2 = None
exercise("ch24.2").check(answer_2)

# %% [markdown]
# **练习 3**：7B 模型用 FSDP FULL_SHARD（ZeRO-3）在 64 张卡上训练，16 位梯度，每张卡每步发送多少 GB？

# %%
answer_3 = None
exercise("ch24.3").check(answer_3)

# %% [markdown]
# **练习 4**：用本章两份 Megatron 日志样例，1,024 卡相对 512 卡的扩展效率是多少（%）？

# %%
answer_4 = None
exercise("ch24.4").check(answer_4)

# %% [markdown]
# **练习 5**：1,024 卡日志里每卡 460.4 TFLOP/s（中位数），H100 SXM 的 MFU 是多少（%）？

# %%
answer_5 = None
exercise("ch24.5").check(answer_5)

# %% [markdown]
# **练习 6（判断题）**：7B 模型、Adam、64 张卡（每节点 8 张），模型状态每卡最多 40 GB。哪种 FSDP 切分策略既放得下、每卡发送的数据又最少：'NO_SHARD'、'SHARD_GRAD_OP'、'FULL_SHARD' 还是 'HYBRID_SHARD'？（也可以写 ZeRO-2 这类名字）

# %%
answer_6 = None  # FSDP 策略名
exercise("ch24.6").check(answer_6)

# %% [markdown]
# ## 9. 小结
#
# - Slurm 每节点一个任务，torchrun 每节点 fork 每卡一个进程，c10d rendezvous 把它们连成 WORLD_SIZE = nnodes × nproc_per_node。
# - DDP 用梯度分桶把 all-reduce 藏进反向传播；桶太小付延迟，桶太大没法重叠，`bucket_cap_mb` 值得调。
# - DeepSpeed 的 batch 恒等式用的是 dp 而不是总卡数；ZeRO-3 省显存，但每个 micro-batch 的通信就是 DDP 的 1.5 倍，网络窄时它输给 ZeRO-1/2。
# - Megatron-LM 的 dp 由 WORLD_SIZE/(tp·pp) 推出；参数应从方案生成，并反向解析核对。
# - 扩展效率从两次不同卡数的日志算出，再拆到气泡、通信与其他开销上。
# - 公开大规模训练的 MFU 范围是 34%–55%，各框架都落在其中：选框架看模型结构支持、检查点与生态兼容、换布局恢复的能力和团队读源码的能力；框架、PyTorch、CUDA、NCCL 的版本组合要一起锁定、先小规模验证再推广。
#
# ## 参考资料
#
# - D. Narayanan et al., *Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM*, SC 2021, Table 1 与 §5.1（数据见 `labutil/published_runs.py`）。
# - S. Zhang et al., *OPT: Open Pre-trained Transformer Language Models*, arXiv:2205.01068（992 张 A100、FSDP + Megatron 张量并行，每卡最高 147 TFLOP/s）。
# - A. Grattafiori et al. (Meta), *The Llama 3 Herd of Models*, arXiv:2407.21783, §3.3.2 与 Table 4（FSDP + TP/PP/CP，BF16 MFU 38%–43%）。
# - X. Lian et al., *Universal Checkpointing: Efficient and Flexible Checkpointing for Large Scale Distributed Training*, arXiv:2406.18820（DeepSpeed `ds_to_universal.py`，换 TP/PP/DP 恢复）。
# - Z. Jiang et al. (ByteDance), *MegaScale*, NSDI 2024（12,288 GPU 上 175B 模型 55.2% MFU，基于 Megatron-LM）；BigScience, *BLOOM: A 176B-Parameter Open-Access Multilingual Language Model*, arXiv:2211.05100（Megatron-DeepSpeed，384 张 A100 80GB）。
# - 课程种子材料：《AI训练推理集群》课程导入（场景一：Slurm + PyTorch + Megatron-LM/DeepSpeed；分布式框架 PyTorch DDP/DeepSpeed）。
# - S. Li et al., *PyTorch Distributed: Experiences on Accelerating Data Parallel Training*, VLDB 2020, §3.2.3–3.2.4（梯度分桶、计算通信重叠）；PyTorch 文档 `DistributedDataParallel`（`bucket_cap_mb=25`、`no_sync`）；`torch.distributed._DEFAULT_FIRST_BUCKET_BYTES` = 1 MiB。
# - PyTorch 文档 *torchrun (Elastic Launch)*：`--nnodes`、`--nproc-per-node`、`--rdzv-backend=c10d`、`--rdzv-endpoint`、`--rdzv-id`、`--max-restarts`。
# - DeepSpeed 文档 *DeepSpeed Configuration JSON*（deepspeed.ai/docs/config-json）：batch 字段与恒等式、`zero_optimization` 各字段及默认值（bucket 5e8 元素）、`offload_optimizer`；*Pipeline Parallelism*：流水线并行不支持 ZeRO-2/3。
# - S. Rajbhandari et al., *ZeRO: Memory Optimizations Toward Training Trillion Parameter Models*, SC 2020, §5（各 stage 显存）、§7（通信量 2Ψ 与 3Ψ）。
# - Y. Zhao et al., *PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel*, VLDB 2023, §3.2；PyTorch 文档 `torch.distributed.fsdp.ShardingStrategy`。
# - PyTorch 文档 *torch.distributed.fsdp.fully_shard*（FSDP2：按参数 dim-0 分片；1 维网格 FSDP、2 维网格 HSDP；`reshard_after_forward` 取 True / False / 整数；
#   `MixedPrecisionPolicy`；`set_requires_gradient_sync`）与 `torch.distributed.device_mesh.init_device_mesh`；Llama 3 论文 §3.3.2（FP32 梯度 reduce-scatter）。
# - D. Narayanan et al., *Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM*, SC 2021：3D 并行、气泡 $(p-1)/m$、FLOPs 公式；Megatron-LM `megatron/training/arguments.py`（参数名）与 `training.py`（日志格式）。
# - T. Brown et al., *Language Models are Few-Shot Learners*, 2020, Table 2.1：GPT-3 175B batch 3.2M tokens、300B 训练 tokens。
# - S. McCandlish et al., *An Empirical Model of Large-Batch Training*, 2018：临界 batch size。
# - NVIDIA H100 Tensor Core GPU Datasheet：BF16 稠密峰值 989.4 TFLOP/s（MFU 的分母）。
# - A. Chowdhery et al., *PaLM*, 2022, Appendix B：MFU 的定义。
