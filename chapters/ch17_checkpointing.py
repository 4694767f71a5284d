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
# # 第17章 检查点：大小、写入带宽、异步与分片保存、保存间隔
#
# > 模块四「存储与数据」的第 2 章。前置：第 7 章（训练显存：权重、梯度、优化器状态）、第 16 章（并行文件系统与分层存储）。
# > 本章的保存间隔会在第 27 章（可靠性工程）与故障率、goodput 一起再用一次。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 从参数量算出一个完整训练检查点的大小（混合精度 Adam 每参数 14 字节），并解释它和「只导出权重」差在哪里；
# - 判断哪些模型规模对应种子课程所说的「单次保存可达数百GB」；
# - 用「文件系统聚合写带宽」和「单写入者上限」算出一次保存要多久，理解分片（sharded）保存为什么快、快到哪里为止；
# - 区分同步与异步检查点：训练真正被阻塞的只是 GPU→主机内存的拷贝；
# - 用 Young 公式 $\tau^* = \sqrt{2\delta M}$ 选保存间隔，并看清保存开销与故障返工之间的权衡。

# %%
from labutil.notebook import setup, show_table
from labutil import storage, reliability, models
from labutil.parsers import fio
from labutil.explore import storage as storage_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 检查点里到底存了什么
#
# 检查点要能让训练**从断点原样继续**，所以它必须包含优化器的全部状态，而不仅仅是模型权重。第 7 章讲过混合精度 Adam
# 训练时每个参数在显存里的构成：bf16 权重 2 B、bf16 梯度 2 B、以及 ZeRO 论文所说的 $K=12$ 字节优化器状态——
# fp32 主权重（master weights）4 B、Adam 一阶矩 $m$ 4 B、二阶矩 $v$ 4 B。保存时梯度不需要（下一步会重新算），
# 剩下的就是检查点：
#
# $$
# S_{\text{ckpt}} = N \times (\underbrace{4}_{\text{fp32 master}} + \underbrace{4 + 4}_{\text{Adam } m, v}
#                  + \underbrace{2}_{\text{bf16 weights}}) = 14N \ \text{bytes}.
# $$
#
# 这正是 DeepSpeed 和 Megatron-LM 落盘的布局：DeepSpeed 把 bf16 权重写进 `mp_rank_*_model_states.pt`，把 fp32 主权重和
# Adam 状态按 ZeRO 分片写进 `*_optim_states.pt`；Megatron-LM 的 distributed optimizer 把后者写进 `distrib_optim.pt`。
# 有的框架不单独存 bf16 副本（恢复时从 fp32 主权重转换），那就是 12 字节/参数。发布给推理用的「权重导出」只有 bf16 权重，
# 2 字节/参数——**训练检查点是发布权重的 7 倍**。

# %%
show_table([{"optimizer/precision": f"{o}/{p}", "bytes_per_param": storage.checkpoint_bytes_per_param(o, p),
             "parts": ", ".join(f"{k} {v:g}" for k, v in storage.checkpoint_breakdown(1, o, p).items())}
            for o, p in (("adam", "bf16"), ("adam", "fp32"), ("sgd", "bf16"), ("none", "bf16"))])

# %% [markdown]
# 两个常被问到的等价：**AdamW 与 Adam 的检查点一样大**——两者都保存一阶矩 $m$ 和二阶矩 $v$ 两个 fp32 状态，AdamW 只是把权重衰减
# 从梯度更新里解耦出来（Loshchilov & Hutter, ICLR 2019），不多存任何东西；**fp16 与 bf16 训练的检查点也一样大**，两种 16 位权重都是每个 2 B
# （fp16 训练多存一个 loss scaler 的标量，可以忽略）。下面探索器里切换这些选项，总大小不变，就是这个原因。
#
# 用公开数据验证：BigScience 公布 BLOOM-176B「只有 bf16 权重是 329GB，带优化器状态的完整检查点是 2.3TB」。
# 这两个数是 `du -h` 风格的二进制单位（GiB、TiB，向上取整）：

# %%
# NBVAL_CHECK_OUTPUT
n_bloom = 176_247_271_424
print(f"BLOOM-176B weights only: {storage.checkpoint_gb(n_bloom, optimizer='none'):.1f} GB = "
      f"{storage.checkpoint_gb(n_bloom, optimizer='none') * 1e9 / 2**30:.1f} GiB (published: 329GB)")
print(f"BLOOM-176B full: {storage.checkpoint_gb(n_bloom):,.0f} GB = "
      f"{storage.checkpoint_gb(n_bloom) * 1e9 / 2**40:.2f} TiB (published: 2.3TB)")
print(f"GPT-3 175B full: {storage.checkpoint_gb(175e9):,.0f} GB; without bf16 copy "
      f"{storage.checkpoint_gb(175e9, include_model_weights=False):,.0f} GB")

# %% [markdown]
# 模型 14 字节/参数的估算与公开数字吻合到 3% 以内（差别来自取整与少量额外状态，如学习率调度器、随机数状态、数据加载进度，
# 它们都是 KB–MB 级别）。GPT-3 175B 的完整检查点约 2.1–2.45 TB。
#
# ## 2. 「单次保存可达数百GB」是多大的模型？
#
# 种子课程说 512–2048 卡的 LLM 训练「单次保存可达数百GB」。反过来算：100 GB 到 1,000 GB 对应的参数量是

# %%
# NBVAL_CHECK_OUTPUT
lo, hi = storage.params_for_checkpoint_gb(100.0), storage.params_for_checkpoint_gb(1000.0)
print(f"100-1000 GB full checkpoints <-> {lo / 1e9:.1f}B to {hi / 1e9:.1f}B parameters")
for name in ("llama2-7b", "llama2-13b", "llama2-70b", "gpt3-175b", "llama3-405b"):
    n = models.transformer(name).params()
    print(f"{name:12s} {n / 1e9:7.1f}B params -> {storage.checkpoint_gb(n):8,.0f} GB")

# %% [markdown]
# 13B 到 70B 的模型正好落在「数百 GB」（7B 约 94 GB，在下沿）；175B 以上已经是 TB 级。这和种子课程的场景一致：512–2048 卡的集群，
# 训练的多半是几十 B 到一百多 B 的模型。下图把三种布局画在一起，阴影带是 100–1000 GB：

# %%
storage_x.checkpoint_size_figure()

# %% [markdown]
# ## 3. 写一次要多久：聚合带宽、单写入者上限与分片
#
# 检查点写入时间取决于**实际达到的写带宽**，它受两个上限约束：文件系统的聚合写带宽 $B_{\text{FS}}$，以及所有写入者的
# 能力之和 $n_w \times b_w$（单个写入进程受它所在节点的存储网卡、客户端、单流性能限制）：
#
# $$
# t_{\text{write}} = \frac{S}{\min(B_{\text{FS}},\; n_w\, b_w)} + t_0 .
# $$
#
# 早期做法是「rank 0 收集全部状态、一个人写」，$n_w = 1$，再快的文件系统也只有一个客户端的速度。分片保存
# （DeepSpeed ZeRO 每个 rank 写自己的分片；PyTorch `torch.distributed.checkpoint` 与 Megatron 的分布式检查点同理）
# 让 $n_w$ 变成几百上千，直到文件系统饱和为止。本章说「70B」时按整数 $N = 70\times10^9$ 算，检查点 980 GB；
# 真实的 Llama 3 70B 有 70.55B 个参数，检查点 988 GB（第 2 章、第 30 章用的是它），两者差不到 1%：

# %%
# NBVAL_CHECK_OUTPUT
print(f"70e9 params: {storage.checkpoint_gb(70e9):.0f} GB; Llama 3 70B "
      f"({models.transformer('llama3-70b').params() / 1e9:.2f}B params): "
      f"{storage.checkpoint_gb(models.transformer('llama3-70b').params()):.0f} GB")

# %% [markdown]
# 以 980 GB 为例，单写入者上限 2 GB/s：

# %%
# NBVAL_CHECK_OUTPUT
for n_w in (1, 8, 64, 256, 1024):
    t = storage.checkpoint_write_s(980.0, 400.0, n_writers=n_w, per_writer_gbs=2.0)
    print(f"{n_w:5d} writers x 2 GB/s into a 400 GB/s file system: {t:7.1f} s")

# %%
storage_x.checkpoint_write_figure(size_gb=980.0, fs_gbs=(100.0, 400.0, 1000.0), per_writer_gbs=2.0)

# %% [markdown]
# 曲线在 $n_w b_w = B_{\text{FS}}$ 处拐平：过了这个点，**再加写入者只会增加元数据压力**，写入时间由文件系统决定。
# 这就是第 16 章说「检查点层按带宽而不是容量规划」的原因。
#
# 实际部署时 $b_w$ 怎么估？一个写入者的上限是它所在节点的存储网络出口除以该节点上同时写的进程数，再打一个客户端效率折扣。
# 以目录里的 DGX H100 为例，它有 8 张计算网卡，另有 2 块双口的存储网卡（第 16 章：课程的规划按每节点 2 × 200 Gb/s = 50 GB/s 接存储网）；
# 检查点流量走存储网卡，不走训练用的计算网络。所以一个节点 8 个 rank 同时写时，它们共享的是那 50 GB/s，而不是 8 张 400G 计算网卡——
# 把计算网络带宽当成写带宽，是估算检查点时间时最常见的高估。下面第 7 节会用 fio 实测一个节点能写多快，把它当作 $b_w$ 的依据。
#
# **谁在写：$n_w$ 不一定等于 rank 数。** 数据并行的各个副本里，模型权重（以及没有用 ZeRO / 分布式优化器切分时的优化器状态）完全相同，
# 只需要写一份。PyTorch DCP 在规划保存时会给这些重复的张量去重，每份只让一个 rank 写；Megatron-LM 的旧格式（`--ckpt-format torch`）
# 只让每个「张量并行 × 流水线并行」组里数据并行序号为 0 的 rank 写（分布式优化器的状态也先收集到它那里），$n_w$ 于是只有 TP × PP 个；
# 它的分布式检查点（`torch_dist` 格式）的 fully parallel save 把这些副本的写入均匀分给数据并行组里的所有 rank，$n_w$ 回到 rank 数
# ——新版本默认打开，`--no-ckpt-fully-parallel-save` 才关掉。以 175B 模型、TP = 8、PP = 16、DP = 8 的千卡作业为例：

# %%
# NBVAL_CHECK_OUTPUT
size175 = storage.checkpoint_gb(175e9)
tp, pp, dp = 8, 16, 8
for label, n_w in (("DP rank 0 of each TP x PP group writes", tp * pp), ("fully parallel save, every rank writes", tp * pp * dp)):
    t = storage.checkpoint_write_s(size175, 400.0, n_writers=n_w, per_writer_gbs=2.0)
    print(f"{label:39s}: n_w = {n_w:5,d}, {size175:,.0f} GB in {t:5.2f} s (400 GB/s file system, 2 GB/s per writer)")

# %% [markdown]
# 只让 128 个 rank 写时，写入者合计 256 GB/s，文件系统的 400 GB/s 用不满；让全部 1,024 个 rank 分担之后才由文件系统决定。
# 文件怎么组织也要跟着想：每个写入者写自己的文件（N-N）时，每个文件只需条带到少数几个 OST，靠文件数量把负载铺到所有 OST 上；
# 所有写入者写同一个大文件（N-1）时，文件必须宽条带，文件系统的锁又会成为新的瓶颈——第 16 章的 IOR 加不加 `-F` 测的正是这两种模式。
# DCP 和 Megatron 的分布式检查点都是 N-N 的变体：每个 rank 一个或几个分片文件，外加一份描述全局布局的元数据。
#
# ## 4. 异步检查点：只有拷贝到主机内存那一段算停顿
#
# 同步保存时，训练等到最后一个字节落盘（并 fsync）才继续。异步保存把它拆成两段（CheckFreq 论文称为 snapshot 与 persist；
# PyTorch `torch.distributed.checkpoint.async_save`、Megatron-LM `--async-save`（只支持 `torch_dist` 分布式检查点格式）是同样的思路）：
#
# 1. **快照**：每个写入者把自己的分片从显存拷到锁页主机内存，训练在这段时间暂停，$t_{\text{block}} = \dfrac{S/n_w}{b_{\text{D2H}}}$；
# 2. **持久化**：后台线程把主机内存里的副本写进文件系统，训练同时继续，$t_{\text{bg}} = t_{\text{write}}$。
#
# 代价是每个写入者要多占 $S/n_w$ 的主机内存，并且后台写必须在下一次保存前完成，否则下一次保存要等它：
# 每次停顿 $= t_{\text{block}} + \max(0, t_{\text{bg}} - \tau)$。下面 GPT-3 175B（2,450 GB）在 100 GB/s 的文件系统上、
# 1,024 个写入者，拷贝带宽按 PCIe Gen5 x16 的 63 GB/s 理论值（实测会低 10–20%）：

# %%
# NBVAL_CHECK_OUTPUT
size = storage.checkpoint_gb(175e9)
sync = storage.checkpoint_save(size, 100.0, n_writers=1024, per_writer_gbs=2.0)
asy = storage.checkpoint_save(size, 100.0, n_writers=1024, per_writer_gbs=2.0, async_save=True)
for label, s in (("sync ", sync), ("async", asy)):
    print(f"{label}: blocking {s.blocking_s:7.2f} s, background {s.background_s:5.1f} s, "
          f"host RAM per writer {s.host_buffer_gb_per_writer:5.2f} GB, "
          f"overhead at 30 min: {100 * s.overhead_fraction(1800):.3f} %")

# %% [markdown]
# 同步保存每 30 分钟停 24.5 秒（1.34%），异步保存只停 0.04 秒。在下面的探索器里试试：把异步打开、把写带宽降到 10 GB/s、
# 把间隔缩到 5 分钟——后台写入超过间隔后，异步也救不了你，开销会重新上升。

# %%
storage_x.checkpoint_explorer()

# %% [markdown]
# ### 4.1 最小代码：PyTorch DCP 的分片保存、异步保存与换布局加载
#
# 上面的模型对应的代码并不长。PyTorch 的 `torch.distributed.checkpoint`（DCP）让**每个 rank 只写自己那一份**（$n_w$ = rank 数），
# rank 0 另写一个 `.metadata` 记录每个分片在全局张量里的坐标；`async_save` 先把分片拷到主机内存（$t_{\text{block}}$）再在后台线程写盘；
# `load` 按**当前**作业的切法原地读入，世界规模变了也能读（第 6.1 节的「换布局恢复」）。`get_state_dict` / `set_state_dict`
# 对普通模块、DDP、FSDP2 是同一个调用：
#
# ```python
# import torch
# import torch.distributed.checkpoint as dcp
# from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
#
#
# def save(model, opt, step, root, async_save=False):
#     msd, osd = get_state_dict(model, opt)          # full or sharded (FSDP2/DTensor): the same call
#     state = {"model": msd, "optim": osd, "step": torch.tensor(step)}
#     path = f"{root}/step{step:08d}"
#     if async_save:                                 # copies to host memory, then writes in a background thread
#         return dcp.async_save(state, checkpoint_id=path)
#     dcp.save(state, checkpoint_id=path)            # every rank writes its own shard files + rank 0 writes .metadata
#
#
# def load(model, opt, path):
#     msd, osd = get_state_dict(model, opt)          # the shapes/shards of the CURRENT job
#     state = {"model": msd, "optim": osd, "step": torch.tensor(0)}
#     dcp.load(state, checkpoint_id=path)            # in place; re-sharded if the world size changed
#     set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
#     return int(state["step"])
# ```
#
# 用法：`fut = save(model, opt, step, "/lustre/ckpt/run42", async_save=True)`，**下一次保存前**（以及退出前）调用 `fut.result()`——
# 这就是本节「后台写入必须在下一次保存前完成」的那一行代码；`fut.result()` 等得越久，说明 $t_{\text{bg}} > \tau$。
# 目录里是每个 rank 一个 `__<rank>_0.distcp` 分片文件加一个 `.metadata`；只有 `.metadata` 写完的目录才算完整（6 节的「完成标记」）。
# 这段代码在 torch 2.13 CPU 版、单进程 gloo 进程组上实测过保存、异步保存、清零权重后读回一致（`tests/test_ch17_dcp_snippet.py`
# 在装了 torch 的环境里每次都会把它抽出来重跑一遍）；多机时由 `torchrun` 建好进程组，代码不变。
#
# ## 5. 多久保存一次：Young 公式
#
# 保存太频繁，开销大；保存太稀疏，故障时丢掉的工作多。设每次保存阻塞 $\delta$ 秒、作业平均无故障时间为 $M$、
# 两次保存间隔 $\tau$。一次故障平均损失半个间隔的工作，于是浪费的时间比例近似为
#
# $$
# W(\tau) \approx \frac{\delta}{\tau} + \frac{\tau}{2M}, \qquad
# \tau^* = \sqrt{2\,\delta\,M}\quad\text{(Young, 1974)}.
# $$
#
# 这是一阶近似。课程的精确模型是 `reliability.goodput`（Daly 2006 的指数故障模型，第 27 章也用它）：浪费 = 1 − goodput，
# 它的最小点就是 Daly 的最优间隔，在 $\delta \ll M$ 时和 Young 几乎相同。第 27 章会用真实故障率（Meta Llama 3 训练：
# 16,384 张 H100 上 54 天 419 次中断）算 $M$。先看这个中断率给出的作业 MTBF 随规模怎么变：

# %%
# NBVAL_CHECK_OUTPUT
for n in (1024, 4096, 16384):
    print(f"{n:6,d} GPUs at Llama 3's interruption rate: job MTBF {24 / reliability.llama3_failures_per_day(n):5.1f} h")

# %% [markdown]
# 中断率与卡数成正比，所以作业 MTBF 与卡数成反比：千卡作业大约两天一次，一万六千卡作业约 3 小时一次。下面取 $M = 3$ 小时
# ——这是 Llama 3 那种万卡级作业的量级，也是保存间隔最要紧的场景——比较同步（98 s，980 GB 在 10 GB/s 的慢存储上）与异步：

# %%
# NBVAL_CHECK_OUTPUT
mtbf_s = 3 * 3600.0
for label, delta in (("sync 98 s", 98.0), ("async 0.24 s", 0.24)):
    young = reliability.young_daly_interval_s(delta, mtbf_s)
    daly = reliability.daly_interval_s(delta, mtbf_s)
    first_order = delta / young + young / (2 * mtbf_s)
    print(f"{label:13s}: Young {young / 60:5.1f} min (first-order waste {100 * first_order:5.2f} %, exact "
          f"{100 * reliability.checkpoint_waste(young, delta, mtbf_s):5.2f} %); exact optimum (Daly) {daly / 60:5.1f} min, "
          f"waste {100 * reliability.checkpoint_waste(daly, delta, mtbf_s):5.2f} %")

# %%
storage_x.checkpoint_overhead_figure(sync_s=98.0, async_s=0.24, mtbf_s=3 * 3600.0)

# %% [markdown]
# （异步的 0.24 秒 = 980 GB 分给 64 个写入者、每个以 63 GB/s 拷到主机内存。）同步保存时最优间隔约 23–24 分钟（精确最优 23.2、
# Young 24.2，两处的浪费只差 0.02 个百分点：曲线底部很平），总浪费仍有 12.9%；一阶公式 $\delta/\tau + \tau/2M$ 给出 13.5%，
# 比精确模型高约 0.6 个百分点（它丢掉了 $\tau/M$ 的高阶项），选出的间隔和结论不变。
# 异步把 $\delta$ 压到 0.24 秒后，最优间隔缩到 1.2 分钟，浪费降到 0.67%——
# 保存得越便宜，就越应该频繁保存，故障返工随之变小。这是「异步检查点」真正的价值：它不只是省掉那几十秒，
# 而是让你能把保存间隔缩短一个数量级。（注意异步时后台写入 98 s 比 1.2 分钟还长，实际间隔还要受 $t_{\text{bg}}$ 约束。）
#
# ## 6. 恢复、一致性与保留策略
#
# 检查点的价值只在恢复时兑现，所以设计时要同时算「写」和「读回」。故障后重启，每个 rank 要把自己那份状态读回显存：
# 读回时间 = 检查点大小 / 检查点层的读带宽。同一个 2,450 GB 的检查点，从第 16 章规划出的 7 台闪存服务器读回，
# 和从对象存储（冷层，2 台 HDD 节点）读回，差了两个数量级：

# %%
# NBVAL_CHECK_OUTPUT
fast = 7 * storage.server_spec("nvme-pfs-2u").read_gbs
cold = 2 * storage.server_spec("object-hdd-2u").read_gbs
print(f"restore 2,450 GB from the checkpoint tier ({fast:.0f} GB/s): {2450.0 / fast:6.1f} s; "
      f"from the object store ({cold:.2f} GB/s): {2450.0 / cold / 60:5.1f} min")
f10k = reliability.llama3_failures_per_day(10240)
print(f"10,240-GPU job at Llama 3's interruption rate: {f10k:.2f}/day = {f10k / 24:.2f}/h (an interruption every {24 / f10k:.1f} h); "
      f"restoring from the object store every time: {f10k * 2450.0 / cold / 60:.0f} min/day "
      f"({100 * f10k * 2450.0 / cold / 86400:.1f} % of the day) vs {f10k * 2450.0 / fast:.0f} s/day from the checkpoint tier")

# %% [markdown]
# 所以运维上的惯例是：**最近 2–3 个检查点留在快的检查点层，更老的异步迁移到对象存储归档**。按 Llama 3 公开的中断率，
# 一个万卡作业每天约中断 4.8 次（约每 5 小时一次）；如果每次重启都要从冷层读 6 分钟，一天光读检查点就是 29 分钟（2.0%），
# 从检查点层读回一天合计只要 17 秒——这还没算重启本身和丢掉的那半个间隔（第 27 章细算）。
#
# 一致性同样重要。一个检查点由成百上千个分片文件组成，任何一个没写完，整个检查点就不可用。可靠的做法有三条：
# 第一，先写到临时目录，全部分片落盘并 fsync 之后，再由 rank 0 写一个小的「完成标记」（Megatron 的 `latest_checkpointed_iteration.txt`、
# DeepSpeed 的 `latest` 文件），恢复时只认有标记的目录；第二，保存后校验分片数量与大小（必要时校验和），
# 别等到故障那天才发现上周的检查点是坏的；第三，按「保留最近 $k$ 个」滚动删除，否则 2.45 TB 一份、每半小时一份，
# 一天就是 118 TB，检查点层很快被写满——第 16 章 `lfs df` 里那个 90% 的 OST 就是这么来的。
#
# 最后是主机内存：异步保存要在主机内存里暂存本节点所有 GPU 的分片。大规模训练里分片很小（175B、1,024 个写入者，每个 2.4 GB），
# 但一台 8 卡服务器根本装不下 70B 的全参数训练：模型状态 16 字节/参数 × 70e9 = 1,120 GB（约 1.1 TB），8 × 80 GB = 640 GB 的显存
# 即使用 ZeRO-3 全切分也是每卡 140 GB。只有用 ZeRO-Offload 把 fp32 主权重和 Adam 状态（加上梯度共 980 GB）放进主机内存才跑得起来，
# 这时每张卡对应 980 / 8 = 122.5 GB 主机内存——这才是「每卡 256 GB 内存」真正用得上的场景（第 9、18 章）。
#
# ### 6.1 检查点里除了张量还要有什么
#
# 新手写的检查点常常只存模型和优化器，恢复后 loss 曲线看起来也正常，问题要很久才暴露。一个能「无缝续训」的检查点还必须带上：
# **数据位置**（已消费到哪个样本、每个 DataLoader worker 的分片游标），否则恢复后要么重复读一段数据、要么跳过一段，
# 对 LLM 来说重复的数据会被模型记住，在评测里表现成莫名的过拟合；**随机数状态**（Python、NumPy、每张卡的 CUDA 生成器），否则 dropout 与数据打乱无法复现；
# **学习率调度器与 loss scaler 的状态**，否则恢复后学习率从预热阶段重新开始；以及**并行布局的元数据**（TP/PP/DP 的切法、每个分片对应的全局张量范围）。
# 最后一项决定了能不能「换布局恢复」：故障后少了两台机器，想用更小的 DP 继续跑，
# PyTorch `torch.distributed.checkpoint`（DCP）和 Megatron 的分布式检查点（`torch_dist` 格式）都按全局张量的坐标保存分片，
# 加载时可以按新的并行布局重新切分；DeepSpeed 的 ZeRO 检查点按 rank 保存，要先用它的 Universal Checkpointing 工具（`ds_to_universal.py`）
# 转成与布局无关的格式才能换布局加载。老式「每个 rank 一个 `torch.save` 文件」的检查点就只能原样恢复。
#
# ### 6.2 业界的教训：故障代价与内存检查点
#
# Meta 公开 OPT-175B 训练日志时，最让人印象深刻的不是模型，而是日志里一次接一次的重启：硬件故障、NCCL 超时、作业挂起，每次都要人工介入、换机、回退到上一个检查点。
# Amazon 的 GEMINI 论文（Wang 等，SOSP 2023）引用这份报告：OPT-175B 的训练中约 178,000 GPU 小时因各种故障被浪费。
# Llama 3 的 405B 训练规模更大，54 天里出现 419 次意外中断（*The Llama 3 Herd of Models* §3.3.4），论文说每张卡的检查点状态在 1 MB 到 4 GB 之间。
# 把这些数字放进本章的公式：

# %%
# NBVAL_CHECK_OUTPUT
print(f"OPT-175B: 178,000 GPU-hours wasted = {178000 / 992 / 24:.1f} days of the whole 992-GPU cluster")
f_day = reliability.llama3_failures_per_day(16384)
m_s = 86400.0 / f_day
delta = storage.checkpoint_write_s(16384 * 4.0, 2000.0)   # upper bound: 4 GB per GPU into Tectonic's 2 TB/s sustained
tau = reliability.young_daly_interval_s(delta, m_s)
print(f"Llama 3 at 16,384 GPUs: {f_day:.2f} failures/day, job MTBF {m_s / 3600:.2f} h")
print(f"sync checkpoint of 16,384 x 4 GB at 2 TB/s: {delta:.1f} s -> Young interval {tau / 60:.1f} min, "
      f"goodput {100 * reliability.goodput(f_day, 600.0, tau, delta):.1f} % with a 10 min restart")

# %% [markdown]
# OPT 浪费的时间相当于整台 992 卡集群空转一周多；Llama 3 的作业平均 3 小时就中断一次。按每卡 4 GB 的上限同步写进 2 TB/s 的文件系统，
# 每次要停半分钟，Young 公式给出约 14 分钟的最优间隔，再算上 10 分钟重启，goodput 约 88%——和 Meta 报告的「有效训练时间超过 90%」同一量级（他们多数卡的状态远小于 4 GB，保存更快，所以还能再高一点）。
# 要再往上提，只能同时压三件事：保存的阻塞时间（异步）、保存间隔（因此要更便宜的保存）、重启时间（第 27 章）。
# GEMINI 的做法是把检查点先放在**其他节点的 CPU 内存**里：每次迭代都能保存，故障后从邻居的内存而不是远端存储读回，论文报告故障恢复快了 13 倍；
# 远端存储只作为内存副本全部丢失时的最后一道保险。同样的分层思路也出现在 Microsoft 的 Nebula（Azure ML 的快速检查点服务）
# 和 PyTorch DCP 的 `async_save` 中：**先快照到近处，再慢慢持久化到远处**。设计检查点系统时，要问的不是「存储有多快」，
# 而是「一次故障丢掉多少工作、要多久才能重新开始」。
#
# 运维上还有一条铁律：**定期做恢复演练**。检查点写成功不代表能读回来——分片缺失、格式随代码升级变了、完成标记写在了错误的目录，
# 这些问题只有真正从检查点拉起一次训练、对比恢复前后几步的 loss 才能发现。很多团队把「每周从最新检查点恢复一次并比对 loss」写进值班手册。
#
# 保存失败本身也要被监控。训练脚本里检查点写入通常在 `try` 里，失败只打一行日志、训练照常继续——直到真正要恢复时才发现最近一个可用的检查点是两天前的。应该把「最近一次成功保存的时间」和「最近一次保存耗时」作为作业指标上报（第 26 章），前者超过两个保存间隔就告警，后者持续变长说明存储在变慢或检查点层快满了。
#
# ## 7. 实操命令
#
# 在上线训练之前，先在检查点目录上用 fio 模拟「每个节点 16 个进程、大块顺序写、结束时 fsync」，确认单节点写带宽：
#
# ```bash
# lfs setstripe -c 8 -S 4M /lustre/ai/ckpt-test        # 大文件条带到 8 个 OST
# fio --name=ckpt-write --directory=/lustre/ai/ckpt-test --rw=write --bs=4M --size=32G \
#     --numjobs=16 --iodepth=1 --ioengine=libaio --direct=1 --end_fsync=1 \
#     --runtime=60 --time_based --group_reporting --output-format=json > ckpt.json
# # 多节点同时测：用 Slurm 在每个节点上起一份（fio --client 亦可）
# srun -N 32 --ntasks-per-node=1 fio ... --output-format=json --output=ckpt-%j-%t.json
# ```
#
# 下面解析 fio JSON 输出格式的样例（数字为示意：一个配 2 × 200 Gb/s 存储网卡的节点；出处见 `sample_source`）：

# %%
print(fio.sample_source("fio_ckpt_json"))

# %%
# NBVAL_CHECK_OUTPUT
(job,) = fio.parse_fio_json(fio.sample("fio_ckpt_json"))
print(f"{job.jobname}: {job.write_gbs:.2f} GB/s, {job.write_iops:,.0f} IOPS of 4 MiB, "
      f"mean latency {job.write_clat_mean_us / 1e3:.2f} ms, p99 {job.write_clat_p99_us / 1e3:.2f} ms")
nodes_needed = 500.0 / job.write_gbs
print(f"per-node 18.35 GB/s -> a 500 GB/s checkpoint burst needs >= {nodes_needed:.0f} writing nodes; "
      f"980 GB from 32 such nodes: {storage.checkpoint_write_s(980.0, 500.0, 32, job.write_gbs):.1f} s")

# %% [markdown]
# 单节点 18.35 GB/s 约为两块 200G 网卡（50 GB/s）的 37%：单节点往往先受客户端和进程数限制，这就是模型里的 $b_w$。
# 读这份 JSON 时，用 `bw_bytes`（字节/秒）而不是 `bw`（KiB/s），延迟看 `clat_ns.percentile["99.000000"]`。
#
# ## 8. 常见误区
#
# **误区一：「检查点就是模型权重，70B 模型 140 GB。」** 那是推理导出。完整训练检查点要带优化器状态：

# %%
# NBVAL_CHECK_OUTPUT
print(f"70B: weights-only {storage.checkpoint_gb(70e9, optimizer='none'):.0f} GB vs full training checkpoint "
      f"{storage.checkpoint_gb(70e9):.0f} GB ({storage.checkpoint_gb(70e9) / storage.checkpoint_gb(70e9, optimizer='none'):.0f}x)")

# %% [markdown]
# 140 GB 只是 bf16 权重；训练检查点是它的 7 倍，980 GB。按 140 GB 规划检查点层，容量和写入时间都会低估 7 倍，
# 而且这个误差不会在小规模测试里暴露：单机微调常常只存权重，上了多机预训练才第一次存完整状态。
#
# **误区二：「写入者越多越快。」** 写入者的数量只决定 $n_w b_w$ 这一项，另一项文件系统的聚合带宽 $B_{\text{FS}}$ 不会因为写入者多而变大。
# 980 GB、400 GB/s 的文件系统、每个写入者 2 GB/s：

# %%
# NBVAL_CHECK_OUTPUT
for n_w in (200, 256, 1024):
    print(f"{n_w:5d} writers: {storage.checkpoint_write_s(980.0, 400.0, n_writers=n_w, per_writer_gbs=2.0):.2f} s")

# %% [markdown]
# 200 个写入者时 $n_w b_w$ 正好等于 400 GB/s，之后 256 个和 1,024 个写入者都是 2.45 秒：文件系统饱和后，多出来的只有元数据操作
# （每个写入者至少创建、打开、关闭一个文件，1,024 个分片就是上千次元数据请求同时打到 MDS 上）。分片数要够让 $n_w b_w$ 超过 $B_{\text{FS}}$，但不必更多。
#
# **误区三：「开了异步检查点，保存就免费了。」** 它只在后台写入短于保存间隔时成立。2,450 GB 写进 10 GB/s 的存储、每 2 分钟保存一次：

# %%
# NBVAL_CHECK_OUTPUT
slow = storage.checkpoint_save(2450.0, 10.0, n_writers=1024, per_writer_gbs=2.0, async_save=True)
print(f"async into 10 GB/s, every 2 min: background {slow.background_s:.0f} s > 120 s -> "
      f"overhead {100 * slow.overhead_fraction(120.0):.1f} %")

# %% [markdown]
# 后台写一次要 245 秒，而两次保存只隔 120 秒：第二次保存到来时第一次还没写完，训练只能等，一半的时间花在等存储上。
# 异步检查点改变的只是「谁在等」，不改变存储要搬运的数据量：每个间隔写入的字节数除以间隔，必须小于检查点层的写带宽，
# 这是任何保存策略都绕不过的硬约束。遇到这种情况，正确的选择是放长间隔（用 Young 公式按真实 δ 重算）、减少每次写入的量
# （例如只在每 N 次保存中写一次完整的优化器状态），或者把近处快照放进节点内存、远处持久化降频——而不是指望异步本身解决问题。
#
# ## 9. 练习
#
# **练习 1**：70B 参数模型、混合精度 Adam 的完整检查点多少 GB？

# %%
answer_1 = None
exercise("ch17.1").check(answer_1)

# %% [markdown]
# **练习 2**：这个 980 GB 的检查点由 256 个写入者写（每个最多 2 GB/s），文件系统聚合写带宽 400 GB/s，要写多少秒？

# %%
answer_2 = None
exercise("ch17.2").check(answer_2)

# %% [markdown]
# **练习 3**：同步保存每次阻塞 98 秒，作业 MTBF 为 3 小时。Young 最优保存间隔是多少分钟？

# %%
answer_3 = None
exercise("ch17.3").check(answer_3)

# %% [markdown]
# **练习 4（判断题）**：同步保存阻塞 98 s、任务 MTBF 3 h、重启 10 分钟。检查点间隔取 10、30、60 分钟中的哪个，goodput 最高？

# %%
answer_4 = None  # '10' / '30' / '60'
exercise("ch17.4").check(answer_4)

# %% [markdown]
# ## 10. 小结
#
# - 完整检查点 = fp32 主权重 + Adam $m, v$ + bf16 权重 = 14 字节/参数；7B–70B 模型是「数百 GB」，175B 约 2.45 TB。
# - 写入时间 = 大小 / min(文件系统带宽, 写入者数 × 单写入者上限)；分片保存快到文件系统饱和为止。
# - 异步保存只阻塞显存→主机内存的拷贝，但要求后台写入短于保存间隔、主机内存装得下分片。
# - 保存间隔按 Young 公式 $\sqrt{2\delta M}$ 选；保存越便宜就该越频繁。
# - 检查点要带上数据游标、随机数状态、调度器状态和并行布局元数据，才能无缝续训、换布局恢复；写成功不等于读得回，要定期做恢复演练。
# - 大规模训练的故障代价以天计（OPT-175B 浪费约 17.8 万 GPU 小时）：先快照到近处的内存，再持久化到远处的存储。
#
# ## 参考资料
#
# - A. Grattafiori et al. (Meta), *The Llama 3 Herd of Models*, arXiv:2407.21783, §3.3.1（每卡检查点 1 MB–4 GB；Tectonic 持续 2 TB/s）与 §3.3.4（54 天 419 次意外中断，有效训练时间 > 90%）。
# - S. Zhang et al. (Meta), *OPT: Open Pre-trained Transformer Language Models*, arXiv:2205.01068（992 张 A100；公开训练日志 logbook）。
# - Z. Wang et al., *GEMINI: Fast Failure Recovery in Distributed Training with In-Memory Checkpoints*, SOSP 2023（引用 OPT-175B 约 178,000 GPU 小时因故障浪费；恢复快 13 倍）。
# - PyTorch 文档 `torch.distributed.checkpoint`（分片保存、加载时重新切分、`async_save`）；Microsoft Azure ML *Nebula* 快速检查点文档。
# - 种子课程：《AI训练推理集群》1.4 场景一（「单次保存可达数百GB」，512–2048 卡 LLM 训练）。
# - S. Rajbhandari et al., *ZeRO: Memory Optimizations Toward Training Trillion Parameter Models*, SC 2020, §3.1（混合精度 Adam 的 K = 12）。
# - BigScience, *BLOOM 176B* 训练说明（bigscience.notion.site）：「bf16 weights are 329GB, the full checkpoint with optimizer states is 2.3TB」；BLOOM 论文 arXiv:2211.05100。
# - DeepSpeed 检查点格式（`mp_rank_*_model_states.pt`、`*_optim_states.pt`，`zero_to_fp32.py`）与 Universal Checkpointing（`ds_to_universal.py`；Lian et al., arXiv:2406.18820）；Megatron-LM distributed optimizer（`distrib_optim.pt`）、`--async-save`（帮助文本：只支持 `torch_dist` 格式）、`--ckpt-fully-parallel-save` / `--no-ckpt-fully-parallel-save`；Megatron Core `dist_checkpointing` 文档（`torch_dist` 格式、`FullyParallelSaveStrategyWrapper`：按数据副本把保存均匀分给各 rank）。
# - PyTorch `torch/distributed/checkpoint/_dedup_save_plans.py`（保存计划里重复张量只保留一个写入者）。
# - J. Mohan, A. Phanishayee, V. Chidambaram, *CheckFreq: Frequent, Fine-Grained DNN Checkpointing*, FAST 2021（snapshot/persist 两阶段）；PyTorch `torch.distributed.checkpoint.async_save` 文档。
# - J. W. Young, *A first order approximation to the optimum checkpoint interval*, CACM 17(9), 1974；J. T. Daly, *A higher order estimate of the optimum checkpoint interval for restart dumps*, FGCS 22(3), 2006。
# - PCI-SIG PCIe 5.0 规范（32 GT/s × 16 lanes × 128/130 ÷ 8 = 63 GB/s）；fio HOWTO（JSON 输出字段）。
# - A. Grattafiori et al., *The Llama 3 Herd of Models*, 2024, §3.3.4（54 天 419 次中断，第 27 章使用）。
