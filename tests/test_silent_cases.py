"""Cases that once gave a silently wrong number (issue 41), each against the value
JAX gives, worked out by hand, eagerly and inside ``tg.function``."""
import numpy as np
import pytest

import teachgrad as tg

X = 2.0


def _both(run):
    """``run()`` eagerly and traced by ``tg.function``, as numpy."""
    eager = run()
    traced = tg.function(run)()
    return [tg.nest.pack_sequence_as(r, [np.asarray(t.numpy()) for t in tg.nest.flatten(r)])
            for r in (eager, traced)]


# One tensor filling several slots: each slot is its own source, as in JAX.
# (name, call(x) -> result, expected result)
SLOT_CASES = [
    ("grad argnums=0 of f(x, x)",
     lambda x: tg.grad(lambda a, b: a + 5 * b)(x, x), 1.0),
    ("grad argnums=1 of f(x, x)",
     lambda x: tg.grad(lambda a, b: a + 5 * b, argnums=1)(x, x), 5.0),
    ("grad argnums=(0, 1) of f(x, x)",
     lambda x: tg.grad(lambda a, b: a * b ** 2, argnums=(0, 1))(x, x), (X ** 2, 2 * X * X)),
    ("grad of a tuple holding x twice",
     lambda x: tg.grad(lambda t: t[0] + 5 * t[1])((x, x)), (1.0, 5.0)),
    ("grad of a dict holding x twice",
     lambda x: tg.grad(lambda d: d["a"] * d["b"] ** 3)({"a": x, "b": x}),
     {"a": X ** 3, "b": 3 * X * X ** 2}),
    ("grad, x also in an undifferentiated slot",
     lambda x: tg.grad(lambda a, b: a * b)(x, x), X),
    ("grad, x also a keyword argument",
     lambda x: tg.grad(lambda a, b=None: a * b)(x, b=x), X),
    ("value_and_grad of f(x, x)",
     lambda x: tg.value_and_grad(lambda a, b: a + 5 * b)(x, x), (6 * X, 1.0)),
    ("vjp of f(x, x)",
     lambda x: tg.vjp(lambda a, b: a * b ** 2, x, x)[1](tg.constant(1.0)),
     (X ** 2, 2 * X * X)),
    ("jvp of f(x, x)",
     lambda x: tg.jvp(lambda a, b: a * b ** 2, (x, x),
                      (tg.constant(1.0), tg.constant(0.0)))[1], X ** 2),
    ("jacrev argnums=(0, 1) of f(x, x)",
     lambda x: tg.jacrev(lambda a, b: a * b ** 2, argnums=(0, 1))(x, x),
     (X ** 2, 2 * X * X)),
    ("jacfwd argnums=(0, 1) of f(x, x)",
     lambda x: tg.jacfwd(lambda a, b: a * b ** 2, argnums=(0, 1))(x, x),
     (X ** 2, 2 * X * X)),
    ("hessian of f(x, x) in its first slot",
     lambda x: tg.hessian(lambda a, b: a ** 3 * b)(x, x), 6 * X * X),
    ("hvp of f(x, x)",
     lambda x: tg.hvp(lambda a, b: a ** 2 * b, (x, x),
                      (tg.constant(1.0), tg.constant(0.0))), (2 * X, 2 * X)),
]


@pytest.mark.parametrize("name, call, expected", SLOT_CASES, ids=[c[0] for c in SLOT_CASES])
@pytest.mark.parametrize("kind", ["constant", "variable"])
def test_each_argument_slot_is_its_own_source(name, call, expected, kind):
    def run():
        x = tg.constant(X) if kind == "constant" else variables[0]
        return call(x)
    variables = [tg.Variable(X)]
    for got in _both(run):
        tg.nest.assert_same_structure(got, expected, "result and expected")
        for g, e in zip(tg.nest.flatten(got), tg.nest.flatten(expected)):
            np.testing.assert_allclose(g, e)


# The argument is also captured by f: only its slot is differentiated, as in JAX
# (d(a * x)/da = x, where adding up both uses gave 2x). (name, call(x), expected)
CAPTURED_CASES = [
    ("grad", lambda x: tg.grad(lambda a: a * x)(x), X),
    ("value_and_grad", lambda x: tg.value_and_grad(lambda a: a * x)(x)[1], X),
    ("vjp", lambda x: tg.vjp(lambda a: a * x, x)[1](tg.constant(1.0)), (X,)),
    ("jvp", lambda x: tg.jvp(lambda a: a * x, (x,), (tg.constant(1.0),))[1], X),
    ("jacrev", lambda x: tg.jacrev(lambda a: a * x)(x), X),
    ("jacfwd", lambda x: tg.jacfwd(lambda a: a * x)(x), X),
    ("hessian", lambda x: tg.hessian(lambda a: a * a * x)(x), 2 * X),
    ("hvp", lambda x: tg.hvp(lambda a: a * a * x, (x,), (tg.constant(1.0),)), (2 * X,)),
    ("linearize", lambda x: tg.linearize(lambda a: a * x, x)[1](tg.constant(1.0)), X),
]


@pytest.mark.parametrize("name, call, expected", CAPTURED_CASES,
                         ids=[c[0] for c in CAPTURED_CASES])
def test_a_captured_argument_is_differentiated_in_its_slot_only(name, call, expected):
    for got in _both(lambda: call(tg.constant(X))):
        for g, e in zip(tg.nest.flatten(got), tg.nest.flatten(expected)):
            np.testing.assert_allclose(g, e)


def test_a_tensor_in_one_slot_is_passed_on_as_it_is():
    v = tg.Variable(X)
    seen = []
    tg.grad(lambda a, b: seen.append(a) or a * b)(v, tg.constant(3.0))
    assert seen[0] is v


# Variables under vmap: mapped over or captured, a tape's gradient and an accumulator's
# JVP equal the loop over examples. (name, fn(w, c, x) for one example, in_axes)
W = np.array([[1.0, -2.0], [0.5, 3.0], [2.0, 1.5]])
XS = np.array([[0.5, 1.0], [-1.0, 2.0], [3.0, 0.25]])
VARIABLE_CASES = [
    ("Variable mapped over", lambda w, c, x: tg.sum(w ** 2 * x), (0, None, 0)),
    ("Variable captured", lambda w, c, x: tg.sum(c * tg.sin(x)), (None, None, 0)),
    ("Variables mapped and captured", lambda w, c, x: tg.sum(c * w ** 3 + x * w), (0, None, 0)),
    ("Variable mapped along axis 1", lambda w, c, x: tg.sum(c * w * x), (1, None, 1)),
]


def _variables():
    return tg.Variable(W), tg.Variable(1.5), tg.constant(XS)


def _mapped(fn, axes, w, c, x):
    """``fn`` mapped by ``tg.vmap`` (``c`` always read from the enclosing scope)."""
    return tg.vmap(lambda *a: fn(*[c if k == 1 else v for k, v in enumerate(a)]),
                   in_axes=axes)(w, c, x)


def _looped(fn, axes, w, c, x):
    """The same, one example at a time."""
    def example(v, axis, k):
        return v if axis is None else tg.gather(v, k, axis=axis)
    return tg.stack([fn(example(w, axes[0], k), c, example(x, axes[2], k))
                     for k in range(x.shape[axes[2]])])


@pytest.mark.parametrize("name, fn, axes", VARIABLE_CASES, ids=[c[0] for c in VARIABLE_CASES])
def test_variable_gradients_under_vmap_equal_the_loop(name, fn, axes):
    w, c, x = _variables()
    def gradients(how):
        def run():
            with tg.GradientTape() as tape:
                loss = tg.sum(how(fn, axes, w, c, x) ** 2)
            return tape.gradient(loss, [w, c], unconnected_gradients="zero")
        return run
    expected = [g.numpy() for g in gradients(_looped)()]
    for got in _both(gradients(_mapped)):
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e)


@pytest.mark.parametrize("name, fn, axes", VARIABLE_CASES, ids=[c[0] for c in VARIABLE_CASES])
def test_variable_jvps_under_vmap_equal_the_loop(name, fn, axes):
    w, c, x = _variables()
    tangents = [tg.constant(np.arange(6.0).reshape(3, 2) - 2.0), tg.constant(0.5)]
    def jvp(how):
        def run():
            with tg.ForwardAccumulator([w, c], tangents) as acc:
                out = how(fn, axes, w, c, x)
            return acc.jvp(out)
        return run
    expected = jvp(_looped)().numpy()
    for got in _both(jvp(_mapped)):
        np.testing.assert_allclose(got, expected)
