"""Running sums and products, differences, and sorting, along one axis.

``cumsum`` is linear: its VJP is a cumulative sum running the other way. ``sort``
only moves entries, so its VJP moves each cotangent back to where its entry came
from (``take_along_axis`` by the inverse permutation). ``argsort`` gives indices,
which have no derivative.
"""
from ... import backend, validate
from ..core.apply import innermost
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
from ..core.grad_util import as_tensor
from ..elementwise.arithmetic import NO_ORDER, where
from ..elementwise.casts import cast
from ..elementwise.conjugate import conj_of
from ..shape.along_axis import take_along_axis
from ..shape.reshape import checked_axis, reshape, shifted_axes_rule


def flat_or_axis(x, axis, where):
    """``x`` (the argument ``a``) and ``axis``, checked; numpy's convention: ``axis=None``
    works on the flattened array."""
    x = as_tensor(x, "a", where)
    if axis is None:
        return reshape(x, (-1,)), 0
    return x, checked_axis(axis, x.ndim, where)


#: numpy's sorting algorithms (None: its default).
KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _cumsum_kernel(x, axis, reverse):
    xp = backend.xp
    if reverse:
        return xp.flip(xp.cumsum(xp.flip(x, axis), axis=axis), axis)
    return xp.cumsum(x, axis=axis)

# cumsum: out_k = sum_{i <= k} x_i (``reverse``: sum_{i >= k}).  Each x_i feeds every
# later out_k, so its cotangent is the sum of theirs: a cumulative sum the other way.
cumsum_p = primitive("cumsum", _cumsum_kernel)
defeffect(cumsum_p, "fresh")
takes_complex(cumsum_p)
def cumsum(a, axis=None, dtype=None, reverse=False):
    r"""$\mathrm{out}_k = \sum_{i \le k} x_i$ along ``axis`` (None: flattened; ``reverse``:
    $\sum_{i \ge k}$, TensorFlow's option).  VJP: $\mathrm{ct}$ summed in the other direction."""
    x, axis = flat_or_axis(a, axis, "tg.cumsum")
    if dtype is not None:
        x = cast(x, dtype)
    return innermost.process(cumsum_p, x, axis=axis, reverse=validate.boolean(reverse, "reverse", "tg.cumsum"))
defvjp(cumsum_p, lambda ct, ans, x, axis, reverse: cumsum(ct, axis, reverse=not reverse))
defjvp(cumsum_p, lambda x_dot, ans, x, axis, reverse: cumsum(x_dot, axis, reverse=reverse))
defbatch(cumsum_p, shifted_axes_rule(cumsum_p, "axis"))


# cumprod: out_k = prod_{i <= k} x_i.  d out_k / d x_i = prod_{j <= k, j != i} x_j, so
# ct_i = sum_{k >= i} ct_k out_k / x_i wherever x_i != 0. At the first zero of a line,
# x_m = 0, the product skipping it is cumprod of x with x_m set to 1; after it every
# such product holds the factor x_m = 0. (At a second zero, the value is right but its
# own derivative in x_m is taken as 0: second derivatives with two zeros in one line.)
def _cumprod_vjp(ct, ans, x, axis):
    ans, x = conj_of(ans), conj_of(x)   # complex: the conjugate products
    zero = x == 0
    first = where(zero, cumsum(cast(zero, ct.dtype), axis) == 1, False)
    regular = cumsum(ct * ans, axis, reverse=True) / where(zero, 1, x)
    skipping = cumsum(ct * cumprod(where(first, 1, x), axis), axis, reverse=True)
    return where(zero, where(first, skipping, 0), regular)

cumprod_p = primitive("cumprod", lambda x, axis: backend.xp.cumprod(x, axis=axis))
defeffect(cumprod_p, "fresh")
takes_complex(cumprod_p)
def cumprod(a, axis=None, dtype=None):
    r"""$\mathrm{out}_k = \prod_{i \le k} x_i$ along ``axis`` (None: flattened).
    VJP: $\mathrm{ct}_i = \sum_{k \ge i} \mathrm{ct}_k \prod_{j \le k, j \ne i} x_j$, zeros included."""
    x, axis = flat_or_axis(a, axis, "tg.cumprod")
    if dtype is not None:
        x = cast(x, dtype)
    return innermost.process(cumprod_p, x, axis=axis)
defvjp(cumprod_p, _cumprod_vjp)
defbatch(cumprod_p, shifted_axes_rule(cumprod_p, "axis"))


def diff(a, n=1, axis=-1):
    r"""The n-th discrete difference along ``axis``: $\mathrm{out}_i = x_{i+1} - x_i$, n
    times (numpy's ``diff``), made of slices and subtractions."""
    x = as_tensor(a, "a", "tg.diff")
    n = validate.integer(n, "n", "tg.diff", minimum=0)
    if x.ndim == 0:
        validate.fail(ValueError, "tg.diff", "a", "a tensor with at least one axis", x)
    axis = checked_axis(axis, x.ndim, "tg.diff")
    if x.shape[axis] is not None:   # after as many differences as entries, none are left
        n = min(n, x.shape[axis])
    before = (slice(None),) * axis
    for _ in range(n):
        x = x[before + (slice(1, None),)] - x[before + (slice(None, -1),)]
    return x


# argsort: the indices that sort x along an axis. Indices have no derivative.
argsort_p = not_differentiable(primitive("argsort", lambda x, axis, kind:
                                         backend.xp.argsort(x, axis=axis, kind=kind)))
defeffect(argsort_p, "fresh")
refuses_complex(argsort_p, NO_ORDER)
def argsort(a, axis=-1, kind=None):
    """The indices that sort ``a`` along ``axis`` (None: flattened), numpy's
    ``argsort``; an integer tensor, never differentiated."""
    x, axis = flat_or_axis(a, axis, "tg.argsort")
    return innermost.process(argsort_p, x, axis=axis, kind=validate.one_of(kind, "kind", "tg.argsort", KINDS))
defbatch(argsort_p, shifted_axes_rule(argsort_p, "axis"))

# sort: x's entries along an axis in increasing order: out = take_along_axis(x, argsort(x)).
# It only moves entries: out_k's cotangent goes back to the entry that moved there.
sort_p = primitive("sort", lambda x, axis, kind: backend.xp.sort(x, axis=axis, kind=kind))
defeffect(sort_p, "fresh")
refuses_complex(sort_p, NO_ORDER)
def sort(a, axis=-1, kind=None):
    r"""$x$ sorted along ``axis`` (None: flattened).  VJP: each cotangent goes back to its
    entry's place, $\mathrm{ct}$ taken along the inverse permutation."""
    x, axis = flat_or_axis(a, axis, "tg.sort")
    return innermost.process(sort_p, x, axis=axis, kind=validate.one_of(kind, "kind", "tg.sort", KINDS))
defvjp(sort_p, lambda ct, ans, x, axis, kind:
       take_along_axis(ct, argsort(argsort(x, axis, kind), axis), axis))
defjvp(sort_p, lambda x_dot, ans, x, axis, kind:
       take_along_axis(x_dot, argsort(x, axis, kind), axis))
defbatch(sort_p, shifted_axes_rule(sort_p, "axis"))
