"""Hypothesis strategies for the op table's lines of numpy's wider surface (issue 18):
the elementwise ops with jumps and kinks, and ops with their own parameters.

Like ``strategies.py`` (whose helpers these reuse), each gives a ``Case``: the float64
arrays to differentiate plus the op's other parameters, with values kept away from
the points where finite differences would straddle a jump or a kink.
"""
import numpy as np
import strategies as S
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from strategies import Case, Domain, arrays, broadcastable_shapes, shapes


@st.composite
def steps_from(draw, shape, lo, hi, offset):
    """Values ``k/2 + offset + jitter`` with integer k in [lo, hi] and |jitter| <= 0.05:
    arrays drawn with offsets 0 and 0.25 differ by at least 0.15 everywhere."""
    ints = draw(hnp.arrays(np.int64, shape, elements=st.integers(lo, hi)))
    jitter = draw(arrays(shape, Domain(-0.05, 0.05)))
    return ints * 0.5 + offset + jitter


@st.composite
def clip_case(draw):
    """clip(x, a_min, a_max) with three broadcasting arrays: a_min < 0 < a_max, and x
    below, between and above them but never within 0.15 of a bound."""
    sx, slo, shi = draw(broadcastable_shapes(3))
    return Case((draw(steps_from(sx, -7, 6, 0.0)), draw(steps_from(slo, -6, -1, 0.25)),
                 draw(steps_from(shi, 0, 5, 0.25))))


@st.composite
def clip_one_bound_case(draw):
    """clip(x, a_min, a_max) with Python numbers as bounds, one of them None."""
    x = draw(steps_from(draw(shapes()), -6, 6, 0.0))
    bound = draw(st.sampled_from([-1.25, 0.25, 1.75]))
    bounds = draw(st.sampled_from([(bound, None), (None, bound), (-1.25, 1.75)]))
    return Case((x,), {"a_min": bounds[0], "a_max": bounds[1]})


@st.composite
def remainder_case(draw):
    """x and y (broadcasting) with x / y never within 0.1 of an integer, where mod and
    fmod jump: the larger operand is built from the other one's broadcast values."""
    sx, sy = draw(broadcastable_shapes(2))
    full = np.broadcast_shapes(sx, sy)
    ratio = draw(hnp.arrays(np.int64, full, elements=st.integers(-3, 3))) + \
        draw(arrays(full, Domain(0.1, 0.9)))
    if sy != full:   # y is broadcast: x = ratio * y has the full shape
        y = draw(arrays(sy, Domain(-3.0, 3.0, 0.3)))
        return Case((ratio * np.broadcast_to(y, full), y))
    x = draw(arrays(sx, Domain(-3.0, 3.0, 0.3)))   # y has the full shape: y = x / ratio
    return Case((x, np.broadcast_to(x, full) / ratio))


@st.composite
def non_finite_case(draw):
    """An array with some entries NaN, inf or -inf (nan_to_num)."""
    x = draw(arrays(draw(shapes())))
    specials = draw(hnp.arrays(np.int64, x.shape, elements=st.integers(0, 5)))
    x = np.where(specials == 1, np.nan, x)
    x = np.where(specials == 2, np.inf, x)
    return Case((np.where(specials == 3, -np.inf, x),))


# -- reductions and scans -----------------------------------------------------------
AWAY_FROM_TINY = Domain(-1.5, 1.5, 0.1)


@st.composite
def with_zeros(draw, x, many):
    """``x`` with exact zeros put in: any number (``many``), or at most one in the whole
    array (the zeros hypothesis drew itself are moved off zero first)."""
    if x.size == 0:
        return x
    if many:
        return np.where(draw(hnp.arrays(np.bool_, x.shape)), 0.0, x)
    x = np.where(x == 0, 0.75, x)
    if draw(st.booleans()):
        x.flat[draw(st.integers(0, x.size - 1))] = 0.0
    return x


@st.composite
def prod_case(draw, many_zeros=False):
    """prod(x, axis, keepdims) on values in [-1.5, 1.5] (products stay moderate) with
    exact zeros, other entries at least 0.1 from 0: the derivative of ans / x_i in
    x_i cancels two terms of size ans / x_i^2, which for tiny x_i loses every digit."""
    shape = draw(shapes())
    x = draw(with_zeros(draw(arrays(shape, AWAY_FROM_TINY)), many_zeros))
    return Case((x,), {"axis": draw(S.axes_for(len(shape))), "keepdims": draw(st.booleans())})


@st.composite
def scan_case(draw, many_zeros=None, distinct=False):
    """An array and ``axis`` (None: flattened, or one axis of it): cumsum, cumprod,
    sort. ``many_zeros`` True/False puts exact zeros in (see ``with_zeros``);
    ``distinct`` keeps entries apart (no ties for sort)."""
    shape = draw(shapes())
    axis = None if not shape or draw(st.booleans()) else draw(S.axis_for(len(shape)))
    if distinct:
        x = draw(S.distinct_arrays(shape))
    else:
        x = draw(arrays(shape, Domain(-1.5, 1.5) if many_zeros is None else AWAY_FROM_TINY))
    if many_zeros is not None:
        x = draw(with_zeros(x, many_zeros))
    return Case((x,), {"axis": axis})


@st.composite
def diff_case(draw):
    shape = draw(shapes(min_dims=1))
    return Case((draw(arrays(shape)),), {"n": draw(st.integers(0, 3)),
                                          "axis": draw(S.axis_for(len(shape)))})


@st.composite
def var_case(draw, distinct=False):
    """var/std(x, axis, ddof, keepdims): every reduced group has more than ``ddof``
    entries; ``distinct`` entries for std (whose derivative is a cone where all are equal)."""
    shape = draw(shapes())
    axis = draw(S.axes_for(len(shape)))
    reduced = S._normal_axes(axis, len(shape))
    shape = tuple(max(n, 1) if i in reduced else n for i, n in enumerate(shape))
    n = int(np.prod([shape[i] for i in reduced]))
    x = draw(S.distinct_arrays(shape)) if distinct else draw(arrays(shape))
    return Case((x,), {"axis": axis, "ddof": draw(st.integers(0, 1 if n > 1 else 0)),
                       "keepdims": draw(st.booleans())})


@st.composite
def along_axis_indices(draw, shape):
    """``(axis, indices)`` for take_along_axis on an array of ``shape`` (rank >= 1):
    indices of the same rank, size 1 or the array's size on the other axes, any length
    (0 to 4) along ``axis``, with repeats and negative ones."""
    axis = draw(S.axis_for(len(shape)))
    n = shape[axis]
    ishape = tuple((draw(st.integers(0, 4)) if n else 0) if i == axis % len(shape)
                   else draw(st.sampled_from([1, d])) for i, d in enumerate(shape))
    indices = draw(hnp.arrays(np.int64, ishape, elements=st.integers(-n, max(n - 1, -n))))
    return axis, indices


@st.composite
def take_along_axis_case(draw):
    shape = draw(shapes(min_dims=1))
    axis, indices = draw(along_axis_indices(shape))
    return Case((draw(arrays(shape)),), {"indices": indices, "axis": axis})


@st.composite
def add_along_axis_case(draw):
    """add_along_axis(x, indices, values, axis): values shaped like take_along_axis's output."""
    shape = draw(shapes(min_dims=1))
    axis, indices = draw(along_axis_indices(shape))
    values_shape = np.take_along_axis(np.empty(shape), indices, axis=axis).shape
    return Case((draw(arrays(shape)), draw(arrays(values_shape))),
                {"indices": indices, "axis": axis})


@st.composite
def diagonal_case(draw):
    """diagonal(x, offset, axis1, axis2) of a tensor of rank 2 to 4."""
    shape = draw(shapes(min_dims=2, max_dims=4))
    axis1, axis2 = draw(st.lists(st.integers(0, len(shape) - 1), min_size=2, max_size=2,
                                 unique=True))
    return Case((draw(arrays(shape)),), {"offset": draw(st.integers(-3, 3)),
                                         "axis1": axis1 - len(shape) * draw(st.integers(0, 1)),
                                         "axis2": axis2})


@st.composite
def undiagonal_case(draw):
    """undiagonal(g, x, ...): g shaped like diagonal(x, ...)."""
    case = draw(diagonal_case())
    x = case.arrays[0]
    g = draw(arrays(np.diagonal(x, **case.params).shape))
    return Case((g, x), case.params)


# -- rearranging, copying, joining ----------------------------------------------------
@st.composite
def axes_or_none(draw, ndim):
    """None, one axis, or a tuple of distinct axes (negative ones too)."""
    kind = draw(st.sampled_from(["none", "int", "tuple"])) if ndim else "none"
    if kind == "none":
        return None
    if kind == "int":
        return draw(S.axis_for(ndim))
    chosen = draw(st.lists(st.integers(0, ndim - 1), unique=True, min_size=1, max_size=ndim))
    return tuple(a - ndim * draw(st.integers(0, 1)) for a in chosen)


@st.composite
def flip_case(draw):
    shape = draw(shapes())
    return Case((draw(arrays(shape)),), {"axis": draw(axes_or_none(len(shape)))})


@st.composite
def roll_case(draw):
    """roll(x, shift, axis): an int shift (axis None or one axis), or one per axis."""
    shape = draw(shapes())
    axis = draw(axes_or_none(len(shape)))
    if isinstance(axis, tuple):
        shift = tuple(draw(st.integers(-4, 4)) for _ in axis)
    else:
        shift = draw(st.integers(-4, 4))
    return Case((draw(arrays(shape)),), {"shift": shift, "axis": axis})


@st.composite
def rot90_case(draw):
    shape = draw(shapes(min_dims=2))
    a, b = draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=2, max_size=2)
                .filter(lambda ab: ab[0] % len(shape) != ab[1] % len(shape)))
    return Case((draw(arrays(shape)),), {"k": draw(st.integers(-1, 4)), "axes": (a, b)})


@st.composite
def moveaxis_case(draw):
    shape = draw(shapes(min_dims=1, max_dims=4, max_side=2))
    n = len(shape)
    k = draw(st.integers(1, n))
    source = draw(st.lists(st.integers(0, n - 1), unique=True, min_size=k, max_size=k))
    destination = draw(st.lists(st.integers(0, n - 1), unique=True, min_size=k, max_size=k))
    if k == 1 and draw(st.booleans()):
        source, destination = source[0], destination[0] - n
    return Case((draw(arrays(shape)),), {"source": source, "destination": destination})


@st.composite
def swapaxes_case(draw):
    shape = draw(shapes(min_dims=1))
    return Case((draw(arrays(shape)),), {"axis1": draw(S.axis_for(len(shape))),
                                         "axis2": draw(S.axis_for(len(shape)))})


@st.composite
def repeat_case(draw):
    """repeat(x, repeats, axis): an int, or one count (0 to 2) per entry along the axis."""
    shape = draw(shapes())
    axis = None if not shape or draw(st.booleans()) else draw(S.axis_for(len(shape)))
    n = int(np.prod(shape)) if axis is None else shape[axis]
    if draw(st.booleans()):
        repeats = draw(st.integers(0, 3))
    else:
        repeats = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    return Case((draw(arrays(shape)),), {"repeats": repeats, "axis": axis})


@st.composite
def unrepeat_case(draw):
    case = draw(repeat_case())
    x = case.arrays[0]
    axis = case.params["axis"]
    if axis is None:
        x, axis = x.ravel(), 0
    g = draw(arrays(np.repeat(x, case.params["repeats"], axis=axis).shape))
    return Case((g, x), {"repeats": case.params["repeats"], "axis": axis % x.ndim})


@st.composite
def tile_case(draw):
    shape = draw(shapes(max_side=2))
    reps = tuple(draw(st.lists(st.integers(0, 2), min_size=1, max_size=3)))
    return Case((draw(arrays(shape)),), {"reps": reps if len(reps) > 1 else reps[0]})


@st.composite
def untile_case(draw):
    case = draw(tile_case())
    x = case.arrays[0]
    reps = case.params["reps"]
    reps = reps if isinstance(reps, tuple) else (reps,)
    return Case((draw(arrays(np.tile(x, reps).shape)), x), {"reps": reps})


@st.composite
def pad_case(draw):
    """pad(x, pad_width, mode, ...): widths 0 to 3 (wider than x too: reflect repeats),
    as an int, a pair, or a pair per axis; every axis non-empty except in constant mode."""
    mode = draw(st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]))
    shape = draw(shapes(min_side=0 if mode == "constant" else 1))
    kind = draw(st.sampled_from(["int", "pair", "per_axis"] if shape else ["int", "pair"]))
    width = st.integers(0, 3)
    if kind == "int":
        pad_width = draw(width)
    elif kind == "pair":
        pad_width = (draw(width), draw(width))
    else:
        pad_width = tuple((draw(width), draw(width)) for _ in shape)
    params = {"pad_width": pad_width, "mode": mode}
    if mode == "constant":
        params["constant_values"] = draw(st.sampled_from([0, 1.5, -2.0]))
    return Case((draw(arrays(shape)),), params)


@st.composite
def unpad_case(draw):
    case = draw(pad_case().filter(lambda c: c.arrays[0].ndim > 0))   # (0-d: pad_width ())
    x = case.arrays[0]
    widths = tuple(map(tuple, np.broadcast_to(np.asarray(case.params["pad_width"]),
                                              (x.ndim, 2)).tolist()))
    g = draw(arrays(np.pad(x, widths, mode=case.params["mode"]).shape))
    return Case((g, x), {"pad_width": widths, "mode": case.params["mode"]})


@st.composite
def joinable(draw, kind):
    """1 to 3 arrays that numpy's vstack / hstack / dstack / column_stack join."""
    n = draw(st.integers(1, 3))
    side = st.integers(0, 3)
    rest = draw(shapes(max_dims=1))
    if kind == "column_stack":
        rows = draw(side)
        shapes_ = [(rows,) if draw(st.booleans()) else (rows, draw(side)) for _ in range(n)]
    elif kind == "vstack" and draw(st.booleans()):
        shapes_ = [draw(shapes(max_dims=1))] * n            # 0-d or 1-D of one length: rows
    elif kind == "hstack" and draw(st.booleans()):
        shapes_ = [(draw(side),) for _ in range(n)]         # 1-D of any lengths
    elif kind == "dstack" and draw(st.booleans()):
        shapes_ = [draw(shapes(max_dims=2))] * n            # fewer than 3 axes, one shape
    else:
        at = {"vstack": 0, "hstack": 1, "dstack": 2}[kind]
        rank = max(at + 1, 2)   # (vstack of 1-D tensors is the case above)
        base = draw(shapes(min_dims=rank, max_dims=rank)) + rest
        shapes_ = [base[:at] + (draw(side),) + base[at + 1:] for _ in range(n)]
    return Case(tuple(draw(arrays(s)) for s in shapes_))


@st.composite
def array_split_case(draw):
    shape = draw(shapes(min_dims=1))
    axis = draw(S.axis_for(len(shape)))
    n = shape[axis]
    if draw(st.booleans()):
        split = draw(st.integers(1, 4))
    else:
        split = draw(st.lists(st.integers(-n - 1, n + 1), max_size=3))
    return Case((draw(arrays(shape)),), {"indices_or_sections": split, "axis": axis})


@st.composite
def take_case(draw):
    shape = draw(shapes(min_dims=1))
    axis = None if draw(st.booleans()) else draw(S.axis_for(len(shape)))
    n = int(np.prod(shape)) if axis is None else shape[axis]
    indices = draw(S.index_arrays(n, shapes(max_dims=2)))
    return Case((draw(arrays(shape)),), {"indices": indices, "axis": axis})


@st.composite
def select_case(draw):
    """select(condlist, choicelist, default): 1 to 3 conditions and choices, broadcasting."""
    k = draw(st.integers(1, 3))
    all_shapes = draw(broadcastable_shapes(2 * k))
    conditions = [draw(hnp.arrays(np.bool_, s)) for s in all_shapes[:k]]
    return Case(tuple(draw(arrays(s)) for s in all_shapes[k:]),
                {"condlist": conditions, "default": draw(st.sampled_from([0.0, -1.5]))})


@st.composite
def diag_case(draw):
    n = draw(st.integers(0, 3))
    return Case((draw(arrays((n,))),), {"k": draw(st.integers(-2, 2))})


@st.composite
def triangle_case(draw):
    """tril/triu(m, k): rank 1 (numpy broadcasts it to a square) to 3."""
    shape = draw(shapes(min_dims=1))
    return Case((draw(arrays(shape)),), {"k": draw(st.integers(-2, 2))})
