"""Explorers and figures for ch16 存储架构, ch17 检查点 and ch18 数据加载流水线.

Explorers reuse their matplotlib artists between updates (bar heights, texts, limits) so that an
update stays well under 50 ms; figure builders return a fresh ``Figure``. Axis labels in English
with units (CJK fonts are not guaranteed).
"""

from __future__ import annotations

import numpy as np

from .. import dataloading as dl
from .. import reliability, storage
from .. import widgets as w
from ..plotting import PALETTE, new_figure, reset_axes
from ..widgets import Explorer

__all__ = ["PARAMS_B", "GBS_STEPS", "checkpoint_explorer", "FILE_OPTIONS", "pipeline_explorer", "tier_explorer",
           "io_size_figure", "interference_figure", "checkpoint_size_figure", "checkpoint_write_figure",
           "checkpoint_overhead_figure", "cores_per_gpu_figure", "small_file_figure"]

PARAMS_B = [1, 3, 7, 13, 34, 70, 175, 405, 1000]
GBS_STEPS = [5, 10, 20, 50, 100, 200, 500, 1000, 2000]


def _state(fig) -> dict:
    if not hasattr(fig, "_lab_state"):
        fig._lab_state = {}
    return fig._lab_state


# =============================================================================================
# ch17: checkpoint explorer
# =============================================================================================
_CKPT_PARTS = ("fp32 master / fp32 weights", "bf16/fp16 weights", "optimizer states")


def _checkpoint_model(params_b, optimizer, precision, write_gbs, n_writers, per_writer_gbs, async_save,
                      interval_min):
    params = float(params_b) * 1e9
    parts = storage.checkpoint_breakdown(params, optimizer, precision)
    fp32_run = precision == "fp32"  # fp32 training has no 16-bit copy: its weights are the first bar
    per = {
        _CKPT_PARTS[0]: parts.get("fp32 master weights", parts.get("fp32 weights", parts.get("weights", 0.0))
                                  if fp32_run else 0.0),
        _CKPT_PARTS[1]: 0.0 if fp32_run else parts.get(f"{precision} weights", parts.get("weights", 0.0)),
        _CKPT_PARTS[2]: parts.get("optimizer states", 0.0),
    }
    size_gb = storage.checkpoint_gb(params, optimizer, precision)
    save = storage.checkpoint_save(size_gb, write_gbs, n_writers, per_writer_gbs, async_save=async_save)
    interval_s = float(interval_min) * 60.0
    return {"parts_gb": {k: v * params / 1e9 for k, v in per.items()}, "size_gb": size_gb, "save": save,
            "interval_s": interval_s, "overhead": save.overhead_fraction(interval_s),
            "bytes_per_param": storage.checkpoint_bytes_per_param(optimizer, precision),
            "effective_write_gbs": storage.effective_write_gbs(write_gbs, n_writers, per_writer_gbs)}


_OPT_LABELS = {"adam": "Adam m+v", "adamw": "AdamW m+v", "sgd": "SGD momentum", "none": "no optimizer"}


def _checkpoint_ticks(optimizer, precision) -> list[str]:
    """Bar names that follow the chosen optimizer and precision (what each bar holds)."""
    return ["fp32 weights" if precision == "fp32" else "fp32 master",
            "no 16-bit copy" if precision == "fp32" else f"{precision} weights", _OPT_LABELS[optimizer]]


def _checkpoint_draw(fig, res, values):
    ax1, ax2 = fig.axes[:2]
    st = _state(fig)
    parts = list(res["parts_gb"].values())
    times = [res["save"].write_s, res["save"].blocking_s, res["save"].background_s]
    if "bars1" not in st:
        reset_axes(ax1)
        reset_axes(ax2)
        st["bars1"] = ax1.bar(range(3), parts, color=PALETTE[:3])
        ax1.set_ylabel("Checkpoint size (GB)")
        st["bars2"] = ax2.bar(range(3), times, color=[PALETTE[7], PALETTE[3], PALETTE[2]])
        ax2.set_xticks(range(3), ["FS write", "blocking", "background"])
        ax2.set_ylabel("Time per checkpoint (s)")
        st["t1"] = ax1.set_title("")
        st["t2"] = ax2.set_title("")
        st["tlab"] = [ax2.text(i, 0, "", ha="center", va="bottom", fontsize=8) for i in range(3)]
    for b, v in zip(st["bars1"], parts):
        b.set_height(v)
    ticks = _checkpoint_ticks(values["optimizer"], values["precision"])
    if st.get("ticks") != ticks:  # the bar names follow the optimizer and the precision
        ax1.set_xticks(range(3), ticks)
        st["ticks"] = ticks
    for b, v in zip(st["bars2"], times):
        b.set_height(v)
    ax1.set_ylim(0, max(parts) * 1.15 or 1.0)
    ax2.set_ylim(0, max(times) * 1.2 or 1.0)
    bg_none = not res["save"].async_save
    for i, (lab, v) in enumerate(zip(st["tlab"], times)):  # every bar says its value; an empty bar says why
        lab.set_position((i, v))
        lab.set_text("0 s (sync: none)" if i == 2 and bg_none else f"{v:,.3g} s")
    st["t1"].set_text(f"Total {res['size_gb']:,.0f} GB ({res['bytes_per_param']:g} B/param)")
    st["t2"].set_text(f"Overhead at {res['interval_s'] / 60:.0f} min interval: {100 * res['overhead']:.2f} %")


def _checkpoint_summary(res, values):
    s = res["save"]
    mode = "异步" if s.async_save else "同步"
    bg = f"后台写入 {s.background_s:,.1f} s" if s.async_save else "没有后台写入（训练等到写完）"
    return (f"检查点 <b>{res['size_gb']:,.0f} GB</b>；{mode}保存：训练阻塞 <b>{s.blocking_s:,.1f} s</b>，"
            f"{bg}；每 {res['interval_s'] / 60:.0f} 分钟一次时损失 "
            f"<b>{100 * res['overhead']:.2f} %</b> 的训练时间。<br>"
            f"<span style='color:#555'>{_size_note(res, values)}<br>{_write_note(res, values)}</span>")


def _size_note(res, v) -> str:
    """Bytes per parameter, part by part; a short remark only where the choice changes nothing
    (AdamW vs Adam, fp16 vs bf16): the why is in ch17 §1, not repeated on every state."""
    parts = " + ".join(f"{k} {g / (float(v['params_b']) * 1e9) * 1e9:g}" for k, g in
                       zip(_checkpoint_ticks(v["optimizer"], v["precision"]), res["parts_gb"].values()) if g > 0)
    note = f"每参数 {res['bytes_per_param']:g} B（{parts}）"
    if v["optimizer"] == "adamw":
        note += "；AdamW 与 Adam 存同样的 m、v，一样大"
    if v["precision"] == "fp16":
        note += "；fp16 与 bf16 每个权重都是 2 B，一样大"
    return note + "。"


def _rate(x: float) -> str:
    """A GB/s figure for prose: thousands separated above 100 (never 1.024e+05), 3 significant digits below."""
    x = float(x)
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _write_note(res, v) -> str:
    """Which limit sets the write rate: the file system's aggregate bandwidth or the writers."""
    fs, n, pw = v["write_gbs"], v["n_writers"], v["per_writer_gbs"]
    writers = n * pw
    head = (f"写入带宽 = min(文件系统聚合 {fs:,g} GB/s，{n:,} 个写入者 × {pw:g} GB/s = {_rate(writers)} GB/s) "
            f"= {_rate(res['effective_write_gbs'])} GB/s → ")
    if writers >= fs:
        return head + (f"<b>瓶颈在存储聚合带宽 {fs:g} GB/s</b>，写入者数量和单写入者上限不再起作用"
                       f"（写入者合计低于 {fs:g} GB/s 时才由它们决定）。")
    return head + f"<b>瓶颈在写入者</b>：增加写入者或提高单写入者带宽还能更快，直到 {fs:g} GB/s。"


def checkpoint_explorer() -> Explorer:
    """ch17: model size, optimizer/precision, FS bandwidth, writers, async -> size, blocking time, overhead."""
    controls = {
        "params_b": w.choice_slider("参数量 (B)", PARAMS_B, 70),
        "optimizer": w.dropdown("优化器", list(storage.OPTIMIZERS), "adam"),
        "precision": w.dropdown("训练精度", list(storage.PRECISIONS), "bf16"),
        "write_gbs": w.choice_slider("文件系统写带宽 GB/s", GBS_STEPS, 100),
        "n_writers": w.pow2_slider("并行写入者数", 64, 1, 4096),
        "per_writer_gbs": w.slider("单写入者上限 GB/s", 2.0, 0.5, 25.0, 0.5),
        "async_save": w.toggle("异步检查点 (async)", False),
        "interval_min": w.slider("保存间隔 (min)", 30.0, 5.0, 240.0, 5.0),
    }
    return Explorer(controls, _checkpoint_model, _checkpoint_draw, summary=_checkpoint_summary,
                    title="检查点大小与写入时间", figsize=(9.0, 3.8), ncols=2)


# =============================================================================================
# ch18: data-pipeline explorer
# =============================================================================================
#: Sample sizes offered; the default is the mean ImageNet JPEG the chapter uses (138 GB / 1,281,167 images).
IMAGENET_KB = dl.IMAGENET_MEAN_JPEG_BYTES / 1e3
SAMPLE_KB_OPTIONS = [("4", 4.0), ("16", 16.0), ("64", 64.0), ("107.7 (ImageNet)", IMAGENET_KB), ("256", 256.0),
                     ("1024", 1024.0), ("4096", 4096.0)]
FILE_OPTIONS = [("1 file per sample", 0.0), ("1 MB shards", 1e6), ("64 MB shards", 64e6), ("1 GB shards", 1e9)]


def _pipeline_model(gpu_samples_per_s, sample_kb, file_bytes, cpu_cores_per_gpu, decode_per_core,
                    read_gbs_per_gpu, iops_per_gpu):
    sb = float(sample_kb) * 1e3
    return dl.pipeline_throughput(gpu_samples_per_s, sb, cpu_cores_per_gpu=cpu_cores_per_gpu,
                                  decode_samples_per_s_per_core=decode_per_core, read_gbs_per_gpu=read_gbs_per_gpu,
                                  iops_per_gpu=iops_per_gpu, file_bytes=(file_bytes or None),
                                  decoded_sample_bytes=dl.DECODED_224_BYTES)


def _pipeline_draw(fig, res, values):
    ax = fig.axes[0]
    st = _state(fig)
    vals = np.array(res.stage_values())
    shown = np.clip(vals, 1.0, 1e9)
    if "bars" not in st:
        reset_axes(ax)
        st["bars"] = ax.barh(range(len(dl.STAGES)), shown, color=PALETTE[0])
        ax.set_yticks(range(len(dl.STAGES)), [dl.STAGE_LABELS[s] for s in dl.STAGES])
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("Stage capacity (samples/s per GPU, log scale)")
        st["line"] = ax.axvline(res.demand_samples_per_s, color="k", ls="--", lw=1,
                                label="GPU demand (what the GPU could consume)")
        ax.legend(loc="lower right", fontsize=8)
        st["title"] = ax.set_title("")
        # white box: the demand line often runs through a label
        st["labels"] = [ax.text(0, i, "", va="center", ha="left", fontsize=8,
                                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85))
                        for i in range(len(dl.STAGES))]
    for i, (b, v, s) in enumerate(zip(st["bars"], shown, dl.STAGES)):
        b.set_width(v)
        b.set_color(PALETTE[3] if s == res.bottleneck else PALETTE[0])
        st["labels"][i].set_position((v * 1.08, i))
        st["labels"][i].set_text(f"{vals[i]:,.0f}")
        st["labels"][i].set_color(PALETTE[3] if s == res.bottleneck else "black")  # a 0-wide red bar stays visible
    st["line"].set_xdata([res.demand_samples_per_s] * 2)
    ax.set_xlim(max(1.0, shown.min() / 3), shown.max() * 20)
    st["title"].set_text(f"Bottleneck: {dl.STAGE_LABELS[res.bottleneck]} -> "
                         f"{res.throughput_samples_per_s:,.0f} samples/s, GPU busy {100 * res.gpu_utilization:.0f} %")


def _pipeline_summary(res, values):
    return (f"瓶颈阶段：<b>{dl.STAGE_LABELS[res.bottleneck]}</b>；实际 {res.throughput_samples_per_s:,.0f} 样本/s，"
            f"GPU 利用 <b>{100 * res.gpu_utilization:.0f} %</b>；按此解码成本每张 GPU 需要 "
            f"<b>{res.cores_needed_per_gpu:.1f}</b> 个 CPU 核。虚线 = GPU 能消化的速率。"
            + ("（每卡的核全部留给了训练进程，没有核做解码：解码能力为 0。）"
               if res.capacities["cpu_decode"] == 0 else ""))


def pipeline_explorer() -> Explorer:
    """ch18: samples/s target, sample and file size, CPU cores per GPU, decode cost -> bottleneck stage."""
    controls = {
        "gpu_samples_per_s": w.choice_slider("GPU 需求 样本/s", [100, 250, 500, 1000, 2470, 5000, 10000], 2470),
        "sample_kb": w.choice_slider("样本大小 kB", SAMPLE_KB_OPTIONS, IMAGENET_KB),
        "file_bytes": w.choice_slider("文件组织", FILE_OPTIONS, 0.0),
        "cpu_cores_per_gpu": w.int_slider("每 GPU CPU 核数", 16, 1, 64),
        "decode_per_core": w.choice_slider("单核解码 样本/s", [50, 100, 150, 300, 1000, 10000, 100000], 150),
        "read_gbs_per_gpu": w.choice_slider("每 GPU 读带宽 GB/s", [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0], 1.0),
        "iops_per_gpu": w.choice_slider("每 GPU 读 IOPS", [500, 1000, 2000, 5000, 20000, 100000, 1000000], 20000),
    }
    return Explorer(controls, _pipeline_model, _pipeline_draw, summary=_pipeline_summary,
                    title="数据加载流水线：哪一级是瓶颈", figsize=(8.5, 3.6))


# =============================================================================================
# ch16: tier planner explorer
# =============================================================================================
def _tb(x: float) -> str:
    """Capacity label: '7.35 TB', '300 TB', '3.14 PB' (never '3e+03 TB')."""
    x = float(x)
    if x >= 1000:
        return f"{x / 1000:.3g} PB"
    return f"{x:,.0f} TB" if x >= 100 else f"{x:.3g} TB"


def _tier_model(dataset_tb, params_b, read_gbs, write_gbs, checkpoints_kept, hot_server, checkpoint_server):
    ckpt_tb = storage.checkpoint_gb(float(params_b) * 1e9) / 1e3
    return storage.plan_tiers(dataset_tb, ckpt_tb, read_gbs, write_gbs, checkpoints_kept=checkpoints_kept,
                              hot_server=hot_server, checkpoint_server=checkpoint_server)


def _tier_draw(fig, plan, values):
    ax1, ax2 = fig.axes[:2]
    st = _state(fig)
    cap = [t.servers_for_capacity for t in plan.tiers]
    bw = [t.servers_for_bandwidth for t in plan.tiers]
    need = [t.bandwidth_needed_gbs for t in plan.tiers]
    prov = [t.provided_gbs for t in plan.tiers]
    x = np.arange(3)
    if "b1" not in st:
        reset_axes(ax1)
        reset_axes(ax2)
        names = [t.name for t in plan.tiers]
        st["b1"] = ax1.bar(x - 0.2, cap, 0.4, color=PALETTE[0], label="for capacity")
        st["b2"] = ax1.bar(x + 0.2, bw, 0.4, color=PALETTE[1], label="for bandwidth")
        ax1.set_xticks(x, names)
        ax1.set_ylabel("Storage servers needed")
        ax1.legend(loc="upper right")
        st["b3"] = ax2.bar(x - 0.2, need, 0.4, color=PALETTE[3], label="needed")
        st["b4"] = ax2.bar(x + 0.2, prov, 0.4, color=PALETTE[2], label="provided")
        ax2.set_xticks(x, names)
        ax2.set_yscale("log")
        ax2.set_ylabel("Bandwidth (GB/s, log scale)")
        ax2.legend(loc="upper right")
        st["title"] = fig.suptitle("", fontsize=10)  # over both panels
        st["cap_tb"] = [ax1.text(xi - 0.2, 0, "", ha="center", va="bottom", fontsize=8) for xi in x]
    for lab, xi, n, t in zip(st["cap_tb"], x, cap, plan.tiers):  # what each capacity bar has to hold
        lab.set_position((xi - 0.2, n))
        lab.set_text(_tb(t.capacity_needed_tb))
    for bars, vals in ((st["b1"], cap), (st["b2"], bw), (st["b3"], need), (st["b4"], prov)):
        for b, v in zip(bars, vals):
            b.set_height(v)
    ax1.set_ylim(0, max(cap + bw) * 1.3)
    ax2.set_ylim(min(need + prov) / 2, max(need + prov) * 4)
    st["title"].set_text(f"Total storage servers: {sum(t.servers for t in plan.tiers)} "
                         f"({', '.join(f'{t.name} {t.servers}' for t in plan.tiers)})")


def _tier_summary(plan, values):
    parts = [f"{t.name}: <b>{t.servers}</b> 台 {t.server}（受{'带宽' if t.limited_by == 'bandwidth' else '容量'}约束）"
             for t in plan.tiers]
    fit = "可以" if plan.hot_fits_local_nvme else "放不下"
    return ("；".join(parts) + f"。热数据{fit}完整缓存在单台计算节点本地 NVMe（{plan.local_nvme_tb_per_node:.1f} TB）。"
            f"<br><span style='color:#555'>{_checkpoint_tier_note(plan, values)}</span>")


def _checkpoint_tier_note(plan, v) -> str:
    """What the checkpoint tier holds, and whether model size / checkpoints kept can change its server count."""
    t = plan.tier("checkpoint")
    ckpt_tb = storage.checkpoint_gb(float(v["params_b"]) * 1e9) / 1e3
    per_server_tb = t.usable_tb / t.servers
    head = (f"检查点层要存 {v['checkpoints_kept']} 个 × {_tb(ckpt_tb)}（{v['params_b']}B 参数，14 B/参数）"
            f"= {_tb(t.capacity_needed_tb)}：按容量 {t.servers_for_capacity} 台（每台可用 {per_server_tb:,.0f} TB，"
            f"最多填到 80 %），按写带宽 {v['write_gbs']} GB/s 要 {t.servers_for_bandwidth} 台")
    if t.limited_by == "bandwidth":
        return head + "——<b>由带宽决定</b>，模型大小和保留个数要大到容量超过带宽所需的台数才会改变台数。"
    return head + "——<b>由容量决定</b>，模型越大、保留越多，台数越多。"


def tier_explorer() -> Explorer:
    """ch16: dataset, model (checkpoint) size, read/write bandwidth, building blocks -> servers per tier."""
    controls = {
        "dataset_tb": w.choice_slider("训练数据集 TB", [10, 30, 100, 300, 1000, 3000], 300),
        "params_b": w.choice_slider("模型参数量 (B)", PARAMS_B, 175),
        "read_gbs": w.choice_slider("训练读带宽 GB/s", GBS_STEPS, 200),
        "write_gbs": w.choice_slider("检查点写带宽 GB/s", GBS_STEPS, 500),
        "checkpoints_kept": w.int_slider("保留检查点个数", 3, 1, 10),
        "hot_server": w.dropdown("热数据层", storage.server_names(), "nvme-pfs-2u"),
        "checkpoint_server": w.dropdown("检查点层", storage.server_names(), "nvme-pfs-2u"),
    }
    return Explorer(controls, _tier_model, _tier_draw, summary=_tier_summary,
                    title="分层存储规划：热数据 / 检查点 / 冷数据", figsize=(9.0, 3.8), ncols=2)


# =============================================================================================
# Figures
# =============================================================================================
def io_size_figure(media_names=("hdd-20tb", "nvme-gen4", "nvme-gen5")):
    """ch16: one drive's random-read throughput vs request size (IOPS-bound -> bandwidth-bound)."""
    fig, ax = new_figure(figsize=(7.5, 4.0))
    io = 2.0 ** np.arange(12, 27)  # 4 KiB .. 64 MiB
    for i, name in enumerate(media_names):
        m = storage.media(name)
        ax.plot(io / 1024, storage.device_throughput_gbs(name, io), color=PALETTE[i], lw=2,
                label=f"{name} random read")
        ax.axhline(m.read_gbs, color=PALETTE[i], ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("Request size (KiB, log2 scale)")
    ax.set_ylabel("Throughput per drive (GB/s, log scale)")
    ax.set_title("Small requests are IOPS-bound; dotted = sequential datasheet rate")
    ax.legend(loc="lower right")
    return fig


def interference_figure(read_gbs=60.0, pool_gbs=100.0, checkpoint_gb=2450.0, interval_s=1800.0,
                        prefetch_s=2.0, mixed_efficiency=None):
    """ch16: data delivered to training around one checkpoint burst, shared pool vs separate tiers.

    ``mixed_efficiency`` defaults to the reference HDD's random/sequential ratio at 1 MiB
    (``storage.mixed_efficiency()``, 0.38)."""
    if mixed_efficiency is None:
        mixed_efficiency = storage.mixed_efficiency()
    res = storage.read_write_interference(read_gbs, pool_gbs, checkpoint_gb, interval_s, prefetch_s=prefetch_s,
                                          mixed_efficiency=mixed_efficiency)
    fig, (ax, ax_gpu) = new_figure(2, 1, figsize=(7.5, 5.6), sharex=True)
    tb = res.shared_burst_s
    t = np.linspace(-0.3 * tb, 1.5 * tb, 600)
    in_burst = (t >= 0) & (t < tb)
    shared = np.where(in_burst, res.shared_read_gbs, read_gbs)
    write_shared = np.where(in_burst, mixed_efficiency * pool_gbs - res.shared_read_gbs, 0.0)
    ax.plot(t, np.full_like(t, read_gbs), color=PALETTE[2], lw=2, label="reads, separate tiers")
    ax.plot(t, shared, color=PALETTE[3], lw=2, label="reads, shared pool")
    ax.fill_between(t, 0, write_shared, color=PALETTE[7], alpha=0.3, label="checkpoint writes, shared pool")
    ax.axhline(read_gbs, color="k", ls=":", lw=1)
    ax.set_xlabel("Time since checkpoint start (s)")
    ax.set_ylabel("Storage bandwidth (GB/s)")
    ax.set_ylim(0, pool_gbs * 1.05)
    ax.set_title(f"Shared pool: burst {tb:.0f} s, reads get {res.shared_read_gbs:.0f} of {read_gbs:.0f} GB/s")
    ax.legend(loc="upper right", fontsize=8)
    # GPU side: the prefetch buffer (prefetch_s of reads) drains at R - r; once empty the GPUs run at r / R.
    deficit = max(read_gbs - res.shared_read_gbs, 0.0)
    t_empty = prefetch_s * read_gbs / deficit if deficit > 0 else np.inf
    starved = in_burst & (t >= t_empty)
    speed = np.where(starved, 100.0 * res.shared_read_gbs / read_gbs, 100.0)
    ax_gpu.plot(t, np.full_like(t, 100.0), color=PALETTE[2], lw=2, label="GPU speed, separate tiers")
    ax_gpu.plot(t, speed, color=PALETTE[3], lw=2, label="GPU speed, shared pool")
    ax_gpu.fill_between(t, speed, 100.0, where=starved, color=PALETTE[3], alpha=0.25,
                        label=f"starved: {res.shared_stall_s:.1f} s of GPU time lost")
    if np.isfinite(t_empty) and t_empty < tb:
        ax_gpu.axvline(t_empty, color="k", ls=":", lw=1)
        ax_gpu.annotate(f"prefetch buffer ({prefetch_s:g} s) empty", (t_empty, 5), xytext=(4, 0),
                        textcoords="offset points", fontsize=8)
    ax_gpu.set_xlabel("Time since checkpoint start (s)")
    ax_gpu.set_ylabel("Training speed (% of full)")
    ax_gpu.set_ylim(0, 110)
    ax_gpu.set_title(f"GPU stall {res.shared_stall_s:.1f} s per checkpoint "
                     f"({100 * res.shared_stall_fraction:.1f} % of a {interval_s / 60:.0f}-min interval)")
    ax_gpu.legend(loc="lower right", fontsize=8)
    return fig


def checkpoint_size_figure():
    """ch17: checkpoint size vs parameters, full training state vs weights-only, with the 'hundreds of GB' band."""
    from .. import models

    fig, ax = new_figure(figsize=(7.5, 4.2))
    p = np.logspace(9, 12, 100)
    for i, (label, kw) in enumerate((("full: fp32 master + Adam m,v + bf16 (14 B/param)", {}),
                                     ("no bf16 copy (12 B/param)", {"include_model_weights": False}),
                                     ("weights only, bf16 (2 B/param)", {"optimizer": "none"}))):
        ax.plot(p / 1e9, storage.checkpoint_gb(p, **kw), color=PALETTE[i], lw=2, label=label)
    ax.axhspan(100, 1000, color=PALETTE[1], alpha=0.12, label="100-1000 GB ('hundreds of GB')")
    for name in ("llama2-7b", "llama2-70b", "gpt3-175b", "llama3-405b"):
        n = models.transformer(name).params()
        ax.plot(n / 1e9, storage.checkpoint_gb(n), "o", color="k", ms=4)
        ax.annotate(name, (n / 1e9, storage.checkpoint_gb(n)), textcoords="offset points", xytext=(-8, 6),
                    fontsize=8, ha="right")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Model parameters (billions, log scale)")
    ax.set_ylabel("Checkpoint size (GB, log scale)")
    ax.legend(loc="lower right", fontsize=8)
    return fig


def checkpoint_write_figure(size_gb=980.0, fs_gbs=(100.0, 400.0, 1000.0), per_writer_gbs=2.0):
    """ch17: write time vs number of parallel writers, for several file-system bandwidths."""
    fig, ax = new_figure(figsize=(7.5, 4.0))
    n = 2 ** np.arange(0, 13)
    for i, bw in enumerate(fs_gbs):
        ax.plot(n, storage.checkpoint_write_s(size_gb, bw, n, per_writer_gbs), "o-", color=PALETTE[i], ms=3,
                label=f"file system {bw:.0f} GB/s")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(f"Parallel writers (each <= {per_writer_gbs:g} GB/s, log2 scale)")
    ax.set_ylabel(f"Time to write {size_gb:,.0f} GB (s, log scale)")
    ax.set_title("More writers help until the file system saturates")
    ax.legend(loc="upper right")
    return fig


def checkpoint_overhead_figure(sync_s=98.0, async_s=0.24, mtbf_s=3 * 3600.0):
    """ch17: waste fraction (save overhead + expected rework) vs interval, sync vs async.

    The curves are the course's exact model, ``reliability.checkpoint_waste`` (= 1 - ``goodput`` with no
    restart time); the dot is its minimum, Daly's interval, and the label gives Young's first-order one.
    """
    fig, ax = new_figure(figsize=(7.5, 4.0))
    tau = np.logspace(np.log10(60), np.log10(6 * 3600), 300)
    for i, (label, c) in enumerate((("synchronous save", sync_s), ("asynchronous save", async_s))):
        waste = reliability.checkpoint_waste(tau, c, mtbf_s)
        ax.plot(tau / 60, 100 * waste, color=PALETTE[i], lw=2, label=f"{label} (blocking {c:g} s)")
        opt = reliability.daly_interval_s(c, mtbf_s)
        young = reliability.young_daly_interval_s(c, mtbf_s)
        w_opt = 100 * reliability.checkpoint_waste(opt, c, mtbf_s)
        ax.plot(opt / 60, w_opt, "o", color=PALETTE[i])
        ax.annotate(f"optimum {opt / 60:.1f} min ({w_opt:.1f} %); Young {young / 60:.1f} min",
                    (opt / 60, w_opt), textcoords="offset points", xytext=(5, -14 if i == 0 else 8), fontsize=8)
    ax.set_xscale("log")
    ax.set_xticks([1, 2, 5, 10, 20, 50, 100, 200], ["1", "2", "5", "10", "20", "50", "100", "200"])
    ax.set_xlabel("Checkpoint interval (min, log scale)")
    ax.set_ylabel("Lost time (% of wall clock)")
    ax.set_ylim(0, 40)
    ax.set_title(f"Save overhead + expected rework (exact model, no restart time), job MTBF = {mtbf_s / 3600:.0f} h",
                 fontsize=10)
    ax.legend(loc="lower right", fontsize=8)  # upper right covered both curves where they climb
    return fig


def cores_per_gpu_figure(decode_rates=(100.0, 150.0, 300.0)):
    """ch18: GPU utilisation vs CPU cores per GPU, ResNet-50 on A100 vs LLM pre-training (pre-tokenised)."""
    fig, ax = new_figure(figsize=(7.5, 4.0))
    cores = np.arange(1, 49)
    for i, d in enumerate(decode_rates):
        r = dl.pipeline_throughput(dl.RESNET50_A100_IMG_S, dl.IMAGENET_MEAN_JPEG_BYTES, cpu_cores_per_gpu=cores,
                                   decode_samples_per_s_per_core=d, read_gbs_per_gpu=5.0,
                                   decoded_sample_bytes=dl.DECODED_224_BYTES)
        ax.plot(cores, 100 * r.gpu_utilization, color=PALETTE[i], lw=2,
                label=f"ResNet-50 on A100, JPEG decode {d:g} img/s/core")
    tok = dl.llm_tokens_per_s_per_gpu(70e9, 989.4, 0.4)
    llm = dl.pipeline_throughput(dl.llm_samples_per_s(tok, 4096), 4096 * 4, cpu_cores_per_gpu=cores,
                                 decode_samples_per_s_per_core=1000.0, read_gbs_per_gpu=5.0)
    ax.plot(cores, 100 * llm.gpu_utilization, color=PALETTE[4], lw=2, ls="--",
            label="70B LLM on H100, pre-tokenised")
    ax.axvline(16, color="k", ls=":", lw=1)
    ax.text(16.5, 5, "16 cores/GPU rule", fontsize=8)
    ax.set_xlabel("CPU cores per GPU (physical cores)")
    ax.set_ylabel("GPU busy (%)")
    ax.set_ylim(0, 105)
    ax.legend(loc="lower right", fontsize=8)
    return fig


def small_file_figure(samples_per_s=1024 * dl.RESNET50_A100_IMG_S, sample_bytes=dl.IMAGENET_MEAN_JPEG_BYTES):
    """ch18: file opens/s and read requests/s vs file size at a fixed sample rate (small-file IOPS stress)."""
    fig, ax = new_figure(figsize=(7.5, 4.0))
    fb = np.logspace(np.log10(sample_bytes), 10, 60)
    req = storage.data_read_requirements(samples_per_s, sample_bytes, fb)
    ax.plot(fb / 1e6, req.metadata_ops_per_s, color=PALETTE[0], lw=2, label="metadata ops/s (open+close)")
    ax.plot(fb / 1e6, req.read_iops, color=PALETTE[1], lw=2, label="read requests/s (1 MiB each)")
    for i, name in enumerate(("hdd-pfs-4u", "nvme-pfs-2u")):
        s = storage.server_spec(name)
        ax.axhline(s.read_iops, color=PALETTE[2 + i], ls=":", lw=1.2, label=f"4K IOPS of one {name}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("File size (MB, log scale)")
    ax.set_ylabel("Operations per second (log scale)")
    ax.set_title(f"Reading {samples_per_s:,.0f} samples/s of {sample_bytes / 1e3:.0f} kB, packed in files of size x")
    ax.legend(loc="lower left", fontsize=8)  # upper right hid the nvme IOPS line
    return fig
