"""Chapter 21 exercises: fair-share factor, EASY backfill by hand, QOS priority, a ResourceQuota."""

from .. import scheduling as S
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))


def _bf_saving_min() -> float:
    wl = S.backfill_example()
    fifo = S.simulate(wl, 16, "fifo")
    bf = S.simulate(wl, 16, "backfill")
    return float((fifo.wait_s.sum() - bf.wait_s.sum()) / 60.0)


def _p95_ratio() -> float:
    wl = S.generate_workload(1000, 128, load=0.9, inference_share=0.3, seed=0)
    fifo = S.simulate(wl, 128, "fifo").summary()
    pri = S.simulate(wl, 128, "priority").summary()
    return fifo["inference_p95_s"] / pri["inference_p95_s"]


register(Exercise(
    key="ch21.1",
    prompt="An account holds 25 % of the normalised shares and consumed 50 % of the decayed cluster usage. "
           "Its Slurm classic fair-share factor F? (F is a factor between 0 and 1 as sshare prints it, "
           "NOT a percent -- the one exception to the course's percent convention)",
    answer=lambda: S.fairshare_factor(0.5, 0.25),
    kind="by_hand",
    unit="（0–1 之间的因子，不是百分数）", rtol=0.02,
    hints=("经典 fair-share 公式：F = 2^(-U/S)。", "U/S = 0.5/0.25 = 2。"),
    solution_text="F = 2^(-0.5/0.25) = 2^-2 = 0.25。恰好用满份额（U = S）时 F = 0.5；用了两倍份额，因子再减半。",
))

register(Exercise(
    key="ch21.2",
    prompt="The five jobs of S.backfill_example() on 16 GPUs: by how many minutes does FIFO + EASY backfill "
           "reduce the SUM of the jobs' waits compared with plain FIFO?",
    answer=_bf_saving_min,
    unit="min", rtol=0.02,
    hints=("FIFO 下 job 1（16 卡）要等 job 0 结束，job 2/3/4 全部被它挡在后面，直到 1.5 h。",
           "EASY：job 1 在 1.0 h 有预留；job 2（4 卡 40 min）和 job 4（2 卡 10 min）在预留前结束，可以立即回填；"
           "job 3 要跑 90 min，会占 job 1 需要的卡，不能回填。"),
    solution_text="FIFO 等待（分钟）：0, 59, 88, 87, 86，合计 320；回填后：0, 59, 0, 87, 0，合计 146；少了 174 分钟，"
                  "而 job 1 的开始时间（1.0 h）一点也没推迟——这就是 EASY 的性质。",
))

register(Exercise(
    key="ch21.3",
    prompt="1,000 jobs on 128 GPUs (generate_workload seed 0, load 0.9, inference share 0.3): "
           "inference P95 wait under fifo divided by that under priority (QOS, no backfill)?",
    answer=_p95_ratio,
    unit="倍", rtol=0.02,
    params={"scheduling.generate_workload": {"n_jobs": 1000, "n_gpus": 128, "load": 0.9, "inference_share": 0.3, "seed": 0}},
    hints=("S.simulate(wl, 128, 'fifo').summary()['inference_p95_s']，priority 同理。",
           "两次模拟用同一个 workload，只换策略。"),
    solution_text="FIFO 下推理 P95 约 61 h，QOS 优先级下约 2.0 h，约 30 倍：推理作业不再排在大训练作业后面。",
))

register(Exercise(
    key="ch21.4",
    prompt="Parse S.SAMPLE_KUBECTL_QUOTA with S.parse_kubectl_quota: how many more 1-GPU pods can namespace "
           "team-infer create before the API server answers 'exceeded quota'?",
    answer=lambda: (lambda u, h: h - u)(*S.parse_kubectl_quota(S.SAMPLE_KUBECTL_QUOTA)[0].gpu()),
    unit="个", rtol=0.0, atol=0.5,
    hints=("ResourceQuota 比较的是 requests.nvidia.com/gpu 的 Used 与 Hard。", "Hard − Used。"),
    solution_text="Hard 16 − Used 12 = 4：第 5 个 1 卡 Pod 在准入阶段被拒绝（403 Forbidden: exceeded quota），"
                  "它根本不会进入调度器的队列。",
))


def _best_policy_for_inference() -> str:
    wl = S.generate_workload(1000, 128, seed=0, load=0.9, inference_share=0.3)
    return min(("fifo", "backfill", "priority"), key=lambda p: S.simulate(wl, 128, p).summary()["inference_p95_s"])


def _why_ch21_5(option: str) -> str:
    """Why policy ``option`` is not the best for inference: its P95 wait against the best policy's."""
    wl = S.generate_workload(1000, 128, seed=0, load=0.9, inference_share=0.3)
    p95 = {p: S.simulate(wl, 128, p).summary()["inference_p95_s"] for p in ("fifo", "backfill", "priority")}
    return (f"{option} 下推理作业的 P95 等待约 {p95[option] / 3600:.1f} h，最好的策略只要 {min(p95.values()) / 3600:.1f} h："
            f"推理作业小而急，要直接排到训练作业前面")


register(Exercise(
    key="ch21.5",
    prompt=("Judgement: the workload of ch21.3 (1,000 jobs, 128 GPUs, seed 0, load 0.9, inference share 0.3). Which "
            "policy gives inference jobs the lowest P95 wait: 'fifo', 'backfill' or 'priority'?"),
    answer=_best_policy_for_inference,
    choices=("fifo", "backfill", "priority"),
    synonyms={"fifo": ("先来先服务",), "backfill": ("easy backfill", "回填"), "priority": ("qos", "优先级")},
    kind="judgement",
    explain=_why_ch21_5,
    params={"scheduling.generate_workload": {"n_jobs": 1000, "n_gpus": 128, "load": 0.9, "inference_share": 0.3, "seed": 0}},
    hints=("推理作业小而急；FIFO 下它们排在大训练作业后面。",
           "backfill 只让「不推迟队首」的小作业插队；QOS 优先级直接把推理作业排到前面。"),
    solution_text="priority：推理作业的 QOS 高，直接排在训练作业前面，P95 等待从 FIFO 的约 61 h 降到约 2.0 h；backfill 只降到约 13 h（它只让不推迟队首的作业插队）。",
))
