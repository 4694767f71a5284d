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
# # 第22章 NCCL Test与带宽验收
#
# > 模块五「部署与验证」。前置：第 13 章（algbw 与 busbw）、第 15 章（NCCL 算法、协议与日志）、第 12 章（拓扑与 rail）。
# > 本章把「集群网络到底合不合格」变成一个可计算的判断：跑什么、读哪一列、和多少比、低于多少算不合格。动手部分在 lab02。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 编译并运行 nccl-tests（`all_reduce_perf` 等），说清 `-b -e -f -g -n -w -c -N -J` 等参数的含义；
# - 读懂它的输出表：size、count、time、algbw、busbw、#wrong 各是什么，为什么验收只看大消息的 busbw；
# - 由网络配置算出**期望 busbw**（环形上限 × 效率），并对 NVLink、8 × 400G、8 × 200G、25GbE 等组合给出数字；
# - 用 `labutil.parsers.parse_nccl_tests` + `labutil.health.check_nccl_tests` 把一次测试变成 pass / warning / critical 的结论，并定位「一条慢 rail」这类典型问题。

# %%
from labutil.notebook import setup, show_table
from labutil import busbw_validation, comm, facts, health, reliability
from labutil.cluster import Cluster, NIC_EFFICIENCY
from labutil.bench import collectives
from labutil.explore import nccl as nccl_x
from labutil.parsers import parse_nccl_tests, samples
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 为什么要单独做「带宽验收」
#
# 一个新集群交付时，最常见的性能问题不是「坏了」，而是「慢了」：某台交换机的一个端口协商成了 200G、某块网卡的固件版本不对导致没有
# GPUDirect RDMA、某个容器镜像里残留了 `NCCL_IB_DISABLE=1`、某台服务器的 PCIe ACS 没关导致 P2P 绕道 CPU……这些问题都不会让训练报错，
# 只会让每一步慢 10%–50%。在千卡训练里，这意味着每天白白烧掉几百个 GPU·小时，而且问题藏在几百台机器中的某一台上。
# 所以验收的原则是：**在交付前，对每台机器、每对机器、每个交换机域跑一遍标准测试，把结果和一个事先算好的期望值比较**。
# nccl-tests 就是这个标准测试：它由 NVIDIA 维护，直接调用 NCCL，输出格式稳定，几乎所有 GPU 厂商和云厂商的验收报告都用它。
#
# ## 2. 编译与运行
#
# ```bash
# git clone https://github.com/NVIDIA/nccl-tests && cd nccl-tests
# make MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=/usr
# # 单机 8 卡（一个进程驱动 8 张卡）
# ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 8
# # 两机 16 卡（每卡一个 MPI 进程）
# mpirun -np 16 -N 8 --hostfile hosts -x NCCL_IB_HCA=mlx5 ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1
# # Slurm 下
# srun -N 2 --ntasks-per-node=8 --gpus-per-node=8 --mpi=pmix ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1
# # 两节点验收：强制环（见第 4 节），并把结果同时写成 JSON 存档（nccl-tests ≥ 2.17.3）
# srun -N 2 --ntasks-per-node=8 --gpus-per-node=8 --mpi=pmix --export=ALL,NCCL_ALGO=Ring \
#     ./build/all_reduce_perf -b 1G -e 8G -f 2 -g 1 -w 5 -J /shared/accept/$(date +%F)_pair_node07_node08.json
# ```
#
# | 参数 | 含义 | 默认值（`src/common.cu`） |
# |---|---|---|
# | `-b` / `-e` | 最小 / 最大消息字节数（支持 K、M、G，二进制） | 32M / 32M |
# | `-f` / `-i` | 每次乘以的倍数 / 每次增加的字节数 | 1 / 1M |
# | `-g` | 每个进程驱动的 GPU 数 | 1 |
# | `-n` / `-w` | 计时迭代次数 / 预热次数 | 20 / 1（2.16.8 起，预热会遍历所有尺寸；更早的版本是 5） |
# | `-c` | 是否校验结果（#wrong 列） | 1 |
# | `-d` / `-o` | 数据类型 / 归约操作 | float / sum |
# | `-a` | 各 rank 时间的汇总方式（0 rank0、1 平均、2 最小、3 最大） | 1 |
# | `-N` | 整个扫描重复几轮（0 = 一直跑，烧机时用） | 1 |
# | `-G` | 用 CUDA Graph 启动几次（减少启动开销，小消息的 time 更接近 NCCL 本身） | 0 |
# | `-J` | 把结果另写成 JSON 文件（≥ 2.17.3），便于存档和脚本比较 | 不写 |
#
# 版本差异值得记住：同一条命令在 2.16.8 前后的预热次数不同，表头那一行 `warmup iters:` 会如实打印出来——比较两次验收结果前，先核对表头里的参数是否一致。
#
# 课程自带的 `labutil.bench.collectives` 接受同样的参数、打印同样格式的表，用 torchrun 启动（lab02）；在没有编译 nccl-tests 的实验机上，
# 它是一个方便的替代品，但**正式验收请用 nccl-tests 本身**——它直接调用 NCCL，没有 PyTorch 这一层。
#
# ## 3. 读懂输出表
#
# 每一行是一个消息大小，左半是 out-of-place（发送与接收缓冲区不同），右半是 in-place。time 是每次调用的平均微秒数，
# 另外两列按 nccl-tests `doc/PERFORMANCE.md` 计算：
#
# $$\text{algbw} = \frac{S}{t}, \qquad \text{busbw} = \text{algbw} \times f(\text{op}, n)$$
#
# algbw 只是「数据量除以时间」，它随参与的 GPU 数变化，不能直接和硬件速率比较；busbw 乘上一个只与集合通信类型和 rank 数有关的因子，
# 换算成「每个 rank 的链路上实际承受的带宽」，于是可以直接和 NVLink、网卡的物理速率比较，而且 8 卡和 1024 卡的数字可比。
# 对 all_gather、reduce_scatter，size 列是**整个**输出（或输入）缓冲区，即每个 rank 的份额 × n。各操作的因子：

# %%
# NBVAL_CHECK_OUTPUT
ops = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"]
for n in (8, 16, 1024):
    print(f"n={n:5d}: " + "  ".join(f"{op} {comm.busbw_factor(op, n):.4f}" for op in ops))

# %% [markdown]
# 下面解析一段两机 16 卡 H100（8 × 400G NDR）的 `all_reduce_perf` 输出。样例是课程按 nccl-tests 2.17+ 的真实行格式
# （`src/util.cu` 的 `writeDeviceReport` / `writeBenchmarkLine*`）生成的示意数据，数字由 α-β 模型合成，不是某台真实机器的测量
# （所以它在中等尺寸上和后面集群模型的曲线并不完全重合，验收只看平台值）；在你的集群上把命令输出重定向到文件，用同一个解析器读取即可。

# %%
run = parse_nccl_tests(samples.sample("nccl_tests_all_reduce_2node"))
print(f"{run.binary}: NCCL {run.nccl_version}, {run.n_ranks} ranks on {run.hosts}, {len(run.rows)} sizes")
show_table([{"size (B)": r.size_bytes, "time (us)": r.time_us, "algbw (GB/s)": r.algbw_gbs, "busbw (GB/s)": r.busbw_gbs,
             "#wrong": r.wrong} for r in run.rows[::3]])

# %%
# NBVAL_CHECK_OUTPUT
js = parse_nccl_tests(samples.sample("nccl_tests_all_reduce_2node_json"))
print(f"-J JSON: {js.op} on {js.n_ranks} ranks, {len(js.rows)} sizes, NCCL {js.nccl_version}, "
      f"peak busbw {js.peak_busbw_gbs:.2f} GB/s (text output: {run.peak_busbw_gbs:.2f})")

# %%
# NBVAL_CHECK_OUTPUT
big = run.rows[-1]
print(f"largest size {big.size_bytes} B: time {big.time_us:.1f} us, algbw {big.algbw_gbs:.2f} GB/s, busbw {big.busbw_gbs:.2f} GB/s")
print(f"busbw / algbw = {big.busbw_gbs / big.algbw_gbs:.4f}; 2(n-1)/n for n=16 = {2 * 15 / 16:.4f}")
print(f"peak busbw {run.peak_busbw_gbs:.2f} GB/s, '# Avg bus bandwidth' {run.avg_busbw_gbs:.2f} GB/s, #wrong total {run.total_wrong()}")

# %% [markdown]
# 注意最后一行：`# Avg bus bandwidth` 是**所有尺寸**（含 in-place）busbw 的平均，被大量小消息拉低，128 GB/s 远低于 368 GB/s 的峰值。
# 很多验收报告误把这个数当成「集群带宽」写进去；验收应看大消息（通常 ≥ 1 GiB）上的平台值。
#
# 用了 `-J` 的话，同一次运行还会得到一个 JSON 文件（nccl-tests `src/util.cu`，`JSON_FILE_VERSION` 3）：顶层是 `version`、`args`、`env`、
# `nccl_version`（整数编码，22304 即 2.23.4）、`config`（含 `warmup_iters`、`iterations` 和每个 rank 的 `devices`），`results` 里每个尺寸一项，
# `out_of_place` / `in_place` 下是 `time`、`alg_bw`、`bus_bw`、`nwrong`。`parse_nccl_tests` 认得这种格式，读出来的是同一个结果对象：
#
# 读表时还有几个细节值得注意。第一，out-of-place 与 in-place 两组数字通常相差不到几个百分点；如果某个尺寸上二者差得很多，
# 往往是缓冲区对齐或内存注册（IB 的 MR 缓存）的问题，值得单独复测。第二，time 是多次调用的平均值，而且默认在各 rank 之间再取平均（`-a 1`）；
# 一个 rank 慢，其他 rank 都要等它，所以「慢节点」表现为所有 rank 的 time 一起变大，而不是某一行数字异常——这正是要用成对测试去定位的原因。
# 第三，`-c 1` 的校验在计时循环之外单独执行，不影响带宽数字，验收时务必保持开启。第四，同一台机器连续跑几次，大消息的 busbw 波动应在
# 1%–2% 以内；波动更大时先排除其他作业的干扰（检查 `nvidia-smi` 上是否有别的进程），再看交换机上是否有其他流量。
#
# ## 4. 期望值：从网络配置算出来
#
# 环形 all-reduce 的 busbw 被环上最慢的一段链路限制。多机时 NCCL 为每个 rail（每块网卡）建一个环，各 rail 的带宽相加；
# 环同时也穿过节点内的 NVLink，所以节点的上限是二者的较小值。两种链路都到不了线速，而且**效率不一样**，不能用一个 0.9 通吃：
#
# $$\text{expected} = \min\Big(B_{\text{NVLink 环}},\ k \cdot \frac{r_{\text{NIC}}}{8} \cdot \eta_{\text{NIC}}\Big)$$
#
# 其中 $k$ 是每节点网卡数、$r_{\text{NIC}}$ 是每块网卡的 Gbit/s、$\eta_{\text{NIC}} \approx 0.96$（NVIDIA 的 S. Jeaugey：每块 200G 网卡约 24 GB/s、
# 400G 约 48 GB/s）；$B_{\text{NVLink 环}}$ 是 NCCL 环在 NVLink 上的实测可达值：H100/H200 约 370 GB/s（线速 450），A100 约 230（300），
# A800/H800 约 160（200）——NVLink 上的协议开销约 20%，比网卡大得多。**单机** 8 卡时 all-reduce 默认走 NVLink SHARP（NVLS），
# 8×H100 约 480 GB/s、8×H200 约 475 GB/s，高于线速（NVSwitch 里做加法，实际流量比 busbw 系数假设的少）。
# 这些数都在课程的集群模型 `labutil.cluster` 里（`expected_busbw_gbs`，出处见 `labutil/data/systems.toml`），
# 第 15、19、23、28 章的阈值用的是同一个函数（`Cluster.acceptance_busbw_gbs`）。
#
# **两台机器时，NCCL 默认不用环。** 只有 2 台服务器时，NCCL 通常选 NVLS-Tree（有 NVLS 的机器）或 Tree：先在服务器内归约，
# 两台之间只交换归约后的结果，网络只承担环的一半左右的流量，于是 busbw 可以比上面这个「环的期望值」高出不少：NVIDIA/nccl-tests issue #309 里
# 两台 8×H100、8 × 400G InfiniBand 用 NCCL 默认测到约 470 GB/s，同一对机器关掉 NVLS 后是 368.76 GB/s——正好落在环的期望 370 上
# （两行都在第 4.1 节的表里）。坏处是：一条降速的轨道会被这一半的余量藏起来。NVIDIA 的维护者在 NVIDIA/nccl-tests issue #196
# 和 NVIDIA/nccl issue #1031 里给的办法是：**两节点的网络验收加 `NCCL_ALGO=Ring`**，和环的期望值比。课程的验收期望
# （`Cluster.acceptance_busbw_gbs`、`health.run_checks(cluster=…)`、第 23 章的图和探索器）就是这样定义的：单机用 NCCL 的默认（NVLS），
# 跨节点用 `NCCL_ALGO=Ring`。下表对几种配置给出线速上限与期望值；下图是每种配置的模型曲线。

# %%
rows = []
for label in nccl_x.FABRICS:
    r = nccl_x.acceptance_model(label, n_ranks=16)
    rows.append({"fabric": label, "ranks": r["ranks"], "line-rate bound (GB/s)": r["bound_gbs"],
                 "expected, labutil.cluster (GB/s)": round(r["expected_gbs"], 1),
                 "pass line 80% (GB/s)": round(health.AcceptanceSpec().busbw_pass_fraction * r["expected_gbs"], 1)})
show_table(rows)

# %%
# NBVAL_CHECK_OUTPUT
for name in ("DGX-H100", "DGX-H200", "DGX-A100", "HGX-A800", "HGX-H800", "DGX-B200"):
    c = Cluster.system(name, n_nodes=2)
    print(f"{name:9s} one node: ring {c.expected_busbw_gbs('all_reduce', 8, algo='ring'):4.0f}, "
          f"default (NVLS if any) {c.expected_busbw_gbs('all_reduce', 8):4.0f} GB/s; "
          f"2 nodes: NCCL_ALGO=Ring {c.acceptance_busbw_gbs('all_reduce'):4.0f}, "
          f"NCCL default ({c.algorithm('all_reduce', 8 * 2**30).split('/')[0]}) {c.expected_busbw_gbs('all_reduce', algo='auto'):4.0f} GB/s "
          f"(NICs {c.nics_per_node} x {c.nic_gbps:.0f}G -> {c.node_net_gbs:.0f} GB/s per node)")

# %%
nccl_x.fabric_expectation_figure(n_ranks=16)

# %% [markdown]
# 效率为什么到不了 100%？一是协议开销：即使是 Simple 协议，也要在数据块之间插入同步（NVLink 上 SM 发出的 128 B 报文头开销尤其明显）；
# 二是每块网卡的 PCIe 与 RDMA 处理开销；三是环的流水线需要「灌满」，有限的消息在首尾各有一段不满载的时间。
# 把期望定得太高，会把健康的机器误判为警告；定得太低，会放过真正的问题——所以期望值要按链路类型分别算，而不是「线速 × 0.9」：
# 那样算单机 8×H100 是 405 GB/s：开着 NVLS 的健康机器（480）比它高出 19%，而一台 NVLS 失效、只剩环的机器（370）照样「合格」；
# 按集群模型的 480 GB/s，370 只有 77%，落在警告区，问题才会被看见。
#
# 算例：两台 DGX H100，每卡一块 400G NDR 网卡，$k = 8$，网卡合计 8 × 48 = 384 GB/s，NVLink 环 370 GB/s，
# 所以 2 × DGX H100 的期望 busbw 是 370 GB/s（`NCCL_ALGO=Ring`），80% 的通过线是 296 GB/s。上面的样例峰值 367.7 GB/s，达到期望的 99%——合格。
#
# ### 4.1 这个模型在公开测量上准不准
#
# 期望值是一个模型，模型要拿它没见过的测量来检验。`labutil/data/nccl_public_results.toml` 收集了 NVIDIA/nccl 与 NVIDIA/nccl-tests
# issue 里公开的 nccl-tests 结果——不同的 GPU（A100、A800、H100、H200、H800、B200/B300、V100）、1 到 248 台、IB / RoCE / TCP socket、
# ring / tree / NVLS / NVLS-Tree——每一行都带着原帖链接，并标明是**标定行**（模型的某个常数就取自它）还是**留出行**（模型从没见过它）。
# 下表把模型的 busbw 和每一行并排放（有消息大小的行按那个大小算），误差超出该行容差的就是「未命中」，照实列出：

# %%
table = busbw_validation.compare()
show_table([{"id": x["id"], "role": x["role"], "setup": x["setup"], "op / NCCL_ALGO": f"{x['op']} / {x['algo']}",
             "measured (GB/s)": x["measured_gbs"], "model (GB/s)": round(x["model_gbs"], 1),
             "error": f"{x['error']:+.0%}", "within tol.": "yes" if x["within"] else f"MISS (±{x['tolerance']:.0%})",
             "model picks": x["model_algo"], "source": x["url"].replace("https://github.com/", "")} for x in table])

# %%
# NBVAL_CHECK_OUTPUT
summ = busbw_validation.summary()
print(f"{summ['rows']} public rows: {summ['calibration']} calibration ({summ['calibration_within']} reproduced), "
      f"{summ['held_out']} held out")
print(f"held out: {summ['held_out_within']} of {summ['held_out']} inside their tolerance, "
      f"mean |error| {summ['held_out_mean_abs_error']:.1%}")
print("held-out misses: " + ", ".join(summ["held_out_misses"]))

# %% [markdown]
# 读这张表要诚实。下面按类别把几行挑出来（数字都来自上表，误差 = 模型 / 实测 − 1）：

# %%
# NBVAL_CHECK_OUTPUT
by_id = {x["id"]: x for x in table}
groups = {"rail ring": ("dgx-a100-hdr-multinode", "h100-roce-4x400-5node-ring", "h100-ib-2node-nvls-off"),
          "2-node NVLS-Tree": ("h100-ib-2node-default", "h100-roce-2node-nvls", "h100-roce-200g-2node-nvls"),
          "more than 2 nodes": ("h100-ib-4node-default", "h100-roce-4node", "h100-roce-32node-allgather"),
          "TCP sockets": ("socket-gcp-32g-8rings", "socket-100g-4x8-v100")}
for g, ids in groups.items():
    print(f"{g}: " + "; ".join(f"{i} {by_id[i]['measured_gbs']:g} vs {by_id[i]['model_gbs']:.1f} ({by_id[i]['error']:+.0%})"
                             for i in ids))

# %% [markdown]
# - **单节点**（NVLink 环、NVLS）和**按轨道的环**（DGX A100 的 8 × 200G、8 × 400G RoCE 上 `NCCL_ALGO=Ring`、两台 8×H100 关掉 NVLS）都在几个百分点以内：
#   验收期望主要依赖的正是这两部分。
# - **两节点的 NVLS-Tree**：InfiniBand 上那一行几乎命中，RoCE 上的两行偏乐观一成多：模型按「每台只往网络发一半」算网络上限，
#   真实的 NVLS-Tree 在这两套 RoCE 网络上到不了这个上限。这也是验收不用它、而用 `NCCL_ALGO=Ring` 的另一个理由。
# - **多于两台**：InfiniBand 上 4 台命中，同样 4 台在 RoCE 上和 **256 卡的 all_gather** 模型没有命中：拥塞、ECMP 哈希碰撞和交换机上的
#   其他流量不在默认模型里。`Cluster(..., nodes_per_leaf=…, ecmp_flows_per_nic=…)` 可以打开一个按「球进桶」算的哈希碰撞损失，
#   但它没有拿这些行去拟合，默认关闭。
# - **TCP socket**：1 条流的那一行是标定行（每条 TCP 流约 2.06 GB/s）；GCP 上 8 条流的那一行命中，
#   但 4 × 8 V100 在 100G TCP 上 4–6 GB/s 的那一行模型偏高很多——那台机器上加线程、加 socket 反而变慢，瓶颈在主机侧，
#   单条流的速率不是一个常数。
#
# 模型的常数只取自标定行，留出行的误差就是上面打印的样子，没有为了让它们命中而调参。每一行的链接都是原帖，数字按帖子原文抄录；
# 有一行原先取自 NVIDIA/nccl-tests issue #107 的「100G TCP 上 11.63 GB/s」在复核时删掉了：那段输出是没有用 `MPI=1` 编译的 nccl-tests
# 被 `mpirun -np 2` 启动成了两个互不相干的单卡作业（两份表头、两个 `Rank 0`、busbw 为 0），它根本不是一次两机测量。
# 读别人贴的 nccl-tests 结果时，先数一数 `# Using devices` 下面的 rank 数——课程的解析器对这种输出给出 `independent_runs = True`，第 28 章的分诊会据此提示重新用 `MPI=1` 编译。
#
# ## 5. 验收流程与判定
#
# 一个务实的流程（每一步都存档命令、`env | grep NCCL` 与 `/etc/nccl.conf`、NCCL 版本与输出文件，最好用 `-J` 同时存一份 JSON）：
#
# 1. **单机**：每台机器 `all_reduce_perf -g 8`，期望值用单机的值（8×H100 开 NVLS 约 480 GB/s，`NCCL_NVLS_ENABLE=0` 或 `NCCL_ALGO=Ring` 时约 370 GB/s）；
#    它能抓出 NVLink/NVSwitch 故障、P2P 被禁用、GPU 降频。
# 2. **成对**：相邻两台机器 16 卡，加 `NCCL_ALGO=Ring`，期望值用环的上限（2 × DGX H100：370 GB/s）；按交换机分组做两两配对，能把慢端口定位到具体的一对机器。
# 3. **全规模**：整个 pod 或 SU 一起跑，看拥塞与路由（Fat-Tree 的收敛比、ECMP 哈希不均）带来的额外损失。
# 4. **正确性**：任何一行 `#wrong` 不为 0 都是 critical——这是数据损坏，不是性能问题。
#
# 判定规则（`labutil.health.AcceptanceSpec`，可以换成你们自己的策略）：峰值 busbw ≥ 80% 期望为通过，60%–80% 为警告，< 60% 为不合格。
# 下面用它判定两段样例：健康的两机测试，以及同样两台机器但有一个 rail 降速到 200G 的测试。

# %%
# NBVAL_CHECK_OUTPUT
dgx2 = Cluster.system("DGX-H100", n_nodes=2)
expected = dgx2.acceptance_busbw_gbs("all_reduce")   # NCCL_ALGO=Ring across the two nodes
for name in ("nccl_tests_all_reduce_2node", "nccl_tests_all_reduce_degraded"):
    r = parse_nccl_tests(samples.sample(name))
    verdict = [f"{f.severity}:{f.check}" for f in health.check_nccl_tests(r, expected)]
    print(f"{name}: peak {r.peak_busbw_gbs:.1f} GB/s = {r.peak_busbw_gbs / expected:.0%} of {expected:.0f} -> {verdict}")
print(f"one 200G rail out of 8 x 400G (NIC efficiency {NIC_EFFICIENCY}): model {health.rail_allreduce_busbw_gbs(400, 8, 1, 200):.0f} GB/s")

# %%
nccl_x.nccl_samples_figure(cluster=dgx2)  # the same lines as ch23's busbw_samples_figure

# %% [markdown]
# 退化样例的峰值约 184 GB/s，与 rail 模型的预测（192 GB/s）只差 4%：NCCL 把数据平均分给 8 个 rail 的环，整个集合通信在最慢的环结束时才结束，
# 所以 **一条** 200G 的 rail 就让整机掉到 $8 \times 25 \times 0.96 = 192$ GB/s（0.96 是集群模型 `labutil.cluster` 里 NCCL 能跑到的网卡线速比例）——不是损失 1/8，而是损失一半。
# 定位方法：对这台机器的每块网卡跑 `ibstat`（第 11、23 章）看 `Rate`，或者用 `NCCL_IB_HCA` 每次只启用一块网卡做对比测试。
#
# 低于预期时，按现象缩小范围（每一行都是运维中反复遇到的真实情况）：
#
# | 现象 | 最可能的原因 | 怎么确认 |
# |---|---|---|
# | 单机 busbw 只有 NVLink 上限的几分之一 | P2P 被禁用（残留的 `NCCL_P2P_DISABLE`）、PCIe ACS 开启、虚拟机直通 | `env \| grep NCCL`，`nvidia-smi topo -m`，`NCCL_DEBUG=INFO` 里的 `via SHM` |
# | 多机 busbw 约为期望的 1/2 | 某个 rail 降速（400G→200G）或某块网卡未被使用 | 每块网卡 `ibstat` 的 Rate；`NCCL_IB_HCA` 逐块测 |
# | 多机 busbw 只有几 GB/s | NCCL 退回 TCP socket（IB 未起、`NCCL_IB_DISABLE`、容器里没有 `/dev/infiniband`） | 日志里的 `Using network Socket`（第 15 章） |
# | 大消息正常、中等消息明显偏低 | 协议/算法被环境变量固定，或 GPUDirect RDMA 未生效 | 日志里的 `GDRDMA`，`NCCL_ALGO`/`NCCL_PROTO` 是否残留 |
# | 全规模比成对测试低很多 | Fat-Tree 收敛比、ECMP 哈希不均、拥塞控制（RoCE 的 PFC/ECN）配置 | 交换机端口计数器，按交换机分组复测 |
#
# 下面的探索器把期望值、阈值和样例放在一起：换网络配置、改效率和通过线，看判定如何变化。两个提醒：样例是在 2 × DGX H100（8 × 400G）上
# 生成的，换成「1 × 25GbE」这类网络时，样例的峰值比该网络的线速上限还高，摘要会直接告诉你「这个样例不可能来自所选网络」；
# GPU 数会按网络取整（多节点至少 2 台 × 8 卡），被改动时摘要也会说明。

# %%
explorer = nccl_x.acceptance_explorer()
explorer

# %% [markdown]
# 验收报告至少应包含：测试命令行与所有 NCCL 环境变量、NCCL 与驱动版本（日志第一行）、参与的主机列表与 GPU 型号（表头的 `# Using devices`）、
# 完整的输出表、期望值的计算过程、判定结果。这样半年后复测时，才能区分是「硬件退化了」还是「测试方法变了」。
#
# ### 5.1 验收方法论：测什么组合、测几次、什么时候算「稳定」
#
# **组合怎么选。** 128 台服务器两两配对共有 $128 \times 127 / 2 = 8128$ 种组合，逐一测不现实；但一轮「互不重叠的配对」只需要 64 个
# 并行测试、几分钟就能跑完。实践中的做法是：同一台叶交换机下的服务器两两配对（验证服务器与叶交换机之间的每一根线），再做几轮跨叶交换机的
# 随机配对（验证上行链路和脊交换机），最后全规模跑一次看拥塞。全规模测试不达标时，不要在全规模上反复试：把节点对半分成两组分别测，
# 不达标的那一半继续对半分，128 台最多 $\log_2 128 = 7$ 轮就能定位到一台——因为一个慢节点会拖慢所有和它在同一个通信器里的 rank。
#
# **测几次。** 一次测量只是一个样本。每个组合至少测 3 次、取中位数；大消息 busbw 的离散度应在 1%–2% 以内（第 3 节），
# 离散度本身超标就是一条发现：常见原因是同机有别的进程、交换机上有其他租户的流量，或 RoCE 网络里 PFC 暂停帧在某些端口上频繁出现。
#
# **不只测 all_reduce。** 在轨道优化（rail-optimized）的网络里，环形 all-reduce 的流量几乎都在「同一条轨道」内：第 $k$ 块网卡只和其他节点的第 $k$ 块网卡通信，
# 规模不大时根本不经过脊交换机。所以 all-reduce 全部达标，并不能证明脊层链路和跨轨道路由是好的。`alltoall_perf` 让每个 rank 和所有 rank 交换数据，
# 流量要么经脊交换机跨轨道，要么先经 NVLink 转给同轨道的 GPU 再发出（PXN，第 15 章），它才真正考验网络的对分带宽——
# MoE 模型的专家并行（第 8 章）恰恰依赖这种通信。验收清单里至少应有 all_reduce、all_gather/reduce_scatter 和 alltoall 三类。
#
# **烧机（burn-in）。** 带宽验收只证明「此刻够快」，不证明「一直稳定」。很多故障——散热不足导致的降频、接触不良的光模块、
# 内存的间歇性错误——要在满载下持续一段时间才会出现。所以交付流程通常在带宽验收之外，再让每台机器长时间满载：
# GPU 侧用 `dcgmi diag -r 3`（按 DCGM 文档约 15 分钟，第 23 章）或更长的 level 4，网络侧让 nccl-tests 循环运行（`-N 0` 一直重复扫描，`-N 100` 跑 100 轮），
# 同时采集 XID、ECC、链路误码计数（第 23 章的健康检查），烧机结束后这些计数必须没有增长。
#
# **业界怎么做（有出处）。** 字节跳动的 MegaScale（NSDI 2024）在每次作业启动前跑一组轻量自检：节点内的环回（loopback）测试与网卡到网卡测试、
# 单节点内的 all-to-all 和同一台 ToR 交换机下相邻机器之间的 all-reduce——正是本章「单机 → 成对」的思路，只是把它做成了每次启动都跑的例行步骤。
# Meta 的 Llama 3 论文（arXiv:2407.21783，Table 5）记录了 16,384 张 H100 在 54 天里的 419 次意外中断，其中与网络直接相关的
# （交换机/线缆、网卡）有几十次——验收不是一次性的仪式，而是要在集群整个生命周期里反复做：

# %%
# NBVAL_CHECK_OUTPUT
net = [r for r in reliability.llama3_table5() if r["component"] in ("Network Switch/Cable", "NIC")]
n_net = sum(r["count"] for r in net)
print(", ".join(f"{r['component']} {r['count']} ({r['printed_pct']}%)" for r in net))
print(f"network-related interruptions: {n_net} in 54 days on 16,384 H100 = {n_net / 54:.2f} per day")

# %% [markdown]
# 每天接近一次与网络有关的中断，意味着一个千卡以上的集群在投产后仍需要定期（例如每次维护窗口之后）重跑成对测试，
# 并把每台机器、每条 rail 的 busbw 存成时间序列：某条 rail 降速让整机 busbw 减半（第 5 节），往往先于训练作业的报错出现。
#
# ### 5.2 一条「慢 rail」在物理上是什么
#
# 第 5 节的退化样例是一条 rail 降到 200G。现场最常见的几种成因，以及各自留下的痕迹：
#
# - **端口协商降速**：光模块或线缆不匹配、某一对光纤损坏时，端口可能以较低速率或较少的 lane 建链。`ibstat` 的 `Rate` 从 400 变成 200，
#   或者 `ethtool` 的 `Speed` 不是预期值；这是最容易查、也最该在验收第一天查的项目（第 11 章）。
# - **误码导致的重传**：链路速率正常，但物理层误码率高，FEC 纠不过来的帧要在链路层或传输层重传。`ibstat` 看不出问题，
#   要看端口计数器（`perfquery` 的 `SymbolErrorCounter`、`PortRcvErrors`，以太网交换机的 FEC/CRC 计数）。常见原因是光模块脏污、线缆弯折半径过小。
# - **拥塞与流控**：在 RoCE 网络里，PFC 配置不当会让某些端口频繁收到暂停帧，表现为那条 rail 的带宽时高时低；Meta 在 SIGCOMM 2024 的论文里
#   专门讨论过 RoCE 拥塞控制的调参经历，最终把大部分拥塞管理交给集合通信库本身。
# - **PCIe 降级**：网卡所在的 PCIe 插槽降为 x8 或 Gen4，网卡本身再快也只能跑到 PCIe 的上限；`lspci -vv` 的 `LnkSta` 与 `LnkCap` 不一致就是它。
#
# 这几种故障对 nccl-tests 的影响都一样——整机 busbw 掉到最慢那条 rail 的 8 倍——所以 nccl-tests 负责**发现**问题，
# 端口计数器、`ibstat`、`lspci` 负责**定位**问题，两类工具缺一不可。
#
# ## 6. 动手：lab02
#
# 在 2–4 卡的实验机上打开 `labs/lab02_nccl_allreduce.ipynb`：它用 `torchrun -m labutil.bench.collectives` 跑一遍与 nccl-tests 同格式的扫描，
# 用本章的解析器读出表格，再拟合 α 与 B。没有 GPU 时它在 2 个 gloo 进程上运行同样的流程，并明确标注为 CPU 路径。
# 下面这个单元格演示课程的基准程序与 nccl-tests 的输出能被同一个解析器读取（用一行合成的数据，不启动进程）：

# %%
# NBVAL_CHECK_OUTPUT
row = {"size_bytes": 1 << 30, "count": 1 << 28, "type": "float", "redop": "sum", "root": -1,
       "out_of_place": {"time_us": 5600.0, "algbw_gbs": comm.algbw_gbs(1 << 30, 5600e-6),
                        "busbw_gbs": comm.busbw_gbs("all_reduce", comm.algbw_gbs(1 << 30, 5600e-6), 16), "wrong": 0},
       "in_place": {"time_us": 5610.0, "algbw_gbs": comm.algbw_gbs(1 << 30, 5610e-6),
                    "busbw_gbs": comm.busbw_gbs("all_reduce", comm.algbw_gbs(1 << 30, 5610e-6), 16), "wrong": 0}}
line = collectives.format_row(row)
print(line)
print("parsed busbw:", parse_nccl_tests(collectives.format_header(
    op="all_reduce", backend="nccl", minbytes=1 << 30, maxbytes=1 << 30, stepfactor=2, stepbytes=1 << 20, warmup=5,
    iters=20, check=1, devices=[], average=1) + "\n" + line).rows[0].busbw_gbs)

# %% [markdown]
# ## 7. 常见误区（每一条都用算出来的数字反驳）
#
# **误区一：「algbw 就是网络带宽。」** algbw 随 rank 数变化，同样的链路在 16 卡上的 algbw 只有 busbw 的一半多一点。
# 健康样例最大那一行 algbw 196.1 GB/s、busbw 367.7 GB/s：若拿 196 去和 8 × 48 = 384 GB/s 的网卡能力比，会以为网络只发挥了一半，
# 进而去「排查」一台完全健康的机器。algbw 适合回答「这样一次操作要多久」，验收要比的是 busbw：

# %%
# NBVAL_CHECK_OUTPUT
print(f"largest row: algbw {big.algbw_gbs:.1f} GB/s vs busbw {big.busbw_gbs:.1f} GB/s "
      f"(algbw is {big.algbw_gbs / big.busbw_gbs:.0%} of busbw at n=16)")

# %% [markdown]
# **误区二：「小消息带宽低，说明网络有问题。」** 小消息本来就受延迟支配。按 2 × DGX H100 的集群模型（`NCCL_ALGO=Ring`，期望 370 GB/s，
# NCCL 2.30.7 的每跳延迟：节点内按 NVLink、跨节点按网络，小消息自动换 LL 协议），64 KiB 时 busbw 还不到平台值的百分之一（下面的输出）——
# 这完全是延迟项的结果，与链路带宽无关（第 13、15 章）。小消息段要看的是 time 列是否稳定、是否与同型号机器一致，而不是 busbw：

# %%
# NBVAL_CHECK_OUTPUT
small = dgx2.busbw_gbs("all_reduce", 65536, 16, algo="ring")
print(f"model busbw at 64 KiB on 16 ranks: {small:.2f} GB/s ({small / expected:.1%} of the {expected:.0f} GB/s plateau)")

# %% [markdown]
# **误区三：「单机测试过了，多机就没问题。」** 单机只验证 NVLink。若 IB 没起来，NCCL 会退回 TCP socket，走每台服务器那块
# 100 GbE 的带内以太网口；每个字节都要 CPU 拷贝，默认 2 条 TCP 流（第 15 章误区四的同一个假设），而单机的测试结果完全不受影响：

# %%
# NBVAL_CHECK_OUTPUT
intra = Cluster.system("DGX-H100").expected_busbw_gbs("all_reduce", 8)
sock = Cluster.system("DGX-H100", n_nodes=2, transport="socket", nic_gbps=100.0, nics_per_node=1).expected_busbw_gbs(
    "all_reduce", algo="ring")
print(f"single-node expected {intra:.0f} GB/s (passes); 2 nodes NCCL_ALGO=Ring over IB {expected:.0f} GB/s vs over TCP "
      f"sockets on 1x100GbE {sock:.2f} GB/s")
print(f"fallback factor {expected / sock:.0f}x (labutil.facts: {facts.text('ib_socket_fallback_factor')})")

# %% [markdown]
# 退回 socket 之后多机带宽低约 90 倍，作业却照常运行——多机验收必须单独做，并在日志里确认 `Using network IB`（第 15 章）。

# %% [markdown]
# **误区四：「8 个 rail 坏了 1 个，只损失 1/8。」** 见第 5 节：rail 模型给出 192 GB/s 对健康时的 370 GB/s，损失约一半。
# 原因是 NCCL 把数据平均分给 8 条轨道上的环，每条环搬同样多的字节，一次集合通信要等最慢的那条环结束；200G 的那条环用时翻倍，
# 其余 7 条提前完工后只能空等。所以「少量端口降速」在验收里必须按 critical 对待，而不能当作「损失不大的小毛病」：

# %%
# NBVAL_CHECK_OUTPUT
ok = health.rail_allreduce_busbw_gbs(400, 8, 0, None)
bad = health.rail_allreduce_busbw_gbs(400, 8, 1, 200)
print(f"8 x 400G healthy {ok:.0f} GB/s, one rail at 200G {bad:.0f} GB/s: loss {1 - bad / ok:.0%} (not 1/8 = 12.5%)")

# %% [markdown]
# **误区五：「验收时 `Avg bus bandwidth` 达标就行。」** 这个平均值包含所有尺寸（含大量受延迟支配的小消息），它和峰值之间的比例取决于扫描范围，
# 而不是网络好坏。上面健康样例的峰值是 367.7 GB/s，平均值只有约 128 GB/s；如果只平均 1 MiB 以上的行，平均值就升到约 289 GB/s，而网络一点没变。
# 换句话说，用平均值当验收标准，等于让「测试怎么配置」决定结论：

# %%
# NBVAL_CHECK_OUTPUT
big_rows = [r for r in run.rows if r.size_bytes >= 2**20]
mean_big = sum(r.busbw_gbs for r in big_rows) / len(big_rows)
print(f"healthy sample: peak {run.peak_busbw_gbs:.1f} GB/s, '# Avg bus bandwidth' over 8 B..8 GiB {run.avg_busbw_gbs:.1f} GB/s, "
      f"out-of-place mean over >= 1 MiB {mean_big:.1f} GB/s")

# %% [markdown]
# ## 8. 练习
#
# 把答案填进 `answer_k`，运行单元格查看判分；卡住时调用 `exercise("ch22.k").hint(1)`。

# %% [markdown]
# **练习 1（纸笔题）**：8 卡的 `all_gather_perf` 打印 size 1073741824 B、time 4,000 µs。它打印的 busbw 是多少 GB/s？（提示：all_gather 的 size 是整个输出缓冲区。）

# %%
answer_1 = None  # all_gather 8 卡、1 GiB、4000 µs 的 busbw（GB/s）
exercise("ch22.1").check(answer_1)

# %% [markdown]
# **练习 2**：两台 DGX H100（每卡一块 400G NDR 网卡，NCCL 跑到网卡线速的 0.96、NVLink 环约 370 GB/s），加 `NCCL_ALGO=Ring` 做成对验收，
# 大消息 all_reduce 的期望 busbw 是多少 GB/s？

# %%
answer_2 = None  # 两台 DGX H100（8 × 400G NDR）的期望 busbw（GB/s）
exercise("ch22.2").check(answer_2)

# %% [markdown]
# **练习 3**：用 `parse_nccl_tests` 解析样例 `nccl_tests_all_reduce_degraded`，它的峰值 busbw 是期望 370 GB/s 的百分之几？

# %%
answer_3 = None  # 退化样例的峰值占期望 370 GB/s 的百分之几（%，按课程约定填百分数）
exercise("ch22.3").check(answer_3)

# %% [markdown]
# **练习 4**：8 条 400G rail 中一条协商成了 200G，其余正常，网卡效率 0.96。跨节点 all_reduce 的 busbw 预计是多少 GB/s？

# %%
answer_4 = None  # 一条 rail 降到 200G 时的 busbw（GB/s）
exercise("ch22.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：课程样例 `nccl_tests_all_reduce_degraded` 对照 370 GB/s 的期望和默认验收标准（≥ 80% 通过，< 60% 失败），结论是 'pass'、'warning' 还是 'critical'？

# %%
answer_5 = None  # 'pass' / 'warning' / 'critical'
exercise("ch22.5").check(answer_5)

# %% [markdown]
# ## 9. 小结
#
# - 验收看 busbw，不看 algbw，也不看 `# Avg bus bandwidth`；只看大消息的平台值；`#wrong` 必须为 0；
# - 期望值来自集群模型（`labutil.cluster.Cluster.acceptance_busbw_gbs`）：单机用 NVLS / NVLink 环的实测可达值（8×H100 NVLS 480 GB/s），
#   多机加 `NCCL_ALGO=Ring`、用 min(NVLink 环, 每节点网卡数 × 线速 × 0.96)（2 × DGX H100：370 GB/s），而不是「线速 × 0.9」；
#   两节点上 NCCL 默认的 NVLS-Tree / Tree 会超过这个数，也会藏住慢 rail；
# - 这个模型在 20 多条公开的 nccl-tests 结果上检验过（第 4.1 节的表）：单节点和按轨道的环在几个百分点以内，RoCE 的大规模和 TCP 的个别行没命中；
# - 单机 → 成对 → 全规模，每一步都与算好的期望值比较，低于 80% 查原因，低于 60% 不予验收；
# - 一条慢 rail 会让整机掉一半：用 `ibstat` 与 `NCCL_IB_HCA` 逐块排查（第 23 章）。
#
# ## 参考资料
#
# - NVIDIA/nccl-tests：README（参数）、`doc/PERFORMANCE.md`（algbw、busbw 与各操作的因子）、`src/common.cu`（默认值、尺寸解析；`-w` 默认值 5 → 1 见 commit f2015cb，v2.16.8）、
#   `src/util.cu`（文本输出格式与 `-J` 的 JSON，`JSON_FILE_VERSION` 3，v2.17.3 起）。
# - NVIDIA NCCL User Guide, "Environment Variables" 与 "Troubleshooting"（docs.nvidia.com/deeplearning/nccl/user-guide）。
# - NVIDIA H100 Tensor Core GPU datasheet：NVLink 900 GB/s（双向）；NVIDIA ConnectX-7 / Quantum-2 NDR：400 Gbit/s 每端口。
# - NCCL `src/graph/tuning.cc`：v2.7.5-1（commit 01afd20）网络上 Ring/Simple 的每步延迟 9.6 µs；v2.30.7-1 为 14 µs，并有 NVLS / NVLS-Tree 的模型
#   （集群模型用的版本，`labutil/data/nccl_tuning.toml`）。
# - 公开 nccl-tests 结果表（第 4.1 节）：`labutil/data/nccl_public_results.toml`，每行附 NVIDIA/nccl、NVIDIA/nccl-tests issue 的链接；
#   NVIDIA/nccl-tests issue #196 与 NVIDIA/nccl issue #1031（两节点的 tree / NVLS-Tree 与 `NCCL_ALGO=Ring`）；
#   NVIDIA/nccl-tests issue #309（两台 8×H100 + 8 × 400G IB：默认约 470、关 NVLS 368.76、4 台 365.84 GB/s），NVIDIA/nccl issue #2409 引用它作为两机的期望；
#   NVIDIA/nccl-tests issue #290（AddyLaddy：「NDR 400 Gbps 每块网卡应看到 46–48 GB/s」，两机基准测试加 `NCCL_ALGO=RING`）。
# - NCCL 的可达带宽（`labutil/data/systems.toml`）：S. Jeaugey，github.com/NVIDIA/nccl-tests/issues/212（8×H100 ring 370、NVLS 480 GB/s）、
#   /issues/149（A100 约 230 GB/s）、/issues/119（每块 200G 网卡 24 GB/s）；github.com/NVIDIA/nccl/issues/412（A800 约 160 GB/s）；
#   github.com/NVIDIA/nccl-tests/issues/272（8×H200 NVLS 475 GB/s）。
# - 课程样例：`labutil/parsers` 中的 nccl-tests 样例为按真实格式合成的示意数据（来源写在样例的 `source` 字段）。
# - A. Gangidi et al., *RDMA over Ethernet for Distributed AI Training at Meta Scale*, ACM SIGCOMM 2024（RoCE 拥塞控制：从 DCQCN 转向由集合通信库管理拥塞）。
# - Z. Jiang et al., *MegaScale: Scaling Large Language Model Training to More Than 10,000 GPUs*, USENIX NSDI 2024, §4（作业启动前的环回、网卡到网卡、节点内 all-to-all 与同 ToR 相邻机器 all-reduce 自检）。
# - Llama Team, AI @ Meta, *The Llama 3 Herd of Models*, arXiv:2407.21783, §3.3.4 与 Table 5（54 天 419 次意外中断的分类；数据在 `labutil/data/reliability.toml`）。
# - NVIDIA DCGM 文档 `dcgmi diag`：level 1 数秒、level 2 约 2 分钟、level 3 约 15 分钟、level 4 更长。
