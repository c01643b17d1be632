"""``tg.gradients`` called inside ``tg.vectorized_map``, of values computed outside it.

TensorFlow's pfor tests write a loop body such as::

    def loop_fn(i):
        y_i = tg.gather(y, i)                  # y = x * x, computed outside the map
        return tg.gather(tg.gradients(y_i, x)[0], i)

``y_i`` is one example's view (a ``BatchedTensor``) of a node the graph holds for the
whole batch, ``Y = gather(y, I)``, and the graph knows nothing of a node for ``y_i``
alone. Its gradient is nonetheless one backward pass through ``Y``: example ``b``'s is
the VJP of ``Y`` seeded with a cotangent that is ``y_i``'s own (ones, or its grad_y) in
row ``b`` and zero in every other row. Seeded with that per-example cotangent (itself a
``BatchedTensor``), the ordinary backward pass runs each VJP rule batched, once for
every example (as TensorFlow's pfor vectorizes its gradient). The ``xs`` must be tensors
of the graph: an example's view of the map's values has no node of its own to
differentiate with respect to (a tape inside the mapped function does that).
"""
from ..ops import equal, expand_dims, ones_like, reshape, where, zeros_like
from ..ops.core.batching import BatchedTensor, innermost_frame
from ..ops.shape.rows import row_indices


def has_batched(values):
    """Is one of ``values`` a map's per-example view?"""
    return any(isinstance(v, BatchedTensor) for v in values)


def per_example_gradients(gradients, ys, xs, grad_ys, **options):
    """``gradients(ys, xs, grad_ys, **options)`` for ``ys`` that are views of the
    innermost map's batches (``gradients`` is ``tg.gradients`` itself)."""
    frame = innermost_frame(ys)
    if any(isinstance(y, BatchedTensor) and y.frame is not frame for y in ys):
        raise NotImplementedError(
            "tg.gradients inside nested tg.vectorized_map calls differentiates the views of "
            "one map at a time: its ys and xs here come from different maps. Call it in the "
            "map whose values it differentiates.")
    if has_batched(xs):
        raise NotImplementedError(
            "tg.gradients inside tg.vectorized_map differentiates with respect to tensors "
            "computed outside the map (its graph holds them), not with respect to one "
            "example's view of the map's values: the graph's nodes read the whole batch. "
            "Differentiate with a tg.GradientTape inside the mapped function (its ops are "
            "recorded per example), or with respect to the batch outside the map.")
    example = BatchedTensor(row_indices(frame.like), frame)   # each example's own index
    batch_ys, seeds = [], []
    for y, g in zip(ys, grad_ys):
        if isinstance(y, BatchedTensor):
            batch_ys.append(y.batched)
            seeds.append(_own_row(y.batched, example, g))
        else:
            batch_ys.append(y)
            seeds.append(g)
    return gradients(batch_ys, xs, grad_ys=seeds, **options)


def _mask(batch, example):
    """True in ``example``'s row of ``batch``, broadcastable against it."""
    rows = equal(row_indices(batch), example)
    return reshape(rows, (-1,) + (1,) * (len(batch.shape) - 1))


def _own_row(batch, example, g):
    """A cotangent of ``batch``'s shape: ``g`` (one example's grad_y; ones where None) in
    ``example``'s row, zeros elsewhere."""
    zeros = zeros_like(batch)
    value = ones_like(batch) if g is None else expand_dims(g, 0) + zeros
    return where(_mask(batch, example), value, zeros)
