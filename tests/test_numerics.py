"""Numerical robustness: extreme inputs and NaNs.

* softmax, log_softmax and logsumexp stay finite (values, gradients, and
  gradients of gradients) at inputs of +-1000, in float64 and float32;
* NaN inputs propagate as NaN through values (no exception, no warning turned
  into one), and smooth ops give NaN gradients exactly where the input is NaN;
* sigmoid at +-1000 is finite, and so is its gradient.
"""
import warnings

import numpy as np
import pytest

import teachgrad as tg

FLOATS = [np.float64, np.float32]
LARGE = [
    [1000.0, -1000.0, 0.0],
    [1000.0, 1000.0, 999.0],
    [-1000.0, -1000.0, -1000.0],
    [[1000.0, -1000.0], [-1000.0, -999.0]],
]


def _softmax(x, axis):
    return tg.softmax(x, axis=axis)


def _log_softmax(x, axis):
    return tg.log_softmax(x, axis=axis)


def _logsumexp(x, axis):
    return tg.logsumexp(x, axis=axis)


STABLE = [_softmax, _log_softmax, _logsumexp]


def _reference(fn, x, axis):
    """The exact answer, from the max-shifted formulas in float64."""
    x = np.asarray(x, dtype=np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    lse = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    if fn is _softmax:
        return np.exp(x - lse)
    if fn is _log_softmax:
        return x - lse
    return np.squeeze(lse, axis=axis)


def _all_finite(array):
    return bool(np.all(np.isfinite(np.asarray(array))))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("values", LARGE, ids=lambda v: str(v))
@pytest.mark.parametrize("fn", STABLE, ids=lambda f: f.__name__.lstrip("_"))
def test_large_inputs_stay_finite(fn, values, dtype):
    x = tg.constant(values, dtype=dtype)
    # Overflow (exp(1000)) or inf - inf along the way is a failure, not just a warning.
    with np.errstate(over="raise", invalid="raise", divide="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        with tg.GradientTape() as outer:
            outer.watch(x)
            with tg.GradientTape() as inner:
                inner.watch(x)
                y = fn(x, -1)
            cot = tg.constant(np.linspace(-1.0, 1.0, y.size).reshape(y.shape), dtype=dtype)
            g = inner.gradient(y, x, output_gradients=cot)
        gg = outer.gradient(g, x)
    assert y.dtype == np.dtype(dtype) and g.dtype == np.dtype(dtype)
    assert _all_finite(y), f"values: {y.numpy()}"
    assert _all_finite(g), f"gradient: {g.numpy()}"
    assert gg is not None and _all_finite(gg), f"second derivative: {gg}"
    np.testing.assert_allclose(y.numpy(), _reference(fn, values, -1), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_large_input_gradients_are_right(dtype):
    # float32 holds 1000 + log 2 only to within 3e-5, hence the looser float32 tolerance
    tol = 1e-6 if dtype == np.float64 else 1e-4
    x = tg.constant([1000.0, 1000.0, -1000.0], dtype=dtype)
    with tg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        lse = tg.logsumexp(x)
        s = tg.softmax(x)
        ls = tg.log_softmax(x)
    np.testing.assert_allclose(lse.numpy(), 1000.0 + np.log(2.0), rtol=1e-6)
    # d logsumexp / dx = softmax(x)
    np.testing.assert_allclose(tape.gradient(lse, x).numpy(), [0.5, 0.5, 0.0], atol=tol)
    # softmax sums to 1 along the axis, so the gradient of its sum is 0
    np.testing.assert_allclose(tape.gradient(s, x).numpy(), [0.0, 0.0, 0.0], atol=tol)
    # d sum(log_softmax) / dx = 1 - n * softmax(x)
    np.testing.assert_allclose(tape.gradient(ls, x).numpy(), [-0.5, -0.5, 1.0], atol=tol)


# -- NaN propagation -----------------------------------------------------------------
NAN_INPUT = np.array([[np.nan, 0.5, 2.0], [1.0, 1.5, 0.25]])
NAN_AT = np.isnan(NAN_INPUT)
ROW_HAS_NAN = np.array([[True] * 3, [False] * 3])

# name, op, where the value must be NaN (the rest finite)
NAN_VALUE_CASES = [
    ("exp", tg.exp, NAN_AT),
    ("log", tg.log, NAN_AT),
    ("log1p", tg.log1p, NAN_AT),
    ("sqrt", tg.sqrt, NAN_AT),
    ("square", tg.square, NAN_AT),
    ("negative", tg.negative, NAN_AT),
    ("abs", tg.abs, NAN_AT),
    ("sin", tg.sin, NAN_AT),
    ("cos", tg.cos, NAN_AT),
    ("tanh", tg.tanh, NAN_AT),
    ("sigmoid", tg.sigmoid, NAN_AT),
    ("relu", tg.relu, NAN_AT),
    ("add", lambda x: x + 1.0, NAN_AT),
    ("multiply", lambda x: x * 2.0, NAN_AT),
    ("divide", lambda x: x / 3.0, NAN_AT),
    ("power", lambda x: tg.power(x, 2.0), NAN_AT),
    ("maximum", lambda x: tg.maximum(x, 1.0), NAN_AT),
    ("minimum", lambda x: tg.minimum(x, 1.0), NAN_AT),
    ("softmax", lambda x: tg.softmax(x, axis=-1), ROW_HAS_NAN),
    ("log_softmax", lambda x: tg.log_softmax(x, axis=-1), ROW_HAS_NAN),
    ("logsumexp", lambda x: tg.logsumexp(x, axis=-1), np.array([True, False])),
    ("sum", lambda x: tg.sum(x, axis=-1), np.array([True, False])),
    ("mean", lambda x: tg.mean(x, axis=-1), np.array([True, False])),
    ("max", lambda x: tg.max(x, axis=-1), np.array([True, False])),
    ("min", lambda x: tg.min(x, axis=-1), np.array([True, False])),
    ("matmul", lambda x: tg.matmul(x, tg.constant(np.ones((3, 2)))),
     np.array([[True, True], [False, False]])),
]


@pytest.mark.parametrize("name, fn, expected_nan", NAN_VALUE_CASES,
                         ids=[c[0] for c in NAN_VALUE_CASES])
def test_nan_propagates_through_values(name, fn, expected_nan):
    x = tg.constant(NAN_INPUT)
    y = fn(x)  # no exception
    values = y.numpy()
    np.testing.assert_array_equal(np.isnan(values), expected_nan, err_msg=name)
    assert np.all(np.isfinite(values[~expected_nan])), name


# Ops whose derivative depends on x: the gradient is NaN exactly where the input is NaN.
NAN_GRADIENT_CASES = [(name, fn) for name, fn, nan_at in NAN_VALUE_CASES
                      if name in {"exp", "log", "log1p", "sqrt", "square", "abs", "sin", "cos",
                                  "tanh", "sigmoid"}]


@pytest.mark.parametrize("name, fn", NAN_GRADIENT_CASES, ids=[c[0] for c in NAN_GRADIENT_CASES])
def test_nan_propagates_through_gradients(name, fn):
    x = tg.constant(NAN_INPUT)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    g = tape.gradient(y, x).numpy()
    np.testing.assert_array_equal(np.isnan(g), NAN_AT, err_msg=name)


@pytest.mark.parametrize("name, fn, expected_nan", NAN_VALUE_CASES,
                         ids=[c[0] for c in NAN_VALUE_CASES])
def test_nan_inputs_do_not_raise_in_backward(name, fn, expected_nan):
    x = tg.constant(NAN_INPUT)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    g = tape.gradient(y, x)
    assert g is not None and g.shape == x.shape
    # Entries in rows or positions untouched by the NaN keep finite gradients.
    assert np.all(np.isfinite(g.numpy()[1])), f"{name}: {g.numpy()}"


# -- sigmoid --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_sigmoid_at_plus_minus_1000_is_finite(dtype):
    x = tg.constant([-1000.0, -100.0, 0.0, 100.0, 1000.0], dtype=dtype)
    with np.errstate(over="raise", invalid="raise", divide="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        with tg.GradientTape() as tape:
            tape.watch(x)
            y = tg.sigmoid(x)
        g = tape.gradient(y, x)
    assert y.dtype == np.dtype(dtype) and g.dtype == np.dtype(dtype)
    assert _all_finite(y) and _all_finite(g)
    np.testing.assert_allclose(y.numpy(), [0.0, 0.0, 0.5, 1.0, 1.0], atol=1e-30 + 1e-7)
    np.testing.assert_allclose(g.numpy(), [0.0, 0.0, 0.25, 0.0, 0.0], atol=1e-7)
