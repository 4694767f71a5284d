"""Depth audit of the chapters (issue 9): every chapter teaches in at least 4,000 Chinese
characters of markdown, and every lab guide in at least 1,500 (issue 17: labs a learner completes alone).

Counted on the generated notebooks' markdown cells (Han characters U+4E00-U+9FFF only: code,
English terms, numbers and formulas do not count), so padding with code or tables cannot pass.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HAN = re.compile(r"[\u4e00-\u9fff]")


def han_chars_in_markdown(path: Path) -> int:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return sum(len(HAN.findall("".join(c["source"]))) for c in nb["cells"] if c["cell_type"] == "markdown")


def test_counter_counts_only_markdown_han(tmp_path):
    nb = {"cells": [{"cell_type": "markdown", "source": ["# 第1章 abc 12\n", "集群"]},
                    {"cell_type": "code", "source": ["print('中文不算')"]}]}
    p = tmp_path / "x.ipynb"
    p.write_text(json.dumps(nb), encoding="utf-8")
    assert han_chars_in_markdown(p) == 4


@pytest.mark.parametrize("nb", sorted((ROOT / "chapters").glob("ch*.ipynb")), ids=lambda p: p.stem)
def test_chapter_has_4000_chinese_characters(nb):
    n = han_chars_in_markdown(nb)
    assert n >= 4000, f"{nb.name}: {n} Chinese characters of markdown (< 4,000)"


@pytest.mark.parametrize("nb", sorted((ROOT / "labs").glob("lab*.ipynb")), ids=lambda p: p.stem)
def test_lab_guide_has_1500_chinese_characters(nb):
    n = han_chars_in_markdown(nb)
    assert n >= 1500, f"{nb.name}: {n} Chinese characters of markdown (< 1,500)"


def test_thirty_chapters_six_labs():
    assert len(list((ROOT / "chapters").glob("ch*.ipynb"))) == 30
    assert len(list((ROOT / "labs").glob("lab*.ipynb"))) == 6
