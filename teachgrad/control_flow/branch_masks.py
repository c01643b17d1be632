"""A per-example ``tg.cond``'s gradient, NaN-safe: each branch's gradient is selected.

Inside ``tg.vmap``, a cond whose predicate differs by example runs both branches and
selects (``batched.batched_cond``). Differentiated inside the map (``tg.vmap(tg.grad(f))``:
per-example gradients), the selection alone is not enough::

    f = lambda x: tg.cond(x > 0, lambda: tg.sqrt(x), lambda: x * x)

At ``x = 0`` the untaken branch's cotangent is ``where(pred, ct, 0) = 0``, and ``sqrt``'s
VJP makes ``0 / (2 sqrt(0)) = 0 * inf = nan`` of it, which then adds into ``x``'s gradient.
JAX gives 0: its per-example cond differentiates each branch on its own and selects the
*gradients*. This module does the same on the tape: while a branch runs, each value it
reads from outside passes, for the recorders that differentiate inside the map, through a
``branch_entry`` op. Forward it is the identity; backward it lets through the cotangent
only for the examples that took its branch (``where(pred, ct, 0)``), so whatever the
untaken branch computed (nan, inf) stops at the branch's edge.

Only the recorders entered inside the map are given these edges; the map's own values,
and the tapes around the map, are untouched (as in JAX, ``grad(vmap(f))`` differentiates
the selection itself).
"""
import contextlib

from .. import dtypes
from ..ops import identity, where, zeros_like
from ..ops.core.apply import innermost
from ..ops.core.batching import BatchedTensor
from ..ops.core.declare import defbatch, defjvp, defvjp, primitive
from ..ops.core.op import Node
from ..state import override, state
from ..tensor import next_tensor_id


def _selected(ct, pred, side):
    """``ct`` for the examples whose ``pred`` is ``side``, zero for the others."""
    zeros = zeros_like(ct)
    return where(pred, ct, zeros) if side else where(pred, zeros, ct)


# branch_entry(x, pred; side) = x, read by the branch taken where pred == side.
branch_entry_p = primitive("branch_entry", lambda x, pred, side: x)
defvjp(branch_entry_p, lambda ct, ans, x, pred, side: _selected(ct, pred, side), None)
defjvp(branch_entry_p, lambda x_dot, ans, x, pred, side: _selected(x_dot, pred, side), None)
defbatch(branch_entry_p, lambda values, batched, side: (identity(values[0]), batched[0]))


class BranchEdges:
    """The values one branch reads from outside, each through its ``branch_entry``."""

    def __init__(self, pred, side, recorders):
        self.pred, self.side = pred, side
        self.recorders = recorders       # all of them, as the cond found them
        self.start = next_tensor_id()    # a tensor made before this one is from outside
        self.entries = {}                # outside tensor id -> its branch_entry
        self.copies = {}                 # node id -> the node reading through the entries

    def entry(self, x):
        found = self.entries.get(x.id)
        if found is None:
            with override(recorders=self.recorders):
                found = innermost.process(branch_entry_p, x, self.pred, side=self.side)
            self.entries[x.id] = found
        return found

    def through_entries(self, node):
        """``node`` as the differentiating recorders are to see it."""
        copy = self.copies.get(node.id)
        if copy is None:
            inputs = tuple(self.entry(x) if x.id < self.start and
                           dtypes.is_floating(x.dtype) else x for x in node.inputs)
            copy = Node(node.op, inputs, node.outputs, node.params)
            copy.context, copy.label = node.context, node.label
            self.copies[node.id] = copy
        return copy


class EdgeRecorder:
    """Stands for a differentiating recorder while a branch runs: hands it each node as
    ``BranchEdges`` rewrites it; everything else goes to the recorder itself."""

    def __init__(self, recorder, edges):
        self._recorder = recorder
        self._edges = edges

    def record(self, node):
        self._recorder.record(self._edges.through_entries(node))

    def __getattr__(self, name):
        return getattr(self._recorder, name)


@contextlib.contextmanager
def branch_edges(pred, side):
    """Run a branch of a per-example cond (``pred`` a BatchedTensor) with its edges
    masked for the recorders differentiating inside ``pred``'s map."""
    frame = pred.frame if isinstance(pred, BatchedTensor) else None
    inside = [r for r in state.recorders if frame is not None and r.differentiates
              and r.entry > frame.entry]
    if not inside:
        yield
        return
    edges = BranchEdges(pred, side, state.recorders)
    seen = tuple(EdgeRecorder(r, edges) if r in inside else r for r in state.recorders)
    with override(recorders=seen):
        yield
