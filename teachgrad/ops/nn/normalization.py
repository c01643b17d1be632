r"""Normalisation, TensorFlow's ``moments`` and ``batch_normalization``, made of ops
that have their rules already (mean, subtract, square, sqrt, multiply), so their
gradients, to any order, come from those.

$$\mu = \mathrm{mean}(x), \quad \sigma^2 = \mathrm{mean}((x - \mu)^2), \qquad
  \mathrm{bn}(x) = \gamma \, \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta.$$
"""
from ... import validate
from ...tensor import Tensor, holds_tensor, packed
from ..core.grad_util import as_tensor, broadcastable
from ..elementwise.arithmetic import divide
from ..elementwise.math import sqrt, square
from ..reductions.sums import mean as reduce_mean
from ..shape.reshape import squeeze


def moments(x, axes, keepdims=False):
    r"""The mean and variance of ``x`` over ``axes`` (``tf.nn.moments``), as a pair.

    $\mu = \frac{1}{n}\sum x$, $\sigma^2 = \frac{1}{n}\sum (x - \mu)^2$ (the population
    variance, numpy's ``var`` with ``ddof=0``).

    Args:
      x: a float tensor.
      axes: the axes to reduce (an int or a list of ints). For a batch of images
        (NHWC), ``[0, 1, 2]`` gives one mean and variance per channel.
      keepdims: keep the reduced axes, with size 1.

    (TensorFlow stops the gradient at the mean inside the variance, which gives the
    same first derivative; teachgrad keeps it, so second derivatives are right too.)
    """
    where = "tg.nn.moments"
    x = as_tensor(x, "x", where)
    if x.dtype.kind != "f":
        validate.fail(TypeError, where, "x", "floating point (cast it with tg.cast)", x)
    keepdims = validate.boolean(keepdims, "keepdims", where)
    if axes is None:   # TensorFlow's moments reduces only the axes it is told
        validate.fail(TypeError, where, "axes", "an integer or a list of integers", axes,
                      "For every axis, list them: list(range(x.ndim)).")
    axes = validate.axis(axes, x.ndim, "axes", where)
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    if x.ndim == 0 and axes:
        validate.fail(ValueError, where, "axes", "no axes for a scalar x (it has none)", axes)
    if len({a % max(x.ndim, 1) for a in axes}) != len(axes):
        validate.fail(ValueError, where, "axes", "distinct axes", axes)
    mu = reduce_mean(x, axis=axes, keepdims=True)
    variance = reduce_mean(square(x - mu), axis=axes, keepdims=True)
    if not keepdims and axes:
        mu, variance = squeeze(mu, axes), squeeze(variance, axes)
    return mu, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon):
    r"""``x`` normalised by ``mean`` and ``variance``, then scaled and shifted
    (``tf.nn.batch_normalization``):
    $\gamma (x - \mu) / \sqrt{\sigma^2 + \epsilon} + \beta$.

    Args:
      x: a float tensor.
      mean, variance: tensors that broadcast against ``x`` (``tg.nn.moments`` makes them).
      offset: $\beta$, broadcasting against ``x``, or None (no shift).
      scale: $\gamma$, broadcasting against ``x``, or None (no scaling).
      variance_epsilon: a small positive number that keeps the division finite.
    """
    where = "tg.nn.batch_normalization"
    x = as_tensor(x, "x", where)
    if x.dtype.kind != "f":
        validate.fail(TypeError, where, "x", "floating point (cast it with tg.cast)", x)
    mean, variance = (_like(v, name, x, where) for v, name in ((mean, "mean"),
                                                                (variance, "variance")))
    offset = None if offset is None else _like(offset, "offset", x, where)
    scale = None if scale is None else _like(scale, "scale", x, where)
    eps = validate.number(variance_epsilon, "variance_epsilon", where, minimum=0.0)
    known_variance = variance.value   # None for a graph tensor: checked when it has one
    if known_variance is not None and known_variance.size and known_variance.min() + eps <= 0:
        validate.fail(ValueError, where, "variance", "a variance >= 0, and > 0 where "
                      "variance_epsilon is 0 (it divides)", variance)
    inv = divide(1.0, sqrt(variance + eps))
    if scale is not None:
        inv = inv * scale
    shift = -mean * inv if offset is None else offset - mean * inv
    return x * inv + shift


def _like(value, name, x, where):
    """``value`` as a tensor of ``x``'s dtype: numbers and arrays are converted; a
    tensor must have that dtype already (as in TensorFlow: no silent float64 result)."""
    if type(value) in (list, tuple) and holds_tensor(value):
        value = packed(value, name, where)   # tg.stack of its entries: differentiable
    if not isinstance(value, Tensor):
        value = Tensor(validate.tensor_like(value, name, where, dtype=x.dtype))
    if value.dtype != x.dtype:
        validate.fail(TypeError, where, name, f"a tensor of x's dtype {x.dtype}", value)
    if not broadcastable(value.shape, x.shape):
        validate.fail(ValueError, where, name, f"a tensor that broadcasts against x's shape "
                      f"{tuple(x.shape)}", value)
    return value
