"""The data files of ``labutil/data/``: one loader, one strict schema per TOML file, one look-up rule.

Every catalog and reference file of the course is read through this module:

- :func:`load` ``("gpus.toml")`` — the parsed TOML file, read once (cached) and checked against its
  schema in :data:`SCHEMAS`: an unknown key (a typo such as ``bf16_tflop``) or a missing required
  key raises :class:`DataFileError` naming the file, the entry, the key and the accepted keys. The
  returned dict is shared by every caller: read it, never modify it.
- :func:`table` ``("systems.toml", "systems", kind="system")`` — the entries of one TOML table as a
  :class:`Table`: canonical names in file order, look-up by the exact name or, case-insensitively,
  by name or alias; an unknown name raises ``KeyError`` listing the closest names
  (``validate.unknown_name``). With ``cls=`` every entry becomes ``cls(name=key, **entry)`` (lists
  turned into tuples), the way ``hardware`` builds its frozen dataclasses.
- :func:`text` / :func:`path` — the raw text or the location of any data file (YAML, CSV, JSON, a
  sample inventory a parser reads as a user's file).

A new TOML file needs its schema here (``load`` refuses a file without one); a new key in an entry
needs its name in the schema, and, where a dataclass holds the entries (``cls=``), a field of the
same name (``table`` checks that the two agree).

>>> table("gpus.toml", kind="GPU")["h100"]["bf16_tflops"]
989.4
>>> table("systems.toml", "systems", kind="system").key("HGX H100")
'DGX-H100'
>>> check(SCHEMAS["links.toml"], {"pcie": {"gen5": {"signal_gbps": 32, "eficiency": 0.98}}},
...       "links.toml")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
labutil.data_files.DataFileError: links.toml [pcie.gen5]: unknown key 'eficiency' (closest: ['efficiency', ...]); ...
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from functools import lru_cache
from importlib import resources
from importlib.abc import Traversable
from typing import Any

from . import validate

__all__ = ["DataFileError", "Record", "Entries", "Rows", "SCHEMAS", "Table", "check", "load", "path", "table",
           "text", "toml_files"]


class DataFileError(ValueError):
    """A data file that does not follow its schema (unknown key, missing key, wrong shape)."""


# ============================================================================================
# schemas
# ============================================================================================
def _names(keys) -> tuple[str, ...]:
    return tuple(keys.split()) if isinstance(keys, str) else tuple(keys)


@dataclass(frozen=True, eq=False)
class Record:
    """A TOML table with a fixed set of keys.

    ``required`` must be present, ``optional`` may be (both: names, or one whitespace-separated
    string); any other key is an error, unless ``others`` is given: then every other key is a named
    entry following ``others`` (a table that mixes fixed keys with entries, e.g. ``order`` beside
    the configurations it orders). ``nested`` gives the schema of keys whose values are tables or
    arrays of tables; a nested key is required unless it is also listed in ``optional``. A key
    named ``source`` must hold a non-empty string.
    """

    required: tuple[str, ...] | str = ()
    optional: tuple[str, ...] | str = ()
    nested: Mapping[str, Record | Entries | Rows] = field(default_factory=dict)
    others: Record | Entries | Rows | None = None

    def __post_init__(self):
        object.__setattr__(self, "required", _names(self.required))
        object.__setattr__(self, "optional", _names(self.optional))

    @property
    def keys(self) -> frozenset[str]:
        """Every accepted key."""
        return frozenset(self.required) | frozenset(self.optional) | frozenset(self.nested)

    @property
    def required_keys(self) -> frozenset[str]:
        return (frozenset(self.required) | frozenset(self.nested)) - frozenset(self.optional)


@dataclass(frozen=True, eq=False)
class Entries:
    """A TOML table of named entries (``[H100-SXM]``, ``[systems.DGX-H100]``): any entry name, each
    entry following ``entry``; ``entry=None`` leaves the values free (``course.toml [chapters]``,
    a case's ``[evidence]`` texts)."""

    entry: Record | Entries | Rows | None


@dataclass(frozen=True, eq=False)
class Rows:
    """An array of tables (``[[layer]]``), each row following ``row``."""

    row: Record


def check(schema: Record | Entries | Rows | None, value: Any, where: str, _at: str = "") -> None:
    """Raise :class:`DataFileError` unless ``value`` follows ``schema`` (``where``: the file, for the message)."""
    if schema is None:
        return
    here = f"{where} [{_at}]" if _at else where
    if isinstance(schema, Rows):
        if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
            raise DataFileError(f"{here}: expected an array of tables ([[...]]); got {type(value).__name__}")
        for i, row in enumerate(value):
            check(schema.row, row, where, f"{_at}[{i}]")
        return
    if not isinstance(value, dict):
        raise DataFileError(f"{here}: expected a table; got {type(value).__name__} {value!r:.60}")
    if isinstance(schema, Entries):
        for name, entry in value.items():
            check(schema.entry, entry, where, _dot(_at, name))
        return
    accepted = schema.keys
    for key in value:
        if key in accepted:
            continue
        if schema.others is not None:
            check(schema.others, value[key], where, _dot(_at, key))
            continue
        close = validate.closest_names(key, accepted)
        hint = f" (closest: {close})" if close else ""
        raise DataFileError(f"{here}: unknown key {key!r}{hint}; accepted: {sorted(accepted)}")
    if "source" in value and not (isinstance(value["source"], str) and value["source"].strip()):
        raise DataFileError(f"{here}: 'source' must be a non-empty string; got {value['source']!r}")
    for key, sub in schema.nested.items():
        if key in value:
            check(sub, value[key], where, _dot(_at, key))
    missing = sorted(schema.required_keys - set(value))
    if missing:
        raise DataFileError(f"{here}: missing required key(s) {missing}")


def _dot(at: str, key: str) -> str:
    return f"{at}.{key}" if at else str(key)


# Shared shapes
_SAMPLE = Record("title source text")

#: The schema of every TOML file in ``labutil/data/`` (path relative to it). Hardware entries mirror
#: the dataclasses of ``labutil.hardware`` / ``storage`` / ``models`` (``table(cls=...)`` checks it).
SCHEMAS: dict[str, Record | Entries | Rows] = {
    # -- hardware catalog (labutil.hardware) --
    "gpus.toml": Entries(Record(
        "bf16_tflops fp8_tflops tf32_tflops fp64_tflops hbm_gb hbm_gbs nvlink_gbs tdp_w source",
        optional="vendor arch form_factor fp64_tensor_tflops aliases published_range")),
    "nics.toml": Entries(Record("port_gbps ports pcie_gen pcie_lanes protocols power_w source",
                                optional="vendor aliases")),
    "switches.toml": Entries(Record("ports port_gbps switching_tbps source",
                                    optional="vendor family form_factor_u transceiver_power_w aliases")),
    "servers.toml": Entries(Record(
        "gpu gpus cpu cpu_cores ram_gb compute_nic compute_nics storage_nics nvme_tb rack_units max_power_w "
        "power_is_estimate source", optional="vendor aliases")),
    # -- cluster building blocks (labutil.cluster) --
    "systems.toml": Record(nested={
        "network": Record("nic_efficiency source"),
        "scaleup": Record("ring_efficiency source"),
        "socket": Record("tcp_efficiency tcp_efficiency_jumbo default_streams_per_nic stream_gbs source"),
        "systems": Entries(Record(
            "gpu gpus_per_node scaleup_domain_gpus nvls nic nics_per_node scaleup_ring_busbw_gbs "
            "scaleup_nvls_busbw_gbs busbw_source source", optional="server aliases nic_gbps nccl_channels")),
    }, optional="socket"),
    # -- link generations (labutil.links) --
    "links.toml": Record(nested={
        "pcie": Entries(Record("signal_gbps efficiency encoding source", optional="year")),
        "ib": Entries(Record("signal_gbps efficiency encoding source", optional="year")),
    }),
    # -- transformer presets (labutil.models) --
    "models.toml": Entries(Record(
        "layers hidden heads kv_heads ffn_hidden vocab seq_len source",
        optional="gated_mlp tied_embeddings bias norm learned_pos_emb published_params train_tokens num_experts "
                 "experts_per_token shared_experts moe_ffn_hidden dense_layers attn_head_dim q_lora_rank "
                 "kv_lora_rank rope_head_dim dropout alibi fused_qkv")),
    # -- storage (labutil.storage, labutil.fioparse) --
    "storage.toml": Record(nested={
        "media": Entries(Record("kind interface capacity_tb read_gbs write_gbs read_iops write_iops source",
                                optional="aliases")),
        "server": Entries(Record("role media drives nics nic_gbps data_efficiency source", optional="aliases")),
    }),
    "storage_samples.toml": Entries(Record("source text")),
    # -- prices (labutil.cost) --
    "prices.toml": Record(nested={
        "server": Entries(Record("price_usd kind date source", optional="range_usd")),
        "network": Entries(Record("usd_per_gpu node_gbps kind date source", optional="range_usd")),
        "storage": Entries(Record("usd_per_tb kind date source", optional="range_usd read_gbs_per_tb")),
        "facility": Record("usd_per_kw kind date source", optional="range_usd basis"),
        "electricity": Record("usd_per_kwh kind date source", optional="range_usd"),
        "staff": Record("usd_per_fte_year servers_per_fte kind date source"),
        "maintenance": Record("fraction_of_hardware_per_year kind date source", optional="range"),
        "cloud": Entries(Record("usd_per_gpu_hour kind date source")),
    }),
    # -- facility (labutil.power) --
    "facility.toml": Record(nested={
        "cooling": Record("air_room_max_kw air_room_source air_containment_max_kw air_containment_source "
                          "rear_door_max_kw rear_door_source direct_liquid_source"),
        "pue": Record("industry_average industry_average_source hyperscale_best hyperscale_best_source"),
        "rack": Record("rack_units rack_units_source reserved_units reserved_units_source"),
        # rack-scale systems (the rack is the unit: GB200 NVL72), ch09/ch10
        "rack_scale": Entries(Record("gpus compute_trays cpus cpu cpu_cores cpu_memory_gb compute_nics su_racks su_kw "
                                     "cooling source")),
    }),
    # -- reliability references (labutil.reliability) --
    "reliability.toml": Record(nested={
        "llama3": Record(
            "title snapshot_days gpus gpu gpus_per_host total_interruptions planned_interruptions "
            "unexpected_interruptions hardware_share gpu_share_printed effective_training_time_min "
            "manual_interventions source", optional="note",
            nested={"table5": Rows(Record("component category count printed_pct part"))}),
        "kokolis2024": Record("title rsc1_failures_per_1000_node_days rsc2_failures_per_1000_node_days "
                              "rsc1_projected_mttf_16k_gpus_h gpus_per_node source"),
        "seed000": Record("gpus gpu_mtbf_hours source"),
        "opt175b": Record("title gpus gpu manual_restarts_min automatic_restarts_min hosts_cycled_min days source"),
        "byterobust2025": Record("title gpus months ettr source"),
        "samples": Entries(_SAMPLE),
    }, optional="samples"),
    # -- GPU sharing (labutil.sharing) --
    "mig_profiles.toml": Record(nested={
        "gpu": Entries(Record("catalog_gpu compute_slices memory_slices sm_full source", nested={
            "profile": Rows(Record("name id compute_slices memory_slices max_instances placements memory_gib sm"))})),
        "isolation": Rows(Record("mechanism layer memory faults performance network note source")),
    }),
    # -- containers, inventory (labutil.containers, labutil.inventory) --
    "gpu_operator.toml": Record("source", nested={
        "component": Rows(Record("name k8s_object role depends_on optional breaks_if_missing"))}),
    "cuda_compat.toml": Record("source", nested={
        "minor_compat": Rows(Record("major min_driver below_driver source")),
        "toolkit": Rows(Record("version label linux_min_driver windows_min_driver")),
    }),
    "inventory_sample.toml": Record(nested={
        "cluster": Record("name server nvswitch source"),
        "baseline": Record(nested={"bios": Entries(None)}),
        "node": Rows(Record(
            "hostname rack rack_u driver cuda fabric_manager fabric_manager_state ofed nccl bios_version "
            "bmc_firmware nic_firmware gpu_vbios",
            nested={"bios": Entries(None),
                    "pcie": Rows(Record("name kind bdf cap_gen cap_width sta_gen sta_width", optional="rate_gbps"))},
            optional="bios pcie")),
        "samples": Entries(Record("source text")),
    }, optional="baseline samples"),
    # -- course structure and scenarios (labutil.coursemap, labutil.architecture, labutil.workloads) --
    "course.toml": Record(nested={
        "module": Rows(Record("id title_zh title_en phase chapters requires")),
        "chapters": Entries(None),
    }),
    "software_stack.toml": Record(nested={
        "layer": Rows(Record("name role nvidia amd huawei chapter"))}),
    "workloads.toml": Record(nested={
        "seed_table": Rows(Record("seed title columns rows")),
        "workload": Rows(Record(
            "key kind name_zh name_en gpus gpu model params tp_pp step_compute_s sync_bytes grad_bytes read_mb_per_gpu_s "
            "files_per_gpu_s latency_ms fp64 jobs_per_day run_days")),
    }),
    # -- tool output samples (labutil.parsers.samples) --
    "samples_nccl.toml": Entries(_SAMPLE),
    "samples_tools.toml": Entries(_SAMPLE),
    "samples_fabric.toml": Entries(_SAMPLE),
    "samples_public.toml": Entries(_SAMPLE),
    # -- troubleshooting (labutil.troubleshoot) --
    "troubleshoot_cases.toml": Entries(Record(
        "title symptom root_layer root_check root_cause",
        nested={"workload": Entries(None), "evidence": Entries(None), "sources": Entries(None)})),
    "troubleshoot_incidents.toml": Entries(Record(
        "title source symptom expected_layer obvious_layer lesson notes", optional="n_ranks",
        nested={"evidence": Entries(None)})),
    "troubleshoot_bundles.toml": Entries(_SAMPLE),
    "troubleshoot_lexicon.toml": Record(nested={
        "meta": Record("source failure_en failure_zh healthy_after_en healthy_after_zh stop scale_en scale_zh"),
        "group": Rows(Record("layer check weight phrases"))}),
    "failure_signatures.toml": Record(nested={"signature": Entries(Record(
        "layer title observation root_cause confirm check minutes kinds contradicts cues",
        nested={"incident": Rows(Record("title url fixed_by"))}))}),
    # -- the cluster model (labutil.scenarios, labutil.nccl_tuning, labutil.busbw_validation) --
    "scenarios.toml": Record(nested={
        "clusters": Entries(Record("system n_nodes name description",
                                   optional="aliases nics_per_node nic_gbps fabric_tiers")),
        "networks": Entries(Record("label nics_per_node nic_gbps")),
        "dp_configs": Record("order", others=Record("label nic_gbps nics_per_node")),
        "scaling": Record("default oversubscribed", others=Record(
            "label nic_gbps nics_per_node algo", optional="oversubscription nodes_per_leaf")),
    }),
    "nccl_public_results.toml": Record(nested={
        "row": Rows(Record("id url what cluster n_nodes op algo measured_gbs tolerance role",
                           optional="ranks nics_per_node gpus_per_node scaleup_gbs nic_gbps transport "
                                    "socket_streams_per_nic size_bytes nvls note")),
        "paste": Rows(Record("id url what ranks op text")),
    }, optional="paste"),
    "nccl_tuning.toml": Record(nested={
        "v2_7_5": Record("version source ll128_max_bw_per_ch_allreduce_gbs", nested={
            "base_lat_us": Record("tree ring"), "tree_correction": Record("LL LL128 Simple"),
            "hw_lat_us": Entries(Record("tree ring"))}),
        "v2_30_7": Record(
            "version source ring_ll_factor ring_ll128_factor tree_factor tree_ll_factor tree_ll128_factor_one_node "
            "tree_ll128_factor_multi_node ring_plateau_min_bytes_per_channel_rank net_overhead_simple_factor",
            nested={"base_lat_us": Record("tree ring nvls nvls_tree"), "tree_correction": Record("LL LL128 Simple"),
                    "ll_max_bw_single_node_gbs": Record("Volta Ampere Hopper Blackwell"),
                    "ll_max_bw_multi_node_gbs": Record("intel amd"),
                    "ring_plateau_factor": Record("pre_ampere ampere_plus"),
                    "net_overhead_us": Record("intel amd"),
                    "hw_lat_us": Entries(Record("tree ring nvls nvls_tree"))}),
    }),
    # -- vendored CRDs (tests/test_k8s_manifests.py) --
    "crds/SOURCES.toml": Entries(Record("file api_version repo commit date path blob")),
}


# ============================================================================================
# files
# ============================================================================================
def toml_files() -> list[str]:
    """Every ``*.toml`` under ``labutil/data/`` (paths relative to it, sorted)."""
    out = []

    def walk(node: Traversable, prefix: str) -> None:
        for child in node.iterdir():
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            elif child.name.endswith(".toml"):
                out.append(prefix + child.name)

    walk(resources.files("labutil").joinpath("data"), "")
    return sorted(out)


def path(name: str) -> Traversable:
    """The data file ``name`` (relative to ``labutil/data/``, ``/``-separated); KeyError if there is none."""
    if not isinstance(name, str) or not name or name.startswith("/") or ".." in name.split("/"):
        raise KeyError(f"data file name must be a path relative to labutil/data/; got {name!r}")
    p = resources.files("labutil").joinpath("data", *name.split("/"))
    if not p.is_file():
        raise validate.unknown_name("data file", name, toml_files())
    return p


def text(name: str) -> str:
    """The text (UTF-8) of the data file ``name``."""
    return path(name).read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def load(name: str) -> dict:
    """The parsed TOML file ``name`` (e.g. ``"gpus.toml"``), checked against ``SCHEMAS[name]``; cached and
    shared by every caller, so never modify it."""
    if name not in SCHEMAS:
        if isinstance(name, str) and name.endswith(".toml"):
            path(name)  # an unknown file: KeyError listing the closest names
            raise DataFileError(f"{name} has no schema: add one to labutil.data_files.SCHEMAS")
        raise validate.unknown_name("data file", name, SCHEMAS)
    try:
        doc = tomllib.loads(text(name))
    except tomllib.TOMLDecodeError as exc:
        raise DataFileError(f"{name}: not valid TOML ({exc})") from None
    check(SCHEMAS[name], doc, name)
    return doc


# ============================================================================================
# look-up tables
# ============================================================================================
def _aliases(entry: Any) -> tuple[str, ...]:
    a = entry.get("aliases", ()) if isinstance(entry, Mapping) else getattr(entry, "aliases", ())
    return tuple(a or ())


class Table(Mapping):
    """Named entries with the course's look-up rule.

    Iterates over canonical names in file order. ``table[name]`` accepts the exact canonical name or,
    ignoring case and surrounding spaces, a canonical name or an alias (an entry's ``aliases``);
    anything else raises ``KeyError`` listing the closest names. Two entries claiming the same
    name or alias is an error in the data, raised when the table is built.

    >>> t = Table("fabric", {"IB-NDR": {"aliases": ["NDR"]}, "RoCE": {}})
    >>> t.key(" ndr "), list(t), "roce" in t
    ('IB-NDR', ['IB-NDR', 'RoCE'], True)
    >>> t["XDR"]
    Traceback (most recent call last):
    ...
    KeyError: "unknown fabric 'XDR'. Closest: ['IB-NDR']. Known: ['IB-NDR', 'RoCE']"
    """

    def __init__(self, kind: str, entries: Mapping[str, Any]):
        self.kind = kind
        self._entries = dict(entries)
        self._index: dict[str, str] = {}
        for name, entry in self._entries.items():
            for spelling in (name, *_aliases(entry)):
                k = str(spelling).strip().lower()
                other = self._index.setdefault(k, name)
                if other != name:
                    raise DataFileError(f"{kind} table: {spelling!r} names both {other!r} and {name!r}")

    def key(self, name: str) -> str:
        """The canonical name of ``name`` (exact, or case-insensitive name or alias)."""
        if not isinstance(name, str):
            raise KeyError(f"{self.kind} name must be a string; got {name!r}")
        if name in self._entries:
            return name
        try:
            return self._index[name.strip().lower()]
        except KeyError:
            raise validate.unknown_name(self.kind, name, self._entries) from None

    def item(self, name: str) -> tuple[str, Any]:
        """``(canonical name, entry)`` of ``name``."""
        k = self.key(name)
        return k, self._entries[k]

    def __getitem__(self, name: str) -> Any:
        return self._entries[self.key(name)]

    def __contains__(self, name: object) -> bool:
        try:
            self.key(name)  # type: ignore[arg-type]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        """Canonical names in file order."""
        return list(self._entries)

    def __repr__(self) -> str:
        return f"Table({self.kind!r}, {self.names()})"


def _tuples(entry: Mapping) -> dict:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in entry.items()}


def _check_class(cls: type, schema: Record, where: str) -> None:
    """The dataclass ``cls`` and the schema must accept the same keys, and require the same ones."""
    if not is_dataclass(cls):
        raise TypeError(f"cls must be a dataclass; got {cls!r}")
    fs = {f.name: f for f in fields(cls) if f.name != "name"}
    if set(fs) != schema.keys:
        raise DataFileError(f"{where}: schema and {cls.__name__} disagree: only in the schema "
                            f"{sorted(schema.keys - set(fs))}, only in {cls.__name__} {sorted(set(fs) - schema.keys)}")
    required = {n for n, f in fs.items() if f.default is MISSING and f.default_factory is MISSING}
    if required - schema.required_keys:
        raise DataFileError(f"{where}: {cls.__name__} requires {sorted(required - schema.required_keys)}, "
                            "which the schema leaves optional")


@lru_cache(maxsize=None)
def table(name: str, *section: str, kind: str, cls: type | None = None) -> Table:
    """The entries of ``[section...]`` of the TOML file ``name`` (the top level if no section) as a cached
    :class:`Table`; ``kind`` names an entry in messages ("GPU", "system"). With ``cls`` (a dataclass
    whose fields are the schema's keys plus ``name``) each entry becomes ``cls(name=key, **entry)``.

    >>> table("prices.toml", "network", kind="fabric price entry").names()[:2]
    ['IB-NDR-400G', 'IB-HDR-200G']
    """
    doc: Any = load(name)
    schema: Any = SCHEMAS[name]
    where = f"{name} [{'.'.join(section)}]" if section else name
    for s in section:
        if not isinstance(doc, dict) or s not in doc:
            raise KeyError(f"{where}: no such table")
        doc = doc[s]
        schema = schema.nested.get(s) if isinstance(schema, Record) else schema.entry
    if not isinstance(schema, Entries):
        raise DataFileError(f"{where} is not a table of named entries")
    entries = doc
    if cls is not None:
        if not isinstance(schema.entry, Record):
            raise DataFileError(f"{where}: entries have no fixed keys to build {cls.__name__} from")
        _check_class(cls, schema.entry, where)
        entries = {k: cls(name=k, **_tuples(e)) for k, e in doc.items()}
    return Table(kind, entries)
