"""The chapter facts of ``labutil.facts`` (numbers one chapter's prose quotes from its own models) are
each stated at least once in the phrase their pattern expects: a pattern that matches nothing would
let the prose drift unseen. ``tests/test_consistency.py`` checks that every mention is the model's value.
"""

import pytest

from labutil import facts

from test_consistency import _checked_outputs, _markdown, CHAPTERS  # noqa: F401  (same corpus)

KEYS = [f.key for f in facts._CHAPTER_FACTS]


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    out = []
    for py in sorted(CHAPTERS.glob("ch*.py")):
        out += [_markdown(py), _checked_outputs(py.with_suffix(".ipynb"))]
    return out


@pytest.mark.parametrize("key", KEYS)
def test_chapter_fact_is_stated(corpus, key):
    n = sum(len(facts.find_values(key, t)) for t in corpus)
    assert n >= 1, f"no chapter states {key} ({facts.text(key)}) in a phrase its patterns match: {facts.fact(key).patterns}"


def test_chapter_facts_are_finite_and_formatted():
    for key in KEYS:
        v = facts.value(key)
        assert v == v and abs(v) < 1e12, key
        assert facts.text(key)
