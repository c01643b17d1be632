"""Check a gradient against finite differences.

The analytic Jacobian (from the tape) is compared with central differences,
``(f(x + eps e_j) - f(x - eps e_j)) / (2 eps)``, computed in float64 so that
rounding does not swamp the comparison. On a mismatch the error says which
input, which entry, and both numbers, so a student can find the broken rule.

A complex number counts as two real coordinates, its real and imaginary parts: each
is perturbed in turn, and a complex output gives two rows (seeded with 1 and with
``1j``, TensorFlow's convention: the gradient is ``dL/dx + i dL/dy``).
"""
import numpy as np

from .. import backend, nest, validate
from ..tensor import Tensor, constant
from .tape import GradientTape


class GradcheckError(AssertionError):
    """The analytic gradient and the finite-difference one disagree."""


def _as_tuple(inputs):
    if isinstance(inputs, (list, tuple)):
        return tuple(inputs)
    return (inputs,)


def _flat_output(out):
    """All output tensors of ``f`` as one float64 numpy vector."""
    leaves = nest.flatten(out)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise TypeError(f"gradcheck: f must return tensors, got {type(leaf).__name__}.")
    return np.concatenate([_real_coordinates(leaf.numpy()) for leaf in leaves])


def _real_coordinates(array):
    """``array`` as float64 real coordinates: a complex entry is two, (re, im)."""
    array = np.asarray(array)
    if array.dtype.kind == "c":
        return np.ascontiguousarray(array, dtype=np.complex128).ravel().view(np.float64)
    return np.asarray(array, dtype=np.float64).ravel()


def _in_precision(x):
    """An input as the array differentiated: complex128 when complex, else float64."""
    array = np.asarray(x.numpy() if isinstance(x, Tensor) else x)
    return np.array(array, dtype=np.complex128 if array.dtype.kind == "c" else np.float64)


def _unit(array, j):
    """The j-th real coordinate's unit step of ``array``: (entry, 1 or 1j)."""
    if array.dtype.kind == "c":
        return j // 2, (1.0, 1j)[j % 2]
    return j, 1.0


def numeric_jacobian(f, inputs, eps=1e-6):
    """Central-difference Jacobians, one ``(n_out, n_in)`` array per input (a complex
    entry is two real coordinates, its real and imaginary parts)."""
    arrays = [_in_precision(x) for x in inputs]
    jacobians = []
    for i, base in enumerate(arrays):
        columns = []
        for j in range(base.size * (2 if base.dtype.kind == "c" else 1)):
            values = []
            entry, unit = _unit(base, j)
            for step in (eps, -eps):
                moved = base.copy()
                moved.flat[entry] += step * unit
                args = [constant(moved) if k == i else constant(a) for k, a in enumerate(arrays)]
                values.append(_flat_output(f(*args)))
            columns.append((values[0] - values[1]) / (2 * eps))
        n_out = _flat_output(f(*[constant(a) for a in arrays])).size
        jacobians.append(np.stack(columns, axis=1) if columns else np.zeros((n_out, 0)))
    return jacobians


def analytic_jacobian(f, inputs):
    """Reverse-mode Jacobians, one ``(n_out, n_in)`` array per input (complex entries as
    two real coordinates each, as ``numeric_jacobian``'s)."""
    xs = [constant(_in_precision(x)) for x in inputs]
    with GradientTape(persistent=True) as tape:
        tape.watch(xs)
        out = f(*xs)
    leaves = nest.flatten(out)
    rows = {i: [] for i in range(len(xs))}
    for leaf in leaves:
        for k in range(leaf.size * (2 if leaf.dtype.kind == "c" else 1)):
            entry, unit = _unit(leaf, k)
            seed = np.zeros(leaf.size, dtype=leaf.dtype)
            seed[entry] = unit
            seed = Tensor(backend.xp.asarray(seed.reshape(leaf.shape)))
            others = [Tensor(backend.xp.zeros_like(o.value)) for o in leaves]
            others[[id(o) for o in leaves].index(id(leaf))] = seed
            grads = tape.gradient(leaves, xs, output_gradients=others,
                                  unconnected_gradients="zero")
            for i, g in enumerate(grads):
                rows[i].append(_real_coordinates(np.asarray(g, dtype=xs[i].dtype)))
    return [np.stack(rows[i]) if rows[i] else np.zeros((0, _real_coordinates(x.value).size))
            for i, x in enumerate(xs)]


def _entry_name(x, index, shape):
    """The input entry of real coordinate ``index``: ``(1, 0)``, or ``(1, 0) (imag part)``."""
    part = ""
    if np.asarray(x.numpy() if isinstance(x, Tensor) else x).dtype.kind == "c":
        index, part = index // 2, (" (real part)", " (imag part)")[index % 2]
    entry = np.unravel_index(index, shape) if shape else ()
    return f"{tuple(int(e) for e in entry)}{part}"


def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Compare ``f``'s reverse-mode gradients with central finite differences.

    Args:
      f: takes tensors (as many as ``inputs``) and returns a tensor (or several).
      inputs: a tensor/array, or a list of them; they are evaluated in float64 (complex
        ones in complex128, both parts perturbed).
      eps: the finite-difference step.
      atol, rtol: an entry passes when ``|analytic - numeric| <= atol + rtol * |numeric|``.
      raise_exception: raise ``GradcheckError`` on a mismatch (else return False).

    Returns:
      True when every entry of every Jacobian agrees.
    """
    validate.callable_(f, "f", "tg.gradcheck")
    validate.flags("tg.gradcheck", raise_exception=raise_exception)
    for name, value in (("eps", eps), ("atol", atol), ("rtol", rtol)):
        validate.number(value, name, "tg.gradcheck", minimum=0)
    inputs = tuple(x if isinstance(x, Tensor) else
                   validate.tensor_like(x, "inputs", "tg.gradcheck") for x in _as_tuple(inputs))
    if not inputs:
        validate.fail(ValueError, "tg.gradcheck", "inputs", "at least one value to check at",
                      inputs)
    validate.arity(f, len(inputs), "inputs", "tg.gradcheck")
    analytic = analytic_jacobian(f, inputs)
    numeric = numeric_jacobian(f, inputs, eps)
    for i, (a, n) in enumerate(zip(analytic, numeric)):
        bad = ~(np.abs(a - n) <= atol + rtol * np.abs(n))
        if bad.any():
            out_index, in_index = np.argwhere(bad)[0]
            shape = np.shape(inputs[i].numpy() if isinstance(inputs[i], Tensor) else inputs[i])
            where = _entry_name(inputs[i], in_index, shape)
            message = (
                f"gradcheck failed for input {i} at entry {where} "
                f"(output entry {int(out_index)}): analytic {float(a[out_index, in_index]):.8g}, "
                f"numeric {float(n[out_index, in_index]):.8g}; {int(bad.sum())} of {bad.size} "
                f"Jacobian entries differ (atol={atol}, rtol={rtol}).")
            if raise_exception:
                raise GradcheckError(message)
            return False
    return True
