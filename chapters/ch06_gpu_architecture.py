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
# # 第6章 GPU架构与关键指标
#
# > 模块二「计算节点与GPU」的第 1 章。前置：第 4 章（峰值算力、MFU、训练天数）。
# > 本章的指标——各精度的峰值、HBM 容量与带宽、NVLink 带宽、屋顶线拐点——是第 7 章（训练显存）、第 9 章（服务器节点设计）、
# > 第 25 章（推理集群）和 lab04（GPU 算力与显存带宽实测）的基础。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 说出一张数据中心 GPU 的四个关键部件（SM 与 Tensor Core、HBM、NVLink、PCIe）各自决定了哪一个指标；
# - 读懂数据手册：区分稠密与稀疏峰值，说清 FP64、TF32、BF16、FP16、FP8 的位宽、范围和精度，以及为什么每降一档精度峰值翻倍；
# - 用屋顶线模型（Roofline）和算术强度判断一个算子是「算力受限」还是「访存受限」，并计算 GEMM 与注意力的算术强度；
# - 用 `nvidia-smi` 确认手上的卡、把它对应到硬件目录，并用屋顶线解释「为什么 H200 推理更快但训练不一定」。

# %%
from labutil.notebook import setup, show_table
from labutil import compute, hardware, links, reliability, units
from labutil.explore import compute as compute_x
from labutil.parsers import parse_nvidia_smi_csv, parse_nvidia_smi_q, samples
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 一张数据中心 GPU 由什么组成
#
# 做集群规划时，我们不需要懂 GPU 的每一个晶体管，但必须知道四个部件，因为它们分别对应数据手册上的四类数字：
#
# | 部件 | 决定的指标 | H100 SXM 的数值（目录） | 在集群里意味着什么 |
# |---|---|---|---|
# | SM 与 Tensor Core | 各精度的峰值 TFLOP/s | BF16 稠密 989.4 | 训练时间的上限（第 4 章） |
# | HBM（高带宽显存） | 容量 GB、带宽 GB/s | 80 GB、3,350 GB/s | 模型放不放得下（第 7 章）；访存受限算子的速度 |
# | NVLink / NVSwitch | 卡间带宽 GB/s（双向合计） | 900 | 节点内张量并行、all-reduce 的速度（第 9、13 章） |
# | PCIe | 与 CPU、网卡、NVMe 的带宽 | Gen5 x16 约 63 GB/s 单向 | 跨节点通信必须经过它到网卡（第 9、11 章） |
#
# **SM 与 Tensor Core。** GPU 由上百个流式多处理器（SM）组成，每个 SM 里有普通的 CUDA 核心（做逐元素运算）和 Tensor Core（专门做小矩阵块的乘加，$D = A \times B + C$）。
# 大模型训练 95% 以上的 FLOPs 都是矩阵乘法，几乎全部由 Tensor Core 完成，所以数据手册上「Tensor Core TFLOPS」才是我们关心的峰值；
# 不走 Tensor Core 的运算（LayerNorm、Softmax、激活函数、优化器更新）算力低得多，但它们的计算量很小，瓶颈通常在显存带宽。
#
# **稠密与稀疏。** 从 Ampere 开始，Tensor Core 支持 2:4 结构化稀疏（每 4 个权重里有 2 个为零时跳过它们），手册上最醒目的数字往往是「with sparsity」的值，
# 是稠密值的 2 倍。LLM 预训练是稠密计算，课程目录 `labutil/data/gpus.toml` 中存的全部是稠密峰值（稀疏值除以 2），这一点第 4 章的误区三已经算过后果。
#
# 下表是目录中所有加速卡的关键指标（0 表示不支持或厂商未公布；`fp64_tflops` 是向量单元的 FP64，`fp64_tensor_tflops` 是 FP64 矩阵乘走 Tensor Core 的峰值，没有时记 0）：

# %%
show_table([{**row, "fp64_tensor_tflops": hardware.gpu(row["name"]).fp64_tensor_tflops} for row in hardware.gpu_table()],
           columns=["name", "vendor", "bf16_tflops", "fp8_tflops", "tf32_tflops", "fp64_tflops", "fp64_tensor_tflops",
                    "hbm_gb", "hbm_gbs", "nvlink_gbs", "tdp_w"], floatfmt=",.1f")

# %%
compute_x.gpu_catalog_figure()

# %% [markdown]
# 几个值得注意的对比：H800 与 H100 是同一颗芯片，Tensor Core 峰值相同，但 NVLink 从 900 GB/s 降到 400 GB/s、FP64 从 33.5 降到 1 TFLOP/s；
# H200 与 H100 算力相同，显存从 80 GB/3.35 TB/s 提升到 141 GB/4.8 TB/s；B200 的 BF16 峰值是 H100 的 2.3 倍，但功耗也从 700 W 升到 1,000 W（第 10 章）。
# L40S、L4 没有 NVLink，显存是 GDDR6，定位是推理和图形——种子课程把它们列为「推理优化卡」。
#
# ## 2. 精度：FP64、TF32、BF16、FP16、FP8
#
# 一个浮点数由符号位、指数位和尾数位组成。**指数位决定范围**（能表示多大和多小的数），**尾数位决定精度**（相邻两个可表示数之间的相对间隔 $2^{-m}$）。
# Tensor Core 支持的格式：

# %%
# NBVAL_CHECK_OUTPUT
print(f"{'format':9s} {'exp':>3s} {'mant':>4s} {'bits':>4s} {'max finite':>12s} {'rel. step':>10s}")
for name in compute.FLOAT_FORMATS:
    f = compute.float_format_info(name)
    print(f"{name:9s} {f['exponent_bits']:3d} {f['mantissa_bits']:4d} {f['storage_bits']:4d} "
          f"{f['max_value']:12.4g} {f['epsilon']:10.3g}")

# %% [markdown]
# 怎么读这张表：
#
# - **FP64**：科学计算（分子动力学、CFD、气候模拟）需要的双精度。种子课程的场景表里「科学计算模拟」的关键瓶颈就是双精度算力，选卡时要看 FP64 而不是 BF16——
#   H100 SXM 的 FP64 Tensor 峰值 66.9 TFLOP/s，而 H800 只有 1 TFLOP/s，L40S 干脆不公布。
# - **TF32**：A100 引入的「内部格式」：用 FP32 的 8 位指数（范围不变）加 FP16 的 10 位尾数，输入输出仍是 32 位。PyTorch 里 FP32 矩阵乘可以自动走 TF32，吞吐是 BF16 的一半。
# - **BF16 与 FP16**：都是 16 位。FP16 尾数多（精度高）但指数只有 5 位，最大只能表示 65,504，训练时梯度容易上溢或下溢，需要 loss scaling；
#   BF16 保留了 FP32 的 8 位指数（范围与 FP32 相同），精度低一些，但基本不需要 loss scaling，所以成了大模型训练的默认格式。
# - **FP8**：Hopper 开始支持。E4M3（范围小，最大 448，精度稍高）通常用于前向的权重和激活，E5M2（范围大、精度低）用于反向的梯度。FP8 训练需要为每个张量维护缩放因子（Transformer Engine）。
#
# 对容量规划来说，最重要的规律是：**位宽每减半，Tensor Core 峰值翻倍，每个元素占用的显存和带宽减半**。
# Blackwell 把这条规律又往下推了一档：B200 支持 FP4（NVFP4、MXFP4 等带块缩放因子的 4 位格式），HGX B200 每卡 FP4 稠密峰值约 9,000 TFLOP/s，
# 正好是 FP8 的两倍；目前它主要用于推理，大规模预训练仍以 BF16 和 FP8 为主。

# %%
# NBVAL_CHECK_OUTPUT
for name in ["A100-80G-SXM", "H100-SXM", "B200", "MI300X"]:
    g = hardware.gpu(name)
    fp8 = f"{g.fp8_tflops / g.bf16_tflops:.2f}x" if g.fp8_tflops else "  n/a"
    print(f"{name:13s} TF32/BF16 = {g.tf32_tflops / g.bf16_tflops:.2f}x  FP8/BF16 = {fp8}  "
          f"BF16/FP64(tensor) = {g.bf16_tflops / (g.fp64_tensor_tflops or g.fp64_tflops):5.1f}x")

# %%
compute_x.precision_figure()

# %% [markdown]
# 注意 FP64 与 BF16 的比例：H100 上 BF16 稠密峰值是 FP64 Tensor 峰值的 14.8 倍，B200 上是 60.8 倍——新一代 GPU 的晶体管预算明显偏向低精度 AI 计算。
# 做科学计算集群时，「最新一代」未必是每美元 FP64 最多的选择。
#
# ## 3. HBM：容量和带宽同样重要
#
# HBM（High Bandwidth Memory）是叠在 GPU 封装上的 DRAM 堆栈，通过数千条并行的数据线与 GPU 相连，所以带宽比普通 DDR 高一个数量级以上。
# 它同时决定两件事：
#
# 1. **放不放得下**：GPT-3 175B 的 BF16 权重就要 $175 \times 10^9 \times 2 = 350$ GB，是 H100 80 GB 的 4 倍多，训练时还要加上梯度、优化器状态和激活（第 7 章），所以必须切分到多卡。
# 2. **跑得多快**：凡是每读一个字节只做很少计算的算子，速度由带宽决定。最典型的例子是大模型推理的解码阶段：每生成一个 token，都要把全部权重从 HBM 读一遍。
#
# **容量为什么是「80」：从 HBM 堆栈算起。** H100 SXM 的封装上有 6 个 HBM3 位置，其中 5 个是有效堆栈，每个堆栈接两个 512 位的显存控制器，
# 合起来是 5,120 位的总线；每个堆栈 16 GiB，总容量 $5 \times 16 = 80$ GiB $= 81{,}920$ MiB。DRAM 颗粒的容量天然是 2 的幂，所以「80GB」其实是 80 **GiB**
# （约 85.9 十进制 GB）。带宽则是「总线位宽 × 每针速率」：5,120 位 × 约 5.2 Gb/s ÷ 8 ≈ 3.35 TB/s。H200 用的是同一颗 GH100 芯片，
# 但 6 个位置的 HBM3e 堆栈全部启用：每个 24 GB、共 144 GB（对外提供 141 GB），总线变成 6,144 位，每针约 6.25 Gb/s，两者相乘再除以 8，正好是数据手册上的 4.8 TB/s。
# 容量和带宽同时上涨、算力不变，这就是它「算力不变、推理更快」的硬件原因。
#
# 注意单位：`nvidia-smi` 报的是 MiB（$2^{20}$ 字节），而目录和本课程的规划数字用十进制 GB。第 7 节会看到 H100 在 `nvidia-smi` 里显示 81,559 MiB，
# 比 81,920 MiB 少的 361 MiB 是驱动保留的部分，应用拿不到。
#
# ## 4. NVLink 与 PCIe：卡间通信的两条路
#
# 同一台服务器里的 8 张 GPU 通过 NVLink + NVSwitch 全互联；GPU 与 CPU、网卡之间走 PCIe。两者的带宽差一个数量级。
# 以数据并行中 7B 模型的 14 GB BF16 梯度为例，粗略比较一次「把这么多数据从一张卡送到另一张卡」的时间（NVLink 取双向 900 GB/s 的单向一半；PCIe Gen5 x16 按 32 GT/s × 16 lane × 128/130 编码计算）：

# %%
# NBVAL_CHECK_OUTPUT
grad_gb = 7e9 * 2 / 1e9
pcie5_gbs = links.pcie_gbs("gen5", 16)   # 32 GT/s x 16 lanes x 128/130 / 8 (labutil.links, as ch09)
for name in ["H100-SXM", "H800-SXM", "A100-80G-SXM"]:
    one_way = hardware.gpu(name).nvlink_gbs / 2
    print(f"{name:13s} NVLink {one_way:5.0f} GB/s per direction -> {grad_gb / one_way * 1e3:6.1f} ms for {grad_gb:.0f} GB")
print(f"{'PCIe Gen5 x16':13s}        {pcie5_gbs:5.1f} GB/s per direction -> {grad_gb / pcie5_gbs * 1e3:6.1f} ms for {grad_gb:.0f} GB")

# %% [markdown]
# NVLink 比 PCIe 快 7 倍左右，这就是张量并行（每层都要通信）通常被限制在一台服务器的 NVLink 域内的原因；跨服务器的通信则要经过 PCIe 到网卡、再经过网络（模块三）。
# H800 的 NVLink 降到 400 GB/s 后，同样的数据要花 H100 的 2.25 倍时间，这也是它在大规模训练中需要更仔细地设计并行策略的原因。
#
# ## 5. 屋顶线模型：算力受限还是访存受限
#
# 一个算子的执行时间至少是两个时间中较大的那个：把数据从 HBM 搬进来的时间，和把计算做完的时间。
# 定义**算术强度**（arithmetic intensity）为每搬运 1 字节数据所做的浮点运算数：
#
# $$I = \frac{\text{FLOPs}}{\text{Bytes}} \quad [\text{FLOP/byte}]$$
#
# 那么该算子能达到的吞吐上限是（Williams、Waterman、Patterson 2009 的屋顶线模型）：
#
# $$P_{\text{attainable}} = \min\left(P_{\text{peak}},\; I \times B_{\text{HBM}}\right)$$
#
# 两条线的交点叫**拐点**（ridge point），$I_{\text{ridge}} = P_{\text{peak}} / B_{\text{HBM}}$。强度低于拐点的算子是访存受限（memory-bound），
# 换算力更强的卡也不会更快；高于拐点的是算力受限（compute-bound）。H100 SXM 的 BF16 拐点是 $989.4 \times 10^{12} / 3350 \times 10^9 \approx 295$ FLOP/byte。

# %%
# NBVAL_CHECK_OUTPUT
for name in ["A100-80G-SXM", "H100-SXM", "H200-SXM", "B200", "MI300X", "L40S", "H20", "Ascend-910B"]:
    g = hardware.gpu(name)
    fp8 = f"{compute.ridge_intensity(g.fp8_tflops, g.hbm_gbs):6.1f}" if g.fp8_tflops else "   n/a"
    print(f"{name:13s} BF16 ridge {compute.ridge_intensity(g.bf16_tflops, g.hbm_gbs):6.1f} FLOP/byte   FP8 ridge {fp8}   "
          f"BF16 peak {g.bf16_tflops / hardware.gpu('H100-SXM').bf16_tflops:4.0%} of H100's, HBM {g.hbm_gbs:5.0f} GB/s")

# %% [markdown]
# 最后两行是两张和主流训练卡很不一样的卡（昇腾 910B 是种子课程《AI训练推理集群》列出的计算节点选项之一）：
#
# - **H20**（面向中国市场的型号，没有公开数据手册，目录取的是常见的合作伙伴规格）：BF16 峰值不到 H100 的六分之一，HBM 带宽却比 H100 还高，
#   拐点只有约 37 FLOP/byte。训练 GEMM 在它上面都是算力受限、很慢；而批量不大的解码在屋顶线的斜坡上，速度由带宽决定，和 H100 不相上下——它是一张推理卡。
# - **昇腾 910B**：拐点约 196，和 A100、H200 同一量级；目录里没有 FP8（厂商未公布），卡间互联是 HCCS（392 GB/s），
#   软件栈是 CANN + HCCL，而不是 CUDA + NCCL（第 3 章的软件栈表）。同样，MI300X 用的是 ROCm + RCCL。换一家的卡，算力数字能直接比，
#   「算子能不能跑到屋顶线上」却要在新的软件栈上重新量一遍（lab04 的方法照样适用）。

# %% [markdown]
# ### 5.1 GEMM 的算术强度
#
# 矩阵乘 $C_{m\times n} = A_{m\times k} B_{k\times n}$ 做 $2mnk$ 次运算，至少要读 $A$、$B$、写 $C$，共 $(mk + kn + mn)$ 个元素，每个元素 $b$ 字节：
#
# $$I_{\text{GEMM}} = \frac{2mnk}{b\,(mk + kn + mn)}$$
#
# 在 Transformer 里，$m$ 是这一批次里的 token 数，$n$、$k$ 是隐藏维度或 FFN 维度。当 $m \ll n, k$ 时，分母由权重 $kn$ 主导，BF16（$b=2$）下 $I \approx m$：
# **算术强度约等于一次处理的 token 数**。训练时一次 GEMM 处理几千个 token，轻松越过拐点；而推理解码时每个序列每步只有 1 个新 token，
# 批量为 16 时强度只有 16 左右，远在拐点之下。
#
# ### 5.2 注意力的算术强度
#
# 注意力的两个矩阵乘 $QK^\top$ 与 $PV$ 对每个头做 $4s^2d$ 次运算（$s$ 序列长度，$d$ 头维度）。它的访存量取决于实现：
#
# | 实现 | HBM 访存（元素数） | 算术强度（$b$ 字节/元素） | 来源 |
# |---|---|---|---|
# | 朴素实现：$S=QK^\top$、$P=\text{softmax}(S)$ 都写回 HBM | $4sd + 4s^2$ | $\frac{sd}{b(d+s)} \to d/b$ | FlashAttention 论文 Algorithm 0 |
# | 融合实现（FlashAttention）：$S$、$P$ 只在片上 SRAM | $4sd$ | $s/b$ | FlashAttention 论文 Theorem 2 |
# | 解码：1 个新 query 读整个 KV cache | $\approx 2sd / g$ | $\approx 2g/b$ | $g$ 为 GQA 组大小 |
#
# 朴素实现的强度被 $s \times s$ 的中间矩阵封顶在 $d/b = 64$ FLOP/byte（$d=128$、BF16），无论序列多长都是访存受限；
# 融合实现的强度随 $s$ 线性增长，令 $s/b$ 等于拐点即得交点 $s^* = b \cdot I_{\text{ridge}}$：BF16 下 $s \gtrsim 590$（= 2 × 295）时就越过了 H100 的拐点（下面的输出和图里的交点），
# 常见的 2K–8K 训练序列都在它右边——这就是 FlashAttention 快的根本原因。
# 解码注意力的强度约为 1 FLOP/byte，在所有 GPU 上都是访存受限，GQA 让多个 query 头共享一份 KV，把强度提高到组大小 $g$ 倍。

# %%
compute_x.attention_intensity_figure(gpu="H100-SXM")

# %%
# NBVAL_CHECK_OUTPUT
h100 = hardware.gpu("H100-SXM")
cases = [("train GEMM 8192 tok x 8192 x 28672", compute.gemm_intensity(8192, 28672, 8192, 2)),
         ("decode GEMM 16 tok x 8192 x 8192", compute.gemm_intensity(16, 8192, 8192, 2)),
         ("flash attention s=8192, d=128", compute.attention_intensity(8192, 128, 2, "flash")),
         ("naive attention s=8192, d=128", compute.attention_intensity(8192, 128, 2, "naive")),
         ("decode attention s=8192, GQA 8", compute.attention_intensity(8192, 128, 2, "decode", 8))]
for label, i in cases:
    p = compute.roofline_tflops(i, h100.bf16_tflops, h100.hbm_gbs)
    print(f"{label:36s} I = {i:8.1f} FLOP/B -> at most {p:6.1f} TFLOP/s on H100 ({p / h100.bf16_tflops:6.1%})")
ridge = compute.ridge_intensity(h100.bf16_tflops, h100.hbm_gbs)
per_token = compute.attention_intensity(1024, 128, 2, "flash") / 1024   # flash intensity grows linearly: s / b
print(f"flash attention (BF16) crosses the H100 ridge {ridge:.0f} FLOP/B at s = {ridge / per_token:.0f}")

# %% [markdown]
# 下图把几张目录 GPU 的屋顶线画在一起，竖线是上面这些典型算子的强度。读图的方法：从一条竖线往上走，碰到哪张卡的屋顶线，那就是该算子在这张卡上的速度上限。
# 左侧（访存受限区）各卡的高低由 HBM 带宽决定，右侧（算力受限区）由峰值决定——H200 在左边比 H100 高，在右边与 H100 重合。

# %%
compute_x.roofline_figure()

# %% [markdown]
# 用下面的交互模型自己试：
#
# 1. 保持 GEMM，把 `m` 从 4096 往下拖到 1，看点从平顶滑到斜坡上——$n = k = 4096$ 时 $I = 4096m/(2m + 4096)$，令它等于 295 解出 $m \approx 345$：
#    在 H100 上 `m` 低于约 350 就进入访存受限区；
# 2. 把精度从 BF16 换成 FP8：峰值翻倍、字节数减半，拐点和算子的强度都右移；
# 3. 选 `attention-decode`，再把 GQA 组大小从 1 拖到 8，看强度变化；把 GPU 换成 H200，看同一个点升高了多少；
# 4. 把精度换成 FP64（科学计算的 DGEMM）：H100 的 FP64 矩阵峰值只有 66.9 TFLOP/s，拐点降到 20 左右，同一个 GEMM 离拐点远得多；
#    再把 GPU 换成 H20，看 FP64 一栏只剩 1 TFLOP/s 意味着什么。
#
# 屋顶线给的是**上限**：真实的 GEMM 还受功耗上限、频率（下一节）和 kernel 实现的影响，一般跑不到手册峰值。lab04 会在你的卡上实测
# GEMM 吞吐和显存带宽，把测量点画到这张图上，两者之差就是「这张卡在你的机房里实际值多少」。

# %%
explorer = compute_x.roofline_explorer(gpu="H100-SXM", precision="bf16", op="gemm", m=4096, n=4096, k=4096)
explorer

# %% [markdown]
# ## 6. 运维视角：数据手册上的峰值，在机房里会被什么吃掉
#
# 数据手册的峰值是在最高加速频率、功耗和温度都不受限的条件下算出来的。机房里有三件事会把它压低，每一件都能在 `nvidia-smi -q` 里看到（第 7 节解析了一份样例）：
#
# 1. **功耗上限**：`Current Power Limit` 低于 700 W（有人执行过 `nvidia-smi -pl`，或机房为了控制整柜功率统一下调），矩阵乘的频率随之下降；
# 2. **温度**：进风温度高、风扇或液冷回路有问题时出现 `HW Thermal Slowdown` / `SW Thermal Slowdown`。Meta 在 Llama 3 论文里报告过，
#    训练吞吐随昼夜温度变化有 1–2% 的波动——上万张卡同步训练时，最热的那几张卡决定所有人的速度；
# 3. **显存错误**：HBM 的可纠正错误不影响速度，但不可纠正错误（`ecc.errors.uncorrected.volatile.total` 非零）会杀掉进程，之后要通过行重映射（row remapping）隔离坏行，
#    重映射需要重置 GPU 才生效。
#
# 较新的驱动在 `nvidia-smi -q -d PERFORMANCE` 里还有一段 `Clocks Event Reasons Counters`，按微秒累计每种降频原因（`SW Power Capping`、
# `HW Thermal Slowdown`、`HW Power Braking` 等）持续了多久。它比瞬时状态有用得多：巡检时两次读数相减，就知道这段时间里每张卡有多少时间没跑在应有的频率上，
# 一眼就能找出那几张拖慢整个同步训练的卡。
#
# 第 3 点不是小概率事件。Llama 3 405B 在 16,384 张 H100 上预训练的 54 天里，一共发生 419 次意外中断，其中 148 次归因于 GPU 故障（含 NVLink）、72 次归因于 HBM3——
# 两项合计超过一半。把它折算成单卡的量级：

# %%
# NBVAL_CHECK_OUTPUT
ref = reliability.reference_data()["llama3"]   # Llama 3 paper, Table 5 (54-day snapshot of 405B pre-training)
llama3_gpus, llama3_days, all_unexpected = ref["gpus"], ref["snapshot_days"], ref["unexpected_interruptions"]
counts = {r["component"]: r["count"] for r in reliability.llama3_table5()}
gpu_faults, hbm_faults = counts["Faulty GPU"], counts["GPU HBM3 Memory"]
per_day = all_unexpected / llama3_days
gpu_days_per_fault = llama3_gpus * llama3_days / (gpu_faults + hbm_faults)
print(f"unexpected interruptions: {per_day:.1f} per day (one every {24 / per_day:.1f} h)")
print(f"GPU + HBM3 share: {(gpu_faults + hbm_faults) / all_unexpected:.1%}; HBM3 alone {hbm_faults / all_unexpected:.1%}")
print(f"one GPU/HBM-caused interruption per {gpu_days_per_fault:,.0f} GPU-days = {gpu_days_per_fault / 365:.1f} GPU-years; "
      f"across {llama3_gpus:,} GPUs: a GPU/HBM interruption every {24 * gpu_days_per_fault / llama3_gpus:.1f} h")

# %% [markdown]
# 单看一张卡，平均 11 年才出一次 GPU 或显存引起的中断，很可靠；但 16K 张卡一起跑，就是约每 6 小时一次，加上其他原因是每 3 小时一次。
# 这就是为什么选卡时除了峰值和带宽，还要问 ECC 与行重映射的能力、驱动对 Xid 错误的上报，以及整机是否方便热插拔换卡——这些在第 23、27 章展开。

# %% [markdown]
# ## 7. 实操命令：确认手上的卡，对上目录
#
# 登录 GPU 节点后，先用查询模式得到机器可读的清单，再用 `-q` 看完整的设备信息（ECC、功耗上限、降频原因等）：
#
# ```bash
# nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total,memory.used,temperature.gpu,power.draw,power.limit,clocks.sm,ecc.errors.uncorrected.volatile.total --format=csv
# nvidia-smi -q                  # 全部信息；-d MEMORY,CLOCK,POWER,ECC 只看某几类
# nvidia-smi -q -d CLOCK         # 当前 / 最大 SM 频率：峰值 TFLOP/s 是按最大加速频率算的
# nvidia-smi nvlink --status     # 每条 NVLink 的状态与速率（H100 SXM：18 条 NVLink 4 链路，合计 900 GB/s 双向）
# nvidia-smi topo -m             # GPU、网卡之间的连接矩阵（第 9 章解析）
# ```
#
# 下面两份是示例输出，格式与 `nvidia-smi --format=csv` 和 R550 驱动的 `nvidia-smi -q` 一致，数值是示意性的（来源见 `labutil/data/samples_tools.toml`
# 的 `nvidia_smi_csv` 与 `nvidia_smi_q` 条目）。解析后对应到目录，核对显存容量和功耗上限：

# %%
# NBVAL_CHECK_OUTPUT
smi = parse_nvidia_smi_csv(samples.sample("nvidia_smi_csv"))
row = smi.rows[0]
gpu = compute_x.match_catalog_gpu(row["name"])
mem_mib = row["memory.total"]
mem_gb = mem_mib * units.BYTES_PER_MIB / units.BYTES_PER_GB
print(f"{len(smi.rows)} x {row['name']} -> catalog {gpu.name} ({gpu.arch}, {gpu.form_factor})")
print(f"memory.total {mem_mib:.0f} {smi.units['memory.total']} = {mem_gb:.1f} GB = "
      f"{units.gb_to_gib(mem_gb):.1f} GiB (catalog: {gpu.hbm_gb:.0f} GB)")
print(f"power.limit {row['power.limit']:.0f} {smi.units['power.limit']} (catalog TDP {gpu.tdp_w:.0f} W)")
print(f"BF16 ridge of this GPU: {compute.ridge_intensity(gpu.bf16_tflops, gpu.hbm_gbs):.1f} FLOP/byte")

# %%
# NBVAL_CHECK_OUTPUT
q = parse_nvidia_smi_q(samples.sample("nvidia_smi_q"))
print(f"driver {q.driver_version}, CUDA {q.cuda_version}, attached GPUs {q.attached_gpus}")
for g in q.gpus:
    print(f"  {g.bus_id}  {g.product_name}  power limit {g.power_limit_w:.0f} W  "
          f"ECC uncorrectable (volatile) {g.ecc_volatile_uncorrectable}  throttle: {', '.join(g.throttle_active) or 'none'}")

# %% [markdown]
# 「80GB」的 H100 在 `nvidia-smi` 里是 81,559 MiB。物理上它有 80 GiB（81,920 MiB）的 HBM3，`nvidia-smi` 的 `memory.total` 已经扣掉了驱动保留的 361 MiB；
# HBM3 的 ECC 不占这部分容量，所以不要把差额解释成「ECC 吃掉的」（同样是 80 GiB 的 A100 80GB，`nvidia-smi` 显示的正好是 81,920 MiB）。
# 换成十进制，81,559 MiB = 85.5 GB = 79.6 GiB。做显存规划（第 7 章）时应当以 `nvidia-smi` 报告的值为准，并且还要再扣掉 CUDA 上下文等开销。功耗上限 700 W 与目录 TDP 一致；如果看到更低的值，说明有人用 `nvidia-smi -pl` 限了功率，峰值算力也会随之下降。
# `-q` 里的 ECC 和降频原因（Clocks Event Reasons，第 6 节）是第 23 章健康检查的输入。lab04 会在你自己的 GPU 上实测 GEMM 吞吐和显存带宽，并把测量点放到这张卡的屋顶线上。
#
# ## 8. 常见误区（每一条都用算出来的数字反驳）
#
# ### 误区一：「TFLOPS 越高的卡，推理就越快」
#
# 大模型解码（batch 1）时，每生成一个 token 都要把全部权重读一遍，速度由 HBM 带宽决定，与峰值算力几乎无关。以 Llama 3 70B 的 BF16 权重为例，
# 每个 token 的最短时间 = 权重字节数 / HBM 带宽：

# %%
# NBVAL_CHECK_OUTPUT
weights_gb = 70.55e9 * 2 / 1e9
for name in ["H100-SXM", "H200-SXM", "B200", "MI300X"]:
    g = hardware.gpu(name)
    ms = weights_gb / g.hbm_gbs * 1e3
    print(f"{name:9s} BF16 peak {g.bf16_tflops:7.1f} TFLOP/s, HBM {g.hbm_gbs:5.0f} GB/s -> "
          f">= {ms:5.1f} ms/token, <= {1e3 / ms:5.1f} tokens/s at batch 1")

# %% [markdown]
# H200 的峰值算力与 H100 完全相同，但单流解码最多快 $4800/3350 = 1.43$ 倍；这也说明「权重能否放进单卡」之外，带宽是推理选卡的首要指标（第 25 章）。
# （70B 的 141 GB 权重放不进单张 80 GB 的 H100，实际要切到多卡，每卡读自己那一份、各卡并行读取；带宽决定速度的结论不变。）
#
# ### 误区二：「GPU 利用率 100% 就说明算力用满了」
#
# `nvidia-smi` 的 GPU-Util 只表示采样周期内「有 kernel 在运行」的时间比例，不表示 Tensor Core 有多忙。一个访存受限的 kernel 可以让 GPU-Util 显示 100%，
# 而实际算力只有峰值的零头。用屋顶线算一个例子：批量 16 的解码 GEMM 一直在跑（GPU-Util 100%），它能达到的算力上限是：

# %%
# NBVAL_CHECK_OUTPUT
i16 = compute.gemm_intensity(16, 8192, 8192, 2)
p16 = compute.roofline_tflops(i16, h100.bf16_tflops, h100.hbm_gbs)
print(f"decode GEMM, 16 tokens: I = {i16:.1f} FLOP/byte -> <= {p16:.1f} TFLOP/s = {p16 / h100.bf16_tflops:.1%} of H100 peak "
      f"while GPU-Util can read 100%")

# %% [markdown]
# 真正衡量「算力用了多少」的是第 4 章的 MFU，或 DCGM 的 Tensor Core 活跃度指标（`DCGM_FI_PROF_PIPE_TENSOR_ACTIVE`，第 26 章）。
#
# ### 误区三：「H800 / A800 就是 H100 / A100，只是名字不同」
#
# 它们的 Tensor Core 峰值确实相同，但卡间带宽被限制，FP64 也被大幅削减（H800）。对依赖 NVLink 的张量并行和需要双精度的科学计算，差别很大：

# %%
# NBVAL_CHECK_OUTPUT
for a, b in [("H100-SXM", "H800-SXM"), ("A100-80G-SXM", "A800-SXM")]:
    ga, gb = hardware.gpu(a), hardware.gpu(b)
    print(f"{b} vs {a}: BF16 {gb.bf16_tflops / ga.bf16_tflops:.2f}x, NVLink {gb.nvlink_gbs / ga.nvlink_gbs:.2f}x, "
          f"FP64 {gb.fp64_tflops / ga.fp64_tflops:.3f}x")

# %% [markdown]
# H800 的 NVLink 只有 H100 的 44%、FP64 只有 3%。所以用 H800 做科学计算是错误选型；用它训练大模型时，张量并行的通信时间会变长，
# 需要更多依赖流水线并行或更好的计算通信重叠（第 8、14 章）。
#
# ### 误区四：「`nvidia-smi` 显示 81,559 MiB，说明 H100 其实有 85.5 GB，或者 ECC 吃掉了一部分」
#
# 两种说法都把单位和来源弄混了。从堆栈出发算一遍，再和 `nvidia-smi` 对账：

# %%
# NBVAL_CHECK_OUTPUT
stacks, gib_per_stack = 5, 16                  # H100 SXM5: 5 active HBM3 stacks (H100 architecture whitepaper)
physical_mib = stacks * gib_per_stack * units.BYTES_PER_GIB / units.BYTES_PER_MIB
smi_mib = smi.rows[0]["memory.total"]
print(f"physical HBM3: {stacks} x {gib_per_stack} GiB = {physical_mib:,.0f} MiB = {physical_mib * units.BYTES_PER_MIB / units.BYTES_PER_GB:.1f} GB")
print(f"nvidia-smi memory.total: {smi_mib:,.0f} MiB -> driver reserve {physical_mib - smi_mib:,.0f} MiB "
      f"({(physical_mib - smi_mib) / physical_mib:.2%} of the HBM)")

# %% [markdown]
# H100 的物理显存就是 80 GiB（85.9 十进制 GB），`nvidia-smi` 少显示的 361 MiB（0.44%）是驱动保留区；HBM3 的 ECC 用的是额外的校验位，不从这 80 GiB 里扣。
# 规划时的正确做法：容量按 `nvidia-smi` 的值算，再为 CUDA 上下文、NCCL 缓冲和分配器碎片留出余量（第 7 章的示意样例中多出约 5 GB，真实值要在自己的作业上量）。
#
# ## 9. 练习
#
# 把答案填进 `answer_k`，运行单元格查看判分；卡住时调用 `exercise("ch06.k").hint(1)`。
#
# 练习 1 只用纸笔和第 1 节的目录表就能完成；练习 5 是判断题，填引号里的选项。
#
# **练习 1（纸笔题）**：A100 80GB SXM 在 BF16 下的屋顶线拐点是多少 FLOP/byte？（目录：BF16 稠密 312 TFLOP/s，HBM 2,039 GB/s。）

# %%
answer_1 = None
exercise("ch06.1").check(answer_1)

# %% [markdown]
# **练习 2**：H100 SXM 上一个 BF16 GEMM，m=16（token）、n=8192、k=8192，按屋顶线模型最多能达到多少 TFLOP/s？

# %%
answer_2 = None
exercise("ch06.2").check(answer_2)

# %% [markdown]
# **练习 3**：融合实现（FlashAttention 式）的注意力，单个头、序列长度 2048、头维度 128、BF16，算术强度是多少 FLOP/byte？

# %%
answer_3 = None
exercise("ch06.3").check(answer_3)

# %% [markdown]
# **练习 4（判断题）**：H200 SXM 上的 BF16 解码注意力（不使用 GQA）是访存受限还是算力受限？填 `"memory"`（访存受限）或 `"compute"`（算力受限）。

# %%
answer_4 = None
exercise("ch06.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：H100 SXM 上一个 m=16（token）、n=k=8192 的解码 GEMM 目前用 BF16。两种提速方案：`"fp8"`——同一张 H100 改用 FP8（峰值翻倍、每元素 1 字节），
# 或 `"h200"`——换成 H200、仍用 BF16（HBM 4.8 TB/s）。按屋顶线模型，哪一个让这个 GEMM 的耗时更短？

# %%
answer_5 = None
exercise("ch06.5").check(answer_5)

# %% [markdown]
# ## 10. 小结
#
# - 数据手册上的四类数字对应四个部件：Tensor Core（各精度峰值）、HBM（容量与带宽）、NVLink（卡间带宽）、PCIe（到 CPU 和网卡）。规划时只用**稠密**峰值。
# - 位宽每减半，峰值翻倍、字节数减半；BF16 靠 8 位指数成为训练默认格式，FP8 需要缩放因子；科学计算要看 FP64。
# - 屋顶线：$P = \min(P_{\text{peak}}, I \cdot B_{\text{HBM}})$，拐点 $P_{\text{peak}}/B_{\text{HBM}}$：主流训练卡在 150–300 FLOP/byte 之间（L40S 约 420），推理卡 H20 只有约 37。GEMM 的强度约等于 token 数；融合注意力的强度约为 $s/b$；解码注意力约 1。
# - 训练主要是算力受限，推理解码主要是访存受限：这决定了训练看 TFLOPS、推理看 HBM 带宽。
#
# 下一章我们看 HBM 里到底装了什么：权重、梯度、优化器状态和激活，以及 ZeRO 如何把它们切到多张卡上。
#
# ## 参考资料
#
# - H200 的显存组织（6 个 HBM3e 堆栈、6,144 位总线、141 GB 可用）：AnandTech, *NVIDIA at SC23: H200 Accelerator with HBM3e*（2023-11）的规格对比表；
#   4.8 TB/s 与 141 GB 见 H200 数据手册。B200 的 FP4：NVIDIA HGX B200 规格（每卡 FP4 稠密约 9 PFLOP/s、稀疏 18 PFLOP/s），整理见 G. Lockwood, *B200* 笔记（glennklockwood.com/garden/processors/B200）。
# - H20、昇腾 910B：没有公开的官方数据手册，目录条目的 `source` 与 `published_range` 字段写明了取值依据与范围。
# - NVIDIA H100、H200、A100、H800、A800、L40S、L4 Tensor Core GPU 数据手册；NVIDIA HGX/DGX B200 数据手册；AMD Instinct MI300X 数据手册（目录中每个条目的 `source` 字段）。
# - NVIDIA A100 Tensor Core GPU Architecture 白皮书（2020）：TF32 格式、2:4 结构化稀疏；NVIDIA H100 Tensor Core GPU Architecture 白皮书（2022）：FP8、Transformer Engine、NVLink 4（18 条链路、900 GB/s）。
# - IEEE 754-2008 浮点标准（FP64/FP32/FP16）；D. Kalamkar et al., *A Study of BFLOAT16 for Deep Learning Training*, 2019；P. Micikevicius et al., *FP8 Formats for Deep Learning*, 2022（E4M3 最大值 448、E5M2 最大值 57,344）。
# - S. Williams, A. Waterman, D. Patterson, *Roofline: An Insightful Visual Performance Model for Multicore Architectures*, CACM 52(4), 2009。
# - T. Dao et al., *FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness*, NeurIPS 2022：Algorithm 0（标准注意力的 HBM 访存）与 Theorem 2。
# - J. Ainslie et al., *GQA: Training Generalized Multi-Query Transformer Models from Multi-Head Checkpoints*, 2023。
# - PCI-SIG, *PCI Express Base Specification 5.0*：32 GT/s 每 lane，128b/130b 编码。
# - NVIDIA nvidia-smi 文档（`--query-gpu`、`--format=csv`、`-q`）；示例输出的格式来源见 `labutil/data/samples_tools.toml`。
# - H100 SXM5 的显存组织（5 个 HBM3 堆栈、10 个 512 位控制器、5,120 位总线）：NVIDIA H100 Tensor Core GPU Architecture 白皮书；整理见 G. Lockwood, *H100* 笔记（glennklockwood.com/garden/processors/h100）。
# - `nvidia-smi` 报告的总显存：H100 80GB HBM3 为 81,559 MiB、A100 80GB 为 81,920 MiB（modal-labs/modal-client PR #2797 列出的实测值；与 gvisor issue #10413、gpustack issue #4921 中贴出的 H100 输出一致）。
# - A. Grattafiori et al. (Meta), *The Llama 3 Herd of Models*, 2024, §3.3.4 与表 5：16,384 张 H100、54 天快照内 466 次中断（419 次意外），GPU 故障（含 NVLink）148 次、HBM3 72 次（17.2%）；昼夜温度导致 1–2% 的吞吐波动。
