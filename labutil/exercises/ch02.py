"""Chapter 2 exercises: why clusters, workload profiles."""

from .. import compute, hardware, memory, models, workloads
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

register(Exercise(
    key="ch02.1",
    prompt="GPT-3 (175B params, 300B tokens, 6·N·D) on one A100-80G-SXM at MFU 0.40: training time in years?",
    answer=lambda: compute.time_to_train_s(compute.train_flops(175e9, 300e9), 1,
                                           hardware.gpu("A100-80G-SXM").bf16_tflops, 0.40) / 86400 / 365,
    unit="年", rtol=0.03,
    hints=("总计算量 C = 6 × 175e9 × 300e9 FLOPs。", "时间 = C / (峰值 312e12 FLOP/s × 0.40)，再换算成年。"),
    solution_text="C = 3.15e23 FLOPs；3.15e23 / (312e12 × 0.4) = 2.52e9 s ≈ 80 年。",
))

register(Exercise(
    key="ch02.2",
    prompt="Representative multimodal job (512 GPUs, 60 MB/s read per GPU): aggregate read bandwidth in GB/s?",
    answer=lambda: workloads.profile(workloads.workload("multimodal")).read_gbs,
    kind="by_hand",
    unit="GB/s", rtol=0.02,
    hints=("聚合带宽 = 每卡读速率 × 卡数。", "注意 MB → GB 要除以 1000（十进制）。"),
    solution_text="512 × 60 MB/s = 30,720 MB/s = 30.72 GB/s：已经是一个中型并行文件系统的全部带宽。",
))

register(Exercise(
    key="ch02.3",
    prompt="Representative fine-tuning job at 100 Gb/s per GPU, no overlap: scaling efficiency in percent?",
    answer=lambda: 100 * workloads.profile(workloads.workload("finetune"), 100).scaling_efficiency,
    unit="%", rtol=0.03,
    hints=("先算 ring all-reduce 时间：2(n−1)α + 2(n−1)/n · S/B，S = 2 字节 × 8.03e9 参数，n = 32。",
           "纯数据并行时每台服务器上 8 个 rank，8 条环各走一块网卡：B = 8 × 12.5 GB/s × 0.96 = 96 GB/s；"
           "效率 = t_c / (t_c + t_sync)，t_c = 3.0 s；按课程约定填百分数。"),
    solution_text="S ≈ 16.06 GB，t_sync ≈ 2×31/32×16.06/96 ≈ 0.32 s，η = 3.0/(3.0+0.32) ≈ 0.90，即 90 %。",
))

register(Exercise(
    key="ch02.4",
    prompt="Full mixed-precision training state of Llama 3 70B (16 B/param, unsharded): how many H100 (80 GB) worth of memory?",
    answer=lambda: memory.model_states_gb(models.transformer("llama3-70b").params()).total_gb
    / hardware.gpu("H100-SXM").hbm_gb,
    unit="张", rtol=0.03,
    hints=("Llama 3 70B 约 70.6e9 参数。", "每参数 2（权重）+ 2（梯度）+ 12（FP32 主权重与两个 Adam 动量）= 16 字节。"),
    solution_text="70.6e9 × 16 B = 1,129 GB；1,129 / 80 ≈ 14.1 张 H100——还没算激活值。",
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
    answer=lambda: min(workloads.workload_names(),
                       key=lambda n: workloads.profile(workloads.workload(n), 100).scaling_efficiency),
    choices=tuple(workloads.workload_names()),
    synonyms={"finetune": ("fine-tune", "fine-tuning", "微调"), "llm-pretrain": ("pretrain", "预训练"),
              "multimodal": ("多模态",), "science": ("科学计算",)},
    kind="judgement",
    explain=_why_ch02_5,
    hints=("效率 = t_c / (t_c + t_sync)：计算时间短、要同步的梯度多的负载最吃网络。",
           "用 workloads.profile(workloads.workload(name), 100).scaling_efficiency 逐个比较。"),
    solution_text=("multimodal：每个副本占 4 张卡，一台服务器上只有 2 个 rank，环只能用上 2 块网卡，100 Gb/s 下效率约 79 %；"
                   "预训练约 89 %（一个副本 32 张卡，每台服务器只走一条轨道，但只同步 1/32 的梯度），"
                   "微调约 90 %（8 块网卡一起干活），科学计算约 100 %，推理/仿真/数据处理不做梯度同步（100 %）。"),
))
