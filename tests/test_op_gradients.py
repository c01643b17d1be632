"""Property tests driven by the op table (tests/op_table.py).

For every entry, on inputs drawn by hypothesis:

1. first order: the reverse-mode vector-Jacobian product (``tape.gradient`` with
   a random cotangent as ``output_gradients``) equals ``v^T J`` with ``J`` from
   central finite differences in float64;
2. second order (elementwise ops, and entries marked ``second_order``): the
   gradient of the gradient through nested tapes equals finite differences of
   the first derivative;
3. the forward values (shape, dtype, entries) agree with numpy;
4. dtypes are preserved: float32 inputs give float32 outputs and float32 gradients
   (which agree with the float64 ones to float32 accuracy).
"""
import importlib
import pkgutil

import numpy as np
import pytest
import strategies as S
from complex_table import COMPLEX_ONLY
from hypothesis import HealthCheck, given, settings, strategies as st
from op_table import OPS, dense, leaves

import teachgrad as tg
import teachgrad.ops
from teachgrad.autodiff.gradcheck import numeric_jacobian
from teachgrad.ops.core.op import Op

# The mean of an empty axis is NaN, which numpy (the op and the reference) announces.
pytestmark = pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")

# Reproducible and modest: the same examples every run, no example database.
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SECOND_ORDER = [spec for spec in OPS if spec.has_second_order]


def _ids(spec):
    return spec.name




def draw_cotangents(data, tensors, dtype=None):
    """A random cotangent (values in [-2, 2]) for each tensor, as tensors."""
    cots = []
    for t in tensors:
        a = data.draw(S.arrays(tuple(t.shape), S.Domain(-2.0, 2.0)), label="cotangent")
        cots.append(tg.constant(a, dtype=dtype or t.dtype))
    return cots


def structured(out, flat):
    """``flat`` in the structure of ``out`` (one tensor, or a list)."""
    return flat[0] if isinstance(out, tg.Tensor) else list(flat)


def flat_numpy(tensors):
    if not tensors:
        return np.zeros(0)
    return np.concatenate([np.asarray(t.numpy(), dtype=np.float64).ravel() for t in tensors])


def reverse_gradients(spec, case, data, dtype=np.float64):
    """Run the op under a tape and pull back a random cotangent.

    Returns (inputs, outputs, cotangents, gradients as numpy arrays).
    """
    xs = [tg.constant(a, dtype=dtype) for a in case.arrays]
    with tg.GradientTape() as tape:
        tape.watch(xs)
        out = spec.fn(*xs, **case.params)
    outs = leaves(out)
    cots = draw_cotangents(data, outs)
    grads = tape.gradient(out, xs, output_gradients=structured(out, cots),
                          unconnected_gradients="zero")
    assert len(grads) == len(xs)
    for x, g in zip(xs, grads):
        assert g is not None
        assert tuple(g.shape) == tuple(x.shape), f"gradient shape {g.shape} != input {x.shape}"
    return xs, outs, cots, [dense(g) for g in grads]


def expected_vjp(f, arrays, cots, eps):
    """``v^T J`` for each input, with ``J`` from central finite differences."""
    v = flat_numpy(cots)
    jacobians = numeric_jacobian(f, arrays, eps=eps)
    return [(v @ J).reshape(np.shape(a)) for J, a in zip(jacobians, arrays)]


# -- 1. first order ----------------------------------------------------------------
@pytest.mark.parametrize("spec", OPS, ids=_ids)
@SETTINGS
@given(data=st.data())
def test_first_order_matches_finite_differences(spec, data):
    case = data.draw(spec.inputs, label="case")
    xs, outs, cots, grads = reverse_gradients(spec, case, data)
    for g in grads:
        assert g.dtype == np.float64

    def f(*ts):
        return spec.fn(*ts, **case.params)

    expected = expected_vjp(f, case.arrays, cots, spec.eps)
    for i, (g, e) in enumerate(zip(grads, expected)):
        np.testing.assert_allclose(g, e, rtol=spec.rtol, atol=spec.atol,
                                   err_msg=f"{spec.name}: gradient of input {i}")


# -- 2. second order ---------------------------------------------------------------
def first_derivative(spec, case, cots):
    """x -> the op's VJP at x for the fixed cotangents ``cots`` (one tensor per input)."""
    def grad_fn(*xs):
        xs = list(xs)
        with tg.GradientTape() as tape:
            tape.watch(xs)
            out = spec.fn(*xs, **case.params)
        grads = tape.gradient(out, xs, output_gradients=structured(out, cots),
                              unconnected_gradients="zero")
        return [g.to_dense() if isinstance(g, tg.IndexedSlices) else g for g in grads]
    return grad_fn


@pytest.mark.parametrize("spec", SECOND_ORDER, ids=_ids)
@SETTINGS
@given(data=st.data())
def test_second_order_matches_finite_differences(spec, data):
    case = data.draw(spec.inputs, label="case")
    xs = [tg.constant(a) for a in case.arrays]
    outs = leaves(spec.fn(*xs, **case.params))
    cots = draw_cotangents(data, outs)              # for the inner (first) gradient
    grad_fn = first_derivative(spec, case, cots)

    with tg.GradientTape() as outer:
        outer.watch(xs)
        with tg.GradientTape() as inner:
            inner.watch(xs)
            out = spec.fn(*xs, **case.params)
        grads = inner.gradient(out, xs, output_gradients=structured(out, cots),
                               unconnected_gradients="zero")
        grads = [g.to_dense() if isinstance(g, tg.IndexedSlices) else g for g in grads]
    w = draw_cotangents(data, grads)                # for the outer (second) gradient
    second = outer.gradient(grads, xs, output_gradients=w, unconnected_gradients="zero")

    expected = expected_vjp(grad_fn, case.arrays, w, eps=1e-5)
    for i, (g, e) in enumerate(zip(second, expected)):
        assert g is not None and tuple(g.shape) == tuple(xs[i].shape)
        np.testing.assert_allclose(dense(g), e, rtol=1e-4, atol=1e-5,
                                   err_msg=f"{spec.name}: second derivative, input {i}")


# -- 3. forward values -------------------------------------------------------------
def _check_forward(spec, case, dtype):
    arrays = [np.asarray(a, dtype=dtype) for a in case.arrays]
    got = leaves(spec.fn(*[tg.constant(a) for a in arrays], **case.params))
    want = spec.ref(*arrays, **case.params)
    want = list(want) if isinstance(want, (list, tuple)) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert isinstance(g, tg.Tensor)
        assert tuple(g.shape) == w.shape, f"{spec.name}: shape {g.shape} != numpy's {w.shape}"
        assert g.dtype == w.dtype, f"{spec.name}: dtype {g.dtype} != numpy's {w.dtype}"
        tol = 1e-10 if dtype == np.float64 else 1e-5
        np.testing.assert_allclose(g.numpy(), w, rtol=tol, atol=tol, err_msg=spec.name)


@pytest.mark.parametrize("spec", OPS, ids=_ids)
@SETTINGS
@given(data=st.data())
def test_forward_matches_numpy(spec, data):
    case = data.draw(spec.inputs, label="case")
    _check_forward(spec, case, np.float64)
    _check_forward(spec, case, np.float32)


# -- 4. dtypes ---------------------------------------------------------------------
@pytest.mark.parametrize("spec", OPS, ids=_ids)
@SETTINGS
@given(data=st.data())
def test_float32_in_float32_gradient(spec, data):
    case = data.draw(spec.inputs, label="case")
    xs, outs, cots, grads = reverse_gradients(spec, case, data, dtype=np.float32)
    for i, g in enumerate(grads):
        assert g.dtype == np.float32, f"{spec.name}: gradient of input {i} is {g.dtype}"

    # The same cotangents in float64 give the same gradients, to float32 accuracy.
    xs64 = [tg.constant(a) for a in case.arrays]
    with tg.GradientTape() as tape:
        tape.watch(xs64)
        out = spec.fn(*xs64, **case.params)
    cots64 = [tg.constant(c.numpy(), dtype=o.dtype) for c, o in zip(cots, leaves(out))]
    grads64 = tape.gradient(out, xs64, output_gradients=structured(out, cots64),
                            unconnected_gradients="zero")
    for i, (g, g64) in enumerate(zip(grads, grads64)):
        np.testing.assert_allclose(g, dense(g64), rtol=2e-3, atol=2e-3,
                                   err_msg=f"{spec.name}: float32 gradient of input {i}")


# -- the table covers every differentiable primitive ---------------------------------
def _differentiable_primitives():
    names = set()
    for info in pkgutil.walk_packages(teachgrad.ops.__path__, "teachgrad.ops."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, Op) and value.differentiable:
                names.add(value.name)
    return names


#: Ops whose VJP rule only refuses, saying why (qr's "complete" mode of a tall matrix and
#: its "raw" mode have no gradient to give; tests/test_linalg_surface.py checks the refusal).
REFUSE_GRADIENTS = {"qr_complete", "qr_raw"}


def test_table_covers_every_differentiable_op():
    covered = {spec.op_name for spec in OPS}
    missing = _differentiable_primitives() - covered - REFUSE_GRADIENTS - COMPLEX_ONLY
    assert not missing, f"ops with no line in tests/op_table.py: {sorted(missing)}"


# -- edge cases the strategies do not draw ---------------------------------------------
def test_getitem_with_an_empty_list_key_matches_numpy():
    # numpy reads an empty list as an empty integer index: x[[]] has shape (0,) + x.shape[1:]
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    t = tg.constant(x)
    with tg.GradientTape() as tape:
        tape.watch(t)
        y = t[[]]
    np.testing.assert_array_equal(y.numpy(), x[[]])
    assert y.shape == (0, 2)
    np.testing.assert_array_equal(dense(tape.gradient(y, t)), np.zeros_like(x))
