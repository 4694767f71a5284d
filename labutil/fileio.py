"""Small file helpers: atomic writes so a killed run never leaves a partial result file."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

__all__ = ["write_text_atomic", "write_json_atomic"]


def write_text_atomic(path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (temp file in the same folder + fsync + os.replace)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def write_json_atomic(path, obj, indent: int = 2) -> Path:
    """Serialise ``obj`` as JSON and write it atomically."""
    return write_text_atomic(path, json.dumps(obj, indent=indent, ensure_ascii=False, sort_keys=False) + "\n")
