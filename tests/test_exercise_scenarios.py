"""A judgement exercise that says "the X of chNN.M" must be graded on exactly the scenario of chNN.M.

Review 2026-12-03 (N1): ch16.4 reused ch16.2's pool in its prompt but graded with mixed efficiency 1.0
while ch16.2 and the chapter used the HDD's 0.38, so the chapter's own model gave the "wrong" answer.
These tests recompute both exercises from one set of parameters and compare with the registry.
"""
import re

import pytest

from labutil import storage
from labutil.exercises import exercise, load_all
from labutil.exercises import ch16 as ex16


def _numbers(text: str) -> set[str]:
    return {m.replace(",", "") for m in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}


def test_ch16_4_grades_ch16_2_pool_with_10s_prefetch():
    two, four = exercise("ch16.2"), exercise("ch16.4")
    # ch16.2 is the shared scenario at 2 s of prefetch, with the chapter's HDD mixed efficiency
    i2 = storage.read_write_interference(60.0, 100.0, 2450.0, 1800.0, prefetch_s=2.0, read_weight=0.5,
                                         mixed_efficiency=storage.mixed_efficiency())
    assert two.expected() == pytest.approx(i2.shared_stall_s)
    assert storage.mixed_efficiency() == pytest.approx(0.38, abs=0.01)
    i4 = storage.read_write_interference(60.0, 100.0, 2450.0, 1800.0, prefetch_s=10.0, read_weight=0.5,
                                         mixed_efficiency=storage.mixed_efficiency())
    assert i4.shared_stall_s > 0 and four.expected() == "yes"
    # the prompt of ch16.4 repeats ch16.2's givens (pool, read rate, checkpoint size)
    shared = {"100", "60", "2450"}
    assert shared <= _numbers(two.prompt) and shared <= _numbers(four.prompt)
    # hint and solution quote the model, not a stale run (6.2 s / 49 s came from efficiency 1.0)
    text = " ".join(four.hints) + four.solution_text
    assert "6.2 s" not in text and "49 s" not in text
    assert f"{i4.shared_stall_s:.1f}" in four.solution_text
    assert f"{i2.shared_stall_s:.1f}" in two.solution_text


def test_ch16_4_prefetch_needed_to_hide_the_burst():
    """The solution's 'prefetch needed' is the prefetch at which the model's stall reaches 0."""
    need = ex16._prefetch_to_hide()
    assert ex16._shared(need * 1.001).shared_stall_s == pytest.approx(0.0, abs=1e-6)
    assert ex16._shared(need * 0.99).shared_stall_s > 0


def test_ch18_4_judges_the_pipeline_of_ch18_3():
    from labutil import dataloading as dl
    from labutil.exercises import ch18 as ex18
    p = dl.pipeline_throughput(dl.RESNET50_A100_IMG_S, dl.IMAGENET_MEAN_JPEG_BYTES, cpu_cores_per_gpu=8,
                               decode_samples_per_s_per_core=150.0, read_gbs_per_gpu=2.0,
                               decoded_sample_bytes=dl.DECODED_224_BYTES)
    assert exercise("ch18.3").expected() == pytest.approx(100 * p.gpu_utilization)
    assert exercise("ch18.4").expected() == p.bottleneck == ex18._pipeline().bottleneck
    # the givens of ch18.3 are the shared ones, and ch18.4 names the same core count
    assert {"150", "2"} <= _numbers(exercise("ch18.3").prompt) and "8" in _numbers(exercise("ch18.3").prompt)
    assert "8" in _numbers(exercise("ch18.4").prompt)
    assert f"{p.capacities['cpu_decode']:,.0f}" in exercise("ch18.4").solution_text


def test_ch25_6_judges_the_seed_case_of_ch25_5():
    from labutil import inference
    plan = {r: inference.cv_cluster_plan("L40S", 1000, 100, 1, model="vit_h_14_518", routing=r).gpus
            for r in inference.ROUTINGS}
    assert exercise("ch25.5").expected() == plan["random"]
    assert exercise("ch25.6").expected() == min(plan, key=plan.get)
    shared = {"1000", "100", "14", "518", "1"}
    assert shared <= _numbers(exercise("ch25.5").prompt) and shared <= _numbers(exercise("ch25.6").prompt)
    assert f"random 要 {plan['random']} 张" in exercise("ch25.6").solution_text


MY_CHAPTERS = ("ch02", "ch05", "ch06", "ch09", "ch10", "ch11", "ch12", "ch16", "ch17", "ch18", "ch19", "ch25", "ch27")


def _forms(v: float) -> set[str]:
    fmts = ("{:.0f}", "{:,.0f}", "{:.1f}", "{:,.1f}", "{:.2f}", "{:.3f}", "{:.2g}", "{:.3g}", "{:,.3g}", "{:.4g}")
    return {f.format(x) for f in fmts for x in (v, v / 1e4)}  # v / 1e4: amounts written in 万 (ch10.3)


@pytest.mark.parametrize("key", [k for k in sorted(load_all()) if k.split(".")[0] in MY_CHAPTERS])
def test_worked_solution_states_the_graded_answer(key):
    """A worked solution that no longer contains the model's answer has drifted from the model (review
    2026-12-03: ch11.5 and ch16.4 quoted stale numbers)."""
    ex = exercise(key)
    v = ex.expected()
    if isinstance(v, str):
        assert v in ex.solution_text, (key, v, ex.solution_text)
    else:
        assert any(f in ex.solution_text for f in _forms(float(v))), (key, v, ex.solution_text)
