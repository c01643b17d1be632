"""``tg.nn``: the deep-learning ops, with TensorFlow's names and layouts.

Images are NHWC (batch, height, width, channels) and filters HWIO (height, width,
in channels, out channels), as in ``tf.nn``. The activations and the fused
cross-entropy are the same ops as the top-level names (``tg.nn.relu is tg.relu``).

    x = tg.constant(images)                            # (batch, 8, 8, 1)
    h = tg.nn.relu(tg.nn.conv2d(x, w, strides=1, padding="SAME"))
    h = tg.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID")

Each op is declared once, in ``teachgrad/ops/`` (``conv.py``, ``pooling.py``,
``normalization.py``, ``dropout.py``); this module is where they are public, each
taking ``name=`` as every op does.
"""
from . import validate as _validate
from .ops import (
    cast as _cast,
    exp as _exp,
    log1p as _log1p,
    log_softmax,
    relu,
    sigmoid,
    softmax,
    sparse_softmax_cross_entropy_with_logits,
    sum as _sum,
    where as _where,
)
from .ops.core.apply import innermost
from .ops.core.grad_util import as_tensor as _as_tensor, compatible as _compatible
from .ops.core.naming import name_public_ops as _name_public_ops
from .ops.nn.channel_pooling import check_depth as _check_depth, window_words as _window_words
from .ops.nn.conv import (
    check_fits as _check_fits,
    checked_conv as _checked_conv,
    conv2d,
    conv2d_p as _conv2d_p,
)
from .ops.nn.conv_checks import padding_mode as _padding_mode
from .ops.nn.dropout import dropout, stateless_dropout
from .ops.nn.normalization import batch_normalization, moments
from .ops.nn.pooling import avg_pool2d, max_pool2d
from .ops.shape.reshape import expand_dims as _expand_dims, squeeze as _squeeze

__all__ = ["avg_pool1d", "avg_pool2d", "batch_normalization", "conv1d", "conv2d", "dropout",
           "log_softmax", "max_pool1d", "max_pool2d", "moments", "relu", "sigmoid",
           "sigmoid_cross_entropy_with_logits", "softmax", "softmax_cross_entropy_with_logits",
           "sparse_softmax_cross_entropy_with_logits", "stateless_dropout"]


def conv1d(input, filters, stride, padding, dilations=1):
    r"""The 1-D convolution of ``input`` (NWC: batch, width, channels) with ``filters``
    (WIO: width, in channels, out channels), as ``tf.nn.conv1d``: a ``conv2d`` of
    height 1 (the input and filters get a height axis of size 1, and lose it again).

    $y_{b,i,o} = \sum_{q,c} x_{b,\, i s + q d,\, c}\, w_{q,c,o}$

    Args:
      input: float tensor of shape ``(batch, width, in_channels)``.
      filters: tensor of ``input``'s dtype, shape ``(width, in_channels, out_channels)``.
      stride, dilations: an int (or a list of 1 or 3 ints, 3: ``[1, s, 1]``).
      padding: ``"VALID"`` or ``"SAME"``.
    """
    where = "tg.nn.conv1d"
    stride, dilations = _one(stride, "stride", where), _one(dilations, "dilations", where)
    x, w, strides, padding, dilations = _checked_conv(input, filters, (1, stride), padding,
                                                      (1, dilations), 3, where)
    if w.shape is not None:
        _check_fits(x, w.shape[:1], dilations[1:], padding, where)
    y = innermost.process(_conv2d_p, _expand_dims(x, 1), _expand_dims(w, 0), strides=strides,
              padding=padding, dilations=dilations)
    return _squeeze(y, 1)


def _one(value, name, where):
    """A 1-D stride or dilation (an int, or 1 or 3 ints with 1 at the ends) as an int."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(items) == 3 and items[0] == 1 and items[2] == 1:
        items = items[1:2]
    if len(items) != 1:
        _validate.fail(ValueError, where, name, "a positive int (or [1, n, 1])", value)
    return _validate.integer(items[0], name, where, minimum=1, maximum=2 ** 31)


def max_pool1d(input, ksize, strides, padding, dilations=1):
    r"""The largest entry of each ``ksize`` window of ``input`` (NWC: batch, width,
    channels), as ``tf.nn.max_pool1d``: $y_{b,i,c} = \max_q x_{b,\, i s + q d,\, c}$, a
    ``max_pool2d`` of height 1.

    Args:
      input: float tensor of shape ``(batch, width, channels)``.
      ksize, strides: an int (or a list of 1 or 3 ints, 3: ``[1, k, c]``; a channel
        entry ``c`` above 1 pools each ``c`` neighbouring channels too, the same ``c``
        in both).
      padding: ``"VALID"`` or ``"SAME"``.
      dilations: an int (or ``[1, d, 1]``): the spacing of a window's taps.
    """
    return _pool1d(max_pool2d, input, ksize, strides, padding, dilations, "tg.nn.max_pool1d")


def avg_pool1d(input, ksize, strides, padding, dilations=1):
    r"""The mean of each ``ksize`` window of ``input`` (NWC), as ``tf.nn.avg_pool1d``:
    an ``avg_pool2d`` of height 1 (with ``"SAME"``, the mean of the entries inside).

    Args:
      input: float tensor of shape ``(batch, width, channels)``.
      ksize, strides: an int (or a list of 1 or 3 ints, 3: ``[1, k, c]``, ``c`` as
        in ``max_pool1d``).
      padding: ``"VALID"`` or ``"SAME"``.
      dilations: an int (or ``[1, d, 1]``): the spacing of a window's taps.
    """
    return _pool1d(avg_pool2d, input, ksize, strides, padding, dilations, "tg.nn.avg_pool1d")


def _pool1d(pool2d, input, ksize, strides, padding, dilations, where):
    """A 2-D pool of height 1: NWC gets a height axis of size 1, and loses it again."""
    x = _as_tensor(input, "input", where)
    if x.shape is not None and len(x.shape) != 3:
        _validate.fail(ValueError, where, "input", "a tensor of shape (batch, width, "
                       "channels)", input)
    (k, depth), (s, depth_stride) = (_one_and_depth(ksize, "ksize", where),
                                     _one_and_depth(strides, "strides", where))
    d, padding = _one(dilations, "dilations", where), _padding_mode(padding, where)
    _check_fits(x, (k,), (d,), padding, where, window=_window_words((d,)))
    images = _expand_dims(x, 1)
    _check_depth(images, depth, depth_stride, where)
    return _squeeze(pool2d(images, (1, 1, k, depth), (1, 1, s, depth_stride), padding,
                           (1, d)), 1)


def _one_and_depth(value, name, where):
    """A 1-D ``ksize`` or ``strides`` as ``(width, channels)``: an int, or 1 or 3 ints
    (3: ``[1, n, channels]``)."""
    if isinstance(value, (list, tuple)) and len(value) == 3:
        depth = _validate.integer(value[2], name, where, minimum=1, maximum=2 ** 31)
        return _one(list(value[:2]) + [1], name, where), depth
    return _one(value, name, where), 1


def softmax_cross_entropy_with_logits(labels, logits, axis=-1):
    r"""The cross-entropy between ``softmax(logits)`` and the probabilities ``labels``
    along ``axis``, per example, as ``tf.nn.softmax_cross_entropy_with_logits``:

    $\ell = -\sum_i p_i \log \mathrm{softmax}(z)_i = \sum_i p_i\,(\mathrm{logsumexp}(z) - z_i)$

    Args:
      labels: float tensor of ``logits``' shape: each row a distribution (one-hot or soft).
      logits: float tensor (unnormalised log-probabilities).
      axis: the axis of the classes.

    Written with ``log_softmax``, which subtracts the max before any exp, so it is exact
    at logits of 1e4 in float32 (its gradient in ``logits`` is ``softmax(z) * sum(p) -
    p``); ``labels`` get a gradient too (``-log_softmax(z)``), as TensorFlow's.
    """
    where = "tg.nn.softmax_cross_entropy_with_logits"
    labels, logits = _float_pair(labels, logits, where)
    axis = _validate.one_axis(axis, None if logits.shape is None else len(logits.shape),
                              "axis", where)
    return -_sum(labels * log_softmax(logits, axis=axis), axis=axis)


def sigmoid_cross_entropy_with_logits(labels, logits):
    r"""The cross-entropy of independent yes/no labels ``labels`` (in [0, 1]) and the
    probabilities ``sigmoid(logits)``, entry by entry, as
    ``tf.nn.sigmoid_cross_entropy_with_logits``:

    $\ell = -z \log \sigma(x) - (1 - z) \log(1 - \sigma(x)) = \max(x, 0) - x z + \log(1 + e^{-\lvert x \rvert})$

    The right-hand form (TensorFlow's) never takes the exp of a positive number, so it
    is finite and exact at x = 1e4 and -1e4 in float32; its gradient is $\sigma(x) - z$,
    0.5 - z at x = 0 (the two kinks at 0 cancel: each ``where`` sends x = 0 the same way).
    """
    where = "tg.nn.sigmoid_cross_entropy_with_logits"
    labels, x = _float_pair(labels, logits, where)
    positive = x >= 0
    relu_x = _where(positive, x, 0)
    minus_abs_x = _where(positive, -x, x)
    return relu_x - x * labels + _log1p(_exp(minus_abs_x))


def _float_pair(labels, logits, where):
    """``labels`` and ``logits`` as tensors of one float dtype and one shape."""
    logits = _as_tensor(logits, "logits", where)
    labels = _as_tensor(labels, "labels", where)
    if logits.dtype.kind != "f":
        _validate.fail(TypeError, where, "logits", "a float tensor (cast it with "
                       "tg.cast(logits, tg.float32))", logits)
    if labels.dtype != logits.dtype:
        if labels.dtype.kind not in "biuf" or (labels.dtype.kind == "f"
                                               and labels.dtype.itemsize > logits.dtype.itemsize):
            _validate.fail(TypeError, where, "labels", f"a tensor of logits' dtype "
                           f"{logits.dtype}", labels)
        labels = _cast(labels, logits.dtype)
    if logits.shape is not None and labels.shape is not None and not _compatible(
            tuple(labels.shape), tuple(logits.shape)):
        _validate.fail(ValueError, where, "labels", f"a tensor of logits' shape "
                       f"{logits.shape}", labels)
    return labels, logits


# Every public function above takes name= too (the activations already do).
_name_public_ops(globals(), prefix="tg.nn.")
