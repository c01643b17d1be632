"""The backward pass: one engine for the tape and for graphs.

Reverse mode visits the recorded ops from the targets back towards the
sources. An op may only run its VJP rule once *every* consumer of its outputs
has handed back its contribution, so the engine keeps, for each node, a
**pending count**: how many consumer edges between sources and targets have
not reported yet. A node whose count reaches zero joins a FIFO **queue**; the
loop pops a node, sums the contributions for each of its outputs, calls its
VJP rule (``call_vjp``, the one function between the engine and a rule), hands
each input its cotangent, and releases the producers of the inputs, enqueuing
those that become ready. A node's rule does not run without any output
cotangent, for a stop node, or for an op that has no derivative.

This is TensorFlow's ``_GradientsHelper``. A queue instead of recursion means
no Python recursion limit and a deterministic order that the BackpropStepper
replays event by event.

The engine needs very little of the graph it walks (``producer(tensor_id)``
gives the Node that made a tensor, or None; a Node has ``op``, ``inputs``,
``outputs``), so tape entries and graph operations both fit.
"""
import collections

from ..ops.core.apply import mode
from ..state import state
from . import events
from .aggregation import check_method
from .contributions import Contributions
from .pending import nodes_to_stop_at, pending_counts, skip_reason
from .rule_calls import call_vjp


def backward(targets, target_grads, sources, producer,
             aggregation_method=None, stop_tensors=(), observer=None, on_done=None,
             all_reached=False):
    """Gradients of ``targets`` (seeded with ``target_grads``) for each of ``sources``:
    a list with, per source, a Tensor, an IndexedSlices, or None (no path to it).

    ``on_done(node)``, if given, is called once a node is done (a one-shot tape lets go
    of it there); ``all_reached=True`` promises that every node the targets depend on
    depends on a source (see ``pending_counts``); ``observer`` hears each step as an event.
    """
    parents, pending = pending_counts(targets, sources, producer, all_reached=all_reached)
    stop_nodes = nodes_to_stop_at(sources, stop_tensors, producer, pending)
    arrays = _rules_take_arrays(observer)   # nothing records the rules: run them on arrays
    grads = Contributions(sources, check_method(aggregation_method), arrays)
    # Events are built only when someone listens: otherwise `report` is None, and each
    # step costs one test of it.
    report = Reporter(observer, stop_nodes, stop_tensors) if observer is not None else None
    for y, g in zip(targets, target_grads):
        grads.seed(y, g)
    queue = collections.deque(_ready(targets, producer, pending))
    if report: report.start(targets, sources, pending, queue, target_grads)

    with mode(arrays=arrays):
        while queue:
            node = queue.popleft()                              # Pop: no longer pending
            node_parents = parents.pop(node)
            del pending[node]
            if report: report.pop(node, queue)
            out_grads = grads.of_outputs(node, report)          # Aggregate each output's
            if out_grads is not None and node.op.differentiable and node not in stop_nodes:
                needed = grads.needed(node.inputs, node_parents)
                in_grads = call_vjp(node, out_grads, needed, arrays)   # CallVJP
                grads.add_each(node.inputs, in_grads)           # hand each input its ct
                if report: report.call_vjp(node, out_grads, in_grads)
            elif report:
                report.skip(node)                               # Skip
            if on_done is not None:
                on_done(node)
            for parent in node_parents:                         # Release: one less to wait
                if parent is not None:                          # for; Enqueue at zero
                    count = pending[parent] = pending[parent] - 1
                    if report: report.release(parent, count)
                    if count == 0:
                        queue.append(parent)
                        if report: report.enqueue(parent)
        results = [grads.result(s, report) for s in sources]
    if report: report.finish(results)
    return results


def _ready(targets, producer, pending):
    """The producers of the targets that wait for no other node: the first queue."""
    ready = []
    for y in targets:
        node = producer(y.id)
        if pending.get(node) == 0 and node not in ready:
            ready.append(node)
    return ready


def _rules_take_arrays(observer):
    """May this backward pass run its VJP rules on raw arrays (``state.arrays``)?

    Only when nothing would see the ops the rules make: no graph is being built (the
    rules add its gradient nodes), no recorder is on (a tape or accumulator recording
    them for a higher derivative, a tg.debug check, a watcher), and no observer hears
    the pass (the visualizers show each rule's Tensors). Then a rule's ops compute on
    arrays and make no Tensor or Node (``teachgrad.ops.core.on_arrays``), which is
    most of a rule's cost on small values: the same rules, at numpy's speed.
    """
    return observer is None and state.unseen()


class Reporter:
    """Turns each step of the backward pass into an event for ``observer``; made only
    when someone listens, so a pass nobody watches builds no event."""

    def __init__(self, observer, stop_nodes, stop_tensors):
        self.observer = observer
        self._stop_nodes = stop_nodes
        self._stop_ids = {t.id for t in stop_tensors}
        self._context = None   # the eager loop iteration the last popped node ran in

    def start(self, targets, sources, pending, queue, target_grads):
        self.observer(events.Start(tuple(targets), tuple(sources), dict(pending),
                                   tuple(queue), tuple(target_grads)))

    def pop(self, node, queue):
        if node.context is not self._context:   # entering another loop iteration
            self._context = node.context
            iteration = getattr(node.context, "iteration", None)
            if iteration is not None:
                self.observer(events.LoopIteration(node.context.loop, "backward",
                                                   iteration, ()))
        self.observer(events.Pop(node, tuple(queue)))

    def aggregate(self, node, index, contributions, how, total, tensor):
        self.observer(events.Aggregate(node, index, tuple(contributions), how, total,
                                       tensor))

    def call_vjp(self, node, out_grads, in_grads):
        self.observer(events.CallVJP(node, f"{node.op.name} VJP", tuple(out_grads),
                                     tuple(in_grads)))

    def skip(self, node):
        self.observer(events.Skip(node, skip_reason(node, self._stop_nodes, self._stop_ids)))

    def release(self, node, count):
        self.observer(events.Release(node, count))

    def enqueue(self, node):
        self.observer(events.Enqueue(node))

    def finish(self, results):
        self.observer(events.Finish(tuple(results)))
