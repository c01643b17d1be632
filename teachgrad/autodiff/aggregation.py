"""Summing the gradient contributions that meet at one tensor.

When a tensor feeds several ops, each hands back a contribution to its
gradient, and the gradient is their sum. ``AggregationMethod`` chooses how the
sum is formed, as in TensorFlow:

* ``ADD_N`` (the default): one ``add_n`` op once every contribution has arrived;
* ``EXPERIMENTAL_TREE``: pairwise ``add`` ops, a running sum. Slower, but each
  contribution can be freed as soon as it has been added.

Sparse contributions (``IndexedSlices``) stay sparse when they meet only each
other (their rows are concatenated) and are scattered into the dense sum
otherwise.
"""
import enum

import numpy as np

from .. import backend, validate
from ..ops import IndexedSlices, add, add_n, cast, concat, index_add


class AggregationMethod:
    """How gradient contributions are summed (TensorFlow's constants)."""
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2  # accepted for compatibility; behaves as TREE


class UnconnectedGradients(enum.Enum):
    """What a source not connected to the target gets: ``None`` or zeros."""
    NONE = "none"
    ZERO = "zero"


def unconnected(value, where):
    """``unconnected_gradients`` as an UnconnectedGradients (the strings "none"/"zero" too)."""
    try:
        return UnconnectedGradients(value)
    except (ValueError, TypeError):
        validate.fail(ValueError, where, "unconnected_gradients", "'none' or 'zero' (or "
                      "tg.UnconnectedGradients.NONE / .ZERO)", value)


def check_method(method):
    if method is None:
        return AggregationMethod.DEFAULT
    if method not in (AggregationMethod.ADD_N, AggregationMethod.EXPERIMENTAL_TREE,
                      AggregationMethod.EXPERIMENTAL_ACCUMULATE_N):
        raise ValueError(f"Invalid aggregation_method specified {method!r}; use one of "
                         "tg.AggregationMethod.ADD_N, .EXPERIMENTAL_TREE or .DEFAULT.")
    return method


def aggregate(contributions, method):
    """Sum ``contributions``; returns ``(result, how)`` where ``how`` names the method."""
    if not contributions:
        return None, None
    if len(contributions) == 1:
        return contributions[0], "nop"
    dense = [g for g in contributions if not isinstance(g, IndexedSlices)]
    sparse = [g for g in contributions if isinstance(g, IndexedSlices)]
    if not dense:
        values = concat([s.values for s in sparse], axis=0)
        indices = backend.xp.concatenate([s.indices for s in sparse])
        return IndexedSlices(values, indices, sparse[0].dense_shape), "sparse"
    if len({g.dtype for g in dense}) > 1:
        # Rules hand back their input's dtype, but a custom gradient may not. add_n
        # refuses mixed dtypes, so the sum is taken in their common dtype, as numpy would.
        common = np.result_type(*[g.dtype for g in dense])
        dense = [g if g.dtype == common else cast(g, common) for g in dense]
    if len(dense) == 1:
        total, how = dense[0], "sparse"
    elif method == AggregationMethod.ADD_N:
        total, how = add_n(dense), "add_n"
    else:
        total, how = dense[0], "tree"
        for g in dense[1:]:
            total = add(total, g)
    for s in sparse:  # densify each sparse contribution by adding it into the dense sum
        total = index_add(total, s.values, s.indices)
    return total, how
