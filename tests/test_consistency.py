"""Course-wide consistency: one value per course fact in every chapter (issue 8, item 7).

Every fact of ``labutil.facts`` is computed once; this test scans every chapter's prose (markdown
cells of the jupytext source) and checked outputs (``# NBVAL_CHECK_OUTPUT`` cells of the notebook)
for the phrases by which the fact is printed, and fails when a chapter prints another value — so
two chapters can no longer give two answers to the same question.
"""

import json
import re
from pathlib import Path

import pytest

from labutil import compute, facts

CHAPTERS = Path(__file__).resolve().parent.parent / "chapters"


def _markdown(py: Path) -> str:
    """The markdown cells of a jupytext py:percent chapter, comment markers stripped."""
    out, md = [], False
    for line in py.read_text(encoding="utf-8").splitlines():
        if line.startswith("# %%"):
            md = "[markdown]" in line
            continue
        if md:
            out.append(re.sub(r"^# ?", "", line))
    return "\n".join(out)


def _checked_outputs(nb: Path) -> str:
    if not nb.exists():
        return ""
    cells = json.loads(nb.read_text(encoding="utf-8")).get("cells", [])
    out = []
    for c in cells:
        src = "".join(c.get("source", ""))
        if c.get("cell_type") != "code" or not src.lstrip().startswith("# NBVAL_CHECK_OUTPUT"):
            continue
        for o in c.get("outputs", []):
            if "text" in o:
                out.append("".join(o["text"]))
            elif "data" in o and "text/plain" in o["data"]:
                out.append("".join(o["data"]["text/plain"]))
    return "\n".join(out)


@pytest.fixture(scope="module")
def corpus() -> dict:
    """chapter -> {'prose': text, 'outputs': text}."""
    out = {}
    for py in sorted(CHAPTERS.glob("ch*.py")):
        out[py.stem] = {"prose": _markdown(py), "outputs": _checked_outputs(py.with_suffix(".ipynb"))}
    assert len(out) >= 30
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


# facts the course states in at least one chapter (so the scan above is not vacuous)
STATED = ("seed003_utilisation", "seed003_sync_s", "h100_ring_busbw_gbs", "h100_nvls_busbw_gbs",
          "dgx_h100_2node_busbw_gbs", "dgx_h100_node_net_gbs", "gpt3_175b_days_1024_a100", "failures_per_day_10000_gpus",
          "gpt3_selective_recompute_pct", "gpt3_full_recompute_pct")


@pytest.mark.parametrize("key", STATED)
def test_fact_is_stated_somewhere(corpus, key):
    n = sum(len(facts.find_values(key, t)) for parts in corpus.values() for t in parts.values())
    assert n >= 1, f"no chapter prints {key} in a phrase the registry recognises: {facts.fact(key).patterns}"


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
