"""tg.gradients inside tg.vectorized_map, and vectorized_map's broadcast of a batch of one.

Translated from TensorFlow's pfor tests: a loop body that calls ``tf.gradients`` of one
example's slice of a value computed outside the map (through a TensorArray, as its
TensorArray gradient test does) gets that example's gradient; ``vectorized_map`` reads
an input whose first dimension is 1 as every example's (its broadcasting gather).
"""
import numpy as np
import pytest
from contexts import CONTEXTS, run_in

import teachgrad as tg

X = np.random.default_rng(7).uniform(-1.0, 1.0, size=(3, 2))


def through_array(x):
    """TensorFlow's pfor TensorArray gradient test: y = stack(unstack(x))^2, and each
    example's gradient of its row of y, row i of the gradient kept."""
    array = tg.TensorArray(tg.float64, 3, clear_after_read=False).unstack(x)
    y = tg.square(array.stack())

    def loop_fn(i):
        y_i = tg.gather(y, i)
        return tg.gather(tg.gradients(y_i, x)[0], i)
    return tg.vectorized_map(loop_fn, tg.arange(3))


@pytest.mark.parametrize("context", ["function", "graph"])
def test_gradients_of_an_example_of_a_value_computed_outside_the_map(context):
    np.testing.assert_allclose(run_in(through_array, context, X), 2 * X, rtol=1e-12)


@pytest.mark.parametrize("context", ["function", "graph"])
def test_each_example_gets_the_gradient_of_its_own_slice(context):
    def build(x):
        y = tg.tanh(x) * 3.0
        return tg.vectorized_map(lambda i: tg.gradients(tg.gather(y, i), x)[0], tg.arange(3))
    got = run_in(build, context, X)
    want = np.zeros((3, 3, 2))
    for i in range(3):
        want[i, i] = 3.0 * (1 - np.tanh(X[i]) ** 2)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("context", ["function", "graph"])
def test_grad_ys_per_example_and_ys_shared_by_every_example(context):
    def build(x, w):
        y = x * x
        total = tg.sum(x)   # the same for every example: its gradient is ones

        def loop_fn(args):
            i, w_i = args
            return tg.gradients([tg.gather(y, i), total], x, grad_ys=[w_i, None])[0]
        return tg.vectorized_map(loop_fn, (tg.arange(3), w))
    weights = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    got = run_in(build, context, X, weights)
    want = np.ones((3, 3, 2))
    for i in range(3):
        want[i, i] += 2 * X[i] * weights[i]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_gradients_with_respect_to_an_example_view_are_refused_clearly():
    def build(x):
        return tg.vectorized_map(lambda xi: tg.gradients(tg.sum(tg.sin(xi)), xi)[0], x)
    with pytest.raises(NotImplementedError, match="GradientTape inside the mapped function"):
        run_in(build, "graph", X)


def test_gradients_inside_an_eager_map_say_to_use_a_tape():
    with pytest.raises(RuntimeError, match="Use tg.GradientTape instead"):
        y = tg.constant(X) * 2.0
        tg.vectorized_map(lambda i: tg.gradients(tg.gather(y, i), y)[0], tg.arange(3))


# -- a first dimension of 1 is every example's (vectorized_map only) --------------------
@pytest.mark.parametrize("context", CONTEXTS)
def test_vectorized_map_broadcasts_a_batch_of_one(context):
    def build(a, b):
        return tg.vectorized_map(lambda e: e[0] * e[1] + tg.sum(e[0]), (a, b))
    a, b = np.array([[1.0, 2.0]]), np.array([[3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    want = a * b + a.sum()
    got = run_in(build, context, a, b)
    np.testing.assert_allclose(got, want)


def test_the_broadcast_input_gets_the_sum_of_every_example_gradient():
    a, b = tg.constant([[1.0, 2.0]]), tg.constant([[3.0, 4.0], [5.0, 6.0]])
    with tg.GradientTape() as tape:
        tape.watch([a, b])
        y = tg.sum(tg.vectorized_map(lambda e: e[0] * e[1], [a, b]))
    grad_a, grad_b = tape.gradient(y, [a, b])
    np.testing.assert_allclose(grad_a.numpy(), [[8.0, 10.0]])
    np.testing.assert_allclose(grad_b.numpy(), [[1.0, 2.0], [1.0, 2.0]])


def test_other_batch_sizes_and_vmap_do_not_broadcast():
    one, three, two = np.ones((1, 2)), np.ones((3, 2)), np.ones((2, 2))
    with pytest.raises(ValueError, match="different batch sizes"):
        tg.vectorized_map(lambda e: e[0] + e[1] + e[2], [one, three, two])
    with pytest.raises(ValueError, match="different batch sizes"):   # JAX's vmap does not
        tg.vmap(lambda a, b: a + b)(tg.constant(one), tg.constant(three))


def unknown_size_graph(build):
    """``build`` on two placeholders of shape [None, 2] (sizes known only when run)."""
    graph = tg.Graph()
    with graph.as_default():
        a, b = tg.placeholder(tg.float64, (None, 2)), tg.placeholder(tg.float64, (None, 2))
        out = build(a, b)
    return lambda x, y: tg.Session(graph).run(out, {a: x, b: y})


def product_and_count(e):
    """A matmul (no broadcasting of its own) and a value shared by every example."""
    return tg.matmul(tg.reshape(e[0], (1, 2)), tg.reshape(e[1], (2, 1)))[0, 0], tg.constant(1.0)


def test_a_batch_of_one_is_every_examples_when_the_graph_runs():
    run = unknown_size_graph(lambda a, b: tg.vectorized_map(product_and_count, (a, b)))
    one, three = np.array([[1.0, 2.0]]), np.arange(6.0).reshape(3, 2)
    for x, y in ((one, three), (three, one), (three, three)):
        products, counts = run(x, y)
        np.testing.assert_allclose(products, np.sum(x * y, axis=1))
        np.testing.assert_allclose(counts, np.ones(3))   # as many rows as the examples
    with pytest.raises(ValueError, match="batch_sizes_must_match_or_be_1"):
        run(three[:2], three)


def test_a_batch_of_one_gets_every_examples_gradient_when_the_graph_runs():
    def build(a, b):
        with tg.GradientTape() as tape:
            tape.watch([a, b])
            y = tg.sum(tg.vectorized_map(lambda e: e[0] * e[1] ** 2, (a, b)))
        return tape.gradient(y, [a, b])
    one, three = np.array([[1.0, 2.0]]), np.arange(6.0).reshape(3, 2)
    got = unknown_size_graph(build)(one, three)
    want = build(tg.constant(one), tg.constant(three))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w.numpy())
