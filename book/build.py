#!/usr/bin/env python3
"""Build the course site offline: ``python book/build.py --out _site`` (what ``make book`` runs).

1. Execute every chapter and lab from its py:percent source (nbclient, ``--jobs`` notebooks at a
   time, each in its own folder as nbval does). A cell that raises stops the build with the
   notebook, the cell and the error: the site never shows a broken chapter.
2. Turn each explorer's output (the live widget + the PNG its mimebundle carries) into its
   initial figure with a note that it moves in JupyterLab; drop the widget state.
3. Stage the notebooks with a generated landing page: the course map (figure, modules,
   prerequisites) and one table of contents per module, chapters in order and each lab after
   the chapter it measures.
4. Render with Sphinx + myst-nb + sphinx-book-theme (``book/conf.py``), warnings as errors.
5. Check every internal link and anchor of the generated HTML, and that no page loads anything
   from the network.

``build(out, sources=[...])`` builds a site of a few notebooks (tests do that).
"""

from __future__ import annotations

import argparse
import html
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

BOOK = Path(__file__).resolve().parent
ROOT = BOOK.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The chapter each lab measures (labs/README.md and each lab's own introduction): the lab is
# listed right after it.
LAB_AFTER_CHAPTER = {1: 9, 2: 13, 3: 15, 4: 6, 5: 17, 6: 24}
MODULE_NUMERALS = "零一二三四五六七八九十"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
EXPLORER_NOTE = ("交互式探索器：这里是初始参数下的图。在 JupyterLab 中打开本章（<code>make lab</code>）"
                 "并运行单元格，拖动滑块，图和结论会随参数更新。")
WIDGET_NOTE = "交互控件：在 JupyterLab 中打开本章（<code>make lab</code>）并运行单元格后可用。"


class NotebookError(RuntimeError):
    """A notebook raised while the site was being built."""


class LinkError(RuntimeError):
    """The generated site has a broken internal link or loads something from the network."""


# -- 1. execute ------------------------------------------------------------------------------------
def _number(path: Path) -> tuple[str, int]:
    m = re.match(r"(ch|lab)(\d\d)_", path.name)
    if not m:
        raise ValueError(f"{path}: a course notebook source is named chNN_slug.py or labNN_slug.py")
    return m.group(1), int(m.group(2))


def execute_one(path: str) -> str:
    """Execute one source; return the executed notebook as JSON text (raises NotebookError)."""
    import nbformat
    from nbclient.exceptions import CellExecutionError

    from labutil.nbtools import execute, read_source

    src = Path(path)
    nb = read_source(src)
    try:
        execute(nb, src.parent)
    except CellExecutionError as exc:
        raise NotebookError(f"{src}: a cell raised while building the site:\n{str(exc)[-4000:]}") from None
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":  # pragma: no cover - nbclient raises first
                raise NotebookError(f"{src}: a cell raised {out.get('ename')}: {out.get('evalue')}")
    return nbformat.writes(nb)


def static_explorers(nb) -> int:
    """Replace live-widget outputs by what a page without a kernel can show; return how many."""
    n = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW not in data:
                continue
            n += 1
            png = data.get("image/png")
            if png:
                body = (f'<figure class="explorer-static"><img src="data:image/png;base64,{png}" '
                        f'alt="explorer: initial figure" style="max-width:100%">'
                        f"<figcaption>{EXPLORER_NOTE}</figcaption></figure>")
                out["data"] = {"text/html": body, "image/png": png, "text/plain": "explorer (initial figure)"}
            else:
                out["data"] = {"text/html": f'<p class="explorer-static">{WIDGET_NOTE}</p>',
                               "text/plain": "interactive widget"}
            out.get("metadata", {}).clear()
    nb.metadata.pop("widgets", None)
    return n


# -- 3. stage ----------------------------------------------------------------------------------------
def toc_order(sources: list[Path]) -> list[tuple[object, list[Path]]]:
    """[(module, [sources in reading order])] in module order; labs after their chapter."""
    from labutil.coursemap import modules

    chapters, labs = {}, {}
    for s in sources:
        kind, n = _number(s)
        (chapters if kind == "ch" else labs)[n] = s
    out = []
    placed = set()
    for m in modules():
        items = []
        for c in m.chapters:
            if c in chapters:
                items.append(chapters[c])
            for lab, after in sorted(LAB_AFTER_CHAPTER.items()):
                if after == c and lab in labs:
                    items.append(labs[lab])
                    placed.add(lab)
        if items:
            out.append((m, items))
    unplaced = sorted(set(labs) - placed)
    if unplaced:
        raise ValueError(f"labs {unplaced} have no chapter in LAB_AFTER_CHAPTER (book/build.py)")
    return out


def landing_page(order, figure_name: str) -> str:
    from labutil.coursemap import chapter_titles, modules

    titles = chapter_titles()
    by_id = {m.id: m for m in modules()}
    lines = [(BOOK / "landing.md").read_text(encoding="utf-8").rstrip(), "",
             f"![课程地图：六个模块、三十章与前置依赖]({figure_name})", "",
             "| 模块 | 阶段 | 章节 | 前置模块 |", "|---|---|---|---|"]
    for m in modules():
        req = "、".join(f"模块{MODULE_NUMERALS[r]}" for r in m.requires) or "—"
        chs = f"ch{m.chapters[0]:02d}–ch{m.chapters[-1]:02d}"
        lines.append(f"| 模块{MODULE_NUMERALS[m.id]} {m.title_zh} | {m.phase} | {chs} | {req} |")
    lines.append("")
    for m, items in order:
        mod = by_id[m.id]
        lines += ["```{toctree}", f":caption: 模块{MODULE_NUMERALS[mod.id]} {mod.title_zh}", ":maxdepth: 1", ""]
        for s in items:
            lines.append(f"{s.parent.name}/{s.stem}")
        lines += ["```", ""]
    return "\n".join(lines)


def stage(src_dir: Path, order, executed: dict[Path, str]) -> int:
    import nbformat

    from labutil.explore.overview import course_map_figure
    from labutil.plotting import save_png

    if src_dir.exists():
        shutil.rmtree(src_dir)
    src_dir.mkdir(parents=True)
    save_png(course_map_figure(), src_dir / "coursemap.png")
    (src_dir / "index.md").write_text(landing_page(order, "coursemap.png"), encoding="utf-8")
    n_explorers = 0
    for _, items in order:
        for s in items:
            nb = nbformat.reads(executed[s], as_version=4)
            n_explorers += static_explorers(nb)
            target = src_dir / s.parent.name / f"{s.stem}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, target)
    return n_explorers


# -- 4. render -------------------------------------------------------------------------------------
def sphinx(src_dir: Path, out: Path, doctrees: Path, jobs: int) -> None:
    argv = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-E", "-q",
            "-j", str(max(1, jobs)), "-c", str(BOOK), "-d", str(doctrees), str(src_dir), str(out)]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"sphinx-build failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")


# -- 5. check --------------------------------------------------------------------------------------
class _Refs(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.refs: list[tuple[str, str]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key) and (key == "id" or tag == "a"):
                self.ids.add(a[key])
        if tag == "a" and a.get("href"):
            self.refs.append(("a", a["href"]))
        elif tag in ("link",) and a.get("href"):
            self.refs.append((tag, a["href"]))
        elif tag in ("script", "img", "iframe", "source") and a.get("src"):
            self.refs.append((tag, a["src"]))


def check_site(out: Path) -> dict:
    """Broken internal links/anchors and network loads in the site under ``out`` (raises LinkError)."""
    # The site's pages; _static/ holds the theme's template fragments and MathJax, not pages.
    pages = sorted(p for p in out.rglob("*.html") if "_static" not in p.relative_to(out).parts)
    parsed = {}
    for page in pages:
        p = _Refs()
        p.feed(page.read_text(encoding="utf-8", errors="replace"))
        parsed[page.resolve()] = p
    problems, n_links = [], 0
    for page in pages:
        for tag, ref in parsed[page.resolve()].refs:
            parts = urlsplit(ref)
            if parts.scheme in ("http", "https") or ref.startswith("//"):
                if tag != "a":  # a page that loads a script/style/image from the network fails offline
                    problems.append(f"{page.relative_to(out)}: loads {ref} from the network")
                continue
            if parts.scheme:  # mailto:, data:, javascript:
                continue
            n_links += 1
            target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{page.relative_to(out)}: broken link {ref}")
                continue
            frag = unquote(parts.fragment)
            if frag and target.suffix == ".html" and target.resolve() in parsed:
                if frag not in parsed[target.resolve()].ids:
                    problems.append(f"{page.relative_to(out)}: broken anchor {ref}")
    if problems:
        raise LinkError(f"{len(problems)} problem(s) in the site:\n" + "\n".join(problems[:50]))
    return {"pages": len(pages), "internal_links": n_links}


# -- the whole build ---------------------------------------------------------------------------------
def build(out: Path, sources: list[Path] | None = None, *, jobs: int = 2, build_dir: Path | None = None,
          log=print) -> dict:
    from labutil.nbtools import sources as all_sources

    t0 = time.perf_counter()
    sources = [Path(s).resolve() for s in (sources or all_sources())]
    order = toc_order(sources)
    build_dir = Path(build_dir or ROOT / "build" / "book")
    out = Path(out)
    executed: dict[Path, str] = {}
    log(f"executing {len(sources)} notebooks ({jobs} at a time)")
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(execute_one, str(s)): s for _, items in order for s in items}
        try:
            for fut in as_completed(futures):
                executed[futures[fut]] = fut.result()  # re-raises NotebookError (notebook, cell, error)
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)  # fail fast: no more notebooks started
            raise
    t_exec = time.perf_counter() - t0
    n_explorers = stage(build_dir / "src", order, executed)
    if out.exists():
        shutil.rmtree(out)
    log(f"rendering with Sphinx -> {out}")
    sphinx(build_dir / "src", out, build_dir / "doctrees", jobs)
    (out / ".nojekyll").write_text("")
    stats = check_site(out)
    stats.update(notebooks=len(sources), explorers=n_explorers, execute_s=round(t_exec, 1),
                 total_s=round(time.perf_counter() - t0, 1), index=str(out / "index.html"))
    log(f"site: {stats['index']} ({stats['pages']} pages, {stats['internal_links']} internal links checked, "
        f"{n_explorers} explorers shown as figures; {stats['total_s']} s)")
    return stats


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python book/build.py", description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=ROOT / "_site", help="output folder (default: _site)")
    p.add_argument("--jobs", type=int, default=2, help="notebooks executed at a time")
    p.add_argument("--only", nargs="*", default=None, metavar="NAME",
                   help="build a partial site of these notebooks (ch01, lab02, ...)")
    args = p.parse_args(argv)
    from labutil.nbtools import sources as all_sources

    sources = None
    if args.only:
        sources = [s for s in all_sources() if s.stem.split("_", 1)[0] in args.only]
        missing = set(args.only) - {s.stem.split("_", 1)[0] for s in sources}
        if missing:
            p.error(f"unknown notebooks {sorted(missing)}")
    try:
        build(args.out, sources, jobs=args.jobs)
    except (NotebookError, LinkError, RuntimeError) as exc:
        print(f"book build FAILED: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    raise SystemExit(main())
