"""Neural-network staples: relu, softmax, log_softmax (sigmoid is in math.py)."""
from .. import backend
from .core import bind, defjvp, defvjp, primitive
from .grad_util import compatible
from .math import exp
from .reduction import sum

# relu(x) = max(x, 0).  d/dx = 1 where x > 0, else 0, applied by the fused op relu_grad below.
relu_p = primitive("relu", lambda x: backend.xp.maximum(x, 0))
def relu(x): return bind(relu_p, x)
defvjp(relu_p, lambda g, ans, x: relu_grad(g, x))
defjvp(relu_p, lambda x_dot, ans, x: relu_grad(x_dot, x))


def _relu_grad_kernel(g, x):
    return backend.xp.where(x > 0, g, g.dtype.type(0))

# relu_grad(g, x) = g where x > 0, else 0: the cotangent of relu at x (TensorFlow's
# ReluGrad). Written as where(x > 0, g, 0) it would be two ops and a constant; as one op
# a relu costs one step of the backward pass. It is linear in g, so its VJP and JVP in g
# are relu_grad again; in x it is flat (piecewise constant), so x gets no gradient.
relu_grad_p = primitive("relu_grad", _relu_grad_kernel)
def relu_grad(g, x):
    if not compatible(g.shape, x.shape):
        raise ValueError(f"relu_grad: g and x must have the same shape, got {g.shape} and "
                         f"{x.shape}.")
    return bind(relu_grad_p, g, x)
defvjp(relu_grad_p, lambda ct, ans, g, x: relu_grad(ct, x), None)
defjvp(relu_grad_p, lambda g_dot, ans, g, x: relu_grad(g_dot, x), None)


def _softmax_kernel(x, axis):
    xp = backend.xp
    if x.size == 0:
        return xp.zeros_like(x)
    e = xp.exp(x - x.max(axis=axis, keepdims=True))  # shifted: no overflow
    return e / e.sum(axis=axis, keepdims=True)

# softmax(x)_i = e^{x_i} / sum_j e^{x_j}.  VJP: s * (g - sum(g * s)), with s = softmax(x)
softmax_p = primitive("softmax", _softmax_kernel)
def softmax(x, axis=-1): return bind(softmax_p, x, axis=axis)
defvjp(softmax_p, lambda g, ans, x, axis: ans * (g - sum(g * ans, axis=axis, keepdims=True)))
defjvp(softmax_p, lambda x_dot, ans, x, axis:
       ans * (x_dot - sum(x_dot * ans, axis=axis, keepdims=True)))


def _log_softmax_kernel(x, axis):
    xp = backend.xp
    if x.size == 0:
        return xp.zeros_like(x)
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))

# log_softmax(x) = x - logsumexp(x).  VJP: g - softmax(x) * sum(g)
log_softmax_p = primitive("log_softmax", _log_softmax_kernel)
def log_softmax(x, axis=-1): return bind(log_softmax_p, x, axis=axis)
defvjp(log_softmax_p, lambda g, ans, x, axis: g - exp(ans) * sum(g, axis=axis, keepdims=True))
defjvp(log_softmax_p, lambda x_dot, ans, x, axis:
       x_dot - sum(exp(ans) * x_dot, axis=axis, keepdims=True))
