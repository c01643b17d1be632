"""tg.while_loop and tg.cond: values and gradients, eagerly and in graphs.

Issue 6. Every loop here is checked three ways -- eagerly under a GradientTape,
in a graph with tg.gradients + tg.Session, and through a @tg.function called
eagerly under a tape -- against the same ops unrolled in a Python for loop
(values and tape gradients) and against central finite differences (float64).
Then: property tests with random loop bodies, second derivatives, the graph
structure (one While/If node, not unrolled; node count independent of the
iteration count; no recursion for 10,000 iterations), what the forward While
saves for the gradient, LoopIteration events, and the error messages.
"""
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import teachgrad as tg
from teachgrad.autodiff import events

MODES = ["eager", "graph", "function"]


# -- helpers ---------------------------------------------------------------------------
def as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def numpy_of(t):
    if t is None:
        return None
    if isinstance(t, tg.IndexedSlices):
        t = t.to_dense()
    return np.asarray(t.numpy())


def run(graph, fetches, feed_dict=None):
    return tg.Session(graph).run(fetches, feed_dict)


def eager_value_and_grad(fn, arrays, unconnected="none"):
    xs = [tg.constant(a) for a in arrays]
    with tg.GradientTape() as tape:
        tape.watch(xs)
        ys = as_list(fn(*xs))
    grads = tape.gradient(ys, xs, unconnected_gradients=unconnected)
    return [y.numpy() for y in ys], [numpy_of(g) for g in grads]


def graph_value_and_grad(fn, arrays, unconnected="none"):
    g = tg.Graph()
    with g.as_default():
        xs = [tg.placeholder(tg.float64, np.shape(a), name=f"x{i}")
              for i, a in enumerate(arrays)]
        ys = as_list(fn(*xs))
        grads = tg.gradients(ys, xs, unconnected_gradients=unconnected)
    feed = dict(zip(xs, arrays))
    values = run(g, ys, feed)
    fetched = run(g, [gr for gr in grads if gr is not None], feed)
    it = iter(fetched)
    return values, [None if gr is None else next(it) for gr in grads]


def function_value_and_grad(fn, arrays, unconnected="none"):
    f = tg.function(fn)
    xs = [tg.constant(a) for a in arrays]
    with tg.GradientTape() as tape:
        tape.watch(xs)
        ys = as_list(f(*xs))
    grads = tape.gradient(ys, xs, unconnected_gradients=unconnected)
    return [y.numpy() for y in ys], [numpy_of(g) for g in grads]


VALUE_AND_GRAD = {"eager": eager_value_and_grad, "graph": graph_value_and_grad,
                  "function": function_value_and_grad}


def finite_differences(fn, arrays, eps=1e-6):
    """Central differences of sum(sum(y) for y in fn(*arrays)), evaluated eagerly."""
    def f(values):
        return sum(float(np.sum(y.numpy())) for y in as_list(fn(*[tg.constant(v) for v in values])))
    grads = []
    for k, a in enumerate(arrays):
        a = np.asarray(a, dtype=np.float64)
        grad = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [np.array(v, dtype=np.float64, copy=True) for v in arrays]
            minus = [np.array(v, dtype=np.float64, copy=True) for v in arrays]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            grad[idx] = (f(plus) - f(minus)) / (2 * eps)
        grads.append(grad)
    return grads


def assert_close_list(actual, expected, rtol=1e-7, atol=1e-9, what=""):
    assert len(actual) == len(expected), what
    for k, (a, e) in enumerate(zip(actual, expected)):
        if e is None:
            assert a is None, f"{what}[{k}]: expected None, got {a!r}"
            continue
        assert a is not None, f"{what}[{k}]: got None, expected {e!r}"
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=rtol, atol=atol,
                                   err_msg=f"{what}[{k}]")


def ops_named(graph, name):
    return [op for op in graph.get_operations() if op.op.name == name]


# -- the loops, and the same ops unrolled --------------------------------------------------
@dataclass
class LoopCase:
    name: str
    loop: Callable          # fn(*tensors) -> tensor or list of tensors, with while_loop/cond
    unrolled: Callable      # the same computation with Python control flow
    inputs: tuple           # float64 arrays

    def __repr__(self):
        return self.name


W_CAPTURED = np.array([[0.5, -0.3, 0.2], [0.1, 0.4, -0.6], [-0.2, 0.3, 0.7]])


def captures_loop(a, b):
    # body reads outer tensors a (scalar) and b (vector) in every iteration
    _, h = tg.while_loop(lambda i, h: i < 4,
                         lambda i, h: (i + 1, tg.tanh(h * a + b)),
                         [tg.constant(0), b * 0.5])
    return tg.sum(h * h)


def captures_unrolled(a, b):
    h = b * 0.5
    for _ in range(4):
        h = tg.tanh(h * a + b)
    return tg.sum(h * h)


def nested_loop(x):
    # the inner count depends on the outer counter: 1 + 2 + 3 inner iterations
    def outer_body(i, h):
        _, h = tg.while_loop(lambda j, h: j < i + 1,
                             lambda j, h: (j + 1, tg.sin(h) * x + 0.1),
                             [tg.constant(0), h])
        return i + 1, h * 1.1
    _, h = tg.while_loop(lambda i, h: i < 3, outer_body, [tg.constant(0), x])
    return h


def nested_unrolled(x):
    h = x
    for i in range(3):
        for _ in range(i + 1):
            h = tg.sin(h) * x + 0.1
        h = h * 1.1
    return h


def cond_in_loop(x):
    # data-dependent branch: h grows past 1 and is then halved
    def body(i, h):
        h = tg.cond(h > 1.0, lambda: h * 0.5 + x, lambda: h * x + tg.sin(h))
        return i + 1, h
    _, h = tg.while_loop(lambda i, h: i < 5, body, [tg.constant(0), x])
    return h


def cond_in_loop_unrolled(x):
    h = x
    for _ in range(5):
        h = h * 0.5 + x if float(h.numpy()) > 1.0 else h * x + tg.sin(h)
    return h


def loop_in_cond(x, y):
    def true_fn():
        _, h = tg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, h * x + y),
                             [tg.constant(0), y])
        return h
    def false_fn():
        _, h = tg.while_loop(lambda i, h: i < 2, lambda i, h: (i + 1, tg.sin(h) * y),
                             [tg.constant(0), x])
        return h
    return tg.cond(x > 0.0, true_fn, false_fn)


def loop_in_cond_unrolled(x, y):
    if float(x.numpy()) > 0:
        h = y
        for _ in range(3):
            h = h * x + y
    else:
        h = x
        for _ in range(2):
            h = tg.sin(h) * y
    return h


def data_dependent(x):
    # iterate h <- h * x + 0.3 until h >= 5: the count depends on x
    _, h = tg.while_loop(lambda i, h: h < 5.0, lambda i, h: (i + 1, h * x + 0.3),
                         [tg.constant(0), x])
    return h


def data_dependent_unrolled(x):
    h = x
    while float(h.numpy()) < 5.0:
        h = h * x + 0.3
    return h


def max_iters_int(x):
    _, h = tg.while_loop(lambda i, h: h < 1e9, lambda i, h: (i + 1, tg.sin(h) + x * h),
                         [tg.constant(0), x], maximum_iterations=3)
    return h


def max_iters_tensor(x):
    _, h = tg.while_loop(lambda i, h: h < 1e9, lambda i, h: (i + 1, tg.sin(h) + x * h),
                         [tg.constant(0), x], maximum_iterations=tg.constant(3))
    return h


def max_iters_unrolled(x):
    h = x
    for _ in range(3):
        h = tg.sin(h) + x * h
    return h


def max_iters_before_cond(x):
    # cond would stop after 4 iterations, maximum_iterations after 2
    _, h = tg.while_loop(lambda i, h: i < 4, lambda i, h: (i + 1, h * x),
                         [tg.constant(0), x + 1.0], maximum_iterations=2)
    return h


def max_iters_before_cond_unrolled(x):
    return (x + 1.0) * x * x


def structured_loop(x, y):
    # loop_vars nest a dict, a tuple and a counter
    def body(state, i):
        h, (u, v) = state["h"], state["pair"]
        return {"h": h * u + v, "pair": (u * 0.9, tg.sin(v) + x)}, i + 1
    state, _ = tg.while_loop(lambda state, i: i < 3, body,
                             [{"h": x, "pair": (y, x * y)}, tg.constant(0)])
    return state["h"] + state["pair"][1]


def structured_unrolled(x, y):
    h, u, v = x, y, x * y
    for _ in range(3):
        h, u, v = h * u + v, u * 0.9, tg.sin(v) + x
    return h + v


def zero_iterations(x):
    _, h = tg.while_loop(lambda i, h: i < 0, lambda i, h: (i + 1, tg.sin(h) * 7.0),
                         [tg.constant(0), x])
    return h * 3.0


def zero_iterations_unrolled(x):
    return x * 3.0


def matrix_loop(h0, w):
    # (2, 3) matrix loop variable, (3, 3) matrix captured
    _, h = tg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tg.tanh(tg.matmul(h, w))),
                         [tg.constant(0), h0])
    return tg.sum(h * tg.constant(np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])))


def matrix_unrolled(h0, w):
    h = h0
    for _ in range(3):
        h = tg.tanh(tg.matmul(h, w))
    return tg.sum(h * tg.constant(np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])))


def multiple_targets(x, v):
    _, h, s = tg.while_loop(lambda i, h, s: i < 3,
                            lambda i, h, s: (i + 1, h * v, s + tg.sum(h) * x),
                            [tg.constant(0), v, x])
    return [h, s * 2.0]


def multiple_targets_unrolled(x, v):
    h, s = v, x
    for _ in range(3):
        h, s = h * v, s + tg.sum(h) * x
    return [h, s * 2.0]


def float_counter(x):
    # a float "counter" that carries gradient, plus an int one
    _, c, h = tg.while_loop(lambda i, c, h: i < 3,
                            lambda i, c, h: (i + 1, c + x, h * c),
                            [tg.constant(0), x, tg.ones_like(x)])
    return h


def float_counter_unrolled(x):
    c, h = x, tg.ones_like(x)
    for _ in range(3):
        c, h = c + x, h * c
    return h


def sparse_captures(x, m):
    # indexing and gather of captured tensors: IndexedSlices gradients inside the body
    _, h = tg.while_loop(lambda i, h: i < 3,
                         lambda i, h: (i + 1, h * x[1] + tg.gather(m, tg.constant(np.array([0, 0, 2])))),
                         [tg.constant(0), x])
    return tg.sum(h * h)


def sparse_unrolled(x, m):
    h = x
    for _ in range(3):
        h = h * x[1] + tg.gather(m, tg.constant(np.array([0, 0, 2])))
    return tg.sum(h * h)


def loop_cond_loop(x):
    # a loop inside a cond inside a loop
    def outer(i, h):
        def inner():
            _, h2 = tg.while_loop(lambda j, h: j < 2, lambda j, h: (j + 1, tg.sin(h) * x),
                                  [tg.constant(0), h])
            return h2
        return i + 1, tg.cond(h > 0.0, inner, lambda: h * x)
    _, h = tg.while_loop(lambda i, h: i < 3, outer, [tg.constant(0), x])
    return h


def loop_cond_loop_unrolled(x):
    h = x
    for _ in range(3):
        if float(h.numpy()) > 0:
            for _ in range(2):
                h = tg.sin(h) * x
        else:
            h = h * x
    return h


def stop_gradient_body(x):
    _, h = tg.while_loop(lambda i, h: i < 3,
                         lambda i, h: (i + 1, tg.stop_gradient(h) * x + tg.sin(h)),
                         [tg.constant(0), x])
    return h


def stop_gradient_unrolled(x):
    h = x
    for _ in range(3):
        h = tg.stop_gradient(h) * x + tg.sin(h)
    return h


def python_number_loop_vars(x):
    # loop_vars given as Python numbers (an int counter, a float)
    _, h = tg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, h * x + 1.0), [0, 0.5])
    return h


def python_number_unrolled(x):
    h = tg.constant(0.5)
    for _ in range(3):
        h = h * x + 1.0
    return h


def chained_loops(x):
    # the second loop starts from, and reads, the first loop's result
    _, a = tg.while_loop(lambda i, h: i < 2, lambda i, h: (i + 1, tg.sin(h) + x),
                         [tg.constant(0), x])
    _, b = tg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, h * a),
                         [tg.constant(0), a * x])
    return b


def chained_unrolled(x):
    a = x
    for _ in range(2):
        a = tg.sin(a) + x
    b = a * x
    for _ in range(3):
        b = b * a
    return b


CASES = [
    LoopCase("captures", captures_loop, captures_unrolled,
             (np.array(0.7), np.array([0.3, -0.5, 0.9]))),
    LoopCase("nested", nested_loop, nested_unrolled, (np.array(0.6),)),
    LoopCase("cond_in_loop", cond_in_loop, cond_in_loop_unrolled, (np.array(0.8),)),
    LoopCase("loop_in_cond_true", loop_in_cond, loop_in_cond_unrolled,
             (np.array(0.7), np.array(-0.4))),
    LoopCase("loop_in_cond_false", loop_in_cond, loop_in_cond_unrolled,
             (np.array(-0.7), np.array(1.3))),
    LoopCase("data_dependent", data_dependent, data_dependent_unrolled, (np.array(1.7),)),
    LoopCase("max_iters_int", max_iters_int, max_iters_unrolled, (np.array(0.9),)),
    LoopCase("max_iters_tensor", max_iters_tensor, max_iters_unrolled, (np.array(0.9),)),
    LoopCase("max_iters_before_cond", max_iters_before_cond, max_iters_before_cond_unrolled,
             (np.array(1.3),)),
    LoopCase("structured", structured_loop, structured_unrolled,
             (np.array(0.6), np.array(1.2))),
    LoopCase("zero_iterations", zero_iterations, zero_iterations_unrolled, (np.array(0.4),)),
    LoopCase("matrix", matrix_loop, matrix_unrolled,
             (np.array([[0.3, -0.2, 0.5], [1.0, 0.1, -0.7]]), W_CAPTURED)),
    LoopCase("multiple_targets", multiple_targets, multiple_targets_unrolled,
             (np.array(0.5), np.array([0.9, -1.1]))),
    LoopCase("float_counter", float_counter, float_counter_unrolled, (np.array(0.8),)),
    LoopCase("sparse_captures", sparse_captures, sparse_unrolled,
             (np.array([0.5, 0.7, -0.2]), np.array([1.0, 2.0, 3.0]))),
    LoopCase("loop_cond_loop_pos", loop_cond_loop, loop_cond_loop_unrolled, (np.array(0.8),)),
    LoopCase("loop_cond_loop_neg", loop_cond_loop, loop_cond_loop_unrolled, (np.array(-0.8),)),
    LoopCase("chained_loops", chained_loops, chained_unrolled, (np.array(0.8),)),
    LoopCase("python_number_loop_vars", python_number_loop_vars, python_number_unrolled,
             (np.array(0.7),)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES, ids=repr)
def test_loop_matches_unrolled_and_finite_differences(case, mode):
    values, grads = VALUE_AND_GRAD[mode](case.loop, case.inputs)
    ref_values, ref_grads = eager_value_and_grad(case.unrolled, case.inputs)
    assert_close_list(values, ref_values, what="values")
    assert_close_list(grads, ref_grads, what="gradients vs unrolled")
    numeric = finite_differences(case.unrolled, case.inputs)
    assert_close_list(grads, numeric, rtol=1e-5, atol=1e-6, what="gradients vs finite diff")


def test_data_dependent_count_changes_with_the_input():
    # h * x + 0.3 reaches 5 sooner for a larger x: both counts are right
    for x in (1.7, 2.5):
        g = tg.Graph()
        with g.as_default():
            xp = tg.placeholder(tg.float64, (), name="x")
            i, h = tg.while_loop(lambda i, h: h < 5.0, lambda i, h: (i + 1, h * xp + 0.3),
                                 [tg.constant(0), xp])
            (dx,) = tg.gradients(h, xp)
        n, hv, dxv = run(g, [i, h, dx], {xp: x})
        ref_n, ref_h = 0, x
        while ref_h < 5.0:
            ref_h, ref_n = ref_h * x + 0.3, ref_n + 1
        assert int(n) == ref_n
        np.testing.assert_allclose(hv, ref_h)
        _, (ref_dx,) = eager_value_and_grad(data_dependent_unrolled, (np.array(x),))
        np.testing.assert_allclose(dxv, ref_dx)


def test_tensor_maximum_iterations_fed_in_a_graph():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        n = tg.placeholder(tg.int64, (), name="n")
        i, h = tg.while_loop(lambda i, h: h < 1e9, lambda i, h: (i + 1, h * x),
                             [tg.constant(0), x], maximum_iterations=n)
        (dx,) = tg.gradients(h, x)
    for steps in (0, 1, 4):
        iv, hv, dxv = run(g, [i, h, dx], {x: 1.5, n: steps})
        assert int(iv) == steps
        np.testing.assert_allclose(hv, 1.5 ** (steps + 1))
        np.testing.assert_allclose(dxv, (steps + 1) * 1.5 ** steps)


def test_float32_and_empty_loop_variables_in_a_graph():
    for dtype, value in ((tg.float32, np.array([0.5, 0.7], np.float32)),
                         (tg.float64, np.zeros(0))):
        g = tg.Graph()
        with g.as_default():
            x = tg.placeholder(dtype, value.shape, name="x")
            _, h = tg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tg.sin(h) * x),
                                 [tg.constant(0), x])
            (dx,) = tg.gradients(tg.sum(h), x)
        hv, dv = run(g, [h, dx], {x: value})
        assert hv.dtype == value.dtype and dv.dtype == value.dtype and dv.shape == value.shape
        _, (ref,) = eager_value_and_grad(lambda x: tg.sum(cubic_sin(x)), (value.astype(np.float64),))
        np.testing.assert_allclose(dv, ref, rtol=1e-5)


def cubic_sin(x):
    h = x
    for _ in range(3):
        h = tg.sin(h) * x
    return h


def test_tensor_read_by_both_cond_and_body():
    # x is captured by the loop condition (h < 4x) and by the body (h * x): h = x^5
    for mode in MODES:
        values, (dx,) = VALUE_AND_GRAD[mode](
            lambda x: tg.while_loop(lambda i, h: h < x * 4.0, lambda i, h: (i + 1, h * x),
                                    [tg.constant(0), x])[1], (np.array(1.5),))
        np.testing.assert_allclose([values[0], dx], [1.5 ** 5, 5 * 1.5 ** 4], err_msg=mode)


def test_variable_in_a_cond_in_an_inner_loop():
    w = tg.Variable(0.9)

    def fn(x):
        def outer(i, h):
            _, h = tg.while_loop(
                lambda j, h: j < 2,
                lambda j, h: (j + 1, tg.cond(h > 0.5, lambda: h * w, lambda: h + w * x)),
                [tg.constant(0), h])
            return i + 1, h
        return tg.while_loop(lambda i, h: i < 2, outer, [tg.constant(0), x])[1]

    def unrolled(x):
        h = x
        for _ in range(4):
            h = h * w if float(h.numpy()) > 0.5 else h + w * x
        return h
    for x_val in (0.7, 0.3):
        xt = tg.constant(x_val)
        with tg.GradientTape() as tape:
            tape.watch(xt)
            y = unrolled(xt)
        ref = [y.numpy()] + [gr.numpy() for gr in tape.gradient(y, [xt, w])]
        with tg.GradientTape() as tape:
            tape.watch(xt)
            y = fn(xt)
        np.testing.assert_allclose([y.numpy()] + [gr.numpy() for gr in tape.gradient(y, [xt, w])],
                                   ref)
        g = tg.Graph()
        with g.as_default():
            xp = tg.placeholder(tg.float64, (), name="x")
            y = fn(xp)
            grads = tg.gradients(y, [xp, w])
        np.testing.assert_allclose(run(g, [y] + grads, {xp: x_val}), ref)


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_body_may_return_a_dict_with_its_keys_in_another_order(mode):
    # {'h': ..., 'i': ...} is the same structure as {'i': ..., 'h': ...}
    def fn(x):
        out = tg.while_loop(lambda s: s["i"] < 2,
                            lambda s: {"h": s["h"] * x, "i": s["i"] + 1},
                            {"i": tg.constant(0), "h": x})
        return out["h"]
    values, (dx,) = VALUE_AND_GRAD[mode](fn, (np.array(1.5),))
    np.testing.assert_allclose([values[0], dx], [1.5 ** 3, 3 * 1.5 ** 2])


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_body_may_return_a_python_number_for_a_float32_loop_variable(mode):
    # eagerly the number takes the loop variable's dtype; a graph must agree
    def fn(x):
        return tg.while_loop(lambda i, h: i < 2, lambda i, h: (i + 1, 0.5), [tg.constant(0), x])
    if mode == "eager":
        _, h = fn(tg.constant(np.float32(1.0)))
        assert h.dtype == tg.float32
        np.testing.assert_allclose(h.numpy(), 0.5)
        return
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, (), name="x")
        _, h = fn(x)
    assert h.dtype == tg.float32
    np.testing.assert_allclose(run(g, h, {x: 1.0}), 0.5)


def test_cond_whose_branches_return_none():
    assert tg.cond(tg.constant(True), lambda: None, lambda: None) is None
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        assert tg.cond(x > 0.0, lambda: None, lambda: None) is None


@pytest.mark.parametrize("n", [0, 2])
def test_variable_as_a_loop_variable(n):
    # the loop starts from the Variable's value: its result is a tensor, not the Variable
    # itself (assigning the Variable later must not change it), in graphs and eagerly
    w = tg.Variable(1.5)
    with tg.GradientTape() as tape:
        _, h = tg.while_loop(lambda i, h: i < n, lambda i, h: (i + 1, h * w),
                             [tg.constant(0), w])
    dw = tape.gradient(h, w)
    g = tg.Graph()
    with g.as_default():
        _, hg = tg.while_loop(lambda i, h: i < n, lambda i, h: (i + 1, h * w),
                              [tg.constant(0), w])
        (dwg,) = tg.gradients(hg, w)
    np.testing.assert_allclose(run(g, [hg, dwg]), [1.5 ** (n + 1), (n + 1) * 1.5 ** n])
    assert dw is not None
    np.testing.assert_allclose([h.numpy(), dw.numpy()], [1.5 ** (n + 1), (n + 1) * 1.5 ** n])
    w.assign(4.0)
    assert not isinstance(h, tg.Variable)
    np.testing.assert_allclose(h.numpy(), 1.5 ** (n + 1))


# -- captured Variables --------------------------------------------------------------------
def variable_loop(x, w):
    _, h = tg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tg.tanh(h * w) + x),
                         [tg.constant(0), x])
    return h


def test_variable_captured_by_the_body_gets_the_sum_over_iterations():
    x_val, w_val = 0.4, 1.3

    def unrolled(x, w):
        h = x
        for _ in range(3):
            h = tg.tanh(h * w) + x
        return h
    _, (ref_dx, ref_dw) = eager_value_and_grad(unrolled, (np.array(x_val), np.array(w_val)))
    (num_dx, num_dw) = finite_differences(unrolled, (np.array(x_val), np.array(w_val)))
    np.testing.assert_allclose(ref_dw, num_dw, rtol=1e-6)

    # eager
    w = tg.Variable(w_val)
    x = tg.constant(x_val)
    with tg.GradientTape() as tape:
        tape.watch(x)
        h = variable_loop(x, w)
    dx, dw = tape.gradient(h, [x, w])
    np.testing.assert_allclose([dx.numpy(), dw.numpy()], [ref_dx, ref_dw])

    # graph
    g = tg.Graph()
    with g.as_default():
        xp = tg.placeholder(tg.float64, (), name="x")
        h = variable_loop(xp, w)
        grads = tg.gradients(h, [xp, w])
    np.testing.assert_allclose(run(g, grads, {xp: x_val}), [ref_dx, ref_dw])
    # the Variable is read when the graph runs
    w.assign(w_val + 0.5)
    _, (dx2, dw2) = eager_value_and_grad(unrolled, (np.array(x_val), np.array(w_val + 0.5)))
    np.testing.assert_allclose(run(g, grads, {xp: x_val}), [dx2, dw2])
    w.assign(w_val)

    # tg.function under a tape
    f = tg.function(variable_loop)
    with tg.GradientTape() as tape:
        tape.watch(x)
        h = f(x, w)
    dx, dw = tape.gradient(h, [x, w])
    np.testing.assert_allclose([dx.numpy(), dw.numpy()], [ref_dx, ref_dw])


# -- loop variables that do not affect the target -------------------------------------------
def unused_var_loop(x, u):
    # u is a loop variable (updated from x) that the target never reads
    _, h, u = tg.while_loop(lambda i, h, u: i < 3,
                            lambda i, h, u: (i + 1, h * x, u + h),
                            [tg.constant(0), x, u])
    return h


@pytest.mark.parametrize("mode", MODES)
def test_loop_var_not_affecting_target_gets_none(mode):
    values, (dx, du) = VALUE_AND_GRAD[mode](unused_var_loop, (np.array(1.5), np.array(2.0)))
    np.testing.assert_allclose(values[0], 1.5 ** 4)
    np.testing.assert_allclose(dx, 4 * 1.5 ** 3)
    assert_unconnected(du, mode)


@pytest.mark.parametrize("mode", MODES)
def test_loop_var_not_affecting_target_zero_when_asked(mode):
    _, (dx, du) = VALUE_AND_GRAD[mode](unused_var_loop, (np.array(1.5), np.array(2.0)),
                                       unconnected="zero")
    np.testing.assert_allclose(dx, 4 * 1.5 ** 3)
    assert du is not None
    np.testing.assert_array_equal(du, 0.0)


@pytest.mark.parametrize("mode", MODES)
def test_target_not_depending_on_the_loop_at_all(mode):
    # y reads only the final value of u, which the body never changes from input u
    def fn(x, u):
        _, h, u2 = tg.while_loop(lambda i, h, u: i < 2, lambda i, h, u: (i + 1, h * x, u),
                                 [tg.constant(0), x, u])
        return u2 * 2.0
    _, (dx, du) = VALUE_AND_GRAD[mode](fn, (np.array(1.5), np.array([1.0, -1.0])))
    assert_unconnected(dx, mode)
    np.testing.assert_allclose(du, [2.0, 2.0])


@pytest.mark.parametrize("mode", MODES)
def test_stop_gradient_inside_the_body_matches_unrolled(mode):
    # (finite differences do not apply: stop_gradient changes the derivative)
    values, grads = VALUE_AND_GRAD[mode](stop_gradient_body, (np.array(1.2),))
    ref_values, ref_grads = eager_value_and_grad(stop_gradient_unrolled, (np.array(1.2),))
    assert_close_list(values, ref_values)
    assert_close_list(grads, ref_grads)


def assert_unconnected(grad, mode):
    """No path to the target: None in every mode, through a tg.function too (its
    traced gradient has no output for an unconnected input)."""
    assert grad is None, f"expected None ({mode}), got {grad!r}"


@pytest.mark.parametrize("mode", MODES)
def test_capture_read_under_stop_gradient_gets_none(mode):
    # c reaches the target only through stop_gradient: unrolled, its gradient is None
    def fn(x, c):
        _, h = tg.while_loop(lambda i, h: i < 3,
                             lambda i, h: (i + 1, tg.stop_gradient(c) * h + x),
                             [tg.constant(0), x])
        return h
    _, (dx, dc) = VALUE_AND_GRAD[mode](fn, (np.array(1.5), np.array(0.5)))
    np.testing.assert_allclose(dx, 1 + 0.5 + 0.25 + 0.125)
    assert_unconnected(dc, mode)


@pytest.mark.parametrize("mode", MODES)
def test_tensor_read_only_by_the_loop_condition_gets_none(mode):
    # lim decides the iteration count but carries no gradient
    def fn(x, lim):
        _, h = tg.while_loop(lambda i, h: h < lim, lambda i, h: (i + 1, h * x),
                             [tg.constant(0), x])
        return h
    values, (dx, dlim) = VALUE_AND_GRAD[mode](fn, (np.array(1.5), np.array(5.0)))
    np.testing.assert_allclose([values[0], dx], [1.5 ** 4, 4 * 1.5 ** 3])
    assert_unconnected(dlim, mode)


@pytest.mark.parametrize("form", ["bare", "list", "tuple"])
def test_single_loop_variable_forms(form):
    def fn(x):
        if form == "bare":
            return tg.while_loop(lambda h: h < 10.0, lambda h: h * x, x)
        if form == "list":
            (h,) = tg.while_loop(lambda h: h < 10.0, lambda h: h * x, [x])
            return h
        (h,) = tg.while_loop(lambda h: h < 10.0, lambda h: (h * x,), (x,))
        return h
    for mode in MODES:
        values, (dx,) = VALUE_AND_GRAD[mode](fn, (np.array(1.5),))
        np.testing.assert_allclose([values[0], dx], [1.5 ** 6, 6 * 1.5 ** 5], err_msg=mode)


def test_eager_loop_runs_python_and_graph_loop_traces_once():
    calls = {"cond": 0, "body": 0}

    def cond(i, h):
        calls["cond"] += 1
        return i < 4

    def body(i, h):
        calls["body"] += 1
        return i + 1, h * 2.0
    tg.while_loop(cond, body, [tg.constant(0), tg.constant(1.0)])
    assert calls == {"cond": 5, "body": 4}
    calls.update(cond=0, body=0)
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        _, h = tg.while_loop(cond, body, [tg.constant(0), x])
        tg.gradients(h, x)
    assert calls == {"cond": 1, "body": 1}
    np.testing.assert_allclose(run(g, h, {x: 1.0}), 16.0)
    assert calls == {"cond": 1, "body": 1}


def test_session_reruns_after_gradients_are_added_to_a_graph_it_already_ran():
    # the forward While gains saved outputs after it first ran: cached plans must not go stale
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        h = nested_loop(x)
    sess = tg.Session(g)
    v0 = sess.run(h, {x: 0.6})
    with g.as_default():
        (dx,) = tg.gradients(h, x)
    v1, d1 = sess.run([h, dx], {x: 0.6})
    with g.as_default():
        (d2x,) = tg.gradients(dx, x)
    v2, d1b, d2 = sess.run([h, dx, d2x], {x: 0.6})
    r1, r2 = eager_second_derivative(nested_unrolled, np.array(0.6))
    np.testing.assert_allclose([v0, v1, v2], [nested_unrolled(tg.constant(0.6)).numpy()] * 3)
    np.testing.assert_allclose([d1, d1b, d2], [r1, r1, r2])


def test_jacobian_and_forward_mode_through_a_loop():
    def f(v):
        _, h = tg.while_loop(lambda i, h: i < 2,
                             lambda i, h: (i + 1, tg.sin(h) * v[::-1]),
                             [tg.constant(0), v])
        return h

    def f_unrolled(v):
        h = v
        for _ in range(2):
            h = tg.sin(h) * v[::-1]
        return h
    v = np.array([0.3, 0.5, -0.4])
    ref = tg.jacrev(f_unrolled)(tg.constant(v)).numpy()
    np.testing.assert_allclose(tg.jacrev(f)(tg.constant(v)).numpy(), ref)
    np.testing.assert_allclose(tg.jacfwd(f)(tg.constant(v)).numpy(), ref)
    t = np.array([1.0, -1.0, 2.0])
    for fn in (f, tg.function(f)):
        out, tangent = tg.jvp(fn, [tg.constant(v)], [tg.constant(t)])
        np.testing.assert_allclose(out.numpy(), f_unrolled(tg.constant(v)).numpy())
        np.testing.assert_allclose(tangent.numpy(), ref @ t)


# -- property tests: random small loop bodies -------------------------------------------
# Each entry maps (h, x) -> new h; values stay bounded for |h|, |x| <= 1.5.
BODY_OPS = [
    ("sin", lambda h, x: tg.sin(h) + x, lambda h, x: np.sin(h) + x),
    ("tanh_mul", lambda h, x: tg.tanh(h * x), lambda h, x: np.tanh(h * x)),
    ("mul_add", lambda h, x: h * 0.5 + x * 0.3, lambda h, x: h * 0.5 + x * 0.3),
    ("square", lambda h, x: h * h * 0.3 - x, lambda h, x: h * h * 0.3 - x),
    ("cos", lambda h, x: tg.cos(h * x), lambda h, x: np.cos(h * x)),
    ("sigmoid", lambda h, x: tg.sigmoid(h) - x * h, lambda h, x: 1 / (1 + np.exp(-h)) - x * h),
    ("exp", lambda h, x: tg.exp(h * 0.3) * x, lambda h, x: np.exp(h * 0.3) * x),
]

body_programs = st.lists(st.sampled_from(range(len(BODY_OPS))), min_size=1, max_size=3)
safe_vectors = st.lists(st.floats(-1.5, 1.5, allow_nan=False, allow_subnormal=False),
                        min_size=1, max_size=3)


def random_loop(program, n):
    def body(i, h, x):
        for k in program:
            h = BODY_OPS[k][1](h, x)
        return i + 1, h, x

    def fn(h0, x):
        _, h, _ = tg.while_loop(lambda i, h, x: i < n, body, [tg.constant(0), h0, x])
        return tg.sum(h * h)
    return fn


def random_loop_numpy(program, n, h, x):
    for _ in range(n):
        for k in program:
            h = BODY_OPS[k][2](h, x)
    return np.sum(h * h)


def numpy_finite_differences(f, arrays, eps=1e-6):
    grads = []
    for k, a in enumerate(arrays):
        grad = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [v.copy() for v in arrays]
            minus = [v.copy() for v in arrays]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            grad[idx] = (f(*plus) - f(*minus)) / (2 * eps)
        grads.append(grad)
    return grads


@settings(max_examples=15, deadline=None)
@given(program=body_programs, n=st.integers(0, 5), data=st.data(),
       mode=st.sampled_from(MODES))
def test_random_loop_bodies_match_finite_differences(program, n, data, mode):
    h0 = np.array(data.draw(safe_vectors))
    x = np.array(data.draw(st.lists(st.floats(-1.5, 1.5, allow_nan=False, allow_subnormal=False),
                                    min_size=len(h0), max_size=len(h0))))
    values, grads = VALUE_AND_GRAD[mode](random_loop(program, n), (h0, x),
                                         unconnected="zero")
    ref = lambda h, x: random_loop_numpy(program, n, h, x)  # noqa: E731
    np.testing.assert_allclose(values[0], ref(h0, x), rtol=1e-10)
    numeric = numpy_finite_differences(ref, [h0, x])
    # A loop can blow the value up (5e14 for square, square, sigmoid at x = -1): then a
    # central difference of the sum cannot see a small entry's gradient (its change is
    # below one ulp of the sum) and reads 0. Its rounding error is about
    # ulp(f) / (2 eps) = 1.1e-10 |f|, so the tolerance allows that much.
    noise = 1e-9 * abs(float(values[0]))
    assert_close_list(grads, numeric, rtol=1e-5, atol=1e-6 + noise)


@settings(max_examples=10, deadline=None)
@given(first=st.sampled_from(range(len(BODY_OPS))), second=st.sampled_from(range(len(BODY_OPS))),
       n=st.integers(0, 5), split=st.integers(0, 5), data=st.data(),
       mode=st.sampled_from(MODES))
def test_random_cond_in_loop_bodies_match_finite_differences(first, second, n, split, data, mode):
    # iterations before `split` take one op, the rest the other (a cond on the counter)
    h0 = np.array(data.draw(safe_vectors))
    x = np.array(data.draw(st.lists(st.floats(-1.5, 1.5, allow_nan=False, allow_subnormal=False),
                                    min_size=len(h0), max_size=len(h0))))

    def fn(h0, x):
        def body(i, h):
            return i + 1, tg.cond(i < split, lambda: BODY_OPS[first][1](h, x),
                                  lambda: BODY_OPS[second][1](h, x))
        _, h = tg.while_loop(lambda i, h: i < n, body, [tg.constant(0), h0])
        return tg.sum(h * h)

    def ref(h, x):
        for k in range(n):
            h = BODY_OPS[first if k < split else second][2](h, x)
        return np.sum(h * h)
    values, grads = VALUE_AND_GRAD[mode](fn, (h0, x), unconnected="zero")
    np.testing.assert_allclose(values[0], ref(h0, x), rtol=1e-10)
    assert_close_list(grads, numpy_finite_differences(ref, [h0, x]), rtol=1e-5, atol=1e-6)


# -- second derivatives ------------------------------------------------------------------
def cubic_loop(x):
    # h <- h * x + sin(h), three times
    _, h = tg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, h * x + tg.sin(h)),
                         [tg.constant(0), x])
    return h


def cubic_unrolled(x):
    h = x
    for _ in range(3):
        h = h * x + tg.sin(h)
    return h


def eager_second_derivative(fn, x_val):
    x = tg.constant(x_val)
    with tg.GradientTape() as outer:
        outer.watch(x)
        with tg.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
        dy = inner.gradient(y, x)
    return dy.numpy(), numpy_of(outer.gradient(dy, x))


def test_second_derivative_unrolled_reference_matches_finite_differences():
    d1 = lambda v: eager_second_derivative(cubic_unrolled, np.array(v))[0]  # noqa: E731
    _, d2 = eager_second_derivative(cubic_unrolled, np.array(0.7))
    np.testing.assert_allclose(d2, (d1(0.7 + 1e-5) - d1(0.7 - 1e-5)) / 2e-5, rtol=1e-6)


def test_second_derivative_eager_nested_tapes():
    d1, d2 = eager_second_derivative(cubic_loop, np.array(0.7))
    r1, r2 = eager_second_derivative(cubic_unrolled, np.array(0.7))
    np.testing.assert_allclose([d1, d2], [r1, r2])


def test_second_derivative_graph():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        y = cubic_loop(x)
        (dy,) = tg.gradients(y, x)
        (d2y,) = tg.gradients(dy, x)
    d1, d2 = run(g, [dy, d2y], {x: 0.7})
    r1, r2 = eager_second_derivative(cubic_unrolled, np.array(0.7))
    np.testing.assert_allclose([d1, d2], [r1, r2])
    # the second derivative is made of loops too: While nodes, nothing unrolled
    whiles = ops_named(g, "While")
    assert len(whiles) >= 3
    assert [w.params["loop"].direction for w in whiles].count("forward") == 1
    assert not ops_named(g, "sin") and not ops_named(g, "cos")


def test_second_derivative_graph_with_captures_and_vectors():
    def fn(h0, a):
        _, h = tg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tg.tanh(h * a) + h0),
                             [tg.constant(0), h0])
        return tg.sum(h * h)

    def unrolled(h0, a):
        h = h0
        for _ in range(3):
            h = tg.tanh(h * a) + h0
        return tg.sum(h * h)
    h0_val, a_val = np.array([0.3, -0.8]), np.array(1.2)
    g = tg.Graph()
    with g.as_default():
        h0 = tg.placeholder(tg.float64, (2,), name="h0")
        a = tg.placeholder(tg.float64, (), name="a")
        dh0, da = tg.gradients(fn(h0, a), [h0, a])
        second = tg.gradients(tg.sum(dh0) + da, [h0, a])
    got = run(g, second, {h0: h0_val, a: a_val})

    x0, xa = tg.constant(h0_val), tg.constant(a_val)
    with tg.GradientTape() as outer:
        outer.watch([x0, xa])
        with tg.GradientTape() as inner:
            inner.watch([x0, xa])
            y = unrolled(x0, xa)
        r0, ra = inner.gradient(y, [x0, xa])
        z = tg.sum(r0) + ra
    ref = outer.gradient(z, [x0, xa])
    assert_close_list(got, [r.numpy() for r in ref])


def test_second_derivative_through_tg_function_under_nested_tapes():
    f = tg.function(cubic_loop)
    d1, d2 = eager_second_derivative(f, np.array(0.7))
    r1, r2 = eager_second_derivative(cubic_unrolled, np.array(0.7))
    np.testing.assert_allclose([d1, d2], [r1, r2])


def test_second_derivative_of_nested_loops_in_a_graph():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        (dy,) = tg.gradients(nested_loop(x), x)
        (d2y,) = tg.gradients(dy, x)
    d1, d2 = run(g, [dy, d2y], {x: 0.6})
    r1, r2 = eager_second_derivative(nested_unrolled, np.array(0.6))
    np.testing.assert_allclose([d1, d2], [r1, r2])


def test_second_derivative_of_cond_in_loop_in_a_graph():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        (dy,) = tg.gradients(cond_in_loop(x), x)
        (d2y,) = tg.gradients(dy, x)
    d1, d2 = run(g, [dy, d2y], {x: 0.8})
    r1, r2 = eager_second_derivative(cond_in_loop_unrolled, np.array(0.8))
    np.testing.assert_allclose([d1, d2], [r1, r2])


def cond_poly(x):
    return tg.cond(x > 0.0, lambda: tg.sin(x) * x * x, lambda: tg.exp(x) * x)


def cond_poly_unrolled(x):
    return tg.sin(x) * x * x if float(x.numpy()) > 0 else tg.exp(x) * x


def loop_in_cond_single(x):
    def true_fn():
        _, h = tg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tg.sin(h) * x),
                             [tg.constant(0), x])
        return h
    return tg.cond(x > 0.0, true_fn, lambda: x * x * x)


def loop_in_cond_single_unrolled(x):
    if float(x.numpy()) <= 0:
        return x * x * x
    h = x
    for _ in range(3):
        h = tg.sin(h) * x
    return h


def graph_second_derivative(fn, x_val):
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, np.shape(x_val), name="x")
        (dy,) = tg.gradients(fn(x), x)
        (d2y,) = tg.gradients(dy, x)
    return run(g, [dy, d2y], {x: x_val})


@pytest.mark.parametrize("fn, unrolled", [(cond_poly, cond_poly_unrolled),
                                          (loop_in_cond_single, loop_in_cond_single_unrolled)],
                         ids=["cond", "loop_in_cond"])
@pytest.mark.parametrize("x_val", [0.7, -0.7])
def test_second_derivative_through_cond(fn, unrolled, x_val):
    ref = eager_second_derivative(unrolled, np.array(x_val))
    np.testing.assert_allclose(graph_second_derivative(fn, x_val), ref)
    np.testing.assert_allclose(eager_second_derivative(fn, np.array(x_val)), ref)
    np.testing.assert_allclose(eager_second_derivative(tg.function(fn), np.array(x_val)), ref)


def test_second_derivative_of_a_tg_function_loop_inside_a_graph():
    f = tg.function(cubic_loop)
    np.testing.assert_allclose(graph_second_derivative(f, 0.7),
                               eager_second_derivative(cubic_unrolled, np.array(0.7)))


def test_hessian_of_a_tg_function_loop():
    def f(v):
        _, h = tg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tg.sin(h) * v),
                             [tg.constant(0), v])
        return tg.sum(h * v[::-1])

    def f_unrolled(v):
        h = v
        for _ in range(3):
            h = tg.sin(h) * v
        return tg.sum(h * v[::-1])
    v = tg.constant(np.array([0.7, 0.3]))
    np.testing.assert_allclose(tg.hessian(tg.function(f))(v).numpy(),
                               tg.hessian(f_unrolled)(v).numpy())


def test_hessian_and_hvp_of_a_loop():
    def f(v):
        _, h = tg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tg.sin(h) * v + h),
                             [tg.constant(0), v])
        return tg.sum(h * h)

    def f_unrolled(v):
        h = v
        for _ in range(3):
            h = tg.sin(h) * v + h
        return tg.sum(h * h)
    v = np.array([0.3, -0.6])
    hess = tg.hessian(f)(tg.constant(v)).numpy()
    ref = tg.hessian(f_unrolled)(tg.constant(v)).numpy()
    np.testing.assert_allclose(hess, ref)
    np.testing.assert_allclose(hess, hess.T, atol=1e-12)
    t = np.array([1.0, -2.0])
    (hv,) = tg.hvp(f, [tg.constant(v)], [tg.constant(t)])
    np.testing.assert_allclose(hv.numpy(), ref @ t)


# -- graph structure -------------------------------------------------------------------------
def build_loop_graph(n, with_gradient=True):
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        i, h = tg.while_loop(lambda i, h: i < n,
                             lambda i, h: (i + 1, h * 0.9999 + tg.sin(h) * x * 1e-4),
                             [tg.constant(0), x])
        grads = tg.gradients(h, x) if with_gradient else None
    return g, x, h, grads


def test_one_while_node_per_loop_not_unrolled():
    g, _, _, _ = build_loop_graph(5, with_gradient=False)
    whiles = ops_named(g, "While")
    assert len(whiles) == 1
    assert not ops_named(g, "sin")   # the body is inside the While node
    body = whiles[0].params["body"]
    assert len([op for op in body.graph.get_operations() if op.op.name == "sin"]) == 1


def test_gradient_of_while_is_a_while_node():
    g, _, _, _ = build_loop_graph(5)
    whiles = ops_named(g, "While")
    assert len(whiles) == 2
    forward, backward = whiles
    assert forward.params["loop"].direction == "forward"
    assert backward.params["loop"].direction == "backward"
    assert not ops_named(g, "sin") and not ops_named(g, "cos")
    # the gradient body differentiates sin once: cos appears once in its graph
    grad_body = backward.params["body"].graph
    assert len([op for op in grad_body.get_operations() if op.op.name == "cos"]) == 1


def test_gradient_loop_variables_are_counter_limit_total_then_cotangents():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        v = tg.placeholder(tg.float64, (3,), name="v")
        _, h, k = tg.while_loop(lambda i, h, k: i < 3,
                                lambda i, h, k: (i + 1, tg.sin(h) * x, k * 2),
                                [tg.constant(0), v, tg.constant(1)])
        tg.gradients(tg.sum(h), [x, v])
    forward, backward = ops_named(g, "While")
    inputs = backward.params["body"].inputs
    # counter, maximum_iterations, total_iters; the cotangent of the float loop variable
    # h (not of the int ones); the running sum of the capture x's gradient
    assert [t.dtype for t in inputs[:3]] == [tg.int64] * 3
    assert all(t.shape == () for t in inputs[:3])
    assert [(t.shape, t.dtype) for t in inputs[3:]] == [((3,), tg.float64), ((), tg.float64)]
    # the total iteration count comes from the forward While
    assert any(t.node is forward for t in backward.inputs)


def test_gradient_of_if_has_branch_gradient_graphs_with_one_output_per_float_input():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        a = tg.placeholder(tg.float64, (2,), name="a")
        n = tg.placeholder(tg.int64, (), name="n")
        y = tg.cond(x > 0.0, lambda: tg.sum(a) * x + tg.cast(n, tg.float64),
                    lambda: tg.sum(a * a))
        tg.gradients(y, [x, a])
    forward, backward = ops_named(g, "If")
    # the If node's inputs: pred, then each branch's captures (x and a, then a)
    float_inputs = [t for t in forward.inputs if t.dtype.kind == "f"]
    for side in ("true_fn", "false_fn"):
        outs = backward.params[side].outputs
        assert [(t.shape, t.dtype) for t in outs] == [(t.shape, t.dtype) for t in float_inputs]
    assert backward.inputs[0] is forward.inputs[0]      # the same predicate


def test_nested_loops_are_one_while_node_each():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        nested_loop(x)
    (outer,) = ops_named(g, "While")
    inner = [op for op in outer.params["body"].graph.get_operations() if op.op.name == "While"]
    assert len(inner) == 1


def test_one_if_node_per_cond_and_gradient_is_an_if_node():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        y = tg.cond(x > 0.0, lambda: tg.sin(x) * x, lambda: tg.cos(x))
        assert len(ops_named(g, "If")) == 1
        assert not ops_named(g, "sin") and not ops_named(g, "cos")
        (dx,) = tg.gradients(y, x)
    assert len(ops_named(g, "If")) == 2
    for v in (0.7, -0.7):
        yv, dv = run(g, [y, dx], {x: v})
        if v > 0:
            np.testing.assert_allclose([yv, dv], [np.sin(v) * v, np.cos(v) * v + np.sin(v)])
        else:
            np.testing.assert_allclose([yv, dv], [np.cos(v), -np.sin(v)])


@pytest.mark.parametrize("with_gradient", [False, True])
def test_node_count_does_not_depend_on_iteration_count(with_gradient):
    small, *_ = build_loop_graph(10, with_gradient)
    large, *_ = build_loop_graph(10_000, with_gradient)
    assert len(small.get_operations()) == len(large.get_operations())
    for a, b in zip(ops_named(small, "While"), ops_named(large, "While")):
        assert len(a.params["body"].graph.get_operations()) == \
            len(b.params["body"].graph.get_operations())


@pytest.fixture
def low_recursion_limit():
    old = sys.getrecursionlimit()
    # low enough that recursing once per iteration (10,000) would fail; pytest's own
    # frames stay well below it
    sys.setrecursionlimit(1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def long_loop_reference(n, x):
    h, dh = x, 1.0
    for _ in range(n):
        h, dh = h * 0.9999 + np.sin(h) * x * 1e-4, \
            dh * (0.9999 + np.cos(h) * x * 1e-4) + np.sin(h) * 1e-4
    return h, dh


def test_ten_thousand_iterations_in_a_graph(low_recursion_limit):
    g, x, h, (dx,) = build_loop_graph(10_000)
    hv, dv = run(g, [h, dx], {x: 0.5})
    ref_h, ref_d = long_loop_reference(10_000, 0.5)
    np.testing.assert_allclose([hv, dv], [ref_h, ref_d], rtol=1e-9)


def test_ten_thousand_iterations_eagerly(low_recursion_limit):
    x = tg.constant(0.5)
    with tg.GradientTape() as tape:
        tape.watch(x)
        _, h = tg.while_loop(lambda i, h: i < 10_000,
                             lambda i, h: (i + 1, h * 0.9999 + tg.sin(h) * x * 1e-4),
                             [tg.constant(0), x])
    dx = tape.gradient(h, x)
    ref_h, ref_d = long_loop_reference(10_000, 0.5)
    np.testing.assert_allclose([h.numpy(), dx.numpy()], [ref_h, ref_d], rtol=1e-9)


# -- what the forward loop keeps for the gradient ------------------------------------------
def loop_states(graph):
    return [op.params["loop"] for op in ops_named(graph, "While")]


def test_forward_only_graph_saves_nothing():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        _, h = tg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tg.sin(h) * x),
                             [tg.constant(0), x])
    (loop,) = loop_states(g)
    assert loop.saved == []
    assert len(ops_named(g, "While")[0].outputs) == 3   # i, h, and the iteration count


def sin_exp_reference(x_val):
    xt = tg.constant(x_val)
    with tg.GradientTape() as tape:
        tape.watch(xt)
        hh = xt
        for _ in range(3):
            hh = tg.sin(hh) * xt + tg.exp(hh * 0.1)
    return hh.numpy(), tape.gradient(hh, xt).numpy()


def test_dead_code_and_integer_work_in_the_body_are_not_saved():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")

        def body(i, h, j):
            s = tg.sin(h)                  # the gradient needs h (for cos h) and s (for d/dx)
            e = tg.exp(h * 0.1)            # the gradient needs e itself
            tg.tanh(h) * 3.0               # dead code
            k = j + tg.cast(tg.sigmoid(h) > 0.5, tg.int64)   # integer work only
            return i + 1, s * x + e, k
        _, h, k = tg.while_loop(lambda i, h, j: i < 3, body,
                                [tg.constant(0), x, tg.constant(0)])
        (dx,) = tg.gradients(h, x)
    forward = ops_named(g, "While")[0]
    loop = forward.params["loop"]
    assert all(t.graph is forward.params["body"].graph for t in loop.saved)
    assert len({t.id for t in loop.saved}) == len(loop.saved)   # none saved twice
    saved = sorted(t.node.op.name for t in loop.saved)
    for name in ("tanh", "sigmoid", "greater", "cast"):
        assert name not in saved, saved
    assert len(saved) <= 3, saved           # at most h, sin(h), exp(0.1 h)
    hv, dv = run(g, [h, dx], {x: 0.6})
    np.testing.assert_allclose([hv, dv], sin_exp_reference(0.6))


def test_intermediates_of_a_loop_variable_the_target_ignores_are_not_saved():
    # `junk` is a float loop variable that the target never reads: its update
    # tanh(h) * 3 is not needed by the gradient of h, so tanh(h) must not be kept.
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")

        def body(i, h, junk):
            return i + 1, tg.sin(h) * x + tg.exp(h * 0.1), junk + tg.tanh(h) * 3.0
        _, h, junk = tg.while_loop(lambda i, h, j: i < 3, body,
                                   [tg.constant(0), x, tg.constant(0.0)])
        (dx,) = tg.gradients(h, x)
    hv, dv = run(g, [h, dx], {x: 0.6})
    np.testing.assert_allclose([hv, dv], sin_exp_reference(0.6))
    loop = ops_named(g, "While")[0].params["loop"]
    saved = [t.node.op.name for t in loop.saved]
    assert "tanh" not in saved, loop.saved


def test_saved_stacks_are_reused_for_a_second_gradient():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        _, h = tg.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tg.sin(h) * x),
                             [tg.constant(0), x])
        tg.gradients(h, x)
        (loop,) = [l for l in loop_states(g) if l.direction == "forward"]
        saved_once = list(loop.saved)
        tg.gradients(h * 2.0, x)
    assert [t.id for t in loop.saved] == [t.id for t in saved_once]


# -- LoopIteration events -------------------------------------------------------------------
def loop_events(traces, direction=None):
    return [e for tr in traces for e in tr.events if isinstance(e, events.LoopIteration)
            and (direction is None or e.direction == direction)]


def three_step_body(i, h):
    return i + 1, tg.sin(h) * 1.5


def test_eager_forward_and_backward_loop_iteration_events():
    x = tg.constant(0.4)
    with tg.viz.record() as rec:
        with tg.GradientTape() as tape:
            tape.watch(x)
            _, h = tg.while_loop(lambda i, h: i < 3, three_step_body, [tg.constant(0), x])
        forward_traces = list(rec.traces)
        tape.gradient(h, x)
    fwd = loop_events(forward_traces)
    assert [e.direction for e in fwd] == ["forward"] * 3
    assert [e.iteration for e in fwd] == [0, 1, 2]
    assert len({id(e.node) for e in fwd}) == 1
    np.testing.assert_allclose(float(fwd[0].loop_vars[1].numpy()), 0.4)
    bwd = loop_events(rec.traces[len(forward_traces):], "backward")
    assert [e.iteration for e in bwd] == [2, 1, 0]
    assert all(e.node is fwd[0].node for e in bwd)


def test_graph_forward_and_backward_loop_iteration_events():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        _, h = tg.while_loop(lambda i, h: i < 3, three_step_body, [tg.constant(0), x])
        (dx,) = tg.gradients(h, x)
    forward_node, backward_node = ops_named(g, "While")
    with tg.viz.record() as rec:
        run(g, h, {x: 0.4})
    fwd_traces = [tr for tr in rec.traces if loop_events([tr])]
    assert len(fwd_traces) == 1
    fwd = loop_events(rec.traces)
    assert [(e.direction, e.iteration) for e in fwd] == [("forward", k) for k in range(3)]
    assert all(e.node is forward_node for e in fwd)

    with tg.viz.record() as rec:
        run(g, dx, {x: 0.4})
    per_trace = [loop_events([tr]) for tr in rec.traces if loop_events([tr])]
    assert len(per_trace) == 2       # one trace per loop run: the forward, then the backward
    assert [(e.direction, e.iteration) for e in per_trace[0]] == [("forward", k) for k in range(3)]
    assert [(e.direction, e.iteration) for e in per_trace[1]] == [("backward", k)
                                                                   for k in (2, 1, 0)]
    assert all(e.node is backward_node for e in per_trace[1])


def test_no_events_without_a_recorder_and_zero_iterations_emit_none():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        _, h = tg.while_loop(lambda i, h: i < 0, three_step_body, [tg.constant(0), x])
        (dx,) = tg.gradients(h, x)
    with tg.viz.record() as rec:
        np.testing.assert_allclose(run(g, [h, dx], {x: 0.4}), [0.4, 1.0])
    assert loop_events(rec.traces) == []


def test_eager_nested_loop_events_backward_mirror_forward():
    x = tg.constant(0.6)
    with tg.viz.record() as rec:
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = nested_loop(x)
        n_forward = len(rec.traces)
        tape.gradient(y, x)
    fwd = loop_events(rec.traces[:n_forward])
    bwd = loop_events(rec.traces[n_forward:])
    assert {e.direction for e in fwd} == {"forward"} and {e.direction for e in bwd} == {"backward"}
    loops = {id(e.node): e.node for e in fwd}
    assert len(loops) == 4              # the outer loop and three runs of the inner loop
    assert sorted(len([e for e in fwd if e.node is n]) for n in loops.values()) == [1, 2, 3, 3]
    for node in loops.values():
        forward_its = [e.iteration for e in fwd if e.node is node]
        backward_its = [e.iteration for e in bwd if e.node is node]
        assert backward_its == forward_its[::-1], node
        assert node.iterations == len(forward_its)


def test_loop_events_through_a_tg_function_called_eagerly():
    f = tg.function(lambda x: tg.while_loop(lambda i, h: i < 3, three_step_body,
                                            [tg.constant(0), x])[1])
    x = tg.constant(0.4)
    with tg.viz.record() as rec:
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        n_forward = len(rec.traces)
        dx = tape.gradient(y, x)
    fwd = loop_events(rec.traces[:n_forward])
    assert [(e.direction, e.iteration) for e in fwd] == [("forward", k) for k in range(3)]
    bwd = loop_events(rec.traces[n_forward:], "backward")
    assert [e.iteration for e in bwd] == [2, 1, 0]
    assert all(e.node.op.name == "While" for e in fwd + bwd)
    _, (ref,) = eager_value_and_grad(
        lambda x: tg.while_loop(lambda i, h: i < 3, three_step_body, [tg.constant(0), x])[1],
        (np.array(0.4),))
    np.testing.assert_allclose(dx.numpy(), ref)


def test_graph_loop_events_follow_the_data_dependent_count_of_each_run():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        h = data_dependent(x)
    for xv in (1.7, 2.5):
        with tg.viz.record() as rec:
            run(g, h, {x: xv})
        n, hv = 0, xv
        while hv < 5.0:
            hv, n = hv * xv + 0.3, n + 1
        assert [e.iteration for e in loop_events(rec.traces)] == list(range(n))


def test_nested_loop_events_in_a_graph():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        y = nested_loop(x)
    with tg.viz.record() as rec:
        run(g, y, {x: 0.6})
    per_trace = [loop_events([tr]) for tr in rec.traces if loop_events([tr])]
    # the outer loop (3 iterations) and one inner loop run per outer iteration (1, 2, 3)
    counts = sorted(len(evs) for evs in per_trace)
    assert counts == [1, 2, 3, 3]


# -- errors ------------------------------------------------------------------------------
def in_graph(fn):
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        return fn(x)


def eagerly(fn):
    return fn(tg.constant(0.5))


BUILDERS = {"eager": eagerly, "graph": in_graph}


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_body_returning_a_different_structure(mode):
    with pytest.raises(ValueError, match="structure") as info:
        BUILDERS[mode](lambda x: tg.while_loop(lambda i, h: i < 2, lambda i, h: (i + 1,),
                                               [tg.constant(0), x]))
    assert "loop_vars" in str(info.value)


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_body_returning_a_different_dtype_names_the_variable(mode):
    with pytest.raises(TypeError, match=r"loop_vars\[1\]") as info:
        BUILDERS[mode](lambda x: tg.while_loop(
            lambda i, h: i < 2, lambda i, h: (i + 1, tg.cast(h, tg.float32)),
            [tg.constant(0), x]))
    assert "float32" in str(info.value) and "float64" in str(info.value)


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_body_returning_a_different_shape_names_the_variable(mode):
    with pytest.raises(ValueError, match=r"loop_vars\[1\]") as info:
        BUILDERS[mode](lambda x: tg.while_loop(
            lambda i, h: i < 2, lambda i, h: (i + 1, tg.stack([h, h])),
            [tg.constant(0), x]))
    assert "shape" in str(info.value) and "shape_invariants" in str(info.value)


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_nested_path_named_in_errors(mode):
    def build(x):
        return tg.while_loop(lambda s: s["i"] < 2,
                             lambda s: {"i": s["i"] + 1, "v": (s["v"][0], tg.cast(s["v"][1], tg.int64))},
                             {"i": tg.constant(0), "v": (x, x)})
    with pytest.raises(TypeError, match=r"loop_vars\['v'\]\[1\]"):
        BUILDERS[mode](build)


def growing_loop(x):
    return tg.while_loop(lambda i, v: i < 3,
                         lambda i, v: (i + 1, tg.concat([v, v * x], axis=0)),
                         [tg.constant(0), tg.reshape(x, (1,))],
                         shape_invariants=[(), (None,)])


GROWN = [2.0, 4.0, 4.0, 8.0, 4.0, 8.0, 8.0, 16.0]
GROWN_GRAD = (1 + 2.0) ** 3 + 3 * 2.0 * (1 + 2.0) ** 2    # sum(v) = x (1 + x)^3


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_structure_and_shape_errors_in_dict_loop_vars(mode):
    def build(body):
        def fn(x):
            m = tg.reshape(tg.stack([x] * 6), (2, 3))
            return tg.while_loop(lambda s: s["a"][0, 0] < 100.0, body, {"a": m, "b": m})
        return BUILDERS[mode](fn)
    with pytest.raises(ValueError, match="structure") as info:
        build(lambda s: {"a": s["a"] * 2.0, "c": s["b"]})
    assert "'c'" in str(info.value) and "'b'" in str(info.value)
    with pytest.raises(ValueError, match=r"loop_vars\['b'\]") as info:
        build(lambda s: {"a": s["a"] * 2.0, "b": tg.transpose(s["b"])})
    assert "(2, 3)" in str(info.value) and "(3, 2)" in str(info.value)


def test_shape_invariants_allow_a_growing_loop_variable_in_a_graph():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        i, v = growing_loop(x)
        assert v.shape == (None,)
    np.testing.assert_allclose(run(g, v, {x: 2.0}), GROWN)


def test_shape_invariants_allow_a_growing_loop_variable_eagerly():
    x = tg.constant(2.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        _, v = growing_loop(x)
        y = tg.sum(v)
    np.testing.assert_allclose(v.numpy(), GROWN)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), GROWN_GRAD)


def test_gradient_of_a_shape_changing_graph_loop_is_a_clear_error():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        _, v = growing_loop(x)
        with pytest.raises(NotImplementedError, match="shape") as info:
            tg.gradients(tg.sum(v), x)
    assert "GradientTape" in str(info.value)


def test_shape_invariants_that_do_not_fit_the_initial_value():
    with pytest.raises(ValueError, match=r"loop_vars\[1\]"):
        in_graph(lambda x: tg.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v),
                                         [tg.constant(0), tg.reshape(x, (1,))],
                                         shape_invariants=[(), (2,)]))


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_cond_returning_a_non_bool(mode):
    with pytest.raises(TypeError, match="bool"):
        BUILDERS[mode](lambda x: tg.while_loop(lambda i, h: h, lambda i, h: (i + 1, h),
                                               [tg.constant(0), x]))


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_cond_returning_a_non_scalar(mode):
    with pytest.raises(TypeError, match="scalar"):
        BUILDERS[mode](lambda x: tg.while_loop(
            lambda i, h: tg.stack([h, h]) > 0.0, lambda i, h: (i + 1, h), [tg.constant(0), x]))


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_non_callable_cond_or_body(mode):
    with pytest.raises(TypeError, match="cond and body"):
        BUILDERS[mode](lambda x: tg.while_loop(True, lambda h: h, [x]))
    with pytest.raises(TypeError, match="cond and body"):
        BUILDERS[mode](lambda x: tg.while_loop(lambda h: h < 1.0, 3, [x]))


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_negative_maximum_iterations(mode):
    with pytest.raises(ValueError, match="maximum_iterations"):
        BUILDERS[mode](lambda x: tg.while_loop(lambda h: h < 1.0, lambda h: h * 2.0, [x],
                                               maximum_iterations=-1))


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_non_integer_maximum_iterations(mode):
    with pytest.raises(TypeError, match="maximum_iterations"):
        BUILDERS[mode](lambda x: tg.while_loop(lambda h: h < 1.0, lambda h: h * 2.0, [x],
                                               maximum_iterations=tg.constant(2.5)))


def test_negative_tensor_maximum_iterations_eagerly():
    with pytest.raises(ValueError, match="maximum_iterations"):
        tg.while_loop(lambda h: h < 1.0, lambda h: h * 2.0, [tg.constant(0.5)],
                      maximum_iterations=tg.constant(-2))


def test_empty_loop_vars():
    with pytest.raises(ValueError, match="loop_vars"):
        tg.while_loop(lambda: True, lambda: (), [])


def test_cond_branches_with_different_structures_in_a_graph():
    with pytest.raises(ValueError, match="structure") as info:
        in_graph(lambda x: tg.cond(x > 0.0, lambda: (x, x), lambda: x))
    assert "true_fn" in str(info.value) and "false_fn" in str(info.value)
    with pytest.raises(ValueError, match="structure"):
        in_graph(lambda x: tg.cond(x > 0.0, lambda: {"a": x}, lambda: {"b": x}))


def test_cond_branches_with_different_dtypes_in_a_graph():
    with pytest.raises(TypeError, match="float32|int64") as info:
        in_graph(lambda x: tg.cond(x > 0.0, lambda: (x, tg.cast(x, tg.int64)),
                                   lambda: (x, tg.cast(x, tg.float32))))
    assert "result[1]" in str(info.value)


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_cond_with_a_non_bool_pred(mode):
    with pytest.raises(TypeError, match="pred"):
        BUILDERS[mode](lambda x: tg.cond(x, lambda: x, lambda: -x))


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_cond_with_non_callable_branches(mode):
    with pytest.raises(TypeError, match="true_fn"):
        BUILDERS[mode](lambda x: tg.cond(x > 0.0, x, lambda: -x))


def test_symbolic_tensor_as_python_bool_points_to_control_flow():
    def python_if(x):
        return x * 2.0 if x > 0.0 else -x
    with pytest.raises(TypeError, match=r"tg\.cond or tg\.while_loop"):
        in_graph(python_if)
    with pytest.raises(TypeError, match=r"tg\.cond or tg\.while_loop"):
        tg.function(python_if)(tg.constant(1.0))


def test_python_bool_pred_and_cond_are_accepted():
    np.testing.assert_allclose(eagerly(lambda x: tg.cond(True, lambda: x, lambda: -x)).numpy(), 0.5)
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        y = tg.cond(False, lambda: x, lambda: -x)
    np.testing.assert_allclose(run(g, y, {x: 0.5}), -0.5)


# -- cond gradients ------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("xv", [0.7, -0.7])
def test_cond_with_integer_output_is_filtered(mode, xv):
    # the int output carries no gradient; the float one does
    def fn(x):
        n, y = tg.cond(x > 0.0, lambda: (tg.constant(1), x * x), lambda: (tg.constant(2), tg.sin(x)))
        return y * 2.0
    values, (dx,) = VALUE_AND_GRAD[mode](fn, (np.array(xv),))
    ref = 2 * xv * xv if xv > 0 else 2 * np.sin(xv)
    dref = 4 * xv if xv > 0 else 2 * np.cos(xv)
    np.testing.assert_allclose([values[0], dx], [ref, dref])


@pytest.mark.parametrize("mode", ["graph", "function"])
def test_cond_with_integer_output_used_downstream(mode):
    def fn(x):
        n, y = tg.cond(x > 0.0, lambda: (tg.constant(3), x * x), lambda: (tg.constant(2), x))
        return y * tg.cast(n, tg.float64)
    values, (dx,) = VALUE_AND_GRAD[mode](fn, (np.array(0.5),))
    np.testing.assert_allclose([values[0], dx], [0.75, 3.0])


@pytest.mark.parametrize("xv", [0.7, -0.7])
def test_branch_not_using_an_input_gives_zeros_in_a_graph(xv):
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        a = tg.placeholder(tg.float64, (2,), name="a")
        b = tg.placeholder(tg.float64, (3,), name="b")
        y = tg.cond(x > 0.0, lambda: tg.sum(a * a) * x, lambda: tg.sum(tg.sin(b)))
        da, db, dx = tg.gradients(y, [a, b, x])
        assert da is not None and db is not None and dx is not None
        assert da.shape == (2,) and db.shape == (3,)
    av, bv = np.array([1.0, -2.0]), np.array([0.1, 0.2, 0.3])
    dav, dbv, dxv = run(g, [da, db, dx], {x: xv, a: av, b: bv})
    if xv > 0:
        np.testing.assert_allclose(dav, 2 * av * xv)
        np.testing.assert_array_equal(dbv, np.zeros(3))
        np.testing.assert_allclose(dxv, np.sum(av * av))
    else:
        np.testing.assert_array_equal(dav, np.zeros(2))
        np.testing.assert_allclose(dbv, np.cos(bv))
        np.testing.assert_array_equal(dxv, 0.0)


def test_cond_branches_capturing_different_outer_tensors_eager_and_function():
    def fn(x, a, b):
        return tg.cond(x > 0.0, lambda: a * x, lambda: b * b)
    for xv in (0.5, -0.5):
        inputs = (np.array(xv), np.array(2.0), np.array(3.0))
        for mode in ("eager", "function"):
            _, grads = VALUE_AND_GRAD[mode](fn, inputs, unconnected="zero")
            ref = [2.0, 0.5, 0.0] if xv > 0 else [0.0, 0.0, 6.0]
            assert_close_list(grads, ref, what=f"{mode} x={xv}")


def test_cond_pred_from_integer_comparison():
    def fn(x, k):
        return tg.cond(k > 2, lambda: x * x, lambda: x * 3.0)
    for kv, dref in ((5, 1.4), (1, 3.0)):
        x = tg.constant(0.7)
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = fn(x, tg.constant(kv))
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), dref)
        g = tg.Graph()
        with g.as_default():
            xp = tg.placeholder(tg.float64, (), name="x")
            kp = tg.placeholder(tg.int64, (), name="k")
            (dx,) = tg.gradients(fn(xp, kp), xp)
        np.testing.assert_allclose(run(g, dx, {xp: 0.7, kp: kv}), dref)


def test_eager_cond_records_only_the_branch_that_ran():
    x = tg.constant(0.7)
    calls = []

    def true_fn():
        calls.append("true")
        return x * x

    def false_fn():
        calls.append("false")
        return tg.sin(x)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.cond(x > 0.0, true_fn, false_fn)
    assert calls == ["true"]
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 1.4)


def test_graph_cond_traces_both_branches_once():
    calls = []
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        y = tg.cond(x > 0.0, lambda: calls.append("t") or x * x,
                    lambda: calls.append("f") or -x)
    assert sorted(calls) == ["f", "t"]
    np.testing.assert_allclose(run(g, y, {x: 2.0}), 4.0)
    np.testing.assert_allclose(run(g, y, {x: -2.0}), 2.0)
    assert sorted(calls) == ["f", "t"]


def test_cond_gradient_in_a_graph_with_nested_outputs():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (), name="x")
        out = tg.cond(x > 0.0, lambda: {"a": x * 2.0, "b": (x * x, tg.constant(1))},
                      lambda: {"a": -x, "b": (tg.sin(x), tg.constant(0))})
        y = out["a"] + out["b"][0]
        (dx,) = tg.gradients(y, x)
    np.testing.assert_allclose(run(g, [y, dx], {x: 1.5}), [3.0 + 2.25, 2.0 + 3.0])
    np.testing.assert_allclose(run(g, [y, dx], {x: -1.5}), [1.5 + np.sin(-1.5),
                                                            -1.0 + np.cos(-1.5)])
