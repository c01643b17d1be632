"""A stepper in a notebook exported to HTML (``jupyter nbconvert --to html``), in Chromium.

A notebook saved with its widget state exports each stepper as a widget view: nbconvert
drops the output's text/html and leaves a box that a script from a CDN
(``@jupyter-widgets/html-manager``) fills. Saved without widget state (JupyterLab's
default), it exports the output's static text/html. Either way, offline, no widget runs:
the stepper's HTML view (``teachgrad/viz/html_view.py``), an output of its own, steps in
the page instead. The tests export the small notebook of ``conftest.small_stepper``
(executed once by nbclient) and open the page from disk with every network request
blocked or answered here:

* offline, saved with or without widget state: the HTML view is the one stepper on
  show, and Step, the slider and Play move its frame; its steps are the stepper's;
* with the widget library (the vendored copy in docs/_static/widgets/ answers the CDN's
  URLs; any font from elsewhere stays blocked): the widget runs, the HTML view stays
  hidden, and the Play buttons show unicode glyphs in the page's font, not Font Awesome
  icons.
"""
from labserver import REPO, VISIBLE_STEPPERS, play_icons, stateless, step_the_html_view
from nbconvert import HTMLExporter

from teachgrad.viz.html_view import WAIT

WIDGETS = REPO / "docs" / "_static" / "widgets"


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


def test_offline_export_steps_in_the_page(browser, small_stepper, output_dir):
    notebook, text, work = small_stepper
    for name, saved in (("offline", notebook), ("stateless", stateless(notebook))):
        context, page, asked = _open(browser, _export(saved, work / f"{name}.html"))
        try:
            if saved is notebook:
                assert any("html-manager" in url for url in asked), asked  # the CDN blocked
            page.wait_for_selector(".tg-html-view .tg-frame", timeout=30_000)
            assert page.evaluate(VISIBLE_STEPPERS, "") == ["tg-stepper tg-html-view"], name
            view = step_the_html_view(page)
            assert "run the cell again for the live stepper" in view.inner_text()
            sentence = text.splitlines()[2].split(None, 2)[2]   # the text table's step 0
            view.locator(".tg-view-slider").press("Home")
            view.locator(".tg-frame[data-step='0']").wait_for()
            assert sentence in view.locator(".tg-frame").inner_text(), name
            assert page.evaluate(VISIBLE_STEPPERS, "") == ["tg-stepper tg-html-view"], name
            page.screenshot(path=str(output_dir / f"export_{name}.png"), full_page=True)
        finally:
            context.close()


def test_export_with_the_widget_library_shows_only_the_widget(browser, small_stepper,
                                                              output_dir):
    notebook, _, work = small_stepper
    answers = {"require.min.js": WIDGETS / "require.js",
               "/dist/embed-amd.js": WIDGETS / "embed-amd.js"}
    context, page, _ = _open(browser, _export(notebook, work / "online.html"), answers)
    try:
        page.wait_for_selector(".tg-stepper-widget .tg-frame[data-step='0']", timeout=30_000)
        page.wait_for_timeout(WAIT + 500)      # past the view's wait: it stays hidden
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

