"""Course facts: the numbers several chapters quote, each computed once.

A learner who reads ch01, ch05, ch08 and ch14 must get one answer to "what GPU utilisation does
seed 003's 25 GbE cluster reach?". Every such number is a ``Fact`` here: computed by the course's
models (``labutil.cluster``, ``labutil.comm``, ``labutil.published_runs``, ``labutil.reliability``),
with the phrases (regular expressions) by which chapters print it. ``tests/test_consistency.py``
scans every chapter's prose and checked outputs (``# NBVAL_CHECK_OUTPUT`` cells) with these
patterns and fails when a chapter prints a value that is not the fact (rounded as printed), i.e.
when two chapters disagree.

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
    out = []
    for p in fact(key).patterns:
        out += [m.group(1) for m in re.finditer(p, source)]
    return out


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
