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
# - 区分 NCCL 文档里的两类变量：**系统配置类**（`NCCL_SOCKET_IFNAME`、`NCCL_IB_HCA` 等，可以写进作业脚本）与
#   **调试类**（`NCCL_P2P_DISABLE`、`NCCL_SHM_DISABLE`、`NCCL_ALGO`、`NCCL_PROTO`：文档明确说不应在生产中保留，否则可能性能变差、崩溃或挂起）；
# - 亲手测出关闭 P2P / SHM 的代价，理解为什么它们只能当「诊断开关」；
# - 看懂算法（Ring / Tree）与协议（LL / LL128 / Simple）在不同消息大小上的取舍。

# %%
from labutil.notebook import setup, show_table
from labutil.bench import labs
from labutil.explore import bench as bench_fig
from labutil.explore import nccl as nccl_fig
from labutil.parsers import parse_nccl_debug_log, samples
from labutil import nccl_tuning

rng = setup()
on_gpu = labs.backend() == "nccl"
print("backend:", labs.backend(), "| experiments:", list(labs.NCCL_ENV_EXPERIMENTS) if on_gpu else ["gloo baseline"])

# %% [markdown]
# ## 1. 运行
#
# GPU 上每个实验是一条 torchrun 命令，只差一个环境变量，例如：
#
# ```bash
# NCCL_P2P_DISABLE=1 NCCL_DEBUG=INFO torchrun --nproc-per-node=4 -m labutil.bench.collectives --op all_reduce -b 8 -e 1G -f 4
# ```

# %%
if on_gpu:
    runs = labs.run_env_experiments()
else:
    runs = {"gloo baseline (CPU path)": labs.run_collectives("all_reduce", tag="lab03")}
for name, r in runs.items():
    print(f"{name:28s} peak busbw {max(x['out_of_place']['busbw_gbs'] for x in r['rows']):8.3f} GB/s  wrong={r['wrong_total']}")

# %%
# NBVAL_CHECK_OUTPUT
print("experiments defined:", len(labs.NCCL_ENV_EXPERIMENTS))
print("every run correct (wrong = 0):", all(r["wrong_total"] == 0 for r in runs.values()))

# %%
bench_fig.busbw_figure(list(runs.values()), labels=list(runs))

# %% [markdown]
# ## 2. GPU 上会看到什么：NCCL 自己的预测
#
# NCCL 为每个（算法, 协议）组合估算 $t = \text{latency} + S / \text{algbw}$，取最小者（`src/graph/tuning.cc`）。
# 下表用 NCCL 2.8 的调优常数，对单机 8 卡 NVLink（16 个 channel × 20 GB/s）预测不同设置下 1 KiB、1 MiB、1 GiB 的 busbw。
# `NCCL_PROTO=LL` 在大消息上只剩约 1/4 带宽（LL 每 8 字节里只有 4 字节数据、另 4 字节是标志位），`NCCL_ALGO=Tree` 在单机上
# 大消息明显慢于 Ring——这就是为什么不能把这些变量「调好」后留在脚本里。

# %%
rows = []
for name, enabled in nccl_fig.ENV_PRESETS.items():
    t = nccl_tuning.allreduce_table([1024, 2**20, 2**30], 8, 1, n_channels=16, speed_gbs=20.0, enabled=enabled)
    b = t.busbw_gbs(8)
    rows.append({"setting": name, "1 KiB": f"{b[0]:.2f} ({t.choice[0]})", "1 MiB": f"{b[1]:.1f} ({t.choice[1]})",
                 "1 GiB": f"{b[2]:.0f} ({t.choice[2]})"})
show_table(rows)

# %%
nccl_fig.tuning_figure(n_nodes=1, gpus_per_node=8)

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
# ## 4. 结论
#
# | 变量 | 类别 | 何时用 | 在 GPU 上的典型效果 |
# |---|---|---|---|
# | `NCCL_P2P_DISABLE=1` | 调试 | 怀疑 P2P（NVLink/PCIe peer）导致挂起或数据错误时 | 节点内带宽降到经主机内存中转的水平 |
# | `NCCL_SHM_DISABLE=1` | 调试 | 容器 `/dev/shm` 太小报错时的临时规避（正解是 `--shm-size`） | P2P 不可用时才有影响 |
# | `NCCL_ALGO=Ring/Tree` | 调试 | 对比算法，复现性能问题 | 强制错误的算法会在某段尺寸上变慢 |
# | `NCCL_PROTO=LL/LL128/Simple` | 调试 | 排查协议相关的数据错误 | 强制 LL 让大消息只剩约 1/4 带宽 |
# | `NCCL_SOCKET_IFNAME`、`NCCL_IB_HCA` | 系统配置 | 多网卡机器上指定网卡 | 选错网卡会挂起或走慢网 |
