"""The layer lexicon (labutil.troubleshoot.lexicon) and the other general fixes of triage round 3: what the
fallback may and may not conclude from words, how confident it is, and the readers it added (log messages
pasted into sentences without quotes, error classes, GDRDMA on some hosts only). The notes below are written
for these tests (not taken from an evaluation set)."""

from __future__ import annotations

import collections

import pytest

from labutil import data_files
from labutil.troubleshoot import triage
from labutil.troubleshoot.lexicon import (LEXICON_CONFIDENCE_CAP, LEXICON_WEIGHT, MIN_UNITS, layer_evidence, lexicon,
                                          lexicon_verdict)
from labutil.troubleshoot.recognise.prose import embedded_spans, is_prose
from labutil.troubleshoot.signatures import catalogue, normalise
from labutil.troubleshoot.triage import LEXICON_ORIGIN, NEXT_CHECKS, PROSE_CAP


def test_the_lexicon_file_is_consistent():
    data = data_files.load("troubleshoot_lexicon.toml")
    owners = collections.defaultdict(set)
    for g in data["group"]:
        assert g["layer"] in ("network", "storage", "gpu", "software") and g["check"] in NEXT_CHECKS, g
        assert 0 < g["weight"] <= 2 and g["phrases"]
        for p in g["phrases"]:
            owners[normalise(p).strip()].add(g["layer"])
    assert not {p: o for p, o in owners.items() if len(o) > 1}      # a phrasing names one layer only
    assert {L for o in owners.values() for L in o} == {"network", "storage", "gpu", "software"}
    lx = lexicon()
    # the catalogue's single-layer anchor phrasings are part of the vocabulary, minus the generic ones
    assert lx.term_info["nouveau"][0] == "software" and "node" not in lx.term_info and "data" not in lx.term_info
    stop = {normalise(s) for s in data["meta"]["stop"]}
    anchors = {normalise(p) for s in catalogue().values() for p in s.cues[0]}
    assert stop <= anchors | {normalise(p) for p in owners} | stop          # stop words are real anchor phrasings


@pytest.mark.parametrize("text,layer", [
    ("两台机器之间一直断连，怀疑是网卡或者交换机的问题", "network"),
    ("没有 IB 网卡，GPU 都正常，训练读数据卡住了，数据在网络盘上", "storage"),   # negated and healthy terms dropped
    ("job dies right after start on the new nodes: kubelet keeps restarting the containerd shim", "software"),
    ("after the hall power event two GPUs per node run at low clocks, power brake asserted", "gpu"),
])
def test_notes_that_name_a_layer_get_a_low_confidence_verdict(text, layer):
    d = triage(text)
    assert d.first_failing_layer == layer, (d.scores, d.reasons[:2])
    if d.decided_by["origin"] == LEXICON_ORIGIN:
        assert d.scores[layer] == LEXICON_WEIGHT and 0 < d.confidence <= LEXICON_CONFIDENCE_CAP
        assert d.root_check == "lexicon" and "no catalogued mechanism matched" in d.reasons[0]
        confirm = [c for c in d.next_checks if c["purpose"] == "confirm"]
        assert confirm and confirm[0]["layer"] == layer and d.change_my_mind


@pytest.mark.parametrize("text", [
    "we use lustre and infiniband on this cluster",           # no failure reported
    "NCCL fails",                                              # a failure, but nothing names a layer
    "the card keeps dropping out under load",                   # 'card' alone: a GPU or a NIC
    "NVLink error counters all 0, ECC errors: 0, nothing in dmesg",
    "The OOM killer was not involved and nothing got killed; memory use stays at 40 %.",
    "single node works, hangs on multi-node",                   # the scale pattern never decides alone
])
def test_words_that_do_not_name_a_failing_layer_give_no_verdict(text):
    assert triage(text).first_failing_layer is None


def test_negation_healthy_words_longest_match_and_failure_context():
    ev = layer_evidence("交换机是好的，没有丢包，nfs 挂载卡住了")
    assert ev.units["network"] == 0 and ev.units["storage"] >= MIN_UNITS
    ev = layer_evidence("数据在网络盘上，读数据很慢")
    assert "网络盘" in ev.terms["storage"] and "network" not in ev.terms          # not '网络'
    quiet = layer_evidence("lustre, nfs, infiniband and nvlink are installed")
    assert not quiet.failure and sum(quiet.units.values()) == 0
    ev = layer_evidence("training slower than on one node, the nics show drops")
    assert ev.scale and lexicon_verdict(ev) == "network"
    # a scale pattern adds to a layer only when the notes name it
    assert lexicon_verdict(layer_evidence("2 nodes x 8 gpu run is 8x slower than 1 node")) is None


def test_confidence_order_vocabulary_signature_tool():
    words = triage("两台机器之间一直断连，怀疑是网卡或者交换机的问题")            # lexicon
    described = triage("one node runs at 90 °C and its clocks drop")            # a signature
    tool = triage("    Clocks Event Reasons\n        HW Slowdown                       : Active\n"
                  "            HW Thermal Slowdown           : Active\n")
    assert words.decided_by["origin"] == LEXICON_ORIGIN and described.decided_by["origin"] == "failure signature"
    assert words.confidence <= LEXICON_CONFIDENCE_CAP < described.confidence <= PROSE_CAP < tool.confidence


def test_healthy_tool_output_is_not_overruled_by_vocabulary():
    from labutil.parsers import samples
    healthy = samples.sample("ibstat_roce")                       # ports Active: healthy network evidence
    notes = "the job fails, maybe the nic or the switch?"
    assert triage(notes).first_failing_layer == "network"
    assert triage({"ibstat": healthy, "notes": notes}).first_failing_layer is None


def test_log_messages_pasted_into_sentences_are_read():
    zh = "两台机器跑就报 NCCL error in: ProcessGroupNCCL.cpp:260, unhandled system error，单机没问题"
    assert embedded_spans(zh) == ["NCCL error in: ProcessGroupNCCL.cpp:260, unhandled system error"]
    en = "2x8 nodes, the training dies with NCCL WARN NET/IB : Got async event : local catastrophic error"
    assert is_prose(en) and embedded_spans(en)[0].startswith("NCCL WARN")
    assert not is_prose("h:1:2 [0] NCCL WARN NET/IB : Got async event : local catastrophic error")
    d = triage("A100 节点上服务偶发起不来，NCCL 日志里报 Got async event : local catastrophic error，其它节点正常")
    assert d.first_failing_layer == "network"
    assert any(s.kind == "ib_async_event" and s.origin in ("notes", "quoted in notes") for s in d.signals)
    # a rule that never fires on a sentence (lustre_lost is log-only) reads the fragment inside it
    d = triage("训练卡住了，dmesg 里有 LustreError: 11-0: lustre-OST0003-osc: operation ost_write to node "
               "10.0.0.5@o2ib failed: rc = -107，别的节点正常")
    assert any(s.kind == "lustre_lost" and s.origin == "quoted in notes" for s in d.signals)
    assert embedded_spans("换了 H100 之后快多了") == []               # product names are not log fragments


def test_new_line_rules_and_global_rules():
    assert triage("2023/10/19 03:11:54 Failed to initialize NVML: could not load NVML library.").root_check == \
        "nvml_not_loaded"
    assert triage("Failed to initialize NVML: NVML version mismatch").root_check == "driver_mismatch"
    d = triage("HEALTH_WARN 2 MDSs report slow requests; 1 MDSs behind on trimming")
    assert (d.first_failing_layer, d.root_check, d.mechanism["id"]) == ("storage", "ceph_health", "cephfs_mds_slow")
    d = triage("gpu-a:1:2 [0] NCCL WARN unhandled system error")
    assert d.first_failing_layer is None and 0 < d.scores["network"] < 0.5      # an error class is a hint
    log = ("gpu-a:100:200 [0] NCCL INFO Channel 00/0 : 0[7000] -> 8[7000] [send] via NET/IB/1/GDRDMA\n"
           "gpu-b:300:400 [0] NCCL INFO Channel 00/0 : 0[7000] -> 8[7000] [receive] via NET/IB/0\n")
    d = triage(log)
    assert (d.first_failing_layer, d.root_check, d.mechanism["id"]) == ("software", "gdr_missing_on_host",
                                                                       "gdr_disabled_peermem")
    assert "gpu-b" in d.reasons[0]
    both = log.replace("via NET/IB/0", "via NET/IB/0/GDRDMA")
    assert triage(both).first_failing_layer is None


def test_new_signatures_name_the_mechanism():
    assert triage("OSError: [Errno 28] No space left on device").mechanism["id"] == "disk_full"
    lustre = triage("ckpt save to FSx for Lustre dies half way, df says plenty free\n[Errno 28] No space left on device")
    assert lustre.mechanism["id"] == "ost_full"
    kv = triage("ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be "
                "stored in KV cache (5000). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` "
                "when initializing the engine.")
    assert (kv.first_failing_layer, kv.mechanism["id"]) == ("software", "serving_kv_cache_too_small")
    fm = triage("节点是带 NVSwitch 的 8 卡机，nvidia-cuda-validator 一直起不来")
    assert (fm.first_failing_layer, fm.mechanism["id"]) == ("gpu", "nvswitch_cuda_init_fails")


def test_lexicon_reads_a_bounded_prefix_and_never_raises():
    from labutil.troubleshoot.lexicon import MAX_LEXICON_CHARS
    big = ("the nfs mount hangs. " * (MAX_LEXICON_CHARS // 10))
    ev = layer_evidence(big)
    assert ev.terms["storage"] and lexicon_verdict(ev) == "storage"
    for junk in ("", "\x00\x01", "。。。", "fail " * 3, "没有", "$$$ error"):
        layer_evidence(junk)
