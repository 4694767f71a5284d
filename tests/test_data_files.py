"""labutil.data_files: every data file loads through one strict loader; look-ups follow one rule.

Strictness is tested on the real files: for every table schema (every Record reached in every
TOML file) a key of the shipped entry is misspelled and the loader must name the misspelling.
"""

from __future__ import annotations

import copy
from dataclasses import MISSING, field, fields, make_dataclass

import pytest

from labutil import cluster, data_files as D, hardware, models, storage
from labutil.data_files import DataFileError, Entries, Record, Rows


def test_every_toml_file_has_a_schema_and_loads():
    files = D.toml_files()
    assert "gpus.toml" in files and "crds/SOURCES.toml" in files
    assert set(files) == set(D.SCHEMAS), "SCHEMAS must list exactly the shipped TOML files"
    for name in files:
        doc = D.load(name)
        assert isinstance(doc, dict) and doc, name
        assert D.load(name) is doc  # cached: read once


def _records(schema, value, at=""):
    """(path, Record, table) for every Record the schema reaches in ``value`` (first entry / row of each)."""
    if isinstance(schema, Rows):
        yield from _records(schema.row, value[0], f"{at}[0]")
    elif isinstance(schema, Entries):
        if schema.entry is not None and value:
            first = next(iter(value))
            yield from _records(schema.entry, value[first], f"{at}.{first}" if at else first)
    elif isinstance(schema, Record):
        yield at, schema, value
        for key, sub in schema.nested.items():
            if key in value:
                yield from _records(sub, value[key], f"{at}.{key}" if at else key)


def _at(doc, path):
    """The table at ``path`` ('a.b[0].c') of ``doc``."""
    node = doc
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    return node


def _schema_cases():
    for name in sorted(D.SCHEMAS):
        for path, rec, value in _records(D.SCHEMAS[name], D.load(name)):
            yield pytest.param(name, path, id=f"{name}:{path or '/'}")


@pytest.mark.parametrize("name, path", list(_schema_cases()))
def test_a_typo_in_any_table_is_rejected(name, path):
    rec = next(r for p, r, _ in _records(D.SCHEMAS[name], D.load(name)) if p == path)
    doc = copy.deepcopy(D.load(name))
    table = _at(doc, path)
    key = sorted(k for k in table if k in rec.keys)[0]
    typo = key[:-1] if len(key) > 2 else key + "x"
    assert typo not in rec.keys
    table[typo] = table.pop(key)
    with pytest.raises(DataFileError) as e:
        D.check(D.SCHEMAS[name], doc, name)
    msg = str(e.value)
    assert msg.startswith(name)
    if rec.others is None:
        assert f"unknown key {typo!r}" in msg and (not path or f"[{path}]" in msg)
        assert key in msg  # the accepted keys (and usually the closest one) are listed
    else:  # a table of fixed keys and named entries: the misspelt key is read as an entry
        assert typo in msg or key in msg


def test_a_mixed_table_checks_its_entries():
    schema = Record("order", others=Record("label nic_gbps"))
    D.check(schema, {"order": ["a"], "a": {"label": "A", "nic_gbps": 25.0}}, "x.toml")
    with pytest.raises(DataFileError, match=r"x.toml \[a\]: unknown key 'nic_gbp'"):
        D.check(schema, {"order": ["a"], "a": {"label": "A", "nic_gbp": 25.0}}, "x.toml")
    with pytest.raises(DataFileError, match=r"x.toml: missing required key\(s\) \['order'\]"):
        D.check(schema, {"a": {"label": "A", "nic_gbps": 25.0}}, "x.toml")


def test_missing_required_key_and_empty_source_are_rejected():
    doc = copy.deepcopy(D.load("systems.toml"))
    del doc["systems"]["DGX-H100"]["nics_per_node"]
    missing = r"systems.toml \[systems.DGX-H100\]: missing required key\(s\) \['nics_per_node'\]"
    with pytest.raises(DataFileError, match=missing):
        D.check(D.SCHEMAS["systems.toml"], doc, "systems.toml")
    doc = copy.deepcopy(D.load("gpus.toml"))
    doc["H100-SXM"]["source"] = " "
    with pytest.raises(DataFileError, match="'source' must be a non-empty string"):
        D.check(D.SCHEMAS["gpus.toml"], doc, "gpus.toml")
    with pytest.raises(DataFileError, match="expected an array of tables"):
        D.check(D.SCHEMAS["course.toml"], {"module": {"id": 1}, "chapters": {}}, "course.toml")


def test_unknown_files_and_files_without_schema(monkeypatch):
    with pytest.raises(KeyError, match=r"unknown data file 'gpu.toml'. Closest: \['gpus.toml'"):
        D.load("gpu.toml")
    with pytest.raises(KeyError, match="relative to labutil/data"):
        D.path("../pyproject.toml")
    monkeypatch.delitem(D.SCHEMAS, "links.toml")
    D.load.cache_clear()
    try:
        with pytest.raises(DataFileError, match="links.toml has no schema"):
            D.load("links.toml")
    finally:
        D.load.cache_clear()
    assert D.text("k8s/ch20-gpu-pods.yaml").lstrip().startswith(("apiVersion", "#", "---"))


def test_table_lookup_rule():
    t = D.table("systems.toml", "systems", kind="system")
    assert t.key("DGX-H100") == t.key(" dgx h100 ") == t.key("HGX-H100") == "DGX-H100"
    assert t.names() == list(D.load("systems.toml")["systems"]) == cluster.systems()
    assert "hgx h800" in t and "HGX-H900" not in t and 3 not in t
    with pytest.raises(KeyError) as e:
        t["DGX-H10"]
    assert "unknown system 'DGX-H10'" in str(e.value) and "Closest: ['DGX-H100'" in str(e.value)
    with pytest.raises(KeyError, match="system name must be a string"):
        t[None]
    with pytest.raises(DataFileError, match="'ndr' names both 'a' and 'b'"):
        D.Table("fabric", {"a": {"aliases": ["NDR"]}, "b": {"aliases": ["ndr"]}})
    with pytest.raises(KeyError, match="no such table"):
        D.table("prices.toml", "servers", kind="x")
    with pytest.raises(DataFileError, match="not a table of named entries"):
        D.table("prices.toml", "facility", kind="x")


def test_the_five_lookups_go_through_the_table():
    """hardware, cluster systems, transformer presets, storage tiers and price entries share one rule."""
    assert hardware.gpu("h100") is hardware.gpu("H100-SXM") is hardware.catalog("gpus")["h100-sxm5"]
    assert cluster.Cluster.system("hgx h100").name == "DGX-H100"
    assert models.transformer("LLaMA2-7B") is models.transformer("llama2-7b")
    assert storage.media(storage.media_names()[0].upper()).name == storage.media_names()[0]
    from labutil import cost
    assert cost.network_usd_per_gpu("ib-ndr-400g") == cost.network_usd_per_gpu("IB-NDR-400G")
    for call, kind in ((lambda: hardware.gpu("H1000"), "GPU"), (lambda: cluster.Cluster.system("DGX-H1000"), "system"),
                       (lambda: models.transformer("llama9"), "transformer model"),
                       (lambda: storage.media("nvme9"), "storage media"),
                       (lambda: cost.fabric_node_gbps("IB-XDR"), "network price entry")):
        with pytest.raises(KeyError, match=f"unknown {kind} .*Closest"):
            call()


def test_dataclass_and_schema_must_agree():
    # hardware.Switch without its 'family' field (switches.toml has the key)
    spec = [(f.name, f.type) if f.default is MISSING else (f.name, f.type, field(default=f.default))
            for f in fields(hardware.Switch) if f.name != "family"]
    no_family = make_dataclass("NoFamily", spec, frozen=True)
    with pytest.raises(DataFileError, match=r"only in the schema \['family'\]"):
        D.table("switches.toml", kind="switch", cls=no_family)
    for kind in ("gpus", "nics", "switches", "servers"):
        assert len(hardware.catalog(kind)) >= 3


def test_systems_and_servers_describe_the_same_machines_alike():
    """systems.toml (cluster building blocks) points at servers.toml (the server datasheet) with ``server``:
    where both describe one machine (DGX-H100: ``nics_per_node = 8`` vs ``compute_nics = 8``) they agree."""
    linked = 0
    for name, e in D.table("systems.toml", "systems", kind="system").items():
        if "server" not in e:
            continue
        s = hardware.server(e["server"])
        linked += 1
        assert (hardware.gpu(e["gpu"]).name, e["gpus_per_node"], e["nic"], e["nics_per_node"]) == \
               (s.gpu_spec.name, s.gpus, s.compute_nic, s.compute_nics), name
        if "nic_gbps" not in e:
            assert hardware.nic(e["nic"]).port_gbps == s.nic_spec.port_gbps
    assert linked >= 3
    c = cluster.Cluster.system("DGX-H100")
    assert (c.nics_per_node, c.nic_gbps) == (hardware.server("DGX-H100").compute_nics,
                                             hardware.server("DGX-H100").nic_spec.port_gbps) == (8, 400.0)
