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
# # 第15章 NCCL深入：算法、协议、环境变量与日志
#
# > 模块三「高性能网络」的最后一章。前置：第 11 章（RDMA 与 GPUDirect）、第 12 章（拓扑）、第 13 章（集合通信与 α-β 模型）、
# > 第 14 章（带宽规划）。本章之后，第 22 章用 nccl-tests 做带宽验收，lab02 / lab03 在真实机器上动手测量。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 说清 NCCL 初始化时做了什么：拓扑探测、图搜索、channel 数量，以及这些决定为什么决定了你能跑出的 busbw；
# - 区分四种算法（Ring、Tree、CollNet、NVLS）与三种协议（LL、LL128、Simple），并用 NCCL 自己的代价模型
#   $t = \text{latency} + S/\text{algbw}$ 解释它在不同消息大小上的选择；
# - 把 NCCL 的环境变量分成「系统配置」与「调试」两类，知道哪些可以写进作业脚本、哪些只能在排障时临时打开；
# - 读懂 `NCCL_DEBUG=INFO` 日志：版本、每条 channel 的传输方式（P2P / SHM / NET/IB / NET/Socket）、是否用上 GPUDirect RDMA。

# %%
from labutil.notebook import setup, show_table
from labutil import comm, facts, health, nccl_tuning
from labutil.cluster import Cluster, tuner_node
from labutil.explore import nccl as nccl_x
from labutil.parsers import parse_nccl_debug_log, samples
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. NCCL 在一次训练里的位置
#
# PyTorch DDP、FSDP、DeepSpeed、Megatron-LM 的梯度同步和参数聚合，最终都落到 NCCL 的几个调用上：`ncclAllReduce`、
# `ncclAllGather`、`ncclReduceScatter`、`ncclBroadcast`、`ncclSend/Recv`。框架只决定「什么时候、对哪块缓冲区做哪种集合通信」，
# 而**数据怎么走**——走 NVLink 还是 PCIe、走哪块网卡、切成几条并行的通道、用哪种算法和协议——全部由 NCCL 在运行时决定。
# 所以当一个作业「卡比别人多、速度却不比别人快」时，十有八九要回到 NCCL 这一层去找原因。
#
# 创建通信器（`ncclCommInitRank`，PyTorch 里是 `init_process_group` 之后的第一次集合通信）时，NCCL 依次做三件事：
#
# 1. **拓扑探测**：读取 `/sys` 下的 PCIe 树、NVLink/NVSwitch 连接、网卡及其 NUMA 位置，构造一张 GPU—PCIe 交换芯片—CPU—NIC 的图。
#    这就是为什么容器里缺少 `/sys` 信息或 PCIe ACS 配置不当时，NCCL 会选出很差的路径。
# 2. **图搜索**：在这张图上为 Ring 和 Tree 各找出若干条并行的路径，每一条叫一个 **channel**。每个 channel 由一组 CUDA 线程块驱动，
#    负责搬运消息的一部分；channel 数 × 每个 channel 的速度，就是 NCCL 认为这台机器能提供的总线带宽（busBw）。
# 3. **调优（tuning）**：对每一种（算法, 协议）组合，用一个简单的代价模型估算不同消息大小的耗时；真正执行集合通信时，
#    按消息大小选出预测最快的组合。
#
# 这三步都会在 `NCCL_DEBUG=INFO` 的日志里留下痕迹（第 6 节）。
#
# channel 数是一个经常被忽视的「隐形旋钮」。在 8 卡 NVSwitch 服务器上 NCCL 通常建 16 到 32 个 channel，每个 channel 占用一个 CUDA
# 线程块与一段缓冲区；channel 太少，NVLink 喂不满；太多，又会挤占计算 kernel 的 SM。多机时，NCCL 还会让每个 channel 尽量走
# 「离本 GPU 最近的那块网卡」（rail-aligned，第 12 章的轨道优化拓扑就是为此设计的），必要时先经 NVLink 把数据转给与目标网卡同轨的
# GPU 再发出（PXN）。所以同样是 8 × 400G 的两台机器，网卡插在哪个 PCIe 交换芯片下、`NCCL_IB_HCA` 有没有漏掉一块卡，
# 都会直接反映为 busbw 的差异——验收时看到「带宽只有预期的 7/8 或 1/2」，首先怀疑的就是某个 rail 没被用上或降速了。
#
# ## 2. 四种算法
#
# | 算法 | 数据怎么走 | 延迟项 | 带宽项 | 适用场景 |
# |---|---|---|---|---|
# | Ring | 所有 rank 连成环，reduce-scatter + all-gather，共 $2(n-1)$ 步 | 随 $n$ 线性增长 | 最优：每个 rank 收发 $2\frac{n-1}{n}S$ | 大消息、单机与多机的默认选择 |
# | Tree | 两棵互补的二叉树（double binary tree），先向上归约再向下广播 | 随 $\log_2(\text{节点数})$ 增长 | 与 Ring 相当（NCCL 的模型再打 0.9 折）；两节点时网络只承担一半流量 | 多机的小到中等消息 |
# | CollNet | 节点内归约后交给支持 SHARP 的 InfiniBand 交换机在网络内做归约 | 很小 | 不随节点数退化 | 有 SHARP 交换机与插件的 IB 集群 |
# | NVLS | 在 NVSwitch 上做归约（NVLink SHARP，Hopper 起） | 很小 | 可超过 NVLink 单向速率的「等效」值 | HGX H100/H200 等 NVSwitch 机型 |
#
# Ring 的带宽项达到了理论下界（Patarasuk & Yuan 2009），这就是它在大消息上无可替代的原因；但它的 $2(n-1)$ 步延迟在上千卡时
# 变得不可忽视，Tree 用 $\log_2$ 级别的步数换掉了一部分带宽（节点内是一条链，NCCL 的模型给它打折）。CollNet 与 NVLS 则是把归约计算「卸载」到交换机上：
# 数据只需发到交换机一次，归约结果再发回来，这也是为什么在 NVLS 机器上测到的 busbw 可能**高于** NVLink 单向的物理速率——
# busbw 的换算公式假设了环形算法的数据量，卸载后实际搬运的字节更少。
#
# ## 3. 三种协议
#
# 协议决定「一段数据何时算到达」的同步方式：
#
# | 协议 | 同步方式 | 有效带宽 | 延迟 | 用途 |
# |---|---|---|---|---|
# | LL（Low Latency） | 每 8 字节里 4 字节数据 + 4 字节标志位，接收方轮询标志 | 约 1/4–1/2（`tuning.cc` 里 Ring/LL 的带宽乘以 1/4） | 最低 | 小消息 |
# | LL128 | 每 128 字节里 120 字节数据 + 8 字节标志，依赖 NVLink 的 128 字节写入原子性 | 120/128 = 93.75%（tuning.cc 对 Ring/LL128 另用经验系数 0.92） | 低 | 中等消息，需要硬件支持 |
# | Simple | 大块数据 + 内存栅栏（fence）后再置标志 | 接近 100% | 最高 | 大消息 |
#
# 标志位与数据放在一起，接收方看到标志就知道数据已经到达，省掉了一次内存栅栏——这就是 LL 延迟低的原因，代价是一半以上的
# 带宽被标志位占掉。LL128 只在 NCCL 验证过 128 字节原子性的平台上默认开启，其他平台上强行开启可能造成**静默的数据错误**
# （`tuning.cc` 的注释原文如此），这也是为什么 `NCCL_PROTO` 属于调试类变量。
#
# ## 4. NCCL 的代价模型：它凭什么这样选
#
# NCCL 的调优代码（`src/graph/tuning.cc`）给每个（算法 $a$, 协议 $p$）一个延迟 $L_{a,p}$ 和一个算法带宽 $B_{a,p}$：
#
# $$t_{a,p}(S) = L_{a,p} + \frac{S}{1000\,B_{a,p}}\ \ [\mu s],\qquad B_{\text{ring}} = \text{busBw}\cdot\frac{n}{2(n-1)},\quad B_{\text{tree}} = 0.5\cdot \text{busBw}$$
#
# 其中 busBw = channel 数 × 每 channel 速度，再按协议打折；Ring 的延迟是 $\text{baseLat} + 2(n-1)\cdot \text{hwLat}$，
# Tree 的延迟是 $\text{baseLat} + 2\left((\text{ppn}-1)\,\text{hwLat}_{\text{intra}} + \log_2(\text{nodes})\,\text{hwLat}_{\text{net}}\right)$。
# `labutil.nccl_tuning` 逐项转写了 NCCL **2.7.5**（commit 01afd20）的这段代码——它和 DGX A100 是同一个时代的。
# 本章的**算例**就放在目录里的 DGX A100 上（`labutil/data/systems.toml`）：8 张 A100 SXM 在 NVSwitch 上，NCCL 的日志显示它建 24 个 channel
# （NVIDIA/nccl-tests issue #100 的 `Channel 00/24 … 23/24`），环的实测 busbw 约 230 GB/s（S. Jeaugey，nccl-tests issue #149），
# 所以每个 channel 约 230 / 24 ≈ 9.6 GB/s。下面的单元格用它计算各组合的延迟与带宽：

# %%
node = tuner_node("DGX-A100")   # 24 channels x 9.58 GB/s = the catalog ring busbw 230 GB/s; NICs 8 x 200G -> 192
NODE = dict(n_channels=node["n_channels"], speed_gbs=node["speed_gbs"], inter_bus_gbs=node["inter_bus_gbs"])
t_node = nccl_tuning.allreduce_table([1024, 2**20, 2**30], 8, 1, intra="nvlink", **NODE)
show_table([{"algo/proto": k, "latency (us)": t_node.latency_us[k], "algbw (GB/s)": t_node.algbw_gbs[k],
             "t(1 KiB) us": float(t_node.time_us[k][0]), "t(1 GiB) us": float(t_node.time_us[k][2])}
            for k in t_node.time_us])

# %%
# NBVAL_CHECK_OUTPUT
for size, choice, t in zip(["1 KiB", "1 MiB", "1 GiB"], t_node.choice, t_node.best_time_us):
    print(f"8 GPUs, 1 node, {size:>6}: NCCL picks {choice:12s} predicted {t:9.1f} us")
print(f"{node['system']}: {node['n_channels']} channels x {node['speed_gbs']:.2f} GB/s = busBw {node['busbw_gbs']:.0f} GB/s")
print(f"ring/Simple algbw {t_node.algbw_gbs['ring/Simple']:.1f} GB/s = busBw {node['busbw_gbs']:.0f} x 8/14; "
      f"latency {t_node.latency_us['ring/Simple']:.1f} us = 8.4 + 14 x 3.4")

# %% [markdown]
# 读这张表：1 KiB 时所有组合的传输时间都不到 0.1 µs，比的是延迟，Ring/LL 胜出；1 GiB 时延迟可以忽略，
# 比的是带宽，Ring/Simple 胜出（它的 algbw 是 busBw × 8/14）；中间的 1 MiB 落在 LL 的地盘。注意 Tree/Simple 在单机上的延迟高达 392 µs——
# 单机内没有 $\log$ 的优势，Tree 只剩下一半带宽和更大的分块延迟。
#
# **跨节点时还有一个速度。** 多机时 NCCL 为环和树另搜一张跨节点的图，每个 channel 的速度受网卡限制（`speedInter`）。
# 2.7.5 的 `tuning.cc` 在 **多于 2 个节点** 时改用这个速度：`speed = nNodes <= 2 ? speedIntra : speedInter`。
# 对目录里的 DGX A100，8 块 200G HDR 网卡每卡只能分到 8 × 24 = 192 GB/s（集群模型 `labutil.cluster` 的 `node_net_gbs`，
# 与第 22 章公开结果表里 NVIDIA 实测的 192 GB/s 一致），比节点内的 230 GB/s 低，下面多机的单元格都按它计算。
#
# 下面的探索器把这个模型交给你：改变节点数、每节点 GPU 数、channel 数与速度、节点内互联（NVLink / PCIe）、每节点的网卡，
# 以及模拟 `NCCL_ALGO` / `NCCL_PROTO` 的限制，观察左图各组合的时间曲线与右图 NCCL 实际选中的组合。默认是 **4 台**上面的 DGX A100；
# channel 数 × 速度不会超过节点内链路的实际能力（NVLink 环按 H100 的 370 GB/s、PCIe 按 Gen5 x16 单向），超过时探索器按上限计算并告诉你；
# 节点数大于 2 时，摘要会说明 busBw 是否被网卡压低了。

# %%
explorer = nccl_x.nccl_tuning_explorer()
explorer

# %% [markdown]
# 把节点数从 1 调到 16，你会看到小消息的选择从 Ring/LL 变成 Tree/LL：多机时 Ring 的延迟随 $2(n-1)$ 线性增长，
# 而 Tree 只随 $\log_2(\text{nodes})$ 增长。下面两张图分别是单机 8 卡与 16 台 × 8 卡的预测。

# %%
nccl_x.tuning_figure(n_nodes=1, gpus_per_node=8)

# %%
nccl_x.tuning_figure(n_nodes=16, gpus_per_node=8)

# %%
# NBVAL_CHECK_OUTPUT
t16 = nccl_tuning.allreduce_table([4096, 2**30], 128, 16, **NODE)
print(f"128 GPUs / 16 nodes, 4 KiB: {t16.choice[0]} ({t16.best_time_us[0]:.1f} us); "
      f"ring/LL would take {float(t16.time_us['ring/LL'][0]):.1f} us")
print(f"128 GPUs / 16 nodes, 1 GiB: {t16.choice[1]} ({t16.best_time_us[1] / 1e3:.2f} ms)")

# %% [markdown]
# **16 节点图里 $2^{19}$ B 处的那个台阶。** 看左图的 Ring/Simple 曲线：它在 512 KiB（$2^{19}$ B）处突然向上跳了一截，
# 这不是画图的毛病，而是 NCCL 2.7.5 `tuning.cc` 里的一条经验修正：多节点时，只要消息不小于 $\frac{n_{\text{ranks}}}{16}\times 64$ KiB，
# Ring/Simple 的延迟就乘以 1.9（源码注释称之为 ring 的「平台效应」，plateau effect）。128 个 rank 时这个门槛正好是
# $128/16 \times 65{,}536 = 524{,}288 = 2^{19}$ B。背后的物理原因是：Simple 协议按「块」（chunk）流水线搬运，消息一旦大到每个
# channel 都要分多块，环上每一步都要等前一块的内存栅栏和网络往返，实测的「起步时间」比小消息时长得多，NVIDIA 就用一个系数把实测曲线拟合进模型。
# 这个门槛与 rank 数成正比：16 卡时是 64 KiB，1,024 卡时是 4 MiB。台阶并不改变 NCCL 在这里的选择——128 卡时 512 KiB 仍由 Tree/LL128 获胜——
# 但它解释了为什么在大集群上 Ring/Simple 要到更大的消息才追上来，下面把台阶两侧的数字算出来：

# %%
# NBVAL_CHECK_OUTPUT
edge = nccl_tuning.allreduce_table([2**19 - 1, 2**19], 128, 16, **NODE)
print(f"threshold n/16 x 64 KiB = {128 // 16 * 65536} B = 2^19")
print(f"ring/Simple: {float(edge.time_us['ring/Simple'][0]):.0f} us just below -> {float(edge.time_us['ring/Simple'][1]):.0f} us "
      f"at 2^19 (latency x1.9); NCCL still picks {edge.choice[1]} ({edge.best_time_us[1]:.1f} us)")

# %% [markdown]
# 这个模型的边界要说清楚：它复现的是 NCCL 2.7.5 的调优常数，新版本加入了 NVLS、NVLS-Tree、CollNet 的更多组合和 PAT 算法（2.23 起），常数也一直在调
# （网络上 Ring/Simple 的每跳延迟从 9.6 µs 变成了 2.18.1 起的 14 µs；2.30.7 里平台效应的系数对 Ampere 及以后的 GPU 是 1.4、更早的仍是 1.9，
# 门槛也改成按「每 channel、每 rank 的字节数 ≥ 64」算；课程的集群模型 `labutil.cluster` 用的是 2.30.7 的整张表，第 14、22 章的数字都出自它）；
# 而且真实的 channel 数与速度来自拓扑搜索，不是你手工填的。在自己的机器上，用 `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING`
# 运行一次，NCCL 会打印它自己的 `Latency/AlgBw` 表——结构和这里完全一样，数值以它为准。
#
# ## 5. 环境变量：系统配置 vs 调试
#
# NCCL 官方文档把环境变量分成两类，这个划分本身就是运维规范：
#
# | 类别 | 典型变量 | 作用 | 能否写进作业脚本 |
# |---|---|---|---|
# | 系统配置 | `NCCL_SOCKET_IFNAME`（如 `=eth0`、`^docker,lo`） | 指定用于引导与 socket 传输的网卡 | 可以，且多网卡机器上应该写 |
# | 系统配置 | `NCCL_IB_HCA`（如 `mlx5_0:1,mlx5_1:1`） | 指定 RDMA 网卡与端口 | 可以 |
# | 系统配置 | `NCCL_IB_GID_INDEX`、`NCCL_IB_TC` | RoCE 的 GID 与流量类别（配合 PFC/ECN） | 可以 |
# | 系统配置 | `NCCL_NET_PLUGIN`、`NCCL_TOPO_FILE` | 选用网络插件（云上如 AWS EFA 的 aws-ofi-nccl、Google 的 FastSocket）；在虚拟机里给 NCCL 一份真实的拓扑描述 | 可以，云和虚拟机上常常必须写 |
# | 调试 | `NCCL_DEBUG`（`WARN` 常开；`INFO` 只在排障时）、`NCCL_DEBUG_SUBSYS`、`NCCL_DEBUG_FILE` | 日志级别、子系统与输出文件：打印初始化、传输、调优细节 | `WARN` 可以常驻；`INFO` 只在排障时 |
# | 调试 | `NCCL_P2P_DISABLE`、`NCCL_P2P_LEVEL` | 关闭或限制 GPU 间 P2P | 只在排障时 |
# | 调试 | `NCCL_SHM_DISABLE` | 关闭共享内存传输 | 只在排障时 |
# | 调试 | `NCCL_ALGO`（`Ring`、`Tree`、`CollNetDirect`、`CollNetChain`、`NVLS`、`NVLSTree`、`PAT`，可用 `^` 排除）、`NCCL_PROTO`（`LL`、`LL128`、`Simple`） | 强制或排除算法/协议 | 只在排障时；两节点验收的 `NCCL_ALGO=Ring` 是测试条件，不进作业脚本 |
# | 调试 | `NCCL_IB_DISABLE` | 强制不用 IB，走 socket | 只在排障时 |
#
# 文档对调试类变量的原话是：不应在生产环境中使用或保留在脚本里，保留它们可能导致性能变差、崩溃或挂起。
# 现实中最常见的事故恰恰是：某次排障时在 `.bashrc` 或容器镜像里加了 `NCCL_P2P_DISABLE=1`，问题「解决」了，
# 变量却留了下来，半年后新集群的节点内带宽只有应有的零头。还要记得变量不只来自环境：NCCL 也读 `/etc/nccl.conf`
# （2.23 起还有 `NCCL_CONF_FILE` 指向的文件），`env` 里看不到的设置可能藏在那里。验收时（第 22 章）要把 `env | grep NCCL`
# 和这两个文件的内容一并存档。
#
# ### 5.1 运维中真正会碰到的几个变量
#
# 上表是「最少要认识的」变量。真正部署多机集群时，下面六个变量会反复出现在厂商的调优指南、集群的作业模板和故障工单里。
# 它们的含义按 NCCL User Guide 的 Environment Variables 一节转述；默认值随版本变化，下表的默认值按 NVIDIA/nccl 源码里各版本的
# `NCCL_PARAM(...)` 核对过，以你所用版本为准：
#
# | 变量 | 作用（按 NCCL 文档） | 什么时候需要动它 |
# |---|---|---|
# | `NCCL_CROSS_NIC` | 是否允许同一条 ring/tree 在不同节点上走**不同编号**的网卡。0：总是用同一块（同一条轨道）；1：允许跨；2（默认，从 2.5 引入这个变量起就是 2）：尽量同轨，若跨轨更快也允许 | 轨道优化（rail-optimized）拓扑上设 0，保证每条 channel 只在本轨道的叶交换机内转发；非轨道拓扑或网卡数不对称时才需要 1 |
# | `NCCL_NET_GDR_LEVEL` | GPU 与网卡之间「多远」仍使用 GPUDirect RDMA：LOC、PIX（同一 PCIe 交换芯片）、PXB（跨多级 PCIe 交换芯片）、PHB（经过 CPU 的 host bridge）、SYS（跨 NUMA）；未设时 NCCL 按平台自选 | 网卡与 GPU 不在同一 PCIe 交换芯片下的机型；日志里没有 `GDRDMA` 时先查它和 `nvidia-peermem` 模块 |
# | `NCCL_IB_QPS_PER_CONNECTION` | 两个 rank 之间每条连接建几个 IB 队列对（QP），默认 1；文档说明它用于需要多个 QP 才能获得足够路由熵的多级网络 | RoCE/以太网多级 CLOS 上 ECMP 按流哈希，QP 太少时大象流挤在少数几条上行链路上；常见取值 4 |
# | `NCCL_MIN_NCHANNELS` / `NCCL_MAX_NCHANNELS` | 限制 NCCL 可用的 channel 数；文档指出减少 channel 同时减少了通信占用的 CUDA 线程块，也就减少了对计算 SM 的占用 | 计算与通信重叠、通信 kernel 抢 SM 时调小上限；拓扑搜索给出的 channel 太少、带宽喂不满时调大下限 |
# | `NCCL_NVLS_ENABLE` | 是否使用 NVLink SHARP（NVLS，NVSwitch 内归约，Hopper 起）。2.17 的默认是 1；2.18 起默认 2＝自动：驱动报告支持多播（CUDA 12.1+）才启用，日志里打印 `NVLS multicast support is available on dev N` | NVLS 会额外占用显存；个别驱动/容器组合下初始化失败时临时设 0 排障。它也可能是为省显存有意关掉的（见下面第三个案例）：改动前后用同一个作业 A/B 测一次 |
# | `NCCL_IB_TIMEOUT` / `NCCL_IB_RETRY_CNT` | IB 传输层的重传超时（4.096 µs × 2^值）与重试次数。超时的默认值随版本变过：2.13 及以前 14（约 67 ms），2.14–2.22 是 18（约 1.1 s），2.23 起 20（约 4.3 s）；重试默认 7 | 大规模或拥塞的网络上日志出现 `transport retry counter exceeded`（错误 12）时，先查链路误码和对端进程是否已经退出（第 23、28 章），再考虑调大超时——调大只是让作业晚一点才报错 |
#
# 调试类变量也要归好队：`NCCL_DEBUG`、`NCCL_DEBUG_SUBSYS`、`NCCL_DEBUG_FILE` 在文档里属于 Debugging 一节，和 `NCCL_P2P_DISABLE`、
# `NCCL_ALGO`、`NCCL_PROTO` 同类——区别只是 `NCCL_DEBUG=WARN` 几乎没有代价，可以常驻；`INFO` 会在每个 rank 打印上百行，
# 千卡作业里等于每次启动写几十万行日志，只在排障时打开，并用 `NCCL_DEBUG_SUBSYS=INIT,NET` 把范围收窄。
#
# **三个有出处的真实案例。**
#
# - **QP 数与路由熵（Meta，SIGCOMM 2024）。** Meta 在论文 *RDMA over Ethernet for Distributed AI Training at Meta Scale* 中报告：
#   训练流量的流数少、每条流很大，普通 ECMP 只按五元组哈希，负载严重不均；他们让交换机额外按 RoCE 包里的目的 QP 字段哈希（E-ECMP），
#   同时增加每条连接的 QP 数，AllReduce 性能最多提升 40%。这正是 `NCCL_IB_QPS_PER_CONNECTION` 在以太网集群上被普遍设成 4 的原因。
# - **NVLS 在多机上的「假加速」（NVIDIA/nccl issue #1031）。** 用户在 2 台 H100 上测得 all_reduce busbw 310 GB/s，4 台时只有 180 GB/s，
#   以为 NVLS 在多机上失效。维护者的解释是：NVLS 本身只在 NVLink 域内归约，2 节点的 nccl-tests 结果与更多节点不可直接比较，
#   对比时应在 2 节点上也设 `NCCL_ALGO=Ring`。这和第 13 章「busbw 高于环上限要先问用了什么算法」是同一个教训。
# - **默认值一翻转就可能退步：`NCCL_NVLS_ENABLE`（NVIDIA/JAX-Toolbox PR #383 与 #1708）。** NVIDIA 的 JAX 容器镜像早先特意设了
#   `NCCL_NVLS_ENABLE=0`：NVLS 的通信器初始化要额外占一大块显存，当时会把作业挤到 OOM（PR #383）。后来 PR #1708 去掉这一行、让支持的系统
#   默认启用 NVLS，PR 附的回归测试（GKE、EKS 上的集群）里，MaxText 的训练吞吐反而从约 210 tok/s 降到约 180 tok/s。
#   教训不是「NVLS 不好」，而是：一个开关当初为什么设、翻转它之后快了还是慢了，都要用同一个作业 A/B 测一次，把数字留档——
#   `NCCL_NVLS_ENABLE=0` 既可能是上次排障的残留，也可能是有意为之的显存取舍。
#
# channel 数对带宽的影响可以直接用第 4 节的代价模型算：busBw = channel 数 × 每 channel 速度，channel 砍掉四分之三，大消息的时间就变成 4 倍。
#
# ## 6. 实操：读 NCCL_DEBUG=INFO
#
# ```bash
# export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH,TUNING NCCL_DEBUG_FILE=/tmp/nccl.%h.%p.log
# torchrun --nnodes=2 --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=node0:29500 \
#     -m labutil.bench.collectives --op all_reduce -b 8 -e 1G -f 2
# grep -h "NCCL INFO" /tmp/nccl.*.log | grep -E "NCCL version|via|Channel|Using network" | head
# ```
#
# 日志每行的格式是 `host:pid:tid [cudaDev] NCCL INFO ...`（NVIDIA/nccl `src/debug.cc`）。最值得看的几行：`NCCL version 2.x.y` 告诉你实际加载的 NCCL
# （pip 装的 PyTorch 用的是它自带的那一份）；`Using network IB` 或 `Using network Socket`；每条 channel 的
# `Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read` 或 `via NET/IB/0/GDRDMA`；Hopper 机器上还有一行
# `NVLS multicast support is available on dev 0`（或 `is not available`），它决定单机 all_reduce 能不能走 NVLS。下面解析课程附带的两段样例
# （NCCL 2.19–2.21 的行格式，数值为示意）：第一段是健康的两机 IB 集群，第二段是 IB 端口出错后 NCCL 退回了 TCP socket。

# %%
logs = {name: parse_nccl_debug_log(samples.sample(name)) for name in ("nccl_debug_ib", "nccl_debug_socket")}
show_table([{"sample": n, "NCCL": l.version, "ranks": l.nranks, "hosts": len(l.hosts), "network": l.network,
             "GDRDMA": l.uses_gdr, "transports": str(l.transports()), "warnings": len(l.warnings)}
            for n, l in logs.items()])

# %%
# NBVAL_CHECK_OUTPUT
for name, log in logs.items():
    worst = [f"{f.severity}:{f.check}" for f in health.check_nccl_log(log) if f.severity != "info"]
    print(f"{name}: network={log.network} gdr={log.uses_gdr} transports={log.transports()} findings={worst}")

# %% [markdown]
# 第二段日志里没有任何错误退出：作业照常运行，只是节点间流量全部走了 TCP。`labutil.health.check_nccl_log` 把这种情况判为
# critical——这正是「IB 没起来 NCCL 会报错」这个误区的反例（见下一节）。
#
# **一套从日志出发的排障顺序。** 当 nccl-tests 的大消息 busbw 只有期望值（第 22 章用 `labutil.cluster` 算出的 370 GB/s）的一半或更低时，
# 按从便宜到昂贵的顺序排查，每一步都对应日志里的一行或一个变量：
#
# 1. **版本**：`NCCL version` 是否就是你以为的那个？容器里 PyTorch 自带的 NCCL 与系统安装的不同，是最常见的「同样的镜像、不同的结果」来源；
# 2. **网络类型**：`Using network IB` 还是 `Socket`？如果是 Socket，先查 `NCCL_IB_HCA` 是否拼错、`ibstat` 端口是否 Active（第 11 章）、容器是否挂载了 `/dev/infiniband`；
# 3. **GPUDirect RDMA**：跨节点 channel 的 `via NET/IB/x/GDRDMA` 是否出现？没有 GDRDMA 时数据要经过主机内存中转，查 `nvidia-peermem` 模块与 `NCCL_NET_GDR_LEVEL`；
# 4. **网卡是否都用上**：数一数 `NET/IB/0` 到 `NET/IB/7` 是否齐全。少一块网卡，环的上限就按那条轨道降下来；8 条轨道里只用了 4 条，busbw 上限直接减半；
# 5. **残留的调试变量**：`env | grep NCCL` 和 `/etc/nccl.conf` 里有没有 `NCCL_P2P_DISABLE`、`NCCL_ALGO`、`NCCL_PROTO` 这类上次排障留下的开关（日志里每个生效的变量都会打印一行 `NCCL_xxx set by environment to ...`）；
#    `NCCL_NVLS_ENABLE=0` 要先问清为什么设（可能是为了省显存），再用 A/B 测试决定去留；
# 6. **拓扑与调优**：最后才打开 `NCCL_DEBUG_SUBSYS=GRAPH,TUNING`，看 channel 数和每个（算法, 协议）的预测表，和第 4 节的模型对照。
#
# 前五步都只需要一次 `NCCL_DEBUG=INFO` 的短作业（几十秒），不要一上来就改 channel 数或强制算法——那样往往会把一个配置问题掩盖成「调优后好了一些」。
#
# ## 7. 常见误区（每一条都用算出来的数字反驳）
#
# **误区一：「把 `NCCL_PROTO=LL` 设上，延迟低，训练就快。」** LL 是为小消息设计的；梯度同步是几十到几百 MB 的大消息。
# LL 每 8 字节里只有 4 字节是数据，NCCL 的模型把 Ring/LL 的带宽直接乘以 1/4（第 3 节），于是 1 GiB 的 all-reduce 在这台 8 卡服务器上
# 整整慢 4 倍（下面的输出）；小消息上省下的几微秒，在一个 DDP 桶（25 MiB）面前可以忽略。何况文档把 `NCCL_PROTO` 列为调试变量——它是用来**关掉**
# 某个可疑协议的，不是用来调优的：

# %%
# NBVAL_CHECK_OUTPUT
ll_only = nccl_tuning.allreduce_table([2**30], 8, 1, enabled=("ring/LL", "tree/LL"), **NODE)
print(f"1 GiB all_reduce, 8 GPUs: default {t_node.best_time_us[2] / 1e3:.2f} ms, NCCL_PROTO=LL "
      f"{ll_only.best_time_us[0] / 1e3:.2f} ms ({ll_only.best_time_us[0] / t_node.best_time_us[2]:.1f}x slower)")

# %% [markdown]
# **误区二：「Tree 是 $O(\log n)$，所以总比 Ring 快。」** $\log$ 只作用在延迟项上；带宽项 Tree 并不比 Ring 好。
# 单机 8 卡时情况更糟：节点内没有 $\log$ 的优势（Tree 在节点内就是一条链），NCCL 的模型给 Tree 的带宽打 0.9 折、算法带宽取 busBw 的一半，
# 中等尺寸上还要乘修正系数，
# 1 GiB 的 all-reduce 用最好的 Tree 组合要 Ring/Simple 的两倍多（下面的输出）。所以「强制 `NCCL_ALGO=Tree`」只在多机、中小消息时可能有利，
# 而那正是 NCCL 默认已经会选 Tree 的区间：

# %%
# NBVAL_CHECK_OUTPUT
tree_only = nccl_tuning.allreduce_table([2**30], 8, 1, enabled=("tree/LL", "tree/LL128", "tree/Simple"), **NODE)
print(f"1 GiB on one 8-GPU node: best tree {tree_only.best_time_us[0] / 1e3:.2f} ms vs ring/Simple "
      f"{t_node.best_time_us[2] / 1e3:.2f} ms ({tree_only.best_time_us[0] / t_node.best_time_us[2]:.1f}x)")

# %% [markdown]
# **误区三：「GPU 越多，每张卡要发的数据越多，所以 all-reduce 不可扩展。」** 环形 all-reduce 每个 rank 发送 $2\frac{n-1}{n}S$，上界是 $2S$。
# 从 8 卡到 1,024 卡，1 GB 的 all-reduce 每卡发出的字节只从 1.750 GB 增加到 1.998 GB，多了 14%；卡数翻了 128 倍，每卡的带宽负担几乎不变。
# 这就是数据并行能扩展到上万卡的根本原因：

# %%
# NBVAL_CHECK_OUTPUT
for n in (8, 1024):
    print(f"n={n:5d}: bytes sent per rank for a 1 GB all_reduce = {comm.bytes_sent_per_rank('all_reduce', 1e9, n) / 1e9:.3f} GB")

# %% [markdown]
# 真正随 $n$ 增长的是延迟项 $2(n-1)\alpha$——这正是多机时 NCCL 在小消息上改用 Tree 的原因（第 4 节）。
#
# **误区四：「IB 没配好，NCCL 会报错。」** 它不会：它会退回 socket 并继续运行，只在 INFO 日志里留下一行 `Using network Socket`。
# 退回 socket 时流量走的是 `NCCL_SOCKET_IFNAME` 选中的那块以太网口——通常是每台服务器一个 100 GbE 的带内管理/存储口——而且是 TCP：
# 每个字节都要由 CPU 拷进内核协议栈，NCCL 默认每块网卡只开 2 条 TCP 流，每条流大约 2 GB/s（`labutil.cluster.socket_nic_gbs`，
# 出处见 `labutil/data/systems.toml` 的 `[socket]` 一节）。课程统一用这个假设算回退的代价（第 20、22 章用的是同一个数）：

# %%
# NBVAL_CHECK_OUTPUT
ib = Cluster.system("DGX-H100", n_nodes=2).acceptance_busbw_gbs("all_reduce")
fallback = Cluster.system("DGX-H100", n_nodes=2, transport="socket", nic_gbps=100.0, nics_per_node=1)
sock = fallback.expected_busbw_gbs("all_reduce", algo="ring")
print(f"2 x DGX H100, NCCL_ALGO=Ring: 8 x 400G IB {ib:.0f} GB/s; IB fallback to TCP sockets on one 100 GbE port "
      f"per node: {sock:.2f} GB/s (min(0.94 x 12.5, 2 streams x 2.06 GB/s))")
print(f"fallback factor: {ib / sock:.0f}x lower (labutil.facts: {facts.text('ib_socket_fallback_factor')})")

# %% [markdown]
# 也就是说，IB 没起来、NCCL 退回 TCP socket 时，集合通信的带宽低约 90 倍——作业不会报错，只会慢得离谱。
# 这个倍数取决于回退用的是哪块网卡、开了几条 TCP 流：第 22 章误区三算的是同一个场景。

# %% [markdown]
# **误区五：「把 `NCCL_MAX_NCHANNELS` 调小，只是把 SM 还给计算，通信不受影响。」** 在 NCCL 的模型里，大消息的 busBw 就是
# channel 数 × 每 channel 速度。这台 DGX A100 从 24 个 channel 减到 6 个，1 GiB all-reduce 的 Ring/Simple 算法带宽和时间都差了正好 4 倍（下面的输出）。能不能这样做，要看这段通信是否被计算完全掩盖：
# 如果梯度同步本来就在关键路径上（第 14 章的 overlap 分析），省下的几个 SM 换不回损失的时间。

# %%
# NBVAL_CHECK_OUTPUT
for nch in (node["n_channels"], node["n_channels"] // 4):
    tb = nccl_tuning.allreduce_table([2**30], 8, 1, n_channels=nch, speed_gbs=node["speed_gbs"])
    print(f"NCCL_MAX_NCHANNELS={nch:2d}: 1 GiB all_reduce on 8 GPUs {tb.best_time_us[0] / 1e3:5.2f} ms "
          f"({tb.choice[0]}, algbw {tb.algbw_gbs['ring/Simple']:.1f} GB/s)")

# %% [markdown]
# ## 8. 练习
#
# 把答案填进 `answer_k`，运行单元格查看判分；卡住时调用 `exercise("ch15.k").hint(1)`。

# %% [markdown]
# **练习 1**：用第 4 节的 NCCL 2.7.5 代价模型，单台 DGX A100（24 个 channel × 每 channel 230/24 GB/s，busBw 230 GB/s）：1 GiB（$2^{30}$ B）all_reduce 用 Ring/Simple 的预测时间是多少 µs？

# %%
answer_1 = None  # 1 GiB Ring/Simple 预测时间（µs）
exercise("ch15.1").check(answer_1)

# %% [markdown]
# **练习 2**：同一台服务器，强制 `NCCL_PROTO=LL` 后，1 GiB all_reduce 的预测时间是默认选择的几倍（时间之比，无单位）？

# %%
answer_2 = None  # 强制 NCCL_PROTO=LL 后 1 GiB 慢几倍
exercise("ch15.2").check(answer_2)

# %% [markdown]
# **练习 3（纸笔题）**：16 个 rank 做 256 MiB（$256 \times 2^{20}$ B）的 all_reduce 用了 2.2 ms。nccl-tests 打印的 busbw 是多少 GB/s（$10^9$ B/s）？

# %%
answer_3 = None  # 256 MiB、16 卡、2.2 ms 的 busbw（GB/s）
exercise("ch15.3").check(answer_3)

# %% [markdown]
# **练习 4（判断题）**：4 台 DGX A100（每台 24 个 channel × 230/24 GB/s），4 KiB 的 all_reduce，NCCL 2.7.5 的代价模型会选哪个（算法/协议）组合？填字符串，如 `'ring/Simple'`。

# %%
answer_4 = None  # 4 节点 × 8 卡、4 KiB 时 NCCL 选哪个组合，如 'ring/Simple'
exercise("ch15.4").check(answer_4)

# %% [markdown]
# ## 9. 小结
#
# - NCCL 在初始化时探测拓扑、搜索 channel、为每个（算法, 协议）估算 $t = L + S/B$，执行时按消息大小取最小者；
# - 小消息拼延迟（LL、Tree），大消息拼带宽（Simple、Ring）；CollNet / NVLS 把归约卸载到交换机上；
# - 调试类变量（`NCCL_P2P_DISABLE`、`NCCL_SHM_DISABLE`、`NCCL_ALGO`、`NCCL_PROTO`、`NCCL_IB_DISABLE`）只在排障时使用，用完即删；
# - `NCCL_DEBUG=INFO` 里先看版本、`Using network` 和每条 channel 的 `via`。下一步：lab03 亲手打开这些开关测一遍；第 22 章用 nccl-tests 做验收。
#
# ## 参考资料
#
# - NVIDIA NCCL 源码 `src/graph/tuning.cc`（`ncclTopoTuneModel`、`ncclTopoGetAlgoTime`，NCCL 2.7.5，commit 01afd20，tag v2.7.5-1）：本章模型的全部常数（baseLat、hwLat、LL/LL128 折扣、treeCorrectionFactor）；
#   v2.30.7-1 的同一文件是课程集群模型的常数（`labutil/data/nccl_tuning.toml`）。
# - NVIDIA/nccl-tests issue #100（HGX A100 的 `NCCL_DEBUG=INFO`：24 个 channel）与 #149（8×A100 环约 230 GB/s）：第 4 节算例的节点。
# - NCCL 的 socket 传输：`src/transport/net_socket.cc`（每个连接的线程数与 socket 数、AWS/GCP 的自动值），NVIDIA/nccl issue #438（每块网卡两个 channel）
#   与 #209（单条 TCP 流约 2 GB/s）。
# - NVIDIA NCCL User Guide, "Environment Variables"（docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html）：系统配置类与调试类变量的划分及警告原文。
# - NVIDIA NCCL User Guide, "Troubleshooting" 与 "Logging"：`NCCL_DEBUG`、`NCCL_DEBUG_SUBSYS`、`NCCL_DEBUG_FILE`；日志行格式见 `src/debug.cc`。
# - S. Jeaugey, "Massively Scale Your Deep Learning Training with NCCL 2.4", NVIDIA Technical Blog, 2019：double binary tree。
# - P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of workstations", JPDC 69(2), 2009：环形 all-reduce 的带宽下界。
# - NVIDIA/nccl-tests `doc/PERFORMANCE.md`：algbw 与 busbw 的定义（第 22 章）。
# - NVIDIA/nccl issues #290、#342（容器 `/dev/shm` 太小导致 SHM 传输失败）。
# - A. Gangidi et al., *RDMA over Ethernet for Distributed AI Training at Meta Scale*, ACM SIGCOMM 2024（E-ECMP 按目的 QP 哈希 + QP scaling，AllReduce 最多提升 40%）。
# - NVIDIA/nccl issue #1031（2 节点与 4 节点 NVLS 结果不可比，对比时设 `NCCL_ALGO=Ring`）；NVIDIA/JAX-Toolbox PR #383（为避免通信器初始化 OOM 关闭 NVLS）
#   与 PR #1708（移除镜像里的 `NCCL_NVLS_ENABLE=0`，回归测试中 MaxText 约 210 → 180 tok/s）。
# - NVIDIA NCCL User Guide, "Environment Variables"：`NCCL_CROSS_NIC`、`NCCL_NET_GDR_LEVEL`、`NCCL_IB_QPS_PER_CONNECTION`、`NCCL_MIN_NCHANNELS`/`NCCL_MAX_NCHANNELS`、`NCCL_NVLS_ENABLE`、`NCCL_IB_TIMEOUT` 条目，`/etc/nccl.conf` 与 `NCCL_CONF_FILE`（2.23 起）。
# - 各版本的默认值：NVIDIA/nccl 源码的 `NCCL_PARAM` 定义——`CROSS_NIC` 2（`src/graph/search.cc`，v2.5.6 起）；`IB_TIMEOUT` 14（≤ v2.13）、18（v2.14–v2.22）、20（v2.23 起，`src/transport/net_ib*`）；
#   `IB_RETRY_CNT` 7；`NVLS_ENABLE` 1（v2.17）、2＝按多播支持自动（v2.18.1 起，`src/transport/nvls.cc`）；算法名 `ncclAlgoStr`（PAT 自 v2.23）。
# - NCCL 2.7.5 `src/graph/tuning.cc` 第 108 行 `speed = nNodes <= 2 ? speedIntra : speedInter`（多于 2 个节点用跨节点图的速度）；DGX A100 跨节点 192 GB/s：NVIDIA/nccl issue #812（AddyLaddy）。
