"""Tests for labutil.topology: fat-tree arithmetic, fabric sizing validated against NVIDIA's DGX SuperPOD
reference architectures, torus/dragonfly formulas, properties, and the InfiniBand tool parsers."""

import math

import pytest
from hypothesis import given, strategies as st

from labutil import hardware, topology as T


# --- k-ary fat tree: Al-Fares, Loukissas & Vahdat, SIGCOMM 2008, §3.2 -------------------------
@pytest.mark.parametrize("k", [2, 4, 8, 48, 64])
def test_fat_tree_formulas(k):
    ft = T.fat_tree(k)
    assert ft.hosts == k ** 3 // 4
    assert ft.edge_switches == ft.agg_switches == k * k // 2
    assert ft.core_switches == (k // 2) ** 2
    assert ft.total_switches == 5 * k * k // 4
    assert ft.bisection_links == k ** 3 // 8


def test_fat_tree_paper_example():
    # §3.2: "a fat-tree built with 48-port switches supports 27,648 hosts"
    assert T.fat_tree(48).hosts == 27_648
    assert T.fat_tree(4).hosts == 16 and T.fat_tree(4).total_switches == 20  # Figure 3


@pytest.mark.parametrize("bad", [3, 0, -2, 2.5, float("nan"), "8", True])
def test_fat_tree_rejects_bad_k(bad):
    with pytest.raises(ValueError, match="k"):
        T.fat_tree(bad)


# --- DGX SuperPOD H100 RA (RA-11333-001), "Network Fabrics", Table 4 "Compute fabric component count"
# SU, nodes, leaf, spine, spine-leaf cables (compute cables = nodes*8 + 4 UFM ports, UFM not modelled)
H100_TABLE4 = [(1, 31, 8, 4, 256), (2, 63, 16, 8, 512), (3, 95, 24, 16, 768), (4, 127, 32, 16, 1024)]


@pytest.mark.parametrize("su,nodes,leaf,spine,leaf_spine", H100_TABLE4)
def test_superpod_h100_table4(su, nodes, leaf, spine, leaf_spine):
    sw = hardware.switch("QM9700")
    f = T.size_fabric(nodes * 8, nics_per_node=8, gpus_per_node=8, switch_ports=sw.ports, link_gbps=sw.port_gbps)
    assert (f.tiers, f.leaf_switches, f.spine_switches, f.core_switches) == (2, leaf, spine, 0)
    assert f.leaf_spine_cables == leaf_spine
    assert f.node_leaf_cables == nodes * 8
    # full bisection (1:1): every GPU's 400G NIC can cross the fabric at line rate
    assert f.per_gpu_bisection_gbps == pytest.approx(400.0)


# DGX SuperPOD B200 RA, "DGX SuperPOD Architecture", larger-configuration table (32 DGX B200 per SU,
# 8 rails, QM9700): SU, GPUs, leaf, spine, core, node-leaf, leaf-spine, spine-core cables
B200_TABLE = [(2, 512, 16, 8, 0, 512, 512, 0), (4, 1024, 32, 16, 0, 1024, 1024, 0),
              (8, 2048, 64, 32, 0, 2048, 2048, 0), (16, 4096, 128, 128, 64, 4096, 4096, 4096),
              (32, 8192, 256, 256, 128, 8192, 8192, 8192), (64, 16384, 512, 512, 256, 16384, 16384, 16384)]


@pytest.mark.parametrize("su,gpus,leaf,spine,core,nl,ls,sc", B200_TABLE)
def test_superpod_b200_larger_configs(su, gpus, leaf, spine, core, nl, ls, sc):
    f = T.size_fabric(gpus, switch_ports=64, link_gbps=400)
    assert (f.leaf_switches, f.spine_switches, f.core_switches) == (leaf, spine, core)
    assert (f.node_leaf_cables, f.leaf_spine_cables, f.spine_core_cables) == (nl, ls, sc)
    assert f.tiers == (3 if core else 2)
    assert f.cables == nl + ls + sc


def test_two_tier_limit_is_radix_squared_over_two():
    assert T.max_nics(64, 2) == 64 * 64 // 2 == 2048
    assert T.max_nics(64, 3) == 64 ** 3 // 4
    assert T.size_fabric(2048).tiers == 2
    assert T.size_fabric(2056).tiers == 3


def test_transceivers_twin_port_assumption():
    # 1 SU, 32 DGX H100: nodes 32 x 4 twin-port cages; leaves (256 + 256 ends)/2; spines 256/2
    f = T.size_fabric(256)
    assert f.transceivers == 32 * 4 + 256 + 128
    g = T.size_fabric(256, node_ports_per_transceiver=1)
    assert g.transceivers == f.transceivers + 128
    h = T.size_fabric(256, nic_leaf_optical=False)     # DAC node-leaf: no optics there
    assert h.transceivers == 128 + 128


def test_oversubscription_reduces_bisection_and_switches():
    a = T.size_fabric(4096, oversubscription=1.0)
    b = T.size_fabric(4096, oversubscription=3.0)
    assert b.actual_oversubscription <= 3.0
    assert b.per_gpu_bisection_gbps == pytest.approx(400.0 / b.actual_oversubscription)
    assert b.total_switches < a.total_switches


def test_rail_optimized_keeps_same_rail_traffic_on_one_leaf():
    rail = T.size_fabric(1024, rail_optimized=True)
    plain = T.size_fabric(1024, rail_optimized=False)
    assert rail.rail_peers_one_hop == 32       # a whole SU of 32 nodes per rail leaf
    assert plain.rail_peers_one_hop == 4       # 32 down ports / 8 NICs per node
    assert rail.total_switches == plain.total_switches  # same hardware, different wiring


def test_single_switch_cluster():
    f = T.size_fabric(16, switch_ports=64)     # 2 nodes, 16 NICs
    assert (f.tiers, f.leaf_switches, f.spine_switches) == (1, 1, 0)
    assert f.rail_peers_one_hop == 2


def test_too_large_raises_naming_parameters():
    with pytest.raises(ValueError, match="switch_ports"):
        T.size_fabric(70_000, switch_ports=64)


@pytest.mark.parametrize("kw,name", [({"n_gpus": 0}, "n_gpus"), ({"n_gpus": 8, "switch_ports": 63}, "switch_ports"),
                                     ({"n_gpus": 8, "link_gbps": -1}, "link_gbps"),
                                     ({"n_gpus": 8, "oversubscription": 0.5}, "oversubscription"),
                                     ({"n_gpus": 8, "oversubscription": float("nan")}, "oversubscription"),
                                     ({"n_gpus": 8, "rail_optimized": "yes"}, "rail_optimized"),
                                     ({"n_gpus": 8, "nics_per_node": 0}, "nics_per_node")])
def test_size_fabric_bad_input(kw, name):
    with pytest.raises(ValueError, match=name):
        T.size_fabric(**kw)


# --- properties -----------------------------------------------------------------------------------
gpus = st.integers(min_value=1, max_value=40_000)
ratios = st.sampled_from([1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.0])


@given(gpus, ratios, st.sampled_from([(32, 64), (40, 64), (64, 128), (32, 128)]), st.booleans())
def test_more_ports_never_more_switches(n, o, radices, rail):
    small, big = radices
    try:
        a = T.size_fabric(n, switch_ports=small, oversubscription=o, rail_optimized=rail)
    except ValueError:
        return  # too big for the small switch: nothing to compare
    b = T.size_fabric(n, switch_ports=big, oversubscription=o, rail_optimized=rail)
    assert b.total_switches <= a.total_switches


@given(gpus, ratios, ratios, st.booleans())
def test_more_oversubscription_never_more_spines(n, o1, o2, rail):
    lo, hi = sorted((o1, o2))
    a = T.size_fabric(n, oversubscription=lo, rail_optimized=rail)
    b = T.size_fabric(n, oversubscription=hi, rail_optimized=rail)
    assert b.spine_switches <= a.spine_switches
    assert b.total_switches <= a.total_switches


@given(gpus, ratios, st.booleans(), st.sampled_from([100.0, 200.0, 400.0]))
def test_bisection_bound_and_consistency(n, o, rail, link):
    f = T.size_fabric(n, oversubscription=o, rail_optimized=rail, link_gbps=link)
    assert 0 < f.bisection_gbps <= f.n_nics * link / 2 + 1e-9
    assert f.per_gpu_bisection_gbps <= link + 1e-9
    assert f.actual_oversubscription <= o + 1e-9
    assert f.cables == f.node_leaf_cables + f.leaf_spine_cables + f.spine_core_cables
    assert f.n_nics <= f.leaf_switches * f.down_ports_per_leaf or f.tiers == 1
    # every switch port used at most once
    r = f.switch_ports
    assert f.leaf_spine_cables <= f.spine_switches * r or f.tiers == 1
    assert f.spine_core_cables <= f.core_switches * r


@given(st.lists(st.integers(min_value=2, max_value=16), min_size=1, max_size=4))
def test_torus_properties(dims):
    t = T.torus(dims)
    assert t.nodes == math.prod(dims)
    assert t.links * 2 == t.nodes * t.degree          # handshake lemma
    assert t.diameter == sum(k // 2 for k in dims)
    assert 0 < t.bisection <= t.links


def test_torus_known_values():
    # Dally & Towles ch.5: 8-ary 3-cube: 512 nodes, diameter 12, bisection 2*k^(n-1) = 128 channels
    t = T.torus((8, 8, 8))
    assert (t.nodes, t.links, t.diameter, t.bisection, t.degree) == (512, 1536, 12, 128, 6)
    assert T.torus((4, 4, 4)).avg_hops == pytest.approx(3.0)   # mean ring distance 1 per dim for k=4
    with pytest.raises(ValueError, match="dims"):
        T.torus(())
    with pytest.raises(ValueError, match=r"dims\[1\]"):
        T.torus((4, 1))


def test_dragonfly_kim_2008():
    # Kim et al. ISCA 2008 §3.1: p=4, a=8, h=4 -> radix 15, 33 groups, 1,056 terminals
    d = T.dragonfly(4, 8, 4)
    assert (d.router_radix, d.groups, d.terminals, d.balanced) == (15, 33, 1056, True)
    with pytest.raises(ValueError, match="groups"):
        T.dragonfly(4, 8, 4, groups=34)


# --- parsers (illustrative samples in the tools' formats) ----------------------------------------
IBSWITCHES = """\
Switch	: 0xfc6a1c0300e9a100 ports 65 "Quantum-2 leaf-r0-su1" enhanced port 0 lid 3 lmc 0
Switch	: 0xfc6a1c0300e9b200 ports 65 "Quantum-2 spine-01" enhanced port 0 lid 7 lmc 0
"""

IBLINKINFO = """\
Switch: 0xfc6a1c0300e9a100 leaf-r0-su1:
           3    1[  ] ==( 4X      106.25 Gbps Active/  LinkUp)==>      11    1[  ] "dgx-001 mlx5_0" ( )
           3    2[  ] ==( 4X      106.25 Gbps Active/  LinkUp)==>      12    1[  ] "dgx-002 mlx5_0" ( )
           3    3[  ] ==(                Down/ Polling)==>             [  ] "" ( )
           3   33[  ] ==( 4X       53.125 Gbps Active/  LinkUp)==>       7    1[  ] "spine-01" ( )
Switch: 0xfc6a1c0300e9b200 spine-01:
           7    1[  ] ==( 4X       53.125 Gbps Active/  LinkUp)==>       3   33[  ] "leaf-r0-su1" ( )
"""


def test_parse_ibswitches():
    sw = T.parse_ibswitches(IBSWITCHES)
    assert [s["physical_ports"] for s in sw] == [64, 64]
    assert sw[1]["lid"] == 7 and sw[0]["description"].endswith("leaf-r0-su1")


def test_parse_iblinkinfo_and_summary():
    links = T.parse_iblinkinfo(IBLINKINFO)
    assert len(links) == 4
    assert links[0]["link_gbps"] == pytest.approx(425.0)
    s = T.summarize_links(links)
    assert (s["switches"], s["switch_links"], s["host_links"]) == (2, 1, 2)
    assert s["degraded_ports"] == ["leaf-r0-su1 port 33", "spine-01 port 1"]   # running at NDR200 speed


@pytest.mark.parametrize("garbage", ["", "hello world", "Switch: nonsense\n 1 2 3", None, "Switch : 0xzz ports"])
def test_parsers_reject_garbage(garbage):
    with pytest.raises(T.ParseError):
        T.parse_ibswitches(garbage)
    with pytest.raises(T.ParseError):
        T.parse_iblinkinfo(garbage)
