"""Course-wide consistency: one value per course fact in every chapter and lab (issue 8 item 7, issue 17).

Every fact of ``labutil.facts`` is computed once by a model call; this test scans every chapter's and
lab's prose (markdown cells of the jupytext source) and checked outputs (``# NBVAL_CHECK_OUTPUT``
cells of the notebook) for the phrases by which the fact is printed, and fails when a notebook prints
another value -- so two chapters can no longer give two answers to the same question. The text is
read by ``tools/number_scan.py`` (``corpus``), the script that finds the numbers quoted by several
notebooks; ``python tools/number_scan.py coverage`` reports what the registry checks.
"""

import math
import re

import pytest

from labutil import compute, facts
from tools import number_scan


@pytest.fixture(scope="module")
def corpus() -> dict:
    """notebook -> {'prose': text, 'outputs': text}, for the 30 chapters and the labs."""
    out = number_scan.corpus()
    assert sum(k.startswith("ch") for k in out) >= 30 and sum(k.startswith("lab") for k in out) >= 6
    return out


@pytest.mark.parametrize("key", facts.keys())
def test_every_chapter_prints_the_same_value(corpus, key):
    found = []
    for chapter, parts in corpus.items():
        for where, txt in parts.items():
            found += [(chapter, where, v) for v in facts.find_values(key, txt)]
    wrong = [(c, w, v) for c, w, v in found if not facts.matches(key, v)]
    assert not wrong, (f"{key} = {facts.text(key)} ({facts.fact(key).description}); chapters print other values: "
                       f"{wrong}; all mentions: {found}")


def test_every_fact_is_stated_somewhere(corpus):
    """The registry is not vacuous: every fact is read at least once, so its phrases match the course's
    wording (a fact nobody quotes, or phrases that no longer match the prose, protect nothing)."""
    silent = [k for k in facts.keys()
              if not any(facts.find_values(k, t) for parts in corpus.values() for t in parts.values())]
    assert not silent, f"facts no notebook prints in a phrase the registry recognises: {silent}"


@pytest.mark.parametrize("key", facts.keys())
def test_fact_is_well_formed(key):
    f = facts.fact(key)
    v = facts.value(key)
    assert math.isfinite(v), f"{key} computes {v}"
    assert f.source.strip() and f.description.strip() and f.patterns
    for p in f.patterns:
        assert re.compile(p).groups == 1, f"{key}: a phrase must capture exactly the printed number: {p}"


def test_registry_checks_many_mentions(corpus):
    """How much the registry checks (issue 17: every number quoted in two places): the scan's coverage."""
    cov = number_scan.coverage(corpus)
    pairs = sum(len(v) for v in cov.values())
    notebooks = {nb for v in cov.values() for nb, _, _ in v}
    assert len(cov) >= 100 and pairs >= 600 and len(notebooks) >= 30, (len(cov), pairs, len(notebooks))


def test_matching_rule():
    # 480 GB/s: '480', '~480', '480.0' match; '405' (450 x 0.9, the old intra-node figure) does not
    assert facts.matches("h100_nvls_busbw_gbs", "480") and facts.matches("h100_nvls_busbw_gbs", "480.0")
    assert not facts.matches("h100_nvls_busbw_gbs", "405")
    u = 100 * facts.value("seed003_utilisation")
    assert facts.matches("seed003_utilisation", f"{u:.1f}") and facts.matches("seed003_utilisation", f"{u:.0f}")
    assert not facts.matches("seed003_utilisation", "18.3")  # the old hierarchical-at-line-rate figure
    assert facts.find_values("h100_nvls_busbw_gbs", "8×H100 开启 NVLS 时约 480 GB/s") == ["480"]
    assert facts.find_values("h100_ring_busbw_gbs", "8×H100 用 ring 约 370 GB/s") == ["370"]
    # ch08 once printed another workload's utilisation for the same cluster as the seed's: caught now
    old_ch08 = "每台服务器一个 25 GbE 口时，梯度同步约 8.7 s、计算约 0.6 s，GPU 只有约 7% 的时间在算——远低于「不足 30%」"
    assert facts.find_values("seed003_utilisation", old_ch08) == ["7"]
    assert not facts.matches("seed003_utilisation", "7")
    assert facts.find_values("seed003_utilisation", "种子课程工作负载每卡每步 16,384 token，GPU 只有约 14.2% 的时间在算") == ["14.2"]
    with pytest.raises(KeyError):
        facts.fact("h100_busbw")


def test_fact_values_and_their_other_code_paths():
    from labutil.cluster import Cluster
    from labutil.explore import comm as ec, nccl as en

    # one computation, many readers: the ch14 explorer's seed 003 row and the ch22 acceptance explorer
    assert ec.seed003_rows()[0]["utilisation"] == pytest.approx(facts.value("seed003_utilisation"), rel=1e-12)
    assert ec.seed003_rows()[0]["sync_s"] == pytest.approx(facts.value("seed003_sync_s"), rel=1e-12)
    assert en.acceptance_model()["expected_gbs"] == pytest.approx(facts.value("dgx_h100_2node_busbw_gbs"))
    assert facts.value("h100_ring_busbw_gbs") == 370 and facts.value("h100_nvls_busbw_gbs") == 480
    assert facts.value("dgx_h100_node_net_gbs") == pytest.approx(384)
    assert facts.value("dgx_h100_2node_busbw_gbs") == pytest.approx(
        min(370, Cluster.system("DGX-H100").node_net_gbs))
    assert facts.value("seed003_utilisation") < 0.30  # seed 003: "GPU 利用率不足 30%"
    assert facts.value("failures_per_day_10000_gpus") == pytest.approx(2.4)
    assert 25 < facts.value("gpt3_175b_days_1024_a100") < 45  # Narayanan et al. 2021 §5.1: ~34 days


def test_one_mfu_definition_and_hfu():
    # MFU = model FLOPs / (time x GPUs x dense peak), cluster level (PaLM App. B; Llama 3)
    assert compute.mfu_cluster(989.4e12 * 16 * 10 * 0.4, 10.0, 16, 989.4) == pytest.approx(0.40)
    # Megatron-LM 1T (Narayanan et al. 2021): 163 TFLOP/s per A100 with full recompute = 52 % HFU;
    # the model FLOPs are 3/4 of the executed ones, so MFU ~ 39 % (issue 8)
    hw = 163e12 * 3072 * 100.0
    assert compute.hfu(hw, 100.0, 3072, 312.0) == pytest.approx(0.522, abs=0.001)
    assert compute.mfu_cluster(0.75 * hw, 100.0, 3072, 312.0) == pytest.approx(0.392, abs=0.001)
    # the per-GPU form agrees with the cluster form
    assert compute.mfu(140.0, 312.0) == pytest.approx(compute.mfu_cluster(140e12 * 8 * 3.0, 3.0, 8, 312.0))
    with pytest.raises(ValueError):
        compute.mfu_cluster(1e30, 1.0, 8, 312.0)  # above the peak
    with pytest.raises(TypeError):
        compute.hfu("1e18", 1.0, 8, 312.0)


def test_recompute_overheads_are_korthikanti_eq8():
    # Korthikanti et al. 2022 Eq. 7/8: the selective-recompute hardware FLOPs count the attention-core
    # term s/(6h) twice: for GPT-3 175B (s = 2048, h = 12288, V = 50257, l = 96) that is
    # (s/6h) / (1 + s/6h + V/12lh) = 2.7 % more than the model FLOPs (ch07 once printed +0.9 %,
    # the attention forward alone); full recomputation (Narayanan eq. 3) adds ~1/3.
    s, h, v, l = 2048, 12288, 50257, 96
    eq8 = (s / (6 * h)) / (1 + s / (6 * h) + v / (12 * l * h))
    assert facts.value("gpt3_selective_recompute_pct") == pytest.approx(eq8, rel=0.01)
    assert facts.text("gpt3_selective_recompute_pct") == "2.7%"
    assert facts.value("gpt3_full_recompute_pct") == pytest.approx(1 / 3, abs=0.005)
    assert not facts.matches("gpt3_selective_recompute_pct", "0.9")
    assert facts.find_values("gpt3_selective_recompute_pct", "selective: +0.9% FLOPs -> a 30-day run") == ["0.9"]
    assert facts.find_values("gpt3_selective_recompute_pct", "序列并行与选择性重计算各自省下约 40%") == []
    assert facts.find_values("gpt3_full_recompute_pct",
                             "GPT-3 175B, batch 1536 x 2048, recompute=full     : 1.2e+21 FLOPs per iteration, "
                             " +33.2% over the model FLOPs") == ["33.2"]


def test_the_drifts_issue_17_found_are_caught():
    """The numbers the review and the drift scan found disagreeing are read, and rejected, in their old wording."""
    old = {
        "dgx_h100_2node_busbw_gbs": "健康值是 384 GB/s（第 3、22、23 章用的是同一个数）",        # ch01 vs ch03
        "dgx_h100_2node_pass_line_gbs": "80% 的通过线是 320 GB/s。",                            # ch23 figure: 80 % of 400
        "ib_socket_fallback_factor": "IB 没起来、NCCL 退回 TCP socket 时，集合通信的带宽低约 123 倍",  # ch15
        "published_mfu_low_pct": "公开大规模训练的 MFU 范围是 40%–55%",                          # ch24
        "ch08_seed_cluster_gpu_busy_pct": "梯度同步约 8.7 s、计算约 0.6 s，GPU 忙碌只占步时的 6.8%。",  # ch08 prose vs its cell
        "dgx_h100_2node_default_busbw_gbs": "| 默认 | lab02 的基线 | 约 370 / 480 GB/s（lab02 表） | 约 370 GB/s（NVLS-Tree |",
        "tco_power_rank": "按第 5 章的示意价格，电费约占 4 年 TCO 的 6%，在七项成本里排第 2",       # ch10 vs ch05
        "gpt3_checkpoint_tb": "（14 B/参数，约 2.8 TB：",                                       # ch03: checkpoint vs state
        "tco_default_utilisation_pct": "预算表里假设的 70%",                                    # ch05 explorer vs text
    }
    for key, text in old.items():
        found = facts.find_values(key, text)
        assert found and not any(facts.matches(key, v) for v in found), (key, found, facts.text(key))


def test_seed003_sync_numbers_say_what_each_is():
    # ch08 prints 8.70 s (one all-reduce, the step model) beside ch14's 8.91 s (DDP's 25 MiB buckets): two facts
    one, bucketed = facts.value("seed003_single_allreduce_s"), facts.value("seed003_sync_s")
    assert one < bucketed < 1.1 * one
    assert facts.find_values("seed003_single_allreduce_s", "同步时间一个 8.70 s、一个 8.91 s") == ["8.70"]
    assert facts.find_values("seed003_sync_s", "计算约 1.5 s，同步 8.91 s，GPU 只有约 14.3%") == ["8.91"]


def test_ch05_explorer_starts_where_the_text_does():
    from labutil import cost
    from labutil.explore import cost as explore_cost

    ex = explore_cost.tco_explorer()
    assert ex.values()["utilisation"] == pytest.approx(cost.DEFAULT_UTILISATION)
    assert 100 * cost.DEFAULT_UTILISATION == pytest.approx(100 * facts.value("tco_default_utilisation_pct"))


def test_scan_reads_numbers_with_units_and_groups_them():
    texts = {"ch98_a": {"prose": "两台 DGX H100 的期望 370 GB/s，通过线 296 GB/s；MFU 范围 34%–55%。", "outputs": ""},
             "ch99_b": {"prose": "期望值是 370 GB/s，检查点约 2.45 TB、约 90 倍。", "outputs": "sync 8.91 s"}}
    ms = number_scan.mentions(texts)
    got = {(m.notebook, m.printed, m.unit) for m in ms}
    assert {("ch98_a", "370", "GB/s"), ("ch98_a", "296", "GB/s"), ("ch98_a", "34–55", "%"), ("ch99_b", "2.45", "TB"),
            ("ch99_b", "90", "x"), ("ch99_b", "8.91", "s")} <= got
    groups = dict(number_scan.shared(ms))
    assert {m.notebook for m in groups[("GB/s", "370")]} == {"ch98_a", "ch99_b"}
    assert ("GB/s", "296") not in groups       # quoted by one notebook only
    spans = number_scan.covered_spans(texts)
    assert any(key == "dgx_h100_2node_busbw_gbs" for s in spans.values() for *_, key in s)
