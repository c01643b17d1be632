r"""numpy's complex-number functions (``real``, ``imag``, ``conj``, ``conjugate``,
``angle``, ``real_if_close``), TensorFlow's ``complex(real, imag)``, and ``fabs``.

With TensorFlow's convention (``teachgrad.dtypes``) a complex cotangent is
$\partial L/\partial x + i\,\partial L/\partial y$, so each rule says where a real
cotangent lands in the plane: ``real`` sends ``ct`` to $\mathrm{ct} + 0i$, ``imag`` to
$i\,\mathrm{ct}$, ``angle`` to $\mathrm{ct} \cdot i / \bar z$ (the angle grows fastest
at right angles to $z$, by $1/\lvert z \rvert$), and ``complex(re, im)`` splits ``ct``
into its real and imaginary parts. On a real tensor, ``real`` and ``conj`` are the
tensor itself (an ``identity``), ``imag`` is 0 and ``angle`` is 0 or $\pi$ (piecewise
constant: no gradient).
"""
import math

import numpy as np

from ... import backend, validate
from ..core.apply import innermost, leading_axes_rule
from ..core.declare import defbatch, defeffect, defjvp, defvjp, primitive, takes_complex
from ..core.grad_util import as_tensor
from ..shape.reshape import broadcast_as, move_to_rank, unbroadcast
from .casts import cast, identity
from .conjugate import conj_op, real_part


def real(val):
    """The real part of ``val`` (a float tensor for a complex one); a real tensor is
    returned as it is (an ``identity``).  Gradient: ``ct`` becomes ``ct + 0i``."""
    x = as_tensor(val, "val", "tg.real")
    return real_part(x) if _is_complex(x) else identity(x)


def conj(x):
    r"""The complex conjugate $\bar z = x - iy$; a real tensor is returned as it is (an
    ``identity``).  Gradient: the conjugate of the cotangent."""
    x = as_tensor(x, "x", "tg.conj")
    return conj_op(x) if _is_complex(x) else identity(x)


def conjugate(x):
    r"""numpy's other name for ``conj``: $\bar z$."""
    x = as_tensor(x, "x", "tg.conjugate")
    return conj_op(x) if _is_complex(x) else identity(x)


def real_if_close(a, tol=100):
    """``a`` as a real tensor (its real part) if all its imaginary parts are within
    ``tol`` machine epsilons of 0, else ``a`` as it is (numpy's ``real_if_close``). It
    looks at the values, so a complex ``a`` must have them (eagerly)."""
    validate.number(tol, "tol", "tg.real_if_close")
    x = as_tensor(a, "a", "tg.real_if_close")
    if not _is_complex(x):
        return identity(x)
    if x.value is None:
        raise ValueError("tg.real_if_close: `a` is a complex graph tensor, whose values are "
                         "not known until it runs; use tg.real(a) to take the real part.")
    closeness = tol * np.finfo(x.dtype).eps if tol > 1 else tol
    if bool(np.all(np.abs(np.imag(x.value)) < closeness)):
        return real_part(x)
    return identity(x)


def _is_complex(x):
    return x.dtype is not None and x.dtype.kind == "c"


def _imag_vjp(ct, ans, x):
    if x.dtype.kind != "c":
        return None   # the imaginary part of a real number is 0: constant
    return cast(ct, x.dtype) * 1j

# imag(z) = y: 0 everywhere on the real line.  Its cotangent ct lands at i ct.
imag_p = primitive("imag", lambda x: backend.xp.imag(x).copy())
defeffect(imag_p, "fresh")
takes_complex(imag_p)
def imag(val):
    """The imaginary part of ``val``: a float tensor; zeros of a real tensor's shape and
    dtype (numpy's ``imag``, not differentiated there: it is constant).  Gradient for a
    complex ``val``: ``ct`` becomes ``i ct``."""
    return innermost.process(imag_p, as_tensor(val, "val", "tg.imag"))
defvjp(imag_p, _imag_vjp)
defjvp(imag_p, lambda x_dot, ans, x: innermost.process(imag_p, x_dot) if x.dtype.kind == "c" else None)
defbatch(imag_p, leading_axes_rule(imag_p))


def _angle_kernel(x, deg):
    out = backend.xp.angle(x)   # on reals arctan2(0, x): pi where x < 0 (and at -0.0), else 0
    return out * (180.0 / math.pi) if deg else out


def _angle_vjp(ct, ans, x, deg):
    if x.dtype.kind != "c":
        return None   # piecewise constant on the real line
    scale = 180.0 / math.pi if deg else 1.0
    return (ct * scale) * (1j / conj_op(x))   # at z = 0: not a number, as TensorFlow's


def _angle_jvp(x_dot, ans, x, deg):
    if x.dtype.kind != "c":
        return None
    scale = 180.0 / math.pi if deg else 1.0
    return innermost.process(imag_p, x_dot / x) * scale

# angle(z) = atan2(y, x).  d angle = imag(dz / z); its cotangent ct lands at ct i / conj(z).
angle_p = primitive("angle", _angle_kernel)
defeffect(angle_p, "fresh")
takes_complex(angle_p)
def angle(z, deg=False):
    r"""The angle of ``z`` in the complex plane, $\arg z$, in $(-\pi, \pi]$ (in degrees
    with ``deg``); a float tensor. On a real tensor $\pi$ where $z < 0$ (and at $-0.0$,
    as numpy's $\operatorname{arctan2}(0, z)$) and 0 elsewhere, not differentiated. For
    complex $z$ its gradient is $i / \bar z$ (not a number at 0, as TensorFlow's)."""
    deg = validate.boolean(deg, "deg", "tg.angle")
    return innermost.process(angle_p, as_tensor(z, "z", "tg.angle"), deg=deg)
defvjp(angle_p, _angle_vjp)
defjvp(angle_p, _angle_jvp)
defbatch(angle_p, leading_axes_rule(angle_p))


def _complex_kernel(re, im):
    dtype = np.result_type(re.dtype, im.dtype, np.complex64)
    out = backend.xp.empty(np.broadcast_shapes(re.shape, im.shape), dtype=dtype)
    out.real, out.imag = re, im
    return out

# complex(re, im) = re + i im.  The cotangent splits into its parts.
complex_p = primitive("complex", _complex_kernel)
defeffect(complex_p, "fresh")
takes_complex(complex_p)
def complex(real, imag):
    """The complex tensor ``real + i imag`` (TensorFlow's ``tf.complex``), broadcast:
    complex64 from float32 parts, complex128 from float64 ones.  Gradient: the real
    part of the cotangent goes to ``real``, its imaginary part to ``imag``."""
    re = as_tensor(real, "real", "tg.complex")
    im = as_tensor(imag, "imag", "tg.complex")
    for name, part in (("real", re), ("imag", im)):
        if part.dtype.kind != "f":
            validate.fail(TypeError, "tg.complex", name, "a float tensor (float32 or "
                          "float64), as TensorFlow's", part,
                          "tg.cast an integer tensor to a float first.")
    return innermost.process(complex_p, re, im)
defvjp(complex_p,
       lambda ct, ans, re, im: unbroadcast(real_part(ct), re),
       lambda ct, ans, re, im: unbroadcast(innermost.process(imag_p, ct), im))
defjvp(complex_p,
       lambda re_dot, ans, re, im: broadcast_as(cast(re_dot, ans.dtype), ans),
       lambda im_dot, ans, re, im: broadcast_as(cast(im_dot, ans.dtype) * 1j, ans))


def _complex_batch(values, batched):
    """Both parts' batches lined up on their batch axis (a shared part broadcasts)."""
    rank = max(v.ndim - b for v, b in zip(values, batched))
    return innermost.process(complex_p, *[move_to_rank(v, rank) if b else v
                             for v, b in zip(values, batched)]), True


defbatch(complex_p, _complex_batch)
