"""The Jacobian of a target whose size a graph learns only when it runs: a loop of rows.

``tape.jacobian(y, x)`` seeds one backward pass per entry of ``y`` (see
``jacobians.py``). With ``y`` of shape ``[None, 3]`` in a graph, the number of
entries is not known while the graph is built, so the seeds cannot be listed
then. As TensorFlow's pfor does for such a target, the rows are computed by a
``tg.while_loop`` over the run-time size ``n`` of ``y``: iteration ``k`` builds the
one-hot seed ``e_k`` (``scatter_update`` of a one into zeros like the flattened
target), runs the backward pass seeded with it, and writes the result, row ``k``
of the Jacobian, to a TensorArray of ``n`` elements. The loop is one While node
whose body is one backward pass; the stacked rows are then shaped
``y.shape + x.shape`` (both known when the graph runs).
"""
import numpy as np

from ..control_flow.tensor_array import TensorArray
from ..control_flow.while_loop import while_loop
from ..ops import expand_dims, reshape, reshape_like, zeros, zeros_like
from ..ops.shape.rows import resize_rows, row_count
from ..ops.shape.updates import scatter_update
from ..tensor import constant


def looped_jacobian(tape, target, sources, unconnected):
    """For each of ``sources`` (a list), the Jacobian of ``target`` (of a shape known only
    when the graph runs), or None where no gradient reaches that source."""
    flat = reshape(target, (-1,))
    n = row_count(flat)
    reached = []

    def seed(k):
        one = constant(np.ones((), target.dtype.type))
        return reshape_like(scatter_update(zeros_like(flat), k, one), target)

    def body(k, rows):
        grads = tape._differentiate(target, sources, seed(k), unconnected, free=False)
        reached[:] = [g is not None for g in grads]
        grads = [_dense(g) if g is not None else zeros_like(s)
                 for g, s in zip(grads, sources)]
        return k + 1, [ta.write(k, g) for ta, g in zip(rows, grads)]

    start = [TensorArray.of_rows(resize_rows(expand_dims(zeros_like(s), 0), n,
                                             constant(np.int64(1))), "jacobian_rows")
             for s in sources]
    _, rows = while_loop(lambda k, rows: k < n, body, [constant(np.int64(0)), start],
                         name="jacobian_loop")
    return [_shaped(ta.stack(), target, s) if r else None
            for ta, s, r in zip(rows, sources, reached)]


def _shaped(rows, target, source):
    """``rows`` (``[n, *source.shape]``) as ``target.shape + source.shape``: the shape of
    a tensor broadcast from the two (zeros, so only its shape is read)."""
    rank = len(source.shape)
    like = reshape_like(zeros_like(target), target) if rank == 0 else \
        expand_dims(zeros_like(target), tuple(range(-rank, 0)))
    like = like + zeros(source.shape, target.dtype) if None not in source.shape else \
        like + zeros_like(source, dtype=target.dtype)
    return reshape_like(rows, like)


def _dense(g):
    return g.to_dense() if hasattr(g, "to_dense") else g
