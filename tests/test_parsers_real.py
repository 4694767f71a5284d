"""Parsers against real tool output pasted in public threads (tests/fixtures/real_*.txt; the source
thread of each fixture is in tests/fixtures/README.md and in each test's docstring). Each of these
variants broke a parser before (ParseError or a wrong number) unless said otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from labutil import parsers as P
from labutil.troubleshoot import _check_watchdog, parse_watchdog_log, triage

FIX = Path(__file__).parent / "fixtures"


def fx(name: str) -> str:
    return (FIX / name).read_text(encoding="utf-8")


# ------------------------------------------------------------------------------- nccl-tests
def test_nccl_tests_without_hash_marks():
    """NVIDIA/nccl #583: pasted outside a code block, GitHub turned every '# ...' line into a heading,
    so the header, device and summary lines have no '#'. Was: ParseError 'no column header'."""
    r = P.parse_nccl_tests(fx("real_nccl_tests_no_hash_nccl583.txt"))
    assert r.op == "all_reduce" and r.sizes_bytes == [32, 64]
    assert r.rows[1].time_us == 22.80 and r.rows[1].busbw_gbs == 0.01 and r.rows[1].max_error == 1e-07
    assert r.avg_busbw_gbs == pytest.approx(0.00542) and r.n_ranks == 2 and r.hosts == ["AI-A100-Beethoven01"]
    assert r.params["iters"] == 20 and r.out_of_bounds == 0


def test_nccl_tests_built_without_mpi_is_n_independent_one_rank_runs():
    """NVIDIA/nccl-tests #107: `mpirun -np 2` of a binary built without MPI=1: two headers, two
    'Rank 0' device lines, 'Avg bus bandwidth : 0'. Was: n_ranks 2, single_rank False, so busbw 0
    read as a dead fabric."""
    r = P.parse_nccl_tests(fx("real_nccl_tests_no_mpi_nccltests107.txt"))
    assert r.independent_runs and r.single_rank and r.n_ranks == 1
    assert r.rows[0].size_bytes == 1310720000 and r.rows[0].algbw_gbs == 11.63 and r.rows[0].busbw_gbs == 0.0
    d = triage(fx("real_nccl_tests_no_mpi_nccltests107.txt"))
    assert d.first_failing_layer == "software" and d.root_check == "nccl_tests_no_mpi"
    assert any("make MPI=1" in c["command"] for c in d.next_checks)


def test_nccl_tests_row_cut_after_the_out_of_place_block():
    """NVIDIA/nccl #1530 (RTX 4090 x8, NCCL_ALGO=TREE): the paste ends after the out-of-place half
    of the first row (what a run that hangs in the in-place pass leaves). Was: ParseError."""
    r = P.parse_nccl_tests(fx("real_nccl_tests_cut_after_oop_nccl1530.txt"))
    assert len(r.rows) == 1 and r.rows[0].time_us == 42.56 and r.rows[0].wrong == 0
    assert r.rows[0].inplace_time_us is None and r.rows[0].inplace_busbw_gbs is None
    assert r.n_ranks == 8 and r.devices[3].bus_id == "0x5a" and r.params["nGpus"] == 8 and r.avg_busbw_gbs is None


def test_nccl_tests_cputime_and_timestamp_columns():
    """nccl-tests >= 2.14 `-C 1` prints 'cputime' instead of 'time' and `-T` a trailing 'timestamp'
    column of two tokens (src/util.cu writeResultHeader / writeTimestamp). Was: no header found,
    then every row skipped."""
    r = P.parse_nccl_tests(fx("nccl_tests_cputime_timestamp.txt"))
    assert r.sizes_bytes == [1048576, 2097152, 4194304] and r.nccl_tests_version == "2.17.6"
    assert r.rows[1].busbw_gbs == 99.11 and r.rows[1].inplace_busbw_gbs == 104.21
    assert r.rows[2].wrong is None and r.rows[2].inplace_time_us is None
    assert r.avg_busbw_gbs == 99.66 and r.op == "all_reduce"


@pytest.mark.parametrize("prefix", ["node-a: ", "2024-05-01T10:00:00.123456Z ", "(RayWorkerWrapper pid=4009) ",
                                    "worker-1 [stdout] ", "\x1b[36m[1,0]<stdout>:\x1b[0m"])
def test_nccl_tests_launcher_prefixes(prefix):
    """pdsh/clush 'host: ', `kubectl logs --timestamps`, Ray worker and milabench '[stdout]'
    prefixes, ANSI colour (vllm-project/vllm #6042 shows the Ray form). Was: header not found."""
    text = "\n".join(prefix + ln for ln in fx("real_nccl_tests_no_hash_nccl583.txt").split("\n"))
    r = P.parse_nccl_tests(text)
    assert r.sizes_bytes == [32, 64] and r.avg_busbw_gbs == pytest.approx(0.00542)


# ------------------------------------------------------------------------------- watchdog
def test_watchdog_line_wrapped_before_worknccl():
    """mila-iqia/milabench #269: the log collector wrapped each watchdog line after 'timeout:', with
    a 'host [stderr]' prefix. Was: no event found."""
    ev = parse_watchdog_log(fx("real_watchdog_wrapped_milabench269.txt"))
    assert [(e.rank, e.seq, e.op, e.ran_ms, e.timeout_ms) for e in ev] == [
        (12, 2070, "REDUCE", 600036, 600000), (14, 2070, "REDUCE", 600034, 600000)]


def test_watchdog_several_process_groups_is_not_a_mismatch():
    """pytorch/pytorch #118369: rank 0 times out in three collectives (SeqNum 96117/96120/96125, i.e.
    several process groups) and rank 7 at SeqNum 64088. Was: a critical 'collective_mismatch' and a
    software verdict with confidence 0.9; the thread gives no code-path difference."""
    ev = parse_watchdog_log(fx("real_watchdog_multi_pg_pytorch118369.txt"))
    assert ev[0].rank == 0 and ev[0].seq == 96120 and ev[0].n_seqs == 3 and ev[0].timeout_ms == 1800000
    assert all(f.check != "collective_mismatch" for f in _check_watchdog(ev, None))
    d = triage(fx("real_watchdog_multi_pg_pytorch118369.txt"))
    assert d.first_failing_layer is None and d.confidence < 0.5


def test_watchdog_same_seq_different_op_is_a_mismatch_and_pg_prefixes():
    """The mismatch rule still holds for the same SeqNum with a different OpType; newer torch prints
    '[PG ID 0 PG GUID 0(default_pg) Rank r]' (XPixelGroup/BasicSR #737 shows the PG form)."""
    text = ("[rank0]:[E626 06:24:44.90 ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank 0] Watchdog caught "
            "collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, "
            "Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n"
            "[rank1]:[E626 06:24:44.90 ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank 1] Watchdog caught "
            "collective operation timeout: WorkNCCL(SeqNum=808, OpType=BROADCAST, NumelIn=1, NumelOut=1, "
            "Timeout(ms)=600000) ran for 600030 milliseconds before timing out.\n")
    ev = parse_watchdog_log(text)
    assert [(e.rank, e.op, e.numel_in) for e in ev] == [(0, "ALLREDUCE", 9801523), (1, "BROADCAST", 1)]
    assert [f.check for f in _check_watchdog(ev, 2)] == ["collective_mismatch"]
    d = triage(text)
    assert d.first_failing_layer == "software" and d.root_check == "collective_mismatch"


def test_watchdog_without_rank_bracket_uses_the_rank_prefix():
    """'Process group watchdog thread terminated with exception: Watchdog caught collective operation
    timeout: WorkNCCL(OpType=BROADCAST)' (no [Rank r], no SeqNum, no 'ran for'): the '[rank3]:'
    prefix names the rank."""
    ev = parse_watchdog_log("[rank3]:[E810 03:04:11.06 ProcessGroupNCCL.cpp:1414] Process group watchdog thread "
                            "terminated with exception: Watchdog caught collective operation timeout: "
                            "WorkNCCL(OpType=BROADCAST)\n")
    assert [(e.rank, e.seq, e.op, e.ran_ms) for e in ev] == [(3, None, "BROADCAST", None)]


def test_watchdog_all_ranks_same_collective_is_a_symptom_only():
    """hiyouga/LlamaFactory #7396: every rank times out in ALLREDUCE SeqNum 1580: no layer is
    accused by the watchdog alone (it is what any slow or dead peer produces)."""
    d = triage(fx("real_watchdog_llamafactory7396.txt"))
    assert d.first_failing_layer is None and d.scores["software"] < 0.5
    assert [e.rank for e in parse_watchdog_log(fx("real_watchdog_llamafactory7396.txt"))] == [0, 4]


# ------------------------------------------------------------------------------- fio
def test_fio_terse_v3():
    """intel/fiovisualizer #17: a `--minimal` terse v3 line. Was: no parser for terse at all.
    581120 KiB in 1148 ms = 506202 KiB/s = 0.518 GB/s; clat mean 16062.66 us, p99 21626 us."""
    from labutil import fioparse as F
    (r,) = F.parse_fio_terse(fx("real_fio_terse_v3_fiovisualizer17.txt"))
    assert r.jobname == "seq-read" and r.read_gbs == pytest.approx(506202 * 1024 / 1e9)
    assert r.read_iops == 4035 and r.read_clat_mean_us == pytest.approx(16062.664435) and r.read_clat_p99_us == 21626
    assert r.write_gbs == 0 and r.write_iops == 0
    with pytest.raises(F.StorageParseError, match="truncated"):
        F.parse_fio_terse(fx("real_fio_terse_v3_fiovisualizer17.txt")[:400])


def test_fio_2x_text_and_group_totals():
    """axboe/fio #165 (fio 2.x 'read : io=65474MB, bw=214088KB/s, iops=26760') and Azure/azurehpc
    #433 (only 'READ: bw=611MiB/s (641MB/s)' totals). Was: StorageParseError for both."""
    from labutil import fioparse as F
    old = F.parse_fio_summary(fx("fio2_text_fio165.txt"))
    assert [x.jobname for x in old] == ["seqread", "seqwrite"]
    assert old[0].read_gbs == pytest.approx(214088 * 1024 / 1e9) and old[0].read_iops == 26760
    assert old[1].write_gbs == pytest.approx(91612 * 1024 / 1e9) and old[1].write_iops == 11451
    (g,) = F.parse_fio_summary(fx("real_fio_group_only_azurehpc433.txt"))
    assert g.read_gbs == pytest.approx(611 * 2**20 / 1e9) and g.read_iops == 0


def test_fio_json_v2_clat_and_surrounding_text():
    """fio 2.x JSON has 'clat' in microseconds (no clat_ns) and 'bw' in KiB/s: latency was silently
    0. Warnings before and normal output after the document (--output-format=json,normal)."""
    import json

    from labutil import fioparse as F
    doc = {"fio version": "fio-2.2.10", "jobs": [{"jobname": "r", "read": {
        "io_bytes": 1, "bw": 1000000, "iops": 250.0, "clat": {"mean": 3900.5, "percentile": {"99.000000": 8160}}},
        "write": {"bw": 0, "iops": 0.0, "clat": {"mean": 0.0, "percentile": {"99.000000": 0}}}}]}
    text = "fio: this platform does not support process shared mutexes\n" + json.dumps(doc) + "\nRun status group 0\n"
    (r,) = F.parse_fio_json(text)
    assert r.read_gbs == pytest.approx(1.024) and r.read_clat_mean_us == 3900.5 and r.read_clat_p99_us == 8160


# ------------------------------------------------------------------------------- dcgmi diag
def test_dcgmi_diag_json_all_skipped_is_no_evidence():
    """NVIDIA/DCGM #139: `dcgmi diag -r 3 -j`, every test Skip. Was: ParseError (JSON not read);
    triage must not count skipped diagnostics as healthy GPUs."""
    d = P.parse_dcgmi_diag(fx("real_dcgmi_diag_json_skip_dcgm139.txt"))
    assert [(t.category, t.name, t.status) for t in d.tests] == [
        ("Integration", "PCIe", "Skip"), ("Hardware", "GPU Memory", "Skip"), ("Hardware", "Diagnostic", "Skip")]
    assert d.tests[0].results == [("Skip", "GPU: 0")]
    t = triage(fx("real_dcgmi_diag_json_skip_dcgm139.txt"))
    assert not any(s.verdict == "pass" for s in t.signals) and t.recognised[0][1] == ["dcgmi diag"]


def test_dcgmi_diag_dcgm4_rows_and_scoped_warning():
    """DCGM 4 prints per-GPU continuation rows; a 'Warning: GPU0' name cell keeps its message."""
    d = P.parse_dcgmi_diag(fx("dcgmi_diag_dcgm4_fail.txt"))
    diag = d.test("diagnostic")
    assert diag.status == "Fail" and diag.failed_gpus == [0] and not d.passed and d.level == 3
    assert diag.warnings == ["GPU0: Detected 3 uncorrectable ECC errors. Check DCGM and system logs for errors."]
    assert d.test("software").results[1:] == [("Pass", "GPU: 0"), ("Pass", "GPU: 1")]
    assert d.metadata["DCGM Version"] == "4.0.0"


# ------------------------------------------------------------------------------- XID
def test_xid_lines_of_dmesg_journalctl_and_pid_unknown():
    evs = P.parse_xid_errors(fx("xid_kernel_log_variants.txt"))
    assert [(e.bus_id, e.xid) for e in evs] == [("0000:3b:00", 79), ("0000:ab:00", 94), ("0000:b3:00", 63), ("0000:18:00", 48),
                                                 ("0000:18:00", 74), ("0000:18:00", 119)]
    assert "fallen off the bus" in evs[0].detail


def test_unknown_xid_fatal_vs_nonfatal():
    """leptonai/gpud #1174: NVLink XIDs 144-150 say 'Fatal' or 'Nonfatal' in their text: an XID the
    catalogue table does not list is judged by that word."""
    fatal = triage("NVRM: Xid (PCI:0019:01:00): 149, NETIR Fatal XC0 i0 Link -1 (0x000fe406 0x00000000)")
    assert fatal.first_failing_layer == "gpu"
    nonfatal = triage("NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008)")
    assert nonfatal.first_failing_layer is None and nonfatal.scores["gpu"] == pytest.approx(0.4)


# ------------------------------------------------------------------------------- topo / ibstat / perftest
def test_topo_without_indent_and_with_nic_legend():
    """NVIDIA/nccl #2157: the header line starts at column 0 (no leading tab), 4 NICs with a NIC Legend."""
    t = P.parse_nvidia_smi_topo(fx("real_topo_no_indent_nccl2157.txt"))
    assert t.gpus == ["GPU0", "GPU1", "GPU2", "GPU3"] and t.nics == ["NIC0", "NIC1", "NIC2", "NIC3"]
    assert t.link("GPU0", "GPU1") == "NV12" and t.link("NIC0", "NIC1") == "PIX"
    assert t.gpu_nic_map()["GPU0"] == ("mlx5_2", "PXB") and t.numa_affinity["GPU2"] == 1 and t.gpu_numa_id["GPU0"] is None


def test_topo_tab_separated_two_gpus():
    """noonghunna/club-3090 #1229: tab-separated 2-GPU PCIe box (' X ' cells, 'N/A' GPU NUMA ID)."""
    t = P.parse_nvidia_smi_topo(fx("real_topo_tabs_club3090_1229.txt"))
    assert t.link("GPU0", "GPU1") == "PHB" and t.cpu_affinity["GPU1"] == "0-63" and not t.nics
    assert "NV#" in t.legend and t.legend["PHB"].startswith("Connection traversing PCIe")


def test_ibstat_with_ibwarn_lines_tabs_and_a_down_port():
    """linux-rdma/rdma-core #847: ibwarn debug lines before the CA block, tab indentation, port 1
    Down/Disabled, port 2 Active at 56 (FDR), output cut after 'Base lid'."""
    (ca,) = P.parse_ibstat(fx("real_ibstat_ibwarn_rdmacore847.txt"))
    assert ca.name == "mlx4_0" and ca.firmware == "2.42.5000"
    assert [(p.port, p.state, p.physical_state, p.rate_gbps) for p in ca.ports] == [
        (1, "Down", "Disabled", 10.0), (2, "Active", "LinkUp", 56.0)]
    assert ca.ports[1].base_lid == 40 and ca.ports[1].link_layer is None


def test_ibstat_roce_and_disabled_port_in_triage():
    """kvcache-ai/Mooncake #1999: RoCE ports (Link layer: Ethernet, lid 0) next to a Down/Disabled CA."""
    cas = P.parse_ibstat(fx("real_ibstat_roce_mixed_mooncake1999.txt"))
    assert [(c.name, c.ports[0].state, c.ports[0].rate_gbps, c.ports[0].link_layer) for c in cas] == [
        ("mlx5_0", "Active", 200.0, "Ethernet"), ("mlx5_10", "Down", None, None)]


def test_perftest_post_list_roce_with_tabs_in_the_row():
    """linux-rdma/perftest #273: 'RDMA_Write Post List BW Test' over RoCE (Link type Ethernet,
    GID index 2), --report_gbits, a row with tabs, BW peak 0.00 (not measured) -> None."""
    r = P.parse_perftest_bw(fx("real_perftest_postlist_roce_perftest273.txt"))
    assert r.test == "RDMA_Write Post List BW Test" and r.link_type == "Ethernet" and r.mtu_bytes == 4096
    assert r.settings["GID index"] == "2" and r.report_unit == "Gb/sec"
    (row,) = r.rows
    assert (row.size_bytes, row.iterations, row.bw_peak_gbps, row.bw_avg_gbps, row.msg_rate_mpps) == (
        8, 224958464, None, 0.48, 7.498617)


def test_nccl_debug_ring_line_with_glued_ranks_is_not_a_crash():
    """Found by tests/test_parsers_fuzz.py: 'Channel 00/02 :    0-1' raised a raw ValueError."""
    lg = P.parse_nccl_debug_log("node-a:1:1 [0] NCCL INFO Channel 00/02 :    0-1\n"
                                "node-a:1:1 [0] NCCL INFO Channel 01/02 :    0   1\n")
    assert [r.ranks for r in lg.rings] == [(0, 1)]
