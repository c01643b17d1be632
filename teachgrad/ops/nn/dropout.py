"""Dropout's random mask, as an op of its own.

``dropout(x, rate)`` is ``x * mask``, where each entry of ``mask`` is ``1 / (1 - rate)``
with probability ``1 - rate`` and 0 otherwise: the kept entries are scaled up so that
the expected value of each entry stays ``x``'s. The mask is drawn by an op when it
*runs*, so a traced ``tg.function`` or a graph draws a new one at each call, as an
eager call does. Its derivative is nothing (it is noise), and the product's VJP
multiplies the cotangent by the same mask: dropped entries get no gradient.
"""
import numpy as np

from ... import backend, validate
from ..core.apply import bind, leading_axes_rule
from ..core.declare import defbatch, defshape, not_differentiable, primitive
from ..core.grad_util import as_tensor, broadcastable
from ..elementwise.casts import zeros

#: Where masks without a seed come from (fresh entropy, once per process).
_unseeded = np.random.default_rng()


def _keep_mask_kernel(x, rate, seed):
    rng = _unseeded if seed is None else np.random.default_rng(seed)
    keep = rng.random(x.shape) >= rate            # TensorFlow's rule: uniform >= rate
    return backend.xp.asarray(keep.astype(x.dtype) / x.dtype.type(1 - rate))

# keep_mask(x): 1/(1 - rate) where an entry is kept, 0 where it is dropped. Random
# noise: no derivative, and never folded or shared by the graph optimiser.
keep_mask_p = not_differentiable(primitive("keep_mask", _keep_mask_kernel))
defshape(keep_mask_p, lambda x, rate, seed: [(x.shape, x.dtype)])


def _keep_mask_batch(values, batched, rate, seed):
    """Without a seed, each example draws its own mask: one mask of the batch's shape.
    With one, every example draws the same mask (the same seed): one example's mask,
    shared by all."""
    if seed is None:
        return leading_axes_rule(keep_mask_p)(values, batched, rate=rate, seed=seed)
    return bind(keep_mask_p, values[0][0], rate=rate, seed=seed), False
defbatch(keep_mask_p, _keep_mask_batch)


def dropout(x, rate, noise_shape=None, seed=None):
    r"""Each entry of ``x`` set to 0 with probability ``rate``, the others scaled by
    $1 / (1 - \mathrm{rate})$ (``tf.nn.dropout``): the expected value stays ``x``.

    Args:
      x: a float tensor.
      rate: the probability of dropping an entry, in ``[0, 1)``.
      noise_shape: the shape of the mask (TensorFlow's): one keep-or-drop draw per entry
        of a tensor of this shape, broadcast against ``x`` (``[batch, 1, 1, channels]``
        drops whole channels of NHWC images); None entries take ``x``'s size there.
        None (the default): ``x``'s shape, one draw per entry.
      seed: an int makes the mask reproducible: the same seed, the same mask, at every
        call (as TensorFlow's stateless random ops). None (the default) draws a new mask
        each time the op runs, eagerly or in a graph: what training wants.

    VJP: the cotangent times the same mask.
    """
    where = "tg.nn.dropout"
    x = as_tensor(x, "x", where)
    if x.dtype.kind != "f":
        validate.fail(TypeError, where, "x", "floating point (cast it with tg.cast)", x)
    rate = validate.number(rate, "rate", where, minimum=0.0)
    if rate >= 1:
        validate.fail(ValueError, where, "rate", "a probability in [0, 1)", rate)
    if seed is not None:
        seed = validate.integer(seed, "seed", where, minimum=0)
    # The mask is drawn for a stand-in of the noise's shape, then broadcast.
    noise = x if noise_shape is None else zeros(_noise_shape(noise_shape, x, where), x.dtype)
    return x * bind(keep_mask_p, noise, rate=rate, seed=seed)


def _noise_shape(noise_shape, x, where):
    """``noise_shape`` with its None entries filled from ``x``'s shape; it must
    broadcast to ``x``'s shape (TensorFlow's rule)."""
    if not isinstance(noise_shape, (list, tuple)) or len(noise_shape) != x.ndim:
        validate.fail(ValueError, where, "noise_shape", f"a list of {x.ndim} sizes (one per "
                      f"axis of `x`)", noise_shape)
    shape = []
    for n, size in zip(noise_shape, x.shape):
        if n is None:
            if size is None:
                validate.fail(ValueError, where, "noise_shape", "sizes where `x`'s are "
                              "unknown", noise_shape)
            n = size
        shape.append(validate.integer(n, "noise_shape", where, minimum=0))
    if not broadcastable(tuple(shape), tuple(x.shape)) or any(
            a != b and a != 1 for a, b in zip(shape, x.shape) if b is not None):
        validate.fail(ValueError, where, "noise_shape", f"a shape that broadcasts to `x`'s "
                      f"shape {tuple(x.shape)} (each size 1 or x's)", noise_shape)
    return tuple(shape)
