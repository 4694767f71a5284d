"""triage() on incident text from public threads: each case names the thread its lines come from
(trimmed; IPs / hosts as pasted or anonymised there) and asserts the layer, the recognised cause
and the next check. Cases marked 'was:' did not reach that verdict before."""

from __future__ import annotations

import pytest

from labutil.troubleshoot import triage

CASES = [
    # (thread, text, layer, root_check, a word of the first next check's command)
    ("https://github.com/NVIDIA/nccl/issues/1405",
     "kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 10.216.210.236<54862> "
     "with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid fd00:1148:9000:5000:4:200:3:ff22 "
     "remoteGidsfd00:1148:9000:5000:4:200:3:ff1f\nkp-ddp-worker-0:3468:3905 [4] NCCL INFO transport/net.cc:1302 -> 6",
     "network", "ib_completion_error", "ibstat"),
    ("https://github.com/NVIDIA/nccl/issues/2013",
     "[2026-03-13 22:26:02] host-01.example.com:XXXXXX [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed with "
     "110 Connection timed out, on dev mlx_x:1, curr state INIT, next state RTR, local GID index 3",
     "network", "ibv_call_failed", "ibstat"),
    ("https://github.com/NVIDIA/nccl-tests/issues/185",
     "dgxh100-3:2152176:2152299 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is "
     "unreachable", "network", "ibv_call_failed", "ibstat"),
    ("https://github.com/NVIDIA/nccl/issues/1129",
     "node08:6561:6591 [0] misc/ibvwrap.cc:280 NCCL WARN Call to ibv_create_qp failed",
     "software", "rdma_memlock", "ulimit -l"),
    # was: no verdict (gpu 0.35 from 'unhandled cuda error' only)
    ("https://github.com/NVIDIA/nccl-tests/issues/264 , https://github.com/hiyouga/LlamaFactory/issues/8968",
     "# Using devices\ntest: Test CUDA failure common.cu:941 'system not yet initialized'\n .. test pid 54340: Test "
     "failure common.cu:891", "gpu", "fabric_manager", "nvidia-fabricmanager"),
    # was: software/nccl_mismatch ('ranks called different collectives'), the wrong cause
    ("https://github.com/NVIDIA/Megatron-LM/issues/661",
     "torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/"
     "ProcessGroupNCCL.cpp:1727, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3\n"
     "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n"
     "Duplicate GPU detected : rank 3 and rank 0 both on CUDA device f000",
     "software", "duplicate_gpu", "LOCAL_RANK"),
    # was: storage/no_space (a full file system) - it is the container's /dev/shm
    ("https://github.com/NVIDIA/nccl/issues/290",
     "gpu2-ru7:2143:2561 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device\n"
     "gpu2-ru7:2143:2561 [1] NCCL INFO include/shm.h:41 -> 2",
     "software", "shm_too_small", "/dev/shm"),
    ("https://github.com/pytorch/ci-infra/pull/490",
     "[2026-04-22 21:34:20] runner-workflow:202016:202235 [0] misc/shmutils.cc:132 NCCL WARN Error while creating shared "
     "memory segment /dev/shm/nccl-WU88OE (size 9637888), error: No space left on device (28)",
     "software", "shm_too_small", "/dev/shm"),
    # was: no recognised line
    ("https://github.com/pytorch/pytorch/issues/107021",
     "[E socket.cpp:860] [c10d] The client socket has timed out after 60s while trying to connect to 192.0.0.1:1234\n"
     "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed.",
     "network", "store_connect_failed", "nc -zv"),
    ("https://github.com/hpcaitech/Open-Sora/issues/667",
     "[W socket.cpp:697] [c10d] The client socket has failed to connect to [::ffff:0.104.99.143]:47389 (errno: 110 - "
     "Connection timed out).", "network", "store_connect_failed", "nc -zv"),
    # was: one 'link down' warning (0.55); three events on one port are a flapping link
    ("https://github.com/leptonai/gpud/pull/1209",
     "Feb 14 05:03:41 gpu-1 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN\n"
     "Feb 14 05:03:44 gpu-1 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE\n"
     "Feb 14 05:05:41 gpu-1 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN",
     "network", "link_flap", "ibstat"),
    ("https://github.com/NVIDIA/NVSentinel/issues/155",
     "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n               NVRM: (PCI ID: 10de:26b5) installed in this "
     "system has\n               NVRM: fallen off the bus and is not responding to commands.",
     "gpu", "fallen_off_bus", "dmesg"),
    ("https://github.com/leptonai/gpud/pull/1174",
     "NVRM: Xid (PCI:0000:9b:00): 94, pid=1234, name=python3, Contained ECC error\n"
     "NVRM: Xid (PCI:0000:9b:00): 63, pid=1234, name=python3, Row Remapper: New row marked for remapping, reset gpu "
     "to activate.", "gpu", "xid", "ROW_REMAPPER"),  # was: the generic dmesg check; memory XIDs -> row-remapper state
    ("https://github.com/NVIDIA/nccl/issues/290 (docker) vs vllm-project/vllm #1710: same fix",
     "RuntimeError: DataLoader worker (pid 1234) is killed by signal: Bus error. It is possible that dataloader's "
     "workers are out of shared memory. Please try to raise your shared memory limit.\n"
     "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
     "software", "shm_too_small", "/dev/shm"),
]


@pytest.mark.parametrize("thread,text,layer,kind,cmd", CASES, ids=[c[0].split("/")[-1][:12] + str(i)
                                                                  for i, c in enumerate(CASES)])
def test_real_incident_reaches_its_cause(thread, text, layer, kind, cmd):
    d = triage(text)
    assert d.first_failing_layer == layer, (thread, d.scores, d.reasons)
    assert d.root_check == kind, (thread, d.root_check)
    confirm = [c for c in d.next_checks if c["purpose"] == "confirm"]
    assert confirm and any(cmd in c["command"] for c in confirm), (thread, d.next_checks)


def test_pfc_pause_storm_from_ethtool_counters():
    """mlx5 `ethtool -S` counters (names of the mlx5 ethtool counter reference; the RoCE threads
    NVIDIA/nccl #306 and #378 trace RoCE stalls to PFC): storm error events are a fabric fault,
    drops alone a warning, clean counters healthy evidence. Was: not recognised."""
    storm = triage("NIC statistics:\n     rx_prio3_pause: 1834221\n     tx_prio3_pause: 92\n"
                   "     tx_pause_storm_warning_events: 14\n     tx_pause_storm_error_events: 2\n     rx_discards_phy: 0\n")
    assert storm.first_failing_layer == "network" and storm.root_check == "pfc_storm"
    assert any("ethtool -S" in c["command"] for c in storm.next_checks)
    drops = triage("     rx_discards_phy: 81234\n     rx_out_of_buffer: 0\n     tx_pause_storm_error_events: 0\n")
    assert drops.first_failing_layer is None and drops.scores["network"] == pytest.approx(0.35)
    clean = triage("     rx_discards_phy: 0\n     tx_pause_storm_warning_events: 0\n     tx_pause_storm_error_events: 0\n")
    assert clean.first_failing_layer is None and any(s.verdict == "pass" for s in clean.signals)


def test_pcie_acs_enabled_points_at_intra_node_p2p():
    """`lspci -vvv` of a PCIe switch with ACS on (the NCCL user guide 'PCI Access Control Services'
    section: ACS redirects P2P through the root complex and hangs or slows NCCL)."""
    d = triage("\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n"
               "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n")
    assert d.first_failing_layer == "gpu" and d.root_check == "pcie_acs"
    assert triage("\t\tACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-\n") \
        .first_failing_layer is None


def test_slurm_node_failure_and_watchdog_points_at_the_node():
    """Slurm kills a job whose node stopped answering; the other ranks' watchdog timeouts are the
    consequence (the layered reading of NVIDIA/Megatron-LM #1207-style timeouts)."""
    d = triage("srun: error: Node failure on gpu-node-12\n"
               "slurmstepd: error: *** JOB 4242 ON gpu-node-11 CANCELLED AT 2024-05-01T10:00:00 DUE TO NODE FAILURE ***\n"
               "[rank0]:[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: "
               "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 "
               "milliseconds before timing out.\n")
    assert d.first_failing_layer == "gpu" and d.root_check == "node_failed"


def test_invalid_device_ordinal_is_a_launch_fault():
    d = triage("RuntimeError: CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously reported "
               "at some other API call, so the stacktrace below might be incorrect.")
    assert d.first_failing_layer == "software" and d.root_check == "invalid_device"


def test_cli_triage_on_a_real_fixture(tmp_path, capsys):
    """`python -m labutil triage FILE` on the non-MPI nccl-tests paste (NVIDIA/nccl-tests #107)."""
    from pathlib import Path

    from labutil.troubleshoot.triage import cli_main

    f = Path(__file__).parent / "fixtures" / "real_nccl_tests_no_mpi_nccltests107.txt"
    assert cli_main(["--json", str(f)]) == 0
    out = capsys.readouterr().out
    assert '"first_failing_layer": "software"' in out and "nccl_tests_no_mpi" in out
