"""Chapter 26 exercises: straggler cost, GPU_UTIL vs tensor activity, `for:` semantics, hang cost."""

import numpy as np

from .. import cost, monitoring
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))


def _fire_time_s() -> float:
    t = np.arange(0.0, 1800.0 + 1, 15.0)
    temp = np.where(t >= 600.0, 90.0, 65.0)
    ev = monitoring.evaluate_rule(monitoring.AlertRule("Hot", "DCGM_FI_DEV_GPU_TEMP", ">", 85, for_s=120), t, temp)
    return ev.first_fire_s[0]


def _gpu0_gap_points() -> float:
    rows = monitoring.gpu_metrics(monitoring.parse_prometheus_text(monitoring.DCGM_EXPORTER_SAMPLE))
    return monitoring.utilisation_gap(rows[0])["util_minus_tensor"] * 100.0


register(Exercise(
    key="ch26.1",
    prompt="A synchronous data-parallel job on 1,024 GPUs (compute = 100 % of the step). One GPU becomes 10 % slower. "
           "How many GPUs' worth of throughput does the job lose? (GPU-equivalents, decimals allowed)",
    answer=lambda: monitoring.straggler_throughput_loss(1.10, 1024, compute_fraction=1.0)["gpus_equivalent_lost"],
    unit="张", rtol=0.02,
    hints=("同步训练每一步都要等最慢的 rank：步长变成原来的 1.1 倍。",
           "吞吐损失 = 1 − 1/1.1；乘以 1,024 张卡。"),
    solution_text="步长 ×1.1 → 吞吐 ×1/1.1，损失 9.09%，相当于 1,024 × 0.0909 ≈ 93 张卡白白空转——一张慢卡的代价是 93 张卡。",
))

register(Exercise(
    key="ch26.2",
    prompt="Parse monitoring.DCGM_EXPORTER_SAMPLE. For GPU 0, DCGM_FI_DEV_GPU_UTIL (%) minus "
           "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE expressed in %: how many percentage points of '100 % busy' were not tensor work?",
    answer=_gpu0_gap_points,
    unit="个百分点", rtol=0.02,
    hints=("monitoring.gpu_metrics(monitoring.parse_prometheus_text(...)) 给出每卡一行。",
           "GPU_UTIL 是百分数，PIPE_TENSOR_ACTIVE 是 0–1 的比例，先乘 100。"),
    solution_text="GPU 0：GPU_UTIL = 100%，TENSOR_ACTIVE = 0.4523 → 45.2%；差 54.8 个百分点。GPU_UTIL 只说明「有 kernel 在跑」。",
))

register(Exercise(
    key="ch26.3",
    prompt="Rule DCGM_FI_DEV_GPU_TEMP > 85 with for: 2m, evaluated every 15 s from t = 0. The temperature jumps from 65 C "
           "to 90 C at t = 600 s and stays there. At what time t (s) does the alert first FIRE?",
    answer=_fire_time_s,
    kind="by_hand",
    unit="s", rtol=0.01,
    hints=("t = 600 s 的那次评估条件第一次为真：告警进入 pending，activeAt = 600 s。",
           "之后每次评估都为真；当 t − activeAt ≥ 120 s 时从 pending 变为 firing。"),
    solution_text="activeAt = 600 s，600 + 120 = 720 s 那次评估转为 firing（Prometheus 的 for: 语义）。",
))

register(Exercise(
    key="ch26.4",
    prompt="XID 79 hangs a 1,024-GPU H100 job; nobody notices until the 10-minute NCCL timeout kills it. At the dated "
           "illustrative price 4.916 USD/GPU-h (2024-12 AWS Capacity Blocks, US East; cost.cloud_usd_per_gpu_hour), "
           "what did those 10 idle minutes cost? (USD)",
    answer=lambda: monitoring.hang_cost_usd(1024, 600, cost.cloud_usd_per_gpu_hour("H100-SXM")),
    unit="USD", rtol=0.02,
    hints=("同步作业挂住时所有卡一起空转：卡数 × 小时数 × 单价。",
           "单价 4.916 USD/GPU·h（2024-12 AWS Capacity Blocks（US East）示意价格，prices.toml：p5.48xlarge）。"),
    solution_text="1,024 × (600/3600) h × 4.916 USD ≈ 839 USD——还没算回滚到上一个检查点重算的部分。",
))


def _which_rule_fires() -> str:
    t = np.arange(0.0, 1500.0, 15.0)
    temp = np.where((t >= 600) & (t < 700), 90.0, 65.0)
    fired = {m: monitoring.evaluate_rule(monitoring.AlertRule("GpuHot", "DCGM_FI_DEV_GPU_TEMP", ">", 85.0,
                                                              for_s=60.0 * m), t, temp).first_fire_s[0] is not None
             for m in (1, 2)}
    return {(True, True): "both", (True, False): "1m", (False, True): "2m", (False, False): "neither"}[
        (fired[1], fired[2])]


def _why_ch26_5(option: str) -> str:
    """Why ``option`` is wrong: when each rule fires (or never) in the sampled temperature trace."""
    t = np.arange(0.0, 1500.0, 15.0)
    temp = np.where((t >= 600) & (t < 700), 90.0, 65.0)
    fire = {m: monitoring.evaluate_rule(monitoring.AlertRule("GpuHot", "DCGM_FI_DEV_GPU_TEMP", ">", 85.0,
                                                             for_s=60.0 * m), t, temp).first_fire_s[0] for m in (1, 2)}
    said = {"1m": "只有 for 较短的规则触发", "2m": "只有 for 较长的规则触发", "both": "两条都触发",
            "neither": "两条都不触发"}[option]
    when = "；".join(f"for = {60 * m} s 的规则{'在 t = %g s 触发' % fire[m] if fire[m] is not None else '从未触发'}"
                     for m in (1, 2))
    return f"你说{said}，但逐次评估的结果是：{when}（条件在 t = 600–690 s 的评估中为真，700 s 恢复）"


register(Exercise(
    key="ch26.5",
    prompt=("Judgement: DCGM_FI_DEV_GPU_TEMP jumps from 65 C to 90 C at t = 600 s and falls back at t = 700 s; rules "
            "'temp > 85 for: 1m' and 'temp > 85 for: 2m' are evaluated every 15 s from t = 0. Which fires: '1m', "
            "'2m', 'both' or 'neither'?"),
    answer=_which_rule_fires,
    choices=("1m", "2m", "both", "neither"),
    synonyms={"1m": ("only 1m", "for: 1m"), "2m": ("only 2m", "for: 2m"), "both": ("两个都", "都会"),
              "neither": ("none", "都不")},
    kind="judgement",
    explain=_why_ch26_5,
    hints=("条件从 t = 600 s 的那次评估开始为真，最后一次为真是 t = 690 s。",
           "告警在 t − activeAt ≥ for 的那次评估触发；条件一旦为假，pending 就清零。"),
    solution_text=("for: 1m 在 t = 660 s 触发；for: 2m 需要到 t = 720 s 仍为真，但 700 s 就恢复了，永远不会触发：选 1m。"
                   "for 越长误报越少，但短时过热会被漏掉——第 26 章要你按事件的代价选 for。"),
))
