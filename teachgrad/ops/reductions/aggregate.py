"""More reductions: prod, var and std; and argmax, argmin, any and all, which give
indices or booleans and so are never differentiated.

Like the reductions of ``reduction.py`` (whose helpers they use), their VJPs put the
reduced axes back as size-1 axes (``keep_reduced``) so the cotangent broadcasts over the
entries each result summarises.
"""
import math

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
    takes_complex,
)
from ..core.grad_util import as_tensor, known
from ..elementwise.arithmetic import maximum, where
from ..elementwise.casts import cast
from ..elementwise.conjugate import conj_of
from ..elementwise.math import sqrt
from ..shape.reshape import checked_axis, reshape, shifted_axes_rule
from .sums import keep_reduced, mean, reduced_axes, reduced_count, sum


# d prod / d x_i = the product of the others, prod_{j != i} x_j. That is ans / x_i where
# x_i != 0. Where x_i = 0 it is the product of the non-zero entries if x_i is the only
# zero, else 0. (Both are exact, to second order too, except that with two zeros in one
# product the derivative of one zero's entry in the other's is taken as 0.)
def _others(x, ans, axes, keepdims):
    zero = x == 0
    safe = where(zero, 1, x)
    n_zeros = sum(cast(zero, x.dtype), axes, keepdims=True)
    only_zero = where(n_zeros == 1, prod(safe, axes, keepdims=True), 0)
    return where(zero, only_zero, keep_reduced(ans, x, axes, keepdims) / safe)

prod_p = primitive("prod", lambda x, axes, keepdims: x.prod(axis=axes, keepdims=keepdims))
defeffect(prod_p, "reduction")
takes_complex(prod_p)
def prod(a, axis=None, keepdims=False):
    r"""$\prod_i x_i$ over ``axis``.  $\partial / \partial x_i = \prod_{j \ne i} x_j$, zeros included."""
    x = as_tensor(a, "a", "tg.prod")
    keepdims = validate.boolean(keepdims, "keepdims", "tg.prod")
    return innermost.process(prod_p, x, axes=reduced_axes(axis, x.ndim, "tg.prod"), keepdims=keepdims)
defvjp(prod_p, lambda ct, ans, x, axes, keepdims:
       keep_reduced(ct, x, axes, keepdims) * conj_of(_others(x, ans, axes, keepdims)))
defjvp(prod_p, lambda x_dot, ans, x, axes, keepdims:
       sum(x_dot * _others(x, ans, axes, keepdims), axes, keepdims=keepdims))
defbatch(prod_p, shifted_axes_rule(prod_p))


def var(a, axis=None, ddof=0, keepdims=False):
    r"""$\frac{1}{n - \mathrm{ddof}} \sum_i (x_i - \bar x)^2$ over ``axis`` (numpy's ``var``),
    made of mean, subtract, multiply and sum.  $\partial / \partial x_i = 2 (x_i - \bar x) / (n - \mathrm{ddof})$"""
    return _variance(a, axis, ddof, keepdims, "tg.var")


def _variance(a, axis, ddof, keepdims, site):
    """``var``, its errors naming ``site`` (``tg.var``, or ``tg.std`` that takes its root)."""
    x = as_tensor(a, "a", site)
    axes = reduced_axes(axis, x.ndim, site, keepdims)
    ddof = validate.integer(ddof, "ddof", site, minimum=0)
    centered = x - mean(x, axes, keepdims=True)
    sizes = [x.shape[i] for i in axes]
    if known(sizes):
        n = math.prod(sizes)
        if ddof >= n and n > 0:   # numpy divides by max(n - ddof, 0): inf, or NaN
            validate.fail(ValueError, site, "ddof", f"an integer below the number of "
                          f"entries each variance is taken over ({n})", ddof)
        divisor = n - ddof
    else:   # known when the graph runs: numpy's max(n - ddof, 0)
        divisor = maximum(reduced_count(x, axes, centered.dtype) - ddof, 0)
    return sum(centered * centered, axes, keepdims=keepdims) / divisor


def std(a, axis=None, ddof=0, keepdims=False):
    r"""$\sqrt{\mathrm{var}(x)}$ over ``axis``.  $\partial / \partial x_i = (x_i - \bar x) /
    ((n - \mathrm{ddof})\, \mathrm{std})$, taken as 0 where std = 0 (all entries equal)."""
    v = _variance(a, axis, ddof, keepdims, "tg.std")
    flat = v == 0      # sqrt has no derivative at 0: the where keeps 1/0 out of the rule
    return where(flat, 0, sqrt(where(flat, 1, v)))


def _never_differentiated(name, doc, one_axis):
    """``(op, function)`` for numpy's reduction ``name`` (argmax, any...), whose result
    is indices or booleans: not differentiable. ``one_axis``: it takes one axis at most."""
    op = not_differentiable(primitive(name, lambda x, axis, keepdims: getattr(backend.xp, name)(
        x, axis=axis, keepdims=keepdims)))
    defeffect(op, "reduction")
    def reduce(a, axis=None, keepdims=False):
        x = as_tensor(a, "a", f"tg.{name}")
        keepdims = validate.boolean(keepdims, "keepdims", f"tg.{name}")
        if axis is not None:
            axis = checked_axis(axis, x.ndim, f"tg.{name}") if one_axis \
                else reduced_axes(axis, x.ndim, f"tg.{name}")
        return innermost.process(op, x, axis=axis, keepdims=keepdims)
    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = doc
    defbatch(op, _one_axis_rule(op) if one_axis else shifted_axes_rule(op, "axis"))
    return op, reduce


def _one_axis_rule(op):
    """The batching rule of argmax/argmin: ``axis`` one further right; with axis None
    (each example flattened), the batch made a matrix of one flat example per row."""
    def rule(values, batched, axis, keepdims):
        x = values[0]
        ndim = x.ndim - 1
        if axis is not None:
            return innermost.process(op, x, axis=batch_axis(axis, ndim), keepdims=keepdims), True
        if x.shape[0] is None:
            return NotImplemented
        out = innermost.process(op, reshape(x, (x.shape[0], -1)), axis=1, keepdims=False)
        return (reshape(out, (x.shape[0],) + (1,) * ndim) if keepdims else out), True
    return rule

argmax_p, argmax = _never_differentiated(
    "argmax", "The index of the largest entry along ``axis`` (None: of the flattened "
    "tensor; the first one on a tie). An integer tensor, never differentiated.", True)
argmin_p, argmin = _never_differentiated(
    "argmin", "The index of the smallest entry along ``axis`` (None: of the flattened "
    "tensor; the first one on a tie). An integer tensor, never differentiated.", True)
any_p, any = _never_differentiated(
    "any", "Whether any entry along ``axis`` is true (non-zero): a bool tensor.", False)
all_p, all = _never_differentiated(
    "all", "Whether every entry along ``axis`` is true (non-zero): a bool tensor.", False)
