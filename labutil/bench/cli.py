"""Command-line plumbing shared by the harnesses: one-line errors, exit status 2, checked up front.

Every harness (``collectives``, ``ddp``, ``gemm``, ``membw``, ``storage_io``) validates ALL of its
flags — sizes, counts, the timeout, the backend, the result file — before any rank allocates a
buffer or joins a process group. A bad flag prints exactly one line::

    labutil.bench.collectives: error: -b/--minbytes must be > 0; got '0'

to stderr and exits with status 2 (argparse's status for usage errors). Under torchrun every rank
sees the same flags and fails the same way, so only the rank with ``RANK=0`` (or a process that is
not under torchrun at all) prints the line; the others exit 2 silently. torchrun's launcher still
reports the failed children in its own summary; the lab helpers
(:func:`labutil.machine.launch.run_module`) therefore run the same check in the parent first
(``--dry-run``), so a notebook shows the one line and never starts torchrun.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["EXIT_USAGE", "UsageError", "Parser", "is_primary", "message", "NON_PRIMARY_EXIT_DELAY_S", "report",
           "timeout_s", "int_flag", "size_flag", "writable_out", "add_sweep_flags", "resolve_sweep"]

EXIT_USAGE = 2
#: A run that started and failed (an allocation, a full disk, a dead peer): one ERROR line, status 2.
EXIT_ERROR = 2
#: A collective that did not complete within --timeout-s (a stalled or hung peer), in every harness.
EXIT_TIMEOUT = 3


class UsageError(ValueError):
    """A command-line flag is invalid (reported as one line, exit status 2)."""


class Parser(argparse.ArgumentParser):
    """argparse that raises :class:`UsageError` instead of printing usage + message and exiting."""

    def error(self, message):  # noqa: D401 - argparse hook
        raise UsageError(message)


def is_primary() -> bool:
    """True outside torchrun and on global rank 0 under it (the one process that reports)."""
    return os.environ.get("RANK", "0") == "0"


def message(exc: BaseException) -> str:
    """The one-line text of a validation error (KeyError's repr quotes are dropped)."""
    text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
    return " ".join(str(text).split())


#: How long a non-primary rank waits before exiting on a usage error. Every rank finds the same bad
#: flag at once; torchrun ends the whole job as soon as one rank exits, so if a silent rank exited
#: first, rank 0 could be killed before its one error line was written (seen in CI, torch 2.13).
NON_PRIMARY_EXIT_DELAY_S = 2.0


def report(prog: str, exc: BaseException) -> int:
    """Print ``prog: error: <one line>`` (primary process only) and return the usage exit status."""
    if is_primary():
        print(f"{prog}: error: {message(exc)}", file=sys.stderr, flush=True)
    else:
        time.sleep(NON_PRIMARY_EXIT_DELAY_S)  # let rank 0 report and exit first
    return EXIT_USAGE


def is_timeout(exc: BaseException) -> bool:
    """True for the errors a stalled, hung or vanished peer produces (gloo/NCCL timeouts, watchdog)."""
    text = f"{type(exc).__name__} {exc}".lower()
    return any(k in text for k in ("timed out", "timeout", "connection closed by peer", "watchdog"))


def error(prog: str, exc: BaseException, where: str = "") -> int:
    """Print ``prog: ERROR[ on rank N]: Type: message`` (one line) and return :data:`EXIT_ERROR`."""
    print(f"{prog}: ERROR{(' ' + where) if where else ''}: {type(exc).__name__}: {message(exc)}", file=sys.stderr,
          flush=True)
    return EXIT_ERROR


def timeout_s(value: float, flag: str = "--timeout-s", hi: float = 7 * 86400.0) -> float:
    """A finite timeout in (0, 7 days]: 0, negative, NaN and inf are all usage errors."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 < value <= hi:
        raise UsageError(f"{flag} must be a finite number of seconds in (0, {hi:g}]; got {value!r}")
    return float(value)


def int_flag(flag: str, value: int, lo: int, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo or (hi is not None and value > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise UsageError(f"{flag} must be an integer {rng}; got {value!r}")
    return value


def size_flag(flag: str, text: str, lo: int = 1, hi: int | None = None) -> int:
    """A byte size flag through :func:`labutil.units.parse_size`, with the flag's name in the error."""
    from ..units import parse_size

    try:
        value = parse_size(text)
    except ValueError as exc:
        raise UsageError(f"{flag}: {message(exc)}") from None
    if value < lo or (hi is not None and value > hi):
        rng = f">= {lo} bytes" if hi is None else f"in [{lo}, {hi}] bytes"
        raise UsageError(f"{flag} must be {rng}; got {text!r} (= {value} bytes)")
    return value


def _name_max(folder: Path) -> int:
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return 255  # NAME_MAX of ext4/xfs/btrfs/tmpfs


def writable_out(path, flag: str = "--out") -> Path | None:
    """Check up front that the result file can be written, leaving nothing behind: the path is
    not a folder; its nearest existing ancestor is a folder (not a file); when the parent exists, a
    probe file with the atomic write's temporary name (``.<name>.<random>.tmp``, its real length)
    is created and removed there, else the first missing folder is created and removed at once.
    Missing folders are created only when the result is written
    (:func:`labutil.fileio.write_text_atomic`), so ``--dry-run`` leaves no trace. Any OSError (a name over NAME_MAX, a read-only file system, a
    permission) is a one-line :class:`UsageError`. Returns the Path (or None)."""
    if path is None:
        return None
    if str(path).strip() == "":
        raise UsageError(f"{flag} must be a file path; got an empty string")
    p = Path(path)
    shown = str(p) if len(str(p)) <= 120 else str(p)[:60] + "..." + str(p)[-40:]
    try:
        if p.is_dir():
            raise UsageError(f"{flag} {shown!r} is a directory; give a file path like {str(p / 'result.json')!r}")
        parent = p.parent if str(p.parent) else Path(".")
        anc = parent
        while not anc.exists() and not anc.is_symlink() and anc != anc.parent:
            anc = anc.parent
        if not anc.is_dir():
            raise UsageError(f"{flag} {shown!r} cannot be created: {str(anc)!r} is a file, not a folder")
        # the atomic write's temporary name is the longest name it needs: '.' + name + '.' + 8 random + '.tmp'
        longest = len(os.fsencode(p.name)) + 14
        if longest > _name_max(anc):
            raise UsageError(f"{flag}: the file name is {len(os.fsencode(p.name))} bytes; this file system allows "
                             f"{_name_max(anc) - 14} (NAME_MAX {_name_max(anc)} less the temporary suffix)")
        if anc == parent:
            fd, probe = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=parent)
            os.close(fd)
            os.unlink(probe)
        else:  # create the first missing folder and remove it at once: nothing is left behind
            first = parent
            while first.parent != anc:
                first = first.parent
            os.mkdir(first)
            os.rmdir(first)
    except OSError as exc:
        raise UsageError(f"{flag} {shown!r} is not writable: {exc.strerror or exc}") from None
    return p


def add_sweep_flags(p: argparse.ArgumentParser, sizes_help: str) -> None:
    """The flags shared by the single-process sweeps (gemm, membw): sizes, iterations, device, out."""
    p.add_argument("--sizes", default=None, help=sizes_help)
    p.add_argument("--iters", type=int, default=None, help="timed calls per size (default: the harness's, per path)")
    p.add_argument("--warmup", type=int, default=None, help="untimed calls per size (default: the harness's, per path)")
    p.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"))
    p.add_argument("--out", default=None)


def resolve_sweep(a, cuda_available: bool, parse_sizes, default_gpu: list[int], default_cpu: list[int],
                  counts_gpu: tuple[int, int] = (3, 20), counts_cpu: tuple[int, int] = (3, 20)) -> bool:
    """Fill the path's defaults (``--warmup``, ``--iters`` = ``counts_gpu`` / ``counts_cpu`` unless given,
    and ``a.size_list``), check them and ``--device``; returns whether the run is on the GPU."""
    on_gpu = a.device != "cpu" and cuda_available
    warm, iters = counts_gpu if on_gpu else counts_cpu
    a.warmup = warm if a.warmup is None else a.warmup
    a.iters = iters if a.iters is None else a.iters
    int_flag("--iters", a.iters, lo=1, hi=100_000)
    int_flag("--warmup", a.warmup, lo=0, hi=100_000)
    if a.device == "cuda" and not on_gpu:
        raise UsageError("--device cuda needs a CUDA GPU, but torch.cuda.is_available() is False; use --device cpu")
    if a.sizes:
        try:
            a.size_list = parse_sizes(a.sizes)
        except ValueError as exc:
            raise UsageError(f"--sizes: {message(exc)}") from None
    else:
        a.size_list = list(default_gpu if on_gpu else default_cpu)
    return on_gpu
