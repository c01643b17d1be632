"""Neural-network staples: relu, softmax, log_softmax, the sparse softmax cross-entropy
(sigmoid is in math.py)."""
from ... import backend, validate
from ...tensor import convert_to_tensor
from ..core.apply import innermost
from ..core.declare import (
    accepts,
    defbatch,
    defeffect,
    defjvp,
    defshape,
    defvjp,
    defvjp_all,
    fused_op,
    primitive,
    refuses_complex,
)
from ..core.grad_util import compatible, require_same_shape
from ..core.inputs import operand
from ..elementwise.arithmetic import NO_ORDER
from ..elementwise.math import exp
from ..reductions.sums import sum
from ..shape.reshape import expand_dims, repeat_unbatched, shifted_axes_rule


# relu(x) = max(x, 0).  d/dx = 1 where x > 0, else 0, applied by the fused op relu_grad below.
def _relu_kernel(x):
    if backend.is_numpy_scalar(x):   # a Python branch beats the ufunc call
        return x if not x <= 0 else x.dtype.type(0)    # (NaN stays NaN, as in maximum)
    return backend.xp.maximum(x, 0)

def _relu_steps(emit, x):   # fused in graphs as maximum(x, 0)
    return emit("maximum", x, 0)

relu_p = primitive("relu", _relu_kernel)
defeffect(relu_p, "fresh", elementwise=_relu_steps)
refuses_complex(relu_p, NO_ORDER)
def relu(x): return innermost.process(relu_p, x)
defvjp(relu_p, lambda ct, ans, x: relu_grad(ct, x))
defjvp(relu_p, lambda x_dot, ans, x: relu_grad(x_dot, x))


def _relu_grad_kernel(g, x):
    if backend.is_numpy_scalar(x) and backend.is_numpy_scalar(g):
        # numpy's where takes microseconds on scalars; a Python branch does not
        return g if x > 0 else g.dtype.type(0)
    return backend.where_or_zero(x > 0, g)   # where(x > 0, g, 0), branch-free

def _relu_grad_steps(emit, g, x):   # fused in graphs as where(x > 0, g, 0)
    return emit("where", emit("greater", x, 0, dtype=bool), g, 0)

# relu_grad(g, x) = g where x > 0, else 0: the cotangent of relu at x (TensorFlow's
# ReluGrad). Written as where(x > 0, g, 0) it would be two ops and a constant; as one op
# a relu costs one step of the backward pass. It is linear in g, so its VJP and JVP in g
# are relu_grad again; in x it is flat (piecewise constant), so x gets no gradient.
relu_grad_p = primitive("relu_grad", _relu_grad_kernel)
defeffect(relu_grad_p, "fresh", elementwise=_relu_grad_steps)
fused_op(relu_grad_p)
def relu_grad(g, x):
    r"""$g$ where $x > 0$, else 0: the cotangent of ``relu(x)`` for the cotangent ``g``, as
    one op (drawn ``relu_grad: where(x > 0, g, 0)``)."""
    require_same_shape("relu_grad", g, x, ("g", "x"))
    return innermost.process(relu_grad_p, g, x)
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
defeffect(softmax_p, "fresh")
def softmax(x, axis=-1):
    if type(axis) is not int:
        axis = validate.one_axis(axis, None, "axis", "tg.softmax")
    return innermost.process(softmax_p, x, axis=axis)
defvjp(softmax_p, lambda ct, ans, x, axis: ans * (ct - sum(ct * ans, axis=axis, keepdims=True)))
defjvp(softmax_p, lambda x_dot, ans, x, axis:
       ans * (x_dot - sum(x_dot * ans, axis=axis, keepdims=True)))
defbatch(softmax_p, shifted_axes_rule(softmax_p, "axis"))


def _log_softmax_kernel(x, axis):
    xp = backend.xp
    if x.size == 0:
        return xp.zeros_like(x)
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))

# log_softmax(x) = x - logsumexp(x).  VJP: g - softmax(x) * sum(g)
log_softmax_p = primitive("log_softmax", _log_softmax_kernel)
defeffect(log_softmax_p, "fresh")
def log_softmax(x, axis=-1):
    if type(axis) is not int:
        axis = validate.one_axis(axis, None, "axis", "tg.log_softmax")
    return innermost.process(log_softmax_p, x, axis=axis)
defvjp(log_softmax_p, lambda ct, ans, x, axis: ct - exp(ans) * sum(ct, axis=axis, keepdims=True))
defjvp(log_softmax_p, lambda x_dot, ans, x, axis:
       x_dot - sum(exp(ans) * x_dot, axis=axis, keepdims=True))
defbatch(log_softmax_p, shifted_axes_rule(log_softmax_p, "axis"))


def _sparse_xent_kernel(logits, labels):
    xp = backend.xp
    classes = logits.shape[-1]
    if labels.size:   # checked here, so that labels fed to a graph are checked too
        low, high = int(labels.min()), int(labels.max())
        if low < 0 or high >= classes:
            raise ValueError(f"received a label value of {low if low < 0 else high}, outside "
                             f"the valid range [0, {classes}) of the {classes} classes")
    flat = logits.reshape(-1, classes)            # one row per example
    rows, picks = xp.arange(flat.shape[0]), labels.reshape(-1)
    shifted = flat - flat.max(axis=1, keepdims=True)   # no overflow in exp
    e = xp.exp(shifted)
    total = e.sum(axis=1, keepdims=True)
    loss = xp.log(total[:, 0]) - shifted[rows, picks]
    e /= total                                    # softmax(logits), in place
    e[rows, picks] -= 1                           # minus the one-hot labels
    return loss.reshape(labels.shape), e.reshape(logits.shape)

# The softmax cross-entropy of integer labels, fused into one op (TensorFlow's
# SparseSoftmaxCrossEntropyWithLogits):
#
#     loss_i = logsumexp(z_i) - z_i[label_i]        d loss_i / d z_i = softmax(z_i) - onehot_i
#
# The op has a second output, that derivative ("backprop"), computed in the same pass, so
# the VJP is one multiply. Its VJP treats `backprop` as what it is, softmax(z) minus a
# constant, so second derivatives flow through it as through softmax.
sparse_xent_p = primitive("sparse_softmax_cross_entropy", _sparse_xent_kernel,
                          multiple_results=True)
accepts(sparse_xent_p, missing=True)


def _sparse_xent_shapes(logits, labels):
    """In a graph: the loss has the labels' shape, backprop the logits' (a dimension
    unknown in one may be known in the other)."""
    batch = labels.shape
    if logits.shape is not None:
        known = logits.shape[:-1]
        batch = known if batch is None else tuple(
            a if a is not None else b for a, b in zip(batch, known))
    return [(batch, logits.dtype), (logits.shape, logits.dtype)]

defshape(sparse_xent_p, _sparse_xent_shapes)


def sparse_softmax_cross_entropy_with_logits(labels, logits):
    """The cross-entropy between ``softmax(logits)`` and integer class ``labels``, per
    example: ``logsumexp(logits, -1) - logits[..., label]``.

    Args:
      labels: integer tensor of shape ``logits.shape[:-1]``, each in ``[0, classes)``.
      logits: float tensor of shape ``(..., classes)`` (unnormalised log-probabilities).

    One fused op, forward and backward: the same value as
    ``-tg.log_softmax(logits)[rows, labels]`` with a fraction of the ops. Take
    ``tg.mean`` of it for the usual loss.
    """
    where = "tg.sparse_softmax_cross_entropy_with_logits"
    logits, labels = operand(logits, "logits", where), operand(labels, "labels", where)
    logits, labels = convert_to_tensor(logits), convert_to_tensor(labels)
    if logits.dtype.kind != "f":
        raise TypeError(f"sparse_softmax_cross_entropy_with_logits: logits must be floating "
                        f"point, got {logits.dtype}; cast them with tg.cast(logits, tg.float32).")
    if labels.dtype.kind not in "iu":
        raise TypeError(f"sparse_softmax_cross_entropy_with_logits: labels must be integer "
                        f"class indices, got {labels.dtype}. For one-hot or probability labels "
                        f"use -tg.sum(labels * tg.log_softmax(logits), axis=-1).")
    if logits.shape is not None and labels.shape is not None:
        batch = tuple(logits.shape[:-1])
        if len(logits.shape) == 0 or not compatible(tuple(labels.shape), batch):
            raise ValueError(f"sparse_softmax_cross_entropy_with_logits: labels must have the "
                             f"shape of logits without its last axis (the classes): logits "
                             f"{logits.shape}, so labels {batch}, got "
                             f"{labels.shape}.")
        classes = logits.shape[-1]
        if classes == 0:
            raise ValueError("sparse_softmax_cross_entropy_with_logits: logits have no classes "
                             "(their last axis has size 0).")
    return innermost.process(sparse_xent_p, logits, labels)[0]


def _sparse_xent_vjp(grads, outputs, logits, labels):
    g_loss, g_backprop = grads
    backprop = outputs[1]
    total = None
    if g_loss is not None:
        total = expand_dims(g_loss, -1) * backprop
    if g_backprop is not None:   # a second derivative: backprop is softmax(logits) - onehot
        s = softmax(logits)
        part = s * (g_backprop - sum(g_backprop * s, axis=-1, keepdims=True))
        total = part if total is None else total + part
    return [total, None]

defvjp_all(sparse_xent_p, _sparse_xent_vjp)
# Leading axes are examples already: shared logits or labels are repeated per example.
defbatch(sparse_xent_p, lambda values, batched: (
    innermost.process(sparse_xent_p, *repeat_unbatched(values, batched)), True))
