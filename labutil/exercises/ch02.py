"""Chapter 2 exercises: why clusters, workload profiles.

Hints and worked solutions quote numbers computed by the same model calls as the answers (at
import), so they cannot drift from the reference values.
"""

import re

from .. import compute, hardware, memory, models, workloads
from ..cluster import NIC_EFFICIENCY
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

def _e(x: float) -> str:
    return re.sub(r"e\+?0*(\d)", r"e\1", f"{x:.3g}")


def _gpt3_years() -> float:
    return compute.time_to_train_s(compute.train_flops(175e9, 300e9), 1,
                                   hardware.gpu("A100-80G-SXM").bf16_tflops, 0.40) / 86400 / 365


def _sol_1() -> str:
    c = compute.train_flops(175e9, 300e9)
    peak = hardware.gpu("A100-80G-SXM").bf16_tflops
    s = c / (peak * 1e12 * 0.40)
    return f"C = {_e(c)} FLOPs；{_e(c)} / ({peak:g}e12 × 0.4) = {_e(s)} s ≈ {_gpt3_years():.0f} 年。"


def _sol_2() -> str:
    w = workloads.workload("multimodal")
    return (f"{w.gpus} × {w.read_mb_per_gpu_s:g} MB/s = {w.gpus * w.read_mb_per_gpu_s:,.0f} MB/s = "
            f"{workloads.profile(w).read_gbs:.2f} GB/s：已经是一个中型并行文件系统的全部带宽。")


def _finetune_at(link_gbps=100):
    return workloads.profile(workloads.workload("finetune"), link_gbps)


def _hints_3() -> tuple[str, str]:
    p = _finetune_at()
    w = p.workload
    return (f"先算 ring all-reduce 时间：2(n−1)α + 2(n−1)/n · S/B，S = 2 字节 × {_e(w.model_params)} 参数，n = {w.dp}；"
            f"计算时间 t_c 在本章画像表的 t_c_s 列（{w.step_compute_s:g} s）。",
            f"纯数据并行时每台服务器上 8 个 rank，8 条环各走一块网卡：B = 8 × 12.5 GB/s × {NIC_EFFICIENCY:g} = "
            f"{8 * 12.5 * NIC_EFFICIENCY:g} GB/s；效率 = t_c / (t_c + t_sync)；按课程约定填百分数。")


def _sol_3() -> str:
    p = _finetune_at()
    w = p.workload
    return (f"S ≈ {w.sync_bytes_per_step / 1e9:.2f} GB，t_sync ≈ {p.comm_s:.2f} s（几乎全是带宽项），"
            f"η = {w.step_compute_s:g}/({w.step_compute_s:g}+{p.comm_s:.2f}) ≈ {p.scaling_efficiency:.2f}，"
            f"即 {100 * p.scaling_efficiency:.0f} %。")


def _state_gpus() -> float:
    return memory.model_states_gb(models.transformer("llama3-70b").params()).total_gb / hardware.gpu("H100-SXM").hbm_gb


def _sol_4() -> str:
    n = models.transformer("llama3-70b").params()
    gb = memory.model_states_gb(n).total_gb
    return f"{_e(n)} × 16 B = {gb:,.0f} GB；{gb:,.0f} / {hardware.gpu('H100-SXM').hbm_gb:g} ≈ {_state_gpus():.1f} 张 H100——还没算激活值。"


def _effs_100() -> dict[str, float]:
    return {n: workloads.profile(workloads.workload(n), 100).scaling_efficiency for n in workloads.workload_names()}


def _sol_5() -> str:
    e = _effs_100()
    worst = min(e, key=e.get)
    others = "，".join(f"{n} {100 * v:.0f} %" for n, v in sorted(e.items(), key=lambda kv: kv[1]) if n != worst)
    return (f"{worst}：100 Gb/s 下效率约 {100 * e[worst]:.0f} %，最低。多模态的每个副本占 4 张卡，一台服务器上只有 2 个 rank，"
            f"环只能用上 2 块网卡；预训练一个副本 32 张卡、每台服务器只走一条轨道，但只同步 1/32 的梯度；微调 8 块网卡一起干活。"
            f"其余：{others}（推理/仿真/数据处理不做梯度同步）。")


register(Exercise(
    key="ch02.1",
    prompt="GPT-3 (175B params, 300B tokens, 6·N·D) on one A100-80G-SXM at MFU 0.40: training time in years?",
    answer=_gpt3_years,
    unit="年", rtol=0.03,
    hints=("总计算量 C = 6 × 175e9 × 300e9 FLOPs。",
           f"时间 = C / (峰值 {hardware.gpu('A100-80G-SXM').bf16_tflops:g}e12 FLOP/s × 0.40)，再换算成年（365 天）。"),
    solution_text=_sol_1(),
))

register(Exercise(
    key="ch02.2",
    prompt="Representative multimodal job (512 GPUs, 60 MB/s read per GPU): aggregate read bandwidth in GB/s?",
    answer=lambda: workloads.profile(workloads.workload("multimodal")).read_gbs,
    kind="by_hand",
    unit="GB/s", rtol=0.02,
    hints=("聚合带宽 = 每卡读速率 × 卡数。", "注意 MB → GB 要除以 1000（十进制）。"),
    solution_text=_sol_2(),
))

register(Exercise(
    key="ch02.3",
    prompt="Representative fine-tuning job at 100 Gb/s per GPU, no overlap: scaling efficiency in percent?",
    answer=lambda: 100 * _finetune_at().scaling_efficiency,
    unit="%", rtol=0.03,
    hints=_hints_3(),
    solution_text=_sol_3(),
))

register(Exercise(
    key="ch02.4",
    prompt="Full mixed-precision training state of Llama 3 70B (16 B/param, unsharded): how many H100 (80 GB) worth of memory?",
    answer=_state_gpus,
    unit="张", rtol=0.03,
    hints=(f"Llama 3 70B 约 {_e(models.transformer('llama3-70b').params())} 参数。",
           "每参数 2（权重）+ 2（梯度）+ 12（FP32 主权重与两个 Adam 动量）= 16 字节。"),
    solution_text=_sol_4(),
))


def _why_ch02_5(option: str) -> str:
    """Why ``option`` is not the workload that loses most: its efficiency and sync time beside the lowest one."""
    p = workloads.profile(workloads.workload(option), 100)
    lowest = min(workloads.profile(workloads.workload(n), 100).scaling_efficiency for n in workloads.workload_names())
    return (f"{option} 在每卡 100 Gb/s 下扩展效率还有 {p.scaling_efficiency:.1%}（计算 {p.workload.step_compute_s:g} s、"
            f"同步 {p.comm_s:.3g} s），而损失最多的负载只剩 {lowest:.1%}")


register(Exercise(
    key="ch02.5",
    prompt=("Judgement: on a network of 100 Gb/s per GPU (no overlap), which representative workload of "
            "labutil.workloads loses the most scaling efficiency? (answer with its name, e.g. 'llm-pretrain')"),
    answer=lambda: min(_effs_100().items(), key=lambda kv: kv[1])[0],
    choices=tuple(workloads.workload_names()),
    synonyms={"finetune": ("fine-tune", "fine-tuning", "微调"), "llm-pretrain": ("pretrain", "预训练"),
              "multimodal": ("多模态",), "science": ("科学计算",)},
    kind="judgement",
    explain=_why_ch02_5,
    hints=("效率 = t_c / (t_c + t_sync)：计算时间短、要同步的梯度多、一台服务器上能并行用的网卡少的负载最吃网络。",
           "用 workloads.profile(workloads.workload(name), 100).scaling_efficiency 逐个比较。"),
    solution_text=_sol_5(),
))
