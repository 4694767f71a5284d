"""Sphinx configuration of the course site (`make book` -> _site/index.html).

Sphinx + myst-nb + sphinx-book-theme: pure Python, builds offline (Jupyter Book 2 downloads its
theme at build time). ``book/build.py`` executes the notebooks itself (in parallel, failing on
the first cell error) and stages them with the generated course-map landing page; Sphinx then
only renders (``nb_execution_mode = "off"``). MathJax is served from the site itself (the
MathJax 3 files that the PyPI package sphinx-mathjax-offline ships, copied by :func:`setup`; its
own extension cannot be imported: its module folder has a hyphen in its name), and no ipywidgets JavaScript is loaded from a CDN: an explorer is shown
as its initial figure (the PNG its mimebundle carries) with a note that it moves in JupyterLab.
"""

project = "大规模GPU集群部署"
author = "Course maintainers"
copyright = "Course maintainers, Apache-2.0"
language = "zh_CN"

extensions = ["myst_nb"]
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

# MyST: $...$ and $$...$$ as used in the notebooks' markdown cells.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# Notebooks arrive executed by build.py: Sphinx only renders them.
nb_execution_mode = "off"
nb_ipywidgets_js = {}  # no widget manager from a CDN: the static figure is shown instead
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
    ("html", "application/vnd.jupyter.widget-state+json", None),
]
nb_merge_streams = True

html_theme = "sphinx_book_theme"
html_title = "大规模GPU集群部署 · Large-scale GPU cluster deployment"
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": True,
    "home_page_in_toc": True,
    "navigation_with_keys": False,
}
html_static_path = []
html_last_updated_fmt = None

# Warnings are errors (build.py runs sphinx with -W): a broken internal reference fails the build.
# A notebook's first heading is its chapter title; deeper headings may skip a level in prose.
suppress_warnings = ["myst.header"]


# -- MathJax from the site, not from a CDN -----------------------------------------------------------
import shutil  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402

_MATHJAX = Path(metadata.distribution("sphinx-mathjax-offline").locate_file("sphinx-mathjax-offline/static/mathjax"))
mathjax_path = "mathjax/tex-chtml.js"  # relative: served from _static/


def _copy_mathjax(app, exc):
    if exc is None:
        shutil.copytree(_MATHJAX, Path(app.outdir) / "_static" / "mathjax", dirs_exist_ok=True)


def setup(app):
    if not (_MATHJAX / "tex-chtml.js").is_file():
        raise RuntimeError(f"MathJax not found at {_MATHJAX}: pip install sphinx-mathjax-offline")
    app.connect("build-finished", _copy_mathjax)
    # Every page loads MathJax, also a page without a formula (lab01): one page template for the site,
    # and an output cell that prints LaTeX later still renders.
    app.set_html_assets_policy("always")
