"""Jacobians from a tape: every row in one backward pass, vectorized over the seeds.

A backward pass seeded with a cotangent ``v`` (``output_gradients=v``) gives the
vector-Jacobian product ``v^T J``. Seeded with the one-hot ``e_k`` it gives row ``k``
of the Jacobian: ``J[k, :]``. So the Jacobian of a target with ``n`` entries is ``n``
backward passes, one per one-hot seed; ``experimental_use_pfor=False`` runs them so,
one after the other.

They are the same pass ``n`` times over, with a different seed each time: what
``tg.vmap`` is for. ``experimental_use_pfor=True`` (the default, TensorFlow's pfor)
maps the backward pass over the rows of the identity matrix, so it runs ONCE, and
each VJP rule runs on a batch of ``n`` cotangents at a time (its batching rule: a
``matmul`` of ``[n, ...]`` cotangents instead of ``n`` matmuls)::

    rows = tg.vmap(lambda seed: tape.gradient(y, x, output_gradients=seed))(eye)

The numbers are the same either way; one pass is far fewer Python steps.

``batch_jacobian`` is the Jacobian of a batch of examples, each with its own: example
``i`` of the target depends only on example ``i`` of the source. Then one seed with a
one (for entry ``k`` of every example's target) in each example gives row ``k`` of
every example's Jacobian in one pass, so it needs as many seeds as ONE example has
entries, not the whole batch.
"""
import math

from .. import backend, nest, validate
from ..ops import IndexedSlices, moveaxis, reshape, stack, zeros, zeros_like
from ..tensor import constant
from .aggregation import unconnected as unconnected_option
from .jacobian_loops import looped_batch_jacobian, looped_jacobian
from .vectorize import over_directions

_GRAPH_CONTROL_FLOW = frozenset({"While", "If"})
_LOOP_NEEDS_PERSISTENT = ("GradientTape must be created with persistent=True to compute the "
                          "{what} with eager execution enabled and with experimental_use_pfor "
                          "set to False: the loop runs one backward pass per row, and a "
                          "non-persistent tape allows one. Keep experimental_use_pfor=True "
                          "(one pass for every row), or make the tape persistent.")


def jacobian(tape, target, sources, unconnected_gradients, parallel_iterations, use_pfor):
    """``tape``'s Jacobian of ``target`` (one tensor) with respect to each of ``sources``:
    shape ``target.shape + source.shape`` each, in the structure of ``sources``."""
    where = "GradientTape.jacobian"
    unconnected = unconnected_option(unconnected_gradients, where)
    _check_options(parallel_iterations, use_pfor, where)
    flat_sources = nest.flatten(sources)
    if target.size is None:   # known when the graph runs: a loop over its entries
        if tape.graph is None or target.shape is None:
            raise ValueError(f"{where} needs a target of known rank, got {target!r}: give "
                             f"the placeholders it depends on a shape.")
        return nest.pack_sequence_as(sources, looped_jacobian(
            tape, target, flat_sources, unconnected))
    n, shape = target.size, tuple(target.shape)
    if n == 0:   # no rows: nothing to differentiate
        rows = [zeros((0,) + tuple(s.shape), s.dtype) for s in flat_sources]
    else:
        seeds = backend.xp.reshape(backend.xp.eye(n, dtype=target.dtype), (n,) + shape)
        if use_pfor and _vectorizable(tape, where):
            rows = _one_pass(tape, target, flat_sources, constant(seeds), unconnected, where)
        else:
            _check_loop_allowed(tape, "jacobian")
            rows = _pass_per_row(tape, target, flat_sources,
                                 [constant(seed) for seed in seeds], unconnected)
    jacobians = [None if r is None else reshape(r, shape + tuple(s.shape))
                 for r, s in zip(rows, flat_sources)]
    return nest.pack_sequence_as(sources, jacobians)


def batch_jacobian(tape, target, source, unconnected_gradients, parallel_iterations,
                   use_pfor):
    """``tape``'s per-example Jacobians: target ``[b, y1, ...]`` and source ``[b, x1, ...]``
    give ``[b, y1, ..., x1, ...]``, where ``[i]`` is the Jacobian of ``target[i]`` with
    respect to ``source[i]`` (which ``target[i]`` alone should depend on)."""
    where = "GradientTape.batch_jacobian"
    unconnected_option(unconnected_gradients, where)   # checked; see the method's docstring
    _check_options(parallel_iterations, use_pfor, where)
    _check_batch_shapes(target, source)
    example = tuple(target.shape[1:])
    if None in example and tape.graph is not None:   # known when the graph runs: a loop
        return looped_batch_jacobian(tape, target, source)
    t = math.prod(example)
    batch = target.shape[0] if target.shape[0] is not None else source.shape[0]
    out_shape = (-1 if batch is None else batch,) + example + tuple(source.shape[1:])
    if t == 0:
        if batch is None:
            raise ValueError(f"{where}: the target's examples have no entries and the batch "
                             f"size is unknown, so the (empty) result has no known shape.")
        return zeros(out_shape, target.dtype)
    # Seed k: a one at entry k of each example's target (one example's one-hot,
    # repeated along the batch, which the target's shape gives in a graph too).
    one_hots = backend.xp.reshape(backend.xp.eye(t, dtype=target.dtype), (t, 1) + example)
    if use_pfor and _vectorizable(tape, where):
        (rows,) = _one_pass(tape, target, [source], constant(one_hots), "zero", where,
                            seed_for=lambda one_hot: _along_batch(one_hot, target))
    else:
        _check_loop_allowed(tape, "batch_jacobian")
        seeds = [_along_batch(constant(one_hot), target) for one_hot in one_hots]
        (rows,) = _pass_per_row(tape, target, [source], seeds, "zero")
    # rows[k, i] is row k of example i's Jacobian: bring the examples first.
    return reshape(moveaxis(rows, 0, 1), out_shape)


def _one_pass(tape, target, sources, seeds, unconnected, where, seed_for=None):
    """One backward pass mapped over ``seeds`` (the rows of the identity): for each
    source, its gradient for every seed, stacked (``[n, *source.shape]``), or None."""
    reached = []   # which sources the pass reached: the mapped function says

    def row(seed):
        if seed_for is not None:
            seed = seed_for(seed)
        grads = tape.differentiate(target, sources, seed, unconnected,
                                    free=not tape.persistent)
        reached[:] = [g is not None for g in grads]
        return tuple(_dense(g) for g in grads if g is not None)

    try:
        stacked = iter(over_directions(row)(seeds))
    except (ValueError, NotImplementedError) as err:   # an op that could not be batched
        raise ValueError(f"{where}: Encountered an exception while vectorizing the "
                         f"{where.split('.')[1]} computation ({err}). Vectorization can be "
                         f"disabled by setting experimental_use_pfor to False.") from err
    return [next(stacked) if r else None for r in reached]


def _vectorizable(tape, where):
    """Can ``tg.vmap`` map this tape's backward pass? Not yet through a loop or a branch
    of a graph (the gradients of While and If nodes do not batch there): then the rows
    are computed one at a time, which works everywhere (the same numbers, more passes)."""
    if tape.graph is None:
        return True
    return not ({node.op.name for node in tape.recorded_nodes()} & _GRAPH_CONTROL_FLOW)


def _pass_per_row(tape, target, sources, seeds, unconnected):
    """One backward pass per seed, the rows stacked: what ``_one_pass`` computes, in a
    Python loop (TensorFlow's ``experimental_use_pfor=False``)."""
    rows = []
    for k, seed in enumerate(seeds):
        last = k == len(seeds) - 1
        rows.append(tape.differentiate(target, sources, seed, unconnected,
                                        free=last and not tape.persistent))
    columns = []
    for i, s in enumerate(sources):
        column = [row[i] for row in rows]
        if all(g is None for g in column):
            columns.append(None)
            continue
        columns.append(stack([zeros(s.shape, s.dtype) if g is None else _dense(g)
                              for g in column]))
    return columns


def _along_batch(one_hot, target):
    """One example's one-hot seed (shape ``[1, y1, ...]``) repeated along the batch: the
    target's shape (known when the graph runs, if not before), by broadcasting."""
    return zeros_like(target) + one_hot


def _check_options(parallel_iterations, use_pfor, where):
    validate.boolean(use_pfor, "experimental_use_pfor", where)
    if parallel_iterations is not None:
        # Accepted, as TensorFlow's knob for memory; teachgrad maps every row at once.
        validate.integer(parallel_iterations, "parallel_iterations", where, minimum=1)


def _check_loop_allowed(tape, what):
    if tape.graph is None and not tape.persistent:
        raise RuntimeError(_LOOP_NEEDS_PERSISTENT.format(what=what))


def _check_batch_shapes(target, source):
    """TensorFlow's conditions: both of rank 2 or more, and the same first dimension."""
    for role, tensor in (("target", target), ("source", source)):
        shape = tensor.shape
        if shape is None or len(shape) < 2:
            raise ValueError(
                f"GradientTape.batch_jacobian: Shape {_shape(shape)} of the {role} must "
                f"have rank at least 2: [b, ...], the batch first, then one example's axes. "
                f"For a Jacobian without a batch, use tape.jacobian.")
    first, other = target.shape[0], source.shape[0]
    if first is not None and other is not None and first != other:
        raise ValueError(
            f"GradientTape.batch_jacobian: Need first dimension of target shape "
            f"{_shape(target.shape)} and source shape {_shape(source.shape)} to match: it "
            f"is the batch, and example i of the target depends on example i of the source.")


def _shape(shape):
    return "<unknown>" if shape is None else tuple(shape)


def _dense(g):
    return g.to_dense() if isinstance(g, IndexedSlices) else g
