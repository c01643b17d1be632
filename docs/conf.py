"""Sphinx configuration of teachgrad's documentation site.

Build it with ``make docs`` (``sphinx-build -W``: every warning is an error).

* The lessons are copied from ``notebooks/`` into ``docs/lessons/`` and executed
  by MyST-NB during the build, so their outputs, and the state of their widgets,
  are the ones today's code produces.
* The JavaScript that renders those widgets on the static site (RequireJS and the
  ``@jupyter-widgets/html-manager`` embed bundle) is vendored in
  ``_static/widgets/``, and MathJax in ``_static/mathjax/`` (see the READMEs
  there): the site loads no code from a CDN and works offline.
* The API reference is generated from the docstrings of everything that
  ``import teachgrad as tg`` exposes (``docs/api.md``, written by
  ``_api.write_api_page``), grouped by the module that defines it.
"""
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS))

import _api  # noqa: E402
import teachgrad  # noqa: E402

project = "teachgrad"
author = "the teachgrad authors"
copyright = "the teachgrad authors, Apache-2.0"
release = teachgrad.__version__
version = release

extensions = [
    "myst_nb",                    # Markdown pages and executed notebooks (also brings myst_parser)
    "sphinx.ext.autodoc",         # the API reference, from the docstrings
    "sphinx.ext.napoleon",        # ... which use Google style (Args:, Returns:)
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",        # "[source]" links next to each documented object
]

# -- the lessons --------------------------------------------------------------
# Only the numbered lessons are part of the site; the copy is refreshed on every
# build (docs/lessons/ is not committed).
LESSONS = DOCS / "lessons"


def _copy_lessons():
    if LESSONS.exists():
        shutil.rmtree(LESSONS)
    LESSONS.mkdir()
    for notebook in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        shutil.copy2(notebook, LESSONS / notebook.name)


_copy_lessons()
_api.write_api_page(DOCS / "api.md")

# Execute every lesson at build time (the stored outputs are replaced), fail the
# build if a cell raises, and give a slow cell up to 5 minutes.
nb_execution_mode = "force"
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
# Rendered as in JupyterLab: widgets first, then a PNG/SVG/HTML, then plain text.
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", 10),
]

# The widget manager, vendored: RequireJS, then the html-manager's AMD bundle, which
# renders every widget view on the page from
# the widget state saved by the execution. Relative paths are under _static/.
nb_ipywidgets_js = {
    "widgets/require.js": {},
    "widgets/widgets-config.js": {},  # tells RequireJS where the bundle (and its fonts) live
    "widgets/embed-amd.js": {},
}

# MathJax 3, vendored too (_static/mathjax/, see the README there): the full TeX
# build, which needs no extension loaded at run time. Its fonts sit beside it.
mathjax_path = "mathjax/tex-chtml-full.js"

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# -- the API reference ---------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# No autodoc_default_options: docs/_api.py writes one directive per documented member
# (a class's methods and properties, a submodule's names), so no directive there takes
# :members: (it would document them a second time). A default {"members": False}
# would also silently override a :members: given to a directive.
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# -- HTML --------------------------------------------------------------------------
html_theme = "alabaster"
html_title = "teachgrad"
html_static_path = ["_static"]
html_css_files = ["teachgrad.css"]
html_theme_options = {
    "description": "Automatic differentiation you can watch",
    "fixed_sidebar": True,
    "page_width": "1160px",
    "sidebar_width": "230px",
}
html_sidebars = {"**": ["about.html", "navigation.html", "searchbox.html"]}

exclude_patterns = ["_build", "README.md", "_static/**", "**/.ipynb_checkpoints"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
