"""Chapter 18 exercises: samples/s per GPU, CPU cores for decoding, the bottleneck stage.

ch18.3 and ch18.4 share one pipeline (``_pipeline``); hints and solutions are generated from the model.
"""

from .. import dataloading as dl
from .. import hardware
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))
_H100_TFLOPS = hardware.gpu("H100-SXM").bf16_tflops
_TOK_S = dl.llm_tokens_per_s_per_gpu(70e9, _H100_TFLOPS, 0.4)
#: The ResNet-50/A100 pipeline of ch18.3 and ch18.4: 8 cores per GPU, 150 img/s per core, 1 core reserved,
#: 2 GB/s of reads per GPU, 107.7 kB JPEGs.
PIPELINE = dict(cpu_cores_per_gpu=8, decode_samples_per_s_per_core=150.0, read_gbs_per_gpu=2.0)


def _pipeline():
    return dl.pipeline_throughput(dl.RESNET50_A100_IMG_S, dl.IMAGENET_MEAN_JPEG_BYTES,
                                  decoded_sample_bytes=dl.DECODED_224_BYTES, **PIPELINE)


_P = _pipeline()
_CAP = _P.capacities
_CORES = dl.cores_needed_per_gpu(dl.RESNET50_A100_IMG_S, 150.0, 1)

register(Exercise(
    key="ch18.1",
    prompt=("A 70B dense LLM trains on H100-SXM (dense BF16 peak from the catalog) at 40 % MFU with 4,096-token "
            "sequences. Samples (sequences) per second per GPU?"),
    answer=lambda: dl.llm_samples_per_s(dl.llm_tokens_per_s_per_gpu(70e9, hardware.gpu("H100-SXM").bf16_tflops, 0.4),
                                        4096),
    unit="样本/s", rtol=0.02,
    hints=("每个 token 的训练 FLOPs ≈ 6N；tokens/s = MFU × 峰值 / (6N)。",
           f"0.4 × {_H100_TFLOPS:,.1f}e12 / (6 × 70e9) ≈ {_TOK_S:,.0f} tokens/s，再除以 4,096。"),
    solution_text=(f"{_TOK_S:,.0f} tokens/s ÷ 4,096 = {dl.llm_samples_per_s(_TOK_S, 4096):.2f} 样本/s/GPU；按 4 字节/token 只有约 "
                   f"{_TOK_S * 4 / 1e3:.1f} kB/s——LLM 预训练的数据读取几乎不费力。"),
))

register(Exercise(
    key="ch18.2",
    prompt=("ResNet-50 on A100 consumes 2,470 img/s. One core decodes+augments 150 img/s (the chapter's assumption) "
            "and 1 core per GPU is reserved for the training process. CPU cores needed per GPU?"),
    answer=lambda: dl.cores_needed_per_gpu(dl.RESNET50_A100_IMG_S, 150.0, 1),
    kind="by_hand",
    unit="核", rtol=0.02,
    hints=("解码核数 = GPU 消化速率 / 单核速率。", "2,470 / 150 + 1。"),
    solution_text=(f"2,470/150 = {dl.RESNET50_A100_IMG_S / 150:.1f} 核解码 + 1 核训练进程 = {_CORES:.1f} 核/GPU："
                   "视觉训练里「16 核/GPU」恰好是够不够的分界线。"),
))

register(Exercise(
    key="ch18.3",
    prompt=("Same ResNet-50/A100 pipeline (107.7 kB JPEGs, 150 img/s/core, 1 reserved core, 2 GB/s read per GPU) "
            "but only 8 CPU cores per GPU. Share of time the GPU is busy, in percent?"),
    answer=lambda: 100 * _pipeline().gpu_utilization,
    unit="%", rtol=0.02,
    params={"dataloading.pipeline_throughput": {"gpu_samples_per_s": dl.RESNET50_A100_IMG_S, "cpu_cores_per_gpu": 8,
                                              "decode_samples_per_s_per_core": 150.0, "read_gbs_per_gpu": 2.0}},
    hints=("先算每一级的能力：读 = 2e9/107.7e3，解码 = (8−1) × 150，GPU = 2,470。", "最慢的一级决定吞吐；利用率 = 吞吐 / 2,470。"),
    solution_text=(f"解码 7 × 150 = {_CAP['cpu_decode']:,.0f} img/s 是瓶颈，GPU 忙 {_CAP['cpu_decode']:,.0f}/2,470 = "
                   f"{100 * _P.gpu_utilization:.1f}%。"),
))


def _why_ch18_4(option: str) -> str:
    """Why stage ``option`` is not the bottleneck: its capacity against the GPU's demand and the slowest stage."""
    p = dl.pipeline_throughput(dl.RESNET50_A100_IMG_S, dl.IMAGENET_MEAN_JPEG_BYTES, cpu_cores_per_gpu=8,
                               decode_samples_per_s_per_core=150.0, read_gbs_per_gpu=2.0,
                               decoded_sample_bytes=dl.DECODED_224_BYTES)
    cap = p.capacities[option]
    shown = "没有上限" if cap == float("inf") else f"能供 {cap:,.0f} img/s"
    return (f"这一级{shown}，GPU 需要 {p.demand_samples_per_s:,.0f} img/s，"
            f"而整条流水线只交付 {p.throughput_samples_per_s:,.0f} img/s：瓶颈是能力最小的那一级")


register(Exercise(
    key="ch18.4",
    prompt=("Judgement: the ResNet-50/A100 pipeline of ch18.3 (8 CPU cores per GPU). Which stage limits it: "
            "'storage_bw', 'storage_iops', 'cpu_decode', 'h2d_copy' or 'gpu_compute'?"),
    answer=lambda: _pipeline().bottleneck,
    choices=("storage_bw", "storage_iops", "cpu_decode", "h2d_copy", "gpu_compute"),
    synonyms={"cpu_decode": ("decode", "cpu", "解码", "CPU 解码"), "storage_bw": ("storage", "存储带宽"),
              "storage_iops": ("iops",), "h2d_copy": ("h2d", "pcie", "拷贝"), "gpu_compute": ("gpu", "GPU 计算")},
    kind="judgement",
    explain=_why_ch18_4,
    params={"dataloading.pipeline_throughput": {"gpu_samples_per_s": dl.RESNET50_A100_IMG_S, "cpu_cores_per_gpu": 8,
                                              "decode_samples_per_s_per_core": 150.0, "read_gbs_per_gpu": 2.0}},
    hints=(f"每一级的能力：读 2e9 / 107.7e3 ≈ {_CAP['storage_bw']:,.0f} img/s，解码 (8−1) × 150 = {_CAP['cpu_decode']:,.0f} img/s，"
           f"GPU {_CAP['gpu_compute']:,.0f} img/s。",
           "最慢的一级就是瓶颈；修法要对准它（更多 CPU 核或 GPU 解码 DALI）。"),
    solution_text=(f"{_P.bottleneck}：7 个可用核只能解码 {_CAP['cpu_decode']:,.0f} img/s，GPU 要 2,470 img/s。加存储带宽毫无用处，"
                   f"要么每卡给约 {_CORES:.1f} 个核，要么把解码搬到 GPU（NVIDIA DALI）。"),
))
