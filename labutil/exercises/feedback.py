"""What a learner sees after a check: one message (:class:`Feedback`, :class:`CheckResult`) and,
for a wrong number, the classic slip the ratio to the reference suggests.

Nothing here knows an exercise's answer: the registry (:mod:`labutil.exercises.registry`) grades and
calls these helpers with the ratio it found.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Callable

from .answer_units import NEUTRAL, QUANTITIES, Unit, family_slips

__all__ = ["PERCENT_CONVENTION", "Feedback", "CheckResult", "slip_message"]

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


def slip_message(value: float, expected: float, unit: Unit | None, families: tuple[str, ...],
                 close: Callable[[float, float], bool]) -> str:
    """The unit slip that ``value`` / ``expected`` suggests, among the slip ``families`` of the unit; '' if none.

    ``close(a, b)`` is the exercise's own tolerance test. Of the factors that match, the closest wins
    (x1024 beats x1000 for 102,400 vs 100). Only when no family matches, a x10/x100/x1000/x10^6 ratio
    gets the neutral order-of-magnitude message (:data:`.answer_units.NEUTRAL`).
    """
    if expected == 0 or value == 0 or (value > 0) != (expected > 0):
        return ""

    def best(slips) -> str:
        hits = []
        for slip in slips:
            for factor, text in ((slip.factor, slip.up), (1 / slip.factor, slip.down)):
                if close(value, expected * factor):
                    hits.append((abs(math.log(value / (expected * factor))), text))
        return min(hits)[1] if hits else ""

    text = best(s for fam in families for s in family_slips(fam, unit)) or best(NEUTRAL)
    quantity = QUANTITIES.get(unit.quantity) if unit is not None else None
    examples = quantity.prefix_examples if quantity is not None and quantity.prefix_examples else "k/M/G/T"
    return text.replace("{examples}", examples).replace("{convention}", PERCENT_CONVENTION)
