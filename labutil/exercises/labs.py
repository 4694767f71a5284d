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
from dataclasses import dataclass
from pathlib import Path

from ..validate import closest_names
from .answers import short_repr
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
            return super().grade(given)
        except Exception as exc:  # noqa: BLE001 - the files changed between two reads
            return CheckResult(self.key, "invalid", f"[{self.key}] 还不能判分：{_not_ready(self, exc)}", None, given)

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


def lab01_cores_per_gpu() -> float:
    f = _load("lab01_doctor")["facts"]
    n = len(f["gpu"].get("gpus") or [])
    return float(f["cpu_cores"]) / max(1, n)


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


def lab04_ridge_flop_per_byte() -> float:
    g, m = _load("lab04_gemm"), _load("lab04_membw")
    return g["best_tflops"] * 1e12 / (m["best_gbs"] * 1e9)


def lab04_copy_10gb_ms() -> float:
    m = _load("lab04_membw")
    return 2 * 10e9 / (m["best_gbs"] * 1e9) * 1e3


def lab05_tb_checkpoint_s() -> float:
    from .. import storage

    return float(storage.checkpoint_write_s(1000.0, _load("lab05_storage_io")["sequential"]["write_gbs"]))


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


_Q = [
    ("lab01.1", "How many GPU pairs of YOUR machine are connected by NVLink (doctor's profile; 0 without GPUs)?",
     lab01_nvlink_pairs, "对", 0.0, 0.0, "lab01_doctor",
     ("看 doctor 输出的拓扑矩阵：每个 GPUi-GPUj（i<j）格子以 NV 开头就算一对。", "8 卡 NVSwitch 节点是 C(8,2)=28 对。"),
     "数 `profile['nvlink_pairs']` 的长度：PCIe 机器是 0，8 卡 HGX 是 28。"),
    ("lab01.2", "CPU cores per GPU on YOUR machine (cores / GPUs; with no GPU, divide by 1)?",
     lab01_cores_per_gpu, "核/GPU", 0.02, 0.0, "lab01_doctor",
     ("cpu_cores 除以 GPU 个数。", "第 9 章的经验值是每 GPU ≥ 16 个物理核。"),
     "cpu_cores / max(1, GPU 数)。"),
    ("lab02.1", "With the alpha-beta fit of YOUR all_reduce sweep, predict the time of a 1 GiB all_reduce (ms).",
     lab02_predict_1gib_ms, "ms", 0.05, 0.0, "lab02_all_reduce",
     ("t(S) = a + b·S，S = 2^30 B。", "a、b 都在拟合输出里：fit.a_s 与 fit.b_s_per_byte。"),
     "t = a + b × 1073741824，换成毫秒。注意这是外推：你的扫描最大只到 -e，外推误差随距离增大。"),
    ("lab02.2", "Message size (KiB) at which YOUR sweep reaches half of its large-message bandwidth (a/b).",
     lab02_half_bandwidth_kib, "KiB", 0.05, 0.0, "lab02_all_reduce",
     ("半带宽点：a = b·S，即延迟项等于带宽项。", "S½ = a / b，再除以 1024。"),
     "S½ = a/b（字节）/1024：比它小的消息由延迟主导，比它大的由带宽主导。"),
    ("lab03.1", "Out-of-place time (us) of the SMALLEST message in YOUR lab03 baseline run.",
     lab03_small_message_us, "µs", 0.02, 0.0, "lab03_default",
     ("读表格第一行 out-of-place 的 time 列。",), "就是基线结果第一行的 time（µs）：这近似是该路径的延迟下限。"),
    ("lab03.2", "In YOUR baseline, busbw of the largest message divided by busbw of the smallest (x).",
     lab03_big_over_small_busbw, "倍", 0.03, 0.0, "lab03_default",
     ("最后一行 busbw ÷ 第一行 busbw。",), "比值越大，说明小消息被延迟 α 压得越厉害。"),
    ("lab04.1", "Ridge point of YOUR machine: best GEMM FLOP/s divided by best copy bytes/s (FLOP/byte).",
     lab04_ridge_flop_per_byte, "FLOP/B", 0.03, 0.0, "lab04_gemm",
     ("best_tflops×1e12 ÷ (best_gbs×1e9)。", "算术强度高于它的 kernel 受算力限制，低于它的受带宽限制。"),
     "脊点 = 峰值算力 / 内存带宽，这里两者都用你自己测得的值。"),
    ("lab04.2", "At YOUR measured copy bandwidth, how long does copying 10 GB take (ms)? (copy counts read + write)",
     lab04_copy_10gb_ms, "ms", 0.03, 0.0, "lab04_membw",
     ("copy 带宽按 2·S/t 计：读 S + 写 S。", "t = 2 × 10e9 / (best_gbs × 1e9)。"), "t = 2·S / 带宽。"),
    ("lab05.1", "At YOUR measured sequential write bandwidth (one writer), how long does a 1 TB checkpoint take (s)?",
     lab05_tb_checkpoint_s, "s", 0.03, 0.0, "lab05_storage_io",
     ("1 TB = 1000 GB（十进制）。", "t = 1000 / write_gbs。"), "t = 1000 GB / write_gbs：一个写者写 1 TB 的时间。"),
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
]

# every result file each answer reads (the 'still cannot grade' message names them)
_INPUTS = {"lab03.1": ("lab03_default", "lab03_gloo_baseline"), "lab03.2": ("lab03_default", "lab03_gloo_baseline"),
           "lab04.1": ("lab04_gemm", "lab04_membw"), "lab04.2": ("lab04_membw",),
           "lab06.1": ("lab06_ddp_1r", "lab06_ddp_2r")}

for key, prompt, fn, unit, rtol, atol, result, hints, sol in _Q:
    LAB_EXERCISES[key] = LabExercise(key=key, prompt=prompt, answer=fn, unit=unit, rtol=rtol, atol=atol, hints=hints,
                                     solution_text=sol, result=result, inputs=_INPUTS.get(key, ()))
