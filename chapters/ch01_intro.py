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
# # 第1章 课程导入：学习地图与价值全景
#
# > 模块一「全局认知与容量规划」的第 1 章。本章没有前置要求；它给出整门课的地图，
# > 并用三个会贯穿全课的数字——**有效算力**、**扩展效率**、**每天的故障次数**——建立量化直觉。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 说清楚「集群」与「多台 GPU 服务器」的区别：计算协同、通信协同、资源管理协同各解决什么问题；
# - 用 $N \times \text{峰值} \times \text{单卡 MFU} \times \eta(N)$ 估算一个集群的**有效算力**，并解释为什么它通常只有理论峰值的 40%–70%；
# - 解释**扩展效率**（Scaling Efficiency）$\eta(N)$ 的定义，看它怎样随卡数和网络下降，以及为什么论文里的集群 MFU 已经包含了它；
# - 用 MTBF 算出万卡集群**每天的故障次数**，并据此说明为什么检查点、自动重启、故障隔离是必备能力；
# - 看懂本课程的六个模块与它们之间的前置依赖，知道自己在学习地图上的位置。

# %%
from labutil.notebook import setup, show_table, MarkdownTable
from labutil import coursemap, hardware, reliability, compute, comm, dp, links, units, health
from labutil.parsers import parse_ibstat, samples
from labutil.cluster import Cluster
from labutil.explore import overview as overview_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 这门课带你去哪里：设计 → 部署 → 验证 → 运维
#
# 这门课面向真正要动手的人：运维工程师、平台工程师、算法工程师。我们关心的不是「一台服务器怎么装驱动」，
# 而是「一百到一万张加速卡怎样成为**一台**计算机」。完成全部 30 章后，你应当能独立完成一个千卡级集群的部署方案设计——
# 从 GPU 数量、节点配置、网络拓扑、存储分层、供电制冷、成本，到验收标准和可靠性设计——并具备万卡级集群运维的基础认知。
#
# 课程按「设计 → 部署 → 验证 → 运维」四个阶段组织成六个模块。模块之间有**严格的前置依赖**：
# 不理解 GPU 的硬件架构和显存构成（模块二），就无法真正理解 NCCL 为什么要区分 NVLink 域内和跨节点的通信（模块三）；
# 不理解网络和存储（模块三、四），部署验收（模块五）就只剩下照抄命令。下图是整门课的地图，箭头表示直接前置关系，
# 加粗的是你现在所在的这一章。

# %%
overview_x.course_map_figure(highlight_chapter=1)

# %% [markdown]
# 课程的组织遵循「先广度后深度」：模块一（第 1–5 章）建立全局视野——场景、架构、算力、成本；
# 模块二到四深入计算、网络、存储三个子系统；模块五把设计落地为可验收的集群；模块六处理推理、监控、可靠性、排障与多租户，
# 最后在第 30 章为一个虚拟客户做端到端的千卡集群方案。每一章都有同样的结构：原理讲解（为什么）、
# 可以拖动的模型（数字如何随参数变化）、实操命令（怎么做，以及输出怎么读）、常见误区（用算出来的数字反驳）、练习（自动判分）。
#
# 我们建议你像种子课程建议的那样，从现在开始准备一个「虚拟项目」：例如「为一家 AI 医疗公司设计一套医学影像模型训练集群」。
# 每学完一章，就把这一章的结论写进你的项目文档，第 30 章时它就是一份完整的选型清单。

# %%
# NBVAL_CHECK_OUTPUT
mods = coursemap.modules()
print(f"modules: {len(mods)}, chapters: {sum(len(m.chapters) for m in mods)}")
for m in mods:
    before = sorted(coursemap.prerequisites(m.id))
    print(f"M{m.id} {m.title_zh:<10} ch{m.chapters[0]:02d}-ch{m.chapters[-1]:02d}  requires {before}")

# %% [markdown]
# ## 2. 为什么需要「集群」，而不是「多台服务器」
#
# 很多人以为集群就是把多台 GPU 服务器用网线连起来。真正的集群要同时解决三个层面的协同：
#
# | 协同层面 | 要解决的问题 | 没解决时的后果 | 课程中的位置 |
# |---|---|---|---|
# | 计算协同 | 单个大模型放不进单卡显存，必须用张量并行、流水线并行等把模型切到多卡上 | 模型根本跑不起来 | 第 7、8 章 |
# | 通信协同 | 每一步迭代都要在 GPU 之间同步梯度，千卡规模每步的通信量可达数百 MB 到数十 GB | GPU 大部分时间在等网络 | 第 11–15 章 |
# | 资源管理协同 | 统一调度（Slurm、Kubernetes）：排队、故障转移、资源隔离 | 卡被碎片化占用，利用率极低 | 第 21、29 章 |
#
# 先看计算协同的一个数字。以 GPT-3 175B 为例，仅用 FP16/BF16 保存权重就需要
# $175\times10^9 \times 2\ \text{B} = 350\ \text{GB}$，而一张 H100 只有 80 GB 显存。下一格用目录里的数据算出来：

# %%
# NBVAL_CHECK_OUTPUT
h100 = hardware.gpu("H100-SXM")
weights_gb = 175e9 * 2 / units.BYTES_PER_GB
print(f"GPT-3 175B weights in BF16: {weights_gb:.0f} GB")
print(f"{h100.name} memory: {h100.hbm_gb:.0f} GB -> at least {weights_gb / h100.hbm_gb:.1f} GPUs just to hold the weights")

# %% [markdown]
# 这还只是权重。训练时还要存梯度、优化器状态（混合精度 Adam 每个参数约 16 字节）和激活值，
# 第 7 章会把这笔账算完整：175B 模型的训练状态约 2.8 TB，必须切到几十上百张卡上。
# 一个直观的类比：单张 GPU 是一位数学家，集群是一支数学家团队。团队的价值不只在人数，
# 更在于分工协作的机制——谁算哪部分、怎么交换中间结果、有人病倒了怎么重新分配任务。没有好的协作机制，
# 1000 位数学家可能还不如 1 位高效。
#
# ## 3. 有效算力：为什么只有峰值的 40%–70%
#
# 厂商数据手册上的算力是**峰值**：所有 Tensor Core 每个时钟周期都在做乘加。真实训练达不到它，损失来自三层：
#
# 1. **单卡效率**：访存、kernel 启动、非矩阵运算（LayerNorm、Softmax）让 GPU 的实际 FLOP/s 低于峰值。
#    衡量它的指标是 **MFU**（Model FLOPs Utilization），即模型需要的 FLOPs 除以「时间 × 峰值」；只用一张卡时它就是单卡效率。
# 2. **扩展效率**：从 1 张卡扩到 $N$ 张卡时，通信、流水线气泡、负载不均会吃掉一部分时间。
#    定义为 $\eta(N) = \dfrac{T_N}{N\cdot T_1}$，$T_N$ 是 $N$ 卡的吞吐量。理想值 100%；它不是一个可以随意设定的常数，
#    而是由卡数、每卡分到的工作量和网络共同决定的（第 13、14 章）。
# 3. **调度与故障损耗**：排队、碎片化、故障后的重启和回滚（第 21、27 章）。
#
# 把前两层写成一个公式：
#
# $$
# \text{有效算力} = N \times P_{\text{peak}} \times \text{MFU}_{1} \times \eta(N), \qquad \text{集群 MFU} = \text{MFU}_{1} \times \eta(N)
# $$
#
# 论文里报告的 MFU（PaLM 540B 的 46.2%、Llama 3 的 38%–43%）是**集群 MFU**：它已经把扩展损失算在里面，不要再乘一遍 $\eta$（第 4 章）。
#
# 为什么 $\eta(N)$ 一定会随 $N$ 下降？根源在于大模型训练的**全局 batch 不能随卡数无限放大**。每一步处理多少 token 受收敛性约束：
# batch 超过所谓的「临界 batch」之后，多花的算力换不来同比例的 loss 下降（McCandlish 等，2018）。所以加卡时每步的总工作量基本不变，
# 只是被切得更碎——高性能计算里把这叫作**强扩展**（strong scaling）。切得越碎，每张卡每步的计算越少；而数据并行要同步的梯度量只和模型参数量有关，
# 不随卡数减少，张量并行、流水线并行的通信和气泡也不会按比例缩小。于是「计算 ÷ 通信」这个比值随 $N$ 一起变小，
# 一旦通信时间超过了能藏进反向计算的那一部分，$\eta$ 就开始往下掉。这就是为什么同一套网络在一千卡上绰绰有余，到一万六千卡上却成了瓶颈；
# 也是为什么万卡集群的网络预算（第 12 章）不能按「每张卡配多少带宽」从小集群线性外推。
#
# 种子课程的关键认知是：集群算力**不是**「单卡算力 × 卡数」的简单乘法，实际有效算力通常只有理论峰值的 40%–70%，
# 硬件选型的核心目标就是尽可能提高这个效率系数。下面的探索器里，$\eta(N)$ 不是滑块，而是算出来的：
# 一个固定的训练任务（Llama 3 70B，每步 16M token，与 Llama 3 405B 的 global batch 相同）分到 $N$ 张卡上，
# 卡越多每张卡每步的计算越少，而梯度的 all-reduce 不会变小；通信时间由第 13 章的集群模型给出（服务器内走 NVLink，
# 服务器之间走所选的网卡），可以与反向计算重叠三分之二。换一个 GPU 型号、把卡数从 8 拖到 65,536、换一种网络，
# 看右图的 $\eta(N)$ 从哪里开始往下掉，有效算力落在 40%–70% 区间的哪里。

# %%
explorer = overview_x.effective_compute_explorer()
explorer

# %% [markdown]
# 对同样 1,000 张卡，不同加速卡的峰值差别很大，但「交付的算力」都要打上同样的折扣。下图把目录中几款加速卡
# 的千卡峰值（灰色）和 40%–70% 的有效区间（绿色）画在一起：

# %%
overview_x.peak_vs_effective_figure(n_gpus=1000)

# %% [markdown]
# 用目录数据算一个具体例子：Llama 3 那样的规模，16,384 张 H100 SXM，每台服务器 8 块 400G 网卡，单卡 MFU 0.55；
# 再把同一个任务放到 4,096 张卡上比较。

# %%
# NBVAL_CHECK_OUTPUT
eff = {n: overview_x.effective_compute("H100-SXM", n, 0.55, "8x400G") for n in (4096, 16384)}
for n, r in eff.items():
    print(f"{n:6,d} GPUs: compute {r['compute_s']:.2f} s + gradient all-reduce {r['comm_s']:.2f} s per step -> "
          f"eta {r['scaling_efficiency']:.0%}, cluster MFU {r['cluster_mfu']:.1%}, "
          f"effective {r['effective_pflops']:,.0f} of {r['peak_pflops']:,.0f} PFLOP/s "
          f"(= {n * r['efficiency']:,.0f} ideal H100s)")

# %% [markdown]
# 把这两行读成一句话（下面这段由上一格的结果直接生成，模型一变它就跟着变）：

# %%
# NBVAL_CHECK_OUTPUT
a, b = eff[4096], eff[16384]
MarkdownTable(
    f"4,096 张卡时每步的计算（{a['compute_s']:.1f} s）足以把 {a['comm_s']:.2f} s 的梯度同步藏进反向传播"
    f"（可重叠的部分是计算的 2/3，即 {2 / 3 * a['compute_s']:.1f} s），$\\eta$ = {a['scaling_efficiency']:.0%}；"
    f"同一个任务分到 16,384 张卡，每张卡每步只算 {b['compute_s']:.2f} s，能藏住的只有 {2 / 3 * b['compute_s']:.2f} s，"
    f"而同步仍要 {b['comm_s']:.2f} s——梯度的字节数不随卡数减少。$\\eta$ 掉到 {b['scaling_efficiency']:.0%}，"
    f"集群 MFU {b['cluster_mfu']:.0%}，交付的算力只相当于 {16384 * b['efficiency']:,.0f} 张「永远满载」的理想 H100。")

# %% [markdown]
# 作为量级检查：Llama 3 论文（Table 4）在 16,384 张 H100 上报告的集群 MFU 是 41%（8K 上下文）
# 和 38%（128K 上下文）。但这里的任务是一个理想化的纯数据并行 70B 作业——每张卡只分到 1,024 个 token，
# 连一条 8K 序列都装不下，真实的 Llama 3 用的是张量、流水线、上下文与数据四维并行。两个数字接近只说明模型的量级对，
# 不是对模型的验证；第 4、8 章会把模型逐项放到公布的训练记录旁边比较误差。
#
# 种子课程还给了一条经验线：扩展效率的理想值是 100%，**实际中千卡集群能达到 70% 已属优秀**。探索器默认的 1,024 张卡上，
# 模型的 $\eta$ 还没有开始下降，这和经验线并不矛盾：模型只算了数据并行的梯度同步，而且假设通信与反向计算完美重叠、
# 没有慢节点、没有流水线气泡、没有数据加载和检查点的停顿。真实作业要把这些一项项扣掉（第 8、14、18、27 章分别去算），
# 所以模型给的是**上界**；第 14 章把 70% 这条线画进扩展效率曲线里，看不同网络离它有多远。
#
# 提高它的手段贯穿全课：更好的并行切分（第 8 章）、足够的网络带宽与通信计算重叠（第 14 章）、
# 不拖后腿的存储与数据流水线（第 16–18 章）、更短的故障恢复时间（第 27 章）。
#
# ## 4. 可靠性：万卡集群每天都在坏
#
# 单张 GPU 的平均无故障时间（MTBF）即使达到 10 万小时（约 11 年），当卡数达到一万张时，
# 整个集群的故障率是单卡的一万倍。若各部件寿命独立且服从指数分布，$N$ 个部件每天的期望故障数为
#
# $$
# \lambda_{\text{day}} = \frac{24\,N}{\text{MTBF}_{\text{h}}}, \qquad
# \text{MTBF}_{\text{cluster}} = \frac{\text{MTBF}_{\text{h}}}{N}.
# $$

# %%
# NBVAL_CHECK_OUTPUT
per_day = reliability.failures_per_day(10_000, 100_000)
print(f"10,000 GPUs x MTBF 100,000 h: {per_day:.1f} GPU failures per day, "
      f"cluster MTBF {100_000 / 10_000:.0f} h")

# %% [markdown]
# 每天约 2.4 次 GPU 故障——这还只算了 GPU 本身。主机、网卡、光模块、交换机、线缆各有各的故障率，
# 第 27 章会用 Meta 公布的 Llama 3 训练统计（16,384 张 H100、54 天内 419 次非计划中断）把它们合起来，
# 你会看到真实的数字是「每天好几次」。在一个同步训练任务里，**任何一张卡**出故障都会让整个任务停下来。
# 所以检查点定期保存、任务自动重启、故障节点自动隔离不是可选项，而是必备能力。
#
# ### 真实案例：Llama 3 405B 预训练的 54 天
#
# 上面的 10 万小时只是一个假设。Meta 在 Llama 3 论文 §3.3.4 里公开了一份难得的运维记录：405B 模型预训练的一个 54 天快照里，
# 16,384 张 H100 上的训练作业一共被中断 466 次，其中 47 次是计划内的（固件升级、配置变更等自动维护），419 次是意外中断；
# 约 78% 的意外中断被确认或怀疑是硬件问题，GPU 本身（故障 GPU、HBM3 显存、SRAM、GPU 系统处理器、静默数据错误、过热）是最大的一类。
# 下一格用课程数据目录里收录的 Table 5 计数把它换算成我们熟悉的单位（论文印出的百分比与计数对不上，课程一律用计数）：

# %%
# NBVAL_CHECK_OUTPUT
ref = reliability.reference_data()["llama3"]
by_part = reliability.llama3_counts_by_part()
llama_per_day = reliability.llama3_failures_per_day()
print(f"Llama 3: {ref['unexpected_interruptions']} unexpected interruptions in {ref['snapshot_days']} days on "
      f"{ref['gpus']:,} GPUs -> {llama_per_day:.2f} per day, one every {24 / llama_per_day:.1f} h")
for part, n in sorted(by_part.items(), key=lambda kv: -kv[1]):
    print(f"  {part:<12} {n:4d}  ({n / ref['unexpected_interruptions']:.0%})")
gpu_only = reliability.failures_per_day(ref["gpus"], 100_000)
print(f"GPU-only estimate at MTBF 100,000 h: {gpu_only:.2f} per day; "
      f"per-GPU MTBF implied by the GPU rows: {reliability.llama3_component_mtbf_hours()['gpu']:,.0f} h")

# %% [markdown]
# 这几行读成一句话（由上一格的数直接生成）：

# %%
# NBVAL_CHECK_OUTPUT
gpu_mtbf_h = reliability.llama3_component_mtbf_hours()["gpu"]
MarkdownTable(
    f"每天 {llama_per_day:.1f} 次、平均每 {24 / llama_per_day:.1f} 小时一次意外中断，是只算 GPU、假设 10 万小时 MTBF 的估算"
    f"（同样 {ref['gpus']:,} 张卡 {gpu_only:.1f} 次/天）的 {llama_per_day / gpu_only:.1f} 倍：GPU 之外，软件缺陷与 NCCL 超时、"
    f"交换机与线缆、计划外的主机维护都在贡献中断。只看 GPU 的那几行（{by_part['gpu']} 次）反推出的单卡 MTBF 约 "
    f"{gpu_mtbf_h / 1e4:.1f} 万小时，和我们假设的 10 万小时在同一个量级——单个部件并不脆弱，是规模把它放大了。")

# %% [markdown]
# 下图的三条直线是「只算 GPU」的期望故障数（单卡 MTBF 5 万、10 万、20 万小时），旁边是 Llama 3 的两个真实的点：
# 紫色实心菱形是全部意外中断，空心方块只算 GPU 那几行——后者落在上面反推出的单卡 MTBF 的位置，前者还要再高一截（主机、网络、软件）。
# 更值得学的是 Meta 的结论：在这样的故障率下，
# 他们仍然保持了 90% 以上的有效训练时间，54 天里只有 3 次需要人工大幅介入，其余全部由自动化完成（发现故障、隔离坏节点、从检查点重启）。
# 故障不可避免，能控制的是每次故障的代价——这是第 27 章的主题。

# %%
overview_x.failures_figure()

# %% [markdown]
# ## 5. 实操命令：第一次登录一台 GPU 节点时看什么
#
# 本章不深入任何一个工具，只列出你在后面章节会反复用到的「第一眼」命令（第 9、11、22、23 章和 lab01 会逐一解析它们的输出）：
#
# ```bash
# nvidia-smi                                   # GPU 型号、驱动版本、显存、温度、功耗、进程
# nvidia-smi topo -m                           # GPU 与 GPU、GPU 与网卡之间的连接方式（NVLink / PCIe / NUMA）
# ibstat                                       # InfiniBand 端口状态、速率（NDR = 400 Gb/s）
# python -m labutil doctor                     # 本课程的环境体检：GPU、驱动、CUDA、torch、NCCL、RDMA 设备
# ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1 # nccl-tests：集合通信带宽验收（第 22 章）
# sinfo -N -l                                  # Slurm 节点与分区状态（第 21 章）
# ```
#
# 在没有 GPU 的机器上也可以运行本课程自带的体检工具 `python -m labutil doctor`：它不会报错退出，
# 而是把「没有发现 GPU / RDMA 设备」作为一条发现（finding）报告出来。
#
# 「第一眼」命令的价值在于：它们的输出能直接告诉你集群是不是在白白损失带宽。以 `ibstat` 为例，它为每块 InfiniBand 网卡（CA）打印端口的
# `State`（逻辑状态：`Active` 表示子网管理器已为端口分配地址、可以收发数据）、`Physical state`（物理链路：`LinkUp` 表示两端已完成链路训练，
# `Polling` 表示还在等对端）和 `Rate`（协商出的速率，Gb/s）。下面是一台 H100 节点上 8 块 NDR 网卡中前 3 块的真实格式输出，
# 用 `labutil.parsers.parse_ibstat` 解析，再用第 23 章的验收规则逐端口检查：

# %%
# NBVAL_CHECK_OUTPUT
cas = parse_ibstat(samples.sample("ibstat_ndr"))
for ca in cas:
    p = ca.ports[0]
    print(f"{ca.name}: State {p.state:<6} Physical {p.physical_state:<7} Rate {p.rate_gbps:3.0f} Gb/s")
for f in health.check_ibstat(cas):
    print(f"[{f.severity}] {f.component}: {f.message}")

# %% [markdown]
# `mlx5_1` 只协商到 200 Gb/s（常见原因：线缆或光模块有 lane 坏了，链路降速运行），`mlx5_2` 根本没有链路（`Polling`：线没插好、光模块坏、
# 或对端交换机端口被关闭）。这两个问题都**不会**让训练报错：作业照常启动，只是变慢。代价有多大？跨节点的 all-reduce 把数据平均分到
# 每条 rail（每块网卡一条）上，整个集合通信要等最慢的那条 rail 做完，所以一条 200G 的 rail 就能把整台服务器拖到一半速度：

# %%
# NBVAL_CHECK_OUTPUT
dgx = Cluster.system("DGX-H100", n_nodes=2)
healthy_busbw = dgx.acceptance_busbw_gbs()                      # NCCL_ALGO=Ring across the two nodes
slow_busbw = dgx.acceptance_busbw_gbs(slow_rails=1, slow_rail_gbps=200)
print(f"8 x 400G rails: rail bound {dgx.node_net_gbs:.0f} GB/s, capped by the NVLink ring at {dgx.ring_busbw_gbs:.0f} "
      f"-> all-reduce busbw {healthy_busbw:.0f} GB/s; one rail at 200G: {slow_busbw:.0f} GB/s "
      f"({slow_busbw / healthy_busbw:.0%} of healthy)")
MarkdownTable(
    f"健康的两台 DGX H100 之间，8 条 rail 一共能送 {dgx.node_net_gbs:.0f} GB/s，但每个 ring 还要穿过服务器内的 NVLink，"
    f"NVLink ring 只跑得到 {dgx.ring_busbw_gbs:.0f} GB/s，所以健康值是 {healthy_busbw:.0f} GB/s（第 3、22、23 章用的是同一个数，"
    f"来自同一个集群模型 `Cluster.acceptance_busbw_gbs`）。一块网卡降速到 200 Gb/s，整台服务器的跨节点带宽就掉到 "
    f"{slow_busbw:.0f} GB/s（健康值的 {slow_busbw / healthy_busbw:.0%}）。")

# %% [markdown]
# 在同步训练里，这台慢服务器又会拖住其余所有服务器。所以本课程把「读懂第一眼命令的输出」放在第 1 章：
# 第 11 章逐字段讲 `ibstat` 和 `ibv_devinfo`，第 22、23 章把这些检查写成上线前必须通过的验收清单，第 28 章教你从症状倒推到这样一块网卡。
#
# ## 6. 常见误区（每一条都用算出来的数字反驳）
#
# ### 误区一：「堆硬件就能提升性能」
#
# 当规模上到数百卡，通信开销会迅速变大；如果网络设计不当，增加 GPU 也换不来吞吐。用第 13 章的集群模型算种子课程 003 的例子：
# 一个 7B 参数的模型做数据并行训练，每张卡每步计算 0.5 s，每步要 all-reduce 14 GB 的 BF16 梯度（不做计算与通信重叠）。
# 服务器是 8×H800，**每台服务器只有一个 25 Gb/s 以太网口**（种子 003 的前提，课程的命名场景 `Cluster.scenario("one-25gbe-port-per-server")`）；NCCL 先在服务器内走 NVLink 归约，
# 服务器之间只能走这一个口。比较两种「花钱方式」：

# %%
# NBVAL_CHECK_OUTPUT
params_7b, compute_s = 7e9, 0.5       # 14 GB of BF16 gradients; per-GPU compute per step
seed003 = "one-25gbe-port-per-server"  # labutil/data/scenarios.toml
sync, worth = {}, {}
for n, cluster in [(1024, Cluster.scenario(seed003, n_nodes=128)), (2048, Cluster.scenario(seed003, n_nodes=256)),
                   (512, Cluster.system("HGX-H800", n_nodes=64))]:
    sync[n] = dp.dp_comm_time_s(params_7b, n, cluster=cluster)
    eff_n = comm.scaling_efficiency(compute_s, sync[n])
    worth[n] = n * eff_n
    print(f"{n:5d} GPUs, {cluster.nics_per_node} x {cluster.nic_gbps:.0f} Gb/s per server: all-reduce {sync[n]:5.2f} s, "
          f"scaling efficiency {eff_n:5.1%}, worth {worth[n]:6.0f} ideal GPUs")
MarkdownTable(
    f"每台服务器一个 25 Gb/s 口时，一次梯度同步要 {sync[1024]:.1f} s，是计算的 {sync[1024] / compute_s:.0f} 倍："
    f"1,024 张卡只相当于 {worth[1024]:.0f} 张理想 GPU；把卡数翻倍到 2,048 张，也只有 {worth[2048]:.0f} 张——钱花了一倍，"
    f"每张卡仍有 {1 - worth[2048] / 2048:.0%} 的时间在等网络。而 512 张卡配每台 8 块 400 Gb/s 网卡"
    f"（每卡一块，InfiniBand NDR），同步只要 {sync[512]:.2f} s，相当于 {worth[512]:.0f} 张理想 GPU：卡数只有四分之一，"
    f"交付的吞吐却是 2,048 卡方案的 {worth[512] / worth[2048]:.1f} 倍。")

# %% [markdown]
# 扩展效率衡量的正是这种衰减；第 14 章会讲如何用通信计算重叠、分层 all-reduce 把它进一步提高。
#
# 种子原文说，超过数百卡后「通信开销会指数级增长」——这个说法是错的，上面 1,024 → 2,048 卡同步时间几乎不变（输出的前两行）就是反例。
# ring all-reduce 里每张卡发送和接收的字节数是 $2\tfrac{n-1}{n}S$，带宽项约 $2S/B$，与卡数 $n$ 几乎无关；随 $n$ 增长的只有延迟项
# （ring 线性增长，tree 按 $\log_2 n$ 增长）。用第 13 章的 α-β 模型，14 GB 梯度、每卡 50 GB/s 的扁平 ring：

# %%
# NBVAL_CHECK_OUTPUT
flat = {n: comm.collective_cost("all_reduce", 14e9, n, 50.0, algo="ring") for n in (64, 1024, 16384)}
for n, c in flat.items():
    print(f"{n:6,d} GPUs: bandwidth term {c.bandwidth_s:.3f} s, latency term {c.latency_s:.3f} s, total {c.time_s:.2f} s")
MarkdownTable(
    f"从 64 张卡到 16,384 张卡，带宽项只从 {flat[64].bandwidth_s:.3f} s 涨到 {flat[16384].bandwidth_s:.3f} s"
    f"（{flat[16384].bandwidth_s / flat[64].bandwidth_s - 1:.1%}）；延迟项是线性增长（{flat[64].latency_s * 1e3:.1f} ms → "
    f"{flat[16384].latency_s * 1e3:.0f} ms），不是指数增长，而且到一万多张卡时才变得可观。")

# %% [markdown]
# 这正是 NCCL 在大规模时改用 tree、NVLS-Tree 这类对数延迟算法的原因（第 13、15 章）。真正让种子 003 的集群崩掉的不是卡数，而是每台服务器只有一个 25 Gb/s 口。
#
# ### 误区二：「集群部署就是装驱动和配 IP」
#
# 驱动只是第一步。BIOS 与固件（PCIe Gen5、Resizable BAR、ACS）、NCCL 环境变量、存储客户端参数、
# 容器运行时（GPU Operator）、监控 Agent……任何一个环节配置不当，都可能让性能下降 30% 以上。
# 一个真实常见的例子：400 Gb/s 的 ConnectX-7 网卡插在（或在 BIOS 中被协商成）PCIe Gen4 x16 的链路上。
# PCIe 每条 lane 的有效带宽是 $\text{GT/s} \times \tfrac{128}{130} / 8$ 字节/秒：

# %%
# NBVAL_CHECK_OUTPUT
nic = hardware.nic("ConnectX-7-400G")
nic_gbs = units.gbps_to_gbs(nic.port_gbps)
pcie_gbs = {gen: links.pcie_gbs(f"gen{gen}", 16) for gen in (4, 5)}  # GT/s x 128/130 x lanes / 8
for gen, bw in pcie_gbs.items():
    usable = min(bw, nic_gbs)
    print(f"PCIe Gen{gen} x16: {bw:.1f} GB/s -> NIC delivers {usable:.1f} of {nic_gbs:.1f} GB/s "
          f"({1 - usable / nic_gbs:.0%} lost)")
MarkdownTable(f"一个 BIOS 选项就让每张网卡至少损失 {1 - pcie_gbs[4] / nic_gbs:.0%} 的带宽，而数据并行训练的通信时间会同比例变长。")

# %% [markdown]
# 「至少」是因为 GT/s × 128/130 只扣掉了线路编码；PCIe 的包头（TLP/DLLP）还要再吃掉几个百分点，实际网卡在 Gen4 x16 上能跑到的更少——
# 第 9 章用 `lspci` 的 `LnkCap`/`LnkSta` 教你发现这种降级。
# 第 19 章会把这类检查做成从资产清单自动比对的流程，第 23 章把它们写进验收规则。
#
# ### 误区三：「故障率可以忽略不计」
#
# 上面已经算过：一万张卡、单卡 MTBF 10 万小时，每天约 2.4 次 GPU 故障，整个集群的 MTBF 只有 10 小时。
# 再算一笔账：如果每次故障要损失 1 小时（发现 + 重启 + 从上一个检查点重算），一个 30 天的训练任务会损失多少？

# %%
# NBVAL_CHECK_OUTPUT
days = 30
lost_h_per_failure = 1.0
failures = reliability.failures_per_day(10_000, 100_000) * days
lost_share = failures * lost_h_per_failure / (days * 24)
print(f"{failures:.0f} failures in {days} days -> {failures * lost_h_per_failure:.0f} h of the whole "
      f"10,000-GPU cluster lost = {lost_share:.1%} of the run")
MarkdownTable(f"{failures:.0f} 次中断、{failures * lost_h_per_failure:.0f} 小时的整集群停摆，约占 {lost_share:.0%} 的训练时间——"
              f"相当于凭空扔掉了 {lost_share * 10_000:,.0f} 张卡。")

# %% [markdown]
# 如果没有自动重启，每次还要等人半夜被叫醒，损失会大好几倍。第 17 章（检查点）和第 27 章（可靠性工程）
# 会告诉你如何用 Young/Daly 公式选择检查点间隔，把这部分损失压到最低。
#
# ## 7. 练习
#
# 把答案填进 `answer_k`（数字即可，单位见题目），运行单元格查看判分；卡住时调用 `exercise("ch01.k").hint(1)`。
#
# **练习 1**：一个 10,000 张 GPU 的集群，单卡 MTBF 为 100,000 小时，平均每天会发生多少次 GPU 故障？（单位：次/天）

# %%
answer_1 = None
exercise("ch01.1").check(answer_1)

# %% [markdown]
# **练习 2**：1,024 张 H100 SXM（BF16 稠密峰值见目录），MFU 为 0.45、扩展效率为 1.0 时，集群有效算力是多少 PFLOP/s？

# %%
answer_2 = None
exercise("ch01.2").check(answer_2)

# %% [markdown]
# **练习 3**：方案 A 是 2,048 张卡、扩展效率 70%；方案 B 是 1,024 张卡、扩展效率 90%。方案 A 相当于多少张「理想 GPU」？（单位：张）

# %%
answer_3 = None
exercise("ch01.3").check(answer_3)

# %% [markdown]
# **练习 4**：练习 1 的 10,000 卡集群（只算 GPU），整个集群的 MTBF 是多少小时？

# %%
answer_4 = None
exercise("ch01.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：同一个训练任务（1e24 FLOPs、H100 SXM、MFU 0.45），方案 A 用 2,048 张卡、扩展效率 70%，方案 B 用 1,024 张卡、扩展效率 90%，每 GPU·h 单价相同。哪个方案花的 GPU·h 更少？（填 'A' 或 'B'）

# %%
answer_5 = None  # 'A' 或 'B'
exercise("ch01.5").check(answer_5)

# %% [markdown]
# ## 8. 小结
#
# - 集群 = 计算协同 + 通信协同 + 资源管理协同；少了任何一个，卡数再多也发挥不出来。
# - 有效算力 $= N \times P_{\text{peak}} \times \text{MFU}_1 \times \eta(N)$，现实中约为峰值的 40%–70%；论文报告的集群 MFU 已经包含 $\eta(N)$。
# - 扩展效率由卡数、每卡的工作量和网络算出来：同一个任务分到越多的卡上，它越低；网络不匹配时，增加 GPU 几乎换不来吞吐。模型给的是上界，千卡集群实际能到 70% 已属优秀。
# - 故障率与规模成正比：一万张卡、10 万小时 MTBF，每天约 2.4 次 GPU 故障，容错是必备能力。
#
# 下一章我们从应用场景出发，看不同负载（预训练、微调、多模态、科学计算、推理）对集群提出了怎样不同的要求。
#
# ## 参考资料
#
# - 课程种子材料：《大规模GPU集群部署核心概念速览》课程导入；《AI训练推理集群》课程导入；《AI算力集群》课程导入。
# - NVIDIA H100 Tensor Core GPU Datasheet（BF16 稠密峰值 989.4 TFLOP/s，80 GB HBM3）；NVIDIA ConnectX-7 产品简介（400 Gb/s，PCIe 5.0 x16）。
# - PCI-SIG, *PCI Express Base Specification* 4.0 / 5.0：16 GT/s、32 GT/s 每 lane，128b/130b 编码。
# - T. Brown et al., *Language Models are Few-Shot Learners* (GPT-3), 2020：175B 参数。
# - R. Thakur, R. Rabenseifner, W. Gropp, *Optimization of Collective Communication Operations in MPICH*, IJHPCA 2005：ring all-reduce 的 α-β 代价。
# - A. Grattafiori et al. (Meta), *The Llama 3 Herd of Models*, arXiv:2407.21783, 2024, §3.3.4 与 Table 5：54 天快照、16,384 张 H100，466 次作业中断（47 次计划内、419 次意外），约 78% 为确认或疑似硬件问题，有效训练时间 90% 以上，只有 3 次需要人工大幅介入（第 27 章）。
# - S. McCandlish, J. Kaplan, D. Amodei et al. (OpenAI), *An Empirical Model of Large-Batch Training*, arXiv:1812.06162, 2018：临界 batch。
# - `ibstat(8)`，rdma-core / infiniband-diags 手册页：CA、Port、State、Physical state、Rate 字段；rail 上的 all-reduce 带宽上界见 nccl-tests `doc/PERFORMANCE.md`（第 11、22 章）。
# - 可靠性：指数寿命模型下串联系统的故障率相加（任何可靠性工程教材，如 Birolini, *Reliability Engineering*）。
