"""Self-graded lab questions (labutil.exercises.labs): answers come from the learner's own result files."""

import json

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


def test_every_lab_has_two_questions_and_they_need_a_result(runs):
    from labutil.exercises import _REGISTRY

    keys = sorted(L.LAB_EXERCISES)
    assert not any(k.startswith("lab") for k in _REGISTRY)  # the chapters' registry stays measurement-free
    assert [k.split(".")[0] for k in keys].count("lab02") == 2 and len(keys) == 12
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
    _write(runs, "lab04_gemm", {"best_tflops": 0.5})
    _write(runs, "lab04_membw", {"best_gbs": 10.0})
    assert L.lab_exercise("lab04.1").expected() == pytest.approx(50.0)        # 0.5e12 / 10e9
    assert L.lab_exercise("lab04.2").expected() == pytest.approx(2000.0)      # 2 x 10 GB / 10 GB/s = 2 s
    _write(runs, "lab05_storage_io", {"sequential": {"write_gbs": 2.0}, "checkpoint": {"save_gbs": 1.5}})
    assert L.lab_exercise("lab05.1").expected() == pytest.approx(storage.checkpoint_write_s(1000.0, 2.0)) == 500.0
    assert L.lab_exercise("lab05.2").expected() == pytest.approx(0.75)
    _write(runs, "lab06_ddp_1r", {"world_size": 1, "samples_per_s": 100.0, "comm_s_per_step": None, "step_s": 0.64})
    _write(runs, "lab06_ddp_2r", {"world_size": 2, "samples_per_s": 160.0, "comm_s_per_step": 0.02, "step_s": 0.08})
    assert L.lab_exercise("lab06.1").expected() == pytest.approx(0.8)
    assert L.lab_exercise("lab06.2").expected() == pytest.approx(0.25)
    assert L.lab_exercise("lab06.1").grade(0.8).correct and not L.lab_exercise("lab06.1").grade(0.4).correct


def test_lab01_answers_read_the_doctor_profile(runs):
    facts = {"cpu_cores": 64, "gpu": {"gpus": [{}] * 8},
             "profile": {"nvlink_pairs": [f"GPU{i}-GPU{j}" for i in range(8) for j in range(i + 1, 8)]}}
    _write(runs, "lab01_doctor", {"facts": facts})
    assert L.lab_exercise("lab01.1").expected() == 28.0
    assert L.lab_exercise("lab01.2").expected() == 8.0
    assert np.isfinite(L.lab_exercise("lab01.2").expected())
