"""Neural-network staples: relu, softmax, log_softmax (sigmoid is in math.py)."""
from .. import backend
from .arithmetic import where
from .core import bind, defjvp, defvjp, primitive
from .math import exp
from .reduction import sum

# relu(x) = max(x, 0).  d/dx = 1 where x > 0, else 0.
relu_p = primitive("relu", lambda x: backend.xp.maximum(x, 0))
def relu(x): return bind(relu_p, x)
defvjp(relu_p, lambda g, ans, x: where(x > 0, g, 0))
defjvp(relu_p, lambda x_dot, ans, x: where(x > 0, x_dot, 0))


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
