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
# > busbw 的换算、结果校验和 α-β 拟合完全一样。
#
# ## 实验目标
#
# 1. 用 `torchrun -m labutil.bench.collectives` 跑一次与 nccl-tests 同格式的 all-reduce 扫描，理解 `-b/-e/-f/-n/-w/-c` 每个参数；
# 2. 看懂结果校验：每个尺寸额外做一次调用，用**解析给出的期望值**在数据所在的设备上逐元素比较，`#wrong` 必须为 0；
# 3. 画出 busbw 随消息大小的曲线，理解「小消息受延迟 α 支配、大消息趋近带宽 B」；
# 4. 用加权最小二乘拟合 $t(S) = a + b\,S$，换算出每步延迟 $\alpha$ 与带宽 $B$，并用它**预测**一个没测过的尺寸；
# 5. 把实测值放到「这台机器的拓扑应当达到多少」的旁边——这就是第 22 章验收的做法。
#
# ## 前置条件
#
# - 完成实验 1（`python -m labutil doctor`），知道自己的机器属于哪一类：CPU 路径、PCIe 多卡、NVLink 多卡；
# - 软件：本仓库的环境（`make setup`），GPU 机器上需要 CUDA 版 torch（torch 自带 NCCL，无需另装）；
# - 知识：第 13 章的环形 all-reduce 与 busbw 定义。
#
# ## 测量方法（与 nccl-tests 一致）
#
# 每个尺寸先做 `-w` 次不计时的预热（第一次集合通信还要建立连接，比之后慢几个数量级），`barrier` 之后执行 `-n` 次（两条路径都是 20 次）并计时。
# GPU 上与 nccl-tests 相同：用 CUDA event 包住 20 次连续调用，取平均（事件记录在当前流上；`dist.all_reduce` 同步调用时
# PyTorch 让当前流等待 NCCL 流完成，所以结束事件落在最后一次 all-reduce 之后）。CPU 路径（gloo 的调用是同步的）**逐次**计时，取 20 次的**中位数**：
# 共享的 2 核机器上偶尔有一次调用被别的进程抢占，平均值会被它拖走，中位数不会（旧版本取 5 次的平均，同一个 1 KiB 的调用
# out-of-place 测得 752 µs、in-place 测得 3,064 µs，拟合因此很差）。各 rank 的时间再取平均（`-a 1`）。然后：
#
# $$\text{algbw} = \frac{S}{t},\qquad \text{busbw} = \text{algbw}\times\frac{2(n-1)}{n}\quad(\text{all-reduce})$$
#
# 校验（`-c 1`，默认开启）：每个 rank 的输入是确定的小整数图样 $v(i,r) = ((i+3r) \bmod 4) + 1$，于是 all-reduce 的正确结果
# 是周期为 4 的解析值，先按消息的数据类型舍入一次，再在 GPU（或 CPU）上与收到的数据分块比较，容差为该类型 2 个舍入单位。
# 校验不复制其他 rank 的数据，每个 rank 的内存不超过「3 × 最大消息 + 128 MiB」（输出里会打印实测的峰值增长），所以它可以一直开着。

# %%
from labutil.notebook import setup, show_table
from labutil.bench import analysis
from labutil.machine import expect
from labutil.machine import run as labs
from labutil.exercises.labs import lab_exercise
from labutil.explore import bench as bench_x
from labutil.parsers import parse_nccl_tests
from labutil import comm, nccl_tuning

rng = setup()
print("backend:", labs.backend(), "| ranks:", labs.lab_ranks())

# %% [markdown]
# ## 1. 预期结果：五种典型配置
#
# 先写下预期，再去测——验收永远是「实测 vs 预期」。下表由课程唯一的通信模型 `labutil.cluster` 算出（大消息的 all-reduce busbw）：
#
# | 配置 | 预期 busbw | 依据 |
# | --- | --- | --- |
# | 2× / 4× PCIe Gen4 x16 GPU（经 PCIe 交换芯片 P2P） | 约 26 GB/s | PCI-SIG PCIe 4.0：x16 每方向 31.5 GB/s；模型的环效率 370/450 |
# | 4× H100 SXM（同一 HGX 节点内） | 约 370 GB/s | NVLink 环实测上限（`systems.toml` 中 DGX-H100 的 busbw 来源） |
# | 8× H100 SXM（DGX/HGX H100） | 约 480 GB/s | NVLink SHARP（NVLS），8 卡实测 480 GB/s，同上来源 |
# | 2 节点 × 8× H100，每节点 8× 400G NDR | 约 370 GB/s（`NCCL_ALGO=Ring`，验收用它；默认的 NVLS-Tree 约 480 GB/s） | 每个 rail 一个环：min(NVLink 环, 8 × 48 GB/s)，`labutil.cluster` |
#
# 两点要诚实说明：其一，**PCIe 机器上很多 GPU 对走的是 CPU 的根复合体（拓扑码 PHB/NODE/SYS）**，P2P 可能被禁用，
# 这时 NCCL 经主机内存中转，busbw 明显低于上表，课程目录里没有可引用的实测数，所以不给数字——用你自己的测量来定；
# 其二，大多数 2–4 卡的实验机是 PCIe 机器，**不要期待 NVLink 级别的数字**。
#
# **CPU 路径的健康输出**（gloo 走 TCP 回环，没有 GPU 互联可言；以下是课程 2 核共享 CI 机器上的实测，随负载波动）：
# 小消息（1 KiB）一次 all-reduce 约 0.3–0.9 ms，而不是 GPU 上的几十微秒；机器空闲时 busbw 在 1 MiB 附近最高，约 1–2 GB/s，
# 4 MiB 以上的消息 busbw 反而**掉到** 0.4–0.5 GB/s 左右——消息不再装得进 CPU 缓存，gloo 的归约与 TCP 拷贝都要走内存，
# 每字节的代价变了；机器被别的进程占满时，整张表会整体慢几倍，某些中等尺寸甚至慢十倍（两次实测的峰值 busbw：1.7 与 0.4 GB/s）。
# `#wrong` 必须全为 0，内存峰值必须在界内——这两条与负载无关，是 CPU 路径上真正的「健康」标准。带宽的「两段式」与抖动
# 正是下面拟合要诚实面对的：一条直线描述不了两种机制，拟合质量单元会把这一点打印出来。
#
# **GPU 上的健康输出**：NVLink 机器上 8 B–几 KiB 的消息时间几乎不变（由延迟决定：NCCL 本身是几微秒到十几微秒，而这里每次调用
# 还要经过 Python 与 PyTorch 的 ProcessGroupNCCL，所以小消息的时间比 C 写的 nccl-tests 的表高一些；大消息不受影响），
# busbw 从 64 MiB 起进入平台，
# 8×H100 的平台约 480 GB/s（NVLS）、强制 Ring 约 370 GB/s；PCIe Gen4 同交换芯片的两张卡平台约 26 GB/s。
# 平台值达到预期的 80 % 以上、`#wrong` 全为 0，就是健康的（第 22 章验收用同一条线）。

# %%
# NBVAL_CHECK_OUTPUT
for row in expect.reference_cases("all_reduce"):
    print(f"{row['case']:38s} ranks {row['ranks']:2d}  expected busbw {row['busbw_gbs']:6.1f} GB/s")

# %% [markdown]
# ## 2. 运行扫描
#
# 单元格在子进程中执行下面这条命令（参数列表 + 空闲端口 + 超时；从 notebook 里**不要**用 `mp.spawn`）。
# 参数先在本进程里检查一遍：写错一个参数只会得到一行错误，不会启动 torchrun。
#
# ```bash
# # CPU 路径（2 个 gloo 进程）：1 KiB – 16 MiB，每次 ×4，8 个尺寸
# python -m torch.distributed.run --nnodes=1 --nproc-per-node=2 --rdzv-backend=c10d --rdzv-endpoint=127.0.0.1:<port> \
#     -m labutil.bench.collectives --op all_reduce -b 1K -e 16M -f 4 -n 20 -w 3 --backend gloo --out labs/_runs/lab02_all_reduce.json
# # GPU 路径（每张卡一个进程，最多 4 张）：8 B – 1 GiB，每次 ×2，28 个尺寸（nccl-tests README 的 -b 8 -f 2 扫法）
# python -m torch.distributed.run --nnodes=1 --nproc-per-node=4 --rdzv-backend=c10d --rdzv-endpoint=127.0.0.1:<port> \
#     -m labutil.bench.collectives --op all_reduce -b 8 -e 1G -f 2 -n 20 -w 3 --backend nccl --out labs/_runs/lab02_all_reduce.json
# ```
#
# 两条路径都是 `-n 20`，结果写入 `labs/_runs/lab02_all_reduce.json`，自测题读的就是这个文件。GPU 上每个 rank 最多占
# 3 × 1 GiB + 128 MiB 显存，任何 16 GB 以上的卡都放得下；下一个单元格也打印本机实际运行的命令。

# %%
print("command:", labs.sweep_command("all_reduce"))
res = labs.run_collectives("all_reduce", name="lab02_all_reduce")
print(res["stdout"])
mem = res["memory"]
print(f"peak memory growth per rank: {mem['max_growth_bytes'] / 2**20:.0f} MiB "
      f"(bound 3 x largest message + 128 MiB = {mem['bound_bytes'] / 2**20:.0f} MiB, within: {mem['within_bound']})")

# %% [markdown]
# ## 3. 如何读输出
#
# - 表头 `# Using devices` 每个 rank 一行：rank 号、进程号、主机名、设备号与 PCI 总线号。两节点运行时这里能看到两台主机。
# - `size` 是整个消息的字节数，`count` 是元素个数，`type`/`redop` 是数据类型与归约操作。
# - `out-of-place` 与 `in-place` 两组列：`time` 是每次调用的微秒数（GPU：20 次连续调用的平均；CPU 路径：20 次逐次计时的
#   中位数，表头 `# time:` 一行写明），`algbw = S/t`，`busbw` 是换算到「每条链路上」的带宽，
#   可以直接与链路速率比较；`#wrong` 是校验出错的元素个数（所有 rank 求和）。
# - 末尾 `Out of bounds values : 0 OK` 表示没有出错的行，`Avg bus bandwidth` 是所有行 busbw 的平均——它被小消息拉低，
#   **验收只看大消息的平台值**，不要拿这个平均值去和链路速率比。

# %%
# NBVAL_CHECK_OUTPUT
parsed = parse_nccl_tests(res["stdout"])
print(f"op: {parsed.op}, ranks: {parsed.n_ranks}, sizes measured: {len(parsed.rows)}")
print(f"parsed rows == JSON rows: {parsed.sizes_bytes == [r['size_bytes'] for r in res['rows']]}")
print(f"wrong = {parsed.total_wrong()}")

# %% [markdown]
# ## 4. busbw 随消息大小的变化
#
# 小消息时曲线贴着 0：每次调用的固定开销（内核启动、同步、协议握手——α 项）远大于传输时间。消息越大，固定开销被摊薄，
# busbw 逐渐逼近链路能给出的带宽。

# %%
arr = analysis.collective_arrays(res)
fit = analysis.fit_alpha_beta(arr["size_bytes"], arr["time_s"], "all_reduce", res["world_size"])
bench_x.busbw_figure(res, fit=fit)

# %% [markdown]
# ## 5. 和这台机器的预期并排
#
# `labs.expectation` 先用 `labutil doctor` 判断你属于哪种情形（CPU 路径 / 单卡 / PCIe / NVLink，有没有 NVLS），
# 再用 `labutil.cluster` 算出这个拓扑、这个 rank 数下大消息应达到的 busbw，和你测到的峰值 busbw 并排打印。
# 实测 / 预期在 0.8 以上算正常；明显偏低时按第 22、28 章的顺序查：拓扑（是否走了 SYS）、P2P 是否被禁用（实验 3）、PCIe 链路是否降速（实验 1 的 doctor）。

# %%
exp = labs.expectation(res)
print(f"case: {exp['case']} — {exp['summary']}")
print(f"measured peak busbw: {exp['measured_gbs']:.3f} GB/s")
if exp["expected_gbs"] is None:
    print("expected:", exp["why"])
else:
    print(f"expected (labutil.cluster): {exp['expected_gbs']:.1f} GB/s, measured/expected = {exp['ratio']:.2f}")

# %% [markdown]
# ## 6. α-β 拟合，与模型并排
#
# 环形 all-reduce 的 α-β 模型（第 13 章）：$t = 2(n-1)\,\alpha + \frac{2(n-1)}{n}\cdot\frac{S}{B}$。对实测时间做加权最小二乘
# （按相对误差加权，否则只有最大的几个尺寸起作用）得到 $t = a + bS$，于是 $\alpha = a / (2(n-1))$，$B = \frac{2(n-1)}{n} / b$。
# 把拟合出的 α、B 代回 `comm.collective_time_s` 得到的曲线与拟合线完全重合——拟合与课程模型用的是同一个公式。
# 作为参照，图中还画了 H100-SXM 节点内 NVLink 的模型：每方向 450 GB/s（目录值 900 GB/s 双向的一半），
# α 取 NCCL `tuning.cc` 中 NVLink 上 Ring/Simple 的每步硬件延迟 3.4 µs。

# %%
h100_ref = {"label": "model: H100-SXM NVLink ring (450 GB/s, 3.4 us/step)",
            "bw_gbs": comm.nvlink_per_direction_gbs("H100-SXM"), "latency_s": nccl_tuning.HW_LAT_US["nvlink"]["ring"][2] * 1e-6}
print(f"fit: a = {fit.a_s * 1e6:.1f} us, b = {fit.b_s_per_byte:.3e} s/B, alpha = {fit.latency_s * 1e6:.1f} us/step, "
      f"B = {fit.bw_gbs:.3f} GB/s, R^2(log t) = {fit.r2_log:.2f}" + ("   [CPU path: gloo, not NCCL]" if res["cpu_path"] else ""))
bench_x.alpha_beta_figure(res, fit, h100_ref)

# %%
show_table([{"size (B)": int(s), "time (us)": round(t * 1e6, 1), "busbw (GB/s)": round(b, 4),
             "model time (us)": round(float(m) * 1e6, 1)}
            for s, t, b, m in zip(arr["size_bytes"], arr["time_s"], arr["busbw_gbs"], fit.model_s(arr["size_bytes"]))])

# %% [markdown]
# ## 7. 各种配置下你会看到什么
#
# - **CPU 路径**：每步延迟 α 在一两百微秒（gloo 每步都要经过内核的 TCP 协议栈，共享的 2 核机器上还有调度抖动），B 在零点几到
#   一两 GB/s，并且常常出现上面说的「4 MiB 以上变慢」的第二段，于是 $R^2$ 明显低于 1。每次运行数字都不同，
#   所以检查单元只核对「正确性」「测了几个尺寸」「内存在界内」，不核对带宽。
# - **2× PCIe GPU**：n = 2 时 busbw 系数为 1，busbw = algbw；大消息平台应接近上表 26 GB/s（同一 PCIe 交换芯片下），
#   若两卡分属两个 CPU（SYS），通常明显更低。
# - **4× PCIe GPU**：环上最慢的一跳决定全环；只要有一跳走 SYS，整体就被拖到那一跳的速度。
# - **4×/8× NVLink GPU**：α 在几微秒，大消息 busbw 数百 GB/s；8 卡 H100 开启 NVLS 时 all-reduce 可超过 NVLink 环的上限。
# - **2 节点**：跨节点的每个环经过一块网卡，busbw 受 min(NVLink 环, 每节点网卡总带宽 / 8 × 8) 约束（第 14、22 章），
#   用 `labs/slurm/nccl_bench.sbatch` 提交（见 labs/README.md）。
#
# ## 8. What-if：动手改一改
#
# 1. 把 `maxbytes` 调到 `"64M"`（GPU 上 `"4G"`）、`iters` 调到 20 再跑：拟合的 $R^2$ 是否更接近 1？预测 1 GiB 的误差变小了吗？
# 2. `labs.run_collectives("all_gather", name="lab02_all_gather")`：all-gather 的 busbw 系数是 $(n-1)/n$，与 all-reduce 比较平台值。
# 3. 在 GPU 机器上用 `CUDA_VISIBLE_DEVICES=0,1` 与 `0,3` 各测一次（先在 lab01 的拓扑里找一对 PIX、一对 SYS），对比平台值。
# 4. `labs.run_collectives(..., nproc=3)`：rank 数不是 2 的幂时，busbw 的系数如何变化？
#
# ## 9. 自测题（用你自己的测量）
#
# 答案从你刚写出的 `labs/_runs/lab02_all_reduce.json` 计算，所以每台机器的参考答案都不同。填入数字后运行单元格。
# 答错时判分信息会告诉你偏大还是偏小，并指向 `lab_exercise("lab02.1").hint(1)`；重新测量后参考答案随之改变，
# 所以每次重跑测量单元格之后，要用新的输出重新作答。
#
# 先看拟合质量：题 1 要用直线预测 1 GiB，在 CPU 路径上这比扫到的最大尺寸（16 MiB）远 64 倍（GPU 上 1 GiB 就是扫描的最后一行）。
# 大消息的预测靠的是斜率 $b$，而 $b$ 由扫描上端的几个尺寸决定，所以它只有在直线确实描述了这几个尺寸时才站得住。下面逐个尺寸
# 打印残差（实测比直线慢为正），并按课程的规则判断：$R^2(\log t) \ge 0.95$，且扫描上端（不小于最大尺寸的 1/16）每个残差都在
# ±25 % 以内，才算「可信」。中间尺寸上 NCCL 切换协议造成的弯折不影响这个判断。这条规则不是外部数字，而是一个自洽的底线：
# 直线连它拟合过的大尺寸都差出四分之一，再往外走误差只会更大。规则不满足时，题 1 照样能判分（它考的是会不会算），
# 但判分信息会提醒你这个预测不可信。

# %%
quality = analysis.fit_quality(fit, arr["size_bytes"], arr["time_s"])
show_table([{"size (B)": int(sz), "measured (us)": round(t * 1e6, 1), "line a+bS (us)": round(float(fit.predict_s(sz)) * 1e6, 1),
             "residual (%)": round(float(r), 1)} for sz, t, r in zip(arr["size_bytes"], arr["time_s"], quality["residual_pct"])])

# %%
print(f"R^2(log t) = {quality['r2_log']:.3f}, largest |residual| = {quality['max_abs_residual_pct']:.0f} % "
      f"(top of the sweep: {quality['upper_max_abs_residual_pct']:.0f} %), "
      f"residual at the largest size = {quality['largest_size_residual_pct']:+.0f} %")
print("predicting 1 GiB from this line is", "defensible" if quality["extrapolation_ok"] else "NOT defensible",
      f"by the course rule ({quality['rule']})")

# %% [markdown]
# **题 1**：用你拟合得到的 $a$、$b$，预测一次 **1 GiB**（$2^{30}$ 字节）all-reduce 的时间，单位毫秒。
# 读上面两行：拟合质量不够时，这个数字只是「直线上的算术」，不要把它写进任何容量规划。

# %%
answer_1 = None  # 例如 answer_1 = 123.4
lab_exercise("lab02.1").check(answer_1)

# %% [markdown]
# **题 2**：你的扫描在多大的消息上达到大消息带宽的一半？（半带宽点 $S_{1/2} = a/b$，单位 KiB）

# %%
answer_2 = None
lab_exercise("lab02.2").check(answer_2)

# %% [markdown]
# **题 3**：你的拟合给出的带宽 $B$ 是多少 GB/s？（第 6 节 `fit:` 一行的 B）把它和表中最大消息的 busbw 比一比：
# 直线模型成立时两者接近（大消息的 busbw 趋近 B）；差得很远，说明你的机器上有两种机制（CPU 路径上常见的缓存断崖），
# 这时 B 描述的是拟合权重最大的那一段，而不是最大消息真正能跑到的速度。

# %%
answer_3 = None
lab_exercise("lab02.3").check(answer_3)

# %% [markdown]
# ## 参考资料
#
# - NVIDIA nccl-tests `doc/PERFORMANCE.md`（algbw/busbw 定义）与 `src/common.cu`（参数、校验方法）。
# - NVIDIA NCCL `src/graph/tuning.cc`（每步硬件延迟）。
# - PCI-SIG PCI Express Base Specification 4.0（16 GT/s，128b/130b）。
# - `labutil/data/systems.toml`：DGX-H100 的 NVLink 环 370 GB/s、NVLS 480 GB/s 实测来源（`labutil.cluster` 使用；
#   S. Jeaugey 在 NVIDIA/nccl-tests issue #212 中给出的数字）。
# - 第 22 章：实测 / 预期 ≥ 80 % 的验收线。
