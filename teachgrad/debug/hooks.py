"""What every ``tg.debug`` check shares: switching a check on, and where ops came from.

A check is a recorder (see ``teachgrad.state``) that sees ops in every
context. While it is on the recorder stack,

* the interpreters call ``check.record(node)``: ``ran(node)`` after an eager op has
  computed its outputs, ``built(node)`` when an op is added to a graph,
* a ``Session`` calls ``check.ran_in_graph(node, inputs, outputs)`` with the
  arrays of each graph node it runs.

When no check is on none of this happens: the cost of a check that is off
is nothing beyond the test every op makes for recorders. A check also notes, on each node, the line of user
code that made it (``source_of(node)``) and, for an op made by a VJP rule
during a backward pass, the forward node whose rule it was (``node.grad_of``).
"""
import contextlib
import linecache
import os
import sys
import sysconfig
from dataclasses import dataclass
from typing import Optional

from ..ops.core.recorder import ANY_GRAPH
from ..state import state

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Frames in Python's own library and installed packages are never "user code".
_LIBRARY_DIRS = tuple(sorted({sysconfig.get_paths()[k] + os.sep for k in ("stdlib", "purelib",
                                                                          "platlib")}))


@dataclass(frozen=True)
class SourceLine:
    """A line of user code: the first frame outside teachgrad when an op was made,
    and, when that line is inside a function of yours, the line that called it."""
    filename: str
    lineno: int
    function: str
    caller: Optional["SourceLine"] = None

    @property
    def code(self):
        """The text of the line (empty when the file cannot be read)."""
        return linecache.getline(self.filename, self.lineno).strip()

    def __str__(self):
        where = f"{self.filename}:{self.lineno} in {self.function}"
        text = f"{where}: {self.code}" if self.code else where
        return f"{text} (called from {self.caller})" if self.caller is not None else text


def _outside(frame, directories):
    while frame is not None and frame.f_code.co_filename.startswith(directories):
        frame = frame.f_back
    return frame


def capture_source():
    """Where user code is now: the innermost frame whose file is not part of teachgrad
    (and the user frame that called it, unless it is a module's top level)."""
    frame = _outside(sys._getframe(1), _PACKAGE_DIR)
    if frame is None:
        return None
    caller = None
    if frame.f_code.co_name != "<module>":
        outer = _outside(frame.f_back, (_PACKAGE_DIR,) + _LIBRARY_DIRS)
        if outer is not None:
            caller = SourceLine(outer.f_code.co_filename, outer.f_lineno, outer.f_code.co_name)
    return SourceLine(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name, caller)


def source_of(node):
    """The ``SourceLine`` where ``node``'s op was made, if a tg.debug check was on then."""
    return getattr(node, "source", None)


def describe(node):
    """``name (op)``, and where it was made when known: one line for messages."""
    text = f"{node.name} ({node.op.name})"
    source = source_of(node)
    return f"{text}, made at {source}" if source is not None else text


def note(node):
    """Record on ``node`` where it was made and, in a backward pass, for which forward node."""
    if getattr(node, "source", None) is None:
        node.source = capture_source()
    if node.grad_of is None and state.gradient_of is not None:
        node.grad_of = state.gradient_of


class Check:
    """Base of the tg.debug checks. Subclasses override ``check_eager`` and
    ``check_graph_run``; this class keeps the notes on each node."""

    graph = ANY_GRAPH       # a recorder that sees ops in every context
    differentiates = False
    checks_ops = True
    entry = -1

    def record(self, node):
        if state.graph is not None:   # the node was added to the graph being built
            self.built(node)
        else:
            self.ran(node)

    def read_variable(self, variable, tensor):
        """Checks look at ops, not at reads."""

    def capture(self, outer, inner):
        """Nor at captures."""

    def output_added(self, node, tensor):
        """Nor at outputs added later."""

    def ran(self, node):
        note(node)
        self.check_eager(node)

    def built(self, node):
        note(node)

    def ran_in_graph(self, node, inputs, outputs):
        self.check_graph_run(node, inputs, outputs)

    def check_eager(self, node):
        """``node`` has just run eagerly: its inputs and outputs hold values."""

    def check_graph_run(self, node, inputs, outputs):
        """A Session has just run graph ``node`` on the arrays ``inputs``."""


@contextlib.contextmanager
def installed(check):
    """Put ``check`` on the recorder stack for the duration of the block."""
    check.entry = state.next_entry()
    state.push(check)
    try:
        yield check
    finally:
        state.remove(check)


class SourceRecorder(Check):
    """The check that only takes notes: where each op was made."""


@contextlib.contextmanager
def record_sources():
    """Note the user source line of every op made in the block.

    ``tg.explain_gradient`` and the visualizers then show where each op came
    from. (``check_numerics`` and ``verify_gradients`` take the same notes.)
    """
    with installed(SourceRecorder()):
        yield
