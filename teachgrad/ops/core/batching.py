"""Batching: how an op runs on a batch of examples inside ``tg.vectorized_map``.

Inside ``tg.vectorized_map(fn, elems)`` (or ``tg.vmap``), ``fn`` is written for one
example, but it runs once, on the whole batch. Each value that differs from example to
example is a ``BatchedTensor``: it shows ``fn`` one example's shape, and holds the
whole batch underneath (``.batched``, with the batch on axis 0). When an op meets one,
the map's interpreter (``Batching``) takes it instead of computing: the op's **batching rule** says how to
compute the op for every example at once with ordinary ops on the batch::

    rule(values, batched, **params) -> (outputs, out_batched)

``values`` are the op's inputs as whole batches (where ``batched[i]`` is True: the
batch is on axis 0) or as values shared by every example (False). The rule returns
the outputs and whether each one is batched. An op declares its rule in its own
block with ``defbatch``, beside its VJP and JVP (``sum``'s moves its ``axis`` one to
the right, past the batch). ``tg.vectorized_map`` (``teachgrad.autodiff.vectorize``)
gives ops declared ``elementwise`` a rule by broadcasting, and runs an op with none
(or whose rule returns ``NotImplemented``) once per example, in a loop, with a warning
naming it once.

The ops a rule runs are ordinary ops on ordinary tensors: a ``GradientTape`` entered
*outside* the ``vectorized_map`` records them (so ``grad(vmap(f))`` works), a graph
being built gets them as nodes (so ``vectorized_map`` works in ``tg.function``). A
tape or accumulator entered *inside* ``fn`` instead records the op as ``fn`` sees it,
on ``BatchedTensor``s (so ``vmap(grad(f))``, per-example gradients, works: its VJP
rules run on BatchedTensors, and so are batched in turn). That split is the recorders'
order, as for nested tapes: each running ``vectorized_map`` (its *frame*) has an entry
number on the recorders' stack, and an interpreter of its own (``Batching``, in
``teachgrad.ops.core.apply``) over the one below it: an outer map's, the graph being
built, or eager computation.
"""
from ...state import state
from ...tensor import Tensor, next_tensor_id


class BatchedTensor(Tensor):
    """A value inside ``tg.vectorized_map``: one example's view of a batch.

    ``shape`` and ``dtype`` are one example's; ``batched`` holds every example's
    (batch on axis 0). It has no value of its own (``numpy()`` refuses): return it
    from the mapped function to see it.
    """

    __slots__ = ("batched", "frame")

    def __init__(self, batched, frame):
        self.value = None
        self.id = next_tensor_id()
        shape = batched.shape
        self.shape = None if shape is None else tuple(shape[1:])
        self.dtype = batched.dtype
        self.name = None
        self.batched = batched
        self.frame = frame
        if batched.value is None:   # a graph's batch: remembered (see Frame.views)
            frame.views.setdefault(batched.id, []).append(self)

    def numpy(self):
        raise RuntimeError(
            "This tensor differs from example to example inside tg.vectorized_map, so it "
            "has no single value here. Return it from the mapped function to get every "
            "example's value, stacked.")

    def __bool__(self):
        raise TypeError(
            "A tensor that differs from example to example inside tg.vectorized_map cannot "
            "be a Python bool: each example may take the other branch. Use tg.where(pred, "
            "a, b), or tg.cond / tg.while_loop, which run both ways and select.")

    def __repr__(self):
        return (f"<tg.BatchedTensor shape={self.shape} dtype={self.dtype}: one example "
                f"of a batch of {self.frame.size}>")


def batched_at(x, frame):
    """Is ``x`` a value of ``frame``'s batch (rather than shared by its examples)?"""
    return isinstance(x, BatchedTensor) and x.frame is frame


def innermost_frame(args):
    """The innermost running ``vectorized_map`` some of ``args`` belong to (None if
    none does: then the op runs as usual)."""
    frame = None
    for a in args:
        if isinstance(a, BatchedTensor):
            if all(a.frame is not f for f in state.batching):
                raise RuntimeError(
                    "A tensor from inside a tg.vectorized_map was used after it returned "
                    "(kept in a variable or a list outside the mapped function?). Return "
                    "it from the mapped function instead.")
            if frame is None or a.frame.entry > frame.entry:
                frame = a.frame
    return frame


def unbatchable_gradient(what):
    """The error for ``what`` (a node, a loop or branch body) built from a map's values
    directly: what a graph's tg.while_loop or tg.cond gradient does when mapped over its
    cotangents. (The forward loop and branch batch their bodies themselves.)"""
    return NotImplementedError(
        f"tg.vectorized_map cannot yet batch {what} built from the map's values, as the "
        f"gradient of a graph's tg.while_loop or tg.cond is when mapped over its cotangents. "
        f"Take the gradient inside the mapped function instead (tg.vmap(tg.grad(f))), run "
        f"eagerly, or loop over the cotangents (tape.jacobian(..., "
        f"experimental_use_pfor=False)).")


def batch_axis(axis, ndim):
    """``axis`` of one example (an int, a tuple, or None: every axis; negative counts from
    the end), as axes of the batch: one further right."""
    if axis is None:
        return tuple(range(1, ndim + 1))
    if isinstance(axis, (tuple, list)):
        return tuple(a % ndim + 1 if ndim else 1 for a in axis)
    return axis % ndim + 1 if ndim else 1

