"""Evenly spaced numbers (numpy's linspace and arange).

From Python numbers they are constant tensors. ``linspace`` also takes tensor
endpoints (as TensorFlow's does): then it is ``start (1 - t) + stop t`` for constant
fractions ``t``, so gradients reach ``start`` and ``stop``.
"""
import math
import numbers

from ... import backend, dtypes, validate
from ...tensor import Tensor, constant
from ..core.grad_util import as_tensor, broadcastable, check_entries


def _finite(value, name, where):
    """A finite real number (an int stays an int: arange's dtype follows numpy's)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        validate.fail(TypeError, where, name, "a number", value)
    if not math.isfinite(value) or (isinstance(value, numbers.Integral)
                                    and not -2 ** 63 <= value < 2 ** 63):
        validate.fail(ValueError, where, name, "a finite number that fits in 64 bits", value)
    return value


def linspace(start, stop, num=50, endpoint=True, dtype=None):
    """``num`` evenly spaced numbers from ``start`` to ``stop`` (included when
    ``endpoint``), numpy's ``linspace``: a constant tensor (float64 by default)."""
    where = "tg.linspace"
    if isinstance(start, Tensor) or isinstance(stop, Tensor):
        return _linspace_of_tensors(start, stop, num, endpoint, dtype, where)
    start, stop = _finite(start, "start", where), _finite(stop, "stop", where)
    num = validate.integer(num, "num", where, minimum=0)
    check_entries(num, "num", num, where)
    return constant(backend.xp.linspace(
        start, stop, num, endpoint=validate.boolean(endpoint, "endpoint", where),
        dtype=validate.dtype(dtype, "dtype", where) or dtypes.float64))


def _linspace_of_tensors(start, stop, num, endpoint, dtype, where):
    """``linspace`` between tensor endpoints (of any shapes that broadcast: the numbers
    run along a new first axis, as numpy's ``axis=0``), differentiable in both."""
    start, stop = as_tensor(start, "start", where), as_tensor(stop, "stop", where)
    dtype = validate.dtype(dtype, "dtype", where)
    num = validate.integer(num, "num", where, minimum=0)
    check_entries(num, "num", num, where)
    endpoint = validate.boolean(endpoint, "endpoint", where)
    for t, name in ((start, "start"), (stop, "stop")):
        if t.shape is None:
            validate.fail(ValueError, where, name, "a tensor of known rank", t)
    if not broadcastable(start.shape, stop.shape):
        validate.fail(ValueError, where, "stop", f"a tensor that broadcasts against `start`'s "
                      f"shape {tuple(start.shape)}", stop)
    kind = dtype if dtype is not None and dtype.kind == "f" else dtypes.float64
    floats = [t if t.dtype.kind == "f" else t.astype(kind) for t in (start, stop)]
    rank = max(len(start.shape), len(stop.shape))
    steps = max(num - 1, 1) if endpoint else max(num, 1)
    fraction = constant(backend.xp.arange(num, dtype=floats[0].dtype).reshape(
        (num,) + (1,) * rank) / steps)
    result = floats[0] * (1.0 - fraction) + floats[1] * fraction
    return result if dtype is None or dtype == result.dtype else result.astype(dtype)


def arange(start, stop=None, step=1, dtype=None):
    """``start, start + step, ...`` up to (not including) ``stop``, numpy's ``arange``
    (``arange(n)`` is 0 to n - 1): a constant tensor, int64 for integer arguments."""
    where = "tg.arange"
    start, step = _finite(start, "start", where), _finite(step, "step", where)
    if stop is None:
        start, stop = 0, start
    stop = _finite(stop, "stop", where)
    if step == 0:
        validate.fail(ValueError, where, "step", "a number other than 0", step)
    check_entries(max(math.ceil((stop - start) / step), 0), "stop", stop, where)
    return constant(backend.xp.arange(start, stop, step,
                                      dtype=validate.dtype(dtype, "dtype", where)))
