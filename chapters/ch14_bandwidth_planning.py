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
# # 第14章 带宽规划与计算通信重叠
#
# > 模块三「高性能网络」的第 4 章。前置：第 4 章（6·N·D 与 MFU）、第 13 章（α-β 模型、ring / tree / 分层）。
# > 本章把第 13 章的通信模型和第 4 章的计算模型接在一起，回答采购时最常被问错的问题：**网络要多快？**
# > 第 22 章会用 nccl-tests 验收这里算出的带宽，第 24 章在真实框架（DDP、DeepSpeed）里测量扩展效率，第 30 章把它写进千卡方案。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 从模型参数量算出数据并行每步的梯度通信量，再由 α-β 模型算出同步时间；
# - 用 $t_{\text{step}} = t_{\text{comp}} + \max(0,\ t_{\text{comm}} - o\cdot t_{\text{comp}})$ 算出通信占比、GPU 利用率与扩展效率，并说清楚重叠比例 $o$ 的上限从哪里来；
# - 复现「8 卡 H800 服务器只配 25 Gbps 以太网，GPU 利用率不足 30%」，并**反推**达到目标利用率所需的网络带宽；
# - 解释「千卡集群扩展效率 70% 已属优秀」「通信开销随规模增长」「超过 32 张卡后网络往往成为瓶颈」这三句话在模型里各对应哪一项。

# %%
from labutil.notebook import setup, MarkdownTable
from labutil import comm, compute, dp, facts, hardware, models
from labutil.cluster import Cluster
from labutil.explore import comm as comm_x
from labutil.parsers.nccl_tests import parse_nccl_tests
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 第一步：估算每一步要同步多少字节
#
# 数据并行（DP）的每张卡都有一份完整的模型，各自算一批数据的梯度，然后用 all-reduce 求平均，再各自做同样的参数更新。
# 所以每个优化器步（optimizer step）的通信量由参数量决定：
#
# $$S_{\text{grad}} = N_{\text{params}} \times b_{\text{grad}}$$
#
# $b_{\text{grad}}$ 是每个梯度的字节数：BF16/FP16 为 2，FP32 为 4。ring all-reduce 下每张卡实际发出 $2\frac{n-1}{n}S_{\text{grad}}$ 字节（第 13 章）。
# ZeRO-1/2（以及 FSDP 的 `SHARD_GRAD_OP`）把 all-reduce 拆成 reduce-scatter + all-gather，每卡的通信量仍是 $2\frac{n-1}{n}S$——
# ZeRO 论文（Rajbhandari 等 2020，§7.2）明确说 ZeRO-2 的通信量与基线 DP 相同，都是 $2\Psi$。ZeRO-3 和 FSDP 的 `FULL_SHARD`
# 连参数也切开，反向时要再 all-gather 一次参数，通信量是 $3\Psi$，即 1.5 倍（同一论文 §7.3；第 7、24 章）。
# 也就是说，下面的结论对「用 ZeRO-1/2 把 7B 模型塞进 80 GB 显存」的训练原样成立，对 ZeRO-3 要再乘 1.5。
#
# $b_{\text{grad}}$ 取 2 还是 4，要看框架怎么配，而且常常是 4：PyTorch DDP 配 `torch.autocast` 做混合精度时，参数和梯度都留在 FP32，
# all-reduce 的就是 4 字节的梯度，除非注册 `bf16_compress_hook` 这类通信钩子；Megatron-LM 在 BF16 训练时默认把梯度的累加和
# all-reduce 放在 FP32（`--accumulate-allreduce-grads-in-fp32`，BF16 下自动打开）；Llama 3 也是在 FP32 里对梯度做 reduce-scatter
# （论文 §3.3.2）。本章按 BF16（2 字节）算，是**乐观**的一侧——FP32 梯度时通信量和同步时间都翻倍（下一格最后一列）。

# %%
# NBVAL_CHECK_OUTPUT
grad_gb = {}
for name in ("llama2-7b", "llama2-13b", "llama3-8b", "llama2-70b"):
    p = models.transformer(name).params()
    s = comm.gradient_bytes(p, 2)
    grad_gb[name] = s / 1e9
    print(f"{name:11s} {p / 1e9:6.2f}B params -> bf16 gradient {s / 1e9:7.2f} GB/step, "
          f"each of 32 GPUs sends {comm.bytes_sent_per_rank('all_reduce', s, 32) / 1e9:7.2f} GB (flat ring); "
          f"fp32 gradient {comm.gradient_bytes(p, 4) / 1e9:7.2f} GB")
MarkdownTable(f"一个 7B 模型（目录里的 Llama-2-7B），每一步就要同步 {grad_gb['llama2-7b']:.1f} GB 的 BF16 梯度，"
              f"FP32 时是 {2 * grad_gb['llama2-7b']:.1f} GB。")

# %% [markdown]
# 种子课程说「千卡集群每步通信数据量可达数百 MB」：用了张量并行、流水线并行之后，
# 每张卡只持有一部分参数，数据并行要同步的只是这部分的梯度，量随之下降（第 8 章会按并行布局算出每种通信的字节数）；
# 纯数据并行时，它就是整份梯度。
#
# ## 2. 第二步：算出每步的计算时间
#
# 第 4 章的 $6ND$ 公式（Kaplan 等 2020，§2.1）给出每个 token 的训练 FLOPs 约为 $6N$。若每张卡每步处理 $T$ 个 token（micro-batch × 序列长度 × 梯度累积步数），
# 在峰值 $P$、MFU 为 $u$ 的 GPU 上：
#
# $$t_{\text{comp}} = \frac{6\,N\,T}{P\cdot u}$$
#
# 本章的基准场景（都是可以在探索器里改的假设，不是种子课程给出的数）：Llama-2-7B（目录预置，6.74B 参数），
# 每卡每步 4 条 4,096 token 的序列（$T = 16{,}384$），MFU 0.45（第 1 章：有效算力通常是峰值的 40%–70%），
# GPU 为 H800 SXM（BF16 稠密峰值 989.4 TFLOP/s，NVLink 400 GB/s 双向）。
#
# 把两个公式相除会发现一件常被忽略的事：对数据并行，
#
# $$\frac{t_{\text{comm}}}{t_{\text{comp}}} \approx \frac{2\frac{n-1}{n}\cdot 2N / B_{\text{bus}}}{6NT/(P u)} = \frac{2\frac{n-1}{n}\, P\, u}{3\,T\,B_{\text{bus}}}$$
#
# 参数量 $N$ 消掉了！（$B_{\text{bus}}$ 是跨服务器 all-reduce 能达到的 busbw：NCCL 每条环经过一台服务器时穿过它的一块网卡，
# 所以是整台服务器的网卡带宽，再受 NVLink 环的上限约束，见第 3 节；$n$ 是 GPU 数。）
# 决定通信占比的是**每卡每步的 token 数**、**GPU 有多快**和**网卡有多快**，而不是模型有多大。GPU 越快，同样的网络下利用率反而越低。
#
# **这个约分只对稠密模型成立。** 混合专家（MoE）模型每个 token 只经过 top-k 个专家：计算量按**激活参数** $N_{\text{act}}$ 算
# （DeepSeek-V3 是 671B 里的约 37.6B），梯度却要按**被 all-reduce 的参数**算。纯数据并行时每个 rank 都持有全部专家，
# 要同步的是全部 $N_{\text{total}}$；用了专家并行（EP）后，专家的梯度只在持有同一批专家的 rank 之间同步（专家数据并行组，
# Megatron-LM 与 DeepSpeed-MoE 的做法），稠密部分仍在全部 rank 之间同步。于是比值多了一个 $N_{\text{total}}/N_{\text{act}}$ 的因子：

# %%
# NBVAL_CHECK_OUTPUT
h800 = hardware.gpu("H800-SXM")
nvl = comm.nvlink_per_direction_gbs("H800-SXM")
params_7b = models.transformer("llama2-7b").params()
compute_s = compute.dense_compute_time_s(params_7b, 16384, h800.bf16_tflops, 0.45)
print(f"H800 BF16 peak {h800.bf16_tflops:.1f} TFLOP/s, NVLink {h800.nvlink_gbs:.0f} GB/s bidirectional -> {nvl:.0f} GB/s per direction")
print(f"compute per step: 6 x {params_7b / 1e9:.2f}e9 x 16384 / ({h800.bf16_tflops:.1f}e12 x 0.45) = {compute_s:.3f} s")
for name in ("llama2-7b", "mixtral-8x7b", "deepseek-v3"):
    spec = models.transformer(name)
    print(f"{name:12s} total {spec.params() / 1e9:6.1f}B, active {spec.active_params() / 1e9:5.1f}B per token -> "
          f"sync/compute ratio x{spec.params() / spec.active_params():4.1f} the dense model's (pure DP, no EP)")

# %% [markdown]
# ## 3. 第三步：计算与通信的重叠
#
# 一步训练的时间并不是「计算 + 通信」那么简单。PyTorch DDP 把梯度按 25 MiB 分桶（`bucket_cap_mb=25`），
# 反向传播算完一个桶就立刻对它发起 all-reduce，与剩下的反向计算并行（Li 等 2020，*PyTorch Distributed*，VLDB，§3.2.3）。
# 设 $o \in [0, 1]$ 为计算时间中可以用来掩盖通信的比例，则
#
# $$t_{\text{step}} = t_{\text{comp}} + \max\big(0,\ t_{\text{comm}} - o\cdot t_{\text{comp}}\big)$$
#
# $$\text{通信占比} = \frac{t_{\text{step}} - t_{\text{comp}}}{t_{\text{step}}},\qquad \text{GPU 利用率} = \frac{t_{\text{comp}}}{t_{\text{step}}}$$
#
# 这里的「GPU 利用率」是 GPU 在一步中**在计算**的时间比例（计算阶段本身的效率由 MFU 描述，两者相乘才是峰值的占比）。
# $o$ 的上限由训练流程决定：前向传播时还没有梯度可发，能重叠的只有反向传播，而反向约占 $6N$ 里的 $4N$，即 $o \le 2/3$；
# 最后一个桶要等反向全部结束才能发，实际还要再低一些。本章用 $o = 0$（完全不重叠，最坏情况）和 $o = 2/3$（理想上限）两档来夹住真实值。
#
# 同步时间来自课程统一的集群模型 `labutil.cluster`（第 13 章）：NCCL 按「轨道」（rail）建环，每条环经过一台服务器时，
# 在服务器内走 NVLink、离开服务器时走一块网卡，所以跨服务器的 busbw 上限是
# $\min(\text{NVLink 环},\ \text{整台服务器的网卡} \times 0.96)$——0.96 是 NCCL 在网卡上能拿到的线速比例
# （NVIDIA 的 S. Jeaugey：每块 200G 网卡约 24 GB/s）。H800 的 NVLink 环取 160 GB/s：DeepSeek-V3 报告写的是
# 「NVLink offers a bandwidth of 160 GB/s」，作者在 issue 里说明那是单向实测；把它当作 NCCL 环在 8 卡 H800 上的 busbw 是**课程的假设**
# （`labutil/data/systems.toml` 里写明了）。每个 25 MiB 的桶都是一次独立的 all-reduce，付一次延迟；集群模型照 NCCL 自己的调优模型
# （`src/graph/tuning.cc`，NCCL 2.30.7，第 15 章）为每个桶在 ring / tree / NVLS-Tree 和 LL / LL128 / Simple 三种协议里挑最快的一对：
# 环的延迟里，服务器内的每一跳按 NVLink 计（Simple 协议 3.4 µs），只有 $2(\text{节点数} - 1)$ 跳按网络计（14 µs）。
#
# ## 4. 种子 003 的案例：8 卡 H800 + 25 Gbps 以太网
#
# 种子课程的误区一：「购买了 8 张 H800，却只配置了 25Gbps 以太网。在数据并行训练中，每步迭代的梯度同步时间将超过计算时间，
# 导致 GPU 利用率不足 30%。」我们把它具体化为 4 台 8 卡 H800 服务器（32 张卡）、每台一个 25 GbE 口
# （`Cluster.scenario("one-25gbe-port-per-server")`，旧名 `Cluster.seed003()`，定义在 `labutil/data/scenarios.toml`，全课程只写这一次）——一台服务器内部有 NVLink，
# 网络的问题只在跨服务器时出现——并和同样服务器配 8 × 400G InfiniBand（每卡一块 ConnectX-7，即 DGX/HGX 的标准配置）对比：

# %%
# NBVAL_CHECK_OUTPUT
print(Cluster.seed003().describe())
print(f"seed 003 GPU utilisation: {facts.value('seed003_utilisation'):.1%}; "
      f"seed 003 gradient sync: {facts.value('seed003_sync_s'):.2f} s (labutil.facts)")
for ov in (0.0, 2 / 3):
    print(f"overlap = {ov:.2f}")
    for r in comm_x.seed003_rows(overlap=ov):
        print(f"  {r['config']:12s} {r['server_gbps']:5.0f} Gbit/s/server: compute {r['compute_s']:.2f} s, sync {r['sync_s']:5.2f} s, "
              f"exposed {r['exposed_s']:5.2f} s -> GPU utilisation {r['utilisation']:5.1%}")

# %% [markdown]
# 结论和种子课程一致，而且有了具体的数（下面这段文字由模型的输出直接生成）：

# %%
# NBVAL_CHECK_OUTPUT
rows0, rows1 = comm_x.seed003_rows(overlap=0.0), comm_x.seed003_rows(overlap=2 / 3)
one, best = rows0[0], rows0[-1]
MarkdownTable(
    f"- 4 台 8 卡 H800、每台一个 25 GbE 口时，梯度同步要 {one['sync_s']:.2f} s，是计算（{one['compute_s']:.2f} s）的 "
    f"{one['sync_s'] / one['compute_s']:.0f} 倍；GPU 利用率 {one['utilisation']:.1%}，即使把反向传播全部用来掩盖通信也只有 "
    f"{rows1[0]['utilisation']:.1%}——**不足 30%**。跨服务器的 busbw 只有 25/8 × 0.96 = "
    f"{Cluster.seed003().expected_busbw_gbs(algo='ring'):.1f} GB/s。\n"
    f"- 同样的服务器配 8 × 400G IB，同步降到 {best['sync_s']:.2f} s，利用率 {best['utilisation']:.0%}；能重叠时就是 "
    f"{rows1[-1]['utilisation']:.0%}。此时的瓶颈已经是 H800 的 NVLink（环 160 GB/s），而不是 8 块网卡（8 × 48 = 384 GB/s）。\n"
    f"- 双口 25 GbE（50 Gbit/s）不重叠只有 {rows0[1]['utilisation']:.0%}，100 GbE 也只有 {rows0[2]['utilisation']:.0%}："
    "对 H800 这样的 GPU，「万兆、25G 够用」的直觉差了一个数量级。")

# %%
comm_x.seed003_figure(overlaps=(0.0, 2 / 3))

# %% [markdown]
# ## 5. 反推：要达到目标利用率，网络需要多快？
#
# 种子课程给出的正确做法是「先估算通信量（梯度大小 × 参数数量），再反推所需网络带宽」。把第 3 节的公式倒过来：
# 目标利用率 $U$ 允许的暴露通信是 $t_{\text{comp}}(1/U - 1)$，加上可重叠的部分，通信预算为
#
# $$C = t_{\text{comp}}\Big(\frac{1}{U} - 1\Big) + o\cdot t_{\text{comp}}$$
#
# 同步时间随网卡带宽单调下降（带宽项约为 $2S/B_{\text{bus}}$，再加上与网卡无关的延迟项），所以只要找到让同步时间恰好等于 $C$ 的网卡速率
# （`dp.required_bandwidth_gbps` 在对数网格上逐次逼近，用的是同一个集群模型）。如果延迟项和 NVLink 上限本身就超过 $C$，
# 再快的网卡也救不了，函数会直接报错并告诉你最高能达到多少。

# %%
# NBVAL_CHECK_OUTPUT
for ov in (0.0, 2 / 3):
    for target in (0.3, 0.5, 0.7, 0.85):
        try:
            gbps = dp.required_bandwidth_gbps(params_7b, 32, compute_s=compute_s, target_utilisation=target,
                                              overlap=ov, cluster=Cluster.seed003())
            print(f"overlap {ov:.2f}, target {target:.0%}: >= {gbps:7.0f} Gbit/s per server ({gbps / 8:6.1f} per GPU)")
        except ValueError as exc:
            print(f"overlap {ov:.2f}, target {target:.0%}: unreachable ({str(exc).split(': ')[-1]})")

# %% [markdown]
# 不重叠时，要 70% 的利用率，每台服务器大约需要一块 400G 网卡的带宽；要 85% 需要两三块 400G 网卡的带宽；
# DGX/HGX 的 8 × 400G（3.2 Tbit/s）还要同时承担流水线并行、上下文并行、MoE 的专家并行（all-to-all）和多作业共享
# （张量并行一般留在服务器内的 NVLink 上），留足了余量。能重叠到 2/3 时，需求降到几分之一
# （具体数字见上面的输出）。这些数字和第 2 节的比值公式一致：
# 它们与（稠密）模型的大小无关，但和每卡每步的 token 数成反比。下图对同一个 7B 模型画出三种 token 数下利用率随服务器带宽的变化：

# %%
comm_x.utilisation_vs_bandwidth_figure(model="llama2-7b", gpu="H800-SXM", n_gpus=32, tokens_choices=(4096, 16384, 65536))

# %% [markdown]
# 每卡每步 token 越多（更大的 micro-batch 或更多的梯度累积步），计算越长，同样的网卡能掩盖越多通信——
# 这是在网络受限时最便宜的「调参」手段，代价是全局 batch 变大、可能影响收敛（第 24 章）。
#
# ## 6. 扩展效率：从 8 卡到 8,192 卡
#
# 扩展效率定义为 $N$ 卡吞吐与 $N$ 倍单卡吞吐之比（Horovod 论文的用法）。每卡 batch 固定（弱扩展）时，单卡不需要通信，
# 所以在我们的模型里 $\eta(N) = t_{\text{comp}} / t_{\text{step}}(N)$，和 GPU 利用率是同一个数。
# 下图在 $o = 0$（不重叠）下画出四种网络配置的曲线（`NCCL_ALGO=Ring` 只允许环，但 NCCL 仍为每个桶在 LL / LL128 / Simple
# 三种协议里挑最快的；「auto」是 NCCL 自己在 ring、tree 和 NVLS-Tree 之间的选择）：

# %%
comm_x.scaling_efficiency_figure(model="llama2-7b", gpu="H800-SXM", overlap=0.0)

# %%
# NBVAL_CHECK_OUTPUT
grid = list(comm_x.N_GPUS_GRID)
for ov in (0.0, 2 / 3):
    curves = comm_x.scaling_curves(overlap=ov)
    for label, c in curves.items():
        row = "  ".join(f"{n:>5d}:{100 * c.scaling_efficiency[grid.index(n)]:5.1f}%" for n in (16, 128, 1024, 8192))
        print(f"overlap {ov:.2f} {label:24s} {row}")

# %% [markdown]
# 这张表回答了种子课程的两句话：
#
# **「通信开销随规模增长」**。带宽项的系数 $2\frac{n-1}{n}$ 很快饱和，真正随规模增长的是延迟项：一条环每个桶要走 $2(n-1)$ 步。
# 按 NCCL 自己的模型，这些步里只有 $2(\text{节点数}-1)$ 步跨网络（Simple 协议每跳 14 µs），其余都在服务器内走 NVLink
# （Simple 3.4 µs，LL128 1.9 µs，LL 0.6 µs）；`NCCL_ALGO=Ring` 时 NCCL 还会为 25 MiB 的桶改用延迟小得多的 LL128。
# 下面把 1,024 张卡时一个桶的三种环协议和 NCCL 的默认选择摊开：

# %%
# NBVAL_CHECK_OUTPUT
c1024 = Cluster.system("HGX-H800", 128)
bucket = comm.gradient_bytes(params_7b, 2) / 515
for label, kw in (("ring/Simple", dict(algo="ring", protocol="Simple")), ("ring/LL128", dict(algo="ring", protocol="LL128")),
                  ("ring/LL", dict(algo="ring", protocol="LL")), ("NCCL_ALGO=Ring", dict(algo="ring")),
                  ("NCCL default", dict())):
    cst = c1024.collective_cost("all_reduce", bucket, 1024, **kw)
    print(f"{label:15s} -> {cst.choice:16s} per 25 MiB bucket {cst.time_s * 1e3:6.2f} ms "
          f"(latency {cst.latency_s * 1e3:6.2f} ms); x 515 buckets = {515 * cst.time_s:5.2f} s")
print(f"ring only at 1,024 GPUs with overlap 2/3: {facts.value('ch14_ring_only_efficiency_1024'):.0%} (labutil.facts)")

# %% [markdown]
# 只用 Simple 协议时，每个桶光延迟就有十几毫秒；NCCL 在 `NCCL_ALGO=Ring` 下会选 LL128，把它压到几毫秒，但 515 个桶加起来
# 仍然是计算时间的量级。NCCL 的默认选择在这个规模用 NVLS-Tree（跨节点只有 $2\log_2 128 = 14$ 跳），同步时间几乎不再随规模增长。
# 从上面的扩展效率表里把这几个数读出来：
# 这里和旧版本课程的差别值得记一下：如果把 $2(n-1)$ 步**全部**按网络延迟算、又只允许 Simple 协议，会得出「只用环在 1,024 卡只剩 13%」，
# 比 NCCL 自己的模型悲观好几倍；第 13 章 §8 和第 15 章用的正是这个按跳区分的延迟模型。

# %%
# NBVAL_CHECK_OUTPUT
curves = comm_x.scaling_curves(overlap=0.0)
for label in ("8 x 400G IB, NCCL_ALGO=Ring", "8 x 400G IB, auto (NCCL)"):
    c = curves[label]
    print(f"{label:28s} sync time: " + ", ".join(f"{n} GPUs {c.comm_s[grid.index(n)]:.2f} s" for n in (16, 128, 1024, 8192)))
ring23 = comm_x.scaling_curves(overlap=2 / 3)["8 x 400G IB, NCCL_ALGO=Ring"].scaling_efficiency
auto0 = curves["8 x 400G IB, auto (NCCL)"].scaling_efficiency
MarkdownTable(f"只用环的 8 × 400G 在 1,024 卡、重叠 2/3 时效率 {ring23[grid.index(1024)]:.0%}，到 8,192 卡只剩 "
              f"{ring23[grid.index(8192)]:.0%}；让 NCCL 自己选（NVLS-Tree），不重叠时 1,024 卡也有 {auto0[grid.index(1024)]:.0%}、"
              f"8,192 卡 {auto0[grid.index(8192)]:.0%}。")

# %% [markdown]
# **「千卡集群能达到 70% 已属优秀」**。模型给出的是一个**上界**：它假设没有慢节点（straggler）、没有网络拥塞和抖动、
# 每个桶都能完美流水、没有检查点和数据加载的停顿、没有流水线并行的气泡。即便如此，它已经告诉我们：千卡规模下，
# 同样是 8 × 400G，强制 ring 就掉到一半上下；让 NCCL 自己选算法才留得出余量（上面的输出），
# 留给现实中那些模型没算的损失。第 24 章会在真实框架里测量这个数，第 27 章把故障和重启的损失也算进来。
#
# ## 7. 「超过 32 张卡后，网络带宽往往成为瓶颈」
#
# 种子 004 的这句话背后是交换机的端口数。目录里的 Quantum-2 QM9700 有 64 个 400G 端口：做无阻塞（1:1）的 leaf，
# 32 个口向下接服务器、32 个口向上接 spine。每台 8 卡服务器用 8 个端口（每卡一块网卡），一个 leaf 正好接 4 台、**32 张卡**（这是把一台服务器的 8 根线都插在同一台 leaf 上的 ToR 接法；第 12 章的轨道优化接法下，一台 leaf 接 32 台服务器的同号网卡，同号 GPU 之间的流量在 256 卡的 SU 内都不上 spine，台阶相应后移）。
# 32 张卡以内，所有流量在一台 leaf 交换机里完成；超过 32 张卡，流量必须经过 spine——如果为了省钱把上行做成 2:1 或 4:1 收敛（oversubscription），
# 跨 leaf 的带宽就只剩一半或四分之一。下图用每台 8 × 100G 的配置、NCCL 自动选算法、不重叠，把这一刻画出来：

# %%
# NBVAL_CHECK_OUTPUT
sw = hardware.switch("QM9700")
print(f"{sw.name}: {sw.ports} ports x {sw.port_gbps:.0f} Gbit/s; non-blocking leaf -> {sw.ports // 2} down-links "
      f"= {sw.ports // 2 // 8} servers x 8 GPUs = {sw.ports // 2} GPUs per leaf")
over = comm_x.scaling_curves(overlap=0.0, scenarios=comm_x.OVERSUB_SCENARIOS)
for label, c in over.items():
    print(f"{label:32s} " + "  ".join(f"{n}:{100 * c.scaling_efficiency[grid.index(n)]:5.1f}%" for n in (16, 32, 64, 1024)))

# %%
comm_x.oversubscription_figure(model="llama2-7b", gpu="H800-SXM")

# %%
# NBVAL_CHECK_OUTPUT
e = {label: c.scaling_efficiency for label, c in over.items()}
flat_, four = e["8 x 100G, non-blocking"], e["8 x 100G, 4:1 above 4 servers"]
MarkdownTable(f"在无阻塞网络上，32 卡之后的曲线几乎是平的（32 卡 {flat_[grid.index(32)]:.0%}，1,024 卡 {flat_[grid.index(1024)]:.0%}）；"
              f"在 4:1 收敛的网络上，从 32 卡到 64 卡效率一下子从 {four[grid.index(32)]:.0%} 掉到 {four[grid.index(64)]:.0%}。")

# %% [markdown]
# 所以「超过 32 张卡网络成为瓶颈」不是一个物理常数，而是**「超出一台 leaf 交换机之后，网络设计是否无阻塞」**的问题：
# 它取决于交换机端口数、每台服务器的网卡数和上行收敛比——这正是第 12 章 Fat-Tree 设计要解决的。
#
# ## 8. 交互探索：带宽 → 利用率 → 扩展效率
#
# 左图：所选 GPU 数下，GPU 利用率随每台服务器网络总带宽的变化（竖线标出常见配置），红点是当前网卡配置；
# 右图：当前网卡配置下扩展效率随 GPU 数的变化。摘要里给出达到 70%、90% 利用率所需的每台带宽。建议试：
#
# 1. 默认就是种子 003 的场景（32 × H800，每台 1 × 25 GbE）：利用率 14.3%；把网卡换成 8 × 400G；
# 2. 把模型从 7B 换成 70B：利用率几乎不变（第 2 节的比值公式）；再把「每卡每步 token」加大到 65,536；
# 3. 换成 `deepseek-v3` 或 `mixtral-8x7b`：计算按激活参数、梯度按全部参数，利用率掉到百分之几；再把「专家并行 EP」调到 8，
#    看专家梯度只在专家数据并行组里同步之后变化多少（摘要会写明同步了多少参数）；
# 4. GPU 换成 B200、A800 或 GB200（NVL72：一个机柜 72 张卡是一个 NVLink 域），对比同样网络下的利用率；GB200 的一个「节点」是 4 卡的计算托盘，左图横轴和「每台网卡数」都按托盘算（一卡一块 400G 就是每托盘 4 × 400G）；
# 5. GPU 数拖到 4,096，比较「NCCL_ALGO=Ring」「NCCL_ALGO=Tree」与「auto (NCCL)」。

# %%
comm_x.dp_bandwidth_explorer(model="llama2-7b", gpu="H800-SXM", tokens_per_gpu=16384, mfu=0.45, n_gpus=32,
                              nic_gbps=25, nics_per_node=1, overlap=0.0)

# %% [markdown]
# ## 9. 实操命令：先测带宽，再估算同步时间
#
# 规划阶段用本章的模型，验收阶段要用测量替换模型里的假设。三组命令：
#
# ```bash
# ethtool eth0 | grep -i speed                 # 以太网口协商速率，例如 "Speed: 25000Mb/s"
# ibstat | grep -E "State|Rate"                # InfiniBand 端口状态与速率，NDR 为 "Rate: 400"
# mpirun -np 32 -N 8 --hostfile hosts -x NCCL_DEBUG=INFO \
#        ./build/all_reduce_perf -b 1G -e 16G -f 2 -g 1      # 4 台 × 8 卡，大消息段的 busbw
# dcgmi dmon -e 1001,1002,1004 -d 1000         # 训练时每秒：GR_ENGINE_ACTIVE、SM_ACTIVE、PIPE_TENSOR_ACTIVE（DCGM 剖析指标）
# ```
#
# 关键一步：nccl-tests 在大消息段测到的 busbw，就是第 13 章模型里的「有效 $B$」。梯度同步时间可以直接估为
# $t \approx 2\frac{n-1}{n} S_{\text{grad}} / \text{busbw}$（nccl-tests 的 busbw 定义保证了这一点）。
# 下面的输出是**示意样例**：由课程的集群模型（`Cluster.seed003()`：4 台 × 8 卡 H800，每台 1 × 25 GbE，busbw 上限 3.0 GB/s）
# 算出时间，按 nccl-tests 的真实表格格式打印，不是一次测量。
# 用 `labutil.parsers.parse_nccl_tests` 解析后，拿最大消息的 busbw 去估 7B 模型的同步时间：

# %%
sample = comm_x.nccl_tests_sample_text("all_reduce", n_nodes=4, cluster=Cluster.seed003(), gpu_name="NVIDIA H800",
                                        minbytes=2**30, maxbytes=16 * 2**30)
print(sample.splitlines()[0])
print("\n".join(sample.splitlines()[-12:]))

# %%
# NBVAL_CHECK_OUTPUT
res = parse_nccl_tests(sample)
big = res.rows[-1]
grad = comm.gradient_bytes(params_7b, 2)
est = comm.bytes_sent_per_rank("all_reduce", grad, res.n_ranks) / (big.busbw_gbs * 1e9)
print(f"{res.n_ranks} ranks on {len(res.hosts)} hosts; busbw at {big.size_bytes / 2**30:.0f} GiB = {big.busbw_gbs:.2f} GB/s")
print(f"estimated gradient sync for llama2-7b: 2(n-1)/n x {grad / 1e9:.2f} GB / busbw = {est:.2f} s "
      f"(compute {compute_s:.2f} s -> utilisation without overlap {compute_s / (compute_s + est):.1%})")

# %% [markdown]
# 用 busbw 估出的同步时间比第 4 节模型算的略短（两格输出对照），差的正是 515 个 25 MiB 桶各付一次的延迟——busbw 估算只有带宽项。
# 练习 2 接受这两种算法中的任何一个。在真实集群上，把样例换成你自己的 nccl-tests 输出，就得到了基于实测的利用率预测。
#
# > **模型与测量（和第 13 章的方框一样）。** 本章所有的同步时间都是模型：NCCL 调优模型的延迟常数、实测的 NVLink / 网卡可达带宽，
# > 再加「没有慢节点、没有拥塞」的假设。它是**上界**，要用测量去校正：
# > 实验 2（`labs/lab02`）在你的机器上跑 all-reduce、拟合 α 和 B，把拟合值代回本章的公式；
# > 实验 6（`labs/lab06`）用 DDP 实测 1 卡和 2 卡的步时间，得到真实的扩展效率，和模型的预测并排比较。
# > 模型和测量差得多的地方，往往就是该排查的地方（第 22、28 章）。
#
# 剩下的问题是：训练跑起来以后，怎样**在 GPU 上看出**它到底是在算还是在等通信？
#
# ### 9.1 分清「在算」和「在等」：用 DCGM 剖析指标，而不是 sm%
#
# 很多人的第一反应是看 `nvidia-smi` 或 `nvidia-smi dmon` 的 `sm` 列。但这一列（NVML 的 `utilization.gpu`，dcgm-exporter 里叫
# `DCGM_FI_DEV_GPU_UTIL`）的定义是：采样周期内**有任何一个 kernel 在运行**的时间比例。它不管这个 kernel 用了几个 SM、在做什么。
# NCCL 的集合通信本身就是 CUDA kernel：每个 channel 占一个线程块，在等对端数据时这些线程块一直在轮询标志位（LL 协议的做法就是这样，第 15 章）。
# 于是一个被网络卡住的数据并行作业，反向传播结束后 GPU 上始终有一个 NCCL kernel「在运行」，sm% 显示 100%，看上去忙得很。
# 按第 4 节的模型，种子 003 的 25 GbE 集群每步只有一成多的时间在计算，其余时间在等梯度同步——而 `nvidia-smi` 在这两段时间里显示的都是接近 100%。
#
# DCGM 的剖析（profiling，DCP）指标从硬件计数器读数，能把这两种状态分开（字段定义见 DCGM 文档 *Profiling Metrics*）：
#
# | 字段（dcgmi dmon 的 ID） | 含义 | 在等通信时 |
# |---|---|---|
# | `DCGM_FI_PROF_GR_ENGINE_ACTIVE`（1001） | 图形/计算引擎忙的时间比例，接近 sm% | 仍接近 100% |
# | `DCGM_FI_PROF_SM_ACTIVE`（1002） | 所有 SM 上「至少分配了一个 warp」的周期比例的平均值 | 很低：NCCL 只占几个到几十个 SM（H100 有 132 个） |
# | `DCGM_FI_PROF_PIPE_TENSOR_ACTIVE`（1004） | Tensor Core 流水线忙的周期比例 | 接近 0：通信不做矩阵乘 |
#
# 所以判断规则是：**GPU_UTIL 高、SM_ACTIVE 和 PIPE_TENSOR_ACTIVE 低，就是在等**（等网络、等慢节点、等挂掉的 rank）；
# 三者都低是在等数据或 CPU（第 18 章）；TENSOR_ACTIVE 长时间维持在较高水平，才是真的在做矩阵乘。这些字段需要在 dcgm-exporter 里开启 DCP 指标组，
# 它们是按时间平均的，采样周期取 1 s 左右，正好能看出「计算段 + 通信段」的混合比例。下面解析一段 dcgm-exporter 的 Prometheus 文本
# （`labutil.monitoring.DCGM_EXPORTER_SAMPLE`，格式与 dcgm-exporter 一致，数值为示意）：GPU 0、1 正常训练，GPU 2 在 NCCL 里空转等一个出了故障的对端。

# %%
# NBVAL_CHECK_OUTPUT
from labutil import monitoring
rows = monitoring.gpu_metrics(monitoring.parse_prometheus_text(monitoring.DCGM_EXPORTER_SAMPLE))
for r in rows[:3]:
    gap = monitoring.utilisation_gap(r)
    print(f"GPU {r['gpu']}: GPU_UTIL {gap['util']:4.0%}  SM_ACTIVE {gap['sm_active']:5.1%}  "
          f"PIPE_TENSOR_ACTIVE {gap['tensor_active']:5.1%}  -> util not spent on tensor work {gap['util_minus_tensor']:5.1%}")
seed = comm_x.seed003_rows()[0]
print(f"seed 003 model: compute {seed['compute_s']:.2f} s of a {seed['compute_s'] + seed['exposed_s']:.2f} s step "
      f"-> only {seed['utilisation']:.1%} of the time is compute, yet nvidia-smi shows ~100 %")
print(f"expected PIPE_TENSOR_ACTIVE on every GPU of that job: {rows[0]['tensor_active']:.1%} x {seed['utilisation']:.1%} "
      f"= {rows[0]['tensor_active'] * seed['utilisation']:.1%}")

# %% [markdown]
# GPU 2 的 GPU_UTIL 和两张正常的卡一样是 100%，但 SM_ACTIVE 只有 3.1%、Tensor Core 几乎为零——这就是「看上去在跑、其实在等」。
# 在一个网络受限的作业里，你会在**所有**卡上看到介于两者之间的数字：TENSOR_ACTIVE 大致等于「正常卡的值 × 计算时间占比」，
# 种子 003 的配置下只有百分之几（上面输出的最后一行）。把这个数和第 4 节的模型预测放在一起，就能在不停机的情况下判断网络是不是瓶颈；
# 如果 TENSOR_ACTIVE 远低于模型预测、而网络的 busbw 又正常，瓶颈就在数据加载或其他地方（第 18、28 章）。
#
# ## 10. 常见误区（每一条都用算出来的数字反驳）
#
# ### 误区一：「盲目追求 GPU 型号，网络随便配」
#
# 种子 003 和种子 004 都提到这个误区：「一套均衡的配置（中端 GPU + 高速网络）通常优于『顶级 GPU + 慢网络』」。
# 用每秒处理的 token 数（32 张卡）说话：

# %%
# NBVAL_CHECK_OUTPUT
tput = {}
for gpu in ("A800-SXM", "H800-SXM", "B200"):
    for label, gbps, k in (("1 x 25GbE", 25, 1), ("8 x 400G", 400, 8)):
        r = dp.dp_bandwidth("llama2-7b", gpu, 16384, 0.45, 32, gbps, k, 0.0)
        tput[gpu, label] = 16384 * 32 / float(r.step.step_s)
        print(f"{gpu:9s} + {label:9s}: utilisation {float(r.step.utilisation):5.1%}, {tput[gpu, label]:9,.0f} tokens/s")
print(f"B200 vs A800 on 1 x 25GbE: x{tput['B200', '1 x 25GbE'] / tput['A800-SXM', '1 x 25GbE']:.2f} throughput for "
      f"x{hardware.gpu('B200').bf16_tflops / hardware.gpu('A800-SXM').bf16_tflops:.1f} compute; "
      f"A800 + 8 x 400G vs B200 + 1 x 25GbE: x{tput['A800-SXM', '8 x 400G'] / tput['B200', '1 x 25GbE']:.2f}")

# %%
# NBVAL_CHECK_OUTPUT
MarkdownTable(f"在 25 GbE 上，B200 比 A800 多出的 {hardware.gpu('B200').bf16_tflops / hardware.gpu('A800-SXM').bf16_tflops:.1f} 倍算力"
              f"只换来 {tput['B200', '1 x 25GbE'] / tput['A800-SXM', '1 x 25GbE']:.2f} 倍的吞吐；而 A800 + 8 × 400G 比 "
              f"B200 + 25 GbE 快 {tput['A800-SXM', '8 x 400G'] / tput['B200', '1 x 25GbE']:.1f} 倍。")

# %% [markdown]
# GPU 越快，对网络的要求越高（第 2 节的比值公式里 $P$ 在分子上）。
#
# ### 误区二：「通信可以被计算完全掩盖，网络慢一点没关系」
#
# 重叠只能发生在反向传播期间，上限约 $o = 2/3$。把 $o$ 推到不现实的 1.0，25 GbE 上的利用率也只有：

# %%
# NBVAL_CHECK_OUTPUT
for ov in (0.0, 2 / 3, 1.0):
    r = comm_x.seed003_rows(overlap=ov)[0]
    print(f"1 x 25GbE, overlap {ov:.2f}: exposed communication {r['exposed_s']:.2f} s, utilisation {r['utilisation']:.1%}")
MarkdownTable(f"重叠能藏住的通信最多就是计算时间那么长（{r['compute_s']:.2f} s），而 25 GbE 上同步要 {r['sync_s']:.2f} s——"
              f"剩下的 {r['exposed_s']:.2f} s 无论如何都藏不住。")

# %% [markdown]
# 重叠是把「刚好够」的网络变成「够用」的手段，不能把差一个数量级的网络变成够用。
#
# ### 误区三：「模型越大越需要高带宽，小模型用便宜网络就行」
#
# 对稠密模型的数据并行，梯度量和计算量都与参数量成正比，比值与模型大小无关（第 2 节）。7B 和 70B 在同样的 25 GbE 上利用率完全相同；
# MoE 是例外，而且方向相反——计算按激活参数、梯度按全部参数（纯数据并行，每个 rank 持有全部专家）：

# %%
# NBVAL_CHECK_OUTPUT
for name in ("llama2-7b", "llama2-13b", "llama2-70b", "mixtral-8x7b", "deepseek-v3"):
    r = dp.dp_bandwidth(name, "H800-SXM", 16384, 0.45, 32, 25, 1, 0.0)
    print(f"{name:12s}: active {r.active_params / 1e9:6.1f}B of {r.params / 1e9:6.1f}B, compute {r.compute_s:6.2f} s, "
          f"sync {r.comm_s:7.2f} s, utilisation {float(r.step.utilisation):6.2%}")
ds = {(ep, k): dp.dp_bandwidth("deepseek-v3", "H800-SXM", 16384, 0.45, 32, gbps, k, 0.0, ep=ep)
      for ep in (1, 8) for k, gbps in ((1, 25), (8, 400))}
for (ep, k), r in ds.items():
    print(f"deepseek-v3, EP={ep}, {'1 x 25GbE' if k == 1 else '8 x 400G'}: syncs {r.sync_params / 1e9:6.1f}B per rank, "
          f"sync {r.comm_s:7.2f} s, utilisation {float(r.step.utilisation):6.2%}")

# %% [markdown]
# 大模型需要更多 GPU 和更复杂的并行方式（第 8 章），但对稠密模型，「每卡要多快的网卡」由 GPU 算力、每卡 token 数和网卡速率决定；
# 反过来，小模型用慢网络一样会让 GPU 闲置八成以上的时间。MoE 则**比同等激活参数的稠密模型更吃网络**：纯数据并行时每个 rank 都持有全部专家，
# 要同步的梯度远多于它每个 token 计算所用的参数。专家并行（EP）能帮多少？下面这段由上一格的输出生成：

# %%
# NBVAL_CHECK_OUTPUT
d1, d8, d8ib = ds[1, 1], ds[8, 1], ds[8, 8]
MarkdownTable(
    f"DeepSeek-V3 在纯数据并行下每一步要同步 {d1.sync_params / 1e9:.0f}B 个参数的梯度，是它计算所用激活参数"
    f"（{d1.active_params / 1e9:.1f}B）的 {d1.sync_params / d1.active_params:.0f} 倍，25 GbE 上的利用率只有 "
    f"{float(d1.step.utilisation):.2%}。开 EP=8 后，每个 rank 只持有 1/8 的专家，要同步的参数降到 {d8.sync_params / 1e9:.0f}B"
    f"（少了 {d1.sync_params / d8.sync_params:.1f} 倍），利用率却只到 {float(d8.step.utilisation):.2%}："
    "一个 EP 组的 8 张卡在同一台服务器里，各持一份不同的专家，这台服务器唯一的 25 GbE 口仍要为全部专家的梯度跑 all-reduce——"
    "**每张卡**的字节数少了，**每台服务器**的字节数却少得不多。同样的 EP=8 放到 8 × 400G 上，利用率是 "
    f"{float(d8ib.step.utilisation):.0%}：专家并行省的是显存和每卡的通信量，服务器出口的带宽只能靠网络本身。")

# %% [markdown]
# 这也是 DeepSeek-V3 这样的 MoE 训练为什么把专家并行铺到多台服务器、再为跨节点的 all-to-all 专门优化通信（第 8 章）：
# 专家并行自身的 token 分发与回收（all-to-all）是另一份流量，本章的数据并行模型没有计入。
#
# ## 11. 练习
#
# 把答案填进 `answer_k`（数字即可，单位见题目），运行单元格查看判分；卡住时调用 `exercise("ch14.k").hint(1)`。
#
# **练习 1**：Llama-2-7B（目录预置）用 BF16 梯度，每个优化器步要同步多少 GB（$10^9$ B）的梯度？

# %%
answer_1 = None
exercise("ch14.1").check(answer_1)

# %% [markdown]
# **练习 2**：种子 003 的场景——Llama-2-7B、32 张 H800（4 台）、每台一个 25 GbE 口、每卡每步 16,384 token、MFU 0.45、不重叠、
# DDP 25 MiB 分桶、NCCL 自己选算法——
# GPU 利用率是多少（%）？（只算带宽项、不计 515 个桶的延迟的估算，也在判分的容差之内。）

# %%
answer_2 = None
exercise("ch14.2").check(answer_2)

# %% [markdown]
# **练习 3**：同一个任务，不重叠时要达到 70% 的 GPU 利用率，每台服务器至少需要多少 Gbit/s 的网络带宽？

# %%
answer_3 = None
exercise("ch14.3").check(answer_3)

# %% [markdown]
# **练习 4**：Llama-2-7B，H800 服务器配 8 × 400G IB，每卡每步 16,384 token，MFU 0.45，重叠比例 2/3，强制 `NCCL_ALGO=Ring`
# （NCCL 仍按桶挑最快的环协议）、DDP 25 MiB 分桶：1,024 张卡时的扩展效率是多少（%）？

# %%
answer_4 = None
exercise("ch14.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：练习 2、3 的种子 003 任务要在不重叠时达到 70% GPU 利用率。每台服务器的网络在 100 / 200 / 400 / 800 Gbit/s 中最少选哪一档？

# %%
answer_5 = None  # '100' / '200' / '400' / '800'
exercise("ch14.5").check(answer_5)

# %% [markdown]
# ## 12. 小结
#
# - 每步梯度通信量 = 参数量 × 每梯度字节数（BF16 为 2，DDP+autocast 与 Megatron 的 BF16 训练默认是 FP32 的 4）；ring all-reduce 下每卡发出约两倍于此的数据，ZeRO-1/2 相同，ZeRO-3/FSDP FULL_SHARD 是 1.5 倍。
# - $t_{\text{step}} = t_{\text{comp}} + \max(0, t_{\text{comm}} - o\,t_{\text{comp}})$；GPU 利用率 $= t_{\text{comp}}/t_{\text{step}}$，弱扩展下它就是扩展效率；$o$ 最多约 2/3。
# - 对稠密模型的数据并行，通信/计算之比与模型大小无关，与 GPU 算力成正比、与每卡 token 数和网卡带宽成反比；MoE 再乘上总参数/激活参数，专家并行减少每卡的字节数，但不减少每台服务器出口的字节数。
# - 8 卡 H800 服务器每台只配一个 25 GbE 口：同步是计算的约 6 倍，利用率 14.3%；配 8 × 400G：约 90%–100%。要 70% 利用率，每台约需一块 400G 网卡的带宽。
# - 规模变大时，伤人的是延迟项（环的 $2(n-1)$ 步 × 桶数，其中跨网络的只有 $2(\text{节点数}-1)$ 步）和超出一台 leaf 之后的上行收敛；
#   对策是 tree / NVLS-Tree 算法（NCCL 默认会选）与无阻塞网络。
#
# ## 参考资料
#
# - 课程种子材料：《AI训练推理集群》课程导入「误区一：盲目追求GPU型号而忽视网络瓶颈」；《AI算力集群》课程导入「误区一：当集群规模超过32张卡后，网络带宽往往成为瓶颈」；《大规模GPU集群部署核心概念速览》「千卡集群能达到70%已属优秀」。
# - J. Kaplan et al., *Scaling Laws for Neural Language Models*, 2020, §2.1：训练 FLOPs ≈ 6N 每 token。
# - S. Li et al., *PyTorch Distributed: Experiences on Accelerating Data Parallel Training*, VLDB 2020, §3.2.3：梯度分桶与反向传播重叠；PyTorch DDP 文档：`bucket_cap_mb=25`。
# - S. Rajbhandari et al., *ZeRO: Memory Optimizations Toward Training Trillion Parameter Models*, SC 2020, §7.2–7.3：ZeRO-2 通信量与 DP 相同（2Ψ），ZeRO-3 为 3Ψ（1.5 倍）。
# - 梯度在哪种精度里 all-reduce：PyTorch DDP 通信钩子文档（`bf16_compress_hook` / `fp16_compress_hook`：不注册时按梯度本身的 dtype 通信）；
#   NVIDIA/Megatron-LM `megatron/training/arguments.py`（BF16 时自动打开 `--accumulate-allreduce-grads-in-fp32`：「bfloat16 requires gradient accumulation and all-reduce to be done in fp32」）；
#   A. Grattafiori et al., *The Llama 3 Herd of Models*, 2024, §3.3.2（梯度在 FP32 里 reduce-scatter）。
# - A. Sergeev, M. Del Balso, *Horovod*, 2018：扩展效率的定义与分层 all-reduce。
# - H. Touvron et al., *Llama 2*, 2023, Table 1 与 meta-llama/Llama-2-7b-hf 的 config.json：6.74B 参数（目录 `labutil/data/models.toml`）。
# - NVIDIA H800 / A800 / B200 数据手册（目录 `labutil/data/gpus.toml`）；NVIDIA QM9700 用户手册：64 × 400G NDR 端口（目录 `switches.toml`）；ConnectX-7 产品简介。
# - NVIDIA/nccl `src/graph/tuning.cc`，v2.30.7（各算法、协议的延迟与带宽常数，ring 与 tree 的延迟公式；`labutil/data/nccl_tuning.toml`）；NVIDIA/nccl-tests `doc/PERFORMANCE.md`（busbw 的定义）。
# - DeepSeek-AI, *DeepSeek-V3 Technical Report*, 2024（671B 总参数、37B 激活）；A. Q. Jiang et al., *Mixtral of Experts*, 2024（46.7B / 12.9B）；
#   D. Narayanan et al., Megatron-LM 与 S. Rajbhandari et al., *DeepSpeed-MoE*, ICML 2022（专家数据并行组）。
# - NCCL 的可达带宽（`labutil/data/systems.toml`）：S. Jeaugey，github.com/NVIDIA/nccl-tests/issues/119（每块 200G 网卡约 24 GB/s）；
#   DeepSeek-AI, *DeepSeek-V3 Technical Report*, 2024, §3.2.2 与 github.com/deepseek-ai/DeepSeek-V3/issues/28（H800 NVLink 实测单向 160 GB/s）。
# - 第 13 章参考资料中的 Thakur 等 2005、Patarasuk & Yuan 2009、NCCL 2.4 double binary tree 博客。
# - NVIDIA DCGM User Guide, "Feature Overview → Profiling Metrics"：`DCGM_FI_PROF_GR_ENGINE_ACTIVE`（1001）、`DCGM_FI_PROF_SM_ACTIVE`（1002）、`DCGM_FI_PROF_PIPE_TENSOR_ACTIVE`（1004）的定义；
#   NVML `nvmlDeviceGetUtilizationRates`（`utilization.gpu`：有 kernel 运行的时间比例）；NVIDIA/dcgm-exporter（Prometheus 输出格式）。
