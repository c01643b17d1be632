"""Drawings made where Graphviz's ``dot`` cannot be started, in Chromium (issue 38, part 6).

Without ``dot`` a drawing is saved as its layout made in Python, with its DOT text
and a small script; in a live notebook each drawing's display also sends teachgrad's
Graphviz for WebAssembly to the page, as an output emptied when the cell finishes,
and the script redraws the drawing with it (``teachgrad/viz/wasm.py``). Here the
JupyterLab server and its kernels run with only the virtual environment's bin/ on
PATH, so there is no ``dot``:

* live: both drawings of a notebook are redrawn by the browser's Graphviz, and the
  saved file holds no copy of it; saved and reloaded, they show the Python layout;
  a cell run again brings the page's Graphviz back, and both are redrawn;
* untrusted (executed elsewhere, opened as a student gets it): each drawing is
  the Python layout's picture with its note, never blank, never a jumble of text;
* an nbconvert HTML export opened offline: each drawing is that picture, and no
  drawing asks the network for anything.
"""
import os
import re
import sys

import nbformat
import pytest
from labserver import JupyterLabServer, open_notebook, run_all_cells
from nbclient import NotebookClient
from nbconvert import HTMLExporter

from teachgrad.viz import wasm

DRAW = '''
import teachgrad as tg
x = tg.constant(0.5, name="x")
with tg.GradientTape(persistent=True) as tape:
    tape.watch(x)
    z = tg.multiply(tg.sin(x, name="a"), x, name="z")
tg.viz.draw(z, tape=tape{})
'''
CELLS = [DRAW.format(""), DRAW.format(', title="again"')]
BIN = os.path.dirname(sys.executable)

PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
# Each drawing on the page: its picture (an <img> of the Python layout, or the inline
# SVG the page's Graphviz drew), its size on screen, and the note under it.
DRAWINGS = """root => [...document.querySelectorAll((root + ' .teachgrad-viz').trim())].map(d => {
    const picture = d.querySelector('svg, img'), note = d.nextElementSibling;
    const box = picture ? picture.getBoundingClientRect() : {width: 0, height: 0};
    return {picture: picture ? picture.tagName.toLowerCase() : null,
            loaded: !!picture && (picture.tagName !== 'IMG' || picture.naturalWidth > 0),
            width: box.width, height: box.height, text: d.innerText,
            note: note && note.classList.contains('teachgrad-viz-note') ? note.textContent
                                                                         : null};
})"""


def a_notebook():
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(code) for code in CELLS]
    return notebook


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server, and its kernels, with no ``dot`` on PATH."""
    assert not os.path.exists(os.path.join(BIN, "dot"))
    work = tmp_path_factory.mktemp("jupyterlab-no-dot")
    root = work / "root"
    root.mkdir()
    old = os.environ["PATH"]
    os.environ["PATH"] = BIN
    try:
        server = JupyterLabServer(work / "home", root).start()
    finally:
        os.environ["PATH"] = old
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook executed by nbclient without ``dot``, and its folder."""
    work = tmp_path_factory.mktemp("no-dot-export")
    notebook = a_notebook()
    old = os.environ["PATH"]
    os.environ["PATH"] = BIN
    try:
        NotebookClient(notebook, timeout=120, kernel_name="python3",
                       resources={"metadata": {"path": str(work)}}).execute()
    finally:
        os.environ["PATH"] = old
    return notebook, work


def wait_for_drawings(page, count, note, picture):
    """Wait until ``count`` drawings show a loaded ``picture`` ("svg" or "img") and
    ``note``; return them."""
    page.wait_for_function(
        f"""([root, count, note, picture]) => {{ const d = ({DRAWINGS})(root);
            return d.length === count && d.every(x => x.picture === picture && x.loaded
                                                     && x.note === note); }}""",
        arg=[PANEL, count, note, picture], timeout=60_000, polling=200)
    drawings = page.evaluate(DRAWINGS, PANEL)
    assert all(d["width"] > 50 and d["height"] > 50 for d in drawings), drawings
    return drawings


def test_live_drawings_are_redrawn_by_the_pages_graphviz_and_saved_small(page, lab,
                                                                        output_dir):
    nbformat.write(a_notebook(), lab.root_dir / "live.ipynb")
    open_notebook(page, lab, "live.ipynb")
    assert run_all_cells(page) == []
    wait_for_drawings(page, 2, wasm.DRAWN_IN_BROWSER, "svg")
    page.screenshot(path=str(output_dir / "no_dot_live.png"), full_page=True)
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty",
                           timeout=30_000)
    saved = (lab.root_dir / "live.ipynb").read_text()
    assert "Viz.js" not in saved and len(saved) < 60_000, len(saved)

    page.reload()              # reopened: no Graphviz on the page, the Python layout shows
    open_notebook(page, lab, "live.ipynb")
    wait_for_drawings(page, 2, wasm.LAID_OUT_HERE, "img")

    # a cell run again sends the page's Graphviz: it redraws its own drawing, and the
    # reopened one that waited for it
    page.evaluate("""() => { const nb = window.jupyterapp.shell.currentWidget;
                             nb.content.activeCellIndex = 1;
                             window.jupyterapp.commands.execute('notebook:run-cell'); }""")
    wait_for_drawings(page, 2, wasm.DRAWN_IN_BROWSER, "svg")


def test_untrusted_drawings_are_an_svg_or_a_note(page, lab, executed, output_dir):
    notebook, _ = executed
    nbformat.write(notebook, lab.root_dir / "untrusted.ipynb")   # unsigned: untrusted here
    open_notebook(page, lab, "untrusted.ipynb")
    # the sanitizer drops the script and the ids: each drawing stays the Python layout's
    # picture, with its note, and no jumble of the SVG's text
    drawings = wait_for_drawings(page, 2, wasm.LAID_OUT_HERE, "img")
    assert all(d["text"].strip() == "" for d in drawings), drawings
    page.screenshot(path=str(output_dir / "no_dot_untrusted.png"), full_page=True)


def test_offline_export_shows_every_drawing(browser, executed, output_dir):
    notebook, work = executed
    html, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    path = work / "no_dot.html"
    path.write_text(html, encoding="utf-8")
    assert "Viz.js" not in html
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    asked = []

    def route(request):
        if request.request.url.startswith("file://"):
            return request.continue_()
        asked.append(request.request.url)
        return request.abort()
    context.route("**/*", route)
    try:
        page = context.new_page()
        page.goto(path.as_uri(), wait_until="load")
        drawings = page.evaluate(DRAWINGS, "")
        assert len(drawings) == 2, drawings
        assert all(d["picture"] == "img" and d["loaded"] and d["width"] > 50
                   and d["note"] == wasm.LAID_OUT_HERE for d in drawings), drawings
        # what was blocked is the template's own (require.js, MathJax), none for a drawing
        assert all(re.search(r"/(require\.js|mathjax)/", url) for url in asked), asked
        page.screenshot(path=str(output_dir / "no_dot_export.png"), full_page=True)
    finally:
        context.close()
