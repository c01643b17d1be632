"""Control flow whose condition or body reads per-example values inside tg.vmap.

Translated from JAX's testWhileLoopCondConstsBatched and its issue 3204 (nested loops),
and from TensorFlow's pfor While tests: the loop runs while any example's condition
holds, and each finished example keeps its state (a selection per example). Every case
is checked against the per-example Python loop, eagerly, in tg.function and in a Graph.
"""
import numpy as np
import pytest
from contexts import CONTEXTS, run_in

import teachgrad as tg


def bound_loop(x, bound):
    """x doubled while below a per-example bound (the bound is captured)."""
    return tg.while_loop(lambda v: v < bound, lambda v: v * 2.0, [x])[0]


def step_loop(x, step):
    """Three steps of a per-example size (the step is captured by the body)."""
    return tg.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v + step * v),
                         [0, x])[1]


def nested_loop(x, n):
    """JAX issue 3204's shape: an inner loop whose bound is the outer counter, an outer
    loop whose bound is per example."""
    def outer_body(i, acc):
        inner = tg.while_loop(lambda j, a: j < i, lambda j, a: (j + 1, a * x), [0, acc])
        return i + 1, inner[1]
    return tg.while_loop(lambda i, a: i < n, outer_body, [0, x])[1]


def counted_loop(x, bound):
    """The bound caps a counter that is not a function of x (the output is the count)."""
    return tg.while_loop(lambda i: i < bound, lambda i: i + 1, [tg.constant(0.0)])[0] * x


CASES = [
    (bound_loop, [1.5, 0.5, 3.0], [5.0, 40.0, 1.0]),
    (step_loop, [1.0, 2.0, 0.5], [0.5, 1.0, 2.0]),
    (nested_loop, [1.5, 0.9, 1.1], [1.0, 2.0, 3.0]),
    (counted_loop, [2.0, 3.0, 4.0], [1.0, 2.5, 0.0]),
]


def per_example(fn, xs, others):
    return np.array([fn(tg.constant(x), tg.constant(o)).numpy() for x, o in zip(xs, others)])


def per_example_grad(fn, xs, others, argnums=0):
    return np.array([tg.grad(fn, argnums=argnums)(tg.constant(x), tg.constant(o)).numpy()
                     for x, o in zip(xs, others)])


def sum_gradient(fn):
    def run(xs, others):
        with tg.GradientTape() as tape:
            tape.watch(xs)
            y = tg.sum(tg.vmap(fn)(xs, others))
        return tape.gradient(y, xs)
    return run


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("fn, xs, others", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_a_loop_reading_per_example_values_equals_the_loop_over_examples(fn, xs, others,
                                                                           context):
    got = run_in(tg.vmap(fn), context, xs, others)
    np.testing.assert_allclose(got, per_example(fn, xs, others), rtol=1e-12)


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("fn, xs, others", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_a_tape_around_the_map_gives_each_example_its_loop_gradient(fn, xs, others, context):
    got = run_in(sum_gradient(fn), context, xs, others)
    np.testing.assert_allclose(got, per_example_grad(fn, xs, others), rtol=1e-12)


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("argnums", [0, 1])
@pytest.mark.parametrize("fn, xs, others", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_per_example_gradients_of_a_loop_reading_per_example_values(fn, xs, others, argnums,
                                                                    context):
    # In a graph the tape inside the map gets the gradient of the batch's While node.
    def per_example_gradients(xs, others):
        return tg.vmap(tg.grad(fn, argnums=argnums))(xs, others)
    got = run_in(per_example_gradients, context, xs, others)
    want = per_example_grad(fn, xs, others, argnums)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got, run_in(per_example_gradients, "eager", xs, others),
                               rtol=1e-12)


def shared_loop_var(w, x):
    """A weight shared by every example, carried as a loop variable."""
    return tg.while_loop(lambda v, u: v < 10.0, lambda v, u: (v * u + 1.0, u), [x, w])[0]


def shared_capture(w, x):
    """A weight shared by every example, read by the body from outside the loop."""
    return tg.while_loop(lambda v: v < 10.0, lambda v: v * w + 1.0, [x])[0]


@pytest.mark.parametrize("context", CONTEXTS)
def test_a_shared_loop_variable_gets_each_examples_gradient(context):
    w, xs = 1.5, [0.5, 2.0, 9.0]

    def build(w, xs):
        return tg.stack(tg.vmap(tg.grad(shared_loop_var, argnums=(0, 1)),
                                in_axes=(None, 0))(w, xs))
    got = run_in(build, context, w, xs)
    want = [[tg.grad(shared_loop_var, argnums=k)(tg.constant(w), tg.constant(x)).numpy()
             for x in xs] for k in (0, 1)]
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("context", ["function", "graph"])
def test_a_shared_captured_value_differentiated_per_example_in_a_graph_is_refused(context):
    # Eagerly it works; in a graph the batch's loop sums its gradient over the examples.
    def build(w, xs):
        return tg.vmap(tg.grad(shared_capture, argnums=0), in_axes=(None, 0))(w, xs)
    eager = run_in(build, "eager", 1.5, [0.5, 2.0])
    want = [tg.grad(shared_capture)(tg.constant(1.5), tg.constant(x)).numpy()
            for x in (0.5, 2.0)]
    np.testing.assert_allclose(eager, want, rtol=1e-12)
    with pytest.raises(NotImplementedError, match="shared by every example"):
        run_in(build, context, 1.5, [0.5, 2.0])
    # Not differentiated, the same captured value is fine.
    got = run_in(lambda w, xs: tg.vmap(tg.grad(shared_capture, argnums=1),
                                       in_axes=(None, 0))(w, xs), context, 1.5, [0.5, 2.0])
    np.testing.assert_allclose(got, [tg.grad(shared_capture, argnums=1)(
        tg.constant(1.5), tg.constant(x)).numpy() for x in (0.5, 2.0)], rtol=1e-12)


@pytest.mark.parametrize("context", ["function", "graph"])
def test_second_derivatives_of_a_per_example_loop_in_a_graph_are_refused(context):
    def build(xs, bounds):
        return tg.vmap(tg.grad(tg.grad(bound_loop)))(xs, bounds)
    with pytest.raises(NotImplementedError, match="nested tapes"):
        run_in(build, context, [1.5, 0.5], [5.0, 40.0])


def test_jax_while_loop_cond_consts_batched():
    # JAX: vmap over the bound only; the loop variable starts shared by every example.
    f = tg.vmap(lambda y: tg.while_loop(lambda x: x < y, lambda x: x + 2.0,
                                        [tg.constant(0.0)])[0])
    np.testing.assert_allclose(f(tg.constant([1.0, 2.0, 3.0])).numpy(), [2.0, 2.0, 4.0])
    np.testing.assert_allclose(tg.function(f)(tg.constant([1.0, 2.0, 3.0])).numpy(),
                               [2.0, 2.0, 4.0])


def test_the_maximum_iterations_left_carry_into_the_per_example_loop():
    # The first iteration's condition is shared; the body makes it per-example after.
    def f(x):
        return tg.while_loop(lambda v: v < 100.0, lambda v: v * x, [tg.constant(1.0)],
                             maximum_iterations=3)[0]
    got = tg.vmap(f)(tg.constant([2.0, 20.0]))
    np.testing.assert_allclose(got.numpy(), [8.0, 400.0])


# -- a per-example cond's gradient selects each branch's gradient (NaN-safe, as JAX) -----

def sqrt_or_square(x):
    return tg.cond(x > 0, lambda: tg.sqrt(x), lambda: x * x)


def log_or_linear(x):
    return tg.cond(x > 1.0, lambda: tg.log(x - 1.0) * x, lambda: 3.0 * x)


def cond_in_loop(x):
    """A cond inside a while loop: the branch's edges are each iteration's."""
    return tg.while_loop(lambda i, v: i < 2,
                         lambda i, v: (i + 1, tg.cond(v > 0, lambda: tg.sqrt(v), lambda: -v)),
                         [0, x])[1]


NAN_SAFE = [
    (sqrt_or_square, [0.0, 4.0, -1.0], [0.0, 0.25, -2.0]),
    (log_or_linear, [1.0, 3.0, 0.5], [3.0, np.log(2.0) + 1.5, 3.0]),
]


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("fn, xs, want", NAN_SAFE, ids=lambda c: getattr(c, "__name__", ""))
def test_per_example_cond_gradients_ignore_the_untaken_branch(fn, xs, want, context):
    with np.errstate(invalid="ignore", divide="ignore"):
        got = run_in(lambda xs, _: tg.vmap(tg.grad(fn))(xs), context, xs, xs)
        looped = per_example_grad(lambda x, _: fn(x), xs, xs)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got, looped, rtol=1e-12)


def test_a_per_example_cond_inside_a_loop_masks_each_iteration_eagerly():
    with np.errstate(invalid="ignore", divide="ignore"):
        got = tg.vmap(tg.grad(cond_in_loop))(tg.constant([0.0, 16.0, -4.0]))
    np.testing.assert_allclose(got.numpy(), [1.0, 1 / 32, -0.25])
    # In a graph the loop's gradient is the batch's, where the branches are not masked:
    # refused, saying what to do, rather than a nan.
    for context in ("function", "graph"):
        with pytest.raises(NotImplementedError, match="per-example tg.cond inside"):
            run_in(tg.vmap(tg.grad(cond_in_loop)), context, [0.0, 16.0, -4.0])


def test_second_derivatives_and_jvps_of_a_per_example_cond_are_nan_safe():
    xs = tg.constant([0.0, 4.0, -1.0])
    with np.errstate(invalid="ignore", divide="ignore"):
        second = tg.vmap(tg.grad(tg.grad(sqrt_or_square)))(xs)
        tangent = tg.vmap(lambda x: tg.jvp(sqrt_or_square, [x], [tg.ones_like(x)])[1])(xs)
    np.testing.assert_allclose(second.numpy(), [2.0, -1 / 32, 2.0])
    np.testing.assert_allclose(tangent.numpy(), [0.0, 0.25, -2.0])


def test_a_shared_weight_read_in_one_branch_gets_that_branch_examples_gradient():
    w = tg.constant(3.0)

    def f(w, x):
        return tg.cond(x > 0, lambda: tg.sqrt(x) * w, lambda: x * x)
    with np.errstate(invalid="ignore", divide="ignore"):
        got = tg.vmap(tg.grad(f, argnums=(0, 1)), in_axes=(None, 0))(w, tg.constant([0.0, 4.0]))
    np.testing.assert_allclose(got[0].numpy(), [0.0, 2.0])
    np.testing.assert_allclose(got[1].numpy(), [0.0, 0.75])
