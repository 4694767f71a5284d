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
# # 第12章 网络拓扑：Fat-Tree、轨道优化与Torus
#
# > 模块三「高性能网络」的第 2 章。前置：第 11 章（RDMA、InfiniBand 与 RoCEv2 的基本概念）、第 9 章（节点内 NVLink/PCIe 与网卡布局）。
# > 本章的交换机、线缆、光模块数量会在第 5 章（TCO）和第 30 章（千卡集群端到端设计）中直接复用；对分带宽会在第 14 章变成「每步梯度同步要多久」。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 用 k-ary Fat-Tree 的公式（$k^3/4$ 台主机、$5k^2/4$ 台交换机）和两层 leaf-spine 的上限（$r^2/2$）判断一个规模需要几层网络；
# - 给定 GPU 数、每节点网卡数、交换机端口数和收敛比，算出 leaf / spine / core 交换机、线缆、光模块的数量，并与 NVIDIA DGX SuperPOD 参考架构对账；
# - 解释**轨道优化**（rail-optimized）组网为什么让同号 GPU 之间的流量只过一跳交换机，以及它与普通 ToR 接法的区别；
# - 计算收敛比（oversubscription）对**对分带宽**（bisection bandwidth）和每卡跨网带宽的影响；
# - 比较 Torus、Dragonfly 与 Fat-Tree 的直径、对分带宽与扩展方式，并用 `ibswitches` / `iblinkinfo` 核对现场拓扑、用 `ibdiagnet` 与 `mlxlink` 找出误码和降速的链路。

# %%
from labutil.notebook import setup, show_table
from labutil import hardware, links, topology
from labutil.parsers import samples, parse_mlxlink, parse_ibdiagnet
from labutil.explore import topology as topology_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 为什么拓扑决定了训练速度
#
# 第 11 章讲的是「一根链路有多快」：NDR InfiniBand 每端口 400 Gbit/s，RoCEv2 在无损以太网上也能做到同一量级。
# 但一个千卡集群有上千根这样的链路，它们怎么连在一起，决定了**所有 GPU 同时通信时**每张卡还能分到多少带宽。
# 数据并行训练的 All-Reduce 每一步都要让每张卡把梯度发出去、再收回来；张量并行和专家并行（All-to-All）更是随机地在任意两张卡之间交换数据。
# 如果网络中间某一层的带宽比边缘少一半，所有流量都会在那一层排队——单根链路再快也没有用。
#
# 衡量这一点的指标是**对分带宽**（bisection bandwidth）：把所有端点任意切成数量相等的两半，两半之间能同时通过的最小总带宽。
# 一个「无阻塞」（non-blocking，1:1）的网络，对分带宽等于端点数的一半乘以单端口速率：
#
# $$B_{\text{bisection}} = \frac{N_{\text{NIC}}}{2}\cdot b_{\text{link}}\cdot \min\!\left(1, \frac{u}{d}\right)$$
#
# 其中 $d$ 与 $u$ 是 leaf 交换机向下（接网卡）和向上（接 spine）的端口数，$d:u$ 就是**收敛比**。
# 我带过的集群里，几乎所有「扩到几百卡后扩展效率突然掉下去」的案例，追到底都是这两个数字中的某一个：要么收敛比没算清楚，要么布线错了轨道。
#
# ## 2. k-ary Fat-Tree：用同一种小交换机搭出无阻塞的大网络
#
# Fat-Tree 的思想来自 Leiserson（1985），而今天数据中心里用的形式来自 Al-Fares、Loukissas 与 Vahdat 在 SIGCOMM 2008 的论文：
# 只用一种 $k$ 口的普通交换机，搭出一个三层（edge / aggregation / core）的网络，任意一半主机都能以线速与另一半通信。
# 它的结构可以一口气算完：
#
# | 部件 | 数量 | 说明 |
# |---|---|---|
# | pod | $k$ | 每个 pod 是一个两层小网络 |
# | edge（leaf）交换机 | $k \cdot k/2$ | 每台 $k/2$ 口向下接主机、$k/2$ 口向上 |
# | aggregation（spine）交换机 | $k \cdot k/2$ | 每台 $k/2$ 口向下、$k/2$ 口向上 |
# | core 交换机 | $(k/2)^2$ | 每台连接每个 pod 各一次 |
# | 主机 | $k^3/4$ | 每台 edge 接 $k/2$ 台 |
# | 交换机总数 | $5k^2/4$ | |
#
# 论文里的例子：48 口交换机能搭出 27,648 台主机的无阻塞网络。换成今天 AI 集群最常见的 64 口 NDR 交换机（NVIDIA QM9700），就是 65,536 个网卡端口。
# 下面直接用模型算几个 $k$：

# %%
# NBVAL_CHECK_OUTPUT
for k in (4, 48, 64):
    ft = topology.fat_tree(k)
    print(f"k={k:3d}: hosts {ft.hosts:7,d}  edge {ft.edge_switches:5,d}  agg {ft.agg_switches:5,d}  "
          f"core {ft.core_switches:5,d}  switches {ft.total_switches:5,d}  bisection links {ft.bisection_links:6,d}")

# %% [markdown]
# 如果规模没有那么大，只用两层就够了：每台 leaf 一半端口向下、一半向上，spine 的每个端口接一台 leaf，所以最多 $r$ 台 leaf，
# 两层最多接 $r\cdot r/2 = r^2/2$ 个网卡端口。64 口交换机的两层上限是 2,048，三层上限是 $r^3/4 = 65{,}536$。
# 这两个数字就是设计时的第一道判断题：**1,000 卡的 H100 集群（每卡一块 400G 网卡）两层够用；4,000 卡必须上三层**。
# 下图把常见交换机端口数下的上限画在一起（对数坐标）：

# %%
topology_x.fat_tree_capacity_figure()

# %% [markdown]
# ## 3. 轨道优化（rail-optimized）：为什么 NVIDIA 不按「一台服务器接一台交换机」布线
#
# 一台 DGX H100 有 8 张 H100，每张配一块 ConnectX-7 400G 网卡（目录中 `DGX-H100` 的 `compute_nics = 8`）。
# 传统的机架顶交换机（ToR）接法会把一台服务器的 8 根线都插到同一台 leaf 上；而**轨道优化**的接法是：
# 所有服务器的第 0 号网卡接到「轨道 0」的 leaf，第 1 号网卡接到「轨道 1」的 leaf……一共 8 条轨道。
#
# 好处来自集合通信的流量模式。NCCL 在多机 All-Reduce 时，节点内先用 NVLink 做归约，节点间的环或树基本只在**同号 GPU** 之间传数据
# （GPU0 对 GPU0，GPU1 对 GPU1）。轨道优化之后，这些流量在同一台 leaf 里就转发完了，只过一跳交换机，不占用 spine；
# 不同轨道之间的流量可以先经节点内 NVLink 换到对应的 GPU 上（NCCL 的 PXN 机制）再出网。
# 在 DGX SuperPOD 中，一条轨道的一台 leaf 有 32 个下行口，正好接一个**可扩展单元**（Scalable Unit, SU）的 32 台 DGX H100：
# 一个 SU = 32 节点 = 256 GPU = 8 台 leaf。
#
# 下图用一个可以看清每根线的小例子（4 台服务器、每台 4 块网卡、8 口交换机）对比两种接法：交换机数量完全一样，
# 但左边同号网卡之间一跳可达 4 台节点，右边只有本机。

# %%
topology_x.rail_vs_plain_figure()

# %% [markdown]
# ## 4. 给定 GPU 数，算出一张真实的计算网络
#
# `labutil.topology.size_fabric` 按真实工程的做法逐层搭网络（规则写在它的 docstring 里）：
#
# 1. 收敛比 $o$ 决定 leaf 的 $r$ 个端口**最多**能给下行 $d_{\max} = \lfloor r\cdot o/(o+1)\rfloor$ 个；模型把 $d$ 从 $d_{\max}$ 一直试到 $r/2$，
#    每种切分（$d$ 个下行、$u = r-d$ 个上行）都按下面 2–4 条搭出整张网络，留下**交换机总数最少**的那个（并列时 spine 少、下行多者优先）。
#    所以实际收敛比可能比要求的低：要求 4:1 时，64 口交换机的 $d_{\max} = 51$（51:13），但 256 或 1,024 张卡时 50:14（3.57:1）恰好少用交换机，
#    模型就选 50:14——每卡的跨网带宽反而更高（下面的输出）；
# 2. 轨道优化时 leaf 数 $= \text{轨道数}\times\lceil \text{节点数}/d\rceil$；
# 3. 两层时 spine 数取 $u$ 的、不小于 $\lceil L\cdot u/r\rceil$ 的最小因数，让每台 leaf 到每台 spine 的并行链路数相同（ECMP 均衡）；
# 4. 超过两层上限就按 pod 搭三层：每个 pod $r/2$ 台 leaf，spine 一半向下一半向上，core 按「平面」分组；
# 5. 线缆 = 网卡-leaf + leaf-spine + spine-core 链路数；光模块假设全部光互连：交换机侧一个 OSFP 笼子插一个双口 2×400G 模块（QM9700 用户手册），
#    节点侧 DGX H100 也是双口 OSFP（8 个网口走 4 个笼子），所以 1 个模块端接 2 条链路。
#
# 规则 1 的搜索在要求 4:1 时的结果（64 口交换机、400G 网卡）：

# %%
# NBVAL_CHECK_OUTPUT
for gpus in (256, 1024, 2048):
    f = topology.size_fabric(gpus, oversubscription=4.0)
    print(f"{gpus:5d} GPUs, asked 4:1 (at most 51:13): leaf {f.down_ports_per_leaf}:{f.up_ports_per_leaf} = "
          f"{f.actual_oversubscription:.2f}:1, {f.total_switches} switches, {f.per_gpu_bisection_gbps:.0f} Gbit/s per GPU across")

# %% [markdown]
# 先用它和 NVIDIA 公开的参考架构对账。DGX SuperPOD H100 参考架构（RA-11333-001）表 4「Compute fabric component count」给出 1–4 个 SU 的数字
# （每个 SU 有一个节点位置留给 UFM 管理设备，所以是 31、63、95、127 台节点）；DGX SuperPOD B200 参考架构给出了 2–64 个 SU 的更大配置，
# 16 个 SU（4,096 GPU）开始出现 core 层：

# %%
# NBVAL_CHECK_OUTPUT
qm = hardware.switch("QM9700")
ra = [("H100 RA 1 SU", 31 * 8, 8, 4, 0), ("H100 RA 2 SU", 63 * 8, 16, 8, 0), ("H100 RA 3 SU", 95 * 8, 24, 16, 0),
      ("H100 RA 4 SU", 127 * 8, 32, 16, 0), ("B200 RA 8 SU", 2048, 64, 32, 0), ("B200 RA 16 SU", 4096, 128, 128, 64),
      ("B200 RA 64 SU", 16384, 512, 512, 256)]
print(f"{'config':14s} {'GPUs':>6s} {'tiers':>5s}  leaf/spine/core model   RA        match")
for name, gpus, leaf, spine, core in ra:
    f = topology.size_fabric(gpus, switch_ports=qm.ports, link_gbps=qm.port_gbps)
    got = (f.leaf_switches, f.spine_switches, f.core_switches)
    print(f"{name:14s} {gpus:6,d} {f.tiers:5d}  {got[0]:4d}/{got[1]:4d}/{got[2]:4d}   {leaf:4d}/{spine:4d}/{core:4d}  "
          f"{'yes' if got == (leaf, spine, core) else 'NO'}")

# %% [markdown]
# 注意 3 个 SU 的那一行：24 台 leaf 一共 768 个上行口，按端口数算 12 台 spine 就够了，参考架构却用了 16 台。
# 原因是 12 不能整除每台 leaf 的 32 个上行口——有的 leaf 到某台 spine 会多一根线，ECMP 哈希就不均衡了；16 台时每台 leaf 到每台 spine 恰好 2 根线。
# 这就是第 3 条规则「取 $u$ 的因数」的来历，也是「按公式除一下」与「真实设计」的差别。
#
# 接下来看一个千卡级的完整清单：1,024 张 H100（128 台 DGX H100），400G NDR，1:1 无收敛，轨道优化。

# %%
# NBVAL_CHECK_OUTPUT
f1k = topology.size_fabric(1024, nics_per_node=8, gpus_per_node=8, switch_ports=64, link_gbps=400)
print(f"nodes {f1k.n_nodes}, NIC ports {f1k.n_nics}, tiers {f1k.tiers}, leaf {f1k.leaf_switches}, "
      f"spine {f1k.spine_switches}, core {f1k.core_switches}")
print(f"cables: node-leaf {f1k.node_leaf_cables}, leaf-spine {f1k.leaf_spine_cables}, total {f1k.cables}")
print(f"transceivers {f1k.transceivers}, optics power {topology.fabric_optics_kw(f1k, qm.transceiver_power_w):.1f} kW")
print(f"bisection {f1k.bisection_gbps / 1e3:.1f} Tbit/s, per GPU {f1k.per_gpu_bisection_gbps:.0f} Gbit/s")

# %% [markdown]
# 48 台交换机、2,048 根线、2,048 个双口光模块——线缆和光模块都是 GPU 数的两倍（每张卡一条到 leaf、一条从 leaf 到 spine），这也是为什么大集群的网络成本常常占到总投资的一成以上，
# 光模块本身（每个 17 W 级）加起来也有几十千瓦（第 10 章会把它算进功耗）。
#
# ## 5. 交互：自己搭一张网
#
# 拖动 GPU 数、换交换机型号（目录里的 QM9700 64 口 400G、SN5600 64 个 800G 口拆成 128 个 400G 逻辑口、SN4700 32 口）、改网卡速率和收敛比、打开或关闭轨道优化。
# 把收敛比拖到 4:1，看标题里 leaf 的 down:up：它是「交换机最少」的那个切分，不一定是 $d_{\max}$。
# 左图是拓扑的一个「窗口」（前 8 台节点和它们连到的交换机，标签上写着总数），右图是各类部件的数量（对数坐标）。
# 试试：把 GPU 从 2,048 拖到 4,096，层数从 2 变 3，交换机数量翻了不止一倍；把收敛比从 1:1 改到 3:1，交换机少了，每卡跨网带宽只剩三分之一。

# %%
topology_x.fabric_sizing_explorer()

# %% [markdown]
# 规模与部件数量的关系画成曲线（DGX H100 节点、QM9700、1:1 与 2:1 两种收敛比），虚线是层数变化的位置：

# %%
topology_x.fabric_scaling_figure()

# %% [markdown]
# ## 6. 收敛比：省下的是交换机，付出的是对分带宽
#
# 很多以太网数据中心为了省钱把 leaf 做成 3:1 收敛：48 口向下、16 口向上。对 Web 服务这很合理——大部分流量是南北向的，很少所有服务器同时互相打满。
# 但大模型训练的流量恰恰是**所有 GPU 同时**做集合通信。收敛比 $o$ 的网络里，跨 leaf 的流量每卡最多只有 $b_{\text{link}}/o$：

# %%
# NBVAL_CHECK_OUTPUT
for o in (1.0, 2.0, 3.0):
    f = topology.size_fabric(4096, oversubscription=o)
    print(f"{o:.0f}:1  leaf {f.down_ports_per_leaf}:{f.up_ports_per_leaf}  switches {f.total_switches:4d}  "
          f"transceivers {f.transceivers:6,d}  per-GPU bisection {f.per_gpu_bisection_gbps:6.1f} Gbit/s")

# %% [markdown]
# 轨道优化能部分缓解收敛的代价：同一 SU 内同号 GPU 的流量不上 spine，所以如果并行策略把数据并行组放在同一个 SU 里，spine 的收敛就不痛。
# 但 MoE 的 All-to-All 和跨 SU 的数据并行都躲不开 spine。训练集群的经验是：**计算网络用 1:1**，存储网络和管理网络才考虑收敛。
#
# ## 7. Torus 与 Dragonfly：另外两种扩展思路
#
# Fat-Tree 靠「更多的交换机」换无阻塞；**Torus**（环面）则让每个节点只连最近的邻居：$k$-ary $n$-cube 有 $k^n$ 个节点，每维首尾回绕成环。
# 它的布线短、没有大交换机，Google TPU（3D torus）和不少 HPC 系统都用它，代价是直径随 $k$ 增长（$n\lfloor k/2\rfloor$ 跳），
# 对分带宽只有 $2k^{n-1}$ 条链路——按对分面一侧的 $k^n/2$ 个端点平均，每个端点分到的对分链路数是 $4/k$（无阻塞 fat tree 为 1），规模越大越少。适合最近邻通信（模板计算、流水线并行），不适合随机的 All-to-All。
# **Dragonfly**（Kim 等，ISCA 2008）把路由器分组，组内全连接、组间每台路由器出 $h$ 条全局链路，最多 $ah+1$ 组，用很少的长距离光缆连很多端点，
# 是 Cray Slingshot 等超算的选择。

# %%
# NBVAL_CHECK_OUTPUT
t = topology.torus((8, 8, 8))
print(f"8x8x8 torus: nodes {t.nodes}, links {t.links}, degree {t.degree}, diameter {t.diameter}, "
      f"bisection {t.bisection} links, mean hops {t.avg_hops:.2f}")
ft16 = topology.fat_tree(16)
print(f"k=16 fat tree: hosts {ft16.hosts}, switches {ft16.total_switches}, bisection {ft16.bisection_links} links")
d = topology.dragonfly(4, 8, 4)
print(f"dragonfly p=4 a=8 h=4: groups {d.groups}, terminals {d.terminals}, router radix {d.router_radix}, "
      f"global links {d.global_links}")

# %% [markdown]
# 对同样 512 个端点，8×8×8 torus 的对分面只有 128 条链路，而任何无阻塞 fat tree 都是 512/2 = 256 条（$k=16$ 的 fat tree 装满时 1,024 台主机、512 条）。
#
# 比较路径长度时，两边必须用同一把尺子。这里统一数「从一个端点到另一个端点经过的链路数」，fat tree 那一侧把主机到 edge 的两段链路也算上
# （同一台 edge 下 2 条、同一个 pod 内 4 条、跨 pod 经过 core 6 条），平均值也都对「包括自己在内的全部目的端点」求平均：

# %%
# NBVAL_CHECK_OUTPUT
ft_paths = topology.fat_tree_path_links(16)
print(f"8x8x8 torus:         mean {t.avg_hops:.2f} links, max {t.diameter} links (endpoint to endpoint)")
print(f"k=16 fat tree (1,024 hosts): mean {ft_paths['mean_links']:.2f} links, max {ft_paths['max_links']} links")
for k in (16, 32):
    tk = topology.torus((k, k, k))
    print(f"{k}x{k}x{k} torus ({tk.nodes:,} nodes): mean {tk.avg_hops:.1f}, max {tk.diameter} links")

# %% [markdown]
# 在 512 个端点这个规模，两者的**平均**路径几乎一样长（6.0 对 5.86 条链路），差别在最坏情况：torus 的直径是 12 条，fat tree 永远不超过 6 条；
# 而且 torus 的直径随边长线性增长（32×32×32 时 48 条），fat tree 只要还是三层就一直是 6。真正拉开差距的是对分带宽：torus 对分面一侧每个端点分到的对分链路是 $4/k$（无阻塞 fat tree 为 1）。
# 下图把这两个差距随规模画出来（左图两边都按端点到端点的链路数计）：

# %%
topology_x.torus_vs_fat_tree_figure()

# %% [markdown]
# ## 8. 实操命令：核对现场拓扑
#
# 设计图纸和现场布线经常不一样：插错轨道、某根线降速到 HDR、某台 spine 没上电。InfiniBand 网络用 `infiniband-diags` 里的工具核对：
#
# ```bash
# ibswitches                 # 列出子网里所有交换机：GUID、端口数、描述、LID
# iblinkinfo --switches-only # 每台交换机每个端口：宽度、速率、状态、对端
# ibnetdiscover > topo.txt   # 完整拓扑（节点、交换机、每条链路），可与设计清单逐条比对
# iblinkinfo -l | grep -v "106.25 Gbps" | grep LinkUp   # 找出没跑到 NDR 单通道速率的端口
# ```
#
# 下面的样例是**示意性**的（按 `ibswitches` / `iblinkinfo` 的真实输出格式构造，GUID 与主机名是虚构的）：
# `ibswitches` 打印的端口数包含管理端口 0，所以 64 口的 QM9700 显示为 65；`iblinkinfo` 的 `4X 106.25 Gbps` 是 4 条通道、每条 106.25 Gbit/s 信号速率（NDR），
# 而 `4X 53.125 Gbps` 是 4 条通道、每条 53.125 Gbit/s——那是 **HDR** 的单通道速率，整条链路只剩 200 Gbit/s，这是验收时必须抓出来的问题。
# 注意它不是 NDR200：NDR200 是只用 2 条通道的 NDR（`2X 106.25 Gbps`，常见于一分二线缆接 200G 网卡），宽度和单通道速率两个字段要一起看。

# %%
print(samples.info("ibswitches_ndr")["source"][:120] + " ...")
IBSWITCHES_SAMPLE, IBLINKINFO_SAMPLE = samples.sample("ibswitches_ndr"), samples.sample("iblinkinfo_ndr")
print(IBLINKINFO_SAMPLE)

# %%
# NBVAL_CHECK_OUTPUT
sw = topology.parse_ibswitches(IBSWITCHES_SAMPLE)
print("switches:", len(sw), "physical ports each:", sorted({s["physical_ports"] for s in sw}))
summary = topology.summarize_links(topology.parse_iblinkinfo(IBLINKINFO_SAMPLE))
print(f"switch-switch links {summary['switch_links']}, host links {summary['host_links']}, "
      f"top speed {summary['max_link_gbps']:.0f} Gbit/s (4 lanes signalling)")
print("degraded ports:", ", ".join(summary["degraded_ports"]))
lane_gen = {links.ib_link(g)["signal_gbps"]: g for g in links.ib_generations()}
for lk in topology.parse_iblinkinfo(IBLINKINFO_SAMPLE):
    if lk["device"] == "leaf-r1-su1" or lk["lane_gbps"] != 106.25:
        gen = lane_gen.get(lk["lane_gbps"], "?")
        print(f"  {lk['device']} port {lk['port']:2d} -> {lk['peer']}: {lk['width']}X x {lk['lane_gbps']} Gbps per lane = {gen} "
              f"{lk['width']}X, data rate {links.ib_port_gbps(gen, lk['width']):.0f} Gbit/s")

# %% [markdown]
# 解析器在 `labutil.topology`：输出格式不对时它抛出一个明确的 `ParseError`，而不是在半路崩溃。
# 真实集群里你会把 `iblinkinfo` 的结果与 `size_fabric` 的设计数对账：leaf-spine 链路数是否等于设计值、有没有端口降速或 Down、
# 每台 leaf 的下行口是否都来自同一轨道（看对端主机名里的 `mlx5_N`）。第 23 章会把这些检查写成规则引擎。
#
# ### 8.1 验收时先跑的两个工具：`ibdiagnet` 与 `mlxlink`
#
# `ibswitches` / `iblinkinfo` 回答「接成了什么样」；网络工程师验收一张 IB 网络时先跑的是另外两个工具，它们回答「每根线好不好」：
#
# ```bash
# # 全网体检：发现所有节点与链路、检查 LID/SM/速率宽度、清零后等 30 s 读一遍端口计数器、收集每个端口的物理层 BER
# ibdiagnet --pm_pause_time 30 --get_phy_info            # 结果在 /var/tmp/ibdiagnet2/（ibdiagnet2.log、.db_csv、.net_dump）
# # 单个端口的物理层：状态、协商的速率/宽度、FEC 模式、光模块信息（-m）、计数器与 BER（-c）、眼图（-e）
# mlxlink -d mlx5_0 -m -c -e
# mlxlink -d lid-0x45 -p 17 -c                             # 交换机端口：用 LID + 端口号
# mlxlink -d mlx5_0 -pc                                    # 清零计数器（之后隔一段时间再读，算这段时间的 BER）
# ```
#
# `ibdiagnet` 的输出很长，真正要读的是最后的 `Summary` 表和带 `-W-`/`-E-` 前缀的那些行。下面是一份**示意**输出（格式按 ibdiagnet2 的真实输出构造，
# 名字和数字是虚构的）：一个端口在扫描期间符号错误在涨，一条 leaf-spine 链路两端都支持 NDR 却只协商到 HDR。

# %%
# NBVAL_CHECK_OUTPUT
diag = parse_ibdiagnet(samples.sample("ibdiagnet_ndr_fabric"))
print(f"{diag.nodes} nodes ({diag.switches} switches, {diag.cas} CAs); {diag.total_warnings} warnings, {diag.total_errors} errors")
for st in diag.stages:
    if st.warnings or st.errors:
        print(f"  stage {st.name!r}: {st.warnings} warnings, {st.errors} errors")
for stage, text in diag.findings("W"):
    print(f"  [{stage}] {text[:110]}")

# %% [markdown]
# `ibdiagnet` 告诉你**哪根线**有问题；`mlxlink` 告诉你**问题有多大**。它的 `Physical Counters and BER Info` 一段有三类数：
#
# - **Raw Physical BER**（FEC 纠错**前**的误码率）：PAM4 的 NDR/400G 链路本来就靠 RS-FEC 工作，raw BER 不为 0 是常态，要看的是它在不在涨、离 FEC 的能力还有多远；
# - **Effective Physical Errors / BER**（FEC 纠错**后**还剩的错误）：必须是 0。一旦不为 0，就有包被丢弃、被 IB 链路层重传，NCCL 表现为偶发变慢；
# - **Link Down Counter / Link Error Recovery Counter**：链路断过、或为了恢复重新训练过几次——「闪断」的证据。
#
# 下面是一份真实的 `mlxlink -c`（一条健康的 400G 链路；出处在第一行打印）。注意 `15E-255` 是 mlxlink 表示「一个错误也没看到」的写法：

# %%
# NBVAL_CHECK_OUTPUT
print(samples.info("mlxlink_counters_400g_public")["source"][:150] + " ...")
mx = parse_mlxlink(samples.sample("mlxlink_counters_400g_public"))
minutes = mx.minutes_since_clear
bits = 400e9 * minutes * 60          # what a 400G port carries since the last clear, both counted per direction
print(f"since last clear: {minutes / 60 / 24:.0f} days; raw errors per lane {', '.join(f'{e:,d}' for e in mx.raw_errors_per_lane)}")
print(f"raw BER printed {mx.raw_ber:.0e}; from the counters: {sum(mx.raw_errors_per_lane):,d} errors / {bits:.2e} bits = "
      f"{sum(mx.raw_errors_per_lane) / bits:.1e}")
v = links.diagnose_link(mx)
print(f"effective errors {mx.effective_errors}, effective BER {v['effective_ber']:.0f} (15E-255 means none); "
      f"link down {mx.link_down}, recoveries {mx.link_error_recovery}")
print(f"verdict: {v['verdict']} - {'; '.join(v['reasons'])}")

# %% [markdown]
# 将近两百亿个 raw 错误听起来吓人，但除以这段时间里传过的比特数，raw BER 只有约 2×10⁻⁹，FEC 把它们全部纠正了（effective 为 0），链路健康。
# 这也说明了为什么**不能只看计数器的绝对值**：计数器是累计的，必须除以时间和速率换成 BER，或者清零后隔一段时间再读。
#
# `labutil.links.diagnose_link` 把验收规则写成代码，从最严重的往下判：不是 Active/LinkUp → **down**；宽度或速率低于应有值（例如 4x 降成 2x、NDR 降成 HDR）
# → **degraded**（能跑，但慢，和上面 `iblinkinfo` 里那条 53.125 Gbps 的链路一样）；FEC 之后还有错误（effective BER 超过 ibdiagnet 默认门限 $10^{-12}$）或出现过
# 断链/恢复 → **degraded**；raw BER 到了 $10^{-6}$ 量级（NVIDIA 在 Quantum 交换机固件说明里称之为「unclean RAW BER」）→ **watch**，FEC 还兜得住，但余量在被吃掉，
# 下个维护窗口重插或换线。下面把同一个端口分别改成三种坏情况（**示意**：在真实计数器上改动，不是实测）：

# %%
# NBVAL_CHECK_OUTPUT
bad = {
    "flapping link": samples.sample("mlxlink_counters_400g_public").replace("Link Down Counter                  : 0",
                                                                           "Link Down Counter                  : 3"),
    "FEC overwhelmed": samples.sample("mlxlink_counters_400g_public").replace("Effective Physical Errors          : 0",
                                                                             "Effective Physical Errors          : 42"),
    "margin shrinking": samples.sample("mlxlink_counters_400g_public").replace("Raw Physical BER                   : 2E-9",
                                                                              "Raw Physical BER                   : 3E-6"),
}
for label, text in bad.items():
    v = links.diagnose_link(parse_mlxlink(text))
    print(f"{label:17s}: {v['verdict']:8s} {v['reasons'][0]}")

# %% [markdown]
# ## 9. 常见误区
#
# **误区一：「交换机端口速率够快，网络就够快」。** 端口速率只决定一根链路；决定训练速度的是所有 GPU 同时通信时的对分带宽。
# 同样 4,096 张卡、同样 400G 网卡，3:1 收敛的网络每卡跨网只剩约 133 Gbit/s：

# %%
# NBVAL_CHECK_OUTPUT
a = topology.size_fabric(4096, oversubscription=1.0)
b = topology.size_fabric(4096, oversubscription=3.0)
print(f"1:1 bisection {a.bisection_gbps / 1e3:.1f} Tbit/s vs 3:1 {b.bisection_gbps / 1e3:.1f} Tbit/s "
      f"({b.bisection_gbps / a.bisection_gbps:.0%}); switches saved {a.total_switches - b.total_switches}")

# %% [markdown]
# **误区二：「千卡集群就是把交换机数量按 GPU 数线性放大」。** 层数是台阶式的：两层上限 2,048 个端口，一旦超过就得上三层，
# 每个网卡端口背后的交换机和光模块都跳一级。2,048 卡到 4,096 卡，GPU 翻倍，交换机却是：

# %%
# NBVAL_CHECK_OUTPUT
f2k, f4k = topology.size_fabric(2048), topology.size_fabric(4096)
print(f"2048 GPUs: {f2k.tiers} tiers, {f2k.total_switches} switches, {f2k.transceivers} transceivers")
print(f"4096 GPUs: {f4k.tiers} tiers, {f4k.total_switches} switches, {f4k.transceivers} transceivers "
      f"(x{f4k.total_switches / f2k.total_switches:.2f} switches, x{f4k.transceivers / f2k.transceivers:.2f} optics)")

# %% [markdown]
# 所以规划时要先看目标规模落在哪个台阶上；如果三年内要扩到 4,000 卡以上，第一期就应按三层预留 spine 上行口和机房走线。
# 台阶的位置由交换机端口数 $r$ 决定（两层上限 $r^2/2$）：换成 128 口的 51.2T 交换机，两层的上限从 2,048 升到 8,192，同样 4,096 卡就回到两层。
#
# **误区三：「轨道优化只是布线美观，交换机数量一样，没区别」。** 交换机数量确实一样，但同号 GPU 一跳可达的节点数差了 8 倍——
# 这决定了 NCCL 的环内流量是否占用 spine：

# %%
# NBVAL_CHECK_OUTPUT
r, p = topology.size_fabric(1024, rail_optimized=True), topology.size_fabric(1024, rail_optimized=False)
print(f"rail-optimized: {r.total_switches} switches, same-rail peers one hop: {r.rail_peers_one_hop} nodes")
print(f"plain ToR-style: {p.total_switches} switches, same-rail peers one hop: {p.rail_peers_one_hop} nodes")

# %% [markdown]
# 同样 48 台交换机，轨道优化时一个 SU 里 32 台节点的同号 GPU 都在同一台 leaf 下，一跳可达；普通接法下一台 leaf 只接 4 台节点（32 个下行口 ÷ 每台 8 根线）。换句话说，
# NCCL 环上每跨出一台 leaf 的那一跳都要经过 spine，而 8 条环（每条轨道一条）会在同样的位置一起挤上 spine，spine 的负载和排队都大得多，哈希冲突的机会也多得多。这个差别在验收跑 nccl-tests 时未必看得出来
# （空载网络里 spine 有富余），却会在多个作业同时运行、或者某台 spine 故障之后突然暴露。布线时最常见的错误正是把某台服务器的网卡插到了别的轨道上：
# 用上面的 `iblinkinfo` 解析结果检查每台 leaf 下行口对端的 `mlx5_N` 是否一致，几分钟就能查完一整个 SU。

# %% [markdown]
# ### 9.1 真实案例：阿里云 HPN 怎样用两层网络接下 15K 张 GPU
#
# 阿里云在 SIGCOMM 2024 公开了它的大模型训练网络 HPN，几个设计决定正好是本章公式的应用。第一，LLM 训练每台主机只有少数几条、每条高达 400 Gbit/s 的
# 周期性「大象流」，ECMP 按五元组哈希时极易把几条大流撞到同一条上行链路（哈希极化），所以他们想尽量减少路径选择的层数。第二，他们用 51.2 Tbit/s 的
# 单芯片交换机，并让每块网卡的两个 200G 端口分别接到两个**平面**（dual-plane）、两台互不堆叠的 ToR 上（dual-ToR），于是单台 ToR 故障不会让整台主机掉线。
# 结果是一个 pod 用两层就接下了约 15K 张 GPU（每个 segment 1,024 张、共 15 个），而按常规做法这个规模需要三层 Clos；他们报告上线后训练吞吐提升约 15%。
# 用本章的模型核对「两层接 15K」为什么成立——关键是把 400G 端口当成两个 200G 端口用，端口数 $r$ 翻倍，两层上限 $r^2/2$ 翻四倍：

# %%
# NBVAL_CHECK_OUTPUT
hpn_gpus = 15_360                                                  # 15 segments x 1,024 GPUs (Alibaba HPN, SIGCOMM 2024)
three = topology.size_fabric(hpn_gpus, switch_ports=128, link_gbps=400)
plane = topology.size_fabric(hpn_gpus, switch_ports=256, link_gbps=200)   # one plane: 51.2T switch as 256 x 200G
print(f"one 400G port per GPU, 128 x 400G switches: {three.tiers} tiers, {three.total_switches} switches, "
      f"{three.per_gpu_bisection_gbps:.0f} Gbit/s per GPU")
print(f"two 200G planes, 256 x 200G switches:      {plane.tiers} tiers, {2 * plane.total_switches} switches "
      f"({plane.total_switches} per plane), {2 * plane.per_gpu_bisection_gbps:.0f} Gbit/s per GPU")
print(f"two-tier limit: 128-port {128 ** 2 // 2:,} ports; 256-port {256 ** 2 // 2:,} ports per plane")

# %% [markdown]
# 同样每卡 400 Gbit/s，双平面方案只要两层、368 台交换机，常规的单端口 400G 方案要三层、624 台。代价也很清楚：线缆数变多（每卡两条 200G），
# 每个平面内单条流最多只有 200 Gbit/s，要靠 NCCL 把流量均匀地分到两个端口上。这说明拓扑设计的自由度远不止「几层、几比几」，端口怎么切、平面怎么分，
# 都可以用同一套公式先算清楚再去谈采购。
#
# ## 10. 练习
#
# 用上面的模型计算，把答案填进变量再运行单元格；卡住时调用 `exercise("ch12.k").hint(1)` 看提示。
# 练习 1 和练习 4 只需纸笔（第 2、7 节的公式）；练习 5 是判断题，填引号里的选项。
#
# **练习 1（纸笔题）**：用 32 口交换机搭的 k-ary fat tree（$k = 32$）最多能接多少台主机（台）？

# %%
answer_1 = None
exercise("ch12.1").check(answer_1)

# %% [markdown]
# **练习 2**：2,048 张 H100（每卡一块 400G 网卡）、QM9700（64 口）、1:1、轨道优化：需要几台 spine 交换机（台）？

# %%
answer_2 = None
exercise("ch12.2").check(answer_2)

# %% [markdown]
# **练习 3**：4,096 张卡、每卡 400 Gbit/s、leaf 3:1 收敛：每 GPU 分到的对分带宽是多少 Gbit/s？

# %%
answer_3 = None
exercise("ch12.3").check(answer_3)

# %% [markdown]
# **练习 4（纸笔题）**：16×16 的二维 torus，对分面上有几条链路（条）？

# %%
answer_4 = None
exercise("ch12.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：4,096 张 GPU、每卡一块 400G 网卡、1:1 无收敛。想让计算网络保持两层，在目录里的 `"SN4700"`（32 口）、`"QM9700"`（64 口）、
# `"SN5600"`（64 个 800G 口、拆成 128 个 400G 逻辑口）三种 400G 交换机中，应该选哪一种（端口最少、又能两层接下）？

# %%
answer_5 = None
exercise("ch12.5").check(answer_5)

# %% [markdown]
# ## 小结
#
# - Fat-Tree 用同一种 $k$ 口交换机搭出无阻塞网络：两层上限 $r^2/2$，三层上限 $r^3/4$；64 口交换机分别是 2,048 与 65,536 个端口。
# - 轨道优化让同号 GPU 的流量在一台 leaf 内完成，一个 SU = 32 台 DGX H100 = 8 台 leaf；本章模型与 DGX SuperPOD 参考架构的交换机数逐行一致。
# - 收敛比省下交换机，但按同一比例削减对分带宽；训练的计算网络应按 1:1 设计。
# - Torus 和 Dragonfly 用更少的交换机或长线换规模，代价是直径或对分带宽；选择取决于通信模式。
# - 验收：`iblinkinfo` 看接成了什么样（宽度 × 单通道速率：106.25 是 NDR、53.125 是 HDR），`ibdiagnet` 找出哪根线有问题，`mlxlink -c` 看问题多大——FEC 之后的 effective BER 必须为 0，raw BER 看趋势，断链计数看闪断。
#
# ## 参考资料
#
# - M. Al-Fares, A. Loukissas, A. Vahdat. *A Scalable, Commodity Data Center Network Architecture*. SIGCOMM 2008, §3.2（k-ary fat tree 公式与 48 口 → 27,648 主机）。
# - C. E. Leiserson. *Fat-Trees: Universal Networks for Hardware-Efficient Supercomputing*. IEEE Trans. Computers, 1985.
# - NVIDIA. *NVIDIA DGX SuperPOD: Next Generation Scalable Infrastructure for AI Leadership — Reference Architecture featuring NVIDIA DGX H100* (RA-11333-001), "Network Fabrics", Table 4 Compute fabric component count.
# - NVIDIA. *DGX SuperPOD Reference Architecture with DGX B200*, "DGX SuperPOD Architecture"（2–64 SU 的 leaf/spine/core 与线缆数量表）。
# - NVIDIA. *QM9700/QM9790 1U NDR 400Gb/s InfiniBand Switch Systems User Manual*（32 个 OSFP 笼子 × 2 = 64 个 400G 端口；Class 8 双口 OSFP 模块 17 W）；NVIDIA MMS4X00-NS400 产品说明（双口 2×400G 模块对接两块 ConnectX-7）。
# - W. J. Dally, B. Towles. *Principles and Practices of Interconnection Networks*. Morgan Kaufmann, 2004, ch. 5（k-ary n-cube 的直径与对分带宽）。
# - J. Kim, W. J. Dally, S. Scott, D. Abts. *Technology-Driven, Highly-Scalable Dragonfly Topology*. ISCA 2008。
# - K. Qian et al. (Alibaba Cloud), *Alibaba HPN: A Data Center Network for Large Language Model Training*, SIGCOMM 2024（两层双平面、一个 pod 约 15K GPU、
#   每 segment 1,024 GPU、非堆叠 dual-ToR、51.2 Tbit/s 单芯片交换机、每网卡 2×200G、训练吞吐提升约 15%）。
# - InfiniBand 速率：HDR 每通道 53.125 Gbit/s、NDR 每通道 106.25 Gbit/s（IBTA 规范 Vol 2，见 `labutil/data/links.toml`）；NDR200 = 2 通道 NDR。
# - `infiniband-diags` 手册页：`ibswitches(8)`、`iblinkinfo(8)`、`ibnetdiscover(8)`（样例输出格式）。
