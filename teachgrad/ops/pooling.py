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
"""
from .. import backend
from .conv import check_fits, check_images, pair, padding_mode
from .core import bind, defbatch, defeffect, defjvp, defvjp, primitive
from .grad_util import as_tensor
from .nhwc_batching import merged_images_rule
from .windows import (add_at_maxima, add_windows, geometry_2d, max_of_windows, pad_2d,
                      require_fit, windows)
from .declare import defshape

_ONES = (1, 1)   # pooling windows are not dilated


def _geometry(shape, ksize, strides, padding):
    return geometry_2d(shape, ksize, strides, _ONES, padding)


def _pool_shape(x, ksize, strides, padding):
    xs = x.shape if x.shape is not None else (None,) * 4
    (_, _, oh), (_, _, ow) = _geometry(xs, ksize, strides, padding)
    return [((xs[0], oh, ow, xs[3]), x.dtype)]


def _like_x_shape(g, x, ksize, strides, padding):
    return [(x.shape, g.dtype)]


def _padded_windows(x, ksize, strides, padding, value):
    """(windows of x padded with ``value``, flattened to (n, oh, ow, c, taps); geometry)."""
    rows, cols = _geometry(x.shape, ksize, strides, padding)
    view = windows(pad_2d(x, rows[:2], cols[:2], value), ksize, strides, _ONES,
                   (rows[2], cols[2]))
    return view.reshape(view.shape[:4] + (ksize[0] * ksize[1],)), rows, cols


def _winners(x, ksize, strides, padding):
    """Which tap of each window holds its maximum (padding never wins)."""
    flat, _, _ = _padded_windows(x, ksize, strides, padding, -backend.xp.inf)
    if flat.size == 0:
        return backend.xp.zeros(flat.shape[:4], backend.xp.int64)
    return flat.argmax(axis=-1)


def _scatter_to_windows(per_tap, x, ksize, strides, padding):
    """Add window values ``per_tap`` (n, oh, ow, c, kh, kw) back at their places in
    x (padding dropped)."""
    rows, cols = _geometry(x.shape, ksize, strides, padding)
    n, height, width, c = x.shape
    shape = (n, height + rows[0] + rows[1], width + cols[0] + cols[1], c)
    total = add_windows(per_tap, shape, strides, (rows[2], cols[2]))
    return total[:, rows[0]:rows[0] + height, cols[0]:cols[0] + width, :]


# -- max pooling -----------------------------------------------------------------------
def _max_pool_kernel(x, ksize, strides, padding):
    require_fit(x.shape, ksize, _ONES, padding, "max_pool2d", "ksize")
    rows, cols = _geometry(x.shape, ksize, strides, padding)
    padded = pad_2d(x, rows[:2], cols[:2], -backend.xp.inf)
    return max_of_windows(padded, ksize, strides, _ONES, (rows[2], cols[2]))

max_pool2d_p = primitive("max_pool2d", _max_pool_kernel)
defeffect(max_pool2d_p, "fresh")
defbatch(max_pool2d_p, merged_images_rule(max_pool2d_p))
defshape(max_pool2d_p, _pool_shape)
defvjp(max_pool2d_p, lambda ct, ans, x, **p: max_pool2d_grad(ct, x, **p))
defjvp(max_pool2d_p, lambda x_dot, ans, x, **p: max_pool2d_pick(x_dot, x, **p))


def max_pool2d(input, ksize, strides, padding):
    r"""The largest entry of each ``ksize`` window of ``input`` (NHWC), as
    ``tf.nn.max_pool2d``: $y_{b,i,j,c} = \max_{p,q} x_{b, i s_h + p, j s_w + q, c}$.

    Args:
      input: float tensor of shape ``(batch, height, width, channels)``.
      ksize, strides: an int, or 1, 2 or 4 ints (4: ``[1, h, w, 1]``): the window's
        size and how far apart windows start.
      padding: ``"VALID"`` or ``"SAME"`` (padded entries never win a window).

    VJP: each cotangent goes to the entry that won its window (``max_pool2d_grad``).
    """
    where = "tg.nn.max_pool2d"
    x, params = _checked(input, ksize, strides, padding, where)
    return bind(max_pool2d_p, x, **params)


def _max_pool_grad_kernel(g, x, ksize, strides, padding):
    rows, cols = _geometry(x.shape, ksize, strides, padding)
    padded = pad_2d(x, rows[:2], cols[:2], -backend.xp.inf)
    total = add_at_maxima(g, padded, ksize, strides, _ONES, (rows[2], cols[2]))
    return total[:, rows[0]:rows[0] + x.shape[1], cols[0]:cols[0] + x.shape[2], :]

# max_pool2d_grad(g, x): g routed to the maximum of each window of x (TensorFlow's
# MaxPoolGrad). Linear in g; max_pool2d_pick is its transpose.
max_pool2d_grad_p = primitive("max_pool2d_grad", _max_pool_grad_kernel)
defeffect(max_pool2d_grad_p, "fresh")
defbatch(max_pool2d_grad_p, merged_images_rule(max_pool2d_grad_p))
defshape(max_pool2d_grad_p, _like_x_shape)


def max_pool2d_grad(g, x, ksize, strides, padding):
    """The VJP of ``max_pool2d(x)``: each entry of ``g`` added at its window's maximum."""
    return bind(max_pool2d_grad_p, g, x, ksize=ksize, strides=strides, padding=padding)


def _max_pool_pick_kernel(h, x, ksize, strides, padding):
    winners = _winners(x, ksize, strides, padding)
    flat, _, _ = _padded_windows(h, ksize, strides, padding, 0)
    if flat.size == 0:
        return backend.xp.zeros(winners.shape, h.dtype)
    return backend.xp.take_along_axis(flat, winners[..., None], axis=-1)[..., 0]

# max_pool2d_pick(h, x): the entry of h where each window of x has its maximum (the JVP
# of max_pool2d; TensorFlow's MaxPoolGradGrad). Linear in h; max_pool2d_grad transposes it.
max_pool2d_pick_p = primitive("max_pool2d_pick", _max_pool_pick_kernel)
defeffect(max_pool2d_pick_p, "fresh")
defbatch(max_pool2d_pick_p, merged_images_rule(max_pool2d_pick_p))
defshape(max_pool2d_pick_p, lambda h, x, **p: [(_pool_shape(x, **p)[0][0], h.dtype)])


def max_pool2d_pick(h, x, ksize, strides, padding):
    """``h`` read where ``max_pool2d(x)`` found each window's maximum."""
    return bind(max_pool2d_pick_p, h, x, ksize=ksize, strides=strides, padding=padding)

defvjp(max_pool2d_grad_p, lambda ct, ans, g, x, **p: max_pool2d_pick(ct, x, **p), None)
defjvp(max_pool2d_grad_p, lambda g_dot, ans, g, x, **p: max_pool2d_grad(g_dot, x, **p), None)
defvjp(max_pool2d_pick_p, lambda ct, ans, h, x, **p: max_pool2d_grad(ct, x, **p), None)
defjvp(max_pool2d_pick_p, lambda h_dot, ans, h, x, **p: max_pool2d_pick(h_dot, x, **p), None)


# -- average pooling -------------------------------------------------------------------
def _counts(x, ksize, strides, padding):
    """How many real (not padding) entries each window holds, shaped (1, oh, ow, 1)."""
    xp = backend.xp
    per_axis = []
    for (before, _, out), size, k, s in zip(_geometry(x.shape, ksize, strides, padding),
                                            x.shape[1:3], ksize, strides):
        start = xp.arange(out) * s - before         # window starts in x's coordinates
        per_axis.append(xp.minimum(start + k, size) - xp.maximum(start, 0))
    counts = per_axis[0][:, None] * per_axis[1][None, :]
    return counts[None, :, :, None].astype(x.dtype)


def _avg_pool_kernel(x, ksize, strides, padding):
    require_fit(x.shape, ksize, _ONES, padding, "avg_pool2d", "ksize")
    flat, _, _ = _padded_windows(x, ksize, strides, padding, 0)
    return flat.sum(axis=-1) / _counts(x, ksize, strides, padding)

avg_pool2d_p = primitive("avg_pool2d", _avg_pool_kernel)
defeffect(avg_pool2d_p, "fresh")
defbatch(avg_pool2d_p, merged_images_rule(avg_pool2d_p))
defshape(avg_pool2d_p, _pool_shape)
defvjp(avg_pool2d_p, lambda ct, ans, x, **p: avg_pool2d_grad(ct, x, **p))
defjvp(avg_pool2d_p, lambda x_dot, ans, x, **p: bind(avg_pool2d_p, x_dot, **p))


def avg_pool2d(input, ksize, strides, padding):
    r"""The mean of each ``ksize`` window of ``input`` (NHWC), as ``tf.nn.avg_pool2d``:
    with ``"SAME"`` padding a border window is divided by the number of real entries
    in it, not by its size.

    Args:
      input: float tensor of shape ``(batch, height, width, channels)``.
      ksize, strides: an int, or 1, 2 or 4 ints (4: ``[1, h, w, 1]``).
      padding: ``"VALID"`` or ``"SAME"``.

    VJP: each cotangent shared out evenly over its window (``avg_pool2d_grad``).
    """
    where = "tg.nn.avg_pool2d"
    x, params = _checked(input, ksize, strides, padding, where)
    return bind(avg_pool2d_p, x, **params)


def _avg_pool_grad_kernel(g, x, ksize, strides, padding):
    shared = g / _counts(x, ksize, strides, padding)
    per_tap = backend.xp.broadcast_to(shared[..., None, None], shared.shape + tuple(ksize))
    return _scatter_to_windows(per_tap, x, ksize, strides, padding)

# avg_pool2d_grad(g, x): each g over its window's count, added over the window (the VJP
# of avg_pool2d; only x's shape is read). Linear in g; its transpose is avg_pool2d.
avg_pool2d_grad_p = primitive("avg_pool2d_grad", _avg_pool_grad_kernel)
defeffect(avg_pool2d_grad_p, "fresh", shape_only_inputs=(1,))
defbatch(avg_pool2d_grad_p, merged_images_rule(avg_pool2d_grad_p))
defshape(avg_pool2d_grad_p, _like_x_shape)


def avg_pool2d_grad(g, x, ksize, strides, padding):
    """The VJP of ``avg_pool2d(x)``: ``g`` shared out over the windows."""
    return bind(avg_pool2d_grad_p, g, x, ksize=ksize, strides=strides, padding=padding)

defvjp(avg_pool2d_grad_p, lambda ct, ans, g, x, **p: bind(avg_pool2d_p, ct, **p), None)
defjvp(avg_pool2d_grad_p, lambda g_dot, ans, g, x, **p: avg_pool2d_grad(g_dot, x, **p), None)


def _checked(input, ksize, strides, padding, where):
    x = as_tensor(input, "input", where)
    params = {"ksize": pair(ksize, "ksize", where), "strides": pair(strides, "strides", where),
              "padding": padding_mode(padding, where)}
    check_images(x, "input", where)
    check_fits(x, params["ksize"], _ONES, params["padding"], where, window="ksize")
    return x, params
