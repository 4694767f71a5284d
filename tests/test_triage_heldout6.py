"""Sixth held-out set (tests/fixtures/triage_heldout6.toml): 20 public incidents collected after round 5 of the
fixes by a helper who neither ran nor read the triage engine or its catalogue (network 5, gpu 5, software 5,
storage 5; 10 English, 10 Chinese), run ONCE with nothing changed for them afterwards: the honest estimate of round
5 on unseen incidents.

The one run (2026-12-03): 9 of 20 - network 2/5, gpu 3/5, software 2/5, storage 2/5; English 6/10, Chinese 3/10.
Failure classes: no verdict 8 (an MTU mismatch on container interfaces, a firewall that came back after a power
event, a B200 node hanging after NCCL init until a reboot, a site's process-killing bot, a checkpoint directory the
launcher did not mount into the container, NFS RPC saturation by a 60-node checkpoint, a slow model load from a
failing drive and one from an NFS volume through mmap - the last two in Chinese phrasings the round-5 model-load
signature does not know), wrong layer 3 (socket receive timeouts between pods read as the GPU Operator's driver,
Fabric Manager degraded after a restart without a GPU reset read as a slow node, a QP-rebuild bug in a transfer
engine read as a link flap). Of the 6 established cases placed in the right
layer, the mechanism names the thread's cause in all 6.

The misses are asserted as they are (strict xfail): they are not tuned away, so the numbers above stay the
held-out estimate."""

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
HELD = tomllib.loads((FIX / "triage_heldout6.toml").read_text(encoding="utf-8"))
#: the misses of the one run, kept as measured
MISSES = {"slurm_container_mtu_mismatch", "arjuna_jobs_stuck_cg_after_power", "k8s_pods_socket_recv_timeout",
          "h200_nvls_unknown_error_fm", "b200_hang_after_nccl_init_reboot", "arjuna_gpu_jobs_killed_8min",
          "mooncake_qp_not_rebuilt_after_flap", "bridge_ckpt_dir_not_mounted", "b200_60node_ckpt_nfs_rpc",
          "vllm_slow_load_bad_disk", "llamacpp_nfs_pvc_mmap_collapse"}


def test_the_set_is_independent_of_everything_else():
    urls = [c["url"] for c in HELD.values()]
    assert len(set(urls)) == len(HELD) >= 15
    elsewhere = "\n".join(Path(f).read_text(encoding="utf-8") for f in
                          [str(DATA / "failure_signatures.toml"), str(DATA / "troubleshoot_incidents.toml"),
                           str(DATA / "troubleshoot_bundles.toml"), str(DATA / "troubleshoot_cases.toml")] +
                          [f for f in glob.glob(str(FIX / "triage_*.toml")) if not f.endswith("heldout6.toml")])
    for u in urls:
        assert not re.search(re.escape(u) + r"(?![0-9])", elsewhere), u
    design = {i.url for s in catalogue().values() for i in s.incidents} | {i.url for i, _, _ in _walkthrough_incidents()}
    assert not design & set(urls)
    assert set(collections.Counter(c["layer"] for c in HELD.values())) == {"network", "storage", "gpu", "software"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="missed in the one run"))
                                  if n in MISSES else n for n in HELD])
def test_held_out6_case_layer(name):
    c = HELD[name]
    d = triage(c["text"])
    assert d.first_failing_layer == c["layer"], (c["url"], d.scores, d.reasons[:2])


def test_held_out6_accuracy(capsys):
    per = collections.defaultdict(lambda: [0, 0])
    lang = collections.defaultdict(lambda: [0, 0])
    for c in HELD.values():
        ok = triage(c["text"]).first_failing_layer == c["layer"]
        per[c["layer"]][0] += ok
        per[c["layer"]][1] += 1
        lang[c["lang"]][0] += ok
        lang[c["lang"]][1] += 1
    with capsys.disabled():
        print("\ntriage on held-out set 6 (run once after round 5, not tuned on): " +
              ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(per.items())) + " | " +
              ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(lang.items())))
    assert sum(a for a, _ in per.values()) == len(HELD) - len(MISSES) == 9
