"""Exercises: write a derivative rule (or predict what the engine does), get told whether
it is right and, if not, what is off, with a hint that does not give the answer away.

    import teachgrad as tg

    def sin_vjp(g, ans, x):
        return g * tg.cos(x)

    tg.exercises.check_vjp(tg.sin, sin_vjp, [0.3, 1.2, -2.0])
    tg.exercises.get("multiply").check(my_x_rule, my_y_rule)

``check_vjp`` / ``check_jvp`` take any function of tensors; ``check_backward``
takes a whole backward pass the student wrote over the engine's protocol
(``record``, ``call_rule``), and ``replay`` records its run (through ``Queue`` and
``Pending``) for a BackpropStepper beside teachgrad's (``Beside``). The registry holds
ready-made exercises: ``list()`` shows them with their tasks, ``get(name)`` gives
one, and ``register(...)`` adds a course's own.

The lessons' check cells use ``answer(name)`` to fetch what the student wrote,
``check_prediction`` to compare a prediction with what the engine did,
``check_value`` for a computed number and ``check_loss`` for a training run; they
raise ``NotYet`` with a message that teaches. A lesson exercise declares its contract once
(``contracts``: what the answer is, what the check calls it on, what it must not do), and
its check cell is ``check_exercise(name)``.
"""
from .answers import NotWritten, answer, check_loss, check_value
from .backward import BackwardFeedback, check_backward
from .protocol import Recorded, call_rule, record, watching_rules
from .replay import Beside, Pending, Queue, first_difference, replay
from .catalogue import Exercise, exercises, get, names, register, unregister
from .check import check_jvp, check_vjp
from .contracts import Contract, register_contract
from .lessons import check_exercise, contract, contracts
from .prediction import check_prediction
from .feedback import VERDICTS, Feedback, NotYet
from .stubs import explain_stubs

list = exercises   # noqa: A001 (tg.exercises.list(): the registered exercises and their tasks)

__all__ = ["BackwardFeedback", "Beside", "Contract", "Exercise", "Feedback", "NotWritten",
           "NotYet", "Pending", "Queue", "Recorded", "VERDICTS", "answer", "call_rule",
           "check_backward", "check_exercise", "check_jvp", "check_loss",
           "check_prediction", "check_value", "check_vjp", "contract", "contracts",
           "exercises", "explain_stubs", "first_difference", "get", "names", "record",
           "register", "register_contract", "replay", "unregister", "watching_rules"]
explain_stubs()   # in a kernel: a stub reached from a later cell says which exercise it is
# `list` stays out of __all__, so that `from teachgrad.exercises import *` keeps Python's list.
