"""The checks of convolution's and pooling's arguments (``conv2d``, ``tg.nn.conv1d``,
the pooling ops): layouts, strides and dilations as pairs, padding modes, and inputs
big enough for a window.
"""
from ... import validate
from ..core.grad_util import as_tensor, known
from .windows import PADDINGS

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
