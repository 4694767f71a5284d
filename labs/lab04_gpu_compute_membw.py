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
# # 实验 4：GPU 算力与显存带宽实测（lab04）
#
# > 对应第 6 章（GPU 架构与关键指标，roofline）。有 GPU 时测 BF16 GEMM 的 TFLOP/s 与显存拷贝带宽，放到 roofline 上和数据手册比；
# > 没有 GPU 时（CPU 路径）测主机上的 float32 矩阵乘与内存拷贝，并**明确标注**——它们是主机 BLAS 和 DRAM 的数字。
#
# ## 实验目标
#
# 1. 实测 GEMM 吞吐 $\text{TFLOP/s} = 2mnk / t$，看它如何随矩阵尺寸上升并趋于饱和；
# 2. 实测拷贝带宽 $B = 2S/t$（读 S、写 S，STREAM Copy 的计法），并取 **DRAM/HBM 平台值**——不是最快的那一行；
# 3. 把测量点放到 roofline 上：算术强度 $I = \frac{2n^3}{b \cdot 3n^2} = \frac{2n}{3b}$（b 为每元素字节数），可达性能 $\min(P_{peak}, I \cdot B)$；
# 4. 计算「实测 / 数据手册」的比例，并用自己的两个实测值算出本机的**脊点**（ridge point）。
#
# **平台值怎么取。** 拷贝的源与目的地加起来装得进末级缓存（GPU 的 L2，H100 为 50 MB；CPU 的 L3）时，拷贝在缓存里完成，
# 速度可以是内存的好几倍：课程 CI 机器上旧版本从 1 MiB 起测，1 MiB 得到 57.8 GB/s，64 MiB 只有 17.4 GB/s，而脚本取了最快的
# 57.8 当「内存带宽」，于是 roofline 的斜线抬高了三倍多，脊点被算成 1.15 FLOP/B，与它自己「看最大尺寸」的建议自相矛盾。
# 现在的规则：只用不小于 4 倍末级缓存的尺寸（那时源数组至多四分之一还留在缓存里），取它们的中位数；没有这么大的尺寸时
# 取最大的那一个，并在输出里写明「可能部分在缓存里」。CPU 路径的尺寸因此从 64 MiB 起（64、128、256 MiB），GPU 上是
# 64 MiB、256 MiB、1 GiB。
#
# ## 前置条件
#
# - lab01 已确认 GPU 被 torch 看到，且 doctor 把它映射到了课程目录里的条目（否则没有数据手册值可比）；
# - 测量期间不要有别的作业占用 GPU（`nvidia-smi` 里没有其他进程）；
# - 知识：第 6 章的 roofline、Tensor Core 峰值与 HBM 带宽。
#
# ## 实验步骤
#
# 1. 运行测量单元格（GEMM 与拷贝各一条命令，结果写入 `labs/_runs/lab04_gemm.json`、`lab04_membw.json`）；
# 2. 看每个尺寸的 TFLOP/s 与每个大小的 GB/s，找饱和点；读 `# plateau` 一行：它说明平台值用了哪几个尺寸；
# 3. 看 roofline 图与「实测 / 数据手册」表；
# 4. 做自测题（三道，都用你自己的两个结果文件）。
#
# ## 预期结果
#
# GEMM 与拷贝是**单卡**指标，与卡数、NVLink/PCIe、节点数无关：2×/4× PCIe 机器看 PCIe 卡的数据手册，4×/8× NVLink 与 2 节点
# 看 SXM 卡的数据手册，每张卡各测一次即可（`CUDA_VISIBLE_DEVICES=k`）。下一个单元格从课程目录打印几种常见卡的上限——
# 数据手册的稠密 BF16 峰值与显存带宽（来源见每行的 `source`：NVIDIA 各型号数据手册）。实测值一定低于它们：
# 峰值是 Tensor Core 在最高频率下的理论值，大 GEMM 还要付出从 HBM 搬数据与调度的开销，持续满载时功耗墙还会压低频率；
# 拷贝带宽受 DRAM 刷新与读写切换影响。下面给出 H100 SXM 上两个有来源的公开实测作参照；其他型号没有统一的可引用比例，
# 所以更可靠的做法是把每张卡的比例互相比较：**同型号的卡之间比例应当接近**，某一张明显偏低就是要查的对象
# （降频原因看 `nvidia-smi -q -d PERFORMANCE` 的 Clocks Event Reasons，另看功耗墙与 ECC）。
# CPU 路径测的是主机 BLAS 与 DRAM，通常每秒几十到几百 GFLOP、几 GB/s 到几十 GB/s，与 GPU 不可比。
#
# **GPU 上的健康输出（有来源的参考）**：方阵 BF16 GEMM 在大尺寸上进入平台，H100 SXM 的公开实测约为数据手册 989 TFLOP/s
# 的八成——stas00/ml-engineering 的「Maximum Achievable Matmul FLOPS」表（搜索最佳形状，每个形状预热 50 次、再取 100 次的
# 平均）给出 H100 SXM 794.5 TFLOP/s（80.3 %，torch 2.7.0+cu126）、A100 SXM 271.2 / 312（86.9 %）、A100 PCIe 252.9 / 312（81.1 %）；
# 方阵 8192³ 也能到这个水平（zzc0721/torch-performance-test-data issue #79：H100 80GB HBM3 上 BF16 8192³ 797.5 TFLOP/s）。
# 本实验在 GPU 上用同样的计时法（每个尺寸预热 50 次、计时 100 次取平均）：只测 5 次的话，8192³ 在 H100 上一共只有约 7 ms，
# 频率还没被功耗墙压下来，测到的是短时的峰值而不是持续的吞吐。1024³ 的小矩阵只有平台的四分之一上下，这是正常的。
# 拷贝带宽的平台值低于数据手册的 HBM 带宽（数据手册是理论峰值，厂商工程师自己也说它「在真实测试中达不到」，
# ROCm/rocm_bandwidth_test issue #121）。H100 SXM 的一个公开参照：NVIDIA/nccl issue #1264 贴出的 HGX H100 上
# `p2pBandwidthLatencyTest`（CUDA 示例）的对角线——同一张卡上的设备内拷贝，该示例对它按「读 + 写」计字节，与本实验的 2·S/t
# 同一计法——8 张卡都在 2,475–2,515 GB/s，即数据手册 3,350 GB/s 的 74–75 %。你的 H100 SXM 平台值明显低于约 2.5 TB/s，
# 或同一台机器上某张卡比其他卡低一截，就值得查。
#
# **CPU 路径的健康输出**（课程 2 核共享 CI 机器上的实测，随负载波动）：GEMM 0.04–0.1 TFLOP/s（n = 128–512，float32），
# 拷贝平台 6–20 GB/s（机器被别的进程占满时在低端），两者算出的脊点大约 3–15 FLOP/B；`# plateau` 一行写着
# 「median of the 2 size(s) >= 4 x LLC = 128 MiB (LLC 32 MiB)」——这台机器的末级缓存是 32 MiB，所以 64 MiB 那一行不算进平台。
# 如果你的平台行写着「may be partly cache」，说明最大尺寸还不到 4 倍末级缓存，平台值偏高。

# %%
from labutil.notebook import setup, show_table
from labutil.bench import analysis
from labutil.machine import run as labs
from labutil.exercises.labs import lab_exercise
from labutil.explore import bench as bench_x
from labutil import compute, hardware

rng = setup()

# %%
# NBVAL_CHECK_OUTPUT
for name in ("L40S", "H100-PCIe", "A100-80G-SXM", "H100-SXM"):
    g = hardware.gpu(name)
    print(f"{name:13s} bf16 dense {g.peak_tflops('bf16'):7.1f} TFLOP/s  memory {g.hbm_gbs:5.0f} GB/s  "
          f"ridge {g.ridge_flop_per_byte:6.1f} FLOP/B")

# %% [markdown]
# ## 1. GEMM 与拷贝带宽
#
# ```bash
# python -m labutil.bench.gemm --dtype bf16 --sizes 1024,2048,4096,8192 --warmup 50 --iters 100 --out gemm.json
# python -m labutil.bench.membw --sizes 64M,256M,1G --warmup 5 --iters 20 --out membw.json
# ```
# GPU 上计时用 CUDA event（预热后连续执行 n 次再取平均；GEMM 预热 50 次、计时 100 次，与上面引用的 MAMF 表同法）；
# CPU 路径每次调用单独计时、取中位数（共享机器上个别调用会被抢占），GEMM 只测 5 次、拷贝 9 次。
# 输入是随机数而不是全零：GPU 的功耗与数据有关，全零或规律的矩阵让频率更高、数字虚高（Horace He，"Strangely, Matrix
# Multiplications on GPUs Run Faster When Given 'Predictable' Data!"，2024）。
# GPU 上两条命令各在自己的进程里运行；CPU 路径把两个测量依次放进**同一个**子进程
# （`python -m labutil.machine.run labutil.bench.gemm ... :: labutil.bench.membw ...`，参数与结果文件不变），只为少导入一次 torch。

# %%
gemm, membw = labs.run_singles(labs.lab04_jobs("bf16"))
print(gemm["stdout"])
print(membw["stdout"])

# %%
print(f"copy plateau (best_gbs): {membw['best_gbs']:.1f} GB/s — {membw['plateau_rule']}")
print(f"fastest single row: {membw['max_gbs']:.1f} GB/s (not used: it may run from the cache)")
print(f"measured ridge: {gemm['best_tflops'] * 1e12 / (membw['best_gbs'] * 1e9):.1f} FLOP/byte"
      + ("   [CPU path: host BLAS and DRAM]" if membw["cpu_path"] else ""))

# %%
# NBVAL_CHECK_OUTPUT
print(f"GEMM sizes measured: {len(gemm['rows'])}, copy sizes measured: {len(membw['rows'])}")
print("intensity of n x n x n matches 2n/(3b):",
      all(abs(r["intensity_flop_per_byte"] - compute.gemm_intensity(r["m"], r["n"], r["k"], 4 if gemm["dtype"] in ("fp32", "tf32") else 2)) < 1e-9
          for r in gemm["rows"]))

# %% [markdown]
# ## 2. 放到 roofline 上
#
# 灰线是 H100-SXM 数据手册的 roofline（BF16 稠密 989.4 TFLOP/s，HBM3 3,350 GB/s，脊点约 295 FLOP/byte）。
# 在 GPU 上还会画出你这张卡自己的数据手册 roofline（由 `catalog_gpu_name` 找到目录条目）与实测 roofline。
# 方阵 GEMM 的强度随 n 线性增长：BF16 下 n = 1024 时约 341 FLOP/byte，已经越过 H100 的脊点，进入算力受限区；
# 所以在 GPU 上小矩阵吞吐低的主要原因不是带宽，而是 kernel 启动开销和 tile 填不满所有 SM。

# %%
points = analysis.roofline_points(gemm, membw)
bench_x.roofline_figure(points, reference_gpu="H100-SXM")

# %%
h100 = hardware.gpu("H100-SXM")
rows = [{"quantity": "GEMM best (TFLOP/s)", "measured": gemm["best_tflops"], "datasheet": gemm["peak_tflops"],
         "fraction": gemm["fraction_of_peak"]},
        {"quantity": "copy bandwidth, plateau (GB/s)", "measured": membw["best_gbs"], "datasheet": membw["datasheet_gbs"],
         "fraction": membw["fraction_of_datasheet"]},
        {"quantity": "H100-SXM ridge (FLOP/byte)", "measured": None, "datasheet": h100.ridge_flop_per_byte, "fraction": None}]
show_table([{k: ("-" if v is None else v) for k, v in r.items()} for r in rows])

# %% [markdown]
# ## 3. 思考
#
# - CPU 路径下「datasheet」一栏为空：主机 CPU 不在课程的 GPU 目录里，我们不编造一个峰值。
# - 在 GPU 上把 `--dtype` 换成 `tf32` 和 `fp16` 再跑一次：TF32 的峰值只有 BF16 的一半（H100-SXM 494.7 vs 989.4 TFLOP/s）。
# - 拷贝带宽在小尺寸时偏高或偏低都可能：数据落在 L2 缓存里（H100 为 50 MB）时会超过 HBM 的数字——所以默认尺寸从 64 MiB 起步。
#
# ## 4. 如何读输出
#
# - GEMM 表每行一个尺寸：`time_ms` 是一次矩阵乘的时间，`TFLOP/s` 随尺寸上升，小矩阵喂不饱 Tensor Core（以及启动开销占比大），
#   大矩阵趋于平台；`FLOP/B` 是该尺寸的算术强度，随 n 线性增长。
# - 拷贝表每行一个大小：小于末级缓存的拷贝会高于 DRAM/HBM 带宽（在缓存里完成）。`# plateau` 一行给出平台值及其规则
#   （≥ 4 倍末级缓存的尺寸取中位数），roofline、脊点与自测题都只用它；「fastest single row」只是让你看到缓存的效果。
# - roofline 图：横轴算术强度，纵轴性能；测量点在斜线（带宽限制）与水平线（算力限制）构成的屋顶之下。
#
# ## 常见问题与排查
#
# - **GEMM 远低于同型号其他卡**：先看 `nvidia-smi -q -d PERFORMANCE` 的 Clocks Event Reasons——`SW Power Cap`（功耗墙）、
#   `HW Slowdown`/`HW Thermal Slowdown`（过热或电源告警）是最常见的原因；再看 `nvidia-smi -q -d ECC` 有没有不断增长的可纠正错误。
# - **小尺寸 TFLOP/s 很低**：正常。1024³ 的 BF16 GEMM 在 H100 上只需几十微秒，启动开销与尾部效应占了很大比例；
#   看平台值要用 4096 以上的尺寸。
# - **拷贝带宽高于数据手册**：数据落在 L2 缓存里了（H100 为 50 MB），把尺寸调到 256 MiB 以上。
# - **CPU 路径的数字每次都不同**：共享的 2 核机器上别的进程在抢 CPU；这正是检查单元只核对「测了几个尺寸」「公式是否一致」的原因。
#
# ## 5. What-if
#
# 1. `--dtype fp16` 与 `--dtype tf32` 再测一次 GEMM：TF32 的峰值约为 BF16 的一半，实测比例是否相同？
# 2. 在 GPU 上把 `--sizes` 加上 `16384`：平台是否继续上升？观察 `nvidia-smi dmon` 的功耗与频率。
# 3. 两张同型号的卡各测一次（`CUDA_VISIBLE_DEVICES=0` 与 `=1`），比较两者的「实测 / 数据手册」比例。
#
# ## 6. 自测题（用你自己的测量）
#
# **题 1**：用你测得的最佳 GEMM 吞吐与**拷贝带宽平台值**（`copy plateau` 一行，不是最快的一行），算出本机的脊点（FLOP/byte）：
# $I^* = P_{实测} / B_{平台}$。

# %%
answer_1 = None
lab_exercise("lab04.1").check(answer_1)

# %% [markdown]
# **题 2**：按你测得的拷贝带宽平台值，拷贝 10 GB（读 10 GB + 写 10 GB）需要多少毫秒？

# %%
answer_2 = None
lab_exercise("lab04.2").check(answer_2)

# %% [markdown]
# **题 3**：在你自己的 roofline 上（峰值 = 最佳 GEMM，斜线 = 拷贝平台值），一个算术强度为 1 FLOP/byte 的 kernel
# （例如每个 fp32 元素读一次、写一次、中间做 8 次浮点运算的逐元素函数）最多能跑多少 TFLOP/s？$\min(P, I \times B)$。
# CPU 上答案是零点零几 TFLOP/s；在 H100 SXM 上即使按数据手册的 3.35 TB/s 算也不到 3.4 TFLOP/s，不到 BF16 峰值的三百分之一——
# 这就是逐元素算子要做算子融合的原因。

# %%
answer_3 = None
lab_exercise("lab04.3").check(answer_3)

# %% [markdown]
# ## 参考资料
#
# - NVIDIA H100 / A100 / L40S 数据手册（`labutil/data/gpus.toml` 中每个条目的 `source`）。
# - J. McCalpin, STREAM benchmark FAQ（Copy 按 2×S 计字节）。
# - S. Williams et al., "Roofline: An Insightful Visual Performance Model", CACM 2009。
# - stas00/ml-engineering，`compute/accelerator/README.md` 的「Maximum Achievable Matmul FLOPS comparison table」（BF16 MAMF）。
# - zzc0721/torch-performance-test-data issue #79（H100 80GB HBM3 方阵 GEMM 实测）；ROCm/rocm_bandwidth_test issue #121
#   （数据手册带宽是理论峰值）。
# - Horace He, "Strangely, Matrix Multiplications on GPUs Run Faster When Given 'Predictable' Data!"（thonking.ai，2024；
#   数据决定功耗，进而决定频率）。
# - NVIDIA/nccl issue #1264（HGX H100 上 `p2pBandwidthLatencyTest` 的完整输出，对角线即设备内拷贝）；NVIDIA cuda-samples
#   `p2pBandwidthLatencyTest.cu`（对角线「must count both the read and the write」，字节数乘 2）。
