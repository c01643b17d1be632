"""Evenly spaced numbers as constant tensors (numpy's linspace and arange).

They are made from Python numbers, so nothing is differentiated through them.
"""
import math
import numbers

from .. import backend, dtypes, validate
from ..tensor import constant
from .grad_util import check_entries


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
    start, stop = _finite(start, "start", where), _finite(stop, "stop", where)
    num = validate.integer(num, "num", where, minimum=0)
    check_entries(num, "num", num, where)
    return constant(backend.xp.linspace(
        start, stop, num, endpoint=validate.boolean(endpoint, "endpoint", where),
        dtype=validate.dtype(dtype, "dtype", where) or dtypes.float64))


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
