"""tg.explain_gradient: why a gradient is None or zero, tested on each cause.

Every tape case also checks that the explanation agrees with what
``tape.gradient`` really returns (None, zeros, or the same values).
"""
import numpy as np
import pytest

import teachgrad as tg
from teachgrad.debug.report import a_or_an
from teachgrad.ops.core.apply import bind
from teachgrad.ops.core.declare import primitive


def explained(build, source, *, watch=True, **kwargs):
    """Run ``build()`` on a persistent tape; return (explanation, tape.gradient's answer)."""
    with tg.GradientTape(persistent=True) as tape:
        if watch:
            tape.watch(source)
        target = build()
    explanation = tg.explain_gradient(target, source, tape, **kwargs)
    return explanation, tape.gradient(target, source)


def agrees(explanation, gradient):
    if gradient is None:
        return explanation.status == "none" and explanation.gradient is None
    if explanation.status == "zero":
        return not np.any(gradient.numpy())
    np.testing.assert_allclose(explanation.gradient.numpy(), gradient.numpy())
    return explanation.status == "nonzero"


X = tg.constant([1.0, -2.0, 3.0], name="x")


def test_connected_paths_are_listed_and_the_gradient_matches():
    exp, grad = explained(lambda: tg.sum(tg.relu(X) + X * tg.stop_gradient(X)), X)
    assert agrees(exp, grad)
    assert exp.path_count == 3 and len([p for p in exp.paths if p.blocked is None]) == 2
    assert exp.kinds == {"stop_gradient"}               # the one blocked path, as a note
    assert "changes nothing here" in exp.with_zero


def test_no_path_at_all():
    other = tg.constant(2.0, name="w")
    with tg.GradientTape(persistent=True) as tape:
        tape.watch([X, other])
        y = tg.sum(X * 2.0)
    exp = tg.explain_gradient(y, other, tape)
    assert exp.status == "none" and tape.gradient(y, other) is None
    assert exp.kinds == {"no_path"} and exp.paths == []
    assert "zeros of shape () and dtype float64 instead of None" in exp.with_zero


def test_stop_gradient_on_the_path():
    exp, grad = explained(lambda: tg.sum(tg.stop_gradient(X * 2.0) + 1.0), X)
    assert agrees(exp, grad)
    (path,) = exp.paths
    assert path.blocked.kind == "stop_gradient" and path.blocked.node.op.name == "stop_gradient"
    assert [n.op.name for n in path.nodes] == ["multiply", "stop_gradient", "add", "sum"]


def test_op_without_a_derivative():
    exp, grad = explained(lambda: tg.sum(tg.round(X * 1.5)), X)
    assert agrees(exp, grad) and exp.kinds == {"not_differentiable"}


def test_integer_tensor_on_the_path_in_a_graph():
    graph = tg.Graph()
    with graph.as_default():
        a = tg.placeholder(tg.float64, (3,), name="a")
        y = tg.sum(tg.cast(tg.cast(a, tg.int32), tg.float64) * 2.0)
        assert tg.gradients(y, a) == [None]
    before = len(graph.get_operations())
    exp = tg.explain_gradient(y, a, graph)
    assert len(graph.get_operations()) == before          # the graph is left as it was
    assert exp.status == "none" and exp.kinds == {"integer"}
    (path,) = exp.paths
    assert path.blocked.node.name == "cast" and "int32" in path.blocked.message


def test_integer_tensor_on_a_tape_is_named_as_the_likely_cut():
    exp, grad = explained(lambda: tg.sum(tg.cast(tg.cast(X, tg.int64), tg.float64)), X)
    assert agrees(exp, grad)
    integer = [c for c in exp.causes if c.kind == "integer"]
    assert integer and integer[0].node.op.name == "cast" and not integer[0].certain


def test_an_integer_cast_leads_and_the_watched_source_is_not_called_unwatched():
    # The brief's case: x is watched, and the path goes through an integer cast.
    exp, grad = explained(lambda: tg.cast(tg.cast(X, tg.int32) * 2, tg.float64), X)
    assert agrees(exp, grad)
    first = exp.causes[0]
    assert first.kind == "integer" and first.node.op.name == "cast"
    assert "an int32 tensor from x" in first.message and "grad_pass_through" in first.fix
    assert "int32" in exp.summary and "cast" in exp.summary
    text = str(exp)
    assert text.splitlines()[1].startswith("  Why: ") and "int32" in text.splitlines()[1]
    assert "not watching" not in text and "tape.watch" not in text
    assert "a int" not in text


def test_an_integer_cast_of_a_value_computed_from_the_source_leads_too():
    w = tg.constant(2.0, name="w")
    with tg.GradientTape(persistent=True) as tape:
        tape.watch([X, w])
        counts = tg.cast(X * 3.0, tg.int32)
        unrelated = tg.cast(w, tg.int32)          # from another watched tensor: not a hint
        y = tg.sum(tg.cast(counts, tg.float64) * w)   # recorded, through w only
    exp = tg.explain_gradient(y, X, tape)
    assert tape.gradient(y, X) is None and exp.status == "none"
    integer = [c for c in exp.causes if c.kind == "integer"]
    assert integer and exp.causes[0] is integer[0]
    assert [c.node.outputs[0] for c in integer] == [counts]     # not `unrelated`'s cast
    assert "a value computed from x" in integer[0].message
    assert "no_path" in exp.kinds


def test_no_integer_hint_when_the_cast_came_after_the_target():
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(X)
        y = tg.constant(3.0) * 2.0
        tg.cast(X, tg.int32)
    exp = tg.explain_gradient(y, X, tape)
    assert exp.kinds == {"no_record"} and "tape.watch" not in exp.causes[0].fix
    assert "not watching" not in str(exp)


def test_an_integer_source_is_named_once_with_its_article():
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(X)
        counts = tg.cast(X, tg.int64)
        y = tg.sum(tg.cast(counts, tg.float64))
    exp = tg.explain_gradient(y, counts, tape)
    assert exp.status == "none" and exp.causes[0].kind == "integer"
    assert "not_watched" not in exp.kinds
    assert "is an int64 tensor" in exp.causes[0].message and "an int64 tensor" in exp.summary
    assert [a_or_an(t) for t in (tg.int32, tg.float64, tg.bool_, np.dtype("uint8"))] == [
        "an int32", "a float64", "a bool", "a uint8"]


def test_stop_gradients_entry_and_the_seed_example():
    graph = tg.Graph()
    with graph.as_default():
        a = tg.placeholder(tg.float64, (), name="a")
        b = 2 * a
        total = a + b
        assert [g is not None for g in tg.gradients(total, [a, b], stop_gradients=[a, b])] \
            == [True, True]
    exp = tg.explain_gradient(total, a, graph, stop_gradients=[a, b], feed_dict={a: 0.0})
    assert exp.status == "nonzero" and exp.gradient == pytest.approx(1.0)   # not 3
    assert exp.kinds == {"stop_gradients_entry"}
    blocked = [p for p in exp.paths if p.blocked is not None]
    assert [p.blocked.node for p in blocked] == [b.node]
    plain = tg.explain_gradient(total, a, graph, feed_dict={a: 0.0})
    assert plain.gradient == pytest.approx(3.0) and plain.kinds == set()


def test_op_with_no_gradient_rule_is_the_lookup_error():
    mystery_p = primitive("mystery", lambda a: a * 2)
    with tg.GradientTape() as tape:
        tape.watch(X)
        y = tg.sum(bind(mystery_p, X) + X)
    exp = tg.explain_gradient(y, X, tape)
    with pytest.raises(LookupError):
        tape.gradient(y, X)
    assert exp.status == "error" and exp.causes[0].kind == "no_gradient_rule"
    assert "LookupError" in exp.error and "mystery" in exp.summary


def test_custom_grad_fn_that_returned_none():
    @tg.custom_gradient
    def f(a, b):
        def grad_fn(g):
            return g * b, None
        return a * b, grad_fn

    y_ = tg.constant(4.0, name="y")
    with tg.GradientTape(persistent=True) as tape:
        tape.watch([X, y_])
        out = tg.sum(f(X, y_))
    exp = tg.explain_gradient(out, y_, tape)
    assert tape.gradient(out, y_) is None and exp.status == "none"
    assert "grad_fn_returned_none" in exp.kinds
    cause = next(c for c in exp.causes if c.kind == "grad_fn_returned_none")
    assert "argument 1" in cause.message and cause.node.op.name == "custom_gradient"


def test_cond_branch_not_taken_in_a_graph():
    graph = tg.Graph()
    with graph.as_default():
        a = tg.placeholder(tg.float64, (3,), name="a")
        b = tg.placeholder(tg.float64, (), name="b")
        p = tg.placeholder(tg.bool_, (), name="p")
        y = tg.sum(tg.cond(p, lambda: a * 2.0, lambda: a * b, name="choose"))
    feeds = {a: [1.0, 2.0, 3.0], b: 2.0}
    unknown = tg.explain_gradient(y, b, graph)
    assert unknown.status == "symbolic"
    assert unknown.paths[0].condition.kind == "cond_branch_not_taken"
    taken_true = tg.explain_gradient(y, b, graph, feed_dict={**feeds, p: True})
    assert taken_true.status == "zero" and taken_true.kinds == {"cond_branch_not_taken"}
    assert "true_fn is the branch that runs" in taken_true.causes[0].message
    with graph.as_default():
        (g,) = tg.gradients(y, b)
    assert tg.Session(graph).run(g, {**feeds, p: True}) == 0.0     # what it explained
    taken_false = tg.explain_gradient(y, b, graph, feed_dict={**feeds, p: False})
    assert taken_false.status == "symbolic" and taken_false.kinds == set()


def test_cond_branch_not_taken_on_a_tape():
    c = tg.constant(5.0, name="c")
    with tg.GradientTape(persistent=True) as tape:
        tape.watch([X, c])
        y = tg.cond(tg.constant(True), lambda: X * 2.0, lambda: X * c)
    exp = tg.explain_gradient(y, c, tape)
    assert tape.gradient(y, c) is None and exp.status == "none"
    cond = next(c for c in exp.causes if c.kind == "cond_branch_not_taken")
    assert "ran true_fn" in cond.message


def test_tape_not_watching_a_constant():
    exp, grad = explained(lambda: tg.sum(X * X), X, watch=False)
    assert agrees(exp, grad) and exp.kinds == {"not_watched"}
    assert "tape.watch" in exp.causes[0].fix


def test_tape_not_watching_an_untrainable_variable():
    v = tg.Variable([1.0, 2.0], trainable=False, name="v")
    exp, grad = explained(lambda: tg.sum(v * 3.0), v, watch=False)
    assert agrees(exp, grad) and "trainable=False" in exp.causes[0].message


def test_tape_with_watch_accessed_variables_off():
    v = tg.Variable([1.0, 2.0], name="v")
    with tg.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        y = tg.sum(v * 3.0)
    exp = tg.explain_gradient(y, v, tape)
    assert tape.gradient(y, v) is None
    assert exp.kinds == {"not_watched"} and "watch_accessed_variables" in exp.causes[0].message


def test_trainable_variable_is_connected():
    w = tg.Variable([1.0, 2.0], name="w")
    exp, grad = explained(lambda: tg.sum(w * w), w, watch=False)
    assert agrees(exp, grad)


def test_tape_that_had_stopped_recording():
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(X)
        with tape.stop_recording():
            y = tg.sum(X * X)
    exp = tg.explain_gradient(y, X, tape)
    assert tape.gradient(y, X) is None
    assert exp.kinds == {"not_recording"} and "stop_recording" in exp.causes[0].message


def test_target_computed_after_the_with_block():
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(X)
        y = X * 2.0
    z = tg.sum(y * 3.0)
    exp = tg.explain_gradient(z, X, tape)
    assert tape.gradient(z, X) is None
    assert exp.kinds == {"not_recording"} and "after" in exp.causes[0].message


def test_a_dead_relu_zeroes_the_gradient():
    exp, grad = explained(lambda: tg.sum(tg.relu(X - 10.0)), X)
    assert agrees(exp, grad) and exp.status == "zero"
    (cause,) = exp.causes
    assert cause.kind == "zeroed" and cause.node.op.name == "relu" and "dead" in cause.message


def test_cancelling_paths():
    exp, grad = explained(lambda: tg.sum(X * 2.0 - (X + X)), X)
    assert agrees(exp, grad) and exp.status == "zero" and exp.kinds == {"cancelled"}


def test_text_and_html():
    exp, _ = explained(lambda: tg.sum(tg.stop_gradient(X) * 2.0), X)
    text = str(exp)
    assert text.startswith("explain_gradient(target, x): the gradient is None")
    assert "blocked at stop_gradient" in text and 'unconnected_gradients="zero"' in text
    html = exp._repr_html_()
    assert "<b>stop_gradient</b>" in html and "x -&gt; stop_gradient" in html


def test_the_tape_stays_usable_and_unchanged():
    with tg.GradientTape() as tape:
        tape.watch(X)
        y = tg.sum(tg.sin(X))
    producers = dict(tape.recorded.producers)
    exp = tg.explain_gradient(y, X, tape)      # a one-shot tape, before its gradient() call
    assert tape.recorded.producers == producers        # read, not changed
    np.testing.assert_allclose(tape.gradient(y, X).numpy(), np.cos(X.numpy()))
    np.testing.assert_allclose(exp.gradient.numpy(), np.cos(X.numpy()))


def test_bad_arguments_are_explained():
    with tg.GradientTape() as tape:
        tape.watch(X)
        y = tg.sum(X)
    tape.gradient(y, X)
    with pytest.raises(RuntimeError, match="persistent=True"):
        tg.explain_gradient(y, X, tape)
    with pytest.raises(TypeError, match="one source"):
        tg.explain_gradient(y, [X], tape)
    with pytest.raises(ValueError, match="pass it"):
        tg.explain_gradient(y, X)


def test_source_lines_when_recorded():
    with tg.debug.record_sources():
        exp, _ = explained(lambda: tg.sum(tg.stop_gradient(X) * 2.0), X)
    assert "tg.stop_gradient(X)" in exp.causes[0].source.code
    assert "made at" in str(exp)


def test_a_variable_in_a_graph():
    w = tg.Variable([1.0, 2.0], name="w")
    unused = tg.Variable(3.0, name="unused")
    graph = tg.Graph()
    with graph.as_default():
        y = tg.sum(w * w)
    exp = tg.explain_gradient(y, w, graph, feed_dict={})
    assert exp.status == "nonzero"
    np.testing.assert_allclose(exp.gradient, [2.0, 4.0])
    never = tg.explain_gradient(y, unused, graph)
    assert never.status == "none" and "never reads" in never.causes[0].message
