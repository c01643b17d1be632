"""A ``tg.function``'s input signature: the key its traces are cached by.

Tensor arguments count by shape and dtype, Variables by identity (a Variable passed
in stays that Variable in the trace, so it can be assigned), other arguments by
value (a list or tuple by its items).
"""
from dataclasses import dataclass

import numpy as np

from .. import validate
from ..tensor import Tensor, Variable, to_array


@dataclass(frozen=True)
class TensorSpec:
    """The shape and dtype a ``tg.function`` argument must have, TensorFlow's
    ``tf.TensorSpec``: ``tg.TensorSpec((None, 2), tg.float64)`` takes any number of rows
    of two. A function given ``input_signature=[...]`` traces once, on placeholders of
    these shapes (None: a size it learns when the graph runs), and every call must fit."""

    shape: tuple
    dtype: object = np.dtype("float32")
    name: str = None

    def __post_init__(self):
        where = "tg.TensorSpec"
        validate.flags(where, name=self.name)
        object.__setattr__(self, "shape", validate.shape(self.shape, "shape", where,
                                                         unknown=True))
        dtype = validate.dtype(self.dtype, "dtype", where)
        if dtype is None:
            validate.fail(TypeError, where, "dtype", "a data type", self.dtype)
        object.__setattr__(self, "dtype", dtype)

    def fits(self, tensor):
        """Does ``tensor`` have this dtype, and a shape this one allows?"""
        shape = tensor.shape
        return tensor.dtype == self.dtype and shape is not None and \
            len(shape) == len(self.shape) and \
            all(s is None or s == d for s, d in zip(self.shape, shape))


def signature_key(specs, args, kwargs, where):
    """The cache key and tensors of a call of a function with an ``input_signature``:
    the specs' own shapes (so one trace serves every call), each argument checked."""
    if kwargs or len(args) != len(specs):
        raise TypeError(f"{where}: the input_signature has {len(specs)} TensorSpec(s), so "
                        f"the function takes exactly {len(specs)} positional tensor "
                        f"argument(s); got {len(args)} positional and {len(kwargs or ())} "
                        f"keyword argument(s).")
    tensors = []
    for k, (spec, a) in enumerate(zip(specs, args)):
        t = a if isinstance(a, Tensor) else Tensor(to_array(a, spec.dtype, f"argument {k}",
                                                             where))
        if not spec.fits(t):
            raise ValueError(f"{where}: Python inputs incompatible with input_signature: "
                             f"argument {k} has shape {t.shape} and dtype {t.dtype}, which "
                             f"does not fit {spec}.")
        tensors.append(t)
    return tuple((spec.shape, spec.dtype) for spec in specs), tensors


def checked_signature(input_signature, where):
    """``input_signature`` as a tuple of TensorSpecs (or None)."""
    if input_signature is None:
        return None
    if not isinstance(input_signature, (list, tuple)) or not all(
            isinstance(s, TensorSpec) for s in input_signature):
        validate.fail(TypeError, where, "input_signature", "a list of tg.TensorSpec (one "
                      "per positional argument), or None", input_signature)
    return tuple(input_signature)


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
