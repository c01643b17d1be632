"""What watches ops: the recorder interface, and how an op's news reaches recorders.

A recorder is anything on ``teachgrad.state``'s recorder stack: a ``GradientTape``
(reverse mode), a ``ForwardAccumulator`` (forward mode), the variable watcher of
``custom_gradient``, a ``tg.debug`` check. Each one matches ``Recorder``: the
interpreters (``teachgrad.ops.core.apply``) hand it every ``Node`` of the context it
was entered in, and graphs and loop bodies tell it what they read and capture.
"""
from typing import Protocol, runtime_checkable

from ...state import per_thread

#: The ``graph`` of a recorder that sees ops in every context (debug checks, watchers).
ANY_GRAPH = "any graph"


@runtime_checkable
class Recorder(Protocol):
    """The interface every recorder has."""

    #: The graph it was entered in: it sees that graph's nodes (None: eager ops;
    #: ``ANY_GRAPH``: every context).
    graph: object
    #: Does it take derivatives (a tape, an accumulator)? Then the derivative
    #: computations of recorders entered after it are seen by it (nested derivatives).
    differentiates: bool
    #: Its place on the stack (``RecordingState.next_entry``): the order of entry.
    entry: int

    def record(self, node):
        """An op ran (eager) or was added to the graph it watches: ``node``."""

    def read_variable(self, variable, tensor):
        """An op read Variable ``variable`` through ``tensor``."""

    def capture(self, outer, inner):
        """A loop body or branch captured ``outer`` as ``inner``: for it, the same."""

    def output_added(self, node, tensor):
        """A While or If ``node`` gained the output ``tensor`` (building a gradient)."""


def hand_to_recorders(node, graph):
    """Give ``node`` (made in ``graph``, None when eager) to each recorder that watches
    that context. Tapes see it before the accumulators entered after them compute
    tangents from it."""
    now = per_thread.state
    if now.control_context is not None:
        node.context = now.control_context
    for recorder in now.recorders:
        if recorder.graph is graph or recorder.graph is ANY_GRAPH:
            recorder.record(node)


def note_variable_read(variable, tensor, graph=None):
    """Tell the recorders of ``graph``'s context that an op read ``variable`` through
    ``tensor`` (its snapshot eagerly, its read node in a graph)."""
    for recorder in per_thread.state.recorders:
        if recorder.graph is graph or recorder.graph is ANY_GRAPH:
            recorder.read_variable(variable, tensor)


def note_capture(outer, inner, graph):
    """Tell the recorders of ``graph`` (a loop body or branch being built) that it
    captured ``outer``, a tensor of an enclosing graph, as ``inner``: for them
    ``inner`` is ``outer`` (TensorFlow records a capture as an identity)."""
    for recorder in per_thread.state.recorders:
        if recorder.graph is graph:
            recorder.capture(outer, inner)


def note_new_output(node, tensor, graph):
    """Tell the recorders of ``graph`` that ``node`` (a While or If) gained the output
    ``tensor`` while a gradient was built: a tape that recorded the node must know
    who made it, or a gradient of that gradient would stop there."""
    for recorder in per_thread.state.recorders:
        if recorder.graph is graph:
            recorder.output_added(node, tensor)
