"""float32 as exact as TensorFlow's at large logits (issue 41, item 9).

At x = 1e4 a float32 holds numbers only to the nearest 2^-10, so a formula that forms
a large intermediate (logsumexp's ``ans`` = 1e4 + log 2) and subtracts it again loses
about 5e-4 before an exp: logsumexp's gradient came out 0.49989 for 0.5. TensorFlow
subtracts the max (under stop_gradient) first, and then nothing large is rounded. Each
row below is checked in float32 and float64, value and gradient, against the exact
answer worked out in float64 from the shifted formulas (or by hand).
"""
import numpy as np
import pytest

import teachgrad as tg

INPUTS = {
    "all 1e4": [1e4, 1e4, 1e4],
    "all -1e4": [-1e4, -1e4, -1e4],
    "mixed": [1e4, -1e4, 1e4 - 1.0],
    "one large": [1e4, 0.0, 0.5],
}
PROBS = np.array([0.5, 0.25, 0.25])   # soft labels, and the yes/no labels of the sigmoid
WEIGHTS = np.array([1.0, -2.0, 0.5])  # a cotangent for the elementwise ones


def _shifted_lse(x):
    m = x.max()
    return m + np.log(np.exp(x - m).sum())


def _softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def _sigmoid(x):
    return np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x))
                    / (1 + np.exp(-np.abs(x))))


# name: (teachgrad function of x, exact value of x, exact gradient of x), all scalars
CASES = {
    "logsumexp": (lambda x: tg.logsumexp(x), _shifted_lse, _softmax),
    "logaddexp": (lambda x: tg.logaddexp(x[0], x[2]),
                  lambda x: _shifted_lse(x[[0, 2]]),
                  lambda x: np.array([_sigmoid(x[0] - x[2]), 0.0, _sigmoid(x[2] - x[0])])),
    "logaddexp2": (lambda x: tg.logaddexp2(x[0], x[2]),
                   lambda x: np.logaddexp2(x[0], x[2]),
                   lambda x: np.array([_sigmoid((x[0] - x[2]) * np.log(2)), 0.0,
                                       _sigmoid((x[2] - x[0]) * np.log(2))])),
    "softmax": (lambda x: tg.sum(tg.softmax(x) * WEIGHTS.astype(x.dtype)),
                lambda x: _softmax(x) @ WEIGHTS,
                lambda x: _softmax(x) * (WEIGHTS - _softmax(x) @ WEIGHTS)),
    "log_softmax": (lambda x: tg.sum(tg.log_softmax(x) * WEIGHTS.astype(x.dtype)),
                    lambda x: (x - _shifted_lse(x)) @ WEIGHTS,
                    lambda x: WEIGHTS - _softmax(x) * WEIGHTS.sum()),
    "softmax_cross_entropy_with_logits": (
        lambda x: tg.nn.softmax_cross_entropy_with_logits(PROBS.astype(x.dtype), x),
        lambda x: PROBS @ (_shifted_lse(x) - x),
        lambda x: _softmax(x) * PROBS.sum() - PROBS),
    "sparse_softmax_cross_entropy_with_logits": (
        lambda x: tg.sparse_softmax_cross_entropy_with_logits(tg.constant(1), x),
        lambda x: _shifted_lse(x) - x[1],
        lambda x: _softmax(x) - np.eye(3)[1]),
    "sigmoid_cross_entropy_with_logits": (
        lambda x: tg.sum(tg.nn.sigmoid_cross_entropy_with_logits(PROBS.astype(x.dtype), x)
                         * WEIGHTS.astype(x.dtype)),
        lambda x: WEIGHTS @ (np.maximum(x, 0) - x * PROBS + np.log1p(np.exp(-np.abs(x)))),
        lambda x: WEIGHTS * (_sigmoid(x) - PROBS)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("inputs", list(INPUTS), ids=list(INPUTS))
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_value_and_gradient_are_exact_at_large_logits(case, inputs, dtype):
    fn, value, gradient = CASES[case]
    exact_x = np.array(INPUTS[inputs], dtype=dtype).astype(np.float64)
    x = tg.constant(INPUTS[inputs], dtype=dtype)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    g = tape.gradient(y, x)
    assert y.dtype == np.dtype(dtype) and g.dtype == np.dtype(dtype)
    # a few float32 roundings of the answer itself, nothing like |x| * eps = 1e-3
    rtol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y.numpy(), value(exact_x), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(g.numpy(), gradient(exact_x), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_logsumexp_jvp_is_exact_at_large_logits(dtype):
    x = tg.constant([1e4, 1e4, -1e4], dtype=dtype)
    _, tangent = tg.jvp(tg.logsumexp, (x,), (tg.constant([1.0, 0.0, 0.0], dtype=dtype),))
    assert float(tangent.numpy()) == 0.5


def test_logsumexp_of_nonfinite_inputs_is_as_before():
    """The shift is 0 where the max is not finite: an +inf entry gets NaN, the rest 0."""
    x = tg.constant([np.inf, 1.0])
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = tg.logsumexp(x)
    g = tape.gradient(y, x).numpy()
    assert np.isinf(y.numpy()) and np.isnan(g[0]) and g[1] == 0.0


def test_global_clipnorm_sums_in_the_widest_dtype():
    """A float32 gradient first and a float64 one of norm 1.4e20 after: in float32 the
    squares overflow to inf and every gradient was scaled to 0; in float64 (the widest)
    the norm is right and the clipped gradients have norm 1."""
    a, b = tg.Variable(np.zeros(1, np.float32)), tg.Variable(np.zeros(2))
    opt = tg.optimizers.SGD(1.0, global_clipnorm=1.0)
    opt.apply_gradients([(tg.constant(np.array([1.0], np.float32)), a),
                         (tg.constant([1e20, 1e20]), b)])
    assert a.dtype == np.float32 and b.dtype == np.float64
    np.testing.assert_allclose(b.numpy(), [-0.5 ** 0.5] * 2, rtol=1e-12)
    np.testing.assert_allclose(a.numpy(), [-1.0 / (2 ** 0.5 * 1e20)], rtol=1e-6)
