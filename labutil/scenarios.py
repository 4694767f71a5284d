"""Named scenarios written once: seed 003's cluster, the reference networks, ch14's NIC configurations.

The data live in ``labutil/data/scenarios.toml``. ``labutil.cluster.Cluster.scenario(name)`` builds
the cluster of a named entry (``Cluster.seed003()`` is ``Cluster.scenario("one-25gbe-port-per-server")``);
``labutil.facts``, ``labutil.explore.overview`` (``NETWORKS``) and ``labutil.explore.comm``
(``SEED003_CONFIGS``, ``SCALING_SCENARIOS``, ``OVERSUB_SCENARIOS``) read their presets from here, so a
scenario has one spelling.

>>> cluster_entry("seed003")["nic_gbps"]
25.0
>>> [c[0] for c in dp_configs()][:2]
['1 x 25GbE', '2 x 25GbE']
"""

from __future__ import annotations


from . import data_files, validate

__all__ = ["cluster_names", "cluster_entry", "networks", "dp_configs", "scaling_scenarios", "SEED003"]

#: The name of seed 003's scenario (8x H800 per server, one 25 GbE port per server).
SEED003 = "one-25gbe-port-per-server"


def _data() -> dict:
    return data_files.load("scenarios.toml")


def cluster_names() -> list[str]:
    """Canonical names of the named clusters."""
    return list(_data()["clusters"])


def cluster_entry(name: str) -> dict:
    """The ``[clusters.<name>]`` entry (name or alias, case-insensitive): system, overrides, description."""
    if not isinstance(name, str):
        raise KeyError(f"scenario name must be a string; got {name!r}")
    table = _data()["clusters"]
    key = name.strip().lower()
    for k, e in table.items():
        if key == k.lower() or key in (a.lower() for a in e.get("aliases", ())):
            return {"key": k, **e}
    raise validate.unknown_name("cluster scenario", name, table)


def networks() -> dict:
    """key -> {'label', 'nics_per_node', 'nic_gbps'}: the compute networks of ch01's explorer."""
    return {k: dict(v) for k, v in _data()["networks"].items()}


def dp_configs() -> tuple:
    """(label, Gbit/s per NIC, NICs per server) for ch14's seed-003 comparison, in order."""
    t = _data()["dp_configs"]
    return tuple((t[k]["label"], float(t[k]["nic_gbps"]), int(t[k]["nics_per_node"])) for k in t["order"])


def scaling_scenarios(which: str = "default") -> tuple:
    """(label, Gbit/s per NIC, NICs, algorithm, (oversubscription, servers per leaf) or None) of ch14's
    scaling figures: ``which`` = 'default' or 'oversubscribed'."""
    t = _data()["scaling"]
    validate.choice("which", which, ("default", "oversubscribed"))
    out = []
    for k in t[which]:
        e = t[k]
        osub = (float(e["oversubscription"]), int(e["nodes_per_leaf"])) if "oversubscription" in e else None
        out.append((e["label"], float(e["nic_gbps"]), int(e["nics_per_node"]), e["algo"], osub))
    return tuple(out)
