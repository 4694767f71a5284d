"""labutil.parsers.fio (formerly labutil.fioparse): the move, the error rule, and the R13 slow path."""
import time

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
    """Robustness review R13: a 5 MB paste took 41 s (every result line scanned every job header)."""
    one = fio.sample("fio_nvme_text") + "\n"
    big = one * (2_000_000 // len(one))  # ~2 MB, ~2,000 headers and ~2,000 result lines
    t0 = time.perf_counter()
    res = fio.parse_fio_summary(big)
    assert time.perf_counter() - t0 < 5.0
    assert [r.jobname for r in res] == ["seqwrite", "randread"]
