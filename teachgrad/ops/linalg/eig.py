r"""Eigenvalues and eigenvectors of general square matrices: ``tg.linalg.eig`` and
``eigvals``, batched over leading axes. Their results are complex, for real input too
(as TensorFlow's and JAX's are): a real matrix may have complex eigenvalues.

With $A = V \operatorname{diag}(\lambda) V^{-1}$ and unit-norm eigenvectors (numpy's), the
gradient is PyTorch's (JAX's in TensorFlow's convention, ``teachgrad.dtypes``):

.. math:: \bar A = V^{-H} \left(\operatorname{diag}(\bar\lambda) + \frac{V^H \bar V -
   V^H V \operatorname{diag}(\operatorname{Re}(V^H \bar V))}{\bar E}\right) V^H,
   \qquad E_{ij} = \lambda_j - \lambda_i,

the division entrywise off the diagonal. It divides by the gaps between eigenvalues, so
``eig``'s gradient refuses a matrix with repeated eigenvalues (ValueError), as the
eigenvectors of a repeated eigenvalue are not determined; ``eigvals``'s needs no gaps.
Each eigenvector is determined up to a phase $e^{i\phi}$ only, so a loss of them has a
gradient only where it does not depend on that phase (e.g. ``abs(v) ** 2``). For a real
$A$ the gradient is the real part.
"""
import numpy as np

from ... import backend
from ..core.apply import innermost, leading_axes_rule
from ..core.declare import defbatch, defeffect, defshape, defvjp, primitive, takes_complex
from ..elementwise.conjugate import conj_op, real_of, real_part
from ..reductions.sums import sum
from ..shape.diagonals import diagonal
from ..shape.reshape import expand_dims, swap_last_two
from .factor_parts import diag_matrices, eye_like
from .matmul import matmul
from .matrix import solve_p, square


def _complex_of(dtype):
    return np.result_type(dtype, np.complex64) if dtype.kind in "fc" else np.dtype(np.complex128)


def _eig_kernel(a):
    with backend.linalg_errors():
        w, v = backend.xp.linalg.eig(a)
    dtype = _complex_of(a.dtype)
    return w.astype(dtype, copy=False), v.astype(dtype, copy=False)


def _gaps_kernel(w, rtol):
    """E_ij = w_j - w_i, 1 on the diagonal; a repeated eigenvalue is an error."""
    xp = backend.xp   # numpy or CuPy
    gaps = w[..., None, :] - w[..., :, None]
    n = w.shape[-1]
    off = ~xp.eye(n, dtype=bool)
    scale = xp.maximum(xp.abs(w).max(axis=-1), 1.0)[..., None, None] if w.size else 1.0
    if w.size and bool(xp.any(off & (xp.abs(gaps) <= rtol * scale))):
        raise ValueError(
            "the gradient of tg.linalg.eig: the matrix has repeated eigenvalues, where its "
            "eigenvectors are not determined (any mix of theirs is one), so they have no "
            "gradient. Use tg.linalg.eigvals if only the eigenvalues matter, or tg.linalg.eigh "
            "for a Hermitian matrix.")
    return xp.where(off, gaps, 1)


def _gaps_vjp(ct, ans, w, rtol):
    off = 1 - eye_like(ct)   # d E_ij = dw_j - dw_i
    masked = ct * off
    return sum(masked, axis=-2) - sum(masked, axis=-1)

# eigen_gaps(w): the gaps w_j - w_i that eig's gradient divides by (linear in w), checked.
eigen_gaps_p = primitive("eigen_gaps", _gaps_kernel)
defeffect(eigen_gaps_p, "fresh")
takes_complex(eigen_gaps_p)
defvjp(eigen_gaps_p, _gaps_vjp)
defbatch(eigen_gaps_p, leading_axes_rule(eigen_gaps_p))
defshape(eigen_gaps_p, lambda w, rtol: [(None if w.shape is None else w.shape + w.shape[-1:],
                                         w.dtype)])   # stand-ins would repeat: a rule


def _eig_vjp(ct, ans, a):
    ct_w, ct_v = ct
    w, v = ans
    vh = conj_op(swap_last_two(v))
    vh_ctv = matmul(vh, ct_v)
    eye = eye_like(v)
    norms = matmul(vh, v * expand_dims(diagonal(real_part(vh_ctv), 0, -2, -1), -2))
    gaps = conj_op(innermost.process(eigen_gaps_p, w, rtol=_RTOL))
    inner = (vh_ctv - norms) / gaps * (1 - eye) + diag_matrices(ct_w, eye)
    return real_of(innermost.process(solve_p, vh, matmul(inner, vh), vector=False), a)


_RTOL = 1e-10

eig_p = primitive("eig", _eig_kernel, multiple_results=True)
defeffect(eig_p, "fresh")
takes_complex(eig_p)
def eig(a):
    r"""``(w, v)``: the eigenvalues and unit-norm eigenvectors (columns) of each square
    matrix, $A v_i = w_i v_i$, both complex (numpy's ``eig``, in no particular order).
    Gradient: the module's formula; a matrix with repeated eigenvalues has none for its
    eigenvectors, and the gradient refuses it."""
    return tuple(innermost.process(eig_p, square(a, "tg.linalg.eig")))
defvjp(eig_p, _eig_vjp)
defbatch(eig_p, leading_axes_rule(eig_p))
defshape(eig_p, lambda a: [(None if a.shape is None else a.shape[:-1], _complex_of(a.dtype)),
                           (a.shape, _complex_of(a.dtype))])


def _eigvals_kernel(a):
    with backend.linalg_errors():
        return backend.xp.linalg.eigvals(a).astype(_complex_of(a.dtype), copy=False)


def _eigvals_vjp(ct, ans, a):
    _, v = innermost.process(eig_p, a)   # A = V diag(w) V^{-1}:  ct_A = V^{-H} diag(ct) V^H
    vh = conj_op(swap_last_two(v))
    inner = diag_matrices(ct, eye_like(v))
    return real_of(innermost.process(solve_p, vh, matmul(inner, vh), vector=False), a)

eigvals_p = primitive("eigvals", _eigvals_kernel)
defeffect(eigvals_p, "fresh")
takes_complex(eigvals_p)
def eigvals(a):
    r"""The eigenvalues of each square matrix, complex (numpy's ``eigvals``). Gradient:
    $\bar A = V^{-H} \operatorname{diag}(\bar w) V^H$, which repeated eigenvalues do not
    disturb (a defective matrix, whose eigenvectors do not span, has none)."""
    return innermost.process(eigvals_p, square(a, "tg.linalg.eigvals"))
defvjp(eigvals_p, _eigvals_vjp)
defbatch(eigvals_p, leading_axes_rule(eigvals_p))
defshape(eigvals_p, lambda a: [(None if a.shape is None else a.shape[:-1],
                                _complex_of(a.dtype))])
