"""The backward engine: pending counts, queue order, events, stop tensors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import teachgrad as tg
from teachgrad.autodiff import events
from teachgrad.autodiff.engine import backward
from teachgrad.autodiff.pending import pending_counts, upstream_nodes


def _record(fn, *values):
    xs = [tg.constant(v) for v in values]
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        y = fn(*xs)
    return tape, xs, y, tape.producer


def test_seed_partial_vs_total_derivative():
    # The seed's example: a = 0, b = 2a; d(a + b)/d[a, b] is [3, 1] (total
    # derivative), or [1, 1] when a and b are held constant with stop_tensors.
    a = tg.constant(0.0)
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(a)
        b = 2 * a
        y = a + b
    producer = tape.recorded.producers.get
    total = tape.gradient(y, [a, b])
    assert [g.numpy() for g in total] == [3.0, 1.0]
    partial = backward([y], [tg.ones_like(y)], [a, b], producer, stop_tensors=[a, b])
    assert [g.numpy() for g in partial] == [1.0, 1.0]


def test_pending_counts_count_consumer_edges():
    tape, (x,), y, producer = _record(lambda x: (lambda s: s + tg.sin(s))(x * x), 2.0)
    square = producer(y.id).inputs[0]          # the x*x node feeds add and sin
    between, pending = pending_counts([y], [x], producer)
    assert len(between) == 3                # multiply, sin, add
    assert pending[producer(square.id)] == 2
    assert pending[producer(y.id)] == 0


def test_events_replay_to_the_returned_gradients():
    tape, (x, w), y, producer = _record(
        lambda x, w: tg.sum(tg.tanh(x * w) * x + w), [1.0, -2.0], [0.5, 0.25])
    with tg.viz.record() as rec:
        grads = tape.gradient(y, [x, w])
    (trace,) = rec.traces
    kinds = [type(e) for e in trace.events]
    assert kinds[0] is events.Start and kinds[-1] is events.Finish
    # Fold the events back: every contribution handed to x or w by a VJP call,
    # summed, must equal the gradient that gradient() returned.
    sums = {x.id: 0.0, w.id: 0.0}
    for event in trace.events:
        if isinstance(event, events.CallVJP):
            for inp, g in zip(event.node.inputs, event.input_grads):
                if g is not None and inp.id in sums:
                    sums[inp.id] = sums[inp.id] + g.numpy()
    np.testing.assert_allclose(sums[x.id], grads[0].numpy())
    np.testing.assert_allclose(sums[w.id], grads[1].numpy())
    np.testing.assert_allclose(trace.events[-1].gradients[0].numpy(), grads[0].numpy())
    # Every node was popped exactly once, after it was enqueued (or was initially ready).
    popped = [e.node for e in trace.events if isinstance(e, events.Pop)]
    assert len(popped) == len(set(popped)) == len(trace.events[0].pending)


def test_event_log_is_deterministic():
    def run():
        tape, xs, y, _ = _record(lambda a, b: a * b + tg.exp(a) * b, 1.0, 2.0)
        with tg.viz.record() as rec:
            tape.gradient(y, xs)
        return [(type(e).__name__, e.node.op.name if getattr(e, "node", None) else None)
                for e in rec.traces[0].events]
    assert run() == run()


def test_recording_is_off_by_default():
    assert events.current_observer() is None


def test_aggregate_event_reports_add_n_and_tree():
    tape, (x,), y, producer = _record(lambda x: x * 2 + x * 3 + x * 4, 1.0)
    for method, name in ((tg.AggregationMethod.ADD_N, "add_n"),
                         (tg.AggregationMethod.EXPERIMENTAL_TREE, "tree")):
        trace = events.Trace()
        (g,) = backward([y], [tg.ones_like(y)], [x], producer,
                        aggregation_method=method, observer=trace)
        assert g.numpy() == 9.0
        aggregates = [e for e in trace.events if isinstance(e, events.Aggregate)]
        assert [(a.method, len(a.contributions)) for a in aggregates] == [(name, 3)]


def test_stop_gradient_node_is_reported_as_skipped():
    tape, (x,), y, producer = _record(lambda x: x * tg.stop_gradient(x * 3), 2.0)
    trace = events.Trace()
    (g,) = backward([y], [tg.ones_like(y)], [x], producer, observer=trace)
    assert g.numpy() == 6.0
    skipped = [(e.node.op.name, e.reason) for e in trace.events if isinstance(e, events.Skip)]
    assert skipped == [("stop_gradient", "not differentiable"), ("multiply", "no incoming gradient")]


def test_producer_of_a_source_is_skipped_as_source_and_of_a_stop_tensor_as_stop_gradient():
    tape, (x,), y, producer = _record(lambda x: (lambda h: h * h)(tg.exp(x)), 2.0)
    h = producer(y.id).inputs[0]
    trace = events.Trace()
    (g,) = backward([y], [tg.ones_like(y)], [h], producer, observer=trace)
    assert np.isclose(g.numpy(), 2 * np.exp(2.0))
    skipped = [(e.node.op.name, e.reason) for e in trace.events if isinstance(e, events.Skip)]
    assert skipped == [("exp", "source")]      # the gradient asked for has arrived at h
    trace = events.Trace()
    backward([y], [tg.ones_like(y)], [x], producer, stop_tensors=[h], observer=trace)
    skipped = [(e.node.op.name, e.reason) for e in trace.events if isinstance(e, events.Skip)]
    assert skipped == [("exp", "stop gradient")]


def test_contributions_of_mixed_dtypes_are_summed_in_their_common_dtype():
    # A custom gradient may hand back float64 for a float32 input; add_n refuses
    # mixed dtypes, so the engine casts before summing (for either method).
    @tg.custom_gradient
    def double_in_float64(x):
        return x * 2.0, lambda g: tg.cast(g, tg.float64) * 2.0

    tape, (x,), y, producer = _record(lambda x: double_in_float64(x) + x * x,
                                      np.float32(1.5))
    for method in (tg.AggregationMethod.ADD_N, tg.AggregationMethod.EXPERIMENTAL_TREE):
        (g,) = backward([y], [tg.ones_like(y)], [x], producer, aggregation_method=method)
        assert g.dtype == tg.float64 and g.numpy() == 5.0


# -- the tape's shortcut: when every recorded op depends on a source ------------------------
def _tape_over(watched_values, build, variables=()):
    xs = [tg.constant(v) for v in watched_values]
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        y = build(*xs, *variables)
    return tape, xs, y


def _sources_of(tape, chosen):
    """What the tape hands the engine for ``chosen``: Variables become their snapshots."""
    out = []
    for s in chosen:
        out.extend(tape.snapshots(s) if isinstance(s, tg.Variable) else [s])
    return out


@pytest.mark.parametrize("case", ["all watched", "one of two watched", "variables",
                                  "one of two variables", "watched intermediate"])
def test_the_tape_skips_the_reach_walk_only_when_it_gives_the_same_counts(case):
    v, w = tg.Variable(1.5), tg.Variable(-0.5)
    if case == "all watched":
        tape, xs, y = _tape_over([0.3, 2.0], lambda a, b: tg.sin(a * b) + a)
        chosen, expect_shortcut = xs, True
    elif case == "one of two watched":
        tape, xs, y = _tape_over([0.3, 2.0], lambda a, b: tg.sin(a * b) + a)
        chosen, expect_shortcut = xs[1:], False
    elif case == "variables":
        tape, xs, y = _tape_over([], lambda v, w: tg.tanh(v * w) * v, (v, w))
        chosen, expect_shortcut = [v, w], True
    elif case == "one of two variables":
        tape, xs, y = _tape_over([], lambda v, w: tg.tanh(v * w) * v, (v, w))
        chosen, expect_shortcut = [w], False
    else:   # a watched tensor made by a recorded op is no starting point of its own
        x = tg.constant(0.7)
        with tg.GradientTape(persistent=True) as tape:
            tape.watch(x)
            h = tg.exp(x)
            tape.watch(h)
            y = h * x
        chosen, expect_shortcut = [x], True
    sources = _sources_of(tape, chosen)
    assert tape.recorded.starts_from(sources) is expect_shortcut
    producer = tape.recorded.producers.get
    full = pending_counts([y], sources, producer)
    if expect_shortcut:
        assert pending_counts([y], sources, producer, all_reached=True) == full


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["mul", "add", "sin", "both"]),
                          st.integers(0, 50), st.integers(0, 50)), min_size=1, max_size=12),
       st.integers(1, 3), st.integers(0, 3))
def test_counts_found_in_one_walk_are_those_of_both_walks(program, n_watched, n_targets):
    """On random programs (ops reading any earlier tensor, x * x included, tensors read many
    times, some results unused), the pending counts and parents counted during the walk back
    (all_reached=True) are those of the walk back and forth, whatever the targets."""
    xs = [tg.constant(0.1 * (i + 1)) for i in range(n_watched)]
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        made = list(xs)
        for kind, i, j in program:
            a, b = made[i % len(made)], made[j % len(made)]
            made.append({"mul": lambda: a * b, "add": lambda: a + b, "sin": lambda: tg.sin(a),
                         "both": lambda: tg.sin(a) * a}[kind]())
    targets = made[len(xs):][-1 - n_targets:]
    producer = tape.recorded.producers.get
    assert tape.recorded.starts_from(xs)
    assert pending_counts(targets, xs, producer, all_reached=True) == \
        pending_counts(targets, xs, producer)


def test_an_integer_watched_tensor_turns_the_shortcut_off():
    n, x = tg.constant(3), tg.constant(0.5)
    with tg.GradientTape() as tape:
        with pytest.warns(UserWarning, match="must be floating"):
            tape.watch(n)
        tape.watch(x)
        y = x * tg.cast(n, tg.float64)
    assert not tape.recorded.starts_from([n, x])
    assert tape.gradient(y, [n, x])[1].numpy() == 3.0


def test_upstream_nodes_walks_back_breadth_first_through_floats_unless_told():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, shape=(3,), name="x")
        i = tg.placeholder(tg.int64, shape=(), name="i")
        y = tg.sin(x) * tg.cast(i, tg.float64)
    walk = upstream_nodes([y], g.producer)
    assert [node.label for node in walk] == ["multiply", "sin", "cast", "x"]
    assert walk[y.node] == [g.producer(y.node.inputs[0].id), g.producer(y.node.inputs[1].id)]
    assert walk[g.producer(y.node.inputs[1].id)] == [None]    # the cast's integer input
    every = upstream_nodes([y], g.producer, every_dtype=True)
    assert [node.label for node in every] == ["multiply", "sin", "cast", "x", "i"]


def test_a_trace_gives_its_start_event():
    tape, xs, y, _ = _record(lambda a: a * a, 2.0)
    with events.record() as rec:
        tape.gradient(y, xs)
    assert rec.traces[0].start is rec.traces[0].events[0]
    assert events.Trace().start is None


def test_each_release_is_followed_by_its_enqueue():
    # y = a * b with a = sin(x), b = cos(x): popping the multiply releases both producers,
    # and each one that becomes ready is enqueued before the next is released (lesson 2's log).
    x = tg.constant(0.3)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.sin(x) * tg.cos(x)
    with tg.viz.record() as rec:
        tape.gradient(y, x)
    kinds = [type(e).__name__ for e in rec.traces[0].events]
    after_multiply = kinds[kinds.index("CallVJP") + 1:kinds.index("Pop", kinds.index("CallVJP"))]
    assert after_multiply == ["Release", "Enqueue", "Release", "Enqueue"]
