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
# # 实验 1：环境探测（lab01）
#
# > 对应第 9 章（服务器节点设计）、第 15 章（NCCL 深入）与第 19 章（上架与基础环境）。本实验在任何机器上都能跑：
# > 有 GPU 时它报告 GPU、驱动、CUDA、NCCL、拓扑与 RDMA 设备，并判断这台机器属于哪种「实验情形」；
# > 没有 GPU 时它明确告诉你后续实验将走 **CPU 路径（gloo）**。
#
# ## 实验目标
#
# 1. 用一条命令 `python -m labutil doctor --json` 收集本机事实（GPU、驱动、CUDA、torch 自带的 NCCL、`nvidia-smi topo -m`、
#    `ibstat`、`/sys/class/infiniband`、`/dev/shm`）；
# 2. 读懂每条 finding 的严重级别（info / warning / critical）以及它对后续实验意味着什么；
# 3. 从拓扑矩阵判断每一对 GPU 之间是 **NVLink（NV#）还是 PCIe（PIX/PXB/PHB/NODE/SYS）**，有没有 NVLink SHARP（NVLS），网卡是多少 Gb/s；
# 4. 知道 pip 安装的 torch 使用的是**它自带的 NCCL 与 CUDA 运行时**，驱动必须不低于该 CUDA 版本的最低驱动——doctor 会检查并给出修复办法；
# 5. 学会把自己的输出逐行对照「健康的样子」：下文给出一台纯 CPU 机器和一台 8×H100 节点的 doctor 报告，由 doctor 本身生成。
#
# 为什么先做这一步：后面五个实验的每一个数字，都要和「这台机器应该达到多少」比较，而「应该」取决于本实验回答的问题——
# 有几张卡、卡与卡之间走 NVLink 还是 PCIe、有没有 NVLS、网卡是几条多少 Gb/s、驱动与 torch 的 CUDA 版本是否匹配。
# 集群验收里最常见的返工，恰恰是跳过这一步，拿一台 PCIe 机器的结果去对 NVLink 的预期，或者在驱动不匹配的环境里测了一整天。
#
# ## 前置条件
#
# - 本仓库的环境（`make setup`）；GPU 机器上需要 NVIDIA 驱动与 CUDA 版 torch；
# - 在容器里运行时，容器要能看到 GPU（`--gpus all`）与 `/dev/infiniband`，并用 `--shm-size=1g` 或 `--ipc=host` 启动。
#
# ## 实验步骤
#
# 1. 运行探测单元格（它在子进程里执行 doctor，结果同时保存到 `labs/_runs/lab01_doctor.json`）；
# 2. 看「实验情形」一行，对照下面的预期表确认你的机器属于哪种；
# 3. 看 torch 与 NCCL 一行：CUDA 版 torch 即使在没有 GPU 的机器上也能报出它自带的 NCCL 版本；CPU 版 torch 没有 NCCL；
# 4. 逐条处理 `warning` 与 `critical`，处理完再做 lab02–lab06；
# 5. 把你的输出与第 4 节「健康输出示例」逐段对照；
# 6. 回答最后的三道自测题（它们读的就是你这台机器的结果文件）。
#
# ## 预期结果
#
# | 机器 | doctor 的「实验情形」 | 拓扑矩阵里 GPU 对的连接码 | 后续实验的 all-reduce 预期 |
# | --- | --- | --- | --- |
# | 无 GPU（笔记本、CI） | `cpu` | 无 | 只验证方法，不验证带宽 |
# | 2× PCIe GPU | `pcie` | PIX / PXB（同一交换芯片）或 PHB/NODE/SYS（跨 CPU） | 约 26 GB/s（Gen4 x16，见 lab02） |
# | 4× PCIe GPU | `pcie` | 通常混合：同交换芯片内 PIX，跨 CPU 为 SYS | 由最慢的一跳决定 |
# | 4× NVLink GPU（HGX 节点的一半） | `nvlink`，NVLS: no | 全部 NV# | 约 370 GB/s（H100） |
# | 8× NVLink GPU（HGX/DGX H100） | `nvlink`，NVLS: yes | 全部 NV18 | 约 480 GB/s（H100，NVLS） |
# | 2 节点 | 每个节点各自是 `nvlink`，另有 8 个 Active 的 400 Gb/s IB 端口 | 每张 GPU 旁边一张 PIX 网卡 | 约 370 GB/s（每 rail 一个环） |
#
# 连接码的含义来自 `nvidia-smi topo -m` 的图例（NVML `nvmlGpuTopologyLevel_t`）；H100 的数字来自 `labutil/data/systems.toml`
# 中 DGX-H100 的实测来源，PCIe 的数字来自 PCI-SIG 4.0 规范的 x16 速率乘以模型的环效率（lab02 有完整推导）。
# NVLS 的判断规则：GPU 属于有 NVLS 的目录系统（H100/H200/H800/B200 的 HGX 基板），且本机 GPU 数等于基板的 8 卡——
# 只插了 4 张卡或只分配了 4 张卡的作业，NCCL 不会用 NVLS 跑满 8 卡的数字。

# %%
from labutil.notebook import setup, show_table
from labutil.machine import run as labs
from labutil.exercises.labs import lab_exercise

rng = setup()

# %% [markdown]
# ## 1. 运行探测
#
# 下面的单元格在子进程里运行 `python -m labutil doctor --json`（参数列表、带超时，缺少的工具只会变成 finding，不会崩溃）。

# %%
doc = labs.doctor_json()
facts = doc["facts"]
prof = facts["profile"]
print(f"host {facts['host']}, CPU cores: {facts['cpu_cores']} logical, {facts.get('cpu_physical_cores') or '?'} physical; "
      f"RAM {facts['ram_gb']:.1f} GB")
print(f"torch {facts['torch'].get('version')}, CUDA build {facts['torch'].get('cuda_build')}")
print(labs.nccl_line(facts["torch"]))
print(f"GPUs visible to torch: {facts['torch']['device_count']}; RDMA devices: {len(facts['rdma']['devices'])}")
print(f"lab case: {prof['case']} — {prof['summary']}")

# %%
# NBVAL_CHECK_OUTPUT
print("doctor sections:", sorted(doc))
print("status is one of PASS/WARN/FAIL:", doc["status"] in ("PASS", "WARN", "FAIL"))
print("every finding has a severity:", all(f["severity"] in ("info", "warning", "critical") for f in doc["findings"]))
print("lab case is one of cpu/single/pcie/nvlink:", prof["case"] in ("cpu", "single", "pcie", "nvlink"))

# %% [markdown]
# ## 2. 结论（findings）
#
# 每条 finding 都给出组件、检查项、实测值与期望值。`warning` 与 `critical` 是需要在开始性能实验之前处理的事项：
#
# - 容器里 `/dev/shm` 只有 Docker 默认的 64 MB 时，NCCL 的 SHM 传输会失败（NVIDIA/nccl #290、#342，解决办法是 `--shm-size=1g` 或 `--ipc=host`）；
# - 没有 RDMA 设备时，多机 NCCL 只能退回 TCP socket，带宽会低一个数量级；
# - **驱动比 torch 所用的 CUDA 需要的旧**：doctor 查课程的 CUDA 最低驱动表（`labutil/data/cuda_compat.toml`，NVIDIA CUDA
#   Release Notes 表 2/表 3）。低于最低驱动但仍在同一大版本的兼容下限之上，是 warning（次版本兼容：能跑，但不能 JIT 新的 PTX、
#   部分 API 报 `cudaErrorCallRequiresNewerDriver`）；低于下限是 critical（CUDA 初始化直接失败）。修复办法二选一：升级驱动，
#   或安装与驱动匹配的 torch wheel——doctor 会给出具体的 `--index-url .../whl/cu12x` 或 `cu13x`。

# %%
show_table([{k: f[k] for k in ("severity", "component", "check", "message")} for f in doc["findings"]]
           or [{"severity": "-", "component": "-", "check": "-", "message": "no findings"}])

# %% [markdown]
# ## 3. 本机 GPU 与拓扑
#
# 有 GPU 时下表列出每张卡及其在课程硬件目录中的对应条目（`labutil.bench.catalog_gpu_name` 把驱动报告的名字，例如
# `NVIDIA H100 80GB HBM3`，映射到目录里的 `H100-SXM`），lab04 就用这个条目的数据手册值做对比。
# 第二张表是每一对 GPU 的连接码：**NV#** 表示 # 条 NVLink 直连，**PIX** 同一 PCIe 交换芯片，**PXB** 跨多级交换芯片，
# **PHB** 经过 CPU 的 PCIe 根桥，**NODE** 同一 NUMA 节点内跨根桥，**SYS** 跨 CPU 插槽（经 UPI/xGMI）——越往后越慢。

# %%
from labutil.bench import catalog_gpu_name

gpus = facts["torch"]["devices"] or []
show_table([{"index": i, "name": d if isinstance(d, str) else d.get("name", "?"),
             "catalog": catalog_gpu_name(d if isinstance(d, str) else d.get("name", ""))} for i, d in enumerate(gpus)]
           or [{"index": "-", "name": "no CUDA GPU: the labs use the CPU path (2 gloo ranks)", "catalog": "-"}])
show_table([{"GPU pair": k, "link": v, "NVLink": v.startswith("NV")} for k, v in sorted(prof.get("pair_links", {}).items())]
           or [{"GPU pair": "-", "link": "no GPU pair on this machine", "NVLink": "-"}])

# %% [markdown]
# ## 4. 健康输出示例：CPU 机器与 8×H100 节点
#
# 下面两段由 doctor 自己的渲染函数生成（`labs.example_doctor_report`），输入是**格式真实、数值示意**的工具输出，所以它们
# 不会与真实报告的格式脱节。第一段是一台 2 核、25 GB 内存、装 CPU 版 torch 的虚拟机（课程 CI 机器就是这样）：没有
# `nvidia-smi`，没有 RDMA 设备，实验情形是 `cpu`，只有两条 info，状态 PASS，NCCL 一项写明「CPU 版 torch 没有 NCCL」。
# 第二段是一台 DGX H100 级别的节点，数值的依据：8 张 `NVIDIA H100 80GB HBM3`（H100 SXM5 在 nvidia-smi 里的名字与
# 81559 MiB 显存）、课程自带的 `nvidia-smi topo -m` 样例（全部 NV18，每张卡旁一块 PIX 网卡）、8 个 400 Gb/s 的 Active
# IB 端口、112 个物理核（开超线程即 224 个逻辑核）与 2 TB 内存（NVIDIA DGX H100 数据手册：2 颗 Xeon Platinum 8480C 共 112 核，
# 2 TB 系统内存）、
# 驱动 580.65.06（CUDA 13.0 GA 的最低驱动，NVIDIA CUDA Release Notes 表 3）、torch 2.14.1+cu130 与它在 PyPI 上依赖的
# `nvidia-nccl-cu13` 2.30.7。健康的 8 卡节点应当是：实验情形 `nvlink` 且 NVLS 为 yes，8 个网卡 Active，期望 busbw 约
# 480 GB/s，没有 warning 与 critical。你的机器如果多出一条 critical，先读它的 message，它给出的就是修复命令。
#
# 注意 DGX H100 那段里的 `cores_per_gpu` 一条 info：112 个物理核分给 8 张卡是每卡 14 个，低于种子课程「每卡 16 个物理核」的
# 经验值——连 NVIDIA 自己的旗舰也不满足它（第 9 章误区一）。doctor 按**物理核**算（超线程的两个逻辑核只算一个，
# 读 `/sys/devices/system/cpu/cpu*/topology`），并且只报 info 不报 warning：对预先分好词的 LLM 训练，每卡 14 核绰绰有余；
# 对在 CPU 上解码图像的视觉训练，16 核都可能不够（第 9、18 章用数据加载模型算过）。按逻辑核算会把 DGX H100 算成每卡 28 核，
# 多出一倍——这正是自测题 2 要你避开的错误。

# %%
print("=== illustrative: a CPU box (2 cores, CPU-only torch) ===")
print(labs.example_doctor_report("cpu"))
print()
print("=== illustrative: one DGX H100 node (values: see the text above) ===")
print(labs.example_doctor_report("dgx-h100"))

# %% [markdown]
# ## 5. 如何读输出，以及在实验机上还应手动看的命令
#
# ```bash
# nvidia-smi                       # 驱动版本、显存、功耗、ECC；右上角 "CUDA Version" 是驱动支持的最高 CUDA
# nvidia-smi topo -m               # GPU-GPU / GPU-NIC 连接矩阵（NV18、PIX、SYS ...）
# nvidia-smi --query-gpu=index,pcie.link.gen.max,pcie.link.width.max --format=csv   # PCIe 代数与宽度
# ibstat                           # IB 端口 State: Active、Rate: 400（NDR）
# python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.nccl.version())"
# ```
#
# 读 doctor 报告时按这个顺序：先看 critical（不修好后面全是白测），再看「实验情形」是否与你对机器的认识一致
# （例如你以为是 NVLink 机器，doctor 却说 `pcie`——多半是 GPU 插在了 PCIe 版的机器上，或者虚拟化只透传了部分 NVLink），
# 最后记下网卡速率，做两节点实验时用它算预期。
#
# 关于 NCCL 版本：pip 安装的 CUDA 版 torch 把 NCCL 打包在 `nvidia-nccl-cu12`/`nvidia-nccl-cu13` 这个依赖里，
# `torch.cuda.nccl.version()` 读的就是它，不需要 GPU，也与系统里 `/usr/lib` 下装没装 NCCL 无关。所以在登录节点（通常没有 GPU）上
# 就能核对「所有计算节点的 torch 是否带同一个 NCCL」——多机任务里各节点 NCCL 版本不一致，是初始化卡住或报
# `unhandled system error` 的常见原因之一。CPU 版 torch（`+cpu`）根本不带 NCCL，本实验会明说「没有」，而不是打印一个 None。
#
# 关于 CPU 路径：没有 GPU 时后面的实验都走 gloo（两个进程经回环网卡通信），它验证的是**方法**——命令、表格、校验、拟合、
# 作图——而不是带宽。CPU 路径下每个数字旁边都会标注「CPU path」，不要把它和 GPU 的预期放在一起比较。
#
# ## 6. What-if
#
# 1. `CUDA_VISIBLE_DEVICES=0,1 python -m labutil doctor`：torch 只看到 2 张卡，但 `nvidia-smi topo -m` 仍显示全部——想想 NCCL 看到的是哪一个？
# 2. 在容器里分别用 `--shm-size=64m` 与 `--ipc=host` 启动，再跑 doctor，比较 `/dev/shm` 一项的 finding。
# 3. 把 torch 换成另一个 CUDA 版本的 wheel（如 cu126 ↔ cu130），看 doctor 的 `cuda_driver` finding 是否出现。
#
# ## 常见问题与排查
#
# - **doctor 说 `cpu`，可你确定机器上有 GPU**：先在同一个环境里跑 `python -c "import torch; print(torch.version.cuda)"`。
#   打印 None 说明装的是 CPU 版 torch（`make test` 装的就是它），换 `make gpu`；打印了版本但 `cuda_available` 为 False，
#   多半是驱动太旧（doctor 的 `cuda_driver` finding 会给出对应的 wheel），或者容器没有 `--gpus all`。
# - **拓扑矩阵里出现 `SYS`**：这对 GPU 之间的流量要经过 CPU 之间的 UPI/xGMI，是最慢的一跳；做 lab02 时用
#   `CUDA_VISIBLE_DEVICES` 分别选同一交换芯片下的一对和跨 CPU 的一对，亲眼看差距。
# - **IB 端口 `State: Down` 或速率低于预期**（例如 NDR 网卡只跑到 200）：是线缆、光模块或交换机端口的问题，
#   先查 `ibstat` 与 `mlxlink`（第 12 章），修好之前的两节点结果没有意义。
# - **`/dev/shm` 只有 64 MB**：Docker 的默认值，NCCL 的 SHM 传输会失败；用 `--shm-size=1g` 或 `--ipc=host` 重启容器。
#
# ## 7. 自测题（用你自己的机器）
#
# 三道题的参考答案都从你刚写出的 `labs/_runs/lab01_doctor.json` 计算：每台机器答案不同，没有标准数字可抄。
#
# **题 1**：你的机器上有几对 GPU 之间是 NVLink 直连？（没有 GPU 或都是 PCIe 时答 0）

# %%
answer_1 = None
lab_exercise("lab01.1").check(answer_1)

# %% [markdown]
# **题 2**：你的机器上每张 GPU 平均分到多少个**物理** CPU 核？（第 1 节第一行 `CPU cores` 里的 physical 数；
# 没有 GPU 时按 1 张计算；第 9 章的经验值是 ≥ 16，DGX H100 是 14）

# %%
answer_2 = None
lab_exercise("lab01.2").check(answer_2)

# %% [markdown]
# **题 3**：你的机器上每张 GPU 平均分到多少 GB 主机内存？（doctor 报告的 RAM，十进制 GB，除以 GPU 数；没有 GPU 时按 1 张计算）
# 内存要容纳数据加载的缓冲、pinned memory、CPU offload 的优化器状态和检查点的暂存；DGX H100 是每卡约 270 GB。

# %%
answer_3 = None
lab_exercise("lab01.3").check(answer_3)

# %% [markdown]
# ## 参考资料
#
# - `nvidia-smi topo -m` 图例；NVML `nvmlGpuTopologyLevel_t`。
# - NVIDIA CUDA Toolkit Release Notes，表 2、表 3（`labutil/data/cuda_compat.toml`）。
# - NVIDIA/nccl issue #290、#342（`/dev/shm` 过小）。
# - NVIDIA DGX H100 数据手册（CPU、系统内存）；PyPI `torch` 2.14.1 的依赖 `nvidia-nccl-cu13` 2.30.7（pip 解析结果）。
# - PyTorch `torch.cuda.nccl.version()`：读取 torch 链接的 NCCL 版本，不初始化 CUDA。
# - 下一步：lab02 用真实的集合通信测带宽。
