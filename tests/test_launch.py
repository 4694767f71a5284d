"""labutil.machine.launch: torchrun / srun / sbatch argument lists, free port, guarded runner."""

import json
import socket
import sys
import signal

import pytest
from hypothesis import given, strategies as st

from labutil.machine import launch


def test_torchrun_args_single_node_uses_free_loopback_port():
    args = launch.torchrun_args("labutil.bench.collectives", ["--op", "all_reduce", "-b", "8"], nproc_per_node=2)
    assert args[:3] == [sys.executable, "-m", "torch.distributed.run"]
    assert "--nnodes=1" in args and "--nproc-per-node=2" in args and "--rdzv-backend=c10d" in args
    ep = [a for a in args if a.startswith("--rdzv-endpoint=")][0].split("=", 1)[1]
    host, port = ep.rsplit(":", 1)
    assert host == "127.0.0.1" and 1 <= int(port) <= 65535
    # the module and its arguments come last, untouched and in order
    i = args.index("-m", 3)
    assert args[i:] == ["-m", "labutil.bench.collectives", "--op", "all_reduce", "-b", "8"]


def test_torchrun_args_multi_node_needs_endpoint_and_uses_torchrun():
    with pytest.raises(ValueError, match="rdzv_endpoint is required"):
        launch.torchrun_args("m.x", nnodes=2)
    args = launch.torchrun_args("labutil.bench.ddp", nnodes=4, nproc_per_node=8, rdzv_endpoint="$MASTER_ADDR:29500",
                                rdzv_id="job42", launcher="torchrun")
    assert args[:3] == ["torchrun", "--nnodes=4", "--nproc-per-node=8"]
    assert "--rdzv-endpoint=$MASTER_ADDR:29500" in args and "--rdzv-id=job42" in args


@pytest.mark.parametrize("kwargs, match", [
    ({"nproc_per_node": 0}, "nproc_per_node"),
    ({"nnodes": 0}, "nnodes"),
    ({"rdzv_endpoint": "nohostport"}, "host:port"),
    ({"rdzv_endpoint": "node1:70000"}, "port"),
    ({"rdzv_id": "a b"}, "rdzv_id"),
    ({"launcher": "mpirun"}, "launcher"),
])
def test_torchrun_args_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        launch.torchrun_args("labutil.bench.collectives", **kwargs)


def test_torchrun_args_rejects_shell_string_module():
    with pytest.raises(ValueError, match="module"):
        launch.torchrun_args("labutil.bench.collectives; rm -rf /")


@given(st.lists(st.text(min_size=0, max_size=20), max_size=6))
def test_module_args_pass_through_verbatim(module_args):
    """Whatever the arguments contain (spaces, ';', quotes), each stays one list element."""
    args = launch.torchrun_args("labutil.bench.collectives", module_args, rdzv_endpoint="127.0.0.1:29500")
    assert args[-len(module_args):] == module_args if module_args else args[-1] == "labutil.bench.collectives"


def test_srun_one_task_per_node_wraps_torchrun():
    inner = launch.torchrun_args("labutil.bench.collectives", ["--op", "all_reduce"], nnodes=2, nproc_per_node=4,
                                 rdzv_endpoint="$MASTER_ADDR:29500", launcher="torchrun")
    args = launch.srun_args(inner, nodes=2, gpus_per_node=4, cpus_per_task=32)
    assert args[:4] == ["srun", "--nodes=2", "--ntasks-per-node=1", "--ntasks=2"]
    assert "--gpus-per-node=4" in args and "--cpus-per-task=32" in args
    assert args[-len(inner):] == inner
    with pytest.raises(ValueError, match="nodes"):
        launch.srun_args(inner, nodes=0)


def test_sbatch_args_overrides_and_script_last(tmp_path):
    script = tmp_path / "nccl.sbatch"
    args = launch.sbatch_args(script, nodes=2, gpus_per_node=8, partition="gpu", time_limit="00:20:00",
                              export={"NCCL_DEBUG": "INFO"})
    assert args[0] == "sbatch" and args[-1] == str(script)
    assert "--nodes=2" in args and "--gpus-per-node=8" in args and "--partition=gpu" in args
    assert "--export=ALL,NCCL_DEBUG=INFO" in args
    with pytest.raises(ValueError, match="time_limit"):
        launch.sbatch_args(script, nodes=1, gpus_per_node=1, time_limit="soon")
    with pytest.raises(ValueError, match="export"):
        launch.sbatch_args(script, nodes=1, gpus_per_node=1, export={"A": "x,y"})


def test_sbatch_templates_use_the_documented_launch_pattern():
    """Every template runs srun with one task per node and torchrun with c10d rendezvous."""
    templates = sorted((launch.REPO_ROOT / "labs" / "slurm").glob("*.sbatch"))
    assert len(templates) >= 2
    for t in templates:
        text = t.read_text(encoding="utf-8")
        assert text.startswith("#!/bin/bash")
        assert "--ntasks-per-node=1" in text and "srun" in text
        assert "--rdzv-backend=c10d" in text and "--rdzv-endpoint=" in text and "$MASTER_ADDR" in text
        assert "-m labutil.bench." in text


def test_free_port_is_bindable():
    port = launch.free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_run_captures_output_and_kills_on_timeout():
    ok = launch.run([sys.executable, "-c", "print('hello')"], timeout_s=30)
    assert ok.ok and ok.stdout.strip() == "hello"
    # the child would sleep 600 s: it is killed (SIGTERM to its group) at the 1 s timeout, not waited for
    slow = launch.run([sys.executable, "-c", "import time; time.sleep(600)"], timeout_s=1.0)
    assert slow.timed_out and not slow.ok and slow.returncode == -signal.SIGTERM
    with pytest.raises(RuntimeError, match="timed out"):
        slow.json
    with pytest.raises(ValueError, match="list of strings"):
        launch.run("echo hi", timeout_s=5)


def test_load_json_errors_are_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        launch.load_json(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        launch.load_json(bad)
    arr = tmp_path / "arr.json"
    arr.write_text("[1, 2]")
    with pytest.raises(ValueError, match="JSON object"):
        launch.load_json(arr)
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"a": 1}))
    assert launch.load_json(good) == {"a": 1}


def test_cpu_env_sets_loopback_and_repo_on_path():
    env = launch.cpu_env({"PATH": "/usr/bin"})
    assert env["MASTER_ADDR"] == "127.0.0.1" and env["GLOO_SOCKET_IFNAME"] == "lo"
    assert str(launch.REPO_ROOT) in env["PYTHONPATH"].split(":")


def test_gpu_check_script_is_valid_bash_and_refuses_without_gpu(tmp_path):
    """The prepared GPU script parses, and on a machine without CUDA it stops with a clear message."""
    import shutil
    import subprocess

    script = launch.REPO_ROOT / "benchmarks" / "gpu" / "run_gpu_checks.sh"
    bash = shutil.which("bash")
    assert subprocess.run([bash, "-n", str(script)], capture_output=True).returncode == 0
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: the refusal path does not apply")
    env = launch.cpu_env()
    env["PYTHON"] = sys.executable
    env.pop("ALLOW_CPU", None)
    res = subprocess.run([bash, str(script), str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 2 and "no CUDA GPU" in res.stderr


def test_lab03_prints_the_nccl_proto_warning_before_forcing_a_protocol(monkeypatch, capsys):
    from labutil.machine import run as labs

    calls = []

    def fake_run(**kw):
        calls.append(kw["env"])
        print("RUN", sorted(kw["env"]))
        return {"rows": [], "env": kw["env"]}

    monkeypatch.setattr(labs, "run_collectives", fake_run)
    labs.run_env_experiments(["default", "NCCL_PROTO=LL128"])
    out = capsys.readouterr().out
    assert out.index("DATA CORRUPTION") < out.index("RUN ['NCCL_PROTO']")
    assert out.count("WARNING (NCCL docs, NCCL_PROTO)") == 1 and len(calls) == 2
    labs.run_env_experiments(["default", "NCCL_P2P_DISABLE=1"])  # no protocol forced: no warning
    assert "DATA CORRUPTION" not in capsys.readouterr().out


def test_expectation_compares_with_this_machines_model():
    from labutil.machine import expect
    from labutil.machine import run as labs

    res = {"op": "all_reduce", "world_size": 8, "backend": "nccl",
           "rows": [{"out_of_place": {"busbw_gbs": 100.0}}, {"out_of_place": {"busbw_gbs": 432.0}}]}
    prof = {"case": "nvlink", "n_gpus": 8, "catalog_gpu": "H100-SXM", "nvls": True, "summary": "x",
            "nics_active": 0, "nic_gbps": None}
    e = labs.expectation(res, prof)
    assert e["measured_gbs"] == 432.0 and e["expected_gbs"] == pytest.approx(480.0) and e["ratio"] == pytest.approx(0.9)
    e = labs.expectation({**res, "backend": "gloo"}, {"case": "cpu", "summary": "cpu"})
    assert e["expected_gbs"] is None and "CPU path" in e["why"]
    # two nodes of the same machine: the per-rail bound of the cluster model
    e = labs.expectation({**res, "world_size": 16}, {**prof, "nics_active": 8, "nic_gbps": 400.0})
    assert e["expected_gbs"] == pytest.approx(expect.expected_busbw_gbs({**prof, "nics_active": 8, "nic_gbps": 400.0},
                                                                        "all_reduce", ranks=16, n_nodes=2))


def test_rendezvous_race_is_recognised_and_nothing_else():
    from labutil.machine import launch

    assert launch._rendezvous_race("torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The "
                                   "connection to the C10d store has failed.")
    assert launch._rendezvous_race("RuntimeError: The server socket has failed to listen on any local network "
                                   "address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE")
    assert not launch._rendezvous_race("ValueError: --op must be one of all_reduce, ...")
    assert not launch._rendezvous_race("")


def test_submit_cli_passes_partition_time_and_cpus(capsys):
    """`python -m labutil.machine.launch --submit ...`: a real cluster needs -p (and often -c, -t)."""
    rc = launch.main(["--submit", "ddp_scaling", "--nodes", "2", "--gpus-per-node", "4", "--partition", "gpu",
                      "--time", "01:00:00", "--cpus-per-task", "16", "--print-only"])
    cmd = capsys.readouterr().out.split()
    assert rc == 0 and cmd[0] == "sbatch" and cmd[-1].endswith("labs/slurm/ddp_scaling.sbatch")
    for opt in ("--nodes=2", "--gpus-per-node=4", "--partition=gpu", "--time=01:00:00", "--cpus-per-task=16",
                "--ntasks-per-node=1", "--job-name=ddp-scaling"):
        assert opt in cmd
    with pytest.raises(SystemExit) as e:
        launch.main(["--submit", "ddp_scaling", "--time", "soon", "--print-only"])
    assert e.value.code == 2 and "time_limit" in capsys.readouterr().err
