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
# # 实验 2：NCCL all-reduce 带宽测试（lab02）
#
# > 对应第 13 章（集合通信原理）与第 22 章（NCCL Test 与带宽验收）。有 2–4 张 GPU 时本实验用 NCCL 在 GPU 上测；
# > 没有 GPU 时用 **2 个 gloo 进程走回环网卡（CPU 路径）**——数字不是 GPU 互联的数字，但测量方法、表格格式、
# > busbw 的换算和 α-β 拟合完全一样。
#
# ## 实验目标
#
# - 用 `torchrun -m labutil.bench.collectives` 跑一次与 nccl-tests 同格式的 all-reduce 扫描（`-b/-e/-f/-n/-w/-c` 参数含义相同）；
# - 用 `labutil.parsers.parse_nccl_tests` 解析输出，确认 `#wrong = 0`；
# - 画出 busbw 随消息大小的曲线，理解「小消息受延迟 α 支配、大消息趋近带宽 B」；
# - 用最小二乘拟合 $t(S) = a + b\,S$，换算出每步延迟 $\alpha$ 与带宽 $B$，并与 `labutil.comm.collective_time_s` 的模型并排比较。
#
# 测量方法（与 nccl-tests 一致）：每个尺寸先做 `-w` 次不计时的预热（第一次集合通信还要建立连接，比之后慢几个数量级），
# `barrier` 之后连续执行 `-n` 次并计时（GPU 上用 CUDA event，CPU 上用 `perf_counter`），取每次的平均，再在各 rank 间取平均。
#
# $$\text{algbw} = \frac{S}{t},\qquad \text{busbw} = \text{algbw}\times\frac{2(n-1)}{n}\quad(\text{all-reduce})$$

# %%
from labutil.notebook import setup, show_table
from labutil.bench import analysis, labs
from labutil.explore import bench as bench_fig
from labutil.parsers import parse_nccl_tests
from labutil import comm, nccl_tuning

rng = setup()
print("backend:", labs.backend(), "| ranks:", labs.lab_ranks())

# %% [markdown]
# ## 1. 运行扫描
#
# 单元格在子进程中执行下面这条命令（参数列表 + 空闲端口 + 超时；从 notebook 里**不要**用 `mp.spawn`）：
#
# ```bash
# python -m torch.distributed.run --nnodes=1 --nproc-per-node=2 --rdzv-backend=c10d --rdzv-endpoint=127.0.0.1:<port> \
#     -m labutil.bench.collectives --op all_reduce -b 1K -e 16M -f 4 -n 5 -w 3 --backend gloo --out labs/_runs/...json
# ```

# %%
res = labs.run_collectives("all_reduce")
print(res["stdout"])

# %%
# NBVAL_CHECK_OUTPUT
parsed = parse_nccl_tests(res["stdout"])
print(f"op: {parsed.op}, ranks: {parsed.n_ranks}, sizes measured: {len(parsed.rows)}")
print(f"parsed rows == JSON rows: {parsed.sizes_bytes == [r['size_bytes'] for r in res['rows']]}")
print(f"wrong = {parsed.total_wrong()}")

# %% [markdown]
# ## 2. busbw 随消息大小的变化
#
# 小消息时曲线贴着 0：每次调用的固定开销（内核启动、同步、协议握手——α 项）远大于传输时间。消息越大，固定开销被摊薄，
# busbw 逐渐逼近链路能给出的带宽。**验收时只看大消息的平台值**（第 22 章）；小消息的数字用来看延迟。

# %%
arr = analysis.collective_arrays(res)
fit = analysis.fit_alpha_beta(arr["size_bytes"], arr["time_s"], "all_reduce", res["world_size"])
bench_fig.busbw_figure(res, fit=fit)

# %% [markdown]
# ## 3. α-β 拟合，与模型并排
#
# 环形 all-reduce 的 α-β 模型（第 13 章）：$t = 2(n-1)\,\alpha + \frac{2(n-1)}{n}\cdot\frac{S}{B}$。对实测时间做加权最小二乘
# （按相对误差加权，否则只有最大的几个尺寸起作用）得到 $t = a + bS$，于是 $\alpha = a / (2(n-1))$，$B = \frac{2(n-1)}{n} / b$。
# 把拟合出的 α、B 代回 `comm.collective_time_s` 得到的曲线与拟合线完全重合——这说明拟合与课程模型使用的是同一个公式。
# 作为参照，图中还画了一台 H100-SXM 节点内 NVLink 的模型：每方向 450 GB/s（目录值 900 GB/s 双向的一半），
# α 取 NCCL `tuning.cc` 中 NVLink 上 Ring/Simple 的每步硬件延迟 3.4 µs。

# %%
h100_ref = {"label": "model: H100-SXM NVLink ring (450 GB/s, 3.4 us/step)",
            "bw_gbs": comm.nvlink_per_direction_gbs("H100-SXM"), "latency_s": nccl_tuning.HW_LAT_US["nvlink"]["ring"][2] * 1e-6}
print(f"fit: a = {fit.a_s * 1e6:.1f} us, alpha = {fit.latency_s * 1e6:.1f} us/step, B = {fit.bw_gbs:.3f} GB/s, "
      f"R^2(log t) = {fit.r2_log:.2f}")
bench_fig.alpha_beta_figure(res, fit, h100_ref)

# %% [markdown]
# ## 4. 读数与思考
#
# - CPU 路径下 B 通常只有零点几到几 GB/s，α 在几十到几百微秒：gloo 走 TCP 回环，每步都要经过内核协议栈；
#   共享的 2 核机器上其他进程还会抢占 CPU，所以每次运行的数字都会不同——这正是为什么实验输出的检查单元只核对「正确性」和「测了几个尺寸」，不核对带宽。
# - 在 GPU 上重跑：`B` 应接近 NVLink 每方向带宽的 80%–90%，`α` 在几微秒量级。如果只有几十 GB/s，回到 lab01 看拓扑——
#   很可能走了 PCIe（PIX/PHB/SYS），或者 P2P 被禁用了（lab03）。
# - 把 `-e` 调大到 1G、把 `-n` 调到 50，再看拟合的 $R^2$ 是否更接近 1。

# %%
show_table([{"size (B)": int(s), "time (us)": round(t * 1e6, 1), "busbw (GB/s)": round(b, 4),
             "model time (us)": round(float(m) * 1e6, 1)}
            for s, t, b, m in zip(arr["size_bytes"], arr["time_s"], arr["busbw_gbs"], fit.model_s(arr["size_bytes"]))])
