import dataclasses

import pytest

from labutil import hardware

REQUIRED_GPUS = ["H100-SXM", "H100-PCIe", "H800-SXM", "H200-SXM", "A100-80G-SXM", "A800-SXM", "B200", "L40S",
                 "L4", "MI300X", "Ascend-910B"]


def test_required_catalog_entries_exist():
    assert set(REQUIRED_GPUS) <= set(hardware.gpus())
    assert {"ConnectX-6-200G", "ConnectX-7-400G", "BlueField-3", "Ethernet-25G", "Ethernet-100G"} <= set(hardware.nics())
    assert {"QM9700"} <= set(hardware.switches())
    assert {"DGX-H100", "DGX-A100", "HGX-H800", "Atlas-800T-A2"} <= set(hardware.servers())


def test_gpu_is_frozen_with_contract_fields():
    g = hardware.gpu("H100-SXM")
    for f in ("name", "bf16_tflops", "fp8_tflops", "tf32_tflops", "fp64_tflops", "hbm_gb", "hbm_gbs",
              "nvlink_gbs", "tdp_w", "source"):
        assert hasattr(g, f)
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.bf16_tflops = 1.0


@pytest.mark.parametrize("kind", ["gpu", "nic", "switch", "server"])
def test_every_entry_has_a_source(kind):
    names = getattr(hardware, kind + ("es" if kind == "switch" else "s"))()
    for n in names:
        entry = getattr(hardware, kind)(n)
        assert len(entry.source) > 20, f"{kind} {n} lacks a source"


def test_datasheet_values():
    # NVIDIA H100 datasheet (SXM): 1,979 TFLOPS BF16 with sparsity -> 989.4 dense; 3.35 TB/s; 900 GB/s NVLink.
    h100 = hardware.gpu("H100-SXM")
    assert (h100.bf16_tflops, h100.hbm_gbs, h100.nvlink_gbs, h100.tdp_w) == (989.4, 3350, 900, 700)
    # H800 = H100 compute with NVLink cut to 400 GB/s (NVIDIA H800 datasheet).
    assert hardware.gpu("H800-SXM").bf16_tflops == h100.bf16_tflops
    assert hardware.gpu("H800-SXM").nvlink_gbs == 400
    # A100 80GB SXM: 312 TFLOPS BF16 dense, 2,039 GB/s (A100 datasheet).
    assert hardware.gpu("A100-80G-SXM").bf16_tflops == 312.0
    assert hardware.gpu("A100-80G-SXM").hbm_gbs == 2039
    # DGX H100 max system power ~10.2 kW (DGX H100 datasheet).
    assert hardware.server("DGX-H100").max_power_w == 10200


def test_conflicting_public_figures_record_range_and_choice():
    a = hardware.gpu("Ascend-910B")
    assert a.published_range and "Chosen" in a.source


def test_aliases_and_case_insensitive():
    assert hardware.gpu("h100").name == "H100-SXM"
    assert hardware.gpu("H200").name == "H200-SXM"
    assert hardware.nic("cx7").name == "ConnectX-7-400G"
    assert hardware.server("dgx h100").gpu_spec.name == "H100-SXM"


def test_unknown_gpu_lists_closest():
    with pytest.raises(KeyError, match="H100-SXM"):
        hardware.gpu("H10O")
    with pytest.raises(KeyError):
        hardware.gpu(100)


def test_unsupported_precision_raises():
    with pytest.raises(ValueError, match="fp8"):
        hardware.gpu("A100-80G-SXM").peak_tflops("fp8")
    assert hardware.gpu("H100-SXM").peak_tflops("fp16") == 989.4


def test_servers_reference_known_parts():
    for n in hardware.servers():
        s = hardware.server(n)
        assert s.gpu_spec and s.nic_spec and s.gpus > 0 and s.max_power_w > s.gpus * s.gpu_spec.tdp_w


def test_gb200_and_h20_per_gpu():
    # GB200 NVL72 datasheet rack totals / 72 (sparse figures / 2): BF16 360 PF -> 2,500 TFLOP/s dense;
    # HBM3e 13.4 TB -> 186 GB; 576 TB/s -> 8,000 GB/s; NVLink 5 130 TB/s -> 1,800 GB/s per GPU
    gb = hardware.gpu("GB200")
    assert (gb.bf16_tflops, gb.fp8_tflops, gb.hbm_gb, gb.hbm_gbs, gb.nvlink_gbs) == (2500.0, 5000.0, 186, 8000, 1800)
    assert "/ 72" in gb.source and gb.published_range
    # H20 (China-market Hopper): 148 BF16 dense, 96 GB HBM3 at 4.0 TB/s, full 900 GB/s NVLink, 400 W
    h20 = hardware.gpu("H20")
    assert (h20.bf16_tflops, h20.hbm_gb, h20.hbm_gbs, h20.nvlink_gbs, h20.tdp_w) == (148.0, 96, 4000, 900, 400)
    assert "no public" in h20.source


def test_b200_hbm_is_per_gpu_in_a_dgx():
    # DGX B200 datasheet: 1,440 GB of HBM3e for 8 GPUs -> 180 GB per GPU as the system exposes it
    b = hardware.gpu("B200")
    assert b.hbm_gb == 180 and "PER GPU" in b.source and "192 GB" in b.source
