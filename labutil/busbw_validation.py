"""The cluster model against public nccl-tests results (ch22 §3; tests/test_cluster_public.py).

``labutil/data/nccl_public_results.toml`` lists public nccl-tests figures from NVIDIA/nccl and
NVIDIA/nccl-tests issue threads (different GPUs, node counts, InfiniBand / RoCE / TCP sockets, ring /
tree / NVLS / NVLS-Tree), each with its URL, marked ``calibration`` (a constant of the model was
read from it) or ``held_out`` (the model never saw it). ``compare()`` puts the model's busbw next to
every row -- ``Cluster.expected_busbw_gbs`` (large-message limit) or ``Cluster.busbw_gbs`` at the
row's message size when the thread states it -- and ``summary()`` counts the held-out rows inside
their tolerance and their mean absolute error. Misses are listed, not hidden.

>>> s = summary()
>>> s["held_out"] >= 20 and s["calibration"] >= 5
True
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import data_files, validate
from .cluster import Cluster

__all__ = ["Row", "rows", "cluster_of", "compare", "summary", "ROLES", "paste", "paste_names"]

ROLES = ("calibration", "held_out")
_CLUSTER_KEYS = ("nics_per_node", "nic_gbps", "transport", "socket_streams_per_nic", "nvls")


@dataclass(frozen=True)
class Row:
    """One public result: where it comes from, the setup, the measured busbw and its tolerance."""

    id: str
    url: str
    what: str
    cluster: str
    n_nodes: int
    op: str
    algo: str
    measured_gbs: float
    tolerance: float
    role: str
    ranks: int | None = None
    size_bytes: float | None = None
    overrides: tuple = ()
    note: str = ""


def _data() -> dict:
    return data_files.load("nccl_public_results.toml")


_KNOWN = {"id", "url", "what", "cluster", "n_nodes", "ranks", "op", "algo", "measured_gbs", "tolerance", "role",
          "size_bytes", "note", "gpus_per_node", "scaleup_gbs", *_CLUSTER_KEYS}


def paste_names() -> list[str]:
    """Ids of the real nccl-tests pastes stored with the table."""
    return [p["id"] for p in _data().get("paste", [])]


def paste(name: str) -> dict:
    """A real nccl-tests paste (``[[paste]]``): id, url, what, ranks, op and its rows as printed (``text``)."""
    for p in _data().get("paste", []):
        if p["id"] == name:
            return dict(p)
    raise validate.unknown_name("nccl-tests paste", name, paste_names())


@lru_cache(maxsize=None)
def rows() -> tuple[Row, ...]:
    """Every row of the table (unknown keys in the data file raise KeyError)."""
    out = []
    for r in _data()["row"]:
        bad = set(r) - _KNOWN
        if bad:
            raise KeyError(f"nccl_public_results.toml row {r.get('id')!r}: unknown keys {sorted(bad)}")
        validate.choice("role", r["role"], ROLES)
        ov = tuple(sorted((k, r[k]) for k in ("gpus_per_node", "scaleup_gbs", *_CLUSTER_KEYS) if k in r))
        out.append(Row(id=r["id"], url=r["url"], what=r["what"], cluster=r["cluster"], n_nodes=int(r["n_nodes"]),
                       op=r["op"], algo=r["algo"], measured_gbs=float(r["measured_gbs"]),
                       tolerance=float(r["tolerance"]), role=r["role"], ranks=r.get("ranks"),
                       size_bytes=r.get("size_bytes"), overrides=ov, note=r.get("note", "")))
    return tuple(out)


def cluster_of(row: Row) -> Cluster:
    """The ``Cluster`` of a row: a catalog system with overrides, or one built from its link rates."""
    ov = dict(row.overrides)
    if row.cluster == "links":
        return Cluster.from_links(nic_gbps=ov.pop("nic_gbps"), nics_per_node=ov.pop("nics_per_node", 1),
                                  gpus_per_node=ov.pop("gpus_per_node", 8), scaleup_gbs=ov.pop("scaleup_gbs"),
                                  n_nodes=row.n_nodes, **ov)
    return Cluster.system(row.cluster, row.n_nodes, **ov)


def compare() -> list[dict]:
    """One dict per row: id, role, setup, measured and model busbw (GB/s), error (model / measured - 1),
    whether it is inside the row's tolerance, the algorithm the model picks, and the source URL."""
    out = []
    for r in rows():
        c = cluster_of(r)
        ranks = c.n_gpus if r.ranks is None else r.ranks
        if r.size_bytes is None:
            model = float(c.expected_busbw_gbs(r.op, ranks, algo=r.algo))
            size = 2.0 ** 33
        else:
            model = float(c.busbw_gbs(r.op, float(r.size_bytes), ranks, r.algo))
            size = float(r.size_bytes)
        pick = str(c.algorithm(r.op, size, ranks, r.algo))
        err = model / r.measured_gbs - 1.0
        out.append({"id": r.id, "role": r.role, "setup": _setup(r, c, ranks), "op": r.op, "algo": r.algo,
                    "measured_gbs": r.measured_gbs, "model_gbs": model, "error": err,
                    "within": abs(err) <= r.tolerance, "tolerance": r.tolerance, "model_algo": pick, "url": r.url})
    return out


def _setup(r: Row, c: Cluster, ranks: int) -> str:
    g = c.gpu or "GPU"
    net = f"{c.nics_per_node}x{c.nic_gbps:g}G" + (" TCP" if c.transport == "socket" else "")
    return f"{r.n_nodes}x{c.gpus_per_node} {g}, {net}, {ranks} ranks"


def summary() -> dict:
    """Counts and errors: rows per role, held-out rows inside tolerance, held-out mean |error|,
    and the ids of the held-out misses."""
    t = compare()
    held = [x for x in t if x["role"] == "held_out"]
    cal = [x for x in t if x["role"] == "calibration"]
    return {"rows": len(t), "held_out": len(held), "calibration": len(cal),
            "held_out_within": sum(x["within"] for x in held),
            "held_out_mean_abs_error": float(np.mean([abs(x["error"]) for x in held])) if held else 0.0,
            "held_out_misses": [x["id"] for x in held if not x["within"]],
            "calibration_within": sum(x["within"] for x in cal)}
