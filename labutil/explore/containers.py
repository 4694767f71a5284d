"""Explorers and figures for containers and the GPU Operator (ch20).

- ``pull_explorer()``: image size, nodes, registry / node / filesystem bandwidth, cached fraction ->
  cluster-wide pull time of a central registry vs P2P vs an Enroot squashfs on a shared filesystem.
- ``lint_explorer()``: choose a (flawed) launch command -> the linter's verdict per check.
- ``pull_time_figure()``: pull time vs number of nodes for the three methods.
- ``operator_order_figure()``: the GPU Operator components by readiness level, with dependency arrows.
- ``shm_need_figure()``: NCCL SHM need vs local ranks against Docker's 64 MiB default and the 1 GiB floor.
Axis labels in English with units. Explorer artists are created once and only updated.
"""

from __future__ import annotations

import html
import shlex

import numpy as np

from .. import containers as C
from ..plotting import PALETTE, figure_cache, new_figure
from ..units import format_duration_s, time_unit
from ..widgets import Explorer, choice_slider, dropdown, int_slider, pow2_slider, slider

__all__ = ["NODES_AXIS", "METHOD_LABELS", "METHOD_LABELS_ZH", "METHOD_COLORS", "LINT_CASES", "SEV_COLOR",
           "pull_model", "pull_explorer", "pull_time_figure", "IMAGE_CUDA_CHOICES", "lint_model", "lint_explorer",
           "operator_order_figure", "shm_need_figure"]

NODES_AXIS = 2 ** np.arange(0, 13)         # 1 .. 4096 nodes
METHOD_LABELS = {"registry": "central registry (every node pulls)",
                 "p2p": "P2P distribution (registry serves once)",
                 "shared_fs": "Enroot .sqsh imported once on shared FS"}
METHOD_LABELS_ZH = {"registry": "中心 registry（每个节点各拉一份）",
                    "p2p": "P2P 分发（registry 只发一份）",
                    "shared_fs": "共享文件系统上的 Enroot .sqsh（只导入一次）"}
METHOD_COLORS = {"registry": PALETTE[3], "p2p": PALETTE[2], "shared_fs": PALETTE[0]}

# Named launch commands for the lint demo (strings split with shlex; nothing is executed).
LINT_CASES = {
    "docker：只加了 --gpus": "docker run --gpus all -it --rm nvcr.io/nvidia/pytorch:24.05-py3 torchrun train.py",
    "docker：多机完整配置": ("docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 "
                      "--network=host --device=/dev/infiniband nvcr.io/nvidia/pytorch:24.05-py3 torchrun train.py"),
    "docker：--privileged 代替 --gpus": "docker run --privileged --network=host nvidia/cuda:12.4.1-devel-ubuntu22.04 nvidia-smi",
    "docker：--shm-size=256m": ("docker run --gpus all --shm-size=256m --ulimit memlock=-1 --network=host "
                               "--device=/dev/infiniband nvcr.io/nvidia/pytorch:24.05-py3 torchrun train.py"),
    "enroot：registry 没用 #": "enroot import docker://nvcr.io/nvidia/pytorch:24.05-py3",
    "pyxis：srun 完整": "srun -N 2 --gpus-per-node=8 --container-image=nvcr.io#nvidia/pytorch:24.05-py3 torchrun train.py",
    "apptainer：忘了 --nv": "apptainer exec pytorch_24.05.sif torchrun train.py",
}
SEV_COLOR = {"pass": PALETTE[2], "warning": PALETTE[1], "critical": PALETTE[3], "n/a": "#cccccc"}


# ------------------------------------------------------------------------------------------ pull
def pull_model(image_gb=20.0, n_nodes=512, registry_gbps=100, node_gbps=200, fs_gbs=200.0,
               cache_hit_fraction=0.0) -> dict:
    """Pull time (s) of each method at the chosen size and along NODES_AXIS (vectorised)."""
    kw = dict(node_gbps=node_gbps, cache_hit_fraction=cache_hit_fraction, fs_gbs=fs_gbs)
    out = {"n_nodes": n_nodes, "nodes_axis": NODES_AXIS}
    for m in C.PULL_METHODS:
        out[m] = C.pull_time_s(image_gb, n_nodes, registry_gbps, method=m, **kw)
        out[m + "_curve"] = C.pull_time_s(image_gb, NODES_AXIS, registry_gbps, method=m, **kw)
        out[m + "_egress_gb"] = C.registry_egress_gb(image_gb, n_nodes, method=m, cache_hit_fraction=cache_hit_fraction)
    return out


def _draw_pull(fig, r, values, cache=None):
    ax = fig.axes[0]
    cache, key = (figure_cache(fig) if cache is None else cache), "artists"
    floor = 0.1
    if cache.get(key) is None:
        art = {}
        for m in C.PULL_METHODS:
            art[m] = ax.plot(r["nodes_axis"], np.maximum(r[m + "_curve"], floor), "o-", ms=3, lw=2,
                             color=METHOD_COLORS[m], label=METHOD_LABELS[m])[0]
            art[m + "_pt"] = ax.plot([r["n_nodes"]], [max(r[m], floor)], "s", ms=8, color=METHOD_COLORS[m])[0]
        art["vline"] = ax.axvline(r["n_nodes"], color="k", lw=1, ls=":")
        art["cached"] = ax.text(0.5, 0.5, "every node has the image cached: nothing to transfer",
                                transform=ax.transAxes, ha="center", va="center", fontsize=10,
                                bbox={"facecolor": "white", "edgecolor": "0.6"}, visible=False)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks([1, 4, 16, 64, 256, 1024, 4096], ["1", "4", "16", "64", "256", "1024", "4096"])
        ax.minorticks_off()
        ax.set_xlabel("nodes pulling the image")
        ax.set_ylabel("all-nodes pull time (s)")
        ax.set_title("Cluster-wide image pull time (transfer only; squares: chosen node count)")
        ax.legend(loc="upper left", fontsize=8)
        cache[key] = art
        first = True
    else:
        first = False
    art = cache[key]
    hi = 1.0
    for m in C.PULL_METHODS:
        y = np.maximum(r[m + "_curve"], floor)
        art[m].set_ydata(y)
        art[m + "_pt"].set_data([r["n_nodes"]], [max(r[m], floor)])
        hi = max(hi, float(y.max()))
    art["vline"].set_xdata([r["n_nodes"], r["n_nodes"]])
    art["cached"].set_visible(all(r[m] == 0 for m in C.PULL_METHODS))
    ax.set_ylim(floor * 0.8, hi * 3)
    if first:  # solve the layout once, with the y range (and its widest label, 10⁻¹) already set
        fig.draw_without_rendering()
        fig.set_layout_engine("none")


def _pull_summary(r, values) -> str:
    head = f"{values['n_nodes']} 个节点拉取 {values['image_gb']:.0f} GB 镜像"
    if all(r[m] == 0 for m in C.PULL_METHODS):
        return f"{head}：所有节点都已缓存这个镜像，三种方式都不需要传输（registry 出口 0 GB）。"
    unit, _ = time_unit(max(r[m] for m in C.PULL_METHODS))
    parts = [f"{METHOD_LABELS_ZH[m]}：<b>{format_duration_s(r[m], unit if r[m] >= 60 else 's')}</b>"
             f"（registry 出口 {r[m + '_egress_gb']:,.0f} GB）" for m in C.PULL_METHODS]
    return f"{head}（只算传输，解压另计）：<br>" + "<br>".join(parts)


def pull_explorer() -> Explorer:
    controls = {
        "image_gb": slider("镜像大小 (GB)", 20.0, 1.0, 60.0, 1.0, fmt=".0f"),
        "n_nodes": pow2_slider("节点数", 512, 1, 4096),
        "registry_gbps": choice_slider("registry 出口 (Gb/s)", (10, 25, 40, 100, 200, 400, 800), 100),
        "node_gbps": choice_slider("节点拉取网卡 (Gb/s)", (10, 25, 100, 200, 400), 200),
        "fs_gbs": choice_slider("共享文件系统聚合读 (GB/s)", (10, 50, 100, 200, 500, 1000), 200),
        "cache_hit_fraction": slider("已缓存该镜像的节点比例", 0.0, 0.0, 1.0, 0.05, fmt=".2f"),
    }
    return Explorer(controls, lambda **v: pull_model(**v), _draw_pull, summary=_pull_summary,
                    title="镜像拉取风暴：中心 registry vs P2P vs 共享文件系统", figsize=(8.0, 4.4))


def pull_time_figure(image_gb: float = 20.0, registry_gbps: float = 100.0, node_gbps: float = 200.0,
                     fs_gbs: float = 200.0):
    """Pull time vs nodes for the three methods (static figure for the chapter)."""
    fig, ax = new_figure(figsize=(8.0, 4.4))
    r = pull_model(image_gb, 512, registry_gbps, node_gbps, fs_gbs)
    for m in C.PULL_METHODS:
        ax.plot(NODES_AXIS, r[m + "_curve"] / 60, "o-", ms=3, lw=2, color=METHOD_COLORS[m], label=METHOD_LABELS[m])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks([1, 4, 16, 64, 256, 1024, 4096], ["1", "4", "16", "64", "256", "1024", "4096"])
    ax.minorticks_off()
    ax.set_xlabel("nodes pulling the image")
    ax.set_ylabel("all-nodes pull time (min)")
    ax.set_title(f"{image_gb:.0f} GB image, registry {registry_gbps:.0f} Gb/s, node NIC {node_gbps:.0f} Gb/s")
    ax.legend(loc="upper left", fontsize=8)
    return fig


# ------------------------------------------------------------------------------------------ lint demo
#: CUDA_VERSION as `docker inspect` shows it for the image (an NGC image's tag does not carry it); "" = not read.
IMAGE_CUDA_CHOICES = {"没读（未知）": "", "12.4": "12.4", "12.8": "12.8", "13.0": "13.0"}


def lint_model(case: str = "docker：只加了 --gpus", n_local_ranks: int = 8, multi_node: str = "多机 RDMA",
               host_driver: str = "550.54.15", image_cuda: str = "12.4") -> dict:
    if case not in LINT_CASES:
        raise KeyError(f"unknown case {case!r}; known: {list(LINT_CASES)}")
    if image_cuda not in IMAGE_CUDA_CHOICES.values():
        raise ValueError(f"image_cuda must be one of {list(IMAGE_CUDA_CHOICES.values())}; got {image_cuda!r}")
    argv = shlex.split(LINT_CASES[case])
    multi = multi_node == "多机 RDMA"
    rep = C.lint_command(argv, host_driver=host_driver, image_cuda=image_cuda or None, multi_node=multi, rdma=multi,
                         n_local_ranks=n_local_ranks)
    return {"argv": argv, "report": rep, "status": C.check_status(rep)}


def _draw_lint(fig, r, values, cache=None):
    ax = fig.axes[0]
    cache, key = (figure_cache(fig) if cache is None else cache), "artists"
    checks = list(C.CHECKS)
    if cache.get(key) is None:
        bars = ax.barh(range(len(checks)), [1] * len(checks), color="#cccccc", edgecolor="white")
        ax.set_yticks(range(len(checks)), checks)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xticks([])
        ax.set_xlabel("verdict per check (green pass, orange warning, red critical)")
        ax.set_title("Container launch lint")
        texts = [ax.text(0.015, i, "", ha="left", va="center", fontsize=8, color="white", fontweight="bold")
                 for i in range(len(checks))]
        fig.draw_without_rendering()
        fig.set_layout_engine("none")
        cache[key] = (bars, texts)
    bars, texts = cache[key]
    notes = {f.check: f for f in r["report"].findings}
    for b, t, c in zip(bars, texts, checks):
        st = r["status"][c]
        b.set_color(SEV_COLOR[st])
        f = notes.get(c)
        # The verdict and what it rests on (the finding's first clause), so a changed number shows.
        t.set_text(st if f is None else f"{st if f.severity != 'info' else 'info'}: {_first_clause(f.message)}")


def _first_clause(message: str, limit: int = 72) -> str:
    head = message.split(":")[0].split(";")[0].strip()
    return head if len(head) <= limit else head[:limit - 1] + "…"


def _lint_summary(r, values) -> str:
    rep = r["report"]
    rows = "".join(f"<tr><td>{html.escape(f.severity)}</td><td>{html.escape(f.check)}</td>"
                   f"<td>{html.escape(f.message)}</td></tr>" for f in rep.findings if f.severity != "info")
    cmd = html.escape(shlex.join(r["argv"]))
    return (f"<code>{cmd}</code><br><b>{rep.status}</b>: {rep.count('critical')} critical, "
            f"{rep.count('warning')} warning" + (f"<table>{rows}</table>" if rows else ""))


def lint_explorer() -> Explorer:
    controls = {
        "case": dropdown("启动命令", tuple(LINT_CASES), "docker：只加了 --gpus"),
        "n_local_ranks": int_slider("每节点 rank 数", 8, 1, 8),
        "multi_node": dropdown("作业类型", ("多机 RDMA", "单机"), "多机 RDMA"),
        "host_driver": dropdown("宿主机驱动", ("535.104.05", "550.54.15", "570.124.06"), "550.54.15"),
        "image_cuda": dropdown("镜像 CUDA_VERSION", IMAGE_CUDA_CHOICES, "12.4"),
    }
    return Explorer(controls, lambda **v: lint_model(**v), _draw_lint, summary=_lint_summary,
                    title="容器启动命令体检", figsize=(7.0, 3.6))


# ------------------------------------------------------------------------------------------ operator / shm
def operator_order_figure(disabled=()):
    """GPU Operator components placed by readiness level (left to right), arrows = depends_on."""
    levels = C.startup_order(disabled=disabled)
    comps = {c["name"]: c for c in C.operator_components()}
    fig, ax = new_figure(figsize=(9.0, 4.2))
    pos = {}
    for x, lvl in enumerate(levels):
        for k, name in enumerate(lvl):
            pos[name] = (x, (len(lvl) - 1) / 2 - k)
    boxes = {}
    for name, (x, y) in pos.items():
        color = PALETTE[0] if not comps[name]["optional"] else PALETTE[2]
        boxes[name] = ax.text(x, y, name, ha="center", va="center", fontsize=8,
                              bbox=dict(boxstyle="round,pad=0.3", fc="white", ec=color, lw=1.5), zorder=3)
    for name in pos:
        for d in comps[name]["depends_on"]:
            if d in boxes:
                span = pos[name][0] - pos[d][0]
                ax.annotate("", xy=(0.0, 0.5), xycoords=boxes[name], xytext=(1.0, 0.5), textcoords=boxes[d],
                            arrowprops=dict(arrowstyle="->", color="#888888", lw=1, shrinkA=4, shrinkB=4,
                                            connectionstyle=f"arc3,rad={0.3 if span > 1 else 0.0}"), zorder=1)
    ax.set_xlim(-0.6, len(levels) - 0.4)
    ymax = max(len(lvl) for lvl in levels) / 2 + 0.2
    ax.set_ylim(-ymax, ymax)
    ax.set_xticks(range(len(levels)), [f"level {i}" for i in range(len(levels))])
    ax.set_yticks([])
    ax.set_xlabel("readiness order (blue: required, green: optional)")
    ax.set_title("GPU Operator: who waits for whom")
    for s in ("left", "right", "top"):
        ax.spines[s].set_visible(False)
    return fig


def shm_need_figure(n_channels=(8, 16, 32)):
    """NCCL SHM need (MiB) vs local ranks, against Docker's 64 MiB default and the 1 GiB floor."""
    fig, ax = new_figure(figsize=(8.0, 4.2))
    ranks = np.arange(1, 9)
    for i, ch in enumerate(n_channels):
        ax.plot(ranks, C.nccl_shm_need_bytes(ranks, ch) / 2**20, "o-", ms=4, color=PALETTE[i],
                label=f"{ch} channels x 4 MiB NCCL_BUFFSIZE")
    ax.axhline(C.DOCKER_DEFAULT_SHM_BYTES / 2**20, color=PALETTE[3], ls="--", label="Docker default /dev/shm 64 MiB")
    ax.axhline(C.SHM_FLOOR_BYTES / 2**20, color="k", ls=":", label="--shm-size=1g")
    ax.set_xlabel("local ranks (GPUs) per node")
    ax.set_ylabel("NCCL /dev/shm need (MiB)")
    ax.set_title("Why 64 MB /dev/shm breaks NCCL in Docker\n"
                 "(worst case: all intra-node traffic over SHM, i.e. no GPU P2P)", fontsize=10)
    ax.set_ylim(0, 2300)
    ax.legend(loc="upper left", fontsize=8)
    return fig
