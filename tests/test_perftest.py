"""perftest (ib_write_bw / ib_read_bw / ib_send_bw) parser: real layout, unit conversion, garbage."""

import pytest

from labutil.parsers import ParseError, parse_perftest_bw, samples

# Layout of the MB/sec table copied from linux-rdma/perftest issue #234 (RoCE, no --report_gbits);
# the numbers of the row are illustrative.
ROCE_MB = """
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF          Device         : mlx5_0
 Number of qps   : 1            Transport type : IB
 Connection type : RC           Using SRQ      : OFF
 Mtu             : 4096[B]
 Link type       : Ethernet
 GID index       : 3
---------------------------------------------------------------------------------------
 local address: LID 0000 QPN 0x0108 PSN 0x63ad7d RKey 0x17eedf VAddr 0x007f760c947000
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:255:255:05
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 65536      664644           0.00               11605.03             0.185680
---------------------------------------------------------------------------------------
"""


def test_ndr_sample_all_sizes():
    r = parse_perftest_bw(samples.sample("ib_write_bw_ndr"))
    assert r.test == "RDMA_Write BW Test" and r.device == "mlx5_0" and r.n_qps == 1
    assert r.transport == "IB" and r.connection == "RC" and r.link_type == "IB" and r.mtu_bytes == 4096
    assert not r.bidirectional and r.report_unit == "Gb/sec"
    # -a runs every power of two from 2 B to 8 MiB
    assert [row.size_bytes for row in r.rows] == [2 ** e for e in range(1, 24)]
    assert r.largest.size_bytes == 8388608 and r.largest.bw_avg_gbps == pytest.approx(391.79)
    assert r.best_avg_gbps == pytest.approx(391.79)
    assert r.rows[0].msg_rate_mpps == pytest.approx(9.7804)


def test_mb_per_sec_is_mebibytes_and_zero_peak_is_none():
    r = parse_perftest_bw(ROCE_MB)
    row = r.rows[0]
    # perftest_resources.c: MB/sec divides by 0x100000 -> 11605.03 MiB/s = 97.35 Gbit/s
    assert row.bw_avg_gbps == pytest.approx(11605.03 * 2 ** 20 * 8 / 1e9)
    assert row.bw_avg_gbps == pytest.approx(97.35, abs=0.01)
    assert row.bw_peak_gbps is None
    assert r.link_type == "Ethernet" and r.settings["GID index"] == "3"


def test_bidirectional_title():
    text = ROCE_MB.replace("RDMA_Write BW Test", "RDMA_Write Bidirectional BW Test")
    assert parse_perftest_bw(text).bidirectional


@pytest.mark.parametrize("bad", ["", "   ", None, 42, "garbage\nmore garbage",
                                 ROCE_MB.split(" #bytes")[0],                      # never connected
                                 ROCE_MB.replace(" 65536      664644           0.00               11605.03             0.185680\n", ""),
                                 ROCE_MB.replace("BW average[MB/sec]", "BW average[Gb/sec]")])
def test_garbage_raises_parse_error(bad):
    with pytest.raises(ParseError):
        parse_perftest_bw(bad)


def test_mb_per_sec_helper_vectorised_and_validated():
    import numpy as np

    from labutil.parsers import mb_per_sec_to_gbps
    assert mb_per_sec_to_gbps(11605.03) == pytest.approx(97.35, abs=0.01)
    assert np.allclose(mb_per_sec_to_gbps(np.array([0.0, 2 ** 20 / 8 * 1e-3])), [0.0, 1e-3 * 2 ** 20 / 8 * 2 ** 20 * 8 / 1e9])
    for bad in (-1.0, float("nan"), True, "x"):
        with pytest.raises(ValueError):
            mb_per_sec_to_gbps(bad)
