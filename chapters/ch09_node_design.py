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
# # 第9章 服务器节点设计：CPU、内存、PCIe、NVLink 与 GPUDirect RDMA
#
# > 模块二「计算节点与GPU」的第 4 章。前置：第 6 章（GPU 架构与 NVLink 带宽）、第 8 章（并行策略：TP 走节点内、DP/PP 走网络）。
# > 后续：第 11 章（RDMA 与 InfiniBand/RoCE）把本章的「网卡」接到网络上；第 18 章（数据加载）细算 CPU 解码；第 19 章（BIOS 与固件）把本章的检查项落实到上架流程。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 用目录里的真实服务器（DGX H100、DGX A100、DGX B200、HGX H800、Atlas 800T A2，以及整柜的 GB200 NVL72）算出**每卡 CPU 核数、每卡内存、每卡网卡带宽**，并判断种子课程「每张 GPU 至少配 16 个物理核心和 256GB 内存」在什么负载下成立；
# - 用 $\text{GT/s}\times\text{编码效率}\times\text{lanes}/8$ 算出 PCIe Gen1–Gen6 的带宽，说明为什么 400G 网卡必须插在 Gen5 x16 上；
# - 比较 NVLink/NVSwitch（H100 900 GB/s、H800 400 GB/s）与 PCIe 的量级差，理解张量并行为什么只放在节点内；
# - 画出有无 **GPUDirect RDMA** 时数据走过的路径，算出「经主机内存中转」损失的带宽和多出的内存流量；
# - 读懂 `nvidia-smi topo -m`，回答「哪张网卡给哪张 GPU」「进程该绑到哪个 NUMA 节点」，并用 `lspci`、`nvidia-smi nvlink -s` 和 Fabric Manager 的状态验收一台新节点。

# %%
from labutil.notebook import setup, show_table
from labutil import node, links, comm, dataloading, hardware, power, units
from labutil.cluster import Cluster
from labutil.parsers import samples, parse_nvidia_smi_topo, parse_lspci_links
from labutil.explore import node as node_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 一台训练服务器里有什么
#
# 种子课程这样描述计算节点：「每台服务器插有 8 张 GPU（如 NVIDIA H800/A800 或华为昇腾 910B），通过 PCIe Switch 与 CPU 互联」。
# 这句话里藏着一台 8 卡训练服务器的全部骨架。以 DGX H100 / HGX H100 这一类设计为例，从里往外看：
#
# | 部件 | 数量（DGX H100） | 连接方式 | 作用 |
# |---|---|---|---|
# | GPU（H100 SXM） | 8 | 每张卡一条 PCIe Gen5 x16 接到 PCIe Switch；8 张卡之间经 4 颗 NVSwitch 全互联（NVLink 4，每卡 900 GB/s 双向） | 计算；节点内张量并行、梯度规约 |
# | PCIe Switch | 若干颗（每张 GPU 和「它的」网卡挂在同一棵 Switch 子树下，中间隔两级 Switch，`topo -m` 显示为 `PXB`，见第 6 节） | 上行 PCIe Gen5 x16 到 CPU 的 Root Complex | 把 GPU、网卡、NVMe 挂到同一棵 PCIe 树上 |
# | 计算网卡（ConnectX-7 400G） | 8（每 GPU 一张，即「轨道」） | PCIe Gen5 x16，和「自己的」GPU 在同一棵 Switch 子树下、不经过 CPU | 跨节点通信（InfiniBand NDR 或 400GbE RoCE） |
# | CPU | 2 路（Xeon 8480C，共 112 核） | 两颗 CPU 之间走 UPI；每颗 CPU 是一个 NUMA 节点 | 数据加载、调度进程、NCCL 代理线程 |
# | 内存 | 2 TB DDR5 | 每颗 CPU 各挂一半 | 数据预取、检查点暂存、CPU offload |
# | 存储/带内管理网卡、NVMe | 2 张双口 ConnectX-7、8 × 3.84 TB（另有 2 块系统盘） | PCIe | 读训练数据、写检查点、带内管理（带外管理走 BMC 的 1GbE 口） |
#
# 从这张表可以读出本章的三条主线：**配比**（CPU 核、内存和 GPU 的比例）、**带宽层级**（NVLink ≫ PCIe ≈ 网卡）、
# **亲和性**（GPU、网卡、CPU 核、内存在 PCIe 树上的远近）。一台服务器设计得好不好，就看这三条线上有没有短板：
# 任何一处短板都会让价值几十万美元的 8 张 GPU 空等。下面逐一用目录数据计算。
#
# ## 2. CPU 核数与内存：「每卡 16 核、256 GB」从哪里来
#
# 种子课程的误区三说：「GPU 服务器并非只堆 GPU 即可。数据预处理（如 JPEG 解码、Tokenization）非常消耗 CPU。
# 若 CPU 核心数不足或内存带宽不够，GPU 仍会因等待数据而空闲。经验值：每张 GPU 至少配 16 个物理核心和 256GB 内存。」
# 另一门种子课程在场景表里也写道：模型微调与对齐需要「较高 CPU/内存配比」。先看市面上真实的 8 卡服务器是怎么配的：

# %%
show_table(node.server_table(), ["server", "gpu", "cpu", "cores_per_gpu", "ram_gb_per_gpu", "ram_to_hbm",
                                 "nic_gbps_per_gpu", "nic_pcie", "nvlink_gbs", "meets_core_rule", "meets_ram_rule"],
           floatfmt=",.3g")

# %%
# NBVAL_CHECK_OUTPUT
for r in node.server_table():
    print(f"{r['server']:14s} {r['cores_per_gpu']:4.0f} cores/GPU  {r['ram_gb_per_gpu']:5.0f} GB/GPU  "
          f"RAM/HBM {r['ram_to_hbm']:.1f}x  16-core rule {'yes' if r['meets_core_rule'] else 'NO '}  "
          f"256-GB rule {'yes' if r['meets_ram_rule'] else 'NO'}")

# %%
node_x.server_ratio_figure()


# %% [markdown]
# 有意思的是：连 NVIDIA 自己的旗舰 DGX H100 都只有每卡 14 个核（2 × 56 核 / 8 卡），HGX H800 的典型 OEM 配置只有 12 核；
# 内存倒是几乎都给到了每卡 256 GB——即 H100 显存的 3.2 倍。下一代 DGX B200 还是 2 × 56 核、2 TB 内存：每卡 14 核、256 GB 不变，
# 但 B200 的显存涨到 180 GB，主机内存只剩显存的 1.4 倍（要 CPU offload 或大缓存的负载，B200 的 2 TB 可选配到 4 TB）。
#
# 再下一代的 GB200 NVL72 干脆不再是「8 卡服务器」：一颗 Grace CPU 和两张 B200 焊在同一块板上，CPU↔GPU 走 NVLink-C2C（900 GB/s，双向），
# 不再走 PCIe（Gen5 x16 双向约 126 GB/s）；一个 1U 计算托盘放 2 颗 Grace + 4 张 GPU + 4 张 400G 计算网卡，18 个托盘和 9 个 NVLink 交换托盘组成一个 72 卡的机柜（第 10 章算它的功耗）。
# 它没有「服务器」这一级（所以不在上面的表和图里），配比要从整柜的数字除出来：

# %%
# NBVAL_CHECK_OUTPUT
nvl72 = power.rack_scale_system("GB200-NVL72")
print(f"GB200 NVL72: {nvl72.cpu_cores:,} Grace cores and {nvl72.cpu_memory_gb:,.0f} GB LPDDR5X for {nvl72.gpus} GPUs "
      f"-> {nvl72.cores_per_gpu:.0f} cores and {nvl72.cpu_memory_gb_per_gpu:.0f} GB per GPU, "
      f"{nvl72.compute_nics / nvl72.gpus:.0f} x 400G NIC per GPU")

# %% [markdown]
# 每卡 36 个 Arm 核、240 GB 内存：核数是「16 核」经验值的两倍多，内存略低于 256 GB，但这块内存离 GPU 只隔一条 C2C，卸载和暂存的代价比 PCIe 服务器低得多。
# 归根到底，**核数的经验值不是硬约束，它取决于负载**。判断的方法是把 CPU 要做的活折算成「每卡每秒的样本数 × 每个样本的 CPU 时间」：
#
# $$
# C_{\text{per GPU}} = \frac{R_{\text{GPU}}}{r_{\text{core}}} + C_{\text{reserved}},
# $$
#
# 其中 $R_{\text{GPU}}$ 是 GPU 每秒消耗的样本数，$r_{\text{core}}$ 是一个核每秒能解码/增强的样本数，$C_{\text{reserved}}$
# 是训练进程自己（Python 主循环、NCCL 代理线程）占的核。第 18 章（数据加载）会细讲这个模型，这里直接代入两类负载：
#
# - **视觉训练**：ResNet-50 在一张 A100 上每秒训练 2,470 张图（NVIDIA DeepLearningExamples 公布值），每张 JPEG 都要解码、随机裁剪、翻转。
# - **LLM 预训练**：数据事先分好词，存成 token id 的二进制文件（Megatron 的 `.bin/.idx`），加载时只是顺序读一段整数数组。

# %%
# NBVAL_CHECK_OUTPUT
for per_core in (100.0, 150.0, 250.0):
    need = dataloading.cores_needed_per_gpu(dataloading.RESNET50_A100_IMG_S, per_core, 1.0)
    print(f"vision, {per_core:3.0f} img/s per core: {need:5.1f} cores per GPU")
tok = dataloading.llm_tokens_per_s_per_gpu(7e9, hardware.gpu("H100-SXM").bf16_tflops, 0.45)
print(f"LLM 7B on H100 at MFU 0.45: {tok:,.0f} tokens/s per GPU = "
      f"{tok * dataloading.token_bytes(128256) / 1e3:.1f} kB/s of pre-tokenised int32 ids")
print(f"whole-server text tokenisation needed: {8 * tok * 4 / 1e6:.2f} MB/s "
      f"(HF tokenizers >= {dataloading.HF_TOKENIZERS_BYTES_PER_S_PER_SERVER / 1e6:.0f} MB/s per server, assuming ~4 bytes of text per token)")

# %%
node_x.cores_needed_figure()

# %% [markdown]
# 结论很清楚：
#
# 1. **视觉/多模态训练**（在线解码 JPEG、视频）是「每卡 16 核」的来源：按每核 150 张/秒的假设要 17.5 核，每核 250 张/秒时也要 10.9 核。
#    解码速率因 CPU 型号、解码库和增强策略可以差 2–3 倍，所以这类负载要么多配核，要么把解码挪到 GPU 上（NVIDIA DALI、nvJPEG）。
# 2. **LLM 预训练**每卡每秒只吃一万个 token，预分词后只是每秒 42 kB 的整数；就算在线分词，整台机器每秒也只需处理 0.34 MB 文本，
#    而 Hugging Face `tokenizers` 在服务器上每秒处理 50 MB 以上。LLM 训练每卡 2 个核就够，16 核是富余的——但富余的核并不浪费：
#    NCCL 代理线程、检查点序列化、日志、监控 Agent 都要用。
# 3. **内存**看的是另一件事：数据预取缓冲、异步检查点在主机内存里的暂存，以及微调时的 CPU offload。
#    ZeRO-Offload 把 fp32 主权重和 Adam 的两个状态（每参数 12 B）连同 2 B 的梯度都放进主机内存：

# %%
# NBVAL_CHECK_OUTPUT
for params_b in (7, 13, 34, 70):
    total = node.offload_host_ram_gb(params_b * 1e9)
    print(f"{params_b:3d}B full fine-tune with ZeRO-Offload on one 8-GPU node: {total:6.0f} GB host RAM "
          f"= {total / 8:6.1f} GB per GPU")

# %% [markdown]
# 这就是「微调需要较高 CPU/内存配比」的含义：在单台 8 卡机上全参数微调 70B 模型，只卸载的状态就要 980 GB，每卡 122.5 GB，
# 再加上数据缓冲和系统开销，256 GB/卡才算从容；每卡 128 GB 的配置（表中的 Atlas 800T A2）就只能做 LoRA 或多机分摊了。
# 优化器的 `step()` 在 CPU 上执行，CPU 核数也直接决定了每步多等多久——这是微调节点要多配核、配大内存的真正理由。
#
# 所以种子课程的经验值应该这样用：**它是通用训练服务器的安全默认值**；对纯 LLM 预训练集群，核数可以按 12–14 核/卡采购，
# 把钱花在网络上；对视觉、多模态、需要 CPU offload 的微调集群，16 核/256 GB 是下限而不是上限。
#
# ## 3. PCIe：代际、lane 与编码
#
# PCIe 是 CPU、GPU、网卡、NVMe 之间的「主干道」。一条链路由若干 lane 组成（x1、x4、x8、x16），每个 lane 是一对差分收发线，
# **两个方向同时各跑满速**。每代的信号速率翻倍，但编码开销不同：Gen1/Gen2 用 8b/10b（20% 开销），Gen3–Gen5 用 128b/130b（1.5%），
# Gen6 改为 PAM4 信号加 256 字节的 FLIT（其中 242 字节是数据）。单方向带宽为
#
# $$
# B_{\text{PCIe}} = \frac{\text{GT/s} \times \eta_{\text{encoding}} \times \text{lanes}}{8}\ \ \text{GB/s}.
# $$

# %%
# NBVAL_CHECK_OUTPUT
for gen in links.pcie_generations():
    e = links.pcie_link(gen)
    print(f"PCIe {gen.capitalize()}: {e['signal_gbps']:5.1f} GT/s  {e['encoding']:31s}  "
          f"{e['lane_gbps'] / 8:5.3f} GB/s per lane  x16 = {links.pcie_gbs(gen, 16):6.1f} GB/s per direction")

# %% [markdown]
# 一张 400 Gb/s 的网卡每个方向要搬 50 GB/s 的数据。把它插进 Gen4 x16 插槽（31.5 GB/s）会怎样？插进 Gen5 x16（63.0 GB/s）呢？
# 下一代 800G 网卡（100 GB/s）又需要什么？

# %%
# NBVAL_CHECK_OUTPUT
for nic_gbps, gen in [(200, 4), (400, 4), (400, 5), (800, 5), (800, 6)]:
    s = node.nic_slot(nic_gbps, gen)
    print(f"{nic_gbps} Gb/s NIC in PCIe Gen{gen} x16: slot {s['slot_gbs']:6.1f} GB/s -> delivers "
          f"{s['delivered_gbs']:5.1f} of {s['nic_gbs']:5.1f} GB/s ({s['fraction']:.0%})")

# %% [markdown]
# 这就是目录里 ConnectX-6（200G）配 Gen4、ConnectX-7（400G）配 Gen5 的原因：**网卡代际和 PCIe 代际是成对出现的**。
# 实际中常见的事故是「硬件对，协商错」：BIOS 把插槽设成了 Gen4，或者一根 riser 线接触不良让链路降成 x8，
# 网卡照样亮灯、`ibstat` 照样显示 400，但吞吐只剩六成。所以验收时要用 `lspci -vvv` 看 `LnkSta`（见第 6 节）。
# PCIe 协议本身还有 TLP 包头开销，实测吞吐一般比上表再低 10%–20%，这也是为什么 400G 网卡不能放在「刚好 50 GB/s」的链路上。
#
# ## 4. NVLink 与 NVSwitch：节点内的高速公路
#
# 如果 GPU 之间只能走 PCIe，8 张卡的张量并行每层都要做 all-reduce，PCIe 会成为硬瓶颈。NVLink 是 GPU 之间的专用链路，
# NVSwitch 把 8 张卡连成「任意两张卡都能全速通信」的交换结构。目录里记录的是每卡 NVLink **双向总带宽**，单方向要除以 2：
# H100 SXM 900 GB/s（单向 450），H800 SXM 400 GB/s（单向 200；按每条 NVLink 4 链路 50 GB/s 算，是 H100 的 18 条减到了 8 条，这是出口管制版本的主要差别），A100 600 GB/s。
# 下图把它们和 PCIe x16、每卡一张网卡放在同一根（对数）坐标轴上：

# %%
node_x.interconnect_figure()

# %% [markdown]
# 量级差一目了然：H100 的 NVLink 单向 450 GB/s，是 PCIe Gen5 x16 的 7 倍、400G 网卡的 9 倍。用课程统一的集群模型（`labutil.cluster`，第 13 章的 α-β 模型加上 NCCL 实测能达到的 busbw）算一次
# 节点内 8 卡 all-reduce（1 GB，相当于一个 500M 参数层组的 BF16 梯度或一批激活）。线速到不了，模型用的是公开的实测 busbw：
#
# | 节点 | ring | NVLS（NCCL 默认） | 依据 |
# |---|---|---|---|
# | 8 × H100 | 约 370 GB/s | 约 480 GB/s | NVIDIA 工程师在 nccl-tests #212 给出的实测值 |
# | 8 × H800 | 约 160 GB/s | 约 215 GB/s | ring：DeepSeek-V3 报告「NVLink 160 GB/s」（作者说明是单向实测，课程把它当 ring busbw，第 14 章同）；NVLS：用户在 8×H800 上的 all_reduce 实测（NVIDIA/nccl #1374） |
# | 8 张 PCIe 卡 | 按 Gen5 x16 线速 | — | 没有公开实测，乐观估计 |
#
# 所以 215 GB/s 不是从 H100 的 480 按比例外推出来的，而是一次公开的 NVLS 实测；它和第 14 章的 160 GB/s 是同一台机器上的两种算法（NVLS 与 ring）。

# %%
# NBVAL_CHECK_OUTPUT
size = 1e9
pcie5 = links.pcie_gbs("gen5", 16)
nodes = [("NVLink H100-SXM", Cluster.system("DGX-H100")),
         ("NVLink H800-SXM", Cluster.system("HGX-H800")),
         # no published NCCL busbw for GPUs on PCIe: line rate as the ring busbw (optimistic)
         ("PCIe Gen5 x16 (optimistic)", Cluster.from_links(nic_gbps=400, nics_per_node=8, scaleup_gbs=pcie5,
                                                           scaleup_ring_busbw_gbs=pcie5, name="8 GPUs on PCIe Gen5"))]
for label, c in nodes:
    t = c.collective_time_s("all_reduce", size, 8)
    print(f"{label:27s} {c.scaleup_gbs:6.1f} GB/s per direction, busbw {c.expected_busbw_gbs('all_reduce', 8):4.0f} GB/s "
          f"-> 8-GPU all-reduce of 1 GB: {t * 1e3:5.1f} ms")
t_h100 = nodes[0][1].collective_time_s("all_reduce", size, 8)
print(f"slower than H100 NVLink: H800 x{nodes[1][1].collective_time_s('all_reduce', size, 8) / t_h100:.1f}, "
      f"PCIe x{nodes[2][1].collective_time_s('all_reduce', size, 8) / t_h100:.1f}")

# %% [markdown]
# H800 的节点内通信比 H100 慢 2.2 倍，PCIe 比 H100 慢 7.6 倍（而且这是乐观估计：8 张卡共享 4 条上行链路，实际更差）。
# 这解释了两条设计规则：**张量并行（TP）不跨节点**，TP 的规模一般就是节点内 NVLink 域的大小（8）；
# **H800 集群更依赖通信与计算重叠**——同样的模型，H800 节点内的 all-reduce 更难被计算掩盖（第 14 章）。
# PCIe 版 GPU（如 H100 PCIe、L40S）没有 NVSwitch，适合推理和小模型训练，不适合大模型的张量并行。
#
# 运维上，NVSwitch 不是插上就能用的：HGX/DGX 这类 8 卡 NVSwitch 机器要运行 `nvidia-fabricmanager` 服务来配置 NVSwitch 的路由，
# 它没起来（或版本和驱动不一致）时，`nvidia-smi` 照样列出 8 张卡，但任何 CUDA 程序一初始化就失败：错误码 802（`cudaErrorSystemNotReady`，
# 「system not yet initialized」）。验收时用 `nvidia-smi nvlink -s` 确认每张卡的 18 条 NVLink 都是 up、速率正确，再用 `systemctl status nvidia-fabricmanager` 看服务状态；
# 第 19 章把驱动与 Fabric Manager 的版本配对写进上架基线，第 28 章的排障库里也有这条 802 的签名。
#
# ## 5. GPUDirect RDMA：让网卡直接读写显存
#
# 跨节点通信时，数据要从一台机器的 GPU 显存到另一台机器的 GPU 显存。有两条路可走：
#
# - **没有 GPUDirect RDMA（经主机内存中转）**：GPU →（PCIe 上行）→ CPU 内存里的 bounce buffer →（PCIe 下行）→ 网卡 → 网络；
#   接收方反过来。每个字节都要经过 PCIe Switch 到 CPU 的上行链路两次（一次上、一次下），还要写一次、读一次主机内存。
# - **有 GPUDirect RDMA（GDR）**：网卡通过 PCIe 点对点（P2P）直接读写 GPU 显存。GPU 和网卡在同一颗 PCIe Switch 下时，
#   数据根本不经过 CPU，也不占主机内存带宽。
#
# 训练中的 ring all-reduce 每张卡**同时**在收和发。设网络速率为 $B$，不用 GDR 时上行链路每个方向都要承载 $2B$，于是
#
# $$
# B_{\text{staged}} \le \frac{B_{\text{uplink}}}{2}, \qquad
# \text{DRAM 流量} = 2\ (\text{写+读}) \times 2\ (\text{两个方向}) \times B .
# $$
#
# 用 DGX H100 的数字：上行是 Gen5 x16（63.0 GB/s），中转时每卡最多 31.5 GB/s，只有 400G 网卡的 63%；8 张卡一起跑，
# 主机内存要承受约 1 TB/s 的额外读写，超过两颗 Xeon 8480C 的 DDR5 峰值（每颗 8 通道 DDR5-4800，307 GB/s）。
#
# NCCL 什么时候会用 GDR？它读取 PCIe 拓扑，只有当 GPU 和网卡之间的距离不超过 `PXB`（经过一个或多个 PCIe Switch，但不经过 CPU）时才开启
# （NCCL 源码 `src/graph/paths.cc` 的 `ncclTopoCheckGdr`，默认 `netGdrLevel = PATH_PXB`，可以用 `NCCL_NET_GDR_LEVEL` 修改）。
# 距离是 `PHB`、`NODE` 或 `SYS` 时，NCCL 会退回到主机内存中转——**同一张网卡，插错一个插槽，数据路径就完全不同**。
# 在下面的探索器里，切换 GDR、把 GPU↔NIC 的距离从 PIX 拖到 SYS、把网卡插槽降到 Gen4，观察每张卡实际拿到的带宽和瓶颈落在哪一段：

# %%
explorer = node_x.gpu_nic_path_explorer()
explorer

# %%
# NBVAL_CHECK_OUTPUT
for link, gdr in [("PIX", True), ("PIX", False), ("SYS", True)]:
    p = node.gpu_nic_path(400, link=link, gdr=gdr, bidirectional=True)
    print(f"400G NIC, path {link:4s}, GDR requested {str(gdr):5s}: GDR used {str(p['gdr']):5s} "
          f"{p['rate_gbs']:5.1f} GB/s per direction ({p['fraction_of_nic']:.0%}), limit {p['bottleneck']}, "
          f"host DRAM {p['host_dram_gbs']:5.1f} GB/s")
print(f"8 GPUs staged: {8 * node.gpu_nic_path(400, gdr=False)['host_dram_gbs']:,.0f} GB/s of DRAM traffic vs "
      f"{2 * node.XEON_8480_DRAM_GBS_PER_SOCKET:.0f} GB/s peak of two Xeon 8480 sockets")

# %% [markdown]
# GDR 需要软硬件都到位：网卡（ConnectX-4 及以后）、数据中心 GPU、内核模块 `nvidia-peermem`（旧称 `nv_peer_mem`）已加载，
# BIOS 里 PCIe ACS 不能把 P2P 流量强制绕到 Root Complex，虚拟化环境要正确配置 IOMMU。第 15 章会教你在 `NCCL_DEBUG=INFO`
# 日志里看到 `NET/IB/0/GDRDMA` 字样来确认它真的生效了。
#
# ## 6. NUMA 亲和性与 `nvidia-smi topo -m`
#
# 两路服务器有两个 NUMA 节点：每颗 CPU 有自己的内存控制器和 PCIe 根端口。一个进程的线程跑在 CPU0 上、内存分配在 CPU1 的内存里，
# 每次访问都要穿过 UPI；如果它驱动的 GPU 和网卡挂在 CPU1 下，数据加载线程写的 pinned buffer 也要跨 socket 才能被 DMA。
# 原则只有一条：**GPU、它的网卡、驱动它的 CPU 核和内存，都在同一个 NUMA 节点里**。
# 「两路 = 两个 NUMA 节点」也不是定律：BIOS 里打开 Intel 的 SNC（Sub-NUMA Clustering）或 AMD 的 NPS2/NPS4，一颗 CPU 会再切成 2–4 个 NUMA 节点，
# `numactl -H` 会看到 4 或 8 个节点，`topo -m` 的 NUMA Affinity 列也随之变细。规则不变（按矩阵里的 NUMA 号绑），但绑核脚本里不能写死 0 和 1。
#
# `nvidia-smi topo -m` 把这些关系打印成一个矩阵。格子里的代码从近到远是：`NV#`（# 条 NVLink）、`PIX`（最多经过一个 PCIe 桥）、
# `PXB`（经过多个 PCIe 桥，但不经过 CPU）、`PHB`（经过 CPU 的 PCIe Host Bridge）、`NODE`（同一 NUMA 节点内跨 Host Bridge）、
# `SYS`（跨 socket，经过 UPI/QPI）。下面是一台真实 DGX H100/H200 的输出，原样取自公开材料（出处在第一行打印；同样的映射也出现在 bytedance/flux #14 里一台 DGX H100 的粘贴中）：

# %%
print(samples.info("nvidia_smi_topo_dgx_h100_public")["source"])
print(samples.sample("nvidia_smi_topo_dgx_h100_public").split("Legend:")[0])
topo = parse_nvidia_smi_topo(samples.sample("nvidia_smi_topo_dgx_h100_public"))
show_table(node.affinity_plan(topo), ["gpu", "nic", "link", "gdr", "numa", "cpus", "n_cpus", "advice"])

# %%
# NBVAL_CHECK_OUTPUT
for r in node.affinity_plan(topo):
    print(f"{r['gpu']} -> {r['nic']} ({r['link']}), GDR {'on ' if r['gdr'] else 'off'}, NUMA {r['numa']}, "
          f"{r['n_cpus']} logical CPUs: {' '.join(node.numactl_command(r['numa'], ['python', 'train.py']))}")

# %% [markdown]
# 逐格读这张矩阵，有四件事是「想当然」会读错的：
#
# 1. **网卡有 12 张，不是 8 张**。8 张单口 ConnectX-7 是计算网络（每张 GPU 一张），另外 4 个口（mlx5_1/mlx5_2、mlx5_7/mlx5_8）
#    离任何 GPU 都不近，而且两两之间是 `PIX`——那是两张双口卡，DGX H100 用它们接存储和带内管理网络（第 3 章的存储网与管理网）。
# 2. **编号不连续**：GPU1 用的是 mlx5_3，GPU5 用的是 mlx5_9。脚本里写死「GPU i 用 mlx5_i」，GPU1 就会去用一个存储口，或者一个跨 NUMA 的远端网卡。
# 3. **是 `PXB` 不是 `PIX`**：GPU 和它的网卡之间隔着两级 PCIe Switch。GDR 照样开（NCCL 默认允许到 `PXB`），所以这不是问题，只是别把它当成故障。
# 4. GPU0–3 属于 NUMA 0（CPU 0–55,112–167），GPU4–7 属于 NUMA 1。
#
# 结论只有一条：**读矩阵，永远不要假设 mlx5_i 对应 GPU i**。`labutil.node` 把上面的读法写成了三个函数，顺便生成只包含计算网卡、按 GPU 顺序排列的 `NCCL_IB_HCA`：

# %%
# NBVAL_CHECK_OUTPUT
for r in node.nic_roles(topo):
    partner = f", PIX with {'/'.join(r['pix_partners'])}" if r["pix_partners"] else ""
    print(f"{r['nic']:8s} {r['role']}{partner}")
print(f"GPUs whose NIC is not mlx5_<same number>: {len(node.sequential_mapping_mismatches(topo))} of {len(topo.gpus)}")
print(f"NCCL_IB_HCA={node.nccl_ib_hca(topo)}")

# %% [markdown]
# 这也是**轨道优化（rail-optimized）**设计的节点侧：第 $i$ 号 GPU 的网卡接到第 $i$ 号 leaf 交换机（第 12 章）——轨道号跟着 **GPU 编号**走，
# 而不是跟着 `mlx5_` 的编号走。布线表、交换机端口描述和 `NCCL_IB_HCA` 都应该从这张矩阵生成，而不是从「mlx5_0 到 mlx5_7」手写。
# 再看一台设计较差的 4 卡 PCIe 服务器（示意数据）：只有一张网卡，挂在 CPU0 下面。

# %%
# NBVAL_CHECK_OUTPUT
topo_pcie = parse_nvidia_smi_topo(samples.sample("nvidia_smi_topo_pcie_4gpu"))
for r in node.affinity_plan(topo_pcie):
    print(f"{r['gpu']} -> {r['nic']} ({r['link']}), GDR {'on ' if r['gdr'] else 'off'}, NUMA {r['numa']}: {r['advice']}")
# the GPUs talk over PCIe in this server; the scale-up rate does not enter the per-GPU network share
shared = Cluster.from_links(nic_gbps=400, nics_per_node=1, gpus_per_node=4, scaleup_gbs=links.pcie_gbs("gen5", 16))
own = Cluster.from_links(nic_gbps=400, nics_per_node=4, gpus_per_node=4, scaleup_gbs=links.pcie_gbs("gen5", 16))
print(f"one 400G NIC for 4 GPUs: {shared.net_gbs_per_gpu:.1f} GB/s per GPU vs {own.net_gbs_per_gpu:.1f} GB/s "
      f"with one NIC per GPU (NCCL at {own.nic_efficiency:.0%} of the line rate)")

# %% [markdown]
# GPU2、GPU3 到网卡要跨 socket（`SYS`），NCCL 不会对它们开 GDR；4 张卡共用一张网卡，每卡只分到四分之一的带宽。
# 这台机器做推理或单机训练没问题，做多机训练就是「网络短板」的典型（种子课程误区一）。
#
# ## 7. 实操命令
#
# 上架一台新节点后，依次检查（`lspci` 的总线号以你的机器为准）：
#
# ```bash
# lscpu | grep -E 'Model name|Socket|Core|Thread|NUMA'       # 物理核数、是否开超线程、NUMA 节点数
# numactl -H                                                 # 每个 NUMA 节点的 CPU 列表和内存大小
# dmidecode -t memory | grep -E 'Size|Speed|Type:' | sort | uniq -c   # 内存条数量、容量、频率（是否插满通道）
# nvidia-smi topo -m                                         # GPU/NIC 的 PCIe/NVLink 距离与 CPU/NUMA 亲和性
# nvidia-smi nvlink -s                                       # 每张 GPU 每条 NVLink 的状态与速率（H100：18 条）
# systemctl status nvidia-fabricmanager                      # NVSwitch 机器：Fabric Manager 必须 active（否则 CUDA 报 802）
# lspci -vvv -s 18:00.0 | grep -E 'LnkCap|LnkSta'            # 该设备能力 vs 实际协商的 PCIe 速率与宽度
# nvidia-smi -q | grep -A3 -E 'PCIe Generation|Link Width'   # GPU 当前 PCIe 代际与宽度
# lsmod | grep nvidia_peermem                                # GPUDirect RDMA 内核模块是否加载
# numactl --cpunodebind=1 --membind=1 python train.py        # 把进程绑到 GPU 所在的 NUMA 节点
# ```
#
# `lspci -vvv` 里要看的是每个设备的 `LnkCap` 与 `LnkSta` 两行。下面是一台节点上两张网卡和一张 GPU 的片段（格式来自 pciutils 的 `ls-caps.c`；
# 总线号与数值为示意），用 `labutil.parsers.parse_lspci_links` 解析，并换算成每个方向的 GB/s：

# %%
LSPCI_SAMPLE = """\
18:00.0 Infiniband controller: Mellanox Technologies MT2910 Family [ConnectX-7]
	Subsystem: Mellanox Technologies Device 0052
		LnkCap:	Port #0, Speed 32GT/s, Width x16, ASPM not supported
		LnkSta:	Speed 32GT/s (ok), Width x16 (ok)
40:00.0 Infiniband controller: Mellanox Technologies MT2910 Family [ConnectX-7]
	Subsystem: Mellanox Technologies Device 0052
		LnkCap:	Port #0, Speed 32GT/s, Width x16, ASPM not supported
		LnkSta:	Speed 16GT/s (downgraded), Width x16 (ok)
1b:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)
	Subsystem: NVIDIA Corporation Device 16c1
		LnkCap:	Port #0, Speed 32GT/s, Width x16, ASPM not supported
		LnkSta:	Speed 32GT/s (ok), Width x8 (downgraded)
"""

# %%
# NBVAL_CHECK_OUTPUT
for d in parse_lspci_links(LSPCI_SAMPLE):
    cap = links.pcie_gbs(f"gen{d['cap_gen']}", d["cap_width"])
    sta = links.pcie_gbs(f"gen{d['sta_gen']}", d["sta_width"])
    flag = "DOWNTRAINED" if d["downtrained"] else "ok"
    print(f"{d['bdf']} {d['class']:22s} cap Gen{d['cap_gen']} x{d['cap_width']:<2d} sta Gen{d['sta_gen']} x{d['sta_width']:<2d} "
          f"-> {sta:5.1f} of {cap:5.1f} GB/s per direction ({sta / cap:.0%}) {flag}")

# %% [markdown]
# `LnkCap` 是设备能力，`LnkSta` 是实际协商结果。第二张网卡只跑在 16 GT/s，即第 3 节算过的 Gen4 x16，400G 网卡只剩 63%；
# GPU 的代际没问题，宽度却只训练出 x8，同样只剩一半——这种情况通常是金手指或 SXM 底板连接器接触不良、转接卡（riser）故障，重新插拔或换件后再看。
# 批量上架时，对每台机器跑一遍这个检查、把 `downtrained` 的设备列出来，是第 19 章验收清单的一项。
# 降速的链路往往还有一个伴随症状：`dmesg` 里反复出现 PCIe AER（Advanced Error Reporting）的可纠正错误。单条可纠正错误无害，
# 但同一个设备持续刷屏，说明信号质量在边缘，迟早会变成不可纠正错误，表现为 GPU「掉卡」或网卡复位。把 AER 计数和 `LnkSta` 一起纳入巡检，
# 能在故障真正打断训练之前换掉有问题的部件。
# 在 PyTorch 里让每个 rank 自动绑核，可以用 `torchrun` 的 `--numa-binding=node`（较新版本提供）或在启动脚本里用上面的 `numactl`；
# Slurm 下对应 `--cpu-bind` 与 `--gpu-bind=closest`。
#
# ## 8. 常见误区
#
# **误区一：「每张 GPU 必须配 16 核、256 GB，少一点都不行。」**（种子课程误区三的绝对化）上面已经算过，DGX H100 只有 14 核/卡：

# %%
# NBVAL_CHECK_OUTPUT
dgx = node.server_ratios("DGX-H100")
vision = dataloading.cores_needed_per_gpu(dataloading.RESNET50_A100_IMG_S, dataloading.JPEG_DECODE_IMG_S_PER_CORE_ASSUMED, 1.0)
share = 8 * tok * 4 / dataloading.HF_TOKENIZERS_BYTES_PER_S_PER_SERVER
print(f"DGX-H100 has {dgx['cores_per_gpu']:.0f} cores/GPU; vision decode needs {vision:.1f}; "
      f"LLM: even online tokenisation for all 8 GPUs uses {share:.1%} of one server's tokenizer throughput")
bloom_cores, bloom_ram_gb, bloom_gpus = 2 * 32, 512, 8        # Jean Zay node: 2x EPYC 7543, 512 GB, 8x A100 (BLOOM paper)
print(f"BLOOM 176B was trained on nodes with {bloom_cores / bloom_gpus:.0f} cores and {bloom_ram_gb / bloom_gpus:.0f} GB RAM per GPU")

# %% [markdown]
# 对 LLM 预训练，连在线分词都只用掉整台机器分词能力的 0.7%，14 核绰绰有余；一个公开的旁证是 BLOOM 176B：它在 Jean Zay 超算上训练，
# 每个节点两颗 32 核 EPYC 7543、512 GB 内存带 8 张 A100，也就是每卡 8 核、64 GB，远低于「16 核/256 GB」，训练照样跑了三个半月。对 CPU 解码的视觉训练，连 16 核都不够（17.5）。经验值要按负载修正：核数跟着「每秒要解码的样本数」走，
# 内存跟着「要暂存的检查点分片与 offload 的优化器状态」走。
#
# **误区二：「400G 网卡插上就是 400G。」** 插槽代际、协商速率、GPU 与网卡的距离都会吃掉带宽：

# %%
# NBVAL_CHECK_OUTPUT
cases = [("Gen5 slot, PIX, GDR", dict(link="PIX", gdr=True)),
         ("Gen4 slot, PIX, GDR", dict(link="PIX", gdr=True, nic_pcie_gen=4)),
         ("Gen5 slot, NODE (no GDR)", dict(link="NODE", gdr=True))]
for label, kw in cases:
    p = node.gpu_nic_path(400, **kw)
    print(f"{label:25s}: {p['rate_gbs']:5.1f} GB/s per direction = {p['fraction_of_nic']:.0%} of 400G")

# %% [markdown]
# 同一张卡、同一根线，只因插槽或位置不同，就可能只剩 63%。这些都不会报错，只能靠 `lspci`、`nvidia-smi topo -m` 和 NCCL 日志去发现。
#
# **误区三：「GPU 之间走 PCIe 也差不多，NVLink 是锦上添花。」** 把第 4 节的 all-reduce 放到张量并行的真实场景里看：Megatron 式 TP 每层前向 2 次、
# 反向 2 次 all-reduce，每次的数据量是 $s \cdot b \cdot h$ 个 BF16 元素。以 Llama 2 70B 的隐藏维度 8,192、序列 4,096、micro-batch 1 为例：

# %%
# NBVAL_CHECK_OUTPUT
tp_bytes = 4096 * 1 * 8192 * 2                      # s * b * h BF16 elements per TP all-reduce
per_layer = 4                                       # 2 forward + 2 backward all-reduces per layer (Megatron-LM TP)
n_layers = 80                                       # Llama 2 70B
tp_s = {}
for label, c in (nodes[0], nodes[2]):             # the 8-GPU nodes of section 4 (labutil.cluster)
    t = tp_s[label] = c.collective_time_s("all_reduce", tp_bytes, 8)
    print(f"{label:27s}: {tp_bytes / 1e6:.0f} MB per all-reduce -> {t * 1e3:5.2f} ms; "
          f"x {per_layer * n_layers} per step -> {t * per_layer * n_layers:5.2f} s of TP communication per micro-batch")
print(f"PCIe / NVLink: x{tp_s[nodes[2][0]] / tp_s[nodes[0][0]]:.1f} the TP communication time")

# %% [markdown]
# 每个 micro-batch 要做 320 次这样的 all-reduce：走 NVLink 合计约 0.1 秒，走 PCIe 约 0.6 秒（8 卡共享上行链路时更慢），而且 TP 的通信大多挡在计算的关键路径上，很难被重叠掉。
# 对每层都要 all-reduce 的张量并行，这是约 7.1 倍的通信时间；所以大模型训练选 SXM 版（NVLink + NVSwitch），PCIe 版留给推理和小模型。
#
# ## 9. 练习
#
# 把答案填进 `answer_k`（数字即可，单位见题目），运行单元格查看判分；卡住时调用 `exercise("ch09.k").hint(1)`。
# 练习 1 只需纸笔（第 3 节的 PCIe 公式）；练习 5 是判断题，填引号里的选项。
#
# **练习 1（纸笔题）**：一张 400 Gb/s 网卡插在 PCIe Gen4 x16 插槽里，每个方向实际最多能搬多少 GB/s？

# %%
answer_1 = None
exercise("ch09.1").check(answer_1)

# %% [markdown]
# **练习 2**：ResNet-50 在一张 A100 上每秒训练 2,470 张图。一个核每秒能解码 + 增强 200 张，训练进程自己占 1 个核。每张 GPU 需要多少个 CPU 核？（单位：核/卡）

# %%
answer_2 = None
exercise("ch09.2").check(answer_2)

# %% [markdown]
# **练习 3**：在一台 8 卡服务器上用 ZeRO-Offload（Adam、bf16 混合精度）全参数微调 70B 模型，卸载到主机内存的状态平均每张 GPU 多少 GB？

# %%
answer_3 = None
exercise("ch09.3").check(answer_3)

# %% [markdown]
# **练习 4**：8 张 GPU 通过 400G 网卡同时双向收发、各自跑到**没有** GPUDirect RDMA 时能达到的最高速率（PCIe Switch 和上行都是 Gen5 x16，见第 5 节的 $B_{\text{staged}}$）。这给主机内存带来多少 GB/s 的读写流量？

# %%
answer_4 = None
exercise("ch09.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：第 6 节那台设计较差的 4 卡 PCIe 服务器里，GPU3 的跨节点流量会由 NCCL 用 `"gdr"`（GPUDirect RDMA，网卡直接读写显存）
# 还是 `"staged"`（经主机内存中转）来传？按 `nvidia-smi topo -m` 的解析结果和 NCCL 的默认规则判断。

# %%
answer_5 = None
exercise("ch09.5").check(answer_5)

# %% [markdown]
# **练习 6（判断题）**：第 6 节那台真实 DGX H100 上，跑在 GPU5 上的进程应该用哪块网卡做跨节点通信？（填网卡名，如 `'mlx5_5'`）

# %%
answer_6 = None  # 网卡名，如 'mlx5_5'
exercise("ch09.6").check(answer_6)

# %% [markdown]
# ## 10. 小结
#
# - 配比：真实 8 卡服务器是每卡 12–24 核、128–256 GB；「16 核/256 GB」对视觉解码和 CPU offload 微调是下限，对 LLM 预训练是富余。
#   B200 这一代主机内存只剩显存的 1.4 倍；GB200 NVL72 没有「服务器」这一级，每卡 36 个 Grace 核、240 GB，CPU↔GPU 走 NVLink-C2C 而不是 PCIe。
# - PCIe：$\text{GT/s}\times\eta\times\text{lanes}/8$；400G 网卡要 Gen5 x16（63.0 GB/s），Gen4 x16 只能交付 63%；800G 要 Gen6。
# - NVLink：H100 单向 450 GB/s、H800 200 GB/s，是 PCIe Gen5 x16 的 3–7 倍；张量并行留在 NVLink 域内。
# - GPUDirect RDMA：GPU 与网卡在同一 PCIe Switch 下（PIX/PXB）时 NCCL 才开启；否则经主机内存中转，双向通信只剩上行带宽的一半，还吃掉大量内存带宽。
# - NUMA：GPU、网卡、CPU 核、内存在同一 NUMA 节点；用 `nvidia-smi topo -m` 得出「哪张网卡给哪张 GPU」，再用 `numactl` 绑定（SNC/NPS 打开时一颗 CPU 有多个 NUMA 节点）。
# - NVSwitch 机器要 `nvidia-fabricmanager` 在跑，否则 CUDA 初始化报 802；验收看 `nvidia-smi nvlink -s`。
# - 读矩阵，不要假设编号：真实的 DGX H100 有 12 个 ConnectX 口（8 个计算 + 4 个存储/带内管理），GPU 到网卡是 `PXB` 且编号不连续（GPU1 → mlx5_3）；`NCCL_IB_HCA` 和布线表都从矩阵生成。
#
# 下一章讨论这样一台 10 kW 的服务器怎么供电和散热；第 11 章把这里的网卡接入 InfiniBand 或 RoCE 网络。
#
# ## 参考资料
#
# - BigScience Workshop, *BLOOM: A 176B-Parameter Open-Access Multilingual Language Model*, arXiv:2211.05100, §3.4（Jean Zay 节点：2 × AMD EPYC 7543 32 核、512 GB 内存、8 × A100 80GB）。
# - pciutils `lspci` 源码 `ls-caps.c`（`LnkCap`/`LnkSta` 行的格式）；Megatron-LM 张量并行每层前向、反向各 2 次 all-reduce：M. Shoeybi et al., *Megatron-LM*, 2019, §3。
# - 种子课程：《AI训练推理集群》1.3（「每台服务器插有8张GPU……通过PCIe Switch与CPU互联」）与 1.5 误区三（「每张GPU至少配16个物理核心和256GB内存」）；《AI算力集群》1.3 场景表（微调「较高CPU/内存配比」）。
# - 真实 DGX H100/H200 的 `nvidia-smi topo -m`：github.com/fuhengwu2021/distributedai（`2-gpu-hardware-networking-and-parallelism-strategies.md`，原样粘贴的输出）；同样的 GPU→网卡映射见 github.com/bytedance/flux/issues/14（DGX H100，H100 80GB HBM3）。NVIDIA *DGX H100 User Guide*：8 个单口 ConnectX-7 计算口 + 2 张双口 ConnectX-7（存储与带内管理）。
# - H800 节点内 busbw：ring 160 GB/s 来自 DeepSeek-V3 技术报告 §3.2.2（作者在 deepseek-ai/DeepSeek-V3 #28 说明是单向实测）；NVLS 215 GB/s 是用户在 8×H800 上的 all_reduce 实测，github.com/NVIDIA/nccl/issues/1374；8×H100 的 370/480 GB/s 见 github.com/NVIDIA/nccl-tests/issues/212。
# - NVIDIA DGX H100 / DGX A100 数据手册与用户指南（CPU、内存、网卡、NVSwitch 配置）；HGX H800 典型 OEM 配置、Huawei Atlas 800T A2 产品页（见 `labutil/data/servers.toml` 各条目的 source）。
# - NVIDIA H100 / H800 / A100 数据手册：NVLink 900 / 400 / 600 GB/s（双向总带宽，见 `labutil/data/gpus.toml`）。
# - NVIDIA *DGX B200 User Guide*（2 × Xeon 8570 各 56 核、2 TB 内存可扩到 4 TB、8 个单口 ConnectX-7 计算口 + 2 张双口 BlueField-3；`labutil/data/servers.toml`）；
#   NVIDIA *DGX GB200 User Guide*「Hardware」（每个 1U 计算托盘 2 颗 Grace + 4 张 Blackwell GPU + 4 个 400G 计算口）与 GB200 NVL72 数据手册
#   （36 颗 Grace、2,592 个 Neoverse V2 核、LPDDR5X 最多 17 TB、NVLink-C2C 900 GB/s；`labutil/data/facility.toml` 的 `[rack_scale]`）。
# - NVIDIA *Fabric Manager for NVSwitch Systems* 用户指南（NVSwitch 系统要运行与驱动同版本的 `nvidia-fabricmanager`）；没装或没起时 CUDA 报 802「system not yet initialized」的实例：
#   github.com/pytorch/pytorch/issues/35710、github.com/aws-samples/aws-deep-learning-ami-ubuntu-dcv-desktop/issues/33（课程故障签名库 `fabric_manager_missing`）。
# - BIOS 的 Sub-NUMA Clustering（Intel）与 NPS（AMD EPYC 的 NUMA nodes per socket）设置：各自的 BIOS/平台调优指南；`numactl -H` 读出实际的 NUMA 节点数。
# - PCI-SIG, *PCI Express Base Specification* 1.0a–6.0：每 lane 2.5–64 GT/s，8b/10b、128b/130b 编码，Gen6 FLIT（`labutil/data/links.toml`）。
# - NVIDIA ConnectX-6 / ConnectX-7 产品简介：200G 配 PCIe 4.0 x16、400G 配 PCIe 5.0 x16（`labutil/data/nics.toml`）。
# - NVIDIA, *GPUDirect RDMA* 文档（Overview：网卡经 PCIe 直接读写 GPU 显存，不经系统内存中转）；NVIDIA/nccl `src/graph/paths.cc` `ncclTopoCheckGdr`（默认 GDR 距离上限 PXB，`NCCL_NET_GDR_LEVEL`）。
# - Intel ARK, Xeon Platinum 8480+：8 个 DDR5-4800 内存通道（每 socket 峰值 307.2 GB/s）。
# - NVIDIA DeepLearningExamples, ResNet50 v1.5 for PyTorch（1× A100 80GB 2,470 img/s）；Hugging Face `tokenizers` README（1 GB 文本 < 20 s）；Megatron-LM `indexed_dataset.py`（token id 的存储类型）。
# - J. Ren et al., *ZeRO-Offload: Democratizing Billion-Scale Model Training*, USENIX ATC 2021, §4.1；S. Rajbhandari et al., *ZeRO*, SC 2020, §3.1（K = 12）。
# - NVIDIA `nvidia-smi` 文档（`topo -m` 图例 X/NV#/PIX/PXB/PHB/NODE/SYS）；pciutils `lspci(8)`（LnkCap/LnkSta）；`numactl(8)`。
# - R. Thakur, R. Rabenseifner, W. Gropp, *Optimization of Collective Communication Operations in MPICH*, IJHPCA 2005（ring all-reduce 的 α-β 代价，第 13 章）。
