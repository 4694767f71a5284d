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
# > 有 GPU 时它报告 GPU、驱动、CUDA、NCCL、拓扑与 RDMA 设备；没有 GPU 时它明确告诉你后续实验将走 **CPU 路径（gloo）**。
#
# ## 实验目标
#
# - 用一条命令 `python -m labutil doctor --json` 收集本机事实（GPU、驱动、CUDA、torch 自带的 NCCL、`nvidia-smi topo -m`、`/sys/class/infiniband`、`/dev/shm`）；
# - 读懂每条 finding 的严重级别（info / warning / critical）以及它对后续实验意味着什么；
# - 知道 pip 安装的 torch 使用的是**它自带的 NCCL**，而不是系统里的 NCCL——排查版本问题时先看这里。
#
# 在一台 2–4 卡的实验机上，你应当看到每张 GPU 一行、`nvidia-smi topo -m` 的 GPU 间连接（NV# 表示 NVLink，PIX/PXB/PHB/SYS 表示不同层级的 PCIe 路径）以及离每张 GPU 最近的网卡。

# %%
from labutil.notebook import setup, show_table
from labutil.bench import labs

rng = setup()

# %% [markdown]
# ## 1. 运行探测
#
# 下面的单元格在子进程里运行 `python -m labutil doctor --json`（参数列表、带超时，缺少的工具只会变成 finding，不会崩溃）。

# %%
doc = labs.doctor_json()
facts = doc["facts"]
print(f"host {facts['host']}, {facts['cpu_cores']} CPU cores, RAM {facts['ram_gb']:.1f} GB")
print(f"torch {facts['torch']['version']}, CUDA build {facts['torch']['cuda_build']}, "
      f"NCCL (bundled with torch) {facts['torch']['nccl_version']}")
print(f"GPUs visible to torch: {facts['torch']['device_count']}; RDMA devices: {len(facts['rdma']['devices'])}")

# %%
# NBVAL_CHECK_OUTPUT
print("doctor sections:", sorted(doc))
print("status is one of PASS/WARN/FAIL:", doc["status"] in ("PASS", "WARN", "FAIL"))
print("every finding has a severity:", all(f["severity"] in ("info", "warning", "critical") for f in doc["findings"]))

# %% [markdown]
# ## 2. 结论（findings）
#
# 每条 finding 都给出组件、检查项、实测值与期望值。`warning` 与 `critical` 是需要在开始性能实验之前处理的事项：
# 例如容器里 `/dev/shm` 只有 Docker 默认的 64 MB 时，NCCL 的 SHM 传输会失败（NVIDIA/nccl #290、#342，解决办法是 `--shm-size=1g` 或 `--ipc=host`）；
# 没有 RDMA 设备时，多机 NCCL 只能退回 TCP socket，带宽会低一个数量级。

# %%
show_table([{k: f[k] for k in ("severity", "component", "check", "message")} for f in doc["findings"]]
           or [{"severity": "-", "component": "-", "check": "-", "message": "no findings"}])

# %% [markdown]
# ## 3. 本机 GPU 与拓扑
#
# 有 GPU 时下表列出每张卡及其在课程硬件目录中的对应条目（`labutil.bench.catalog_gpu_name` 把驱动报告的名字，例如
# `NVIDIA H100 80GB HBM3`，映射到目录里的 `H100-SXM`），后续 lab04 就用这个条目的数据手册值做对比。

# %%
from labutil.bench import catalog_gpu_name

gpus = facts["torch"]["devices"] or []
show_table([{"index": i, "name": d if isinstance(d, str) else d.get("name", "?"),
             "catalog": catalog_gpu_name(d if isinstance(d, str) else d.get("name", ""))} for i, d in enumerate(gpus)]
           or [{"index": "-", "name": "no CUDA GPU: the labs use the CPU path (2 gloo ranks)", "catalog": "-"}])

# %% [markdown]
# ## 4. 在你的实验机上还应该手动看的命令
#
# ```bash
# nvidia-smi                       # 驱动版本、显存、功耗、ECC
# nvidia-smi topo -m               # GPU-GPU / GPU-NIC 连接矩阵（NV18、PIX、SYS ...）
# ibstat                           # IB 端口 State: Active、Rate: 400（NDR）
# python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.nccl.version())"
# ```
#
# 这些命令的输出格式与解析方法在第 9、11、23 章有详细讲解（`labutil.parsers`）。下一步：lab02 用真实的集合通信测带宽。
