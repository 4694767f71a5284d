"""The course in a real browser: JupyterLab on loopback with a token, headless Chromium (Playwright).

A learner's path end to end: open chapter 1 and a lab, Run All, no error output and no widget
failure, drag an explorer's slider and get a different figure, answer an exercise wrongly and get
feedback that does not give the reference answer away, then answer it right. Screenshots go to
``build/browser-screenshots/`` (git-ignored). Skips, with the reason, where Playwright or
Chromium is missing; CI installs both (``.ci/run``) and sets ``LABUTIL_REQUIRE_BROWSER=1``, which
turns that skip into a failure.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import browser as B  # noqa: E402  (benchmarks/browser.py: shared with the latency benchmark)

SHOTS = ROOT / "build" / "browser-screenshots"
CHAPTER = "chapters/ch01_intro.ipynb"
LAB = "labs/lab01_env_probe.ipynb"

pytestmark = [pytest.mark.server, pytest.mark.slow]
MISSING = B.missing_reason()


@pytest.fixture(scope="module")
def lab():
    import hashlib

    if MISSING is not None:
        if os.environ.get("LABUTIL_REQUIRE_BROWSER"):
            pytest.fail(f"LABUTIL_REQUIRE_BROWSER is set but {MISSING}")
        pytest.skip(MISSING)

    before = {p: hashlib.sha256((ROOT / p).read_bytes()).hexdigest() for p in (CHAPTER, LAB)}
    server = B.Lab()
    yield server
    server.close()
    after = {p: hashlib.sha256((ROOT / p).read_bytes()).hexdigest() for p in (CHAPTER, LAB)}
    assert after == before, "the browser test must not save the notebooks it edits (autosave is off)"


@pytest.fixture(scope="module")
def page():
    SHOTS.mkdir(parents=True, exist_ok=True)
    with B.chromium() as p:
        yield p


def _png_pixels(png: bytes):
    import numpy as np
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


def _cell(page, text: str):
    return page.locator(f"{B.NOTEBOOK} .jp-CodeCell").filter(has_text=text).first


def _run_cell_with(page, cell, source: str) -> str:
    """Replace a code cell's source (``cell``: an ElementHandle), run it (Shift+Enter) and return
    its output text."""
    cell.query_selector(".cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(source)
    prompt_before = cell.query_selector(".jp-InputPrompt").text_content()
    page.keyboard.press("Shift+Enter")
    page.wait_for_function(
        """([el, before]) => { const t = el.querySelector('.jp-InputPrompt').textContent;
                              return /\\[\\d+\\]/.test(t) && t !== before; }""",
        arg=[cell, prompt_before], timeout=60_000)
    B.wait_kernel_idle(page, 60)
    cell.scroll_into_view_if_needed()
    return cell.query_selector(".jp-OutputArea").text_content()


def test_chapter_runs_slider_redraws_and_exercise_feedback_hides_the_answer(lab, page):
    B.open_notebook(page, lab, CHAPTER)
    B.run_all(page, timeout_s=300)
    page.screenshot(path=str(SHOTS / "ch01_run_all.png"))
    assert B.error_outputs(page) == []
    assert B.stderr_outputs(page) == []  # no warnings either

    # every explorer rendered its figure (an <img> with a PNG behind it), none failed to load
    n_img = B.explorer_images(page).count()
    assert n_img >= 1
    png0 = B.image_png(page, 0)
    assert png0[:8] == b"\x89PNG\r\n\x1a\n"

    # drag the first slider of the first explorer: a new PNG arrives and its pixels differ
    moved = B.move_slider(page, 0, dx=-80)
    assert moved["src1"] != moved["src0"]
    png1 = B.image_png(page, 0)
    a, b = _png_pixels(png0), _png_pixels(png1)
    assert a.shape == b.shape and (abs(a - b).sum(axis=2) > 30).mean() > 0.002  # the bars moved
    B.explorer_images(page).nth(0).scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "ch01_slider_moved.png"))
    assert B.error_outputs(page) == []

    # exercise ch01.1 (expected GPU failures per day for 10,000 GPUs at 100,000 h MTBF = 2.4):
    from labutil.exercises import exercise

    ex = exercise("ch01.1")
    expected = ex.expected()
    cell = _cell(page, "answer_1 = None").element_handle()
    cell.scroll_into_view_if_needed()
    shipped = cell.query_selector(".jp-OutputArea").text_content()
    assert shipped.strip() and f"{expected:g}" not in shipped  # feedback for an empty answer, no answer
    wrong = _run_cell_with(page, cell, 'answer_1 = 3.7\nexercise("ch01.1").check(answer_1)')
    page.screenshot(path=str(SHOTS / "ch01_exercise_wrong.png"))
    assert wrong.strip(), "a wrong answer must show feedback"
    assert f"{expected:g}" not in wrong and f"{expected:.2f}" not in wrong, wrong
    graded = ex.grade(3.7)
    assert not graded.correct and graded.message.splitlines()[0] in wrong
    right = _run_cell_with(page, cell, f'answer_1 = {expected!r}\nexercise("ch01.1").check(answer_1)')
    page.screenshot(path=str(SHOTS / "ch01_exercise_right.png"))
    assert ex.grade(expected).correct and right.strip() != wrong.strip()
    assert B.error_outputs(page) == []


def test_lab_runs_without_errors(lab, page):
    B.open_notebook(page, lab, LAB)
    B.run_all(page, timeout_s=300)
    page.screenshot(path=str(SHOTS / "lab01_run_all.png"), full_page=True)
    assert B.error_outputs(page) == []
    texts = page.locator(f"{B.NOTEBOOK} .jp-OutputArea-output").all_text_contents()
    assert any(t.strip() for t in texts), "the lab printed nothing"


# -- the course site (`make book`) in the browser ------------------------------------------------
def _site_dir(tmp_factory) -> Path:
    """``_site/`` when `make book` has built it, else a site of chapter 1 and lab 1 built here."""
    full = ROOT / "_site"
    if (full / "index.html").is_file() and (full / "chapters" / "ch01_intro.html").is_file():
        return full
    import importlib.util

    try:
        import myst_nb  # noqa: F401
        import sphinx  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"no _site/ and the book extra is not installed ({exc}); run `make book`")
    spec = importlib.util.spec_from_file_location("book_build", ROOT / "book" / "build.py")
    book = importlib.util.module_from_spec(spec)
    sys.modules["book_build"] = book  # its worker processes import it by this name
    spec.loader.exec_module(book)
    tmp = tmp_factory.mktemp("site")
    srcs = [ROOT / "chapters" / "ch01_intro.py", ROOT / "labs" / "lab01_env_probe.py"]
    book.build(tmp / "site", srcs, jobs=1, build_dir=tmp / "build", log=lambda *_: None)
    return tmp / "site"


def test_course_site_pages_render_offline(lab, page, tmp_path_factory):  # lab: skip/fail as the others
    import functools
    import http.server
    import threading

    site = _site_dir(tmp_path_factory)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *a, **k: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    page = page.context.browser.new_page()  # its own listeners
    outside, failed = [], []
    page.on("request", lambda r: None if r.url.startswith((base, "data:", "blob:")) else outside.append(r.url))
    page.on("requestfailed", lambda r: failed.append(r.url))
    try:
        for path, shot in (("index.html", "site_index.png"), ("chapters/ch01_intro.html", "site_ch01.png")):
            resp = page.goto(f"{base}/{path}", wait_until="load")
            assert resp is not None and resp.status == 200, path
            page.screenshot(path=str(SHOTS / shot))
            imgs = page.evaluate("() => Array.from(document.images).map(i => [i.src, i.complete && i.naturalWidth > 0])")
            assert imgs and all(ok for _, ok in imgs), f"{path}: images not rendered: {[s for s, ok in imgs if not ok]}"
            assert "第1章" in page.content() or "学习目标" in page.content() or path == "index.html"
        ch01 = page.content()
        assert "explorer-static" in ch01, "the explorer is shown as its initial figure with a note"
        assert "Traceback" not in ch01
        assert outside == [] and failed == [], (outside, failed)
    finally:
        page.close()
        httpd.shutdown()
