"""pad: numpy's padding, and its transpose.

In every mode teachgrad supports, each padded entry is a copy of an entry of ``x``
(edge, reflect, symmetric, wrap) or a constant (constant), so the VJP adds the
cotangents of each entry's copies back onto it. Where each padded entry came from is
found by padding ``arange(n)`` the same way: ``pad([0, 1, 2], (2, 1), "reflect")`` is
``[2, 1, 0, 1, 2, 1]``. That adding-up is ``unpad``, the transpose of ``pad``.
"""
import math

import numpy as np

from ... import backend, validate
from ..core.apply import innermost
from ..core.declare import defbatch, defeffect, defjvp, defshape, defvjp, primitive, takes_complex
from ..core.grad_util import as_tensor, check_entries, known
from .reshape import repeat_unbatched

#: numpy's modes that only copy entries (or put a constant): the ones with a VJP here.
MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_kernel(x, pad_width, mode, constant_values):
    if not pad_width:   # a 0-d tensor: nothing to pad
        return backend.xp.array(x, copy=True)
    if mode == "constant":
        return backend.xp.pad(x, pad_width, mode="constant", constant_values=constant_values)
    return backend.xp.pad(x, pad_width, mode=mode)

# pad(x): x with entries added before and after along each axis.
# VJP: unpad, the cotangent of each entry of x plus those of its copies.
pad_p = primitive("pad", _pad_kernel)
defeffect(pad_p, "fresh")
takes_complex(pad_p)
def pad(array, pad_width, mode="constant", constant_values=0):
    r"""``array`` padded by ``pad_width`` (an int, a (before, after) pair, or one pair per
    axis) in ``mode`` (constant, edge, reflect, symmetric or wrap), as numpy pads.
    VJP: $\mathrm{ct}_i$ = the sum of the cotangents of entry i and its copies."""
    where = "tg.pad"
    x = as_tensor(array, "array", where)
    mode = validate.one_of(mode, "mode", where, MODES)
    try:
        widths = np.asarray(pad_width)
        if widths.size and widths.dtype.kind not in "iu":
            raise TypeError
        widths = np.broadcast_to(widths, (x.ndim, 2)) if x.ndim \
            else np.zeros((0, 2), np.int64)   # a 0-d tensor has nothing to pad
    except (TypeError, ValueError, OverflowError):
        validate.fail(TypeError, where, "pad_width", "an integer, a (before, after) pair of "
                      "integers, or one pair per axis", pad_width)
    if (widths < 0).any():
        validate.fail(ValueError, where, "pad_width", "non-negative widths", pad_width)
    widths = tuple((int(b), int(a)) for b, a in widths)
    if known(x.shape):
        check_entries(math.prod(n + b + a for n, (b, a) in zip(x.shape, widths)),
                      "pad_width", pad_width, where)
    if mode != "constant" and any(n == 0 and b + a for n, (b, a) in zip(x.shape, widths)):
        validate.fail(ValueError, where, "array", f"no empty axis to pad in mode {mode!r}", x)
    if np.ndim(constant_values) == 0:
        constant = validate.number(constant_values, "constant_values", where) \
            if not isinstance(constant_values, int) else constant_values
    else:
        values = validate.tensor_like(constant_values, "constant_values", where)
        try:
            constant = tuple(map(tuple, np.broadcast_to(np.asarray(values), (x.ndim, 2))
                                 .tolist()))
        except ValueError:
            validate.fail(ValueError, where, "constant_values", "a number, a (before, after) "
                          "pair, or one pair per axis", constant_values)
    return innermost.process(pad_p, x, pad_width=widths, mode=mode, constant_values=constant)
defvjp(pad_p, lambda ct, ans, x, pad_width, mode, constant_values:
       unpad(ct, x, pad_width, mode))
defjvp(pad_p, lambda x_dot, ans, x, pad_width, mode, constant_values:
       pad(x_dot, pad_width, mode))


def _pad_batch(values, batched, pad_width, mode, constant_values):
    """No padding along the batch axis: a (0, 0) row in front of ``pad_width`` (and of
    ``constant_values``, when it has one pair per axis)."""
    if isinstance(constant_values, tuple):
        constant_values = ((0, 0),) + constant_values
    return innermost.process(pad_p, values[0], pad_width=((0, 0),) + pad_width, mode=mode,
                constant_values=constant_values), True
defbatch(pad_p, _pad_batch)


def _unpad_kernel(g, x, pad_width, mode):
    xp = backend.xp
    out = g
    for axis, (before, after) in enumerate(pad_width):
        if before == after == 0:
            continue
        n = x.shape[axis]
        if mode == "constant":   # the padding was constants: just cut it off
            out = out[(slice(None),) * axis + (slice(before, before + n),)]
            continue
        source = xp.pad(xp.arange(n), (before, after), mode=mode)  # where each entry came from
        summed = xp.zeros(out.shape[:axis] + (n,) + out.shape[axis + 1:], g.dtype)
        xp.add.at(summed, (slice(None),) * axis + (source,), out)
        out = summed
    return out

# unpad(g, x): the transpose of pad(x): shaped like x, each entry the sum of the entries
# of g that were it or its copies. Only x's shape is read.
unpad_p = primitive("unpad", _unpad_kernel)
defeffect(unpad_p, "view", shape_only_inputs=(1,))
takes_complex(unpad_p)
def unpad(g, x, pad_width, mode):
    """The transpose of ``pad(x, pad_width, mode)`` (``pad_width``: one pair per axis)."""
    return innermost.process(unpad_p, g, x, pad_width=pad_width, mode=mode)
defvjp(unpad_p, lambda ct, ans, g, x, pad_width, mode: pad(ct, pad_width, mode), None)
defjvp(unpad_p, lambda g_dot, ans, g, x, pad_width, mode: unpad(g_dot, x, pad_width, mode),
       None)
defshape(unpad_p, lambda g, x, pad_width, mode: [(x.shape, g.dtype)])
defbatch(unpad_p, lambda values, batched, pad_width, mode: (
    innermost.process(unpad_p, *repeat_unbatched(values, batched), pad_width=((0, 0),) + pad_width,
         mode=mode), True))
