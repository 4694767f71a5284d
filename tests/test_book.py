"""`make book`: the course site builds offline, in module order, with figures and explorers shown
as their initial figure, every internal link resolving, and the build failing on a notebook error.

The full build (every chapter and lab, into _site/ as `make book` does) is a slow test that CI
runs; the others build a site of one chapter and one lab, or check the pieces without a kernel.
"""

import importlib.util
import re
import sys

import nbformat
import pytest

from conftest import ROOT
from labutil.coursemap import modules
from labutil.nbtools import sources

_spec = importlib.util.spec_from_file_location("book_build", ROOT / "book" / "build.py")
book = importlib.util.module_from_spec(_spec)
sys.modules["book_build"] = book  # the build's worker processes import it by this name
_spec.loader.exec_module(book)


def test_table_of_contents_is_in_module_order_with_labs_after_their_chapter():
    order = book.toc_order(sources())
    assert [m.id for m, _ in order] == [m.id for m in modules()]
    flat = [s.stem for _, items in order for s in items]
    assert len(flat) == len(sources()) == len(set(flat))
    chapters = [int(s[2:4]) for s in flat if s.startswith("ch")]
    assert chapters == sorted(chapters) == list(range(1, 31))
    for lab, after in book.LAB_AFTER_CHAPTER.items():
        name = next(s for s in flat if s.startswith(f"lab{lab:02d}_"))
        before = flat[flat.index(name) - 1]
        assert before.startswith(f"ch{after:02d}_") or before.startswith("lab"), (name, before)
    page = book.landing_page(order, "coursemap.png")
    assert page.count("```{toctree}") == len(modules())
    assert "![课程地图" in page and "前置模块" in page
    for m in modules():
        assert f"模块{book.MODULE_NUMERALS[m.id]} {m.title_zh}" in page


def test_explorer_output_becomes_its_initial_figure_with_a_note():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("ex")
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        "application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2, "version_minor": 0},
        "image/png": "iVBORw0KGgo=", "text/plain": "<Explorer>"}),
        nbformat.v4.new_output("display_data", data={
            "application/vnd.jupyter.widget-view+json": {"model_id": "def", "version_major": 2, "version_minor": 0},
            "text/plain": "IntSlider()"})]
    nb.cells = [cell]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    assert book.static_explorers(nb) == 2
    first, second = cell.outputs
    assert "application/vnd.jupyter.widget-view+json" not in first["data"]
    assert 'src="data:image/png;base64,iVBORw0KGgo="' in first["data"]["text/html"]
    assert "JupyterLab" in first["data"]["text/html"] and "make lab" in first["data"]["text/html"]
    assert "JupyterLab" in second["data"]["text/html"]
    assert "widgets" not in nb.metadata


def test_link_checker_finds_broken_links_anchors_and_network_loads(tmp_path):
    (tmp_path / "a.html").write_text('<a href="b.html#there">b</a><a href="https://example.org">out</a>'
                                     '<img src="_images/x.png">')
    (tmp_path / "b.html").write_text('<h1 id="there">b</h1><a href="a.html">a</a>')
    (tmp_path / "_images").mkdir()
    (tmp_path / "_images" / "x.png").write_bytes(b"png")
    assert book.check_site(tmp_path) == {"pages": 2, "internal_links": 3}
    (tmp_path / "c.html").write_text('<a href="b.html#nowhere">x</a><a href="missing.html">y</a>'
                                     '<script src="https://cdn.example.org/mathjax.js"></script>')
    with pytest.raises(book.LinkError) as err:
        book.check_site(tmp_path)
    msg = str(err.value)
    assert "broken anchor b.html#nowhere" in msg and "broken link missing.html" in msg and "network" in msg


@pytest.mark.slow
def test_a_notebook_error_fails_the_build(tmp_path):
    src = tmp_path / "ch01_broken.py"
    src.write_text("# ---\n# jupyter:\n#   jupytext:\n#     text_representation:\n#       format_name: percent\n# ---\n\n"
                   "# %% [markdown]\n# # 第1章 坏掉的章节\n\n# %%\nx = 1\n\n# %%\nraise ValueError('boom in a cell')\n",
                   encoding="utf-8")
    with pytest.raises(book.NotebookError, match="boom in a cell"):
        book.build(tmp_path / "site", [src], jobs=1, build_dir=tmp_path / "build", log=lambda *_: None)
    assert not (tmp_path / "site" / "index.html").exists()


def _check_pages(site, names):
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "课程地图" in index and "coursemap" in index
    for name in names:
        folder = "chapters" if name.startswith("ch") else "labs"
        page = (site / folder / f"{name}.html").read_text(encoding="utf-8")
        assert re.search(r"<h1>第\s*\d+\s*章|<h1>实验", page), name
        if folder == "chapters":  # every chapter draws figures (CONTRIBUTING, part 4); lab01 only prints facts
            assert page.count("<img") >= 1, f"{name}: no figure rendered"
        assert "mathjax/tex-chtml.js" in page, "MathJax served by the site itself"
        assert not re.search(r"<script[^>]+src=\"https?://", page), f"{name}: loads a script from the network"
        assert "Traceback (most recent call last)" not in page
    return index


@pytest.mark.slow
def test_small_site_builds_offline(tmp_path):
    srcs = [s for s in sources() if s.stem.startswith(("ch13_", "lab02_"))]
    stats = book.build(tmp_path / "site", srcs, jobs=2, build_dir=tmp_path / "build", log=lambda *_: None)
    site = tmp_path / "site"
    index = _check_pages(site, [s.stem for s in srcs])
    assert index.index("ch13_collectives.html") < index.index("lab02_nccl_allreduce.html")
    ch13 = (site / "chapters" / "ch13_collectives.html").read_text(encoding="utf-8")
    assert stats["explorers"] >= 1 and "explorer-static" in ch13 and "make lab" in ch13
    assert ch13.count("<img") >= 3, "two figures and the explorer's initial figure"
    assert stats["internal_links"] > 50


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_full_site_builds_into_site_folder():
    """What `make book` does, into the same folder (_site/), every chapter and lab."""
    out = ROOT / "_site"
    stats = book.build(out, None, jobs=2, log=lambda *_: None)
    assert stats["notebooks"] == len(sources())
    _check_pages(out, [s.stem for s in sources()])
    assert stats["explorers"] >= 30, "every chapter's explorers are shown as figures"
