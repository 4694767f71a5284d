"""Tests of labutil.containers (ch20): linter, GPU Operator order, pull arithmetic, parsers, explorers."""

import shlex

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labutil import containers as C
from labutil.explore import containers as E

GOOD = ("docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 --network=host "
        "--device=/dev/infiniband nvcr.io/nvidia/pytorch:24.05-py3 torchrun train.py")


def lint(cmd, **kw):
    return C.lint_command(shlex.split(cmd), **kw)


def test_full_multinode_docker_passes():
    r = lint(GOOD, host_driver="550.54.15", image_cuda="12.4.1")
    assert r.status == "PASS" and r.count("warning") == 0


def test_gpus_only_misses_shm_memlock_rdma_network():
    r = lint("docker run --gpus all -it --rm nvcr.io/nvidia/pytorch:24.05-py3 python t.py")
    st_ = C.check_status(r)
    assert st_["gpu_access"] == "pass"
    assert {k for k, v in st_.items() if v == "critical"} == {"shm_size", "memlock", "rdma_devices", "network"}
    # single node: only /dev/shm matters
    r1 = lint("docker run --gpus all nvcr.io/nvidia/pytorch:24.05-py3", multi_node=False, rdma=False)
    assert [f.check for f in r1.by_severity("critical")] == ["shm_size"]


def test_shm_thresholds_follow_the_need():
    # 8 ranks x 16 channels x 2 conns x 4 MiB = 1024 MiB (NCCL_BUFFSIZE default 4 MiB)
    assert C.nccl_shm_need_bytes(8) == 1024 * 2**20
    assert C.nccl_shm_need_bytes(1) == 0.0
    base = "docker run --gpus all --network=host --ulimit memlock=-1 --device=/dev/infiniband --shm-size={} img"
    assert C.check_status(lint(base.format("256m")))["shm_size"] == "critical"
    assert C.check_status(lint(base.format("1g")))["shm_size"] == "pass"
    assert C.check_status(lint(base.format("256m"), n_local_ranks=2, n_channels=8))["shm_size"] == "warning"
    assert C.check_status(lint(base.format("64m").replace("--shm-size=64m", "--ipc=host")))["shm_size"] == "pass"


def test_privileged_flagged_and_does_not_give_cuda_libs():
    r = lint("docker run --privileged --network host nvidia/cuda:12.4.1-devel-ubuntu22.04 nvidia-smi",
             host_driver="535.104.05")
    s = C.check_status(r)
    assert s["privileged"] == "warning" and s["gpu_access"] == "critical"
    assert s["memlock"] == "pass" and s["rdma_devices"] == "pass"
    assert s["cuda_driver"] == "warning"   # 535 < 550.54.15 (Table 3), >= 525.60.13 (Table 2 minor compat)


def test_cuda_driver_table3():
    # NVIDIA CUDA release notes Table 3: CUDA 12.4 Update 1 needs >= 550.54.15; CUDA 13.0 needs >= 580.65.06
    assert C.check_status(lint(GOOD, host_driver="550.54.15", image_cuda="12.4.1"))["cuda_driver"] == "pass"
    r = lint(GOOD, host_driver="550.54.15", image_cuda="13.0")
    assert C.check_status(r)["cuda_driver"] == "critical"
    assert C.image_cuda_version("nvidia/cuda:12.6.3-cudnn-devel-ubuntu24.04") == "12.6.3"
    assert C.image_cuda_version("nvcr.io/nvidia/pytorch:24.05-py3") is None


def test_enroot_pyxis_apptainer():
    r = lint("enroot import docker://nvcr.io/nvidia/pytorch:24.05-py3")
    assert C.check_status(r)["image_uri"] == "critical"
    assert "nvcr.io#nvidia/pytorch:24.05-py3" in r.by_severity("critical")[0].expected
    assert lint("enroot import docker://nvcr.io#nvidia/pytorch:24.05-py3").passed
    assert lint("srun -N 2 --gpus-per-node=8 --container-image=nvcr.io#nvidia/pytorch:24.05-py3 python t.py").passed
    assert C.check_status(lint("apptainer exec p.sif python"))["gpu_access"] == "critical"
    assert lint("apptainer exec --nv p.sif python").passed
    assert C.check_status(lint("apptainer exec --nv --containall p.sif python"))["rdma_devices"] == "critical"


def test_pod_lint():
    pod = {"metadata": {"name": "t"}, "spec": {"containers": [{"name": "trainer", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                                                               "resources": {"limits": {"nvidia.com/gpu": 8}}}]}}
    s = C.check_status(C.lint_pod(pod))
    assert s["gpu_access"] == "pass" and s["shm_size"] == "critical" and s["memlock"] == "critical"
    c = pod["spec"]["containers"][0]
    c["resources"]["limits"]["rdma/rdma_shared_device_a"] = 1
    c["securityContext"] = {"capabilities": {"add": ["IPC_LOCK"]}}
    c["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
    pod["spec"]["volumes"] = [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}]
    assert C.lint_pod(pod).passed
    job = {"spec": {"template": {"spec": pod["spec"]}}}
    assert C.lint_pod(job).passed
    pod["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] = "64Mi"
    assert C.check_status(C.lint_pod(pod))["shm_size"] == "critical"
    with pytest.raises(ValueError, match="containers"):
        C.lint_pod({"spec": {}})


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="argument"):
        C.lint_command("docker run --gpus all img")
    with pytest.raises(ValueError, match="argv"):
        C.lint_command(["kubectl", "run"])
    with pytest.raises(ValueError, match="n_local_ranks"):
        C.lint_command(shlex.split(GOOD), n_local_ranks=0)
    with pytest.raises(ValueError, match="--shm-size"):
        lint("docker run --shm-size=lots img")
    with pytest.raises(ValueError, match="no image"):
        lint("docker run --gpus all")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["--gpus", "all", "--rm", "-it", "--shm-size", "1g", "--ipc=host", "-v", "/a:/b",
                                 "--network", "host", "img:1", "--", "x", "=", "--ulimit", "memlock=-1"]), max_size=12))
def test_garbage_never_crashes(tokens):
    try:
        r = C.lint_command(["docker", "run", *tokens])
    except ValueError:
        return
    assert r.status in ("PASS", "WARN", "FAIL")


def test_operator_order_and_impact():
    levels = C.startup_order()
    flat = [n for lvl in levels for n in lvl]
    for c in C.operator_components():
        for d in c["depends_on"]:
            assert flat.index(d) < flat.index(c["name"])
    assert levels[0] == ["node-feature-discovery"] and "device-plugin" in levels[-1]
    assert "driver" not in [n for lvl in C.startup_order(disabled=["driver"]) for n in lvl]
    imp = C.missing_impact("container-toolkit")
    assert set(imp["blocked"]) == {"operator-validator", "device-plugin", "gpu-feature-discovery", "dcgm-exporter",
                                   "mig-manager"}
    assert C.missing_impact("dcgm-exporter")["blocked"] == []
    with pytest.raises(KeyError):
        C.missing_impact("device-plugn")
    cyc = [{"name": "a", "depends_on": ["b"]}, {"name": "b", "depends_on": ["a"]}]
    with pytest.raises(ValueError, match="cycle"):
        C.startup_order(cyc)


def test_pull_arithmetic_numbers():
    # 20 GB x 512 nodes through 100 Gb/s: 512 x 160 Gb / 100 Gb/s = 819.2 s
    assert C.pull_time_s(20, 512, 100) == pytest.approx(819.2)
    # node NIC bound for one node: 160 Gb / 100 Gb/s
    assert C.pull_time_s(20, 1, 400, node_gbps=100) == pytest.approx(1.6)
    # shared FS: import once (1.6 s) + 512 x 20 GB / 100 GB/s = 102.4 s
    assert C.pull_time_s(20, 512, 100, method="shared_fs", fs_gbs=100) == pytest.approx(104.0)
    assert C.pull_time_s(20, 512, 100, method="registry", cache_hit_fraction=1.0) == 0.0
    assert C.registry_egress_gb(20, 512) == 10240 and C.registry_egress_gb(20, 512, method="p2p") == 20
    plan = C.enroot_import_plan(20, 512, 100, fs_gbs=100)
    assert plan["speedup"] == pytest.approx(819.2 / 104.0)
    with pytest.raises(ValueError, match="method"):
        C.pull_time_s(20, 8, 100, method="torrent")
    with pytest.raises(ValueError, match="image_gb"):
        C.pull_time_s(float("nan"), 8, 100)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.5, 80), st.integers(1, 8192), st.floats(1, 800), st.floats(0, 1))
def test_pull_properties(s, n, b, hit):
    t = {m: C.pull_time_s(s, n, b, method=m, cache_hit_fraction=hit) for m in C.PULL_METHODS}
    assert all(np.isfinite(v) and v >= 0 for v in t.values())
    # p2p's bandwidth term S/min(B_reg, B_node) never exceeds the registry's max(N S/B_reg, S/B_node); only the
    # pipeline fill ceil(log2 N_miss) chunks / B_node can make it slower when the registry is not the bottleneck
    miss = np.ceil(n * (1 - hit) - 1e-9)
    fill_s = np.ceil(np.log2(max(miss, 1.0))) * 64.0 * 8e-3 / 100.0
    assert t["p2p"] <= t["registry"] + fill_s + 1e-9
    assert C.pull_time_s(s, n + 1, b) >= C.pull_time_s(s, n, b)


def test_vectorised_pull():
    n = np.array([1, 2, 4, 8, 512])
    out = C.pull_time_s(20, n, 100)
    assert out.shape == (5,) and np.all(np.diff(out) >= 0)


def test_parsers():
    pods = C.parse_kubectl_pods(C.SAMPLE_KUBECTL_PODS)
    assert len(pods) == 11
    dp = next(p for p in pods if p.component == "device-plugin")
    assert dp.status == "CrashLoopBackOff" and dp.restarts == 6
    rep = C.operator_readiness(pods)
    assert {f.component for f in rep.by_severity("critical")} == {"device-plugin", "operator-validator"}
    node = C.parse_node_gpu(C.SAMPLE_DESCRIBE_NODE_GPU)
    assert (node.capacity, node.allocatable, node.requested) == (8, 8, 6)
    assert node.product == "NVIDIA-H100-80GB-HBM3"
    env = C.parse_image_env(C.SAMPLE_DOCKER_INSPECT_ENV)
    assert env["CUDA_VERSION"] == "12.4.1.003"
    for bad in ("", "garbage\nlines", None):
        with pytest.raises(C.ContainerParseError):
            C.parse_kubectl_pods(bad)
        with pytest.raises(C.ContainerParseError):
            C.parse_node_gpu(bad)
        with pytest.raises(C.ContainerParseError):
            C.parse_image_env(bad)


def test_pull_explorer_updates_data():
    ex = E.pull_explorer()
    line = ex.figure.axes[0].lines[0]
    before = np.array(line.get_ydata())
    ex.set(image_gb=40.0)
    assert ex.error is None
    assert np.allclose(np.array(line.get_ydata())[1:], 2 * before[1:])
    assert ex.result["registry"] == pytest.approx(C.pull_time_s(40, 512, 100))
    ex.set(cache_hit_fraction=1.0)
    assert ex.result["registry"] == 0.0


def test_lint_explorer_colors_follow_report():
    ex = E.lint_explorer()
    assert ex.result["status"]["shm_size"] == "critical"
    ex.set(case="docker：多机完整配置")
    assert ex.result["report"].passed
    ex.set(multi_node="单机", case="docker：只加了 --gpus")
    assert ex.result["status"]["memlock"] == "pass"


def test_figures_build():
    for fig in (E.pull_time_figure(), E.shm_need_figure()):
        assert fig.axes[0].has_data()
    ax = E.operator_order_figure().axes[0]
    assert {t.get_text() for t in ax.texts} - {""} == {c["name"] for c in C.operator_components()}


def test_privileged_verdict_depends_on_dockers_default_runtime():
    """Issue 9: with "default-runtime": "nvidia" a docker run without --gpus still gets GPUs and driver libs."""
    cmd = ["docker", "run", "--privileged", "--network=host", "nvidia/cuda:12.4.1-devel-ubuntu22.04", "nvidia-smi"]
    runc = {f.check: f.severity for f in C.lint_command(cmd).findings}
    nvidia = {f.check: f.severity for f in C.lint_command(cmd, default_runtime="nvidia").findings}
    assert runc["gpu_access"] == "critical" and nvidia["gpu_access"] == "info"
    assert nvidia["shm_size"] == "critical"  # --privileged still does not enlarge /dev/shm
    with pytest.raises(ValueError, match="default_runtime"):
        C.lint_command(cmd, default_runtime="crun")


def test_lint_explorer_driver_check_follows_the_image_cuda_version():
    """NVIDIA CUDA release notes Table 3 (labutil/data/cuda_compat.toml): CUDA 12.4 needs driver >= 550.54.14,
    12.8 needs >= 570.26; below that 12.x runs only under minor-version compatibility; 13.0 needs >= 580."""
    ex = E.lint_explorer()
    assert ex.result["status"]["cuda_driver"] == "pass"              # 550.54.15 runs CUDA 12.4
    ex.set(image_cuda="12.8")
    assert ex.result["status"]["cuda_driver"] == "warning"           # minor-version compatibility only
    ex.set(image_cuda="13.0")
    assert ex.result["status"]["cuda_driver"] == "critical"
    ex.set(image_cuda="")
    assert "unknown" in next(f.message for f in ex.result["report"].findings if f.check == "cuda_driver")
    with pytest.raises(ValueError, match="image_cuda must be one of"):
        E.lint_model(image_cuda="12.x")


def test_pull_explorer_summary_speaks_chinese_and_never_prints_minus_zero():
    from labutil.explore import containers as EC
    r = EC.pull_model(cache_hit_fraction=1.0)
    assert all(r[m] == 0 for m in C.PULL_METHODS) and all(str(r[m + "_egress_gb"]) == "0.0" for m in C.PULL_METHODS)
    text = EC._pull_summary(r, {"n_nodes": 512, "image_gb": 20})
    assert "-0" not in text and "都已缓存" in text
    text = EC._pull_summary(EC.pull_model(), {"n_nodes": 512, "image_gb": 20})
    assert "1.6 s" in text and "14 min" in text and "0.0 min" not in text          # P2P in seconds below 1 min
    assert "central registry" not in text and "中心 registry" in text and "P2P 分发" in text
