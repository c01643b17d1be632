"""Hypothesis strategies for the op table's products and ``tg.linalg`` lines (issue 18).

Products draw operands whose contracted sizes match (0 to 3 each). The matrix
functions draw *well-conditioned* inputs, so that finite differences are accurate:
diagonally dominant matrices for inv/solve/det (never singular), symmetric positive
definite ones for cholesky, symmetric ones with eigenvalues at least 1 apart for eigh,
and matrices with singular values at least 0.5 apart (and away from 0) for svd, qr
and pinv.
"""
import numpy as np
from hypothesis import strategies as st
from strategies import Case, Domain, arrays

SIDE = st.integers(0, 3)
UNIT = Domain(-1.0, 1.0)

# (subscripts, one shape template per operand): letters stand for sizes drawn once per
# letter, "1" for a size-1 axis that broadcasts, "B" for the axes "..." stands for.
EINSUM = [
    ("ij,jk->ik", ["ij", "jk"]), ("ij,jk", ["ij", "jk"]), ("ii->", ["ii"]), ("ii", ["ii"]),
    ("ii->i", ["ii"]), ("ij->i", ["ij"]), ("ij->ji", ["ij"]), ("i,j", ["i", "j"]),
    ("i,i->", ["i", "i"]), ("...ij,...jk", ["Bij", "jk"]), ("...i,...i->...", ["1i", "Bi"]),
    ("iij,jk->ki", ["iij", "jk"]), ("ba,Ab", ["ba", "Ab"]), ("ij,ij->ij", ["1j", "ij"]),
    ("i,i,i->i", ["i", "i", "i"]), ("bij,bjk->bik", ["bij", "bjk"]), ("...", ["B"]),
    ("ijk->kj", ["ijk"]),
]


@st.composite
def _sizes(draw, letters, low=0):
    return {c: draw(st.integers(low, 3)) for c in sorted(set(letters))}


@st.composite
def einsum_case(draw):
    subscripts, templates = draw(st.sampled_from(EINSUM))
    sizes = draw(_sizes("".join(templates)))
    sizes["1"] = 1
    sizes["B"] = draw(st.integers(1, 3))   # a broadcast axis: the "1" templates meet it
    shapes = [tuple(sizes[c] for c in t) for t in templates]
    return Case(tuple(draw(arrays(s)) for s in shapes), {"subscripts": subscripts})


# dot's cases: (rank of a, rank of b), with a's last axis against b's second-to-last
# (or only) axis.
DOT_RANKS = [(0, 0), (0, 2), (2, 0), (1, 1), (2, 1), (1, 2), (2, 2), (3, 1), (1, 3), (3, 3),
             (3, 2)]


@st.composite
def dot_case(draw):
    ra, rb = draw(st.sampled_from(DOT_RANKS))
    k = draw(SIDE)
    sa = tuple(draw(SIDE) for _ in range(ra - 1)) + (k,) if ra else ()
    if rb == 0:
        sb = ()
    elif rb == 1:
        sb = (k,)
    else:
        sb = tuple(draw(SIDE) for _ in range(rb - 2)) + (k, draw(SIDE))
    if ra == 0:
        sa = ()
    return Case((draw(arrays(sa)), draw(arrays(sb))))


@st.composite
def inner_case(draw):
    ra, rb = draw(st.sampled_from([(0, 1), (1, 1), (2, 1), (2, 2), (3, 2)]))
    k = draw(SIDE)
    sa = tuple(draw(SIDE) for _ in range(ra - 1)) + (k,)
    sb = tuple(draw(SIDE) for _ in range(rb - 1)) + (k,)
    return Case((draw(arrays(sa if ra else ())), draw(arrays(sb))))


@st.composite
def two_any(draw):
    """Two operands of any shapes (outer, kron)."""
    return Case(tuple(draw(arrays(tuple(draw(SIDE) for _ in range(draw(st.integers(0, 3))))))
                      for _ in range(2)))


@st.composite
def vdot_case(draw):
    n = draw(st.sampled_from([0, 1, 2, 3, 4, 6]))
    shape_a = draw(st.sampled_from([s for s in [(n,), (1, n), (n, 1)]]))
    shape_b = (2, n // 2) if n % 2 == 0 else (n,)
    return Case((draw(arrays(shape_a)), draw(arrays(shape_b))))


@st.composite
def tensordot_case(draw):
    """axes as an int N, or as a pair of lists (in any order)."""
    free_a = [draw(SIDE) for _ in range(draw(st.integers(0, 2)))]
    free_b = [draw(SIDE) for _ in range(draw(st.integers(0, 2)))]
    summed = [draw(SIDE) for _ in range(draw(st.integers(0, 2)))]
    if draw(st.booleans()):
        return Case((draw(arrays(tuple(free_a + summed))), draw(arrays(tuple(summed + free_b)))),
                    {"axes": len(summed)})
    a_axes = draw(st.permutations(range(len(free_a) + len(summed))))
    b_axes = draw(st.permutations(range(len(free_b) + len(summed))))
    sa, sb = [None] * len(a_axes), [None] * len(b_axes)
    for i, n in enumerate(free_a + summed):
        sa[a_axes[i]] = n
    for i, n in enumerate(summed + free_b):
        sb[b_axes[i]] = n
    axes = ([a_axes[len(free_a) + j] for j in range(len(summed))], list(b_axes[:len(summed)]))
    return Case((draw(arrays(tuple(sa))), draw(arrays(tuple(sb)))), {"axes": axes})


@st.composite
def cross_case(draw):
    na, nb = draw(st.sampled_from([(3, 3), (2, 2), (2, 3), (3, 2)]))
    batch = tuple(draw(SIDE) for _ in range(draw(st.integers(0, 2))))
    at = draw(st.integers(0, len(batch)))
    sa = batch[:at] + (na,) + batch[at:]
    params = {"axisa": at - len(batch) - 1}
    if na == nb == 3:
        params["axisc"] = draw(st.integers(-len(batch) - 1, len(batch)))
    return Case((draw(arrays(sa)), draw(arrays(batch[-1:] + (nb,)))), params)


# -- matrices for the matrix functions -----------------------------------------------

def _batch(draw, max_dims=1):
    return tuple(draw(st.integers(1, 2)) for _ in range(draw(st.integers(0, max_dims))))


#: A dense, well-conditioned matrix: the orthogonal factors drawn from it have no zero
#: entries to make a sign or a Householder reflection jump.
DENSE = np.array([[2.0, 1.0, -1.5], [1.0, -2.5, 1.0], [0.5, 1.5, 3.0]])


@st.composite
def _orthogonal(draw, batch, n):
    q, r = np.linalg.qr(DENSE[:n, :n] + 0.3 * draw(arrays(batch + (n, n), UNIT)))
    return q


@st.composite
def dominant(draw, min_side=1):
    """Strictly diagonally dominant (so invertible, well conditioned): 0.5 R + n I with
    |R| <= 1, and each diagonal entry's sign drawn."""
    batch, n = _batch(draw), draw(st.integers(min_side, 3))
    signs = draw(st.sampled_from([1.0, -1.0]))
    return 0.5 * draw(arrays(batch + (n, n), UNIT)) + signs * n * np.eye(n)


@st.composite
def matrix_case(draw):
    return Case((draw(dominant()),))


@st.composite
def solve_case(draw):
    a = draw(dominant())
    n = a.shape[-1]
    if draw(st.booleans()):
        b = draw(arrays((n,)))                                  # one vector
    else:
        b = draw(arrays(a.shape[:-2][draw(st.integers(0, a.ndim - 2)):] + (n, draw(SIDE))))
    return Case((a, b))


@st.composite
def spd(draw):
    """Symmetric positive definite: R R^T + n I."""
    batch, n = _batch(draw), draw(st.integers(1, 3))
    r = draw(arrays(batch + (n, n), UNIT))
    return r @ np.swapaxes(r, -1, -2) + n * np.eye(n)


@st.composite
def cholesky_case(draw):
    return Case((draw(spd()),))


@st.composite
def eigh_case(draw):
    """Symmetric, eigenvalues at least 1 apart: Q diag(w) Q^T."""
    batch, n = _batch(draw), draw(st.integers(1, 3))
    q = draw(_orthogonal(batch, n))
    w = np.sort(draw(arrays(batch + (n,), Domain(-0.3, 0.3)))) + 1.5 * np.arange(n) - 1.0
    return Case(((q * w[..., None, :]) @ np.swapaxes(q, -1, -2),))


@st.composite
def well_separated(draw, wide=True):
    """m x n (m < n only if ``wide``) with singular values 1, 1.6, 2.2 (+-0.1)."""
    batch = _batch(draw)
    m, n = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    if not wide and m < n:
        m, n = n, m
    k = min(m, n)
    u = draw(_orthogonal(batch, m))[..., :k]
    v = draw(_orthogonal(batch, n))[..., :k]
    s = 1.0 + 0.6 * np.arange(k) + draw(arrays(batch + (k,), Domain(-0.1, 0.1)))
    return (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)


@st.composite
def svd_case(draw):
    return Case((draw(well_separated()),))


@st.composite
def tall_case(draw):
    return Case((draw(well_separated(wide=False)),))


@st.composite
def norm_case(draw):
    """Every vector and matrix ord numpy.linalg.norm takes, with axis and keepdims."""
    keepdims = draw(st.booleans())
    if draw(st.booleans()):   # a vector norm
        ord_ = draw(st.sampled_from([None, 1, 2, np.inf, -np.inf, 3, 0.5, -1]))
        shape = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, 3))))
        axis = draw(st.sampled_from([None, -1, 0])) if len(shape) == 1 else \
            draw(st.integers(-len(shape), len(shape) - 1))
        if ord_ is not None and ord_ != 2 and len(shape) > 1 and axis is None:
            axis = -1
        x = draw(arrays(shape, Domain(-3.0, 3.0, 0.2)))
        if ord_ in (np.inf, -np.inf):   # no ties for the largest (smallest) |x|
            x = _distinct_magnitudes(draw, shape)
        return Case((x,), {"ord": ord_, "axis": axis, "keepdims": keepdims})
    ord_ = draw(st.sampled_from([None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]))
    if ord_ in ("nuc", 2, -2):
        x = draw(well_separated())
        axis = None if x.ndim == 2 else (-2, -1)
    else:
        shape = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
        x = _distinct_magnitudes(draw, shape)
        axis = draw(st.sampled_from([None, (0, 1), (1, 0), (-1, 0)]))
    return Case((x,), {"ord": ord_, "axis": axis, "keepdims": keepdims})


def _distinct_magnitudes(draw, shape):
    """Entries whose magnitudes (and so row and column sums of them) rarely tie: distinct
    powers of 1.37 with drawn signs."""
    n = int(np.prod(shape))
    order = np.array(draw(st.permutations(range(n))), dtype=np.float64).reshape(shape)
    signs = np.where(draw(arrays(shape, UNIT)) < 0, -1.0, 1.0)
    return signs * 1.37 ** (order - n / 2)


def cross_reference(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """numpy's cross, 2-vectors included (numpy 2 deprecates them, and later numpy
    refuses them): a 2-vector's third component is 0, and two 2-vectors give the z
    component alone."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = np.moveaxis(np.asarray(a), axisa, -1), np.moveaxis(np.asarray(b), axisb, -1)

    def three(v):
        if v.shape[-1] == 3:
            return v
        return np.concatenate([v, np.zeros(v.shape[:-1] + (1,), v.dtype)], axis=-1)
    c = np.cross(three(a), three(b))
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return c[..., 2]
    return np.moveaxis(c, -1, axisc)
