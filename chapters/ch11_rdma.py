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
# # 第11章 RDMA基础：InfiniBand与RoCEv2
#
# > 模块三「高性能网络」的第 1 章。前置：第 9 章（网卡、PCIe、GPUDirect RDMA 在节点内的数据路径）。
# > 后续：第 12 章（拓扑）把网卡连成 Fat-Tree；第 13–15 章（集合通信、带宽规划、NCCL）在这张网上跑 all-reduce；第 23 章把本章的 `ibstat` 检查写进验收规则。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 解释 RDMA 的三个核心概念——**队列对（RC QP）**、**内存注册（MR）**、**单边 RDMA Write/Read**——以及它们为什么让 CPU 退出数据通路；
# - 用「信号速率 × 编码效率 × lane 数」算出 InfiniBand SDR 到 XDR 每一代的有效数据速率（8b/10b、64b/66b、PAM4 + FEC）；
# - 说明 RoCEv2 为什么需要「无损以太网」，并用公式算出 PFC headroom；理解 ECN 与 DCQCN 怎样在丢包之前把发送速率降下来；
# - 用通信模型检验种子课程的说法：LLM 训练「必须使用 InfiniBand，且每张 GPU 至少配 1 个 400G 端口」，推理「RoCE 即可满足」；
# - 读懂 `ibstat`、`ibv_devinfo`、`show_gids` 与 `ethtool -S` 的输出：用规则自动找出降速、掉线、没有子网管理器的端口，选对 RoCE 的 GID 索引，分清 PFC 反压与 PFC 风暴。

# %%
from labutil.notebook import setup, show_table
from labutil import rdma, links, health, comm, units
from labutil.parsers import (samples, parse_ibstat, parse_ibv_devinfo, parse_perftest_bw, mb_per_sec_to_gbps,
                             parse_ethtool_stats, parse_show_gids)
from labutil.explore import rdma as rdma_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 为什么是 RDMA：把 CPU 请出数据通路
#
# 种子课程说：「网络层采用 InfiniBand 或 RoCE（RDMA over Converged Ethernet）组网，带宽通常为 400Gbps/端口」。
# 两者的共同点是 **RDMA**（Remote Direct Memory Access，远程直接内存访问）。传统 TCP/IP 收发一条消息，要经过系统调用、
# 内核协议栈、把数据从用户缓冲区拷进内核 socket 缓冲区、中断、再拷回来——在 400 Gb/s 下，每秒 50 GB 的数据光是内存拷贝就能吃掉好几个 CPU 核，
# 单条消息的延迟也在几十微秒量级。RDMA 的做法是把整个传输协议放进网卡硬件，让网卡直接读写应用程序（或 GPU）的内存：
#
# - **内存注册（Memory Registration, MR）**：应用先调用 `ibv_reg_mr` 把一段缓冲区「登记」给网卡。内核把这些页钉住（pin，不允许换出），
#   把虚拟地址到物理地址的映射写进网卡的地址翻译表，并返回两把钥匙：本地用的 `lkey` 和交给对端的 `rkey`。之后网卡就能不经 CPU 直接 DMA 这段内存。
#   GPUDirect RDMA 就是把 GPU 显存也注册成 MR（第 9 章的 `nvidia-peermem` 模块负责这件事）。
# - **队列对（Queue Pair, QP）**：通信端点是一对队列——发送队列（SQ）和接收队列（RQ），再配一个完成队列（CQ）。
#   应用把「工作请求」（WR）贴到 SQ 上，网卡处理完后把「完成事件」（CQE）写进 CQ，应用轮询 CQ 即可，不需要系统调用和中断。
#   NCCL 用的是 **RC（Reliable Connected）** 类型：一对 QP 之间建立可靠连接，网卡负责按序、重传、确认，就像硬件里的 TCP。
# - **单边操作（one-sided）**：`RDMA Write` 把本地 MR 里的数据直接写到对端 MR 的某个地址（凭 `rkey`），`RDMA Read` 反过来把对端内存读回来。
#   对端的 CPU 完全不参与，甚至不知道发生了写入。与之相对的 **双边操作**（`Send/Recv`）要求对端事先贴好接收缓冲区。
#   NCCL 的 IB 传输主要用 RDMA Write（带立即数，用于通知对端数据已到）。
#
# 一次 GPU 到 GPU 的跨节点传输于是变成：发送端网卡从 GPU 显存（MR）读数据 → 线缆 → 接收端网卡写进对端 GPU 显存（MR），
# 两端的 CPU 只负责在开始时建连、注册内存，数据通路上没有它们。这也是第 9 章强调 GDR 的原因：如果网卡不能直接访问显存，
# 数据还得绕到主机内存，RDMA 省下的 CPU 和延迟又被拷贝吃回去了。
#
# ## 2. InfiniBand 的速率与编码
#
# InfiniBand 每一代提高每个 lane 的信号速率，端口通常是 4 条 lane（4X）。但线上跑的比特不全是数据：
# SDR/DDR/QDR 用 **8b/10b** 编码（每 10 个比特携带 8 个数据比特，效率 80%），FDR/EDR 改用 **64b/66b**（97%），
# HDR 以后用 PAM4 调制（每个符号 2 比特），并加上 RS(544,514) 前向纠错和 256b/257b 转码，效率约 94%。有效数据速率为
#
# $$
# R_{\text{data}} = \text{lanes} \times R_{\text{signal}} \times \eta_{\text{encoding}} .
# $$

# %%
show_table(rdma.ib_rate_table(), ["gen", "year", "signal_gbps", "encoding", "efficiency", "port_signal_gbps", "port_gbps"],
           floatfmt=",.4g")

# %%
# NBVAL_CHECK_OUTPUT
for r in rdma.ib_rate_table():
    print(f"{r['gen']}: 4X line {r['port_signal_gbps']:7.2f} Gb/s x {r['efficiency']:.4f} = {r['port_gbps']:6.1f} Gb/s of data "
          f"= {r['port_gbps'] / 8:5.1f} GB/s")

# %%
rdma_x.ib_rates_figure()

# %% [markdown]
# 两个值得记住的细节：QDR 常被叫做「40G」，但 8b/10b 之后只有 32 Gb/s 的数据；FDR 的「56G」是信号速率，数据是 54.5 Gb/s。
# 从 EDR 开始，厂商标称的 100/200/400/800 就是**数据速率**了。种子课程说的「400Gbps/端口」，在 InfiniBand 里就是 NDR 4X（ConnectX-7 + Quantum-2 交换机），
# 每个方向 50 GB/s；以太网侧是 400GbE。
#
# ## 3. InfiniBand 与 RoCEv2：同一套 verbs，两种网络
#
# RoCEv2 把 InfiniBand 的传输层（同样的 QP、MR、RDMA Write）封装在 UDP/IP 里（目的端口 4791），跑在普通以太网交换机上。
# 对应用和 NCCL 来说，两者都是 `ibv_*` verbs 接口，区别在网络本身：

# %%
show_table(rdma.IB_VS_ROCE, ["aspect", "InfiniBand", "RoCEv2"])

# %% [markdown]
# 关键差别在「无损」：InfiniBand 的链路层使用**基于信用（credit）的流控**——接收端告诉发送端自己还有多少缓冲，发送端没有信用就不发，
# 所以 IB 网络在设计上不会因为拥塞丢包。以太网默认是「尽力而为」：缓冲满了就丢。RDMA 的 RC 传输（尤其是较早的网卡）对丢包非常敏感——
# 它用 go-back-N 重传，丢一个包就要重发之后所有的包，吞吐会断崖式下跌。因此 RoCE 网络传统上要配成**无损以太网**，靠三件工具：
#
# 1. **PFC**（Priority Flow Control，IEEE 802.1Qbb）：按优先级的 PAUSE。接收端某个优先级的队列快满时，向上游发一个 PAUSE 帧，让上游暂停这个优先级的发送。
# 2. **ECN**（显式拥塞通知）：交换机在队列变深时给数据包打上拥塞标记，而不是丢掉它。
# 3. **DCQCN**：接收端网卡看到 ECN 标记后，回送 CNP（拥塞通知包）给发送端，发送端网卡按算法降速。ECN + DCQCN 负责「平时」把队列压低，PFC 是最后一道保险。
#
# ## 4. PFC headroom：PAUSE 之后还会到达多少数据
#
# PFC 不是瞬间生效的。接收端决定发 PAUSE 的那一刻起，还会有数据继续到达，这些数据必须有地方放（headroom），否则照样丢包。
# 按 Cisco PFC 白皮书的分解（发送端 S、接收端 R、速率 $R$、线缆长度 $L$、每米传播时间 $t_m$）：
#
# 1. R 可能正在发一个最大帧，PAUSE 帧不能打断它：$\text{MTU}_R$；
# 2. PAUSE 在线缆上传播时 S 还在发，而线缆里本来就装满了在途数据：$R \times 2 L t_m$；
# 3. S 收到 PAUSE 后需要反应时间，IEEE 802.3 Annex 31B 表 31B-1 规定了上限（以 512 比特时间的 pause quanta 计：100G 为 394，400G 为 905）；
# 4. S 反应时可能刚开始发一个最大帧，必须发完：$\text{MTU}_S$。
#
# $$
# H = \text{MTU}_R + \text{MTU}_S + \frac{R \cdot 2 L t_m + D_{\text{resp}}}{8}\ \text{字节},
# \qquad t_m^{\text{fibre}} = 5.13\ \text{ns/m},\ t_m^{\text{copper}} = 4.76\ \text{ns/m}.
# $$

# %%
# NBVAL_CHECK_OUTPUT
for speed, length in [(100, 3), (100, 100), (400, 3), (400, 100), (400, 500)]:
    h = rdma.pfc_headroom(speed, length, mtu_bytes=9216)
    print(f"{speed:3d} Gb/s, {length:3d} m fibre: cable {h['cable_b'] / 1e3:6.1f} KB + reaction {h['response_b'] / 1e3:5.1f} KB "
          f"+ 2 MTU {2 * 9216 / 1e3:4.1f} KB = {h['total_b'] / 1e3:6.1f} KB per port and priority")
h400 = rdma.pfc_headroom(400, 100, mtu_bytes=9216)["total_b"]
print(f"64-port 400G switch, 100 m links, 1 lossless priority: {64 * h400 / 1e6:.1f} MB reserved as headroom; "
      f"2 priorities: {2 * 64 * h400 / 1e6:.1f} MB")

# %%
rdma_x.headroom_vs_length_figure()

# %% [markdown]
# headroom 与「速率 × 距离」成正比：400G、100 米的链路每端口每个优先级要 128 KB，一台 64 口交换机光 headroom 就要预留 8.2 MB，
# 而交换芯片的共享缓存通常只有几十 MB。这就是为什么：**无损优先级只开一到两个**（通常 RDMA 用优先级 3，CNP 用更高优先级）；
# **跨楼、跨园区的长距离链路很难做无损**；速率每翻一倍，同样的缓存能支持的无损距离就减半。下面的探索器把这些因素放在一起：

# %%
explorer = rdma_x.pfc_headroom_explorer()
explorer

# %% [markdown]
# PFC 还有两个著名的副作用，也是 RoCE 运维的主要难点：**拥塞扩散**（一个慢接收端让上游端口暂停，上游端口上其他无辜的流也被一起暂停，
# 像交通堵塞一样一级级向上蔓延）和 **PFC 死锁/风暴**（环路依赖的暂停永远不解除，或一块坏网卡不停发 PAUSE）。交换机上的
# PFC watchdog 会在某个队列被暂停太久时丢弃它的包来打破僵局。所以成熟的 RoCE 网络把 PFC 当保险丝，真正的拥塞控制交给 ECN + DCQCN。
#
# ## 5. ECN 与 DCQCN：在丢包之前降速
#
# DCQCN（Zhu 等，SIGCOMM 2015）由三方组成。**交换机**（拥塞点 CP）按队列深度给包打 ECN 标记，概率像 RED 一样随队列线性上升：
# 队列低于 $K_{\min}$ 不标记，$K_{\min}$ 到 $K_{\max}$ 之间从 0 线性升到 $P_{\max}$，超过 $K_{\max}$ 全部标记（论文的设置是 5 KB、200 KB、1%）。
# **接收端网卡**（通知点 NP）看到带标记的包就给发送端回 CNP（同一条流最多每 50 µs 一个）。**发送端网卡**（反应点 RP）每收到一个 CNP：
#
# $$
# R_T \leftarrow R_C,\qquad R_C \leftarrow R_C\left(1-\frac{\alpha}{2}\right),\qquad \alpha \leftarrow (1-g)\,\alpha + g,\quad g = 1/256 ,
# $$
#
# 没有 CNP 时 $\alpha$ 逐渐衰减，速率按「快速恢复 → 加性增 → 超速增」三个阶段回升到目标速率 $R_T$。$\alpha$ 从 1 开始，
# 所以拥塞刚出现时每个 CNP 都让速率减半：

# %%
# NBVAL_CHECK_OUTPUT
rates = rdma.dcqcn_rate_after_cnps(400, 4)
print("rate after 0..4 CNPs (Gb/s):", " -> ".join(f"{r:.0f}" for r in rates))
for q_kb in (3, 50, 150, 200, 250):
    print(f"queue {q_kb:3d} KB: ECN mark probability {100 * rdma.ecn_mark_probability(q_kb * 1e3):6.3f} %")

# %%
rdma_x.ecn_dcqcn_figure()

# %% [markdown]
# 对比一下量级：在 $K_{\max}$ = 200 KB 处 DCQCN 已经开始大力降速，而这个数只比上面一个 400G 长链路的 PFC headroom 大一点。
# 调参的原则是「ECN 先于 PFC 触发」：ECN 门限要明显低于 PFC 的 XOFF 门限，否则每次拥塞都会先撞上 PAUSE。
# NVIDIA 网卡的 DCQCN 参数、交换机的 ECN 门限和 PFC 门限要成套配置——这正是「RoCE 比 IB 难运维」的具体含义。
#
# ## 6. 种子课程的判断：训练必须 IB + 每卡 400G？推理 RoCE 即可？
#
# 种子课程场景一写道：LLM 训练集群「必须使用 InfiniBand，且每张 GPU 至少配 1 个 400G 端口，否则通信将严重拖慢训练」；场景二说 CV/多模态推理「RoCE 即可满足」。
# 把它拆成两个可以计算的问题。**第一，每卡带宽**：以 2,048 张 H100 训练 70B 模型为例，TP 8 × PP 8 放在节点内和流水线上，剩下 DP = 32 路数据并行。
# 每张卡每步要和另外 31 个副本 all-reduce 自己那份梯度分片（70B/64 × 2 B = 2.19 GB）。32 个副本分布在 32 个节点上、每节点一个，所以这个 DP 环走的是这张卡自己的网卡（一条轨道），NCCL 能跑到线速的约 96%（课程统一的集群模型 `labutil.cluster`，`rdma.dp_gradient_sync` 就是调用它）：

# %%
# NBVAL_CHECK_OUTPUT
for nic in (25, 100, 200, 400):
    r = rdma.dp_gradient_sync(70e9, 2048, tp=8, pp=8, nic_gbps=nic, global_batch_tokens=4e6)
    print(f"{nic:3d} Gb/s per GPU: gradient all-reduce {r['sync_s']:5.3f} s vs compute {r['compute_s']:4.2f} s "
          f"per step -> sync/compute {r['sync_ratio']:6.1%}")

# %% [markdown]
# 每卡 400G 时，梯度同步只占计算时间的 4.9%，很容易被重叠掉；200G 是 9.7%，仍然可以接受；100G 到了 19%，25G 则高达 77%——
# 这就是种子课程误区一里「8 张 H800 配 25G 以太网，利用率不足 30%」的同类情形（第 14 章详算）。
# 「每卡 400G」对 3D 并行的稠密模型是**留有余量的安全配置**；对通信更重的负载（MoE 的 all-to-all、更大的 DP、ZeRO-3 的参数收集），余量就会被用掉。
#
# **第二，IB 还是 RoCE**：上面的 α-β 模型里只出现了**带宽**和每步延迟，没有出现「InfiniBand」。一张 400GbE 的 RoCE 网卡和一张 NDR 网卡给出的是同样的 50 GB/s 线速（NCCL 实际都按约 48 GB/s 算）。
# 二者的真实差别在模型之外：拥塞下的尾延迟、丢包与 PFC 风暴的风险、自适应路由、SHARP 网内规约，以及运维团队的经验。
# 所以更准确的说法是：**大规模训练需要每卡 200–400G 的无损（或拥塞可控）RDMA 网络**；IB 是最省心的选择，
# 配置得当的 RoCEv2 也被用在万卡级训练集群上（Meta 公布过两个各约 24K 张 H100 的集群，一个用 RoCE、一个用 InfiniBand；Llama 3 405B 在 RoCE 集群上训练）。
# 推理的跨节点通信远少于训练（请求级别的数据量、很少跨节点做张量并行），RoCE 甚至普通以太网即可满足——种子课程的第二个判断成立。
#
# ## 7. 实操命令
#
# 登录一台 RDMA 节点后，按这个顺序检查（以下输出均为示意，格式见各工具的源码或手册）：
#
# ```bash
# ibv_devices                          # 列出 RDMA 设备（mlx5_0 ...）和 node GUID
# ibstat                               # 每个端口的 State / Physical state / Rate / Link layer
# ibv_devinfo -v                       # verbs 视角：PORT_ACTIVE、active_width、active_speed、active_mtu
# rdma link show                       # iproute2 视角：link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ...
# show_gids                            # RoCE：每个端口的 GID 表（RoCE v1/v2、IPv4/IPv6），NCCL_IB_GID_INDEX 选哪一个
# mlnx_qos -i eth2 --pfc 0,0,0,1,0,0,0,0 --trust dscp   # RoCE：只在优先级 3 上开 PFC，按 DSCP 分类
# dcbtool sc eth2 pfc e:1 a:1 w:1      # 另一种 DCB 工具（lldpad）开启 PFC
# ib_write_bw -d mlx5_0 --report_gbits               # perftest 服务端（另一台机器上加对端地址作为客户端）
# ib_write_bw -d mlx5_0 --report_gbits --use_cuda=0 node-a   # 客户端，--use_cuda 走 GPUDirect RDMA
# ib_read_lat -d mlx5_0 node-a         # RDMA Read 延迟（单边读，NDR 上通常为几微秒）
# ```
#
# 先解析一份 `ibstat`（样例为示意数据，格式来自 rdma-core infiniband-diags 的 `ibstat.c`）：

# %%
print(samples.info("ibstat_ndr")["source"])
cas = parse_ibstat(samples.sample("ibstat_ndr"))
show_table([{"CA": ca.name, "port": p.port, "state": p.state, "physical": p.physical_state, "rate_gbps": p.rate_gbps,
             "link_layer": p.link_layer,
             "ib_gen": links.ib_generation_for_rate(p.rate_gbps) if p.rate_gbps and p.state == "Active" else "n/a (not Active)"}
            for ca in cas for p in ca.ports])

# %%
# NBVAL_CHECK_OUTPUT
for f in health.check_ibstat(cas):
    print(f"{f.severity:8s} {f.component:14s} {f.check:18s} {f.message}")

# %% [markdown]
# mlx5_0 正常（Active、LinkUp、400 = NDR 4X）；mlx5_1 虽然是 Active，但只协商到 200（HDR 速率）：链路能通，带宽却少了一半，
# 这是线缆或光模块问题最常见的表现，也是最容易被漏掉的——NCCL 不会报错，只是整个 all-reduce 被这一条轨道拖慢（第 23 章会算它对 busbw 的影响）。
# mlx5_2 是 Down/Polling：没有对端信号，通常是线没插好或对端端口关闭。注意它那一行的 `Rate: 10` **不是** SDR：
# 端口没有训练出链路时，活动宽度和活动速度还没有协商结果，`ibstat` 用它们的默认值乘出来的 10 没有任何意义，所以上表对非 Active 的端口不标代际。
# 只有 `State: Active` 且 `Physical state: LinkUp` 的端口，`Rate` 才是协商结果。`ibv_devinfo -v` 给出同样的信息，但把速率拆成 lane 数 × 每 lane 速度：

# %%
# NBVAL_CHECK_OUTPUT
devs = parse_ibv_devinfo(samples.sample("ibv_devinfo_v"))
for d in devs:
    for p in d.ports:
        print(f"{d.hca_id} port {p.port}: {p.state}, {p.active_width} x {p.active_speed_gbps:g} Gb/s = {p.rate_gbps:g} Gb/s "
              f"({links.ib_generation_for_rate(p.rate_gbps)}), MTU {p.active_mtu}, {p.link_layer}")
for f in health.check_ibv_devinfo(devs):
    print(f"{f.severity:8s} {f.component:14s} {f.check:10s} {f.message}")

# %% [markdown]
# 每 lane 100 Gb/s 是 NDR，50 Gb/s 是 HDR：mlx5_1 的 4 条 lane 都在，但每条都降到了 HDR 速度。RoCE 端口的 `ibstat` 会显示 `Link layer: Ethernet`：

# %%
# NBVAL_CHECK_OUTPUT
for ca in parse_ibstat(samples.sample("ibstat_roce")):
    for p in ca.ports:
        print(f"{ca.name} port {p.port}: {p.state}, rate {p.rate_gbps:g} Gb/s, link layer {p.link_layer} (RoCE: no LID, SM lid {p.sm_lid})")

# %% [markdown]
# 前面 `ibstat` 里那个 Down/Polling 的 mlx5_2，插好线以后也不一定马上变成 Active。InfiniBand 端口要过两关：物理层先训练出链路（`Physical state` 从 Polling 变成 LinkUp），
# 然后由**子网管理器**（Subnet Manager，SM：opensm 或 UFM，跑在一台交换机或服务器上，一主多备）扫描整个子网，给每个端口分配 LID、
# 给每台交换机算好转发表，再把端口推到 Armed、Active。所以 `State: Initializing` 加 `Physical state: LinkUp` 的读法是：**线是好的，没有 SM 管到这个端口**
# （SM 没起、SM 不在这个子网，或者刚接进来的新设备 SM 还没扫到）；`Base lid: 65535`（无效 LID）和 `SM lid: 0` 是同一件事的另外两个症状。
# 查法是 `sminfo`（打印主 SM 的 LID、GUID、优先级和状态），再到 SM 所在的机器上看 `systemctl status opensm`（或 UFM 的界面）。
# 一张 IB 网只能有一个 master SM，备用 SM 的优先级更低、主 SM 故障时接管；SM 的路由算法（大 fat tree 常用 opensm 的 `ftree` 或 `updn`，
# 再加上交换机的自适应路由）决定了第 12 章的 fat tree 里流量怎么分到各条上行。RoCE 没有 SM：LID 换成了 IP 地址和 GID（7.2 节的 `show_gids`），
# 路由交给以太网交换机的 ECMP。下面把样例里 mlx5_2 改成「线已修好、但没有 SM」的状态（**示意**，不是实测），验收规则照样能认出来：

# %%
# NBVAL_CHECK_OUTPUT
no_sm = samples.sample("ibstat_ndr").replace("State: Down\n\t\tPhysical state: Polling",
                                             "State: Initializing\n\t\tPhysical state: LinkUp")
for f in health.check_ibstat([ca for ca in parse_ibstat(no_sm) if ca.name == "mlx5_2"]):
    print(f"{f.severity:8s} {f.component:14s} {f.check:18s} {f.message}")

# %% [markdown]
# ### 7.1 用 `ib_write_bw` 测一条轨道的真实带宽
#
# 端口 Active 只说明「链路通了」，带宽要用 perftest 实测。它是两端各跑一个进程的客户端/服务端程序，一次只测一对网卡：
#
# ```bash
# # 服务端（node-b），绑到 mlx5_0 所在的 NUMA 节点上
# numactl --cpunodebind=0 --membind=0 ib_write_bw -d mlx5_0 -a -F --report_gbits
# # 客户端（node-a）：最后一个参数是服务端地址
# numactl --cpunodebind=0 --membind=0 ib_write_bw -d mlx5_0 -a -F --report_gbits node-b
# # 常用变体：-s 8388608 只测一个消息长度；-D 10 按时长跑 10 秒；-q 4 用 4 个 QP；-b 双向；--use_cuda=0 直接读写 GPU 0 的显存（GDR）
# ```
#
# `-a` 把消息长度从 2 B 扫到 8 MiB，`-F` 让它在 CPU 频率不是最高档时照样跑（否则会报警退出），`--report_gbits` 让带宽列以 Gb/s 打印。
# 不加 `--report_gbits` 时列名是 `MB/sec`，而 perftest 的 MB 是 $2^{20}$ 字节（源码 `perftest_resources.c` 里的 `format_factor = 0x100000`），
# 直接除以 125 换算成 Gb/s 会少算 4.9%——这正是误区四。下面解析一份 NDR 4X 端口上 `-a` 的客户端输出（格式来自 perftest，数值为示意）：

# %%
# NBVAL_CHECK_OUTPUT
wb = parse_perftest_bw(samples.sample("ib_write_bw_ndr"))
port_gbps = links.ib_port_gbps("NDR", 4)
print(f"{wb.test} on {wb.device}: {wb.n_qps} QP, {wb.connection}, link type {wb.link_type}, MTU {wb.mtu_bytes} B, "
      f"{len(wb.rows)} sizes in {wb.report_unit}")
for row in wb.rows:
    if row.size_bytes in (2, 1024, 4096, 65536, 8388608):
        print(f"  {row.size_bytes:>8,d} B: avg {row.bw_avg_gbps:7.2f} Gb/s, {row.msg_rate_mpps:8.4f} Mpps "
              f"({row.bw_avg_gbps / port_gbps:6.1%} of the {port_gbps:.0f} Gb/s NDR data rate)")
half = min(r.size_bytes for r in wb.rows if r.bw_avg_gbps >= port_gbps / 2)
print(f"half of the port rate is first reached at {half:,d} B; largest message {wb.largest.bw_avg_gbps:.2f} Gb/s "
      f"= {wb.largest.bw_avg_gbps / 8:.1f} GB/s")

# %% [markdown]
# 怎么读这张表：小消息时每秒能发的消息数（MsgRate，这里约 9.8 Mpps）是天花板，带宽 = 消息率 × 消息长度，所以 2 B 的消息只有 0.16 Gb/s；
# 消息长到几 KB 以后，瓶颈换成链路本身，带宽贴近 400 Gb/s 的数据速率（这里到 8 MiB 时为 97.9%，剩下的是包头和确认的开销）。
# NCCL 把大张量切成几百 KB 到几 MB 的块来发，所以验收时看的是大消息那几行；小消息那几行决定的是延迟敏感的通信（第 13 章的 α）。
#
# 大消息明显偏低时，按这个顺序查：先看端口速率（上面的 `ibstat` 规则）；再看 PCIe——Gen5 x16 每方向约 63 GB/s，若 `lspci -vv` 的 LnkSta 只协商到
# x8 或 Gen4，就会卡在 NDR 速率以下（第 9 章）；再看 NUMA：进程跑在远端 CPU 插槽上时，数据要多跨一次插槽互联；然后用 `-q 4` 多开几个 QP，
# 排除单 QP 的处理瓶颈；最后才怀疑交换网络。注意 perftest 一次只测一对端口，8 轨道的服务器要测 8 对，并且两两交叉换对端，
# 才能把「某台机器的某张卡」和「某根线」区分开——这正是第 22、23 章验收流程里逐轨道测试的做法。
#
# ### 7.2 RoCE 的日常运维：配置、核对、读计数器
#
# InfiniBand 的拥塞和无损由子网管理器和交换机负责；RoCE 把同样的责任分给了**网卡、交换机和你**三方，任何一方配错，
# 现象都是「能跑，但慢、偶尔卡死」。一台 RoCE 节点上线或换卡之后，按下面的顺序核对网卡侧（ConnectX / mlx5，MLNX_OFED 或 DOCA 工具）：
#
# ```bash
# # 1) 固件里的拥塞控制（需要 mst start；改完要冷重启）：DCQCN 对哪些优先级生效、CNP 用什么 DSCP / 802.1p 优先级
# mlxconfig -d /dev/mst/mt4129_pciconf0 query | grep -E 'ROCE_CC_PRIO_MASK|CNP_DSCP|CNP_802P_PRIO'
# mlxconfig -d /dev/mst/mt4129_pciconf0 set ROCE_CC_PRIO_MASK_P1=255
# # 2) 运行时的 ECN / DCQCN 开关：NP（通知点，收到 ECN 标记后回 CNP）与 RP（反应点，收到 CNP 后降速），按优先级
# cat /sys/class/net/eth2/ecn/roce_np/enable/3 /sys/class/net/eth2/ecn/roce_rp/enable/3     # 都应为 1
# # 3) 无损优先级：只在优先级 3 上开 PFC，按 DSCP 分类（trust dscp），并核对 DSCP→优先级映射
# mlnx_qos -i eth2 --trust dscp --pfc 0,0,0,1,0,0,0,0
# mlnx_qos -i eth2                      # 读回：trust state、PFC enabled 那一行、dscp2prio
# # 4) RDMA-CM 建立的连接默认用什么 ToS：106 = DSCP 26（<<2）+ ECT(0)，让流量落进优先级 3、并允许交换机打 ECN 标记
# cma_roce_tos -d mlx5_0 -t 106
# # 5) GID 表：RoCE v2 + IPv4 的那一行的 INDEX 就是 NCCL_IB_GID_INDEX 该填的值
# show_gids
# # 6) PFC 风暴保护：网卡持续发 pause 超过这个时间，就停发 pause（默认 8 s，auto 为 100 ms）
# cat /sys/class/net/eth2/settings/pfc_stall_prevention
# # 7) 计数器：以太网侧的 pause / 丢弃，RDMA 侧的 CNP 与 ECN
# ethtool -S eth2 | grep -E 'prio3_(pause|discard|marked)|pause_ctrl_phy|discards_phy|out_of_buffer|pause_storm'
# rdma statistic show link mlx5_0/1 | tr ' ' '\n' | grep -E 'cnp|ecn'   # np_cnp_sent, rp_cnp_handled, np_ecn_marked_roce_packets
# ```
#
# 第 5 步的 GID 表最容易被跳过，也最容易配错。RoCE 没有 LID，端点的「地址」是 GID：内核把网口上的每个 IP 地址在 GID 表里登记两次，一次是 RoCE v1
# （直接跑在以太网帧里，只能在同一个二层域内通信），一次是 RoCE v2（封装在 UDP/IP 里，可以跨子网路由）；没有配 IP 时只有 `fe80::` 开头的链路本地地址。
# 下面是一份真实的 `show_gids` 输出（出处在第一行打印），用 `labutil.parsers.parse_show_gids` 解析：

# %%
# NBVAL_CHECK_OUTPUT
print(samples.info("show_gids_public")["source"][:150] + " ...")
gids = parse_show_gids(samples.sample("show_gids_public"))
for e in gids.entries:
    print(f"{e.dev} port {e.port} index {e.index}: RoCE {e.version}, {e.ipv4 or 'link-local (fe80::)':20s} "
          f"-> {'routable across subnets' if e.routable else 'one L2 domain only'}")
print(f"GID index for ib_write_bw -x / NCCL_IB_GID_INDEX on mlx5_0: {gids.roce_v2_index('mlx5_0')}")

# %% [markdown]
# 四行里只有 index 3（RoCE v2 + 这台机器的 IPv4 地址）是训练流量该用的。index 0 看上去也能用：两台机器恰好在同一个二层域时它能通，
# 但走的是 RoCE v1，既不能跨三层路由，也绕开了为 RoCE v2 配好的 DSCP 与 ECN（第 4 步的 ToS 只对 IP 报文有意义）。
# NCCL 2.21 起 `NCCL_IB_GID_INDEX` 默认为 −1，会自动挑 RoCE v2 的那一行（地址族跟随 `NCCL_SOCKET_FAMILY`）；更早的版本默认是 0，
# 也就是链路本地的 RoCE v1——这是老集群一跨网段就建连超时、同网段虽然能通却绕开了 RoCE v2 那套 DSCP/ECN 配置的常见原因。`ib_write_bw` 之类的工具则始终要你用 `-x` 指定。
# 还要注意索引会漂移：给网口多加一个 IP 或 VLAN，表里就多出几行，固定写死的索引可能指向别的地址，所以验收脚本每台机器都要重新读一遍这张表。
#
# 交换机侧要核对的是**同一组约定**：同一个优先级（3）开了 PFC、DSCP 26 映射到它；这个无损队列上配了 ECN（标记门限 Kmin/Kmax 要低于 PFC 的 Xoff 门限，
# 否则永远是 PFC 先动手，ECN 形同虚设，见第 5 节）；按第 4 节的公式预留了 headroom；开了 PFC watchdog。命令随厂商不同，例如 NVIDIA Cumulus Linux 的
# `nv show qos roce`（一条命令看 PFC 优先级、ECN 门限和缓冲配置），SONiC 的 `show pfc counters`、`show ecn` 和 `pfcwd show stats`。
# 核对的方法只有一个：**网卡和交换机两边读回来的优先级、DSCP、ECN 门限必须逐项一致**——任何一项不一致，RoCE 照样能通，只是丢包时没人兜底。
#
# 配置对了以后，日常看的是计数器。`ethtool -S` 里这几类计数器的含义来自内核文档 `mlx5/counters.rst`：
#
# | 计数器 | 含义 | 读法 |
# |---|---|---|
# | `tx_prio3_pause` / `tx_pause_ctrl_phy` | 本端口**发出**的 pause | 本机接收侧来不及收（PCIe、主机内存、卡住的进程） |
# | `rx_prio3_pause` / `rx_pause_ctrl_phy` | 本端口**收到**的 pause | 下一跳（交换机或对端）来不及收 |
# | `*_pause_duration` | 被暂停 / 让对方暂停的累计微秒数 | 除以采样间隔 = 这段时间里有多少比例在停 |
# | `tx_pause_storm_warning_events` / `_error_events` | 网卡长时间持续发 pause / 风暴保护已触发 | error 一旦增长，pause 被关掉，可能已经丢包 |
# | `rx_prio3_discards`、`rx_prio3_buf_discard`、`rx_discards_phy`、`rx_out_of_buffer` | 因缓冲不足丢弃的包 | 在无损优先级上必须是 0 |
# | `rx_prio3_marked` | 被打上 ECN 标记的包 | 在增长说明 DCQCN 在工作 |
#
# 一句话的规则：**谁发 pause，谁就是拥塞的那一方**；pause 本身不是故障，是无损网络在正常工作，要问的是「停了多大比例的时间」和「有没有丢」。
# 下面是一份真实的 `ethtool -S`（mlx5 网卡，原样取自 Linux 内核 bpf/netdev 邮件列表的公开讨论；出处在第一行打印）：一个核跑 XDP 程序、以线速接收 64 字节小包：

# %%
# NBVAL_CHECK_OUTPUT
print(samples.info("ethtool_S_mlx5_public")["source"][:160] + " ...")
st = parse_ethtool_stats(samples.sample("ethtool_S_mlx5_public"))
for name in ("rx_packets_phy", "rx_discards_phy", "rx_out_of_buffer", "tx_pause_ctrl_phy", "rx_pause_ctrl_phy",
             "tx_global_pause_duration"):
    print(f"{name:26s} {st.get(name, 0):>18,d}")
d = rdma.diagnose_pause(st.counters, priority=None)      # 802.3x global pause: no PFC priority here
print(f"who sends pause: {d.who_sends_pause}; discarded {d.discard_fraction:.1%} of received; verdict: {d.verdict} ({d.severity})")

# %% [markdown]
# 没出现的计数器为 0（作者在原帖里说明了），所以 `rx_pause_ctrl_phy` 是 0：这个端口只发 pause、不收 pause，拥塞的是**它自己**。
# 它发出了五百多万个 pause，累计让对端停了 771 秒，仍然丢掉了六成收到的包（`rx_discards_phy`），软件接收队列也一再没有缓冲（`rx_out_of_buffer`）。
# 这不是网络的问题：一个 CPU 核处理不了线速的 64 字节小包，网卡缓冲满了就向上游喊停，喊停也来不及就丢。要查的是主机——接收核数与中断亲和、PCIe、程序本身，
# 换交换机或调交换机缓存都不会有任何改善。同样的读法用在 RoCE 的优先级 3 上：`tx_prio3_pause` 在涨，先查这台机器；`rx_prio3_pause` 在涨，沿着 pause 往上游找。
#
# 单个快照只能回答「谁在喊停」，回答不了「停了多久算风暴」：计数器是开机以来的累计值。做法是隔几秒读两次、相减，再除以间隔。
# `labutil.rdma.diagnose_pause` 把规则写成了代码：停顿占间隔的比例低于 5% 是正常的突发反压（PFC 正是为吸收 incast 突发而设计的），5%–50% 说明 ECN/DCQCN
# 没能在 PFC 之前起作用，超过 50% 或风暴计数器在涨就是 PFC 风暴；无损优先级上出现丢弃，无论比例多少都是最高级别。5% 和 50% 是本课程的运维约定，不是标准里的数，
# 可以按你的网络调。下面三组 10 秒内的**示意**差值（不是实测）演示三种判断：

# %%
# NBVAL_CHECK_OUTPUT
cases = {  # illustrative 10-second deltas of one RoCE port, priority 3 (not measured)
    "incast burst, DCQCN working": {"rx_prio3_pause": 310, "rx_prio3_pause_duration": 38_000, "rx_prio3_marked": 12_400},
    "ECN thresholds above Xoff": {"rx_prio3_pause": 41_000, "rx_prio3_pause_duration": 1_900_000, "rx_prio3_marked": 0},
    "receiver stuck (host side)": {"tx_prio3_pause": 880_000, "tx_prio3_pause_duration": 9_700_000,
                                   "tx_pause_storm_warning_events": 1},
}
for label, delta in cases.items():
    v = rdma.diagnose_pause(delta, priority=3, interval_s=10.0)
    frac = max(f for f in (v.sent_pause_fraction, v.received_pause_fraction) if f is not None)
    print(f"{label:28s}: paused {frac:6.1%} of the time, pause sent by {v.who_sends_pause:11s} -> {v.verdict} ({v.severity})")

# %% [markdown]
# 第一组是健康的：偶发 incast 让交换机短暂喊停，ECN 标记在增长，DCQCN 在降速。第二组停了近两成时间却没有一个 ECN 标记——交换机的 ECN 门限配得比 PFC 的 Xoff 还高，
# 降速永远来不及，只剩 PFC 硬停。第三组是风暴：这台主机几乎全程在让上游停，pause 会一跳一跳传到整个网络——这就是 PFC 风暴：一个卡住的接收者，能让不相干的流量也一起停下来，mlx5 的风暴保护（`pfc_stall_prevention`）就是为此在网卡上设的闸。
#
# ### 7.3 一个真实的规模案例：Meta 的 RoCE 训练网络
#
# Meta 在 SIGCOMM 2024 的论文里公开了训练 Llama 3 的 RoCE 网络是怎么调出来的，几个决定与本章的分析一一对应：
# 每台 Grand Teton 服务器 8 张 400G 网卡，一个 AI Zone 用两层交换（机柜顶的 RTSW 加集群交换机 CTSW）连起最多 3,072 张 H100；
# ECMP 按五元组哈希，而一对 GPU 之间只有少数几条长流（熵太低），于是他们把 `NCCL_IB_QPS_PER_CONNECTION` 调大、让交换机按目的 QP 号哈希，
# 把一条连接拆成多条流铺到多条路径上；拥塞控制上，他们在 400G 部署里**没有用 DCQCN**，而是靠 PFC 兜底、在集合通信库里做接收端驱动的准入（接收端发
# clear-to-send 才允许发送），把在途数据量控制在交换机缓存之内。这说明两件事：第一，RoCE 可以训练最大规模的模型；第二，让它稳定工作的那部分
# 工程量（路由、拥塞、缓存）落在了用户自己身上，而 InfiniBand 把这些交给了子网管理器和交换机的自适应路由。

# ## 8. 常见误区
#
# **误区一：「QDR 是 40G、FDR 是 56G。」** 那是信号速率：

# %%
# NBVAL_CHECK_OUTPUT
for gen in ("QDR", "FDR"):
    e = links.ib_link(gen)
    print(f"{gen}: marketed by line rate {4 * e['signal_gbps']:.2f} Gb/s, data rate {links.ib_port_gbps(gen, 4):.2f} Gb/s "
          f"({e['encoding']})")

# %% [markdown]
# QDR 的数据速率只有 32 Gb/s（8b/10b 吃掉 20%），FDR 是 54.5 Gb/s；从 EDR 起宣传数字才等于数据速率（NDR 的信号速率是 425 Gb/s，数据 400 Gb/s）。做带宽验收时，拿数据速率而不是宣传数字当基准。
#
# **误区二：「RoCE 开了 PFC 就万事大吉，headroom 交给交换机默认值。」** 默认值通常按短距离算：

# %%
# NBVAL_CHECK_OUTPUT
short = rdma.pfc_headroom(400, 3)["total_b"]
long = rdma.pfc_headroom(400, 500)["total_b"]
print(f"400G headroom: 3 m {short / 1e3:.1f} KB vs 500 m {long / 1e3:.1f} KB ({long / short:.1f}x)")

# %% [markdown]
# 同样是 400G，500 米的跨机房链路需要 3 米机柜内链路 4.3 倍的 headroom。按短距离配置的长链路在拥塞时照样丢包，而 RDMA 的重传会把吞吐打垮；
# 反过来把 headroom 配得过大，又会挤占共享缓存、让 ECN 来不及起作用。
#
# **误区三：「LLM 训练必须 InfiniBand，RoCE 不行。」** 第 6 节的模型里，决定梯度同步时间的是每卡带宽：

# %%
# NBVAL_CHECK_OUTPUT
ib = rdma.dp_gradient_sync(70e9, 2048, nic_gbps=links.ib_port_gbps("NDR", 4))
roce = rdma.dp_gradient_sync(70e9, 2048, nic_gbps=400.0)
print(f"NDR InfiniBand 400G: sync/compute {ib['sync_ratio']:.1%}; 400GbE RoCEv2: {roce['sync_ratio']:.1%} (same bandwidth, same model)")

# %% [markdown]
# 带宽相同，模型给出的结果就相同。IB 的优势在拥塞控制、尾延迟和运维成熟度，这些要靠良好的 RoCE 设计（ECN/DCQCN 调优、轨道优化拓扑、足够的交换缓存）来弥补，
# 不是「RoCE 不能训练」。
#
# **误区四：「`ib_write_bw` 的 MB/sec 除以 125 就是 Gb/s。」** perftest 的 MB 是 $2^{20}$ 字节。一张 100G 网卡不加 `--report_gbits` 测出 11,605 MB/sec，
# 按十进制换算只有 92.8 Gb/s，像是「只跑到 93%，有问题」；按 perftest 自己的定义换算：

# %%
# NBVAL_CHECK_OUTPUT
mbs = 11605.03
print(f"{mbs:,.2f} MB/sec: as 1e6 B -> {mbs * 8 / 1e3:.2f} Gb/s; as perftest's 2^20 B -> {mb_per_sec_to_gbps(mbs):.2f} Gb/s "
      f"({mb_per_sec_to_gbps(mbs) / links.ib_port_gbps('EDR', 4):.1%} of 100 Gb/s)")

# %% [markdown]
# 实际是 97.35 Gb/s，链路没有问题。两种换算差 $2^{20}/10^6 - 1 = 4.9\%$，刚好够让一条健康的链路被误判为「降速」，或让一条真的少了几个百分点的链路蒙混过关。
# 验收脚本里一律加 `--report_gbits`，或者用 `labutil.parsers.parse_perftest_bw` 这类按列名换算的解析器，不要手算。
#
# ## 9. 练习
#
# 把答案填进 `answer_k`，运行单元格查看判分；卡住时调用 `exercise("ch11.k").hint(1)`。
# 课程约定：比例（利用率、效率、占比）一律填百分数（45% 填 45），题目里也会写明；选择题填引号里的字符串。
#
# **练习 1**：FDR InfiniBand 每 lane 14.0625 Gbaud、64b/66b 编码。4X FDR 端口的数据速率是多少 Gb/s？

# %%
answer_1 = None
exercise("ch11.1").check(answer_1)

# %% [markdown]
# **练习 2**：一个 100GbE 端口，300 米单模光纤，最大帧 9,216 B，发送端反应时间按 IEEE 802.3 表 31B-1（394 个 pause quanta）。PFC headroom 是多少字节？

# %%
answer_2 = None
exercise("ch11.2").check(answer_2)

# %% [markdown]
# **练习 3**：种子课程的 LLM 场景：70B 模型、2,048 张 H100（TP 8 × PP 8，DP 32）、每步 4M token、MFU 0.45。每张 GPU 只配 1 个 200 Gb/s 端口时，梯度 all-reduce 时间是计算时间的百分之几？（填百分比数值，如 12.5 表示 12.5%）

# %%
answer_3 = None
exercise("ch11.3").check(answer_3)

# %% [markdown]
# **练习 4**：一条 400 Gb/s 的 RoCE 流连续收到 3 个 CNP（DCQCN，α 从 1 开始，g = 1/256），之后的发送速率是多少 Gb/s？

# %%
answer_4 = None
exercise("ch11.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：沿用练习 3 的场景（70B、2,048 张 H100、TP 8 × PP 8、每步 4M token、MFU 0.45），要让梯度 all-reduce 时间不超过计算时间的 10%，
# 每张 GPU 至少要配多快的网卡？在 `"100"`、`"200"`、`"400"`（Gb/s）中选一个，填字符串。

# %%
answer_5 = None
exercise("ch11.5").check(answer_5)

# %% [markdown]
# **练习 6（纸笔题）**：一张 100G 网卡上的 `ib_write_bw` 没加 `--report_gbits`，最后一行的 `BW average[MB/sec]` 是 11,000。
# 按 perftest 的单位定义（1 MB = $2^{20}$ 字节），这是多少 Gb/s（1 Gb = $10^9$ 比特）？（练习 1 也可以只用纸笔完成。）

# %%
answer_6 = None
exercise("ch11.6").check(answer_6)

# %% [markdown]
# **练习 7（判断题）**：第 7.2 节那份真实的 `ethtool -S` 里，pause 帧指向的拥塞方是这个端口自己（`'this port'`，它的接收侧来不及），
# 还是网络（`'the network'`，下一跳来不及接收这个端口发出的流量）？

# %%
answer_7 = None  # 'this port' 或 'the network'
exercise("ch11.7").check(answer_7)

# %% [markdown]
# **练习 8（判断题）**：第 7.2 节那份真实的 `show_gids` 里，跨子网跑 `ib_write_bw` 时 `-x` 应该填哪个 GID 索引？在 `"0"`、`"1"`、`"2"`、`"3"` 中选一个。

# %%
answer_8 = None  # '0'、'1'、'2' 或 '3'
exercise("ch11.8").check(answer_8)

# %% [markdown]
# ## 10. 小结
#
# - RDMA = 内存注册（MR，lkey/rkey）+ 队列对（RC QP，SQ/RQ/CQ）+ 单边 Write/Read：网卡直接读写内存（或 GPU 显存），CPU 退出数据通路。
# - IB 速率 = lanes × 信号速率 × 编码效率：8b/10b（80%）→ 64b/66b（97%）→ PAM4 + FEC（94%）；NDR 4X = 400 Gb/s = 50 GB/s。
# - RoCEv2 = IB 传输层 over UDP/IP；无损靠 PFC（headroom ∝ 速率 × 距离），拥塞控制靠 ECN + DCQCN（每个 CNP 乘以 1 − α/2）。
# - 训练需要的是每卡 200–400G 的 RDMA 带宽和可控的拥塞；IB 与调好的 RoCE 带宽相同，差别在运维和尾延迟。
# - 端口 Active 只代表链路通了：用 `ib_write_bw -a --report_gbits` 逐轨道实测，大消息应贴近端口数据速率；非 Active 端口的 `Rate` 没有意义。
# - IB 端口 `Initializing` + `LinkUp` = 线是好的、没有子网管理器管到它（`sminfo`、opensm/UFM）；RoCE 没有 SM，端点地址是 GID：用 `show_gids` 找到「RoCE v2 + 本机 IPv4」那一行的索引。
#
# 下一章把这些端口连成网络：Fat-Tree、轨道优化与无阻塞的交换机数量计算。
#
# ## 参考资料
#
# - 种子课程：《AI训练推理集群》1.3（「InfiniBand或RoCE组网，带宽通常为400Gbps/端口」）、1.4 场景一/二（「必须使用InfiniBand，且每张GPU至少配1个400G端口」「RoCE即可满足」）。
# - InfiniBand Trade Association, *InfiniBand Architecture Specification* Vol 1（verbs、QP、MR、credit-based flow control）与 Vol 2（SDR…XDR 的信号速率与编码，见 `labutil/data/links.toml`）；Annex A17 RoCEv2（UDP 端口 4791）。
# - rdma-core：`libibverbs`（`ibv_reg_mr`、`ibv_post_send`）、`infiniband-diags/ibstat.c`、`libibverbs/examples/devinfo.c`（样例输出格式）；linux-rdma/perftest（`ib_write_bw`、`ib_read_lat`；输出表头见 `src/perftest_parameters.c`，
#   `MB/sec` 按 $2^{20}$ 字节换算见 `src/perftest_resources.c` 的 `format_factor`；输出样式与 perftest 仓库 issue #234、#240、#273 中贴出的真实输出一致）；iproute2 `rdma(8)`。
# - 子网管理器与端口状态（Down → Init → Armed → Active，LID 分配）：InfiniBand Architecture Specification Vol 1 第 14 章（Subnet Management）；opensm(8) 手册页（路由引擎 `ftree`、`updn` 等）；infiniband-diags `sminfo(8)`。
# - `show_gids`：mlnx-tools（Mellanox/mlnx-tools，`sbin/show_gids`，读 `/sys/class/infiniband/<dev>/ports/<p>/gids` 与 `gid_attrs`，内核文档 `Documentation/ABI/testing/sysfs-class-infiniband`）；
#   样例原样取自 github.com/host-bench/Husky 的 README（NSDI '23 RDMA 性能隔离测试套件）；NCCL `src/transport/net_ib`（v2.31.2 的 `connect.cc`：`NCCL_PARAM(IbGidIndex, "IB_GID_INDEX", -1)`、`IB_ROCE_VERSION_NUM` 默认 2）与 NCCL 环境变量文档（2.21 起 GID 自动选择）。
# - IEEE 802.1Qbb（Priority-based Flow Control）；IEEE 802.3 Annex 31B，表 31B-1（PAUSE 反应时间，以 pause_quanta 计）。
# - Cisco, *Priority Flow Control: Build Reliable Layer 2 Infrastructure*, white paper（headroom 的组成：MTU_R、线缆、反应时间、MTU_S；铜缆 476 ns/100 m、光纤 513 ns/100 m）。
# - Y. Zhu et al., *Congestion Control for Large-Scale RDMA Deployments* (DCQCN), SIGCOMM 2015, §3（CP/NP/RP 算法，Kmin 5 KB、Kmax 200 KB、Pmax 1%、g = 1/256）。
# - NVIDIA ConnectX-7 / Quantum-2 产品简介（NDR 400 Gb/s）；NVIDIA *GPUDirect RDMA* 文档（第 9 章）。
# - A. Gangidi et al. (Meta), *RDMA over Ethernet for Distributed AI Training at Meta Scale*, SIGCOMM 2024（AI Zone 3,072 张 GPU、按 QP 哈希的 ECMP 与 `NCCL_IB_QPS_PER_CONNECTION`、
#   400G 部署不用 DCQCN 而用接收端驱动的准入控制）；Meta Engineering 博客 *RoCE networks for distributed AI training at scale*, 2024；Meta Engineering, *Building Meta's GenAI Infrastructure*, 2024（两个 24K GPU 集群：RoCE 与 InfiniBand）；A. Grattafiori et al., *The Llama 3 Herd of Models*, 2024, §3.3（405B 的训练网络为 RoCE）。
# - R. Thakur, R. Rabenseifner, W. Gropp, IJHPCA 2005（ring all-reduce 的 α-β 代价，`labutil.comm`）；Kaplan et al. 2020（6ND）。
