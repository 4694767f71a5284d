"""Parsers of real tool output: nccl-tests, nvidia-smi, ibstat / ibv_devinfo / perfquery,
dcgmi diag, NCCL debug logs and kernel XID lines; the machine-readable forms nccl-tests ``-J``
JSON and ``nvidia-smi -q -x`` XML (``parse_nccl_tests`` / ``parse_nvidia_smi_q`` accept them too).

Every parser takes the tool's text and returns dataclasses with unit-suffixed fields, or raises
:class:`ParseError` (a ``ValueError``) with one clear message on garbage or truncated input —
never ``IndexError``/``KeyError``. Each sub-module's docstring says where its format comes from.
Taught in ch09 (topo), ch11 (ibstat / ibv_devinfo), ch15/ch22 (nccl-tests, NCCL logs), ch23,
ch14/ch26 (Prometheus text exposition of dcgm-exporter).
"""

from . import samples
from ._common import ParseError
from .dcgm import DcgmDiag, DcgmTest, parse_dcgmi_diag
from .infiniband import (ERROR_COUNTERS, IbCa, IbPort, IbvDevice, IbvPort, PerfQuery, parse_ibstat,
                         parse_ibv_devinfo, parse_perfquery)
from .nccl_log import (NcclConnection, NcclDebugLog, NcclRank, NcclRing, NcclTree, XidEvent,
                       parse_nccl_debug_log, parse_xid_errors)
from .nccl_tests import OP_NAMES, NcclTestDevice, NcclTestRow, NcclTestsResult, parse_nccl_tests, parse_nccl_tests_json
from .perftest import PerftestBw, PerftestRow, mb_per_sec_to_gbps, parse_perftest_bw
from .prometheus import Exposition, PromParseError, format_prometheus_text, parse_prometheus_text  # (ch14, ch26)
from .sysstat import DmonLog, DmonRow, IostatDevice, IostatReport, parse_iostat_x, parse_nvidia_smi_dmon  # noqa: F401  (ch18)
from .nvidia_smi import (LINK_RANK, NvidiaSmiCsv, NvidiaSmiGpu, NvidiaSmiProcess, NvidiaSmiQ, NvidiaSmiTable,
                         NvidiaSmiTableGpu, NvidiaSmiTopo, parse_nvidia_smi, parse_nvidia_smi_csv, parse_nvidia_smi_q,
                         parse_nvidia_smi_topo, parse_nvidia_smi_xml)

__all__ = [
    "ParseError", "samples",
    "parse_nccl_tests", "parse_nccl_tests_json", "NcclTestsResult", "NcclTestRow", "NcclTestDevice", "OP_NAMES",
    "parse_nvidia_smi", "NvidiaSmiTable", "NvidiaSmiTableGpu", "NvidiaSmiProcess",
    "parse_nvidia_smi_csv", "NvidiaSmiCsv", "parse_nvidia_smi_q", "parse_nvidia_smi_xml", "NvidiaSmiQ", "NvidiaSmiGpu",
    "parse_nvidia_smi_topo", "NvidiaSmiTopo", "LINK_RANK",
    "parse_ibstat", "IbCa", "IbPort", "parse_ibv_devinfo", "IbvDevice", "IbvPort",
    "parse_perfquery", "PerfQuery", "ERROR_COUNTERS",
    "parse_dcgmi_diag", "DcgmDiag", "DcgmTest",
    "parse_nccl_debug_log", "NcclDebugLog", "NcclRing", "NcclTree", "NcclConnection", "NcclRank",
    "parse_xid_errors", "XidEvent",
    "parse_perftest_bw", "PerftestBw", "PerftestRow", "mb_per_sec_to_gbps",
    "parse_prometheus_text", "format_prometheus_text", "Exposition", "PromParseError",
]

# ch11 (RoCE operations): ``ethtool -S`` counters; the pause rules live in labutil.rdma.diagnose_pause
from .ethtool import EthtoolParseError, EthtoolStats, parse_ethtool_stats  # noqa: E402

__all__ += ["parse_ethtool_stats", "EthtoolStats", "EthtoolParseError"]

# ch12 (fabric acceptance): mlxlink link/BER and ibdiagnet; the link rule lives in labutil.links.diagnose_link
from .ibdiagnet import Ibdiagnet, IbdiagnetParseError, IbdiagnetStage, parse_ibdiagnet  # noqa: E402
from .mlxlink import Mlxlink, MlxlinkParseError, parse_ber, parse_mlxlink  # noqa: E402

__all__ += ["parse_mlxlink", "Mlxlink", "MlxlinkParseError", "parse_ber",
            "parse_ibdiagnet", "Ibdiagnet", "IbdiagnetStage", "IbdiagnetParseError"]

# ch11 (RoCE operations): show_gids, the GID table (which index is RoCE v2 with the port's IPv4 address)
from .show_gids import GidEntry, GidTable, ShowGidsParseError, parse_show_gids  # noqa: E402

__all__ += ["parse_show_gids", "GidTable", "GidEntry", "ShowGidsParseError"]

# ch16/ch17 (storage): fio (JSON, text, terse), dd, lfs df; formerly labutil.fioparse (still re-exported there).
# Their stored samples are labutil.parsers.fio.sample(...) (labutil/data/storage_samples.toml).
from . import fio  # noqa: E402
from .fio import (DdResult, FioResult, LfsDf, LfsTarget, StorageParseError, parse_dd, parse_fio_json,  # noqa: E402
                  parse_fio_summary, parse_fio_terse, parse_lfs_df)

__all__ += ["fio", "parse_fio_json", "parse_fio_summary", "parse_fio_terse", "FioResult", "parse_dd", "DdResult",
            "parse_lfs_df", "LfsDf", "LfsTarget", "StorageParseError"]

# ch09/ch19: ``lspci -vvv`` link generation/width (formerly labutil.inventory.parse_lspci_links, re-exported there)
from .lspci import LspciParseError, parse_lspci_links  # noqa: E402

__all__ += ["parse_lspci_links", "LspciParseError"]
