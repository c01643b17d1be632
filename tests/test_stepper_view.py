"""What a student sees of a stepper (issue 31): numbered steps that agree, a drawing whose
text stays readable and whose node being processed stays in view, notes that say what is
true where they show, and (issue 38) an HTML view of every frame beside the widget."""
import re

import numpy as np

import teachgrad as tg
from teachgrad.viz import follow, html_view


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
    assert smallest * least / width_pt >= 12         # px of the smallest text, at its narrowest
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


def test_each_note_says_what_is_true_where_it_shows():
    stepper = _chain_stepper(2)
    parts = stepper.widget.tg_parts
    # a neutral note (it shows with a live kernel too); the tooltip says what needs one
    assert "work in a saved notebook" in parts["kernel"].value
    assert "need a running kernel" in parts["kernel"].value
    assert all("needs a running kernel" in parts[b].tooltip for b in ("back", "step", "reset"))
    # where no script runs: how to get a stepper; where the HTML view runs: what it is
    assert "run the notebook in Jupyter (trust it if asked)" in stepper.static_html()
    view = html_view.frames_of(stepper.html_view())
    assert "run the cell again for the live stepper" in view["header"]
    for html in (stepper.static_html(), view["header"], stepper.header_html()):
        assert "internet" not in html and "Save Widget State" not in html


def _displayed(obj):
    """The mimebundles IPython displays for ``obj`` (one per output), as a notebook does."""
    from unittest import mock

    import IPython.display
    sent = []
    with mock.patch.object(IPython.display, "display",
                           lambda data, raw=False: sent.append(data if raw else None)):
        obj._ipython_display_()
    return sent


def test_a_stepper_displays_its_widget_then_a_view_of_every_frame():
    # The widget output (with its static text/html), then the HTML view as an output of
    # its own: text/html only, since nbval compares no HTML.
    stepper = _chain_stepper(2)
    widget_output, view_output = _displayed(stepper)
    assert "application/vnd.jupyter.widget-view+json" in widget_output
    assert widget_output["text/html"] == stepper.static_html()
    assert list(view_output) == ["text/html"]
    html, scope = view_output["text/html"], stepper._scope
    # hidden until its script runs; the live widget (its root has the scope) hides it too
    assert (f'<div class="tg-stepper {html_view.VIEW_CLASS} {scope}" data-scope="{scope}" '
            f'data-wait="{html_view.WAIT}" data-lm-suppress-shortcuts="true" '
            f'style="display:none"></div>') in html
    assert html_view.hide_style(scope) in stepper.widget.children[0].value
    assert scope in stepper.widget._dom_classes
    assert f"<script>{html_view.script()}</script>" in html
    # every frame, numbered as the widget numbers them, restyling the view's own drawing
    data = html_view.frames_of(html)
    assert len(data["frames"]) == len(stepper.frames) and data["first"] == 0
    for i, frame in enumerate(data["frames"]):
        assert f'data-step="{i}"' in frame and f"#{scope}-v " in frame
        assert f"#{scope} " not in frame
    assert f'id="{scope}-v"' in data["graph"] and "<svg" in data["graph"]
    assert f'id="{scope}"' not in data["graph"]
    assert "max-height:60vh" in data["graph"]      # the one box that scrolls
    # no network: nothing the page would fetch
    assert not re.search(r'(src|href)="(https?:)?//', html + "".join(data["frames"]))


def test_the_view_holds_the_widgets_window_of_frames():
    stepper = tg.viz.BackpropStepper(_chain_stepper(6).trace, max_frames=5, start=3)
    data = html_view.frames_of(stepper.html_view())
    assert data["first"] == 3 and len(data["frames"]) == 5
    assert 'data-step="3"' in data["frames"][0] and 'data-step="7"' in data["frames"][-1]
    assert "the widget holds steps 3 to 7" in data["header"]


def test_the_views_frames_travel_gzipped():
    stepper = _chain_stepper(12)
    html = stepper.html_view()
    frames = html_view.frames_of(html)["frames"]
    assert len(html) < sum(map(len, frames)) / 4     # frames repeat much of each other
    assert html_view.pack({"a": [1, "é"]}) == html_view.pack({"a": [1, "é"]})
    assert html_view.unpack(html_view.pack({"a": [1, "é"]})) == {"a": [1, "é"]}


def test_in_colab_the_view_shows_alone():
    # each Colab output is a frame of its own: the view cannot see the widget there
    from unittest import mock
    stepper = _chain_stepper(2)
    with mock.patch.dict("sys.modules", {"google.colab": object()}):
        (only,) = _displayed(stepper)
    assert set(only) == {"text/html", "text/plain"}
    assert 'data-wait="0"' in only["text/html"] and only["text/plain"] == stepper.text()


def test_a_view_needs_a_frame():
    import pytest
    with pytest.raises(ValueError, match="at least one frame"):
        html_view.view_html("tg-x", "", "", [])


def test_the_play_buttons_have_glyphs_without_font_awesome():
    header = _chain_stepper(2).header_html()
    for icon, glyph in (("play", r"\25B6"), ("pause", r"\275A\275A"), ("stop", r"\25A0")):
        assert f'.tg-stepper-widget .widget-play .fa-{icon}::before {{content: "{glyph}";}}' \
            in header
    assert ".widget-play .fa::before {font-family: var(--jp-ui-font-family" in header


def test_without_dot_the_view_carries_the_drawing_laid_out_in_python(monkeypatch):
    import shutil
    monkeypatch.setenv("PATH", "/nonexistent")       # graphviz finds no `dot`
    assert shutil.which("dot") is None
    stepper = _chain_stepper(3)
    data = html_view.frames_of(stepper.html_view())
    assert data["graph"].count("<svg") == 1 and "tg-node-n0" in data["graph"]
    assert "<script" not in data["graph"]             # no Viz.js: plain_layout drew it
    assert "laid this graph out itself" in data["header"]
    assert len(data["frames"]) == len(stepper.frames)
