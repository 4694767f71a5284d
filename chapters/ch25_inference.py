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
# # 第25章 推理集群：显存、延迟与「为一个 P99 目标要几张卡」
#
# > 模块六「推理、运维与实战」的第 25 章。前置：第 6 章（GPU 架构与 roofline）、第 7 章（显存构成）、
# > 第 8 章（张量并行）、第 13 章（集合通信的 α-β 模型）。本章之后，第 26 章讲怎样监控推理服务，第 29 章讲训练与推理混部时的隔离。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 区分 LLM 推理的两个阶段：**prefill**（算力受限）与 **decode**（显存带宽受限），并用 roofline 算出 TTFT 与 TPOT；
# - 用 $2\cdot L\cdot n_{kv}\cdot d_{head}\cdot s\cdot b\cdot \text{bytes}$ 算出 **KV cache**，解释 GQA、MLA、KV 量化、张量并行如何改变它，以及一张卡最多能并发多少条序列；
# - 说明 **continuous batching**、**PagedAttention**、**动态批处理**、**量化**、**TP / PP / EP** 各自解决的是哪一个瓶颈，放不下一台机器的模型（405B、DeepSeek-V3）怎样切；
# - 用排队论（Erlang C / M/D/c）把「QPS + P99 目标」换算成 GPU 数量，而不是用「QPS ÷ 单卡 QPS」；
# - 复核种子课程的 CV/多模态推理场景：8~32 张卡、K8s 弹性伸缩、RoCE 即可、P99 < 100 ms、> 1000 QPS，以及 Triton + TensorRT / vLLM 的部署命令。

# %%
from labutil.notebook import setup, show_table
from dataclasses import replace

from labutil import inference, hardware, models, units
from labutil.parsers import parse_nvidia_smi_csv
from labutil.explore import inference as inference_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 推理集群和训练集群有什么不同
#
# 种子课程对两类集群的对比只有一句话，却值得反复读：**推理集群更关注吞吐量与响应延迟的平衡，常采用模型并行、动态批处理、量化等手段，
# 对网络带宽要求低于训练，但对调度灵活性要求更高。** 训练是一个几周不停的大作业，每一步都要做 all-reduce，所以网络是命门；
# 推理是成千上万个互不相关的小请求，每个请求只在一个副本（1 张卡，或者一台机器内通过 NVLink 做张量并行的几张卡）里完成，
# 副本之间几乎不通信。于是推理集群的设计问题换了一套：
#
# | 维度 | 训练集群 | 推理集群 |
# |---|---|---|
# | 优化目标 | 单个作业的完成时间（MFU × 扩展效率） | 每张卡的吞吐（tokens/s、QPS），在延迟 SLO（P99）约束下 |
# | 显存里装什么 | 权重 + 梯度 + 优化器状态 + 激活（第 7 章） | 权重 + **KV cache**（随并发与上下文线性增长） |
# | 瓶颈 | 算力与集合通信 | decode 阶段是**显存带宽**；排队造成的**尾延迟** |
# | 网络 | 每卡 400G InfiniBand，Fat-Tree 无收敛 | 副本内 NVLink；副本间 RoCE / 普通以太网即可 |
# | 典型卡 | H100 / H800 / B200 | 大模型用 H100/H200；CV 与中小模型常用推理卡 **L4 / L40S** |
# | 调度 | Slurm 整机分配，作业级 | K8s Deployment + HPA 弹性伸缩，请求级 |
# | 软件 | PyTorch + Megatron/DeepSpeed | LLM：**vLLM**、**SGLang**、**TensorRT-LLM**；CV 等小模型：**TensorRT** 引擎 + **Triton Inference Server** |
#
# 种子课程的第二个场景给了一组具体指标：**CV/多模态推理集群，8~32 张 GPU，配合 K8s 弹性伸缩，RoCE 即可满足，P99 延迟 < 100 ms，
# 吞吐量 > 1000 QPS，典型软件 K8s + Triton Inference Server + TensorRT**。另一份种子材料补充：推理服务的硬件侧重是
# 「推理优化卡（如 L4/L40S）、高吞吐存储、弹性网络」。本章的目标，就是让你能用模型**算出**这些结论，而不是背下来。
#
# ## 2. 一个 LLM 请求的一生：prefill 与 decode
#
# 一个生成式请求分两段：
#
# 1. **Prefill**：把整段 prompt（例如 1,024 个 token）一次性送进模型，算出每一层的 K、V 存进 KV cache，并产出第一个输出 token。
#    这是一次大矩阵乘：每个权重被 1,024 个 token 复用，**算术强度高，受算力限制**。它决定 **TTFT**（time to first token）。
# 2. **Decode**：之后每一步只为每条序列生成 1 个 token。每一步都要把**全部权重**从 HBM 读一遍，再读出这条序列全部历史的 K、V，
#    却只对 batch 个 token 做计算。BF16 的每个权重占 2 字节、对每个 token 做 2 次浮点运算，所以 batch 小时算术强度只有 $\approx b$ FLOP/Byte
#    （FP8 权重约 $2b$），远低于 H100 的 ridge point（约 295 FLOP/Byte，第 6 章），
#    所以 **decode 受显存带宽限制**（Pope et al. 2022 §3.1）。它决定 **TPOT**（time per output token）。
#
# 用 roofline 写出一步 decode 的时间（每张卡，张量并行度 $t$）：
#
# $$
# T_{\text{step}} = \max\!\left(\frac{W/t + b\cdot s\cdot K_{\text{tok}}/t}{B_{\text{HBM}}\cdot \eta_{bw}},\;
# \frac{b\,(2N + 4\,L\,h\,s)/t}{P_{\text{peak}}\cdot \eta_{c}}\right) + T_{\text{TP}}
# $$
#
# 其中 $W$ 是权重字节数，$K_{\text{tok}}$ 是每个 token 的 KV 字节数，$s$ 是上下文长度，$N$ 是参与矩阵乘的参数量
# （每个参数每个 token 2 FLOP），$L$、$h$ 是层数与隐藏维度，$T_{\text{TP}}$ 是每层两次 all-reduce 的时间（Megatron-LM 的切法）。
# 本课程假设 $\eta_{bw}=0.8$、$\eta_c=0.5$（可调参数，在 lab04 里测你自己的卡）。一个请求的端到端延迟是
# $\text{TTFT} + (n_{\text{out}}-1)\cdot\text{TPOT}$。
#
# 先算一个例子：Llama-3-8B、BF16、单张 H100 SXM、batch 1、上下文 1,024。

# %%
# NBVAL_CHECK_OUTPUT
st = inference.decode_step("llama3-8b", "H100-SXM", 1, 1024)
h100 = hardware.gpu("H100-SXM")
print(f"memory term {st.memory_s * 1e3:.2f} ms, compute term {st.compute_s * 1e3:.3f} ms -> TPOT {st.time_s * 1e3:.2f} ms")
print(f"achieved {st.flops / st.time_s / 1e12:.2f} TFLOP/s = {st.flops / st.time_s / 1e12 / h100.bf16_tflops:.2%} of the BF16 peak")
print(f"arithmetic intensity {st.flops / st.bytes:.2f} FLOP/byte vs the H100 ridge point "
      f"{h100.bf16_tflops * 1e12 / (h100.hbm_gbs * 1e9):.0f} FLOP/byte")
pf = inference.prefill("llama3-8b", "H100-SXM", 1024)
print(f"prefill of 1024 tokens: compute {pf.compute_s * 1e3:.1f} ms vs memory {pf.memory_s * 1e3:.1f} ms -> TTFT {pf.time_s * 1e3:.1f} ms")

# %% [markdown]
# batch 1 的 decode 只用了峰值算力的约 0.26%（每读 1 字节只做约 1 次运算，离 ridge point 差 300 多倍）：6 ms 几乎全花在把 16 GB 权重从 HBM 搬进 SM 上。prefill 则相反，
# 1,024 个 token 共享一次权重读取，算力项（约 32 ms）远大于访存项。这就是推理优化的两条主线：
# **提高 decode 的 batch**（让一次权重读取服务更多 token）和**减少每个 token 要读的字节**（量化、GQA）。
# 下图把 decode 的两项随 batch 画出来：直到 batch 上千，访存项都压着算力项；吞吐随 batch 近似线性上升，TPOT 却几乎不变——
# 这就是 batching 在推理里「白送」的吞吐。

# %%
inference_x.decode_roofline_figure("llama3-8b", "H100-SXM")

# %% [markdown]
# ## 3. KV cache：推理显存的大头
#
# 每生成或读入一个 token，每一层都要缓存它的 K 和 V 向量。每个 token、每张卡的 KV 字节数是
#
# $$
# K_{\text{tok}} = \frac{2 \cdot L \cdot n_{kv} \cdot d_{\text{head}} \cdot \text{bytes}}{t},\qquad
# M_{\text{KV}} = K_{\text{tok}} \cdot s \cdot b .
# $$
#
# vLLM 论文（Kwon et al. 2023 §3）给了一个可复核的数：13B 模型（40 层，隐藏维度 5,120，FP16）每个 token 的 KV 是
# $2\times5120\times40\times2 = 819{,}200$ 字节，「约 800 KB」；一个 2,048 token 的请求就要 1.6 GB 以上。
# Llama-2-70B 与 Llama-3 用了 **GQA**（Ainslie et al. 2023）：70B 的 64 个 query 头共享 8 个 KV 头，KV cache 缩小到 MHA 的 1/8（Llama-3-8B 是 32 个 query 头共享 8 个，1/4）。
# 张量并行把 KV 头分到 $t$ 张卡上；当 $t$ 超过 KV 头数时，KV 头只能复制（vLLM 的做法），再加卡也不再减少每卡的 KV。
#
# DeepSeek-V2/V3 走得更远：**MLA**（multi-head latent attention，DeepSeek-V2 论文 §2.1）不缓存每个头的 K、V，而是每层只缓存一个
# 512 维的压缩向量加一个 64 维的 RoPE 键，所有头共用，每个 token 每层 $(d_c + d_h^R)$ 个元素。代价是：这个潜向量相当于**只有一个 KV 头**，
# 张量并行切不开它，TP 的每张卡都要存一份完整的——所以 SGLang 给 DeepSeek 用「注意力部分数据并行」（DP attention）而不是 TP。
# 另一个省 KV 的手段是把 KV 本身量化成 FP8（vLLM `--kv-cache-dtype fp8`），每个元素从 2 字节变成 1 字节。
# %%
# NBVAL_CHECK_OUTPUT
for name in ("llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b", "deepseek-v3"):
    kv = inference.kv_bytes_per_token(name)
    print(f"{name:11s} KV per token {kv / 1e3:7.1f} kB; 32 seqs x 8192 tokens = {inference.kv_cache_gb(name, 32, 8192):6.1f} GB")
print(f"llama2-13b per token in KiB: {inference.kv_bytes_per_token('llama2-13b') / 1024:.0f} (vLLM paper: ~800 KB)")
ds_mha = replace(models.transformer("deepseek-v3"), kv_lora_rank=0)  # the same model caching all 128 heads
print(f"deepseek-v3 if it cached every head: {inference.kv_bytes_per_token(ds_mha) / 1e6:.2f} MB per token "
      f"({inference.kv_bytes_per_token(ds_mha) / inference.kv_bytes_per_token('deepseek-v3'):.0f}x the MLA latent); "
      f"MLA per GPU at TP=8: {inference.kv_bytes_per_token('deepseek-v3', tp=8) / 1e3:.1f} kB (not split)")

# %% [markdown]
# 32 条 8K 上下文的序列，Llama-3-70B 的 KV cache 就要 86 GB——比一张 H100 的显存还大。DeepSeek-V3 是 671B 参数的模型，
# 每个 token 的 KV 却只有 70.3 kB，比 70B 的 Llama-3 还小；同一个模型如果缓存全部 128 个头，每个 token 要 4.00 MB，是 MLA 的 57 倍。
# 所以推理的显存账要这样算：
#
# $$
# b_{\max} = \left\lfloor \frac{M_{\text{HBM}}\cdot u - W/t - M_{\text{reserve}}}{K_{\text{tok}}\cdot s} \right\rfloor
# $$
#
# $u$ 是 vLLM 的 `--gpu-memory-utilization`（默认 0.9）。权重的字节数取决于精度：BF16 2 字节、FP8/INT8 1 字节、INT4 0.5 字节。
# 下图左边是 8B 与 70B 在各精度下的权重（虚线是 L4 / L40S / H100 的显存），右边是每个 token 的 KV：

# %%
inference_x.memory_figure()

# %% [markdown]
# 几个直接的结论：Llama-3-70B 的 BF16 权重 141 GB，一张 80 GB 的卡放不下，至少要 TP=2（实际常用 TP=4 或 8，为 KV 留空间）；
# INT4 量化后 35 GB，一张 48 GB 的 L40S 可以放下权重，但按 0.9 的显存利用率只剩 7.9 GB 给 KV。Llama-3-8B 的 INT4 权重只有 4 GB，一张 24 GB 的 L4 就能服务。
#
# | 精度 | 每参数字节 | 矩阵乘用的算力 | 说明 |
# |---|---|---|---|
# | BF16 / FP16 | 2 | BF16 Tensor Core | 基线 |
# | FP8（W8A8） | 1 | FP8 Tensor Core（Hopper/Ada 起） | 权重与激活都量化，算力翻倍 |
# | INT8（W8A16） | 1 | BF16（先反量化） | 仅权重量化，省显存与带宽 |
# | INT4（W4A16，GPTQ/AWQ） | 0.5 | BF16（先反量化） | 省 4 倍字节；decode 提速最明显 |
#
# 把显存账和 roofline 连在一起：Llama-3-70B 用 4 张 H100（TP=4），每条请求 1,024 token prompt + 256 token 输出：

# %%
# NBVAL_CHECK_OUTPUT
rows = []
for prec, tp in (("bf16", 4), ("fp8", 4), ("bf16", 8), ("int4", 2)):
    r = inference.llm_replica("llama3-70b", "H100-SXM", prec, tp, 1024, 256, batch=64)
    rows.append({"precision": prec, "TP": tp, "weights GB/GPU": round(r.weights_gb, 1), "max batch": r.max_batch,
                 "TTFT ms": round(r.ttft_ms, 1), "TPOT ms": round(r.tpot_ms, 1),
                 "tokens/s per GPU": round(r.tokens_per_s / tp)})
show_table(rows)

# %% [markdown]
# 读这张表：同样 TP=4，FP8 把每卡权重减半，TPOT 从约 18.8 ms 降到约 12.3 ms，并发上限从 350 升到 518；把 TP 从 4 加到 8，
# TPOT 同样降到约 12.2 ms，用的卡却多了一倍，每张卡的吞吐反而下降（850 → 656 tokens/s）——TP 是用来**放得下**和**压低单请求延迟**的，不是提高每卡吞吐的手段；
# 跨机做 TP 更是得不偿失（每层两次 all-reduce，走网卡比 NVLink 慢一个数量级）。所以大模型推理的常见做法是
# **机内 TP（NVLink），机间多副本（数据并行）**，副本之间没有通信，这正是「推理对网络带宽要求低于训练」的原因。
#
# ### 3.1 一台机器放不下：PP 与 EP
#
# 有两类模型一台 8 卡服务器装不下。**稠密大模型**如 Llama-3.1-405B：BF16 权重约 812 GB。TP 最多做到机内的 8 张卡（跨机 TP 每层两次 all-reduce 走网卡，见上），
# 再大就加**流水线并行（PP）**：按层切成几段放到几台机器上，段与段之间只传一个 token 的激活，流量小，能容忍网卡的带宽和延迟。
# vLLM 文档的建议正是「TP = 每台机器的卡数，PP = 机器数」。另一条路是把权重量化到 FP8，重新塞回一台机器：

# %%
# NBVAL_CHECK_OUTPUT
for model, prec, tp, pp in (("llama3-405b", "bf16", 8, 1), ("llama3-405b", "bf16", 8, 2), ("llama3-405b", "fp8", 8, 1),
                            ("deepseek-v3", "fp8", 8, 1)):
    room = {g: inference.kv_budget_gb(model, g, prec, tp, pp=pp) for g in ("H100-SXM", "H200-SXM")}
    print(f"{model:11s} {prec:4s} TP={tp} PP={pp}: weights {inference.weights_gb(model, prec, tp, pp):5.1f} GB/GPU; "
          + ", ".join(f"{g} {'KV room ' + format(v, '5.1f') + ' GB' if v > 0 else 'does not fit'}" for g, v in room.items()))

# %% [markdown]
# 405B 在 BF16、TP=8 时每卡 101 GB 权重，80 GB 的 H100 放不下（141 GB 的 H200 放得下）；TP=8 × PP=2（两台机器）或 FP8 单机都是每卡 51 GB。
# **MoE 模型**是另一回事。DeepSeek-V3 总参数 671B、每个 token 只激活约 37.6B：FP8 权重每卡 84 GB（TP=8），8 张 H100 放不下，8 张 141 GB 的 H200 放得下、每卡还留 43 GB 给 KV
# （SGLang 文档对 DeepSeek-V3 FP8 推荐的正是 8×H200 或 2×8×H100）。它的 decode 有一个稠密模型没有的性质：一步 decode 读多少权重，取决于这一批 token 路由到了多少个专家。
# 256 个路由专家、每个 token 选 8 个，假设路由均匀且独立，$b$ 个 token 平均碰到 $E\,[1-(1-k/E)^b]$ 个不同的专家：

# %%
# NBVAL_CHECK_OUTPUT
for b in (1, 8, 64, 256):
    wb = inference.decode_weight_bytes("deepseek-v3", b, "fp8")
    print(f"batch {b:3d}: {inference.experts_touched('deepseek-v3', b):5.1f} of 256 experts per layer touched, "
          f"{wb / 1e9:5.0f} GB of FP8 weights read per step = {wb / b / 1e9:5.1f} GB per token")

# %% [markdown]
# batch 1 时只读激活的 38 GB——这是 MoE「便宜」的由来；batch 到 64，一步就要碰 222 个专家、读 585 GB，几乎所有权重都要读一遍，
# 摊到每个 token 的字节才降下来（batch 256 时每 token 2.6 GB）。结论和稠密模型一样是「batch 要大」，但 MoE 的 batch 是**每个专家**分到的 token 数：
# 全局 $b$ 个 token 平均到每个专家只有 $b\,k/E$ 个。所以大规模 MoE 推理用**专家并行（EP）**：把专家分散到很多张卡上，每张卡只放少数几个专家，
# 用 all-to-all 把 token 发到专家所在的卡，让每个专家一次处理足够多的 token。DeepSeek-V3 技术报告 §3.4 给出的部署：prefill 的最小单元是 4 台 32 张卡（注意力 TP4+SP、MoE EP32），
# decode 的最小单元是 40 台 320 张卡（EP320，每张卡一个专家）。这里 all-to-all 每一层都要跨机走 InfiniBand/RoCE——大 EP 的 MoE 推理，
# 网络又回到了训练集群的要求（第 11–14 章）。
#
# ## 4. Continuous batching 与动态批处理
#
# 既然 decode 的吞吐几乎随 batch 线性增长，问题就变成怎样让 batch 一直是满的。传统的**静态批处理**把 $b$ 个请求凑成一批，
# 一起跑到**最长**的那个结束才放下一批，短请求结束后它的槽位就空着。Orca（Yu et al. 2022）提出的**迭代级调度**
# （vLLM、TensorRT-LLM 里叫 continuous / in-flight batching）在每一步 decode 之后检查：哪条序列结束了，就立刻把排队的新请求补进去。
# 再加上 vLLM 的 PagedAttention：像操作系统的虚拟内存那样，把 KV 按固定大小的块（`--block-size`，8/16/32 个 token）按需分配，
# 而不是按最大长度预留一整段连续显存，每条序列最多浪费最后一个块没写满的部分。vLLM 论文（Kwon et al. 2023 §1、图 2）测得：
# 之前的系统里只有 20.4%–38.2% 的 KV 显存真正存着 token 状态，vLLM 是 96.3%（vLLM 的发布博客把它说成「浪费从 60%–80% 降到 4% 以下」）。
#
# 下面用一组随机输出长度（16~1,024 token，均匀分布，固定随机种子）算静态批处理的槽位利用率：

# %%
# NBVAL_CHECK_OUTPUT
out_lens = rng.integers(16, 1025, 4096)
for b in (8, 32, 128):
    u = inference.static_batching_utilization(out_lens, b)
    print(f"static batch {b:3d}: {u:.1%} of decode slots do useful work -> continuous batching gives up to {1 / u:.2f}x")

# %% [markdown]
# batch 越大，「等最长的那个」越浪费：128 的静态批只有约一半的槽位在干活。continuous batching 的吞吐提升就来自这里。
#
# 围绕 continuous batching，现代推理引擎还叠了三件事，值得知道它们各治什么：
#
# - **Chunked prefill**（Sarathi-Serve，OSDI 2024；vLLM `--enable-chunked-prefill`）：把长 prompt 的 prefill 切成小块，和正在 decode 的序列拼在同一步里，
#   避免一个 8K prompt 的 prefill 让同批所有用户的 TPOT 突然变长——它和后面讲的 prefill/decode 分离治的是同一个病，做法是「混合但限量」。
# - **前缀缓存**（vLLM `--enable-prefix-caching`；SGLang 的 RadixAttention，Zheng et al. 2024）：多个请求共享同一段系统提示或 RAG 文档时，
#   那段前缀的 KV 只算一次、存一份，后来的请求直接复用，TTFT 和显存都省。
# - **推测解码**（Leviathan et al., ICML 2023）：用一个小模型一次猜几个 token，大模型一步验证。decode 是带宽受限的，一次读权重多验证几个 token 几乎不增加时间，
#   猜对时相当于把 batch 做大了，输出分布与原模型一致。
#
# CV 模型没有 decode，每个请求是一次前向。Triton 的**动态批处理**（`dynamic_batching { max_queue_delay_microseconds }`）
# 在服务端把短时间内到达的请求拼成一批：批越大，权重读取和 kernel 启动的固定开销被摊得越薄，但每个请求要多等凑批的时间，
# 一批的执行时间也变长。对一个本来就把 GPU 算满的大模型，凑批反而只增加延迟——后面 CV 的例子会看到这一点。
#
# ## 5. 从 QPS 和 P99 到 GPU 数：排队论
#
# 设一个副本（一张卡或一个 TP 组）处理一个请求（或一批）的时间是 $S$，它的容量是 $\mu = 1/S$。很多人这样算卡数：
# $n = \lceil \lambda / \mu \rceil$。这相当于让每张卡 100% 忙——而请求是随机到达的（Poisson 到达是 MLPerf Server 场景的假设，
# Reddi et al. 2020），忙的卡前面就会排队，利用率越接近 1，队越长，**尾延迟**爆炸。排队论给出这个关系。
# $c$ 个服务台、到达率 $\lambda$、负载 $a=\lambda S$（Erlang），请求需要排队的概率是 **Erlang C** 公式：
#
# $$
# C(c,a) = \frac{\dfrac{a^c}{c!}\dfrac{c}{c-a}}{\displaystyle\sum_{k=0}^{c-1}\frac{a^k}{k!} + \frac{a^c}{c!}\frac{c}{c-a}},\qquad
# P(W>t) = C(c,a)\,e^{-(c\mu-\lambda)\,t/\kappa}
# $$
#
# 对 M/M/c（指数服务时间）$\kappa=1$ 是精确解；GPU 处理固定形状输入的时间几乎是常数（M/D/c），用 Allen–Cunneen 近似
# $\kappa = (c_a^2 + c_s^2)/2 = 1/2$；凑成 $b$ 个一批时批的到达更均匀，$c_a^2 = 1/b$。P99 延迟就是使 $P(T>t)=1\%$ 的 $t$。
# 还有一个部署细节很要紧：K8s Service 经 kube-proxy（iptables 模式）**随机**挑一个后端，每个副本各排各的队（每个副本一个 M/D/1）；
# 而「共享队列」（最少未完成请求路由，或一个 Triton 进程管多张卡）相当于 M/D/c，尾延迟低得多。下图是 16 个副本、每请求 14.5 ms 时，
# P99 随负载的变化：

# %%
inference_x.p99_vs_load_figure(service_ms=14.5, replicas=16)

# %% [markdown]
# 注意容量线（约 1,103 req/s）和曲线穿过 100 ms 的位置：随机路由下，负载只到容量的三分之二左右 P99 就超标了。
# 下面的探索器把本章所有模型串起来：选模型、GPU、精度、TP、batch、负载和 P99 目标，看显存、吞吐曲线和需要的 GPU 数。
# 左图是每张卡的显存：权重、当前 batch 的 KV、还能再放的 KV，以及 `--gpu-memory-utilization 0.9` 留在外面的那 10%（斜线）；
# 中图是 decode 吞吐随 batch 的变化（星号是当前 batch）；右图是满足 P99 目标所需的 GPU 数随负载的变化。
# 试试：把 Llama-3-70B 换成 FP8；把 TP 从 4 拖到 8；把 GPU 换成 L40S（菜单只留下放得下的精度和 TP）；把 batch 拖到 1,024（被 KV 容量截断）；
# 选 deepseek-v3，看 MLA 的每条序列 KV 有多小、8 张 H100 只能放下哪种精度，再换成 H200。

# %%
explorer = inference_x.serving_explorer()
explorer

# %% [markdown]
# 同一个模型算出来的规划结果（Llama-3-70B BF16，TP=4，batch 64，20 req/s，端到端 P99 ≤ 20 s）：

# %%
# NBVAL_CHECK_OUTPUT
plan = inference.llm_gpus_for_slo(20, 20_000, "llama3-70b", "H100-SXM", "bf16", tp=4, batch=64)
print(f"replicas {plan.replicas}, GPUs {plan.gpus}, P99 {plan.p99_ms / 1e3:.2f} s, utilisation {plan.utilization:.0%}, "
      f"replica capacity {plan.replica_capacity_qps:.1f} req/s")

# %% [markdown]
# 两个副本、8 张卡，利用率约 76%：剩下的约 24% 不是浪费，而是给随机到达留的排队余量。这里的规划目标不是「每卡吞吐最大」，
# 而是「在满足 P99 的前提下每卡吞吐最大」——DistServe 论文把它叫作 **goodput**：每秒完成、且满足延迟目标的请求数。
# 压测报告里只看 tokens/s 的峰值会系统性地高估容量；上线前要在目标 P99 下找吞吐（正是第 7 节 `perf_analyzer` 的读法），
# 再按业务的峰值/均值比和至少两个副本的高可用要求往上取整。
#
# 这里把「端到端 P99」当目标是一个简化。流式输出的 LLM 服务通常把 SLO 拆成两个：**TTFT 的 P99**（用户等第一个字，主要是排队 + prefill）
# 和 **TPOT 的 P99**（吐字速度，由 decode 的 batch 大小决定），DistServe 的 goodput 就是同时满足两者的请求比例。两者的杠杆不同：
# TTFT 靠副本数和 chunked prefill/分离式 prefill，TPOT 靠限制每个副本的并发（`--max-num-seqs`）。压测时两条分位线都要看。
#
# ## 6. 复核种子场景：CV 推理，P99 < 100 ms、1000 QPS
#
# CV 模型的一次前向 FLOPs 是公开的：ResNet-50 每张 224 px 图像 4.09 G 次乘加（torchvision 模型卡，He et al. 2016 Table 1 为 3.8 G），
# ViT-L/16 为 61.55 G，ViT-H/14（518 px，SWAG）为 1,016.72 G；1 次乘加 = 2 FLOP。服务时间模型：
# $S(b) = t_0 + \max\big(W/B_{\text{HBM}},\; b\cdot F / (P\cdot\eta)\big)$，$t_0=0.5$ ms（kernel 启动与输入拷贝）、$\eta=0.4$，都是可调的课程假设，
# 上线前用 `trtexec` 和 `perf_analyzer` 实测替换。下面对三种模型、三种卡，算 1000 QPS、P99 ≤ 100 ms 需要的卡数（随机路由；
# batch 8 的凑批等待取 $(b-1)/\lambda$ = 7 ms）：

# %%
# NBVAL_CHECK_OUTPUT
rows = []
for m in inference.CV_MODELS:
    for g in ("L4", "L40S", "H100-SXM"):
        gf, n = inference.cv_model(m)
        row = {"model": m, "GPU": g, "ms/image (b=1)": round(inference.cv_batch_ms(g, 1, gflops_per_image=gf, params=n), 2)}
        for b in (1, 8):
            try:
                p = inference.cv_cluster_plan(g, 1000, 100, b, model=m)
                row[f"GPUs b={b}"] = p.gpus
            except ValueError:
                row[f"GPUs b={b}"] = "n/a"
        rows.append(row)
show_table(rows)

# %%
inference_x.cv_gpus_figure()

# %% [markdown]
# 这张表解释了种子里的「8~32 张卡」：ResNet-50 这样的小模型，1000 QPS 一张 L4 就够（生产上仍要至少 2 个副本做高可用，
# 再按峰值/均值比留余量）；真正需要十几到几十张卡的是 ViT-H 这一级的大视觉/多模态模型——L40S 要 23 张，H100 要 7 张，
# 而 L4 单张图就要 42.5 ms，随机路由下要 384 张才能把 P99 压进 100 ms，这时应该换卡而不是加卡。动态批处理对小模型有效
# （ViT-L 在 L40S 上从 2 张降到 1 张），对已经把 GPU 算满的 ViT-H 则没有帮助：在 L4 和 L40S 上，一批 8 张的执行时间本身就超过 100 ms（n/a）。
# 网络呢？假设每张图是 150 KB 的 JPEG，1000 QPS × 150 KB ≈ 1.2 Gb/s，一块 25G 网卡都用不满——「RoCE 即可满足」甚至普通以太网就够；
# 推理集群真正要的是种子说的「弹性」：K8s HPA 按负载增减副本。
#
# ## 7. 实操命令
#
# 部署与压测一个推理服务，最常用的命令如下（版本不同，参数名可能略有差别，以 `--help` 为准）：
#
# ```bash
# # vLLM：一台 8 卡 H100 上起 Llama-3-70B，TP=4，留 10% 显存给 CUDA 上下文；前缀缓存与 chunked prefill 打开
# vllm serve meta-llama/Meta-Llama-3-70B-Instruct --tensor-parallel-size 4 \
#      --gpu-memory-utilization 0.90 --max-model-len 8192 --max-num-seqs 256 \
#      --enable-prefix-caching --enable-chunked-prefill
# # vLLM 跨两台机器（先在两台上起同一个 Ray 集群）：TP = 每台的卡数，PP = 机器数；KV cache 用 FP8
# vllm serve meta-llama/Llama-3.1-405B-Instruct --tensor-parallel-size 8 --pipeline-parallel-size 2 --kv-cache-dtype fp8
# # SGLang：一台 8 卡 H200 上起 DeepSeek-V3（官方权重已是 FP8），注意力部分数据并行
# python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8 --enable-dp-attention --trust-remote-code
# # TensorRT-LLM：OpenAI 兼容的服务（--tp_size / --pp_size / --ep_size 对应 TP / PP / EP）
# trtllm-serve meta-llama/Llama-3.1-70B-Instruct --tp_size 4 --max_batch_size 256
# # TensorRT：把 ONNX 模型编译成 FP16 / INT8 引擎，并顺带测延迟
# trtexec --onnx=resnet50.onnx --saveEngine=model.plan --fp16 --shapes=input:8x3x224x224
# # Triton：从模型仓库加载引擎（config.pbtxt 里写 dynamic_batching { max_queue_delay_microseconds: 2000 }）
# tritonserver --model-repository=/models
# # 压测：并发从 1 到 8，报告 P99
# perf_analyzer -m resnet50 --concurrency-range 1:8:2 --percentile=99
# # K8s：手动扩到 4 个副本，或按 CPU/自定义指标自动伸缩
# kubectl scale deployment/triton-resnet50 --replicas=4
# kubectl autoscale deployment/triton-resnet50 --min=2 --max=16 --cpu-percent=70
# # 每张卡的利用率与显存
# nvidia-smi --query-gpu=index,name,utilization.gpu,memory.used,memory.total --format=csv
# ```
#
# `perf_analyzer` 最后打印一张「并发 → 吞吐 → P99」的汇总表。下面的样例是**示意数据**（格式取自 Triton perf_analyzer 文档的示例输出，数值为教学编造），
# 用 `labutil.inference.parse_perf_analyzer` 解析：

# %%
# NBVAL_CHECK_OUTPUT
rows = inference.parse_perf_analyzer(inference.SAMPLE_PERF_ANALYZER)
for r in rows:
    print(f"concurrency {r.concurrency}: {r.throughput_infer_s:7.1f} infer/s, p99 {r.p99_latency_ms:.2f} ms, "
          f"per-request time at the GPU ~ {r.concurrency / r.throughput_infer_s * 1e3:.2f} ms")

# %% [markdown]
# 读法：并发从 4 到 8，吞吐只多了约 3.5%，P99 却翻倍——GPU 已经饱和，多出来的并发只是在排队。这个拐点附近的吞吐（约 1,700 infer/s）
# 才是这张卡在延迟约束下的真实容量，用它而不是峰值算力去做第 5 节的排队计算。
#
# `nvidia-smi` 的 CSV 输出（**示意数据**，格式见 nvidia-smi 手册，数值为教学编造；一个 TP=2 的副本在忙、另一个闲）：

# %%
# NBVAL_CHECK_OUTPUT
smi = parse_nvidia_smi_csv(inference.SAMPLE_NVIDIA_SMI_SERVING)
for row in smi.rows:
    print(f"GPU {row['index']}: util {row['utilization.gpu']:.0f} %, memory {row['memory.used'] / row['memory.total']:.0%} used")

# %% [markdown]
# 四张卡的显存都是 90%，但利用率一半 97%、一半 11%：vLLM 启动时就按 `--gpu-memory-utilization` 把显存预分配给 KV cache，
# 所以 `memory.used` 不能说明负载。伸缩和告警要看利用率、队列长度、TTFT/TPOT（vLLM 与 Triton 都有 Prometheus 指标，第 26 章）。
#
# 运维上线后最常见的一类「没有报错的慢」是 KV cache 不够时的**抢占**（preemption）。vLLM 的 continuous batching 会按 `--max-num-seqs`
# 放进尽量多的序列；序列越生成越长，KV 页用完时调度器就把正在生成的请求踢出去，等空间够了再把它从头 prefill 一遍，日志里只有一行警告：
# `Sequence group 0 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space`（vLLM 文档 Optimization and Tuning）。
# 用户看到的是一条流式回答在中途卡住几秒再继续，监控上是 P99 的尖刺，平均延迟和 GPU 利用率都很正常。上面的启动命令写了 `--max-num-seqs 256`，
# 它在 1K 上下文时很宽裕，上下文一长就不成立了：

# %%
# NBVAL_CHECK_OUTPUT
for prompt in (1024, 7936):
    mb = inference.llm_replica("llama3-70b", "H100-SXM", "bf16", 4, prompt, 256, batch=1).max_batch
    print(f"Llama-3-70B BF16 TP=4, {prompt + 256:5d}-token sequences: KV cache holds {mb:3d} sequences "
          f"-> --max-num-seqs 256 is {'safe' if mb >= 256 else f'{256 / mb:.1f}x too many'}")

# %% [markdown]
# 同一份配置，业务方把 RAG 的上下文从 1K 拉到 8K，KV cache 只装得下 54 条序列，256 的并发上限是它的 4.7 倍，抢占几乎必然发生。
# vLLM 文档给的对策正好对应本章的显存账：提高 `--gpu-memory-utilization`、降低 `--max-num-seqs`、或加大 TP 让每卡的权重变少。
# 规划时就按业务真实的 P95 上下文长度算 $b_{\max}$，并把 vLLM 的抢占计数指标接进告警。
#
# 换卡也是一种解法，而且正好说明推理选卡为什么要看显存**容量**：H200 与 H100 算力相同，显存从 80 GB 加到 141 GB，
# 同样 TP=4、8K 上下文，每卡扣掉约 35 GB 权重之后留给 KV 的空间多了一倍多：

# %%
# NBVAL_CHECK_OUTPUT
for g in ("H100-SXM", "H200-SXM"):
    rep_g = inference.llm_replica("llama3-70b", g, "bf16", 4, 7936, 256, batch=1)
    print(f"{g}: {hardware.gpu(g).hbm_gb:.0f} GB, weights {rep_g.weights_gb:.1f} GB/GPU -> "
          f"{rep_g.max_batch} concurrent 8K-token sequences per TP=4 replica")

# %% [markdown]
# 54 条变成 136 条，约 2.5 倍的并发——对长上下文服务，这比任何调参都有效，也是下面误区一说「选推理卡先看显存带宽和显存容量」的原因。
#
# ## 8. 常见误区（每一条都用算出来的数字反驳）
#
# ### 误区一：「推理只看单卡峰值算力」
#
# decode 是显存带宽受限的。H200 与 H100 的 BF16 稠密峰值完全相同（989.4 TFLOP/s），只是显存带宽从 3.35 TB/s 提到 4.8 TB/s：

# %%
# NBVAL_CHECK_OUTPUT
for g in ("L4", "L40S", "H100-SXM", "H200-SXM"):
    spec = hardware.gpu(g)
    t = inference.decode_step("llama3-8b", g, 1, 1024).time_s
    print(f"{g:9s} peak {spec.bf16_tflops:6.1f} TFLOP/s, HBM {spec.hbm_gbs:5.0f} GB/s -> Llama-3-8B TPOT {t * 1e3:5.2f} ms")

# %% [markdown]
# 同样的峰值，H200 的 TPOT 短了 30%；L40S 的峰值是 L4 的 3 倍、带宽是 2.9 倍，TPOT 也正好快约 2.9 倍——跟着带宽走，而不是峰值。
# 选推理卡时，先看「每美元的显存带宽」和「显存容量」，再看算力。
#
# ### 误区二：「QPS 除以单卡 QPS 就是卡数」
#
# 种子场景、ViT-H/14 在 L40S 上每张图约 14.5 ms，单卡容量约 69 req/s。「1000 ÷ 69」给出 15 张卡：

# %%
# NBVAL_CHECK_OUTPUT
gf, n = inference.cv_model("vit_h_14_518")
s_ms = inference.cv_batch_ms("L40S", 1, gflops_per_image=gf, params=n)
plan = inference.gpus_for_slo(1000, 100, s_ms)
print(f"service {s_ms:.1f} ms, capacity {1e3 / s_ms:.1f} req/s per GPU, naive count {plan.naive_replicas}")
for c in (plan.naive_replicas, 18, 20, plan.replicas):
    print(f"{c:3d} GPUs: utilisation {1000 * s_ms / 1e3 / c:.0%}, P99 {inference.p99_latency_ms(1000, c, s_ms):7.1f} ms")
pooled = inference.gpus_for_slo(1000, 100, s_ms, routing="pooled")
print(f"shared queue (pooled routing): {pooled.gpus} GPUs, P99 {pooled.p99_ms:.1f} ms")

# %% [markdown]
# 15 张卡时每张卡 97% 忙，P99 超过 1 秒；要 23 张（利用率约 63%）才满足 P99 < 100 ms。多出来的 8 张不是浪费，是为尾延迟付的钱。
# 如果改用共享队列（最少未完成请求路由），同样的目标只要 15 张——路由策略本身就值 8 张卡。
#
# ### 误区三：「推理集群也要和训练一样配 400G InfiniBand」
#
# 副本之间不通信，副本内的 TP 走 NVLink。以 Llama-3-70B TP=4 为例算每一步 decode 里 TP all-reduce 占多少时间，以及整台机器对外的网络流量：

# %%
# NBVAL_CHECK_OUTPUT
r = inference.llm_replica("llama3-70b", "H100-SXM", "bf16", 4, 1024, 256, batch=64)
step = inference.decode_step("llama3-70b", "H100-SXM", 64, 1024 + 128, "bf16", 2, 4)
print(f"TP all-reduce per decode step {step.comm_s * 1e3:.2f} ms of {step.time_s * 1e3:.2f} ms (over NVLink)")
tok_out = 2 * r.tokens_per_s  # two TP=4 replicas per 8-GPU server
print(f"server egress: {tok_out:,.0f} tokens/s x ~4 B/token ~ {tok_out * 4 * 8 / 1e6:.2f} Mb/s; "
      f"ingress of {2 * r.requests_per_s:.1f} prompts/s x 1024 tokens ~ {2 * r.requests_per_s * 1024 * 4 * 8 / 1e6:.2f} Mb/s")

# %% [markdown]
# 按每个 token 约 4 字节文本估算，一台 8 卡推理服务器进出的 token 流量都不到 1 Mb/s。推理集群的网络要的是弹性（负载均衡、服务发现、K8s 扩缩容）和可靠，
# 而不是训练那样每卡 400 Gb/s 的无阻塞 Fat-Tree；种子说「RoCE 即可满足」，对 LLM 和 CV 推理甚至普通以太网都够用。
#
# 例外是 **prefill/decode 分离**（DistServe，OSDI 2024；Splitwise，ISCA 2024）：prefill 受算力限制、decode 受带宽限制，两者挤在同一批里互相拖累
# （长 prompt 的 prefill 会让同批所有请求的 TPOT 卡一下），于是把它们放到不同的 GPU 甚至不同的机器上，各自按自己的 SLO 扩缩容。
# 代价是每个请求 prefill 完之后，整段 prompt 的 KV cache 要从 prefill 机器搬到 decode 机器。同样的 Llama-3-70B、1,024 token prompt 算一下：

# %%
# NBVAL_CHECK_OUTPUT
kv_req_bytes = inference.kv_bytes_per_token("llama3-70b") * 1024     # whole model, BF16
prompts_s = 2 * r.requests_per_s                                      # one 8-GPU server's worth of prompts
print(f"KV of one 1024-token prompt: {kv_req_bytes / 1e6:.0f} MB; {prompts_s:.1f} prompts/s -> "
      f"{kv_req_bytes * prompts_s * 8 / 1e9:.0f} Gb/s from prefill to decode servers")

# %% [markdown]
# 一个 prompt 的 KV 就有约 336 MB，一台服务器量级的请求率要持续搬约 70 Gb/s——是上面 token 流量的几万倍，一块 25G 网卡远远不够，
# 这才需要 RDMA 网卡和 GPUDirect（Mooncake 的 Transfer Engine、NVIDIA Dynamo 的 NIXL 都用 RDMA 在机器之间搬 KV）。所以「推理不需要高速网络」的前提是副本自给自足；
# 一旦采用分离式架构，或者像 3.1 节那样用跨机的大 EP 服务 MoE，网络设计要回到第 11–13 章的方法重新算。
#
# ## 9. 练习
#
# 把答案填进 `answer_k`，运行单元格查看判分；卡住时调用 `exercise("ch25.k").hint(1)`。
#
# **练习 1**：Llama-3-70B（80 层、8 个 KV 头、head_dim 128），FP16 KV cache、TP=1，16 条 8,192 token 序列的 KV cache 是多少 GB？

# %%
answer_1 = None
exercise("ch25.1").check(answer_1)

# %% [markdown]
# **练习 2**：Llama-3-8B BF16 在一张 H100 SXM（80 GB）上，vLLM `--gpu-memory-utilization 0.9`，最多能同时放下多少条 4,096 token 的序列？
# （按目录的口径，GB = $10^9$ 字节，80 GB 即 $80\times10^9$ 字节；不要用 `nvidia-smi` 显示的 MiB。）

# %%
answer_2 = None
exercise("ch25.2").check(answer_2)

# %% [markdown]
# **练习 3**：Llama-3-8B BF16 在一张 L40S 上，batch 1、已缓存 1,024 个 token，按 80% 显存带宽算，每个输出 token 要多少毫秒（TPOT）？

# %%
answer_3 = None
exercise("ch25.3").check(answer_3)

# %% [markdown]
# **练习 4**：4 个服务台、负载 3 Erlang（利用率 75%），一个到达的请求需要排队的概率（Erlang C）是百分之几？（单位：%，按课程约定填百分数）

# %%
answer_4 = None
exercise("ch25.4").check(answer_4)

# %% [markdown]
# **练习 5**：种子场景 1000 req/s、P99 ≤ 100 ms，ViT-H/14（518 px）跑在 L40S 上，batch 1、K8s Service 随机路由，排队模型给出要几张 GPU？

# %%
answer_5 = None
exercise("ch25.5").check(answer_5)

# %% [markdown]
# **练习 6（判断题）**：练习 5 的种子场景（1000 req/s、P99 ≤ 100 ms、ViT-H/14 在 L40S 上、batch 1），'random'（普通 K8s Service）和 'pooled'（共享队列、最少负载）哪种路由需要的 GPU 更少？

# %%
answer_6 = None  # 'random' 或 'pooled'
exercise("ch25.6").check(answer_6)

# %% [markdown]
# **练习 7**（纸笔）：DeepSeek-V3 每个 MoE 层有 256 个路由专家、每个 token 选 8 个。一个副本做 batch 32 的一步 decode（按 3.1 节的均匀、独立路由假设），
# 平均要碰到每层多少个不同的路由专家？

# %%
answer_7 = None
exercise("ch25.7").check(answer_7)

# %% [markdown]
# ## 10. 小结
#
# - prefill 受算力限制，决定 TTFT；decode 受显存带宽限制，决定 TPOT。推理选卡先看带宽和容量。
# - KV cache $= 2Ln_{kv}d_{head}\cdot s\cdot b\cdot\text{bytes}/t$，它和权重一起决定最大并发；GQA、MLA、FP8 KV、权重量化、TP 都在为它腾地方（MLA 的潜向量 TP 切不开）。
# - 放不下一台机器：稠密模型机内 TP、机间 PP；MoE 用 EP，batch 要按「每个专家分到的 token」来算，大 EP 又需要高速网络。
# - continuous batching + PagedAttention 让 decode 的槽位一直满着、KV 不浪费；chunked prefill、前缀缓存、推测解码在此之上各治一个病；动态批处理对没把 GPU 算满的小模型有效，对大模型只增加延迟。
# - 卡数由 QPS **和** P99 共同决定：用 Erlang C / M/D/c 算，留出利用率余量；路由方式（随机 vs 共享队列）本身就值好几张卡。
# - 推理集群副本间几乎不通信：机内 NVLink 做 TP，机间用以太网/RoCE 加 K8s 弹性伸缩。
#
# ## 参考资料
#
# - 课程种子材料：《AI训练推理集群》课程导入 1.3 与场景二（CV/多模态推理：8~32 卡、K8s、RoCE、P99 < 100 ms、> 1000 QPS、Triton + TensorRT）；
#   《AI算力集群》课程导入 1.3（推理服务：L4/L40S、高吞吐存储、弹性网络）。
# - W. Kwon et al., *Efficient Memory Management for Large Language Model Serving with PagedAttention* (vLLM), SOSP 2023：§3 每 token 800 KB、2048 token 请求 1.6 GB；§1 与图 2：已有系统只有 20.4%–38.2% 的 KV 显存存着 token 状态，vLLM 96.3%；
#   vLLM 发布博客 *vLLM: Easy, Fast, and Cheap LLM Serving with PagedAttention*（2023-06-20）：「浪费 60%–80%」「4% 以下」。
# - DeepSeek-AI, *DeepSeek-V2*（arXiv:2405.04434）§2.1：MLA，每 token 每层缓存 $(d_c+d_h^R)$ 个元素；*DeepSeek-V3 Technical Report*（arXiv:2412.19437）§4.2 超参数（61 层、$d_c$=512、RoPE 64 维、256 个路由专家选 8 个、671B/37B）
#   与 §3.4 推理部署（prefill 最小单元 4 台 32 卡、EP32；decode 最小单元 40 台 320 卡、EP320）。
# - SGLang 文档 *DeepSeek V3/V3.1/R1 Usage*（FP8 权重推荐 8×H200 或 2×8×H100）与 *DP, DPA and SGLang DP Router*（MLA 只有一个 KV 头，TP 会复制 KV cache）；
#   L. Zheng et al., *SGLang: Efficient Execution of Structured Language Model Programs*, NeurIPS 2024（RadixAttention 前缀缓存）。
# - A. Agrawal et al., *Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve*, OSDI 2024（chunked prefill）；
#   Y. Leviathan et al., *Fast Inference from Transformers via Speculative Decoding*, ICML 2023。
# - vLLM 文档 *Distributed Inference and Serving*（「TP = 每台机器的 GPU 数，PP = 机器数」）与 engine arguments（`--block-size`、`--kv-cache-dtype`、`--enable-prefix-caching`、`--enable-chunked-prefill`）；
#   TensorRT-LLM 文档 *trtllm-serve*（`--tp_size`、`--pp_size`、`--ep_size`）。
# - R. Qin et al., *Mooncake: Trading More Storage for Less Computation*, FAST 2025（KVCache 为中心的分离式架构，RDMA Transfer Engine）；NVIDIA Dynamo 文档（NIXL 传输库）。
# - J. Ainslie et al., *GQA: Training Generalized Multi-Query Transformer Models from Multi-Head Checkpoints*, EMNLP 2023, §2.2。
# - R. Pope et al., *Efficiently Scaling Transformer Inference*, MLSys 2023（arXiv 2022），§2–3：生成阶段小 batch 受权重读取限制。
# - G.-I. Yu et al., *Orca: A Distributed Serving System for Transformer-Based Generative Models*, OSDI 2022：迭代级调度（continuous batching）。
# - Y. Zhong et al., *DistServe: Disaggregating Prefill and Decoding for Goodput-optimized Large Language Model Serving*, OSDI 2024；P. Patel et al., *Splitwise: Efficient Generative LLM Inference Using Phase Splitting*, ISCA 2024：prefill/decode 分离与 KV cache 跨机传输。
# - vLLM 文档 *Optimization and Tuning*：Preemption（`PreemptionMode.RECOMPUTE` 警告，对策：提高 `gpu_memory_utilization`、降低 `max_num_seqs`/`max_num_batched_tokens`、加大 `tensor_parallel_size`）。
# - M. Shoeybi et al., *Megatron-LM*, 2019, §3：张量并行每层两次 all-reduce。J. Kaplan et al., *Scaling Laws*, 2020, Table 1：前向每参数每 token 2 FLOP。
# - E. Frantar et al., *GPTQ*, ICLR 2023；J. Lin et al., *AWQ*, MLSys 2024：INT4/INT8 仅权重量化。
# - L. Kleinrock, *Queueing Systems, Vol. 1*, 1975, §3.5（M/M/c 与 Erlang C）；A. O. Allen, *Probability, Statistics, and Queueing Theory*, 1990, §6.7（Allen–Cunneen 近似）；W. Whitt, *Approximations for the GI/G/m queue*, 1993。
# - V. J. Reddi et al., *MLPerf Inference Benchmark*, ISCA 2020：Server 场景 Poisson 到达、99% 尾延迟约束。
# - K. He et al., *Deep Residual Learning*, CVPR 2016, Table 1；torchvision 模型卡（ResNet50 4.09 GFLOPS / 25.6 M；ViT_L_16 61.55 GFLOPS；ViT_H_14 SWAG E2E 518 px 1016.72 GFLOPS）。
# - NVIDIA 数据手册：H100 SXM（989.4 TFLOP/s BF16 稠密、3.35 TB/s）、H200、L40S（48 GB、864 GB/s）、L4（24 GB、300 GB/s、72 W）——见 `labutil/data/gpus.toml`。
# - vLLM 文档（engine arguments：`--tensor-parallel-size`、`--gpu-memory-utilization` 默认 0.9）；Triton Inference Server 文档（model repository、dynamic batching、perf_analyzer）；
#   NVIDIA TensorRT `trtexec` 文档；Kubernetes 文档（kubectl scale、HorizontalPodAutoscaler、kube-proxy iptables 模式随机选择后端）；nvidia-smi 手册（`--query-gpu`）。
