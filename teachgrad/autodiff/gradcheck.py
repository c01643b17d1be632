"""Check a gradient against finite differences.

The analytic Jacobian (from the tape) is compared with central differences,
``(f(x + eps e_j) - f(x - eps e_j)) / (2 eps)``, computed in float64 so that
rounding does not swamp the comparison. On a mismatch the error says which
input, which entry, and both numbers, so a student can find the broken rule.
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
    return np.concatenate([np.asarray(leaf.numpy(), dtype=np.float64).ravel() for leaf in leaves])


def numeric_jacobian(f, inputs, eps=1e-6):
    """Central-difference Jacobians, one ``(n_out, n_in)`` array per input."""
    arrays = [np.array(x.numpy() if isinstance(x, Tensor) else x, dtype=np.float64)
              for x in inputs]
    jacobians = []
    for i, base in enumerate(arrays):
        columns = []
        for j in range(base.size):
            values = []
            for step in (eps, -eps):
                moved = base.copy()
                moved.flat[j] += step
                args = [constant(moved) if k == i else constant(a) for k, a in enumerate(arrays)]
                values.append(_flat_output(f(*args)))
            columns.append((values[0] - values[1]) / (2 * eps))
        n_out = _flat_output(f(*[constant(a) for a in arrays])).size
        jacobians.append(np.stack(columns, axis=1) if columns else np.zeros((n_out, 0)))
    return jacobians


def analytic_jacobian(f, inputs):
    """Reverse-mode Jacobians, one ``(n_out, n_in)`` array per input."""
    xs = [constant(np.array(x.numpy() if isinstance(x, Tensor) else x, dtype=np.float64))
          for x in inputs]
    with GradientTape(persistent=True) as tape:
        tape.watch(xs)
        out = f(*xs)
    leaves = nest.flatten(out)
    rows = {i: [] for i in range(len(xs))}
    for leaf in leaves:
        for k in range(leaf.size):
            seed = np.zeros(leaf.size)
            seed[k] = 1.0
            seed = Tensor(backend.xp.asarray(seed.reshape(leaf.shape), dtype=leaf.dtype))
            others = [Tensor(backend.xp.zeros_like(o.value)) for o in leaves]
            others[[id(o) for o in leaves].index(id(leaf))] = seed
            grads = tape.gradient(leaves, xs, output_gradients=others,
                                  unconnected_gradients="zero")
            for i, g in enumerate(grads):
                rows[i].append(np.asarray(g, dtype=np.float64).ravel())
    return [np.stack(rows[i]) if rows[i] else np.zeros((0, x.size)) for i, x in enumerate(xs)]


def gradcheck(f, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Compare ``f``'s reverse-mode gradients with central finite differences.

    Args:
      f: takes tensors (as many as ``inputs``) and returns a tensor (or several).
      inputs: a tensor/array, or a list of them; they are evaluated in float64.
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
            entry = np.unravel_index(in_index, shape) if shape else ()
            message = (
                f"gradcheck failed for input {i} at entry {tuple(int(e) for e in entry)} "
                f"(output entry {int(out_index)}): analytic {float(a[out_index, in_index]):.8g}, "
                f"numeric {float(n[out_index, in_index]):.8g}; {int(bad.sum())} of {bad.size} "
                f"Jacobian entries differ (atol={atol}, rtol={rtol}).")
            if raise_exception:
                raise GradcheckError(message)
            return False
    return True
