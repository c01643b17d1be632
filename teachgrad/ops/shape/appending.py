"""numpy's ``append``, ``row_stack``, ``rollaxis`` and the index tricks ``r_`` and
``c_``, made of ``concat``, ``reshape`` and ``transpose`` (their gradients are those
ops')::

    tg.r_[a, b, 0:3]          # concat along axis 0; a slice is an arange (1j steps: linspace)
    tg.c_[a, b]               # 1-D tensors as columns, joined along the last axis
    tg.r_["1", a, b]          # a leading string: the axis (or "axis,ndmin,trans1d")
"""
import numbers

import numpy as np

from ... import validate
from ...tensor import Tensor
from ..core.grad_util import as_tensor
from ..elementwise.casts import cast
from .concat_split import concat
from .ranges import arange, linspace
from .rearrange import ravel
from .reshape import expand_dims, transpose
from .stacking import vstack


def rollaxis(a, axis, start=0):
    """numpy's ``rollaxis``: axis ``axis`` moved to just before position ``start`` (the
    others keep their order), a ``transpose``. ``moveaxis`` is the clearer spelling."""
    where = "tg.rollaxis"
    x = as_tensor(a, "a", where)
    n = x.ndim
    axis = _one_axis(axis, n, where)
    start = validate.integer(start, "start", where)
    start = start + n if start < 0 else start
    if not 0 <= start <= n:
        validate.fail(ValueError, where, "start", f"an int with {-n} <= start <= {n}", start)
    if axis < start:
        start -= 1
    order = [i for i in range(n) if i != axis]
    order.insert(start, axis)
    return transpose(x, order)


def row_stack(tup):
    """numpy's (deprecated) other name for ``vstack``: rows stacked along axis 0."""
    return vstack(tup)


def append(arr, values, axis=None):
    """``values`` appended to ``arr`` along ``axis`` (None: both flattened first),
    numpy's ``append``: a ``concat``, in the dtype of both (numpy's ``result_type``)."""
    where = "tg.append"
    x, v = as_tensor(arr, "arr", where), as_tensor(values, "values", where)
    if axis is None:
        x, v, axis = ravel(x), ravel(v), 0
    else:
        if x.ndim == 0:
            validate.fail(ValueError, where, "arr", "a tensor with an axis to append along "
                          "(or axis=None)", arr)
        axis = _one_axis(axis, x.ndim, where)
        if v.ndim != x.ndim:
            validate.fail(ValueError, where, "values", f"a tensor of `arr`'s rank {x.ndim}",
                          values)
    return concat(same_dtype([x, v], [x.dtype, v.dtype]), axis=axis)


def _one_axis(axis, ndim, where):
    """One axis of a rank-``ndim`` tensor, as an int in ``[0, ndim)``."""
    if ndim == 0:
        validate.fail(ValueError, where, "axis", "an axis of a tensor with axes (this one "
                      "has none)", axis)
    return validate.one_axis(axis, ndim, "axis", where) % ndim


def same_dtype(tensors, kinds):
    """``tensors`` cast to the dtype numpy would give them all (``kinds``: their dtypes,
    or the Python numbers they came from, which numpy 2 promotes weakly)."""
    final = np.result_type(*kinds)
    return [t if t.dtype == final else cast(t, final) for t in tensors]


class AxisConcatenator:
    """numpy's index-trick objects: ``obj[a, b, ...]`` joins its items along ``axis``
    after giving each at least ``ndmin`` axes (``trans1d``: where a short item's own
    axes go, as numpy's ``AxisConcatenator``). ``tg.r_`` and ``tg.c_`` are two."""

    def __init__(self, axis=0, ndmin=1, trans1d=-1, where="tg.r_"):
        self.axis, self.ndmin, self.trans1d, self.where = axis, ndmin, trans1d, where

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        pieces, kinds = [], []
        for k, item in enumerate(items):
            if isinstance(item, str):
                if k != 0:
                    validate.fail(ValueError, self.where, "key", "a directive string only as "
                                  "the first item", item)
                axis, ndmin, trans1d = self._directive(item, axis, ndmin, trans1d)
                continue
            if isinstance(item, slice):
                piece = self._slice(item)
            else:
                piece = as_tensor(item, "key", self.where)
            scalar = isinstance(item, numbers.Number) and not isinstance(item, Tensor)
            kinds.append(item if scalar else piece.dtype)
            pieces.append(self._arrange(piece, ndmin, piece.ndim, trans1d))
        if not pieces:
            validate.fail(ValueError, self.where, "key", "at least one tensor, number or "
                          "slice to join", key)
        axis = _one_axis(axis, pieces[0].ndim, self.where)
        return concat(same_dtype(pieces, kinds), axis=axis)

    def _slice(self, item):
        """A slice as numpy reads it here: ``start:stop:step`` an ``arange``, and with an
        imaginary step ``start:stop:nj`` a ``linspace`` of n numbers."""
        start = 0 if item.start is None else item.start
        step = 1 if item.step is None else item.step
        if isinstance(step, complex):
            return linspace(start, item.stop, int(abs(step)))
        return arange(start, item.stop, step)

    @staticmethod
    def _arrange(t, ndmin, own, trans1d):
        """``t`` with at least ``ndmin`` axes, new ones in front (numpy's ``ndmin``); with
        ``trans1d`` != -1, ``t``'s ``own`` axes (fewer than ``ndmin``) moved to start at
        position ``trans1d`` (counted from the end when negative)."""
        while t.ndim < ndmin:
            t = expand_dims(t, 0)
        if trans1d == -1 or own >= ndmin:
            return t
        k2, k1 = ndmin - own, trans1d if trans1d >= 0 else trans1d + ndmin - own + 1
        axes = list(range(ndmin))
        return transpose(t, axes[:k1] + axes[k2:] + axes[k1:k2])

    def _directive(self, item, axis, ndmin, trans1d):
        """A leading string: ``"axis"`` or ``"axis,ndmin"`` or ``"axis,ndmin,trans1d"``."""
        parts = item.split(",")
        try:
            numbers_ = [int(p) for p in parts]
        except ValueError:
            numbers_ = []
        if not 1 <= len(numbers_) <= 3 or (len(numbers_) > 1 and numbers_[1] < 0):
            validate.fail(ValueError, self.where, "key", "a directive 'axis', 'axis,ndmin' "
                          "or 'axis,ndmin,trans1d' of integers (numpy's matrix directives "
                          "'r' and 'c' are not supported)", item)
        numbers_ += [ndmin, trans1d][len(numbers_) - 1:]
        return numbers_[0], min(numbers_[1], 32), numbers_[2]

    def __len__(self):
        return 0

    def __repr__(self):
        return f"<{self.where}: concatenation by indexing, {self.where}[a, b, ...]>"


#: ``tg.r_[a, b, ...]``: its items joined along the first axis (numpy's ``r_``).
r_ = AxisConcatenator(0, 1, -1, "tg.r_")
#: ``tg.c_[a, b, ...]``: its items joined along the last axis, 1-D ones as columns.
c_ = AxisConcatenator(-1, 2, 0, "tg.c_")
