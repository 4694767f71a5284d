"""Every parser of ``labutil.parsers`` (and the watchdog parser) on its real-format seeds with
adversarial whitespace and paste damage: long runs of tabs / spaces / NBSP / mixed blanks inside
and at the end of lines, NBSP for every space, a byte-order mark in mid-text, ANSI colour around
the numbers, UTF-16 bytes, CRLF. The outputs are asserted: the same result as the clean seed, or
the parser's ParseError (a damaged paste is rejected, never misread) - robustness review R1/R5.

The runs are 20,000 characters long, so a parser that backtracks quadratically takes seconds per
case and a cubic one never returns: linearity shows up here as a test that finishes. Its speed per
MB is a budget in ``benchmarks/bench_parsers.py`` (no time is asserted here)."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labutil.parsers import ParseError
from test_parsers_fuzz import PARSERS, _func, _seeds

RUN = 20_000
LINEAR = [p for p in PARSERS if p.startswith(("labutil.parsers.", "labutil.troubleshoot."))]
UNITS = {"tabs": "\t", "spaces": " ", "mixed": " \t", "nbsp": "\u00a0", "colon": " : ", "dots": ".",
         "digits": "1 ", "pipes": "| "}
BLANK = {"tabs", "spaces", "mixed", "nbsp"}
# fields that count what a parser skipped: a junk line (not blank) may change them, and should
BOOKKEEPING = {"skipped_lines", "n_lines"}


def _canon(x, depth=0):
    """A parse result as plain data (dataclasses -> dicts) for comparison."""
    if depth > 10:
        return x
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: _canon(getattr(x, f.name), depth + 1) for f in dataclasses.fields(x)}
    if isinstance(x, dict):
        return {k: _canon(v, depth + 1) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_canon(v, depth + 1) for v in x]
    return x


def _same_or_rejected(path, seed, text, junk=False):
    want = _canon(_func(path)(seed))
    try:
        got = _canon(_func(path)(text))
    except ParseError:
        return
    if junk and isinstance(got, dict):
        got = {k: v for k, v in got.items() if k not in BOOKKEEPING}
        want = {k: v for k, v in want.items() if k not in BOOKKEEPING}
    assert got == want, f"{path}: the damaged paste was misread instead of rejected"


@pytest.mark.parametrize("unit", list(UNITS))
@pytest.mark.parametrize("path", LINEAR)
def test_a_long_run_inside_the_text(path, unit):
    """A 20,000-character line of one unit inserted after the third line, and the same run inside
    (after the first word of) the third line."""
    for seed in _seeds(path):
        lines = seed.split("\n")
        # after the third line, or later if that line is wrapped onto the next one ("timeout:" + newline)
        k = next((i for i in range(3, len(lines)) if not lines[i - 1].rstrip().endswith(":")), len(lines))
        pad = UNITS[unit] * (RUN // len(UNITS[unit]))
        junk = unit not in BLANK
        _same_or_rejected(path, seed, "\n".join(lines[:k] + [pad + "x"] + lines[k:]), junk=True)
        _same_or_rejected(path, seed, "\n".join(lines[:k] + [pad] + lines[k:]), junk=junk)
        if len(lines) > 3 and " " in lines[2] and not junk:
            a, b = lines[2].split(" ", 1)
            try:   # a run inside a line: any result or a ParseError, never a hang or another exception
                _func(path)("\n".join(lines[:2] + [a + pad + b] + lines[3:]))
            except ParseError:
                pass


@pytest.mark.parametrize("path", LINEAR)
def test_trailing_blanks_on_every_line_change_nothing(path):
    for seed in _seeds(path):
        _same_or_rejected(path, seed, "\n".join(ln + " \t" * 200 for ln in seed.split("\n")))


@pytest.mark.parametrize("path", LINEAR)
def test_paste_damage_that_keeps_the_content_is_read_the_same(path):
    """NBSP for spaces (a web page or chat), a BOM where two files were concatenated, ANSI colour
    (grep --color), UTF-16 bytes (PowerShell redirect), CRLF: exactly the clean result."""
    fn = _func(path)
    for seed in _seeds(path):
        want = _canon(fn(seed))
        lines = seed.split("\n")
        mid = len(lines) // 2
        variants = {
            "nbsp": seed.replace(" ", "\u00a0"),
            "bom mid-text": "\n".join(lines[:mid] + ["\ufeff" + lines[mid]] + lines[mid + 1:]),
            "ansi": re.sub(r"(\d+(?:\.\d+)?)", "\x1b[01;31m\x1b[K\\1\x1b[m\x1b[K", seed),
            "utf-16": seed.encode("utf-16"),
            "utf-16-le no bom": seed.encode("utf-16-le"),
            "utf-16 read as latin-1": seed.encode("utf-16").decode("latin-1"),
            "crlf": seed.replace("\n", "\r\n"),
            "zero-width": seed.replace("\n", "\u200b\n"),
        }
        for name, text in variants.items():
            assert _canon(fn(text)) == want, f"{path}: {name}"


@pytest.mark.parametrize("path", LINEAR)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_random_blank_runs_anywhere(path, data):
    """Hypothesis: a run of 1-5,000 blanks (space, tab, NBSP, mixed) at any position of a seed gives
    a result or a ParseError, never another exception; inserted at a line end, the clean result."""
    seeds = _seeds(path)
    seed = data.draw(st.sampled_from(seeds))
    unit = data.draw(st.sampled_from([" ", "\t", "\u00a0", " \t", "\t "]))
    run = unit * data.draw(st.integers(1, 5000))
    i = data.draw(st.integers(0, len(seed)))
    try:
        _func(path)(seed[:i] + run + seed[i:])
    except ParseError:
        pass
    ends = [m.start() for m in re.finditer("\n", seed)]
    if ends:
        j = data.draw(st.sampled_from(ends))
        _same_or_rejected(path, seed, seed[:j] + run + seed[j:])
