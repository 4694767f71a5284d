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
# # 第4章 算力需求估算：从模型规模到GPU数量
#
# > 模块一「全局认知与容量规划」的第 4 章。前置：第 1 章（有效算力、MFU 的概念）、第 3 章（集群的四层架构）。
# > 本章的结论——总 FLOPs、GPU 数量、训练天数——是第 5 章（成本与 TCO）、第 8 章（并行策略）、第 10 章（供电）和第 30 章（千卡集群端到端设计）的输入。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 用 $C \approx 6ND$ 估算一次预训练需要的浮点运算量，并解释 6 这个系数从哪里来、什么时候要换成 8；
# - 用 Chinchilla 的「每个参数约 20 个 token」估算计算最优的数据量，并理解为什么 Llama 3 远远超出了它；
# - 用 MFU 把「峰值算力」换算成「训练天数」，复现 Megatron-LM 论文中 GPT-3 175B 约 34 天的估算；
# - 给定截止日期倒推需要多少张 GPU，并知道为什么还要在这个数字上留余量；
# - 识别「峰值 × 卡数」「稀疏算力」「卡数翻倍时间减半」这几类常见的估算错误。

# %%
from labutil.notebook import setup, show_table, MarkdownTable
from labutil import compute, hardware, models, reliability, published_runs
from labutil.explore import compute as compute_x
from labutil.parsers import parse_nvidia_smi_csv, samples
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 容量规划的第一个问题：要多少张卡、跑多少天
#
# 每一个集群项目的立项会上都会有人问同一个问题：「我们要训一个 70B 的模型，需要买多少张卡？」
# 这个问题看起来需要很多信息——模型结构、并行策略、网络、存储——但第一版答案其实只需要三个数：
#
# 1. **模型有多大**：参数量 $N$；
# 2. **要喂多少数据**：训练 token 数 $D$；
# 3. **每张卡实际能干多少活**：峰值算力 $P_{\text{peak}}$ 乘以模型算力利用率（MFU）。
#
# 前两个数决定了「总工作量」（FLOPs），第三个数决定了「每张卡每秒完成多少工作量」。两者一除，就得到 GPU·秒，
# 再按期限分摊到 GPU 数量上。这个估算的误差通常在 ±30% 以内，足以回答「几百张还是几千张」「一个月还是半年」这样的规划问题，
# 也足以发现明显不合理的方案。后面的章节会逐步把它细化：第 7 章检查显存是否放得下，第 8 章选择并行方式，第 14 章检查网络会不会把 MFU 拖下来。
#
# 本章用到的模型都来自课程的模型目录 `labutil.models`，每个条目都注明了出处（论文表格和官方 config），
# 参数量由同一个函数从层数、隐藏维度、注意力头数、FFN 维度和词表大小算出来，并在测试里与官方公布的参数量核对过。

# %%
rows = []
for name in ["gpt3-175b", "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b", "llama3-405b"]:
    s = models.transformer(name)
    rows.append({"model": name, "layers": s.layers, "hidden": s.hidden, "heads/kv": f"{s.heads}/{s.kv_heads}",
                 "ffn": s.ffn_hidden, "vocab": s.vocab, "params (B)": s.params() / 1e9,
                 "train tokens (T)": s.train_tokens / 1e12})
show_table(rows, floatfmt=",.2f")

# %% [markdown]
# ## 2. 总工作量：$C \approx 6ND$
#
# ### 2.1 系数 6 从哪里来
#
# Transformer 里绝大部分计算是矩阵乘法。一个 $[m \times k]$ 的矩阵乘以 $[k \times n]$ 的矩阵，需要 $m \cdot n \cdot k$ 次乘法和差不多同样多次加法，
# 即 $2mnk$ 次浮点运算。把一个 token 的隐藏向量乘以一个权重矩阵，相当于每个权重参与一次乘加，也就是每个参数 2 次 FLOP。所以：
#
# - **前向**：每个 token 约 $2N$ FLOPs；
# - **反向**：要同时算「对激活的梯度」（传给上一层）和「对权重的梯度」（给优化器），各是一次同样规模的矩阵乘，约 $4N$ FLOPs；
# - 合计每个 token 约 $6N$，整个训练 $D$ 个 token：
#
# $$C \approx 6 N D \quad \text{(Kaplan et al. 2020, §2.1)}$$
#
# 这是业界最常用的口径：GPT-3 论文附录 D、Chinchilla 论文和 Llama 3 论文报告训练算力时都用它。用它验证一下两个公开数字：
# GPT-3 175B 训练 300B token，论文 Table D.1 给出 $3.14 \times 10^{23}$ FLOPs；Llama 3 405B 训练 15.6T token，论文给出 $3.8 \times 10^{25}$ FLOPs。

# %%
# NBVAL_CHECK_OUTPUT
for name, published in [("gpt3-175b", 3.14e23), ("llama3-405b", 3.8e25)]:
    s = models.transformer(name)
    c = compute.train_flops(s.params(), s.train_tokens)
    print(f"{name:12s} N = {s.params() / 1e9:6.1f}B  D = {s.train_tokens / 1e12:5.2f}T  "
          f"6ND = {c:.3e} FLOPs  (published {published:.2e}, ratio {c / published:.3f})")

# %% [markdown]
# 两个数字都在 1% 以内。注意这里的 $N$ 要用真实参数量：Llama 3 405B 的词表有 128,256 个 token，词嵌入和输出层加起来就有 42 亿参数；
# Llama 2 70B 和 Llama 3 70B 层数、隐藏维度相同，但词表从 32,000 变成 128,256，参数量从 69.0B 变成 70.6B。
#
# ### 2.2 6ND 没算进去的东西
#
# $6N$ 只统计了「带权重的矩阵乘」。注意力里还有两个不带权重的矩阵乘：$QK^\top$ 和 $P \cdot V$，它们的计算量与序列长度 $s$ 成正比。
# Korthikanti et al. 2022 的式 (7) 和 PaLM 论文附录 B 把它们写了进去（Megatron-LM 论文的公式 (3) 是同一个式子再乘上重计算的 4/3），
# 折算到每个 token 是 $12 \cdot l \cdot s \cdot h$ FLOPs（$l$ 层数，$h$ 隐藏维度，按非因果的完整注意力计）：
#
# $$\frac{C}{D} \approx 6N + 12\, l\, s\, h$$
#
# 它与 $6N$ 的比值约为 $\frac{2 l s h}{N} \approx \frac{s}{6h}$（对 GPT 类结构）。序列越长、模型越「瘦」，这一项越重要：

# %%
# NBVAL_CHECK_OUTPUT
for name in ["gpt3-175b", "llama2-70b", "llama3-8b", "llama3-70b", "llama3-405b"]:
    s = models.transformer(name)
    extra = compute.attention_flops_per_token(s) / (6 * s.params())
    print(f"{name:12s} seq_len {s.seq_len:5d}  attention adds {extra:6.1%} to 6N per token")

# %% [markdown]
# GPT-3（2K 上下文、隐藏维度 12288）只多 2.8%，可以忽略；Llama 3 8B 在 8K 上下文下多了 27%。实际训练用因果掩码，
# FlashAttention 这类内核会跳过被掩掉的一半，所以真实的附加量大约是表中的一半。做容量规划时，短上下文用 $6ND$ 即可；
# 长上下文训练（32K、128K）一定要把这一项加上，否则会系统性地低估训练时间。
#
# 另一个系数是 **8**：如果开启了完整的激活重计算（activation recomputation），反向传播前要把前向再算一遍，
# 硬件实际执行的是 $8ND$。Megatron-LM 论文估算端到端训练时间时用的就是 $8TP/(nX)$（$T$ token 数、$P$ 参数量、$n$ GPU 数、$X$ 每卡实测吞吐）。
# 这也引出两个经常被混用的指标：
#
# | 指标 | 分子 | 含义 |
# |---|---|---|
# | MFU（Model FLOPs Utilization） | 模型必须的 FLOPs（$6N$ 每 token） | 衡量「有用功」，重计算不算数，不同实现之间可比 |
# | HFU（Hardware FLOPs Utilization） | 硬件实际执行的 FLOPs（含重计算，$8N$） | 衡量 GPU 忙不忙，重计算越多越「好看」 |
#
# PaLM 论文（Chowdhery et al. 2022，附录 B）正是为了避免这种「好看」而提出 MFU。本课程后面说的 MFU 都是 $6N$ 口径，
# 而且是**集群级**的：分母是「墙钟时间 × 卡数 × 稠密峰值」，通信、流水线气泡、等待都已经算在里面（`compute.mfu_cluster`），
# PaLM 和 Llama 3 报的都是这个数；HFU 换成硬件实际执行的 FLOPs（`compute.hfu`）。
#
# 重计算有两种。完整重计算多一遍前向（$6N \to 8N$）；Megatron 的**选择性重计算**只重算注意力的核心部分（softmax 等），
# Korthikanti et al. 2022 的式 (8) 给出它的硬件 FLOPs：$72Bslh^2(1 + \frac{s}{3h} + \frac{V}{12lh})$，即注意力项算两遍。
# `compute.hardware_flops_per_iter` 按这三种口径计数：

# %%
# NBVAL_CHECK_OUTPUT
g175 = models.transformer("megatron-gpt-175b")
model_f = compute.model_flops_per_iter(g175, 1536, 2048)
for rc in ("none", "selective", "full"):
    hw = compute.hardware_flops_per_iter(g175, 1536, 2048, rc)
    print(f"GPT-3 175B, batch 1536 x 2048, recompute={rc:9s}: {hw:.3e} FLOPs per iteration, "
          f"{hw / model_f - 1:+6.1%} over the model FLOPs")

# %% [markdown]
# 选择性重计算只多 2.7%，完整重计算多 33%：这就是 Korthikanti 等人说「几乎消除了重计算开销」的含义。
#
# ## 3. 数据量从哪里来：Chinchilla 与「过度训练」
#
# $D$ 不是随便定的。Hoffmann et al. 2022（Chinchilla 论文）在固定算力预算下扫了几百个模型，结论是：计算最优时参数量和 token 数应同比例增长，
# 大约 **每个参数 20 个 token**。Chinchilla 本身是 70B 参数、1.4T token，与 280B 的 Gopher 用了同样的算力（约 $5.76 \times 10^{23}$ FLOPs），效果却更好。
#
# $$D_{\text{opt}} \approx 20\,N$$
#
# 但「计算最优」只是训练阶段的最优。模型训练一次，却要推理成千上万次；在同样的效果下，更小的模型推理更便宜。
# 所以 Llama 3 8B 用了 15T token，约为 Chinchilla 建议的 93 倍——用训练时多花的算力换推理时省下的算力。下图对比了各预设模型在「公开的训练 token 数」和「Chinchilla 最优 token 数」下的训练算力：

# %%
compute_x.training_compute_figure()

# %% [markdown]
# 图中 GPT-3 是唯一一个「训练不足」的模型（175B 只用了 300B token，每参数 1.7 个 token），这正是 Chinchilla 论文指出的问题；
# Llama 系列则全部在 Chinchilla 线之上。对集群规划者来说，这意味着：**同样参数量的模型，今天需要的算力可能是几年前的几十倍**，
# 不要用「GPT-3 当年用了多少卡」来估算今天的项目。

# %%
# NBVAL_CHECK_OUTPUT
for name in ["gpt3-175b", "llama2-70b", "llama3-8b", "llama3-405b"]:
    s = models.transformer(name)
    print(f"{name:12s} tokens/param = {s.train_tokens / s.params():7.1f}   "
          f"Chinchilla-optimal D = {compute.chinchilla_tokens(s.params()) / 1e12:5.2f}T")

# %% [markdown]
# ## 4. 从 FLOPs 到天数：MFU 是关键
#
# 有了总工作量 $C$，训练时间就是：
#
# $$t = \frac{C}{N_{\text{GPU}} \cdot P_{\text{peak}} \cdot \text{MFU}}$$
#
# 其中 $P_{\text{peak}}$ 是所用精度下的**稠密**峰值（BF16 训练就用 BF16 稠密峰值，H100 SXM 是 989.4 TFLOP/s），MFU 是实际达到的比例。
# MFU 把所有损耗打包成一个数：kernel 本身达不到峰值、通信没能完全与计算重叠、流水线并行的气泡、数据加载的等待、优化器步骤……
# MFU 是**集群级**的数：它已经包含了从 1 张卡扩到 $N$ 张卡的全部损失（通信、气泡、掉队的卡），所以不要再乘一个「扩展效率」。
# 种子课程说集群的有效算力通常只有峰值的 **40%–70%**。公开的大规模训练报告（或能由报告算出）的 MFU 范围是 **34%–55%**：
# 最低是 GPT-3 在 1,024 张 A100 上的约 34%（第 4.1 节），最高是 MegaScale 在 12,288 张 GPU 上的 55.2%（第 5.1 节）；
# Llama 3 405B 在 8,192 到 16,384 张 H100 上是 38%–43%。种子说法的上沿 70% 没有任何公开的大规模训练达到过，本章的规划都用 34%–55% 这个范围
# （`compute.PUBLISHED_MFU_RANGE`，第 24 章用同一个范围）。常被引用的「Megatron-LM 在 3072 张 A100 上达到 52%」
# 是 **HFU**：那 163 TFLOP/s 把完整重计算的那遍前向也算了进去，换成 MFU 口径约 39%：

# %%
# NBVAL_CHECK_OUTPUT
a100 = hardware.gpu("A100-80G-SXM")
t1 = published_runs.MEGATRON_TABLE1[-1]              # Narayanan et al. 2021, Table 1: 1T on 3,072 A100
hw_1t = compute.hardware_flops_per_iter(t1.spec, 3072, 2048, "full")
step_s = hw_1t / (3072 * t1.published * 1e12)         # the iteration time that 163 TFLOP/s implies
hfu_1t = compute.hfu(hw_1t, step_s, 3072, a100.bf16_tflops)
mfu_1t = compute.mfu_cluster(compute.model_flops_per_iter(t1.spec, 3072, 2048), step_s, 3072, a100.bf16_tflops)
print(f"Megatron 1T, 3,072 A100, {t1.published:.0f} TFLOP/s per GPU: iteration {step_s:.1f} s, "
      f"HFU {hfu_1t:.1%}, MFU {mfu_1t:.1%}")

# %% [markdown]
# ### 4.1 复现 Megatron-LM 的估算
#
# Narayanan et al. 2021 §5.1 给出了两个端到端估算：GPT-3 175B 训练 300B token，用 1024 张 A100、每卡实测 140 TFLOP/s，约 **34 天**；
# 1T 参数模型训练 450B token，用 3072 张 A100、每卡 163 TFLOP/s，约 **84 天**。他们开启了完整的激活重计算，所以用 $8ND$，
# 而每卡 140/163 TFLOP/s 是 HFU 口径的实测值。用本课程的函数复现：

# %%
# NBVAL_CHECK_OUTPUT
for name, tokens, n_gpus, x_tflops in [("megatron-gpt-175b", 300e9, 1024, 140.0), ("megatron-gpt-1t", 450e9, 3072, 163.0)]:
    p = models.transformer(name).params()
    c8 = compute.train_flops(p, tokens, recompute=True)
    days = compute.time_to_train_days(c8, n_gpus, a100.bf16_tflops, x_tflops / a100.bf16_tflops)
    print(f"{name:18s} P = {p / 1e9:7.1f}B  8TP = {c8:.3e}  {n_gpus} A100 at {x_tflops:.0f} TFLOP/s "
          f"({x_tflops / a100.bf16_tflops:.0%} of peak) -> {days:5.1f} days")

# %% [markdown]
# 33.8 天和 83.9 天，与论文的「34 天」「84 天」一致。换成 MFU 口径：175B 模型的 140 TFLOP/s（HFU 45%）对应 MFU 约 $45\% \times 6/8 \approx 34\%$。
#
# ### 4.2 MFU 不必靠猜：用单步时间模型算，再和公开结果对照
#
# 上面的 140 TFLOP/s 是论文量出来的。规划一个还没跑过的任务时，MFU 从哪里来？第 8 章的单步时间模型
# （`labutil.steptime`：GEMM 的效率随矩阵形状变化，矩阵乘以外的归一化、旋转位置编码、激活函数按公开的 kernel 基准计时，
# 流水线气泡，经 `labutil.cluster` 计时的每一次通信）从布局和集群直接算出它。
# 先看这个模型在公开的训练任务上有多准——与规模规划最相关的几行（完整的对照表在第 8 章）：

# %%
# NBVAL_CHECK_OUTPUT
sizing = published_runs.compare([published_runs.GPT3_1024_A100, published_runs.LLAMA2_70B,
                                 *published_runs.LLAMA3_TABLE4])
gpt3_row = sizing[0]
print(f"GPT-3 175B on 1,024 A100: model {gpt3_row.model:.0f} TFLOP/s per GPU (HFU), "
      f"{published_runs.gpt3_days(gpt3_row):.1f} days for 300B tokens; Megatron: 140 TFLOP/s, ~34 days")
print(f"rows inside their tolerance (+-10 %, MFU +-5 points): {sum(c.within_tolerance for c in sizing)} of {len(sizing)}")
show_table(published_runs.table_rows(sizing))

# %% [markdown]
# 上一格第二行数出有几行落在容差以内（±10%，MFU 按 ±5 个百分点）。落在以内也要看清楚：这几行正是拟合模型里 GEMM 效率常数时用过的（样本内），
# 误差小说明拟合得好，不说明外推得准（Llama 2 70B 的 GPU·小时里，模型把重启、检查点等按 90% 的有效训练时间计入）。
# 真正的检验是**没参与拟合**的公开结果。下面这五条从未交给拟合（`published_runs.HELD_OUT_RUNS`），按原样报告：

# %%
# NBVAL_CHECK_OUTPUT
held = published_runs.compare(published_runs.HELD_OUT_RUNS)
inside = sum(c.within_tolerance for c in held)
print(f"held-out runs inside +-10 %: {inside} of {len(held)}; "
      f"mean |error| {published_runs.error_summary(held)['mean_abs_pct']:.1f} %")
show_table(published_runs.table_rows(held))

# %% [markdown]
# 读这张表（下一格由表里的误差直接生成；「偏快」指模型算出的吞吐高于公布值、时间短于公布值）：

# %%
# NBVAL_CHECK_OUTPUT
def_fast = {"hw_tflops_per_gpu": 1, "tokens_per_s_per_gpu": 1, "mfu_points": 1, "iteration_s": -1, "gpu_hours": -1}
MarkdownTable(f"{len(held)} 条里只有 {inside} 条（" + "、".join(c.run.name.split(",")[0] for c in held if c.within_tolerance)
              + "）落在 ±10% 以内；其余 " + "、".join(
                  f"{c.run.name.split(',')[0]}（{'偏快' if c.error * def_fast[c.run.metric] > 0 else '偏慢'} "
                  f"{abs(c.error):.0%}）" for c in held if not c.within_tolerance) + "。")

# %% [markdown]
# 原因各不相同，第 8 章逐条分析：MT-NLG 530B 用的是
# 2021 年的软件，同样的模型、同样的 2,240 张 A100，一年后 Korthikanti 等人跑得快得多，模型落在两代软件之间；
# Llama 2 7B/13B 论文没给卡数和布局，模型放在 70B 那一行同样的 2,048 张卡上、取最快的布局，公布的 GPU 小时按 90% 有效训练时间折算
# （Llama 3 §3.3.4 的「超过 90%」；BLOOM 自己的数字也是 0.90），再把 LLaMA 论文写明的检查点方式（只存线性层的输出，
# 归一化、旋转位置编码、SwiGLU 在反向时重算一遍）算进去：7B 进了容差，13B 仍然偏快约 15%——同样形状的 LLaMA 13B（LLaMA 论文表 15）模型只差 5%，
# 两篇论文的 13B 本身就相差二成多，一个单步时间模型分不开它们。
# 结论：模型算出的 MFU 是「这个布局在这张网上能做到的」，当**上限**用，规划时留余量；MFU 取 0.40 上下有依据，
# 要更准就用第 8 章的模型按实际布局和网络算。
#
# ### 4.3 种子的「有效算力 40%–70%」意味着什么
#
# 同一个任务——Llama 3 70B、15T token、1,000 张 H100——在效率 40% 和 70% 下的差别有多大？

# %%
# NBVAL_CHECK_OUTPUT
h100 = hardware.gpu("H100-SXM")
l3_70b = models.transformer("llama3-70b")
c_70b = compute.train_flops(l3_70b.params(), l3_70b.train_tokens)
lo, hi = compute.EFFECTIVE_COMPUTE_RANGE
for eff in (1.0, hi, lo):
    pf = compute.effective_cluster_tflops(1000, h100.bf16_tflops, eff) / 1e3
    days = compute.time_to_train_days(c_70b, 1000, h100.bf16_tflops, eff)
    print(f"efficiency {eff:4.0%}: effective {pf:6.1f} PFLOP/s -> {days:6.1f} days")

# %% [markdown]
# 理论峰值下 74 天的任务，在 70% 效率下要 106 天，在 40% 效率下要 186 天——相差 80 天，也就是说**效率系数本身就值几百张卡**。
# （70% 只是种子给的上沿；公开的大规模训练最高到 55%，所以规划时别按 70% 排期。）
# 这就是第 1 章说「硬件选型的核心目标是提升效率系数」的原因：网络、存储、调度每提升一点 MFU，都直接折算成训练天数和电费。
#
# 下图把几个预设模型（各自的公开 token 数）在 H100、MFU 40% 下的训练天数画成 GPU 数量的函数。对数坐标下它们都是斜率为 $-1$ 的直线：
# 这是「理想线性扩展」的假设，现实中大规模时曲线会变平（见第 7 节误区二）。

# %%
compute_x.time_to_train_figure(gpu="H100-SXM", mfu=0.40, deadline_days=90)

# %% [markdown]
# ### 4.4 混合专家模型（MoE）：$6ND$ 里的 $N$ 是激活参数
#
# $6N$ 数的是**每个 token 经过的**参数做了多少次乘加。稠密模型每个 token 经过全部参数；混合专家模型（MoE）的每一层有很多个「专家」MLP，
# 路由器只把每个 token 送给其中少数几个（top-k），所以一个 token 只乘到一小部分参数。DeepSeek-V3 有 671B 参数，
# 每个 token 只激活 37B（技术报告摘要），训练 14.8T token；报告 Table 1 给出预训练用了 2.664M H800 GPU·小时。
# 用总参数和用激活参数各算一遍，再看这些 GPU·小时意味着多高的 MFU（`published_runs.deepseek_v3_budget`）：

# %%
# NBVAL_CHECK_OUTPUT
ds = published_runs.deepseek_v3_budget()
print(f"DeepSeek-V3: {ds['params'] / 1e9:.0f}B parameters, {ds['active_params'] / 1e9:.1f}B active per token, "
      f"{ds['tokens'] / 1e12:.1f}T tokens, {ds['gpu_hours'] / 1e6:.3f}M H800 GPU-hours (published)")
print(f"  6 x total  x D = {ds['flops_total_params']:.2e} FLOPs -> MFU {ds['mfu_bf16_total_params']:.0%} of the BF16 peak (impossible)")
print(f"  6 x active x D = {ds['flops_active_params']:.2e} FLOPs -> MFU {ds['mfu_bf16']:.1%} of the BF16 peak")
print(f"  same FLOPs against the FP8 peak (its GEMMs ran in FP8): {ds['utilisation_fp8_peak']:.1%}")
mix = compute.plan_training("mixtral-8x7b", 1e12, "H100-SXM", 0.40, 1024, 30)
print(f"Mixtral 8x7B: {mix.params / 1e9:.1f}B total, {mix.active_params / 1e9:.1f}B active -> "
      f"6ND counts {mix.params / mix.active_params:.1f}x less than with the total")

# %% [markdown]
# 用总参数算，公布的 GPU·小时要求 H800 跑到 BF16 峰值的六倍多——不可能；用激活参数算，MFU 约 35%，正落在公开范围 34%–55% 里。
# 要注意两点：DeepSeek-V3 的矩阵乘用的是 FP8（技术报告 §3.3），按 FP8 峰值算利用率只有约 18%——MoE 的专家 all-to-all 通信、
# 路由的负载不均和较小的专家矩阵都在拉低它；而**显存、检查点和专家梯度的同步仍按总参数**算（第 7、8 章）：
# 671B 参数的训练状态一样要放得下、一样要写进检查点。`compute.plan_training` 和上面的探索器对 MoE 都用激活参数算 $6ND$。

# %% [markdown]
# ## 5. 倒推：截止日期要多少张 GPU
#
# 规划时更常见的问法是反过来的：业务要求 60 天内训完，要几张卡？把上面的公式解出 $N_{\text{GPU}}$，并向上取整：
#
# $$N_{\text{GPU}} = \left\lceil \frac{C}{T_{\text{deadline}} \cdot P_{\text{peak}} \cdot \text{MFU}} \right\rceil$$
#
# 这个数是**下限**。真实项目还要乘上几个系数：
#
# - **故障与重启**：第 1 章算过，一万张卡每天约 2.4 次 GPU 故障；每次中断损失「发现 + 重启 + 从检查点重算」的时间。留 5%–15% 的余量很常见；
# - **整机粒度**：服务器是 8 卡一台，并行策略往往还要求 GPU 数是 TP×PP 的整数倍（第 8 章）；
# - **评测、调参和重来**：正式训练之前的小规模实验、训练中的评测都要占用卡。
#
# 下面用 Llama 3 70B 的规模算一遍，并预留 10% 的时间给故障恢复：

# %%
# NBVAL_CHECK_OUTPUT
deadline = 60
mfu = 0.40
n_min = compute.gpus_for_deadline(c_70b, deadline, h100.bf16_tflops, mfu)
n_margin = compute.gpus_for_deadline(c_70b, deadline * 0.9, h100.bf16_tflops, mfu)
servers = -(-n_margin // 8)
print(f"Llama-3-70B, {c_70b:.3e} FLOPs, H100 at MFU {mfu:.0%}, {deadline} days")
print(f"  minimum GPUs            : {n_min:5d}")
print(f"  with 10% time for faults: {n_margin:5d} -> {servers} servers x 8 = {servers * 8} GPUs")
print(f"  GPU failures per day at that size (MTBF 100,000 h): {reliability.failures_per_day(servers * 8, 100_000):.2f}")

# %% [markdown]
# 同一个任务换三代卡算一遍（60 天、MFU 都按 40%）。注意这里的「MFU 相同」是一个**偏乐观**的假设：单卡峰值越高，每步计算越快，
# 而通信、流水线气泡和数据加载不会同比例变快，所以新一代卡在同样网络上的 MFU 往往更低——第 8 章的单步时间模型会把这部分算出来。

# %%
# NBVAL_CHECK_OUTPUT
for g in ("A100-SXM", "H100-SXM", "B200"):
    spec = hardware.gpu(g)
    n_g = compute.gpus_for_deadline(c_70b, deadline, spec.bf16_tflops, 0.40)
    print(f"{g:9s} BF16 dense {spec.bf16_tflops:6.1f} TFLOP/s -> {n_g:5d} GPUs = {-(-n_g // 8):4d} servers for {deadline} days")

# %% [markdown]
# 从 A100 到 B200，同一个期限需要的卡数降到约七分之一，服务器台数、网卡数、交换机端口、机柜功率也跟着降——这就是为什么容量规划总是先定卡型，
# 再算网络和机房（第 10、12 章）。但卡数少了不等于便宜：单卡价格、功耗和供货周期都不同，第 5 章用总拥有成本（TCO）来比。

# %% [markdown]
# 下面的交互模型把以上所有公式串在一起。试着做几件事：
#
# 1. 把 GPU 从 H100 换成 A100，看同一期限需要的卡数如何变化（989.4 / 312 ≈ 3.2 倍）；
# 2. 把 MFU 从 0.40 拖到 0.55，看能省下多少张卡——这就是网络和软件优化的价值；
# 3. 选 `llama3-405b`、token 设为 15.6T，看在 16,384 张卡上要多少天。
#
# 4. 选 `deepseek-v3` 或 `mixtral-8x7b`（混合专家模型，MoE），看摘要里的「激活参数」：$6ND$ 用的是每个 token 实际经过的参数（第 4.4 节）。
#
# 浅蓝色带是公开大规模训练的 MFU 范围 34%–55%，红色虚线是期限，红色点线是满足期限所需的最少 GPU 数。

# %%
explorer = compute_x.time_to_train_explorer(model="llama3-70b", tokens_t=15.0, gpu="H100-SXM", mfu=0.40, n_gpus=8192,
                                     deadline_days=60)
explorer

# %% [markdown]
# ### 5.1 两个规划参数从哪里来：有效训练时间与 MFU 的上沿
#
# 上面「留 10% 的时间给故障」不是拍脑袋：第 1 章看过 Llama 3 的运维记录，16,384 张 H100 上平均约每 3 小时一次意外中断，
# Meta 靠自动发现、自动隔离和快速重启，把**有效训练时间**（有用的训练时间 ÷ 经过的日历时间）保持在 90% 以上。这是公开报告里的一流水平，
# 规划时应把它当作目标上限而不是默认值：新集群的自动化还不成熟、检查点写得慢时，应当用第 27 章的模型按自己的故障率和检查点耗时算出这个比例。
#
# MFU 同理。公开结果的上沿是字节跳动与北京大学的 MegaScale（NSDI 2024）：在 12,288 张 GPU 上训练 175B 模型达到 55.2% 的 MFU，
# 比同条件下的 Megatron-LM 高 1.34 倍。但这个数字是模型结构（并行的 Transformer block 等）、算子融合、通信与计算重叠、数据流水线和网络调优
# 一起做出来的；一个新团队在新集群上的第一次训练，按 Llama 3 的 38%–43% 规划更稳妥，拿到更高的值是惊喜而不是计划。下一格把两个参数放在一起，
# 看它们各自值多少天：

# %%
# NBVAL_CHECK_OUTPUT
ett = reliability.reference_data()["llama3"]["effective_training_time_min"]  # Llama 3 s3.3.4: > 90 %
for plan_mfu in (0.40, 0.552):  # 0.552: MegaScale (NSDI'24), 175B on 12,288 GPUs
    pure = compute.time_to_train_days(c_70b, 8192, h100.bf16_tflops, plan_mfu)
    print(f"Llama-3-70B on 8,192 H100 at MFU {plan_mfu:.1%}: {pure:5.1f} days of pure compute, "
          f"{pure / ett:5.1f} calendar days at {ett:.0%} effective training time")
print(f"MFU 40% -> 55.2% saves {1 - 0.40 / 0.552:.0%} of the time")

# %% [markdown]
# MFU 从 40% 提到 55.2% 能省下约 28% 的训练时间，比有效训练时间那 10% 的折扣大得多——这就是为什么大厂愿意为这十几个百分点养一整支系统团队；
# 而有效训练时间的折扣是「躲不掉」的，规模越大越要靠自动化守住它。

# %% [markdown]
# ## 6. 实操命令：从「这台机器是什么卡」到集群峰值
#
# 估算的第一步是弄清楚手上（或报价单上）是什么卡。登录一台节点后，用 `nvidia-smi` 的查询模式输出机器可读的 CSV：
#
# ```bash
# nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total,memory.used,temperature.gpu,power.draw,power.limit,clocks.sm,ecc.errors.uncorrected.volatile.total --format=csv
# # 整个集群：对每个节点执行并汇总（Slurm 下）
# srun --nodes=128 --ntasks-per-node=1 nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
# ```
#
# 下面解析的是一份 8×H100 节点的示例输出：格式与 `nvidia-smi --format=csv` 完全一致（表头 `字段 [单位]`、不可用的值为 `[N/A]`），数值是示意性的
# （来源见 `labutil/data/samples_tools.toml` 的 `nvidia_smi_csv` 条目）。解析后把产品名对应到硬件目录，得到这台节点的 BF16 稠密峰值：

# %%
# NBVAL_CHECK_OUTPUT
smi = parse_nvidia_smi_csv(samples.sample("nvidia_smi_csv"))
names = sorted(set(smi.column("name")))
gpu = compute_x.match_catalog_gpu(names[0])
node_pflops = len(smi.rows) * gpu.bf16_tflops / 1e3
print(f"GPUs in node: {len(smi.rows)}, product: {names[0]} -> catalog {gpu.name}")
print(f"node BF16 dense peak: {node_pflops:.2f} PFLOP/s; 128 nodes: {128 * node_pflops:.1f} PFLOP/s")
print(f"Llama-3-70B on 128 such nodes at MFU 40%: "
      f"{compute.time_to_train_days(c_70b, 128 * len(smi.rows), gpu.bf16_tflops, 0.40):.1f} days")

# %% [markdown]
# 同一份输出还告诉你：这 8 张卡并不都能算进容量。空闲的 H100 功耗约 70 W、温度 30 多度，而 3 号卡温度 88 °C、功耗 452 W、
# 还有 2 个未纠正的 ECC 错误；5 号卡读不出功耗（`[N/A]`）。有未纠正 ECC 错误的卡要先排空（drain）再按第 6、27 章的流程处理，
# 而训练作业通常以整台服务器为单位分配（张量并行在服务器内跨 8 张卡），所以**一张坏卡会让整台服务器的 8 张卡都退出容量**：

# %%
# NBVAL_CHECK_OUTPUT
bad = [r["index"] for r in smi.rows if (r["ecc.errors.uncorrected.volatile.total"] or 0) > 0]
no_power = [r["index"] for r in smi.rows if r["power.draw"] is None]
print(f"uncorrected ECC errors on GPU {bad}; power.draw unreadable on GPU {no_power}")
for nodes in (128, 127):
    print(f"{nodes} healthy nodes ({nodes * 8} GPUs): Llama-3-70B at MFU 40% in "
          f"{compute.time_to_train_days(c_70b, nodes * 8, gpu.bf16_tflops, 0.40):.1f} days")

# %% [markdown]
# 128 台里少一台只慢不到 1%，看起来无关紧要；但在万卡集群里，任何时刻都有若干台服务器处于排空、返修或固件升级中，
# 这部分「不可用库存」要在采购时就算进卡数。经验做法是按资产清单（第 19 章）统计过去几个月的平均可用率，而不是按采购数量排期。
#
# 训练跑起来之后，MFU 要从日志里的吞吐反算。Megatron-LM、TorchTitan、DeepSpeed 都会打印每步耗时或 tokens/s；有了 tokens/s，就能用
# $\text{MFU} = 6N \cdot \text{tokens/s} / (N_{\text{GPU}} \cdot P_{\text{peak}})$ 算出来（`compute.mfu_from_throughput`）。
# 一个常用的启动方式（第 24 章详细讲参数）：
#
# ```bash
# torchrun --nnodes=128 --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=$MASTER_ADDR:29500 \
#     pretrain_gpt.py --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 --bf16 --log-throughput ...
# ```
#
# ## 7. 常见误区（每一条都用算出来的数字反驳）
#
# ### 误区一：「集群算力 = 单卡峰值 × 卡数」
#
# 这是种子课程反复强调的：实际有效算力通常只有理论峰值的 40%–70%。看 Llama 3 405B 的真实账本：论文给出 $3.8 \times 10^{25}$ FLOPs，
# Llama 3.1 的模型卡给出 405B 训练累计 30.84M H100 GPU·小时。两者一除，就是「整个训练过程」的平均有效利用率：

# %%
# NBVAL_CHECK_OUTPUT
l3_405b = models.transformer("llama3-405b")
c_405b = compute.train_flops(l3_405b.params(), l3_405b.train_tokens)
gpu_hours = 30.84e6  # Llama 3.1 model card, 405B, cumulative H100-80GB GPU hours
peak_gpu_hours = compute.time_to_train_s(c_405b, 1, h100.bf16_tflops, 1.0) / 3600
run_mfu = compute.mfu_cluster(c_405b, gpu_hours * 3600, 1, h100.bf16_tflops)  # GPU-seconds x 1 GPU
print(f"6ND = {c_405b:.3e} FLOPs = {peak_gpu_hours / 1e6:.2f}M GPU-hours at 100% of peak")
print(f"reported {gpu_hours / 1e6:.2f}M GPU-hours -> whole-run utilisation {run_mfu:.1%}")
print(f"step-level MFU reported in Llama 3 Table 4: 38%-43% (e.g. {compute.mfu(430, h100.bf16_tflops):.1%} at 430 TFLOP/s)")

# %% [markdown]
# 整个训练只达到峰值的约 35%，低于单步 MFU 的 38%–43%：故障重启、检查点、评测和长上下文阶段都在吃效率。
# 如果按「峰值 × 卡数」来排期，会把 405B 的训练时间低估到实际的三分之一左右。
#
# ### 误区二：「卡数翻倍，训练时间就减半」
#
# 只有在扩展效率为 100% 时才成立。Llama 3 论文 Table 4 给出了同一个 405B 训练在两种规模下的实测吞吐：8,192 张 H100 时每卡 430 TFLOP/s，
# 16,384 张时每卡 400 TFLOP/s（全局 batch 相同，数据并行翻倍后每张卡分到的工作更少、通信占比更高）：

# %%
# NBVAL_CHECK_OUTPUT
speedup = (16384 * 400.0) / (8192 * 430.0)  # published per-GPU throughputs (Table 4), not a model
print(f"2x GPUs (8,192 -> 16,384): speed-up {speedup:.2f}x, scaling efficiency {speedup / 2:.1%}")
for n, x in [(8192, 430.0), (16384, 400.0)]:
    print(f"  {n:6d} H100 at {x:.0f} TFLOP/s/GPU: {compute.time_to_train_days(c_405b, n, h100.bf16_tflops, x / h100.bf16_tflops):5.1f} days of pure compute")

# %% [markdown]
# 翻倍的卡只换来 1.86 倍的速度，扩展效率 93%——这已经是世界一流团队在最好的网络上的结果。第 14 章会用通信模型解释为什么规模越大效率越低。
#
# ### 误区三：「数据手册上的 TFLOPS 直接拿来用」
#
# NVIDIA 数据手册上最醒目的数字往往是「with sparsity」（2:4 结构化稀疏）的值，是稠密值的 2 倍；而 LLM 预训练是稠密计算。
# 课程目录里存的都是稠密峰值（H100 SXM BF16 为 989.4 TFLOP/s，手册上对应的稀疏值是 1,979）。用错的后果：

# %%
# NBVAL_CHECK_OUTPUT
sparse_tflops = 2 * h100.bf16_tflops
for label, peak in [("dense (correct)", h100.bf16_tflops), ("with sparsity (wrong)", sparse_tflops)]:
    print(f"{label:22s} peak {peak:7.1f} TFLOP/s -> Llama-3-70B on 1,024 H100 at MFU 40%: "
          f"{compute.time_to_train_days(c_70b, 1024, peak, 0.40):6.1f} days")

# %% [markdown]
# 用稀疏峰值会把训练时间低估一半（90.7 天 vs 181.3 天），或者说少买一半的卡。同理，FP8 峰值只有在真正用 FP8 训练时才能用，
# 第 6 章会讲各种精度的峰值以及它们之间的关系。
#
# ## 8. 练习
#
# 把答案填进 `answer_k`（数字即可，单位见题目），运行单元格查看判分；卡住时调用 `exercise("ch04.k").hint(1)`。
#
# **练习 1**：Llama 2 70B（预设 `llama2-70b`）训练 2.0T token，总训练算力 $6ND$ 是多少 FLOPs？

# %%
answer_1 = None
exercise("ch04.1").check(answer_1)

# %% [markdown]
# **练习 2**：Llama 3 70B（预设 `llama3-70b`）训练 15T token，使用 8,192 张 H100 SXM，MFU 0.40（BF16 稠密峰值），需要多少天？

# %%
answer_2 = None
exercise("ch04.2").check(answer_2)

# %% [markdown]
# **练习 3**：一个 70e9 参数的模型按 Chinchilla 最优（每参数 20 token）训练，要求 30 天内完成，使用 A100 80GB SXM、MFU 0.45，最少需要多少张 GPU？

# %%
answer_3 = None
exercise("ch04.3").check(answer_3)

# %% [markdown]
# **练习 4**：在 512 张 H100 SXM 上训练 `llama3-8b`，日志显示吞吐为每秒 350 万 token。它的 MFU 是多少？（单位：%，按课程约定填百分数，如 40 % 填 40）

# %%
answer_4 = None
exercise("ch04.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：Llama 3 70B 训练 15T token，H100 SXM、MFU 0.40，要求 60 天内完成。在 1,024 / 2,048 / 4,096 / 8,192 张中，最少选几张？

# %%
answer_5 = None  # 1024 / 2048 / 4096 / 8192
exercise("ch04.5").check(answer_5)

# %% [markdown]
# ## 9. 小结
#
# - 训练总算力 $C \approx 6ND$；长上下文时加上注意力项 $12lsh$ 每 token；开启完整重计算时硬件执行 $8ND$（HFU 口径）。
# - 计算最优的数据量约为每参数 20 个 token（Chinchilla），但今天的模型普遍远超这个数，算力需求随之成倍增长。
# - 训练时间 $t = C / (N_{\text{GPU}} \cdot P_{\text{peak}} \cdot \text{MFU})$，峰值必须用所用精度的**稠密**值；MFU 是集群级的数，公开大规模训练的 MFU 范围是 34%–55%，整个训练过程的平均值更低。
# - 混合专家模型的 $6ND$ 用**激活参数**（DeepSeek-V3：37B，不是 671B）；显存和检查点仍按总参数。
# - 分清 MFU 与 HFU：Megatron-LM 的「52%」是含重计算的 HFU，MFU 约 39%；选择性重计算只多 2.7% 的 FLOPs（Korthikanti 式 (8)）。
# - MFU 可以由单步时间模型从布局和集群算出来；在拟合它用过的公开结果（Megatron-LM、Korthikanti、Llama 2 70B、Llama 3）上误差在 ±10% 以内，
#   在没参与拟合的公开结果 5 条里有 3 条在 ±10% 以内、其余偏乐观（见第 4.2 节与第 8 章）：把它当上限，不当承诺。
# - 倒推 GPU 数时向上取整，再为故障恢复、整机粒度和并行约束留余量。
#
# 下一章把 GPU 数量和天数换算成钱：采购成本、电费、停机成本，以及「自建还是上云」的平衡点。
#
# ## 参考资料
#
# - J. Kaplan et al., *Scaling Laws for Neural Language Models*, 2020, §2.1 与 Table 1：每 token 训练算力约 $6N$。
# - T. Brown et al., *Language Models are Few-Shot Learners*, 2020, Table 2.1（GPT-3 结构）与 Table D.1（175B：$3.14 \times 10^{23}$ FLOPs）。
# - J. Hoffmann et al., *Training Compute-Optimal Large Language Models* (Chinchilla), 2022, Table 3：约 20 token/参数；Chinchilla 70B、1.4T token。
# - D. Narayanan et al., *Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM*, SC21：Table 1（1T 模型 3072 张 A100、每卡 163 TFLOP/s、52%，含重计算的 HFU 口径），§5.1 与公式 (3)（34 天、84 天的估算，$8TP/(nX)$）。
# - V. Korthikanti et al., *Reducing Activation Recomputation in Large Transformer Models*, MLSys 2023（arXiv:2205.05198）：式 (7)(8)（模型 FLOPs 与选择性重计算的硬件 FLOPs）、表 5（迭代时间）。
# - A. Chowdhery et al., *PaLM: Scaling Language Modeling with Pathways*, 2022, 附录 B：MFU 与 HFU 的定义。
# - H. Touvron et al., *Llama 2: Open Foundation and Fine-Tuned Chat Models*, 2023, Table 1；Meta Llama 2 / Llama 3 / Llama 3.1 模型卡（参数量、训练 token、405B 的 30.84M GPU·小时）。
# - A. Grattafiori et al. (Meta), *The Llama 3 Herd of Models*, 2024：Table 3（模型结构）、Table 4（8,192/16,384 张 H100 的每卡 TFLOP/s 与 MFU）、405B 的 $3.8 \times 10^{25}$ FLOPs。
# - NVIDIA H100 / A100 Tensor Core GPU 数据手册（稠密峰值 = 手册「with sparsity」值的一半），见 `labutil/data/gpus.toml`。
# - DeepSeek-AI, *DeepSeek-V3 Technical Report*, 2024（arXiv:2412.19437）：摘要（671B 参数、每 token 激活 37B）、Table 1（预训练 2.664M H800 GPU·小时，14.8T token）、§3.3（FP8 混合精度训练）。
# - A. Q. Jiang et al., *Mixtral of Experts*, 2024, §2：47B 参数、每 token 激活 13B。
# - Z. Jiang et al. (ByteDance, Peking University), *MegaScale: Scaling Large Language Model Training to More Than 10,000 GPUs*, NSDI 2024：175B 模型、12,288 张 GPU、55.2% MFU，比 Megatron-LM 高 1.34 倍。
# - Llama 3 论文 §3.3.4：有效训练时间 90% 以上（第 1、27 章）。
# - nvidia-smi 文档（`--query-gpu`、`--format=csv`），示例输出格式见 `labutil/data/samples_tools.toml`。
