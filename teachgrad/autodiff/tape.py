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

from .. import dtypes, nest, validate
from ..ops import IndexedSlices, zeros_like
from ..state import override, state
from ..tensor import SymbolicTensor, Tensor, Variable
from . import events, jacobians as _jacobians
from .aggregation import UnconnectedGradients, aggregate, unconnected as unconnected_option
from .engine import backward
from .gradients import encloses
from .seeds import seed_gradients
from .tape_record import RELEASED, TapeRecord
from .why_none import warn_why_none


class GradientTape(TapeRecord):
    """Records operations for reverse-mode differentiation.

    Args:
      persistent: allow more than one ``gradient``/``jacobian`` call.
      watch_accessed_variables: watch trainable Variables when they are read.

    What it records, and how the record is read, is ``TapeRecord``'s
    (``teachgrad/autodiff/tape_record.py``); this class differentiates it.
    """

    #: Warn when ``gradient`` gives a source None because of a usual slip (a tape never
    #: entered, an integer source, a forgotten ``watch``), saying how to fix it. Set it to
    #: False (on the class or on one tape) where a None is expected and the warning is noise.
    explain_none = True

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
        with self._in_own_context(target):
            grads = self._differentiate(target, sources, output_gradients,
                                        unconnected_gradients, free=not self._persistent)
        if self._persistent:   # for drawings of what it recorded (tg.viz.draw)
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
        with self._in_own_context(target):
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
        with self._in_own_context(target):
            jacobian = _jacobians.batch_jacobian(
                self, self._jacobian_target(target, "batch_jacobian"),
                _as_tensor(source, "source"), unconnected_gradients, parallel_iterations,
                experimental_use_pfor)
        self._mark_used()
        return jacobian

    def _jacobian_target(self, target, method):
        if self._producers is None:
            raise RuntimeError(RELEASED)
        if nest.is_nested(target):
            validate.fail(TypeError, f"GradientTape.{method}", "target", "one tensor (a "
                          "Jacobian is of one target; stack several first)", target)
        return _as_tensor(_dense_target(self, target), "target")

    def _in_own_context(self, target=None):
        """Differentiate where the tape recorded: a tape of a graph adds its gradient
        nodes to that graph, even when ``gradient`` is called outside the block; but
        where the target was computed in a loop body or branch being built inside it,
        they go there (see ``_inner_graph``)."""
        inner = self._inner_graph(target)
        return override(graph=self.graph if inner is None else inner)

    def _inner_graph(self, target):
        """The loop body or branch, being built inside this tape's graph, where
        ``target`` was computed (or None). The tape recorded its graph's nodes; the
        body's were made while it recorded, and its captures are identities of the
        tape's tensors, so the gradient walks back through them to the tape's record."""
        if self.graph is None or target is None:
            return None
        graphs = {t.graph for t in nest.flatten(target) if isinstance(t, SymbolicTensor)}
        graphs.discard(self.graph)
        if len(graphs) != 1:
            return None
        graph = graphs.pop()
        if (hasattr(graph, "producer_across_captures") and encloses(graph, state.graph)
                and encloses(self.graph, graph)):
            return graph
        return None

    def _producer_for(self, target):
        """The engine's ``producer`` for a gradient of ``target``: the tape's record, and
        for a target of a body or branch being built, the nodes made there while the
        tape recorded, through the captures (None: the record alone)."""
        inner = self._inner_graph(target)
        if inner is None:
            return None
        return inner.producer_across_captures(
            until=self.graph, beyond=self._producers.get,
            keep=lambda node: self.when_made(node.outputs[0]) == "recording")

    def _differentiate(self, target, sources, output_gradients, unconnected_gradients,
                       free=False):
        if self._producers is None:
            raise RuntimeError(RELEASED)
        unconnected = unconnected_option(unconnected_gradients, "GradientTape.gradient")
        if self._recording and not self._persistent:
            self._stop()  # a one-shot tape records nothing more (TensorFlow pops it too)

        # A Variable target is its value as last read (a watched Variable is its own
        # gradient's source: d v / d v is ones, as for a watched constant).
        flat_targets = [_as_tensor(_dense_target(self, t), "target")
                        for t in nest.flatten(target)]
        flat_targets = [self._read_target(t) if isinstance(t, Variable) else t
                        for t in flat_targets]
        flat_sources = [self._local(_as_tensor(s, "sources")) for s in nest.flatten(sources)]
        if output_gradients is not None:
            # For a single target, a list is that target's cotangent, not a structure;
            # but [None] or [a tensor] is a list of one cotangent, as TensorFlow reads it.
            output_gradients = (nest.flatten(output_gradients) if nest.is_nested(target)
                                or _one_cotangent(output_gradients) else [output_gradients])
        seeds = seed_gradients(flat_targets, output_gradients, self._producers.get)
        producers = self._producers
        # What the engine differentiates with respect to: each watched tensor, and for
        # each Variable the snapshots of it that ops read. A source the tape never
        # watched gets no gradient, even if it met watched tensors.
        watched = []
        for s in flat_sources:
            if isinstance(s, Variable):
                watched.extend(self._snapshots.get(s.id, ()))
            elif s.id in self._watched:
                watched.append(s)
        across = self._producer_for(target)
        found = backward(flat_targets, seeds, watched, across or producers.get,
                         observer=events.current_observer(),
                         on_done=_forgetter(producers) if free else None,
                         all_reached=across is None and self._starts_from(watched))
        by_source = {s.id: g for s, g in zip(watched, found)}
        grads = [self._variable_gradient(s, by_source) if isinstance(s, Variable)
                 else by_source.get(s.id) for s in flat_sources]
        if unconnected is UnconnectedGradients.ZERO:
            grads = [zeros_like(s) if g is None else g for g, s in zip(grads, flat_sources)]
        elif self.explain_none and any(g is None for g in grads):
            warn_why_none(self, flat_sources, grads)
        return nest.pack_sequence_as(sources, grads)

    def _read_target(self, variable):
        """A Variable given as a target: the snapshot of it that this tape watches last
        (watching it now if the tape watches the Variable but no op read it)."""
        if variable.id not in self._watched:
            return variable.read_value()
        snapshots = self._snapshots.setdefault(variable.id, [])
        snapshot = variable.read_value()
        if snapshot.id not in self._watched:
            self._watched.add(snapshot.id)
            snapshots.append(snapshot)
        return snapshot

    def _starts_from(self, sources):
        """Does every recorded op depend on one of ``sources``? It does when the sources
        include each watched tensor that no recorded op made (the tensors the tape
        started from: watched ones and the Variables' snapshots), and all are floats:
        each recorded op read a watched tensor, a source or the output of an earlier
        recorded op. The backward engine can then skip its search for such ops."""
        if not all(dtypes.is_differentiable(s.dtype) for s in sources):
            return False
        source_ids = {s.id for s in sources}
        roots = self._watched.difference(self._producers, self._variables)
        return roots <= source_ids

    def _variable_gradient(self, variable, by_source):
        snapshots = self._snapshots.get(variable.id, ())
        if len(snapshots) == 1:   # the usual case: read, never assigned, while recorded
            return by_source.get(snapshots[0].id)
        parts = [by_source[snap.id] for snap in snapshots
                 if by_source.get(snap.id) is not None]
        if not parts:
            return None
        return aggregate(parts, None)[0]

def _one_cotangent(output_gradients):
    """Is ``output_gradients`` a list of one cotangent (None or a tensor)?"""
    return (isinstance(output_gradients, (list, tuple)) and len(output_gradients) == 1
            and (output_gradients[0] is None or isinstance(output_gradients[0], Tensor)))




def _forgetter(producers):
    """For a one-shot tape: drop each node, and the arrays it saved, once it is used."""
    def forget(node):
        for t in node.outputs:
            producers.pop(t.id, None)
    return forget


def _dense_target(tape, target):
    """An IndexedSlices target (an inner tape's sparse gradient, of a gather say) as
    a dense tensor, as TensorFlow converts it. The conversion is recorded on ``tape``
    even after its block has ended, or the dense tensor would not lead back to the
    sources."""
    if not isinstance(target, IndexedSlices):
        return target
    if tape in state.recorders:
        return target.to_dense()
    with override(recorders=state.recorders):
        state.push(tape)
        return target.to_dense()


def _as_tensor(value, role):
    if isinstance(value, Tensor):
        return value
    validate.fail(TypeError, "GradientTape.gradient", role, "a tg.Tensor or tg.Variable (or "
                  "a structure of them)", value, "Compute it with teachgrad ops inside the tape.")
