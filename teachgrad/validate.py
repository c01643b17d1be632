"""Checks at the public boundary: what was wrong, with which argument.

Every public function checks its arguments where they enter, with these small
validators, and raises ``TypeError`` (a wrong kind of thing) or ``ValueError``
(the right kind, a wrong value or shape) whose message names the argument, says
what was given and what is accepted::

    tg.constant(None)
    TypeError: tg.constant: `value` must be numbers (a number, a nested list of
    numbers, an array or a tensor), but got None.

Code past the boundary may then trust its inputs. The validators run once per
public call, never per op inside the engine.
"""
import inspect
import numbers as _numbers

import numpy as np

from . import backend

# What tg.constant accepts, said once (messages and the errors page quote it).
NUMBERS = "numbers (a number, a nested list of numbers, an array or a tensor)"
# The dtypes teachgrad tensors may have: bool, integers, floats and complex numbers.
NUMBER_KINDS = "biufc"


def describe(value):
    """``value`` as a message shows it: short, with its kind."""
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, type):
        return f"the type {value.__name__}"
    if isinstance(value, np.dtype):
        return f"the dtype {value}"
    if isinstance(value, (str, bytes)):
        text = repr(value)
        return f"the {type(value).__name__} {text[:40] + '...' if len(text) > 40 else text}"
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        kind = "a tensor" if hasattr(value, "id") else f"a {type(value).__name__}"
        return f"{kind} of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    text = text[:60] + "..." if len(text) > 60 else text
    if isinstance(value, (list, tuple)):
        return f"the {type(value).__name__} {text}"
    return f"{text} (a {type(value).__name__})"


def message(where, name, accepted, value, hint=""):
    """The one wording: ``where: `name` must be accepted, but got value. hint``."""
    text = f"{where}: `{name}` must be {accepted}, but got {describe(value)}."
    return f"{text} {hint}" if hint else text


def fail(error, where, name, accepted, value, hint=""):
    """Raise ``error`` (TypeError or ValueError) with the one wording."""
    raise error(message(where, name, accepted, value, hint))


def dtype(value, name, where):
    """A numpy dtype of a kind teachgrad tensors hold (bool, integer, float, complex); None
    stays None."""
    if value is None:
        return None
    try:
        result = np.dtype(value)
    except (TypeError, ValueError, SyntaxError):   # np.dtype(",") raises SyntaxError
        fail(TypeError, where, name, "a data type (tg.float32, tg.float64, tg.int32, "
             "tg.int64, tg.bool_ or their names)", value)
    if result.kind not in NUMBER_KINDS:
        fail(TypeError, where, name, "a numeric data type (bool, an integer, a float or a "
             "complex dtype)", value, "teachgrad tensors do not hold strings or objects.")
    return result


def tensor_like(value, name, where, dtype=None):
    """``value`` (a number, nested list, array or tensor) as a backend array of numbers.

    None anywhere in it is refused: numpy would quietly make it NaN.
    """
    if dtype is not None:
        _refuse_dropping_imaginary(value, dtype, name, where)
    if hasattr(value, "id") and hasattr(value, "value"):   # a Tensor
        array = value.value
        if array is None:
            raise ValueError(f"{where}: `{name}` is the symbolic tensor {value.name} of a graph, "
                             f"which has no value here; evaluate it with tg.Session(graph).run.")
        return array if dtype is None or array.dtype == dtype else array.astype(dtype)
    if value is None:
        fail(TypeError, where, name, NUMBERS, value,
             "None is not a number (numpy would make it NaN).")
    if isinstance(value, (list, tuple)):
        value = _from_sequence(value, name, where)
    elif isinstance(value, (str, bytes)):
        fail(TypeError, where, name, NUMBERS, value, "teachgrad tensors hold numbers.")
    elif hasattr(value, "dtype") and value.dtype.kind not in NUMBER_KINDS:
        fail(TypeError, where, name, NUMBERS, value,
             "Convert it first, e.g. with .astype(float).")
    elif not isinstance(value, _numbers.Number) and not hasattr(value, "__array__") \
            and not hasattr(value, "dtype"):
        fail(TypeError, where, name, NUMBERS, value)
    try:
        array = backend.xp.asarray(value, dtype=dtype)
    except OverflowError:
        fail(ValueError, where, name, NUMBERS + " that fit in 64 bits", value)
    if array.dtype.kind not in NUMBER_KINDS:
        fail(TypeError, where, name, NUMBERS, value)
    return array


def _refuse_dropping_imaginary(value, dtype, name, where):
    """Refuse complex numbers asked for as a real ``dtype`` (numpy only warns)."""
    if dtype.kind != "c" and np.iscomplexobj(value):
        fail(TypeError, where, name, f"real numbers for dtype {dtype}", value, "It would "
             "drop the imaginary parts: take tg.real or tg.abs first, or use a complex dtype.")


def _from_sequence(value, name, where):
    """A (nested) list or tuple as a numpy array, with a message for each way it goes wrong."""
    value = [v.numpy() if hasattr(v, "id") and hasattr(v, "numpy") else v for v in value]
    try:
        array = np.asarray(value)
    except ValueError:
        fail(ValueError, where, name, "a nested list whose rows all have the same length",
             value, "Its elements have mixed shapes: pad the data, or make one tensor per row.")
    except OverflowError:
        fail(ValueError, where, name, NUMBERS + " that fit in 64 bits", value)
    if array.dtype.kind not in NUMBER_KINDS:
        if _contains_none(value):
            fail(TypeError, where, name, NUMBERS, value,
                 "It contains None, which is not a number (numpy would make it NaN).")
        fail(TypeError, where, name, NUMBERS, value, "Every element must be a number.")
    return array


def _contains_none(value):
    return value is None or (isinstance(value, (list, tuple)) and any(map(_contains_none, value)))


def integer(value, name, where, minimum=None, maximum=None):
    """A Python int (or numpy integer; not a bool, not a float), at least ``minimum``
    and at most ``maximum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if hasattr(value, "__index__") and not isinstance(value, bool) \
                and getattr(value, "dtype", np.dtype("i8")).kind in "iu":
            value = value.__index__()   # a 0-d integer tensor
        else:
            fail(TypeError, where, name, "an integer", value)
    value = int(value)
    if minimum is not None and value < minimum:
        fail(ValueError, where, name, f"an integer >= {minimum}", value)
    if maximum is not None and value > maximum:
        fail(ValueError, where, name, f"an integer <= {maximum}", value)
    return value


def one_axis(value, ndim, name, where):
    """``value`` as one axis: an int in ``[-ndim, ndim)`` (only its type is checked
    when ``ndim`` is None), negative ones kept (the op normalises them)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        fail(TypeError, where, name, "an integer axis", value)
    value = int(value)
    if ndim is None and not -2 ** 31 <= value < 2 ** 31:
        fail(ValueError, where, name, "an axis that fits in 32 bits", value)
    if ndim is not None and not -ndim <= value < max(ndim, 1):
        fail(ValueError, where, name, f"an axis in [{-ndim}, {max(ndim, 1) - 1}] for a "
             f"tensor of rank {ndim}", value)
    return value


def axis(value, ndim, name, where):
    """``value`` (an int, or a list or tuple of them) as axes in range for rank
    ``ndim``: an int or a tuple of ints."""
    if isinstance(value, (list, tuple)):
        return tuple(one_axis(a, ndim, name, where) for a in value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        fail(TypeError, where, name, "an integer, a list of integers or None", value)
    return one_axis(value, ndim, name, where)


def sequence(value, name, where):
    """``value`` (a list or tuple of tensors or numbers) as a list."""
    if not isinstance(value, (list, tuple)):
        fail(TypeError, where, name, "a list or tuple of tensors", value)
    return list(value)


def shape(value, name, where, unknown=False, inferred=False):
    """``value`` as a shape: a tuple of non-negative ints (None for an unknown
    dimension when ``unknown``; one -1, a size to infer, when ``inferred``, as
    reshape's). An int is a shape of rank 1."""
    accepted = "a shape: a tuple of non-negative integers" + (
        " (None for an unknown size)" if unknown else " (one -1 for a size to infer)"
        if inferred else "")
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        value = (value,)
    if hasattr(value, "id") and hasattr(value, "numpy") and value.dtype.kind in "iu":
        value = tuple(value.numpy().reshape(-1).tolist())
    if not isinstance(value, (list, tuple)):
        fail(TypeError, where, name, accepted, value)
    dims = []
    for d in value:
        if d is None and unknown:
            dims.append(None)
            continue
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            fail(TypeError, where, name, accepted, value)
        if d == -1 and inferred and -1 not in dims:
            dims.append(-1)
            continue
        if d < 0:
            fail(ValueError, where, name, accepted, value,
                 "Write None, not -1, for a size not known yet." if unknown else "")
        dims.append(int(d))
    return tuple(dims)


def number(value, name, where, minimum=None):
    """``value`` as a finite Python float (not a bool), at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        fail(TypeError, where, name, "a number", value)
    try:
        finite = np.isfinite(float(value))   # float() first: a huge Python int is no ufunc input
    except OverflowError:
        finite = False
    if not finite or (minimum is not None and value < minimum):
        fail(ValueError, where, name, "a finite number" + (
            f" >= {minimum}" if minimum is not None else ""), value)
    return float(value)


def text(value, name, where):
    """``value`` if it is a non-empty string (words a message will show)."""
    if not isinstance(value, str) or not value:
        fail(TypeError, where, name, "a non-empty string", value)
    return value


def name(value, where, argument="name"):
    """``value`` as a node name: a string, or None for the default."""
    if value is not None and not isinstance(value, str):
        fail(TypeError, where, argument, "a string (or None)", value)
    return value


def boolean(value, name, where):
    """``value`` as a Python bool: a bool, or a number or 0-d array equal to 0 or 1."""
    if type(value) is bool:
        return value
    if isinstance(value, (int, np.integer, np.bool_)) and value in (0, 1):
        return bool(value)
    fail(TypeError, where, name, "True or False", value)


def flags(where, **values):
    """Flags and a name, checked in one call: ``flags("tg.scan", reverse=reverse, name=name)``.
    ``name`` is a string or None, the others bools (``reverse="no"`` would mean True)."""
    for argument, value in values.items():
        if argument == "name":
            name(value, where)
        else:
            boolean(value, argument, where)


def arity(f, count, name, where):
    """Check that ``f`` can be called with ``count`` positional arguments (those in
    ``name``), when its signature can be read."""
    try:
        signature = inspect.signature(f)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(*range(count))
    except TypeError as error:
        fail(TypeError, where, name, f"one value per parameter of f{signature}", count,
             f"({error}).")


def one_of(value, name, where, choices):
    """``value`` if it is one of ``choices`` (compared by type too: an array, a list or
    a 1 is not the string or None it equals)."""
    if not any(type(value) is type(c) and value == c for c in choices):
        fail(ValueError, where, name, "one of " + ", ".join(repr(c) for c in choices), value)
    return value


def callable_(value, name, where, hint=""):
    """``value`` if it can be called."""
    if not callable(value):
        fail(TypeError, where, name, "a function (something callable)", value, hint)
    return value
