"""The bookkeeping behind the frames: the states, pending counts, queue and gradients that a
backward pass's events have built so far, each frame's read-only views of them, and the
words (labels) for nodes and tensors. ``backprop_fold.Folder`` holds one and gives it one
handler per event.
"""
from types import MappingProxyType

from ..autodiff import events
from .frame_types import DONE, NOT_REACHED, SKIPPED, WAITING, Frame, TensorGradient
from .labels import op_text
from .names import Names
from .values import join_words, node_label


class FoldState:
    """What the events of one backward pass have built so far, and the words for it.

    ``states`` (node -> NOT_REACHED, QUEUED, ...), ``tensor_states``, ``pending``
    (node -> count) and ``grads`` (tensor id -> TensorGradient) are what a Frame shows;
    ``queue``, ``processing`` and ``loop`` where the pass is. A handler that changes one
    of the four mappings calls ``changed`` with its name, so the next frame copies it."""

    def __init__(self, given, prefix, start=0):
        self.given, self.prefix, self.start = dict(given), prefix, start
        self.nodes, self.names, self.labels = [], {}, dict(given)
        self.namer = Names((), prefix=prefix, given=given, start=start)
        self.targets = self.sources = ()
        self.started = False
        self.states, self.tensor_states, self.pending = {}, {}, {}
        self.grads = {}
        self._views = {}          # which mappings changed since the last frame: none cached
        self.queue = self.first_queue = ()
        self.processing = None
        self.skipped = set()
        self.loop = None
        self.outputs = {}         # tensor id -> (producer, output index), for the labels

    def frame(self, index, event, sentence):
        """The Frame that event number ``index`` ends in, saying ``sentence``."""
        return Frame(index, event, type(event).__name__, sentence, getattr(event, "node", None),
                     self._view("states"), self._view("tensor_states"), self._view("pending"),
                     self.queue, self.processing, self._view("grads"), self.loop,
                     event.gradients if type(event) is events.Finish else None)

    def _view(self, name):
        # Frames share one read-only copy of a mapping until it changes again.
        view = self._views.get(name)
        if view is None:
            view = self._views[name] = MappingProxyType(dict(getattr(self, name)))
        return view

    def changed(self, *names):
        """The mappings ``names`` changed: the next frame shows a fresh copy of them."""
        for name in names:
            self._views.pop(name, None)

    # -- helpers -------------------------------------------------------------------
    def finish_processing(self):
        node = self.processing
        if node is not None:
            self.states[node] = SKIPPED if node in self.skipped else DONE
            self.processing = None
            self.changed("states")

    def receive(self, tensor, g):
        known = self.grads.get(tensor.id)
        contributions = (known.contributions if known is not None else ()) + (g,)
        self.grads[tensor.id] = TensorGradient(self.label(tensor), contributions)
        if tensor.id in self.tensor_states and self.tensor_states[tensor.id] == NOT_REACHED:
            self.tensor_states[tensor.id] = WAITING
        # A node whose output has a contribution is reached: it waits for the rest.
        producer = self.outputs.get(tensor.id)
        if producer is not None and self.states.get(producer[0]) == NOT_REACHED:
            self.states[producer[0]] = WAITING
            self.changed("states")

    def source_summed(self, contributions):
        """The source whose contributions an ``Aggregate`` with no node sums.

        The event names no tensor, so it is found by identity: the source
        whose contributions so far are among the event's (the event may also
        hold a seed, when a source is itself a target)."""
        best, best_count = None, 0
        summed = {id(c) for c in contributions}
        for s in self.sources:
            known = self.grads.get(s.id)
            if known is None or known.total is not None:
                continue
            count = sum(id(c) in summed for c in known.contributions)
            if count == len(known.contributions) and count > best_count:
                best, best_count = s, count
        if best is None:
            raise ValueError("An Aggregate event sums contributions that no source received: "
                             "the trace's events do not come from one backward pass.")
        return best

    def label(self, tensor):
        label = self.labels.get(tensor.id)
        if label is None:
            producer = self.outputs.get(tensor.id)
            if producer is not None and len(producer[0].outputs) == 1:
                label = self.labels[producer[0]]
            else:
                label = self.namer.tensor(tensor)
            self.labels[tensor.id] = label
        return label

    def with_op(self, node):
        """``a (multiply)``: a node's name, and its op unless the name says it."""
        label = self.labels.get(node, node_label(node))
        if node in self.labels and not self.namer.says_op(node):
            return f"{label} ({op_text(node.op)})"
        return label

    def tensors(self, tensors):
        return join_words([self.label(t) for t in tensors]) or "no target"

    def words(self, nodes):
        return join_words([self.labels.get(n, node_label(n)) for n in nodes])
