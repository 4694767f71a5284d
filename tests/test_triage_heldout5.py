"""Fifth held-out set (tests/fixtures/triage_heldout5.toml): 18 public incidents collected after round 4 of the
fixes by a helper who neither ran nor read the triage engine or its catalogue (network 5, gpu 5, software 4,
storage 4; 10 English, 8 Chinese), run ONCE with nothing changed for them afterwards: the honest estimate of round
4 on unseen incidents. One label was set to the course's convention before the run (Fabric Manager is the GPU layer,
as in triage_blind.toml).

The one run (2026-12-03): 10 of 18 - network 4/5, gpu 3/5, software 1/4, storage 2/4; English 5/10, Chinese 5/8.
Failure classes: no verdict 5 (a fabric routing collision seen only as one slow node pair, a GPU described as
"misbehaving", model loads that never finish from object storage / a network share, slurmd failing after a reboot),
wrong layer 3 (a new HGX node that will not start, read as a driver regression; nccl-tests slow with healthy
ib_write_bw, read as PCIe instead of GPUDirect RDMA; an NCCL bug in a container, read as the network). Of the 9
established cases placed in the right layer, the mechanism names the thread's cause in 3.

Round 5 then added what those misses had in common with notes engineers write (a slow node pair, model loads from a
network mount or object storage, slurmd failing after a reboot, a new HGX server whose multi-GPU jobs fail, NCCL
slow while perftest is fine, NCCL's "Could not find NET with id", a GPU that keeps misbehaving; a ',' or ':' now
ends a negation's scope and a long sentence crowded with numbers still reads as notes), so this set is now SEEN
WHILE FIXING: 17 of 18. The one case round 5 lost is ib_links_negotiated_100g: "ib_send_bw fine, nccl-tests far
below" now reads as NCCL's use of the fabric (software: GPUDirect RDMA, HCA selection), which is what the words of
a800_nccl_slow_no_peermem established; this thread's cause was the links' rate (network) - the same words, two
layers. The estimate of round 5 on unseen incidents is the sixth set,
tests/test_triage_heldout6.py."""

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
HELD = tomllib.loads((FIX / "triage_heldout5.toml").read_text(encoding="utf-8"))
#: the misses of the one run (before round 5), kept as the record of that estimate
MISSES_ONE_RUN = {"ib_fabric_routing_collision_pair", "trixie_cn110_gpu_replaced", "wan_weights_on_oss_slow_load",
          "ollama_azure_files_slow_load", "h20_8gpu_no_fabricmanager", "pcluster_reboot_slurmd_fails",
          "a800_nccl_slow_no_peermem", "nemo_container_nccl_net_id0"}
#: still missed after round 5 (which saw this set)
MISSES = {"ib_links_negotiated_100g"}


def test_the_set_is_independent_of_everything_else():
    urls = [c["url"] for c in HELD.values()]
    assert len(set(urls)) == len(HELD) >= 15
    elsewhere = "\n".join(Path(f).read_text(encoding="utf-8") for f in
                          [str(DATA / "failure_signatures.toml"), str(DATA / "troubleshoot_incidents.toml"),
                           str(DATA / "troubleshoot_bundles.toml"), str(DATA / "troubleshoot_cases.toml")] +
                          [f for f in glob.glob(str(FIX / "triage_*.toml")) if not f.endswith("heldout5.toml")])
    for u in urls:
        assert not re.search(re.escape(u) + r"(?![0-9])", elsewhere), u
    design = {i.url for s in catalogue().values() for i in s.incidents} | {i.url for i, _, _ in _walkthrough_incidents()}
    assert not design & set(urls)
    assert set(collections.Counter(c["layer"] for c in HELD.values())) == {"network", "storage", "gpu", "software"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="still missed after round 5"))
                                  if n in MISSES else n for n in HELD])
def test_held_out5_case_layer(name):
    c = HELD[name]
    d = triage(c["text"])
    assert d.first_failing_layer == c["layer"], (c["url"], d.scores, d.reasons[:2])


def test_held_out5_accuracy(capsys):
    per = collections.defaultdict(lambda: [0, 0])
    lang = collections.defaultdict(lambda: [0, 0])
    for c in HELD.values():
        ok = triage(c["text"]).first_failing_layer == c["layer"]
        per[c["layer"]][0] += ok
        per[c["layer"]][1] += 1
        lang[c["lang"]][0] += ok
        lang[c["lang"]][1] += 1
    with capsys.disabled():
        print("\ntriage on set 5 (seen while fixing round 5; its one run before that: 10/18): " +
              ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(per.items())) + " | " +
              ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(lang.items())))
    assert sum(a for a, _ in per.values()) == len(HELD) - len(MISSES) == 17
    assert len(HELD) - len(MISSES_ONE_RUN) == 10      # the one run's record
