"""The one walk back through recorded nodes, from some tensors to everything they depend on.

A node (``teachgrad.ops.core.op.Node``) has ``inputs`` and ``outputs``; a record (a tape, a
graph) answers ``producer(tensor_id)``: the node that made a tensor, or None. That is
all a walk needs, so the backward engine (``autodiff.pending``), ``tg.explain_gradient``,
the drawings, the exercises, a Session's run plan and the graph optimiser's pruning all
walk back through ``upstream_nodes``: what they show or run is what the engine visits.
"""
import collections


def upstream_nodes(targets, producer, every_dtype=False, consumers=None, edges=None):
    """Every node the targets depend on: the walk back from them, breadth first.

    Returns a dict, in the order the walk met the nodes (the targets' producers
    first): node -> the producer of each of its inputs (None for an input that no
    node made, or that the walk does not follow). It follows floating-point inputs
    only, as gradients do, unless ``every_dtype=True``. If ``consumers`` (a
    ``defaultdict(list)``) is given, each tensor id is noted there with the nodes that
    read it; if ``edges`` (a dict) is given, each node found gets there the number of
    edges from it to the nodes found (their pending counts, when all are between).

    Step 1 of ``pending_counts``; ``tg.explain_gradient``, ``tg.viz.draw``, the
    exercises, a Session's run plan and the optimiser's pruning walk back through the
    same function.
    """
    upstream = {}                               # node -> producer of each input (or None)
    walk = collections.deque()
    for y in targets:
        node = producer(y.id)
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
            if every_dtype or x.dtype.kind in "fc":   # only floats (and complex) carry gradients
                tensor_id = x.id
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


def depth_first_order(upstream):
    """The nodes of an ``upstream_nodes`` walk, each after the nodes it reads from.

    ``upstream_nodes`` meets nodes breadth first, which is not an order to compute
    them in. This is the order a recursive walk from the first node (the target's
    producer) emits them: first input first, a node once its inputs' producers are
    out. It runs without recursion (a loop unrolled on a tape makes chains thousands
    of nodes long).
    """
    order, done = [], set()
    stack = [(node, False) for node in reversed(upstream)]
    while stack:
        node, parents_done = stack.pop()
        if node in done:
            continue
        if parents_done:
            done.add(node)
            order.append(node)
            continue
        stack.append((node, True))
        stack.extend((p, False) for p in reversed(upstream[node])
                     if p is not None and p not in done)
    return order
