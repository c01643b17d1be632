"""Unknown shapes in graphs (issue 41, item 4): loops over a run-time number of rows.

tg.scan, the folds, tg.map_fn and tg.vectorized_map over a placeholder of shape
``[None, 2]`` in a Graph, and through tg.function once it relaxes a signature to an
unknown leading size: each builds one while loop over the length the graph learns
when it runs, and its gradient is a loop too. GradientTape.jacobian and
batch_jacobian of targets of unknown shape (TensorFlow's pfor builds them as a loop
over the run-time size). A dynamic_size TensorArray written at a computed index in
a graph loop (TensorFlow's everyday tf.function pattern), with its gradient. An
empty scan gives TensorFlow's empty stack, in every mode.

The cases are translated from TensorFlow's functional_ops, map_fn, tensor_array_ops
and pfor tests (their programs and numbers; the code is ours). Every value is
compared with the same program run eagerly on the known shape, and every gradient
with finite differences.
"""
import warnings

import numpy as np
import pytest
from sequence_modes import MODES, check_gradients, finite_differences, values

import teachgrad as tg

ROWS = [np.linspace(-1.0, 1.0, 2 * n).reshape(n, 2) for n in (3, 5, 1)]

PROGRAMS = {
    "scan": lambda x: tg.scan(lambda a, r: tg.tanh(a * r + 0.5), x),
    "scan reverse": lambda x: tg.scan(lambda a, r: a * 0.5 + tg.sin(r), x,
                                      tg.ones(2, tg.float64), reverse=True),
    "foldl": lambda x: tg.foldl(lambda a, r: a * r + 1.0, x, tg.ones(2, tg.float64)),
    "foldr": lambda x: tg.foldr(lambda a, r: a - r * r, x),
    "map_fn": lambda x: tg.map_fn(lambda r: tg.exp(r) * tg.sum(r), x),
    "vectorized_map": lambda x: tg.vectorized_map(lambda r: tg.sin(r) * tg.sum(r * r), x),
}


def _unknown_rows(fn, array):
    """``fn`` over a placeholder of shape [None, 2], and its gradient, run on ``array``."""
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (None, 2), name="x")
        y = fn(x)
        (grad,) = tg.gradients(tg.sum(y), [x])
    return tg.Session(g).run([y, grad], {x: array}), g


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_loops_over_an_unknown_number_of_rows_in_a_graph(name):
    fn = PROGRAMS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (a per-example fallback under vectorized_map)
        for array in ROWS:
            (value, grad), graph = _unknown_rows(fn, array)
            np.testing.assert_allclose(value, fn(tg.constant(array)).numpy(), rtol=1e-12)
            np.testing.assert_allclose(grad, finite_differences(fn, [array])[0], rtol=1e-5,
                                       atol=1e-7)
    if name != "vectorized_map":   # one While node, and one for its gradient
        assert [n.op.name for n in graph.get_operations()].count("While") == 2


@pytest.mark.parametrize("name", ["scan", "foldl", "map_fn"])
def test_tg_function_relaxed_to_an_unknown_leading_size(name):
    fn = PROGRAMS[name]
    f = tg.function(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the retracing warning
        for n in (3, 5, 4, 6):
            array = np.linspace(-1.0, 1.0, 2 * n).reshape(n, 2)
            x = tg.constant(array)
            with tg.GradientTape() as tape:
                tape.watch(x)
                total = tg.sum(f(x))
            np.testing.assert_allclose(total.numpy(), np.sum(fn(x).numpy()), rtol=1e-12)
            np.testing.assert_allclose(tape.gradient(total, x).numpy(),
                                       finite_differences(fn, [array])[0], rtol=1e-5,
                                       atol=1e-7)
    assert f.last_concrete_function.inputs[0].shape == (None, 2)


@pytest.mark.parametrize("second", [(None, 2), (3, 2)])
def test_elems_of_different_lengths_are_caught_when_the_graph_runs(second):
    # TensorFlow's unstack check: every tensor of elems has the loop's number of rows.
    g = tg.Graph()
    with g.as_default():
        a, b = tg.placeholder(tg.float64, (None, 2)), tg.placeholder(tg.float64, second)
        y = tg.scan(lambda c, r: c + r[0] * r[1], (a, b), tg.zeros(2, tg.float64))
        grads = tg.gradients(tg.sum(y), [a, b])
    session = tg.Session(g)
    b_value = np.arange(6.0).reshape(3, 2)
    value, _, db = session.run([y] + grads, {a: np.ones((3, 2)), b: b_value})
    np.testing.assert_array_equal(value, np.cumsum(b_value, axis=0))
    np.testing.assert_array_equal(db, [[3, 3], [2, 2], [1, 1]])
    for rows in (2, 4):
        feed = {a: np.ones((rows, 2)), b: b_value} if second[0] == 3 else \
            {a: np.ones((3, 2)), b: np.ones((rows, 2))}
        with pytest.raises(ValueError, match=r"Input value must have first dimension equal to "
                                             r"the array size \((2|4) vs. (3|2|4)\)"):
            session.run(y, feed)
    with pytest.raises(ValueError, match="same number of rows"):
        tg.scan(lambda c, r: c + r[0] + r[1], (tg.zeros((2, 2)), tg.zeros((3, 2))),
                tg.zeros(2))


# -- an empty scan: TensorFlow's empty stack ----------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_empty_scan_is_an_empty_stack_of_the_carry(mode):
    out = values(lambda x, init: tg.scan(lambda a, r: a + r, x, init),
                 [np.zeros((0, 2)), np.array([1.0, 2.0])], mode)
    assert out.shape == (0, 2)
    fold = values(lambda x, init: tg.foldl(lambda a, r: a + r, x, init),
                  [np.zeros((0, 2)), np.array([1.0, 2.0])], mode)
    np.testing.assert_array_equal(fold, [1.0, 2.0])


def test_empty_rows_known_only_at_run_time():
    (value, grad), _ = _unknown_rows(
        lambda x: tg.scan(lambda a, r: a + r, x, tg.zeros(2, tg.float64)), np.zeros((0, 2)))
    assert value.shape == (0, 2) and grad.shape == (0, 2)
    (value, _), _ = _unknown_rows(lambda x: tg.map_fn(lambda r: r * 2.0, x), np.zeros((0, 2)))
    assert value.shape == (0, 2)


# -- a dynamic_size TensorArray written at a computed index -------------------------------
def _squares_loop(x):
    """TensorFlow's ``for i in tf.range(n): ta = ta.write(i, f(i))``, in loop form."""
    n = x.shape[0]
    ta = tg.TensorArray(tg.float64, size=0, dynamic_size=True)

    def body(i, ta):
        return i + 1, ta.write(i, tg.sin(tg.gather(x, i)) * tg.cast(i + 1, tg.float64))
    _, ta = tg.while_loop(lambda i, ta: i < n, body, [tg.constant(0), ta])
    return ta.stack()


def _reads_the_last_element(x):
    """A recurrence through the array itself: element i reads element i - 1 back."""
    n = x.shape[0]
    ta = tg.TensorArray(tg.float64, size=0, dynamic_size=True, clear_after_read=False)
    ta = ta.write(0, tg.gather(x, 0))

    def body(i, ta):
        return i + 1, ta.write(i, tg.tanh(ta.read(i - 1) * tg.gather(x, i)) + 0.5)
    _, ta = tg.while_loop(lambda i, ta: i < n, body, [tg.constant(1), ta])
    return ta.stack()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [_squares_loop, _reads_the_last_element])
def test_dynamic_size_array_at_a_computed_index_and_its_gradient(fn, mode):
    x = np.array([0.3, -1.2, 0.8, 2.0])
    np.testing.assert_allclose(values(fn, [x], mode), fn(tg.constant(x)).numpy(), rtol=1e-12)
    check_gradients(fn, [x], mode)


def test_dynamic_size_array_grows_to_a_bound_fed_at_run_time():
    g = tg.Graph()
    with g.as_default():
        n = tg.placeholder(tg.int64, (), name="n")
        w = tg.placeholder(tg.float64, (), name="w")
        ta = tg.TensorArray(tg.float64, size=0, dynamic_size=True)
        _, ta = tg.while_loop(lambda i, ta: i < n,
                              lambda i, ta: (i + 1, ta.write(i, w * tg.cast(i, tg.float64))),
                              [tg.constant(np.int64(0)), ta])
        out = ta.stack()
        (grad,) = tg.gradients(tg.sum(out * out), [w])
        size = ta.size()
    session = tg.Session(g)
    for steps in (0, 1, 4):
        value, dw, count = session.run([out, grad, size], {n: steps, w: 2.0})
        np.testing.assert_array_equal(value, 2.0 * np.arange(steps))
        np.testing.assert_allclose(dw, 2 * 2.0 * np.sum(np.arange(steps) ** 2))
        assert count == steps


# -- Jacobians of targets of unknown shape ---------------------------------------------
def _model(x, w):
    y = tg.sin(x) * 2.0 * w
    return y, tg.sum(y * y, axis=1)


@pytest.mark.filterwarnings("ignore:tg.vectorized_map")   # (sum_like's per-example fallback)
def test_jacobians_of_unknown_shape_targets_in_a_graph():
    wv = np.array([1.5, -0.5])
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (None, 2))
        w = tg.placeholder(tg.float64, (2,))
        with tg.GradientTape(persistent=True) as tape:
            tape.watch([x, w])
            y, z = _model(x, w)
        fetches = [*tape.jacobian(y, [x, w]), tape.jacobian(z, x), tape.batch_jacobian(y, x)]
        assert fetches[0].shape == (None, 2, None, 2)
    for xv in ROWS[:2]:
        got = tg.Session(g).run(fetches, {x: xv, w: wv})
        xe, we = tg.constant(xv), tg.constant(wv)
        with tg.GradientTape(persistent=True) as tape:
            tape.watch([xe, we])
            y, z = _model(xe, we)
        want = [*tape.jacobian(y, [xe, we]), tape.jacobian(z, xe), tape.batch_jacobian(y, xe)]
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b.numpy(), rtol=1e-12, atol=1e-15)


def test_jacobian_of_an_unknown_shape_target_is_a_loop_of_backward_passes():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (None,))
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        j = tape.jacobian(y, x)
    assert [n.op.name for n in g.get_operations()].count("While") == 1
    np.testing.assert_allclose(tg.Session(g).run(j, {x: np.array([1.0, 2.0, 3.0])}),
                               np.diag([2.0, 4.0, 6.0]))


def test_batch_jacobian_of_examples_of_unknown_size_in_a_graph():
    xv = np.arange(6.0).reshape(2, 3) / 6
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (None, None))
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = tg.tanh(x) * tg.sum(x, axis=1, keepdims=True)
        j = tape.batch_jacobian(y, x)
    got = tg.Session(g).run(j, {x: xv})
    xe = tg.constant(xv)
    with tg.GradientTape() as tape:
        tape.watch(xe)
        y = tg.tanh(xe) * tg.sum(xe, axis=1, keepdims=True)
    np.testing.assert_allclose(got, tape.batch_jacobian(y, xe).numpy(), rtol=1e-12)


def test_dynamic_size_scatter_at_computed_indices_in_a_graph_loop():
    g = tg.Graph()
    with g.as_default():
        w = tg.placeholder(tg.float64, ())
        ta = tg.TensorArray(tg.float64, size=0, dynamic_size=True)

        def body(i, ta):
            rows = tg.stack([2 * i, 2 * i + 1])
            return i + 1, ta.scatter(rows, tg.stack([w, w * w]) * tg.cast(i, tg.float64))
        _, ta = tg.while_loop(lambda i, ta: i < 3, body, [tg.constant(np.int64(0)), ta])
        out = ta.stack()
        (grad,) = tg.gradients(tg.sum(out), [w])
    value, dw = tg.Session(g).run([out, grad], {w: 3.0})
    np.testing.assert_array_equal(value, [0, 0, 3, 9, 6, 18])
    assert dw == 3 + 2 * 3.0 * 3   # d/dw of (w + w^2)(0 + 1 + 2)


def _cubes(w, size, dynamic):
    ta = tg.TensorArray(tg.float64, size=size, dynamic_size=dynamic)
    _, ta = tg.while_loop(lambda i, ta: i < 3,
                          lambda i, ta: (i + 1, ta.write(i, w ** 3 * tg.cast(i, tg.float64))),
                          [tg.constant(np.int64(0)), ta])
    return tg.sum(ta.stack())


def test_second_derivative_through_a_growing_array_says_how_to_get_it():
    g = tg.Graph()
    with g.as_default():
        w = tg.placeholder(tg.float64, ())
        (gw,) = tg.gradients(_cubes(w, 0, True), [w])
        with pytest.raises(NotImplementedError, match="give the TensorArray a fixed size="):
            tg.gradients(gw, [w])
        (fixed,) = tg.gradients(_cubes(w, 3, False), [w])
        (second,) = tg.gradients(fixed, [w])
    assert tg.Session(g).run([gw, second], {w: 2.0}) == [36.0, 36.0]
    w = tg.constant(2.0)
    with tg.GradientTape() as outer:
        outer.watch(w)
        with tg.GradientTape() as inner:
            inner.watch(w)
            total = _cubes(w, 0, True)
        gw = inner.gradient(total, w)
    assert outer.gradient(gw, w).numpy() == 36.0   # 3 * 6 w (0 + 1 + 2) at w = 2


# -- tg.function with an input_signature of unknown leading size -----------------------------
@pytest.mark.parametrize("name", ["scan", "foldr", "map_fn", "vectorized_map"])
def test_input_signature_with_an_unknown_leading_size_traces_once(name):
    fn = PROGRAMS[name]
    f = tg.function(fn, input_signature=[tg.TensorSpec((None, 2), tg.float64)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (a per-example fallback under vectorized_map)
        for array in ROWS:
            x = tg.constant(array)
            with tg.GradientTape() as tape:
                tape.watch(x)
                total = tg.sum(f(x))
            np.testing.assert_allclose(total.numpy(), np.sum(fn(x).numpy()), rtol=1e-12)
            np.testing.assert_allclose(tape.gradient(total, x).numpy(),
                                       finite_differences(fn, [array])[0], rtol=1e-5,
                                       atol=1e-7)
    assert f.trace_count == 1
    assert f.last_concrete_function.inputs[0].shape == (None, 2)


def test_input_signature_with_a_dynamic_size_array():
    @tg.function(input_signature=[tg.TensorSpec((None,), tg.float64)])
    def squares(x):
        n = tg.cast(tg.sum(tg.ones_like(x)), tg.int64)   # the length, known when it runs
        ta = tg.TensorArray(tg.float64, size=0, dynamic_size=True)
        _, ta = tg.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(
            i, tg.sin(tg.gather(x, i)) * tg.cast(i + 1, tg.float64))),
            [tg.constant(np.int64(0)), ta])
        return ta.stack()
    for n in (2, 4):
        x = np.linspace(0.2, 1.0, n)
        np.testing.assert_allclose(squares(tg.constant(x)).numpy(),
                                   np.sin(x) * np.arange(1, n + 1), rtol=1e-12)
    assert squares.trace_count == 1


def test_input_signature_refuses_what_does_not_fit():
    f = tg.function(lambda x: x * 2.0, input_signature=[tg.TensorSpec((None, 2), tg.float64)])
    with pytest.raises(ValueError, match=r"incompatible with input_signature: argument 0 has "
                                         r"shape \(3, 3\)"):
        f(tg.zeros((3, 3), tg.float64))
    with pytest.raises(ValueError, match="dtype float32"):
        f(tg.zeros((3, 2), tg.float32))
    with pytest.raises(TypeError, match="too many positional arguments"):
        f(tg.zeros((3, 2), tg.float64), tg.zeros((3, 2), tg.float64))
    with pytest.raises(TypeError, match="input_signature"):
        tg.function(lambda x: x, input_signature=[(None, 2)])
    with pytest.raises(TypeError, match="tg.TensorSpec"):
        tg.TensorSpec((None, 2), "not a dtype")
    np.testing.assert_array_equal(f([[1.0, 2.0]]).numpy(), [[2.0, 4.0]])


# -- per-example rules over a batch of unknown size (a placeholder [None, ...]) ---------

GATHERS = {
    "rows": (lambda q, k: tg.gather(q, k), (5,), ()),
    "middle axis": (lambda q, k: tg.gather(q, k, axis=1), (2, 5, 3), (4,)),
    "index matrix": (lambda q, k: tg.gather(q, k, axis=0), (5, 2), (2, 3)),
}


@pytest.mark.parametrize("name", GATHERS)
def test_per_example_gather_over_a_batch_of_unknown_size(name):
    fn, example, picked = GATHERS[name]
    rng = np.random.default_rng(3)
    params = rng.normal(size=(4,) + example)
    indices = rng.integers(0, 5, size=(4,) + picked)
    weights = rng.normal(size=np.shape(tg.vmap(fn)(tg.constant(params),
                                                   tg.constant(indices)).numpy()))

    def build(p, i):
        with tg.GradientTape() as tape:
            tape.watch(p)
            out = tg.vmap(fn)(p, i)
            loss = tg.sum(out * weights)
        return out, tape.gradient(loss, p)
    graph = tg.Graph()
    with graph.as_default():
        p = tg.placeholder(tg.float64, (None,) + example)
        i = tg.placeholder(tg.int64, (None,) + picked)
        built = build(p, i)
        assert built[0].shape[0] is None
    got = tg.Session(graph).run(list(built), {p: params, i: indices})
    eager = build(tg.constant(params), tg.constant(indices))
    want = np.stack([np.take(params[k], indices[k], axis=1 if name == "middle axis" else 0)
                     for k in range(4)])
    np.testing.assert_allclose(got[0], want)
    for g, e in zip(got, eager):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-12)
    # Per-example gradients need scatter_add's rule, which has none yet: a clear error.
    with graph.as_default(), pytest.raises(NotImplementedError, match="scatter_add has no"):
        tg.vmap(tg.grad(lambda q, k: tg.sum(fn(q, k) ** 2)))(p, i)


def test_per_example_gradients_of_a_sum_over_a_batch_of_unknown_size():
    # The sum's VJP broadcasts its cotangent back: along a batch the graph does not know.
    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, (None, 3))
        grads = tg.vmap(tg.grad(lambda r: tg.sum(r ** 2) * tg.mean(r)))(x)
    rows = np.arange(6.0).reshape(2, 3)
    got = tg.Session(graph).run(grads, {x: rows})
    want = tg.vmap(tg.grad(lambda r: tg.sum(r ** 2) * tg.mean(r)))(tg.constant(rows))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-12)
