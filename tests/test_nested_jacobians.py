"""Jacobians of Jacobians, vectorized: every ``*_grad`` op under ``tg.vmap``.

A vectorized Jacobian maps one backward pass over its cotangents; differentiating it
again (a Hessian, a tape around it, a loss holding per-example forces) maps the ops of
the VJP rules, tanh_grad, sigmoid_grad, relu_grad, the pooling and convolution
gradients, with their own batching rules. Translated from TensorFlow's
``GradientTape.batch_jacobian`` LSTM batch Hessian, its nested ``jacobian`` tests and
PyTorch's Lennard-Jones example (``vmap(jacrev(model))`` inside a training loss), each
checked against the loop (``experimental_use_pfor=False``, or a Python loop over the
examples), and checked not to loop over examples itself.
"""
import re
import warnings

import numpy as np
import pytest
from contexts import CONTEXTS, run_in

import teachgrad as tg

B, D, H = 3, 4, 5
RNG = np.random.default_rng(41)
W = RNG.normal(size=(D, 4 * H)) * 0.4
U = RNG.normal(size=(H, 4 * H)) * 0.4
H0 = RNG.normal(size=(B, H)) * 0.5
C0 = RNG.normal(size=(B, H)) * 0.5
X = RNG.normal(size=(B, D))

_NO_RULE = re.compile(r"has no batching rule")


def lstm_cell(x, rows=slice(None)):
    """One LSTM step from a fixed state, each example's own (TensorFlow's batch Hessian
    test cell); ``rows`` picks the examples' states."""
    z = tg.matmul(x, tg.constant(W)) + tg.matmul(tg.constant(H0[rows]), tg.constant(U))
    i, f, g, o = tg.split(z, 4, axis=1)
    c = tg.sigmoid(f) * tg.constant(C0[rows]) + tg.sigmoid(i) * tg.tanh(g)
    return tg.sigmoid(o) * tg.tanh(c)


def conv_net(x, rows=None):
    """A small image model: conv, relu, max and average pooling, softmax."""
    images = tg.reshape(x, (-1, 2, 2, 1))
    y = tg.nn.relu(tg.nn.conv2d(images, tg.constant(np.linspace(-1, 1, 8).reshape(
        2, 2, 1, 2)), 1, "SAME"))
    y = tg.nn.max_pool2d(y, 2, 1, "SAME") + tg.nn.avg_pool2d(y, 2, 1, "SAME")
    return tg.nn.softmax(tg.reshape(y, (-1, 8)))


def batch_hessian(fn, x, use_pfor):
    with tg.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tg.GradientTape(persistent=True) as inner:
            inner.watch(x)
            y = fn(x)
        jacobian = inner.batch_jacobian(y, x, experimental_use_pfor=use_pfor)
    return outer.batch_jacobian(jacobian, x, experimental_use_pfor=use_pfor)


def loop_hessian(fn, x):
    """Each example's Hessian, forward over reverse (jacfwd of jacrev), in a Python loop."""
    rows = []
    for i in range(x.shape[0]):
        one = tg.jacfwd(tg.jacrev(lambda v: fn(tg.reshape(v, (1, -1)), slice(i, i + 1))[0]))
        rows.append(one(tg.constant(x[i])))
    return np.stack([r.numpy() for r in rows])


def no_loops(run):
    """``run()``, failing if an op ran once per example (a missing batching rule)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = run()
    looped = [str(w.message) for w in caught if _NO_RULE.search(str(w.message))]
    assert not looped, looped
    return out


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("fn", [lstm_cell, conv_net], ids=["lstm", "conv"])
def test_batch_jacobian_of_a_batch_jacobian_equals_the_loop(fn, context):
    got = no_loops(lambda: run_in(lambda x: batch_hessian(fn, x, True), context, X))
    looped = run_in(lambda x: batch_hessian(fn, x, False), context, X)
    np.testing.assert_allclose(got, looped, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got, loop_hessian(fn, X), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("context", CONTEXTS)
def test_a_vectorized_jacobian_of_a_jacobian_equals_the_loop(context):
    def nested(x, use_pfor):
        with tg.GradientTape(persistent=True) as outer:
            outer.watch(x)
            with tg.GradientTape(persistent=True) as inner:
                inner.watch(x)
                y = tg.nn.log_softmax(tg.tanh(x) * 2.0) + tg.nn.relu(x) * tg.sigmoid(x)
            jacobian = inner.jacobian(y, x, experimental_use_pfor=use_pfor)
        return outer.jacobian(jacobian, x, experimental_use_pfor=use_pfor)
    x = X[0]
    got = no_loops(lambda: run_in(lambda v: nested(v, True), context, x))
    np.testing.assert_allclose(got, run_in(lambda v: nested(v, False), context, x),
                               rtol=1e-10, atol=1e-12)
    assert got.shape == (D, D, D)


# -- PyTorch's Lennard-Jones example: per-example forces inside a training loss ---------
def lj_energy(r):
    return 4.0 * ((1.0 / r) ** 12 - (1.0 / r) ** 6)


DISTANCES = np.linspace(1.0, 1.6, 6).reshape(6, 1)
ENERGIES = lj_energy(DISTANCES)
FORCES = -(-48.0 / DISTANCES ** 13 + 24.0 / DISTANCES ** 7)


def model(params, r):
    w1, b1, w2 = params
    return tg.sum(tg.matmul(tg.tanh(tg.matmul(r, w1) + b1), w2))


def lj_loss(params, distances, vectorized):
    energies = tg.stack([model(params, distances[i:i + 1]) for i in range(6)]) if not \
        vectorized else tg.vmap(lambda r: model(params, tg.reshape(r, (1, 1))))(distances)
    grad_r = tg.jacrev(lambda r: model(params, tg.reshape(r, (1, 1))))
    if vectorized:
        forces = -tg.vmap(grad_r)(distances)
    else:
        forces = -tg.stack([grad_r(distances[i]) for i in range(6)])
    return (tg.mean((tg.reshape(energies, (6, 1)) - ENERGIES) ** 2)
            + tg.mean((tg.reshape(forces, (6, 1)) - FORCES) ** 2))


@pytest.mark.parametrize("context", ["eager", "function"])
def test_gradient_of_a_loss_holding_vmap_of_jacrev_equals_the_loop(context):
    rng = np.random.default_rng(3)
    params = [tg.constant(rng.normal(size=s) * 0.5) for s in ((1, 8), (8,), (8, 1))]

    def gradients(vectorized):
        def run(*params):
            return tg.grad(lambda ps: lj_loss(ps, tg.constant(DISTANCES), vectorized))(
                list(params))
        call = tg.function(run) if context == "function" else run
        return [g.numpy() for g in call(*params)]
    got = no_loops(lambda: gradients(True))
    for g, w in zip(got, gradients(False)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
