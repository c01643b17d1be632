"""What a student sees of a stepper (issue 31): numbered steps that agree, a drawing whose
text stays readable and whose node being processed stays in view, and a view that says what
needs a kernel and how to keep the stepper in a saved notebook."""
import re

import numpy as np

import teachgrad as tg
from teachgrad.viz import follow


def _conv_stepper():
    rng = np.random.default_rng(0)
    x = tg.constant(rng.standard_normal((1, 4, 4, 1)).round(1), name="x")
    w = tg.Variable(rng.standard_normal((2, 2, 1, 1)).round(1), name="w")
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.nn.conv2d(x, w, strides=1, padding="VALID", name="y")
        loss = tg.sum(y * y, name="loss")
    return tg.viz.BackpropStepper.from_gradient(tape, loss, [x, w])


def _chain_stepper(n=12):
    x = tg.constant(0.3, name="x")
    with tg.GradientTape() as tape:
        tape.watch(x)
        h = x
        for _ in range(n):
            h = tg.sin(h)
    return tg.viz.BackpropStepper.from_gradient(tape, h, [x])


def test_the_header_counts_the_steps_as_the_frames_number_them():
    stepper = _chain_stepper(3)
    last = len(stepper.frames) - 1
    assert f"{last + 1} steps, 0 to {last}" in stepper.header_html()
    assert f"Step {last} (0 to {last}):" in stepper.frame_html(last, "s")


def test_a_wide_drawing_keeps_its_text_readable():
    stepper = _conv_stepper()
    svg = stepper.graph_html("s")
    least = follow.readable_width(svg)
    width_pt = float(re.search(r'<svg width="([\d.]+)pt"', svg).group(1))
    smallest = min(float(f) for f in re.findall(r'font-size="([\d.]+)"', svg))
    assert smallest * least / width_pt >= 9          # px of the smallest text, at its narrowest
    widget = stepper.widget
    assert widget.tg_parts["graph"].layout.min_width == f"min({least}px, 100%)"
    assert f"min-width: {least}px" in widget.tg_parts["graph"].value


def test_the_convolutions_handed_to_x_and_w_are_written_out():
    stepper = _conv_stepper()
    conv = next(f for f in stepper.frames.frames
                if f.kind == "CallVJP" and f.node.op.name == "conv2d")
    html = stepper.frame_html(conv.index, "s")
    assert "float64[1, 4, 4, 1], shown as 4x4:" in html


def test_every_frame_moves_the_drawing_to_the_node_being_processed():
    stepper = _chain_stepper()
    centres = follow.centres(stepper.graph_html("s"))
    assert len(centres) >= 12 and all(0 <= x <= 1 and 0 <= y <= 1 for x, y in centres.values())
    for frame in stepper.frames.frames:
        html = stepper.frame_html(frame.index, "s")
        if frame.processing is not None:
            name = stepper.drawing().node_names[frame.processing]
            fy = round(centres[name][1] * 100, 2)
            assert f"calc(60vh / 2 - {fy}%)" in html
    assert "translate(min(" not in stepper.first_picture()   # the static picture stays put


def test_the_view_says_what_needs_a_kernel_and_how_to_save_the_stepper():
    stepper = _chain_stepper(2)
    parts = stepper.widget.tg_parts
    # a neutral note (it shows with a live kernel too); the tooltip says what needs one
    assert "work in a saved notebook" in parts["kernel"].value
    assert "need a running kernel" in parts["kernel"].value
    assert all("needs a running kernel" in parts[b].tooltip for b in ("back", "step", "reset"))
    assert "Save Widget State Automatically" in stepper.static_html()


def _displayed(obj):
    """The mimebundles IPython displays for ``obj`` (one per output), as a notebook does."""
    from unittest import mock

    import IPython.display
    sent = []
    with mock.patch.object(IPython.display, "display",
                           lambda data, raw=False: sent.append(data if raw else None)):
        obj._ipython_display_()
    return sent


def test_a_stepper_leaves_an_html_export_a_hidden_copy_of_its_first_step():
    # nbconvert shows a widget output's view, not its text/html, once the notebook holds
    # widget state; offline that view stays empty. A second output carries the first step.
    from teachgrad.viz import render
    stepper = _chain_stepper(2)
    widget_output, copy = _displayed(stepper)
    assert "application/vnd.jupyter.widget-view+json" in widget_output
    assert widget_output["text/html"] == stepper.static_html()
    assert list(copy) == ["text/html"]                   # nbval compares no HTML
    html = copy["text/html"]
    assert f'<div class="tg-stepper {render.EXPORT_CLASS}" hidden style="display:none">' in html
    assert "cannot load here" in html and 'class="tg-first-frame"' in html
    assert stepper.text().splitlines()[0] in html
    # it shows where its style applies, unless a widget (its style sheet, more specific) or
    # the text/html view is on the page
    assert f"div.{render.EXPORT_CLASS} {{display: block !important;}}" in html
    assert f":root:has(.tg-stepper.tg-static) div.{render.EXPORT_CLASS}" in html
    assert f":root div.{render.EXPORT_CLASS} {{display: none !important;}}" in \
        stepper.header_html()
    assert render.EXPORT_CLASS not in stepper.static_html()


def test_the_play_buttons_have_glyphs_without_font_awesome():
    header = _chain_stepper(2).header_html()
    for icon, glyph in (("play", r"\25B6"), ("pause", r"\275A\275A"), ("stop", r"\25A0")):
        assert f'.tg-stepper-widget .widget-play .fa-{icon}::before {{content: "{glyph}";}}' \
            in header
    assert ".widget-play .fa::before {font-family: var(--jp-ui-font-family" in header
