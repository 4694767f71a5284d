"""Issue 9: controls never offer impossible settings, and off-grid values fail with a clear ValueError."""

import math

import matplotlib
import pytest

matplotlib.use("Agg")

from labutil import widgets  # noqa: E402


@pytest.mark.parametrize("lo, hi", [(0, 64), (-4, 64), (1, math.inf), (1, float("nan")), (0.5, 8), (8, 4),
                                    (True, 8), ("1", 8)])
def test_pow2_slider_rejects_bounds_that_never_end_or_make_no_sense(lo, hi):
    with pytest.raises(ValueError, match="pow2_slider"):
        widgets.pow2_slider("GPUs", 8, lo, hi)


def test_pow2_slider_options_and_off_grid_value():
    s = widgets.pow2_slider("GPUs", 8, 1, 64)
    assert list(s.options) == [1, 2, 4, 8, 16, 32, 64] and s.value == 8
    with pytest.raises(ValueError, match=r"'GPUs' cannot be set to 12; allowed: \[1, 2, 4, 8, 16, 32, 64\]"):
        widgets.pow2_slider("GPUs", 12, 1, 64)


def test_factories_refuse_off_grid_values_instead_of_clamping():
    with pytest.raises(ValueError, match="'MFU' cannot be set to 1.5; allowed: a number in"):
        widgets.slider("MFU", 1.5, 0.1, 0.9, 0.01)
    with pytest.raises(ValueError, match="'nodes'"):
        widgets.int_slider("nodes", 100, 1, 64)
    with pytest.raises(ValueError, match="allowed: \\['a', 'b'\\]"):
        widgets.dropdown("mode", ["a", "b"], "c")
    with pytest.raises(ValueError, match="allowed: \\[1, 2\\]"):
        widgets.dropdown("mode", {"one": 1, "two": 2}, 3)
    d = widgets.dropdown("mode", {"one": 1, "two": 2}, 2)  # {label: value} options keep their values
    assert d.value == 2 and d.label == "two"


def test_explorer_builder_with_off_grid_value_names_the_control():
    from labutil.explore import comm as ec

    with pytest.raises(ValueError, match="allowed"):
        ec.collective_time_explorer(n=17)
    ex = ec.collective_time_explorer()
    with pytest.raises(ValueError, match=r"control 'n' .* cannot be set to 17; allowed: \["):
        ex.set(n=17)


def test_every_explorer_builds_with_its_defaults():
    import importlib
    import inspect
    import pkgutil

    import labutil.explore as E

    built = 0
    for m in pkgutil.iter_modules(E.__path__):
        mod = importlib.import_module(f"labutil.explore.{m.name}")
        for name, f in inspect.getmembers(mod, inspect.isfunction):
            if name.endswith("_explorer") and not name.startswith("_") and f.__module__ == mod.__name__:
                ex = f()
                assert ex.error is None, (m.name, name, ex.error)
                built += 1
    assert built >= 25


def test_figures_refuse_zero_instead_of_dividing_by_it():
    from labutil.explore import reliability as er
    from labutil.explore import sharing as es

    with pytest.raises(ValueError, match="failures_per_day"):
        er.goodput_vs_interval_figure(0, 600)
    with pytest.raises(ValueError, match="neighbour_service_ms"):
        es.noisy_neighbour_figure(neighbour_service_ms=0)
    with pytest.raises(ValueError, match="saturates"):
        es.noisy_neighbour_figure(qps=200, service_ms=8)
    assert er.goodput_vs_interval_figure(7.76, 600).axes[0].lines


def test_health_explorer_never_offers_more_slow_rails_than_rails():
    from labutil.explore import health as eh

    ex = eh.acceptance_explorer()
    assert ex.controls["slow_rails"].max == 8
    ex.set(n_rails=4)
    assert ex.controls["slow_rails"].max == 4 and ex.controls["slow_rails"].value <= 4
    ex.set(slow_rails=4)
    assert ex.error is None


def test_nccl_acceptance_pass_and_fail_lines_cannot_cross():
    from labutil.explore import nccl as en

    ex = en.acceptance_explorer()
    pass_w, fail_w = ex.controls["pass_fraction"], ex.controls["fail_fraction"]
    with pytest.raises(ValueError, match="pass_fraction"):  # below the fail line (0.6): not offered
        ex.set(pass_fraction=0.5)
    for p in (0.61, 0.7, 1.0):
        ex.set(pass_fraction=p)
        assert fail_w.max < pass_w.value and fail_w.value < pass_w.value
    ex.set(pass_fraction=1.0)
    for f in (0.3, 0.8, 0.9):
        ex.set(fail_fraction=f)
        assert pass_w.min > fail_w.value and pass_w.value > fail_w.value
        assert ex.error is None


def test_workload_explorer_offers_only_feasible_gpu_counts():
    from labutil import workloads as W
    from labutil.explore import workloads as ew

    ex = ew.workload_explorer()
    for name in W.workload_names():
        ex.set(workload=name)
        tp_pp = W.workload(name).tp_pp
        assert all(g % tp_pp == 0 for g in ex.controls["gpus"].options)
        for g in ex.controls["gpus"].options:
            ex.set(gpus=g)
            assert ex.error is None, (name, g, ex.error)
    ex.set(workload="llm-pretrain")
    assert 8 not in ex.controls["gpus"].options and 16 not in ex.controls["gpus"].options


def test_serving_explorer_offers_only_settings_that_fit():
    from labutil.explore import inference as ei

    ex = ei.serving_explorer()
    assert ex.error is None and ex.values()["tp"] == 4
    ex.set(gpu="A100-80G-SXM")
    assert "fp8" not in ex.controls["precision"].options      # no FP8 tensor cores on Ampere
    ex.set(gpu="L4")                                          # 24 GB: a 70B model only quantised / wide TP
    assert ex.error is None
    for p in ex.controls["precision"].options:
        ex.set(precision=p)
        for tp in ex.controls["tp"].options:
            ex.set(tp=tp)
            assert ex.error is None, (p, tp, ex.error)
    ex.set(gpu="H100-SXM", precision="bf16")
    assert 1 not in ex.controls["tp"].options                 # 141 GB of BF16 weights never fit one H100


def test_fabric_figure_keeps_coinciding_curves_visible_and_uses_nvlink_latency():
    """Issue 9 (ch22): 8x200G and 4x400G coincide (same Gb/s per node); the second is drawn dashed with markers."""
    from labutil.explore import nccl as en

    fig = en.fabric_expectation_figure()
    lines = fig.axes[0].get_lines()
    labels = [ln.get_label() for ln in lines]
    i200 = next(i for i, t in enumerate(labels) if t.startswith("8 x 200G"))
    i400 = next(i for i, t in enumerate(labels) if t.startswith("4 x 400G"))
    assert list(lines[i200].get_ydata()) == list(lines[i400].get_ydata())
    assert lines[i400].get_linestyle() != lines[i200].get_linestyle() and lines[i400].get_marker() == "o"
    assert "same curve" in labels[i400]
    nvl = next(t for t in labels if t.startswith("NVLink"))
    # per-step latency of NCCL 2.30.7 (labutil/data/nccl_tuning.toml): NVLink ring 3.4 us, network ring/Simple 14 us
    assert "α 3.4 µs/step" in nvl and all("α 14.0" in t for t in labels if not t.startswith("NVLink"))


def test_capstone_summary_says_over_budget_in_chinese():
    from labutil.explore import capstone as ecs

    ex = ecs.capstone_explorer()
    assert "超预算" not in ex._summary.value or not ex.result.within_budget
    ex.set(budget_musd=20.0)
    assert not ex.result.within_budget and "超预算" in ex._summary.value


def test_roofline_explorer_offers_only_precisions_the_gpu_has():
    from labutil.explore import compute as ecp

    ex = ecp.roofline_explorer()
    assert "fp8" in ex.controls["precision"].options
    ex.set(precision="fp8")
    ex.set(gpu="A100-80G-SXM")
    assert "fp8" not in ex.controls["precision"].options and ex.error is None
    with pytest.raises(ValueError, match="precision"):
        ecp.roofline_explorer(gpu="A100-80G-SXM", precision="fp8")
