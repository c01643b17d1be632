"""Trigonometric and hyperbolic functions, their inverses, and angle conversions.

Most ops are one line (see ``ufuncs.py``): numpy's ufunc and its derivative, written
with teachgrad ops so that it can be differentiated again (``ans`` is the output).
"""
import math

from ... import backend
from ..core.apply import innermost, leading_axes_rule
from ..core.declare import defbatch, defeffect, defjvp, defvjp, primitive
from .arithmetic import where
from .math import abs as absolute, cos, sqrt, square
from .ufuncs import binary, unary

tan_p, tan = unary("tan", lambda x, ans: 1 + ans * ans,
                   r"$\tan x$, elementwise.  $\frac{d}{dx}\tan x = 1 + \tan^2 x$",
                   holomorphic=True)
sinh_p, sinh = unary("sinh", lambda x, ans: cosh(x),
                     r"$\sinh x$, elementwise.  $\frac{d}{dx}\sinh x = \cosh x$",
                     holomorphic=True)
cosh_p, cosh = unary("cosh", lambda x, ans: sinh(x),
                     r"$\cosh x$, elementwise.  $\frac{d}{dx}\cosh x = \sinh x$",
                     holomorphic=True)

arcsin_p, arcsin = unary("arcsin", lambda x, ans: 1 / sqrt(1 - x * x),
                         r"$\arcsin x$.  $\frac{d}{dx}\arcsin x = 1 / \sqrt{1 - x^2}$",
                         holomorphic=True)
arccos_p, arccos = unary("arccos", lambda x, ans: -1 / sqrt(1 - x * x),
                         r"$\arccos x$.  $\frac{d}{dx}\arccos x = -1 / \sqrt{1 - x^2}$",
                         holomorphic=True)
arctan_p, arctan = unary("arctan", lambda x, ans: 1 / (1 + x * x),
                         r"$\arctan x$.  $\frac{d}{dx}\arctan x = 1 / (1 + x^2)$",
                         holomorphic=True)
arcsinh_p, arcsinh = unary("arcsinh", lambda x, ans: 1 / sqrt(x * x + 1),
                           r"$\sinh^{-1} x$.  $\frac{d}{dx}\sinh^{-1} x = 1 / \sqrt{x^2 + 1}$",
                           holomorphic=True)
arccosh_p, arccosh = unary("arccosh", lambda x, ans: 1 / sqrt(x * x - 1),
                           r"$\cosh^{-1} x$.  $\frac{d}{dx}\cosh^{-1} x = 1 / \sqrt{x^2 - 1}$",
                           holomorphic=True)
arctanh_p, arctanh = unary("arctanh", lambda x, ans: 1 / (1 - x * x),
                           r"$\tanh^{-1} x$.  $\frac{d}{dx}\tanh^{-1} x = 1 / (1 - x^2)$",
                           holomorphic=True)

# The angle of the point (x, y): d/dy = x / r^2, d/dx = -y / r^2 with r^2 = x^2 + y^2.
# numpy's argument order: arctan2(y, x).
arctan2_p, arctan2 = binary(
    "arctan2", lambda y, x, ans: x / (x * x + y * y), lambda y, x, ans: -y / (x * x + y * y),
    r"$\operatorname{atan2}(y, x)$, the angle of the point (x, y).  "
    r"$\partial_y = x / (x^2 + y^2)$, $\partial_x = -y / (x^2 + y^2)$")


def _over_r(v, ans):
    """v / r, with 0 where r = sqrt(x^2 + y^2) is 0 (as |x| has derivative 0 at 0)."""
    return where(ans == 0, 0, v / where(ans == 0, 1, ans))

hypot_p, hypot = binary(
    "hypot", lambda x, y, ans: _over_r(x, ans), lambda x, y, ans: _over_r(y, ans),
    r"$\sqrt{x^2 + y^2}$ without overflow.  $\partial_x = x / r$, $\partial_y = y / r$ "
    r"(0 at the origin)")

deg2rad_p, deg2rad = unary("deg2rad", lambda x, ans: math.pi / 180,
                           r"Degrees to radians, $x \pi / 180$.  $\frac{d}{dx} = \pi / 180$")
rad2deg_p, rad2deg = unary("rad2deg", lambda x, ans: 180 / math.pi,
                           r"Radians to degrees, $180 x / \pi$.  $\frac{d}{dx} = 180 / \pi$")


def radians(x):
    r"""Degrees to radians (numpy's other name for ``deg2rad``): $x \pi / 180$."""
    return deg2rad(x)


def degrees(x):
    r"""Radians to degrees (numpy's other name for ``rad2deg``): $180 x / \pi$."""
    return rad2deg(x)


# sinc x = sin(pi x) / (pi x), and 1 at 0.  d/dx = (cos(pi x) - sinc x) / x, which is
# 0/0 at x = 0: near 0 (|x| < 1e-3) its Taylor series -pi^2 x / 3 + pi^4 x^3 / 30 is used
# instead, so the second derivative at 0 (-pi^2 / 3) comes out right too.
def _sinc_derivative(x, ans):
    near = absolute(x) < 1e-3
    safe = where(near, 1, x)                  # no 0/0 in the branch `where` drops
    exact = (cos(math.pi * safe) - ans) / safe
    x2 = square(x)
    series = x * (-math.pi ** 2 / 3 + (math.pi ** 4 / 30) * x2)
    return where(near, series, exact)


sinc_p = primitive("sinc", lambda x: backend.xp.sinc(x))
defeffect(sinc_p, "fresh")   # not a ufunc: it has no `out=`, so it is not fused
def sinc(x):
    r"""$\operatorname{sinc} x = \sin(\pi x) / (\pi x)$.  $\frac{d}{dx} = (\cos \pi x - \operatorname{sinc} x) / x$"""
    return innermost.process(sinc_p, x)
defvjp(sinc_p, lambda ct, ans, x: ct * _sinc_derivative(x, ans))
defjvp(sinc_p, lambda x_dot, ans, x: x_dot * _sinc_derivative(x, ans))
defbatch(sinc_p, leading_axes_rule(sinc_p))   # entry by entry: the batch as it is
