"""Self-graded questions of the six labs, on the learner's OWN measurements.

Each answer is computed from the result file the lab wrote in ``labs/_runs/`` (the same numbers
the learner reads off the notebook's output), through the course's analysis functions — never a
stored number. Until the measurement cell has run, ``check`` explains what to run first instead
of grading. In a lab notebook::

    from labutil.exercises.labs import lab_exercise
    answer_1 = None
    lab_exercise("lab02.1").check(answer_1)

The keys are ``labNN.k``. They use the registry's ``Exercise`` / ``CheckResult`` API (check, hint,
solution) but live in their own table, ``LAB_EXERCISES``, not in the chapters' registry: a chapter
exercise's answer is computable anywhere (``tests/test_exercises.py`` grades every registered one),
a lab answer only after the learner's measurement exists. ``tests/test_lab_exercises.py`` tests them
on result files it writes.

A wrong answer points to ``lab_exercise("labNN.k").hint(1)`` (the lab API, not ``exercise``). Shares are
answered in percent, as everywhere in the course (:data:`labutil.exercises.PERCENT_CONVENTION`).
``grade``, ``check`` and ``solution`` never raise on a result file that is missing, a directory, empty,
binary, not JSON, not an object, or holds the wrong types, no rows or NaN: they say which file to
measure again (robustness review R7).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from ..validate import closest_names
from .answers import read_number, short_repr
from .feedback import CheckResult
from .registry import Exercise, ExerciseKeyError, normalise_key

__all__ = ["RUNS", "ResultFileError", "LabExercise", "LAB_EXERCISES", "lab_exercise", "lab01_nvlink_pairs",
           "lab01_cores_per_gpu", "lab02_predict_1gib_ms", "lab02_half_bandwidth_kib", "lab03_small_message_us",
           "lab03_big_over_small_busbw", "lab04_ridge_flop_per_byte", "lab04_copy_10gb_ms", "lab05_tb_checkpoint_s",
           "lab05_save_over_write", "lab06_efficiency_2", "lab06_comm_fraction_2"]

RUNS = Path(__file__).resolve().parents[2] / "labs" / "_runs"


class ResultFileError(ValueError):
    """A lab result file that is missing or cannot be read as the harness wrote it (the message says which)."""


_RERUN = "重新运行本实验上面的测量单元格"


def _load(name: str) -> dict:
    """The JSON object of ``labs/_runs/<name>.json``; :class:`ResultFileError` if it is absent or unreadable."""
    p = RUNS / f"{name}.json"
    where = f"labs/_runs/{name}.json"
    if not p.exists():
        raise ResultFileError(f"找不到你的测量结果 {where}：先运行本实验上面的测量单元格")
    if not p.is_file():
        raise ResultFileError(f"{where} 不是一个文件（是目录？）：删掉它，{_RERUN}")
    try:
        data = json.loads(p.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ResultFileError(f"{where} 读不出来或不是 JSON（{type(exc).__name__}）：{_RERUN}") from None
    if not isinstance(data, dict):
        raise ResultFileError(f"{where} 应是一个 JSON 对象，里面却是 {type(data).__name__}：{_RERUN}")
    return data


def _not_ready(ex: "LabExercise", exc: BaseException) -> str:
    """Why ``ex`` cannot be graded yet, naming the file(s) to measure again (never the traceback)."""
    if isinstance(exc, ResultFileError):
        return str(exc)
    files = " 或 ".join(f"labs/_runs/{n}.json" for n in ex.files())
    return f"你的测量结果 {files} 不完整或格式不对（{type(exc).__name__}）：{_RERUN}"


@dataclass(frozen=True)
class LabExercise(Exercise):
    """An exercise whose reference answer comes from the learner's result file(s)."""

    result: str = ""
    inputs: tuple[str, ...] = ()   # every result file the answer reads (``result`` when empty)
    #: zero-argument callable: a caveat about the learner's own data ('' when none), appended to every
    #: graded answer — e.g. lab06 says when the repeats' spread is too wide to support a conclusion
    note: object = None
    #: zero-argument callable returning ``[(value, why), ...]``: what a WRONG answer equals when the learner
    #: made a known mistake with their own numbers (lab04: the cache row instead of the plateau), and the
    #: sentence that names the mistake (never the reference value). A trap that coincides with the
    #: reference on this learner's data is ignored.
    traps: object = None

    lookup_name = "lab_exercise"

    def files(self) -> tuple[str, ...]:
        return self.inputs or (self.result,)

    def _reference(self):
        """(reference, None) or (None, why it cannot be computed from the learner's files)."""
        try:
            return self.expected(), None
        except Exception as exc:  # noqa: BLE001 - any damage in the learner's file is a message, never a traceback
            return None, _not_ready(self, exc)

    def grade(self, given) -> CheckResult:
        if given is None or given is Ellipsis or (isinstance(given, str) and not given.strip()):
            return super().grade(given)
        _, why = self._reference()
        if why is not None:
            return CheckResult(self.key, "invalid", f"[{self.key}] 还不能判分：{why}", None, given)
        try:
            res = super().grade(given)
        except Exception as exc:  # noqa: BLE001 - the files changed between two reads
            return CheckResult(self.key, "invalid", f"[{self.key}] 还不能判分：{_not_ready(self, exc)}", None, given)
        if res.status == "wrong" and self.traps is not None:
            why = self._trap(given)
            if why:
                res = replace(res, message=f"{res.message}\n看起来{why}")
        if self.note is not None and res.status in ("correct", "wrong"):
            try:
                extra = self.note()
            except Exception:  # noqa: BLE001 - a caveat must never turn a grade into a traceback
                extra = ""
            if extra:
                res = replace(res, message=f"{res.message}\n注意：{extra}")
        return res

    def _trap(self, given) -> str:
        """The known mistake ``given`` matches on this learner's data ('' when none)."""
        try:
            value = read_number(given, self.unit).value
            ref = float(self.expected())
            traps = list(self.traps())
        except Exception:  # noqa: BLE001 - a trap is a courtesy: never a traceback
            return ""
        if value is None:
            return ""
        tol = max(self.rtol, 0.01)
        for trap, why in traps:
            trap = float(trap)
            if abs(trap - ref) <= tol * abs(ref) + self.atol:  # the mistake changes nothing here
                continue
            if abs(value - trap) <= tol * abs(trap) + self.atol:
                return why
        return ""

    def solution_report(self) -> str:
        _, why = self._reference()
        if why is not None:
            return f"[{self.key}] 还不能给出参考答案：{why}\n{self.solution_body()}".rstrip()
        return super().solution_report()


LAB_EXERCISES: dict[str, "LabExercise"] = {}


def lab_exercise(key: str) -> Exercise:
    """The lab exercise ``key`` (e.g. 'lab02.1'; case and width do not matter); KeyError naming the closest keys."""
    norm = normalise_key(key) if isinstance(key, str) else key
    if norm not in LAB_EXERCISES:
        shown = short_repr(key)
        close = closest_names(str(norm)[:40], LAB_EXERCISES)
        near = f" Closest: {', '.join(close)}." if close else ""
        raise ExerciseKeyError(f"unknown lab exercise {shown}.{near} Keys look like 'lab02.1' "
                               f"({', '.join(sorted(LAB_EXERCISES)[:2])} ... {sorted(LAB_EXERCISES)[-1]}).")
    return LAB_EXERCISES[norm]


# ----------------------------------------------------------------------------- answers
def _profile() -> dict:
    return _load("lab01_doctor")["facts"].get("profile") or {}


def lab01_nvlink_pairs() -> float:
    return float(len(_profile().get("nvlink_pairs") or []))


def lab01_ram_per_gpu_gb() -> float:
    f = _load("lab01_doctor")["facts"]
    n = len(f["gpu"].get("gpus") or [])
    return float(f["ram_gb"]) / max(1, n)


def lab01_cores_per_gpu() -> float:
    """PHYSICAL cores per GPU (the unit of the seed course's "16 cores per GPU" rule, ch09); the logical
    CPU count where doctor could not read the physical one."""
    f = _load("lab01_doctor")["facts"]
    n = len(f["gpu"].get("gpus") or [])
    return float(f.get("cpu_physical_cores") or f["cpu_cores"]) / max(1, n)


def _fit(name: str):
    from ..bench import analysis

    r = _load(name)
    arr = analysis.collective_arrays(r)
    return analysis.fit_alpha_beta(arr["size_bytes"], arr["time_s"], r["op"], r["world_size"])


def lab02_predict_1gib_ms() -> float:
    return float(_fit("lab02_all_reduce").predict_s(2**30)) * 1e3


def lab02_half_bandwidth_kib() -> float:
    f = _fit("lab02_all_reduce")
    return f.a_s / f.b_s_per_byte / 1024


def lab02_fit_bw_gbs() -> float:
    return float(_fit("lab02_all_reduce").bw_gbs)


def lab02_fit_note() -> str:
    """Question 1 extrapolates the fit 64x beyond a CPU sweep: say when the fit cannot carry that."""
    from ..bench import analysis

    r = _load("lab02_all_reduce")
    arr = analysis.collective_arrays(r)
    fit = analysis.fit_alpha_beta(arr["size_bytes"], arr["time_s"], r["op"], r["world_size"])
    q = analysis.fit_quality(fit, arr["size_bytes"], arr["time_s"])
    if q["extrapolation_ok"]:
        return ""
    return (f"你的拟合 R²(log t) = {q['r2_log']:.2f}，扫描上端（≥ 最大尺寸的 1/{analysis.UPPER_SPAN}）的最大残差 "
            f"{q['upper_max_abs_residual_pct']:.0f} %（可信的门槛：R² ≥ {analysis.MIN_R2_FOR_EXTRAPOLATION:g} 且上端残差都在 "
            f"±{analysis.MAX_RESIDUAL_PCT:g} % 以内）：这个 1 GiB 预测只是直线上的算术，不是可信的预言。")


def _lab03_baseline() -> dict:
    for name in ("lab03_default", "lab03_gloo_baseline"):
        if (RUNS / f"{name}.json").exists():
            return _load(name)
    return _load("lab03_default")


def lab03_small_message_us() -> float:
    r = _lab03_baseline()
    return float(r["rows"][0]["out_of_place"]["time_us"])


def lab03_big_over_small_busbw() -> float:
    r = _lab03_baseline()
    return float(r["rows"][-1]["out_of_place"]["busbw_gbs"] / r["rows"][0]["out_of_place"]["busbw_gbs"])


def lab03_inplace_gap_pct() -> float:
    """|in-place − out-of-place| / out-of-place time at the largest size, in percent: the same
    operation measured twice, i.e. the noise floor below which two settings cannot be told apart."""
    r = _lab03_baseline()
    row = r["rows"][-1]
    t_out, t_in = float(row["out_of_place"]["time_us"]), float(row["in_place"]["time_us"])
    if not t_out > 0:
        raise ValueError("out-of-place time must be > 0")
    return 100.0 * abs(t_in - t_out) / t_out


def lab04_plateau_gbs() -> float:
    """The DRAM/HBM plateau of the learner's copy sweep (never a cache-resident row)."""
    from ..bench import analysis

    return analysis.copy_plateau(_load("lab04_membw"))["gbs"]


def lab04_ridge_flop_per_byte() -> float:
    g = _load("lab04_gemm")
    return float(g["best_tflops"]) * 1e12 / (lab04_plateau_gbs() * 1e9)


def lab04_copy_10gb_ms() -> float:
    return 2 * 10e9 / (lab04_plateau_gbs() * 1e9) * 1e3


#: arithmetic intensity of lab04 question 3 (FLOP/byte): an fp32 kernel doing 8 FLOP per 4-byte
#: element read and written once (2 x 4 B) — an elementwise polynomial, a typical fused activation
LAB04_Q3_INTENSITY = 1.0


def lab04_attainable_tflops() -> float:
    """min(P, I x B) on the learner's own roofline at I = LAB04_Q3_INTENSITY."""
    g = _load("lab04_gemm")
    return min(float(g["best_tflops"]), LAB04_Q3_INTENSITY * lab04_plateau_gbs() * 1e9 / 1e12)


def lab05_tb_checkpoint_s() -> float:
    from .. import storage

    return float(storage.checkpoint_write_s(1000.0, _load("lab05_storage_io")["sequential"]["write_gbs"]))


def lab05_writers_for_70b_in_60s() -> float:
    """Writers needed to write the 70B full checkpoint (ch17: 14 B/param) in <= 60 s, each at the
    learner's single-writer bandwidth (assumes the file system's aggregate limit is not reached)."""
    import math

    from .. import storage

    w = float(_load("lab05_storage_io")["sequential"]["write_gbs"])
    if not w > 0:
        raise ValueError("write_gbs must be > 0")
    return float(math.ceil(storage.checkpoint_gb(70e9) / (60.0 * w) - 1e-9))


def lab05_save_over_write() -> float:
    """torch.save bandwidth as a percent of the sequential write bandwidth."""
    io = _load("lab05_storage_io")
    return 100.0 * io["checkpoint"]["save_gbs"] / io["sequential"]["write_gbs"]


def lab06_efficiency_2() -> float:
    from ..bench.ddp import scaling_efficiency

    rows = scaling_efficiency([_load("lab06_ddp_1r"), _load("lab06_ddp_2r")])
    return 100.0 * float([e for e in rows if e["world_size"] == 2][0]["efficiency"])


def lab06_comm_fraction_2() -> float:
    r = _load("lab06_ddp_2r")
    return 100.0 * float(r["comm_s_per_step"] / r["step_s"])


def _lab06_spread() -> dict:
    from ..bench import analysis

    reps = _load("lab06_ddp_2r").get("repeats")
    if not isinstance(reps, list) or not reps:
        raise ResultFileError("labs/_runs/lab06_ddp_2r.json 没有 repeats（交替重复的记录）：用本实验的测量单元格重新测量")
    return analysis.efficiency_spread([100.0 * float(x["efficiency"]) for x in reps])


def lab06_spread_pts() -> float:
    return float(_lab06_spread()["spread_pts"])


def lab06_noise_note() -> str:
    """The conclusion lab06's numbers cannot carry, when the repeats disagree."""
    try:
        sp = _lab06_spread()
    except (ResultFileError, KeyError, TypeError, ValueError):
        return "你的结果里没有交替重复的记录，无法判断这个 E(2) 有多可靠。"
    if sp["conclusive"]:
        return ""
    return (f"你的 {sp['n']} 次交替重复里 E(2) 从 {sp['min_pct']:.0f} % 到 {sp['max_pct']:.0f} %"
            f"（跨度 {sp['spread_pts']:.0f} 个百分点，可下结论的上限是 20）：这个数字由噪声决定，"
            f"不能据此说 DDP 扩展得好或不好。")


# ----------------------------------------------------------------------------- known mistakes (traps)
def _lab01_traps():
    f = _load("lab01_doctor")["facts"]
    n = max(1, len(f["gpu"].get("gpus") or []))
    return [(float(f["cpu_cores"]) / n, "你用的是逻辑核数（超线程的两个逻辑核被算成了两个核）：经验值数的是物理核。")]


def _lab02_traps():
    f = _fit("lab02_all_reduce")
    return [(float(f.predict_s(1e9)) * 1e3, "你用的是 10^9 字节；1 GiB = 2^30 = 1,073,741,824 字节。"),
            (float(f.b_s_per_byte * 2**30) * 1e3, "你只算了带宽项 b·S，漏了固定开销 a。")]


def _lab02_half_traps():
    f = _fit("lab02_all_reduce")
    return [(f.latency_s / f.b_s_per_byte / 1024, "你用的是每步延迟 α，而不是整次调用的固定开销 a = 2(n−1)α。")]


def _lab04_max_gbs() -> float:
    from ..bench import analysis

    return float(analysis.copy_plateau(_load("lab04_membw"))["max_gbs"])


_CACHE_ROW = "你用的是最快的那一行（拷贝在缓存里完成），而不是 DRAM/HBM 的平台值（`copy plateau` 一行）。"


def _lab04_ridge_traps():
    g = _load("lab04_gemm")
    return [(float(g["best_tflops"]) * 1e12 / (_lab04_max_gbs() * 1e9), _CACHE_ROW)]


def _lab04_copy_traps():
    return [(10e9 / (lab04_plateau_gbs() * 1e9) * 1e3, "你只算了一次（读或写）；拷贝要读 10 GB 再写 10 GB，带宽按 2·S/t 计。"),
            (2 * 10e9 / (_lab04_max_gbs() * 1e9) * 1e3, _CACHE_ROW)]


def _lab04_roof_traps():
    g = _load("lab04_gemm")
    return [(min(float(g["best_tflops"]), LAB04_Q3_INTENSITY * _lab04_max_gbs() * 1e9 / 1e12), _CACHE_ROW)]


def _lab05_traps():
    io = _load("lab05_storage_io")
    return [(100.0 * io["sequential"]["write_gbs"] / io["checkpoint"]["save_gbs"], "你把比值倒过来了：题目问 save ÷ write。"),
            (100.0 * io["sequential"]["read_gbs"] / io["checkpoint"]["save_gbs"] if io["sequential"]["read_gbs"] else 0.0,
             "你用的是读带宽；题目比较的是写：save ÷ 顺序写。")]


_Q = [
    ("lab01.1", "How many GPU pairs of YOUR machine are connected by NVLink (doctor's profile; 0 without GPUs)?",
     lab01_nvlink_pairs, "对", 0.0, 0.0, "lab01_doctor",
     ("看 doctor 输出的拓扑矩阵：每个 GPUi-GPUj（i<j）格子以 NV 开头就算一对。", "8 卡 NVSwitch 节点是 C(8,2)=28 对。"),
     "数 `profile['nvlink_pairs']` 的长度：PCIe 机器是 0，8 卡 HGX 是 28。"),
    ("lab01.2", "PHYSICAL CPU cores per GPU on YOUR machine (physical cores / GPUs; with no GPU, divide by 1)?",
     lab01_cores_per_gpu, "核/GPU", 0.02, 0.0, "lab01_doctor",
     ("doctor 第一段的 CPU cores 一行有逻辑核与物理核两个数：用物理核（超线程的两个逻辑核算一个），除以 GPU 个数。",
      "第 9 章的经验值是每 GPU ≥ 16 个物理核；DGX H100 是 112 ÷ 8 = 14。"),
     "物理核数 / max(1, GPU 数)（doctor 读不到物理核时用逻辑核数）：按逻辑核算，DGX H100 会被算成 28，比真实的 14 多一倍。"),
    ("lab01.3", "Host RAM per GPU on YOUR machine in GB (doctor's RAM / GPUs; with no GPU, divide by 1)?",
     lab01_ram_per_gpu_gb, "GB/卡", 0.02, 0.0, "lab01_doctor",
     ("doctor 第一段的 RAM（GB，十进制）除以 GPU 个数。", "8 卡 DGX H100 的 2 TB 内存是每卡约 270 GB。"),
     "ram_gb / max(1, GPU 数)：内存要装下数据加载的缓冲、pinned memory 与 CPU offload 的状态。"),
    ("lab02.1", "With the alpha-beta fit of YOUR all_reduce sweep, predict the time of a 1 GiB all_reduce (ms).",
     lab02_predict_1gib_ms, "ms", 0.05, 0.0, "lab02_all_reduce",
     ("t(S) = a + b·S，S = 2^30 B。", "a、b 都在拟合输出里：fit.a_s 与 fit.b_s_per_byte。"),
     "t = a + b × 1073741824，换成毫秒。注意这是外推：你的扫描最大只到 -e，外推误差随距离增大。"),
    ("lab02.2", "Message size (KiB) at which YOUR sweep reaches half of its large-message bandwidth (a/b).",
     lab02_half_bandwidth_kib, "KiB", 0.02, 0.0, "lab02_all_reduce",
     ("半带宽点：a = b·S，即延迟项等于带宽项。", "S½ = a / b，再除以 1024。"),
     "S½ = a/b（字节）/1024：比它小的消息由延迟主导，比它大的由带宽主导。"),
    ("lab02.3", "The bandwidth B of YOUR alpha-beta fit (GB/s, B = factor / b).",
     lab02_fit_bw_gbs, "GB/s", 0.03, 0.0, "lab02_all_reduce",
     ("拟合输出里的 B：fit.bw_gbs。", "B = 2(n−1)/n ÷ b，再换算成 GB/s（1e9 B/s）。"),
     "B 是拟合直线斜率换算出的带宽。直线模型成立时它接近表中最大消息的 busbw（大消息时 busbw → B）；"
     "相差很远说明你的机器上有两种机制（例如 CPU 路径上消息超出缓存后变慢），B 只描述拟合权重最大的那一段。"),
    ("lab03.1", "Out-of-place time (us) of the SMALLEST message in YOUR lab03 baseline run.",
     lab03_small_message_us, "µs", 0.02, 0.0, "lab03_default",
     ("读表格第一行 out-of-place 的 time 列。",), "就是基线结果第一行的 time（µs）：这近似是该路径的延迟下限。"),
    ("lab03.2", "In YOUR baseline, busbw of the largest message divided by busbw of the smallest (x).",
     lab03_big_over_small_busbw, "倍", 0.03, 0.0, "lab03_default",
     ("最后一行 busbw ÷ 第一行 busbw。",
      "表里 busbw 只印两位小数，小消息会显示 0.00：用 (S_大 / t_大) ÷ (S_小 / t_小) 计算，busbw 的系数在比值里约掉。"),
     "比值越大，说明小消息被延迟 α 压得越厉害。"),
    ("lab03.3", "In YOUR baseline, at the largest size: |in-place time - out-of-place time| as a percent of the "
                "out-of-place time.",
     lab03_inplace_gap_pct, "%", 0.05, 0.5, "lab03_default",
     ("读表格最后一行的两个 time 列。", "|t_in − t_out| ÷ t_out × 100。"),
     "同一个操作测了两次：二者之差就是这台机器的噪声下限，两个设置的差别小于它时不能归因于环境变量。"),
    ("lab04.1", "Ridge point of YOUR machine: best GEMM FLOP/s divided by YOUR copy-bandwidth PLATEAU (DRAM/HBM, "
                "not a cache-resident size) in bytes/s (FLOP/byte).",
     lab04_ridge_flop_per_byte, "FLOP/B", 0.03, 0.0, "lab04_gemm",
     ("best_tflops×1e12 ÷ (平台带宽×1e9)；平台带宽是输出里 'plateau' 那一行（membw 的 best_gbs），不是最快的一行。",
      "算术强度高于它的 kernel 受算力限制，低于它的受带宽限制。"),
     "脊点 = 峰值算力 / 内存带宽，这里两者都用你自己测得的值；带宽用 DRAM/HBM 平台值（≥ 4 倍末级缓存的尺寸的中位数）。"),
    ("lab04.2", "At YOUR copy-bandwidth plateau, how long does copying 10 GB take (ms)? (copy counts read + write)",
     lab04_copy_10gb_ms, "ms", 0.03, 0.0, "lab04_membw",
     ("copy 带宽按 2·S/t 计：读 S + 写 S。", "t = 2 × 10e9 / (平台带宽 × 1e9)。"), "t = 2·S / 平台带宽。"),
    ("lab04.3", "On YOUR measured roofline (best GEMM and copy plateau), the attainable TFLOP/s of a kernel with "
                "arithmetic intensity 1 FLOP/byte.",
     lab04_attainable_tflops, "TFLOP/s", 0.03, 0.0, "lab04_gemm",
     ("roofline：可达性能 = min(P, I × B)。", "I = 1 FLOP/B，B 用平台带宽；换成 TFLOP/s（CPU 上是零点零几）。"),
     "min(best_tflops, 1 × 平台带宽 × 1e9 / 1e12)：强度低于脊点的 kernel 只能跑到带宽允许的速度。"),
    ("lab05.1", "At YOUR measured sequential write bandwidth (one writer), how long does a 1 TB checkpoint take (s)?",
     lab05_tb_checkpoint_s, "s", 0.03, 0.0, "lab05_storage_io",
     ("1 TB = 1000 GB（十进制）。", "t = 1000 / write_gbs。"), "t = 1000 GB / write_gbs：一个写者写 1 TB 的时间。"),
    ("lab05.3", "How many writers, each at YOUR single-writer write bandwidth, write the 70B full checkpoint "
                "(14 B/param) in at most 60 s? (assume the file system's aggregate limit is not reached)",
     lab05_writers_for_70b_in_60s, "个", 0.0, 0.01, "lab05_storage_io",
     ("70B × 14 B = 980 GB（第 17 章）。", "写者数 = ⌈980 / (60 × write_gbs)⌉，向上取整。"),
     "⌈980 GB / (60 s × 单写者带宽)⌉：真实集群上还要核对文件系统的聚合上限（第 16 章）。"),
    ("lab05.2", "YOUR torch.save bandwidth as a percent of YOUR sequential write bandwidth.",
     lab05_save_over_write, "%", 0.03, 0.0, "lab05_storage_io",
     ("checkpoint.save_gbs ÷ sequential.write_gbs，再乘 100。",),
     "100 × save_gbs / write_gbs：低于 100 % 说明序列化与小张量的开销吃掉了一部分带宽。"),
    ("lab06.1", "Scaling efficiency E(2) of YOUR DDP runs in percent (samples/s at 2 ranks / (2 x samples/s at 1 rank)).",
     lab06_efficiency_2, "%", 0.03, 0.0, "lab06_ddp_2r",
     ("E(N) = 吞吐(N) / (N × 吞吐(1))，再乘 100。",), "用你的 1 rank 与 2 rank 结果按定义计算，填百分数（80 % 填 80）。"),
    ("lab06.2", "In YOUR 2-rank run, exposed communication as a percent of the step time.",
     lab06_comm_fraction_2, "%", 0.03, 0.0, "lab06_ddp_2r",
     ("comm_s_per_step ÷ step_s，再乘 100。",), "暴露通信 = 同步步时 − no_sync 步时；它占步时的百分比就是通信没被计算遮住的部分。"),
    ("lab06.3", "Spread of YOUR repeated E(2) measurements: max - min over the alternating repeats, in percentage points.",
     lab06_spread_pts, "个百分点", 0.03, 0.5, "lab06_ddp_2r",
     ("测量单元格打印了每次重复的 E(2)。", "最大值 − 最小值，单位是百分点（97 % 与 31 % 相差 66 个百分点）。"),
     "跨度超过 20 个百分点时，这组测量分不出「扩展良好（≥ 90 %）」与「扩展差（≤ 70 %）」，不能下结论。"),
]

# every result file each answer reads (the 'still cannot grade' message names them)
_INPUTS = {"lab03.1": ("lab03_default", "lab03_gloo_baseline"), "lab03.2": ("lab03_default", "lab03_gloo_baseline"),
           "lab03.3": ("lab03_default", "lab03_gloo_baseline"),
           "lab04.1": ("lab04_gemm", "lab04_membw"), "lab04.2": ("lab04_membw",),
           "lab04.3": ("lab04_gemm", "lab04_membw"),
           "lab06.1": ("lab06_ddp_1r", "lab06_ddp_2r")}
# caveats about the learner's own data, appended to every graded answer
_NOTES = {"lab02.1": lab02_fit_note, "lab06.1": lab06_noise_note, "lab06.2": lab06_noise_note}
# known mistakes a wrong answer is checked against
_TRAPS = {"lab01.2": _lab01_traps, "lab02.1": _lab02_traps, "lab02.2": _lab02_half_traps, "lab04.1": _lab04_ridge_traps,
          "lab04.2": _lab04_copy_traps, "lab04.3": _lab04_roof_traps, "lab05.2": _lab05_traps}

for key, prompt, fn, unit, rtol, atol, result, hints, sol in _Q:
    LAB_EXERCISES[key] = LabExercise(key=key, prompt=prompt, answer=fn, unit=unit, rtol=rtol, atol=atol, hints=hints,
                                     solution_text=sol, result=result, inputs=_INPUTS.get(key, ()),
                                     note=_NOTES.get(key), traps=_TRAPS.get(key))
