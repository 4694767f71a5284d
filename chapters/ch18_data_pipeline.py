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
# # 第18章 数据加载流水线：从存储到 GPU 的每一级
#
# > 模块四「存储与数据」的第 3 章。前置：第 4 章（6ND 与每卡吞吐）、第 9 章（CPU 核数、内存、PCIe）、第 16 章（吞吐与 IOPS）。
# > 本章的结论会用在第 30 章的综合方案里：每台服务器该配多少 CPU 核和内存。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 从 GPU 一侧倒推每张卡每秒要消化多少样本：LLM 由 tokens/s 与序列长度决定，视觉模型由 images/s 决定；
# - 把数据加载拆成「存储读取 → CPU 解码/分词 → 主机到设备拷贝 → GPU 计算」四级，并找出哪一级是瓶颈；
# - 解释小文件为什么会把存储的 IOPS 和元数据服务压垮，以及打包成分片（shard）为什么能解决；
# - 理解预取（prefetch）和 worker 数能做什么、不能做什么；
# - 用解码成本模型检验种子课程的经验值「每张 GPU 至少配 16 个物理核心和 256GB 内存」：它在什么负载下成立，在什么负载下是浪费。

# %%
from labutil.notebook import setup, show_table
from labutil import dataloading, storage, hardware, memory
from labutil.explore import storage as storage_x
from labutil.exercises import exercise
import time

rng = setup()

# %% [markdown]
# ## 1. 从 GPU 倒推：每张卡每秒要多少样本
#
# 数据流水线的设计目标只有一个：**让 GPU 永远不等数据**。所以第一步是算出 GPU 消化数据的速度。
#
# **LLM 预训练**：稠密 Transformer 每个 token 的训练计算量约 $6N$ FLOPs（前向 $2N$ + 反向 $4N$，Kaplan et al. 2020）。
# 一张峰值 $P$、模型 FLOPs 利用率为 MFU 的卡每秒处理的 token 数与样本数为
#
# $$
# \text{tokens/s} = \frac{\text{MFU}\times P}{6N}, \qquad \text{samples/s} = \frac{\text{tokens/s}}{L_{\text{seq}}}.
# $$

# %%
# NBVAL_CHECK_OUTPUT
h100 = hardware.gpu("H100-SXM")
for n in (7e9, 70e9, 405e9):
    tok = dataloading.llm_tokens_per_s_per_gpu(n, h100.bf16_tflops, 0.4)
    sps = dataloading.llm_samples_per_s(tok, 4096)
    print(f"{n / 1e9:5.0f}B on H100 @ 40% MFU: {tok:8,.0f} tokens/s = {sps:6.3f} samples/s of 4096 tokens "
          f"= {tok * dataloading.token_bytes(128256) / 1e3:6.1f} kB/s pre-tokenised (int32)")

# %% [markdown]
# 70B 模型每卡每秒只要 942 个 token，预分词存储（Megatron 的 `.bin/.idx` 格式：词表小于 65,500 用 uint16，
# Llama 3 的 128,256 词表用 int32）只有每秒 3.8 kB。即使在线分词，Hugging Face `tokenizers` 在服务器 CPU 上一秒能处理
# 50 MB 以上的文本（README：「tokenize 1 GB of text in less than 20 seconds」），8 张卡合计每秒几十 kB 的文本微不足道。
# **LLM 预训练的数据加载几乎没有压力**——它的存储压力在检查点（第 17 章）。
#
# **视觉训练**完全是另一回事：NVIDIA 公布的 ResNet-50 在 1 张 A100 80GB 上混合精度训练 2,470 张/秒。每张图要经过
# 读取 JPEG（平均 107.7 kB）、解码、随机裁剪缩放、翻转、归一化，再以 224×224×3 字节拷到 GPU。每秒 2,470 次 JPEG 解码，
# 这是 CPU 的活。
#
# ## 2. 四级流水线与瓶颈
#
# 把加载过程看成四级流水线，每一级有自己的能力（样本/秒/GPU）：
#
# | 级 | 能力 | 受什么限制 |
# |---|---|---|
# | 存储读取 | $\min\bigl(B_{\text{read}}/s_{\text{sample}},\ \text{IOPS}/\text{requests per sample}\bigr)$ | 带宽、IOPS、元数据 |
# | CPU 解码/增强 | $(c - c_0)\times r_{\text{core}}$ | 每卡核数 $c$、保留核 $c_0$、单核速率 $r_{\text{core}}$ |
# | 主机→设备拷贝 | $B_{\text{PCIe}} / s_{\text{decoded}}$ | PCIe 带宽、是否锁页内存 |
# | GPU 计算 | 模型吞吐 | 第 4、6 章 |
#
# 流水线的稳态吞吐等于**最慢的一级**：
#
# $$
# X = \min_i X_i, \qquad \text{GPU 利用率} = \frac{X}{X_{\text{GPU}}}.
# $$
#
# 单核解码速率 $r_{\text{core}}$ 是本章唯一的**假设值**：我们取每核 150 张/秒（ImageNet 尺寸 JPEG，libjpeg-turbo 解码加随机裁剪和翻转），
# 它随 CPU、解码库、增强组合和 worker 数变化：Iglovikov 与 Kosarevsky（2026）在 5 种服务器 CPU 上比较了 13 条 Python 可用的 JPEG 解码路径，
# 连「哪个解码器最快」都随 CPU 而变，单线程微基准的排名放进 DataLoader 之后也会变。所以务必用 lab05 在自己的机器上、用自己的增强测一次再代入。下面是 A100 上 ResNet-50、每卡 16 个核、每卡 1 GB/s 读带宽、2 万 IOPS 的情况：

# %%
# NBVAL_CHECK_OUTPUT
res = dataloading.pipeline_throughput(dataloading.RESNET50_A100_IMG_S, dataloading.IMAGENET_MEAN_JPEG_BYTES,
                                      cpu_cores_per_gpu=16, decode_samples_per_s_per_core=150.0,
                                      read_gbs_per_gpu=1.0, iops_per_gpu=20000,
                                      decoded_sample_bytes=dataloading.DECODED_224_BYTES)
for stage in dataloading.STAGES:
    print(f"{dataloading.STAGE_LABELS[stage]:20s} {res.capacities[stage]:10,.0f} samples/s")
print(f"bottleneck: {res.bottleneck}, throughput {res.throughput_samples_per_s:,.0f} img/s, "
      f"GPU busy {100 * res.gpu_utilization:.1f} %, cores needed per GPU {res.cores_needed_per_gpu:.1f}")

# %% [markdown]
# 16 个核扣掉 1 个留给训练进程（Python 主循环、NCCL 代理线程），15 × 150 = 2,250 张/秒，比 GPU 的 2,470 张/秒少 9%：
# **CPU 解码是瓶颈**，GPU 有 9% 的时间在等数据。探索器里可以改每一项，红色的柱就是当前瓶颈，虚线是 GPU 能消化的速率：

# %%
storage_x.pipeline_explorer()

# %% [markdown]
# 打破 CPU 瓶颈有三条路：加核；把解码搬到 GPU；或者离线预处理（提前解码、缩放，存成更大但解码便宜的格式），用存储带宽换 CPU。
# 第 30 章做方案时，这三条路的成本要一起比较。第二条路的标准工具是 NVIDIA DALI：它的 `mixed` 后端用 nvJPEG 在 GPU 上解码，
# CPU 留下的活是读文件，以及小图的 Huffman 熵解码（`hybrid_huffman_threshold` 以下的图在 CPU 上做这一步，其余全在 GPU 上）；
# 从 A100 起 GPU 上还有专门的硬件 JPEG 解码单元，`fn.decoders.image` 默认把约 65% 的图交给它（`hw_decoder_load=0.65`），
# 其余用 CUDA 核解码（`nvidia-smi dmon` 的 `jpg` 列就是这个单元的利用率）。NVIDIA 自己的 ResNet-50 示例把这个选择写得很清楚：
# README 建议 DGX A100 和 DGX-1 用 `--data-backends dali-cpu`（DALI 在 CPU 上解码），DGX-2 用 `dali-gpu`。同一份 README 里 V100 每卡
# 混合精度训练约 1,200 张/秒；DGX-1 是 8 张 V100 配 2 颗 20 核 Xeon（每卡 5 个核），DGX-2 是 16 张 V100 配 2 颗 24 核 Xeon（每卡 3 个核）。
# 每卡 5 个核还能用 CPU 解码喂饱 1,200 张/秒，说明 DALI 的 C++ 多线程 CPU 流水线每核解码的张数远高于本节取的 150 张/秒——
# 这正是 $r_{\text{core}}$ 必须实测、而且要用你真正会用的加载库实测的原因；每卡只剩 3 个核时，NVIDIA 自己也换成了 GPU 解码。
# 代价是解码占用 GPU 的显存和少量算力，所以它是「核不够」时的解法，不是默认更好。
#
# 另外两级在图像训练里很少成为瓶颈，但要知道它们什么时候会。**主机→设备拷贝**：一张解码后的 224×224×3 图像只有 150 kB，
# PCIe Gen4 x16 每秒 31.5 GB 的理论带宽能搬二十多万张；可一旦样本是未压缩的大张量（3D 医学影像、视频片段、科学计算网格，
# 单个样本几十到几百 MB），这一级就会和解码、存储一起竞争。此时要用锁页内存（`pin_memory=True`）让拷贝走 DMA、与计算重叠，
# 并注意 GPU 与网卡、NVMe 是否挂在同一个 PCIe 交换芯片下（第 9 章的 `nvidia-smi topo -m`）。**存储读取**：
# 数据集小于节点内存时，第一个 epoch 之后数据就留在操作系统的页缓存里，存储只在第一轮被读；数据集远大于内存时，
# 每个 epoch 都要从存储重读，第 16 章的热层和节点本地 NVMe 缓存才真正派上用场：

# %%
# NBVAL_CHECK_OUTPUT
dgx = hardware.server("DGX-H100")
print(f"ImageNet-1k train set {dataloading.IMAGENET_TRAIN_BYTES / 1e9:.0f} GB vs DGX-H100 RAM {dgx.ram_gb:.0f} GB "
      f"and local NVMe {dgx.nvme_tb:.2f} TB: fits in page cache = {dataloading.IMAGENET_TRAIN_BYTES / 1e9 < dgx.ram_gb}")

# %% [markdown]
# ImageNet-1k 只有 138 GB，一台 DGX H100 的 2 TB 内存装得下，所以很多人在小数据集上从来没遇到过存储瓶颈，
# 直到换成几百 TB 的多模态数据集——那时每个 epoch 的每个字节都要从存储读，第 16 章的读带宽和 IOPS 计算才变成硬约束。
#
# ## 3. 每张 GPU 要多少 CPU 核？
#
# 把核数从 1 扫到 48，看 GPU 利用率。三条实线是解码速率取 100 / 150 / 300 张/秒/核的视觉训练，虚线是 70B LLM 预训练：

# %%
storage_x.cores_per_gpu_figure(decode_rates=(100.0, 150.0, 300.0))

# %%
# NBVAL_CHECK_OUTPUT
for rate in (100.0, 150.0, 300.0):
    need = dataloading.cores_needed_per_gpu(dataloading.RESNET50_A100_IMG_S, rate, 1)
    print(f"ResNet-50 on A100, {rate:5.0f} img/s/core: {need:5.1f} cores per GPU")
tok = dataloading.llm_tokens_per_s_per_gpu(70e9, h100.bf16_tflops, 0.4)
llm = dataloading.pipeline_throughput(dataloading.llm_samples_per_s(tok, 4096), 4096 * 4, cpu_cores_per_gpu=2,
                                      decode_samples_per_s_per_core=1000.0, read_gbs_per_gpu=1.0)
print(f"70B LLM, pre-tokenised, 2 cores per GPU: GPU busy {100 * llm.gpu_utilization:.0f} %")
for name in ("DGX-H100", "DGX-A100"):
    srv = hardware.server(name)
    print(f"{name}: {srv.cpu_cores / srv.gpus:.0f} cores and {srv.ram_gb / srv.gpus:.0f} GB RAM per GPU")

# %% [markdown]
# 视觉训练需要每卡 9.2–25.7 个核（取决于解码速率），150 张/秒/核时是 17.5 个——「每卡 16 核」恰好落在够与不够的分界线上；
# 而 LLM 预训练每卡 2 个核就能让 GPU 满载。目录里的 DGX A100 正好是每卡 16 核、256 GB，DGX H100 是每卡 14 核、256 GB：
# 这条经验值来自整机厂商为「什么负载都要能跑」的通用训练服务器所做的配置，而不是某个公式的结果。
#
# ## 4. 小文件：IOPS 与元数据的压力
#
# 第 16 章算过，千卡视觉训练每秒要打开 253 万个文件。每个文件至少一次 open、一次 close（元数据操作，由 Lustre MDS 或 GPFS 元数据节点处理），
# 再加至少一次读请求。把很多样本打包成大文件（WebDataset 的 tar 分片、TFRecord、Megatron 的 `.bin`），
# 文件打开次数按文件大小与样本大小之比下降，读带宽不变：

# %%
# NBVAL_CHECK_OUTPUT
rate = 1024 * dataloading.RESNET50_A100_IMG_S
for fb in (None, 1e6, 64e6, 1e9):
    r = storage.data_read_requirements(rate, dataloading.IMAGENET_MEAN_JPEG_BYTES, fb)
    label = "1 file/sample" if fb is None else f"{fb / 1e6:6.0f} MB files"
    print(f"{label:14s}: {r.read_gbs:6.1f} GB/s, {r.files_per_s:12,.0f} opens/s, {r.read_iops:12,.0f} read req/s")

# %%
storage_x.small_file_figure()

# %% [markdown]
# 从「一个文件一张图」到 64 MB 分片，文件打开次数从每秒 253 万降到 4,257 次，降了近 600 倍；
# 读请求数降到每秒 26 万次（1 MiB 一次），一台闪存服务器的 IOPS 绰绰有余。这就是为什么大规模训练几乎都用分片格式：
# 它不是为了省空间，而是为了**把元数据压力从每秒百万级降到每秒千级**。
#
# ### 4.1 分片格式与加载库：各自解决什么
#
# 「打包成分片」有好几种现成的做法，差别不在能不能打包，而在**从哪里读、怎么打乱、断了能不能从原处接着读**：
#
# | 格式 / 库 | 存储布局 | 读法 | 断点续训时的数据位置 | 常见用途 |
# |---|---|---|---|---|
# | WebDataset | POSIX tar 分片，一个样本是几个同名、不同扩展名的文件 | 顺序读整个 tar；可以用 `pipe:` URL 直接从 HTTP / S3 流式读 | 按分片粒度；打乱靠分片顺序加样本缓冲 | 图像、音频、多模态，数据在对象存储 |
# | MosaicML Streaming | MDS 分片 + `index.json` | 从对象存储下载分片到本地缓存（`cache_limit` 限制大小），再随机访问 | 状态里存 `epoch`、`sample_in_epoch`，可从 epoch 中间恢复；换了 GPU 数样本顺序也不变（「弹性确定性」） | 数据在对象存储、作业规模会变 |
# | Megatron `.bin` / `.idx` | 预分词的 token 数组 + 索引，内存映射（mmap） | 随机访问 | 按检查点里记下的已消费样本数（`consumed_train_samples`）重建位置 | LLM 预训练 |
# | Hugging Face `datasets` | Apache Arrow 文件，内存映射 | 随机访问；`streaming=True` 时逐条流式读 | 随机访问版按样本下标；流式版（`IterableDataset`）有 `state_dict()` | 微调、中小数据集 |
# | TFRecord | protobuf 记录顺序写成的文件 | 顺序读 | `tf.data` 可把迭代器状态存进检查点 | TensorFlow / JAX 生态 |
# | NVIDIA DALI | 不是格式，而是 GPU 上的解码与增强流水线 | 自带 TFRecord、WebDataset 等读取器 | 取决于读取器 | CPU 核不够的视觉训练 |
#
# 最后一列和第 17 章 §6.1 直接相关：检查点里要存的「数据位置」就是这一列的东西，选格式时要先确认它能存、能恢复，
# 而且恢复后的样本顺序和中断前一致。对象存储上的数据集（第 16 章的冷层）通常配 WebDataset 或 MosaicML Streaming，
# 把第一次读到的分片留在节点本地 NVMe，后面的 epoch 就不再走对象存储。选库时还要看维护状态：MosaicML Streaming 的上游最后一个版本是
# 2025 年 7 月的 0.13.0，之后由社区分支 `streaming-community` 接着发布（导入名、MDS 格式和续训状态的键名不变）。
#
# ## 5. 预取与 worker：能做什么，不能做什么
#
# PyTorch `DataLoader` 的每个 worker 会提前准备 `prefetch_factor` 个批次（默认 2）。预取缓冲能挡住的停顿时长是
#
# $$
# T_{\text{buffer}} = \frac{n_{\text{workers}} \times \text{prefetch\_factor} \times \text{batch}}{\text{samples/s}} .
# $$

# %%
# NBVAL_CHECK_OUTPUT
buf = dataloading.prefetch_buffer_s(8, 2, 256, dataloading.RESNET50_A100_IMG_S)
ram = dataloading.host_ram_per_gpu_gb(num_workers=8, prefetch_factor=2, batch_size=256)
print(f"8 workers x 2 batches x 256 images at 2,470 img/s: buffer {buf:.2f} s, "
      f"{ram:.2f} GB of decoded images in host RAM")

# %% [markdown]
# 1.66 秒的缓冲足以吸收存储的偶发抖动（一次元数据服务器的慢响应、一次网络重传），但它**改变不了平均速率**：
# 如果解码每秒只能供 2,250 张而 GPU 要 2,470 张，缓冲会在 $T_{\text{buffer}} \cdot X_{\text{GPU}} / (X_{\text{GPU}} - X)$
# 秒后被抽干，之后 GPU 照样等。把 worker 数加到超过可用核数也没有用——多出来的进程只会抢同一批核、占更多共享内存。
# 正确的调优顺序是：先用本章模型找出瓶颈级，再针对那一级加资源。
#
# 实践中的几条经验：每张卡的 worker 数取「可用于解码的核数」，不要更多；打开 `persistent_workers=True`，
# 避免每个 epoch 重新拉起 worker 进程、重新打开文件；批次较大、样本较大时，预取深度乘以批次大小乘以样本大小就是常驻内存，
# 8 个 worker、每个预取 2 批、每批 256 张解码后的图像，每卡就要 0.62 GB，8 卡一台机器 5 GB，这部分要算进内存预算。
# 最后，记录每一步等待数据的时间（训练循环里 `next(iter)` 的耗时），它比任何推断都更直接地告诉你流水线是否够快。
#
# ## 6. 实操命令
#
# 判断瓶颈最直接的办法是把流水线各级分开测：
#
# ```bash
# # 1) 只测读：绕过解码，看存储能给多少（小文件随机读的 IOPS）
# fio --name=smallfiles --directory=/lustre/ai/imagenet/train --rw=randread --bs=128k --nrfiles=10000 \
#     --filesize=110k --numjobs=16 --ioengine=psync --direct=1 --runtime=60 --time_based --group_reporting
# # 2) 训练时看 CPU：每个 DataLoader worker 是否都吃满一个核
# top -H -p $(pgrep -d, -f train.py)
# mpstat -P ALL 1
# # 3) 训练时看存储客户端与盘
# iostat -x 1
# nvidia-smi dmon -s um -d 1       # sm% 周期性掉到 0 是等数据的典型迹象；-s m 同时打出显存占用（fb）
# ```
#
# 测出单核解码速率后（lab05 有一个计时脚本），把它代入本章的模型，就能直接得出每卡需要的核数。
#
# ### 6.1 读懂三种输出：存储能给多少、盘在给多少、GPU 在等多久
#
# 这三条命令回答的是三个不同的问题，排查时要按顺序看，不要只盯其中一个。**fio 回答「能给多少」**：它在没有训练负载时
# 直接压存储，给出这套存储在某个请求大小、某个并发下的上限。**iostat 回答「正在给多少」**：训练跑着的时候，块设备层每秒完成了多少请求、
# 平均多大、排了多长的队、每个请求等了多久。**nvidia-smi dmon 回答「GPU 有没有在等」**：sm 列是采样周期内至少有一个 kernel 在跑的时间比例。
# 三者对上了，才能下结论。下面先解析 fio 文本输出（第 16 章用过的同一个样例）：

# %%
# NBVAL_CHECK_OUTPUT
from labutil.parsers import parse_iostat_x, parse_nvidia_smi_dmon, sysstat
from labutil.parsers import fio
for j in fio.parse_fio_summary(fio.sample("fio_nvme_text")):
    print(f"fio job {j.jobname:9s}: read {j.read_gbs:5.2f} GB/s, write {j.write_gbs:5.2f} GB/s, "
          f"{j.iops / 1e3:7.1f} k IOPS, {j.gbs * 1e9 / max(j.iops, 1) / 1024:6.1f} KiB per request")

# %% [markdown]
# 同一块 Gen4 NVMe，4 KiB 随机读约一百万 IOPS、只有 4 GB/s 出头，1 MiB 顺序写则是 3.7 GB/s：**同一块盘的「带宽」取决于请求大小**，
# 所以 fio 的请求大小和并发要照着训练真实的读法设（小文件数据集用样本大小，分片数据集用 DataLoader 每次 read 的大小）。
#
# 再看训练进行中的 `iostat -x -y 5 1`（sysstat 12 的列名；CentOS 7 上的 sysstat 11 列名不同，
# `labutil.parsers.parse_iostat_x` 按列名读，两代都认）。iostat 的 kB 是 1024 字节，换成 GB/s 时要乘 1024 再除以 1e9：

# %%
# NBVAL_CHECK_OUTPUT
(rep,) = parse_iostat_x(sysstat.SAMPLE_IOSTAT_X)
d = rep.device("nvme1n1")
nvme = storage.media("nvme-gen4")
print(f"CPU iowait {rep.iowait_pct:.1f} %")
print(f"{d.device}: {d.r_per_s:,.0f} reads/s x {d.read_req_kib:.0f} KiB = {d.read_gbs:.2f} GB/s, "
      f"r_await {d.r_await_ms:.2f} ms, aqu-sz {d.queue_depth:.2f}, %util {d.util_pct:.1f}")
print(f"Little's law: reads/s x r_await = {d.r_per_s * d.r_await_ms / 1e3:.2f} requests in flight (aqu-sz)")
cap = storage.device_throughput_gbs("nvme-gen4", d.read_req_kib * 1024, pattern="random")
print(f"PM1733-class drive at {d.read_req_kib:.0f} KiB random reads: {cap:.1f} GB/s -> "
      f"this drive runs at {100 * d.read_gbs / cap:.0f} % of what it can deliver")

# %% [markdown]
# 这里有一个几乎每个新人都会踩的坑：**%util 99.8 不等于盘满了**。iostat 的 %util 是「这段时间里至少有一个请求在盘上的时间比例」，
# 对一次只能服务一个请求的机械盘，它接近 100 就真是满了；NVMe 有 64K 个队列、内部几十路闪存并行，队列里一直有请求它也远没到上限。
# 真正该看的是两件事：一是 aqu-sz 与 r_await 是否一起上升（队列越排越长、每个请求越等越久才是饱和），
# 二是实测带宽与 fio 在同样请求大小下的上限之比。上面这块盘只用到约三分之一，而 CPU 的 iowait 有 21%——说明 worker 进程
# 每次只发一个同步读、读完才解码下一张，并发不够，而不是盘不够快。修法是增大读的并发（更多 worker、或者用分片格式一次读大块），
# 而不是买更快的盘。iowait 本身也要谨慎解读：它只是「CPU 空闲且有 I/O 未完成」的时间，CPU 一旦忙于解码它就会下降，不能当作存储压力的刻度。
#
# 最后是 GPU 侧的 `nvidia-smi dmon -s um`。`-s u` 打出利用率组（sm、mem、enc、dec，较新的驱动还有 jpg、ofa），
# `-s m` 打出显存组（fb、bar1，较新的驱动还有 ccpm），列随驱动版本变化，所以解析器按表头的列名读，不支持的项显示为 `-`：

# %%
# NBVAL_CHECK_OUTPUT
log = parse_nvidia_smi_dmon(sysstat.SAMPLE_DMON_UM)
print("columns:", " ".join(log.columns))
for g in log.gpus:
    print(f"GPU {g}: sm {log.mean('sm', gpu=g):5.1f} %, mem {log.mean('mem', gpu=g):5.1f} %, "
          f"fb {log.mean('fb', gpu=g):8,.0f} MiB")
print(f"node mean sm {log.mean('sm'):.1f} % -> at most {log.mean('sm'):.0f} % of the time any kernel was running")

# %% [markdown]
# sm 列的定义来自 NVML 的 utilization.gpu：「采样周期内有一个或多个 kernel 在执行的时间百分比」。它是**上限**，不是效率：
# 一个只占一个 SM 的小 kernel 也算 100%；第 14 章已经讲过，NCCL kernel 等待网络时在 GPU 上空转，网络瓶颈的作业 sm 列照样很高。
# 所以 sm% 低可以证明 GPU 在等（这里四张卡平均只有约 41%，而且四张卡一样低——是整台机器的共同瓶颈，不是某张卡坏了）；
# sm% 高却证明不了 GPU 在干有用的活，那要看第 26 章的 DCGM 剖析指标（`DCGM_FI_PROF_SM_ACTIVE`、`DCGM_FI_PROF_PIPE_TENSOR_ACTIVE`）。
# 再把三条输出连起来：fio 说盘能给 4 GB/s 以上，iostat 说只给了 2 GB/s 而且 iowait 高，dmon 说 GPU 有六成时间闲着——结论是读并发不足。
# 最直接的确认办法，是在训练循环里给 `next(data_iter)` 计时：每步等数据的时间除以步长，就是 GPU 因数据而空等的比例。
# 下面这十几行可以原样贴进任何训练循环（`data_iter = iter(loader)`，`train_step` 是你的前向、反向和优化器一步；
# 它就是 `labutil.dataloading.timed_loop`，课程里直接调用它）：
#
# ```python
# import time
#
#
# def timed_loop(data_iter, train_step, steps, report_every=20):
#     """Run `steps` training steps; print the share of wall time spent blocked in next(data_iter)."""
#     wait = total = 0.0
#     for step in range(1, steps + 1):
#         t0 = time.perf_counter()
#         batch = next(data_iter)           # blocks only when the loader's prefetch buffer is empty
#         t1 = time.perf_counter()
#         train_step(batch)                 # on a GPU end it with loss.item() or torch.cuda.synchronize()
#         t2 = time.perf_counter()
#         wait, total = wait + (t1 - t0), total + (t2 - t0)
#         if step % report_every == 0:
#             print(f"step {step:4d}: data wait {1e3 * wait / step:5.1f} ms/step = {100 * wait / total:4.1f} % of step time")
#     return wait / total
# ```
#
# 注释里那一句很要紧：CUDA 是异步的，`train_step` 返回时 GPU 可能还在算，如果不在步内同步（打印 loss 用的 `loss.item()` 就是一次同步），
# GPU 的计算时间会被记到下一次 `next()` 上，数据等待被高估。下面用一个**模拟的**加载器演示（不需要 GPU）：`dataloading.simulated_loader`
# 起一个后台线程每 12 ms 造好一批、最多预取 4 批（相当于 DataLoader 的 workers × prefetch_factor），训练一步 10 ms。加载器比 GPU 慢，
# 缓冲很快被抽干，之后每步都要等约 2 ms；本章的流水线模型给出的等待比例是 $1 - 10/12$（输出随机器负载略有起伏，所以这一格不做数值检查）：

# %%
frac = dataloading.timed_loop(dataloading.simulated_loader(12.0), lambda batch: time.sleep(10e-3), steps=60)
print(f"measured {100 * frac:.0f} %; pipeline model 1 - 10/12 = {100 * (1 - 10 / 12):.1f} % "
      f"(plus the first batch, which every loader makes the first step wait for)")

# %% [markdown]
# 把 12 ms 改成 8 ms（加载器比 GPU 快），等待比例就只剩第一批的那一次等待、随步数趋近 0——这时再加 worker、换更快的存储都不会让训练变快。
# 真实作业里把这个比例按 rank 打进日志：同步数据并行每一步等最慢的 rank，所以看的是所有 rank 的**最大值**；
# 它持续高于几个百分点，再按第 6.1 节的顺序去查存储、CPU 和 GPU。
#
# ### 6.2 业界的教训
#
# 数据流水线是被低估得最厉害的一环。Microsoft 的 Mohan 等人在其生产集群上分析了 9 个视觉与语音模型（VLDB 2021，*Analyzing and Mitigating
# Data Stalls in DNN Training*），发现很多情况下训练时间的大头是「数据停顿」——等存储读和等 CPU 预处理，
# 他们的 CoorDL 只靠协调预处理和分区缓存，就比 DALI 在单机上快到 2 倍、多机上快到 15 倍。Google 的 tf.data 论文（Murray 等，VLDB 2021）
# 统计了一个月里数百万个训练作业：20% 的作业把超过三分之一的计算时间花在输入流水线上。这两组数字说明，本章的模型不是学术练习——
# 在视觉、语音、多模态训练中，「GPU 在等数据」是常态而不是例外。LLM 预训练之所以很少有人抱怨数据，
# 是因为预分词把解码这一级整个拿掉了（第 1 节：70B 每卡每秒只要几 kB），而不是因为它的流水线设计得更好。
#
# 运维上还有几条经验：多节点训练时，**一台节点的数据停顿会拖慢所有节点**——同步数据并行的每一步要等最慢的 rank，
# 所以要看所有节点 sm% 的最小值而不是平均值；共享文件系统上，作业启动时上千个 worker 同时 `listdir` 和 `open`，
# 元数据服务器的压力峰值往往比稳态高一个数量级，把文件清单预先生成成索引文件（WebDataset 的分片列表、Megatron 的 `.idx`）能把这个峰削掉；
# 节点本地 NVMe 做第二个 epoch 起的缓存时，要给缓存目录单独的分区，别让它和容器镜像、日志抢同一块盘。
#
# 测量本身也有陷阱。用 fio 测数据集所在的文件系统时要加 `--direct=1`，或者先在每个客户端上清掉页缓存，否则第二次跑读的是内存，数字会高出一两个数量级；测出来的上限也要按「同时读的节点数」来解读——一个客户端的结果乘以节点数，通常远高于存储后端真正能给的聚合带宽。iostat 同理：第一份报告是开机以来的平均值，要加 `-y` 跳过，或者只看第二份之后的输出。
#
# ## 7. 常见误区
#
# **误区一：「GPU 利用率低，一定是模型或网络的问题。」** 上面的例子里，16 核/卡配置下 GPU 有 9% 的时间在等数据，
# 只有 8 核时更糟：

# %%
# NBVAL_CHECK_OUTPUT
low = dataloading.pipeline_throughput(dataloading.RESNET50_A100_IMG_S, dataloading.IMAGENET_MEAN_JPEG_BYTES,
                                      cpu_cores_per_gpu=8, decode_samples_per_s_per_core=150.0, read_gbs_per_gpu=2.0,
                                      decoded_sample_bytes=dataloading.DECODED_224_BYTES)
print(f"8 cores per GPU: bottleneck {low.bottleneck}, GPU busy {100 * low.gpu_utilization:.1f} %")

# %% [markdown]
# 每卡只剩 8 个核时，GPU 只有 42.5% 的时间在算，一半多的时间在等解码——而模型、网络、NCCL 一样都没变。
# 排查 GPU 利用率低时，第一步应该是在训练循环里给取数据计时（第 6 节），而不是去调通信参数；第 6.1 节的 dmon 输出里 sm 只有四成、四张卡一样低，正是这个样子。
#
# **误区二：「加大 prefetch 就能解决数据慢。」** 预取只平滑抖动。解码供给 2,250 张/秒、GPU 需要 2,470 张/秒时，
# 1.66 秒的缓冲在多少秒后耗尽？

# %%
# NBVAL_CHECK_OUTPUT
drain_s = buf * dataloading.RESNET50_A100_IMG_S / (dataloading.RESNET50_A100_IMG_S - res.throughput_samples_per_s)
print(f"buffer of {buf:.2f} s drains after {drain_s:.1f} s; afterwards the GPU runs at "
      f"{100 * res.gpu_utilization:.1f} % regardless of prefetch depth")

# %% [markdown]
# 1.66 秒的缓冲只撑得住 18.6 秒，之后 GPU 就以 91.1% 的速度运行，预取再深也一样；把缓冲加到 10 倍，也只是把「开始等」推迟到三分钟之后。
# 预取能解决的是**抖动**（偶发的慢请求），解决不了**平均供给不足**；后者只能靠加核、GPU 解码或离线预处理。
#
# **误区三（种子课程）：「每张 GPU 至少配 16 个物理核心和 256GB 内存」是普适规则。** 第 3 节算过：视觉训练在我们的解码假设下每卡要 17.5 核，
# 16 核还不够；LLM 预训练每卡 2 核就满载。内存也一样——异步检查点要在主机内存暂存分片：

# %%
# NBVAL_CHECK_OUTPUT
ckpt70 = storage.checkpoint_gb(70e9)
for n_gpus in (8, 1024):
    ram = dataloading.host_ram_per_gpu_gb(checkpoint_gb=ckpt70, n_gpus=n_gpus, num_workers=8, prefetch_factor=2,
                                          batch_size=4)
    print(f"70B full fine-tune on {n_gpus:5d} GPUs: async checkpoint + loader buffers = {ram:7.2f} GB host RAM per GPU")

# %% [markdown]
# 先确认这个场景成立：70B 的全参数训练在一台 8 卡服务器上放不进显存——

# %%
# NBVAL_CHECK_OUTPUT
states = memory.model_states_gb(70e9)
zero3 = memory.model_states_gb(70e9, dp=8, zero_stage=3)
print(f"70B mixed-precision Adam: model states {states.total_gb:,.0f} GB; ZeRO-3 over 8 GPUs {zero3.total_gb:.0f} GB "
      f"per GPU > {hardware.gpu('H100-SXM').hbm_gb:.0f} GB HBM -> needs ZeRO-Offload")

# %% [markdown]
# 约 1.1 TB 的模型状态，ZeRO-3 切到 8 张卡上每卡仍有 140 GB，超过 H100 的 80 GB：只有用 ZeRO-Offload 把优化器状态放进主机内存
# （980 GB，每卡 122.5 GB）才跑得起来；异步检查点训练不停，还要再暂存一份同样大小的快照，合计约 245 GB/卡，
# 256 GB/卡刚好够用；同一个模型摊到 1,024 张卡上，
# 每卡不到 1 GB。所以经验值是一个**安全的默认配置**，不是需求计算的结果：视觉与多模态集群应按解码成本算核数，
# LLM 集群可以把预算从 CPU 挪到网络和存储上。
#
# ## 8. 练习
#
# **练习 1**：70B 稠密模型在 H100-SXM 上以 40% MFU 训练，序列长度 4,096。每张 GPU 每秒消化多少个样本？

# %%
answer_1 = None
exercise("ch18.1").check(answer_1)

# %% [markdown]
# **练习 2**：A100 上 ResNet-50 每秒 2,470 张，单核解码 150 张/秒，每卡保留 1 个核给训练进程。每张 GPU 需要多少个 CPU 核？

# %%
answer_2 = None
exercise("ch18.2").check(answer_2)

# %% [markdown]
# **练习 3**：同样的流水线（107.7 kB JPEG、150 张/秒/核、保留 1 核、每卡 2 GB/s 读带宽），但每卡只有 8 个核。GPU 忙碌的时间占百分之几？（单位：%，按课程约定填百分数）

# %%
answer_3 = None
exercise("ch18.3").check(answer_3)

# %% [markdown]
# **练习 4（判断题）**：练习 3 的 8 核流水线，瓶颈在哪一级？（填 'storage_bw'、'storage_iops'、'cpu_decode'、'h2d_copy' 或 'gpu_compute'，也可以写「解码」等中文）

# %%
answer_4 = None  # 瓶颈级的名字
exercise("ch18.4").check(answer_4)

# %% [markdown]
# ## 9. 小结
#
# - 先从 GPU 倒推需求：LLM 每卡每秒几百（70B）到近万（7B）token（数据量可忽略），视觉模型每卡每秒几千张图（CPU 解码与 IOPS 是大户）。
# - 流水线吞吐 = 最慢一级的能力；预取只平滑抖动，不提高平均速率。
# - 小文件的代价是元数据操作和 IOPS；打包成分片能把文件打开次数降几个数量级。
# - 「每卡 16 核、256 GB」是通用服务器的安全默认值：视觉训练按解码成本算，LLM 训练按检查点暂存与并行规模算。
#
# ## 参考资料
#
# - 种子课程：《AI训练推理集群》1.5 误区三（「每张GPU至少配16个物理核心和256GB内存」）。
# - J. Kaplan et al., *Scaling Laws for Neural Language Models*, 2020, §2.1（每 token 训练计算 ≈ 6N）。
# - NVIDIA DeepLearningExamples, ResNet50 v1.5 for PyTorch, README「Training performance: NVIDIA DGX A100 (8x A100 80GB)」（1 GPU 2,470 img/s，8 GPU 16,621 img/s，pytorch-21.03 NGC）。
# - ImageNet ILSVRC2012 训练集：138 GB、1,281,167 张（image-net.org；Russakovsky et al., IJCV 2015）。
# - 单核 JPEG 解码速率 150 张/秒为**示意性假设**；解码器与 CPU 差异见 V. Iglovikov, D. Kosarevsky, *Single-Thread JPEG Decoder Benchmarks Mis-Evaluate ML Data Loaders*, arXiv:2605.08731。
# - Hugging Face `tokenizers` README（1 GB 文本 < 20 s）；Megatron-LM `megatron/core/datasets/indexed_dataset.py`（`DType.optimal_dtype`：词表 < 65,500 用 uint16）。
# - J. Mohan, A. Phanishayee, A. Raniwala, V. Chidambaram, *Analyzing and Mitigating Data Stalls in DNN Training*, VLDB 2021（arXiv:2007.06775；CoorDL 相对 DALI 单机最高 2×、多机最高 15×）。
# - D. G. Murray, J. Šimša, A. Klimovic, I. Indyk, *tf.data: A Machine Learning Data Processing Framework*, VLDB 2021, Figure 1（20% 的作业把超过三分之一的计算时间花在输入流水线上）。
# - sysstat `iostat(1)` man page（`-x` 列：r/s、rkB/s、r_await、rareq-sz、aqu-sz、%util 的定义；kB = 1024 B）；`nvidia-smi(1)` 的 dmon 一节与 `nvidia-smi --help-query-gpu`（utilization.gpu：采样周期内有 kernel 执行的时间百分比）。
# - 解析的 iostat / dmon 输出为真实格式、示意数值，见 `labutil/parsers/sysstat.py` 的 `SAMPLE_*`。
# - PyTorch `torch.utils.data.DataLoader` 文档（`num_workers`、`prefetch_factor` 默认 2、`pin_memory`）；NVIDIA DALI 文档：`fn.decoders.image`（`mixed` 后端用 nvJPEG，`hw_decoder_load` 默认 0.65，`hybrid_huffman_threshold`）、`fn.readers.tfrecord` / `fn.readers.webdataset`；NVIDIA nvJPEG 页面（A100 上的硬件 JPEG 解码）。
# - NVIDIA DeepLearningExamples ResNet50 v1.5 README「DALI」一节（DGX A100 / DGX-1 建议 `--data-backends dali-cpu`，DGX-2 建议 `dali-gpu`）；NVIDIA DGX-2 数据手册（16 × V100，2 × 24 核 Xeon Platinum 8168）；NVIDIA DGX-1 数据手册（8 × V100，2 × 20 核 Xeon E5-2698 v4）；同一 README 的「Training performance: NVIDIA DGX-1 16GB」表（1 张 V100 混合精度 1,200 img/s）。
# - WebDataset 文档（tar 分片、`pipe:` URL）；MosaicML Streaming 文档（MDS、`StreamingDataset` 的 `cache_limit`、续训状态 `epoch` / `sample_in_epoch`、Elastic Determinism）与 PyPI `streaming-community`（上游 0.13.0 发布于 2025-07-15）；Hugging Face `datasets` 文档（Arrow、`streaming=True`、`IterableDataset.state_dict`）；Megatron-LM `consumed_train_samples`。
# - NVIDIA DGX H100 / DGX A100 datasheet（CPU 核数、内存），见 `labutil/data/servers.toml`。
