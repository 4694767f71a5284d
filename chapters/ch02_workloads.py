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
# # 第2章 应用场景与负载画像
#
# > 模块一「全局认知与容量规划」的第 2 章。前置：第 1 章（有效算力、扩展效率）。
# > 本章把「不同场景对集群的要求不同」这句话变成可以计算、可以比较的**负载画像**，后面的第 4 章（算力）、
# > 第 7 章（显存）、第 14 章（带宽）、第 16–18 章（存储）会把画像里的每一个轴展开成一整章。
#
# ## 学习目标
#
# - 认识七类典型负载：大模型预训练、微调与对齐、多模态训练、科学计算、自动驾驶仿真、推荐推理、数据处理，以及三份种子材料对它们的描述；
# - 理解为什么模型规模的增长远远超过单卡能力，从而让「集群」成为刚需（用算出来的数字说明）；
# - 用同一组模型把一个负载换算成需求：规模、每卡网络带宽、显存压力、存储吞吐、小文件速率、延迟、FP64、调度频度；
# - 区分训练集群与推理集群的设计哲学，并能说出一个负载的「第一瓶颈」应该先投资在哪里。

# %%
from labutil.notebook import setup, show_table
from labutil import workloads, compute, hardware, models, comm, units
from labutil.cluster import Cluster
from labutil.explore import workloads as workloads_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 为什么算力集群成了刚需
#
# 三个驱动力共同把训练从「一台服务器」推向「一个集群」：
#
# 1. **模型规模的增长远超单卡**。从 2012 年 AlexNet 的约 6,000 万参数、2018 年 BERT-Large 的约 3 亿参数，
#    到 2020 年 GPT-3 的 1,750 亿参数，再到万亿参数级别的模型。同一时期单卡显存只从 3 GB（训练 AlexNet 的 GTX 580）涨到 80–192 GB。
# 2. **数据规模的爆发**：可用训练数据从 TB 级升到 PB 级，Llama 3 的预训练语料超过 15 万亿 token。
# 3. **经济性约束**：一次大模型训练动辄数百万美元；单卡训练要几十上百年，千卡集群把它压缩到几周。
#
# 先把第一条算清楚。种子材料说「参数量增长了约 10 万倍」；我们用具体数字核对一下：

# %%
# NBVAL_CHECK_OUTPUT
alexnet, bert_large, gpt3 = 60e6, 340e6, models.transformer("gpt3-175b").params()
print(f"GPT-3 params (computed from its shape): {gpt3 / 1e9:.1f} B")
print(f"AlexNet -> GPT-3: {gpt3 / alexnet:,.0f}x;  AlexNet -> 1 T params: {1e12 / alexnet:,.0f}x")
print(f"BERT-Large -> GPT-3: {gpt3 / bert_large:,.0f}x")
print(f"params that would be 100,000x AlexNet: {100_000 * alexnet / 1e12:.0f} T")

# %% [markdown]
# 从 AlexNet 到万亿参数模型是约 1.7 万倍；「10 万倍」对应的是 6 万亿参数——数量级的判断没错（四到五个数量级），
# 但作为工程师，我们习惯把这类说法换成可以核对的数字。另一方面，**训练算力**的增长比参数量更快，
# 因为数据量也同时在涨（$C \approx 6ND$，第 4 章）。单卡训练要多久？

# %%
# NBVAL_CHECK_OUTPUT
gpt3_flops = compute.train_flops(175e9, 300e9)          # 6·N·D, Brown et al. 2020
for gpu, n in [("A100-80G-SXM", 1), ("H100-SXM", 1), ("H100-SXM", 1024)]:
    days = compute.time_to_train_s(gpt3_flops, n, hardware.gpu(gpu).bf16_tflops, 0.40) / 86400
    print(f"GPT-3 (3.15e23 FLOPs) on {n:5d} x {gpu:<12} at MFU 0.40: {days:10,.1f} days ({days / 365:6.1f} years)")

# %% [markdown]
# 一张 A100 要 80 年，一张 H100 要 25 年；1,024 张 H100 只要 9.0 天（都是 MFU 0.40 的理想值，第 4 章会讲 MFU 怎么定）。Meta 为训练 LLaMA 系列建设的
# Research SuperCluster（RSC）初期就部署了 6,080 张 A100，国内头部 AI 公司的训练集群普遍在千卡到万卡规模。
#
# ## 2. 三份种子材料里的场景表
#
# 三份课程导入材料各自总结了一张场景表，角度不同：第一张按「关键瓶颈」，第二张按「部署形态」，第三张按「负载特征」。
# 它们是本章的出发点，我们原样列出：

# %%
tables = workloads.seed_tables()
show_table([dict(zip(tables[0]["columns"], row)) for row in tables[0]["rows"]])

# %%
show_table([dict(zip(tables[1]["columns"], row)) for row in tables[1]["rows"]])

# %%
show_table([dict(zip(tables[2]["columns"], row)) for row in tables[2]["rows"]])

# %% [markdown]
# 这些表写的是经验结论：「预训练的瓶颈是通信带宽和显存」「多模态的瓶颈是数据 IO」「推理延迟敏感」。
# 经验结论的问题在于无法外推：**多少**带宽？数据 IO 要**多少** GB/s？换一个模型尺寸还成立吗？
# 本章接下来为每个场景设定一个有代表性的作业（参数写在 `labutil/data/workloads.toml`，是课程作者给出的示例，
# 不是某个公司的真实作业），然后用后面章节会详细讲解的模型把它换算成需求。
#
# ## 3. 负载画像：八个轴，每个都是算出来的
#
# | 轴 | 含义 | 怎么算 | 详见 |
# |---|---|---|---|
# | 规模 | 一个作业用多少卡 | 直接给定 | 第 4 章 |
# | 网络 | 数据并行同步要达到 90% 扩展效率，每卡需要多少 Gb/s | ring all-reduce 的 α-β 模型反解带宽 | 第 13、14 章 |
# | 显存 | 一份完整的训练状态（或推理权重）相当于几张卡的显存 | 混合精度 Adam 每参数 16 字节；推理 BF16 权重 2 字节 | 第 7 章 |
# | 存储吞吐 | 整个作业的聚合读带宽 | 每卡读速率 × 卡数 | 第 16、18 章 |
# | 小文件 | 每秒打开多少个文件（IOPS 压力） | 每卡文件速率 × 卡数 | 第 16、18 章 |
# | 延迟 | 一次「同步交互」允许多久：在线服务的 SLO，或同步训练/MPI 每步留给通信的预算 | 1 / 时间预算 | 第 13、25 章 |
# | FP64 | 是否需要双精度 | 给定 | 第 6 章 |
# | 调度频度 | 每天启动多少个作业 | 给定 | 第 21 章 |
#
# 其中「网络」一轴值得多说两句。数据并行每一步都要把梯度做一次 all-reduce。在 $n$ 个数据并行副本之间，
# ring all-reduce 的时间是
#
# $$
# t_{\text{sync}} = 2(n-1)\,\alpha + \frac{2(n-1)}{n}\cdot\frac{S}{B},
# $$
#
# 其中 $S$ 是每步要同步的字节数（梯度字节数 × 本卡持有的参数数），$\alpha$ 是每一步的延迟，$B$ 是环能跑出的带宽（busbw）。
# 每个梯度占几个字节，取决于框架怎么配：画像表按 BF16（2 字节）算，和第 14 章一样是**乐观**的一侧；
# Megatron-LM 在 BF16 训练时默认把梯度的累加和 all-reduce 放在 FP32（`--accumulate-allreduce-grads-in-fp32`，BF16 下自动打开），
# PyTorch 用 `torch.autocast` 做混合精度时参数和梯度都留在 FP32，DDP 同步的也是 4 字节的梯度。这时 $S$ 翻倍，所需带宽也翻倍（表格下面的输出，和第 3.1 节的 Llama 3）。
# $B$ 不是简单的「每卡网卡速率」：NCCL 为每块网卡（每条「轨道」）建一个环，一个数据并行组在一台服务器上有 $q$ 个 rank 时，
# 它的环离开这台服务器时能用上 $q$ 块网卡，所以 $B = \min(\text{NVLink 环},\ q \times \text{每卡网卡的可达带宽})$（网卡约能跑到线速的 96%）。
# 纯数据并行 $q = 8$；用了张量/流水线并行、一个副本占满一台以上服务器时 $q = 1$。画像用的就是课程统一的集群模型 `labutil.cluster`（第 13、14 章）；
# 数据并行组很大时，NCCL 还会改用延迟只有 $\log_2$ 级的 tree。
# 不做计算通信重叠时，扩展效率 $\eta = t_c / (t_c + t_{\text{sync}})$，$t_c$ 是一步的计算时间。要让 $\eta \ge 90\%$，通信预算只有
# $t_c\,(1/0.9 - 1) \approx 0.11\,t_c$，于是可以反解出 $B$——这就是种子材料说的「先估算通信量，再反推所需网络带宽」。
# 同一个预算也定义了「延迟」一轴：在线服务的时间预算是它的 SLO，同步作业的时间预算就是这 $0.11\,t_c$——
# 预算越短，每一步通信里固定的延迟 $\alpha$ 就越要紧。
#
# 下表是七个代表作业在每卡 400 Gb/s 网络下算出来的画像。`t_c_s` 是代表作业一步的计算时间（写在 `workloads.toml` 里，练习 3 要用），
# `budget_ms` 是上面定义的时间预算，`need_Gbps_per_GPU` 是按 BF16 梯度、达到 90% 效率每卡要的线速（`<1` 表示消息太小、带宽不是问题）：

# %%
show_table(workloads.profile_table(400))

# %% [markdown]
# 几个值得停下来看的数字：
#
# - **预训练**：70B 模型的一份完整训练状态相当于 14 张 H100 的显存——这就是「显存容量」成为瓶颈的含义，
#   也是它必须用张量并行 + 流水线并行（这里 32 路）的原因。切分之后，数据并行副本之间每步只同步 1/32 的梯度，
#   但每个数据并行组在一台服务器上只有一个 rank、只能走一条轨道：要 90% 效率，每卡约需 109 Gb/s。
# - **微调**：8B 模型在 32 张卡上做纯数据并行，每步同步完整的 BF16 梯度（约 16 GB）——但 8 个 rank 在同一台服务器上，
#   8 条环各走一块网卡，服务器的 8 块网卡一起干活，要 90% 效率每卡约需 97 Gb/s，和预训练相当。
#   网卡若是整台服务器共享一块（第 14 章种子 003 的情形），这 8 倍就没有了。实践中微调还常放在一两台 NVLink 服务器内部、
#   或用 ZeRO/FSDP 加计算通信重叠、或用 LoRA 只训练少量参数——这都是在绕开网络。
# - **多模态**：每秒约 204,800 个文件、约 30.7 GB/s 的聚合读带宽。瓶颈不是 GPU，而是存储的 IOPS 和数据流水线（第 16、18 章）；
#   它的网络需求也是三个训练负载里最高的：一个副本占 4 张卡（TP = 4），一台服务器上只有 2 个 rank，环只能用上 2 块网卡，而一步只算 2 s。
# - **推荐推理**：50 ms 的延迟目标和每天数十次的扩缩容，要的是弹性和调度，而不是带宽。
# - **科学计算**：每卡不到 1 Gb/s 的带宽需求，却只有 5.56 ms 的通信预算（一步算 50 ms）——表里最短的时间预算，
#   比推荐推理的 SLO 还紧一个数量级。它要的是低延迟，第 5 节会算清楚延迟到底多要紧。
#
# 梯度改按 FP32 归约（Megatron-LM 与 PyTorch AMP 的默认）时，三个训练负载要的带宽都翻倍，400 Gb/s 下的效率也随之下降：

# %%
# NBVAL_CHECK_OUTPUT
for key in ("llm-pretrain", "finetune", "multimodal"):
    b, f = (workloads.profile(workloads.workload(key, grad_bytes=g)) for g in (2, 4))
    print(f"{key:<13}: need {b.required_gbps:4.0f} Gb/s per GPU with BF16 gradients, {f.required_gbps:4.0f} with FP32; "
          f"efficiency at 400 Gb/s {b.scaling_efficiency:.0%} -> {f.scaling_efficiency:.0%}")

# %% [markdown]
# 多模态负载在 FP32 下要的带宽超过了 400 Gb/s 的线速：不做计算通信重叠时，它到不了 90%。实际训练会把梯度同步与反向计算重叠
# （DDP 的梯度桶、FSDP 的预取，第 14、24 章），这些数字是「完全不重叠」的上界，用来比较负载之间的差别和定位第一瓶颈。
#
# 预训练的「存储吞吐」一轴在表里很小，但这只是**读**。预训练对存储真正的峰值需求来自写检查点：一份 70B 模型的完整检查点
# （BF16 权重 + FP32 主权重 + Adam 两个矩，每参数 14 字节，第 17 章）要在几十秒内落盘，否则每次保存都让两千张卡停下来等：

# %%
# NBVAL_CHECK_OUTPUT
from labutil import storage
pre = workloads.profile(workloads.workload("llm-pretrain"))
pre_read_gbs, n_params = pre.read_gbs, pre.workload.model_params
ckpt_gb = n_params * sum(storage.checkpoint_breakdown(n_params).values()) / 1e9
print(f"llm-pretrain: data read {pre_read_gbs:.2f} GB/s; one checkpoint {ckpt_gb:.0f} GB -> "
      f"{ckpt_gb / 60:.1f} GB/s to write it in 60 s ({ckpt_gb / 60 / pre_read_gbs:,.0f}x the read rate)")

# %% [markdown]
# 写带宽需求比读带宽高两个数量级以上（倍数见上面的输出），而且是周期性的突发。这就是为什么画像只是需求推导的起点：每个轴背后还要问「峰值在哪里」，
# 第 16、17 章会把检查点写入单独作为存储选型的依据。
#
# 把其中四个画在同一张雷达图上，它们的「形状」一目了然。注意科学计算（MPI）：网络一轴几乎为零，延迟一轴却是四个里最高的——
# 它的瓶颈不是带宽，而是每一步通信里的固定延迟（第 5 节）：

# %%
workloads_x.radar_figure()

# %% [markdown]
# ### 3.1 从负载到需求：用一个公开的真实作业走一遍
#
# 代表作业是示例，真实作业的数字怎么来？Llama 3 论文（Meta, 2024）公开了 405B 模型在 16,384 张 H100 上的并行配置（表 4）：
# 张量并行 TP = 8、流水线并行 PP = 16、数据并行 DP = 128（序列长度 8K 时），每张卡实际跑到约 400 TFLOPs（BF16 MFU 约 41%），
# 训练后期的全局 batch 是 16M token。这几个数字足以推出它对网络的需求，推理过程就是本章画像的「网络」一轴：
#
# 1. TP = 8 正好填满一台服务器，张量并行的大量激活通信全部走 NVLink，不上网络——这是 TP 不跨服务器的原因。
# 2. 每张卡持有 $405\text{B} / (8 \times 16)$ ≈ 3.2B 参数的分片，要在 128 个数据并行副本之间同步。论文 §3.3.2 写明了两个细节：
#    为了收敛稳定，梯度在数据并行副本之间**以 FP32 做 reduce-scatter**（FSDP），所以每步要归约的是 4 字节 × 3.2B ≈ 12.7 GB，
#    是画像表按 BF16 口径算出的两倍；权重分片在前向之后不重新切分，所以每步还有一次 BF16 权重的 all-gather（约 6.3 GB）。
# 3. 一个数据并行组在每台服务器上只有 1 个 rank（$q = 1$），它的环离开服务器时只能用一条轨道，所以 $B$ 不是 370 GB/s，而是一块网卡的约 48 GB/s。
# 4. 和一步的计算时间比：一步算 $6 N D_{\text{step}}$ FLOPs，平摊到 16,384 张卡上（按论文公布的每卡 400 TFLOPs 折算，不是模型估计）。

# %%
# NBVAL_CHECK_OUTPUT
# Llama 3 paper (arXiv:2407.21783) Table 4 row 2 and §3.3.2, through the course's cluster model
llama = Cluster.system("DGX-H100", n_nodes=2048)
for q in (1, 8):
    print(f"DP ranks per node {q}: all_reduce busbw {llama.expected_busbw_gbs('all_reduce', 128, ranks_per_node=q):3.0f} GB/s")
t = workloads.llama3_405b_dp_traffic()
print(f"params per GPU {t.params_per_gpu / 1e9:.2f} B: FP32 gradients {t.grad_fp32_gb:.1f} GB, BF16 weights {t.weights_bf16_gb:.1f} GB")
print(f"compute step (published 400 TFLOP/s per GPU): {t.step_s:.2f} s")
for what, sync in [("all-reduce of BF16 gradients (the optimistic count)", t.allreduce_bf16_s),
                   ("all-reduce of FP32 gradients", t.allreduce_fp32_s),
                   ("FSDP as run: FP32 reduce-scatter + BF16 all-gather", t.fsdp_s)]:
    print(f"{what:<52}: {sync:.2f} s = {sync / t.step_s:5.1%} of the compute step")

# %% [markdown]
# 一步计算约 5.93 s。按 FP32 梯度算，all-reduce 约 0.74 s、占计算时间的 12.5%（PyTorch DDP 的 25 MiB 桶）；Meta 实际的做法（FP32 reduce-scatter 加一次 BF16 all-gather）
# 约 0.40 s、6.7%；按画像表的 BF16 口径算只有 FP32 的一半。精度的选择直接把数据并行的字节数翻了一倍——估算网络需求时，
# 先问清楚「同步的是什么精度的什么」。不过结论没有变：按实际做法，这部分通信不到计算时间的一成，FSDP 还会在反向时边算边 reduce-scatter、提前预取权重，几乎看不见。
# 这说明两件事：第一，3D 并行把数据并行的通信压得很小，大模型预训练真正吃网络的是**流水线并行的点对点通信**和**大规模时的延迟与尾延迟**，
# 而不是梯度同步的带宽；第二，「每卡 400G」的价值在于给所有并行方式和所有规模留足余量——同一个集群明天可能跑 8B 模型的纯数据并行，
# 那时 8 条轨道同时工作（上面输出里 ranks per node 8 的那一行）才是关键。
#
# 反过来看，同一篇论文也说明了为什么规模本身就是需求：Llama 3 405B 训练期间 54 天里有 419 次意外中断，平均约每 3 小时一次（第 27 章）。
# 对一个「大而长」的作业，画像上除了八个轴，还隐含着第九个需求——**可恢复性**：检查点写得够快（第 17 章）、坏节点能自动隔离、作业能自动重启（第 27 章）。
# 字节跳动的 MegaScale（NSDI 2024）在 12,288 张 GPU 上训练 175B 模型达到 55.2% 的 MFU，论文除了通信优化，还用专门的章节讲故障检测、诊断与快速恢复——规模越大，可恢复性越是一项和带宽同等重要的设计需求。
#
# 同一批 GPU、不同的网络，各类训练负载的扩展效率差别有多大？下图对每一个需要同步梯度的负载，
# 把每卡网络从 25 Gb/s 换到 800 Gb/s：

# %%
workloads_x.efficiency_vs_link_figure()

# %% [markdown]
# ## 4. 自己动手：改变规模与网络
#
# 在探索器里选择一个场景（GPU 数量会跳回该场景代表作业的规模，和上面的表一致），拖动 GPU 数量、切换每卡网络带宽，看画像和扩展效率如何变化。建议试试：
#
# 1. 把「多模态训练」从 512 卡拖到 4,096 卡：数据并行副本增多，但每副本的梯度不变，效率几乎不变——ring 的带宽项 $2(n-1)/n \cdot S/B$ 几乎与 $n$ 无关；
# 2. 选「微调」，把滑块拖到最左端的 8 张卡：一台服务器内，同步只走 NVLink，右图五根柱子一样高——网卡速率与它无关；再拖回 32 张，把网络切到 25 Gb/s，看效率掉到多少；
# 3. 选「科学计算」，把网络从 400 切到 25 Gb/s：效率几乎不动——它缺的不是带宽，而是延迟（摘要里的「每步通信预算」）；
# 4. 回到「预训练」，把「梯度归约精度」从 BF16 切到 FP32：摘要里每卡同步的字节数和所需带宽一起翻倍，25 Gb/s 那根柱子掉得最多。

# %%
explorer = workloads_x.workload_explorer()
explorer

# %% [markdown]
# ## 5. 训练集群 vs 推理集群：两种设计哲学
#
# 训练集群与推理集群可以共享底层硬件，但设计哲学截然不同：
#
# | | 训练集群 | 推理集群 |
# |---|---|---|
# | 追求 | 高带宽、低延迟的集合通信（All-Reduce） | 吞吐与响应延迟的平衡 |
# | 原因 | 每轮迭代都要同步梯度，网络直接决定 GPU 利用率 | 每个请求独立，靠批处理、量化、模型并行提升吞吐 |
# | 网络 | InfiniBand / RoCE，每卡 400 Gb/s 级 | 带宽要求低于训练，RoCE 或以太网即可 |
# | 调度 | 长作业、整机分配、拓扑感知 | 弹性伸缩、GPU 共享、频繁扩缩容 |
# | 关键指标 | MFU、扩展效率、goodput | P99 延迟、QPS、每美元吞吐 |
#
# 种子材料中的三个部署形态正好对应这张表：LLM 训练集群（512–2,048 张 GPU，3D 并行，种子写的是「必须 InfiniBand」、每卡至少一个 400G 端口，
# 检查点单次可达数百 GB——更准确地说是必须有 RDMA 网络：Llama 3 405B 就是在 RoCE 集群上训练的，第 3、11 章）；CV/多模态推理集群（8–32 张 GPU，K8s 弹性伸缩，RoCE 即可，P99 < 100 ms、吞吐 > 1,000 QPS）；
# 科研机构混合负载集群（64–128 张 GPU，训练推理混跑，核心挑战是资源隔离与优先级，避免推理被训练「饿死」）。
# 第 25 章会把「P99 < 100 ms、> 1,000 QPS」换算成所需的 GPU 数量，第 21 章会用调度模拟重现「饿死」现象。
#
# 推理负载的「需求推导」和训练不同：决定要几张卡的，往往不是算力，而是**显存里放不放得下权重加上所有并发请求的 KV cache**。
# 以 Llama 3 70B 为例（80 层、8 个 KV 头、头维 128，BF16）：权重 141 GB，已经超过一张 H100 的 80 GB；每个 token 的 KV cache 是
# $80 \times 2 \times 8 \times 128 \times 2$ 字节 = 320 KiB，32 个并发请求、每个 8K 上下文，KV cache 就要 86 GB——比权重的一半还多。
# 所以推理集群的选型顺序是：先由模型和上下文长度算显存，得出张量并行度（一台 8 卡服务器、TP = 8），再由延迟目标定批大小，最后由 QPS 定副本数：

# %%
# NBVAL_CHECK_OUTPUT
from labutil import inference
m70 = "llama3-70b"
print(f"{m70}: weights {inference.weights_gb(m70, 'bf16'):.0f} GB BF16, KV {inference.kv_bytes_per_token(m70) / 1024:.0f} KiB per token, "
      f"32 requests x 8K context = {inference.kv_cache_gb(m70, 32, 8192):.0f} GB of KV cache")
print(f"8 x H100 with TP 8: at most {inference.max_batch(m70, 'H100-SXM', 8192, tp=8)} concurrent 8K-token requests")

# %% [markdown]
# 一台 8×H100 最多同时服务约 162 个 8K 上下文的请求；要更多并发就加副本，而副本之间不需要同步梯度——这就是推理集群「网络要求低于训练」的定量原因，
# 也是第 25 章容量规划的起点。
#
# 自动驾驶仿真和多模态数据处理又是一种形态：成百上千个互相独立的任务，彼此之间不通信。它们对集群的要求全在 GPU 之外——
# 存储的读带宽、小文件的打开速率，以及调度器每天要启动多少个作业。平均同时在跑的作业数可以用 Little 定律估出来：
# 平均并发 = 每天启动的作业数 × 每个作业跑多少天。

# %%
# NBVAL_CHECK_OUTPUT
for key in ("ad-simulation", "data-processing"):
    p = workloads.profile(workloads.workload(key))
    w = p.workload
    running = w.jobs_per_day * w.run_days                     # Little's law: arrival rate x time in system
    print(f"{key:<15}: {w.gpus} x {w.gpu}, read {p.read_gbs:4.1f} GB/s, {p.files_per_s:7,.0f} files/s, "
          f"a job starts every {24 * 60 / w.jobs_per_day:3.1f} min, {running:.0f} jobs running on average "
          f"(~{w.gpus / running:.0f} GPUs each)")

# %% [markdown]
# 几分钟就启动一个作业，意味着调度器的吞吐、容器镜像的拉取（第 20 章）和作业的启动时间都成了集群吞吐的一部分——这就是种子表里
# 「多任务并行、数据吞吐」「GPU 虚拟化、容器化调度、数据流水线」的定量含义：一个作业只用几张到十来张卡，GPU 切分（MIG）和按作业动态分配（第 21、29 章）
# 比大规模互联更要紧。每秒几十万次的文件打开则要靠元数据性能强的并行文件系统，或者把小文件打包成大文件（第 16、18 章）；
# 数据处理里的解码、清洗多半跑在 CPU 上，所以种子表给它配的是「CPU 密集型节点、大内存」（第 18 章会算 CPU 解码要多少核）。
#
# 科学计算是另一种形态：它需要 FP64，而且通信以小消息为主，**延迟**比带宽更要紧。拿代表作业的一次 1 MB 全局归约来算
# （512 个进程、64 台 DGX A100，每个进程分到一条 HDR 200G 轨道的约 24 GB/s），比较三种 all-reduce 算法：
#
# | 算法 | 时间（p 个进程，n 字节） | 谁在用 |
# |---|---|---|
# | ring | $2(p-1)\,\alpha + \frac{2(p-1)}{p}\cdot\frac{n}{B}$ | NCCL 的大消息算法：带宽最优，但延迟项随 $p$ **线性**增长 |
# | recursive doubling | $\log_2 p\,\alpha + \log_2 p\cdot\frac{n}{B}$ | MPICH 对 ≤ 2 KB 的消息 |
# | Rabenseifner | $2\log_2 p\,\alpha + \frac{2(p-1)}{p}\cdot\frac{n}{B}$ | MPICH 对更大的消息：树的延迟、环的带宽 |
#
# 每步延迟 $\alpha$ 分别取 InfiniBand 上的约 5 μs 与 TCP 以太网上的约 50 μs（示意值，含软件开销），计算一步 50 ms。
# 网卡本身的延迟要小得多（ConnectX-6 手册写的是 600 ns 以内），$\alpha$ 里还有 MPI 软件栈、PCIe 和交换机的每一跳，所以 5 μs 是偏保守的取值；
# 在你自己的集群上，用 OSU Micro-Benchmarks 的 `osu_latency` 量出点对点延迟，代入 `workloads.mpi_allreduce_time_s` 即可。

# %%
# NBVAL_CHECK_OUTPUT
bw = Cluster.system("DGX-A100").net_gbs_per_gpu                 # one HDR 200G rail per GPU x 0.96
mpich = workloads.mpich_allreduce_algo(1e6)
for name, alpha in [("InfiniBand", 5e-6), ("TCP Ethernet", 50e-6)]:
    for algo in workloads.MPI_ALLREDUCE_ALGOS:
        t = workloads.mpi_allreduce_time_s(1e6, 512, bw, alpha, algo)
        lat = workloads.mpi_allreduce_time_s(0, 512, bw, alpha, algo)   # the alpha terms alone
        print(f"{name:<12} {algo:<18}: 1 MB over 512 ranks {t * 1e3:6.2f} ms (alpha terms {lat / t:4.0%}), "
              f"efficiency {comm.scaling_efficiency(0.05, t):6.1%}" + ("   <- MPICH's pick" if algo == mpich else ""))
print(f"8-byte all-reduce (one dot product), recursive doubling: "
      f"{workloads.mpi_allreduce_time_s(8, 512, bw, 5e-6, 'recursive_doubling') * 1e6:.0f} us on InfiniBand, "
      f"{workloads.mpi_allreduce_time_s(8, 512, bw, 50e-6, 'recursive_doubling') * 1e6:.0f} us on TCP")

# %% [markdown]
# 三件事：
#
# 1. **ring 是大消息算法**。1 MB 在 512 个进程上用 ring，1,022 步延迟把时间拉到 5 ms（InfiniBand）和 51 ms（TCP），效率 91% 和 49%。
#    NCCL 在这种规模、这种大小下也不会选 ring（它有 tree，第 13、15 章）；MPI 更不会：MPICH 对 1 MB 选 Rabenseifner，只有 18 步延迟。
# 2. **换了对的算法，延迟仍然是主要成本**。Rabenseifner 在 TCP 上的时间里，α 项占了九成：把带宽翻倍几乎没用，把 α 减半几乎让时间减半。
#    在 TCP 上 recursive doubling 反而比 MPICH 的选择更快——MPICH 的 2 KB 门限是一个固定的默认值，不随网络的 α 变化，这正是 MPI 库要按网络调参的原因（Open MPI 的 `coll_tuned` 同理）。
# 3. **真正的科学计算消息更小**。迭代求解器（共轭梯度）每一轮要做两次 8 字节的全局点积，每次都是纯延迟：TCP 上是 InfiniBand 的 10 倍。
#    每一轮的计算量越小，这两次点积占的比例就越大。这就是种子表里「科学计算：双精度算力、低延迟通信」「专用网络拓扑」的定量含义，
#    也是画像里它的延迟一轴最高、网络一轴几乎为零的原因。InfiniBand 交换机的 SHARP 还能在网络里直接做归约，把这类小消息 all-reduce 的
#    延迟步数再压下去（第 13 章）。
#
# ## 6. 实操命令：给一个正在运行的负载「画像」
#
# 画像里的数字在生产环境中都可以测出来。下面这些命令在后续章节会详细讲解，这里先建立印象：
#
# ```bash
# nvidia-smi dmon -s um -d 5          # 每 5 秒一行：SM 利用率、显存带宽利用率（判断算力是否被喂饱）
# dcgmi dmon -e 1002,1003,1005        # DCGM：SM 活跃度、SM 占用率、DRAM 活跃度（第 26 章）
# ibstat; perfquery -x                # 网卡速率与端口收发计数器（第 11、23 章）
# iostat -x 5                         # 存储设备的吞吐、IOPS、队列深度（第 16 章）
# sacct -S today --format=JobID,Start,Elapsed,AllocTRES   # 今天启动了多少作业（调度频度，第 21 章）
# ```
#
# 例如 `nvidia-smi dmon -s um` 的输出：`-s u` 是利用率组（sm、mem、enc、dec，R525 之后的驱动还有 jpg、ofa），`-s m` 是显存组（fb、bar1，R550 之后还有 ccpm），
# 每个采样周期每张卡一行。课程自带一段这种格式的示例（列名取自真实驱动，数值是示意的：一台被数据加载卡住的训练节点），用 `labutil` 解析并按卡求平均：

# %%
# NBVAL_CHECK_OUTPUT
from labutil.parsers import parse_nvidia_smi_dmon, sysstat
dmon = parse_nvidia_smi_dmon(sysstat.SAMPLE_DMON_UM)
print("columns:", " ".join(dmon.columns))
for g in dmon.gpus:
    print(f"GPU {g}: mean sm {dmon.mean('sm', g):4.1f} %, mean mem {dmon.mean('mem', g):4.1f} %, "
          f"fb {max(r.fb_mib for r in dmon.rows if r.gpu == g):,.0f} MiB")

# %% [markdown]
# 四张卡的 sm 都只有 40% 左右，显存（fb 列）却占了约 61,000 MiB：模型放得下，但 GPU 有一半以上的时间没有 kernel 在跑。注意 sm 列的含义是
# 「采样周期内至少有一个 kernel 在跑的时间比例」，不是 SM 的占用率——它到了 100% 也不代表算力被喂饱（通信 kernel 在等待时也算「在跑」，第 14 章），
# 但它低到 40% 几乎一定说明 GPU 在等：等数据（第 18 章）、等通信，或者 batch 太小。画像里的「存储吞吐」一轴，就是为了避免这种情况而算的。
#
# ## 7. 常见误区
#
# ### 误区一：「算力集群只服务于大模型训练」
#
# 种子材料强调，算力集群覆盖 AI 生命周期的多个阶段：微调、推理、数据处理同样吃集群资源，而且需求形状完全不同。
# 用画像比较「预训练」和「多模态数据处理」在存储上的需求：

# %%
# NBVAL_CHECK_OUTPUT
pre = workloads.profile(workloads.workload("llm-pretrain"))
dp_ = workloads.profile(workloads.workload("data-processing"))
print(f"aggregate read: pre-training {pre.read_gbs:.2f} GB/s vs data processing {dp_.read_gbs:.0f} GB/s "
      f"({dp_.read_gbs / pre.read_gbs:,.0f}x), files/s: {pre.files_per_s:.0f} vs {dp_.files_per_s:,.0f}")

# %% [markdown]
# 只有 128 张卡的数据处理作业，对存储的读带宽需求比两千卡的预训练高三个数量级（倍数见上面的输出）。按预训练设计的集群，直接拿来做数据处理会被存储卡死。
#
# ### 误区二：「给每个场景都配最好的网络就不会错」
#
# 推荐推理、自动驾驶仿真、数据处理这三个负载在画像里的网络需求都是「不需要跨节点同步」：把预算花在 400 Gb/s
# InfiniBand 上，对它们的吞吐没有任何帮助，而同样的钱可以换成更多推理卡、更快的存储或更多 CPU 核。
# 反过来，微调负载对网络很敏感：

# %%
# NBVAL_CHECK_OUTPUT
for key in ("finetune", "recsys-inference"):
    effs = [workloads.profile(workloads.workload(key), g).scaling_efficiency for g in (25, 400)]
    print(f"{key:<17}: scaling efficiency at 25 Gb/s {effs[0]:.0%}, at 400 Gb/s {effs[1]:.0%}")

# %% [markdown]
# 微调在每卡 25 Gb/s 下的扩展效率只有 70%，到 400 Gb/s 是 97%。网络投资的回报完全取决于负载画像：同一个升级，对一类负载是 1.4 倍的吞吐，对另一类是零。
#
# ## 8. 练习
#
# 卡住时先调用 `exercise("ch02.1").hint(1)`（把编号换成题号）看提示；所有答案都由本章用到的同一组模型算出。
#
# **练习 1**：按 6·N·D 计算，GPT-3（175B 参数，300B token）在一张 A100 80GB（BF16 稠密峰值见目录）上、MFU 0.40 时要训练多少**年**？（按 365 天/年）

# %%
answer_1 = None
exercise("ch02.1").check(answer_1)

# %% [markdown]
# **练习 2**：代表作业「多模态模型训练」（512 张卡，每卡每秒读 60 MB）需要的聚合读带宽是多少 GB/s？

# %%
answer_2 = None
exercise("ch02.2").check(answer_2)

# %% [markdown]
# **练习 3**：代表作业「模型微调与对齐」在每卡 100 Gb/s 网络下（不做重叠）的扩展效率是多少？一步的计算时间 $t_c$ 见第 3 节画像表的 `t_c_s` 列。（单位：%，按课程约定填百分数，如 42 % 填 42）

# %%
answer_3 = None
exercise("ch02.3").check(answer_3)

# %% [markdown]
# **练习 4**：一份 Llama 3 70B 的完整混合精度训练状态（权重 + 梯度 + Adam，每参数 16 字节，不分片）相当于几张 H100 的显存？

# %%
answer_4 = None
exercise("ch02.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：在每卡 100 Gb/s 的网络上（不做重叠），`labutil.workloads` 的哪个代表负载损失的扩展效率最多？（填负载名，如 'llm-pretrain'）

# %%
answer_5 = None  # 负载名，如 'llm-pretrain'
exercise("ch02.5").check(answer_5)

# %% [markdown]
# ## 9. 小结
#
# - 模型规模四到五个数量级的增长、PB 级数据和训练周期的经济约束，让集群成为刚需：GPT-3 在单张 H100 上要 25 年，1,024 张 H100 只要 9.0 天。
# - 场景表是经验结论；负载画像把它们换成可以计算、可以外推的数字：规模、网络、显存、存储、小文件、延迟、FP64、调度频度。
# - 估算网络需求先问清楚同步的是什么：画像表按 BF16 梯度算，是乐观的一侧；Megatron-LM、PyTorch AMP 和 Llama 3 都以 FP32 归约梯度，字节数翻倍，但在 3D 并行下按 Meta 的做法仍不到计算时间的一成。
# - 不做同步的负载（仿真、数据处理）看的是存储读带宽、小文件速率和调度吞吐，而不是网络。
# - 训练集群为集合通信而设计，推理集群为延迟、吞吐和弹性而设计；科学计算对延迟比对带宽更敏感，而且要用对算法（ring 是大消息算法，MPI 对中小消息用对数延迟的算法）。
# - 投资先投第一瓶颈：同一个网络升级，对一类负载是 1.4 倍以上的吞吐（25 → 400 Gb/s 时微调 70% → 97%），对另一类是零。
#
# ## 参考资料
#
# - 课程种子材料：《大规模GPU集群部署核心概念速览》《AI训练推理集群》《AI算力集群》三份课程导入中的场景表与误区。
# - A. Krizhevsky et al., *ImageNet Classification with Deep Convolutional Neural Networks*, 2012（AlexNet 约 6,000 万参数；在两张 3 GB 的 GTX 580 上训练）。
# - J. Devlin et al., *BERT*, 2018（BERT-Large 3.4 亿参数）；T. Brown et al., *Language Models are Few-Shot Learners*, 2020（GPT-3 175B，300B token）。
# - A. Grattafiori et al. (Meta), *The Llama 3 Herd of Models*, 2024（15T+ token，Llama 3 70B 形状）。
# - Llama 3 405B 的并行配置与吞吐：*The Llama 3 Herd of Models*, arXiv:2407.21783, 表 4（TP 8、PP 16、DP 128，每卡约 400 TFLOPs）、§3.3.2（「reduce-scatter gradients in FP32 across data parallel workers in FSDP」；前向后不重新切分权重）、§3.4.1（batch 16M token）、§3.3.4（419 次意外中断）。
# - Z. Jiang et al. (ByteDance), *MegaScale: Scaling Large Language Model Training to More Than 10,000 GPUs*, NSDI 2024（12,288 张 GPU、175B 模型、MFU 55.2%）。
# - NVIDIA `nvidia-smi` 手册（`dmon -s um` 的列）；课程解析器 `labutil.parsers.sysstat`（第 18 章）。
# - Meta AI, *Introducing the AI Research SuperCluster*, 2022（RSC 第一阶段 760 台 DGX A100，共 6,080 张 A100）。
# - R. Thakur, R. Rabenseifner, W. Gropp, *Optimization of Collective Communication Operations in MPICH*, IJHPCA 19(1), 2005（α-β 模型；§4.5 all-reduce：recursive doubling、Rabenseifner 算法及其代价公式）。
# - MPICH 文档，`MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE`（默认 2048 字节：不超过它用 recursive doubling，超过用 reduce-scatter + all-gather）。
# - NVIDIA ConnectX-6 InfiniBand/Ethernet 适配卡用户手册，Introduction（「sub-600ns latency」）；OSU Micro-Benchmarks（`osu_latency`，俄亥俄州立大学 MVAPICH 项目）。
# - 梯度归约的精度：NVIDIA Megatron-LM，`megatron/training/arguments.py`（「bfloat16 requires gradient accumulation and all-reduce to be done in fp32」，`--accumulate-allreduce-grads-in-fp32` 在 `--bf16` 下自动打开）；PyTorch 文档 *Automatic Mixed Precision*（`torch.autocast` 下参数保持 FP32）与 *DDP Communication Hooks*（`bf16_compress_hook`）。
# - J. D. C. Little, *A Proof for the Queuing Formula: L = λW*, Operations Research 9(3), 1961（平均并发 = 到达率 × 停留时间）。
# - S. Rajbhandari et al., *ZeRO: Memory Optimizations Toward Training Trillion Parameter Models*, SC 2020（混合精度 Adam 每参数 16 字节）。
# - NVIDIA, *nvidia-smi* 手册（`dmon` 输出格式）。
