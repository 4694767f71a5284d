"""Headless tests of the ch10/ch12 explorers and figure builders: results follow the models."""

import pytest

from labutil import power, topology
from labutil.explore import power as EP
from labutil.explore import topology as ET


def test_fabric_explorer_follows_model():
    ex = ET.fabric_sizing_explorer()
    assert ex.error is None and ex.result == topology.size_fabric(1024)
    ex.set(n_gpus=8192)
    assert (ex.result.tiers, ex.result.leaf_switches, ex.result.core_switches) == (3, 256, 128)
    ex.set(oversubscription=3.0)
    assert ex.result == topology.size_fabric(8192, oversubscription=3.0)
    bars = [p.get_height() for p in ex.figure.axes[1].patches]
    assert bars[0] == ex.result.leaf_switches and bars[3] == ex.result.cables
    ex.set(rail_optimized=False, n_gpus=1024, oversubscription=1.0)
    assert ex.result.rail_peers_one_hop == 4


def test_fabric_explorer_reports_bad_combination():
    ex = ET.fabric_sizing_explorer()
    ex.set(switch="SN4700", n_gpus=65536)        # 32-port switch: too many NICs for 3 tiers
    assert isinstance(ex.error, ValueError) and f"{topology.max_nics(32, 3):,}" in str(ex.error)   # r*(r/2)*d, in Chinese
    ex.set(n_gpus=1024)
    assert ex.error is None and ex.result.switch_ports == 32


def test_draw_fabric_draws_every_nic_link():
    f = topology.size_fabric(16, nics_per_node=4, gpus_per_node=4, switch_ports=8)
    fig = ET.rail_vs_plain_figure()
    drawn = ET.draw_fabric(fig.axes[0], f)
    assert drawn["nodes"] == 4 and drawn["leaves"] == 4 and drawn["spines"] == 2
    assert drawn["lines"] == 16 + 4 * 2          # NIC links + full leaf-spine bipartite
    assert [x.rail_peers_one_hop for x in fig.rail_fabrics] == [4, 1]


@pytest.mark.parametrize("builder", [ET.fabric_scaling_figure, ET.fat_tree_capacity_figure,
                                     ET.torus_vs_fat_tree_figure, EP.power_stack_figure, EP.pue_sweep_figure,
                                     EP.rack_density_figure])
def test_figures_have_data_and_units(builder):
    fig = builder()
    for ax in fig.axes:
        assert ax.get_ylabel() and ax.get_xlabel() or ax.get_xticklabels()
        assert ax.lines or ax.patches


def test_power_explorer_follows_model():
    ex = EP.facility_power_explorer()
    c = ex.result["power"]
    assert c.servers == 128 and c.server_kw == pytest.approx(128 * 10.2)
    assert c.network_kw == pytest.approx(EP.optics_kw(1024))
    ex.set(pue=1.2, rack_kw_limit=41.0)
    c2 = ex.result["power"]
    assert c2.facility_kw == pytest.approx(1.2 * c2.it_kw)
    assert (c2.servers_per_rack, c2.cooling) == (4, "rear-door")
    stack_top = sum(p.get_height() for p in ex.figure.axes[0].patches)
    assert stack_top == pytest.approx(c2.facility_kw / 1e3)
    assert ex.result["annual_cost"] == pytest.approx(power.energy_cost_per_year(c2.facility_kw, 0.60))
    # the control never offers a limit below one DGX H100 (10.2 kW), and its lowest setting works
    assert ex.controls["rack_kw_limit"].min >= power.server_power_kw("DGX-H100")
    ex.set(rack_kw_limit=ex.controls["rack_kw_limit"].min)
    assert ex.error is None and ex.result["power"].servers_per_rack == 1


def test_facility_explorer_refuses_a_rack_below_one_server_with_the_reason():
    ex = EP.facility_power_explorer()
    ex.set(server="DGX-B200", rack_kw_limit=12.0)           # one DGX B200 is 14.3 kW
    assert isinstance(ex.error, ValueError) and "14.3 kW" in str(ex.error) and "15 kW" in str(ex.error)
    ex.set(rack_kw_limit=60.0)
    assert ex.error is None and ex.result["power"].servers_per_rack == 4
    assert EP.COOLING_ZH[ex.result["power"].cooling_actual] in ex._summary.value
    ex.set(n_gpus=8)                                          # one server: kW, not "0.01 MW"
    assert "MW" not in ex._summary.value.split("机房总功耗")[1].split("。")[0]
