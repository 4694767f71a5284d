"""labutil.inference and labutil.explore.inference: validation against published numbers,
properties (hypothesis) and the explorer driven headlessly."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labutil import inference as I
from labutil.models import transformer


# -- validation against published numbers ---------------------------------------------------
def test_kv_per_token_llama2_13b_matches_vllm_paper():
    # Kwon et al. 2023 (vLLM), §3: "2 (key and value) x 5120 (hidden) x 40 (layers) x 2 (bytes per FP16)"
    # = 819,200 B, quoted as "800 KB".
    assert I.kv_bytes_per_token("llama2-13b") == 2 * 5120 * 40 * 2
    assert I.kv_bytes_per_token("llama2-13b") / 1024 == pytest.approx(800.0)


def test_kv_cache_opt13b_style_request_1_6_gb():
    # vLLM paper §3: a 2048-token request of a 13B model (40 layers, hidden 5120) "can be as large as 1.6 GB".
    assert I.kv_cache_gb("llama2-13b", 1, 2048) == pytest.approx(1.68, rel=0.01)


def test_gqa_shrinks_kv_by_heads_over_kv_heads():
    # Ainslie et al. 2023 §2.2: GQA caches kv_heads instead of heads. llama2-70b: 64 heads, 8 KV heads.
    spec = transformer("llama2-70b")
    mha = 2 * spec.layers * spec.heads * spec.head_dim * 2
    assert I.kv_bytes_per_token(spec) == pytest.approx(mha / 8)
    assert I.kv_bytes_per_token("llama3-70b") == 2 * 80 * 8 * 128 * 2  # 327,680 B


def test_tp_splits_kv_and_replicates_beyond_kv_heads():
    full = I.kv_bytes_per_token("llama3-8b")
    assert I.kv_bytes_per_token("llama3-8b", tp=4) == pytest.approx(full / 4)
    assert I.kv_bytes_per_token("llama3-8b", tp=8) == pytest.approx(full / 8)
    with pytest.raises(ValueError, match="tp"):
        I.kv_bytes_per_token("llama3-8b", tp=3)


def test_erlang_c_textbook_values():
    # M/M/2 at a = 1 Erlang (rho = 0.5): C = (a^2/2!)(2/(2-1)) / (1 + a + (a^2/2!)(2/(2-1))) = 1/3 (Kleinrock §3.5)
    assert I.erlang_c(2, 1.0) == pytest.approx(1 / 3)
    # M/M/1: P(wait) = rho
    assert I.erlang_c(1, 0.7) == pytest.approx(0.7)
    # direct sum formula for a larger case, and the recursion path (c large) agrees with it
    c, a = 11, 10.0
    top = a**c / math.factorial(c) * c / (c - a)
    direct = top / (sum(a**k / math.factorial(k) for k in range(c)) + top)
    assert I.erlang_c(c, a) == pytest.approx(direct, rel=1e-10)
    big_c = np.array([3000])
    assert I.erlang_b(big_c, np.array([2900.0]))[0] == pytest.approx(
        I._erlang_b(np.array([3000]), np.array([2900.0]))[0], rel=1e-9)


def _simulate_fcfs(lam, c, service, n, rng):
    """Discrete-event FCFS c-server queue; returns sojourn times."""
    arr = np.cumsum(rng.exponential(1 / lam, n))
    free = np.zeros(c)
    out = np.empty(n)
    for i, t in enumerate(arr):
        j = np.argmin(free)
        start = max(t, free[j])
        free[j] = start + service[i]
        out[i] = free[j] - t
    return out


@pytest.mark.parametrize("cv2", [0.0, 1.0])
def test_p99_matches_simulation(cv2):
    rng = np.random.default_rng(1)
    lam, c, s = 800.0, 16, 0.018  # rho = 0.9
    n = 60_000
    service = np.full(n, s) if cv2 == 0.0 else rng.exponential(s, n)
    sim = np.quantile(_simulate_fcfs(lam, c, service, n, rng)[5000:], 0.99) * 1e3
    model = I.p99_latency_ms(lam, c, s * 1e3, service_cv2=cv2, routing="pooled")
    # M/M/c: exact wait tail + service (the sum of quantiles bounds the quantile of the sum from above);
    # M/D/c: the Allen-Cunneen approximation. Both within 25 % and not optimistic by more than 10 %.
    assert model == pytest.approx(sim, rel=0.25)
    assert model >= 0.9 * sim


def test_decode_is_memory_bound_at_small_batch():
    # Pope et al. 2022 §3.1: at small batch the weight loads dominate generation.
    st1 = I.decode_step("llama3-8b", "H100-SXM", 1, 1024)
    assert bool(st1.memory_bound)
    # time ~ weights / (HBM BW * eff): 16.06 GB / (3350 GB/s * 0.8) = 5.99 ms
    assert st1.time_s * 1e3 == pytest.approx(16.06e9 / 3350e9 / 0.8 * 1e3 + 1024 * 131072 / 3350e9 / 0.8 * 1e3, rel=0.01)
    big = I.decode_step("llama3-8b", "H100-SXM", 4096, 128)
    assert not bool(big.memory_bound)


def test_int4_decode_faster_than_bf16():
    a = I.llm_replica("llama3-8b", "L40S", "bf16", batch=1).tpot_ms
    b = I.llm_replica("llama3-8b", "L40S", "int4", batch=1).tpot_ms
    assert b < a / 3


def test_prefill_compute_bound_and_ttft():
    p = I.prefill("llama3-8b", "H100-SXM", 4096)
    assert p.compute_s > p.memory_s
    flops = 2 * I.matmul_params("llama3-8b") * 4096 + 2 * 32 * 4096 * 4096**2
    assert p.flops == pytest.approx(flops)


def test_max_batch_and_fit_errors():
    # (80 * 0.9 - 16.06) GB / (8192 * 131072 B) = 52.1 -> 52
    assert I.max_batch("llama3-8b", "H100-SXM", 8192) == 52
    assert I.max_batch("llama3-70b", "H100-SXM", 8192) == 0
    with pytest.raises(ValueError, match="does not fit"):
        I.llm_replica("llama3-70b", "L4")
    with pytest.raises(ValueError, match="fp8"):
        I.decode_step("llama3-8b", "A100-80G-SXM", 1, 128, precision="fp8")


def test_static_batching_wastes_slots():
    assert I.static_batching_utilization([10, 10, 10, 10], 2) == 1.0
    assert I.static_batching_utilization([1, 9, 1, 9], 2) == pytest.approx(20 / 36)


def test_gpus_for_slo_naive_count_is_not_enough():
    s = I.cv_batch_ms("L40S", 1, gflops_per_image=I.cv_model("vit_h_14_518")[0], params=I.cv_model("vit_h_14_518")[1])
    plan = I.gpus_for_slo(1000, 100, s)
    assert plan.naive_replicas == math.ceil(1000 * s / 1e3)
    assert plan.replicas > plan.naive_replicas
    assert I.p99_latency_ms(1000, plan.replicas, s) <= 100
    assert I.p99_latency_ms(1000, plan.replicas - 1, s) > 100
    with pytest.raises(ValueError, match="unloaded latency"):
        I.gpus_for_slo(10, 5, s)


def test_max_qps_per_replica_consistent_with_search():
    for s, m in ((14.5, 1), (42.5, 1), (6000.0, 256)):
        per = I.max_qps_per_replica(100.0 if s < 100 else 20000.0, s, slots_per_replica=m)
        for q in (50.0, 700.0, 3000.0):
            r = I.gpus_for_slo(q, 100.0 if s < 100 else 20000.0, s, slots_per_replica=m).replicas
            assert abs(math.ceil(q / per) - r) <= 1


def test_bad_inputs():
    with pytest.raises(ValueError, match="batch"):
        I.kv_cache_gb("llama3-8b", -1, 10)
    with pytest.raises(KeyError, match="llama3-8b"):
        I.kv_cache_gb("llama3-8", 1, 10)
    with pytest.raises(ValueError, match="precision"):
        I.weights_gb("llama3-8b", "int3")
    with pytest.raises(ValueError, match="utilisation"):
        I.p99_latency_ms(1000, 1, 10.0)
    with pytest.raises(ValueError, match="qps"):
        I.gpus_for_slo(float("nan"), 100, 10)


def test_parse_perf_analyzer():
    text = I.SAMPLE_PERF_ANALYZER
    rows = I.parse_perf_analyzer(text)
    assert [r.concurrency for r in rows] == [1, 2, 4, 8]
    assert rows[0].throughput_infer_s > 0 and rows[-1].p99_latency_ms > rows[0].p99_latency_ms
    for bad in ("", "garbage\n", None, 42):
        with pytest.raises(I.PerfAnalyzerParseError):
            I.parse_perf_analyzer(bad)
    from labutil.parsers import ParseError  # issue 19 step 8: every parser raises a ParseError subclass
    assert issubclass(I.PerfAnalyzerParseError, ParseError)


# -- properties -----------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(q1=st.floats(1, 3000), dq=st.floats(0, 3000), s=st.floats(0.5, 60), b=st.sampled_from([1, 4, 8]),
       routing=st.sampled_from(["random", "pooled"]))
def test_more_qps_never_needs_fewer_gpus(q1, dq, s, b, routing):
    target = 2.5 * s + 5
    bs = s * (1 + 0.3 * (b - 1))
    try:
        a = I.gpus_for_slo(q1, target, bs, batch=b, queue_delay_ms=2.0, routing=routing).gpus
    except ValueError:
        return
    c = I.gpus_for_slo(q1 + dq, target, bs, batch=b, queue_delay_ms=2.0, routing=routing).gpus
    assert c >= a


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(["llama3-8b", "llama3-70b", "llama2-13b", "gpt3-175b"]),
       batch=st.integers(1, 512), seq=st.integers(1, 32768))
def test_more_bytes_never_less_memory(model, batch, seq):
    order = ["int4", "int8", "fp8", "bf16"]
    w = [I.weights_gb(model, p) for p in order]
    assert w == sorted(w)
    assert I.kv_cache_gb(model, batch, seq, 1) <= I.kv_cache_gb(model, batch, seq, 2)
    assert I.kv_cache_gb(model, batch, seq) == pytest.approx(batch * I.kv_cache_gb(model, 1, seq))


@settings(max_examples=30, deadline=None)
@given(lam=st.floats(10, 900), c=st.integers(1, 40))
def test_p99_decreases_with_replicas(lam, c):
    s = 10.0
    if lam * s / 1e3 >= c:
        return
    assert I.p99_latency_ms(lam, c + 1, s) <= I.p99_latency_ms(lam, c, s) + 1e-9
    assert I.p99_latency_ms(lam, c, s) >= s


def test_vectorised_sweeps():
    tok, tpot = I.throughput_curve("llama3-8b", "H100-SXM", np.array([1, 8, 64]), 1024)
    assert tok.shape == (3,) and np.all(np.diff(tok) > 0) and np.all(np.diff(tpot) >= 0)
    p = I.p99_latency_ms(np.array([100.0, 500.0, 900.0]), 16, 14.5)
    assert p.shape == (3,) and np.all(np.diff(p) > 0)


# -- explorer and figures ---------------------------------------------------------------------
def test_serving_explorer_headless():
    from labutil.explore import inference as E

    ex = E.serving_explorer()
    assert ex.error is None
    r0 = ex.result
    assert r0["plan"].gpus % 4 == 0
    ex.set(precision="fp8")
    assert ex.result["rep"].weights_gb == pytest.approx(r0["rep"].weights_gb / 2)
    ex.set(qps=150.0)
    assert ex.result["plan"].gpus >= r0["plan"].gpus
    line = ex.figure._serving_artists["g_line"]
    assert np.allclose(line.get_xdata(), ex.result["qgrid"])
    ex.set(batch=1024)  # clamped to the KV limit
    assert ex.result["clamped"] and ex.result["rep"].batch == ex.result["max_batch"]
    with pytest.raises(ValueError, match="tp"):  # does not fit: the setting is not offered (issue 9)
        ex.set(model="llama3-70b", gpu="L4", tp=1)
    assert 1 not in ex.controls["tp"].options and ex.error is None


def test_figures_build(tmp_path):
    from labutil.explore import inference as E
    from labutil.plotting import save_png

    for f in (E.memory_figure(), E.decode_roofline_figure(), E.p99_vs_load_figure(), E.cv_gpus_figure()):
        assert f.axes and save_png(f, tmp_path / "f.png").stat().st_size > 1000


def test_tp_comm_goes_through_the_cluster_model():
    # issue 8: the TP all-reduces use the cluster's in-node model (NVLS / ring at achievable busbw),
    # not the NVLink line rate: 2 x layers all-reduces of tokens x hidden x 2 bytes
    from labutil.cluster import Cluster

    spec = transformer("llama2-70b")
    c = Cluster.system("DGX-H100")
    size = 256 * spec.hidden * 2.0
    expect = 2 * spec.layers * c.collective_time_s("all_reduce", size, 8)
    assert I.tp_comm_s("llama2-70b", "H100-SXM", 256, tp=8) == pytest.approx(expect)
    assert I.tp_comm_s("llama2-70b", "H100-SXM", 256, tp=8, cluster=c) == pytest.approx(expect)
    # large messages: the per-all-reduce bandwidth term is at NVLS busbw 480 GB/s (> the 450 line rate)
    big = 1e6 * spec.hidden * 2.0
    t = I.tp_comm_s("llama2-70b", "H100-SXM", 1e6, tp=8) / (2 * spec.layers)
    assert big * 2 * 7 / 8 / t / 1e9 == pytest.approx(480, rel=0.01)
    # A100 has no NVLS: ring busbw 230 GB/s (systems.toml), slower than H100
    assert I.tp_comm_s("llama2-70b", "A100", 1e6, tp=8) > 1.9 * I.tp_comm_s("llama2-70b", "H100-SXM", 1e6, tp=8)
    # a PCIe card still works (PCIe 4.0 x16 line rate as the upper bound)
    assert I.tp_comm_s("llama2-70b", "L40S", 256, tp=8) > I.tp_comm_s("llama2-70b", "H100-SXM", 256, tp=8)
    assert I.tp_comm_s("llama2-70b", "H100-SXM", 256, tp=1) == 0.0
    with pytest.raises(TypeError):
        I.tp_comm_s("llama2-70b", "H100-SXM", 256, tp=8, cluster="DGX-H100")


# -- MLA, mixture of experts, pipeline parallelism (ch25 §3.1) ------------------------------------
def test_mla_caches_the_latent_not_the_heads():
    # DeepSeek-V2 §2.1.3 / Table 1: MLA caches (d_c + d_h^R) * l elements per token; DeepSeek-V3
    # config.json: kv_lora_rank 512, qk_rope_head_dim 64, 61 layers -> 61 * 576 * 2 B = 70,272 B (BF16).
    assert I.is_mla("deepseek-v3") and not I.is_mla("llama3-70b")
    assert I.kv_bytes_per_token("deepseek-v3") == 61 * (512 + 64) * 2
    spec = transformer("deepseek-v3")
    mha = 2 * spec.layers * spec.heads * spec.head_dim * 2
    assert mha / I.kv_bytes_per_token(spec) > 50          # 3.99 MB vs 70 kB per token
    # the latent is one KV head: TP does not split it (SGLang "DP attention" docs)
    assert I.kv_bytes_per_token("deepseek-v3", tp=8) == I.kv_bytes_per_token("deepseek-v3")
    assert I.kv_heads_per_gpu("deepseek-v3", tp=8) == 1


def test_pipeline_stages_split_weights_and_kv():
    # Llama-3.1-405B BF16: ~811 GB; tp=8 -> ~101 GB per GPU (> 80 GB), tp=8 x pp=2 -> ~51 GB.
    w8 = I.weights_gb("llama3-405b", "bf16", tp=8)
    assert 100 < w8 < 103
    assert I.weights_gb("llama3-405b", "bf16", tp=8, pp=2) == pytest.approx(w8 / 2)
    assert I.weights_gb("llama3-405b", "fp8", tp=8) == pytest.approx(w8 / 2)
    assert I.kv_bytes_per_token("llama3-70b", pp=2) == pytest.approx(I.kv_bytes_per_token("llama3-70b") / 2)
    with pytest.raises(ValueError, match="pp"):
        I.weights_gb("llama3-70b", "bf16", pp=0)


def test_experts_touched_is_k_at_batch_one_and_saturates():
    assert I.experts_touched("deepseek-v3", 1) == pytest.approx(8.0)
    assert I.experts_touched("mixtral-8x7b", 1) == pytest.approx(2.0)
    n = np.asarray(I.experts_touched("deepseek-v3", np.array([1, 2, 8, 64, 256, 4096])))
    assert np.all(np.diff(n) > 0) and n[-1] <= 256 and n[-1] > 255.9
    # two tokens: 2k minus the expected overlap k^2/E
    assert I.experts_touched("deepseek-v3", 2) == pytest.approx(16 - 64 / 256)
    assert I.experts_touched("llama3-8b", 64) == 0.0


def test_moe_decode_reads_active_weights_at_batch_one_and_all_at_large_batch():
    spec = transformer("deepseek-v3")
    b1 = I.decode_weight_bytes(spec, 1, "fp8")
    assert b1 == pytest.approx(spec.active_params(), rel=1e-9)            # 37.6B active, 1 byte each
    big = I.decode_weight_bytes(spec, 4096, "fp8")
    assert big == pytest.approx(spec.params(), rel=1e-4)
    assert I.decode_weight_bytes("llama3-8b", 1) == pytest.approx(transformer("llama3-8b").params() * 2)
    # the decode step of an MoE: FLOPs from active parameters, bytes grow with the batch
    st1 = I.decode_step("deepseek-v3", "H200-SXM", 1, 1024, "fp8", tp=8)
    st64 = I.decode_step("deepseek-v3", "H200-SXM", 64, 1024, "fp8", tp=8)
    assert st64.bytes > 10 * st1.bytes and np.asarray(st64.memory_bound)
    assert st1.flops == pytest.approx((2 * I.matmul_params(spec) + 4 * spec.layers * spec.hidden * 1024) / 8)
    assert I.matmul_params(spec) < 0.06 * spec.params()
