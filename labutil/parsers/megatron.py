"""Megatron-LM training logs: the per-iteration lines of ``megatron/training/training.py``.

Read by ch24 (分布式训练框架配置: throughput and MFU of a run from its log) and by
``labutil.frameworks.run_throughput``. The format is Megatron-LM's ``training_log`` with
``--log-throughput`` (fields separated by ``|``); lines that are not iteration lines are ignored.
Garbage raises :class:`MegatronLogParseError`, a :class:`labutil.parsers.ParseError`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ._common import ParseError, clean_lines, require_text

__all__ = ["MegatronIteration", "MegatronLogParseError", "parse_megatron_log", "MEGATRON_LOG_SAMPLE"]


class MegatronLogParseError(ParseError):
    """A Megatron-LM log that holds no usable iteration line."""


@dataclass(frozen=True)
class MegatronIteration:
    """One Megatron-LM training log line (values as printed; None where absent)."""

    iteration: int
    elapsed_ms: float
    global_batch: int | None
    tflops_per_gpu: float | None
    lm_loss: float | None


def parse_megatron_log(text) -> list[MegatronIteration]:
    """Parse Megatron-LM iteration lines (training_log in megatron/training/training.py), e.g.::

        iteration       10/  500000 | consumed samples:        15360 | elapsed time per iteration (ms): 6310.2 |
        throughput per GPU (TFLOP/s/GPU): 524.6 | learning rate: 1.5E-05 | global batch size:  1536 |
        lm loss: 8.0721E+00 | loss scale: 1.0 | grad norm: 2.013 | number of skipped iterations:   0 | ...

    Lines that are not iteration lines are ignored; raises :class:`MegatronLogParseError` (a
    ``labutil.parsers.ParseError``, hence a ValueError) when no iteration line is found.
    """
    text = require_text(text, "megatron log")
    it_re = re.compile(r"iteration\s+(\d+)\s*/\s*\d+")
    out = []
    for line in clean_lines(text):
        m = it_re.search(line)
        if not m or "|" not in line:
            continue
        fields = {}
        for part in line.split("|"):
            if ":" in part:
                k, _, v = part.rpartition(":")
                fields[k.strip().lower()] = v.strip()
        try:
            elapsed = float(fields["elapsed time per iteration (ms)"])
        except (KeyError, ValueError):
            continue
        if not (math.isfinite(elapsed) and elapsed > 0):
            continue  # a garbled time is not an iteration we can use

        def num(key, cast=float):
            try:
                x = float(fields[key])
            except (KeyError, ValueError):
                return None
            return cast(x) if math.isfinite(x) else None

        out.append(MegatronIteration(int(m.group(1)), elapsed, num("global batch size", int),
                                     num("throughput per gpu (tflop/s/gpu)"), num("lm loss")))
    if not out:
        raise MegatronLogParseError("megatron log: no 'iteration N/ M | ... | elapsed time per iteration (ms): X |' line found")
    return out


#: Illustrative Megatron-LM log lines of a gpt3-175b run on 1,024 H100 (dp=8 tp=4 pp=32), in the
#: format of megatron/training/training.py ``training_log`` with --log-throughput; values invented.
MEGATRON_LOG_SAMPLE = """\
[2026-03-02 10:12:41] iteration       10/  500000 | consumed samples:        15360 | elapsed time per iteration (ms): 7204.8 | throughput per GPU (TFLOP/s/GPU): 459.4 | learning rate: 1.500000E-06 | global batch size:  1536 | lm loss: 9.871203E+00 | loss scale: 1.0 | grad norm: 4.512 | number of skipped iterations:   0 | number of nan iterations:   0 |
[2026-03-02 10:13:53] iteration       20/  500000 | consumed samples:        30720 | elapsed time per iteration (ms): 7161.3 | throughput per GPU (TFLOP/s/GPU): 462.2 | learning rate: 3.000000E-06 | global batch size:  1536 | lm loss: 8.903114E+00 | loss scale: 1.0 | grad norm: 2.377 | number of skipped iterations:   0 | number of nan iterations:   0 |
[2026-03-02 10:15:05] iteration       30/  500000 | consumed samples:        46080 | elapsed time per iteration (ms): 7188.9 | throughput per GPU (TFLOP/s/GPU): 460.4 | learning rate: 4.500000E-06 | global batch size:  1536 | lm loss: 8.215550E+00 | loss scale: 1.0 | grad norm: 1.904 | number of skipped iterations:   0 | number of nan iterations:   0 |
"""
