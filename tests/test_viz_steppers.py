"""BackpropStepper and JVPStepper (issue 7): frames folded from the engine's events.

The frames are checked as data, without a browser: one frame per event, the
last frame's gradients are the ones gradient() returned, pending counts follow
the Release events, the queue follows Pop and Enqueue, aggregation shows its
method. Then the widget's parts (jslinked controls, one Stack child per
frame, the cap) and the static fallback, whose text must be the same in
every run (nbval compares it).
"""
import re
import shutil

import numpy as np
import pytest

import teachgrad as tg
from teachgrad.autodiff import events
from teachgrad.viz import render
from teachgrad.viz.frame_types import DONE, NOT_REACHED, PROCESSING, QUEUED, SKIPPED, WAITING
from teachgrad.viz.frames import backprop_frames
from teachgrad.viz.jvp_frames import jvp_frames
from teachgrad.viz.values import format_value

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is missing")


def shared_subexpression(x_value=0.5):
    """y = x*x + sin(x*x): the square feeds two ops, so its gradient is an AddN."""
    x = tg.constant(x_value)
    with tg.GradientTape() as tape:
        tape.watch(x)
        a = x * x
        y = a + tg.sin(a)
    return tape, x, y


def recorded(tape, target, sources):
    with tg.viz.record() as rec:
        grads = tape.gradient(target, sources)
    return rec, grads


def kinds(frames):
    return [f.kind for f in frames.frames]


# -- BackpropStepper frames ------------------------------------------------------
def test_one_frame_per_event_and_last_frame_is_what_gradient_returned():
    tape, x, y = shared_subexpression()
    rec, grad = recorded(tape, y, x)
    (trace,) = rec.traces
    frames = backprop_frames(trace)
    assert len(frames) == len(trace.events)
    assert [f.event for f in frames.frames] == trace.events
    last = frames[len(frames) - 1]
    assert last.kind == "Finish"
    assert last.result[0] is grad                   # the very tensor gradient() returned
    assert last.gradients[x.id].total is grad
    expected = 2 * 0.5 * (1 + np.cos(0.25))        # dy/dx = 2x (1 + cos x^2)
    np.testing.assert_allclose(grad.numpy(), expected)
    assert "1.969" in last.sentence


def test_shared_subexpression_is_aggregated_with_add_n():
    tape, x, y = shared_subexpression()
    rec, grad = recorded(tape, y, x)
    frames = backprop_frames(rec.traces[0])
    aggregates = [f for f in frames.frames if f.kind == "Aggregate"]
    square = aggregates[0].event.node
    assert square.op.name == "multiply"
    # The square's gradient: 1 from the add, cos(x^2) from the sin, summed by add_n.
    summed = aggregates[0].gradients[square.outputs[0].id]
    assert summed.method == "add_n" and len(summed.contributions) == 2
    np.testing.assert_allclose([c.numpy() for c in summed.contributions], [1, np.cos(0.25)])
    np.testing.assert_allclose(summed.total.numpy(), 1 + np.cos(0.25))
    assert "add_n" in aggregates[0].sentence and "2 contributions" in aggregates[0].sentence
    # Before the Aggregate frame the contributions are there but not yet summed.
    before = frames[aggregates[0].index - 1].gradients[square.outputs[0].id]
    assert before.total is None and len(before.contributions) == 2
    # x*x hands x two contributions, summed by the second Aggregate (no node: a source).
    source = aggregates[1].gradients[x.id]
    assert aggregates[1].event.node is None
    assert source.method == "add_n" and source.total is grad


def test_pending_counts_follow_release_events():
    tape, x, y = shared_subexpression()
    rec, _ = recorded(tape, y, x)
    frames = backprop_frames(rec.traces[0])
    start = frames[0].event
    assert dict(frames[0].pending) == start.pending
    counts = dict(start.pending)
    for frame in frames.frames[1:]:
        if frame.kind == "Release":
            counts[frame.node] -= 1                # one consumer fewer to wait for
            assert frame.event.count == counts[frame.node]
        assert dict(frame.pending) == counts
    square = frames.nodes[0]
    assert start.pending[square] == 2            # read by the add and by the sin


def test_queue_follows_pop_and_enqueue():
    x = tg.constant(0.5)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.sin(x) * tg.cos(x) + tg.exp(x)     # the queue holds several nodes at once
    rec, _ = recorded(tape, y, x)
    frames = backprop_frames(rec.traces[0])
    assert max(len(f.queue) for f in frames.frames) >= 2
    assert frames[0].queue == frames[0].event.queue
    for before, frame in zip(frames.frames, frames.frames[1:]):
        if frame.kind == "Pop":
            assert before.queue[0] is frame.node      # taken from the front
            assert frame.queue == before.queue[1:] == frame.event.queue
            assert frame.processing is frame.node and frame.states[frame.node] == PROCESSING
        elif frame.kind == "Enqueue":
            assert frame.queue == before.queue + (frame.node,)
            assert frame.states[frame.node] == QUEUED
        else:
            assert frame.queue == before.queue


def test_node_states_over_the_pass():
    tape, x, y = shared_subexpression()
    rec, _ = recorded(tape, y, x)
    frames = backprop_frames(rec.traces[0])
    square, sine, add = frames.nodes
    assert [frames.names[n] for n in frames.nodes] == ["n0", "n1", "n2"]
    assert frames[0].states == {square: NOT_REACHED, sine: NOT_REACHED, add: QUEUED}
    first_release = next(f for f in frames.frames if f.kind == "Release")
    assert first_release.node is square and first_release.states[square] == WAITING
    assert "drops to 1" in first_release.sentence
    popped = [f for f in frames.frames if f.kind == "Pop"]
    assert [f.node for f in popped] == [add, sine, square]
    assert popped[1].states[add] == DONE         # the node before is done once the next pops
    assert set(frames[len(frames) - 1].states.values()) == {DONE}
    assert frames[len(frames) - 1].tensor_states[x.id] == DONE


def test_frames_share_unchanged_mappings():
    tape, x, y = shared_subexpression()
    rec, _ = recorded(tape, y, x)
    frames = backprop_frames(rec.traces[0])
    release = next(f for f in frames.frames if f.kind == "Release")
    after = frames[release.index + 1]
    assert after.kind == "Release"
    assert after.gradients is release.gradients   # nothing new arrived: the same mapping
    with pytest.raises(TypeError):
        release.pending[release.node] = 7         # frames are read-only


def test_unconnected_source_and_two_targets():
    x, w, z = tg.constant([1.0, 2.0]), tg.constant(3.0), tg.constant(4.0)
    with tg.GradientTape() as tape:
        tape.watch([x, w, z])
        y1 = tg.sum(x * w)
        y2 = w * w
    rec, grads = recorded(tape, [y1, y2], [x, w, z])
    frames = backprop_frames(rec.traces[0])
    last = frames[len(frames) - 1]
    assert last.result[2] is None and grads[2] is None
    assert "t3 gets None" in last.sentence     # an unnamed source, numbered
    for got, want in zip(last.result[:2], grads[:2]):
        assert got is want
    np.testing.assert_allclose(grads[1].numpy(), 3.0 + 6.0)   # sum(x) + 2w


def test_graph_gradients_show_symbolic_names():
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, shape=(), name="x")
        a = x * x
        y = a + tg.sin(a)
        with tg.viz.record() as rec:
            (g,) = tg.gradients(y, [x])
    frames = backprop_frames(rec.traces[0])
    assert len(frames) == len(rec.traces[0].events)
    last = frames[len(frames) - 1]
    assert last.result[0] is g                   # a symbolic tensor of the graph
    assert g.name in last.sentence               # shown by name: it has no value yet
    agg = next(f for f in frames.frames if f.kind == "Aggregate")
    total = agg.gradients[agg.event.node.outputs[0].id].total
    assert format_value(total) == total.name == "gradients/multiply_grad/add_n"
    assert frames.labels[agg.event.node] == "multiply"      # a graph node's own name
    assert "= gradients/multiply_grad/add_n." in agg.sentence
    value = tg.Session(graph).run(g, {x: 0.5})
    np.testing.assert_allclose(value, 2 * 0.5 * (1 + np.cos(0.25)))


def test_tree_aggregation_and_skipped_stop_gradient_in_a_graph():
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, shape=(), name="x")
        b = 2 * x
        y = x * 2 + x * 3 + x * 4 + b
        with tg.viz.record() as rec:
            tg.gradients(y, [x], aggregation_method=tg.AggregationMethod.EXPERIMENTAL_TREE,
                         stop_gradients=[b])
    frames = backprop_frames(rec.traces[0])
    methods = [f.event.method for f in frames.frames if f.kind == "Aggregate"]
    assert methods == ["tree"]
    tree = next(f for f in frames.frames if f.kind == "Aggregate")
    # b = 2x is held constant, so x gets 3 contributions, not 4.
    assert "pairwise adds" in tree.sentence and "3 contributions" in tree.sentence
    skips = [f for f in frames.frames if f.kind == "Skip"]
    assert skips and "the gradient stops here" in skips[0].sentence
    assert frames[len(frames) - 1].states[skips[0].node] == SKIPPED


def test_the_op_that_made_a_source_is_skipped_as_a_source():
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, shape=(), name="x")
        h = tg.exp(x)
        with tg.viz.record() as rec:
            tg.gradients(h * h, [h])
    frames = backprop_frames(rec.traces[0])
    (skip,) = [f for f in frames.frames if f.kind == "Skip"]
    assert skip.event.reason == "source"
    assert skip.sentence == ("Skip exp: it produced a source, whose gradient is what was asked "
                             "for, so the pass goes no further back and its VJP rule is not "
                             "called.")


def test_loop_iterations_of_an_eager_while_loop():
    x = tg.constant(1.5)
    with tg.viz.record() as rec:
        with tg.GradientTape() as tape:
            tape.watch(x)
            _, y = tg.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tg.sin(y) * x),
                                 [tg.constant(0), x])
        grad = tape.gradient(y, x)
    forward, backward = rec.traces
    frames = backprop_frames(backward)
    assert len(frames) == len(backward.events)
    loops = [f for f in frames.frames if f.kind == "LoopIteration"]
    assert [f.event.iteration for f in loops] == [2, 1, 0]
    assert "backward loop of while_loop 'while' enters iteration 2" in loops[0].sentence
    # The frames after a LoopIteration say which iteration they are in.
    assert frames[loops[0].index + 1].loop is loops[0].event
    assert frames[len(frames) - 1].loop is None
    assert frames[len(frames) - 1].result[0] is grad
    # The forward loop reports to a trace of its own: a frame per iteration.
    steps = backprop_frames(forward)
    assert [f.kind for f in steps.frames] == ["LoopIteration"] * 3
    assert "forward loop of while_loop 'while' starts iteration 1" in steps[1].sentence
    assert "(1, 1.496)" in steps[1].sentence
    stepper = tg.viz.BackpropStepper(forward)   # nothing to draw, no tables: the iterations
    assert stepper.text().splitlines()[0] == ("BackpropStepper: 3 steps of loop iterations, "
                                              "with no backward pass")
    assert "tg-queue" not in stepper.frame_html(0, "s")
    assert "The graph is not drawn" in stepper.header_html()
    assert len(parts_of(stepper)["frames"].children) == 3


def test_hand_made_loop_events_in_a_backward_pass():
    # A LoopIteration whose node is not one of the pass's nodes (a graph's While).
    tape, x, y = shared_subexpression()
    rec, _ = recorded(tape, y, x)
    trace = events.Trace(list(rec.traces[0].events))

    class While:
        label = "outer/while"

    trace.events.insert(1, events.LoopIteration(While(), "forward", 4, (tg.constant(2.0),)))
    frames = backprop_frames(trace)
    assert len(frames) == len(trace.events)
    assert frames[1].sentence == ("The forward loop of outer/while starts iteration 4 (counted "
                                  "from 0), from the loop variables (2).")


@pytest.mark.parametrize("bad, error, words", [
    (object(), TypeError, "Expected a Trace"),
    (events.Trace(), ValueError, "no events"),
    (events.Trace([events.Finish(())]), ValueError, "before the Start"),
])
def test_bad_traces_are_refused_clearly(bad, error, words):
    with pytest.raises(error, match=words):
        backprop_frames(bad)


def test_a_forward_mode_trace_is_sent_to_the_jvp_stepper():
    x = tg.constant(1.0)
    with tg.viz.record() as rec:
        with tg.ForwardAccumulator(x, tg.constant(1.0)):
            tg.sin(x)
    with pytest.raises(ValueError, match="JVPStepper"):
        tg.viz.BackpropStepper(rec.traces[0])


def test_format_value_is_short():
    assert format_value(tg.constant(1.96891242)) == "1.969"
    assert format_value(tg.constant([0.98445621, -0.0])) == "[0.9845, 0]"
    assert format_value(tg.constant(np.ones((3, 4)))) == "float64[3, 4]"
    assert format_value(tg.constant([1, 2])) == "[1, 2]"
    assert format_value(None) == "None"


# -- JVPStepper frames ------------------------------------------------------------
def forward_mode(transpose):
    x = tg.constant([1.0, 2.0])
    x_dot = tg.constant([1.0, 0.5])
    with tg.viz.record() as rec:
        if transpose:
            with tg.transposition_only(), tg.ForwardAccumulator(x, x_dot) as acc:
                y = tg.sum(tg.tanh(x) * x)
        else:
            with tg.ForwardAccumulator(x, x_dot) as acc:
                y = tg.sum(tg.tanh(x) * x)
    return rec, acc.jvp(y), x, x_dot


def test_jvp_frames_for_native_rules_compare_with_transposition():
    rec, y_dot, x, x_dot = forward_mode(transpose=False)
    frames = jvp_frames(rec.traces[0], rec.traces)
    assert [f.phase for f in frames.frames] == ["native"] * 3
    # x is t1; the ops' outputs t2, t3, t4; the sentences say the op beside the name.
    assert [frames.labels[f.node] for f in frames.frames] == ["t2", "t3", "t4"]
    assert frames[0].sentence.startswith("t2 (tanh) has a native JVP rule")
    for frame in frames.frames:
        assert frame.agree is True
        np.testing.assert_allclose(frame.compared[0].numpy(),
                                   frame.event.output_tangents[0].numpy())
        assert "Computed now for comparison (not recorded)" in frame.sentence
    assert frames[2].event.output_tangents[0] is y_dot
    assert len(rec.traces) == 1            # the comparison recorded nothing in rec


def test_jvp_frames_step_inside_a_transposition():
    rec, y_dot, x, x_dot = forward_mode(transpose=True)
    frames = jvp_frames(rec.traces[0], rec.traces)
    tanh_steps = [f for f in frames.frames if f.op_index == 0]
    transpose = frames.transposes[0]
    assert [f.phase for f in tanh_steps] == (["aid", "backward"]
                                             + ["transpose"] * len(transpose.frames)
                                             + ["tangent"])
    event = tanh_steps[0].event
    assert event.method == "transpose"
    np.testing.assert_allclose(event.aids[0].numpy(), [1.0, 1.0])          # u: ones
    # g(u) = J^T u, J = diag(1 - tanh^2 x)
    np.testing.assert_allclose(event.backward[0].numpy(), 1 - np.tanh([1.0, 2.0]) ** 2)
    assert [f.inner for f in tanh_steps[2:-1]] == list(transpose.frames)
    assert transpose.trace.events[0].sources[0] is event.aids[0]
    assert "u" in transpose.labels.values()
    # The transpose tape's last frame returns what became the output tangent.
    assert transpose[len(transpose) - 1].result[0] is event.output_tangents[0]
    tangent = tanh_steps[-1]
    assert tangent.agree is True
    np.testing.assert_allclose(tangent.compared[0].numpy(),
                               event.output_tangents[0].numpy())   # native == transposed
    np.testing.assert_allclose(event.output_tangents[0].numpy(),
                               (1 - np.tanh([1.0, 2.0]) ** 2) * [1.0, 0.5])
    assert frames[len(frames) - 1].event.output_tangents[0] is y_dot


def test_jvp_stepper_draws_ops_by_their_op_names_and_the_aid_as_u():
    rec, *_ = forward_mode(transpose=True)
    stepper = tg.viz.JVPStepper(rec)
    stepper.header_html()
    drawing = stepper._drawn_ops()[1][0]           # the transpose tape of the multiply
    titles = dict(re.findall(r"\t(\w+) \[label=<<b>([^<]*)</b>", drawing.source))
    ops = {name: title for name, title in titles.items() if name.startswith("n")}
    # What the steps call the rule's outputs (x*y hands x and y one each), and their op.
    assert list(ops.values()) == ["g(u)[0]", "g(u)[1]"]
    assert "multiply</font>" in drawing.source
    (source,) = re.findall(r"\t(\w+) \[.*penwidth=\"2.5\"", drawing.source)
    assert titles[source] == "u"                   # the aid vector, as the steps call it
    # One naming scheme (issue 31): the tape's unnamed tensors go on numbering after
    # the forward ops' (t1, t2 there, t3, t4 here), so no label means two tensors.
    inner = set(titles.values()) - {"u", "g(u)[0]", "g(u)[1]"}
    assert inner and all(re.fullmatch(r"t\d+", t) for t in inner)
    numbers = [int(t[1:]) for t in stepper.frames.labels.values() if re.fullmatch(r"t\d+", t)]
    assert min(int(t[1:]) for t in inner) > max(numbers, default=0)
    forward = set(stepper.frames.labels.values())
    assert forward and not forward & set(stepper.frames.transposes[1].labels.values())


def test_jvp_stepper_given_one_trace_asks_for_the_recorder():
    rec, *_ = forward_mode(transpose=True)
    with pytest.raises(ValueError, match=r"JVPStepper\(trace\).*tg.viz.JVPStepper\(rec\)"):
        tg.viz.JVPStepper(rec.traces[0])
    stepper = tg.viz.JVPStepper(rec.traces[0], transposes=())   # asked for: no sub-steps
    assert not stepper.frames.transposes
    assert [f.phase for f in stepper.frames.frames[:3]] == ["aid", "backward", "tangent"]
    assert "pass the recorder" in stepper.header_html()
    native, *_ = forward_mode(transpose=False)
    assert len(tg.viz.JVPStepper(native.traces[0]).frames) == 3   # nothing transposed


def test_jvp_stepper_has_a_forward_mode_legend():
    rec, *_ = forward_mode(transpose=False)
    header = tg.viz.JVPStepper(rec).header_html()
    assert "tangent" in header and "primal" in header and "native JVP rule" in header
    assert "not reached" not in header       # no backward-pass states without a transpose tape


def test_jvp_stepper_refuses_a_backward_trace():
    tape, x, y = shared_subexpression()
    rec, _ = recorded(tape, y, x)
    with pytest.raises(ValueError, match="no JVP events"):
        tg.viz.JVPStepper(rec.traces[0])
    with pytest.raises(ValueError, match="no forward-mode trace"):
        tg.viz.JVPStepper(rec)


def test_jvp_frames_in_a_graph_name_symbolic_tensors():
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, shape=(2,), name="x")
        with tg.viz.record() as rec:
            with tg.transposition_only(), tg.ForwardAccumulator(x, tg.constant([1.0, 0.0])) \
                    as acc:
                y = tg.sum(tg.tanh(x) * x)
        y_dot = acc.jvp(y)
    frames = jvp_frames(rec.traces[0], rec.traces)
    assert sorted(frames.transposes) == [0, 1, 2]          # every transpose tape was found
    last = frames[len(frames) - 1]
    assert last.phase == "tangent" and last.event.output_tangents[0] is y_dot
    assert y_dot.name in last.sentence and last.compared is None
    assert "not computed here for comparison" in last.sentence
    np.testing.assert_allclose(tg.Session(graph).run(y_dot, {x: [1.0, 2.0]}),
                               1 - np.tanh(1.0) ** 2 + np.tanh(1.0))


# -- the widgets --------------------------------------------------------------------
def parts_of(stepper):
    return stepper.widget.tg_parts


def test_backprop_widget_is_built_with_client_side_links():
    import ipywidgets as widgets
    from ipywidgets.widgets.widget_link import Link
    tape, x, y = shared_subexpression()
    stepper = tg.viz.BackpropStepper.from_gradient(tape, y, x)
    np.testing.assert_allclose(stepper.gradients.numpy(), 2 * 0.5 * (1 + np.cos(0.25)))
    parts = parts_of(stepper)
    frames = parts["frames"]
    assert isinstance(stepper.widget, widgets.VBox)
    assert isinstance(frames, widgets.Stack) and frames.selected_index == 0
    assert len(frames.children) == len(stepper.frames) == len(stepper.trace.events)
    assert all(isinstance(c, widgets.HTML) for c in frames.children)
    assert isinstance(parts["play"], widgets.Play) and isinstance(parts["slider"],
                                                                  widgets.IntSlider)
    linked = {(link.source[0], link.source[1], link.target[0], link.target[1])
              for link in parts["links"]}
    assert all(isinstance(link, Link) for link in parts["links"])   # jslink: in the browser
    assert (parts["play"], "value", parts["slider"], "value") in linked
    assert (parts["slider"], "value", frames, "selected_index") in linked
    assert (parts["speed"], "value", parts["play"], "interval") in linked
    assert parts["slider"].max == parts["play"].max == len(frames.children) - 1
    parts["step"].click()                        # the buttons go through Python
    parts["step"].click()
    assert parts["slider"].value == 2
    parts["back"].click()
    assert parts["slider"].value == 1
    parts["reset"].click()
    assert parts["slider"].value == 0


def test_frame_html_has_the_classes_the_browser_test_uses():
    tape, x, y = shared_subexpression()
    stepper = tg.viz.BackpropStepper.from_gradient(tape, y, x)
    children = parts_of(stepper)["frames"].children
    pop = next(f for f in stepper.frames.frames if f.kind == "Pop")
    html = children[pop.index].value
    name = stepper.frames.names[pop.node]
    assert f'data-processing="{name}"' in html
    assert f'<span class="tg-chip tg-state-processing" data-node="{name}">' in html
    assert '<span class="tg-queue">' in html
    scope = stepper._scope
    assert scope in stepper.widget._dom_classes
    assert f"#{scope} :is(.tg-node-{name})" in html and render.PROCESSING_FILL in html
    start = children[0].value
    assert 'class="tg-queue"><span class="tg-chip tg-state-queued"' in start


def test_drawn_states_leave_untracked_inputs_not_reached():
    node = object()
    states = render.drawn_states({node: PROCESSING}, {7: DONE},
                                 {node: "n0"}, {7: "t0", 8: "t1"})   # t1: a constant input
    assert states == {"n0": PROCESSING, "t0": DONE, "t1": NOT_REACHED}
    style = render.state_style("#s", states)
    # Each state that is not the commonest names its nodes; the commonest is the default.
    assert style.count(":is(.tg-node-") == 4 and "#s .tg-node{" in style


@needs_dot
def test_the_drawing_is_rendered_once_with_classed_nodes():
    tape, x, y = shared_subexpression()
    stepper = tg.viz.BackpropStepper.from_gradient(tape, y, x)
    graph = parts_of(stepper)["graph"].value
    for name in ("n0", "n1", "n2", "t0"):
        assert f'class="node tg-node tg-node-{name}"' in graph
    assert graph.count("<svg") == 1 and "<?xml" not in graph and "<!--" not in graph
    # The frames name the nodes as the drawing does (creation order), so chips match nodes.
    drawn = stepper.drawing().node_names
    assert {node: drawn[node] for node in stepper.frames.nodes} == dict(stepper.frames.names)
    assert f'id="{stepper._scope}"' in graph
    assert all("<svg" not in c.value for c in parts_of(stepper)["frames"].children)


def test_widget_caps_frames_and_says_so():
    x = tg.constant(0.3)
    with tg.GradientTape() as tape:
        tape.watch(x)
        h = x
        for _ in range(30):
            h = tg.sin(h) * h
    with tg.viz.record() as rec:
        tape.gradient(h, x)
    stepper = tg.viz.BackpropStepper(rec, max_frames=50, start=10)
    assert len(stepper.frames) == len(rec.traces[0].events) > 50
    children = parts_of(stepper)["frames"].children
    assert len(children) == 50
    assert 'data-step="10"' in children[0].value
    header = stepper.widget.children[0].value
    assert f"This computation has {len(stepper.frames)} steps; the widget holds steps 10 " \
           f"to 59 (max_frames=50)" in header
    with pytest.raises(ValueError, match="max_frames must be a whole number"):
        tg.viz.BackpropStepper(rec, max_frames=0)
    with pytest.raises(ValueError, match="start must be a step index"):
        tg.viz.BackpropStepper(rec, start=len(stepper.frames))
    with pytest.raises(ValueError, match="interval is milliseconds per step"):
        tg.viz.BackpropStepper(rec, interval=0.5)


def test_jvp_widget_builds():
    import ipywidgets as widgets
    rec, *_ = forward_mode(transpose=True)
    stepper = tg.viz.JVPStepper(rec)
    frames = parts_of(stepper)["frames"]
    assert len(frames.children) == len(stepper.frames)
    assert all(isinstance(c, widgets.HTML) for c in frames.children)
    tangent = next(f for f in stepper.frames.frames if f.phase == "tangent")
    html = frames.children[tangent.index].value
    assert 'class="tg-jvp"' in html and "computed now for comparison" in html
    assert '<span class="tg-recorded">recorded</span>' in html
    inner = next(f for f in stepper.frames.frames if f.phase == "transpose")
    assert '<span class="tg-queue">' in frames.children[inner.index].value
    if shutil.which("dot"):
        graph = parts_of(stepper)["graph"].value
        assert graph.count("<svg") == 4          # the forward ops, one transpose tape per op
        walked = next(f for f in stepper.frames.frames
                      if f.phase == "transpose" and f.inner.processing is not None)
        assert f"#{stepper._scope} .tg-op-0{{display:block;order:-1}}" in \
            frames.children[walked.index].value


# -- what shows without widgets -------------------------------------------------------
def test_jvp_html_view_holds_every_frame_and_restyles_its_own_drawings():
    from teachgrad.viz import html_view
    rec, *_ = forward_mode(transpose=True)
    stepper = tg.viz.JVPStepper(rec)
    scope = stepper._scope
    data = html_view.frames_of(stepper.html_view())
    widget_frames = [c.value for c in parts_of(stepper)["frames"].children]
    # the widget's frames, each restyling the view's drawings (scope-v) instead
    assert data["frames"] == [h.replace(scope, scope + "-v") for h in widget_frames]
    assert "Forward mode" in data["header"] and data["interval"] == stepper.interval
    if shutil.which("dot"):
        assert data["graph"].count("<svg") == 4 and f'id="{scope}-v"' in data["graph"]
        walked = next(f for f in stepper.frames.frames
                      if f.phase == "transpose" and f.inner.processing is not None)
        assert f"#{scope}-v .tg-op-0{{display:block;order:-1}}" in data["frames"][walked.index]


def test_a_stepper_with_no_drawing_has_a_view_with_no_drawing():
    from teachgrad.viz import html_view
    stepper = tg.viz.BackpropStepper(lesson_two()[0])
    stepper._pass.note = "The graph is not drawn: too big"     # as draw() says of a big one
    data = html_view.frames_of(stepper.html_view())
    assert data["graph"] == "" and "too big" in data["header"]
    assert len(data["frames"]) == len(stepper.frames)


def test_static_text_is_the_same_in_every_run():
    def text():
        tg.sin(tg.constant(1.0)) * 2       # shifts the global node ids between the runs
        tape, x, y = shared_subexpression()
        stepper = tg.viz.BackpropStepper.from_gradient(tape, y, x)
        return stepper.text(), stepper.static_html(), stepper._repr_mimebundle_()
    first, second = text(), text()
    assert first[0] == second[0] and first[1] == second[1]
    assert "0x" not in first[0] and "multiply_" not in first[0]
    assert first[0].splitlines()[0] == ("BackpropStepper: 15 steps of the backward pass of "
                                        "t4 with respect to t1")
    bundle = first[2]
    assert bundle["text/plain"] == first[0] and bundle["text/html"] == first[1]
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_jvp_static_text_is_stable():
    texts = [tg.viz.JVPStepper(forward_mode(transpose=True)[0]).text() for _ in range(2)]
    assert texts[0] == texts[1]
    assert texts[0].startswith("JVPStepper: ")


def test_model_text_is_escaped():
    x = tg.Variable(2.0, name="<script>alert(1)</script>")
    with tg.GradientTape() as tape:
        y = x * x
    stepper = tg.viz.BackpropStepper.from_gradient(tape, y, x)
    html = "".join(stepper.frame_html(i, "s") for i in range(len(stepper.frames)))
    html += stepper.static_html()
    assert "<script>" not in html and "&lt;script&gt;" in html


# -- names, values and gradients (issue 19) ------------------------------------------
def lesson_two(named=True):
    """Lesson 2's program: z = sin(a) e^a + a, a = x y, with names given by name=."""
    x = tg.constant(0.5, name="x")
    y = tg.constant(2.0, name="y")
    n = (lambda k: {"name": k}) if named else (lambda k: {})
    with tg.GradientTape() as tape:
        tape.watch([x, y])
        a = tg.multiply(x, y, **n("a"))
        b = tg.sin(a, **n("b"))
        c = tg.exp(a, **n("c"))
        d = tg.multiply(b, c, **n("d"))
        z = tg.add(d, a, **n("z"))
    with tg.viz.record() as rec:
        grads = tape.gradient(z, [x, y])
    return rec, grads, (x, y, a, b, c, d, z)


def test_frames_and_drawing_call_tensors_by_their_names():
    rec, _, _ = lesson_two()
    stepper = tg.viz.BackpropStepper(rec)
    labels = {stepper.frames.labels[n] for n in stepper.frames.nodes}
    assert labels == {"a", "b", "c", "d", "z"}
    pops = [f.sentence for f in stepper.frames if f.kind == "Pop"]
    assert pops[0].startswith("Pop z (add) from the front of the queue")
    source = stepper.drawing().source
    titles = re.findall(r"<b>([^<]*)</b>", source)
    assert sorted(titles) == ["a", "b", "c", "d", "x", "y", "z"]
    assert "tensor" not in source and "(n" not in stepper.text()


def test_unnamed_tensors_are_numbered_per_picture_never_called_tensor():
    tg.sin(tg.constant(1.0))                      # other tensors made before: no effect
    rec, _, _ = lesson_two(named=False)
    frames = backprop_frames(rec.traces[0])
    assert sorted(frames.labels[n] for n in frames.nodes) == ["t1", "t2", "t3", "t4", "t5"]
    text = tg.viz.BackpropStepper(rec).text()
    assert "tensor" not in "".join(frames.labels.values()) and "multiply (n" not in text
    drawing = tg.viz.draw(rec.traces[0])
    assert "<b>tensor</b>" not in drawing.source and "<b>x</b>" in drawing.source


def test_placeholders_of_a_traced_function_take_the_argument_names():
    @tg.function
    def f(weight, bias):
        return tg.sin(weight) * bias
    f(tg.constant(1.0), tg.constant(2.0))
    titles = re.findall(r"<b>([^<]*)</b>", tg.viz.draw(f).source)
    assert "weight" in titles and "bias" in titles and "arg0" not in titles


def test_gradient_column_is_filled_for_every_tensor_and_sums_read_well():
    rec, _, _ = lesson_two()
    stepper = tg.viz.BackpropStepper(rec)
    for frame in stepper.frames:
        html = stepper.frame_html(frame.index, "s")
        rows = re.findall(r"<tr><td>([^<]*)</td><td>(.*?)</td><td>(.*?)</td></tr>", html)
        grads = [r for r in rows if "tg-value" in r[1]]
        assert len(grads) == len(frame.gradients)
        assert all('class="tg-value"' in cell for _, _, cell in grads)   # never blank
        assert "+ -" not in html
    last = stepper.frames[len(stepper.frames) - 1]
    assert "one contribution, nothing to add" in stepper.frame_html(last.index, "s")
    sub = tg.viz.values.format_sum(["0.5", "-0.4444", "[1, -2]", "-[3]"])
    assert sub == "0.5 - 0.4444 + [1, -2] + -[3]"


def test_a_gradient_is_not_more_may_come_once_its_node_is_in_the_queue():
    """A node whose pending count is 0 has every contribution: the table says so while
    it waits in the queue (a walk-through found 'more may come' on such gradients)."""
    from teachgrad.viz.frame_types import QUEUED
    rec, _, _ = lesson_two()
    stepper = tg.viz.BackpropStepper(rec)
    checked = 0
    for frame in stepper.frames:
        queued = [n for n in stepper.frames.nodes if frame.states[n] == QUEUED]
        html = stepper.frame_html(frame.index, "s")
        for node in queued:
            for t in node.outputs:
                grad = frame.gradients.get(t.id)
                if grad is None or grad.total is not None:
                    continue
                row = re.search(re.escape(grad.label) + r"</td>.*?</tr>", html)
                assert row and "so far" not in row.group(0), (frame.index, grad.label)
                checked += 1
    assert checked > 0


def test_a_node_with_a_contribution_is_reached():
    rec, _, _ = lesson_two()
    frames = backprop_frames(rec.traces[0])
    producers = {t.id: n for n in frames.nodes for t in n.outputs}
    for frame in frames:
        for key in frame.gradients:
            if key in producers:
                assert frame.states[producers[key]] != NOT_REACHED


def test_the_first_frames_explain_seed_cotangent_and_pending_count():
    rec, _, _ = lesson_two()
    start = backprop_frames(rec.traces[0])[0].sentence
    for word in ("the seed, 1 (dz/dz)", "cotangent of a tensor is", "pending count is how many"):
        assert word in start


@needs_dot
def test_the_drawing_shows_running_sums_and_the_edges_contributions_travel():
    rec, _, (x, y, a, *_) = lesson_two()
    stepper = tg.viz.BackpropStepper(rec)
    svg = stepper.graph_html("s")
    name_a = stepper.drawing().node_names[next(n for n in stepper.frames.nodes
                                               if n.outputs[0] is a)]
    versions = re.findall(r'class="tg-g tg-g-%s-(\d)"[^>]*>grad = ([^<]*)<' % name_a, svg)
    assert [v for _, v in versions] == ["1", "1 + 1.469", "1 + 1.469 + 2.287", "4.756"]
    xs = set(re.findall(r'class="tg-g tg-g-%s-\d" text-anchor="middle" x="([\d.]+)"' % name_a,
                        svg))
    assert len(xs) == 1                 # every version centred on the node, as dot centres
    frames = stepper.frames
    summed = next(f for f in frames if f.kind == "Aggregate")
    assert f"#s .tg-g-{name_a}-3{{display:inline}}" in stepper.frame_html(summed.index, "s")
    # exp's CallVJP: the third contribution to a travels along the edge a -> c.
    call = next(f for f in frames if f.kind == "CallVJP" and f.node.op.name == "exp")
    head = stepper.drawing().node_names[call.node]
    html = stepper.frame_html(call.index, "s")
    assert f".tg-edge-{name_a}-{head} path{{{render.TRAVEL}}}" in html
    assert f"#s .tg-g-{name_a}-2{{display:inline}}" in html
    assert "tg-edge-" not in stepper.frame_html(summed.index, "s")   # nothing travels
    assert f'class="edge tg-edge-{name_a}-{head}"' in svg


def test_draw_shows_gradients_of_a_trace_by_default_or_as_asked():
    rec, grads, (x, y, a, *_) = lesson_two()
    drawn = tg.viz.draw(rec.traces[0]).source
    assert "grad = 9.512" in drawn and "grad = 4.756" in drawn     # x, and a
    assert "grad = " not in tg.viz.draw(rec.traces[0], gradients=False).source
    x2 = tg.constant(3.0, name="x")
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x2)
        y2 = x2 * x2
    with pytest.raises(ValueError, match="gradients=True"):
        tg.viz.draw(y2, tape=tape, gradients=True)    # no gradient computed yet
    assert "grad = " not in tg.viz.draw(y2, tape=tape).source
    g = tape.gradient(y2, x2)
    assert "grad = 6" in tg.viz.draw(y2, tape=tape).source     # after gradient(): shown
    assert "grad = " not in tg.viz.draw(y2, tape=tape, gradients=False).source
    assert "grad = 7" in tg.viz.draw(y2, tape=tape, gradients={x2: g + 1}).source
    with pytest.raises(TypeError, match="gradients"):
        tg.viz.draw(y2, tape=tape, gradients=[g])


@needs_dot
def test_static_fallback_is_a_picture_of_the_first_step_never_inline_svg():
    import base64
    rec, _, _ = lesson_two()
    stepper = tg.viz.BackpropStepper(rec)
    html = stepper._repr_mimebundle_()["text/html"]
    assert "<svg" not in html and "<style" not in html    # a sanitizer would leave its text
    assert "run the notebook" in html and "<details>" in html
    (data,) = re.findall(r'src="data:image/svg\+xml;base64,([^"]*)"', html)
    svg = base64.b64decode(data).decode("utf-8")
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "<style>" in svg and ".tg-g {display: none;}" in svg
    assert "svg .tg-node" in svg                    # the first frame's colours, inside it
    assert html == tg.viz.BackpropStepper(lesson_two()[0])._repr_mimebundle_()["text/html"]
    jvp = tg.viz.JVPStepper(forward_mode(transpose=True)[0]).static_html()
    assert "<svg" not in jvp and "run the notebook" in jvp
    (data,) = re.findall(r'src="data:image/svg\+xml;base64,([^"]*)"', jvp)
    svg = base64.b64decode(data).decode("utf-8")       # the forward ops, the first one
    assert svg.count("<svg") == 1 and "tangent = [1, 0.5]" in svg and "tg-node-n0" in svg


@needs_dot
def test_widget_fits_a_notebook_column_with_its_controls_in_view():
    from teachgrad.viz.widget import VIEW
    rec, _, _ = lesson_two()
    stepper = tg.viz.BackpropStepper(rec)
    parts = parts_of(stepper)
    root = stepper.widget
    assert root.children[1] is parts["controls"]          # the controls before the drawing
    assert parts["controls"].layout.flex_flow == "row wrap"
    assert "tg-controls" in parts["controls"]._dom_classes
    for part in ("play", "step", "back", "reset", "slider", "box", "speed"):
        assert parts[part] in parts["controls"].children
    # one box scrolls, the drawing's; the frame takes the height it needs (no second fold)
    assert parts["graph"].layout.max_height == VIEW and parts["graph"].layout.overflow == "auto"
    assert parts["frames"].layout.max_height is None and parts["frames"].layout.overflow is None
    assert root.children[2].layout.flex_flow == "row wrap"   # narrow: drawing above frames
    widths = [parts[p].layout.width for p in ("slider", "speed")]
    assert all(not w or not w.endswith("px") or int(w[:-2]) <= 420 for w in widths)
    html = parts["graph"].value
    assert 'class="tg-zoom"' in html and "full size" in html   # the whole drawing: one click
    assert ".tg-zoom:checked ~ .tg-graph svg {max-width: none;}" in render.STYLE


@needs_dot
def test_widget_frames_show_the_running_sums_even_before_the_drawing_is_asked_for():
    rec, _, _ = lesson_two()
    stepper = tg.viz.BackpropStepper(rec)
    frames = parts_of(stepper)["frames"].children      # built first, the drawing after
    assert "{display:inline}" in frames[len(frames) - 1].value
    assert "tg-edge-" in next(c.value for c, f in zip(frames, stepper.frames)
                              if f.kind == "CallVJP")


@needs_dot
def test_wide_drawings_shrink_to_a_notebook_column_unless_asked_not_to():
    xs = [tg.constant(float(i), name=f"input_number_{i}") for i in range(14)]
    with tg.GradientTape(persistent=True) as tape:
        for x in xs:
            tape.watch(x)
        y = tg.add_n([tg.sin(x) for x in xs])
    fitted, natural = (tg.viz.draw(y, tape=tape, fit=f) for f in (True, False))
    assert '\tsize="8.8,1000"' in fitted.source and "\tsize=" not in natural.source

    def width_pt(drawing):
        return float(re.search(r'<svg width="([\d.]+)pt"', drawing.pipe(format="svg").decode())
                     .group(1))
    assert width_pt(natural) > 8.8 * 72 >= width_pt(fitted) - 1     # 72 pt to the inch


@needs_dot
def test_jvp_stepper_draws_the_forward_ops_with_values_and_tangents():
    rec, y_dot, x, x_dot = forward_mode(transpose=True)
    stepper = tg.viz.JVPStepper(rec)
    graph = parts_of(stepper)["graph"].value
    forward = graph[:graph.index("tg-op-graph")]
    # x and the ops' outputs, by name; values and every tangent, as a version to show
    assert ">t1</text>" in forward and "value = [1, 2]" in forward
    assert "tangent = [1, 0.5]" in forward                             # x_dot
    assert f"tangent = {format_value(y_dot)}" in forward               # the last op's
    frames = parts_of(stepper)["frames"].children
    first, last = frames[0].value, frames[len(frames) - 1].value
    scope = stepper._scope
    # the first op is being differentiated; only x's tangent is known yet
    assert f"#{scope} .tg-forward-graph :is(.tg-node-n0)" in first
    assert first.count("{display:inline}") == 1
    assert last.count("{display:inline}") == 4                       # x and the 3 outputs


@needs_dot
def test_jvp_transpose_tapes_show_no_final_gradients_before_they_are_reached():
    rec, *_ = forward_mode(transpose=True)
    stepper = tg.viz.JVPStepper(rec)
    stepper.header_html()
    assert all("grad = " not in drawing.source for drawing, _ in stepper._drawn_ops().values())


def test_a_name_given_in_every_loop_iteration_is_told_apart():
    a = tg.constant(2.0, name="a")
    with tg.GradientTape() as tape:
        tape.watch(a)
        _, y = tg.while_loop(lambda k, y: k < 3,
                             lambda k, y: (k + 1, tg.multiply(0.5, y + a / y, name="y")),
                             [tg.constant(0), a])
    with tg.viz.record() as rec:
        tape.gradient(y, a)
    frames = backprop_frames(rec.traces[-1])
    named = [frames.labels[n] for n in frames.nodes if n.op.name == "multiply"]
    assert named == ["y", "y_1", "y_2"]
    assert frames[0].sentence.startswith("The backward pass begins at y_2,")
