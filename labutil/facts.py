"""Course facts: the numbers several chapters quote, each computed once.

A learner who reads ch01, ch05, ch08 and ch14 must get one answer to "what GPU utilisation does
seed 003's 25 GbE cluster reach?". Every such number is a ``Fact`` here: computed by the course's
models (``labutil.cluster``, ``labutil.comm``, ``labutil.published_runs``, ``labutil.reliability``),
with the phrases (regular expressions) by which chapters print it. ``tests/test_consistency.py``
scans every chapter's and lab's prose and checked outputs (``# NBVAL_CHECK_OUTPUT`` cells) with these
patterns and fails when a notebook prints a value that is not the fact (rounded as printed), i.e.
when two chapters disagree, and when a fact is printed nowhere. ``tools/number_scan.py`` finds the
numbers several notebooks quote (the candidates) and shows what each fact reads (``fact KEY``).

>>> round(value("h100_nvls_busbw_gbs"))
480
>>> text("h100_nvls_busbw_gbs")
'480 GB/s'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from . import validate

__all__ = ["Fact", "FACTS", "fact", "value", "text", "keys", "find_values", "matches"]

# a printed number: 1,024 / 14.2 / 480
_NUM = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
_SEP = r"[^\n。；;]"  # stay inside one sentence / output line
_25G = r"25 ?(?:GbE|Gbps|Gb/s|Gbit/s|G 以太网|G以太网)"
# words that state a value (so "不到 30%", a threshold, is not read as the fact)
_SAY = r"(?:约|只有|仅|只|为|是|要|达|=|≈|~|：|:|\s)*"


@dataclass(frozen=True)
class Fact:
    """One course-wide number: ``compute()`` gives it, ``fmt`` prints it, ``patterns`` find it in text.

    Each pattern has one capturing group: the printed number. ``scale`` converts the value to the
    printed unit (100 for a percentage). A printed number matches when it equals the value rounded
    to the printed number of decimals (within ``rel_tol`` for numbers printed without decimals).
    """

    key: str
    description: str
    unit: str
    compute: Callable[[], float]
    fmt: str
    patterns: tuple[str, ...]
    source: str
    scale: float = 1.0
    rel_tol: float = 0.02


# -- the computations (each one call into the course's models) --------------------------------
SEED003_MODEL = "llama2-7b"
SEED003_TOKENS_PER_GPU = 16384
SEED003_MFU = 0.45


def _seed003():
    """Seed 003 误区一: Llama-2-7B data parallel on 4 servers of 8x H800, one 25 GbE port per server,
    16,384 tokens per GPU per step at MFU 0.45 in the compute phase, PyTorch DDP buckets, no overlap."""
    from . import comm, compute, dp, hardware, models, scenarios
    from .cluster import Cluster

    params = float(models.transformer(SEED003_MODEL).params())
    c = Cluster.scenario(scenarios.SEED003)  # labutil/data/scenarios.toml: the one spelling of seed 003
    compute_s = float(compute.dense_compute_time_s(params, SEED003_TOKENS_PER_GPU, hardware.gpu(c.gpu).bf16_tflops,
                                                SEED003_MFU))
    sync_s = float(dp.dp_comm_time_s(params, c.n_gpus, cluster=c))
    return compute_s, sync_s, comm.step_time(compute_s, sync_s, 0.0)


def seed003_utilisation() -> float:
    return float(_seed003()[2].utilisation)


def seed003_sync_s() -> float:
    return _seed003()[1]


def _cluster(name, n=1):
    from .cluster import Cluster

    return Cluster.system(name, n)


def _dgx2(**kw):
    from .cluster import Cluster

    return Cluster.system("DGX-H100", 2, **kw)


def fallback_factor() -> float:
    """IB -> TCP-socket fallback on 2x DGX H100: the acceptance busbw over the 8 NDR rails (370 GB/s)
    against NCCL's socket transport over ONE 100 GbE port per node (the in-band Ethernet NCCL falls back
    to when IB is not found), NCCL's default 2 TCP streams (``labutil.cluster.socket_nic_gbs``)."""
    sock = _dgx2(transport="socket", nic_gbps=100.0, nics_per_node=1)
    return float(_dgx2().acceptance_busbw_gbs() / sock.expected_busbw_gbs(algo="ring"))


def ring_only_efficiency(n_gpus: int) -> float:
    """ch14 §6: Llama-2-7B on H800 servers with 8 x 400G, 16,384 tokens/GPU/step, MFU 0.45, overlap 2/3,
    DDP 25 MiB buckets with NCCL_ALGO=Ring (NCCL picks the ring protocol): scaling efficiency at ``n_gpus``."""
    from . import dp

    r = dp.dp_bandwidth("llama2-7b", "H800-SXM", 16384, 0.45, n_gpus, 400, 8, 2 / 3, "NCCL_ALGO=Ring")
    return float(r.efficiency_grid[list(r.n_gpus_grid).index(n_gpus)])


def gpt3_days() -> float:
    from . import published_runs as pr

    return float(pr.gpt3_days(pr.compare([pr.GPT3_1024_A100])[0]))


def _recompute_overhead(mode: str) -> float:
    """Extra FLOPs of ``mode`` recomputation over the model FLOPs, GPT-3 175B, s = 2048."""
    from . import compute, models

    spec = models.transformer("gpt3-175b")
    base = compute.hardware_flops_per_iter(spec, 1, 2048, "none")
    return float(compute.hardware_flops_per_iter(spec, 1, 2048, mode) / base - 1.0)


def megatron_1t_mfu() -> float:
    """MFU of Megatron-LM's 1T run (163 TFLOP/s per A100 with full recompute, Narayanan et al. 2021)."""
    from . import hardware
    from . import published_runs as pr

    t1 = pr.MEGATRON_TABLE1[-1]
    return pr.utilisation_pair(t1.spec, 2048, "full", hardware.gpu("A100-80G-SXM").bf16_tflops,
                               hw_tflops_per_gpu=t1.published)[0]


def failures_per_day_10k() -> float:
    from . import reliability

    return float(reliability.failures_per_day(10_000, 100_000))


_H100 = r"8 ?[×x] ?H100"
FACTS: dict[str, Fact] = {f.key: f for f in (
    Fact("seed003_utilisation",
         "Seed 003 (8x H800 servers, one 25 GbE port each, Llama-2-7B DP on 32 GPUs): GPU utilisation",
         "%", seed003_utilisation, "{:.1%}",
         (rf"H800{_SEP}{{0,80}}?{_25G}{_SEP}{{0,80}}?利用率{_SAY}{_NUM} ?%",
          rf"{_25G}{_SEP}{{0,80}}?H800{_SEP}{{0,80}}?利用率{_SAY}{_NUM} ?%",
          rf"seed 003 GPU utilisation{_SAY}{_NUM} ?%",
          # "25 GbE ... GPU 只有约 N% 的时间在算" (ch08 误区四 printed another workload's 7 % this way) and
          # "种子课程的工作负载 ... 利用率 / 的时间在算 N%": a chapter with another workload names it and says
          # "GPU 忙碌只占..." instead, so these phrases always mean the course fact
          rf"{_25G}{_SEP}{{0,120}}?GPU ?只有{_SAY}{_NUM} ?% ?的时间在算",
          rf"种子课程(?:的)?工作负载{_SEP}{{0,120}}?(?:GPU ?只有{_SAY}{_NUM} ?% ?的时间在算|利用率{_SAY}{_NUM} ?%)"),
         "labutil.cluster.Cluster.seed003 + dp.dp_comm_time_s (DDP 25 MiB buckets) + comm.step_time", scale=100.0,
         rel_tol=0.0),
    Fact("seed003_sync_s", "Seed 003: gradient all_reduce time per step (s)", "s", seed003_sync_s, "{:.2f} s",
         (rf"H800{_SEP}{{0,80}}?{_25G}{_SEP}{{0,80}}?梯度同步(?:时间)?{_SAY}{_NUM} ?s\b",
          rf"{_25G}{_SEP}{{0,80}}?H800{_SEP}{{0,80}}?梯度同步(?:时间)?{_SAY}{_NUM} ?s\b",
          rf"seed 003 gradient sync{_SAY}{_NUM} ?s\b"),
         "labutil.cluster.Cluster.seed003().dp_sync_time_s with DDP buckets", rel_tol=0.0),
    Fact("h100_ring_busbw_gbs", "8x H100 in one node, all_reduce busbw with NCCL_ALGO=RING", "GB/s",
         lambda: float(_cluster("DGX-H100").expected_busbw_gbs("all_reduce", 8, algo="ring")), "{:.0f} GB/s",
         (rf"{_H100}{_SEP}{{0,40}}?(?:ring|Ring|环)[^\d\n]{{0,12}}{_NUM} ?GB/s",
          rf"{_H100} ring busbw{_SEP}{{0,10}}?{_NUM}"),
         "S. Jeaugey, github.com/NVIDIA/nccl-tests/issues/212 (labutil/data/systems.toml)"),
    Fact("h100_nvls_busbw_gbs", "8x H100 in one node, all_reduce busbw with NVLink SHARP (NCCL default)", "GB/s",
         lambda: float(_cluster("DGX-H100").expected_busbw_gbs("all_reduce", 8)), "{:.0f} GB/s",
         (rf"{_H100}{_SEP}{{0,40}}?NVLS[^\d\n]{{0,12}}{_NUM} ?GB/s",
          rf"{_H100} NVLS busbw{_SEP}{{0,10}}?{_NUM}"),
         "S. Jeaugey, github.com/NVIDIA/nccl-tests/issues/212 (labutil/data/systems.toml)"),
    Fact("dgx_h100_2node_busbw_gbs",
         "2x DGX H100 (16 GPUs, 8x 400G NDR each), healthy large-message all_reduce busbw of the acceptance run "
         "(NCCL_ALGO=Ring across nodes)", "GB/s",
         lambda: float(_dgx2().acceptance_busbw_gbs("all_reduce")), "{:.0f} GB/s",
         (rf"2 ?[×x] ?DGX H100{_SEP}{{0,60}}?(?:期望|应达到|expected busbw)[^\d\n]{{0,16}}{_NUM} ?GB/s",
          rf"健康的 ?DGX H100{_SEP}{{0,60}}?(?:busbw|总线带宽){_SEP}{{0,20}}?{_NUM} ?GB/s",
          rf"healthy DGX H100 busbw{_SAY}{_NUM}"),
         "labutil.cluster.Cluster.acceptance_busbw_gbs: min(NVLink ring 370, 8 NICs x 48 GB/s)"),
    Fact("dgx_h100_2node_pass_line_gbs",
         "2x DGX H100 acceptance: pass line, 80 % of the expected busbw", "GB/s",
         lambda: 0.8 * float(_dgx2().acceptance_busbw_gbs("all_reduce")), "{:.0f} GB/s",
         (rf"通过线{_SEP}{{0,30}}?(?:是|为|：|:|=)\s*{_NUM} ?GB/s", rf"pass(?: line)?\s*>=\s*{_NUM} ?GB/s",
          rf"pass: 80% of expected \d+ \({_NUM} GB/s\)"),
         "labutil.health.acceptance_lines (80 % of Cluster.acceptance_busbw_gbs)"),
    Fact("dgx_h100_2node_default_busbw_gbs",
         "2x DGX H100, all_reduce busbw with NCCL's defaults (NVLS-Tree on 2 nodes)", "GB/s",
         lambda: float(_dgx2().expected_busbw_gbs("all_reduce", algo="auto")), "{:.0f} GB/s",
         (rf"NVLS-?Tree{_SEP}{{0,40}}?(?:期望|模型|model){_SEP}{{0,12}}?{_NUM} ?GB/s",
          rf"2 nodes, NCCL default \(NVLS-Tree\){_SAY}{_NUM}"),
         "labutil.cluster: NVLS-Tree, min(NVLS 480, 2(n-1)/n x 384); public ~469 (nccl-tests#309 via nccl#2409)"),
    Fact("ib_socket_fallback_factor",
         "2x DGX H100: IB (8 x 400G NDR, 370 GB/s) over NCCL's TCP sockets on one 100 GbE port per node", "x",
         fallback_factor, "{:.0f}x",
         (rf"(?:退回|回落|降级|fallback)[^\n。]{{0,80}}?(?:约|慢|低)\s*{_NUM} ?倍", rf"fallback factor{_SAY}{_NUM}"),
         "labutil.cluster: acceptance_busbw_gbs / socket expected busbw (socket_nic_gbs, 2 streams x 2.06 GB/s)"),
    Fact("ch14_ring_only_efficiency_1024",
         "ch14: Llama-2-7B DP on 1,024 H800 (8 x 400G), overlap 2/3, 25 MiB buckets, NCCL_ALGO=Ring: scaling efficiency",
         "%", lambda: ring_only_efficiency(1024), "{:.0%}",
         (rf"NCCL_ALGO=Ring{_SEP}{{0,60}}?1,?024 ?(?:张|块|GPUs?){_SEP}{{0,30}}?(?:效率|efficiency){_SAY}{_NUM} ?%",
          rf"ring only at 1,?024 GPUs[^\n]{{0,30}}?:\s*{_NUM} ?%"),
         "labutil.dp.dp_bandwidth (NCCL 2.30.7 ring protocols per bucket)", scale=100.0, rel_tol=0.02),
    Fact("dgx_h100_node_net_gbs", "One DGX H100 node: 8 NDR NICs x ~48 GB/s achievable", "GB/s",
         lambda: float(_cluster("DGX-H100").node_net_gbs), "{:.0f} GB/s",
         (rf"8 ?[×x] ?48 ?(?:GB/s)? ?(?:=|≈) ?{_NUM}",),
         "24 GB/s per 200G NIC, S. Jeaugey, github.com/NVIDIA/nccl-tests/issues/119"),
    Fact("gpt3_175b_days_1024_a100", "GPT-3 175B, 300B tokens on 1,024 A100: days (calibrated step-time model)",
         "days", gpt3_days, "{:.1f} days",
         (rf"GPT-3{_SEP}{{0,40}}?1,?024 ?(?:张|块)? ?A100 ?(?:：|:|上)(?:模型|model)?{_SEP}{{0,40}}?{_NUM} ?(?:天|days)",),
         "labutil.published_runs.gpt3_days (Narayanan et al. 2021 §5.1 report ~34)"),
    Fact("gpt3_selective_recompute_pct",
         "GPT-3 175B, s = 2048: extra FLOPs of selective recomputation over the model FLOPs", "%",
         lambda: _recompute_overhead("selective"), "{:.1%}",
         (rf"选择性重计算(?:只)?多{_SAY}{_NUM} ?%", rf"选择性重计算约 ?{_NUM} ?%",
          rf"selective(?: recompute)?\s*:{_SAY}\+{_NUM} ?% FLOPs",
          rf"recompute=selective\s*:[^\n]{{0,60}}?\+ *{_NUM} ?% over the model FLOPs"),
         "labutil.compute.hardware_flops_per_iter (Korthikanti et al. 2022, Eq. 7 vs Eq. 8)", scale=100.0),
    Fact("gpt3_full_recompute_pct",
         "GPT-3 175B, s = 2048: extra FLOPs of full recomputation over the model FLOPs", "%",
         lambda: _recompute_overhead("full"), "{:.1%}",
         (rf"(?:全量|完整)重计算(?:只)?多{_SAY}{_NUM} ?%", rf"全量重计算{_SEP}{{0,30}}?代价是约 ?{_NUM} ?%",
          rf"full(?: recompute)?\s*:{_SAY}\+{_NUM} ?% FLOPs",
          rf"recompute=full\s*:[^\n]{{0,60}}?\+ *{_NUM} ?% over the model FLOPs"),
         "labutil.compute.hardware_flops_per_iter (Narayanan et al. 2021 eq. 3 vs Korthikanti Eq. 7)", scale=100.0),
    Fact("megatron_1t_mfu_pct",
         "Megatron-LM 1T on 3,072 A100: the MFU behind its 163 TFLOP/s ('52 % of peak' is the HFU)", "%",
         megatron_1t_mfu, "{:.1%}",
         (rf"163 ?TFLOP/s{_SEP}{{0,60}}?MFU{_SEP}{{0,8}}?{_NUM} ?%",
          rf"Megatron-LM 52 ?%」?是 ?HFU{_SEP}{{0,20}}?MFU{_SEP}{{0,6}}?{_NUM} ?%"),
         "labutil.published_runs.utilisation_pair (Narayanan et al. 2021 eq. 3 vs the model FLOPs)", scale=100.0),
    Fact("failures_per_day_10000_gpus", "GPU failures per day at 10,000 GPUs, MTBF 100,000 h each", "1/day",
         failures_per_day_10k, "{:.1f}",
         (rf"10,?000 ?(?:张|块)? ?(?:GPU|卡){_SEP}{{0,60}}?{_NUM} ?次/天",
          rf"10,?000 GPUs{_SEP}{{0,40}}?{_NUM} (?:GPU )?failures per day"),
         "labutil.reliability.failures_per_day (24 n / MTBF)"),
)}


# -- facts of the training-step model (ch04, ch07, ch08, ch24, ch30) -----------------------------------
def _published_mfu(i: int) -> float:
    from . import compute

    return float(compute.PUBLISHED_MFU_RANGE[i])


def _held_out_inside() -> float:
    from . import published_runs as pr

    return float(sum(c.within_tolerance for c in pr.compare(pr.HELD_OUT_RUNS)))


def _deepseek_v3_mfu() -> float:
    from . import published_runs as pr

    return float(pr.deepseek_v3_budget()["mfu_bf16"])


def _failures_10k(gpu_mtbf_h: float | None = None) -> float:
    from . import reliability

    parts = {p.name: (p.count, p.mtbf_hours) for p in reliability.llama3_components(10_000)}
    if gpu_mtbf_h is not None:
        parts["gpu"] = (10_000, gpu_mtbf_h)
    return float(reliability.cluster_failures_per_day(parts))


def _llama3_gpu_mtbf_h() -> float:
    from . import reliability

    return float(reliability.llama3_component_mtbf_hours()["gpu"])


FACTS.update({f.key: f for f in (
    Fact("failures_per_day_10000_llama3", "10,000 GPUs, every part at its Llama 3 Table 5 rate: interruptions/day",
         "1/day", _failures_10k, "{:.2f}",
         (rf"每天约 ?{_NUM} ?次中断\**，一周 ?\d+ ?次",),
         "labutil.reliability.llama3_components + cluster_failures_per_day (ch30 §14)"),
    Fact("failures_per_day_10000_seed_gpu",
         "10,000 GPUs, Llama 3 rates for host/network/software, GPU at the seed's MTBF 100,000 h: interruptions/day",
         "1/day", lambda: _failures_10k(100_000.0), "{:.2f}",
         (rf"第 27 章误区一{_SEP}{{0,20}}?{_NUM} ?次/天",),
         "labutil.reliability (ch27 误区一)"),
    Fact("llama3_gpu_mtbf_10k_h", "Per-GPU MTBF calibrated on Llama 3 Table 5 (in units of 10,000 h)", "1e4 h",
         _llama3_gpu_mtbf_h, "{:.0f} h",
         (rf"按 Llama 3 表 5 校准（约 ?{_NUM} ?万小时",),
         "labutil.reliability.llama3_component_mtbf_hours", scale=1e-4),
    Fact("published_mfu_low_pct", "Lowest cluster MFU of the published large runs the course compares (ch04, ch24)",
         "%", lambda: _published_mfu(0), "{:.0%}",
         (rf"MFU ?范围(?:是)?\s*\**{_NUM} ?%\s*[–-]\s*\d+ ?%",),
         "labutil.compute.PUBLISHED_MFU_RANGE (GPT-3 on 1,024 A100, Narayanan et al. 2021 §5.1)", scale=100.0),
    Fact("published_mfu_high_pct", "Highest cluster MFU of the published large runs (MegaScale, NSDI 2024)",
         "%", lambda: _published_mfu(1), "{:.0%}",
         (rf"MFU ?范围(?:是)?\s*\**\d+ ?%\s*[–-]\s*{_NUM} ?%",),
         "labutil.compute.PUBLISHED_MFU_RANGE (MegaScale 55.2 %)", scale=100.0),
    Fact("held_out_inside", "Held-out published runs (never fitted) inside +-10 % of the step-time model", "runs",
         _held_out_inside, "{:.0f}",
         (rf"5 ?条里只有 ?{_NUM} ?条", rf"held-out runs inside \+-10 %: {_NUM} of"),
         "labutil.published_runs.compare(HELD_OUT_RUNS)", rel_tol=0.0),
    Fact("deepseek_v3_mfu_pct",
         "DeepSeek-V3: BF16 MFU its 2.664M H800 GPU-hours imply with 6 x 37.6B active x 14.8T tokens", "%",
         _deepseek_v3_mfu, "{:.1%}",
         (rf"用激活参数算，MFU 约 ?{_NUM} ?%", rf"6 x active x D{_SEP}{{0,60}}?MFU {_NUM} ?%"),
         "labutil.published_runs.deepseek_v3_budget (DeepSeek-V3 report, Table 1)", scale=100.0),
)})


# ====================================================================================================
# issue 17, "numbers that cannot drift" (helper drift): every number the prose of two or more
# notebooks states and a model computes. Found with ``tools/number_scan.py`` (the same value and
# unit quoted by several notebooks; similar sentences with different values); each is one model
# call below, with the phrases the chapters and labs print it in. ``_more`` adds phrases to a fact
# registered above (same computation), so every chapter's wording of it is checked.
# ====================================================================================================
def _num_near(before: str, unit: str, gap: int = 40) -> str:
    """``before``, then at most ``gap`` characters of the same sentence, then the number and ``unit``."""
    return rf"{before}{_SEP}{{0,{gap}}}?{_NUM} ?{unit}"


def _more(key: str, *patterns: str, drop: tuple[int, ...] = (), **changes) -> None:
    """Extra phrases for a fact registered above; ``drop``: indices of its phrases that read another
    scenario's number (replaced by tighter ones here); ``changes``: other fields (e.g. ``rel_tol``)."""
    from dataclasses import replace

    f = FACTS[key]
    kept = tuple(p for i, p in enumerate(f.patterns) if i not in drop)
    FACTS[key] = replace(f, patterns=kept + patterns, **changes)


_GBS = r"GB/s"
_2DGX = r"(?:2 ?[×x] ?DGX[ -]H100|两台 ?DGX H100)"


# -- the 2x DGX H100 acceptance run and its rails (ch01, ch03, ch13, ch19, ch20, ch22, ch23, ch28, ch30, labs)
def _acceptance_lines() -> dict:
    from . import health

    return health.acceptance_lines(_dgx2())


def _one_rail_200g_gbs() -> float:
    """2x DGX H100 with one of the 8 rails at 200G: every ring runs at the slowest rail's rate."""
    return float(_dgx2().acceptance_busbw_gbs("all_reduce", slow_rails=1, slow_rail_gbps=200.0))


def _gen4_nic() -> dict:
    from . import node

    return node.nic_slot(400.0, 4, 16)


def _one_nic_gen4_gbs() -> float:
    """2x DGX H100, one 400G NIC trained at PCIe Gen4 x16 (ch19 误区一): the node runs at that NIC's rate."""
    return float(_dgx2(nic_gbps=_gen4_nic()["delivered_gbs"] * 8).expected_busbw_gbs("all_reduce"))


_more("dgx_h100_2node_busbw_gbs",
      rf"{_2DGX}(?:[^\d\n。]{{0,12}}?(?:：|:|期望|是|的环上限|用 ?`?NCCL_ALGO=Ring`?(?: 的期望 busbw 是)?)\s*){_NUM} ?{_GBS}",
      rf"{_2DGX}{_SEP}{{0,12}}?(?:成对测试|验收)期望 ?{_NUM} ?{_GBS}",
      rf"健康值是 ?{_NUM} ?{_GBS}", rf"从(?:健康时的|期望的) ?{_NUM} ?{_GBS}",
      rf"(?:对|与)健康时的 ?{_NUM} ?{_GBS}", rf"期望值(?:仍)?是 ?{_NUM} ?{_GBS}",
      rf"期望(?:带宽|busbw)? ?(?:从 )?{_NUM} ?{_GBS} ?(?:掉到|，实测)", rf"期望 busbw {_NUM} ?{_GBS}",
      rf"期望值（第 22 章用 `labutil.cluster` 算出的 {_NUM} ?{_GBS}", rf"对照 {_NUM} ?{_GBS} 的期望",
      rf"期望值 ?{_NUM} ?{_GBS} 的 80 ?%",
      rf"min\(NVLink 环 ?\d+, ?8 ?× ?48 ?= ?384\) ?= ?{_NUM} ?{_GBS}",
      rf"\$\\min\(370,\\ 8 \\times 48 = 384\) = {_NUM}\$ ?{_GBS}",
      rf"expected busbw with NCCL_ALGO=Ring: {_NUM} {_GBS}", rf"8 x 400G healthy {_NUM} {_GBS}",
      rf"healthy 8 rails: {_NUM} {_GBS}", rf"vs {_NUM} {_GBS} healthy", rf"over IB {_NUM} {_GBS}",
      rf"NCCL_ALGO=Ring: 8 x 400G IB {_NUM} {_GBS}", rf"2x DGX-H100: [\d.]+ of {_NUM} {_GBS}",
      rf"peak [\d.]+ GB/s = \d+% of {_NUM}\b",
      rf"8 x 400G compute NICs per node +: expected busbw +{_NUM} {_GBS}", rf"all rails 400G: expected busbw {_NUM} {_GBS}",
      rf"all-reduce busbw {_NUM} {_GBS}; one rail", rf"DGX-H100 +one node:[^\n]*?2 nodes: NCCL_ALGO=Ring +{_NUM}\b",
      rf"DP ranks per node 8: busbw {_NUM} {_GBS}", rf"8 x 400G, busbw {_NUM} {_GBS}\)",
      rf"约 {_NUM} ?{_GBS}（每 rail 一个环）",
      rf"\$B\$ 不是 {_NUM} ?{_GBS}，而是一块网卡", rf"NCCL_ALGO=Ring`：α = [\d.]+ µs，busbw 上限 {_NUM} ?{_GBS}",
      rf"\([\d.]+% of the {_NUM} {_GBS} plateau\)", rf"跨节点 busbw 从 {_NUM} ?{_GBS} 掉到",
      rf"2 节点 × 8× H100，每节点 8× 400G NDR \| 约 {_NUM} ?{_GBS}", rf"NVLS-Tree；`NCCL_ALGO=Ring` 时约 {_NUM} ?{_GBS}")

_more("h100_ring_busbw_gbs",
      rf"NVLink(?: ?4 上的| 4 的)? ?(?:ring|环)(?:实测| ?只跑得到|上限|的可达带宽（H100|上)?\s*(?:约|at)?\s*{_NUM} ?(?:{_GBS}|,|）)",
      rf"NVLink 环按 H100 的 {_NUM} ?{_GBS}", rf"NCCL 在 NVLink 上实际能跑到的 {_NUM} ?{_GBS}",
      rf"(?:强制 ?(?:Ring|ring)|NCCL_ALGO=Ring` 时)(?: 时)?(?: busbw)? ?约 ?{_NUM} ?{_GBS}",
      rf"H100/H200 约 {_NUM} ?{_GBS}（线速 450）", rf"只剩环的机器（{_NUM}）", rf"ring 约 {_NUM} ?{_GBS}",
      rf"NVLink 环 ?{_NUM} ?{_GBS}", rf"8×H100 ring {_NUM}、NVLS",
      rf"DGX-H100 的 NVLink 环 {_NUM} ?{_GBS}", rf"H100 SXM（同一 HGX 节点内） \| 约 {_NUM} ?{_GBS}",
      rf"NVLS: no \| 全部 NV# \| 约 {_NUM} ?{_GBS}", rf"约 {_NUM} ?/ ?\d+ ?{_GBS}（lab02 表）",
      rf"约 \d+ 对 {_NUM} ?{_GBS}）", rf"DGX-H100 +one node: ring +{_NUM}, default",
      rf"450(?:\.0)? GB/s per GPU per direction, ring {_NUM}, NVLS",
      rf"NVLink ring at {_NUM} ->", rf"traffic at the NVLink ring busbw {_NUM} {_GBS}",
      rf"模型的环效率 {_NUM}/450", rf"全课程用的 {_NUM} ?/ ?\d+ ?{_GBS}", rf"NVLink 环 ?{_NUM}, ?8 ?×")

_more("h100_nvls_busbw_gbs",
      # "8×H100 的平台约 480 GB/s（NVLS）、强制 Ring 约 370 GB/s" (lab02): the first phrase read the 370
      rf"{_H100}{_SEP}{{0,40}}?NVLS[^\d\n、，（(]{{0,12}}{_NUM} ?GB/s",
      rf"8×H100 的 busbw 能到约 {_NUM} ?{_GBS}", rf"能到 {_NUM} ?{_GBS} 左右（公开结果", rf"8×H100 约 {_NUM} ?{_GBS}、8×H200",
      rf"按集群模型的 {_NUM} ?{_GBS}，370", rf"开着 NVLS 的健康机器（{_NUM}）", rf"NVLS）?，期望约 {_NUM} ?{_GBS}",
      rf"单机测试仍然是约 {_NUM} ?{_GBS}（NVLS", rf"单机 8×H100 用 NVLS：{_NUM} ?{_GBS}",
      rf"NVLink SHARP（NVLS）约 {_NUM} ?{_GBS}", rf"默认 NVLS 约 {_NUM} ?{_GBS}", rf"的平台约 {_NUM} ?{_GBS}（NVLS）",
      rf"NVLS: yes \| 全部 NV18 \| 约 {_NUM} ?{_GBS}", rf"8 卡实测 {_NUM} ?{_GBS}", rf"\| 约 {_NUM} ?{_GBS} \| NVLink SHARP",
      rf"约 \d+ ?/ ?{_NUM} ?{_GBS}（lab02 表）", rf"（约 {_NUM} 对 \d+ ?{_GBS}）", rf"NVLS {_NUM} {_GBS} 实测来源",
      rf"NVSwitch 里完成，busbw 约 {_NUM} ?{_GBS}", rf"DGX-H100 +one node: ring +\d+, default \(NVLS if any\) +{_NUM} {_GBS}",
      rf"ring \d+, NVLS {_NUM} {_GBS} busbw\); 8 x 400", rf"single-node expected {_NUM} {_GBS}",
      rf"8×H100 开 NVLS 约 {_NUM} ?{_GBS}", rf"8×H100 ring \d+、NVLS {_NUM} ?{_GBS}",
      rf"NVLink H100-SXM +450.0 GB/s per direction, busbw +{_NUM} {_GBS}",
      rf"健康的 8 卡节点{_SEP}{{0,80}}?期望 busbw 约\s*{_NUM} ?{_GBS}", rf"全课程用的 \d+ ?/ ?{_NUM} ?{_GBS}", drop=(0,))

_more("dgx_h100_2node_pass_line_gbs",
      rf"低于 ?{_NUM} ?{_GBS} 的机器不交付", rf"80 ?% 的通过线是 ?{_NUM} ?{_GBS}", rf"pass >= {_NUM}\b")

_more("dgx_h100_2node_default_busbw_gbs",
      rf"两节点上 NCCL 默认的 NVLS-Tree 约 {_NUM} ?{_GBS}", rf"DGX-H100 +one node:[^\n]*?NCCL default \(nvls_tree\) +{_NUM} {_GBS}",
      rf"\| 默认 \|[^\n]*\| 约 {_NUM} ?{_GBS}（NVLS-Tree", rf"默认的 NVLS-Tree 约 {_NUM} ?{_GBS}")

_more("dgx_h100_node_net_gbs",
      rf"8 条 rail 一共能送约 ?{_NUM} ?{_GBS}", rf"rail bound {_NUM} {_GBS}", rf"网卡那一项就从 ?{_NUM} ?{_GBS}",
      rf"8 x 400 Gb/s NIC per node \(~{_NUM} {_GBS} per node", rf"NICs 8 x 400G -> {_NUM} {_GBS} per node",
      rf"8 块网卡（8 × 48 = {_NUM} ?{_GBS}）")

_HEALTHY_2DGX = rf"(?:370|{_2DGX})"
FACTS.update({f.key: f for f in (
    Fact("dgx_h100_2node_fail_line_gbs",
         "2x DGX H100 acceptance: fail (critical) line, 60 % of the expected busbw", "GB/s",
         lambda: float(_acceptance_lines()["fail_gbs"]), "{:.0f} GB/s",
         (rf"低于 ?{_NUM} ?{_GBS} 直接判为故障", rf"critical below {_NUM} {_GBS}", rf"fail < {_NUM} {_GBS}"),
         "labutil.health.acceptance_lines (60 % of Cluster.acceptance_busbw_gbs)"),
    Fact("dgx_h100_2node_one_rail_200g_gbs",
         "2x DGX H100, one of the 8 rails at 200G: all_reduce busbw (every ring runs at the slowest rail)", "GB/s",
         _one_rail_200g_gbs, "{:.0f} GB/s",
         (rf"one (?:rail at 200G|200G rail): {_NUM} {_GBS}", rf"one rail at 200G {_NUM} {_GBS}", rf"从(?:健康时的|期望的)? ?370 ?GB/s 掉到 ?{_NUM} ?{_GBS}",
          rf"(?:期望带宽|busbw) ?从 ?{_HEALTHY_2DGX}[^\d\n]{{0,8}}(?:{_GBS} )?掉到 ?{_NUM} ?{_GBS}",
          rf"rail 模型(?:的预测（|给出 ?){_NUM} ?{_GBS}", rf"网卡那一项就从 384 GB/s 掉到 {_NUM} ?{_GBS}",
          rf"200G port is one of 8 rails: {_NUM} {_GBS}", rf"with one rail at 200G: {_NUM} {_GBS}"),
         "labutil.cluster.Cluster.acceptance_busbw_gbs(slow_rails=1, slow_rail_gbps=200): 8 x 200G x 0.96 / 8"),
    Fact("ndr_nic_busbw_gbs", "NCCL's achievable busbw over one 400G NDR NIC (RDMA)", "GB/s",
         lambda: float(_cluster("DGX-H100").nic_gbs), "{:.0f} GB/s",
         (rf"每块 ?400G 网卡(?:上)?约(?:能拿到)? ?{_NUM} ?{_GBS}", rf"一块(?:400G )?网卡的约 ?{_NUM} ?{_GBS}",
          rf"NCCL 每(?:条|块网卡)(?:只能)?跑到约 ?{_NUM} ?{_GBS}", rf"8 ?× ?{_NUM} ?{_GBS} 网卡",
          rf"400G 约 {_NUM} ?{_GBS}", rf"one 400G NIC \({_NUM} {_GBS} achievable\)", rf"实测可达约 ?{_NUM} ?{_GBS}",
          rf"NCCL 实际都按约 ?{_NUM} ?{_GBS} 算", rf"8 ?× ?{_NUM}(?: GB/s)? ?= ?384",
          rf"\(~384 GB/s per node, {_NUM} {_GBS} per GPU\)", rf"1 rank per node \(one NIC each\), busbw {_NUM} {_GBS}",
          rf"DP ranks per node 1: busbw +{_NUM} {_GBS}", rf"网卡（每块约 {_NUM} ?{_GBS}）",
          rf"min\(NVLink 环, ?8 ?× ?{_NUM} ?{_GBS}\)"),
         "labutil.cluster: 400 Gb/s / 8 x NIC_EFFICIENCY 0.96 (S. Jeaugey, github.com/NVIDIA/nccl-tests/issues/119: 24 GB/s per 200G)"),
    Fact("nic_efficiency_pct", "NCCL's achievable share of a NIC's line rate over RDMA (the cluster model)", "%",
         lambda: float(__import__("labutil.cluster", fromlist=["NIC_EFFICIENCY"]).NIC_EFFICIENCY), "{:.0%}",
         (rf"(?:能拿到|能跑到|即)线速的 ?(?:约 ?)?{_NUM} ?%", rf"（线速的 ?{_NUM} ?%）",
          rf"NCCL at {_NUM}% of the line", rf"NIC efficiency 0\.(\d\d)\)"),
         "labutil/data/systems.toml [network] nic_efficiency (nccl-tests#119: 24 GB/s per 200G NIC)", scale=100.0),
    Fact("nic400_gen4_delivered_pct", "A 400G NIC in a PCIe Gen4 x16 slot: share of its line rate it can deliver", "%",
         lambda: float(_gen4_nic()["fraction"]), "{:.0%}",
         (rf"(?:Gen4 x16|Gen4){_SEP}{{0,30}}?(?:400G 网卡|网卡)?(?:只剩|只能交付) ?{_NUM} ?%", rf"只有 400G 网卡的 {_NUM} ?%",
          rf"就可能只剩 ?{_NUM} ?%", rf"网卡就只剩 {_NUM} ?% 的能力", rf"31\.5 of 50(?:\.0)? GB/s (?:= |\(){_NUM}%(?! lost)"),
         "labutil.node.nic_slot(400, 4, 16): 31.5 of 50 GB/s (PCI-SIG PCIe 4.0: 16 GT/s x 128/130)", scale=100.0),
    Fact("nic400_gen4_loss_pct", "A 400G NIC in a PCIe Gen4 x16 slot: share of its bandwidth lost", "%",
         lambda: 1.0 - float(_gen4_nic()["fraction"]), "{:.0%}",
         (rf"(?:网卡|400G 网卡)(?:同时)?损失 ?{_NUM} ?%", rf"就是 ?{_NUM} ?% 的损失", rf"31\.5 of 50 GB/s = \d+% \(lost {_NUM}%\)",
          rf"31\.5 of 50\.0 GB/s \({_NUM}% lost\)",
          rf"that NIC loses {_NUM}%", rf"the 8 NICs lose \d+ of 400 GB/s \({_NUM}%\)"),
         "labutil.node.nic_slot(400, 4, 16): 1 - 31.5 / 50", scale=100.0),
    Fact("dgx_h100_2node_one_nic_gen4_gbs",
         "2x DGX H100, one 400G NIC trained at PCIe Gen4 x16: expected all_reduce busbw", "GB/s",
         _one_nic_gen4_gbs, "{:.0f} GB/s",
         (rf"(?:Gen4|插槽训练错误){_SEP}{{0,80}}?掉到约 ?{_NUM} ?{_GBS}", rf"从期望的 370 ?GB/s（[^）\n]*）掉到约 ?{_NUM} ?{_GBS}", rf"expected busbw 370 -> {_NUM} {_GBS}"),
         "labutil.cluster (8 rails at the slowest rail's 31.5 GB/s x 8 line rate, 0.96) and labutil.node.nic_slot"),
)})



# -- seed 003's cluster and the other one-25GbE-port clusters (ch01, ch08, ch14) ------------------------
def _seed003_single_allreduce_s() -> float:
    """Seed 003: the whole bf16 gradient as ONE all-reduce (no DDP buckets) on the same cluster."""
    from . import models
    from .cluster import Cluster

    c = Cluster.scenario(_seed003_scenario())
    return float(c.dp_sync_time_s(float(models.transformer(SEED003_MODEL).params()), c.n_gpus))


def _seed003_scenario() -> str:
    from . import scenarios

    return scenarios.SEED003


def _ch08_example(cluster: str):
    """ch08 §11: Llama-2-7B, dp = 32 (ZeRO-1, global batch 64 x 4,096 tokens: 8,192 tokens per GPU per step)
    on 4 servers of 8x H800, with one 25 GbE port per server (seed 003) or 8 x 400G per server."""
    from . import models, steptime
    from .cluster import Cluster
    from .parallel import Layout

    cl = Cluster.seed003(n_nodes=4) if cluster == "seed003" else Cluster.system("HGX-H800", n_nodes=4)
    lay = Layout(dp=32, tp=1, pp=1, micro_batch=1, global_batch=64, zero_stage=1)
    return steptime.estimate_layout(models.transformer("llama2-7b"), lay, 32, "H800-SXM", cluster=cl)


CH01_PARAMS, CH01_COMPUTE_S = 7e9, 0.5   # ch01 §5: a 7B model, 0.5 s of compute per GPU per step


def _ch01_dp(n_gpus: int, network: str) -> tuple[float, float]:
    """ch01 §5: (gradient all-reduce s, scaling efficiency) of the 7B data-parallel job on ``n_gpus``
    with one 25 GbE port per 8-GPU server (seed 003's network) or 8 x 400G per server (HGX H800)."""
    from . import comm, dp
    from .cluster import Cluster

    nodes = n_gpus // 8
    cl = Cluster.scenario(_seed003_scenario(), n_nodes=nodes) if network == "25gbe" else \
        Cluster.system("HGX-H800", n_nodes=nodes)
    sync = float(dp.dp_comm_time_s(CH01_PARAMS, n_gpus, cluster=cl))
    return sync, float(comm.scaling_efficiency(CH01_COMPUTE_S, sync))


_25GBE_PORT = r"(?:一个 ?25 ?(?:Gb/s|GbE|G) ?(?:以太网)?口|1 x 25 ?Gb/s per server|1 ?[×x] ?25 ?GbE)"
FACTS.update({f.key: f for f in (
    Fact("seed003_compute_s", "Seed 003: compute per step (Llama-2-7B, 16,384 tokens per GPU, MFU 0.45 on H800)", "s",
         lambda: float(_seed003()[0]), "{:.2f} s",
         (rf"计算（{_NUM} ?s）的 ?\d+ ?倍", rf"16,384 token、按 MFU 0\.45 算，计算约 ?{_NUM} ?s",
          rf"重叠能藏住的通信最多就是计算时间那么长（约 ?{_NUM} ?s）", rf"\(989\.4e12 x 0\.45\) = {_NUM} s",
          rf"25 ?Gbit/s/server: compute {_NUM} s", rf"seed 003 model: compute {_NUM} s of a",
          rf"\(compute {_NUM} s -> utilisation"),
         "labutil.compute.dense_compute_time_s (6 N D / (peak x MFU), H800 989.4 TFLOP/s BF16 dense)", rel_tol=0.0),
    Fact("seed003_single_allreduce_s",
         "Seed 003's cluster: the whole Llama-2-7B bf16 gradient as ONE all-reduce (no DDP buckets; ch08's step model)",
         "s", _seed003_single_allreduce_s, "{:.2f} s",
         (rf"one all-reduce {_NUM} s;", rf"同步时间一个 ?{_NUM} ?s、一个", rf"(?:每卡每步 8,192 token|8,192 token）)"
          rf"{_SEP}{{0,40}}?梯度同步约 ?{_NUM} ?s", rf"1x 25GbE per server +: compute +[\d.]+ s, DP sync +{_NUM} s"),
         "labutil.cluster.Cluster.dp_sync_time_s on Cluster.scenario(seed 003), no bucket_bytes", rel_tol=0.0),
    Fact("ch08_seed_cluster_gpu_busy_pct",
         "ch08 §11: Llama-2-7B dp = 32, 8,192 tokens per GPU per step, seed 003's cluster: GPU busy share of the step", "%",
         lambda: float(_ch08_example("seed003").compute_s / _ch08_example("seed003").step_s), "{:.1%}",
         (rf"GPU 忙碌只占步时的 ?{_NUM} ?%", rf"1x 25GbE per server[^\n]*GPU busy +{_NUM}% of the step"),
         "labutil.steptime.estimate_layout on Cluster.seed003(4)", scale=100.0),
    Fact("ch08_8x400g_dp_sync_s",
         "ch08 §11: the same job with 8 x 400G per server: DP gradient sync per step", "s",
         lambda: float(_ch08_example("8x400g").dp_comm_s), "{:.2f} s",
         (rf"换成 8 块 400G 网卡后同步只要 ?{_NUM} ?s", rf"8x 400G per server +: compute +[\d.]+ s, DP sync +{_NUM} s"),
         "labutil.steptime.estimate_layout on Cluster.system('HGX-H800', 4)"),
    Fact("ch01_25gbe_1024_sync_s",
         "ch01 §5: 7B data parallel on 1,024 GPUs, one 25 GbE port per 8-GPU server: gradient all-reduce (s)", "s",
         lambda: _ch01_dp(1024, "25gbe")[0], "{:.2f} s",
         (rf"每台服务器一个 25 Gb/s 口时，一次梯度同步要约? ?{_NUM} ?s",
          rf"1024 GPUs, 1 x 25 Gb/s per server: all-reduce +{_NUM} s"),
         "labutil.dp.dp_comm_time_s on Cluster.scenario(seed 003, n_nodes=128)"),
    Fact("ch01_25gbe_1024_sync_over_compute", "ch01 §5: that all-reduce over the 0.5 s of compute", "x",
         lambda: _ch01_dp(1024, "25gbe")[0] / CH01_COMPUTE_S, "{:.0f}x",
         (rf"一次梯度同步要约? ?[\d.]+ ?s，是计算的 ?{_NUM} ?倍",),
         "labutil.dp.dp_comm_time_s / ch01's 0.5 s compute"),
    Fact("ch01_25gbe_1024_ideal_gpus", "ch01 §5: 1,024 GPUs on one 25 GbE port per server are worth N ideal GPUs", "GPUs",
         lambda: 1024 * _ch01_dp(1024, "25gbe")[1], "{:.0f}",
         (rf"1,024 张卡只相当于约 ?{_NUM} ?张理想 GPU", rf"1024 GPUs, 1 x 25 Gb/s[^\n]*worth +{_NUM} ideal GPUs"),
         "labutil.comm.scaling_efficiency x 1,024"),
    Fact("ch01_25gbe_2048_ideal_gpus", "ch01 §5: 2,048 GPUs on one 25 GbE port per server are worth N ideal GPUs", "GPUs",
         lambda: 2048 * _ch01_dp(2048, "25gbe")[1], "{:.0f}",
         (rf"翻倍到 2,048 张，\s*也只有约 ?{_NUM} ?张", rf"2048 GPUs, 1 x 25 Gb/s[^\n]*worth +{_NUM} ideal GPUs"),
         "labutil.comm.scaling_efficiency x 2,048"),
    Fact("ch01_8x400g_512_sync_s", "ch01 §5: the same job on 512 GPUs with 8 x 400G per server: gradient all-reduce", "s",
         lambda: _ch01_dp(512, "8x400g")[0], "{:.2f} s",
         (rf"同步只要约 ?{_NUM} ?s，相当于约 ?\d+ ?张理想",
          rf"512 GPUs, 8 x 400 Gb/s per server: all-reduce +{_NUM} s"),
         "labutil.dp.dp_comm_time_s on Cluster.system('HGX-H800', 64)"),
    Fact("ch01_8x400g_512_ideal_gpus", "ch01 §5: 512 GPUs with 8 x 400G per server are worth N ideal GPUs", "GPUs",
         lambda: 512 * _ch01_dp(512, "8x400g")[1], "{:.0f}",
         (rf"相当于约 ?{_NUM} ?张理想 GPU：卡数只有四分之一", rf"512 GPUs, 8 x 400 Gb/s[^\n]*worth +{_NUM} ideal GPUs"),
         "labutil.comm.scaling_efficiency x 512"),
)})

_more("seed003_sync_s", rf"计算约 [\d.]+ ?s，同步 {_NUM} ?s，GPU 只有", rf"第 4 节模型的 {_NUM} ?s 略短",
      rf"H800、每台一个 25 GbE 口时，梯度同步要 {_NUM} ?s，是计算", rf"25 ?Gbit/s/server: compute [\d.]+ s, sync +{_NUM} s",
      rf"overlap 0\.00: exposed communication {_NUM} s", rf"6\.7B of +6\.7B, compute +[\d.]+ s, sync +{_NUM} s, utilisatio")
_more("seed003_utilisation", rf"seed 003 model: compute [\d.]+ s of a [\d.]+ s step -> only {_NUM}%",
      rf"1 x 25GbE +25 Gbit/s/server: compute [\d.]+ s, sync +[\d.]+ s, exposed +[\d.]+ s -> GPU utilisation {_NUM}%"
      rf"(?=\n  2 x 25GbE[^\n]*\n[^\n]*\n[^\n]*\n[^\n]*\noverlap = 0\.67)",
      rf"H800-SXM +\+ 1 x 25GbE: utilisation {_NUM}%", rf"GPU 利用率 ?{_NUM} ?%，即使把反向传播",
      rf"种子 003 的场景（32 × H800，每台 1 × 25 GbE）：利用率 ?{_NUM} ?%",
      # the phrase above with two alternatives captured the number in group 1 or 2: one phrase each
      rf"种子课程(?:的)?工作负载{_SEP}{{0,120}}?GPU ?只有{_SAY}{_NUM} ?% ?的时间在算",
      rf"种子课程(?:的)?工作负载{_SEP}{{0,120}}?利用率{_SAY}{_NUM} ?%", drop=(4,))


# -- failures at scale: the seed's GPU MTBF and Llama 3's interruption statistics (ch01-ch06, ch17, ch23, ch27, ch30)
def _llama3_per_day(n_gpus=None) -> float:
    from . import reliability

    return float(reliability.llama3_failures_per_day(n_gpus))


def _llama3_part_hours(part: str) -> float:
    """Hours between Llama 3 interruptions of one cause over the 54-day snapshot (Table 5 counts)."""
    from . import reliability

    d = reliability.reference_data()["llama3"]
    return float(d["snapshot_days"] * 24.0 / reliability.llama3_counts_by_part()[part])


FACTS.update({f.key: f for f in (
    Fact("llama3_interruptions_per_day", "Llama 3 405B on 16,384 H100: unexpected interruptions per day (419 in 54 days)",
         "1/day", _llama3_per_day, "{:.2f}",
         (rf"每天约 ?{_NUM} ?次、平均约每", rf"每天要重启约 ?{_NUM} ?次", rf"每天 ?{_NUM} ?次中断的前提下",
          rf"-> {_NUM} per day, one every", rf"16,384 GPUs: {_NUM} failures/day", rf"interruptions: {_NUM} per day",
          rf"{_NUM} restarts/day", rf"16,384-GPU job: {_NUM} interruptions/day", rf"54 days = {_NUM} per day"),
         "labutil.reliability.llama3_failures_per_day (Llama 3 §3.3.4, Table 5: 419 / 54)"),
    Fact("llama3_hours_between_interruptions", "Llama 3 405B on 16,384 H100: hours between unexpected interruptions",
         "h", lambda: 24.0 / _llama3_per_day(), "{:.1f} h",
         (rf"(?:平均)?约每 ?{_NUM} ?小时一次(?:意外)?中断", rf"所有原因合计约每 ?{_NUM} ?小时一次",
          rf"419 次意外中断，约每 ?{_NUM} ?小时一次", rf"加上其他原因是每 ?{_NUM} ?小时一次",
          rf"平均约每 ?{_NUM} ?小时一次（第 27 章）", rf"one every {_NUM} h(?:\n|$|\))", rf"all causes: one every {_NUM} h",
          rf"16,384[^\n]*job MTBF {_NUM} h", rf"at Llama 3 rate: {_NUM} h"),
         "24 / labutil.reliability.llama3_failures_per_day", rel_tol=0.035),
    Fact("llama3_network_hours_between", "Llama 3: hours between interruptions caused by network switches and cables",
         "h", lambda: _llama3_part_hours("network"), "{:.0f} h",
         (rf"约 ?{_NUM} ?小时就有一次网络类中断", rf"network switch/cable: [\d.]+% of unexpected interruptions, one every {_NUM} h"),
         "Llama 3 Table 5: 35 network interruptions in 54 days (labutil.reliability.llama3_counts_by_part)"),
    Fact("llama3_interruptions_per_day_1024", "1,024 GPUs at the Llama 3 rate: interruptions per day", "1/day",
         lambda: _llama3_per_day(1024), "{:.2f}",
         (rf"1,024 张卡的训练作业每天约 ?{_NUM} ?次中断", rf"每天约 ?{_NUM} ?次中断是按成熟期",
          rf"1,024 GPUs: {_NUM} interruptions/day", rf"(?m)^{_NUM} interruptions/day \(job MTBF", rf"Q4 failures +: {_NUM}/day"),
         "labutil.reliability.llama3_failures_per_day(1024)"),
    Fact("gpu_only_failures_per_day_16384", "16,384 GPUs, GPU failures only at the seed's MTBF 100,000 h: per day",
         "1/day", lambda: float(__import__("labutil.reliability", fromlist=["x"]).failures_per_day(16_384, 100_000)),
         "{:.2f}",
         (rf"同样 16,384 张卡约 ?{_NUM} ?次/天", rf"GPU-only estimate at MTBF 100,000 h: {_NUM} per day"),
         "labutil.reliability.failures_per_day (24 n / MTBF)"),
    Fact("llama3_gpu_mtbf_h", "Per-GPU MTBF calibrated on the GPU rows of Llama 3 Table 5 (hours)", "h",
         _llama3_gpu_mtbf_h, "{:,.0f} h",
         (rf"per-GPU MTBF implied by the GPU rows: {_NUM} h", rf"gpu +MTBF per unit: +{_NUM} h"),
         "labutil.reliability.llama3_component_mtbf_hours"),
    Fact("failures_per_day_10000_llama3_gpu_only",
         "10,000 GPUs, GPU failures only, at the GPU MTBF calibrated on Llama 3 Table 5: per day", "1/day",
         lambda: float(__import__("labutil.reliability", fromlist=["x"]).failures_per_day(10_000, _llama3_gpu_mtbf_h())),
         "{:.1f}", (rf"GPU 一项从 ?[\d.]+ ?次/天变成 ?{_NUM} ?次/天",),
         "labutil.reliability.failures_per_day(10,000, llama3 GPU MTBF)"),
    Fact("failures_per_week_10000_llama3", "10,000 GPUs, every part at its Llama 3 Table 5 rate: interruptions per week",
         "1/week", lambda: 7.0 * _failures_10k(), "{:.0f}",
         (rf"每天约 ?[\d.]+ ?次中断\**，一周 ?{_NUM} ?次", rf"interruptions/day \(job MTBF [\d.]+ h\), {_NUM} per week"),
         "7 x labutil.reliability.cluster_failures_per_day (llama3_components(10,000))"),
    Fact("failures_per_week_10000_seed_gpu",
         "10,000 GPUs, Llama 3 rates for host/network/software, GPU at the seed's MTBF 100,000 h: interruptions per week",
         "1/week", lambda: 7.0 * _failures_10k(100_000.0), "{:.0f}",
         (rf"每周近 ?{_NUM} ?次", rf"all parts: [\d.]+ interruptions/day = {_NUM} per week"),
         "7 x labutil.reliability.cluster_failures_per_day (ch27 误区一)", rel_tol=0.05),
)})

_more("failures_per_day_10000_gpus", rf"每天约 ?{_NUM} ?次 GPU 故障", rf"只算 GPU{_SEP}{{0,40}}?是(?:每天 ?)?{_NUM} ?次",
      rf"10,000 GPUs at 100,000 h MTBF: {_NUM} GPU failures per day", rf"GPU-only estimate {_NUM}/day",
      rf"GPU 一项从 ?{_NUM} ?次/天变成")
_more("failures_per_day_10000_seed_gpu", rf"算上主机、网络链路和软件，是每天约 ?{_NUM} ?次",
      rf"all parts: {_NUM} interruptions/day", rel_tol=0.03)
_more("failures_per_day_10000_llama3", rf"10,000 GPUs: {_NUM} interruptions/day")
_more("llama3_gpu_mtbf_10k_h", rf"单卡(?:等效)? ?MTBF 约 ?{_NUM} ?万小时")



# -- training memory, checkpoints and the KV cache (ch01-ch03, ch06-ch09, ch16-ch18, ch25, ch30, lab05) --
def _states(model: str):
    from . import memory, models

    return memory.model_states_gb(float(models.transformer(model).params()))


def _ckpt_gb(params: float) -> float:
    from . import storage

    return float(storage.checkpoint_gb(params))


def _capstone_checkpoint() -> tuple[float, float]:
    """ch30: the checkpoint of the requirements' model and the write bandwidth to persist it in time
    (the two lines of ``capstone.design_cluster`` that size it)."""
    from . import capstone, models

    req = capstone.requirements()
    gb = _ckpt_gb(float(models.transformer(req.model).params()))
    return gb, gb / req.checkpoint_blocking_s


_70B = r"(?:Llama[- ]?3[- ]70B|Llama-3-70B|70B 级模型|70B)"
FACTS.update({f.key: f for f in (
    Fact("gpt3_model_states_tb", "GPT-3 175B (gpt3-175b preset): mixed-precision Adam model states, 16 B/param (TB)",
         "TB", lambda: float(_states("gpt3-175b").total_gb) / 1e3, "{:.1f} TB",
         (rf"175B 模型的训练状态(?:约|超过) ?{_NUM} ?TB", rf"175B 是 ?{_NUM} ?TB", rf"模型状态是 ?{_NUM} ?TB",
          rf"16 B/参数、约 ?{_NUM} ?TB 的「训练状态」"),
         "labutil.memory.model_states_gb (ZeRO paper: 16 bytes per parameter)"),
    Fact("gpt3_bf16_weights_gb", "GPT-3 175B (gpt3-175b preset, 174.6B parameters): bf16 weights (GB)", "GB",
         lambda: float(_states("gpt3-175b").weights_gb), "{:.0f} GB",
         (rf"GPT-3{_SEP}{{0,30}}?bf16 权重就有 ?{_NUM} ?GB", rf"(?m)^{_NUM} ?GB——四张半 H100"),
         "labutil.memory.model_states_gb(...).weights_gb"),
    Fact("llama3_70b_model_states_tb", "Llama-3-70B: mixed-precision Adam model states, 16 B/param (TB)", "TB",
         lambda: float(_states("llama3-70b").total_gb) / 1e3, "{:.2f} TB", (rf"70B 是 ?{_NUM} ?TB",),
         "labutil.memory.model_states_gb"),
    Fact("llama3_70b_bf16_weights_gb", "Llama-3-70B: BF16 weights (GB)", "GB",
         lambda: float(__import__("labutil.inference", fromlist=["x"]).weights_gb("llama3-70b", "bf16")), "{:.0f} GB",
         (rf"{_70B}{_SEP}{{0,20}}?(?:BF16|bf16) 权重(?:就有)? ?{_NUM} ?GB", rf"BF16）：权重 ?{_NUM} ?GB",
          rf"70B 的 ?{_NUM} ?GB 权重", rf"llama3-70b: weights {_NUM} GB BF16", rf"llama3-70b +: bf16 weights +{_NUM} GB"),
         "labutil.inference.weights_gb"),
    Fact("llama3_70b_kv_per_token_kib", "Llama-3-70B (80 layers, 8 KV heads of 128, BF16): KV cache per token (KiB)",
         "KiB", lambda: float(__import__("labutil.inference", fromlist=["x"]).kv_bytes_per_token("llama3-70b")) / 1024,
         "{:.0f} KiB", (rf"字节 ?= ?{_NUM} ?KiB", rf"KV {_NUM} KiB per token"),
         "labutil.inference.kv_bytes_per_token"),
    Fact("llama3_70b_kv_32x8k_gb", "Llama-3-70B: KV cache of 32 sequences of 8,192 tokens (GB)", "GB",
         lambda: float(__import__("labutil.inference", fromlist=["x"]).kv_cache_gb("llama3-70b", 32, 8192)), "{:.0f} GB",
         (rf"8K 上下文{_SEP}{{0,30}}?KV cache 就要 ?{_NUM} ?GB", rf"32 requests x 8K context = {_NUM} GB of KV cache",
          rf"llama3-70b +KV per token +[\d.]+ kB; 32 seqs x 8192 tokens = +{_NUM} GB"),
         "labutil.inference.kv_cache_gb"),
    Fact("gpt3_checkpoint_gb", "GPT-3 175B (175e9 params): full checkpoint, 14 B/param: fp32 master + Adam m, v + bf16 (GB)",
         "GB", lambda: _ckpt_gb(175e9), "{:,.0f} GB",
         (rf"写一个 ?{_NUM} ?GB 的检查点", rf"(?:一|每 30 分钟写) ?{_NUM} ?GB(?: 的)?检查点", rf"GPT-3 175B（{_NUM} ?GB）",
          rf"同一个 ?{_NUM} ?GB 的检查点", rf"{_NUM} ?GB 写进 10 GB/s", rf"restore {_NUM} GB from", rf"a {_NUM} GB checkpoint takes"),
         "labutil.storage.checkpoint_gb (14 B/param)"),
    Fact("gpt3_checkpoint_tb", "GPT-3 175B (175e9 params): full checkpoint (TB)", "TB",
         lambda: _ckpt_gb(175e9) / 1e3, "{:.2f} TB",
         (rf"14 B/参数，约 ?{_NUM} ?TB", rf"检查点（{_NUM} ?TB）", rf"否则 ?{_NUM} ?TB 一份", rf"175B 约 ?{_NUM} ?TB",
          rf"完整检查点约 [\d.]+–{_NUM} ?TB"),
         "labutil.storage.checkpoint_gb (14 B/param)"),
    Fact("ckpt_70b_gb", "A 70B model (70e9 params): full checkpoint, 14 B/param (GB); also ZeRO-Offload's host states", "GB",
         lambda: _ckpt_gb(70e9), "{:.0f} GB",
         (rf"70B 模型（{_NUM} ?GB）", rf"只卸载的状态就要 ?{_NUM} ?GB", rf"训练检查点是它的 7 倍，{_NUM} ?GB",
          rf"（每参数 14 字节，{_NUM} ?GB", rf"这个 ?{_NUM} ?GB 的检查点", rf"（{_NUM} ?GB，每卡", rf"加上梯度共 ?{_NUM} ?GB",
          rf"= {_NUM} ?GB 分给 64 个写入者", rf"\n{_NUM} GB、400 GB/s 的文件系统", rf"70B full fine-tune[^\n]*?{_NUM} GB host RAM =",
          rf"{_NUM} ?GB 在 10 GB/s 的慢存储上"),
         "labutil.storage.checkpoint_gb(70e9)"),
    Fact("offload_70b_host_gb_per_gpu", "70B full fine-tune with ZeRO-Offload on one 8-GPU server: host RAM per GPU (GB)",
         "GB", lambda: _ckpt_gb(70e9) / 8, "{:.1f} GB",
         (rf"980 ?GB，每卡 ?{_NUM} ?GB", rf"980 / 8 = {_NUM} ?GB", rf"70B full fine-tune[^\n]*GB host RAM = +{_NUM} GB per GPU"),
         "labutil.storage.checkpoint_gb(70e9) / 8"),
    Fact("model_states_70e9_gb", "A 70B model (70e9 params): mixed-precision Adam model states, 16 B/param (GB)", "GB",
         lambda: float(__import__("labutil.memory", fromlist=["x"]).model_states_gb(70e9).total_gb), "{:,.0f} GB",
         (rf"16 字节/参数 × 70e9 = {_NUM} ?GB",),
         "labutil.memory.model_states_gb(70e9)"),
    Fact("capstone_checkpoint_gb", "ch30: the Llama-3-70B checkpoint the capstone sizes its storage for (GB)", "GB",
         lambda: _capstone_checkpoint()[0], "{:.0f} GB",
         (rf"70B(?:（[^）]*）)? ?模型一次约 ?{_NUM} ?GB", rf"(?m)^checkpoint {_NUM} GB -> need"),
         "labutil.capstone (storage.checkpoint_gb of the requirements' model)"),
    Fact("capstone_checkpoint_write_gbs", "ch30: write bandwidth to persist that checkpoint in 60 s (GB/s)", "GB/s",
         lambda: _capstone_checkpoint()[1], "{:.1f} GB/s",
         (rf"写带宽需求就是 ?{_NUM} ?GB/s", rf"checkpoint \d+ GB -> need {_NUM} GB/s"),
         "labutil.capstone (checkpoint_gb / checkpoint_blocking_s)"),
    Fact("gpt3_ckpt_sync_stall_s",
         "ch16/ch17: GPT-3 175B checkpoint (2,450 GB) saved synchronously on a 100 GB/s file system: training stall (s)",
         "s", lambda: float(__import__("labutil.storage", fromlist=["x"]).checkpoint_save(
             _ckpt_gb(175e9), 100.0, n_writers=1024, per_writer_gbs=2.0).blocking_s), "{:.1f} s",
         (rf"同步保存每 30 分钟停 ?{_NUM} ?秒", rf"sync : blocking +{_NUM} s", rf"async: blocking +[\d.]+ s, background +{_NUM} s",
          rf"separate tiers: checkpoint burst {_NUM} s"),
         "labutil.storage.checkpoint_save (2,450 GB / 100 GB/s, 1,024 writers)"),
)})


# -- sizing with MFU: Megatron-LM's two runs, HFU vs MFU (ch04, ch24) ------------------------------------
def _megatron_days(name: str, tokens: float, n_gpus: int, tflops: float) -> float:
    """Narayanan et al. 2021 §5.1's estimate: 8 N D / (n x X), X the measured TFLOP/s per A100 (HFU)."""
    from . import compute, hardware, models

    a100 = hardware.gpu("A100-80G-SXM").bf16_tflops
    c8 = compute.train_flops(models.transformer(name).params(), tokens, recompute=True)
    return float(compute.time_to_train_days(c8, n_gpus, a100, tflops / a100))


def _a100_share(tflops: float) -> float:
    from . import hardware

    return tflops / float(hardware.gpu("A100-80G-SXM").bf16_tflops)


FACTS.update({f.key: f for f in (
    Fact("megatron_gpt3_days", "GPT-3 175B, 300B tokens, 1,024 A100 at 140 TFLOP/s, 8ND: days (Narayanan et al. §5.1: 34)",
         "days", lambda: _megatron_days("megatron-gpt-175b", 300e9, 1024, 140.0), "{:.1f} days",
         (rf"(?m)^{_NUM} ?天和 [\d.]+ ?天，与论文的", rf"1024 A100 at 140 TFLOP/s \(\d+% of peak\) -> +{_NUM} days"),
         "labutil.compute.train_flops(recompute=True) + time_to_train_days"),
    Fact("megatron_1t_days", "Megatron 1T, 450B tokens, 3,072 A100 at 163 TFLOP/s, 8ND: days (Narayanan et al. §5.1: 84)",
         "days", lambda: _megatron_days("megatron-gpt-1t", 450e9, 3072, 163.0), "{:.1f} days",
         (rf"(?m)^[\d.]+ ?天和 {_NUM} ?天，与论文的", rf"3072 A100 at 163 TFLOP/s \(\d+% of peak\) -> +{_NUM} days"),
         "labutil.compute.train_flops(recompute=True) + time_to_train_days"),
    Fact("gpt3_megatron_hfu_pct", "GPT-3 175B on 1,024 A100: 140 TFLOP/s per GPU as a share of the A100's 312 (HFU)", "%",
         lambda: _a100_share(140.0), "{:.0%}",
         (rf"140 TFLOP/s（HFU ?{_NUM} ?%）", rf"同理是 HFU ?{_NUM} ?%", rf"1024 A100 at 140 TFLOP/s \({_NUM}% of peak\)"),
         "Narayanan et al. 2021 §5.1 (140 TFLOP/s) / A100 BF16 dense 312 TFLOP/s", scale=100.0),
    Fact("megatron_1t_hfu_pct", "Megatron 1T on 3,072 A100: 163 TFLOP/s per GPU as a share of 312 (the famous '52 %', HFU)",
         "%", lambda: _a100_share(163.0), "{:.0%}",
         (rf"Megatron-LM 在 3072 张 A100 上达到 ?{_NUM} ?%", rf"Megatron-LM 的「{_NUM} ?%」", rf"Megatron-LM {_NUM} ?%」是 HFU",
          rf"163 TFLOP/s、{_NUM} ?%，含重计算", rf"3072 A100 at 163 TFLOP/s \({_NUM}% of peak\)",
          rf"163 TFLOP/s \({_NUM}% of pea"),
         "Narayanan et al. 2021 Table 1 (163 TFLOP/s) / A100 BF16 dense 312 TFLOP/s", scale=100.0),
)})

_more("megatron_1t_mfu_pct", rf"换成 ?MFU 只有 ?{_NUM} ?%", rf"含重计算的 HFU，\s*MFU 约 ?{_NUM} ?%")
_more("published_mfu_low_pct", rf"HFU ?\d+ ?%、MFU ?{_NUM} ?%", rf"MFU 约 \$45\\% \\times 6/8 \\approx {_NUM}\\%\$",
      rf"公开范围 ?{_NUM} ?%\s*[–-]\s*\d+ ?%", rf"都用 ?{_NUM} ?%\s*[–-]\s*\d+ ?% ?这个范围", rf"最低是 GPT-3 在 1,024 张 A100 上的约 ?{_NUM} ?%")
_more("published_mfu_high_pct", rf"公开范围 ?\d+ ?%\s*[–-]\s*{_NUM} ?%", rf"都用 ?\d+ ?%\s*[–-]\s*{_NUM} ?% ?这个范围",
      rf"公开的大规模训练最高到 ?{_NUM} ?%", rf"公开大规模训练的上沿（{_NUM} ?%）", rf"MFU 范围 ?\d+ ?%\s*[–-]\s*{_NUM} ?%")



# -- power and racks (ch05, ch10, ch19, ch30) -------------------------------------------------------------
def _power(n_gpus: int = 1000, **kw):
    from . import power

    return power.cluster_power(n_gpus, server="DGX-H100", **kw)


def _rack_layout(limit_kw: float) -> dict:
    """ch19's rack: DGX H100s plus the 1U management switch (0.1 kW) that shares the budget."""
    from . import inventory

    return inventory.rack_layout("DGX-H100", limit_kw)


_KW = r"kW"
FACTS.update({f.key: f for f in (
    Fact("it_mw_1000_h100", "1,000 H100 in 125 DGX H100 (10.2 kW each): IT power of the servers (MW)", "MW",
         lambda: float(_power(1000, pue=1.0).it_mw), "{:.3f} MW",
         (rf"125 × 10\.2 kW = \**{_NUM} ?MW", rf"千卡 = 125 台 = {_NUM} ?MW", rf"IT \(servers only\) [\d,]+ kW = {_NUM} MW"),
         "labutil.power.cluster_power (DGX H100 10.2 kW, NVIDIA DGX H100 user guide)"),
    Fact("pue_for_2mw_1000_h100", "1,000 H100: the PUE at which the facility draws 2 MW", "",
         lambda: float(__import__("labutil.power", fromlist=["x"]).pue_for(_power(1000, pue=1.0).it_kw, 2000.0)), "{:.2f}",
         (rf"PUE ≥ ?{_NUM} ?时", rf"PUE that turns this into 2 MW: {_NUM}"),
         "labutil.power.pue_for(IT kW, 2,000 kW)"),
    Fact("energy_1000_h100_gwh", "1,000 H100 at full load, PUE 1.5: facility energy per year (GWh)", "GWh",
         lambda: float(__import__("labutil.power", fromlist=["x"]).energy_mwh(_power(1000).it_kw, 365, 1.5)) / 1e3,
         "{:.1f} GWh", (rf"千卡集群满载一年约 ?{_NUM} ?GWh",),
         "labutil.power.energy_mwh (IT kW x PUE x 8,760 h)"),
    Fact("rack40_dgx_h100_kw", "A 40 kW rack holds 3 DGX H100 (power-limited): their power (kW)", "kW",
         lambda: float(_power(1024, rack_kw_limit=40.0).rack_kw), "{:.1f} kW",
         (rf"3 × 10\.2 = {_NUM} ?{_KW}", rf"单柜 ?{_NUM} ?{_KW} ?(?:需要|的散热)", rf"3/rack, {_NUM} kW/rack", rf"3 per rack \(power\),[^\n]*?{_NUM} kW/rack"),
         "labutil.power.cluster_power(rack_kw_limit=40): 3 x 10.2 kW"),
    Fact("rack4_dgx_h100_kw", "4 DGX H100 in one rack: their power (kW), the budget a rack needs to hold 4", "kW",
         lambda: float(_power(1024, rack_kw_limit=41.0).rack_kw), "{:.1f} kW",
         (rf"4 × 10\.2 = {_NUM} ?{_KW}", rf"要放 4 台必须至少 ?{_NUM} ?{_KW}", rf"一个 ?{_NUM} ?{_KW} 的机柜每路",
          rf"{_NUM} ?kW 才能放 4 台"),
         "labutil.power.cluster_power(rack_kw_limit=41): 4 x 10.2 kW", rel_tol=0.01),
    Fact("rack_with_switch_3_dgx_kw", "ch19's 40 kW rack: 3 DGX H100 plus its 0.1 kW management switch (kW)", "kW",
         lambda: float(_rack_layout(40.0)["rack_kw"]), "{:.1f} kW",
         (rf"3 台加管理交换机是 ?{_NUM} ?{_KW}", rf"limit 40 kW: 3 x DGX-H100[^\n]*?GPUs, {_NUM} kW"),
         "labutil.inventory.rack_layout (3 x 10.2 + 0.1 kW)"),
    Fact("rack_with_switch_4_dgx_kw", "ch19's rack: 4 DGX H100 plus the management switch (kW)", "kW",
         lambda: float(_rack_layout(41.0)["rack_kw"]), "{:.1f} kW",
         (rf"第 4 台要 ?{_NUM} ?{_KW}", rf"每柜 4 台 DGX H100 的 ?{_NUM} ?{_KW}", rf"limit 41 kW: 4 x DGX-H100[^\n]*?GPUs, {_NUM} kW"),
         "labutil.inventory.rack_layout (4 x 10.2 + 0.1 kW)"),
    Fact("rack_with_switch_40kw_unused_kw", "ch19's 40 kW rack with 3 DGX H100: power budget left unused (kW)", "kW",
         lambda: 40.0 - float(_rack_layout(40.0)["rack_kw"]), "{:.1f} kW", (rf"剩下的 ?{_NUM} ?{_KW} ?永远用不上",),
         "40 kW - labutil.inventory.rack_layout(...)['rack_kw']"),
    Fact("rack_with_switch_40kw_used_pct", "ch19's 40 kW rack with 3 DGX H100: share of the power budget used", "%",
         lambda: float(_rack_layout(40.0)["rack_kw"]) / 40.0, "{:.0%}", (rf"只用到 ?{_NUM} ?% ?的功率预算",),
         "labutil.inventory.rack_layout(...)['rack_kw'] / 40 kW", scale=100.0),
)})


# -- TCO, owning vs renting, what a budget buys (ch05, ch10, ch30) ----------------------------------------
def _tco(years: float = 4.0, utilisation: float = 0.8):
    from . import cost

    return cost.tco(1024, years=years, utilisation=utilisation, server="DGX-H100", fabric="IB-NDR-400G", pue=1.5)


def _breakeven(years: float = 4.0) -> float:
    from . import cost

    return float(cost.breakeven_utilisation(_tco(years), cost.cloud_usd_per_gpu_hour("H100-SXM")))


def _tco_items(t=None) -> dict:
    """The seven cost items of a TCO over its years (USD): the capex parts and years x each opex part."""
    t = _tco() if t is None else t
    c, o, y = t.capex, t.opex, t.years
    return {"servers": c.servers_usd, "network": c.network_usd, "storage": c.storage_usd, "facility": c.facility_usd,
            "power": y * o.power_usd, "staff": y * o.staff_usd, "maintenance": y * o.maintenance_usd}


def _budget(label: str, budget_usd: float = 50e6, capstone_params: bool = False):
    from . import capstone, cost

    rows = capstone.budget_alternatives(budget_usd) if capstone_params else cost.budget_comparison(budget_usd)
    return {r.label: r for r in rows}[label]


_TOP25, _BAL, _TOP400 = "top GPU + 25GbE", "mid GPU + 200G IB (balanced)", "top GPU + 400G IB"
FACTS.update({f.key: f for f in (
    Fact("tco_1024_usd_per_gpu_hour", "1,024 H100 (DGX H100, IB NDR, PUE 1.5), 4 years at 80 % utilisation: USD per used GPU-hour",
         "USD", lambda: float(_tco().usd_per_gpu_hour), "{:.2f} USD",
         (rf"-> {_NUM} USD per used GPU-hour at 80 %", rf"depreciation 4 years: {_NUM} USD/GPU-h",
          rf"utilisation +80 %: owned +{_NUM} USD/GPU-h", rf"power 0\.08 USD/kWh: power bill [\d.]+ M USD/yr -> {_NUM} USD/GPU-h"),
         "labutil.cost.tco (illustrative prices, labutil/data/prices.toml)"),
    Fact("tco_1024_breakeven_utilisation_pct",
         "1,024 H100 owned for 4 years vs AWS Capacity Blocks p5: break-even utilisation", "%",
         _breakeven, "{:.1%}",
         (rf"全年平均利用率得超过约 ?{_NUM} ?%", rf"利用率门槛约 ?{_NUM} ?%", rf"depreciation 4 years:[^\n]*vs cloud {_NUM} %",
          rf"owning 1,024 H100 wins over 4 years above {_NUM} % utilisation", rf"1\.0 x [\d.]+ = +[\d.]+ USD/GPU-h: owning wins above {_NUM} %",
          rf"the cloud price; break-even utilisation {_NUM} %"),
         "labutil.cost.breakeven_utilisation", scale=100.0),
    Fact("tco_1024_breakeven_5y_pct", "The same, depreciated over 5 years: break-even utilisation", "%",
         lambda: _breakeven(5.0), "{:.0%}", (rf"盈亏平衡利用率从 ?{_NUM} ?% ?升到", rf"depreciation 5 years:[^\n]*vs cloud {_NUM} %"),
         "labutil.cost.breakeven_utilisation", scale=100.0),
    Fact("tco_1024_breakeven_3y_pct", "The same, depreciated over 3 years: break-even utilisation", "%",
         lambda: _breakeven(3.0), "{:.0%}", (rf"盈亏平衡利用率从 ?\d+ ?% ?升到 ?{_NUM} ?%", rf"depreciation 3 years:[^\n]*vs cloud {_NUM} %"),
         "labutil.cost.breakeven_utilisation", scale=100.0),
    Fact("tco_1024_owned_at_30pct_over_cloud", "Owning at 30 % utilisation: cost per GPU-hour over the cloud price", "x",
         lambda: float(_tco(4.0, 0.3).usd_per_gpu_hour / __import__("labutil.cost", fromlist=["x"]).cloud_usd_per_gpu_hour("H100-SXM")),
         "{:.2f}x", (rf"每 GPU·小时是云价格的 ?{_NUM} ?倍", rf"owned at 30 % costs {_NUM}x the cloud price"),
         "labutil.cost.tco / cloud_usd_per_gpu_hour"),
    Fact("tco_default_utilisation_pct", "ch05: the utilisation the TCO text, figures and explorer start from", "%",
         lambda: float(__import__("labutil.cost", fromlist=["x"]).DEFAULT_UTILISATION), "{:.0%}",
         (rf"预算表里假设的 ?{_NUM} ?%", rf"利用率 ?{_NUM} ?% ?时(?:大约)?两年多回本", rf"USD per used GPU-hour at {_NUM} %",
          rf"4 年、利用率 ?{_NUM} ?% ?时每个用掉的"),
         "labutil.cost.DEFAULT_UTILISATION (a planning assumption; the ch05 explorer's default)", scale=100.0, rel_tol=0.0),
    Fact("tco_1024_it_mw", "1,024 H100 in 128 DGX H100: IT power (MW) in the TCO", "MW",
         lambda: float(_power(1024, pue=1.0).it_mw), "{:.1f} MW", (rf"128 台 × 10\.2 kW = {_NUM} ?MW",),
         "labutil.power.cluster_power (the TCO's energy line uses it)"),
    Fact("tco_1024_facility_mw", "1,024 H100 at PUE 1.5: facility power (MW)", "MW",
         lambda: float(_tco().opex.facility_kw) / 1e3, "{:.2f} MW",
         (rf"乘 PUE 1\.5 约 ?{_NUM} ?MW",),
         "labutil.cost.opex_per_year (labutil.power)", rel_tol=0.03),
    Fact("tco_power_share_pct", "1,024 H100, 4 years: the power bill's share of the TCO (illustrative prices)", "%",
         lambda: _tco_items()["power"] / float(_tco().total_usd), "{:.0%}",
         (rf"电费约占 ?4 ?年 TCO 的 ?{_NUM} ?%", rf"排第 ?\d，约占 ?4 ?年 TCO 的 ?{_NUM} ?%"),
         "labutil.cost.tco: 4 x opex.power_usd / total", scale=100.0),
    Fact("tco_power_rank", "1,024 H100, 4 years: rank of the power bill among the seven TCO items (1 = largest)", "",
         lambda: float(1 + sum(v > _tco_items()["power"] for v in _tco_items().values())), "{:.0f}",
         (rf"在七项成本里排第 ?{_NUM}", rf"电费在 ?7 ?项里排第 ?{_NUM}，约占"),
         "labutil.cost.tco (servers, network, storage, facility, power, staff, maintenance)",
         rel_tol=0.0),
    Fact("budget50m_top25_scaling_pct", "50 M USD budget, top GPU + 25GbE: scaling efficiency of the reference DP job", "%",
         lambda: float(_budget(_TOP25).scaling_efficiency), "{:.1%}",
         (rf"扩展效率只有约 ?{_NUM} ?%（与第 14 章", rf"top GPU \+ 25GbE +\d+ GPUs, peak +\d+ PF, scaling +{_NUM} %"),
         "labutil.cost.budget_comparison(50e6)", scale=100.0),
    Fact("budget50m_balanced_scaling_pct", "50 M USD budget, mid GPU + 200G IB: scaling efficiency", "%",
         lambda: float(_budget(_BAL).scaling_efficiency), "{:.1%}",
         (rf"200G IB 让它保持了约 ?{_NUM} ?% ?的扩展效率", rf"balanced\) +\d+ GPUs, peak +\d+ PF, scaling +{_NUM} %"),
         "labutil.cost.budget_comparison(50e6)", scale=100.0),
    Fact("budget50m_balanced_over_top25", "50 M USD budget: delivered compute of the balanced option over top GPU + 25GbE", "x",
         lambda: float(_budget(_BAL).delivered_pflops / _budget(_TOP25).delivered_pflops), "{:.2f}x",
         (rf"balanced / top GPU \+ 25GbE delivered compute: {_NUM}x",), "labutil.cost.budget_comparison(50e6)"),
    Fact("budget50m_balanced_gain_pct", "50 M USD budget: how much more the balanced option delivers than top GPU + 25GbE", "%",
         lambda: float(_budget(_BAL).delivered_pflops / _budget(_TOP25).delivered_pflops) - 1.0, "{:.0%}",
         (rf"交付算力反而高出 ?{_NUM} ?%",), "labutil.cost.budget_comparison(50e6)", scale=100.0),
    Fact("capstone_budget_top25_peak_pflops", "ch30, 80 M USD: top GPU + 25GbE peak (PFLOP/s)", "PFLOP/s",
         lambda: float(_budget(_TOP25, 80e6, True).peak_pflops), "{:,.0f}",
         (rf"买到的峰值最高（{_NUM} ?PFLOP/s）", rf"top GPU \+ 25GbE +\d+ GPUs, peak +{_NUM} PFLOP/s"),
         "labutil.capstone.budget_alternatives(80e6)"),
    Fact("capstone_budget_top25_delivered_pflops", "ch30, 80 M USD: top GPU + 25GbE delivered (PFLOP/s)", "PFLOP/s",
         lambda: float(_budget(_TOP25, 80e6, True).delivered_pflops), "{:.0f}",
         (rf"交付的却最少（{_NUM}：", rf"top GPU \+ 25GbE [^\n]*delivered +{_NUM} PFLOP/s"),
         "labutil.capstone.budget_alternatives(80e6)"),
    Fact("capstone_budget_top25_scaling_pct", "ch30, 80 M USD: top GPU + 25GbE scaling efficiency", "%",
         lambda: float(_budget(_TOP25, 80e6, True).scaling_efficiency), "{:.0%}",
         (rf"扩展效率只有 ?{_NUM} ?%）；均衡", rf"top GPU \+ 25GbE [^\n]*scaling eff 0\.(\d\d)"),
         "labutil.capstone.budget_alternatives(80e6)", scale=100.0),
    Fact("capstone_budget_balanced_delivered_pflops", "ch30, 80 M USD: A100 + 200G IB delivered (PFLOP/s)", "PFLOP/s",
         lambda: float(_budget(_BAL, 80e6, True).delivered_pflops), "{:.0f}",
         (rf"200G IB」交付 ?{_NUM}", rf"balanced\) [^\n]*delivered +{_NUM} PFLOP/s"), "labutil.capstone.budget_alternatives(80e6)"),
    Fact("capstone_budget_balanced_gain_pct", "ch30, 80 M USD: balanced over top GPU + 25GbE, delivered", "%",
         lambda: float(_budget(_BAL, 80e6, True).delivered_pflops / _budget(_TOP25, 80e6, True).delivered_pflops) - 1.0,
         "{:.0%}", (rf"交付 ?\d+，\s*高出 ?{_NUM} ?%",), "labutil.capstone.budget_alternatives(80e6)", scale=100.0),
    Fact("capstone_budget_top400_delivered_pflops", "ch30, 80 M USD: H100 + 400G IB delivered (PFLOP/s)", "PFLOP/s",
         lambda: float(_budget(_TOP400, 80e6, True).delivered_pflops), "{:.0f}",
         (rf"400G IB 交付最多（{_NUM}）", rf"top GPU \+ 400G IB [^\n]*delivered +{_NUM} PFLOP/s"),
         "labutil.capstone.budget_alternatives(80e6)"),
    Fact("capstone_it_mw", "ch30: the capstone cluster's IT power (MW)", "MW",
         lambda: float(__import__("labutil.capstone", fromlist=["x"]).design_cluster(simulate=False).power.it_kw) / 1e3,
         "{:.2f} MW", (rf"千卡集群的 IT 功率约 ?{_NUM} ?MW",),
         "labutil.capstone.design_cluster().power"),
    Fact("capstone_facility_mw", "ch30: the capstone cluster's facility power at PUE 1.3 (MW)", "MW",
         lambda: float(__import__("labutil.capstone", fromlist=["x"]).design_cluster(simulate=False).power.facility_kw) / 1e3,
         "{:.2f} MW", (rf"加上制冷和配电损耗后约 ?{_NUM} ?MW",),
         "labutil.capstone.design_cluster().power"),
)})


# -- fabric sizes (ch03, ch10, ch12, ch19, ch30) -----------------------------------------------------------
def _fabric(n_gpus: int):
    from . import topology

    return topology.size_fabric(n_gpus, nics_per_node=8, gpus_per_node=8, switch_ports=64, link_gbps=400)


def _optics_kw_1024() -> float:
    from . import hardware, topology

    return float(topology.fabric_optics_kw(_fabric(1024), hardware.switch("QM9700").transceiver_power_w))


FACTS.update({f.key: f for f in (
    Fact("su_leaf_switches", "One DGX SuperPOD H100 SU (32 DGX H100, 256 GPUs, 64-port NDR, rail-optimised): leaf switches",
         "switches", lambda: float(_fabric(256).leaf_switches), "{:.0f}",
         (rf"{_NUM} ?台叶交换机、\d+ ?台脊交换机，与 NVIDIA DGX SuperPOD", rf"256 GPUs: {_NUM} leaf \+ \d+ spine",
          rf"一个 SU = 32 节点 = 256 GPU = {_NUM} ?台 leaf"),
         "labutil.topology.size_fabric (DGX SuperPOD H100 RA, table 4)", rel_tol=0.0),
    Fact("su_spine_switches", "One DGX SuperPOD H100 SU: spine switches", "switches",
         lambda: float(_fabric(256).spine_switches), "{:.0f}",
         (rf"\d+ ?台叶交换机、{_NUM} ?台脊交换机，与 NVIDIA DGX SuperPOD", rf"256 GPUs: \d+ leaf \+ {_NUM} spine"),
         "labutil.topology.size_fabric", rel_tol=0.0),
    Fact("fabric_1024_leaf_switches", "1,024 H100 (128 DGX H100, 8 x 400G, 64-port NDR, 1:1, rail-optimised): leaf switches",
         "switches", lambda: float(_fabric(1024).leaf_switches), "{:.0f}",
         (rf"{_NUM} ?台叶交换机 ?\+ ?\d+ ?台脊交换机", rf"leaf {_NUM}, spine \d+, core", rf"{_NUM} leaf \+ \d+ spine (?:QM9700|,)"),
         "labutil.topology.size_fabric", rel_tol=0.0),
    Fact("fabric_1024_spine_switches", "1,024 H100: spine switches", "switches",
         lambda: float(_fabric(1024).spine_switches), "{:.0f}",
         (rf"\d+ ?台叶交换机 ?\+ ?{_NUM} ?台脊交换机", rf"leaf \d+, spine {_NUM}, core", rf"\d+ leaf \+ {_NUM} spine (?:QM9700|,)"),
         "labutil.topology.size_fabric", rel_tol=0.0),
    Fact("fabric_1024_switches", "1,024 H100: compute-fabric switches", "switches",
         lambda: float(_fabric(1024).leaf_switches + _fabric(1024).spine_switches + _fabric(1024).core_switches), "{:.0f}",
         (rf"计算网络(?:需要|是) ?{_NUM} ?台(?: ?64 口 NDR)? ?交换机", rf"{_NUM} ?台交换机、2,048 根线", rf"同样 ?{_NUM} ?台交换机，轨道优化",
          rf"compute +3,200 Gb/s per node, +1024 ports, +{_NUM} switches"),
         "labutil.topology.size_fabric", rel_tol=0.0),
    Fact("fabric_1024_cables", "1,024 H100: compute-fabric cables (node-leaf + leaf-spine)", "cables",
         lambda: float(_fabric(1024).cables), "{:,.0f}",
         (rf"{_NUM} ?根线缆(?:和|、)", rf"交换机、{_NUM} ?根线", rf"仅计算网络就有 ?{_NUM} ?根线缆", rf"compute-fabric cables {_NUM}",
          rf"leaf-spine \d+, total {_NUM}", rf"NIC ports, {_NUM} cables", rf"1:1 +: \d+ leaf \+ \d+ spine, {_NUM} cables",
          rf"1024 GPUs:[^\n]*compute fabric +{_NUM} cables"),
         "labutil.topology.size_fabric", rel_tol=0.0),
    Fact("fabric_1024_transceivers", "1,024 H100: twin-port OSFP transceivers of the compute fabric", "transceivers",
         lambda: float(_fabric(1024).transceivers), "{:,.0f}",
         (rf"(?:根线缆和|根线缆、|根线、|台交换机、) ?{_NUM} ?个(?:双口)?光模块", rf"需要约 ?{_NUM} ?个 ?17 W 级的双口光模块",
          rf"transceivers {_NUM}(?:, optics power| \()",
          rf"cables, {_NUM} transceivers", rf"1024 GPUs:[^\n]*cables and +{_NUM} transceivers"),
         "labutil.topology.size_fabric", rel_tol=0.03),
    Fact("fabric_1024_optics_kw", "1,024 H100: power of the compute fabric's transceivers (17 W each, QM9700 manual)", "kW",
         _optics_kw_1024, "{:.1f} kW",
         (rf"仅光模块就约 ?{_NUM} ?kW", rf"optics power {_NUM} kW", rf"\d+ transceivers \({_NUM} kW\)"),
         "labutil.topology.fabric_optics_kw", rel_tol=0.03),
)})


def _topo():
    from . import topology

    return topology


FACTS.update({f.key: f for f in (
    Fact("fat_tree_k48_hosts", "k-ary fat tree of 48-port switches: hosts (k^3/4, Al-Fares et al. 2008 §3.2)", "hosts",
         lambda: float(_topo().fat_tree(48).hosts), "{:,.0f}",
         (rf"48 口交换机能搭出 {_NUM} 台主机", rf"48 口 → {_NUM} 主机", rf"k= 48: hosts +{_NUM}"),
         "labutil.topology.fat_tree", rel_tol=0.0),
    Fact("fat_tree_64port_3tier_nics", "Three tiers of 64-port switches, 1:1: NIC ports (r^3/4)", "ports",
         lambda: float(_topo().max_nics(64, 3)), "{:,.0f}",
         (rf"QM9700），就是 {_NUM} 个网卡端口", rf"64 口交换机分别是 [\d,]+ 与 {_NUM} 个端口", rf"k= 64: hosts +{_NUM}"),
         "labutil.topology.max_nics(64, 3)", rel_tol=0.0),
    Fact("fat_tree_64port_2tier_nics", "Two tiers of 64-port switches, 1:1: NIC ports (r^2/2)", "ports",
         lambda: float(_topo().max_nics(64, 2)), "{:,.0f}", (rf"64 口交换机分别是 {_NUM} 与 [\d,]+ 个端口",),
         "labutil.topology.max_nics(64, 2)", rel_tol=0.0),
)})


# -- data loading at scale (ch16, ch18) -------------------------------------------------------------------
def _imagenet_read():
    from . import dataloading, storage

    return storage.data_read_requirements(1024 * dataloading.RESNET50_A100_IMG_S, dataloading.IMAGENET_MEAN_JPEG_BYTES)


FACTS.update({f.key: f for f in (
    Fact("imagenet_1024_a100_read_gbs", "ResNet-50 on 1,024 A100 (2,470 img/s each), one JPEG per file: read bandwidth (GB/s)",
         "GB/s", lambda: float(_imagenet_read().read_gbs), "{:.0f} GB/s",
         (rf"{_NUM} ?GB/s 的读带宽，每秒", rf"img/s: read {_NUM} GB/s", rf"1 file/sample : +{_NUM} GB/s"),
         "labutil.storage.data_read_requirements (NVIDIA DeepLearningExamples ResNet-50 throughput)"),
    Fact("imagenet_1024_a100_opens_per_s_1e4", "The same: file opens per second (in units of 10,000, as 万)", "1e4/s",
         lambda: float(_imagenet_read().files_per_s), "{:,.0f}",
         (rf"每秒 ?{_NUM} ?万次文件打开", rf"每秒要打开 ?{_NUM} ?万个文件", rf"从每秒 ?{_NUM} ?万降到"),
         "labutil.storage.data_read_requirements", scale=1e-4),
)})



# -- catalog and published numbers quoted by many notebooks (one data-file entry each; a catalog update
#    is checked against every chapter that quotes the old value) -------------------------------------
def _gpu(name: str = "H100-SXM"):
    from . import hardware

    return hardware.gpu(name)


def _llama3_ref() -> dict:
    from . import reliability

    return reliability.reference_data()["llama3"]


def _llama3_table4_mfu(pick) -> float:
    from . import published_runs as pr

    return float(pick(r.published for r in pr.LLAMA3_TABLE4 if r.metric == "mfu_points"))


def _pcie_gbs(gen: int) -> float:
    from . import links

    return float(links.pcie_gbs(f"gen{gen}", 16))


def _pcie_pair_busbw_gbs() -> float:
    from .machine import expect

    return float(next(r["busbw_gbs"] for r in expect.reference_cases() if r["case"] == "2x PCIe Gen4 x16"))


_H100W = r"(?:H100(?: SXM)?|H100-SXM)"
FACTS.update({f.key: f for f in (
    Fact("h100_bf16_dense_tflops", "H100 SXM: BF16 dense peak (TFLOP/s), the denominator of every MFU", "TFLOP/s",
         lambda: float(_gpu().bf16_tflops), "{:.1f} TFLOP/s",
         (rf"{_H100W}(?: BF16)? ?(?:是|为) ?{_NUM} ?TFLOP/s", rf"{_H100W}{_SEP}{{0,30}}?BF16 稠密峰值 ?{_NUM} ?TFLOP/s",
          rf"H100 Tensor Core GPU Datasheet(?:：|（)BF16 稠密峰值 ?{_NUM} ?TFLOP/s", rf"BF16 稠密峰值完全相同（{_NUM} ?TFLOP/s",
          rf"H100 SXM（{_NUM} ?TFLOP/s BF16 稠密", rf"H100-SXM +BF16 (?:dense|peak) +{_NUM} TFLOP/s",
          rf"H100-SXM +bf16 dense +{_NUM} TFLOP/s", rf"（{_NUM} / 312 ≈ 3\.2 倍）"),
         "labutil/data/gpus.toml (NVIDIA H100 datasheet, SXM column, sparse / 2)"),
    Fact("h100_hbm_tbs", "H100 SXM: HBM3 bandwidth (TB/s)", "TB/s", lambda: float(_gpu().hbm_gbs) / 1e3, "{:.2f} TB/s",
         (rf"从 80 GB/{_NUM} ?TB/s", rf"显存带宽从 {_NUM} ?TB/s 提到", rf"÷ 8 ≈ {_NUM} ?TB/s", rf"按数据手册的 {_NUM} ?TB/s",
          rf"H100 SXM（[\d.]+ TFLOP/s BF16 稠密、{_NUM} ?TB/s"),
         "labutil/data/gpus.toml (NVIDIA H100 datasheet: 3.35 TB/s)"),
    Fact("h100_ridge_flop_per_byte", "H100 SXM: roofline ridge point, BF16 dense peak over HBM bandwidth (FLOP/byte)", "FLOP/byte",
         lambda: float(__import__("labutil.compute", fromlist=["x"]).ridge_intensity(_gpu().bf16_tflops, _gpu().hbm_gbs)),
         "{:.0f} FLOP/byte", (rf"H100 的 ridge point（约 {_NUM} ?FLOP/Byte", rf"脊点约 ?{_NUM} ?FLOP/byte"),
         "labutil.compute.ridge_intensity"),
    Fact("dgx_h100_kw", "DGX H100: maximum input power (kW)", "kW",
         lambda: float(__import__("labutil.hardware", fromlist=["x"]).server("DGX-H100").max_power_w) / 1e3, "{:.1f} kW",
         (rf"整机的最大输入功率是 \**{_NUM} ?kW", rf"单台最大约 {_NUM} ?kW", rf"8U，约 {_NUM} ?kW", rf"最大功耗约 {_NUM} ?kW，8U",
          rf"一台 DGX H100 最大 {_NUM} ?kW", rf"最大输入功率 {_NUM} ?kW", rf"DGX H100 是 {_NUM} ?kW，不是",
          rf"(?:125|128 台|3|4) × {_NUM} ?(?:kW|=)", rf"满载功率约 {_NUM} ?kW ÷ 8", rf"从 GPU 的 700 W 到整机的 {_NUM} ?kW",
          rf"server power {_NUM} kW each"),
         "labutil/data/servers.toml (NVIDIA DGX H100 user guide: ~10.2 kW max)"),
    Fact("llama3_unexpected_interruptions", "Llama 3 405B pre-training snapshot: unexpected interruptions (Table 5)", "",
         lambda: float(_llama3_ref()["unexpected_interruptions"]), "{:.0f}",
         (rf"{_NUM} ?次(?:意外|非计划)中断", rf"{_NUM} ?次是意外中断", rf"47 次计划内、{_NUM} ?次意外", rf"一共发生 ?{_NUM} ?次",
          rf"54 天 ?{_NUM} ?次", rf"{_NUM} unexpected interruptions in", rf"mean [\d.]+ \(Llama 3: {_NUM}\)"),
         "Llama 3 paper §3.3.4, Table 5 (labutil/data reliability reference)", rel_tol=0.0),
    Fact("llama3_snapshot_days", "Llama 3 405B: length of the reliability snapshot (days)", "days",
         lambda: float(_llama3_ref()["snapshot_days"]), "{:.0f}",
         (rf"{_NUM} ?天(?:内|里)? ?(?:有 )?419", rf"{_NUM} ?天快照", rf"预训练的(?:一个)? ?{_NUM} ?天", rf"Llama 3 405B 预训练的 {_NUM} 天",
          rf"unexpected interruptions in {_NUM} days", rf"419 in {_NUM} days", rf"{_NUM} ?天里只有 3 次"),
         "Llama 3 paper §3.3.4", rel_tol=0.0),
    Fact("megascale_mfu_pct", "MegaScale (NSDI 2024): 175B model on 12,288 GPUs, MFU", "%",
         lambda: float(__import__("labutil.published_runs", fromlist=["x"]).MEGASCALE_175B_MFU), "{:.1%}",
         (rf"12,288 ?张? ?GPU{_SEP}{{0,20}}?(?:达到|上的) ?{_NUM} ?%", rf"175B 模型、MFU {_NUM} ?%", rf"12,288 张 GPU、{_NUM} ?% MFU",
          rf"175B 模型 {_NUM} ?% MFU", rf"GPU、{_NUM} ?% MFU", rf"MFU 从 40% 提到 {_NUM} ?%", rf"at MFU {_NUM}%:(?=  16\.4)",
          rf"MFU 40% -> {_NUM}%", rf"\(NSDI 2024\) \| MFU {_NUM} %"),
         "labutil.published_runs.MEGASCALE_175B_MFU (Jiang et al., NSDI 2024, §5.1)", scale=100.0),
    Fact("llama3_mfu_low_pct", "Llama 3 405B (Table 4): lowest reported BF16 MFU", "%",
         lambda: _llama3_table4_mfu(min), "{:.0%}",
         (rf"{_NUM} ?%\s*[–-]\s*43 ?%", rf"和 ?{_NUM} ?%（128K 上下文）"),
         "labutil.published_runs.LLAMA3_TABLE4 (Dubey et al. 2024, Table 4)", scale=100.0),
    Fact("llama3_mfu_high_pct", "Llama 3 405B (Table 4): highest reported BF16 MFU", "%",
         lambda: _llama3_table4_mfu(max), "{:.0%}", (rf"38 ?%\s*[–-]\s*{_NUM} ?%",),
         "labutil.published_runs.LLAMA3_TABLE4 (Dubey et al. 2024, Table 4)", scale=100.0),
    Fact("pcie_gen5_x16_gbs", "PCIe Gen5 x16, per direction (GB/s): 32 GT/s x 128/130 x 16 / 8", "GB/s",
         lambda: _pcie_gbs(5), "{:.1f} GB/s",
         (rf"Gen5 x16(?:（| 的 |约 | 每方向约 )?{_NUM} ?GB/s", rf"÷ 8 = {_NUM} ?GB/s）", rf"PCIe Gen5 x16: {_NUM} GB/s",
          rf"PCIe Gen5 x16 +{_NUM} GB/s per direction", rf"400G NIC in Gen5 x16: slot +{_NUM} GB/s"),
         "labutil.links.pcie_gbs (PCI-SIG PCIe 5.0)"),
    Fact("pcie_gen4_x16_gbs", "PCIe Gen4 x16, per direction (GB/s): 16 GT/s x 128/130 x 16 / 8", "GB/s",
         lambda: _pcie_gbs(4), "{:.1f} GB/s",
         (rf"Gen4 x16(?: 插槽)?（{_NUM} ?GB/s", rf"x16 每方向 {_NUM} ?GB/s", rf"PCIe Gen4 x16: {_NUM} GB/s",
          rf"中转时每卡最多 {_NUM} ?GB/s", rf"400G NIC in Gen4 x16: slot +{_NUM} GB/s"),
         "labutil.links.pcie_gbs (PCI-SIG PCIe 4.0)"),
    Fact("pcie_gen4_pair_busbw_gbs", "Two GPUs on one PCIe Gen4 x16 switch: expected all_reduce busbw (GB/s)", "GB/s",
         _pcie_pair_busbw_gbs, "{:.0f} GB/s",
         (rf"约 {_NUM} ?GB/s（Gen4 x16", rf"经 PCIe 交换芯片 P2P） \| 约 {_NUM} ?GB/s", rf"两张卡平台约 {_NUM} ?GB/s",
          rf"应接近上表 {_NUM} ?GB/s", rf"lab02 的基线（约 {_NUM} ?GB/s", rf"梯度在 {_NUM} ?GB/s 下"),
         "labutil.machine.expect.reference_cases (Cluster.from_links, PCIe Gen4 x 370/450 ring efficiency)"),
    Fact("llama2_7b_bf16_grads_gb", "Llama-2-7B (6.74B parameters): bf16 gradient per step (GB)", "GB",
         lambda: float(__import__("labutil.comm", fromlist=["x"]).gradient_bytes(
             __import__("labutil.models", fromlist=["x"]).transformer("llama2-7b").params(), 2)) / 1e9, "{:.2f} GB",
         (rf"一个 7B 模型，每一步就要同步 {_NUM} ?GB", rf"llama2-7b +[\d.]+B params -> bf16 gradient +{_NUM} GB/step", rf"2\(n-1\)/n x {_NUM} GB / busbw"),
         "labutil.comm.gradient_bytes(llama2-7b params, 2)"),
)})



# -- NCCL's latencies and the α-β model's constants (ch13, ch14, ch15, ch22, lab02) -----------------------
def _hw_lat_us(link: str, algo: str = "ring", proto: str = "Simple") -> float:
    """NCCL's current per-hop hardware latency (``nccl_tuning.CURRENT``: tuning.cc at v2.30.7-1)."""
    from . import nccl_tuning

    return float(nccl_tuning.CURRENT["hw_lat_us"][link][algo][nccl_tuning.PROTOS.index(proto)])


def _ch13_bucket(n: int):
    """ch13 §3: one 25 MiB DDP bucket, ring all-reduce over ``n`` ranks of 50 GB/s, the bare α-β model."""
    from . import comm

    return comm.collective_cost("all_reduce", comm.DDP_BUCKET_BYTES, n, 50.0, algo="ring")


def _ring_factor(n: int) -> float:
    from . import comm

    return float(comm.busbw_factor("all_reduce", n))


_US = r"µs"
FACTS.update({f.key: f for f in (
    Fact("nccl_net_ring_simple_us", "NCCL 2.18.1-2.30.7: per-hop network latency of Ring/Simple (hwLat, µs)", "µs",
         lambda: _hw_lat_us("net"), "{:.0f} µs",
         (rf"到当前的 2\.30\.7 是 {_NUM} ?{_US}", rf"v2\.30\.7-1（NET Ring/Simple {_NUM} ?{_US}", rf"v2\.30\.7-1 为 {_NUM} ?{_US}",
          rf"只有 \$2\(\\text\{{节点数\}} ?- ?1\)\$ ?跳按网络计（{_NUM} ?{_US}）", rf"Simple 协议每跳 {_NUM} ?{_US}"),
         "labutil.nccl_tuning.CURRENT (NVIDIA/nccl src/graph/tuning.cc, v2.30.7-1)"),
    Fact("nvlink_ring_simple_us", "NCCL: per-hop NVLink latency of Ring/Simple (hwLat, µs)", "µs",
         lambda: _hw_lat_us("nvlink"), "{:.1f} µs",
         (rf"NVLink(?: 上)?(?: Ring/Simple)?(?: 的)?每步(?:硬件延迟)? ?{_NUM} ?{_US}",
          rf"NVLink 的 {_NUM} ?{_US}", rf"NVLink {_NUM} ?{_US}", rf"每步 {_NUM} ?{_US}，外加", rf"Simple 协议 {_NUM} ?{_US}）",
          rf"（Simple {_NUM} ?{_US}，LL128", rf"α = {_NUM} ?{_US}）", rf"alpha NVLink += {_NUM} us"),
         "labutil.nccl_tuning.CURRENT (tuning.cc hwLat[NVLINK][RING][SIMPLE])"),
    Fact("comm_net_step_latency_us", "The bare α-β model's network α per step (µs): NCCL 2.7-2.11 and 2.17's Ring/Simple", "µs",
         lambda: float(__import__("labutil.comm", fromlist=["x"]).NET_STEP_LATENCY_S) * 1e6, "{:.1f} µs",
         # the model's α only: the sentences on NCCL's history (2.7-2.11 and 2.17: 9.6, 2.12: 28) stay true if it changes
         (rf"跨网络每步 {_NUM} ?{_US}", rf"都按 {_NUM} ?{_US} 算", rf"α = {_NUM} ?{_US}，busbw 上限",
          rf"网络 {_NUM} ?{_US}(?:、|，)NVLink", rf"为什么 {_NUM} ?{_US} 只适用于大消息", rf"也不是网络的 {_NUM} 或",
          rf"\$30 \\times {_NUM}\$"),
         "labutil.comm.NET_STEP_LATENCY_S (tuning.cc at v2.7.5-1: hwLat[NET][RING][SIMPLE])"),
    Fact("ch13_bucket_1024_ring_ms", "ch13: a 25 MiB bucket, ring all-reduce on 1,024 ranks of 50 GB/s (ms)", "ms",
         lambda: float(_ch13_bucket(1024).time_s) * 1e3, "{:.1f} ms",
         (rf"25 MiB 的桶用 ring 要 {_NUM} ?ms", rf"n= 1024: 25 MiB bucket ring +{_NUM} ms"),
         "labutil.comm.collective_cost (α-β, ring)"),
    Fact("ch13_bucket_1024_ring_latency_pct", "ch13: the latency share of that bucket's time", "%",
         lambda: float(_ch13_bucket(1024).latency_s / _ch13_bucket(1024).time_s), "{:.0%}",
         (rf"用 ring 要 [\d.]+ ?ms，其中 {_NUM} ?% 是延迟", rf"延迟项占了 ?{_NUM} ?%",
          rf"n= 1024: 25 MiB bucket ring +[\d.]+ ms \(latency +{_NUM}%\)"),
         "labutil.comm.collective_cost (α-β, ring)", scale=100.0),
    Fact("ring_bytes_8_to_1024_growth_pct", "Ring all-reduce: bytes each rank sends, 1,024 ranks over 8 ranks, minus one", "%",
         lambda: _ring_factor(1024) / _ring_factor(8) - 1.0, "{:.0%}",
         (rf"1 GB all-reduce 的带宽项只增加 ?{_NUM} ?%", rf"1\.998 GB，多了 ?{_NUM} ?%"),
         "labutil.comm.busbw_factor: 2(n-1)/n", scale=100.0),
    Fact("seed003_node_net_gbs", "Seed 003: one 25 GbE port per server, NCCL over RoCE at 0.96: achievable GB/s per node", "GB/s",
         lambda: float(__import__("labutil.cluster", fromlist=["x"]).Cluster.scenario(_seed003_scenario()).node_net_gbs),
         "{:.1f} GB/s", (rf"1 × 25 GbE，busbw 上限 {_NUM} ?GB/s", rf"25/8 × 0\.96 = {_NUM} ?GB/s"),
         "labutil.cluster.Cluster.scenario(seed 003).node_net_gbs"),
    Fact("seed003_sync_over_compute", "Seed 003: gradient sync over compute per step", "x",
         lambda: float(_seed003()[1] / _seed003()[0]), "{:.0f}x",
         (rf"同步是计算的约 ?{_NUM} ?倍", rf"是计算（[\d.]+ s）的 {_NUM} 倍"),
         "labutil.facts seed 003 (dp_comm_time_s / dense_compute_time_s)"),
    Fact("h800_ring_busbw_gbs", "8x H800 in one node: NCCL's NVLink ring busbw (GB/s)", "GB/s",
         lambda: float(_cluster("HGX-H800").ring_busbw_gbs), "{:.0f} GB/s",
         (rf"H800 的 NVLink 环取 {_NUM} ?GB/s", rf"H800 的 NVLink（环 {_NUM} ?GB/s）", rf"HGX-H800 +one node: ring +{_NUM},",
          rf"ring {_NUM}, NVLS \d+ GB/s busbw\); 1 x 25"),
         "labutil/data/systems.toml HGX-H800 (DeepSeek-V3 issue 28: NVLink 160 GB/s measured)"),
)})



# -- ch17: synchronous vs asynchronous checkpoints of the 70B model on slow storage ----------------------
CH17_MTBF_S = 3 * 3600.0   # ch17 §5: M = 3 h, the job MTBF of ~16,000 GPUs at Llama 3's interruption rate


def _ch17_save(async_save: bool):
    """ch17 §5: the 980 GB checkpoint on 10 GB/s storage, 64 writers (2 GB/s each, PCIe Gen5 copies to host)."""
    from . import storage

    return storage.checkpoint_save(_ckpt_gb(70e9), 10.0, n_writers=64, per_writer_gbs=2.0, async_save=async_save)


def _ch17_young(async_save: bool) -> tuple[float, float]:
    """(Young interval s, wasted fraction at that interval) as ch17 prints them: the waste from the course's exact
    model (``reliability.checkpoint_waste`` = 1 - goodput, Daly 2006), not the first-order δ/τ + τ/2M."""
    from . import reliability

    d = float(_ch17_save(async_save).blocking_s)
    tau = float(reliability.young_daly_interval_s(d, CH17_MTBF_S))
    return tau, float(reliability.checkpoint_waste(tau, d, CH17_MTBF_S))


FACTS.update({f.key: f for f in (
    Fact("ch17_sync_block_s", "ch17: 980 GB checkpoint written synchronously into 10 GB/s storage: training blocked (s)", "s",
         lambda: float(_ch17_save(False).blocking_s), "{:.0f} s",
         (rf"比较同步（{_NUM} ?s", rf"同步保存(?:每次)?阻塞 ?{_NUM} ?(?:秒|s)", rf"后台写入 ?{_NUM} ?s 比"),
         "labutil.storage.checkpoint_save(980 GB, 10 GB/s, 64 writers)"),
    Fact("ch17_async_block_s", "ch17: the same checkpoint saved asynchronously: training blocked for the copy to host (s)", "s",
         lambda: float(_ch17_save(True).blocking_s), "{:.2f} s",
         (rf"异步的 ?{_NUM} ?秒 ?= ?980 GB", rf"异步把 \$\\delta\$ 压到 ?{_NUM} ?秒"),
         "labutil.storage.checkpoint_save(async_save=True): 980 GB / 64 writers / 63 GB/s"),
    Fact("ch17_sync_young_min", "ch17: Young interval for the synchronous save, M = 3 h (min)", "min",
         lambda: _ch17_young(False)[0] / 60, "{:.1f} min",
         (rf"、Young ?{_NUM}，两处的浪费", rf"sync 98 s +: Young +{_NUM} min"),
         "labutil.reliability.young_daly_interval_s", rel_tol=0.03),
    Fact("ch17_sync_waste_pct", "ch17: time wasted with the synchronous save at its Young interval", "%",
         lambda: _ch17_young(False)[1], "{:.1%}", (rf"总浪费仍有 ?{_NUM} ?%", rf"sync 98 s [^\n]*?exact +{_NUM} %\)"),
         "labutil.reliability.checkpoint_waste at the Young interval (exact model, Daly 2006)", scale=100.0),
    Fact("ch17_async_young_min", "ch17: Young interval for the asynchronous save (min)", "min",
         lambda: _ch17_young(True)[0] / 60, "{:.1f} min",
         (rf"最优间隔缩到 ?{_NUM} ?分钟", rf"比 ?{_NUM} ?分钟还长", rf"async 0\.24 s +: Young +{_NUM} min"),
         "labutil.reliability.young_daly_interval_s"),
    Fact("ch17_async_waste_pct", "ch17: time wasted with the asynchronous save at its Young interval", "%",
         lambda: _ch17_young(True)[1], "{:.1%}", (rf"浪费降到 ?{_NUM} ?%", rf"async 0\.24 s [^\n]*waste +{_NUM} %"),
         "delta / (tau + delta) + tau / 2M (Young 1974)", scale=100.0),
    Fact("ch17_gpt3_async_background_s", "ch17 误区三: GPT-3's 2,450 GB written in the background into 10 GB/s storage (s)", "s",
         lambda: float(__import__("labutil.storage", fromlist=["x"]).checkpoint_save(
             _ckpt_gb(175e9), 10.0, n_writers=1024, per_writer_gbs=2.0, async_save=True).background_s), "{:.0f} s",
         (rf"后台写一次要 ?{_NUM} ?秒", rf"async into 10 GB/s, every 2 min: background {_NUM} s"),
         "labutil.storage.checkpoint_save(2,450 GB, 10 GB/s, async)"),
)})



# -- ch07: the ZeRO paper's Figure 1 (7.5B parameters, 64-way data parallel) ----------------------------
def _zero_fig1(stage: int) -> float:
    from . import memory

    return float(memory.model_states_gb(7.5e9, 64, stage).total_gb)


_ZSEQ = r"(?:120 GB、|从 120 GB 降到 )"
FACTS.update({f.key: f for f in (
    Fact("zero_fig1_stage0_gb", "ZeRO paper Fig. 1: 7.5B parameters, model states per GPU without ZeRO (GB)", "GB",
         lambda: _zero_fig1(0), "{:.0f} GB", (rf"(?m)^{_NUM} GB、31\.4 GB", rf"时从 {_NUM} GB 降到"),
         "labutil.memory.model_states_gb(7.5e9, 64, 0) (Rajbhandari et al. 2020, Fig. 1)"),
    Fact("zero_fig1_stage1_gb", "ZeRO paper Fig. 1: ZeRO-1 (GB per GPU)", "GB", lambda: _zero_fig1(1), "{:.1f} GB",
         (rf"{_ZSEQ}{_NUM}(?: GB)?、",), "labutil.memory.model_states_gb(7.5e9, 64, 1)"),
    Fact("zero_fig1_stage2_gb", "ZeRO paper Fig. 1: ZeRO-2 (GB per GPU)", "GB", lambda: _zero_fig1(2), "{:.1f} GB",
         (rf"{_ZSEQ}[\d.]+(?: GB)?、{_NUM}(?: GB)?、",), "labutil.memory.model_states_gb(7.5e9, 64, 2)"),
    Fact("zero_fig1_stage3_gb", "ZeRO paper Fig. 1: ZeRO-3 (GB per GPU)", "GB", lambda: _zero_fig1(3), "{:.2f} GB",
         (rf"{_ZSEQ}[\d.]+(?: GB)?、[\d.]+(?: GB)?、{_NUM} GB",), "labutil.memory.model_states_gb(7.5e9, 64, 3)"),
)})


# ==== review-a block: numbers that ch01 / ch03 / ch13 / ch14 state in prose (summaries) ===========
def _fabric_1024_h100():
    from . import architecture

    plan = architecture.plan_cluster(1024, server="DGX-H100", compute_switch="QM9700")
    return plan.plane("compute").switches, plan.compute_fabric.transceivers


FACTS.update({f.key: f for f in (
    Fact("fabric_1024_h100_switches",
         "Compute fabric of 1,024 H100 (128 DGX H100, 64-port QM9700, 1:1, two tiers): switches", "switches",
         lambda: float(_fabric_1024_h100()[0]), "{:.0f}",
         (r"1,?024 ?张 ?H100 ?的计算网络(?:是|需要|有)\s*{n} ?台(?:64 口 NDR )?交换机".format(n=_NUM),),
         "labutil.architecture.plan_cluster (DGX SuperPOD H100 RA Table 4: 4 SU = 32 leaf + 16 spine)", rel_tol=0.0),
    Fact("fabric_1024_h100_transceivers",
         "Compute fabric of 1,024 H100 (DGX H100 twin-port OSFP, QM9700): transceivers", "transceivers",
         lambda: float(_fabric_1024_h100()[1]), "{:,.0f}",
         (r"1,?024 ?张 ?H100 ?的计算网络(?:是|需要|有)\s*\d+ ?台交换机、{n} ?个光模块".format(n=_NUM),),
         "labutil.topology.size_fabric (twin-port OSFP at both ends: one transceiver per link)", rel_tol=0.0),
)})
# ==== end of review-a block =======================================================================


def keys() -> list[str]:
    return list(FACTS)


def fact(key: str) -> Fact:
    if key not in FACTS:
        raise validate.unknown_name("course fact", key, FACTS)
    return FACTS[key]


@lru_cache(maxsize=None)
def value(key: str) -> float:
    """The fact's value, computed once per session."""
    return float(fact(key).compute())


def text(key: str) -> str:
    """The fact as chapters print it (``fmt``), e.g. '480 GB/s', '14.2%'."""
    return fact(key).fmt.format(value(key))


def find_values(key: str, source: str) -> list[str]:
    """Every number the fact's patterns find in ``source`` (as printed)."""
    seen: dict[int, str] = {}  # one mention read by two phrases counts once
    for p in fact(key).patterns:
        for m in re.finditer(p, source):
            seen.setdefault(m.start(1), m.group(1))
    return [seen[i] for i in sorted(seen)]


def matches(key: str, printed: str) -> bool:
    """Whether a printed number is the fact rounded as printed (or within ``rel_tol`` when printed
    without decimals, for "约 480 GB/s")."""
    f = fact(key)
    x = float(printed.replace(",", ""))
    v = value(key) * f.scale
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    if abs(x - round(v, decimals)) <= 0.5 * 10 ** (-decimals) + 1e-9:
        return True
    return decimals == 0 and abs(x - v) <= f.rel_tol * abs(v)


# -- chapter facts: numbers a chapter's prose quotes from its own models (helper "chapters") -----
# Each one is computed by the same call as the chapter's cell; the pattern is the phrase the prose
# uses, so a model change that moves the number fails tests/test_consistency.py until the prose follows.

def _gpt3_time_s(gpu: str, n: int) -> float:
    from . import compute, hardware

    return float(compute.time_to_train_s(compute.train_flops(175e9, 300e9), n, hardware.gpu(gpu).bf16_tflops, 0.40))


def _profile(key: str, link_gbps: float = 400.0, **overrides):
    from . import workloads

    return workloads.profile(workloads.workload(key, **overrides), link_gbps)


def _llama3_dp():
    from . import workloads

    return workloads.llama3_405b_dp_traffic()


def _mpi_ring_eff(alpha_s: float) -> float:
    from . import comm, workloads
    from .cluster import Cluster

    bw = Cluster.system("DGX-A100").net_gbs_per_gpu
    return float(comm.scaling_efficiency(0.05, workloads.mpi_allreduce_time_s(1e6, 512, bw, alpha_s, "ring")))


def _inference(what: str) -> float:
    from . import inference

    m = "llama3-70b"
    return {"weights": lambda: inference.weights_gb(m, "bf16"),
            "kv": lambda: inference.kv_cache_gb(m, 32, 8192),
            "batch": lambda: inference.max_batch(m, "H100-SXM", 8192, tp=8)}[what]()


_CHAPTER_FACTS = (
    # ch02
    Fact("gpt3_days_1024_h100_mfu40", "GPT-3 175B (6ND, 300B tokens) on 1,024 H100 at MFU 0.40: days", "days",
         lambda: _gpt3_time_s("H100-SXM", 1024) / 86400, "{:.1f} 天",
         (rf"1,?024 ?张 ?H100 ?只要 ?{_NUM} ?天",), "labutil.compute.time_to_train_s"),
    Fact("gpt3_years_one_h100_mfu40", "GPT-3 175B on one H100 at MFU 0.40: years", "years",
         lambda: _gpt3_time_s("H100-SXM", 1) / 86400 / 365, "{:.0f} 年",
         (rf"一张 H100 要 ?{_NUM} ?年", rf"单张 H100 上要 ?{_NUM} ?年"), "labutil.compute.time_to_train_s"),
    Fact("ch02_pretrain_need_gbps", "ch02 representative pre-training job: per-GPU line rate for 90 % efficiency",
         "Gb/s", lambda: _profile("llm-pretrain").required_gbps, "{:.0f} Gb/s",
         (rf"只能走一条轨道：要 90% 效率，每卡约需 ?{_NUM} ?Gb/s",), "labutil.workloads.profile"),
    Fact("ch02_finetune_need_gbps", "ch02 representative fine-tuning job: per-GPU line rate for 90 % efficiency",
         "Gb/s", lambda: _profile("finetune").required_gbps, "{:.0f} Gb/s",
         (rf"一起干活，要 90% 效率每卡约需 ?{_NUM} ?Gb/s",), "labutil.workloads.profile"),
    Fact("ch02_pretrain_state_gpus", "Llama 3 70B full training state (16 B/param) in H100s of HBM", "GPUs",
         lambda: _profile("llm-pretrain").memory_gpus, "{:.0f}",
         (rf"相当于 ?{_NUM} ?张 H100 的显存",), "labutil.workloads.profile (memory.model_states_gb)"),
    Fact("ch02_science_budget_ms", "ch02 MPI workload: communication budget per 50 ms step at 90 % efficiency", "ms",
         lambda: _profile("science").latency_budget_ms, "{:.2f} ms",
         (rf"只有 ?{_NUM} ?ms 的通信预算",), "labutil.workloads.latency_budget_ms"),
    Fact("ch02_finetune_eff_25g_pct", "ch02 fine-tuning job at 25 Gb/s per GPU: scaling efficiency", "%",
         lambda: _profile("finetune", 25).scaling_efficiency, "{:.0%}",
         (rf"25 Gb/s 下的扩展效率只有 ?{_NUM} ?%", rf"25 → 400 Gb/s 时微调 ?{_NUM} ?%"), "labutil.workloads.profile",
         scale=100.0),
    Fact("ch02_finetune_eff_400g_pct", "ch02 fine-tuning job at 400 Gb/s per GPU: scaling efficiency", "%",
         lambda: _profile("finetune", 400).scaling_efficiency, "{:.0%}",
         (rf"到 400 Gb/s 是 ?{_NUM} ?%", rf"微调 \d+% → ?{_NUM} ?%"), "labutil.workloads.profile", scale=100.0),
    Fact("llama3_405b_step_s", "Llama 3 405B (16,384 H100, 16M tokens, 400 TFLOP/s per GPU): compute step, s", "s",
         lambda: _llama3_dp().step_s, "{:.2f} s", (rf"一步计算约 ?{_NUM} ?s",),
         "Llama 3 Table 4; labutil.workloads.llama3_405b_dp_traffic"),
    Fact("llama3_405b_grad_fp32_gb", "Llama 3 405B: FP32 gradients of one GPU's shard (405B / (TP 8 x PP 16)), GB", "GB",
         lambda: _llama3_dp().grad_fp32_gb, "{:.1f} GB", (rf"4 字节 × 3\.2B ≈ ?{_NUM} ?GB",),
         "Llama 3 §3.3.2 (FP32 reduce-scatter); labutil.workloads.llama3_405b_dp_traffic"),
    Fact("llama3_405b_fp32_allreduce_s", "Llama 3 405B: all-reduce of the FP32 gradients, one rail per DP rank, s", "s",
         lambda: _llama3_dp().allreduce_fp32_s, "{:.2f} s", (rf"按 FP32 梯度算，all-reduce 约 ?{_NUM} ?s",),
         "labutil.workloads.llama3_405b_dp_traffic"),
    Fact("llama3_405b_fp32_allreduce_pct", "Llama 3 405B: FP32 gradient all-reduce over the compute step", "%",
         lambda: _llama3_dp().allreduce_fp32_s / _llama3_dp().step_s, "{:.1%}",
         (rf"all-reduce 约 [\d.]+ ?s、占计算时间的 ?{_NUM} ?%",), "labutil.workloads.llama3_405b_dp_traffic", scale=100.0),
    Fact("llama3_405b_fsdp_s", "Llama 3 405B as run: FP32 reduce-scatter + one BF16 all-gather per step, s", "s",
         lambda: _llama3_dp().fsdp_s, "{:.2f} s", (rf"BF16 all-gather）\s*约 ?{_NUM} ?s",),
         "labutil.workloads.llama3_405b_dp_traffic"),
    Fact("llama3_405b_fsdp_pct", "Llama 3 405B as run: FSDP traffic over the compute step", "%",
         lambda: _llama3_dp().fsdp_s / _llama3_dp().step_s, "{:.1%}",
         (rf"BF16 all-gather）\s*约 [\d.]+ ?s、{_NUM} ?%",), "labutil.workloads.llama3_405b_dp_traffic", scale=100.0),
    Fact("ch02_mpi_ring_eff_ib_pct", "1 MB all-reduce over 512 ranks with ring, alpha 5 us: efficiency at a 50 ms step",
         "%", lambda: _mpi_ring_eff(5e-6), "{:.0%}", (rf"（TCP），效率 ?{_NUM} ?% 和 ?\d+ ?%",),
         "labutil.workloads.mpi_allreduce_time_s", scale=100.0),
    Fact("ch02_mpi_ring_eff_tcp_pct", "1 MB all-reduce over 512 ranks with ring, alpha 50 us: efficiency at a 50 ms step",
         "%", lambda: _mpi_ring_eff(50e-6), "{:.0%}", (rf"（TCP），效率 ?\d+ ?% 和 ?{_NUM} ?%",),
         "labutil.workloads.mpi_allreduce_time_s", scale=100.0),
    Fact("llama3_70b_weights_bf16_gb", "Llama 3 70B BF16 weights, GB", "GB", lambda: _inference("weights"), "{:.0f} GB",
         (rf"权重 ?{_NUM} ?GB，已经超过",), "labutil.inference.weights_gb"),
    Fact("llama3_70b_kv_32x8k_gb", "Llama 3 70B KV cache of 32 requests x 8K tokens, GB", "GB", lambda: _inference("kv"),
         "{:.0f} GB", (rf"KV cache 就要 ?{_NUM} ?GB",), "labutil.inference.kv_cache_gb"),
    Fact("llama3_70b_max_batch_8k_tp8", "Llama 3 70B on 8x H100 (TP 8): concurrent 8K-token requests", "requests",
         lambda: _inference("batch"), "{:.0f}", (rf"最多同时服务约 ?{_NUM} ?个",), "labutil.inference.max_batch"),
)


def _c5_tco(**kw):
    from . import cost

    return cost.tco(1024, kw.pop("years", 4), kw.pop("utilisation", 0.8), **kw)


def _c5_breakeven(price_factor: float = 1.0, **kw) -> float:
    """Break-even utilisation of 1,024 H100 against price_factor x the AWS Capacity Blocks price."""
    from . import cost

    return float(cost.breakeven_utilisation(_c5_tco(**kw), price_factor * cost.cloud_usd_per_gpu_hour("H100-SXM")))


def _c5_downtime_usd_per_year(restart_s: float) -> float:
    from . import cost, reliability

    t = _c5_tco()
    d = cost.downtime_cost(1024, reliability.llama3_failures_per_day(1024), restart_s, 1800, t.usd_per_cluster_hour / 1024)
    return float(d.usd_per_year)


def _c5_power_rank() -> float:
    from . import cost

    return cost.tco_rank(_c5_tco(), "power")


def _c5_owned30_over_cloud() -> float:
    from . import cost

    return _c5_tco(utilisation=0.3).usd_per_gpu_hour / cost.cloud_usd_per_gpu_hour("H100-SXM")


def _c5_budget(label: str, attr: str) -> float:
    from . import cost

    return float(getattr({o.label: o for o in cost.budget_comparison(50e6)}[label], attr))


_C5_BAL, _C5_TOP25 = "mid GPU + 200G IB (balanced)", "top GPU + 25GbE"
_CHAPTER_FACTS += (
    # ch05 (and ch10, which quotes the power ranking)
    Fact("tco_power_rank_1024_h100", "1,024 H100, 4 years at 0.08 USD/kWh: rank of power among the 7 TCO items", "rank",
         _c5_power_rank, "{:.0f}", (rf"电费在 ?7 ?项里排第 ?{_NUM}", rf"电费{_SEP}{{0,30}}?排在第 ?{_NUM}"),
         "labutil.cost.tco_rank"),
    Fact("ch05_kwh005_usd_per_gpu_h", "ch05: cost per GPU-hour at 0.05 USD/kWh", "USD",
         lambda: _c5_tco(usd_per_kwh=0.05).usd_per_gpu_hour, "{:.2f}", (rf"每 GPU·小时成本只从 ?{_NUM} ?变到",), "labutil.cost.tco"),
    Fact("ch05_kwh015_usd_per_gpu_h", "ch05: cost per GPU-hour at 0.15 USD/kWh", "USD",
         lambda: _c5_tco(usd_per_kwh=0.15).usd_per_gpu_hour, "{:.2f}", (rf"每 GPU·小时成本只从 [\d.]+ ?变到 ?{_NUM} ?USD",),
         "labutil.cost.tco"),
    Fact("ch05_5y_usd_per_gpu_h", "ch05: cost per GPU-hour over 5 years", "USD", lambda: _c5_tco(years=5).usd_per_gpu_hour,
         "{:.2f}", (rf"折旧年限从 5 年缩到 3 年，成本从 ?{_NUM} ?涨到",), "labutil.cost.tco"),
    Fact("ch05_3y_usd_per_gpu_h", "ch05: cost per GPU-hour over 3 years", "USD", lambda: _c5_tco(years=3).usd_per_gpu_hour,
         "{:.2f}", (rf"折旧年限从 5 年缩到 3 年，成本从 [\d.]+ ?涨到 ?{_NUM} ?USD",), "labutil.cost.tco"),
    Fact("ch05_breakeven_5y_pct", "ch05: break-even utilisation vs the cloud, 5 years", "%", lambda: _c5_breakeven(years=5),
         "{:.0%}", (rf"盈亏平衡利用率从 ?{_NUM} ?% 升到",), "labutil.cost.breakeven_utilisation", scale=100.0),
    Fact("ch05_breakeven_3y_pct", "ch05: break-even utilisation vs the cloud, 3 years", "%", lambda: _c5_breakeven(years=3),
         "{:.0%}", (rf"盈亏平衡利用率从 [\d.]+ ?% 升到 ?{_NUM} ?%",), "labutil.cost.breakeven_utilisation", scale=100.0),
    Fact("ch05_breakeven_pct", "1,024 H100 over 4 years vs AWS Capacity Blocks: break-even utilisation", "%",
         _breakeven, "{:.0%}", (rf"利用率门槛约 ?{_NUM} ?%", rf"全年平均利用率得超过约 ?{_NUM} ?%"),
         "labutil.cost.breakeven_utilisation", scale=100.0),
    Fact("ch05_breakeven_half_cloud_pct", "ch05: break-even utilisation at half the cloud price", "%",
         lambda: _c5_breakeven(0.5), "{:.0%}", (rf"保持 ?{_NUM} ?% 以上的利用率才追得上",),
         "labutil.cost.breakeven_utilisation", scale=100.0),
    Fact("ch05_breakeven_double_cloud_pct", "ch05: break-even utilisation at twice the cloud price", "%",
         lambda: _c5_breakeven(2.0), "{:.0%}", (rf"利用率只要 ?{_NUM} ?% 自建就更便宜",),
         "labutil.cost.breakeven_utilisation", scale=100.0),
    Fact("ch05_owned30_over_cloud", "ch05: owned cost per GPU-hour at 30 % utilisation over the cloud price", "x",
         _c5_owned30_over_cloud, "{:.2f}", (rf"自建的每 GPU·小时是云价格的 ?{_NUM} ?倍",), "labutil.cost.tco"),
    Fact("ch05_downtime_auto_musd", "ch05: downtime cost per year with a 10-minute automatic restart (M USD)", "M USD",
         lambda: _c5_downtime_usd_per_year(600) / 1e6, "{:.2f}", (rf"停机损失从约 ?{_NUM} ?M 涨到",),
         "labutil.cost.downtime_cost"),
    Fact("ch05_downtime_manual_musd", "ch05: downtime cost per year with a 4-hour manual restart (M USD)", "M USD",
         lambda: _c5_downtime_usd_per_year(4 * 3600) / 1e6, "{:.2f}", (rf"停机损失从约 [\d.]+ ?M 涨到约 ?{_NUM} ?M USD",),
         "labutil.cost.downtime_cost"),
    Fact("ch05_downtime_24h_share_pct", "ch05: 4 years of downtime at 24 h per failure over the capex", "%",
         lambda: 4 * _c5_downtime_usd_per_year(24 * 3600) / _c5_tco().capex.total_usd, "{:.0%}",
         (rf"4 年的停机损失会达到 capex 的约 ?{_NUM} ?%",), "labutil.cost.downtime_cost", scale=100.0),
    Fact("ch05_top25g_scaling_pct", "ch05 budget comparison: 'top GPU + 25GbE' scaling efficiency", "%",
         lambda: _c5_budget(_C5_TOP25, "scaling_efficiency"), "{:.1%}", (rf"扩展效率只有约 ?{_NUM} ?%（与第 14 章",),
         "labutil.cost.budget_comparison", scale=100.0),
    Fact("ch05_balanced_scaling_pct", "ch05 budget comparison: balanced option scaling efficiency", "%",
         lambda: _c5_budget(_C5_BAL, "scaling_efficiency"), "{:.0%}", (rf"保持了约 ?{_NUM} ?% 的扩展效率",),
         "labutil.cost.budget_comparison", scale=100.0),
    Fact("ch05_balanced_gain_pct", "ch05 budget comparison: balanced over 'top GPU + 25GbE' delivered compute, extra %", "%",
         lambda: _c5_budget(_C5_BAL, "delivered_pflops") / _c5_budget(_C5_TOP25, "delivered_pflops") - 1, "{:.0%}",
         (rf"交付算力反而高出 ?{_NUM} ?%",), "labutil.cost.budget_comparison", scale=100.0),
)


def _flash_crossover_s() -> float:
    """Sequence length at which fused (flash) attention's intensity s/b reaches the H100 BF16 ridge."""
    from . import compute, hardware

    g = hardware.gpu("H100-SXM")
    return float(compute.ridge_intensity(g.bf16_tflops, g.hbm_gbs) / (compute.attention_intensity(1024, 128, 2, "flash") / 1024))


_CHAPTER_FACTS += (
    # ch06
    Fact("ch06_flash_crossover_s", "Flash attention (BF16) crosses the H100 roofline ridge at sequence length s", "tokens",
         _flash_crossover_s, "{:.0f}", (rf"s \\gtrsim ?{_NUM}", rf"crosses the H100 ridge \d+ FLOP/B at s = {_NUM}"),
         "labutil.compute.ridge_intensity / attention_intensity (FlashAttention Theorem 2: I = s/b)", rel_tol=0.01),
)


def _pue_gap_mwh() -> float:
    from . import power

    hi, lo = power.cluster_power(1000, pue=1.58), power.cluster_power(1000, pue=1.2)
    return float(power.energy_mwh(hi.it_kw, 365, 1.58) - power.energy_mwh(lo.it_kw, 365, 1.2))


def _racks(limit_kw: float) -> float:
    from . import power

    return float(power.cluster_power(1024, rack_kw_limit=limit_kw).racks)


_CHAPTER_FACTS += (
    # ch10
    Fact("ch10_pue_gap_mwh", "1,000 GPUs (DGX H100): yearly energy at PUE 1.58 minus at PUE 1.2, MWh", "MWh",
         _pue_gap_mwh, "{:,.0f} MWh", (rf"每年约 ?{_NUM} ?MWh、",), "labutil.power.energy_mwh"),
    Fact("ch10_racks_by_space", "1,024 GPUs in DGX H100 racks limited by space only (42U): racks", "racks",
         lambda: _racks(1000.0), "{:.0f}", (rf"按空间算只要 ?{_NUM} ?个机柜",), "labutil.power.cluster_power"),
    Fact("ch10_racks_15kw", "1,024 GPUs in DGX H100 racks of 15 kW: racks", "racks", lambda: _racks(15.0), "{:.0f}",
         (rf"15 kW 的供电上限却要 ?{_NUM} ?个", rf"15 kW → ?{_NUM} ?柜"), "labutil.power.cluster_power"),
)
FACTS.update({f.key: f for f in _CHAPTER_FACTS})


# ==== rv-m1 block: numbers that ch02 / ch05 / ch06 state in prose (review of 2026-12-04) ==========
def _rvm1_gemm_memory_bound_m(n: int = 4096, k: int = 4096, gpu: str = "H100-SXM") -> float:
    """Largest m (tokens) at which a BF16 m x n x k GEMM is still below the GPU's ridge (memory-bound)."""
    import numpy as np

    from . import compute, hardware

    g = hardware.gpu(gpu)
    m = np.arange(1, n + 1)
    below = m[compute.gemm_intensity(m, n, k, 2) < compute.ridge_intensity(g.bf16_tflops, g.hbm_gbs)]
    return float(below.max() + 1)


def _rvm1_ridge(gpu: str) -> float:
    from . import compute, hardware

    g = hardware.gpu(gpu)
    return float(compute.ridge_intensity(g.bf16_tflops, g.hbm_gbs))


def _rvm1_llama3_gpu_hbm(what: str) -> float:
    """Llama 3 Table 5: GPU + HBM3 interruptions of the 54-day snapshot, per GPU (years) or per cluster (hours)."""
    from . import reliability

    ref = reliability.reference_data()["llama3"]
    counts = {r["component"]: r["count"] for r in reliability.llama3_table5()}
    gpu_days = ref["gpus"] * ref["snapshot_days"] / (counts["Faulty GPU"] + counts["GPU HBM3 Memory"])
    return gpu_days / 365 if what == "years" else 24 * gpu_days / ref["gpus"]


FACTS.update({f.key: f for f in (
    # ch02
    Fact("ch02_gpt3_years_one_a100", "GPT-3 175B (6ND, 300B tokens) on one A100-80G-SXM at MFU 0.40: years", "years",
         lambda: _gpt3_time_s("A100-80G-SXM", 1) / 86400 / 365, "{:.0f} 年", (rf"一张 A100 要 ?{_NUM} ?年",),
         "labutil.compute.time_to_train_s"),
    Fact("ch02_multimodal_files_per_s", "ch02 representative multimodal job (512 GPUs): files opened per second",
         "files/s", lambda: _profile("multimodal").files_per_s, "{:,.0f}", (rf"\*\*多模态\*\*：每秒约 ?{_NUM} ?个文件",),
         "labutil.workloads.profile", rel_tol=0.0),
    Fact("ch02_multimodal_read_gbs", "ch02 representative multimodal job (512 GPUs): aggregate read GB/s", "GB/s",
         lambda: _profile("multimodal").read_gbs, "{:.1f} GB/s", (rf"个文件、约 ?{_NUM} ?GB/s 的聚合读带宽",),
         "labutil.workloads.profile"),
    Fact("ch02_finetune_bf16_grad_gb", "ch02 fine-tuning job (Llama 3 8B): BF16 gradients synchronised per step, GB", "GB",
         lambda: _profile("finetune").workload.sync_bytes_per_step / 1e9, "{:.0f} GB",
         (rf"完整的 BF16 梯度（约 ?{_NUM} ?GB）",), "labutil.workloads.Workload.sync_bytes_per_step"),
    # ch06
    Fact("ch06_h20_ridge", "H20 BF16 roofline ridge (148 TFLOP/s dense / 4.0 TB/s), FLOP/byte", "FLOP/byte",
         lambda: _rvm1_ridge("H20"), "{:.0f}", (rf"拐点只有约 ?{_NUM} ?FLOP/byte", rf"H20 只有约 ?{_NUM}"),
         "labutil.compute.ridge_intensity (catalog H20)"),
    Fact("ch06_ascend910b_ridge", "Ascend 910B BF16 roofline ridge (313 TFLOP/s / 1.6 TB/s), FLOP/byte", "FLOP/byte",
         lambda: _rvm1_ridge("Ascend-910B"), "{:.0f}", (rf"昇腾 910B\*\*：拐点约 ?{_NUM}",),
         "labutil.compute.ridge_intensity (catalog Ascend-910B)"),
    Fact("ch06_gemm_memory_bound_m", "BF16 GEMM m x 4096 x 4096 on H100: m below which it is memory-bound", "tokens",
         _rvm1_gemm_memory_bound_m, "{:.0f}", (r"解出 \$m \\approx " + _NUM + r"\$",),
         "labutil.compute.gemm_intensity / ridge_intensity", rel_tol=0.01),
    Fact("ch06_llama3_gpu_hbm_years", "Llama 3 405B: one GPU/HBM3-caused interruption per this many GPU-years", "years",
         lambda: _rvm1_llama3_gpu_hbm("years"), "{:.0f} 年", (rf"单看一张卡，平均 ?{_NUM} ?年",),
         "Llama 3 Table 5 via labutil.reliability.llama3_table5"),
    Fact("ch06_llama3_gpu_hbm_hours", "Llama 3 405B on 16,384 H100: one GPU/HBM3-caused interruption every h", "h",
         lambda: _rvm1_llama3_gpu_hbm("hours"), "{:.0f} h", (rf"一起跑，就是约每 ?{_NUM} ?小时一次",),
         "Llama 3 Table 5 via labutil.reliability.llama3_table5"),
)})
# ==== end of rv-m1 block ===========================================================================

# -- rv-m2: ch09 node design and ch10 power, the numbers their prose quotes from cell outputs -----------------
def _rvm2_allreduce_ms(which: str, size_bytes: float = 1e9) -> float:
    """ch09 section 4: 8-GPU all-reduce time on the course's cluster model (H100 / H800 NVLink, 8 GPUs on PCIe Gen5)."""
    from . import links
    from .cluster import Cluster

    pcie5 = links.pcie_gbs("gen5", 16)
    c = {"h100": Cluster.system("DGX-H100"), "h800": Cluster.system("HGX-H800"),
         "pcie": Cluster.from_links(nic_gbps=400, nics_per_node=8, scaleup_gbs=pcie5, scaleup_ring_busbw_gbs=pcie5,
                                    name="8 GPUs on PCIe Gen5")}[which]
    return float(c.collective_time_s("all_reduce", size_bytes, 8))


_RVM2_TP_BYTES = 4096 * 1 * 8192 * 2       # ch09 误区三: s * b * h BF16 elements (Llama 2 70B, seq 4096, micro-batch 1)


def _rvm2_gen(which: str):
    from . import power

    if which == "nvl72":
        return power.rack_scale_power(1024, "GB200-NVL72", pue=1.0)
    return power.cluster_power(1024, server="DGX-B200", pue=1.0, rack_kw_limit=60.0)


def _rvm2_nvl72():
    from . import power

    return power.rack_scale_system("GB200-NVL72")


FACTS.update({f.key: f for f in (
    # ch09
    Fact("ch09_h800_over_h100_allreduce", "ch09: 8-GPU 1 GB all-reduce, H800 NVLink time over H100 NVLink time", "x",
         lambda: _rvm2_allreduce_ms("h800") / _rvm2_allreduce_ms("h100"), "{:.1f}",
         (rf"H800 的节点内通信比 H100 慢 ?{_NUM} ?倍", rf"slower than H100 NVLink: H800 x{_NUM}"),
         "labutil.cluster.Cluster.collective_time_s (busbw 480 / 215 GB/s, nccl-tests #212, nccl #1374)"),
    Fact("ch09_pcie_over_h100_allreduce", "ch09: 8-GPU 1 GB all-reduce, PCIe Gen5 (optimistic) time over H100 NVLink", "x",
         lambda: _rvm2_allreduce_ms("pcie") / _rvm2_allreduce_ms("h100"), "{:.1f}",
         (rf"PCIe 比 H100 慢 ?{_NUM} ?倍", rf"H800 x[\d.]+, PCIe x{_NUM}"), "labutil.cluster.Cluster.collective_time_s"),
    Fact("ch09_tp_pcie_over_nvlink", "ch09 误区三: TP all-reduce of 67 MB, PCIe Gen5 time over H100 NVLink time", "x",
         lambda: _rvm2_allreduce_ms("pcie", _RVM2_TP_BYTES) / _rvm2_allreduce_ms("h100", _RVM2_TP_BYTES), "{:.1f}",
         (rf"这是约 ?{_NUM} ?倍的通信时间", rf"PCIe / NVLink: x{_NUM} the TP"), "labutil.cluster.Cluster.collective_time_s"),
    Fact("ch09_b200_ram_to_hbm", "ch09: DGX B200 host RAM per GPU over B200 HBM (256 / 180 GB)", "x",
         lambda: float(__import__("labutil.node", fromlist=["x"]).server_ratios("DGX-B200")["ram_to_hbm"]), "{:.1f}",
         (rf"主机内存只剩显存的 ?{_NUM} ?倍",), "labutil.node.server_ratios (servers.toml DGX-B200, gpus.toml B200)"),
    Fact("ch09_gb200_cores_per_gpu", "ch09: GB200 NVL72 Grace cores per GPU (2,592 / 72)", "cores",
         lambda: _rvm2_nvl72().cores_per_gpu, "{:.0f}",
         (rf"每卡 ?{_NUM} ?个 Arm 核", rf"GPUs -> {_NUM} cores and"), "labutil.power.rack_scale_system (facility.toml)"),
    Fact("ch09_gb200_ram_per_gpu", "ch09: GB200 NVL72 LPDDR5X per GPU (17,280 GB / 72)", "GB",
         lambda: _rvm2_nvl72().cpu_memory_gb_per_gpu, "{:.0f}",
         (rf"Arm 核、{_NUM} ?GB 内存", rf"cores and {_NUM} GB per GPU"), "labutil.power.rack_scale_system (facility.toml)"),
    # ch10
    Fact("ch10_h100_it_mw_1024", "ch10: 1,024 GPUs in DGX H100 (41 kW racks): IT power of the servers (MW)", "MW",
         lambda: float(__import__("labutil.power", fromlist=["x"]).cluster_power(1024, pue=1.0, rack_kw_limit=41.0).it_mw),
         "{:.2f}", (rf"1,024 卡的 IT 负载从 ?{_NUM} ?MW 涨到",), "labutil.power.cluster_power"),
    Fact("ch10_h100_kw_per_gpu", "ch10: DGX H100 IT kW per GPU (10.2 / 8)", "kW",
         lambda: float(__import__("labutil.power", fromlist=["x"]).server_power_kw("DGX-H100")) / 8, "{:.2f}",
         (rf"从约 ?{_NUM} ?kW 到约", rf"41 kW rack[^\n]*= {_NUM} kW per GPU"), "labutil.power.server_power_kw"),
    Fact("ch10_b200_server_kw", "ch10: DGX B200 maximum input power (kW)", "kW",
         lambda: float(__import__("labutil.power", fromlist=["x"]).server_power_kw("DGX-B200")), "{:.1f}",
         (rf"整机最大 ?{_NUM} ?kW", rf"DGX B200 每台 ?{_NUM} ?kW", rf"{_NUM} kW 一台", rf"单柜上限低于 ?{_NUM} ?kW"),
         "labutil.power.server_power_kw (DGX B200 User Guide: 14.3 kW max)"),
    Fact("ch10_b200_rack_kw", "ch10: 4 DGX B200 in a 60 kW rack (kW)", "kW", lambda: float(_rvm2_gen("b200").rack_kw), "{:.1f}",
         (rf"DGX B200 每柜 ?{_NUM} ?kW", rf"每柜 4 台约 ?{_NUM} ?kW", rf"60 kW rack *: +\d+ racks x +{_NUM} kW"),
         "labutil.power.cluster_power(server='DGX-B200', rack_kw_limit=60)", rel_tol=0.01),
    Fact("ch10_b200_it_mw_1024", "ch10: 1,024 GPUs in DGX B200: IT power of the servers (MW)", "MW",
         lambda: float(_rvm2_gen("b200").it_mw), "{:.2f}", (rf"{_NUM} ?MW（B200）",), "labutil.power.cluster_power"),
    Fact("ch10_b200_kw_per_gpu", "ch10: DGX B200 IT kW per GPU (14.3 / 8)", "kW",
         lambda: float(_rvm2_gen("b200").it_kw) / 1024, "{:.2f}",
         (rf"到约 ?{_NUM} ?kW，再到 NVL72", rf"60 kW rack[^\n]*= {_NUM} kW per GPU"), "labutil.power.cluster_power"),
    Fact("ch10_nvl72_rack_kw", "ch10: GB200 NVL72 planning power per rack (SuperPOD GB200 RA: 1.2 MW per SU of 8 racks)", "kW",
         lambda: _rvm2_nvl72().rack_kw, "{:.0f}",
         (rf"即每柜 ?{_NUM} ?kW", rf"但每柜 ?{_NUM} ?kW 远超", rf"规划按每柜 ?{_NUM} ?kW", rf"unit\) *: +\d+ racks x +{_NUM} kW"),
         "labutil.power.rack_scale_system (facility.toml [rack_scale])"),
    Fact("ch10_nvl72_racks_1024", "ch10: racks of GB200 NVL72 for 1,024 GPUs", "racks", lambda: float(_rvm2_gen("nvl72").racks),
         "{:.0f}", (rf"NVL72 只要 ?{_NUM} ?个机柜", rf"the rack is the unit\) *: +{_NUM} racks"), "labutil.power.rack_scale_power",
         rel_tol=0.0),
    Fact("ch10_nvl72_gpus_installed_1024", "ch10: GPUs installed when 1,024 are bought as whole NVL72 racks", "GPUs",
         lambda: float(_rvm2_gen("nvl72").gpus_installed), "{:,.0f}", (rf"装了 ?{_NUM} ?张卡", rf"\({_NUM} GPUs installed\)"),
         "labutil.power.rack_scale_power", rel_tol=0.0),
    Fact("ch10_nvl72_it_mw_1024", "ch10: 1,024 GPUs as GB200 NVL72 racks: IT power (MW)", "MW",
         lambda: float(_rvm2_gen("nvl72").it_mw), "{:.2f}", (rf"{_NUM} ?MW（NVL72）",), "labutil.power.rack_scale_power"),
    Fact("ch10_nvl72_kw_per_gpu", "ch10: GB200 NVL72 IT kW per installed GPU (150 / 72)", "kW",
         lambda: _rvm2_nvl72().kw_per_gpu, "{:.2f}", (rf"NVL72 的约 ?{_NUM} ?kW", rf"unit\)[^\n]*= {_NUM} kW per GPU"),
         "labutil.power.rack_scale_system"),
)})

# ====================================================================================================
# ch25 (推理集群), ch27 (可靠性工程), ch28 (故障定位): the numbers their prose quotes from their own
# cells (helper rv-m6). Each is one call into labutil.inference / labutil.reliability /
# labutil.troubleshoot, read in the chapters' own phrasing.
# ====================================================================================================
@lru_cache(maxsize=None)
def _ch25() -> dict:
    from . import hardware, inference, models

    I = inference
    st = I.decode_step("llama3-8b", "H100-SXM", 1, 1024)
    h100 = hardware.gpu("H100-SXM")
    rows = {(p, tp): I.llm_replica("llama3-70b", "H100-SXM", p, tp, 1024, 256, batch=64)
            for p, tp in (("bf16", 4), ("fp8", 4), ("bf16", 8))}
    plan = I.llm_gpus_for_slo(20, 20_000, "llama3-70b", "H100-SXM", "bf16", tp=4, batch=64)

    def cv_gpus(gpu, model, batch=1):
        return I.cv_cluster_plan(gpu, 1000, 100, batch, model=model).gpus

    gf, n = I.cv_model("vit_h_14_518")
    s_ms = float(I.cv_batch_ms("L40S", 1, gflops_per_image=gf, params=n))
    naive = I.gpus_for_slo(1000, 100, s_ms)
    pooled = I.gpus_for_slo(1000, 100, s_ms, routing="pooled")
    mb_1k = I.llm_replica("llama3-70b", "H100-SXM", "bf16", 4, 1024, 256, batch=1).max_batch
    mb_8k = {g: I.llm_replica("llama3-70b", g, "bf16", 4, 7936, 256, batch=1).max_batch for g in ("H100-SXM", "H200-SXM")}
    tpot = {g: float(I.decode_step("llama3-8b", g, 1, 1024).time_s) for g in ("L4", "L40S", "H100-SXM", "H200-SXM")}
    l4, l40s = hardware.gpu("L4"), hardware.gpu("L40S")
    r = rows[("bf16", 4)]
    kv_req = I.kv_bytes_per_token("llama3-70b") * 1024
    from dataclasses import replace as _replace
    ds = models.transformer("deepseek-v3")
    ds_mha = float(I.kv_bytes_per_token(_replace(ds, kv_lora_rank=0)))
    ds_kv = float(I.kv_bytes_per_token(ds))
    vit_h = I.cv_model("vit_h_14_518")
    return {
        "peak_share_pct": 100 * float(st.flops / st.time_s / 1e12 / h100.bf16_tflops),
        "w8_gb": float(I.weights_gb("llama3-8b")),
        "w70_int4_gb": float(I.weights_gb("llama3-70b", "int4")),
        "l40s_int4_kv_gb": float(I.kv_budget_gb("llama3-70b", "L40S", "int4")),
        "w8_int4_gb": float(I.weights_gb("llama3-8b", "int4")),
        "tpot_bf16_tp4": rows[("bf16", 4)].tpot_ms, "tpot_fp8_tp4": rows[("fp8", 4)].tpot_ms,
        "tpot_bf16_tp8": rows[("bf16", 8)].tpot_ms,
        "mb_bf16_tp4": rows[("bf16", 4)].max_batch, "mb_fp8_tp4": rows[("fp8", 4)].max_batch,
        "tok_gpu_tp4": rows[("bf16", 4)].tokens_per_s / 4, "tok_gpu_tp8": rows[("bf16", 8)].tokens_per_s / 8,
        "plan_util_pct": 100 * plan.utilization, "plan_spare_pct": 100 * (1 - plan.utilization),
        "vith_l40s": cv_gpus("L40S", "vit_h_14_518"), "vith_h100": cv_gpus("H100-SXM", "vit_h_14_518"),
        "vith_l4": cv_gpus("L4", "vit_h_14_518"),
        "vith_l4_ms": float(I.cv_batch_ms("L4", 1, gflops_per_image=vit_h[0], params=vit_h[1])),
        "vitl_l40s_b1": cv_gpus("L40S", "vit_l_16", 1), "vitl_l40s_b8": cv_gpus("L40S", "vit_l_16", 8),
        "mb_1k": mb_1k, "mb_8k_h100": mb_8k["H100-SXM"], "mb_8k_h200": mb_8k["H200-SXM"],
        "oversub_8k": 256 / mb_8k["H100-SXM"], "h200_gain": mb_8k["H200-SXM"] / mb_8k["H100-SXM"],
        "w70_tp4_gb": float(I.weights_gb("llama3-70b", "bf16", 4)),
        "h200_tpot_cut_pct": 100 * (1 - tpot["H200-SXM"] / tpot["H100-SXM"]),
        "l40s_l4_peak": l40s.bf16_tflops / l4.bf16_tflops, "l40s_l4_bw": l40s.hbm_gbs / l4.hbm_gbs,
        "l40s_l4_tpot": tpot["L4"] / tpot["L40S"],
        "vith_l40s_ms": s_ms, "vith_l40s_qps": 1e3 / s_ms, "naive": naive.naive_replicas,
        "naive_util_pct": 100 * 1000 * s_ms / 1e3 / naive.naive_replicas, "slo_gpus": naive.replicas,
        "slo_util_pct": 100 * 1000 * s_ms / 1e3 / naive.replicas, "pooled": pooled.gpus,
        "routing_saves": naive.replicas - pooled.gpus,
        "kv_req_mb": kv_req / 1e6, "kv_gbps": kv_req * 2 * r.requests_per_s * 8 / 1e9,
        "ds_kv_kb": ds_kv / 1e3, "ds_mha_mb": ds_mha / 1e6, "ds_mla_ratio": ds_mha / ds_kv,
        "w405_bf16_gb": float(I.weights_gb("llama3-405b", "bf16")),
        "w405_tp8_gb": float(I.weights_gb("llama3-405b", "bf16", 8)),
        "w405_tp8pp2_gb": float(I.weights_gb("llama3-405b", "bf16", 8, 2)),
        "ds_fp8_tp8_gb": float(I.weights_gb("deepseek-v3", "fp8", 8)),
        "ds_h200_kv_gb": float(I.kv_budget_gb("deepseek-v3", "H200-SXM", "fp8", 8)),
        "ds_active_b": ds.active_params() / 1e9,
        "ds_b1_gb": float(I.decode_weight_bytes(ds, 1, "fp8")) / 1e9,
        "ds_b64_experts": float(I.experts_touched(ds, 64)),
        "ds_b64_gb": float(I.decode_weight_bytes(ds, 64, "fp8")) / 1e9,
        "ds_b256_per_tok_gb": float(I.decode_weight_bytes(ds, 256, "fp8")) / 256 / 1e9,
    }


def _f25(key: str, desc: str, unit: str, fmt: str, *patterns: str, scale: float = 1.0, rel_tol: float = 0.02) -> Fact:
    return Fact(f"ch25_{key}", desc, unit, lambda: float(_ch25()[key]), fmt, patterns,
                "labutil.inference (ch25 cells)", scale=scale, rel_tol=rel_tol)


_RV_FACTS = (
    _f25("peak_share_pct", "Llama-3-8B decode at batch 1 on H100: share of the BF16 peak", "%", "{:.2f}%",
         rf"峰值算力的约 ?{_NUM} ?%"),
    _f25("w8_gb", "Llama-3-8B BF16 weights, GB", "GB", "{:.0f} GB", rf"把 ?{_NUM} ?GB ?权重"),
    _f25("w70_int4_gb", "Llama-3-70B INT4 weights, GB", "GB", "{:.0f} GB", rf"INT4 量化后 ?{_NUM} ?GB"),
    _f25("l40s_int4_kv_gb", "Llama-3-70B INT4 on one L40S at mem_util 0.9: GB left for KV", "GB", "{:.1f} GB",
         rf"只剩 ?{_NUM} ?GB 给 KV"),
    _f25("w8_int4_gb", "Llama-3-8B INT4 weights, GB", "GB", "{:.0f} GB", rf"Llama-3-8B 的 INT4 权重只有 ?{_NUM} ?GB"),
    _f25("tpot_bf16_tp4", "Llama-3-70B BF16 TP=4 batch 64: TPOT, ms", "ms", "{:.1f} ms", rf"TPOT 从约 ?{_NUM} ?ms 降到"),
    _f25("tpot_fp8_tp4", "Llama-3-70B FP8 TP=4 batch 64: TPOT, ms", "ms", "{:.1f} ms", rf"降到约 ?{_NUM} ?ms，并发上限"),
    _f25("tpot_bf16_tp8", "Llama-3-70B BF16 TP=8 batch 64: TPOT, ms", "ms", "{:.1f} ms", rf"TPOT 同样降到约 ?{_NUM} ?ms"),
    _f25("mb_bf16_tp4", "Llama-3-70B BF16 TP=4, 1280-token sequences: max concurrent", "seqs", "{:.0f}",
         rf"并发上限从 ?{_NUM} ?升到"),
    _f25("mb_fp8_tp4", "Llama-3-70B FP8 TP=4, 1280-token sequences: max concurrent", "seqs", "{:.0f}",
         rf"并发上限从 ?\d+ ?升到 ?{_NUM}"),
    _f25("tok_gpu_tp4", "Llama-3-70B BF16 TP=4 batch 64: decode tokens/s per GPU", "tokens/s", "{:.0f}",
         rf"（{_NUM} ?→ ?\d+ tokens/s）"),
    _f25("tok_gpu_tp8", "Llama-3-70B BF16 TP=8 batch 64: decode tokens/s per GPU", "tokens/s", "{:.0f}",
         rf"（\d+ ?→ ?{_NUM} tokens/s）"),
    _f25("plan_util_pct", "Llama-3-70B, 20 req/s, e2e P99 <= 20 s: utilisation of the planned replicas", "%", "{:.0f}%",
         rf"8 张卡，利用率约 ?{_NUM} ?%"),
    _f25("plan_spare_pct", "Llama-3-70B, 20 req/s plan: headroom left for queueing", "%", "{:.0f}%",
         rf"剩下的约 ?{_NUM} ?% 不是浪费"),
    _f25("vith_l40s", "ViT-H/14 1000 req/s P99 100 ms on L40S, random routing: GPUs", "GPUs", "{:.0f}",
         rf"L40S 要 ?{_NUM} ?张"),
    _f25("vith_h100", "ViT-H/14 1000 req/s P99 100 ms on H100, random routing: GPUs", "GPUs", "{:.0f}",
         rf"H100 要 ?{_NUM} ?张"),
    _f25("vith_l4", "ViT-H/14 1000 req/s P99 100 ms on L4, random routing: GPUs", "GPUs", "{:.0f}",
         rf"随机路由下要 ?{_NUM} ?张才能"),
    _f25("vith_l4_ms", "ViT-H/14 (518 px) on L4 at batch 1: ms per image", "ms", "{:.1f} ms",
         rf"L4 单张图就要 ?{_NUM} ?ms"),
    _f25("vitl_l40s_b1", "ViT-L/16 1000 req/s on L40S at batch 1: GPUs", "GPUs", "{:.0f}",
         rf"ViT-L 在 L40S 上从 ?{_NUM} ?张"),
    _f25("vitl_l40s_b8", "ViT-L/16 1000 req/s on L40S at batch 8: GPUs", "GPUs", "{:.0f}",
         rf"ViT-L 在 L40S 上从 ?\d+ ?张降到 ?{_NUM} ?张"),
    _f25("mb_8k_h100", "Llama-3-70B BF16 TP=4 on H100: concurrent 8K-token sequences", "seqs", "{:.0f}",
         rf"KV cache 只装得下 ?{_NUM} ?条序列", rf"(?<![\d,.]){_NUM} ?条变成 ?\d+ ?条"),
    _f25("oversub_8k", "--max-num-seqs 256 over the 8K-token capacity of Llama-3-70B TP=4 on H100", "x", "{:.1f}x",
         rf"256 的并发上限是它的 ?{_NUM} ?倍"),
    _f25("mb_8k_h200", "Llama-3-70B BF16 TP=4 on H200: concurrent 8K-token sequences", "seqs", "{:.0f}",
         rf"条变成 ?{_NUM} ?条，约"),
    _f25("h200_gain", "H200 over H100: concurrent 8K-token sequences of Llama-3-70B TP=4", "x", "{:.1f}x",
         rf"约 ?{_NUM} ?倍的并发"),
    _f25("w70_tp4_gb", "Llama-3-70B BF16 weights per GPU at TP=4, GB", "GB", "{:.0f} GB", rf"每卡扣掉约 ?{_NUM} ?GB 权重"),
    _f25("h200_tpot_cut_pct", "Llama-3-8B batch 1: TPOT on H200 shorter than on H100 by", "%", "{:.0f}%",
         rf"H200 的 TPOT 短了 ?{_NUM} ?%"),
    _f25("l40s_l4_peak", "L40S / L4 BF16 dense peak", "x", "{:.0f}x", rf"L40S 的峰值是 L4 的 ?{_NUM} ?倍"),
    _f25("l40s_l4_bw", "L40S / L4 memory bandwidth", "x", "{:.1f}x", rf"带宽是 ?{_NUM} ?倍，TPOT"),
    _f25("l40s_l4_tpot", "Llama-3-8B batch 1: TPOT on L4 / TPOT on L40S", "x", "{:.1f}x", rf"TPOT 也正好快约 ?{_NUM} ?倍"),
    _f25("vith_l40s_ms", "ViT-H/14 (518 px) on L40S at batch 1: ms per image", "ms", "{:.1f} ms",
         rf"在 L40S 上每张图约 ?{_NUM} ?ms"),
    _f25("vith_l40s_qps", "ViT-H/14 on L40S: capacity per GPU, req/s", "req/s", "{:.0f}",
         rf"单卡容量约 ?{_NUM} ?req/s", rf"「1000 ÷ {_NUM}」"),
    _f25("naive", "1000 req/s / per-GPU capacity (ViT-H/14, L40S), rounded up", "GPUs", "{:.0f}",
         rf"」给出 ?{_NUM} ?张卡", rf"(?<![\d.]){_NUM} ?张卡时每张卡"),
    _f25("naive_util_pct", "ViT-H/14 on L40S at the naive GPU count: utilisation", "%", "{:.0f}%",
         rf"张卡时每张卡 ?{_NUM} ?% ?忙"),
    _f25("slo_gpus", "ViT-H/14 1000 req/s P99 <= 100 ms on L40S, random routing: GPUs", "GPUs", "{:.0f}",
         rf"要 ?{_NUM} ?张（利用率约"),
    _f25("slo_util_pct", "ViT-H/14 on L40S at the P99 GPU count: utilisation", "%", "{:.0f}%",
         rf"张（利用率约 ?{_NUM} ?%）"),
    _f25("pooled", "ViT-H/14 1000 req/s P99 <= 100 ms on L40S, pooled routing: GPUs", "GPUs", "{:.0f}",
         rf"只要 ?{_NUM} ?张——路由"),
    _f25("routing_saves", "GPUs saved by pooled over random routing (ViT-H/14, L40S)", "GPUs", "{:.0f}",
         rf"路由策略本身就值 ?{_NUM} ?张卡", rf"多出来的 ?{_NUM} ?张不是浪费"),
    _f25("kv_req_mb", "Llama-3-70B BF16 KV of one 1024-token prompt, MB", "MB", "{:.0f} MB", rf"KV 就有约 ?{_NUM} ?MB"),
    _f25("kv_gbps", "KV traffic prefill -> decode for one 8-GPU server's prompts, Gb/s", "Gb/s", "{:.0f} Gb/s",
         rf"要持续搬约 ?{_NUM} ?Gb/s"),
    _f25("ds_kv_kb", "DeepSeek-V3 MLA KV per token (BF16), kB", "kB", "{:.1f} kB", rf"每个 token 的 KV 却只有 ?{_NUM} ?kB"),
    _f25("ds_mha_mb", "DeepSeek-V3 KV per token if every head were cached, MB", "MB", "{:.2f} MB",
         rf"缓存全部 128 个头，每个 token 要 ?{_NUM} ?MB"),
    _f25("ds_mla_ratio", "DeepSeek-V3: all-head KV / MLA latent", "x", "{:.0f}x", rf"是 MLA 的 ?{_NUM} ?倍"),
    _f25("w405_bf16_gb", "Llama-3.1-405B BF16 weights, GB", "GB", "{:.0f} GB", rf"BF16 权重约 ?{_NUM} ?GB。TP"),
    _f25("w405_tp8_gb", "Llama-3.1-405B BF16 weights per GPU at TP=8, GB", "GB", "{:.0f} GB",
         rf"TP=8 时每卡 ?{_NUM} ?GB 权重"),
    _f25("w405_tp8pp2_gb", "Llama-3.1-405B BF16 weights per GPU at TP=8 x PP=2 (= FP8 at TP=8), GB", "GB", "{:.0f} GB",
         rf"单机都是每卡 ?{_NUM} ?GB"),
    _f25("ds_fp8_tp8_gb", "DeepSeek-V3 FP8 weights per GPU at TP=8, GB", "GB", "{:.0f} GB", rf"FP8 权重每卡 ?{_NUM} ?GB"),
    _f25("ds_h200_kv_gb", "DeepSeek-V3 FP8 TP=8 on H200: GB per GPU left for KV", "GB", "{:.0f} GB",
         rf"每卡还留 ?{_NUM} ?GB 给 KV"),
    _f25("ds_active_b", "DeepSeek-V3 active parameters per token, billions", "B", "{:.1f}B", rf"只激活约 ?{_NUM} ?B"),
    _f25("ds_b1_gb", "DeepSeek-V3 FP8 decode at batch 1: weights read per step, GB", "GB", "{:.0f} GB",
         rf"只读激活的 ?{_NUM} ?GB"),
    _f25("ds_b64_experts", "DeepSeek-V3 decode at batch 64: routed experts touched per layer", "experts", "{:.0f}",
         rf"一步就要碰 ?{_NUM} ?个专家"),
    _f25("ds_b64_gb", "DeepSeek-V3 FP8 decode at batch 64: weights read per step, GB", "GB", "{:.0f} GB",
         rf"个专家、读 ?{_NUM} ?GB"),
    _f25("ds_b256_per_tok_gb", "DeepSeek-V3 FP8 decode at batch 256: weight bytes per token, GB", "GB", "{:.1f} GB",
         rf"batch 256 时每 token ?{_NUM} ?GB"),
)
_more("llama3_70b_weights_bf16_gb", rf"Llama-3-70B 的 BF16 权重 ?{_NUM} ?GB")
FACTS.update({f.key: f for f in _RV_FACTS})


@lru_cache(maxsize=None)
def _ch27() -> dict:
    from . import reliability as R
    from .units import SECONDS_PER_DAY

    f = R.llama3_failures_per_day(16_384)
    m = SECONDS_PER_DAY / f
    k = R.reference_data()["kokolis2024"]
    opt = R.reference_data()["opt175b"]
    br = R.reference_data()["byterobust2025"]
    f_br = R.llama3_failures_per_day(br["gpus"])
    young30 = R.time_breakdown(f, 600, R.young_daly_interval_s(30, m), 30)
    b5, b480 = R.time_breakdown(f, 600, 300, 120), R.time_breakdown(f, 600, 480 * 60, 120)
    hw = sum(r["count"] for r in R.llama3_table5() if r["part"] in ("gpu", "host"))
    drains = f * hw / sum(r["count"] for r in R.llama3_table5())

    def spare_pct(days):
        mean = drains * days
        return 100 * (mean + 3 * mean ** 0.5) / 2048

    return {
        "opt_ratio": R.opt175b_restarts_per_day() / R.llama3_failures_per_day(opt["gpus"]),
        "rsc_ratio": k["rsc1_failures_per_1000_node_days"] / k["rsc2_failures_per_1000_node_days"],
        "young30_useful_pct": 100 * young30["useful"], "young30_lost_pct": 100 * (1 - young30["useful"]),
        "young30_restart_pct": 100 * young30["restart"], "young30_ckpt_pct": 100 * young30["checkpoint"],
        "young30_rework_pct": 100 * young30["rework"],
        "r90_30s_min": R.max_restart_s_for_goodput(0.90, f, 30) / 60,
        "manual_goodput_pct": 100 * R.optimal_goodput(f, 3 * 3600, 30),
        "br_r_5s_min": R.max_restart_s_for_goodput(br["ettr"], f_br, 5) / 60,
        "br_r_1s_min": R.max_restart_s_for_goodput(br["ettr"], f_br, 1) / 60,
        "every5_goodput_pct": 100 * b5["useful"], "every5_ckpt_pct": 100 * b5["checkpoint"],
        "young120_goodput_pct": 100 * float(R.goodput(f, 600, 34 * 60, 120)),
        "every480_goodput_pct": 100 * b480["useful"], "every480_rework_pct": 100 * b480["rework"],
        "every480_complete_pct": 100 * R.interval_completion_probability(f, 480 * 60, 120),
        "every480_lost_h": R.mean_rework_s(f, 480 * 60, 120) / 3600,
        "spare_1d_pct": spare_pct(1.0), "spare_7d_pct": spare_pct(7.0),
    }



def _f27(key: str, desc: str, unit: str, fmt: str, *patterns: str, scale: float = 1.0, rel_tol: float = 0.02) -> Fact:
    return Fact(f"ch27_{key}", desc, unit, lambda: float(_ch27()[key]), fmt, patterns,
                "labutil.reliability (ch27 cells)", scale=scale, rel_tol=rel_tol)


_RV_FACTS_27 = (
    _f27("opt_ratio", "OPT-175B restarts per GPU over the Llama 3-calibrated rate at 992 GPUs", "x", "{:.1f}x",
         rf"OPT 每卡的重启率是 Llama 3 校准值的 ?{_NUM} ?倍", rf"OPT saw {_NUM}x as many per GPU"),
    _f27("rsc_ratio", "Kokolis et al.: RSC-1 over RSC-2 failure rate", "x", "{:.1f}x", rf"RSC-2 之间也差了 ?{_NUM} ?倍"),
    _f27("young30_useful_pct", "Llama 3 rate, R 10 min, delta 30 s, Young interval: useful share", "%", "{:.0f}%",
         rf"约 ?{_NUM} ?% 在训练"),
    _f27("young30_lost_pct", "Llama 3 rate, R 10 min, delta 30 s, Young interval: share lost", "%", "{:.0f}%",
         rf"剩下的约 ?{_NUM} ?% 里"),
    _f27("young30_restart_pct", "... share spent restarting", "%", "{:.1f}%", rf"重启（{_NUM} ?%）"),
    _f27("young30_ckpt_pct", "... share spent writing checkpoints", "%", "{:.1f}%", rf"写检查点（{_NUM} ?%）"),
    _f27("young30_rework_pct", "... share spent redoing lost work", "%", "{:.1f}%", rf"重算（{_NUM} ?%）"),
    _f27("r90_30s_min", "Llama 3 rate, 30 s checkpoints: longest restart for 90 % goodput, min", "min", "{:.1f} min",
         rf"重启也必须在 ?{_NUM} ?分钟以内"),
    _f27("manual_goodput_pct", "Llama 3 rate, 3 h manual recovery, 30 s checkpoints: goodput", "%", "{:.0f}%",
         rf"goodput 只剩 ?{_NUM} ?%"),
    _f27("br_r_5s_min", "9,600 GPUs at the Llama 3 rate, 5 s checkpoints: longest restart for 97 %", "min", "{:.1f} min",
         rf"重启在 ?{_NUM} ?分钟以内"),
    _f27("br_r_1s_min", "9,600 GPUs at the Llama 3 rate, 1 s checkpoints: longest restart for 97 %", "min", "{:.1f} min",
         rf"检查点 1 秒、重启 ?{_NUM} ?分钟"),
    _f27("every5_goodput_pct", "Llama 3 rate, 120 s checkpoint every 5 min: goodput", "%", "{:.0f}%",
         rf"每 5 分钟写一次，goodput 只有 ?{_NUM} ?%"),
    _f27("young120_goodput_pct", "Llama 3 rate, 120 s checkpoint near the optimum (34 min): goodput", "%", "{:.0f}%",
         rf"最优间隔附近的约 ?{_NUM} ?%"),
    _f27("every5_ckpt_pct", "Llama 3 rate, 120 s checkpoint every 5 min: share writing checkpoints", "%", "{:.0f}%",
         rf"墙钟时间的 ?{_NUM} ?% 花在写检查点上"),
    _f27("every480_goodput_pct", "Llama 3 rate, 120 s checkpoint every 8 h: goodput", "%", "{:.0f}%",
         rf"间隔拉到 8 小时又跌到 ?{_NUM} ?%"),
    _f27("every480_complete_pct", "Llama 3 rate: probability an 8 h interval completes without a failure", "%", "{:.0f}%",
         rf"跑完的概率只有 ?{_NUM} ?%"),
    _f27("every480_lost_h", "Llama 3 rate, 8 h intervals: work a failure throws away on average, h", "h", "{:.1f} h",
         rf"每次故障平均扔掉 ?{_NUM} ?小时"),
    _f27("every480_rework_pct", "Llama 3 rate, 8 h intervals: share of wall-clock redoing lost work", "%", "{:.0f}%",
         rf"重算吃掉了 ?{_NUM} ?% 的时间"),
    _f27("spare_1d_pct", "Spare pool for 2,048 nodes at 1-day repairs (L + 3 sqrt L), share of the cluster", "%", "{:.1f}%",
         rf"备用池就要从 ?{_NUM} ?% 涨到"),
    _f27("spare_7d_pct", "Spare pool for 2,048 nodes at 7-day repairs (L + 3 sqrt L), share of the cluster", "%", "{:.1f}%",
         rf"% 涨到 ?{_NUM} ?%"),
)
FACTS.update({f.key: f for f in _RV_FACTS_27})


@lru_cache(maxsize=None)
def _ch28() -> dict:
    import tomllib

    from pathlib import Path

    from . import troubleshoot as T

    root = Path(__file__).resolve().parent.parent  # the repository: held-out sets live with the tests

    d0 = T.triage(T.bundle("oncall_paste"), symptom="training stuck since 18:34")
    notes = [T.triage(n).confidence for n in ("after the switch firmware upgrade busbw halved on two racks",
                                              "训练在 128 节点上初始化卡住，64 节点正常")]
    shard = {tuple(h): T.triage_walkthrough("missing_shard_hang", hide=h) for h in ((), ("rank2",))}
    d1 = T.diagnose_case("degraded_rail").quant
    d3 = T.diagnose_case("checkpoint_stall").quant
    cost = {n: T.diagnose_case(n).cost for n in ("degraded_rail", "collective_mismatch")}
    blind = T.blind_restart_cost(2048, restart_s=600, checkpoint_interval_s=1800, repeats=3, diagnose_s=600)
    held = tomllib.loads((root / "tests" / "fixtures" / "triage_heldout6.toml").read_text(encoding="utf-8"))
    s6 = T.score_incidents(held)
    return {
        "oncall_conf": d0.confidence, "note_conf_en": notes[0], "note_conf_zh": notes[1],
        "walkthroughs": len(T.walkthrough_names()),
        "shard_storage": shard[()].scores["storage"], "shard_conf": shard[()].confidence,
        "shard_conf_no_rank2": shard[("rank2",)].confidence,
        "rail_busbw": d1["busbw_measured_gbs"], "rail_pct": 100 * d1["busbw_measured_gbs"] / d1["busbw_expected_gbs"],
        "rail_slowdown_pct": 100 * d1["network"]["slowdown"],
        "rail_added_s": d1["network"]["step_measured_s"] - d1["network"]["step_expected_s"],
        "rail_explains_pct": 100 * d1["network_explains_fraction"],
        "ckpt_pool": d3["pool_read_gbs"], "ckpt_need": d3["required_read_gbs"], "ckpt_burst_s": d3["checkpoint_burst_s"],
        "ckpt_stall_s": d3["stall_per_checkpoint_s"],
        "rail_layered_min": cost["degraded_rail"]["layered_minutes"], "rail_random_min": cost["degraded_rail"]["random_minutes"],
        "sw_layered_min": cost["collective_mismatch"]["layered_minutes"],
        "sw_random_min": cost["collective_mismatch"]["random_minutes"],
        "blind_gpu_h": blind["blind_gpu_h"], "diagnose_gpu_h": blind["diagnose_gpu_h"],
        "h6_placed": s6["placed"], "h6_total": s6["total"], "h6_zh": s6["by_lang"]["zh"][0], "h6_en": s6["by_lang"]["en"][0],
        "h6_zh_total": s6["by_lang"]["zh"][1], "h6_en_total": s6["by_lang"]["en"][1],
        "h6_missed": len(s6["missed"]), "h6_no_verdict": len(s6["no_verdict"]),
        "h6_wrong": len(s6["missed"]) - len(s6["no_verdict"]),
    }


def _f28(key: str, desc: str, unit: str, fmt: str, *patterns: str, scale: float = 1.0, rel_tol: float = 0.02) -> Fact:
    return Fact(f"ch28_{key}", desc, unit, lambda: float(_ch28()[key]), fmt, patterns,
                "labutil.troubleshoot (ch28 cells; tests/fixtures/triage_heldout6.toml)", scale=scale, rel_tol=rel_tol)


_RV_FACTS_28 = (
    _f28("oncall_conf", "triage of the on-call paste: confidence", "", "{:.2f}", rf"结论是存储层，置信度 ?{_NUM}"),
    _f28("note_conf_en", "triage of an English note (switch firmware): confidence", "", "{:.2f}",
         rf"置信度分别为 ?{_NUM} ?和"),
    _f28("note_conf_zh", "triage of a Chinese note (init hang at 128 nodes): confidence", "", "{:.2f}",
         rf"置信度分别为 ?[\d.]+ ?和 ?{_NUM}"),
    _f28("walkthroughs", "public incident walkthroughs shipped with triage", "incidents", "{:.0f}",
         rf"用 ?{_NUM} ?个来自公开 issue 的真实事故", rf"(?<!\d)(?<!\d ){_NUM} ?个事故里每一个", rf"收录了 ?{_NUM} ?个取自公开"),
    _f28("shard_storage", "missing_shard_hang: storage score with all evidence", "", "{:.2f}",
         rf"有 rank 3 的 traceback 时存储层 ?{_NUM}"),
    _f28("shard_conf", "missing_shard_hang: confidence with all evidence", "", "{:.2f}", rf"置信度反而从 ?{_NUM} ?升到"),
    _f28("shard_conf_no_rank2", "missing_shard_hang: confidence without rank 2's log", "", "{:.2f}",
         rf"置信度反而从 ?[\d.]+ ?升到 ?{_NUM}"),
    _f28("rail_busbw", "degraded_rail sample: measured busbw, GB/s", "GB/s", "{:.0f} GB/s", rf"busbw 只剩 ?{_NUM} ?GB/s"),
    _f28("rail_pct", "degraded_rail: measured over expected busbw", "%", "{:.0f}%", rf"（期望的 ?{_NUM} ?%）"),
    _f28("rail_slowdown_pct", "degraded_rail: step-time increase the model predicts", "%", "{:.1f}%",
         rf"步时应增加 ?{_NUM} ?%"),
    _f28("rail_added_s", "degraded_rail: step-time increase the model predicts, s", "s", "{:.2f} s", rf"即 ?{_NUM} ?s，占"),
    _f28("rail_explains_pct", "degraded_rail: share of the observed +0.34 s the network explains", "%", "{:.0f}%",
         rf"增量的 ?{_NUM} ?%"),
    _f28("ckpt_pool", "checkpoint_stall: pool read bandwidth (fio), GB/s", "GB/s", "{:.1f} GB/s", rf"平时读带宽 ?{_NUM} ?GB/s"),
    _f28("ckpt_need", "checkpoint_stall: required read bandwidth, GB/s", "GB/s", "{:.1f} GB/s", rf"远大于需求 ?{_NUM} ?GB/s"),
    _f28("ckpt_burst_s", "checkpoint_stall: checkpoint burst, s", "s", "{:.0f} s", rf"占用存储池约 ?{_NUM} ?s"),
    _f28("ckpt_stall_s", "checkpoint_stall: loader stall per checkpoint, s", "s", "{:.1f} s", rf"每次停顿 ?{_NUM} ?s"),
    _f28("rail_random_min", "degraded_rail: random-order search time, min", "min", "{:.0f} min",
         rf"随机顺序期望的 ?{_NUM} ?分钟"),
    _f28("sw_layered_min", "collective_mismatch: layered search time, min", "min", "{:.0f} min", rf"{_NUM} ?分钟对 ?[\d.]+ ?分钟"),
    _f28("sw_random_min", "collective_mismatch: random-order search time, min", "min", "{:.1f} min",
         rf"\d+ ?分钟对 ?{_NUM} ?分钟"),
    _f28("blind_gpu_h", "2,048 GPUs, 3 blind restarts: GPU-hours lost", "GPU-h", "{:,.0f}", rf"盲目重启三次浪费 ?{_NUM} ?GPU"),
    _f28("diagnose_gpu_h", "2,048 GPUs, diagnose 10 min then 1 restart: GPU-hours", "GPU-h", "{:,.0f}", rf"只花 ?{_NUM} ?GPU"),
    _f28("h6_total", "held-out set 6: incidents", "incidents", "{:.0f}", rf"在没见过的 ?{_NUM} ?个事故上"),
    _f28("h6_placed", "held-out set 6: placed in the thread's layer (run once)", "incidents", "{:.0f}",
         rf"个事故上放对 ?{_NUM} ?个"),
    _f28("h6_zh", "held-out set 6: Chinese notes placed", "incidents", "{:.0f}", rf"中文笔记 ?{_NUM}/"),
    _f28("h6_zh_total", "held-out set 6: Chinese notes", "incidents", "{:.0f}", rf"中文笔记 ?\d+/{_NUM}"),
    _f28("h6_en", "held-out set 6: English notes placed", "incidents", "{:.0f}", rf"英文 ?{_NUM}/"),
    _f28("h6_en_total", "held-out set 6: English notes", "incidents", "{:.0f}", rf"英文 ?\d+/{_NUM}"),
    _f28("h6_missed", "held-out set 6: missed", "incidents", "{:.0f}", rf"没放对的 ?{_NUM} ?个里"),
    _f28("h6_no_verdict", "held-out set 6: missed with no verdict", "incidents", "{:.0f}", rf"个里，?{_NUM} ?个是「还不知道」"),
    _f28("h6_wrong", "held-out set 6: placed in a wrong layer", "incidents", "{:.0f}", rf"「还不知道」[^，。]*，\s*{_NUM} ?个放错了层"),
)
FACTS.update({f.key: f for f in _RV_FACTS_28})
