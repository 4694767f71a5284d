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
# # 第20章 容器化与GPU Operator
#
# > 模块五「部署与验证」的第 2 章。前置：第 19 章（驱动 / CUDA / 固件版本核对）、第 11 章（RDMA 与 memlock）、
# > 第 15 章（NCCL 传输层：P2P、SHM、NET/IB）。后续：第 21 章的 Slurm 与 Kubernetes 调度都以本章的容器为运行单元，
# > 第 22–23 章的验收作业也跑在这些容器里。
#
# ## 学习目标
#
# 学完本章，你应该能够：
#
# - 说清楚 NVIDIA Container Toolkit 在 `docker run --gpus` 背后做了什么，以及 Enroot/Pyxis、Apptainer（Singularity）与 Docker 在 HPC 集群上的取舍；
# - 写出一条能跑**多机** NCCL 训练的容器启动命令，并说明 `--ipc=host`/`--shm-size`、`--ulimit memlock=-1`、`/dev/infiniband`、`--network=host` 各自防止哪一种故障；
# - 用 NVIDIA Table 3 判断镜像里的 CUDA 版本能否在宿主机驱动上运行；
# - 列出 GPU Operator 的组件与它们的就绪顺序，并根据 `kubectl get pods -n gpu-operator` 的输出定位是哪一环卡住；
# - 计算一个 20 GB 镜像被 512 个节点同时拉取的「拉取风暴」，并比较 P2P 分发与 Enroot squashfs 共享文件系统方案。

# %%
import shlex

from labutil.notebook import setup, show_table
from labutil import containers as C, comm, inventory, manifests
from labutil.cluster import Cluster
from labutil.explore import containers as containers_x
from labutil.exercises import exercise

rng = setup()

# %% [markdown]
# ## 1. 为什么要容器：把「软件栈」也变成可以验收的东西
#
# 第 19 章把驱动、固件、OFED 版本对齐之后，节点上还剩一大堆用户态软件：CUDA Toolkit、cuDNN、NCCL、PyTorch、
# Megatron、各种 Python 包。它们的组合数量巨大，每个团队要的版本还不一样。运维团队常见的一类「玄学故障」
# 就是某台节点上多装了一个不同版本的 NCCL 或 libcudnn，训练在 511 个节点上正常、在第 512 个节点上随机 hang（示意场景；第 6 节的镜像标签漂移是它的容器版本）。
# 容器把用户态软件栈打包成一个不可变的镜像：**宿主机只提供内核驱动和设备**，镜像提供从 CUDA runtime 往上的一切。
# 这样「这个作业用的是什么软件」就有了唯一答案——镜像的 digest——它可以被验收、被回滚、被复现。
#
# 但 GPU 容器和普通 Web 容器有三点本质不同，本章的所有坑都来自这三点：
#
# | 差异 | 普通容器 | GPU 训练容器 | 不处理的后果 |
# |---|---|---|---|
# | 设备 | 不需要设备 | 需要 `/dev/nvidia*`、驱动用户态库（libcuda.so 必须与内核驱动同版本），多机还要 `/dev/infiniband/uverbs*` | 容器里看不到 GPU，或看到 GPU 但 NCCL 只能走 TCP |
# | 内存 | 普通分页内存 | RDMA 要**锁页**（pin）注册内存；NCCL 进程间用 `/dev/shm` 共享内存 | `ibv_reg_mr` 失败；`Error while creating shared memory segment` |
# | 网络 | bridge + NAT 足够 | NCCL bootstrap 要彼此可达的地址，RoCE 要宿主机的 GID 表 | 多机初始化 hang 或超时 |
#
# 注意第一行里的「libcuda.so 必须与内核驱动同版本」：这正是为什么驱动**不能**打进镜像，而要由运行时在启动容器时
# 从宿主机注入。做这件事的就是 NVIDIA Container Toolkit。
#
# ## 2. 三种运行时：Docker + NVIDIA Container Toolkit、Enroot/Pyxis、Apptainer
#
# **Docker / containerd + NVIDIA Container Toolkit。** `nvidia-ctk runtime configure --runtime=docker` 会在
# `/etc/docker/daemon.json` 里注册 `nvidia` 运行时；`docker run --gpus all` 时，toolkit 的 prestart hook
# （或新版本的 CDI 规范）把选中的 GPU 设备节点、驱动库（libcuda、libnvidia-ml 等）和 `nvidia-smi` 挂进容器。
# 它默认给容器一个**独立的 IPC 命名空间**和一个 **64 MB 的 `/dev/shm`**（Docker `run` 参考手册 `--shm-size` 的默认值），
# 一个独立的网络命名空间（bridge），以及 Docker daemon 的默认 ulimit——这三个默认值对 Web 服务很合理，对 NCCL 全都不对。
#
# 注入 GPU 的方式正在换代。老办法是 prestart hook：容器启动前由 `nvidia-container-cli` 临时探测宿主机上有哪些设备和驱动库，再挂进去；
# 从 Toolkit v1.12.0 起，推荐的做法是 **CDI**（Container Device Interface，一个容器运行时通用的开放规范）：事先用
# `nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml` 生成一份 YAML，写明「`nvidia.com/gpu=0` 意味着哪些设备节点、哪些库文件、哪些挂载」，
# 运行时照单执行，Podman、containerd、CRI-O 都能读。它带来一个运维上的新坑：这份规范是**驱动的快照**。升级驱动之后如果不重新生成，
# 规范里写的还是旧版本库文件的路径，容器就会启动失败或找不到 libcuda——nvidia-container-toolkit 仓库的 issue #856 就是用户在每次内核或驱动更新后
# 都得手动重跑 `nvidia-ctk cdi generate`。Toolkit v1.18.0 为此加了 systemd 服务 `nvidia-cdi-refresh`，在驱动安装或升级时自动把规范重新生成到
# `/var/run/cdi/nvidia.yaml`（这个目录开机时会被清空，所以该服务每次开机也会重新生成）；但文档写明它**不处理** MIG 重新划分，
# 第 29 章改完 MIG 布局后仍要手动重新生成。结论写进第 19 章的变更流程：**驱动升级和 MIG 变更的步骤清单里都要有「刷新 CDI 规范」这一行**，
# 做完后在该节点上跑一次容器内的 `nvidia-smi -L` 再放回调度。
#
# Toolkit 本身也要像驱动一样纳入补丁流程：它的 hook 在容器启动时以宿主机 root 身份运行，处理的却是镜像里的文件，
# 于是成了容器逃逸漏洞的高发处。CVE-2024-0132（v1.16.1 及以前，v1.16.2 修复）和 CVE-2025-23266（v1.17.7 及以前，v1.17.8 修复）
# 都能让一个恶意镜像拿到宿主机 root；GPU Operator 随后分别升级了它自带的 Toolkit。多个团队共用节点时这就是第 29 章说的租户隔离问题。
#
# **Enroot + Pyxis（Slurm）。** Enroot 是 NVIDIA 为 HPC 写的「非特权沙箱」：它把镜像转换成一个 squashfs 文件（`.sqsh`），
# 以普通用户身份解包或挂载运行，**默认不建新的网络和 IPC 命名空间**，所以宿主机的 IB 网卡、`/dev/shm`、ulimit 原样可见；
# GPU 由它的 nvidia hook 根据 `NVIDIA_VISIBLE_DEVICES` 挂入。Pyxis 是 Slurm 的 SPANK 插件，让 `srun --container-image=...`
# 直接在作业的每个节点上用 Enroot 起容器。代价是镜像 URI 的写法不同：registry 主机名和镜像路径之间用 `#` 分隔
# （`docker://nvcr.io#nvidia/pytorch:24.05-py3`），写成斜杠就会被当成 Docker Hub 上的镜像去拉。
#
# **Apptainer（原 Singularity）。** 镜像是单个 SIF 文件，可以直接放在并行文件系统上，所有节点共享；默认同样共享宿主机的
# 网络、`/dev` 和 IPC。GPU 需要显式加 `--nv`（或 `--nvccli`，调用 nvidia-container-cli）。高校和超算中心用得最多，
# 因为它从设计上就不需要 root daemon。`--containall` 会隔离 `/dev` 与 IPC，多机训练时要谨慎。
#
# | | Docker + Toolkit | Enroot + Pyxis | Apptainer |
# |---|---|---|---|
# | 需要 root daemon | 是 | 否 | 否 |
# | 默认 `/dev/shm` | 64 MB 私有 | 共享宿主机 | 共享宿主机 |
# | 默认网络 | bridge（NAT） | 宿主机 | 宿主机 |
# | GPU 开关 | `--gpus` | `NVIDIA_VISIBLE_DEVICES`（Slurm 设置） | `--nv` |
# | 镜像形态 | 分层 tar + overlayfs，每节点一份 | `.sqsh`，可放共享文件系统 | `.sif`，可放共享文件系统 |
# | 典型场景 | K8s（containerd）、开发机 | Slurm 训练集群（种子课程：Docker+Enroot） | 高校/超算 Slurm |
#
# ## 3. 一条能跑多机训练的 `docker run`：逐项体检
#
# 把一条命令交给 `labutil.containers.lint_command`（参数列表，用 `shlex.split` 切分；它只解析、**从不执行**），
# 它会逐项检查上表里的坑。先看最常见的「只加了 `--gpus`」：

# %%
# NBVAL_CHECK_OUTPUT
naive = shlex.split("docker run --gpus all -it --rm nvcr.io/nvidia/pytorch:24.05-py3 torchrun train.py")
rep = C.lint_command(naive, host_driver="550.54.15", image_cuda="12.4.1")
print(rep.status, "critical:", rep.count("critical"), "warning:", rep.count("warning"))
for check, verdict in C.check_status(rep).items():
    print(f"{check:<13s} {verdict}")

# %% [markdown]
# 四个致命项，每一项都对应一类在 NCCL 与 Docker 的公开 issue 里反复出现的故障（下文逐项给出出处）：
#
# **/dev/shm。** NCCL 的 SHM 传输在同一节点的 rank 之间用共享内存段交换数据（当 GPU 之间不能走 P2P 时，以及代理线程的
# 控制结构）。每个 rank、每个 channel、每条 SHM 连接都要一块 `NCCL_BUFFSIZE` 大小的缓冲区（默认 4 MiB，NCCL 环境变量文档），
# 粗略估计
#
# $$ M_\text{shm} \approx n_\text{local} \times n_\text{channel} \times k \times \text{NCCL\_BUFFSIZE}, $$
#
# 其中 $k$ 是每个 channel 的 SHM 连接数（ring 一条、tree 再加一条，取 2）。8 卡节点、16 个 channel 时
# $M_\text{shm}\approx 8\times16\times2\times4\ \text{MiB} = 1024\ \text{MiB}$，是 Docker 默认 64 MB 的 16 倍。
# 注意这是**最坏情况**：只有节点内 GPU 之间不能走 P2P（纯 PCIe 机器上 P2P 被 ACS、虚拟化或拓扑禁用）时，节点内的全部流量才走 SHM。
# 在有 NVLink/NVSwitch 的 HGX/DGX 上，节点内走 P2P，`/dev/shm` 里主要是代理线程与控制结构，需求小得多——但仍可能超过 64 MB，
# 而 DataLoader 的 worker 也要用它，所以下限不变。
# NCCL 2.7 之后这会直接报 `Error while creating shared memory segment ... No space left on device`（NVIDIA/nccl #342、#290）。
# 修复：`--ipc=host`（用宿主机的 `/dev/shm`）或 `--shm-size=1g` 以上。PyTorch DataLoader 的 worker 进程也通过 `/dev/shm`
# 传 batch，所以本课程把 1 GiB 定为下限。

# %%
# NBVAL_CHECK_OUTPUT
for n_local, ch in ((2, 8), (8, 16), (8, 32)):
    need = C.nccl_shm_need_bytes(n_local, ch)
    print(f"{n_local} local ranks x {ch:2d} channels: need {need / 2**20:6.0f} MiB = "
          f"{need / C.DOCKER_DEFAULT_SHM_BYTES:4.1f} x Docker default 64 MiB")

# %%
containers_x.shm_need_figure()

# %% [markdown]
# **memlock。** RDMA 网卡直接读写进程内存，注册的内存必须被锁页，锁页总量受 `RLIMIT_MEMLOCK` 限制（除非进程有
# `CAP_IPC_LOCK`）。Docker 容器继承 daemon 的默认 ulimit，远小于训练进程要注册的几个 GB 缓冲区，于是 NCCL 的 IB 传输
# 初始化失败。修复：`--ulimit memlock=-1`（或 `--cap-add IPC_LOCK`）；K8s 里在 `securityContext.capabilities.add`
# 加 `IPC_LOCK`。NGC 文档里常见的 `--ulimit stack=67108864`（64 MiB 栈）是另一个习惯设置，与 RDMA 无关。
#
# **/dev/infiniband。** 没有 `uverbs` 设备，NCCL 找不到 IB 网卡，**不会报错**，而是安静地退回 TCP socket。
# 这是最危险的一种：作业能跑，只是慢。慢多少？用课程统一的集群模型（`labutil.cluster`，第 13 章），16 台 DGX H100（128 张 GPU）同步 2 GB 梯度：
# 正常时每节点 8 条 400G 轨道，NCCL 每条跑到约 48 GB/s、每个环跨节点走一条轨道；退回 TCP 后只剩一块 100 Gb/s 以太网卡被 8 个 GPU 分享（每 GPU 约 1.5 GB/s）。
# **本章假设的退路网卡**是每台节点一块 100 GbE（通常是管理或业务网口）；第 15、22 章用同一块网卡、同一个集群模型（`transport="socket"`）算回落系数，所以三章说的是同一个数。
# 道理是：退回 socket 后，每张 GPU 的跨节点带宽从「一条 400G 轨道」掉到「一块以太网卡的 1/8」，而 socket 传输还跑不满这块网卡的线速：

# %%
# NBVAL_CHECK_OUTPUT
ib = Cluster.system("DGX-H100", n_nodes=16)                                  # 8x 400G NDR rails per node
tcp = Cluster.system("DGX-H100", n_nodes=16, nics_per_node=1, nic_gbps=100,  # NET/Socket on one 100GbE port
                     transport="socket")
t_ib, t_tcp = ib.collective_time_s("all_reduce", 2e9), tcp.collective_time_s("all_reduce", 2e9)
print(f"per-GPU network share: IB rails {ib.net_gbs_per_gpu:.2f} GB/s vs TCP fallback {tcp.net_gbs_per_gpu:.2f} GB/s")
print(f"expected all_reduce busbw: {ib.expected_busbw_gbs('all_reduce'):.0f} vs {tcp.expected_busbw_gbs('all_reduce'):.0f} GB/s")
print(f"all_reduce 2 GB over 16 nodes x 8 GPUs: {t_ib * 1e3:.1f} ms vs {t_tcp * 1e3:.0f} ms ({t_tcp / t_ib:.0f}x slower)")

# %% [markdown]
# 而且 socket 传输连这块网卡的线速也跑不满：NCCL 默认每块网卡 2 条 TCP 流，每条受 CPU 拷贝限制约 2 GB/s（集群模型的
# `transport="socket"`，依据见第 15 章），8 个 GPU 分下来每张只剩约 0.5 GB/s。课程统一的 IB→socket 回落系数是约 90 倍
# （两台 DGX H100：验收期望 370 GB/s 对一块 100 GbE 口上的 socket 传输，第 15、22 章用同一个数），上面 16 台的结果与它一致。
# 种子课程说「任何一个环节配置不当，都可能导致性能下降 30% 以上」——容器少挂一个设备，差的是近百倍。
# 所以第 22 章的验收一定要在**生产镜像、生产启动命令**里跑 nccl-tests，
# 并在 `NCCL_DEBUG=INFO` 里确认看到的是 `NET/IB` 而不是 `NET/Socket`。
#
# **网络命名空间。** bridge 网络下容器的地址是 NAT 后的 172.17.x.x，别的节点访问不到；NCCL 的 bootstrap 会 hang 在初始化，
# RoCE 也看不到宿主机 GID。Slurm + Docker 的做法是 `--network=host`；K8s 里用 `hostNetwork: true`，或用 Multus 给 Pod
# 挂第二张 RDMA 网络（配合 RDMA device plugin），主网络仍走 CNI。
#
# 把四项都补上，再看 `--privileged` 这种「一把梭」的写法：

# %%
# NBVAL_CHECK_OUTPUT
cases = [
    ("fixed", "docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 --network=host "
              "--device=/dev/infiniband nvcr.io/nvidia/pytorch:24.05-py3 torchrun train.py", "runc"),
    ("privileged", "docker run --privileged --network=host nvidia/cuda:12.4.1-devel-ubuntu22.04 nvidia-smi", "runc"),
    ("privileged", "docker run --privileged --network=host nvidia/cuda:12.4.1-devel-ubuntu22.04 nvidia-smi", "nvidia"),
]
for name, cmd, runtime in cases:
    r = C.lint_command(shlex.split(cmd), host_driver="550.54.15", image_cuda="12.4.1", default_runtime=runtime)
    bad = [f"{f.check}={f.severity}" for f in r.findings if f.severity != "info"]
    print(f"{name:<10s} (default runtime {runtime:<6s}) {r.status}: {', '.join(bad) or 'no findings'}")

# %% [markdown]
# `--privileged` 让容器看到所有设备、拿到所有 capability，于是 memlock 和 `/dev/infiniband` 问题「顺便」消失了；
# 但在 Docker 默认运行时 runc 下，它**不会**注入驱动用户态库（设备节点在，libcuda.so 不在，CUDA 照样初始化失败）。
# 如果宿主机的 `/etc/docker/daemon.json` 写了 `"default-runtime": "nvidia"`（`nvidia-ctk runtime configure --set-as-default`，
# 很多 GPU 节点这样配），而镜像设置了 `NVIDIA_VISIBLE_DEVICES`（官方 CUDA/NGC 镜像都设为 `all`），驱动库就会被隐式注入，
# gpu_access 不再是 critical——但这恰恰说明它「碰巧能跑」：每个容器默认看到全部 GPU。无论哪种运行时，`/dev/shm` 都仍是 64 MB，
# 同时把宿主机的全部设备和内核能力交给了容器里的任意代码。生产环境应当只给需要的：`--gpus`、`--device=/dev/infiniband`、
# `--ulimit memlock=-1`、`--ipc=host`。
#
# 下面的探索器把这些命令（以及 Enroot、Pyxis、Apptainer 的写法）放在一起，切换命令、单机/多机、每节点 rank 数和宿主机驱动，
# 看每一项检查怎样变色。

# %%
containers_x.lint_explorer()

# %% [markdown]
# ## 4. 镜像里的 CUDA 与宿主机驱动
#
# 容器解决了用户态的版本冲突，但**没有**解决用户态与内核驱动之间的兼容：镜像里的 CUDA runtime 必须被宿主机驱动支持。
# 规则来自 NVIDIA CUDA Toolkit 发行说明的 Table 3（每个 Toolkit 版本要求的最低驱动）和 Table 2（次版本兼容：
# 同一大版本内，驱动不低于该大版本的下限即可运行，但不能 JIT 更新的 PTX，某些 API 返回 `cudaErrorCallRequiresNewerDriver`）。
# 第 19 章的 `labutil.inventory` 已经把这两张表做成数据；本章的 linter 直接调用它：

# %%
# NBVAL_CHECK_OUTPUT
for drv in ("535.104.05", "550.54.15", "570.124.06"):
    row = []
    for cuda in ("12.2.2", "12.4.1", "12.8.1", "13.0"):
        row.append(f"{cuda}:{inventory.cuda_driver_status(drv, cuda)['status']}")
    print(f"driver {drv:<11s} " + "  ".join(row))

# %% [markdown]
# 驱动 535.104.05 可以完整运行 CUDA 12.2.2 的镜像；12.4.1、12.8.1 的镜像只能在「次版本兼容」模式下运行；CUDA 13.0 的镜像则
# 需要 580.65.06 以上，直接跑不起来（数据中心 GPU 可以用镜像里的 forward-compat 包 `cuda-compat` 在部分驱动分支上运行更新的
# CUDA，但那是有条件的例外，要查 NVIDIA 的 forward compatibility 支持表）。NGC 镜像（如 `nvcr.io/nvidia/pytorch:24.05-py3`）
# 的标签里不含 CUDA 版本，它写在镜像的环境变量 `CUDA_VERSION` 里，用 `docker inspect` 读出来（见第 7 节）。
# 经验法则：**先定驱动分支，再选镜像**；升级镜像前先在一台节点上用生产驱动跑一次 `nvidia-smi` 和一个 NCCL 测试。
#
# ## 5. GPU Operator：把第 2–4 节自动化到每个 K8s 节点
#
# 在 Kubernetes 上，上面这些宿主机准备工作——装驱动、配容器运行时、把 GPU 报告给调度器、导出监控指标——
# 由 NVIDIA GPU Operator 以一组 DaemonSet 的形式在每个 GPU 节点上完成。种子课程把「容器运行时配置（GPU Operator）」
# 列为部署的必经环节：它的每个组件都在等前一个组件就绪，任何一环卡住，节点就不会出现 `nvidia.com/gpu` 资源。

# %%
show_table([{"component": c["name"], "object": c["k8s_object"], "optional": c["optional"], "role": c["role"]}
            for c in C.operator_components()])

# %%
# NBVAL_CHECK_OUTPUT
for i, level in enumerate(C.startup_order()):
    print(f"level {i}: {', '.join(level)}")
print("pre-installed host driver:", " -> ".join("+".join(lv) for lv in C.startup_order(disabled=["driver"])))

# %%
containers_x.operator_order_figure()

# %% [markdown]
# 依赖关系（来自 Operator 各 DaemonSet 的 init container）：Node Feature Discovery 先给节点打上 PCI 厂商 `10de`（NVIDIA）
# 的标签，Operator 只在这些节点上部署组件；驱动容器编译并加载内核模块；container toolkit 等驱动校验通过后配置
# containerd；validator 依次验证驱动、toolkit、一个 CUDA 程序和 device plugin，并在 `/run/nvidia/validations/`
# 写出就绪文件；device plugin、GFD、DCGM exporter、MIG manager 都在 init container 里等待 `toolkit-ready`。
# 因此排障时要**沿着依赖链往上游找**：device plugin 卡在 `Init` 不是 device plugin 的问题。

# %%
# NBVAL_CHECK_OUTPUT
for comp in ("node-feature-discovery", "container-toolkit", "dcgm-exporter"):
    imp = C.missing_impact(comp)
    print(f"{comp:<23s} blocks {len(imp['blocked'])}: {', '.join(imp['blocked']) or '-'}")

# %% [markdown]
# 在推理场景（种子课程场景二：K8s + Triton Inference Server + TensorRT）里，Triton 的 Pod 只需要在
# `resources.limits` 里写 `nvidia.com/gpu: 1`；但如果是多机训练 Pod，第 3 节的坑在 K8s 里一个不少，只是换了写法：
# `/dev/shm` 要挂一个 `medium: Memory` 的 emptyDir，memlock 换成 `IPC_LOCK` capability，RDMA 设备来自 RDMA device plugin。
# 两个 Pod 清单都由 `labutil.manifests.gpu_pod` 生成（本章和第 21、26、29 章给出的每一份 Kubernetes 清单都来自 `labutil.manifests`，
# 同一批对象也以文件形式随课程发布在 `labutil/data/k8s/`）；`lint_pod` 检查同样的项目：

# %%
# NBVAL_CHECK_OUTPUT
bare, fixed = manifests.chapter_manifests()["ch20-gpu-pods.yaml"]
print("bare pod:   ", C.lint_pod(bare, image_cuda="12.4.1", host_driver="550.54.15").status,
      {k: v for k, v in C.check_status(C.lint_pod(bare)).items() if v != "pass"})
print("fixed pod:  ", C.lint_pod(fixed, image_cuda="12.4.1", host_driver="550.54.15").status)

# %%
print(manifests.to_yaml(fixed))

# %% [markdown]
# 这里还有一个 linter 看不出来的前提：**GPUDirect RDMA**。有了 `/dev/infiniband`，NCCL 就会走 `NET/IB`，但网卡要直接读写 GPU 显存，
# 宿主机上还得加载 `nvidia-peermem` 内核模块；没有它，NCCL 仍然走 IB，只是每次都经主机内存中转，日志里 `NET/IB` 后面没有 `/GDRDMA`（第 11、15 章）。
# GPU Operator 用 `--set driver.rdma.enabled=true`（宿主机自己装了 MOFED/DOCA 驱动时再加 `driver.rdma.useHostMofed=true`）
# 在驱动容器旁边起一个 `nvidia-peermem` 容器加载它，默认是关的。RDMA 网卡这一侧（网卡驱动、RDMA device plugin、Multus 与第二张网络）
# 通常交给 NVIDIA Network Operator，它和 GPU Operator 是配套的两个 Operator。
#
# linter 管的是「GPU 训练会不会出事」；清单本身是否符合 Kubernetes API（字段名拼对了没有、类型对不对）要交给 schema 校验器。
# 课程的测试在没有集群的 CI 里离线做这件事：内置类型（Pod、Job、ConfigMap、ResourceQuota……）用 `kubernetes-validate --strict`
# （PyPI 包，自带各版本 Kubernetes 的 OpenAPI schema；`--strict` 把未知字段当错误，专抓 `contianers` 这类拼写错误），
# GPU Operator 的 `ClusterPolicy` 这类自定义资源则用它自己的 CRD schema 校验。你也可以在自己的机器上跑：
#
# ```bash
# pip install kubernetes-validate
# kubernetes-validate --strict -k 1.30 trainer-0.yaml        # INFO ... passed for resource pod/trainer-0
# kubectl apply --dry-run=server -f trainer-0.yaml           # 有集群时：API server 还会检查数量格式、枚举值和准入策略
# ```
#
# 离线 schema 校验只查结构、字段名和类型，`nvidia.com/gpu: "八张"` 这样的数量格式错误要到 API server 才会被拒绝——两道关都要过。

# %% [markdown]
# ## 6. 镜像大小与拉取风暴
#
# 一个 NGC PyTorch 镜像压缩后 10–20 GB 很常见。一台节点单独拉它，下载在 100G 网卡上只要几秒，但 `docker pull`/containerd
# 还要逐层 gunzip 解压（每层单线程）并写进 overlay 存储，20 GB 的镜像实际要**几分钟**；大家习惯了这几分钟，
# 于是没人在意——直到 512 个节点的作业同时启动。下面的模型只算传输（是下限），解压的几分钟每个节点都要再付一次。
# 设镜像大小 $S$（GB），节点数 $N$，registry 出口带宽 $B_\text{reg}$、节点网卡 $B_\text{node}$（Gb/s），并行文件系统聚合读带宽 $B_\text{fs}$（GB/s）：
#
# $$ T_\text{registry} = \max\!\left(\frac{8NS}{B_\text{reg}},\ \frac{8S}{B_\text{node}}\right),\qquad
#    T_\text{p2p} \approx \frac{8S}{\min(B_\text{reg},B_\text{node})} + \lceil\log_2 N\rceil\frac{8c}{B_\text{node}},$$
#
# $$ T_\text{shared fs} = \frac{8S}{\min(B_\text{reg},B_\text{node})} + \max\!\left(\frac{NS}{B_\text{fs}},\ \frac{8S}{B_\text{node}}\right). $$
#
# 中心 registry 的出口被所有节点分享，时间随 $N$ 线性增长；P2P 分发（Dragonfly、Kraken、Spegel 一类）让 registry 只发一份，
# 节点之间以块 $c$ 为单位流水转发，时间几乎与 $N$ 无关；Enroot/Apptainer 的做法是只导入**一次**，把 `.sqsh`/`.sif`
# 放到并行文件系统上，由第 16 章的存储系统承担扇出。三个公式都只算传输，解压分层镜像的 CPU 时间还要另加，所以是下限。
# 解压这一项三种方式并不一样：registry 和 P2P 拿到的都是 gzip 分层，每个节点都要逐层解压、写盘；Apptainer 直接挂载 SIF 里的 squashfs，
# 读到哪页解压哪页；Enroot 的 `enroot create`（Pyxis 默认走这条路）在每个节点上用 `unsquashfs` 把 `.sqsh` 展开到 `ENROOT_DATA_PATH`，
# 这一步是多线程的，Pyxis 文档建议把这个目录放在 tmpfs 上，内存够的话首选；内核 4.18 以上装了 `squashfuse` 和 `fuse-overlayfs` 时，`enroot start` 也能直接挂载镜像而不展开。
# 另一类办法是「懒拉取」（stargz/eStargz、SOCI、Nydus 等 containerd snapshotter）：容器先启动，文件用到时再按块取，
# 把「等整个镜像到齐」变成「等用到的那部分到齐」，代价是运行初期的 I/O 抖动和额外的组件。

# %%
# NBVAL_CHECK_OUTPUT
for m in C.PULL_METHODS:
    t = C.pull_time_s(20, 512, 100, method=m, node_gbps=200, fs_gbs=200)
    eg = C.registry_egress_gb(20, 512, method=m)
    print(f"{m:<9s} 20 GB x 512 nodes: {t:7.1f} s = {t / 60:5.1f} min, registry egress {eg:7,.0f} GB")
plan = C.enroot_import_plan(20, 512, 100, node_gbps=200, fs_gbs=200)
print(f"enroot: per-node import {plan['per_node_import_s']:.1f} s vs shared .sqsh {plan['shared_sqsh_s']:.1f} s "
      f"({plan['speedup']:.1f}x)")

# %%
containers_x.pull_time_figure()

# %% [markdown]
# 100 Gb/s 的 registry 给 512 个节点发 20 GB 需要 819.2 s，近 14 分钟（还没算解压）——这段时间里 4096 张 GPU 全部空转，
# 而且 registry 要发出 10 TB 的流量，往往先被打挂，表现为大批 Pod `ImagePullBackOff`、作业随机超时。
# 共享 `.sqsh` 把它变成 52.8 s；P2P 的传输下限只有 1.6 s，但这时每个节点各自解压 20 GB 分层镜像的几分钟就成了大头，
# 所以 P2P 真正省掉的是 registry 的 10 TB 出口和它带来的失败，而不是那几分钟。在探索器里调整镜像大小、节点数、带宽和「已缓存比例」
# （节点上已经预拉过镜像，例如用 DaemonSet 预热或把镜像固化进节点系统盘），看三条曲线如何变化：

# %%
containers_x.pull_explorer()

# %% [markdown]
# 镜像还有一个常被忽略的运维属性：**标签是可变的**。`nvcr.io/nvidia/pytorch:24.05-py3` 这样的 tag 只是一个指针，仓库可以把它重新指向一次新的构建
# （修安全漏洞时常这样做）；`@sha256:...` 形式的 digest 则是镜像内容的哈希，内容变了 digest 必然变。Kubernetes 文档写明，
# 不写 `imagePullPolicy` 时，tag 为 `latest` 或省略 tag 的镜像默认 `Always`，其余默认 `IfNotPresent`——节点上已有同名 tag 就不再拉。
# 于是一次重新推送之后，老节点用缓存里的旧镜像，新加入或刚重装的节点拉到新镜像，同一个 512 节点作业里混着两套 NCCL 或 PyTorch，
# 这就是第 1 节那种「第 512 个节点随机 hang」的容器版本。对策很简单：生产作业的镜像一律写 digest
# （`docker inspect --format '{{index .RepoDigests 0}}' 镜像名` 可以查到）；Enroot 的共享 `.sqsh` 天然没有这个问题，
# 因为所有节点读的是同一个在导入时就固定下来的文件。
#
# ## 7. 实操命令
#
# 以下命令需要真实的 GPU 节点；本 notebook 不执行它们。下面解析的输出样本是**示意**的：格式与真实工具一致
# （`kubectl get pods` 的列、`kubectl describe node` 的 Capacity/Allocatable/Allocated resources 行、`docker inspect`
# 的 JSON 环境变量列表；Pod 名取自 GPU Operator 安装文档），其中的名字后缀、时间、数量和版本是编的。
#
# 配置 Docker 的 NVIDIA 运行时并做一次多机规格的冒烟测试：
#
# ```bash
# sudo nvidia-ctk runtime configure --runtime=docker
# sudo systemctl restart docker
# docker run --rm --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 \
#     --network=host --device=/dev/infiniband nvcr.io/nvidia/pytorch:24.05-py3 nvidia-smi
# docker inspect --format '{{json .Config.Env}}' nvcr.io/nvidia/pytorch:24.05-py3   # CUDA_VERSION in the image
# ```
#
# Enroot / Pyxis（Slurm）与 Apptainer：
#
# ```bash
# enroot import -o /lustre/images/pytorch-24.05.sqsh docker://nvcr.io#nvidia/pytorch:24.05-py3
# srun -N 2 --ntasks-per-node=8 --gpus-per-node=8 \
#      --container-image=/lustre/images/pytorch-24.05.sqsh --container-mounts=/lustre:/lustre \
#      python train.py
# apptainer pull pytorch-24.05.sif docker://nvcr.io/nvidia/pytorch:24.05-py3
# apptainer exec --nv pytorch-24.05.sif nvidia-smi
# ```
#
# GPU Operator：
#
# ```bash
# helm repo add nvidia https://helm.ngc.nvidia.com/nvidia && helm repo update
# helm install --wait --generate-name -n gpu-operator --create-namespace nvidia/gpu-operator
# kubectl get pods -n gpu-operator
# kubectl describe node gpu-node-01 | grep nvidia.com/gpu
# kubectl get clusterpolicy cluster-policy -o yaml                      # Helm 渲染出的 ClusterPolicy：Operator 真正读的配置
# ```
#
# Helm 的 `--set` 参数最后都落在一个名为 `cluster-policy` 的 `ClusterPolicy` 对象里（GPU Operator 的自定义资源）。
# 宿主机已经装好驱动时（`--set driver.enabled=false`），它的核心部分是下面这样（由 `manifests.cluster_policy(driver=False)` 生成，
# 并按 GPU Operator 仓库里 `ClusterPolicy` 的 CRD schema 校验过）：

# %%
print(manifests.to_yaml(manifests.chapter_manifests()["ch20-gpu-operator.yaml"]))

# %% [markdown]
# 每条启动命令上线前都先过一遍 linter（`C.lint_command(shlex.split(cmd))`）。`docker inspect` 的输出给出镜像的 CUDA 版本：

# %%
# NBVAL_CHECK_OUTPUT
env = C.parse_image_env(C.SAMPLE_DOCKER_INSPECT_ENV)
print("image CUDA_VERSION:", env["CUDA_VERSION"], "| NCCL_VERSION:", env["NCCL_VERSION"])
for drv in ("535.104.05", "550.54.15"):
    print(f"host driver {drv}: {inventory.cuda_driver_status(drv, env['CUDA_VERSION'])['status']}")

# %% [markdown]
# `kubectl get pods -n gpu-operator` 的示意输出，以及规则引擎给出的结论：

# %%
print(C.SAMPLE_KUBECTL_PODS)

# %%
# NBVAL_CHECK_OUTPUT
pods = C.parse_kubectl_pods(C.SAMPLE_KUBECTL_PODS)
print(C.operator_readiness(pods).text())

# %% [markdown]
# device plugin 在 CrashLoopBackOff，validator 停在 `Init:3/4`——第 4 个 init container 是 plugin-validation，
# 它在等 device plugin，所以 validator 是受害者、不是原因。下一步是 `kubectl logs -n gpu-operator <device-plugin pod>`。
# 驱动容器重启过 2 次，也值得查它的日志（常见原因：内核头文件缺失导致模块编译失败）。节点上 GPU 资源是否已上报：

# %%
# NBVAL_CHECK_OUTPUT
node = C.parse_node_gpu(C.SAMPLE_DESCRIBE_NODE_GPU)
print(f"{node.product}: capacity {node.capacity}, allocatable {node.allocatable}, requested {node.requested}, "
      f"free {node.allocatable - node.requested}")

# %% [markdown]
# ## 8. 常见误区
#
# ### 误区一：「容器里能看到 GPU，就能跑多机训练」
#
# `nvidia-smi` 能跑只证明了 `--gpus` 这一项。同一条命令放进多机作业，linter 给出的致命项：

# %%
# NBVAL_CHECK_OUTPUT
single = C.lint_command(naive, multi_node=False, rdma=False, image_cuda="12.4.1", host_driver="550.54.15")
multi = C.lint_command(naive, multi_node=True, rdma=True, image_cuda="12.4.1", host_driver="550.54.15")
print(f"single node: {single.count('critical')} critical ({', '.join(f.check for f in single.by_severity('critical'))})")
print(f"multi node:  {multi.count('critical')} critical ({', '.join(f.check for f in multi.by_severity('critical'))})")
print(f"/dev/shm 64 MiB vs need {C.nccl_shm_need_bytes(8) / 2**20:.0f} MiB; TCP fallback all_reduce {t_tcp / t_ib:.0f}x slower")

# %% [markdown]
# 单机就已经有 `/dev/shm` 的问题（8 卡需要约 1024 MiB，默认只有 64 MiB）；到了多机，又多出 memlock、RDMA 设备、网络命名空间三项，
# 其中缺 `/dev/infiniband` 不报错、只是让 all-reduce 退回 TCP socket、慢约 90 倍。「看到 GPU」和「能高效地多机通信」之间隔着四个参数。
#
# ### 误区二：「镜像大小无所谓，反正只拉一次」
#
# 每个节点只拉一次，但 512 个节点是同时拉的：

# %%
# NBVAL_CHECK_OUTPUT
for size in (5, 20, 40):
    t = C.pull_time_s(size, 512, 100, node_gbps=200)
    print(f"{size:2d} GB image, 512 nodes, 100 Gb/s registry: {t / 60:5.1f} min of 4096 idle GPUs "
          f"= {t / 3600 * 4096:6.0f} GPU-hours per job start")

# %% [markdown]
# 20 GB 的镜像让每次作业启动浪费约 932 GPU·小时；作业失败重启（第 27 章：万卡集群每天多次故障）时还要再付一次。
# 把镜像从 40 GB 瘦身到 5 GB，或者换成 P2P / 共享 `.sqsh`，都是数量级的收益。镜像大小不是存储问题，是**启动时间**和 **registry 可用性**问题。
#
# ### 误区三：「`--privileged` 最省事，反正是内部集群」
#
# 见第 3 节：`--privileged` 修好了 memlock 和 RDMA 设备，却修不好 `/dev/shm`（64 MiB），也不注入驱动库
# （默认运行时为 runc 时 gpu_access 仍是 critical；即使 `default-runtime` 是 nvidia，也只是隐式地给了全部 GPU），同时让容器里任何代码都能访问宿主机所有设备。省事的是写命令的人，不是排障的人。
# 把「最省事」的多机训练命令交给 linter，在两种默认运行时下各算一次，并把 `/dev/shm` 的缺口换算成倍数：

# %%
# NBVAL_CHECK_OUTPUT
lazy = shlex.split("docker run --privileged --network=host nvcr.io/nvidia/pytorch:24.05-py3 torchrun train.py")
for runtime in ("runc", "nvidia"):
    r = C.lint_command(lazy, host_driver="550.54.15", image_cuda="12.4.1", default_runtime=runtime)
    print(f"default runtime {runtime:<6s}: critical {[f.check for f in r.by_severity('critical')]}, "
          f"warning {[f.check for f in r.by_severity('warning')]}")
need_mib = C.nccl_shm_need_bytes(8) / 2**20
print(f"/dev/shm: 64 MiB given, {need_mib:.0f} MiB needed by 8 local ranks ({need_mib / 64:.0f}x short)")

# %% [markdown]
# 即使在「碰巧能跑」的 nvidia 默认运行时下，`/dev/shm` 仍差 16 倍——这正是 NCCL issue #342、#290 里那条 `Error while creating shared memory segment`
# 的来历。更隐蔽的是隔离：两个各要 4 张卡的作业如果都用 `--privileged` 起在同一台 8 卡服务器上，两边都看得到全部 8 张卡、
# 都从 `cuda:0` 开始用，结果是两个作业挤在前 4 张卡上互相抢显存，后 4 张卡空着；调度器以为资源分得好好的，监控上却是一半卡 0% 利用率。
# 生产环境只给需要的四样：`--gpus`（或 CDI 设备名）、`--device=/dev/infiniband`、`--ulimit memlock=-1`、`--ipc=host`（或足够大的 `--shm-size`）。
#
# ## 9. 练习
#
# 把答案填进 `answer_k`（数字即可，单位见题目），运行单元格查看判分；卡住时调用 `exercise("ch20.k").hint(1)`。
#
# **练习 1**：512 个节点同时从一个出口 100 Gb/s 的 registry 拉一个 20 GB 镜像（节点网卡 200 Gb/s），多少**分钟**后所有节点都拿到了镜像？

# %%
answer_1 = None
exercise("ch20.1").check(answer_1)

# %% [markdown]
# **练习 2**：同样的镜像和节点数，改用 Enroot：只导入一次，`.sqsh` 放在聚合读带宽 200 GB/s 的并行文件系统上。总共需要多少**秒**？

# %%
answer_2 = None
exercise("ch20.2").check(answer_2)

# %% [markdown]
# **练习 3**：8 个本地 rank、32 个 channel、`NCCL_BUFFSIZE` 4 MiB、每 channel 2 条 SHM 连接，NCCL 大约需要多少 **MiB** 的 `/dev/shm`？

# %%
answer_3 = None
exercise("ch20.3").check(answer_3)

# %% [markdown]
# **练习 4**：如果 GPU Operator 的 container-toolkit DaemonSet 一直不就绪，有多少个**其他**组件会（直接或间接）被卡住？

# %%
answer_4 = None
exercise("ch20.4").check(answer_4)

# %% [markdown]
# **练习 5（判断题）**：512 个节点都要一个 20 GB 的镜像：镜像仓库出口 100 Gb/s，节点网卡 200 Gb/s，并行文件系统 200 GB/s。'registry'、'p2p'、'shared_fs'（Enroot .sqsh）哪种分发方式最先让所有节点拿到数据？（只算传输）

# %%
answer_5 = None  # 'registry' / 'p2p' / 'shared_fs'
exercise("ch20.5").check(answer_5)

# %% [markdown]
# ## 10. 小结
#
# - 容器把用户态软件栈变成可验收、可回滚的镜像；驱动留在宿主机，由 NVIDIA Container Toolkit（或 Enroot hook、Apptainer `--nv`）注入。
# - 多机训练容器的四个必备项：`--ipc=host`（或足够大的 `--shm-size`）、`--ulimit memlock=-1`、`--device=/dev/infiniband`、`--network=host`；K8s 中对应 Memory emptyDir、`IPC_LOCK`、RDMA device plugin、hostNetwork/Multus。
# - 镜像 CUDA 版本受宿主机驱动约束（NVIDIA Table 2/3）：先定驱动分支，再选镜像。
# - GPU Operator 是一条依赖链：NFD → 驱动 → toolkit → validator → device plugin / GFD / DCGM exporter / MIG manager；排障沿链往上游找。
# - 拉取时间随节点数线性增长：千节点规模用 P2P 分发或共享文件系统上的 `.sqsh`/`.sif`，并控制镜像大小。
#
# 下一章把这些容器交给调度器：Slurm 的 GRES 与 Pyxis，K8s 的 device plugin 与配额。
#
# ## 参考资料
#
# - 课程种子材料：《大规模GPU集群部署核心概念速览》误区二（容器运行时配置 / GPU Operator 是部署环节之一）；《AI训练推理集群》课程导入（软件层：容器运行时 Docker+Enroot 或 Singularity；场景二：K8s + Triton Inference Server + TensorRT）。
# - NVIDIA Container Toolkit 文档：Installing the NVIDIA Container Toolkit（`nvidia-ctk runtime configure --runtime=docker`）、Running a Sample Workload、Support for Container Device Interface（v1.12.0 起支持 CDI；`nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`；v1.18.0 起 `nvidia-cdi-refresh` 服务在驱动安装/升级与开机时自动生成 `/var/run/cdi/nvidia.yaml`，该目录开机清空；MIG 重新划分仍需手动生成）。
# - NVIDIA/nvidia-container-toolkit issue #856：驱动或内核更新后必须重跑 `nvidia-ctk cdi generate`，容器才能找到对应的库。
# - NVIDIA 产品安全公告：NVIDIA Container Toolkit / GPU Operator 的 CVE-2024-0132（2024-09）与 CVE-2025-23266（2025-07）。修复版本与仓库记录一致：NVIDIA/nvidia-container-toolkit 标签 v1.16.2（2024-09-20）、v1.17.8（2025-05-28）；NVIDIA/gpu-operator 在 2024-09-24、2025-05-30 把自带 Toolkit 升到这两个版本。
# - NVIDIA/gpu-operator（commit a22dbf671f2e）：`deployments/gpu-operator/values.yaml` 的 `driver.rdma.enabled`（默认 false）、`driver.rdma.useHostMofed`；`assets/state-driver/0500_daemonset.yaml` 的 `nvidia-peermem-ctr` 容器。NVIDIA Network Operator 文档（RDMA 共享设备插件、Multus、二级网络）。
# - NVIDIA/enroot 文档 `doc/cmd/create.md`（把镜像展开到 `$ENROOT_DATA_PATH`）、`doc/cmd/start.md`（内核 ≥ 4.18 且装有 squashfuse、fuse-overlayfs 时可直接启动镜像）；NVIDIA/pyxis wiki「Setup」（`ENROOT_DATA_PATH` 建议放 tmpfs）。containerd stargz-snapshotter（eStargz）、AWS SOCI snapshotter、Nydus（懒拉取）。
# - Docker 文档：`docker run` 参考（`--shm-size` 默认 64MB、`--ipc`、`--ulimit`、`--device`、`--network`、`--privileged`）。
# - NVIDIA NCCL 用户指南：Environment Variables（`NCCL_BUFFSIZE` 默认 4 MiB、`NCCL_SHM_DISABLE`）；NVIDIA/nccl issues #342、#290（Docker 中 `/dev/shm` 不足导致 "Error while creating shared memory segment"）；NGC 容器文档（`--ipc=host` / `--shm-size`、`--ulimit memlock=-1 --ulimit stack=67108864`）。
# - NVIDIA/enroot 文档（`usage.md`：`docker://[USER@][REGISTRY#]IMAGE[:TAG]`、`enroot import/create/start`）；NVIDIA/pyxis README（`--container-image`、`--container-mounts`）。
# - Apptainer User Guide：GPU Support（`--nv`、`--nvccli`）、`--contain` / `--containall`。
# - NVIDIA CUDA Toolkit Release Notes：Table 2（次版本兼容最低驱动）、Table 3（各 Toolkit 版本最低驱动）；CUDA Compatibility 指南（forward compatibility、`cuda-compat`）。数据：`labutil/data/cuda_compat.toml`。
# - NVIDIA GPU Operator 文档：About the GPU Operator、Installing the NVIDIA GPU Operator（helm 命令、`kubectl get pods -n gpu-operator` 输出）；NVIDIA/gpu-operator 仓库 `assets/state-*` 的 init container（依赖顺序）。数据：`labutil/data/gpu_operator.toml`。
# - NVIDIA/gpu-operator 仓库（commit a22dbf671f2e，2026-08-21）：`deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml`（`ClusterPolicy` 的 CRD schema，课程据此校验 `manifests.cluster_policy()`，原样附于 `labutil/data/crds/`）。
# - kubernetes-validate（PyPI，1.37：自带 Kubernetes 1.x–1.37 的 OpenAPI schema，`--strict` 拒绝未知字段），课程测试 `tests/test_k8s_manifests.py` 用它离线校验本章的 Pod 清单。
# - Kubernetes 文档：Schedule GPUs（`nvidia.com/gpu`）、Volumes（emptyDir `medium: Memory`）、Security Context（capabilities）；Multus CNI；Mellanox k8s-rdma-shared-dev-plugin。
# - man 2 mlock / `RLIMIT_MEMLOCK`；rdma-core `ibv_reg_mr(3)`。
# - Kubernetes 文档：*Images*（`imagePullPolicy` 的默认值：`latest` 或无 tag 为 `Always`，否则 `IfNotPresent`；按 digest 引用镜像）；Docker 文档 `docker inspect`（`RepoDigests`）。
# - R. Thakur, R. Rabenseifner, W. Gropp, *Optimization of Collective Communication Operations in MPICH*, IJHPCA 19(1), 2005（流水线广播的 α-β 代价，P2P 分发模型）。
