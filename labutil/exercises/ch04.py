"""Chapter 4 exercises: 6·N·D, Chinchilla tokens, time to train, GPUs for a deadline, MFU."""

from .. import compute, hardware, models
from . import Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))

_H100 = "H100-SXM"
_A100 = "A100-80G-SXM"


def _params(name: str) -> float:
    return float(models.transformer(name).params())


register(Exercise(
    key="ch04.1",
    prompt="Llama-2-70B (preset llama2-70b) trained on 2.0T tokens: training compute 6·N·D in FLOPs?",
    answer=lambda: compute.train_flops(_params("llama2-70b"), 2.0e12),
    kind="by_hand",
    unit="FLOPs", rtol=0.03,
    hints=("N 用 models.transformer('llama2-70b').params()（约 69.0B），D = 2.0e12。",
           "6 × 6.9e10 × 2.0e12 ≈ 8.3e23。"),
    solution_text="C = 6·N·D = 6 × 68.98e9 × 2.0e12 ≈ 8.28e23 FLOPs。",
))

register(Exercise(
    key="ch04.2",
    prompt=("Llama-3-70B (preset llama3-70b) on 15T tokens, 8,192 H100-SXM at MFU 0.40 (BF16 dense peak): "
            "days to train?"),
    answer=lambda: compute.time_to_train_days(compute.train_flops(_params("llama3-70b"), 15e12), 8192,
                                              hardware.gpu(_H100).bf16_tflops, 0.40),
    unit="天", rtol=0.03,
    hints=("先算 C = 6·N·D，N ≈ 70.6e9。",
           "t = C / (N_gpu × 989.4e12 × 0.40)，再除以 86,400 换成天。"),
    solution_text=("C = 6 × 70.55e9 × 15e12 = 6.35e24 FLOPs；集群有效吞吐 8192 × 989.4e12 × 0.40 = 3.24e18 FLOP/s；"
                   "t = 1.96e6 s ≈ 22.7 天（只算计算，不含故障、重启与评测）。"),
))

register(Exercise(
    key="ch04.3",
    prompt=("A compute-optimal (Chinchilla, 20 tokens/param) 70e9-parameter model must finish in 30 days on "
            "A100-80G-SXM at MFU 0.45. Minimum number of GPUs?"),
    answer=lambda: compute.gpus_for_deadline(compute.train_flops(70e9, compute.chinchilla_tokens(70e9)), 30,
                                             hardware.gpu(_A100).bf16_tflops, 0.45),
    unit="张", rtol=0.01,
    hints=("D = 20 × 70e9 = 1.4e12 token，C = 6·N·D。",
           "N_gpu = ceil(C / (30 × 86400 × 312e12 × 0.45))，记得向上取整。"),
    solution_text=("C = 6 × 70e9 × 1.4e12 = 5.88e23；每张 A100 30 天可执行 30 × 86400 × 312e12 × 0.45 = 3.64e20 FLOPs；"
                   "5.88e23 / 3.64e20 = 1615.4 → 至少 1,616 张。实际会取 8 的倍数（整机）并留出故障余量。"),
))

register(Exercise(
    key="ch04.4",
    prompt=("A run of llama3-8b on 512 H100-SXM processes 3.5 million tokens per second. "
            "What is its MFU, in percent?"),
    answer=lambda: 100 * compute.mfu_from_throughput(3.5e6, _params("llama3-8b"), 512, hardware.gpu(_H100).bf16_tflops),
    unit="%", rtol=0.02,
    hints=("模型 FLOP/s = 6 × N × tokens/s。",
           "MFU = 6·N·(tokens/s) / (GPU 数 × 峰值)，峰值 989.4e12 FLOP/s。"),
    solution_text="6 × 8.03e9 × 3.5e6 = 1.69e17 FLOP/s；512 × 989.4e12 = 5.07e17 FLOP/s；MFU = 0.333，即 33.3 %。",
))


def _days_llama3_70b(n_gpus: int) -> float:
    total = 6 * _params("llama3-70b") * 15e12
    return float(compute.time_to_train_days(total, n_gpus, hardware.gpu(_H100).bf16_tflops, 0.40))


def _why_ch04_5(option: str) -> str:
    """Why ``option`` GPUs is not the answer: too slow for the deadline, or not the smallest that meets it."""
    days = _days_llama3_70b(int(option))
    if days > 60:
        return f"{int(option):,} 张卡要 {days:.1f} 天，超过 60 天的期限"
    half = _days_llama3_70b(int(option) // 2)
    return (f"{int(option):,} 张卡要 {days:.1f} 天，满足期限，但题目问的是最小的规模：卡数减半时也只要 {half:.1f} 天 ≤ 60 天")


register(Exercise(
    key="ch04.5",
    prompt=("Judgement: Llama-3-70B (preset llama3-70b) on 15T tokens, H100-SXM at MFU 0.40 (BF16 dense peak), "
            "deadline 60 days. Smallest of '1024', '2048', '4096', '8192' GPUs that meets it?"),
    answer=lambda: next(n for n in ("1024", "2048", "4096", "8192") if _days_llama3_70b(int(n)) <= 60),
    choices=("1024", "2048", "4096", "8192"),
    kind="judgement",
    explain=_why_ch04_5,
    hints=("训练时间 T = 6·N·D / (GPU 数 × 峰值 × MFU)，和 GPU 数成反比。",
           "练习 2 算过：8,192 张卡约 22.7 天。"),
    solution_text=("T(8192) ≈ 22.7 天，所以 T(4096) ≈ 45.3 天 ≤ 60，T(2048) ≈ 90.7 天 > 60：选 4,096 张。"
                   "实际还要再留出故障与重启的余量（第 27 章的 goodput），4,096 张只剩约 25 % 的缓冲。"),
))
