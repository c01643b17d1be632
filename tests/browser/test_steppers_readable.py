"""Every lesson's steppers, in a real browser (issues 31 and 38).

For each stepper of lessons 2, 3, 5, 7, 11 and 12 (lesson 4 has drawings only: the
other module checks they fit the column), in JupyterLab 1400 px wide, at a few steps
spread over the pass (the first ones, the middle, the last ones); for the big graphs of
lessons 11 and 12 at every step, in a 1400x1000 and a 1024x768 window:

(a) the node being processed (any drawn node filled with
    ``render.PROCESSING_FILL``) lies wholly inside the part of the stepper's drawing box
    (the ``.tg-graph-box`` that scrolls) that is on show: inside its scrollbars and
    inside the window. ``teachgrad/viz/follow.py`` moves the drawing with CSS alone,
    and only a browser can say where the node ends up;
(b) no text in the stepper, drawn or written, is under ``MIN_TEXT_PX`` pixels
    (lesson 11's drawing once shrank its text to 5-6 px).

Steps are chosen with the step box (jslinked to the Stack: no kernel round
trip). The same checks run on the stepper's HTML view (``html_view.py``) of lessons 11
and 12 in an offline nbconvert export of the lesson executed once by nbclient and saved
without widget state, stepped with its Step button. A failing check names the lesson,
the stepper, the step and the boxes.
"""
import pytest
from labserver import REPO, copy_notebook, go_to_step, open_notebook, run_all_cells

WIDTH = 1400
MIN_TEXT_PX = 12
#: The windows the big graphs are checked in.
SIZES = ((1400, 1000), (1024, 768))
#: Lessons whose every step is checked, in every window of SIZES.
BIG = ("11_convolutions", "12_backprop_through_time")
#: Steps checked per stepper: the first few, the middle, the last few.
STEPS = (1, 2, 3, "middle", -3, -2, -1)

NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden)"
WIDGET = f"{NOTEBOOK} .tg-stepper-widget"

# (b): the smallest text on show in widget i, drawn (SVG, its scale included) or HTML.
SMALLEST_TEXT = """([sel, i]) => {
    const widget = document.querySelectorAll(sel)[i];
    const found = [];
    for (const t of widget.querySelectorAll('svg text')) {
        const box = t.getBoundingClientRect();
        if (!box.width || getComputedStyle(t).display === 'none') continue;
        const m = t.getScreenCTM();
        const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
        found.push([px, t.textContent]);
    }
    const walker = document.createTreeWalker(widget, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const el = n.parentElement;
        if (!n.textContent.trim() || el.closest('svg') || el.closest('style')) continue;
        if (!el.getClientRects().length) continue;
        found.push([parseFloat(getComputedStyle(el).fontSize), n.textContent.trim()]);
    }
    found.sort((a, b) => a[0] - b[0]);
    return found.slice(0, 3);
}"""

# (a): the processed nodes of widget i and whether each lies inside the drawing's box.
PROCESSED_IN_BOX = """([sel, i, fill]) => {
    const widget = document.querySelectorAll(sel)[i];
    const graph = widget.querySelector('.tg-graph-box'), outer = graph.getBoundingClientRect();
    // the part on show: inside the box's scrollbars, and inside the window
    const left = outer.left + graph.clientLeft, top = outer.top + graph.clientTop;
    const box = {left: Math.max(left, 0), top: Math.max(top, 0),
                 right: Math.min(left + graph.clientWidth, innerWidth),
                 bottom: Math.min(top + graph.clientHeight, innerHeight)};
    const out = [];
    for (const g of widget.querySelectorAll('svg g.tg-node')) {
        const shape = g.querySelector(':scope > :is(path, polygon, ellipse):not([fill="none"])');
        if (!shape || getComputedStyle(shape).fill !== fill) continue;
        const r = g.getBoundingClientRect();
        if (!r.width) continue;                          // a transpose tape not on show
        const inside = r.left >= box.left - 1 && r.right <= box.right + 1
                       && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
        out.push({node: [...g.classList].find(c => c.startsWith('tg-node-')), inside,
                  tape: !!g.closest('.tg-op-graph'),
                  node_box: [r.left, r.top, r.right, r.bottom].map(Math.round),
                  box: [box.left, box.top, box.right, box.bottom].map(Math.round)});
    }
    // A JVPStepper processes a transpose tape's node while its forward op waits: the
    // tape's node is the one being processed, and the one the box must show.
    return out.some(n => n.tape) ? out.filter(n => n.tape) : out;
}"""


def _rgb(hex_colour):
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def _steps(last):
    chosen = []
    for step in STEPS:
        k = last // 2 if step == "middle" else (step if step >= 0 else last + 1 + step)
        if 0 < k <= last and k not in chosen:
            chosen.append(k)
    return sorted(chosen)


def _go_to(page, i, step):
    """Show step ``step`` of widget ``i`` through its step box (no kernel needed)."""
    go_to_step(page, WIDGET, i, step)


def _check_in_box(page, i, fill, where, sel=WIDGET):
    """(a), waiting out the follow's 0.2 s transition."""
    try:
        page.wait_for_function(f"a => ({PROCESSED_IN_BOX})(a).every(n => n.inside)",
                               arg=[sel, i, fill], timeout=2_000, polling=100)
    except Exception:
        pass   # the assertion below says what is where
    nodes = page.evaluate(PROCESSED_IN_BOX, [sel, i, fill])
    assert all(n["inside"] for n in nodes), (where, nodes)
    return nodes


def _check_text(page, i, where, sel=WIDGET):
    smallest = page.evaluate(SMALLEST_TEXT, [sel, i])
    assert not smallest or smallest[0][0] >= MIN_TEXT_PX - 0.05, (where, smallest)


LESSONS = ["02_backward_pass_as_a_queue", "03_build_the_backward_pass", "05_forward_mode",
           "07_control_flow", "11_convolutions", "12_backprop_through_time"]


@pytest.fixture
def wide_page(browser, lab):
    context = browser.new_context(viewport={"width": WIDTH, "height": 1000})
    try:
        yield context.new_page()
    finally:
        context.close()


def _scroll_to(page, sel, i):
    page.evaluate("([sel, i]) => document.querySelectorAll(sel)[i].scrollIntoView()", [sel, i])


@pytest.mark.parametrize("lesson", LESSONS)
def test_processed_node_in_the_box_and_text_readable(wide_page, lab, output_dir, lesson):
    from teachgrad.viz.render import PROCESSING_FILL
    page, fill = wide_page, _rgb(PROCESSING_FILL)
    open_notebook(page, lab, copy_notebook(lab, REPO / "notebooks" / f"{lesson}.ipynb",
                                           f"readable_{lesson}.ipynb"))
    assert run_all_cells(page) == []
    page.wait_for_selector(f"{WIDGET} .tg-frame[data-step='0']", timeout=30_000)
    count = page.locator(WIDGET).count()
    seen = 0
    for width, height in SIZES if lesson in BIG else SIZES[:1]:
        page.set_viewport_size({"width": width, "height": height})
        for i in range(count):
            _scroll_to(page, WIDGET, i)
            last = int(page.locator(WIDGET).nth(i).locator(".tg-controls .widget-text input")
                       .get_attribute("max") or 0)
            _check_text(page, i, (lesson, width, i, 0))
            for step in range(1, last + 1) if lesson in BIG else _steps(last):
                _go_to(page, i, step)
                seen += len(_check_in_box(page, i, fill, (lesson, width, i, step)))
                _check_text(page, i, (lesson, width, i, step))
            page.locator(WIDGET).nth(i).screenshot(
                path=str(output_dir / f"readable_{lesson}_{width}_{i}.png"))
    assert seen, f"{lesson}: no step checked showed a node being processed"
    print(f"\n{lesson}: {count} stepper(s), {seen} processed nodes seen in their boxes")


VIEW = ".tg-html-view"


@pytest.mark.parametrize("lesson", BIG)
def test_the_html_view_keeps_the_node_in_view(browser, tmp_path, output_dir, lesson):
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    from teachgrad.viz.render import PROCESSING_FILL
    notebook = nbformat.read(REPO / "notebooks" / f"{lesson}.ipynb", as_version=4)
    notebook.metadata.pop("widgets", None)
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(REPO / "notebooks")}}).execute()
    html, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    (tmp_path / "lesson.html").write_text(html, encoding="utf-8")
    seen = 0
    for width, height in SIZES:
        context = browser.new_context(viewport={"width": width, "height": height})
        context.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file://")
                      else r.abort())                              # offline
        try:
            page = context.new_page()
            page.goto((tmp_path / "lesson.html").as_uri())
            page.wait_for_selector(f"{VIEW} .tg-frame[data-step='0']", timeout=30_000)
            for i in range(page.locator(VIEW).count()):
                view = page.locator(VIEW).nth(i)
                _scroll_to(page, VIEW, i)
                last = int(view.locator(".tg-view-slider").get_attribute("max"))
                _check_text(page, i, (lesson, width, i, 0), VIEW)
                for step in range(1, last + 1):
                    view.locator(".tg-view-step").click()
                    view.locator(f".tg-frame[data-step='{step}']").wait_for()
                    where = (lesson, "view", width, i, step)
                    seen += len(_check_in_box(page, i, _rgb(PROCESSING_FILL), where, VIEW))
                    _check_text(page, i, where, VIEW)
                view.screenshot(path=str(output_dir / f"view_{lesson}_{width}_{i}.png"))
        finally:
            context.close()
    assert seen, f"{lesson}: no step showed a node being processed"
