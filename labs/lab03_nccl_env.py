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
# # 实验 3：NCCL 环境变量实验（lab03）
#
# > 对应第 15 章（NCCL 深入）。有 2 张以上 GPU 时，本实验用同一个 all-reduce 扫描，依次在
# > `NCCL_P2P_DISABLE=1`、`NCCL_SHM_DISABLE=1`、`NCCL_ALGO=Ring|Tree`、`NCCL_PROTO=LL|LL128|Simple` 下运行并比较 busbw。
# > 没有 GPU 时（CPU 路径，gloo）这些变量**没有任何作用**——gloo 不读取 NCCL 变量。我们不伪造数字：CPU 路径只运行一次
# > gloo 扫描作为对照，并用 NCCL 自己的调优模型（`labutil.nccl_tuning`）与 NCCL_DEBUG 日志样例展示在 GPU 上**会**测到什么。
#
# ## 实验目标
#
# 1. 区分 NCCL 文档里的两类变量：**系统配置类**（`NCCL_SOCKET_IFNAME`、`NCCL_IB_HCA` 等，可以写进作业脚本）与
#    **调试类**（`NCCL_P2P_DISABLE`、`NCCL_SHM_DISABLE`、`NCCL_ALGO`、`NCCL_PROTO`：文档明确说不应在生产中保留，否则可能性能变差、崩溃或挂起）；
# 2. 亲手测出关闭 P2P / SHM 的代价，理解为什么它们只能当「诊断开关」；
# 3. 看懂算法（Ring / Tree）与协议（LL / LL128 / Simple）在不同消息大小上的取舍；
# 4. 从自己的基线运行里读出延迟下限与「小消息被 α 压低了多少」。
#
# ## 前置条件
#
# - 完成 lab01、lab02：知道本机的实验情形（`pcie` / `nvlink`）和基线 busbw；
# - 2 张以上 GPU 才能真正做 NCCL 实验；CPU 路径只做基线与模型对照；
# - 知识：第 15 章 NCCL 的算法、协议、传输。
#
# ## ⚠ 强制协议之前先读这段
#
# NCCL 文档在 `NCCL_PROTO` 条目下不鼓励用户设置它（只在怀疑 NCCL 有 bug 时用来**关闭**某个协议），并特别指出：
# **在不支持 LL128 的平台上启用 LL128 可能导致数据损坏**（"enabling LL128 on platforms that don't support it can lead to
# data corruption"）；NCCL 2.18.1 的发行说明还记录过 HGX H100 上 Tree 算法经 CPU 中转时 LL128 不安全的已知问题。
# NCCL 只在已知安全的平台上自动启用 LL128；用户强行打开它，等于跳过了这层保护。
# 因此本实验：(1) 只在诊断运行里强制协议，绝不写进作业脚本；(2) 每次运行都开着结果校验（`-c 1`），看 `#wrong` 列——
# 非零就是数据错了，立刻停下；(3) 代码在第一次强制 `NCCL_PROTO` 之前会再打印一遍这条警告。
#
# ## 实验步骤
#
# 1. 运行下面的单元格：GPU 上依次跑 9 个设置（每个是同一条 all-reduce 扫描，只差一个环境变量），CPU 上只跑一次 gloo 基线；
# 2. 看每个设置的峰值 busbw 与 `wrong`；
# 3. 对照 NCCL 自己的调优模型，解释每个设置为什么变快或变慢；
# 4. 用 NCCL_DEBUG 日志确认 NCCL 实际选用的传输；
# 5. 做自测题（三道，都读你自己的基线文件）。
#
# ## 预期结果（大消息 busbw 相对默认设置）
#
# | 设置 | 2×/4× PCIe GPU | 4×/8× NVLink GPU（H100） | 2 节点 |
# | --- | --- | --- | --- |
# | 默认 | lab02 的基线（约 26 GB/s，Gen4 x16 同交换芯片） | 约 370 / 480 GB/s（lab02 表） | 约 480 GB/s（NVLS-Tree；`NCCL_ALGO=Ring` 时约 370 GB/s） |
# | `NCCL_P2P_DISABLE=1` | 降到经主机内存中转的水平 | 大幅下降（不再走 NVLink） | 节点内部分同样下降 |
# | `NCCL_SHM_DISABLE=1` | P2P 可用时与默认相同（SHM 只在 P2P 不可用时才用） | 与默认相同 | 与默认相同 |
# | P2P 与 SHM 都关 | 节点内也走网络传输：有 IB 网卡时经网卡回环，没有时退回 TCP socket，最低的一行 | 同左 | 同左 |
# | `NCCL_ALGO=Tree` | 2 卡无差别，4 卡大消息略降 | 单机大消息慢于 Ring | 跨节点小消息可能更快 |
# | `NCCL_PROTO=LL` | 大消息约为默认的 1/2 以下 | 大消息只剩约 1/4（见下方模型表） | 同左 |
# | `NCCL_PROTO=Simple` | 小消息变慢（延迟高） | 小消息变慢 | 小消息变慢 |
#
# 依据：NVLink/PCIe 的默认值见 lab02（`labutil.cluster`）；各设置的相对变化来自 NCCL `src/graph/tuning.cc` 的调优常数
# （`labutil.nccl_tuning` 逐项复现，见第 2 节的表）；P2P 与 SHM 都关掉之后 NCCL 在节点内也用 NET 传输，这是第 3 节
# `NCCL_DEBUG=INFO` 日志里 `via NET/...` 那一类行。关闭 P2P 后中转路径的绝对数字取决于主机内存、CPU 与网卡，课程目录里没有
# 可引用的实测数，因此只给方向不给数字。
#
# **GPU 上要跑多久**：九个设置各是一次 torchrun 启动（NCCL 初始化几秒）加一次 8 B – 1 GiB 的扫描；最慢的是「P2P 与 SHM 都关」
# 那一次（1 GiB 的消息走网络传输）。每次启动的超时是 300 秒，超时会报错而不是挂住。
#
# **CPU 路径的健康输出**：只有一行「gloo baseline」，`wrong=0`，峰值 busbw 在零点几到一两 GB/s（课程 2 核 CI 机器上，
# 随负载波动），图中只有一条曲线。九个 NCCL 设置不会出现——gloo 根本不读 `NCCL_*` 变量，在 CPU 上「跑」它们只会得到九条
# 相同的曲线加上噪声，读者会把噪声当成变量的效果。所以 CPU 路径只做基线，并用第 2 节的模型表说明 GPU 上会看到什么。
#
# **GPU 机器上的健康输出**：九行，每行 `wrong=0`；`NCCL_ALGO=Ring` 与默认在 2–4 卡上几乎相同（默认本来就选 Ring）；
# `NCCL_PROTO=LL` 的大消息 busbw 只剩默认的四分之一左右；`NCCL_P2P_DISABLE=1` 明显低于默认；8×H100 上默认（NVLS）
# 高于 `NCCL_ALGO=Ring`（约 480 对 370 GB/s）。哪一行与这个方向相反，就是值得用 `NCCL_DEBUG=INFO` 追查的现象。
#
# **噪声下限**：任何两行的差别只有大于同一次运行里 in-place 与 out-of-place 两列的差别时，才能归因于环境变量——
# 这两列测的是同一个操作。自测题 3 让你从自己的基线里读出这个下限。

# %%
from labutil.notebook import setup, show_table
from labutil.machine import run as labs
from labutil.explore import bench as bench_x
from labutil.explore import nccl as nccl_x
from labutil.parsers import parse_nccl_debug_log, samples

rng = setup()
on_gpu = labs.backend() == "nccl"
print("backend:", labs.backend(), "| experiments:", list(labs.NCCL_ENV_EXPERIMENTS) if on_gpu else ["gloo baseline"])

# %% [markdown]
# ## 1. 运行
#
# GPU 上每个实验是一条 torchrun 命令，只差一个环境变量，例如：
#
# ```bash
# NCCL_P2P_DISABLE=1 NCCL_DEBUG=INFO torchrun --standalone --nproc-per-node=4 -m labutil.bench.collectives --op all_reduce -b 8 -e 1G -f 2
# ```
#
# 写错变量名不会报错：NCCL 只读它认识的 `NCCL_*` 变量，拼错的（例如 `NCCL_P2P_DISABLED=1`）被静默忽略，那一行就和默认一样。
# 用 `NCCL_DEBUG=INFO` 跑一次，日志里 `NCCL INFO NCCL_P2P_DISABLE set by environment to 1` 这样的行证明变量生效了。

# %%
if on_gpu:
    runs = labs.run_env_experiments()
else:
    runs = {"gloo baseline (CPU path)": labs.run_collectives("all_reduce", name="lab03_default")}
for name, r in runs.items():
    print(f"{name:28s} peak busbw {max(x['out_of_place']['busbw_gbs'] for x in r['rows']):8.3f} GB/s  wrong={r['wrong_total']}")

# %% [markdown]
# 基线的完整表格（GPU 上是 `default` 那一次，CPU 上是 gloo 基线）——自测题读的就是这张表，文件是 `labs/_runs/lab03_default.json`：

# %%
baseline = next(iter(runs.values()))
print(baseline["stdout"])

# %%
# NBVAL_CHECK_OUTPUT
print("experiments defined:", len(labs.NCCL_ENV_EXPERIMENTS))
print("every run correct (wrong = 0):", all(r["wrong_total"] == 0 for r in runs.values()))

# %%
bench_x.busbw_figure(list(runs.values()), labels=list(runs))

# %% [markdown]
# ## 2. GPU 上会看到什么：NCCL 自己的预测
#
# NCCL 为每个（算法, 协议）组合估算 $t = \text{latency} + S / \text{algbw}$，取最小者（`src/graph/tuning.cc`）。
# 下表与下图用 NCCL 2.7.5 的调优常数（`labutil.nccl_tuning` 逐项转录），对一台 DGX A100（8 卡 NVSwitch，24 个 channel，
# 每 channel 约 9.6 GB/s，合计为实测的 NVLink 环 busbw 230 GB/s：S. Jeaugey，NVIDIA/nccl-tests issue #149；24 个 channel 见
# issue #100 的 NCCL_DEBUG 日志）预测不同设置下 1 KiB、1 MiB、1 GiB 的 busbw。表与图是同一次模型调用，数字一致。
# `NCCL_PROTO=LL` 在大消息上只剩约 1/4 带宽（LL 每 8 字节里只有 4 字节数据、另 4 字节是标志位），`NCCL_ALGO=Tree` 在单机上
# 大消息明显慢于 Ring——这就是为什么不能把这些变量「调好」后留在脚本里。
#
# **这张表的约 230 GB/s 与全课程用的 370 / 480 GB/s 为什么不同。** 表里默认设置 1 GiB 的约 230 GB/s 是 A100 的数字：NVLink 3
# 每张卡每方向 300 GB/s，DGX A100 上实测的环 busbw 是 230 GB/s，模型按它校准。370 与 480 则是 8×H100 上的**实测**：
# NVLink 4 每张卡每方向 450 GB/s，新版本的 NCCL 为 Hopper 单独准备了从 60 GB/s 起的每 channel 速度档（`src/graph/search.cc` 的
# `sm90SpeedArrayIntra`；A100 用的 `speedArrayIntra` 最高 40 GB/s），强制 Ring 时 busbw 约 370 GB/s；而默认设置在 8 卡 NVSwitch
# 上会选 Hopper 时代加入的 NVLS 算法——归约在 NVSwitch 里完成，busbw 约 480 GB/s（S. Jeaugey，NVIDIA/nccl-tests issue #212；
# NCCL 2.18.1 的发行说明又加入了它的跨节点组合 NVLS + IB SHARP 与 NVLSTree）。2.7.5 的模型里根本没有 NVLS 这一行。
# 所以这张表只用来读**相对**变化（LL 约为 Simple 的 1/4、单机 Tree 慢于 Ring、小消息选 LL），不用来读 H100 的绝对带宽；
# 绝对带宽的预期一律用 lab02 的表。在你的 GPU 机器上，`NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING` 会打印你这个 NCCL 版本
# 自己的表，用它替换这里的 2.7.5 常数。

# %%
show_table(bench_x.nccl_env_table(n_nodes=1, gpus_per_node=8, sizes_bytes=(2**10, 2**20, 2**30)))

# %%
nccl_x.tuning_figure(n_nodes=1, gpus_per_node=8)

# %% [markdown]
# ## 3. 用 NCCL_DEBUG=INFO 看 NCCL 实际选了什么传输
#
# 运行时加 `NCCL_DEBUG=INFO`，NCCL 会为每条 channel 打印它选用的传输方式：节点内正常是 `via P2P/IPC` 或 `P2P/CUMEM`
# （NVLink/PCIe peer），`NCCL_P2P_DISABLE=1` 后变成 `via SHM/direct/direct`（经主机内存中转）；节点间正常是
# `NET/IB/<n>/GDRDMA`（GPUDirect RDMA），IB 不可用时退回 `NET/Socket`——带宽低一个数量级，而且**不会报错**，只会变慢。
# 下面解析课程附带的两段日志样例（NCCL 2.19–2.21 的行格式，数字为示意）：一段走 IB + GDRDMA，一段在 IB 端口出错后退回 Socket。
# 在 GPU 机器上设好 `NCCL_DEBUG_FILE=/tmp/nccl.%h.%p.log`，就能用同一个解析器读你自己的日志。

# %%
for name in ("nccl_debug_ib", "nccl_debug_socket"):
    log = parse_nccl_debug_log(samples.sample(name))
    print(f"{name}: NCCL {log.version}, {log.nranks} ranks, network {log.network}, GPUDirect RDMA {log.uses_gdr}, "
          f"transports {log.transports()}")

# %% [markdown]
# ## 4. 如何读输出
#
# - 第 1 节每行一个设置：峰值 busbw（大消息）与 `wrong`。`wrong` 必须全部为 0；强制 LL128 的那一行尤其要看。
#   CPU 路径只有一行，标明「gloo baseline (CPU path)」：它的数字是 TCP 回环的数字，不是任何 NCCL 设置的数字。
# - 图中每条曲线一个设置：小消息段看延迟（LL/LL128 协议低延迟），大消息段看带宽（Simple 协议、Ring 算法）。
# - 第 2 节的模型表是 NCCL 自己的估算；实测与它的**方向**一致即可，绝对值取决于你的链路。
#
# ## 5. 结论
#
# | 变量 | 类别 | 何时用 | 在 GPU 上的典型效果 |
# |---|---|---|---|
# | `NCCL_P2P_DISABLE=1` | 调试 | 怀疑 P2P（NVLink/PCIe peer）导致挂起或数据错误时 | 节点内带宽降到经主机内存中转的水平 |
# | `NCCL_SHM_DISABLE=1` | 调试 | 容器 `/dev/shm` 太小报错时的临时规避（正解是 `--shm-size`） | P2P 不可用时才有影响 |
# | `NCCL_ALGO=Ring/Tree` | 调试 | 对比算法，复现性能问题 | 强制错误的算法会在某段尺寸上变慢 |
# | `NCCL_PROTO=LL/LL128/Simple` | 调试 | 排查协议相关的数据错误 | 强制 LL 让大消息只剩约 1/4 带宽 |
# | `NCCL_SOCKET_IFNAME`、`NCCL_IB_HCA` | 系统配置 | 多网卡机器上指定网卡 | 选错网卡会挂起或走慢网 |
#
# ## 6. What-if
#
# 1. GPU 上只跑两项对照：`labs.run_env_experiments(["default", "NCCL_P2P_DISABLE=1"])`，算出 P2P 带来的倍数。
# 2. 加 `NCCL_DEBUG=INFO`（`labs.run_collectives(env={"NCCL_DEBUG": "INFO"}, name="lab03_debug")`），在 stdout 里找 `via P2P` 与 `via SHM`。
# 3. 两节点上设错 `NCCL_SOCKET_IFNAME`（例如设成不存在的网卡），看 NCCL 在初始化阶段如何报错——这属于系统配置类变量。
#
# ## 7. 自测题（用你自己的基线运行）
#
# 答案读自 `labs/_runs/lab03_default.json`（GPU 上是「default」那一次，CPU 上是 gloo 基线）。
#
# **题 1**：你的基线里**最小**消息的 out-of-place 时间是多少微秒？（这近似是该路径一次 all-reduce 的延迟下限）

# %%
from labutil.exercises.labs import lab_exercise

answer_1 = None
lab_exercise("lab03.1").check(answer_1)

# %% [markdown]
# **题 2**：你的基线里，最大消息的 busbw 是最小消息 busbw 的多少倍？（表里 busbw 只印两位小数，CPU 路径上小消息会显示 0.00：
# 用 size 与 time 两列自己算——busbw 正比于 $S/t$，同一个 rank 数下的系数在比值里约掉。）

# %%
answer_2 = None
lab_exercise("lab03.2").check(answer_2)

# %% [markdown]
# **题 3**：在你的基线里，最大消息的 in-place 时间与 out-of-place 时间相差百分之多少？（$|t_{in} - t_{out}| / t_{out} \times 100$，
# 填百分数）这两列测的是同一个操作，它们的差就是你这台机器此刻的噪声下限：两个 NCCL 设置的差别小于它，就不能说是变量造成的。
# 在空闲的 GPU 机器上它通常只有几个百分点；在共享的 CPU 机器上可能是几十个百分点。

# %%
answer_3 = None
lab_exercise("lab03.3").check(answer_3)

# %% [markdown]
# ## 参考资料
#
# - NVIDIA NCCL User Guide, "Environment Variables"（`NCCL_PROTO` 的 LL128 数据损坏警告；调试类与系统配置类变量）。
# - NVIDIA NCCL 2.18.1 Release Notes, Known Issues（LL128 在 HGX H100 上的数据损坏与 `NCCL_PROTO=^LL128` 规避）。
# - NVIDIA NCCL `src/graph/tuning.cc`（算法/协议的延迟与带宽常数，v2.7.5-1）与 `src/graph/search.cc`
#   （`speedArrayIntra` 最高 40 GB/s；`sm90SpeedArrayIntra` 从 60 GB/s 起，Hopper 专用）。
# - NVIDIA/nccl-tests issue #212（S. Jeaugey：8×H100 强制 Ring 约 370 GB/s，默认 NVLS 约 480 GB/s）；issue #149（DGX A100
#   的环 busbw 约 230 GB/s）与 #100（HGX A100 的 24 个 channel）。
# - NVIDIA/nccl issue #786（S. Jeaugey：LL128 依赖 128 字节的写按地址顺序到达，只在逐段验证过的平台上默认开启）。
# - NVIDIA/nccl issue #290、#342（`/dev/shm`）。
