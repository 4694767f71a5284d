"""Old home of the storage-tool parsers; they live in :mod:`labutil.parsers.fio` now.

Kept so that ``from labutil import fioparse`` (chapters, triage, older notebooks) still works:
every public name is re-exported unchanged.
"""

from .parsers.fio import (DdResult, FioResult, IorOperation, IorResult, LfsDf, LfsTarget,  # noqa: F401
                          MdtestResult, StorageParseError, parse_dd, parse_fio_json, parse_fio_summary,
                          parse_fio_terse, parse_ior, parse_lfs_df, parse_mdtest, sample, sample_names,
                          sample_source)

__all__ = ["StorageParseError", "FioResult", "parse_fio_json", "parse_fio_summary", "parse_fio_terse", "DdResult",
           "parse_dd", "LfsTarget", "LfsDf", "parse_lfs_df", "IorOperation", "IorResult", "parse_ior", "MdtestResult",
           "parse_mdtest", "sample", "sample_source", "sample_names"]
