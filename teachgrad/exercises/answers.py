"""Check cells: fetch a student's answer, and say what is wrong with it.

A lesson's exercise cell holds the solution between nbgrader's markers; the
student edition (``make student``) replaces it with ``raise NotImplementedError(...)``.
The check cell after it must then still say something useful, so it fetches the
answer with ``answer(name)`` and compares it with ``check_prediction``:

    predicted = tg.exercises.answer("predicted_counts")
    tg.exercises.check_prediction(predicted, actual, about="the pending counts",
                                  hint="count the uses of each node's output")

Both raise ``NotYet`` (an AssertionError, so a failed check fails the cell and
nbgrader's autograder gives it no points) with a message that says what was
expected and gives a hint, never the right answer.
"""
import functools
import inspect

import numpy as np

from .. import backend, validate
from .calls import NotWritten, Recursed
from .contracts import registered
from .differences import SHOWN, say_difference
from .feedback import Feedback, NotYet
from .guard import Stopped, student_code
from .kinds import as_contract_says


def answer(name, expect=None):
    """The value the student gave ``name`` in the cell above (looked up where it is called).

    ``expect`` says what the exercise asks for ("a dict from node name to pending
    count"); the messages repeat it. Raises ``NotYet`` when ``name`` is not defined
    yet. A function comes back wrapped, so that calling it while it is still a stub
    (it raises ``NotImplementedError``) or while it raises anything else raises
    ``NotYet`` saying so.

    When ``name`` and ``expect`` are a lesson exercise's answer and what it asks for (a
    course's own ``answer("left")`` is not lesson 5's), its contract (``contracts``) says
    more: a function answer is called as ``calls.run_student`` calls one (its inputs
    watched for changes, forbidden APIs refused), and what it returns, or what a
    prediction or value is, is made sure of (``kinds``) before the check compares it.
    """
    asks = f" The exercise asks for {expect}." if expect else ""
    frame = inspect.currentframe().f_back
    try:
        if name in frame.f_locals:
            value = frame.f_locals[name]
        elif name in frame.f_globals:
            value = frame.f_globals[name]
        else:
            raise NotYet(f"Not yet: `{name}` is not defined yet.{asks} Write it in the exercise "
                         f"cell above (in place of `raise NotImplementedError(...)`), run that "
                         f"cell, then run this one again.")
        lesson = dict(frame.f_globals)
    finally:
        del frame
    if value is None or value is Ellipsis:
        raise NotYet(f"Not yet: `{name}` is still empty ({value!r}).{asks} Give it your answer "
                     f"in the exercise cell above, run that cell, then run this one again.")
    contract = registered().get(name)
    if contract is not None and contract.kind != "rule" and expect == contract.expect:
        return as_contract_says(contract, value, lesson)     # its contract's guards
    if inspect.isfunction(value) or inspect.ismethod(value):
        return _guarded(name, value, asks)
    return value


def _students_numbers(value, about):
    """``value`` (what the student computed) as a float64 array; ``NotYet`` saying what it
    is instead when it is not numbers: None (a function that returns nothing), a string
    (even one that reads as a number), bools, rows of different lengths. Never NaN for a
    None."""
    if value is None or value is Ellipsis:
        raise NotYet(f"Not yet: {about} is {value!r}: the code that computes it gives nothing "
                     f"yet (a function without `return`?).")
    if isinstance(value, (list, tuple)):
        missing = [i for i, v in enumerate(value) if v is None]
        if missing:   # numpy would make NaN of it
            raise NotYet(f"Not yet: entry {missing[0]} of {about} is None: the code that "
                         f"computes it gives nothing there (a function without `return`?).")
        value = [v.numpy() if hasattr(v, "numpy") else v for v in value]   # a list of losses
    try:
        array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
        numbers = array.dtype.kind in "iuf"
    except Exception:       # noqa: BLE001 -- ragged rows, objects numpy refuses
        numbers = False
    if not numbers:
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        text = " (text: a number in quotes is a string; compute the number itself)" \
            if _has_text(value) else ""
        raise NotYet(f"Not yet: {about} should be a number (or an array of numbers), but it "
                     f"is {type(value).__name__} {shown}{text}.") from None
    return array.astype(np.float64)


def _has_text(value):
    if isinstance(value, (str, bytes)):
        return True
    return isinstance(value, (list, tuple)) and any(_has_text(v) for v in value)


def _guarded(name, fn, asks=""):
    """``fn`` called under a time limit (``guard``), with what it raises said in words."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            with student_code(f"`{name}`", "answer"):
                return fn(*args, **kwargs)
        except NotYet:
            raise               # checkers explain these better than a wrapper can
        except Stopped as stop:
            if not stop.why.startswith(f"`{name}` "):
                raise           # a check's own limit: the check says it
            raise NotYet(f"Not yet: {stop.why}{asks}") from None
        except RecursionError as error:
            raise Recursed(f"Not yet: `{name}` raised RecursionError: it calls itself without "
                           f"end (or deeper than Python's stack allows).{asks}") from error
        except NotImplementedError:
            raise NotWritten(f"Not yet: `{name}` is not written yet: it still raises "
                             f"NotImplementedError.{asks} Replace that line with your code, "
                             f"run its cell, then run this one again.") from None
        except Exception as error:
            raise NotYet(f"Not yet: `{name}` raised {type(error).__name__}: {error}"
                         f"{asks}") from error
    return call


def check_value(got, expected, about, hint=None, rtol=1e-6, atol=1e-9):
    """Compare a number (or array) the student computed with the right one.

    Unlike a prediction, a computed value may be shown beside the right one: the
    code that computes it is the exercise. A big array is not shown: what is off is
    said in words ("it is all zero", "rows 3-7 differ"). Returns ``Feedback("right", ...)``
    or raises ``NotYet``.
    """
    validate.text(about, "about", "tg.exercises.check_value")
    rtol = validate.number(rtol, "rtol", "tg.exercises.check_value", minimum=0)
    atol = validate.number(atol, "atol", "tg.exercises.check_value", minimum=0)
    expected_array = backend.to_numpy(validate.tensor_like(
        expected, "expected", "tg.exercises.check_value")).astype(np.float64)
    if not np.isfinite(expected_array).all():
        validate.fail(ValueError, "tg.exercises.check_value", "expected", "finite numbers",
                      expected, "A NaN is never equal to anything, so no answer could match.")
    got_array = _students_numbers(got, about)
    if got_array.shape != expected_array.shape:
        message = (f"{about} has shape {got_array.shape}, but should have shape "
                   f"{expected_array.shape}.")
    elif np.allclose(got_array, expected_array, rtol=rtol, atol=atol):
        return Feedback("right", f"{about} is right.")
    elif got_array.size > SHOWN:    # never a wall of numbers: what is off, in words
        message = f"{about} is not right: {say_difference(got_array, expected_array)}."
    else:
        message = (f"{about} came out as {_show(got_array)}, but should be "
                   f"{_show(expected_array)}.")
        if not np.isfinite(got_array).all():
            message += (" nan (not a number) or inf comes from 0/0, inf - inf, or a log or "
                        "square root of a number below 0: which step makes it?")
    if hint:
        message += f" Hint: {hint}"
    raise NotYet("Not yet: " + message)


def check_loss(losses, below, about="the training loss"):
    """Did a training run bring its loss below ``below``?

    ``losses`` is the loss after each step or epoch, in order. When it did not,
    raises ``NotYet`` saying what the curve shows: not finite (the steps blew up),
    rising (the steps go uphill, or overshoot), or falling too slowly; with a hint
    about the learning rate and the number of steps, never the value to use.
    """
    validate.text(about, "about", "tg.exercises.check_loss")
    below = validate.number(below, "below", "tg.exercises.check_loss")
    values = _students_numbers(losses, about).ravel()
    if values.size == 0:
        raise NotYet(f"Not yet: there are no values of {about}: record one per epoch.")
    if not np.isfinite(values).all():
        first = int(np.flatnonzero(~np.isfinite(values))[0])
        raise NotYet(f"Not yet: {about} became {values[first]} at epoch {first}: the steps "
                     f"blew up. Hint: a smaller learning rate keeps each step where the "
                     f"gradient still describes the loss.")
    if values[-1] < below:
        return Feedback("right", f"{about} fell from {values[0]:.4g} to {values[-1]:.4g}, "
                                 f"below {below:g}.")
    if values[-1] > values[0]:
        raise NotYet(f"Not yet: {about} rose from {values[0]:.4g} to {values[-1]:.4g}. Hint: "
                     f"each step must go against the gradient (subtract it), and not so far "
                     f"that it overshoots the valley: try a smaller learning rate.")
    raise NotYet(f"Not yet: {about} fell from {values[0]:.4g} to {values[-1]:.4g}, but not "
                 f"below {below:g}. Hint: it is still falling too slowly: a larger learning "
                 f"rate, or more epochs.")


def _show(array):
    return f"{float(array):.6g}" if array.ndim == 0 else np.array2string(array, precision=6)
