"""A ``tg.function``'s input signature: the key its traces are cached by.

Tensor arguments count by shape and dtype, Variables by identity (a Variable passed
in stays that Variable in the trace, so it can be assigned), other arguments by
value (a list or tuple by its items).
"""
import numpy as np

from .. import validate
from ..tensor import Tensor, Variable, to_array


def is_tensor_argument(a):
    return isinstance(a, (Tensor, np.ndarray)) or (
        isinstance(a, (list, tuple)) and a and all(isinstance(v, (int, float)) for v in a))


def input_signature(args, kwargs=None):
    """The cache key of a call, and its tensor arguments (positional ones first, then
    keyword ones by name). Python values are keyed by type as well as value: 1, 1.0
    and True are equal in Python, yet trace different graphs."""
    key, tensors = [], []
    values = list(args)
    if kwargs:   # keyword arguments by name, after the positional ones (a marker between)
        key.append(tuple(sorted(kwargs)))
        values += [kwargs[k] for k in sorted(kwargs)]
    for i, a in enumerate(values):
        variables = variables_key(a)
        if variables is not None:
            key.append(("variables", variables))
        elif isinstance(a, Tensor):
            key.append((a.shape, a.dtype))
            tensors.append(a)
        elif is_tensor_argument(a):
            t = Tensor(to_array(a, None, _argument_name(i, args, kwargs), "tg.function"))
            key.append((t.shape, t.dtype))
            tensors.append(t)
        else:
            try:
                hash(a)
            except TypeError:
                validate.fail(TypeError, "tg.function", _argument_name(i, args, kwargs),
                              "a tensor, an array or a hashable Python value (a number, a "
                              "string, a tuple)", a)
            key.append(("value", _value_key(a)))
    return tuple(key), tensors


def variables_key(a):
    """For a Variable argument, or a list or tuple of them (a model's weights): a key
    telling them apart by identity; None for anything else.

    As in TensorFlow 2, a Variable passed to a traced function stays that Variable: the
    body reads it as it reads one it closes over (a capture, fed its current value at
    each call), and can assign it (``opt.apply_gradients`` in a train step). A
    placeholder would stand for its value only, and could not be assigned."""
    if isinstance(a, Variable):
        return a.id
    if isinstance(a, (list, tuple)) and a and all(isinstance(v, Variable) for v in a):
        return (type(a), tuple(v.id for v in a))
    return None


def _argument_name(i, args, kwargs):
    return f"argument {i}" if i < len(args) else sorted(kwargs)[i - len(args)]


def _value_key(value):
    """A Python value as a cache key that tells types apart, also inside tuples."""
    if isinstance(value, tuple):
        return (type(value), tuple(_value_key(v) for v in value))
    if isinstance(value, frozenset):
        return (type(value), frozenset(_value_key(v) for v in value))
    return (type(value), value)
