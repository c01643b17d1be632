"""Copying entries: ``repeat`` and ``tile`` as ops of their own, and their transposes
``unrepeat`` and ``untile``, which add the cotangents of an entry's copies back up.

Each copying op's VJP is its transpose, and the transpose's VJP is the copying op again.
The transposes read only the input's shape, so they work in graphs whose sizes are
unknown until they run (``pad`` and ``unpad`` do the same in ``padding.py``).
"""
import math

from ... import backend, validate
from ..core.apply import innermost
from ..core.declare import defbatch, defeffect, defjvp, defshape, defvjp, primitive, takes_complex
from ..core.grad_util import as_tensor, check_entries, known
from .reshape import (
    checked_axis,
    move_to_rank,
    repeat_unbatched,
    reshape,
    shifted_axes_rule,
    squeeze,
)


def _unrepeat_kernel(g, x, repeats, axis):
    xp = backend.xp
    n = x.shape[axis]
    if isinstance(repeats, int):   # n blocks of `repeats` copies: sum each block
        return g.reshape(x.shape[:axis] + (n, repeats) + x.shape[axis + 1:]).sum(axis=axis + 1)
    out = xp.zeros(x.shape, g.dtype)
    if g.size:
        xp.add.at(out, (slice(None),) * axis + (_repeat_kernel(xp.arange(n), repeats, 0),), g)
    return out

# repeat: each entry along `axis` copied `repeats` times (an int, or one count per entry).
# VJP: unrepeat, which adds up the cotangents of each entry's copies.
def _repeat_kernel(x, repeats, axis):
    if repeats == ():   # no counts for an empty axis (numpy would read () as floats)
        return backend.xp.array(x, copy=True)
    return backend.xp.repeat(x, repeats if isinstance(repeats, int) else list(repeats), axis)

repeat_p = primitive("repeat", _repeat_kernel)
defeffect(repeat_p, "fresh")
takes_complex(repeat_p)
def repeat(a, repeats, axis=None):
    r"""Each entry of ``a`` along ``axis`` (None: of the flattened ``a``) repeated.
    VJP: $\mathrm{ct}_i = $ the sum of the cotangents of entry i's copies."""
    where = "tg.repeat"
    x = as_tensor(a, "a", where)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = checked_axis(axis, x.ndim, where)
    n = x.shape[axis]
    if isinstance(repeats, (list, tuple)) or getattr(repeats, "ndim", 0) == 1:
        repeats = tuple(validate.integer(r, "repeats", where, minimum=0) for r in repeats)
        if n is not None and len(repeats) != n:
            validate.fail(ValueError, where, "repeats", f"one count per entry ({n})", repeats)
        made = sum(repeats)
    else:
        repeats = validate.integer(repeats, "repeats", where, minimum=0)
        made = repeats * (n or 0)
    if known(x.shape):
        check_entries(made * x.size // max(n, 1), "repeats", repeats, where)
    return innermost.process(repeat_p, x, repeats=repeats, axis=axis)


def _repeat_shape(x, repeats, axis):   # counts need the exact size: no stand-ins
    if x.shape is None:
        return [(None, x.dtype)]
    n = x.shape[axis]
    size = (None if n is None else n * repeats) if isinstance(repeats, int) else sum(repeats)
    return [(x.shape[:axis] + (size,) + x.shape[axis + 1:], x.dtype)]
defshape(repeat_p, _repeat_shape)
defvjp(repeat_p, lambda ct, ans, x, repeats, axis: unrepeat(ct, x, repeats, axis))
defjvp(repeat_p, lambda x_dot, ans, x, repeats, axis: repeat(x_dot, repeats, axis))
defbatch(repeat_p, shifted_axes_rule(repeat_p, "axis"))

unrepeat_p = primitive("unrepeat", _unrepeat_kernel)
defeffect(unrepeat_p, "fresh", shape_only_inputs=(1,))
takes_complex(unrepeat_p)
def unrepeat(g, x, repeats, axis):
    """The transpose of ``repeat(x, repeats, axis)``: shaped like ``x``, each entry the
    sum of the entries of ``g`` that were its copies."""
    return innermost.process(unrepeat_p, g, x, repeats=repeats, axis=axis)
defvjp(unrepeat_p, lambda ct, ans, g, x, repeats, axis: repeat(ct, repeats, axis), None)
defjvp(unrepeat_p, lambda g_dot, ans, g, x, repeats, axis: unrepeat(g_dot, x, repeats, axis),
       None)
defshape(unrepeat_p, lambda g, x, repeats, axis: [(x.shape, g.dtype)])
defbatch(unrepeat_p, shifted_axes_rule(unrepeat_p, "axis"))


def _tile_reps(x_shape, reps):
    """numpy's tile: the shape and reps padded with leading 1s to one length."""
    n = max(len(x_shape), len(reps))
    return (1,) * (n - len(x_shape)) + tuple(x_shape), (1,) * (n - len(reps)) + tuple(reps)

def _untile_kernel(g, x, reps):
    shape, reps = _tile_reps(x.shape, reps)
    blocks = [d for r, n in zip(reps, shape) for d in (r, n)]   # (r0, n0, r1, n1, ...)
    summed = g.reshape(blocks).sum(axis=tuple(range(0, 2 * len(reps), 2)))
    return summed.reshape(x.shape)

# tile: the whole tensor repeated reps[i] times along axis i. VJP: untile, the sum of
# the cotangents of all the tiles.
tile_p = primitive("tile", lambda x, reps: backend.xp.tile(x, reps))
defeffect(tile_p, "fresh")
takes_complex(tile_p)
def tile(A, reps):
    r"""``A`` repeated ``reps[i]`` times along axis i (numpy's ``tile``).  VJP: the
    cotangents of the tiles, added up."""
    where = "tg.tile"
    x = as_tensor(A, "A", where)
    reps = tuple(reps) if isinstance(reps, (list, tuple)) else (reps,)
    reps = tuple(validate.integer(r, "reps", where, minimum=0) for r in reps)
    if known(x.shape):
        check_entries(math.prod(reps) * x.size, "reps", reps, where)
    return innermost.process(tile_p, x, reps=reps)
defvjp(tile_p, lambda ct, ans, x, reps: untile(ct, x, reps))
defjvp(tile_p, lambda x_dot, ans, x, reps: tile(x_dot, reps))


def _batch_reps(x, reps):
    """A batch ``x`` with each example given the leading axes numpy's tile gives it,
    those axes' positions (after the batch axis), and reps for the batch (1 for it)."""
    rank = x.ndim - 1
    shape, reps = _tile_reps((0,) * rank, reps)
    added = tuple(range(1, 1 + len(shape) - rank))
    return move_to_rank(x, len(shape)), added, (1,) + reps


def _tile_batch(values, batched, reps):
    x, _, reps = _batch_reps(values[0], reps)
    return innermost.process(tile_p, x, reps=reps), True
defbatch(tile_p, _tile_batch)

untile_p = primitive("untile", _untile_kernel)
defeffect(untile_p, "reduction", shape_only_inputs=(1,))
takes_complex(untile_p)
def untile(g, x, reps):
    """The transpose of ``tile(x, reps)``: the sum of ``g``'s tiles, shaped like ``x``."""
    return innermost.process(untile_p, g, x, reps=reps)
defvjp(untile_p, lambda ct, ans, g, x, reps: tile(ct, reps), None)
defjvp(untile_p, lambda g_dot, ans, g, x, reps: untile(g_dot, x, reps), None)
defshape(untile_p, lambda g, x, reps: [(x.shape, g.dtype)])


def _untile_batch(values, batched, reps):
    g, x = repeat_unbatched(values, batched)
    x, added, reps = _batch_reps(x, reps)
    out = untile(g, x, reps)
    return (squeeze(out, added) if added else out), True
defbatch(untile_p, _untile_batch)
