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
from ..ops import identity, moveaxis
from ..ops.core.batching import BatchedTensor, batched_at
from ..ops.shape.reshape import repeat_like
from ..state import override, state
from ..tensor import Tensor, Variable, constant
from .batch_fallback import Frame


def vmap(fn, in_axes=0, out_axes=0):
    """``fn`` made to work on batches, JAX's form: ``tg.vmap(fn)(xs)`` stacks ``fn(x)``
    for each ``x`` in ``xs``, computed in one pass.

    Args:
      fn: a function of one example (tensors in, a tensor or a structure of them out).
      in_axes: for each positional argument, the axis its batch runs along, or None
        for an argument shared by every example; one int or None for all of them.
      out_axes: where the batch axis goes in each output (one int for all), or None
        for an output that is the same for every example.
    """
    validate.callable_(fn, "fn", "tg.vmap")
    _check_axes_spec(in_axes, "in_axes", "tg.vmap")
    _check_axes_spec(out_axes, "out_axes", "tg.vmap")

    @functools.wraps(fn)
    def batched_fn(*args):
        return vectorize(fn, args, in_axes, out_axes, "tg.vmap",
                         [f"argument {i}" for i in range(len(args))])
    return batched_fn


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """``fn`` applied to each element of ``elems`` along axis 0, computed in one pass,
    TensorFlow's form: ``tg.vectorized_map(lambda x: x * x, [1., 2., 3.])`` is
    ``[1., 4., 9.]``. ``elems`` may be a structure of tensors (each with the same first
    dimension); ``fn`` gets one element of the same structure.

    An op without a batching rule runs once per element (``fallback_to_while_loop``
    must then be True; ``warn`` says so once per op, as TensorFlow's does).
    """
    validate.callable_(fn, "fn", "tg.vectorized_map")
    validate.boolean(warn, "warn", "tg.vectorized_map")
    if not validate.boolean(fallback_to_while_loop, "fallback_to_while_loop",
                            "tg.vectorized_map"):
        raise NotImplementedError("tg.vectorized_map(fallback_to_while_loop=False) is not "
                                  "supported: ops without a batching rule always loop.")
    if not nest.flatten(elems):
        validate.fail(ValueError, "tg.vectorized_map", "elems", "a tensor, or a structure "
                      "holding at least one, to map over", elems)
    return vectorize(fn, (elems,), 0, 0, "tg.vectorized_map", ["elems"], warn=warn)


def vectorize(fn, args, in_axes, out_axes, where, names, warn=True):
    """Call ``fn(*args)`` once for the whole batch and return its stacked results
    (``names``: what the error messages call each argument)."""
    axes = _argument_axes(args, in_axes, where)
    flat, leaf_axes, labels = [], [], []
    for i, (arg, axis) in enumerate(zip(args, axes)):
        leaves = nest.flatten(arg)
        for k, leaf in enumerate(leaves):
            labels.append(names[i] if len(leaves) == 1 else f"{names[i]} (leaf {k})")
            flat.append(_as_input(leaf, axis, labels[-1], where))
            leaf_axes.append(axis)
    frame = _frame(flat, leaf_axes, labels, where, warn)
    batches = [moveaxis(t, axis, 0) if axis not in (None, 0) else t
               for t, axis in zip(flat, leaf_axes)]
    with override(batching=state.batching + (frame,)):
        inputs = [t if axis is None else BatchedTensor(t, frame)
                  for t, axis in zip(batches, leaf_axes)]
        packed = _pack(args, inputs)
        result = fn(*packed)
    return _outputs(result, frame, out_axes, where)


def _check_axes_spec(spec, name, where):
    entries = spec if isinstance(spec, (list, tuple)) else [spec]
    for entry in entries:
        if entry is not None and (type(entry) is not int):
            validate.fail(TypeError, where, name, "an int or None, or a list of them (one "
                          "per argument)", spec)


def _argument_axes(args, in_axes, where):
    if isinstance(in_axes, (list, tuple)):
        if len(in_axes) != len(args):
            validate.fail(ValueError, where, "in_axes", f"one entry per positional argument "
                          f"({len(args)})", in_axes)
        return list(in_axes)
    return [in_axes] * len(args)


def _as_input(leaf, axis, name, where):
    """One leaf of the arguments as a tensor, its batch axis checked."""
    if isinstance(leaf, Tensor):
        tensor = leaf
    else:
        tensor = constant(validate.tensor_like(leaf, name, where))
    if axis is None:
        return tensor
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


def _frame(flat, leaf_axes, labels, where, warn):
    """The batch size every batched argument agrees on, as a new frame."""
    sizes = [(label, t.shape[axis]) for label, t, axis in zip(labels, flat, leaf_axes)
             if axis is not None]
    if not sizes:
        raise ValueError(f"{where}: no argument is batched (every in_axes entry is None); "
                         f"map over at least one argument.")
    known = {size for _, size in sizes if size is not None}
    if len(known) > 1:
        listed = ", ".join(f"{label}: {size}" for label, size in sizes)
        raise ValueError(f"{where}: the batched inputs have different batch sizes ({listed}); "
                         f"every mapped input must have the same size along its batch axis.")
    first = next(i for i, axis in enumerate(leaf_axes) if axis is not None)
    like = flat[first] if leaf_axes[first] == 0 else moveaxis(flat[first], leaf_axes[first], 0)
    return Frame(known.pop() if known else None, like, warn)


def _pack(args, inputs):
    packed, start = [], 0
    for arg in args:
        count = len(nest.flatten(arg))
        leaves = inputs[start:start + count]
        packed.append(nest.pack_sequence_as(arg, leaves) if nest.is_nested(arg) else leaves[0])
        start += count
    return packed


def _outputs(result, frame, out_axes, where):
    """``fn``'s result for the whole batch: each output's batch, on axis ``out_axes``."""
    flat = nest.flatten(result)
    axes = out_axes if isinstance(out_axes, (list, tuple)) else [out_axes] * len(flat)
    if len(axes) != len(flat):
        validate.fail(ValueError, where, "out_axes", f"one entry per output ({len(flat)})",
                      out_axes)
    outs = [_output(leaf, frame, axis, where) for leaf, axis in zip(flat, axes)]
    return nest.pack_sequence_as(result, outs) if nest.is_nested(result) else outs[0]


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
