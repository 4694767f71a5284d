"""Chapter 20 exercises: image pull storm, shared squashfs, NCCL /dev/shm need, GPU Operator dependencies."""

from .. import containers as C
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

register(Exercise(
    key="ch20.1",
    prompt="512 nodes pull a 20 GB image at the same time from one registry with 100 Gb/s of egress "
           "(node NICs 200 Gb/s). How many MINUTES until every node has it (transfer only)?",
    answer=lambda: C.pull_time_s(20, 512, 100, node_gbps=200) / 60,
    kind="by_hand",
    unit="min", rtol=0.02,
    hints=("registry 出口被所有节点共享：总共要发出 512 × 20 GB。",
           "T = N·S·8 / B_reg = 512 × 160 Gb / 100 Gb/s，再换算成分钟。"),
    solution_text="512 × 20 GB × 8 = 81,920 Gb；÷ 100 Gb/s = 819.2 s ≈ 13.7 min。单节点 200 Gb/s 网卡只需 0.8 s，"
                  "瓶颈完全在 registry 出口。",
))

register(Exercise(
    key="ch20.2",
    prompt="Same 20 GB image and 512 nodes, but with Enroot: import it ONCE into a .sqsh on a parallel filesystem "
           "that serves 200 GB/s aggregate, registry 100 Gb/s, node NICs 200 Gb/s. Total time in SECONDS until all "
           "nodes have read it?",
    answer=lambda: C.pull_time_s(20, 512, 100, method="shared_fs", node_gbps=200, fs_gbs=200),
    unit="s", rtol=0.02,
    params={"containers.pull_time_s": {"image_gb": 20, "n_nodes": 512, "registry_gbps": 100, "node_gbps": 200, "fs_gbs": 200}},
    hints=("两段：先由一个节点从 registry 拉一次（受 min(registry, 网卡) 限制），再由 512 个节点从共享文件系统读。",
           "第二段 = max(N·S / B_fs, S·8 / B_node)，注意 B_fs 的单位是 GB/s。"),
    solution_text="导入：160 Gb / 100 Gb/s = 1.6 s；读取：512 × 20 GB / 200 GB/s = 51.2 s（单节点 0.8 s 不是瓶颈）；"
                  "合计 52.8 s，比每个节点各自 enroot import 的 819.2 s 快约 15 倍，registry 也只发出 20 GB。",
))

register(Exercise(
    key="ch20.3",
    prompt="Estimate NCCL's /dev/shm need (MiB) on one node with 8 local ranks and 32 channels, NCCL_BUFFSIZE "
           "4 MiB and 2 SHM connections per channel (labutil.containers.nccl_shm_need_bytes).",
    answer=lambda: C.nccl_shm_need_bytes(8, 32) / 2**20,
    unit="MiB", rtol=0.02,
    hints=("need = 本地 rank 数 × channel 数 × 每 channel 连接数 × NCCL_BUFFSIZE。",
           "8 × 32 × 2 × 4 MiB。"),
    solution_text="8 × 32 × 2 × 4 MiB = 2048 MiB = 2 GiB：不仅 Docker 默认的 64 MiB 不够，连常见的 --shm-size=1g 也不够；"
                  "多 channel 的节点用 --ipc=host 最省心。",
))

register(Exercise(
    key="ch20.4",
    prompt="If the container-toolkit DaemonSet of the GPU Operator never becomes ready, how many OTHER operator "
           "components are blocked (transitively) waiting for it?",
    answer=lambda: float(len(C.missing_impact("container-toolkit")["blocked"])),
    unit="个", rtol=0.0, atol=0.1,
    hints=("看 startup_order()：谁直接依赖 container-toolkit？", "validator 依赖 toolkit，而 device plugin、GFD、"
           "DCGM exporter、MIG manager 都在等 validator 写出的 toolkit-ready。"),
    solution_text="operator-validator 直接等待它；device-plugin、gpu-feature-discovery、dcgm-exporter、mig-manager 又等待 "
                  "validator——共 5 个组件卡在 Init，节点上不会出现 nvidia.com/gpu 资源。",
))


def _why_ch20_5(option: str) -> str:
    """Why distribution ``option`` is slower: its transfer time against the fastest method's."""
    t = {m: float(C.pull_time_s(20, 512, 100, method=m, node_gbps=200, fs_gbs=200)) for m in C.PULL_METHODS}
    return (f"按模型 {option} 把 20 GB 送到 512 个节点要 {t[option]:,.1f} s，最快的方式只要 {min(t.values()):.1f} s"
            f"（{t[option] / min(t.values()):,.0f} 倍）")


register(Exercise(
    key="ch20.5",
    prompt=("Judgement: 512 nodes need a 20 GB image; registry egress 100 Gb/s, node NICs 200 Gb/s, parallel "
            "filesystem 200 GB/s. Which distribution gets the bytes to every node first: 'registry', 'p2p' or "
            "'shared_fs' (Enroot .sqsh)? (transfer time only)"),
    answer=lambda: min(C.PULL_METHODS, key=lambda m: float(C.pull_time_s(
        20, 512, 100, method=m, node_gbps=200, fs_gbs=200))),
    choices=tuple(C.PULL_METHODS),
    synonyms={"registry": ("docker pull", "镜像仓库"), "p2p": ("dragonfly", "kraken", "spegel", "P2P 分发"),
              "shared_fs": ("enroot", "sqsh", "squashfs", "共享文件系统")},
    kind="judgement",
    explain=_why_ch20_5,
    params={"containers.pull_time_s": {"image_gb": 20, "n_nodes": 512, "registry_gbps": 100, "node_gbps": 200, "fs_gbs": 200}},
    hints=("registry：512 份镜像都挤过同一个 100 Gb/s 出口。",
           "p2p：节点之间流水线转发，总时间约等于一份镜像的传输时间加上树深度 × 一个分块。"),
    solution_text=("registry ≈ 819 s，shared_fs ≈ 53 s（导入一次 1.6 s，再从 200 GB/s 文件系统读 512 份），"
                   "p2p ≈ 1.6 s：选 p2p。注意这只是传输时间，解压 20 GB 的层还要几分钟，每个节点都要做。"),
))
