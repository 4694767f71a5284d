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
# 1. 理解为什么写带宽必须**包含 fsync**：不 fsync 时你测到的是页缓存（内存）的速度，断电或节点故障时这些数据并未落盘；
# 2. 理解读测试为什么要先丢弃缓存（`posix_fadvise(DONTNEED)`，对本地文件系统有效；网络文件系统的客户端缓存可能仍在起作用，结果里 `cache_dropped` 会告诉你）；
# 3. 测一次「检查点式」的 `torch.save` / `torch.load`，比较它与裸顺序写的差距；
# 4. 用实测带宽 + 第 17 章的模型，算出一个 70B 模型的完整检查点（BF16 权重 + FP32 主权重 + Adam 两个状态）需要多久。
#
# ## 前置条件
#
# - 知道要测哪个文件系统（本地 NVMe、Lustre、GPFS、NFS……），并有写权限；
# - 在集群上测量时，测试文件要远大于节点的页缓存，否则读测试测的是内存；
# - 知识：第 16 章的存储层次、第 17 章的检查点大小与写入时间模型。
#
# ## 实验步骤
#
# 1. 运行测量单元格（默认在临时目录写 64 MiB 文件、800 万参数的检查点，几秒跑完；结果写入 `labs/_runs/lab05_storage_io.json`）；
# 2. 看写（含 fsync）、读、保存、加载四个带宽；
# 3. 用实测写带宽估算 70B 检查点的时间，并看「多个写者」如何缩短它；
# 4. 做自测题。
#
# 在集群上请把 `--dir` 指向真正要测的文件系统，并把 `--size` 调到远大于页缓存的量（例如 64G）：
#
# ```bash
# python -m labutil.bench.storage_io --dir /lustre/scratch/$USER --size 64G --block 16M --ckpt-params 2G --out io.json
# ```
#
# ## 预期结果
#
# 存储带宽取决于**介质与文件系统**，与 GPU 是 PCIe 还是 NVLink 无关；几种实验配置的差别在于它们通常配的存储：
#
# | 配置 | 常见的测试目录 | 单写者顺序写预期（上限） | 依据 |
# | --- | --- | --- | --- |
# | 2×/4× PCIe GPU 工作站 | 本地 PCIe 4.0 NVMe | ≤ 3.8 GB/s 写、≤ 6.4 GB/s 读（单盘） | `storage.toml` media.nvme-gen4（Samsung PM1733 规格） |
# | 4×/8× NVLink GPU 服务器 | 本地 PCIe 5.0 NVMe | ≤ 6.6 GB/s 写、≤ 13 GB/s 读（单盘） | `storage.toml` media.nvme-gen5（Samsung PM1743 规格） |
# | 2 节点（共享文件系统） | Lustre/GPFS 等并行文件系统 | 单个客户端进程通常远低于全系统聚合带宽 | 第 16 章；聚合带宽随写者数增长直到服务端上限 |
# | CPU 路径（本机临时目录） | 容器的 overlay 或 tmpfs | 取决于宿主机，数字只用于演示方法 | — |
#
# 单盘规格是**上限**：一个进程、4 MiB 块、含 fsync 的顺序写通常达不到，具体差多少取决于文件系统与队列深度，课程不给固定比例。
# 带宽 GB/s 一律是十进制（1e9 B/s）。

# %%
from labutil.notebook import setup, show_table
from labutil.machine import run as labs
from labutil.exercises.labs import lab_exercise
from labutil.explore import bench as bench_fig
from labutil import storage

rng = setup()

# %%
io = labs.run_single("labutil.bench.storage_io", ["--size", "64M", "--block", "4M", "--ckpt-params", "8M", "--no-progress"], "lab05_storage_io")
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

# %% [markdown]
# ## 如何读输出
#
# - 第一行是顺序写（含 fsync）与顺序读的 GB/s，以及读之前缓存是否被成功丢弃（`cache dropped: True/False`）。
#   `False` 时读带宽可能是内存的速度，不能当作盘的速度。
# - 第二行是检查点：文件大小、`torch.save`（含 fsync）与 `torch.load` 的秒数；`verified` 表示加载回来的张量与保存的逐位相同。
# - 多写者表是第 17 章的模型：`n` 个写者各按你测得的单写者带宽写，直到文件系统的聚合上限——真实的上限要在集群上用多个进程测。
#
# ## 常见问题与排查
#
# - **写带宽高得不真实（几十 GB/s）**：没有 fsync 或文件系统忽略了 fsync（例如某些 FUSE 挂载），测到的是页缓存；
#   本工具的写时间包含 fsync，若仍然很高，检查挂载参数。
# - **读带宽远高于写带宽且 `cache_dropped` 为 False**：读到的是客户端缓存；把 `--size` 调到大于节点内存，或换一个刚挂载的节点测。
# - **`torch.save` 明显慢于顺序写**：序列化开销与大量小张量（每个张量一次元数据写入）造成；真实训练里用
#   `torch.distributed.checkpoint` 的分片并行写，写者数增加后逼近文件系统的聚合带宽（第 17 章）。
# - **并行文件系统上单进程很慢**：单个客户端受条带数（Lustre 的 stripe count）与单连接带宽限制，这是预期的，要用多进程测聚合带宽。
#
# ## What-if
#
# 1. 把 `--block` 从 4M 改成 64K：小块写的系统调用开销有多大？
# 2. 在集群上用同一条命令测本地 NVMe 与共享文件系统，比较单写者带宽，再估算 70B 检查点在两者上的时间。
# 3. 把 `--size` 调到小于页缓存（例如 1G）与远大于页缓存（例如 64G）各测一次读：`cache_dropped` 为 False 的文件系统上差别有多大？
#
# ## 自测题（用你自己的测量）
#
# **题 1**：以你测得的顺序写带宽（单写者），写一个 1 TB（1000 GB）的检查点需要多少秒？

# %%
answer_1 = None
lab_exercise("lab05.1").check(answer_1)

# %% [markdown]
# **题 2**：你的 `torch.save` 有效带宽是顺序写带宽的百分之多少？（按课程约定填百分数：75 % 填 75）

# %%
answer_2 = None
lab_exercise("lab05.2").check(answer_2)

# %% [markdown]
# ## 参考资料
#
# - `labutil/data/storage.toml`：NVMe 单盘规格（Samsung PM1733 / PM1743）及其来源。
# - POSIX `fsync(2)`、`posix_fadvise(2)` 手册页。
# - 第 17 章：检查点大小 14 B/参数（混合精度 Adam）与写入时间模型（`labutil.storage`）。
