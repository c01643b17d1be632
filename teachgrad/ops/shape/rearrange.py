"""numpy's ways of rearranging entries: flip and roll as ops of their own, and ravel,
moveaxis, swapaxes, rot90 and the atleast_* family made of reshape, transpose and flip.

Each op only moves entries, so its VJP moves the cotangent back: flip and roll undo
themselves. The ops that copy entries (repeat, tile; pad's edge and reflect modes) are
in ``repeating.py`` and ``padding.py``: where an entry was copied, the cotangents of
its copies add up, in an op of its own (``unrepeat``, ``untile``, ``unpad``).
"""
import math

from ... import backend, validate
from ..core.apply import innermost
from ..core.batching import batch_axis
from ..core.declare import defbatch, defeffect, defjvp, defvjp, primitive, takes_complex
from ..core.grad_util import as_tensor, known
from .reshape import checked_axis, expand_dims, reshape, shifted_axes_rule, transpose

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "flatten", "flip", "fliplr", "flipud",
           "moveaxis", "ravel", "roll", "rot90", "swapaxes"]


def ravel(a):
    """The entries of ``a`` as a 1-D tensor, in row-major order: ``reshape(a, (-1,))``."""
    return reshape(a, (-1,))


def flatten(a):
    """numpy's ``ndarray.flatten``: the same as ``ravel`` (a tensor is never changed in place)."""
    return reshape(a, (-1,))


def axes_tuple(axis, ndim, where, name="axis"):
    """``axis`` (None: every axis; an int; a list or tuple) as a tuple of distinct axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = validate.axis(axis, ndim, name, where)
    axes = tuple(a % max(ndim, 1) for a in ((axes,) if isinstance(axes, int) else axes))
    if len(set(axes)) != len(axes):
        validate.fail(ValueError, where, name, "distinct axes", axis)
    return axes


def _at_least_rank(m, rank, where):
    x = as_tensor(m, "m", where)
    if x.ndim < rank:
        validate.fail(ValueError, where, "m", f"a tensor of rank {rank} or more", x)
    return x


# flip: reverse the order along some axes.  Its own inverse: the VJP flips ct back.
flip_p = primitive("flip", lambda x, axes: backend.xp.flip(x, axes))
defeffect(flip_p, "view")
takes_complex(flip_p)
def flip(m, axis=None):
    r"""$\mathrm{out}_i = x_{n - 1 - i}$ along ``axis`` (None: every axis).  VJP: ct flipped back."""
    x = as_tensor(m, "m", "tg.flip")
    return innermost.process(flip_p, x, axes=axes_tuple(axis, x.ndim, "tg.flip"))
defvjp(flip_p, lambda ct, ans, x, axes: flip(ct, axes))
defjvp(flip_p, lambda x_dot, ans, x, axes: flip(x_dot, axes))
defbatch(flip_p, shifted_axes_rule(flip_p))


def flipud(m):
    """``m`` upside down: ``flip(m, axis=0)``."""
    return flip(_at_least_rank(m, 1, "tg.flipud"), 0)


def fliplr(m):
    """``m`` left to right: ``flip(m, axis=1)``."""
    return flip(_at_least_rank(m, 2, "tg.fliplr"), 1)


def _shift(shift, where):
    """One shift, an integer small enough for numpy's index arithmetic."""
    shift = validate.integer(shift, "shift", where)
    if not -2 ** 62 < shift < 2 ** 62:
        validate.fail(ValueError, where, "shift", "an integer that fits in 63 bits", shift)
    return shift

# roll: shift entries along axes, those that fall off one end coming back at the other
# (axis None: along the flattened tensor).  The VJP rolls ct back by -shift.
roll_p = primitive("roll", lambda x, shift, axis: backend.xp.roll(x, shift, axis))
defeffect(roll_p, "fresh")
takes_complex(roll_p)
def roll(a, shift, axis=None):
    r"""$\mathrm{out}_{(i + \mathrm{shift}) \bmod n} = x_i$ along ``axis``.  VJP: ct rolled by -shift."""
    where = "tg.roll"
    x = as_tensor(a, "a", where)
    if isinstance(shift, (list, tuple)):
        shift = tuple(_shift(s, where) for s in shift)
        if not isinstance(axis, (list, tuple)) or len(axis) != len(shift):
            validate.fail(ValueError, where, "axis", f"{len(shift)} axes, one per shift", axis)
    else:
        shift = _shift(shift, where)
    if axis is not None:
        axis = axes_tuple(axis, x.ndim, where) if isinstance(axis, (list, tuple)) \
            else checked_axis(axis, x.ndim, where)
    return innermost.process(roll_p, x, shift=shift, axis=axis)
def _negated(shift):
    return -shift if isinstance(shift, int) else tuple(-s for s in shift)
defvjp(roll_p, lambda ct, ans, x, shift, axis: roll(ct, _negated(shift), axis))
defjvp(roll_p, lambda x_dot, ans, x, shift, axis: roll(x_dot, shift, axis))


def _roll_batch(values, batched, shift, axis):
    """The axes past the batch axis; with axis None, each example rolled flat, as one
    row of a matrix."""
    x = values[0]
    if axis is not None:
        return innermost.process(roll_p, x, shift=shift, axis=batch_axis(axis, x.ndim - 1)), True
    if not known(x.shape):
        return NotImplemented
    rows = innermost.process(roll_p, reshape(x, (x.shape[0], math.prod(x.shape[1:]))), shift=shift, axis=1)
    return reshape(rows, x.shape), True
defbatch(roll_p, _roll_batch)


def moveaxis(a, source, destination):
    """``a`` with axes ``source`` moved to positions ``destination`` (the others keep
    their order): a ``transpose``."""
    x = as_tensor(a, "a", "tg.moveaxis")
    if x.ndim == 0:
        validate.fail(ValueError, "tg.moveaxis", "a", "a tensor with at least one axis", x)
    source = axes_tuple(source, x.ndim, "tg.moveaxis", "source")
    destination = axes_tuple(destination, x.ndim, "tg.moveaxis", "destination")
    if len(source) != len(destination):
        validate.fail(ValueError, "tg.moveaxis", "destination",
                      f"as many axes as `source` ({len(source)})", destination)
    order = [n for n in range(x.ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return transpose(x, order)


def swapaxes(a, axis1, axis2):
    """``a`` with axes ``axis1`` and ``axis2`` exchanged: a ``transpose``."""
    x = as_tensor(a, "a", "tg.swapaxes")
    order = list(range(x.ndim))
    axis1 = validate.one_axis(axis1, x.ndim, "axis1", "tg.swapaxes") % max(x.ndim, 1)
    axis2 = validate.one_axis(axis2, x.ndim, "axis2", "tg.swapaxes") % max(x.ndim, 1)
    order[axis1], order[axis2] = order[axis2], order[axis1]
    return transpose(x, order)


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times, from the first of ``axes`` towards the
    second (numpy's ``rot90``): flips and a transpose."""
    x = _at_least_rank(m, 2, "tg.rot90")
    k = validate.integer(k, "k", "tg.rot90") % 4
    if not isinstance(axes, (list, tuple)) or len(axes) != 2:
        validate.fail(ValueError, "tg.rot90", "axes", "two distinct axes", axes)
    a, b = axes_tuple(axes, x.ndim, "tg.rot90", "axes")
    if k == 0:
        return x
    if k == 2:
        return flip(x, (a, b))
    order = list(range(x.ndim))
    order[a], order[b] = order[b], order[a]
    return transpose(flip(x, b), order) if k == 1 else flip(transpose(x, order), b)


def _atleast(arrays, ndim, new_axes):
    """Each of ``arrays`` with at least ``ndim`` axes: a 0-d one reshaped to ones, the
    others given the new size-1 axes ``new_axes[rank]`` (works with unknown sizes)."""
    out = []
    for a in arrays:
        x = as_tensor(a, "arys", f"tg.atleast_{ndim}d")
        if x.ndim == 0:
            x = reshape(x, (1,) * ndim)
        elif x.ndim < ndim:
            x = expand_dims(x, new_axes[x.ndim])
        out.append(x)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    """Each input with at least one axis: a scalar becomes shape (1,)."""
    return _atleast(arys, 1, {})


def atleast_2d(*arys):
    """Each input with at least two axes: (N,) becomes (1, N), a scalar (1, 1)."""
    return _atleast(arys, 2, {1: 0})


def atleast_3d(*arys):
    """Each input with at least three axes: (N,) becomes (1, N, 1), (M, N) becomes (M, N, 1)."""
    return _atleast(arys, 3, {1: (0, 2), 2: 2})
