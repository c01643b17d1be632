"""What a GradientTape records, and how it can be read.

A ``TapeRecord`` is the memory of one ``tg.GradientTape`` (``teachgrad/autodiff/tape.py``
holds the tape itself: the ``with`` block, ``watch`` and ``gradient``, which runs the
backward engine over this record). The record keeps the *watched* tensors. When an op
runs (``record``) it keeps the op's Node if one of the inputs is watched, and then
watches the op's floating-point outputs: so it holds exactly the ops that lead from the
watched tensors to whatever is computed from them, each reachable from its output's id
(``producer``). Trainable Variables are watched when an op reads them
(``read_variable``).

The reading methods are what ``tg.viz`` draws and ``tg.debug.explain_gradient``
explains: the recorded nodes in order, the ops dropped because they made integers,
when each tensor was made relative to the tape's recording spans.
"""
import itertools

from .. import dtypes
from ..tensor import Variable

RELEASED = ("A non-persistent GradientTape can only be used to compute one set of "
             "gradients (or jacobians). Create it with tg.GradientTape(persistent=True) "
             "to call gradient() more than once.")


class TapeRecord:
    """The record of a GradientTape: the watched tensors and the ops that read them.

    ``producers`` maps a tensor id to the Node that made it (None once the record is
    released); ``numbers`` numbers the nodes it records (a nest of tapes shares one)."""

    def __init__(self, watch_accessed_variables=True):
        self.watch_accessed_variables = watch_accessed_variables
        self.watched = set()          # ids of watched tensors
        self.producers = {}           # tensor id -> the Node that made it
        self.variables = {}           # watched Variables, in the order first watched
        self.numbers = itertools.count()
        self._snapshots = {}          # Variable id -> the snapshots of it that ops read
        # For tg.explain_gradient: the ops that made integer or bool tensors from
        # watched ones (tensor id -> Node), and the [first, end) tensor ids made
        # while the tape recorded (outside them, it was stopped or not yet entered).
        self._dropped = {}
        self._spans = []

    # -- recording ------------------------------------------------------------
    def open_span(self, first):
        """The tape starts recording: tensors from id ``first`` on are made while it does."""
        self._spans.append([first, None])

    def close_span(self, end):
        """The tape stops recording: tensors from id ``end`` on were made after."""
        self._spans[-1][1] = end

    def reset(self):
        """Forget everything recorded so far."""
        self.watched.clear()
        self.producers = {}
        self._dropped = {}
        self.variables.clear()
        self._snapshots.clear()

    def watch(self, tensor, local):
        """Follow ``tensor``, seen in the graph the tape records in as ``local``."""
        self.watched.add(tensor.id)
        self.watched.add(local.id)
        if isinstance(tensor, Variable):
            self.variables.setdefault(tensor.id, tensor)

    def record(self, node):
        """An op ran: keep it if it read a watched tensor (its float outputs are
        then watched too)."""
        watched = self.watched
        for x in node.inputs:
            if x.id in watched:
                break
        else:
            return
        if node.number is None:
            node.number = next(self.numbers)
        for out in node.outputs:
            if dtypes.is_differentiable(out.dtype):
                watched.add(out.id)
                self.producers[out.id] = node
            else:
                self._dropped[out.id] = node

    def output_added(self, node, tensor):
        """A While or If node this tape recorded gained an output (a value its gradient
        saves): it was made by the node too."""
        if self.producers is not None and any(
                self.producers.get(t.id) is node for t in node.outputs):
            if dtypes.is_differentiable(tensor.dtype):
                self.watched.add(tensor.id)
                self.producers[tensor.id] = node

    def capture(self, outer, inner):
        """The loop body or branch this tape records in captured ``outer`` as ``inner``."""
        if outer.id in self.watched:
            self.watched.add(inner.id)

    def read_variable(self, variable, snapshot):
        """An op read ``variable`` through ``snapshot``. The snapshot stands for the
        Variable on this tape: the Variable's gradient is the snapshot's (summed over
        snapshots if it was assigned while the tape recorded)."""
        if (self.watch_accessed_variables and variable.trainable
                and variable.id not in self.watched):
            self.watched.add(variable.id)
            self.variables.setdefault(variable.id, variable)
        if variable.id in self.watched and snapshot.id not in self.watched:
            self.add_snapshot(variable, snapshot)

    def add_snapshot(self, variable, snapshot):
        """Watch ``snapshot`` as a value of the watched ``variable``."""
        self.watched.add(snapshot.id)
        self._snapshots.setdefault(variable.id, []).append(snapshot)

    def release(self):
        """Let go of the record (a one-shot tape, once its gradient has run)."""
        self.producers = None
        self._dropped = {}
        self.watched = set()
        self._snapshots = {}

    # -- reading the record (what tg.viz and tg.debug show) ----------------------
    @property
    def released(self):
        """Has the record been let go of? There is nothing left to read."""
        return self.producers is None

    def producer(self, tensor_id, every_dtype=False):
        """The recorded Node that made the tensor with this id, or None (the engine's
        protocol, as ``Graph.producer``).

        A tape records the ops that make floating-point tensors from watched ones.
        An op that made an integer or bool tensor from one is kept aside: gradients
        stop there. ``every_dtype=True`` finds those too (``tg.explain_gradient``
        looks for them, to show where a path is cut)."""
        if self.producers is None:
            raise RuntimeError(RELEASED)
        node = self.producers.get(tensor_id)
        if node is None and every_dtype:
            node = self._dropped.get(tensor_id)
        return node

    def recorded_nodes(self):
        """The Nodes recorded, oldest first (each after the nodes it reads)."""
        if self.producers is None:
            raise RuntimeError(RELEASED)
        return sorted(dict.fromkeys(self.producers.values()), key=_node_id)

    def dropped_nodes(self):
        """The ops that read a watched tensor but made only integer or bool tensors, oldest
        first. They carry no gradient, so the tape does not follow their outputs."""
        return sorted(dict.fromkeys(self._dropped.values()), key=_node_id)

    def is_watched(self, tensor):
        """Is ``tensor`` followed: was it watched, or computed by a recorded op?"""
        return tensor.id in self.watched

    def snapshots(self, variable):
        """The values of ``variable`` that recorded ops read (one per value it held while
        the tape recorded). The Variable's gradient is the sum of theirs."""
        return tuple(self._snapshots.get(variable.id, ()))

    def recording_spans(self):
        """The stretches during which the tape recorded, as ``(first, end)`` tensor ids:
        tensors numbered ``first <= id < end`` were made while it recorded (``end`` is
        None while it still does). More than one span: ``stop_recording`` was used."""
        return tuple((first, end) for first, end in self._spans)

    def when_made(self, tensor):
        """Was ``tensor`` made ``"before"`` the tape started, while it was ``"recording"``,
        while it had ``"stopped"`` (``stop_recording``), or ``"after"`` it stopped for good?
        Tensor ids count up as tensors are made, so the spans tell."""
        tensor_id, spans = tensor.id, self._spans
        if not spans or tensor_id < spans[0][0]:
            return "before"
        for first, end in spans:
            if first <= tensor_id and (end is None or tensor_id < end):
                return "recording"
        return "after" if spans[-1][1] is not None and tensor_id >= spans[-1][1] else "stopped"

    def starts_from(self, sources):
        """Does every recorded op depend on one of ``sources``? It does when the sources
        include each watched tensor that no recorded op made (the tensors the tape
        started from: watched ones and the Variables' snapshots), and all are floats:
        each recorded op read a watched tensor, a source or the output of an earlier
        recorded op. The backward engine can then skip its search for such ops."""
        if not all(dtypes.is_differentiable(s.dtype) for s in sources):
            return False
        source_ids = {s.id for s in sources}
        roots = self.watched.difference(self.producers, self.variables)
        return roots <= source_ids


def _node_id(node):
    return node.id
