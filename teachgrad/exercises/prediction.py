"""``check_prediction``: a student's prediction of what the engine does, against what it did.

A prediction may be a number, a string, a set, a list or tuple, or a dict (a
``Counter`` too) of those; tensors and numpy values in it are compared as the
numbers (or lists) they hold. A wrong prediction is told which part is off, and
which way, never the right value.
"""
import collections.abc
import numbers

import numpy as np

from .. import validate
from .feedback import Feedback, NotYet


def check_prediction(predicted, actual, about, hint=None, hints=None, rtol=1e-6):
    """Compare a prediction with what really happened.

    Args:
      predicted: the student's prediction: a number, a string, a set, a list or
        tuple, or a dict (a ``Counter`` too) of those.
      actual: what the engine did, of the same kind.
      about: what was predicted, in words ("the pending count of each node").
      hint: said when the prediction is wrong.
      hints: for a dict or a set, ``{key: hint}``: said for each key (or member)
        the prediction gets wrong.
      rtol: relative tolerance for numbers.

    Returns:
      ``Feedback("right", ...)`` when they agree; otherwise raises ``NotYet``
      saying which part is off (and your value there), never the right value.
    """
    validate.text(about, "about", "tg.exercises.check_prediction")
    rtol = validate.number(rtol, "rtol", "tg.exercises.check_prediction", minimum=0)
    if hints is not None and not isinstance(hints, dict):
        validate.fail(TypeError, "tg.exercises.check_prediction", "hints", "a dict from a "
                      "key (or member) to its hint", hints)
    problems = _differences(_plain(predicted), _plain(actual), rtol, hints or {})
    if not problems:
        return Feedback("right", f"your prediction of {about} is what happened.")
    message = f"your prediction of {about} is not what happened: " + "; ".join(problems) + "."
    if hint:
        message += f" Hint: {hint}"
    raise NotYet("Not yet: " + message)


def _plain(value):
    """``value`` with tensors and numpy values made Python's own (a 0-d array a number,
    others nested lists), inside lists, tuples, dicts and sets too: what a prediction
    is compared as."""
    if hasattr(value, "id") and hasattr(value, "numpy"):
        value = value.numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value) if type(value) in (list, tuple) \
            else value
    if isinstance(value, dict):
        return type(value)({k: _plain(v) for k, v in value.items()}) \
            if type(value) is dict else value
    return value


def _same(a, b, rtol):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b
    if isinstance(a, numbers.Integral) and isinstance(b, numbers.Integral):
        return a == b               # counts are exact
    if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
        return abs(a - b) <= rtol * max(abs(a), abs(b)) + 1e-12
    return a == b


def _direction(a, b):
    if isinstance(a, numbers.Real) and isinstance(b, numbers.Real) and \
            not isinstance(a, bool) and not isinstance(b, bool):
        return " (too high)" if a > b else " (too low)"
    return ""


def _differences(predicted, actual, rtol, hints):
    if isinstance(actual, dict):
        if not isinstance(predicted, dict):
            return [f"give a dict (name: value), not {_a(predicted)}"]
        problems = []
        missing = [k for k in actual if k not in predicted and actual[k] != 0]
        if missing:
            problems.append(f"there is no entry for {', '.join(map(repr, missing))}")
        for key, value in predicted.items():
            if key not in actual:
                if value != 0:
                    problems.append(f"{key!r} is not one of them" + _why(key, hints))
            elif not _same(value, actual[key], rtol):
                problems.append(f"your value for {key!r}, {value!r}, is off"
                                + _direction(value, actual[key]) + _why(key, hints))
        return problems
    if isinstance(actual, (set, frozenset)):
        if not isinstance(predicted, (set, frozenset, list, tuple)):
            return [f"give a set, not {_a(predicted)}"]
        unhashable = [m for m in predicted if not isinstance(m, collections.abc.Hashable)]
        if unhashable:
            return [f"{unhashable[0]!r} cannot be a member of a set (a "
                    f"{type(unhashable[0]).__name__} can change, so a set cannot hold it): "
                    f"give each member as a name or a number"]
        predicted = set(predicted)
        problems = [f"{member!r} does not belong in it" + _why(member, hints)
                    for member in sorted(predicted - actual, key=repr)]
        left_out = len(actual - predicted)
        if left_out:
            problems.append(f"{left_out} member{'s are' if left_out > 1 else ' is'} missing")
        return problems
    if isinstance(actual, (list, tuple)):
        if not isinstance(predicted, (list, tuple)) or len(predicted) != len(actual):
            return [f"give a {type(actual).__name__} of {len(actual)} values"]
        return [f"entry {i} of your answer, {p!r}, is off" + _direction(p, a)
                for i, (p, a) in enumerate(zip(predicted, actual)) if not _same(p, a, rtol)]
    if not _same(predicted, actual, rtol):
        return [f"you said {predicted!r}" + _direction(predicted, actual)]
    return []


def _a(value):
    kind = type(value).__name__
    return ("an " if kind[0] in "aeiou" else "a ") + kind


def _why(key, hints):
    return f" ({hints[key]})" if key in hints else ""


def check_words(predicted, contract):
    """``NotYet`` unless ``predicted`` (or each value of it, for a dict) is one of the
    words ``contract.words`` allows: a typo is named, with the words to choose from,
    before the prediction is compared with what happened."""
    name, words = contract.name, contract.words
    allowed = ", ".join(f'"{w}"' for w in words[:-1]) + f' or "{words[-1]}"'
    if predicted is None or predicted is Ellipsis:
        raise NotYet(f"Not yet: `{name}` is still empty ({predicted!r}). The exercise asks "
                     f"for {contract.expect}.")
    values = predicted.items() if isinstance(predicted, dict) else [(None, predicted)]
    for key, value in values:
        if value not in words:
            where = "" if key is None else f" (for {key!r})"
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
            raise NotYet(f"Not yet: {shown}{where} is not one of the words this exercise "
                         f"uses: write {allowed}, spelled as here.")

