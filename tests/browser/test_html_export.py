"""A stepper in a notebook exported to HTML (``jupyter nbconvert --to html``), in Chromium.

A notebook saved with its widget state exports each stepper as a widget view: nbconvert
drops the output's text/html and leaves an empty box that a script from a CDN
(``@jupyter-widgets/html-manager``) fills. Opened without network, the box stays empty.
So a stepper also displays a copy of its first step as an output of its own
(``Stepper.export_html``), hidden wherever the widget runs. Each test runs the same small
notebook through nbclient (which saves the widget state, as JupyterLab's "Save Widget
State Automatically" does) and nbconvert's HTML exporter, then opens the page from disk
with every network request blocked or answered here:

* offline: the copy of the first step shows (its note, its picture loaded, its steps as
  text), and it is the only stepper on show; saved without widget state, the stepper's
  text/html view shows, and the copy does not;
* with the widget library (the vendored copy in docs/_static/widgets/ answers the CDN's
  URLs; any font from elsewhere stays blocked): the widget runs, the copy is hidden, and
  the Play buttons show unicode glyphs in the page's font, not Font Awesome icons.
"""
import nbformat
import pytest
from labserver import REPO, VISIBLE_STEPPERS, play_icons
from nbclient import NotebookClient
from nbconvert import HTMLExporter

WIDGETS = REPO / "docs" / "_static" / "widgets"

CODE = """
import teachgrad as tg
x = tg.constant(0.5, name="x")
with tg.GradientTape() as tape:
    tape.watch(x)
    a = tg.sin(x, name="a")
    z = tg.multiply(a, x, name="z")
with tg.viz.record() as rec:
    tape.gradient(z, x)
stepper = tg.viz.BackpropStepper(rec.traces[0])
stepper
"""

COPY = """() => {
    const copy = document.querySelector('.tg-export-first');
    const img = copy.querySelector('img.tg-first-frame');
    return {visible: copy.checkVisibility(), text: copy.innerText,
            steps: copy.querySelector('pre.tg-steps').textContent,
            picture: img ? img.naturalWidth : 0,
            emptyBoxes: [...document.querySelectorAll('.jupyter-widgets.jp-OutputArea-output')]
                .filter(b => !b.querySelector('.tg-stepper-widget')).length};
}"""


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook, executed with its widget state saved, and the stepper's text."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(CODE),
                      nbformat.v4.new_code_cell("print(stepper.text())")]
    work = tmp_path_factory.mktemp("export")
    NotebookClient(notebook, timeout=120, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(work)}}).execute()
    assert "application/vnd.jupyter.widget-state+json" in notebook.metadata["widgets"]
    text = notebook.cells[1].outputs[0]["text"]
    return notebook, text, work


def _export(notebook, path):
    html, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    path.write_text(html, encoding="utf-8")
    return path.as_uri()


def _open(browser, url, answers=None):
    """A tab on ``url`` in which only file:// URLs load; ``answers`` maps a URL's
    ending to a local file that answers it instead of the network."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    asked = []

    def route(request_route):
        url = request_route.request.url
        for ending, path in (answers or {}).items():
            if url.endswith(ending):
                return request_route.fulfill(path=str(path),
                                             content_type="application/javascript")
        if url.startswith("file://"):
            return request_route.continue_()
        asked.append(url)
        return request_route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.goto(url, wait_until="load")
    return context, page, asked


def test_offline_export_shows_the_first_step_instead_of_an_empty_box(browser, executed,
                                                                     output_dir):
    notebook, text, work = executed
    context, page, asked = _open(browser, _export(notebook, work / "offline.html"))
    try:
        assert any("html-manager" in url for url in asked), asked   # the CDN was blocked
        page.wait_for_function("() => document.querySelector('.tg-export-first img')"
                               " && document.querySelector('.tg-export-first img').complete")
        copy = page.evaluate(COPY)
        assert copy["visible"] and copy["emptyBoxes"] == 1, copy
        assert "cannot load here" in copy["text"] and copy["picture"] > 0, copy
        assert copy["steps"].strip() == text.strip()
        assert page.evaluate(VISIBLE_STEPPERS, "") == ["tg-stepper tg-export-first"]
        page.screenshot(path=str(output_dir / "export_offline.png"), full_page=True)
    finally:
        context.close()
    # Saved without widget state, nbconvert shows the stepper's text/html view: the copy
    # stays hidden.
    stateless = nbformat.from_dict(dict(notebook, metadata={
        k: v for k, v in notebook.metadata.items() if k != "widgets"}))
    context, page, _ = _open(browser, _export(stateless, work / "stateless.html"))
    try:
        page.wait_for_selector(".tg-stepper.tg-static img.tg-first-frame")
        assert page.evaluate(VISIBLE_STEPPERS, "") == ["tg-stepper tg-static"]
    finally:
        context.close()


def test_export_with_the_widget_library_shows_only_the_widget(browser, executed, output_dir):
    notebook, _, work = executed
    answers = {"require.min.js": WIDGETS / "require.js",
               "/dist/embed-amd.js": WIDGETS / "embed-amd.js"}
    context, page, _ = _open(browser, _export(notebook, work / "online.html"), answers)
    try:
        page.wait_for_selector(".tg-stepper-widget .tg-frame[data-step='0']", timeout=30_000)
        (shown,) = page.evaluate(VISIBLE_STEPPERS, "")        # one stepper on show: the widget
        assert "tg-stepper-widget" in shown.split(), shown
        # the icons are unicode glyphs in the page's font, whether Font Awesome loads or not
        assert set(play_icons(page)) >= {"fa-play", "fa-stop"}
        page.locator(".tg-stepper-widget .widget-play button").first.click()   # play
        page.wait_for_selector(".tg-stepper-widget .widget-play i.fa-pause", timeout=10_000)
        assert "fa-pause" in play_icons(page)
        page.locator(".tg-stepper-widget .tg-controls").screenshot(
            path=str(output_dir / "export_play_controls.png"))
    finally:
        context.close()

