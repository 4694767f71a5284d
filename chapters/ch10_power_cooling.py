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
# # 第10章 供电、散热与机房
#
# > 模块二「计算节点与GPU」的最后一章。前置：第 6 章（GPU 的 TDP）、第 9 章（服务器节点设计）。
# > 本章算出的功耗会进入第 5 章的 TCO（电费）和第 30 章的千卡集群方案；网络部分的光模块数量来自第 12 章。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 从目录里的服务器最大功耗出发，算出节点、机柜和整个集群的 IT 功耗，并解释「一台 8 卡 H100 约 10 kW、千卡约 1.25 MW」是怎么来的；
# - 用 PUE 把 IT 功耗换算成机房总功耗，说清楚多大的 PUE 会让千卡集群超过 2 MW；
# - 在给定的单柜功率上限下算出每柜台数和机柜数，并按功率密度判断风冷、封闭通道、背板换热还是液冷，说出 DGX B200 与 GB200 NVL72 这一代把机柜推到了多少千瓦；
# - 算出年耗电量和电费，理解功率封顶（power capping）与 A+B 双路供电对容量规划的影响；
# - 用 `ipmitool dcmi power reading` 与 `nvidia-smi` 读出真实功耗并与模型对照。

# %%
from labutil.notebook import setup, show_table
from labutil import cost, hardware, power, topology
from labutil.explore import power as power_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 冰山下面的成本：为什么 GPU 集群先要问「电从哪里来」
#
# 种子课程的误区二叫「忽略功耗与散热的冰山成本」：一台 8 卡 H100 服务器满载约 10 kW，千卡集群的 IT 功耗接近 1.25 MW，
# 加上制冷和配电损耗，总功耗可能达到 2 MW 以上。我在项目里见过的最贵的返工，都不是买错了 GPU，而是机房签下来以后才发现
# 每个机柜只能给 8 kW、整栋楼只剩 1 MW 的市电余量——服务器到货了却上不了电。选址、机房合同、变压器扩容的周期以月计，
# 所以功耗必须在选型的第一周就算清楚。本章把这串数字一个一个算出来，而不是照抄。
#
# ### 1.1 服务器：从 GPU 的 700 W 到整机的 10.2 kW
#
# H100 SXM 的 TDP 是 700 W（目录 `gpus.toml`），8 张就是 5.6 kW。但整机的最大输入功率是 **10.2 kW**（NVIDIA DGX H100 数据手册）：
# 另外的 4.6 kW 来自两颗 56 核 Xeon、2 TB 内存、8+2 块 ConnectX-7 网卡、NVSwitch、10 块 NVMe（2 块系统盘 + 8 块数据盘）、风扇（满载时风扇本身就要上千瓦）和电源转换损耗。
# 规划电力时要用**最大输入功率**，而不是「GPU TDP × 8」，否则每台少算四成。

# %%
rows = []
for name in hardware.servers():
    s = hardware.server(name)
    g = s.gpu_spec
    rows.append({"server": name, "GPUs": f"{s.gpus} x {g.name}", "GPU TDP sum (kW)": s.gpus * g.tdp_w / 1e3,
                 "server max (kW)": s.max_power_w / 1e3, "GPU share": f"{s.gpus * g.tdp_w / s.max_power_w:.0%}",
                 "estimate?": "yes" if s.power_is_estimate else "no"})
show_table(rows, floatfmt=".2f")

# %% [markdown]
# 表中 `estimate?` 为 yes 的行是 OEM 机型：没有公开的最大功耗，目录里给的是按部件估算的值（来源写在 `servers.toml` 的 `source` 字段），
# 采购时一定要向厂商要电源配置和实测满载数据。DGX-B200 那一行是下一代：每张 B200 1,000 W，整机最大 14.3 kW、10U（六个 3.3 kW 电源，5+1 冗余），
# 每台比 DGX H100 多了四成功率——本章后面的「千卡 1.25 MW」只是 H100 这一代的数字，第 2.2 节再看 Blackwell 把机柜推到哪里。
#
# ### 1.2 集群：IT 功耗与 PUE
#
# 集群的 IT 功耗是所有服务器、网络和存储设备的输入功率之和；机房总功耗还要乘以 **PUE**（Power Usage Effectiveness，The Green Grid 定义，ISO/IEC 30134-2）：
#
# $$P_{\text{IT}} = N_{\text{server}}\cdot P_{\text{server}} + P_{\text{network}} + P_{\text{storage}},\qquad P_{\text{facility}} = \text{PUE}\cdot P_{\text{IT}}$$
#
# PUE − 1 就是制冷、UPS 与变压器损耗、照明所占的比例。Uptime Institute 2023 年全球调查的平均 PUE 是 1.58；Google 自建数据中心全年平均约 1.10。
# 千卡集群：1,000 / 8 = 125 台 DGX H100，IT 功耗——

# %%
# NBVAL_CHECK_OUTPUT
c = power.cluster_power(1000, server="DGX-H100", pue=1.0)
print(f"servers {c.servers}, server power {c.server_unit_kw:.1f} kW each, IT (servers only) {c.it_kw:,.0f} kW = {c.it_mw:.3f} MW")
pue_2mw = power.pue_for(c.it_kw, 2000.0)
print(f"PUE that turns this into 2 MW: {pue_2mw:.2f}")
for p in (1.2, 1.4, 1.58):
    print(f"PUE {p:.2f}: facility {power.cluster_power(1000, pue=p).facility_kw:,.0f} kW")

# %% [markdown]
# 这就是种子课程的数字：125 × 10.2 kW = **1.275 MW** IT（「接近 1.25 MW」），PUE ≥ 1.57 时总功耗就超过 **2 MW**——而 1.57 恰好接近行业平均水平。
# 网络和存储还没算。计算网络的光模块数量来自第 12 章的 `size_fabric`：千卡 H100 的 1:1 轨道优化网络需要约 2,000 个 17 W 级的双口光模块，
# 仅光模块就约 34 kW；交换机本体和存储阵列的功率因厂商而异，要按报价单填入 `network_kw` / `storage_kw`。

# %%
# NBVAL_CHECK_OUTPUT
fab = topology.size_fabric(1000, nics_per_node=8, gpus_per_node=8, switch_ports=64, link_gbps=400)
optics = topology.fabric_optics_kw(fab, hardware.switch("QM9700").transceiver_power_w)
c2 = power.cluster_power(1000, pue=1.5, network_kw=optics)
print(f"transceivers {fab.transceivers:,}, optics {optics:.1f} kW")
print(f"IT {c2.it_kw:,.1f} kW (servers {c2.server_kw:,.0f} + optics {c2.network_kw:.1f}); facility at PUE 1.5: {c2.facility_kw:,.0f} kW")

# %% [markdown]
# 下图把服务器、光模块和「制冷 + 配电」叠在一起，横向比较不同 PUE：同样的 1,000 张卡，PUE 从 1.1 到 1.8，机房总功耗从约 1.4 MW 涨到约 2.4 MW。

# %%
power_x.power_stack_figure(n_gpus=1000)

# %% [markdown]
# PUE 每增加 0.1，电表上的功率就增加 IT 功耗的 10%。对一个千卡集群，这相当于多出十几台 DGX 的功率：

# %%
power_x.pue_sweep_figure()

# %% [markdown]
# ### 1.3 电从哪里来：一条供电链路上的每一环
#
# 一度电从电网到 GPU 要经过好几级：高压市电（10 kV 或 35 kV）进入园区变电站，经变压器降到 400 V；
# 然后进入 UPS（不间断电源，电池或飞轮在市电中断后撑到柴油发电机启动，通常十几秒到一分钟）；再经配电柜和机柜 PDU 送到服务器电源；
# 服务器电源把交流变成直流供给主板和 GPU。每一级都有转换损耗，这些损耗连同制冷一起计入 PUE。
# 容量规划时要逐级核对：变压器容量、UPS 容量、柴发容量、每列配电柜的容量、每柜 PDU 的容量，任何一级不够，上游再富余也没用。
# 我的经验是先向机房方要「可用 IT 容量」（已经扣除冗余和制冷）和「单柜最大 kW」两个数字，再用本章的模型反推能放多少卡，而不是先买卡再找机房。
#
# 还有一个容易忽略的动态问题：大模型训练时所有 GPU 几乎同步地进入计算和通信阶段，整个集群的功率会在很短时间内大幅摆动，
# 千卡集群的摆幅可达数百千瓦（上限就是满载与空闲之差），UPS、发电机和上游电网都要能承受这样的负载阶跃。
# 这也是功率封顶、错峰启动作业、在调度层限制同时启动的大作业数量在大集群上越来越常见的原因。
#
# 这不是纸上谈兵。Meta 在 Llama 3 论文里写道：训练时上万张 GPU 会同时升降功耗——所有卡一起等待 checkpoint 写完或集合通信结束、整个作业启动或退出——
# 整个数据中心的功耗会在瞬间波动**数十兆瓦**，逼近电网的承受极限，他们把这列为扩大训练规模的持续挑战。用本章的模型看看 16K 张 H100 的量级：

# %%
# NBVAL_CHECK_OUTPUT
llama3 = power.cluster_power(16_384, server="DGX-H100", pue=1.0)   # Llama 3 405B: up to 16K H100 (Meta, 2024)
gpu_only_mw = 16_384 * hardware.gpu("H100-SXM").tdp_w / 1e6
print(f"16,384 GPUs in {llama3.servers:,} 8-GPU servers: IT load at full power {llama3.it_mw:.1f} MW")
print(f"the GPUs alone: {gpu_only_mw:.1f} MW -> if every GPU drops to half its TDP at once, the load steps by {gpu_only_mw / 2:.1f} MW")

# %% [markdown]
# 满载 IT 功耗约 21 MW，其中 GPU 就占 11.5 MW；只要所有卡同时从满载掉到一半功率（例如一起卡在 all-reduce 或 checkpoint 上），负载就瞬间跳变 5.7 MW，
# 作业崩溃后全部回到空闲则更多——「数十兆瓦」正是这个量级。对电网而言，这相当于一座小城市在几百毫秒内开关。
# 问题还不只是幅度：训练每一步都是「计算（高功率）→ 通信（低功率）」的循环，功率以秒级周期反复摆动，如果这个频率碰上发电机组或电网的固有频率，
# 会引起共振、损伤设备（Microsoft、OpenAI 与 NVIDIA 2025 年的联合论文用生产数据说明了这一点）。业界的对策分三层：
# 软件层在作业启动和结束时让功耗按斜坡变化，必要时在通信阶段让 GPU 跑一些「垫底」计算来填平低谷（代价是多耗电）；
# 硬件层由 GPU 驱动限制功率的升降速率；机柜层则把储能放进电源——NVIDIA 在 GB300 NVL72 的电源里加入了储能，称可把对电网的峰值需求降低最多 30%。
# 对规划者来说，能做的是在签电力合同时就把「负载阶跃」和「周期性摆动」写进去，让供电方评估，而不是等到上线那天才发现。
#
# ## 2. 机柜功率密度与散热方式
#
# 一个 42U 机柜能放 5 台 8U 的 DGX H100（留 2U 给管理交换机和理线），但 5 台就是 51 kW——远超大多数机房每柜 8–15 kW 的供电和制冷能力。
# 所以决定每柜台数的通常是**功率**而不是空间：
#
# $$n_{\text{per rack}} = \min\left(\left\lfloor \frac{P_{\text{rack limit}}}{P_{\text{server}}}\right\rfloor,\ \left\lfloor \frac{U_{\text{rack}} - U_{\text{reserved}}}{U_{\text{server}}}\right\rfloor\right)$$
#
# 散热方式按每柜千瓦数选择（阈值和出处见 `labutil/data/facility.toml`）：
#
# | 每柜功率 | 散热方式 | 说明 |
# |---|---|---|
# | ≤ 15 kW | 传统房间级风冷 | 多数存量机房的能力上限（10–15 kW/柜） |
# | 15–35 kW | 风冷 + 冷/热通道封闭 | 封闭通道后风冷可做到 35 kW 左右 |
# | 35–75 kW | 背板换热器（RDHx，rear-door heat exchanger） | 水冷背门直接在机柜出风口带走热量；商用产品额定 14–75 kW |
# | > 75 kW | 直接液冷（冷板 direct-to-chip） | GB200 NVL72 这类整柜 100 kW 以上的系统 |
#
# DGX SuperPOD 的典型做法是每柜 4 台 DGX H100，4 × 10.2 = 40.8 kW——已经超出封闭通道风冷的常见能力，需要背板换热或更强的制冷。
# 注意一个经常被忽略的细节：**40 kW 的机柜只能放 3 台**（3 × 10.2 = 30.6 kW），要放 4 台必须至少 41 kW。

# %%
# NBVAL_CHECK_OUTPUT
for limit in (15.0, 30.0, 40.0, 41.0, 60.0):
    r = power.cluster_power(1024, rack_kw_limit=limit)
    print(f"rack limit {limit:5.1f} kW: {r.servers_per_rack} per rack ({r.rack_limit_by:5s}), {r.racks:3d} racks, "
          f"{r.rack_kw:5.1f} kW/rack -> {r.cooling}")

# %% [markdown]
# 不同服务器在不同单柜上限下能放几台（柱上的数字是实际用到的千瓦数）：

# %%
power_x.rack_density_figure()

# %% [markdown]
# 图里 DGX-B200 的柱子最能说明问题：14.3 kW 一台，15 和 20 kW 的机柜都只能放 1 台，30、40 kW 放 2 台，要到 60 kW 才放得下 4 台（此时 4 × 10U 也正好占满可用空间）。
#
# 功率密度直接影响**选址**（种子课程 000：「功耗密度、制冷要求对机房选址与运维成本的影响」）：每柜 15 kW 的老机房每柜只能放 1 台 DGX H100，
# 1,024 张 H100 要 128 个机柜（见误区二的计算），而每柜 8–10 kW 的更老的机房连一台 10.2 kW 的 DGX H100 都带不动；
# 机柜多了，占地和走线长度都翻几倍，跨机柜的光缆变长、成本变高。能提供 41 kW 以上机柜和冷冻水的新机房，32 个机柜就够了。
#
# ### 2.1 风冷到底要吹多少风
#
# 散热的本质是把热量搬走：空气带走的功率 $P = \rho\, c_p\, Q\, \Delta T$（$\rho \approx 1.2$ kg/m³、$c_p \approx 1005$ J/(kg·K) 为常温空气的物性，
# $Q$ 是风量，$\Delta T$ 是进出风温差）。一台 10.2 kW 的 DGX H100，按进出风温差 15 K 算：

# %%
# NBVAL_CHECK_OUTPUT
rho_air, cp_air = 1.2, 1005.0          # kg/m^3, J/(kg K): dry air near 20 C (engineering handbooks)
M3S_PER_CFM = 0.3048 ** 3 / 60         # 1 cubic foot per minute in m^3/s
for n_servers, dt_k in ((1, 15.0), (1, 10.0), (4, 15.0)):
    heat_w = n_servers * power.server_power_kw("DGX-H100") * 1e3
    q = heat_w / (rho_air * cp_air * dt_k)
    print(f"{n_servers} x DGX H100 ({heat_w / 1e3:4.1f} kW), delta T {dt_k:4.1f} K: {q:5.2f} m^3/s = {q / M3S_PER_CFM:6,.0f} CFM")

# %% [markdown]
# 一台机器要约 0.56 m³/s（约 1,200 CFM）的风，温差只允许 10 K 时要 0.85 m³/s；一柜 4 台就是 2.3 m³/s，这已经接近房间级空调在一个机柜位置上能送出的极限，
# 而且风扇功率随风量的三次方上涨。风量、温差、噪声和风扇功耗的这笔账，就是为什么单柜超过 35 kW 以后要把水引到机柜背门（RDHx），再往上要把冷板直接贴到芯片上。
# 运维时还要盯住进风温度：ASHRAE 的推荐进风范围是 18–27 °C，热通道回流、盲板缺失、地板开孔位置不对，都会让机柜顶部的服务器吸进热风，
# 表现为同一机柜里上层 GPU 的温度和降频事件明显多于下层——这种问题用第 23 章的健康检查按机柜位置分组一看便知。
# 液冷还会降低 PUE（风扇功率和冷水机组负荷都下降），所以高密度往往同时意味着更低的电费。
#
# 液冷也带来了风冷时代没有的运维工作。冷板液冷通常是两级回路：机房的设施水经过 CDU（冷却液分配单元）的换热器，把热量从机柜内的二次回路带走；
# 二次回路的冷却液要做过滤和水质管理（防腐蚀、防微生物），每个机柜都要有漏液检测。CDU 一旦停转，整柜在几十秒内就会过热保护，
# 所以 CDU 和泵要按 N+1 冗余配置，并纳入和 UPS 同等级别的监控。好处是冷板可以用较高温度的供水，很多地区一年大部分时间不开冷水机组也能散热，这正是液冷机房 PUE 低的原因。
# 跟机房方谈液冷时用 ASHRAE 的设施水分级说话：W17、W27、W32、W40、W45、W+，数字是设施供水温度的上限（°C）。等级越高，越能只靠冷却塔或干冷器散热、不开冷水机组；
# 要问清楚的是机房能保证哪一级、服务器厂商要求哪一级，两者对不上，液冷柜到了也不能开机。
#
# ### 2.2 下一代：B200 与 GB200 NVL72 把机柜推向液冷
#
# 同样 1,024 张 GPU，换三代硬件算一遍：DGX H100 放在 41 kW 的机柜里（每柜 4 台）；DGX B200 放在 60 kW 的机柜里（每柜 4 台）；
# GB200 NVL72 则**整柜就是一台机器**——18 个 1U 计算托盘（每个 2 颗 Grace + 4 张 B200）加 9 个 NVLink 交换托盘，72 张 GPU 在同一个 NVLink 域里，只能整柜买、整柜供电、整柜液冷。
# NVIDIA 的 DGX SuperPOD（GB200）参考架构按每个 SU（8 个 NVL72 机柜）1.2 MW 的设计功率规划，即每柜 150 kW（第三方报道的实测满载约 120–132 kW，规划时用厂商的预算）：

# %%
# NBVAL_CHECK_OUTPUT
gens = [("8 x H100 (DGX H100), 41 kW rack", power.cluster_power(1024, server="DGX-H100", pue=1.0, rack_kw_limit=41.0)),
        ("8 x B200 (DGX B200), 60 kW rack", power.cluster_power(1024, server="DGX-B200", pue=1.0, rack_kw_limit=60.0))]
for label, c in gens:
    print(f"{label:34s}: {c.racks:3d} racks x {c.rack_kw:5.1f} kW, IT {c.it_kw:6,.0f} kW = {c.it_kw / c.n_gpus:.2f} kW per GPU "
          f"-> {c.cooling}")
nvl = power.rack_scale_power(1024, "GB200-NVL72", pue=1.0)
print(f"{'GB200 NVL72 (the rack is the unit)':34s}: {nvl.racks:3d} racks x {nvl.rack_kw:5.1f} kW, IT {nvl.it_kw:6,.0f} kW = "
      f"{nvl.it_kw / nvl.gpus_installed:.2f} kW per GPU -> {nvl.cooling} ({nvl.gpus_installed:,} GPUs installed)")

# %% [markdown]
# 三件事一眼可见。第一，**每张 GPU 背后的 IT 功率一代比一代高**：从约 1.3 kW 到约 1.8 kW，再到 NVL72 的约 2.1 kW（含 Grace CPU 和 NVLink 交换托盘），
# 同样 1,024 卡的 IT 负载从 1.3 MW 涨到 1.83 MW（B200）和 2.25 MW（NVL72）——种子课程的「千卡约 1.25 MW」只适用于 H100 这一代，规划 Blackwell 时要按本节的数重算。
# 第二，**机柜数反而变少**：NVL72 只要 15 个机柜（装了 1,080 张卡，因为只能整柜买），但每柜 150 kW 远超背板换热器的 75 kW 上限，只能冷板液冷，
# 而且机柜自带的液冷回路要接进机房的 CDU 和设施水——这不是「换一批服务器」，而是「换一种机房」。
# 第三，DGX B200 每柜 57.2 kW，已经落在背板换热的区间里：8 卡机靠房间风冷的时代，在这一代就到头了。
#
# ## 3. 交互：算一算你的机房
#
# 选择 GPU 数、服务器型号、PUE、单柜功率上限和电价：左图是功率堆叠（服务器 + 光模块 + 制冷配电），右图是机柜数随单柜上限的变化，
# 底色是对应的散热方式。摘要里有年耗电量和电费。试试把 PUE 从 1.5 降到 1.2，看看一年省下多少电费；把单柜上限从 40 改到 41 kW，看看机柜数的跳变；
# 再把服务器换成 DGX-B200：单柜上限低于 14.3 kW 时探索器会告诉你一台都放不下。

# %%
power_x.facility_power_explorer()

# %% [markdown]
# ## 4. 电费、功率封顶与 A+B 双路供电
#
# **电费**：年耗电 $E = P_{\text{IT}}\cdot\text{PUE}\cdot 8760\,\text{h}$，实际负载率低于 100% 时乘以负载率。千卡集群满载一年约 16.8 GWh（PUE 1.5），电量和电费：

# %%
# NBVAL_CHECK_OUTPUT
c3 = power.cluster_power(1000, pue=1.5)
print(f"energy per year {power.energy_mwh(c3.it_kw, 365, c3.pue):,.0f} MWh")
print(f"cost per year at 0.6 CNY/kWh: {power.energy_cost_per_year(c3.facility_kw, 0.6):,.0f} CNY; "
      f"at 70% average load: {power.energy_cost_per_year(c3.facility_kw, 0.6, load_factor=0.7):,.0f} CNY")

# %% [markdown]
# 一千万元一年听起来很多，但它在 TCO 里排第几？用第 5 章同一个成本模型（1,024 张 H100、4 年、0.08 美元/kWh——和 0.6 元/kWh 是同一量级）把七项从大到小排一遍：

# %%
# NBVAL_CHECK_OUTPUT
t5 = cost.tco(1024, years=4, utilisation=0.8)
for rank, (item, usd) in enumerate(cost.tco_items(t5).items(), 1):
    print(f"{rank}. {item:<18} {usd / 1e6:6.1f} M USD over 4 years")
print(f"power ranks {cost.tco_rank(t5, 'power')} of {len(cost.tco_items(t5))}; "
      f"at 0.30 USD/kWh it ranks {cost.tco_rank(cost.tco(1024, 4, 0.8, usd_per_kwh=0.30), 'power')}")

# %% [markdown]
# 电费在 7 项里排第 5，约占 4 年 TCO 的 6%：服务器、机房建设、维保、网络都比它大；电价要涨到好几倍（输出最后一行是 0.30 美元/kWh 时的名次），它才往前挤。所以电力在账面上不是「仅次于硬件」的大头，
# 它真正的分量在前一节：**能不能建**——一个千卡集群要约 2 MW 的稳定供电，园区拿不到这个容量，再便宜的电价也没用；
# 而在每 GPU·小时的价格里，它只占一小部分（第 5 章 1.1 节）。

# %% [markdown]
# **功率封顶**（power capping）：`nvidia-smi -pl 500` 把每张 GPU 的功率上限从 700 W 降到 500 W。模型假设只有 GPU 的功率下降、其他部件不变，
# 于是每台 DGX H100 从 10.2 kW 降到 8.6 kW，原来 40 kW 的机柜就能放 4 台。代价是 GPU 频率下降，吞吐量一般下降得比功率少（大模型训练常是通信或显存带宽受限），
# 具体比例必须在自己的负载上实测（lab04「GPU 算力与显存带宽实测」可以在不同功率上限下各跑一遍 GEMM 来测）。当机房功率是硬上限时，封顶比少买服务器更划算。

# %%
# NBVAL_CHECK_OUTPUT
capped = power.server_power_kw("DGX-H100", gpu_power_cap_w=500)
r_cap = power.cluster_power(1024, rack_kw_limit=40.0, gpu_power_cap_w=500)
print(f"DGX H100 with GPUs capped at 500 W: {capped:.1f} kW; at 40 kW/rack: {r_cap.servers_per_rack} per rack, {r_cap.racks} racks")

# %% [markdown]
# **A+B 双路供电（2N）**：每台服务器的电源分别接到两路独立的 PDU/UPS（A 路和 B 路）。任一路失效时，另一路必须单独带起整柜负载，
# 所以每一路都要按 100% 负载设计，正常运行时每路只带 50%。再加上断路器持续负载不超过额定值 80% 的规定（NEC 210.20(A)），
# 一个 40.8 kW 的机柜每路要 51 kW 的额定容量，两路合计 102 kW 的配电能力——机房合同里的「每柜 kW」要问清楚指的是哪一个数。

# %%
# NBVAL_CHECK_OUTPUT
feed = power.feed_requirements(40.8, "2N")
print(f"2N feeds: {feed['feeds']}, rating per feed {feed['feed_rating_kw']:.1f} kW, provisioned {feed['provisioned_kw']:.1f} kW, "
      f"normal load per feed {feed['normal_load_per_feed']:.0%}")

# %% [markdown]
# ## 5. 实操命令：读出真实功耗
#
# ```bash
# ipmitool dcmi power reading                                    # BMC 测得的整机输入功率（瞬时/最小/最大/平均）
# nvidia-smi --query-gpu=index,power.draw,power.limit --format=csv   # 每张 GPU 的实时功耗与当前上限
# sudo nvidia-smi -pl 500                                        # 把所有 GPU 的功率上限设为 500 W（重启后失效）
# sudo nvidia-smi -i 0 -pl 500                                   # 只设 0 号 GPU
# nvidia-smi -q -d POWER                                         # 查看默认/最小/最大可设功率上限
# ```
#
# 下面两段样例是**示意性**的：格式分别按 ipmitool（`lib/ipmi_dcmi.c` 的 `dcmi power reading` 打印格式）与 `nvidia-smi --format=csv` 的真实输出构造，数值是虚构的满载训练场景。

# %%
DCMI_SAMPLE = """
    Instantaneous power reading:                  9420 Watts
    Minimum during sampling period:               1180 Watts
    Maximum during sampling period:              10060 Watts
    Average power reading over sample period:     9105 Watts
    IPMI timestamp:                           Tue Mar 12 08:41:07 2024
    Sampling period:                          00000001 Seconds.
    Power reading state is:                   activated
"""
SMI_SAMPLE = """index, power.draw [W], power.limit [W]
0, 688.41 W, 700.00 W
1, 675.02 W, 700.00 W
2, 691.77 W, 700.00 W
3, 669.30 W, 700.00 W
4, 684.12 W, 700.00 W
5, 690.55 W, 700.00 W
6, 679.86 W, 700.00 W
7, 686.93 W, 700.00 W
"""

# %%
# NBVAL_CHECK_OUTPUT
d = power.parse_ipmitool_dcmi_power(DCMI_SAMPLE)
gpus = power.parse_nvidia_smi_power_csv(SMI_SAMPLE)
gpu_w = sum(g["power_draw_w"] for g in gpus)
print(f"node input {d['instantaneous_w']:.0f} W (max {d['max_w']:.0f} W) = {d['instantaneous_w'] / 1e3 / power.server_power_kw('DGX-H100'):.0%} of the 10.2 kW datasheet max")
print(f"8 GPUs draw {gpu_w:.0f} W = {gpu_w / d['instantaneous_w']:.0%} of the node; the rest is CPUs, memory, NICs, fans, PSU loss")

# %% [markdown]
# 两个数字对照着看：满载训练时 GPU 约占整机功耗的六成，剩下四成是「看不见」的部件。验收时把整机的最大读数与数据手册的 10.2 kW 比较，
# 并持续采集（DCGM 或 BMC）——PDU 过载告警往往出现在全部节点同时进入反向传播的那几秒。
#
# 上电验收还有一个电工视角的检查：机柜 PDU 通常是三相供电，每一相的电流要平衡，且都低于断路器额定值的 80%。三相功率 $P = \sqrt{3}\, U_{\text{LL}}\, I\, \cos\varphi$，
# 一个放 4 台 DGX H100 的机柜在 400 V 三相、功率因数 0.95 下每相电流是：

# %%
# NBVAL_CHECK_OUTPUT
rack_w = 4 * power.server_power_kw("DGX-H100") * 1e3
for u_ll, pf in ((400.0, 0.95), (415.0, 0.95), (208.0, 0.95)):
    amps = rack_w / (3 ** 0.5 * u_ll * pf)
    print(f"{rack_w / 1e3:.1f} kW rack on {u_ll:.0f} V three-phase, PF {pf:.2f}: {amps:5.1f} A per phase "
          f"-> breaker of at least {amps / 0.8:5.1f} A (80 % continuous rule)")

# %% [markdown]
# 400 V 三相下每相约 62 A，按 80% 规则至少要 78 A 的断路器，常见做法是上 80 A 或更大的工业插头；在北美常见的 208 V 配电下电流翻倍到约 119 A，
# 一个机柜往往要拉两到三路 PDU。验收时用 PDU 的逐相读数确认三相之间的电流偏差不大（服务器的两个或多个电源要分散接到不同相上），
# 否则某一相会先跳闸，而且偏偏是在全集群同时满载的那一刻。
#
# ## 6. 常见误区
#
# **误区一：「忽略功耗与散热的冰山成本」（种子课程 004 误区二）。** 只把 GPU 的 TDP 加起来，千卡集群只有 700 kW；加上整机其余部件和 PUE，真实的机房总功耗是它的近三倍：

# %%
# NBVAL_CHECK_OUTPUT
naive_kw = 1000 * hardware.gpu("H100-SXM").tdp_w / 1e3
real = power.cluster_power(1000, pue=1.58)
print(f"naive (GPU TDP only): {naive_kw:,.0f} kW; real facility at PUE 1.58: {real.facility_kw:,.0f} kW "
      f"({real.facility_kw / naive_kw:.1f}x the naive number)")

# %% [markdown]
# **误区二：「机柜空间够就能放」。** 一个 42U 机柜按空间能放 5 台 DGX H100，但 15 kW 的存量机柜只能放 1 台——差 5 倍的机柜数：

# %%
# NBVAL_CHECK_OUTPUT
by_space = power.cluster_power(1024, rack_kw_limit=1000.0)
by_power = power.cluster_power(1024, rack_kw_limit=15.0)
print(f"by space: {by_space.servers_per_rack} per rack, {by_space.racks} racks; at 15 kW/rack: "
      f"{by_power.servers_per_rack} per rack, {by_power.racks} racks")

# %% [markdown]
# 按空间算只要 26 个机柜，按 15 kW 的供电上限却要 128 个，差了近 5 倍。机柜数一多，不只是租金：每多一排机柜，叶交换机到服务器、叶到脊的光缆都要变长，
# 铜缆（DAC，通常只有几米）就用不上了，只能换成更贵、功耗更高的光模块（第 12 章）。所以「每柜多少 kW」应当和「每柜多少 U」一起写进机房需求单。

# %% [markdown]
# **误区三：「PUE 差一点无所谓」。** 千卡集群 PUE 1.58 与 1.2 的差别，一年就是：

# %%
# NBVAL_CHECK_OUTPUT
hi, lo = power.cluster_power(1000, pue=1.58), power.cluster_power(1000, pue=1.2)
diff_mwh = power.energy_mwh(hi.it_kw, 365, 1.58) - power.energy_mwh(lo.it_kw, 365, 1.2)
print(f"{diff_mwh:,.0f} MWh per year = {power.energy_cost_per_year(hi.facility_kw - lo.facility_kw, 0.6):,.0f} CNY per year at 0.6 CNY/kWh")

# %% [markdown]
# 每年约 4,240 MWh、250 多万元，只因为 PUE 差了 0.38；集群用 5 年，就是一千多万元，足够再买好几台 DGX。反过来说，
# 高密度液冷机房每柜的单价更贵，但 PUE 低、机柜少、光缆短，把电费和网络一起算进 TCO（第 5 章）时，它常常是更便宜的那一个。

# %% [markdown]
# ## 7. 练习
#
# 用本章的模型计算，把答案填进变量再运行单元格；卡住时调用 `exercise("ch10.k").hint(1)` 看提示。
# 练习 2 只需纸笔（DGX H100 整机 10.2 kW、8U、42U 机柜留 2U）；练习 5 是判断题，填引号里的选项。
#
# **练习 1**：2,048 张 H100（装在 DGX H100 里），PUE 1.4，不计网络和存储：机房总功耗是多少 kW？

# %%
answer_1 = None
exercise("ch10.1").check(answer_1)

# %% [markdown]
# **练习 2（纸笔题）**：512 张 H100（DGX H100），每柜功率上限 30 kW：需要几个机柜（个）？

# %%
answer_2 = None
exercise("ch10.2").check(answer_2)

# %% [markdown]
# **练习 3**：千卡集群（DGX H100），PUE 1.5，全年满载，电价 0.6 元/kWh：年电费是多少元？

# %%
answer_3 = None
exercise("ch10.3").check(answer_3)

# %% [markdown]
# **练习 4**：千卡集群只算服务器（DGX H100）：PUE 等于多少时，机房总功耗正好 2 MW（填一个无单位的数，如 1.35）？

# %%
answer_4 = None
exercise("ch10.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：机房给每柜 41 kW，按功率放满 DGX H100。按本章的散热阈值，这种机柜应该用哪种散热方式？
# 在 `"air"`（房间级风冷）、`"air+containment"`（风冷 + 通道封闭）、`"rear-door"`（背板换热）、`"direct-liquid"`（冷板液冷）中选一个。

# %%
answer_5 = None
exercise("ch10.5").check(answer_5)

# %% [markdown]
# ## 小结
#
# - 规划电力用整机最大输入功率：DGX H100 是 10.2 kW，不是 8 × 700 W；千卡 = 125 台 = 1.275 MW IT。
# - 机房总功耗 = PUE × IT；PUE ≥ 1.57 时千卡集群超过 2 MW，行业平均 PUE 1.58 正好落在这里。
# - 每柜台数由功率上限决定：40 kW 放 3 台、41 kW 才能放 4 台；超过约 35 kW 就需要背板换热或液冷。
# - 下一代更热：DGX B200 每台 14.3 kW，每柜 4 台约 57 kW；GB200 NVL72 整柜是一台机器，规划按每柜 150 kW、必须冷板液冷，千卡的 IT 负载超过 2 MW。
# - 电费、功率封顶和 A+B 双路供电都要在选址和签机房合同前算清楚。
#
# ## 参考资料
#
# - NVIDIA DGX H100 数据手册 / 用户指南（最大功耗约 10.2 kW，8U）；NVIDIA DGX A100 数据手册（6.5 kW，6U）——见 `labutil/data/servers.toml`。
# - NVIDIA H100 Tensor Core GPU 数据手册（H100 SXM TDP 700 W）——见 `labutil/data/gpus.toml`。
# - NVIDIA *DGX B200 User Guide*，「Introduction to NVIDIA DGX B200 Systems」（8 × B200、2 × Xeon 8570、10U、6 × 3.3 kW 电源、最大 14.3 kW）。
# - NVIDIA *DGX GB200 User Guide*，「Hardware」（18 个 1U 计算托盘 + 9 个 NVLink 交换托盘、液冷歧管）；NVIDIA *DGX SuperPOD Reference Architecture with DGX GB200*，
#   「DGX SuperPOD Architecture」（每个 SU = 8 个 DGX GB200 机柜，设计功率 1.2 MW）——见 `labutil/data/facility.toml` 的 `[rack_scale]`。
# - ASHRAE TC 9.9, *Thermal Guidelines for Data Processing Environments*, 5th ed., 2021（液冷设施水分级 W17–W45、W+）。
# - The Green Grid, *PUE: A Comprehensive Examination of the Metric*；ISO/IEC 30134-2:2016（PUE 定义）。
# - Uptime Institute, *Global Data Center Survey 2023*（平均 PUE 1.58）；Google, *2023 Environmental Report*（数据中心年均 PUE 1.10）。
# - 风冷与液冷阈值：RACA Journal《Pushing the boundaries of air cooling in high-density environments》（存量机房 10–15 kW/柜）；
#   G. Johnson, Subzero Engineering, *Intelligent Data Centres* 第 56 期（封闭通道风冷可达 35 kW/柜）；HPE/Motivair ChilledDoor QuickSpecs（背板换热 14–75 kW/柜）；ASHRAE TC 9.9 液冷指南。
# - NVIDIA QM9700 用户手册（Class 8 OSFP 光模块 17 W）；NVIDIA DGX SuperPOD H100 参考架构（每 SU 32 台 DGX H100）。
# - NFPA 70 (NEC) 210.20(A)：持续负载按 125% 选断路器（即不超过额定值的 80%）。
# - A. Grattafiori et al. (Meta), *The Llama 3 Herd of Models*, 2024, §3.3.4：最多 16K 张 H100（700 W TDP）；上万张 GPU 同时升降功耗时，数据中心功耗瞬间波动「数十兆瓦」。
# - 空气物性（约 20 °C 干空气 $\rho \approx 1.2$ kg/m³、$c_p \approx 1005$ J/(kg·K)）与显热公式 $P = \rho c_p Q \Delta T$：工程热力学手册通用值；1 ft = 0.3048 m。
# - ASHRAE TC 9.9, *Thermal Guidelines for Data Processing Environments*：推荐进风温度 18–27 °C。
# - E. Choukse et al. (Microsoft, OpenAI, NVIDIA), *Power Stabilization for AI Training Datacenters*, arXiv:2508.14318, 2025（同步训练的计算/通信周期造成功率摆动及其对电网的风险）；
#   NVIDIA 技术博客 *How New GB300 NVL72 Features Provide Steady Power for AI*, 2025（带储能的电源，峰值电网需求最多降低 30%）。
# - 三相功率 $P = \sqrt{3} U_{LL} I \cos\varphi$（电工学通用公式）。
# - ipmitool 源码 `lib/ipmi_dcmi.c`（`dcmi power reading` 输出格式）；`nvidia-smi --help-query-gpu`（`power.draw`、`power.limit` 字段）。
