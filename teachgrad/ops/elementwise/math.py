"""Elementwise functions of one tensor, each with its derivative.

Each block is one op: the kernel (``backend.xp``), the public function, and
the VJP rule, written with teachgrad ops so that it can be differentiated again.
``g`` is the cotangent of the output, ``ans`` the output itself.
"""
from ... import backend, validate
from ..core.apply import innermost, leading_axes_rule
from ..core.declare import (
    defbatch,
    defeffect,
    defjvp,
    defvjp,
    fused_op,
    not_differentiable,
    primitive,
    takes_complex,
)
from ..core.grad_util import as_tensor, require_same_shape
from .casts import cast
from .conjugate import conj_of, conj_op, real_part

# -x.  d/dx (-x) = -1
negative_p = primitive("negative", lambda x: -x)   # an operator: see arithmetic.py
defeffect(negative_p, "fresh", elementwise="negative")
takes_complex(negative_p)
def negative(x): return innermost.process(negative_p, x)
defvjp(negative_p, lambda ct, ans, x: -ct)
defjvp(negative_p, lambda x_dot, ans, x: -x_dot)

# e^x.  d/dx e^x = e^x, which is the output itself.
exp_p = primitive("exp", lambda x: backend.xp.exp(x))
defeffect(exp_p, "fresh", elementwise="exp")
takes_complex(exp_p)
def exp(x): return innermost.process(exp_p, x)
defvjp(exp_p, lambda ct, ans, x: ct * conj_of(ans))
defjvp(exp_p, lambda x_dot, ans, x: x_dot * ans)

# ln x.  d/dx ln x = 1/x
log_p = primitive("log", lambda x: backend.xp.log(x))
defeffect(log_p, "fresh", elementwise="log")
takes_complex(log_p)
def log(x): return innermost.process(log_p, x)
defvjp(log_p, lambda ct, ans, x: ct / conj_of(x))
defjvp(log_p, lambda x_dot, ans, x: x_dot / x)

# ln(1 + x), accurate for tiny x.  d/dx = 1/(1 + x)
log1p_p = primitive("log1p", lambda x: backend.xp.log1p(x))
defeffect(log1p_p, "fresh", elementwise="log1p")
takes_complex(log1p_p)
def log1p(x): return innermost.process(log1p_p, x)
defvjp(log1p_p, lambda ct, ans, x: ct / conj_of(1 + x))
defjvp(log1p_p, lambda x_dot, ans, x: x_dot / (1 + x))

# sqrt(x).  d/dx sqrt(x) = 1 / (2 sqrt(x))
sqrt_p = primitive("sqrt", lambda x: backend.xp.sqrt(x))
defeffect(sqrt_p, "fresh", elementwise="sqrt")
takes_complex(sqrt_p)
def sqrt(x): return innermost.process(sqrt_p, x)
defvjp(sqrt_p, lambda ct, ans, x: ct / (2 * conj_of(ans)))
defjvp(sqrt_p, lambda x_dot, ans, x: x_dot / (2 * ans))

# x^2.  d/dx x^2 = 2x
square_p = primitive("square", lambda x: backend.xp.square(x))
defeffect(square_p, "fresh", elementwise="square")
takes_complex(square_p)
def square(x): return innermost.process(square_p, x)
defvjp(square_p, lambda ct, ans, x: ct * (2 * conj_of(x)))
defjvp(square_p, lambda x_dot, ans, x: x_dot * (2 * x))

# sign(x) is piecewise constant: zero derivative.
sign_p = not_differentiable(primitive("sign", lambda x: backend.xp.sign(x)))
defeffect(sign_p, "fresh", elementwise="sign")
def sign(x): return innermost.process(sign_p, x)

# round(x) is piecewise constant: zero derivative (a straight-through estimator
# wraps it in tg.grad_pass_through to pass gradients through anyway).
round_p = not_differentiable(primitive("round", lambda x: backend.xp.round(x)))
defeffect(round_p, "fresh")
def round(x): return innermost.process(round_p, x)
defbatch(round_p, leading_axes_rule(round_p))   # entry by entry: the batch as it is

def _abs_slope(ans, x):
    """sign(x) for a real x; z / abs(z) for a complex one, made of ops that are
    differentiated again (0 at 0, as TensorFlow's ComplexAbs gradient gives: there
    ans + (1 - sign(ans)) is 1)."""
    if x.dtype.kind != "c":
        return sign(x)
    return x / (ans + (1 - sign(ans)))

def _abs_jvp(x_dot, ans, x):
    if x.dtype.kind != "c":
        return x_dot * sign(x)
    return real_part(conj_op(_abs_slope(ans, x)) * x_dot)   # the slope along x_dot

# |x|.  d/dx |x| = sign(x)  (0 at x = 0, as TensorFlow and numpy choose); for complex
# z, abs(z) is real and its gradient z / abs(z) (0 at 0, as TensorFlow's).
abs_p = primitive("abs", lambda x: backend.xp.abs(x))
defeffect(abs_p, "fresh", elementwise="abs")
takes_complex(abs_p)
def abs(x): return innermost.process(abs_p, x)
defvjp(abs_p, lambda ct, ans, x: ct * _abs_slope(ans, x))
defjvp(abs_p, _abs_jvp)


def fabs(x):
    r"""$\lvert x \rvert$ as a float tensor (numpy's ``fabs``: integers become float64), made of
    ``abs``.  $\frac{d}{dx}\lvert x \rvert = \operatorname{sign} x$. Complex input is
    refused, as numpy's ``fabs`` refuses it: ``tg.abs`` is the modulus."""
    x = as_tensor(x, "x", "tg.fabs")
    if x.dtype is not None and x.dtype.kind == "c":
        validate.fail(TypeError, "tg.fabs", "x", "real (numpy's fabs has no complex "
                      "version)", x, "Use tg.abs(x) for the modulus of complex numbers.")
    if x.dtype is not None and x.dtype.kind != "f":
        x = cast(x, "float64")
    return abs(x)

# sin x.  d/dx sin x = cos x
sin_p = primitive("sin", lambda x: backend.xp.sin(x))
defeffect(sin_p, "fresh", elementwise="sin")
takes_complex(sin_p)
def sin(x): return innermost.process(sin_p, x)

# cos x.  d/dx cos x = -sin x
cos_p = primitive("cos", lambda x: backend.xp.cos(x))
defeffect(cos_p, "fresh", elementwise="cos")
takes_complex(cos_p)
def cos(x): return innermost.process(cos_p, x)

defvjp(sin_p, lambda ct, ans, x: ct * conj_of(cos(x)))
defjvp(sin_p, lambda x_dot, ans, x: x_dot * cos(x))
defvjp(cos_p, lambda ct, ans, x: -(ct * conj_of(sin(x))))
defjvp(cos_p, lambda x_dot, ans, x: -(x_dot * sin(x)))

def _tanh_slope(ans, g, y):
    """g (1 - y^2) with y = tanh(x) (conjugated for a complex VJP): the fused tanh_grad
    for real numbers, three ops for complex ones."""
    if ans.dtype.kind != "c":
        return tanh_grad(ans, g)
    return g * (1 - y * y)

# tanh x.  d/dx tanh x = 1 - tanh^2 x, applied by the fused op tanh_grad below.
tanh_p = primitive("tanh", lambda x: backend.xp.tanh(x))
defeffect(tanh_p, "fresh", elementwise="tanh")
takes_complex(tanh_p)
def tanh(x): return innermost.process(tanh_p, x)
defvjp(tanh_p, lambda ct, ans, x: _tanh_slope(ans, ct, conj_of(ans)))
defjvp(tanh_p, lambda x_dot, ans, x: _tanh_slope(ans, x_dot, ans))


def _tanh_grad_kernel(y, g):
    if y.ndim == 0 or y.shape != g.shape or y.dtype != g.dtype:
        return g * (1 - y * y)
    out = backend.xp.multiply(y, y)
    backend.xp.subtract(1, out, out=out)    # in place: one temporary instead of three
    backend.xp.multiply(out, g, out=out)
    return out

def _tanh_grad_steps(emit, y, g):   # fused in graphs as (1 - y * y) * g
    return emit("multiply", emit("subtract", 1, emit("multiply", y, y)), g)

# tanh_grad(y, g) = g (1 - y^2): the cotangent of tanh given its output y
# (TensorFlow's TanhGrad). One op instead of three keeps the backward pass lean;
# its own rules make tanh differentiable to any order.
tanh_grad_p = primitive("tanh_grad", _tanh_grad_kernel)
defeffect(tanh_grad_p, "fresh", elementwise=_tanh_grad_steps)
fused_op(tanh_grad_p)
def tanh_grad(y, g):
    r"""$g\,(1 - y^2)$: the cotangent of ``y = tanh(x)`` for the cotangent ``g``, as one op
    (drawn ``tanh_grad: (1 - y * y) * g``)."""
    require_same_shape("tanh_grad", y, g, ("y", "g"))
    return innermost.process(tanh_grad_p, y, g)
defvjp(tanh_grad_p,
       lambda ct, ans, y, g: ct * g * (-2 * y),
       lambda ct, ans, y, g: tanh_grad(y, ct))
defjvp(tanh_grad_p,
       lambda y_dot, ans, y, g: y_dot * g * (-2 * y),
       lambda g_dot, ans, y, g: tanh_grad(y, g_dot))


def _sigmoid_kernel(x):
    # 1 / (1 + e^-x) written as exp(-log(1 + e^-x)): no overflow for large |x|.
    xp = backend.xp
    return xp.exp(-xp.logaddexp(0, -x))

def _sigmoid_steps(emit, x):   # fused in graphs as its kernel: exp(-logaddexp(0, -x))
    return emit("exp", emit("negative", emit("logaddexp", 0, emit("negative", x))))

# sigmoid(x) = 1 / (1 + e^-x).  d/dx = sigmoid(x) (1 - sigmoid(x)), applied by sigmoid_grad.
sigmoid_p = primitive("sigmoid", _sigmoid_kernel)
defeffect(sigmoid_p, "fresh", elementwise=_sigmoid_steps)
def sigmoid(x): return innermost.process(sigmoid_p, x)
defvjp(sigmoid_p, lambda ct, ans, x: sigmoid_grad(ans, ct))
defjvp(sigmoid_p, lambda x_dot, ans, x: sigmoid_grad(ans, x_dot))


def _sigmoid_grad_kernel(y, g):
    if y.ndim == 0 or y.shape != g.shape or y.dtype != g.dtype:
        return g * (y * (1 - y))
    out = backend.xp.subtract(1, y)          # the same steps in place: one temporary
    backend.xp.multiply(y, out, out=out)
    backend.xp.multiply(g, out, out=out)
    return out

def _sigmoid_grad_steps(emit, y, g):   # fused in graphs as g * (y * (1 - y))
    return emit("multiply", g, emit("multiply", y, emit("subtract", 1, y)))

# sigmoid_grad(y, g) = g y (1 - y): the cotangent of sigmoid given its output y
# (TensorFlow's SigmoidGrad), one op instead of three, like tanh_grad.
sigmoid_grad_p = primitive("sigmoid_grad", _sigmoid_grad_kernel)
defeffect(sigmoid_grad_p, "fresh", elementwise=_sigmoid_grad_steps)
fused_op(sigmoid_grad_p)
def sigmoid_grad(y, g):
    r"""$g\, y (1 - y)$: the cotangent of ``y = sigmoid(x)`` for the cotangent ``g``, as
    one op (drawn ``sigmoid_grad: g * (y * (1 - y))``)."""
    require_same_shape("sigmoid_grad", y, g, ("y", "g"))
    return innermost.process(sigmoid_grad_p, y, g)
defvjp(sigmoid_grad_p,
       lambda ct, ans, y, g: ct * g * (1 - 2 * y),
       lambda ct, ans, y, g: sigmoid_grad(y, ct))
defjvp(sigmoid_grad_p,
       lambda y_dot, ans, y, g: y_dot * g * (1 - 2 * y),
       lambda g_dot, ans, y, g: sigmoid_grad(y, g_dot))

