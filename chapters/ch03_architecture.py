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
# # 第3章 集群总体架构：计算、网络、存储、软件
#
# > 模块一「全局认知与容量规划」的第 3 章。前置：第 1、2 章。本章给出一个集群的「骨架」：四个层次、四张网络、一套软件栈。
# > 后面的模块二（计算节点）、模块三（网络）、模块四（存储）、模块五（部署）会逐层展开，本章负责让你知道每一层在哪里、彼此如何连接、各自有多大。
#
# ## 学习目标
#
# - 说出 AI 集群的四个层次（计算节点、网络、存储、软件）以及每一层的典型配置；
# - 区分一个集群里的四张网络——计算（后端）网络、存储网络、前端（带内）网络、带外管理网络——各自承载什么流量、需要多大带宽；
# - 从一份集群描述（卡数、服务器型号、交换机型号）算出各网络平面的端口数、交换机数和层数，并画出架构图；
# - 列出从固件到框架的软件栈，并能对照 NVIDIA / AMD / 华为昇腾三套生态找到对应组件。

# %%
from labutil.notebook import setup, show_table, MarkdownTable
from labutil import architecture, hardware, topology, units, comm, reliability, storage
from labutil.cluster import Cluster
from labutil.explore import architecture as architecture_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. AI 集群不是一台超级计算机
#
# AI 算力集群（AI Compute Cluster）并不是一台超级计算机，而是**多台服务器通过高速网络互联、协同完成大规模并行计算任务的计算资源集合体**。
# 它的「灵魂」在于集群调度与并行协同：单台 8 卡服务器只能支撑中小规模的训练，千亿参数模型需要数百乃至数千张加速卡同时工作，
# 这要求硬件拓扑、网络带宽、存储吞吐、散热供电都达到很高的协同水平。一个典型的 AI 集群硬件栈包含四个层次：
#
# | 层次 | 典型配置 | 决定了什么 | 详见 |
# |---|---|---|---|
# | 计算节点 | 每台服务器 8 张 GPU（H100/H800/A800 或昇腾 910B），GPU 之间 NVLink/NVSwitch 或 HCCS，经 PCIe Switch 连到 CPU 与网卡 | 单节点算力、显存、节点内通信 | 第 6–10 章 |
# | 网络 | InfiniBand 或 RoCE，400 Gb/s 每端口，Fat-Tree 或 Torus 拓扑 | 跨节点通信，也就是扩展效率 | 第 11–15 章 |
# | 存储 | 并行文件系统（Lustre、BeeGFS、GPFS）或对象存储（MinIO），数十 GB/s 聚合带宽 | 数据加载与检查点 | 第 16–18 章 |
# | 软件 | 驱动、CUDA/ROCm、容器运行时、Slurm/K8s、PyTorch DDP/DeepSpeed/Megatron | 能不能把上面三层「用起来」 | 第 19–24 章 |
#
# 三份种子材料对集群组成的说法略有不同（「三个核心组成部分：计算节点、高速网络、存储系统」与「四个层次」），
# 差别只在于是否把软件单列为一层。在实践中，软件层的配置错误造成的性能损失一点也不比硬件少（第 1 章误区二），
# 所以本课程把它单列。
#
# ## 2. 一个集群里有四张网络
#
# 初学者画集群图，往往只画一张「网络」。实际的集群至少有四个网络平面，它们的带宽相差三个数量级，故障域、安全要求也完全不同：
#
# 1. **计算网络（后端网络，back-end fabric）**：GPU 之间的集合通信，每张 GPU 配一块 400 Gb/s 网卡（DGX H100 为 8 块 ConnectX-7），
#    轨道优化（rail-optimized）的无阻塞 Fat-Tree。它是集群里最贵、最关键的一张网，第 12 章专门讲它的拓扑。
# 2. **存储网络**：训练数据读取、检查点写入，连接并行文件系统。DGX H100 为此另配 2 块双口 ConnectX-7；也有集群把存储流量合并到前端网络。
#    与计算网络分开，是为了让周期性的检查点写入不去干扰 all-reduce（第 16 章的「读写分离」是同一个思想在存储侧的体现）。
# 3. **前端网络（带内管理网络，in-band）**：登录、调度器、镜像拉取、用户流量、推理服务的入口流量。一般是 100 GbE 级别的以太网，允许收敛（oversubscription）。
# 4. **带外管理网络（OOB）**：每台服务器和交换机的 BMC（IPMI / Redfish）口，1 GbE。即使操作系统挂死、计算网络瘫痪，也要能远程开关机、看日志、刷固件。
#
# 给定一份集群描述，我们用第 12 章的 Fat-Tree 尺寸模型（`topology.size_fabric`）把四张网都算出来。下面是 1,024 张 H100（128 台 DGX H100）的例子：

# %%
plan = architecture.plan_cluster(1024, server="DGX-H100", compute_switch="QM9700")
show_table([{"plane": p.name, "role": p.role, "per node": f"{p.ports_per_node} x {p.port_gbps:g} Gb/s",
             "ports": p.total_ports, "switches": p.switches, "tiers": p.tiers,
             "oversub": f"{p.oversubscription:.2g}:1"} for p in plan.planes])

# %%
# NBVAL_CHECK_OUTPUT
for p in plan.planes:
    print(f"{p.name:<9} {p.node_gbps:7,.0f} Gb/s per node, {p.total_ports:5d} ports, {p.switches:3d} switches, {p.tiers} tier(s)")
print(f"total switches: {plan.total_switches}; compute-fabric cables {plan.compute_fabric.cables}, "
      f"transceivers {plan.compute_fabric.transceivers}")
cf, node = plan.compute_fabric, {p.name: p.node_gbps for p in plan.planes}
MarkdownTable(
    f"几个数字值得记住：计算网络每节点 {node['compute']:,.0f} Gb/s，是存储网络的 {node['compute'] / node['storage']:.0f} 倍、"
    f"前端网络的 {node['compute'] / node['frontend']:.0f} 倍、带外网络的 {node['compute'] / node['oob']:,.0f} 倍；"
    f"1,024 张卡的计算网络需要 {plan.plane('compute').switches} 台 64 口 NDR 交换机（{cf.leaf_switches} 台叶交换机 + "
    f"{cf.spine_switches} 台脊交换机，{cf.tiers} 层），{cf.cables:,} 根线缆和 {cf.transceivers:,} 个光模块。")

# %% [markdown]
# 光模块数和线缆数相等并不是巧合：DGX H100 的 8 个计算端口装在 4 个 OSFP 笼子里，每个笼子插一个双口（2 × 400G）光模块；
# QM9700 交换机这一侧同样是每个 OSFP 双口光模块端接 2 条链路。于是每条链路两端各占「半个」光模块，总数就等于链路数
# （`topology.size_fabric` 的参数 `node_ports_per_transceiver`；PCIe 插卡式的单口 ConnectX-7 则是每个端口一个光模块，数量会多出一截）。
# 这些数可以直接和 NVIDIA DGX SuperPOD（H100）参考架构的表 4 对照：4 个 SU、127 台 DGX H100 的计算网络是 32 台叶交换机加 16 台脊交换机。
# 下面是由这份计划直接画出的架构图（计算网络、存储网络、前端网络、带外网络自上而下），以及各平面每节点带宽的对比：

# %% [markdown]
# ### 2.1 为什么四张网要在物理上分开
#
# 四张网分开，不只是「带宽不同」，更是因为它们的**故障域、变更节奏和安全边界**完全不同：
#
# - **故障域**：计算网络上的一个抖动会让整个同步训练作业停下来；如果前端网络和它是同一张网，一次用户拉取 20 GB 镜像、一次日志风暴就可能变成全集群的训练停顿。
#   反过来，计算网络的交换机升级固件、重启时，你仍然需要前端网络登录节点、需要带外网络看串口日志。带外网络之所以用独立的 1 GbE 交换机，
#   正是为了在其他三张网全部失效时还能「兜底」。
# - **变更节奏**：计算网络的配置（路由、PFC/ECN、自适应路由、SM 参数）一旦调好，原则上冻结，只在维护窗口内按基线变更；
#   前端网络则天天在变——新用户、新服务、新防火墙规则。把两类变更放在同一套设备上，等于让每天的小改动去冒整张训练网的风险。
# - **安全边界**：BMC 能开关机、刷固件、挂载虚拟光驱，历来是攻击面最大的接口，业界的通行做法是把带外网络放进单独的管理 VLAN/VRF，
#   只允许跳板机访问，绝不与用户可达的前端网络互通。
# - **流量形态**：计算网络上是少量、周期性、突发的大流（每台主机几十条连接，每条可达 400 Gb/s），前端网络上是海量的小流。
#   阿里云 HPN 的论文（SIGCOMM 2024）专门指出，传统数据中心网络面向的是后者，ECMP 哈希对少量大流会出现「哈希极化」，
#   因此他们给训练单独建了后端网络：每台 8 卡主机配 8 块后端网卡（每块 2 × 200 Gb/s，分别接两台互不堆叠的 ToR 交换机），
#   另有 1 块网卡接前端网络；一个 Pod 用两层、双平面的结构连接约 15K 张 GPU。
#
# Meta 2024 年公布的两套 24,576 张 H100 的集群也是同样的分层：一套计算网络用 RoCE（Arista 7800 加 Wedge400/Minipack2），
# 另一套用 NVIDIA Quantum-2 InfiniBand，端点都是 400 Gb/s；训练数据和检查点则走另外的存储系统（Tectonic 分布式存储，经 FUSE 挂载）。
# Llama 3 论文交代了分工：405B 模型在 RoCE 集群上训练，较小的模型在 InfiniBand 集群上训练；存储侧的 Tectonic 由 7,500 台 SSD 服务器组成，
# 容量 240 PB，持续吞吐 2 TB/s、峰值 7 TB/s，主要用来吸收检查点的突发写入。两种计算网络技术都撑起了同一系列模型的训练，
# 而它们上面的存储、前端、带外网络完全一样——这本身就说明：计算网络是一个可以单独选型、单独验收的平面。
#
# 网络平面分开之后，网络故障并不会消失，只是被限制在一个平面里。Llama 3 论文（Meta, 2024）报告了 16,384 张 H100 上 54 天预训练的中断统计：
# 419 次意外中断里有 35 次（8.4%）归因于网络交换机和线缆。换算成平均间隔：

# %%
# NBVAL_CHECK_OUTPUT
# Llama 3 paper (Dubey et al. 2024, arXiv:2407.21783, Table 5): 54 days, 419 unexpected interruptions,
# 35 of them "Network Switch/Cable" (labutil/data/reliability.toml, the same counts ch01 and ch27 use)
ref = reliability.reference_data()["llama3"]
days, unexpected = ref["snapshot_days"], ref["unexpected_interruptions"]
network = reliability.llama3_counts_by_part()["network"]
print(f"network switch/cable: {network / unexpected:.1%} of unexpected interruptions, "
      f"one every {days * 24 / network:.0f} h; all causes: one every {days * 24 / unexpected:.1f} h")
MarkdownTable(f"平均每 {days * 24 / network:.0f} 小时就有一次网络类中断，所有原因合计每 {days * 24 / unexpected:.1f} 小时一次。")

# %% [markdown]
# 这就是为什么计算网络在设计时就要考虑「坏一个端口会怎样」
# （第 12 章的轨道优化与冗余、第 27 章的可靠性模型），而不是只问「带宽够不够」。

# %%
architecture_x.architecture_figure(plan)

# %%
architecture_x.plane_bandwidth_figure(plan)

# %% [markdown]
# ## 3. 计算网络为什么每张 GPU 一块网卡
#
# 为什么计算网络要「每张 GPU 一块 400G 网卡」，而存储网络每台服务器只要两个口？回到第 2 章的公式：数据并行每一步要 all-reduce 梯度，
# 时间里的带宽项是 $\frac{2(n-1)}{n}\cdot\frac{S}{B}$。跨节点时，NCCL 每条环穿过一台服务器都要走它的一块网卡，
# 所以 $B$ 的上限是**整台服务器的网卡带宽之和**（NCCL 能拿到线速的约 96%），再和节点内 NVLink 环的可达带宽（H100 约 370 GB/s）取小。
# 每台 8 × 400G 时是 $\min(370,\ 8 \times 48) = 370$ GB/s；若整台服务器只有 2 × 200 Gb/s，就只剩 $2 \times 24 = 48$ GB/s，不到前者的 1/7。
# 用课程的集群模型（`labutil.cluster`，第 13 章）直接比较一个 7B 模型（14 GB BF16 梯度）在 128 台服务器上的同步时间（PyTorch DDP 的 25 MiB 分桶）：

# %%
# NBVAL_CHECK_OUTPUT
sync_rows = []
for label, k, gbps in [("8 x 400G compute NICs per node", 8, 400.0), ("2 x 200G shared NICs per node", 2, 200.0)]:
    c = Cluster.system("DGX-H100", n_nodes=128, nics_per_node=k, nic_gbps=gbps)
    t = c.dp_sync_time_s(7e9, bytes_per_grad=2, bucket_bytes=comm.DDP_BUCKET_BYTES)
    print(f"{label:<32}: expected busbw {c.acceptance_busbw_gbs('all_reduce'):5.0f} GB/s -> gradient all-reduce {t:5.2f} s")
    sync_rows.append((c.acceptance_busbw_gbs("all_reduce"), t))
(bw8, t8), (bw2, t2) = sync_rows
MarkdownTable(f"同样的梯度，同步时间从 {t8:.2f} s 变成 {t2:.2f} s，约 {t2 / t8:.0f} 倍；把分桶的延迟项拿掉只看带宽项，"
              f"差距就是 {bw8:.0f} 比 {bw2:.0f} 的 {bw8 / bw2:.1f} 倍（14 GB 的梯度分成 {-(-14e9 // comm.DDP_BUCKET_BYTES):.0f} 个 "
              "25 MiB 的桶，每个桶都要付一次与网卡无关的延迟，所以实际差距小一些）。")

# %% [markdown]
# 这就是种子材料说「LLM 训练集群每张 GPU 至少配 1 个 400G 端口」的原因（第 14 章会做完整的带宽规划：
# 种子 003 的 4 台 8×H800、每台一个 25 GbE 口，GPU 利用率只有 14.3%）。
#
# 计算网络还强调「轨道优化」：每台服务器的第 $i$ 块网卡都接到第 $i$ 个「轨道」的叶交换机上。同一轨道内、同一个叶交换机下的服务器只差一跳，
# 而 NCCL 按轨道建环和树，第 $i$ 号 GPU 只通过第 $i$ 块网卡、和其他服务器的第 $i$ 号 GPU 跨节点通信。DGX SuperPOD 参考架构把 32 台 DGX H100 组成一个可扩展单元（SU）；
# 我们的尺寸模型对一个 SU 给出的交换机数可以与参考架构对照：

# %%
# NBVAL_CHECK_OUTPUT
su = topology.size_fabric(256, nics_per_node=8, gpus_per_node=8, switch_ports=64, link_gbps=400)
print(f"1 SU = 32 DGX H100 = 256 GPUs: {su.leaf_switches} leaf + {su.spine_switches} spine switches, "
      f"{su.per_gpu_bisection_gbps:.0f} Gb/s per GPU across the bisection")

# %% [markdown]
# 8 台叶交换机、4 台脊交换机，与 NVIDIA DGX SuperPOD（H100）参考架构中一个 SU 的计算网络一致（第 12 章的测试逐项核对了参考架构的表格）。
#
# ## 4. 软件栈：从固件到框架
#
# 硬件装好只是开始。一套可用的训练集群软件栈，自下而上大致是：固件与 BIOS → 操作系统驱动（GPU 驱动、RDMA 栈、Fabric Manager、GPUDirect RDMA）
# → 计算运行时（CUDA / ROCm / CANN）→ 集合通信库（NCCL / RCCL / HCCL）→ 容器运行时 → 调度器 → 分布式框架 → 监控。
# 每一层都有版本兼容约束：驱动版本决定能用的 CUDA 版本上限，Fabric Manager 的版本必须与驱动完全一致，NCCL 的版本决定能否用上 NVLink SHARP 等新特性。
# 第 19 章会把这些约束写成从资产清单自动检查的规则。下表对照三套生态：

# %%
show_table([{"layer": l["name"], "role": l["role"], "NVIDIA": l["nvidia"], "AMD": l["amd"], "Huawei Ascend": l["huawei"],
             "chapter": l["chapter"]} for l in architecture.software_stack()])

# %% [markdown]
# 有运维经验的工程师会把这张表再往下写一层：**每一层钉死一个版本号**，写进一份「软件基线」（golden image 加版本清单），
# 所有节点必须与基线完全一致，变更只能整批、在维护窗口里做。原因是版本之间的约束是硬约束，而且出错的方式往往很隐蔽：
#
# - GPU 驱动与 CUDA：驱动决定它能完整支持的最高 CUDA 版本。容器里的 CUDA 比宿主机驱动新时，靠「小版本兼容」还能启动，但部分功能受限；跨了大版本则直接报错。
# - Fabric Manager 与驱动：NVSwitch 系统上两者的版本号必须逐位一致，否则 Fabric Manager 起不来，GPU 之间的 NVLink 不可用，CUDA 初始化失败。
# - NCCL、网卡固件与 OFED/rdma-core：同一个作业里各节点的 NCCL 版本不同，轻则性能不一致，重则建连挂起；网卡固件不一致会让同一条轨道上的端口行为不同。
#
# 1,024 张卡的集群有 128 台服务器，只要有一台在重装时装错了驱动，整个作业就会被它拖住。用课程的兼容表（`labutil.inventory`，第 19 章）检查两种常见的「版本漂移」：

# %%
# NBVAL_CHECK_OUTPUT
from labutil import inventory
for driver, cuda in [("535.104.05", "12.2"), ("535.104.05", "12.4"), ("470.82.01", "12.2")]:
    st = inventory.cuda_driver_status(driver, cuda)
    print(f"driver {driver} + CUDA {cuda}: {st['status']:<12} (CUDA {cuda} wants driver >= {st['min_driver']})")

# %% [markdown]
# 第二行是最常见的情形：有人把容器镜像升级到 CUDA 12.4，宿主机驱动还停在 535 分支，作业能启动，但只是在「小版本兼容」模式下运行；
# 第三行则是某台机器重装时装回了旧的 470 驱动，CUDA 12 程序根本跑不起来。基线加上自动检查，就是把这类问题挡在作业提交之前。
#
# 训练集群与推理集群在软件栈上的差别主要在上两层：训练集群的典型组合是 **Slurm + PyTorch + Megatron-LM/DeepSpeed**，
# 推理集群的典型组合是 **Kubernetes + Triton Inference Server + TensorRT**（或 vLLM）。科研机构的混合负载集群常常两者都要：
# 用 Slurm 的 QOS 配合 cgroup 隔离，或用 K8s 的 Namespace + ResourceQuota 来避免推理任务被训练任务「饿死」（第 21 章）。
#
# ## 5. 动手：改一份集群描述，看架构如何变化
#
# 下面的探索器用同一个 `plan_cluster` 模型：改变 GPU 数、服务器型号、计算网络的收敛比，看看交换机数、层数和每卡带宽如何变化。
# 试着把 GPU 数从 1,024 拖到 8,192——计算网络从两层变成三层；再把收敛比调到 2:1——脊交换机减少，但每卡跨二分带宽减半。

# %%
explorer = architecture_x.architecture_explorer()
explorer

# %% [markdown]
# ## 6. 实操命令：摸清一个现有集群的「骨架」
#
# 接手一个集群时，先用下面这些命令把四层都摸一遍（输出解析见后续章节）：
#
# ```bash
# sinfo -N -o "%N %c %m %G"          # 节点、CPU 核数、内存、GRES（GPU）——软件层看到的计算层
# nvidia-smi -L                       # 本节点的 GPU 列表
# nvidia-smi topo -m                  # GPU、网卡、CPU 之间的连接关系（第 9 章解析）
# ibstat | grep -E "CA '|Rate|State"  # 计算网络网卡的速率与状态（第 11 章解析）
# ip -br addr                         # 前端、存储网络的以太网口
# ipmitool lan print 1                # 带外管理口（BMC）的地址
# lfs df -h                           # 并行文件系统的容量与 OST 状态（第 16 章）
# ```
#
# 例如在一台 DGX H100 上，`ibstat` 会列出 12 个 ConnectX-7 端口：8 个用于计算网络的单口 ConnectX-7（NDR，400 Gb/s），
# 另外 4 个来自 2 块用于存储与带内管理的双口网卡。所以对账时要先按角色筛选（按设备名或 PCIe 位置把 8 个计算端口挑出来），
# 再和计算平面的设计值比较——直接数「Active 的端口数」会把存储口也算进去。`ip -br addr` 会显示前端网络的以太网口。把这些和本章的四个平面一一对上，就画出了这个集群的架构图。
#
# 下面用课程自带的一段 `ibstat` 输出（格式取自 rdma-core 的 infiniband-diags，数值是示意的，出处见 `samples.info`）
# 练习「对账」：把每块网卡的状态和速率读出来，和计算平面的设计值（每块 400 Gb/s、Active、LinkUp）比较。

# %%
# NBVAL_CHECK_OUTPUT
from labutil.parsers import samples, parse_ibstat
cas = parse_ibstat(samples.sample("ibstat_ndr"))
for ca in cas:
    for port in ca.ports:
        print(f"{ca.name} port {port.port}: {port.state:<6} {port.physical_state:<7} {port.rate_gbps:5.0f} Gb/s  "
              f"fw {ca.firmware}  {port.link_layer}")
rates = [p.rate_gbps for ca in cas for p in ca.ports if p.state == "Active"]
print(f"{len(rates)} of {sum(len(ca.ports) for ca in cas)} ports Active, slowest Active rate {min(rates):.0f} Gb/s")

# %% [markdown]
# 这段输出里有两个问题：`mlx5_1` 虽然是 Active，却只训练到 200 Gb/s（常见原因是线缆或光模块坏了一对 lane，第 11 章）；
# `mlx5_2` 的物理状态是 Polling，说明对端没有链路伙伴（线没插好、交换机口被关或光模块故障）。后者让这条轨道直接不可用，
# 前者更隐蔽——作业能跑，只是慢。慢多少？NCCL 把数据平均分给多条环（channel），每条环离开服务器时走其中一块网卡；各条环要一起做完，整个集合通信就要等最慢那块网卡上的环，所以最慢的那条轨道决定整台服务器的跨节点带宽。
# 用集群模型把「一条轨道只有 200 Gb/s」代入 128 台 DGX H100（期望值是 `Cluster.acceptance_busbw_gbs`，第 1、22、23 章用的同一个数）：

# %%
# NBVAL_CHECK_OUTPUT
healthy = Cluster.system("DGX-H100", n_nodes=128)
slow = healthy.acceptance_busbw_gbs("all_reduce", slow_rails=1, slow_rail_gbps=min(rates))
print(f"all rails 400G: expected busbw {healthy.acceptance_busbw_gbs('all_reduce'):.0f} GB/s "
      f"(rail bound {healthy.node_net_gbs:.0f}, capped by the NVLink ring); one rail at {min(rates):.0f}G: {slow:.0f} GB/s")
MarkdownTable(f"一块网卡降速，整个 1,024 卡作业的 all-reduce 期望带宽从 {healthy.acceptance_busbw_gbs('all_reduce'):.0f} GB/s "
              f"掉到 {slow:.0f} GB/s，只剩 {slow / healthy.acceptance_busbw_gbs('all_reduce'):.0%}。")

# %% [markdown]
# 所以接手集群的第一件事，
# 就是对每台服务器跑一遍这样的对账，把结果与设计值逐项比较，而不是等作业变慢了再去查（第 19 章的验收清单、第 23 章的健康检查会把它自动化）。
#
# ## 7. 常见误区
#
# ### 误区一：「集群只有一张网」
#
# 把存储流量放进计算网络，看起来省了一张网。算一笔账：128 台服务器同时写一个 GPT-3 175B 规模的检查点（14 B/参数，约 2.45 TB：
# BF16 权重加 FP32 主权重与两份 Adam 状态，不含梯度，第 17 章；它比第 1、7 章 16 B/参数、约 2.8 TB 的「训练状态」少了那份梯度），
# 假设存储系统能吸收 100 GB/s，写入期间计算网络上的每张 GPU 要让出多少带宽？

# %%
# NBVAL_CHECK_OUTPUT
ckpt_gb = 175e9 * storage.checkpoint_bytes_per_param("adam", "bf16") / 1e9   # 14 B/param -> 2,450 GB
fs_gbs, n_gpus = 100, 1024
write_s = ckpt_gb / fs_gbs
per_gpu_share_gbps = units.gbs_to_gbps(fs_gbs / n_gpus)
print(f"checkpoint {ckpt_gb:,.0f} GB, write {write_s:.0f} s; storage traffic per GPU during the write: {per_gpu_share_gbps:.2f} Gb/s "
      f"({per_gpu_share_gbps / 400:.1%} of a 400G compute NIC), concentrated on the leaves that face the storage servers")

# %% [markdown]
# 平均到每张卡只占一块 400G 网卡的千分之几（上面的输出），看起来微不足道；但这些流量全部汇聚到连接存储服务器的少数几台叶交换机和上行链路上，
# 恰好在 all-reduce 经过这些链路时造成拥塞和尾延迟——而 all-reduce 的速度由最慢的那条链路决定。独立的存储网络把这种干扰从结构上消除了。
#
# ### 误区二：「网络只是几根线」
#
# 按卡数算「配套」，网络的物料数量常常超出预期：

# %%
# NBVAL_CHECK_OUTPUT
for n in (256, 1024, 4096):
    p = architecture.plan_cluster(n)
    f = p.compute_fabric
    print(f"{n:5d} GPUs: {p.total_switches:4d} switches in all planes, compute fabric {f.cables:6d} cables and "
          f"{f.transceivers:6d} transceivers ({f.transceivers / n:.1f} per GPU), {f.tiers} tiers")
MarkdownTable(f"4,096 张卡时计算网络进入 {f.tiers} 层，每张 GPU 对应 {f.transceivers / n:.0f} 个光模块、"
              f"{f.cables / n:.0f} 根线缆——每一个都是一个可能的故障点（第 27 章），也是一笔不小的采购（第 5 章）。")

# %% [markdown]
# 无收敛的两层网络里每张 GPU 有两条链路（网卡→叶、叶→脊），三层时再多一条脊→核心，链路和光模块都从每卡 2 个变成 3 个。
#
# ## 8. 练习
#
# 把答案填进 `answer_k`（数字即可，单位见题目），运行单元格查看判分；卡住时调用 `exercise("ch03.k").hint(1)`。
#
# **练习 1**：1,024 张 H100（DGX H100）的计算网络一共有多少个 400G 网卡端口？

# %%
answer_1 = None
exercise("ch03.1").check(answer_1)

# %% [markdown]
# **练习 2**：一台 DGX H100 的计算网络带宽（8 块网卡合计）是多少 Gb/s？

# %%
answer_2 = None
exercise("ch03.2").check(answer_2)

# %% [markdown]
# **练习 3**：2,048 张 H100，每卡一块 400G 网卡（2,048 个计算网端口），用 64 口交换机搭两层、1:1 无收敛的 leaf-spine。
# 一共需要多少台交换机（叶 + 脊）？先动手推，再用 `topology.size_fabric` 核对。

# %%
answer_3 = None
exercise("ch03.3").check(answer_3)

# %% [markdown]
# **练习 4**：如果把 DGX H100 的 8 张 GPU 的跨节点流量全部压到 2 个 200G 端口上，每张 GPU 分到的带宽是「一卡一块 400G 网卡」的百分之几？（单位：%，按课程约定填百分数）

# %%
answer_4 = None
exercise("ch03.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：`architecture.plan_cluster(2048)`（默认 DGX H100）中，哪个网络平面需要的交换机最多？（填 'compute'、'storage'、'frontend' 或 'oob'，也可以写中文名）

# %%
answer_5 = None  # 'compute' / 'storage' / 'frontend' / 'oob'
exercise("ch03.5").check(answer_5)

# %% [markdown]
# ## 9. 小结
#
# - 集群 = 计算节点 + 网络 + 存储 + 软件四层；AI 集群是协同工作的服务器集合体，不是一台超级计算机。
# - 至少四张网：计算（每 GPU 一块 400G 网卡、轨道优化、无阻塞）、存储、前端、带外；它们的带宽相差三个数量级。
# - 从一份描述可以算出每张网的端口、交换机、线缆和光模块：1,024 张 H100 的计算网络是 48 台交换机、2,048 个光模块（与 SuperPOD 参考架构一致）。
# - 软件栈从固件到框架每一层都有版本约束；NVIDIA / AMD / 昇腾三套生态一一对应。
#
# ## 参考资料
#
# - 种子材料：《AI训练推理集群》课程导入（AI 集群四个层次、典型软件组合、三种部署形态）、《AI算力集群》课程导入（AI 算力集群的定义与三个核心组成部分）。
# - NVIDIA, *DGX SuperPOD: Next Generation Scalable Infrastructure for AI Leadership — Reference Architecture featuring DGX H100*（SU = 32 台 DGX H100；计算、存储、带内、带外四类网络；交换机数量表）。
# - NVIDIA DGX H100 用户指南（8 块单口 ConnectX-7 用于计算网络，2 块双口 ConnectX-7 用于存储与带内管理，BMC 口）；NVIDIA DGX BasePOD 参考架构「Core Components」（DGX H100/H200：4 个 OSFP 端口承载 8 个单口 ConnectX-7，即每个 OSFP 一个双口光模块）；DGX SuperPOD（H100）参考架构「Network Fabrics」表 4（各 SU 数量下计算网络的叶、脊交换机与线缆数）。
# - NVIDIA QM9700 用户手册（64 × 400 Gb/s NDR）。
# - M. Al-Fares, A. Loukissas, A. Vahdat, *A Scalable, Commodity Data Center Network Architecture*, SIGCOMM 2008（Fat-Tree）。
# - NVIDIA GPU Operator、AMD ROCm、华为 CANN 官方文档（软件栈对照表中的组件名称）。
# - Meta Engineering, *Building Meta's GenAI Infrastructure*, 2024-03-12（两套 24,576 张 H100 集群：RoCE 与 Quantum-2 InfiniBand，端点 400 Gb/s；Tectonic 存储）。
# - A. Dubey et al., *The Llama 3 Herd of Models*, arXiv:2407.21783, 2024（16,384 张 H100、54 天、419 次意外中断，其中网络交换机与线缆 35 次，8.4%，表 5；§3.3.1 的 RoCE/InfiniBand 分工与 Tectonic 存储 240 PB、2 TB/s 持续、7 TB/s 峰值）。
# - K. Qian et al., *Alibaba HPN: A Data Center Network for Large Language Model Training*, SIGCOMM 2024（前后端网络分离、双 ToR、双平面、单 Pod 约 15K GPU）。
# - NVIDIA CUDA Toolkit Release Notes，表 2 与表 3（驱动与 CUDA 版本的兼容关系）；NVIDIA Fabric Manager 用户指南（Fabric Manager 与驱动版本必须一致）。
