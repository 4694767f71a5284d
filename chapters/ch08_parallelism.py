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
# # 第8章 并行策略：DP/TP/PP/SP/EP与3D并行
#
# > 模块二「计算节点与GPU」的第 8 章。前置：第 7 章（训练显存模型）；会用到第 13 章的 α-β 集合通信模型
# > （`labutil.comm`，先把它当成「给定消息大小、卡数和带宽，返回通信时间」的函数即可）。
# > 本章的布局搜索是第 14 章（带宽规划）、第 24 章（Megatron/DeepSpeed 参数生成）和第 30 章（千卡方案）的输入。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 说清楚数据并行（DP）、张量并行（TP）、流水线并行（PP）、序列并行（SP）、专家并行（EP）各切分了什么、
#   每张卡剩多少显存、每步要通信什么、通信走 NVLink 还是网络；
# - 用 $(p-1)/m$ 算出流水线气泡，并知道 micro-batch 数与交错调度如何压低它；
# - 算出一个布局每张卡每步的通信量，解释为什么 TP 必须留在一台服务器的 NVLink 域内；
# - 用 `labutil.parallel.search_layouts` 为一个模型在 $N$ 张 GPU 上枚举所有合法布局，按估计的单步时间排序，
#   并把结果翻译成 Megatron-LM 的启动参数；
# - 解释种子课程中「512~2048 张 GPU 的 LLM 训练集群采用 3D 并行」这一设计的来由。

# %%
from labutil.notebook import setup, show_table
from labutil import parallel, memory, comm, compute, hardware, models
from labutil.parallel import Layout
from labutil.explore import parallel as par_explore
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 五种并行，各切一刀
#
# 第 7 章算过：GPT-3 175B 的模型状态是 2.8 TB，bf16 权重就有 349 GB。要在一千张卡上训练它，
# 必须回答两个问题：**怎么切才能放得下**，以及**切完之后通信会不会吃掉算力**。五种基本策略各切一刀：
#
# | 策略 | 切分什么 | 每卡模型状态 | 每卡激活 | 每步通信 | 通常跑在 |
# |---|---|---|---|---|---|
# | 数据并行 DP（+ZeRO） | 数据（batch） | 不变（ZeRO 时 $\div d$） | 不变 | 梯度 all-reduce：$2\Psi$ 字节量级 | 网络（跨节点） |
# | 张量并行 TP | 每层的矩阵（按列/行） | $\div t$ | 大部分 $\div t$ | 每层每个 micro-batch 4 次 all-reduce，消息 $2sbh$ 字节 | NVLink（节点内） |
# | 序列并行 SP | TP 切不到的 LayerNorm/dropout 沿序列维 | — | 剩余部分 $\div t$ | 与 TP 相同（all-gather + reduce-scatter 代替 all-reduce） | NVLink |
# | 流水线并行 PP | 层（按深度分段） | $\div p$ | 第一段存 $p$ 个 micro-batch，总量不变 | 段间点对点：每个 micro-batch 前后各 $2sbh/t$ 字节 | 网络 |
# | 专家并行 EP | MoE 的专家 | 专家参数 $\div e$ | 不变 | 每个 MoE 层 2 次 all-to-all（分发 + 汇合） | NVLink 或网络 |
#
# 把 DP、TP、PP 叠在一起就是 **3D 并行**：总卡数 $N = d \times t \times p$。它的设计原则来自 Narayanan 等（2021）的经验：
# **TP 放在节点内**（通信量最大、最频繁，只有 NVLink 扛得住），**PP 跨节点**（通信量小、点对点），
# **DP 在最外层**（每步一次、可以与反向计算重叠）。下面逐个把通信量算出来。
#
# ## 2. 数据并行：每步一次梯度同步
#
# 每张卡跑不同的数据，反向结束后对梯度做一次 all-reduce。环形 all-reduce 中每张卡发送 $2(d-1)/d$ 倍的梯度
# （Patarasuk & Yuan 2009 证明这是带宽下界）。16 位梯度下，一个 7B 模型每步每卡要发约 27 GB：

# %%
# NBVAL_CHECK_OUTPUT
p7 = models.transformer("llama2-7b").params()
grad = comm.gradient_bytes(p7, 2)
for d in (8, 64, 512):
    sent = comm.bytes_sent_per_rank("all_reduce", grad, d)
    t_ib = comm.collective_time_s("all_reduce", grad, d, 50.0)
    print(f"dp={d:3d}: each GPU sends {sent / 1e9:5.1f} GB per step; ring all-reduce at 50 GB/s (400G NIC) = {t_ib:.2f} s")

# %% [markdown]
# 数据并行的通信量与卡数几乎无关（$2(d-1)/d \to 2$），但与**模型大小**成正比；它最大的优点是每步只有一次，
# 可以在反向传播时按桶（bucket）提前发出，与计算重叠（第 14 章）。ZeRO-1/2 的通信量与 DDP 相同，ZeRO-3 多 50%（第 7 章）。
#
# ## 3. 张量并行：每层四次 all-reduce，只能留在 NVLink 里
#
# Megatron-LM（Shoeybi 等 2019）把 MLP 的第一个矩阵按列切、第二个按行切，注意力按头切，于是每个 Transformer 层
# 前向只需 2 次 all-reduce（注意力后、MLP 后），反向再 2 次。每次的消息是整层的激活 $s \cdot b \cdot h$ 个元素，
# 即 $2sbh$ 字节。一个流水线段有 $L/p$ 层，每步跑 $m$ 个 micro-batch，所以每张卡每步发送
#
# $$V_{\text{TP}} = 4 \cdot \frac{2(t-1)}{t} \cdot 2sbh \cdot \frac{L}{p} \cdot m \ \text{字节}.$$
#
# 用 GPT-3 175B、$t = 8$、$p = 8$、$d = 16$、global batch 1536 算一下：

# %%
# NBVAL_CHECK_OUTPUT
gpt3 = models.transformer("gpt3-175b")
lay = Layout(dp=16, tp=8, pp=8, micro_batch=1, global_batch=1536, zero_stage=1)
v = parallel.comm_volume_gb(gpt3, lay)
h100 = hardware.gpu("H100-SXM")
print(f"per GPU per step: TP {v.tp_gb:6.1f} GB, PP {v.pp_gb:5.2f} GB, DP {v.dp_gb:5.2f} GB")
print(f"TP traffic at NVLink {h100.nvlink_gbs / 2:.0f} GB/s per direction: {v.tp_gb / (h100.nvlink_gbs / 2):.2f} s; "
      f"at a 400G NIC (50 GB/s): {v.tp_gb / 50:.2f} s")

# %% [markdown]
# TP 每步要搬 406 GB，约是 DP 的 40 倍。在 450 GB/s（单向）的 NVLink 上约 0.9 s，而一条 400 Gb/s 的网卡要 8 s——
# 比整步的计算时间还长。所以 $t$ 的上限通常就是一台服务器的 GPU 数（8），本课程的 `check_layout` 也这样检查。
# 此外 $t$ 必须整除注意力头数；对 GQA 模型还要整除 KV 头数（Llama 3 70B 只有 8 个 KV 头，$t \le 8$）。
#
# ## 4. 序列并行：同样的通信量，更少的激活
#
# TP 切不到 LayerNorm 和 dropout，它们的输入在 $t$ 张卡上各存一份完整副本（第 7 章的 $10\,sbh$ 项）。
# 序列并行（Korthikanti 等 2022）把这些区域沿序列维切开，并把每次 all-reduce 换成 all-gather + reduce-scatter——
# 环形算法下二者的总量恰好等于一次 all-reduce，所以**通信不增加**，激活却整体除以 $t$。
# 这是少见的「免费午餐」，Megatron-LM 在 $t > 1$ 时几乎总是打开 `--sequence-parallel`。
#
# ## 5. 流水线并行：气泡
#
# 把 $L$ 层分成 $p$ 段放在 $p$ 张（组）卡上，每个 global batch 拆成 $m$ 个 micro-batch 依次流过。
# 流水线刚启动和收尾时，总有段在空等，这段空闲叫**气泡**。对 GPipe 和 1F1B 调度（Narayanan 等 2021 §2.2.1）：
#
# $$\frac{t_{\text{bubble}}}{t_{\text{ideal}}} = \frac{p-1}{m}, \qquad
# \frac{t_{\text{bubble}}}{t_{\text{total}}} = \frac{p-1}{m+p-1}.$$
#
# 交错调度（interleaved 1F1B，每张卡放 $v$ 个不相邻的模型块）把气泡再除以 $v$，代价是段间通信多 $v$ 倍（§2.2.2）。
# 本课程的 `pipeline_bubble` 返回前者（相对理想时间），`pipeline_bubble_fraction` 返回后者（占总时间）。

# %%
# NBVAL_CHECK_OUTPUT
for p, m in [(8, 8), (8, 64), (16, 64), (32, 48), (32, 192)]:
    print(f"pp={p:2d}, m={m:3d}: bubble/ideal {parallel.pipeline_bubble(p, m):6.1%}, "
          f"share of step {parallel.pipeline_bubble_fraction(p, m):6.1%}, "
          f"interleaved v=2 {parallel.pipeline_bubble_fraction(p, m, 2):6.1%}")

# %%
par_explore.bubble_figure()

# %% [markdown]
# 规律很简单：**micro-batch 数 $m$ 要远大于级数 $p$**。而 $m = B/(d \cdot b)$：global batch $B$ 由算法团队定（太大影响收敛），
# 数据并行 $d$ 越大，留给每条流水线的 micro-batch 就越少。这就是 DP 和 PP 之间的张力——
# 卡数一定时，加 PP 可以减少 DP，从而增加 $m$；但 PP 太深又让 $p-1$ 变大。
#
# ## 6. 专家并行：MoE 的 all-to-all
#
# MoE 模型每个 token 只激活 $k$ 个专家。专家并行把不同专家放在不同卡上（Megatron-Core 中 EP 组取自数据并行的卡，
# 所以 `Layout` 要求 $e$ 整除 $d$，总卡数仍是 $d \cdot t \cdot p$）。代价是每个 MoE 层前向、反向各要两次 all-to-all：
# 把 token 分发到专家所在的卡，再把结果收回来。以 $s = 4096$、$b = 1$、$h = 4096$、top-2 为例，每次 all-to-all 的缓冲为
# $2 \cdot s \cdot b \cdot h \cdot k$ 字节：

# %%
# NBVAL_CHECK_OUTPUT
a2a_bytes = 2 * 4096 * 1 * 4096 * 2
t_nvl = comm.collective_time_s("all_to_all", a2a_bytes, 8, h100.nvlink_gbs / 2, comm.NVLINK_STEP_LATENCY_S)
t_net = comm.collective_time_s("all_to_all", a2a_bytes, 64, 50.0, comm.NET_STEP_LATENCY_S)
print(f"all-to-all buffer {a2a_bytes / 1e6:.0f} MB: ep=8 inside a node {t_nvl * 1e3:.2f} ms, "
      f"ep=64 across nodes at 50 GB/s {t_net * 1e3:.2f} ms")
print(f"x 4 per MoE layer per micro-batch -> {4 * t_net * 1e3:.1f} ms across nodes")

# %% [markdown]
# 跨节点的 all-to-all 每次约 1.9 ms、每层每个 micro-batch 4 次，几十层下来就是每个 micro-batch 几百毫秒——
# 所以 EP 的规模通常优先放在节点内，跨节点时需要轨道优化（rail-optimized）的网络（第 12 章）。本课程的模型目录只有稠密模型，
# 布局搜索中 `ep` 固定为 1。
#
# ## 7. 3D 并行：搜索一个模型在 $N$ 张卡上的所有布局
#
# 有了显存模型（第 7 章）和通信模型，就可以像 Megatron 团队那样系统地比较布局。`search_layouts` 枚举所有
# 「$t$ 整除头数与 KV 头数且不超过每节点 GPU 数、$p$ 整除层数、$d\cdot t\cdot p = N$、$d \cdot b$ 整除 $B$」的组合，
# 再乘上 micro-batch、ZeRO 阶段（DeepSpeed 不支持 ZeRO-2/3 与 PP 同用，默认剔除）、重计算与 SP 的选择，
# 对每个组合估计每卡显存（必须 $\le$ 0.9 × HBM）和单步时间：
#
# $$T_{\text{step}} = \underbrace{(T_{\text{compute}} + T_{\text{TP}})}_{\text{理想}}\Bigl(1 + \frac{p-1}{m}\Bigr) + T_{\text{PP}} + T_{\text{DP, 未重叠}}$$
#
# 其中 $T_{\text{compute}}$ = 执行的 FLOPs（$6N + 12lsh$ 每 token，重计算另加）/（$N_{\text{GPU}}$ × 峰值 × 0.70）；
# 0.70 取种子课程「有效算力为峰值 40%～70%」的上沿，因为气泡和通信已经单独建模。$T_{\text{TP}}$、$T_{\text{PP}}$、$T_{\text{DP}}$
# 都由 `labutil.comm` 的 α-β 模型给出；DP 梯度同步只能与最后一个 micro-batch 的反向重叠。整个搜索是 numpy 向量化的：
# GPT-3 在 1,024 张 H100 上 900 个候选，约 7 ms（纯 Python 循环逐个估计要 3 s 以上，见 `benchmarks/bench_search_layouts.py`）。

# %%
# NBVAL_CHECK_OUTPUT
result = parallel.search_layouts(gpt3, 1024, "H100-SXM", 1536)
print(f"{result.n_candidates} candidate layouts, {len(result)} fit in {result.usable_gb:.0f} GB per GPU")
for e in result.top(5):
    print(f"{e.layout.label():45s} mem {e.memory_gb:5.1f} GB  step {e.step_s:5.2f} s  "
          f"bubble {e.bubble_s:4.2f} s  TP {e.tp_comm_s:4.2f} s  DP {e.dp_exposed_s:4.2f} s  MFU {e.mfu:5.1%}")

# %% [markdown]
# 前几名的单步时间相同，区别只在显存（排序的第二关键字是显存，越小越靠前）：ZeRO-1 与 SP 不增加通信，却省下几十 GB。
# 最佳布局是 $t = 4$、$p = 32$、$d = 8$：TP 用半台服务器的 NVLink，PP 跨 32 段，每条流水线有 $m = 192$ 个 micro-batch，
# 气泡约占 13%。下面的热力图把 $t \times p$ 平面画出来：左边是每卡显存（红字 OOM 表示超过可用显存），右边是估计的单步时间。

# %%
par_explore.layout_heatmap_figure()

# %% [markdown]
# 每种策略每步产生多少字节？下图对几种 1,024 卡布局把 TP、PP、DP 的流量叠起来：TP 的流量占绝对多数，
# 所以它必须在 NVLink 上；$t = 4$ 比 $t = 8$ 少一半多的 TP 流量（因为 $2(t-1)/t$ 与每卡的层数都变了）；
# 纯 DP + ZeRO-3 的 DP 流量最大，而且全部走网络。

# %%
par_explore.comm_volume_figure()

# %% [markdown]
# ## 8. 种子课程的 512~2048 卡 LLM 集群：为什么是 3D 并行
#
# 种子课程 003 描述的大语言模型训练集群是「512~2048 张 GPU，采用 3D 并行（数据并行 + 张量并行 + 流水线并行）」，
# 并要求「每张 GPU 至少配 1 个 400G 端口」。用同一个搜索对 GPT-3 175B（global batch 1536）扫一遍卡数：

# %%
# NBVAL_CHECK_OUTPUT
for n, e in par_explore.scale_rows():
    print(f"{n:5d} GPUs: {e.layout.label():40s} step {e.step_s:6.2f} s  MFU {e.mfu:5.1%}  mem {e.memory_gb:5.1f} GB")

# %%
par_explore.scale_figure()

# %% [markdown]
# 每个规模上的最佳布局都同时用了 $t > 1$、$p > 1$、$d > 1$——这就是 3D 并行。卡数从 256 翻到 2,048（8 倍），
# 单步时间缩短约 6.2 倍，MFU 从 61% 降到 47%：global batch 固定时，卡越多每条流水线的 micro-batch 越少、气泡越大，
# TP 的占比也越高。这就是第 1 章「扩展效率」在模型里的来源。
#
# ## 9. 动手：布局探索器
#
# 选择模型、GPU 数量与型号、global batch，以及 micro-batch、ZeRO、重计算和 SP；热力图给出每个 $(t, p)$ 的每卡显存与单步时间，
# 青色星号是最佳布局，上方文字给出它的显存、气泡与通信分解。建议尝试：把 `gpt3-175b` 的重计算改为 `none`，看哪些格子变成 OOM；
# 把 GPU 换成 `A100-80G-SXM`；把 `llama3-70b` 放到 256 张卡上，比较 ZeRO-0 与 ZeRO-1。

# %%
explorer = par_explore.layout_explorer()
explorer

# %% [markdown]
# ## 10. 实操命令：从布局到 Megatron-LM 参数，再从日志读回 MFU
#
# 搜索结果要落到框架参数上。`megatron_args` 把一个布局翻译成 Megatron-LM `pretrain_gpt.py` 的参数列表
# （数据并行度由框架用 world size /（$t \cdot p$）推出，不是参数）；128 个节点 × 8 卡的启动方式如下（第 21、24 章细讲 Slurm 与参数）：
#
# ```bash
# # 每个节点上由 srun 启动一次；MASTER_ADDR 为第一个节点
# torchrun --nnodes 128 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint $MASTER_ADDR:29500 \
#     pretrain_gpt.py --num-layers 96 --hidden-size 12288 --num-attention-heads 96 --seq-length 2048 \
#     --tensor-model-parallel-size 4 --pipeline-model-parallel-size 32 --sequence-parallel \
#     --recompute-granularity selective --use-distributed-optimizer \
#     --micro-batch-size 1 --global-batch-size 1536 --bf16 --log-throughput ...
# ```

# %%
best = result.best
print(" ".join(parallel.megatron_args(best.layout, seq_len=2048)))

# %% [markdown]
# 训练跑起来后，Megatron-LM 每隔 `--log-interval` 步打印一行日志。下面的样例**格式**取自 Megatron-LM
# `megatron/training/training.py` 的 `training_log`（开启 `--log-throughput`）；**数值是为本课程编写的示意值**。
# `labutil` 解析它，把实测的单步时间与模型比较：

# %%
print(parallel.MEGATRON_LOG_SAMPLE)

# %%
# NBVAL_CHECK_OUTPUT
logs = parallel.parse_megatron_log(parallel.MEGATRON_LOG_SAMPLE)
measured_s = sum(r.elapsed_ms for r in logs) / len(logs) / 1e3
model_flops = compute.train_flops_per_token(gpt3, 2048) * 1536 * 2048
measured_mfu = model_flops / (1024 * measured_s) / (h100.bf16_tflops * 1e12)
print(f"measured step {measured_s:.2f} s vs model {best.step_s:.2f} s (model {best.step_s / measured_s - 1:+.0%})")
print(f"measured MFU {measured_mfu:.1%} vs model {best.mfu:.1%}; log says {logs[-1].tflops_per_gpu:.0f} TFLOP/s/GPU")
print(f"efficiency that would reproduce the measurement: {parallel.DEFAULT_COMPUTE_EFFICIENCY * best.step_s / measured_s:.2f}")

# %% [markdown]
# 模型比「实测」快 12%：它没有计入 kernel 启动、优化器步、数据加载、掉队的卡（straggler）等开销。
# 工程上正确的用法是**用第一次实测校准效率参数**（这里约 0.61），再用校准后的模型比较其他布局，而不是迷信绝对值。
#
# ## 11. 常见误区（每一条都用算出来的数字反驳）
#
# ### 误区一：「TP 越大越好，跨节点也无所谓」
#
# 同样一次 $2sbh$ 的 all-reduce，在节点内 8 卡 NVLink 上和跨两个节点 16 卡（400G 网卡）上差一个数量级：

# %%
# NBVAL_CHECK_OUTPUT
msg = 2 * 2048 * 1 * 12288
t8 = comm.collective_time_s("all_reduce", msg, 8, h100.nvlink_gbs / 2, comm.NVLINK_STEP_LATENCY_S)
t16 = comm.collective_time_s("all_reduce", msg, 16, 50.0, comm.NET_STEP_LATENCY_S)
n_ar = 4 * 96 * 192 // 32   # all-reduces per GPU per step at pp=32, m=192
print(f"one TP all-reduce of {msg / 1e6:.0f} MB: tp=8 NVLink {t8 * 1e3:.2f} ms, tp=16 over 400G NICs {t16 * 1e3:.2f} ms "
      f"({t16 / t8:.0f}x)")
print(f"x {n_ar} all-reduces per step: {n_ar * t8:.2f} s vs {n_ar * t16:.2f} s")

# %% [markdown]
# ### 误区二：「流水线级数越多越好，反正能省显存」
#
# 级数加深而 micro-batch 不够时，气泡会吞掉大半算力。$p = 32$ 时：

# %%
# NBVAL_CHECK_OUTPUT
for m in (8, 32, 192):
    print(f"pp=32, m={m:3d}: {parallel.pipeline_bubble_fraction(32, m):5.1%} of the step is bubble")

# %% [markdown]
# ### 误区三：「数据并行最简单，卡够多就行」
#
# 175B 模型用纯数据并行（$t = p = 1$）在 1,024 张 H100 上：DDP 与 ZeRO-1/2 都放不下，只有 ZeRO-3 加全量重计算能装进显存——
# 但它的每一步都要在网络上 all-gather 两遍全部权重、reduce-scatter 一遍梯度，而且全量重计算多出三分之一的算力：

# %%
# NBVAL_CHECK_OUTPUT
pure_dp = [e for e in parallel.search_layouts(gpt3, 1024, "H100-SXM", 1024, include_infeasible=True)
           if e.layout.tp == 1 and e.layout.pp == 1]
fit = [e for e in pure_dp if e.fits]
best3d = parallel.search_layouts(gpt3, 1024, "H100-SXM", 1024).best
print(f"pure-DP candidates: {len(pure_dp)}, fitting: {len(fit)} ({', '.join(e.layout.label() for e in fit)})")
print(f"pure DP: step {fit[0].step_s:.2f} s, MFU {fit[0].mfu:.1%}; best 3D layout ({best3d.layout.label()}): "
      f"step {best3d.step_s:.2f} s, MFU {best3d.mfu:.1%}")

# %% [markdown]
# 能放下不等于跑得快：纯数据并行比 3D 并行慢得多。数据并行是 3D 并行的最外层，不是它的替代品。
#
# ### 误区四：「买了 8 张 H800，网络用 25G 以太网就够了」
#
# 种子课程 003 的误区一：8×H800 只配 25 Gb/s 以太网，做数据并行时梯度同步时间超过计算时间，GPU 利用率不足 30%。
# 用本章的模型算一个 4 节点 × 8 卡 H800 训练 Llama-2 7B 的例子（每节点一个 25 GbE 口由 8 卡共享，每卡 0.39 GB/s）：

# %%
# NBVAL_CHECK_OUTPUT
spec7 = models.transformer("llama2-7b")
lay7 = Layout(dp=32, tp=1, pp=1, micro_batch=1, global_batch=64, zero_stage=1)
for label, net in [("25 GbE shared by 8 GPUs", comm.per_gpu_net_bw_gbs(25, 1, 8)), ("400G NIC per GPU", 50.0)]:
    e = parallel.estimate_layout(spec7, lay7, 32, "H800-SXM", net_gbs=net)
    print(f"{label:24s}: compute {e.compute_s:5.2f} s, exposed DP sync {e.dp_exposed_s:6.2f} s, "
          f"GPU busy {e.compute_s / e.step_s:5.1%} of the step")

# %% [markdown]
# 25 GbE 下 GPU 只有不到 1% 的时间在算——比种子课程说的「不足 30%」还糟得多；换成每卡一个 400G 端口后约 62%（剩下的是只能与最后一个 micro-batch 重叠的梯度同步，第 14 章讨论如何改进）。
# 正确做法正如种子课程所说：先估算通信量，再反推所需带宽（第 14 章）。
#
# ## 12. 练习
#
# 把答案填进 `answer_k`，运行单元格查看判分；卡住时调用 `exercise("ch08.k").hint(1)`。
#
# **练习 1**：1F1B 流水线，$p = 16$，每步 64 个 micro-batch：气泡占总步时的百分比？

# %%
answer_1 = None
exercise("ch08.1").check(answer_1)

# %% [markdown]
# **练习 2**：GPT-3 175B，布局 $d = 16, t = 8, p = 8$，micro-batch 1，global batch 1536：每张卡每步为 TP all-reduce 发送多少 GB？

# %%
answer_2 = None
exercise("ch08.2").check(answer_2)

# %% [markdown]
# **练习 3**：用 `search_layouts` 搜索 GPT-3 175B 在 1,024 张 H100-SXM 上（global batch 1536，其余为默认值）的布局：最佳布局的 $t$ 是多少？

# %%
answer_3 = None
exercise("ch08.3").check(answer_3)

# %% [markdown]
# **练习 4**：32 张 H800（4 节点）对 Llama-2 7B 做纯数据并行 + ZeRO-1，micro-batch 1、global batch 64，
# 但每节点只有一个 25 GbE 口（每卡 0.39 GB/s）：GPU 在一步中计算的时间占比是百分之几？

# %%
answer_4 = None
exercise("ch08.4").check(answer_4)

# %% [markdown]
# ## 13. 小结
#
# - DP 切数据、每步同步一次梯度；TP 切矩阵、每层 4 次 all-reduce，必须在 NVLink 内；SP 不加通信、把剩余激活除以 $t$；
#   PP 切层、代价是 $(p-1)/m$ 的气泡；EP 切专家、代价是 all-to-all。
# - 3D 并行的经验法则：TP 在节点内，PP 跨节点，DP 在最外层；$m \gg p$。
# - `search_layouts` 把显存约束与单步时间模型合起来：GPT-3 175B 在 1,024 张 H100 上的最佳布局是 $t=4, p=32, d=8$（ZeRO-1 + SP + 选择性重计算），模型 MFU 约 53%。
# - 模型给出排序与量级，实测用来校准效率参数。
#
# ## 参考资料
#
# - D. Narayanan et al., *Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM*, SC 2021（arXiv:2104.04473）：§2.2 气泡与交错调度，§2.3 TP 通信，§3 并行组合的经验，§4.1 scatter/gather，表 1。
# - M. Shoeybi et al., *Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism*, 2019：张量并行的 f/g 算子。
# - V. Korthikanti et al., *Reducing Activation Recomputation in Large Transformer Models*, MLSys 2023：序列并行 §4.2.2。
# - S. Rajbhandari et al., *ZeRO*, SC 2020：§7 通信量；DeepSpeed 文档（Pipeline Parallelism：ZeRO-2/3 不与 PP 同用）。
# - Y. Huang et al., *GPipe*, NeurIPS 2019；D. Lepikhin et al., *GShard*, 2020 与 W. Fedus et al., *Switch Transformers*, 2021（MoE 与专家并行的 all-to-all）。
# - P. Patarasuk, X. Yuan, *Bandwidth optimal all-reduce algorithms for clusters of workstations*, JPDC 2009；R. Thakur et al., *Optimization of Collective Communication Operations in MPICH*, 2005（α-β 模型，见第 13 章）。
# - Megatron-LM 源码：`megatron/training/arguments.py`（并行参数名）、`megatron/training/training.py`（日志格式）。
# - NVIDIA H100 / H800 Datasheet（NVLink 900 / 400 GB/s 双向）；NVIDIA ConnectX-7 产品简介（400 Gb/s）。
# - 课程种子材料：《AI训练推理集群》课程导入（512~2048 卡 3D 并行、每 GPU 至少 1 个 400G 端口、8×H800 配 25G 以太网的误区）；《AI算力集群》课程导入（有效算力为峰值的 40%～70%）。
