"""Hypothesis strategies for the op table's lines of issue 32's numpy surface:
partition, rollaxis, append, r_/c_, gradient and convolve. Each gives a ``Case``
(see ``strategies.py``)."""
import numpy as np
import strategies as S
from hypothesis import strategies as st
from strategies import Case, arrays, shapes


@st.composite
def partition_case(draw):
    """Distinct entries (partition moves entries: ties would let it pick either) and
    ``kth`` positions along ``axis`` (None: flattened)."""
    shape = draw(shapes(min_dims=1, min_side=1))
    axis = None if draw(st.booleans()) else draw(S.axis_for(len(shape)))
    length = int(np.prod(shape)) if axis is None else shape[axis]
    kth = draw(st.one_of(st.integers(-length, length - 1),
                         st.lists(st.integers(0, length - 1), min_size=1, max_size=3)))
    return Case((draw(S.distinct_arrays(shape)),), {"kth": kth, "axis": axis})


def partition_canonical(a, kth, axis):
    """``a`` with each stretch between the ``kth`` positions sorted: the same for every
    arrangement np.partition's contract allows (numpy's and CuPy's differ), and, with
    distinct entries, equal to ``np.sort`` only for such an arrangement."""
    a = np.ravel(a) if axis is None else np.moveaxis(np.asarray(a), axis, -1)
    n = a.shape[-1]
    cuts = sorted({k % n for k in np.atleast_1d(kth).tolist()})
    edges = [0] + [edge for k in cuts for edge in (k, k + 1)] + [n]
    return np.concatenate([np.sort(a[..., lo:hi], axis=-1)
                           for lo, hi in zip(edges, edges[1:])], axis=-1)


@st.composite
def rollaxis_case(draw):
    shape = draw(shapes(min_dims=1, max_dims=4, max_side=2))
    n = len(shape)
    return Case((draw(arrays(shape)),), {"axis": draw(S.axis_for(n)),
                                         "start": draw(st.integers(-n, n))})


@st.composite
def append_case(draw):
    """Two arrays: any shapes with ``axis=None``, or shapes equal but along ``axis``."""
    if draw(st.booleans()):
        return Case((draw(arrays(draw(shapes()))), draw(arrays(draw(shapes())))),
                    {"axis": None})
    shape = draw(shapes(min_dims=1))
    axis = draw(S.axis_for(len(shape)))
    other = list(shape)
    other[axis] = draw(st.integers(0, 3))
    return Case((draw(arrays(shape)), draw(arrays(tuple(other)))), {"axis": axis})


@st.composite
def r_case(draw, columns=False):
    """1 to 3 arrays that ``r_`` (or ``c_``) joins: 0-d or 1-D of any lengths, or
    2-D ones of one column count (``c_``: of one row count)."""
    n = draw(st.integers(1, 3))
    if draw(st.booleans()):     # 0-d and 1-D (c_: 1-D of one length, made columns)
        side = draw(st.integers(0, 3))
        shapes_ = [(side,)] * n if columns else [draw(shapes(max_dims=1)) for _ in range(n)]
    else:
        side = draw(st.integers(0, 3))
        shapes_ = [(side, draw(st.integers(0, 3))) if columns else
                   (draw(st.integers(0, 3)), side) for _ in range(n)]
    return Case(tuple(draw(arrays(s)) for s in shapes_))


@st.composite
def gradient_case(draw, all_axes=False):
    """Samples ``f``, the axis (``all_axes``: None, or two axes; numpy then gives a
    tuple), ``edge_order`` and a spacing: none, a number, or each axis's coordinates
    (increasing, unevenly spaced)."""
    edge_order = draw(st.sampled_from([1, 2]))
    shape = draw(shapes(min_dims=2 if all_axes else 1, min_side=edge_order + 1, max_side=4))
    if all_axes:
        axis = draw(st.sampled_from([None, (0, -1)]))
    else:
        axis = draw(S.axis_for(len(shape)))
    axes = range(len(shape)) if axis is None else [a % len(shape) for a in (
        axis if isinstance(axis, tuple) else (axis,))]
    kind = draw(st.sampled_from(["none", "number", "coordinates"]))
    if kind == "none":
        varargs = ()
    elif kind == "number":
        varargs = (draw(st.sampled_from([0.5, 2.0])),)
    else:
        varargs = tuple(np.cumsum(draw(arrays((shape[a],), S.Domain(0.5, 2.0))))
                        for a in axes)
    return Case((draw(arrays(shape)),), {"varargs": varargs, "axis": axis,
                                         "edge_order": edge_order})


@st.composite
def convolve_case(draw):
    n, m = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    return Case((draw(arrays((n,))), draw(arrays((m,)))),
                {"mode": draw(st.sampled_from(["full", "same", "valid"]))})


@st.composite
def pool1d_case(draw, distinct=False):
    """NWC input and a window that fits it (``distinct``: no ties for max)."""
    k, s, d = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 2))
    padding = draw(st.sampled_from(["VALID", "SAME"]))
    shape = (draw(st.integers(1, 2)), draw(st.integers((k - 1) * d + 1, 5)),
             draw(st.integers(1, 2)))
    x = draw(S.distinct_arrays(shape)) if distinct else draw(arrays(shape))
    return Case((x,), {"ksize": k, "strides": s, "padding": padding, "dilations": d})


def pool1d(pool2d_reference):
    """A 1-D pool's numpy reference: the 2-D one on a height of 1."""
    def reference(x, ksize, strides, padding, dilations=1):
        return pool2d_reference(x[:, None], (1, ksize), (1, strides), padding,
                                (1, dilations))[:, 0]
    return reference


@st.composite
def wide_case(draw):
    """A matrix (or a batch) with no more rows than columns, of full rank (qr's
    complete mode is its reduced one there, and its rows < columns gradient)."""
    import linalg_strategies as L
    a = draw(L.well_separated(wide=True))
    return Case((a if a.shape[-2] <= a.shape[-1] else np.swapaxes(a, -1, -2),))
