"""The backward pass: one engine for the tape and for graphs.

Reverse mode visits the recorded ops from the targets back towards the
sources. An op may only run its VJP rule once *every* consumer of its outputs
has handed back its contribution, so the engine keeps, for each node, a
**pending count**: how many consumer edges between sources and targets have
not reported yet. A node whose count reaches zero joins a FIFO **queue**; the
loop pops a node, sums the contributions for each of its outputs, calls its
VJP rule, hands each input its cotangent, and releases the producers of the
inputs, enqueuing those that become ready.

This is TensorFlow's ``_GradientsHelper``. A queue instead of recursion means
no Python recursion limit and a deterministic order that the BackpropStepper
replays event by event.

The engine needs very little of the graph it walks (``producer(tensor_id)``
gives the Node that made a tensor, or None; a Node has ``op``, ``inputs``,
``outputs``), so tape entries and graph operations both fit.
"""
import collections

from ..ops import IndexedSlices, zeros_like
from ..ops.grad_util import compatible
from ..state import override, state
from ..tensor import Tensor
from . import events
from .aggregation import aggregate, check_method


def trainable(tensor):
    """Only floating-point tensors carry gradients; ints and bools are constants."""
    return tensor.dtype.kind == "f"


def backward(targets, target_grads, sources, producer,
             aggregation_method=None, stop_tensors=(), observer=None, on_done=None,
             all_reached=False):
    """Gradients of ``targets`` (seeded with ``target_grads``) for each of ``sources``.

    ``on_done(node)``, if given, is called once a node's rule has run; a
    one-shot tape uses it to let go of the node (and the arrays it saved) early.
    ``all_reached=True`` promises that every node the targets depend on depends
    on a source (see ``pending_counts``). ``observer`` is told each step as an event.

    Returns a list with one entry per source: a Tensor, an IndexedSlices, or
    None when no path connects the source to the targets.
    """
    parents, pending = pending_counts(targets, sources, producer, all_reached=all_reached)
    stop_nodes = _stop_nodes(sources, stop_tensors, producer, pending)
    arrays = _rules_take_arrays(observer)   # nothing records the rules: run them on arrays
    grads = Contributions(sources, check_method(aggregation_method), arrays)
    # Events are built only when someone listens: otherwise `report` is None, and each
    # step costs one test of it.
    report = Reporter(observer, stop_nodes, stop_tensors) if observer is not None else None
    for y, g in zip(targets, target_grads):
        grads.seed(y, g)
    queue = collections.deque(_ready(targets, producer, pending))
    if report: report.start(targets, sources, pending, queue, target_grads)

    with override(arrays=arrays):
        while queue:
            node = queue.popleft()                              # Pop: no longer pending
            node_parents = parents.pop(node)
            del pending[node]
            if report: report.pop(node, queue)
            out_grads = grads.of_outputs(node, report)          # Aggregate each output's
            if _rule_runs(node, out_grads, stop_nodes):
                needed = grads.needed(node.inputs, node_parents)
                in_grads = call_vjp(node, out_grads, needed, arrays)   # CallVJP
                grads.add_each(node.inputs, in_grads)           # hand each input its ct
                if report: report.call_vjp(node, out_grads, in_grads)
            elif report:
                report.skip(node)                               # Skip
            if on_done is not None:
                on_done(node)
            _release(node_parents, pending, queue, report)      # Release, Enqueue
        results = [grads.result(s, report) for s in sources]
    if report: report.finish(results)
    return results


def _ready(targets, producer, pending):
    """The producers of the targets that wait for no other node: the first queue."""
    ready = []
    for y in targets:
        node = producer(y._id)
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


def _release(node_parents, pending, queue, report):
    """A node has reported to the producers of its inputs (``node_parents``): lower
    their pending counts, and enqueue each one whose count reaches zero (it is ready)."""
    for parent in node_parents:
        if parent is not None:
            count = pending[parent] - 1
            pending[parent] = count
            if report: report.release(parent, count)
            if count == 0:
                queue.append(parent)
                if report: report.enqueue(parent)


def _rule_runs(node, out_grads, stop_nodes):
    """Does ``node``'s VJP rule run? Not without any output cotangent, not for a
    stop node, and not for an op that has no derivative."""
    if not node.op.differentiable or node in stop_nodes:
        return False
    for g in out_grads:
        if g is not None:
            return True
    return False


class Contributions:
    """The gradient contributions each tensor has received, summed when it is needed.

    A source keeps its sum, since the backward pass returns it at the end (and a
    source computed from another source also passes it on).
    """

    __slots__ = ("_by_id", "_source_ids", "_method", "_arrays")

    def __init__(self, sources, method, arrays=False):
        self._by_id = {}      # tensor id -> the contributions received so far
        self._source_ids = {s._id for s in sources}
        self._method = method
        self._arrays = arrays  # the rules run on raw arrays: seeds in, Tensors out

    def seed(self, target, g):
        """``g`` is the seed cotangent of ``target`` (a Tensor, or an array when the
        rules run on arrays)."""
        self.add_each((target,), (unboxed(g) if self._arrays else g,))

    def result(self, source, report):
        """The gradient of ``source`` at the end, as a Tensor (or IndexedSlices, or None)."""
        total = self.total(source, None, 0, report)
        return boxed(total) if self._arrays else total

    def needed(self, inputs, parents):
        """Which of a node's ``inputs`` need a cotangent: those a pending node made
        (``parents``: None for the others), and the sources."""
        source_ids = self._source_ids
        return [p is not None or (x._id in source_ids and trainable(x))
                for x, p in zip(inputs, parents)]

    def add_each(self, tensors, grads):
        """``grads[i]`` (None: nothing) is one more contribution to ``tensors[i]``'s."""
        by_id = self._by_id
        for x, g in zip(tensors, grads):
            if g is not None:
                if x._id in by_id:
                    by_id[x._id].append(g)
                else:
                    by_id[x._id] = [g]

    def of_outputs(self, node, report):
        """The summed cotangent of each output of ``node`` (None where none arrived)."""
        outputs = node.outputs
        if len(outputs) == 1:   # most nodes: no list comprehension to set up
            tensor_id = outputs[0]._id
            contributions = self._by_id.get(tensor_id)
            if contributions is not None and len(contributions) == 1 \
                    and tensor_id not in self._source_ids:
                # One contribution, nothing to sum or keep: the list it arrived in is
                # the list of this node's output cotangents.
                del self._by_id[tensor_id]
                return contributions
            return [self.total(outputs[0], node, 0, report)]
        return [self.total(t, node, i, report) for i, t in enumerate(outputs)]

    def total(self, tensor, node, index, report):
        """The sum of ``tensor``'s contributions (output ``index`` of ``node``), or None."""
        contributions = self._by_id.pop(tensor._id, None)
        if contributions is None:
            return None
        if len(contributions) == 1:
            total = contributions[0]
        else:
            if _rule_marks_read():   # the summing ops belong to the node they serve
                with override(gradient_of=node):
                    total, how = aggregate(contributions, self._method)
            else:
                total, how = aggregate(contributions, self._method)
            if report: report.aggregate(node, index, contributions, how, total, tensor)
        if tensor._id in self._source_ids:
            self._by_id[tensor._id] = [total]
        return total


class Reporter:
    """Turns each step of the backward pass into an event for ``observer``; made only
    when someone listens, so a pass nobody watches builds no event."""

    def __init__(self, observer, stop_nodes, stop_tensors):
        self.observer = observer
        self._stop_nodes = stop_nodes
        self._stop_ids = {t._id for t in stop_tensors}
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
        self.observer(events.Skip(node, _skip_reason(node, self._stop_nodes, self._stop_ids)))

    def release(self, node, count):
        self.observer(events.Release(node, count))

    def enqueue(self, node):
        self.observer(events.Enqueue(node))

    def finish(self, results):
        self.observer(events.Finish(tuple(results)))


def pending_counts(targets, sources, producer, every_dtype=False, all_reached=False):
    """The nodes between sources and targets, with their parents and pending counts.

    1. Walk back from the targets to find every node they depend on, noting
       each tensor's consumers and each node's parents (the producers of its
       floating-point inputs).
    2. Walk forward from the sources along those consumers: the *reached* nodes.
    3. A node is *between* when it is reached and the targets depend on it.
    4. Its pending count is the number of input edges of between nodes that
       it produced.

    Returns ``(parents, pending)``: for each between node, the between node that
    produced each of its inputs (None for an input from outside), and its count.

    ``every_dtype=True`` walks through integer and bool tensors too. The backward
    pass never does; ``tg.explain_gradient`` does, to find the paths that an
    integer tensor cuts.

    ``all_reached=True`` skips step 2, when the caller knows that every node found
    in step 1 is reached. A tape knows it when the sources include every tensor it
    started from (each recorded op read a watched tensor, which is a source or the
    output of an earlier recorded op), which is the usual case: the gradient with
    respect to everything watched.
    """
    if all_reached:   # steps 1, 3 and 4 in one walk: every edge found is counted
        edges = {}
        upstream = upstream_nodes(targets, producer, every_dtype, edges=edges)
        return upstream, edges
    consumers = collections.defaultdict(list)   # tensor id -> nodes that read it
    upstream = upstream_nodes(targets, producer, every_dtype, consumers)

    reached, walk = set(), collections.deque()
    for s in sources:
        walk.extend(consumers.get(s._id, ()))
        if producer(s._id) is not None:
            walk.append(producer(s._id))  # a source made by an op: that op counts as reached
    while walk:
        node = walk.popleft()
        if node in reached or node not in upstream:
            continue
        reached.add(node)
        for out in node.outputs:
            walk.extend(consumers.get(out._id, ()))
    return _counts(upstream, reached)


def upstream_nodes(targets, producer, every_dtype=False, consumers=None, edges=None):
    """Every node the targets depend on: the walk back from them, breadth first.

    Returns a dict, in the order the walk met the nodes (the targets' producers
    first): node -> the producer of each of its inputs (None for an input that no
    node made, or that the walk does not follow). It follows floating-point inputs
    only, as gradients do, unless ``every_dtype=True``. If ``consumers`` (a
    ``defaultdict(list)``) is given, each tensor id is noted there with the nodes that
    read it; if ``edges`` (a dict) is given, each node found gets there the number of
    edges from it to the nodes found (their pending counts, when all are between).

    Step 1 of ``pending_counts``; ``tg.explain_gradient`` and ``tg.viz.draw`` walk
    back through the same function.
    """
    upstream = {}                               # node -> producer of each input (or None)
    walk = collections.deque()
    for y in targets:
        node = producer(y._id)
        if node is not None and node not in upstream:
            upstream[node] = None
            if edges is not None:
                edges[node] = 0
            walk.append(node)
    while walk:
        node = walk.popleft()
        node_parents = []
        for x in node.inputs:
            parent = None
            if every_dtype or x.dtype.kind == "f":   # only floats carry gradients
                tensor_id = x._id
                if consumers is not None:
                    consumers[tensor_id].append(node)
                parent = producer(tensor_id)
                if parent is not None:
                    if parent not in upstream:
                        upstream[parent] = None
                        walk.append(parent)
                        if edges is not None:
                            edges[parent] = 0
                    if edges is not None:
                        edges[parent] += 1
            node_parents.append(parent)
        upstream[node] = node_parents
    return upstream


def _counts(upstream, reached):
    """Steps 3 and 4: the between nodes (those in ``reached``), their parents among
    them, and their pending counts."""
    # `upstream` keeps the walk's order, so the counts come out the same every run.
    pending = {node: 0 for node in upstream if node in reached}
    parents = {}
    for node, node_parents in upstream.items():
        if node not in pending:
            continue
        # A parent outside the between nodes is dropped (None). This list is the
        # walk's own, so it is edited in place rather than copied.
        for i, p in enumerate(node_parents):
            if p is not None:
                if p in pending:
                    pending[p] += 1
                else:
                    node_parents[i] = None
        parents[node] = node_parents
    return parents, pending


def _stop_nodes(sources, stop_tensors, producer, pending):
    """Nodes whose rule must not run: the producers of stop_tensors, and of
    sources that depend on no other source (there the gradient has arrived).
    A source computed from another source passes its gradient on, so
    ``gradient(a + b, [a, b])`` with ``b = 2 a`` gives the total derivative 3 for a."""
    source_ids = {s._id for s in sources}
    stops = set()
    for s in sources:
        node = producer(s._id)
        if node is not None and not any(
                x._id in source_ids or pending.get(producer(x._id), 0) > 0
                for x in node.inputs if trainable(x)):
            stops.add(node)
    stops.update(producer(t._id) for t in stop_tensors if producer(t._id) is not None)
    return stops


def _skip_reason(node, stop_nodes, stop_ids):
    if node in stop_nodes:
        # A stop node made a tensor of stop_tensors, or else a source (see _stop_nodes).
        return ("stop gradient" if any(t._id in stop_ids for t in node.outputs)
                else "source")
    if not node.op.differentiable:
        return "not differentiable"
    return "no incoming gradient"


def _rule_marks_read():
    """Does anything read which forward node's rule made an op? A graph being built
    groups gradient nodes under it, and a tg.debug check notes it; eagerly, with no
    check on, nothing does, and the mark is not set."""
    return state.graph is not None or bool(state.recorders and state.checks())


def unboxed(g):
    """A cotangent's raw array (an IndexedSlices keeps its form, with raw values)."""
    if type(g) is IndexedSlices:
        return IndexedSlices(unboxed(g.values), g.indices, g.dense_shape)
    return g._value if isinstance(g, Tensor) else g


def boxed(g):
    """A cotangent computed on raw arrays as a Tensor (or IndexedSlices of one)."""
    if g is None or isinstance(g, Tensor):
        return g
    if type(g) is IndexedSlices:
        return IndexedSlices(boxed(g.values), g.indices, g.dense_shape)
    return Tensor(g)


def call_vjp(node, out_grads, needed, arrays=False):
    """Run ``node``'s VJP rule for the inputs that lead to a source (on raw arrays with
    ``arrays=True``: the cotangents are arrays, and so are the rule's results)."""
    op = node.op
    if op.multiple_results:
        if not op.accepts_missing:
            # A rule for several outputs needs a cotangent for each: unused ones are zero.
            out_grads = [zeros_like(t) if g is None and trainable(t) else g
                         for g, t in zip(out_grads, node.outputs)]
        if not op.accepts_sparse and IndexedSlices in map(type, out_grads):
            out_grads = [g.to_dense() if type(g) is IndexedSlices else g for g in out_grads]
    elif type(out_grads[0]) is IndexedSlices and not op.accepts_sparse:
        out_grads = [out_grads[0].to_dense()]
    if arrays:
        in_grads = op.vjp(node, out_grads, needed, True) if op.array_rules \
            else _on_tensors(op, node, out_grads, needed)
    elif _rule_marks_read():
        with override(gradient_of=node):
            in_grads = op.vjp(node, out_grads, needed)
    else:
        in_grads = op.vjp(node, out_grads, needed)
    for x, g in zip(node.inputs, in_grads):
        if g is not None and g.shape != x.shape and not compatible(g.shape, x.shape):
            i = next(i for i, h in enumerate(in_grads) if h is g)
            raise ValueError(
                f"Incompatible shapes between op input and calculated input gradient. "
                f"Forward operation: {node.name}. Input index: {i}. Original input shape: "
                f"{tuple(x.shape)}. Calculated input gradient shape: {tuple(g.shape)}.")
    return in_grads


def _on_tensors(op, node, out_grads, needed):
    """Run a rule that needs Tensors (``rules_need_tensors``) in a pass on arrays: its
    cotangents boxed, its ops on Tensors, its results back to arrays."""
    with override(arrays=False):
        in_grads = op.vjp(node, [boxed(g) for g in out_grads], needed)
    return [unboxed(g) for g in in_grads]
