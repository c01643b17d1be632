"""The bookkeeping behind the frames: the states, pending counts, queue and gradients that a
backward pass's events have built so far, each frame's read-only views of them, and the
words (labels) for nodes and tensors. ``backprop_fold._Folder`` adds one handler per event.
"""
from types import MappingProxyType

from ..autodiff import events
from .frame_types import DONE, NOT_REACHED, SKIPPED, WAITING, Frame, TensorGradient
from .labels import op_text
from .names import Names
from .values import join_words, node_label


class _FoldState:
    """The state the events have built so far; a subclass sets ``_handlers``, one per event."""

    def __init__(self, given, prefix, start=0):
        self.given, self.prefix, self.start = dict(given), prefix, start
        self.nodes, self.names, self.labels = [], {}, dict(given)
        self.namer = Names((), prefix=prefix, given=given, start=start)
        self.targets = self.sources = ()
        self.started = False
        self._states, self._tensor_states, self._pending = {}, {}, {}
        self._grads = {}
        self._views = {}          # which mappings changed since the last frame: none cached
        self._queue = self._first_queue = ()
        self._processing = None
        self._skipped = set()
        self._loop = None
        self._outputs = {}        # tensor id -> (producer, output index), for the labels

    # -- one event -> one frame ------------------------------------------------
    def fold(self, index, event):
        handler = self._handlers.get(type(event))
        if handler is None:
            raise TypeError(f"Event {index} is a {type(event).__name__}, which a backward pass "
                            f"does not report; expected one of "
                            f"{', '.join(t.__name__ for t in self._handlers)}.")
        if not self.started and type(event) not in (events.Start, events.LoopIteration):
            raise ValueError(f"Event {index} ({type(event).__name__}) comes before the Start "
                             "event: pass a whole trace from tg.viz.record().")
        sentence = handler(event)
        return Frame(index, event, type(event).__name__, sentence, getattr(event, "node", None),
                     self._view("states"), self._view("tensor_states"), self._view("pending"),
                     self._queue, self._processing, self._view("grads"), self._loop,
                     event.gradients if type(event) is events.Finish else None)

    def _view(self, name):
        # Frames share one read-only copy of a mapping until it changes again.
        view = self._views.get(name)
        if view is None:
            view = self._views[name] = MappingProxyType(dict(getattr(self, "_" + name)))
        return view

    def _changed(self, *names):
        for name in names:
            self._views.pop(name, None)


    # -- helpers -------------------------------------------------------------------
    def _finish_processing(self):
        node = self._processing
        if node is not None:
            self._states[node] = SKIPPED if node in self._skipped else DONE
            self._processing = None
            self._changed("states")

    def _receive(self, tensor, g):
        known = self._grads.get(tensor.id)
        contributions = (known.contributions if known is not None else ()) + (g,)
        self._grads[tensor.id] = TensorGradient(self._label(tensor), contributions)
        if tensor.id in self._tensor_states and self._tensor_states[tensor.id] == NOT_REACHED:
            self._tensor_states[tensor.id] = WAITING
        # A node whose output has a contribution is reached: it waits for the rest.
        producer = self._outputs.get(tensor.id)
        if producer is not None and self._states.get(producer[0]) == NOT_REACHED:
            self._states[producer[0]] = WAITING
            self._changed("states")

    def _source_summed(self, contributions):
        """The source whose contributions an ``Aggregate`` with no node sums.

        The event names no tensor, so it is found by identity: the source
        whose contributions so far are among the event's (the event may also
        hold a seed, when a source is itself a target)."""
        best, best_count = None, 0
        summed = {id(c) for c in contributions}
        for s in self.sources:
            known = self._grads.get(s.id)
            if known is None or known.total is not None:
                continue
            count = sum(id(c) in summed for c in known.contributions)
            if count == len(known.contributions) and count > best_count:
                best, best_count = s, count
        if best is None:
            raise ValueError("An Aggregate event sums contributions that no source received: "
                             "the trace's events do not come from one backward pass.")
        return best

    def _label(self, tensor):
        label = self.labels.get(tensor.id)
        if label is None:
            producer = self._outputs.get(tensor.id)
            if producer is not None and len(producer[0].outputs) == 1:
                label = self.labels[producer[0]]
            else:
                label = self.namer.tensor(tensor)
            self.labels[tensor.id] = label
        return label

    def _with_op(self, node):
        """``a (multiply)``: a node's name, and its op unless the name says it."""
        label = self.labels.get(node, node_label(node))
        if node in self.labels and not self.namer.says_op(node):
            return f"{label} ({op_text(node.op)})"
        return label

    def _tensors(self, tensors):
        return join_words([self._label(t) for t in tensors]) or "no target"

    def _words(self, nodes):
        return join_words([self.labels.get(n, node_label(n)) for n in nodes])
