"""The batching rules ``tg.vectorized_map`` uses for ops that declare none.

An op's own rule (``tg.ops.defbatch``, in its block) comes first. Without one:

* an op declared elementwise (``defeffect(..., elementwise=...)``: each output entry
  depends only on the input entries at its position) needs no rule of its own: line
  the batches up so that each example's axes are on the right, as numpy broadcasts,
  and apply the op once (``elementwise_rule``);
* any other op runs once per example, and the results are stacked (``loop_rule``):
  always right, and slow, so it says so once per op.
"""
import contextlib
import os
import sys
import warnings

from .. import ops
from ..ops import getitem, stack
from ..ops.core.apply import innermost, mode
from ..ops.shape.reshape import move_to_rank
from ..state import state


class Frame:
    """One running ``vectorized_map``: its batch size (None while a graph does not know
    it), a batched input to take the batch's length from (``like``), and its place
    among the recorders (``entry``): recorders entered before it see the batched ops,
    those entered inside it see the ops as the mapped function wrote them."""

    __slots__ = ("size", "entry", "like", "warn", "draws_apart", "views")

    def __init__(self, size, like, warn=True, draws_apart=True):
        self.size = size
        self.like = like
        self.warn = warn      # say when an op loops over the examples?
        # Does each example draw its own random numbers? Not the directions of a
        # transformation's own map (tangents, seeds): they share the draw.
        self.draws_apart = draws_apart
        self.entry = state.next_entry()
        # While a graph is built: each batch's views (batch id -> the BatchedTensors
        # over it), so that a loop's captured batch can be traced back to its view.
        self.views = {}

    @contextlib.contextmanager
    def entered(self):
        """Run the block inside this map: the mapped function's call, or a later one (a
        batching rule calling user code that reads the mapped function's BatchedTensors:
        a custom gradient's grad_fn). Its ops meet the map's interpreter, ``Batching``
        (``teachgrad.ops.core.apply``), made when the block's first op runs."""
        with mode(batching=state.batching + (self,)):
            yield self

    def fallback(self, op):
        """The rule for ``op``, which has none of its own (or declined these inputs)."""
        return elementwise_rule(op) if op.elementwise is not None else loop_rule(op, self.warn)

    def __repr__(self):
        return f"<vectorized_map frame, batch size {self.size}>"


def elementwise_rule(op):
    """Apply an elementwise op once to the batches, lined up (unbatched inputs broadcast
    along the batch axis by themselves).

    A fused op (``tanh_grad``...) takes no broadcasting: its VJP rules give each input a
    cotangent of the output's shape. So where one of its inputs is shared by every
    example, the batch is computed by its elementwise recipe instead, the ops it fuses
    (``(1 - y * y) * g``), which broadcast: the shared part is computed once, not once
    per example, and a tape around the map, differentiating it again (a Jacobian of a
    Jacobian), sees ops whose rules sum a shared input's cotangent back."""
    def rule(values, batched, **params):
        rank = max(v.ndim - b for v, b in zip(values, batched))
        aligned = [move_to_rank(v, rank) if b else v for v, b in zip(values, batched)]
        if op.fused and not all(batched):
            return op.elementwise(_public_op, *aligned, **params), True
        return innermost.process(op, *aligned, **params), True
    return rule


def _public_op(name, *args, dtype=None):
    """One step of a fused op's recipe, as the public op of that name (``"multiply"``
    is ``tg.multiply``), its result in the recipe's ``dtype`` where the step names one
    (``greater``'s bool, which the op gives by itself)."""
    out = getattr(ops, name)(*args)
    return out if dtype is None or out.dtype == dtype else ops.cast(out, dtype)


def loop_rule(op, warn=True):
    """Apply ``op`` to each example in turn and stack the results (saying so, once per
    op, unless ``warn`` is False)."""
    def rule(values, batched, **params):
        size = next(v.shape[0] for v, b in zip(values, batched) if b)
        if size is None:
            raise NotImplementedError(
                f"tg.vectorized_map: {op.name} has no batching rule for these inputs, and "
                f"the batch size is not known while the graph is built, so it cannot loop "
                f"over the examples. Give the batch a known size (no None in the "
                f"placeholder's first dimension), or give {op.name} a rule (tg.ops.defbatch).")
        if warn:
            warnings.warn(f"tg.vectorized_map: {op.name} has no batching rule for these inputs; "
                          f"it runs once per example, in a loop (slow).",
                          stacklevel=_user_stacklevel())
        results = []
        for i in range(size):
            example = [getitem(v, i) if b else v for v, b in zip(values, batched)]
            results.append(innermost.process(op, *example, **params))
        if op.multiple_results:
            return tuple(stack(list(outs)) for outs in zip(*results)), True
        return stack(results), True
    return rule


def _user_stacklevel():
    """``warnings.warn``'s stacklevel for the nearest caller outside teachgrad, counted
    from the function that warns (however many op functions and interpreters lie between)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
