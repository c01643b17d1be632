"""Lesson 14's PassSteppers in a real JupyterLab (issue 43).

The lesson runs in JupyterLab, 1400 px wide; each PassStepper widget is stepped through
every step with its step box (jslinked: no kernel round trip). At each step:

* exactly one of the stepper's drawings is on show (``.tg-pass-graph-<k>``: the graph
  the step's pass was given);
* every node the frame marks (its ``data-marked``) is drawn there, on show (a box of
  its own, not hidden), filled with its change's colour (``pass_stepper.MARKS``);
* the first marked node lies inside the part of the drawing's box on show (the box
  follows it, as the other steppers follow the node being processed).

A failing check names the stepper, the step and the node.
"""
from labserver import REPO, copy_notebook, go_to_step, open_notebook, run_all_cells

NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden)"
WIDGET = f"{NOTEBOOK} .tg-stepper-widget"

#: What widget i shows now: the step, the drawings on show, and each marked node's fill,
#: whether it is on show, and whether it lies inside the box's visible part.
SHOWN = """([sel, i]) => {
    const widget = document.querySelectorAll(sel)[i];
    const frame = widget.querySelector('.tg-frame');
    const graph = widget.querySelector('.tg-graph-box'), outer = graph.getBoundingClientRect();
    const left = outer.left + graph.clientLeft, top = outer.top + graph.clientTop;
    const box = {left: Math.max(left, 0), top: Math.max(top, 0),
                 right: Math.min(left + graph.clientWidth, innerWidth),
                 bottom: Math.min(top + graph.clientHeight, innerHeight)};
    const drawings = [...widget.querySelectorAll('.tg-pass-graph')]
        .filter(d => getComputedStyle(d).display !== 'none')
        .map(d => [...d.classList].find(c => /^tg-pass-graph-\\d+$/.test(c)));
    const marked = (frame.dataset.marked || '').split(' ').filter(Boolean).map(name => {
        const g = [...widget.querySelectorAll('svg g.tg-node-' + name)]
            .find(g => g.getBoundingClientRect().width > 0);
        if (!g) return {name, shown: false};
        const shape = g.querySelector(':scope > :is(path, polygon, ellipse):not([fill="none"])');
        const r = g.getBoundingClientRect();
        return {name, shown: g.checkVisibility(), fill: getComputedStyle(shape).fill,
                inside: r.left >= box.left - 1 && r.right <= box.right + 1
                        && r.top >= box.top - 1 && r.bottom <= box.bottom + 1};
    });
    return {step: frame.dataset.step, kind: frame.dataset.kind, drawings, marked};
}"""


def _rgb(hex_colour):
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_lesson14_steps_with_the_marked_nodes_on_show(browser, lab, output_dir):
    from teachgrad.viz.pass_stepper import MARKS
    fills = {_rgb(fill) for fill, _ in MARKS.values()}
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        name = copy_notebook(lab, REPO / "notebooks" / "14_tracing_and_compiling.ipynb",
                             "pass_steppers_lesson14.ipynb")
        open_notebook(page, lab, name)
        assert run_all_cells(page, timeout_ms=300_000) == []
        page.wait_for_selector(f"{WIDGET} .tg-frame[data-step='0']", timeout=30_000)
        count = page.locator(WIDGET).count()
        assert count >= 2                     # the MLP step's and the CNN step's
        marked_seen = 0
        for i in range(count):
            page.evaluate("([sel, i]) => document.querySelectorAll(sel)[i].scrollIntoView()",
                          [WIDGET, i])
            last = int(page.locator(WIDGET).nth(i).locator(".tg-controls .widget-text input")
                       .get_attribute("max") or 0)
            assert last >= 7
            for step in range(last + 1):
                go_to_step(page, WIDGET, i, step)
                page.wait_for_timeout(250)    # the follow's 0.2 s transition
                shown = page.evaluate(SHOWN, [WIDGET, i])
                where = (i, step, shown["kind"])
                assert len(shown["drawings"]) == 1, (where, shown["drawings"])
                for node in shown["marked"]:
                    assert node["shown"], (where, node)
                    assert node["fill"] in fills, (where, node)
                if shown["marked"]:
                    assert shown["marked"][0]["inside"], (where, shown["marked"][0])
                    marked_seen += len(shown["marked"])
            page.locator(WIDGET).nth(i).screenshot(
                path=str(output_dir / f"lesson14_pass_stepper_{i}.png"))
        assert marked_seen, "no step marked a node"
        print(f"\nlesson 14: {count} PassSteppers, {marked_seen} marked nodes seen")
    finally:
        context.close()
