"""Tests of labutil.health: each rule fires on the faulty sample, stays quiet on the healthy one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from labutil import health as H
from labutil import links
from labutil import parsers as P
from labutil.parsers import samples as S


def checks(findings, severity=None):
    return {(f.component, f.check) for f in findings if severity is None or f.severity == severity}


def test_ring_bounds_dgx_h100():
    # 8 x 400G rails = 8 x 50 GB/s; H100 NVLink 900 GB/s bidirectional -> 450 per direction
    assert H.ring_busbw_bound_gbs("inter", nic_gbps=400, nics_per_node=8) == 400.0
    assert H.ring_busbw_bound_gbs("intra", gpu="H100-SXM") == 450.0
    assert H.ring_busbw_bound_gbs("inter", nic_gbps=25, nics_per_node=1, gpu="H800-SXM") == pytest.approx(3.125)
    assert H.expected_busbw_gbs(400, 0.9) == pytest.approx(360.0)
    with pytest.raises(ValueError, match="scope"):
        H.ring_busbw_bound_gbs("cross")
    with pytest.raises(ValueError, match="efficiency"):
        H.expected_busbw_gbs(400, 1.5)


def test_ibstat_rules():
    f = H.check_ibstat(P.parse_ibstat(S.sample("ibstat_ndr")))
    assert checks(f, "critical") == {("mlx5_1 port 1", "ib_rate"), ("mlx5_2 port 1", "ib_state"),
                                     ("mlx5_2 port 1", "ib_physical_state")}
    assert H.check_ibstat(P.parse_ibstat(S.sample("ibstat_ndr")), H.AcceptanceSpec(ib_rate_gbps=200)) != []
    # a link at the expected rate raises nothing
    ok = [ca for ca in P.parse_ibstat(S.sample("ibstat_ndr")) if ca.name == "mlx5_0"]
    assert H.check_ibstat(ok) == []


def test_ibv_devinfo_rules():
    f = H.check_ibv_devinfo(P.parse_ibv_devinfo(S.sample("ibv_devinfo_v")))
    assert checks(f) == {("mlx5_1 port 1", "ib_rate")}
    assert f[0].value == 200.0 and f[0].expected == 400.0
    w = H.check_ibv_devinfo(P.parse_ibv_devinfo(S.sample("ibv_devinfo_v").replace("4X (2)", "1X (1)")))
    assert ("mlx5_0 port 1", "ib_width") in checks(w, "critical")


def test_perfquery_delta_rules():
    a, b = (P.parse_perfquery(S.sample(k)) for k in ("perfquery_t0", "perfquery_t1"))
    f = {x.check: x for x in H.check_perfquery(a, b)}
    assert f["LinkDownedCounter"].severity == "critical" and f["LinkDownedCounter"].value == 1
    assert f["SymbolErrorCounter"].severity == "critical" and f["SymbolErrorCounter"].value == 4115
    assert f["PortRcvErrors"].severity == "warning" and f["PortRcvErrors"].value == 55
    assert H.check_perfquery(b, b) == []  # no change -> healthy whatever the absolute values
    reset = H.check_perfquery(b, a)
    assert all(x.severity == "info" for x in reset)


def test_gpu_rules():
    f = H.check_nvidia_smi_q(P.parse_nvidia_smi_q(S.sample("nvidia_smi_q")))
    bad = "GPU1 00000000:5D:00.0"
    assert checks(f, "critical") == {(bad, "ecc_uncorrectable"), (bad, "row_remap_pending"),
                                     (bad, "clock_throttle"), (bad, "temperature")}
    assert not any(x.component.startswith("GPU0") for x in f)  # 'Idle' is not a throttle


def test_xid_and_dcgmi_rules():
    f = H.check_xid(P.parse_xid_errors(S.sample("dmesg_xid")))
    sev = {x.check: x.severity for x in f}
    assert sev == {"xid_94": "warning", "xid_63": "warning", "xid_13": "info", "xid_79": "critical"}
    d = H.check_dcgmi_diag(P.parse_dcgmi_diag(S.sample("dcgmi_diag_r2_fail")))
    assert {x.check for x in d if x.severity == "critical"} == {"GPU Memory", "Page Retirement/Row Remap"}
    assert "GPU 3" in [x for x in d if x.check == "GPU Memory"][0].message
    ok = H.check_dcgmi_diag(P.parse_dcgmi_diag(S.sample("dcgmi_diag_r3_pass")))
    assert [x.severity for x in ok] == ["info"]  # the skipped EUD test


def test_busbw_rule_healthy_vs_degraded():
    bound = H.ring_busbw_bound_gbs("inter")
    good = H.check_nccl_tests(P.parse_nccl_tests(S.sample("nccl_tests_all_reduce_2node")), bound)
    assert [x.severity for x in good] == ["info"] and good[0].value == pytest.approx(367.68)
    bad = H.check_nccl_tests(P.parse_nccl_tests(S.sample("nccl_tests_all_reduce_degraded")), bound)
    assert bad[0].severity == "critical" and bad[0].value == pytest.approx(183.92)
    # between the fail and pass fractions -> warning
    mid = H.check_nccl_tests(P.parse_nccl_tests(S.sample("nccl_tests_all_reduce_2node")), 367.68 / 0.7)
    assert mid[0].severity == "warning"


def test_nccl_log_rules():
    assert H.check_nccl_log(P.parse_nccl_debug_log(S.sample("nccl_debug_ib"))) == []
    f = H.check_nccl_log(P.parse_nccl_debug_log(S.sample("nccl_debug_socket")))
    assert {x.check: x.severity for x in f} == {"network": "critical", "gdrdma": "warning", "nccl_warn": "warning"}


def test_run_checks_report_and_parse_errors():
    rep = H.run_checks(ibstat=S.sample("ibstat_ndr"), perfquery=(S.sample("perfquery_t0"), S.sample("perfquery_t1")),
                       nvidia_smi_q="not nvidia-smi output", nccl_tests=S.sample("nccl_tests_all_reduce_2node"),
                       expected_busbw_gbs=400.0)
    assert rep.status == "FAIL" and not rep.passed
    assert ("nvidia-smi -q", "parse") in checks(rep.findings, "critical")
    assert rep.checks_run == ["ibstat", "perfquery", "nccl-tests"]
    table = str(rep.table())
    assert table.startswith("**FAIL**") and "| critical | mlx5_1 port 1 | ib_rate | 200 | 400 |" in table
    assert rep.rows()[0]["severity"] == "critical" and rep.text().startswith("FAIL:")
    healthy = H.run_checks(dcgmi=S.sample("dcgmi_diag_r3_pass"), nccl_log=S.sample("nccl_debug_ib"))
    assert healthy.status == "PASS" and healthy.passed
    with pytest.raises(ValueError, match="expected_busbw_gbs"):
        H.run_checks(nccl_tests=S.sample("nccl_tests_all_reduce_2node"))
    with pytest.raises(ValueError, match="pair"):
        H.run_checks(perfquery=S.sample("perfquery_t0"))
    assert H.run_checks().status == "PASS" and "no findings" in str(H.run_checks().table())


def test_spec_and_finding_validation():
    with pytest.raises(ValueError, match="busbw_fail_fraction"):
        H.AcceptanceSpec(busbw_pass_fraction=0.5, busbw_fail_fraction=0.7)
    with pytest.raises(ValueError, match="severity"):
        H.Finding("fatal", "x", "y", "z")


@given(frac=st.floats(0.01, 2.0))
def test_busbw_severity_is_monotone(frac):
    r = P.parse_nccl_tests(S.sample("nccl_tests_all_reduce_2node"))
    sev = H.check_nccl_tests(r, r.peak_busbw_gbs / frac)[0].severity
    spec = H.AcceptanceSpec()
    expected = "info" if frac >= spec.busbw_pass_fraction else (
        "warning" if frac >= spec.busbw_fail_fraction else "critical")
    assert sev == expected


# ----------------------------------------------------------------------------------- links
def test_link_rates_ibta_and_pcisig():
    # IBTA 4X data rates: SDR 8, DDR 16, QDR 32, FDR 54.5, EDR 100, HDR 200, NDR 400, XDR 800 Gb/s
    got = [round(float(links.ib_port_gbps(g)), 1) for g in links.ib_generations()]
    assert got == [8.0, 16.0, 32.0, 54.5, 100.0, 200.0, 400.0, 800.0]
    # PCIe x16 per direction: Gen3 15.75, Gen4 31.5, Gen5 63.0 GB/s (128b/130b)
    assert links.pcie_gbs("gen3", 16) == pytest.approx(15.754, rel=1e-3)
    assert links.pcie_gbs("Gen5", 16) == pytest.approx(63.015, rel=1e-3)
    assert links.pcie_gbs("gen1", 1) == pytest.approx(0.25)
    assert links.ib_generation_for_rate(200) == "HDR" and links.ib_generation_for_rate(400) == "NDR"
    assert list(links.pcie_gbs("gen4", [1, 16])) == pytest.approx([31.5077 / 16, 31.5077], rel=1e-4)
    with pytest.raises(KeyError, match="Closest"):
        links.ib_link("NDRR")
    with pytest.raises(ValueError, match="lanes"):
        links.pcie_gbs("gen5", 0)


# ------------------------------------------------------------------------- ch23 explorer
def test_acceptance_explorer_headless():
    from labutil.explore import health as EH

    ex = EH.acceptance_explorer()
    # default efficiency: the cluster model's 0.96 of the NIC line rate (labutil.cluster.NIC_EFFICIENCY)
    assert ex.result["measured_gbs"] == pytest.approx(192.0) and ex.result["severity"] == "critical"
    line = ex.figure.axes[0].lines[1]
    before = line.get_ydata().copy()
    ex.set(slow_rails=0)
    assert ex.error is None and ex.result["severity"] == "info"
    # healthy: the cluster's expectation, capped by the NVLink ring (min(370, 8 x 48 = 384)), not 384
    assert ex.result["measured_gbs"] == pytest.approx(370.0) == ex.result["expected_gbs"]
    assert ex.result["pass_gbs"] == pytest.approx(296.0) and ex.result["bound_gbs"] == pytest.approx(400.0)
    assert line.get_ydata()[-1] > before[-1] * 1.9  # the drawn curve followed the model
    ex.set(slow_rails=8, n_rails=4)   # the slider ends at n_rails: never an impossible setting
    assert ex.error is None and ex.values()["slow_rails"] == 4
    assert ex.result["measured_gbs"] == pytest.approx(4 * 200 / 8 * 0.96)
    ex.set(slow_rails=2, slow_rail_gbps=100)
    assert ex.result["measured_gbs"] == pytest.approx(4 * 100 / 8 * 0.96)


def test_health_figures_have_data():
    from labutil.explore import health as EH

    f1 = EH.busbw_samples_figure()
    ys = [ln.get_ydata() for ln in f1.axes[0].lines[:2]]
    assert max(ys[0]) == pytest.approx(367.68) and max(ys[1]) == pytest.approx(183.92)
    f2 = EH.counter_delta_figure()
    widths = sorted((p.get_width() for p in f2.axes[0].patches), reverse=True)
    assert widths[0] == 4116 and f2.axes[0].get_xlabel().endswith("(count, log scale)")


def test_rail_model_vectorised_and_validated():
    v = H.rail_allreduce_busbw_gbs([100, 200, 400], 8, 0, None, 1.0)
    assert np.allclose(v, [100.0, 200.0, 370.0])  # at line rate 8 x 400G would be 400: the NVLink ring caps it
    from labutil.cluster import Cluster
    # one owner: the cluster's acceptance expectation, NVLink-ring capped (min(370, 8 x 48 = 384))
    assert H.rail_allreduce_busbw_gbs(400) == pytest.approx(Cluster.system("DGX-H100", 2).acceptance_busbw_gbs()) == 370.0
    assert H.rail_allreduce_busbw_gbs(400, 8, 1, 200) == pytest.approx(192.0)
    with pytest.raises(ValueError, match="slow_rails"):
        H.rail_allreduce_busbw_gbs(400, 2, 3, 200)
    assert H.busbw_severity(300, 400) == "warning" and H.busbw_severity(100, 400) == "critical"


def test_acceptance_spec_for_cluster_hdr_and_roce_ports_pass():
    from labutil.parsers import samples as S2
    from labutil import parsers as P2

    class Hdr:
        nic_gbps = 200.0
        gpus_per_node = 8

    spec = H.AcceptanceSpec.for_cluster(Hdr())
    assert spec.ib_rate_gbps == 200.0 and spec.ib_width is None
    cas = P2.parse_ibstat(S2.sample("ibstat_roce"))
    rate = max(p.rate_gbps for ca in cas for p in ca.ports)

    class Roce:
        nic_gbps = rate
        gpus_per_node = 8

    assert [f for f in H.check_ibstat(cas, H.AcceptanceSpec.for_cluster(Roce())) if f.severity == "critical"] == []
    # the fixed-400 default still flags such a port (the old behaviour this replaces in triage)
    assert any(f.check == "ib_rate" for f in H.check_ibstat(cas)) == (rate < 400)
    with pytest.raises(TypeError):
        H.AcceptanceSpec.for_cluster(object())


def test_run_checks_takes_busbw_from_the_cluster():
    from labutil.parsers import samples as S2

    class C:
        nic_gbps = 400.0
        gpus_per_node = 8

        def expected_busbw_gbs(self, op, ranks=None):
            return 360.0

    rep = H.run_checks(nccl_tests=S2.sample("nccl_tests_all_reduce_degraded"), cluster=C())
    assert rep.status == "FAIL" and any(f.check == "busbw" and f.expected == 360.0 for f in rep.findings)


def test_fatal_nccl_warn_lines_are_critical():
    from labutil import parsers as P2
    lg = P2.parse_nccl_debug_log("h:1:2 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error 12, "
                                 "opcode 1, len 0, vendor err 129\nh:1:2 [0] NCCL WARN some tuning hint\n")
    sev = [f.severity for f in H.check_nccl_log(lg) if f.check == "nccl_warn"]
    assert sev == ["critical", "warning"]


def test_ch22_and_ch23_figures_draw_the_same_acceptance_lines():
    # review N4 / consistency 1: the same samples, the same expected / pass / fail / bound lines in both chapters
    import numpy as np

    from labutil.cluster import Cluster
    from labutil.explore import health as EH
    from labutil.explore import nccl as EN

    def hlines(fig):
        return sorted(round(float(ln.get_ydata()[0]), 6) for ln in fig.axes[0].lines
                      if len(ln.get_ydata()) == 2 and np.allclose(ln.get_ydata()[0], ln.get_ydata()[1])
                      and ln.get_xdata()[0] == 0)

    f23 = EH.busbw_samples_figure()
    f22 = EN.nccl_samples_figure(cluster=Cluster.system("DGX-H100", 2))
    assert hlines(f23) == hlines(f22) == pytest.approx([0.6 * 370, 0.8 * 370, 370.0, 400.0])
    # and ch23's explorer, at its defaults, draws the same four lines (expected, 80 % / 60 % of it, bound)
    ex = EH.acceptance_explorer()
    assert hlines(ex.figure) == hlines(f23)
    styles = {(ln.get_linestyle(), ln.get_color()) for ln in ex.figure.axes[0].lines if ln.get_xdata()[0] == 0}
    assert styles == {(ln.get_linestyle(), ln.get_color()) for ln in f23.axes[0].lines if ln.get_xdata()[0] == 0}


def test_run_checks_troubleshoot_capstone_and_explorer_grade_against_one_number():
    # issue 19 step 3: run_checks(cluster=...), the ch23 explorer, troubleshoot and the capstone all use
    # Cluster.acceptance_busbw_gbs (2x DGX H100: 370 GB/s, pass line 296)
    from labutil import troubleshoot as T
    from labutil.cluster import Cluster
    from labutil.explore import health as EH
    from labutil.parsers import samples

    c = Cluster.system("DGX-H100", 2)
    rep = H.run_checks(cluster=c, nccl_tests=samples.sample("nccl_tests_all_reduce_degraded"))
    busbw = [f for f in rep.findings if f.check == "busbw"][0]
    model = EH.acceptance_model()
    assert busbw.expected == pytest.approx(model["expected_gbs"]) == pytest.approx(370.0)
    assert model["pass_gbs"] == pytest.approx(296.0) and model["bound_gbs"] == pytest.approx(400.0)
    assert T.Workload().expected_busbw_gbs == pytest.approx(370.0)
    assert H.ring_busbw_bound_gbs("inter") == c.line_bound_gbs()
