"""Chapter 25 explorer and figures: LLM serving memory, decode roofline, P99 under load, CV sizing.

Models: ``labutil.inference`` (KV cache, weights by precision, decode/prefill roofline, Erlang C
queueing with the Allen–Cunneen tail, ``gpus_for_slo``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from matplotlib.ticker import MaxNLocator

from .. import hardware, inference, validate
from ..plotting import PALETTE, new_figure, reset_axes
from ..widgets import Explorer, choice_slider, dropdown, pow2_slider, slider

__all__ = ["LLM_MODELS", "PROMPT_TOKENS", "OUTPUT_TOKENS", "serving_model", "TP_CHOICES", "feasible",
           "serving_options", "serving_explorer", "models_heads", "memory_figure", "decode_roofline_figure",
           "p99_vs_load_figure", "cv_gpus_figure"]

LLM_MODELS = ("llama3-8b", "llama3-70b", "llama2-13b", "llama2-70b", "deepseek-v3")
PROMPT_TOKENS = 1024
OUTPUT_TOKENS = 256
_BATCHES = 2 ** np.arange(0, 11)  # 1 .. 1024


def serving_model(model: str = "llama3-70b", gpu: str = "H100-SXM", precision: str = "bf16", tp: int = 4,
                  batch: int = 64, qps=20.0, p99_s=20.0, prompt_tokens: int = PROMPT_TOKENS,
                  output_tokens: int = OUTPUT_TOKENS) -> dict:
    """Everything the serving explorer shows, from ``labutil.inference``.

    ``batch`` above the KV-cache limit is clamped to it (``clamped`` says so). ``plan`` is the
    ``SloPlan`` for ``qps`` with P99 end-to-end latency <= ``p99_s`` (None with ``plan_error``
    when the target is unreachable).
    """
    qps = validate.positive("qps", qps)
    p99_s = validate.positive("p99_s", p99_s)
    full = inference.llm_replica(model, gpu, precision, tp, prompt_tokens, output_tokens, None)
    b = min(validate.integer("batch", batch, lo=1), full.max_batch)
    rep = inference.llm_replica(model, gpu, precision, tp, prompt_tokens, output_tokens, b)
    ctx = prompt_tokens + output_tokens / 2.0
    batches = np.union1d(_BATCHES[_BATCHES <= full.max_batch], [full.max_batch]).astype(float)
    tok_s, tpot_ms = inference.throughput_curve(model, gpu, batches, ctx, precision, 2, tp)
    step = inference.decode_step(model, gpu, batches, ctx, precision, 2, tp)
    plan, err = None, ""
    qgrid = np.linspace(qps / 8.0, qps * 2.0, 64)
    gpus_curve = np.zeros(qgrid.shape)
    try:
        plan = inference.gpus_for_slo(qps, p99_s * 1e3, rep.e2e_ms, slots_per_replica=rep.batch, gpus_per_replica=tp)
        per_replica = inference.max_qps_per_replica(p99_s * 1e3, rep.e2e_ms, slots_per_replica=rep.batch)
        gpus_curve = np.ceil(qgrid / per_replica - 1e-9) * tp
    except ValueError as exc:
        err = str(exc)
    hbm = hardware.gpu(gpu).hbm_gb
    kv_gb = rep.kv_per_seq_gb * rep.batch
    reserved = hbm * (1.0 - inference.VLLM_GPU_MEMORY_UTILIZATION)    # what --gpu-memory-utilization 0.9 leaves out
    return {"rep": rep, "max_batch": full.max_batch, "clamped": b < batch, "hbm_gb": hbm, "kv_gb": kv_gb,
            "reserved_gb": reserved, "free_gb": max(hbm - reserved - rep.weights_gb - kv_gb, 0.0),
            "batches": batches, "tokens_per_s": tok_s,
            "tpot_ms": tpot_ms, "memory_bound": np.asarray(step.memory_bound), "plan": plan, "plan_error": err,
            "qgrid": qgrid, "gpus_curve": gpus_curve, "qps": qps, "p99_s": p99_s}


def _build_serving(fig):
    """Create the artists once; redraws only update their data (keeps an update well under 50 ms)."""
    ax_m, ax_t, ax_g = fig.axes[:3]
    for ax in (ax_m, ax_t, ax_g):
        reset_axes(ax)
    bars = ax_m.bar([0, 0, 0, 0], [1, 1, 1, 1], bottom=[0, 1, 2, 3], width=0.6,
                    color=[PALETTE[0], PALETTE[1], "#dddddd", "#f3f3f3"], edgecolor=["none", "none", "none", "#999999"],
                    hatch=["", "", "", "//"], label=["weights", "KV", "free", "reserved"])
    hbm = ax_m.axhline(1.0, color="k", lw=1, ls="--", label="HBM per GPU")
    ax_m.set_xticks([])
    ax_m.set_xlim(-0.6, 1.4)
    ax_m.set_ylabel("Memory per GPU (GB)")
    leg_m = ax_m.legend(handles=[*bars, hbm], loc="upper right", fontsize=7)   # the dashed line is explained too
    (tok_line,) = ax_t.plot([1], [1], color=PALETTE[2], marker="o", ms=3, label="memory-bound")
    (cmp_pts,) = ax_t.plot([], [], color=PALETTE[3], marker="o", ms=4, ls="none", label="compute-bound")
    (t_star,) = ax_t.plot([1], [1], marker="*", ms=12, color="k", ls="none", label="current batch")
    ax_t.set_xscale("log", base=2)
    ax_t.set_xlabel("Batch (concurrent sequences)")
    ax_t.set_ylabel("Decode throughput per replica (tokens/s)")
    leg_t = ax_t.legend(loc="upper left", fontsize=7)
    (g_line,) = ax_g.plot([1], [1], color=PALETTE[4], drawstyle="steps-post", label="GPUs needed")
    (g_star,) = ax_g.plot([1], [1], marker="*", ms=12, color="k", ls="none", label="current load")
    msg = ax_g.text(0.5, 0.5, "P99 target unreachable\n(see message above)", ha="center", va="center",
                    transform=ax_g.transAxes, color="#b00", visible=False)
    ax_g.set_xlabel("Load (requests/s)")
    ax_g.set_ylabel("GPUs for the P99 target")
    ax_g.yaxis.set_major_locator(MaxNLocator(integer=True))     # a GPU count: no 2.5 / 7.5 ticks
    leg_g = ax_g.legend(loc="upper left", fontsize=7)
    ax_m.set_ylim(0, 100)
    ax_m.set_title("llama3-70b bf16 TP4 on H100-SXM", fontsize=9)  # reserve room before freezing the layout
    ax_t.set_ylim(0, 10000)
    ax_g.set_ylim(0, 100)
    # lay the figure out once (constrained layout), then freeze it: re-solving the layout on
    # every redraw costs more than the model and the artists together
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.execute(fig)
        fig.set_layout_engine("none")
    fig._serving_artists = dict(bars=bars, hbm=hbm, leg_m=leg_m, tok=tok_line, cmp=cmp_pts, t_star=t_star,
                                leg_t=leg_t, g_line=g_line, g_star=g_star, msg=msg, leg_g=leg_g)
    return fig._serving_artists


def _draw_serving(fig, r, values):
    art = getattr(fig, "_serving_artists", None) or _build_serving(fig)
    ax_m, ax_t, ax_g = fig.axes[:3]
    rep = r["rep"]
    # memory per GPU (stacked)
    vals = [rep.weights_gb, r["kv_gb"], r["free_gb"], r["reserved_gb"]]
    names = ["weights", f"KV cache, batch {rep.batch}", "room for more KV", "outside --gpu-memory-utilization"]
    bottom = 0.0
    for bar, v, txt, name in zip(art["bars"], vals, art["leg_m"].get_texts(), names):
        bar.set_y(bottom)
        bar.set_height(v)
        bottom += v
        txt.set_text(f"{name}: {v:.1f} GB")
    art["hbm"].set_ydata([r["hbm_gb"], r["hbm_gb"]])
    art["leg_m"].get_texts()[4].set_text(f"HBM per GPU: {r['hbm_gb']:.0f} GB")
    ax_m.set_ylim(0, max(r["hbm_gb"], bottom) * 1.45)       # headroom: the legend sits above the HBM line
    ax_m.set_title(f"{rep.model} {rep.precision} TP{rep.tp} on {rep.gpu}", fontsize=9)
    # decode throughput vs batch
    b, tok, mb = r["batches"], np.asarray(r["tokens_per_s"]), r["memory_bound"]
    art["tok"].set_data(b, tok)
    art["cmp"].set_data(b[~mb], tok[~mb])
    art["t_star"].set_data([rep.batch], [rep.tokens_per_s])
    art["leg_t"].get_texts()[2].set_text(f"batch {rep.batch}: TPOT {rep.tpot_ms:.1f} ms")
    ax_t.set_xlim(0.7, max(b.max(), 2) * 1.4)
    ax_t.set_ylim(0, tok.max() * 1.15)
    # GPUs vs QPS
    ok = r["plan"] is not None
    art["msg"].set_visible(not ok)
    art["g_line"].set_visible(ok)
    art["g_star"].set_visible(ok)
    q = r["qgrid"]
    ax_g.set_xlim(0, q.max() * 1.08)
    if ok:
        art["g_line"].set_data(q, r["gpus_curve"])
        art["g_star"].set_data([r["qps"]], [r["plan"].gpus])
        art["leg_g"].get_texts()[1].set_text(f"{r['plan'].gpus} GPUs, P99 {r['plan'].p99_ms / 1e3:.1f} s")
        ax_g.set_ylim(0, max(float(r["gpus_curve"].max()), r["plan"].gpus, 1) * 1.3)
    else:
        art["leg_g"].get_texts()[1].set_text("target unreachable")


def _summary_serving(r, values):
    rep = r["rep"]
    note = f"（batch 超过显存上限，已截到 {r['max_batch']}）" if r["clamped"] else ""
    bound = "显存带宽受限" if rep.decode_memory_bound else "算力受限"
    s = (f"每卡权重 <b>{rep.weights_gb:.1f} GB</b>，每条 {PROMPT_TOKENS}+{OUTPUT_TOKENS} token 序列 KV "
         f"<b>{rep.kv_per_seq_gb * 1e3:.0f} MB</b>，最多 <b>{r['max_batch']}</b> 条并发{note}；"
         f"TTFT <b>{rep.ttft_ms:.0f} ms</b>，TPOT <b>{rep.tpot_ms:.1f} ms</b>（decode {bound}），"
         f"单副本 <b>{rep.tokens_per_s:,.0f} tokens/s</b>。")
    if r["plan"] is not None:
        p = r["plan"]
        s += (f"<br>{r['qps']:g} req/s、P99 ≤ {r['p99_s']:g} s：<b>{p.replicas} 个副本 = {p.gpus} 张 GPU</b>"
              f"（利用率 {p.utilization:.0%}，只按「QPS ÷ 单副本 QPS」算是 {p.naive_replicas} 个副本）")
    else:
        s += f"<br><span style='color:#b00'>{r['plan_error']}</span>"
    return s


TP_CHOICES = (1, 2, 4, 8)


@lru_cache(maxsize=None)
def feasible(model: str, gpu: str, precision: str, tp: int) -> bool:
    """True when ``model`` in ``precision`` with tensor parallelism ``tp`` fits on ``gpu`` with room for one
    sequence (``inference.llm_replica`` accepts it: the GPU has the precision's tensor cores and the memory)."""
    try:
        return inference.llm_replica(model, gpu, precision, tp, PROMPT_TOKENS, OUTPUT_TOKENS, None).max_batch >= 1
    except ValueError:
        return False


def serving_options(model: str, gpu: str | None = None, precision: str | None = None) -> dict:
    """The settings the serving explorer offers: GPUs that can host ``model`` at all, the precisions ``gpu``
    supports with some TP that fits, and the TP degrees that fit ``precision`` (never an impossible setting)."""
    gpus = [g for g in hardware.gpus() if any(feasible(model, g, p, t) for p in inference.PRECISIONS
                                              for t in TP_CHOICES)]
    out = {"gpu": gpus}
    if gpu is not None:
        out["precision"] = [p for p in inference.PRECISIONS if any(feasible(model, gpu, p, t) for t in TP_CHOICES)]
        if precision is not None:
            out["tp"] = [t for t in TP_CHOICES if feasible(model, gpu, precision, t)]
    return out


def serving_explorer() -> Explorer:
    """Model × GPU × precision × TP × batch × QPS × P99 → memory, throughput curve, GPUs needed.

    Changing the model, GPU or precision narrows the other menus to settings that fit (e.g. no fp8 on an
    A100, no TP=1 for a 70B model in BF16, only quantised 70B on an L4)."""
    controls = {
        "model": dropdown("模型", LLM_MODELS, "llama3-70b"),
        "gpu": dropdown("GPU", hardware.gpus(), "H100-SXM"),
        "precision": dropdown("权重精度", inference.PRECISIONS, "bf16"),
        "tp": choice_slider("张量并行 TP", [1, 2, 4, 8], 4),
        "batch": pow2_slider("batch（并发序列）", 64, 1, 1024),
        "qps": slider("负载 (req/s)", 20.0, 1.0, 200.0, 1.0, fmt=".0f"),
        "p99_s": slider("P99 端到端目标 (s)", 20.0, 2.0, 60.0, 1.0, fmt=".0f"),
    }
    busy = []

    def _narrow(_change=None):
        if busy:  # setting options below fires this observer again
            return
        busy.append(True)
        try:
            for name in ("gpu", "precision", "tp"):
                opts = serving_options(controls["model"].value, controls["gpu"].value,
                                       controls["precision"].value)[name]
                w = controls[name]
                keep = w.value if w.value in opts else opts[0]
                if list(w.options) != opts:
                    w.options = opts
                w.value = keep
        finally:
            busy.clear()

    for name in ("model", "gpu", "precision"):
        controls[name].observe(_narrow, names="value")
    _narrow()
    return Explorer(controls, compute=serving_model, draw=_draw_serving, summary=_summary_serving,
                    title=f"LLM 推理服务：显存、吞吐与满足 P99 的 GPU 数（prompt {PROMPT_TOKENS} / 输出 {OUTPUT_TOKENS} tokens）",
                    figsize=(11.5, 3.8), nrows=1, ncols=3)


def models_heads(name: str) -> int:
    """Query heads of a preset (MHA caches all of them)."""
    from ..models import transformer

    return transformer(name).heads


# -- figures ----------------------------------------------------------------------------------
def memory_figure(models=("llama3-8b", "llama3-70b"), gpus=("L4", "L40S", "H100-SXM")):
    """Left: weight GB by precision (with HBM lines); right: KV cache per token (MHA vs GQA)."""
    fig, (ax_w, ax_k) = new_figure(1, 2, figsize=(10.5, 3.8))
    precs = ("bf16", "fp8", "int8", "int4")
    x = np.arange(len(precs))
    w = 0.8 / len(models)
    for i, m in enumerate(models):
        vals = [inference.weights_gb(m, p) for p in precs]
        bars = ax_w.bar(x + (i - (len(models) - 1) / 2) * w, vals, width=w, color=PALETTE[i], label=m)
        ax_w.bar_label(bars, fmt="%.0f", fontsize=7)
    for j, g in enumerate(gpus):
        hbm = hardware.gpu(g).hbm_gb
        ax_w.axhline(hbm, color=PALETTE[5 + j], ls="--", lw=1, label=f"{g} memory {hbm:.0f} GB")
    ax_w.set_xticks(x, precs)
    ax_w.set_ylabel("Weights (GB, TP=1)")
    ax_w.set_xlabel("Weight precision")
    ax_w.legend(loc="upper right", fontsize=8)
    names = ("llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b")
    per_tok = [inference.kv_bytes_per_token(n) / 1e6 for n in names]
    colors = [PALETTE[3] if inference.kv_heads_per_gpu(n) == models_heads(n) else PALETTE[2] for n in names]
    bars = ax_k.barh(names, per_tok, color=colors)
    ax_k.bar_label(bars, fmt="%.3f MB", fontsize=8)
    ax_k.set_xlabel("KV cache per token (MB, FP16)")
    ax_k.set_xlim(0, max(per_tok) * 1.35)
    ax_k.set_title("red: MHA (every head cached), green: GQA (8 KV heads)", fontsize=9)
    return fig


def decode_roofline_figure(model: str = "llama3-8b", gpu: str = "H100-SXM", precision: str = "bf16", tp: int = 1,
                           context_len: int = 1024):
    """TPOT and its memory / compute terms vs batch: decode is memory-bound until large batches."""
    fig, (ax_t, ax_r) = new_figure(1, 2, figsize=(10.5, 3.8))
    b = 2.0 ** np.arange(0, 12)
    step = inference.decode_step(model, gpu, b, context_len, precision, 2, tp)
    ax_t.plot(b, np.asarray(step.memory_s) * 1e3, label="memory term (bytes / HBM BW)", color=PALETTE[0])
    ax_t.plot(b, np.asarray(step.compute_s) * 1e3, label="compute term (FLOPs / peak)", color=PALETTE[3])
    ax_t.plot(b, np.asarray(step.time_s) * 1e3, label="step time (max + TP comm)", color="k", ls="--")
    ax_t.set_xscale("log", base=2)
    ax_t.set_yscale("log")
    ax_t.set_xlabel("Batch (sequences)")
    ax_t.set_ylabel("Decode step time (ms)")
    ax_t.legend(fontsize=7)
    ax_t.set_title(f"{model} {precision} on {gpu}, context {context_len}", fontsize=9)
    tok = b / np.asarray(step.time_s)
    ax_r.plot(b, tok, marker="o", ms=3, color=PALETTE[2], label="throughput (left axis)")
    ax_r.set_xscale("log", base=2)
    ax_r.set_xlabel("Batch (sequences)")
    ax_r.set_ylabel("Throughput (tokens/s per replica)")
    ax2 = ax_r.twinx()
    ax2.plot(b, np.asarray(step.time_s) * 1e3, color=PALETTE[1], ls=":", label="TPOT, time per output token (right axis)")
    ax2.set_ylabel("TPOT (ms)", color=PALETTE[1])
    ax2.tick_params(axis="y", colors=PALETTE[1])
    ax2.grid(False)
    h1, l1 = ax_r.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax_r.legend(h1 + h2, l1 + l2, fontsize=7, loc="upper left")
    ax_r.set_title("Bigger batches: more tokens/s per replica, slower tokens per user", fontsize=9)
    return fig


def p99_vs_load_figure(service_ms: float = 14.5, replicas: int = 16, p99_target_ms: float = 100.0):
    """P99 latency vs load for ``replicas`` servers: random routing vs pooled queue, M/M/c vs M/D/c."""
    s = validate.positive("service_ms", service_ms)
    fig, ax = new_figure(figsize=(8.0, 4.0))
    cap = replicas * 1e3 / s
    util = np.linspace(0.05, 0.985, 120)
    for routing, cv2, color, ls in (("random", 0.0, PALETTE[3], "-"), ("random", 1.0, PALETTE[3], ":"),
                                    ("pooled", 0.0, PALETTE[0], "-"), ("pooled", 1.0, PALETTE[0], ":")):
        p = inference.p99_latency_ms(util * cap, replicas, s, service_cv2=cv2, routing=routing)
        ax.plot(util * cap, p, color=color, ls=ls,
                label=f"{routing} routing, {'deterministic (M/D)' if cv2 == 0 else 'exponential (M/M)'} service")
    ax.axhline(p99_target_ms, color="k", lw=1, ls="--", label=f"P99 target {p99_target_ms:g} ms")
    ax.axvline(cap, color="#888", lw=1, label=f"capacity {cap:,.0f} req/s")
    ax.set_yscale("log")
    ax.set_ylim(s * 0.8, p99_target_ms * 20)
    ax.set_xlabel("Load (requests/s)")
    ax.set_ylabel("P99 latency (ms)")
    ax.set_title(f"{replicas} replicas, {s:g} ms per request", fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    return fig


def cv_gpus_figure(models=("resnet50", "vit_l_16", "vit_h_14_518"), gpus=("L4", "L40S", "H100-SXM"),
                   qps=inference.SEED_CV_QPS, p99_ms=inference.SEED_CV_P99_MS, batches=(1, 8)):
    """GPUs for the seed's CV target (qps, P99) per model and GPU, without/with dynamic batching."""
    fig, axes = new_figure(1, len(models), figsize=(11.5, 3.6))
    for ax, m in zip(np.atleast_1d(axes), models):
        x = np.arange(len(gpus))
        w = 0.8 / len(batches)
        for i, bt in enumerate(batches):
            vals, labels = [], []
            for g in gpus:
                try:
                    n = inference.cv_cluster_plan(g, qps, p99_ms, bt, model=m).gpus
                    vals.append(n)
                    labels.append(str(n))
                except ValueError:
                    vals.append(0)
                    labels.append("n/a")
            xs = x + (i - (len(batches) - 1) / 2) * w
            bars = ax.bar(xs, vals, width=w, color=PALETTE[i],
                          label=f"batch {bt}" + (" (dynamic batching)" if bt > 1 else ""))
            ax.bar_label(bars, labels=[t if t != "n/a" else "" for t in labels], fontsize=7)
            for xi, t in zip(xs, labels):      # a zero bar is invisible on the log axis: write n/a at the bottom
                if t == "n/a":
                    ax.text(xi, 0.55, "n/a", ha="center", va="bottom", fontsize=7, color=PALETTE[i])
        ax.set_xticks(x, [g.replace("-SXM", "") for g in gpus])
        ax.set_yscale("log")
        ax.set_ylim(0.5, max(ax.get_ylim()[1], 20) * 3)
        ax.set_title(m, fontsize=9)
        ax.set_ylabel("GPUs needed")
    np.atleast_1d(axes)[0].legend(fontsize=7, loc="upper left")
    fig.suptitle(f"{qps:,.0f} req/s with P99 <= {p99_ms:g} ms (random routing; n/a = batch alone exceeds the target)",
                 fontsize=9)
    return fig
