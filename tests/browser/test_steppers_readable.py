"""Every lesson's steppers, in a real browser 1400 px wide (issue 31).

For each stepper of lessons 2, 3, 5, 7 and 11 (lesson 4 has drawings only: the
other module checks they fit the column), at a
few steps spread over the pass (the first ones, the middle, the last ones:
not all, to keep the test short):

(a) the node being processed (any drawn node filled with
    ``render.PROCESSING_FILL``) lies inside the stepper's drawing box (the
    ``.tg-graph-box`` that scrolls): ``teachgrad/viz/follow.py`` moves the
    drawing with CSS alone, and only a browser can say where the node ends up;
(b) no text in the stepper, drawn or written, is under ``MIN_TEXT_PX`` pixels
    (lesson 11's drawing once shrank its text to 5-6 px).

Steps are chosen with the step box (jslinked to the Stack: no kernel round
trip). A failing check names the lesson, the stepper, the step and the boxes.
"""
import pytest
from labserver import REPO, copy_notebook, open_notebook, run_all_cells

WIDTH = 1400
MIN_TEXT_PX = 9
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
    const box = widget.querySelector('.tg-graph-box').getBoundingClientRect();
    const out = [];
    for (const g of widget.querySelectorAll('svg g.tg-node')) {
        const shape = g.querySelector(':scope > :is(path, polygon, ellipse):not([fill="none"])');
        if (!shape || getComputedStyle(shape).fill !== fill) continue;
        const r = g.getBoundingClientRect();
        if (!r.width) continue;                          // a transpose tape not on show
        const inside = r.left >= box.left - 2 && r.right <= box.right + 2
                       && r.top >= box.top - 2 && r.bottom <= box.bottom + 2;
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
    box = page.locator(WIDGET).nth(i).locator(".tg-controls .widget-text input")
    box.fill(str(step))
    box.press("Enter")
    page.wait_for_function(
        """([sel, i, step]) => {
            const f = document.querySelectorAll(sel)[i].querySelector('.tg-frame');
            return f && f.dataset.step === String(step);
        }""", arg=[WIDGET, i, step], timeout=10_000, polling=50)


def _check_in_box(page, i, fill, where):
    """(a), waiting out the follow's 0.2 s transition."""
    try:
        page.wait_for_function(f"a => ({PROCESSED_IN_BOX})(a).every(n => n.inside)",
                               arg=[WIDGET, i, fill], timeout=2_000, polling=100)
    except Exception:
        pass   # the assertion below says what is where
    nodes = page.evaluate(PROCESSED_IN_BOX, [WIDGET, i, fill])
    assert all(n["inside"] for n in nodes), (where, nodes)
    return nodes


def _check_text(page, i, where):
    smallest = page.evaluate(SMALLEST_TEXT, [WIDGET, i])
    assert not smallest or smallest[0][0] >= MIN_TEXT_PX - 0.05, (where, smallest)


LESSONS = ["02_backward_pass_as_a_queue", "03_build_the_backward_pass", "05_forward_mode",
           "07_control_flow", "11_convolutions"]


@pytest.fixture
def wide_page(browser, lab):
    context = browser.new_context(viewport={"width": WIDTH, "height": 1000})
    try:
        yield context.new_page()
    finally:
        context.close()


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
    for i in range(count):
        page.evaluate("([sel, i]) => document.querySelectorAll(sel)[i].scrollIntoView()",
                      [WIDGET, i])
        last = int(page.locator(WIDGET).nth(i).locator(".tg-controls .widget-text input")
                   .get_attribute("max") or 0)
        _check_text(page, i, (lesson, i, 0))
        for step in _steps(last):
            _go_to(page, i, step)
            seen += len(_check_in_box(page, i, fill, (lesson, i, step)))
            _check_text(page, i, (lesson, i, step))
        page.locator(WIDGET).nth(i).screenshot(
            path=str(output_dir / f"readable_{lesson}_{i}.png"))
    assert seen, f"{lesson}: no step checked showed a node being processed"
    print(f"\n{lesson}: {count} stepper(s), {seen} processed nodes seen in their boxes")

