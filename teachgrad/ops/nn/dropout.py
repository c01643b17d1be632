"""Dropout's random mask, as an op of its own.

``dropout(x, rate)`` is ``x * mask``, where each entry of ``mask`` is ``1 / (1 - rate)``
with probability ``1 - rate`` and 0 otherwise: the kept entries are scaled up so that
the expected value of each entry stays ``x``'s. The mask is drawn by an op when it
*runs*, from a ``tg.random`` stream chosen by TensorFlow's global and op seeds
(``teachgrad/ops/random/seeds.py``), so a traced ``tg.function`` or a graph draws a
new one at each call, as an eager call does. ``stateless_dropout`` draws its mask with
``tg.random.stateless_uniform`` instead: the same seed, the same mask. Either way the
mask has no derivative (it is noise), and the product's VJP multiplies the cotangent
by the same mask: dropped entries get no gradient.
"""
from ... import backend, validate
from ..core.apply import innermost, leading_axes_rule
from ..core.declare import defbatch, defeffect, defshape, not_differentiable, primitive
from ..core.grad_util import as_tensor, broadcastable
from ..elementwise.arithmetic import greater_equal
from ..elementwise.casts import cast, zeros
from ..random.distributions import seed_tensor
from ..random.draws import STATELESS
from ..random.replay import draw
from ..random.seeds import stream_for


def _keep_mask_kernel(x, rate, stream):
    keep = stream.generator.random(x.shape) >= rate      # TensorFlow's rule: uniform >= rate
    return backend.xp.asarray(keep.astype(x.dtype) / x.dtype.type(1 - rate))

# keep_mask(x): 1/(1 - rate) where an entry is kept, 0 where it is dropped. A draw: no
# derivative, and never folded or merged by the graph optimiser (each run draws anew).
keep_mask_p = not_differentiable(primitive("keep_mask", _keep_mask_kernel))
defshape(keep_mask_p, lambda x, rate, stream: [(x.shape, x.dtype)])
defeffect(keep_mask_p, "stateful")
# Inside tg.vectorized_map each example draws its own mask: one mask of the batch's shape
# (as TensorFlow's vectorized random ops draw, seeded or not).
defbatch(keep_mask_p, leading_axes_rule(keep_mask_p))


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
      seed: the op seed (``tf.nn.dropout``'s): with ``tg.random.set_seed``, TensorFlow's
        rules for the two seeds make the masks the same in every run of the program,
        each call still drawing a new one. For the same mask at every call, use
        ``tg.nn.stateless_dropout``. None (the default): the global seed alone decides.

    VJP: the cotangent times the same mask.
    """
    where = "tg.nn.dropout"
    x, rate = _checked(x, rate, where)
    stream = stream_for("dropout", seed, where)
    # The mask is drawn for a stand-in of the noise's shape, then broadcast.
    noise = x if noise_shape is None else zeros(_noise_shape(noise_shape, x, where), x.dtype)
    return x * draw(keep_mask_p, noise, rate=rate, stream=stream)


def stateless_dropout(x, rate, seed, noise_shape=None):
    """``dropout`` whose mask depends only on ``seed`` (two integers, ``[1, 2]``), as
    ``tf.nn.experimental.stateless_dropout``: the same seed, the same mask, at every
    call, eagerly and in a graph. Its mask is ``tg.random.stateless_uniform >= rate``."""
    where = "tg.nn.stateless_dropout"
    x, rate = _checked(x, rate, where)
    seed = seed_tensor(seed, where)
    shape = tuple(x.shape) if noise_shape is None else _noise_shape(noise_shape, x, where)
    if None in shape:
        validate.fail(ValueError, where, "x", "a tensor of known shape (or give noise_shape)", x)
    u = innermost.process(STATELESS["uniform"], seed, shape=shape, dtype=x.dtype, low=None, high=None)
    return x * (cast(greater_equal(u, rate), x.dtype) / (1.0 - rate))


def _checked(x, rate, where):
    x = as_tensor(x, "x", where)
    if x.dtype.kind != "f":
        validate.fail(TypeError, where, "x", "floating point (cast it with tg.cast)", x)
    rate = validate.number(rate, "rate", where, minimum=0.0)
    if rate >= 1:
        validate.fail(ValueError, where, "rate", "a probability in [0, 1)", rate)
    return x, rate


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
