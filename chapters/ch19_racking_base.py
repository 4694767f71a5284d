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
# # 第19章 上架与基础环境
#
# > 模块五「部署与验证」的第 1 章。前置：第 9 章（服务器节点、PCIe 与 GPUDirect）、第 10 章（供电与散热）。
# > 本章把设计图变成一排排通上电、BIOS 调对、驱动与固件版本一致的机器；第 20 章在它之上装容器运行时，
# > 第 22、23 章再用 NCCL Test 和健康检查验收它。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 用功率预算和机柜 U 数算出每个机柜放几台 GPU 服务器，画出机柜立面图，并说清 A/B 两路 PDU 各要多大；
# - 说出 GPU 服务器上必须核对的 BIOS 项（PCIe Gen5、Above 4G Decoding、Resizable BAR、ACS/IOMMU）以及调错的代价；
# - 用 NVIDIA 官方的 CUDA–驱动对照表判断一个驱动能否跑某个 CUDA 版本，并解释为什么 fabric manager 必须与驱动**逐位相同**；
# - 从 `lspci -vvv` 读出一块网卡或 GPU 的 PCIe 链路是否「降级训练」，并算出损失了多少带宽；
# - 把整个集群的版本与配置写成一份清单（inventory），用规则引擎自动找出不一致与漂移，形成可复用的标准化流程。

# %%
from labutil.notebook import setup, show_table
from labutil import inventory, health, links, node, power, hardware
from labutil.cluster import Cluster
from labutil.parsers import parse_lspci_links, parse_nvidia_smi_q, samples
from labutil.explore import inventory as inventory_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 为什么说部署远不只是「装驱动和配 IP」
#
# 种子课程的误区二说得很直白：驱动安装只是最基础的第一步，真正的部署工作包括 BIOS 与固件配置（如 PCIe Gen5、
# Resizable BAR）、NCCL 环境变量调优、存储客户端参数优化、容器运行时配置（GPU Operator）、监控 Agent 部署等数十个环节，
# **任何一个环节配置不当，都可能导致性能下降 30% 以上**。我在现场交付过的集群里，第一次跑 NCCL Test 就达标的很少见，
# 原因几乎从来不是「驱动没装」，而是下面这张表里某一行悄悄错了：
#
# | 环节 | 典型操作 | 配错时的现象 | 本课位置 |
# |---|---|---|---|
# | 上架与供电 | 按功率预算排机柜，A/B 双路 PDU | 机柜超载跳闸，或被迫降功耗运行 | 本章 §2，第 10 章 |
# | BIOS | PCIe Gen5、Above 4G、Resizable BAR、关闭 ACS、IOMMU 直通 | 网卡只跑到 Gen4、GPU P2P 走 CPU 绕行甚至挂死 | 本章 §3 |
# | 固件 | BIOS/BMC、GPU VBIOS、网卡与交换机固件统一版本 | 偶发链路抖动、个别节点行为不同 | 本章 §5 |
# | 驱动 / CUDA / fabric manager | 驱动满足 CUDA 最低版本；fabric manager 与驱动同版本 | 程序报驱动过旧；NVSwitch 机器上 GPU 全部不可用 | 本章 §4 |
# | RDMA 栈 | OFED/DOCA、nvidia-peermem | GPUDirect RDMA 不生效，带宽减半 | 第 11 章 |
# | 容器运行时 | NVIDIA Container Toolkit、GPU Operator | 容器里看不到卡或版本不一致 | 第 20 章 |
# | NCCL 与存储客户端 | 环境变量、挂载参数 | busbw 低、检查点写得慢 | 第 15、16 章 |
# | 监控 | DCGM exporter、Prometheus | 故障发现靠用户报障 | 第 26 章 |
#
# 这些环节的共同点是：**单台机器上都「能跑」**，错误只在规模化、在性能数字上才显形。所以本章的方法论是两条：
# 一是每一环都有可量化的检查（本章用模型算出每种错误的代价）；二是把整个集群写成一份**清单**（inventory），
# 用同一套规则自动核对每一台——这就是种子课程要求的「从硬件上架、驱动安装、固件升级到集群健康检查形成一套可复用的标准化操作流程」。
#
# ## 2. 上架：一个机柜放几台，由功率而不是空间决定
#
# 一台 DGX H100 高 8U，最大输入功率 10.2 kW（目录数据，来自 NVIDIA 数据手册）。一个 42U 机柜，扣掉顶部 1U 管理交换机和
# 1U 理线（课程假设），还剩 40U，按空间能放 5 台；但机房给每个机柜的供电与散热预算通常是 15–40 kW。每柜台数是两个约束取小：
#
# $$
# n_{\text{rack}} = \min\left(\left\lfloor \frac{P_{\text{rack}}}{P_{\text{server}}} \right\rfloor,\;
# \left\lfloor \frac{U_{\text{rack}} - U_{\text{reserved}}}{U_{\text{server}}} \right\rfloor\right)
# $$
#
# 供电按 2N 设计：A、B 两路各自都要能单独扛住整柜负载；断路器只能长期承载额定值的 80%（NEC 210.20(A) 的连续负载规则），
# 所以每一路 PDU 的额定容量至少是 $P_{\text{rack}} / 0.8$。下一格用第 10 章的 `power` 模型算几个典型预算：

# %%
# NBVAL_CHECK_OUTPUT
for kw in (20, 30, 40, 41, 60):
    lay = inventory.rack_layout("DGX-H100", kw)
    print(f"limit {kw:>2} kW: {lay['servers']} x DGX-H100 ({lay['limit_by']}-limited), {lay['gpus']:>2} GPUs, "
          f"{lay['rack_kw']:.1f} kW, each PDU feed >= {lay['feeds']['feed_rating_kw']:.1f} kW, cooling: {lay['cooling']}")

# %% [markdown]
# 40 kW 和 41 kW 只差 1 kW，却差了整整一台服务器（8 张卡）：3 台加管理交换机是 30.7 kW，第 4 台要 40.9 kW。
# 这类「台阶效应」是机房规划时最常见的浪费：按 40 kW 设计的机柜只用到 77% 的功率预算，剩下的 9.3 kW 永远用不上。
# 另一个教训是，每柜 4 台 DGX H100 的 40.9 kW 已经超出风冷加封闭通道的经验上限（约 35 kW），需要背板换热门；
# 这就是为什么 H100 时代的高密度机房普遍走向液冷（第 10 章）。下图是三种预算下的机柜立面图（服务器从底部往上装，重设备放低处；
# 两侧橙色竖条是 0U 的 A/B 两路 PDU）：

# %%
inventory_x.rack_elevation_figure((30.0, 41.0, 60.0))

# %% [markdown]
# 拖动功率上限、换一款服务器（DGX A100 单台 6.5 kW、6U），看立面图怎样变化。注意 DGX A100 在 70 kW 时变成「空间受限」：
# 40U 只放得下 6 台。

# %%
rack = inventory_x.rack_explorer()
rack

# %% [markdown]
# ## 3. BIOS：四个开关决定 PCIe 能不能跑满
#
# GPU 服务器上电之后的第一件事不是装系统，而是**对照基线核对 BIOS**。出厂默认值是给通用服务器准备的，对 8 卡 GPU 机器常常是错的。
# 最关键的四项：
#
# | BIOS 项 | 基线 | 为什么 | 调错的后果 |
# |---|---|---|---|
# | PCIe 最大速率（Link Speed） | Gen5 / Auto | H100 与 ConnectX-7 都是 PCIe 5.0 x16 | 整机所有设备被限制在 Gen4，400G 网卡损失 37% |
# | Above 4G Decoding（及 MMIO-high 空间） | Enabled | 每张卡的 BAR1 窗口和显存一样大（2 的幂），8 张卡要约 1 TiB 的 64 位地址空间 | BAR 分配失败、GPU 无法枚举 |
# | Resizable BAR | 按厂商基线（通常 Enabled） | SXM 数据中心卡的 BAR1 本来就是全尺寸；ReBAR 是给默认只有 256 MiB BAR1 的 PCIe 工作站/消费级卡用的 | SXM 上几乎无影响；PCIe 卡上 CPU/对端只能透过小窗口访问显存 |
# | ACS（Access Control Services） | 在 PCIe 交换芯片上关闭 | ACS 会把设备之间的点对点请求重定向到 CPU 根复合体 | GPUDirect P2P/RDMA 大幅变慢甚至挂死 |
# | IOMMU / VT-d | 关闭，或内核参数 `iommu=pt` | 地址转换同样会让 P2P 流量绕行 | 同上 |
#
# 表里前两项最容易被讲反。**真正会让 HGX 主板起不来的是 Above 4G Decoding 和 MMIO-high 空间**，不是 Resizable BAR。
# 每张 GPU 用 BAR1 把显存映射到主机的物理地址空间，PCIe 规定 BAR 的大小是 2 的幂且按自身大小对齐，所以一张 80 GB 的卡要一个 128 GiB 的窗口：

# %%
# NBVAL_CHECK_OUTPUT
for name, mem in (("H100 80GB", 80e9), ("H200 141GB", 141e9)):
    print(f"{name}: BAR1 {inventory.bar1_bytes(mem) / 2**30:.0f} GiB; 8 GPUs need "
          f"{inventory.mmio_high_bytes(8, mem) / 2**40:.0f} TiB of 64-bit MMIO "
          f"= {inventory.mmio_high_bytes(8, mem) / 2**32:,.0f} x the whole 32-bit address space")

# %% [markdown]
# 32 位地址空间总共只有 4 GiB，所以 BIOS 必须打开 Above 4G Decoding，并且给「MMIO High」留出足够大的区域（有的 BIOS 叫 MMIOH Base/Size，
# 默认值常常只够普通服务器）。不够时，驱动加载时 `dmesg` 里会出现 `NVRM: This PCI I/O region assigned to your NVIDIA device is invalid`，
# 或者 `nvidia-smi` 干脆少几张卡。这条报错的意思是「BAR 没有分配到有效地址」，原因不止 BIOS 一处：HPE 日本售前团队公开的 H100 驱动安装笔记里，
# 它是 Linux 内核重新分配 PCI 桥资源引起的，加内核参数 `pci=realloc=off`（沿用 BIOS 的分配）就好了（NVIDIA 开发者论坛 229899 号帖同一条报错）。
# 排查顺序是先看 BIOS 的 Above 4G / MMIO-high，再看内核参数。
#
# Resizable BAR 则不同。A100、H100 这类数据中心卡**不需要 ReBAR 就已经声明了和显存一样大的 BAR1**；默认只声明 256 MiB、
# 需要 ReBAR 才能映射整块显存的是 PCIe 的工作站和消费级卡（JuliaComputing `nvidia-driver-pcie-rebar` 的 README：「data center GPUs
# generally have BAR sizes that match the size of video memory, consumer and workstation GPUs generally declare only 256MiB」）。
# 所以种子课程把 ReBAR 列进 BIOS 清单没错——同一个集群里常有 L40S 之类的 PCIe 推理卡，厂商基线也会写它——但在 SXM 训练节点上
# 它偏离基线只记 info，Above 4G 关掉才是 critical。现场核对用：
#
# ```bash
# nvidia-smi -q -d MEMORY | grep -A3 "BAR1 Memory Usage"   # Total ≈ 显存（数据中心卡）还是 256 MiB（小窗口）
# sudo lspci -vv -s <gpu-bdf> | grep -E "Region 1|Resizable"  # Region 1: ... (64-bit, prefetchable) [size=128G]
# sudo dmesg | grep -i "NVRM: This PCI I/O region"          # BAR 没分配到有效地址：查 Above 4G / MMIO-high、pci=realloc
# ```
#
# ACS 这一项值得多说几句。NCCL 官方排障文档专门有一节「PCI Access Control Services (ACS)」：ACS 是为虚拟化隔离设计的安全特性，
# 开启后，PCIe 交换芯片不再把 GPU→网卡的写直接转发，而是先送到 CPU 的根复合体检查再转回来。结果是 GPUDirect RDMA
# 的路径从「GPU → PCIe 交换芯片 → 网卡」变成了「GPU → 交换芯片 → CPU → 交换芯片 → 网卡」，带宽被 CPU 上行链路和根复合体吃掉，
# 严重时 NCCL 直接挂住。很多操作系统在启用 IOMMU 时会自动打开 ACS（Linux 的 Intel IOMMU 驱动初始化时会请求打开它），所以这两项要一起查。
#
# 反过来也有必须开着 ACS/IOMMU 的场合：把 GPU 和网卡直通给虚拟机时，IOMMU 要做地址转换、ACS 要保证隔离。这时的做法不是关掉它们，
# 而是在网卡上打开 ATS（Address Translation Services：网卡自己缓存地址转换，点对点请求带着已转换的地址直达对端），
# 并把 PCIe 交换芯片和根端口上的 ACS 配成允许这类已转换的请求直达——NVIDIA AI Enterprise 的虚拟机调优指南给了逐块网卡的做法
# （`mlxconfig -d <dev> set ATS_ENABLED=true`，默认是关的，改完要重启宿主机）。同一类「只在虚拟化时才需要」的项还有 SR-IOV：
# BIOS 里的 SR-IOV 支持加上网卡固件的 `SRIOV_EN`、`NUM_OF_VFS`（同样用 `mlxconfig` 设），把一块物理网卡切成多个虚拟功能（VF）给虚拟机或
# Kubernetes 的 SR-IOV 网络插件用；裸金属训练节点用不到它，但基线里要写明开还是关，免得一批机器开、一批不开。
# CPU 的电源策略（性能模式、深度 C-state）和 NUMA 划分（AMD 的 NPS、Intel 的 SNC）也属于基线：它们影响数据加载和 NCCL 代理线程所在的
# CPU 一侧，按整机厂商的调优指南定一个值，全集群一致。
#
# PCIe 链路的带宽来自第 9 章的公式：每个方向
#
# $$
# B_{\text{PCIe}} = \frac{R_{\text{lane}} \times \eta_{\text{enc}} \times W}{8}\ \text{GB/s},
# $$
#
# 其中 $R_{\text{lane}}$ 是每 lane 的传输速率（Gen4 16 GT/s，Gen5 32 GT/s），$\eta_{\text{enc}} = 128/130$，$W$ 是 lane 数。
# 一块网卡能交付的带宽是 $\min(\text{线速}/8,\ B_{\text{PCIe}})$。「降级训练」（link trained down）指设备和插槽都支持 Gen5 x16，
# 但链路协商时只训练到了 Gen4 或 x8——原因可能是 BIOS 限速、转接卡或线缆接触不良、金手指脏污。`lspci -vvv` 里
# `LnkCap` 是能力，`LnkSta` 是实际训练结果，两者不一致就是问题：

# %%
# NBVAL_CHECK_OUTPUT
for gen, lanes in ((5, 16), (4, 16), (5, 8), (3, 16)):
    s = node.nic_slot(400, gen, lanes)
    print(f"400G NIC in Gen{gen} x{lanes:<2}: slot {s['slot_gbs']:5.1f} GB/s, delivers {s['delivered_gbs']:4.1f} of "
          f"{s['nic_gbs']:.0f} GB/s = {s['fraction']:.0%} (lost {1 - s['fraction']:.0%})")

# %% [markdown]
# Gen5 x16 的 63 GB/s 刚好装得下 400G 网卡的 50 GB/s；只要降一级到 Gen4 x16（31.5 GB/s）或者少一半 lane，
# 网卡就只剩 63% 的能力——**一个 BIOS 选项就是 37% 的损失**，正好落在种子课程说的「30% 以上」。
#
# ## 4. 驱动、CUDA 与 fabric manager：三个版本号的约束
#
# **驱动 ↔ CUDA。** 每个 CUDA Toolkit 版本都要求一个最低驱动版本，NVIDIA 在 CUDA Toolkit Release Notes 的表 3
# 「CUDA Toolkit and Corresponding Driver Versions」中列出。驱动是向后兼容的：新驱动能跑老 CUDA 编出来的程序，反之不行。
# 从 CUDA 11 开始还有「小版本兼容」（表 2）：任何 12.x 的程序都能在 ≥ 525.60.13 的驱动上运行，但功能受限——
# 不能 JIT 编译更新的 PTX，需要新驱动的 API 会返回 `cudaErrorCallRequiresNewerDriver`。所以我们的规则是：
# 低于表 3 最低版本但在小版本兼容范围内 → warning；连大版本下限都不到 → critical。表 3 的一段（Linux x86_64）：

# %%
show_table([{"CUDA Toolkit": r["label"], "min Linux driver": r["linux_min_driver"]}
            for r in inventory.cuda_table() if r["version"] >= "12.0"])

# %%
# NBVAL_CHECK_OUTPUT
for drv, cuda in (("550.54.15", "12.4.1"), ("550.54.14", "12.4.1"), ("550.54.15", "12.8"), ("520.61.05", "12.0")):
    st = inventory.cuda_driver_status(drv, cuda)
    print(f"driver {drv:<10} + CUDA {cuda:<6}: {st['status']:<12} (needs >= {st['min_driver']})")

# %% [markdown]
# **fabric manager ↔ 驱动。** HGX/DGX 这类 8 卡机器里，GPU 之间通过 NVSwitch 全互联。NVSwitch 的路由表由用户态服务
# `nvidia-fabricmanager` 在开机时配置；在它完成之前，GPU 不会被注册进 NVLink 交换网络，CUDA 初始化直接失败
# （`cudaErrorSystemNotReady`）。NVIDIA 的 Fabric Manager 用户指南和它的打包说明都要求：**fabric manager 的版本必须与驱动版本完全一致**，
# 版本不一致时服务拒绝启动。最常见的事故是只升级了驱动（或者内核更新触发 DKMS 重新编译了另一个版本的驱动）
# 而忘了 fabric manager——一台 8 卡机器瞬间 0 卡可用。这个约束是「逐位相等」，550.54.14 和 550.54.15 也不行。
#
# **还有几张矩阵。** 驱动—CUDA—fabric manager 是最硬的一组约束，但交付清单里还要钉住另外几对：
#
# | 组合 | 约束 | 查法 |
# |---|---|---|
# | 驱动分支 | 数据中心驱动分为生产分支（PB）、新功能分支（NFB）和长期支持分支（LTSB），支持周期不同；集群选一个分支，小版本跟着它升级 | NVIDIA 数据中心驱动文档的分支与生命周期说明 |
# | OFED / DOCA-Host ↔ 网卡固件 | 每个 MLNX_OFED（DOCA-Host）版本的发布说明列出它测试过的各型号网卡固件版本 | `ofed_info -s`、`mlxfwmanager --query` |
# | nvidia-peermem ↔ 驱动与 OFED | GPUDirect RDMA 的内核模块随驱动发布，编译时要用到 OFED 的 `ib_core` 符号：先装 OFED、再装（或 DKMS 重编）驱动，否则模块缺失、GDR 静默关闭 | `lsmod \| grep nvidia_peermem` |
# | NCCL ↔ CUDA | NCCL 按 CUDA 大版本分别构建（包名里带 `+cuda12.x`）；PyTorch 的 wheel 自带一份 NCCL，和系统里装的可能不是同一版 | `torch.cuda.nccl.version()` 与 `NCCL_DEBUG=INFO` 的首行 |
# | 容器 ↔ 驱动 | 容器里的 CUDA 由镜像决定，驱动由宿主机决定，约束仍是上面的表 3 / 表 2 | 第 20 章 |
#
# 清单里的 `ofed`、`nccl` 两列就是为这些矩阵准备的：§5 的 drift 规则至少保证它们全集群一致，再拿一致的那个版本去对发布说明。
#
# **nvidia-smi 里的 CUDA Version。** `nvidia-smi` 右上角的「CUDA Version」是**驱动支持的最高 CUDA 版本**，不是机器上装的
# CUDA Toolkit 版本；真正运行的 CUDA 版本取决于程序链接的 runtime（`nvcc --version`、容器镜像或 `torch.version.cuda`）。
# 清单里两者要分开记。
#
# ## 5. 清单与规则引擎：让每一台机器接受同样的检查
#
# 人工逐台登录核对在 4 台时可行，在 400 台时一定会漏。正确做法是写一个采集脚本（SSH 或 Ansible 批量执行 §6 的命令），
# 把结果汇总成一份结构化清单，再用规则自动比对。本课的清单格式是 TOML，一台机器一个 `[[node]]`：版本号、BIOS 设置、每个
# PCIe 设备的能力与训练结果。`labutil/data/inventory_sample.toml` 是一个 4 节点 DGX H100 的示例，其中故意埋了错：
# gpu-node-01/02 是干净的，03 和 04 各有几处问题。规则引擎有五类规则：
#
# 1. **cuda_driver**：驱动 vs CUDA（表 3 / 表 2）；
# 2. **fabric_manager**：NVSwitch 机器上 fabric manager 存在、active、且与驱动同版本，否则 critical、0 卡可用；
# 3. **pcie_link**：LnkSta < LnkCap，损失 ≥ 20%（第 23 章验收线 80% 的对偶）为 critical，有损失为 warning，无损失为 info；
# 4. **bios**：与基线不同的 BIOS 项，严重度按 §3 的理由（ACS、Above 4G、PCIe 限速为 critical，IOMMU 为 warning，ReBAR 在 SXM 节点上只记 info）；
# 5. **drift**：同一组件在不同节点上版本不同，与多数派不同的节点记 warning。
#
# 输出沿用第 23 章 `health` 的 Finding / Report：critical 表示该节点不能交付。

# %%
inv = inventory.sample_inventory()
report = inventory.run_inventory_checks(inv)
report.table()

# %%
# NBVAL_CHECK_OUTPUT
print(f"status {report.status}: {report.count('critical')} critical, {report.count('warning')} warning")
for n in inv.nodes:
    r = inventory.run_inventory_checks(inv, n.hostname)
    lost = sum(x["lost_gbs"] for x in inventory.node_links(n))
    print(f"{n.hostname}: {r.status:<4} usable GPUs {inventory.usable_gpus(n, inv.nvswitch)}/{n.gpus}, "
          f"PCIe bandwidth lost {lost:4.1f} GB/s")

# %% [markdown]
# 版本漂移最适合用一张矩阵来看：每行一台机器，每列一个组件，与多数派不同的格子标橙色，fabric manager 与驱动不一致标红。
# gpu-node-03 是一台典型的「返修回来的机器」：主板换过，BIOS 回到了旧版本和出厂默认（ACS 开、ReBAR 关），
# 驱动被单独重装成了 550.54.14；gpu-node-04 则是有人为了试新版本手动装了 CUDA 12.8、旧版 OFED 和 NCCL。

# %%
inventory_x.version_matrix_figure()

# %% [markdown]
# gpu-node-03 每个 PCIe 设备的能力与实际训练结果：GPU5 只训练到 x8，NIC3 只训练到 Gen4。

# %%
inventory_x.link_loss_figure("gpu-node-03")

# %% [markdown]
# 下面的探索器里选一台节点，再给它「注入」一个配置错误（fabric manager 版本差一个补丁号、网卡降到 Gen4 或 x8、GPU 降到 x8、
# ACS 打开、ReBAR 关闭、BIOS 把 PCIe 限到 Gen4、驱动退回 535），看规则引擎报出什么、损失多少带宽、还剩几张卡能用。
# 试试在 gpu-node-01 上选 `bios_gen4`：一个选项让 8 块网卡同时损失 37%。

# %%
explorer = inventory_x.inventory_explorer()
explorer

# %% [markdown]
# ## 5.1 布线、固件基线与 burn-in：交付前的最后三道关
#
# 清单检查的是「每台机器自己」。上架之后、交付之前，还有三件跨机器的事，做过交付的工程师都会单独排期：
#
# **布线。** 线缆的数量远超直觉。用第 3 章的 `plan_cluster` 数一下 1,024 张卡的集群要接多少根：

# %%
# NBVAL_CHECK_OUTPUT
from labutil import architecture, reliability
plan = architecture.plan_cluster(1024, server="DGX-H100")
for p in plan.planes:
    print(f"{p.name:<9}: {p.total_ports:5d} node-side ports, {p.switches:3d} switches")
print(f"compute fabric alone: {plan.compute_fabric.cables} cables, {plan.compute_fabric.transceivers} transceivers")

# %% [markdown]
# 仅计算网络就有 2,048 根线缆。轨道优化拓扑对布线有一个硬要求：每台服务器的第 $i$ 块网卡必须接到第 $i$ 条轨道的叶交换机上。
# 插错一根不会报错——链路照样 Active——但这两条轨道的流量会多走一跳脊交换机，NCCL 的轨道对齐被打破，性能在规模化时才显形。
# 所以布线要做到三点：每根线两端贴同一个标签（机柜-U 位-端口 ↔ 交换机-端口），按标签表施工；
# 铜缆（DAC）只用在同柜短距离（400G 铜缆一般只有几米），跨柜一律光模块加光纤，并遵守最小弯曲半径；
# 施工完成后用 `ibnetdiscover`（InfiniBand）或 LLDP 邻居表（以太网）把**实际连接**导出来，与设计的连接表逐条比对，而不是靠人眼检查。
#
# **固件基线。** 和第 4 节的驱动一样，固件也要有一份钉死的基线：BIOS/BMC、GPU VBIOS、NVSwitch 固件、ConnectX 网卡固件（`mlxfwmanager --query` 查看、
# 同一工具批量升级）、交换机操作系统、光模块固件。同一条轨道上两端的网卡和交换机固件不一致时，链路协商、FEC 模式、自适应路由的行为都可能不同，
# 表现为「个别端口偶尔掉速」，这是最难排查的一类问题。基线之外的版本一律视为漂移（§5 的 drift 规则）。
#
# **Burn-in（老化测试）。** 新硬件的故障率服从「浴盆曲线」：刚上电的几周故障率最高（早期失效），之后才进入稳定期。
# 交付前让每台机器满载跑 24–72 小时——`dcgmi diag -r 3` 的 GPU 压力与显存测试、单机 8 卡的 nccl-tests、HPL 之类的满功率负载、
# 跨节点的成对 nccl-tests（第 23 章）——目的是让早期失效发生在交付之前，而不是发生在第一个大作业的第二天。
# 用第 27 章由 Llama 3 校准的稳定期故障率估一个**下限**（早期失效率只会更高）：

# %%
# NBVAL_CHECK_OUTPUT
f_day = reliability.llama3_failures_per_day(1024)
for hours in (24, 48, 72):
    print(f"burn-in {hours:2d} h on 1,024 GPUs: >= {f_day * hours / 24:.1f} expected interruptions at the Llama 3 steady-state rate")

# %% [markdown]
# 即使按成熟期的故障率，48 小时的 burn-in 也要期望遇到约 1 次中断；Llama 3 论文（§3.3.4）的统计里，GPU 本身（30.1%）和 HBM3 显存（17.2%）
# 是最大的两类中断原因——恰好是 `dcgmi diag` 的压力测试和显存测试能在交付前暴露的部件。burn-in 期间坏掉的机器不进入交付清单，
# 修好后要重新跑一遍完整的 burn-in，而不是只测坏掉的那个部件（§5 的 gpu-node-03 就是「返修回来、BIOS 回到出厂默认」的例子）。
#
# burn-in 结束时，每台机器要拿到一个明确的「通过/不通过」：清单检查没有 critical、`dcgmi diag -r 3` 全部 Pass、成对 nccl-tests 的 busbw
# 不低于期望值的一定比例。期望值不要凭印象写，由集群模型给出；比例用第 23 章验收规范的默认值：

# %%
# NBVAL_CHECK_OUTPUT
spec = health.AcceptanceSpec()
pair = Cluster.system("DGX-H100", 2).expected_busbw_gbs("all_reduce")
print(f"pair test 2 x DGX H100: expected busbw {pair:.0f} GB/s; pass >= {spec.busbw_pass_fraction * pair:.0f}, "
      f"critical below {spec.busbw_fail_fraction * pair:.0f} GB/s")

# %% [markdown]
# 两台 DGX H100 的成对测试期望 370 GB/s，低于 296 GB/s 的机器不交付，低于 222 GB/s 直接判为故障。第 7 节误区一会算出，一块网卡降到 Gen4 会让这个数字掉到约 242 GB/s——
# 正好落在「不通过」的区间里，所以成对测试能抓住单个插槽的链路训练错误，即使清单采集时漏掉了它。
#
# ## 6. 实操命令
#
# 下面是采集清单时每台机器要执行的命令。命令是真实的；示例输出为**示意**（格式按各工具的真实输出，数值与示例清单中的
# gpu-node-03/04 对应，为教学而编写），并由 `labutil.inventory` 的解析器解析。
#
# **BIOS 版本与设置。** `dmidecode` 读 SMBIOS 表里的 BIOS 版本；BIOS 设置项要通过 BMC 读取：IPMI 没有标准的 BIOS 设置命令，
# 现代服务器用 Redfish（DMTF 标准）的 `Bios` 资源，属性名由厂商定义。
#
# ```bash
# sudo dmidecode -t bios
# curl -sk -u admin:*** https://<bmc>/redfish/v1/Systems/<id>/Bios | jq .Attributes
# ipmitool -I lanplus -H <bmc> -U admin -P *** mc info      # BMC 固件版本
# ```

# %%
# NBVAL_CHECK_OUTPUT
bios = inventory.parse_dmidecode_bios(inventory.tool_sample("dmidecode_bios"))
print(f"BIOS vendor: {bios['vendor']}, version {bios['version']} ({bios['release_date']}); "
      f"cluster majority: {inv.node('gpu-node-01').versions['bios_version']}")

# %% [markdown]
# **PCIe 链路。** 以 root 运行才能看到能力寄存器；`LnkCap` 是能力，`LnkSta` 是训练结果，新版 pciutils 会直接标出 `(downgraded)`。
# 同一份输出里还能看到 PCIe 交换芯片下行口的 `ACSCtl`：`ReqRedir+ CmpltRedir+` 表示 ACS 重定向处于开启状态。
#
# ```bash
# sudo lspci -vvv | grep -E "^[0-9a-f]|LnkCap|LnkSta|ACSCtl"
# sudo lspci -vvv -s 5c:00.0 | grep -E "LnkCap|LnkSta"
# ```

# %%
# NBVAL_CHECK_OUTPUT
for d in parse_lspci_links(inventory.tool_sample("lspci_vvv")):
    print(f"{d['bdf']} {d['class']:<22} cap Gen{d['cap_gen']} x{d['cap_width']:<2} trained Gen{d['sta_gen']} "
          f"x{d['sta_width']:<2} downtrained={d['downtrained']!s:<5} acs_redirect={d['acs_redirect']}")

# %% [markdown]
# **驱动、CUDA、fabric manager、OFED、NCCL。**
#
# ```bash
# nvidia-smi -q | grep -i "driver version\|cuda version"
# nvcc --version                                   # 或容器内: python -c "import torch; print(torch.version.cuda)"
# systemctl status nvidia-fabricmanager
# nv-fabricmanager --version
# ofed_info -s
# python -c "import torch; print(torch.cuda.nccl.version())"
# ```
#
# `nvidia-smi -q` 的头部解析用第 23 章的 `parse_nvidia_smi_q`，每张卡的 PCI 与 BAR1 两节用 `inventory.parse_nvidia_smi_pci`。
# 示例是 gpu-node-03 的示意输出（R550 格式，每张卡只保留身份、PCI 和两节显存信息；布局、总线号与显存大小照一份公开的 8 × H100 日志）。
# 在 DGX H100 上 `Attached GPUs` 必须是 8——少一张就先查上面的 BAR 分配和下面的 fabric manager：

# %%
# NBVAL_CHECK_OUTPUT
smi = inventory.tool_sample("nvidia_smi_q_pci")
q = parse_nvidia_smi_q(smi)
print(f"Driver Version: {q.driver_version}, CUDA Version (max supported by the driver): {q.cuda_version}, "
      f"GPUs: {q.attached_gpus}")
print(f"Table 3: newest toolkit fully supported by {q.driver_version}: CUDA {inventory.driver_cuda_version(q.driver_version)}")
for g in inventory.parse_nvidia_smi_pci(smi):
    print(f"  {g['bus_id']}: PCIe Gen{g['gen_cur']} x{g['width_cur']:<2} (max Gen{g['gen_max']} x{g['width_max']}), "
          f"BAR1 {g['bar1_total_mib'] / 1024:.0f} GiB")
print(f"BAR1 the model expects for 80 GB: {inventory.bar1_bytes(80e9) / 2**30:.0f} GiB; gpu-node-03 BIOS resizable_bar = "
      f"{inv.node('gpu-node-03').bios['resizable_bar']}")
print(f"ofed_info -s on gpu-node-04: {inventory.parse_ofed_info(inventory.tool_sample('ofed_info'))} "
      f"(majority {inv.node('gpu-node-01').versions['ofed']})")

# %% [markdown]
# 两件事可以直接从这份输出里读出来。第一，gpu-node-03 的 BIOS 里 ReBAR 是关的，可每张 H100 的 BAR1 仍然是 128 GiB——和 §3 的模型一样大：
# 数据中心卡的 BAR1 本来就覆盖整块显存，ReBAR 在这里不起作用；第二，GPU5（AB:00.0）当前链路是 x8，和 `lspci` 的 `Width x8 (downgraded)` 是同一件事，
# 两个工具互相印证。
#
# gpu-node-03 上 `systemctl status nvidia-fabricmanager` 的示意输出如下（systemd 的标准格式；日志行是对版本不匹配报错的转述）：
#
# ```text
# x nvidia-fabricmanager.service - NVIDIA fabric manager service
#      Active: failed (Result: exit-code) since Tue 2024-05-14 09:12:41 UTC; 3min ago
# May 14 09:12:41 gpu-node-03 nv-fabricmanager[4121]: fabric manager version 550.54.15 does not match NVIDIA driver version 550.54.14
# ```
#
# 修复方法是让两者一致：从同一个驱动分支仓库安装 `nvidia-fabricmanager-550=550.54.15` 与对应驱动（或把驱动装回 550.54.15），
# 然后 `systemctl restart nvidia-fabricmanager`，再用 `nvidia-smi -q | grep -i -A2 fabric` 确认 State 为 Completed。
# 生产环境里应把驱动和 fabric manager 的包一起锁版本（`apt-mark hold` / `dnf versionlock`），防止无人值守升级拆散它们。
#
# ## 7. 常见误区
#
# **误区一（种子课程误区二）：「集群部署就是装驱动和配 IP」。** 驱动装好、IP 通了，下面三种情况都能「正常开机」，
# 但都会让集群性能掉 30% 以上甚至整机不可用。用模型算：

# %%
# NBVAL_CHECK_OUTPUT
gen4 = node.nic_slot(400, 4, 16)
# the slowest rail gates every ring: the node behaves as 8 NICs at the slowest rail's rate (labutil.cluster)
healthy = Cluster.system("DGX-H100", 2).expected_busbw_gbs("all_reduce")
slow = Cluster.system("DGX-H100", 2, nic_gbps=gen4["delivered_gbs"] * 8).expected_busbw_gbs("all_reduce")
print(f"1) one 400G NIC trained at Gen4 x16: that NIC loses {1 - gen4['fraction']:.0%}; "
      f"2 x DGX H100 expected busbw {healthy:.0f} -> {slow:.0f} GB/s ({1 - slow / healthy:.0%} lower)")
bad = inventory.inject_drift(inv, "gpu-node-01", "fm_mismatch").node("gpu-node-01")
print(f"2) fabric manager {bad.versions['fabric_manager']} vs driver {bad.versions['driver']}: "
      f"usable GPUs {inventory.usable_gpus(bad, True)} of {bad.gpus} (100% lost)")
g4 = inventory.inject_drift(inv, "gpu-node-01", "bios_gen4").node("gpu-node-01")
nic_lost = sum(r["lost_gbs"] for r in inventory.node_links(g4) if r["kind"] == "nic")
print(f"3) BIOS PCIe speed left at Gen4: the 8 NICs lose {nic_lost:.0f} of {8 * 50} GB/s ({nic_lost / 400:.0%})")

# %% [markdown]
# 第 1 种情况尤其隐蔽：ring all-reduce 里每条轨道一个环，整机速度由最慢的环决定（第 23 章），所以**一个**插槽训练错误，
# 整台机器的跨节点带宽就从期望的 370 GB/s（第 22 章：NVLink 环与 8 × 48 GB/s 网卡中较慢者）掉到约 242 GB/s，少了 35%；
# 而在同步训练里，一台慢节点又会拖慢整个作业。
#
# **误区二：「nvidia-smi 显示 CUDA 12.4，说明装的就是 CUDA 12.4」。** 那是驱动支持的上限。gpu-node-04 上的驱动 550.54.15
# 显示的也是 12.4，但它上面的程序是用 CUDA 12.8 编译的：

# %%
# NBVAL_CHECK_OUTPUT
n4 = inv.node("gpu-node-04")
st = inventory.cuda_driver_status(n4.versions["driver"], n4.versions["cuda"])
print(f"gpu-node-04: driver {n4.versions['driver']} (nvidia-smi shows CUDA {inventory.driver_cuda_version(n4.versions['driver'])}), "
      f"toolkit {n4.versions['cuda']} needs >= {st['min_driver']}: {st['status']}")

# %% [markdown]
# 它靠小版本兼容「能跑」，但任何需要新驱动的功能或 PTX JIT 都会在运行时失败——而且只在这一台上失败。
#
# **误区三：「机柜空间够就能放」。** 42U 机柜按空间能放 5 台 DGX H100，但按 40 kW 功率预算只能放 3 台：

# %%
# NBVAL_CHECK_OUTPUT
lay = inventory.rack_layout("DGX-H100", 40.0)
print(f"by space {lay['by_space']}, by power {lay['by_power']} -> {lay['servers']} servers, "
      f"{lay['rack_units'] - lay['used_units']}U left empty, {lay['rack_kw_limit'] - lay['rack_kw']:.1f} kW unused")

# %% [markdown]
# ## 8. 练习
#
# 把答案填进 `answer_k`（数字即可，单位见题目），运行单元格查看判分；卡住时调用 `exercise("ch19.k").hint(1)`。
#
# **练习 1**：一块 400 Gb/s 的 ConnectX-7 支持 PCIe Gen5 x16，但 `LnkSta` 显示 16GT/s、x16。它损失了线速的百分之几？

# %%
answer_1 = None
exercise("ch19.1").check(answer_1)

# %% [markdown]
# **练习 2**：42U 机柜（预留 2U），功率预算 40 kW，能放几台 DGX H100（10.2 kW，8U）？

# %%
answer_2 = None
exercise("ch19.2").check(answer_2)

# %% [markdown]
# **练习 3**：对示例清单运行检查，整个 4 节点集群里 CUDA 实际能用的 GPU 有几张？

# %%
answer_3 = None
exercise("ch19.3").check(answer_3)

# %% [markdown]
# **练习 4**：两台 DGX H100（每台 8 条 400G 轨道）做成对测试，其中一台有一块网卡训练在 Gen4 x16。按课程的集群模型，跨节点 all_reduce 的期望 busbw 是多少 GB/s？

# %%
answer_4 = None
exercise("ch19.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：对 `inventory.sample_inventory()` 跑 `inventory.run_inventory_checks`，交付前必须先摘掉（drain）哪台节点？（填主机名，如 'gpu-node-01'）

# %%
answer_5 = None  # 主机名
exercise("ch19.5").check(answer_5)

# %% [markdown]
# ## 9. 小结
#
# - 每柜台数 = min(功率约束, 空间约束)；DGX H100 在常见的 30–40 kW 预算下受功率限制，2N 供电每路 PDU 要按整柜负载 / 0.8 选。
# - BIOS 四个开关（PCIe Gen5、Above 4G、Resizable BAR、ACS/IOMMU）都要对照基线核对：PCIe 限到 Gen4 就让每块 400G 网卡损失 37%，Above 4G / MMIO-high 不够会让 8 张卡约 1 TiB 的 BAR1 分不到地址、GPU 无法枚举，ACS/IOMMU 开着会让 GPUDirect P2P/RDMA 绕行 CPU 甚至挂死；ReBAR 只对 256 MiB 小 BAR1 的 PCIe 卡要紧。
# - 驱动 ≥ CUDA 的最低驱动（表 3）；fabric manager 与驱动逐位相同；nvidia-smi 的 CUDA Version 不是 Toolkit 版本。
# - 把集群写成清单、用规则核对，比逐台登录检查可靠得多；漂移（同一组件多个版本）本身就是告警。
#
# 下一章（第 20 章）在这套干净的基础环境上部署容器运行时与 GPU Operator。
#
# ## 参考资料
#
# - 课程种子材料：《大规模GPU集群部署核心概念速览》课程导入，误区二与「标准化操作流程」。
# - NVIDIA, *CUDA Toolkit Release Notes*, Table 2「CUDA Toolkit and Minimum Required Driver Version for CUDA Minor Version Compatibility」与 Table 3「CUDA Toolkit and Corresponding Driver Versions」（docs.nvidia.com/cuda/cuda-toolkit-release-notes）；NVIDIA, *CUDA Compatibility* 指南（小版本兼容的限制）。
# - NVIDIA, *Fabric Manager for NVIDIA NVSwitch Systems User Guide*；NVIDIA/yum-packaging-fabric-manager README（"the version of fabricmanager must match the NVIDIA driver installed"）。
# - NVIDIA, *NCCL User Guide*, Troubleshooting：「PCI Access Control Services (ACS)」与 IO 虚拟化（VT-d/IOMMU）对 GPU Direct 的影响。
# - PCI-SIG, *PCI Express Base Specification* 4.0 / 5.0（16 / 32 GT/s，128b/130b；BAR 为按自身大小对齐的 2 的幂）；PCI-SIG Resizable BAR ECN。
# - JuliaComputing, `nvidia-driver-pcie-rebar` README（数据中心卡的 BAR 与显存同大，消费级/工作站卡默认 256 MiB）；HPE-Japan-Presales `e-learning` 仓库 `gpu/h100/driver_install/driver_install_on_ubuntu2204.md` 与 NVIDIA 开发者论坛帖 229899（`NVRM: This PCI I/O region assigned to your NVIDIA device is invalid`）。
# - NVIDIA DGX H100 数据手册 / 用户指南（8U，约 10.2 kW）；NVIDIA DGX A100 数据手册（6U，6.5 kW）。
# - NVIDIA AI Enterprise, *Optimizing VM Configuration for AI Inference*, Appendix「ATS and ACS configuration」（`mlxconfig ... ATS_ENABLED=true`，默认关闭，需重启宿主机；ACS 要配置成允许 ATS）；NVIDIA MFT `mlxconfig`（`SRIOV_EN`、`NUM_OF_VFS`）。
# - Linux 内核 `drivers/iommu/intel/dmar.c` / `iommu.c`（启用 Intel IOMMU 时调用 `pci_request_acs()`）；PCI-SIG ATS 规范。
# - 公开的 8 × H100 80GB HBM3 `nvidia-smi -q` 日志：GitHub thamada/nvidia-smi, `nvsim/H100SXMx8_smi.py`（驱动 565.57.01；BAR1 Total 131072 MiB，FB Total 81559 MiB），示例输出的布局与数值依据。
# - NVIDIA Data Center Driver 文档（Production Branch / New Feature Branch / Long Term Support Branch）；MLNX_OFED / DOCA-Host 发布说明（各型号网卡的已验证固件版本）；NVIDIA GPUDirect RDMA 文档（`nvidia-peermem` 随驱动发布）；NCCL 发布包按 CUDA 版本构建。
# - A. Grattafiori et al. (Meta), *The Llama 3 Herd of Models*, arXiv:2407.21783, §3.3.4 表 5（GPU 30.1%、HBM3 17.2% 的中断占比；第 27 章的故障率校准）。
# - NVIDIA DCGM 文档（`dcgmi diag` 的运行级别）；NVIDIA MFT 文档（`mlxfwmanager` 查询与升级 ConnectX 固件）；infiniband-diags `ibnetdiscover`。
# - NFPA 70（NEC）210.20(A)：连续负载按 125% 选断路器（即长期负载 ≤ 额定 80%）。
# - 工具输出格式：pciutils `lspci`（ls-caps.c）、dmidecode（SMBIOS type 0）、MLNX_OFED `ofed_info`、systemd `systemctl status`、DMTF Redfish `Bios` 资源。
