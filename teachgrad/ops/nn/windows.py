"""Sliding windows over the height and width of NHWC tensors: the geometry that
convolution and pooling share, TensorFlow's conventions, with no op in it.

Along one axis of ``size`` entries, a window of ``k`` taps ``dilation`` apart spans
``span = (k - 1) * dilation + 1`` entries, and windows start ``stride`` apart:

* ``"VALID"``: no padding; ``out = (size - span) // stride + 1`` windows.
* ``"SAME"``: ``out = ceil(size / stride)`` windows, and just enough padding,
  ``total = max((out - 1) * stride + span - size, 0)``, split with the odd entry at
  the end: ``before = total // 2``, ``after = total - before`` (TensorFlow's rule).

The kernels read windows as strided *views* (``sliding_window_view``, no copy), so
an op over all windows is one array expression, never a Python loop over pixels. Or
tap by tap: tap ``(p, q)`` of every window is one strided slice (``tap``), so a max over
windows is ``k_h k_w - 1`` elementwise maxima of slices, where reducing the copied
windows along a short last axis took ten times as long (max pooling, 2x2 windows).
"""
from ... import backend

PADDINGS = ("VALID", "SAME")


def geometry(size, k, stride, dilation, padding):
    """``(before, after, out)`` along one axis: the padding and the number of windows.
    ``size`` or ``k`` None (unknown in a graph) gives ``(None, None, None)``."""
    if size is None or k is None:
        return None, None, None
    span = (k - 1) * dilation + 1
    if padding == "VALID":
        return 0, 0, max((size - span) // stride + 1, 0)
    out = -(-size // stride)
    total = max((out - 1) * stride + span - size, 0)
    return total // 2, total - total // 2, out


def require_images(x, op, w=None):
    """Refuse, when a graph runs, what the public function could not check when it was
    called (a placeholder of unknown rank or channel count): an ``x`` that is not NHWC
    images (rank 4), and filters ``w`` whose in_channels are not ``x``'s channels. A
    kernel handed them would fail deep inside with "cannot reshape array of size 72"."""
    if x.ndim != 4:
        raise ValueError(
            f"tg.nn.{op}: `input` must be a tensor of rank 4 (batch, height, width, "
            f"channels), but got one of rank {x.ndim} (shape {tuple(x.shape)}) when the graph "
            f"ran. Feed images with a batch axis (x[None] for one image).")
    if w is not None and w.shape[2] != x.shape[3]:
        raise ValueError(
            f"tg.nn.{op}: the `filters` have {w.shape[2]} in_channels (their axis 2), but "
            f"the `input` fed when the graph ran has {x.shape[3]} channels (its last axis, "
            f"shape {tuple(x.shape)}): they must be the same. Feed images with "
            f"{w.shape[2]} channels, or filters of shape (h, w, {x.shape[3]}, out).")


def require_fit(shape, kernel, dilations, padding, op, window):
    """Refuse an NHWC ``shape`` smaller than a window with ``"VALID"`` padding (no window
    fits: the result would be empty). The public functions check this when the sizes are
    known as they are called; the kernels of ``op`` check it again when a graph runs and
    sizes unknown till then (a placeholder's None) are known."""
    if padding != "VALID":
        return
    for axis, k, d in zip((1, 2), kernel, dilations):
        span = (k - 1) * d + 1
        if shape[axis] < span:
            raise ValueError(
                f"tg.nn.{op}: `input` must have at least {span} entries along axis {axis}, "
                f"the span of a window of the `{window}` with padding 'VALID', but got an "
                f"input of shape {tuple(shape)} when the graph ran. Feed a larger input, or "
                f"use padding='SAME' or a smaller window.")


def geometry_2d(shape, kernel, strides, dilations, padding):
    """``geometry`` along the height and width of an NHWC ``shape``:
    ``((top, bottom, out_height), (left, right, out_width))``."""
    return (geometry(shape[1], kernel[0], strides[0], dilations[0], padding),
            geometry(shape[2], kernel[1], strides[1], dilations[1], padding))


def pad_2d(x, rows, cols, value=0):
    """``x`` padded by ``rows = (top, bottom)`` and ``cols = (left, right)`` entries of
    ``value`` along height and width (no copy when there is nothing to pad). Written as
    a filled array and one slice assignment: ``numpy.pad`` does the same in Python
    steps that cost four times as long on a lesson's small images."""
    if not any(rows) and not any(cols):
        return x
    n, height, width, c = x.shape
    out = backend.xp.full((n, height + rows[0] + rows[1], width + cols[0] + cols[1], c),
                          value, x.dtype)
    out[:, rows[0]:rows[0] + height, cols[0]:cols[0] + width, :] = x
    return out


def windows(x, kernel, strides, dilations, out):
    """Every window of the (already padded) NHWC ``x``: a view of shape
    ``(n, out_h, out_w, c, k_h, k_w)``: entry ``[b, i, j, c, p, q]`` is
    ``x[b, i * stride_h + p * dilation_h, j * stride_w + q * dilation_w, c]``."""
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = kernel, strides, dilations, out
    spans = ((kh - 1) * dh + 1, (kw - 1) * dw + 1)
    if x.shape[1] < spans[0] or x.shape[2] < spans[1] or x.size == 0:
        # no window fits, or nothing to look at: an empty (or zero) result of the right shape
        return backend.xp.zeros(x.shape[:1] + (oh, ow, x.shape[3], kh, kw), x.dtype)
    view = backend.xp.lib.stride_tricks.sliding_window_view(x, spans, axis=(1, 2))
    return view[:, :(oh - 1) * sh + 1:sh, :(ow - 1) * sw + 1:sw, :, ::dh, ::dw]


def tap(p, q, strides, dilations, out):
    """The index of tap ``(p, q)`` of every window: a strided slice of a padded NHWC array,
    ``(n, out_h, out_w, c)`` entries, ``[b, i, j, c]`` read at
    ``[b, i * stride_h + p * dilation_h, j * stride_w + q * dilation_w, c]``."""
    (sh, sw), (dh, dw), (oh, ow) = strides, dilations, out
    return (slice(None), slice(p * dh, p * dh + (oh - 1) * sh + 1, sh),
            slice(q * dw, q * dw + (ow - 1) * sw + 1, sw))


def max_of_windows(x, kernel, strides, dilations, out):
    """The largest entry of each window of the padded NHWC ``x``: the elementwise maximum
    of its ``k_h k_w`` taps, one strided slice each (no window copied)."""
    shape = x.shape[:1] + tuple(out) + x.shape[3:]
    if 0 in shape or 0 in kernel:
        return backend.xp.zeros(shape, x.dtype)    # numpy refuses the max of nothing
    total = x[tap(0, 0, strides, dilations, out)].copy()
    for p in range(kernel[0]):
        for q in range(kernel[1]):
            if p or q:
                backend.xp.maximum(total, x[tap(p, q, strides, dilations, out)], out=total)
    return total


def add_at_maxima(g, x, kernel, strides, dilations, out):
    """The transpose of ``max_of_windows`` at ``x``: an array of ``x``'s shape where each
    window's ``g`` is added at the window's first maximum (taps row by row; a NaN wins
    where there is one, as numpy's ``argmax`` says)."""
    xp = backend.xp
    total = xp.zeros(x.shape, g.dtype)
    if g.size == 0:
        return total
    best = max_of_windows(x, kernel, strides, dilations, out)
    open_ = xp.ones(best.shape, bool)      # windows whose maximum is not placed yet
    nan = bool((best != best).any())
    for p in range(kernel[0]):
        for q in range(kernel[1]):
            entries = x[tap(p, q, strides, dilations, out)]
            won = (entries == best) | (entries != entries) if nan else entries == best
            won &= open_
            open_ ^= won                   # won is within open_: this clears it there
            total[tap(p, q, strides, dilations, out)] += backend.where_or_zero(won, g)
    return total


def add_windows(values, shape, strides, out, dilations=(1, 1)):
    """The transpose of reading windows: an array of ``shape`` (padded NHWC) where
    each window's ``values[b, i, j, c, p, q]`` is added at its place,
    ``[b, i * stride_h + p * dilation_h, j * stride_w + q * dilation_w, c]``. A loop
    over the few taps ``(p, q)`` of a window, each one strided slice."""
    kh, kw = values.shape[-2:]
    total = backend.xp.zeros(shape, values.dtype)
    if values.size == 0:
        return total
    for p in range(kh):
        for q in range(kw):
            total[tap(p, q, strides, dilations, out)] += values[..., p, q]
    return total
