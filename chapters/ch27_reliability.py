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
# # 第27章 可靠性工程：故障率、goodput 与检查点间隔
#
# > 模块六「推理、运维与实战」的第 27 章。前置：第 1 章（每天的故障次数）、第 17 章（检查点的大小与写入带宽）、
# > 第 21 章（Slurm 作业调度）、第 26 章（监控与 XID 告警）。本章把这些拼成一件事：**在一个每隔几小时就坏一次的系统上，怎样让训练持续向前走**。
# > 第 28 章（故障定位）和第 30 章（千卡集群综合设计）会直接用到本章的模型。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 用串联系统模型 $\Lambda = \sum_i n_i/\text{MTBF}_i$ 估算一个由 GPU、主机、网卡、交换机和线缆组成的集群每天被中断多少次，用 Llama 3 的 54 天统计校准它，并与 OPT-175B、Meta 研究集群和字节跳动的公开数据对照；
# - 写出 goodput（有效训练时间占比，也叫 ETTR）的表达式，算出重启、写检查点和重算各自吃掉多少墙钟时间；
# - 用 Young / Daly 公式求最优检查点间隔，并说明为什么 Llama 3 做到 >90% 有效训练时间需要「分钟级重启 + 十秒级检查点」；
# - 用蒙特卡洛模拟一次训练的时间线，读懂中断次数的分布；
# - 掌握自动重启与故障节点隔离的实操命令：`sacct`、`scontrol requeue`、`torchrun --max-restarts`、`nvidia-smi -q -d ROW_REMAPPER`、`dmesg | grep -i xid`。

# %%
from labutil.notebook import setup, show_table
from labutil import reliability, cost, units
from labutil.explore import reliability as reliability_x
from labutil.parsers import samples, parse_xid_errors, parse_nvidia_smi_q
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 为什么规模一大，「坏」就成了常态
#
# 同步训练（数据并行、张量并行、流水线并行的组合）有一个残酷的性质：每一步都要等所有 GPU 完成，
# 所以**任何一张卡、一台主机、一根线缆出问题，整个作业都会停下来**。在可靠性工程里，这叫**串联系统**。
# 如果每个部件的寿命服从指数分布（失效率恒定，这是硬件在「浴盆曲线」平坦段的标准假设），
# 第 $i$ 类部件有 $n_i$ 个、单个的平均无故障时间为 $\text{MTBF}_i$，那么整个作业的故障过程是一个泊松过程，速率为
#
# $$\Lambda = \sum_i \frac{n_i}{\text{MTBF}_i}, \qquad \text{MTBF}_{\text{job}} = \frac{1}{\Lambda}, \qquad \text{每天故障次数} = 24\,\Lambda\ (\text{MTBF 以小时计}).$$
#
# 这个公式最重要的含义是**线性**：卡数翻倍，故障率翻倍，作业 MTBF 减半。单卡 MTBF 10 万小时听上去是 11 年多，
# 但一万张卡放在一起，集群每 10 小时就有一张 GPU 坏掉。这正是种子课程「误区三：故障率可以忽略不计」要破除的直觉。
#
# 大规模训练集群里最常见的情形不是「某天突然大面积宕机」，而是每天稳定地出现几次单点故障：
# 一张卡掉卡（XID 79），一条 HBM 行需要重映射，一个光模块误码率飙升，一台主机的电源模块坏了。下一节 Llama 3 的 54 天快照就是这样：
# 419 次意外中断按根因几乎全落在单张卡、单台主机、单条链路上，整个期间只有 3 次需要大量人工介入。
# 每一次都只影响一台机器，但每一次都让上千张卡的作业停下来。所以可靠性工程的目标不是「不坏」——那做不到——
# 而是**坏了以后尽快、尽量少损失地回到训练**。
#
# 下面先算种子课程的数字：1 万张卡、单卡 MTBF 10 万小时。

# %%
# NBVAL_CHECK_OUTPUT
seed = reliability.reference_data()["seed000"]
gpu_only = reliability.failures_per_day(seed["gpus"], seed["gpu_mtbf_hours"])
print(f"{seed['gpus']:,} GPUs at {seed['gpu_mtbf_hours']:,} h MTBF: {gpu_only:.2f} GPU failures per day")
print(f"cluster MTBF from GPUs alone: {24 / gpu_only:.1f} h")

# %% [markdown]
# ### 1.1 用真实数据校准：Llama 3 的 54 天
#
# 公开数据里最详细的一份来自 Meta 的 Llama 3 论文（§3.3.4，表 5）：在 16,384 张 H100（每台 Grand Teton 服务器 8 卡，共 2,048 台）上预训练 405B 模型的
# 一段 **54 天**快照里，作业一共被中断 **466 次**，其中 47 次是计划内的（固件升级、配置变更），**419 次是意外中断**；
# 约 78% 的意外中断被确认或怀疑是硬件问题；尽管如此，团队仍做到了 **>90% 的有效训练时间**，整个期间只有 3 次需要大量人工介入。
#
# 表 5 按根因列出了 419 次中断。注意一个细节：论文里「Faulty GPU」一行印的是 148 次、30.1%，但 148/419 = 35.3%；
# 各行的**次数**加起来正好是 419，所以本课程用次数而不是印出来的百分比（GPU 类合计 268 次 = 64.0%，而论文正文说 58.7%，与印出来的百分比一致）。
# 读论文时遇到这种不一致，应该相信能自洽的那组数字，并把不一致记录下来。

# %%
reliability_x.llama3_table5_figure()

# %% [markdown]
# 把每一行归到「坏的是哪类部件」，再除以该类部件在 54 天里累计的运行时间，就得到**每个部件的等效 MTBF**：
# GPU 相关 268 次 / (16,384 卡 × 1,296 h)，主机硬件 21 次 / (2,048 台 × 1,296 h)，网络（交换机/线缆）35 次按每张卡一条 400G 链路分摊，
# 软件与未知原因 63 次按卡数分摊（这是一个假设：软件故障率并不真正与卡数成正比，但作业越大越容易触发）。

# %%
# NBVAL_CHECK_OUTPUT
mtbf = reliability.llama3_component_mtbf_hours()
for part, hours in mtbf.items():
    print(f"{part:17s} MTBF per unit: {hours:>10,.0f} h")
comps = reliability.llama3_components(16_384)
per_day = reliability.cluster_failures_per_day(comps)
print(f"16,384-GPU job: {per_day:.2f} interruptions/day, {per_day * 54:.0f} in 54 days, "
      f"job MTBF {reliability.cluster_mtbf_hours(comps):.2f} h")

# %% [markdown]
# 校准出的单卡等效 MTBF 约 7.9 万小时——与种子课程假设的 10 万小时是同一个数量级，这让我们对「万卡每天坏几次」的估算更有信心。
# 另一份独立数据来自 Meta 的研究集群（Kokolis et al., 2024）：两个 A100 集群 RSC-1 / RSC-2 的故障率分别是每 1000 节点·天 6.50 和 2.34 次。
# 把 Llama 3 的数字换成同一单位，它正好落在两者之间：

# %%
# NBVAL_CHECK_OUTPUT
k = reliability.reference_data()["kokolis2024"]
print(f"Llama 3: {reliability.llama3_rate_per_1000_node_days():.2f} failures per 1000 node-days "
      f"(RSC-2 {k['rsc2_failures_per_1000_node_days']:.2f}, RSC-1 {k['rsc1_failures_per_1000_node_days']:.2f})")
print(f"16,384-GPU job MTTF at RSC-1 rate: {reliability.job_mttf_hours_from_node_rate(16_384, 6.50):.2f} h "
      f"(paper: {k['rsc1_projected_mttf_16k_gpus_h']} h); at Llama 3 rate: {54 * 24 / 419:.2f} h")

# %% [markdown]
# 更早的一份公开记录来自 OPT-175B（Zhang et al. 2022）：992 张 A100 80GB、约两个月里，硬件故障造成**至少 35 次手工重启**、**轮换掉 100 多台主机**，
# 论文据此估计另有 **70 多次自动重启**。把它换成每天的重启次数，和按 Llama 3 校准的同规模作业比一比：

# %%
# NBVAL_CHECK_OUTPUT
opt = reliability.reference_data()["opt175b"]
print(f"OPT-175B on {opt['gpus']} A100: at least {reliability.opt175b_restarts_per_day():.2f} restarts per day "
      f"(>= {opt['manual_restarts_min']} manual + {opt['automatic_restarts_min']} automatic in ~{opt['days']} days)")
print(f"Llama 3 rate scaled to {opt['gpus']} GPUs: {reliability.llama3_failures_per_day(opt['gpus']):.2f}/day "
      f"-> OPT saw {reliability.opt175b_restarts_per_day() / reliability.llama3_failures_per_day(opt['gpus']):.1f}x as many per GPU")

# %% [markdown]
# 同样是 Meta 的大模型训练，按卡数折算到同样的 992 张卡，OPT 每卡的重启率是 Llama 3 校准值的 3.7 倍；Meta 的两个研究集群 RSC-1 与 RSC-2 之间也差了 2.8 倍。
# 单卡 MTBF 不是一个物理常数：它随硬件代次、集群的「磨合期」（浴盆曲线的早期失效段）、温度和运维成熟度变化。
# 规划时要用**自己集群**的故障记录校准（第 26 章的 XID/ECC 指标、`sacct` 的中断记录），公开数字只能给出量级。
#
# 下图把故障次数随规模的变化画出来（对数坐标）：只算 GPU 时三条线对应不同的单卡 MTBF，黑色虚线是按 Llama 3 校准、包含所有部件的结果。
# 过了虚线 $y=1$，作业每天至少被打断一次——对 Llama 3 校准的集群来说，这条线大约在两千张卡处。

# %%
reliability_x.failures_vs_scale_figure()

# %% [markdown]
# ## 2. Goodput：时间都去哪儿了
#
# 训练的墙钟时间被分成四部分：**有用的计算**、**写检查点**、**故障后的重启**（检测、隔离坏节点、重新调度、加载检查点、NCCL 初始化）、
# 以及**重算**——上一次检查点之后算的东西在故障时全部丢失，需要重新算一遍。设检查点间隔（两次检查点之间的计算时间）为 $\tau$，
# 写一次检查点的阻塞时间为 $\delta$，重启时间为 $R$，作业 MTBF 为 $M = 1/\lambda$。在指数故障模型下（重启过程中再坏一次就重新开始重启），
# Daly（2006）推导出每完成 $\tau$ 的有用计算，期望要花的墙钟时间是 $M e^{R/M}\,(e^{(\tau+\delta)/M}-1)$，于是
#
# $$\text{goodput} = \frac{\tau}{M\,e^{R/M}\,\big(e^{(\tau+\delta)/M}-1\big)} \;\approx\; 1 - \frac{\delta}{\tau} - \frac{R + \tau/2}{M}.$$
#
# 右边是把指数展开到一阶的结果，直观含义是：每个周期 $\tau+\delta$ 里故障的位置近似均匀，所以**每次故障平均损失 $R$ 加上半个间隔的重算**，
# 另外每个周期固定付出 $\delta/\tau$ 的检查点开销。左边的精确式永远落在 0 到 1 之间，$M$ 不比 $R$ 大多少时也不会算出负数。
#
# 右边的一阶近似把矛盾写得很清楚：**检查点越频繁（$\tau$ 小），写检查点的开销 $\delta/\tau$ 越大；检查点越稀疏，每次故障重算得越多 $\tau/(2M)$**。
# 对 $\tau$ 求导令其为零，得到 Young（1974）的最优间隔
#
# $$\tau^* = \sqrt{2\,\delta\,M}.$$
#
# Daly（2006）给出了更高阶的修正 $\tau^* = \sqrt{2\delta M}\,[1 + \tfrac13\sqrt{\delta/2M} + \tfrac19(\delta/2M)] - \delta$（$\delta < 2M$ 时），
# 在 $\delta \ll M$ 的常见情形下两者几乎一样。教科书上的例子：检查点写 5 分钟、MTBF 24 小时，$\tau^* = \sqrt{2 \times 300 \times 86400}$ 秒，正好 2 小时。

# %%
# NBVAL_CHECK_OUTPUT
print(f"Young: delta 5 min, M 24 h -> tau* = {reliability.young_daly_interval_s(300, 86_400) / 3600:.2f} h; "
      f"Daly: {reliability.daly_interval_s(300, 86_400) / 3600:.2f} h")
f_l3 = reliability.llama3_failures_per_day(16_384)
m_l3 = units.SECONDS_PER_DAY / f_l3
for d in (10, 30, 120):
    t = reliability.young_daly_interval_s(d, m_l3)
    print(f"Llama 3 rate, checkpoint {d:>3d} s: tau* = {t / 60:5.1f} min, goodput at R = 10 min: "
          f"{100 * reliability.goodput(f_l3, 600, t, d):.1f} %")

# %% [markdown]
# 同一个模型也能回答本节标题的问题：墙钟时间具体花在了哪几块。每完成一个周期（保住 $\tau$ 的计算），期望要经历 $q = e^{(\tau+\delta)/M}-1$ 次失败的尝试，
# 每次失败扔掉自上一个检查点以来的工作（平均 $M - (\tau+\delta)/q$，当 $\tau \ll M$ 时约为半个间隔），再付一次重启。
# Llama 3 的故障率、重启 10 分钟、30 秒的阻塞检查点、按 Young 间隔写：

# %%
# NBVAL_CHECK_OUTPUT
tau30 = reliability.young_daly_interval_s(30, m_l3)
parts = reliability.time_breakdown(f_l3, 600, tau30, 30)
print(f"interval {tau30 / 60:.1f} min: " + ", ".join(f"{k} {100 * v:.1f} %" for k, v in parts.items()))

# %% [markdown]
# 约 88% 在训练；剩下的约 12% 里，重启（5.2%）比写检查点（3.2%）和重算（3.6%）都多——在这个规模，**重启时间是最大的一块损失**，第 6 节误区三会再看到这一点。
#
# 注意 $\tau^*$ 随 MTBF 的**平方根**增长：集群扩大 4 倍，MTBF 变成 1/4，最优检查点间隔只缩短一半，但每次检查点的代价（要写的数据量）往往还变大了。
# 下图是 Llama 3 故障率、重启 10 分钟时，三种检查点写入时间下 goodput 随间隔的变化；圆点是 Young 最优点。曲线顶部很平——
# 间隔偏离最优值两倍，goodput 只损失一两个百分点；但检查点本身的写入时间 $\delta$ 决定了曲线能到多高。

# %%
reliability_x.goodput_vs_interval_figure(f_l3, 600.0)

# %% [markdown]
# ### 2.1 倒推：Llama 3 的 >90% 意味着什么
#
# 论文没有公布重启时间和检查点耗时，但我们可以反过来问：在每天 7.76 次中断的前提下，要达到 90% 的 goodput，重启时间最多能有多长？

# %%
# NBVAL_CHECK_OUTPUT
for d in (10, 30, 60):
    r_max = reliability.max_restart_s_for_goodput(0.90, f_l3, d)
    print(f"checkpoint {d:>2d} s -> longest restart for 90 % goodput: "
          + (f"{r_max / 60:5.1f} min" if r_max > 0 else "none (90 % is out of reach even with an instant restart)"))
print(f"manual recovery (3 h) with 30 s checkpoints: goodput {100 * reliability.optimal_goodput(f_l3, 3 * 3600, 30):.1f} %")

# %% [markdown]
# 结论很硬：如果检查点是阻塞的、要写一分钟，哪怕重启瞬间完成也到不了 90%；检查点压到 30 秒，重启也必须在 5.8 分钟以内完成。
# 这就是 Llama 3 论文里「缩短作业启动和检查点时间、开发快速诊断工具」的量化含义，也是今天大规模训练普遍采用
# **异步/分片检查点**（先拷到主机内存再后台落盘，GPU 只阻塞几秒）和**全自动重启**的原因。靠值班工程师半夜手工处理（3 小时），goodput 只剩 35%。
#
# 其他公开报告用的名字不同，量是同一个：Kokolis 等称它为 **ETTR**（effective training time ratio），字节跳动的 ByteRobust（Wan et al. 2025）
# 报告一个 9,600 卡、持续三个月的训练作业 ETTR 达到 97%。用同一个模型倒推，这要求什么：

# %%
# NBVAL_CHECK_OUTPUT
br = reliability.reference_data()["byterobust2025"]
f_br = reliability.llama3_failures_per_day(br["gpus"])
print(f"{br['gpus']:,} GPUs at the Llama 3 rate: {f_br:.2f} interruptions/day")
for d in (10, 5, 1):
    r_max = reliability.max_restart_s_for_goodput(br["ettr"], f_br, d)
    print(f"checkpoint {d:>2d} s -> longest restart for {br['ettr']:.0%}: "
          + (f"{r_max / 60:4.1f} min" if r_max > 0 else "none (out of reach)"))

# %% [markdown]
# 如果故障率和 Llama 3 相当，97% 要求检查点阻塞在 5 秒左右、重启在 2.4 分钟以内（或者检查点 1 秒、重启 6.4 分钟）——这已经不是「重新提交作业」能做到的，
# 而是热备节点、进程不退出的原地恢复、内存中的检查点副本这类机制（ByteRobust、MegaScale 的论文描述的正是这些）。
# 也可能是它的故障率本来就更低：和 OPT 对 Llama 3 一样，不同集群之间差几倍是常态。
#
# | 环节 | 手工运维的典型做法 | 自动化的做法 | 对 goodput 的影响 |
# |---|---|---|---|
# | 检测 | 用户发现 loss 不动了 | NCCL watchdog 超时 + XID/DCGM 告警触发 | 检测延迟直接计入 $R$ |
# | 隔离 | 人工登录排查，重跑 NCCL test | 健康检查脚本 `scontrol update state=drain` 坏节点 | 不隔离则反复在同一节点上失败 |
# | 重新调度 | 人工改 hostfile 重提作业 | Slurm `--requeue` / 备用节点池 / torchrun 弹性重启 | 分钟级 vs 小时级 |
# | 恢复 | 从最近的完整检查点加载 | 分片并行加载、内存中的检查点副本 | 加载时间计入 $R$ |
#
# ## 3. 交互：改变规模、MTBF、检查点与重启时间
#
# 下面的探索器默认取 Llama 3 校准出的部件 MTBF（取到滑块刻度上）。试着：把 GPU 数量拉到 131,072，看最优间隔和 goodput 怎样变化；
# 把重启时间从 10 分钟拉到 2 小时；把检查点写入从 30 秒拉到 5 分钟。右图是一次模拟训练的时间线：蓝线是「保住了的」有用训练量，
# 每次故障都会掉回上一个检查点，再经过一段重启平台期重新爬升。图上方的摘要还给出所选间隔下其余墙钟时间的去向：写检查点、重算、重启各占多少。

# %%
explorer = reliability_x.reliability_explorer()
explorer

# %% [markdown]
# ## 4. 蒙特卡洛：模拟 54 天、1,000 次
#
# 解析公式给出期望值；蒙特卡洛告诉我们**分布**。`simulate_timelines` 把故障看作泊松过程（独立指数寿命的叠加恰好是泊松过程），
# 按段模拟「重启 → 计算 τ → 写检查点 δ → …」直到下一次故障，只有完成了的检查点才算保住的进度。1,000 次 54 天的模拟在这台机器上不到 1 秒（见 `benchmarks/bench_montecarlo.py`）。

# %%
# NBVAL_CHECK_OUTPUT
sim = reliability.simulate_timelines(f_l3, 54, restart_s=600, interval_s=900, checkpoint_s=30, trials=1000, seed=0,
                                     parts=comps)
lo, hi = (int(x) for x in (sim.interruptions.min(), sim.interruptions.max()))
print(f"interruptions in 54 days: mean {sim.mean_interruptions:.1f} (Llama 3: 419), range {lo}-{hi}")
gpu_share = sim.interruptions_by_part["gpu"].sum() / sim.interruptions.sum()
print(f"share attributed to GPUs: {100 * gpu_share:.1f} % (Table 5 counts: {100 * 268 / 419:.1f} %)")
print(f"goodput: simulated {100 * sim.mean_goodput:.1f} %, formula {100 * reliability.goodput(f_l3, 600, 900, 30):.1f} %")
print(f"lost wall-clock per run: {sim.lost_hours.mean():.0f} h, i.e. {sim.lost_hours.mean() * 16_384 / 1e6:.2f} M GPU-hours")

# %%
reliability_x.interruptions_histogram_figure(sim, reference=419, reference_label="Llama 3: 419 in 54 days")

# %% [markdown]
# 模拟的平均中断次数与 419 吻合（这是校准的结果，不是巧合），但分布的标准差约 $\sqrt{419} \approx 20$ 次：
# 同样的集群、同样的部件，两次 54 天的训练可能一次坏 390 次、一次坏 450 次。做容量规划和排期时，应该按分布的高分位而不是平均值留余量。
# 模拟的平均 goodput 与 Daly 公式的差别在千分之一以内：公式与模拟描述的是同一个模型，一个给期望，一个给分布。
# 下面是一次模拟运行的前 3 天：

# %%
reliability_x.timeline_figure(reliability.simulate_run(f_l3, 3, restart_s=600, interval_s=900, checkpoint_s=30, seed=1))

# %% [markdown]
# ## 5. 实操命令：自动重启与故障节点隔离
#
# 可靠性工程落到命令上，是一条「检测 → 隔离 → 重新调度 → 恢复」的流水线。下面是每一环的常用命令。
#
# **Slurm：让作业在节点故障后自动重排队，并查看它被中断了几次**
#
# ```bash
# # 提交时允许重排队；节点失败时 Slurm 会把作业放回队列（需 JobRequeue=1 或 --requeue）
# sbatch --requeue --nodes=128 --gpus-per-node=8 pretrain.sbatch
# # 手工把作业重新排队（例如隔离了一台坏节点之后）
# scontrol requeue 81234
# # 把坏节点排空，不再分配新作业
# scontrol update nodename=gpu065 state=drain reason="XID 79 fallen off the bus"
# # 查看作业每一次运行的记录（-D 显示被重排队的每一段）
# sacct -j 81234 -D -P --format=JobID,JobName,State,ExitCode,Elapsed,NNodes,NodeList
# ```
#
# **torchrun：进程级的弹性重启**
#
# ```bash
# torchrun --nnodes=128 --nproc-per-node=8 --max-restarts=3 \
#          --rdzv-backend=c10d --rdzv-endpoint=$HEAD_NODE:29500 train.py --resume-from latest
# ```
#
# `--max-restarts` 让 torchrun 在一个 worker 失败时重启整组 worker（最多 N 次），训练脚本必须能从最新检查点恢复。
#
# **Kubernetes：把坏节点隔离出调度**
#
# ```bash
# kubectl cordon gpu065                                            # 不再往这台节点调度新 Pod
# kubectl drain gpu065 --ignore-daemonsets --delete-emptydir-data   # 驱逐上面的 Pod（训练作业由 Job/PyTorchJob 控制器重建）
# kubectl taint nodes gpu065 gpu-health=failed:NoSchedule           # 也可以用污点标记原因，修好后 kubectl uncordon / 去掉污点
# ```
#
# 大规模训练平台把这几步串成自动化流程。MegaScale（字节跳动，NSDI 2024，12,288 卡上 55.2% MFU）的做法是：每个训练进程定期发心跳和状态，
# 控制面发现异常（进程退出、心跳停止、性能骤降）后先停作业、在可疑节点上跑一组自检（机内/机间网络、NCCL 小测试、GPU 检查），
# 把查出问题的节点换掉，再从检查点快速恢复。这和本章的模型一一对应：自检的速度和准确度决定 $R$，隔离决定同一个故障会不会反复出现。
#
# **GPU 显存健康：行重映射与页退役**
#
# ```bash
# nvidia-smi -q -d ROW_REMAPPER        # A100/H100：Pending=Yes 表示需要重置 GPU 才能生效
# nvidia-smi -q -d PAGE_RETIREMENT     # 更早的 GPU（V100 等）用页退役
# dmesg -T | grep -i xid               # 内核日志中的 XID 事件
# ```
#
# 下面用课程自带的示例输出（格式来自 Slurm `sacct -P` 和 NVIDIA 驱动 R550 的 `nvidia-smi -q`、内核 `NVRM: Xid` 行；数值是示意的，见 `samples.info(...)` 的 source）
# 演示如何把输出变成决策。先看 sacct：这个作业在一周内运行了四段，被中断三次。

# %%
# NBVAL_CHECK_OUTPUT
records = reliability.parse_sacct(reliability.sample_text("sacct_requeue"))
for r in records:
    print(f"{r.state:10s} exit {r.exit_code:4s} ran {r.elapsed_s / 3600:6.2f} h on {r.nodes} nodes")
interrupted = [r for r in records if r.state != "RUNNING"]
print(f"interruptions: {len(interrupted)}; hours of runs that ended in a failure: "
      f"{sum(r.elapsed_s for r in interrupted) / 3600:.1f} h")

# %% [markdown]
# 然后是内核日志中的 XID 和 `nvidia-smi -q` 中的行重映射状态。规则（来自 NVIDIA 的 XID 文档与 GPU Memory Error Management 文档）：
# XID 79（掉卡）、48/95（不可纠正 ECC）、74（NVLink）这类硬件错误要**立刻排空节点**；XID 13/31 多半是应用自己的问题，先查作业；
# 行重映射 Pending=Yes 的 GPU 要在下次排空时**重置**，Remapping Failure=Yes 则要**返修（RMA）**。

# %%
# NBVAL_CHECK_OUTPUT
print(samples.info("dmesg_xid")["source"][:60] + "...")
for row in reliability.triage_xid(parse_xid_errors(samples.sample("dmesg_xid"))):
    flag = "DRAIN" if row["isolate_node"] else "-----"
    print(f"{flag} {row['bus_id']} XID {row['xid']:>3d}: {row['meaning']}")
smi = parse_nvidia_smi_q(samples.sample("nvidia_smi_q"))
for g in smi.gpus:
    print(f"GPU {g.bus_id}: remapped rows uncorrectable={g.remapped_rows_uncorrectable}, "
          f"pending={g.remapped_rows_pending} -> {reliability.gpu_memory_action(g)}")

# %% [markdown]
# 为什么「隔离」和「重启」一样重要？因为坏节点往往会反复坏。如果调度器把重排队的作业又放回那台掉过卡的机器上，
# 下一次故障几乎是必然的，$R$ 实际上翻倍。生产集群会维护一个**备用节点池**（通常占 1%–3%），坏节点被排空后由备用节点顶上，
# 作业按原规模重启；坏节点离线跑 DCGM 诊断（第 23 章），通过后才回到池子里。
#
# ### 5.1 备用池要多大：维修流水线的 Little 定律
#
# 「1%–3%」不是拍脑袋的数字，可以算出来。把需要下线处理的故障看成一个到达速率为 $\lambda$（台/天）的流，每台坏节点在维修流水线里平均停留 $T_r$ 天
# （排空、诊断、重置或换件、复测），那么任意时刻不在池子里的节点数平均为 $L = \lambda T_r$（Little 定律）。
# 到达是泊松的，同时在修的台数也近似服从均值为 $L$ 的泊松分布，所以备用池要按 $L + 3\sqrt{L}$ 准备，才能在绝大多数时候顶得上。
# 下面用 Llama 3 表 5 里 GPU 与主机硬件两类（需要把节点拉下来的那些）的比例，按 2,048 台服务器算；$T_r$ 取 1 / 3 / 7 天是示意值：
# 重置加诊断一天能回来，换 GPU 或主板要等备件，跨厂商 RMA 要一周以上。

# %%
# NBVAL_CHECK_OUTPUT
rows5 = reliability.llama3_table5()
hw = sum(r["count"] for r in rows5 if r["part"] in ("gpu", "host"))
drains_per_day = reliability.llama3_failures_per_day(16_384) * hw / sum(r["count"] for r in rows5)
print(f"GPU + host hardware: {hw} of 419 interruptions -> {drains_per_day:.2f} node drains per day on 2,048 nodes")
for t_r in (1.0, 3.0, 7.0):
    mean = drains_per_day * t_r
    spare = mean + 3 * mean ** 0.5
    print(f"repair time {t_r:3.0f} d: {mean:5.1f} nodes in repair on average, spare pool {spare:5.1f} nodes "
          f"= {100 * spare / 2048:.1f} % of the cluster")

# %% [markdown]
# 维修周期从 1 天拉长到 7 天，备用池就要从 0.6% 涨到 2.7%：**维修流程的速度直接变成了要多买的机器**。这就是为什么大集群会在机房里备 GPU 模块、
# 主板和光模块的现货，并且和厂商谈「先换后修」（advance replacement）：把 $T_r$ 从两周压到两天，省下的备用节点往往比备件库存贵得多。
#
# 两类故障值得单独说。**静默数据损坏（SDC）**：表 5 里有 6 次，GPU 算错了却没有报任何错。它不会让作业崩溃，只会让 loss 突然出现尖峰、
# 或者让某个 rank 的梯度范数和其他 rank 对不上。Meta 的 *Silent Data Corruptions at Scale*（Dixit 等，2021）记录了 CPU 上同样的现象；
# 应对办法是在训练中监控 loss 与梯度范数的异常，可疑时用确定性的重算或 DCGM 的压力诊断去复现，找到后把那张卡永久下线。
# **NCCL watchdog 超时**（表 5 中 7 次、归为原因不明）：某个 rank 在集合通信里等了超过超时时间，作业被杀掉，但日志里看不出是谁先出的问题。
# 这类故障的处理时间主要花在「找人」上，所以要在训练框架里打开 NCCL 的 flight recorder（PyTorch 的 `TORCH_NCCL_TRACE_BUFFER_SIZE`），
# 让每个 rank 在超时时把最近的集合通信记录写下来，比对出那个没有进入集合的 rank。
#
# ## 6. 常见误区（每一条都用算出来的数字反驳）
#
# ### 误区一：「故障率可以忽略不计」（种子课程误区三）
#
# 单卡 MTBF 10 万小时确实很长，但一万张卡加上主机、网卡、交换机和线缆，故障就是每天都会发生的事。

# %%
# NBVAL_CHECK_OUTPUT
mixed = {c.name: (c.count, c.mtbf_hours) for c in reliability.llama3_components(10_000)}
mixed["gpu"] = (10_000, 100_000)  # the seed's GPU MTBF; other parts Llama 3-calibrated
total = reliability.cluster_failures_per_day(mixed)
for name, share in reliability.failure_breakdown(mixed).items():
    print(f"{name:17s} {share * total:5.2f} per day")
print(f"10,000-GPU cluster, all parts: {total:.2f} interruptions/day = {7 * total:.0f} per week "
      f"(job MTBF {24 / total:.1f} h)")
l3 = reliability.llama3_failures_per_day(10_000)
print(f"same cluster with the GPU MTBF calibrated to Llama 3 ({mtbf['gpu']:,.0f} h, as ch30 uses): {l3:.2f}/day")

# %% [markdown]
# 只算 GPU 是每天 2.4 次；算上主机、网络链路和软件，是每天约 4 次、每周近 30 次。检查点、自动重启、故障节点隔离不是「锦上添花」，而是必备能力。
# 第 30 章给同样规模的集群算出的是每天 4.74 次：那里 GPU 也按 Llama 3 校准（单卡 7.9 万小时），这里 GPU 用种子课程的 10 万小时。
# 两个数都对，差别只在单卡 MTBF 这一个假设上——这也说明「每天 4–5 次」这个量级对单卡 MTBF 的取值并不敏感。
#
# ### 误区二：「检查点越频繁越安全」
#
# 频繁写检查点确实减少了每次故障的重算量，但写检查点本身要花时间。Llama 3 故障率下，阻塞 2 分钟的检查点每 5 分钟写一次，比按 Young 间隔写差得多：

# %%
# NBVAL_CHECK_OUTPUT
for tau_min in (5, 15, 34, 120, 480):
    b = reliability.time_breakdown(f_l3, 600, tau_min * 60, 120)
    print(f"checkpoint 120 s every {tau_min:>3d} min: goodput {100 * b['useful']:5.1f} %, writing checkpoints "
          f"{100 * b['checkpoint']:4.1f} %, rework {100 * b['rework']:4.1f} %")
print(f"Young interval: {reliability.young_daly_interval_s(120, m_l3) / 60:.0f} min")
print(f"every 480 min: an interval completes without a failure with probability "
      f"{reliability.interval_completion_probability(f_l3, 480 * 60, 120):.0%}; a failure throws away "
      f"{reliability.mean_rework_s(f_l3, 480 * 60, 120) / 3600:.1f} h on average (job MTBF {m_l3 / 3600:.1f} h)")

# %% [markdown]
# 每 5 分钟写一次，goodput 只有 66%，比最优间隔附近的约 81% 低 15 个百分点——墙钟时间的 27% 花在写检查点上；间隔拉到 8 小时又跌到 20%：
# 8 小时比作业 MTBF（3.1 小时）还长，一个间隔能不出故障地跑完的概率只有 7%，大部分周期还没写到检查点就被打断，每次故障平均扔掉 2.4 小时，
# 重算吃掉了 75% 的时间。（Young 的一阶近似说「每次故障损失半个间隔」，只在间隔远小于 MTBF 时成立；这里半个间隔是 4 小时，实际损失不可能超过两次故障的平均间隔。）
# 曲线在最优点附近很平（15–34 分钟都在 80% 上下），所以间隔不必算得很精确，但数量级必须对，
# 并且要随故障率和检查点耗时的变化重新算：集群扩容一倍，$M$ 减半，最优间隔就要缩短到约 $1/\sqrt{2}$。
#
# ### 误区三：「只要 MTBF 高，重启慢一点没关系」
#
# 在万卡规模，重启时间比 MTBF 更能决定 goodput。同样的故障率下，把重启从 5 分钟拖到 2 小时：

# %%
# NBVAL_CHECK_OUTPUT
for r_min in (5, 15, 60, 120):
    print(f"restart {r_min:>3d} min: goodput {100 * reliability.optimal_goodput(f_l3, r_min * 60, 30):5.1f} % "
          f"at Llama 3 rate; {100 * reliability.optimal_goodput(f_l3 / 2, r_min * 60, 30):5.1f} % with half the failures")

# %% [markdown]
# 把故障率砍半（相当于所有部件 MTBF 翻倍，硬件上极难做到）带来的收益，不如把重启从 1 小时压到 15 分钟（软件和流程上可以做到）。
# 这也是第 5 章「停机成本」的另一面：停机成本 = 故障次数 × 每次损失的时间 × 集群每小时的成本。
#
# ## 7. 练习
#
# 把答案填进 `answer_k`（数字即可，单位见题目），运行单元格查看判分；卡住时调用 `exercise("ch27.k").hint(1)`。
#
# **练习 1**：4,096 卡的作业（512 台主机）。单位 MTBF：GPU 80,000 h，主机 50,000 h，每卡一条网络链路 500,000 h。作业每天被中断几次？

# %%
answer_1 = None
exercise("ch27.1").check(answer_1)

# %% [markdown]
# **练习 2**：作业 MTBF 为 6 小时，写一次检查点要 90 秒。Young 最优检查点间隔是多少分钟？

# %%
answer_2 = None
exercise("ch27.2").check(answer_2)

# %% [markdown]
# **练习 3**：Llama 3 的故障率（54 天 419 次，16,384 卡），重启 10 分钟，每 15 分钟写一次 30 秒的检查点。期望 goodput 是百分之多少？

# %%
answer_3 = None
exercise("ch27.3").check(answer_3)

# %% [markdown]
# **练习 4**：同样的故障率，30 秒检查点、按 Young 间隔写。要达到 90% goodput，重启时间最长可以是多少分钟？

# %%
answer_4 = None
exercise("ch27.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：16,384 卡、Llama 3 故障率、重启 10 分钟、检查点写入 30 s，都按 Young 间隔。哪个改进让 goodput 提高更多：'restart'（重启缩短到 5 分钟）还是 'checkpoint'（写入缩短到 15 s）？

# %%
answer_5 = None  # 'restart' 或 'checkpoint'
exercise("ch27.5").check(answer_5)

# %% [markdown]
# ## 8. 小结
#
# - 同步训练是串联系统：$\Lambda = \sum n_i/\text{MTBF}_i$，故障率随规模线性增长。Llama 3：16,384 张 H100 上 54 天 419 次意外中断，约每 3.1 小时一次。
# - goodput $\approx 1 - \delta/\tau - (R + \tau/2)/M$；最优检查点间隔 $\tau^* = \sqrt{2\delta M}$（Young），随 MTBF 的平方根增长。
# - 在万卡规模，>90% 的有效训练时间要求十秒级的检查点阻塞和分钟级的全自动重启；坏节点必须被隔离，否则同一个故障会反复打断作业。
# - 蒙特卡洛给出分布：54 天的中断次数标准差约 20 次，排期要按高分位留余量。
#
# 下一章（第 28 章）讲故障发生后怎样按「网络 → 存储 → GPU → 软件」的层次快速定位根因。
#
# ## 参考资料
#
# - H. D. Dixit et al. (Meta), *Silent Data Corruptions at Scale*, arXiv:2102.11245, 2021；J. D. C. Little, *A Proof for the Queuing Formula L = λW*, Operations Research 9(3), 1961。
# - PyTorch 文档 *Flight Recorder for debugging stuck jobs*（`TORCH_NCCL_TRACE_BUFFER_SIZE`）。
# - A. Grattafiori et al. (Meta), *The Llama 3 Herd of Models*, arXiv:2407.21783, 2024, §3.3.4 与表 5：54 天快照、466 次中断（47 次计划内、419 次意外）、约 78% 硬件相关、>90% 有效训练时间、3 次重大人工介入；16,384 张 H100、每台 8 卡。
# - A. Kokolis et al. (Meta), *Revisiting Reliability in Large-Scale Machine Learning Research Clusters*, HPCA 2025, arXiv:2410.21680：RSC-1/RSC-2 每 1000 节点·天 6.50/2.34 次故障，16k 卡作业 MTTF 预测 1.8 h；ETTR（有效训练时间比）的定义。
# - S. Zhang et al. (Meta), *OPT: Open Pre-trained Transformer Language Models*, arXiv:2205.01068, §2「Training Processes」Hardware Failures：992 张 A100 80GB，约 2 个月至少 35 次手工重启、轮换 100 多台主机、估计 70 多次自动重启（课程把 2 个月按 61 天算）。
# - B. Wan et al. (字节跳动), *Robust LLM Training Infrastructure at ByteDance*（ByteRobust），arXiv:2509.16293，摘要：9,600 卡、三个月的训练作业 ETTR 97%。
# - Z. Jiang et al. (字节跳动), *MegaScale: Scaling Large Language Model Training to More Than 10,000 GPUs*, NSDI 2024：12,288 卡 55.2% MFU；稳定性一节的心跳、自检诊断、故障节点剔除与快速检查点恢复。
# - Kubernetes 文档：`kubectl cordon`、`kubectl drain`、`kubectl taint`。
# - J. W. Young, *A first order approximation to the optimum checkpoint interval*, Communications of the ACM 17(9):530–531, 1974。
# - J. T. Daly, *A higher order estimate of the optimum checkpoint interval for restart dumps*, Future Generation Computer Systems 22(3):303–312, 2006。
# - NVIDIA, *XID Errors*（docs.nvidia.com/deploy/xid-errors）与 *GPU Memory Error Management*（行重映射、页退役）。
# - SchedMD, Slurm 文档：`sacct`（`--duplicates`、`--parsable2`）、`scontrol requeue`、`scontrol update state=drain`、`sbatch --requeue`。
# - PyTorch 文档，*torchrun (Elastic Launch)*：`--max-restarts`、rendezvous。
# - 课程种子材料《大规模GPU集群部署核心概念速览》课程导入，误区三。
