"""Running a student's code so that it cannot hang a check, flood the notebook, or
change what the check compares against.

A check calls code a student wrote: a rule, a whole backward pass. That code may
loop forever, print a million lines, or write into the arrays it was handed. So
every call of student code goes through ``student_code``:

    with student_code("your rule for input 0", "rule"):
        result = rule(g, ans, x)

* **Time.** After ``LIMITS`` seconds the block is stopped with ``Stopped`` (a
  ``BaseException``, so that a student's own ``except Exception:`` cannot swallow
  it) and the check explains it; the kernel lives on. This uses ``SIGALRM``, which
  Python offers on Linux and macOS, in the main thread (where a notebook runs its
  cells). Elsewhere there is no clock, and only the step budgets hold: a backward
  pass may call ``call_rule`` only so often (``protocol.steps``).
* **Output.** What the code prints is shown, up to ``PRINT_LIMIT`` characters;
  the rest is counted and said, not shown.
* **Inputs.** ``read_only(array)`` is a copy the code cannot write into: a rule
  that tries is told so, and the checker's own point stays as it was.
"""
import contextlib
import signal
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Limits:
    """Seconds student code may run: one rule call, a rule differentiated again (it is
    called many times), a backward pass on a small graph, and on the 10,000-deep chain;
    and a student's function fetched with ``answer`` (inside a check, the check's own
    limit comes first)."""
    rule: float = 10.0
    again: float = 60.0
    answer: float = 60.0        # a function fetched by answer(), called by a check cell
    engine: float = 10.0
    deep: float = 60.0


LIMITS = Limits()    # tests replace it with shorter ones (monkeypatch)
PRINT_LIMIT = 5_000     # characters of a student's printing shown per call


class Stopped(BaseException):
    """Student code stopped by a check: ``why`` says what ran out, ``steps`` whether it
    was a step budget (else the time)."""

    def __init__(self, why, steps=False):
        super().__init__(why)
        self.why, self.steps = why, steps


def read_only(array):
    """A copy of ``array`` that cannot be written into (numpy arrays; others as they are)."""
    copy = np.array(array, copy=True)
    copy.flags.writeable = False
    return copy


def _clock_available():
    return hasattr(signal, "setitimer") and \
        threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def time_limit(seconds, what):
    """Stop the block with ``Stopped`` once it has run ``seconds``. An alarm set by
    whoever called the check (a test's own time limit) still goes off when it is due."""
    if seconds is None or not _clock_available():
        yield
        return
    start = time.monotonic()
    outer_handler = signal.getsignal(signal.SIGALRM)
    outer_left, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    outer_due = start + outer_left if outer_left else None

    def on_alarm(signum, frame):
        if outer_due is not None and time.monotonic() >= outer_due - 1e-3 and \
                callable(outer_handler):
            return outer_handler(signum, frame)
        raise Stopped(f"{what} ran for more than {seconds:g} seconds, so the check stopped "
                      f"it. A loop whose condition never changes (a `while` that never takes "
                      f"anything off its queue, or never counts down), or a function that "
                      f"calls itself without end?")
    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer_left) if outer_left else seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer_handler if outer_handler is not None
                      else signal.SIG_DFL)
        if outer_due is not None:
            signal.setitimer(signal.ITIMER_REAL, max(outer_due - time.monotonic(), 1e-3),
                             outer_interval)


class _Capped:
    """A stream that passes on the first ``limit`` characters and counts the rest."""

    def __init__(self, stream, limit):
        self.stream, self.left, self.dropped = stream, limit, 0

    def write(self, text):
        text = str(text)
        shown, self.left = text[:max(self.left, 0)], self.left - len(text)
        self.dropped += len(text) - len(shown)
        if shown:
            self.stream.write(shown)
        return len(text)

    def flush(self):
        self.stream.flush()

    def __getattr__(self, name):        # isatty, encoding, ...: the real stream's
        return getattr(self.stream, name)


@contextlib.contextmanager
def capped_output(limit=None):
    """Show at most ``limit`` characters of what the block prints, then say how many
    more it printed."""
    stream = _Capped(sys.stdout, PRINT_LIMIT if limit is None else limit)
    try:
        with contextlib.redirect_stdout(stream):
            yield
    finally:
        if stream.dropped:
            print(f"\n... and {stream.dropped:,} more characters your code printed (not "
                  f"shown).")


@contextlib.contextmanager
def student_code(what, limit):
    """Run the block (a call of student code) under the time limit ``LIMITS.<limit>``
    ("rule", "again", "engine" or "deep") and with capped output."""
    with capped_output(), time_limit(getattr(LIMITS, limit), what):
        yield
