"""The arguments of the distributions, checked once for all three ways of drawing.

``tg.random.normal``, ``Generator.normal`` and ``tg.random.stateless_normal`` draw
a standard normal the same way, from different streams: each hands these
functions a ``draw(kind, shape, dtype, low, high)`` that binds its own op. A
standard draw is then scaled and shifted with ordinary ops (``z * stddev + mean``,
``u * (maxval - minval) + minval``, as TensorFlow writes them), so a tensor
``mean`` or ``stddev`` gets its gradient; with the defaults there is nothing to add
and the graph holds the draw alone.
"""
import numpy as np

from ... import validate
from ...dtypes import float32, int64
from ...tensor import Tensor
from ..core.apply import innermost
from ..core.grad_util import as_tensor, check_entries
from ..elementwise.arithmetic import add, multiply, subtract
from .draws import categorical_p, stateless_categorical_p
from .replay import draw


def float_dtype(dtype, where):
    dtype = validate.dtype(float32 if dtype is None else dtype, "dtype", where)
    if dtype.kind != "f":
        validate.fail(TypeError, where, "dtype", "a floating-point type (tg.float32, "
                      "tg.float64)", dtype)
    return dtype


def _scalar(value, name, dtype, where):
    """``mean``, ``stddev``, ``minval`` or ``maxval``: a number, or a tensor of ``dtype``."""
    if isinstance(value, Tensor):
        if value.dtype != dtype:
            validate.fail(TypeError, where, name, f"a number or a tensor of the draw's dtype "
                          f"{dtype}", value)
        return value
    return validate.number(value, name, where)


def draw_shape(shape, where):
    """``shape`` checked: non-negative sizes, at most ``MAX_ENTRIES`` entries in all."""
    shape = validate.shape(shape, "shape", where)
    check_entries(int(np.prod(shape, dtype=object)), "shape", shape, where)
    return shape


def normal(draw, shape, mean, stddev, dtype, where):
    shape = draw_shape(shape, where)
    dtype = float_dtype(dtype, where)
    mean, stddev = _scalar(mean, "mean", dtype, where), _scalar(stddev, "stddev", dtype, where)
    z = draw("normal", shape, dtype, None, None)
    if not (isinstance(stddev, float) and stddev == 1.0):
        z = multiply(z, stddev)
    if not (isinstance(mean, float) and mean == 0.0):
        z = add(z, mean)
    return z


def uniform(draw, shape, minval, maxval, dtype, where):
    shape = draw_shape(shape, where)
    dtype = validate.dtype(float32 if dtype is None else dtype, "dtype", where)
    if dtype.kind in "iu":
        if maxval is None:
            validate.fail(ValueError, where, "maxval", "an integer bound (it must be given "
                          "for an integer dtype)", maxval)
        low = validate.integer(minval, "minval", where)
        high = validate.integer(maxval, "maxval", where)
        if low >= high:
            validate.fail(ValueError, where, "maxval", f"an integer > minval ({low})", high)
        if low < np.iinfo(dtype).min or high - 1 > np.iinfo(dtype).max:
            validate.fail(ValueError, where, "maxval", f"bounds that fit in {dtype}", high)
        return draw("integers", shape, dtype, low, high)
    if dtype.kind != "f":
        validate.fail(TypeError, where, "dtype", "a float or integer type", dtype)
    low = _scalar(minval, "minval", dtype, where)
    high = _scalar(1.0 if maxval is None else maxval, "maxval", dtype, where)
    u = draw("uniform", shape, dtype, None, None)
    if isinstance(low, float) and isinstance(high, float) and (low, high) == (0.0, 1.0):
        return u
    width = high - low if isinstance(low, float) and isinstance(high, float) \
        else subtract(high, low)
    return add(multiply(u, width), low)


def _logits(logits, num_samples, dtype, where):
    logits = as_tensor(logits, "logits", where)
    if logits.dtype.kind != "f" or (logits.shape is not None and len(logits.shape) != 2):
        validate.fail(ValueError if logits.dtype.kind == "f" else TypeError, where, "logits",
                      "a 2-D float tensor [batch, classes] of unnormalised log-probabilities",
                      logits)
    num_samples = validate.integer(num_samples, "num_samples", where, minimum=0)
    if logits.shape is not None and None not in logits.shape:
        check_entries(num_samples * logits.shape[0] * logits.shape[1], "num_samples",
                      num_samples, where)
    dtype = validate.dtype(int64 if dtype is None else dtype, "dtype", where)
    if dtype not in (np.int32, np.int64):
        validate.fail(TypeError, where, "dtype", "tg.int32 or tg.int64", dtype)
    return logits, num_samples, dtype


def categorical(logits, num_samples, dtype, stream_of, where):
    """Stateful: ``stream_of()`` gives the stream (made after the arguments are checked)."""
    logits, num_samples, dtype = _logits(logits, num_samples, dtype, where)
    return draw(categorical_p, logits, num_samples=num_samples, dtype=dtype,
                stream=stream_of())


def stateless_categorical(logits, num_samples, seed, dtype, where):
    logits, num_samples, dtype = _logits(logits, num_samples, dtype, where)
    return innermost.process(stateless_categorical_p, logits, seed_tensor(seed, where),
                num_samples=num_samples, dtype=dtype)


def seed_tensor(seed, where):
    """A stateless op's ``seed``: a tensor of two integers (a list ``[1, 2]`` will do)."""
    seed = as_tensor(seed, "seed", where)
    if seed.dtype.kind not in "iu" or (seed.shape is not None and tuple(seed.shape) != (2,)):
        validate.fail(ValueError if seed.dtype.kind in "iu" else TypeError, where, "seed",
                      "two integers, shape [2] (e.g. [1, 2])", seed)
    return seed
