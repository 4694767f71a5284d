"""Parsers of ch11/ch12 operations tools on REAL outputs copied from public pages
(``labutil/data/samples_public.toml``; each entry's ``source`` is the page), plus garbage and
mutations: every parser returns a result or raises its ``ParseError`` subclass, nothing else."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labutil import rdma
from labutil.parsers import ParseError, samples
from labutil.parsers.ethtool import EthtoolParseError, parse_ethtool_stats


# -- ethtool -S ---------------------------------------------------------------------------------------
def test_real_mlx5_ethtool_dump_and_who_sends_pause():
    # lore.kernel.org bpf thread 2024-06-19 ("Missing counters are zero"): an mlx5 port receiving 64-byte
    # packets at line rate with one XDP core
    s = parse_ethtool_stats(samples.sample("ethtool_S_mlx5_public"))
    assert s.header and s.skipped == 0 and len(s.counters) == 101
    assert s.get("tx_pause_ctrl_phy") == 5_745_055 and s.get("rx_pause_ctrl_phy") is None
    assert s.get("rx_discards_phy") == 58_591_428_329 and s.get("rx_out_of_buffer") == 990_473_555
    # rx_packets_phy counts buffer discards too: 97.05e9 ~ 38.46e9 delivered (vport) + 58.59e9 discarded
    assert s.get("rx_packets_phy") == pytest.approx(s.get("rx_vport_unicast_packets") + s.get("rx_discards_phy"), rel=1e-5)
    assert s.prio(0)["rx_discards"] == 58_591_314_012 and s.priorities_with("pause") == []
    d = rdma.diagnose_pause(s.counters, priority=None)
    assert d.who_sends_pause == "this port" and d.verdict == "receiver congested" and d.severity == "critical"
    assert d.discard_fraction == pytest.approx(58_591_428_329 / 97_052_087_562)


def test_ethtool_grep_output_queue_prefixes_and_bad_values():
    s = parse_ethtool_stats("     rx_prio3_pause: 142\n     tx_prio3_pause: 87\n     rx_prio3_pause_duration: 5000\n"
                            "     [0]: rx_bytes: 2094\n     rxq0: rx_pkts: 3888\n     not_a_number: abc\n"
                            "     neg: -1\n     huge: 18446744073709551616\n")
    assert not s.header and s.skipped == 3
    assert s.prio(3) == {"rx_pause": 142, "tx_pause": 87, "rx_pause_duration": 5000}
    assert s.get("[0]: rx_bytes") == 2094 and s.get("rxq0: rx_pkts") == 3888
    assert s.priorities_with() == [3]
    with pytest.raises(ValueError, match="priority"):
        s.prio(8)


def test_ethtool_delta_and_reset():
    a = parse_ethtool_stats("rx_prio3_pause: 10\ntx_prio3_pause: 5\n")
    b = parse_ethtool_stats("rx_prio3_pause: 40\ntx_prio3_pause: 5\nrx_prio3_marked: 9\n")
    assert a.delta(b) == {"rx_prio3_pause": 30, "tx_prio3_pause": 0}
    with pytest.raises(ValueError, match="went down"):
        b.delta(a)


@pytest.mark.parametrize("bad", ["", "   \n", "NIC statistics:\n", "no counters here", "rx: abc", None, 42, b"\xff\xfe"])
def test_ethtool_garbage_is_one_parse_error(bad):
    with pytest.raises(EthtoolParseError) as e:
        parse_ethtool_stats(bad)
    assert isinstance(e.value, ParseError) and isinstance(e.value, ValueError)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_ethtool_fuzz_only_parse_error(data):
    seed = samples.sample("ethtool_S_mlx5_public")
    cut = data.draw(st.integers(0, len(seed)))
    junk = data.draw(st.text(max_size=200))
    for text in (seed[:cut], seed[cut:], junk, seed[:cut] + junk + seed[cut:]):
        try:
            s = parse_ethtool_stats(text)
        except EthtoolParseError:
            continue
        assert all(isinstance(v, int) and 0 <= v < 2 ** 64 for v in s.counters.values())


# -- the pause rules (labutil.rdma) ---------------------------------------------------------------------
def test_diagnose_pause_rules():
    base = dict(priority=3, interval_s=10.0)
    assert rdma.diagnose_pause({}, **base).verdict == "ok"
    ok = rdma.diagnose_pause({"rx_prio3_pause": 10, "rx_prio3_pause_duration": 40_000, "rx_prio3_marked": 5}, **base)
    assert ok.verdict == "back-pressure" and ok.who_sends_pause == "the network"
    assert ok.received_pause_fraction == pytest.approx(0.004)
    heavy = rdma.diagnose_pause({"rx_prio3_pause": 9, "rx_prio3_pause_duration": 1_000_000}, **base)
    assert heavy.verdict == "heavy congestion" and heavy.severity == "warning"
    storm = rdma.diagnose_pause({"tx_prio3_pause": 9, "tx_prio3_pause_duration": 6_000_000}, **base)
    assert storm.verdict == "PFC storm" and storm.who_sends_pause == "this port" and storm.severity == "critical"
    watchdog = rdma.diagnose_pause({"tx_pause_storm_error_events": 1}, **base)
    assert watchdog.verdict == "PFC storm" and watchdog.severity == "critical"
    drops = rdma.diagnose_pause({"rx_prio3_pause": 1, "rx_prio3_buf_discard": 3, "rx_prio3_packets": 97}, **base)
    assert drops.verdict == "lossless drops" and drops.discard_fraction == pytest.approx(0.03)
    # thresholds are parameters
    assert rdma.diagnose_pause({"rx_prio3_pause_duration": 1_000_000}, heavy_fraction=0.2, **base).verdict == "back-pressure"
    with pytest.raises(ValueError, match="interval_s"):
        rdma.diagnose_pause({}, interval_s=0)
    with pytest.raises(ValueError, match="heavy_fraction"):
        rdma.diagnose_pause({}, heavy_fraction=0.6, storm_fraction=0.5)
    with pytest.raises(ValueError, match="priority"):
        rdma.diagnose_pause({}, priority=9)
    with pytest.raises(TypeError):
        rdma.diagnose_pause([1, 2])


# -- mlxlink ------------------------------------------------------------------------------------------------
from labutil import links  # noqa: E402
from labutil.parsers.ibdiagnet import IbdiagnetParseError, parse_ibdiagnet  # noqa: E402
from labutil.parsers.mlxlink import MlxlinkParseError, parse_ber, parse_mlxlink  # noqa: E402


def test_real_mlxlink_counters_ber_is_errors_over_bits():
    # github.com/scitix/sichek mlxlinkCountersSample ("captured on clnet36 mlx5_1", a healthy 400G link)
    m = parse_mlxlink(samples.sample("mlxlink_counters_400g_public"))
    assert m.raw_ber == pytest.approx(2e-9) and m.effective_ber < 1e-250 and m.effective_errors == 0
    assert m.raw_errors_per_lane == [3946476397, 5120336064, 7692183445, 3026261414]
    assert m.minutes_since_clear == pytest.approx(348349.5)
    # the printed raw BER is the counted errors over the bits a 400G port carried since the clear
    measured = sum(m.raw_errors_per_lane) / (400e9 * m.minutes_since_clear * 60)
    assert measured == pytest.approx(2e-9, rel=0.25)
    v = links.diagnose_link(m)
    assert v["verdict"] == "ok" and v["effective_ber"] == 0.0


def test_mlxlink_operational_sections_and_degraded_rules():
    text = ("Operational Info\n----------------\nState                              : Active\n"
            "Physical state                     : LinkUp\nSpeed                              : IB-HDR\n"
            "Width                              : 2x\nFEC                                : Standard RS-FEC - RS(528,514)\n\n"
            "Troubleshooting Info\n--------------------\nRecommendation                     : \x1b[31mBad signal integrity\x1b[0m\n")
    m = parse_mlxlink(text)
    assert (m.state, m.physical_state, m.speed, m.width) == ("Active", "LinkUp", "IB-HDR", 2)
    assert m.recommendation == "Bad signal integrity" and not m.has_counters
    v = links.diagnose_link(m, expected_width=4, expected_speed="NDR")
    assert v["verdict"] == "degraded" and any("width 2x" in r for r in v["reasons"])
    assert any("Bad signal integrity" in r for r in v["reasons"])
    down = parse_mlxlink(text.replace("Physical state                     : LinkUp",
                                      "Physical state                     : Polling"))
    assert links.diagnose_link(down)["verdict"] == "down"
    with pytest.raises(TypeError):
        links.diagnose_link({"State": "Active"})


def test_parse_ber_forms():
    assert parse_ber("2E-9") == pytest.approx(2e-9) and parse_ber("15E-255") == pytest.approx(1.5e-254)
    assert parse_ber("0") == 0.0 and parse_ber("N/A") is None and parse_ber("1E-99999") == 0.0
    assert parse_ber("\x1b[32m2E-9\x1b[0m") == pytest.approx(2e-9) and parse_ber(None) is None


# -- ibdiagnet ----------------------------------------------------------------------------------------------
def test_ibdiagnet_summary_and_findings():
    r = parse_ibdiagnet(samples.sample("ibdiagnet_ndr_fabric"))
    assert (r.nodes, r.switches, r.cas) == (288, 24, 264)
    assert r.stage("port counters").warnings == 2 and r.total_warnings == 3 and r.total_errors == 0
    w = r.findings("W")
    assert len(w) == 3 and "symbol_error_counter : 1204" in w[0][1] and w[2][0] == "Speed / Width checks"
    with pytest.raises(ValueError):
        r.findings("X")
    # a run that stops before its summary still yields its messages
    partial = parse_ibdiagnet("---------------------------------------------\nDiscovery\n-E- Failed to fully discover the fabric\n")
    assert partial.total_errors == 1 and partial.stages == []


@pytest.mark.parametrize("parse,err", [(parse_mlxlink, MlxlinkParseError), (parse_ibdiagnet, IbdiagnetParseError)])
@pytest.mark.parametrize("bad", ["", "  \n", "no sections here", "State : Active", 7, None, "------\n------\n"])
def test_fabric_parsers_garbage_is_one_parse_error(parse, err, bad):
    with pytest.raises(err) as e:
        parse(bad)
    assert isinstance(e.value, ParseError)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fabric_parsers_fuzz_only_parse_error(data):
    for parse, err, name in ((parse_mlxlink, MlxlinkParseError, "mlxlink_counters_400g_public"),
                             (parse_ibdiagnet, IbdiagnetParseError, "ibdiagnet_ndr_fabric")):
        seed = samples.sample(name)
        cut = data.draw(st.integers(0, len(seed)))
        junk = data.draw(st.text(max_size=120))
        for text in (seed[:cut], seed[cut:], junk, seed[:cut] + junk):
            try:
                r = parse(text)
            except err:
                continue
            if parse is parse_mlxlink:
                assert r.raw_ber is None or r.raw_ber >= 0
                links.diagnose_link(r)  # the rule never crashes on what the parser accepted


# -- triage reads the fabric tools (ch12 samples are recognised, the link rule decides) ---------------------
def test_triage_reads_fabric_tool_outputs():
    from labutil import troubleshoot as T
    healthy = T.triage(samples.sample("mlxlink_counters_400g_public"))
    assert healthy.first_failing_layer is None and healthy.recognised
    # the same port after the FEC stopped hiding errors: post-FEC errors -> degraded -> network
    bad = samples.sample("mlxlink_counters_400g_public").replace(
        "Effective Physical Errors          : 0", "Effective Physical Errors          : 5123")
    assert bad != samples.sample("mlxlink_counters_400g_public")
    d = T.triage(bad)
    assert d.first_failing_layer == "network", d
    stopped = T.triage("---------------------------------------------\nDiscovery\n"
                       "-E- Failed to fully discover the fabric\n")
    assert stopped.first_failing_layer == "network"
    assert T.triage(samples.sample("iblinkinfo_ndr")).first_failing_layer == "network"  # one port trained down


# -- show_gids ------------------------------------------------------------------------------------------
def test_real_show_gids_table_and_the_roce_v2_index():
    # github.com/host-bench/Husky README (NSDI '23 test suite): "tells us to set VictimGid to be 3"
    from labutil.parsers import parse_show_gids

    t = parse_show_gids(samples.sample("show_gids_public"))
    assert t.n_found == 4 and t.devices() == ["mlx5_0"]
    assert [(e.index, e.version, e.ipv4) for e in t.entries] == [
        (0, "v1", None), (1, "v2", None), (2, "v1", "192.168.211.242"), (3, "v2", "192.168.211.242")]
    assert [e.routable for e in t.entries] == [False, False, False, True]   # link-local or v1: not routable
    assert t.roce_v2_index("mlx5_0") == 3 and t.entries[0].netdev == "rdma0"
    with pytest.raises(KeyError, match="mlx5_0"):
        t.for_dev("mlx5_9")


def test_show_gids_without_an_ip_or_with_two_and_truncated():
    from labutil.parsers import ShowGidsParseError, parse_show_gids

    no_ip = "\n".join(ln for ln in samples.sample("show_gids_public").splitlines() if "192.168" not in ln)
    t = parse_show_gids(no_ip.replace("n_gids_found=4", "n_gids_found=2"))
    with pytest.raises(ValueError, match="no RoCE v2 GID with an IPv4"):
        t.roce_v2_index("mlx5_0")
    two = samples.sample("show_gids_public").replace("n_gids_found=4", "") + (
        "mlx5_0\t1\t5\t0000:0000:0000:0000:0000:ffff:0a00:0001\t10.0.0.1  \tv2\trdma0\n")
    t2 = parse_show_gids(two)
    with pytest.raises(ValueError, match="several"):
        t2.roce_v2_index("mlx5_0")
    assert t2.roce_v2_index("mlx5_0", ipv4="10.0.0.1") == 5
    with pytest.raises(ShowGidsParseError, match="truncated"):
        parse_show_gids(samples.sample("show_gids_public").replace("n_gids_found=4", "n_gids_found=6"))
    for bad in ("", "DEV PORT INDEX GID\n---\n", None, 3):
        with pytest.raises(ShowGidsParseError):
            parse_show_gids(bad)
