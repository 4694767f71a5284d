"""Second held-out set (tests/fixtures/triage_heldout2.toml): 15 public incidents collected after the fixes
that followed the blind set, pasted the same way (8 Chinese, 7 English).

First run, before anything was changed for it (2026-12-03): 8 of 15 - network 3/4, storage 1/3, gpu 3/3,
software 1/5; English 2/7, Chinese 6/8. One of them (open-gpu-kernel-modules #1150, placed right) then
turned out to be a source of a signature already, so it was replaced (by #461, first run after round 2):
on the 14 independent cases the first run was 7/14 - the honest estimate of the first round of fixes on
unseen incidents. A second round of general fixes followed (UCX's 'Transport retry count exceeded' wording, CUDA
error 46 'devices busy or unavailable', an overloaded shared file system, an NCCL-version regression cue,
'wrong' no longer read as a wrongly chosen NIC, scratch/HDD data paths, 'caused by previous Xid N'): 13/15.
The two cases still missed are marked below; they are not tuned away (a contrast between two settings of
one job, and wrong results under NCCL_P2P_DISABLE on an old NCCL, have no general reading yet)."""

from __future__ import annotations

import collections
import tomllib
from pathlib import Path

import pytest

from labutil.troubleshoot import triage
from labutil.troubleshoot.signatures import _walkthrough_incidents, catalogue

FIX = Path(__file__).parent / "fixtures"
HELD = tomllib.loads((FIX / "triage_heldout2.toml").read_text(encoding="utf-8"))
OTHER = [tomllib.loads((FIX / f).read_text(encoding="utf-8")) for f in ("triage_eval.toml", "triage_blind.toml")]
KNOWN_MISSES = {"wrong_results_p2p_disabled_old_nccl", "ckpt_hang_distribute_modules"}


def test_held_out_set_is_independent():
    urls = {c["url"] for c in HELD.values()}
    design = {i.url for s in catalogue().values() for i in s.incidents} | {i.url for i, _, _ in _walkthrough_incidents()}
    assert len(urls) == len(HELD) >= 15 and not design & urls
    assert not {c["url"] for o in OTHER for c in o.values()} & urls
    assert set(collections.Counter(c["layer"] for c in HELD.values())) == {"network", "storage", "gpu", "software"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="known miss"))
                                  if n in KNOWN_MISSES else n for n in HELD])
def test_held_out_case_layer(name):
    c = HELD[name]
    d = triage(c["text"])
    assert d.first_failing_layer == c["layer"], (c["url"], d.scores, d.reasons[:2])


def test_held_out_accuracy(capsys):
    per = collections.defaultdict(lambda: [0, 0])
    for c in HELD.values():
        per[c["layer"]][0] += triage(c["text"]).first_failing_layer == c["layer"]
        per[c["layer"]][1] += 1
    with capsys.disabled():
        print("\ntriage on held-out set 2: " + ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(per.items())))
    assert sum(a for a, _ in per.values()) >= len(HELD) - len(KNOWN_MISSES)
