"""labutil.parsers.fio (formerly labutil.fioparse): the move, the error rule, and the R13 slow path."""

import pytest

from labutil import fioparse, parsers
from labutil.parsers import fio


def test_old_import_path_reexports_the_same_objects():
    for name in fio.__all__:
        assert getattr(fioparse, name) is getattr(fio, name)
    assert parsers.parse_fio_summary is fio.parse_fio_summary


def test_storage_parse_error_is_a_parse_error():
    assert issubclass(fio.StorageParseError, parsers.ParseError)
    with pytest.raises(parsers.ParseError):
        fio.parse_fio_summary("no fio here")


def test_many_jobs_each_result_goes_to_its_own_header():
    jobs = [f"job{i:04d}: (groupid={i}, jobs=1): err= 0: pid={i}\n"
            f"  read: IOPS={i + 1}, BW={i + 1}MiB/s ({i + 1}MB/s)(1GiB/1000msec)\n" for i in range(500)]
    res = fio.parse_fio_summary("".join(jobs))
    assert [r.jobname for r in res] == [f"job{i:04d}" for i in range(500)]
    assert [r.read_iops for r in res] == [float(i + 1) for i in range(500)]


def test_lines_before_any_header_belong_to_job0():
    res = fio.parse_fio_summary("  write: IOPS=10, BW=10MiB/s (10.5MB/s)(1GiB/1000msec)\n")
    assert [r.jobname for r in res] == ["job0"]


def test_large_paste_is_linear_not_results_times_headers():
    """Robustness review R13: a 5 MB paste took 41 s (every result line scanned every job header); its
    time budget is benchmarks/bench_slow_paths.py, here the result of a ~2 MB paste."""
    one = fio.sample("fio_nvme_text") + "\n"
    big = one * (2_000_000 // len(one))  # ~2 MB, ~2,000 headers and ~2,000 result lines
    res = fio.parse_fio_summary(big)
    assert [r.jobname for r in res] == ["seqwrite", "randread"]


# -- IOR / mdtest (hpc/ior): the stored samples follow src/ior-output.c and src/mdtest.c ----------------
def test_ior_sample_max_lines_and_summary_table_agree():
    r = fio.parse_ior(fio.sample("ior_ckpt_tier"))
    w, rd = r.op("write"), r.op("read")
    assert r.max_write_mib_s == w.max_mib_s == 412880.41
    assert r.max_read_mib_s == rd.max_mib_s == 603874.02
    assert (w.tasks, w.tasks_per_node, w.repetitions, w.file_per_proc, w.api) == (512, 16, 3, True, "POSIX")
    assert (w.xfer_bytes, w.block_bytes) == (1 << 20, 16 << 30)
    # aggregate = 512 tasks x 16 GiB; Mean(s) = aggregate / bandwidth of each repetition, averaged
    assert w.agg_mib == 512 * 16 * 1024
    assert w.agg_mib / w.mean_mib_s == pytest.approx(w.mean_s, rel=0.002)
    # MiB/s -> decimal GB/s; the "(Y MB/sec)" of the Max line is the same number in 1e6 units
    assert w.max_gbs == pytest.approx(432.936, abs=1e-3)
    assert rd.mean_gbs == pytest.approx(597513.69 * 2**20 / 1e9)


def test_ior_header_without_stonewall_columns_parses_by_name():
    """IOR 3.2 and older print no Stonewall(s)/Stonewall(MiB) columns: columns are located by name."""
    header = ("Operation   Max(MiB)   Min(MiB)  Mean(MiB)     StdDev   Max(OPs)   Min(OPs)  Mean(OPs)     StdDev    "
              "Mean(s) Test# #Tasks tPN reps fPP reord reordoff reordrand seed segcnt   blksiz    xsize aggs(MiB)   API RefNum")
    row = ("write        2048.00    2048.00    2048.00       0.00    2048.00    2048.00    2048.00       0.00    0.50000     "
           "0      4   4    1   0     0        1         0    0      1 268435456  1048576    1024.0 POSIX      0")
    r = fio.parse_ior(f"Summary of all tests:\n{header}\n{row}\n")
    assert r.max_write_mib_s is None and r.op("write").mean_s == 0.5 and not r.op("write").file_per_proc


@pytest.mark.parametrize("bad", ["", "Max Write: lots MiB/sec", "Summary of all tests:\nOperation Max(MiB)\n",
                                 "Summary of all tests:\n" + "Operation Max(MiB) Min(MiB) Mean(MiB) Mean(s) #Tasks tPN reps "
                                 "fPP blksiz xsize aggs(MiB) API\nwrite 1 1 1 1 4\n"])
def test_ior_garbage_raises_one_parse_error(bad):
    with pytest.raises(fio.StorageParseError):
        fio.parse_ior(bad)


def test_mdtest_sample_rates():
    m = fio.parse_mdtest(fio.sample("mdtest_lustre"))
    assert m.iterations == 3
    assert list(m.rows) == ["File creation", "File stat", "File read", "File removal", "Tree creation", "Tree removal"]
    assert m.rate("File creation") == 48236.117 and m.rows["File stat"][0] == 215884.760
    with pytest.raises(KeyError, match="Directory creation|File"):
        m.rate("Directory creation")


def test_mdtest_old_colon_layout_and_per_rank_columns():
    old = ("SUMMARY rate: (of 1 iterations)\n   Operation                      Max            Min           Mean        Std Dev\n"
           "   ---------                      ---            ---           ----        -------\n"
           "   File creation     :       1200.000       1200.000       1200.000          0.000\n")
    assert fio.parse_mdtest(old).rate("File creation") == 1200.0
    per_rank = ("SUMMARY rate (in ops/sec): (of 2 iterations)\n"
                "   File stat              10.000          5.000          7.500     100.000         90.000         95.000          5.000\n")
    assert fio.parse_mdtest(per_rank).rows["File stat"] == (100.0, 90.0, 95.0, 5.0)


@pytest.mark.parametrize("bad", ["", "SUMMARY time (in ms/op): (of 1 iterations)\n   File stat 1 1 1 1\n",
                                 "SUMMARY rate (in ops/sec): (of 1 iterations)\n   nothing here\n"])
def test_mdtest_garbage_raises_one_parse_error(bad):
    with pytest.raises(fio.StorageParseError):
        fio.parse_mdtest(bad)


def test_whitespace_only_lines_do_not_make_the_fio_summary_quadratic():
    # `^\s*` under re.MULTILINE crossed line ends, so every line of a run of blank-ish lines restarted a scan of
    # all the lines below it (bench_parsers.py: 125 KB took 2.5 s, 4 MB would take tens of minutes). The work is
    # counted, not timed: the parse of 4x the blank lines must not cost 16x (quadratic) - compare the regex scans.
    from labutil.parsers import fio as F
    blank = "\n".join(["\t \t" * 26 + "  "] * 2000)
    text = blank + "\n  read: IOPS=1000, BW=1000MiB/s (1049MB/s)(10.0GiB/10001msec)\n"
    assert F.parse_fio_summary(text)[0].read_gbs > 1.0
    for rx in (F._SUMMARY, F._SUMMARY_OLD, F._GROUP):
        assert rx.pattern.startswith("^[ \\t]*"), rx.pattern   # never a leading \s* that can cross a newline
