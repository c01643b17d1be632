"""Property tests for every op that takes complex input, against complex finite differences.

The complex column of the op table (``tests/complex_table.py``) lists every op whose
rules hold for complex numbers. On inputs drawn by hypothesis, the Jacobian in real
coordinates (each complex entry is two, its real and imaginary parts, both perturbed)
from the tape
equals central finite differences, eagerly and in ``tg.function``; forward mode's JVP
equals the same Jacobian times a complex tangent; values agree with numpy's. A coverage
test keeps the column complete: every op declared ``takes_complex`` has an entry here
(or is a structural op, listed with the reason).
"""
import importlib
import pkgutil

import numpy as np
import pytest
from complex_table import COMPLEX_OPS, STRUCTURAL
from hypothesis import HealthCheck, given, settings, strategies as st

import teachgrad as tg
import teachgrad.ops
from teachgrad.autodiff.gradcheck import analytic_jacobian, numeric_jacobian
from teachgrad.ops.core.op import Op

# tg.function retraces for the shapes drawn, and says so
pytestmark = pytest.mark.filterwarnings("ignore:tg.function has traced:UserWarning")

SETTINGS = settings(max_examples=15, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _spec(name):
    fn, ref, inputs, primitive = COMPLEX_OPS[name]
    return fn, ref, inputs


def _check_jacobians(f, arrays, rtol=1e-5, atol=1e-6):
    analytic = analytic_jacobian(f, arrays)
    numeric = numeric_jacobian(f, arrays)
    for a, n in zip(analytic, numeric):
        np.testing.assert_allclose(a, n, rtol=rtol, atol=atol)
    return numeric


@pytest.mark.parametrize("name", sorted(COMPLEX_OPS))
@pytest.mark.parametrize("how", ["eager", "function"])
def test_reverse_mode_matches_complex_finite_differences(name, how):
    fn, ref, inputs = _spec(name)
    f = tg.function(fn) if how == "function" else fn

    @SETTINGS
    @given(inputs)
    def check(arrays):
        with np.errstate(all="ignore"):
            expected = ref(*arrays)
        np.testing.assert_allclose(fn(*[tg.constant(a) for a in arrays]).numpy(), expected,
                                   rtol=1e-12, atol=1e-12)
        _check_jacobians(f, arrays)
    check()


@pytest.mark.parametrize("name", sorted(COMPLEX_OPS))
def test_forward_mode_is_the_jacobian_times_a_complex_tangent(name):
    fn, _, inputs = _spec(name)

    @SETTINGS
    @given(inputs, st.randoms(use_true_random=False))
    def check(arrays, random):
        tangents = [(random.uniform(-1, 1) + (1j * random.uniform(-1, 1) if a.dtype.kind == "c"
                                              else 0)) * np.ones_like(a) for a in arrays]
        primals = [tg.constant(a) for a in arrays]
        with tg.ForwardAccumulator(primals, [tg.constant(t) for t in tangents]) as acc:
            out = fn(*primals)
        jvp = acc.jvp(out, unconnected_gradients="zero")
        numeric = numeric_jacobian(fn, arrays)
        expected = sum(j @ np.ascontiguousarray(t).ravel().view(np.float64)
                       for j, t in zip(numeric, tangents))
        got = np.asarray(jvp.numpy())
        got = got.astype(np.complex128).ravel().view(np.float64) if got.dtype.kind == "c" \
            else got.ravel()
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    check()


def _declared_complex_ops():
    names = set()
    for info in pkgutil.walk_packages(teachgrad.__path__, "teachgrad."):
        if info.name == "teachgrad.__main__":   # the command line: runs when imported
            continue
        if info.name.startswith(("teachgrad.course.", "teachgrad.cli.")):
            continue   # the course tools declare no op, and need nbformat, not in every venv
        for value in vars(importlib.import_module(info.name)).values():
            if isinstance(value, Op) and value.takes_complex:
                names.add(value.name)
    return names


def test_every_op_that_takes_complex_input_has_a_row_in_the_complex_column():
    covered = {primitive or name for name, (_, _, _, primitive) in COMPLEX_OPS.items()}
    missing = _declared_complex_ops() - covered - STRUCTURAL
    assert not missing, f"add these to COMPLEX_OPS (or STRUCTURAL, with a reason): {missing}"
