"""The step-time model (labutil.parallel) against published training runs (labutil.published_runs).

Every tolerance below is the one issue 8 sets: ±10 % on iteration time / TFLOP/s / GPU-hours, ±5
points on MFU. The published numbers live, with their citation, in labutil/published_runs.py.
"""

import pytest

from labutil import compute, parallel
from labutil import published_runs as PR


@pytest.fixture(scope="module")
def comparisons():
    return {c.run.name: c for c in PR.compare(PR.VALIDATION_RUNS)}


def _check(c, tol):
    assert abs(c.error) <= tol, f"{c.run.name}: model {c.model:.4g} vs published {c.run.published:.4g}"


def test_megatron_table1_tflops_per_gpu(comparisons):
    # Narayanan et al. 2021 (SC'21), Table 1: achieved TFLOP/s per A100 (312 TF peak), 1.7B ... 1T,
    # layouts from the table; at least six rows within ±10 %.
    rows = [comparisons[r.name] for r in PR.MEGATRON_TABLE1]
    assert len(rows) == 10
    assert rows[0].run.published == 137 and rows[-1].run.published == 163
    for c in rows:
        assert (c.estimate.layout.tp, c.estimate.layout.pp) == (c.run.search["tp"], c.run.search["pp"])
        assert c.estimate.layout.recompute == "full"
        _check(c, 0.10)


def test_megatron_table2_gpt3(comparisons):
    # Narayanan et al. 2021, Table 2 (PTD-P): GPT-3 175B, t8 p12, batch 1536: 153 / 149 / 141 TF.
    for r in PR.MEGATRON_TABLE2:
        _check(comparisons[r.name], 0.10)


def test_korthikanti_table5_iteration_times(comparisons):
    # Korthikanti et al. 2022, Table 5: 22B, 175B, 530B, 1T, full recompute and SP + selective.
    rows = [comparisons[r.name] for r in PR.KORTHIKANTI_TABLE5]
    assert [c.run.published for c in rows] == [1.42, 1.10, 18.13, 13.75, 49.05, 37.83, 94.42, 71.49]
    for c in rows:
        _check(c, 0.10)
    # selective recompute + SP is faster than full recompute for every model (the paper's point)
    for full, sel in zip(rows[::2], rows[1::2]):
        assert sel.model < full.model
        assert sel.model / full.model == pytest.approx(sel.run.published / full.run.published, abs=0.05)


def test_gpt3_on_1024_a100_near_megatron(comparisons):
    # Narayanan §5.1: GPT-3 175B on 1,024 A100 at ~140 TFLOP/s per GPU, ~34 days for 300B tokens.
    c = comparisons[PR.GPT3_1024_A100.name]
    _check(c, 0.10)
    assert PR.gpt3_days(c) == pytest.approx(34, rel=0.10)


def test_llama2_70b_gpu_hours(comparisons):
    # Touvron et al. 2023, Table 2: 1,720,320 A100-80GB GPU-hours for Llama 2 70B (2T tokens).
    c = comparisons[PR.LLAMA2_70B.name]
    assert c.run.published == 1_720_320
    _check(c, 0.10)


def test_llama3_405b_mfu(comparisons):
    # Llama 3 paper, Table 4: BF16 MFU 43 % / 41 % / 38 % (8K GPUs; 16K GPUs; 16K GPUs with CP=16).
    rows = [comparisons[r.name] for r in PR.LLAMA3_TABLE4]
    assert [c.run.published for c in rows] == [0.43, 0.41, 0.38]
    for c, pub in zip(rows, (0.43, 0.41, 0.38)):
        assert abs(c.error) <= 5.0, f"{c.run.name}: model MFU {100 * c.model:.1f} %"
        assert abs(c.model - pub) <= 0.05
    assert rows[2].estimate.layout.cp == 16 and rows[2].estimate.layout.world_size == 16384


def test_llama3_table4_rows_are_self_consistent():
    # Table 4 columns GPUs | TP | CP | PP | DP | Seq | Batch size/DP | Tokens/Batch: TP·CP·PP·DP = GPUs and
    # DP · batch/DP · seq = 16M tokens. The arXiv text prints DP = 4 for the CP = 16 row, which gives 8,192
    # GPUs and 8M tokens; DP = 8 satisfies both columns.
    for r, (gpus, cp, dp, seq, per_dp) in zip(PR.LLAMA3_TABLE4, ((8192, 1, 64, 8192, 32), (16384, 1, 128, 8192, 16),
                                                                  (16384, 16, 8, 131072, 16))):
        L = r.layout
        assert (L.tp, L.cp, L.pp, L.dp) == (8, cp, 16, dp) and L.world_size == gpus == r.n_gpus
        assert L.global_batch == dp * per_dp and L.global_batch * seq == 16 * 2**20
        assert r.seq_len == seq
        # §3.3.2: FSDP shards optimizer states AND gradients, weights not resharded after forward: ZeRO-2
        assert L.zero_stage == 2 == PR.LLAMA3_ZERO_STAGE
        # §3.3.2: all-gather CP whose latency is "exposed in the critical path"
        assert r.cp_overlap == 0.0 and r.flash_attention
    with pytest.raises(ValueError, match="must be 16384 GPUs"):
        PR._llama3(16384, 16, 4, 131072, 16, 0.38)


def test_llama3_rows_modelled_memory(comparisons):
    # Llama 3 §3.3.2: FSDP shards optimizer states and gradients (ZeRO-2), no dropout masks, one layer fewer
    # on the first and last of 16 stages: 71.9 GB per GPU for both 16K-GPU rows (inside the course's 72 GB),
    # 72.3 GB for the 8K-GPU row (optimizer sharded 64-way), which the model does not count as fitting
    # by 0.3 GB: inside the 10 % reserve on an 80 GiB (85.9 GB) device; Meta also frees stage inputs early.
    rows = [comparisons[r.name].estimate for r in PR.LLAMA3_TABLE4]
    assert [round(e.memory_gb, 1) for e in rows] == [72.3, 71.9, 71.9]
    assert [e.fits for e in rows] == [False, True, True]
    assert rows[1].memory_gb == pytest.approx(rows[2].memory_gb, rel=1e-9)   # same 8,192 tokens per GPU


def test_megatron_utilisation_pairs():
    # Narayanan et al. 2021: 1T on 3,072 A100 at 163 TFLOP/s per GPU with full recompute = "52 % of peak"
    # (hardware FLOPs, eq. 3); its MFU is lower by the recomputed forward pass.
    t1 = PR.MEGATRON_TABLE1[-1]
    mfu, hfu = PR.utilisation_pair(t1.spec, 2048, "full", 312.0, hw_tflops_per_gpu=163.0)
    assert hfu == pytest.approx(163 / 312, rel=1e-12)
    assert mfu == pytest.approx(0.392, abs=0.001) and mfu / hfu == pytest.approx(0.75, abs=0.005)
    # Korthikanti et al. 2022, abstract: 530B on 2,240 A100, MFU 54.2 % with SP + selective recompute
    s530 = PR.KORTHIKANTI_TABLE5[4].spec
    mfu, hfu = PR.utilisation_pair(s530, 2048, "selective", 312.0, mfu=PR.KORTHIKANTI_530B_2240_MFU["selective"])
    assert mfu == pytest.approx(0.542) and hfu == pytest.approx(0.551, abs=0.001)
    # ... and Table 5's own MFU/HFU pairs are reproduced from the MFU alone
    for label, (m, h) in PR.KORTHIKANTI_TABLE5_UTILISATION.items():
        spec = next(r.spec for r in PR.KORTHIKANTI_TABLE5 if r.spec.name == f"korthikanti-{label}")
        assert 100 * PR.utilisation_pair(spec, 2048, "selective", 312.0, mfu=m / 100)[1] == pytest.approx(h, abs=0.1)
    with pytest.raises(ValueError, match="exactly one"):
        PR.utilisation_pair(s530, 2048, "full", 312.0)


def test_korthikanti_table5_mfu_within_tolerance(comparisons):
    # The model's MFU for the SP + selective rows against Table 5's published MFU (±10 %, as the times).
    for r in PR.KORTHIKANTI_TABLE5[1::2]:
        label = r.spec.name.split("-")[1]
        pub = PR.KORTHIKANTI_TABLE5_UTILISATION[label][0] / 100
        assert comparisons[r.name].estimate.mfu == pytest.approx(pub, rel=0.10), label


def test_every_row_within_tolerance_and_summary(comparisons):
    cs = list(comparisons.values())
    assert all(c.within_tolerance for c in cs)
    s = PR.error_summary(cs)
    assert s["rows"] == len(cs) and s["max_abs_pct"] <= 10.0 and s["mean_abs_pct"] < 6.0
    rows = PR.table_rows(cs)
    assert len(rows) == len(cs) and {"run", "published", "model", "error"} <= set(rows[0])


def test_deepseek_v3_shown_next_to_published():
    # DeepSeek-V3 report: 2.664 M H800 GPU-hours of pre-training (2.788 M in all) for 14.8 T tokens.
    c = PR.compare([PR.DEEPSEEK_V3])[0]
    assert c.run.tolerance == 0 and c.within_tolerance
    assert c.estimate.layout.ep == 64 and c.estimate.ep_comm_s > 0
    assert 1e6 < c.model < 2e7


def test_calibration_grid_reproduces_constants():
    grid = PR.calibration_grid(eff_max=(0.70, compute.GEMM_EFF_MAX), tokens_half=(compute.GEMM_TOKENS_HALF,),
                               width_half=(compute.GEMM_WIDTH_HALF, 512.0), runs=PR.KORTHIKANTI_TABLE5[:2])
    assert len(grid) == 4 and grid == sorted(grid)
    assert compute.GEMM_EFF_MAX == 0.755         # the function leaves the module constants alone
    assert grid[0][0] <= 1.0


def test_gemm_constants_are_a_best_fit_of_the_calibration_rows():
    # The constants minimise the largest |error| / tolerance over CALIBRATION_RUNS (and nothing else): on the
    # neighbouring grid they stay within 0.02 of the best point; the worst row is at 92 % of its tolerance.
    grid = PR.calibration_grid(eff_max=(0.75, compute.GEMM_EFF_MAX, 0.76), tokens_half=(compute.GEMM_TOKENS_HALF, 32.0),
                               width_half=(compute.GEMM_WIDTH_HALF,))
    mine = next(g for g in grid if g[2:] == (compute.GEMM_EFF_MAX, compute.GEMM_TOKENS_HALF, compute.GEMM_WIDTH_HALF))
    assert mine[0] <= 1.0 and mine[0] - grid[0][0] <= 0.02
    assert mine[0] == pytest.approx(0.92, abs=0.01) and mine[1] == pytest.approx(0.036, abs=0.002)


def test_model_metric_names():
    with pytest.raises(ValueError, match="metric"):
        PR.model_value(PR.PublishedRun("x", "y", PR.gpt_spec("g", 8, 1024, 4), "DGX-A100", 8,
                                       parallel.Layout(1, 8, 1, 1, 8), "bogus", 1.0, 0.1))


def test_deepseek_v3_fp8_and_hidden_all_to_all_bracket_the_published_hours():
    # DeepSeek-V3 report: FP8 GEMMs (§3.3) and DualPipe overlap (§3.2.1); 2.664 M pre-training GPU-hours
    rows = PR.deepseek_v3_variants()
    hours = [r["gpu_hours"] for r in rows]
    assert hours[0] > hours[1] > hours[2]
    assert hours[2] < PR.DEEPSEEK_V3.published < hours[1]
    assert rows[2]["ep_comm_s"] == 0.0 and rows[0]["ep_comm_s"] > 0


def test_utilisation_evidence_labels_mfu_and_hfu():
    # ch24's list: every row says what its source reported; Megatron's TFLOP/s are HFU (Narayanan 2021 eq. 3),
    # Korthikanti 2022 / Llama 3 / MegaScale report MFU; OPT-175B (Zhang 2022) does not say.
    rows = {r["run"]: r for r in PR.utilisation_evidence()}
    t1 = rows["Megatron-LM 1T, 3,072 A100 (Narayanan 2021 Table 1)"]
    assert t1["HFU %"] == "52.2" and t1["MFU %"] == "39.2 (computed)"
    g3 = rows["Megatron-LM GPT-3 175B, 1,024 A100 (Narayanan 2021 s5.1)"]
    assert g3["HFU %"] == "44.9" and g3["MFU %"] == "33.7 (computed)"
    k = rows["Megatron-LM 530B, SP + selective, 2,240 A100 (Korthikanti 2022)"]
    assert k["MFU %"] == "54.2" and k["HFU %"] == "55.1 (computed)"
    assert rows["FSDP + Megatron TP, OPT-175B, 992 A100 (Zhang 2022)"]["MFU %"] == "?"
    llama = [r for name, r in rows.items() if "Llama 3" in name]
    assert [r["MFU %"] for r in llama] == ["43.0", "41.0", "38.0"]
    assert all(r["HFU %"] == "not reported" for r in llama)
    assert len(rows) == 8


# -- held-out rows: never given to calibration_grid -------------------------------------------------
@pytest.fixture(scope="module")
def held_out():
    return {c.run.name: c for c in PR.compare(PR.HELD_OUT_RUNS)}


def test_calibration_and_held_out_are_disjoint():
    names = {r.name for r in PR.CALIBRATION_RUNS}
    assert PR.CALIBRATION_RUNS is PR.VALIDATION_RUNS and len(names) == 26
    assert not names & {r.name for r in PR.HELD_OUT_RUNS} and len(PR.HELD_OUT_RUNS) == 5
    assert all(r.tolerance == 0.10 for r in PR.HELD_OUT_RUNS)          # the same ±10 % as the fitted rows
    with pytest.raises(ValueError, match="held-out rows cannot be used"):
        PR.calibration_grid(eff_max=(0.755,), tokens_half=(24.0,), width_half=(130.0,), runs=(PR.BLOOM_176B,))


def test_bloom_176b_held_out(held_out):
    # BigScience tr11-176B-ml: 384 A100, TP4 PP12 DP8, MBS 2, GBS 2048, full recompute; ~150 TFLOP/s (eq. 3)
    c = held_out[PR.BLOOM_176B.name]
    L = c.estimate.layout
    assert (L.tp, L.pp, L.dp, L.micro_batch, L.global_batch, L.recompute) == (4, 12, 8, 2, 2048, "full")
    assert PR.run_cluster(PR.BLOOM_176B).node_net_gbps == 400.0       # 4 x 100 Gb/s Omni-Path per node
    assert c.within_tolerance and c.error == pytest.approx(-0.006, abs=0.01)
    assert PR.BLOOM_176B_SPEC.params() == pytest.approx(176.247e9, rel=0.002)


def test_held_out_result_is_pinned(held_out):
    # The held-out result as it is (never fitted; constants fitted on CALIBRATION_RUNS only, 0.755 / 24 / 130, still
    # their best fit): 3 of 5 inside +-10 % (BLOOM-176B, LLaMA-65B, Llama 2 7B), mean |error| 8.6 %.
    inside = sorted(name for name, c in held_out.items() if c.within_tolerance)
    assert inside == sorted([PR.BLOOM_176B.name, PR.LLAMA1_65B.name, PR.LLAMA2_SMALL[0].name])
    # LLaMA-65B: +13 % before the time outside the GEMMs was measured per layer type; Meta's eager kernels
    # (steptime.NONGEMM_BYTES) and LLaMA §2.4's checkpointing (element-wise ops re-run) account for the rest
    llama1 = held_out[PR.LLAMA1_65B.name]
    assert llama1.run.published == 380.0 and llama1.error == pytest.approx(0.016, abs=0.005)
    assert PR.LLAMA1_65B.options["nongemm_recompute"] and PR.LLAMA2_70B.options["nongemm_recompute"]
    # MT-NLG: the model sits between MT-NLG's 2021 software (126 TFLOP/s) and Korthikanti's run of the same
    # shape on the same 2,240 A100 (full recompute, MFU 42.1 % -> HFU 56.1 %, ~175 TFLOP/s): a software gap
    mt = held_out[PR.MTNLG_530B.name]
    assert not mt.within_tolerance and mt.error == pytest.approx(-0.201, abs=0.005)
    hfu_k = PR.utilisation_pair(PR.MTNLG_530B.spec, 2048, "full", 312.0, mfu=PR.KORTHIKANTI_530B_2240_MFU["full"])[1]
    assert 126.0 < mt.estimate.hw_tflops_per_gpu < 312.0 * hfu_k
    # Llama 2 7B / 13B (Touvron et al. 2023, Table 2): -5.2 % / -15.2 % GPU-hours on the 70B row's 2,048 GPUs; a
    # 1,024-sequence batch caps dp at 1,024, so both run tp = 2 (the fastest layout the search finds)
    l7, l13 = (held_out[r.name] for r in PR.LLAMA2_SMALL)
    assert PR.LLAMA2_SMALL[0].n_gpus == PR.LLAMA2_SMALL[1].n_gpus == PR.LLAMA2_70B.n_gpus == PR.LLAMA2_GPUS == 2048
    assert l7.error == pytest.approx(-0.052, abs=0.005) and l13.error == pytest.approx(-0.152, abs=0.005)
    assert (l7.estimate.layout.tp, l7.estimate.layout.dp) == (2, 1024) and l13.estimate.layout.tp == 2
    s = PR.error_summary(list(held_out.values()))
    assert s["rows"] == 5 and s["mean_abs_pct"] == pytest.approx(8.6, abs=0.2)


def test_llama2_small_rows_depend_on_the_assumed_gpu_count():
    # Table 2 gives no GPU count. On 512 GPUs (the count assumed before) the 7B runs pure data parallelism (tp = 1)
    # and misses by -10.5 %; the 13B is -15.5 % on either count: its gap is not the layout.
    from dataclasses import replace
    c7, c13 = PR.compare([replace(r, n_gpus=512) for r in PR.LLAMA2_SMALL])
    assert c7.estimate.layout.tp == 1 and c7.error == pytest.approx(-0.105, abs=0.005)
    assert c13.error == pytest.approx(-0.155, abs=0.005)


def test_llama2_small_rows_are_not_a_network_question():
    # Llama 2 §2.2.1 and Table 2: 7B, 13B and 70B at 400 W (RSC, InfiniBand), the 34B at 350 W (RoCE production
    # cluster), and RoCE "can scale almost as well as expensive Infiniband up to 2000 GPUs". On the DGX A100 HDR model
    # of RSC the data-parallel traffic of the 7B / 13B hides behind the backward pass whether the gradients are
    # reduced once per step (ZeRO-1) or the weights gathered per layer at one 4,096-token sequence per tp group
    # (FSDP / ZeRO-3): exposed < 2 % of the step, and FSDP moves the error by < 2 points.
    from dataclasses import replace
    assert {k: w for k, (_, w) in PR.LLAMA2_TABLE2_HOURS.items()} == {"7B": 400, "13B": 400, "34B": 350, "70B": 400}
    for r in PR.LLAMA2_SMALL:
        z1, z3 = (PR.compare([replace(r, search={**r.search, "zero_stages": z})])[0] for z in ((1,), (3,)))
        assert z3.estimate.layout.zero_stage == 3 and z3.estimate.layout.micro_batch * 4096 == 4096
        for c in (z1, z3):
            assert c.estimate.dp_exposed_s / c.estimate.step_s < 0.02
        assert abs(z3.error - z1.error) < 0.02


def test_llama1_table15_gpu_hours_held_out():
    # Touvron et al. 2023a (LLaMA), Table 15: 82,432 / 135,168 / 530,432 A100-80GB GPU-hours for LLaMA-7B / 13B / 33B
    # (Table 2: 1.0T / 1.0T / 1.4T tokens, 4M-token batch, 2,048-token sequences; 2,048 GPUs, §2.4). Never fitted;
    # modelled exactly as the Llama 2 rows: -5.4 % / +4.9 % / -1.5 %, all inside +-10 %.
    cs = PR.compare(PR.LLAMA1_TABLE15)
    assert not {r.name for r in PR.LLAMA1_TABLE15} & {r.name for r in PR.CALIBRATION_RUNS}
    assert [c.run.published for c in cs] == [82_432, 135_168, 530_432]
    assert [round(c.run.spec.params() / 1e9, 1) for c in cs] == [6.7, 13.0, 32.5]   # Table 2: 6.7B, 13.0B, 32.5B
    assert [round(100 * c.error, 1) for c in cs] == pytest.approx([-5.4, 4.9, -1.5], abs=0.3)
    assert all(c.within_tolerance for c in cs) and all(c.run.hours_basis == "allocation" for c in cs)
    with pytest.raises(ValueError, match="held-out rows cannot be used"):
        PR.calibration_grid(eff_max=(0.755,), tokens_half=(24.0,), width_half=(130.0,), runs=PR.LLAMA1_TABLE15)


def test_gpu_hours_are_allocation_or_throughput_hours():
    # Llama 2 Table 2: 184,320 / 368,640 / 1,038,336 / 1,720,320 = 90 / 180 / 507 / 840 h x 2,048 GPUs; LLaMA Table 15:
    # 40.25 / 66 / 259 h x 2,048 (7B-33B); BLOOM: 1,082,990 GPU-h = 99.4 % of 384 GPUs x 118 d 5 h 41 min (Luccioni et
    # al. 2022, Table 1): allocation hours. LLaMA-65B's 1,022,362 = 1.4T / (380 tokens/s) to 0.1 % (§2.4) and
    # DeepSeek-V3's 2,664K = 14.8 x 180K GPU-h per trillion tokens (report §1): throughput hours.
    rows = {r["run"]: r for r in PR.gpu_hours_evidence()}
    assert [rows[f"Llama 2 {k} ({w} W)"]["hours_per_gpu"] for k, w in
            (("7B", 400), ("13B", 400), ("34B", 350), ("70B", 400))] == [90.0, 180.0, 507.0, 840.0]
    assert [rows[f"LLaMA-{k}"]["hours_per_gpu"] for k in ("7B", "13B", "33B")] == [40.25, 66.0, 259.0]
    assert rows["LLaMA-65B"]["basis"] == "throughput" and "(-0.1 %)" in rows["LLaMA-65B"]["check"]
    assert rows["BLOOM-176B"]["basis"] == "allocation" and rows["BLOOM-176B"]["check"].startswith("99.4 %")
    assert rows["DeepSeek-V3"]["basis"] == "throughput" and "2,664,000" in rows["DeepSeek-V3"]["check"]
    assert sum(r["basis"] == "allocation" for r in rows.values()) == 8
    # allocation rows are divided by the goodput, throughput rows are not
    ds = PR.compare([PR.DEEPSEEK_V3])[0]
    e = ds.estimate
    pure = PR.DEEPSEEK_V3.tokens / (e.layout.global_batch * PR.DEEPSEEK_V3.spec.seq_len / e.step_s) * 2048 / 3600
    assert ds.model == pytest.approx(pure, rel=1e-12)
    l70 = PR.compare([PR.LLAMA2_70B])[0]
    e = l70.estimate
    pure = 2e12 / (e.layout.global_batch * 4096 / e.step_s) * 2048 / 3600
    assert l70.model == pytest.approx(pure / PR.ALLOCATION_GOODPUT, rel=1e-12)
    from dataclasses import replace
    with pytest.raises(ValueError, match="hours_basis"):
        PR.model_value(replace(PR.LLAMA2_70B, hours_basis="wall"), e)


def test_allocation_goodput_evidence():
    # ALLOCATION_GOODPUT = 0.90: Llama 3 §3.3.4 ">90 % effective training time" (16,384 H100); BLOOM's own numbers:
    # 366B tokens at ~150 TFLOP/s per GPU (eq. 3) take 89.8 % of its 1,082,990 GPU-hours. The course's failure model
    # (Kokolis et al. 2024 RSC-1 A100 rate, Young-optimal 60 s checkpoints) loses only 2-3 % at BLOOM's 384 GPUs and
    # 6-8 % at 2,048 (10-30 min restarts): failures and checkpoints are a part of what whole runs lose, not all of it.
    assert PR.ALLOCATION_GOODPUT == 0.90
    assert PR.bloom_allocation_goodput() == pytest.approx(0.898, abs=0.002)
    rows = PR.goodput_evidence()
    assert rows[0]["goodput"] == 0.90 and rows[0]["gpus"] == 16384
    model = {(r["gpus"], r["source"].split("restart ")[1].split(",")[0]): r["goodput"] for r in rows
             if r["kind"] == "failure model"}
    assert model[(384, "10 min")] == pytest.approx(0.977, abs=0.002)
    assert model[(384, "30 min")] == pytest.approx(0.973, abs=0.002)
    assert model[(2048, "10 min")] == pytest.approx(0.942, abs=0.002)
    assert model[(2048, "30 min")] == pytest.approx(0.920, abs=0.002)
    assert 1 - PR.bloom_allocation_goodput() > 3 * (1 - model[(384, "30 min")])
    g = PR.reliability_goodput(2048)
    assert g["failures_per_day"] == pytest.approx(256 * 6.5 / 1000) and g["mtbf_h"] == pytest.approx(14.4, abs=0.05)


def test_meta_13b_over_7b_gpu_hours_disagree_between_papers():
    # Published numbers only: 13B / 7B GPU-hours are 135,168 / 82,432 = 1.64 in LLaMA (Table 15) and 368,640 / 184,320
    # = 2.00 in Llama 2 (Table 2), for the same two shapes on the same A100-80GB at 400 W, where their training FLOPs
    # (6N + attention, compute.model_flops_per_token) differ by 1.92x and 1.89x. No shape-dependent step-time model
    # can match both 13B rows: the model is +4.9 % on LLaMA's and -15.2 % on Llama 2's.
    llama, llama2 = PR.size_ratio_evidence()
    assert llama["hours_ratio"] == pytest.approx(1.640, abs=0.001) and llama2["hours_ratio"] == 2.0
    assert llama["flops_ratio"] == pytest.approx(1.916, abs=0.002)
    assert llama2["flops_ratio"] == pytest.approx(1.892, abs=0.002)
    rel = (llama2["hours_ratio"] / llama2["flops_ratio"]) / (llama["hours_ratio"] / llama["flops_ratio"])
    assert rel == pytest.approx(1.236, abs=0.005)
    assert PR.LLAMA1_TABLE15[1].spec.hidden == PR.LLAMA2_SMALL[1].spec.hidden == 5120
    assert PR.LLAMA1_TABLE15[1].spec.layers == PR.LLAMA2_SMALL[1].spec.layers == 40


def test_mtnlg_error_is_flat_across_scale():
    # Smith et al. 2022 §2.4: 60.1 / 50.2 / 44.4 s per iteration on 280 / 350 / 420 DGX A100 (batch 1,920). Held
    # out; the model misses all three by about the same factor, so the gap is the software, not a scale effect
    cs = PR.compare((PR.MTNLG_530B,) + PR.MTNLG_SCALING)
    assert [c.run.published for c in cs] == [60.1, 50.2, 44.4]
    assert [c.estimate.layout.dp for c in cs] == [8, 10, 12]
    errs = [c.error for c in cs]
    assert all(-0.25 < e < -0.18 for e in errs) and max(errs) - min(errs) < 0.05
    # t = a / dp + b through the three points: published 378 s / dp + 12.7 s, model 335 s / dp + 6.2 s (its pipeline
    # bubble, (pp - 1) / m of the busy time, is 5.9 s at every scale): MT-NLG did 13 % more work per micro-batch and
    # spent twice the fixed time per iteration
    import numpy as np
    x = np.array([[1.0 / c.estimate.layout.dp, 1.0] for c in cs])
    (a_pub, b_pub), (a_mod, b_mod) = (np.linalg.lstsq(x, np.array(y), rcond=None)[0]
                                      for y in ([c.run.published for c in cs], [c.model for c in cs]))
    assert (a_pub, b_pub) == pytest.approx((378.3, 12.7), abs=0.2)
    assert (a_mod, b_mod) == pytest.approx((334.9, 6.2), abs=0.2)
    assert all(c.estimate.bubble_s == pytest.approx(5.94, abs=0.01) for c in cs)


def test_deepseek_v3_gpu_hours_imply_a_plausible_mfu_only_with_active_parameters():
    # DeepSeek-V3 Technical Report (arXiv:2412.19437), Table 1: 2,664K H800 GPU-hours of pre-training on
    # 14.8T tokens; abstract: 37B of 671B parameters activated per token; §3.3: FP8 GEMMs.
    b = PR.deepseek_v3_budget()
    assert b["gpu_hours"] == 2_664_000 and b["tokens"] == 14.8e12
    assert b["flops_total_params"] / b["flops_active_params"] == pytest.approx(17.9, abs=0.2)
    assert b["mfu_bf16_total_params"] > 1.0                # 6 x 671B x 14.8T cannot fit in those hours
    lo, hi = compute.PUBLISHED_MFU_RANGE
    assert lo <= b["mfu_bf16"] <= hi                      # 35 % of the BF16 peak with 6 x 37.6B x 14.8T
    assert b["mfu_bf16"] == pytest.approx(0.351, abs=0.005)
    assert b["utilisation_fp8_peak"] == pytest.approx(b["mfu_bf16"] / 2, rel=0.01)
    # plan_training, at that MFU on the 2,048 H800 of the run, gives back the published hours
    plan = compute.plan_training("deepseek-v3", 14.8e12, "H800-SXM", b["mfu_bf16"], 2048, 60)
    assert plan.gpu_hours == pytest.approx(2_664_000, rel=1e-9)
