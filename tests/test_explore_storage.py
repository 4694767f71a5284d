"""Headless tests of the storage explorers and figure builders (labutil.explore.storage)."""

import numpy as np
import pytest

from labutil import dataloading as dl
from labutil import storage
from labutil.explore import storage as es


def test_checkpoint_explorer_follows_model():
    ex = es.checkpoint_explorer()
    assert ex.result["size_gb"] == pytest.approx(storage.checkpoint_gb(70e9))
    heights = [b.get_height() for b in ex.figure._lab_state["bars1"]]
    assert sum(heights) == pytest.approx(ex.result["size_gb"])
    sync_block = ex.result["save"].blocking_s
    ex.set(async_save=True)
    assert ex.error is None
    assert ex.result["save"].blocking_s < sync_block / 10
    assert ex.figure._lab_state["bars2"][1].get_height() == pytest.approx(ex.result["save"].blocking_s)
    ex.set(async_save=False, n_writers=4096, write_gbs=1000)
    assert ex.result["save"].write_s == pytest.approx(storage.checkpoint_write_s(980.0, 1000, 4096, 2.0))
    ex.set(optimizer="none")
    assert ex.result["size_gb"] == pytest.approx(140.0)


def test_pipeline_explorer_bottleneck_moves():
    ex = es.pipeline_explorer()
    assert ex.result.bottleneck == "cpu_decode"
    red = [b for b in ex.figure._lab_state["bars"] if b.get_facecolor()[0] > 0.8]
    assert len(red) == 1
    ex.set(cpu_cores_per_gpu=32)
    assert ex.result.bottleneck == "gpu_compute" and ex.result.gpu_utilization == pytest.approx(1.0)
    ex.set(read_gbs_per_gpu=0.1)
    assert ex.result.bottleneck == "storage_bw"
    ex.set(read_gbs_per_gpu=5.0, sample_kb=4, iops_per_gpu=500, file_bytes=0.0)
    assert ex.result.bottleneck == "storage_iops"
    ex.set(file_bytes=64e6)
    assert ex.result.bottleneck != "storage_iops"
    widths = [b.get_width() for b in ex.figure._lab_state["bars"]]
    assert widths == pytest.approx(np.clip(ex.result.stage_values(), 1, 1e9))


def test_tier_explorer_and_error_path():
    ex = es.tier_explorer()
    ck = ex.result.tier("checkpoint")
    assert ck.limited_by == "bandwidth"
    ex.set(checkpoint_server="hdd-pfs-4u")
    assert ex.result.tier("checkpoint").servers == pytest.approx(
        np.ceil(500 / storage.server_spec("hdd-pfs-4u").write_gbs))
    heights = [b.get_height() for b in ex.figure._lab_state["b2"]]
    assert heights == [t.servers_for_bandwidth for t in ex.result.tiers]
    ex.set(dataset_tb=3000)
    assert ex.result.tier("hot").servers_for_capacity > 2


@pytest.mark.parametrize("builder", [es.io_size_figure, es.interference_figure, es.checkpoint_size_figure,
                                     es.checkpoint_write_figure, es.checkpoint_overhead_figure,
                                     es.cores_per_gpu_figure, es.small_file_figure])
def test_figures_have_data_and_units(builder):
    fig = builder()
    ax = fig.axes[0]
    assert ax.lines or ax.patches or ax.collections
    for label in (ax.get_xlabel(), ax.get_ylabel()):
        assert "(" in label and label.isascii()
    fig.canvas.draw()


def test_interference_figure_shows_the_stall_it_names():
    """Issue 9: the title promised a stall the plot did not show; the GPU panel's starved area is the model's stall."""
    from labutil import storage

    fig = es.interference_figure()
    res = storage.read_write_interference(60.0, 100.0, 2450.0, 1800.0, prefetch_s=2.0,
                                          mixed_efficiency=storage.mixed_efficiency())
    gpu_ax = fig.axes[1]
    t, speed = gpu_ax.lines[1].get_data()
    trapezoid = getattr(np, "trapezoid", None) or np.trapz  # numpy < 2.0 (the floor) has only trapz
    lost_s = trapezoid(1.0 - np.asarray(speed) / 100.0, t)
    assert lost_s == pytest.approx(res.shared_stall_s, rel=0.03)
    assert f"{res.shared_stall_s:.1f} s" in gpu_ax.get_title()


def test_cores_figure_data_matches_model():
    fig = es.cores_per_gpu_figure(decode_rates=(150.0,))
    x, y = fig.axes[0].lines[0].get_data()
    r = dl.pipeline_throughput(dl.RESNET50_A100_IMG_S, dl.IMAGENET_MEAN_JPEG_BYTES, cpu_cores_per_gpu=8,
                               decode_samples_per_s_per_core=150.0, read_gbs_per_gpu=5.0,
                               decoded_sample_bytes=dl.DECODED_224_BYTES)
    assert y[list(x).index(8)] == pytest.approx(100 * r.gpu_utilization)


def test_checkpoint_explorer_says_why_optimizer_precision_and_writers_do_not_change_it():
    ex = es.checkpoint_explorer()
    size, write_s = ex.result["size_gb"], ex.result["save"].write_s
    ex.set(optimizer="adamw", precision="fp16")          # same states (m, v), same 2-byte weights
    assert ex.result["size_gb"] == size and ex.result["bytes_per_param"] == 14
    assert [t.get_text() for t in ex.figure.axes[0].get_xticklabels()] == ["fp32 master", "fp16 weights",
                                                                           "AdamW m+v"]
    # a short remark only where the choice changes nothing (the why is in ch17 §1, not on every state)
    assert "AdamW 与 Adam 存同样的 m、v" in ex._summary.value and "fp16 与 bf16" in ex._summary.value
    ex.set(optimizer="adam", precision="bf16")
    assert "AdamW" not in ex._summary.value and "fp16" not in ex._summary.value
    ex.set(optimizer="adamw", precision="fp16")
    ex.set(optimizer="sgd")                              # one momentum buffer: 4 + 4 + 2 = 10 B/param
    assert ex.result["bytes_per_param"] == 10 and "SGD momentum" in ex.figure.axes[0].get_xticklabels()[2].get_text()
    # 64 writers x 2 GB/s = 128 > the file system's 100 GB/s: the file system binds, more writers do nothing
    ex.set(optimizer="adam", n_writers=128)
    assert ex.result["save"].write_s == write_s and ex.result["effective_write_gbs"] == 100
    assert "128 个写入者 × 2 GB/s = 256 GB/s" in ex._summary.value
    assert "瓶颈在存储聚合带宽 100 GB/s" in ex._summary.value
    ex.set(n_writers=16)                                 # 16 x 2 = 32 GB/s: now the writers bind
    assert ex.result["effective_write_gbs"] == 32 and "瓶颈在写入者" in ex._summary.value


def test_tier_explorer_labels_what_the_capacity_bars_hold():
    ex = es.tier_explorer()
    labels = ex.figure._lab_state["cap_tb"]
    assert labels[1].get_text() == "7.35 TB"            # 3 checkpoints x 175e9 x 14 B
    ex.set(checkpoints_kept=5)
    assert ex.result.tier("checkpoint").servers == 7     # still set by the 500 GB/s write bandwidth
    assert labels[1].get_text() == "12.2 TB" and "由带宽决定" in ex._summary.value
    ex.set(params_b=405)
    assert labels[1].get_text() == "28.4 TB" and "5 个 × 5.67 TB" in ex._summary.value
    ex.set(write_gbs=20)                                 # 1 server's write bandwidth: capacity decides now
    assert "由容量决定" in ex._summary.value


def test_checkpoint_explorer_parts_add_up_and_empty_bars_are_labelled():
    """Review 2026-12-03: fp32 bars double-counted the weights; the sync 'background' bar was empty and unlabelled."""
    from labutil import storage
    ex = es.checkpoint_explorer()
    for opt in storage.OPTIMIZERS:
        for prec in storage.PRECISIONS:
            ex.set(optimizer=opt, precision=prec)
            assert sum(ex.result["parts_gb"].values()) == pytest.approx(ex.result["size_gb"])
    ex.set(optimizer="adam", precision="bf16", async_save=False)
    labels = [t.get_text() for t in ex.figure._lab_state["tlab"]]
    assert labels[2] == "0 s (sync: none)" and "没有后台写入" in ex._summary.value
    ex.set(async_save=True)
    assert ex.figure._lab_state["tlab"][2].get_text().endswith(" s") and "后台写入" in ex._summary.value


def test_checkpoint_overhead_figure_is_the_exact_goodput_model():
    """Issue 19 step 4: the curves are 1 - reliability.goodput (no inline first-order formula)."""
    import numpy as np
    from labutil import reliability
    f = es.checkpoint_overhead_figure(sync_s=98.0, async_s=0.24, mtbf_s=3 * 3600.0)
    line = f.axes[0].get_lines()[0]
    tau = np.asarray(line.get_xdata()) * 60
    exact = 100 * (1 - reliability.goodput(86400 / (3 * 3600.0), 0.0, tau, 98.0))
    assert np.allclose(line.get_ydata(), exact)
    first_order = 100 * (98.0 / tau + tau / (2 * 3 * 3600.0))
    assert not np.allclose(line.get_ydata(), first_order)


def test_pipeline_explorer_default_is_the_chapters_imagenet_sample():
    """ch18 §2 prints 9,284 samples/s of storage bandwidth at 1 GB/s for the 107.7 kB mean ImageNet JPEG;
    the explorer's default state shows the same capacity (it once used 110 kB and showed 9,091)."""
    from labutil import dataloading as dl
    ex = es.pipeline_explorer()
    assert ex.result.capacities["storage_bw"] == pytest.approx(1e9 / dl.IMAGENET_MEAN_JPEG_BYTES)


def test_pipeline_explorer_says_why_decode_is_zero():
    ex = es.pipeline_explorer().set(cpu_cores_per_gpu=1)
    assert ex.result.capacities["cpu_decode"] == 0 and ex.result.bottleneck == "cpu_decode"
    assert "没有核做解码" in ex._summary.value


def test_checkpoint_explorer_summary_never_prints_scientific_notation():
    ex = es.checkpoint_explorer().set(n_writers=4096, per_writer_gbs=25.0, write_gbs=2000)
    assert "e+" not in ex._summary.value and "102,400 GB/s" in ex._summary.value
