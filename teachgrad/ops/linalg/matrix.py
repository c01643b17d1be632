"""Inverse, linear solve and determinants of square matrices (``tg.linalg``), batched
over leading axes as numpy's are.

Each adjoint comes from differentiating a defining identity:

* ``A A^{-1} = I`` gives  d(A^{-1}) = -A^{-1} dA A^{-1},  so  ct_A = -A^{-T} ct A^{-T};
* ``A x = b`` gives  dx = A^{-1}(db - dA x),  so  ct_b = A^{-T} ct  and  ct_A = -ct_b x^T;
* Jacobi's formula  d det A = det A  tr(A^{-1} dA),  so  ct_A = ct det(A) A^{-T}
  (and for log|det A|, ct_A = ct A^{-T}).

For complex matrices every transpose above is the conjugate transpose (TensorFlow's
convention, ``teachgrad.dtypes``): each rule is the real one evaluated at $\bar A$.

A singular matrix has no inverse: numpy's ``LinAlgError`` (a ValueError) says so,
in the forward pass or, for ``det``, in the gradient.
"""
import builtins

import numpy as np

from ... import backend, validate
from ..core.apply import innermost, leading_axes_rule
from ..core.declare import (
    defbatch,
    defeffect,
    defjvp,
    defshape,
    defvjp,
    primitive,
    takes_complex,
)
from ..core.grad_util import as_tensor
from ..elementwise.complex_parts import complex, imag
from ..elementwise.conjugate import conj_of
from ..reductions.sums import sum
from ..shape.reshape import expand_dims, move_to_rank, squeeze, swap_last_two, unbroadcast
from .matmul import matmul


def square(a, where, name="a"):
    """``a`` as a Tensor of square matrices (rank >= 2, the last two axes equal)."""
    x = as_tensor(a, name, where)
    if x.shape is not None and (x.ndim < 2 or None not in x.shape[-2:]
                                and x.shape[-1] != x.shape[-2]):
        validate.fail(ValueError, where, name, "square matrices: a tensor of shape "
                      "(..., M, M)", x)
    return x


def float_dtype(dtype):
    """The dtype numpy's linalg gives for input of ``dtype``: floats and complex dtypes
    keep theirs."""
    return dtype if np.dtype(dtype).kind in "fc" else np.dtype(np.float64)


def batch_of(*shapes):
    """The broadcast leading (batch) shape of matrices' batch shapes (None: unknown)."""
    n = builtins.max(len(s) for s in shapes)
    out = []
    for dims in zip(*[(1,) * (n - len(s)) + tuple(s) for s in shapes]):
        known = {d for d in dims if d is not None and d != 1}
        out.append(known.pop() if len(known) == 1 and None not in dims else
                   None if None in dims or len(known) > 1 else 1)
    return tuple(out)


def same_shape_rule(a, **params):
    """The output has the input's shape (inv, cholesky)."""
    return [(a.shape, float_dtype(a.dtype))]


def _ct_matrix(ct):
    """A cotangent of one number per matrix, made to broadcast against the matrices."""
    return expand_dims(expand_dims(ct, -1), -1)


# inv: ct_A = -A^{-T} ct A^{-T}  (ans = A^{-1}).
def _inv_kernel(a):
    with backend.linalg_errors():   # a singular matrix raises LinAlgError, on a GPU too
        return backend.xp.linalg.inv(a)

inv_p = primitive("inv", _inv_kernel)
defeffect(inv_p, "fresh")
takes_complex(inv_p)
def inv(a):
    r"""$A^{-1}$ of each square matrix.  VJP: $\bar A = -A^{-T}\, \bar{\mathrm{out}}\,
    A^{-T}$ (from $d(A^{-1}) = -A^{-1}\, dA\, A^{-1}$)."""
    return innermost.process(inv_p, square(a, "tg.linalg.inv"))
defvjp(inv_p, lambda ct, ans, a: -matmul(matmul(conj_of(ans), ct, transpose_a=True),
                                         conj_of(ans), transpose_b=True))
defjvp(inv_p, lambda a_dot, ans, a: -matmul(matmul(ans, a_dot), ans))
defbatch(inv_p, leading_axes_rule(inv_p))   # numpy's linalg maps over leading axes
defshape(inv_p, same_shape_rule)


def _solve_kernel(a, b, vector):
    xp = backend.xp
    if vector:   # b holds vectors (..., M): solve for each as a one-column matrix
        b = b[..., None]
    # The leading (batch) axes broadcast, written out: CuPy's solve does not broadcast
    # them, nor take a size-0 system.
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    b = xp.broadcast_to(b, batch + b.shape[-2:])
    if a.size == 0 or b.size == 0:
        x = xp.zeros(batch + (a.shape[-1], b.shape[-1]), dtype=np.result_type(a, b))
    else:
        with backend.linalg_errors():
            x = xp.linalg.solve(a, b)
    return x[..., 0] if vector else x


def _as_columns(t, vector):
    return expand_dims(t, -1) if vector else t


# solve: x = A^{-1} b.  ct_b = A^{-T} ct (a solve with A^T);  ct_A = -ct_b x^T.
# ``vector`` says whether b is a (batch of) vector(s) rather than of matrices.
solve_p = primitive("solve", _solve_kernel)
defeffect(solve_p, "fresh")
takes_complex(solve_p)
def solve(a, b):
    r"""$x = A^{-1} b$, solving $A x = b$ (numpy's rule: a 1-D ``b`` is a vector,
    otherwise ``b`` holds matrices (..., M, K); leading axes broadcast).

    VJP: $\bar b = A^{-T} \bar x$ (another solve) and $\bar A = -\bar b\, x^T$."""
    x = square(a, "tg.linalg.solve")
    rhs = as_tensor(b, "b", "tg.linalg.solve")
    if rhs.shape is not None and rhs.ndim == 0:
        validate.fail(ValueError, "tg.linalg.solve", "b", "a vector (M,) or matrices "
                      "(..., M, K)", rhs)
    return innermost.process(solve_p, x, rhs, vector=rhs.ndim == 1)


def _solve_vjp_b(ct, ans, a, b, vector):
    return unbroadcast(innermost.process(solve_p, swap_last_two(conj_of(a)), ct, vector=vector), b)


def _solve_vjp_a(ct, ans, a, b, vector):
    ct_b = innermost.process(solve_p, swap_last_two(conj_of(a)), ct, vector=vector)
    return unbroadcast(-matmul(_as_columns(ct_b, vector), _as_columns(conj_of(ans), vector),
                               transpose_b=True), a)


defvjp(solve_p, _solve_vjp_a, _solve_vjp_b)
# dx = A^{-1}(db - dA x)
defjvp(solve_p,
       lambda a_dot, ans, a, b, vector: -innermost.process(solve_p, a, _from_columns(
           matmul(a_dot, _as_columns(ans, vector)), vector), vector=vector),
       lambda b_dot, ans, a, b, vector: innermost.process(solve_p, a, b_dot, vector=vector))


def _solve_batch(values, batched, vector):
    """Solve every example's system at once: its leading axes broadcast from the right,
    so a batched operand gets size-1 axes after the batch until both examples have as
    many leading axes (a shared one broadcasts against the batch axis by itself)."""
    (a, b), (a_batched, b_batched) = values, batched
    core_b = 1 if vector else 2
    lead = max(a.ndim - a_batched - 2, b.ndim - b_batched - core_b)
    a = move_to_rank(a, lead + 2) if a_batched else a
    b = move_to_rank(b, lead + core_b) if b_batched else b
    return innermost.process(solve_p, a, b, vector=vector), True
defbatch(solve_p, _solve_batch)


def _from_columns(t, vector):
    return squeeze(t, -1) if vector else t


def _solve_shape(a, b, vector):
    dtype = float_dtype(np.result_type(a.dtype, b.dtype))
    if a.shape is None or b.shape is None:
        return [(None, dtype)]
    if vector:
        return [(batch_of(a.shape[:-2], b.shape[:-1]) + a.shape[-1:], dtype)]
    return [(batch_of(a.shape[:-2], b.shape[:-2]) + tuple(b.shape[-2:]), dtype)]


defshape(solve_p, _solve_shape)


# det: Jacobi's formula, ct_A = ct cof(A), the cofactor matrix: det(A) A^{-T} where A is
# invertible, and defined at a singular A too (where the gradient exists as well).
det_p = primitive("det", lambda a: backend.xp.linalg.det(a))
defeffect(det_p, "fresh")
takes_complex(det_p)
def det(a):
    r"""$\det A$ of each square matrix.  VJP (Jacobi's formula): $\bar A = \bar{\mathrm{out}}
    \operatorname{cof}(A)$, the cofactor matrix, which is $\det(A)\, A^{-T}$ for an
    invertible $A$ and exists for a singular one too (see ``cofactor``)."""
    return innermost.process(det_p, square(a, "tg.linalg.det"))
defvjp(det_p, lambda ct, ans, a: _ct_matrix(ct) * conj_of(cofactor(a)))
defjvp(det_p, lambda a_dot, ans, a: sum(cofactor(a) * a_dot, axis=(-2, -1)))
defbatch(det_p, leading_axes_rule(det_p))
defshape(det_p, lambda a: [(None if a.shape is None else a.shape[:-2],
                            float_dtype(a.dtype))])


def _cofactor_kernel(a):
    xp = backend.xp
    if a.size == 0:
        return xp.zeros(a.shape, float_dtype(a.dtype))
    # The SVD runs in float64 at least: CuPy's float32 SVD (cuSOLVER) returned infinite
    # singular values for a matrix with subnormal entries (seen on an H100, CuPy 14.2).
    wide = a.astype(xp.result_type(a.dtype, xp.float64))
    with backend.linalg_errors():
        u, s, vt = xp.linalg.svd(wide)
    # A = U S V^T gives cof(A) = det(U) det(V) U diag(prod of the other s_j) V^T: no
    # division by a singular value, so a singular A has its cofactors too.
    others = xp.where(xp.eye(a.shape[-1], dtype=bool), 1, s[..., None, :])
    scale = xp.prod(others, axis=-1) * (xp.linalg.det(u) * xp.linalg.det(vt))[..., None]
    if a.dtype.kind == "c":   # A = U S V^H: cof(A) = det(U) det(V^H) conj(U) (...) conj(V^H)
        u, vt = xp.conj(u), xp.conj(vt)
    return xp.matmul(u * scale[..., None, :], vt).astype(float_dtype(a.dtype), copy=False)


def _cofactor_vjp(ct, ans, a):
    # from cof(A) = det(A) A^{-T}:  d cof = <cof, dA> A^{-T} - det(A) A^{-T} dA^T A^{-T}
    # (so this second derivative of det needs A invertible, as Jacobi's formula does;
    # complex: the same at conj(A))
    a, ans = conj_of(a), conj_of(ans)
    inv_t = inv(swap_last_two(a))
    along = _ct_matrix(sum(ct * inv_t, axis=(-2, -1))) * ans
    return along - _ct_matrix(det(a)) * matmul(matmul(inv_t, ct, transpose_b=True), inv_t)


# cofactor: cof(A)_ij = (-1)^(i+j) times the minor of A without row i and column j;
# the gradient of det. Computed from the SVD, which needs no inverse.
cofactor_p = primitive("cofactor", _cofactor_kernel)
defeffect(cofactor_p, "fresh")
takes_complex(cofactor_p)
def cofactor(a):
    r"""The cofactor matrix $\operatorname{cof}(A)$ of each square matrix, the gradient of
    $\det A$: $\det(A)\, A^{-T}$ where $A$ is invertible, and defined (from the SVD) where
    it is singular. VJP: that of $\det(A) A^{-T}$ (needs $A$ invertible)."""
    return innermost.process(cofactor_p, square(a, "tg.linalg.cofactor"))
defvjp(cofactor_p, _cofactor_vjp)
defshape(cofactor_p, same_shape_rule)
defbatch(cofactor_p, leading_axes_rule(cofactor_p))


# slogdet: (sign, log|det A|). The sign is piecewise constant (its derivative is 0
# wherever it is defined), so only log|det A| carries a gradient: ct_A = ct A^{-T}.
slogdet_p = primitive("slogdet", lambda a: tuple(backend.xp.linalg.slogdet(a)),
                      multiple_results=True)
defeffect(slogdet_p, "fresh")
takes_complex(slogdet_p)
def slogdet(a):
    r"""``(sign, logabsdet)``: $\det A = \mathrm{sign}\, e^{\mathrm{logabsdet}}$, without
    overflow. Only ``logabsdet`` is differentiated (the sign's derivative is 0):
    $\bar A = \overline{\mathrm{logabsdet}}\, A^{-T}$."""
    return tuple(innermost.process(slogdet_p, square(a, "tg.linalg.slogdet")))
def _slogdet_vjp(ct, ans, a):
    weight = ct[1]
    if a.dtype.kind == "c":   # the sign e^{i theta} turns too: d theta = Im tr(A^{-1} dA)
        weight = complex(weight, -imag(conj_of(ct[0]) * ans[0]))
    return _ct_matrix(weight) * inverse_for_gradient(
        swap_last_two(conj_of(a)), "tg.linalg.slogdet", "log|det A| has no derivative "
        "where A is singular (det A = 0, so log|det A| = -inf)")
defvjp(slogdet_p, _slogdet_vjp)
defbatch(slogdet_p, leading_axes_rule(slogdet_p))


def inverse_for_gradient(a, where, why):
    """``inv(a)`` in the gradient of ``where``: when ``a`` is singular, the error names
    the function the user called and says ``why`` (not the ``inv`` they never called).
    (In a graph the error comes when it runs, from a node ``where``'s gradient made.)"""
    try:
        return inv(a)
    except ValueError as error:   # numpy's LinAlgError is a ValueError
        raise type(error)(f"the gradient of {where}: {why} ({error}).") from None
defshape(slogdet_p, lambda a: det_p.shape_rule(a) + [
    (det_p.shape_rule(a)[0][0], np.dtype(float_dtype(a.dtype).char.lower()))])
