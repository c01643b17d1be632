"""The singular value decomposition (``tg.linalg.svd``, and ``s`` alone, ``svdvals``) and the
pseudo-inverse built on it (``tg.linalg.pinv``), batched over leading axes. Their adjoints
are Townsend 2016's for the SVD and Golub & Pereyra 1973's for the pseudo-inverse, written
with teachgrad ops so that they can be differentiated again.
"""
from ... import backend, validate
from ...dtypes import real_dtype
from ..core.apply import innermost, leading_axes_rule
from ..core.declare import defbatch, defeffect, defshape, defvjp, primitive, takes_complex
from ..core.grad_util import as_tensor
from ..elementwise.arithmetic import divide
from ..elementwise.complex_parts import imag
from ..elementwise.conjugate import conj_of
from ..shape.reshape import expand_dims, swap_last_two
from .factor_parts import diag_matrices, eye_like, factor_shapes
from .matmul import matmul
from .matrix import float_dtype

# svd (Townsend 2016), A = U diag(s) V^T with k = min(m, n) columns kept, and
# F_ij = 1 / (s_j^2 - s_i^2) off the diagonal:
#   ct_A = U [ (F o (U^T ct_U - ct_U^T U)) S + diag(ct_s) + S (F o (V^T ct_V - ct_V^T V)) ] V^T
#          + (I - U U^T) ct_U S^{-1} V^T + U S^{-1} ct_V^T (I - V V^T)
svd_p = primitive("svd", lambda a, full_matrices: tuple(
    backend.xp.linalg.svd(a, full_matrices=full_matrices)), multiple_results=True)
defeffect(svd_p, "fresh")
takes_complex(svd_p)


def _svd_vjp(ct, ans, a, full_matrices):
    ct_u, ct_s, ct_vh = ct
    u, s, vh = ans
    m, n = a.shape[-2], a.shape[-1]
    if full_matrices and m != n:
        raise ValueError("tg.linalg.svd: the gradient needs full_matrices=False (the extra "
                         "columns of a full U or V are not determined by A).")
    # complex: every transpose is the conjugate one (conj_of is nothing on reals)
    ut_ctu = matmul(conj_of(u), ct_u, transpose_a=True)          # k x k
    eye = eye_like(ut_ctu)
    s_row, s_col = expand_dims(s, -2), expand_dims(s, -1)
    f = divide(1.0 - eye, s_row * s_row - s_col * s_col + eye)
    v_ctv = matmul(vh, conj_of(ct_vh), transpose_b=True)          # V^H ct_V
    j = f * (ut_ctu - conj_of(swap_last_two(ut_ctu)))
    kk = f * (v_ctv - conj_of(swap_last_two(v_ctv)))
    middle = j * s_row + diag_matrices(ct_s, eye) + s_col * kk
    if ut_ctu.dtype.kind == "c":   # the phase u_i and v_i share: i Im(u_i^H ct_u_i - ...)
        turn = imag(_diagonal_of(ut_ctu, eye) - _diagonal_of(v_ctv, eye)) / (2 * s)
        middle = middle + diag_matrices(turn, eye) * 1j
    grad = matmul(matmul(u, middle), vh)
    # the parts of ct_U (ct_V) outside the span of U (V)
    off_u = ct_u - matmul(u, ut_ctu)
    grad = grad + matmul(off_u / s_row, vh)
    off_vh = ct_vh - matmul(conj_of(swap_last_two(v_ctv)), vh)     # ct_V^H (I - V V^H)
    return grad + matmul(u / s_row, off_vh)


def _diagonal_of(m, eye):
    return (m * eye).sum(axis=-1)


defvjp(svd_p, _svd_vjp)
defbatch(svd_p, leading_axes_rule(svd_p))   # numpy's linalg maps over leading axes


def _svd_shape(a, full_matrices):
    if a.shape is None:
        dtype = float_dtype(a.dtype)
        return [(None, dtype), (None, real_dtype(dtype)), (None, dtype)]
    batch, m, cols, n, k, dtype = factor_shapes(a, full_matrices)
    rows = n if full_matrices else k
    return [(batch + (m, cols), dtype), (batch + (k,), real_dtype(dtype)),
            (batch + (rows, n), dtype)]


defshape(svd_p, _svd_shape)


# svdvals: the singular values alone.  ds_i = u_i^T dA v_i, so ct_A = U diag(ct_s) V^T,
# defined even where singular values repeat (then any singular basis gives the same sum).
svdvals_p = primitive("svdvals", lambda a: backend.xp.linalg.svd(a, compute_uv=False))
defeffect(svdvals_p, "fresh")
takes_complex(svdvals_p)
def _svdvals_vjp(ct, ans, a):
    u, s, vh = innermost.process(svd_p, a, full_matrices=False)
    return matmul(u * expand_dims(ct, -2), vh)


defvjp(svdvals_p, _svdvals_vjp)
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
        return innermost.process(svdvals_p, x)
    return tuple(innermost.process(svd_p, x, full_matrices=full_matrices))


def _pinv_kernel(a, rcond):
    if rcond is None:
        return backend.xp.linalg.pinv(a)
    return backend.xp.linalg.pinv(a, rcond=rcond)

# pinv, P = A^+ (Golub & Pereyra; valid where the rank does not change):
#   dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P,  so
#   ct_A = -P^T ct P^T + (I - A P) ct^T P P^T + P^T P ct^T (I - P A)
pinv_p = primitive("pinv", _pinv_kernel)
defeffect(pinv_p, "fresh")
takes_complex(pinv_p)
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
    return innermost.process(pinv_p, x, rcond=rcond)


def _pinv_vjp(ct, ans, a, rcond):
    # Every term is a product (m x n)(n x m)(m x n) for an m x n A: multiplied so that the
    # middle result is n x n for a tall A (m x m for a wide one), never the larger square,
    # the memory stays O(mn): a 400000 x 2 matrix has a gradient.
    m, n = a.shape[-2], a.shape[-1]
    tall = m is None or n is None or m >= n

    def chain(x, y, z):
        return matmul(x, matmul(y, z)) if tall else matmul(matmul(x, y), z)

    # complex: the transposes are conjugate ones (conj_of is nothing on reals)
    p, p_t, ct_t = ans, conj_of(swap_last_two(ans)), conj_of(swap_last_two(ct))
    first = -chain(p_t, ct, p_t)                                   # -P^T ct P^T
    left = chain(ct_t, p, p_t)                                     # ct^T P P^T
    second = left - chain(a, p, left)                              # (I - A P) ct^T P P^T
    right = chain(p_t, p, ct_t)                                    # P^T P ct^T
    third = right - chain(right, p, a)                             # P^T P ct^T (I - P A)
    return first + second + third


defvjp(pinv_p, _pinv_vjp)
defbatch(pinv_p, leading_axes_rule(pinv_p))   # numpy's linalg maps over leading axes
defshape(pinv_p, lambda a, rcond: [(None if a.shape is None else
                                    a.shape[:-2] + a.shape[-2:][::-1], float_dtype(a.dtype))])
