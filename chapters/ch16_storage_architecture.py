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
# # 第16章 存储架构：并行文件系统、对象存储与分层设计
#
# > 模块四「存储与数据」的第 1 章。前置：第 3 章（集群四层架构与存储网络）、第 9 章（服务器节点、PCIe 与本地 NVMe）。
# > 本章之后，第 17 章讲检查点怎么写进这套存储，第 18 章讲数据怎样从存储一路流进 GPU。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 说清楚 Lustre / BeeGFS / GPFS 这类**并行文件系统**、MinIO 这类**对象存储**和计算节点**本地 NVMe 缓存**各自擅长什么；
# - 区分**吞吐（GB/s）**与 **IOPS**，并用「请求大小」把两者联系起来，解释为什么小文件会拖垮一套带宽很高的存储；
# - 用模型算出训练读取需要的聚合带宽，并把「数十 GB/s 的聚合读写带宽」这类说法落到具体数字上；
# - 设计热 / 温 / 冷三层存储，用「容量约束」和「带宽约束」两个条件算出每层需要几台存储服务器；
# - 用计算反驳种子课程的误区二：训练数据、检查点、日志放在同一个存储池里，检查点突发会让数据加载停顿。

# %%
from labutil.notebook import setup, show_table, MarkdownTable
from labutil import storage, dataloading, hardware, models, architecture
from labutil.parsers import fio
from labutil.explore import storage as storage_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 为什么 GPU 集群需要专门的存储
#
# 一台 8 卡 GPU 服务器自带几十 TB 的 NVMe 盘（目录里的 DGX H100 是 8 块 3.84 TB，共 30.72 TB），看起来已经不少。
# 但集群存储要解决的是三个单机解决不了的问题：**共享**（上千个进程要看到同一份数据集和同一个检查点目录）、
# **聚合带宽**（几百台机器同时读，总带宽要到数十乃至数百 GB/s）、**持久与可靠**（一台计算节点坏了，它写的检查点不能跟着丢）。
# 种子课程对存储层的描述是：「并行文件系统（如 Lustre、BeeGFS）或分布式对象存储（如 MinIO），提供数十 GB/s 的聚合读写带宽」。
# 本章要回答的就是：这「数十 GB/s」从哪里来、够不够、不够时瓶颈在哪里。
#
# 三类系统各有分工：
#
# | 类型 | 代表 | 访问方式 | 擅长 | 不擅长 |
# |---|---|---|---|---|
# | 并行文件系统 | Lustre、GPFS（IBM Storage Scale）、BeeGFS | POSIX 挂载，客户端直接从多个数据服务器条带化读写 | 大文件高带宽、多客户端并发写同一目录（检查点） | 海量小文件、元数据密集操作 |
# | 对象存储 | MinIO、Ceph RGW、云上 S3 | HTTP（S3 API），整对象 GET/PUT | 容量大、成本低、纠删码省空间、跨机房 | 低延迟随机读、原地改写 |
# | 本地 NVMe 缓存 | 计算节点自带的 U.2/E3.S SSD | 本地文件系统 | 延迟最低、带宽随节点数线性增长 | 不共享、节点坏了数据就没了 |
#
# 并行文件系统的核心思想是**把一个文件切成条带（stripe）分散到多台数据服务器上**。Lustre 里，元数据（文件名、权限、布局）
# 由 MDS/MDT 管理，数据由 OSS/OST 承担；客户端打开文件时从 MDS 拿到布局，之后直接与各个 OSS 并行读写，不再经过元数据服务器。
# 所以一个大文件的读写带宽可以是很多台 OSS 之和——这正是检查点需要的。代价是：每次 open/stat/close 都要找 MDS，
# 当训练一秒钟要打开几百万个小文件时，MDS 先扛不住。GPFS 的思路类似（NSD 服务器 + 分布式元数据），BeeGFS 也把元数据服务与存储服务分开。
#
# 现场采购时，很少有人从开源 Lustre 源码起步，更常见的是把上面三类做成产品的商用系统。记住它们各自属于哪一类、客户端怎么访问，比记住品牌更有用：
#
# | 系统 | 本质 | 客户端与数据路径 |
# |---|---|---|
# | DDN EXAScaler / AI400X2 | Lustre 一体机 | Lustre 客户端，条带化直连各 OSS |
# | IBM Storage Scale System | GPFS 一体机 | GPFS 客户端（NSD 协议） |
# | WEKA | 为 NVMe 设计的分布式并行文件系统 | 自带 POSIX 客户端；冷数据分层到对象存储 |
# | VAST | 共享闪存池之上的 NFS | NFS over RDMA、多路径；元数据和数据在同一个闪存池 |
# | NetApp / Pure / Dell 等 | 企业阵列 | pNFS、NFS over RDMA，或各家的并行客户端 |
#
# NVIDIA 对 DGX SuperPOD / BasePOD 有一套合作伙伴存储认证，列表本身就是一张「哪些系统在 GPU 集群规模上验证过」的清单。
# 但认证只说明它能达到某一档性能，不替你回答本章的问题：单个客户端能跑多快（第 17 章的 $b_w$）、聚合读写带宽和元数据速率各是多少、
# 是否支持 GPUDirect Storage、容量和带宽能否分开扩展——下面几节把这些问题变成可以算、可以测的数字。
#
# ## 2. 吞吐与 IOPS：同一块盘的两张面孔
#
# 存储性能有两个维度：**吞吐**（每秒多少字节）与 **IOPS**（每秒多少次请求）。两者通过请求大小 $s$ 联系在一起：
#
# $$
# \text{吞吐}(s) \;\le\; \min\bigl(\text{顺序带宽},\; \text{IOPS}_{4K} \times s\bigr)
# $$
#
# 小请求时被 IOPS 限住，大请求时被带宽限住——和第 6 章的 roofline 是同一种图形。机械盘的 IOPS 来自寻道和旋转，
# 只有一两百；NVMe 盘内部几十个闪存通道并行，IOPS 上百万。目录 `storage.toml` 里三块参考盘：

# %%
show_table([{"media": m, "kind": storage.media(m).kind, "capacity_tb": storage.media(m).capacity_tb,
             "read_gbs": storage.media(m).read_gbs, "write_gbs": storage.media(m).write_gbs,
             "read_iops_4k": storage.media(m).read_iops} for m in storage.media_names()])

# %%
# NBVAL_CHECK_OUTPUT
for m in storage.media_names():
    t4k = storage.device_throughput_gbs(m, 4096)
    t1m = storage.device_throughput_gbs(m, 1 << 20)
    print(f"{m:10s} random 4 KiB: {t4k * 1e3:9.2f} MB/s   random 1 MiB: {t1m * 1e3:9.1f} MB/s")
print(f"PCIe Gen4 x4 ceiling: {storage.pcie_gbs(4, 4):.2f} GB/s, Gen5 x4: {storage.pcie_gbs(5, 4):.2f} GB/s")

# %% [markdown]
# 一块 20 TB 机械盘做 4 KiB 随机读，只有 0.69 MB/s——是它顺序带宽 285 MB/s 的 1/400。同一块 Gen4 NVMe 做 4 KiB 随机读
# 仍有约 5.9 GB/s，接近 PCIe Gen4 x4 链路的 7.88 GB/s 上限。这就是为什么「热数据上闪存」几乎是 AI 集群的共识：
# 训练数据的读取模式是**大量随机样本**，机械盘在这种模式下的有效带宽会塌掉两个数量级。

# %%
storage_x.io_size_figure()

# %% [markdown]
# ## 3. 训练到底要多少读带宽？
#
# 把需求从 GPU 一侧倒推回来：集群每秒消化的样本数乘以每个样本的字节数，就是存储必须持续提供的读带宽：
#
# $$
# B_{\text{read}} = N_{\text{GPU}} \times \text{samples/s per GPU} \times \text{bytes/sample}.
# $$
#
# 以视觉训练为例：NVIDIA 公布的 ResNet-50 在 1 张 A100 80GB 上的混合精度训练吞吐是 2,470 张/秒；ImageNet 训练集
# 138 GB、1,281,167 张，平均每张 107.7 kB。一千卡规模：

# %%
# NBVAL_CHECK_OUTPUT
req = storage.data_read_requirements(1024 * dataloading.RESNET50_A100_IMG_S, dataloading.IMAGENET_MEAN_JPEG_BYTES)
print(f"1,024 A100 x {dataloading.RESNET50_A100_IMG_S:,.0f} img/s: read {req.read_gbs:.1f} GB/s, "
      f"{req.files_per_s / 1e6:.2f} M file opens/s, {req.metadata_ops_per_s / 1e6:.2f} M metadata ops/s")

# %% [markdown]
# 272 GB/s 的读带宽，每秒 253 万次文件打开——这已经远超「数十 GB/s」。反过来，LLM 预训练（第 18 章细算）按 6·N·D
# 和 40% MFU，一张 H100 训练 7B 模型每秒约消化 1 万个 token，数据是预先分词好的 uint16 数组：

# %%
# NBVAL_CHECK_OUTPUT
llm_tok_s = dataloading.llm_tokens_per_s_per_gpu(models.transformer("llama2-7b").params(),
                                                 hardware.gpu("H100-SXM").bf16_tflops, 0.40)
print(f"Llama-2-7B on H100-SXM at MFU 0.40: {llm_tok_s:,.0f} tokens/s per GPU; 1,024 GPUs read "
      f"{1024 * llm_tok_s * dataloading.token_bytes(32000) / 1e6:.0f} MB/s of uint16 tokens")

# %% [markdown]
# 千卡加起来每秒只读约 20 MB，是 ResNet-50 的万分之一。所以「存储要多快」没有统一答案：
# **视觉与多模态训练是读带宽与 IOPS 的大户，LLM 训练的压力则集中在检查点写入**（第 17 章）。种子课程说的「数十 GB/s」
# 对应的是中等规模的混合负载；设计时要分别算读和写，而不是抄一个数字。
#
# 这些字节走的是哪张网？第 3 章把集群网络分成计算、存储、前端、带外四个平面。DGX H100 的 8 块 400G 网卡只接计算网（梯度同步），
# 另有 2 块双口 ConnectX-7 接存储网；课程的集群规划（`architecture.plan_cluster`）给每个节点 2 个 200 Gb/s 存储端口，叶交换机按不超过 2:1 收敛来配上行。
# 把上面的视觉训练摊到每个节点上：
# %%
# NBVAL_CHECK_OUTPUT
cl = architecture.plan_cluster(1024, server="DGX-H100")
sto = cl.plane("storage")
node_gbs = sto.node_gbps / 8
print(f"storage plane, 1,024 GPUs = {cl.nodes} DGX-H100: {sto.ports_per_node} x {sto.port_gbps:.0f} Gb/s = {node_gbs:.0f} GB/s "
      f"per node; {cl.nodes * node_gbs:,.0f} GB/s of client ports, {cl.nodes * node_gbs / sto.oversubscription:,.0f} GB/s "
      f"above the leaves ({sto.oversubscription:.2f}:1 oversubscribed)")
print(f"ResNet-50 at 1,024 GPUs: {req.read_gbs / cl.nodes:.2f} GB/s per node = "
      f"{100 * req.read_gbs / cl.nodes / node_gbs:.0f} % of the node's storage ports")
MarkdownTable(f"每个节点只要读 {req.read_gbs / cl.nodes:.1f} GB/s，是它存储端口的 "
              f"{100 * req.read_gbs / cl.nodes / node_gbs:.0f}%；{cl.nodes} 个节点的存储端口合计 "
              f"{cl.nodes * node_gbs / 1e3:.1f} TB/s，远大于 {req.read_gbs:.0f} GB/s 的需求。所以存储的瓶颈几乎从来不在计算节点的网卡上，"
              "而在存储服务器一侧的带宽和元数据服务上——这正是下一节要规划的东西。反过来，检查点和数据加载走存储网、不走计算网，"
              "所以第 14 章算的梯度同步带宽里不必为它们留余量；但存储网本身收敛了，规划存储服务器台数时要确认叶—脊上行也扛得住。")

# %% [markdown]
# ## 4. 热 / 温 / 冷分层与读写分离
#
# 数据的「温度」决定它该放在哪一层：
#
# | 层 | 放什么 | 介质 | 设计约束 |
# |---|---|---|---|
# | 热（hot） | 当前训练用的数据集 | 全闪存并行文件系统，或计算节点本地 NVMe 缓存 | 读带宽、IOPS |
# | 检查点 | 最近几个检查点 | 独立的并行文件系统（通常也是闪存） | 突发写带宽 |
# | 冷（cold） | 原始数据、归档检查点、日志 | 对象存储（MinIO，HDD + 纠删码） | 容量、成本，能在合理时间内回灌热层 |
#
# 表里的「计算节点本地 NVMe 缓存」不是手工拷数据，而是有现成机制的：Linux 的 FS-Cache（`cachefilesd`）把网络文件系统第一次读到的数据缓存到本地盘，
# DGX GB200 的用户指南就建议把计算托盘上的 E1.S NVMe 做成 RAID 0 给它用，并把本地 NVMe 用作检查点的「先落本地、再刷回共享存储」的加速层；
# BeeGFS 的 BeeOND 在作业分到的节点上用本地 NVMe 临时拼出一个并行文件系统，作业结束即销毁；Lustre 的 PCC（Persistent Client Cache）把整个文件缓存在客户端本地盘上；
# WEKA、VAST 等商用系统也有各自的客户端缓存。它们的共同限制是第 1 节表里那一行：本地盘不共享、节点坏了数据就没了，
# 所以只能放**可以重新读回**的东西（数据集副本、检查点的第一份拷贝），不能是唯一的一份。
#
# 每一层需要的服务器台数由两个条件中更严的那个决定：
#
# $$
# n = \max\left(\left\lceil \frac{C_{\text{need}}}{C_{\text{usable}}\times f_{\max}} \right\rceil,\;
#               \left\lceil \frac{B_{\text{need}}}{B_{\text{server}}} \right\rceil\right),
# \qquad B_{\text{server}} = \min(n_{\text{drive}} \cdot b_{\text{drive}} \cdot \eta,\; n_{\text{NIC}} \cdot \text{NIC rate}).
# $$
#
# 其中 $\eta$ 是保护方案下承载用户数据的比例（RAID-6 8+2 为 0.8；MinIO 16 盘纠删集默认 EC:4，为 0.75），
# $f_{\max}$ 是容量使用上限（我们取 0.8，给碎片、重建和增长留余量）。目录里三个「积木」是**示意性配置**——机箱形态是假设，
# 但带宽都是从盘的 datasheet 和网卡速率算出来的：

# %%
show_table([{"server": n, "media": s.media, "drives": s.drives, "usable_tb": s.usable_tb, "read_gbs": s.read_gbs,
             "write_gbs": s.write_gbs, "nic_gbs": s.nic_gbs}
            for n, s in ((n, storage.server_spec(n)) for n in storage.server_names())])

# %% [markdown]
# 注意 `nvme-pfs-2u` 的读带宽被两块 400G 网卡（100 GB/s）卡住，而写带宽被盘卡住（24 × 3.8 × 0.8 = 73 GB/s）：
# 闪存服务器常常是**网卡限读、盘限写**。下面为一个 175B 模型的训练规划三层：数据集 300 TB 全部放热层，
# 训练读 200 GB/s，检查点（2.45 TB）要求 500 GB/s 的突发写入。

# %%
# NBVAL_CHECK_OUTPUT
plan = storage.plan_tiers(300.0, storage.checkpoint_gb(175e9) / 1e3, 200.0, 500.0, checkpoints_kept=3)
for t in plan.tiers:
    print(f"{t.name:10s} {t.server:14s} servers={t.servers:3d} (capacity {t.servers_for_capacity}, "
          f"bandwidth {t.servers_for_bandwidth}) -> {t.usable_tb:7.1f} TB, {t.provided_gbs:6.1f} GB/s, "
          f"limited by {t.limited_by}")
print(f"hot set fits one node's local NVMe ({plan.local_nvme_tb_per_node:.2f} TB): {plan.hot_fits_local_nvme}")

# %% [markdown]
# 检查点层只需要存 7.35 TB，却要 7 台服务器——**它是被带宽而不是容量决定的**。这是存储规划里最常见的误判：
# 按容量报价，结果写带宽不够：只买一台 `nvme-pfs-2u`，2,450 GB 的检查点要写半分钟以上（误区一里算出 34 s，而不是 4.9 s），
# 每 30 分钟一次、每次几百上千张 GPU 干等。下面的探索器可以改变数据集大小、模型大小、读写带宽和积木类型，
# 看每一层被哪个约束决定。试试把检查点层换成 `hdd-pfs-4u`：

# %%
storage_x.tier_explorer()

# %% [markdown]
# ## 5. 读写分离：为什么检查点不能和训练数据挤在一个池里
#
# 设想一个共享存储池，聚合带宽 $B$，训练持续读取 $R$。检查点一开始，几百个进程同时猛写，池子按公平共享分带宽，
# 读取方只能拿到 $r = \min(R, w B')$（$w$ 是读方的份额，$B'$ 是混合读写时池子还能交付的带宽）。
# 机械盘池里，原本顺序的读流和写流交错后退化成随机访问：用上面的盘模型，1 MiB 请求时随机/顺序之比是

# %%
# NBVAL_CHECK_OUTPUT
hdd = storage.media("hdd-20tb")
mixed_eff = storage.device_throughput_gbs("hdd-20tb", 1 << 20) / hdd.read_gbs
print(f"HDD random/sequential at 1 MiB requests: {mixed_eff:.2f}")

# %% [markdown]
# 注意这里用的是「定位 + 传输」串行的盘模型：每个 1 MiB 随机请求先花 1/168 s = 5.95 ms 定位，再花 1 MiB ÷ 285 MB/s
# = 3.68 ms 传输，只剩顺序速率的 38%。只取「IOPS × 请求大小」与顺序速率两者较小值的 roofline 式估算会得到 62%，
# 它默认寻道和传输能重叠——对一个磁头的机械盘太乐观了。
#
# 数据加载器有 $P$ 秒的预取缓冲；缓冲以 $R - r$ 的速度被抽干，抽干之后 GPU 只能以 $r/R$ 的速度前进。每次检查点的停顿为
#
# $$
# T_b = \frac{S}{B' - r}, \qquad
# t_{\text{stall}} = \frac{\max\bigl(0,\,(R - r)\,T_b - P\,R\bigr)}{R}.
# $$
#
# 一个 100 GB/s 的机械盘池、训练读 60 GB/s、每 30 分钟写一个 2,450 GB 的检查点（175B 模型）：

# %%
# NBVAL_CHECK_OUTPUT
res = storage.read_write_interference(60.0, 100.0, 2450.0, 1800.0, prefetch_s=2.0, mixed_efficiency=mixed_eff)
print(f"shared pool: reads drop to {res.shared_read_gbs:.0f} GB/s (x{res.read_slowdown:.2f} slower), "
      f"burst {res.shared_burst_s:.0f} s, GPU stall {res.shared_stall_s:.1f} s per checkpoint "
      f"({100 * res.shared_stall_fraction:.2f} % of time)")
print(f"separate tiers: checkpoint burst {res.separate_burst_s:.1f} s, GPU stall {res.separate_stall_s:.1f} s")

# %%
storage_x.interference_figure(read_gbs=60.0, pool_gbs=100.0, checkpoint_gb=2450.0, interval_s=1800.0, prefetch_s=2.0,
                       mixed_efficiency=mixed_eff)

# %% [markdown]
# 每次检查点 GPU 干等约 85 秒，读请求的耗时变成 3 倍多（种子课程说的「数据读取延迟飙升」）。4.5% 的时间看似不多，
# 但它会在所有 GPU 上同时发生，还会在检查点更频繁（第 17 章的 Young 公式会告诉你，故障越多越应该频繁保存）时线性放大。
# 把训练数据放到独立的热层（或节点本地 NVMe 缓存）、检查点写进独立的并行文件系统、日志走低性能存储，停顿就是 0。
#
# ## 6. 实操命令
#
# **盘和文件系统的基准测试用 fio**。顺序写要绕过页缓存（`--direct=1`）并在结束时 fsync，否则测到的是内存速度：
#
# ```bash
# # 1 MiB 顺序写，8 个作业 x 4 深度，结束时 fsync（测检查点式写入）
# fio --name=seqwrite --directory=/mnt/nvme0 --rw=write --bs=1M --size=32G --numjobs=8 --iodepth=4 \
#     --ioengine=libaio --direct=1 --end_fsync=1 --runtime=60 --time_based --group_reporting
# # 4 KiB 随机读，16 个作业 x 32 深度（测 IOPS，训练小文件读取的上限）
# fio --name=randread --filename=/dev/nvme0n1 --rw=randread --bs=4k --numjobs=16 --iodepth=32 \
#     --ioengine=libaio --direct=1 --runtime=60 --time_based --group_reporting --readonly
# # 最粗的写带宽检查
# dd if=/dev/zero of=/mnt/nvme0/ddtest bs=1M count=10240 oflag=direct
# # 测试期间在另一个终端看每块盘的利用率、队列深度与延迟
# iostat -x 1
# ```
#
# 下面解析的是 fio 3.x 文本输出格式的样例（数字为示意，与参考盘一致；样例出处见 `fio.sample_source`）：

# %%
print(fio.sample_source("fio_nvme_text"))

# %%
# NBVAL_CHECK_OUTPUT
for j in fio.parse_fio_summary(fio.sample("fio_nvme_text")):
    print(f"{j.jobname:9s} read {j.read_gbs:5.2f} GB/s {j.read_iops / 1e3:8.1f} kIOPS | "
          f"write {j.write_gbs:5.2f} GB/s {j.write_iops / 1e3:6.2f} kIOPS")
dd = fio.parse_dd(fio.sample("dd_direct"))
print(f"dd oflag=direct: {dd.bytes / 2**30:.0f} GiB in {dd.seconds:.2f} s = {dd.gbs:.2f} GB/s")

# %% [markdown]
# 随机读 1,012k IOPS × 4 KiB = 4.15 GB/s，是盘标称 1.45M IOPS 的 70%——在一台服务器上测到 datasheet 的 70–90% 是正常的。
# 注意 fio 的 `BW=3532MiB/s (3704MB/s)`：括号外是二进制单位，括号内是十进制单位，课程一律用十进制 GB/s。
#
# **Lustre 上看容量与条带**：
#
# ```bash
# lfs df -h /lustre/ai                 # 每个 MDT/OST 的容量与使用率
# lfs setstripe -c 8 -S 4M /lustre/ai/ckpt   # 检查点目录：每个文件条带到 8 个 OST，条带 4 MiB
# lfs getstripe /lustre/ai/ckpt        # 确认布局
# mc admin info minio-cold             # MinIO：各节点、各盘在线状态与容量
# ```

# %%
# NBVAL_CHECK_OUTPUT
df = fio.parse_lfs_df(fio.sample("lfs_df_h"))
for t in df.osts:
    print(f"{t.uuid}  {t.size_bytes / 2**40:5.1f} TiB  used {t.use_pct:3.0f} %")
print(f"summary {df.summary.use_pct:.0f} % used; fullest OST is {df.ost_imbalance:.1f} points above the OST mean")

# %% [markdown]
# 文件系统整体才用了 63%，但 OST0002 已经 90%——某个大文件（常见是一个没设条带、只落在一个 OST 上的巨型检查点）
# 把它填满了。它满了之后，所有条带落在它上面的写入都会失败或变慢。这就是 `lfs setstripe -c` 存在的原因：
# 大文件要条带到多个 OST 上，带宽才会叠加，容量也才会均衡。
#
# **并行文件系统的验收：IOR 与 mdtest。** fio 测的是一个客户端看到的一块盘或一个挂载点；并行文件系统要从**很多客户端同时**压才测得出聚合能力。
# 业界的标准做法是带宽用 IOR、元数据用 mdtest（两者同属 `hpc/ior` 项目，也是 IO500 榜单的组成部分），用 MPI 在几十个计算节点上同时起进程：
#
# ```bash
# # 32 个节点 x 16 个进程，每个进程写、读自己的 16 GiB 文件（-F：一个进程一个文件，即分片检查点的 N-N 模式），
# # 1 MiB 传输，-e 写完 fsync，-C 读回时换一个节点读（避开客户端页缓存），重复 3 次
# mpirun -np 512 --map-by ppr:16:node ior -a POSIX -F -e -C -t 1m -b 16g -w -r -i 3 -o /lustre/ai/ior/testfile
# # 去掉 -F 就是 N-1：所有进程写同一个共享文件，考验的是文件锁与条带布局，结果常常差很多，两种都要测
# # 元数据：每个进程在自己的目录里（-u）创建、stat、读、删 10,000 个文件（-F 只测文件），重复 3 次
# mpirun -np 512 --map-by ppr:16:node mdtest -n 10000 -F -u -i 3 -d /lustre/ai/mdtest
# ```
#
# 下面解析两份 IOR 4.0 / mdtest 4.0 文本格式的样例（数字为示意：IOR 对着第 4 节规划的 7 台检查点层服务器跑，mdtest 对着一个闪存 MDT；
# 格式来自 `hpc/ior` 源码里的输出函数，出处见 `fio.sample_source`）。IOR 的 MiB 是 $2^{20}$ 字节，换成课程的十进制 GB/s：

# %%
# NBVAL_CHECK_OUTPUT
ior = fio.parse_ior(fio.sample("ior_ckpt_tier"))
w, r = ior.op("write"), ior.op("read")
ck = plan.tier("checkpoint")
ck_read_gbs = ck.servers * storage.server_spec(ck.server).read_gbs
print(f"IOR: {w.tasks} tasks on {w.tasks // w.tasks_per_node} nodes, file per process, {w.xfer_bytes >> 20} MiB transfers, "
      f"{w.repetitions} repetitions")
print(f"  write max {w.max_gbs:.0f} GB/s (mean {w.mean_gbs:.0f}); model of {ck.servers} x {ck.server}: {ck.provided_gbs:.0f} GB/s "
      f"-> {100 * w.max_gbs / ck.provided_gbs:.0f} %")
print(f"  read  max {r.max_gbs:.0f} GB/s (mean {r.mean_gbs:.0f}); model: {ck_read_gbs:.0f} GB/s -> {100 * r.max_gbs / ck_read_gbs:.0f} %")
md = fio.parse_mdtest(fio.sample("mdtest_lustre"))
for op in ("File creation", "File stat", "File read", "File removal"):
    print(f"mdtest {op:13s}: {md.rate(op):9,.0f} ops/s (mean of {md.iterations} iterations, all tasks together)")
print(f"ResNet-50 at 1,024 GPUs opens {req.files_per_s / 1e6:.2f} M files/s = "
      f"{req.files_per_s / md.rate('File read'):.0f} x this MDT's 'File read' rate")
MarkdownTable(f"IOR 写到了模型的 {100 * w.max_gbs / ck.provided_gbs:.0f}%、读到了 {100 * r.max_gbs / ck_read_gbs:.0f}%。"
              "模型给的是盘和网卡的上限，实测低一些是正常的（RAID 校验、协议开销、客户端进程数），验收时要做的是**能解释差距**："
              "差得多时逐级往下测——单个客户端（fio）、单台存储服务器、存储网（像第 22 章那样两两测）。元数据是另一回事："
              f"这个 MDT 每秒能完成约 {md.rate('File read') / 1e3:.0f} 千次「打开—读—关闭」，而第 3 节的千卡 ResNet-50 要每秒打开 "
              f"{req.files_per_s / 1e6:.2f} 百万个文件，差了 {req.files_per_s / md.rate('File read'):.0f} 倍。"
              "带宽再够也没用：要么用 Lustre 的 DNE 把目录分散到多个 MDT 上，要么按第 18 章把小文件打包成分片，把打开次数降到每秒几千次。")

# %% [markdown]
# ### 6.1 两个公开的真实系统：用本章的账去核对
#
# 大厂公开的存储数字不多，但有两组足够具体，可以直接拿本章的方法去核对。**Meta 训练 Llama 3**（*The Llama 3 Herd of Models*，§3.3.1 Storage）
# 用的是自家的 Tectonic 分布式文件系统：240 PB 容量、7,500 台装 SSD 的服务器，持续吞吐 2 TB/s、峰值 7 TB/s；
# 论文专门写了一句：检查点写入的突发性「周期性地把存储网络打满，影响了训练性能」——这正是第 5 节的读写干扰，只是发生在一个一万六千卡的作业上。
# **DeepSeek 的 3FS**（`deepseek-ai/3FS` README）公开了它的读吞吐测试：180 个存储节点、每节点 2 × 200 Gb/s InfiniBand 和 16 块 14 TiB NVMe，
# 聚合读 6.6 TiB/s。把这些数字摊到每台服务器、每块盘、每个网口上：

# %%
# NBVAL_CHECK_OUTPUT
tiB = 2**40
fs3_node_gbs = 6.6 * tiB / 180 / 1e9
print(f"3FS: 6.6 TiB/s over 180 nodes = {fs3_node_gbs:.1f} GB/s per node = "
      f"{100 * fs3_node_gbs / (2 * 200 / 8):.0f} % of 2 x 200 Gb/s; {fs3_node_gbs / 16:.2f} GB/s per NVMe drive "
      f"({100 * fs3_node_gbs / 16 / storage.media('nvme-gen4').read_gbs:.0f} % of a PM1733-class drive)")
print(f"Tectonic: 2 TB/s sustained over 7,500 servers = {2000 / 7500:.2f} GB/s per server on average "
      f"(peak 7 TB/s = {7000 / 7500:.2f} GB/s)")
ck405 = storage.checkpoint_gb(405e9)
print(f"405B full checkpoint (bf16 weights + fp32 Adam) {ck405 / 1e3:.1f} TB: {ck405 / 2000:.1f} s at 2 TB/s, "
      f"{ck405 / 7000:.2f} s at the 7 TB/s peak")

# %% [markdown]
# 3FS 每个节点跑到了网口线速的八成左右，而每块盘只用了它顺序读能力的四成——**瓶颈在网络而不在盘**，这和第 4 节「全闪服务器按网口算带宽」的判断一致：
# 买 NVMe 服务器时，盘数和网口数要一起算，24 块盘配 2 个 200G 口的机器，一半的盘带宽是白买的。Tectonic 的数字则说明另一件事：
# 7,500 台服务器平均每台只有 0.27 GB/s，它是一个以容量和多租户为目标的通用系统，训练只是它的用户之一；
# 一个几 TB 的 405B 检查点在全系统峰值下不到一秒就能写完，但那意味着这一秒里其他所有用户都要让路——所以 Meta 在论文里把检查点突发当成需要协调的问题，
# 而不是单纯靠加带宽解决。两组数字放在一起，正好是本章两条主线：带宽要按最慢的那一级（盘、网口、交换网）算，读写要分离或错峰。
#
# ### 6.2 运维存储的人每天在看什么
#
# 上线之后，存储的问题很少是「带宽不够」这种设计问题，更多是日常的失衡与误用。第一是**容量失衡**：上面 `lfs df` 的例子里一个 OST 到了 90%，
# Lustre 会把新对象优先分配到空闲的 OST，但一个已经写进去的不条带大文件不会自己搬走，要用 `lfs find --ost` 找出它、`lfs migrate` 重新条带。
# 第二是**元数据风暴**：一个用户在共享目录里 `ls -l` 几百万个小文件，或者一个作业的上千个 rank 同时 `stat` 同一批文件，MDS 的延迟会从毫秒涨到秒，
# 所有用户的 `open` 都跟着变慢——这就是为什么很多集群给 scratch 目录设文件数配额（`lfs setquota -i`），并把小文件数据集强制打包。
# 第三是**生命周期**：检查点层按带宽买，容量往往很紧，必须有自动清理策略（只保留最近几个检查点、其余转到温层或对象存储），
# 否则某一天检查点层写满，正在跑的作业保存失败，而失败通常要到下一次恢复时才被发现。第 17 章会讲检查点的保存与校验，第 26 章讲如何把这些指标接进告警。
#
# 还有一个越来越常见的选项是 **GPUDirect Storage（GDS）**：通过 cuFile 接口，让 NVMe 或存储网卡直接把数据 DMA 进显存，不再经过主机内存里的中转缓冲。它省掉的是一次主机内存拷贝和相应的 CPU 开销，对检查点读写和大样本数据加载最有用；前提是文件系统客户端支持（Lustre、GPFS、WEKA 等的较新版本都有），并且 GPU 与 NVMe/网卡在同一个 PCIe 交换芯片下（第 9 章的拓扑），否则 DMA 要经过 CPU 根复合体（跨插槽时还要走 CPU 间互连），收益会打折。部署前用 NVIDIA 提供的 `gdscheck -p` 确认平台支持，再用 `gdsio` 对比开关 GDS 的带宽。
#
# ## 7. 常见误区
#
# **误区一：「买容量就够了，带宽跟着来。」** 上面的规划里，检查点层只需 7.35 TB 容量，按容量一台服务器就够，
# 按 500 GB/s 写带宽却要 7 台。按容量采购会让写带宽只有需求的 1/7：

# %%
# NBVAL_CHECK_OUTPUT
one = storage.server_spec("nvme-pfs-2u")
print(f"capacity-only purchase: 1 server -> {one.write_gbs:.1f} GB/s; a 2,450 GB checkpoint takes "
      f"{storage.checkpoint_write_s(2450.0, one.write_gbs):.0f} s instead of "
      f"{storage.checkpoint_write_s(2450.0, 500.0):.1f} s")

# %% [markdown]
# **误区二（种子课程）：「训练数据、检查点、日志放一个池子里，统一管理最方便。」** 统一管理确实省事，但三类负载的访问模式截然不同：
# 训练数据是持续的大量读，检查点是周期性的猛烈写突发，日志是持续的小写。放在一个池子里，检查点一来，读就被挤占，
# 机械盘上的顺序流还会互相打断、退化成随机访问。第 5 节的 100 GB/s 共享池、每 30 分钟一个 2,450 GB 检查点，算出来是：

# %%
# NBVAL_CHECK_OUTPUT
print(f"shared pool: GPU stall {res.shared_stall_s:.1f} s per checkpoint, reads x{res.read_slowdown:.2f} slower, "
      f"{100 * res.shared_stall_fraction:.2f} % of training time; separate tiers: {res.separate_stall_s:.1f} s")

# %% [markdown]
# 每次检查点都要停顿一分多钟，读延迟变成原来的三倍多，而分层之后停顿为 0。更麻烦的是这种停顿不会出现在任何一个报警上：GPU 没坏、网络没丢包、
# 存储也没报错，只是训练每隔半小时慢一截。统一管理可以在**命名空间**上做（一个挂载点下不同目录），但**物理资源**要分开。
#
# **误区三：「机械盘池的带宽 = 盘数 × 285 MB/s。」** 那是顺序带宽。随机 4 KiB 读时，一台 60 盘的服务器只有
# 60 × 168 = 10,080 IOPS，即 41 MB/s：

# %%
# NBVAL_CHECK_OUTPUT
h = storage.server_spec("hdd-pfs-4u")
print(f"hdd-pfs-4u: sequential {h.read_gbs:.1f} GB/s, random 4 KiB {h.read_iops * 4096 / 1e6:.0f} MB/s "
      f"({h.read_iops:,.0f} IOPS)")

# %% [markdown]
# 同一台服务器，顺序读 13.7 GB/s，随机 4 KiB 读只剩 41 MB/s，相差三百多倍。所以机械盘池只适合做冷层和归档：
# 写入是大文件顺序追加、读取是整包恢复；一旦有人把小文件数据集直接放在上面训练，带宽数字再好看也没有意义。
# 采购时要让供应商同时报顺序带宽和目标请求大小下的随机 IOPS，并在验收时用 fio 各测一遍。
#
# ## 8. 练习
#
# **练习 1**：1,024 张 A100 训练 ResNet-50（每卡 2,470 张/秒），每张图 107.7 kB、一个文件一张图。存储需要多少聚合读带宽（GB/s）？

# %%
answer_1 = None
exercise("ch16.1").check(answer_1)

# %% [markdown]
# **练习 2**：共享池 100 GB/s，训练读 60 GB/s，每 30 分钟写 2,450 GB 的检查点，突发期间读方拿一半份额，
# 混合读写效率取机械盘 1 MiB 随机/顺序之比（`storage.mixed_efficiency()`，约 0.38），预取 2 秒。每次检查点 GPU 停顿多少秒？

# %%
answer_2 = None
exercise("ch16.2").check(answer_2)

# %% [markdown]
# **练习 3**：用 `nvme-pfs-2u` 积木搭检查点层，要吸收 500 GB/s 的写入突发，需要几台（只看带宽）？

# %%
answer_3 = None
exercise("ch16.3").check(answer_3)

# %% [markdown]
# **练习 4（判断题）**：练习 2 的共享存储池（100 GB/s，读需要 60 GB/s，每 30 分钟写 2,450 GB 检查点，突发期间读只拿到一半带宽），但每个读者的预取从 2 s 加到 10 s。突发期间读还会停顿吗？（填 'yes' 或 'no'）

# %%
answer_4 = None  # 'yes' 或 'no'
exercise("ch16.4").check(answer_4)

# %% [markdown]
# ## 9. 小结
#
# - 并行文件系统靠条带化把很多台服务器的带宽叠加给一个文件；对象存储靠纠删码把容量做大做便宜；本地 NVMe 延迟最低但不共享。
# - 吞吐与 IOPS 由请求大小联系：小请求受 IOPS 限制，机械盘在随机小读下带宽掉两个数量级。
# - 每层存储的服务器台数 = max(容量约束, 带宽约束)；检查点层几乎总是带宽约束。
# - 读写分离：热数据、检查点、日志各走各的层，检查点突发就不会让数据加载停顿。
#
# ## 参考资料
#
# - 种子课程：《AI训练推理集群》课程导入 1.3（存储层「数十GB/s的聚合读写带宽」）、1.5 误区二。
# - Samsung PM1733 规格（6.4 GB/s 读、3.8 GB/s 写、1.45M/260K IOPS，Hardwareluxx 2019 报道）；Samsung PM1743（13 GB/s、6.6 GB/s、2.5M/250K IOPS，2021 年发布）；Seagate Exos X20 datasheet（285 MB/s、168/550 IOPS）——见 `labutil/data/storage.toml`。
# - PCI-SIG, *PCI Express Base Specification* 4.0/5.0（16/32 GT/s、128b/130b 编码）。
# - MinIO 文档 *Erasure Coding*、storage-class 设置（8–16 盘纠删集默认 EC:4）。
# - NVIDIA DeepLearningExamples, ResNet50 v1.5 for PyTorch, README「Training performance: NVIDIA DGX A100 (8x A100 80GB)」（2,470 img/s）。
# - ImageNet（ILSVRC2012）训练集 138 GB、1,281,167 张（image-net.org；Russakovsky et al., IJCV 2015）。
# - Lustre Operations Manual：`lfs df`、`lfs setstripe`（默认条带大小 1 MiB）；fio HOWTO（输出格式）；GNU coreutils `dd`。
# - A. Grattafiori et al. (Meta), *The Llama 3 Herd of Models*, arXiv:2407.21783, §3.3.1 Storage（Tectonic：240 PB、7,500 台 SSD 服务器、持续 2 TB/s、峰值 7 TB/s；检查点突发周期性打满存储网络）。
# - DeepSeek, `deepseek-ai/3FS` README「Performance」（180 个存储节点、每节点 2×200 Gb/s InfiniBand + 16×14 TiB NVMe，聚合读 6.6 TiB/s）。
# - Lustre Operations Manual：`lfs find`、`lfs migrate`、`lfs setquota -i`（文件数配额）、DNE（多 MDT 的分布式命名空间）、PCC（Persistent Client Cache）。
# - `hpc/ior`（IOR 与 mdtest 源码，`src/ior-output.c`、`src/mdtest.c` 的输出格式；选项 -F/-e/-C/-t/-b/-i 与 -n/-F/-u/-i/-d 见各自的 `--help`）；IO500 基准（io500.org）。
# - NVIDIA *DGX GB200 User Guide*「Storage」（本地 E1.S NVMe 做 RAID 0，经 `cachefilesd` 缓存共享存储上的数据，并用作检查点的本地加速层）；BeeGFS 文档 *BeeOND: BeeGFS On Demand*。
# - 商用系统的形态取自各家公开文档：DDN A³I 参考架构（AI400X2 / EXAScaler，Lustre）、IBM Storage Scale System（GPFS）、WEKA 与 VAST 的 GPUDirect Storage 说明、NetApp *AIPod with NVIDIA DGX Systems*（pNFS、`proto=rdma` 挂载）；NVIDIA DGX SuperPOD 合作伙伴存储认证。
# - NVIDIA *DGX H100 User Guide*（8 块单口 ConnectX-7 接计算网，2 块双口 ConnectX-7 接存储与带内管理），见 `labutil/data/servers.toml`；存储平面的端口速率与收敛比是第 3 章 `architecture.plan_cluster` 的规划假设。
# - NVIDIA *GPUDirect Storage Overview Guide* 与 *GDS Installation and Troubleshooting Guide*（cuFile、`gdscheck -p`、`gdsio`）。
# - D. Bertsekas, R. Gallager, *Data Networks*, 2nd ed., §6.5.2（max-min 公平共享）。
