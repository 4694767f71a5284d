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
# # 第13章 集合通信原理：all-reduce、ring、tree 与 α-β 模型
#
# > 模块三「高性能网络」的第 3 章。前置：第 8 章（并行策略产生哪些通信）、第 11 章（RDMA）、第 12 章（网络拓扑）。
# > 本章给出一个能算数的通信模型；第 14 章用它做带宽规划，第 15 章讲 NCCL 如何在 ring / tree 之间选择，
# > 第 22 章和 lab02 用 nccl-tests 实测并和本章的模型对照。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 说出 all-reduce、all-gather、reduce-scatter、all-to-all、broadcast、reduce 的语义，以及它们在 DP / TP / ZeRO / MoE 训练里分别出现在哪里；
# - 用 α-β 模型 $T = k\,\alpha + m\,\dfrac{S}{B}$ 写出 ring、tree、分层（hierarchical）算法的时间，并代入目录里的真实硬件算出毫秒数；
# - 解释为什么 ring all-reduce 的带宽项 $2\frac{n-1}{n}\frac{S}{B}$ 是下界，为什么 NCCL 在大规模下要改用 double binary tree；
# - 读懂 nccl-tests 的 algbw 与 busbw，知道 busbw 为什么能和网卡速率直接比较，以及它什么时候会「超过」网卡速率。

# %%
from labutil.notebook import setup, MarkdownTable
from labutil import busbw_validation, comm, hardware, units
from labutil.cluster import Cluster
from labutil.explore import comm as comm_x
from labutil.parsers.nccl_tests import parse_nccl_tests
from labutil.bench.analysis import fit_alpha_beta
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 为什么要专门学「集合通信」
#
# 在单机训练里，梯度只在一张卡上，更新完就结束了。一旦用多张卡协同训练，每一步都要把分散在各卡上的数据「合起来」或「分出去」。
# 这类「一组进程（rank）同时参与、按固定规则交换数据」的操作叫**集合通信**（collective communication）。
# 它们不是 NCCL 发明的——MPI 标准在 1990 年代就定义了它们——但在 GPU 集群里，它们决定了你买的网络能不能被用满。
# 下表是本课程使用的六种操作（名字与 `labutil.comm.OPS` 一致），以及它们在大模型训练中出现的位置：
#
# | 操作 | 语义（$n$ 个 rank） | nccl-tests 里的 size $S$ | 训练中典型出现的地方 |
# |---|---|---|---|
# | all_reduce | 每个 rank 得到所有 rank 输入之和 | 每 rank 的缓冲区 | DDP 的梯度同步；张量并行（TP）每层前向/反向的激活求和 |
# | reduce_scatter | 求和后切成 $n$ 份，rank $i$ 只拿第 $i$ 份 | 总缓冲区（每 rank 份额 × $n$） | ZeRO-2/3、FSDP 的梯度分片；序列并行 |
# | all_gather | 每个 rank 贡献一份，所有 rank 得到全部 $n$ 份 | 总缓冲区 | ZeRO-3 / FSDP 前向前收集参数；序列并行 |
# | all_to_all | rank $i$ 把第 $j$ 份发给 rank $j$ | 总缓冲区 | MoE 专家并行的 token 分发与回收 |
# | broadcast | root 的数据复制到所有 rank | 缓冲区 | 训练开始时同步初始权重 |
# | reduce | 所有 rank 求和到 root | 缓冲区 | 汇总指标、少数优化器实现 |
#
# 一个重要的观察：all-reduce = reduce-scatter + all-gather。先把和「分片」算好，再把分片广播给所有人——
# 这正是 ring 算法的做法，也是 ZeRO 能做到「通信量与 DDP 相同」的原因（第 14 章）。

# %% [markdown]
# ## 2. α-β 代价模型：两个参数描述一张网络
#
# 任何一次点对点发送都可以近似为「固定开销 + 数据量 / 带宽」。把它推广到集合通信，就是 Hockney 提出、
# Thakur、Rabenseifner 与 Gropp 在 MPICH 的集合通信优化论文（2005）里系统使用的 **α-β 模型**：
#
# $$T = k\,\alpha + m\,\frac{S}{B}$$
#
# - $\alpha$（latency）：每一「步」消息的固定代价，包括 kernel 启动、协议握手、线路与交换机延迟；单位 s；
# - $B$（bandwidth）：**每个 rank、每个方向**的链路带宽，单位 GB/s（$10^9$ B/s）。一张 400 Gbit/s 的网卡是 $400/8 = 50$ GB/s；
#   目录里的 NVLink 数字是双向总和，单方向要除以 2（H100 SXM 的 900 GB/s → 450 GB/s）；
# - $k$：算法需要的串行步数；$m$：最忙的那个 rank 需要发送的数据量是 $S$ 的多少倍。
#
# 不同算法的差别，全在 $k$ 和 $m$ 上。本章 α-β 模型（`labutil.comm`）的 $\alpha$ 默认值取自 NCCL 自己的性能模型：
# NCCL **2.7.5**（commit 01afd20，2020 年 6 月）的 `src/graph/tuning.cc` 中的 `hwLat` 表（第 15 章细讲；Ring / Simple 协议，
# 大消息用的就是这个协议）：跨网络每步 9.6 µs，NVLink 每步 3.4 µs。这个网络值在 2.7–2.11 与 2.17 是 9.6 µs、2.12 里是 28 µs，
# **从 2.18.1 到当前的 2.30.7 是 14 µs**；课程的集群模型 `labutil.cluster`（后面各章的期望值都出自它）用的是 2.30.7 的整张表。
# 它们是**大消息协议**的每步延迟：小消息时 NCCL 会换成 LL/LL128 协议和 Tree 算法，每步延迟小得多（见下面 nccl-tests 表的第 1 点）。
# 这两个数在模型里是可调的参数——第 22 章和 lab02 会教你从 nccl-tests 的实测表里把它们拟合出来。
# 我们忽略了 Thakur 模型里的 $\gamma$ 项（做加法的计算代价）：GPU 以 HBM 速度做加法，比任何链路都快一两个数量级。

# %%
# NBVAL_CHECK_OUTPUT
h100 = hardware.gpu("H100-SXM")
nic = hardware.nic("ConnectX-7-400G")
print(f"alpha NET     = {comm.NET_STEP_LATENCY_S * 1e6:.1f} us per step (NCCL 2.7.5 tuning.cc, Ring/Simple; "
      f"NCCL 2.18.1-2.30.7: {Cluster.system('DGX-H100').net_latency_s * 1e6:.1f} us)")
print(f"alpha NVLink  = {comm.NVLINK_STEP_LATENCY_S * 1e6:.1f} us per step")
print(f"B  ConnectX-7 = {units.gbps_to_gbs(nic.port_gbps):.1f} GB/s per direction ({nic.port_gbps:.0f} Gbit/s)")
print(f"B  H100 NVLink= {comm.nvlink_per_direction_gbs('H100-SXM'):.1f} GB/s per direction "
      f"(catalog {h100.nvlink_gbs:.0f} GB/s bidirectional)")

# %% [markdown]
# ## 3. Ring all-reduce：为什么系数是 $2\frac{n-1}{n}$
#
# 把 $n$ 个 rank 连成一个环，每个 rank 把自己的 $S$ 字节切成 $n$ 块。
#
# 1. **reduce-scatter 阶段**（$n-1$ 步）：第 $t$ 步，每个 rank 把一块发给右邻居，同时从左邻居收一块并加到自己对应的块上。
#    $n-1$ 步之后，rank $i$ 手里的第 $i$ 块已经是所有 rank 的和。
# 2. **all-gather 阶段**（$n-1$ 步）：每个 rank 把已经求好和的块沿环传下去，再经过 $n-1$ 步，所有人都有了全部 $n$ 块。
#
# 每一步每个 rank 发 $S/n$ 字节、收 $S/n$ 字节（全双工，两个方向同时进行），所以：
#
# $$T_{\text{ring}} = 2(n-1)\,\alpha + 2\,\frac{n-1}{n}\,\frac{S}{B}$$
#
# Patarasuk 与 Yuan（2009）证明了带宽项 $2\frac{n-1}{n}\frac{S}{B}$ 是任何 all-reduce 算法的下界：每个元素最终要出现在 $n$ 个 rank 上，
# 而其他 $n-1$ 个 rank 的贡献必须以某种方式到达它——nccl-tests 的 PERFORMANCE.md 用「$n-1$ 次加法 + $n$ 次赋值、$n$ 条链路」得到同一个数。
# Ring 算法的带宽项正好达到这个下界，所以它是**带宽最优**的；它的问题在延迟项 $2(n-1)\alpha$：随 rank 数**线性**增长。
#
# 代入真实硬件算两个例子：一台 DGX H100 内 8 张卡走 NVLink 做 1 GB 的 all-reduce（这里先用线速 450 GB/s，第 5 节换成实测可达的带宽），
# 以及两台 DGX H100（16 张卡）组成**一条**平铺的环、跨节点的那一跳只走一块 400G 网卡——只有一个 channel 的「平铺环」，
# 每一跳都按 50 GB/s 算（真实的 NCCL 会建 8 条以上的环，一条环一块网卡，见第 5 节）：

# %%
# NBVAL_CHECK_OUTPUT
nvl = comm.nvlink_per_direction_gbs("H100-SXM")
t_node = comm.collective_cost("all_reduce", 1e9, 8, nvl, comm.NVLINK_STEP_LATENCY_S, "ring")
t_flat = comm.collective_cost("all_reduce", 1e9, 16, 50.0, comm.NET_STEP_LATENCY_S, "ring")
for name, c in (("8 GPUs, NVLink 450 GB/s       ", t_node), ("16 GPUs, flat ring (1 channel)", t_flat)):
    print(f"{name}: total {c.time_s * 1e3:6.2f} ms = latency {c.latency_s * 1e3:5.3f} ms + bandwidth {c.bandwidth_s * 1e3:6.2f} ms")
print(f"bytes each rank sends (16 ranks): {comm.bytes_sent_per_rank('all_reduce', 1e9, 16) / 1e9:.3f} GB for a 1 GB buffer")

# %% [markdown]
# 1 GB 的消息里，延迟项只占约 1%：大消息完全由带宽决定。而每个 rank 要发出接近 $2S$ 的数据——
# 这是「数据并行每步的通信量约为梯度大小的两倍」这一经验说法的来源。
#
# ## 4. Tree：用对数级延迟换一点带宽
#
# Ring 的延迟项在千卡规模会变成主角：1,024 个 rank 做一次 all-reduce，哪怕消息只有几个字节，也要走 $2 \times 1023$ 步；
# 在这个平铺的 α-β 模型里每步都按 9.6 µs 算，就是约 20 ms。DDP 默认把梯度切成 25 MiB 的桶逐个 all-reduce，一个 7B 模型有五百多个桶，
# 每个桶都要付一次。（真实的 NCCL 只把跨节点的那 $2(\text{节点数}-1)$ 步按网络延迟算，其余按 NVLink，还会为小桶换协议——
# 本章第 8 节和第 14 章 §6 用的就是这个按跳区分的模型，数字小得多，但「线性增长」这个结论不变。）
#
# NCCL 2.4 引入了 **double binary tree**（NVIDIA 技术博客 *Massively Scale Your Deep Learning Training with NCCL 2.4*）：
# 用两棵互补的二叉树，各承担一半数据；每个 rank 在一棵树里是内部节点、在另一棵里是叶子。
# reduce 沿树向上、broadcast 沿树向下，并按块流水线化。深度只有 $\lceil\log_2 n\rceil$，所以
#
# $$T_{\text{tree}} \approx 2\lceil\log_2 n\rceil\,\alpha + 2\,\frac{S}{B}$$
#
# 带宽项为什么是 $2S/B$？看最忙的 rank：它在一棵树里是内部节点，上行时从两个孩子各收 $S/2$、下行时给两个孩子各发 $S/2$，
# 再加上两棵树里各向父节点发的 $S/2$，总共发出 $2S$。这和 NCCL 自己的调优模型一致：tree 的 algbw 取 busbw 的 0.5 倍，
# 延迟取 $2\times(\log_2(\text{节点数})\times\text{interLat} + (\text{每节点卡数}-1)\times\text{intraLat})$。
# 与 ring 相比，tree 的带宽项大了 $\frac{n}{n-1}$ 倍（$n$ 大时几乎相同，所以博客说它「full bandwidth」），延迟却从线性变成对数。
# 令两式相等，得到交叉点：
#
# $$S^{*} = \big((n-1) - \lceil\log_2 n\rceil\big)\,\alpha\,B\,n$$
#
# 消息小于 $S^*$ 时 tree 更快，大于 $S^*$ 时 ring 更快。下图画出 64 个 rank、每 rank 50 GB/s 时两种算法的延迟项、带宽项与总时间：

# %%
comm_x.cost_terms_figure(n=64, bw_gbs=50.0)

# %%
# NBVAL_CHECK_OUTPUT
bucket = comm.DDP_BUCKET_BYTES
rt = {}
for n in (8, 64, 1024):
    r = comm.collective_cost("all_reduce", bucket, n, 50.0, algo="ring")
    t = comm.collective_cost("all_reduce", bucket, n, 50.0, algo="tree")
    rt[n] = (r, t)
    print(f"n={n:5d}: 25 MiB bucket ring {r.time_s * 1e3:6.2f} ms (latency {r.latency_s / r.time_s:4.0%}), "
          f"tree {t.time_s * 1e3:5.2f} ms; crossover S* = {comm.ring_tree_crossover_bytes(n, 50.0) / 1e9:8.2f} GB")
(r8, t8), (r1k, t1k) = rt[8], rt[1024]
MarkdownTable(
    f"8 个 rank 时 ring {'略快' if r8.time_s < t8.time_s else '略慢'}（{r8.time_s * 1e3:.2f} 对 {t8.time_s * 1e3:.2f} ms："
    f"带宽项系数 {comm.busbw_factor('all_reduce', 8):.2f} < 2）；到 1,024 个 rank，25 MiB 的桶用 ring 要 "
    f"{r1k.time_s * 1e3:.1f} ms，其中 {r1k.latency_s / r1k.time_s:.0%} 是延迟，用 tree 只要 {t1k.time_s * 1e3:.1f} ms——"
    f"交叉点已经涨到 {comm.ring_tree_crossover_bytes(1024, 50.0) / 1e9:,.0f} GB，比任何梯度桶都大。")

# %% [markdown]
# 这就是 NCCL 在大规模下默认选树形算法的原因（有 NVLink SHARP 的 H100/H200/B200 上是 NVLS-Tree，见第 5 节；
# 第 15 章讲如何用 `NCCL_ALGO` 观察和强制这个选择）。
#
# 其他操作也有各自的「对数延迟」算法（Thakur 等 2005 第 4 节）：all-gather 用递归倍增（recursive doubling），
# reduce-scatter 用递归减半（recursive halving），两者都是 $\lceil\log_2 n\rceil\alpha + \frac{n-1}{n}\frac{S}{B}$；
# all-to-all 的 Bruck 算法是 $\lceil\log_2 n\rceil\alpha + \frac{\lceil\log_2 n\rceil}{2}\frac{S}{B}$；
# broadcast/reduce 的二项树是 $\lceil\log_2 n\rceil(\alpha + S/B)$——大消息时它远不如流水线链式（ring）的 $(n-1)\alpha + S/B$。
# 在 `labutil.comm` 里这些都归在 `algo="tree"` 之下：
#
# | 操作 | ring | tree（对数延迟族） |
# |---|---|---|
# | all_reduce | $2(n-1)\alpha + 2\frac{n-1}{n}\frac{S}{B}$ | $2\lceil\log_2 n\rceil\alpha + 2\frac{S}{B}$ |
# | reduce_scatter / all_gather | $(n-1)\alpha + \frac{n-1}{n}\frac{S}{B}$ | $\lceil\log_2 n\rceil\alpha + \frac{n-1}{n}\frac{S}{B}$ |
# | all_to_all | $(n-1)\alpha + \frac{n-1}{n}\frac{S}{B}$（成对交换） | $\lceil\log_2 n\rceil\alpha + \frac{\lceil\log_2 n\rceil}{2}\frac{S}{B}$（Bruck） |
# | broadcast / reduce | $(n-1)\alpha + \frac{S}{B}$（流水线链） | $\lceil\log_2 n\rceil(\alpha + \frac{S}{B})$（二项树） |
#
# 下面把六种操作在一台 DGX H100 内（8 卡、NVLink 450 GB/s、α = 3.4 µs）、1 GB 缓冲区时的时间列出来：

# %%
# NBVAL_CHECK_OUTPUT
ops = {}
for op in comm.OPS:
    r = comm.collective_time_s(op, 1e9, 8, nvl, comm.NVLINK_STEP_LATENCY_S, "ring")
    t = comm.collective_time_s(op, 1e9, 8, nvl, comm.NVLINK_STEP_LATENCY_S, "tree")
    ops[op] = r
    print(f"{op:15s} ring {r * 1e3:6.3f} ms   tree {t * 1e3:6.3f} ms   busbw factor {comm.busbw_factor(op, 8):.3f}")
MarkdownTable(f"ring 的 all-reduce 正好是 reduce-scatter 与 all-gather 之和（{ops['all_reduce'] * 1e3:.3f} = "
              f"{ops['reduce_scatter'] * 1e3:.3f} + {ops['all_gather'] * 1e3:.3f} ms）。")

# %% [markdown]
# 注意 all-gather/reduce-scatter 的 $S$ 是**总**缓冲区：
# nccl-tests 打印的 size 是「每 rank 份额 × $n$」，所以同样的 1 GB，它只需要 all-reduce 一半的时间。
#
# ## 5. 分层（hierarchical）all-reduce：让 NVLink 干它擅长的事
#
# 一台 8 卡服务器内部有 NVLink（H100 每卡单向 450 GB/s），服务器之间只有网卡（400G NIC 每卡 50 GB/s）——差了 9 倍。
# 只有一个 channel 的平铺环不管这个差别，瓶颈永远在它那一块网卡上。分层算法（Horovod 的 hierarchical allreduce、NCCL 在 NVLink 服务器上的实际路径）分三段：
#
# 1. 节点内 reduce-scatter（NVLink）：每张卡得到本节点 $1/g$ 分片的和，$g$ 为每节点卡数；
# 2. 节点间 all-reduce（网卡）：$g$ 个「轨道」（rail）并行，每条轨道只对 $S/g$ 的数据在 $m = n/g$ 个节点间做 all-reduce；
# 3. 节点内 all-gather（NVLink）。
#
# $$T_{\text{hier}} = 2\Big[(g-1)\alpha_{\text{NVL}} + \frac{g-1}{g}\frac{S}{B_{\text{NVL}}}\Big] + 2(m-1)\alpha + 2\frac{m-1}{m}\frac{S/g}{B}$$
#
# 网卡上的数据量从 $2\frac{n-1}{n}S$ 降到了 $2\frac{m-1}{m}\frac{S}{g}$——除以了每节点卡数。
# 跨节点那一段也可以用 tree（`inter_algo="tree"`），这正是 NCCL 在多节点时 tree 算法的结构：节点内是链，节点间是树。
# 下面对比两台 DGX H100 做 1 GB all-reduce：

# %%
# NBVAL_CHECK_OUTPUT
kw = dict(gpus_per_node=8, intra_bw_gbs=nvl, intra_latency_s=comm.NVLINK_STEP_LATENCY_S)
flat = comm.collective_time_s("all_reduce", 1e9, 16, 50.0, algo="ring")
hier = comm.collective_cost("all_reduce", 1e9, 16, 50.0, algo="hierarchical", **kw)
print(f"flat ring (1 channel): {flat * 1e3:6.2f} ms")
print(f"hierarchical        : {hier.time_s * 1e3:6.2f} ms (NVLink part {hier.intra_s * 1e3:.2f} ms, network part {hier.inter_s * 1e3:.2f} ms)")
print(f"speed-up            : {flat / hier.time_s:.2f}x")
big = 8 * 2**30
print(f"modelled busbw, 8 GiB, 16 GPUs: flat ring (1 channel) {comm.model_busbw_gbs('all_reduce', big, 16, 50.0):.1f} GB/s, "
      f"hierarchical {comm.model_busbw_gbs('all_reduce', big, 16, 50.0, algo='hierarchical', **kw):.1f} GB/s")
MarkdownTable(f"分层算法快了 {flat / hier.time_s:.1f} 倍，而且它的 busbw"
              f"（{comm.model_busbw_gbs('all_reduce', big, 16, 50.0, algo='hierarchical', **kw):.0f} GB/s）"
              "远高于一块网卡的 50 GB/s——因为 7/8 的流量走的是 NVLink。")

# %% [markdown]
#
# **真实的 NCCL 怎么做。** NCCL 并不只建一条环：DGX H100 每张卡旁边有自己的 400G 网卡（一条「轨道」，rail），
# NCCL 建 8 个 channel，每条环离开服务器时走不同的网卡，于是**整台服务器的 8 块网卡加在一起**，
# 而环在服务器内部的那几跳走 NVLink。两种链路都达不到线速：NCCL 在 NVLink 4 上的环实测约 370 GB/s（NVIDIA 的 S. Jeaugey：线速 450 GB/s，协议开销约 20%），
# 每块 400G 网卡约 48 GB/s（他给出的经验值是每块 200G 网卡 24 GB/s，即线速的 96%）。所以跨节点 all-reduce 的 busbw 上限是
#
# $$\text{busbw} \le \min\big(\text{NVLink 环},\ \text{每台网卡数} \times \text{每块网卡可达带宽}\big) = \min(370,\ 8 \times 48 = 384) = 370\ \text{GB/s}$$
#
# 这是**每条轨道一条环**（`NCCL_ALGO=Ring`）的上限。只有两台服务器时，NCCL 默认用的不是环，而是 **NVLS-Tree**：
# 先在每台服务器里用 NVLS 把 8 张卡的数据加起来，两台之间只交换加好的结果——每台服务器只需往网络发 $S$，而不是环的 $2\frac{n-1}{n}S$，
# 于是 busbw 最多能到网络的 $2\frac{n-1}{n}$ 倍，先碰到的是 NVLS 自身的上限（Sylvain Jeaugey 在 NVIDIA/nccl issue #209 解释过两节点 tree 的这个效应）。
#
# 单机 8 卡时，all-reduce 默认还会用上 **NVLink SHARP（NVLS）**：在 NVSwitch 里做加法，每张卡只需发一次、收一次，
# 8×H100 的 busbw 能到约 480 GB/s（高于 450 GB/s 的线速——busbw 的系数按 ring 的流量算，而 NVLS 的实际流量更少）。
# 课程的集群模型 `labutil.cluster` 把这些都放在一起（数据与出处在 `labutil/data/systems.toml`），后面各章的期望值都由它算出：

# %%
# NBVAL_CHECK_OUTPUT
dgx2 = Cluster.system("DGX-H100", n_nodes=2)
print(dgx2.describe())
print(f"8xH100 ring busbw: {dgx2.expected_busbw_gbs('all_reduce', 8, algo='ring'):.0f} GB/s; "
      f"8xH100 NVLS busbw: {dgx2.expected_busbw_gbs('all_reduce', 8):.0f} GB/s")
print(f"network per node: 8 x 48 = {dgx2.node_net_gbs:.0f} GB/s; 2 x DGX H100 expected busbw with NCCL_ALGO=Ring: "
      f"{dgx2.acceptance_busbw_gbs('all_reduce'):.0f} GB/s")
print(f"2 nodes, NCCL default (NVLS-Tree): {dgx2.expected_busbw_gbs('all_reduce', algo='auto'):.0f} GB/s "
      f"(public 2 x 8 H100 NDR with NCCL's defaults: ~469, nccl-tests#309 via nccl#2409)")
for algo in ("ring", "tree", "nvls_tree", "hierarchical", "auto"):
    cst = dgx2.collective_cost("all_reduce", 1e9, 16, algo)
    print(f"  1 GB all_reduce on 16 GPUs, {algo:12s}: {cst.time_s * 1e3:5.2f} ms ({cst.choice})")

# %% [markdown]
# 两台机器之间最快的是 NVLS-Tree 和（教学用的）分层算法：只有 2 台服务器时，它们跨节点的数据量比环少近一半。
# 从第 3 台起，树的内部节点要收发 $2S$，NVLS-Tree 不再比环快（NVIDIA/nccl issue #1221：2 台 330→430 GB/s，4 台开不开 NVLS 都是 320 GB/s）。
# 所以验收时多节点用 `NCCL_ALGO=Ring` 的期望值（2 × DGX H100：370 GB/s），否则一条降速的轨道会被两节点的树掩盖（第 22 章）。
#
# **那份公开的 2 × 8 H100 结果怎么读。** GitHub 仓库 lessizzmore/create-a3mega-ztan-fork 的文件 `ztan-NCCL-test-result` 在 8 GiB 时打印
# algbw 180.71、busbw 338.82 GB/s。它跑在 Google **A3 Mega** 上：每台 8 × 200 Gbit/s（GPUDirect-TCPXO），每条轨道一条环的上限只有约
# $8 \times 24 = 192$ GB/s。338.82 远高于这个环上限——这只可能是两节点上的 tree / NVLS-Tree。它正好是「busbw 超过环上限 ⇒ 先问用的是哪种算法」
# 的例子，不能拿去和 2 × DGX H100 的 370 比（下一格把集群模型套到「8 × 200G 的 2 × 8 H100」上；A3 Mega 走的是 TCPXO 而不是 RDMA，
# 模型按 RDMA 的网卡效率算，只能作量级对照）：

# %%
# NBVAL_CHECK_OUTPUT
a3 = Cluster.system("DGX-H100", 2, nic_gbps=200.0)
print(f"A3 Mega-like 2 x 8 H100, 8 x 200G: ring bound {a3.acceptance_busbw_gbs():.0f} GB/s, "
      f"NCCL default ({a3.algorithm('all_reduce', 8 * 2**30)}) {a3.busbw_gbs('all_reduce', 8 * 2**30):.0f} GB/s at 8 GiB; "
      f"the public run printed 338.82 = {338.82 / a3.acceptance_busbw_gbs():.2f} x the ring bound")

# %% [markdown]
# 下图是模型给出的 busbw 随消息大小的曲线，左边 16 卡，右边 1,024 卡。实线是本章的教学用 α-β 算法：「flat ring (1 channel)」
# 和「flat tree (1 channel)」只有一个 channel、每跳 50 GB/s，大消息端停在 50 GB/s；「hierarchical」是上面的三段式分层算法。
# 虚线是集群模型在 DGX H100 上的 `NCCL_ALGO=Ring`（per-rail rings：8 块网卡一起用，受 NVLink 环 370 GB/s 限制），
# 点划线是集群模型替 NCCL 做的默认选择（每个尺寸在 ring / tree / NVLS-Tree 与三种协议里挑最快的）：

# %%
comm_x.busbw_vs_size_figure(ns=(16, 1024), bw_gbs=50.0, intra_bw_gbs=nvl)

# %% [markdown]
# 右图里分层算法在小消息处反而不如 tree：它的跨节点段用的是 128 个节点的环，延迟 $2 \times 127 \times 9.6$ µs ≈ 2.4 ms；
# 集群模型的 per-rail 环在小消息端也更快，因为它把节点内的跳按 NVLink 计、并为小消息换 LL 协议。
# 把跨节点段换成 tree，就得到了两者的优点——这就是 NCCL 多节点 tree 的结构（节点内是链，节点间是树）；
# 节点内再换成 NVLS，就是 NVLS-Tree：点划线在 1,024 卡的中等消息上比 per-rail 环高出一大截，这正是第 14 章里
# NCCL 在千卡规模为 25 MiB 的梯度桶自动选用的算法。
#
# **网络里的归约（SHARP）。** 还有一条路是让交换机来做加法：InfiniBand 的 SHARP（Quantum-2 交换机支持）让每个节点只向交换机发一次
# 数据、收一次结果，和 NVLS 在 NVSwitch 里做的事一样，只是搬到了网络层；NCCL 通过 CollNet（`NCCL_COLLNET_ENABLE=1` 加 SHARP 插件）使用它。
# 它不改变本章的结论——带宽项的系数从环的 $2\frac{n-1}{n}$ 降到约 1，延迟变成交换机树的深度——但要求交换机、固件、SM 与插件都配齐，
# 课程的集群模型没有把它算进去。
#
# ## 6. algbw 与 busbw：nccl-tests 打印的两个带宽
#
# nccl-tests（NVIDIA/nccl-tests 的 `doc/PERFORMANCE.md`）每行打印两个带宽：
#
# - **algbw** $= S / t$：最直观的「数据量 / 时间」，可以直接用来估算一次同样大小的操作要多久；
# - **busbw** $= \text{algbw} \times f(n)$：乘上一个只与操作和 rank 数有关的系数，让结果可以**和硬件链路带宽直接比较**，且与 $n$ 无关。
#
# | 操作 | busbw / algbw 系数 $f(n)$ |
# |---|---|
# | all_reduce | $2(n-1)/n$ |
# | reduce_scatter、all_gather、all_to_all | $(n-1)/n$ |
# | broadcast、reduce | $1$ |
#
# 系数正是 ring 算法带宽项里的 $m$：对理想的 ring，$t = m\,S/B$，所以 $\text{busbw} = \frac{S}{t}\,m = B$。
# 下图固定链路 50 GB/s、不计延迟，rank 数从 2 增加到 4,096：algbw 从 50 GB/s 掉到 25 GB/s，busbw 始终是 50 GB/s。

# %%
comm_x.algbw_vs_ranks_figure(bw_gbs=50.0)

# %%
# NBVAL_CHECK_OUTPUT
alg = comm.algbw_gbs(8589934592, 47535e-6)  # the public 2 x 8 H100 row quoted above: 8 GiB in 47,535 us
print(f"algbw = 8589934592 B / 47535 us = {alg:.2f} GB/s")
print(f"busbw = algbw x 2*15/16 = {comm.busbw_gbs('all_reduce', alg, 16):.2f} GB/s  (the tool printed 338.82)")

# %% [markdown]
# ## 7. 交互探索：α、B、n 与算法
#
# 左图：所选操作在 8 B 到 8 GiB（nccl-tests `-b 8 -e 8G -f 2` 的范围）上三种算法的时间，粗线是右图所用的算法；
# 虚线是 all-reduce 的 ring/tree 交叉点。右图：所选算法的 algbw 与 busbw。建议按顺序试：
#
# 1. 把 rank 数从 16 拖到 1,024，观察 ring 的平台（延迟项）抬高 68 倍，而 tree 只抬高约 2.5 倍；
# 2. 把每 rank 带宽换成 3.125 GB/s（整台服务器只有一个 25 GbE 口：每条环经过这台服务器时都只能走这一个口），看大消息端整体上移 16 倍；
# 3. 右图选 hierarchical，看 busbw 怎样超过网卡带宽，再把 NVLink 从 450 换成 200（H800），看它降多少。

# %%
comm_x.collective_time_explorer(op="all_reduce", n=16, bw_gbs=50.0, latency_us=9.6, intra_bw_gbs=450.0)

# %% [markdown]
# ## 8. 实操命令：用 nccl-tests 测集合通信
#
# nccl-tests 是 NVIDIA 官方的集合通信基准（github.com/NVIDIA/nccl-tests）。编译与单机 8 卡测试：
#
# ```bash
# git clone https://github.com/NVIDIA/nccl-tests.git && cd nccl-tests
# make MPI=1 MPI_HOME=/usr/mpi/gcc/openmpi-4.1.7a1 CUDA_HOME=/usr/local/cuda NCCL_HOME=/usr   # 路径按你的环境改
# ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 8          # 单进程驱动 8 张卡：8 B 到 8 GiB，每次乘 2
# ```
#
# 多机时每张卡一个进程（`-g 1`），用 mpirun 或 Slurm 启动：
#
# ```bash
# mpirun -np 16 -N 8 --hostfile hosts -x NCCL_DEBUG=INFO -x NCCL_IB_HCA=mlx5 \
#        ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1
# srun -N 2 --ntasks-per-node=8 --gpus-per-node=8 ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1
# NCCL_ALGO=Ring ./build/all_reduce_perf -b 1M -e 1G -f 2 -g 8   # 强制 ring，与 NCCL_ALGO=Tree 对比（第 15 章）
# ```
#
# 同一套程序还有 `all_gather_perf`、`reduce_scatter_perf`、`alltoall_perf`、`broadcast_perf`、`reduce_perf`。
# 下面的输出是**示意样例**：由课程的集群模型 `labutil.cluster` 为 2 台 DGX H100（16 卡，每台 8 × 400G）算出时间，
# 算法固定为 ring（相当于 `NCCL_ALGO=Ring`：α = 9.6 µs，busbw 上限 370 GB/s），
# 再按 nccl-tests 的真实表格格式（列布局与数字格式见 nccl-tests `src/common.cu`）打印；它不是一次测量。
# 我们用 `labutil.parsers.parse_nccl_tests` 解析它——同一个解析器也能读真实输出。

# %%
sample = comm_x.nccl_tests_sample_text("all_reduce", n_nodes=2, cluster=Cluster.system("DGX-H100"), algo="ring")
print("\n".join(sample.splitlines()[:3] + ["..."] + sample.splitlines()[20:24] + ["..."] + sample.splitlines()[-10:]))

# %%
# NBVAL_CHECK_OUTPUT
res = parse_nccl_tests(sample)
print(f"op={res.op} ranks={res.n_ranks} hosts={len(res.hosts)} rows={len(res.rows)} avg busbw={res.avg_busbw_gbs:.2f} GB/s")
for size in (8, 2**20, 2**27, 2**33):
    row = res.row_at(size)
    print(f"{size:>11d} B  time {row.time_us:10.1f} us  algbw {row.algbw_gbs:6.2f}  busbw {row.busbw_gbs:6.2f}  "
          f"algbw x 2(n-1)/n = {comm.busbw_gbs('all_reduce', row.algbw_gbs, res.n_ranks):6.2f}")

# %% [markdown]
# 读这张表的三个要点：
#
# 1. **小消息看 time**：8 B 那一行几十微秒，是模型为它选的小消息协议（LL）的延迟：30 步里 28 步走 NVLink（LL 每步 0.6 µs，
#    多节点时 NCCL 按主机侧开销抬到 1 µs），2 步跨网络（每步 2.7 µs），再加 6.6 µs 的固定开销。
#    如果把 Ring/Simple 的网络 α 硬套到每一步（$30 \times 9.6$ µs = 288 µs），会高估好几倍。
# 2. **大消息看 busbw**：8 GiB 时 busbw 逼近 2 × DGX H100 的环上限 370 GB/s（NVLink 环与 8 块网卡中较慢的那个）。
#    低到多少算异常、怎样定验收阈值，是第 22、23 章的内容。
# 3. **`Avg bus bandwidth` 是所有行的平均**，被小消息拉低，不能拿它当验收标准。
#
# 把表里的 (size, time) 拟合成 $t = a + b\,S$，再按 ring 模型换算，就能反推出 α 和 B——lab02 会对你自己测出的表做同样的事。
# 但拿模型生成的表去拟合模型，只能原样拿回模型的参数，什么也证明不了。下面拟合一份**真实**的粘贴：NVIDIA/nccl-tests issue #232
# 里 2 台各 1 张 H100、4 块 RoCE 网卡、`NCCL_ALGO=Tree` 的前五行（2 MiB 到 32 MiB）：

# %%
# NBVAL_CHECK_OUTPUT
real = busbw_validation.paste("h100-2x1-tree-4nic")
run = parse_nccl_tests(real["text"])
fit = fit_alpha_beta([r.size_bytes for r in run.rows], [r.time_us * 1e-6 for r in run.rows], "all_reduce", real["ranks"])
print(f"{real['url']}: {len(run.rows)} rows, {run.rows[0].size_bytes / 2**20:.0f}-{run.rows[-1].size_bytes / 2**20:.0f} MiB")
print(f"fitted alpha = {fit.latency_s * 1e6:.1f} us per step, B = {fit.bw_gbs:.1f} GB/s, R^2(log t) = {fit.r2_log:.4f}")
for r in run.rows:
    t = fit.a_s + fit.b_s_per_byte * r.size_bytes
    print(f"  {r.size_bytes:>9d} B: measured {r.time_us:6.1f} us, fit {t * 1e6:6.1f} us ({t * 1e6 / r.time_us - 1:+.0%})")

# %% [markdown]
# 拟合出的 α（每步约三十微秒）既不是 NVLink 的 3.4 µs，也不是网络的 9.6 或 14 µs，而是这条路径上**各种开销混合后的等效值**；
# 各行的残差有正有负，说明一条直线只是近似（Tree 的流水线在小尺寸上还没填满）。B（约 47 GB/s）接近一块 400G 网卡的可达带宽——
# 这台机器每个节点只有一张卡，用不上另外三块网卡（issue 的标题正是「达不到理论带宽」）。

# %% [markdown]
# > **模型与测量：这些常数从哪里来、在你的机器上怎样换成实测值**
# >
# > - **版本。** 本章 α-β 模型的 α（网络 9.6 µs、NVLink 3.4 µs 每步）和第 15 章的协议常数，都转写自 NVIDIA/nccl 的 `src/graph/tuning.cc`，
# >   NCCL **2.7.5**（commit 01afd20）的 `hwLat` 与 `baseLat` 表（`labutil/data/nccl_tuning.toml` 写明了出处）。
# >   它们是 NCCL 自己用来**挑算法**的预测值，不是某台机器的测量；之后的版本加入了 NVLS、NVLS-Tree、CollNet 和 PAT，常数也调过多次——
# >   网络上 Ring/Simple 的每步延迟在 2.12 是 28 µs，2.17 回到 9.6 µs，**从 2.18.1 到当前的 2.30.7 是 14 µs**。
# >   课程的集群模型 `labutil.cluster` 用 2.30.7 的整张表（`labutil.nccl_tuning.CURRENT`）。
# > - **为什么 9.6 µs 只适用于大消息。** 这个数是 Ring/**Simple** 协议的每步延迟：Simple 按大块搬运，每块之后要做一次内存栅栏再置标志，
# >   大消息时这点开销被带宽摊薄。小消息时 NCCL 换成 **LL**（每 8 字节里 4 字节数据、4 字节标志，接收方看到标志就知道数据到了，省掉栅栏）
# >   或 **LL128**（每 128 字节里 120 字节数据），同一张网卡上的每步延迟只有 2.7–4.0 µs，代价是带宽打折（LL 只剩约 1/4）。
# >   所以「一个 α 管所有尺寸」本身就是近似：8 B 那一行，用 Simple 的 α 算出 288 µs，而 NCCL 2.7.5 的模型自己预测 Tree/LL 约 28 µs。
# > - **在你自己的机器上拟合。** lab02 用 `labutil.bench.collectives` 扫 8 B 到 1 GiB，对 (size, time) 做按相对误差加权的最小二乘
# >   $t = a + bS$，再按 ring 模型换算 $\alpha = a / (2(n-1))$、$B = \frac{2(n-1)}{n} / b$——就是上面 `fit_alpha_beta` 那一步。
# >   拟合出的 α 是**各种开销混合后的等效值**（上面那份真实粘贴里约 30 µs）；B 则应接近第 22 章的期望 busbw。lab03 再用 `NCCL_PROTO=LL|LL128|Simple`、
# >   `NCCL_ALGO=Ring|Tree` 分别固定协议和算法重测，你会亲眼看到小消息端随协议变化、大消息端随算法变化。
# >   拿自己拟合的 α、B 代回本章的公式，才是对你的集群有效的模型。
#
# 下面用 `labutil.nccl_tuning` 把 2 × 8 卡时各（算法, 协议）组合的固定延迟列出来，和「Ring/Simple 的 α × 30 步」对照：

# %%
# NBVAL_CHECK_OUTPUT
from labutil import nccl_tuning
tiny = nccl_tuning.allreduce_table([8], 16, 2)
print(f"alpha-beta with the Ring/Simple alpha: 30 x 9.6 us = {30 * comm.NET_STEP_LATENCY_S * 1e6:.0f} us")
for key in ("ring/Simple", "ring/LL128", "ring/LL", "tree/LL"):
    print(f"NCCL 2.7.5 tuner, {key:11s}: latency {tiny.latency_us[key]:6.1f} us")
print(f"NCCL 2.7.5's pick for 8 B on 2 x 8 GPUs: {tiny.choice[0]} ({tiny.best_time_us[0]:.1f} us)")
now = dgx2.collective_cost("all_reduce", 8, 16)
print(f"NCCL 2.30.7 constants (labutil.cluster), 8 B on 2 x 8 GPUs: {now.choice} ({now.time_s * 1e6:.1f} us)")

# %% [markdown]
# 注意即使同样是 Ring/Simple，NCCL 2.7.5 自己的预测也只有上面那个数而不是 288 µs：环的 30 步里只有 $2(\text{节点数}-1) = 2$ 步跨网络，
# 其余 28 步走 NVLink（每步 3.4 µs，外加 8.4 µs 的 baseLat）。平铺 α-β 模型把每一步都按网络计，这是小消息被高估的第二个原因；
# 换成 LL 协议再省一半，换成 Tree 再省一点，最终约为 288 µs 的十分之一。当前版本的常数（最后一行）给出同一个量级。

# %% [markdown]
# ## 9. 常见误区（每一条都用算出来的数字反驳）
#
# ### 误区一：「algbw 只有网卡速率的一半，说明网络有问题」
#
# 对 all-reduce，即使网络完美，algbw 也只有 $B \cdot \frac{n}{2(n-1)}$：16 卡时 50 GB/s 的链路只能得到 26.7 GB/s 的 algbw。
# 该拿来和网卡比的是 busbw。

# %%
# NBVAL_CHECK_OUTPUT
for n in (2, 8, 16, 1024):
    t = comm.collective_time_s("all_reduce", 8 * 2**30, n, 50.0, 0.0)
    a = comm.algbw_gbs(8 * 2**30, t)
    print(f"n={n:5d}: perfect 50 GB/s link -> algbw {a:5.2f} GB/s, busbw {comm.busbw_gbs('all_reduce', a, n):5.2f} GB/s")

# %% [markdown]
# ### 误区二：「卡越多，每次 all-reduce 传的数据越多，通信时间随卡数线性增长」
#
# 带宽项的系数 $2\frac{n-1}{n}$ 有上限 2：从 8 卡到 1,024 卡，1 GB all-reduce 的带宽项只从 1.75 倍涨到接近 2 倍（下一格）。
# 真正随 $n$ 线性增长的是 ring 的**延迟项**——所以大规模的对策是换算法（tree、分层），而不是只加带宽。

# %%
# NBVAL_CHECK_OUTPUT
b8 = comm.collective_cost("all_reduce", 1e9, 8, 50.0, algo="ring")
b1k = comm.collective_cost("all_reduce", 1e9, 1024, 50.0, algo="ring")
print(f"bandwidth term: 8 ranks {b8.bandwidth_s * 1e3:.2f} ms -> 1024 ranks {b1k.bandwidth_s * 1e3:.2f} ms "
      f"(+{b1k.bandwidth_s / b8.bandwidth_s - 1:.0%})")
print(f"latency term  : 8 ranks {b8.latency_s * 1e3:.3f} ms -> 1024 ranks {b1k.latency_s * 1e3:.2f} ms "
      f"(x{b1k.latency_s / b8.latency_s:.0f})")

# %% [markdown]
# ### 误区三：「busbw 不可能超过网卡速率，超过了就是测错了」
#
# busbw 的系数假设所有 rank 的流量都走同一种链路。多节点时 NCCL 的 8 条环各走一块网卡，分层算法把大部分流量放在 NVLink 上，
# NVLS（NVSwitch 内归约）还会在交换机里做加法，这时 busbw 高于一块网卡的速率是正常的（stas00/ml-engineering 的网络章节专门提醒了这一点）。
# 2 × DGX H100 用 `NCCL_ALGO=Ring` 的期望 busbw 是 370 GB/s，远高于一块网卡的 50 GB/s；用 NCCL 的默认算法（两节点上是 NVLS-Tree）
# 能到 480 GB/s 左右（公开结果约 469 GB/s），超过了环的上限；A3 Mega 那份 338.82 GB/s 也远高于它 8 × 200G 的环上限（第 5 节的输出）。
# 单机 8×H100 开 NVLS 时 480 GB/s，甚至高于 NVLink 的 450 GB/s 线速。所以验收时要写清楚：测的是哪种拓扑、哪种算法，对照的是哪条链路。
# 反过来的坑也真实发生过：NVIDIA/nccl issue #1031 里，用户在 2 台 H100 上测得 all_reduce busbw 310 GB/s，扩到 4 台只剩 180 GB/s，以为是集群扩容出了问题；
# 维护者指出 2 节点的结果用上了 NVLS 相关的算法、与更多节点不可直接比较，对比时应在 2 节点上也设 `NCCL_ALGO=Ring`（第 15 章）。
#
# ### 误区四：「大消息测出的带宽可以直接套到小消息上」
#
# 25 MiB 的 DDP 桶在 1,024 卡的平铺 ring 上，按「大消息 busbw ≈ 50 GB/s」估算只要 1 ms 左右，α-β 模型给出的却是它的二十倍左右
# ——绝大部分是延迟项（下一格；第 14 章 §6 用 NCCL 按跳区分的延迟重算了这个例子：差距小一些，但同样不可忽略）。
# 估算通信时间必须用完整的 $k\alpha + mS/B$，而不是只用带宽。

# %%
# NBVAL_CHECK_OUTPUT
naive = 2 * 1023 / 1024 * bucket / 50e9
full = comm.collective_time_s("all_reduce", bucket, 1024, 50.0, algo="ring")
print(f"25 MiB bucket, 1024 ranks: bandwidth-only estimate {naive * 1e3:.2f} ms, alpha-beta model {full * 1e3:.2f} ms "
      f"({full / naive:.0f}x)")

# %% [markdown]
# ## 10. 练习
#
# 把答案填进 `answer_k`（数字即可，单位见题目），运行单元格查看判分；卡住时调用 `exercise("ch13.k").hint(1)`。
#
# **练习 1**：8 个 rank 做 1 GB（$10^9$ B）的 ring all-reduce，每 rank 带宽 50 GB/s，α = 9.6 µs，需要多少毫秒？

# %%
answer_1 = None
exercise("ch13.1").check(answer_1)

# %% [markdown]
# **练习 2**：`all_reduce_perf` 在 16 个 rank 上，8 GiB 那一行打印 algbw = 180.71 GB/s。它打印的 busbw 是多少 GB/s？

# %%
answer_2 = None
exercise("ch13.2").check(answer_2)

# %% [markdown]
# **练习 3**：64 个 rank、每 rank 50 GB/s、α = 9.6 µs。消息大于多少 MB（$10^6$ B）时 ring all-reduce 比 double binary tree 快？

# %%
answer_3 = None
exercise("ch13.3").check(answer_3)

# %% [markdown]
# **练习 4**：两台 DGX H100（16 卡，每卡一块 400G 网卡 = 50 GB/s，NVLink 单向 450 GB/s），1 GB all-reduce：
# 分层算法比「只走网卡的平铺 ring」快几倍？（α 用模块默认值：网络 9.6 µs，NVLink 3.4 µs）

# %%
answer_4 = None
exercise("ch13.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：64 KB（64e3 B）的 all_reduce、64 个 rank、每 rank B = 50 GB/s、α = 9.6 µs：按 α-β 模型，ring 和 tree 哪个更快？

# %%
answer_5 = None  # 'ring' 或 'tree'
exercise("ch13.5").check(answer_5)

# %% [markdown]
# **练习 6**：两台 DGX H100（每台 8 × 400G NDR）做验收，`NCCL_ALGO=Ring`、大消息的 all_reduce：busbw 应该达到多少 GB/s？
# （NCCL 的环在服务器内走 NVLink 可达约 370 GB/s，每块 400G 网卡可达约 48 GB/s。）

# %%
answer_6 = None
exercise("ch13.6").check(answer_6)

# %% [markdown]
# ## 11. 小结
#
# - 集合通信的代价用 α-β 模型描述：$T = k\alpha + mS/B$；$B$ 是每 rank 每方向的带宽，NVLink 目录值要除以 2。
# - Ring all-reduce 的带宽项 $2\frac{n-1}{n}\frac{S}{B}$ 是下界（带宽最优），代价是 $2(n-1)\alpha$ 的线性延迟。
# - Double binary tree 的延迟是 $2\lceil\log_2 n\rceil\alpha$，带宽项 $2S/B$；交叉点 $S^* = ((n-1)-\lceil\log_2 n\rceil)\alpha B n$ 随规模迅速变大，所以大规模时 NCCL 用 tree。
# - 分层算法把每卡网卡上的数据量除以每节点卡数；NCCL 的按轨道建环让一台服务器的所有网卡一起工作：2 × DGX H100 用 `NCCL_ALGO=Ring` 的 busbw 上限是 min(NVLink 环 370, 8 × 48 = 384) = 370 GB/s；两节点上 NCCL 默认的 NVLS-Tree 约 480 GB/s，单机 8×H100 用 NVLS 约 480 GB/s。
# - busbw 超过环的上限时，先问用的是哪种算法（两节点的 tree / NVLS-Tree），再下结论。
# - nccl-tests 的 busbw = algbw × 系数，可与链路速率直接比较；小消息看 time，大消息看 busbw。
#
# 下一章用这个模型回答一个采购问题：给定模型和 GPU，网络要多快，GPU 才不会闲着？
#
# ## 参考资料
#
# - R. Thakur, R. Rabenseifner, W. Gropp, *Optimization of Collective Communication Operations in MPICH*, IJHPCA 19(1), 2005：α-β(-γ) 模型，§4 各算法代价（ring、递归倍增/减半、Bruck、二项树、Rabenseifner）。
# - P. Patarasuk, X. Yuan, *Bandwidth Optimal All-reduce Algorithms for Clusters of Workstations*, JPDC 69(2), 2009：ring all-reduce 带宽下界。
# - S. Jeaugey (NVIDIA), *Massively Scale Your Deep Learning Training with NCCL 2.4*, NVIDIA Technical Blog, 2019：double binary tree。
# - NVIDIA/nccl，`src/graph/tuning.cc`：v2.7.5-1（commit 01afd20，`hwLat` 表：NET Ring/Simple 9.6 µs，NVLink Ring/Simple 3.4 µs；tree 带宽比 0.5；tree 延迟公式）
#   与 v2.30.7-1（NET Ring/Simple 14 µs，NVLS / NVLS-Tree 的带宽与延迟，集群模型用的版本）；两者都在 `labutil/data/nccl_tuning.toml`。
# - NVIDIA/nccl-tests issue #232（2 × 1 H100、4 块 RoCE 网卡、`NCCL_ALGO=Tree` 的输出，本章用来拟合 α 与 B）；NVIDIA/nccl issue #209（两节点 tree 只让网络承担一半流量）；
#   NVIDIA/nccl issue #1221（两节点 NVLS 330→430 GB/s，四节点 320 GB/s）；NVIDIA/nccl issue #2409 引用的 nccl-tests #309（2 × 8 H100 默认约 470 GB/s）。
# - NVIDIA/nccl-tests，`doc/PERFORMANCE.md`（algbw、busbw 与各操作系数）；`src/common.cu`（输出表格式）。
# - 公开的 `all_reduce_perf` 2×8 H100 输出：github.com/lessizzmore/create-a3mega-ztan-fork，文件 `ztan-NCCL-test-result`（8 GiB：algbw 180.71、busbw 338.82 GB/s；
#   Google Cloud A3 Mega，8 × 200 Gbit/s GPUDirect-TCPXO，见 Google Cloud 文档「Networking and GPU machines」）。
# - A. Sergeev, M. Del Balso, *Horovod: fast and easy distributed deep learning in TensorFlow*, 2018：分层 all-reduce。
# - stas00/ml-engineering，`network/README.md`：algbw/busbw 说明与 NVLS 下 busbw 超过线速的提醒。
# - NCCL 的可达带宽（`labutil/data/systems.toml`）：S. Jeaugey，github.com/NVIDIA/nccl-tests/issues/212（8×H100：ring 约 370、NVLS 约 480 GB/s）；
#   github.com/NVIDIA/nccl-tests/issues/119（每块 200G 网卡约 24 GB/s，100G 约 12 GB/s）；github.com/NVIDIA/nccl/issues/1455（NVLS 随卡数的变化）。
# - NVIDIA/nccl issue #1031（2 节点 310 GB/s 与 4 节点 180 GB/s 的 NVLS 对比不可比，应以 `NCCL_ALGO=Ring` 对照）。
# - NVIDIA H100 Tensor Core GPU 数据手册（NVLink 900 GB/s 双向）；ConnectX-7 产品简介（400 Gb/s）；PyTorch DDP 文档（`bucket_cap_mb=25`）。
# - NVIDIA Scalable Hierarchical Aggregation and Reduction Protocol (SHARP) 文档与 NCCL 环境变量文档（`NCCL_COLLNET_ENABLE`）：交换机内归约与 NCCL 的 CollNet 算法。
