"""What a learner sees after a check: one message (:class:`Feedback`, :class:`CheckResult`) and,
for a wrong number, the classic slip the ratio to the reference suggests.

Nothing here knows an exercise's answer: the registry (:mod:`labutil.exercises.registry`) grades and
calls these helpers with the ratio it found.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

PERCENT_CONVENTION = "课程约定：比例（利用率、效率、MFU、goodput、概率、占比）一律填百分数，45 % 填 45，不填 0.45。"


def _in_ipython() -> bool:
    """True inside an IPython shell or Jupyter kernel (results are then shown by the display hook)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of the course
        return False
    return get_ipython() is not None


class Feedback(str):
    """A message shown once: its repr is the text itself (no quotes), with an HTML view for Jupyter."""

    _colour = "#333333"

    def __repr__(self) -> str:
        return str.__str__(self)

    def _repr_html_(self) -> str:
        body = html.escape(str.__str__(self)).replace("\n", "<br>")
        return f'<div style="color:{self._colour};white-space:normal">{body}</div>'


def _show(text: str) -> Feedback:
    """Return ``text`` as Feedback; print it too when no IPython display hook will show it."""
    fb = Feedback(text)
    if not _in_ipython():
        print(fb)
    return fb


@dataclass(frozen=True, repr=False)
class CheckResult:
    """Outcome of one check: status is 'empty', 'correct', 'wrong' or 'invalid'.

    ``expected`` holds the reference value only when the answer was correct (None otherwise),
    so neither the display nor the attribute gives the answer away before it is found.
    """

    key: str
    status: str
    message: str
    expected: object = None
    given: object = None

    @property
    def correct(self) -> bool:
        return self.status == "correct"

    def __repr__(self) -> str:
        return self.message

    __str__ = __repr__

    def _repr_html_(self) -> str:
        colour = {"correct": "#1a7f37", "wrong": "#b42318", "invalid": "#b54708"}.get(self.status, "#475467")
        body = html.escape(self.message).replace("\n", "<br>")
        return f'<div style="color:{colour};white-space:normal">{body}</div>'


# (factor given/expected, message). Checked in order; each message names the slip, never the answer.
_SLIPS_PERCENT = (
    (0.01, "差了 100 倍：看起来你填的是小数（0–1）。" + PERCENT_CONVENTION),
    (100.0, "差了 100 倍：是不是把已经是百分数的值又乘了 100？"),
)
_SLIPS_OTHER = (
    (100.0, "差了 100 倍：是不是把比例写成了百分数？本题不要百分号换算。"),
    (0.01, "差了 100 倍：检查百分数与小数的换算（或 c/厘 这类前缀）。"),
)
_SLIPS = (
    (1000.0, "差了 1000 倍：检查单位前缀（k/M/G/T，ms 与 s，MB 与 GB，kW 与 MW）。"),
    (0.001, "差了 1000 倍：检查单位前缀（k/M/G/T，ms 与 s，MB 与 GB，kW 与 MW）。"),
    (1024.0, "差了 1024 倍：KiB/MiB/GiB（2 的幂）与一级前缀混用了。"),
    (1 / 1024, "差了 1024 倍：KiB/MiB/GiB（2 的幂）与一级前缀混用了。"),
    (1e6, "差了 10^6 倍：单位前缀差了两级（如 µs 与 s、MB 与 TB）。"),
    (1e-6, "差了 10^6 倍：单位前缀差了两级（如 µs 与 s、MB 与 TB）。"),
    (2**30 / 1e9, "差了约 7.4 %（= 2^30 / 10^9）：GB（10^9 B）与 GiB（2^30 B）混用了，nvidia-smi 的 MiB 也是 2 的幂。"),
    (1e9 / 2**30, "差了约 7.4 %（= 2^30 / 10^9）：GB（10^9 B）与 GiB（2^30 B）混用了，nvidia-smi 的 MiB 也是 2 的幂。"),
    (2**20 / 1e6, "差了约 4.9 %（= 2^20 / 10^6）：MB（10^6 B）与 MiB（2^20 B）混用了。"),
    (1e6 / 2**20, "差了约 4.9 %（= 2^20 / 10^6）：MB（10^6 B）与 MiB（2^20 B）混用了。"),
    (1.024, "差了 2.4 %（= 1024 / 1000）：1000 与 1024 的前缀混用了（GB 与 GiB、kB 与 KiB）。"),
    (1 / 1.024, "差了 2.4 %（= 1024 / 1000）：1000 与 1024 的前缀混用了（GB 与 GiB、kB 与 KiB）。"),
    (8.0, "差了 8 倍：bit 与 byte 混用了（Gb/s ÷ 8 = GB/s）。"),
    (0.125, "差了 8 倍：bit 与 byte 混用了（Gb/s ÷ 8 = GB/s）。"),
    (60.0, "差了 60 倍：检查分钟、秒、小时的换算。"),
    (1 / 60, "差了 60 倍：检查分钟、秒、小时的换算。"),
    (3600.0, "差了 3600 倍：秒与小时混用了。"),
    (1 / 3600, "差了 3600 倍：秒与小时混用了。"),
    (24.0, "差了 24 倍：小时与天混用了。"),
    (1 / 24, "差了 24 倍：小时与天混用了。"),
    (10.0, "差了 10 倍：检查小数点位置和数量级。"),
    (0.1, "差了 10 倍：检查小数点位置和数量级。"),
)
