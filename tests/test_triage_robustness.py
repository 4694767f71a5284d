"""What triage reads, damaged on the way (robustness review 2026-12-03, R1, R2, R5): each case is
the review's reproducer, asserted on the answer (not on time; speed is benchmarks/bench_parsers.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from labutil.parsers import (ParseError, parse_ibstat, parse_nccl_debug_log, parse_nvidia_smi_q, parse_perftest_bw,
                             parse_xid_errors, samples)
from labutil.parsers._common import decode_text, normalise_text
from labutil.troubleshoot import MAX_RANKS, missing_ranks, parse_watchdog_log, triage
from labutil.troubleshoot.triage import cli_main

FIX = Path(__file__).parent / "fixtures"


def test_grep_color_xid_output_is_read():
    """R5: `grep --color=always Xid` wraps the word in SGR + erase-line codes; 4 events were read as 0."""
    d = samples.sample("dmesg_xid")
    coloured = re.sub("Xid", "\x1b[01;31m\x1b[KXid\x1b[m\x1b[K", d)
    assert len(parse_xid_errors(coloured)) == len(parse_xid_errors(d)) == 4
    assert triage(coloured).first_failing_layer == "gpu"


@pytest.mark.parametrize("enc", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig"])
def test_utf16_files_give_the_same_verdict(tmp_path, capsys, enc):
    """R5: a PowerShell `>` redirect writes UTF-16 LE with a BOM; triage answered 'no failing layer'."""
    text = (FIX / "incident_xid79_watchdog.txt").read_text(encoding="utf-8")
    f = tmp_path / "x16.txt"
    f.write_bytes(text.encode(enc))
    assert cli_main([str(f)]) == 0
    assert "verdict: gpu" in capsys.readouterr().out
    # the same bytes read as 8-bit text (every other character NUL) and pasted as a string
    assert triage(text.encode("utf-16").decode("latin-1")).first_failing_layer == "gpu"


def test_decode_text_encodings():
    assert decode_text("ECC 错误".encode("gb18030")) == "ECC 错误"           # Chinese Windows code page
    assert decode_text("ok".encode("utf-16-be")) == "ok"
    assert "\ufffd" in decode_text(b"\x80\x81 bad")                        # never raises
    assert normalise_text("a\u00a0b\ufeffc\r\nd\x1b[31me\x1b[0m") == "a bc\nde"


def test_unindented_line_inside_nvidia_smi_q_keeps_every_field():
    """R5: an interleaved `WARNING: infoROM is corrupted at gpu ...` (stderr of 2>&1) made 17 of 21
    fields None; leading tabs (per level, or one tab on every line) lost throttle_active."""
    s = samples.sample("nvidia_smi_q")
    want = parse_nvidia_smi_q(s).gpus[0]
    junk = s.replace("    Product Name", "WARNING: infoROM is corrupted at gpu 0000:18:00.0\n    Product Name", 1)
    per_level = re.sub(r"(?m)^( {4})+", lambda m: "\t" * (len(m.group()) // 4), s)
    one_tab = "\n".join("\t" + ln.lstrip(" ") if ln.startswith(" ") else ln for ln in s.split("\n"))
    flat = "\n".join(ln.lstrip(" ") for ln in s.split("\n"))          # a chat tool stripped the indentation
    for text in (junk, per_level, one_tab, flat):
        g = parse_nvidia_smi_q(text).gpus[0]
        for f in ("product_name", "ecc_volatile_uncorrectable", "ecc_aggregate_uncorrectable", "remapped_rows_pending",
                  "remapping_failure", "temperature_c", "slowdown_temp_c", "power_draw_w", "throttle_active"):
            assert getattr(g, f) == getattr(want, f), f
        assert want.product_name and want.temperature_c is not None and want.throttle_active


def test_bom_mid_text_and_nbsp_lose_nothing():
    """R5: two files concatenated, the second with a BOM: ibstat lost a device (6 -> 5); NBSP from a
    web page: the NCCL log lost every rank (4 -> 0)."""
    s = samples.sample("ibstat_ndr")
    assert len(parse_ibstat(s + "\ufeff" + s)) == len(parse_ibstat(s + s)) == 6
    lg = samples.sample("nccl_debug_ib")
    assert len(parse_nccl_debug_log(lg.replace(" ", "\u00a0")).ranks) == len(parse_nccl_debug_log(lg).ranks) == 4


def test_an_ibstat_port_without_state_is_rejected_not_dropped():
    s = samples.sample("ibstat_ndr")
    cut = "\n".join(ln for ln in s.split("\n") if "State: Active" not in ln or "Physical" in ln)
    with pytest.raises(ParseError, match="no 'State:' line"):
        parse_ibstat(cut)


def test_damaged_paste_says_so_instead_of_answering_healthy():
    """A tool block its parser rejects, undecodable bytes and XID lines in an unknown form are
    listed in Diagnosis.warnings, and the 'nothing found' confidence halves."""
    s = samples.sample("ibstat_ndr")
    cut = "\n".join(ln for ln in s.split("\n") if "State: Active" not in ln or "Physical" in ln)
    d = triage(cut)
    assert any("looks like ibstat output but could not be read" in w for w in d.warnings)
    # the block is unreadable, but one of its lines still says a port is Down: that line is read on its own
    assert d.first_failing_layer == "network" and d.decided_by["kind"] == "ib_port_down"
    nothing = cut.replace("State: Down", "State: Active").replace("Polling", "LinkUp")   # still cut, nothing Down
    d = triage(nothing)
    assert d.first_failing_layer is None
    assert any("looks like ibstat output but could not be read" in w for w in d.warnings)
    d = triage("[Mon Jan  1 00:00:00 2026] NVRM: Xid 79 GPU has fallen of\n")   # a cut, re-worded line
    assert any("mention NVRM and Xid" in w for w in d.warnings)
    clean = triage(samples.sample("dcgmi_diag_r3_pass"))
    damaged = triage(samples.sample("dcgmi_diag_r3_pass").encode() + b"\n\xff\xfe\xfa\xfb binary\n")
    assert clean.first_failing_layer is None and clean.confidence > 0 and not clean.warnings and any("could not be decoded" in w for w in damaged.warnings)
    assert damaged.confidence == pytest.approx(round(clean.confidence * 0.5, 2), abs=0.011)
    assert "could not be decoded" in damaged.text() and "warnings" in damaged.to_dict()


def test_missing_ranks_is_o_k_not_o_n():
    """R2: `--ranks 10000000` built set(range(N)) (1.4 GB); now the count and the first 16."""
    assert missing_ranks(10, [0, 1, 2, 5, 99]) == (6, [3, 4, 6, 7, 8, 9])
    n, first = missing_ranks(MAX_RANKS, range(3))
    assert n == MAX_RANKS - 3 and first == list(range(3, 19))
    with pytest.raises(ValueError, match=r"n_ranks must be an integer in \[1, 10000000\]"):
        missing_ranks(MAX_RANKS + 1, [])
    with pytest.raises(ValueError, match="n_ranks"):
        triage("x", n_ranks=10 ** 29)
    d = triage((FIX / "incident_xid79_watchdog.txt").read_text(encoding="utf-8"), n_ranks=MAX_RANKS)
    silent = next(s for s in d.signals if s.kind == "silent_ranks")
    assert "(the first 16: [" in silent.message and str(MAX_RANKS - len(parse_watchdog_log(
        (FIX / "incident_xid79_watchdog.txt").read_text(encoding="utf-8")))) in silent.message


def test_cli_ranks_errors_are_one_line(capsys):
    f = str(FIX / "incident_xid79_watchdog.txt")
    assert cli_main(["--ranks", "abc", f]) == 2
    assert "--ranks must be a whole number" in capsys.readouterr().err
    assert cli_main(["--ranks", "10000001", f]) == 2
    assert "n_ranks must be an integer in [1, 10000000]" in capsys.readouterr().err


def test_perftest_tab_run_and_mib_header():
    """R1: a line of 500 tabs took 62 s (cubic backtracking); perftest >= 2024-03 (commit 1d202bb,
    'Display proper unit for MiB/sec results') prints 'BW peak[MiB/sec]', which was rejected."""
    s = samples.sample("ib_write_bw_ndr").split("\n")
    r = parse_perftest_bw("\n".join(s[:3] + ["\t" * 4000 + "x", " " * 16000 + "x"] + s[3:]))
    assert r.device == "mlx5_0" and len(r.rows) == 23
    mib = ("                    RDMA_Write BW Test\n Dual-port       : OFF\t\tDevice         : mlx5_1\n"
           " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"
           " 65536      5000             46765.62            46761.41\t\t     0.748182\n")
    r = parse_perftest_bw(mib)
    assert r.report_unit == "MiB/sec" and r.rows[0].bw_avg_gbps == pytest.approx(46761.41 * 2 ** 20 * 8 / 1e9)


# ---------------------------------------------------------------- recogniser gaps (issue 16 item 4)
BUNDLE_B = ("NET/IB: Got completion from peer 10.153.235.13<40554> with status=IBV_WC_RETRY_EXC_ERR(12) "
            "opcode=IBV_WC_RECV_RDMA_WITH_IMM(129) vendor_err=129 ... hca mlx5_1\n"
            "[rank4]:[E916 08:53:53.866564418 ProcessGroupNCCL.cpp:1917] [PG ID 1 PG GUID 1 Rank 4] Process group watchdog "
            "thread terminated with exception: [Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
            "OpType=ALLGATHER, NumelIn=1, NumelOut=16, Timeout(ms)=600000) ran for 600074 milliseconds before timing out.")


def test_retry_exceeded_asks_whether_the_peer_died_first_with_its_ip_and_hca():
    """Reviewers' bundle B (deepseek-ai/DeepEP #411): the first check is the peer's own log, filled in."""
    d = triage(BUNDLE_B)
    assert d.first_failing_layer == "network"
    assert d.next_command.startswith("did the peer 10.153.235.13 die first?") and "ibstat mlx5_1" in d.next_command
    assert "peer 10.153.235.13, local HCA mlx5_1" in d.reasons[0]


def test_fabric_manager_journal_lines_are_recognised_with_their_versions():
    """Reviewers' bundle A (dstackai/dstack #2348, NVIDIA/nvtrust #55): the journal lines decide."""
    fm = ("$ systemctl status nvidia-fabricmanager\n"
          "nvidia-fabricmanager.service: Main process exited, code=exited, status=1/FAILURE\n"
          "Feb 24 09:28:28 ip-172-31-92-157 nv-fabricmanager[1507]: fabric manager NVIDIA GPU driver interface version "
          "550.127.05 don't match with driver version 550.120. Please update with matching NVIDIA driver package.\n")
    d = triage(fm)
    assert d.first_failing_layer == "gpu" and d.root_check == "fabric_manager_version" and not d.unrecognised
    assert "Fabric Manager 550.127.05 does not match the loaded driver 550.120" in d.reasons[0]
    assert triage(fm.split("\n", 2)[1]).root_check == "fabric_manager_failed"      # the FAILURE line alone


@pytest.mark.parametrize("xid", [119, 120])
def test_gsp_xids_get_their_meaning_action_and_check(xid):
    """Reviewers' bundle C (NVIDIA/open-gpu-kernel-modules #446): GSP timeout, reset, driver branch, firmware."""
    d = triage(f"NVRM: Xid (PCI:0000:61:00): {xid}, pid=1234, name=python, Timeout after 6s of waiting for RPC response "
               "from GPU0 GSP! Expected function 10 (FREE) (0x0 0x0).")
    assert d.first_failing_layer == "gpu" and d.confidence >= 0.85
    assert "GSP" in d.reasons[0] and "reset the GPU" in d.reasons[0]
    assert "GSP Firmware" in d.next_command and "525.105.17" in d.next_command


def test_pfc_watchdog_line_of_a_sonic_switch():
    """Format of SONiC orchagent pfcwdorch.cpp report_pfc_storm()."""
    d = triage("Feb 1 10:00:00 leaf1 #orchagent: :- report_pfc_storm: PFC Watchdog detected PFC storm on port Ethernet12, "
               "queue index 3, queue id 0x15000000000612 and port id 0x1000000000009")
    assert d.first_failing_layer == "network" and d.root_check == "pfc_watchdog_storm"


def test_perftest_limit_bw_failure():
    """perftest -w/--limit_bw (write_bw.c: 'Error: BW result is below bw limit' on stderr)."""
    text = samples.sample("ib_write_bw_ndr") + "\nError: BW result is below bw limit\n"
    assert parse_perftest_bw(text).limit_failed and not parse_perftest_bw(samples.sample("ib_write_bw_ndr")).limit_failed
    d = triage(text)
    assert d.first_failing_layer == "network" and any(s.kind == "rdma_bw" and s.verdict == "fail" for s in d.signals)


def test_json_and_xml_outputs_read_like_their_text_forms():
    from labutil import health
    from labutil.parsers import parse_nccl_tests, parse_nccl_tests_json, parse_nvidia_smi_xml

    js = (FIX / "nccl_tests_json_v3.json").read_text(encoding="utf-8")
    r = parse_nccl_tests_json(js)
    assert r.op == "all_reduce" and r.n_ranks == 4 and r.hosts == ["node-a", "node-b"] and r.nccl_version == "2.27.3"
    assert r.peak_busbw_gbs == pytest.approx(130.797) and r.avg_busbw_gbs == pytest.approx(64.161)
    assert r.rows[-1].inplace_wrong is None and r.out_of_bounds == 0          # "nan" -> None
    assert parse_nccl_tests(js).rows == r.rows                                 # the text parser hands JSON over
    xml = (FIX / "nvidia_smi_q_x_r550.xml").read_text(encoding="utf-8")
    q = parse_nvidia_smi_xml(xml)
    assert q.driver_version == "550.127.05" and q.attached_gpus == 2 and len(q.gpus) == 2
    g = q.gpus[1]
    assert (g.ecc_volatile_uncorrectable, g.remapped_rows_pending, g.temperature_c) == (2, True, 89.0)
    assert "hw_thermal_slowdown" in g.throttle_active and q.gpus[0].ecc_aggregate_correctable == 12
    assert parse_nvidia_smi_q(xml).gpus[1].remapped_rows_pending is True     # health and triage read XML too
    assert any(f.check == "row_remap_pending" for f in health.check_nvidia_smi_q(parse_nvidia_smi_q(xml)))
    assert triage(xml).first_failing_layer == "gpu"
    for bad in ("{}", '{"results": []}', '{"results": [{"size": 8}]}', "[1, 2]", "<nvidia_smi_log></nvidia_smi_log>",
                "<nvidia_smi_log><gpu>", "<foo/>", '<!DOCTYPE x [<!ENTITY a "aaaa">]><nvidia_smi_log/>'):
        with pytest.raises(ParseError):
            (parse_nvidia_smi_xml if bad.lstrip().startswith("<") else parse_nccl_tests_json)(bad)
