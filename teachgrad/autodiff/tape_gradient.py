"""How a GradientTape's ``gradient`` is computed from what it recorded.

``GradientTape.gradient`` (``teachgrad/autodiff/tape.py``) puts its question to the one
backward engine (``teachgrad/autodiff/engine.py``) in the engine's terms with a
``TapeQuestion``: it seeds the targets, finds what to differentiate with respect to
(each watched source, and for a Variable the snapshots of it that ops read), and leads
the engine over the tape's ``TapeRecord``, whose ``producer`` gives the op that made each
tensor; then it calls ``backward`` itself, and the question's ``answer`` packs what the
engine found. ``differentiate`` is the same run for the jacobians
(``teachgrad/autodiff/jacobians.py``), once per seed or once mapped over every seed.
"""
from .. import nest, validate
from ..ops import IndexedSlices, zeros_like
from ..ops.core.apply import mode
from ..state import override, state
from ..tensor import SymbolicTensor, Tensor, Variable
from . import events
from .aggregation import UnconnectedGradients, aggregate
from .engine import backward
from .gradients import encloses
from .seeds import seed_gradients
from .why_none import warn_why_none


class TapeQuestion:
    """One gradient asked of a tape, in the engine's terms: the targets and their seed
    cotangents, what to differentiate with respect to (``watched``), and ``producer``,
    which leads from each tensor to the recorded op that made it. ``answer`` turns the
    engine's gradients back into the gradients of the ``sources`` asked for.

    ``free``: drop each recorded node once the engine has used it (``on_done``), for a
    one-shot tape.
    """

    def __init__(self, tape, target, sources, output_gradients, free=False):
        self.tape, self.sources = tape, sources
        record = tape.recorded
        # A Variable target is its value as last read (a watched Variable is its own
        # gradient's source: d v / d v is ones, as for a watched constant).
        flat_targets = [as_tensor(dense_target(tape, t), "target") for t in nest.flatten(target)]
        self.targets = [_read_target(record, t) if isinstance(t, Variable) else t
                        for t in flat_targets]
        self.flat_sources = [local(tape.graph, as_tensor(s, "sources"))
                             for s in nest.flatten(sources)]
        if output_gradients is not None:
            # For a single target, a list is that target's cotangent, not a structure;
            # but [None] or [a tensor] is a list of one cotangent, as TensorFlow reads it.
            output_gradients = (nest.flatten(output_gradients) if nest.is_nested(target)
                                or _one_cotangent(output_gradients) else [output_gradients])
        producers = record.producers
        self.seeds = seed_gradients(self.targets, output_gradients, producers.get)
        # What the engine differentiates with respect to: each watched tensor, and for
        # each Variable the snapshots of it that ops read. A source the tape never
        # watched gets no gradient, even if it met watched tensors.
        self.watched = []
        for s in self.flat_sources:
            if isinstance(s, Variable):
                self.watched.extend(record.snapshots(s))
            elif record.is_watched(s):
                self.watched.append(s)
        across = _producer_for(tape, target)
        self.producer = across or producers.get
        self.on_done = _forgetter(producers) if free else None
        self.all_reached = across is None and record.starts_from(self.watched)

    def engine_arguments(self):
        """``backward``'s arguments for this question (all but the observer)."""
        return dict(targets=self.targets, target_grads=self.seeds, sources=self.watched,
                    producer=self.producer, on_done=self.on_done,
                    all_reached=self.all_reached)

    def answer(self, found, unconnected):
        """The gradients of the sources, packed as they were given, from the engine's
        ``found`` (one per watched tensor; ``unconnected``: an ``UnconnectedGradients``)."""
        record, flat_sources = self.tape.recorded, self.flat_sources
        by_source = {s.id: g for s, g in zip(self.watched, found)}
        grads = [_variable_gradient(record, s, by_source) if isinstance(s, Variable)
                 else by_source.get(s.id) for s in flat_sources]
        if unconnected is UnconnectedGradients.ZERO:
            grads = [zeros_like(s) if g is None else g for g, s in zip(grads, flat_sources)]
        elif self.tape.explain_none and any(g is None for g in grads):
            warn_why_none(self.tape, flat_sources, grads)
        return nest.pack_sequence_as(self.sources, grads)


def differentiate(tape, target, sources, output_gradients, unconnected, free=False):
    """The gradients of ``target`` with respect to ``sources`` on ``tape``, packed as
    ``sources``: one run of the engine, as ``GradientTape.gradient`` makes it (the
    jacobians call this once per seed, or once mapped over every seed)."""
    asked = TapeQuestion(tape, target, sources, output_gradients, free)
    found = backward(**asked.engine_arguments(), observer=events.current_observer())
    return asked.answer(found, unconnected)


def local(graph, tensor):
    """``tensor`` as ``graph`` (the one a tape records in) sees it: a tensor of an
    enclosing graph that a loop body or branch captured is its capture there."""
    if isinstance(tensor, SymbolicTensor) and tensor.graph is not graph:
        captured = getattr(graph, "captured", None)
        found = captured(tensor) if captured is not None else None
        if found is not None:
            return found
    return tensor


def in_own_context(tape, target=None):
    """Differentiate where the tape recorded: a tape of a graph adds its gradient
    nodes to that graph, even when ``gradient`` is called outside the block; but
    where the target was computed in a loop body or branch being built inside it,
    they go there (see ``_inner_graph``)."""
    inner = _inner_graph(tape, target)
    return mode(graph=tape.graph if inner is None else inner)


def _inner_graph(tape, target):
    """The loop body or branch, being built inside ``tape``'s graph, where ``target``
    was computed (or None). The tape recorded its graph's nodes; the body's were made
    while it recorded, and its captures are identities of the tape's tensors, so the
    gradient walks back through them to the tape's record."""
    if tape.graph is None or target is None:
        return None
    graphs = {t.graph for t in nest.flatten(target) if isinstance(t, SymbolicTensor)}
    graphs.discard(tape.graph)
    if len(graphs) != 1:
        return None
    graph = graphs.pop()
    if (hasattr(graph, "producer_across_captures") and encloses(graph, state.graph)
            and encloses(tape.graph, graph)):
        return graph
    return None


def _producer_for(tape, target):
    """The engine's ``producer`` for a gradient of ``target``: the tape's record, and
    for a target of a body or branch being built, the nodes made there while the
    tape recorded, through the captures (None: the record alone)."""
    inner = _inner_graph(tape, target)
    if inner is None:
        return None
    record = tape.recorded
    return inner.producer_across_captures(
        until=tape.graph, beyond=record.producers.get,
        keep=lambda node: record.when_made(node.outputs[0]) == "recording")


def _read_target(record, variable):
    """A Variable given as a target: the snapshot of it that the tape watches last
    (watching it now if the tape watches the Variable but no op read it)."""
    if not record.is_watched(variable):
        return variable.read_value()
    snapshot = variable.read_value()
    if not record.is_watched(snapshot):
        record.add_snapshot(variable, snapshot)
    return snapshot


def _variable_gradient(record, variable, by_source):
    snapshots = record.snapshots(variable)
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


def dense_target(tape, target):
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


def as_tensor(value, role):
    """``value``, checked to be a tensor (a target or source of ``GradientTape.gradient``)."""
    if isinstance(value, Tensor):
        return value
    validate.fail(TypeError, "GradientTape.gradient", role, "a tg.Tensor or tg.Variable (or "
                  "a structure of them)", value, "Compute it with teachgrad ops inside the tape.")
