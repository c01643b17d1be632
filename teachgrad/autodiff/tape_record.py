"""What a GradientTape records, and how it can be read.

This is the recording half of ``tg.GradientTape`` (``teachgrad/autodiff/tape.py``
holds the differentiating half, which runs the backward engine over this record).
A tape *watches* tensors. When an op runs (``record``), the tape keeps its Node if
one of the inputs is watched, and then watches the op's floating-point outputs: so
the record holds exactly the ops that lead from the watched tensors to whatever is
computed from them, each reachable from its output's id (``producer``). Trainable
Variables are watched when an op reads them (``read_variable``).

The reading methods are what ``tg.viz`` draws and ``tg.debug.explain_gradient``
explains: the recorded nodes in order, the ops dropped because they made integers,
when each tensor was made relative to the tape's recording spans.
"""
import contextlib
import itertools
import warnings

from .. import dtypes, nest, validate
from ..state import state
from ..tensor import SymbolicTensor, Tensor, Variable, next_tensor_id as new_tensor_id

RELEASED = ("A non-persistent GradientTape can only be used to compute one set of "
             "gradients (or jacobians). Create it with tg.GradientTape(persistent=True) "
             "to call gradient() more than once.")


class TapeRecord:
    """The record of a GradientTape: the watched tensors and the ops that read them."""

    differentiates = True   # a recorder that takes derivatives (see teachgrad.state)

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._watched = set()         # ids of watched tensors
        self._producers = {}          # tensor id -> the Node that made it
        self._variables = {}          # watched Variables, in the order first watched
        self._snapshots = {}          # Variable id -> the snapshots of it that ops read
        self._recording = False
        self.entry = -1               # its place on the recorder stack
        self._numbers = None          # numbers the nodes it records (shared when nested)
        self.graph = None             # the graph it records nodes of (None: eager ops)
        self._last = {}               # source id -> what the last gradient() gave it
        # For tg.explain_gradient: the ops that made integer or bool tensors from
        # watched ones (tensor id -> Node), and the [first, end) tensor ids made
        # while the tape recorded (outside them, it was stopped or not yet entered).
        self._dropped = {}
        self._spans = []

    # -- recording ------------------------------------------------------------
    def __enter__(self):
        if self._recording:
            raise RuntimeError("This GradientTape is already recording; a tape cannot be "
                               "entered twice. Create a new tg.GradientTape().")
        self.entry = state.next_entry()
        self.graph = state.graph
        # Nested tapes number their nodes from one counter, so names stay unique in a
        # nest; each outermost tape starts at 0, so names are the same in every run.
        enclosing = [t for t in state.tapes() if t.graph is self.graph]
        self._numbers = enclosing[-1]._numbers if enclosing else itertools.count()
        self._start()
        return self

    def __exit__(self, *exc):
        if self._recording:
            self._stop()

    def _start(self):
        state.push(self)
        self._recording = True
        self._spans.append([new_tensor_id(), None])

    def _stop(self):
        state.remove(self)
        self._recording = False
        self._spans[-1][1] = new_tensor_id()

    @contextlib.contextmanager
    def stop_recording(self):
        """Run the block without recording its ops on this tape."""
        if not self._recording:
            raise RuntimeError("stop_recording() needs a tape that is recording: use it "
                               "inside the tape's `with` block.")
        self._stop()
        try:
            yield
        finally:
            self._start()

    def reset(self):
        """Forget everything recorded so far (the tape keeps recording)."""
        self._watched.clear()
        self._producers = {}
        self._dropped = {}
        self._variables.clear()
        self._snapshots.clear()

    def watch(self, tensor):
        """Make the tape record ops on ``tensor`` (or a nested structure of them)."""
        for t in nest.flatten(tensor):
            if not isinstance(t, Tensor):
                validate.fail(TypeError, "GradientTape.watch", "tensor", "a tensor or Variable "
                              "(or a structure of them)", t,
                              "Wrap a number or an array with tg.constant(...) first.")
            if not dtypes.is_differentiable(t.dtype):
                warnings.warn(f"The dtype of the watched tensor must be floating (e.g. "
                              f"tg.float32), got {t.dtype}: it will get no gradient.",
                              stacklevel=2)
            self._watched.add(t.id)
            self._watched.add(self._local(t).id)
            if isinstance(t, Variable):
                self._variables.setdefault(t.id, t)

    def watched_variables(self):
        """The Variables this tape watches, in the order it started watching them."""
        return tuple(self._variables.values())

    def record(self, node):
        """An op ran: keep it if it read a watched tensor (its float outputs are
        then watched too)."""
        watched = self._watched
        for x in node.inputs:
            if x.id in watched:
                break
        else:
            return
        if node.number is None:
            node.number = next(self._numbers)
        for out in node.outputs:
            if dtypes.is_differentiable(out.dtype):
                watched.add(out.id)
                self._producers[out.id] = node
            else:
                self._dropped[out.id] = node

    def output_added(self, node, tensor):
        """A While or If node this tape recorded gained an output (a value its gradient
        saves): it was made by the node too."""
        if self._producers is not None and any(
                self._producers.get(t.id) is node for t in node.outputs):
            if dtypes.is_differentiable(tensor.dtype):
                self._watched.add(tensor.id)
                self._producers[tensor.id] = node

    def capture(self, outer, inner):
        """The loop body or branch this tape records in captured ``outer`` as ``inner``."""
        if outer.id in self._watched:
            self._watched.add(inner.id)

    def _local(self, tensor):
        """``tensor`` as the graph this tape records in sees it: a tensor of an enclosing
        graph that a loop body or branch captured is its capture there."""
        if isinstance(tensor, SymbolicTensor) and tensor.graph is not self.graph:
            captured = getattr(self.graph, "captured", None)
            local = captured(tensor) if captured is not None else None
            if local is not None:
                return local
        return tensor

    def read_variable(self, variable, snapshot):
        # An op read `variable` through `snapshot`. The snapshot stands for the
        # Variable on this tape: the Variable's gradient is the snapshot's (summed
        # over snapshots if it was assigned while the tape recorded).
        if (self._watch_accessed_variables and variable.trainable
                and variable.id not in self._watched):
            self._watched.add(variable.id)
            self._variables.setdefault(variable.id, variable)
        if variable.id in self._watched and snapshot.id not in self._watched:
            self._watched.add(snapshot.id)
            self._snapshots.setdefault(variable.id, []).append(snapshot)

    # -- reading the record (what tg.viz and tg.debug show) ----------------------
    @property
    def released(self):
        """Has the tape let go of its record? A non-persistent tape does so once its
        ``gradient`` (or ``jacobian``) has run: there is nothing left to read."""
        return self._producers is None

    def producer(self, tensor_id, every_dtype=False):
        """The recorded Node that made the tensor with this id, or None (the engine's
        protocol, as ``Graph.producer``).

        A tape records the ops that make floating-point tensors from watched ones.
        An op that made an integer or bool tensor from one is kept aside: gradients
        stop there. ``every_dtype=True`` finds those too (``tg.explain_gradient``
        looks for them, to show where a path is cut)."""
        if self._producers is None:
            raise RuntimeError(RELEASED)
        node = self._producers.get(tensor_id)
        if node is None and every_dtype:
            node = self._dropped.get(tensor_id)
        return node

    def recorded_nodes(self):
        """The Nodes the tape recorded, oldest first (each after the nodes it reads)."""
        if self._producers is None:
            raise RuntimeError(RELEASED)
        return sorted(dict.fromkeys(self._producers.values()), key=_node_id)

    def dropped_nodes(self):
        """The ops that read a watched tensor but made only integer or bool tensors, oldest
        first. They carry no gradient, so the tape does not follow their outputs."""
        return sorted(dict.fromkeys(self._dropped.values()), key=_node_id)

    def is_watched(self, tensor):
        """Does the tape follow ``tensor``: was it watched, or computed by a recorded op?"""
        return tensor.id in self._watched

    def snapshots(self, variable):
        """The values of ``variable`` that recorded ops read (one per value it held while
        the tape recorded). The Variable's gradient is the sum of theirs."""
        return tuple(self._snapshots.get(variable.id, ()))

    @property
    def watches_accessed_variables(self):
        """Does the tape watch trainable Variables as soon as an op reads them?"""
        return self._watch_accessed_variables

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

    def _mark_used(self):
        if not self._persistent:
            self._producers = None  # free what the tape held
            self._dropped = {}
            self._watched = set()
            self._snapshots = {}


def _node_id(node):
    return node.id
