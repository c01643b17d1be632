"""custom_gradient, recompute_grad and grad_pass_through (the seed's examples)."""

import numpy as np
import pytest

import teachgrad as tg


def log1pexp_plain(x):
    return tg.log(1 + tg.exp(x))


@tg.custom_gradient
def log1pexp(x):
    e = tg.exp(x)

    def grad_fn(upstream):
        return upstream * (1 - 1 / (1 + e))
    return tg.log(1 + e), grad_fn


@tg.custom_gradient
def product(x, y):
    def grad_fn(upstream):
        return upstream * y, upstream * x
    return x * y, grad_fn


def _tape_grad(fn, x):
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return tape.gradient(y, x)


def _first_and_second_derivative(fn, value):
    """d fn/dx and d2 fn/dx2 at ``value``, with nested tapes."""
    x = tg.constant(value)
    with tg.GradientTape() as outer:
        outer.watch(x)
        with tg.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
        dy = inner.gradient(y, x)
    return float(dy.numpy()), float(outer.gradient(dy, x).numpy())


def test_log1pexp_plain_is_nan_custom_is_one():
    x = tg.constant(100.0, dtype=tg.float32)
    assert np.isnan(_tape_grad(log1pexp_plain, x).numpy())
    assert _tape_grad(log1pexp, x).numpy() == 1.0


def test_log1pexp_in_a_graph_and_in_forward_mode():
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float32, ())
        (dx,) = tg.gradients(log1pexp(x), x)
    assert tg.Session(g).run(dx, {x: 100.0}) == 1.0
    x = tg.constant(100.0)
    with tg.ForwardAccumulator(x, tg.constant(1.0)) as acc:
        y = log1pexp(x)
    assert acc.jvp(y).numpy() == 1.0


def test_product_with_upstream_gradients():
    x = tg.constant(2.0, dtype=tg.float32)
    y = tg.constant(3.0, dtype=tg.float32)
    with tg.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = product(x, y)
    assert z.numpy() == 6.0
    assert tape.gradient(z, x).numpy() == 3.0 and tape.gradient(z, y).numpy() == 2.0
    assert tape.gradient(z, x, output_gradients=tg.constant(2.0, dtype=tg.float32)).numpy() == 6.0


def test_variables_reach_grad_fn():
    weights = tg.Variable(tg.ones([2]))

    @tg.custom_gradient
    def linear_poly(x):
        poly = weights[1] * x + weights[0]

        def grad_fn(dpoly, variables):
            assert len(variables) == 1 and variables[0] is weights
            dy_dw = dpoly * tg.stack([x ** 1, x ** 0])
            return dpoly * weights[1], [tg.sum(tg.reshape(dy_dw, [2, -1]), axis=1)]
        return poly, grad_fn

    x = tg.constant([1.0, 2.0, 3.0])
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        poly = linear_poly(x)
    np.testing.assert_allclose(poly.numpy(), [2.0, 3.0, 4.0])
    np.testing.assert_allclose(tape.gradient(poly, x).numpy(), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(tape.gradient(poly, weights).numpy(), [6.0, 3.0])


def test_errors():
    w = tg.Variable(2.0, name="w")

    @tg.custom_gradient
    def uses_w(x):
        return x * w, lambda up: up
    with pytest.raises(TypeError, match="'variables'.*w"):
        uses_w(tg.constant(1.0))

    @tg.custom_gradient
    def too_many(x):
        return x * 2, lambda up: (up, up)
    x = tg.constant(1.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = too_many(x)
    with pytest.raises(ValueError, match="expected to return 1 gradients, but returned 2"):
        tape.gradient(y, x)

    @tg.custom_gradient
    def declares_variables(x):
        return x * 2, lambda up, variables=None: up
    with pytest.warns(UserWarning, match="no Variables"):
        declares_variables(tg.constant(1.0))

    @tg.custom_gradient
    def wrong_shape(x):
        return tg.sum(x), lambda up: up
    x = tg.constant([1.0, 2.0])
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = wrong_shape(x)
    with pytest.raises(ValueError, match=r"Original input shape: \(2,\)"):
        tape.gradient(y, x)


def test_none_gradient_counts_as_unconnected():
    @tg.custom_gradient
    def first_only(x, y):
        return x * y, lambda up: (up * y, None)
    x, y = tg.constant(2.0), tg.constant(3.0)
    with tg.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = first_only(x, y)
    assert tape.gradient(z, y) is None
    assert tape.gradient(z, y, unconnected_gradients="zero").numpy() == 0.0


def test_second_order_through_grad_fn_ops():
    @tg.custom_gradient
    def cube(x):
        return x ** 3, lambda up: up * 3 * x ** 2
    assert _first_and_second_derivative(cube, 2.0) == (12.0, 12.0)   # 3 x^2, 6 x


def test_recompute_grad_matches_plain_and_rejects_forward_mode():
    v = tg.Variable(0.7)

    def block(x):
        return tg.tanh(x * v)
    recomputed = tg.recompute_grad(block)
    grads = []
    for fn in (block, recomputed):
        x = tg.constant(0.5)
        with tg.GradientTape() as tape:
            tape.watch(x)
            r = x
            for _ in range(4):
                r = fn(r)
        grads.append([g.numpy() for g in tape.gradient(r, [x, v])])
    np.testing.assert_allclose(grads[0], grads[1])
    with pytest.raises(NotImplementedError, match="recompute_grad"):
        with tg.ForwardAccumulator(v, tg.constant(1.0)):
            recomputed(tg.constant(0.5))


def test_grad_pass_through_seed_example_and_straight_through():
    x = tg.Variable(1.0)
    z = tg.Variable(3.0)
    with tg.GradientTape() as tape:
        y = tg.grad_pass_through(x.assign)(z ** 2)
    assert y.numpy() == 9.0
    dz, dx = tape.gradient(y, [z, x])
    assert dz.numpy() == 6.0
    assert dx is None          # variables used inside f get no gradient
    w = tg.constant([0.2, 1.7])
    with tg.GradientTape() as tape:
        tape.watch(w)
        rounded = tg.grad_pass_through(tg.round)(w)   # a straight-through estimator
    np.testing.assert_allclose(rounded.numpy(), [0.0, 2.0])
    np.testing.assert_allclose(tape.gradient(rounded, w).numpy(), [1.0, 1.0])


def test_grad_fn_that_is_itself_a_custom_gradient_defines_the_second_derivative():
    # The seed's op_with_fused_backprop pattern, for y = x^3.
    @tg.custom_gradient
    def cube(x):
        def first_order(dy):
            @tg.custom_gradient
            def first_order_custom(x_):
                def second_order(ddy):
                    return ddy * 6 * x_      # d/dx (3 x^2)
                return 3 * x_ ** 2, second_order
            return dy * first_order_custom(x)
        return x ** 3, first_order
    assert _first_and_second_derivative(cube, 2.0) == (12.0, 12.0)


def test_custom_gradient_inside_tg_function():
    @tg.function
    def loss_and_grad(x):
        y = log1pexp(x)
        return y, tg.gradients(y, x)[0]
    _, dx = loss_and_grad(tg.constant(100.0, dtype=tg.float32))
    assert dx.numpy() == 1.0

    @tg.function
    def loss(x):
        return log1pexp(x)
    x = tg.constant(100.0, dtype=tg.float32)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = loss(x)
    assert tape.gradient(y, x).numpy() == 1.0


def test_recompute_grad_and_grad_pass_through_in_graphs():
    v = tg.Variable(0.7)

    def block(h):
        return tg.tanh(h * v)
    recomputed = tg.recompute_grad(block)
    g = tg.Graph()
    with g.as_default():
        x = tg.placeholder(tg.float64, (2,))
        plain_grads = tg.gradients(tg.sum(block(block(x))), [x, v])
        recomputed_grads = tg.gradients(tg.sum(recomputed(recomputed(x))), [x, v])
        rounded = tg.grad_pass_through(tg.round)(x * 3)
        (through,) = tg.gradients(tg.sum(rounded), x)
    feed = {x: [0.3, -1.2]}
    a, b = tg.Session(g).run([plain_grads, recomputed_grads], feed)
    for p, q in zip(a, b):
        np.testing.assert_allclose(p, q)
    values, d = tg.Session(g).run([rounded, through], feed)
    np.testing.assert_allclose(values, [1.0, -4.0])
    np.testing.assert_allclose(d, [3.0, 3.0])
