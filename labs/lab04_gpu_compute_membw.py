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
# - 实测 GEMM 吞吐 $\text{TFLOP/s} = 2mnk / t$，看它如何随矩阵尺寸上升并趋于饱和；
# - 实测拷贝带宽 $B = 2S/t$（读 S、写 S，STREAM Copy 的计法）；
# - 把测量点放到 roofline 上：算术强度 $I = \frac{2n^3}{b \cdot 3n^2} = \frac{2n}{3b}$（b 为每元素字节数），可达性能 $\min(P_{peak}, I \cdot B)$；
# - 计算「实测 / 数据手册」的比例：一台健康的 H100-SXM，BF16 大 GEMM 通常能到稠密峰值的 60%–80%，拷贝带宽到 HBM 标称值的 80%–90%——
#   远低于这个比例时，先查功耗墙、降频（`nvidia-smi -q -d PERFORMANCE` 的 Clocks Event Reasons）与 ECC。

# %%
from labutil.notebook import setup, show_table
from labutil.bench import analysis, labs
from labutil.explore import bench as bench_fig
from labutil import compute, hardware

rng = setup()

# %% [markdown]
# ## 1. GEMM 与拷贝带宽
#
# ```bash
# python -m labutil.bench.gemm --dtype bf16 --sizes 1024,2048,4096,8192 --out gemm.json
# python -m labutil.bench.membw --sizes 64M,256M,1G --out membw.json
# ```
# GPU 上计时用 CUDA event（预热后连续执行 n 次再取平均）；CPU 路径每次调用单独计时、取中位数（共享机器上个别调用会被抢占）。

# %%
gemm = labs.run_single("labutil.bench.gemm", ["--dtype", "bf16", "--iters", "5"], "gemm")
membw = labs.run_single("labutil.bench.membw", ["--iters", "5"], "membw")
print(gemm["stdout"])
print(membw["stdout"])

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
bench_fig.roofline_figure(points, reference_gpu="H100-SXM")

# %%
h100 = hardware.gpu("H100-SXM")
rows = [{"quantity": "GEMM best (TFLOP/s)", "measured": gemm["best_tflops"], "datasheet": gemm["peak_tflops"],
         "fraction": gemm["fraction_of_peak"]},
        {"quantity": "copy bandwidth (GB/s)", "measured": membw["best_gbs"], "datasheet": membw["datasheet_gbs"],
         "fraction": membw["fraction_of_datasheet"]},
        {"quantity": "H100-SXM ridge (FLOP/byte)", "measured": None, "datasheet": h100.ridge_flop_per_byte, "fraction": None}]
show_table([{k: ("-" if v is None else v) for k, v in r.items()} for r in rows])

# %% [markdown]
# ## 3. 思考
#
# - CPU 路径下「datasheet」一栏为空：主机 CPU 不在课程的 GPU 目录里，我们不编造一个峰值。
# - 在 GPU 上把 `--dtype` 换成 `tf32` 和 `fp16` 再跑一次：TF32 的峰值只有 BF16 的一半（H100-SXM 494.7 vs 989.4 TFLOP/s）。
# - 拷贝带宽在小尺寸时偏高或偏低都可能：数据落在 L2 缓存里（H100 为 50 MB）时会超过 HBM 的数字——所以默认尺寸从 64 MiB 起步。
