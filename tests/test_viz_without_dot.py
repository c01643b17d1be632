"""Steppers in a kernel without Graphviz's ``dot`` program, and following the node
being processed in the JVPStepper (issue 31).

``dot`` is hidden by emptying PATH (the graphviz package runs ``dot`` through
the PATH, and says ExecutableNotFound when it is not there): the steppers then
lay their drawing out in Python (``teachgrad/viz/plain_layout.py``), and it must
carry what the frames style: a ``tg-node-<name>`` group for every drawn node, the
running sums' versions, and a place for each node that ``follow.py`` can read.
"""
import re
import shutil
import time

import pytest

import teachgrad as tg
from teachgrad.viz import follow, plain_layout, render


def lesson2_like():
    x, y = tg.Variable(2.0, name="x"), tg.Variable(3.0, name="y")
    with tg.viz.record() as rec:
        with tg.GradientTape() as tape:
            a = tg.multiply(x, y, name="a")
            z = tg.add(tg.sin(a, name="b"), tg.multiply(a, x, name="c"), name="z")
        tape.gradient(z, [x, y])
    return rec


@pytest.fixture
def no_dot(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert shutil.which("dot") is None


def test_backprop_stepper_draws_without_dot(no_dot):
    stepper = tg.viz.BackpropStepper(lesson2_like())
    svg = stepper.graph_html("tg-test")
    drawing = stepper.drawing()
    names = set(drawing.node_names.values()) | set(drawing.tensor_names.values())
    assert names and all(f"tg-node tg-node-{n}" in svg for n in names)
    assert "laid this graph out itself" in stepper.header_html()
    # every drawn node has a place for the follow, inside the drawing
    centres = follow.centres(svg)
    assert set(centres) == names
    assert all(0 <= x <= 1 and 0 <= y <= 1 for x, y in centres.values())
    # the inputs on top, the target at the bottom, as dot draws them
    target = drawing.node_names[stepper.frames.frames[1].processing]
    assert centres[target][1] == max(y for _, y in centres.values())
    # each frame restyles it: running sums shown, the processed node followed
    frame = next(f for f in stepper.frames.frames if f.processing is not None)
    html = stepper.frame_html(frame.index, "tg-test")
    assert "svg{transform:translate(" in html
    assert re.search(r'class="tg-g tg-g-t\d+-\d"', svg)
    widget = stepper.widget          # and the widget builds
    assert "tg-node-" in widget.tg_parts["graph"].value


def test_jvp_stepper_draws_without_dot(no_dot):
    x, x_dot = tg.constant([1.0, 2.0]), tg.constant([1.0, 0.5])
    with tg.viz.record() as rec:
        with tg.transposition_only(), tg.ForwardAccumulator(x, x_dot):
            tg.sum(tg.tanh(x) * x)
    stepper = tg.viz.JVPStepper(rec)
    graph = stepper.graph_html("tg-test")
    assert graph.count("<svg") == 4 and "tg-node-" in graph


def test_plain_layout_reads_what_dot_py_writes():
    source = "\n".join([
        "digraph {",
        '\tnode [shape="box" style="rounded,filled" fillcolor="white"]',
        '\tsubgraph cluster_0 {', '\t\tgraph [label=<scope>]',
        '\t\tn0 [label=<<b>a &amp; b</b><br/><font point-size="9">grad = 1</font>>]',
        "\t}",
        '\tt0 [label=<<b>x</b>> shape="ellipse" style="filled" fillcolor="#f2f2f2"]',
        '\tt0 -> n0 [label=":1" class="tg-edge-t0-n0"]', "}"])
    nodes, edges, defaults = plain_layout.parse(source)
    assert list(nodes) == ["n0", "t0"] and defaults["shape"] == "box"
    assert edges == [("t0", "n0", {"label": ":1", "class": "tg-edge-t0-n0"})]
    assert plain_layout.label_lines(nodes["n0"], "n0") == [("a &amp; b", 11.0, True),
                                                           ("grad = 1", 9.0, False)]
    svg = render._classed(plain_layout.svg(source), "s")
    assert 'class="edge tg-edge-t0-n0"' in svg and "<ellipse" in svg
    centres = follow.centres(svg)
    assert centres["t0"][1] < centres["n0"][1]       # x above what reads it
    assert follow.readable_width(svg) is not None


def test_plain_layout_is_cheap():
    """Measured, printed (pytest -s), and bounded loosely: a stepper's graph of 60
    nodes is laid out in well under a second."""
    lines = ["digraph {"] + [f"\tn{i} [label=<<b>op{i}</b>>]" for i in range(60)]
    lines += [f"\tn{i} -> n{j}" for i in range(60) for j in (i + 1, i + 7) if j < 60] + ["}"]
    start = time.perf_counter()
    plain_layout.svg("\n".join(lines))
    took = time.perf_counter() - start
    print(f"\nplain layout of 60 nodes, 113 edges: {took * 1e3:.1f} ms")
    assert took < 1.0


def test_jvp_stepper_follows_the_node_being_processed():
    if shutil.which("dot") is None:
        pytest.skip("compares with dot's drawing")
    x, x_dot = tg.constant([1.0, 2.0]), tg.constant([1.0, 0.5])
    with tg.viz.record() as rec:
        with tg.transposition_only(), tg.ForwardAccumulator(x, x_dot):
            tg.sum(tg.tanh(x) * x)
    stepper = tg.viz.JVPStepper(rec)
    scope = "tg-test"
    forward = next(f for f in stepper.frames.frames if f.phase == "aid")
    assert (f"#{scope} .tg-forward-graph svg{{transform:translate("
            in stepper.frame_html(forward.index, scope))
    inner = next(f for f in stepper.frames.frames
                 if f.phase == "transpose" and f.inner.processing is not None)
    html = stepper.frame_html(inner.index, scope)
    assert f"#{scope} .tg-op-{inner.op_index} svg{{transform:translate(" in html
    assert render.NO_DOT not in stepper.header_html()
