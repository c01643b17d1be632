"""Calling a student's answer the way its contract says: the one way every lesson check
calls student code.

    answer = Answer(contract, lesson_globals)
    h_t = answer.tensor(answer.call(fresh_params, fresh_h, fresh_x), "the new state",
                        shape=(5, 3))

``call`` runs the answer under the time budget with its printing capped (``guard``),
with the contract's named APIs forbidden (``forbid``), and afterwards compares every
array it was given with a copy made before: an answer that writes into an input (through
``.numpy()``, a shared array, ``Variable.assign``) is told so, and the input is put back.
What it raises is said in words; a stub says "not written yet", and a stub of an earlier
exercise that it reached says which exercise to write first. ``tensor`` turns what came
back into a float64 array, or says what it is instead (None, a string, a list, a numpy
array: a teachgrad tensor is asked for, so that the tape sees it).
"""
import contextlib
import inspect
import sys
import traceback

import numpy as np

from ..tensor import Tensor, Variable
from .feedback import NotYet
from .guard import Stopped, student_code
from .student import described


class NotWritten(NotYet, NotImplementedError):
    """A student's function that is still the stub: a NotYet that checkers which catch
    NotImplementedError (``check_vjp``) recognise too."""


class Recursed(NotYet, RecursionError):
    """A student's function that called itself without end: a NotYet that checkers which
    catch RecursionError (``check_backward``, which explains it) recognise too."""


class Answer:
    """A student's answer (``lesson[contract.name]``) and the contract it is checked by.

    ``forbid``: names of ``teachgrad`` functions the answer may not call (``"jacfwd"``):
    while it runs they stop it with a message that names them.
    """

    def __init__(self, contract, lesson, forbid=()):
        self.contract, self.lesson, self.forbid = contract, lesson, tuple(forbid)
        self.name = contract.name
        self.fn = lesson.get(self.name)
        if self.fn is None:
            raise NotYet(undefined(contract))
        if not callable(self.fn):
            raise NotYet(f"Not yet: `{self.name}` is {_a(self.fn)}, not a function. The "
                         f"exercise asks for {contract.expect}.")

    def call(self, *args, **kwargs):
        """``fn(*args, **kwargs)`` under the contract's guards; what it returned."""
        return run_student(self.contract, self.fn, args, kwargs, self.lesson, self.forbid)

    def tensor(self, got, about, shape=None):
        """``got`` as a float64 array, when it is a teachgrad tensor of ``shape``."""
        return tensor_result(self.contract, got, about, shape)


def given(lesson, *names):
    """The lesson's own ``names`` that a check uses (``NotYet`` if one is missing: run the
    lesson's cells above first)."""
    missing = [n for n in names if n not in lesson]
    if missing:
        raise NotYet(f"Not yet: this check uses {', '.join(missing)} from the lesson's cells "
                     f"above: run them first (Run All runs every cell in order).")
    return [lesson[n] for n in names]


def run_student(contract, fn, args, kwargs, lesson, forbid=(), what=None):
    """Call student code ``fn`` (the answer, or the rule it is) as ``Answer.call`` says."""
    what = what or f"`{contract.name}`"
    kept = _Inputs(args, kwargs, _parameters(fn, len(args)))
    try:
        with _forbidden(forbid, what), student_code(what, "answer"):
            out = fn(*args, **kwargs)
    except NotYet:
        raise
    except Stopped as stop:
        if not stop.why.startswith(what):
            raise           # an outer check's own limit: that check says it
        raise NotYet(f"Not yet: {stop.why}") from None
    except RecursionError:
        raise Recursed(f"Not yet: {what} called itself without end (or deeper than Python's "
                     f"stack allows).") from None
    except NotImplementedError as error:
        raise NotWritten(stub_message(contract, error, lesson)) from None
    except Exception as error:      # noqa: BLE001 -- said in words, with its line
        raise NotYet(f"Not yet: {what} raised {type(error).__name__}: "
                     f"{_sentence(error)} The exercise asks for "
                     f"{contract.expect}.") from error
    changed = kept.changed()
    if changed:
        kept.restore()
        raise NotYet(f"Not yet: {what} changed {changed} in place (through .numpy(), a "
                     f"shared array or assign). An answer must leave its inputs as they were, "
                     f"and compute new tensors from them.")
    return out


def undefined(contract):
    """The message for an answer that is not defined (or still None)."""
    return (f"Not yet: `{contract.name}` is not defined yet. The exercise asks for "
            f"{contract.expect}: write it in exercise {contract.number}'s cell (in place of "
            f"`raise NotImplementedError(...)`), run that cell, then this one again.")


def stub_message(contract, error, lesson):
    """What to say when a stub raised ``error`` (a NotImplementedError): the answer's own,
    or that of an earlier exercise (``contract.needs``) that the answer reached."""
    frames = traceback.extract_tb(error.__traceback__)
    names = [frame.name for frame in frames]
    for needed, number in contract.needs:
        if needed in names:
            return not_written(needed, number, contract)
    return (f"Not yet: `{contract.name}` is not written yet: it still raises "
            f"NotImplementedError. The exercise asks for {contract.expect}. "
            f"Replace that line with your code, run its cell, then run this one again.")


def not_written(name, number, contract=None):
    """The message for a stub of exercise ``number`` reached from a later cell (the check
    of ``contract``, when one is given)."""
    asks = f" The exercise asks for {contract.expect}, and its check runs `{name}`." \
        if contract is not None else ""
    return (f"Not yet: write `{name}` in exercise {number} first: it still raises "
            f"NotImplementedError, and this cell runs it.{asks}")


def run_needed(contract, lesson, *args):
    """Call each earlier answer the check runs (``contract.needs``) once on ``args``, so
    that a stub says which exercise to write first (before the check runs it deep inside
    a loop)."""
    for needed, number in contract.needs:
        fn = lesson.get(needed)
        if not callable(fn):
            raise NotYet(not_written(needed, number, contract))
        try:
            with student_code(f"`{needed}`", "answer"):
                fn(*args)
        except NotImplementedError:
            raise NotYet(not_written(needed, number, contract)) from None
        except (NotYet, Stopped):
            raise
        except Exception as error:      # noqa: BLE001
            raise NotYet(f"Not yet: `{needed}` (exercise {number}), which this check runs, "
                         f"raised {type(error).__name__}: {_sentence(error)} Get exercise "
                         f"{number} right first.") from error


def tensor_result(contract, got, about, shape=None, complex_values=False):
    """``got`` (what the answer returned) as a float64 array (complex128 with
    ``complex_values``), or ``NotYet`` saying what it is instead of a teachgrad tensor of
    ``shape``."""
    if got is None:
        raise NotYet(f"Not yet: {about} is None: `{contract.name}` gives nothing back (a "
                     f"function without `return`?). The exercise asks for "
                     f"{contract.expect}.")
    if not isinstance(got, Tensor):
        raise NotYet(f"Not yet: {about} is {_a(got)}, not a teachgrad tensor. Compute it "
                     f"with teachgrad operations (tg.vmap, @, +, tg.tanh, ...), so that a tape "
                     f"can follow it, and return the tensor itself.")
    array = np.asarray(got.numpy())
    if array.dtype.kind not in ("iufc" if complex_values else "iuf"):
        raise NotYet(f"Not yet: {about} holds {array.dtype} values, not numbers"
                     f"{' (nor complex numbers)' if complex_values else ''}.")
    if shape is not None and tuple(array.shape) != tuple(shape):
        raise NotYet(f"Not yet: {about} has shape {tuple(array.shape)}, but should have shape "
                     f"{tuple(shape)}.")
    return array.astype(np.complex128 if complex_values else np.float64)


def _parameters(fn, count):
    """The names of ``fn``'s first ``count`` parameters (``argument i`` where unknown)."""
    try:
        names = []
        for name, p in inspect.signature(fn).parameters.items():
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                break           # *args: the rest have no names of their own
            names.append(name)
    except (TypeError, ValueError):
        names = []
    return names[:count] if len(names) >= count else [f"argument {i}" for i in range(count)]


def _a(value):
    """``value`` in a few words; a numpy array by its shape, not its numbers."""
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {value.shape}"
    return described(value)


def _sentence(error):
    text = str(error).strip().split("\n")[0]
    text = text if len(text) <= 240 else text[:237] + "..."
    return text if text.endswith((".", "!", "?")) else text + "."


class _Inputs:
    """Copies of every array an answer is handed (inside lists and tuples too), to see
    whether it wrote into one, and to put them back."""

    def __init__(self, args, kwargs, names):
        self.kept = []
        self._keep(list(args) + list(kwargs.values()), names + list(kwargs))

    def _keep(self, values, names):
        for v, name in zip(values, names):
            if isinstance(v, Variable):
                self.kept.append((v, f"the Variable {v.name or name}",
                                  np.array(v.numpy(), copy=True)))
            elif isinstance(v, Tensor) and v.value is not None:
                self.kept.append((v, f"its input `{name}`", np.array(v.value, copy=True)))
            elif isinstance(v, np.ndarray):
                self.kept.append((v, f"its input `{name}`", v.copy()))
            elif isinstance(v, (list, tuple)):
                self._keep(v, [f"{name}[{i}]" for i in range(len(v))])

    def changed(self):
        for v, label, copy in self.kept:
            now = v.numpy() if isinstance(v, Tensor) else v
            if now.shape != copy.shape or not np.array_equal(now, copy, equal_nan=True):
                return label
        return None

    def restore(self):
        for v, _, copy in self.kept:
            if isinstance(v, Variable):
                v.assign(copy)
            else:
                array = v.value if isinstance(v, Tensor) else v
                if array.flags.writeable and array.shape == copy.shape:
                    array[...] = copy


@contextlib.contextmanager
def _forbidden(names, what):
    """While the block runs, ``tg.<name>`` for each of ``names`` stops it, saying so."""
    if not names:
        yield
        return
    teachgrad = sys.modules["teachgrad"]     # tg.<name>, as the student's code reads it
    kept = {name: getattr(teachgrad, name) for name in names if hasattr(teachgrad, name)}

    def refuse(name):
        def refused(*args, **kwargs):
            raise Stopped(f"{what} called tg.{name}, which does the exercise for you: build "
                          f"it from the pieces the exercise names.")
        return refused
    for name in kept:
        setattr(teachgrad, name, refuse(name))
    try:
        yield
    finally:
        for name, fn in kept.items():
            setattr(teachgrad, name, fn)
