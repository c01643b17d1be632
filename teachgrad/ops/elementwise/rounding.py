"""Rounding, remainders, clipping, NaN-ignoring extrema and nan_to_num: the
elementwise ops with jumps and kinks.

Where an op jumps or bends, its derivative is the one HIPS autograd gives (numpy's
own functions have none): rounding has none at all (it is marked not
differentiable, as autograd and TensorFlow mark it); ``clip`` passes the
cotangent to ``x`` only strictly inside the bounds; ``fmax``/``fmin`` share it
equally between tied inputs; ``mod`` has the derivative of ``x - floor(x/y) y``
with the floor held fixed.
"""
import numpy as np

from ... import backend, validate
from ...tensor import Tensor, convert_to_tensor
from ..core.apply import innermost, leading_axes_rule
from ..core.declare import defbatch, defeffect, defjvp, defvjp, primitive, refuses_complex
from ..shape.reshape import broadcast_as, unbroadcast
from .arithmetic import NO_ORDER, equal, maximum, where
from .casts import cast
from .ufuncs import binary, piecewise_constant

floor_p, floor = piecewise_constant(
    "floor", r"$\lfloor x \rfloor$, the largest integer <= x.  Derivative 0 (not differentiated).")
ceil_p, ceil = piecewise_constant(
    "ceil", r"$\lceil x \rceil$, the smallest integer >= x.  Derivative 0 (not differentiated).")
trunc_p, trunc = piecewise_constant(
    "trunc", r"x rounded towards 0.  Derivative 0 (not differentiated).")
rint_p, rint = piecewise_constant(
    "rint", r"x rounded to the nearest integer (half to even).  Derivative 0 (not differentiated).")

# x mod y = x - floor(x / y) y, with the sign of y (Python's %, numpy's remainder).
# d/dx = 1, d/dy = -floor(x / y): the floor is constant between its jumps.
mod_p, mod = binary(
    "mod", None, lambda x, y, ans: -floor(x / y),
    r"$x - \lfloor x / y \rfloor y$ (the sign of y, like Python's %).  "
    r"$\partial_x = 1$, $\partial_y = -\lfloor x / y \rfloor$", ufunc="remainder")


def remainder(x, y):
    r"""numpy's other name for ``mod``: $x - \lfloor x / y \rfloor y$."""
    return mod(x, y)

# C's fmod: x - trunc(x / y) y, with the sign of x.  d/dx = 1, d/dy = -trunc(x / y).
fmod_p, fmod = binary(
    "fmod", None, lambda x, y, ans: -trunc(x / y),
    r"$x - \operatorname{trunc}(x / y) y$ (the sign of x, like C's fmod).  "
    r"$\partial_x = 1$, $\partial_y = -\operatorname{trunc}(x / y)$")


def _share(x, y, ans):
    """How much of the cotangent goes to x: 1 where x is the result, 1/2 where x and y
    tie (autograd's balanced_eq), 0 where y is (or x is NaN and fmax ignored it)."""
    return cast(equal(x, ans), ans.dtype) / (1 + cast(equal(x, y), ans.dtype))

fmax_p, fmax = binary(
    "fmax", _share, lambda x, y, ans: _share(y, x, ans),
    r"$\max(x, y)$, ignoring NaN.  The cotangent goes to the larger input (half each on a tie)")
fmin_p, fmin = binary(
    "fmin", _share, lambda x, y, ans: _share(y, x, ans),
    r"$\min(x, y)$, ignoring NaN.  The cotangent goes to the smaller input (half each on a tie)")


# clip(x, lo, hi) = min(max(x, lo), hi), numpy's definition. The cotangent goes to x
# strictly inside (lo, hi) (autograd's rule: none where x touches a bound), otherwise to
# the bound that gave the result: lo where x <= lo < hi, hi where max(x, lo) >= hi.
def _clip_kernel(x, lo, hi):
    return backend.xp.minimum(backend.xp.maximum(x, lo), hi)

def _clip_steps(emit, x, lo, hi):   # fused in graphs as its kernel
    return emit("minimum", emit("maximum", x, lo), hi)

def _inside(v, x, lo, hi): return where(x > lo, where(x < hi, v, 0), 0)
def _at_lo(v, x, lo, hi): return where(x <= lo, where(lo < hi, v, 0), 0)
def _at_hi(v, x, lo, hi): return where(maximum(x, lo) >= hi, v, 0)

clip_p = primitive("clip", _clip_kernel)
defeffect(clip_p, "fresh", elementwise=_clip_steps)
refuses_complex(clip_p, NO_ORDER)
def clip(a, a_min=None, a_max=None):
    r"""$\min(\max(a, a_{min}), a_{max})$, with numpy's broadcasting; ``None`` is no bound.
    $\partial_a = 1$ strictly between the bounds, else the bound that was hit gets 1."""
    if a_min is None and a_max is None:
        raise ValueError("clip: give a_min, a_max or both (None means no bound).")
    if not isinstance(a, Tensor):
        a = convert_to_tensor(a)
    return innermost.process(clip_p, a, _bound(a, a_min, -1), _bound(a, a_max, 1))

def _bound(a, bound, sign):
    """``bound``, or for None the end of ``a``'s range (-inf or +inf for floats)."""
    if bound is not None:
        return bound
    if a.dtype.kind in "iu":
        info = np.iinfo(a.dtype)
        return int(info.min if sign < 0 else info.max)
    return sign * float("inf")

defvjp(clip_p,
       lambda ct, ans, x, lo, hi: unbroadcast(_inside(ct, x, lo, hi), x),
       lambda ct, ans, x, lo, hi: unbroadcast(_at_lo(ct, x, lo, hi), lo),
       lambda ct, ans, x, lo, hi: unbroadcast(_at_hi(ct, x, lo, hi), hi))
defjvp(clip_p,
       lambda x_dot, ans, x, lo, hi: broadcast_as(_inside(x_dot, x, lo, hi), ans),
       lambda lo_dot, ans, x, lo, hi: broadcast_as(_at_lo(lo_dot, x, lo, hi), ans),
       lambda hi_dot, ans, x, lo, hi: broadcast_as(_at_hi(hi_dot, x, lo, hi), ans))


# nan_to_num: NaN, +inf and -inf replaced by finite numbers; the finite entries pass
# through.  d/dx = 1 where x is finite (there ans == x), 0 where it was replaced.
nan_to_num_p = primitive("nan_to_num", lambda x, nan, posinf, neginf: backend.xp.nan_to_num(
    x, nan=nan, posinf=posinf, neginf=neginf))
defeffect(nan_to_num_p, "fresh")
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    r"""x with NaN -> ``nan``, inf -> ``posinf``, -inf -> ``neginf`` (default: the largest
    finite numbers).  $\frac{d}{dx} = 1$ where x is finite, else 0. (``copy`` is
    numpy's; a tensor is never changed in place.)"""
    validate.flags("tg.nan_to_num", copy=copy)
    return innermost.process(nan_to_num_p, x, nan=nan, posinf=posinf, neginf=neginf)
defvjp(nan_to_num_p, lambda ct, ans, x, nan, posinf, neginf: where(equal(ans, x), ct, 0))
defjvp(nan_to_num_p, lambda x_dot, ans, x, nan, posinf, neginf: where(equal(ans, x), x_dot, 0))
defbatch(nan_to_num_p, leading_axes_rule(nan_to_num_p))   # entry by entry
