"""A stub reached from a later cell says which exercise to write first, in one line.

In the student edition an exercise's function is a stub until it is written: calling it
raises ``NotImplementedError``. A later cell that runs it through teachgrad (lesson 12's
``run_rnn``, through ``tg.scan``; a training loop) would show a long traceback through
teachgrad's frames. ``explain_stubs()`` (run when ``tg.exercises`` is imported in an
IPython kernel) asks IPython to show, for a ``NotImplementedError`` raised by the function
of a lesson exercise (one with a contract), one line instead:

    NotYet: Not yet: write `rnn_step` in exercise 1 first: it still raises
    NotImplementedError, and this cell runs it.

Any other error, and a stub's own cell, show as they did.
"""
import sys
import traceback

from .calls import not_written
from .contracts import registered
from .feedback import NotYet

_INSTALLED = "_teachgrad_explains_stubs"


def stub_of(error):
    """``(name, number)`` of the lesson exercise whose function raised ``error`` (a
    NotImplementedError from its stub), or None."""
    if not isinstance(error, NotImplementedError) or error.__traceback__ is None:
        return None
    frames = traceback.extract_tb(error.__traceback__)
    found = registered().get(frames[-1].name) if frames else None
    return None if found is None else (found.name, found.number)


def explain_stubs(shell=None):
    """Show a lesson exercise's stub, reached from a later cell, as one ``NotYet`` line in
    IPython ``shell`` (the running one by default). Returns whether a shell was found."""
    if shell is None:
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return False
    if getattr(shell, _INSTALLED, False):
        return True

    def handler(shell, etype, value, tb, tb_offset=None):
        found = stub_of(value)
        if found is None:
            return shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        told = NotYet(not_written(*found))
        return shell.showtraceback((NotYet, told, None))
    shell.set_custom_exc((NotImplementedError,), handler)
    setattr(shell, _INSTALLED, True)
    return True
