"""The chapter facts of ``labutil.facts`` (numbers one chapter's prose quotes from its own models) are
each stated at least once in the phrase their pattern expects: a pattern that matches nothing would
let the prose drift unseen. ``tests/test_consistency.py`` checks that every mention is the model's value.
"""

import pytest

from labutil import facts

from tools import number_scan  # the corpus tests/test_consistency.py reads (prose + checked outputs)

KEYS = [f.key for f in facts._CHAPTER_FACTS]


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return [t for parts in number_scan.corpus().values() for t in parts.values()]


@pytest.mark.parametrize("key", KEYS)
def test_chapter_fact_is_stated(corpus, key):
    n = sum(len(facts.find_values(key, t)) for t in corpus)
    assert n >= 1, f"no chapter states {key} ({facts.text(key)}) in a phrase its patterns match: {facts.fact(key).patterns}"


def test_chapter_facts_are_finite_and_formatted():
    for key in KEYS:
        v = facts.value(key)
        assert v == v and abs(v) < 1e12, key
        assert facts.text(key)
