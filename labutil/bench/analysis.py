"""Analysis of measured results: α-β fit of collective times, scaling rows, roofline points.

Pure numpy on the JSON records the harnesses write; used by the labs and by
``labutil.explore.bench``. Nothing here launches a process.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import comm, validate

__all__ = ["collective_arrays", "AlphaBetaFit", "fit_alpha_beta", "roofline_points"]


def collective_arrays(result: dict, block: str = "out_of_place") -> dict:
    """Arrays ``size_bytes``, ``time_s``, ``algbw_gbs``, ``busbw_gbs`` from a collectives result."""
    validate.choice("block", block, ("out_of_place", "in_place"))
    rows = [r for r in result.get("rows", []) if r.get(block)]
    if not rows:
        raise ValueError(f"the result has no rows with a {block!r} block")
    return {"size_bytes": np.array([r["size_bytes"] for r in rows], dtype=float),
            "time_s": np.array([r[block]["time_us"] for r in rows], dtype=float) * 1e-6,
            "algbw_gbs": np.array([r[block]["algbw_gbs"] for r in rows], dtype=float),
            "busbw_gbs": np.array([r[block]["busbw_gbs"] for r in rows], dtype=float)}


# number of α steps and the β multiplier of the flat ring, per op (labutil.comm module table)
def _ring_terms(op: str, n: int) -> tuple[float, float]:
    steps = {"all_reduce": 2 * (n - 1), "all_gather": n - 1, "reduce_scatter": n - 1, "all_to_all": n - 1,
             "broadcast": n - 1}[op]
    return float(steps), float(comm.busbw_factor(op, n))


@dataclass(frozen=True)
class AlphaBetaFit:
    """t(S) = a + b·S fitted to measured times; read through the ring model of ``op`` on ``n`` ranks.

    a (s): the size-independent part; b (s/byte): the per-byte part. For a ring,
    a = steps·α and b = factor/B, so α = a/steps and B = factor/b (B in GB/s is what
    ``labutil.comm.collective_time_s(op, S, n, bw_gbs=B, latency_s=α)`` takes, and also the
    busbw the sweep tends to at large sizes).
    """

    op: str
    n: int
    a_s: float
    b_s_per_byte: float
    latency_s: float
    bw_gbs: float
    r2_log: float
    n_points: int

    def predict_s(self, size_bytes):
        return self.a_s + self.b_s_per_byte * np.asarray(size_bytes, dtype=float)

    def model_s(self, size_bytes):
        """The same times through labutil.comm.collective_time_s (ring) with the fitted α and B."""
        return comm.collective_time_s(self.op, np.asarray(size_bytes, dtype=float), self.n, self.bw_gbs,
                                      self.latency_s, "ring")


def fit_alpha_beta(size_bytes, time_s, op: str = "all_reduce", n: int = 2) -> AlphaBetaFit:
    """Least-squares fit of t = a + b·S, weighted by 1/t (relative error).

    Times span orders of magnitude across a sweep; unweighted least squares would fit only the
    largest sizes and leave α undetermined, so every point counts by its relative error
    (weights 1/t_i). a and b are constrained to a >= 0, b > 0 (a negative a is refitted as a = 0).
    ``r2_log`` is the R² of log t — how well a straight line in S explains the sweep.
    """
    s = np.asarray(validate.positive("size_bytes", size_bytes), dtype=float).ravel()
    t = np.asarray(validate.positive("time_s", time_s), dtype=float).ravel()
    if s.shape != t.shape:
        raise ValueError(f"size_bytes and time_s must have the same length; got {s.size} and {t.size}")
    if s.size < 2 or np.unique(s).size < 2:
        raise ValueError("the fit needs at least 2 distinct sizes")
    n = validate.integer("n", n, lo=2)
    op = comm._op(op)
    if op == "reduce":
        raise ValueError("op 'reduce' is not measured by labutil.bench.collectives; use one of its ops")
    w = 1.0 / t
    A = np.column_stack([np.ones_like(s), s]) * w[:, None]
    (a, b), *_ = np.linalg.lstsq(A, t * w, rcond=None)
    if a < 0:
        a = 0.0
        b = float(np.sum(w * w * s * t) / np.sum(w * w * s * s))
    if not b > 0:
        raise ValueError("the measured times do not grow with size (slope <= 0): sweep larger sizes")
    pred = a + b * s
    lt, lp = np.log(t), np.log(pred)
    ss_res, ss_tot = float(np.sum((lt - lp) ** 2)), float(np.sum((lt - lt.mean()) ** 2))
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0
    steps, factor = _ring_terms(op, n)
    return AlphaBetaFit(op=op, n=n, a_s=float(a), b_s_per_byte=float(b), latency_s=float(a) / steps,
                        bw_gbs=factor / float(b) / 1e9, r2_log=r2, n_points=int(s.size))


def roofline_points(gemm: dict, membw: dict | None = None) -> dict:
    """Measured GEMM points (intensity, TFLOP/s), the measured memory bandwidth and the catalog roof."""
    rows = gemm.get("rows") or []
    if not rows:
        raise ValueError("the gemm result has no rows")
    out = {"intensity": np.array([r["intensity_flop_per_byte"] for r in rows], dtype=float),
           "tflops": np.array([r["tflops"] for r in rows], dtype=float),
           "sizes": [r["m"] for r in rows], "peak_tflops": gemm.get("peak_tflops"),
           "catalog_gpu": gemm.get("catalog_gpu"), "cpu_path": bool(gemm.get("cpu_path")),
           "measured_gbs": None, "datasheet_gbs": None}
    if membw is not None:
        out["measured_gbs"] = membw.get("best_gbs")
        out["datasheet_gbs"] = membw.get("datasheet_gbs")
    return out


# ---------------------------------------------------------------------------------------------
# lab02: how far the straight line t = a + b·S can be trusted
#: the course's rule for predicting a large message from an α-β fit (lab02 question 1): R² of log t at
#: least MIN_R2_FOR_EXTRAPOLATION, and every size in the top of the sweep (>= largest / UPPER_SPAN) within
#: ±MAX_RESIDUAL_PCT of the line — those sizes set the slope b that a large-message prediction rests on
#: (mid-size protocol switches of NCCL may bend the line lower down without affecting it). Not an outside
#: number: when the line misses the sizes it was fitted on by more, a prediction beyond them is a guess.
MIN_R2_FOR_EXTRAPOLATION = 0.95
MAX_RESIDUAL_PCT = 25.0
UPPER_SPAN = 16


def fit_quality(fit: AlphaBetaFit, size_bytes, time_s) -> dict:
    """How well ``fit`` explains the sweep it was fitted on: R² of log t, the residual of every size
    in percent ((measured − line) / line × 100), the worst one overall and in the top of the sweep
    (sizes >= largest / :data:`UPPER_SPAN`), and whether predicting large messages is defensible
    (:data:`MIN_R2_FOR_EXTRAPOLATION`, :data:`MAX_RESIDUAL_PCT`)."""
    s = np.asarray(validate.positive("size_bytes", size_bytes), dtype=float).ravel()
    t = np.asarray(validate.positive("time_s", time_s), dtype=float).ravel()
    if s.shape != t.shape:
        raise ValueError(f"size_bytes and time_s must have the same length; got {s.size} and {t.size}")
    pred = fit.predict_s(s)
    resid = (t - pred) / pred * 100.0
    worst = float(np.max(np.abs(resid)))
    upper = float(np.max(np.abs(resid[s >= s.max() / UPPER_SPAN])))
    ok = fit.r2_log >= MIN_R2_FOR_EXTRAPOLATION and upper <= MAX_RESIDUAL_PCT
    return {"r2_log": float(fit.r2_log), "residual_pct": resid, "max_abs_residual_pct": worst,
            "upper_max_abs_residual_pct": upper,
            "largest_size_residual_pct": float(resid[int(np.argmax(s))]), "extrapolation_ok": bool(ok),
            "rule": f"R^2(log t) >= {MIN_R2_FOR_EXTRAPOLATION} and every size >= largest/{UPPER_SPAN} within "
                    f"+/-{MAX_RESIDUAL_PCT:g} % of the line"}


# ---------------------------------------------------------------------------------------------
# lab04: the copy bandwidth a roofline may use
#: a copy whose source + destination (2·S) fit in the last-level cache runs from the cache; at
#: S >= 4 x LLC, at most a quarter of the source is cache-resident, so the row measures DRAM/HBM
#: (the review's rule for lab04: "the median of the sizes >= 4x the last-level cache").
PLATEAU_LLC_FACTOR = 4


def copy_plateau(membw: dict) -> dict:
    """The DRAM/HBM plateau of a membw result: the median copy bandwidth over the sizes that are at least
    :data:`PLATEAU_LLC_FACTOR` x the last-level cache (``llc_bytes`` in the record); when the cache size
    is unknown or no size is that large, the largest size alone (and ``cache_safe`` False when it is
    below the factor). Never the maximum over all sizes: a cache-resident copy is several times DRAM."""
    rows = [r for r in (membw.get("rows") or []) if isinstance(r, dict)]
    if not rows:
        raise ValueError("the membw result has no rows")
    sizes = np.array([validate.positive("size_bytes", r["size_bytes"]) for r in rows], dtype=float)
    gbs = np.array([validate.positive("copy_gbs", r["copy_gbs"]) for r in rows], dtype=float)
    llc = membw.get("llc_bytes")
    llc = float(llc) if isinstance(llc, (int, float)) and not isinstance(llc, bool) and llc > 0 else None
    if llc is not None and np.any(sizes >= PLATEAU_LLC_FACTOR * llc):
        sel = sizes >= PLATEAU_LLC_FACTOR * llc
        rule = (f"median of the {int(sel.sum())} size(s) >= {PLATEAU_LLC_FACTOR} x LLC = "
                f"{PLATEAU_LLC_FACTOR * llc / 2**20:.0f} MiB (LLC {llc / 2**20:.0f} MiB)")
        safe = True
    else:
        sel = sizes == sizes.max()
        safe = llc is not None and sizes.max() >= PLATEAU_LLC_FACTOR * llc
        rule = ("largest size (last-level cache size unknown)" if llc is None else
                f"largest size, below {PLATEAU_LLC_FACTOR} x LLC = {PLATEAU_LLC_FACTOR * llc / 2**20:.0f} MiB "
                f"(LLC {llc / 2**20:.0f} MiB): may be partly cache")
    return {"gbs": float(np.median(gbs[sel])), "sizes_bytes": [int(x) for x in sizes[sel]], "rule": rule,
            "cache_safe": bool(safe), "max_gbs": float(gbs.max()), "llc_bytes": llc}


# ---------------------------------------------------------------------------------------------
# lab06: is the measured scaling efficiency a result or noise?
#: the widest spread (max − min over alternating repetitions, percentage points) for which lab06
#: states a 2-rank efficiency: 20 points is the gap between a DDP run that scales well (E >= 90 %)
#: and one that does not (E <= 70 %); a spread wider than that cannot tell them apart. A course
#: rule, not an outside number.
MAX_CONCLUSIVE_SPREAD_PTS = 20.0


def efficiency_spread(efficiencies_pct) -> dict:
    """min / median / max / spread (percentage points) of repeated E(N) measurements, in percent, and
    whether they are ``conclusive`` (spread <= :data:`MAX_CONCLUSIVE_SPREAD_PTS` and at least 3 repeats)."""
    e = np.asarray(validate.positive("efficiencies_pct", efficiencies_pct), dtype=float).ravel()
    if e.size < 1:
        raise ValueError("efficiencies_pct must hold at least one value")
    spread = float(e.max() - e.min())
    return {"n": int(e.size), "min_pct": float(e.min()), "median_pct": float(np.median(e)),
            "max_pct": float(e.max()), "spread_pts": spread,
            "conclusive": bool(e.size >= 3 and spread <= MAX_CONCLUSIVE_SPREAD_PTS),
            "rule": f">= 3 repeats and max - min <= {MAX_CONCLUSIVE_SPREAD_PTS:g} percentage points"}
