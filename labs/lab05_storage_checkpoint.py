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
# # 实验 5：存储与检查点 I/O（lab05）
#
# > 对应第 16 章（存储架构）与第 17 章（检查点）。本实验在你指定的目录上测顺序写（含 `fsync`）、顺序读，以及一次
# > 「检查点式」的 `torch.save` / `torch.load`，再用实测带宽估算真实模型的检查点耗时。
#
# ## 实验目标
#
# - 理解为什么写带宽必须**包含 fsync**：不 fsync 时你测到的是页缓存（内存）的速度，断电或节点故障时这些数据并未落盘；
# - 理解读测试为什么要先丢弃缓存（`posix_fadvise(DONTNEED)`，对本地文件系统有效；网络文件系统的客户端缓存可能仍在起作用，结果里 `cache_dropped` 会告诉你）；
# - 用实测带宽 + 第 17 章的模型，算出一个 70B 模型的完整检查点（BF16 权重 + FP32 主权重 + Adam 两个状态）需要多久。
#
# 在集群上请把 `--dir` 指向真正要测的文件系统（Lustre、GPFS、NVMe 本地盘……），并把 `--size` 调到远大于节点内存页缓存的量（例如 64G）：
#
# ```bash
# python -m labutil.bench.storage_io --dir /lustre/scratch/$USER --size 64G --block 16M --ckpt-params 2G --out io.json
# ```
#
# 这里的默认值（64 MiB 文件、800 万参数的检查点）只是为了让 notebook 在几秒内跑完。

# %%
from labutil.notebook import setup, show_table
from labutil.bench import labs
from labutil.explore import bench as bench_fig
from labutil import storage

rng = setup()

# %%
io = labs.run_single("labutil.bench.storage_io", ["--size", "64M", "--block", "4M", "--ckpt-params", "8M", "--no-progress"], "storage_io")
print(io["stdout"])

# %%
# NBVAL_CHECK_OUTPUT
print(f"sequential bytes: {io['sequential']['bytes']}, checkpoint params: {io['checkpoint']['params']}")
print(f"checkpoint loaded back identical: {io['checkpoint']['verified']}")

# %%
bench_fig.storage_figure(io)

# %% [markdown]
# ## 从实测带宽到检查点时间
#
# 第 17 章的模型：混合精度 Adam 的完整检查点约为每参数 $2 + 4 + 4 + 4 = 14$ 字节（BF16 权重、FP32 主权重、两个 FP32 Adam 状态）。
# 以实测写带宽为「一个写入者」的带宽，下面估算 70B 模型的检查点若只由一个进程写需要多久；
# 在集群上，检查点由成百上千个 rank 并行写，时间取决于并行文件系统的聚合带宽——这正是第 16、17 章要规划的量。

# %%
size_gb = storage.checkpoint_gb(70e9)
w = io["sequential"]["write_gbs"]
print(f"70B full checkpoint: {size_gb:.0f} GB; at the measured {w:.3f} GB/s by one writer: "
      f"{storage.checkpoint_write_s(size_gb, w) / 60:.1f} min")
show_table([{"writers": k, "time (s) at measured per-writer bw": storage.checkpoint_write_s(size_gb, w * k)}
            for k in (1, 8, 64)])
