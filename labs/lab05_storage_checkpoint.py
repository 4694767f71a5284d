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
# 2. 理解读测试为什么不能读页缓存：要么用 `O_DIRECT` 绕过它（`DIRECT = True`），要么先丢弃缓存（`posix_fadvise(DONTNEED)`，
#    对本地文件系统有效；网络文件系统的客户端缓存可能仍在起作用，结果里 `cache_dropped` 会告诉你）并让文件大于内存；
# 3. 测一次「检查点式」的 `torch.save` / `torch.load`，比较它与裸顺序写的差距；
# 4. 用实测带宽 + 第 17 章的模型，算出一个 70B 模型的完整检查点（BF16 权重 + FP32 主权重 + Adam 两个状态）需要多久。
#
# **先改这几个变量**（下面第二个代码单元，实验步骤 1 用它们）：`TEST_DIR` 是要测的目录——填你真正关心的文件系统，例如
# `"/lustre/scratch/你的用户名"` 或本地 NVMe 的挂载点；`None` 表示一个临时目录（只用来验证方法）。`SIZE` 是测试文件的大小，
# 默认的 `"64M"` 只是让 CPU 路径几秒跑完，真实测量用几十 GB（至少让写入持续几十秒）。`DIRECT = True` 让读写绕过页缓存
# （`O_DIRECT`，与 `fio --direct=1`、`dd oflag=direct` 相同），这样读测试读的一定是盘或文件服务器，与文件大小无关；
# 文件系统不支持 `O_DIRECT` 时（较老内核的 tmpfs、部分 FUSE 挂载）自动退回普通读写并在输出里说明，这时要把 `SIZE` 调到
# **大于这台机器的内存**（例如内存 512 GB 的节点填 `"600G"`），否则读到的可能是页缓存，测量单元会打印一条 WARNING 说明原因。

# %%
from labutil.notebook import setup, show_table
from labutil.machine import run as labs
from labutil.exercises.labs import lab_exercise
from labutil.explore import bench as bench_x
from labutil import fioparse, storage

rng = setup()

# %%
TEST_DIR = None   # the folder to test, e.g. "/lustre/scratch/me" or "/mnt/nvme0"; None = a temporary folder
SIZE = "64M"      # the test file; on a real machine tens of GB (larger than RAM, e.g. "600G", if DIRECT cannot be used)
DIRECT = True     # O_DIRECT reads and writes (no page cache); falls back to buffered I/O where the file system refuses it
CKPT_PARAMS = "8M"  # parameters of the torch.save test (fp32, 4 bytes each); e.g. "2G" = an 8 GB file

# %% [markdown]
# ## 前置条件
#
# - 知道要测哪个文件系统（本地 NVMe、Lustre、GPFS、NFS……），并有写权限；
# - 在集群上测量时，用 `DIRECT = True`；文件系统不支持直接 I/O 时，测试文件要远大于节点的页缓存，否则读测试测的是内存；
# - 知识：第 16 章的存储层次、第 17 章的检查点大小与写入时间模型。
#
# ## 实验步骤
#
# 1. 在顶部设好 `TEST_DIR`、`SIZE`、`DIRECT`，运行测量单元格（默认在临时目录写 64 MiB 文件、800 万参数的检查点，几秒跑完；
#    结果写入 `labs/_runs/lab05_storage_io.json`）；读输出第一行括号里的读写方式（`O_DIRECT, no page cache` 或
#    `buffered, cache dropped: ...`），以及它下面那一行：是 WARNING 还是「the read test can be trusted」；
# 2. 看写（含 fsync）、读、保存、加载四个带宽；
# 3. 用实测写带宽估算 70B 检查点的时间，并看「多个写者」如何缩短它；
# 4. 做自测题。
#
# 在集群上把 `TEST_DIR` 指向真正要测的文件系统，把 `SIZE` 调到大于内存的量；不开 notebook 时等价的命令是：
#
# ```bash
# python -m labutil.bench.storage_io --dir /lustre/scratch/$USER --size 64G --block 16M --direct --ckpt-params 2G --out io.json
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
# 单盘规格是**上限**，而且是在很深的队列下测的：本工具是一个进程、一次只有一个 4 MiB 的 I/O 在路上（队列深度 1）、含 fsync，
# 通常达不到规格；具体差多少取决于文件系统与盘，课程不给固定比例。要逼近规格，用下面「用 fio 交叉验证」一节的
# `--iodepth=32 --numjobs=4`，那才是和规格同条件的测法。带宽 GB/s 一律是十进制（1e9 B/s）。
#
# **CPU 路径的健康输出**（课程 2 核共享 CI 机器，ext4 上的临时目录，64 MiB）：写（含 fsync）约 0.2–2 GB/s，读约 0.2–2 GB/s
# （几次实测，随别的进程的磁盘负载大幅波动），第一行括号里是 `O_DIRECT, no page cache`，下一行说读测试可信，检查点
# `verified: True`。64 MiB 只够验证方法，数字不代表任何盘。没有 `O_DIRECT` 的文件系统上括号里是 `buffered, ...`，并且
# 一定会出现一条 WARNING（64 MiB 远小于内存）。**真实节点上的健康输出**：写带宽落在上表单盘规格之下、同一量级（队列深度 1，
# 见上），读带宽不高于规格，没有 WARNING；`torch.save` 的有效带宽低于裸顺序写。在并行文件系统上，单个进程的数字远低于
# 全系统聚合带宽是正常的，那要用多进程测。

# %% [markdown]
# ## 1. 运行测量
#
# 单元格执行 `python -m labutil.bench.storage_io [--dir TEST_DIR] --size SIZE --block 4M [--direct] --ckpt-params CKPT_PARAMS --out ...`，
# 超时随 `SIZE` 增长（按 50 MB/s 的下限估算）。测试文件用完即删（被 SIGTERM 结束时也删，例如 Slurm 的时间上限）。

# %%
io = labs.run_storage(TEST_DIR, SIZE, CKPT_PARAMS, direct=DIRECT)
print(io["stdout"])
print(labs.page_cache_warning(io) or ("read test can be trusted: O_DIRECT, no page cache" if io["sequential"].get("direct")
                                      else "read test can be trusted: the file is larger than RAM and the cache was dropped"))

# %%
seq, ckpt = io["sequential"], io["checkpoint"]
print(f"sequential write (fsync) {seq['write_gbs']:.3f} GB/s, read {seq['read_gbs']:.3f} GB/s; "
      f"torch.save {ckpt['save_gbs']:.3f} GB/s, torch.load {ckpt['load_gbs']:.3f} GB/s"
      + ("   [temporary folder: shows the method, not your storage]" if TEST_DIR is None else ""))

# %%
# NBVAL_CHECK_OUTPUT
print(f"sequential bytes: {io['sequential']['bytes']}, checkpoint params: {io['checkpoint']['params']}")
print(f"checkpoint loaded back identical: {io['checkpoint']['verified']}")

# %%
bench_x.storage_figure(io)

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
# - 第一行是顺序写（含 fsync）与顺序读的 GB/s，括号里是读写方式：`O_DIRECT, no page cache` 表示两者都绕过了本机页缓存；
#   `buffered, cache dropped: True/False` 表示普通读写，读之前是否成功请求丢弃了缓存。`False` 时读带宽可能是内存的速度，
#   不能当作盘的速度。即使是 `True`，只要文件比内存小，下面就会有一条 WARNING：`posix_fadvise(DONTNEED)` 只是请求内核丢弃
#   本地页缓存，网络文件系统的客户端或服务端缓存仍可能命中。（`O_DIRECT` 绕过的是本机缓存；文件服务器自己的缓存仍可能
#   命中，所以在共享文件系统上测读，文件也要大于服务器的缓存，或换一个节点读。）
# - 第二行是检查点：文件大小、`torch.save`（含 fsync）与 `torch.load` 的秒数；`verified` 表示加载回来的张量与保存的逐位相同。
# - 第三行把四个带宽放在一起（十进制 GB/s），自测题用的就是这一行。注意 `torch.save` 可能**快于**裸顺序写：小文件的
#   fsync 与文件系统的日志、写回策略有关，几十 MB 的检查点在共享机器上的计时噪声也很大；只有文件足够大时这个比较才有意义。
# - 多写者表是第 17 章的模型：`n` 个写者各按你测得的单写者带宽写，直到文件系统的聚合上限——真实的上限要在集群上用多个进程测。
#
# ## 用 fio 与 dd 交叉验证
#
# 存储工程师验收时用的是 fio（第 16 章）：它能同时放很多 I/O 在路上，和盘的规格同条件。同一个目录上跑一遍，和上面的单写者结果比：
#
# ```bash
# # 顺序写：4 MiB 块，O_DIRECT，4 个作业 × 队列深度 32，结束时 fsync；JSON 输出可用 labutil.fioparse.parse_fio_json 读
# fio --name=seqwrite --directory=$TEST_DIR --rw=write --bs=4M --size=16G --numjobs=4 --iodepth=32 \
#     --ioengine=libaio --direct=1 --end_fsync=1 --group_reporting --output-format=json > fio_write.json
# fio --name=seqread  --directory=$TEST_DIR --rw=read  --bs=4M --size=16G --numjobs=4 --iodepth=32 \
#     --ioengine=libaio --direct=1 --group_reporting --output-format=json > fio_read.json
# # 单流、队列深度 1 的对照（与本实验同条件）：dd 的最后一行是总字节数、秒数与带宽
# dd if=/dev/urandom of=$TEST_DIR/rand.bin bs=4M count=256 && \
#   dd if=$TEST_DIR/rand.bin of=$TEST_DIR/dd.bin bs=4M oflag=direct conv=fsync
# ```
#
# 注意 `dd if=/dev/zero`：全零的数据会被压缩或去重的文件系统（ZFS、部分存储阵列）「写」得飞快，测出来的不是盘——本实验
# 写的是随机数据。fio 默认也用随机数据填充缓冲区，并默认打开 `scramble_buffers` 来挫败去重（fio HOWTO 的这两个条目）。下面用课程的解析器读两段**格式真实、
# 数字示意**的输出（`labutil.fioparse` 的样例：一块 PCIe 4.0 NVMe 上 8 个作业的 1 MiB 顺序写、16 个作业的 4 KiB 随机读，
# 以及 `oflag=direct` 的 dd），
# 在你的机器上把自己的 fio/dd 输出粘贴进去即可：

# %%
fio = fioparse.parse_fio_summary(fioparse.sample("fio_nvme_text"))
dd = fioparse.parse_dd(fioparse.sample("dd_direct"))
for r in fio:
    print(f"fio {r.jobname:9s} {'write' if r.write_gbs else 'read':5s} {r.gbs:5.2f} GB/s, {r.iops:>9,.0f} IOPS   [illustrative sample]")
print(f"dd  oflag=direct  {dd.bytes / dd.seconds / 1e9:5.2f} GB/s ({dd.bytes / 2**30:.0f} GiB in {dd.seconds:.2f} s)   [illustrative sample]")
print(f"this lab, one writer, queue depth 1: write {io['sequential']['write_gbs']:.3f} GB/s"
      + ("   [temporary folder: shows the method, not your storage]" if TEST_DIR is None else ""))

# %% [markdown]
# ## 常见问题与排查
#
# - **写带宽高得不真实（几十 GB/s）**：没有 fsync 或文件系统忽略了 fsync（例如某些 FUSE 挂载），测到的是页缓存；
#   本工具的写时间包含 fsync，若仍然很高，检查挂载参数。
# - **本实验远低于 fio**：正常——本实验一个进程、队列深度 1，fio 用多个作业、深队列。二者差距就是「并发度」的价值；
#   真实的检查点由成百上千个 rank 并行写，更接近 fio 的测法。
# - **输出里有 `the file system refused O_DIRECT`**：这个文件系统不支持直接 I/O，已退回普通读写；把 `SIZE` 调到大于内存。
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
# **题 3**：70B 模型的完整检查点（每参数 14 字节，980 GB，第 17 章）要在 60 秒内写完，按你测得的单写者写带宽，至少需要几个写者
# 并行？（向上取整；假设文件系统的聚合上限还没到。）这就是第 16、17 章容量规划的第一步：再拿这个写者数去核对文件系统的聚合带宽。

# %%
answer_3 = None
lab_exercise("lab05.3").check(answer_3)

# %% [markdown]
# ## 参考资料
#
# - `labutil/data/storage.toml`：NVMe 单盘规格（Samsung PM1733 / PM1743）及其来源。
# - POSIX `fsync(2)`、`posix_fadvise(2)`、`open(2)`（`O_DIRECT` 的对齐要求）手册页。
# - fio HOWTO（`--direct`、`--iodepth`、`--numjobs`、`--end_fsync`、JSON 输出）；GNU coreutils `dd`（`oflag=direct`、`conv=fsync`）。
# - 第 17 章：检查点大小 14 B/参数（混合精度 Adam）与写入时间模型（`labutil.storage`）。
