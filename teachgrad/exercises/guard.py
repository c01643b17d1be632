"""Running a student's code so that it cannot hang a check, flood the notebook, or
change what the check compares against.

A check calls code a student wrote: a rule, a whole backward pass. That code may
loop forever, print a million lines, or write into the arrays it was handed. So
every call of student code goes through ``student_code``:

    with student_code("your rule for input 0", "rule"):
        result = rule(g, ans, x)

* **Time.** After ``LIMITS`` seconds the block is stopped with ``Stopped`` (a
  ``BaseException``, so that a student's own ``except Exception:`` cannot swallow
  it) and the check explains it; the kernel lives on. In the main thread of Linux
  and macOS (where a notebook runs its cells) this uses ``SIGALRM``. Where there is
  no ``SIGALRM`` (Windows, Pyodide and JupyterLite) or in another thread, a trace
  function (``sys.settrace``) looks at the clock at each line the student's code
  runs: slower, but it needs neither signals nor threads. A backward pass may
  also call ``call_rule`` only so often (``protocol.steps``).
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


def _alarm_available():
    """Whether ``SIGALRM`` can stop the block: the platform has it, and this is the
    main thread (the only one Python delivers signals to)."""
    return all(hasattr(signal, name) for name in ("setitimer", "getitimer", "SIGALRM")) and \
        threading.current_thread() is threading.main_thread()


def _too_long(what, seconds):
    return Stopped(f"{what} ran for more than {seconds:g} seconds, so the check stopped it. "
                   f"A loop whose condition never changes (a `while` that never takes "
                   f"anything off its queue, or never counts down), or a function that "
                   f"calls itself without end?")


@contextlib.contextmanager
def time_limit(seconds, what):
    """Stop the block with ``Stopped`` once it has run ``seconds``. An alarm set by
    whoever called the check (a test's own time limit) still goes off when it is due."""
    if seconds is None:
        yield
    elif _alarm_available():
        with _alarm_limit(seconds, what):
            yield
    else:
        with _traced_limit(seconds, what):
            yield


@contextlib.contextmanager
def _alarm_limit(seconds, what):
    start = time.monotonic()
    outer_handler = signal.getsignal(signal.SIGALRM)
    outer_left, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    outer_due = start + outer_left if outer_left else None

    def on_alarm(signum, frame):
        if outer_due is not None and time.monotonic() >= outer_due - 1e-3 and \
                callable(outer_handler):
            return outer_handler(signum, frame)
        raise _too_long(what, seconds)
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


@contextlib.contextmanager
def _traced_limit(seconds, what):
    """The limit without signals: a trace function checks the clock at every line and
    call (of every frame this thread runs), and raises ``Stopped`` in the student's
    frame once due. Inside another traced limit, the earlier of the two is kept (the
    outer tracer carries its own as ``.due``). Code stuck in one long C call (a huge
    numpy product) is stopped when it returns."""
    outer = sys.gettrace()
    due = (time.monotonic() + seconds, _too_long(what, seconds))
    due = min(due, getattr(outer, "due", due), key=lambda entry: entry[0])

    def tracer(frame, event, arg):
        if event in ("call", "line") and time.monotonic() >= due[0]:
            raise due[1]
        return tracer
    tracer.due = due
    block = _block_frame()    # the frame holding the ``with``: running already, so
    outer_local = block.f_trace                           # settrace alone skips it
    sys.settrace(tracer)
    block.f_trace = tracer
    try:
        yield
    finally:
        sys.settrace(outer)
        block.f_trace = outer_local


def _block_frame():
    """The first frame up the stack outside this module and contextlib."""
    frame = sys._getframe(1)
    while frame.f_back is not None and \
            frame.f_globals.get("__name__") in (__name__, "contextlib"):
        frame = frame.f_back
    return frame


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
