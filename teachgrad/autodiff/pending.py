"""Pending counts: which nodes lie between the targets and the sources, and how
many of each node's consumers must report before its VJP rule may run.

The backward engine (``engine.backward``) starts from these counts: a node whose
count is zero is ready, and each rule that runs releases the producers of its
inputs. Step 1 is ``upstream_nodes`` (``teachgrad/ops/walk.py``), the one walk
back from the targets: the drawings, ``tg.explain_gradient``, the exercises and a
Session's run plan use it too.
"""
import collections

from ..ops.walk import upstream_nodes  # step 1; imported from here by the drawings


def trainable(tensor):
    """Float and complex tensors carry gradients; ints and bools are constants."""
    return tensor.dtype.kind in "fc"


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
        walk.extend(consumers.get(s.id, ()))
        if producer(s.id) is not None:
            walk.append(producer(s.id))  # a source made by an op: that op counts as reached
    while walk:
        node = walk.popleft()
        if node in reached or node not in upstream:
            continue
        reached.add(node)
        for out in node.outputs:
            walk.extend(consumers.get(out.id, ()))
    return _counts(upstream, reached)


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


def nodes_to_stop_at(sources, stop_tensors, producer, pending):
    """Nodes whose rule must not run: the producers of stop_tensors, and of
    sources that depend on no other source (there the gradient has arrived).
    A source computed from another source passes its gradient on, so
    ``gradient(a + b, [a, b])`` with ``b = 2 a`` gives the total derivative 3 for a."""
    source_ids = {s.id for s in sources}
    stops = set()
    for s in sources:
        node = producer(s.id)
        if node is not None and not any(
                x.id in source_ids or pending.get(producer(x.id), 0) > 0
                for x in node.inputs if trainable(x)):
            stops.add(node)
    stops.update(producer(t.id) for t in stop_tensors if producer(t.id) is not None)
    return stops


def skip_reason(node, stop_nodes, stop_ids):
    if node in stop_nodes:
        # A stop node made a tensor of stop_tensors, or else a source (see nodes_to_stop_at).
        return ("stop gradient" if any(t.id in stop_ids for t in node.outputs)
                else "source")
    if not node.op.differentiable:
        return "not differentiable"
    return "no incoming gradient"
