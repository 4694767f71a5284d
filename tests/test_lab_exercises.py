"""Self-graded lab questions (labutil.exercises.labs): answers come from the learner's own result files."""

import json
import re

import numpy as np
import pytest

from labutil import comm, storage
from labutil.bench import analysis
from labutil.exercises import labs as L


def _write(d, name, obj):
    (d / f"{name}.json").write_text(json.dumps(obj), encoding="utf-8")


def _collectives(n=2, bw=5.0, lat=50e-6):
    sizes = [1024 * 4**k for k in range(6)]
    rows = []
    for s in sizes:
        t = float(comm.collective_time_s("all_reduce", s, n, bw, lat, "ring"))
        alg, bus = s / t / 1e9, s / t / 1e9 * 2 * (n - 1) / n
        blk = {"time_us": t * 1e6, "algbw_gbs": alg, "busbw_gbs": bus, "wrong": 0}
        rows.append({"size_bytes": s, "out_of_place": blk, "in_place": blk})
    return {"op": "all_reduce", "world_size": n, "rows": rows, "backend": "gloo"}


@pytest.fixture
def runs(tmp_path, monkeypatch):
    monkeypatch.setattr(L, "RUNS", tmp_path)
    return tmp_path


def test_every_lab_has_three_questions_and_they_need_a_result(runs):
    from labutil.exercises import _REGISTRY

    keys = sorted(L.LAB_EXERCISES)
    assert not any(k.startswith("lab") for k in _REGISTRY)  # the chapters' registry stays measurement-free
    labs_ = [k.split(".")[0] for k in keys]
    assert all(labs_.count(f"lab0{i}") >= 3 for i in range(1, 7)) and len(keys) == 18
    for k in keys:
        ex = L.lab_exercise(k)
        assert ex.grade(None).status == "empty"
        r = ex.grade(1.0)            # no result file yet: explains, never raises
        assert r.status == "invalid" and "labs/_runs/" in r.message
    with pytest.raises(KeyError, match="lab exercise"):
        L.lab_exercise("lab02.9")


def test_lab02_answers_follow_the_learners_own_fit(runs):
    data = _collectives(n=2, bw=5.0, lat=50e-6)
    _write(runs, "lab02_all_reduce", data)
    arr = analysis.collective_arrays(data)
    fit = analysis.fit_alpha_beta(arr["size_bytes"], arr["time_s"], "all_reduce", 2)
    want_ms = float(fit.predict_s(2**30)) * 1e3
    # the exact ring model gives back its own alpha and B, so the prediction is the model's 1 GiB time
    assert want_ms == pytest.approx(comm.collective_time_s("all_reduce", 2**30, 2, 5.0, 50e-6, "ring") * 1e3, rel=1e-6)
    ex = L.lab_exercise("lab02.1")
    assert ex.grade(want_ms).correct and not ex.grade(want_ms * 1.5).correct
    half = L.lab_exercise("lab02.2").expected()
    assert half == pytest.approx(fit.a_s / fit.b_s_per_byte / 1024)
    # a different machine (other file) gives a different reference answer
    _write(runs, "lab02_all_reduce", _collectives(n=2, bw=50.0, lat=5e-6))
    assert L.lab_exercise("lab02.1").expected() < want_ms / 5


def test_lab03_to_lab06_answers(runs):
    base = _collectives()
    _write(runs, "lab03_default", base)
    assert L.lab_exercise("lab03.1").expected() == pytest.approx(base["rows"][0]["out_of_place"]["time_us"])
    assert L.lab_exercise("lab03.2").expected() == pytest.approx(
        base["rows"][-1]["out_of_place"]["busbw_gbs"] / base["rows"][0]["out_of_place"]["busbw_gbs"])
    # in-place vs out-of-place at the largest size: the noise floor of the baseline
    base["rows"][-1]["in_place"] = dict(base["rows"][-1]["out_of_place"],
                                        time_us=base["rows"][-1]["out_of_place"]["time_us"] * 1.1)
    _write(runs, "lab03_default", base)
    assert L.lab_exercise("lab03.3").expected() == pytest.approx(10.0)
    # lab04: the DRAM plateau (sizes >= 4 x LLC), never the cache-resident 57.8 GB/s row (review 2026-12-03)
    _write(runs, "lab04_gemm", {"best_tflops": 0.5})
    _write(runs, "lab04_membw", {"best_gbs": 57.8, "llc_bytes": 32 << 20, "rows": [
        {"size_bytes": 1 << 20, "copy_gbs": 57.8}, {"size_bytes": 64 << 20, "copy_gbs": 12.0},
        {"size_bytes": 128 << 20, "copy_gbs": 10.0}, {"size_bytes": 256 << 20, "copy_gbs": 10.0}]})
    assert L.lab_exercise("lab04.1").expected() == pytest.approx(50.0)        # 0.5e12 / 10e9
    assert L.lab_exercise("lab04.2").expected() == pytest.approx(2000.0)      # 2 x 10 GB / 10 GB/s = 2 s
    assert L.lab_exercise("lab04.3").expected() == pytest.approx(0.01)        # min(0.5, 1 FLOP/B x 10 GB/s)
    _write(runs, "lab05_storage_io", {"sequential": {"write_gbs": 2.0}, "checkpoint": {"save_gbs": 1.5}})
    assert L.lab_exercise("lab05.1").expected() == pytest.approx(storage.checkpoint_write_s(1000.0, 2.0)) == 500.0
    assert L.lab_exercise("lab05.2").expected() == pytest.approx(75.0)      # percent, the course rule
    assert L.lab_exercise("lab05.3").expected() == 9.0                      # ceil(980 GB / (60 s x 2 GB/s)) = ceil(8.17)
    assert L.lab_exercise("lab05.3").grade(9).correct and not L.lab_exercise("lab05.3").grade(8.17).correct
    reps = [{"efficiency": e} for e in (0.80, 0.78, 0.85)]
    _write(runs, "lab06_ddp_1r", {"world_size": 1, "samples_per_s": 100.0, "comm_s_per_step": None, "step_s": 0.64})
    _write(runs, "lab06_ddp_2r", {"world_size": 2, "samples_per_s": 160.0, "comm_s_per_step": 0.02, "step_s": 0.08,
                                  "repeats": reps})
    assert L.lab_exercise("lab06.1").expected() == pytest.approx(80.0)
    assert L.lab_exercise("lab06.2").expected() == pytest.approx(25.0)
    assert L.lab_exercise("lab06.3").expected() == pytest.approx(7.0)       # 85 - 78 percentage points
    assert "注意" not in L.lab_exercise("lab06.1").grade(80).message        # a 7-point spread carries the result
    assert L.lab_exercise("lab06.1").grade(80).correct and L.lab_exercise("lab06.1").grade("80%").correct
    assert not L.lab_exercise("lab06.1").grade(40).correct
    frac = L.lab_exercise("lab06.1").grade(0.8)   # a fraction is told the percent rule
    assert frac.status == "wrong" and "百分数" in frac.message


def test_lab06_refuses_a_conclusion_the_noise_cannot_carry(runs):
    """review 2026-12-03: E(2) = 108 %, 31 %, 24 %, 97 % in four CPU runs. The feedback says so."""
    reps = [{"efficiency": e} for e in (1.08, 0.31, 0.24, 0.97)]
    _write(runs, "lab06_ddp_1r", {"world_size": 1, "samples_per_s": 100.0, "comm_s_per_step": None, "step_s": 0.64})
    _write(runs, "lab06_ddp_2r", {"world_size": 2, "samples_per_s": 128.0, "comm_s_per_step": 0.02, "step_s": 0.08,
                                  "repeats": reps})
    assert L.lab_exercise("lab06.3").expected() == pytest.approx(84.0)
    for key, right in (("lab06.1", 64.0), ("lab06.2", 25.0)):
        msg = L.lab_exercise(key).grade(right).message
        assert "✓" in msg and "噪声" in msg and "24 %" in msg and "108 %" in msg, msg
        assert "噪声" in L.lab_exercise(key).grade(right * 2).message
    # an old result without repeats: graded, with the caveat that reliability is unknown
    _write(runs, "lab06_ddp_2r", {"world_size": 2, "samples_per_s": 128.0, "comm_s_per_step": 0.02, "step_s": 0.08})
    assert "无法判断" in L.lab_exercise("lab06.1").grade(64).message
    assert L.lab_exercise("lab06.3").grade(1.0).status == "invalid"


def test_lab02_question_1_says_when_the_fit_cannot_be_extrapolated(runs):
    _write(runs, "lab02_all_reduce", _collectives())          # an exact alpha-beta sweep: no caveat
    ok = L.lab_exercise("lab02.1")
    assert "注意" not in ok.grade(ok.expected()).message
    data = _collectives()
    data["rows"][-2]["out_of_place"]["time_us"] *= 15          # the CPU path's 4 MiB cliff (two regimes)
    _write(runs, "lab02_all_reduce", data)
    msg = ok.grade(ok.expected()).message
    assert "✓" in msg and "R²" in msg and "残差" in msg, msg
    assert L.lab_exercise("lab02.3").expected() > 0


def test_lab01_answers_read_the_doctor_profile(runs):
    facts = {"cpu_cores": 64, "ram_gb": 2164.7, "gpu": {"gpus": [{}] * 8},
             "profile": {"nvlink_pairs": [f"GPU{i}-GPU{j}" for i in range(8) for j in range(i + 1, 8)]}}
    _write(runs, "lab01_doctor", {"facts": facts})
    assert L.lab_exercise("lab01.1").expected() == 28.0
    assert L.lab_exercise("lab01.2").expected() == 8.0          # logical, where doctor could not read physical
    # DGX H100: 224 logical CPUs, 112 physical cores -> 14 per GPU (ch09), not 28
    _write(runs, "lab01_doctor", {"facts": dict(facts, cpu_cores=224, cpu_physical_cores=112)})
    q = L.lab_exercise("lab01.2")
    assert q.expected() == 14.0 and q.grade(14).correct
    wrong = q.grade(28)
    assert wrong.status == "wrong" and "逻辑核" in wrong.message and "14" not in wrong.message
    _write(runs, "lab01_doctor", {"facts": facts})
    assert L.lab_exercise("lab01.3").expected() == pytest.approx(270.6, rel=1e-3)
    assert np.isfinite(L.lab_exercise("lab01.2").expected())


# ---------------------------------------------------------------------------------------------- R7
def _valid_runs() -> dict[str, object]:
    """A valid result file for every lab question (the shapes the harnesses write)."""
    facts = {"cpu_cores": 64, "ram_gb": 2164.7, "gpu": {"gpus": [{}] * 8},
             "profile": {"nvlink_pairs": [f"GPU{i}-GPU{j}" for i in range(8) for j in range(i + 1, 8)]}}
    return {"lab01_doctor": {"facts": facts},
            "lab02_all_reduce": _collectives(), "lab03_default": _collectives(),
            "lab04_gemm": {"best_tflops": 0.5, "rows": [{"m": 1024, "tflops": 0.5}]},
            "lab04_membw": {"best_gbs": 10.0, "llc_bytes": 2**24, "rows": [{"size_bytes": 2**26, "copy_gbs": 10.0}]},
            "lab05_storage_io": {"sequential": {"write_gbs": 2.0}, "checkpoint": {"save_gbs": 1.5}},
            "lab06_ddp_1r": {"world_size": 1, "samples_per_s": 100.0, "comm_s_per_step": None, "step_s": 0.64},
            "lab06_ddp_2r": {"world_size": 2, "samples_per_s": 160.0, "comm_s_per_step": 0.02, "step_s": 0.08,
                             "repeats": [{"efficiency": 0.8}, {"efficiency": 0.82}, {"efficiency": 0.78}]}}


def _map_leaves(obj, fn):
    if isinstance(obj, dict):
        return {k: _map_leaves(v, fn) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_map_leaves(v, fn) for v in obj]
    return fn(obj)


def _no_rows(obj):
    if isinstance(obj, dict):
        return {k: ([] if isinstance(v, list) else _no_rows(v)) for k, v in obj.items()}
    return obj


# (name, how to write the damaged file) -- the review's corruptions and a few more
CORRUPTIONS = {
    "null": lambda p, v: p.write_text("null"),
    "list": lambda p, v: p.write_text("[1, 2, 3]"),
    "string": lambda p, v: p.write_text('"done"'),
    "number": lambda p, v: p.write_text("42"),
    "empty object": lambda p, v: p.write_text("{}"),
    "wrong types": lambda p, v: p.write_text(json.dumps(_map_leaves(v, lambda x: "x" if isinstance(x, (int, float)) else x))),
    "nested nulls": lambda p, v: p.write_text(json.dumps({k: None for k in v})),
    "zero rows": lambda p, v: p.write_text(json.dumps(_no_rows(v))),
    "NaN": lambda p, v: p.write_text(json.dumps(_map_leaves(v, lambda x: float("nan") if isinstance(x, (int, float)) and not isinstance(x, bool) else x))),
    "zeros": lambda p, v: p.write_text(json.dumps(_map_leaves(v, lambda x: 0 if isinstance(x, (int, float)) and not isinstance(x, bool) else x))),
    "infinite": lambda p, v: p.write_text(json.dumps(_map_leaves(v, lambda x: 1e999 if isinstance(x, float) else x))),
    "directory": lambda p, v: p.mkdir(),
    "binary": lambda p, v: p.write_bytes(bytes(range(256)) * 4),
    "empty file": lambda p, v: p.write_text(""),
    "truncated JSON": lambda p, v: p.write_text(json.dumps(v)[:17]),
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
@pytest.mark.parametrize("key", sorted(L.LAB_EXERCISES))
def test_lab_grading_never_raises_on_a_damaged_result_file(runs, key, corruption):
    ex = L.lab_exercise(key)
    valid = _valid_runs()
    for name in [f for f in ex.files() if f in valid]:   # lab03: lab03_default is read first when it exists
        for other, obj in valid.items():           # fresh valid files, then damage one input
            path = runs / f"{other}.json"
            if path.is_dir():
                path.rmdir()
            _write(runs, other, obj)
        target = runs / f"{name}.json"
        target.unlink()
        CORRUPTIONS[corruption](target, valid[name])
        for given in (1.0, "1.0", None):
            res = ex.check(given)                   # never raises
            assert res.status in ("empty", "invalid", "wrong", "correct")
            assert "Traceback" not in res.message and len(res.message) < 400
            if res.status == "invalid":
                assert "labs/_runs/" in res.message and "还不能判分" in res.message, res.message
        assert ex.solution_report()                 # the solution view does not raise either
        if target.is_dir():
            target.rmdir()


def test_r7_reproduction(runs):
    """robustness.md R7: null in lab01_doctor.json raised TypeError; {'rows': []} in lab03 raised IndexError."""
    (runs / "lab01_doctor.json").write_text("null")
    res = L.lab_exercise("lab01.1").check(1)
    assert res.status == "invalid" and "lab01_doctor.json" in res.message
    _write(runs, "lab03_default", {"rows": []})
    res = L.lab_exercise("lab03.1").check(1)
    assert res.status == "invalid" and "lab03_default.json" in res.message


def test_every_hint_pointer_printed_actually_works(runs):
    """The wrong-answer message points to code; that code runs and shows hint 1 (chapters and labs)."""
    from labutil.exercises import exercise, load_all

    for name, obj in _valid_runs().items():
        _write(runs, name, obj)
    namespace = {"exercise": exercise, "lab_exercise": L.lab_exercise}
    pointer = re.compile(r'(?:lab_)?exercise\("[^"]+"\)\.hint\(\d+\)')
    cases = [(ex, ex.expected()) for ex in list(load_all().values()) + list(L.LAB_EXERCISES.values())]
    for ex, expected in cases:
        if isinstance(expected, str):
            wrong = next((c for c in ex.choices if c != expected), "definitely-not-an-option")
        else:
            wrong = expected * 1.5 if expected else 1.0
        msg = ex.grade(wrong).message
        calls = pointer.findall(msg)
        assert calls, (ex.key, msg)
        for call in calls:
            shown = eval(call, namespace)  # noqa: S307 - the code a learner would paste, from our own message
            assert f"[{ex.key}] 提示 1/" in str(shown), (ex.key, call, shown)
        if ex.key.startswith("lab"):
            assert all(c.startswith("lab_exercise(") for c in calls), msg


def test_lab_shares_are_in_percent():
    for key, ex in L.LAB_EXERCISES.items():
        assert "fraction" not in ex.prompt.lower(), key
        if ex.unit == "%":
            assert "percent" in ex.prompt.lower(), key
    assert {k for k, e in L.LAB_EXERCISES.items() if e.unit == "%"} == {"lab03.3", "lab05.2", "lab06.1", "lab06.2"}


def test_lab_keys_are_case_folded_and_cut():
    assert L.lab_exercise("LAB02.1") is L.lab_exercise("lab02.1")
    with pytest.raises(KeyError) as info:
        L.lab_exercise("z" * 10000)
    assert len(str(info.value)) < 300



def test_known_mistakes_are_named_without_the_answer(runs):
    """A wrong answer that equals a known mistake on the learner's own data says which mistake."""
    _write(runs, "lab02_all_reduce", _collectives(n=2, bw=5.0, lat=50e-6))
    fit = L._fit("lab02_all_reduce")
    gb = L.lab_exercise("lab02.1").grade(float(fit.predict_s(1e9)) * 1e3)      # 10^9 bytes for 1 GiB
    assert gb.status == "wrong" and "2^30" in gb.message
    alpha = L.lab_exercise("lab02.2").grade(fit.latency_s / fit.b_s_per_byte / 1024)
    assert alpha.status == "wrong" and "α" in alpha.message
    _write(runs, "lab04_gemm", {"best_tflops": 0.5})
    _write(runs, "lab04_membw", {"llc_bytes": 32 << 20, "rows": [
        {"size_bytes": 1 << 20, "copy_gbs": 57.8}, {"size_bytes": 128 << 20, "copy_gbs": 10.0},
        {"size_bytes": 256 << 20, "copy_gbs": 10.0}]})
    for key, value in (("lab04.1", 0.5e12 / 57.8e9), ("lab04.2", 2 * 10e9 / 57.8e9 * 1e3), ("lab04.3", 0.0578)):
        r = L.lab_exercise(key).grade(value)
        assert r.status == "wrong" and "缓存" in r.message, (key, r.message)
        ref = L.lab_exercise(key).expected()                                  # 50 FLOP/B, 2,000 ms, 0.01 TFLOP/s
        assert not any(x in r.message for x in ("50 ", "2,000", "2000", "0.01 ")), r.message
    once = L.lab_exercise("lab04.2").grade(10e9 / 10e9 * 1e3)                 # read OR write, not both
    assert once.status == "wrong" and "2·S/t" in once.message
    assert "看起来" not in L.lab_exercise("lab04.1").grade(3.0).message        # an unrelated wrong answer: no guess
    _write(runs, "lab05_storage_io", {"sequential": {"write_gbs": 2.0, "read_gbs": 3.0}, "checkpoint": {"save_gbs": 1.5}})
    inv = L.lab_exercise("lab05.2").grade(100 * 2.0 / 1.5)
    assert inv.status == "wrong" and "倒过来" in inv.message
    # a trap that coincides with the reference on this learner's data is not offered (plateau == fastest row)
    _write(runs, "lab04_membw", {"llc_bytes": 32 << 20, "rows": [{"size_bytes": 256 << 20, "copy_gbs": 10.0}]})
    assert "缓存" not in L.lab_exercise("lab04.1").grade(99.0).message
