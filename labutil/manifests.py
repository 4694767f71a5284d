"""Kubernetes manifests the operations chapters show (ch20, ch21, ch26, ch29), built by functions.

Every YAML object a chapter shows a learner comes from a function here, so the same object is what
the tests validate with a real schema validator, offline:

- built-in kinds (Namespace, Pod, Job, ConfigMap, ResourceQuota, PriorityClass, NetworkPolicy,
  RoleBinding) with ``kubernetes-validate --strict`` (PyPI ``kubernetes-validate``, which bundles the
  Kubernetes OpenAPI schemas; strict rejects unknown fields, the typo class of mistakes);
- custom resources against their own CRD schemas, vendored verbatim in ``labutil/data/crds/``
  (``SOURCES.toml`` there names repository, commit and path of each): ``ClusterPolicy``
  (nvidia.com/v1, NVIDIA GPU Operator), ``PrometheusRule`` (monitoring.coreos.com/v1,
  prometheus-operator), ``ResourceFlavor`` / ``ClusterQueue`` / ``LocalQueue``
  (kueue.x-k8s.io/v1beta2, Kueue).

Objects are plain dicts (``kubectl apply -f`` reads the YAML that :func:`to_yaml` writes; PyYAML is
not needed). Field meanings: Kubernetes API reference (v1.33+), GPU Operator ``ClusterPolicy`` CRD
and docs ("Time-Slicing GPUs", "MIG support", "Custom metrics config"), Kueue docs ("Administer
cluster quotas", "Run a Job"), prometheus-operator API reference.
"""

from __future__ import annotations

import json
import re
from importlib import resources

from . import monitoring, sharing, validate

__all__ = ["to_yaml", "namespace", "gpu_pod", "training_job", "resource_quota", "priority_class",
           "network_policy_same_namespace", "role_binding", "configmap", "dcgm_metrics_configmap",
           "time_slicing_configmap", "mig_config_configmap", "cluster_policy", "prometheus_rule",
           "kueue_resource_flavor", "kueue_cluster_queue", "kueue_local_queue", "chapter_manifests",
           "CRD_KINDS", "manifest_files", "manifest_path", "MANIFEST_DIR", "NGC_PYTORCH", "NGC_TRITON",
           "PSS_BASELINE_CAPABILITIES", "pod_security_baseline_violations"]

MANIFEST_DIR = "k8s"                       # labutil/data/k8s/: the chapters' manifests as files
_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")   # node label values (mig.config)
_RESOURCE = re.compile(r"^(nvidia\.com/(gpu|mig-\d+g\.\d+gb(\+me)?)|rdma/[a-z0-9_]+)$")
# custom resources: (apiVersion, kind) -> CRD file in labutil/data/crds/
CRD_KINDS = {
    ("nvidia.com/v1", "ClusterPolicy"): "nvidia.com_clusterpolicies.yaml",
    ("monitoring.coreos.com/v1", "PrometheusRule"): "monitoring.coreos.com_prometheusrules.yaml",
    ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"): "kueue.x-k8s.io_resourceflavors.yaml",
    ("kueue.x-k8s.io/v1beta2", "ClusterQueue"): "kueue.x-k8s.io_clusterqueues.yaml",
    ("kueue.x-k8s.io/v1beta2", "LocalQueue"): "kueue.x-k8s.io_localqueues.yaml",
}


def _name(param: str, value) -> str:
    if not isinstance(value, str) or len(value) > 63 or not _DNS1123.match(value):
        raise ValueError(f"{param} must be a DNS-1123 label (lower-case letters, digits, '-', <= 63 chars); "
                         f"got {value!r}")
    return value


def _meta(name: str, namespace: str | None = None, **extra) -> dict:
    m = {"name": _name("name", name)}
    if namespace is not None:
        m["namespace"] = _name("namespace", namespace)
    m.update({k: v for k, v in extra.items() if v})
    return m


# ------------------------------------------------------------------------------------ YAML writer
_PLAIN = re.compile(r"^[A-Za-z_/.][A-Za-z0-9_./+-]*(:[A-Za-z0-9_./+-]+)*$")   # 'nvcr.io/x:24.05' stays plain
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def _scalar(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError(f"manifest values must be finite numbers; got {v!r}")
        return repr(v)
    if isinstance(v, str):
        if _PLAIN.match(v) and v.lower() not in _YAML_WORDS:
            return v
        return json.dumps(v, ensure_ascii=False)      # a JSON string is a YAML double-quoted scalar
    raise TypeError(f"manifest values must be str, int, float, bool or None; got {type(v).__name__}")


def _emit(v, indent: int, out: list, key_prefix: str = "") -> None:
    pad = " " * indent
    if isinstance(v, dict):
        if not v:
            out.append(f"{pad}{key_prefix}{{}}" if not key_prefix.endswith(": ") else f"{pad}{key_prefix}{{}}")
            return
        first = True
        for k, x in v.items():
            if not isinstance(k, str):
                raise TypeError(f"manifest keys must be strings; got {k!r}")
            lead = (pad + key_prefix) if first else " " * (indent + len(key_prefix))
            first = False
            key = _scalar(k)
            sub = indent + len(key_prefix)
            if isinstance(x, dict) and x:
                out.append(f"{lead}{key}:")
                _emit(x, sub + 2, out)
            elif isinstance(x, list) and x:
                out.append(f"{lead}{key}:")
                _emit(x, sub, out)
            elif isinstance(x, str) and "\n" in x:
                chomp = "|" if x.endswith("\n") and not x.endswith("\n\n") else "|-"
                out.append(f"{lead}{key}: {chomp}")
                body = x[:-1] if chomp == "|" else x
                for line in body.split("\n"):
                    out.append((" " * (sub + 2) + line) if line else "")
            elif isinstance(x, (dict, list)):
                out.append(f"{lead}{key}: {'{}' if isinstance(x, dict) else '[]'}")
            else:
                out.append(f"{lead}{key}: {_scalar(x)}")
        return
    if isinstance(v, list):
        for item in v:
            if isinstance(item, dict) and item:
                _emit(item, indent, out, key_prefix="- ")
            elif isinstance(item, (dict, list)):
                out.append(f"{pad}- {'{}' if isinstance(item, dict) else '[]'}")
            else:
                out.append(f"{pad}- {_scalar(item)}")
        return
    out.append(pad + _scalar(v))


def to_yaml(docs) -> str:
    """YAML for one object or a list of objects (separated by ``---``), block style, keys in insertion order."""
    docs = [docs] if isinstance(docs, dict) else list(docs)
    if not docs or not all(isinstance(d, dict) and d for d in docs):
        raise ValueError("docs must be a non-empty dict or a list of non-empty dicts")
    parts = []
    for d in docs:
        out: list = []
        _emit(d, 0, out)
        parts.append("\n".join(out) + "\n")
    return "---\n".join(parts)


# ---------------------------------------------------------------------------------- built-in kinds
def namespace(name: str, labels: dict | None = None) -> dict:
    """A Namespace (the scope of RBAC, ResourceQuota and NetworkPolicy; not a network boundary, ch29)."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(name, labels=labels)}


def _resources(resource: str, count: int) -> dict:
    if not _RESOURCE.match(resource):
        raise ValueError(f"resource must be nvidia.com/gpu, nvidia.com/mig-<profile> or rdma/<name>; got {resource!r}")
    return {resource: validate.integer(f"{resource} count", count, lo=1)}


def gpu_pod(name: str, image: str, gpus: int = 1, *, namespace: str | None = None, resource: str = "nvidia.com/gpu",
            rdma_resource: str | None = None, shm_size: str | None = None, ipc_lock: bool = False,
            networks: str | None = None, priority_class: str | None = None, command: list | None = None,
            container: str = "main") -> dict:
    """A Pod with ``gpus`` x ``resource`` in ``resources.limits`` (extended resources: limits only, ch21).

    Multi-node training additions (ch20 §5): ``rdma_resource`` (RDMA device plugin resource),
    ``shm_size`` (a ``medium: Memory`` emptyDir on /dev/shm), ``ipc_lock`` (CAP_IPC_LOCK for pinned
    RDMA memory), ``networks`` (Multus annotation ``k8s.v1.cni.cncf.io/networks``).
    """
    if not isinstance(image, str) or not image or any(c.isspace() for c in image):
        raise ValueError(f"image must be an image reference without spaces; got {image!r}")
    limits = _resources(resource, gpus)
    if rdma_resource:
        limits.update(_resources(rdma_resource, 1))
    ctr = {"name": _name("container", container), "image": image}
    if command:
        ctr["command"] = [str(c) for c in command]
    ctr["resources"] = {"limits": limits}
    if ipc_lock:
        ctr["securityContext"] = {"capabilities": {"add": ["IPC_LOCK"]}}
    spec: dict = {}
    if priority_class:
        spec["priorityClassName"] = _name("priority_class", priority_class)
    spec["containers"] = [ctr]
    if shm_size:
        ctr["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
        spec["volumes"] = [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": str(shm_size)}}]
    meta = _meta(name, namespace)
    if networks:
        meta["annotations"] = {"k8s.v1.cni.cncf.io/networks": str(networks)}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def training_job(name: str, namespace: str, image: str, *, pods: int = 2, gpus_per_pod: int = 8,
                 priority_class: str | None = None, queue: str | None = None, command: list | None = None) -> dict:
    """An indexed batch/v1 Job of ``pods`` pods with ``gpus_per_pod`` GPUs each (one pod per node).

    ``queue``: submit through Kueue (label ``kueue.x-k8s.io/queue-name``; created suspended, Kueue
    unsuspends it when the ClusterQueue has quota for ALL pods at once: gang admission).
    """
    n = validate.integer("pods", pods, lo=1)
    pod = gpu_pod("worker", image, gpus_per_pod, priority_class=priority_class, command=command, container="trainer")
    template_spec = {"restartPolicy": "Never", **pod["spec"]}
    labels = {"kueue.x-k8s.io/queue-name": _name("queue", queue)} if queue else None
    spec = {"completionMode": "Indexed", "completions": n, "parallelism": n, "backoffLimit": 0}
    if queue:
        spec["suspend"] = True
    spec["template"] = {"spec": template_spec}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": _meta(name, namespace, labels=labels), "spec": spec}


def resource_quota(namespace: str, gpus: int, *, name: str = "gpu-quota", extra: dict | None = None) -> dict:
    """A ResourceQuota capping the namespace's GPU requests (``requests.nvidia.com/gpu``; extended
    resources can only be quota'd under ``requests.``). ``extra``: more resources, e.g. MIG profiles."""
    hard = {"requests.nvidia.com/gpu": str(validate.integer("gpus", gpus, lo=0))}
    for res, n in (extra or {}).items():
        if not _RESOURCE.match(res):
            raise ValueError(f"extra keys must be extended resource names like nvidia.com/mig-3g.40gb; got {res!r}")
        hard[f"requests.{res}"] = str(validate.integer(f"extra[{res}]", n, lo=0))
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": _meta(name, namespace), "spec": {"hard": hard}}


def priority_class(name: str, value: int, *, preempt: bool = True, description: str = "") -> dict:
    """A PriorityClass (scheduling.k8s.io/v1); ``preempt=False`` gives ``preemptionPolicy: Never``."""
    v = validate.integer("value", value, lo=-2_147_483_648, hi=1_000_000_000)   # > 1e9 is reserved for system
    obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": _meta(name), "value": v,
           "preemptionPolicy": "PreemptLowerPriority" if preempt else "Never"}
    if description:
        obj["description"] = str(description)
    return obj


def network_policy_same_namespace(namespace: str, name: str = "same-namespace-only") -> dict:
    """Ingress only from pods of the same namespace (effective only with a CNI that enforces NetworkPolicy)."""
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": _meta(name, namespace),
            "spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [{"from": [{"podSelector": {}}]}]}}


def role_binding(namespace: str, group: str, *, cluster_role: str = "edit", name: str | None = None) -> dict:
    """RoleBinding of ``group`` to ClusterRole ``cluster_role`` inside ``namespace`` only
    (= ``kubectl create rolebinding NAME --clusterrole=edit --group=GROUP -n NAMESPACE``)."""
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": _meta(name or f"{group}-{cluster_role}", namespace),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": _name("cluster_role", cluster_role)},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": _name("group", group)}]}


def configmap(name: str, namespace: str, data: dict) -> dict:
    if not data or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise ValueError("data must be a non-empty {key: text} dict")
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(name, namespace), "data": dict(data)}


def dcgm_metrics_configmap(name: str = "course-dcgm-metrics", namespace: str = "gpu-operator") -> dict:
    """The course's dcgm-exporter counters list under the key ``dcgm-metrics.csv``, the key the GPU
    Operator mounts when ``dcgmExporter.config.name`` names this ConfigMap (ch26 §6.1)."""
    text = monitoring.dcgm_counter_path("course").read_text(encoding="utf-8")
    return configmap(name, namespace, {"dcgm-metrics.csv": text})


def time_slicing_configmap(replicas: int = 4, *, name: str = "time-slicing-config", namespace: str = "gpu-operator",
                           key: str = "any") -> dict:
    """NVIDIA device plugin time-slicing config (k8s-device-plugin README, "Shared Access to GPUs with
    CUDA Time-Slicing"): every GPU is advertised as ``replicas`` ``nvidia.com/gpu``; no memory or
    fault isolation between them (ch29 §3). The GPU Operator reads it via ``devicePlugin.config``."""
    r = validate.integer("replicas", replicas, lo=2, hi=1024)
    text = ("version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
            f"    - name: nvidia.com/gpu\n      replicas: {r}\n")
    return configmap(name, namespace, {_name("key", key): text})


def mig_config_configmap(configs: dict, *, gpu: str = "H100-80GB", name: str = "custom-mig-config",
                         namespace: str = "gpu-operator") -> dict:
    """mig-parted config for the GPU Operator's MIG manager (node label ``nvidia.com/mig.config=<name>``).

    ``configs``: {config name: [profiles on one GPU]}; every layout is checked with
    :func:`labutil.sharing.mig_layout` first, so an impossible layout raises ``MigPlacementError`` here
    instead of failing on the node. Format: NVIDIA/mig-parted ``config.yaml`` (version v1).
    """
    if not configs:
        raise ValueError("configs must map a config name to a list of MIG profiles")
    lines = ["version: v1", "mig-configs:"]
    for cname, profiles in configs.items():
        layout = sharing.mig_layout(gpu, profiles)           # raises on an impossible layout
        counts: dict = {}
        for slot in layout.slots:
            counts[slot.profile] = counts.get(slot.profile, 0) + 1
        if not isinstance(cname, str) or len(cname) > 63 or not _LABEL_VALUE.match(cname):
            raise ValueError(f"config name must be a label value (it is set as nvidia.com/mig.config=<name>); "
                             f"got {cname!r}")
        lines += [f"  {cname}:", "    - devices: all", "      mig-enabled: true",
                  "      mig-devices:"]
        lines += [f'        "{p}": {n}' for p, n in sorted(counts.items())]
    return configmap(name, namespace, {"config.yaml": "\n".join(lines) + "\n"})


# ---------------------------------------------------------------------------------- Pod Security
# Pod Security Standards, Baseline profile (kubernetes.io/docs/concepts/security/pod-security-standards):
# the capabilities a container may ADD under Baseline (Docker's default set minus NET_RAW).
PSS_BASELINE_CAPABILITIES = frozenset({"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                       "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})
_POD_TEMPLATE_KINDS = ("Job", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet")


def pod_security_baseline_violations(obj: dict) -> list[str]:
    """Which Baseline controls of the Kubernetes Pod Security Standards a Pod (or the pod template of a
    Job / Deployment / StatefulSet / DaemonSet / ReplicaSet) breaks; ``[]`` = it passes them.

    A namespace labelled ``pod-security.kubernetes.io/enforce: baseline`` rejects such pods at admission
    (Pod Security Admission, ch29). Controls checked: host namespaces (``hostNetwork``, ``hostPID``,
    ``hostIPC``), privileged containers, capabilities added beyond :data:`PSS_BASELINE_CAPABILITIES`,
    ``hostPath`` volumes, ``hostPort``, seccomp ``Unconfined`` and a non-default ``procMount``. Not
    checked (the course's manifests never set them): AppArmor, SELinux options, sysctls, Windows
    HostProcess. Messages are ``"<field>: <value> (<control>)"``.
    """
    if not isinstance(obj, dict) or "kind" not in obj:
        raise ValueError(f"obj must be a Kubernetes object (a dict with 'kind'); got {type(obj).__name__}")
    kind = obj["kind"]
    try:
        if kind == "Pod":
            spec = obj["spec"]
        elif kind in _POD_TEMPLATE_KINDS:
            spec = obj["spec"]["template"]["spec"]
        else:
            raise ValueError(f"obj must be a Pod or one of {', '.join(_POD_TEMPLATE_KINDS)} (pod template); got kind {kind!r}")
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{kind} has no pod spec ({exc!r})") from None
    out = []
    for f in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(f):
            out.append(f"spec.{f}: true (host namespaces)")
    for v in spec.get("volumes", []) or []:
        if "hostPath" in v:
            out.append(f"spec.volumes[{v.get('name', '?')}].hostPath (hostPath volumes)")
    pod_sc = spec.get("securityContext") or {}
    if (pod_sc.get("seccompProfile") or {}).get("type") == "Unconfined":
        out.append("spec.securityContext.seccompProfile.type: Unconfined (seccomp)")
    for group in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(group, []) or []:
            where = f"{group}[{c.get('name', '?')}]"
            sc = c.get("securityContext") or {}
            if sc.get("privileged"):
                out.append(f"{where}.securityContext.privileged: true (privileged containers)")
            extra = sorted(set((sc.get("capabilities") or {}).get("add", []) or []) - PSS_BASELINE_CAPABILITIES)
            if extra:
                out.append(f"{where}.securityContext.capabilities.add: {', '.join(extra)} (capabilities)")
            if (sc.get("seccompProfile") or {}).get("type") == "Unconfined":
                out.append(f"{where}.securityContext.seccompProfile.type: Unconfined (seccomp)")
            if sc.get("procMount", "Default") != "Default":
                out.append(f"{where}.securityContext.procMount: {sc['procMount']} (/proc mount type)")
            for port in c.get("ports", []) or []:
                if port.get("hostPort"):
                    out.append(f"{where}.ports.hostPort: {port['hostPort']} (host ports)")
    return out


# ---------------------------------------------------------------------------------- custom resources
def cluster_policy(*, driver: bool = True, mig_strategy: str = "single", device_plugin_config: str | None = None,
                   device_plugin_default: str | None = None, dcgm_metrics_config: str | None = None,
                   runtime: str = "containerd") -> dict:
    """GPU Operator ``ClusterPolicy`` (nvidia.com/v1; the object ``helm install gpu-operator`` renders).

    ``driver=False``: the host has a pre-installed driver (``--set driver.enabled=false``);
    ``mig_strategy``: none / single / mixed; ``device_plugin_config``: ConfigMap with device plugin
    configs (time-slicing); ``dcgm_metrics_config``: ConfigMap with ``dcgm-metrics.csv``.
    """
    validate.choice("mig_strategy", mig_strategy, ["none", "single", "mixed"])
    validate.choice("runtime", runtime, ["containerd", "docker", "crio"])
    dp: dict = {"enabled": True}
    if device_plugin_config:
        dp["config"] = {"name": _name("device_plugin_config", device_plugin_config)}
        if device_plugin_default:
            dp["config"]["default"] = device_plugin_default
    exporter: dict = {"enabled": True}
    if dcgm_metrics_config:
        exporter["config"] = {"name": _name("dcgm_metrics_config", dcgm_metrics_config)}
    spec = {"operator": {"defaultRuntime": runtime}, "daemonsets": {}, "driver": {"enabled": bool(driver)},
            "toolkit": {"enabled": True}, "devicePlugin": dp, "dcgm": {"enabled": True}, "dcgmExporter": exporter,
            "gfd": {"enabled": True}, "mig": {"strategy": mig_strategy},
            "migManager": {"enabled": mig_strategy != "none"}, "nodeStatusExporter": {"enabled": False}}
    return {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": _meta("cluster-policy"), "spec": spec}


def prometheus_rule(rules=None, *, name: str = "gpu-health", namespace: str = "monitoring",
                    interval_s: float | None = monitoring.RULES_INTERVAL_S) -> dict:
    """The course's alert rules as a prometheus-operator ``PrometheusRule`` (the same rules as
    :func:`labutil.monitoring.alert_rules_yaml`; its ``spec`` is a Prometheus rules file)."""
    rules = monitoring.default_rules() if rules is None else list(rules)
    group: dict = {"name": _name("name", name)}
    if interval_s is not None:
        group["interval"] = monitoring.format_duration(interval_s)
    group["rules"] = []
    for r in rules:
        item = {"alert": r.name, "expr": r.expr}
        if r.for_s:
            item["for"] = monitoring.format_duration(r.for_s)
        item["labels"] = {"severity": r.severity}
        item["annotations"] = {"summary": r.summary_template()}
        group["rules"].append(item)
    return {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "metadata": _meta(name, namespace),
            "spec": {"groups": [group]}}


def kueue_resource_flavor(name: str, node_labels: dict) -> dict:
    """A Kueue ResourceFlavor: which nodes a quota is for (here: by GPU product label from GFD)."""
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": _meta(name),
            "spec": {"nodeLabels": {str(k): str(v) for k, v in node_labels.items()}}}


def kueue_cluster_queue(name: str, flavor: str, gpus: int, *, cpu: int, memory: str, cohort: str | None = None,
                        preempt_lower_priority: bool = True) -> dict:
    """A Kueue ClusterQueue with a nominal quota of ``gpus`` GPUs of ``flavor``: jobs above the quota
    WAIT in the queue (unlike a ResourceQuota, which rejects them at admission, ch21 §7.4)."""
    res = [{"name": "cpu", "nominalQuota": validate.integer("cpu", cpu, lo=1)},
           {"name": "memory", "nominalQuota": str(memory)},
           {"name": "nvidia.com/gpu", "nominalQuota": validate.integer("gpus", gpus, lo=0)}]
    spec: dict = {"namespaceSelector": {}}
    if cohort:
        spec["cohortName"] = _name("cohort", cohort)
    spec["resourceGroups"] = [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                               "flavors": [{"name": _name("flavor", flavor), "resources": res}]}]
    if preempt_lower_priority:
        spec["preemption"] = {"withinClusterQueue": "LowerPriority"}
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": _meta(name), "spec": spec}


def kueue_local_queue(name: str, namespace: str, cluster_queue: str) -> dict:
    """A Kueue LocalQueue: the namespaced queue a Job names in its ``kueue.x-k8s.io/queue-name`` label."""
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": _meta(name, namespace),
            "spec": {"clusterQueue": _name("cluster_queue", cluster_queue)}}


# ---------------------------------------------------------------------------------- the chapters' set
NGC_PYTORCH = "nvcr.io/nvidia/pytorch:24.05-py3"
NGC_TRITON = "nvcr.io/nvidia/tritonserver:24.05-py3"


def chapter_manifests() -> dict:
    """Every manifest the chapters show, as {file name: [objects]} (file names say the chapter)."""
    return {
        "ch20-gpu-pods.yaml": [
            gpu_pod("trainer-0", NGC_PYTORCH, 8, container="trainer"),
            gpu_pod("trainer-0", NGC_PYTORCH, 8, container="trainer", rdma_resource="rdma/rdma_shared_device_a",
                    shm_size="16Gi", ipc_lock=True, networks="rdma-net"),
        ],
        "ch20-gpu-operator.yaml": [cluster_policy(driver=False)],
        "ch21-quota-priority.yaml": [
            namespace("team-infer"),
            resource_quota("team-infer", 16),
            priority_class("inference-high", 100000, description="online inference may preempt training pods"),
            gpu_pod("llm-serve-0", NGC_TRITON, 1, namespace="team-infer", priority_class="inference-high",
                    container="server"),
        ],
        "ch21-kueue.yaml": [
            namespace("team-train"),
            kueue_resource_flavor("h100", {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}),
            kueue_cluster_queue("training", "h100", 96, cpu=1344, memory="24Ti"),
            kueue_local_queue("pretrain", "team-train", "training"),
            training_job("pretrain-7b", "team-train", NGC_PYTORCH, pods=8, gpus_per_pod=8, queue="pretrain",
                         command=["torchrun", "--nnodes=8", "--nproc-per-node=8", "train.py"]),
        ],
        "ch26-monitoring.yaml": [prometheus_rule(), dcgm_metrics_configmap()],
        "ch29-tenancy.yaml": [
            namespace("team-a", labels={"pod-security.kubernetes.io/enforce": "baseline"}),
            resource_quota("team-a", 16, extra={"nvidia.com/mig-3g.40gb": 8}),
            network_policy_same_namespace("team-a"),
            role_binding("team-a", "team-a"),
            gpu_pod("serve-3g", NGC_TRITON, 1, namespace="team-a", resource="nvidia.com/mig-3g.40gb", container="server"),
        ],
        "ch29-gpu-sharing.yaml": [
            cluster_policy(mig_strategy="mixed", device_plugin_config="time-slicing-config",
                           device_plugin_default="any", dcgm_metrics_config="course-dcgm-metrics"),
            time_slicing_configmap(4),
            mig_config_configmap({"all-3g.40gb": ["3g.40gb", "3g.40gb"],
                                  "mixed-serving": ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]}),
        ],
    }


def manifest_files() -> dict:
    """{file name: YAML text} of :func:`chapter_manifests` (shipped in ``labutil/data/k8s/``)."""
    return {name: to_yaml(docs) for name, docs in chapter_manifests().items()}


def manifest_path(name: str):
    """Path of a shipped manifest file inside the installed package."""
    validate.choice("name", name, list(chapter_manifests()))
    return resources.files("labutil").joinpath("data", MANIFEST_DIR, name)
