"""What a learner waits for after moving a control, kernel side, for every explorer of the course.

For each ``*_explorer()`` in ``labutil.explore`` (found by name, built with its defaults) and each
of its controls moved to another value and back: the model (``compute``), the redraw of the
artists (``draw``) and the rasterisation + PNG encoding the browser receives (``Explorer.png``,
one Agg draw). ``build`` is construction plus the first PNG (what the learner waits for after
running the cell). Wall time and this thread's CPU time are both recorded: on a busy shared
machine CPU time is the steadier measure, and the 1-minute load average is saved beside them.

``--baseline`` measures the path used before issue 12 instead: the inline backend's
``print_figure(fig, bbox_inches="tight")`` (two full draws plus the Output widget's display).

Targets (issue 12): model + draw + encode median <= 100 ms CPU per explorer (the rest of the
150 ms slider -> figure budget is the comm round trip and the browser's decode, measured end to
end by bench_browser_latency.py), build <= 300 ms CPU. Writes
benchmarks/results/explorer_latency.json (or explorer_latency_baseline.json); exits 1 on a miss.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import pkgutil
import statistics
import sys
import time

from _common import save

TARGET_UPDATE_MS = 100.0
TARGET_BUILD_MS = 300.0


def explorer_factories() -> dict:
    """``"module.name" -> factory`` for every public ``*_explorer`` buildable with its defaults."""
    import labutil.explore as E

    out = {}
    for m in sorted(pkgutil.iter_modules(E.__path__), key=lambda m: m.name):
        mod = importlib.import_module(f"labutil.explore.{m.name}")
        for name, fn in vars(mod).items():
            if (name.endswith("_explorer") and not name.startswith("_") and inspect.isfunction(fn)
                    and fn.__module__ == mod.__name__
                    and all(p.default is not p.empty for p in inspect.signature(fn).parameters.values())):
                out[f"{m.name}.{name}"] = fn
    return out


def control_moves(ex) -> list[dict]:
    """Each control to another value (a third of the way to the far end; the next option) and back."""
    moves = []
    for k, w in ex.controls.items():
        v = w.value
        if getattr(w, "options", None):
            vals = [o[1] if isinstance(o, tuple) else o for o in w.options]
            vals = list(getattr(w, "_options_values", vals))
            nv = vals[(vals.index(v) + 1) % len(vals)] if v in vals else vals[0]
        elif isinstance(v, bool):
            nv = not v
        elif hasattr(w, "min") and isinstance(v, (int, float)):
            nv = v + (w.max - v) / 3 if w.max > v else v - (v - w.min) / 3
            nv = int(round(nv)) if isinstance(v, int) else nv
        else:
            continue
        if nv != v:
            moves += [{k: nv}, {k: v}]
    return moves


def _clock():
    return time.perf_counter(), time.thread_time()


def measure(factory, baseline: bool = False, max_moves: int = 16) -> dict:
    from IPython.core.pylabtools import print_figure

    from labutil.widgets import gc_deferred

    w0, c0 = _clock()
    # The learner's path: Explorer builds, and rasterises when first displayed, with the cyclic
    # garbage collector held (labutil.widgets.gc_deferred); each control move runs under it too.
    with gc_deferred():
        ex = factory()
        png = print_figure(ex.figure, "png", bbox_inches="tight") if baseline else ex.png()
    w1, c1 = _clock()
    rows = []
    for change in control_moves(ex)[:max_moves]:
        ex._batch = True
        try:
            for k, v in change.items():
                ex.controls[k].value = v
        finally:
            ex._batch = False
        values = ex.values()
        with gc_deferred():  # as Explorer._on_change runs a learner's move
            a = _clock()
            try:
                result = ex.compute(**values)
            except (ValueError, KeyError):
                continue  # a combination the model rejects: the learner sees the error, no new figure
            b = _clock()
            ex.result = result
            ex._render() if not baseline else ex.draw(ex.figure, result, values)
            c = _clock()
            png = print_figure(ex.figure, "png", bbox_inches="tight") if baseline else ex.png()
            d = _clock()
        rows.append([(b[i] - a[i], c[i] - b[i], d[i] - c[i], d[i] - a[i]) for i in (0, 1)])
    # A chapter holds its own one to three explorers, not the 33 measured here one after the other:
    # close this one's widgets (ipywidgets keeps every open widget, and through its observers the
    # explorer and its figure, in a global registry) so the next build does not pay for 30 live
    # figures in each garbage collection.
    for w in [*ex.controls.values(), getattr(ex, "_image", None), getattr(ex, "_summary", None)]:
        if w is not None:
            w.close()
    med = lambda i, j: round(1e3 * statistics.median(r[i][j] for r in rows), 1) if rows else None  # noqa: E731
    return {"build_ms": round(1e3 * (w1 - w0), 1), "build_cpu_ms": round(1e3 * (c1 - c0), 1),
            "model_ms": med(0, 0), "draw_ms": med(0, 1), "encode_ms": med(0, 2), "update_ms": med(0, 3),
            "update_cpu_ms": med(1, 3), "encode_cpu_ms": med(1, 2), "moves": len(rows),
            "png_kb": round(len(png) / 1e3, 1), "layouts": getattr(ex, "n_layouts", None)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--baseline", action="store_true", help="measure the inline print_figure path instead")
    p.add_argument("--only", nargs="*", default=None)
    args = p.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    factories = explorer_factories()
    # warm the imports and matplotlib's font cache once, as a notebook's earlier cells have, and
    # freeze what is alive then, as labutil.notebook.setup() does in every chapter's first cell
    next(iter(factories.values()))()
    from labutil.notebook import freeze_startup_objects

    freeze_startup_objects()
    load0 = os.getloadavg()[0]
    rows, ok = {}, True
    print(f"{'explorer':45s} {'build':>7s} {'cpu':>6s} | {'model':>6s} {'draw':>6s} {'encode':>7s} "
          f"{'update':>7s} {'cpu':>6s}  (ms, medians)")
    for name, factory in factories.items():
        if args.only and not any(o in name for o in args.only):
            continue
        try:
            r = measure(factory, baseline=args.baseline)
        except Exception as exc:  # noqa: BLE001 - a broken explorer is reported, the others still measured
            rows[name] = {"error": f"{type(exc).__name__}: {exc}"[:300], "ok": False}
            ok = False
            print(f"{name:45s} ERROR {rows[name]['error']}")
            continue
        r["ok"] = (r["update_cpu_ms"] is not None and r["update_cpu_ms"] <= TARGET_UPDATE_MS
                   and r["build_cpu_ms"] <= TARGET_BUILD_MS)
        ok &= r["ok"]
        rows[name] = r
        print(f"{name:45s} {r['build_ms']:7.0f} {r['build_cpu_ms']:6.0f} | {r['model_ms']:6.1f} {r['draw_ms']:6.1f} "
              f"{r['encode_ms']:7.1f} {r['update_ms']:7.1f} {r['update_cpu_ms']:6.1f}  {'' if r['ok'] else 'MISS'}",
              flush=True)
    load1 = os.getloadavg()[0]
    upd = [r["update_cpu_ms"] for r in rows.values() if r.get("update_cpu_ms") is not None]
    summary = {"median_of_medians_update_cpu_ms": round(statistics.median(upd), 1) if upd else None,
               "worst_update_cpu_ms": max(upd) if upd else None,
               "worst_build_cpu_ms": max((r["build_cpu_ms"] for r in rows.values() if "build_cpu_ms" in r), default=None)}
    print(f"load average (1 min) {load0:.2f} -> {load1:.2f}; {summary}")
    save("explorer_latency_baseline" if args.baseline else "explorer_latency",
         {"path": "inline print_figure(bbox_inches='tight')" if args.baseline else "Explorer.png (one Agg draw with the text-bitmap cache, RGB PNG zlib 1)",
          "target_update_cpu_ms": TARGET_UPDATE_MS, "target_build_cpu_ms": TARGET_BUILD_MS, "ok": ok,
          "summary": summary, "results": rows, "loadavg_1min_before": load0, "loadavg_1min_after": load1,
          "when_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
