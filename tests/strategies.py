"""Hypothesis strategies shared by the op table (tests/op_table.py).

Every input strategy here produces a ``Case``: the float64 arrays that an op
is differentiated with respect to, plus the non-differentiable parameters it
needs (an axis, indices, a condition, a target shape). Shapes are small (at most
3 axes of at most 3 entries, unless said otherwise) so that finite differences
stay cheap, and they include size-0 and size-1 axes and broadcasting pairs
wherever the op allows them.

Input domains keep finite differences meaningful: ``Domain`` bounds the values
and can keep them away from zero (abs, relu, a divisor); ``separated_arrays``
and ``distinct_arrays`` keep the values of two operands (maximum, minimum) or
of one reduction (max, min) away from ties.
"""
import math
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

MAX_DIMS = 3
MAX_SIDE = 3


@dataclass
class Case:
    """One set of inputs for an op: ``fn(*arrays, **params)``."""
    arrays: tuple
    params: dict = field(default_factory=dict)

    def __repr__(self):
        arrays = ", ".join(f"np.array({a.tolist()!r}, dtype=np.{a.dtype}).reshape({a.shape})"
                           for a in self.arrays)
        return f"Case(arrays=({arrays},), params={self.params!r})"


# -- values -------------------------------------------------------------------------
@dataclass(frozen=True)
class Domain:
    """Floats in ``[lo, hi]``; with ``margin`` > 0, only those with ``|x| >= margin``."""
    lo: float = -3.0
    hi: float = 3.0
    margin: float = 0.0

    def elements(self):
        def floats(lo, hi):
            return st.floats(lo, hi, allow_nan=False, allow_infinity=False,
                             allow_subnormal=False)
        if self.margin <= 0:
            return floats(self.lo, self.hi)
        parts = []
        if self.hi >= self.margin:
            parts.append(floats(max(self.lo, self.margin), self.hi))
        if self.lo <= -self.margin:
            parts.append(floats(self.lo, min(self.hi, -self.margin)))
        return st.one_of(*parts)


REALS = Domain(-3.0, 3.0)
POSITIVE = Domain(0.1, 4.0)          # log, sqrt
ABOVE_MINUS_ONE = Domain(-0.5, 3.0)  # log1p
NONZERO = Domain(-3.0, 3.0, 0.1)     # abs, relu (no kink), divisors
POWER_BASE = Domain(0.3, 3.0)
POWER_EXPONENT = Domain(-2.0, 2.0)
SMALL = Domain(-0.1, 0.1)


def arrays(shape, domain=REALS):
    """float64 arrays of ``shape`` (a tuple or a strategy of tuples) in ``domain``."""
    return hnp.arrays(np.float64, shape, elements=domain.elements())


@st.composite
def separated_arrays(draw, shape, parity):
    """Values ``k/2 + parity/4 + jitter`` with ``|jitter| <= 0.05``: an array drawn with
    parity 0 and one drawn with parity 1 differ by at least 0.15 everywhere, so
    ``maximum``/``minimum`` never meet a tie, whatever the broadcasting."""
    ints = draw(hnp.arrays(np.int64, shape, elements=st.integers(-6, 6)))
    jitter = draw(arrays(shape, Domain(-0.05, 0.05)))
    return ints * 0.5 + parity * 0.25 + jitter


@st.composite
def distinct_arrays(draw, shape):
    """Pairwise distinct values (gaps of at least 0.3): no ties for max/min."""
    n = math.prod(shape)
    order = np.array(draw(st.permutations(range(n))), dtype=np.float64).reshape(shape)
    jitter = draw(arrays(shape, Domain(-0.1, 0.1)))
    return (order - n / 2) * 0.5 + jitter


# -- shapes -------------------------------------------------------------------------
def shapes(min_dims=0, max_dims=MAX_DIMS, min_side=0, max_side=MAX_SIDE):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def broadcastable_shapes(num_shapes=2, max_dims=MAX_DIMS):
    """Tuples of ``num_shapes`` shapes that broadcast together (sizes 0 to 3)."""
    return hnp.mutually_broadcastable_shapes(
        num_shapes=num_shapes, min_dims=0, max_dims=max_dims, min_side=0,
        max_side=MAX_SIDE).map(lambda b: b.input_shapes)


@st.composite
def axis_for(draw, ndim, extra=0):
    """One axis of a rank-``ndim`` tensor (``extra=1``: of the result of adding an axis),
    negative or not."""
    n = ndim + extra
    return draw(st.integers(-n, n - 1))


@st.composite
def axes_for(draw, ndim):
    """A reduction's ``axis`` argument: None, one int, or a tuple of distinct axes."""
    if ndim == 0:
        return draw(st.sampled_from([None, ()]))
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return None
    if kind == "int":
        return draw(axis_for(ndim))
    chosen = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    return tuple(a - ndim if draw(st.booleans()) else a for a in chosen)


def _normal_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else axis
    return tuple(a % ndim for a in axes)


# -- cases --------------------------------------------------------------------------
def unary(domain=REALS, shape=None):
    """One array of any shape (0-d, size-0 and size-1 axes included)."""
    shape = shapes() if shape is None else shape
    return arrays(shape, domain).map(lambda x: Case((x,)))


@st.composite
def binary(draw, x_domain=REALS, y_domain=REALS):
    """Two arrays whose shapes broadcast together."""
    sx, sy = draw(broadcastable_shapes(2))
    return Case((draw(arrays(sx, x_domain)), draw(arrays(sy, y_domain))))


@st.composite
def separated_binary(draw):
    """Two broadcastable arrays that never tie (for maximum/minimum); which operand
    is the larger one varies from entry to entry."""
    sx, sy = draw(broadcastable_shapes(2))
    parity = draw(st.integers(0, 1))
    return Case((draw(separated_arrays(sx, parity)), draw(separated_arrays(sy, 1 - parity))))


@st.composite
def where_case(draw):
    """where(condition, x, y): the three shapes broadcast together."""
    sc, sx, sy = draw(broadcastable_shapes(3))
    condition = draw(hnp.arrays(np.bool_, sc))
    return Case((draw(arrays(sx)), draw(arrays(sy))), {"condition": condition})


@st.composite
def same_shape_list(draw, min_size=1, max_size=3):
    """1 to 3 arrays of one shape (add_n)."""
    shape = draw(shapes())
    n = draw(st.integers(min_size, max_size))
    return Case(tuple(draw(arrays(shape)) for _ in range(n)))


@st.composite
def same_shape_pair(draw, first=REALS, second=REALS):
    """Two arrays of one shape, from two domains (relu_grad: any g, an x away from 0)."""
    shape = draw(shapes())
    return Case((draw(arrays(shape, first)), draw(arrays(shape, second))))


@st.composite
def any_shape_list(draw, min_size=1, max_size=3):
    """1 to 3 arrays of unrelated shapes (identity_n)."""
    n = draw(st.integers(min_size, max_size))
    return Case(tuple(draw(arrays(shapes())) for _ in range(n)))


@st.composite
def matmul_case(draw):
    """Vectors, matrices and batches of matrices with broadcast batch axes."""
    m, k, p = (draw(st.integers(0, 3)) for _ in range(3))
    bx, by = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=2, min_side=0, max_side=2)).input_shapes
    x_shape = (k,) if draw(st.booleans()) else bx + (m, k)
    y_shape = (k,) if draw(st.booleans()) else by + (k, p)
    return Case((draw(arrays(x_shape)), draw(arrays(y_shape))))


@st.composite
def matmul_transposed_case(draw):
    """Matrices (with batch axes) and the transpose_a / transpose_b flags; one operand
    may be a vector, the other then a transposed matrix (a flag belongs to a matrix)."""
    m, k, p = (draw(st.integers(0, 3)) for _ in range(3))
    bx, by = draw(hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=2, min_side=0, max_side=2)).input_shapes
    ta, tb = draw(st.booleans()), draw(st.booleans())
    vector = draw(st.sampled_from([None, "x", "y"]))
    ta, tb = (ta and vector != "x") or vector == "y", (tb and vector != "y") or vector == "x"
    x_shape = (k,) if vector == "x" else bx + ((k, m) if ta else (m, k))
    y_shape = (k,) if vector == "y" else by + ((p, k) if tb else (k, p))
    return Case((draw(arrays(x_shape)), draw(arrays(y_shape))),
                {"transpose_a": ta, "transpose_b": tb})


@st.composite
def reduction_case(draw, distinct=False, empty_reduction=True):
    """An array, an ``axis`` (None, int or tuple) and ``keepdims``.

    ``empty_reduction=False`` makes every reduced axis non-empty (the max or min
    of nothing is undefined; the sum of nothing is 0, its mean NaN and its
    logsumexp -inf, as numpy says).
    """
    shape = draw(shapes())
    axis = draw(axes_for(len(shape)))
    if not empty_reduction:
        reduced = _normal_axes(axis, len(shape))
        shape = tuple(max(n, 1) if i in reduced else n for i, n in enumerate(shape))
    x = draw(distinct_arrays(shape)) if distinct else draw(arrays(shape))
    return Case((x,), {"axis": axis, "keepdims": draw(st.booleans())})


@st.composite
def along_axis_case(draw):
    """An array and one ``axis`` of it (softmax, log_softmax). The axis may be empty:
    the softmax of no entries is no entries."""
    shape = draw(shapes(min_dims=1))
    return Case((draw(arrays(shape)),), {"axis": draw(axis_for(len(shape)))})


@st.composite
def sparse_xent_case(draw):
    """Logits of shape ``batch + (classes,)`` (at least one class) and integer labels of
    shape ``batch``, each a valid class (sparse_softmax_cross_entropy_with_logits)."""
    batch = draw(shapes(max_dims=2))
    classes = draw(st.integers(1, MAX_SIDE))
    labels = draw(hnp.arrays(np.int64, batch, elements=st.integers(0, classes - 1)))
    return Case((draw(arrays(batch + (classes,))),), {"labels": labels})


@st.composite
def reshape_case(draw):
    shape = draw(shapes())
    size = math.prod(shape)
    targets = [(-1,), (size,), tuple(reversed(shape)), (1,) + shape, shape + (1,)]
    if size == 1:
        targets.append(())
    if shape and shape[0] and size:
        targets.append((shape[0], -1))
    return Case((draw(arrays(shape)),), {"shape": draw(st.sampled_from(targets))})


@st.composite
def transpose_case(draw):
    shape = draw(shapes(max_dims=4, max_side=2))
    ndim = len(shape)
    if draw(st.booleans()):
        axes = None
    else:
        perm = draw(st.permutations(range(ndim)))
        axes = tuple(a - ndim if draw(st.booleans()) else a for a in perm)
    return Case((draw(arrays(shape)),), {"axes": axes})


@st.composite
def expand_dims_case(draw):
    shape = draw(shapes())
    return Case((draw(arrays(shape)),), {"axis": draw(axis_for(len(shape), extra=1))})


@st.composite
def squeeze_case(draw):
    shape = tuple(draw(st.lists(st.sampled_from([0, 1, 1, 2, 3]), max_size=4)))
    ones = [i for i, n in enumerate(shape) if n == 1]
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none" or not ones:
        axis = None
    else:
        chosen = draw(st.lists(st.sampled_from(ones), unique=True, min_size=1))
        chosen = [a - len(shape) if draw(st.booleans()) else a for a in chosen]
        axis = chosen[0] if kind == "int" else tuple(chosen)
    return Case((draw(arrays(shape)),), {"axis": axis})


@st.composite
def broadcast_to_case(draw):
    """x of a shape that broadcasts to ``shape`` (fewer axes, or size 1 where it repeats)."""
    target = draw(shapes())
    ndim = draw(st.integers(0, len(target)))
    tail = target[len(target) - ndim:]
    x_shape = tuple(1 if draw(st.booleans()) else n for n in tail)
    return Case((draw(arrays(x_shape)),), {"shape": target})


@st.composite
def concat_case(draw):
    """1 to 3 arrays that agree except along ``axis`` (sizes 0 to 3 there)."""
    base = list(draw(shapes(min_dims=1)))
    axis = draw(axis_for(len(base)))
    xs = []
    for _ in range(draw(st.integers(1, 3))):
        base[axis] = draw(st.integers(0, 3))
        xs.append(draw(arrays(tuple(base))))
    return Case(tuple(xs), {"axis": axis})


@st.composite
def stack_case(draw):
    shape = draw(shapes(max_dims=2))
    n = draw(st.integers(1, 3))
    return Case(tuple(draw(arrays(shape)) for _ in range(n)),
                {"axis": draw(axis_for(len(shape), extra=1))})


@st.composite
def split_case(draw):
    """``num_or_size_splits`` as a count dividing the axis, or as sizes (zeros allowed)."""
    shape = draw(shapes(min_dims=1))
    axis = draw(axis_for(len(shape)))
    length = shape[axis]
    if draw(st.booleans()):
        divisors = [d for d in range(1, 4) if length % d == 0]
        sizes = draw(st.sampled_from(divisors))
    else:
        cuts = sorted(draw(st.lists(st.integers(0, length), max_size=2)))
        bounds = [0] + cuts + [length]
        sizes = [b - a for a, b in zip(bounds, bounds[1:])]
    return Case((draw(arrays(shape)),), {"num_or_size_splits": sizes, "axis": axis})


def index_arrays(n, shape):
    """int64 indices into an axis of size ``n``, negative ones included (none when n=0)."""
    if n == 0:
        shape = st.just((0,))
    return hnp.arrays(np.int64, shape, elements=st.integers(-n, max(n - 1, -n)))


@st.composite
def scatter_update_case(draw):
    """scatter_update(x, indices, values): distinct rows (or one scalar row) replaced."""
    shape = draw(shapes(min_dims=1))
    rows = draw(st.permutations(range(shape[0])))[:draw(st.integers(0, shape[0]))]
    indices = np.asarray(rows, dtype=np.int64)
    if rows and draw(st.booleans()):
        indices = indices[0]   # one row, written as TensorArray.write does
    values_shape = np.empty(shape)[indices].shape
    return Case((draw(arrays(shape)), draw(arrays(values_shape))), {"indices": indices})


@st.composite
def resize_rows_case(draw):
    """resize_rows(x, n, x_rows): x cut or zero-padded to n rows (0 to 2 more than it has)."""
    shape = draw(shapes(min_dims=1))
    return Case((draw(arrays(shape)),), {"n": draw(st.integers(0, shape[0] + 2))})


@st.composite
def gather_case(draw):
    """gather along any axis; indices of rank 0 to 2, with repeats."""
    shape = draw(shapes(min_dims=1))
    axis = draw(axis_for(len(shape)))
    indices = draw(index_arrays(shape[axis], shapes(max_dims=2)))
    return Case((draw(arrays(shape)),), {"indices": indices, "axis": axis})


@st.composite
def index_keys(draw, shape):
    """A numpy index for an array of ``shape`` (rank >= 1): ints, int arrays (picking
    rows, with repeats: a sparse gradient), slices with any step, tuples, Ellipsis,
    newaxis and boolean masks."""
    n = shape[0]
    kinds = ["rows", "indices_2d", "slice", "mask", "newaxis"]
    if n:
        kinds += ["int", "rows_list"]
    if len(shape) >= 2 and shape[1]:
        kinds.append("tuple")
    if shape[-1]:
        kinds.append("ellipsis")
    kind = draw(st.sampled_from(kinds))
    if kind == "int":
        return draw(st.integers(-n, n - 1))
    if kind == "rows":
        return draw(index_arrays(n, st.tuples(st.integers(0, 4))))
    if kind == "rows_list":
        return draw(index_arrays(n, st.tuples(st.integers(1, 3)))).tolist()
    if kind == "indices_2d":
        return draw(index_arrays(n, st.tuples(st.integers(1, 2), st.integers(0, 2))))
    if kind == "slice":
        bound = st.none() | st.integers(-4, 4)
        step = st.sampled_from([None, 1, 2, -1, -2])
        return slice(draw(bound), draw(bound), draw(step))
    if kind == "tuple":
        return (slice(None, None, draw(st.sampled_from([1, -1]))),
                draw(st.integers(-shape[1], shape[1] - 1)))
    if kind == "ellipsis":
        return (Ellipsis, draw(st.integers(-shape[-1], shape[-1] - 1)))
    if kind == "mask":
        return draw(hnp.arrays(np.bool_, shape))
    return (None, slice(None))  # newaxis


@st.composite
def getitem_case(draw):
    shape = draw(shapes(min_dims=1))
    return Case((draw(arrays(shape)),), {"key": draw(index_keys(shape))})


@st.composite
def index_add_case(draw):
    """index_add(x, values, key): ``values`` has the shape of ``x[key]``."""
    shape = draw(shapes(min_dims=1))
    key = draw(index_keys(shape))
    x = draw(arrays(shape))
    values = draw(arrays(np.empty(shape)[key].shape))
    return Case((x, values), {"key": key})


@st.composite
def reshape_like_case(draw):
    """reshape_like(g, x): g holds as many entries as x, in another shape."""
    x = draw(arrays(draw(shapes())))
    return Case((draw(arrays((x.size,))), x))


@st.composite
def broadcast_like_case(draw):
    """broadcast_like(g, x): g broadcasts to x's shape."""
    case = draw(broadcast_to_case())
    g = case.arrays[0]
    return Case((g, draw(arrays(case.params["shape"]))))


@st.composite
def repeat_like_case(draw):
    """repeat_like(value, like): value repeated along a new axis 0 as long as like's."""
    value = draw(arrays(draw(shapes(max_dims=2))))
    return Case((value, draw(arrays((draw(st.integers(1, 3)),)))))


@st.composite
def sum_like_case(draw):
    """sum_like(g, x): x broadcasts to g's shape, and g is summed back to it."""
    case = draw(broadcast_to_case())
    return Case((draw(arrays(case.params["shape"])), case.arrays[0]))


@st.composite
def scatter_add_case(draw):
    """scatter_add(x, indices, values, axis): values has the shape of gather(x, indices, axis)."""
    shape = draw(shapes(min_dims=1))
    axis = draw(axis_for(len(shape)))
    indices = draw(index_arrays(shape[axis], shapes(max_dims=2)))
    values_shape = np.take(np.empty(shape), indices, axis=axis).shape
    return Case((draw(arrays(shape)), draw(arrays(values_shape))),
                {"indices": indices, "axis": axis})
