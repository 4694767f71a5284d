"""Compute explorers and figures, driven headlessly."""

import numpy as np
import pytest

from labutil import compute, hardware
from labutil.explore import compute as X
from labutil.models import transformer


def test_time_to_train_explorer_follows_the_model():
    ex = X.time_to_train_explorer(model="llama3-70b", tokens_t=15.0, gpu="H100-SXM", mfu=0.4, n_gpus=8192,
                                  deadline_days=60)
    r = ex.result
    total = compute.train_flops(transformer("llama3-70b").params(), 15e12)
    assert r.total_flops == pytest.approx(total)
    assert r.days == pytest.approx(compute.time_to_train_days(total, 8192, 989.4, 0.4))
    assert r.gpus_for_deadline == compute.gpus_for_deadline(total, 60, 989.4, 0.4)
    line = ex.figure.axes[0].lines[0]
    assert np.allclose(line.get_ydata(), r.days_grid)
    days_before = r.days
    # doubling the GPUs halves the time; the plotted point moves with it
    ex.set(n_gpus=16384)
    assert ex.error is None
    assert ex.result.days == pytest.approx(days_before / 2)
    point = [l for l in ex.figure.axes[0].lines if l.get_marker() == "o"][0]
    assert point.get_ydata()[0] == pytest.approx(days_before / 2)
    # a tighter deadline needs proportionally more GPUs; the vertical marker moves
    ex.set(deadline_days=30)
    assert ex.result.gpus_for_deadline == compute.gpus_for_deadline(total, 30, 989.4, 0.4)
    assert any(np.allclose(l.get_xdata(), ex.result.gpus_for_deadline) for l in ex.figure.axes[0].lines)
    # an A100 (312 TFLOP/s) takes 989.4/312 times longer
    ex.set(gpu="A100-80G-SXM")
    assert ex.result.days == pytest.approx(days_before / 2 * 989.4 / 312)
    # a bigger model at its published tokens costs more
    ex.set(model="llama3-405b", tokens_t=15.6)
    assert ex.result.total_flops == pytest.approx(compute.train_flops(transformer("llama3-405b").params(), 15.6e12))
    assert ex.n_updates >= 4


def test_time_to_train_explorer_rejects_bad_mfu_without_crashing():
    ex = X.time_to_train_explorer()
    before = ex.result
    ex.controls["mfu"].min = 0.0
    ex.set(mfu=0.0)
    assert isinstance(ex.error, ValueError) and "mfu" in str(ex.error)
    assert ex.result is before  # last good result kept


def test_roofline_explorer_places_points():
    ex = X.roofline_explorer(gpu="H100-SXM", precision="bf16", op="gemm", m=4096, n=4096, k=4096)
    r = ex.result
    assert r.intensity_flop_per_byte == pytest.approx(4096 / 3)
    assert r.bound == "compute" and r.attainable_tflops == pytest.approx(989.4)
    # a skinny GEMM (decode-like, m = 1) drops below the ridge: memory-bound at ~HBM GB/s x 1 FLOP/B
    ex.set(m=1)
    r = ex.result
    assert r.bound == "memory"
    assert r.attainable_tflops == pytest.approx(compute.roofline_tflops(r.intensity_flop_per_byte, 989.4, 3350))
    point = [l for l in ex.figure.axes[0].lines if l.get_marker() == "o"][0]
    assert point.get_xdata()[0] == pytest.approx(r.intensity_flop_per_byte)
    assert point.get_ydata()[0] == pytest.approx(r.attainable_tflops)
    # FP8 doubles the peak and halves the bytes: the ridge moves right by 2x... and the point by 2x
    ex.set(m=4096, precision="fp8")
    assert ex.result.peak_tflops == pytest.approx(1978.9)
    assert ex.result.intensity_flop_per_byte == pytest.approx(2 * 4096 / 3)
    # decode attention is memory-bound on every catalog GPU; GQA multiplies its intensity
    ex.set(precision="bf16", op="attention-decode", queries_per_kv=1)
    i1 = ex.result.intensity_flop_per_byte
    ex.set(queries_per_kv=8)
    assert ex.result.intensity_flop_per_byte == pytest.approx(8 * i1, rel=0.02)
    for name in hardware.gpus():
        assert X.roofline_point(name, "bf16", "attention-decode").bound == "memory"


def test_roofline_explorer_unsupported_precision_is_reported():
    ex = X.roofline_explorer(gpu="A100-80G-SXM")
    with pytest.raises(ValueError, match="fp8"):  # A100 has no FP8: not offered (issue 9)
        ex.set(precision="fp8")
    assert "fp8" not in ex.controls["precision"].options


@pytest.mark.parametrize("builder", [X.roofline_figure, X.gpu_catalog_figure, X.precision_figure,
                                     X.time_to_train_figure, X.training_compute_figure,
                                     X.attention_intensity_figure])
def test_figures_have_data_and_english_labels(builder, tmp_path):
    from labutil.plotting import save_png

    fig = builder()
    assert fig.axes
    ax = fig.axes[0]
    assert ax.get_xlabel() or ax.get_xticklabels()
    assert ax.get_ylabel() and "(" in ax.get_ylabel()  # unit in parentheses
    assert ax.lines or ax.patches
    for a in fig.axes:
        for text in [a.get_xlabel(), a.get_ylabel(), a.get_title()]:
            assert all(ord(c) < 0x2E80 for c in text), text  # no CJK in figures
    assert save_png(fig, tmp_path / "f.png").stat().st_size > 10_000


def test_roofline_figure_ridges_match_catalog():
    fig = X.roofline_figure(gpus=("A100-80G-SXM", "H100-SXM"))
    labels = [l.get_label() for l in fig.axes[0].lines if not l.get_label().startswith("_")]
    assert any("153 FLOP/B" in s for s in labels) and any("295 FLOP/B" in s for s in labels)


def test_time_to_train_figure_curves_are_6nd():
    fig = X.time_to_train_figure(model_names=("llama2-7b",), gpu="H100-SXM", mfu=0.5, deadline_days=None)
    line = fig.axes[0].lines[0]
    spec = transformer("llama2-7b")
    expected = compute.time_to_train_days(compute.train_flops(spec.params(), 2e12), line.get_xdata(), 989.4, 0.5)
    assert np.allclose(line.get_ydata(), expected)


@pytest.mark.parametrize("product, catalog", [
    ("NVIDIA H100 80GB HBM3", "H100-SXM"),   # nvidia-smi name of the SXM part
    ("NVIDIA H100 PCIe", "H100-PCIe"),
    ("NVIDIA A100-SXM4-80GB", "A100-80G-SXM"),
    ("NVIDIA H200", "H200-SXM"),
    ("NVIDIA L40S", "L40S"),
    ("NVIDIA L4", "L4"),
    ("AMD Instinct MI300X", "MI300X"),
])
def test_match_catalog_gpu(product, catalog):
    assert X.match_catalog_gpu(product).name == catalog


def test_match_catalog_gpu_unknown():
    with pytest.raises(KeyError, match="Closest"):
        X.match_catalog_gpu("Tesla V100-SXM2-32GB")
    with pytest.raises(KeyError):
        X.match_catalog_gpu("")


def test_match_catalog_gpu_on_parsed_sample():
    from labutil.parsers import parse_nvidia_smi_csv, samples

    smi = parse_nvidia_smi_csv(samples.sample("nvidia_smi_csv"))
    assert {X.match_catalog_gpu(n).name for n in smi.column("name")} == {"H100-SXM"}


def test_roofline_explorer_says_which_shape_controls_the_operation_reads():
    ex = X.roofline_explorer()  # GEMM: the attention sliders are greyed out and the summary says why
    assert [k for k, w in ex.controls.items() if w.disabled] == ["seq_len", "head_dim", "queries_per_kv"]
    point = [l for l in ex.figure.axes[0].lines if l.get_marker() == "o"][0]
    x0 = point.get_xdata()[0]
    ex.set(seq_len=8192)
    assert point.get_xdata()[0] == x0                      # GEMM ignores s ...
    assert "序列长度 s = 8192" in ex._summary.value          # ... and the learner is told
    ex.set(op="attention-flash")
    assert [k for k, w in ex.controls.items() if w.disabled] == ["m", "n", "k", "queries_per_kv"]
    assert ex.result.intensity_flop_per_byte == pytest.approx(8192 / 2)  # s / bytes per element
    ex.set(head_dim=256)
    assert ex.result.intensity_flop_per_byte == pytest.approx(8192 / 2)  # independent of head_dim
    assert "与 head_dim 无关" in ex._summary.value
    ex.set(op="attention-decode")
    assert not ex.controls["queries_per_kv"].disabled
    assert "GQA 组内 1 个查询头" in ex._summary.value


def test_time_to_train_explorer_snaps_tokens_and_flags_mfu():
    # a preset brings its published tokens (GPT-3: 0.3T, DeepSeek-V3: 14.8T), not the previous model's 15T
    ex = X.time_to_train_explorer()
    ex.controls["model"].value = "gpt3-175b"
    assert ex.values()["tokens_t"] == pytest.approx(0.3)
    assert ex.result.total_flops == pytest.approx(compute.train_flops(transformer("gpt3-175b").params(), 0.3e12))
    ex.set(model="deepseek-v3")
    assert ex.values()["tokens_t"] == pytest.approx(14.8)
    assert "稠密模型" in ex._summary.value            # Chinchilla's 20 tokens/param is not quoted for an MoE
    # an MFU above the highest published large-run MFU (MegaScale 55 %) is flagged, one inside the range is not
    ex.set(mfu=0.70)
    assert "⚠" in ex._summary.value and f"{compute.PUBLISHED_MFU_RANGE[1]:.0%}" in ex._summary.value
    ex.set(mfu=0.45)
    assert "⚠" not in ex._summary.value


def test_fp64_gemm_sits_on_the_fp64_tensor_core_roof():
    """DGEMM runs on the FP64 Tensor Cores where a GPU has them (H100 SXM whitepaper: 66.9 TFLOP/s, twice
    the 33.5 vector peak); a GPU without them (catalog fp64_tensor_tflops = 0) keeps the vector peak."""
    from labutil import hardware
    from labutil.explore import compute as X

    h100 = hardware.gpu("H100-SXM")
    r = X.roofline_point("H100-SXM", "fp64", "gemm")
    assert r.peak_tflops == h100.fp64_tensor_tflops == pytest.approx(2 * h100.fp64_tflops, rel=0.01)
    assert r.ridge_flop_per_byte == pytest.approx(h100.fp64_tensor_tflops * 1e12 / (h100.hbm_gbs * 1e9))
    no_tc = [n for n in hardware.gpus() if hardware.gpu(n).fp64_tflops > 0 and not hardware.gpu(n).fp64_tensor_tflops]
    for n in no_tc:
        assert X.roofline_point(n, "fp64", "gemm").peak_tflops == hardware.gpu(n).fp64_tflops
    ex = X.roofline_explorer(gpu="H100-SXM", precision="fp64", op="gemm")
    assert "1.37e+03" not in ex._summary.value and "e+" not in ex._summary.value
