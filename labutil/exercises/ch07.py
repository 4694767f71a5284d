"""Chapter 7 exercises: model states, ZeRO, activations and recomputation."""

from .. import hardware, memory
from ..models import transformer
from ..parallel import Layout
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

register(Exercise(
    key="ch07.1",
    prompt="Llama-3 70B (labutil preset llama3-70b), mixed-precision Adam, no ZeRO: weights + gradients + "
           "optimizer states per GPU in GB (no model parallelism)?",
    answer=lambda: memory.model_states_gb(transformer("llama3-70b").params()).total_gb,
    unit="GB", rtol=0.02,
    hints=("混合精度 Adam 每个参数 2 + 2 + 12 = 16 字节（ZeRO 论文 §3.1，K = 12）。",
           "参数量用 transformer('llama3-70b').params()，约 70.6e9；乘以 16 再除以 1e9。"),
    solution_text="Ψ ≈ 70.55e9，16 B/参数 → ≈ 1,129 GB：一张 80 GB 的 H100 连它的 1/14 都装不下。",
))

register(Exercise(
    key="ch07.2",
    prompt=("Same 70B model, data parallelism over dp = 64 GPUs with ZeRO-2: model-state memory per GPU in GB? "
            "(Whether that fits an 80 GB GPU is exercise 7.)"),
    answer=lambda: memory.model_states_gb(transformer("llama3-70b").params(), 64, 2).total_gb,
    unit="GB", rtol=0.02,
    hints=("ZeRO-2 切分优化器状态和梯度，权重仍然每卡一份：2Ψ + (2 + K)Ψ/Nd。",
           "2 × 70.55 GB + 14 × 70.55 GB / 64。"),
    solution_text=lambda: (
        f"2Ψ = {2 * transformer('llama3-70b').params() / 1e9:.1f} GB 的权重仍在每张卡上，加上 14Ψ/64 = "
        f"{14 * transformer('llama3-70b').params() / 64 / 1e9:.1f} GB，合计 ≈ {_states_70b_gb(2):.1f} GB > 80 GB："
        "ZeRO-2 放不进一张 80 GB 的卡（最低要哪一级，是练习 7）。"),
))

register(Exercise(
    key="ch07.3",
    prompt="GPT-3 175B layer shape (s = 2048, h = 12288, a = 96, 96 layers), micro-batch 1, tp = 8 with "
           "sequence parallelism and selective recompute: stored activations of all layers per GPU in GB?",
    answer=lambda: memory.activation_gb(transformer("gpt3-175b"), 1, 2048, 8, True, "selective"),
    unit="GB", rtol=0.02,
    hints=("Korthikanti 等 2022 Eq. 6：每层 s·b·h·34/t 字节。",
           "2048 × 1 × 12288 × 34 / 8 × 96 层，再除以 1e9。"),
    solution_text="每层 2048·12288·34/8 = 107 MB，96 层 ≈ 10.3 GB；对比只用 TP 的 s·b·h·(10 + 24/t + 5as/(ht)) ≈ 55.6 GB，"
                  "约少了 5.4 倍。",
))

register(Exercise(
    key="ch07.4",
    prompt="Llama-2 7B on ONE 80 GB GPU, mixed-precision Adam, s = 4096, b = 1, full recompute: total training "
           "memory in GB (model states + activations + fp32 logits)?",
    answer=lambda: memory.training_memory_gb(transformer("llama2-7b"), Layout(1, 1, 1, 1, 1, recompute="full")).total_gb,
    unit="GB", rtol=0.02,
    hints=("模型状态 16 B × 6.74e9 ≈ 108 GB 已经超过 80 GB。",
           "全量重计算每层只留 2·s·b·h 字节；再加上 4·s·b·V 字节的 fp32 logits。"),
    solution_text="108 GB 模型状态 + 32 × 2 × 4096 × 4096 B ≈ 1.07 GB 激活 + 4 × 4096 × 32000 B ≈ 0.52 GB logits ≈ 109.4 GB > 80 GB："
                  "7B 模型单卡全参训练放不下，需要 ZeRO/FSDP 切分（或 LoRA 等只训练少量参数的方法）。",
))

register(Exercise(
    key="ch07.5",
    prompt=("Pen and paper. ZeRO paper example: 7.5B parameters, mixed-precision Adam (K = 12), dp = 64 GPUs, ZeRO-3: "
            "model-state memory per GPU in GB (1 GB = 1e9 bytes)?"),
    answer=lambda: memory.model_states_gb(7.5e9, 64, 3).total_gb,
    unit="GB", rtol=0.02, kind="by_hand",
    params={"memory.model_states_gb": {"params": 7.5e9, "dp": 64, "zero_stage": 3}},
    hints=("ZeRO-3 把权重、梯度、优化器状态全部切成 Nd 份：(2 + 2 + K)Ψ / Nd 字节。",
           "16 × 7.5e9 / 64 字节，再除以 1e9。"),
    solution_text="16 × 7.5e9 / 64 = 1.875e9 字节 ≈ 1.88 GB（ZeRO 论文图 1 的最右一栏），对比不切分时的 120 GB 少了 64 倍。",
))


def _lowest_zero_stage_that_fits(fraction_of_hbm: float = 0.9) -> str:
    """Lowest ZeRO stage for Llama-2 7B, dp=8, s=4096, mb=1, selective recompute, within fraction x H100 HBM."""
    spec = transformer("llama2-7b")
    budget_gb = fraction_of_hbm * hardware.gpu("H100-SXM").hbm_gb
    for stage in range(4):
        lay = Layout(8, 1, 1, 1, 8, zero_stage=stage, recompute="selective")
        if memory.training_memory_gb(spec, lay).total_gb <= budget_gb:
            return f"zero-{stage}"
    raise ValueError("no ZeRO stage fits")


def _why_ch07_6(option: str) -> str:
    """Why ``option`` is not the lowest stage that fits: its memory against the 72 GB budget (same layout as the answer)."""
    spec = transformer("llama2-7b")
    budget_gb = 0.9 * hardware.gpu("H100-SXM").hbm_gb
    stage = int(option[-1])

    def total(st: int) -> float:
        return memory.training_memory_gb(spec, Layout(8, 1, 1, 1, 8, zero_stage=st, recompute="selective")).total_gb

    if total(stage) > budget_gb:
        return f"这一级每卡要 {total(stage):.1f} GB，超过预算 0.9 × 80 = {budget_gb:.0f} GB"
    return (f"这一级每卡 {total(stage):.1f} GB，放得下，但不是最低的：低一级只要 {total(stage - 1):.1f} GB ≤ {budget_gb:.0f} GB，"
            f"更高的阶段只会多付通信（ZeRO-3 多 50 %）")


def _ch07_6_solution() -> str:
    """Worked solution of ch07.6 from the model (the same layout and budget as the answer)."""
    spec = transformer("llama2-7b")
    budget_gb = 0.9 * hardware.gpu("H100-SXM").hbm_gb
    m = [memory.training_memory_gb(spec, Layout(8, 1, 1, 1, 8, zero_stage=st, recompute="selective")) for st in range(4)]
    ans = _lowest_zero_stage_that_fits(0.9)
    return (f"{ans}：ZeRO-0 的模型状态 {m[0].model_states_gb:.0f} GB 已超预算 {budget_gb:.0f} GB；ZeRO-1 的模型状态为 "
            f"(4 + 12/8) × {spec.params() / 1e9:.2f} ≈ {m[1].model_states_gb:.1f} GB，加上激活 {m[1].activations_gb:.1f} GB 和 logits "
            f"{m[1].logits_gb:.2f} GB，共 {m[1].total_gb:.1f} GB ≤ {budget_gb:.0f} GB，放得下。更高的阶段也放得下，"
            "但 ZeRO-3 每步多 50% 通信，选刚好够用的最低阶段。")


register(Exercise(
    key="ch07.6",
    prompt=("Judgement. Llama-2 7B, pure data parallelism over 8 H100 (80 GB), s = 4096, micro-batch 1, selective "
            "recompute: the lowest ZeRO stage ('zero-0', 'zero-1', 'zero-2' or 'zero-3') whose per-GPU training memory stays within "
            "90 percent of the 80 GB?"),
    answer=lambda: _lowest_zero_stage_that_fits(0.9),
    choices=("zero-0", "zero-1", "zero-2", "zero-3"),
    synonyms={"zero-0": ("zero0", "ddp"), "zero-1": ("zero1", "zero stage 1"), "zero-2": ("zero2", "zero stage 2"),
              "zero-3": ("zero3", "zero stage 3", "fsdp")},
    kind="judgement",
    explain=_why_ch07_6,
    hints=("预算 = 0.9 × 80 = 72 GB。激活（选择性重计算，s = 4096，b = 1）与 ZeRO 阶段无关，先算每个阶段的模型状态。",
           "ZeRO-1：2Ψ + 2Ψ + 12Ψ/8；ZeRO-2：2Ψ + 14Ψ/8；Ψ ≈ 6.74e9。"),
    solution_text=lambda: _ch07_6_solution(),
))


def _states_70b_gb(stage: int, dp: int = 64) -> float:
    """Model-state memory per GPU (GB) of Llama-3 70B, mixed-precision Adam, over ``dp`` GPUs at ZeRO ``stage``."""
    return memory.model_states_gb(transformer("llama3-70b").params(), dp, stage).total_gb


def _lowest_stage_for_70b_states() -> str:
    """Lowest ZeRO stage whose 70B model states (dp = 64) fit one H100's 80 GB (activations not counted)."""
    hbm_gb = hardware.gpu("H100-SXM").hbm_gb
    return next(f"zero-{st}" for st in range(4) if _states_70b_gb(st) <= hbm_gb)


def _why_ch07_7(option: str) -> str:
    """Why ``option`` is not the lowest stage whose model states fit: its GB against 80, or the stage below."""
    hbm_gb = hardware.gpu("H100-SXM").hbm_gb
    stage = int(option[-1])
    gb = _states_70b_gb(stage)
    if gb > hbm_gb:
        kept = {0: "什么都不切", 1: "只切了优化器状态", 2: "权重 2Ψ 仍在每张卡上"}[stage]
        return f"这一级每卡模型状态 {gb:,.1f} GB，超过 {hbm_gb:.0f} GB（{kept}）"
    return f"这一级每卡 {gb:.1f} GB，放得下；但题目问最低的一级，而低一级要 {_states_70b_gb(stage - 1):,.1f} GB"


register(Exercise(
    key="ch07.7",
    prompt=("Judgement. Exercise 2's model (Llama-3 70B, mixed-precision Adam) over dp = 64 H100 (80 GB): the lowest "
            "ZeRO stage ('zero-0', 'zero-1', 'zero-2' or 'zero-3') whose per-GPU model states alone fit in 80 GB?"),
    answer=_lowest_stage_for_70b_states,
    choices=("zero-0", "zero-1", "zero-2", "zero-3"),
    synonyms={"zero-0": ("zero0", "ddp"), "zero-1": ("zero1", "zero stage 1"), "zero-2": ("zero2", "zero stage 2"),
              "zero-3": ("zero3", "zero stage 3", "fsdp")},
    kind="judgement",
    explain=_why_ch07_7,
    hints=("先用练习 2 的结果：ZeRO-2 每卡还剩多少？它比 80 GB 大还是小？",
           "ZeRO-1：4Ψ + 12Ψ/64；ZeRO-2：2Ψ + 14Ψ/64；ZeRO-3：16Ψ/64；Ψ ≈ 70.55e9。"),
    solution_text=lambda: (
        f"zero-3：ZeRO-1 每卡 {_states_70b_gb(1):,.1f} GB、ZeRO-2 {_states_70b_gb(2):,.1f} GB，都超过 80 GB"
        f"（ZeRO-2 仍在每张卡上存完整的 bf16 权重 2Ψ ≈ 141 GB）；ZeRO-3 把权重也切成 64 份，只剩 {_states_70b_gb(3):.1f} GB。"
        "这还没算激活：实际训练 70B 时通常再叠加张量/流水线并行。"),
))
