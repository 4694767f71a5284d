"""Explorer and figures for layered fault localisation (ch28).

- ``triage_explorer()``: pick a case study, toggle which evidence is available -> the decision path
  of :func:`labutil.troubleshoot.diagnose` drawn as a layered flow (network -> storage -> GPU ->
  software) with pass / warn / fail colours, and the cost of the layered order vs a random order
  of the same checks (minutes and expected number of checks, :func:`troubleshoot.search_cost`).
- ``decision_path_figure(case)``: the same flow for one case, all its evidence.
- ``search_cost_figure()``: layered vs random search time for every shipped case.
- ``network_slowdown_figure()``: step-time increase vs measured/expected busbw for a workload.
- ``incident_explorer()``: pick an incident walkthrough (public thread), tick off pieces of its
  evidence -> :func:`labutil.troubleshoot.triage` re-scores the four layers; bars show each layer's
  score, the verdict and the confidence, the summary quotes the deciding lines and the next checks.
- ``incident_scores_figure(name)``: layer scores with all evidence vs without the deciding item.
- ``walkthrough_confidence_figure()``: per walkthrough, the obvious layer, the verdict and its confidence.
Axis labels in English with units. Artists are created once and only recoloured (fast redraw).
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import FancyBboxPatch, Patch

from .. import troubleshoot as T
from ..plotting import PALETTE, figure_cache, new_figure
from ..widgets import Explorer, dropdown, toggle

__all__ = ["VERDICT_COLORS", "check_states", "triage_model", "triage_explorer", "decision_path_figure",
           "search_cost_figure", "network_slowdown_figure", "incident_model", "incident_explorer",
           "incident_scores_figure", "walkthrough_confidence_figure"]

VERDICT_COLORS = {"pass": "#9fd89f", "warn": "#ffc36b", "fail": "#f08080", "not_run": "#e6e6e6",
                  "missing": "#ffffff"}
_LAYER_LABELS = {"network": "1 network", "storage": "2 storage", "gpu": "3 GPU", "software": "4 software"}


def _positions():
    """(x, y) of each check box: one column per layer, checks top-down in ladder order."""
    pos = {}
    for li, layer in enumerate(T.LAYERS):
        specs = [s for s in T.CHECKS if s.layer == layer]
        for j, s in enumerate(specs):
            pos[s.name] = (li, 3 - j)
    return pos


def check_states(diagnosis, evidence_keys) -> dict:
    """check name -> 'pass'/'warn'/'fail'/'not_run'/'missing' for every check of the ladder."""
    ran = {c.name: c.verdict for lr in diagnosis.layers for c in lr.checks}
    keys = set(evidence_keys)
    out = {}
    for s in T.CHECKS:
        if s.name in ran:
            out[s.name] = ran[s.name]
        elif not all(k in keys for k in s.evidence):
            out[s.name] = "missing"
        else:
            out[s.name] = "not_run"
    return out


def triage_model(case: str = "degraded_rail", **available) -> dict:
    """Diagnose ``case`` with the evidence whose toggle is on (keys of troubleshoot.EVIDENCE)."""
    c = T.case(case)
    keys = [k for k in c.get("evidence", {}) if available.get(k, True)]
    d = T.diagnose_case(case, keys)
    return {"diagnosis": d, "states": check_states(d, keys), "case": case, "keys": keys,
            "root_layer": c["root_layer"]}


def _build_flow(ax):
    pos = _positions()
    ax.set_xlim(-0.55, len(T.LAYERS) - 0.45)
    ax.set_ylim(-0.6, 4.6)
    ax.axis("off")
    boxes, texts, heads = {}, {}, {}
    for li, layer in enumerate(T.LAYERS):
        heads[layer] = ax.text(li, 4.25, _LAYER_LABELS[layer], ha="center", va="center", fontsize=10,
                               fontweight="bold",
                               bbox=dict(boxstyle="round,pad=0.3", fc="#f4f4f4", ec="#888888"))
        if li < len(T.LAYERS) - 1:
            ax.annotate("", xy=(li + 0.62, 4.25), xytext=(li + 0.38, 4.25),
                        arrowprops=dict(arrowstyle="->", color="#444444", lw=1.5))
    for s in T.CHECKS:
        x, y = pos[s.name]
        b = FancyBboxPatch((x - 0.42, y - 0.32), 0.84, 0.64, boxstyle="round,pad=0.02", fc="white",
                           ec="#555555", lw=1.0)
        ax.add_patch(b)
        boxes[s.name] = b
        texts[s.name] = ax.text(x, y + 0.1, s.name, ha="center", va="center", fontsize=8.5)
        ax.text(x, y - 0.16, f"~{s.minutes:g} min", ha="center", va="center", fontsize=7.5, color="#555555")
    for name, col in VERDICT_COLORS.items():
        ax.plot([], [], "s", color=col, mec="#555555", ms=9, label=name.replace("_", " "))
    ax.plot([], [], "s", color="white", mec="#555555", mew=2.5, ms=9, label="thick outline: first failing check")
    ax.legend(loc="lower center", ncol=6, fontsize=8, frameon=False, bbox_to_anchor=(0.5, -0.08))
    return {"boxes": boxes, "texts": texts, "heads": heads}


def _paint_flow(art, r):
    d = r["diagnosis"]
    for name, st in r["states"].items():
        b = art["boxes"][name]
        b.set_facecolor(VERDICT_COLORS[st])
        b.set_linestyle("--" if st == "missing" else "-")
        b.set_linewidth(2.5 if name == d.root_check else 1.0)
    for lr in d.layers:
        col = {"fail": VERDICT_COLORS["fail"], "warn": VERDICT_COLORS["warn"], "pass": VERDICT_COLORS["pass"]}
        art["heads"][lr.layer].get_bbox_patch().set_facecolor(col.get(lr.verdict, "#f4f4f4"))


def _title(r) -> str:
    d = r["diagnosis"]
    if d.first_failing_layer is None:
        return f"{r['case']}: no layer fails with this evidence"
    return f"{r['case']}: first failing layer = {d.first_failing_layer} ({d.root_check})"


def _draw_triage(fig, r, values, cache=None):
    cache, key = (figure_cache(fig) if cache is None else cache), "artists"
    if cache.get(key) is None:
        fig.clear()
        gs = fig.add_gridspec(1, 2, width_ratios=[3.2, 1.0])
        ax = fig.add_subplot(gs[0, 0])
        axb = fig.add_subplot(gs[0, 1])
        art = _build_flow(ax)
        art["ax"] = ax
        c = r["diagnosis"].cost
        art["bars"] = axb.bar([0, 1], [c["layered_minutes"], c["random_minutes"]], color=[PALETTE[0], PALETTE[7]],
                              width=0.6)
        axb.set_xticks([0, 1], ["layered", "random\n(expected)"])
        axb.set_ylabel("time to first failing check (min)")
        axb.grid(True, axis="y", alpha=0.3)
        for side in ("top", "right"):
            axb.spines[side].set_visible(False)
        art["labels"] = [axb.text(i, 0, "", ha="center", va="bottom", fontsize=8.5) for i in range(2)]
        art["axb"] = axb
        art["title"] = ax.set_title("", fontsize=10.5)
        axb.set_title("time to find it", fontsize=10)
        cache[key] = art
    art = cache[key]
    _paint_flow(art, r)
    art["title"].set_text(_title(r))
    c = r["diagnosis"].cost
    vals = [(c["layered_minutes"], c["layered_checks"]), (c["random_minutes"], c["random_checks"])]
    top = max(v for v, _ in vals)
    for bar, lab, (m, n), x in zip(art["bars"], art["labels"], vals, (0, 1)):
        bar.set_height(m)
        lab.set_position((x, m))
        lab.set_text(f"{m:.1f} min\n{n:.3g} check(s)")
    art["axb"].set_ylim(0, max(1.0, top) * 1.35)


def _evidence_note(r, values) -> str:
    """Which evidence the case collected (and which of it is unticked); which it never had."""
    collected = list(T.case(r["case"]).get("evidence", {}))
    off = [k for k in collected if not values.get(k, True)]
    absent = [f"{'☑' if values.get(k, True) else '☐'} {k}" for k in T.EVIDENCE if k not in collected]
    note = f"本案例收集的证据：{'、'.join(collected)}" + (f"（已去掉：{'、'.join(off)}）" if off else "")
    if absent:
        note += f"；本案例没有收集（开关变灰，勾不勾都不影响诊断）：{'、'.join(absent)}"
    return f"<span style='color:#555'>{note}。</span>"


def _summary(r, values) -> str:
    d = r["diagnosis"]
    if not r["keys"]:
        if any(values.get(k, True) for k in T.EVIDENCE):
            head = "<b>本案例收集的证据都被去掉了</b>：勾选的只有本案例没有收集的证据，引擎无从判断。"
        else:
            head = "<b>没有勾选任何证据</b>：引擎无从判断，每一层都是「没有证据」。"
        return (head + "勾选至少一项本案例收集的证据（例如 ibstat）再看决策路径。<br>"
                + _evidence_note(r, values))
    c = d.cost
    skipped = f"；缺少证据的层：{', '.join(d.skipped_layers)}" if d.skipped_layers else ""
    return (f"<b>第一个失败的层</b>：{d.first_failing_layer or '无'}（{d.root_check or '-'}）；"
            f"案例记录的根因层：{r['root_layer']}{skipped}<br>"
            f"<b>下一条命令</b>：<code>{d.next_command}</code><br>"
            f"分层顺序 {c['layered_checks']} 项检查 / {c['layered_minutes']:.1f} min；"
            f"随机顺序期望 {c['random_checks']:.2f} 项 / {c['random_minutes']:.1f} min<br>"
            + _evidence_note(r, values))


def triage_explorer() -> Explorer:
    controls = {"case": dropdown("案例", T.case_names(), "degraded_rail")}
    for k in T.EVIDENCE:
        controls[k] = toggle(f"证据: {k}", True)

    def _grey_absent(change):
        # evidence the chosen case never collected cannot change its diagnosis: grey those toggles out
        collected = T.case(change["new"]).get("evidence", {})
        for k in T.EVIDENCE:
            controls[k].disabled = k not in collected

    controls["case"].observe(_grey_absent, names="value")
    _grey_absent({"new": controls["case"].value})
    return Explorer(controls, compute=triage_model, draw=_draw_triage, summary=_summary,
                    title="分层排障：证据 → 决策路径", figsize=(10.0, 4.6))


def decision_path_figure(case: str = "nccl_timeout_xid79"):
    """The decision path of one case with all its evidence."""
    fig, _ = new_figure(figsize=(10.0, 4.6))
    _draw_triage(fig, triage_model(case), {}, cache={})
    return fig


def search_cost_figure():
    """Layered vs random-order search time (minutes) for every shipped case."""
    names = T.case_names()
    lay, rnd = [], []
    for n in names:
        c = T.diagnose_case(n).cost
        lay.append(c["layered_minutes"])
        rnd.append(c["random_minutes"])
    fig, ax = new_figure(figsize=(9.0, 4.2))
    x = np.arange(len(names))
    ax.bar(x - 0.2, lay, 0.4, color=PALETTE[0], label="layered order (network -> software)")
    ax.bar(x + 0.2, rnd, 0.4, color=PALETTE[7], label="random order (expected)")
    ax.set_xticks(x, [f"{n}\n({T.case(n)['root_layer']})" for n in names], fontsize=8)
    ax.set_ylabel("time to first failing check (min)")
    ax.set_title("Search time per case: layered vs random order of the same checks")
    ax.legend(loc="upper left")
    return fig


def network_slowdown_figure(case: str = "degraded_rail"):
    """Step-time increase vs measured busbw / expected busbw for the workload of ``case``."""
    _, _, wl = T.load_case(case)
    frac = np.linspace(0.1, 1.0, 91)
    exp = wl.expected_busbw_gbs
    res = T.network_slowdown(wl.compute_s, wl.allreduce_bytes, wl.n_gpus, exp, frac * exp, wl.overlap)
    d = T.diagnose_case(case)
    fig, ax = new_figure(figsize=(8.0, 4.2))
    ax.plot(frac * 100, res["slowdown"] * 100, color=PALETTE[0], lw=2, label="model: comm at measured busbw")
    meas = d.quant["busbw_measured_gbs"] / exp
    ax.plot([meas * 100], [d.quant["network"]["slowdown"] * 100], "o", color=PALETTE[3], ms=8,
            label=f"case: {d.quant['busbw_measured_gbs']:.0f} of {exp:.0f} GB/s")
    obs = (wl.observed_step_s / wl.baseline_step_s - 1) * 100
    ax.axhline(obs, color=PALETTE[1], ls="--", lw=1, label=f"observed step slowdown {obs:.0f}%")
    ax.set_xlabel("measured / expected inter-node busbw (%)")
    ax.set_ylabel("step time increase (%)")
    ax.set_title("How much of the slowdown the network explains")
    ax.legend()
    return fig


# ------------------------------------------------------------------------------ incident explorer
_SCORE_COLORS = {"fail": "#f08080", "warn": "#ffc36b", "pass": "#9fd89f", "unknown": "#e6e6e6"}


def _max_evidence() -> int:
    return max(len(T.walkthrough(n).get("evidence", {})) for n in T.walkthrough_names())


def incident_model(incident: str = "missing_shard_hang", **shown) -> dict:
    """Triage ``incident`` with evidence item k shown when ``shown['evidence_k']`` is True (default)."""
    w = T.walkthrough(incident)
    names = list(w.get("evidence", {}))
    hide = [n for i, n in enumerate(names, 1) if not shown.get(f"evidence_{i}", True)]
    d = T.triage_walkthrough(incident, hide=hide)
    return {"incident": incident, "diagnosis": d, "names": names, "hidden": hide, "walkthrough": w,
            "full": T.triage_walkthrough(incident) if hide else d}


def _draw_incident(fig, r, values, cache=None):
    cache, key = (figure_cache(fig) if cache is None else cache), "artists"
    d = r["diagnosis"]
    if cache.get(key) is None:
        fig.clear()
        gs = fig.add_gridspec(1, 2, width_ratios=[3.0, 1.0])
        ax = fig.add_subplot(gs[0, 0])
        axc = fig.add_subplot(gs[0, 1])
        bars = ax.bar(range(4), [0.0] * 4, color="#e6e6e6", edgecolor="#555555")
        ax.axhline(T.VERDICT_THRESHOLD, color="#444444", ls="--", lw=1)
        ax.text(3.45, T.VERDICT_THRESHOLD + 0.02, "verdict threshold", ha="right", fontsize=8, color="#444444")
        ax.set_xticks(range(4), [f"{i + 1} {L}" for i, L in enumerate(T.LAYERS)])
        ax.set_ylim(0, 1.08)
        ax.set_ylabel("layer score (0-1)")
        labels = [ax.text(i, 0, "", ha="center", va="bottom", fontsize=9) for i in range(4)]
        full = axc.bar([0], [0.0], color="#bbbbbb", width=0.6, label="all evidence")
        cur = axc.bar([1], [0.0], color=PALETTE[0], width=0.6, label="shown evidence")
        axc.set_xticks([0, 1], ["all\nevidence", "shown\nevidence"])
        axc.set_ylim(0, 1.08)
        axc.set_ylabel("confidence (0-1)")
        axc.set_title("confidence of the verdict", fontsize=10)
        from matplotlib.patches import Patch       # the bar colours and the thick outline, explained
        ax.legend(handles=[Patch(fc=_SCORE_COLORS[k], ec="#555555", label=f"layer verdict: {k}")
                           for k in ("fail", "warn", "pass", "unknown")]
                  + [Patch(fc="white", ec="#555555", lw=2.5, label="thick outline: first failing layer")],
                  loc="upper center", bbox_to_anchor=(0.5, -0.1), fontsize=7.5, ncols=3, frameon=False)
        clab = [axc.text(i, 0, "", ha="center", va="bottom", fontsize=9) for i in range(2)]
        for a in (ax, axc):
            a.grid(True, axis="y", alpha=0.3)
        cache[key] = {"bars": bars, "labels": labels, "full": full[0], "cur": cur[0], "clab": clab,
                      "title": ax.set_title("", fontsize=10.5)}
    art = cache[key]
    for i, L in enumerate(T.LAYERS):
        sc = d.scores.get(L, 0.0)
        v = d.layer(L).verdict
        art["bars"][i].set_height(sc)
        art["bars"][i].set_facecolor(_SCORE_COLORS.get(v, "#e6e6e6"))
        art["bars"][i].set_linewidth(2.5 if L == d.first_failing_layer else 1.0)
        art["labels"][i].set_position((i, sc))
        art["labels"][i].set_text(f"{sc:.2f}")
    art["full"].set_height(r["full"].confidence)
    art["cur"].set_height(d.confidence)
    art["clab"][0].set_position((0, r["full"].confidence))
    art["clab"][0].set_text(f"{r['full'].confidence:.2f}")
    art["clab"][1].set_position((1, d.confidence))
    art["clab"][1].set_text(f"{d.confidence:.2f}")
    verdict = d.first_failing_layer or "no failing layer"
    art["title"].set_text(f"{r['incident']}: verdict = {verdict} "
                          f"(the public thread found: {r['walkthrough']['expected_layer']})")


def _incident_summary(r, values) -> str:
    import html as _h

    d, w = r["diagnosis"], r["walkthrough"]
    rows = []
    for i, n in enumerate(r["names"], 1):
        rows.append(f"证据 {i} = <code>{_h.escape(n)}</code>{'（已隐藏）' if n in r['hidden'] else ''}")
    extra = len([k for k in values if k.startswith("evidence_")]) - len(r["names"])
    if extra > 0:
        rows.append(f"（本案例只有 {len(r['names'])} 项证据，其余开关无作用）")
    if r["names"] and len(r["hidden"]) == len(r["names"]):
        head = ("<b>所有证据都被隐藏</b>：引擎没有任何可判断的输入——结论为「无失败层」、置信度 0。"
                "先收集证据：下面是最便宜的第一眼检查。")
    else:
        head = (f"<b>结论</b>：{d.first_failing_layer or '无失败层（只有症状或没有异常）'}，置信度 {d.confidence:.2f}"
                f"（全部证据时 {r['full'].confidence:.2f}）；表面上像 <b>{w['obvious_layer']}</b>，"
                f"原帖最终定位在 <b>{w['expected_layer']}</b>。")
    reasons = "".join(f"<li>{_h.escape(x)}</li>" for x in d.reasons[:3])
    checks = "".join(f"<li>[{c['purpose']}, ~{c['minutes']:g} min] <code>{_h.escape(c['command'])}</code></li>"
                     for c in d.next_checks[:3])
    return (f"{head}<br>{'；'.join(rows)}<br><b>决定性的证据行</b>：<ul>{reasons or '<li>无</li>'}</ul>"
            f"<b>下一步（最便宜的在前）</b>：<ul>{checks}</ul>来源：{_h.escape(w['source'])}")


def incident_explorer() -> Explorer:
    controls = {"incident": dropdown("事故", T.walkthrough_names(), "missing_shard_hang")}
    for i in range(1, _max_evidence() + 1):
        controls[f"evidence_{i}"] = toggle(f"证据 {i}", True)
    return Explorer(controls, compute=incident_model, draw=_draw_incident, summary=_incident_summary,
                    title="事故分诊：隐藏证据，看四层得分与置信度怎样变化", figsize=(10.0, 4.2))


def incident_scores_figure(incident: str = "missing_shard_hang", hide=None):
    """Layer scores of ``incident`` with all evidence and with the items in ``hide`` removed
    (default: the last evidence item, usually the deciding one)."""
    w = T.walkthrough(incident)
    names = list(w.get("evidence", {}))
    hide = [names[-1]] if hide is None else list(hide)
    full = T.triage_walkthrough(incident)
    part = T.triage_walkthrough(incident, hide=hide)
    fig, ax = new_figure(figsize=(8.0, 4.0))
    x = np.arange(4)
    b_full = ax.bar(x - 0.2, [full.scores[L] for L in T.LAYERS], 0.4, color=PALETTE[0],
                    label=f"all evidence (confidence {full.confidence:.2f})")
    b_part = ax.bar(x + 0.2, [part.scores[L] for L in T.LAYERS], 0.4, color=PALETTE[7],
                    label=f"without {', '.join(hide)} (confidence {part.confidence:.2f})")
    for b in (b_full, b_part):              # a score of 0 is a bar you cannot see: write the number
        ax.bar_label(b, fmt="%.2f", fontsize=8)
    ax.axhline(T.VERDICT_THRESHOLD, color="#444444", ls="--", lw=1, label="verdict threshold")
    ax.set_xticks(x, list(T.LAYERS))
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("layer score (0-1)")
    ax.set_title(f"{incident}: what the deciding evidence adds")
    ax.legend(fontsize=8, loc="upper left")
    return fig


def walkthrough_confidence_figure():
    """Per walkthrough: confidence of the verdict, coloured by the verdict's layer; the label says which layer
    looked guilty first and where the verdict landed (a hatched bar: the verdict missed the thread's layer)."""
    names = T.walkthrough_names()
    conf, colors, hatch, labels = [], [], [], []
    col = {L: PALETTE[i] for i, L in enumerate(T.LAYERS)}
    for n in names:
        w = T.walkthrough(n)
        d = T.triage_walkthrough(n)
        conf.append(d.confidence)
        colors.append(col.get(d.first_failing_layer, PALETTE[7]))
        hatch.append("" if d.first_failing_layer == w["expected_layer"] else "//")
        labels.append(f"{n}\n{w['obvious_layer']} -> {d.first_failing_layer}")
    fig, ax = new_figure(figsize=(9.0, 5.2))
    y = np.arange(len(names))
    bars = ax.barh(y, conf, color=colors)
    for b, h in zip(bars, hatch):
        b.set_hatch(h)
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.32)             # room on the right for the legend (confidence stops at 1)
    ax.set_xticks(np.linspace(0, 1, 6))
    ax.set_xlabel("confidence of the verdict (0-1)")
    ax.legend(handles=[Patch(color=col[L], label=f"verdict: {L}") for L in T.LAYERS], fontsize=7, loc="lower right")
    ax.set_title("Incident walkthroughs: the layer that looked guilty -> the verdict (colour: verdict layer)")
    return fig
