r"""Pooling over windows of NHWC tensors, TensorFlow's ``max_pool2d`` and ``avg_pool2d``,
each with its backward pass as an op of its own.

* ``max_pool2d`` picks the largest entry of each window. It is linear in a way: with
  the positions of the maxima fixed, it only *selects* entries. So its VJP routes
  each cotangent to the entry that won its window (``max_pool2d_grad``), its JVP
  picks the tangent there (``max_pool2d_pick``), and those two are each other's
  transposes. The maxima's positions are flat in ``x``: no gradient reaches ``x``
  through them. (Ties go to the first maximum in the window, row by row.)
* ``avg_pool2d`` is linear: the sum of each window over the number of *real* entries
  in it (with ``"SAME"`` padding a window at the border has fewer, as in
  TensorFlow). Its VJP, ``avg_pool2d_grad``, shares each cotangent out evenly over its
  window again; its transpose is ``avg_pool2d`` itself.

Windows may be dilated, as ``tf.nn.pool``'s: with ``dilations`` ``d`` a window's taps
are ``d`` entries apart, $y_{b,i,j,c} = \max_{p,q} x_{b,\, i s_h + p d_h,\, j s_w + q d_w,\, c}$
(``ops/nn/windows.py`` has the geometry). Pooling over the channel axis as well
(``ksize=[1, kh, kw, kc]``) is in ``ops/nn/channel_pooling.py``.
"""
from ... import backend
from ..core.apply import innermost
from ..core.declare import defbatch, defeffect, defjvp, defshape, defvjp, primitive
from .channel_pooling import checked_pool, pool_channels
from .nhwc_batching import merged_images_rule
from .windows import (
    add_at_maxima,
    add_windows,
    geometry_2d,
    max_of_windows,
    pad_2d,
    require_fit,
    require_images,
    windows,
)


def _pool_shape(x, ksize, strides, padding, dilations):
    xs = x.shape if x.shape is not None else (None,) * 4
    (_, _, oh), (_, _, ow) = geometry_2d(xs, ksize, strides, dilations, padding)
    return [((xs[0], oh, ow, xs[3]), x.dtype)]


def _like_x_shape(g, x, ksize, strides, padding, dilations):
    return [(x.shape, g.dtype)]


def _padded_windows(x, ksize, strides, padding, dilations, value):
    """Windows of x padded with ``value``, flattened to (n, oh, ow, c, taps)."""
    rows, cols = geometry_2d(x.shape, ksize, strides, dilations, padding)
    view = windows(pad_2d(x, rows[:2], cols[:2], value), ksize, strides, dilations,
                   (rows[2], cols[2]))
    return view.reshape(view.shape[:4] + (ksize[0] * ksize[1],))


def _winners(x, ksize, strides, padding, dilations):
    """Which tap of each window holds its maximum (padding never wins)."""
    flat = _padded_windows(x, ksize, strides, padding, dilations, -backend.xp.inf)
    if flat.size == 0:
        return backend.xp.zeros(flat.shape[:4], backend.xp.int64)
    return flat.argmax(axis=-1)


def _scatter_to_windows(per_tap, x, ksize, strides, padding, dilations):
    """Add window values ``per_tap`` (n, oh, ow, c, kh, kw) back at their places in
    x (padding dropped)."""
    rows, cols = geometry_2d(x.shape, ksize, strides, dilations, padding)
    n, height, width, c = x.shape
    shape = (n, height + rows[0] + rows[1], width + cols[0] + cols[1], c)
    total = add_windows(per_tap, shape, strides, (rows[2], cols[2]), dilations)
    return total[:, rows[0]:rows[0] + height, cols[0]:cols[0] + width, :]


def _require_real_taps(x, ksize, strides, padding, dilations, op):
    """Refuse a window that holds no entry of x, only padding (a dilated window with
    ``"SAME"`` padding can skip over a small input): it has no maximum and no mean."""
    if padding != "SAME" or dilations == (1, 1) or 0 in x.shape[1:3]:
        return
    if (_counts(x, ksize, strides, padding, dilations) == 0).any():
        raise ValueError(
            f"tg.nn.{op}: every window must hold at least one entry of `input`, but with "
            f"ksize={tuple(ksize)}, dilations={tuple(dilations)} and padding 'SAME' some "
            f"window of an input of shape {tuple(x.shape)} lies wholly in the padding. Use "
            f"smaller dilations, a larger input, or padding='VALID'.")


# -- max pooling -----------------------------------------------------------------------
def _max_pool_kernel(x, ksize, strides, padding, dilations):
    require_images(x, "max_pool2d")
    require_fit(x.shape, ksize, dilations, padding, "max_pool2d", "ksize")
    _require_real_taps(x, ksize, strides, padding, dilations, "max_pool2d")
    rows, cols = geometry_2d(x.shape, ksize, strides, dilations, padding)
    padded = pad_2d(x, rows[:2], cols[:2], -backend.xp.inf)
    return max_of_windows(padded, ksize, strides, dilations, (rows[2], cols[2]))

max_pool2d_p = primitive("max_pool2d", _max_pool_kernel)
defeffect(max_pool2d_p, "fresh")
defbatch(max_pool2d_p, merged_images_rule(max_pool2d_p))
defshape(max_pool2d_p, _pool_shape)
defvjp(max_pool2d_p, lambda ct, ans, x, **p: max_pool2d_grad(ct, x, **p))
defjvp(max_pool2d_p, lambda x_dot, ans, x, **p: max_pool2d_pick(x_dot, x, **p))


def max_pool2d(input, ksize, strides, padding, dilations=1):
    r"""The largest entry of each ``ksize`` window of ``input`` (NHWC), as
    ``tf.nn.max_pool2d`` (``dilations`` as ``tf.nn.pool``'s):
    $y_{b,i,j,c} = \max_{p,q} x_{b,\, i s_h + p d_h,\, j s_w + q d_w,\, c}$.

    Args:
      input: float tensor of shape ``(batch, height, width, channels)``.
      ksize, strides: an int, or 1, 2 or 4 ints (4: ``[1, h, w, c]``): the window's
        size and how far apart windows start. A channel entry ``c`` above 1 pools
        each ``c`` neighbouring channels too (TensorFlow's depthwise pooling: the
        same ``c`` in both, dividing the number of channels).
      padding: ``"VALID"`` or ``"SAME"`` (padded entries never win a window).
      dilations: an int, or 1, 2 or 4 ints (4: ``[1, h, w, 1]``): the spacing of a
        window's taps (1: adjacent).

    VJP: each cotangent goes to the entry that won its window (``max_pool2d_grad``).
    """
    return _pool(max_pool2d_p, "max", input, ksize, strides, padding, dilations)


def _max_pool_grad_kernel(g, x, ksize, strides, padding, dilations):
    rows, cols = geometry_2d(x.shape, ksize, strides, dilations, padding)
    padded = pad_2d(x, rows[:2], cols[:2], -backend.xp.inf)
    total = add_at_maxima(g, padded, ksize, strides, dilations, (rows[2], cols[2]))
    return total[:, rows[0]:rows[0] + x.shape[1], cols[0]:cols[0] + x.shape[2], :]

# max_pool2d_grad(g, x): g routed to the maximum of each window of x (TensorFlow's
# MaxPoolGrad). Linear in g; max_pool2d_pick is its transpose.
max_pool2d_grad_p = primitive("max_pool2d_grad", _max_pool_grad_kernel)
defeffect(max_pool2d_grad_p, "fresh")
defbatch(max_pool2d_grad_p, merged_images_rule(max_pool2d_grad_p))
defshape(max_pool2d_grad_p, _like_x_shape)


def max_pool2d_grad(g, x, ksize, strides, padding, dilations=(1, 1)):
    """The VJP of ``max_pool2d(x)``: each entry of ``g`` added at its window's maximum."""
    return innermost.process(max_pool2d_grad_p, g, x, ksize=ksize, strides=strides, padding=padding,
                dilations=dilations)


def _max_pool_pick_kernel(h, x, ksize, strides, padding, dilations):
    winners = _winners(x, ksize, strides, padding, dilations)
    flat = _padded_windows(h, ksize, strides, padding, dilations, 0)
    if flat.size == 0:
        return backend.xp.zeros(winners.shape, h.dtype)
    return backend.xp.take_along_axis(flat, winners[..., None], axis=-1)[..., 0]

# max_pool2d_pick(h, x): the entry of h where each window of x has its maximum (the JVP
# of max_pool2d; TensorFlow's MaxPoolGradGrad). Linear in h; max_pool2d_grad transposes it.
max_pool2d_pick_p = primitive("max_pool2d_pick", _max_pool_pick_kernel)
defeffect(max_pool2d_pick_p, "fresh")
defbatch(max_pool2d_pick_p, merged_images_rule(max_pool2d_pick_p))
defshape(max_pool2d_pick_p, lambda h, x, **p: [(_pool_shape(x, **p)[0][0], h.dtype)])


def max_pool2d_pick(h, x, ksize, strides, padding, dilations=(1, 1)):
    """``h`` read where ``max_pool2d(x)`` found each window's maximum."""
    return innermost.process(max_pool2d_pick_p, h, x, ksize=ksize, strides=strides, padding=padding,
                dilations=dilations)

defvjp(max_pool2d_grad_p, lambda ct, ans, g, x, **p: max_pool2d_pick(ct, x, **p), None)
defjvp(max_pool2d_grad_p, lambda g_dot, ans, g, x, **p: max_pool2d_grad(g_dot, x, **p), None)
defvjp(max_pool2d_pick_p, lambda ct, ans, h, x, **p: max_pool2d_grad(ct, x, **p), None)
defjvp(max_pool2d_pick_p, lambda h_dot, ans, h, x, **p: max_pool2d_pick(h_dot, x, **p), None)


# -- average pooling -------------------------------------------------------------------
def _counts(x, ksize, strides, padding, dilations):
    """How many real (not padding) entries each window holds, shaped (1, oh, ow, 1)."""
    xp = backend.xp
    per_axis = []
    for (before, _, out), size, k, s, d in zip(
            geometry_2d(x.shape, ksize, strides, dilations, padding), x.shape[1:3], ksize,
            strides, dilations):
        taps = (xp.arange(out) * s - before)[:, None] + xp.arange(k)[None, :] * d
        per_axis.append(((taps >= 0) & (taps < size)).sum(axis=1))   # taps inside x
    counts = per_axis[0][:, None] * per_axis[1][None, :]
    return counts[None, :, :, None].astype(x.dtype)


def _avg_pool_kernel(x, ksize, strides, padding, dilations):
    require_images(x, "avg_pool2d")
    require_fit(x.shape, ksize, dilations, padding, "avg_pool2d", "ksize")
    _require_real_taps(x, ksize, strides, padding, dilations, "avg_pool2d")
    flat = _padded_windows(x, ksize, strides, padding, dilations, 0)
    return flat.sum(axis=-1) / _counts(x, ksize, strides, padding, dilations)

avg_pool2d_p = primitive("avg_pool2d", _avg_pool_kernel)
defeffect(avg_pool2d_p, "fresh")
defbatch(avg_pool2d_p, merged_images_rule(avg_pool2d_p))
defshape(avg_pool2d_p, _pool_shape)
defvjp(avg_pool2d_p, lambda ct, ans, x, **p: avg_pool2d_grad(ct, x, **p))
defjvp(avg_pool2d_p, lambda x_dot, ans, x, **p: innermost.process(avg_pool2d_p, x_dot, **p))


def avg_pool2d(input, ksize, strides, padding, dilations=1):
    r"""The mean of each ``ksize`` window of ``input`` (NHWC), as ``tf.nn.avg_pool2d``
    (``dilations`` as ``tf.nn.pool``'s): with ``"SAME"`` padding a border window is
    divided by the number of real entries in it, not by its size.

    Args:
      input: float tensor of shape ``(batch, height, width, channels)``.
      ksize, strides: an int, or 1, 2 or 4 ints (4: ``[1, h, w, c]``; a channel
        entry ``c`` above 1 averages each ``c`` neighbouring channels too, the same
        ``c`` in both, dividing the number of channels).
      padding: ``"VALID"`` or ``"SAME"``.
      dilations: an int, or 1, 2 or 4 ints (4: ``[1, h, w, 1]``): the spacing of a
        window's taps.

    VJP: each cotangent shared out evenly over its window (``avg_pool2d_grad``).
    """
    return _pool(avg_pool2d_p, "mean", input, ksize, strides, padding, dilations)


def _avg_pool_grad_kernel(g, x, ksize, strides, padding, dilations):
    shared = g / _counts(x, ksize, strides, padding, dilations)
    per_tap = backend.xp.broadcast_to(shared[..., None, None], shared.shape + tuple(ksize))
    return _scatter_to_windows(per_tap, x, ksize, strides, padding, dilations)

# avg_pool2d_grad(g, x): each g over its window's count, added over the window (the VJP
# of avg_pool2d; only x's shape is read). Linear in g; its transpose is avg_pool2d.
avg_pool2d_grad_p = primitive("avg_pool2d_grad", _avg_pool_grad_kernel)
defeffect(avg_pool2d_grad_p, "fresh", shape_only_inputs=(1,))
defbatch(avg_pool2d_grad_p, merged_images_rule(avg_pool2d_grad_p))
defshape(avg_pool2d_grad_p, _like_x_shape)


def avg_pool2d_grad(g, x, ksize, strides, padding, dilations=(1, 1)):
    """The VJP of ``avg_pool2d(x)``: ``g`` shared out over the windows."""
    return innermost.process(avg_pool2d_grad_p, g, x, ksize=ksize, strides=strides, padding=padding,
                dilations=dilations)

defvjp(avg_pool2d_grad_p, lambda ct, ans, g, x, **p: innermost.process(avg_pool2d_p, ct, **p), None)
defjvp(avg_pool2d_grad_p, lambda g_dot, ans, g, x, **p: avg_pool2d_grad(g_dot, x, **p), None)



def _pool(pool_p, how, input, ksize, strides, padding, dilations):
    """``tg.nn.max_pool2d`` or ``avg_pool2d``: the spatial pool ``pool_p`` (skipped for
    windows of one pixel one pixel apart), then the channel one, reducing by ``how``."""
    x, params, depth = checked_pool(input, ksize, strides, padding, dilations,
                                    f"tg.nn.{pool_p.name}")
    if params["ksize"] != (1, 1) or params["strides"] != (1, 1):
        x = innermost.process(pool_p, x, **params)
    return pool_channels(x, depth, how)
