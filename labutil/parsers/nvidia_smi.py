"""Parsers for ``nvidia-smi`` output: the default table, ``--query-gpu ... --format=csv``, ``-q`` and ``topo -m``.

Formats: NVIDIA "nvidia-smi" man page / System Management Interface documentation (driver
R470-R570): ``--format=csv[,noheader][,nounits]`` prints ``index, name, memory.total [MiB]``
headers and ``81559 MiB`` values, ``[N/A]`` / ``[Not Supported]`` where a field is unavailable;
``-q`` prints an indented ``Key : Value`` tree per ``GPU 00000000:18:00.0`` section; ``topo -m``
prints a tab-separated matrix (``X``, ``NV#``, ``PIX``, ``PXB``, ``PHB``, ``NODE``, ``SYS``) with
``CPU Affinity`` / ``NUMA Affinity`` / ``GPU NUMA ID`` columns, a ``Legend`` and a ``NIC Legend``.
"""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from ._common import ParseError, require_text, to_float, to_int

__all__ = ["NvidiaSmiCsv", "parse_nvidia_smi_csv", "NvidiaSmiGpu", "NvidiaSmiQ", "parse_nvidia_smi_q",
           "NvidiaSmiTopo", "parse_nvidia_smi_topo", "LINK_RANK", "NvidiaSmiTable", "NvidiaSmiTableGpu",
           "NvidiaSmiProcess", "parse_nvidia_smi", "parse_nvidia_smi_xml", "looks_like_nvidia_smi_xml"]

# ----------------------------------------------------------------------------------------- csv
_NA = {"[n/a]", "n/a", "[not supported]", "not supported", "[unknown error]", "[insufficient permissions]",
       "[gpu is lost]", "[gpu requires reset]", ""}
_FIELD = re.compile(r"^[a-z_][a-z0-9_.]*(?:\s*\[[^\]]*\])?$")
_VALUE_UNIT = re.compile(r"^([-+]?\d+(?:\.\d+)?)\s*([A-Za-z%/]+)?$")


@dataclass
class NvidiaSmiCsv:
    """Rows of ``nvidia-smi --query-gpu=... --format=csv``: values are float (numbers, unit
    stripped), int for ``index``, str for text, None for N/A / Not Supported."""

    fields: tuple[str, ...]
    units: dict
    rows: list[dict]
    skipped_lines: int = 0

    def column(self, name: str) -> list:
        if name not in self.fields:
            raise KeyError(f"no field {name!r}; fields: {list(self.fields)}")
        return [r[name] for r in self.rows]


def _csv_value(name: str, raw: str, units: dict):
    s = raw.strip()
    if s.lower() in _NA:
        return None
    m = _VALUE_UNIT.match(s)
    if m:
        if m.group(2):
            units.setdefault(name, m.group(2))
        x = float(m.group(1))
        if name == "index" or name.endswith(".index"):
            return int(x)
        return x
    return s


def parse_nvidia_smi_csv(text, fields=None) -> NvidiaSmiCsv:
    """Parse ``--format=csv`` output, with or without ``noheader`` / ``nounits``.

    For ``noheader`` output pass ``fields`` (the ``--query-gpu`` list, as a list or the
    comma-separated string); otherwise the header line names the fields.
    """
    text = require_text(text, "nvidia-smi csv")
    lines = [ln for ln in text.split("\n") if ln.strip()]
    try:
        table = list(csv.reader(io.StringIO("\n".join(lines)), skipinitialspace=True))
    except csv.Error as exc:
        raise ParseError(f"nvidia-smi csv: not CSV ({exc})") from None
    units: dict = {}
    first = [c.strip() for c in table[0]]
    if all(_FIELD.match(c) for c in first) and first:
        names = []
        for c in first:
            m = re.match(r"^([^\[]+?)\s*(?:\[([^\]]*)\])?$", c)
            names.append(m.group(1).strip())
            if m.group(2):
                units[m.group(1).strip()] = m.group(2)
        body = table[1:]
    elif fields is not None:
        if isinstance(fields, str):
            fields = [f for f in fields.split(",")]
        names = [str(f).strip() for f in fields]
        if not names or not all(_FIELD.match(n) for n in names):
            raise ParseError(f"nvidia-smi csv: fields must be --query-gpu names such as 'index,name'; got {fields!r}")
        body = table
    else:
        raise ParseError("nvidia-smi csv: no header line (output made with 'noheader'?): pass fields=[...] "
                         "with the --query-gpu list")
    rows, skipped = [], 0
    for rec in body:
        if len(rec) != len(names):
            skipped += 1
            continue
        rows.append({n: _csv_value(n, v, units) for n, v in zip(names, rec)})
    if not rows:
        raise ParseError(f"nvidia-smi csv: no data row with {len(names)} fields ({', '.join(names)})")
    return NvidiaSmiCsv(tuple(names), units, rows, skipped)


# ------------------------------------------------------------------------------------------ -q
# "Key : Value" ("Key:" without a blank before the colon is not a -q line: it is interleaved stderr)
def _kv(body: str):
    """(key, value) of a stripped '-q' line "Key   : Value", else None. The key ends with a blank
    before the colon ("WARNING: ..." is interleaved stderr, not a key); str.partition keeps it linear."""
    k, colon, v = body.partition(":")
    if not colon or not k or k[-1] not in " \t" or not k.strip():
        return None
    return k.strip(), v[1:].rstrip() if v[:1] in (" ", "\t") else v.rstrip()
_GPU_SECTION = re.compile(r"^GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")


def _indent(line: str) -> int:
    """Columns of leading blanks (a tab is 4 columns: the -q tree indents by 4 spaces per level)."""
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip(" "))


def _tree(lines: list[str]) -> dict:
    """Indented 'Key : Value' lines (and bare section names) -> nested dict."""
    root: dict = {}
    stack: list[tuple[int, dict]] = [(-1, root)]
    for line in lines:
        if not line.strip():
            continue
        indent = _indent(line)
        body = line.strip()
        while len(stack) > 1 and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        m = _kv(body)
        if m:
            parent.setdefault(m[0], m[1].strip())
        else:
            child: dict = {}
            if body not in parent:
                parent[body] = child
            stack.append((indent, child))
    return root


# Bare section names of a GPU block of `nvidia-smi -q` (driver R470-R580 outputs; the real R580
# output quoted in the triage tests lists them), used only when a paste lost its indentation.
_Q_SECTIONS = frozenset({
    "MIG Mode", "Driver Model", "Platform Info", "Inforom Version", "Inforom BBX Object Flush", "GPU Operation Mode",
    "GPU Virtualization Mode", "IBMNPU", "PCI", "Clocks Event Reasons", "Clocks Throttle Reasons",
    "Clocks Event Reasons Counters", "FB Memory Usage", "BAR1 Memory Usage", "Conf Compute Protected Memory Usage",
    "Utilization", "Encoder Stats", "FBC Stats", "DRAM Encryption Mode", "ECC Mode", "ECC Errors", "Retired Pages",
    "Remapped Rows", "Temperature", "GPU Power Readings", "Power Readings", "GPU Memory Power Readings",
    "Module Power Readings", "Power Smoothing", "Workload Power Profiles", "Clocks", "Applications Clocks",
    "Default Applications Clocks", "Deferred Clocks", "Max Clocks", "Max Customer Boost Clocks", "Clock Policy",
    "Voltage", "Fabric", "Processes", "Capabilities", "Supported Clocks", "GPU Reset Status", "Accounted Processes",
    "Clocks_Event_Reasons"})
_Q_ECC_GROUPS = ("Volatile", "Aggregate")


def _flat_tree(lines: list[str]) -> dict:
    """The tree of a GPU block whose indentation was lost (a chat tool or web page stripped it, or
    every line got one tab): known section names open a section, other bare names a subsection of
    the current one (``Single Bit`` / ``Double Bit`` under ``Volatile`` / ``Aggregate``, drivers <=
    R450); every key is also kept at the top (first one wins) so top-level keys after a section are
    found."""
    root: dict = {}
    path: list[str] = []

    def node(p):
        d = root
        for k in p:
            nxt = d.get(k)
            if not isinstance(nxt, dict):
                nxt = {}
                d[k] = nxt
            d = nxt
        return d

    for line in lines:
        body = line.strip()
        if not body:
            continue
        m = _kv(body)
        if m:
            k, v = m[0], m[1].strip()
            node(path).setdefault(k, v)
            root.setdefault(k, v)
        elif body in _Q_SECTIONS or not path:
            path = [body]
        elif len(path) >= 2 and path[1] in _Q_ECC_GROUPS and body in ("Single Bit", "Double Bit"):
            path = path[:2] + [body]
        else:
            path = [path[0], body]
        if not m:
            node(path)
    return root


def _section_tree(body: list[str]) -> tuple[dict, int]:
    """(tree, number of junk lines dropped) of one GPU block. The block's lines are indented; an
    unindented line that is not 'Key : Value' was interleaved into the output (stderr of ``2>&1``,
    e.g. ``WARNING: infoROM is corrupted at gpu ...``, or a shell prompt) and is dropped instead of
    being read as a section that swallows the rest. A block whose lines all share one indentation
    lost its structure on the way and is rebuilt from the known section names."""
    lines = [ln for ln in body if ln.strip()]
    if not lines:
        return {}, 0
    ind = [_indent(ln) for ln in lines]
    kept = [ln for ln, i in zip(lines, ind) if i > 0 or _kv(ln.strip())] \
        if sum(i > 0 for i in ind) >= 0.5 * len(lines) else lines
    junk = len(lines) - len(kept)
    if len({_indent(ln) for ln in kept}) > 1:
        return _tree(kept), junk
    return _flat_tree(kept), junk


def _get(d, *path):
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return None
        d = d[p]
    return d


def _first(d, *paths):
    for p in paths:
        v = _get(d, *p)
        if v is not None:
            return v
    return None


def _walk(d, prefix=()):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _walk(v, prefix + (k,))
        else:
            yield prefix + (k,), v


def _ecc_counts(section) -> tuple[int | None, int | None]:
    """(correctable, uncorrectable) totals of an ECC 'Volatile' / 'Aggregate' section."""
    if not isinstance(section, dict):
        return None, None
    if "Single Bit" in section or "Double Bit" in section:  # drivers <= R450: Single/Double Bit -> Total
        return to_int(_get(section, "Single Bit", "Total")), to_int(_get(section, "Double Bit", "Total"))
    corr = unc = None
    for path, v in _walk(section):
        key = path[-1].lower()
        n = to_int(v)
        if n is None:
            continue
        if "uncorrectable" in key:
            unc = (unc or 0) + n
        elif "correctable" in key:
            corr = (corr or 0) + n
    return corr, unc


def _yes(v) -> bool | None:
    if v is None:
        return None
    s = str(v).strip().lower()
    if s in ("yes", "true", "active", "enabled"):
        return True
    if s in ("no", "false", "not active", "disabled"):
        return False
    return None


@dataclass
class NvidiaSmiGpu:
    """One GPU of ``nvidia-smi -q``. Counters are None where the driver prints N/A."""

    index: int
    bus_id: str
    product_name: str | None
    serial: str | None
    uuid: str | None
    ecc_mode: str | None
    ecc_volatile_correctable: int | None
    ecc_volatile_uncorrectable: int | None
    ecc_aggregate_correctable: int | None
    ecc_aggregate_uncorrectable: int | None
    retired_pages_sbe: int | None
    retired_pages_dbe: int | None
    retired_pages_pending: bool | None
    remapped_rows_correctable: int | None
    remapped_rows_uncorrectable: int | None
    remapped_rows_pending: bool | None
    remapping_failure: bool | None
    throttle_active: tuple[str, ...]
    temperature_c: float | None
    slowdown_temp_c: float | None
    shutdown_temp_c: float | None
    power_draw_w: float | None
    power_limit_w: float | None
    raw: dict = field(default_factory=dict, repr=False)


@dataclass
class NvidiaSmiQ:
    driver_version: str | None
    cuda_version: str | None
    attached_gpus: int | None
    gpus: list[NvidiaSmiGpu]


def _gpu_from_tree(index: int, bus_id: str, t: dict) -> NvidiaSmiGpu:
    v_corr, v_unc = _ecc_counts(_get(t, "ECC Errors", "Volatile"))
    a_corr, a_unc = _ecc_counts(_get(t, "ECC Errors", "Aggregate"))
    throttle = _first(t, ("Clocks Event Reasons",), ("Clocks Throttle Reasons",), ("Clocks_Event_Reasons",))
    active = tuple(path[-1] for path, v in _walk(throttle) if str(v).strip().lower() == "active") \
        if isinstance(throttle, dict) else ()
    power = _first(t, ("GPU Power Readings",), ("Power Readings",)) or {}
    draw = _first(power, ("Power Draw",), ("Instantaneous Power Draw",), ("Average Power Draw",))
    limit = _first(power, ("Current Power Limit",), ("Enforced Power Limit",), ("Power Limit",))
    sbe = _first(t, ("Retired Pages", "Single Bit ECC"), ("Retired Pages", "Single Bit ECC", "Count"))
    dbe = _first(t, ("Retired Pages", "Double Bit ECC"), ("Retired Pages", "Double Bit ECC", "Count"))
    pending = _first(t, ("Retired Pages", "Pending Page Blacklist"), ("Retired Pages", "Pending Page Retirement"))
    return NvidiaSmiGpu(
        index=index, bus_id=str(_get(t, "PCI", "Bus Id") or bus_id),
        product_name=_get(t, "Product Name"), serial=_get(t, "Serial Number"), uuid=_get(t, "GPU UUID"),
        ecc_mode=_first(t, ("ECC Mode", "Current"), ("Ecc Mode", "Current")),
        ecc_volatile_correctable=v_corr, ecc_volatile_uncorrectable=v_unc,
        ecc_aggregate_correctable=a_corr, ecc_aggregate_uncorrectable=a_unc,
        retired_pages_sbe=to_int(sbe) if not isinstance(sbe, dict) else None,
        retired_pages_dbe=to_int(dbe) if not isinstance(dbe, dict) else None,
        retired_pages_pending=_yes(pending),
        remapped_rows_correctable=to_int(_get(t, "Remapped Rows", "Correctable Error")),
        remapped_rows_uncorrectable=to_int(_get(t, "Remapped Rows", "Uncorrectable Error")),
        remapped_rows_pending=_yes(_get(t, "Remapped Rows", "Pending")),
        remapping_failure=_yes(_get(t, "Remapped Rows", "Remapping Failure Occurred")),
        throttle_active=active,
        temperature_c=to_float(_get(t, "Temperature", "GPU Current Temp")),
        slowdown_temp_c=to_float(_get(t, "Temperature", "GPU Slowdown Temp")),
        shutdown_temp_c=to_float(_get(t, "Temperature", "GPU Shutdown Temp")),
        power_draw_w=to_float(draw) if isinstance(draw, str) else None,
        power_limit_w=to_float(limit) if isinstance(limit, str) else None,
        raw=t,
    )


def parse_nvidia_smi_q(text) -> NvidiaSmiQ:
    """Parse ``nvidia-smi -q``: one :class:`NvidiaSmiGpu` per ``GPU 0000xxxx:xx:xx.x`` section."""
    text = require_text(text, "nvidia-smi -q")
    if looks_like_nvidia_smi_xml(text):       # nvidia-smi -q -x: same result from the XML
        return parse_nvidia_smi_xml(text)
    lines = text.split("\n")
    head: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    for line in lines:
        m = _GPU_SECTION.match(line.strip())   # indented too: a paste may have lost or shifted indentation
        if m:
            sections.append((m.group(1), []))
        elif sections:
            sections[-1][1].append(line)
        else:
            head.append(line)
    if not sections:
        raise ParseError("nvidia-smi -q: no 'GPU 00000000:xx:xx.x' section found")
    top = _tree([ln.strip() for ln in head if not ln.strip().startswith("=")])
    trees = [_section_tree(body) for _, body in sections]
    gpus = [_gpu_from_tree(i, bus, t) for i, ((bus, _), (t, _j)) in enumerate(zip(sections, trees))]
    if all(not t for t, _ in trees):
        raise ParseError("nvidia-smi -q: the GPU sections hold no 'Key : Value' line")
    return NvidiaSmiQ(driver_version=top.get("Driver Version") if isinstance(top.get("Driver Version"), str) else None,
                      cuda_version=top.get("CUDA Version") if isinstance(top.get("CUDA Version"), str) else None,
                      attached_gpus=to_int(top.get("Attached GPUs")) if isinstance(top.get("Attached GPUs"), str) else None,
                      gpus=gpus)


# ---------------------------------------------------------------------------------------- topo
# Closeness order of the topo legend (nvidia-smi topo -m "Legend"; NVML nvmlGpuTopologyLevel_t):
# X self, NV# NVLink, PIX one PCIe switch, PXB several switches, PHB host bridge, NODE same NUMA
# node across host bridges, SYS across the SMP interconnect (QPI/UPI). SOC is the pre-R390 name of SYS.
LINK_RANK = {"X": 0, "NV": 1, "PIX": 2, "PXB": 3, "PHB": 4, "NODE": 5, "SYS": 6, "SOC": 6}
_CELL = re.compile(r"^(X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC)$")
_DEV = re.compile(r"^(GPU\d+|NIC\d+|mlx\d+_\d+|[a-z]+\d*_\d+|CPU\d*)$")
_AFF_COLS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")


def _link_rank(code: str) -> int:
    return LINK_RANK["NV"] if code.startswith("NV") else LINK_RANK.get(code, 9)


@dataclass
class NvidiaSmiTopo:
    """The ``nvidia-smi topo -m`` matrix. ``devices`` keeps the column order (GPU0.., NIC0..);
    ``nic_names`` maps NIC0 -> mlx5_0 from the NIC legend."""

    devices: list[str]
    matrix: dict
    cpu_affinity: dict
    numa_affinity: dict
    gpu_numa_id: dict
    nic_names: dict
    legend: dict

    @property
    def gpus(self) -> list[str]:
        return [d for d in self.devices if d.startswith("GPU")]

    @property
    def nics(self) -> list[str]:
        return [d for d in self.devices if not d.startswith("GPU") and not d.startswith("CPU")]

    def link(self, a: str, b: str) -> str:
        """Connection code between devices ``a`` and ``b`` ('NV18', 'PIX', 'SYS', ...)."""
        for x in (a, b):
            if x not in self.devices:
                raise KeyError(f"unknown device {x!r}; devices: {self.devices}")
        return self.matrix[(a, b)]

    def nic_name(self, nic: str) -> str:
        return self.nic_names.get(nic, nic)

    def nic_for_gpu(self, gpu: str) -> tuple[str, str]:
        """The closest NIC to ``gpu`` and its link code (ties -> lowest column); KeyError if no NIC."""
        if not self.nics:
            raise KeyError("the topology has no NIC columns")
        best = min(self.nics, key=lambda n: (_link_rank(self.link(gpu, n)), self.devices.index(n)))
        return self.nic_name(best), self.link(gpu, best)

    def gpu_nic_map(self) -> dict:
        """{'GPU0': ('mlx5_0', 'PIX'), ...}: which NIC each GPU should use (NCCL picks the same way)."""
        return {g: self.nic_for_gpu(g) for g in self.gpus}


def _split_topo(line: str) -> list[str]:
    s = line
    for i, col in enumerate(_AFF_COLS):
        s = s.replace(col, f"@AFF{i}@")
    return [t.replace("@AFF0@", _AFF_COLS[0]).replace("@AFF1@", _AFF_COLS[1]).replace("@AFF2@", _AFF_COLS[2])
            for t in s.split()]


def parse_nvidia_smi_topo(text) -> NvidiaSmiTopo:
    """Parse ``nvidia-smi topo -m``. Raises ParseError without a header and a GPU row."""
    text = require_text(text, "nvidia-smi topo -m")
    lines = text.split("\n")
    header = None
    aff_cols: list[str] = []
    devices: list[str] = []
    matrix: dict = {}
    cpu, numa, gnuma, names, legend = {}, {}, {}, {}, {}
    for line in lines:
        if not line.strip():
            continue
        tokens = _split_topo(line)
        m = re.match(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$", line)
        if m:
            names[m.group(1)] = m.group(2)
            continue
        m = re.match(r"^\s*(X|SYS|NODE|PHB|PXB|PIX|NV#|SOC|NV)\s+=\s+(.*)$", line)
        if m:
            legend[m.group(1)] = m.group(2).strip()
            continue
        if header is None:
            if tokens and tokens[0].startswith("GPU") and len(tokens) > 1 and not _CELL.match(tokens[1]):
                devs = [t for t in tokens if _DEV.match(t)]
                if devs and devs == tokens[:len(devs)]:
                    header = tokens
                    devices = devs
                    aff_cols = [t for t in tokens[len(devs):] if t in _AFF_COLS]
            continue
        if tokens[0] not in devices:
            continue
        cells = tokens[1:1 + len(devices)]
        if len(cells) != len(devices) or not all(_CELL.match(c) for c in cells):
            continue
        dev = tokens[0]
        for other, c in zip(devices, cells):
            matrix[(dev, other)] = c
        rest = tokens[1 + len(devices):]
        for col, val in zip(aff_cols, rest):
            if col == "CPU Affinity":
                cpu[dev] = val
            elif col == "NUMA Affinity":
                numa[dev] = to_int(val)
            else:
                gnuma[dev] = to_int(val)
    if header is None:
        raise ParseError("nvidia-smi topo -m: no header line with GPU0 ... columns found")
    rows = {a for a, _ in matrix}
    gpus = [d for d in devices if d.startswith("GPU")]
    if not any(g in rows for g in gpus):
        raise ParseError("nvidia-smi topo -m: header found but no complete GPU row")
    # fill the missing half from the symmetric entry (a truncated output may lack NIC rows)
    for a in devices:
        for b in devices:
            if (a, b) not in matrix and (b, a) in matrix:
                matrix[(a, b)] = matrix[(b, a)]
    missing = [(a, b) for a in gpus for b in devices if (a, b) not in matrix]
    if missing:
        raise ParseError(f"nvidia-smi topo -m: incomplete matrix, e.g. no entry for {missing[0]} (truncated?)")
    return NvidiaSmiTopo(devices=devices, matrix=matrix, cpu_affinity=cpu, numa_affinity=numa,
                         gpu_numa_id=gnuma, nic_names=names, legend=legend)


# ------------------------------------------------------------------------------ default table
# The plain ``nvidia-smi`` table (the first thing anyone pastes). Layout of the NVIDIA System
# Management Interface of drivers R418-R570 (nvidia-smi documentation; samples pasted in e.g.
# huggingface/accelerate #3104 (R535), pytorch/pytorch and NVIDIA forum threads):
#   | NVIDIA-SMI 535.183.01   Driver Version: 535.183.01   CUDA Version: 12.2     |
#   |   0  NVIDIA H100 80GB HBM3          On  | 00000000:53:00.0 Off |                    0 |
#   | N/A   37C    P0             112W / 700W |  46103MiB / 81559MiB |    100%      Default |
#   |                                         |                      |             Disabled |
#   |    0   N/A  N/A     12345      C   python                                    46094MiB |
# R418 and older print processes without the GI/CI columns; a broken GPU prints ``ERR!`` cells.
_SMI_HEAD = re.compile(r"NVIDIA-SMI\s+(\S+)\s+Driver Version:\s*(\S+)(?:\s+CUDA Version:\s*(\S+))?")
_ROW1_C0 = re.compile(r"^\s*(\d+)\s+(.*?)\s+(On|Off|ERR!)\s*$")
_ROW1_C1 = re.compile(r"^\s*([0-9A-Fa-f]+:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s+(On|Off|ERR!)\s*$")
_ROW2_C0 = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*/\s*(\S+)\s*$")
_ROW2_C1 = re.compile(r"^\s*(\S+?)\s*(?:MiB)?\s*/\s*(\S+?)\s*(?:MiB)?\s*$")
_ROW2_C2 = re.compile(r"^\s*(\S+?)%?\s+(\S+)\s*$")
_PROC = re.compile(r"^\|\s*(\d+)\s+(?:(\S+)\s+(\S+)\s+)?(\d+)\s+(C\+G|C|G|M\+C|M)\s+(.*?)\s+(\d+|N/A)(?:MiB)?\s*\|$")
_SMI_ERRORS = re.compile(r"(No devices were found|NVIDIA-SMI has failed[^\n]*|Unable to determine the device handle[^\n]*|"
                         r"Failed to initialize NVML[^\n]*|GPU is lost[^\n]*)", re.I)


@dataclass
class NvidiaSmiTableGpu:
    """One GPU of the default ``nvidia-smi`` table; None where the cell says N/A or ERR!.
    ``errors`` lists the cells that printed ``ERR!`` (the driver cannot read the GPU)."""

    index: int
    name: str
    persistence: str | None
    bus_id: str
    display_active: str | None
    ecc_uncorrectable: int | None
    fan_pct: float | None = None
    temperature_c: float | None = None
    perf_state: str | None = None
    power_draw_w: float | None = None
    power_cap_w: float | None = None
    memory_used_mib: float | None = None
    memory_total_mib: float | None = None
    utilization_pct: float | None = None
    compute_mode: str | None = None
    mig_mode: str | None = None
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class NvidiaSmiProcess:
    gpu: int
    pid: int
    type: str
    name: str
    used_mib: float | None
    gi: str | None = None
    ci: str | None = None


@dataclass
class NvidiaSmiTable:
    smi_version: str | None
    driver_version: str | None
    cuda_version: str | None
    gpus: list[NvidiaSmiTableGpu]
    processes: list[NvidiaSmiProcess]
    errors: list[str] = field(default_factory=list)
    no_running_processes: bool = False

    def processes_on(self, gpu: int) -> list[NvidiaSmiProcess]:
        return [p for p in self.processes if p.gpu == gpu]


def _cell_value(s: str):
    s = s.strip()
    return None if s.upper() in ("N/A", "ERR!", "[N/A]", "") else s


def parse_nvidia_smi(text) -> NvidiaSmiTable:
    """Parse the default ``nvidia-smi`` table (driver/CUDA versions, per-GPU name, bus id, ECC,
    fan, temperature, performance state, power, memory, utilisation, compute/MIG mode, and the
    process list). Raises ParseError without a header line or a GPU row; a table whose driver
    printed an error instead (``No devices were found``, ``NVIDIA-SMI has failed ...``) parses to
    a result with ``errors`` set and no GPUs."""
    text = require_text(text, "nvidia-smi")
    smi = drv = cuda = None
    gpus: list[NvidiaSmiTableGpu] = []
    procs: list[NvidiaSmiProcess] = []
    errors = [m.group(1).strip() for m in _SMI_ERRORS.finditer(text)]
    in_procs = no_procs = False
    pending: NvidiaSmiTableGpu | None = None
    stage = 0  # 0: expecting row 1 of a GPU, 1: expecting row 2, 2: expecting row 3 (MIG mode)
    for raw in text.split("\n"):
        line = raw.rstrip()
        m = _SMI_HEAD.search(line)
        if m:
            smi, drv, cuda = m.group(1), m.group(2), m.group(3)
            continue
        s = line.strip()
        if s.startswith("| Processes") or s.startswith("|  Processes"):
            in_procs = True
            continue
        if in_procs:
            if "No running processes found" in s:
                no_procs = True
                continue
            mp = _PROC.match(s)
            if mp:
                procs.append(NvidiaSmiProcess(int(mp.group(1)), int(mp.group(4)), mp.group(5), mp.group(6).strip(),
                                              to_float(mp.group(7)), mp.group(2), mp.group(3)))
            continue
        if not (s.startswith("|") and s.endswith("|")):
            if s.startswith("+") or not s:
                stage = 0 if stage == 2 else stage
            continue
        cells = s[1:-1].split("|")
        if len(cells) != 3:
            continue
        c0, c1, c2 = cells
        m0, m1 = _ROW1_C0.match(c0), _ROW1_C1.match(c1)
        if m0 and m1:
            ecc = c2.strip()
            errs = tuple(k for k, v in (("persistence", m0.group(3)), ("display", m1.group(2)), ("ecc", ecc))
                         if v.upper() == "ERR!")
            pending = NvidiaSmiTableGpu(int(m0.group(1)), m0.group(2).strip(), _cell_value(m0.group(3)),
                                        m1.group(1), _cell_value(m1.group(2)), to_int(ecc), errors=errs)
            gpus.append(pending)
            stage = 1
            continue
        if stage == 1 and pending is not None:
            r0, r1, r2 = _ROW2_C0.match(c0), _ROW2_C1.match(c1), _ROW2_C2.match(c2)
            if r0:
                fan, temp, perf, pw, cap = r0.groups()
                pending.fan_pct = to_float(fan)
                pending.temperature_c = to_float(temp)
                pending.perf_state = _cell_value(perf)
                pending.power_draw_w = to_float(pw)
                pending.power_cap_w = to_float(cap)
            if r1:
                pending.memory_used_mib = to_float(r1.group(1))
                pending.memory_total_mib = to_float(r1.group(2))
            if r2:
                pending.utilization_pct = to_float(r2.group(1))
                pending.compute_mode = _cell_value(r2.group(2))
            bad = [name for name, cell in (("fan/temp/perf/power", c0), ("memory", c1), ("util", c2)) if "ERR!" in cell]
            if bad:
                pending.errors = pending.errors + tuple(bad)
            stage = 2
            continue
        if stage == 2 and pending is not None:
            v = c2.strip()
            if v and not c0.strip() and not c1.strip():
                pending.mig_mode = _cell_value(v)
            stage = 0
    if not gpus and not errors:
        if drv is None:
            raise ParseError("nvidia-smi: no '| NVIDIA-SMI ... Driver Version: ...' header and no GPU row found")
        raise ParseError("nvidia-smi: header found but no complete GPU row (truncated?)")
    return NvidiaSmiTable(smi, drv, cuda, gpus, procs, errors, no_procs)


# ------------------------------------------------------------------------------------ -q -x XML
# Format: see the docstring of parse_nvidia_smi_xml (nvsmi_device_v12.dtd element names).
def looks_like_nvidia_smi_xml(text: str) -> bool:
    return "<nvidia_smi_log" in text[:4096]


def _text(el, *paths):
    for p in paths:
        x = el.find(p)
        if x is not None and x.text is not None and x.text.strip():
            return x.text.strip()
    return None


def _ecc(section):
    """(correctable, uncorrectable) sums of an ECC ``volatile`` / ``aggregate`` element: the
    ``*correctable*`` / ``*uncorrectable*`` leaves, or the ``single_bit/total`` and ``double_bit/total``
    of drivers <= R450. None where every counter is N/A."""
    if section is None:
        return None, None
    corr = unc = None
    for child in section:
        tag = child.tag.lower()
        if tag in ("single_bit", "double_bit"):
            n = to_int(_text(child, "total"))
            if n is not None and tag == "single_bit":
                corr = (corr or 0) + n
            elif n is not None:
                unc = (unc or 0) + n
            continue
        n = to_int((child.text or "").strip())
        if n is None:
            continue
        if "uncorrectable" in tag:
            unc = (unc or 0) + n
        elif "correctable" in tag:
            corr = (corr or 0) + n
    return corr, unc


def parse_nvidia_smi_xml(text) -> NvidiaSmiQ:
    """Parse ``nvidia-smi -q -x`` into an :class:`NvidiaSmiQ` (one :class:`NvidiaSmiGpu` per ``<gpu>``),
    the same result as the text ``-q``.

    Format: the ``nvsmi_device_v12.dtd`` document of drivers R5xx (element names as written by the
    driver and read by public tools): ``<nvidia_smi_log>`` with ``driver_version``, ``cuda_version``,
    ``attached_gpus`` and one ``<gpu id="00000000:18:00.0">`` per GPU holding ``product_name``,
    ``serial``, ``uuid``, ``ecc_mode/current_ecc``, ``ecc_errors/{volatile,aggregate}/*correctable*``
    (``single_bit``/``double_bit`` totals on drivers <= R450), ``retired_pages``,
    ``remapped_rows/remapped_row_{corr,unc,pending,failure}``, ``temperature/{gpu_temp,
    gpu_temp_slow_threshold,gpu_temp_max_threshold}``, ``clocks_event_reasons/clocks_event_reason_*``
    (``clocks_throttle_reasons`` before R530), ``gpu_power_readings`` (``power_readings`` on older
    drivers) with ``power_draw`` / ``instantaneous_power_draw`` and ``current_power_limit``.
    Entity declarations are refused (nvidia-smi never writes them). Raises ParseError otherwise."""
    text = require_text(text, "nvidia-smi -q -x")
    if "<!ENTITY" in text:   # nvidia-smi never declares entities; refuse entity expansion outright
        raise ParseError("nvidia-smi -q -x: the XML declares entities, which nvidia-smi never writes")
    try:
        root = ET.fromstring(text.lstrip())
    except ET.ParseError as exc:
        raise ParseError(f"nvidia-smi -q -x: not well-formed XML ({exc})") from None
    if root.tag != "nvidia_smi_log":
        raise ParseError(f"nvidia-smi -q -x: root element is <{root.tag}>, expected <nvidia_smi_log>")
    gpus = []
    for i, g in enumerate(root.findall("gpu")):
        v_corr, v_unc = _ecc(g.find("ecc_errors/volatile"))
        a_corr, a_unc = _ecc(g.find("ecc_errors/aggregate"))
        reasons = g.find("clocks_event_reasons")
        if reasons is None:
            reasons = g.find("clocks_throttle_reasons")
        active = tuple(c.tag.split("reason_", 1)[-1] for c in (reasons if reasons is not None else [])
                       if (c.text or "").strip().lower() == "active")
        power = g.find("gpu_power_readings")
        if power is None:
            power = g.find("power_readings")
        draw = _text(power, "power_draw", "instantaneous_power_draw", "average_power_draw") if power is not None else None
        limit = _text(power, "current_power_limit", "enforced_power_limit", "power_limit") if power is not None else None
        raw = {c.tag: (c.text or "").strip() for c in g.iter() if len(c) == 0}
        gpus.append(NvidiaSmiGpu(
            index=i, bus_id=g.get("id") or _text(g, "pci/pci_bus_id") or "", product_name=_text(g, "product_name"),
            serial=_text(g, "serial"), uuid=_text(g, "uuid"), ecc_mode=_text(g, "ecc_mode/current_ecc"),
            ecc_volatile_correctable=v_corr, ecc_volatile_uncorrectable=v_unc,
            ecc_aggregate_correctable=a_corr, ecc_aggregate_uncorrectable=a_unc,
            retired_pages_sbe=to_int(_text(g, "retired_pages/multiple_single_bit_retirement/retired_count")),
            retired_pages_dbe=to_int(_text(g, "retired_pages/double_bit_retirement/retired_count")),
            retired_pages_pending=_yes(_text(g, "retired_pages/pending_blacklist", "retired_pages/pending_retirement")),
            remapped_rows_correctable=to_int(_text(g, "remapped_rows/remapped_row_corr")),
            remapped_rows_uncorrectable=to_int(_text(g, "remapped_rows/remapped_row_unc")),
            remapped_rows_pending=_yes(_text(g, "remapped_rows/remapped_row_pending")),
            remapping_failure=_yes(_text(g, "remapped_rows/remapped_row_failure")),
            throttle_active=active,
            temperature_c=to_float(_text(g, "temperature/gpu_temp")),
            slowdown_temp_c=to_float(_text(g, "temperature/gpu_temp_slow_threshold")),
            shutdown_temp_c=to_float(_text(g, "temperature/gpu_temp_max_threshold")),
            power_draw_w=to_float(draw), power_limit_w=to_float(limit), raw=raw))
    if not gpus:
        raise ParseError("nvidia-smi -q -x: no <gpu> element")
    return NvidiaSmiQ(driver_version=_text(root, "driver_version"), cuda_version=_text(root, "cuda_version"),
                      attached_gpus=to_int(_text(root, "attached_gpus")), gpus=gpus)
