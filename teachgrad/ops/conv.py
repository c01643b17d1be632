r"""2-D convolution (TensorFlow's ``conv2d``: NHWC input, HWIO filters), and why its
backward pass is two more convolutions.

Forward, each output pixel is a dot product of one window of the input with the
filters: with ``s`` the strides, ``d`` the dilations and ``x`` padded as the
padding mode says (see ``windows.py``),

$$y_{b,i,j,o} = \sum_{p,q,c} x_{b,\, i s_h + p d_h,\, j s_w + q d_w,\, c}\; w_{p,q,c,o}.$$

The kernel reads all windows as one strided view and multiplies them by the
filters in **one matmul** (``im2col``: windows as rows, filters as a matrix), or, where
the shapes make BLAS faster that way, in one matmul per tap or per output pixel
(``conv_kernels.py``: the same sum, chosen below the op).

Backward, both cotangents are convolutions again, written below with teachgrad
ops, so they can be differentiated and transposed like any other code:

* the **input's** cotangent is the *transposed convolution*: spread the output
  cotangent out ``s`` apart (zeros between), pad it by the window's span, and
  convolve it with the filters rotated by 180 degrees, their in and out channels
  swapped (``spread``, ``flip``, ``transpose``, ``conv2d``);
* the **filters'** cotangent convolves the (padded) input with the output
  cotangent as the filter: batch and channels trade places, and the strides and
  dilations trade places too (``window_pad``, ``transpose``, ``conv2d``).

``spread`` and ``window_pad`` only move entries (and add zeros); each has its
transpose as an op (``unspread``, ``window_unpad``), their VJPs one another. All
four read only the shapes of ``x`` and ``w``, so the padding is worked out when the
graph runs and sizes unknown when it is built are fine.
"""
from .. import backend, validate
from .core import bind, defbatch, defeffect, defjvp, defvjp, primitive
from .grad_util import as_tensor, known
from .conv_kernels import convolve
from .nhwc_batching import conv_rule, merged_images_rule
from .rearrange import flip
from .shape import transpose
from .windows import PADDINGS, geometry_2d, pad_2d, require_fit
from .declare import defshape


def _conv2d_kernel(x, w, strides, padding, dilations):
    kh, kw = w.shape[:2]
    require_fit(x.shape, (kh, kw), dilations, padding, "conv2d", "filters")
    (top, bottom, oh), (left, right, ow) = geometry_2d(x.shape, (kh, kw), strides, dilations,
                                                       padding)
    # the matmuls (one over all windows, or one per tap, or per output pixel): conv_kernels
    return convolve(pad_2d(x, (top, bottom), (left, right)), w, strides, dilations, (oh, ow))


def _conv2d_shape(x, w, strides, padding, dilations):
    xs = x.shape if x.shape is not None else (None,) * 4
    ws = w.shape if w.shape is not None else (None,) * 4
    (_, _, oh), (_, _, ow) = geometry_2d(xs, ws[:2], strides, dilations, padding)
    return [((xs[0], oh, ow, ws[3]), x.dtype)]

conv2d_p = primitive("conv2d", _conv2d_kernel)
defeffect(conv2d_p, "fresh")
defshape(conv2d_p, _conv2d_shape)


def _conv(x, w, strides, padding, dilations):
    """conv2d on checked arguments (what the rules call)."""
    return bind(conv2d_p, x, w, strides=strides, padding=padding, dilations=dilations)


def _conv2d_vjp_input(ct, ans, x, w, strides, padding, dilations):
    # the transposed convolution: ct spread out and padded, times the rotated filters
    rotated = transpose(flip(w, (0, 1)), (0, 1, 3, 2))
    return _conv(spread(ct, x, w, strides, padding, dilations), rotated, (1, 1), "VALID",
                 dilations)


def _conv2d_vjp_filters(ct, ans, x, w, strides, padding, dilations):
    # the input (as the windows saw it) convolved with ct: batch <-> channels,
    # strides <-> dilations
    framed = transpose(window_pad(x, w, strides, padding, dilations), (3, 1, 2, 0))
    grad = _conv(framed, transpose(ct, (1, 2, 0, 3)), dilations, "VALID", strides)
    return transpose(grad, (1, 2, 0, 3))

defvjp(conv2d_p, _conv2d_vjp_input, _conv2d_vjp_filters, arrays=True)
# Bilinear: d(x * w) = dx * w + x * dw.
defjvp(conv2d_p,
       lambda x_dot, ans, x, w, strides, padding, dilations:
       _conv(x_dot, w, strides, padding, dilations),
       lambda w_dot, ans, x, w, strides, padding, dilations:
       _conv(x, w_dot, strides, padding, dilations), arrays=True)
defbatch(conv2d_p, conv_rule(conv2d_p))


def conv2d(input, filters, strides, padding, dilations=1):
    r"""The 2-D convolution of ``input`` (NHWC: batch, height, width, channels) with
    ``filters`` (HWIO: height, width, in channels, out channels), as TensorFlow's
    ``tf.nn.conv2d`` computes it (a cross-correlation: the filters are not flipped).

    $y_{b,i,j,o} = \sum_{p,q,c} x_{b, i s_h + p d_h, j s_w + q d_w, c}\, w_{p,q,c,o}$

    Args:
      input: float tensor of shape ``(batch, height, width, in_channels)``.
      filters: tensor of ``input``'s dtype, shape ``(height, width, in_channels,
        out_channels)``.
      strides: an int, or 1, 2 or 4 ints (4: ``[1, s_h, s_w, 1]``): how far apart the
        windows start.
      padding: ``"VALID"`` (no padding: only whole windows) or ``"SAME"`` (zeros around
        the input so that there are ``ceil(size / stride)`` windows; an odd one out goes
        at the bottom and right).
      dilations: as ``strides``: the spacing of a filter's taps (1: adjacent).

    VJP: the input's cotangent is a convolution of the spread-out cotangent with the
    rotated filters; the filters' cotangent a convolution of the input with the
    cotangent (see ``teachgrad.ops.conv``).
    """
    where = "tg.nn.conv2d"
    x, w, strides, padding, dilations = checked_conv(input, filters, strides, padding,
                                                     dilations, 4, where)
    if w.shape is not None:
        check_fits(x, w.shape[:2], dilations, padding, where)
    return _conv(x, w, strides, padding, dilations)


# -- what the rules are made of: the cotangent spread out, the input framed ----------
def _spread_geometry(x_shape, w_shape, strides, padding, dilations):
    """Per spatial axis: (offset of the first entry, number of entries, span)."""
    rows, cols = geometry_2d(x_shape, w_shape[:2], strides, dilations, padding)
    spans = [(k - 1) * d + 1 for k, d in zip(w_shape[:2], dilations)]
    return [(span - 1 - before, out, span) for (before, _, out), span in zip((rows, cols), spans)]


def _spread_kernel(g, x, w, strides, padding, dilations):
    (top, oh, span_h), (left, ow, span_w) = _spread_geometry(x.shape, w.shape, strides,
                                                             padding, dilations)
    out = backend.xp.zeros((g.shape[0], x.shape[1] + span_h - 1, x.shape[2] + span_w - 1,
                            g.shape[3]), g.dtype)
    out[:, top:top + (oh - 1) * strides[0] + 1:strides[0],
        left:left + (ow - 1) * strides[1] + 1:strides[1], :] = g
    return out


def _unspread_kernel(h, x, w, strides, padding, dilations):
    (top, oh, _), (left, ow, _) = _spread_geometry(x.shape, w.shape, strides, padding,
                                                   dilations)
    return h[:, top:top + (oh - 1) * strides[0] + 1:strides[0],
             left:left + (ow - 1) * strides[1] + 1:strides[1], :]


def _spread_shape(g, x, w, strides, padding, dilations):
    gs, xs, ws = (t.shape if t.shape is not None else (None,) * 4 for t in (g, x, w))
    side = [None if n is None or k is None else n + (k - 1) * d
            for n, k, d in zip(xs[1:3], ws[:2], dilations)]
    return [((gs[0], side[0], side[1], gs[3]), g.dtype)]


def _unspread_shape(h, x, w, strides, padding, dilations):
    hs, xs, ws = (t.shape if t.shape is not None else (None,) * 4 for t in (h, x, w))
    (_, _, oh), (_, _, ow) = geometry_2d(xs, ws[:2], strides, dilations, padding)
    return [((hs[0], oh, ow, hs[3]), h.dtype)]

# spread(g): g's entries `strides` apart, zeros between, padded by the window's span
# less the forward padding: what the transposed convolution convolves. Linear in g;
# its transpose, unspread, reads those entries back out.
spread_p = primitive("spread", _spread_kernel)
defeffect(spread_p, "fresh", shape_only_inputs=(1, 2))
defshape(spread_p, _spread_shape)
unspread_p = primitive("unspread", _unspread_kernel)
defeffect(unspread_p, "view", shape_only_inputs=(1, 2))
defshape(unspread_p, _unspread_shape)


def spread(g, x, w, strides, padding, dilations):
    """The output cotangent ``g`` of ``conv2d(x, w)`` spread out for the transposed
    convolution: entries ``strides`` apart, padded by the span of a window."""
    return bind(spread_p, g, x, w, strides=strides, padding=padding, dilations=dilations)


def unspread(h, x, w, strides, padding, dilations):
    """The transpose of ``spread``: the entries it put, read back."""
    return bind(unspread_p, h, x, w, strides=strides, padding=padding, dilations=dilations)

defvjp(spread_p, lambda ct, ans, g, x, w, **p: unspread(ct, x, w, **p), None, None, arrays=True)
defjvp(spread_p, lambda g_dot, ans, g, x, w, **p: spread(g_dot, x, w, **p), None, None,
       arrays=True)
defvjp(unspread_p, lambda ct, ans, h, x, w, **p: spread(ct, x, w, **p), None, None, arrays=True)
defjvp(unspread_p, lambda h_dot, ans, h, x, w, **p: unspread(h_dot, x, w, **p), None, None,
       arrays=True)
defbatch(spread_p, merged_images_rule(spread_p, filters=(2,)))
defbatch(unspread_p, merged_images_rule(unspread_p, filters=(2,)))


def _frame(x_shape, w_shape, strides, padding, dilations):
    """Per spatial axis: (padding before, length the windows reach from there)."""
    rows, cols = geometry_2d(x_shape, w_shape[:2], strides, dilations, padding)
    return [(before, (out - 1) * s + (k - 1) * d + 1) for (before, _, out), s, k, d
            in zip((rows, cols), strides, w_shape[:2], dilations)]


def _window_pad_kernel(x, w, strides, padding, dilations):
    (top, rows), (left, cols) = _frame(x.shape, w.shape, strides, padding, dilations)
    bottom, right = max(rows - top - x.shape[1], 0), max(cols - left - x.shape[2], 0)
    return pad_2d(x, (top, bottom), (left, right))[:, :rows, :cols, :]


def _window_unpad_kernel(h, x, w, strides, padding, dilations):
    (top, rows), (left, cols) = _frame(x.shape, w.shape, strides, padding, dilations)
    out = backend.xp.zeros(x.shape[:3] + h.shape[3:], h.dtype)
    kept_h, kept_w = min(x.shape[1], rows - top), min(x.shape[2], cols - left)
    out[:, :kept_h, :kept_w, :] = h[:, top:top + kept_h, left:left + kept_w, :]
    return out


def _window_pad_shape(x, w, strides, padding, dilations):
    xs, ws = (t.shape if t.shape is not None else (None,) * 4 for t in (x, w))
    rows, cols = geometry_2d(xs, ws[:2], strides, dilations, padding)
    side = [None if out is None else (out - 1) * s + (k - 1) * d + 1
            for (_, _, out), s, k, d in zip((rows, cols), strides, ws[:2], dilations)]
    return [((xs[0], side[0], side[1], xs[3]), x.dtype)]


def _window_unpad_shape(h, x, w, strides, padding, dilations):
    hs, xs = (t.shape if t.shape is not None else (None,) * 4 for t in (h, x))
    return [((hs[0], xs[1], xs[2], hs[3]), h.dtype)]

# window_pad(x): x padded as conv2d pads it, cut to the rows and columns its windows
# reach: what the filters' cotangent convolves. window_unpad is its transpose.
window_pad_p = primitive("window_pad", _window_pad_kernel)
defeffect(window_pad_p, "view", shape_only_inputs=(1,))
defshape(window_pad_p, _window_pad_shape)
window_unpad_p = primitive("window_unpad", _window_unpad_kernel)
defeffect(window_unpad_p, "fresh", shape_only_inputs=(1, 2))
defshape(window_unpad_p, _window_unpad_shape)


def window_pad(x, w, strides, padding, dilations):
    """``x`` as ``conv2d(x, w)``'s windows see it: padded, and cut where they end."""
    return bind(window_pad_p, x, w, strides=strides, padding=padding, dilations=dilations)


def window_unpad(h, x, w, strides, padding, dilations):
    """The transpose of ``window_pad``: ``h`` cut back to ``x``'s height and width (the
    padding dropped, zeros where ``window_pad`` cut)."""
    return bind(window_unpad_p, h, x, w, strides=strides, padding=padding,
                dilations=dilations)

defvjp(window_pad_p, lambda ct, ans, x, w, **p: window_unpad(ct, x, w, **p), None, arrays=True)
defjvp(window_pad_p, lambda x_dot, ans, x, w, **p: window_pad(x_dot, w, **p), None, arrays=True)
defvjp(window_unpad_p, lambda ct, ans, h, x, w, **p: window_pad(ct, w, **p), None, None,
       arrays=True)
defjvp(window_unpad_p, lambda h_dot, ans, h, x, w, **p: window_unpad(h_dot, x, w, **p),
       None, None, arrays=True)
defbatch(window_pad_p, merged_images_rule(window_pad_p, filters=(1,)))
defbatch(window_unpad_p, merged_images_rule(window_unpad_p, filters=(2,)))


# -- checks shared with conv1d and pooling ---------------------------------------------
_LAYOUTS = {4: ("batch, height, width, channels", "height, width, in_channels, out_channels"),
            3: ("batch, width, channels", "width, in_channels, out_channels")}


def checked_conv(input, filters, strides, padding, dilations, rank, where):
    """conv2d's (``rank`` 4) or conv1d's (``rank`` 3) arguments checked, as
    ``(x, w, strides, padding, dilations)``; the strides and dilations as pairs (for
    conv1d, ``tg.nn.conv1d`` makes them pairs first)."""
    x, w = as_tensor(input, "input", where), as_tensor(filters, "filters", where)
    strides, dilations = pair(strides, "strides", where), pair(dilations, "dilations", where)
    padding = padding_mode(padding, where)
    images, kernels = _LAYOUTS[rank]
    if x.shape is not None and x.ndim != rank:
        validate.fail(ValueError, where, "input", f"a tensor of rank {rank} ({images})", x)
    if x.dtype.kind != "f":
        validate.fail(TypeError, where, "input", "floating point (cast it with tg.cast)", x)
    if w.shape is not None and w.ndim != rank:
        validate.fail(ValueError, where, "filters", f"a tensor of rank {rank} ({kernels})", w)
    if w.dtype != x.dtype:
        validate.fail(TypeError, where, "filters", f"a tensor of input's dtype {x.dtype}", w)
    if x.shape is not None and w.shape is not None and known((x.shape[-1], w.shape[-2])) \
            and x.shape[-1] != w.shape[-2]:
        validate.fail(ValueError, where, "filters", f"{x.shape[-1]} in_channels (their "
                      f"axis {rank - 2}), as many as input has channels (its last axis)", w)
    return x, w, strides, padding, dilations


def pair(value, name, where):
    """A stride, dilation or window size as TensorFlow takes it (an int, or 1, 2 or 4
    ints, 4 meaning ``[1, h, w, 1]``) as ``(h, w)``, each a positive int."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    accepted = "a positive int, or 1, 2 or 4 of them (4: [1, height, width, 1])"
    if len(items) not in (1, 2, 4):
        validate.fail(ValueError, where, name, accepted, value)
    items = [validate.integer(v, name, where) for v in items]
    if len(items) == 4:
        if items[0] != 1 or items[3] != 1:
            validate.fail(ValueError, where, name, accepted + " (batch and channel entries "
                          "of 1)", value)
        items = items[1:3]
    if min(items) < 1 or max(items) > 2 ** 31:
        validate.fail(ValueError, where, name, accepted, value)
    return (items[0], items[-1])


def padding_mode(value, where):
    """``"VALID"`` or ``"SAME"`` (any case)."""
    if not isinstance(value, str):
        validate.fail(TypeError, where, "padding", "'VALID' or 'SAME'", value)
    return validate.one_of(value.upper(), "padding", where, PADDINGS)


def check_images(x, name, where):
    """A float tensor of rank 4 (NHWC)."""
    if x.shape is not None and x.ndim != 4:
        validate.fail(ValueError, where, name, "a tensor of rank 4 (batch, height, width, "
                      "channels)", x)
    if x.dtype.kind != "f":
        validate.fail(TypeError, where, name, "floating point (cast it with tg.cast)", x)


def check_fits(x, kernel, dilations, padding, where, window="filters"):
    """Refuse an input with no height or width, or (``"VALID"``) smaller than a window.
    ``kernel`` and ``dilations`` give one entry per spatial axis of ``x`` (NHWC or NWC)."""
    if x.shape is None:
        return
    for axis, k, d in zip(range(1, len(x.shape) - 1), kernel, dilations):
        size = x.shape[axis]
        if size == 0:
            validate.fail(ValueError, where, "input", f"at least 1 entry along axis {axis} "
                          "(nothing to convolve or pool)", x)
        if known((size, k)) and padding == "VALID" and size < (k - 1) * d + 1:
            validate.fail(ValueError, where, "input", f"at least {(k - 1) * d + 1} entries "
                          f"along axis {axis}, the span of a window of the `{window}` with padding "
                          f"'VALID'", x, "Use padding='SAME', or a smaller window.")
