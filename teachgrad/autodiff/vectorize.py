"""Vectorization: ``tg.vectorized_map(fn, elems)`` and ``tg.vmap(fn, in_axes, out_axes)``.

Both run a function written for one example on a whole batch at once, without a Python
loop: ``fn`` is called once, with ``BatchedTensor`` arguments that show it one
example's shape, and every op it applies runs its batching rule on the whole batch
(``teachgrad.ops.core.batching``). So::

    per_example_grads = tg.vmap(tg.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)

computes one gradient per example in one pass, where a loop would run ``len(xs)``
backward passes. The result equals the loop's, example by example.
"""
import functools

from .. import nest, validate
from ..ops import add, gather, getitem, identity, minimum, moveaxis, zeros_like
from ..ops.core.batching import BatchedTensor, batched_at
from ..ops.shape.reshape import repeat_like
from ..ops.shape.rows import row_count, row_indices
from ..state import state
from ..tensor import Tensor, Variable, constant
from .batch_fallback import Frame


def vmap(fn, in_axes=0, out_axes=0):
    """``fn`` made to work on batches, JAX's form: ``tg.vmap(fn)(xs)`` stacks ``fn(x)``
    for each ``x`` in ``xs``, computed in one pass.

    Args:
      fn: a function of one example: pytrees (nested tuples, lists, dicts, namedtuples)
        of tensors in, a tensor or a pytree of them out.
      in_axes: the axis each argument's batch runs along, or None for an argument
        shared by every example (it may then be anything, a string or a function too):
        one int or None for every argument, or a tuple with one entry per positional
        argument, each entry a *prefix* of its argument's tree (``{"w": None, "b": 0}``
        for a dict argument, one int or None for a whole subtree). Keyword arguments
        are mapped over axis 0, as in JAX.
      out_axes: where the batch axis goes in each output, or None for an output that
        is the same for every example: a prefix of ``fn``'s result tree likewise.
    """
    validate.callable_(fn, "fn", "tg.vmap")
    _check_axes_spec(in_axes, "in_axes", "tg.vmap")
    _check_axes_spec(out_axes, "out_axes", "tg.vmap")
    if isinstance(in_axes, dict):
        validate.fail(TypeError, "tg.vmap", "in_axes", "an int, None, or a tuple with one "
                      "entry per positional argument", in_axes,
                      "For one dict argument write in_axes=({...},).")

    return functools.wraps(fn)(batched(fn, in_axes, out_axes, "tg.vmap"))


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """``fn`` applied to each element of ``elems`` along axis 0, computed in one pass,
    TensorFlow's form: ``tg.vectorized_map(lambda x: x * x, tg.constant([1., 2., 3.]))`` is
    ``[1., 4., 9.]``. ``elems`` may be a structure of tensors (each with the same first
    dimension, or a first dimension of 1: that tensor's one element is every
    example's, as TensorFlow broadcasts it); ``fn`` gets one element of the same
    structure.

    An op without a batching rule runs once per element (``fallback_to_while_loop``
    must then be True; ``warn`` says so once per op, as TensorFlow's does).
    """
    validate.callable_(fn, "fn", "tg.vectorized_map")
    validate.boolean(warn, "warn", "tg.vectorized_map")
    if not validate.boolean(fallback_to_while_loop, "fallback_to_while_loop",
                            "tg.vectorized_map"):
        raise NotImplementedError("tg.vectorized_map(fallback_to_while_loop=False) is not "
                                  "supported: ops without a batching rule always loop.")
    if not nest.tree_leaves(elems):
        validate.fail(ValueError, "tg.vectorized_map", "elems", "a tensor, or a structure "
                      "holding at least one, to map over", elems)
    return batched(fn, 0, 0, "tg.vectorized_map", names=["elems"], warn=warn,
                   broadcast=True)(elems)


def over_directions(fn):
    """``tg.vmap(fn)`` for a transformation's map over its own directions (``tg.jacfwd``'s
    one-hot tangents, a Jacobian's seeds): they are not examples, so a random draw in
    ``fn`` is the same for all of them."""
    return batched(fn, 0, 0, "tg.vmap", draws_apart=False)


def batched(fn, in_axes, out_axes, where, names=None, warn=True, broadcast=False,
            draws_apart=True):
    """``fn`` made to run once on a whole batch: the function ``tg.vmap`` returns.

    Calling it starts a map (a new *frame*, whose interpreter batches the ops ``fn``
    applies), calls ``fn`` on the examples' views of the batches, and stacks its results.
    ``names``: what the error messages call each positional argument (``argument i``
    unless given; keyword arguments are batched along axis 0); ``broadcast``: a batch of
    one is every example's; ``draws_apart``: each example draws its own random numbers.
    """
    def batched_fn(*args, **kwargs):
        frame, (packed, packed_kwargs) = _batched_inputs(
            args, kwargs, in_axes, where, names, warn, broadcast, draws_apart)
        with frame.entered():
            result = fn(*packed, **packed_kwargs)
        return _outputs(result, frame, out_axes, where)
    return batched_fn


def _batched_inputs(args, kwargs, in_axes, where, names, warn, broadcast, draws_apart):
    """A new frame for a call with ``args`` and ``kwargs``, and the arguments as ``fn``
    sees them inside it: each batched leaf a ``BatchedTensor`` over its batch."""
    names = names or [f"argument {i}" for i in range(len(args))]
    axes = _argument_axes(args, in_axes, where) + [0] * len(nest.tree_leaves(kwargs))
    leaves, treedef = nest.tree_flatten((tuple(args), kwargs))
    labels = [names[i] + path for i, arg in enumerate(args) for path in nest.leaf_paths(arg)]
    labels += [f"keyword argument {path[2:-2]!r}" for path in nest.leaf_paths(kwargs)]
    flat = [_as_input(leaf, axis, label, where)
            for leaf, axis, label in zip(leaves, axes, labels)]
    if broadcast:
        flat, axes = _broadcast_ones(flat, axes)
    frame = _frame(flat, axes, labels, where, warn)
    frame.draws_apart = draws_apart
    batches = [moveaxis(t, axis, 0) if axis not in (None, 0) else t
               for t, axis in zip(flat, axes)]
    inputs = [t if axis is None else BatchedTensor(t, frame)
              for t, axis in zip(batches, axes)]
    return frame, nest.tree_unflatten(treedef, inputs)


def _check_axes_spec(spec, name, where):
    entries = nest.tree_leaves(spec) if isinstance(spec, (list, tuple, dict)) else [spec]
    for entry in entries:
        if entry is not None and (type(entry) is not int):
            validate.fail(TypeError, where, name, "an int or None, or a tree of them (a "
                          "prefix of the values' trees)", spec)


def _argument_axes(args, in_axes, where):
    """One axis (an int or None) per leaf of ``args``."""
    if isinstance(in_axes, (list, tuple)):
        if len(in_axes) != len(args):
            validate.fail(ValueError, where, "in_axes", f"one entry per positional argument "
                          f"({len(args)})", in_axes)
        return nest.broadcast_prefix(tuple(in_axes), tuple(args), where, "in_axes",
                                     "the arguments")
    return [in_axes] * len(nest.tree_leaves(tuple(args)))


def _as_input(leaf, axis, name, where):
    """One leaf of the arguments as a tensor, its batch axis checked (a shared leaf,
    ``axis`` None, is passed on as it is: it may be a number, a string, a function)."""
    if axis is None:
        return leaf
    if isinstance(leaf, Tensor):
        tensor = leaf
    else:
        tensor = constant(validate.tensor_like(leaf, name, where))
    if isinstance(tensor, Variable):
        # Read by an op, as every op reads a Variable, so that a tape watching it and an
        # accumulator pushing its tangent see the read (its bare snapshot they would not).
        tensor = identity(tensor)
    ndim = len(tensor.shape) if tensor.shape is not None else None
    if ndim == 0:
        validate.fail(ValueError, where, name, "a tensor with an axis to map over (a batch "
                      "of examples), not a scalar", leaf)
    if ndim is not None and not -ndim <= axis < ndim:
        validate.fail(ValueError, where, "in_axes", f"an axis of {name}, which has {ndim} "
                      f"(so -{ndim} to {ndim - 1})", axis)
    return tensor


def _broadcast_ones(flat, axes):
    """TensorFlow's vectorized_map broadcasts an input whose batch has one element when
    another's has more: each example reads that one element (a shared value here)."""
    sizes = {t.shape[axis] for t, axis in zip(flat, axes)
             if axis is not None and t.shape is not None}
    if None in sizes and state.graph is not None and sum(a is not None for a in axes) > 1:
        return _broadcast_when_run(flat, axes)
    if 1 not in sizes or len(sizes - {1}) != 1 or None in sizes:
        return flat, axes
    shared = [axis is not None and t.shape is not None and t.shape[axis] == 1
              for t, axis in zip(flat, axes)]
    return ([getitem(moveaxis(t, axis, 0), 0) if s else t for t, axis, s in
             zip(flat, axes, shared)], [None if s else axis for axis, s in zip(axes, shared)])


def _broadcast_when_run(flat, axes):
    """The same, in a graph that does not know every batch's size: when the graph runs,
    example ``k`` reads row ``min(k, rows - 1)`` of each batch, so a batch of one is
    every example's. Batches of other differing sizes fail then: their row counts are
    lined up by adding zeros, which broadcast only where a size is one."""
    batches = [t if axis is None else moveaxis(t, axis, 0) for t, axis in zip(flat, axes)]
    mapped = [b for b, axis in zip(batches, axes) if axis is not None]
    examples = row_indices(functools.reduce(
        lambda x, y: add(x, y, name="vectorized_map_batch_sizes_must_match_or_be_1"),
        [zeros_like(row_indices(b)) for b in mapped]))
    return ([b if axis is None else gather(b, minimum(examples, row_count(b) - 1))
             for b, axis in zip(batches, axes)], [None if a is None else 0 for a in axes])


def _frame(flat, leaf_axes, labels, where, warn):
    """The batch size every batched argument agrees on, as a new frame."""
    sizes = [(label, t.shape[axis]) for label, t, axis in zip(labels, flat, leaf_axes)
             if axis is not None]
    if not sizes:
        raise ValueError(f"{where}: no argument is batched (every in_axes entry is None, or "
                         f"the mapped arguments hold no tensors); "
                         f"map over at least one argument.")
    known = {size for _, size in sizes if size is not None}
    if len(known) > 1:
        listed = ", ".join(f"{label}: {size}" for label, size in sizes)
        raise ValueError(f"{where}: the batched inputs have different batch sizes ({listed}); "
                         f"every mapped input must have the same size along its batch axis.")
    first = next(i for i, axis in enumerate(leaf_axes) if axis is not None)
    like = flat[first] if leaf_axes[first] == 0 else moveaxis(flat[first], leaf_axes[first], 0)
    return Frame(known.pop() if known else None, like, warn)


def _outputs(result, frame, out_axes, where):
    """``fn``'s result for the whole batch: each output's batch, on its ``out_axes``."""
    leaves, treedef = nest.tree_flatten(result)
    if isinstance(out_axes, (list, tuple, dict)):
        axes = nest.broadcast_prefix(out_axes, result, where, "out_axes", "the outputs")
    else:
        axes = [out_axes] * len(leaves)
    return nest.tree_unflatten(treedef, [_output(leaf, frame, axis, where)
                                         for leaf, axis in zip(leaves, axes)])


def _output(leaf, frame, axis, where):
    if batched_at(leaf, frame):
        batch = leaf.batched
    else:
        shared = leaf if isinstance(leaf, Tensor) else constant(
            validate.tensor_like(leaf, "the mapped function's result", where))
        if axis is None:
            return shared
        batch = repeat_like(shared, frame.like)
    if axis is None:
        raise ValueError(f"{where}: out_axes is None for an output that differs from example "
                         f"to example; give it an axis (0 stacks the examples first).")
    ndim = len(batch.shape)
    if not -ndim <= axis < ndim:
        validate.fail(ValueError, where, "out_axes", f"an axis of the output, which has {ndim}",
                      axis)
    return batch if axis == 0 else moveaxis(batch, 0, axis)
