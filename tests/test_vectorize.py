"""tg.vectorized_map and tg.vmap: a function of one example, run on a batch in one pass.

Every result is compared with the loop it stands for: the function applied to each
example in turn, stacked. The composition table's programs (loops, conds, custom
gradients, scans...) are vectorized eagerly, inside tg.function and in a Graph, and
differentiated around and inside the map.
"""
import warnings

import numpy as np
import pytest
from composition_table import PROGRAMS
from hypothesis import given, settings, strategies as st

import teachgrad as tg

SCALES = (1.0, 0.9, 0.8)   # three examples from one drawn case (domains stay valid)


def loop(fn, *batches):
    """What vmap stands for: ``fn`` on each example, stacked."""
    n = len(batches[0])
    results = [fn(*[tg.constant(b[i]) for b in batches]) for i in range(n)]
    return np.stack([np.asarray(r) for r in results])


def batch_of(array):
    return np.stack([array * s for s in SCALES])


# -- TensorFlow's and JAX's documented examples ----------------------------------------

def test_tensorflow_outer_product_example():
    a = tg.ones((100, 32, 32))
    c = tg.vectorized_map(lambda a: tg.tensordot(a, a, 0), a)
    assert c.shape == (100, 32, 32, 32, 32)
    np.testing.assert_array_equal(c.numpy()[3, 1, 2, 3, 4], 1.0)


def test_tensorflow_per_example_gradients_example():
    rng = np.random.default_rng(0)
    w = tg.constant(rng.normal(size=(8, 4)))
    inputs, labels = rng.normal(size=(16, 8)), rng.integers(0, 4, size=16)

    def model_fn(arg):
        inp, label = arg
        with tg.GradientTape() as g:
            g.watch(inp)
            logits = tg.matmul(inp[None, :], w)[0]
            loss = tg.nn.sparse_softmax_cross_entropy_with_logits(labels=label, logits=logits)
        return g.gradient(loss, inp)

    got = tg.vectorized_map(model_fn, (tg.constant(inputs), tg.constant(labels)))
    want = np.stack([model_fn((tg.constant(inputs[i]), tg.constant(labels[i]))).numpy()
                     for i in range(16)])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_jax_style_in_axes_and_out_axes():
    x = np.arange(12.0).reshape(3, 4)
    y = np.arange(3.0)   # one column of x at a time, times y
    got = tg.vmap(lambda a, b: a * b, in_axes=(1, None), out_axes=1)(tg.constant(x), y)
    np.testing.assert_allclose(got.numpy(), x * y[:, None])
    dots = tg.vmap(tg.vmap(lambda a, b: tg.sum(a * b), in_axes=(None, 0)), in_axes=(0, None))
    np.testing.assert_allclose(dots(tg.constant(x), tg.constant(x)).numpy(), x @ x.T)


def test_nested_structures_in_and_out():
    xs = {"a": tg.constant([1.0, 2.0]), "b": (tg.constant([[1.0], [2.0]]),)}
    out = tg.vectorized_map(lambda e: {"sum": e["a"] + e["b"][0][0], "a": e["a"]}, xs)
    np.testing.assert_allclose(out["sum"].numpy(), [2.0, 4.0])
    np.testing.assert_allclose(out["a"].numpy(), [1.0, 2.0])


def test_an_output_shared_by_every_example_is_repeated():
    out = tg.vmap(lambda x: tg.constant(7.0))(tg.constant([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(out.numpy(), [7.0, 7.0, 7.0])
    same = tg.vmap(lambda x, w: w * 2.0, in_axes=(0, None), out_axes=None)
    np.testing.assert_allclose(same(tg.constant([1.0, 2.0]), tg.constant(3.0)).numpy(), 6.0)


# -- per-example gradients and derivatives of maps ---------------------------------------

def _mlp_loss(w1, w2, x, y):
    return tg.sum((tg.matmul(tg.tanh(tg.matmul(x[None, :], w1)), w2)[0] - y) ** 2)


def _mlp_case(rng):
    return (rng.normal(size=(3, 5)), rng.normal(size=(5, 2)), rng.normal(size=(6, 3)),
            rng.normal(size=(6, 2)))


def test_per_example_gradients_equal_the_loop():
    w1, w2, xs, ys = _mlp_case(np.random.default_rng(1))
    grad = tg.grad(_mlp_loss, argnums=(0, 1))
    got = tg.vmap(grad, in_axes=(None, None, 0, 0))(w1, w2, tg.constant(xs), tg.constant(ys))
    for k in range(2):
        want = loop(lambda x, y: grad(tg.constant(w1), tg.constant(w2), x, y)[k], xs, ys)
        np.testing.assert_allclose(got[k].numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("context", ["eager", "function", "graph"])
def test_gradient_of_a_map_equals_the_batch_gradient(context):
    w1, w2, xs, ys = _mlp_case(np.random.default_rng(2))
    v1, v2 = tg.Variable(w1), tg.Variable(w2)

    def total(xs, ys):
        with tg.GradientTape() as tape:
            per_example = tg.vmap(lambda x, y: _mlp_loss(v1, v2, x, y))(xs, ys)
            loss = tg.sum(per_example)
        return tape.gradient(loss, [v1, v2])

    if context == "graph":
        graph = tg.Graph()
        with graph.as_default():
            px, py = tg.placeholder(tg.float64, (None, 3)), tg.placeholder(tg.float64, (None, 2))
            grads = total(px, py)
        got = tg.Session(graph).run(grads, feed_dict={px: xs, py: ys})
    else:
        run = tg.function(total) if context == "function" else total
        got = [g.numpy() for g in run(tg.constant(xs), tg.constant(ys))]
    with tg.GradientTape() as tape:
        loss = tg.sum((tg.matmul(tg.tanh(tg.matmul(tg.constant(xs), v1)), v2) - ys) ** 2)
    for g, want in zip(got, tape.gradient(loss, [v1, v2])):
        np.testing.assert_allclose(g, want.numpy(), rtol=1e-10, atol=1e-12)


def test_second_derivatives_inside_a_map():
    x = np.array([0.5, 1.0, 2.0])
    f = lambda t: t ** 3 * tg.sin(t)   # noqa: E731
    got = tg.vmap(tg.grad(tg.grad(f)))(tg.constant(x))
    np.testing.assert_allclose(got.numpy(), loop(tg.grad(tg.grad(f)), x), rtol=1e-12)
    hess = tg.vmap(tg.hessian(lambda v: tg.sum(v ** 3)))(tg.constant(np.ones((2, 3)) * 2))
    np.testing.assert_allclose(hess.numpy(), np.stack([np.eye(3) * 12] * 2))


def test_forward_mode_inside_and_around_a_map():
    x = tg.constant(np.array([0.3, -0.7, 1.1]))
    f = lambda t: tg.tanh(t) * 2.0   # noqa: E731
    jacobian = tg.vmap(lambda v: tg.jvp(f, [x], [v])[1])(tg.constant(np.eye(3)))
    np.testing.assert_allclose(jacobian.numpy(), np.diag(2 * (1 - np.tanh(x.numpy()) ** 2)))
    with tg.ForwardAccumulator(x, tg.ones_like(x)) as acc:
        y = tg.vmap(f)(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), 2 * (1 - np.tanh(x.numpy()) ** 2))


def test_custom_gradients_stay_custom_both_ways():
    @tg.custom_gradient
    def log1pexp(x):
        e = tg.exp(x)
        return tg.log(1 + e), lambda dy: dy * (1 - 1 / (1 + e))

    x = tg.constant([0.0, 100.0])
    np.testing.assert_allclose(tg.vmap(tg.grad(log1pexp))(x).numpy(), [0.5, 1.0])
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.sum(tg.vmap(log1pexp)(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [0.5, 1.0])


# -- control flow: each example its own branch, its own number of iterations -------------

def _branch(x):
    return tg.cond(x > 1.5, lambda: x * 10.0, lambda: x - 1.0)


def _loop(x):
    return tg.while_loop(lambda i, v: v < 10.0, lambda i, v: (i + 1, v * 2.0), (0, x))[1]


def _switch(i, x):
    return tg.switch_case(i, [lambda: x, lambda: x * 2.0, lambda: tg.sin(x)])


@pytest.mark.parametrize("context", ["eager", "function"])
@pytest.mark.parametrize("fn, want, want_grad", [
    (_branch, [0.0, 20.0, 30.0], [1.0, 10.0, 10.0]),
    (_loop, [16.0, 16.0, 12.0], [16.0, 8.0, 4.0]),
])
def test_control_flow_with_a_predicate_per_example(fn, want, want_grad, context):
    xs = tg.constant([1.0, 2.0, 3.0])
    mapped = tg.vmap(fn)
    around = tg.function(mapped) if context == "function" else mapped
    np.testing.assert_allclose(around(xs).numpy(), want)
    if context == "eager":   # a tape inside the map: eagerly
        np.testing.assert_allclose(tg.vmap(tg.grad(fn))(xs).numpy(), want_grad)

    def outer(xs):
        with tg.GradientTape() as tape:
            tape.watch(xs)
            y = tg.sum(tg.vmap(fn)(xs))
        return tape.gradient(y, xs)
    run = tg.function(outer) if context == "function" else outer
    np.testing.assert_allclose(run(xs).numpy(), want_grad)


def test_switch_case_with_an_index_per_example():
    xs = np.array([1.0, 2.0, 3.0, 4.0])
    index = np.array([0, 1, 2, 9])   # 9 is out of range: the last branch
    got = tg.vmap(_switch)(tg.constant(index), tg.constant(xs))
    np.testing.assert_allclose(got.numpy(), loop(_switch, index, xs))


def test_scan_inside_a_map_and_its_per_example_gradient():
    xs = np.array([1.0, 2.0, 3.0])
    powers = lambda x: tg.scan(lambda a, e: a * e, tg.stack([x, x, x]))   # noqa: E731
    np.testing.assert_allclose(tg.vmap(powers)(tg.constant(xs)).numpy(), loop(powers, xs))
    grad = tg.grad(lambda x: tg.sum(powers(x)))
    np.testing.assert_allclose(tg.vmap(grad)(tg.constant(xs)).numpy(), 1 + 2 * xs + 3 * xs ** 2)


# -- the composition table, vectorized -----------------------------------------------------

def _cases():
    for program in PROGRAMS:
        for context in ("eager", "function", "graph"):
            yield pytest.param(program, context, id=f"{program.name}-{context}")


@pytest.mark.parametrize("program, context", list(_cases()))
@settings(max_examples=3, deadline=None)
@given(data=st.data())
def test_composition_programs_vectorize(program, context, data):
    case = data.draw(program.inputs, label="case")
    batches = [batch_of(a) for a in case.arrays]
    fn = lambda *xs: program.fn(*xs, **case.params)   # noqa: E731
    want = loop(fn, *batches)
    if context == "graph":
        graph = tg.Graph()
        with graph.as_default():
            holders = [tg.placeholder(tg.float64, b.shape) for b in batches]
            out = tg.vmap(fn)(*holders)
        got = tg.Session(graph).run(out, feed_dict=dict(zip(holders, batches)))
    else:
        mapped = tg.vmap(fn)
        run = tg.function(mapped) if context == "function" else mapped
        got = run(*[tg.constant(b) for b in batches]).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
@settings(max_examples=3, deadline=None)
@given(data=st.data())
def test_composition_programs_per_example_gradients(program, data):
    case = data.draw(program.inputs, label="case")
    batches = [batch_of(a) for a in case.arrays]
    argnums = tuple(range(len(batches)))
    grad = tg.grad(lambda *xs: tg.sum(program.fn(*xs, **case.params)), argnums=argnums)
    got = tg.vmap(grad)(*[tg.constant(b) for b in batches])
    for k in argnums:
        want = loop(lambda *xs: grad(*xs)[k], *batches)
        np.testing.assert_allclose(got[k].numpy(), want, rtol=1e-9, atol=1e-12)


# -- bad input: a clear error naming the argument ------------------------------------------

def test_mismatched_batch_sizes_are_refused():
    with pytest.raises(ValueError, match="different batch sizes .*argument 0: 3, argument 1: 4"):
        tg.vmap(lambda a, b: a + b)(tg.ones((3,)), tg.ones((4,)))
    with pytest.raises(ValueError, match=r"elems\[0\]: 2, elems\[1\]: 3"):
        tg.vectorized_map(lambda e: e[0], (tg.ones((2,)), tg.ones((3,))))


def test_in_axes_out_of_range_is_refused():
    with pytest.raises(ValueError, match="`in_axes` must be an axis of argument 0"):
        tg.vmap(lambda a: a, in_axes=2)(tg.ones((3,)))
    with pytest.raises(ValueError, match="`in_axes` must be one entry per positional"):
        tg.vmap(lambda a, b: a, in_axes=(0,))(tg.ones((3,)), tg.ones((3,)))
    with pytest.raises(TypeError, match="`in_axes` must be an int or None"):
        tg.vmap(lambda a: a, in_axes="0")


def test_a_map_needs_a_batched_argument():
    with pytest.raises(ValueError, match="no argument is batched"):
        tg.vmap(lambda a: a, in_axes=None)(tg.ones((3,)))


def test_out_axes_none_for_a_batched_output_is_refused():
    with pytest.raises(ValueError, match="out_axes is None for an output that differs"):
        tg.vmap(lambda a: a * 2.0, out_axes=None)(tg.ones((3,)))


def test_one_example_has_no_single_value_and_no_truth():
    with pytest.raises(RuntimeError, match="differs from example to example"):
        tg.vmap(lambda a: a.numpy())(tg.ones((3,)))
    with pytest.raises(TypeError, match="cannot be a Python bool"):
        tg.vmap(lambda a: a * 2.0 if a > 0 else a)(tg.ones((3,)))


def test_a_value_kept_from_inside_a_map_is_refused_after_it():
    kept = []
    tg.vmap(lambda a: kept.append(a) or a)(tg.ones((3,)))
    with pytest.raises(RuntimeError, match="used after it returned"):
        kept[0] + 1.0


def test_an_op_without_a_rule_loops_and_says_so_once():
    square = tg.ops.primitive("square_without_rule", lambda x: x * x)
    tg.ops.defvjp(square, lambda ct, ans, x: ct * 2.0 * x)
    xs = tg.constant([1.0, 2.0, 3.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(3):
            got = tg.vmap(lambda x: tg.ops.bind(square, x))(xs)
    messages = [str(w.message) for w in caught if "square_without_rule" in str(w.message)]
    assert len(messages) == 1 and "no batching rule" in messages[0]
    np.testing.assert_allclose(got.numpy(), [1.0, 4.0, 9.0])
    np.testing.assert_allclose(tg.vmap(tg.grad(lambda x: tg.ops.bind(square, x)))(xs).numpy(),
                               [2.0, 4.0, 6.0])


@pytest.mark.parametrize("flow", ["cond", "while_loop"])
def test_mapping_a_graph_loop_gradient_over_cotangents_is_refused_clearly(flow):
    # Inside the map, the gradient is fine (above); mapping a graph's While/If gradient
    # over cotangents is not supported yet, and must say so rather than build a bad graph.
    def program(x):
        if flow == "cond":
            return tg.cond(tg.sum(x) > 0, lambda: x * x, lambda: -x)
        return tg.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, tg.sin(v)), (0, x))[1]

    graph = tg.Graph()
    with graph.as_default():
        x = tg.placeholder(tg.float64, (3,))
        with tg.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = program(x)
        with pytest.raises(NotImplementedError, match="tg.vmap\\(tg.grad\\(f\\)\\)"):
            tg.vmap(lambda ct: tape.gradient(y, x, output_gradients=ct))(
                tg.constant(np.eye(3)))
        rows = tape.jacobian(y, x)   # the pfor Jacobian loops over the rows there instead
    got = tg.Session(graph).run(rows, feed_dict={x: np.array([0.5, 1.0, 2.0])})
    want = tg.jacrev(program)(tg.constant(np.array([0.5, 1.0, 2.0]))).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("context", ["eager", "function"])
def test_a_map_inside_a_loop_body(context):
    xs = tg.constant([1.0, 2.0, 3.0])

    def twice(xs):
        body = lambda i, a: (i + 1, a + tg.vmap(lambda x: tg.sin(x) * x)(xs))   # noqa: E731
        return tg.while_loop(lambda i, a: i < 2, body, (0, tg.zeros((3,))))[1]
    run = tg.function(twice) if context == "function" else twice
    np.testing.assert_allclose(run(xs).numpy(), 2 * np.sin(xs.numpy()) * xs.numpy())


def test_a_record_block_hears_per_example_gradients_inside_and_around_a_map():
    """tg.viz.record() is a recorder on the stack like a tape: entered inside the mapped
    function or around the map, it hears the backward pass of tg.grad, and the gradient
    is the one without it."""
    xs = tg.constant([0.5, 1.0, 2.0])
    f = tg.grad(lambda x: tg.sin(x) * x)
    want = np.cos(xs.numpy()) * xs.numpy() + np.sin(xs.numpy())

    def listened(x):
        with tg.viz.record() as rec:
            g = f(x)
        heard.append(len(rec.traces))
        return g

    heard = []
    np.testing.assert_allclose(tg.vmap(listened)(xs).numpy(), want)
    assert heard == [1]
    with tg.viz.record() as rec:
        np.testing.assert_allclose(tg.vmap(f)(xs).numpy(), want)
    assert len(rec.traces) == 1 and rec.traces[0].start is not None
