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
# # 第23章 健康检查与验收
#
# > 模块五「部署与验证」的第 23 章。前置：第 11 章（RDMA 与 IB 速率）、第 13 章（busbw 的定义）、第 22 章（nccl-tests）。
# > 本章把「能跑起来」变成「可以交付」：每一项检查都有命令、有可解析的输出、有阈值、有判定理由。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 列出一台 GPU 节点在交付前必须通过的检查：IB 自查（链路状态、速率、宽度、误码计数器）、GPU 健康（ECC、行重映射、XID、降频）、DCGM 诊断、NCCL Test；
# - 用 `ibstat`、`ibv_devinfo`、`perfquery`、`nvidia-smi -q`、`dcgmi diag`、`all_reduce_perf` 取得证据，并用 `labutil.parsers` 把输出变成结构化数据；
# - 由链路速率算出 all_reduce busbw 的**环界**与课程集群模型给出的**期望值**，并把验收阈值写成「期望值 × 比例」这样可以复核的规则；
# - 解释为什么「计数器的绝对值」没有意义、「两次采样的增量」才有意义；
# - 用规则引擎 `labutil.health.run_checks` 对一台节点给出 PASS / WARN / FAIL 及每一条理由。

# %%
from labutil.notebook import setup, show_table
from labutil import health, links, reliability
from labutil.cluster import Cluster
from labutil import parsers as P
from labutil.parsers import samples
from labutil.explore import health as health_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 为什么要有「验收」这一步
#
# 种子课程把「集群健康检查（NCCL Test、IB 自查）」列为部署流程的标准环节，这不是形式主义。
# 一个千卡集群的计算网络就有两千多根 400G 线缆、两千多个光模块（第 3 章：1,024 卡各 2,048）、一百多台服务器，上架时任何一根线插得不到位、任何一个光模块脏污，
# 都不会让机器「开不了机」——它只会让某条链路以一半速率协商上来，或者以每秒几十次的误码「带病工作」。
# 这种故障最阴险：单机测试全部通过，训练也能跑，只是整个作业**慢了一半**，而且没有任何报错。
#
# 原因在于同步训练的木桶效应：数据并行的每一步都要做一次 all_reduce，NCCL 把数据平均切给每一条轨道（rail）上的环，
# 这一步要等**最慢的那个环**完成。一条 200G 的慢链路拖住的不是一台机器，而是整个作业的所有 GPU。
# 所以验收的目标不是「平均来说够快」，而是「**没有一条链路、一张卡拖后腿**」。本章的规则引擎正是按这个思路设计的：
# 任何一个 critical 发现都让整台节点验收失败，并给出可以直接交给现场工程师的理由。
#
# 验收分四层，自下而上：
#
# | 层次 | 检查什么 | 工具 | 典型故障 |
# |---|---|---|---|
# | 物理链路 | 端口状态、物理状态、速率、宽度、误码计数器 | `ibstat`、`ibv_devinfo`、`perfquery` | 线缆未插紧、光模块脏污、端口降速到 HDR |
# | GPU 硬件 | ECC、行重映射、退役页、XID、温度与降频 | `nvidia-smi -q`、`dmesg`、`dcgmi diag` | 显存不可纠正错误、散热不良导致 HW Thermal Slowdown |
# | 单机压力 | 计算、显存带宽、功耗、PCIe/NVLink | `dcgmi diag -r 3`、GPU burn-in | 电源或散热在满载下才暴露的问题 |
# | 集群通信 | 跨节点 all_reduce 带宽 | `all_reduce_perf`（nccl-tests）、`NCCL_DEBUG=INFO` | 退回 TCP Socket、GPUDirect RDMA 未生效、慢轨道 |
#
# 顺序很重要：先排除物理层，再看 GPU，最后跑集群通信。如果一上来就跑 nccl-tests 发现带宽低，你要在几百根线里找原因；
# 先做完前两层，nccl-tests 的结果才有解释力。

# %% [markdown]
# ## 2. IB 自查：状态、速率、宽度
#
# InfiniBand 端口有两个状态，含义不同（IBTA 规范 Vol 1 PortInfo）：
#
# - **Physical state**（物理状态）：电信号层面是否握手成功。`LinkUp` 表示两端的 SerDes 已经训练好；`Polling` 表示端口在等对端——通常是没插线、对端没上电或线缆坏了。
# - **State**（逻辑状态）：子网管理器（Subnet Manager, SM）是否已经发现并配置了这个端口。`Active` 才能收发数据；`Initializing` 说明物理层通了但 SM 没有配置它（SM 没运行或没扫到）；`Down` 通常与 `Polling` 同时出现。
#
# **速率**是验收里最容易被忽略的一项。链路训练时两端会协商出双方都支持且信号质量允许的最高速率，
# 一根质量差的线缆或一个接触不良的光模块，常常让 NDR 端口「成功地」协商在 HDR 200G 上：状态是 Active/LinkUp，
# 什么都不报错，只有 `Rate` 字段变成了 200。端口速率等于每条 lane 的数据速率乘以 lane 数：
#
# $$R_{\text{port}} = w \times r_{\text{signal}} \times \eta_{\text{enc}}$$
#
# 其中 $w$ 是宽度（通常 4X），$r_{\text{signal}}$ 是每条 lane 的信号速率，$\eta_{\text{enc}}$ 是编码效率。
# NDR 每条 lane 线路速率 106.25 Gb/s，PAM4 加 RS(544,514) FEC 与 256b/257b 转码后效率 0.941，
# 得到 100 Gb/s 数据速率，4X 端口即 400 Gb/s。`ibv_devinfo -v` 会分别打印 `active_width: 4X` 与 `active_speed: 100.0 Gbps`，
# 于是「宽度降级」（4X 变 1X 或 2X，往往是某几条 lane 坏了）和「速度降级」（NDR 变 HDR）都能分辨出来。

# %%
# NBVAL_CHECK_OUTPUT
for gen in ("EDR", "HDR", "NDR", "XDR"):
    e = links.ib_link(gen)
    print(f"{gen}: lane {e['signal_gbps']:.4g} Gb/s line x {e['efficiency']:.4f} = {e['lane_gbps']:.1f} Gb/s data; "
          f"4X port {links.ib_port_gbps(gen, 4):.0f} Gb/s = {links.ib_port_gbps(gen, 4) / 8:.1f} GB/s")

# %% [markdown]
# ### 实操命令：读 `ibstat` 与 `ibv_devinfo -v`
#
# ```bash
# ibstat                      # 所有 HCA 的端口状态、速率、LID、链路层
# ibstat mlx5_1 1             # 只看一个 HCA 的一个端口
# ibv_devinfo -v -d mlx5_1    # 宽度、每 lane 速度、MTU、phys_state
# iblinkinfo                  # 从交换机视角看整张网的每条链路（需要 SM 所在网段）
# ```
#
# 下面的样例是按 `ibstat` 的真实格式（rdma-core infiniband-diags `ibstat.c`）写成的示意输出：一台 H100 节点的 3 块 HCA，
# mlx5_0 正常，mlx5_1 降速到 200，mlx5_2 没有链路。我们用 `parse_ibstat` 读它，再交给规则 `check_ibstat`。

# %%
print(samples.sample("ibstat_ndr")[:420])

# %%
cas = P.parse_ibstat(samples.sample("ibstat_ndr"))
show_table([{"CA": ca.name, "port": p.port, "state": p.state, "physical": p.physical_state,
             "rate_gbps": p.rate_gbps, "link_layer": p.link_layer} for ca in cas for p in ca.ports])

# %%
# NBVAL_CHECK_OUTPUT
for f in health.check_ibstat(cas, health.AcceptanceSpec(ib_rate_gbps=400)):
    print(f"{f.severity:8s} {f.component:14s} {f.check:18s} value={f.value} expected={f.expected}")
devs = P.parse_ibv_devinfo(samples.sample("ibv_devinfo_v"))
for d in devs:
    p = d.ports[0]
    print(f"{d.hca_id}: {p.active_width} x {p.active_speed_gbps:g} Gb/s = {p.rate_gbps:g} Gb/s, MTU {p.active_mtu}")

# %% [markdown]
# `ibv_devinfo -v` 的样例同样是示意输出（格式来自 rdma-core `libibverbs/examples/devinfo.c`）：mlx5_1 宽度仍是 4X，
# 但每条 lane 只有 50 Gb/s——这是 HDR 的 lane 速度，说明整条链路是「速度降级」而不是「断了几条 lane」。
# 这个区别决定了现场怎么修：速度降级优先换线缆/光模块、检查对端交换机端口配置；宽度降级多半是光模块或端口硬件损坏。

# %% [markdown]
# ## 3. 误码计数器：看增量，不看绝对值
#
# `perfquery` 读出端口的 PortCounters（IBTA 规范定义的计数器）。最常用的几个：
#
# | 计数器 | 含义 | 课程策略 |
# |---|---|---|
# | SymbolErrorCounter | 物理层符号错误（误码），FEC 能纠正的也会计入 | 增量 ≥ 1 警告，≥ 100 critical |
# | LinkErrorRecoveryCounter | 链路为恢复错误重新训练的次数 | 任何增量 critical |
# | LinkDownedCounter | 链路断开的次数（flapping） | 任何增量 critical |
# | PortRcvErrors | 收到的坏包（CRC 错误等） | 增量 ≥ 1 警告，≥ 100 critical |
# | PortXmitDiscards | 因拥塞或端口不可用被丢弃的发送包 | 增量 ≥ 1 警告 |
# | LocalLinkIntegrityErrors / ExcessiveBufferOverrunErrors | 链路完整性 / 缓冲区溢出 | 任何增量 critical |
#
# 这些计数器从上次清零（或开机）起**一直累加**，一台跑了半年的交换机端口有几十个 SymbolError 完全正常。
# 所以正确的做法是：先记录一次，施加流量（比如跑 10 分钟 nccl-tests），再记录一次，看**增量**。
# 规则 `check_perfquery(before, after)` 就是这样实现的；如果后一次比前一次小，说明中间被清零过，只记一条 info。
#
# 还有一个老手才知道的细节：不带 `-x` 时读的是 IBTA 的基本 PortCounters，它们的位宽很窄——SymbolErrorCounter 16 位、
# LinkErrorRecoveryCounter 与 LinkDownedCounter 各 8 位、PortXmitData/PortRcvData 32 位（单位是 4 字节），而且**到上限就停住**
# （饱和，不回绕）。一个饱和的计数器两次读数之差永远是 0，会把真实的错误藏起来；下面样例里的 PortXmitData 4294967295 = 2³²−1
# 就是一个早已饱和的数据计数器。所以要么在基线时清零（`-R`），要么用 `-x` 读 64 位的 PortCountersExtended：它的表头是
# `# Port extended counters: ...`，数据计数器总是 64 位，支持 AdditionalPortCountersExtended 的网卡（CapMask2 里有这一位）
# 也会在里面给出 64 位的错误计数器。
#
# ```bash
# perfquery <lid> 1 > t0.txt        # 基本 PortCounters（含全部错误计数器）；<lid> 来自 ibstat 的 Base lid
# perfquery -x <lid> 1 >> t0.txt    # 64 位扩展计数器（数据量；新网卡上也含错误计数器）
# # ... 跑 10 分钟 all_reduce_perf 施加流量 ...
# perfquery <lid> 1 > t1.txt
# perfquery -R <lid> 1              # 验收完成后清零，作为下一次比较的基线
# ibqueryerrors                     # 整张子网：列出错误计数超过阈值（默认 0）的每一个端口
# ibdiagnet --pc                    # 全网清零计数器；跑完流量后再执行 ibdiagnet，报告里看各端口的增量
# ibdiagnet --get_phy_info          # 全网各端口的物理层信息与 BER 计数（NVIDIA ibdiagnet 文档「PHY Diagnostics」）
# ```
#
# 单台节点用 `perfquery`，整张 fabric 用 `ibqueryerrors` / `ibdiagnet`：交换机之间的线缆不属于任何一台服务器，只有从子网管理的视角才看得到。
# 下面两个样例（按不带 `-x` 的 `perfquery` 格式写成的示意输出）是同一个端口（lid 6，即上一节的 mlx5_1）前后两次的读数：

# %%
t0 = P.parse_perfquery(samples.sample("perfquery_t0"))
t1 = P.parse_perfquery(samples.sample("perfquery_t1"))
health_x.counter_delta_figure()

# %%
# NBVAL_CHECK_OUTPUT
for f in health.check_perfquery(t0, t1):
    print(f"{f.severity:8s} {f.check:26s} +{f.value}")
print(f"absolute SymbolErrorCounter before: {t0.counters['SymbolErrorCounter']}, after: {t1.counters['SymbolErrorCounter']}")

# %% [markdown]
# 「前一次 12 个 SymbolError」本身不说明任何问题；十分钟涨了 4,115 个、还掉线了一次，才是需要立刻处理的信号。
# 结合上一节，这正是 mlx5_1：它降速到 200G，又在持续误码——典型的光模块或线缆问题，应该下线更换后重新验收。

# %% [markdown]
# ## 4. GPU 健康：ECC、行重映射、XID 与降频
#
# H100/A100 的 HBM 显存出现不可纠正错误（uncorrectable ECC）时，驱动会把出错的行标记为「待重映射」，
# 需要**复位 GPU** 才生效（NVIDIA《GPU Memory Error Management》）。在此之前这张卡不应再接任务；
# 如果重映射本身失败（`Remapping Failure Occurred: Yes`），就是返修（RMA）候选。驱动同时会在内核日志里打印 XID 事件
# （NVIDIA《XID Errors》文档）：XID 63/64 与行重映射有关，XID 94/95 是已被隔离（contained，只影响用到坏数据的进程）/未被隔离（uncontained）的 ECC 错误，
# XID 79 是「GPU 从总线上掉了」，XID 13、31、43 多半是应用自身的错误。
#
# 降频也要看。`nvidia-smi -q` 的 `Clocks Event Reasons`（老驱动叫 `Clocks Throttle Reasons`）列出当前生效的降频原因：
# `Idle`、`SW Power Cap`（功耗封顶，满载时出现属正常）不算问题；`HW Slowdown`、`HW Thermal Slowdown`、`HW Power Brake Slowdown`
# 说明硬件在自我保护——通常是散热、风扇或电源的问题，必须处理。
#
# ```bash
# nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER,TEMPERATURE,PERFORMANCE,POWER
# nvidia-smi --query-gpu=index,pci.bus_id,temperature.gpu,power.draw,ecc.errors.uncorrected.volatile.total --format=csv
# dmesg -T | grep -i xid
# nvidia-smi nvlink -s                      # 每条 NVLink 的状态与速率（H100 每卡 18 条）：少一条，节点内的环就慢一截
# nvidia-smi nvlink -e                      # NVLink 错误计数（CRC、replay、recovery）：和 IB 计数器一样看增量
# systemctl is-active nvidia-fabricmanager  # HGX/DGX 的 NVSwitch 由 fabric manager 配置，它没起来 CUDA 就初始化不了（第 19 章）
# ```
#
# 下面的 `nvidia-smi -q` 样例是按 R550 驱动格式写成的节选示意输出（保留了身份、ECC、行重映射、温度、功耗几节），
# 其中第二张卡被设定为「有问题」：

# %%
q = P.parse_nvidia_smi_q(samples.sample("nvidia_smi_q"))
show_table([{"GPU": g.index, "bus_id": g.bus_id, "ECC unc (volatile)": g.ecc_volatile_uncorrectable,
             "remap pending": g.remapped_rows_pending, "temp_c": g.temperature_c,
             "throttle": ", ".join(g.throttle_active)} for g in q.gpus])

# %%
# NBVAL_CHECK_OUTPUT
for f in health.check_nvidia_smi_q(q) + health.check_xid(P.parse_xid_errors(samples.sample("dmesg_xid"))):
    print(f"{f.severity:8s} {f.component:22s} {f.check}")

# %% [markdown]
# ## 5. DCGM 诊断：分级的「体检」
#
# DCGM Diagnostics（原 NVVS）按级别组织（NVIDIA DCGM 用户指南「DCGM Diagnostics」）：
# **Level 1** 只做部署类检查（驱动、库、权限、持久模式、行重映射状态），几秒钟，适合作为每个作业前的就绪检查；
# **Level 2** 加上 PCIe/NVLink、显存和短时计算测试，约 2 分钟，适合作业失败后的复查；
# **Level 3** 包含长时间的压力测试（Targeted Stress、Targeted Power、Memory Bandwidth 等），约 15 分钟，**Level 4** 更长
# （时长都取自 NVIDIA DCGM 文档的 `dcgmi diag` 命令参考；第 28 章的排障成本用的是同一个数字），
# 由管理员在上线验收或事后分析时运行，而且要先把节点排空。**GPU burn-in**（让所有 GPU 在满功耗下连续运行数小时）是同一思路的延伸：
# 很多电源、散热、显存问题只有在满载并热起来之后才暴露，而上线第一周的故障率往往最高，验收时把它们筛出来代价最小。
#
# ```bash
# dcgmi diag -r 1          # 就绪检查，秒级
# dcgmi diag -r 3          # 上线验收，约 15 分钟（先 drain 节点）
# dcgmi diag -r 3 -j       # JSON 输出，便于脚本处理
# ```
#
# `dcgmi diag` 打印一张 ASCII 表，长消息按固定列宽折行（甚至在单词中间断开）。
# 下面两个样例按 DCGM 3.3 的表格格式写成（与 NVIDIA/DCGM issue #55、#198 中粘贴的输出同一版式），`parse_dcgmi_diag` 会把折行拼回完整消息：

# %%
# NBVAL_CHECK_OUTPUT
for name in ("dcgmi_diag_r3_pass", "dcgmi_diag_r2_fail"):
    d = P.parse_dcgmi_diag(samples.sample(name))
    print(f"{name}: level {d.level}, {len(d.tests)} tests, passed={d.passed}")
    for t in d.by_status("Fail"):
        gpus = f"GPUs {t.failed_gpus}" if t.failed_gpus else "no per-GPU column"
        print(f"  FAIL {t.category}/{t.name} ({gpus}): {t.warnings[0][:70]}")

# %% [markdown]
# ### 5.1 各级诊断到底测了什么
#
# 读懂 `dcgmi diag` 的表，关键是知道每一行测的是哪一层。上面 Level 3 样例里的测试按类别分组如下（解析结果，不是手抄）：

# %%
# NBVAL_CHECK_OUTPUT
r3 = P.parse_dcgmi_diag(samples.sample("dcgmi_diag_r3_pass"))
for cat in dict.fromkeys(t.category for t in r3.tests):
    print(f"{cat:12s}: " + ", ".join(f"{t.name} [{t.status}]" for t in r3.tests if t.category == cat))

# %% [markdown]
# - **Deployment**（Level 1 起就有）：软件与配置——驱动是否在禁用名单上、NVML 与 CUDA 库能否加载、权限、持久模式、有没有别的图形进程占着 GPU、
#   显存页退役/行重映射是否有待处理项、InfoROM 是否完整。它不给 GPU 加负载，所以只要几秒，适合放进每个作业的 prolog。
# - **Integration / PCIe**：主机与 GPU 之间、GPU 与 GPU 之间的传输带宽和延迟，以及 PCIe 重放（replay）计数——插槽降速、转接卡接触不良在这里暴露。
# - **Hardware**：`GPU Memory` 向显存写入测试图样再读回比对；`Diagnostic` 运行矩阵乘一类的计算并校验结果，针对的是「算错了却不报错」的静默数据损坏。
# - **Stress**（Level 3 的主体，也是它需要约 15 分钟的原因）：`Targeted Stress` 让 GPU 持续维持一个目标算力，`Targeted Power` 持续维持一个目标功耗，
#   `Memory Bandwidth` 测可达的显存带宽。供电、散热、降频这类只在满载一段时间后才出现的问题，靠的就是这一组。
#   `EUD Test`（End-User Diagnostics）需要另装软件包，没装时显示 Skip，这不是失败。
#
# 为什么 GPU 这一层值得花 15 分钟？Meta 的 Llama 3 论文（Table 5）把 16,384 张 H100 在 54 天里的 419 次意外中断按原因分了类，
# 按故障部件归并后，GPU（含 HBM、SRAM、GPU 系统处理器、静默数据损坏）占了大头：

# %%
# NBVAL_CHECK_OUTPUT
parts = reliability.llama3_counts_by_part()
total = sum(parts.values())
print(", ".join(f"{k} {v} ({v / total:.0%})" for k, v in sorted(parts.items(), key=lambda kv: -kv[1])))
print(f"total {total} unexpected interruptions in 54 days = {reliability.llama3_failures_per_day():.2f} per day")

# %% [markdown]
# 近三分之二（64%）的中断来自 GPU 本身，这就是 DCGM 诊断在验收流程里占一个固定位置的原因；而网络（交换机/线缆）约 8%、主机约 5%，
# 分别由第 2–3 节的链路检查和第 6 节的 NCCL 测试覆盖——三类检查缺了哪一类，就会漏掉对应的那一块。
#
# **排空的代价要算进计划。** Level 3 要先把节点排空。一个 128 台的集群，如果每次只允许 8 台同时离线做诊断（保住 94% 的容量），
# 全部跑完一轮需要 $128 / 8 \times 15$ 分钟 $= 4$ 小时；所以生产集群通常只在上线、维修归还、或者作业在该节点上失败之后跑 Level 3，
# 平时用 Level 1 做作业前检查。

# %% [markdown]
# ## 6. NCCL Test：带宽验收的阈值从哪里来
#
# 种子课程的第二项自查是 NCCL Test。nccl-tests 打印两种带宽（nccl-tests `doc/PERFORMANCE.md`）：
# 算法带宽 $\text{algbw} = S / t$，以及总线带宽
#
# $$\text{busbw} = \text{algbw} \times \frac{2(n-1)}{n} \quad (\text{all\_reduce})$$
#
# busbw 的意义是「每个 rank 的链路上实际跑了多少数据」，因此可以直接和硬件链路速率比较，而且与 $n$ 无关。
# 对 ring 算法，busbw 的上限就是环上最慢的那段链路。一台 DGX H100 有 8 条 400G 计算轨道，
# NCCL 每条轨道建一个环、数据平均分到各个环，于是跨节点 all_reduce 的**环界**是各轨道带宽之和：
#
# $$B_{\text{bound}} = \min\Big(\frac{k \cdot R_{\text{rail}}}{8},\ B_{\text{NVLink}}\Big) = \min\Big(\frac{8 \times 400}{8},\ 450\Big) = 400\ \text{GB/s（线速）}$$
#
# 线速两边都到不了：NCCL 在每块 400G 网卡上约能拿到 48 GB/s（线速的 96%），在 NVLink 4 的环上约 370 GB/s（线速 450 的 82%），
# 所以**期望值**是 $\min(370,\ 8 \times 48 = 384) = 370$ GB/s——课程的集群模型 `labutil.cluster` 的 `acceptance_busbw_gbs`
# （两节点加 `NCCL_ALGO=Ring`：NCCL 默认的 NVLS-Tree 会超过它，也会藏住慢轨道，第 22 章解释了来源）。单机 8 卡时 all_reduce
# 默认用 NVLink SHARP（NVLS），期望约 480 GB/s，而不是「450 × 0.9 = 405」。线速环界 400 GB/s 只是**参考线**，不是阈值。
# **课程策略**（请按你们现场的规范调整）：峰值 busbw ≥ 期望值的 80% 判通过，60%–80% 为警告，低于 60% 判失败——
# 图、探索器、`health.run_checks(cluster=…)`、第 22 章和第 30 章的验收清单用的都是这同一条线（`labutil.health.acceptance_lines`）。
# 要特别注意，一条慢轨道会让所有环都等它：
#
# $$B_{\text{degraded}} = \min\Big(B_{\text{NVLink 环}},\ k \cdot \frac{\min_i R_i}{8} \cdot \eta\Big)$$
#
# 其中 $\eta = 0.96$ 是集群模型里 NCCL 能跑到的网卡线速比例（`labutil.cluster.NIC_EFFICIENCY`）。8 条轨道中只要有一条降到 200G，
# 网卡那一项就从 384 GB/s 掉到 192 GB/s，整机 busbw 从健康时的 370 GB/s 掉到 192 GB/s——差不多一半。

# %%
# NBVAL_CHECK_OUTPUT
line = health.ring_busbw_bound_gbs("inter", nic_gbps=400, nics_per_node=8, gpu="H100-SXM")
dgx2 = Cluster.system("DGX-H100", n_nodes=2)
expected = dgx2.acceptance_busbw_gbs("all_reduce")   # NCCL_ALGO=Ring across the two nodes
assert line == dgx2.line_bound_gbs()                 # health's name is a one-line call into the Cluster
print(f"line-rate ring bound (8 x 400G, H100): {line:.0f} GB/s (reference); 2 x DGX H100 expected busbw: {expected:.0f} GB/s "
      f"(NCCL default, NVLS-Tree: {dgx2.expected_busbw_gbs('all_reduce', algo='auto'):.0f})")
print(f"one node: 8xH100 NVLS busbw {dgx2.expected_busbw_gbs('all_reduce', 8):.0f} GB/s, "
      f"8xH100 ring busbw {dgx2.expected_busbw_gbs('all_reduce', 8, algo='ring'):.0f} GB/s")
spec = health.AcceptanceSpec()   # the default acceptance fractions (0.8 pass, 0.6 fail)
print(f"pass >= {expected * spec.busbw_pass_fraction:.0f} GB/s, fail < {expected * spec.busbw_fail_fraction:.0f} GB/s")
print(f"healthy 8 rails: {health.rail_allreduce_busbw_gbs(400, 8, 0, None):.0f} GB/s; "
      f"one rail at 200G: {health.rail_allreduce_busbw_gbs(400, 8, 1, 200):.0f} GB/s")

# %% [markdown]
# ### 实操命令：nccl-tests 与 NCCL 日志
#
# ```bash
# # 两台节点、每台 8 卡，每个 GPU 一个进程
# mpirun -np 16 -N 8 --hostfile hosts -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET \
#     ./build/all_reduce_perf -b 8 -e 8G -f 4 -g 1 2>&1 | tee ar.log
# grep -E "Using network|via NET" ar.log | head     # 走的是 IB 还是 Socket？有没有 GDRDMA？
# ```
#
# 下图是两份按 nccl-tests（≥ 2.17）真实表格格式生成的样例输出：数值由 α-β 模型合成（生成脚本见 `tests/fixtures/make_nccl_samples.py`），
# 不是实测，但表头、列和单位与真实输出一致，`parse_nccl_tests` 读的就是它们。图里的通过线、失败线是期望值 370 GB/s 的 80% / 60%，
# 线速环界 400 GB/s 单独画成一条参考线——和第 22 章那张同样样例的图是同一组线。

# %%
health_x.busbw_samples_figure()

# %% [markdown]
# 小消息段两条曲线重合：那里由延迟主导，链路速率无关紧要——这也是为什么验收只看大消息的峰值 busbw，
# 而不是 nccl-tests 最后一行的 `Avg bus bandwidth`（它把 8 字节到 8 GB 的所有行平均在一起，主要反映延迟）。

# %%
# NBVAL_CHECK_OUTPUT
for name in ("nccl_tests_all_reduce_2node", "nccl_tests_all_reduce_degraded"):
    r = P.parse_nccl_tests(samples.sample(name))
    f = health.check_nccl_tests(r, expected)[0]
    print(f"{name}: {r.op} on {r.n_ranks} ranks, peak busbw {r.peak_busbw_gbs:.1f} GB/s, "
          f"'Avg bus bandwidth' {r.avg_busbw_gbs:.1f} GB/s -> {f.severity}")

# %% [markdown]
# ## 7. 交互：一条慢轨道的代价
#
# 拖动下面的控件：改变每条轨道的速率、轨道数、降速的轨道数和降速后的速率、NCCL 效率和通过线。
# 观察两件事：第一，降速的是一条还是八条，对大消息 busbw 的影响**完全一样**（都由最慢的那条决定）；
# 第二，通过线定在期望值的 80% 时，一条 HDR 200G 的慢轨道就足以让整台节点验收失败。健康时的期望值受 NVLink 环封顶：
# 把轨道速率调到 800G，网卡那一项翻倍，期望值仍是 370 GB/s；线速环界（参考线）则跟着网卡走。

# %%
health_x.acceptance_explorer()

# %% [markdown]
# ## 8. 规则引擎：把所有证据合成一个结论
#
# `health.run_checks` 接受各个工具的原始输出（字符串）或解析后的对象，逐项运行规则，输出一张表：
# 严重程度、部件、检查项、观测值、期望值和理由。它有三个设计原则：
# 一、**解析失败本身就是 critical**——拿不到证据不能算通过；
# 二、每条阈值都是 `AcceptanceSpec` 里的一个具名参数，可以审阅、可以按现场规范修改；
# 三、**任何一个 critical 都让节点验收失败**，警告则需要人看一眼再决定。
# 下面把本章所有样例喂给它——这台「节点」问题很多：

# %%
report = health.run_checks(
    ibstat=samples.sample("ibstat_ndr"), ibv_devinfo=samples.sample("ibv_devinfo_v"),
    perfquery=(samples.sample("perfquery_t0"), samples.sample("perfquery_t1")),
    nvidia_smi_q=samples.sample("nvidia_smi_q"), xid=samples.sample("dmesg_xid"),
    dcgmi=samples.sample("dcgmi_diag_r2_fail"), nccl_tests=samples.sample("nccl_tests_all_reduce_degraded"),
    expected_busbw_gbs=expected, nccl_log=samples.sample("nccl_debug_socket"))
report.table()

# %%
# NBVAL_CHECK_OUTPUT
print(f"status {report.status}: {report.count('critical')} critical, {report.count('warning')} warning, "
      f"{report.count('info')} info over {len(report.checks_run)} checks")
healthy = health.run_checks(dcgmi=samples.sample("dcgmi_diag_r3_pass"),
                            nccl_tests=samples.sample("nccl_tests_all_reduce_2node"), expected_busbw_gbs=expected,
                            nccl_log=samples.sample("nccl_debug_ib"))
print(f"healthy node: status {healthy.status}, {healthy.count('critical')} critical")

# %% [markdown]
# 有了这张表，现场工程师拿到的不是「带宽不达标」，而是一串可执行的动作：更换 mlx5_1 的线缆或光模块、
# 排查 mlx5_2 为什么没有链路、把 GPU 00000000:5D:00.0 下线复位并检查散热、确认 NCCL 为什么没有用上 IB
# （样例日志里有 `NET/IB : No device found.`，通常是容器没有挂载 `/dev/infiniband` 或没装 rdma-core）。修完之后，**整套验收从头再跑一遍**。
# 你自己的机器可以用 `python -m labutil doctor` 先做一次环境体检（第一个实验 lab01 就从它开始）。

# %% [markdown]
# ## 9. 常见误区
#
# **误区一：「端口是 Active 就没问题。」** Active 只说明子网管理器配置了它，速率可能早已降级。下面用样例算一下：

# %%
# NBVAL_CHECK_OUTPUT
active = [(ca.name, p.rate_gbps) for ca in cas for p in ca.ports if p.state == "Active"]
print("Active ports and their rates:", active)
print(f"busbw if the 200G port is one of 8 rails: {health.rail_allreduce_busbw_gbs(400, 8, 1, 200):.0f} GB/s "
      f"vs {health.rail_allreduce_busbw_gbs(400, 8, 0, None):.0f} GB/s healthy")

# %% [markdown]
# **误区二：「看 nccl-tests 最后一行的 Avg bus bandwidth 就够了。」** 它平均了所有消息大小，被小消息拉得很低，
# 健康和降级的节点都远低于阈值，根本分不出来：

# %%
# NBVAL_CHECK_OUTPUT
for name in ("nccl_tests_all_reduce_2node", "nccl_tests_all_reduce_degraded"):
    r = P.parse_nccl_tests(samples.sample(name))
    print(f"{name}: Avg {r.avg_busbw_gbs:.1f} GB/s ({r.avg_busbw_gbs / expected:.0%} of expected), "
          f"peak {r.peak_busbw_gbs:.1f} GB/s ({r.peak_busbw_gbs / expected:.0%} of expected)")

# %% [markdown]
# **误区三：「计数器里有错误数就该换线。」** 绝对值是自清零以来的累计，只有增量有意义：
# 同一个端口，前一次读数自己和自己比，增量为零，规则不会报任何问题；真正的问题是十分钟内的 +4,115。

# %%
# NBVAL_CHECK_OUTPUT
print(f"findings comparing t1 with itself: {len(health.check_perfquery(t1, t1))}")
print(f"findings comparing t0 -> t1: {len(health.check_perfquery(t0, t1))}")

# %% [markdown]
# **误区四：「单机 dcgmi 通过了，集群就没问题。」** DCGM 诊断只覆盖单机内部；上面的「健康节点」样例 dcgmi 全部通过，
# 但同样的 GPU 接上一条慢轨道，集群通信照样只剩一半——物理层和集群层的检查不能省。

# %%
# NBVAL_CHECK_OUTPUT
print(f"dcgmi diag -r 3 sample passed: {r3.passed}; "
      f"all_reduce busbw with one 200G rail: {health.rail_allreduce_busbw_gbs(400, 8, 1, 200):.0f} GB/s "
      f"vs {health.rail_allreduce_busbw_gbs(400, 8, 0, None):.0f} GB/s healthy")

# %% [markdown]
# **误区五：「每个作业启动前都跑一遍 `dcgmi diag -r 3` 最保险。」** 按 Llama 3 的中断率，16,384 卡的集群每天要重启约 7.76 次；
# 若每次重启前都让全集群等一次约 15 分钟的 Level 3 诊断，一天就有近两个小时的整集群空转，占全天约 8%——比大多数故障本身的损失还大。
# 正确的分工是：作业前 Level 1（秒级），失败后对涉事节点 Level 2/3，上线与维修归还时 Level 3。

# %%
# NBVAL_CHECK_OUTPUT
per_day = reliability.llama3_failures_per_day()
idle_min = per_day * 15
print(f"{per_day:.2f} restarts/day x 15 min of dcgmi diag -r 3 = {idle_min:.0f} min of idle cluster per day "
      f"({idle_min / (24 * 60):.1%} of the day)")

# %% [markdown]
# ## 10. 练习
#
# **练习 1**：一台 DGX H100 有 8 条 400 Gb/s 的 NDR 计算轨道。跨节点 all_reduce busbw 的环界是多少 GB/s？

# %%
answer_1 = None
exercise("ch23.1").check(answer_1)

# %% [markdown]
# **练习 2**：两台这样的节点（2 × DGX H100）做成对测试，按课程策略（通过线 = 期望值的 80%），峰值 busbw 至少要多少 GB/s 才算通过？

# %%
answer_2 = None
exercise("ch23.2").check(answer_2)

# %% [markdown]
# **练习 3**：8 条 400G 轨道中有一条降到 200G，NCCL 跑到每块网卡线速的 0.96，预计峰值 all_reduce busbw 是多少 GB/s？

# %%
answer_3 = None
exercise("ch23.3").check(answer_3)

# %% [markdown]
# **练习 4**：用 `P.parse_perfquery` 解析样例 `perfquery_t0` 与 `perfquery_t1`，SymbolErrorCounter 增加了多少？

# %%
answer_4 = None
exercise("ch23.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：练习 4 的两次 perfquery 采样（默认验收标准：新增 ≥ 1 个错误告警，≥ 100 个为严重）。这个端口怎么处理：'ignore'、'watch'（稍后复查）还是 'replace'（隔离、重插或更换线缆/光模块）？

# %%
answer_5 = None  # 'ignore' / 'watch' / 'replace'
exercise("ch23.5").check(answer_5)

# %% [markdown]
# ## 11. 小结
#
# - 验收自下而上：物理链路 → GPU 硬件 → 单机压力 → 集群通信；前一层不干净，后一层的结果没有解释力。
# - IB 自查看四样：State = Active、Physical state = LinkUp、Rate = 设计速率、宽度 = 4X；误码计数器看两次采样的增量。
# - GPU 看不可纠正 ECC、待处理的行重映射、XID、硬件降频；DCGM 诊断按级别使用，上线前做 Level 3 与 burn-in。
# - NCCL Test 的阈值来自期望值（`labutil.cluster.expected_busbw_gbs`）：线速环界 $k \cdot R_{\text{rail}}/8$ 打上可达效率，再和 NVLink 环取小
#   （2 × DGX H100：370 GB/s；单机 8×H100 用 NVLS：480 GB/s），通过线是它的一个比例；一条慢轨道拖慢所有 GPU。
# - 结论要能复核：每个发现都有观测值、期望值和理由。
#
# ## 参考资料
#
# - 课程种子材料：《大规模GPU集群部署核心概念速览》课程导入（「集群健康检查（NCCL Test、IB自查）」）。
# - NVIDIA/nccl-tests，`doc/PERFORMANCE.md`（algbw、busbw 的定义与 2(n−1)/n 因子）；README 与 `src/util.cu`（输出格式）。
# - InfiniBand Trade Association, *InfiniBand Architecture Specification* Vol 1（PortInfo 状态、PortCounters）与 Vol 2（各代 lane 速率与编码）。
# - IEEE 802.3 Clause 134（RS(544,514) FEC，50/100/200G PAM4 lane 的编码开销，HDR/NDR/XDR 采用同类方案）。
# - rdma-core：infiniband-diags `ibstat`、`perfquery`（`perfquery.c`：基本计数器与 `-x` 扩展计数器的表头与字段，AdditionalPortCountersExtended）、`ibqueryerrors` 手册页；libibverbs `ibv_devinfo`（`devinfo.c`）。
# - NVIDIA ibdiagnet / IBUtils2 文档：「Port Counters」（PortCounters、PortCountersExtended 默认采集）与「PHY Diagnostics」（`--get_phy_info`、与 `--pc` 配合使用）。
# - NVIDIA，《GPU Memory Error Management》（行重映射、待处理重映射需复位）；《XID Errors》（XID 代码含义）；nvidia-smi 文档（`-q` 字段、Clocks Event Reasons）。
# - NVIDIA DCGM 用户指南，「DCGM Diagnostics」（Level 1–4 的内容与用途）；NVIDIA/DCGM issues #55、#198（`dcgmi diag` 表格格式）。
# - NVIDIA DCGM 文档 `dcgmi diag` 命令参考：level 1 数秒、level 2 约 2 分钟、level 3 约 15 分钟、level 4 更长（第 22、28 章使用同一数字）。
# - Llama Team, AI @ Meta, *The Llama 3 Herd of Models*, arXiv:2407.21783, §3.3.4 与 Table 5（16,384 张 H100、54 天、419 次意外中断的分类；数据在 `labutil/data/reliability.toml`）。
# - NVIDIA DGX H100 用户指南（8 块单口 ConnectX-7 400G 计算网卡）；NVIDIA H100 数据手册（NVLink 900 GB/s 双向）。
# - 验收阈值（80% / 60%、计数器增量阈值）为本课程策略，不是厂商规范；请按你们现场的验收文档调整 `AcceptanceSpec`。
