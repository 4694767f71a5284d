"""Tests for labutil.power: seed 004's power numbers computed from the catalog, racks, cooling, energy,
properties, and the ipmitool / nvidia-smi power parsers."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from labutil import hardware, power as P


def test_seed004_server_about_10kw():
    # seed 004 误区二: "一台8卡H100服务器的满载功耗约10kW" -- DGX H100 datasheet max 10.2 kW
    assert P.server_power_kw("DGX-H100") == pytest.approx(10.2)
    assert hardware.server("DGX-H100").power_is_estimate is False


def test_seed004_thousand_gpus():
    # "千卡集群的IT功耗接近1.25MW ... 总功耗可能达到2MW以上": 125 x 10.2 kW = 1.275 MW
    c = P.cluster_power(1000, pue=1.0)
    assert c.servers == 125
    assert c.it_kw == pytest.approx(1275.0)
    # the PUE that turns 1.275 MW IT into 2 MW total
    assert P.pue_for(c.it_kw, 2000.0) == pytest.approx(1.5686, abs=1e-4)
    # at the Uptime Institute 2023 average PUE (1.58) the total is above 2 MW
    avg = P.facility_data()["pue"]["industry_average"]
    assert P.cluster_power(1000, pue=avg).facility_kw > 2000.0


def test_network_and_storage_are_listed_separately():
    c = P.cluster_power(1000, pue=1.5, network_kw=60.0, storage_kw=40.0)
    assert c.server_kw == pytest.approx(1275.0)
    assert c.it_kw == pytest.approx(1375.0)
    assert c.facility_kw == pytest.approx(1.5 * 1375.0)
    assert c.overhead_kw == pytest.approx(0.5 * 1375.0)


def test_racks_power_and_space_limits():
    c = P.cluster_power(1024, rack_kw_limit=40.0)       # floor(40 / 10.2) = 3 DGX H100 per rack
    assert (c.servers_per_rack, c.rack_limit_by, c.racks) == (3, "power", 43)
    d = P.cluster_power(1024, rack_kw_limit=41.0)       # 4 x 10.2 = 40.8 kW: SuperPOD-style 4 per rack
    assert (d.servers_per_rack, d.racks, d.cooling) == (4, 32, "rear-door")
    e = P.cluster_power(1024, rack_kw_limit=200.0)      # space: (42 - 2) // 8U = 5
    assert (e.servers_per_rack, e.rack_limit_by) == (5, "space")
    with pytest.raises(ValueError, match="rack_kw_limit"):
        P.cluster_power(8, rack_kw_limit=8.0)


@pytest.mark.parametrize("kw,method", [(8, "air"), (15, "air"), (30.6, "air+containment"), (40.8, "rear-door"),
                                       (120, "direct-liquid")])
def test_cooling_thresholds(kw, method):
    assert P.cooling_advice(kw) == method


def test_power_cap():
    # 8 GPUs capped from 700 W to 500 W remove 1.6 kW from the 10.2 kW server
    assert P.server_power_kw("DGX-H100", gpu_power_cap_w=500) == pytest.approx(8.6)
    with pytest.raises(ValueError, match="gpu_power_cap_w"):
        P.server_power_kw("DGX-H100", gpu_power_cap_w=800)


def test_energy_and_cost():
    assert P.energy_mwh(1275.0, 365, 1.5) == pytest.approx(1275 * 1.5 * 8760 / 1000)
    assert P.energy_cost_per_year(1000.0, 0.1) == pytest.approx(876_000.0)
    assert P.energy_cost_per_year(1000.0, 0.1, load_factor=0.5) == pytest.approx(438_000.0)


def test_feeds_2n():
    f = P.feed_requirements(40.8, "2N")
    assert f["feeds"] == 2 and f["feed_rating_kw"] == pytest.approx(51.0)
    assert f["normal_load_per_feed"] == 0.5


def test_vectorised_sweep_matches_scalar():
    n = np.array([8, 256, 1000, 4096])
    pue = np.array([1.1, 1.3, 1.5, 1.6])
    c = P.cluster_power(n, pue=pue)
    for i in range(len(n)):
        s = P.cluster_power(int(n[i]), pue=float(pue[i]))
        assert c.facility_kw[i] == pytest.approx(s.facility_kw)
        assert c.racks[i] == s.racks


@given(st.integers(1, 100_000), st.integers(1, 100_000), st.floats(1.0, 3.0), st.floats(1.0, 3.0))
def test_power_monotone_in_gpus_and_pue(n1, n2, p1, p2):
    (na, nb), (pa, pb) = sorted((n1, n2)), sorted((p1, p2))
    assert P.cluster_power(na, pue=pa).facility_kw <= P.cluster_power(nb, pue=pa).facility_kw
    assert P.cluster_power(na, pue=pa).facility_kw <= P.cluster_power(na, pue=pb).facility_kw + 1e-9
    assert P.cluster_power(na).racks <= P.cluster_power(nb).racks


@pytest.mark.parametrize("kw,name", [({"n_gpus": 0}, "n_gpus"), ({"n_gpus": -8}, "n_gpus"), ({"n_gpus": "8"}, "n_gpus"),
                                     ({"n_gpus": 8, "pue": 0.9}, "pue"), ({"n_gpus": 8, "pue": float("nan")}, "pue"),
                                     ({"n_gpus": 8, "network_kw": -1}, "network_kw"),
                                     ({"n_gpus": 8, "rack_kw_limit": 0}, "rack_kw_limit")])
def test_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        P.cluster_power(**kw)


def test_unknown_server():
    with pytest.raises(KeyError, match="DGX-H100"):
        P.cluster_power(8, server="DGX-H10")


# --- parsers ------------------------------------------------------------------------------------
DCMI = """
    Instantaneous power reading:                  6120 Watts
    Minimum during sampling period:                810 Watts
    Maximum during sampling period:               9870 Watts
    Average power reading over sample period:     5960 Watts
    IPMI timestamp:                           Tue Mar 12 08:41:07 2024
    Sampling period:                          00000001 Seconds.
    Power reading state is:                   activated
"""

SMI = """index, power.draw [W], power.limit [W]
0, 612.35 W, 700.00 W
1, 598.10 W, 700.00 W
2, [N/A], 500.00 W
"""


def test_parse_dcmi():
    d = P.parse_ipmitool_dcmi_power(DCMI)
    assert (d["instantaneous_w"], d["max_w"], d["avg_w"], d["state"]) == (6120.0, 9870.0, 5960.0, "activated")
    assert d["sampling_period_s"] == 1.0


def test_parse_nvidia_smi_power():
    rows = P.parse_nvidia_smi_power_csv(SMI)
    assert [r["power_limit_w"] for r in rows] == [700.0, 700.0, 500.0]
    assert rows[0]["power_draw_w"] == pytest.approx(612.35) and rows[2]["power_draw_w"] is None


@pytest.mark.parametrize("garbage", ["", "hello", "Instantaneous power reading: lots", None,
                                     "power.draw [W], power.limit [W]\nabc, def"])
def test_power_parsers_reject_garbage(garbage):
    with pytest.raises(P.ParseError):
        P.parse_ipmitool_dcmi_power(garbage)
    with pytest.raises(P.ParseError):
        P.parse_nvidia_smi_power_csv(garbage)


def test_racks_vs_limit_sweep_matches_cluster_power_and_fullest_rack():
    import numpy as np

    limits = np.array([11.0, 15.0, 30.0, 40.0, 41.0, 130.0])
    sweep = P.racks_vs_limit(128, "DGX-H100", limits)
    for lim, r in zip(limits, sweep):
        assert r == P.cluster_power(1024, rack_kw_limit=float(lim)).racks
    assert np.isnan(P.racks_vs_limit(1, "DGX-H100", [10.0]))[0]  # 10 kW cannot hold a 10.2 kW server
    # review 2026-12-03: one server is not "3 per rack, 30.6 kW"
    one = P.cluster_power(8, rack_kw_limit=40.0)
    assert one.servers_per_rack == 3 and one.servers_in_fullest_rack == 1
    assert one.fullest_rack_kw == pytest.approx(P.server_power_kw("DGX-H100"))
    assert one.cooling_actual == "air" and one.cooling == "air+containment"
    full = P.cluster_power(1024, rack_kw_limit=40.0)
    assert full.servers_in_fullest_rack == 3 and full.cooling_actual == full.cooling


# -- rv-m2: the Blackwell generation (ch09, ch10) ---------------------------------------------------------
def test_dgx_b200_racks_and_power():
    # NVIDIA DGX B200 User Guide: 14.3 kW max, 10U; 4 per 42U rack (2U reserved) fit by space at a 60 kW limit
    c = P.cluster_power(1024, server="DGX-B200", pue=1.0, rack_kw_limit=60.0)
    assert P.server_power_kw("DGX-B200") == 14.3
    assert (c.servers, c.servers_per_rack, c.racks) == (128, 4, 32)
    assert c.rack_kw == pytest.approx(57.2) and c.cooling == "rear-door" and c.it_kw == pytest.approx(1830.4)
    assert P.cluster_power(1024, server="DGX-B200", rack_kw_limit=40.0).servers_per_rack == 2
    with pytest.raises(ValueError, match="DGX-B200"):
        P.cluster_power(8, server="DGX-B200", rack_kw_limit=12.0)


def test_gb200_nvl72_is_sized_by_whole_racks():
    # DGX GB200 User Guide (18 compute trays x 4 GPUs) and the SuperPOD GB200 RA (1.2 MW per SU of 8 racks);
    # GB200 NVL72 datasheet: 36 Grace, 2,592 Neoverse V2 cores, up to 17 TB LPDDR5X (480 GB per Grace)
    s = P.rack_scale_system("GB200-NVL72")
    assert (s.gpus, s.compute_trays, s.cpus) == (72, 18, 36)
    assert (s.cores_per_gpu, s.cpu_memory_gb_per_gpu, s.rack_kw) == (36.0, 240.0, 150.0)
    assert "1.2 Megawatts" in s.source and P.rack_scale_systems() == ["GB200-NVL72"]
    r = P.rack_scale_power(1024, "GB200-NVL72", pue=1.0)
    assert (r.racks, r.gpus_installed, r.it_kw, r.cooling) == (15, 1080, 2250.0, "direct-liquid")
    assert P.rack_scale_power(72, pue=1.3).facility_kw == pytest.approx(195.0)
    with pytest.raises(KeyError, match="GB200-NVL72"):
        P.rack_scale_system("GB200-NVL36")
    with pytest.raises(ValueError, match="n_gpus"):
        P.rack_scale_power(0)
