"""numpy's complex-number functions (``real``, ``imag``, ``conj``, ``conjugate``,
``angle``, ``real_if_close``) and ``fabs``, on real tensors.

teachgrad tensors hold real numbers only (complex dtypes are a later step), so each of
these is the function on the real line, where it is simple: the real part and the
conjugate of $x$ are $x$ itself (an ``identity``: its cotangent passes through), the
imaginary part is 0 and the angle is 0 or $\\pi$ (piecewise constant: not
differentiated, as ``sign`` is not). A complex input is refused, naming the argument.
"""
import math

from ... import backend, validate
from ..core.apply import bind, leading_axes_rule
from ..core.declare import defbatch, defeffect, not_differentiable, primitive
from ..core.grad_util import as_tensor
from .casts import cast, identity
from .math import abs as _abs


def _real_input(val, name, where):
    """``val`` as a tensor of real numbers (complex values are refused by ``as_tensor``)."""
    return as_tensor(val, name, where)


def real(val):
    """The real part of ``val``: on a real tensor, ``val`` itself (an ``identity``).
    (Complex dtypes are a later step.)"""
    return identity(_real_input(val, "val", "tg.real"))


def conj(x):
    r"""The complex conjugate $\bar x$: on a real tensor, $x$ itself (an ``identity``).
    (Complex dtypes are a later step.)"""
    return identity(_real_input(x, "x", "tg.conj"))


def conjugate(x):
    r"""numpy's other name for ``conj``: on a real tensor, $x$ itself.
    (Complex dtypes are a later step.)"""
    return identity(_real_input(x, "x", "tg.conjugate"))


def real_if_close(a, tol=100):
    """``a`` as a real tensor if its imaginary parts are within ``tol`` machine epsilons
    of 0: a real tensor is returned as it is (an ``identity``). (Complex dtypes are a
    later step.)"""
    validate.number(tol, "tol", "tg.real_if_close")
    return identity(_real_input(a, "a", "tg.real_if_close"))


# imag: the imaginary part, 0 everywhere on the real line.  Constant: no derivative.
imag_p = not_differentiable(primitive("imag", lambda x: backend.xp.zeros_like(x)))
defeffect(imag_p, "fresh", shape_only_inputs=(0,))
def imag(val):
    """The imaginary part of ``val``: on a real tensor, zeros of its shape and dtype
    (numpy's ``imag``). Not differentiated (it is constant). (Complex dtypes are a later
    step.)"""
    return bind(imag_p, _real_input(val, "val", "tg.imag"))
defbatch(imag_p, leading_axes_rule(imag_p))


def _angle_kernel(x, deg):
    out = backend.xp.angle(x)   # arctan2(0, x): pi where x < 0 (and at -0.0), else 0
    return out * (180.0 / math.pi) if deg else out

# angle: the argument of x, 0 for x >= 0 and pi for x < 0.  Piecewise constant: like
# sign, not differentiated.
angle_p = not_differentiable(primitive("angle", _angle_kernel))
defeffect(angle_p, "fresh")
def angle(z, deg=False):
    r"""The angle of ``z`` in the complex plane, $\arg z$: on a real tensor $\pi$ where
    $z < 0$ (and at $-0.0$, as numpy's $\operatorname{arctan2}(0, z)$) and 0 elsewhere,
    in degrees with ``deg``; a float tensor. Not differentiated (its derivative is 0
    wherever it has one). (Complex dtypes are a later step.)"""
    deg = validate.boolean(deg, "deg", "tg.angle")
    return bind(angle_p, _real_input(z, "z", "tg.angle"), deg=deg)
defbatch(angle_p, leading_axes_rule(angle_p))


def fabs(x):
    r"""$\lvert x \rvert$ as a float tensor (numpy's ``fabs``: integers become float64), made of
    ``abs``.  $\frac{d}{dx}\lvert x \rvert = \operatorname{sign} x$."""
    x = _real_input(x, "x", "tg.fabs")
    if x.dtype is not None and x.dtype.kind != "f":
        x = cast(x, "float64")
    return _abs(x)
