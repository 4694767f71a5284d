"""Sample tool outputs shipped with the course (``labutil/data/samples_*.toml``).

Chapters show a real command, then parse its output from one of these samples. Every sample has a
``title`` and a ``source``. In ``samples_nccl.toml`` and ``samples_tools.toml`` the source says where
the *format* comes from and the values are illustrative (the nccl-tests rows are synthesised from
an α-β model by ``tests/fixtures/make_nccl_samples.py``); ``samples_public.toml`` holds outputs copied
verbatim from public pages, and its source is the page.

>>> from labutil.parsers import samples, parse_ibstat
>>> parse_ibstat(samples.sample("ibstat_ndr"))[0].ports[0].rate_gbps
400.0
"""

from __future__ import annotations

from functools import lru_cache

from .. import data_files, validate

__all__ = ["names", "sample", "info"]

_FILES = ("samples_nccl.toml", "samples_tools.toml", "samples_fabric.toml",
          "samples_public.toml")  # the last: verbatim public pastes


@lru_cache(maxsize=None)
def _all() -> dict:
    out: dict = {}
    for fname in _FILES:
        for key, entry in data_files.load(fname).items():
            out[key] = {"title": entry["title"], "source": entry["source"], "text": entry["text"]}
    return out


def names() -> list[str]:
    """All sample names."""
    return list(_all())


def sample(name: str) -> str:
    """The text of sample ``name`` (KeyError listing close names if unknown)."""
    table = _all()
    if name not in table:
        raise validate.unknown_name("sample", name, table)
    return table[name]["text"]


def info(name: str) -> dict:
    """``{'title': ..., 'source': ...}`` of sample ``name``."""
    sample(name)
    e = _all()[name]
    return {"title": e["title"], "source": e["source"]}
