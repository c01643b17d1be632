"""Contributions: the cotangents handed to each tensor during a backward pass.

Every VJP rule hands each input one contribution; a tensor used by several ops
gets several, and its cotangent is their sum, taken when the node that made it
is popped from the queue (``of_outputs``): the engine's *Aggregate* step. A
source keeps its total, which the pass returns (``result``).

When the pass runs its rules on raw arrays (nothing records it), the seeds go in
as arrays and the results come out as Tensors: the boundary is here and in
``rule_calls``.
"""
from ..state import override
from .aggregation import aggregate
from .pending import trainable
from .rule_calls import boxed, rule_marks_read, unboxed


class Contributions:
    """The gradient contributions each tensor has received, summed when it is needed.

    A source keeps its sum, since the backward pass returns it at the end (and a
    source computed from another source also passes it on).
    """

    __slots__ = ("_by_id", "_source_ids", "_method", "_arrays")

    def __init__(self, sources, method, arrays=False):
        self._by_id = {}      # tensor id -> the contributions received so far
        self._source_ids = {s.id for s in sources}
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
        needed = [True] * len(parents)
        for i, p in enumerate(parents):   # a plain loop: it runs for every node
            if p is None:   # made by no pending node: needed only if it is a source
                x = inputs[i]
                needed[i] = x.id in source_ids and trainable(x)
        return needed

    def add_each(self, tensors, grads):
        """``grads[i]`` (None: nothing) is one more contribution to ``tensors[i]``'s."""
        by_id = self._by_id
        for x, g in zip(tensors, grads):
            if g is not None:
                if x.id in by_id:
                    by_id[x.id].append(g)
                else:
                    by_id[x.id] = [g]

    def of_outputs(self, node, report):
        """The summed cotangent of each output of ``node`` (None where none arrived), or
        None when none of them got one: then the node's rule does not run."""
        outputs = node.outputs
        if len(outputs) == 1:   # most nodes: no list comprehension to set up
            tensor_id = outputs[0].id
            contributions = self._by_id.get(tensor_id)
            if contributions is None:
                return None
            if len(contributions) == 1 and tensor_id not in self._source_ids:
                # One contribution, nothing to sum or keep: the list it arrived in is
                # the list of this node's output cotangents.
                del self._by_id[tensor_id]
                return contributions
            return [self.total(outputs[0], node, 0, report)]
        totals = [self.total(t, node, i, report) for i, t in enumerate(outputs)]
        for g in totals:
            if g is not None:
                return totals
        return None

    def total(self, tensor, node, index, report):
        """The sum of ``tensor``'s contributions (output ``index`` of ``node``), or None."""
        contributions = self._by_id.pop(tensor.id, None)
        if contributions is None:
            return None
        if len(contributions) == 1:
            total = contributions[0]
        else:
            if rule_marks_read():   # the summing ops belong to the node they serve
                with override(gradient_of=node):
                    total, how = aggregate(contributions, self._method)
            else:
                total, how = aggregate(contributions, self._method)
            if report: report.aggregate(node, index, contributions, how, total, tensor)
        if tensor.id in self._source_ids:
            self._by_id[tensor.id] = [total]
        return total
