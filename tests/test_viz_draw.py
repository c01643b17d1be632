"""tg.viz.draw: DOT text for tapes, graphs, functions and backward-pass traces.

Issue 7, drawing part. The DOT text is deterministic, so most tests compare it
(SVG varies with the Graphviz version); the escaping tests render real SVG with
``dot`` (skipped without it), and the browser fallback is run in node (skipped
without node).
"""
import base64
import hashlib
import json
import pathlib
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import teachgrad as tg
from teachgrad.ops.core.apply import bind
from teachgrad.ops.core.declare import primitive
from teachgrad.ops.core.user_rules import defvjp  # a user's rules: Tensors

draw_module = sys.modules["teachgrad.viz.draw"]
wasm = sys.modules["teachgrad.viz.wasm"]

needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz's dot program is not installed")
ATTACKS = ["<script>alert(1)</script>", '"];x->y[', "back\\slash\\", "two\nlines",
           "ünï—code π 🙂", "a&b'c"]


def statements(drawing):
    """The DOT statements, without indentation."""
    return [line.strip() for line in drawing.source.splitlines()]


def node_attrs(drawing, name):
    """The attribute text of DOT node ``name``."""
    line = next(s for s in statements(drawing) if s.startswith(f"{name} ["))
    return line[len(name) + 2:-1]


def edges(drawing):
    return [s.split(" [")[0] for s in statements(drawing) if " -> " in s]


def fill_of(drawing, name):
    match = re.search(r'fillcolor="([^"]*)"', node_attrs(drawing, name))
    return match.group(1) if match else None


def clusters(drawing):
    """The cluster labels, in the order they are written."""
    return re.findall(r"subgraph cluster_\d+ \{\s*graph \[[^\]]*?label=<<b>(.*?)</b>>",
                      drawing.source)


def tiny_graph():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(2,), name="x")
        y = x * 2.0
    return g, x, y


def svg_of(drawing):
    return drawing.pipe(format="svg", encoding="utf-8")


def svg_texts(svg):
    root = ET.fromstring(svg)   # also checks that the SVG is well-formed XML
    return ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]


# -- the DOT text ------------------------------------------------------------------
def test_tiny_graph_exact_dot():
    g, x, y = tiny_graph()
    assert tg.viz.draw(g, fetches=[y]).source == """digraph {
\tgraph [fontname="Helvetica" fontsize="10" newrank="true" nslimit="5"]
\tnode [shape="box" style="rounded,filled" fillcolor="white" fontname="Helvetica" \
fontsize="11" margin="0.12,0.04"]
\tedge [fontname="Helvetica" fontsize="9" arrowsize="0.7" color="#555555"]
\trankdir="TB"
\tsize="8.8,1000"
\tn0 [label=<<b>x</b><br/><font point-size="9">placeholder</font>\
<br/><font point-size="9">(2,) float64</font>>]
\tn1 [label=<<b>Const</b><br/><font point-size="9">() float64</font>\
<br/><font point-size="9">value = 2</font>>]
\tn2 [label=<<b>multiply</b><br/><font point-size="9">(2,) float64</font>> peripheries="2"]
\tn0 -> n2 [class="tg-edge-n0-n2"]
\tn1 -> n2 [class="tg-edge-n1-n2"]
}
"""


def build_model():
    """A graph with scopes, a tg.function call and gradients: most of what is drawn."""
    @tg.function
    def inner(v):
        return tg.sin(v) * v

    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(None, 2), name="x")
        with tg.name_scope("layer1"):
            W = tg.constant(np.eye(2), name="W")
            h = tg.tanh(x @ W)
        loss = tg.sum(inner(h))
        tg.gradients(loss, [W])
    return g


def test_dot_is_the_same_for_the_same_program_whatever_ran_before():
    first = tg.viz.draw(build_model()).source
    for _ in range(3):   # move the global Node and tensor counters on
        tiny_graph()
        tg.constant(1.0) + 2.0
    second = tg.viz.draw(build_model()).source
    assert first == second
    numbers = sorted(int(i) for i in re.findall(r"^\s*n(\d+) \[", first, re.M))
    assert numbers == list(range(len(numbers)))   # n0, n1, ... without gaps


def test_tape_drawing_is_deterministic_too():
    def build():
        x = tg.constant(3.0, name="x")
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = tg.sin(x) * x
        return tg.viz.draw(y, tape=tape).source
    first = build()
    tg.constant(0.0) * 1.0
    assert build() == first
    assert "sin_" not in first   # the tape node's own name holds the global counter


# -- eager tensors on a tape ---------------------------------------------------------
def test_tape_history_drawn_with_leaves_and_target():
    x = tg.constant(3.0, name="x")
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tg.sin(x) * x + 2.0
        inside = tg.viz.draw(y)            # the tape in use is found on its own
    drawing = tg.viz.draw(y, tape=tape)
    assert drawing.source == inside.source
    ops = {node.op.name: name for node, name in drawing.node_names.items()}
    assert ops == {"sin": "n0", "multiply": "n1", "add": "n2"}
    assert drawing.tensor_names[x.id] == "t0"
    assert set(edges(drawing)) == {"t0 -> n0", "n0 -> n1", "t0 -> n1", "n1 -> n2", "t1 -> n2"}
    assert 'peripheries="2"' in node_attrs(drawing, "n2")      # the target
    assert "<b>x</b>" in node_attrs(drawing, "t0") and ">value = 3<" in node_attrs(drawing, "t0")
    assert "value = 0.1411" in node_attrs(drawing, "n0")        # sin(3), a small value
    assert "tensor" not in drawing.source                      # unnamed ops: t1, t2, ...
    titles = re.findall(r"<b>([^<]*)</b>", drawing.source)
    assert titles == ["t1", "t2", "t4", "x", "t3"]   # sin, multiply, add; x and 2.0


def test_tape_errors_say_what_to_do():
    x = tg.constant(3.0, name="x")
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError, match="tape=tape"):
        tg.viz.draw(y)                      # outside the block, no tape given
    with pytest.raises(ValueError, match="no recorded history"):
        tg.viz.draw(x, tape=tape)           # a watched input has no history
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="persistent=True"):
        tg.viz.draw(y, tape=tape)           # a one-shot tape let go of its records


def test_list_of_tensors_and_multiple_outputs():
    x = tg.constant([1.0, 2.0], name="x")
    with tg.GradientTape() as tape:
        tape.watch(x)
        a, b = tg.split(x, 2)
        y = a * b
        z = tg.exp(a)
    drawing = tg.viz.draw([y, z], tape=tape)
    assert 'n0 -> n1 [label=":0" class="tg-edge-n0-n1"]' in statements(drawing)
    assert 'n0 -> n1 [label=":1" class="tg-edge-n0-n1"]' in statements(drawing)
    assert "0: (1,) float64 value = [1]" in node_attrs(drawing, "n0")
    assert len(drawing.node_names) == 3


# -- graphs, scopes, functions -------------------------------------------------------
def test_graph_all_nodes_or_only_what_fetches_need():
    g, x, y = tiny_graph()
    with g.as_default():
        unrelated = tg.exp(x)
    assert len(tg.viz.draw(g).node_names) == 4
    drawing = tg.viz.draw(g, fetches=[y])
    assert [n.op.name for n in drawing.node_names] == ["placeholder", "const", "multiply"]
    assert tg.viz.draw(y).source == drawing.source   # a graph tensor draws its graph
    assert len(tg.viz.draw(g, fetches=[unrelated.node]).node_names) == 2


def test_name_scopes_become_nested_clusters():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(3,), name="x")
        with tg.name_scope("model"):
            with tg.name_scope("layer1"):
                h = tg.tanh(x)
            with tg.name_scope("layer2"):
                tg.exp(h)
    drawing = tg.viz.draw(g)
    assert clusters(drawing) == ["model", "layer1", "layer2"]
    text = drawing.source
    model = text.index("label=<<b>model</b>>")
    assert model < text.index("<b>tanh</b>") < text.index("<b>layer2</b>") \
        < text.index("<b>exp</b>")
    assert text.count("}") == 4   # model, layer1, layer2 and the digraph
    flat = tg.viz.draw(g, scopes=False)
    assert clusters(flat) == [] and "<b>model/layer1/tanh</b>" in flat.source


def test_collapse_folds_scopes_into_one_node_each():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(3,), name="x")
        with tg.name_scope("layer1"):
            h = tg.tanh(x * 2.0)
        with tg.name_scope("layer2"):
            y = tg.exp(h) + 1.0
    drawing = tg.viz.draw(g, collapse=1)
    by_name = {node.label: name for node, name in drawing.node_names.items()}
    assert by_name["x"] == "n0"
    assert {by_name[k] for k in by_name if k.startswith("layer1/")} == {"s0"}
    assert {by_name[k] for k in by_name if k.startswith("layer2/")} == {"s1"}
    assert set(edges(drawing)) == {"n0 -> s0", "s0 -> s1"}   # one edge between groups
    assert "3 ops" in node_attrs(drawing, "s0")
    only = tg.viz.draw(g, collapse=["layer2"])
    assert "s0" in {name for name in only.node_names.values()}
    assert "<b>tanh</b>" in only.source and "<b>exp</b>" not in only.source
    with pytest.raises(ValueError, match="layer3.*scopes are: layer1, layer2"):
        tg.viz.draw(g, collapse=["layer3"])
    assert tg.viz.draw(g, collapse=None).source == tg.viz.draw(g).source
    assert tg.viz.draw(y, collapse=1).node_names == drawing.node_names


def test_function_body_drawn_as_a_cluster():
    @tg.function
    def f(v):
        with tg.name_scope("inner"):
            return tg.sin(v) * v

    @tg.function
    def outer(v):
        return f(v) + 1.0

    with pytest.raises(ValueError, match="has not been traced yet"):
        tg.viz.draw(outer)
    outer(tg.constant([1.0, 2.0]))
    drawing = tg.viz.draw(outer)
    assert clusters(drawing) == ["function: f", "inner"]
    assert "label=<<b>outer</b>>" in drawing.source     # the function's name as title
    call = next(n for n in drawing.node_names if n.op.name == "call")
    body_ops = [n.op.name for n in drawing.node_names if n.op.name in ("sin", "multiply")]
    assert body_ops == ["sin", "multiply"]
    assert drawing.node_names[call] == "n1"
    # The call node and its body sit together in one cluster.
    block = drawing.source[drawing.source.index("subgraph cluster_0"):]
    assert block.index("n1 [") < block.index("function: f")
    concrete = outer.get_concrete_function(tg.constant([1.0, 2.0]))
    assert tg.viz.draw(concrete).source == drawing.source
    plain = tg.viz.draw(outer, expand_functions=False)
    assert clusters(plain) == [] and len(plain.node_names) == 4


def test_control_flow_bodies_drawn_as_clusters():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(), name="x")
        tg.while_loop(lambda i, v: i < 3.0, lambda i, v: (i + 1.0, v * x),
                      [tg.constant(0.0), x])
        tg.cond(x > 0.0, lambda: x * 2.0, lambda: -x)
    labels = clusters(tg.viz.draw(g))
    assert any(label.startswith("cond: ") for label in labels)
    assert any(label.startswith("body: ") for label in labels)
    assert any(label.startswith("true_fn: ") for label in labels)
    assert any(label.startswith("false_fn: ") for label in labels)


def test_gradient_nodes_side_by_side_coloured_like_their_forward_node():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(None, 3), name="x")
        with tg.name_scope("layer1"):
            W = tg.constant(np.ones((3, 1)), name="W")
            h = tg.tanh(x @ W)
        loss = tg.sum(h * h)
        tg.gradients(loss, [W])
    drawing = tg.viz.draw(g)
    labels = clusters(drawing)
    assert labels[0] == "forward" and "gradients" in labels
    gradient_nodes = [n for n in drawing.node_names if n.grad_of is not None]
    assert len(gradient_nodes) >= 6
    colours = set()
    for node in gradient_nodes:
        fill = fill_of(drawing, drawing.node_names[node])
        assert fill is not None and fill == fill_of(drawing, drawing.node_names[node.grad_of])
        colours.add(fill)
    assert len(colours) == 4      # matmul, tanh, multiply and sum each have their own
    # A forward value a gradient rule reads is drawn again on the gradient side.
    reads = [s for s in statements(drawing) if re.match(r"r\d+ \[", s)]
    assert any("<b>layer1/tanh</b>" in s for s in reads)
    forward = {name for n, name in drawing.node_names.items() if n.grad_of is None
               and not n.label.startswith("gradients/")}
    for edge in edges(drawing):   # no edge runs from the forward side to the gradients
        tail, head = edge.split(" -> ")
        assert not (tail in forward and head not in forward)
    plain = tg.viz.draw(g, side_by_side=False)
    assert "fillcolor=\"#" not in "".join(s for s in statements(plain) if s.startswith("n"))
    assert "forward" not in clusters(plain)


# -- a recorded backward pass ----------------------------------------------------------
def test_trace_drawing_maps_every_pending_node():
    x = tg.constant(3.0, name="x")
    w = tg.constant(2.0, name="w")
    with tg.GradientTape() as tape:
        tape.watch([x, w])
        y = tg.sin(x) * w + x * x
    with tg.viz.record() as rec:
        tape.gradient(y, [x, w])
    trace = rec.traces[0]
    start = trace.events[0]
    drawing = tg.viz.draw(trace)
    assert set(start.pending) <= set(drawing.node_names)
    assert drawing.tensor_names[x.id] == "t0" and drawing.tensor_names[w.id] == "t1"
    assert 'penwidth="2.5"' in node_attrs(drawing, "t0")      # a source
    assert tg.viz.draw(rec).source == drawing.source           # a one-trace recorder
    # Every node the engine reports in its events has a DOT name.
    for event in trace.events:
        node = getattr(event, "node", None)
        if node is not None:
            assert node in drawing.node_names


def test_trace_of_graph_gradients():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(2,), name="x")
        W = tg.constant(np.ones(2), name="W")
        with tg.viz.record() as rec:
            tg.gradients(tg.sum(tg.tanh(x * W)), [W])
    start = rec.traces[0].events[0]
    drawing = tg.viz.draw(rec.traces[0])
    assert set(start.pending) <= set(drawing.node_names)
    assert all(n.grad_of is None for n in drawing.node_names)   # forward nodes only


def test_recorder_with_several_traces_asks_for_one():
    x = tg.constant(1.0)
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    with tg.viz.record() as rec:
        tape.gradient(y, x)
        tape.gradient(y, x)
    with pytest.raises(ValueError, match=r"rec.traces\[0\]"):
        tg.viz.draw(rec)


# -- escaping ----------------------------------------------------------------------------
def attack_tape_drawing():
    """An op and tensors named after each attack, on a tape."""
    x = tg.constant(1.0, name=ATTACKS[0])
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x
        for name in ATTACKS:
            op = primitive(name, lambda a: a * 2)
            defvjp(op, lambda g, ans, a: g * 2)
            y = bind(op, y) * tg.constant(1.0, name=name)
    return tg.viz.draw(y, tape=tape, title=ATTACKS[0])


def test_escaped_labels_in_dot():
    source = attack_tape_drawing().source
    assert "<script>" not in source and "&lt;script&gt;alert(1)&lt;/script&gt;" in source
    assert '&quot;];x-&gt;y[' in source and '"];x->y[' not in source
    assert "two<br/>lines" in source and "back\\slash\\" in source and "🙂" in source
    # Only the drawing's own names define nodes and edges.
    defined = re.findall(r"^\s*(\S+) \[", source, re.M)
    assert all(re.fullmatch(r"graph|node|edge|[ntsr]\d+", name) for name in defined)


@needs_dot
def test_attacks_render_as_text_in_real_svg():
    drawing = attack_tape_drawing()
    svg = svg_of(drawing)
    assert "<script" not in svg.lower()
    texts = svg_texts(svg)
    for name in ATTACKS:
        for line in name.split("\n"):
            assert line in texts, (line, texts)
    assert len(re.findall(r'class="node"', svg)) == \
        len(drawing.node_names) + len(drawing.tensor_names)
    assert len(re.findall(r'class="edge[ "]', svg)) == len(edges(drawing))


@needs_dot
def test_graph_names_with_attacks_render_as_text():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(2,), name=ATTACKS[1])
        for name in ATTACKS[2:]:
            x = tg.identity(x) * tg.constant(1.0, name=name)
        with tg.name_scope('<i onclick="x">'):
            tg.sin(x)
    drawing = tg.viz.draw(g)
    texts = svg_texts(svg_of(drawing))
    assert '<i onclick="x">' in texts and ATTACKS[1] in texts and "ünï—code π 🙂" in texts


def test_control_characters_are_shown_not_passed_on():
    g = tg.Graph()
    with g.as_default():
        tg.placeholder(tg.float64, shape=(), name="bell\x07tab\there")
    source = tg.viz.draw(g).source
    assert "bell\\x07tab here" in source and "\x07" not in source


# -- options -------------------------------------------------------------------------------
def test_show_options_turn_details_on_and_off():
    x = tg.constant([1.0, 2.0], name="x")
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.exp(x)
    full = node_attrs(tg.viz.draw(y, tape=tape), "n0")
    assert "(2,)" in full and "float64" in full and "[2.718, 7.389]" in full
    assert "(2,)" not in node_attrs(tg.viz.draw(y, tape=tape, show_shapes=False), "n0")
    assert "float64" not in node_attrs(tg.viz.draw(y, tape=tape, show_dtypes=False), "n0")
    assert "2.718" not in node_attrs(tg.viz.draw(y, tape=tape, show_values=False), "n0")
    assert "2.718" not in node_attrs(tg.viz.draw(y, tape=tape, max_value_size=1), "n0")
    assert 'rankdir="LR"' in tg.viz.draw(y, tape=tape, rankdir="lr").source


def test_bad_arguments_raise_clear_errors():
    g, x, y = tiny_graph()
    with pytest.raises(TypeError, match="cannot draw a int.*tg.Graph.*tg.function"):
        tg.viz.draw(42)
    with pytest.raises(ValueError, match="rankdir must be one of"):
        tg.viz.draw(g, rankdir="up")
    with pytest.raises(ValueError, match="tape= is only used"):
        tg.viz.draw(g, tape=tg.GradientTape())
    with pytest.raises(ValueError, match="fetches= chooses"):
        tg.viz.draw(tg.constant(1.0), fetches=[y])
    other, _, other_y = tiny_graph()
    with pytest.raises(ValueError, match="not part of it"):
        tg.viz.draw(g, fetches=[other_y])
    with pytest.raises(ValueError, match="more than max_nodes=2.*fetches"):
        tg.viz.draw(g, max_nodes=2)
    assert len(tg.viz.draw(g, max_nodes=None).node_names) == 3
    with pytest.raises(ValueError, match="collapse=0 folds nothing"):
        tg.viz.draw(g, collapse=0)
    with pytest.raises(TypeError, match="collapse takes"):
        tg.viz.draw(g, collapse=[1])


def test_copy_keeps_the_name_maps():
    g, x, y = tiny_graph()
    drawing = tg.viz.draw(g)
    copy = drawing.copy()
    assert isinstance(copy, tg.viz.Drawing) and copy.node_names == drawing.node_names
    assert copy.source == drawing.source


# -- notebook display, with and without dot -------------------------------------------------
@needs_dot
def test_notebook_shows_svg_from_dot():
    g, x, y = tiny_graph()
    bundle = tg.viz.draw(g)._repr_mimebundle_()
    assert list(bundle) == ["image/svg+xml"] and "<svg" in bundle["image/svg+xml"]


def without_dot(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))   # no dot (nor anything else) on PATH


def test_without_dot_the_notebook_gets_the_python_layout_and_its_dot_text(monkeypatch,
                                                                         tmp_path):
    without_dot(monkeypatch, tmp_path)
    drawing = attack_tape_drawing()
    bundle = drawing._repr_mimebundle_()
    html = bundle["text/html"]
    assert "Viz.js" not in html and len(html) < 40_000   # the library is not in the drawing
    assert html.startswith('<div id="teachgrad-viz-') and "<svg" not in html
    (picture,) = re.findall(r'<img [^>]*src="data:image/svg\+xml;base64,([^"]+)"', html)
    svg = base64.b64decode(picture).decode("utf-8")     # the Python layout, as an image
    assert svg.startswith("<svg") and "<script" not in svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    assert re.findall(r'src="([a-z]+:)', html) == ["data:"]    # nothing from the network
    assert "cdn" not in html.lower().replace(picture.lower(), "")
    assert "laid this graph out itself" in html          # and says so
    assert html.count("<script>") == 1 and html.count("</script>") == 1
    before, redraw = html.split("<script>")
    assert "<script" not in redraw.split("</script>")[0]  # no markup from the names
    assert "<script" not in before
    literal = re.search(r"var dot = (\".*?\");\n", redraw).group(1)
    assert json.loads(literal) == drawing.source           # the DOT, as an escaped string
    assert "text/plain" in bundle


def test_text_plain_is_the_same_with_and_without_dot(monkeypatch, tmp_path):
    # The lessons' stored outputs keep text/plain: it must not depend on the machine.
    import graphviz
    from IPython.core.formatters import DisplayFormatter
    formatter = DisplayFormatter()
    drawing = attack_tape_drawing()
    expected = f"<teachgrad drawing: {len(drawing.node_names)} ops>"
    assert repr(drawing) == expected
    with monkeypatch.context() as m:   # as with dot, without needing it: graphviz's SVG
        m.setattr(graphviz.Digraph, "_repr_mimebundle_",
                  lambda self, *args, **kwargs: {"image/svg+xml": "<svg></svg>"})
        with_dot, _ = formatter.format(drawing)
    without_dot(monkeypatch, tmp_path)
    without, _ = formatter.format(drawing)
    assert with_dot["text/plain"] == without["text/plain"] == expected
    assert "image/svg+xml" in with_dot and "text/html" in without


def test_vendored_viz_js_is_the_recorded_file():
    static = pathlib.Path(tg.viz.__file__).parent / "static"
    data = (static / "viz-global.js").read_bytes()
    assert hashlib.sha256(data).hexdigest() == wasm.VIZ_JS_SHA256
    assert b"</script" not in data.lower() and b"\r" not in data and b"\0" not in data
    assert "MIT" in (static / "LICENSE-viz-js.txt").read_text()


NODE_HARNESS = r"""
const vm = require('vm'), fs = require('fs');
const pages = process.argv.slice(2).map(p => fs.readFileSync(p, 'utf8'));
const scripts = pages.flatMap(html => [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)]
                                          .map(m => m[1]));
const els = {};
for (const html of pages) {
  for (const m of html.matchAll(/<div id="([^"]+)"/g)) {
    els[m[1]] = {innerHTML: 'python layout', textContent: ''};
  }
}
const ctx = {console, URL, WebAssembly, TextDecoder, TextEncoder, performance,
             crypto: globalThis.crypto, setTimeout, define: () => {}, exports: undefined,
             document: {currentScript: null, baseURI: 'http://localhost/',
                        getElementById: wanted => els[wanted] || null}};
ctx.define.amd = true;       // an AMD loader on the page must not swallow Viz
ctx.window = ctx;
vm.createContext(ctx);
for (const s of scripts) vm.runInContext(s, ctx);
const drawings = Object.keys(els).filter(id => !id.endsWith('-note'));
(function wait(n) {
  if (drawings.every(id => els[id].innerHTML.includes('<svg')) || n > 200) {
    process.stdout.write(JSON.stringify(drawings.map(
        id => ({svg: els[id].innerHTML, note: els[id + '-note'].textContent}))));
  } else { setTimeout(() => wait(n + 1), 50); }
})(0);
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("loader_first", [True, False])
def test_the_pages_graphviz_redraws_every_drawing_loaded_before_or_after_it(
        loader_first, monkeypatch, tmp_path):
    """One loader for a page of two drawings, run before them (a live notebook) or after
    them (outputs rendered in any order)."""
    node = shutil.which("node")
    without_dot(monkeypatch, tmp_path)
    drawing = attack_tape_drawing()
    pages = [drawing.html(), tg.viz.draw(tiny_graph()[0]).html()]
    pages = [wasm.loader_html()] + pages if loader_first else pages + [wasm.loader_html()]
    for i, page in enumerate(pages):
        (tmp_path / f"page{i}.html").write_text(page, encoding="utf-8")
    (tmp_path / "harness.js").write_text(NODE_HARNESS)
    result = subprocess.run([node, str(tmp_path / "harness.js")] +
                            [str(tmp_path / f"page{i}.html") for i in range(len(pages))],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    first, second = json.loads(result.stdout)
    assert first["note"] == second["note"] == wasm.DRAWN_IN_BROWSER
    svg = first["svg"]
    assert "<svg" in svg and "<script" not in svg.lower() and "<svg" in second["svg"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    assert len(re.findall(r'class="node"', svg)) == \
        len(drawing.node_names) + len(drawing.tensor_names)


def test_missing_vendored_file_keeps_the_python_layout_and_says_how_to_get_dot(
        monkeypatch, tmp_path):
    without_dot(monkeypatch, tmp_path)
    monkeypatch.setattr(wasm, "VIZ_JS", "missing.js")
    wasm.viz_js.cache_clear()
    try:
        g, x, y = tiny_graph()
        assert "data:image/svg+xml;base64," in tg.viz.draw(g)._repr_mimebundle_()["text/html"]
        with pytest.raises(RuntimeError, match="apt-get install graphviz"):
            wasm.loader_html()
    finally:
        monkeypatch.undo()
        wasm.viz_js.cache_clear()


def test_js_string_cannot_end_the_script_element():
    escape = sys.modules["teachgrad.viz.escape"]
    literal = escape.js_string('</script><!-- "\u2028 &')
    assert "<" not in literal and ">" not in literal and "&" not in literal
    assert json.loads(literal) == '</script><!-- "\u2028 &'


def test_eager_loop_iterations_are_grouped_in_boxes():
    x = tg.constant(1.5, name="x")
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        _, y = tg.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tg.sin(y) * x),
                             [tg.constant(0), x])
    drawing = tg.viz.draw(y, tape=tape)
    labels = re.findall(r"label=<<b>(while_loop[^<]*)</b>>", drawing.source)
    assert labels == [f"while_loop &#x27;while&#x27;, iteration {k}" for k in range(3)]
    assert drawing.source.count('color="#7e57c2"') == 3


# -- fused gradient ops show the algebra they stand for (issue 21) -----------------------------

def test_a_fused_op_is_drawn_with_its_algebra_in_a_graph():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (3,), name="x")
        (dx,) = tg.gradients(tg.sum(tg.tanh(x)), [x])
    source = tg.viz.draw(dx).source
    assert "<b>tanh_grad</b><br/>" in source and "(1 - y * y) * g" in source


def test_a_fused_op_recorded_on_a_tape_is_drawn_with_its_name_and_algebra():
    x = tg.constant([1.0, -2.0])
    with tg.GradientTape() as outer:
        outer.watch(x)
        with tg.GradientTape() as inner:
            inner.watch(x)
            y = tg.sum(tg.nn.relu(x))
        grad = inner.gradient(y, x)
    assert "relu_grad: where(x &gt; 0, g, 0)" in tg.viz.draw(grad, tape=outer).source


def test_each_fused_op_shows_the_algebra_of_its_own_recipe():
    from teachgrad.graph.optimize.formula import recipe_formula
    from teachgrad.ops.elementwise import math
    from teachgrad.ops.nn import activations as nn
    assert recipe_formula(math.tanh_grad_p) == "(1 - y * y) * g"
    assert recipe_formula(math.sigmoid_grad_p) == "g * (y * (1 - y))"
    assert recipe_formula(nn.relu_grad_p) == "where(x > 0, g, 0)"
    fused = {op.name for op in (math.tanh_grad_p, math.sigmoid_grad_p, nn.relu_grad_p,
                                math.tanh_p, nn.relu_p) if op.fused}
    assert fused == {"tanh_grad", "sigmoid_grad", "relu_grad"}


@pytest.mark.parametrize("argument, value", [("names", "abc"), ("fit", "no"),
                                             ("gradients", [1.0]), ("fit", None)])
def test_drawing_arguments_of_the_wrong_kind_are_refused_naming_them(argument, value):
    x = tg.constant(1.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(TypeError, match=rf"tg.viz.draw: `{argument}` must be"):
        tg.viz.draw(y, tape=tape, **{argument: value})


# -- a gradient graph called by its cotangents (issue 31: lesson 2 section 5) ----------
def _lesson_two_graph():
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, shape=(), name="x")
        y = tg.placeholder(tg.float64, shape=(), name="y")
        a = tg.multiply(x, y, name="a")
        b = tg.sin(a, name="b")
        c = tg.exp(a, name="c")
        d = tg.multiply(b, c, name="d")
        z = tg.add(d, a, name="z")
        with tg.viz.record() as rec:
            tg.gradients(z, [x, y], aggregation_method=tg.AggregationMethod.EXPERIMENTAL_TREE)
    return graph, rec.traces[0]


def _titles(source):
    """(cluster, bold title) of every op node of a DOT source, in order."""
    found, clusters = [], []
    for line in source.splitlines():
        cluster = re.search(r"label=<<b>([^<]*)</b>>\]$", line)
        if line.strip().startswith("subgraph"):
            clusters.append(None)
        elif line.strip() == "}" and clusters:
            clusters.pop()
        elif cluster and line.strip().startswith("graph"):
            clusters[-1] = cluster.group(1)
        else:
            node = re.match(r"\s*n\d+ \[label=<<b>([^<]*)</b>", line)
            if node:
                found.append((clusters[-1] if clusters else None, node.group(1)))
    return found


def test_a_gradient_graph_calls_its_ops_by_the_cotangents_they_compute():
    graph, trace = _lesson_two_graph()
    titles = _titles(tg.viz.draw(graph, trace=trace).source)
    gradient = [t for t in titles if t[0] not in (None, "forward")]
    assert gradient == [("gradients", "z_bar"),
                        ("d_grad", "b_bar"), ("d_grad", "c_bar"),
                        ("b_grad", "cos"), ("b_grad", "a_bar"),
                        ("c_grad", "a_bar"),
                        ("a_grad", "add"), ("a_grad", "a_bar"),
                        ("a_grad", "x_bar"), ("a_grad", "y_bar")], gradient
    assert not any(re.fullmatch(r"multiply(_\d+)?", title) for _, title in gradient)
    # the op each one is, under its name; without the trace, the graph's own names
    assert "<b>b_bar</b><br/><font point-size=\"9\">multiply</font>" in \
        tg.viz.draw(graph, trace=trace).source
    assert ("d_grad", "multiply_1") in _titles(tg.viz.draw(graph).source)
    with pytest.raises(ValueError, match="names= or trace="):
        tg.viz.draw(graph, trace=trace, names=tg.viz.names.of_scene(
            tg.viz.collect.scene_of(graph)))


def test_lesson_two_draws_its_gradient_graph_with_the_lessons_names():
    lesson = json.loads((pathlib.Path(__file__).parents[1] / "notebooks"
                         / "02_backward_pass_as_a_queue.ipynb").read_text())
    (cell,) = [c for c in lesson["cells"] if c["cell_type"] == "code"
               and "tg.viz.draw(graph" in "".join(c["source"])]
    assert "trace=graph_trace" in "".join(cell["source"])
    (drawing,) = [o["data"] for o in cell["outputs"] if "data" in o]
    svg = "".join(drawing.get("image/svg+xml") or drawing["text/html"])
    for name in ("z_bar", "b_bar", "c_bar", "a_bar", "x_bar", "y_bar"):
        assert f">{name}<" in svg, name
    assert ">multiply_1<" not in svg
