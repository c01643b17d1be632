"""What goes into a rule check and what comes out of a student's rule, made sure of.

``as_inputs`` turns the point a check is asked about into read-only float64
arrays, refusing what would make every comparison meaningless: None, strings,
NaN or infinity, an empty array (a rule checked at no entry at all passes). And
``result_array`` turns whatever a student's rule returned into an array of
numbers, or into a ``Feedback`` that says what it returned instead: a string, a
tuple of several values, a list of strings, a dict...
"""
import inspect

import numpy as np

from .. import backend, validate
from ..ops import IndexedSlices
from ..tensor import Tensor
from .feedback import Feedback
from .guard import read_only


def arity(f, default):
    """How many tensors ``f`` takes: its required positional parameters, when it says."""
    try:
        params = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return default
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return default
    required = [p for p in params if p.default is p.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(required) or default


def as_inputs(inputs, count, where):
    """One read-only float64 array per input. With one rule, ``inputs`` is that input (or
    a one-element list holding it); with several, a list of them."""
    def is_array_like(x):
        return isinstance(x, (list, tuple, np.ndarray, Tensor))
    if count == 1:
        items = [inputs[0]] if isinstance(inputs, (list, tuple)) and len(inputs) == 1 \
            and is_array_like(inputs[0]) else [inputs]
    elif isinstance(inputs, (list, tuple)) and len(inputs) == count:
        items = list(inputs)
    else:
        validate.fail(ValueError, where, "inputs", f"a list of {count} inputs (one per rule: "
                      f"{count} rules)", inputs)
    arrays = []
    for item in items:
        array = backend.to_numpy(validate.tensor_like(item, "inputs", where))
        if array.size == 0:
            validate.fail(ValueError, where, "inputs", "non-empty arrays (a rule checked at "
                          "no entry at all would pass whatever it returned)", item)
        if array.dtype.kind == "b" or not np.isfinite(array.astype(np.float64)).all():
            validate.fail(ValueError, where, "inputs", "finite numbers (a point to check the "
                          "rule at)", item, "NaN and infinity compare as nothing.")
        arrays.append(backend.xp.asarray(read_only(array.astype(np.float64))))
    return arrays


def dense(value):
    if isinstance(value, IndexedSlices):
        value = value.to_dense()
    return value


def described(value):
    """``value`` in a few words: its type and a short repr (``a float (3.0)``)."""
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    kind = type(value).__name__
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} ({text})"


def result_array(got, i, what):
    """``(float64 array, None)`` for a rule's result, or ``(None, Feedback)`` saying what
    it returned instead of a tensor. ``what`` names the result ("its cotangent")."""
    got = dense(got)
    if isinstance(got, (tuple, list)) and len(got) > 1 and any(
            v is None or isinstance(v, Tensor) for v in got):
        return None, Feedback("wrong_type", f"the rule for input {i} returned {len(got)} "
                              f"values (a {type(got).__name__}), but a rule returns one "
                              f"tensor: {what}. Each input has a rule of its own.", i)
    value = getattr(got, "value", got)
    numbers = not isinstance(got, (str, bytes, bool, dict, set)) and value is not None
    if numbers:
        try:
            array = np.asarray(backend.to_numpy(value))
            numbers = array.dtype.kind in "iuf"
        except Exception:       # noqa: BLE001 -- ragged lists, objects numpy refuses
            numbers = False
    if not numbers:
        return None, Feedback("wrong_type", f"the rule for input {i} returned "
                              f"{described(got)}, not a tensor of numbers. A rule returns "
                              f"one tensor: {what}, computed with teachgrad ops (tg.cos(x), "
                              f"g * ...).", i)
    return array.astype(np.float64), None
