"""Will it fit? Host memory, device memory and disk space, checked before a harness does any work.

A size flag that the machine cannot hold must be refused with one line while the flags are being
checked, not found by the OOM killer halfway through a sweep (which, on a shared node or a
3 GiB classroom pod, also kills the learner's kernel). Each harness states how many bytes a run
needs (its own bound: collectives ``3·S + 128 MiB`` per rank, ddp the parameter, gradient and
bucket bytes, storage_io the checkpoint it saves and loads back) and calls :func:`require_host`,
:func:`require_device` or :func:`require_disk`.

What counts as available:

- **host**: the smaller of ``MemAvailable`` (``/proc/meminfo``: the kernel's estimate of memory
  available without swapping, page cache that can be reclaimed included; proc(5)) and what the
  process's memory cgroup still allows: ``limit - (usage - inactive_file)`` at its own level and
  at every ancestor that has a limit (cgroup v2 ``memory.max`` / ``memory.current``, v1
  ``memory.limit_in_bytes`` / ``memory.usage_in_bytes``). ``inactive_file`` (``memory.stat``) is
  page cache the kernel reclaims before it OOM-kills, so it is not counted as used — the working
  set the kubelet compares with the limit (Kubernetes docs, "Node-pressure Eviction":
  memory.available comes from cgroupfs and excludes inactive_file). A limit of ``max`` (v2) or
  the v1 "unlimited" value (``PAGE_COUNTER_MAX`` pages, 2**63 rounded down to a page) is no limit.
- **device**: free bytes of the GPU this rank uses: ``torch.cuda.mem_get_info(LOCAL_RANK)`` under
  torchrun (the rank then uses that device anyway), else ``nvidia-smi --query-gpu=memory.free``
  for the visible GPUs (the smallest), so checking flags in a notebook kernel never creates a
  CUDA context there. Unknown (no ``nvidia-smi``) means no device check.
- **disk**: ``shutil.disk_usage(folder).free``.

Where a quantity cannot be read (macOS has no ``/proc/meminfo``), the check is skipped: the run
then fails the way it always did, with the harness's own one-line error.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from . import cli

__all__ = ["host_available", "device_free", "require_host", "require_device", "require_disk", "local_ranks",
           "fmt_bytes", "UNLIMITED_V1"]

#: cgroup v1 reports "no limit" as PAGE_COUNTER_MAX pages (LONG_MAX / PAGE_SIZE) in bytes:
#: 9223372036854771712 with 4 KiB pages. Anything at or above 2**62 is treated as no limit.
UNLIMITED_V1 = 2**62


def fmt_bytes(n: float) -> str:
    """'3.0 TiB', '512 MiB': binary units, as the size flags take them."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def _meminfo_available(meminfo: Path) -> int | None:
    text = _read(meminfo)
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) * 1024  # kB in /proc/meminfo are KiB
    return None


def _stat_value(text: str | None, keys: tuple[str, ...]) -> int:
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in keys and parts[1].isdigit():
            return int(parts[1])
    return 0


def _levels(root: Path, rel: str) -> list[Path]:
    """The cgroup folder of ``rel`` under ``root`` and each ancestor up to ``root`` (existing ones)."""
    parts = [p for p in rel.strip().split("/") if p and p not in (".", "..")]
    out = [root.joinpath(*parts[:i]) for i in range(len(parts), -1, -1)]
    return [p for p in out if p.is_dir()]


def _cgroup_headroom(cgroup_fs: Path, self_cgroup: Path) -> tuple[int | None, str]:
    """Bytes the memory cgroup still allows this process (smallest over its limited levels)."""
    text = _read(self_cgroup)
    if text is None:
        return None, ""
    best: tuple[int | None, str] = (None, "")
    v1_rel = v2_rel = None
    for line in text.splitlines():
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        if fields[0] == "0" and fields[1] == "":
            v2_rel = fields[2]
        elif "memory" in fields[1].split(","):
            v1_rel = fields[2]
    candidates = []
    if v1_rel is not None:
        for d in _levels(cgroup_fs / "memory", v1_rel):
            candidates.append(("v1", d, d / "memory.limit_in_bytes", d / "memory.usage_in_bytes",
                               ("total_inactive_file", "inactive_file")))
    if v2_rel is not None:
        base = cgroup_fs / "unified" if (cgroup_fs / "unified").is_dir() else cgroup_fs
        for d in _levels(base, v2_rel):
            candidates.append(("v2", d, d / "memory.max", d / "memory.current", ("inactive_file",)))
    for version, d, limit_f, usage_f, stat_keys in candidates:
        limit_s, usage_s = _read(limit_f), _read(usage_f)
        if limit_s is None or usage_s is None:
            continue
        limit_s, usage_s = limit_s.strip(), usage_s.strip()
        if limit_s == "max" or not limit_s.isdigit() or not usage_s.isdigit():
            continue
        limit = int(limit_s)
        if limit >= UNLIMITED_V1:
            continue
        inactive = _stat_value(_read(d / "memory.stat"), stat_keys)
        working = max(0, int(usage_s) - inactive)
        room = max(0, limit - working)
        if best[0] is None or room < best[0]:
            best = (room, f"cgroup {version} limit {fmt_bytes(limit)} at {d}, {fmt_bytes(working)} in use")
    return best


def host_available(meminfo="/proc/meminfo", cgroup_fs="/sys/fs/cgroup", self_cgroup="/proc/self/cgroup"
                   ) -> tuple[int | None, str]:
    """(bytes of host memory this process can still use, where the number comes from) or (None, '')."""
    avail = _meminfo_available(Path(meminfo))
    room, why = _cgroup_headroom(Path(cgroup_fs), Path(self_cgroup))
    if room is not None and (avail is None or room < avail):
        return room, why
    if avail is not None:
        return avail, "MemAvailable in /proc/meminfo"
    return None, ""


def _nvidia_smi_free() -> tuple[int | None, str]:
    if shutil.which("nvidia-smi") is None:
        return None, ""
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,memory.free", "--format=csv,noheader,nounits"],
                           capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None, ""
    if p.returncode != 0:
        return None, ""
    rows = []
    for line in p.stdout.splitlines():
        parts = [x.strip() for x in line.split(",")]
        if len(parts) == 3 and parts[2].isdigit():
            rows.append((parts[0], parts[1], int(parts[2]) * 2**20))  # nounits: MiB
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and visible.strip():
        wanted = [v.strip() for v in visible.split(",") if v.strip()]
        rows = [r for r in rows if r[0] in wanted or any(r[1].startswith(w) or w.startswith(r[1]) for w in wanted)]
    if not rows:
        return None, ""
    free = min(r[2] for r in rows)
    return free, f"nvidia-smi memory.free (smallest of {len(rows)} visible GPU{'s' if len(rows) > 1 else ''})"


def device_free() -> tuple[int | None, str]:
    """(free bytes on the GPU this process uses, source) or (None, '') when it cannot be read."""
    if "LOCAL_RANK" in os.environ:
        try:
            import torch

            if torch.cuda.is_available():
                idx = int(os.environ["LOCAL_RANK"])
                free_b, _ = torch.cuda.mem_get_info(idx)
                return int(free_b), f"torch.cuda.mem_get_info({idx})"
        except Exception:  # noqa: BLE001 - best effort (no torch, an ordinal CUDA_VISIBLE_DEVICES hides): nvidia-smi
            pass
    return _nvidia_smi_free()


def local_ranks() -> int:
    """Ranks sharing this host: torchrun's LOCAL_WORLD_SIZE, else 1 (a single process)."""
    v = os.environ.get("LOCAL_WORLD_SIZE", "1").strip()
    return int(v) if v.isdigit() and int(v) >= 1 else 1


def _refuse(what: str, need: int, have: int, source: str, fix: str) -> None:
    raise cli.UsageError(f"{what} needs about {fmt_bytes(need)} but only {fmt_bytes(have)} is available "
                         f"({source}); {fix}")


def require_host(what: str, need_bytes: int, fix: str, *, available=None) -> None:
    """Refuse (UsageError, one line) when ``need_bytes`` of host memory are not available.

    ``available`` is ``(bytes, source)`` for tests; by default :func:`host_available`."""
    have, source = host_available() if available is None else available
    if have is not None and need_bytes > have:
        _refuse(what, int(need_bytes), int(have), source, fix)


def require_device(what: str, need_bytes: int, fix: str, *, available=None) -> None:
    """Refuse when ``need_bytes`` exceed the free memory of this process's GPU (when it can be read)."""
    have, source = device_free() if available is None else available
    if have is not None and need_bytes > have:
        _refuse(what, int(need_bytes), int(have), source, fix)


def require_disk(what: str, folder, need_bytes: int, fix: str) -> None:
    """Refuse when the file system of ``folder`` has less than ``need_bytes`` free."""
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return
    if need_bytes > free:
        _refuse(what, int(need_bytes), int(free), f"free space on {folder}", fix)
