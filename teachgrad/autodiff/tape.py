"""GradientTape: record ops as they run, then run the backward engine on them.

A tape *watches* tensors. An op is recorded when one of its inputs is watched,
and its floating-point outputs become watched in turn, so the tape ends up
holding exactly the ops that connect the watched tensors to whatever you
compute from them. Trainable Variables are watched as soon as an op reads them.

    x = tg.constant(3.0)
    with tg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)        # 6.0

Tapes nest: ops run by an inner tape's ``gradient`` are recorded by an outer
tape, which is how second derivatives are taken.

A tape entered while a graph is built (inside ``tg.function``, or ``with
graph.as_default():``) records that graph's nodes, and its ``gradient`` adds
gradient nodes to the graph, through the same engine as ``tg.gradients``.
"""

import contextlib
import itertools
import warnings

from .. import dtypes, nest, validate
from ..state import state
from ..tensor import Tensor, next_tensor_id
from . import jacobians as _jacobians
from .aggregation import UnconnectedGradients, unconnected as unconnected_option
from .engine import backward
from .events import current_observer
from .tape_gradient import (
    TapeQuestion,
    as_tensor,
    dense_target,
    differentiate,
    in_own_context,
    local,
)
from .tape_record import RELEASED, TapeRecord


class GradientTape:
    """Records operations for reverse-mode differentiation.

    Args:
      persistent: allow more than one ``gradient``/``jacobian`` call.
      watch_accessed_variables: watch trainable Variables when they are read.

    The tape is what a ``with`` block enters and what ``gradient`` differentiates; what
    it recorded is its ``recorded``, a ``TapeRecord`` (``teachgrad/autodiff/tape_record.py``),
    which the recorder stack hands each op to and which the reading methods consult.
    """

    differentiates = True   # a recorder that takes derivatives (see teachgrad.state)

    #: Warn when ``gradient`` gives a source None because of a usual slip (a tape never
    #: entered, an integer source, a forgotten ``watch``), saying how to fix it. Set it to
    #: False (on the class or on one tape) where a None is expected and the warning is noise.
    explain_none = True

    def __init__(self, persistent=False, watch_accessed_variables=True):
        validate.flags("tg.GradientTape", persistent=persistent,
                       watch_accessed_variables=watch_accessed_variables)
        self.persistent = persistent
        self.recorded = TapeRecord(watch_accessed_variables)
        self.entry = -1               # its place on the recorder stack
        self.graph = None             # the graph it records nodes of (None: eager ops)
        self._recording = False
        self._last = {}               # source id -> what the last gradient() gave it
        # The recorder stack hands each op straight to the record: these bound methods
        # stand in front of the class's delegating ones below (one call less per op).
        recorded = self.recorded
        self.record, self.read_variable = recorded.record, recorded.read_variable
        self.output_added, self.capture = recorded.output_added, recorded.capture

    # -- the recorder interface (teachgrad.ops.core.recorder.Recorder) -------------
    def record(self, node):
        """An op ran (or was added to the graph the tape records in): keep it."""
        self.recorded.record(node)

    def read_variable(self, variable, tensor):
        """An op read ``variable`` through ``tensor``: watch it if the tape does."""
        self.recorded.read_variable(variable, tensor)

    def capture(self, outer, inner):
        """A loop body or branch the tape records in captured ``outer`` as ``inner``."""
        self.recorded.capture(outer, inner)

    def output_added(self, node, tensor):
        """A While or If node the tape recorded gained the output ``tensor``."""
        self.recorded.output_added(node, tensor)

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
        self.recorded.numbers = (enclosing[-1].recorded.numbers if enclosing
                                 else itertools.count())
        self._start()
        return self

    def __exit__(self, *exc):
        if self._recording:
            self._stop()

    def _start(self):
        state.push(self)
        self._recording = True
        self.recorded.open_span(next_tensor_id())

    def _stop(self):
        state.remove(self)
        self._recording = False
        self.recorded.close_span(next_tensor_id())

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
        self.recorded.reset()

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
            self.recorded.watch(t, local(self.graph, t))

    def watched_variables(self):
        """The Variables this tape watches, in the order it started watching them."""
        return tuple(self.recorded.variables.values())

    # -- reading the record (TapeRecord's methods, on the tape tg.viz and tg.debug get)
    @property
    def released(self):
        """Has the tape let go of its record? A non-persistent tape does so once its
        ``gradient`` (or ``jacobian``) has run: there is nothing left to read."""
        return self.recorded.released

    @property
    def watches_accessed_variables(self):
        """Does the tape watch trainable Variables as soon as an op reads them?"""
        return self.recorded.watch_accessed_variables

    def producer(self, tensor_id, every_dtype=False):
        """The recorded Node that made the tensor with this id (``TapeRecord.producer``)."""
        return self.recorded.producer(tensor_id, every_dtype)

    def recorded_nodes(self):
        """The Nodes the tape recorded, oldest first (each after the nodes it reads)."""
        return self.recorded.recorded_nodes()

    def dropped_nodes(self):
        """The ops that read a watched tensor but made only integer or bool tensors."""
        return self.recorded.dropped_nodes()

    def is_watched(self, tensor):
        """Does the tape follow ``tensor``: was it watched, or computed by a recorded op?"""
        return self.recorded.is_watched(tensor)

    def snapshots(self, variable):
        """The values of ``variable`` that recorded ops read (``TapeRecord.snapshots``)."""
        return self.recorded.snapshots(variable)

    def recording_spans(self):
        """The ``(first, end)`` tensor ids of each stretch the tape recorded during."""
        return self.recorded.recording_spans()

    def when_made(self, tensor):
        """``"before"``, ``"recording"``, ``"stopped"`` or ``"after"``: when ``tensor`` was
        made, relative to the tape's recording (``TapeRecord.when_made``)."""
        return self.recorded.when_made(tensor)

    # -- differentiating -------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """The gradient of ``target`` with respect to each of ``sources``.

        Args:
          target: a Tensor, or a nested structure of them (their gradients add up).
            A non-scalar target is summed, as if ``output_gradients`` were ones.
          sources: a Tensor or Variable, or a nested structure of them; the
            result has the same structure.
          output_gradients: cotangents for ``target``, one per target tensor.
          unconnected_gradients: ``"none"`` (None for a source the target does
            not depend on) or ``"zero"`` (zeros of the source's shape).
        """
        unconnected = self._ready_to_differentiate(unconnected_gradients)
        with in_own_context(self, target):
            asked = TapeQuestion(self, target, sources, output_gradients,
                                 free=not self.persistent)
            found = backward(**asked.engine_arguments(), observer=current_observer())
            grads = asked.answer(found, unconnected)
        if self.persistent:   # for drawings of what it recorded (tg.viz.draw)
            self._last = {s.id: g for s, g in zip(nest.flatten(sources), nest.flatten(grads))
                          if g is not None and hasattr(s, "id")}
        self._mark_used()
        return grads

    def last_gradients(self):
        """``{source tensor id: gradient}`` from the last ``gradient`` call of a persistent
        tape (empty before one, and for a one-shot tape): what ``tg.viz.draw`` shows."""
        return dict(self._last)

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """The full Jacobian: for each source, shape ``target.shape + source.shape``.

        Row ``k`` is the gradient seeded with the one-hot cotangent ``e_k``: with
        ``experimental_use_pfor=True`` (TensorFlow's default) ONE backward pass mapped
        over every seed by ``tg.vmap``, with False one pass per row (the tape must then
        be persistent, unless it records a graph). ``teachgrad.autodiff.jacobians``
        explains both; ``parallel_iterations`` is accepted and unused.
        """
        with in_own_context(self, target):
            jacobians = _jacobians.jacobian(
                self, self._jacobian_target(target, "jacobian"), sources,
                unconnected_gradients, parallel_iterations, experimental_use_pfor)
        self._mark_used()
        return jacobians

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """Per-example Jacobians, stacked: for target ``[b, y1, ..., yn]`` and source
        ``[b, x1, ..., xm]`` (rank 2 or more, the same ``b``), shape
        ``[b, y1, ..., yn, x1, ..., xm]``, where ``[i]`` is the Jacobian of ``target[i]``
        with respect to ``source[i]``.

        It assumes ``target[i]`` depends on ``source[i]`` alone, so it needs a seed per
        entry of ONE example, not of the whole target. As in TensorFlow, an unconnected
        source gives zeros whatever ``unconnected_gradients`` says.
        """
        with in_own_context(self, target):
            jacobian = _jacobians.batch_jacobian(
                self, self._jacobian_target(target, "batch_jacobian"),
                as_tensor(source, "source"), unconnected_gradients, parallel_iterations,
                experimental_use_pfor)
        self._mark_used()
        return jacobian

    def _jacobian_target(self, target, method):
        if self.recorded.released:
            raise RuntimeError(RELEASED)
        if nest.is_nested(target):
            validate.fail(TypeError, f"GradientTape.{method}", "target", "one tensor (a "
                          "Jacobian is of one target; stack several first)", target)
        return as_tensor(dense_target(self, target), "target")

    def differentiate(self, target, sources, output_gradients=None,
                      unconnected_gradients=UnconnectedGradients.NONE, free=False):
        """The backward engine's run behind ``gradient`` and each Jacobian pass
        (``teachgrad/autodiff/tape_gradient.py``), without letting go of the record;
        ``free`` drops each recorded node once used (the last pass of a one-shot tape)."""
        unconnected = self._ready_to_differentiate(unconnected_gradients)
        return differentiate(self, target, sources, output_gradients, unconnected, free)

    def _ready_to_differentiate(self, unconnected_gradients):
        """Check the tape can still be read and stop a one-shot tape recording; the
        ``unconnected_gradients`` option read."""
        if self.recorded.released:
            raise RuntimeError(RELEASED)
        unconnected = unconnected_option(unconnected_gradients, "GradientTape.gradient")
        if self._recording and not self.persistent:
            self._stop()  # a one-shot tape records nothing more (TensorFlow pops it too)
        return unconnected

    def _mark_used(self):
        if not self.persistent:
            self.recorded.release()   # free what the tape held
