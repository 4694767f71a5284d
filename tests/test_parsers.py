"""Tests of labutil.parsers: real formats parse to the right numbers; garbage, truncation and
shuffled lines give a result or ParseError, never another exception."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labutil import comm
from labutil import parsers as P
from labutil.parsers import samples as S

FIX = Path(__file__).parent / "fixtures"
CSV_FIELDS = ("index,name,pci.bus_id,driver_version,memory.total,memory.used,temperature.gpu,power.draw,"
              "power.limit,clocks.sm,ecc.errors.uncorrected.volatile.total")


def fixture(name: str) -> str:
    return (FIX / name).read_text(encoding="utf-8")


# ------------------------------------------------------------------------------- nccl-tests
def test_all_reduce_sample_rows_and_consistency():
    r = P.parse_nccl_tests(S.sample("nccl_tests_all_reduce_2node"))
    assert r.op == "all_reduce" and r.binary == "all_reduce_perf"
    assert len(r.rows) == 16 and r.rows[0].size_bytes == 8 and r.rows[-1].size_bytes == 8 * 2**30
    assert r.n_ranks == 16 and r.hosts == ["node-a", "node-b"]
    assert r.nccl_version == "2.23.4+cuda12.6" and r.nccl_tests_version == "2.18.3"
    assert r.params["warmup_iters"] == 5 and r.params["iters"] == 20
    last = r.rows[-1]
    assert last.count == last.size_bytes // 4 and last.dtype == "float" and last.redop == "sum" and last.root == -1
    # algbw = S / t and busbw = algbw * 2(n-1)/n (nccl-tests PERFORMANCE.md)
    assert last.algbw_gbs == pytest.approx(last.size_bytes / (last.time_us * 1e-6) / 1e9, rel=2e-3)
    assert last.busbw_gbs == pytest.approx(float(comm.busbw_gbs("all_reduce", last.algbw_gbs, 16)), rel=2e-3)
    assert last.wrong == 0 and last.inplace_wrong == 0 and r.total_wrong() == 0
    assert r.avg_busbw_gbs == pytest.approx(128.2) and r.out_of_bounds == 0
    assert r.peak_busbw_gbs == pytest.approx(367.68)


@pytest.mark.parametrize("name,op,n,factor", [
    ("nccl_tests_all_gather_1node", "all_gather", 8, 7 / 8),
    ("nccl_tests_reduce_scatter_1node", "reduce_scatter", 8, 7 / 8),
    ("nccl_tests_alltoall_2node", "all_to_all", 16, 15 / 16),
    ("nccl_tests_broadcast_2node", "broadcast", 16, 1.0),
])
def test_each_collective_sample(name, op, n, factor):
    r = P.parse_nccl_tests(S.sample(name))
    assert r.op == op and op in comm.OPS and r.n_ranks == n
    for row in r.rows:
        if row.algbw_gbs > 1:
            assert row.busbw_gbs / row.algbw_gbs == pytest.approx(factor, rel=0.01)


def test_broadcast_na_wrong_and_root():
    r = P.parse_nccl_tests(S.sample("nccl_tests_broadcast_2node"))
    assert all(row.wrong is None and row.inplace_wrong is None and row.root == 0 for row in r.rows)
    old = P.parse_nccl_tests(fixture("nccl_tests_broadcast_old_na.txt"))
    assert old.op == "broadcast" and [x.root for x in old.rows] == [0, 0, 0]
    assert old.rows[0].time_us == 45.10 and old.rows[0].inplace_time_us == 38.20
    assert old.rows[0].max_error is None and old.nccl_version == "2.9.6+cuda11.2"
    assert old.rows[0].redop == "none" and old.devices[1].host == "host-b" and old.devices[1].group is None


def test_old_error_column_and_mpi_prefix():
    r = P.parse_nccl_tests(fixture("nccl_tests_old_error_column.txt"), op="all_reduce")
    assert r.op == "all_reduce" and len(r.rows) == 5
    assert r.rows[0].max_error == 1e-07 and r.rows[0].inplace_max_error == 0.0 and r.rows[0].wrong is None
    assert r.rows[-1].busbw_gbs == 0.01
    m = P.parse_nccl_tests(fixture("nccl_tests_mpi_prefixed.txt"))
    assert [x.size_bytes for x in m.rows] == [8, 16, 32] and m.rows[0].time_us == 88.10
    assert m.hosts == ["efa-worker-0", "efa-worker-1"] and m.op is None


def test_bench_collectives_output_parses():
    """Our own harness prints nccl-tests' table: format_header/format_row must round-trip."""
    from labutil.bench import collectives as C

    devs = [{"rank": i, "pid": 100 + i, "host": "localhost", "device": i, "bus_id": "cpu", "name": "CPU"}
            for i in range(2)]
    head = C.format_header(op="all_reduce", backend="gloo", minbytes=1024, maxbytes=4096, stepfactor=2,
                           stepbytes=0, warmup=2, iters=5, check=1, devices=devs, average=1)
    rows = []
    for s in (1024, 2048, 4096):
        alg, bus = C.bandwidths("all_reduce", s, 1e-4, 2)
        blk = {"time_us": 100.0, "algbw_gbs": alg, "busbw_gbs": bus, "wrong": 0}
        rows.append(C.format_row({"size_bytes": s, "count": s // 4, "type": "float", "redop": "sum", "root": -1,
                                  "out_of_place": blk, "in_place": blk}))
    text = "\n".join([head, *rows, C.format_footer("all_reduce", 0, 0.03)])
    r = P.parse_nccl_tests(text)
    assert r.op == "all_reduce" and [x.size_bytes for x in r.rows] == [1024, 2048, 4096]
    assert r.rows[2].algbw_gbs == pytest.approx(0.04, abs=0.005) and r.n_ranks == 2


def test_nccl_tests_errors():
    with pytest.raises(P.ParseError, match="no column header"):
        P.parse_nccl_tests("hello\nworld")
    with pytest.raises(P.ParseError, match="no complete data row"):
        P.parse_nccl_tests(S.sample("nccl_tests_all_reduce_2node").split("           8")[0])
    with pytest.raises(P.ParseError, match="empty"):
        P.parse_nccl_tests("   ")
    with pytest.raises(P.ParseError):
        P.parse_nccl_tests(None)
    with pytest.raises(P.ParseError, match="op must be"):
        P.parse_nccl_tests(S.sample("nccl_tests_broadcast_2node"), op="allreduce_typo")
    assert issubclass(P.ParseError, ValueError)


# ------------------------------------------------------------------------------- nvidia-smi
def test_nvidia_smi_csv_with_and_without_header():
    a = P.parse_nvidia_smi_csv(S.sample("nvidia_smi_csv"))
    b = P.parse_nvidia_smi_csv(S.sample("nvidia_smi_csv_noheader"), fields=CSV_FIELDS)
    assert a.fields == b.fields and len(a.rows) == 8
    assert a.units["memory.total"] == "MiB" and a.rows[0]["memory.total"] == 81559.0
    assert a.rows[5]["power.draw"] is None  # [N/A]
    assert a.column("index") == list(range(8)) and a.rows[3]["temperature.gpu"] == 88.0
    assert [r["memory.used"] for r in a.rows] == [r["memory.used"] for r in b.rows]
    with pytest.raises(P.ParseError, match="fields="):
        P.parse_nvidia_smi_csv(S.sample("nvidia_smi_csv_noheader"))
    with pytest.raises(KeyError):
        a.column("nope")
    c = P.parse_nvidia_smi_csv("index, name, memory.total [MiB]\n0, NVIDIA L4, [Not Supported]\n")
    assert c.rows == [{"index": 0, "name": "NVIDIA L4", "memory.total": None}]


def test_nvidia_smi_q_sample():
    q = P.parse_nvidia_smi_q(S.sample("nvidia_smi_q"))
    assert q.driver_version == "550.90.07" and q.cuda_version == "12.4" and q.attached_gpus == 2
    g0, g1 = q.gpus
    assert g0.product_name == "NVIDIA H100 80GB HBM3" and g0.serial == "1654923000101"
    assert g0.bus_id == "00000000:18:00.0" and g0.ecc_volatile_uncorrectable == 0 and g0.remapped_rows_pending is False
    assert g0.power_draw_w == 71.54 and g0.power_limit_w == 700.0 and g0.temperature_c == 33.0
    assert g1.ecc_volatile_uncorrectable == 2 and g1.ecc_volatile_correctable == 3
    assert g1.remapped_rows_uncorrectable == 2 and g1.remapped_rows_pending is True
    assert "HW Thermal Slowdown" in g1.throttle_active and g1.slowdown_temp_c == 87.0


def test_nvidia_smi_q_old_driver_layout():
    q = P.parse_nvidia_smi_q(fixture("nvidia_smi_q_old_driver.txt"))
    g = q.gpus[0]
    assert q.driver_version == "418.67" and g.ecc_mode == "Enabled"
    assert g.ecc_volatile_correctable == 0 and g.ecc_volatile_uncorrectable == 1
    assert g.ecc_aggregate_correctable == 4 and g.ecc_aggregate_uncorrectable == 1
    assert g.retired_pages_sbe == 2 and g.retired_pages_dbe == 1 and g.retired_pages_pending is True
    assert g.throttle_active == ("SW Power Cap",) and g.power_limit_w == 300.0 and g.power_draw_w == 290.11
    with pytest.raises(P.ParseError, match="GPU"):
        P.parse_nvidia_smi_q("Driver Version : 1\n")


def test_topo_dgx_nic_for_each_gpu():
    t = P.parse_nvidia_smi_topo(S.sample("nvidia_smi_topo_dgx_h100"))
    assert t.gpus == [f"GPU{i}" for i in range(8)] and len(t.nics) == 10
    assert t.link("GPU0", "GPU7") == "NV18" and t.link("GPU0", "NIC0") == "PIX"
    assert t.link("GPU0", "NIC5") == "SYS" and t.link("GPU0", "NIC1") == "NODE"
    assert t.gpu_nic_map() == {f"GPU{i}": (f"mlx5_{i}", "PIX") for i in range(8)}
    assert t.cpu_affinity["GPU5"] == "56-111,168-223" and t.numa_affinity["GPU5"] == 1
    assert t.gpu_numa_id["GPU0"] is None and t.nic_names["NIC9"] == "mlx5_9" and "PIX" in t.legend
    with pytest.raises(KeyError):
        t.link("GPU0", "GPU9")


def test_topo_pcie_and_space_separated_copy():
    t = P.parse_nvidia_smi_topo(S.sample("nvidia_smi_topo_pcie_4gpu"))
    assert t.nic_for_gpu("GPU0") == ("mlx5_0", "PXB") and t.nic_for_gpu("GPU3") == ("mlx5_0", "SYS")
    # pasted from a web page: tabs became single spaces
    pasted = S.sample("nvidia_smi_topo_pcie_4gpu").replace("\t", " ")
    assert P.parse_nvidia_smi_topo(pasted).matrix == t.matrix
    with pytest.raises(P.ParseError, match="header"):
        P.parse_nvidia_smi_topo("GPU0 X\n")


# --------------------------------------------------------------------------------- RDMA
def test_ibstat_and_roce():
    cas = P.parse_ibstat(S.sample("ibstat_ndr"))
    assert [c.name for c in cas] == ["mlx5_0", "mlx5_1", "mlx5_2"]
    p0 = cas[0].ports[0]
    assert (p0.state, p0.physical_state, p0.rate_gbps, p0.base_lid, p0.sm_lid, p0.link_layer) == \
        ("Active", "LinkUp", 400.0, 5, 1, "InfiniBand")
    assert cas[0].ca_type == "MT4129" and cas[0].firmware == "28.39.1002"
    assert cas[2].ports[0].state == "Down" and cas[2].ports[0].physical_state == "Polling"
    roce = P.parse_ibstat(S.sample("ibstat_roce"))
    assert roce[0].ports[0].link_layer == "Ethernet" and roce[0].ports[0].rate_gbps == 200.0


def test_ibv_devinfo():
    devs = P.parse_ibv_devinfo(S.sample("ibv_devinfo_v"))
    p = devs[0].ports[0]
    assert devs[0].hca_id == "mlx5_0" and devs[0].fw_ver == "28.39.1002" and devs[0].vendor_part_id == 4129
    assert (p.state, p.phys_state, p.active_mtu, p.active_width, p.active_speed_gbps) == \
        ("PORT_ACTIVE", "LINK_UP", 4096, "4X", 100.0)
    assert p.rate_gbps == 400.0 and devs[1].ports[0].rate_gbps == 200.0
    short = "hca_id:\tmlx5_0\n\tfw_ver:\t\t20.1\n\t\tport:\t1\n\t\t\tstate:\t\tPORT_DOWN (1)\n"
    assert P.parse_ibv_devinfo(short)[0].ports[0].rate_gbps is None
    with pytest.raises(P.ParseError):
        P.parse_ibv_devinfo("no devices found")


def test_perfquery():
    a, b = (P.parse_perfquery(S.sample(k)) for k in ("perfquery_t0", "perfquery_t1"))
    assert a.lid == 6 and a.port == 1 and a.counters["SymbolErrorCounter"] == 12
    assert b.errors()["LinkDownedCounter"] == 1 and "PortXmitData" not in b.errors()
    with pytest.raises(P.ParseError):
        P.parse_perfquery("ibwarn: [1234] mad_rpc_open_port: can't open UMAD port")


# --------------------------------------------------------------------------------- dcgmi
def test_dcgmi_diag_pass_and_fail():
    ok = P.parse_dcgmi_diag(S.sample("dcgmi_diag_r3_pass"))
    assert ok.passed and ok.level == 3 and ok.metadata["DCGM Version"] == "3.3.7"
    assert ok.test("Targeted Power").status == "Pass" and ok.test("EUD Test").status == "Skip"
    assert {t.category for t in ok.tests} == {"Deployment", "Integration", "Hardware", "Stress"}
    bad = P.parse_dcgmi_diag(S.sample("dcgmi_diag_r2_fail"))
    assert not bad.passed and bad.level == 2
    mem = bad.test("GPU Memory")
    assert mem.status == "Fail" and mem.failed_gpus == [3]
    assert mem.warnings == ["GPU 3 Error using CUDA API cuCtxCreate Check DCGM and system logs for errors. "
                            "Reset GPU. Restart DCGM. Rerun diagnostics."]
    assert [t.name for t in bad.by_status("Fail")] == ["Page Retirement/Row Remap", "GPU Memory"]
    with pytest.raises(KeyError):
        bad.test("Nope")


# ------------------------------------------------------------------------------ NCCL log, XID
def test_nccl_debug_log_ib():
    lg = P.parse_nccl_debug_log(S.sample("nccl_debug_ib"))
    assert lg.version == "2.21.5+cuda12.4" and lg.hosts == ["node-a", "node-b"] and lg.nranks == 4
    assert [r.ranks for r in lg.rings] == [(0, 1, 2, 3), (0, 1, 2, 3)] and lg.rings[0].n_channels == 2
    t0 = [t for t in lg.trees if t.channel == 0 and t.rank == 0][0]
    assert t0.children == (1, 2) and t0.parent == -1
    assert lg.transports() == {"P2P": 4, "NET": 6} and lg.network == "IB" and lg.uses_gdr
    net = [c for c in lg.connections if c.transport == "NET"]
    assert {c.net for c in net} == {"IB"} and {c.direction for c in net} == {"send", "receive"}
    assert lg.env == {"NCCL_SOCKET_IFNAME": "eth0", "NCCL_IB_HCA": "mlx5_0,mlx5_1"}
    assert lg.net_devices == ["mlx5_0:1/IB", "mlx5_1:1/IB"] and lg.ranks[3].host == "node-b"


def test_nccl_debug_log_socket_fallback():
    lg = P.parse_nccl_debug_log(S.sample("nccl_debug_socket"))
    assert lg.network == "Socket" and not lg.uses_gdr and len(lg.warnings) == 1
    assert {c.net for c in lg.connections if c.transport == "NET"} == {"Socket"}
    with pytest.raises(P.ParseError, match="NCCL_DEBUG=INFO"):
        P.parse_nccl_debug_log("Traceback (most recent call last):\n")


def test_xid():
    ev = P.parse_xid_errors(S.sample("dmesg_xid"))
    assert [e.xid for e in ev] == [94, 63, 13, 79] and ev[3].bus_id == "0000:ba:00"
    assert P.parse_xid_errors("") == [] and P.parse_xid_errors("[1.0] usb 1-1: new device\n") == []


def test_samples_catalog():
    assert len(S.names()) >= 20
    for n in S.names():
        assert S.info(n)["source"] and S.sample(n).strip()
    with pytest.raises(KeyError, match="Closest"):
        S.sample("ibstat_nd")


# ------------------------------------------------------------------------------------ fuzz
PARSERS = [
    (P.parse_nccl_tests, [n for n in S.names() if n.startswith("nccl_tests")]),
    (P.parse_nvidia_smi_csv, ["nvidia_smi_csv"]),
    (lambda t: P.parse_nvidia_smi_csv(t, fields=CSV_FIELDS), ["nvidia_smi_csv_noheader"]),
    (P.parse_nvidia_smi_q, ["nvidia_smi_q"]),
    (P.parse_nvidia_smi_topo, ["nvidia_smi_topo_dgx_h100", "nvidia_smi_topo_pcie_4gpu"]),
    (P.parse_ibstat, ["ibstat_ndr", "ibstat_roce"]),
    (P.parse_ibv_devinfo, ["ibv_devinfo_v"]),
    (P.parse_perfquery, ["perfquery_t0", "perfquery_t1"]),
    (P.parse_dcgmi_diag, ["dcgmi_diag_r3_pass", "dcgmi_diag_r2_fail"]),
    (P.parse_nccl_debug_log, ["nccl_debug_ib", "nccl_debug_socket"]),
    (P.parse_xid_errors, ["dmesg_xid"]),
]
CASES = [(fn, S.sample(n)) for fn, names in PARSERS for n in names]
CASES += [(P.parse_nccl_tests, fixture(f)) for f in ("nccl_tests_old_error_column.txt",
                                                     "nccl_tests_broadcast_old_na.txt", "nccl_tests_mpi_prefixed.txt")]
CASES += [(P.parse_nvidia_smi_q, fixture("nvidia_smi_q_old_driver.txt"))]
CASES += [(P.parse_nvidia_smi, fixture(f)) for f in ("nvidia_smi_table_r535.txt", "nvidia_smi_table_r470_err.txt")]
CASES += [(P.parse_nccl_tests, fixture("nccl_tests_alltoall_empty_redop.txt"))]
CASES += [(fn, "\ufeff" + t.replace("\n", "\r\n")) for fn, t in list(CASES)]   # BOM + CRLF variants
ALL_PARSERS = [fn for fn, _ in PARSERS] + [P.parse_nvidia_smi]


def _only_parse_error(fn, text):
    try:
        fn(text)
    except P.ParseError:
        pass


@pytest.mark.parametrize("i", range(len(CASES)))
@settings(max_examples=25, deadline=None)
@given(cut=st.floats(0, 1), seed=st.randoms(use_true_random=False))
def test_fuzz_truncate_and_shuffle(i, cut, seed):
    fn, text = CASES[i]
    _only_parse_error(fn, text[: int(len(text) * cut)])
    lines = text.split("\n")
    seed.shuffle(lines)
    _only_parse_error(fn, "\n".join(lines))
    # drop a random subset of lines
    _only_parse_error(fn, "\n".join(ln for ln in lines if seed.random() > 0.3))


@settings(max_examples=40, deadline=None)
@given(junk=st.one_of(st.text(), st.binary().map(lambda b: b.decode("latin-1")),
                      st.lists(st.sampled_from(["#", "|", ":", "GPU0", "NV4", " X ", "Port 1:", "CA 'x'", "Rate: ",
                                                "hca_id:", "\t", "8 2 float sum -1 1 2 3 0 1 2 3 0", "Pass - GPU: 0",
                                                "NCCL INFO", "a:1:2 [0] NCCL INFO Channel 00/02 : 0 1"]),
                               max_size=30).map(" ".join)))
def test_fuzz_garbage(junk):
    for fn in ALL_PARSERS:
        _only_parse_error(fn, junk)
    for fn in ALL_PARSERS:
        _only_parse_error(fn, junk.replace(" ", "\n"))


# ------------------------------------------------------------- vintages, BOM, CRLF, truncation (issue 11)
def test_alltoall_with_empty_redop_root_columns():
    # nccl-tests builds that print a redop/root header but no value under it for alltoall
    r = P.parse_nccl_tests(fixture("nccl_tests_alltoall_empty_redop.txt"), op="all_to_all")
    assert [x.size_bytes for x in r.rows] == [1048576, 2097152, 4194304, 8388608]
    assert r.rows[-1].busbw_gbs == 4.34 and r.rows[0].wrong is None and r.rows[0].redop == "none"
    assert r.n_ranks == 4 and not r.single_rank


def test_single_rank_run_is_not_a_zero_percent_busbw():
    from labutil import health as H
    txt = fixture("nccl_tests_alltoall_empty_redop.txt")
    lines = [ln for ln in txt.splitlines() if "Rank  1" not in ln and "Rank  2" not in ln and "Rank  3" not in ln]
    one = "\n".join(ln.replace("    3.40    N/A", "    0.00    N/A").replace("    3.42    N/A", "    0.00    N/A")
                    .replace("    3.91    N/A", "    0.00    N/A").replace("    3.92    N/A", "    0.00    N/A")
                    .replace("    4.19    N/A", "    0.00    N/A").replace("    4.18    N/A", "    0.00    N/A")
                    .replace("    4.34    N/A", "    0.00    N/A").replace("3.9625", "0") for ln in lines)
    r = P.parse_nccl_tests(one)
    assert r.single_rank and r.avg_busbw_gbs == 0
    f = H.check_nccl_tests(r, 360.0)
    assert all(x.severity == "info" for x in f) and "single-rank" in f[0].message


@pytest.mark.parametrize("parser,name", [(P.parse_ibstat, "ibstat_ndr"), (P.parse_ibv_devinfo, "ibv_devinfo_v"),
                                         (P.parse_nvidia_smi_topo, "nvidia_smi_topo_dgx_h100"),
                                         (P.parse_nvidia_smi_csv, "nvidia_smi_csv"),
                                         (P.parse_nccl_tests, "nccl_tests_all_reduce_2node")])
def test_bom_and_crlf_do_not_drop_the_first_device(parser, name):
    txt = S.sample(name)
    plain = parser(txt)
    bom = parser("\ufeff" + txt.replace("\n", "\r\n"))
    if isinstance(plain, list):
        assert len(bom) == len(plain) and bom[0].__dict__.keys() == plain[0].__dict__.keys()
        assert getattr(bom[0], "name", getattr(bom[0], "hca_id", None)) == getattr(plain[0], "name",
                                                                                 getattr(plain[0], "hca_id", None))
    elif hasattr(plain, "devices"):
        assert bom.devices == plain.devices
    else:
        assert len(bom.rows) == len(plain.rows)


def test_nvidia_smi_default_table_two_vintages():
    t = P.parse_nvidia_smi(fixture("nvidia_smi_table_r535.txt"))
    assert (t.driver_version, t.cuda_version, len(t.gpus), len(t.processes)) == ("535.183.01", "12.2", 3, 3)
    g = t.gpus[0]
    assert (g.name, g.temperature_c, g.power_draw_w, g.power_cap_w, g.memory_used_mib, g.memory_total_mib,
            g.utilization_pct, g.mig_mode) == ("NVIDIA H100 80GB HBM3", 37.0, 112.0, 700.0, 46103.0, 81559.0, 100.0,
                                               "Disabled")
    assert t.processes[0].pid == 1804611 and t.processes[0].used_mib == 46094.0
    old = P.parse_nvidia_smi(fixture("nvidia_smi_table_r470_err.txt"))
    assert old.driver_version == "470.57.02" and old.no_running_processes and old.processes == []
    assert old.gpus[1].ecc_uncorrectable == 2 and old.gpus[2].errors and old.gpus[2].temperature_c is None
    from labutil import health as H
    checks = {(f.component.split()[0], f.check) for f in H.check_nvidia_smi(old)}
    assert ("GPU1", "ecc_uncorrectable") in checks and ("GPU2", "gpu_err") in checks
    # crlf + BOM + truncation in the middle of a GPU block
    txt = "\ufeff" + fixture("nvidia_smi_table_r535.txt").replace("\n", "\r\n")
    assert len(P.parse_nvidia_smi(txt[:txt.index("|   1  NVIDIA")]).gpus) == 1
    with pytest.raises(P.ParseError):
        P.parse_nvidia_smi("| NVIDIA-SMI 535.183.01  Driver Version: 535.183.01  CUDA Version: 12.2 |\n")
    with pytest.raises(P.ParseError):
        P.parse_nvidia_smi("hello")
    assert P.parse_nvidia_smi("No devices were found\n").errors == ["No devices were found"]


def test_nccl_warn_with_source_location_and_prefixes():
    lg = P.parse_nccl_debug_log(
        "[0m ip-172-31-0-137:14605:14673 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
        "[rank3]: gpu-7:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error 12, opcode 1\n")
    assert len(lg.warnings) == 2 and lg.hosts == ["ip-172-31-0-137", "gpu-7"]
