"""Sliding windows over the height and width of NHWC tensors: the geometry that
convolution and pooling share, TensorFlow's conventions, with no op in it.

Along one axis of ``size`` entries, a window of ``k`` taps ``dilation`` apart spans
``span = (k - 1) * dilation + 1`` entries, and windows start ``stride`` apart:

* ``"VALID"``: no padding; ``out = (size - span) // stride + 1`` windows.
* ``"SAME"``: ``out = ceil(size / stride)`` windows, and just enough padding,
  ``total = max((out - 1) * stride + span - size, 0)``, split with the odd entry at
  the end: ``before = total // 2``, ``after = total - before`` (TensorFlow's rule).

The kernels read windows as strided *views* (``sliding_window_view``, no copy), so
an op over all windows is one array expression, never a Python loop over pixels.
"""
from .. import backend

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
    ``value`` along height and width (no copy when there is nothing to pad)."""
    if not any(rows) and not any(cols):
        return x
    return backend.xp.pad(x, ((0, 0), tuple(rows), tuple(cols), (0, 0)),
                          constant_values=value)


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


def add_windows(values, shape, strides, out, dilations=(1, 1)):
    """The transpose of reading windows: an array of ``shape`` (padded NHWC) where
    each window's ``values[b, i, j, c, p, q]`` is added at its place,
    ``[b, i * stride_h + p * dilation_h, j * stride_w + q * dilation_w, c]``. A loop
    over the few taps ``(p, q)`` of a window, each one strided slice."""
    kh, kw = values.shape[-2:]
    (sh, sw), (oh, ow), (dh, dw) = strides, out, dilations
    total = backend.xp.zeros(shape, values.dtype)
    if values.size == 0:
        return total
    for p in range(kh):
        for q in range(kw):
            top, left = p * dh, q * dw
            total[:, top:top + (oh - 1) * sh + 1:sh, left:left + (ow - 1) * sw + 1:sw, :] += \
                values[..., p, q]
    return total
