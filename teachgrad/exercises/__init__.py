"""Exercises: write a derivative rule, get told whether it is right and, if not, why.

    import teachgrad as tg

    def sin_vjp(g, ans, x):
        return g * tg.cos(x)

    tg.exercises.check_vjp(tg.sin, sin_vjp, [0.3, 1.2, -2.0])
    tg.exercises.get("multiply").check_vjp(my_x_rule, my_y_rule)

``check_vjp`` / ``check_jvp`` take any function of tensors; ``get(name)`` gives
one of the lessons' ready-made exercises (``names()`` lists them).

The lessons' check cells use ``answer(name)`` to fetch what the student wrote
and ``check_prediction`` to compare a prediction with what the engine did; both
raise ``NotYet`` with a message that teaches.
"""
from .answers import NotWritten, answer, check_prediction, check_value
from .catalogue import Exercise, get, names
from .check import check_jvp, check_vjp
from .feedback import VERDICTS, Feedback, NotYet

__all__ = ["Exercise", "Feedback", "NotWritten", "NotYet", "VERDICTS", "answer", "check_jvp",
           "check_prediction", "check_value", "check_vjp", "get", "names"]
