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
