"""Every control of every explorer does something a learner can see.

A learner moves a control and expects the figure or the summary to change. For each explorer
found by ``benchmarks/bench_explorer_latency.explorer_factories`` (every public ``*_explorer``
buildable with its defaults), each control is moved from its default to the first other value of
``control_moves`` (a third of the way to the far end of a slider, the next option of a dropdown, the
other state of a toggle) and back. The move must change the rendered PNG (``Explorer.png``) or the
summary HTML. Where the model legitimately gives the same answer (a bandwidth cap binds, two
optimizers keep the same states) the explorer has to say so, which changes the summary.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_explorer_latency import control_moves, explorer_factories  # noqa: E402

FACTORIES = explorer_factories()


def test_the_scan_finds_the_course_explorers():
    # the discovery is by name: losing explorers here would silently weaken the test below
    assert len(FACTORIES) >= 30
    for name in ("compute.roofline_explorer", "storage.checkpoint_explorer", "troubleshoot.triage_explorer",
                 "node.gpu_nic_path_explorer", "nccl.acceptance_explorer", "health.acceptance_explorer"):
        assert name in FACTORIES


# Controls allowed to change nothing visible, with the reason (none at present: the container lint
# explorer's driver check has the image's CUDA_VERSION as its own control now).
KNOWN_DEAD: dict[str, str] = {}


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN_DEAD[n], strict=False))
                                  if n in KNOWN_DEAD else n for n in sorted(FACTORIES)])
def test_every_control_changes_the_figure_or_the_summary(name):
    ex = FACTORIES[name]()
    forward = control_moves(ex)[::2]  # the first move of each control; the next one is the way back
    assert forward or not ex.controls, f"{name}: no control could be moved"
    dead = []
    for move in forward:
        (key, value), = move.items()
        default = ex.controls[key].value
        png0, summary0 = ex.png(), ex._summary.value
        ex.set(**move)
        assert ex.error is None, f"{name}: moving {key} to {value!r} was rejected: {ex.error}"
        if ex._summary.value == summary0 and ex.png() == png0:
            dead.append(f"{key}: {default!r} -> {value!r}")
        ex.set(**{key: default})
        assert ex.error is None
    assert not dead, f"{name}: nothing visible changes when moving {dead}"


# -- where the model legitimately does not move, the explorer says why ---------------------------
def test_health_acceptance_the_slowest_ring_sets_busbw_whatever_the_number_of_slow_rails():
    from labutil.explore import health as eh

    ex = eh.acceptance_explorer()
    one = ex.result["measured_gbs"]
    assert one == pytest.approx(8 * 200 / 8 * 0.96)         # 8 rails x the slow rail's 200 Gb/s
    ex.set(slow_rails=3)
    assert ex.result["measured_gbs"] == one                  # physics: the slowest ring ends the collective
    assert "3 / 8 条轨道降到 200 Gb/s" in ex._summary.value and "最慢的环" in ex._summary.value
    assert ex.figure.axes[0].get_legend().get_texts()[1].get_text() == "3 of 8 rails at 200G"


def test_nccl_acceptance_names_the_side_that_caps_the_expected_busbw():
    from labutil.explore import nccl as en

    ex = en.acceptance_explorer()
    # 2 x DGX H100: min(NVLink ring 370, 8 x 400 Gb/s / 8 x 0.96 = 384) = 370 -> the ring caps it
    assert ex.result["expected_gbs"] == pytest.approx(370)
    assert "<b>NVLink 环</b>限制" in ex._summary.value and "效率低于 0.925" in ex._summary.value
    ex.set(efficiency=0.99)
    assert ex.result["expected_gbs"] == pytest.approx(370) and "× 0.99 = 396.0 GB/s" in ex._summary.value
    ex.set(efficiency=0.9)                                   # 8 x 50 x 0.9 = 360 < 370: the NICs cap it
    assert ex.result["expected_gbs"] == pytest.approx(360) and "<b>网卡</b>限制" in ex._summary.value
    ex.set(fabric="NVLink intra-node (8x H100, NVLS)")
    assert "不经过网卡" in ex._summary.value


def test_gpu_nic_path_shows_the_uplink_off_the_path_with_gpudirect_rdma():
    from labutil import links
    from labutil.explore import node as en

    ex = en.gpu_nic_path_explorer()
    bounce = ex.figure.axes[0].patches[3]
    assert ex.result["gdr"] and ex.result["rate_gbs"] == 50.0
    assert bounce.get_width() == pytest.approx(links.pcie_gbs("gen5", 16) / 2)  # faint: what it would carry
    assert bounce.get_alpha() < 0.5 and bounce.get_hatch() == "//"
    ex.set(uplink_pcie_gen=6)
    assert ex.result["rate_gbs"] == 50.0                                     # physics: the uplink is off the path
    assert bounce.get_width() == pytest.approx(links.pcie_gbs("gen6", 16) / 2)
    assert "上行 Gen6" in ex._summary.value and "不在路径上" in ex._summary.value
    ex.set(link="PXB")                                                       # still within NCCL_NET_GDR_LEVEL=PXB
    assert ex.result["gdr"] and "GPU↔NIC 为 PXB" in ex._summary.value
    ex.set(link="PHB")                                                       # farther: staged through host memory
    assert not ex.result["gdr"] and "PHB 远于 NCCL_NET_GDR_LEVEL=PXB" in ex._summary.value
    assert bounce.get_alpha() == 1.0 and bounce.get_width() == pytest.approx(links.pcie_gbs("gen6", 16) / 2)
    ex.set(uplink_pcie_gen=4)                                                # now the uplink generation matters
    assert ex.result["rate_gbs"] == pytest.approx(links.pcie_gbs("gen4", 16) / 2)
    ex.set(bidirectional=False)                                              # ... and so does one- vs two-way
    assert ex.result["rate_gbs"] == pytest.approx(links.pcie_gbs("gen4", 16))


def test_triage_greys_out_evidence_the_case_never_collected_and_says_so():
    from labutil.explore import troubleshoot as et

    ex = et.triage_explorer()                                 # degraded_rail: ibstat, perfquery x2, nccl_tests
    greyed = [k for k, w in ex.controls.items() if w.disabled]
    assert greyed == ["nccl_log", "lfs_df", "fio_read", "dmesg", "nvidia_smi_q", "dcgmi_diag", "watchdog_log"]
    path = ex.result["states"]
    ex.set(nccl_log=False)
    assert ex.result["states"] == path                        # the case has no NCCL log: nothing to withhold
    assert "☐ nccl_log" in ex._summary.value and "勾不勾都不影响诊断" in ex._summary.value
    ex.set(ibstat=False, perfquery_before=False, perfquery_after=False, nccl_tests=False)
    assert "本案例收集的证据都被去掉了" in ex._summary.value
    ex.set(case="nccl_timeout_xid79")                         # this case has the NCCL log and dmesg
    assert not ex.controls["nccl_log"].disabled and not ex.controls["dmesg"].disabled
    assert ex.controls["lfs_df"].disabled
