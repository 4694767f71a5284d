"""Self-grading exercises.

Each chapter registers its exercises in ``labutil/exercises/chNN.py``. An exercise's answer is
computed from the course's models (never a hard-coded magic number), and the checker compares
the learner's value within a tolerance. In a notebook::

    from labutil.exercises import exercise
    answer_1 = None          # 在这里填入你的答案
    exercise("ch01.1").check(answer_1)

``check`` returns a :class:`CheckResult` that Jupyter shows as ONE message (HTML, or text
outside a browser). Before a correct answer the result never contains the reference value:
a wrong answer is told which way it is off and, when the ratio to the reference is a
classic slip of its unit (x100 percent vs fraction, x1000 prefix, x1024 / x1.074 GiB vs GB, x8
bits vs bytes, x60 minutes vs seconds ...), which slip that suggests. ``check(None)`` says "尚未作答"
once and never raises, so a shipped notebook runs clean with the answers left empty.

``hint(i)`` shows hint ``i`` (numbered from 1); ``solution()`` shows the worked solution (the
instructors' view of every solution is ``python -m labutil.exercises --solutions ch01``).

Course-wide convention (:data:`PERCENT_CONVENTION`): every share -- utilisation, efficiency,
MFU, goodput, probability, share of time -- is answered in percent (45 % is entered as 45,
unit ``"%"``); a factor that a tool defines on 0..1 (Slurm's fair-share factor) is the only
exception and its prompt says so.

Kinds of exercise (``kind``): ``"model"`` (computed with the chapter's model functions),
``"by_hand"`` (solvable with pen and paper from the chapter text) and ``"judgement"`` (a
choice -- which layout, which fabric, which fix -- whose right option is decided by a model
call). Choice exercises accept every spelling in ``synonyms`` (e.g. "memory", "memory-bound",
"访存受限") and, when they do not recognise an answer, list the accepted spellings.

Answers may carry their unit ("156.5 GB", "2.4 次/天", "45％", "1,024"): the unit table
(:mod:`.answer_units`) lists, for every ``Exercise.unit``, its aliases, how it converts to the other
units of its quantity (a GiB answer to a GB question is converted, with a note) and the slip
families that make sense for it -- a 2-7 % ratio is a GB/GiB or MB/MiB slip only for data units,
x8 is bit/byte only for data sizes and rates and servers/GPUs only for GPU counts, x24 is hours vs
days only where time is the unit. Every other unit gets at most an order-of-magnitude hint.

A wrong option of a judgement exercise is told why ("「X」不对：…" with the deciding numbers):
``Exercise(explain=callable)`` computes the reason from the same model calls as the answer and never
names the right option. An exercise that reuses a chapter cell's model call declares
``params={"module.function": {...}}``; ``tests/test_exercise_params.py`` checks the chapter's source
calls it with the same values.

Layout: :mod:`.registry` (``Exercise``, ``register``, look-ups), :mod:`.answers` (reading an answer),
:mod:`.answer_units` (the unit table), :mod:`.feedback` (the one message, slip detection),
``chNN.py`` (each chapter's exercises), :mod:`.labs` (the labs' questions on the learner's own
measurements). This module only re-exports.
"""

from .feedback import PERCENT_CONVENTION, CheckResult, Feedback
from .registry import (_REGISTRY, BOUND_SYNONYMS, KINDS, Exercise, ExerciseKeyError, chapter_exercises, chapters,
                       exercise, load_all, register)

__all__ = ["BOUND_SYNONYMS", "KINDS", "PERCENT_CONVENTION", "CheckResult", "Exercise", "ExerciseKeyError", "Feedback",
           "chapter_exercises", "chapters", "exercise", "load_all", "register"]
