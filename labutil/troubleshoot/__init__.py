"""Symptom-driven, layered fault localisation (ch28): network -> storage -> GPU -> software.

Package map (this file only re-exports; scikit-learn style):

- :mod:`.engine` - the teaching engine :func:`diagnose` over evidence sorted by tool, the
  :class:`Diagnosis` it returns, the quantitative models (busbw -> step time, storage shortfall,
  stragglers, blind restarts, the cost of a random search order), the PyTorch watchdog parser and
  the shipped case studies;
- :mod:`.recognise` - the recognisers that turn pasted evidence into :class:`Signal` objects
  (``recognise/blocks.py``: tool outputs; ``recognise/lines.py``: single log lines and the literal
  pre-filter; ``recognise/fragments.py``: splitting a paste and running both);
- :mod:`.triage` - :func:`triage`, what an on-call engineer runs on a paste (and
  ``python -m labutil triage``), with the incident walkthroughs and bundles.

Import order: engine <- recognise <- triage (no module imports a later one).
"""

from .engine import (CHECKS, EVIDENCE, LAYER_LADDER, LAYERS, MAX_RANKS, VERDICTS, CheckResult, CheckSpec, Diagnosis,
                     LayerResult, WatchdogEvent, Workload, _check_watchdog, blind_restart_cost, case, case_names,
                     comm_time_from_busbw_s, diagnose, diagnose_case, expected_random_checks, load_case,
                     missing_ranks, network_slowdown, pair_test_plan, pair_test_rounds,
                     parse_watchdog_log, search_cost, storage_shortfall,
                     straggler_slowdown, straggler_step_s)
from .recognise import LINE_RULES, Signal
from .triage import (NEXT_CHECKS, VERDICT_THRESHOLD, bundle, diagnosis_json, score_incidents, signal_score, triage,
                     triage_walkthrough, walkthrough, walkthrough_names)

__all__ = ["LAYERS", "EVIDENCE", "CHECKS", "CheckSpec", "CheckResult", "LayerResult", "Diagnosis", "Workload",
           "WatchdogEvent", "parse_watchdog_log", "diagnose", "search_cost", "expected_random_checks",
           "comm_time_from_busbw_s", "network_slowdown", "storage_shortfall", "straggler_step_s",
           "straggler_slowdown", "blind_restart_cost", "pair_test_plan", "pair_test_rounds", "case_names", "case", "load_case",
           "diagnose_case", "LAYER_LADDER", "VERDICTS", "MAX_RANKS", "missing_ranks",
           "triage", "NEXT_CHECKS", "VERDICT_THRESHOLD", "signal_score", "walkthrough_names", "walkthrough",
           "triage_walkthrough", "diagnosis_json", "LINE_RULES", "Signal", "bundle", "score_incidents"]
