"""Fourth held-out set (tests/fixtures/triage_heldout4.toml): 17 public incidents collected after round 3 of the
fixes (network 4, gpu 5, software 5, storage 3; 9 Chinese, 8 English), run ONCE before anything was changed for them.

The one run (2026-12-03, before round 4): 12 of 17 - network 3/4, gpu 3/5, software 3/5, storage 3/3; English 4/8,
Chinese 8/9; failure classes: no verdict 4, wrong layer 1. That is the honest estimate of round 3 on unseen
incidents; the code before round 3 (merge 523389f) placed 8 of 17 of the same set.

Round 4 then fixed what the misses had in common with notes engineers write (a GPU that "dropped" or "went missing",
an overheating card without a word about clocks, an index after "rank"/"GPU" read as a zero count), so this set is
now SEEN WHILE FIXING: 14 of 17 (English 5/8, Chinese 9/9). The estimate of round 4 on unseen incidents is the fifth
set, tests/test_triage_heldout5.py. The remaining misses are asserted as they are (strict xfail)."""

from __future__ import annotations

import collections
import glob
import re
import tomllib
from pathlib import Path

import pytest

from labutil.troubleshoot import triage
from labutil.troubleshoot.signatures import _walkthrough_incidents, catalogue

FIX = Path(__file__).parent / "fixtures"
DATA = Path(__file__).parent.parent / "labutil" / "data"
HELD = tomllib.loads((FIX / "triage_heldout4.toml").read_text(encoding="utf-8"))
#: the misses of the one run (before round 4), kept as the record of that estimate
MISSES_ONE_RUN = {"two_nodes_unhandled_system_error", "weathergen_timeout_env_rebuilt", "rtx6000_gpu_dropped_serving",
                  "cyclegan_1080ti_overheating", "dlio_fs_training_hang"}
#: still missed after round 4 (which saw this set)
MISSES = {"two_nodes_unhandled_system_error", "weathergen_timeout_env_rebuilt", "dlio_fs_training_hang"}


def test_the_set_is_independent_of_everything_else():
    urls = [c["url"] for c in HELD.values()]
    assert len(set(urls)) == len(HELD) >= 15
    elsewhere = "\n".join(Path(f).read_text(encoding="utf-8") for f in
                          [str(DATA / "failure_signatures.toml"), str(DATA / "troubleshoot_incidents.toml"),
                           str(DATA / "troubleshoot_bundles.toml"), str(DATA / "troubleshoot_cases.toml")] +
                          [f for f in glob.glob(str(FIX / "triage_*.toml")) if not f.endswith("heldout4.toml")])
    for u in urls:
        assert not re.search(re.escape(u) + r"(?![0-9])", elsewhere), u
    design = {i.url for s in catalogue().values() for i in s.incidents} | {i.url for i, _, _ in _walkthrough_incidents()}
    assert not design & set(urls)
    assert set(collections.Counter(c["layer"] for c in HELD.values())) == {"network", "storage", "gpu", "software"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="still missed after round 4"))
                                  if n in MISSES else n for n in HELD])
def test_held_out4_case_layer(name):
    c = HELD[name]
    d = triage(c["text"])
    assert d.first_failing_layer == c["layer"], (c["url"], d.scores, d.reasons[:2])


def test_held_out4_accuracy(capsys):
    per = collections.defaultdict(lambda: [0, 0])
    lang = collections.defaultdict(lambda: [0, 0])
    for c in HELD.values():
        ok = triage(c["text"]).first_failing_layer == c["layer"]
        per[c["layer"]][0] += ok
        per[c["layer"]][1] += 1
        lang[c["lang"]][0] += ok
        lang[c["lang"]][1] += 1
    with capsys.disabled():
        print("\ntriage on set 4 (seen while fixing round 4; its one run before that: 12/17): " +
              ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(per.items())) + " | " +
              ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(lang.items())))
    assert sum(a for a, _ in per.values()) == len(HELD) - len(MISSES) == 14
    assert MISSES <= MISSES_ONE_RUN and len(HELD) - len(MISSES_ONE_RUN) == 12      # the one run's record
