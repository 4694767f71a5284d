"""Explorer and figures for ch24 (分布式训练框架配置).

Explorer: ``framework_explorer()`` — model preset, GPU count, catalog GPU, global batch -> the
best layouts from ``steptime.search_layouts`` (bars: per-GPU memory against the usable HBM, and
estimated step time), and for the best one the generated Megatron-LM arguments, DeepSpeed JSON
and torchrun line (``labutil.frameworks``) in the summary. Bars are created once and only their
heights and tick labels change (update latency: benchmarks/bench_frameworks_explorer.py).

Figures: ``ddp_bucket_figure`` (exposed communication vs bucket size, and the 25 MiB timeline),
``zero_fsdp_figure`` (per-GPU model states and bytes sent per step for each FSDP strategy / ZeRO stage).
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np

from .. import frameworks, hardware, models, steptime
from ..plotting import PALETTE, new_figure
from ..widgets import Explorer, choice_slider, dropdown, pow2_slider
from .parallel import BATCH_CHOICES

__all__ = ["TOP_K", "FrameworkPlan", "short_label", "framework_plan", "framework_explorer", "ddp_bucket_figure",
           "zero_fsdp_figure"]

TOP_K = 6


@dataclass(frozen=True)
class FrameworkPlan:
    """The explorer's model: best layouts and the configs generated for the best one."""

    model: str
    n_gpus: int
    gpu: str
    usable_gb: float
    top: list                 # steptime.LayoutEstimate, best first (≤ TOP_K)
    megatron_args: list | None
    megatron_note: str
    deepspeed: dict | None
    torchrun: list | None
    checks: dict | None = None   # steptime.plausibility of the best layout
    deepspeed_note: str = ""     # why DeepSpeed cannot run the best layout (e.g. ZeRO-2/3 with its pipeline engine)

    @property
    def best(self):
        return self.top[0] if self.top else None


def short_label(layout) -> str:
    """Compact bar label of a layout, e.g. 't4 p32 d8\\nZ1 SP sel'."""
    tail = [f"Z{layout.zero_stage}"] + (["SP"] if layout.sp else []) + \
        ([layout.recompute[:3]] if layout.recompute != "none" else [])
    return f"t{layout.tp} p{layout.pp} d{layout.dp}\n" + " ".join(tail)


def framework_plan(model: str = "gpt3-175b", n_gpus: int = 1024, gpu: str = "H100-SXM", global_batch: int = 1536,
                   gpus_per_node: int = 8, top_k: int = TOP_K) -> FrameworkPlan:
    """Search the layouts, keep the best ``top_k`` and generate the framework configs of the best."""
    spec = models.transformer(model)
    r = steptime.search_layouts(spec, n_gpus, gpu, global_batch, gpus_per_node=gpus_per_node,
                                ep_options=steptime.expert_parallel_options(spec, n_gpus))
    top = r.top(top_k) if len(r) else []
    meg, note, ds, tr, ds_note = None, "", None, None, ""
    if top:
        L = top[0].layout
        try:
            meg = frameworks.megatron_pretrain_args(spec, L)
        except ValueError as exc:
            note = str(exc)
        try:  # DeepSpeed's pipeline engine takes ZeRO 0/1 only: the search may pick ZeRO-2/3 with pp (FSDP can)
            ds = frameworks.deepspeed_config(L)
        except ValueError as exc:
            ds_note = str(exc)
        nodes = max(1, n_gpus // gpus_per_node)
        tr = frameworks.torchrun_command("pretrain_gpt.py", meg or [], nnodes=nodes,
                                         nproc_per_node=min(gpus_per_node, n_gpus))
    checks = steptime.plausibility(spec, top[0], gpu) if top else None
    return FrameworkPlan(model, int(n_gpus), r.gpu, r.usable_gb, top, meg, note, ds, tr, checks, ds_note)


def _draw(fig, p: FrameworkPlan, values, cache: dict) -> None:
    ax_m, ax_t = fig.axes[0], fig.axes[1]
    k = TOP_K
    if "bars" not in cache:
        x = np.arange(k)
        cache["mem"] = ax_m.bar(x, np.zeros(k), color=PALETTE[0])
        cache["step"] = ax_t.bar(x, np.zeros(k), color=PALETTE[1])
        cache["hbm"] = ax_m.axhline(0.0, color="#b00000", ls="--", lw=1.2, label="usable HBM per GPU")
        cache["mfu"] = [ax_t.text(i, 0.0, "", ha="center", va="bottom", fontsize=7) for i in range(k)]
        ax_m.set_ylabel("memory per GPU (GB)")
        ax_t.set_ylabel("estimated step time (s)")
        for ax in (ax_m, ax_t):
            ax.set_xticks(x, [""] * k, fontsize=7)
        # the bar labels are abbreviations: say once what they mean
        ax_m.set_xlabel("layout (best first)")
        ax_t.set_xlabel("layout (best first)")
        fig.supxlabel("t / p / d = tensor / pipeline / data-parallel size;  Z = ZeRO stage;  "
                      "SP = sequence parallel;  sel / ful = activation recompute", fontsize=8)
        cache["hbm_legend"] = ax_m.legend(fontsize=7, loc="upper right")
        cache["none"] = [ax.text(0.5, 0.5, "", transform=ax.transAxes, ha="center", va="center", fontsize=9,
                                 color="#b00000") for ax in (ax_m, ax_t)]
        cache["bars"] = True
    for t in cache["none"]:  # no layout fits: say so on the empty axes instead of leaving them blank
        t.set_text("" if p.top else "no layout fits the usable HBM\n(more GPUs or a larger-memory GPU)")
    labels = [short_label(e.layout) for e in p.top] + [""] * (k - len(p.top))
    mem = [e.memory_gb for e in p.top] + [0.0] * (k - len(p.top))
    step = [e.step_s for e in p.top] + [0.0] * (k - len(p.top))
    for b, v in zip(cache["mem"], mem):
        b.set_height(v)
    for b, v in zip(cache["step"], step):
        b.set_height(v)
    for i, t in enumerate(cache["mfu"]):
        if i < len(p.top):
            t.set_position((i, step[i]))
            t.set_text(f"MFU {100 * p.top[i].mfu:.0f}%")
        else:
            t.set_text("")
    cache["hbm"].set_ydata([p.usable_gb, p.usable_gb])
    cache["hbm_legend"].get_texts()[0].set_text(f"usable HBM per GPU ({p.usable_gb:.0f} GB)")
    ax_m.set_xticks(range(k), labels, fontsize=7)
    ax_t.set_xticks(range(k), labels, fontsize=7)
    ax_m.set_ylim(0, 1.15 * max(p.usable_gb, max(mem)))
    ax_t.set_ylim(0, 1.2 * max(max(step), 1e-3 if p.top else 1.0))   # no layout: a plain 0-1 s axis, not 0.0012
    ax_m.set_title(f"{p.model} on {p.n_gpus} x {p.gpu}: memory of the top layouts", fontsize=9)
    ax_t.set_title("estimated step time (labels: model FLOPs utilisation)", fontsize=9)
    if "frozen" not in cache:
        fig.draw_without_rendering()
        fig.set_layout_engine("none")
        cache["frozen"] = True


def _summary(p: FrameworkPlan, values) -> str:
    if p.best is None:
        return (f"<span style='color:#b00'>{html.escape(p.model)} 在 {p.n_gpus} 张 {html.escape(p.gpu)} 上没有能放进可用显存 "
                f"{p.usable_gb:.0f} GB 的布局：增加 GPU 或换显存更大的卡。</span>")
    e, L = p.best, p.best.layout
    meg = " ".join(p.megatron_args) if p.megatron_args else f"(Megatron-LM 不适用：{p.megatron_note})"
    ds = frameworks.deepspeed_json(p.deepspeed) if p.deepspeed else f"(DeepSpeed 不适用：{p.deepspeed_note})"
    tr = " ".join(p.torchrun[:7]) + " pretrain_gpt.py ..." if p.torchrun else ""
    pre = "<pre style='font-size:11px;white-space:pre-wrap;margin:2px 0'>{}</pre>"
    warn = ""
    c = p.checks or {}
    if c.get("mfu_above_published"):
        warn += (f"<br><span style='color:#b00'>⚠ 估计 MFU {100 * c['mfu']:.0f}% 高于公开大规模训练报告过的最高值 "
                 f"{100 * c['mfu_limit']:.0f}%：这里已超出模型校准过的范围，实际多半更低（样本外它偏乐观）。</span>")
    if c and not c.get("gemm_ceiling_measured"):
        warn += (f"<br><span style='color:#b00'>⚠ {html.escape(p.gpu)} 没有实测的矩阵乘效率上限，"
                 "GEMM 效率沿用 A100 的拟合值（假设，未经验证）。</span>")
    if c.get("moe_without_ep"):
        warn += ("<br><span style='color:#b00'>⚠ 这是 MoE 模型，但最佳布局没有专家并行（ep=1）：每张卡都存着本段的"
                 "全部专家，显存按总参数算；通常应让 ep 取专家数的约数（Megatron-Core --expert-model-parallel-size）。</span>")
    return (f"最佳布局 <b>{html.escape(L.label())}</b>：每卡 {e.memory_gb:.1f} GB（可用 {p.usable_gb:.0f} GB），"
            f"单步 {e.step_s:.2f} s，MFU ≈ {100 * e.mfu:.0f}%，梯度累积 {L.n_microbatches} 步。"
            f"<br><b>Megatron-LM pretrain_gpt.py 参数</b>" + pre.format(html.escape(meg)) +
            "<b>torchrun（每个节点一条）</b>" + pre.format(html.escape(tr)) +
            "<b>DeepSpeed ds_config.json</b>" + pre.format(html.escape(ds)) + warn)


def framework_explorer(model: str = "gpt3-175b") -> Explorer:
    """Best layouts + generated Megatron / DeepSpeed / torchrun configs (see module docstring)."""
    cache: dict = {}
    controls = {
        "model": dropdown("模型", models.transformer_names(), model),
        "n_gpus": pow2_slider("GPU 数量", 1024, 8, 8192),
        "gpu": dropdown("GPU", [n for n in hardware.gpus() if hardware.gpu(n).nvlink_gbs > 0], "H100-SXM"),
        "global_batch": choice_slider("global batch（序列）", BATCH_CHOICES, 1536),
    }
    return Explorer(controls, compute=framework_plan, draw=lambda f, r, v: _draw(f, r, v, cache), summary=_summary,
                    title="从并行方案到框架配置：最佳布局与生成的参数", figsize=(11.0, 4.2), ncols=2)


# ============================================================================================
# Figures
# ============================================================================================
def ddp_bucket_figure(params=1.3e9, n_gpus: int = 16, **kwargs):
    """Left: all-reduce time and its exposed part vs bucket size; right: the 25 MiB plan's timeline."""
    mbs = np.geomspace(0.25, 4096, 29)
    sw = frameworks.bucket_sweep(params, mbs, n_gpus=n_gpus, **kwargs)
    fig, (a1, a2) = new_figure(1, 2, figsize=(11.0, 4.2))
    a1.plot(mbs, 1e3 * sw["comm_s"], color=PALETTE[0], marker="o", ms=3, label="all-reduce time (sum of buckets)")
    a1.plot(mbs, 1e3 * sw["exposed_comm_s"], color=PALETTE[3], marker="o", ms=3, label="exposed after backward")
    a1.axhline(1e3 * sw["backward_s"], color="gray", ls=":", label="backward pass")
    a1.axvline(frameworks.DDP_BUCKET_MB, color="black", lw=0.8, ls="--", label="DDP default 25 MiB")
    a1.set_xscale("log", base=2)
    a1.set_yscale("log")
    a1.set_xlabel("bucket size bucket_cap_mb (MiB)")
    a1.set_ylabel("time per step (ms)")
    a1.set_title(f"{params / 1e9:.1f}B params, fp32 grads, {n_gpus} GPUs: bucket size trade-off", fontsize=9)
    a1.legend(fontsize=7)
    p = frameworks.ddp_bucket_plan(params, n_gpus=n_gpus, **kwargs)
    cum = np.cumsum(p.bucket_bytes) / 1e9
    a2.step(np.concatenate([[0], 1e3 * p.ready_s]), np.concatenate([[0], cum]), where="post", color=PALETTE[2],
            label="gradients ready (backward)")
    a2.step(np.concatenate([[0], 1e3 * p.finish_s]), np.concatenate([[0], cum]), where="post", color=PALETTE[3],
            label="gradients all-reduced")
    a2.axvline(1e3 * p.backward_s, color="gray", ls=":", label="end of backward")
    a2.set_xlabel("time since backward start (ms)")
    a2.set_ylabel("cumulative gradient bytes (GB)")
    a2.set_title(f"25 MiB buckets ({p.n_buckets} buckets): exposed {1e3 * p.exposed_comm_s:.0f} ms of "
                 f"{1e3 * p.comm_s:.0f} ms", fontsize=9)
    a2.legend(fontsize=7, loc="lower right")
    return fig


def zero_fsdp_figure(params=7e9, dp: int = 64, gpus_per_node: int = 8):
    """Per-GPU model states and bytes sent per step for FSDP strategies / ZeRO stages."""
    rows = frameworks.fsdp_vs_zero_table(params, dp, gpus_per_node)
    labels = [f"{r['fsdp']}\n({r['zero'].split(' ')[0]})" for r in rows]
    fig, (a1, a2) = new_figure(1, 2, figsize=(11.0, 4.2))
    x = np.arange(len(rows))
    b1 = a1.bar(x, [r["states_gb"] for r in rows], color=PALETTE[0])
    hbm = hardware.gpu("H100-SXM").hbm_gb
    a1.axhline(hbm, color="#b00000", ls="--", lw=1, label=f"H100 HBM {hbm:.0f} GB")
    a1.bar_label(b1, fmt="%.1f", fontsize=7)
    a1.set_ylabel("weights + grads + Adam states per GPU (GB)")
    a2_b = a2.bar(x, [r["sent_gb_per_gpu"] for r in rows], color=PALETTE[1])
    a2.bar_label(a2_b, fmt="%.1f", fontsize=7)
    a2.set_ylabel("bytes sent per GPU per step (GB)")
    for ax in (a1, a2):
        ax.set_xticks(x, labels, fontsize=7)
        ax.set_xlabel("FSDP sharding strategy (ZeRO equivalent)")
    a1.set_title(f"{params / 1e9:.0f}B params, dp = {dp}: model states per GPU", fontsize=9)
    a2.set_title("traffic per GPU: ZeRO-3 sends 1.5x DDP;\nHYBRID_SHARD's network ring spans only dp/8 ranks",
                 fontsize=9)
    a1.legend(fontsize=7)
    return fig
