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
# # 第28章 故障定位：网络 → 存储 → GPU → 软件栈
#
# > 模块六「运维与实战」的第 28 章。前置：第 13 章（集合通信与 busbw）、第 16–18 章（存储与数据流水线）、
# > 第 23 章（健康检查规则）、第 27 章（可靠性与 XID）。本章把前面各章的检查串成一条**排障决策路径**，
# > 第 30 章的万卡运维视图会直接用到它。
#
# ## 学习目标
#
# - 面对「训练中断」或「性能劣化」，能按 **网络 → 存储 → GPU → 软件栈** 的层次化思路快速缩小排查范围；
# - 会用模型**量化**一个故障能解释多少症状：实测 busbw 比期望低多少、步时因此增加多少；存储读带宽与需求之差、检查点突发造成的停顿；
# - 会读六类证据的真实输出：`ibstat`、`perfquery`、`all_reduce_perf`、`NCCL_DEBUG=INFO`、`dmesg` XID、`nvidia-smi -q`、`dcgmi diag`、PyTorch watchdog 日志；
# - 能说清楚「先重启再说」「NCCL 报错就是网络问题」「单机 nccl-test 通过就说明网络没问题」这三个误区错在哪里，并用数字反驳。

# %%
from labutil.notebook import setup, show_table
from labutil import troubleshoot as T
from labutil import health, comm
from labutil.explore import troubleshoot as ET
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 为什么要分层：症状在上层，根因常在下层
#
# 大规模训练是一个**同步**系统：每一步都要等所有 rank 完成同一个集合通信。于是任何一层的故障，最终都会在最上层表现为同一类症状——
# 「步时变长」「NCCL timeout」「任务挂住」「loss 变 NaN」。一个掉了速的网口、一块正在降频的 GPU、一次抢占了存储带宽的检查点写入、
# 一个只在 rank 15 上多执行了一次 broadcast 的代码分支，看起来都像「训练卡了」。有经验的值班工程师不会从症状直接跳到结论，
# 而是按固定顺序逐层排除：
#
# | 层 | 典型故障 | 第一眼命令 | 单次检查耗时（课程估计） |
# |---|---|---|---|
# | 1 网络 | 光模块/线缆降速、端口 Down、误码上升、NCCL 退回 TCP Socket | `ibstat`、`perfquery -x`、`all_reduce_perf` | 1–10 min |
# | 2 存储 | 读带宽不足、检查点突发抢带宽、OST 写满 | `lfs df -h`、`fio` | 1–10 min |
# | 3 GPU | XID 79 掉卡、ECC 不可纠正错误、行重映射待处理、过热降频 | `dmesg \| grep -i xid`、`nvidia-smi -q`、`dcgmi diag -r 3` | 1–15 min |
# | 4 软件栈 | 集合通信不匹配、死锁、版本不一致 | watchdog 日志、`TORCH_DISTRIBUTED_DEBUG=DETAIL`、`py-spy dump` | 5 min 起，常需开发者参与 |
#
# 这个顺序背后有三条理由。第一，**从共享到局部**：网络和存储是所有任务共享的基础设施，一处故障会同时影响很多任务，
# 其他任务的症状也能互相印证；GPU 和软件问题通常局限在一个节点或一个任务。第二，**从便宜到昂贵**：`ibstat` 一分钟出结果、
# 不打扰正在运行的任务；`dcgmi diag -r 3` 按 DCGM 文档要约 15 分钟，而且必须先把节点排空（drain）；软件栈的分析往往要等开发者。
# 第三，**下层故障会伪装成上层症状，反之不会**：网络丢包会让 NCCL 超时，看起来像软件挂死；但一个软件死锁不会让 `ibstat` 显示端口降速。
# 所以从下层往上排，每排除一层，上层的「假线索」就少一批。
#
# 本章把这套方法写成一个小引擎 `labutil.troubleshoot.diagnose`：输入症状和手头已有的证据（各工具的原始输出文本），
# 它按层调用第 23 章的健康规则（`labutil.health`）和第 27 章的 XID 分诊（`labutil.reliability`），
# 在**第一个失败的层**停下，给出下一条该执行的命令，并用第 13、16 章的模型量化这个故障能解释多少症状。
#
# ## 2. 量化：这个故障能解释多少症状？
#
# 找到一个「坏」指标还不够——集群里永远有几个告警。要确认它就是根因，得算一算它能不能解释观察到的症状。
# nccl-tests 定义 all_reduce 的总线带宽 $\text{busbw} = \text{algbw}\times\frac{2(n-1)}{n}$，反过来，大消息 all-reduce 的时间为
#
# $$
# t_{\text{comm}} = \frac{S \cdot 2(n-1)/n}{\text{busbw}},\qquad
# t_{\text{step}} = t_{\text{compute}} + \max\bigl(0,\ t_{\text{comm}} - o\cdot t_{\text{compute}}\bigr)
# $$
#
# 其中 $S$ 是每步 all-reduce 的字节数，$o$ 是计算能掩盖通信的比例（第 14 章）。期望 busbw 取第 23 章的环形上界乘以 NCCL 效率：
# 8 条 400G 轨道的 H100 节点上界是 $8\times400/8 = 400$ GB/s，乘 0.9 得 360 GB/s。
# 下面是第一个案例：一个 16 卡任务在交换机维护后步时从 0.91 s 涨到 1.25 s。

# %%
# NBVAL_CHECK_OUTPUT
d1 = T.diagnose_case("degraded_rail")
q = d1.quant
print(f"busbw measured {q['busbw_measured_gbs']:.1f} GB/s vs expected {q['busbw_expected_gbs']:.1f} GB/s "
      f"({q['busbw_measured_gbs'] / q['busbw_expected_gbs']:.0%})")
print(f"comm per step {q['network']['comm_expected_s']:.3f} s -> {q['network']['comm_measured_s']:.3f} s; "
      f"step {q['network']['step_expected_s']:.3f} s -> {q['network']['step_measured_s']:.3f} s "
      f"(+{q['network']['slowdown']:.1%})")
print(f"the network explains {q['network_explains_fraction']:.0%} of the observed +0.34 s")
print(f"first failing layer: {d1.first_failing_layer} ({d1.root_check}): {d1.root_finding.message}")

# %% [markdown]
# 一条轨道降到 200G 后，NCCL 的每个环都被最慢的那条轨道拖住，busbw 只剩 184 GB/s（期望的 51%）。按模型，步时应增加 32.8%，
# 即 0.30 s，占观察到的 0.34 s 增量的 88%——这个故障足以解释症状，剩下的差额在测量噪声之内。
# 注意引擎在网络层就停下了：存储、GPU、软件层都标为 `not_run`，因为根本不需要它们。下图把 busbw 的比例扫一遍，
# 看步时增量如何随之变化，以及本案例落在哪里：

# %%
ET.network_slowdown_figure("degraded_rail")

# %% [markdown]
# 存储层用同样的思路。数据加载的需求是 $R = \text{samples/s} \times \text{bytes/sample}$（第 18 章）；
# 如果检查点写入和训练读取共享同一个存储池（带宽 $B$），突发期间读取按加权公平分享只能拿到 $r=\min(R, wB)$，
# 突发持续 $T_b = S_{\text{ckpt}}/(B-r)$，预取缓冲（$P$ 秒）耗尽后 GPU 停顿
# $\max\bigl(0,(R-r)T_b - PR\bigr)/R$（第 16 章 `storage.read_write_interference`）。第三个案例的症状是「每 15 分钟 GPU 利用率掉到 0 约 15 秒」：

# %%
# NBVAL_CHECK_OUTPUT
d3 = T.diagnose_case("checkpoint_stall")
q3 = d3.quant
print(f"job needs {q3['required_read_gbs']:.2f} GB/s, pool delivers {q3['pool_read_gbs']:.2f} GB/s (fio, 4 nodes)")
print(f"checkpoint burst {q3['checkpoint_burst_s']:.0f} s, loader stall {q3['stall_per_checkpoint_s']:.1f} s "
      f"per checkpoint = {q3['stall_fraction']:.2%} of wall time")
print(f"first failing layer: {d3.first_failing_layer} ({d3.root_check}); OST imbalance {q3['ost_imbalance_pct']:.1f} points")

# %% [markdown]
# 平时读带宽 8.0 GB/s 远大于需求 4.8 GB/s，单看 fio 会说「存储没问题」；但 420 GB 的检查点每 15 分钟占用存储池约 105 s，
# 期间读取只剩 4.0 GB/s，2 秒的预取缓冲撑不住，每次停顿 15.5 s——正好是症状描述的周期和时长。`lfs df` 里那个 90% 满的 OST
# 是一条警告，但它解释不了「每 15 分钟」这个周期，所以不是根因。修复办法是把检查点写到独立的层或改成异步写（第 17 章）。
#
# ## 3. 交互探索：证据越少，路径越长
#
# 选择一个案例，勾掉一些证据（比如任务已经挂死，跑不了 nccl-tests；或者节点已经被重启，dmesg 里的 XID 没了），
# 看决策路径怎样变化：绿色通过，橙色警告，红色失败，灰色「不需要运行」，白色虚线框是「没有证据」。
# 右边比较按层顺序检查与随机顺序检查，找到第一个失败项的期望时间。

# %%
explorer = ET.triage_explorer()
explorer

# %% [markdown]
# 随机顺序的期望值可以精确算出：$N$ 项检查中有 $k$ 项会失败，随机排列下第一个失败项的期望位置是 $\frac{N+1}{k+1}$
# （随机 $k$ 元子集最小元素的期望）；若每项耗时 $t_i$，期望耗时为
# $\frac{1}{k+1}\sum_{i\notin F} t_i + \overline{t_F}$，因为每个会通过的检查排在所有失败检查之前的概率都是 $\frac{1}{k+1}$。
# 下图对六个案例逐一比较：

# %%
ET.search_cost_figure()

# %%
# NBVAL_CHECK_OUTPUT
rows = []
for name in T.case_names():
    d = T.diagnose_case(name)
    c = d.cost
    rows.append((name, d.first_failing_layer, c["layered_checks"], c["random_checks"], c["layered_minutes"], c["random_minutes"]))
    print(f"{name:<20s} {d.first_failing_layer:<8s} layered {c['layered_checks']:d} checks {c['layered_minutes']:5.1f} min | "
          f"random {c['random_checks']:.2f} checks {c['random_minutes']:5.1f} min")

# %% [markdown]
# 这张表很诚实：根因在网络层时，分层顺序一分钟就命中（随机顺序期望 7 分钟）；根因在软件层时，固定顺序要先把前三层都查一遍，
# 反而比随机慢。分层法的价值不在于「每次都最快」，而在于三点：它**不会被假线索带偏**（XID 案例里软件层的 watchdog 日志只说「全体超时」，
# 随机顺序先看到它的人会去怀疑代码）；它**每一步都给出可执行的下一条命令**；它把昂贵、需要排空节点的检查（`dcgmi diag -r 3`）
# 放在便宜、无侵入的检查之后。下面是 XID 案例的完整决策路径：

# %%
ET.decision_path_figure("nccl_timeout_xid79")

# %% [markdown]
# ## 4. 实操命令：每层一组命令梯子
#
# 下面是值班时按层执行的命令。每一层先跑最便宜的一条，失败就往下钻，通过就进入下一层。
#
# ```bash
# # 1 网络
# ibstat                                   # 每个 HCA：State Active / Physical state LinkUp / Rate 400
# perfquery -x <lid> 1; sleep 600; perfquery -x <lid> 1   # 两次采样比较误码计数的增量
# iblinkinfo | grep -v LinkUp              # 全网找 Down / 降速的链路
# mpirun -np 16 -N 8 -H nodeA:8,nodeB:8 ./build/all_reduce_perf -b 1G -e 8G -f 2 -g 1   # 节点对测试，二分找坏节点
# NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET <训练命令>   # 看 "Using network IB" 与 GDRDMA
# # 2 存储
# lfs df -h /lustre ; lfs check servers
# fio --name=read --directory=/lustre/ai/dataset --rw=read --bs=1M --direct=1 --numjobs=8 --size=16G --runtime=60 --time_based --group_reporting
# # 3 GPU
# dmesg -T | grep -i xid
# nvidia-smi -q -d ECC,ROW_REMAPPER,PERFORMANCE,TEMPERATURE
# dcgmi diag -r 3                          # 约 15 分钟，先 scontrol update nodename=<n> state=drain
# # 4 软件栈
# grep -h "Watchdog caught" rank*.log
# TORCH_DISTRIBUTED_DEBUG=DETAIL torchrun ...   # 报告各 rank 不匹配的集合通信调用
# py-spy dump --pid <pid>                  # 每个 rank 此刻卡在哪一行 Python
# ```
#
# 节点对测试（bisection）：把任务的节点两两配对同时跑 all_reduce_perf，一轮就能把坏节点缩到某一对，
# 第二轮让这两台分别和一台好节点配对即可定位。`pair_test_plan` 生成第一轮的参数列表（不经过 shell 拼接）：

# %%
# NBVAL_CHECK_OUTPUT
for args in T.pair_test_plan(["gpu01", "gpu02", "gpu03", "gpu04", "gpu05"]):
    print(" ".join(args))

# %% [markdown]
# 样例输出的来源：`ibstat`、`perfquery`、`nvidia-smi -q`、`dcgmi diag`、`NCCL_DEBUG=INFO`、`dmesg` 的样例来自 `labutil/data/samples_tools.toml`
# 与 `samples_nccl.toml`（按各工具真实格式编写、数值为示意），`lfs df` 来自 `storage_samples.toml`；
# 案例中的 fio 读测试和 PyTorch watchdog 日志写在 `labutil/data/troubleshoot_cases.toml`，格式分别取自 fio 3.x 的文本输出
# 与 PyTorch ProcessGroupNCCL 的报错行，数值同样是示意。下面解析软件层案例的 watchdog 日志：

# %%
# NBVAL_CHECK_OUTPUT
sym, ev, wl = T.load_case("collective_mismatch")
events = T.parse_watchdog_log(ev["watchdog_log"])
ops = {}
for e in events:
    ops.setdefault(f"{e.op}#{e.seq}", []).append(e.rank)
for op, ranks in ops.items():
    print(f"{op:<18s} ranks {ranks[0]}-{ranks[-1]} ({len(ranks)} ranks)")
d6 = T.diagnose_case("collective_mismatch")
print(f"first failing layer: {d6.first_failing_layer} ({d6.root_check})")
print(f"next: {d6.next_command}")

# %% [markdown]
# 15 个 rank 在第 20233 次集合通信里等 ALLREDUCE，rank 15 却在同一个序号上执行 BROADCAST：这是代码分支不一致造成的集合通信不匹配，
# 网络、GPU 都通过了检查。`TORCH_DISTRIBUTED_DEBUG=DETAIL` 会在下一次运行时直接报告哪一个调用不匹配。
#
# ## 5. 常见误区
#
# ### 误区一：「先重启再说」
#
# 重启会抹掉证据：内核日志环形缓冲区里的 XID 记录会随重启丢失，`nvidia-smi -q` 的 Volatile ECC 计数在驱动重新加载时清零。
# 更糟的是，坏节点还在任务里，任务会再次失败。每次重复失败的代价是「重启时间 + 平均半个检查点间隔的重算」，乘以全部 GPU：

# %%
# NBVAL_CHECK_OUTPUT
b = T.blind_restart_cost(2048, restart_s=600, checkpoint_interval_s=1800, repeats=3, diagnose_s=600)
print(f"each repeat failure: {b['per_failure_gpu_h']:.0f} GPU-h; 3 blind restarts: {b['blind_gpu_h']:.0f} GPU-h")
print(f"10 min of diagnosis + 1 restart instead: {b['diagnose_gpu_h']:.0f} GPU-h")

# %% [markdown]
# 2,048 卡任务盲目重启三次浪费 2,560 GPU·h；先花 10 分钟看 `dmesg`、把坏节点排空再重启，只花 683 GPU·h。
#
# ### 误区二：「NCCL 报错就是网络问题」
#
# NCCL timeout 只说明「有 rank 没到」，没说为什么没到。两个以 NCCL 超时为症状的案例，与一个真正的网络案例对比，根因分别在哪一层？

# %%
# NBVAL_CHECK_OUTPUT
for name in ("nccl_timeout_xid79", "collective_mismatch", "degraded_rail"):
    d = T.diagnose_case(name)
    print(f"{name:<20s} network={d.layer('network').verdict:<5s} root layer={d.first_failing_layer:<8s} "
          f"root check={d.root_check}")

# %% [markdown]
# XID 案例里网络两项检查全部通过，真正的原因是 rank 14 所在的 GPU 掉卡（XID 79），它的进程没了，其他 15 个 rank 在 all-reduce 里等它；
# watchdog 日志里唯独缺了 rank 14 的超时记录，也指向同一张卡。软件案例里网络与 GPU 都健康，根因是代码。
#
# ### 误区三：「单机 nccl-test 通过就说明网络没问题」
#
# 单机 all_reduce_perf 只走节点内的 NVLink/NVSwitch，根本不经过网卡。用第 23 章的环形上界算一算：

# %%
# NBVAL_CHECK_OUTPUT
intra = health.ring_busbw_bound_gbs("intra")
inter = health.ring_busbw_bound_gbs("inter")
degraded = health.rail_allreduce_busbw_gbs(400, 8, slow_rails=1, slow_rail_gbps=200, efficiency=0.9)
print(f"single-node bound (NVLink per direction): {intra:.0f} GB/s -> expected {0.9 * intra:.0f} GB/s, no NIC involved")
print(f"inter-node bound (8 x 400G rails): {inter:.0f} GB/s; with one rail at 200G: {degraded:.0f} GB/s")

# %% [markdown]
# 一条轨道降速后，跨节点 busbw 从 360 GB/s 掉到 180 GB/s，而单机测试仍然是 405 GB/s 左右、完全正常。
# 验收和排障都必须跑**跨节点**的 nccl-tests（至少节点对），单机结果只能证明 NVLink 正常。
#
# ### 附：一个慢 rank 拖住整个任务
#
# 同步训练的步时由最慢的 rank 决定：$t_{\text{step}} = \max_i t_i + t_{\text{comm}}$。一张过热降频的卡（计算慢 30%），
# 在 1,024 卡任务里的代价是：

# %%
# NBVAL_CHECK_OUTPUT
s = T.straggler_slowdown(1024, 1.3, step_s=1.0, comm_s=0.2)
print(f"step {s['step_s']:.2f} s -> {s['step_slow_s']:.2f} s (+{s['slowdown']:.0%}), "
      f"equivalent to losing {s['lost_gpu_per_hour']:.0f} of 1024 GPUs")

# %% [markdown]
# ## 6. 练习
#
# 把答案填进 `answer_k`，运行单元格查看判分；卡住时调用 `exercise("ch28.k").hint(1)`。
#
# **练习 1**：16 卡、每步计算 0.6 s、每步 all-reduce 60 GB、不重叠；期望 busbw 360 GB/s，实测 184 GB/s。步时增加百分之多少？（单位：%）

# %%
answer_1 = None
exercise("ch28.1").check(answer_1)

# %% [markdown]
# **练习 2**：1,024 卡同步任务，健康步时 1.0 s（其中 0.2 s 为暴露的通信），一张卡计算慢 1.3 倍。任务相当于损失多少张 GPU？（单位：张）

# %%
answer_2 = None
exercise("ch28.2").check(answer_2)

# %% [markdown]
# **练习 3**：2,048 卡任务在带坏卡的节点上被盲目重启 3 次（重启 600 s、检查点间隔 1,800 s）。三次重复失败共损失多少 GPU·h？

# %%
answer_3 = None
exercise("ch28.3").check(answer_3)

# %% [markdown]
# **练习 4**：10 项耗时相同的检查随机排序，其中恰有 2 项会失败。找到第一个失败项平均要做几项检查？

# %%
answer_4 = None
exercise("ch28.4").check(answer_4)

# %% [markdown]
# ## 7. 小结
#
# - 症状在上层，根因常在下层：按网络 → 存储 → GPU → 软件栈逐层排除，从共享到局部、从便宜到昂贵。
# - 找到异常指标后要量化：它能否解释观察到的步时增量或停顿周期（busbw → 通信时间 → 步时；读带宽与检查点突发 → 停顿）。
# - 保留证据再行动：先 `dmesg`、`nvidia-smi -q`、watchdog 日志，再排空与重启。
# - NCCL 超时是症状不是诊断；单机 nccl-test 只测 NVLink。
#
# ## 参考资料
#
# - 课程种子材料：《大规模GPU集群部署核心概念速览》课程导入（故障定位思维：网络→存储→GPU→软件栈）。
# - NVIDIA nccl-tests, `doc/PERFORMANCE.md`：algbw 与 busbw 的定义，all_reduce 因子 2(n−1)/n。
# - NVIDIA DCGM 文档 `dcgmi diag`：run level 1 数秒、level 2 约 2 分钟、level 3 约 15 分钟。
# - NVIDIA *XID Errors* 与 *GPU Memory Error Management*：XID 79/94/63 的含义与处置，行重映射需要 GPU 复位。
# - NVIDIA nvidia-smi 文档：Volatile ECC 计数自上次驱动加载起计数。
# - PyTorch `ProcessGroupNCCL` watchdog 报错格式；`TORCH_DISTRIBUTED_DEBUG=DETAIL`（PyTorch distributed 文档）。
# - InfiniBand 诊断工具 `ibstat`、`perfquery`、`iblinkinfo`（rdma-core infiniband-diags）；Lustre 操作手册 `lfs df`。
# - S. Li et al., *PyTorch Distributed*, VLDB 2020（计算与通信重叠）；第 16 章存储干扰模型所引 Bertsekas & Gallager, *Data Networks* §6.5.2。
