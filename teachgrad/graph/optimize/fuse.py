"""Elementwise fusion: a chain of elementwise ops becomes one node, one kernel.

Each node of a graph is one trip through memory: ``tanh(x @ W + b)`` reads the
product to add ``b``, writes the sum, reads it again for ``tanh``, writes
again, and makes a new array each time. Fused, the chain is one node running
one program (``program.py``), ``fused: tanh(x0 + x1)``.

Which nodes join a group: starting from an elementwise node (the group's
*root*, whose output the fused node gives), the pass takes in each elementwise
producer of the group's inputs whose output is read by group members only and
is not one of the function's outputs, and repeats while it can. So only the
root's value leaves the group, and no intermediate value is needed anywhere
else, which is what lets the fused node drop the intermediates. The roots are
tried from the last node back, so each group is as large as it can be.

In the MLP's gradient graph, for example: ``tanh(matmul + b)`` in each layer
(forward), and the backward of ``log_softmax``,
``g - exp(ans) * sum(g)``, whose ``exp``, ``multiply`` and ``subtract`` fuse
around the ``sum``, which is not elementwise and so is an input of the group.
"""
from .elementwise import build_program, is_elementwise
from .program import program_op
from .rewrite import Rewriter


def elementwise_groups(fn):
    """``{id(root): [the group's nodes in creation order]}`` for groups of two or more,
    and ``{id(member): root}`` for every node of those groups."""
    readers = fn.consumers()
    returned = {t.id for t in fn.outputs}
    position = {id(node): i for i, node in enumerate(fn.nodes)}
    grouped, groups = {}, {}
    for root in reversed(fn.nodes):
        if id(root) in grouped or not is_elementwise(root):
            continue
        members, frontier = {id(root): root}, [root]
        while frontier:
            for x in frontier.pop().inputs:
                producer = x.node
                if (id(producer) in members or id(producer) in grouped
                        or x.id in returned or not is_elementwise(producer)
                        or any(id(r) not in members for r in readers[x.id])):
                    continue
                members[id(producer)] = producer
                frontier.append(producer)
        if len(members) > 1:
            group = sorted(members.values(), key=lambda n: position[id(n)])
            groups[id(root)] = group
            for node in group:
                grouped[id(node)] = root
    return groups, grouped


def fuse_elementwise(fn):
    """``fn`` with each group of chained elementwise nodes replaced by one program node."""
    groups, grouped = elementwise_groups(fn)
    rw = Rewriter(fn)
    for node in fn.nodes:
        root = grouped.get(id(node))
        if root is None:
            rw.copy(node)
        elif root is node:        # the other members come before it: all inputs exist now
            program, inputs = build_program(groups[id(node)])
            out = node.outputs[0]
            new = rw.emit(program_op(program, fused=True), [rw[x] for x in inputs],
                          {"program": program}, [(out.shape, out.dtype)], like=node)
            rw.alias_outputs(node, new)
            members = {id(m) for m in groups[id(node)]}
            owner = node.grad_of      # a rule's node fused with its forward node: go further out
            while owner is not None and id(owner) in members:
                owner = owner.grad_of
            new.grad_of = rw.node_for(owner)
            for member in groups[id(node)]:
                rw.took_place(member, new)
                rw.note("fused", member, new, program.formula)
    return rw.finish()
