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
# # 第5章 成本与TCO：买、租，以及停机的代价
#
# > 模块一「全局认知与容量规划」的最后一章。前置：第 1 章（有效算力、故障率）、第 4 章（算力需求估算：需要多少张卡）。
# > 第 4 章回答了「要多少 GPU」，本章回答「这些 GPU 一共要花多少钱、怎么花最值」。第 10 章（供电散热）会细化电费这一项，
# > 第 14 章会细化网络对扩展效率的影响，第 27 章会细化故障的代价，第 30 章把它们合成一份完整方案。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 把一个 GPU 集群的总拥有成本（TCO）拆成 capex（服务器、网络、存储、机房建设）和 opex（电费 = 功率 × PUE × 电价、人力、维保），并算出每 GPU·小时的成本；
# - 计算「自建 vs 上云」的盈亏平衡点：需要多高的利用率、多少个月才能回本；
# - 把停机成本算进 TCO：一次故障让整个作业空转多久、值多少钱（种子课程误区三）；
# - 在固定预算下比较「顶级 GPU + 慢网络」与「中端 GPU + 高速网络 + 并行存储」的**交付算力**，说明为什么均衡配置更划算（种子课程误区一）。
#
# > **关于价格**：本章所有价格都来自 `labutil/data/prices.toml`，每一项都标明了是**公开标价**（附日期与出处）还是**示意值**（附取值范围）。
# > 硬件价格随时间、批量和地区变化很大，它们只用来演示方法；每个函数都接受你自己的报价作为参数。

# %%
from labutil.notebook import setup, show_table
from labutil import cost, reliability, hardware, power
from labutil.explore import cost as cost_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. TCO 的结构：一次性的 capex 与每年的 opex
#
# 总拥有成本（Total Cost of Ownership）是在整个使用年限里为这套集群付出的全部钱。对 GPU 集群，我习惯把它写成
#
# $$\text{TCO}(Y) = \underbrace{C_{\text{server}} + C_{\text{network}} + C_{\text{storage}} + C_{\text{facility}}}_{\text{capex}} + Y \cdot \underbrace{\big(P_{\text{IT}} \cdot \text{PUE} \cdot 8760\,\text{h} \cdot p_{\text{kWh}} + C_{\text{staff}} + m \cdot C_{\text{hardware}}\big)}_{\text{opex / 年}}$$
#
# 其中 $Y$ 是折旧年限（GPU 集群通常按 4–5 年），$P_{\text{IT}}$ 是 IT 设备功率（服务器满载功率之和），PUE 是数据中心总功率与 IT 功率之比，
# $m$ 是每年的维保比例。把它摊到实际用掉的 GPU 小时上，就是最常用来和云比较的指标：
#
# $$\text{每 GPU·小时成本} = \frac{\text{TCO}(Y)}{N \cdot 8760 \cdot Y \cdot u},$$
#
# $u$ 是利用率——买来的卡有多少时间真的在跑作业。机房建设 $C_{\text{facility}}$ 按 **IT 负载**计价：业内的建设成本报价口径是
# 「每 MW 关键 IT 负载多少钱」，制冷和配电这些 PUE 统计的设施本身就包含在这个单价里，所以模型用 IT 功率 × 单价，而不是 IT × PUE × 单价（后者会把同一套制冷重复算一遍）。这个分母是很多预算表最容易高估的地方：调度碎片、维护窗口、故障排空、
# 作业之间的空档，都会让 $u$ 远低于 100%。
#
# 各项的量级可以先用一个 1,024 张 H100（128 台 DGX H100）的集群感受一下：

# %%
# NBVAL_CHECK_OUTPUT
t = cost.tco(1024, years=4, utilisation=0.8, server="DGX-H100", fabric="IB-NDR-400G", pue=1.5)
c, o = t.capex, t.opex
print(f"servers     {c.servers:5.0f} x DGX-H100  {c.servers_usd / 1e6:7.1f} M USD")
print(f"network     IB NDR 400G          {c.network_usd / 1e6:7.1f} M USD")
print(f"storage     2 TB/GPU parallel FS {c.storage_usd / 1e6:7.1f} M USD")
print(f"facility    {o.it_kw:5.0f} kW IT build-out {c.facility_usd / 1e6:7.1f} M USD")
print(f"capex total                      {c.total_usd / 1e6:7.1f} M USD")
print(f"opex/year: power {o.power_usd / 1e6:.2f} M, staff {o.staff_usd / 1e6:.2f} M, "
      f"maintenance {o.maintenance_usd / 1e6:.2f} M = {o.total_usd / 1e6:.2f} M USD")
print(f"TCO over 4 years {t.total_usd / 1e6:.1f} M USD -> {t.usd_per_gpu_hour:.2f} USD per used GPU-hour at 80 %")

# %% [markdown]
# 几个值得停下来想一想的地方：
#
# - **服务器占了 capex 的大头**，但不是全部。网络（每张卡一块 400G 网卡，加上两层 Fat-Tree 的交换机端口和光模块）是服务器之外最大的一块硬件；
#   机房建设按每 kW IT 负载计价，一个 1.3 MW IT、2 MW 总功率的 GPU 机房本身就是一笔大投资（如果租用托管机柜，这一项会变成 opex 里的机柜租金）。
# - **电费**按「服务器最大功率 × PUE × 全年小时数 × 电价」算：128 台 × 10.2 kW = 1.3 MW IT 功率，乘 PUE 1.5 约 2 MW，这正是种子课程说的「千卡集群 IT 功耗接近 1.25 MW，总功耗 2 MW 以上」。
#   电力数据来自第 10 章的 `labutil.power` 模型，两章用同一套数字。
# - 在这组示意价格下，**维保**（每年硬件的 5%）比电费还高。这提醒我们：电价便宜的地区并不能抵消硬件本身的折旧和维保。
#
# 把 4 年里的七项从大到小排一下（`cost.tco_items`，第 10 章讲电力时引用的就是这张排名）：

# %%
# NBVAL_CHECK_OUTPUT
for rank, (item, usd) in enumerate(cost.tco_items(t).items(), 1):
    print(f"{rank}. {item:<18} {usd / 1e6:6.1f} M USD over 4 years ({usd / t.total_usd:5.1%})")
print(f"power ranks {cost.tco_rank(t, 'power')} of {len(cost.tco_items(t))} at {cost.DEFAULT_USD_PER_KWH} USD/kWh")

# %% [markdown]
# 电费在 7 项里排第 5：服务器、机房建设、维保、网络都比它大。在 0.08 USD/kWh 下，电力主要决定的是「能不能建」（第 10 章），而不是每 GPU·小时的价格。
# 这个排名还取决于机房建设怎么摊，第 1.1 节会看到：按机房自己的寿命摊，机房建设就掉到电费后面去了。
#
# 下面这张图把 4 年的 TCO 堆叠起来，旁边是同样 GPU·小时数在云上租用的账单（AWS Capacity Blocks 公布的 H100 每卡小时价，见 `prices.toml`）。

# %%
cost_x.tco_breakdown_figure(n_gpus=1024, years=4, utilisation=0.8)

# %% [markdown]
# ### 1.1 哪个输入最敏感：折旧年限还是电价？
#
# 做预算评审时，最常被争论的是电价（「我们在西部，电费便宜一半」），但最该争论的往往是**折旧年限**。
# 折旧年限就是上式里的 $Y$：财务上按直线法把 capex 平摊到 $Y$ 年，模型里对应「每 GPU·小时分摊多少硬件钱」。
# GPU 大约每两年出一代（A100 2020 年、H100 2022 年、B200 2024 年发布），新一代上市后旧卡的租赁价和二手残值都会明显下跌，
# 所以很多团队按 4 年、保守的按 3 年折旧；按 5 年算，账面好看，但第 4、5 年这批卡在市场上值多少、还能不能接到训练任务，要打一个问号。
# 用同一个模型把两个输入各自扫一遍：

# %%
# NBVAL_CHECK_OUTPUT
for y in (3, 4, 5):
    ty = cost.tco(1024, years=y, utilisation=0.8)
    print(f"depreciation {y} years: {ty.usd_per_gpu_hour:.2f} USD/GPU-h, "
          f"break-even utilisation vs cloud {100 * cost.breakeven_utilisation(ty, cost.cloud_usd_per_gpu_hour('H100-SXM')):.0f} %")
for kwh in (0.05, 0.08, 0.15):
    te = cost.tco(1024, years=4, utilisation=0.8, usd_per_kwh=kwh)
    print(f"power {kwh:.2f} USD/kWh: power bill {te.opex.power_usd / 1e6:.2f} M USD/yr -> {te.usd_per_gpu_hour:.2f} USD/GPU-h")

# %% [markdown]
# 电价从 0.05 涨到 0.15 USD/kWh（三倍），每 GPU·小时成本只从 2.88 变到 3.12 USD；折旧年限从 5 年缩到 3 年，成本从 2.49 涨到 3.73 USD，
# 盈亏平衡利用率从 40% 升到 61%。原因很直白：每张卡分摊的服务器满载功率约 10.2 kW ÷ 8 ≈ 1.3 kW，乘 PUE 1.5、按 0.08 USD/kWh 算，一小时的电只值约 0.15 美元，而它分摊的硬件钱是几美元。
# 这不等于电力不重要——电力决定的是**能不能建**：一个千卡集群要约 2 MW 的稳定供电（第 10 章），很多园区根本拿不到这个容量；
# 而同步训练的功率是突变的。Llama 3 论文（§3.3.4）记录了一个少有人提前想到的问题：数万张 GPU 会同时等检查点或集合通信、同时启动或退出，
# 整个数据中心的功率会在瞬间波动**数十兆瓦**，逼近电网的承受极限。所以和供电方谈合同时，除了平均功率，还要谈清楚允许的功率爬坡。
#
# 财务评审还常问三件事。第一件就是上面的折旧年限；后两件在模型里各有一个默认关闭的参数（`facility_years`、`interest_rate`），下面各算一次：
#
# 1. **折旧年限该取几年？** 大型云厂商按 5–6 年折旧服务器；Amazon 2024 年的年报（10-K）写明，2025 年起把一部分服务器和网络设备的折旧年限
#    从 6 年改回 5 年，理由正是 AI 带来的技术更迭在加快。GPU 集群取 4 年并不保守过头。
# 2. **机房建设该摊几年？** 模型默认把机房建设全部摊进集群的折旧期（`facility_years=None`），相当于假设这个机房只为这一代集群而建、
#    4 年后不再有用。可机房的配电和制冷设备在数据中心运营商的财报里按 20–30 年折旧，楼体 40 年；按 20 年摊，4 年只承担五分之一。
#    反过来也要想到：GPU 机柜的功率密度每一代都在涨（第 10 章，风冷到液冷），按今天的单柜功率建的机房未必装得下下一代——「随集群折旧」是保守的那一头。
# 3. **资金成本**：一次性投入的几千万美元本可以拿去做别的事，或者是借来的。按年利率 $r$ 把它换成 $Y$ 年的等额年金，每年要付
#    capex × CRF，$\text{CRF}(r, Y) = \frac{r(1+r)^Y}{(1+r)^Y - 1}$（资本回收系数），比直线折旧的 capex / Y 多出的部分就是资金成本。
#    这里取 8% 只是示意，你们的财务会给出自己的数。
#
# 再加上一条人力的敏感性：模型默认每 100 台服务器配 1 名工程师（128 台 → 2 人），这是大规模运营的比例；一个独立的千卡集群要 7×24 值班，
# 每周 168 小时除以每人约 40 小时，值班表本身就要 4–5 个人。把人力按每 25 台服务器 1 人算（6 人）看看：

# %%
# NBVAL_CHECK_OUTPUT
p_cloud = cost.cloud_usd_per_gpu_hour("H100-SXM")
for label, kw in (("model default (facility over 4 y, no interest)", {}),
                  ("facility over 20 years", {"facility_years": 20}),
                  ("8 % cost of capital", {"interest_rate": 0.08}),
                  ("facility over 20 years + 8 % cost of capital", {"facility_years": 20, "interest_rate": 0.08}),
                  ("staff: one engineer per 25 servers", {"servers_per_fte": 25})):
    tk = cost.tco(1024, 4, 0.8, **kw)
    print(f"{label:<46}: {tk.usd_per_gpu_hour:.2f} USD/GPU-h, break-even vs cloud "
          f"{100 * cost.breakeven_utilisation(tk, p_cloud):2.0f} %, power ranks {cost.tco_rank(tk, 'power')} of {len(cost.tco_items(tk))}")
print(f"capital recovery factor at 8 % over 4 years: {cost.capital_recovery_factor(0.08, 4):.4f} (straight line: 0.25)")

# %% [markdown]
# 两个财务修正方向相反：机房按 20 年摊让每 GPU·小时便宜一截，8% 的资金成本又让它贵回来，两者一起时和默认值几乎一样——但账的构成变了，
# 电费的名次也跟着变（输出最后一列）。人力即使翻三倍，单价也只涨几个百分点。所以评审 TCO 时先问清楚这三个假设，再比较结论；
# 探索器里「机房建设摊销」和「资金成本」两个控件就是这两个参数。

# %% [markdown]
# ## 2. 自建还是上云：盈亏平衡
#
# 自建的成本几乎与用不用无关：卡买回来了，每个月的折旧、维保、人力都照付，电费也只随负载小幅变化。
# 云的成本则与用量成正比。所以两者的比较有两个自然的问题：
#
# 1. **利用率门槛**：在整个折旧期内，利用率高于多少时自建更便宜？$u^* = \dfrac{\text{TCO}(Y)}{N \cdot 8760 \cdot Y \cdot p_{\text{cloud}}}$。
# 2. **回本时间**：按某个利用率使用，多少个月后自建的累计成本低于云？自建累计成本是 $\text{capex} + \text{opex}\cdot t$，云是 $N u p_{\text{cloud}} t$，
#    两条直线相交于 $t^* = \text{capex} / (N u p_{\text{cloud}} - \text{opex 速率})$；如果云的每小时账单比自建的 opex 还低，就永远不会回本。

# %%
# NBVAL_CHECK_OUTPUT
p_h100 = cost.cloud_usd_per_gpu_hour("H100-SXM")
print(f"cloud price (AWS Capacity Blocks, p5 H100): {p_h100:.3f} USD/GPU-h")
print(f"owning 1,024 H100 wins over 4 years above {100 * cost.breakeven_utilisation(t, p_h100):.1f} % utilisation")
for u in (0.3, 0.5, 0.8, 0.95):
    tu = cost.tco(1024, 4, u)
    m = cost.breakeven_months(tu, p_h100)
    be = "never" if m is None else f"{m:5.1f} months"
    print(f"utilisation {100 * u:3.0f} %: owned {tu.usd_per_gpu_hour:5.2f} USD/GPU-h, break-even {be}")

# %% [markdown]
# 在这组示意价格下，利用率 80% 时大约两年多回本；利用率只有 30% 时，回本要七年多，远超 4 年的折旧期——租更便宜。
# 这个结论对价格很敏感：上面的云价格是 2024 年 12 月的容量块价格，而 2025 年 6 月 AWS 又把 P5（H100）的按需价下调了最多约 45%；
# 你拿到的硬件折扣、电价、机房条件也各不相同。下面第 2 段把云价格减半、加倍各算一次。
# 下图画出三种利用率下的累计成本曲线；黑线是自建（起点是 capex，斜率是 opex），虚线是云。

# %%
cost_x.breakeven_figure(n_gpus=1024, years=4, utilisations=(0.3, 0.5, 0.8))

# %% [markdown]
# 「云价格」本身也不是一个数。同一张 H100，云厂商至少有四种卖法：**按需**（on-demand，随开随关，单价最高，大规模时常常根本开不出来）；
# **预留/承诺使用**（1 年或 3 年合同，折扣换承诺，本质上是把「租」变成了「分期买」，利用率风险回到你身上）；
# **容量块**（如本章用的 AWS Capacity Blocks，预订一段固定时间的一组互联实例，适合一次性的训练任务）；**竞价/抢占式**（最便宜，但随时被收回，只适合能随时断点续训的作业）。
# 盈亏平衡利用率与云价格成反比，所以比较前要先问清楚用的是哪一种价格：

# %%
# NBVAL_CHECK_OUTPUT
for factor in (0.5, 1.0, 2.0):
    u_star = cost.breakeven_utilisation(t, factor * p_h100)
    verdict = "owning never pays back in 4 years" if u_star > 1 else f"owning wins above {100 * u_star:.0f} % utilisation"
    print(f"cloud price {factor:.1f} x {p_h100:.2f} = {factor * p_h100:5.2f} USD/GPU-h: {verdict}")

# %% [markdown]
# 如果你拿到的是容量块价格的一半（长期承诺的大客户并不罕见），自建要在 4 年里保持 96% 以上的利用率才追得上——实际上追不上；如果只能买按需实例、单价是它的两倍，
# 利用率只要 24% 自建就更便宜。评审里「自建还是上云」的争论，很多时候其实是双方用了不同的价格。
#
# ### 2.1 一次训练值多少钱
#
# 种子课程说「大模型训练一次的成本高达数百万美元」。把第 4 章的 GPU·小时乘以本章的单价，就能把这句话换成自己的数字。
# Llama 3.1 的模型卡公布了 405B 模型训练累计用掉的 H100 GPU·小时（第 4 章用它算过整个训练过程的平均利用率）：

# %% [markdown]
# %%
# NBVAL_CHECK_OUTPUT
gpu_hours_405b = 30.84e6  # Llama 3.1 model card: 405B, cumulative H100-80GB GPU hours (as ch04)
print(f"Llama 3.1 405B: {gpu_hours_405b / 1e6:.2f} M H100 GPU-h x {t.usd_per_gpu_hour:.2f} USD (owned, 80 %) = "
      f"{gpu_hours_405b * t.usd_per_gpu_hour / 1e6:.0f} M USD; x {p_h100:.3f} USD (cloud) = {gpu_hours_405b * p_h100 / 1e6:.0f} M USD")
print(f"the 1,024-GPU cluster delivers {1024 * 8760 * 4 * 0.8 / 1e6:.1f} M GPU-h in 4 years at 80 %: "
      f"one such run = {gpu_hours_405b / (1024 * 8760 * 4 * 0.8):.2f} x its whole life")

# %% [markdown]
# 一次 405B 级别的预训练，按自建的单价算也接近一亿美元——「数百万美元」说的是小得多的模型。另一个角度更直观：
# 本章这个 1,024 卡集群 4 年的全部 GPU·小时，差不多只够跑一次这样的训练。这就是前沿模型的训练集群要上万卡的原因（第 4 章）。
#
# 我在做这类评估时，会额外考虑三件公式里没有的事：
#
# | 因素 | 偏向自建 | 偏向上云 |
# |---|---|---|
# | 需求形状 | 长期、稳定、满负荷的预训练 | 突发、短期、实验性的负载 |
# | 网络与拓扑 | 需要定制的轨道优化拓扑、完整的 IB 胖树 | 云上的大规模实例通常也有 RDMA，但拓扑和邻近性不由你控制 |
# | 风险 | 硬件迭代快，4 年后残值低；但长期合同价格可控 | 容量可能买不到；价格随供需波动 |
# | 团队 | 有能力运维（第 19–28 章的全部内容） | 没有运维团队时，云的「人力」成本包含在价格里 |
#
# ## 3. 交互：调整规模、机型、年限、利用率、电价、PUE 和云价格
#
# 探索器的初始状态就是上面这个例子（1,024 张 H100、4 年、利用率 0.80）。试着：把利用率拉到 0.3，看回本时间越过折旧期；把电价从 0.08 拉到 0.30 USD/kWh，看电费在堆叠图里占多大；把服务器换成 DGX-A100，
# 把云价格改成 A100 的 1.844 USD/GPU·h（`prices.toml` 中 AWS p4d 的价格），看结论是否反转；最后把「机房建设摊销」改成按 20 年、
# 「资金成本」拉到 0.08，看堆叠图里红色的机房变薄、深灰色的资金成本出现。

# %%
explorer = cost_x.tco_explorer()
explorer

# %% [markdown]
# ## 4. 停机成本：一次故障值多少钱
#
# 第 1 章和第 27 章讲过：同步训练中任何一个部件坏了，整个作业都会停下来。停机的代价有两部分：
# **空转**——从故障到恢复训练的时间 $R$ 里，所有 GPU 都在等待；**重算**——上一次检查点之后的工作丢失，平均是检查点间隔 $\tau$ 的一半。于是
#
# $$\text{每次故障的成本} = N \cdot \Big(R + \frac{\tau}{2}\Big) \cdot c_{\text{GPU·h}}, \qquad \text{每年} = 365 \cdot f_{\text{day}} \cdot \text{每次故障的成本},$$
#
# $c_{\text{GPU·h}}$ 是集群一个小时（不管用不用）的成本，自建时取 TCO 除以总小时数再除以卡数。故障率 $f_{\text{day}}$ 用第 27 章由 Llama 3 校准的速率（16,384 卡 54 天 419 次，按卡数线性缩放）。

# %%
# NBVAL_CHECK_OUTPUT
f_1k = reliability.llama3_failures_per_day(1024)
idle = t.usd_per_cluster_hour / 1024
print(f"1,024 GPUs: {f_1k:.2f} interruptions/day at the Llama 3 rate, {365 * f_1k:.0f} per year; "
      f"an idle GPU-hour costs {idle:.2f} USD")
for label, r_s in (("automatic restart, 10 min", 600), ("manual, 4 h", 4 * 3600), ("waiting for a part, 24 h", 24 * 3600)):
    d = cost.downtime_cost(1024, f_1k, r_s, 1800, idle)
    print(f"{label:26s}: {d.usd_per_failure / 1e3:7.1f} k USD per failure, {d.usd_per_year / 1e6:5.2f} M USD per year, "
          f"{100 * 4 * d.usd_per_year / t.capex.total_usd:5.1f} % of capex over 4 years")

# %% [markdown]
# 同一个集群、同样的故障率，恢复流程从全自动（10 分钟）变成「等人处理」（4 小时），每年的停机损失从约 0.18 M 涨到约 1.82 M USD；
# 如果要等备件（24 小时），4 年的停机损失会达到 capex 的约 62%。下图画出每年停机成本随恢复时间的变化——它是一条直线，斜率就是「每小时恢复时间值多少钱」，
# 三个黑点是上面的三种恢复方式。

# %%
cost_x.downtime_figure(n_gpus=1024, failures_per_day=f_1k, interval_s=1800.0, usd_per_gpu_hour=idle,
                       marks=(("automatic, 10 min", 10 / 60), ("manual, 4 h", 4.0), ("waiting for a part, 24 h", 24.0)))

# %% [markdown]
# ## 5. 固定预算下的交付算力：均衡配置 vs「顶级 GPU + 慢网络」
#
# 预算固定时，真正该比较的不是峰值算力，而是**交付算力**：
#
# $$\text{交付算力} = N \cdot P_{\text{peak}} \cdot \text{MFU} \cdot \eta(N),$$
#
# 扩展效率 $\eta(N)$ 来自第 13–14 章的集群通信模型（`labutil.cluster`，经 `labutil.comm`）：数据并行的每一步要对全部梯度做一次 all-reduce，
# 跨服务器时耗时约为 $2\frac{n-1}{n}\cdot\frac{S}{B_{\text{bus}}}$（$S$ 是梯度字节数，按 BF16 计，是乐观的一侧，第 2、14 章；$n$ 是 GPU 数，
# $B_{\text{bus}} = \min(\text{NVLink 环},\ 0.96 \times \text{每台服务器的网卡总带宽})$：NCCL 每条环穿过一台服务器时走它的一块网卡），
# $\eta = t_{\text{compute}} / (t_{\text{compute}} + t_{\text{comm}})$。参考负载是一个 7B 参数的模型做数据并行训练，每张卡每步 16,384 个 token，MFU 0.45，通信不与计算重叠（保守）。
# 每个选项的每卡成本 = 服务器价 / 8 + 每卡网络成本 + 每卡存储成本，预算能买几台就买几台。

# %%
# NBVAL_CHECK_OUTPUT
options = cost.budget_comparison(50e6)
for opt in options:
    print(f"{opt.label:30s} {opt.n_gpus:5d} GPUs, peak {opt.peak_pflops:6.0f} PF, scaling {100 * opt.scaling_efficiency:4.1f} %, "
          f"delivered {opt.delivered_pflops:5.0f} PF, {opt.delivered_pflops_per_musd:4.2f} PF per M USD")
by = {opt.label: opt for opt in options}
ratio = by["mid GPU + 200G IB (balanced)"].delivered_pflops / by["top GPU + 25GbE"].delivered_pflops
print(f"balanced / top GPU + 25GbE delivered compute: {ratio:.2f}x")

# %%
cost_x.budget_comparison_figure(50e6)

# %% [markdown]
# 「顶级 GPU + 25GbE」买到的峰值算力是均衡方案的两倍多，但每台服务器只有 2×25 Gb/s 的网络，梯度同步占了一步的大部分时间，
# 扩展效率只有约 24%（与第 14 章复现的种子 003 是同一个现象：4 台 8×H800、每台一个 25 GbE 口，GPU 利用率 14.3%）。均衡方案的 A100 峰值低得多，
# 但 200G IB 让它保持了约 95% 的扩展效率，交付算力反而高出 79%。表中还有一行提醒我们别矫枉过正：钱够的时候，「顶级 GPU + 高速网络」依然最好——
# 结论不是「别买好卡」，而是**网络和存储必须与 GPU 匹配**。
#
# ## 6. 实操命令：从真实环境取 TCO 的输入
#
# TCO 模型的输入应该来自测量，而不是铭牌。最常用的三个：
#
# ```bash
# # 服务器实际功率（BMC，单位 W），用于校正「满载功率」假设
# ipmitool dcmi power reading
# # 每张 GPU 的实时功率与上限
# nvidia-smi --query-gpu=index,power.draw,power.limit --format=csv
# # 过去 30 天集群的 GPU 利用率：已分配的 GPU·小时 / 可用 GPU·小时（Slurm 记账）
# sreport -t hours cluster utilization start=now-30days
# sacct -a -S now-30days -X -P --format=JobID,AllocTRES,Elapsed,State
# ```
#
# 下面用课程自带的 `nvidia-smi --query-gpu ... --format=csv` 示例输出（格式来自 nvidia-smi 文档，数值是示意的，出处见 `samples.info`）
# 看一台基本空闲的节点的 GPU 功率：空闲的 H100 只有约 70 W，整台里唯一在跑负载的 GPU 3 也只有 452 W（GPU 5 读不到功率，显示 `[N/A]`），远低于 700 W 上限。这说明电费模型里的 `load_factor`（按铭牌最大功率计费 = 1.0）
# 是做容量规划时的保守上界；算实际电费时，应该用 BMC / DCGM 采到的平均功率代入。

# %%
# NBVAL_CHECK_OUTPUT
from labutil.parsers import samples, parse_nvidia_smi_csv
smi_csv = parse_nvidia_smi_csv(samples.sample("nvidia_smi_csv"))
# compare like with like: only the GPUs that report a draw, against THEIR limits (a GPU showing [N/A] is left out)
pairs = [(d, l) for d, l in zip(smi_csv.column("power.draw"), smi_csv.column("power.limit")) if d is not None]
drawn, limit = sum(d for d, _ in pairs), sum(l for _, l in pairs)
print(f"{len(smi_csv.rows)} GPUs, {len(pairs)} reporting: drawing {drawn:.0f} W of their {limit:.0f} W limit "
      f"({100 * drawn / limit:.1f} %)")
lf = 0.7  # an assumed average load over a year of training, for comparison only
print(f"yearly power bill at nameplate: {t.opex.power_usd / 1e6:.2f} M USD; at load factor {lf}: "
      f"{cost.opex_per_year(1024, load_factor=lf).power_usd / 1e6:.2f} M USD")

# %% [markdown]
# 公式里的利用率 $u$ 同样要从测量来，而且要分清三个口径，它们依次变小：
#
# 1. **分配利用率**：`sreport cluster utilization` 给出的 Allocated 占比，即 GPU 被某个作业占着的时间比例。调度碎片（剩下 3 张卡凑不成一个 8 卡作业）、
#    为维护而排空（drain）的节点、坏了在等备件的节点，都会让它下降。
# 2. **活跃利用率**：被分配的 GPU 里真正在跑 kernel 的时间比例（DCGM 的 `DCGM_FI_PROF_GR_ENGINE_ACTIVE`）。交互式调试、卡在数据加载上的作业、
#    占着卡写论文的 Jupyter 会话，分配了却没在算。
# 3. **MFU**：在跑的时间里，有效 FLOPs 占峰值的比例（第 4 章），大模型训练一般在 40% 上下。
#
# TCO 的分母应该用第一种（你为占着的卡付了钱，不管它算没算），而评估「这笔钱花得值不值」时要看后两种。
# 经验上，一个新集群交付后的头几个月，分配利用率往往远低于预算表里假设的 80%：用户和作业还没迁移过来、节点还在陆续通过验收（第 19 章）。
# 把头几个月的真实利用率代进上面的 `cost.tco`，比任何供应商给出的「典型 TCO」都更能说明问题。
#
# ## 7. 常见误区（每一条都用算出来的数字反驳）
#
# ### 误区一：「盲目追求单卡最强」（种子课程《AI算力集群》误区一）
#
# 同样 5,000 万美元，「顶级 GPU + 25GbE」交付的算力不如「中端 GPU + 200G IB + 并行存储」。上面第 5 节已经算出倍数，这里再看每百万美元买到的交付算力：

# %%
# NBVAL_CHECK_OUTPUT
for label in ("top GPU + 25GbE", "mid GPU + 200G IB (balanced)"):
    o_ = by[label]
    print(f"{label:30s}: {o_.peak_pflops / 50:5.1f} peak PF per M USD, {o_.delivered_pflops_per_musd:4.2f} delivered PF per M USD")

# %% [markdown]
# ### 误区二：「只算硬件采购成本，不算停机成本」（种子课程《AI算力集群》误区三）
#
# 采购单上只有 capex。把第 4 节的停机成本放进 4 年 TCO，看「便宜但恢复慢」和「贵一点但能自动恢复」谁更省：
# 假设方案 A 省下 3% 的 capex，但没有备用节点和自动化，平均恢复要 4 小时；方案 B 多花这 3%，恢复时间 10 分钟。

# %%
# NBVAL_CHECK_OUTPUT
saving = 0.03 * t.capex.total_usd
slow = cost.downtime_cost(1024, f_1k, 4 * 3600, 1800, idle).usd_per_year * 4
fast = cost.downtime_cost(1024, f_1k, 600, 1800, idle).usd_per_year * 4
print(f"plan A saves {saving / 1e6:.2f} M USD of capex but loses {slow / 1e6:.2f} M USD to downtime in 4 years")
print(f"plan B loses {fast / 1e6:.2f} M USD; net advantage of B: {(slow - fast - saving) / 1e6:.2f} M USD")

# %% [markdown]
# ### 误区三：「自建一定比云便宜」
#
# 这句话背后的推理是「云厂商要赚钱，所以自己买一定更便宜」。它忽略了分母：自建的成本是固定的，每 GPU·小时的成本 = TCO ÷ **实际用掉的** GPU·小时。
# 云厂商能把一张卡卖给很多客户，把利用率做到很高；一个课题组或一个业务部门自建的集群，经常在项目间隙、假期、调试阶段大量闲置，
# 再加上维护窗口和故障排空，全年平均利用率做到 30%–50% 并不少见（用第 6 节的 `sreport` 算一下你自己的集群）。
# 同一个 1,024 张 H100 的集群，利用率 30% 时每 GPU·小时的成本比云上的容量块价格还高：

# %%
# NBVAL_CHECK_OUTPUT
for u in (0.3, 0.8):
    print(f"utilisation {100 * u:.0f} %: owned {cost.tco(1024, 4, u).usd_per_gpu_hour:.2f} USD/GPU-h vs cloud {p_h100:.2f}")
print(f"owned at 30 % costs {cost.tco(1024, 4, 0.3).usd_per_gpu_hour / p_h100:.2f}x the cloud price; "
      f"break-even utilisation {100 * cost.breakeven_utilisation(t, p_h100):.0f} %")

# %% [markdown]
# 利用率 30% 时，自建的每 GPU·小时是云价格的 1.60 倍；要在 4 年内比云便宜，全年平均利用率得超过约 48%。
# 所以「自建还是上云」的第一个问题不是价格，而是：你有没有足够稳定、足够多的负载，把这 1,024 张卡 4 年里一半以上的时间填满？
# 如果没有，常见的折中是「基线自建 + 峰值上云」：自建规模按长期稳定负载来定，突发的大实验租容量块。

# %% [markdown]
# ## 8. 练习
#
# 把答案填进 `answer_k`（数字即可，单位见题目），运行单元格查看判分；卡住时调用 `exercise("ch05.k").hint(1)`。
#
# **练习 1**：128 台 DGX H100（1,024 张卡）满载运行，PUE 1.5，电价 0.08 USD/kWh。一年的电费是多少百万美元？

# %%
answer_1 = None
exercise("ch05.1").check(answer_1)

# %% [markdown]
# **练习 2**：用默认参数（DGX-H100、IB-NDR-400G）计算 1,024 张 H100、4 年、利用率 80% 时每个用掉的 GPU·小时成本（USD）。

# %%
answer_2 = None
exercise("ch05.2").check(answer_2)

# %% [markdown]
# **练习 3**：同一个集群，云价格 4.916 USD/GPU·h。4 年内利用率高于百分之多少时自建更省？

# %%
answer_3 = None
exercise("ch05.3").check(answer_3)

# %% [markdown]
# **练习 4**：1,024 张卡，每天 0.5 次故障，每小时一个检查点，空转成本 3 USD/GPU·h。恢复时间 6 小时（手工）比 10 分钟（自动）每年多花多少百万美元？

# %%
answer_4 = None
exercise("ch05.4").check(answer_4)

# %% [markdown]
# **练习 5**：5,000 万美元预算（`cost.budget_comparison` 的默认选项），均衡方案的交付算力是「顶级 GPU + 25GbE」的多少倍？

# %%
answer_5 = None
exercise("ch05.5").check(answer_5)

# %% [markdown]
# **练习 6（判断题）**：同一个 1,024 卡集群、4 年，对比 4.916 USD/GPU·h 的云，但预计利用率只有 40%。自建还是上云？（填 'own' 或 'cloud'，也可以写「自建」「上云」）

# %%
answer_6 = None  # 'own' 或 'cloud'
exercise("ch05.6").check(answer_6)

# %% [markdown]
# **练习 7**：还是这个 1,024 卡集群（默认参数、4 年、利用率 80%），但机房建设按它自己 20 年的寿命直线摊销（第 1.1 节的 `facility_years=20`）。
# 每个用掉的 GPU·小时成本是多少 USD？

# %%
answer_7 = None
exercise("ch05.7").check(answer_7)

# %% [markdown]
# ## 9. 小结
#
# - TCO = capex（服务器、网络、存储、机房）+ 年限 × opex（功率 × PUE × 电价、人力、维保）；除以实际用掉的 GPU·小时，才是可以和云比较的单价。
# - 利用率决定自建是否划算：示意价格下，1,024 张 H100 的利用率门槛约 48%，利用率 80% 时两年多回本。
# - 评审 TCO 先问三个假设：折旧几年、机房建设摊几年、算不算资金成本；后两者方向相反，会改变账的构成和各项的名次。
# - 一次 405B 级别的训练约 3,000 万 GPU·小时，按本章单价接近一亿美元，约等于一个千卡集群 4 年的全部产出。
# - 电费在 4 年 TCO 里排在服务器、机房建设、维保和网络之后；电力更多决定「能不能建」，而不是单价。
# - 停机成本 = 故障次数 ×（恢复时间 + 半个检查点间隔）× 集群每小时成本；自动化恢复每年省下的钱可以远超硬件上的节省。
# - 固定预算下比交付算力而不是峰值：网络太慢时，最强的 GPU 也只能发挥一小部分。
#
# ## 参考资料
#
# - 价格：`labutil/data/prices.toml`（机房建设按每 kW **IT 负载**计价；全闪存并行文件系统含软件许可与维保的报价通常明显高于这里的示意值，评估时代入自己的报价）。公开标价：AWS *Amazon EC2 Capacity Blocks for ML Pricing*（p5.48xlarge 每 H100·小时 4.916 USD，p4d.24xlarge 每 A100·小时 1.844 USD，2024-12 有效至 2025-01-01）；NVIDIA DGX A100 发布新闻稿（2020-05-14，起售价 199,000 USD）；美国 EIA *Electric Power Monthly*（2023 年工业电价约 8 美分/kWh）。其余为标注了范围的示意值。
# - 功率：NVIDIA DGX H100 用户手册（单台最大约 10.2 kW）；The Green Grid, *PUE: A Comprehensive Examination of the Metric*（WP#49, 2012）；第 10 章 `labutil.power`。
# - TCO 结构：L. A. Barroso, U. Hölzle, P. Ranganathan, *The Datacenter as a Computer*, 3rd ed., 2018, ch. 6 "Modeling Costs"。
# - 通信模型：R. Thakur et al., *Optimization of Collective Communication Operations in MPICH*, IJHPCA 2005；P. Patarasuk, X. Yuan, *Bandwidth optimal all-reduce algorithms for clusters of workstations*, JPDC 2009；J. Kaplan et al., *Scaling Laws for Neural Language Models*, 2020（$C \approx 6ND$）。
# - 折旧年限：Amazon.com, Inc. 2024 年度报告（Form 10-K）：2025 年 1 月 1 日起一部分服务器与网络设备的使用年限由 6 年改为 5 年。
# - 机房设施的折旧年限：DuPont Fabros Technology, Inc. 2013 年度报告（Form 10-K），「Real Estate Assets」附注：配电单元与空调 20 年、UPS 25 年、开关柜与变压器 30 年、楼体改良 40 年。
# - 资本回收系数（等额年金）$\text{CRF} = r(1+r)^Y/((1+r)^Y-1)$：任一本工程经济学教材的标准公式；8% 为示意值。
# - 云价格的变化：2025 年 6 月 AWS 下调 P5 等 GPU 实例按需价最多约 45%（据 usage.ai，*LLM Cost Optimization on AWS*，2026 年更新版的整理；以 AWS 当期定价页为准）。
# - Llama 3.1 模型卡（Meta, 2024）：405B 训练累计 30.84M H100-80GB GPU·小时（第 4 章）。
# - 故障率与功率波动：A. Grattafiori et al. (Meta), *The Llama 3 Herd of Models*, arXiv:2407.21783, §3.3.4 表 5（第 27 章）；同节记录了数万张 GPU 同步升降功率造成的「数十兆瓦」级瞬时功率波动。
# - 云的计费方式（按需、预留/承诺、容量块、竞价）：AWS *Amazon EC2 Capacity Blocks for ML* 与 *EC2 On-Demand / Savings Plans* 定价页面（价格随时间调整，比较时以当期页面为准）。
# - GPU 代际：NVIDIA A100（GTC 2020）、H100（GTC 2022）、B200（GTC 2024）发布新闻稿。
# - 课程种子材料《AI算力集群》课程导入，误区一、误区三。
