"""ch19 inventory model: compat table (NVIDIA CUDA Release Notes Table 3), rules on the sample's
clean and drifted nodes, parsers of lspci/dmidecode/ofed_info, rack layout, the explorers."""

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from labutil import health, inventory as I, links, node as nodemodel
from labutil.parsers import ParseError

CLEAN, DRIFTED, DRIFTED4 = "gpu-node-01", "gpu-node-03", "gpu-node-04"


@pytest.fixture(scope="module")
def inv():
    return I.sample_inventory()


def checks_of(findings):
    return {f.check for f in findings}


# --- CUDA Toolkit Release Notes, Table 3 (Linux x86_64 column) -------------------------------
@pytest.mark.parametrize("cuda,driver", [("12.0", "525.60.13"), ("12.0.1", "525.85.12"), ("12.4", "550.54.14"),
                                         ("12.4.1", "550.54.15"), ("12.8", "570.26"), ("12.8.1", "570.124.06"),
                                         ("12.2.2", "535.104.05"), ("11.8", "520.61.05"), ("13.0", "580.65.06")])
def test_table3_minimum_driver(cuda, driver):
    assert I.cuda_min_driver(cuda)["min_driver"] == driver


def test_unlisted_update_uses_newest_listed_row_of_that_minor():
    assert I.cuda_min_driver("12.3.2")["label"] == "CUDA 12.3 Update 1"
    assert I.cuda_min_driver("12.4", platform="windows")["min_driver"] == "551.61"


def test_unknown_cuda_release_raises_keyerror_with_close_names():
    with pytest.raises(KeyError, match="12.7"):
        I.cuda_min_driver("12.7")
    with pytest.raises(ValueError, match="cuda"):
        I.cuda_min_driver("twelve")


def test_driver_status_full_minor_and_unsupported():
    assert I.cuda_driver_status("550.54.15", "12.4.1")["status"] == "ok"
    assert I.cuda_driver_status("550.54.14", "12.4.1")["status"] == "minor-compat"   # >= 525.60.13 (Table 2)
    assert I.cuda_driver_status("520.61.05", "12.0")["status"] == "unsupported"
    assert I.driver_cuda_version("550.54.15") == "12.4"
    assert I.driver_cuda_version("570.124.06") == "12.8"


def test_version_compare():
    assert I.compare_versions("550.54.15", "550.54.14") == 1
    assert I.compare_versions("570.26", "570.124.06") == -1     # numeric, not lexical
    assert I.compare_versions("2.21.5", "2.21.5") == 0
    assert I.parse_version("MLNX_OFED_LINUX-24.01-0.3.3.1") == (24, 1, 0, 3, 3, 1)
    with pytest.raises(ParseError):
        I.parse_version("unknown")


@settings(max_examples=60, deadline=None)
@given(st.tuples(*[st.integers(0, 999)] * 3), st.tuples(*[st.integers(0, 999)] * 3))
def test_compare_is_antisymmetric_and_matches_tuples(a, b):
    sa, sb = ".".join(map(str, a)), ".".join(map(str, b))
    assert I.compare_versions(sa, sb) == -I.compare_versions(sb, sa)
    assert I.compare_versions(sa, sb) == (a > b) - (a < b)


# --- rules: each fires on the drifted node and not on the clean one --------------------------
def test_clean_node_passes(inv):
    rep = I.run_inventory_checks(inv, CLEAN)
    assert rep.findings == [] and rep.status == "PASS"
    assert I.usable_gpus(inv.node(CLEAN)) == 8


def test_fabric_manager_mismatch_is_critical_and_zero_gpus(inv):
    f = I.check_fabric_manager(inv.node(DRIFTED))
    assert [x.severity for x in f] == ["critical"] and f[0].value == "550.54.15" and f[0].expected == "550.54.14"
    assert I.usable_gpus(inv.node(DRIFTED)) == 0
    assert I.check_fabric_manager(inv.node(CLEAN)) == []
    assert I.check_fabric_manager(inv.node(DRIFTED), nvswitch=False) == []    # PCIe servers have no fabric manager


def test_pcie_rule_nic_gen4_loses_37_percent(inv):
    f = {x.component: x for x in I.check_pcie_links(inv.node(DRIFTED))}
    assert set(f) == {"gpu-node-03/NIC3", "gpu-node-03/GPU5"}
    nic = I.link_bandwidth(inv.node(DRIFTED).pcie[11])
    # 400G = 50 GB/s; Gen4 x16 = 16 GT/s x 128/130 x 16 / 8 = 31.5 GB/s -> 37 % lost
    assert nic["trained_gbs"] == pytest.approx(links.pcie_gbs("gen4", 16)) == pytest.approx(31.51, abs=0.01)
    assert nic["loss_fraction"] == pytest.approx(1 - 31.5077 / 50, rel=1e-3)
    assert f["gpu-node-03/GPU5"].severity == f["gpu-node-03/NIC3"].severity == "critical"
    assert I.check_pcie_links(inv.node(CLEAN)) == []


def test_pcie_rule_no_loss_is_info():
    d = I.PcieDevice("NIC0", "nic", "17:00.0", 5, 16, 4, 16, rate_gbps=200.0)     # 200G fits in Gen4 x16
    f = I.check_pcie_links(I.Node("n", {"driver": "550.54.15", "cuda": "12.4"}, {}, (d,)))
    assert [x.severity for x in f] == ["info"]
    assert I.link_bandwidth(d)["lost_gbs"] == 0.0


def test_bios_rules(inv):
    f = {x.check: x for x in I.check_bios(inv.node(DRIFTED), inv.baseline_bios)}
    # review 2026-12-03 N8: SXM GPUs already expose a full-size BAR1; ReBAR off is a baseline deviation (info),
    # Above-4G / MMIO-high is the setting that breaks HGX boards (critical)
    assert f["bios.acs"].severity == "critical" and f["bios.resizable_bar"].severity == "info"
    assert "SXM" in f["bios.resizable_bar"].message and I.BIOS_RULES["above_4g_decoding"][0] == "critical"
    assert I.check_bios(inv.node(DRIFTED4), inv.baseline_bios)[0].check == "bios.iommu"
    assert I.check_bios(inv.node(CLEAN), inv.baseline_bios) == []
    pt = I.Node("n", {"driver": "1", "cuda": "12.4"}, {**inv.baseline_bios, "iommu": "passthrough"})
    assert I.check_bios(pt, inv.baseline_bios) == []


def test_cuda_rule_fires_on_node4(inv):
    f = I.check_cuda_driver(inv.node(DRIFTED4))
    assert f[0].severity == "warning" and f[0].expected == ">= 570.26"
    assert I.check_cuda_driver(inv.node(CLEAN)) == []


def test_drift_rule(inv):
    d = I.check_drift(inv)
    got = {(x.component, x.check) for x in d}
    assert got == {(DRIFTED, "drift.driver"), (DRIFTED, "drift.bios_version"), (DRIFTED4, "drift.cuda"),
                   (DRIFTED4, "drift.ofed"), (DRIFTED4, "drift.nccl")}
    assert all(x.severity == "warning" for x in d)


def test_full_report_counts(inv):
    rep = I.run_inventory_checks(inv)
    assert isinstance(rep, health.Report) and rep.status == "FAIL"
    assert (rep.count("critical"), rep.count("warning")) == (4, 8)  # ReBAR off is info (review N8)


@pytest.mark.parametrize("kind,check", [("fm_mismatch", "fabric_manager"), ("nic_gen4", "pcie_link"),
                                        ("gpu_x8", "pcie_link"), ("acs_enabled", "bios.acs"),
                                        ("rebar_off", "bios.resizable_bar"), ("old_driver", "cuda_driver"),
                                        ("bios_gen4", "bios.pcie_max_speed")])
def test_injected_drift_fires_its_rule(inv, kind, check):
    rep = I.run_inventory_checks(I.inject_drift(inv, CLEAN, kind), CLEAN)
    assert check in {f.check for f in rep.findings}


def test_bios_gen4_caps_every_nic():
    inv2 = I.inject_drift(I.sample_inventory(), CLEAN, "bios_gen4")
    lost = sum(r["lost_gbs"] for r in I.node_links(inv2.node(CLEAN)) if r["kind"] == "nic")
    assert lost == pytest.approx(8 * (50 - links.pcie_gbs("gen4", 16)))


# --- parsing errors ---------------------------------------------------------------------------
@pytest.mark.parametrize("text,match", [
    ("", "empty"), ("this is [not toml", "TOML"), ("[cluster]\nserver='DGX-H100'\n", "no \\[\\[node\\]\\]"),
    ("[cluster]\nserver='DGX-H9000'\n[[node]]\nhostname='a'\ndriver='1'\ncuda='12.4'\n", "DGX-H9000"),
    ("[cluster]\nserver='DGX-H100'\n[[node]]\nhostname='a'\ncuda='12.4'\n", "driver"),
    ("[cluster]\nserver='DGX-H100'\n[[node]]\nhostname='a'\ndriver=550\ncuda='12.4'\n", "driver"),
    ("[cluster]\nserver='DGX-H100'\n[[node]]\nhostname='a'\ndriver='550.54.15'\ncuda='12.4'\n"
     "pcie=[{name='NIC0', kind='nic', cap_gen=5, cap_width=16, sta_gen=5, sta_width=16}]\n", "rate_gbps"),
    ("[cluster]\nserver='DGX-H100'\n[[node]]\nhostname='a'\ndriver='550.54.15'\ncuda='12.4'\n"
     "pcie=[{name='GPU0', kind='gpu', cap_gen=9, cap_width=16, sta_gen=5, sta_width=16}]\n", "cap_gen"),
    ("[cluster]\nserver='DGX-H100'\n[[node]]\nhostname='a'\ndriver='x'\ncuda='12.4'\n", "no number"),
])
def test_bad_inventory_raises_one_clear_error(text, match):
    with pytest.raises(I.InventoryParseError, match=match):
        I.parse_inventory(text)


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=300))
def test_parsers_never_crash_on_garbage(text):
    for fn in (I.parse_inventory, I.parse_lspci_links, I.parse_dmidecode_bios, I.parse_ofed_info):
        try:
            fn(text)
        except ParseError:
            pass


def test_unknown_node_and_drift_kind(inv):
    with pytest.raises(KeyError, match="gpu-node-01"):
        inv.node("gpu-node-1")
    with pytest.raises(ValueError, match="kind"):
        I.inject_drift(inv, CLEAN, "cosmic_ray")


# --- tool samples -----------------------------------------------------------------------------
def test_lspci_sample():
    devs = {d["bdf"]: d for d in I.parse_lspci_links(I.tool_sample("lspci_vvv"))}
    assert devs["5c:00.0"]["sta_gen"] == 4 and devs["5c:00.0"]["downtrained"]
    assert (devs["ab:00.0"]["sta_gen"], devs["ab:00.0"]["sta_width"]) == (5, 8)
    assert devs["5b:00.0"]["acs_redirect"] is True and devs["ba:00.0"]["downtrained"] is False


def test_dmidecode_and_ofed_samples(inv):
    assert I.parse_dmidecode_bios(I.tool_sample("dmidecode_bios"))["version"] == inv.node(DRIFTED).versions["bios_version"]
    assert I.parse_ofed_info(I.tool_sample("ofed_info")) == inv.node(DRIFTED4).versions["ofed"]


# --- racks (power.cluster_power's formula; DGX H100 10.2 kW, 8U; 42U with 2U reserved) ---------
@pytest.mark.parametrize("kw,n,by", [(12, 1, "power"), (30, 2, "power"), (40, 3, "power"), (41, 4, "power"),
                                     (80, 5, "space")])
def test_rack_layout_servers(kw, n, by):
    lay = I.rack_layout("DGX-H100", kw)
    assert lay["servers"] == n and lay["limit_by"] == by and lay["gpus"] == 8 * n
    units = sorted(u for it in lay["items"] for u in range(it.u_bottom, it.u_bottom + it.height_u))
    assert units == list(range(1, 43))                        # every U accounted for exactly once
    assert lay["feeds"]["feed_rating_kw"] == pytest.approx(lay["rack_kw"] / 0.8)


def test_rack_layout_rejects_budget_below_one_server():
    with pytest.raises(ValueError, match="rack_kw_limit"):
        I.rack_layout("DGX-H100", 5.0)


# --- explorers ---------------------------------------------------------------------------------
def test_inventory_explorer_updates_bars():
    from labutil.explore import inventory as E
    ex = E.inventory_explorer()
    assert ex.result["report"].status == "PASS"
    bars = ex.figure._inv_artists["trained"]
    ex.set(drift="nic_gen4")
    assert ex.result["report"].status == "FAIL" and ex.error is None
    assert bars[8].get_height() == pytest.approx(nodemodel.nic_slot(400, 4)["delivered_gbs"])
    ex.set(hostname=DRIFTED, drift="none")
    assert ex.result["usable_gpus"] == 0


def test_rack_explorer_moves_servers():
    from labutil.explore import inventory as E
    ex = E.rack_explorer()
    assert ex.result["servers"] == 4
    ex.set(rack_kw_limit=21.0)
    assert ex.result["servers"] == 2
    assert sum(r.get_visible() for r in ex.figure._rack_artists["rects"]) == len(ex.result["items"])
    ex.set(rack_kw_limit=12.0, server="DGX-A100")
    assert ex.result["servers"] == 1


def test_rack_never_exceeds_its_budget():
    for kw in (10.35, 20.45, 40.85, 41.0, 55.0):
        lay = I.rack_layout("DGX-H100", kw)
        assert lay["rack_kw"] <= kw + 1e-9
    assert I.rack_layout("DGX-H100", 40.85)["servers"] == 3
    with pytest.raises(ValueError, match="rack_kw_limit"):
        I.rack_layout("DGX-H100", 10.25)    # one server (10.2 kW) + the 0.1 kW management switch do not fit


def test_bar1_and_mmio_high():
    assert I.bar1_bytes(80e9) == 128 * 2**30 and I.bar1_bytes(2**30) == 2**30 and I.bar1_bytes(141e9) == 256 * 2**30
    assert I.mmio_high_bytes(8, 80e9) == 2**40
    with pytest.raises(ValueError):
        I.bar1_bytes(0)


def test_nvidia_smi_pci_of_the_sample_node_shows_full_bar1_without_rebar():
    """ch19 §6: gpu-node-03 has ReBAR disabled, yet every H100 exposes a 128 GiB BAR1 (= bar1_bytes(80 GB));
    GPU5 (AB:00.0) runs at x8, the same downtrained link lspci shows. Layout and BAR1 size as in a public
    8x H100 80GB HBM3 `nvidia-smi -q` (thamada/nvidia-smi nvsim/H100SXMx8_smi.py: BAR1 Total 131072 MiB)."""
    gpus = I.parse_nvidia_smi_pci(I.tool_sample("nvidia_smi_q_pci"))
    assert len(gpus) == 8
    assert {g["bar1_total_mib"] * 2**20 for g in gpus} == {I.bar1_bytes(80e9)}
    assert I.sample_inventory().node("gpu-node-03").bios["resizable_bar"] == "disabled"
    narrow = [g["bus_id"] for g in gpus if g["width_cur"] < g["width_max"]]
    assert narrow == ["00000000:AB:00.0"]
    from labutil.parsers import parse_lspci_links
    lspci = {d["bdf"]: d for d in parse_lspci_links(I.tool_sample("lspci_vvv"))}
    assert lspci["ab:00.0"]["sta_width"] == 8


@pytest.mark.parametrize("bad", ["", "GPU 00000000:18:00.0\n    Product Name : H100\n", 42,
                                 "no gpu block here"])
def test_nvidia_smi_pci_rejects_text_without_the_fields(bad):
    with pytest.raises(I.InventoryParseError):
        I.parse_nvidia_smi_pci(bad)
