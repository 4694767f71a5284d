"""Compute sizing: training FLOPs, time to train, GPUs for a deadline, MFU and the roofline.

Taught in ch04 (算力需求估算) and ch06 (GPU架构与关键指标); reused by ch05 (cost), ch14, ch30.
Every function accepts numpy arrays where a learner sweeps a parameter and validates its input
with ``labutil.validate`` (a bad value raises ValueError naming the parameter).

Sources of the formulas:

- ``train_flops``: C ≈ 6·N·D (Kaplan et al. 2020, "Scaling Laws for Neural Language Models",
  §2.1 and Table 1: 2N forward + 4N backward per token; used by Hoffmann et al. 2022 and by the
  Llama 3 paper). With full activation recomputation the hardware executes one more forward
  pass: 8·N·D (Narayanan et al. 2021, §5.1, "end-to-end training time ≈ 8TP/(nX)").
- ``megatron_flops_per_iter``: Narayanan et al. 2021 ("Efficient Large-Scale Language Model
  Training on GPU Clusters Using Megatron-LM", SC21), eq. (3) and its appendix "Floating-point
  operations": F = 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) with activation recomputation.
- ``chinchilla_tokens``: Hoffmann et al. 2022 ("Training Compute-Optimal Large Language
  Models"): compute-optimal tokens ≈ 20 per parameter (Table 3; Chinchilla: 70B on 1.4T tokens).
- ``roofline_tflops``: Williams, Waterman & Patterson 2009, "Roofline: an insightful visual
  performance model" (CACM 52(4)): attainable = min(peak, intensity · memory bandwidth).
- attention traffic: Dao et al. 2022, "FlashAttention", Algorithm 0 and Theorem 2 (standard
  attention reads/writes the s×s score matrix in HBM; the fused kernel does not).
"""

from __future__ import annotations

import numpy as np

from . import validate
from .models import TransformerSpec
from .units import FLOPS_PER_TFLOP, SECONDS_PER_DAY

__all__ = ["BYTES_PER_ELEMENT", "CHINCHILLA_TOKENS_PER_PARAM", "EFFECTIVE_COMPUTE_RANGE", "bytes_per_element",
           "train_flops", "chinchilla_tokens", "attention_flops_per_token", "train_flops_per_token",
           "megatron_flops_per_iter", "RECOMPUTE_MODES", "attention_core_flops_per_token", "model_flops_per_token",
           "FLASH_BWD_PER_FWD", "FLASH_CAUSAL_FRACTION", "attention_passes", "hardware_flops_per_iter",
           "model_flops_per_iter", "GEMM_EFF_MAX", "GEMM_TOKENS_HALF", "GEMM_WIDTH_HALF", "gemm_efficiency",
           "MAMF_FRACTION", "MAMF_SAME_SILICON", "GEMM_CALIBRATION_GPU", "gemm_ceiling_scale", "mfu",
           "mfu_from_throughput", "mfu_cluster", "hfu", "effective_cluster_tflops", "time_to_train_s",
           "dense_compute_time_s", "time_to_train_days", "gpus_for_deadline", "roofline_tflops", "ridge_intensity",
           "gemm_flops", "gemm_bytes", "gemm_intensity", "ATTENTION_KINDS", "attention_flops", "attention_bytes",
           "attention_intensity", "TrainingPlan", "plan_training", "FLOAT_FORMATS", "float_format_info"]

#: Bytes per element of the usual training / inference number formats.
BYTES_PER_ELEMENT = {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}

#: Compute-optimal tokens per parameter (Hoffmann et al. 2022: Chinchilla 70B on 1.4T tokens).
CHINCHILLA_TOKENS_PER_PARAM = 20.0

#: The seed's "effective compute is 40-70 % of peak" (source course intro, seed 004 §1.1).
EFFECTIVE_COMPUTE_RANGE = (0.40, 0.70)
#: Cluster-level MFU that published large training runs report or imply, lowest to highest (ch04, ch24):
#: 34 %: GPT-3 175B on 1,024 A100 at 140 TFLOP/s per GPU with full recompute (Narayanan et al. 2021 §5.1;
#: 140/312 is the HFU, the MFU computed from it is 33.7 %, ``published_runs.utilisation_evidence``);
#: 55 %: MegaScale, 175B on 12,288 GPUs, 55.2 % MFU (Jiang et al., NSDI 2024, abstract), with Korthikanti
#: et al. 2022's 530B on 2,240 A100 at 54.2 % (abstract). Llama 3 405B reports 38-43 % (Table 4).
PUBLISHED_MFU_RANGE = (0.34, 0.55)


_out = validate.scalar_or_array  # Python float for 0-d results, the array otherwise

def bytes_per_element(precision: str) -> int:
    """Bytes per element of a number format ('bf16' -> 2, 'fp8' -> 1, ...)."""
    validate.choice("precision", precision, tuple(BYTES_PER_ELEMENT))
    return BYTES_PER_ELEMENT[precision]


# -- training FLOPs -------------------------------------------------------------------------
def train_flops(params, tokens, *, recompute: bool = False):
    """Training FLOPs C = 6·N·D (8·N·D of executed FLOPs with full activation recomputation).

    params: N, parameter count (> 0); tokens: D, training tokens (> 0). Kaplan et al. 2020 §2.1;
    the 8·N·D variant is Narayanan et al. 2021 §5.1. GPT-3 175B on 300B tokens: 3.14e23
    (Brown et al. 2020, Table D.1).
    """
    n = validate.positive("params", params)
    d = validate.positive("tokens", tokens)
    return _out((8.0 if recompute else 6.0) * np.asarray(n) * np.asarray(d))


def chinchilla_tokens(params, tokens_per_param=CHINCHILLA_TOKENS_PER_PARAM):
    """Compute-optimal training tokens D ≈ 20·N (Hoffmann et al. 2022, Table 3)."""
    n = validate.positive("params", params)
    r = validate.positive("tokens_per_param", tokens_per_param)
    return _out(np.asarray(n) * np.asarray(r))


def attention_flops_per_token(spec: TransformerSpec, seq_len=None):
    """Training FLOPs per token of the attention score/value products: 12·l·s·h.

    Not part of 6·N (those matmuls have no weights). From eq. (3) of Narayanan et al. 2021:
    72·B·s·l·h²·s/(6h) = 12·B·s²·l·h per batch, i.e. 12·l·s·h per token (non-causal count).
    """
    s = spec.seq_len if seq_len is None else validate.positive("seq_len", seq_len)
    return _out(12.0 * spec.layers * np.asarray(s, dtype=float) * spec.hidden)


def flop_params(spec: TransformerSpec) -> float:
    """N of C = 6·N·D: the parameters each token multiplies.

    All of a dense model's; the ACTIVE ones of a mixture-of-experts model (the top-k routed plus the
    shared experts, attention and embeddings, ``TransformerSpec.active_params``): DeepSeek-V3 has 671B
    parameters and activates 37B per token (DeepSeek-V3 report, abstract and §4.2), so its 14.8T tokens
    cost 6 × 37B × 14.8T ≈ 3.3e24 FLOPs, not 6 × 671B × 14.8T ≈ 6.0e25. Memory, checkpoints and the
    gradient sync of the experts still scale with the total (``spec.params()``).
    """
    _spec(spec)
    return float(spec.active_params() if spec.is_moe else spec.params())


def train_flops_per_token(spec: TransformerSpec, seq_len=None):
    """6·N + 12·l·s·h: training FLOPs per token including attention (Megatron eq. (3) style).

    N is :func:`flop_params` (the active parameters of an MoE)."""
    return _out(6.0 * flop_params(spec) + np.asarray(attention_flops_per_token(spec, seq_len)))


def megatron_flops_per_iter(spec: TransformerSpec, global_batch, seq_len=None, recompute: bool = False):
    """FLOPs of one training iteration of a GPT-style model, Narayanan et al. 2021 eq. (3).

    With full activation recomputation (``recompute=True``: forward, recomputed forward and a
    backward pass costing two forwards, i.e. 4 forward passes for the transformer layers; the
    logit layer is not recomputed, 3 passes) the paper's eq. (3) is::

        F = 96·B·s·l·h² · (1 + s/(6h) + V/(16·l·h))

    Without recomputation the layers run 3 forward-equivalents::

        F = 72·B·s·l·h² · (1 + s/(6h) + V/(12·l·h))

    (the logit term 6·B·s·h·V is the same in both). The count assumes the GPT layout
    (4h MLP, full multi-head attention), as the paper does; B = global batch in sequences.
    """
    if not isinstance(spec, TransformerSpec):
        raise ValueError(f"spec must be a TransformerSpec; got {type(spec).__name__}")
    b = np.asarray(validate.positive("global_batch", global_batch), dtype=float)
    s = np.asarray(spec.seq_len if seq_len is None else validate.positive("seq_len", seq_len), dtype=float)
    l, h, v = float(spec.layers), float(spec.hidden), float(spec.vocab)
    if recompute:
        f = 96.0 * b * s * l * h**2 * (1.0 + s / (6.0 * h) + v / (16.0 * l * h))
    else:
        f = 72.0 * b * s * l * h**2 * (1.0 + s / (6.0 * h) + v / (12.0 * l * h))
    return _out(f)


RECOMPUTE_MODES = ("none", "selective", "full")


def _spec(spec):
    if not isinstance(spec, TransformerSpec):
        raise ValueError(f"spec must be a labutil.models.TransformerSpec; got {type(spec).__name__}")
    return spec


def attention_core_flops_per_token(spec: TransformerSpec, seq_len=None):
    """Forward FLOPs per token of the attention score and value products, all layers: 2·s·(d_qk + d_v)·heads·l.

    Standard attention (d_qk = d_v = head_dim): 4·l·s·q_dim, i.e. 4·l·s·h for GPT (one third of the
    12·l·s·h training term of Narayanan et al. 2021 eq. 3). MLA (DeepSeek-V3) has d_qk = head_dim +
    rope_head_dim. Non-causal count, as Megatron's formulas use.
    """
    _spec(spec)
    s = np.asarray(spec.seq_len if seq_len is None else validate.positive("seq_len", seq_len), dtype=float)
    d_qk = spec.head_dim + (spec.rope_head_dim if spec.is_mla else 0)
    return _out(2.0 * spec.layers * s * spec.heads * (d_qk + spec.head_dim))


def model_flops_per_token(spec: TransformerSpec, seq_len=None):
    """Model FLOPs per trained token (forward + backward, no recomputation): 6·(N_act + V·h) + 3·attention.

    N_act = parameters of the transformer layers a token multiplies (all of a dense model; the top-k
    routed + shared experts of an MoE, ``TransformerSpec.non_embedding_params(active=True)``); V·h is
    the output (logit) layer; the attention score/value products add 3 × the forward count of
    :func:`attention_core_flops_per_token`. For GPT-style specs this is Korthikanti et al. 2022's
    model FLOPs 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)) per token (to the bias/norm terms).
    """
    _spec(spec)
    dense = 6.0 * (float(spec.non_embedding_params(active=True)) + float(spec.vocab) * spec.hidden)
    return _out(dense + 3.0 * np.asarray(attention_core_flops_per_token(spec, seq_len)))


#: FlashAttention's backward pass recomputes S = QKᵀ and P = softmax(S) inside the kernel (it never
#: stores them), so its backward runs 5 score-sized GEMMs against the forward's 2: 2.5× the forward FLOPs,
#: fwd + bwd = 3.5× (Dao et al. 2022 §3.1 / Dao 2023, FlashAttention-2 §3.1.2; the FLOP count of
#: Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py, ``flops``: bwd = 2.5·f, fwd_bwd = 3.5·f).
#: An unfused attention's backward is 2× its forward, like every other matrix product.
FLASH_BWD_PER_FWD = 2.5
#: Share of the s × s score tiles a CAUSAL FlashAttention kernel computes: the tiles wholly above the
#: diagonal are skipped, so it executes half the non-causal FLOPs (same benchmark: ``// (2 if causal else
#: 1)``). An unfused attention (Megatron-LM's baddbmm + fused scale-mask-softmax) computes the whole s × s
#: product and masks it afterwards: no saving there.
FLASH_CAUSAL_FRACTION = 0.5


def attention_passes(recompute: str = "none", flash_attention: bool = False) -> float:
    """Executed attention-core FLOPs of one training step, in units of its (non-causal) forward count.

    - unfused attention (``flash_attention=False``, Megatron-LM before flash kernels): forward 1 +
      backward 2 = 3; ``"selective"`` recomputes the core as Korthikanti et al. 2022 count it in Eq. 8
      (the s/(6h) term doubled: +3, i.e. 6, which reproduces their Table 5 HFU/MFU ratios, e.g. 22B:
      43.7 % / 41.5 %); ``"full"`` re-runs the forward: 4.
    - FlashAttention: forward 1 + backward 2.5 (S and P recomputed in the kernel, :data:`FLASH_BWD_PER_FWD`)
      = 3.5, whatever the recompute mode says about the core: the s×s activations are never stored, so
      Korthikanti's selective recompute has nothing left to recompute (the kernel already does it);
      ``"full"`` re-runs the forward kernel too: 4.5. Causal masking (× :data:`FLASH_CAUSAL_FRACTION`)
      is applied by the callers that time or count executed FLOPs (:func:`hardware_flops_per_iter`).
    """
    validate.choice("recompute", recompute, RECOMPUTE_MODES)
    if not isinstance(flash_attention, (bool, np.bool_)):
        raise ValueError(f"flash_attention must be a bool; got {flash_attention!r}")
    if flash_attention:
        return 1.0 + FLASH_BWD_PER_FWD + (1.0 if recompute == "full" else 0.0)
    return {"none": 3.0, "selective": 6.0, "full": 4.0}[recompute]


def hardware_flops_per_iter(spec: TransformerSpec, batch, seq_len=None, recompute: str = "none", *,
                            flash_attention: bool = False, causal: bool = True):
    """FLOPs the GPUs execute in one iteration of ``batch`` sequences, recomputation included.

    Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models",
    arXiv:2205.05198), §6 (GPT-style specs; generalised per token as in :func:`model_flops_per_token`):

    - ``"none"``: the model FLOPs, 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h))            (Eq. 7)
    - ``"selective"``: the attention core is recomputed,
      72·B·s·l·h²·(1 + s/(3h) + V/(12·l·h)): the s/(6h) term counted twice           (Eq. 8)
      (GPT-3 175B, s = 2048: 2.7 % more than the model FLOPs)
    - ``"full"``: every layer's forward pass runs again (4 passes instead of 3; the logit layer is
      not recomputed): 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h))  (Narayanan et al. 2021, eq. 3)

    ``flash_attention=True`` (a fused FlashAttention kernel): the attention core costs 3.5 forward
    counts (4.5 with full recompute) whatever ``recompute`` says (:func:`attention_passes`), and with
    ``causal=True`` (every decoder LM here) the kernel skips the masked half of the score tiles
    (:data:`FLASH_CAUSAL_FRACTION`). So for Llama 3 405B at s = 131,072 the executed attention is
    1.75 forward counts against the model FLOPs' 3: hardware FLOPs can be BELOW the model FLOPs at long
    context, because the MFU convention (PaLM's 6N + 12·l·h·s, :func:`model_flops_per_token`) counts the
    masked half too. ``causal`` has no effect without flash attention (an unfused kernel computes the
    whole s×s product).

    ``batch`` in sequences (arrays broadcast). Hardware FLOPs / (time · GPUs · peak) is the HFU;
    model FLOPs over the same denominator is the MFU.
    """
    _spec(spec)
    validate.choice("recompute", recompute, RECOMPUTE_MODES)
    if not isinstance(causal, (bool, np.bool_)):
        raise ValueError(f"causal must be a bool; got {causal!r}")
    b = np.asarray(validate.positive("batch", batch), dtype=float)
    s = np.asarray(spec.seq_len if seq_len is None else validate.positive("seq_len", seq_len), dtype=float)
    per_token = np.asarray(model_flops_per_token(spec, s))
    attn_fwd = np.asarray(attention_core_flops_per_token(spec, s))
    passes = attention_passes(recompute, flash_attention)
    frac = FLASH_CAUSAL_FRACTION if (flash_attention and causal) else 1.0
    per_token = per_token + (passes * frac - 3.0) * attn_fwd
    if recompute == "full":
        per_token = per_token + 2.0 * float(spec.non_embedding_params(active=True))
    return _out(b * s * per_token)


def model_flops_per_iter(spec: TransformerSpec, batch, seq_len=None):
    """Model FLOPs of one iteration (:func:`hardware_flops_per_iter` without recomputation)."""
    return hardware_flops_per_iter(spec, batch, seq_len, "none")


# -- GEMM efficiency as a function of the shapes a parallel layout produces -----------------------
#: Calibrated constants of :func:`gemm_efficiency`. Fitted (``published_runs.calibration_grid``) by
#: minimising the largest |error| / tolerance over ``published_runs.CALIBRATION_RUNS`` (Narayanan et al.
#: 2021 Tables 1-2, Korthikanti et al. 2022 Table 5, GPT-3 on 1,024 A100, Llama 2 70B GPU-hours, Llama 3
#: 405B MFU) and nothing else. Last re-fitted (2026-12) after the time outside the GEMMs became measured
#: per layer type (``steptime.NONGEMM_BYTES``, fused or eager kernels per run) and ZeRO/FSDP traffic per
#: micro-batch, on eff_max ∈ {0.745, 0.75, 0.755}, tokens_half ∈ {24, 32, 40}, width_half ∈ {110, 120, 130}
#: after a coarser pass over 0.74-0.78, 32-96, 100-200. Re-checked after the cluster model's later changes on
#: eff_max ∈ {0.745 … 0.76}, tokens_half ∈ {16, 24, 32}, width_half ∈ {110, 130, 150}: every calibration row
#: inside its tolerance, the worst at 92 % of it (Korthikanti 22B, SP + selective), mean |error| 3.6 %; the grid's
#: best point (0.76, 32, 130) reaches 90 % and moves no held-out row by more than 0.5 points, so the constants
#: stay (tests/test_published_runs.py checks they are within 0.02 of the grid's best). The held-out rows
#: (``published_runs.HELD_OUT_RUNS``: BLOOM, MT-NLG, LLaMA-65B, Llama 2 7B/13B; ``MTNLG_SCALING``,
#: ``LLAMA1_TABLE15``) were never fitted. ``python -m labutil.published_runs`` prints every table.
GEMM_EFF_MAX = 0.755
GEMM_TOKENS_HALF = 24.0
GEMM_WIDTH_HALF = 130.0


def gemm_efficiency(tokens, width, *, eff_max=None, tokens_half=None, width_half=None):
    """Fraction of dense peak a transformer layer's matrix multiplies reach on one GPU.

    A saturating, monotone model of the two GEMM dimensions a layout controls::

        eff = eff_max · tokens/(tokens + tokens_half) · width/(width + width_half)

    ``tokens``: rows of each GEMM on this GPU, micro_batch · seq_len / cp (sequence parallelism
    gathers the full sequence before the GEMMs); ``width``: the narrowest per-GPU GEMM dimension,
    hidden / tp (tensor parallelism splits the output of the first and the input of the second
    matrix of each block). Large GEMMs approach ``eff_max`` (cuBLAS reaches ~80 % of the dense peak
    on big BF16 shapes); thin ones (small micro-batch × sequence, wide TP) fall off. Arrays broadcast.
    """
    m = np.asarray(validate.positive("tokens", tokens), dtype=float)
    w = np.asarray(validate.positive("width", width), dtype=float)
    e = GEMM_EFF_MAX if eff_max is None else validate.fraction("eff_max", eff_max)
    m0 = GEMM_TOKENS_HALF if tokens_half is None else validate.positive("tokens_half", tokens_half, allow_zero=True)
    w0 = GEMM_WIDTH_HALF if width_half is None else validate.positive("width_half", width_half, allow_zero=True)
    return _out(e * m / (m + m0) * w / (w + w0))


#: Maximum achievable matmul FLOPS (MAMF): the best mean TFLOP/s of one GPU's matmul over a search of
#: shapes, as a share of its dense peak. S. Bekman, "Machine Learning Engineering Open Book",
#: compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS comparison table" (mamf-finder.py,
#: v2 tables, mean of 100 iterations): BF16 A100 SXM 271.2 of 312, H100 SXM 794.5 of 989, MI300X
#: 668.4 of 1,300; FP8 (e4m3) H100 SXM 1,402.6 of 1,979.
MAMF_FRACTION = {("A100-80G-SXM", "bf16"): 271.2 / 312.0, ("H100-SXM", "bf16"): 794.5 / 989.0,
                 ("H100-SXM", "fp8"): 1402.6 / 1979.0, ("MI300X", "bf16"): 668.4 / 1300.0}
#: GPUs without a measurement of their own that use the same die at the same clocks and power (an
#: assumption, not a measurement): A800 = A100 silicon (interconnect cut), H800 = H100 silicon
#: (interconnect cut), H200 SXM = the same GH100 compute die at the same 700 W, with more HBM.
MAMF_SAME_SILICON = {"A800-SXM": "A100-80G-SXM", "H800-SXM": "H100-SXM", "H200-SXM": "H100-SXM"}
#: The GPU the GEMM-efficiency constants above were fitted on (every calibration row with a fitted
#: share of the time ran on A100: Narayanan 2021, Korthikanti 2022, Llama 2).
GEMM_CALIBRATION_GPU = "A100-80G-SXM"


def gemm_ceiling_scale(gpu: str, precision: str = "bf16") -> float:
    """How much of :data:`GEMM_EFF_MAX` (fitted on A100) ``gpu``'s matmuls in ``precision`` reach.

    MAMF(gpu, precision) / MAMF(A100, bf16) from :data:`MAMF_FRACTION`: an H100 reaches 80.3 % of its
    BF16 peak where an A100 reaches 86.9 %, so the same GEMM shape runs at 0.924 of the A100-fitted
    efficiency on an H100 (0.816 for H100 FP8 GEMMs). 1.0 where no measurement exists (the A100 value is
    then the assumption). ``gpu`` is a catalog name (``labutil.hardware``); aliases are resolved.
    """
    from .hardware import gpu as lookup

    name = lookup(gpu).name if isinstance(gpu, str) else getattr(gpu, "name", None)
    if name is None:
        raise ValueError(f"gpu must be a catalog GPU name or a labutil.hardware.GPU; got {gpu!r}")
    validate.choice("precision", precision, tuple(BYTES_PER_ELEMENT))
    key = MAMF_SAME_SILICON.get(name, name)
    base = MAMF_FRACTION[(GEMM_CALIBRATION_GPU, "bf16")]
    frac = MAMF_FRACTION.get((key, precision))
    return 1.0 if frac is None else float(frac / base)


# -- time, GPUs, efficiency -----------------------------------------------------------------
def mfu(achieved_tflops, peak_tflops):
    """Model FLOPs utilisation: achieved (model) TFLOP/s per GPU divided by the dense peak.

    Chowdhery et al. 2022 (PaLM), Appendix B. Raises ValueError if achieved exceeds the peak.
    The course's one MFU definition is cluster level (:func:`mfu_cluster`): ``achieved_tflops``
    must be model FLOPs / (wall-clock time × GPUs), so every loss — communication, bubbles,
    stragglers — is already in it; do not multiply it by a separate scaling efficiency.
    """
    a = np.asarray(validate.positive("achieved_tflops", achieved_tflops, allow_zero=True))
    p = np.asarray(validate.positive("peak_tflops", peak_tflops))
    ratio = a / p
    if np.any(ratio > 1.0 + 1e-12):
        raise ValueError("achieved_tflops must be <= peak_tflops (MFU in [0, 1]); "
                         f"got achieved/peak = {float(np.max(ratio)):.3g}")
    return _out(np.minimum(ratio, 1.0))


def mfu_from_throughput(tokens_per_s, params, n_gpus, peak_tflops):
    """MFU from a measured training throughput: 6·N·tokens_per_s / (n_gpus · peak)."""
    t = np.asarray(validate.positive("tokens_per_s", tokens_per_s))
    n = np.asarray(validate.positive("params", params))
    g = np.asarray(validate.integer("n_gpus", n_gpus))
    p = np.asarray(validate.positive("peak_tflops", peak_tflops))
    achieved = 6.0 * n * t / g / FLOPS_PER_TFLOP
    return mfu(_out(achieved), _out(p))


def mfu_cluster(model_flops, time_s, n_gpus, peak_tflops):
    """MFU as PaLM and Llama 3 report it: model FLOPs / (wall-clock time × GPUs × dense peak).

    ``model_flops``: the FLOPs the model needs for the work done in ``time_s`` (6·N·D or
    :func:`model_flops_per_iter`), recomputation NOT counted (Chowdhery et al. 2022, PaLM, App. B;
    Dubey et al. 2024, Llama 3, Table 4 report 38-43 % this way, at cluster level: the time includes
    every communication and pipeline loss). Vectorised; raises ValueError above the peak.
    """
    f = np.asarray(validate.positive("model_flops", model_flops, allow_zero=True), dtype=float)
    t = np.asarray(validate.positive("time_s", time_s), dtype=float)
    g = np.asarray(validate.integer("n_gpus", n_gpus), dtype=float)
    p = np.asarray(validate.positive("peak_tflops", peak_tflops), dtype=float)
    return mfu(_out(f / (t * g) / FLOPS_PER_TFLOP), _out(p))


def hfu(hardware_flops, time_s, n_gpus, peak_tflops):
    """Hardware FLOPs utilisation: FLOPs actually executed, recomputation included
    (:func:`hardware_flops_per_iter`), / (time × GPUs × dense peak).

    HFU ≥ MFU when the FLOPs differ only by recomputation (no flash attention); a causal flash kernel
    executes half the attention FLOPs the MFU convention counts, so at long context HFU can be below MFU
    (:func:`hardware_flops_per_iter`). Megatron-LM's "52 % of peak" for the 1T model
    (Narayanan et al. 2021, 163 TFLOP/s per A100 with full recomputation) is an HFU: with 4 passes
    counted instead of 3 the MFU is ≈ 3/4 of it, ≈ 39 % (Chowdhery et al. 2022, App. B, make the
    same distinction). Same formula as :func:`mfu_cluster` on a different numerator.
    """
    return mfu_cluster(validate.positive("hardware_flops", hardware_flops, allow_zero=True), time_s, n_gpus,
                       peak_tflops)


def effective_cluster_tflops(n_gpus, peak_tflops, efficiency):
    """Effective cluster throughput n · peak · efficiency (TFLOP/s), efficiency in (0, 1].

    The seed's rule: effective compute is 40-70 % of the peak (EFFECTIVE_COMPUTE_RANGE).
    """
    g = np.asarray(validate.integer("n_gpus", n_gpus))
    p = np.asarray(validate.positive("peak_tflops", peak_tflops))
    e = np.asarray(validate.fraction("efficiency", efficiency))
    return _out(g * p * e)


def time_to_train_s(total_flops, n_gpus, peak_tflops, mfu):
    """Wall-clock seconds to execute ``total_flops`` on ``n_gpus`` at ``mfu`` of ``peak_tflops``.

    t = C / (n · peak · MFU). Use 6·N·D with MFU, or 8·N·D (recompute) with the hardware FLOPs
    utilisation, as Narayanan et al. 2021 §5.1 do (GPT-3 on 1024 A100 at 140 TFLOP/s: 34 days).
    """
    c = np.asarray(validate.positive("total_flops", total_flops))
    g = np.asarray(validate.integer("n_gpus", n_gpus))
    p = np.asarray(validate.positive("peak_tflops", peak_tflops))
    u = np.asarray(validate.fraction("mfu", mfu))
    return _out(c / (g * p * FLOPS_PER_TFLOP * u))


def dense_compute_time_s(params, tokens, peak_tflops, mfu):
    """Per-GPU compute time of one training step: 6·N·T / (peak × MFU) (moved here from ``labutil.comm``).

    ``tokens`` is the number of tokens one GPU processes per optimizer step (micro-batch ×
    sequence length × accumulation steps). 6 FLOPs per parameter per token for forward + backward
    (Kaplan et al. 2020 §2.1; ``train_flops``); attention FLOPs are neglected. For an MoE model pass
    the ACTIVE parameters (``models.TransformerSpec.active_params()``): only the routed experts compute.
    """
    return time_to_train_s(train_flops(params, tokens), 1, peak_tflops, mfu)


def time_to_train_days(total_flops, n_gpus, peak_tflops, mfu):
    """``time_to_train_s`` in days."""
    return _out(np.asarray(time_to_train_s(total_flops, n_gpus, peak_tflops, mfu)) / SECONDS_PER_DAY)


def gpus_for_deadline(total_flops, days, peak_tflops, mfu):
    """Smallest whole number of GPUs that executes ``total_flops`` within ``days``.

    n = ceil(C / (days · 86400 · peak · MFU)). Returns an int (or an int64 array).
    """
    c = np.asarray(validate.positive("total_flops", total_flops))
    d = np.asarray(validate.positive("days", days))
    p = np.asarray(validate.positive("peak_tflops", peak_tflops))
    u = np.asarray(validate.fraction("mfu", mfu))
    exact = c / (d * SECONDS_PER_DAY * p * FLOPS_PER_TFLOP * u)
    # guard against 1024.0000000002 -> 1025 from rounding in the division
    n = np.maximum(np.ceil(exact * (1.0 - 1e-12)), 1.0).astype(np.int64)
    if np.any(n >= np.iinfo(np.int64).max // 2):
        raise ValueError("gpus_for_deadline: the requested work needs an absurd number of GPUs; "
                         "check total_flops, days and mfu")
    return int(n) if n.ndim == 0 else n


# -- roofline and arithmetic intensity -------------------------------------------------------
def roofline_tflops(intensity_flop_per_byte, peak_tflops, mem_gbs):
    """Attainable TFLOP/s = min(peak, intensity · bandwidth) (Williams et al. 2009).

    intensity in FLOP/byte (>= 0), peak in TFLOP/s, memory bandwidth in GB/s (1e9 B/s).
    """
    i = np.asarray(validate.positive("intensity_flop_per_byte", intensity_flop_per_byte, allow_zero=True))
    p = np.asarray(validate.positive("peak_tflops", peak_tflops))
    bw = np.asarray(validate.positive("mem_gbs", mem_gbs))
    return _out(np.minimum(p, i * bw * 1e9 / FLOPS_PER_TFLOP))


def ridge_intensity(peak_tflops, mem_gbs):
    """Roofline ridge point: the intensity (FLOP/byte) where peak = intensity · bandwidth."""
    p = np.asarray(validate.positive("peak_tflops", peak_tflops))
    bw = np.asarray(validate.positive("mem_gbs", mem_gbs))
    return _out(p * FLOPS_PER_TFLOP / (bw * 1e9))


def gemm_flops(m, n, k):
    """FLOPs of C[m,n] = A[m,k] · B[k,n]: 2·m·n·k (one multiply and one add per term)."""
    m_ = np.asarray(validate.positive("m", m))
    n_ = np.asarray(validate.positive("n", n))
    k_ = np.asarray(validate.positive("k", k))
    return _out(2.0 * m_ * n_ * k_)


def gemm_bytes(m, n, k, bytes_per_elem=2):
    """Minimum memory traffic of a GEMM: read A (m·k) and B (k·n), write C (m·n), in bytes."""
    m_ = np.asarray(validate.positive("m", m))
    n_ = np.asarray(validate.positive("n", n))
    k_ = np.asarray(validate.positive("k", k))
    b = np.asarray(validate.positive("bytes_per_elem", bytes_per_elem))
    return _out(b * (m_ * k_ + k_ * n_ + m_ * n_))


def gemm_intensity(m, n, k, bytes_per_elem=2):
    """Arithmetic intensity of a GEMM, FLOP/byte: 2mnk / (bytes · (mk + kn + mn)).

    Square n×n×n in BF16: n/3 FLOP/byte. A matrix-vector product (m = 1) stays near 1 FLOP/byte.
    """
    return _out(np.asarray(gemm_flops(m, n, k)) / np.asarray(gemm_bytes(m, n, k, bytes_per_elem)))


ATTENTION_KINDS = ("flash", "naive", "decode")


def attention_flops(seq_len, head_dim, kind: str = "flash"):
    """FLOPs of one head's attention (forward): QKᵀ and P·V.

    'flash' / 'naive' (prefill / training, s queries × s keys, non-causal): 4·s²·d.
    'decode' (one new query against s cached keys): 4·s·d.
    """
    validate.choice("kind", kind, ATTENTION_KINDS)
    s = np.asarray(validate.positive("seq_len", seq_len))
    d = np.asarray(validate.positive("head_dim", head_dim))
    return _out(4.0 * s * d if kind == "decode" else 4.0 * s * s * d)


def attention_bytes(seq_len, head_dim, bytes_per_elem=2, kind: str = "flash", queries_per_kv=1):
    """HBM traffic of one head's attention (forward), bytes.

    'flash': Q, K, V read and O written once: 4·s·d elements (Dao et al. 2022, Theorem 2, with
    SRAM large enough for one tile pass). 'naive': also writes and reads the s×s scores S and
    probabilities P: 4·s·d + 4·s² elements (Dao et al. 2022, Algorithm 0). 'decode': read the
    K and V caches (2·s·d) once for ``queries_per_kv`` query heads (GQA group), plus q and o.
    """
    validate.choice("kind", kind, ATTENTION_KINDS)
    s = np.asarray(validate.positive("seq_len", seq_len))
    d = np.asarray(validate.positive("head_dim", head_dim))
    b = np.asarray(validate.positive("bytes_per_elem", bytes_per_elem))
    g = np.asarray(validate.integer("queries_per_kv", queries_per_kv))
    if kind == "flash":
        elems = 4.0 * s * d
    elif kind == "naive":
        elems = 4.0 * s * d + 4.0 * s * s
    else:
        elems = (2.0 * s * d + 2.0 * g * d) / g  # KV read once per GQA group, shared by g heads
    return _out(b * elems)


def attention_intensity(seq_len, head_dim, bytes_per_elem=2, kind: str = "flash", queries_per_kv=1):
    """Arithmetic intensity (FLOP/byte) of attention for one head.

    flash: s/bytes (grows with sequence length); naive: s·d/(bytes·(d + s)) -> d/bytes for long
    sequences (the s×s traffic caps it); decode: ≈ 2·g/bytes, about 1 FLOP/byte in BF16 without
    GQA: decoding attention is memory-bound on every GPU.
    """
    f = np.asarray(attention_flops(seq_len, head_dim, kind))
    by = np.asarray(attention_bytes(seq_len, head_dim, bytes_per_elem, kind, queries_per_kv))
    return _out(f / by)


# -- a whole plan, for the explorers and exercises ------------------------------------------
from dataclasses import dataclass  # noqa: E402


@dataclass(frozen=True)
class TrainingPlan:
    """Result of ``plan_training``: the compute budget and what it means on a GPU type."""

    model: str
    params: float
    tokens: float
    total_flops: float
    gpu: str
    peak_tflops: float
    mfu: float
    n_gpus: int
    days: float
    deadline_days: float
    gpus_for_deadline: int
    chinchilla_tokens: float
    gpu_hours: float
    n_grid: np.ndarray
    days_grid: np.ndarray
    active_params: float = float("nan")   # N of 6·N·D (:func:`flop_params`); == params for a dense model
    is_moe: bool = False


def plan_training(model: str, tokens, gpu: str, mfu, n_gpus, deadline_days, precision: str = "bf16",
                  n_grid=None) -> TrainingPlan:
    """Budget a training run: 6·N·D, days on ``n_gpus``, GPUs to finish within ``deadline_days``.

    model: preset name (labutil.models); gpu: catalog name (labutil.hardware); tokens: D.
    N is :func:`flop_params`: the active parameters of a mixture-of-experts model (``params`` keeps
    the total, for memory); the Chinchilla token count uses the total (Hoffmann et al.'s rule is for
    dense models). ``n_grid`` (default 8 … 131072, powers of two) gives the days-vs-GPUs curve.
    """
    from .hardware import gpu as gpu_spec
    from .models import transformer

    spec = transformer(model)
    g = gpu_spec(gpu)
    peak = g.peak_tflops(precision)
    n = validate.integer("n_gpus", n_gpus)
    n_flop = flop_params(spec)
    total = train_flops(n_flop, tokens)
    grid = np.asarray(2 ** np.arange(3, 18) if n_grid is None else validate.integer("n_grid", n_grid))
    days = time_to_train_days(total, n, peak, mfu)
    return TrainingPlan(
        model=spec.name, params=float(spec.params()), tokens=float(validate.positive("tokens", tokens)),
        total_flops=total, gpu=g.name, peak_tflops=peak, mfu=float(mfu), n_gpus=n, days=days,
        deadline_days=float(validate.positive("deadline_days", deadline_days)),
        gpus_for_deadline=gpus_for_deadline(total, deadline_days, peak, mfu),
        chinchilla_tokens=chinchilla_tokens(spec.params()), gpu_hours=days * 24.0 * n,
        n_grid=grid, days_grid=time_to_train_days(total, grid, peak, mfu), active_params=n_flop,
        is_moe=bool(spec.is_moe))


# -- number formats -------------------------------------------------------------------------
#: (exponent bits, mantissa bits, storage bits) of the formats tensor cores use.
#: IEEE 754-2008 (fp64/fp32/fp16); bfloat16 (Google; Kalamkar et al. 2019); TF32 (NVIDIA A100
#: whitepaper, 2020: fp32 range with a 10-bit mantissa, stored in 32 bits); FP8 E4M3 / E5M2
#: (Micikevicius et al. 2022, "FP8 Formats for Deep Learning"; OCP 8-bit floating point spec).
FLOAT_FORMATS = {
    "fp64": (11, 52, 64), "fp32": (8, 23, 32), "tf32": (8, 10, 32), "bf16": (8, 7, 16),
    "fp16": (5, 10, 16), "fp8_e5m2": (5, 2, 8), "fp8_e4m3": (4, 3, 8),
}


def float_format_info(name: str) -> dict:
    """Exponent/mantissa bits, largest finite value and relative precision (2^-mantissa) of a format.

    Largest finite value: (2 - 2^-m) · 2^(2^(e-1) - 1) for IEEE-style formats; FP8 E4M3 gives up
    infinities and uses the top exponent for numbers, so its maximum is 1.75 · 2^8 = 448
    (Micikevicius et al. 2022, Table 1).
    """
    validate.choice("name", name, tuple(FLOAT_FORMATS))
    e, m, bits = FLOAT_FORMATS[name]
    bias = 2 ** (e - 1) - 1
    if name == "fp8_e4m3":
        max_value = (2.0 - 2.0 ** -(m - 1)) * 2.0 ** (2 ** e - 1 - bias)
    else:
        max_value = (2.0 - 2.0 ** -m) * 2.0 ** bias
    return {"name": name, "exponent_bits": e, "mantissa_bits": m, "storage_bits": bits,
            "max_value": max_value, "epsilon": 2.0 ** -m}
