"""iostat -x and nvidia-smi dmon parsers (labutil.parsers.sysstat), formats per the module docstring."""

import pytest

from labutil.parsers import ParseError, parse_iostat_x, parse_nvidia_smi_dmon
from labutil.parsers import sysstat


def test_iostat_sysstat12_columns_by_name():
    (rep,) = parse_iostat_x(sysstat.SAMPLE_IOSTAT_X)
    assert rep.iowait_pct == pytest.approx(21.37)
    d = rep.device("nvme1n1")
    # rkB/s is KiB/s: 1,953,672 KiB/s x 1024 B = 2.0006 GB/s
    assert d.read_gbs == pytest.approx(1953672 * 1024 / 1e9)
    assert d.r_per_s == 16842 and d.util_pct == pytest.approx(99.8)
    assert d.queue_depth == pytest.approx(23.24) and d.r_await_ms == pytest.approx(1.38)
    # request size recomputed from bandwidth / IOPS equals the printed rareq-sz (116 KiB)
    assert d.read_req_kib == pytest.approx(116.0)
    assert rep.device("nvme0n1").write_gbs == pytest.approx(198.4 * 1024 / 1e9)
    with pytest.raises(KeyError, match="nvme1n1"):
        rep.device("sdz")


def test_iostat_sysstat11_header_and_mb_units():
    (rep,) = parse_iostat_x(sysstat.SAMPLE_IOSTAT_X_OLD)
    d = rep.device("nvme0n1")
    assert d.read_gbs == pytest.approx(1753920 * 1024 / 1e9)
    assert d.queue_depth == pytest.approx(21.05)
    mb = ("Device:  rrqm/s   wrqm/s     r/s     w/s    rMB/s    wMB/s avgrq-sz avgqu-sz   await r_await w_await  svctm  %util\n"
          "xvdf       0.00  2934.00    0.00 2000.00     0.00    48.69    49.86     2.59    1.30    0.00    1.30   0.50  99.60\n")
    (rep2,) = parse_iostat_x(mb)
    assert rep2.iowait_pct is None
    assert rep2.devices[0].write_gbs == pytest.approx(48.69 * 1024 * 1024 / 1e9)
    assert rep2.devices[0].read_req_kib is None


def test_iostat_multiple_intervals():
    reps = parse_iostat_x(sysstat.SAMPLE_IOSTAT_X + "\n" + sysstat.SAMPLE_IOSTAT_X.split("\n", 2)[2])
    assert len(reps) == 2 and reps[-1].device("nvme1n1").util_pct == pytest.approx(99.8)


@pytest.mark.parametrize("bad", ["", "   ", "hello world", None, 42,
                                 "Device r/s w/s\nsda 1 2\n",                       # not -x (no %util)
                                 "Device r/s rkB/s w/s wkB/s %util\nsda 1 2\n",       # truncated row
                                 "Device r/s rkB/s w/s wkB/s %util\nsda 1 x 2 3 4\n", # non-number
                                 "Device r/s rkB/s w/s wkB/s %util\n",                # no devices
                                 "avg-cpu:  %user %iowait\n  1.0\n"])
def test_iostat_garbage_raises_parse_error(bad):
    with pytest.raises(ParseError):
        parse_iostat_x(bad)


def test_dmon_um_columns_and_means():
    log = parse_nvidia_smi_dmon(sysstat.SAMPLE_DMON_UM)
    assert log.columns == ("gpu", "sm", "mem", "enc", "dec", "jpg", "ofa", "fb", "bar1", "ccpm")
    assert log.units[0] == "Idx" and log.units[7] == "MB"
    assert log.gpus == [0, 1, 2, 3] and len(log.rows) == 12
    assert log.mean("sm") == pytest.approx((41 + 39 + 43 + 40 + 37 + 45 + 38 + 42 + 44 + 40 + 41 + 39) / 12)
    assert log.mean("sm", gpu=0) == pytest.approx((41 + 37 + 44) / 3)
    assert log.rows[0].fb_mib == 61234
    with pytest.raises(KeyError):
        log.mean("pwr")


def test_dmon_old_driver_dash_and_timestamps():
    text = ("#Date       Time        gpu    sm   mem   enc   dec    fb  bar1\n"
            "#YYYYMMDD   HH:MM:SS    Idx     %     %     %     %    MB    MB\n"
            " 20261202   18:30:01      0    97    35     -     -  40110     4\n"
            " 20261202   18:30:02      0    98    36     -     -  40110     4\n")
    log = parse_nvidia_smi_dmon(text)
    assert log.rows[0].values["enc"] is None and log.rows[1].sm_pct == 98
    assert log.rows[0].values["Time"] == "18:30:01"
    with pytest.raises(ValueError):
        log.mean("enc")


@pytest.mark.parametrize("bad", ["", "garbage", None,
                                 "    0    41    18\n",                                   # no header
                                 "# gpu sm mem\n# Idx % %\n",                              # no rows
                                 "# gpu sm mem\n# Idx % %\n 0 41\n",                       # short row
                                 "# gpu sm mem\n# Idx % %\n 0 abc 3\n",                    # not a number
                                 "# gpu sm mem\n# Idx % %\n 0 141 3\n",                    # > 100 %
                                 "# gpu sm mem\n# Idx % %\n 0 41 3\n# gpu sm\n# Idx %\n 0 1\n"])  # header change
def test_dmon_garbage_raises_parse_error(bad):
    with pytest.raises(ParseError):
        parse_nvidia_smi_dmon(bad)


def test_iostat_sysstat12_0_header_without_flush_columns():
    # sysstat 12.0 (e.g. Ubuntu 20.04) prints no f/s, f_await columns; columns are read by name
    text = ("Linux 5.4.0-216-generic (vm) \t03/24/26 \t_x86_64_\t(8 CPU)\n\n"
            "avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n"
            "           0.29    0.00    0.39    0.05    0.01   99.27\n\n"
            "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await "
            "wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz  aqu-sz  %util\n"
            "vda              0.17      8.93     0.04  21.01   12.55    53.30    0.74     15.12     0.49  39.95   10.75"
            "    20.39    0.00      0.00     0.00   0.00    0.00     0.00    0.01   0.19\n")
    (rep,) = parse_iostat_x(text)
    d = rep.device("vda")
    assert rep.iowait_pct == pytest.approx(0.05)
    assert d.read_gbs == pytest.approx(8.93 * 1024 / 1e9) and d.util_pct == pytest.approx(0.19)
    assert d.r_await_ms == pytest.approx(12.55) and d.queue_depth == pytest.approx(0.01)
