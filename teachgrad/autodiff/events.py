"""What the backward engine reports, step by step, for the visualizers.

Each event is a frozen dataclass: plain data that a widget can replay and a
test can fold back into the gradients. The engine only builds them when an
observer is listening (``with tg.viz.record() as rec: ...``); otherwise the
cost is one ``if observer is not None`` per node.
"""
import contextlib
from dataclasses import dataclass, field
from typing import Any, Optional

from ..ops.core.recorder import ANY_GRAPH
from ..state import state


@dataclass(frozen=True)
class Start:
    """The backward pass begins: what is differentiated, and the initial queue."""
    targets: tuple
    sources: tuple
    pending: dict       # node -> how many of its consumers must hand it a gradient first
    queue: tuple        # nodes ready at once (their pending count is 0)
    target_grads: tuple = ()   # the cotangent each target is seeded with


@dataclass(frozen=True)
class Pop:
    """``node`` is taken from the front of the queue."""
    node: Any
    queue: tuple        # what is left in the queue


@dataclass(frozen=True)
class Aggregate:
    """The contributions to one output's gradient are summed."""
    node: Any           # the node whose output it is (None for a source with no producer)
    index: int
    contributions: tuple
    method: str         # "nop" (one contribution), "add_n", "tree", or "sparse"
    result: Any
    tensor: Any = None  # the tensor whose gradient this is


@dataclass(frozen=True)
class CallVJP:
    """The node's VJP rule turns output cotangents into input cotangents."""
    node: Any
    rule: str
    output_grads: tuple
    input_grads: tuple


@dataclass(frozen=True)
class Skip:
    """The node's rule is not called, and why."""
    node: Any
    reason: str         # "stop gradient", "no incoming gradient", "source"


@dataclass(frozen=True)
class Release:
    """One consumer of ``node`` is done: its pending count drops to ``count``."""
    node: Any
    count: int


@dataclass(frozen=True)
class Enqueue:
    """``node``'s pending count reached zero: all its gradients are in."""
    node: Any


@dataclass(frozen=True)
class Finish:
    """The backward pass is over: one gradient per source."""
    gradients: tuple


@dataclass(frozen=True)
class JVP:
    """Forward mode: an op's output tangents from its input tangents.

    ``method`` is "native" (the op's JVP rule) or "transpose" (its VJP rule
    transposed: ``aids`` are the vectors u of ones, ``backward`` is g(u) = J^T u,
    and the output tangents are the gradient of <g(u), t> with respect to u).
    """
    node: Any
    method: str
    input_tangents: tuple
    output_tangents: tuple
    aids: Optional[tuple]
    backward: Optional[tuple]


@dataclass(frozen=True)
class LoopIteration:
    """A while loop starts one more iteration: of the forward loop, or of the
    loop that runs the body's gradient backwards through the iterations.

    ``node`` is the While node in a graph, or for an eager loop on a tape the
    ``EagerLoop`` record that stands for it; ``iteration`` is the forward
    iteration concerned, counted from 0 (the backward loop visits them from
    the last to the first); ``loop_vars`` are the values that iteration
    starts from (empty where the backward pass has no such values to show).
    """
    node: Any
    direction: str      # "forward" or "backward"
    iteration: int
    loop_vars: tuple


@dataclass
class Trace:
    """The events of one backward pass, in order."""
    events: list = field(default_factory=list)

    def __call__(self, event):
        self.events.append(event)

    @property
    def start(self) -> Optional[Start]:
        """The ``Start`` event of a backward pass: what it differentiates, the pending
        counts, the first queue. None for a trace of forward mode (JVP events only)."""
        return next((e for e in self.events if isinstance(e, Start)), None)


class Recorder:
    """Collects one ``Trace`` per backward pass run while it is active.

    It is a recorder on the ordinary recorder stack (``teachgrad.ops.core.recorder``),
    entered by ``record()``: it sees ops in every context (``graph = ANY_GRAPH``) but
    keeps none of them, so ``record`` and the other notes are no-ops. What it listens
    to is backward passes: the engine reports to the innermost recorder whose
    ``hears_backward`` is True (``current_observer``). Being on the stack is also what
    tells the engine someone watches (``state.unseen()`` is False), so the rules then
    run on Tensors, which the events show.
    """

    graph = ANY_GRAPH
    differentiates = False
    hears_backward = True   # the engine reports its passes here (``current_observer``)

    def __init__(self):
        self.traces = []
        self.entry = -1   # its place on the recorder stack, set when ``record()`` enters

    def new_trace(self):
        trace = Trace()
        self.traces.append(trace)
        return trace

    # -- the recorder interface: it keeps no node (it listens to backward passes)
    def record(self, node):
        """An op ran: nothing to keep."""

    def read_variable(self, variable, tensor):
        """An op read a Variable: nothing to keep."""

    def capture(self, outer, inner):
        """A loop body or branch captured a tensor: nothing to keep."""

    def output_added(self, node, tensor):
        """A While or If node gained an output: nothing to keep."""


def current_observer() -> Optional[Trace]:
    """A fresh trace of the innermost ``record()`` block to report a backward pass to,
    or None when nobody records."""
    recorder = listener(state.recorders)
    return recorder.new_trace() if recorder is not None else None


def listener(recorders):
    """The innermost ``record()`` block among ``recorders`` (one that hears backward
    passes), or None."""
    for recorder in reversed(recorders):
        if getattr(recorder, "hears_backward", False):
            return recorder
    return None


@contextlib.contextmanager
def record():
    """Record what every backward pass inside the block does.

    >>> with tg.viz.record() as rec:
    ...     grads = tape.gradient(y, x)
    >>> rec.traces[0].events[0]
    Start(...)
    """
    recorder = Recorder()
    recorder.entry = state.next_entry()
    state.push(recorder)
    try:
        yield recorder
    finally:
        state.remove(recorder)
