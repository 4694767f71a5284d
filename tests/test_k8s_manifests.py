"""The chapters' Kubernetes manifests, validated offline against the real API schemas.

Every manifest ch20, ch21, ch26 and ch29 show comes from ``labutil.manifests`` (shipped as files in
``labutil/data/k8s/``). Two validators, both offline:

- built-in kinds: ``kubernetes-validate --strict`` (PyPI ``kubernetes-validate`` 1.37, which bundles
  the Kubernetes OpenAPI schemas for 1.x up to 1.37; strict = unknown fields are errors), run as the
  real command line on the shipped files, for Kubernetes 1.30 and 1.37;
- custom resources (GPU Operator ClusterPolicy, prometheus-operator PrometheusRule, Kueue
  ResourceFlavor/ClusterQueue/LocalQueue): ``kubernetes-validate`` has no schema for them (it only
  warns), so they are validated with jsonschema against the ``openAPIV3Schema`` of their own CRDs,
  vendored verbatim in ``labutil/data/crds/`` (SOURCES.toml: repository, commit, blob), made strict
  the way kubeconform's ``-strict`` does (``additionalProperties: false`` unless the schema preserves
  unknown fields).
Limits, stated: the bundled schemas check structure, field names and types, not the syntax of quantity
strings ("16 GPUs" passes) nor enum values of built-in fields; the API server (``kubectl apply
--dry-run=server`` on a real cluster) checks those. The builders only emit integer counts.
Negative controls prove each validator runs: a typo'd field, a wrongly typed value, an unknown
enum value and a missing required field must each fail.
"""

import copy
import os
import re
import subprocess
import sys
import tomllib

import pytest

from conftest import ROOT
from labutil import containers, manifests as K, sharing

yaml = pytest.importorskip("yaml")
jsonschema = pytest.importorskip("jsonschema")
DATA = ROOT / "labutil" / "data"
BUILTIN = {"Namespace", "Pod", "Job", "ConfigMap", "ResourceQuota", "PriorityClass", "NetworkPolicy", "RoleBinding"}


def _kubernetes_validate() -> list:
    try:
        import kubernetes_validate  # noqa: F401
    except ImportError:
        reason = "kubernetes-validate is not installed (pip install 'kubernetes-validate>=1.37'; the test extra has it)"
        if os.environ.get("CI"):
            pytest.fail(f"CI run without the test extra's validator: {reason}")
        pytest.skip(reason)
    return [sys.executable, "-m", "kubernetes_validate"]


def _run(argv):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=300, check=False)


def _all_docs():
    return [(f, d) for f, docs in K.chapter_manifests().items() for d in docs]


# ------------------------------------------------------------------------------ files and YAML
def test_shipped_files_are_what_labutil_generates():
    files = K.manifest_files()
    shipped = sorted(p.name for p in (DATA / K.MANIFEST_DIR).glob("*.yaml"))
    assert shipped == sorted(files), "labutil/data/k8s/ has files labutil.manifests does not generate (or misses some)"
    for name, text in files.items():
        assert (DATA / K.MANIFEST_DIR / name).read_text(encoding="utf-8") == text, (
            f"labutil/data/k8s/{name} is stale: regenerate from manifests.manifest_files()")


def test_yaml_writer_round_trips_every_manifest():
    for name, docs in K.chapter_manifests().items():
        assert list(yaml.safe_load_all(K.to_yaml(docs))) == docs, name
    tricky = {"a": "yes", "b": "1.5", "c": "x: y", "d": "", "e": [], "f": {}, "g": "line1\nline2\n", "h": "08",
              "i": [{"j": 1, "k": [1, "no"]}], "l": "with #hash", "m": None, "n": True, "o": 2.5}
    assert yaml.safe_load(K.to_yaml(tricky)) == tricky


def test_every_kind_is_validated_by_one_of_the_two_paths():
    kinds = {(d["apiVersion"], d["kind"]) for _, d in _all_docs()}
    assert {k for _, k in kinds} <= BUILTIN | {k for _, k in K.CRD_KINDS}
    assert {k for k in kinds if k in K.CRD_KINDS} == set(K.CRD_KINDS)      # every vendored CRD is used
    assert {k for _, k in kinds} >= BUILTIN


# ------------------------------------------------------------------------------ built-in kinds
@pytest.mark.parametrize("k8s", ["1.30", "1.37"])
def test_builtin_kinds_pass_kubernetes_validate_strict(k8s):
    files = sorted((DATA / K.MANIFEST_DIR).glob("*.yaml"))
    r = _run([*_kubernetes_validate(), "--strict", "-k", k8s, *files])
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    passed = set(re.findall(r"^INFO (\S+) passed for resource (\S+) against version", out, re.M))
    want = {(str(DATA / K.MANIFEST_DIR / f), f"{d['kind'].lower()}/{d['metadata']['name']}")
            for f, d in _all_docs() if d["kind"] in BUILTIN}
    assert passed == want
    warned = set(re.findall(r"^WARN \S+ Couldn't find schema for kind (\S+) with api version", out, re.M))
    assert warned == {k for _, k in K.CRD_KINDS}          # custom resources: validated below instead
    assert "ERROR" not in out


def test_kubernetes_validate_catches_broken_manifests(tmp_path):
    cmd = _kubernetes_validate()
    pod = K.gpu_pod("trainer-0", K.NGC_PYTORCH, 8)
    typo = copy.deepcopy(pod)
    typo["spec"]["contianers"] = typo["spec"].pop("containers")
    bad_type = copy.deepcopy(pod)
    bad_type["spec"]["containers"][0]["securityContext"] = {"privileged": "yes"}      # boolean expected
    quota = K.resource_quota("team-a", 16)
    quota["spec"]["hard"] = ["requests.nvidia.com/gpu=16"]                  # a map expected
    policy = K.network_policy_same_namespace("team-a")
    policy["spec"]["policyTypes"] = "Ingress"                   # must be a list
    for i, doc in enumerate((typo, bad_type, quota, policy)):
        f = tmp_path / f"broken{i}.yaml"
        f.write_text(K.to_yaml(doc), encoding="utf-8")
        r = _run([*cmd, "--strict", f])
        assert r.returncode != 0 and "ERROR" in r.stdout, (doc, r.stdout + r.stderr)


# ------------------------------------------------------------------------------ custom resources
def _sources():
    return tomllib.loads((DATA / "crds" / "SOURCES.toml").read_text(encoding="utf-8"))


def _strict(schema):
    """kubeconform -strict: an object schema with properties rejects unknown keys unless it preserves them."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if ("properties" in out and "additionalProperties" not in out
                and not out.get("x-kubernetes-preserve-unknown-fields")):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


def _crd_validator(api_version: str, kind: str):
    crd = yaml.safe_load((DATA / "crds" / K.CRD_KINDS[(api_version, kind)]).read_text(encoding="utf-8"))
    assert crd["spec"]["names"]["kind"] == kind and crd["spec"]["group"] == api_version.split("/")[0]
    version = next(v for v in crd["spec"]["versions"] if v["name"] == api_version.split("/")[1])
    assert version["served"]
    return jsonschema.Draft7Validator(_strict(version["schema"]["openAPIV3Schema"]))


def test_vendored_crds_are_verbatim_and_sourced():
    src = _sources()
    assert {(s["api_version"], kind) for kind, s in src.items()} == set(K.CRD_KINDS)
    for kind, s in src.items():
        assert K.CRD_KINDS[(s["api_version"], kind)] == s["file"] and re.fullmatch(r"[0-9a-f]{40}", s["commit"])
        r = _run(["git", "hash-object", DATA / "crds" / s["file"]])
        if r.returncode == 0:
            assert r.stdout.strip() == s["blob"], f"{s['file']} differs from {s['repo']}@{s['commit'][:12]}:{s['path']}"


def test_custom_resources_validate_against_their_crd_schemas():
    n = 0
    for f, d in _all_docs():
        key = (d["apiVersion"], d["kind"])
        if key not in K.CRD_KINDS:
            continue
        errors = sorted(_crd_validator(*key).iter_errors(d), key=lambda e: list(e.path))
        assert not errors, f"{f} {d['kind']}/{d['metadata']['name']}: " + "; ".join(
            f"{'.'.join(map(str, e.path))}: {e.message}" for e in errors)
        n += 1
    assert n == 6


def test_crd_validation_catches_broken_custom_resources():
    cp = K.cluster_policy()
    cp["spec"]["mig"]["strategy"] = "both"                     # enum none/single/mixed
    no_toolkit = K.cluster_policy()
    del no_toolkit["spec"]["toolkit"]                          # required
    typo = K.cluster_policy()
    typo["spec"]["dcgmExporter"]["enable"] = True              # unknown field (strict)
    cq = K.kueue_cluster_queue("training", "h100", 96, cpu=1344, memory="24Ti")
    del cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["nominalQuota"]
    rule = K.prometheus_rule()
    rule["spec"]["groups"][0]["rules"][0]["for"] = "5 minutes"     # not a duration
    for doc in (cp, no_toolkit, typo, cq, rule):
        assert list(_crd_validator(doc["apiVersion"], doc["kind"]).iter_errors(doc)), doc["kind"]


# ------------------------------------------------------------------------------ builders
def test_prometheus_rule_matches_the_rules_file_and_the_text_writer():
    from labutil import monitoring as M, promrules
    pr = K.prometheus_rule()
    assert yaml.safe_load(M.alert_rules_yaml(M.default_rules(), interval_s=M.RULES_INTERVAL_S)) == pr["spec"]
    assert yaml.safe_load((DATA / "prometheus" / promrules.RULES_FILE).read_text(encoding="utf-8")) == pr["spec"]


def test_pods_pass_the_course_linter_and_the_mig_config_is_placeable():
    docs = dict(K.chapter_manifests())
    bare, fixed = docs["ch20-gpu-pods.yaml"]
    assert containers.lint_pod(fixed, image_cuda="12.4.1", host_driver="550.54.15").status == "PASS"
    assert containers.check_status(containers.lint_pod(bare))["shm_size"] == "critical"
    cm = next(d for d in docs["ch29-gpu-sharing.yaml"] if d["metadata"]["name"] == "custom-mig-config")
    cfg = yaml.safe_load(cm["data"]["config.yaml"])
    for name, entries in cfg["mig-configs"].items():
        profiles = [p for p, n in entries[0]["mig-devices"].items() for _ in range(n)]
        assert sharing.mig_fits("H100-80GB", profiles), name
    with pytest.raises(sharing.MigPlacementError):
        K.mig_config_configmap({"too-big": ["4g.40gb", "4g.40gb"]})
    ts = yaml.safe_load(next(d for d in docs["ch29-gpu-sharing.yaml"] if d["kind"] == "ConfigMap")["data"]["any"])
    assert ts["sharing"]["timeSlicing"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 4}]


@pytest.mark.parametrize("call", [
    lambda: K.gpu_pod("Trainer", K.NGC_PYTORCH),                 # not DNS-1123
    lambda: K.gpu_pod("t", "bad image"),
    lambda: K.gpu_pod("t", K.NGC_PYTORCH, 0),
    lambda: K.gpu_pod("t", K.NGC_PYTORCH, resource="nvidia.com/gpus"),
    lambda: K.resource_quota("team-a", -1),
    lambda: K.priority_class("p", 2_000_000_000),               # > 1e9 is reserved for system classes
    lambda: K.cluster_policy(mig_strategy="both"),
    lambda: K.time_slicing_configmap(1),
    lambda: K.to_yaml({"a": float("nan")}),
])
def test_builders_refuse_bad_input(call):
    with pytest.raises((ValueError, KeyError)):
        call()


def test_chapters_show_only_manifests_built_here():
    """No hand-written Kubernetes YAML in the chapters: the objects shown are the validated ones."""
    for ch in ("ch20_containers", "ch21_scheduling", "ch26_monitoring", "ch29_multitenancy"):
        src = (ROOT / "chapters" / f"{ch}.py").read_text(encoding="utf-8")
        md = "\n".join(ln for ln in src.splitlines() if ln.startswith("#"))
        assert "apiVersion:" not in md and "kind: " not in md, f"{ch} has hand-written manifest YAML in its text"
        assert "manifests." in src, f"{ch} does not show manifests from labutil.manifests"


def test_pod_security_baseline_flags_the_rdma_training_pod_not_the_tenant_pods():
    """Pod Security Standards, Baseline (kubernetes.io/docs/concepts/security/pod-security-standards):
    IPC_LOCK, hostNetwork, privileged and hostPath are outside it; the ch29 tenant namespace enforces it."""
    docs = K.chapter_manifests()
    bare, fixed = docs["ch20-gpu-pods.yaml"]
    assert K.pod_security_baseline_violations(bare) == []
    v = K.pod_security_baseline_violations(fixed)
    assert len(v) == 1 and "IPC_LOCK" in v[0] and "capabilities" in v[0]
    tenancy = docs["ch29-tenancy.yaml"]
    ns = next(d for d in tenancy if d["kind"] == "Namespace")
    assert ns["metadata"]["labels"] == {"pod-security.kubernetes.io/enforce": "baseline"}
    for d in tenancy + docs["ch21-kueue.yaml"] + docs["ch21-quota-priority.yaml"]:
        if d["kind"] in ("Pod", "Job"):
            assert K.pod_security_baseline_violations(d) == [], d["metadata"]["name"]
    host = copy.deepcopy(bare)
    host["spec"]["hostNetwork"] = True
    host["spec"]["containers"][0]["securityContext"] = {"privileged": True, "capabilities": {"add": ["CHOWN", "SYS_ADMIN"]}}
    host["spec"]["volumes"] = [{"name": "root", "hostPath": {"path": "/"}}]
    msgs = K.pod_security_baseline_violations(host)
    assert [m.rsplit("(", 1)[1] for m in msgs] == ["host namespaces)", "hostPath volumes)", "privileged containers)",
                                                  "capabilities)"]
    assert "SYS_ADMIN" in msgs[3] and "CHOWN" not in msgs[3]           # CHOWN is in the Baseline list
    with pytest.raises(ValueError, match="Pod or one of"):
        K.pod_security_baseline_violations(ns)
    with pytest.raises(ValueError):
        K.pod_security_baseline_violations({"kind": "Job", "spec": {}})
