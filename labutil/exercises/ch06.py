"""Chapter 6 exercises: ridge point, GEMM intensity on the roofline, attention intensity.

Hints and worked solutions quote catalog values and model results computed at import by the same calls
as the answers, so a catalog update cannot leave a stale number in them.
"""

from .. import compute, hardware
from . import BOUND_SYNONYMS, Exercise, register

__all__: list[str] = []  # registers this chapter's exercises when imported (labutil.exercises.exercise(key))


def _roof(gpu: str, intensity: float, precision: str = "bf16") -> float:
    g = hardware.gpu(gpu)
    return compute.roofline_tflops(intensity, g.peak_tflops(precision), g.hbm_gbs)


def _ridge(gpu: str) -> float:
    g = hardware.gpu(gpu)
    return compute.ridge_intensity(g.bf16_tflops, g.hbm_gbs)


_A100, _H100, _H200 = (hardware.gpu(n) for n in ("A100-80G-SXM", "H100-SXM", "H200-SXM"))
_I16 = compute.gemm_intensity(16, 8192, 8192, 2)


def _sol_1() -> str:
    return (f"{_A100.bf16_tflops:g}e12 / {_A100.hbm_gbs:g}e9 ≈ {_ridge('A100-80G-SXM'):.0f} FLOP/byte："
            f"算术强度低于 {_ridge('A100-80G-SXM'):.0f} 的算子在 A100 上都是访存受限。")


def _sol_2() -> str:
    p = _roof("H100-SXM", _I16)
    return (f"I = 2·16·8192·8192 / (2·(16·8192 + 8192² + 16·8192)) ≈ {_I16:.1f} FLOP/byte；"
            f"上限 = {_I16:.2f} × {_H100.hbm_gbs:g}e9 ≈ {p:.1f} TFLOP/s，只有峰值 {_H100.bf16_tflops:g} 的 {p / _H100.bf16_tflops:.1%}。"
            "小批量解码就是这样被显存带宽卡住的。")


def _sol_3() -> str:
    i = compute.attention_intensity(2048, 128, 2, "flash")
    lo = min(_ridge(n) for n in hardware.gpus() if hardware.gpu(n).bf16_tflops > 0)
    hi = max(_ridge(n) for n in hardware.gpus() if hardware.gpu(n).bf16_tflops > 0)
    return (f"4·2048²·128 / (4·2048·128·2) = {i:.0f} FLOP/byte：高于所有目录 GPU 的 BF16 拐点（{lo:.0f}–{hi:.0f}），"
            "融合注意力在长序列上是算力受限的。")


register(Exercise(
    key="ch06.1",
    prompt="Ridge point of the A100-80G-SXM roofline in BF16 (dense peak / HBM bandwidth), FLOP/byte?",
    answer=lambda: compute.ridge_intensity(hardware.gpu("A100-80G-SXM").bf16_tflops, hardware.gpu("A100-80G-SXM").hbm_gbs),
    unit="FLOP/byte", rtol=0.02, kind="by_hand",
    hints=("拐点 = 峰值算力 / 显存带宽，注意单位：TFLOP/s 是 1e12，GB/s 是 1e9。",
           f"{_A100.bf16_tflops:g}e12 / {_A100.hbm_gbs:g}e9。"),
    solution_text=_sol_1(),
))

register(Exercise(
    key="ch06.2",
    prompt=("BF16 GEMM with m=16 (tokens), n=8192, k=8192 on H100-SXM: attainable TFLOP/s according to the roofline "
            "(min of peak and intensity x HBM bandwidth)?"),
    answer=lambda: _roof("H100-SXM", compute.gemm_intensity(16, 8192, 8192, 2)),
    unit="TFLOP/s", rtol=0.02,
    hints=("算术强度 = 2mnk / (2·(mk + kn + mn))。",
           f"强度约 {_I16:.1f} FLOP/byte，远低于 H100 的拐点 {_ridge('H100-SXM'):.0f}，所以上限 = 强度 × {_H100.hbm_gbs:,.0f} GB/s。"),
    solution_text=_sol_2(),
))

register(Exercise(
    key="ch06.3",
    prompt=("Fused (FlashAttention-style) attention prefill, one head, s=2048 tokens, head_dim=128, BF16: "
            "arithmetic intensity in FLOP/byte?"),
    answer=lambda: compute.attention_intensity(2048, 128, 2, "flash"),
    unit="FLOP/byte", rtol=0.02,
    hints=("计算量 4·s²·d（QKᵀ 和 P·V 各 2·s²·d），访存 4·s·d 个元素（读 Q、K、V，写 O）。",
           "强度 = 4s²d / (4sd × 2 字节) = s / 2。"),
    solution_text=_sol_3(),
))


def _why_ch06_4(option: str) -> str:
    """Why ``option`` is the wrong bound: decode attention's intensity against H200's ridge point."""
    g = hardware.gpu("H200-SXM")
    intensity = compute.attention_intensity(8192, 128, 2, "decode")
    ridge = compute.ridge_intensity(g.bf16_tflops, g.hbm_gbs)
    side = "远低于" if intensity < ridge else "高于"
    return (f"解码注意力的算术强度只有约 {intensity:.1f} FLOP/byte，{side} H200 的拐点 {ridge:.0f} FLOP/byte："
            f"每个新 token 要把整个 KV cache 读一遍，每读 2 字节只做约 2 FLOP")


register(Exercise(
    key="ch06.4",
    prompt=("Decode attention (one new token per sequence) on H200-SXM in BF16, no GQA: is it 'memory' or "
            "'compute' bound?"),
    answer=lambda: "memory" if compute.attention_intensity(8192, 128, 2, "decode") < compute.ridge_intensity(
        hardware.gpu("H200-SXM").bf16_tflops, hardware.gpu("H200-SXM").hbm_gbs) else "compute",
    choices=("memory", "compute"), synonyms=BOUND_SYNONYMS, kind="judgement",
    explain=_why_ch06_4,
    hints=("解码时每个新 token 只有 1 个 query，却要把整个 KV cache 读一遍。",
           f"强度约 {compute.attention_intensity(8192, 128, 2, 'decode'):.0f} FLOP/byte，H200 的拐点约 {_ridge('H200-SXM'):.0f} FLOP/byte。"),
    solution_text=(f"强度 ≈ 2 FLOP / 2 字节 = {compute.attention_intensity(8192, 128, 2, 'decode'):.0f} FLOP/byte ≪ "
                   f"{_ridge('H200-SXM'):.0f}：memory（访存受限）。换更大的 HBM 带宽（H200 {_H200.hbm_gbs / 1e3:g} TB/s）才直接变快。"),
))


def _decode_gemm_time_s(gpu: str, precision: str, m: int = 16, n: int = 8192, k: int = 8192) -> float:
    """Roofline time (s) of one m x n x k GEMM on ``gpu`` in ``precision``: FLOPs / attainable FLOP/s."""
    g = hardware.gpu(gpu)
    bpe = compute.bytes_per_element(precision)
    attainable = compute.roofline_tflops(compute.gemm_intensity(m, n, k, bpe), g.peak_tflops(precision), g.hbm_gbs)
    return 2.0 * m * n * k / (attainable * 1e12)


def _why_ch06_5(option: str) -> str:
    """Why ``option`` is the smaller speed-up: both roofline times of the decode GEMM."""
    base = _decode_gemm_time_s("H100-SXM", "bf16")
    times = {"fp8": _decode_gemm_time_s("H100-SXM", "fp8"), "h200": _decode_gemm_time_s("H200-SXM", "bf16")}
    other = "h200" if option == "fp8" else "fp8"
    bw = {g: hardware.gpu(g).hbm_gbs for g in ("H100-SXM", "H200-SXM")}
    what = {"fp8": "把每个元素降到 1 字节",
            "h200": f"只把 HBM 带宽从 {bw['H100-SXM']:,.0f} 提到 {bw['H200-SXM']:,.0f} GB/s"}[option]
    return (f"这个 GEMM 访存受限（强度约 16 FLOP/byte），耗时 ≈ 字节数 / 带宽。这一改法{what}，"
            f"耗时从 {base * 1e6:.1f} µs 降到 {times[option] * 1e6:.1f} µs（×{base / times[option]:.2f}），"
            f"另一种改法降到 {times[other] * 1e6:.1f} µs（×{base / times[other]:.2f}）")


register(Exercise(
    key="ch06.5",
    prompt=("Judgement. A decode GEMM (m=16 tokens, n=k=8192) runs in BF16 on H100-SXM. Which change makes it faster "
            "by the roofline: 'fp8' (same H100, FP8: double peak, 1 byte per element) or 'h200' (H200-SXM, still BF16)?"),
    answer=lambda: "fp8" if _decode_gemm_time_s("H100-SXM", "fp8") < _decode_gemm_time_s("H200-SXM", "bf16") else "h200",
    choices=("fp8", "h200"), synonyms={"fp8": ("FP8",), "h200": ("H200", "H200-SXM")}, kind="judgement",
    explain=_why_ch06_5,
    hints=(f"这个 GEMM 的强度约 {_I16:.0f} FLOP/byte，远低于两张卡的拐点：它是访存受限的，耗时 ≈ 搬运的字节数 / HBM 带宽。",
           f"FP8 让字节数减半（速度 ×2）；H200 让带宽从 {_H100.hbm_gbs:,.0f} 升到 {_H200.hbm_gbs:,.0f} GB/s"
           f"（速度 ×{_H200.hbm_gbs / _H100.hbm_gbs:.2f}）。"),
    solution_text=(f"fp8：访存受限的 GEMM 耗时 = 字节数 / 带宽。FP8 把字节数减半，耗时降到 "
                   f"{_decode_gemm_time_s('H100-SXM', 'fp8') / _decode_gemm_time_s('H100-SXM', 'bf16'):.2f}；"
                   f"换 H200 只把带宽提高 {_H200.hbm_gbs / _H100.hbm_gbs:.2f} 倍，耗时降到 "
                   f"{_decode_gemm_time_s('H200-SXM', 'bf16') / _decode_gemm_time_s('H100-SXM', 'bf16'):.2f}。"
                   "峰值翻倍在这里不起作用——强度翻倍后仍在拐点之下。"),
))
