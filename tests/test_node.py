"""labutil.node (ch09): per-GPU ratios, NIC slot, GPUDirect RDMA data path, NUMA affinity plan."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labutil import node
from labutil.explore import node as en
from labutil.parsers import parse_nvidia_smi_topo, samples


def test_server_ratios_catalog_numbers():
    # DGX H100 datasheet: 112 cores, 2 TB, 8 GPUs -> 14 cores and 256 GB per GPU (seed 003 rule: 16 / 256)
    r = node.server_ratios("DGX-H100")
    assert r["cores_per_gpu"] == 14 and r["ram_gb_per_gpu"] == 256
    assert not r["meets_core_rule"] and r["meets_ram_rule"]
    assert r["nvlink_dir_gbs"] == 450 and r["nic_gbps_per_gpu"] == 400 and r["nic_pcie"] == "Gen5 x16"
    a = node.server_ratios("DGX-A100")   # 128 cores / 8 = 16: exactly the rule
    assert a["cores_per_gpu"] == 16 and a["meets_core_rule"]
    assert node.server_ratios("HGX-H800")["nvlink_dir_gbs"] == 200
    assert len(node.server_table()) >= 4
    with pytest.raises(KeyError):
        node.server_ratios("DGX-H1OO")


def test_nic_slot_gen4_vs_gen5():
    # PCIe 4.0 x16 = 16 GT/s x 16 x 128/130 / 8 = 31.5 GB/s < 50 GB/s of a 400G NIC
    g4 = node.nic_slot(400, 4)
    assert g4["slot_gbs"] == pytest.approx(31.51, abs=0.01)
    assert g4["fraction"] == pytest.approx(0.630, abs=0.001)
    assert node.nic_slot(400, 5)["fraction"] == 1.0
    # an 800G NIC needs more than Gen5 x16 (63.0 GB/s)
    assert node.nic_slot(800, 5)["delivered_gbs"] == pytest.approx(63.02, abs=0.01)
    arr = node.nic_slot(np.array([100, 200, 400, 800]), 5)
    assert arr["delivered_gbs"].shape == (4,)
    for bad in (0, -400, float("nan")):
        with pytest.raises(ValueError):
            node.nic_slot(bad, 5)
    with pytest.raises(ValueError):
        node.nic_slot(400, 7)


def test_gdr_rule_follows_nccl_default():
    assert node.gdr_enabled("PIX") and node.gdr_enabled("PXB")
    assert not node.gdr_enabled("PHB") and not node.gdr_enabled("NODE") and not node.gdr_enabled("SYS")
    assert node.gdr_enabled("SYS", gdr_level="SYS")
    with pytest.raises(ValueError):
        node.gdr_enabled("NV18")


def test_gpu_nic_path_bounce_halves_uplink():
    direct = node.gpu_nic_path(400, link="PIX", gdr=True)
    assert direct["gdr"] and direct["rate_gbs"] == 50.0 and direct["host_dram_gbs"] == 0.0
    staged = node.gpu_nic_path(400, link="PIX", gdr=False)
    # both directions at once: the Gen5 x16 uplink (63.0 GB/s) carries every byte twice -> 31.5 GB/s
    assert staged["rate_gbs"] == pytest.approx(63.015 / 2, rel=1e-3)
    assert staged["bottleneck"] == "host bounce (uplink)"
    assert staged["host_dram_gbs"] == pytest.approx(4 * staged["rate_gbs"])
    # SYS path: NCCL would not use GDR even when asked
    assert not node.gpu_nic_path(400, link="SYS", gdr=True)["gdr"]
    one_way = node.gpu_nic_path(400, gdr=False, bidirectional=False)
    assert one_way["rate_gbs"] == 50.0 and one_way["host_dram_gbs"] == 100.0
    assert node.gpu_nic_path(400, nic_pcie_gen=4)["bottleneck"] == "NIC PCIe slot"


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([25, 100, 200, 400, 800]), st.integers(3, 6), st.integers(3, 6), st.integers(3, 6),
       st.sampled_from(node.LINK_CODES), st.booleans(), st.booleans())
def test_gpu_nic_path_properties(r, g1, g2, g3, link, gdr, bidir):
    res = node.gpu_nic_path(r, nic_pcie_gen=g1, gpu_pcie_gen=g2, uplink_pcie_gen=g3, link=link, gdr=gdr,
                            bidirectional=bidir)
    assert 0 < res["rate_gbs"] <= r / 8 + 1e-9
    assert res["rate_gbs"] == pytest.approx(min(res["stages_gbs"].values()))
    assert math.isfinite(res["host_dram_gbs"]) and res["host_dram_gbs"] >= 0
    # GPUDirect RDMA never makes the path slower
    on = node.gpu_nic_path(r, nic_pcie_gen=g1, gpu_pcie_gen=g2, uplink_pcie_gen=g3, link="PIX", gdr=True,
                           bidirectional=bidir)
    assert on["rate_gbs"] >= res["rate_gbs"] - 1e-12


def test_parse_cpu_list():
    assert len(node.parse_cpu_list("0-55,112-167")) == 112
    assert node.parse_cpu_list("3") == [3]
    for bad in ("", "N/A", "5-2", "0-a", None, "1,,2"):
        with pytest.raises(ValueError):
            node.parse_cpu_list(bad)


def test_affinity_plan_from_topo_samples():
    dgx = node.affinity_plan(parse_nvidia_smi_topo(samples.sample("nvidia_smi_topo_dgx_h100")))
    assert [r["nic"] for r in dgx] == [f"mlx5_{i}" for i in range(8)]
    assert all(r["link"] == "PIX" and r["gdr"] and r["advice"] == "ok" for r in dgx)
    assert [r["numa"] for r in dgx] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert dgx[4]["n_cpus"] == 112
    pcie = node.affinity_plan(parse_nvidia_smi_topo(samples.sample("nvidia_smi_topo_pcie_4gpu")))
    assert [r["gdr"] for r in pcie] == [True, True, False, False]
    assert all(r["shared_nic"] == 4 for r in pcie)
    assert "SYS" in pcie[2]["advice"]


def test_real_dgx_h100_topo_pxb_12_nics_non_sequential():
    # a public DGX H100/H200 paste (samples_public.toml; same mapping in bytedance/flux#14): PXB, 12 ConnectX
    # ports (8 compute + 2 dual-port storage / in-band cards), GPU1 -> mlx5_3 ... GPU5 -> mlx5_9
    t = parse_nvidia_smi_topo(samples.sample("nvidia_smi_topo_dgx_h100_public"))
    assert len(t.gpus) == 8 and len(t.nics) == 12
    plan = node.affinity_plan(t)
    assert [r["nic"] for r in plan] == ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
    assert all(r["link"] == "PXB" and r["gdr"] and r["advice"] == "ok" for r in plan)  # PXB <= NCCL's default
    assert [r["numa"] for r in plan] == [0, 0, 0, 0, 1, 1, 1, 1]
    roles = {r["nic"]: r for r in node.nic_roles(t)}
    others = sorted(n for n, r in roles.items() if r["gpu"] is None)
    assert others == ["mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8"]
    assert roles["mlx5_1"]["pix_partners"] == ["mlx5_2"] and roles["mlx5_8"]["pix_partners"] == ["mlx5_7"]
    assert node.nccl_ib_hca(t) == "mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11"
    assert len(node.sequential_mapping_mismatches(t)) == 7
    # assuming GPU i -> mlx5_i sends GPU4's traffic across the socket
    assert t.link("GPU4", "NIC4") == "SYS"
    # the illustrative HGX sample is sequential
    hgx = parse_nvidia_smi_topo(samples.sample("nvidia_smi_topo_dgx_h100"))
    assert node.sequential_mapping_mismatches(hgx) == [] and node.nccl_ib_hca(hgx).count(",") == 7


def test_numactl_command_is_an_argument_list():
    assert node.numactl_command(1, ["python", "train.py"]) == ["numactl", "--cpunodebind=1", "--membind=1",
                                                               "python", "train.py"]
    with pytest.raises(ValueError):
        node.numactl_command(-1, ["x"])
    with pytest.raises(ValueError):
        node.numactl_command(0, "python train.py")


def test_offload_host_ram():
    # ZeRO-Offload: 12 B (fp32 master + Adam m, v) + 2 B gradients per parameter
    assert node.offload_host_ram_gb(70e9) == pytest.approx(980.0)
    assert node.offload_host_ram_gb(np.array([7e9, 70e9])).shape == (2,)
    with pytest.raises(ValueError):
        node.offload_host_ram_gb(0)


def test_explorer_headless_updates_follow_model():
    ex = en.gpu_nic_path_explorer()
    assert ex.result["rate_gbs"] == 50.0
    ex.set(gdr=False)
    assert ex.result["rate_gbs"] == pytest.approx(31.51, abs=0.01)
    assert ex.figure.axes[0].patches[3].get_width() == pytest.approx(31.51, abs=0.01)
    ex.set(gdr=True, nic_pcie_gen=4)
    assert ex.result["bottleneck"] == "NIC PCIe slot"
    assert ex.figure.axes[0].patches[1].get_width() == pytest.approx(31.51, abs=0.01)


def test_figures_have_data_and_units():
    for fig in (en.server_ratio_figure(), en.interconnect_figure(), en.cores_needed_figure()):
        for ax in fig.axes:
            assert ax.patches or ax.lines
        labels = " ".join(ax.get_xlabel() + ax.get_ylabel() for ax in fig.axes)
        assert "(" in labels
