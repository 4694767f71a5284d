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
# # 第7章 训练显存剖析
#
# > 模块二「计算节点与GPU」的第 2 章。前置：第 4 章（参数量 $N$ 与 $6ND$）、第 6 章（HBM 容量与带宽）。
# > 本章算清楚一张 GPU 的显存在训练时被谁占用；第 8 章用这里的模型在 $N$ 张卡上搜索并行布局，
# > 第 17 章用模型状态的大小估算检查点，第 25 章用同样的思路算推理的 KV-cache。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 把训练显存拆成**模型状态**（权重、梯度、优化器状态）和**激活**两部分，并用 $(2+2+K)\Psi$ 算出前者；
# - 解释混合精度 Adam 为什么每个参数要 16 字节，并算出「175B 模型仅 fp16 权重就要约 350 GB」；
# - 用 Korthikanti 等人的公式估算激活显存，说清楚张量并行、序列并行、选择性重计算与全量重计算各省掉了哪一项；
# - 比较 ZeRO-0/1/2/3 每卡的显存与通信代价，说出 ZeRO-3 什么时候划算、什么时候输，为一个 7B 模型算出完整的训练显存账单；
# - 用 `nvidia-smi` 与 PyTorch 的显存统计核对模型，解释模型没有计入的那几 GB。

# %%
from labutil.notebook import setup, show_table, MarkdownTable
from labutil import memory, compute, hardware, models, parallel, steptime, units
from labutil.cluster import Cluster
from labutil.parallel import Layout
from labutil.explore import memory as memory_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 第一道墙：权重本身就放不下
#
# 种子课程里有一句话：「1750 亿参数的 GPT-3 需要约 350 GB 显存，远超单卡 80 GB」。这个数是怎么来的？
# 训练和推理时，权重以 16 位浮点数（fp16 或 bf16）存放，每个参数 2 字节，所以**仅权重**就是
# $2\,\text{B} \times \Psi$。用课程的模型目录（GPT-3 的层数、隐藏维度、词表都来自 Brown 等 2020 的表 2.1）数一数参数：

# %%
# NBVAL_CHECK_OUTPUT
gpt3 = models.transformer("gpt3-175b")
h100 = hardware.gpu("H100-SXM")
w_gb = memory.fp16_weights_gb(gpt3.params())
print(f"GPT-3 parameters: {gpt3.params() / 1e9:.1f} B")
print(f"fp16/bf16 weights alone: {w_gb:.0f} GB")
print(f"H100-SXM HBM: {h100.hbm_gb:.0f} GB -> weights need at least {w_gb / h100.hbm_gb:.1f} GPUs, i.e. 5 H100s")

# %% [markdown]
# 349 GB——四张半 H100 才装得下**只读的权重**，而训练需要的远不止权重。这就是为什么「千亿模型必须切到多卡上」
# 不是性能优化，而是能不能跑起来的问题：单卡上连前向都做不了。种子课程 004 的另一句话同样成立：
# 「单张 H100 的 80 GB 显存甚至无法容纳一个中等规模模型的权重」——70B 级模型的 bf16 权重就有 141 GB（见下方误区五）。
#
# ## 2. 模型状态：权重、梯度、优化器状态
#
# 训练时每个参数要保存的东西，ZeRO 论文（Rajbhandari 等 2020，§3.1）称为**模型状态**（model states）。
# 以今天最常见的**混合精度 + Adam** 为例：
#
# | 内容 | 精度 | 每参数字节 | 说明 |
# |---|---|---|---|
# | 权重（前向/反向用） | bf16/fp16 | 2 | 参与矩阵乘的那一份 |
# | 梯度 | bf16/fp16 | 2 | 反向传播产生，all-reduce 同步的就是它 |
# | 权重的 fp32 主副本 | fp32 | 4 | 优化器在它上面累加很小的更新，16 位精度会把更新「吃掉」 |
# | Adam 一阶矩 $m$ | fp32 | 4 | 动量 |
# | Adam 二阶矩 $v$ | fp32 | 4 | 方差 |
#
# ZeRO 把后三项合称为优化器状态，每参数 $K$ 字节。对混合精度 Adam，$K = 12$，于是
#
# $$M_{\text{states}} = (2 + 2 + K)\,\Psi = 16\,\Psi \ \text{字节}.$$
#
# 其他组合同理可推：带动量的 SGD 只有一个状态张量，$K = 4 + 4 = 8$；纯 fp32 训练没有主副本，
# 权重 4 + 梯度 4 + Adam 两个矩 8 = 16 字节——和混合精度一样多，但计算要慢得多（fp32 走不了 BF16 Tensor Core）。
# 注意：一些框架（如 Megatron-LM 的 `--accumulate-allreduce-grads-in-fp32`）把梯度也放在 fp32，此时每参数 18 字节；
# 本课程的模型按 ZeRO 论文的 16 字节计算。

# %%
# NBVAL_CHECK_OUTPUT
for opt in ("adam", "sgd"):
    for prec in ("bf16", "fp32"):
        w, g, o = memory.bytes_per_param(opt, prec)
        print(f"{opt:5s} {prec}: weights {w:.0f} + grads {g:.0f} + optimizer {o:2.0f} = {w + g + o:2.0f} bytes/param")

# %% [markdown]
# 16 字节是一个非常值得背下来的数：**全参数训练的模型状态 ≈ 16 × 参数量**。一个 7B 模型（Llama-2 7B 实际是 67.4 亿参数）是 108 GB，
# 70B 是 1.13 TB，175B 是 2.8 TB。下图把几个常见模型的「只有权重」和「完整模型状态」放在同一张对数坐标图上，
# 红色虚线是一张 H100 的 80 GB。

# %%
memory_x.model_states_figure()

# %% [markdown]
# ## 3. ZeRO：把冗余的模型状态切到数据并行的各张卡上
#
# 朴素的数据并行（PyTorch DDP）里，$N_d$ 张卡**每张都存一份完整的模型状态**：卡越多，冗余越多。
# ZeRO（Zero Redundancy Optimizer）的思路是：既然每张卡只负责自己那份数据，那么优化器状态、梯度、甚至权重
# 都可以按 $1/N_d$ 切开，每张卡只维护自己那一片，需要时再通信取回。三个阶段依次切得更多：
#
# | 阶段 | 切分内容 | 每卡模型状态 | 每步通信量（相对 DDP） |
# |---|---|---|---|
# | ZeRO-0（DDP） | 不切 | $(2+2+K)\Psi$ | $2\Psi$（all-reduce）= 1× |
# | ZeRO-1（$P_{os}$） | 优化器状态 | $4\Psi + K\Psi/N_d$ | 1×（reduce-scatter + all-gather） |
# | ZeRO-2（$P_{os+g}$） | + 梯度 | $2\Psi + (2+K)\Psi/N_d$ | 1× |
# | ZeRO-3（$P_{os+g+p}$） | + 权重 | $(2+2+K)\Psi/N_d$ | 每个 micro-batch 1.5×（前向、反向各 all-gather 一次权重，再 reduce-scatter 梯度） |
#
# 通信量一栏来自 ZeRO 论文 §7：阶段 1、2 与 DDP 一样每步搬运 $2\Psi$，阶段 3 增加到 $3\Psi$。但论文算的是**一个 micro-batch**。
# 梯度累积时，DDP 和 ZeRO-1 在本地把 $m$ 个 micro-batch 的梯度加起来，每步只同步一次；ZeRO-3 却没有完整的权重可留，
# 每个 micro-batch 都要重新 all-gather 权重、reduce-scatter 梯度（ZeRO-2 也要每个 micro-batch reduce-scatter 一次），
# 所以每步的通信是 $3\Psi \times m$。这就是工程上的取舍：ZeRO-1/2 几乎是「免费」的显存节省，ZeRO-3 用成倍的通信换来与 $N_d$ 成反比的模型状态。
# 下面复现 ZeRO 论文图 1 的例子：$\Psi = 7.5$B，$N_d = 64$，$K = 12$。

# %%
# NBVAL_CHECK_OUTPUT
for stage in range(4):
    ms = memory.model_states_gb(7.5e9, 64, stage)
    print(f"ZeRO-{stage}: weights {ms.weights_gb:6.2f} + grads {ms.grads_gb:6.2f} + optimizer {ms.optimizer_gb:6.2f} "
          f"= {ms.total_gb:7.2f} GB per GPU")

# %% [markdown]
# 120 GB、31.4 GB、16.6 GB、1.88 GB——与论文图 1 完全一致。注意 ZeRO-1 一步就省掉了 74%：
# 因为 12 字节的优化器状态占了 16 字节中的四分之三。
#
# ### 3.1 ZeRO-3 什么时候划算，什么时候输
#
# ZeRO-3 的通信藏不藏得住，看每一层：取下一层权重的 all-gather 只能藏在当前这一层的计算后面（预取一层，FSDP 和 DeepSpeed 都这样做）。
# 一层的权重是 $2P_\ell$ 字节、前向计算是 $2TP_\ell$ FLOPs（$T$ 是这张卡这个 micro-batch 的 token 数），所以
# **每卡每个 micro-batch 的 token 数 $T \ge F/B$ 时藏得住**（$F$ 是每卡实际达到的 FLOP/s，$B$ 是每卡分到的 all-gather 带宽），与模型大小无关。
# 下面用第 8 章的单步时间模型（`steptime.estimate_layout`，每一次集合通信都经 `labutil.cluster` 计时）比较同一个 Llama-2 7B 任务
# （32 张 H800、每步 64 条 4096 token 的序列）在两张网上的四种做法：每台服务器 8 个 400G 网口，和种子课程的每台只有一个 25 GbE 口：

# %%
# NBVAL_CHECK_OUTPUT
l7 = models.transformer("llama2-7b")
z_cases = [("ZeRO-1", Layout(32, 1, 1, 1, 64, zero_stage=1)), ("ZeRO-3", Layout(32, 1, 1, 1, 64, zero_stage=3)),
           ("ZeRO-3, 2 seq/micro-batch", Layout(32, 1, 1, 2, 64, zero_stage=3)),
           ("HSDP (shard in node)", Layout(32, 1, 1, 2, 64, zero_stage=3, shard=8))]
zc = {}
for net, cl in (("8 x 400G per server", Cluster.system("HGX-H800").with_nodes(4)), ("1 x 25 GbE per server", Cluster.seed003(4))):
    for label, lay in z_cases:
        e = zc[(net[:1], label)] = steptime.estimate_layout(l7, lay, 32, "H800-SXM", cluster=cl)
        print(f"{net:21s} {label:26s}: {e.memory_gb:5.1f} GB per GPU, step {e.step_s:6.2f} s "
              f"(data-parallel traffic {e.dp_comm_s:6.2f} s, exposed {e.dp_exposed_s:6.2f} s)")

# %%
# NBVAL_CHECK_OUTPUT
fast = [zc[("8", k)].step_s for k, _ in z_cases]
z1, z3 = zc[("1", "ZeRO-1")], zc[("1", "ZeRO-3")]
MarkdownTable(f"在 8 个 400G 网口的服务器上，四种做法的单步时间在 {min(fast):.2f}–{max(fast):.2f} s 之间，几乎一样：ZeRO-3 多出的通信"
              f"藏在计算后面，换来每卡显存从 {zc[('8', 'ZeRO-1')].memory_gb:.1f} GB 降到 {zc[('8', 'ZeRO-3')].memory_gb:.1f} GB"
              "——这时 ZeRO-3 **划算**。换到每台服务器只有一个 25 GbE 口的集群，ZeRO-3 就**输**了：它的数据并行通信每步 "
              f"{z3.dp_comm_s:.1f} s，是 ZeRO-1（{z1.dp_comm_s:.1f} s）的 {z3.dp_comm_s / z1.dp_comm_s:.1f} 倍，单步从 {z1.step_s:.1f} s "
              f"变成 {z3.step_s:.1f} s。")

# %% [markdown]
# 原因是每步两个 micro-batch，ZeRO-3 每个都要把整个模型 all-gather 两次、reduce-scatter 一次，而 ZeRO-1 每步只同步一次梯度。补救有两条：让每个 micro-batch 更大（token 多了，同样的通信对应更多计算，也少了一半的次数），
# 或者用 HSDP（PyTorch FSDP 的 `HYBRID_SHARD`）只在一台服务器的 8 张卡里切分，跨服务器只 all-reduce 各自那 1/8 的梯度——代价是每卡显存回升。
# 第 8 章在 1,024 张卡的搜索里把 ZeRO-3 和张量/流水线并行放在一起比；第 24 章说明各框架里对应的开关。

# %%
memory_x.zero_figure()

# %% [markdown]
# ## 4. 激活：与 batch、序列长度一起增长的那一半
#
# 模型状态只和参数量有关；**激活**（activations）则是前向传播时为反向传播保存下来的中间张量，
# 随 micro-batch $b$、序列长度 $s$、隐藏维度 $h$ 和层数 $L$ 增长。Korthikanti 等（2022，
# 《Reducing Activation Recomputation in Large Transformer Models》）逐个张量数过一个 GPT 式 Transformer 层
# （16 位激活、1 字节的 dropout 掩码，$a$ 为注意力头数）：
#
# - 注意力块：$11\,sbh + 5\,as^2b$ 字节。其中 $5as^2b$ 是 softmax 输出（2）、dropout 掩码（1）和 dropout 输出（2）——
#   **与 $s^2$ 成正比**的注意力分数矩阵；
# - MLP 块（4h 宽、GeLU）：$19\,sbh$；两个 LayerNorm 的输入：$4\,sbh$。
#
# 合起来，每层（论文式 1）：
#
# $$A_{\text{layer}} = sbh\left(34 + \frac{5as}{h}\right)\ \text{字节}.$$
#
# 并行和重计算分别作用于不同的项（论文表 2，$t$ 为张量并行度）：
#
# | 配置 | 每层激活（字节） | 出处 |
# |---|---|---|
# | 无并行 | $sbh\,(34 + 5as/h)$ | 式 1 |
# | 张量并行 | $sbh\,(10 + 24/t + 5as/(ht))$ | 式 2 |
# | 张量 + 序列并行 | $sbh\,(34 + 5as/h)/t$ | §4.2.2、表 2 |
# | 张量并行 + 选择性重计算 | $sbh\,(10 + 24/t)$ | 表 2 |
# | 张量 + 序列并行 + 选择性重计算 | $34\,sbh/t$ | 式 6 |
# | 全量重计算 | $2\,sbh$（只存每层输入） | 表 2 |
#
# 张量并行切不到的那 $10\,sbh$ 是 LayerNorm 输入、QKV 与 MLP 的输入和两个 dropout 掩码；**序列并行**把这些沿序列维切成 $t$ 份。
# **选择性重计算**只在反向时重算注意力分数那一块（它占显存多、占算力少），于是 $5as/h$ 项消失；
# **全量重计算**只留每层的输入，反向时整层重算一遍前向。
#
# 对 Llama 这类模型（GQA：`kv_heads < heads`；SwiGLU MLP：宽度不是 $4h$），本课程按同样的逐张量方法推广：
# K、V 按 `kv_heads/heads` 缩小，SwiGLU 存 $6\,\cdot$ffn 字节（Megatron 融合 SwiGLU 保存第一层线性的 2·ffn 宽输出和第二层线性的 ffn 宽输入）；
# 对 GPT 式配置它严格退化为上表。Llama 训练不用 dropout（目录里 `TransformerSpec.dropout = False`），模型就不计那几个 1 字节的掩码
# （每层少 $2sbh + as^2b$ 字节）；GPT 式配置按论文保留它们。
# 另外，FlashAttention 从不把 $s \times s$ 分数矩阵写回显存，它对显存的效果与选择性重计算相同。
#
# 用 GPT-3 175B 的形状（$s=2048$，$t=8$，$b=1$）算一算各配置下 96 层的激活：

# %%
# NBVAL_CHECK_OUTPUT
cases = [("tp=8", False, "none"), ("tp=8 + SP", True, "none"), ("tp=8 + selective", False, "selective"),
         ("tp=8 + SP + selective", True, "selective"), ("full recompute", False, "full")]
base = memory.activation_gb(gpt3, 1, 2048, 8, False, "none")
for name, sp, rc in cases:
    a = memory.activation_gb(gpt3, 1, 2048, 8, sp, rc)
    print(f"{name:22s}: {a:6.2f} GB per GPU ({a / base:5.1%} of tp-only)")

# %%
# NBVAL_CHECK_OUTPUT
act = {name: memory.activation_gb(gpt3, 1, 2048, 8, sp, rc) for name, sp, rc in cases}
MarkdownTable(f"序列并行省下 {1 - act['tp=8 + SP'] / base:.0%}、选择性重计算省下 {1 - act['tp=8 + selective'] / base:.0%}，"
              f"两者叠加把激活降到只用张量并行时的 {act['tp=8 + SP + selective'] / base:.1%}（约 "
              f"{base / act['tp=8 + SP + selective']:.1f} 倍）——这正是论文摘要说的「激活显存减少约 5 倍」。")

# %% [markdown]
# （对 GPT 式的层，两者叠加后每层从 $sbh(10 + 24/t + 5as/(ht))$ 变成 $34sbh/t$，倍数随 $as/h$ 变：序列越长，省得越多。）
# 下图显示序列长度变长时，保留 $s^2$ 项的两条曲线会以斜率 2 陡增：长上下文训练离不开选择性重计算或 FlashAttention。

# %%
memory_x.activation_figure()

# %% [markdown]
# 重计算当然不是免费的：它用算力换显存。全量重计算要多跑一次整层前向，执行的 FLOPs 从 $6N$ 变成约 $8N$
# （Narayanan 等 2021 §5.1）；选择性重计算只重算注意力核心（分数 $QK^T$、softmax 与 $PV$），代价小得多。
# Korthikanti 等（2022）§6 把每步的模型 FLOPs 写成 $72Bslh^2\,(1 + \tfrac{s}{6h} + \tfrac{V}{12lh})$（式 7），
# 选择性重计算的硬件 FLOPs 写成 $72Bslh^2\,(1 + \tfrac{s}{3h} + \tfrac{V}{12lh})$（式 8）：注意力核心那一项按两倍计。
# `compute.hardware_flops_per_iter` 实现的就是这两个式子（全量重计算用 Narayanan 的式 3）：

# %%
# NBVAL_CHECK_OUTPUT
model_flops = compute.hardware_flops_per_iter(gpt3, 1, 2048, recompute="none")
sel_extra = compute.hardware_flops_per_iter(gpt3, 1, 2048, recompute="selective") / model_flops - 1
full_extra = compute.hardware_flops_per_iter(gpt3, 1, 2048, recompute="full") / model_flops - 1
print(f"selective recompute: +{sel_extra:.1%} FLOPs per step (Korthikanti Eq. 8)")
print(f"full recompute:      +{full_extra:.1%} FLOPs per step")

# %% [markdown]
# ## 5. 流水线并行下，一张卡要存几个 micro-batch 的激活？
#
# 上面的数字是**一个** micro-batch、**全部**层的激活。流水线并行把 $L$ 层分成 $p$ 段，每段 $L/p$ 层；
# 但 1F1B 调度（Narayanan 等 2021 §2.2.1）让第一段在稳态时同时保存 $p$ 个 micro-batch 的激活（它们的反向还没回来）。
# 于是第一段的激活是 $p \times (L/p) \times A_{\text{layer}} = L \times A_{\text{layer}}$——**与 $p$ 无关**（Korthikanti 式 5）。
# 最后一段只存 1 个 micro-batch，但要多存交叉熵的 fp32 logits：$4\,s\,b\,V/t$ 字节。本课程的 `training_memory_gb`
# 对两段都算，报告较大的一段；它**不含**任何隐含的余量（CUDA 上下文、NCCL 缓冲、分配器碎片）——
# 第 8 章的布局搜索会显式地预留 10% 的显存给它们。

# %%
# NBVAL_CHECK_OUTPUT
for pp in (1, 4, 16):
    lay = Layout(dp=1024 // (8 * pp), tp=8, pp=pp, micro_batch=1, global_batch=1024, sp=True, recompute="selective")
    m = memory.training_memory_gb(gpt3, lay)
    print(f"pp={pp:2d}: {m.inflight_microbatches:2d} micro-batches in flight x {96 // pp:2d} layers -> "
          f"activations {m.activations_gb:5.2f} GB, model states {m.model_states_gb:6.1f} GB")

# %% [markdown]
# 流水线并行几乎不减少第一段的激活，但它按 $1/p$ 切开了模型状态——这就是为什么大模型要把 TP、PP 和 ZeRO 组合起来用。
#
# **真实案例：BLOOM 176B 的显存账。** BigScience 在 Jean Zay 超算上用 384 张 A100 80GB 训练 BLOOM（2022 年 3–7 月），
# 一份模型副本占 48 张卡（TP 4 × PP 12），8 份副本做数据并行，并用 ZeRO-1 切分优化器状态；项目公开说明里写的是每卡约用 60 GB 显存。
# 用本章的公式算模型状态这一项：

# %%
# NBVAL_CHECK_OUTPUT
bloom_params, bloom_tp, bloom_pp, bloom_dp = 176.247e9, 4, 12, 8     # BLOOM paper (arXiv:2211.05100) §3.4
per_gpu_params = bloom_params / (bloom_tp * bloom_pp)
z0 = memory.model_states_gb(per_gpu_params, bloom_dp, 0).total_gb
z1 = memory.model_states_gb(per_gpu_params, bloom_dp, 1).total_gb
print(f"{per_gpu_params / 1e9:.2f} B parameters per GPU; model states without ZeRO {z0:.1f} GB, with ZeRO-1 over dp={bloom_dp}: {z1:.1f} GB")
print(f"left of the reported ~60 GB for activations, buffers and fragmentation: {60 - z1:.1f} GB")

# %% [markdown]
# ZeRO-1 把每卡模型状态从 58.7 GB 压到 20.2 GB——不用它，光模型状态就要占掉 A100 的大半，激活就没有地方放了。剩下约 40 GB 给激活（1F1B 下第一段同时保存的
# 多个 micro-batch 的激活）、通信缓冲和碎片。这也是一个好的检验习惯：拿到别人公开的并行配置，先用公式算一遍，
# 数字对得上，说明你对显存的理解是对的；对不上，往往是漏了某一项（比如 fp32 logits 或分配器的预留）。
#
# ## 6. 一个 7B 模型的完整训练账单
#
# 现在把所有项加起来，看一个 Llama-2 7B（$s = 4096$，$b = 1$，混合精度 Adam）在一张 H100 上需要多少显存，
# 以及每加一种技术能省掉多少：

# %%
# NBVAL_CHECK_OUTPUT
footprint = dict(memory_x.footprint_steps("llama2-7b"))
for label, parts in footprint.items():
    print(f"{label:22s}: weights {parts['weights_gb']:5.1f} grads {parts['grads_gb']:5.1f} "
          f"optim {parts['optimizer_gb']:5.1f} act {parts['activations_gb']:6.1f} -> total {parts['total_gb']:6.1f} GB")

# %%
memory_x.footprint_7b_figure()

# %% [markdown]
# 读这张图要抓住两点（数字由上面的账单直接生成）：

# %%
# NBVAL_CHECK_OUTPUT
fp0, fp_sel, fp_full, fp_z3 = (footprint[k] for k in ("1 GPU, no tricks", "selective recompute", "full recompute",
                                                      "+ ZeRO-3, dp=8"))
states = fp0["weights_gb"] + fp0["grads_gb"] + fp0["optimizer_gb"]
MarkdownTable(f"第一，一张卡不加任何技巧时，激活（{fp0['activations_gb']:.0f} GB，主要是 $s^2$ 的注意力分数；Llama 训练不用 dropout，没有掩码）"
              f"和模型状态（{states:.0f} GB）是同一个量级；选择性重计算（或 FlashAttention）把激活砍到 {fp_sel['activations_gb']:.0f} GB，"
              f"全量重计算砍到 {fp_full['activations_gb']:.1f} GB。第二，即使激活几乎为零，**{states:.0f} GB 的模型状态本身就超过 "
              f"{h100.hbm_gb:.0f} GB**——7B 模型的全参数训练在单张 80 GB 卡上放不下，必须用 ZeRO/FSDP 把状态切到多张卡上"
              f"（或者改用 LoRA 一类只训练少量参数的方法）。8 卡 ZeRO-3 之后，每卡只剩约 {fp_z3['total_gb']:.0f} GB"
              "（其中包括正在用的两层完整权重和一层未切分的梯度：见第 7 节）。")

# %% [markdown]
#
# ## 7. 动手：显存分解探索器
#
# 下面的探索器对同一组设置同时画出 ZeRO-0 到 ZeRO-3 四根柱子（你选中的阶段加黑框），红色虚线是所选 GPU 的显存。
# 建议依次尝试：把模型换成 `gpt3-175b`、`tp = 8`，看 ZeRO-0 时光优化器状态就有多大；把序列长度拉到 32768，
# 对比重计算 `none` 与 `selective`；把 `dp` 从 8 拉到 1024，观察只有 ZeRO-3 的柱子会随之下降。
#
# ZeRO-3 那根柱子里，权重比梯度高，尽管两者每参数都是 2 字节、都切成 $1/N_d$。差出来的是**正在用的那几层**：ZeRO-3 按层 all-gather 权重，
# 算当前层时还要把下一层预取好，所以有两层的完整 16 位权重同时在显存里；梯度则只有刚算完、还没 reduce-scatter 出去的那一层是完整的。
# 用探索器的默认设置（Llama-2 7B、dp = 8）算出来：

# %%
# NBVAL_CHECK_OUTPUT
z3 = memory.training_memory_gb(models.transformer("llama2-7b"), Layout(8, 1, 1, 1, 8, zero_stage=3), seq_len=4096)
layer_gb = 2 * memory.layer_params(models.transformer("llama2-7b")) / 1e9
shard_gb = 2 * models.transformer("llama2-7b").params() / 8 / 1e9
print(f"ZeRO-3, dp=8: weights {z3.weights_gb:.2f} GB = shard {shard_gb:.2f} + 2 gathered layers {2 * layer_gb:.2f}; "
      f"grads {z3.grads_gb:.2f} GB = shard {shard_gb:.2f} + 1 unsharded layer {layer_gb:.2f}")

# %%
explorer = memory_x.memory_explorer()
explorer

# %% [markdown]
# ## 8. 实操命令：用工具核对模型
#
# 模型给出的是「应该用多少」，真实的训练进程要用工具确认。常用的命令：
#
# ```bash
# # 每张卡已用/总显存（MiB，二进制单位），训练跑起来后每 5 秒刷新一次
# nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv -l 5
#
# # 在训练脚本里：PyTorch 分配器的峰值（已分配 vs 已预留）
# python -c "import torch; print(torch.cuda.max_memory_allocated() / 1e9, torch.cuda.max_memory_reserved() / 1e9)"
# python -c "import torch; print(torch.cuda.memory_summary(abbreviated=True))"
#
# # DeepSpeed 自带的模型状态估算器（与本章 ZeRO 公式同源）
# python -c "from transformers import AutoConfig, AutoModelForCausalLM; \
#   from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs_all_live; \
#   m = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained('meta-llama/Llama-2-7b-hf')); \
#   estimate_zero3_model_states_mem_needs_all_live(m, num_gpus_per_node=8, num_nodes=1)"
# ```
#
# 下面是一个 Llama-2 7B 任务（dp = 8、ZeRO-3、全量重计算）运行时的 `nvidia-smi` 输出样例。**格式**取自 nvidia-smi 文档
# （`字段 [单位]` 表头，数值带 `MiB`）；**数值是为本课程编写的示意值**，不是实测。`labutil` 解析它，并与模型对比：

# %%
print(memory_x.NVIDIA_SMI_TRAINING_SAMPLE)

# %%
# NBVAL_CHECK_OUTPUT
rows = memory_x.smi_vs_model()
for r in rows[:3]:
    print(f"GPU {r['gpu']}: used {r['used_gb']:.2f} GB of {r['total_gb']:.2f} GB; model {r['model_gb']:.2f} GB; "
          f"not in the model {r['unexplained_gb']:.2f} GB")
print(f"81559 MiB = {81559 * units.BYTES_PER_MIB / units.BYTES_PER_GB:.2f} GB = {81559 / 1024:.2f} GiB")

# %% [markdown]
# 两个读数细节。其一，`nvidia-smi` 的 MiB 是二进制单位：81,559 MiB = 85.5 GB（十进制）= 79.6 GiB。H100 物理上有 80 GiB（5 个 16 GiB 的 HBM3 堆栈，
# 81,920 MiB），驱动保留了 361 MiB，剩下的 81,559 MiB 才是 `memory.total`（与第 6 章误区四的对账一致）；本课程目录里的「80 GB」是厂商标称值，
# 按十进制 80 GB 规划比实际可用的 85.5 GB 少约 6%，相当于自带一小块余量。
# 其二，示意样例中 `memory.used` 比模型多出上面 `not in the model` 那几 GB：真实进程里这一块来自 CUDA 上下文（每进程数百 MB）、
# NCCL 的通信缓冲、PyTorch 缓存分配器预留但未使用的块，以及碎片——自己的集群上要用实测的 `nvidia-smi` 对账。
# 这部分不在公式里，所以做规划时要**显式**留出余量——第 8 章的布局搜索默认只使用 90% 的 HBM。
#
# 线上排查 OOM 时，PyTorch 的报错本身就给了对账所需的数字：`Tried to allocate 2.00 GiB ... of which X GiB is free ... Y GiB is reserved by PyTorch but unallocated`。
# 「已预留但未分配」很大，说明不是真的不够，而是缓存分配器里的碎片：显存被切成许多大小不一的空闲块，没有一块大到能放下这次申请。
# 常见的处理顺序是：先设 `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` 让分配器用可扩展的段来减少碎片；再看 `torch.cuda.memory_summary()`
# 里峰值出现在前向还是反向；最后才去改并行布局或 micro-batch。另一个经验是：训练开始的前几步显存会持续上涨（分配器在建缓存、NCCL 在建通信缓冲），
# 所以读 `nvidia-smi` 要等到稳定的第几十步之后，而不是刚启动时。要看清「峰值那一刻显存里到底是什么」，PyTorch 提供了显存快照：
# 在训练脚本里调用 `torch.cuda.memory._record_memory_history()`，跑几步后用 `torch.cuda.memory._dump_snapshot("snap.pickle")` 导出，
# 再拖进 pytorch.org/memory_viz 查看，每一块分配都带着分配它的调用栈，哪一层的激活、哪个通信缓冲占了多少，一目了然。
#
# ## 9. 常见误区（每一条都用算出来的数字反驳）
#
# ### 误区一：「模型有多大，训练就要多少显存」
#
# 「7B 模型 14 GB」说的只是 bf16 权重，这是推理时的账。训练时每个参数还要背上 2 字节的 bf16 梯度，以及 Adam 的 12 字节：
# fp32 主副本 4 字节、一阶矩 4 字节、二阶矩 4 字节（混合精度训练必须在 fp32 里累积更新，否则小于 bf16 精度的更新量会被舍入掉）。
# 合计 16 字节/参数，是权重的 8 倍——而这还没算激活：

# %%
# NBVAL_CHECK_OUTPUT
p7 = models.transformer("llama2-7b").params()
print(f"llama2-7b weights {memory.fp16_weights_gb(p7):.1f} GB vs model states {memory.model_states_gb(p7).total_gb:.1f} GB "
      f"({memory.model_states_gb(p7).total_gb / memory.fp16_weights_gb(p7):.0f}x)")
one_gpu = memory.training_memory_gb(models.transformer("llama2-7b"), Layout(1, 1, 1, 1, 1, recompute="selective"))
print(f"with s=4096, b=1 and selective recompute: {one_gpu.total_gb:.1f} GB = {one_gpu.total_gb / h100.hbm_gb:.1f} x one 80 GB GPU")
MarkdownTable(f"用 bf16 权重的 {memory.fp16_weights_gb(p7):.1f} GB 去估算训练显存，会低估 {one_gpu.total_gb / memory.fp16_weights_gb(p7):.1f} 倍："
              f"真实的单卡需求约 {one_gpu.total_gb:.0f} GB，一张 80 GB 的卡放不下。")

# %% [markdown]
# 选卡、报预算时先问一句「训练还是推理」，就能避免这个最常见的量级错误。
#
# ### 误区二：「数据并行卡越多，每张卡的显存压力越小」
#
# 朴素数据并行（DDP）每张卡都存完整的模型状态，卡数对每卡显存**没有任何影响**；只有 ZeRO 才会随 $N_d$ 下降：

# %%
# NBVAL_CHECK_OUTPUT
for dp in (1, 8, 64, 512):
    ddp = memory.model_states_gb(p7, dp, 0).total_gb
    z3 = memory.model_states_gb(p7, dp, 3).total_gb
    print(f"dp={dp:4d}: DDP {ddp:6.1f} GB per GPU, ZeRO-3 {z3:7.2f} GB per GPU")

# %% [markdown]
# 512 张卡的 DDP 仍然是每卡 108 GB，和一张卡时一模一样；ZeRO-3 则降到 0.2 GB。这个误区在实践里常以另一种面目出现：
# 「单机 8 卡跑不下，那就申请 64 卡」——如果框架配置里没打开 ZeRO/FSDP（PyTorch 的 FSDP 默认 `FULL_SHARD` 相当于 ZeRO-3，而 DDP 不切分任何状态），
# 多申请的卡只会加快训练，不会让任何一张卡少用一个字节，作业照样在第一步 OOM。扩卡之前，先确认状态是否真的被切分了。
#
# ### 误区三：「激活不重要，序列长度翻倍显存也就翻倍」
#
# 不做重计算、也不用 FlashAttention 时，注意力分数项与 $s^2$ 成正比：序列长度从 4k 到 32k（8 倍），激活涨了远不止 8 倍（倍数见下一格的括号）：

# %%
# NBVAL_CHECK_OUTPUT
spec7 = models.transformer("llama2-7b")
a4 = memory.activation_gb(spec7, 1, 4096)
a32 = memory.activation_gb(spec7, 1, 32768)
s4 = memory.activation_gb(spec7, 1, 4096, recompute="selective")
s32 = memory.activation_gb(spec7, 1, 32768, recompute="selective")
print(f"no recompute: s=4096 {a4:7.1f} GB -> s=32768 {a32:7.1f} GB ({a32 / a4:.0f}x)")
print(f"selective:    s=4096 {s4:7.1f} GB -> s=32768 {s32:7.1f} GB ({s32 / s4:.0f}x)")

# %% [markdown]
# ### 误区四：「重计算只省显存，没有代价」
#
# 重计算用算力换显存：反向传播需要的激活不存，而是从检查点重新做一遍前向。全量重计算等于每步多做一次完整前向，
# 选择性重计算只重算注意力里 $s^2$ 那一小块。按 Korthikanti 等的计数，对 GPT-3 175B、$s = 2048$：

# %%
# NBVAL_CHECK_OUTPUT
days_base = 30.0
for name, extra in (("selective", sel_extra), ("full", full_extra)):
    print(f"{name:9s}: +{extra:.1%} FLOPs -> a {days_base:.0f}-day run takes {days_base * (1 + extra):.1f} days "
          f"(+{days_base * extra * 24:.0f} h)")

# %% [markdown]
# 同样的硬件利用率（HFU）下，时间与执行的 FLOPs 成正比。一个 30 天的训练，全量重计算要多跑约 10 天，相当于白白多租三分之一的集群；
# 选择性重计算多 2.7%，即多不到一天（约 19 小时）。
# 正确做法是先用选择性重计算（或 FlashAttention，它本身就不存 $s^2$ 的分数矩阵），只有仍放不下时才对一部分层做全量重计算
# （Megatron 的 `--recompute-num-layers`）。注意 MFU 按「模型 FLOPs」计、不含重算的部分，所以全量重计算会让 MFU 看起来下降，而 HFU 不变。
#
# ### 误区五：「一张 80 GB 的卡总能放下中等规模模型的权重」
#
# 种子课程 004 特意指出这一点：70B 级模型已经放不下，更不用说梯度和优化器状态：

# %%
# NBVAL_CHECK_OUTPUT
for name in ("llama3-8b", "llama3-70b", "gpt3-175b", "llama3-405b"):
    p = models.transformer(name).params()
    w = memory.fp16_weights_gb(p)
    print(f"{name:12s}: bf16 weights {w:6.0f} GB = {w / h100.hbm_gb:5.1f} x one H100 (80 GB)")

# %% [markdown]
# ## 10. 练习
#
# 把答案填进 `answer_k`（数字即可，单位见题目），运行单元格查看判分；卡住时调用 `exercise("ch07.k").hint(1)`。
#
# 练习 5 只需纸笔和第 3 节的公式；练习 6、7 是判断题，填引号里的选项。
#
# **练习 1**：Llama-3 70B（目录 `llama3-70b`）、混合精度 Adam、不用 ZeRO、不切模型：每卡模型状态多少 GB？

# %%
answer_1 = None
exercise("ch07.1").check(answer_1)

# %% [markdown]
# **练习 2**：同一个 70B 模型，在 $N_d = 64$ 张卡上做数据并行并使用 ZeRO-2：每卡模型状态多少 GB？（放不放得进 80 GB，是练习 7。）

# %%
answer_2 = None
exercise("ch07.2").check(answer_2)

# %% [markdown]
# **练习 3**：GPT-3 175B 的层形状（$s = 2048$，$h = 12288$，$a = 96$，96 层），micro-batch 1，$t = 8$、序列并行加选择性重计算：
# 每卡保存的全部层激活是多少 GB？

# %%
answer_3 = None
exercise("ch07.3").check(answer_3)

# %% [markdown]
# **练习 4**：Llama-2 7B 在**一张** 80 GB GPU 上训练，混合精度 Adam，$s = 4096$，$b = 1$，全量重计算：
# 总训练显存（模型状态 + 激活 + fp32 logits）是多少 GB？

# %%
answer_4 = None
exercise("ch07.4").check(answer_4)

# %% [markdown]
# **练习 5（纸笔题）**：ZeRO 论文的例子：$\Psi = 7.5$B 参数、混合精度 Adam（$K = 12$）、$N_d = 64$ 张卡、ZeRO-3。每卡模型状态是多少 GB（1 GB = $10^9$ 字节）？

# %%
answer_5 = None
exercise("ch07.5").check(answer_5)

# %% [markdown]
# **练习 6（判断题）**：Llama-2 7B，8 张 H100（80 GB）做纯数据并行（$N_d = 8$），$s = 4096$、micro-batch 1、选择性重计算。
# 按本章模型，要让每卡训练显存不超过 80 GB 的 90%，最低需要哪个 ZeRO 阶段？填 `"zero-0"`、`"zero-1"`、`"zero-2"` 或 `"zero-3"`。

# %%
answer_6 = None
exercise("ch07.6").check(answer_6)

# %% [markdown]
# **练习 7（判断题）**：回到练习 2：Llama-3 70B、混合精度 Adam、$N_d = 64$ 张 H100（80 GB）。只算模型状态（不算激活），
# 每卡要放进 80 GB，最低需要哪个 ZeRO 阶段？填 `"zero-0"`、`"zero-1"`、`"zero-2"` 或 `"zero-3"`。

# %%
answer_7 = None
exercise("ch07.7").check(answer_7)

# %% [markdown]
# ## 11. 小结
#
# - 训练显存 = 模型状态 + 激活（+ 框架余量）。混合精度 Adam 的模型状态是 $16\Psi$ 字节：GPT-3 仅 bf16 权重就有 349 GB。
# - ZeRO-1/2/3 依次切优化器状态、梯度、权重：$\Psi = 7.5$B、$N_d = 64$ 时从 120 GB 降到 31.4、16.6、1.88 GB；阶段 3 多 50% 通信。
# - 激活每层 $sbh(34 + 5as/h)$ 字节；序列并行切掉 $1/t$，选择性重计算去掉 $s^2$ 项，两者合用约省 5 倍；全量重计算只留 $2sbh$，代价是约 33% 的额外算力（选择性重计算约 2.7%）。
# - 1F1B 流水线的第一段保存 $p$ 个 micro-batch，激活总量与 $p$ 无关；流水线切开的是模型状态。
# - 用 `nvidia-smi`（MiB！）与 `torch.cuda.max_memory_allocated()` 核对模型，并为上下文、通信缓冲和碎片显式留出余量。
#
# 下一章我们把这些显存模型和通信模型合在一起，在 $N$ 张 GPU 上搜索 DP/TP/PP 的最佳组合。
#
# ## 参考资料
#
# - S. Rajbhandari, J. Rasley, O. Ruwase, Y. He, *ZeRO: Memory Optimizations Toward Training Trillion Parameter Models*, SC 2020：§3.1（$K = 12$）、图 1（7.5B、64 卡）、§7（通信量）。
# - V. Korthikanti et al., *Reducing Activation Recomputation in Large Transformer Models*, MLSys 2023（arXiv:2205.05198）：式 1–6、表 2、表 3 的模型配置；§6 式 7、式 8（模型 FLOPs 与选择性重计算的硬件 FLOPs）。
# - D. Narayanan et al., *Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM*, SC 2021：1F1B 调度 §2.2.1，重计算的 FLOPs §5.1。
# - T. Brown et al., *Language Models are Few-Shot Learners*, 2020，表 2.1（GPT-3 175B 的形状）；H. Touvron et al., *Llama 2*, 2023；Meta, *The Llama 3 Herd of Models*, 2024（模型形状，见 `labutil/data/models.toml`）。
# - D. P. Kingma, J. Ba, *Adam: A Method for Stochastic Optimization*, ICLR 2015（两个矩估计）；P. Micikevicius et al., *Mixed Precision Training*, ICLR 2018（fp32 主副本）。
# - T. Dao et al., *FlashAttention*, NeurIPS 2022（不在 HBM 中保存 $s \times s$ 分数矩阵）。
# - NVIDIA H100 Tensor Core GPU Datasheet（80 GB HBM3）；nvidia-smi 文档（`--query-gpu`、`--format=csv`）；PyTorch CUDA 内存管理文档（`max_memory_allocated`、`memory_summary`、`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`）；PyTorch 文档 *Understanding CUDA Memory Usage*（`torch.cuda.memory._record_memory_history`、`_dump_snapshot` 与 pytorch.org/memory_viz）；PyTorch FSDP 文档（`ShardingStrategy.FULL_SHARD`）；DeepSpeed ZeRO 文档（显存估算器）。
# - BigScience Workshop, *BLOOM: A 176B-Parameter Open-Access Multilingual Language Model*, arXiv:2211.05100, §3.4（384 张 A100 80GB、TP 4 × PP 12 × DP 8、ZeRO-1、bf16）；
#   BigScience 176B 项目说明页（bigscience.notion.site，「one copy of the model takes 48 GPUs (using 60 GB of memory on each GPU)」）；
#   bigscience-workshop/bigscience 仓库 tr11 系列 Slurm 脚本（`TP_SIZE=4`、`PP_SIZE=12`、48 节点、`ZERO_STAGE=1`）；Hugging Face 博客 *The Technology Behind BLOOM Training*, 2022。
# - H100 的物理显存（5 个 HBM3 堆栈，80 GiB）与 `nvidia-smi` 的 81,559 MiB：见第 6 章参考资料（H100 架构白皮书；modal-labs/modal-client PR #2797）。
# - 课程种子材料：《大规模GPU集群部署核心概念速览》课程导入（175B 约 350 GB）、《AI算力集群》课程导入（80 GB 放不下中等规模模型的权重）。
