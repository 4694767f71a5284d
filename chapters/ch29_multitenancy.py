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
# # 第29章 多租户、安全与隔离
#
# > 模块六「运维、推理与可靠性」的第 29 章。前置：第 21 章（调度：QOS、配额、抢占）、第 25 章（推理集群：P99 与排队模型）。
# > 本章回答一个运维团队每天都会遇到的问题：**很多团队、很多服务共用一套集群时，怎样既把卡用满，又不让彼此互相伤害？**
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 区分四层隔离：调度层（Slurm QOS、K8s Namespace + ResourceQuota）、节点层（cgroup 设备隔离）、GPU 层（时间片、MPS、MIG）、网络层（NetworkPolicy、InfiniBand PKey），说清每一层隔离什么、不隔离什么；
# - 按 MIG 的 7 个计算切片 / 8 个显存切片和 `-lgipp` 摆放规则，判断一组 MIG 实例能否放进一张 A100/H100，并写出 `nvidia-smi mig -cgi` 命令；
# - 用排队模型比较「独占 / 时间片 / MPS / MIG」四种共享方式下 N 个小模型所需的 GPU 数和每个租户的 P99；
# - 用算出来的数字解释「吵闹邻居」：为什么时间片共享下一个租户的尾延迟取决于别人的负载；
# - 写出多租户集群的访问控制与网络隔离配置：RBAC RoleBinding、Pod 安全准入、NetworkPolicy、IB 分区、Slurm 的 `pam_slurm_adopt`，
#   并判断什么时候容器已经不够、要换成虚拟机边界。

# %%
from labutil.notebook import setup, show_table
from labutil import sharing, scheduling, hardware, inference, manifests
from labutil.explore import overview as overview_x
from labutil.explore import sharing as sharing_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# 本章在课程地图中的位置（加粗）：

# %%
overview_x.course_map_figure(highlight_chapter=29)

# %% [markdown]
# ## 1. 为什么多租户是 GPU 集群的常态
#
# 种子课程里的「科研机构混合负载集群」（64–128 张 GPU，同时跑训练与推理）把核心挑战说得很直白：**资源隔离与优先级调度，避免推理任务被训练任务饿死**；
# 给出的解法是 **Slurm 的 QOS 配合 cgroup 隔离，或 K8s 的 Namespace + ResourceQuota**。另一份种子材料列出了两类典型负载：
# 推荐系统在线推理（数十到上百卡，延迟敏感、负载动态）需要 **GPU 共享**；自动驾驶仿真（百卡级、多任务并行）需要 **GPU 虚拟化与容器化调度**。
#
# 运维共享集群的团队常见的体会是：多租户问题几乎从来不是「一个机制」能解决的，它是一叠层层嵌套的隔离（下表每一层的依据见第 2–5 节与隔离矩阵的出处）。下表是本章的骨架——
# 每一层解决的问题不同，缺了任何一层，上面一层的承诺都会被绕过：
#
# | 层次 | 机制 | 解决什么 | 典型配置 |
# |---|---|---|---|
# | 调度层 | Slurm QOS / 分区 / 公平共享；K8s Namespace + ResourceQuota + PriorityClass | 谁先用、能用多少、紧急任务能否抢占 | `sacctmgr add qos`、`ResourceQuota` 的 `requests.nvidia.com/gpu` |
# | 节点层 | cgroup（devices、memory、cpuset） | 一个作业只能看到、只能用分给它的 GPU 和内存 | `cgroup.conf` 中 `ConstrainDevices=yes` |
# | GPU 层 | 时间片、MPS、MIG | 多个小任务共用一张卡 | `nvidia-smi mig -cgi`、`nvidia-cuda-mps-control -d` |
# | 网络层 | NetworkPolicy、VLAN/VRF、InfiniBand PKey | 租户之间不能互访，存储和管理网络分开 | `NetworkPolicy`、OpenSM `partitions.conf` |
# | 访问控制 | RBAC、Slurm 账户（account）、LDAP | 谁能提交、谁能看到谁的作业与数据 | `kubectl create rolebinding`、`sacctmgr add account` |
#
# 第 21 章已经用离散事件模拟算过调度层：同一个混合负载，在 FIFO 下推理作业要排很久，在 QOS 优先级加抢占下几乎不等。
# 这里用同一个模拟器（`labutil.scheduling`）在种子里的 64 卡规模上复算一次，作为本章的起点：

# %%
# NBVAL_CHECK_OUTPUT
wl = scheduling.generate_workload(400, 64, load=0.9, seed=0)
for pol in ("fifo", "priority_preempt"):
    s = scheduling.simulate(wl, 64, pol, restart_overhead_s=300).summary()
    print(f"{pol:17s} inference wait P95 {s['inference_p95_s'] / 3600:6.1f} h, training wait P50 "
          f"{s['training_p50_s'] / 3600:5.1f} h, preemptions {s['preemptions']:3d}, utilisation {s['utilisation']:.1%}")

# %% [markdown]
# FIFO 下推理作业的等待 P95 约 40 小时——对在线服务来说就是「被饿死」；QOS 优先级加抢占把它降到 0，代价是 57 次训练作业被抢占重排
# （它们靠检查点续跑，见第 17 章）。但调度层只决定**谁拿到哪几张卡**；拿到卡之后，同一张卡、同一台机器、同一张网上的租户会不会互相影响，
# 是下面几层的事。
#
# ## 2. 节点层：cgroup 让作业只看到自己的 GPU
#
# Slurm 用 `--gres=gpu:N` 分配 GPU，但如果不开设备约束，作业里的进程仍然可以打开 `/dev/nvidia*` 下的**所有**设备——
# 分配只是「记账」，不是隔离。开启方式是在 `cgroup.conf` 中设置 `ConstrainDevices=yes`（同时 `ProctrackType=proctrack/cgroup`、
# `TaskPlugin=task/cgroup,task/affinity`），Slurm 会在作业的 cgroup 里把未分配的 GPU 设备节点拒之门外；`ConstrainRAMSpace=yes`
# 和 `ConstrainCores=yes` 对主机内存和 CPU 做同样的事。Kubernetes 里对应的是 NVIDIA device plugin：容器只会被挂载分配给它的设备。
#
# 这一层隔离的是「看得见哪些卡」，对整卡分配已经足够；但一张 H100 的算力对一个 7B 以下的小模型或一个 ResNet 服务往往太多了，
# 于是有了 GPU 层的三种共享方式。
#
# ## 3. GPU 层：时间片、MPS、MIG 的原理与代价
#
# **时间片（time-slicing）**：CUDA 的默认行为——多个进程的上下文轮流占用整张 GPU。K8s device plugin 的 `timeSlicing` 配置只是把一张卡
# 「报」成多个副本（replicas）让多个 Pod 调度上来。GPU 在任一时刻只执行一个上下文，所以每个租户都要在**所有**租户的工作后面排队。
# 把它看成一个服务台、到达率为各租户之和的队列（M/D/1，服务时间取按负载加权的平均值 $\bar s$）：
#
# $$
# \lambda = \sum_j \lambda_j,\qquad \bar s = \frac{\sum_j \lambda_j s_j}{\lambda},\qquad \rho = \lambda \bar s < 1,\qquad
# T^{99}_i = W^{99}(\lambda, \bar s) + s_i
# $$
#
# 其中 $W^{99}$ 是第 25 章的 Erlang C / Allen–Cunneen 等待时间尾部。关键在于：**租户 $i$ 的尾延迟里有别人的 $\lambda_j$**。
# NVIDIA device plugin 的文档明确写着：与 MIG 不同，时间片副本之间**没有显存隔离，也没有故障隔离**。
#
# **MPS（Multi-Process Service）**：多个进程的 kernel 通过一个 MPS 服务端**同时**跑在 GPU 上（Volta 起每个客户端有独立地址空间），
# 可以用 `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` 限制每个客户端能用的 SM 比例；但显存带宽和 L2 缓存仍是共享的，
# 而且一个客户端触发致命错误时，同一张卡上的所有客户端都会收到这个错误（MPS 文档 Error Containment 一节）。每张卡能接入的 MPS 客户端数也有上限（Volta 及以后为 48 个，见 MPS 文档「When to Use MPS」一章的 Considerations 小节），租户再多就要分到多张卡上。
#
# **MIG（Multi-Instance GPU）**：在硬件上把 A100/H100 切成最多 7 个实例，每个实例有自己的 SM、L2 切片、显存控制器和显存。
# 一张卡有 **7 个计算切片**和 **8 个显存切片**，每种 profile 占用固定数目的切片，且只能从固定的起点开始摆放（`nvidia-smi mig -lgipp`）。
# 下表来自 MIG User Guide 的 Supported Profiles 表和 `nvidia-smi mig -lgip` 的输出：

# %%
show_table(sharing.mig_profile_table("H100-80GB"))

# %% [markdown]
# 注意两列容易被忽略的数字：**SM 数**并不等于「整卡 SM × 切片数 / 7」——H100 的 1g 实例有 16 个 SM，而 132 / 7 ≈ 18.9；
# **显存**是 9.75 GiB 而不是 10 GB 的整数倍。这两点是后面「切得越细越省」误区的根源。
#
# ### 3.1 摆放规则：哪些组合放得进一张卡
#
# 一组实例放得进一张卡，需要同时满足：每种 profile 不超过它的最大实例数（`+me` 媒体扩展最多一个）；计算切片之和 ≤ 7；显存切片之和 ≤ 8；
# 每个实例能在 8 个显存切片的轴上找到一个合法起点，且彼此不重叠（NVML 的 `nvmlGpuInstancePlacement_t`：start 是第一个显存切片，size 是占用的切片数）。
# `labutil.sharing.mig_layout` 用回溯搜索做最后一步。例如 `3g.40gb + 2g.20gb + 1g.10gb + 1g.10gb`：如果从左往右贪心摆放，3g 占了 0–3，
# 2g 放在 4–5，两个 1g 只剩 6 号位一个起点——放不下；搜索会发现把 3g 放在 4 号起点就能放下。真实驱动里这对应一个常见事故：
# **先建小实例、后建大实例**，小实例恰好占住了大实例唯一的起点，结果 `-cgi` 报错，必须先删掉重建。所以建实例时总是**从大到小**。

# %%
# NBVAL_CHECK_OUTPUT
for combo in (["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"], ["4g.40gb", "3g.40gb"], ["3g.40gb", "3g.40gb", "1g.10gb"],
              ["4g.40gb", "4g.40gb"], ["1g.10gb"] * 8):
    try:
        lay = sharing.mig_layout("H100-80GB", combo)
        starts = " ".join(f"{s.profile}@{s.start}" for s in lay.slots)
        print(f"OK   {'+'.join(combo):38s} -cgi {lay.cgi_argument():12s} {starts}")
    except sharing.MigPlacementError as exc:
        print(f"FAIL {'+'.join(combo):38s} {str(exc).split(': ', 1)[1]}")

# %% [markdown]
# 下图把几种合法布局画在 8 个显存切片的轴上。注意 `3g.40gb × 2` 只用了 6 个计算切片——第 7 个计算切片在这个布局里闲置，
# 而 `2g.20gb × 3 + 1g.10gb` 用满了 7 个计算切片却只用了 7 个显存切片。**计算和显存不可能总是同时用满**，选布局就是在两者之间取舍。

# %%
sharing_x.mig_layouts_figure("H100-80GB")

# %% [markdown]
# ### 3.2 在一部分 GPU 上跑一个服务要多久
#
# 设一个请求在整卡上耗时 $s$，它能「用满」的 SM 比例是 $\phi$（`gpu_fill`：batch 为 1 的小模型往往填不满 132 个 SM）。
# 在 SM 占比为 $f$ 的一份 GPU 上（MIG 实例：实例 SM 数 / 整卡 SM 数；MPS：线程百分比 / 100），耗时按一个屋顶线式的饱和模型估计：
#
# $$
# s(f) = s \cdot \max\!\left(1, \frac{\phi}{f}\right)
# $$
#
# 只要这份 GPU 覆盖了请求本来就用得上的 SM，耗时不变；低于它，按比例变长。$\phi$ 是本课程的假设参数——上线前应当在目标实例上实测你的模型
# （第 25 章 perf_analyzer 的方法同样适用于 MIG 实例）。
#
# ### 3.3 四种方式各要几张卡：探索器
#
# 把第 25 章的 `gpus_for_slo` 套到每种共享方式上：独占时每个租户单独算副本数；时间片下找「最多几个租户共用一张卡、每个人的 P99 仍达标」；
# MPS 下每个租户分到 1/k 的 SM、各自排队；MIG 下找「需要卡数最少的 profile」，如果整卡反而更省就关掉 MIG。
# 拖动租户数、每租户 QPS、显存、P99 目标和 $\phi$，看 GPU 数、最差租户的 P99 和隔离等级怎么变；右图是 MIG 方案中一张卡的实际布局。

# %%
explorer = sharing_x.sharing_explorer()
explorer

# %% [markdown]
# 用探索器的默认值算一个具体例子：14 个小推理服务，每个 20 req/s、整卡上 8 ms 一个请求、单请求能用满 30% 的 SM、占 8 GB 显存、P99 ≤ 100 ms，H100-80GB：

# %%
# NBVAL_CHECK_OUTPUT
plans = sharing.compare_sharing(14, 20.0, 8.0, 8.0, 100.0, gpu="H100-80GB", gpu_fill=0.3)
for m, p in plans.items():
    iso = "/".join(p.isolation[a] for a in sharing.ISOLATION_ASPECTS)
    print(f"{m:12s} {p.gpus:2d} GPUs, {p.tenants_per_gpu:4.1f} tenants/GPU, worst P99 {p.p99_ms:5.1f} ms, "
          f"profile {p.profile or '-':8s} isolation mem/fault/perf/net: {iso}")

# %% [markdown]
# 独占要 14 张卡，每张卡的利用率只有 $20 \times 8\ \text{ms} = 16\%$。时间片把 5 个租户塞进一张卡（3 张卡），但每个人的 P99 从 21 ms 涨到 96 ms，
# 已经贴着目标线；MPS 和 MIG 都只要 2 张卡。MPS 和 MIG 的卡数相同，区别在隔离列：MIG 的显存、故障、性能都是硬隔离，
# MPS 的故障隔离是「无」——一个租户的非法访存会让同卡的 8 个邻居一起报错。对一个要对外承诺 SLA 的推荐或推理平台，这一列往往比卡数更重要。
#
# 租户数从 1 增加到 48 时，四种方式所需的 GPU 数：

# %%
sharing_x.gpus_vs_tenants_figure(qps=20.0, service_ms=8.0, memory_gb=8.0, p99_ms=100.0, gpu="H100-80GB", gpu_fill=0.3)

# %% [markdown]
# 真实集群里的服务不会一模一样。`sharing.pack_services` 用「按负载从大到小、首次适配」的启发式把一组大小不同的服务装箱：
# MIG 下每个服务选能满足 P99 的最小 profile，再用 `mig_layout` 检查每张卡上的组合是否合法。

# %%
# NBVAL_CHECK_OUTPUT
services = [sharing.Service(f"svc{i}", qps=10.0 + 5 * i, service_ms=6.0, memory_gb=6.0 + 2 * i, p99_ms=100.0, gpu_fill=0.3)
            for i in range(6)]
for mode in sharing.MODES:
    pk = sharing.pack_services(services, mode, gpu="H100-80GB")
    worst = max(pk.p99_ms.values())
    print(f"{mode:12s} {pk.gpus} GPUs, worst P99 {worst:5.1f} ms, GPU 1 holds: {', '.join(pk.assignment[0])}")

# %% [markdown]
# ## 4. 网络隔离与访问控制
#
# GPU 隔离之外，多租户集群最常被忽略的是网络。Kubernetes 的默认行为是**所有 Pod 之间互通**：Namespace 只是 API 对象的命名空间和 RBAC 的作用域，
# 不是网络边界。要让租户 A 的 Pod 访问不到租户 B，必须写 NetworkPolicy，而且它只在实现了 NetworkPolicy 的 CNI（Calico、Cilium 等）上生效。
# 训练集群还有一层更隐蔽的：RDMA 流量绕过内核协议栈，NetworkPolicy 管不到。InfiniBand 上的隔离靠**分区键（PKey）**：子网管理器（OpenSM 或 UFM）
# 给每个端口分配它所属的分区，不同分区的端口在 HCA 和交换机上就无法通信；RoCE 网络则用 VLAN/VRF 切分。
#
# 下表是本章的隔离矩阵（`labutil/data/mig_profiles.toml` 中的数据，每行带出处）。hard = 硬件或内核强制；partial = 有限制但部分资源仍共享；none = 不隔离；n/a = 该机制不作用于这一项。

# %%
show_table(sharing.isolation_matrix(), columns=["mechanism", "layer", "memory", "faults", "performance", "network", "note"])

# %% [markdown]
# 读这张表的方法是「逐列找 none」：一个租户的威胁模型里有几列，就要至少叠几层机制把它们都变成 hard 或 partial。
# 例如对外提供推理服务的平台：GPU 用 MIG（显存、故障、性能），Namespace + ResourceQuota 管配额，NetworkPolicy 管 Pod 网络，
# RBAC 管谁能操作哪个 Namespace；跑多租户训练时，再加上 IB PKey 把各租户的 RDMA 流量分开。
#
# ### 4.1 谁能在节点上做什么：Pod 安全准入与 Slurm 的登录控制
#
# RBAC 决定谁能在 Namespace 里**创建** Pod，却不管 Pod **长什么样**：一个有 `edit` 权限的租户可以提交 `hostNetwork: true`、
# `privileged: true` 或挂载宿主机 `/` 的 Pod，容器隔离就形同虚设。Kubernetes 的 Pod 安全准入（Pod Security Admission）按 Namespace 标签
# 执行三档 Pod Security Standards（privileged / baseline / restricted）；本章给 `team-a` 的 Namespace 打上
# `pod-security.kubernetes.io/enforce: baseline`（见第 5 节的清单）。baseline 禁止宿主机命名空间、特权容器、hostPath 卷，
# 也只允许添加 13 种常见的 capability——`IPC_LOCK` 不在其中。用 `manifests.pod_security_baseline_violations` 检查两个 Pod：

# %%
# NBVAL_CHECK_OUTPUT
docs = manifests.chapter_manifests()
for label, pod in (("ch29 serve-3g (MIG inference pod)", docs["ch29-tenancy.yaml"][-1]),
                   ("ch20 trainer-0 (multi-node RDMA pod)", docs["ch20-gpu-pods.yaml"][1])):
    v = manifests.pod_security_baseline_violations(pod)
    print(f"{label:38s} baseline: {'admitted' if not v else 'rejected, ' + '; '.join(v)}")

# %% [markdown]
# 推理 Pod 顺利通过；第 20 章那个多机训练 Pod 却会被拒绝，因为 RDMA 需要 `IPC_LOCK` 来锁页（用 `hostNetwork` 的写法同样过不了）。
# 这不是 baseline 定得太严，而是提醒你：**多机 RDMA 训练本来就要一部分宿主机权限**。常见的做法是把训练放在单独的 Namespace 和节点池里，
# 那个 Namespace 用 privileged 档（或 baseline 加上 Kyverno、Gatekeeper 这类策略引擎里只放行 `IPC_LOCK` 的例外），只给受信任的训练团队；
# 对外的推理租户一律 baseline 或 restricted。
#
# Slurm 集群的对应问题是「用户能不能直接 ssh 到计算节点」。默认可以，于是任何人都能登录一台正在跑别人作业的节点，绕开 cgroup 去用空闲的卡。
# `pam_slurm_adopt` 这个 PAM 模块只允许用户 ssh 到**自己有作业在跑**的节点，并把 ssh 会话收进该作业的 cgroup（要求 `slurm.conf` 里
# `PrologFlags=contain`）；`PrivateData=jobs,usage,users` 则让普通用户看不到别人的作业与用量（默认所有信息对所有用户可见）。
#
# ### 4.2 互不信任的租户：容器不是安全边界
#
# 上面所有机制都假设租户之间是「同一家公司的不同团队」。容器共享宿主机的内核和 GPU 驱动，NVIDIA Container Toolkit 的 hook 又以 root 身份运行，
# 第 20 章提到的 CVE-2024-0132、CVE-2025-23266 就是一个恶意镜像拿到宿主机 root 的真实例子。对真正互不信任的租户（公有云、对外的 GPU 租赁），
# 边界要放在虚拟机上：整卡 PCIe 直通给虚拟机，或用 NVIDIA vGPU（A100/H100 上可以用 MIG 实例作为 vGPU 的后端），
# 或用 Kata Containers 这类「每个 Pod 一个轻量虚拟机」的运行时；H100 起还有机密计算模式，配合 CPU 的可信执行环境，
# 连宿主机管理员也读不到显存里的数据。代价是更长的启动时间、更复杂的驱动管理，以及部分共享方式（时间片、MPS）不再可用。
# 无论哪种边界，驱动和 Toolkit 都要按安全公告及时打补丁——这一条和第 19 章的版本基线写在同一张变更单上。
#
# ## 5. 实操命令
#
# 以下命令与配置都是各工具的真实语法；示例输出标注了来源，其中 UUID 等数值是示意（illustrative）。
#
# **MIG：列 profile、建实例、看设备。** 开启 MIG 需要 root 且卡上没有进程。A100（Ampere）上开启时驱动会复位 GPU，MIG 模式记在 InfoROM 里、重启后仍保持；从 H100（Hopper）起开启 MIG 不再需要 GPU reset，但 MIG 模式只在驱动加载期间有效，重启或重新加载驱动后要重新开启（MIG User Guide「GPU Reset on Hopper+ GPUs」）。两代 GPU 上建好的实例都不跨重启保留，生产上用 `mig-parted` 或 GPU Operator 的 MIG Manager 在开机时重建。
#
# ```bash
# sudo nvidia-smi -i 0 -mig 1              # 开启 MIG 模式
# nvidia-smi mig -lgip                      # 列出 GPU instance profiles（ID、剩余/总数、显存、SM）
# nvidia-smi mig -lgipp                     # 每个 profile 的合法起点：{0,4}:4 表示起点 0 或 4、占 4 个显存切片
# sudo nvidia-smi mig -cgi 9,9 -C           # 建两个 3g.40gb（profile ID 9），-C 同时建默认的 compute instance
# nvidia-smi -L                             # 列出 GPU 与 MIG 设备及其 UUID
# CUDA_VISIBLE_DEVICES=MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f python serve.py   # 把进程钉在一个实例上
# sudo nvidia-smi mig -dci && sudo nvidia-smi mig -dgi   # 先删 compute instance，再删 GPU instance
# ```
#
# `nvidia-smi mig -lgip` 的输出（H100 80GB HBM3，尚未建实例；格式与 MIG User Guide「List GPU Instance Profiles」示例一致）由 `sharing.parse_mig_lgip` 解析，
# 并与目录数据逐项核对：

# %%
print(sharing.SAMPLE_LGIP_H100)

# %%
# NBVAL_CHECK_OUTPUT
rows = sharing.parse_mig_lgip(sharing.SAMPLE_LGIP_H100)
for r in rows:
    p = sharing.mig_profile("H100-80GB", r.name)
    same = (r.id, r.total, r.memory_gib, r.sm) == (p.id, p.max_instances, p.memory_gib, p.sm)
    print(f"{r.name:11s} id {r.id:2d} free/total {r.free}/{r.total} {r.memory_gib:6.2f} GiB {r.sm:3d} SMs  matches catalog: {same}")

# %% [markdown]
# `-cgi 9,9 -C` 之后，`nvidia-smi -L` 会在 GPU 下列出两个 MIG 设备（格式来自 MIG User Guide「CUDA Device Enumeration」示例，UUID 为示意）：

# %%
# NBVAL_CHECK_OUTPUT
for d in sharing.parse_nvidia_smi_list(sharing.SAMPLE_SMI_L):
    kind = f"MIG {d.profile} device {d.mig_device}" if d.mig_device is not None else "GPU"
    print(f"GPU {d.gpu}  {kind:24s} {d.uuid}")

# %% [markdown]
# **MPS：** 每张卡起一个控制守护进程，客户端用环境变量限制 SM 比例和显存：
#
# ```bash
# export CUDA_VISIBLE_DEVICES=0
# export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
# nvidia-smi -i 0 -c EXCLUSIVE_PROCESS      # 推荐：只允许 MPS 服务端这一个进程使用这张卡
# nvidia-cuda-mps-control -d                # 启动 MPS 控制守护进程
# CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=16G python serve.py
# echo quit | nvidia-cuda-mps-control       # 停止
# ```
#
# **Slurm：cgroup 设备隔离与 QOS。**
#
# ```ini
# # /etc/slurm/cgroup.conf
# ConstrainCores=yes
# ConstrainRAMSpace=yes
# ConstrainDevices=yes
# # /etc/slurm/slurm.conf（节选）
# ProctrackType=proctrack/cgroup
# TaskPlugin=task/cgroup,task/affinity
# GresTypes=gpu
# PreemptType=preempt/qos
# PreemptMode=REQUEUE
# PriorityWeightQOS=10000                      # 默认 0：不设，QOS 的 Priority 不起作用（第 21 章 7.2 节）
# AccountingStorageTRES=gres/gpu               # GPU 成为 TRES，GrpTRES=gres/gpu 才能限住
# AccountingStorageEnforce=associations,limits,qos
# PrologFlags=contain                          # pam_slurm_adopt 的前提
# PrivateData=jobs,usage,users                 # 普通用户看不到别人的作业与用量
# # /etc/pam.d/sshd（计算节点）
# account    required      pam_slurm_adopt.so  # 只能 ssh 到自己有作业的节点，会话进入作业的 cgroup
# ```
#
# ```bash
# sacctmgr add qos inference Priority=1000 Preempt=training
# sacctmgr modify qos training set GrpTRES=gres/gpu=96 MaxWall=3-00:00:00
# sacctmgr add account lab-a && sacctmgr add user alice account=lab-a qos=training,inference
# ```
#
# **Kubernetes：GPU Operator 的 MIG 策略、配额、RBAC、NetworkPolicy。** GPU Operator 的 `mig.strategy` 为 `single` 时，一个节点上所有 GPU 切成同一种 profile，
# 仍以 `nvidia.com/gpu` 资源名出现；为 `mixed` 时每种 profile 以 `nvidia.com/mig-3g.40gb` 这样的独立资源名出现，Pod 按 profile 申请。
# 节点上的切分由 MIG Manager 读节点标签 `nvidia.com/mig.config` 完成：
#
# ```bash
# helm install gpu-operator nvidia/gpu-operator -n gpu-operator --create-namespace --set mig.strategy=mixed
# kubectl label node gpu-node-07 nvidia.com/mig.config=all-3g.40gb --overwrite
# kubectl create namespace team-a
# kubectl create rolebinding team-a-edit --clusterrole=edit --group=team-a -n team-a
# ```
#
# 租户 `team-a` 的一组对象：Namespace、GPU 与 MIG 配额、只允许本 Namespace 内互访的 NetworkPolicy、把 `team-a` 组绑到 `edit` 角色的 RoleBinding
# （等价于上面的 `kubectl create rolebinding`），以及一个按 MIG profile 申请资源的推理 Pod（`mixed` 策略下资源名是 `nvidia.com/mig-3g.40gb`）。
# 本章所有清单都由 `labutil.manifests` 生成，课程测试用 `kubernetes-validate --strict` 在 Kubernetes 1.30 和 1.37 的 API schema 上离线校验：

# %%
print(manifests.to_yaml(manifests.chapter_manifests()["ch29-tenancy.yaml"]))

# %% [markdown]
# GPU 层的共享在 GPU Operator 里配置：时间片写在 device plugin 的 ConfigMap 里（每张卡报成 4 个 `nvidia.com/gpu`），MIG 布局写在
# MIG manager 读取的 mig-parted 配置里，二者都由 `ClusterPolicy` 引用。`manifests.mig_config_configmap` 在生成配置前先用第 3.1 节的
# `sharing.mig_layout` 检查每个布局能否放进一张卡——放不下的组合在这里就报 `MigPlacementError`，而不是等到节点上的 MIG manager 失败。
# ClusterPolicy 只列出与共享有关的三段（整个对象按 GPU Operator 的 CRD schema 校验过）：

# %%
policy, time_slicing, mig_config = manifests.chapter_manifests()["ch29-gpu-sharing.yaml"]
print(manifests.to_yaml({"spec": {k: policy["spec"][k] for k in ("mig", "devicePlugin", "dcgmExporter")}}))
print(manifests.to_yaml([time_slicing, mig_config]))

# %% [markdown]
# 自己检查清单的两道关：
#
# ```bash
# pip install kubernetes-validate
# kubernetes-validate --strict -k 1.30 team-a.yaml      # 内置类型：字段名、类型（离线）
# kubectl apply --dry-run=server -f team-a.yaml        # 有集群时：数量格式、枚举值、准入策略，以及 ClusterPolicy 这类 CRD 的 schema
# ```
#
# **InfiniBand 分区（PKey）：** OpenSM 的 `partitions.conf`（UFM 环境下用其管理界面或 API 配置同样的内容），`full` 成员可与同分区所有成员通信，
# `limited` 成员之间不能互通（适合把存储服务器设为 full、各租户节点设为 limited 的共享存储分区）：
#
# ```ini
# # /etc/opensm/partitions.conf
# Default=0x7fff, ipoib : ALL=full ;
# TenantA=0x8001, ipoib : 0x0c42a10300d0a1b0=full, 0x0c42a10300d0a1b8=full ;
# TenantB=0x8002, ipoib : 0x0c42a10300d0b2c0=full, 0x0c42a10300d0b2c8=full ;
# Storage=0x8010 : ALL=limited, 0x0c42a10300d0f000=full ;
# ```
#
# ```bash
# sudo systemctl restart opensm          # 或 kill -HUP 让 OpenSM 重读分区
# smpquery pkeys -D 0                      # 在一个节点上查看本端口拿到的 PKey 表
# export NCCL_IB_PKEY=1                    # NCCL 使用 PKey 表中的第 1 项（而不是默认分区）
# ```
#
# ## 6. 常见误区（每一条都用算出来的数字反驳）
#
# ### 误区一：「MIG 切得越细越省」
#
# 切成 7 个 1g 看起来把一张卡变成了 7 张，但算一算 7 个实例加起来拥有多少 SM 和显存：

# %%
# NBVAL_CHECK_OUTPUT
for gpu in ("H100-80GB", "A100-80GB"):
    g = sharing.mig_gpu(gpu)
    one = g.profile("1g.10gb")
    seven = g.profile("7g.80gb")
    print(f"{gpu}: 7 x 1g.10gb = {7 * one.sm} SMs ({7 * one.sm / g.sm_full:.1%} of {g.sm_full}), "
          f"{7 * one.memory_gib:.2f} GiB; 1 x 7g.80gb = {seven.sm} SMs, {seven.memory_gib:.2f} GiB")

# %%
sharing_x.mig_granularity_figure("H100-80GB")

# %% [markdown]
# 在 H100 上，7 个 1g 实例一共只有 112 个 SM（整卡 132 个的 84.8%），显存 68.25 GiB，比一个 7g.80gb 少 11 GiB；`3 × 2g.20gb` 更差：96 个 SM、
# 59 GiB，还剩一个计算切片和两个显存切片空着。A100 上的 7g.80gb 本身就只有 98 个 SM（关闭 MIG 时 108 个）。
# 所以 MIG 省的是「卡的个数」，前提是每个租户本来就用不满一整张卡；如果服务能用满整卡（$\phi$ 接近 1），切分只会让总吞吐下降。
# 在探索器里把「单请求可用满的 SM 比例」拖到 1.0，你会看到 MIG 方案的卡数上升，甚至退回「MIG off」。
#
# ### 误区二：「时间片共享和 MIG 一样隔离」
#
# 两者都能让多个 Pod 共用一张卡，调度器看起来一样。用排队模型算一个安静的租户（10 req/s，每请求 8 ms）在邻居负载变化时的 P99：

# %%
# NBVAL_CHECK_OUTPUT
for nq in (0.0, 50.0, 80.0, 100.0):
    ts = sharing.noisy_neighbour_p99_ms(nq, qps=10.0, service_ms=8.0, neighbour_service_ms=8.0, mode="time_slicing")
    mig = sharing.noisy_neighbour_p99_ms(nq, qps=10.0, service_ms=8.0, neighbour_service_ms=8.0, mode="mig",
                                         gpu="H100-80GB", profile="3g.40gb", gpu_fill=0.4)
    print(f"neighbour {nq:5.0f} req/s: time-slicing P99 {ts:6.1f} ms, MIG 3g.40gb P99 {mig:5.1f} ms")

# %%
sharing_x.noisy_neighbour_figure(qps=10.0, service_ms=8.0, neighbour_service_ms=8.0, gpu="H100-80GB", profile="3g.40gb", gpu_fill=0.4)

# %% [markdown]
# 安静租户自己的负载一点没变，邻居从 0 涨到 100 req/s，它的 P99 从 17 ms 涨到 150 ms 以上，9 倍——而它什么也没做错。
# 而且这还是乐观估计：模型没算上下文切换开销，也没算混合服务时间带来的额外波动。放在 MIG 实例上，它的 P99 与邻居无关（模型中为一条水平线）。
# 除了性能，时间片还没有显存隔离：邻居可以把显存占满，让你的下一次分配直接 OOM。
#
# ### 误区三：「Namespace 就是安全隔离」
#
# Namespace 是 API 对象的命名空间，是 RBAC 和 ResourceQuota 的作用域；它本身不隔离计算、不隔离网络。用隔离矩阵查一下它留下了哪些「none」：

# %%
# NBVAL_CHECK_OUTPUT
for mech in ("K8s Namespace", "Namespace + ResourceQuota", "NetworkPolicy", "MIG", "InfiniBand PKey partition"):
    row = sharing.isolation(mech)
    print(f"{mech:27s} memory {row['memory']:7s} faults {row['faults']:7s} performance {row['performance']:7s} "
          f"network {row['network']:7s} leaves shared: {', '.join(sharing.not_isolated_by(mech)) or '-'}")

# %% [markdown]
# 只建 Namespace 时，两个租户的 Pod 可能被调度到同一个节点、同一张（时间片共享的）GPU 上，网络上默认互通；ResourceQuota 只限制**数量**，
# 不决定**谁和谁共用**。要把「none」变成 hard/partial：GPU 用 device plugin 整卡分配或 MIG，网络加 NetworkPolicy（Pod 网络）和 PKey/VLAN（RDMA 与存储网络），
# 再用 RBAC RoleBinding 限定谁能在这个 Namespace 里操作。
#
# ## 7. 练习
#
# 把答案填进 `answer_k`（数字即可，单位见题目），运行单元格查看判分；卡住时调用 `exercise("ch29.k").hint(1)`。
#
# **练习 1**：一张 H100-80GB 切成 7 个 1g.10gb，7 个实例加起来拥有整卡（关闭 MIG）SM 的百分之多少？（单位：%）

# %%
answer_1 = None
exercise("ch29.1").check(answer_1)

# %% [markdown]
# **练习 2**：20 个小推理服务，每个 20 req/s、整卡上每请求 8 ms（单请求能用满 30% 的 SM）、显存 8 GB、P99 ≤ 100 ms，H100-80GB。
# 与「每个服务独占一张卡」相比，MIG 能省几张卡？（单位：张）

# %%
answer_2 = None
exercise("ch29.2").check(answer_2)

# %% [markdown]
# **练习 3**：时间片共享一张卡：安静租户 10 req/s、每请求 8 ms；邻居每请求也是 8 ms、发送 80 req/s。安静租户的 P99 是多少？（单位：ms）

# %%
answer_3 = None
exercise("ch29.3").check(answer_3)

# %% [markdown]
# **练习 4（判断题）**：练习 2 的 20 个服务（每个 20 req/s、整卡 8 ms 且只占 30% 的 SM、8 GB、P99 ≤ 100 ms），'time_slicing' 和 'mig' 哪个需要的 H100-80GB 更少？

# %%
answer_4 = None  # 'time_slicing' 或 'mig'
exercise("ch29.4").check(answer_4)

# %% [markdown]
# ## 8. 小结
#
# - 多租户隔离是分层的：调度层（QOS、配额）决定谁拿到卡；cgroup 让作业只看得见自己的卡；GPU 层（时间片 / MPS / MIG）决定同一张卡上的租户能否互相影响；网络层（NetworkPolicy、PKey）和 RBAC 决定谁能访问谁。
# - RBAC 管「谁能建 Pod」，Pod 安全准入管「能建什么样的 Pod」：对外租户的 Namespace 用 baseline 或 restricted；多机 RDMA 训练需要 `IPC_LOCK`，放在受信任团队的单独 Namespace 与节点池里。Slurm 侧用 `pam_slurm_adopt` 和 `PrivateData`。
# - 容器共享内核和 GPU 驱动，不是互不信任租户之间的安全边界：那种场景用整卡直通的虚拟机、vGPU 或 Kata，并及时给驱动和 Container Toolkit 打补丁。
# - MIG：7 个计算切片、8 个显存切片，实例只能从 `-lgipp` 列出的起点开始；建实例从大到小。切得越细，闲置的 SM 和显存越多（H100 上 7 × 1g 只有 84.8% 的 SM）。
# - 对很多填不满整卡的小服务，共享能省下大部分 GPU（例子中 14 张 → 2 张）；时间片最省事但每个租户的 P99 取决于邻居的负载，且没有显存和故障隔离；MPS 有 SM 配额但故障会传染；MIG 是唯一在显存、故障、性能上都硬隔离的方式。
# - Namespace 不是安全边界：网络默认互通，GPU 隔离要靠 device plugin / MIG，网络隔离要靠 NetworkPolicy 和 IB 分区。
#
# 下一章是综合案例：把全课的模型合起来，为一个虚拟客户设计千卡集群，其中推理与开发环境的切分会用到本章的 MIG 规划。
#
# ## 参考资料
#
# - 课程种子材料：《AI训练推理集群》场景三「科研机构混合负载集群」（资源隔离与优先级调度；Slurm QOS + cgroup，或 K8s Namespace + ResourceQuota）；《大规模GPU集群部署核心概念速览》应用场景表（推荐系统推理：GPU 共享；自动驾驶仿真：GPU 虚拟化、容器化调度）。
# - NVIDIA, *Multi-Instance GPU User Guide*：Supported MIG Profiles（A100 / H100 表，80 GB 型号的 profile 名称与实例数）、Getting Started（`nvidia-smi mig -lgip`、`-lgipp`、`-cgi ... -C`、CUDA Device Enumeration）、MIG with Kubernetes / Slurm。
# - NVIDIA NVML API Reference, `nvmlGpuInstancePlacement_t`（start = 第一个显存切片，size = 占用的显存切片数）。
# - NVIDIA A100 / H100 Tensor Core GPU Architecture whitepapers（A100：108 个 SM；H100 SXM5：132 个 SM）。
# - NVIDIA, *Multi-Process Service* 文档：Volta MPS（独立地址空间、执行资源配额 `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`）、Error Containment；「When to Use MPS」一章的 Considerations 小节（Volta 起每卡 48 个客户端）。
# - NVIDIA k8s-device-plugin README, "Shared Access to GPUs with CUDA Time-Slicing"（时间片副本之间没有显存与故障隔离）；NVIDIA GPU Operator 文档：MIG Support（`mig.strategy` single / mixed，`nvidia.com/mig.config`）。
# - NVIDIA/mig-parted：`config.yaml` 格式（`version: v1`、`mig-configs`、`mig-devices`），GPU Operator MIG Manager 读取的自定义 MIG 配置；NVIDIA/gpu-operator `ClusterPolicy` CRD（commit a22dbf671f2e），课程据此校验本章的 ClusterPolicy。
# - kubernetes-validate（PyPI，1.37；自带 Kubernetes API schema）：本章的 ResourceQuota、NetworkPolicy、RoleBinding、Pod、ConfigMap 在 1.30 与 1.37 上以 `--strict` 离线校验（`tests/test_k8s_manifests.py`）。
# - Slurm 文档：cgroup.conf(5)（`ConstrainDevices`、`ConstrainRAMSpace`）、QOS（Priority、Preempt、GrpTRES）、`PreemptType=preempt/qos`；slurm.conf(5)（`PriorityWeightQOS` 默认 0，`AccountingStorageTRES`、`AccountingStorageEnforce`，`PrivateData`：默认所有信息对所有用户可见）；*pam_slurm_adopt*（阻止用户 ssh 到没有自己作业的节点，会话收进作业的 external step；需要 `PrologFlags=contain`）。
# - Kubernetes 文档：*Pod Security Standards*（privileged / baseline / restricted；baseline 禁止 hostNetwork/hostPID/hostIPC、特权容器、hostPath，可添加的 capability 只有 AUDIT_WRITE、CHOWN、DAC_OVERRIDE、FOWNER、FSETID、KILL、MKNOD、NET_BIND_SERVICE、SETFCAP、SETGID、SETPCAP、SETUID、SYS_CHROOT）、*Pod Security Admission*（`pod-security.kubernetes.io/enforce` 标签）；`labutil.manifests.pod_security_baseline_violations` 按这张表检查其中与本课清单有关的各项。
# - NVIDIA 产品安全公告：NVIDIA Container Toolkit 的 CVE-2024-0132（v1.16.2 修复）、CVE-2025-23266（v1.17.8 修复），见第 20 章参考资料。NVIDIA Virtual GPU Software 文档（MIG-backed vGPU）；NVIDIA H100 Tensor Core GPU Architecture 白皮书（Confidential Computing）；Kata Containers 文档。
# - Kubernetes 文档：Namespaces、Resource Quotas（扩展资源 `requests.nvidia.com/gpu`）、Network Policies（默认不隔离；由网络插件实现）、Using RBAC Authorization。
# - InfiniBand Trade Association, *InfiniBand Architecture Specification* Vol. 1, §10.9 Partitioning；OpenSM `partitions.conf` 文档；NCCL 环境变量 `NCCL_IB_PKEY`。
# - 排队模型：L. Kleinrock, *Queueing Systems* Vol. 1 (1975) §3.5（Erlang C）；A. O. Allen, *Probability, Statistics, and Queueing Theory* (1990) §6.7（Allen–Cunneen 近似），见第 25 章与 `labutil.inference`。
