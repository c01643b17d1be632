"""Hypothesis strategies for the op table's lines of numpy's wider surface (issue 18):
the elementwise ops with jumps and kinks, and ops with their own parameters.

Like ``strategies.py`` (whose helpers these reuse), each gives a ``Case``: the float64
arrays to differentiate plus the op's other parameters, with values kept away from
the points where finite differences would straddle a jump or a kink.
"""
import numpy as np
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
