"""Chapter 7 exercises: model states, ZeRO, activations and recomputation."""

from .. import memory
from ..models import transformer
from ..parallel import Layout
from . import Exercise, register

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
    prompt="Same 70B model, data parallelism over dp = 64 GPUs with ZeRO-2: model-state memory per GPU in GB?",
    answer=lambda: memory.model_states_gb(transformer("llama3-70b").params(), 64, 2).total_gb,
    unit="GB", rtol=0.02,
    hints=("ZeRO-2 切分优化器状态和梯度，权重仍然每卡一份：2Ψ + (2 + K)Ψ/Nd。",
           "2 × 70.55 GB + 14 × 70.55 GB / 64。"),
    solution_text="2Ψ = 141.1 GB 的权重仍在每张卡上，加上 14Ψ/64 = 15.4 GB，合计 ≈ 156.5 GB：ZeRO-2 也不够，"
                  "要么 ZeRO-3（16Ψ/64 = 17.6 GB），要么张量/流水线并行先把权重切开。",
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
