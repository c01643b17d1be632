"""What ``conv2d``'s rules are made of: the output cotangent spread out for the transposed
convolution (``spread``), and the input framed as the windows see it (``window_pad``).

``spread`` and ``window_pad`` only move entries (and add zeros); each has its
transpose as an op (``unspread``, ``window_unpad``), their VJPs one another. All
four read only the shapes of ``x`` and ``w``, so the padding is worked out when the
graph runs and sizes unknown when it is built are fine (see ``conv.py``).
"""
from ... import backend
from ..core.apply import innermost
from ..core.declare import defbatch, defeffect, defjvp, defshape, defvjp, primitive
from .nhwc_batching import merged_images_rule
from .windows import geometry_2d, pad_2d


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
    return innermost.process(spread_p, g, x, w, strides=strides, padding=padding, dilations=dilations)


def unspread(h, x, w, strides, padding, dilations):
    """The transpose of ``spread``: the entries it put, read back."""
    return innermost.process(unspread_p, h, x, w, strides=strides, padding=padding, dilations=dilations)

defvjp(spread_p, lambda ct, ans, g, x, w, **p: unspread(ct, x, w, **p), None, None)
defjvp(spread_p, lambda g_dot, ans, g, x, w, **p: spread(g_dot, x, w, **p), None, None)
defvjp(unspread_p, lambda ct, ans, h, x, w, **p: spread(ct, x, w, **p), None, None)
defjvp(unspread_p, lambda h_dot, ans, h, x, w, **p: unspread(h_dot, x, w, **p), None, None)
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
    return innermost.process(window_pad_p, x, w, strides=strides, padding=padding, dilations=dilations)


def window_unpad(h, x, w, strides, padding, dilations):
    """The transpose of ``window_pad``: ``h`` cut back to ``x``'s height and width (the
    padding dropped, zeros where ``window_pad`` cut)."""
    return innermost.process(window_unpad_p, h, x, w, strides=strides, padding=padding,
                dilations=dilations)

defvjp(window_pad_p, lambda ct, ans, x, w, **p: window_unpad(ct, x, w, **p), None)
defjvp(window_pad_p, lambda x_dot, ans, x, w, **p: window_pad(x_dot, w, **p), None)
defvjp(window_unpad_p, lambda ct, ans, h, x, w, **p: window_pad(ct, w, **p), None, None)
defjvp(window_unpad_p, lambda h_dot, ans, h, x, w, **p: window_unpad(h_dot, x, w, **p),
       None, None)
defbatch(window_pad_p, merged_images_rule(window_pad_p, filters=(1,)))
defbatch(window_unpad_p, merged_images_rule(window_unpad_p, filters=(2,)))
