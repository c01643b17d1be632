r"""Pooling over the channel axis too, and the arguments every pool takes.

TensorFlow's ``ksize`` and ``strides`` have an entry for each axis of NHWC:
``[1, kh, kw, kc]``. A channel entry ``kc`` above 1 is *depthwise* pooling: each
``kc`` neighbouring channels are pooled together, in groups that do not overlap
(TensorFlow asks ``strides``' channel entry to be ``kc`` as well, and ``kc`` to divide
the number of channels, and so does teachgrad):

$y_{b,i,j,g} = \max_{c < k_c} x_{b,i,j,\, g k_c + c}$   (``mean`` for ``avg_pool2d``)

Groups that do not overlap make this no new op: reshape the channels to
``(channels / kc, kc)`` and take the ``max`` (or ``mean``) over the last axis. Its
gradient, JVP and batching rule are those of ``reshape`` and ``max``. A window over
height, width *and* channels is the spatial pool followed by the channel one (the max
of maxima is the max of the whole box, and the mean of means over equal groups is the
mean). TensorFlow refuses that combination (and ``avg_pool`` over channels); teachgrad
computes it by that definition.
"""
from ... import validate
from ..core.grad_util import as_tensor
from ..reductions.sums import max as reduce_max, mean as reduce_mean
from ..shape.reshape import reshape
from .conv_checks import check_fits, check_images, padding_mode, pair


def window_and_depth(value, name, where):
    """``ksize`` or ``strides`` as ``((height, width), channels)``: an int, 1 or 2 ints
    (channels 1), or 4 ints ``[1, h, w, c]``."""
    items = list(value) if isinstance(value, (list, tuple)) else None
    if items is None or len(items) != 4:
        return pair(value, name, where), 1
    channels = validate.integer(items[3], name, where, minimum=1, maximum=2 ** 31)
    return pair(items[:3] + [1], name, where), channels


def checked_pool(input, ksize, strides, padding, dilations, where):
    """``(x, params, depth)`` for a 2-D pool: ``x`` the NHWC input as a tensor,
    ``params`` the spatial pool's ``ksize``, ``strides``, ``padding`` and
    ``dilations``, ``depth`` how many channels are pooled together (1: none)."""
    x = as_tensor(input, "input", where)
    ksize, depth = window_and_depth(ksize, "ksize", where)
    strides, depth_stride = window_and_depth(strides, "strides", where)
    params = {"ksize": ksize, "strides": strides, "padding": padding_mode(padding, where),
              "dilations": pair(dilations, "dilations", where)}
    check_images(x, "input", where)
    check_fits(x, ksize, params["dilations"], params["padding"], where,
               window=window_words(params["dilations"]))
    check_depth(x, depth, depth_stride, where)
    return x, params, depth


def check_depth(x, depth, depth_stride, where):
    """Refuse channel windows that overlap, or that do not divide the channels."""
    if depth_stride != depth:
        validate.fail(ValueError, where, "strides", f"a channel entry equal to ksize's "
                      f"({depth}): channels are pooled in groups that do not overlap, as "
                      "in TensorFlow", depth_stride)
    if depth == 1:
        return
    if x.shape is None or any(n is None for n in x.shape[1:]):
        validate.fail(ValueError, where, "input", "a tensor whose height, width and "
                      "channels are known, to pool over channels", x)
    if x.shape[3] % depth:
        validate.fail(ValueError, where, "ksize", f"a channel entry that divides the "
                      f"input's {x.shape[3]} channels", depth)


def pool_channels(x, depth, how):
    """Each ``depth`` neighbouring channels of the NHWC ``x`` reduced to one by
    ``how`` (``"max"`` or ``"mean"``); ``x`` itself for a depth of 1."""
    if depth == 1:
        return x
    n, height, width, channels = x.shape
    groups = reshape(x, (-1 if n is None else n, height, width, channels // depth, depth))
    return (reduce_max if how == "max" else reduce_mean)(groups, axis=-1)


def window_words(dilations):
    """What spans a window, for the error of one too large: the ``ksize``, and the
    ``dilations`` where they spread its taps."""
    return "ksize" if all(d == 1 for d in dilations) else "ksize` and `dilations"
