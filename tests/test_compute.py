"""Compute sizing models: validation against published numbers, properties, input checks."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from labutil import compute as C
from labutil import compute
from labutil.hardware import gpu
from labutil.models import transformer

A100_BF16 = gpu("A100-80G-SXM").bf16_tflops  # 312 TFLOP/s, the peak Narayanan et al. 2021 use


# -- validation against published results ---------------------------------------------------
def test_gpt3_training_compute_table_d1():
    # Brown et al. 2020, Table D.1: GPT-3 175B, 300B tokens, 3.14e23 FLOPs (3.64e3 PF-days).
    flops = C.train_flops(transformer("gpt3-175b").params(), 300e9)
    assert flops == pytest.approx(3.14e23, rel=0.01)
    assert flops / (1e15 * 86400) == pytest.approx(3.64e3, rel=0.01)


def test_llama3_405b_training_compute():
    # Dubey et al. 2024 (The Llama 3 Herd of Models): 405B on 15.6T tokens, 3.8e25 FLOPs.
    assert C.train_flops(transformer("llama3-405b").params(), 15.6e12) == pytest.approx(3.8e25, rel=0.01)


def test_chinchilla_70b_tokens_and_compute():
    # Hoffmann et al. 2022: Chinchilla 70B on 1.4T tokens, same budget as Gopher (5.76e23 FLOPs).
    assert C.chinchilla_tokens(70e9) == pytest.approx(1.4e12)
    assert C.train_flops(70e9, C.chinchilla_tokens(70e9)) == pytest.approx(5.76e23, rel=0.03)


def test_megatron_end_to_end_estimates_section_5_1():
    # Narayanan et al. 2021 §5.1: time ≈ 8TP/(nX). GPT-3 175B, 300B tokens, 1024 A100 at
    # X = 140 TFLOP/s -> "around 34 days"; 1T model, 450B tokens, 3072 A100 at 163 TFLOP/s -> "84 days".
    gpt3 = C.train_flops(175e9, 300e9, recompute=True)
    assert C.time_to_train_days(gpt3, 1024, A100_BF16, 140 / A100_BF16) == pytest.approx(34, abs=0.5)
    p1t = transformer("megatron-gpt-1t").params()
    one_t = C.train_flops(p1t, 450e9, recompute=True)
    assert C.time_to_train_days(one_t, 3072, A100_BF16, 163 / A100_BF16) == pytest.approx(84, abs=0.5)
    # Table 1: 163 TFLOP/s per GPU is 52 % of the A100's 312 TFLOP/s peak; 3072 x 163 = 502 PFLOP/s
    assert C.mfu(163, A100_BF16) == pytest.approx(0.52, abs=0.005)
    assert C.effective_cluster_tflops(3072, A100_BF16, 163 / A100_BF16) / 1e3 == pytest.approx(502, rel=0.005)


def test_megatron_eq3_per_token_is_8N_plus_attention():
    # Eq. (3) with recompute: per token 8·P_layers + attention + 6·V·h (logits not recomputed).
    spec = transformer("megatron-gpt-175b")
    b, s = 1536, spec.seq_len
    f = C.megatron_flops_per_iter(spec, b, recompute=True)
    l, h, v = spec.layers, spec.hidden, spec.vocab
    per_token = 96 * l * h * h * (1 + s / (6 * h) + v / (16 * l * h))
    assert f == pytest.approx(b * s * per_token, rel=1e-12)
    assert f / (b * s) == pytest.approx(8 * 12 * l * h * h + 16 * l * s * h + 6 * v * h, rel=1e-12)
    # without recompute: 3/4 of the layer FLOPs, same logit FLOPs
    f3 = C.megatron_flops_per_iter(spec, b, recompute=False)
    assert f3 / (b * s) == pytest.approx(6 * 12 * l * h * h + 12 * l * s * h + 6 * v * h, rel=1e-12)
    # and it is close to 6N·tokens (the attention term adds s/(6h) = 2.8 %)
    assert f3 / C.train_flops(spec.params(), b * s) == pytest.approx(1 + s / (6 * h), rel=0.01)


def test_llama3_mfu_table_4():
    # Dubey et al. 2024, Table 4: 8,192 H100 at 430 TFLOP/s per GPU = 43 % BF16 MFU (peak 989).
    assert C.mfu(430, gpu("H100-SXM").bf16_tflops) == pytest.approx(0.43, abs=0.01)


def test_seed_effective_compute_40_to_70_percent():
    lo, hi = C.EFFECTIVE_COMPUTE_RANGE
    peak = gpu("H100-SXM").bf16_tflops
    eff = C.effective_cluster_tflops(1000, peak, np.array([lo, hi]))
    assert eff.tolist() == pytest.approx([1000 * peak * 0.4, 1000 * peak * 0.7])


def test_mfu_from_throughput_roundtrip():
    # 1,000 H100 at 40 % MFU on a 70B model process 0.4·989.4e12·1000 / (6·70e9) tokens/s
    tps = 0.4 * 989.4e12 * 1000 / (6 * 70e9)
    assert C.mfu_from_throughput(tps, 70e9, 1000, 989.4) == pytest.approx(0.4)


# -- roofline and intensity ------------------------------------------------------------------
def test_roofline_ridge_and_regions():
    h100 = gpu("H100-SXM")
    ridge = C.ridge_intensity(h100.bf16_tflops, h100.hbm_gbs)
    assert ridge == pytest.approx(h100.ridge_flop_per_byte)
    assert ridge == pytest.approx(295.3, rel=1e-3)
    assert C.roofline_tflops(ridge, h100.bf16_tflops, h100.hbm_gbs) == pytest.approx(h100.bf16_tflops)
    assert C.roofline_tflops(1.0, h100.bf16_tflops, h100.hbm_gbs) == pytest.approx(3.35)  # 3350 GB/s x 1 FLOP/B
    assert C.roofline_tflops(1e4, h100.bf16_tflops, h100.hbm_gbs) == h100.bf16_tflops


def test_gemm_intensity_closed_forms():
    # square n x n x n in BF16: 2n^3 / (2 * 3 n^2) = n/3
    assert C.gemm_intensity(4096, 4096, 4096, 2) == pytest.approx(4096 / 3)
    # GEMV: 2 n^2 / (2 (n^2 + 2n)) ~ 1 FLOP/byte
    assert C.gemm_intensity(1, 8192, 8192, 2) == pytest.approx(8192 / (8192 + 2))
    assert C.gemm_flops(2, 3, 4) == 48 and C.gemm_bytes(2, 3, 4, 1) == 8 + 12 + 6


def test_attention_intensity_closed_forms():
    s, d = 8192, 128
    assert C.attention_intensity(s, d, 2, "flash") == pytest.approx(s / 2)
    assert C.attention_intensity(s, d, 2, "naive") == pytest.approx(s * d / (2 * (d + s)))
    assert C.attention_intensity(s, d, 2, "naive") < d / 2
    # decode without GQA ~ 1 FLOP/byte in BF16; an 8-way GQA group reads the cache once for 8 heads
    assert C.attention_intensity(s, d, 2, "decode") == pytest.approx(1.0, rel=1e-3)
    assert C.attention_intensity(s, d, 2, "decode", queries_per_kv=8) == pytest.approx(8.0, rel=1e-2)


def test_vectorised_shapes():
    n = np.array([256, 512, 1024])
    t = C.time_to_train_s(1e24, n, 989.4, 0.4)
    assert t.shape == (3,) and np.all(np.diff(t) < 0)
    g = C.gpus_for_deadline(1e24, np.array([10, 20, 40]), 989.4, 0.4)
    assert g.dtype == np.int64 and g.tolist() == sorted(g.tolist(), reverse=True)
    assert C.roofline_tflops(np.logspace(-1, 4, 50), 989.4, 3350).shape == (50,)
    assert C.gemm_intensity(np.array([1, 16, 256]), 4096, 4096).shape == (3,)
    assert isinstance(C.train_flops(1e9, 1e9), float)
    assert isinstance(C.gpus_for_deadline(1e24, 30, 989.4, 0.4), int)


def test_gpus_for_deadline_exact_division():
    # exactly 1024 GPUs' worth of work must not round up to 1025
    work = 1024 * 30 * 86400 * 989.4e12 * 0.4
    assert C.gpus_for_deadline(work, 30, 989.4, 0.4) == 1024


# -- properties -----------------------------------------------------------------------------
flops = st.floats(1e18, 1e27)
peaks = st.floats(10, 5000)
mfus = st.floats(0.01, 1.0)


@given(flops, st.integers(1, 100_000), peaks, mfus)
def test_time_decreases_with_gpus_and_mfu(c, n, p, u):
    t = C.time_to_train_s(c, n, p, u)
    assert t > 0 and math.isfinite(t)
    assert C.time_to_train_s(c, n + 1, p, u) < t
    assert C.time_to_train_s(c, n, p, min(1.0, u * 1.1)) <= t


@given(flops, st.floats(0.5, 1000), peaks, mfus)
def test_gpus_for_deadline_covers_the_work(c, days, p, u):
    n = C.gpus_for_deadline(c, days, p, u)
    per_gpu = days * 86400 * p * 1e12 * u
    assert n >= 1
    assert n * per_gpu >= c * (1 - 1e-9)
    if n > 1:
        assert (n - 1) * per_gpu < c * (1 + 1e-9)  # minimal
    assert C.time_to_train_days(c, n, p, u) <= days * (1 + 1e-9)


@given(st.floats(0, 1e6), peaks, st.floats(10, 20000))
def test_roofline_never_exceeds_peak(i, p, bw):
    r = C.roofline_tflops(i, p, bw)
    assert 0 <= r <= p
    assert r <= i * bw / 1e3 + 1e-9


@given(st.integers(1, 1 << 16), st.integers(1, 1 << 16), st.integers(1, 1 << 16))
def test_gemm_intensity_bounded_by_min_dim(m, n, k):
    # 2mnk / (2(mk + kn + mn)) <= min(m, n, k) in BF16 (each term of the denominator >= ...)
    assert C.gemm_intensity(m, n, k, 2) <= min(m, n, k) + 1e-9


# -- input validation -----------------------------------------------------------------------
@pytest.mark.parametrize("call, word", [
    (lambda: C.train_flops(-1, 1e9), "params"),
    (lambda: C.train_flops(1e9, float("nan")), "tokens"),
    (lambda: C.time_to_train_s(1e24, 0, 989, 0.4), "n_gpus"),
    (lambda: C.time_to_train_s(1e24, 8, 989, 1.5), "mfu"),
    (lambda: C.time_to_train_s(1e24, 8, 989, 0), "mfu"),
    (lambda: C.gpus_for_deadline(1e24, 0, 989, 0.4), "days"),
    (lambda: C.mfu(1000, 989.4), "achieved_tflops"),
    (lambda: C.effective_cluster_tflops(8, 989, 0), "efficiency"),
    (lambda: C.roofline_tflops(-1, 989, 3350), "intensity"),
    (lambda: C.gemm_intensity(0, 1, 1), "m"),
    (lambda: C.attention_intensity(1024, 128, kind="sparse"), "kind"),
    (lambda: C.bytes_per_element("fp4x"), "precision"),
    (lambda: C.megatron_flops_per_iter("gpt3", 8), "spec"),
])
def test_bad_input_raises_naming_parameter(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_float_formats_match_numpy_and_fp8_paper():
    # IEEE formats against numpy; FP8 maxima from Micikevicius et al. 2022, Table 1 (448, 57344).
    for name, dt in [("fp64", np.float64), ("fp32", np.float32), ("fp16", np.float16)]:
        info = C.float_format_info(name)
        assert info["max_value"] == float(np.finfo(dt).max)
        assert info["epsilon"] == float(np.finfo(dt).eps)
    assert C.float_format_info("fp8_e4m3")["max_value"] == 448.0
    assert C.float_format_info("fp8_e5m2")["max_value"] == 57344.0
    assert C.float_format_info("bf16")["max_value"] == pytest.approx(3.3895e38, rel=1e-4)
    with pytest.raises(ValueError, match="name"):
        C.float_format_info("fp4")


def test_flops_per_token_with_attention():
    # Narayanan et al. 2021 eq. (3), per token without recompute: 6N-like layer term + 12·l·s·h
    spec = transformer("llama3-8b")
    assert C.attention_flops_per_token(spec) == 12 * 32 * 8192 * 4096
    assert C.attention_flops_per_token(spec, 2048) == pytest.approx(C.attention_flops_per_token(spec) / 4)
    assert C.train_flops_per_token(spec) == pytest.approx(6 * spec.params() + 12 * 32 * 8192 * 4096)
    with pytest.raises(ValueError, match="seq_len"):
        C.attention_flops_per_token(spec, 0)


def test_plan_training_consistent():
    plan = C.plan_training("llama2-7b", 2e12, "A100", 0.5, 1024, 30)
    total = C.train_flops(transformer("llama2-7b").params(), 2e12)
    assert plan.gpu == "A100-80G-SXM" and plan.peak_tflops == 312.0
    assert plan.days == pytest.approx(total / (1024 * 312e12 * 0.5) / 86400)
    assert plan.gpu_hours == pytest.approx(plan.days * 24 * 1024)
    assert plan.gpus_for_deadline == C.gpus_for_deadline(total, 30, 312, 0.5)
    with pytest.raises(KeyError):
        C.plan_training("gpt-5", 1e12, "H100", 0.4, 8, 30)
    with pytest.raises(ValueError, match="mfu"):
        C.plan_training("llama2-7b", 1e12, "H100", 1.4, 8, 30)


# -- hardware FLOPs with recomputation (Korthikanti et al. 2022 Eq. 7/8; Narayanan 2021 eq. 3) ---------
def test_hardware_flops_per_iter_matches_papers():
    from labutil.compute import hardware_flops_per_iter, megatron_flops_per_iter, model_flops_per_iter

    g = transformer("megatron-gpt-175b")
    b, s, l, h, v = 1536, 2048, 96, 12288, 51200
    model = 72 * b * s * l * h**2 * (1 + s / (6 * h) + v / (12 * l * h))          # Eq. 7
    selective = 72 * b * s * l * h**2 * (1 + s / (3 * h) + v / (12 * l * h))      # Eq. 8
    full = 96 * b * s * l * h**2 * (1 + s / (6 * h) + v / (16 * l * h))           # Narayanan eq. 3
    assert model_flops_per_iter(g, b, s) == pytest.approx(model, rel=2e-4)        # bias/norm terms only
    assert hardware_flops_per_iter(g, b, s, "selective") == pytest.approx(selective, rel=2e-4)
    assert hardware_flops_per_iter(g, b, s, "full") == pytest.approx(full, rel=2e-4)
    assert hardware_flops_per_iter(g, b, s, "full") == pytest.approx(megatron_flops_per_iter(g, b, s, True), rel=2e-4)
    # selective recompute costs GPT-3 2.7 % more FLOPs (not 0.9 %)
    overhead = hardware_flops_per_iter(g, b, s, "selective") / model_flops_per_iter(g, b, s) - 1
    assert overhead == pytest.approx(0.027, abs=0.001)
    arr = hardware_flops_per_iter(g, np.array([1, 2]), s, "none")
    assert arr[1] == pytest.approx(2 * arr[0])
    with pytest.raises(ValueError, match="recompute"):
        hardware_flops_per_iter(g, b, s, "partial")
    with pytest.raises(ValueError, match="batch"):
        hardware_flops_per_iter(g, 0, s)
    with pytest.raises(ValueError, match="TransformerSpec"):
        hardware_flops_per_iter("gpt3", 1, s)


def test_moe_flops_use_active_params():
    from labutil.compute import model_flops_per_token

    mix = transformer("mixtral-8x7b")
    per_token = model_flops_per_token(mix, 4096)
    # 6 x (active layer params + output head) + 12·l·s·h of attention (1.1B-equivalent at 4K):
    # ~6 x 13.8B, far below 6 x 46.7B
    assert 6 * 12.9e9 < per_token < 6 * 15.0e9
    assert model_flops_per_token(mix, 4096) - model_flops_per_token(mix, 2048) == pytest.approx(12 * 32 * 2048 * 4096)
    ds = transformer("deepseek-v3")       # 36.6B active + MLA attention (128 heads x (192 + 128) dims)
    assert 6 * 36.6e9 < model_flops_per_token(ds, 4096) < 6 * 50e9


def test_gemm_efficiency_saturating_and_monotone():
    from labutil.compute import GEMM_EFF_MAX, gemm_efficiency

    tokens = np.array([256, 1024, 4096, 16384])
    e = gemm_efficiency(tokens, 3072)
    assert np.all(np.diff(e) > 0) and np.all(e < GEMM_EFF_MAX)
    widths = 12288 / np.array([8, 4, 2, 1])                       # tp = 8, 4, 2, 1
    assert np.all(np.diff(gemm_efficiency(2048, widths)) > 0)    # wider TP -> thinner GEMMs -> slower
    assert gemm_efficiency(1e9, 1e9) == pytest.approx(GEMM_EFF_MAX, rel=1e-6)
    for bad in (0, -1, float("nan")):
        with pytest.raises(ValueError):
            gemm_efficiency(bad, 1024)
    with pytest.raises((TypeError, ValueError)):
        gemm_efficiency("2048", 1024)


# -- executed attention FLOPs: unfused (Korthikanti) vs FlashAttention ----------------------------------
def test_selective_recompute_hfu_matches_korthikanti_table5():
    # Korthikanti et al. 2022, Table 5 (SP + selective recompute, no flash attention): MFU / HFU
    # 41.5/43.7 (22B), 51.4/52.8 (175B), 56.0/57.0 (530B), 56.3/57.0 (1T); HFU/MFU is the Eq. 8 / Eq. 7 ratio.
    from labutil.published_runs import gpt_spec

    rows = (("22B", 64, 6144, 48, 41.5, 43.7), ("175B", 96, 12288, 96, 51.4, 52.8),
            ("530B", 128, 20480, 105, 56.0, 57.0), ("1T", 160, 25600, 128, 56.3, 57.0))
    for name, a, h, layers, mfu_pct, hfu_pct in rows:
        spec = gpt_spec(name, a, h, layers)
        ratio = C.hardware_flops_per_iter(spec, 1, 2048, "selective") / C.model_flops_per_iter(spec, 1, 2048)
        assert mfu_pct * ratio == pytest.approx(hfu_pct, abs=0.1), name


def test_flash_attention_executed_flops():
    # FlashAttention's backward recomputes S = QKᵀ and P in the kernel: 2.5x the forward FLOPs, 3.5x in all;
    # a causal kernel skips the masked half (Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py,
    # flops(): f = 4·s²·h·d // (2 if causal else 1); bwd = 2.5 f; fwd_bwd = 3.5 f).
    assert C.FLASH_BWD_PER_FWD == 2.5 and C.FLASH_CAUSAL_FRACTION == 0.5
    assert [C.attention_passes(r, False) for r in ("none", "selective", "full")] == [3.0, 6.0, 4.0]
    assert [C.attention_passes(r, True) for r in ("none", "selective", "full")] == [3.5, 3.5, 4.5]
    l3 = transformer("llama3-405b")
    s = 131072
    attn = C.attention_core_flops_per_token(l3, s)            # forward, non-causal, per token
    model = C.model_flops_per_token(l3, s)
    fa = {r: C.hardware_flops_per_iter(l3, 1, s, r, flash_attention=True) / s for r in ("none", "selective", "full")}
    # selective recompute is moot under flash attention: it executes exactly what "none" does
    assert fa["selective"] == pytest.approx(fa["none"], rel=1e-12)
    assert fa["none"] == pytest.approx(model + (3.5 * 0.5 - 3.0) * attn, rel=1e-12)
    assert fa["full"] - fa["none"] == pytest.approx(2 * l3.non_embedding_params() + 0.5 * attn, rel=1e-12)
    # at 128K context the causal kernel executes less than the (non-causal) model count: HFU < MFU there
    assert fa["none"] < model
    non_causal = C.hardware_flops_per_iter(l3, 1, s, "none", flash_attention=True, causal=False) / s
    assert non_causal == pytest.approx(model + 0.5 * attn, rel=1e-12)
    # without flash attention nothing changes (Korthikanti Eq. 7/8), and causal has no effect
    for r in ("none", "selective", "full"):
        assert C.hardware_flops_per_iter(l3, 1, s, r) == C.hardware_flops_per_iter(l3, 1, s, r, causal=False)
    with pytest.raises(ValueError, match="flash_attention"):
        C.attention_passes("none", "yes")
    with pytest.raises(ValueError, match="causal"):
        C.hardware_flops_per_iter(l3, 1, s, causal=1)


def test_gemm_ceiling_scale_from_measured_mamf():
    # S. Bekman, ML Engineering Open Book, "Maximum Achievable Matmul FLOPS comparison table" (BF16):
    # A100 SXM 271.2 of 312 TFLOP/s (86.9 %), H100 SXM 794.5 of 989 (80.3 %); FP8 H100 1,402.6 of 1,979 (70.9 %).
    assert C.gemm_ceiling_scale("A100-80G-SXM") == 1.0
    assert C.gemm_ceiling_scale("H100") == pytest.approx((794.5 / 989) / (271.2 / 312), rel=1e-12)
    assert C.gemm_ceiling_scale("H100-SXM") == pytest.approx(0.924, abs=0.001)
    assert C.gemm_ceiling_scale("H100-SXM", "fp8") == pytest.approx(0.815, abs=0.001)
    assert C.gemm_ceiling_scale("H800-SXM") == C.gemm_ceiling_scale("H100-SXM")     # same silicon
    assert C.gemm_ceiling_scale("B200") == 1.0                                       # no measurement: A100 fit
    # corroboration: the flash kernel on H100 then runs at ~35 % of the BF16 peak (head_dim 128, long
    # sequences), the utilisation Shah et al. 2024 (FlashAttention-3, abstract) report for FlashAttention-2
    eff_attn = C.gemm_efficiency(8192, 128) * C.gemm_ceiling_scale("H100-SXM")
    assert eff_attn == pytest.approx(0.35, abs=0.02)
    with pytest.raises(KeyError):
        C.gemm_ceiling_scale("no-such-gpu")
    with pytest.raises(ValueError, match="precision"):
        C.gemm_ceiling_scale("H100-SXM", "fp4")


# -- mixture-of-experts: 6·N·D with the ACTIVE parameters (issue 15 item 2) ---------------------------
def test_moe_compute_uses_active_parameters():
    # DeepSeek-V3 report (arXiv:2412.19437), abstract: 671B parameters, 37B activated per token;
    # Mixtral of Experts (Jiang et al. 2024) §2: 47B parameters, 13B active (12.9B on the model card).
    ds = compute.plan_training("deepseek-v3", 14.8e12, "H800-SXM", 0.35, 2048, 60)
    assert ds.is_moe and ds.params == pytest.approx(671.0e9, rel=0.01)
    assert ds.active_params == pytest.approx(37.6e9, rel=0.01)
    assert ds.total_flops == pytest.approx(6 * ds.active_params * 14.8e12, rel=1e-12)     # ~3.3e24, not 6.0e25
    assert ds.total_flops == pytest.approx(3.3e24, rel=0.02)
    mix = compute.plan_training("mixtral-8x7b", 1e12, "H100-SXM", 0.4, 1024, 30)
    assert mix.total_flops == pytest.approx(6 * 12.88e9 * 1e12, rel=0.01)
    assert mix.params / mix.active_params == pytest.approx(3.63, abs=0.02)
    dense = compute.plan_training("llama3-70b", 15e12, "H100-SXM", 0.4, 8192, 60)
    assert not dense.is_moe and dense.active_params == dense.params
    assert compute.train_flops_per_token(transformer("deepseek-v3")) < 6 * 40e9 + 1e11
    # the step-time model counts the same active FLOPs in its MFU numerator
    m = compute.model_flops_per_token(transformer("deepseek-v3"), 4096)
    assert 6 * 37e9 < m < 6 * 50e9          # + the MLA attention products at 4K context (~25 %)


def test_published_mfu_range_matches_the_evidence():
    # 34 %: GPT-3 on 1,024 A100 at 140 TFLOP/s with full recompute (Narayanan 2021 §5.1) -> MFU 33.7 %;
    # 55 %: MegaScale 55.2 % (NSDI 2024). published_runs.utilisation_evidence computes both.
    from labutil import published_runs as PR
    rows = PR.utilisation_evidence()
    mfus = [float(r["MFU %"].split()[0]) for r in rows if r["MFU %"] != "?"]
    lo, hi = compute.PUBLISHED_MFU_RANGE
    assert round(min(mfus)) == round(100 * lo) and round(max(mfus)) == round(100 * hi)
