"""What a lesson answer is, made sure of before its values are checked: the contract's
``returns`` (``contracts``) says which kind of thing the answer is, or a function answer
returns, and a check cell that fetches it with ``answer(name)`` gets it only when it is.

    as_contract_says(contract, value, lesson)   # the value, or a function called safely

A function answer comes back as a function that calls the student's through
``calls.run_student`` (time budget, capped printing, inputs watched for changes, named
APIs forbidden, a stub said in words) and then checks what came back: None, a string, a
list or a numpy array where a teachgrad tensor is asked for is said in words, never left
to fail deep in the check with a raw TypeError.
"""
import functools
import math
import numbers

import numpy as np

from ..tensor import Tensor
from .calls import run_student
from .feedback import NotYet
from .student import described

RETURNS = {
    "number": "a number",
    "tensor": "a teachgrad tensor",
    "graph tensor": "a tensor of the graph",
    "dict": "a dict",
    "list": "a list",
    "set": "a set",
}


def as_contract_says(contract, value, lesson):
    """``value`` (the student's answer to ``contract``'s exercise) as the check may use it;
    ``NotYet`` saying what it is instead, when it is not what the contract says."""
    if contract.kind == "function":
        if not callable(value):
            raise NotYet(f"Not yet: `{contract.name}` is {described(value)}, not a function. "
                         f"The exercise asks for {contract.expect}.")
        return _called(contract, value, lesson)
    made_sure(value, contract, f"`{contract.name}`")
    return value


def made_sure(value, contract, about):
    """``NotYet`` unless ``value`` is the kind ``contract.returns`` names (and, for a
    prediction with ``words``, made of them)."""
    kind = contract.returns
    if kind is None:
        return
    if kind not in RETURNS:
        raise ValueError(f"A contract's returns is one of {sorted(RETURNS)}, not {kind!r}.")
    if value is None:
        raise NotYet(f"Not yet: {about} is None: a function without `return`, or a tape's "
                     f"gradient with no path from its source (is the source watched, on a "
                     f"tape that is recording?). The exercise asks for {contract.expect}.")
    if not _is(value, kind):
        text = " (text: a number in quotes is a string; give the number itself)" \
            if kind == "number" and isinstance(value, str) else ""
        raise NotYet(f"Not yet: {about} is {described(value)}, not {RETURNS[kind]}{text}. The "
                     f"exercise asks for {contract.expect}.")
    if kind == "number" and not math.isfinite(float(np.asarray(_plain(value)))):
        raise NotYet(f"Not yet: {about} is {float(np.asarray(_plain(value)))}, not a number "
                     f"to compare: nan or inf comes from 0/0, inf - inf, or a log of 0.")
    if contract.words:
        _of_words(value, contract, about)


def _is(value, kind):
    if kind == "number":
        value = _plain(value)
        return isinstance(value, numbers.Real) and not isinstance(value, bool) or \
            (isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf")
    if kind == "tensor":
        return isinstance(value, Tensor) and value.value is not None
    if kind == "graph tensor":
        return isinstance(value, Tensor)
    if kind == "dict":
        return isinstance(value, dict)
    if kind == "list":
        return isinstance(value, (list, tuple))
    return isinstance(value, (set, frozenset, list, tuple))


def _plain(value):
    if isinstance(value, Tensor) and value.value is not None:
        return np.asarray(value.numpy())
    return value.item() if isinstance(value, np.generic) else value


def _of_words(value, contract, about):
    members = list(value.values()) if isinstance(value, dict) else \
        sorted(value, key=repr) if isinstance(value, (set, frozenset, list, tuple)) else [value]
    words = contract.words
    allowed = ", ".join(f'"{w}"' for w in words[:-1]) + f' or "{words[-1]}"'
    for member in members:
        if not isinstance(member, str) or member not in words:
            shown = repr(member) if len(repr(member)) <= 40 else repr(member)[:37] + "..."
            raise NotYet(f"Not yet: {shown} in {about} is not one of the words this exercise "
                         f"uses: write {allowed}, spelled as here.")


def _called(contract, fn, lesson):
    """``fn`` as the check calls it: through ``run_student``, what it returns made sure of."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        out = run_student(contract, fn, args, kwargs, lesson, contract.forbid)
        made_sure(out, contract, f"what `{contract.name}` returned")
        return out
    return call
