"""Picking entries along one axis by an index array, and its transpose.

``take_along_axis(arr, indices, axis)`` is numpy's: along ``axis`` each output entry
is the entry of ``arr`` that ``indices`` names (what ``argsort`` and ``argmax``
give). Its VJP puts each cotangent back where its entry came from, adding up where
an entry was picked twice: that is ``add_along_axis``, the transpose of picking
(as ``scatter_add`` is ``gather``'s).
"""
from ... import backend, validate
from ..core.apply import innermost
from ..core.declare import defbatch, defeffect, defjvp, defshape, defvjp, primitive, takes_complex
from ..core.grad_util import as_tensor
from ..elementwise.casts import zeros_like
from .reshape import checked_axis, reshape, shifted_axes_rule


def _key(shape, indices, axis):
    """The numpy index that ``take_along_axis`` uses: ``indices`` along ``axis``, and
    along every other axis d an ``arange(shape[d])`` that broadcasts over the rest."""
    key = []
    for d, n in enumerate(shape):
        if d == axis:
            key.append(indices)
        else:
            grid = [1] * len(shape)
            grid[d] = n
            key.append(backend.xp.arange(n).reshape(grid))
    return tuple(key)


# take_along_axis(arr, indices, axis)[..., i, ...] = arr[..., indices[..., i, ...], ...].
# d/d arr: the cotangent added back at the picked places. The indices get none.
take_along_axis_p = primitive("take_along_axis", lambda arr, indices, axis:
                              backend.xp.take_along_axis(arr, indices, axis=axis))
defeffect(take_along_axis_p, "fresh")
takes_complex(take_along_axis_p)
def take_along_axis(arr, indices, axis):
    r"""$\mathrm{out}_{\dots i \dots} = \mathrm{arr}_{\dots \mathrm{indices}_{\dots i \dots} \dots}$
    along ``axis`` (None: of the flattened ``arr``).  The VJP adds the cotangent back
    where each entry was taken."""
    where = "tg.take_along_axis"
    arr, indices = as_tensor(arr, "arr", where), as_tensor(indices, "indices", where)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"take_along_axis: indices must be integers, got {indices.dtype}.")
    if axis is None:
        arr, axis = reshape(arr, (-1,)), 0
    if arr.ndim == 0:
        validate.fail(ValueError, where, "arr", "a tensor with at least one axis (or axis=None)",
                      arr)
    axis = validate.one_axis(axis, None, "axis", where)
    if not -arr.ndim <= axis < arr.ndim:
        raise ValueError(f"{where}: `axis` {axis} is out of range for `arr` of rank {arr.ndim}.")
    if indices.ndim != arr.ndim:
        raise ValueError(f"{where}: `indices` of rank {indices.ndim} for `arr` of "
                         f"rank {arr.ndim}; they must have the same rank.")
    return innermost.process(take_along_axis_p, arr, indices, axis=checked_axis(axis, arr.ndim))
defvjp(take_along_axis_p,
       lambda ct, ans, arr, indices, axis:
       add_along_axis(zeros_like(arr, dtype=ct.dtype), indices, ct, axis),
       None)
defjvp(take_along_axis_p,
       lambda arr_dot, ans, arr, indices, axis: take_along_axis(arr_dot, indices, axis),
       None)
defbatch(take_along_axis_p, shifted_axes_rule(take_along_axis_p, "axis"))


def _add_along_axis_kernel(x, indices, values, axis):
    out = backend.xp.array(x, copy=True)
    if values.size:
        backend.xp.add.at(out, _key(x.shape, indices, axis), values)
    return out

# add_along_axis(x, indices, values, axis): x with values[..., i, ...] added at
# x[..., indices[..., i, ...], ...] (repeats add up): the transpose of take_along_axis.
add_along_axis_p = primitive("add_along_axis", _add_along_axis_kernel)
defeffect(add_along_axis_p, "fresh")
takes_complex(add_along_axis_p)
def add_along_axis(x, indices, values, axis):
    r"""$x$ plus ``values`` added where ``take_along_axis(x, indices, axis)`` would read.
    $\partial_x = 1$; the cotangent of ``values`` is ``take_along_axis(ct, indices, axis)``."""
    x = as_tensor(x, "x", "tg.ops.add_along_axis")
    return innermost.process(add_along_axis_p, x, indices, values, axis=checked_axis(axis, x.ndim))
defvjp(add_along_axis_p,
       lambda ct, ans, x, indices, values, axis: ct,
       None,
       lambda ct, ans, x, indices, values, axis: take_along_axis(ct, indices, axis))
defjvp(add_along_axis_p,
       lambda x_dot, ans, x, indices, values, axis: x_dot,
       None,
       lambda v_dot, ans, x, indices, values, axis:
       add_along_axis(zeros_like(ans), indices, v_dot, axis))
defbatch(add_along_axis_p, shifted_axes_rule(add_along_axis_p, "axis"))
defshape(add_along_axis_p, lambda x, indices, values, axis: [(x.shape, x.dtype)])
