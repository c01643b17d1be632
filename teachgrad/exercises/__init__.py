"""Exercises: write a derivative rule, get told whether it is right and, if not, why.

    import teachgrad as tg

    def sin_vjp(g, ans, x):
        return g * tg.cos(x)

    tg.exercises.check_vjp(tg.sin, sin_vjp, [0.3, 1.2, -2.0])
    tg.exercises.get("multiply").check_vjp(my_x_rule, my_y_rule)

``check_vjp`` / ``check_jvp`` take any function of tensors; ``get(name)`` gives
one of the lessons' ready-made exercises (``names()`` lists them).
"""
from .catalogue import Exercise, get, names
from .check import check_jvp, check_vjp
from .feedback import VERDICTS, Feedback

__all__ = ["Exercise", "Feedback", "VERDICTS", "check_jvp", "check_vjp", "get", "names"]
