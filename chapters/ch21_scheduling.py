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
# # 第21章 作业调度：Slurm 与 Kubernetes
#
# > 模块五「部署与验证」的第 21 章。前置：第 3 章（软件栈的四层）、第 20 章（容器与 GPU Operator）。
# > 本章之后，第 22、23 章用调度器提交验收作业，第 29 章在本章的 QOS、配额之上讲多租户隔离与安全。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 说清楚 Slurm 的 partition、QOS、fair-share、GRES 和 Kubernetes 的 device plugin、Namespace、ResourceQuota、PriorityClass 各管什么，以及它们的对应关系；
# - 用**离散事件模拟**比较 FIFO、EASY backfill、QOS 优先级（含抢占）、fair-share 在混合训练/推理负载上的 GPU 利用率与每类作业的 P50/P95 等待时间；
# - 解释为什么在 64~128 卡的科研机构混合集群里，推理作业会被训练作业「饿死」，以及 QOS + 抢占、配额、专用分区分别以什么代价解决它；
# - 写出 `slurm.conf` / `gres.conf` 的 GPU 行、`sacctmgr` 的 QOS、K8s 的 ResourceQuota 与 Pod GPU 请求，并读懂 `squeue`、`sinfo`、`kubectl describe quota` 的输出。

# %%
from labutil.notebook import setup, show_table
from labutil import scheduling as S, hardware, manifests
from labutil.explore import scheduling as scheduling_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 为什么 GPU 集群离不开调度器
#
# 第 1 章讲过，集群要同时做好三种协同：计算协同、通信协同、**资源管理协同**。种子课程对第三条的说法很直接：
# 集群需要统一的资源调度系统（如 Slurm、Kubernetes），实现任务排队、故障转移、资源隔离，否则 GPU 利用率将极低。
# 这句话在运维一线的含义是：没有调度器时，大家在群里「抢卡」，用 `CUDA_VISIBLE_DEVICES` 手工分卡；
# 跑完的人忘了释放，大作业永远凑不齐整机，小作业把每台机器都占掉一两张卡——卡总数足够，却哪个大任务都起不来。
#
# 调度器要回答的是三个问题：
#
# 1. **谁先跑**（排序）：先来先服务、按优先级、按各团队的历史用量（fair-share）；
# 2. **跑在哪**（放置）：GPU 是节点内的资源，8 卡训练作业必须拿到同一台机器的 8 张卡（NVLink 域），
#    64 卡作业要拿到 8 台整机；放置不当就产生**碎片**——空闲的卡散落在各台机器上，整机作业用不了；
# 3. **谁不许碰谁**（隔离）：配额、分区、cgroup 把团队和作业隔开，一个团队的失控脚本不能把别人的推理服务挤掉。
#
# 种子课程 003 的场景三正是本章的主角：**科研机构混合负载集群，64~128 张 GPU，同时运行训练与推理任务；
# 核心挑战是资源隔离与优先级调度，避免推理任务被训练任务饿死；解决方案是 Slurm 的 QOS 配合 cgroup 隔离，
# 或 K8s 的 Namespace + ResourceQuota。** 本章把这个场景做成一个可以拖动的模拟器，用算出来的数字说明每种方案的得失。
#
# ## 2. 两套调度器的概念对照
#
# HPC 世界的 Slurm 和云原生世界的 Kubernetes 用不同的词描述同一组问题。下表是本章的「词典」：
#
# | 问题 | Slurm | Kubernetes | 说明 |
# |---|---|---|---|
# | GPU 怎么被看见 | GRES：`slurm.conf` 里 `GresTypes=gpu`、`NodeName=... Gres=gpu:8`，`gres.conf` 列出设备文件 | NVIDIA device plugin 把节点的 GPU 注册为扩展资源 `nvidia.com/gpu` | 都是整卡计数；MIG 切片在两边都表现为另一种资源类型 |
# | 作业要几张卡 | `sbatch --gres=gpu:8` 或 `--gpus-per-node=8` | Pod 的 `resources.limits: nvidia.com/gpu: 1` | K8s 的 GPU 必须写 limits；只写 limits 时 requests 取同值，也可以两者都写但必须相等（不能只写 requests），所以不能超卖 |
# | 资源池 | partition（分区），一组节点 + 时间上限等限制 | node pool / 带污点（taint）的节点组 | 都可以「给推理专门划一块」 |
# | 优先级 | QOS 的 Priority、multifactor 优先级 | PriorityClass 的 value | 都支持高优先级抢占低优先级 |
# | 抢占 | `PreemptType=preempt/qos`，`PreemptMode=REQUEUE` 等 | 调度器默认按 PriorityClass 抢占（驱逐）低优先级 Pod | 被抢占的训练作业要能从检查点恢复（第 17 章） |
# | 团队配额 | QOS/association 上的 `GrpTRES=gres/gpu=16`、`MaxTRESPerUser` | Namespace + ResourceQuota：`requests.nvidia.com/gpu: 16` | K8s 超配额的请求在准入阶段被拒绝（HTTP 403） |
# | 按历史用量排队 | fair-share 因子（经典算法 $F=2^{-U/S}$，现默认 Fair Tree） | 原生没有；Kueue、Volcano 等批调度插件提供 | 长期公平 vs 短期响应 |
# | 填补空洞 | `SchedulerType=sched/backfill`（EASY 式回填） | 原生没有；Volcano/Kueue 提供部分能力 | 回填需要作业时间上限（`--time`） |
# | 隔离执行 | cgroup（`TaskPlugin=task/cgroup`、`ConstrainDevices=yes`） | 容器 + cgroup，device plugin 只把分到的卡挂进容器 | 防止作业「偷用」没分给它的卡 |
#
# 一个经验：大规模训练作业（需要 gang 调度、整机、长时间运行、故障后重排）在 Slurm 上最顺手；
# 在线推理服务（需要弹性伸缩、滚动升级、服务发现）在 K8s 上最顺手。混合集群两者都有，
# 有的机构用两套调度器各管一批节点，有的在一套调度器里用 QOS/PriorityClass 区分——本章的模拟器帮你比较后者的策略。
#
# ## 3. 模型：一个离散事件的集群调度模拟器
#
# `labutil.scheduling.simulate` 是一个确定性的离散事件模拟：事件只有「作业到达」和「作业结束」，
# 每个事件之后调度器按策略扫描一遍队列。集群由 8 卡节点组成（DGX/HGX H100 类服务器），放置规则与 Slurm 的
# `select/cons_tres` + GRES 一致：不超过 8 卡的作业放在一台机器上（best fit：选剩余卡最少但放得下的那台），
# 多于 8 卡的作业必须是 8 的倍数、占整机。
#
# **负载**由 `generate_workload` 按固定种子生成：训练作业 8~64 卡、中位时长 4 h；推理作业 1~8 卡、中位 15 min；
# 交互作业 1~2 卡、中位 30 min（这些分布是本课程的示意性假设，不是某个集群的实测）。到达过程是泊松过程，
# 时间轴被缩放到让**提交负载**恰好等于指定值：
#
# $$
# \rho = \frac{\sum_j g_j\, r_j}{N_{\text{GPU}}\cdot T},
# $$
#
# 其中 $g_j$ 是作业 $j$ 的卡数，$r_j$ 是运行时间，$T$ 是最后一个作业的到达时刻。$\rho<1$ 时一个理想调度器能把队列清空；
# $\rho$ 越接近 1，排队越长——这是排队论的基本结论，与策略无关。策略决定的是：**谁**在排队，以及排队时卡是不是空着。
# **GPU 利用率**定义为
#
# $$
# U = \frac{\sum_j g_j\, r_j}{N_{\text{GPU}}\cdot(t_{\text{最后结束}}-t_{\text{首次到达}})}.
# $$
#
# 四类策略（下面第 5 节的表里是它们组合出的六种配置）：
#
# - **FIFO**：严格按到达顺序，队首放不下，后面的作业全部等待（Slurm `sched/builtin` 在一个分区内就是这样：
#   「一旦分区里有作业被挂起，该分区的其他作业都不再调度」）。
# - **EASY backfill**（Lifka 1995；Mu'alem & Feitelson 2001）：队首作业放不下时，根据正在运行作业的结束时间算出它最早能开始的时刻
#   ——**影子时间** $t_s$——并为它预留。后面的作业 $j$ 只要满足下面任一条件就可以「插队」立即开始：
#   $$ t + r_j \le t_s \quad\text{或}\quad \text{它用的卡在 } t_s \text{ 时刻不被队首需要}. $$
#   这保证队首作业的开始时间**绝不被推迟**（测试 `test_easy_backfill_never_delays_the_head_reservation` 在随机负载上验证这一性质）。
#   回填依赖作业的时间上限，Slurm 里就是 `--time`；本模型假设用户估计准确。
# - **QOS 优先级**：按 QOS 优先级（推理 > 交互 > 训练）再按到达顺序排，可选叠加回填，或叠加**抢占**：
#   高优先级作业放不下时，把低优先级作业重新排队（Slurm `PreemptMode=REQUEUE`，被抢占者从检查点续跑，再加一段重启开销）。
# - **fair-share**：按账户（namespace）的经典公平分享因子排序：
#   $$ F = 2^{-U/S}, $$
#   $U$ 是该账户占全集群（按半衰期衰减后）用量的比例，$S$ 是它的归一化份额。没用过卡的账户 $F=1$，正好用满份额时 $F=0.5$，
#   用了两倍份额时 $F=0.25$。Slurm 的衰减半衰期 `PriorityDecayHalfLife` 默认 7 天。
#
# 隔离有两种：`quotas={"training": 32}` 按 K8s ResourceQuota 的语义限制一个 namespace 同时占用的卡数
# （单个请求就超配额的作业被拒绝；会让总量超配额的作业保持 pending，但不挡其他 namespace）；
# `inference_nodes=k` 把 k 台机器划成推理专用分区。
#
# 先看公平分享因子的形状：

# %%
scheduling_x.fairshare_figure()

# %% [markdown]
# ## 4. 一个能手算的例子：EASY backfill 到底回填了什么
#
# 五个作业、两台 8 卡机器（16 卡）。job 0 是 8 卡训练（1 h）；job 1 在 1 min 后提交，要 16 卡（30 min）；
# job 2 是 4 卡推理（40 min），job 3 是 4 卡训练（90 min），job 4 是 2 卡交互（10 min），依次每分钟提交一个。
# FIFO 下 job 1 要等 job 0 结束（1.0 h）才凑齐 16 卡，它后面的三个作业全部干等，尽管另一台机器整整空了一个小时。
# EASY 给 job 1 在 1.0 h 预留整集群，然后检查后面的作业：job 2 和 job 4 能在 1.0 h 前结束，立即回填；
# job 3 要跑 90 min，会占用 job 1 需要的卡，不能回填。

# %%
scheduling_x.backfill_gantt_figure()

# %%
# NBVAL_CHECK_OUTPUT
wl_bf = S.backfill_example()
for pol in ("fifo", "backfill"):
    sc = S.simulate(wl_bf, 16, pol)
    waits = ", ".join(f"{w / 60:.0f}" for w in sc.wait_s)
    print(f"{pol:8s} start of job 1: {sc.start_s[1] / 60:4.0f} min | waits (min): {waits} | sum {sc.wait_s.sum() / 60:.0f} min")

# %% [markdown]
# 回填把五个作业的总等待从 320 min 降到 146 min，推理作业 job 2 从等 88 min 变成立即开始，
# 而 job 1 的开始时间一分钟都没被推迟。注意两种策略的完工时间（makespan）都是 3.0 h——被 90 min 的 job 3 决定；
# 回填的收益体现在等待时间和「有作业排队时卡却闲着」的时间上。
#
# ### 4.1 回填只和用户写的时间上限一样准
#
# 上面的手算有一个前提：调度器知道每个作业要跑多久。真实的 Slurm 并不知道，它用的是提交时的 `--time`（不写就取分区的 `DefaultTime`，
# 再没有就取 `MaxTime`）。回填判断「这个作业能不能在影子时间之前结束」，看的是这个上限而不是实际运行时间。
# Mu'alem 与 Feitelson（2001）分析真实作业日志时就发现，用户给出的运行时间估计普遍很不准，很多人干脆填最大值；
# 在 GPU 集群里这很常见——没人愿意让跑了 39 小时的训练因为超时被杀。把上例中 40 分钟的推理作业 job 2 改成填分区上限 7 天：

# %%
# NBVAL_CHECK_OUTPUT
declared_s = wl_bf.runtime_s.copy()
declared_s[2] = 7 * 86400          # job 2 submitted with --time=7-00:00:00 (the partition MaxTime)
wl_lazy = S.make_workload(wl_bf.arrival_s, declared_s, wl_bf.gpus, wl_bf.job_class, wl_bf.priority, wl_bf.namespace)
for label, wl in (("--time=40 min", wl_bf), ("--time=7 days", wl_lazy)):
    sc = S.simulate(wl, 16, "backfill")
    print(f"job 2 {label:<13s}: starts at {sc.start_s[2] / 60:3.0f} min, waits {sc.wait_s[2] / 60:3.0f} min")

# %% [markdown]
# 同一个 40 分钟的作业，写准了时间就立即回填，写成 7 天就要等 88 分钟——和 FIFO 下完全一样，回填对它失效了。运维上的对策有三条：
# 分区设置合理的 `DefaultTime`（比 `MaxTime` 短得多），让不写 `--time` 的作业默认拿短上限；用 QOS 给短作业更高的优先级，鼓励用户写准；
# 定期用 `sacct` 对比 `Timelimit` 与 `Elapsed`，把长期高估的账户找出来。调度器的「聪明」建立在用户输入的诚实之上。
#
# ## 5. 场景三：128 张 GPU 上的混合负载
#
# 现在把规模放大到种子场景的上限：128 张 GPU（16 台 8 卡机器，例如 DGX H100），1,000 个作业，提交负载 90%，
# 作业数里 30% 是推理。先看这批作业的构成：

# %%
# NBVAL_CHECK_OUTPUT
dgx = hardware.server("DGX-H100")
wl = S.generate_workload(1000, 128, load=0.9, inference_share=0.3, seed=0)
print(f"cluster: {128 // dgx.gpus} x {dgx.name} ({dgx.gpus} x {dgx.gpu}) = 128 GPUs")
for name in S.CLASSES:
    m = wl.class_mask(name)
    share = (wl.gpus * wl.runtime_s)[m].sum() / wl.gpu_seconds()
    print(f"{name:11s} jobs {m.sum():4d} ({m.mean():5.1%} of jobs)  GPU-hours {share:6.2%} of the total")
print(f"total {wl.gpu_seconds() / 3600:,.0f} GPU-hours submitted over {wl.arrival_s.max() / 86400:.1f} days")

# %% [markdown]
# 这张表是理解「饿死」的关键：推理作业占作业**数**的三成，却只占 GPU **时间**的 0.4%。
# 让它们排在大训练作业后面，训练几乎得不到任何好处，推理却要等上几十个小时。下一格用同一批作业跑六种策略：

# %%
# NBVAL_CHECK_OUTPUT
res = S.compare_policies(wl, 128)
print(f"{'policy':18s} {'util':>6s} {'inf P50':>8s} {'inf P95':>8s} {'inf max':>8s} {'train P50':>9s} {'idle|wait':>9s} {'preempt':>7s}")
for p, r in res.items():
    print(f"{p:18s} {r['utilisation']:6.1%} {r['inference_p50_s'] / 3600:7.2f}h {r['inference_p95_s'] / 3600:7.2f}h "
          f"{r['starvation_s'] / 3600:7.1f}h {r['training_p50_s'] / 3600:8.2f}h {r['idle_while_waiting']:9.1%} {r['preemptions']:7d}")

# %% [markdown]
# 读这张表的几个要点（`idle|wait` 是「有作业在排队时 GPU 却空着」的时间占比）：
#
# - **FIFO**：推理 P95 等待约 61 h，最长的推理作业等了 68 h——这就是「推理被训练饿死」。同时 11% 的 GPU 时间在有人排队时空着：
#   队首的 64 卡作业在等整机，后面的小作业明明放得下却不准动。
# - **backfill**：利用率从 81.6% 升到 86.1%，空等时间降到 2.7%，训练 P50 等待从 21.6 h 降到 8.5 h——回填对所有人都好；
#   但它不区分作业类别，推理 P95 仍有 13 h。
# - **priority**（QOS，不回填、不抢占）：推理 P95 降到 2 h，但利用率和训练等待和 FIFO 一样差。
# - **priority_preempt**：推理零等待，代价是训练作业被抢占后重新排队，训练 P50 等待升到 22.8 h。
# - **priority_backfill / fairshare**：兼顾利用率和推理等待，这是多数 Slurm 站点的实际配置（multifactor 优先级 + backfill）。
#   这里 fair-share 和 QOS 排序结果接近，因为推理账户用量极小，公平因子天然最高。
#
# 把上表画出来：

# %%
scheduling_x.policy_comparison_figure()

# %% [markdown]
# 利用率 4.5 个百分点听起来不多，折算成卡数就清楚了：128 张卡上，backfill 相对 FIFO 相当于白得了约 5.7 张「永远满载」的 H100。

# %%
# NBVAL_CHECK_OUTPUT
gain = (res["backfill"]["utilisation"] - res["fifo"]["utilisation"]) * 128
print(f"backfill vs fifo: +{gain:.1f} fully busy GPUs out of 128")

# %% [markdown]
# ## 6. 探索器：自己调策略、推理占比、负载和配额
#
# 下面是一个 64 卡（8 台机器）、160 个作业的小集群。上图每一行是一张 GPU，颜色是占用它的作业类别（灰色 = 空闲），
# 下图是每类作业的 P50/P95 等待。建议的实验：
#
# 1. 在 `fifo` 下把提交负载从 0.7 拖到 1.1，看排队怎样随负载非线性增长；
# 2. 切换到 `priority_preempt`，看推理的 P95 归零、训练的等待变长；
# 3. 回到 `fifo`，把「训练 namespace 配额」从 64 降到 32：训练最多只能占一半的卡，推理等待下降，但图上出现大片灰色——
#    推理用不满的卡，训练也不许用。这就是 ResourceQuota 的代价：它是**硬上限**，不会把闲置配额借给别人。

# %%
explorer = scheduling_x.scheduling_explorer()
explorer

# %% [markdown]
# ## 7. 实操命令
#
# 以下输出样例均为**示意数据**（数值为本课程编写），格式按各工具的默认输出：`squeue`、`sinfo` 的列取自 squeue(1)、sinfo(1)
# 手册页中的默认格式，`kubectl describe quota` 取自 kubectl 的 describe 打印格式。解析器在 `labutil.scheduling` 中，
# 输入格式不对时抛出 `SchedParseError`（一个 `ValueError`）并说明缺了什么。
#
# ### 7.1 Slurm：让调度器看见 GPU（GRES）
#
# ```ini
# # /etc/slurm/slurm.conf（节选）
# GresTypes=gpu
# SelectType=select/cons_tres
# SchedulerType=sched/backfill
# PriorityType=priority/multifactor
# PriorityDecayHalfLife=7-0
# PriorityWeightQOS=10000          # 各权重默认都是 0：不写，QOS 和 fair-share 对排序毫无作用
# PriorityWeightFairshare=5000
# PriorityWeightAge=1000
# AccountingStorageType=accounting_storage/slurmdbd
# AccountingStorageTRES=gres/gpu   # GPU 要登记为 TRES，才能被计量、被 GrpTRES 限额
# AccountingStorageEnforce=associations,limits,qos
# PreemptType=preempt/qos
# PreemptMode=REQUEUE
# TaskPlugin=task/cgroup,task/affinity
# NodeName=gpu[001-016] CPUs=112 RealMemory=2000000 Gres=gpu:h100:8 State=UNKNOWN
# PartitionName=gpu   Nodes=gpu[001-016] Default=YES MaxTime=7-00:00:00 State=UP
# PartitionName=infer Nodes=gpu[015-016] MaxTime=1-00:00:00 State=UP
#
# # /etc/slurm/gres.conf
# NodeName=gpu[001-016] Name=gpu Type=h100 File=/dev/nvidia[0-7]
# # 或者让 slurmd 通过 NVML 自动发现：AutoDetect=nvml
#
# # /etc/slurm/cgroup.conf
# ConstrainDevices=yes      # 作业只能看见分给它的 /dev/nvidiaN
# ```
#
# ### 7.2 QOS、提交与查看
#
# ```bash
# sacctmgr add qos high Priority=1000 Preempt=normal PreemptMode=requeue
# sacctmgr modify qos normal set GrpTRES=gres/gpu=96          # 训练 QOS 最多同时占 96 卡
# sacctmgr modify user alice set qos+=high
# sbatch --gres=gpu:8 --qos=high --time=00:30:00 serve_eval.sh
# sbatch -N 8 --gres=gpu:8 --qos=normal --time=2-00:00:00 --requeue pretrain.sh
# squeue                                 # 队列：R = 运行，PD = 等待，最后一列是节点或等待原因
# sinfo                                  # 分区与节点状态
# scontrol show job 41990                # 单个作业的详细信息：Priority、Reason、StartTime（回填预估）
# sshare -l                              # 各账户的份额、衰减用量和 FairShare 因子
# sprio -l                               # 各作业优先级的组成（Age、FairShare、QOS…）
# ```
#
# `squeue` 的最后一列对运行作业是节点列表，对等待作业是括号里的**原因**：`Resources`（资源不够）、
# `Priority`（前面有更高优先级的作业）、`QOSMaxGRESPerUser`（撞上 QOS 限额）——排障时先看这一列。
#
# 上面 `slurm.conf` 里中间那六行最容易漏，漏了也**不报错**，只是什么都不发生（slurm.conf(5)、Slurm TRES 文档）：
#
# - multifactor 的各项权重 `PriorityWeightQOS`、`PriorityWeightFairshare`、`PriorityWeightAge` 默认都是 0。不写它们，
#   `sacctmgr` 里给 QOS 设的 `Priority=1000` 乘上 0，推理 QOS 和训练 QOS 排在一起；fair-share 因子也一样，而且它和 Age 还要求记账走 slurmdbd。
# - `GrpTRES=gres/gpu=96` 限的是 TRES；GPU 只有列在 `AccountingStorageTRES` 里才是被跟踪的 TRES，QOS 限额也只有在
#   `AccountingStorageEnforce` 含 `limits`/`qos` 时才执行。少了其中一行，训练 QOS 照样能占满 128 张卡。
#
# 验收办法是提交一个违反限额的作业，确认它停在 `QOSGrpGRES` 之类的原因上；再用 `sprio -l` 看 QOS 一栏是不是非零。
#
# 抢占时被踢下来的训练作业怎么保存进度？给训练 QOS 设宽限期（`sacctmgr modify qos normal set GraceTime=300`，单位秒）：
# 作业被选中抢占时先收到 SIGTERM，5 分钟后才被杀，这段时间足够写一次异步检查点（第 17 章）；K8s 里对应 Pod 的
# `terminationGracePeriodSeconds`。
#
# ### 7.3 放在哪：拓扑感知调度
#
# 第 3 节的模拟器只管「凑齐 8 的倍数张卡」，真实集群还要管这些卡在网络上离得多远：一个 64 节点的作业如果横跨三个叶交换机，
# all-reduce 就要穿过 spine，第 12、14 章的收敛比就开始起作用。Slurm 用 `TopologyPlugin=topology/tree` 加一份 `topology.conf`
# 描述交换机层级，调度器会优先把作业放进同一个叶交换机；作业还可以用 `--switches` 要求「最多跨几个交换机、最多为此多等多久」。
# Slurm 23.11 又加了 `topology/block`：按「块」（例如一个 NVL72 机柜的 NVLink 域）放置作业，优先减少集群碎片、让作业落在低延迟的块里：
#
# ```ini
# # /etc/slurm/topology.conf（topology/tree；节点名与交换机名示意）
# SwitchName=leaf01 Nodes=gpu[001-032]
# SwitchName=leaf02 Nodes=gpu[033-064]
# SwitchName=spine  Switches=leaf[01-02]
# ```
#
# ```bash
# sbatch -N 32 --gres=gpu:8 --switches=1@02:00:00 pretrain.sh   # 只要一个叶交换机下的 32 台，最多为此多等 2 小时
# ```

# %%
# NBVAL_CHECK_OUTPUT
jobs = S.parse_squeue(S.SAMPLE_SQUEUE)
for j in jobs:
    where = j.nodelist if not j.pending else f"pending: {j.reason}"
    print(f"{j.job_id:>6s} {j.name:9s} {j.state:2s} {j.time_s / 3600:6.2f} h {j.nodes:2d} nodes  {where}")
rows = S.parse_sinfo(S.SAMPLE_SINFO)
print("gpu partition node states:", S.sinfo_node_states(rows, "gpu"))

# %% [markdown]
# `scontrol show job` 的输出是一长串 `Key=Value`，调度相关的字段有 `Priority=`、`QOS=`、`Reason=`、
# `StartTime=`（对等待中的作业，backfill 调度器会写入预计开始时间——就是本章模型里的影子时间）和 `TresPerNode=gres/gpu:8`。
#
# ### 7.4 Kubernetes：device plugin、ResourceQuota、PriorityClass
#
# 推理团队的 Namespace、它的 GPU 配额、一个可以抢占训练的 PriorityClass，以及一个按这个优先级运行的 1 卡推理 Pod。
# 清单由 `labutil.manifests` 生成，课程测试用 `kubernetes-validate --strict`（离线、自带 Kubernetes 各版本的 API schema）在 1.30 和 1.37 上校验过：
# 扩展资源的配额只能写成 `requests.nvidia.com/gpu`；GPU 写在 `limits` 里（requests 省略时取同值）。

# %%
print(manifests.to_yaml(manifests.chapter_manifests()["ch21-quota-priority.yaml"]))

# %% [markdown]
# 把上面的输出存成 `quota-infer.yaml`，提交前先离线校验、再在集群上试运行：
#
# ```bash
# kubernetes-validate --strict quota-infer.yaml        # pip install kubernetes-validate；INFO ... passed
# kubectl apply --dry-run=server -f quota-infer.yaml   # API server 的完整检查，不真正创建
# kubectl apply -f quota-infer.yaml
# kubectl describe quota -n team-infer
# kubectl get nodes -o custom-columns=NAME:.metadata.name,GPU:.status.allocatable.nvidia\.com/gpu
# ```

# %%
# NBVAL_CHECK_OUTPUT
q = S.parse_kubectl_quota(S.SAMPLE_KUBECTL_QUOTA)[0]
used, hard = q.gpu()
print(f"namespace {q.namespace}: {used}/{hard} GPUs requested -> {hard - used} more 1-GPU pods admitted, "
      f"the next one gets 403 exceeded quota")

# %% [markdown]
# 注意 ResourceQuota 与 Slurm 排队的一个本质区别：K8s 在**准入**阶段检查配额，超配额的 Pod 创建请求直接被拒绝，
# 它不会进入调度队列「等一等」；Deployment/Job 控制器会不断重试创建。想要「超配额就排队」的语义，要用 Kueue 这类批调度组件。
#
# ### 7.5 Kueue：配额之内排队，而不是拒绝
#
# Kueue（kubernetes-sigs/kueue）把第 3 节模拟器里的「队列」带进 Kubernetes：管理员用 `ResourceFlavor` 描述一类节点（这里按 GPU Feature Discovery
# 打的 `nvidia.com/gpu.product` 标签选 H100），用 `ClusterQueue` 给它一个名义配额（96 张卡，相当于 Slurm 的 `GrpTRES=gres/gpu=96`），
# 团队在自己的 Namespace 里建一个指向它的 `LocalQueue`；作业只要打上 `kueue.x-k8s.io/queue-name` 标签并以挂起（`suspend: true`）状态提交，
# Kueue 在配额够**所有** Pod 同时运行时才放行——这正是多机训练需要的「成组准入」（gang admission），超出配额的作业在队列里等，而不是被 403 拒绝。
# `preemption.withinClusterQueue: LowerPriority` 让队列里高优先级的作业可以抢占低优先级的，对应第 3 节的 `priority_preempt`。
# 下面的 Kueue 对象（API 版本 `kueue.x-k8s.io/v1beta2`）由 `labutil.manifests` 生成，按 Kueue 仓库里这三个 CRD 的 schema 校验过，Job 本身用 `kubernetes-validate` 校验：

# %%
print(manifests.to_yaml(manifests.chapter_manifests()["ch21-kueue.yaml"]))

# %% [markdown]
# ```bash
# kubectl get clusterqueue training             # 已准入 / 等待中的工作负载数
# kubectl get workloads -n team-train           # 每个 Job 对应一个 Workload，Pending 时 Reason 给出缺的配额
# ```
#
# `nvidia.com/gpu` 这个资源本身是怎么来的？NVIDIA device plugin 以 DaemonSet 运行，在 `/var/lib/kubelet/device-plugins/` 下通过 gRPC
# 向 kubelet 注册，再用 `ListAndWatch` 持续上报本机每张 GPU 的 ID 和健康状态；kubelet 把健康的设备数写进节点的 `allocatable`。
# Kubernetes 文档写明这类扩展资源**只能是整数、不能超卖、不能在容器之间共享**——所以「半张卡」要靠第 29 章的 MIG 或时间片，
# 而不是写 `0.5`。运维上要记住的是反方向：一张卡被 device plugin 标成 Unhealthy（NVIDIA 的插件会监听严重的 XID 事件）后，
# 节点的 allocatable 会从 8 变成 7，新 Pod 不再分到它，但**已经在用它的 Pod 不会被自动迁走**，要靠第 23 章的健康检查与第 27 章的排空流程处理。
# 要求 8 卡的训练 Pod 从此再也调度不到这台机器上——监控里表现为一台 GPU 利用率为 0 的「健康」节点。
#
# device plugin 只能上报「几张一样的卡」，表达不了「要两张在同一个 NVLink 域里的卡」或「要一块至少 40 GB 显存的 MIG 实例」。
# Kubernetes 的动态资源分配（DRA，Dynamic Resource Allocation）是它的后继：驱动发布带属性的设备列表（ResourceSlice），
# 工作负载用 ResourceClaim 加 CEL 表达式按属性挑设备，同一个 claim 还可以被多个容器共享。DRA 在 Kubernetes 文档里已是 stable，
# NVIDIA 也提供了 GPU 的 DRA 驱动（k8s-dra-driver-gpu）；本章的 `nvidia.com/gpu` 整数资源在现有集群里仍是主流，但新建平台值得评估 DRA。
#
# ## 8. 常见误区
#
# ### 误区一：「FIFO 最公平」
#
# 先来先服务看起来一视同仁，但「公平」要看每类用户付出的代价。用第 5 节的 128 卡模拟：

# %%
# NBVAL_CHECK_OUTPUT
f, p = res["fifo"], res["priority_backfill"]
print(f"inference P95 wait: fifo {f['inference_p95_s'] / 3600:.1f} h vs priority_backfill {p['inference_p95_s'] / 3600:.1f} h")
print(f"training  P50 wait: fifo {f['training_p50_s'] / 3600:.1f} h vs priority_backfill {p['training_p50_s'] / 3600:.1f} h")
print(f"utilisation:        fifo {f['utilisation']:.1%} vs priority_backfill {p['utilisation']:.1%}")

# %% [markdown]
# FIFO 让一个 15 分钟的推理作业排在 64 卡、十几个小时的训练后面：推理 P95 等待 61.5 h。
# QOS 优先级 + 回填把它降到 3.8 h，**同时**训练的中位等待也从 21.6 h 降到 7.8 h、利用率从 81.6% 升到 85.8%——
# 没有任何一类用户因为放弃 FIFO 而变差。FIFO 只是「简单」，不是「公平」。
#
# ### 误区二：「给推理预留整台机器，饿死问题就解决了」
#
# 预留确实能让推理零等待。但推理只占 GPU 时间的 0.4%，预留的机器大部分时间空着，训练却少了这些卡。
# 600 个作业、128 卡、负载 85%，比较预留 0~4 台机器（FIFO + backfill）和「不预留、QOS 优先级 + 回填」：

# %%
# NBVAL_CHECK_OUTPUT
pt = S.partition_tradeoff(n_gpus=128, n_jobs=600)
for k, r in zip(pt["k"], pt["rows"]):
    print(f"{k} inference nodes: utilisation {r['utilisation']:.1%}, inference P95 {r['inference_p95_s'] / 60:6.1f} min, "
          f"training P50 {r['training_p50_s'] / 3600:5.1f} h")
sp = pt["shared_priority"]
print(f"shared + QOS priority: utilisation {sp['utilisation']:.1%}, inference P95 {sp['inference_p95_s'] / 60:6.1f} min, "
      f"training P50 {sp['training_p50_s'] / 3600:5.1f} h")

# %%
scheduling_x.partition_tradeoff_figure(n_gpus=128, n_jobs=600)

# %% [markdown]
# 预留 1 台机器（8 卡）已经让推理零等待；再多预留只是在浪费：预留 4 台时利用率从 78.0% 跌到 67.8%，
# 训练中位等待从 3.7 h 涨到 44 h。共享池 + QOS 优先级不需要预留任何卡，利用率保持 78.0%，推理 P95 约 3 h；
# 如果推理有严格的延迟要求，正确的做法是**小规模预留 + 抢占**，而不是按峰值划整块分区。
#
# ### 误区三：「配额设得越严，推理越安全」
#
# ResourceQuota 是硬上限：训练 namespace 被限到 32 卡时，即使集群空着一半，训练作业也不能多用一张卡。
# 用探索器里的 64 卡集群算一下：

# %%
# NBVAL_CHECK_OUTPUT
for quota in (64, 48, 32):
    r = S.mixed_cluster_schedule("fifo", 0.3, 0.9, quota)["summary"]
    print(f"training quota {quota:2d} GPUs: utilisation {r['utilisation']:.1%}, inference P95 {r['inference_p95_s'] / 3600:5.1f} h, "
          f"training P95 {r['training_p95_s'] / 3600:5.1f} h, all jobs done after {r['makespan_s'] / 86400:4.1f} days")

# %% [markdown]
# 配额降到 48 卡，推理的 P95 等待从 40 h 降到 0——但利用率从 82.5% 掉到 66.3%，训练 P95 等待翻倍；降到 32 卡时，
# 同一批作业要 13.8 天才跑完（不设配额时 8.0 天），利用率只剩 47.7%，训练 P95 等待 169 h。空出来的卡推理用不完，训练又不许用。
# 配额适合做「团队之间不许超用」的治理，不适合当作优先级调度的替代品；要保护推理，用 QOS/PriorityClass 的优先级与抢占。
#
# ## 9. 练习
#
# 把答案填进 `answer_k`（数字即可，单位见题目），运行单元格查看判分；卡住时调用 `exercise("ch21.k").hint(1)`。
#
# **练习 1**：某账户的归一化份额是 25%，它占了全集群衰减后用量的 50%。它的经典 fair-share 因子 $F$ 是多少？（$F$ 是 `sshare` 显示的 0–1 之间的因子，不是百分数——这是课程百分数约定唯一的例外）

# %%
answer_1 = None
exercise("ch21.1").check(answer_1)

# %% [markdown]
# **练习 2**：第 4 节的五个作业（`S.backfill_example()`，16 卡），EASY backfill 比 FIFO 让所有作业的**等待时间之和**少了多少分钟？

# %%
answer_2 = None
exercise("ch21.2").check(answer_2)

# %% [markdown]
# **练习 3**：第 5 节的 128 卡负载（种子 0、负载 0.9、推理占比 0.3），FIFO 下推理 P95 等待是 `priority`（只按 QOS 排序、不回填）下的多少倍？

# %%
answer_3 = None
exercise("ch21.3").check(answer_3)

# %% [markdown]
# **练习 4**：解析 `S.SAMPLE_KUBECTL_QUOTA`，namespace team-infer 还能再创建几个 1 卡的 Pod？

# %%
answer_4 = None
exercise("ch21.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：练习 3 的负载（1,000 个作业、128 卡、种子 0、负载 0.9、推理占比 0.3），'fifo'、'backfill'、'priority' 哪种策略让推理作业的 P95 等待最短？

# %%
answer_5 = None  # 'fifo' / 'backfill' / 'priority'
exercise("ch21.5").check(answer_5)

# %% [markdown]
# ## 10. 小结
#
# - 调度器回答三个问题：谁先跑（排序）、跑在哪（放置与碎片）、谁不许碰谁（隔离）；没有它，GPU 利用率会很低。
# - Slurm 的 GRES / partition / QOS / fair-share / backfill 与 K8s 的 device plugin / node pool / PriorityClass / ResourceQuota 一一对应。
# - EASY backfill 在不推迟队首预留的前提下填补空洞，提高利用率、降低所有类别的等待；它需要作业写准 `--time`。
# - 推理作业数量多、GPU 时间少，让它们排在训练后面几乎不换来任何东西：用 QOS 优先级（必要时抢占）保护它们，
#   小规模预留优于按峰值划分区；配额是治理工具，不是优先级工具。
#
# 下一章用 nccl-tests 验收网络带宽，那些验收作业正是通过本章的 `sbatch`/`srun` 提交的。
#
# ## 参考资料
#
# - 课程种子材料：《大规模GPU集群部署核心概念速览》（资源管理协同：任务排队、故障转移、资源隔离）；《AI训练推理集群》课程导入，场景三：科研机构混合负载集群。
# - D. Lifka, *The ANL/IBM SP Scheduling System*, JSSPP 1995（EASY backfilling）。
# - A. W. Mu'alem, D. G. Feitelson, *Utilization, Predictability, Workloads, and User Runtime Estimates in Scheduling the IBM SP2 with Backfilling*, IEEE TPDS 12(6), 2001。
# - SchedMD, Slurm 文档：*Classic Fairshare Algorithm*（$F=2^{-U/S}$）；*Scheduling Configuration Guide*（sched/builtin 与 sched/backfill，分区内严格优先级）；*Preemption*；*Generic Resource (GRES) Scheduling*；slurm.conf(5)（`PriorityDecayHalfLife` 默认 7-0）；squeue(1)、sinfo(1) 默认输出格式。
# - Kubernetes 文档：*Resource Quotas*（扩展资源配额 `requests.nvidia.com/gpu`，超配额返回 403 Forbidden）；*Schedule GPUs*（GPU 必须在 limits 中指定；requests 可以省略，也可以写但必须等于 limits）；*Pod Priority and Preemption*（PriorityClass）。
# - Kubernetes 文档：*Device Plugins*（kubelet Registration gRPC 服务、`/var/lib/kubelet/device-plugins/`、`ListAndWatch` 上报设备与健康状态；扩展资源只能是整数、不能超卖、不能在容器间共享）。
# - SchedMD, slurm.conf(5)：分区的 `DefaultTime` 与 `MaxTime`；sbatch(1) `--time`；sacct(1) `Timelimit`、`Elapsed` 字段。
# - NVIDIA k8s-device-plugin（`nvidia.com/gpu` 扩展资源；基于 NVML 事件的 XID 健康检查，`DP_DISABLE_HEALTHCHECKS`）；NVIDIA DGX H100 数据手册（8 × H100 SXM，课程目录 `labutil/data`）。
# - Kueue 文档（kubernetes-sigs/kueue）：*Administer Cluster Quotas*（ResourceFlavor、ClusterQueue、LocalQueue）、*Run a Job*（`kueue.x-k8s.io/queue-name` 标签、挂起提交）；CRD schema 取自仓库 commit ff69552e79ad（2026-08-22，API `kueue.x-k8s.io/v1beta2`），原样附于 `labutil/data/crds/`。
# - kubernetes-validate（PyPI，1.37；自带 Kubernetes API schema）：本章清单在 Kubernetes 1.30 与 1.37 上以 `--strict` 离线校验（`tests/test_k8s_manifests.py`）。
