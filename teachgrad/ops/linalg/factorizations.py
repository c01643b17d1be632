"""Matrix factorizations (``tg.linalg``): cholesky, eigh and qr, batched over leading
axes (svd and pinv are in ``singular_values.py``). Their
adjoints are the standard ones (Murray 2016 for Cholesky, Giles 2008 for eigh, Walter &
Lehmann 2018 for QR), written with teachgrad ops so that they can be differentiated
again.

``cholesky`` and ``eigh`` read only the lower triangle of their input, as numpy's
do: the function differentiated is  S = tril(A) + tril(A, -1)^T.  For a gradient G
with respect to the symmetric S, the gradient with respect to A is
``tril(G + G^T) - diag(G)`` (an entry below the diagonal stands for two of S); for a
symmetric perturbation of A (the usual case: A = B B^T) it gives the same numbers as
the symmetric G would. A complex Hermitian matrix is read the same way, with
S = tril(A) + tril(A, -1)^H and a real diagonal: every transpose becomes the conjugate
transpose, and the diagonal keeps the real part, ``tril(G + G^H) - Re(diag(G))``.
"""
from ... import backend, validate
from ...dtypes import real_dtype
from ..core.apply import innermost, leading_axes_rule
from ..core.declare import defbatch, defeffect, defshape, defvjp, primitive, takes_complex
from ..core.grad_util import as_tensor
from ..elementwise.arithmetic import divide
from ..elementwise.conjugate import conj_of, real_part
from ..shape.concat_split import concat
from ..shape.diagonals import tril
from ..shape.reshape import expand_dims, swap_last_two
from .factor_parts import diag_matrices, eye_like, factor_shapes
from .matmul import matmul
from .matrix import float_dtype, inv, inverse_for_gradient, same_shape_rule, square
from .qr_modes import qr_complete_p, qr_raw_p

__all__ = ["cholesky", "cholesky_p", "eigh", "eigh_p", "qr", "qr_p"]


def _lower_of_symmetric(g, eye):
    """The gradient with respect to A of a function of S = tril(A) + tril(A, -1)^T, given
    its gradient ``g`` with respect to S (complex: S Hermitian, its diagonal real)."""
    diagonal = real_part(g) if g.dtype.kind == "c" else g
    return tril(g + conj_of(swap_last_two(g))) - diagonal * eye


# cholesky: A = L L^T.  dL = L Phi(L^{-1} dS L^{-T}) with Phi(X) = tril(X) with its
# diagonal halved, so  ct_S = L^{-T} Phi(L^T ct) L^{-1}  (Phi is its own transpose).
def _cholesky_kernel(a):
    with backend.linalg_errors():   # not positive definite: LinAlgError, on a GPU too
        return backend.xp.linalg.cholesky(a)

cholesky_p = primitive("cholesky", _cholesky_kernel)
defeffect(cholesky_p, "fresh")
takes_complex(cholesky_p)
def cholesky(a):
    r"""The lower-triangular $L$ with $A = L L^T$, for symmetric positive definite $A$
    (only its lower triangle is read).

    VJP: $\bar S = L^{-T}\, \Phi(L^T \bar L)\, L^{-1}$, with $\Phi$ = the lower triangle
    with the diagonal halved; then $\bar A = \mathrm{tril}(\bar S + \bar S^T) -
    \mathrm{diag}(\bar S)$ (see the module's note on reading one triangle)."""
    return innermost.process(cholesky_p, square(a, "tg.linalg.cholesky"))


def _cholesky_vjp(ct, ans, a):
    eye = eye_like(ans)
    l_inv = inv(ans)
    middle = matmul(conj_of(ans), ct, transpose_a=True)
    phi = tril(middle) - 0.5 * middle * eye
    return _lower_of_symmetric(matmul(matmul(conj_of(l_inv), phi, transpose_a=True), l_inv),
                               eye)


defvjp(cholesky_p, _cholesky_vjp)
defbatch(cholesky_p, leading_axes_rule(cholesky_p))   # numpy's linalg maps over leading axes
defshape(cholesky_p, same_shape_rule)


# eigh: S = V diag(w) V^T.  dw = diag(V^T dS V),  dV = V (F o (V^T dS V)) with
# F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it.  So
#   ct_S = V (diag(ct_w) + F o (V^T ct_V)) V^T.
eigh_p = primitive("eigh", lambda a, UPLO: tuple(backend.xp.linalg.eigh(a, UPLO=UPLO)),
                   multiple_results=True)
defeffect(eigh_p, "fresh")
takes_complex(eigh_p)
def eigh(a, UPLO="L"):
    r"""``(w, v)``: the eigenvalues (ascending) and eigenvectors (columns) of a symmetric
    matrix, $A = V \mathrm{diag}(w) V^T$ (only the lower triangle is read, or with
    ``UPLO="U"`` the upper one, as numpy's ``eigh``).

    VJP: $\bar S = V\,(\mathrm{diag}(\bar w) + F \circ (V^T \bar V))\,V^T$ with
    $F_{ij} = 1/(w_j - w_i)$ for $i \ne j$ (eigenvalues must be distinct for $\bar V$),
    then the lower-triangle rule of the module's note (its transpose for ``"U"``)."""
    UPLO = validate.one_of(UPLO, "UPLO", "tg.linalg.eigh", ("L", "U"))
    return tuple(innermost.process(eigh_p, square(a, "tg.linalg.eigh"), UPLO=UPLO))


def _eigh_vjp(ct, ans, a, UPLO):
    ct_w, ct_v = ct
    w, v = ans
    eye = eye_like(v)
    gaps = expand_dims(w, -2) - expand_dims(w, -1) + eye   # w_j - w_i, 1 on the diagonal
    f = divide(1.0 - eye, gaps)
    inner = diag_matrices(ct_w, eye) + f * matmul(conj_of(v), ct_v, transpose_a=True)
    lower = _lower_of_symmetric(matmul(matmul(v, inner), conj_of(v), transpose_b=True), eye)
    return lower if UPLO == "L" else conj_of(swap_last_two(lower))   # the upper triangle


defvjp(eigh_p, _eigh_vjp)
defbatch(eigh_p, leading_axes_rule(eigh_p))   # numpy's linalg maps over leading axes
defshape(eigh_p, lambda a, UPLO: [(None if a.shape is None else a.shape[:-1],
                                   real_dtype(float_dtype(a.dtype))), same_shape_rule(a)[0]])


# qr (reduced), A = Q R (complex: every transpose the conjugate one; Q and R are then
# determined up to a phase per column of Q, which a loss must not depend on).  For m >= n:
#   M = R ct_R^T - ct_Q^T Q;  ct_A = (ct_Q + Q copyltu(M)) R^{-T}
# where copyltu(M) = tril(M) + tril(M, -1)^T copies the lower triangle up. For m < n
# (JAX's rule), A = [X | Y] with X square: X = Q U is a square QR, and R = [U | V]
# with V = Q^T Y, so ct_Y = Q ct_V and X gets the square rule with ct_Q + Y ct_V^T.
qr_p = primitive("qr", lambda a: tuple(backend.xp.linalg.qr(a)), multiple_results=True)
defeffect(qr_p, "fresh")
takes_complex(qr_p)
def qr(a, mode="reduced"):
    r"""$A = QR$, $Q$ with orthonormal columns and $R$ upper triangular, numpy's modes:
    ``"reduced"`` ``(q, r)`` with $k = \min(m, n)$ columns of $Q$; ``"complete"``
    ``(q, r)`` with $Q$ square ($m \times m$); ``"r"`` $R$ alone; ``"raw"`` LAPACK's
    Householder reflectors ``(h, tau)``.

    VJP for ``"reduced"`` and ``"r"`` (A of full rank), rows >= columns:
    $M = R\bar R^T - \bar Q^T Q$, $\bar A = (\bar Q + Q\,\mathrm{copyltu}(M))\,
    R^{-T}$, where copyltu mirrors the lower triangle upwards; rows < columns: with
    $A = [X | Y]$, $R = [U | V]$, $\bar Y = Q\bar V$ and $X$ takes the square rule with
    $\bar Q + Y\bar V^T$. ``"complete"`` is differentiable where it is the reduced QR
    (rows <= columns); for more rows than columns its extra columns of $Q$ are not
    determined by $A$, and ``"raw"`` has no gradient: both say so when differentiated."""
    mode = validate.one_of(mode, "mode", "tg.linalg.qr", ("reduced", "complete", "r", "raw"))
    x = as_tensor(a, "a", "tg.linalg.qr")
    if x.shape is not None and x.ndim < 2:
        validate.fail(ValueError, "tg.linalg.qr", "a", "matrices: a tensor of shape "
                      "(..., M, N)", x)
    m, n = (None, None) if x.shape is None else x.shape[-2:]
    if mode == "raw":
        return tuple(innermost.process(qr_raw_p, x))
    if mode == "complete" and (m is None or n is None or m > n):
        return tuple(innermost.process(qr_complete_p, x))
    q, r = innermost.process(qr_p, x)
    return r if mode == "r" else (q, r)


def _qr_vjp(ct, ans, a):
    ct_q, ct_r = ct
    q, r = ans
    m, n = a.shape[-2], a.shape[-1]
    if m is None or n is None or m >= n:
        return _qr_square_or_tall_vjp(ct_q, ct_r, q, r)
    ct_u, ct_v = ct_r[..., :m], ct_r[..., m:]
    y = a[..., m:]
    ct_x = _qr_square_or_tall_vjp(ct_q + matmul(y, conj_of(ct_v), transpose_b=True), ct_u, q,
                                  r[..., :m])
    return concat([ct_x, matmul(q, ct_v)], axis=-1)


def _qr_square_or_tall_vjp(ct_q, ct_r, q, r):
    # complex: conjugate transposes (conj_of is nothing on reals)
    mm = matmul(r, conj_of(ct_r), transpose_b=True) - matmul(conj_of(ct_q), q, transpose_a=True)
    low = tril(mm)
    copyltu = low + conj_of(swap_last_two(low)) - mm * eye_like(mm)
    return matmul(ct_q + matmul(q, copyltu), conj_of(inverse_for_gradient(
        r, "tg.linalg.qr", "it needs R invertible, that is A of full rank")),
        transpose_b=True)


defvjp(qr_p, _qr_vjp)
defbatch(qr_p, leading_axes_rule(qr_p))   # numpy's linalg maps over leading axes


def _qr_shape(a):
    if a.shape is None:
        return [(None, float_dtype(a.dtype))] * 2
    batch, m, _, n, k, dtype = factor_shapes(a)
    return [(batch + (m, k), dtype), (batch + (k, n), dtype)]


defshape(qr_p, _qr_shape)
