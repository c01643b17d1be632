"""Backends: choosing one, and the op table (forward and gradient) on each.

The ``backend`` fixture (tests/conftest.py) runs a test once per backend inside
``tg.backend.using(name)``; where CuPy or a GPU is missing, the cupy run skips
with the reason. ``make test-gpu`` runs this file on a machine with a GPU.

For every entry of tests/op_table.py, on a few inputs drawn by hypothesis:

* the forward values live on the backend (an array of its namespace) and agree
  with numpy's reference computation;
* the reverse-mode vector-Jacobian product (``tape.gradient`` with a random
  cotangent) lives on the backend and agrees with ``v^T J``, ``J`` from central
  finite differences of the numpy reference. The reference never touches
  teachgrad, so the check means the same on every backend.
"""
import dataclasses

import numpy as np
import pytest
import strategies as S
from hypothesis import HealthCheck, given, settings, strategies as st
from op_table import OPS, leaves

import teachgrad as tg
from teachgrad import backend as tg_backend

pytestmark = pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")

# Few examples: test_op_gradients.py covers numpy in depth; this file checks that
# the same code runs, and runs right, on each backend. The backend fixture is
# entered once per test, around all its examples, as intended.
SETTINGS = settings(max_examples=4, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


# -- choosing a backend ---------------------------------------------------------------
def test_using_restores_the_backend_before_it():
    assert tg.get_backend() == "numpy"
    with tg_backend.using("numpy") as name:
        assert name == "numpy" and tg.get_backend() == "numpy"
        assert tg_backend.xp is np
    assert tg.get_backend() == "numpy" and tg_backend.xp is np


def test_using_restores_after_an_error_in_the_block():
    with pytest.raises(ZeroDivisionError):
        with tg_backend.using("numpy"):
            1 / 0
    assert tg.get_backend() == "numpy"


def test_using_an_unknown_backend_raises_before_the_block():
    ran = []
    with pytest.raises(ValueError, match="choose 'numpy' or 'cupy'"):
        with tg_backend.using("tpu"):
            ran.append(True)
    assert not ran and tg.get_backend() == "numpy"


def test_cupy_unavailable_names_what_to_install():
    try:
        with tg_backend.using("cupy"):
            pytest.skip("CuPy and a GPU are available here: nothing to report")
    except RuntimeError as error:
        message = str(error)
        assert "pip install" in message or "GPU" in message, message
    assert tg.get_backend() == "numpy"


def test_backend_fixture_enters_its_backend(backend):
    assert tg.get_backend() == backend
    x = tg.constant([1.0, 2.0])
    assert isinstance(x.value, tg_backend.xp.ndarray)
    assert isinstance(x.numpy(), np.ndarray)          # .numpy() copies to the host
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])


def test_tape_on_backend(backend):
    w = tg.Variable([1.0, -2.0])
    x = tg.constant([3.0, 0.5])
    with tg.GradientTape() as tape:
        y = tg.sum(tg.tanh(w * x))
    g = tape.gradient(y, w)
    assert _on_backend(g.value)
    np.testing.assert_allclose(g.numpy(), (1 - np.tanh([3.0, -1.0]) ** 2) * [3.0, 0.5])


# -- the op table on each backend -----------------------------------------------------
def _on_host(kernel):
    """``kernel`` (an array library's function) taking and giving numpy arrays."""
    def on_host(*arrays, **params):
        xp = tg_backend.xp
        return tg_backend.to_numpy(kernel(*(xp.asarray(a) for a in arrays), **params))
    return on_host


def _numpy_vjp(spec, case, cots):
    """``v^T J`` for each input, ``J`` by central differences of ``spec.ref``."""
    arrays = [np.array(a, dtype=np.float64) for a in case.arrays]
    v = np.concatenate([c.ravel() for c in cots]) if cots else np.zeros(0)

    def flat(args):
        out = spec.ref(*args, **case.params)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if not outs:
            return np.zeros(0)
        return np.concatenate([np.asarray(o, dtype=np.float64).ravel() for o in outs])

    result = []
    for i, base in enumerate(arrays):
        g = np.zeros(base.size)
        for j in range(base.size):
            moved = [a.copy() for a in arrays]
            moved[i].flat[j] += spec.eps
            up = flat(moved)
            moved[i].flat[j] -= 2 * spec.eps
            down = flat(moved)
            g[j] = v @ ((up - down) / (2 * spec.eps))
        result.append(g.reshape(base.shape))
    return result


def _on_backend(value):
    """Is ``value`` an array of the backend in use? (numpy also gives 0-d results as
    numpy scalars; CuPy always gives arrays.)"""
    xp = tg_backend.xp
    return isinstance(value, xp.ndarray) or (xp is np and isinstance(value, np.generic))


def _host(g):
    """A gradient (dense or IndexedSlices) as a numpy array, checking it is on the backend."""
    if isinstance(g, tg.IndexedSlices):
        g = g.to_dense()
    assert _on_backend(g.value), \
        f"a gradient is a {type(g.value).__name__}, not an array of the {tg.get_backend()} backend"
    return g.numpy()


@pytest.mark.parametrize("spec", OPS, ids=lambda spec: spec.name)
@SETTINGS
@given(data=st.data())
def test_op_forward_and_gradient_on_backend(backend, spec, data):
    case = data.draw(spec.inputs, label="case")
    xs = [tg.constant(a) for a in case.arrays]
    with tg.GradientTape() as tape:
        tape.watch(xs)
        out = spec.fn(*xs, **case.params)
    outs = leaves(out)

    want = spec.ref(*case.arrays, **case.params)
    want = list(want) if isinstance(want, (list, tuple)) else [want]
    assert len(outs) == len(want)
    same_form = spec.canonical or (lambda array, **params: array)
    for o, w in zip(outs, want):
        assert _on_backend(o.value), \
            f"{spec.name}: output is a {type(o.value).__name__} on the {backend} backend"
        np.testing.assert_allclose(same_form(o.numpy(), **case.params),
                                   same_form(np.asarray(w), **case.params), rtol=1e-10,
                                   atol=1e-10, err_msg=f"{spec.name} forward on {backend}")
    if spec.canonical:   # the gradient follows the backend's own arrangement
        spec = dataclasses.replace(spec, ref=_on_host(getattr(tg_backend.xp, spec.name)))

    cots = [data.draw(S.arrays(tuple(o.shape), S.Domain(-2.0, 2.0)), label="cotangent")
            for o in outs]
    seeds = [tg.constant(c, dtype=o.dtype) for c, o in zip(cots, outs)]
    grads = tape.gradient(out, xs, output_gradients=seeds[0] if isinstance(out, tg.Tensor)
                          else seeds, unconnected_gradients="zero")
    expected = _numpy_vjp(spec, case, cots)
    for i, (g, e) in enumerate(zip(grads, expected)):
        np.testing.assert_allclose(_host(g), e, rtol=spec.rtol, atol=spec.atol,
                                   err_msg=f"{spec.name}: gradient of input {i} on {backend}")
