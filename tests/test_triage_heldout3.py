"""Third held-out set (tests/fixtures/triage_heldout3.toml): 44 public incidents collected after round 2 of the
fixes (network 13, gpu 14, software 11, storage 6; 22 Chinese, 22 English; inference-serving and Kubernetes
cases tagged), pasted as on-call notes.

First run, before anything was changed for it (2026-12-03, catalogue of 84 signatures): 20 of 44 - network
4/13, gpu 9/14, software 5/11, storage 2/6; English 11/22, Chinese 9/22. Failure classes: no verdict 23, wrong
layer 1, right layer but the wrong mechanism 5 (of the established cases).

The general fixes of round 3 (labutil.troubleshoot.lexicon and the commits around it): a layer lexicon that
still gives a LOW-confidence layer when no signature or tool line decides, log messages pasted into sentences
without quotes read by the line rules, line rules and signatures for error classes and components (NVML not
loadable, Ceph MDS health, ncclSystemError, GDRDMA on some hosts only, volume full, serving KV cache), the
mechanism of a vocabulary verdict chosen from the words that named the layer. After them: 39 of 44 - these
cases were seen while fixing, so this is NOT a held-out estimate (that is tests/test_triage_heldout5.py; set 4 was held out until round 4).

The five cases still missed are marked and not tuned away: two are traps whose notes point at another layer than
the thread's cause (a filelock library deleting lock files on a shared cache; 'slow Lustre' that was a Slurm CPU
binding), and three give no component at all (a 2-node job 8x slower; 8 processes exiting while loading a model;
images read from a remote file server described without a failure word the lexicon knows)."""

from __future__ import annotations

import collections
import glob
import re
import tomllib
from pathlib import Path

import pytest

from labutil.troubleshoot import triage
from labutil.troubleshoot.lexicon import LEXICON_CONFIDENCE_CAP
from labutil.troubleshoot.signatures import _walkthrough_incidents, catalogue
from labutil.troubleshoot.triage import LEXICON_ORIGIN, PROSE_CAP

FIX = Path(__file__).parent / "fixtures"
DATA = Path(__file__).parent.parent / "labutil" / "data"
HELD = tomllib.loads((FIX / "triage_heldout3.toml").read_text(encoding="utf-8"))
KNOWN_MISSES = {"mpt_multinode_8x_slower", "anomalygpt_host_ram_8_cards", "modelscope_cache_stale_handle",
                "frontier_lustre_slow_slurm_cpus", "dali_images_remote_server"}


def test_the_set_is_independent_bilingual_and_spread():
    urls = [c["url"] for c in HELD.values()]
    assert len(set(urls)) == len(HELD) >= 40
    # no URL of the set appears in the catalogue, the walkthroughs, the bundles or any other triage fixture
    elsewhere = "\n".join(Path(f).read_text(encoding="utf-8") for f in
                          [str(DATA / "failure_signatures.toml"), str(DATA / "troubleshoot_incidents.toml"),
                           str(DATA / "troubleshoot_bundles.toml"), str(DATA / "troubleshoot_cases.toml")] +
                          [f for f in glob.glob(str(FIX / "triage_*.toml")) if not f.endswith("heldout3.toml")])
    for u in urls:
        assert not re.search(re.escape(u) + r"(?![0-9])", elsewhere), u
    design = {i.url for s in catalogue().values() for i in s.incidents} | {i.url for i, _, _ in _walkthrough_incidents()}
    assert not design & set(urls)
    layers = collections.Counter(c["layer"] for c in HELD.values())
    assert layers["gpu"] >= layers["storage"] and layers["network"] >= layers["storage"] and min(layers.values()) >= 5
    langs = collections.Counter(c["lang"] for c in HELD.values())
    assert abs(langs["zh"] - langs["en"]) <= 2
    tags = collections.Counter(t for c in HELD.values() for t in c.get("tags", []))
    assert tags["inference"] >= 5 and tags["k8s"] >= 5
    for c in HELD.values():
        assert c["url"].startswith("https://") and c["root_cause"] and c["text"].strip()
        assert isinstance(c["established"], bool) and (c["established"] or c["root_cause"].startswith("mechanism:"))


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="known miss"))
                                  if n in KNOWN_MISSES else n for n in HELD])
def test_held_out3_case_layer(name):
    c = HELD[name]
    d = triage(c["text"])
    assert d.first_failing_layer == c["layer"], (c["url"], d.scores, d.reasons[:2])
    assert d.decided_by["layer"] == c["layer"] and d.next_checks and d.change_my_mind
    # confidence is calibrated by what decided: vocabulary < a described mechanism < a tool's line
    if d.decided_by["origin"] == LEXICON_ORIGIN:
        assert 0 < d.confidence <= LEXICON_CONFIDENCE_CAP
    elif d.decided_by["origin"] == "failure signature":
        assert d.confidence <= PROSE_CAP


def test_held_out3_accuracy_and_mechanisms(capsys):
    per = collections.defaultdict(lambda: [0, 0])
    lang = collections.defaultdict(lambda: [0, 0])
    relevant = mech_ok = established = 0
    for c in HELD.values():
        d = triage(c["text"])
        ok = d.first_failing_layer == c["layer"]
        per[c["layer"]][0] += ok
        per[c["layer"]][1] += 1
        lang[c["lang"]][0] += ok
        lang[c["lang"]][1] += 1
        relevant += ok and any(s["layer"] == c["layer"] for s in d.similar_incidents[:3])
        if ok and c["established"] and c["cause_terms"]:
            established += 1
            text = (d.mechanism.get("title", "") + " " + d.mechanism.get("root_cause", "")).lower()
            mech_ok += any(re.search(r"(?<![a-z0-9])" + re.escape(t.lower()), text) for t in c["cause_terms"])
    with capsys.disabled():
        print("\ntriage on held-out set 3 (after round 3, seen while fixing): " +
              ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(per.items())) + " | " +
              ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(lang.items())) +
              f" | similar incidents of the right layer in the top 3: {relevant}; mechanism names the established "
              f"cause: {mech_ok}/{established}")
    assert sum(a for a, _ in per.values()) == len(HELD) - len(KNOWN_MISSES)      # 39 of 44, as measured
    assert relevant >= 38 and mech_ok >= 19                                       # as measured: 38; 19 of 22
