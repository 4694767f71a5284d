"""Storage I/O (lab05): sequential write/read with fsync, and a checkpoint-like save/load.

    python -m labutil.bench.storage_io --dir /mnt/lustre/me --size 1G --block 4M --ckpt-params 50M --out io.json

- Sequential write: ``--size`` bytes in ``--block`` blocks, then ``fsync`` (the time includes the
  fsync: data is on the device or the file server, not only in the page cache).
- Sequential read: the same file, after ``posix_fadvise(DONTNEED)`` asks the kernel to drop its
  cached pages (best effort: it works for clean pages on local file systems; a network file
  system may still serve from a client cache — the record says ``cache_dropped``). A read you can
  trust therefore needs a file larger than RAM — or ``--direct``:
- ``--direct``: write and read with ``O_DIRECT`` (page-aligned buffers, ``--block`` a multiple of
  4 KiB), bypassing the page cache as ``fio --direct=1`` and ``dd oflag=direct`` do, so the read
  comes from the device or the file server whatever the file size (the write still ends with
  ``fsync``). A file system that refuses ``O_DIRECT`` (``EINVAL``: older tmpfs, some FUSE mounts)
  falls back to buffered I/O, and the record says so (``direct`` False, ``direct_error``).
  One synchronous writer with one block in flight is not fio's ``--iodepth=32``: an NVMe reaches its
  datasheet only with many I/Os in flight.
- Checkpoint: a state dict of fp32 tensors (``--ckpt-params`` parameters, 4 B each, in 16 tensors)
  saved with ``torch.save`` + fsync, then loaded with ``torch.load``.

A tqdm bar shows progress. ``--size`` is bounded by the free space of the folder (and 1 TiB); the
default (64 MiB) runs in seconds. Bandwidths are decimal GB/s (1e9 B/s). The files are removed afterwards, also when the
run is stopped by SIGTERM (Slurm's time limit, ``scancel``) or SIGINT; a folder left by a killed
run (SIGKILL) is removed by the next run (:func:`remove_stale`). Sizes that cannot fit (disk
space of the folder, host memory for the checkpoint) are refused before anything is written.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

from .. import validate
from ..fileio import write_json_atomic
from . import cli, fit
from .common import environment

__all__ = ["MAX_BYTES", "MAX_FILE_BYTES", "DIRECT_ALIGN", "sequential", "checkpoint", "run", "PROG", "parse_args",
           "main"]

MAX_BYTES = 64 * 2**30        # the checkpoint test's fp32 state dict (held in host memory: 4 B per parameter)
#: the sequential file: written block by block (never held in memory), so only the disk bounds it
#: (checked against the folder's free space); a read test that must not come from the page cache needs
#: a file larger than RAM, e.g. 600G on a 512 GB node — or --direct (a 2 TB node needs it: sizes stop at
#: 1 TiB, the course's size-flag limit, labutil.units.parse_size)
MAX_FILE_BYTES = 2**40
DIRECT_ALIGN = 4096           # O_DIRECT: buffer address, block size and offsets aligned to the logical block


def _progress(total: int, desc: str, enabled: bool):
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm is in the `lab` extra; run without a bar if it is missing
        return None
    return tqdm(total=total, desc=desc, unit="B", unit_scale=True, disable=not enabled, leave=False)


def _drop_cache(fd: int) -> bool:
    if not hasattr(os, "posix_fadvise"):
        return False
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        return True
    except OSError:
        return False


def _open_direct(path, flags: int) -> tuple[int, str]:
    """(fd opened with O_DIRECT, '') or (-1, why not) when the platform or the file system refuses it."""
    if not hasattr(os, "O_DIRECT"):
        return -1, "O_DIRECT is not available on this platform"
    try:
        return os.open(path, flags | os.O_DIRECT, 0o600), ""
    except OSError as exc:
        if exc.errno in (22, 95):  # EINVAL, EOPNOTSUPP: the file system does not do direct I/O
            return -1, f"the file system refused O_DIRECT ({exc.strerror})"
        raise


def sequential(path: Path, size_bytes: int, block_bytes: int, progress: bool = True, direct: bool = False) -> dict:
    """Write then read ``size_bytes`` at ``path``; returns times and GB/s. ``direct``: O_DIRECT when the
    file system allows it (``direct`` in the record says whether it was used)."""
    import mmap

    size_bytes = validate.integer("size_bytes", size_bytes, lo=1, hi=MAX_FILE_BYTES)
    block_bytes = validate.integer("block_bytes", block_bytes, lo=512, hi=64 << 20)
    if direct and block_bytes % DIRECT_ALIGN:
        raise ValueError(f"block_bytes must be a multiple of {DIRECT_ALIGN} with direct I/O; got {block_bytes}")
    n_blocks = -(-size_bytes // block_bytes)
    # incompressible, so a compressing file system cannot cheat; an anonymous mmap is page-aligned,
    # which O_DIRECT needs (os.write/os.readv use the buffer in place)
    block = mmap.mmap(-1, block_bytes)
    block.write(os.urandom(block_bytes))
    used_direct, why_not = False, ""
    bar = _progress(n_blocks * block_bytes, "write", progress)
    t0 = time.perf_counter()
    fd = -1
    if direct:
        fd, why_not = _open_direct(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        used_direct = fd >= 0
    if fd < 0:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for _ in range(n_blocks):
            os.write(fd, block)
            if bar is not None:
                bar.update(block_bytes)
        os.fsync(fd)
    finally:
        os.close(fd)
    t_write = time.perf_counter() - t0
    if bar is not None:
        bar.close()
    written = n_blocks * block_bytes
    fd = -1
    if used_direct:
        fd, _ = _open_direct(path, os.O_RDONLY)
        used_direct = fd >= 0
    if fd < 0:
        fd = os.open(path, os.O_RDONLY)
    try:
        dropped = _drop_cache(fd)  # also for direct I/O: pages the buffered fallback may have left
        bar = _progress(written, "read", progress)
        t0 = time.perf_counter()
        got = 0
        while True:
            n = os.readv(fd, [block])
            if not n:
                break
            got += n
            if bar is not None:
                bar.update(n)
        t_read = time.perf_counter() - t0
        if bar is not None:
            bar.close()
    finally:
        os.close(fd)
    if got != written:
        raise RuntimeError(f"read back {got} bytes, wrote {written}: the file changed under the benchmark")
    return {"bytes": written, "block_bytes": block_bytes, "write_s": t_write, "read_s": t_read,
            "write_gbs": written / t_write / 1e9, "read_gbs": written / t_read / 1e9, "cache_dropped": dropped,
            "direct": used_direct, **({"direct_error": why_not} if direct and not used_direct else {})}


def checkpoint(path: Path, params: int, n_tensors: int = 16) -> dict:
    """torch.save a state dict of ``params`` fp32 values (+ fsync), then torch.load it."""
    import torch

    params = validate.integer("params", params, lo=n_tensors, hi=MAX_BYTES // 4)
    gen = torch.Generator().manual_seed(0)
    per = params // n_tensors
    state = {f"layer{i}.weight": torch.randn(per, generator=gen) for i in range(n_tensors)}
    nbytes = per * n_tensors * 4
    t0 = time.perf_counter()
    with open(path, "wb") as f:
        torch.save(state, f)
        f.flush()
        os.fsync(f.fileno())
    t_save = time.perf_counter() - t0
    file_bytes = path.stat().st_size
    fd = os.open(path, os.O_RDONLY)
    dropped = _drop_cache(fd)
    os.close(fd)
    t0 = time.perf_counter()
    loaded = torch.load(path, weights_only=True)
    t_load = time.perf_counter() - t0
    ok = all(torch.equal(loaded[k], v) for k, v in state.items())
    if not ok:
        raise RuntimeError("the loaded checkpoint differs from the saved one")
    return {"params": per * n_tensors, "tensor_bytes": nbytes, "file_bytes": file_bytes, "save_s": t_save,
            "load_s": t_load, "save_gbs": file_bytes / t_save / 1e9, "load_gbs": file_bytes / t_load / 1e9,
            "cache_dropped": dropped, "verified": ok}


# Temporary folders are named labutil-io-<host>-<pid>-<random>: a run that was killed before it
# could clean up (SIGKILL, a node crash) leaves one behind, and the next run on the same folder
# removes it once its process is gone (same host) or it has not changed for STALE_AFTER_S (a
# folder of another host, on a shared file system).
TMP_PREFIX = "labutil-io-"
STALE_AFTER_S = 24 * 3600.0
#: Host memory of the checkpoint test per parameter: the saved fp32 state dict and the copy
#: torch.load reads back, both alive while they are compared (2 x 4 B).
CKPT_HOST_BYTES_PER_PARAM = 8


def _tmp_prefix() -> str:
    host = "".join(c if c.isalnum() else "_" for c in socket.gethostname())[:40] or "host"
    return f"{TMP_PREFIX}{host}-{os.getpid()}-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # exists under another user (or not a pid): leave it alone
    return True


def _newest_mtime(d: Path) -> float:
    newest = d.lstat().st_mtime
    for child in d.iterdir():
        try:
            newest = max(newest, child.lstat().st_mtime)
        except OSError:
            continue
    return newest


def remove_stale(base, *, now: float | None = None, stale_after_s: float = STALE_AFTER_S) -> list[Path]:
    """Remove this benchmark's temporary folders in ``base`` that no live run owns; returns them.

    A folder is stale when it is this user's, and either it was made on this host by a process that
    no longer exists, or nothing in it changed for ``stale_after_s`` (another host's, or an older
    name without host and pid). Never follows symlinks; errors are ignored (best effort)."""
    import shutil

    base = Path(base)
    now = time.time() if now is None else float(now)
    here = _tmp_prefix().rsplit("-", 2)[0]  # labutil-io-<host>
    removed = []
    try:
        entries = list(base.glob(TMP_PREFIX + "*"))
    except OSError:
        return removed
    for d in entries:
        try:
            st = d.lstat()
            if d.is_symlink() or not d.is_dir() or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
                continue
            head, _, _rand = d.name.rpartition("-")
            owner, _, pid = head.rpartition("-")
            if owner == here and pid.isdigit():
                stale = not _pid_alive(int(pid))
            else:
                stale = now - _newest_mtime(d) > stale_after_s
            if stale:
                shutil.rmtree(d, ignore_errors=True)
                removed.append(d)
        except OSError:
            continue
    return removed


def run(directory=None, size_bytes: int = 64 << 20, block_bytes: int = 4 << 20, ckpt_params: int = 8_000_000,
        progress: bool = True, direct: bool = False) -> dict:
    """Sequential write/read and checkpoint save/load in a temporary folder of ``directory``
    (default: the temp folder), removed afterwards (also on SIGTERM/SIGINT under :func:`main`);
    stale folders of killed runs are removed first (:func:`remove_stale`)."""
    base = Path(directory) if directory else Path(tempfile.gettempdir())
    if not base.is_dir():
        raise ValueError(f"directory must be an existing folder; got {str(base)!r}")
    remove_stale(base)
    with tempfile.TemporaryDirectory(prefix=_tmp_prefix(), dir=base) as d:
        seq = sequential(Path(d) / "seq.bin", size_bytes, block_bytes, progress, direct)
        ck = checkpoint(Path(d) / "ckpt.pt", ckpt_params)
    return {"benchmark": "storage_io", "directory": str(base), "sequential": seq, "checkpoint": ck,
            "environment": environment()}


PROG = "labutil.bench.storage_io"


def check_fits(directory, size_bytes: int, ckpt_params: int, *, host_available=None) -> None:
    """Refuse sizes that cannot fit, before anything is written: the sequential file and the
    checkpoint file (4 B per parameter) must fit in the free space of the folder under test, and
    the checkpoint's saved and loaded state dicts (:data:`CKPT_HOST_BYTES_PER_PARAM`) in host memory."""
    folder = Path(directory) if directory else Path(tempfile.gettempdir())
    fit.require_disk(f"--size {fit.fmt_bytes(size_bytes)} and --ckpt-params {ckpt_params:,} (a "
                     f"{fit.fmt_bytes(4 * ckpt_params)} checkpoint file)", folder, size_bytes + 4 * ckpt_params,
                     "lower --size or --ckpt-params, or test another --dir")
    fit.require_host(f"--ckpt-params {ckpt_params:,}: the saved and the loaded fp32 state dict",
                     CKPT_HOST_BYTES_PER_PARAM * ckpt_params, "lower --ckpt-params", available=host_available)


def parse_args(argv=None):
    p = cli.Parser(prog="python -m labutil.bench.storage_io", description=__doc__.splitlines()[0])
    p.add_argument("--dir", default=None, help="folder on the file system to test (default: the temp folder)")
    p.add_argument("--size", default="64M", help="sequential file size (binary suffixes)")
    p.add_argument("--block", default="4M", help="write/read block size")
    p.add_argument("--ckpt-params", default="8M", help="checkpoint parameters (fp32), e.g. 8M, 1G")
    p.add_argument("--direct", action="store_true",
                   help="O_DIRECT writes and reads (no page cache; falls back to buffered I/O where refused)")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    a.size_b = cli.size_flag("--size", a.size, lo=1, hi=MAX_FILE_BYTES)
    a.block_b = cli.size_flag("--block", a.block, lo=512, hi=64 << 20)
    if a.direct and a.block_b % DIRECT_ALIGN:
        raise cli.UsageError(f"--block must be a multiple of {DIRECT_ALIGN} bytes with --direct; got {a.block!r}")
    a.ckpt = cli.size_flag("--ckpt-params", a.ckpt_params, lo=16, hi=MAX_BYTES // 4)
    if a.dir is not None:
        d = Path(a.dir)
        try:
            if not d.is_dir():
                raise cli.UsageError(f"--dir must be an existing folder; got {a.dir!r}")
        except OSError as exc:
            raise cli.UsageError(f"--dir {a.dir!r}: {exc.strerror or exc}") from None
        if not os.access(d, os.W_OK | os.X_OK):
            raise cli.UsageError(f"--dir {a.dir!r} is not writable")
    check_fits(a.dir, a.size_b, a.ckpt)
    cli.writable_out(a.out)
    return a


class Stopped(SystemExit):
    """Raised by the SIGTERM/SIGINT handler of :func:`main`: unwinds through the ``with`` blocks
    (the temporary folder is removed) and ends the process with status 128 + signal."""


def _stop(signum, frame):  # noqa: ARG001 - signal handler signature
    # a second signal while the temporary folder is being removed must not cut the clean-up short
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, signal.SIG_IGN)
    raise Stopped(128 + signum)


def main(argv=None) -> int:
    try:
        a = parse_args(argv)
    except cli.UsageError as exc:
        return cli.report(PROG, exc)
    # SIGTERM (Slurm at the time limit or on scancel, the lab runner's timeout) would end Python
    # without unwinding, leaving the test file behind; as an exception it runs the clean-up.
    previous = {}
    if threading.current_thread() is threading.main_thread():  # handlers can only be set there
        previous = {s: signal.signal(s, _stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        res = run(a.dir, a.size_b, a.block_b, a.ckpt, not a.no_progress, a.direct)
        s, c = res["sequential"], res["checkpoint"]
        how = ("O_DIRECT, no page cache" if s["direct"] else
               f"buffered, cache dropped: {s['cache_dropped']}" + (f"; {s['direct_error']}" if s.get("direct_error") else ""))
        print(f"# {res['directory']}: write {s['write_gbs']:.3f} GB/s (with fsync), read {s['read_gbs']:.3f} GB/s ({how})")
        print(f"# checkpoint {c['file_bytes'] / 1e9:.3f} GB: save {c['save_s']:.3f} s, load {c['load_s']:.3f} s")
        if a.out:
            write_json_atomic(a.out, res)
    except Stopped as exc:
        name = signal.Signals(exc.code - 128).name
        print(f"{PROG}: stopped by {name}; its temporary files were removed", file=sys.stderr, flush=True)
        return exc.code
    except (OSError, RuntimeError, ValueError, MemoryError) as exc:  # a full --dir, an allocation refused
        return cli.error(PROG, exc)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


if __name__ == "__main__":
    sys.exit(main())
