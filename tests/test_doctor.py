"""Tests of ``python -m labutil doctor``: here (no GPU) and with fake tool outputs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from labutil.machine import doctor as D
from labutil.parsers import samples as S

ROOT = Path(__file__).resolve().parent.parent


def fake_runner(calls):
    def run(args, timeout_s=D.TIMEOUT_S):
        calls.append(list(args))
        if args[:2] == ["nvidia-smi", "--query-gpu=index,name,memory.total,driver_version,pci.bus_id"]:
            rows = ["index, name, memory.total [MiB], driver_version, pci.bus_id"]
            rows += [f"{i}, NVIDIA H100 80GB HBM3, 81559 MiB, 550.90.07, 00000000:{i:02X}:00.0" for i in range(8)]
            return 0, "\n".join(rows)
        if args == ["nvidia-smi"]:
            return 0, "| NVIDIA-SMI 550.90.07   Driver Version: 550.90.07   CUDA Version: 12.4 |"
        if args == ["nvidia-smi", "topo", "-m"]:
            return 0, S.sample("nvidia_smi_topo_dgx_h100")
        if args == ["ibstat"]:
            return 0, S.sample("ibstat_ndr")
        return 127, f"{args[0]}: not found"
    return run


def test_no_gpu_machine(tmp_path):
    facts = D.collect(runner=fake_runner([]), which=lambda name: None, sysfs_ib=tmp_path / "none",
                      shm_path=tmp_path, torch_info=lambda: {"installed": False, "error": "ImportError: x"})
    found = D.findings(facts)
    checks = {(f.component, f.check): f.severity for f in found}
    assert checks[("GPU", "nvidia-smi")] == "info" and checks[("RDMA", "devices")] == "info"
    assert checks[("torch", "import")] == "warning"
    assert facts["gpu"]["gpus"] == [] and "labutil doctor" in D.render(facts, found)


def test_fake_dgx_node(tmp_path):
    ib = tmp_path / "ib"
    for n in ("mlx5_0", "mlx5_1", "mlx5_2"):
        (ib / n).mkdir(parents=True)
    mem = tmp_path / "meminfo"
    mem.write_text("MemTotal:       2113929216 kB\n")
    calls = []
    facts = D.collect(runner=fake_runner(calls), which=lambda name: f"/usr/bin/{name}", sysfs_ib=ib,
                      shm_path="/nonexistent", meminfo=mem,
                      torch_info=lambda: {"installed": True, "version": "2.13.0", "cuda_build": "12.8",
                                          "cuda_available": True, "device_count": 8, "nccl_version": "2.27.3"})
    assert all(isinstance(c, list) for c in calls)  # argument lists, never shell strings
    g = facts["gpu"]
    assert len(g["gpus"]) == 8 and g["driver"] == "550.90.07" and g["cuda"] == "12.4"
    assert g["gpu_nic"]["GPU3"] == ["mlx5_3", "PIX"] and g["topology"]["GPU0-GPU1"] == "NV18"
    assert facts["rdma"]["devices"] == ["mlx5_0", "mlx5_1", "mlx5_2"] and len(facts["rdma"]["ports"]) == 3
    assert facts["ram_gb"] == pytest.approx(2164.7, rel=1e-3)
    facts["cpu_cores"], facts["cpu_physical_cores"] = 128, 64  # 8 physical cores per GPU: below seed 003's 16
    found = {(f.component, f.check): f for f in D.findings(facts)}
    assert found[("mlx5_2 port 1", "ib_state")].severity == "critical"
    # the rule counts PHYSICAL cores (128 logical would pass it) and depends on the workload (ch09): info
    cpu = found[("CPU", "cores_per_gpu")]
    assert cpu.severity == "info" and cpu.value == 8.0 and "128 logical" in cpu.message
    assert ("RAM", "ram_per_gpu") not in found  # 2164.7 GB / 8 = 270.6 GB per GPU >= 256
    text = D.render(facts, list(found.values()))
    assert "GPU3->mlx5_3 (PIX)" in text and "FAIL" in text


def test_shm_and_cuda_findings():
    facts = {"gpu": {"nvidia_smi": True, "gpus": [{"index": 0}], "errors": []}, "rdma": {"devices": ["mlx5_0"]},
             "torch": {"installed": True, "version": "2.13.0+cpu", "cuda_build": None, "cuda_available": False},
             "shm_bytes": 64 * 2**20, "cpu_cores": 32, "ram_gb": 512.0}
    found = {(f.component, f.check): f.severity for f in D.findings(facts)}
    assert found == {("/dev/shm", "shm_size"): "warning", ("torch", "cuda"): "critical"}


def test_broken_tool_outputs_do_not_crash(tmp_path):
    def garbage(args, timeout_s=D.TIMEOUT_S):
        return 0, "\x00garbage\nnot a table"
    facts = D.collect(runner=garbage, which=lambda n: "/bin/" + n, sysfs_ib=tmp_path, shm_path=tmp_path,
                      torch_info=None)
    found = D.findings(facts)
    assert any(f.component == "GPU" and f.check == "gpus" for f in found)
    assert any(f.component == "RDMA" and f.check == "ibstat" for f in found)


def test_run_tool_missing_and_args():
    assert D.run_tool(["definitely-not-a-tool-xyz"])[0] == 127
    rc, out = D.run_tool([sys.executable, "-c", "print('hi')"])
    assert rc == 0 and out.strip() == "hi"
    with pytest.raises(ValueError, match="list of strings"):
        D.run_tool("nvidia-smi -L")


def test_cli_here_exits_zero_with_json():
    p = subprocess.run([sys.executable, "-m", "labutil", "doctor", "--json", "--no-torch"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert data["status"] in ("PASS", "WARN", "FAIL") and data["facts"]["cpu_cores"] >= 1
    assert isinstance(data["findings"], list)
    bad = subprocess.run([sys.executable, "-m", "labutil", "nope"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "usage" in bad.stderr


# --- issue 10: topology case, expected busbw, driver vs torch's CUDA ----------------------------
def _facts_with(topo_sample, names, driver="550.90.07", gen="4"):
    def run(args, timeout_s=D.TIMEOUT_S):
        if args[:2] == ["nvidia-smi", "--query-gpu=index,name,memory.total,driver_version,pci.bus_id"]:
            rows = ["index, name, memory.total [MiB], driver_version, pci.bus_id"]
            rows += [f"{i}, {n}, 81559 MiB, {driver}, 00000000:{i:02X}:00.0" for i, n in enumerate(names)]
            return 0, "\n".join(rows)
        if args[:2] == ["nvidia-smi", "--query-gpu=index,pcie.link.gen.max,pcie.link.width.max"]:
            return 0, "index, pcie.link.gen.max, pcie.link.width.max\n" + "\n".join(f"{i}, {gen}, 16" for i in range(len(names)))
        if args == ["nvidia-smi", "topo", "-m"]:
            return 0, S.sample(topo_sample)
        if args == ["ibstat"]:
            return 0, S.sample("ibstat_ndr")
        return 127, "not found"
    return D.collect(runner=run, which=lambda name: f"/usr/bin/{name}", sysfs_ib="/nonexistent", shm_path="/nonexistent",
                     torch_info=lambda: {"installed": True, "version": "2.13.0", "cuda_build": "12.8",
                                         "cuda_available": True, "device_count": len(names), "nccl_version": "2.27.3"})


def test_profile_knows_nvlink_nvls_and_nics():
    from labutil.machine import expect
    from labutil.cluster import Cluster

    facts = _facts_with("nvidia_smi_topo_dgx_h100", ["NVIDIA H100 80GB HBM3"] * 8)
    prof = facts["profile"]
    assert prof["case"] == "nvlink" and prof["nvls"] is True and prof["n_gpus"] == 8 and not prof["pcie_pairs"]
    assert len(prof["nvlink_pairs"]) == 28 and prof["pcie_gen"] == "gen4"
    assert prof["nic_gbps"] == 400.0 and prof["nics_active"] >= 1
    # the expectation IS the cluster model's number for a DGX-H100 node (NVLS 480 GB/s on 8 ranks)
    assert expect.expected_busbw_gbs(prof, "all_reduce") == pytest.approx(
        Cluster.system("DGX-H100").expected_busbw_gbs("all_reduce", ranks=8))
    assert "NVLS): yes" in D.render(facts, D.findings(facts))


def test_profile_pcie_case_and_its_expected_busbw():
    from labutil import links
    from labutil.machine import expect
    from labutil.cluster import Cluster

    facts = _facts_with("nvidia_smi_topo_pcie_4gpu", ["NVIDIA L40S"] * 4)
    prof = facts["profile"]
    assert prof["case"] == "pcie" and prof["nvls"] is False and prof["pcie_pairs"]
    bw = expect.expected_busbw_gbs(prof, "all_reduce")
    ref = Cluster.from_links(nic_gbps=400.0, gpus_per_node=4, scaleup_gbs=links.pcie_gbs("gen4", 16),
                             nics_per_node=prof["nics_active"]).expected_busbw_gbs("all_reduce", ranks=4)
    assert bw == pytest.approx(ref) and 15 < bw < 32  # below the 31.5 GB/s of a Gen4 x16 link
    assert "PCIe case" in prof["summary"]


def test_driver_older_than_torch_cuda_is_reported_with_the_fix():
    facts = _facts_with("nvidia_smi_topo_dgx_h100", ["NVIDIA H100 80GB HBM3"] * 8, driver="550.90.07")
    found = {(x.component, x.check): x for x in D.findings(facts)}
    f = found[("torch", "cuda_driver")]
    # cuda_compat.toml: CUDA 12.8 GA needs 570.26 (Table 3); 550 is above the 12.x floor -> minor compat.
    # The fix names a build that exists for the course's torch (cu126), not cu124 (no torch >= 2.7 build).
    assert f.severity == "warning" and "570.26" in f.message and "make gpu CUDA=cu126" in f.message
    assert "minor-version compatibility" in f.message and "560.28.03" in f.message and "cu124" not in f.message
    assert found[("torch", "wheel_for_driver")].severity == "info" and found[("torch", "wheel_for_driver")].value == "cu126"
    facts = _facts_with("nvidia_smi_topo_dgx_h100", ["NVIDIA H100 80GB HBM3"] * 8, driver="470.57.02")
    found = {(x.component, x.check): x for x in D.findings(facts)}
    assert found[("torch", "cuda_driver")].severity == "critical"
    assert found[("torch", "wheel_for_driver")].severity == "warning" and "upgrade the driver" in \
        found[("torch", "wheel_for_driver")].message
    facts = _facts_with("nvidia_smi_topo_dgx_h100", ["NVIDIA H100 80GB HBM3"] * 8, driver="580.65.06")
    found = {(x.component, x.check): x for x in D.findings(facts)}
    assert ("torch", "cuda_driver") not in found and found[("torch", "wheel_for_driver")].value == "cu130"
    assert D.torch_wheel_for_driver("575.51.03") == "cu129" and D.torch_wheel_for_driver("470.57.02") is None


# Driver floors: NVIDIA CUDA Toolkit Release Notes Table 3 (CUDA 13.0 GA >= 580.65.06, CUDA 12.6 GA
# >= 560.28.03) and Table 2 / "CUDA Compatibility" (12.x minor-version compatibility from 525.60.13,
# 13.x needs >= 580). Wheels: PyTorch RELEASE.md, 2.13 = CUDA 12.6 + 13.0 (+13.2 experimental).
@pytest.mark.parametrize("driver, caps, wheel, support", [
    ("590.48.01", (), "cu130", "full"),
    ("580.65.06", (9.0,), "cu130", "full"),       # exactly the CUDA 13.0 GA driver
    ("580.65.05", (9.0,), "cu126", "full"),       # one below: CUDA 13 cannot start; 12.6 fully supported
    ("575.57.08", (9.0,), "cu126", "full"),       # a CUDA 12.9 driver: no cu128/cu129 build of torch 2.13
    ("570.26", (8.0,), "cu126", "full"),
    ("560.28.03", (), "cu126", "full"),
    ("560.28.02", (), "cu126", "minor-compat"),
    ("535.230.02", (9.0,), "cu126", "minor-compat"),  # the common 535 LTS driver of clusters
    ("525.60.13", (), "cu126", "minor-compat"),
    ("590.48.01", (7.0, 9.0), "cu126", "full"),   # a V100 in the box: CUDA 13 builds no sm_70 kernels
    ("590.48.01", (7.5,), "cu130", "full"),       # T4 (Turing) is still in CUDA 13
])
def test_recommended_torch_wheel_follows_the_nvidia_tables(driver, caps, wheel, support):
    rec = D.recommended_torch_wheel(driver, caps)
    assert rec["wheel"] == wheel and rec["support"] == support and rec["make"] == f"make gpu CUDA={wheel}"
    assert rec["min_driver"] == {"cu130": "580.65.06", "cu126": "560.28.03"}[wheel]


def test_no_course_wheel_below_the_12x_floor():
    assert D.recommended_torch_wheel("525.60.12") is None and D.recommended_torch_wheel("470.57.02") is None
    assert D.recommended_torch_wheel(None) is None and D.recommended_torch_wheel("") is None
    assert D.recommended_torch_wheel("not-a-version") is None
    # a pre-Maxwell GPU (Kepler 3.7) fits no wheel of the course at all
    assert D.recommended_torch_wheel("590.48.01", (3.7,)) is None


def test_readme_driver_table_matches_the_recommendation():
    """README "选择 torch 版本": each row's driver gets the command the table names."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text[text.index("| `nvidia-smi` 显示的驱动 |"):]
    table = table[:table.index("\n\n")]
    rows = [r for r in table.splitlines()[2:] if "make gpu CUDA=" in r]
    assert rows, table
    for r in rows:
        floor = re.search(r"≥ ([\d.]+)|(\d+\.\d+\.\d+) –", r)
        driver = floor.group(1) or floor.group(2)
        wheel = re.search(r"make gpu CUDA=(cu\d+)", r).group(1)
        assert D.recommended_torch_wheel(driver)["wheel"] == wheel, r


def test_compute_capability_and_the_wheel_line_in_the_report(tmp_path):
    def run(args, timeout_s=D.TIMEOUT_S):
        if args[:2] == ["nvidia-smi", "--query-gpu=index,name,memory.total,driver_version,pci.bus_id"]:
            return 0, ("index, name, memory.total [MiB], driver_version, pci.bus_id\n"
                       "0, Tesla V100-SXM2-32GB, 32768 MiB, 580.95.05, 00000000:06:00.0\n"
                       "1, NVIDIA H100 80GB HBM3, 81559 MiB, 580.95.05, 00000000:07:00.0")
        if args == ["nvidia-smi", "--query-gpu=index,compute_cap", "--format=csv"]:
            return 0, "index, compute_cap\n0, 7.0\n1, 9.0"
        return 127, "not found"
    facts = D.collect(runner=run, which=lambda n: f"/usr/bin/{n}", sysfs_ib=tmp_path, shm_path=tmp_path,
                      torch_info=lambda: {"installed": True, "version": "2.13.0+cpu", "cuda_build": None,
                                          "cuda_available": False})
    assert facts["gpu"]["compute_caps"] == [7.0, 9.0]
    found = {(x.component, x.check): x for x in D.findings(facts)}
    # the CPU build of `make test` on a GPU machine: the fix is the build for this driver AND this V100
    assert found[("torch", "cuda")].severity == "critical" and "make gpu CUDA=cu126" in found[("torch", "cuda")].message
    assert found[("torch", "wheel_for_driver")].value == "cu126"
    assert "torch wheel make gpu CUDA=cu126 (full support, CUDA 12.6)" in D.render(facts, list(found.values()))
    # an old driver that does not know the compute_cap field: no caps, no crash
    def old(args, timeout_s=D.TIMEOUT_S):
        if args[:2] == ["nvidia-smi", "--query-gpu=index,compute_cap"]:
            return 2, 'Field "compute_cap" is not a valid field to query.'
        return run(args, timeout_s)
    assert D.collect(runner=old, which=lambda n: "/usr/bin/" + n, sysfs_ib=tmp_path, shm_path=tmp_path,
                     torch_info=None)["gpu"]["compute_caps"] == []


def test_cpu_machine_profile():
    facts = D.collect(runner=lambda a, timeout_s=0: (127, "x"), which=lambda n: None, sysfs_ib="/nonexistent",
                      shm_path="/nonexistent", torch_info=lambda: {"installed": True, "cuda_available": False,
                                                                   "version": "2", "cuda_build": None})
    assert facts["profile"]["case"] == "cpu"


def test_physical_cores_count_hyperthreads_once(tmp_path):
    """Two sockets x 2 cores x 2 threads: 8 logical CPUs, 4 physical cores (sysfs topology)."""
    for cpu in range(8):
        t = tmp_path / f"cpu{cpu}" / "topology"
        t.mkdir(parents=True)
        t.joinpath("physical_package_id").write_text(f"{cpu // 4}\n")
        t.joinpath("core_id").write_text(f"{cpu % 2}\n")  # cpu k and k+2 are siblings of one core
    assert D.physical_cores(range(8), str(tmp_path)) == 4
    assert D.physical_cores([0, 2], str(tmp_path)) == 1          # only the two threads of one core allowed
    assert D.physical_cores([0, 9], str(tmp_path)) is None       # sysfs does not know cpu9: unknown, not a guess
    facts = D.collect(runner=lambda a, timeout_s=None: (127, ""), which=lambda n: None, sysfs_ib=tmp_path / "no",
                      torch_info=None, sysfs_cpu=str(tmp_path))
    assert facts["cpu_cores"] >= 1 and facts["cpu_physical_cores"] in (None, *range(1, 9))
