"""Steppers where no widget manager holds their model, in a real JupyterLab 4 with its
default settings (issue 38).

1. ``test_lesson2_saved_and_reopened_steps_in_the_page``: lesson 2 run in JupyterLab,
   saved (JupyterLab saves no widget state by default), its kernel shut down, the page
   reloaded: every stepper's widget output says "model not found", and the stepper's HTML
   view (``teachgrad/viz/html_view.py``) hides that and steps in its place: Step, the
   slider and Play move its frame, one stepper on show each. The same saved notebook
   opened in Notebook 7 does the same.
2. ``test_an_untrusted_notebook_shows_the_first_steps_text``: a notebook executed
   elsewhere (nbclient: unsigned, so JupyterLab does not trust it) shows each stepper's
   sanitised static text/html: its note, the first step's sentence and the steps as text,
   and nothing of its HTML view (no script runs there).
"""
import json

import nbformat
from labserver import (
    REPO,
    VISIBLE_STEPPERS,
    open_notebook,
    run_all_cells,
    stateless,
    step_the_html_view,
)

LESSON = REPO / "notebooks" / "02_backward_pass_as_a_queue.ipynb"
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"

#: The widget outputs under ``root`` that say "model not found": all, and those on show.
FAILED = """root => {
    const all = [...document.querySelectorAll(root + ' .jp-OutputArea-output.jupyter-widgets')]
        .filter(o => /model not found/.test(o.textContent));
    return {all: all.length, shown: all.filter(o => o.checkVisibility()).length};
}"""


def test_lesson2_saved_and_reopened_steps_in_the_page(page, lab, output_dir):
    name = "reopened_lesson2.ipynb"     # as a student's copy: no widget state of the docs'
    nbformat.write(stateless(nbformat.read(LESSON, as_version=4)), lab.root_dir / name)
    open_notebook(page, lab, name)
    assert run_all_cells(page) == []
    page.wait_for_selector(f"{PANEL} .tg-stepper-widget .tg-frame", timeout=30_000)
    count = page.locator(f"{PANEL} .tg-stepper-widget").count()
    assert count >= 1
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty",
                           timeout=30_000, polling=100)
    saved = json.loads((lab.root_dir / name).read_text(encoding="utf-8"))
    assert "application/vnd.jupyter.widget-state+json" not in \
        saved["metadata"].get("widgets", {})          # the default: no widget state saved
    # the next day: the kernel gone, the notebook opened again in a fresh page
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.sessionContext"
                           ".session", timeout=30_000, polling=100)
    open_notebook(page, lab, name)
    # every widget output failed, and every one of them is hidden behind its HTML view
    page.wait_for_function(
        f"""([root, count]) => {{
            const failed = ({FAILED})(root);
            return failed.all === count && failed.shown === 0 &&
                document.querySelectorAll(root + ' .tg-html-view .tg-frame').length === count;
        }}""", arg=[PANEL, count], timeout=60_000, polling=200)
    assert page.evaluate(VISIBLE_STEPPERS, PANEL) == ["tg-stepper tg-html-view"] * count
    page.locator(f"{PANEL} .tg-html-view").first.scroll_into_view_if_needed()
    view = step_the_html_view(page, PANEL)
    assert view.locator("svg g.tg-node").count() > 0
    view.screenshot(path=str(output_dir / "lesson2_reopened_html_view.png"))
    page.wait_for_timeout(1000)                        # nothing comes back later
    assert page.evaluate(FAILED, PANEL)["shown"] == 0
    assert page.evaluate(VISIBLE_STEPPERS, PANEL) == ["tg-stepper tg-html-view"] * count
    # the same notebook in Notebook 7 (its kernel shut down again): the same outputs
    page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
    page.goto(f"{lab.base_url}/notebooks/{name}", wait_until="domcontentloaded")
    page.wait_for_function(
        f"""count => {{
            const failed = ({FAILED})('');
            return failed.all === count && failed.shown === 0 &&
                document.querySelectorAll('.tg-html-view .tg-frame').length === count;
        }}""", arg=count, timeout=60_000, polling=200)
    assert page.evaluate(VISIBLE_STEPPERS, "") == ["tg-stepper tg-html-view"] * count
    page.locator(".tg-html-view").first.scroll_into_view_if_needed()
    step_the_html_view(page)


def test_an_untrusted_notebook_shows_the_first_steps_text(page, lab, small_stepper,
                                                          output_dir):
    notebook, text, _ = small_stepper
    name = "untrusted_small_stepper.ipynb"
    nbformat.write(stateless(notebook), lab.root_dir / name)   # unsigned: not trusted
    open_notebook(page, lab, name)
    static = page.locator(f"{PANEL} .tg-stepper.tg-static")
    static.wait_for(timeout=30_000)
    sentence = text.splitlines()[2].split(None, 2)[2]          # the text table's step 0
    assert static.locator(".tg-first-step").inner_text() == f"Step 0: {sentence}"
    assert "run the notebook in Jupyter" in static.inner_text()
    assert static.locator("pre.tg-steps").text_content().strip() == text.strip()
    assert page.evaluate(VISIBLE_STEPPERS, PANEL) in (
        ["tg-stepper tg-static"], ["tg-stepper tg-static", "tg-stepper tg-html-view"])
    # no script ran: whatever is left of the HTML view holds nothing to read
    views = page.locator(f"{PANEL} .tg-html-view")
    assert all(not v.strip() for v in views.all_inner_texts()), views.all_inner_texts()
    static.screenshot(path=str(output_dir / "untrusted_static_stepper.png"))
