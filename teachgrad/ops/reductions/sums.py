"""Reductions: sum, mean, max, min and logsumexp over some axes.

Their VJPs all start the same way: put the reduced axes back as size-1 axes
(``keep_reduced``) so that the cotangent broadcasts over the entries it summarises.
"""
import builtins
import math

import numpy as np

from ... import backend, validate
from ..core.apply import innermost
from ..core.batching import batch_axis
from ..core.declare import (
    defbatch,
    defeffect,
    defjvp,
    defvjp,
    not_differentiable,
    primitive,
    refuses_complex,
    takes_complex,
)
from ..core.inputs import operand
from ..elementwise.arithmetic import NO_ORDER, equal, where
from ..elementwise.casts import cast, stop_gradient
from ..elementwise.math import abs as absolute, exp
from ..shape.reshape import broadcast_as, expand_dims, shifted_axes_rule


def reduced_axes(axis, ndim, where="tg.sum", keepdims=False):
    """Normalise ``axis`` (None, an int or a sequence) to a sorted tuple (checked, and
    ``keepdims`` with it)."""
    if type(keepdims) is not bool:
        validate.boolean(keepdims, "keepdims", where)
    if axis is None:
        return tuple(range(ndim))
    axes = validate.axis(axis, ndim, "axis", where)
    axes = (axes,) if type(axes) is int else axes
    normal = tuple(sorted([a % ndim for a in axes])) if ndim else ()
    if len(set(normal)) != len(normal):
        raise ValueError(f"axis {axis} repeats an axis.")
    return normal


def keep_reduced(g, x, axes, keepdims):
    """``g`` with the reduced ``axes`` of ``x`` put back as size-1 axes."""
    if keepdims or g.ndim == 0 or not axes:  # a 0-d cotangent broadcasts as it is
        return g
    return expand_dims(g, axes)


# The kernels call the array's own methods (x.sum(...)): the same reduction as
# xp.sum(x, ...), without numpy's Python wrapper, which costs about a microsecond a call.

# sum over axes.  Each summed entry has derivative 1: the cotangent is broadcast back.
sum_p = primitive("sum", lambda x, axes, keepdims: x.sum(axis=axes, keepdims=keepdims))
defeffect(sum_p, "reduction")
takes_complex(sum_p)
def sum(x, axis=None, keepdims=False):
    x = operand(x, "x", "tg.sum")
    return innermost.process(sum_p, x, axes=reduced_axes(axis, x.ndim, "tg.sum", keepdims), keepdims=keepdims)
defvjp(sum_p, lambda ct, ans, x, axes, keepdims:
       broadcast_as(keep_reduced(ct, x, axes, keepdims), x))
defjvp(sum_p, lambda x_dot, ans, x, axes, keepdims: sum(x_dot, axis=axes, keepdims=keepdims))
defbatch(sum_p, shifted_axes_rule(sum_p))


def reduced_count(x, axes, dtype):
    """How many entries each mean averages: a number, or an op when a size is unknown."""
    sizes = [x.shape[a] for a in axes]
    if None not in sizes:
        return builtins.max(math.prod(sizes), 1)
    return innermost.process(count_p, x, axes=axes, dtype=dtype)

count_p = not_differentiable(primitive(
    "count", lambda x, axes, dtype: backend.xp.asarray(
        builtins.max(int(np.prod([x.shape[a] for a in axes])), 1), dtype=dtype)))
defeffect(count_p, "reduction", shape_only_inputs=(0,))
defbatch(count_p, lambda values, batched, axes, dtype: (   # the same count for every example
    innermost.process(count_p, values[0], axes=batch_axis(axes, values[0].ndim - 1), dtype=dtype), False))

# mean over axes = sum / n.  Each entry has derivative 1/n.
mean_p = primitive("mean", lambda x, axes, keepdims: x.mean(axis=axes, keepdims=keepdims))
defeffect(mean_p, "reduction")
takes_complex(mean_p)
defbatch(mean_p, shifted_axes_rule(mean_p))
def mean(x, axis=None, keepdims=False):
    x = operand(x, "x", "tg.mean")
    return innermost.process(mean_p, x, axes=reduced_axes(axis, x.ndim, "tg.mean", keepdims), keepdims=keepdims)
defvjp(mean_p, lambda ct, ans, x, axes, keepdims:
       broadcast_as(keep_reduced(ct, x, axes, keepdims) / reduced_count(x, axes, ct.dtype), x))
defjvp(mean_p, lambda x_dot, ans, x, axes, keepdims: mean(x_dot, axis=axes, keepdims=keepdims))


def _extremum_vjp(ct, ans, x, axes, keepdims):
    # The cotangent goes to the entries equal to the extremum, shared equally among ties.
    mask = cast(equal(x, keep_reduced(ans, x, axes, keepdims)), ct.dtype)
    ties = sum(mask, axis=axes, keepdims=True)
    return keep_reduced(ct, x, axes, keepdims) * mask / ties

# max over axes.  d max / d x_i = 1 for the largest entry (1/k for a k-way tie), else 0.
max_p = primitive("max", lambda x, axes, keepdims: x.max(axis=axes, keepdims=keepdims))
defeffect(max_p, "reduction")
refuses_complex(max_p, NO_ORDER)
defbatch(max_p, shifted_axes_rule(max_p))
def max(x, axis=None, keepdims=False):
    x = operand(x, "x", "tg.max")
    return innermost.process(max_p, x, axes=_nonempty(reduced_axes(axis, x.ndim, "tg.max", keepdims), x, "max"),
                keepdims=keepdims)
defvjp(max_p, _extremum_vjp)

# min over axes: like max, for the smallest entry.
min_p = primitive("min", lambda x, axes, keepdims: x.min(axis=axes, keepdims=keepdims))
defeffect(min_p, "reduction")
refuses_complex(min_p, NO_ORDER)
defbatch(min_p, shifted_axes_rule(min_p))
def min(x, axis=None, keepdims=False):
    x = operand(x, "x", "tg.min")
    return innermost.process(min_p, x, axes=_nonempty(reduced_axes(axis, x.ndim, "tg.min", keepdims), x, "min"),
                keepdims=keepdims)
defvjp(min_p, _extremum_vjp)


def _nonempty(axes, x, name):
    if any(x.shape[a] == 0 for a in axes):  # (an unknown size, None, is allowed)
        raise ValueError(f"tg.{name}: `x` has an empty axis to reduce, where {name} is undefined "
                         f"(shape {x.shape}, axes {axes}).")
    return axes


def _logsumexp_kernel(x, axes, keepdims):
    xp = backend.xp
    # Subtract the max first so that exp never overflows (log-sum-exp trick).
    m = xp.max(x, axis=axes, keepdims=True) if x.size else xp.zeros((1,) * x.ndim, x.dtype)
    m = xp.where(xp.isfinite(m), m, 0)
    out = xp.log(xp.sum(xp.exp(x - m), axis=axes, keepdims=True)) + m
    return out if keepdims else xp.squeeze(out, axis=axes)

# logsumexp(x) = log sum_i e^{x_i}.  d/dx_i = e^{x_i - logsumexp(x)} = softmax(x)_i, computed
# as in _logsumexp_weights below
logsumexp_p = primitive("logsumexp", _logsumexp_kernel)
defeffect(logsumexp_p, "reduction")
defbatch(logsumexp_p, shifted_axes_rule(logsumexp_p))
def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x)))`` over ``axis``, computed without overflow."""
    x = operand(x, "x", "tg.logsumexp")
    return innermost.process(logsumexp_p, x, axes=reduced_axes(axis, x.ndim, "tg.logsumexp", keepdims),
                keepdims=keepdims)


def _logsumexp_weights(x, ans, axes, keepdims):
    """softmax(x) over ``axes``, d logsumexp / dx, as TensorFlow computes it: e^(x - m) /
    sum e^(x - m), with m the max under stop_gradient (0 where it is not finite).

    The shorter e^(x - ans) is the same number on paper, but ans = m + log(sum) is rounded:
    at x = 1e4 in float32 it is off by up to 2^-11, and so is every weight (0.49989 for
    0.5). Shifted by the max, no large number is rounded.
    """
    shape = x.shape
    if shape is None or builtins.any(shape[a] is None for a in axes):
        # A graph that learns the reduced length only when it runs, where it may be 0 (no
        # max to take): the shorter form, which needs no max.
        return exp(x - keep_reduced(ans, x, axes, keepdims))
    if builtins.any(shape[a] == 0 for a in axes):
        return exp(x)   # an empty reduction: no weights at all (and no max to take)
    m = stop_gradient(innermost.process(max_p, x, axes=axes, keepdims=True))
    m = where(absolute(m) < math.inf, m, 0)
    e = exp(x - m)
    return e / sum(e, axis=axes, keepdims=True)

defvjp(logsumexp_p, lambda ct, ans, x, axes, keepdims:
       keep_reduced(ct, x, axes, keepdims) * _logsumexp_weights(x, ans, axes, keepdims))
defjvp(logsumexp_p, lambda x_dot, ans, x, axes, keepdims:
       sum(x_dot * _logsumexp_weights(x, ans, axes, keepdims), axis=axes,
           keepdims=keepdims))

