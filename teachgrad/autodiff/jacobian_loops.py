"""Jacobians of targets whose size a graph learns only when it runs: a loop of rows.

``tape.jacobian(y, x)`` seeds one backward pass per entry of ``y`` (see
``jacobians.py``). With ``y`` of shape ``[None, 3]`` in a graph, the number of
entries is not known while the graph is built, so the seeds cannot be listed
then. As TensorFlow's pfor does for such a target, the rows are computed by a
``tg.while_loop`` over the run-time count ``n``: iteration ``k`` builds the one-hot
seed ``e_k`` (``scatter_update`` of a one into zeros like the flattened target),
runs the backward pass seeded with it, and writes the result, row ``k`` of the
Jacobian, to a TensorArray of ``n`` elements. The loop is one While node whose
body is one backward pass; the stacked rows are then shaped ``y.shape + x.shape``
(both known when the graph runs).

``batch_jacobian`` with examples of unknown size loops the same way over the
entries of ONE example, each seed a one at entry ``k`` of every example.
"""
import numpy as np

from ..control_flow.tensor_array import TensorArray
from ..control_flow.while_loop import while_loop
from ..ops import expand_dims, moveaxis, reshape, reshape_like, zeros_like
from ..ops.shape.rows import resize_rows, row_count
from ..ops.shape.updates import scatter_update
from ..tensor import constant
from .tape_gradient import differentiate


def looped_jacobian(tape, target, sources, unconnected):
    """For each of ``sources`` (a list), the Jacobian of ``target`` (of a shape known only
    when the graph runs), or None where no gradient reaches that source."""
    rows, reached = _rows(tape, target, sources, target, lambda one_hot: one_hot, unconnected)
    return [_shaped(r, target, s, 0) if ok else None
            for r, s, ok in zip(rows, sources, reached)]


def looped_batch_jacobian(tape, target, source):
    """``batch_jacobian`` of a target whose examples have a size known only when the graph
    runs: ``[b, y1, ...]`` and ``[b, x1, ...]`` give ``[b, y1, ..., x1, ...]``."""
    (rows,), _ = _rows(tape, target, [source], target[0],
                       lambda one_hot: zeros_like(target) + one_hot, "zero")
    return _shaped(moveaxis(rows, 0, 1), target, source, 1)


def _rows(tape, target, sources, entries, seed_for, unconnected):
    """One backward pass per entry of ``entries`` (the target, or one example of it), in a
    while loop: the seed is ``seed_for`` of its one-hot. Returns, for each source, the
    stacked passes ``[n, *source.shape]``, and which sources a pass reached."""
    flat = reshape(entries, (-1,))
    n = row_count(flat)
    one = constant(np.ones((), target.dtype.type))
    reached = []

    def body(k, rows):
        seed = seed_for(reshape_like(scatter_update(zeros_like(flat), k, one), entries))
        grads = differentiate(tape, target, sources, seed, unconnected, free=False)
        reached[:] = [g is not None for g in grads]
        grads = [_dense(g) if g is not None else zeros_like(s)
                 for g, s in zip(grads, sources)]
        return k + 1, [ta.write(k, g) for ta, g in zip(rows, grads)]

    start = [TensorArray.of_rows(resize_rows(expand_dims(zeros_like(s), 0), n,
                                             constant(np.int64(1))), "jacobian_rows")
             for s in sources]
    _, rows = while_loop(lambda k, rows: k < n, body, [constant(np.int64(0)), start],
                         name="jacobian_loop")
    return [ta.stack() for ta in rows], reached


def _shaped(rows, target, source, shared):
    """``rows`` as ``target.shape + source.shape[shared:]`` (``shared``: the leading axes
    they have in common, a batch): the shape of zeros broadcast from the two."""
    t_rank, s_rank = len(target.shape), len(source.shape) - shared
    like = zeros_like(target)
    if s_rank:
        like = expand_dims(like, tuple(range(-s_rank, 0)))
    other = zeros_like(source, dtype=target.dtype)
    if t_rank > shared:
        other = expand_dims(other, tuple(range(shared, t_rank)))
    return reshape_like(rows, like + other)


def _dense(g):
    return g.to_dense() if hasattr(g, "to_dense") else g
