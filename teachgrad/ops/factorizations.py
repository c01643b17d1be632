"""Matrix factorizations (``tg.linalg``): cholesky, eigh, svd, qr, and pinv, batched
over leading axes. Their adjoints are the standard ones (Murray 2016 for Cholesky,
Giles 2008 for eigh, Townsend 2016 for the SVD, Walter & Lehmann 2018 for QR,
Golub & Pereyra 1973 for the pseudo-inverse), written with teachgrad ops so that
they can be differentiated again.

``cholesky`` and ``eigh`` read only the lower triangle of their input, as numpy's
do: the function differentiated is  S = tril(A) + tril(A, -1)^T.  For a gradient G
with respect to the symmetric S, the gradient with respect to A is
``tril(G + G^T) - diag(G)`` (an entry below the diagonal stands for two of S); for a
symmetric perturbation of A (the usual case: A = B B^T) it gives the same numbers as
the symmetric G would.
"""
from .. import backend, validate
from .arithmetic import divide
from .core import bind, defbatch, defeffect, defvjp, leading_axes_rule, primitive
from .diagonals import diagonal, tril, undiagonal
from .misc import ones_like
from .grad_util import as_tensor
from .linalg import matmul
from .matrix import float_dtype, inv, inverse_for_gradient, same_shape_rule, square
from .qr_modes import qr_complete_p, qr_raw_p
from .shape import expand_dims, swap_last_two
from .join_split import concat
from .declare import defshape


def _eye_like(m):
    """Identity matrices shaped like the square matrices ``m`` (ones written on the
    diagonal of zeros, so that the size need not be known when a graph is built)."""
    return undiagonal(ones_like(diagonal(m, 0, -2, -1)), m, 0, -2, -1)


def _lower_of_symmetric(g, eye):
    """The gradient with respect to A of a function of S = tril(A) + tril(A, -1)^T, given
    its gradient ``g`` with respect to S."""
    return tril(g + swap_last_two(g)) - g * eye


def _diag(v, eye):
    """Matrices with the vectors ``v`` (..., n) on their diagonals."""
    return expand_dims(v, -1) * eye


# cholesky: A = L L^T.  dL = L Phi(L^{-1} dS L^{-T}) with Phi(X) = tril(X) with its
# diagonal halved, so  ct_S = L^{-T} Phi(L^T ct) L^{-1}  (Phi is its own transpose).
def _cholesky_kernel(a):
    with backend.linalg_errors():   # not positive definite: LinAlgError, on a GPU too
        return backend.xp.linalg.cholesky(a)

cholesky_p = primitive("cholesky", _cholesky_kernel)
defeffect(cholesky_p, "fresh")
def cholesky(a):
    r"""The lower-triangular $L$ with $A = L L^T$, for symmetric positive definite $A$
    (only its lower triangle is read).

    VJP: $\bar S = L^{-T}\, \Phi(L^T \bar L)\, L^{-1}$, with $\Phi$ = the lower triangle
    with the diagonal halved; then $\bar A = \mathrm{tril}(\bar S + \bar S^T) -
    \mathrm{diag}(\bar S)$ (see the module's note on reading one triangle)."""
    return bind(cholesky_p, square(a, "tg.linalg.cholesky"))


def _cholesky_vjp(ct, ans, a):
    eye = _eye_like(ans)
    l_inv = inv(ans)
    middle = matmul(ans, ct, transpose_a=True)
    phi = tril(middle) - 0.5 * middle * eye
    return _lower_of_symmetric(matmul(matmul(l_inv, phi, transpose_a=True), l_inv), eye)


defvjp(cholesky_p, _cholesky_vjp, arrays=True)
defbatch(cholesky_p, leading_axes_rule(cholesky_p))   # numpy's linalg maps over leading axes
defshape(cholesky_p, same_shape_rule)


# eigh: S = V diag(w) V^T.  dw = diag(V^T dS V),  dV = V (F o (V^T dS V)) with
# F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it.  So
#   ct_S = V (diag(ct_w) + F o (V^T ct_V)) V^T.
eigh_p = primitive("eigh", lambda a, UPLO: tuple(backend.xp.linalg.eigh(a, UPLO=UPLO)),
                   multiple_results=True)
defeffect(eigh_p, "fresh")
def eigh(a, UPLO="L"):
    r"""``(w, v)``: the eigenvalues (ascending) and eigenvectors (columns) of a symmetric
    matrix, $A = V \mathrm{diag}(w) V^T$ (only the lower triangle is read, or with
    ``UPLO="U"`` the upper one, as numpy's ``eigh``).

    VJP: $\bar S = V\,(\mathrm{diag}(\bar w) + F \circ (V^T \bar V))\,V^T$ with
    $F_{ij} = 1/(w_j - w_i)$ for $i \ne j$ (eigenvalues must be distinct for $\bar V$),
    then the lower-triangle rule of the module's note (its transpose for ``"U"``)."""
    UPLO = validate.one_of(UPLO, "UPLO", "tg.linalg.eigh", ("L", "U"))
    return tuple(bind(eigh_p, square(a, "tg.linalg.eigh"), UPLO=UPLO))


def _eigh_vjp(ct, ans, a, UPLO):
    ct_w, ct_v = ct
    w, v = ans
    eye = _eye_like(v)
    gaps = expand_dims(w, -2) - expand_dims(w, -1) + eye   # w_j - w_i, 1 on the diagonal
    f = divide(1.0 - eye, gaps)
    inner = _diag(ct_w, eye) + f * matmul(v, ct_v, transpose_a=True)
    lower = _lower_of_symmetric(matmul(matmul(v, inner), v, transpose_b=True), eye)
    return lower if UPLO == "L" else swap_last_two(lower)   # the upper triangle read


defvjp(eigh_p, _eigh_vjp, arrays=True)
defbatch(eigh_p, leading_axes_rule(eigh_p))   # numpy's linalg maps over leading axes
defshape(eigh_p, lambda a, UPLO: [(None if a.shape is None else a.shape[:-1],
                                   float_dtype(a.dtype)), same_shape_rule(a)[0]])


# svd (Townsend 2016), A = U diag(s) V^T with k = min(m, n) columns kept, and
# F_ij = 1 / (s_j^2 - s_i^2) off the diagonal:
#   ct_A = U [ (F o (U^T ct_U - ct_U^T U)) S + diag(ct_s) + S (F o (V^T ct_V - ct_V^T V)) ] V^T
#          + (I - U U^T) ct_U S^{-1} V^T + U S^{-1} ct_V^T (I - V V^T)
svd_p = primitive("svd", lambda a, full_matrices: tuple(
    backend.xp.linalg.svd(a, full_matrices=full_matrices)), multiple_results=True)
defeffect(svd_p, "fresh")


def _svd_vjp(ct, ans, a, full_matrices):
    ct_u, ct_s, ct_vh = ct
    u, s, vh = ans
    m, n = a.shape[-2], a.shape[-1]
    if full_matrices and m != n:
        raise ValueError("tg.linalg.svd: the gradient needs full_matrices=False (the extra "
                         "columns of a full U or V are not determined by A).")
    ut_ctu = matmul(u, ct_u, transpose_a=True)          # k x k
    eye = _eye_like(ut_ctu)
    s_row, s_col = expand_dims(s, -2), expand_dims(s, -1)
    f = divide(1.0 - eye, s_row * s_row - s_col * s_col + eye)
    v_ctv = matmul(vh, ct_vh, transpose_b=True)          # V^T ct_V
    j = f * (ut_ctu - swap_last_two(ut_ctu))
    kk = f * (v_ctv - swap_last_two(v_ctv))
    middle = j * s_row + _diag(ct_s, eye) + s_col * kk
    grad = matmul(matmul(u, middle), vh)
    # the parts of ct_U (ct_V) outside the span of U (V)
    off_u = ct_u - matmul(u, ut_ctu)
    grad = grad + matmul(off_u / s_row, vh)
    off_vh = ct_vh - matmul(swap_last_two(v_ctv), vh)     # ct_V^T (I - V V^T)
    return grad + matmul(u / s_row, off_vh)


defvjp(svd_p, _svd_vjp, arrays=True)
defbatch(svd_p, leading_axes_rule(svd_p))   # numpy's linalg maps over leading axes


def _factor_shapes(a, full_matrices=False):
    """(batch, m, n, k, dtype) of matrices ``a``, k = min(m, n) (None: unknown)."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = None if m is None or n is None else min(m, n)
    return batch, m, (m if full_matrices else k), n, k, float_dtype(a.dtype)


def _svd_shape(a, full_matrices):
    if a.shape is None:
        return [(None, float_dtype(a.dtype))] * 3
    batch, m, cols, n, k, dtype = _factor_shapes(a, full_matrices)
    rows = n if full_matrices else k
    return [(batch + (m, cols), dtype), (batch + (k,), dtype), (batch + (rows, n), dtype)]


defshape(svd_p, _svd_shape)


# svdvals: the singular values alone.  ds_i = u_i^T dA v_i, so ct_A = U diag(ct_s) V^T,
# defined even where singular values repeat (then any singular basis gives the same sum).
svdvals_p = primitive("svdvals", lambda a: backend.xp.linalg.svd(a, compute_uv=False))
defeffect(svdvals_p, "fresh")
def _svdvals_vjp(ct, ans, a):
    u, s, vh = bind(svd_p, a, full_matrices=False)
    return matmul(u * expand_dims(ct, -2), vh)


defvjp(svdvals_p, _svdvals_vjp, arrays=True)
defbatch(svdvals_p, leading_axes_rule(svdvals_p))   # numpy's linalg maps over leading axes
defshape(svdvals_p, lambda a: _svd_shape(a, False)[1:2])


def svd(a, full_matrices=True, compute_uv=True):
    r"""$A = U \mathrm{diag}(s) V^H$: ``(u, s, vh)``, numpy's ``svd`` (``compute_uv=False``:
    ``s`` alone, descending).

    VJP (for ``full_matrices=False``, or square ``A``; singular values distinct and
    nonzero for $\bar U, \bar V$), with $F_{ij} = 1/(s_j^2 - s_i^2)$:
    $\bar A = U[(F \circ (U^T\bar U - \bar U^T U))S + \mathrm{diag}(\bar s) + S(F \circ
    (V^T\bar V - \bar V^T V))]V^T + (I - UU^T)\bar U S^{-1} V^T + U S^{-1} \bar V^T
    (I - VV^T)$. For ``s`` alone, $\bar A = U \mathrm{diag}(\bar s) V^T$."""
    x = as_tensor(a, "a", "tg.linalg.svd")
    if x.shape is not None and x.ndim < 2:
        validate.fail(ValueError, "tg.linalg.svd", "a", "matrices: a tensor of shape "
                      "(..., M, N)", x)
    full_matrices = validate.boolean(full_matrices, "full_matrices", "tg.linalg.svd")
    if not validate.boolean(compute_uv, "compute_uv", "tg.linalg.svd"):
        return bind(svdvals_p, x)
    return tuple(bind(svd_p, x, full_matrices=full_matrices))


# qr (reduced), A = Q R.  For m >= n:
#   M = R ct_R^T - ct_Q^T Q;  ct_A = (ct_Q + Q copyltu(M)) R^{-T}
# where copyltu(M) = tril(M) + tril(M, -1)^T copies the lower triangle up. For m < n
# (JAX's rule), A = [X | Y] with X square: X = Q U is a square QR, and R = [U | V]
# with V = Q^T Y, so ct_Y = Q ct_V and X gets the square rule with ct_Q + Y ct_V^T.
qr_p = primitive("qr", lambda a: tuple(backend.xp.linalg.qr(a)), multiple_results=True)
defeffect(qr_p, "fresh")
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
        return tuple(bind(qr_raw_p, x))
    if mode == "complete" and (m is None or n is None or m > n):
        return tuple(bind(qr_complete_p, x))
    q, r = bind(qr_p, x)
    return r if mode == "r" else (q, r)


def _qr_vjp(ct, ans, a):
    ct_q, ct_r = ct
    q, r = ans
    m, n = a.shape[-2], a.shape[-1]
    if m is None or n is None or m >= n:
        return _qr_square_or_tall_vjp(ct_q, ct_r, q, r)
    ct_u, ct_v = ct_r[..., :m], ct_r[..., m:]
    y = a[..., m:]
    ct_x = _qr_square_or_tall_vjp(ct_q + matmul(y, ct_v, transpose_b=True), ct_u, q,
                                  r[..., :m])
    return concat([ct_x, matmul(q, ct_v)], axis=-1)


def _qr_square_or_tall_vjp(ct_q, ct_r, q, r):
    mm = matmul(r, ct_r, transpose_b=True) - matmul(ct_q, q, transpose_a=True)
    low = tril(mm)
    copyltu = low + swap_last_two(low) - mm * _eye_like(mm)
    return matmul(ct_q + matmul(q, copyltu), inverse_for_gradient(
        r, "tg.linalg.qr", "it needs R invertible, that is A of full rank"),
        transpose_b=True)


defvjp(qr_p, _qr_vjp, arrays=True)
defbatch(qr_p, leading_axes_rule(qr_p))   # numpy's linalg maps over leading axes


def _qr_shape(a):
    if a.shape is None:
        return [(None, float_dtype(a.dtype))] * 2
    batch, m, _, n, k, dtype = _factor_shapes(a)
    return [(batch + (m, k), dtype), (batch + (k, n), dtype)]


defshape(qr_p, _qr_shape)


def _pinv_kernel(a, rcond):
    if rcond is None:
        return backend.xp.linalg.pinv(a)
    return backend.xp.linalg.pinv(a, rcond=rcond)

# pinv, P = A^+ (Golub & Pereyra; valid where the rank does not change):
#   dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P,  so
#   ct_A = -P^T ct P^T + (I - A P) ct^T P P^T + P^T P ct^T (I - P A)
pinv_p = primitive("pinv", _pinv_kernel)
defeffect(pinv_p, "fresh")
def pinv(a, rcond=None):
    r"""The Moore-Penrose pseudo-inverse $A^+$ (singular values below ``rcond`` times the
    largest count as zero; None: numpy's default).

    VJP (where the rank is constant): $\bar A = -P^T \bar P P^T + (I - AP)\bar P^T P P^T
    + P^T P \bar P^T (I - PA)$, $P = A^+$."""
    x = as_tensor(a, "a", "tg.linalg.pinv")
    if x.shape is not None and x.ndim < 2:
        validate.fail(ValueError, "tg.linalg.pinv", "a", "matrices: a tensor of shape "
                      "(..., M, N)", x)
    if rcond is not None:
        rcond = validate.number(rcond, "rcond", "tg.linalg.pinv", minimum=0.0)
    return bind(pinv_p, x, rcond=rcond)


def _pinv_vjp(ct, ans, a, rcond):
    # Every term is a product (m x n)(n x m)(m x n) for an m x n A: multiplied so that the
    # middle result is n x n for a tall A (m x m for a wide one), never the larger square,
    # the memory stays O(mn): a 400000 x 2 matrix has a gradient.
    m, n = a.shape[-2], a.shape[-1]
    tall = m is None or n is None or m >= n

    def chain(x, y, z):
        return matmul(x, matmul(y, z)) if tall else matmul(matmul(x, y), z)

    p, p_t, ct_t = ans, swap_last_two(ans), swap_last_two(ct)
    first = -chain(p_t, ct, p_t)                                   # -P^T ct P^T
    left = chain(ct_t, p, p_t)                                     # ct^T P P^T
    second = left - chain(a, p, left)                              # (I - A P) ct^T P P^T
    right = chain(p_t, p, ct_t)                                    # P^T P ct^T
    third = right - chain(right, p, a)                             # P^T P ct^T (I - P A)
    return first + second + third


defvjp(pinv_p, _pinv_vjp, arrays=True)
defbatch(pinv_p, leading_axes_rule(pinv_p))   # numpy's linalg maps over leading axes
defshape(pinv_p, lambda a, rcond: [(None if a.shape is None else
                                    a.shape[:-2] + a.shape[-2:][::-1], float_dtype(a.dtype))])
