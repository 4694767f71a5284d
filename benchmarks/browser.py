"""Drive the course in a real browser: JupyterLab on loopback + headless Chromium via Playwright.

Used by ``tests/test_browser.py`` (the suite's browser test) and by
``benchmarks/bench_browser_latency.py`` (slider -> new figure, end to end). Chromium is Debian's
(``apt-get install chromium``; ``playwright install`` needs the internet), started with the flags a
closed network needs. Selectors use JupyterLab's command ids and CSS classes, never menu text, so
they work with the English and the zh-CN interface alike.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
# --no-sandbox: CI and lab machines run this as root; the rest keep Chromium off the (closed) network.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


def chromium_path() -> str | None:
    env = os.environ.get("COURSE_CHROMIUM")
    for p in ((env,) if env else ()) + CHROMIUM_CANDIDATES:
        if p and Path(p).is_file() and os.access(p, os.X_OK):
            return p
    return shutil.which("chromium")


def missing_reason() -> str | None:
    """Why the browser test cannot run here (None when it can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright; it is in the test extra)"
    if chromium_path() is None:
        return "no Chromium at /usr/bin/chromium (apt-get install chromium; .ci/run installs it)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A JupyterLab server on 127.0.0.1 with a random token (``labutil.serve.lab_command``)."""

    def __init__(self, root_dir: Path = ROOT, startup_timeout_s: float = 120.0):
        from labutil.serve import lab_command, lab_env

        self.port, self.token = _free_port(), secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        self._runtime = tempfile.TemporaryDirectory(prefix="course-lab-")
        argv = lab_command(port=self.port, token=self.token, open_browser=False, root_dir=root_dir)
        tmp = Path(self._runtime.name)
        # A private settings dir: autosave off (a test edits cells and must never write the course's
        # notebooks), no news toast; the learner's own JupyterLab settings are not read or touched.
        for plugin, value in (("docmanager-extension/plugin", '{"autosave": false}'),
                              ("apputils-extension/notification", '{"fetchNews": "false"}')):
            f = tmp / "settings" / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(value)
        argv += [f"--ServerApp.runtime_dir={tmp / 'runtime'}", f"--LabApp.user_settings_dir={tmp / 'settings'}",
                 f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
                 "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
        self.log = tmp / "server.log"
        self._log_fh = open(self.log, "w")
        # The course's own Jupyter config (labutil.serve.lab_env): sources hidden, zh-CN interface,
        # exactly what `make lab` gives a learner.
        self.proc = subprocess.Popen(argv, stdout=self._log_fh, stderr=subprocess.STDOUT, cwd=root_dir,
                                     env=lab_env())
        deadline = time.time() + startup_timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"{self.base}/api/status?token={self.token}", timeout=5) as r:  # noqa: S310
                    if r.status == 200:
                        break
            except OSError:
                pass
            if self.proc.poll() is not None or time.time() > deadline:
                self.close()
                raise RuntimeError(f"JupyterLab did not start: {self.log.read_text()[-2000:]}")
            time.sleep(0.3)

    def url(self, path: str) -> str:
        return f"{self.base}/lab/tree/{path}?token={self.token}"

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self._log_fh.close()
        self._runtime.cleanup()


@contextmanager
def chromium(viewport=(1400, 1000)):
    """A headless Chromium page (Playwright, Debian's binary)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
            yield page
        finally:
            browser.close()


# -- notebook actions -------------------------------------------------------------------------
NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden)"


def open_notebook(page, lab: Lab, path: str, timeout_s: float = 120.0) -> None:
    """Open ``path``, wait until its kernel has started and is idle, hide notification toasts."""
    page.goto(lab.url(path), wait_until="domcontentloaded")
    page.wait_for_selector(f"{NOTEBOOK} .jp-Cell", timeout=timeout_s * 1e3)
    deadline = time.time() + timeout_s
    while _kernel_state(lab, path) != "idle":
        if time.time() > deadline:
            raise TimeoutError(f"the kernel of {path} did not start within {timeout_s:.0f} s")
        time.sleep(0.3)
    wait_kernel_idle(page, timeout_s)
    for close in page.locator(".jp-Notification-Toast-Close").all():
        try:
            close.click(timeout=2000)
        except Exception:  # noqa: BLE001 - a toast that went away by itself
            pass


def _kernel_state(lab: Lab, path: str) -> str | None:
    import json

    with urllib.request.urlopen(f"{lab.base}/api/sessions?token={lab.token}", timeout=5) as r:  # noqa: S310
        for s in json.loads(r.read()):
            if s.get("path") == path and s.get("kernel"):
                return s["kernel"].get("execution_state")
    return None


def wait_kernel_idle(page, timeout_s: float = 120.0) -> None:
    """The notebook toolbar's execution indicator says idle (it carries data-status in JupyterLab 4)."""
    page.wait_for_function(
        """() => { const ind = document.querySelector(
                       '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator');
                   return ind && ind.getAttribute('data-status') === 'idle'; }""",
        timeout=timeout_s * 1e3)


def run_all(page, timeout_s: float = 300.0) -> float:
    """Run every cell (the Run menu's "Run All Cells", command id ``runmenu:run-all``) and wait until
    each code cell has an execution count and the kernel is idle; returns the seconds it took."""
    t0 = time.time()
    page.locator(f"{NOTEBOOK} .jp-Cell").first.click()
    page.keyboard.press("Escape")
    execute_command(page, "runmenu:run-all")
    page.wait_for_function(
        """() => { const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
                   const prompts = Array.from(nb.querySelectorAll('.jp-CodeCell .jp-InputPrompt'));
                   return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent)); }""",
        timeout=timeout_s * 1e3, polling=250)
    wait_kernel_idle(page, timeout_s)
    return time.time() - t0


def execute_command(page, command: str) -> None:
    """Open the main-menu menu that holds ``command`` and click its item (language-independent:
    Lumino menu items carry their command id in ``data-command``)."""
    bar_items = page.locator(".lm-MenuBar-item")
    for i in range(bar_items.count()):
        bar_items.nth(i).click()
        item = page.locator(f".lm-Menu-item[data-command='{command}']")
        if item.count():
            item.first.click()
            return
        page.keyboard.press("Escape")
    raise RuntimeError(f"no menu item runs {command!r}")


def error_outputs(page) -> list[str]:
    """Texts of error outputs and widget failures in the open notebook."""
    return page.evaluate("""() => {
        const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
        const bad = nb.querySelectorAll(
            '[data-mime-type="application/vnd.jupyter.error"], .widget-error, .jupyter-widgets-error-widget');
        const out = Array.from(bad).map(e => e.textContent.slice(0, 500));
        for (const o of nb.querySelectorAll('.jp-OutputArea-output')) {
            const t = o.textContent || '';
            if (/Error displaying widget|Error rendering widget|Failed to load model class|Traceback \\(most recent/.test(t))
                out.push(t.slice(0, 500));
        }
        return out; }""")


def stderr_outputs(page) -> list[str]:
    return page.evaluate("""() => Array.from(document.querySelectorAll(
        '.jp-NotebookPanel:not(.lm-mod-hidden) [data-mime-type="application/vnd.jupyter.stderr"]'))
        .map(e => e.textContent.slice(0, 300))""")


def explorer_images(page):
    """The explorers' figure <img> elements (ipywidgets Image views) in the open notebook."""
    return page.locator(f"{NOTEBOOK} img.widget-image")


def slider_handle_for(page, img_index: int):
    """The first slider handle of the explorer whose figure is image ``img_index``."""
    box = explorer_images(page).nth(img_index).locator("xpath=ancestor::div[contains(@class,'widget-vbox')][1]")
    return box.locator(".noUi-handle").first


_WATCH_JS = """([idx]) => {
    const img = document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) img.widget-image')[idx];
    window.__lat = {src0: img.src, tInput: null, tSrc: null, tLoaded: null};
    const mark = () => { if (window.__lat.tInput === null) window.__lat.tInput = performance.now(); };
    document.addEventListener('pointerup', mark, {capture: true, once: true});
    document.addEventListener('keyup', mark, {capture: true, once: true});
    img.addEventListener('load', () => {
        if (window.__lat.tLoaded === null) window.__lat.tLoaded = performance.now(); }, {once: true});
    new MutationObserver((muts, obs) => {
        if (img.src !== window.__lat.src0) { window.__lat.tSrc = performance.now(); obs.disconnect(); }
    }).observe(img, {attributes: true, attributeFilter: ['src']});
    return img.src; }"""


def move_slider(page, img_index: int, dx: float, timeout_s: float = 30.0) -> dict:
    """Drag the explorer's first slider by ``dx`` pixels; wait for the new figure to load.

    Returns the image source before/after and the latency from releasing the mouse to the new PNG
    decoded in the page (``ms``), measured with the page's own clock.
    """
    handle = slider_handle_for(page, img_index)
    handle.scroll_into_view_if_needed()
    explorer_images(page).nth(img_index).scroll_into_view_if_needed()
    handle.scroll_into_view_if_needed()
    src0 = page.evaluate(_WATCH_JS, [img_index])
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + dx, y, steps=4)
    page.mouse.up()
    page.wait_for_function("() => window.__lat.tLoaded !== null && window.__lat.tInput !== null",
                           timeout=timeout_s * 1e3, polling="raf")
    lat = page.evaluate("() => window.__lat")
    return {"src0": src0, "src1": page.evaluate(
        "([i]) => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) img.widget-image')[i].src",
        [img_index]), "ms": lat["tLoaded"] - lat["tInput"]}


def image_png(page, img_index: int) -> bytes:
    """The PNG bytes the explorer's figure currently shows (read back from its blob URL)."""
    import base64

    b64 = page.evaluate("""async ([i]) => {
        const img = document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) img.widget-image')[i];
        const buf = await (await fetch(img.src)).arrayBuffer();
        let s = ''; const a = new Uint8Array(buf);
        for (let k = 0; k < a.length; k += 8192) s += String.fromCharCode.apply(null, a.subarray(k, k + 8192));
        return btoa(s); }""", [img_index])
    return base64.b64decode(b64)


def explorer_controls(page, img_index: int):
    """The slider handles and dropdowns of the explorer whose figure is image ``img_index``."""
    box = explorer_images(page).nth(img_index).locator("xpath=ancestor::div[contains(@class,'widget-vbox')][1]")
    return box.locator(".noUi-handle"), box.locator("select")


def change_control(page, img_index: int, k: int = 0, timeout_s: float = 30.0) -> dict:
    """Move the explorer's ``k``-th slider (towards the side with more room) or, when it has no
    slider, pick the next option of its first dropdown; wait for the new figure to be decoded.
    Returns ``ms``: input released -> new PNG loaded in the page, by the page's clock."""
    handles, selects = explorer_controls(page, img_index)
    if handles.count():
        handle = handles.nth(k % handles.count())
        handle.scroll_into_view_if_needed()
        track = handle.locator("xpath=ancestor::div[contains(@class,'noUi-target')][1]").bounding_box()
        box = handle.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        dx = 0.3 * track["width"] * (1 if x < track["x"] + track["width"] / 2 else -1)
        page.evaluate(_WATCH_JS, [img_index])
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + dx, y, steps=4)
        page.mouse.up()
    elif selects.count():
        sel = selects.first
        sel.scroll_into_view_if_needed()
        page.evaluate(_WATCH_JS, [img_index])
        sel.evaluate("""s => { s.selectedIndex = (s.selectedIndex + 1) % s.options.length;
                               window.__lat.tInput = performance.now();
                               s.dispatchEvent(new Event('change', {bubbles: true})); }""")
    else:
        raise ValueError(f"explorer {img_index} has no slider or dropdown")
    page.wait_for_function("() => window.__lat.tLoaded !== null && window.__lat.tInput !== null",
                           timeout=timeout_s * 1e3, polling="raf")
    lat = page.evaluate("() => window.__lat")
    # src_ms: the new PNG has arrived over the comm and the Image view has set it (kernel + transport);
    # the rest, up to ms, is the browser decoding and laying out the image.
    src_ms = None if lat.get("tSrc") is None else lat["tSrc"] - lat["tInput"]
    return {"ms": lat["tLoaded"] - lat["tInput"], "src_ms": src_ms}
