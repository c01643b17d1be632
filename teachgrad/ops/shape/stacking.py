"""numpy's stacks and array_split, made of concat, split and reshape.

``vstack``, ``hstack``, ``dstack`` and ``column_stack`` first give every input the
rank they join at (the ``atleast_*`` family) and then ``concat`` them; ``array_split``
works out numpy's piece sizes and calls ``split``. Their gradients are those of the
ops they are made of.
"""
from ... import validate
from ..core.grad_util import as_tensor, check_entries
from .concat_split import concat, split
from .rearrange import atleast_1d, atleast_2d, atleast_3d
from .reshape import checked_axis, reshape


def _sequence(tup, where):
    tensors = [as_tensor(t, "tup", where) for t in validate.sequence(tup, "tup", where)]
    if not tensors:
        validate.fail(ValueError, where, "tup", "at least one tensor", tup)
    return tensors


def vstack(tup):
    """Stack tensors row-wise: 1-D ones become rows (1, N), then ``concat`` along axis 0."""
    return concat([atleast_2d(t) for t in _sequence(tup, "tg.vstack")], axis=0)


def hstack(tup):
    """Stack tensors column-wise: ``concat`` along axis 1 (axis 0 for 1-D tensors)."""
    tensors = [atleast_1d(t) for t in _sequence(tup, "tg.hstack")]
    return concat(tensors, axis=0 if tensors[0].ndim == 1 else 1)


def dstack(tup):
    """Stack tensors depth-wise: each gets three axes (``atleast_3d``), then ``concat``
    along axis 2."""
    return concat([atleast_3d(t) for t in _sequence(tup, "tg.dstack")], axis=2)


def column_stack(tup):
    """1-D tensors as the columns of a 2-D one (shape (N, 1) each), 2-D ones as they
    are, joined along axis 1."""
    def column(t):
        return reshape(t, (-1, 1)) if t.ndim < 2 else t
    return concat([column(t) for t in _sequence(tup, "tg.column_stack")], axis=1)


def array_split(ary, indices_or_sections, axis=0):
    """numpy's ``array_split``: ``sections`` pieces as equal as can be (the first ones one
    longer; made by ``split``), or the slices between the given indices."""
    where = "tg.array_split"
    x = as_tensor(ary, "ary", where)
    if x.ndim == 0:
        validate.fail(ValueError, where, "ary", "a tensor with at least one axis", x)
    axis = checked_axis(axis, x.ndim, where)
    length = x.shape[axis]
    if length is None:
        raise ValueError(f"{where}: the size of axis {axis} is unknown; array_split needs it.")
    if not isinstance(indices_or_sections, (list, tuple)):
        sections = validate.integer(indices_or_sections, "indices_or_sections", where, minimum=1)
        check_entries(sections, "indices_or_sections", sections, where)
        size, extra = divmod(length, sections)
        return split(x, [size + 1] * extra + [size] * (sections - extra), axis=axis)
    # between given indices: numpy slices x[start:end] between them, and so do we
    edges = [0] + [validate.integer(i, "indices_or_sections", where)
                   for i in indices_or_sections] + [length]
    return [x[(slice(None),) * axis + (slice(a, b),)] for a, b in zip(edges, edges[1:])]
