r"""2-D convolution (TensorFlow's ``conv2d``: NHWC input, HWIO filters), and why its
backward pass is two more convolutions.

Forward, each output pixel is a dot product of one window of the input with the
filters: with ``s`` the strides, ``d`` the dilations and ``x`` padded as the
padding mode says (see ``windows.py``),

$$y_{b,i,j,o} = \sum_{p,q,c} x_{b,\, i s_h + p d_h,\, j s_w + q d_w,\, c}\; w_{p,q,c,o}.$$

The kernel reads all windows as one strided view and multiplies them by the
filters in **one matmul** (``im2col``: windows as rows, filters as a matrix), or, where
the shapes make BLAS faster that way, as the im2col rows transposed or one matmul per
output pixel (``conv_kernels.py``: the same sum, chosen below the op).

Backward, both cotangents are convolutions again, written below with teachgrad
ops, so they can be differentiated and transposed like any other code:

* the **input's** cotangent is the *transposed convolution*: spread the output
  cotangent out ``s`` apart (zeros between), pad it by the window's span, and
  convolve it with the filters rotated by 180 degrees, their in and out channels
  swapped (``spread``, ``flip``, ``transpose``, ``conv2d``);
* the **filters'** cotangent convolves the (padded) input with the output
  cotangent as the filter: batch and channels trade places, and the strides and
  dilations trade places too (``window_pad``, ``transpose``, ``conv2d``).

``spread`` and ``window_pad`` only move entries (and add zeros); they, and their
transposes ``unspread`` and ``window_unpad``, are declared in ``conv_moves.py``; the
argument checks shared with conv1d and pooling are in ``conv_checks.py``.
"""
from ..core.apply import innermost
from ..core.declare import defbatch, defeffect, defjvp, defshape, defvjp, primitive
from ..shape.rearrange import flip
from ..shape.reshape import transpose
from .conv_checks import check_fits, checked_conv
from .conv_kernels import convolve
from .conv_moves import spread, window_pad
from .nhwc_batching import conv_rule
from .windows import geometry_2d, pad_2d, require_fit, require_images


def _conv2d_kernel(x, w, strides, padding, dilations):
    require_images(x, "conv2d", w)
    kh, kw = w.shape[:2]
    require_fit(x.shape, (kh, kw), dilations, padding, "conv2d", "filters")
    (top, bottom, oh), (left, right, ow) = geometry_2d(x.shape, (kh, kw), strides, dilations,
                                                       padding)
    # the matmuls (over all windows, their transpose, or per output pixel): conv_kernels
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
    return innermost.process(conv2d_p, x, w, strides=strides, padding=padding, dilations=dilations)


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

defvjp(conv2d_p, _conv2d_vjp_input, _conv2d_vjp_filters)
# Bilinear: d(x * w) = dx * w + x * dw.
defjvp(conv2d_p,
       lambda x_dot, ans, x, w, strides, padding, dilations:
       _conv(x_dot, w, strides, padding, dilations),
       lambda w_dot, ans, x, w, strides, padding, dilations:
       _conv(x, w_dot, strides, padding, dilations))
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
    cotangent (see ``teachgrad.ops.nn.conv``).
    """
    where = "tg.nn.conv2d"
    x, w, strides, padding, dilations = checked_conv(input, filters, strides, padding,
                                                     dilations, 4, where)
    if w.shape is not None:
        check_fits(x, w.shape[:2], dilations, padding, where)
    return _conv(x, w, strides, padding, dilations)
