"""Joining and cutting along an axis: ``concat``, ``stack`` and ``split``. Each one's VJP
is the other move: a join's cotangent is split at the same places, a split's pieces'
cotangents are concatenated (unused pieces count as zeros).
"""
import numpy as np

from ... import backend, validate
from ...tensor import Tensor
from ..core.apply import innermost
from ..core.batching import batch_axis
from ..core.declare import defbatch, defeffect, defvjp_all, primitive, takes_complex
from ..core.inputs import operand
from .reshape import checked_axis, repeat_unbatched, reshape_as, shifted_axes_rule


def _joined(values, axis, where):
    """The checked arguments of a join: a non-empty sequence of values, an int axis."""
    values = validate.sequence(values, "values", where)
    if type(axis) is not int:
        validate.one_axis(axis, None, "axis", where)
    if not values:
        validate.fail(ValueError, where, "values", "a non-empty list of tensors", values)
    return values


# concat: join along an existing axis.  The cotangent is split at the same places.
concat_p = primitive("concat", lambda *xs, axis: backend.xp.concatenate(xs, axis=axis))
defeffect(concat_p, "fresh")
takes_complex(concat_p)
def concat(values, axis=0):
    return innermost.process(concat_p, *_joined(values, axis, "tg.concat"), axis=axis)
def _concat_vjp(ct, ans, *xs, axis):
    sizes = [x.shape[axis] for x in xs]
    if None in sizes:
        raise ValueError("The gradient of concat needs the sizes along the joined axis; give the "
                         "placeholders of its inputs a known size there.")
    return split(ct, sizes, axis=axis)
defvjp_all(concat_p, _concat_vjp)
defbatch(concat_p, shifted_axes_rule(concat_p, "axis"))

# stack: join along a new axis.  The cotangent is split along it and squeezed.
stack_p = primitive("stack", lambda *xs, axis: backend.xp.stack(xs, axis=axis))
defeffect(stack_p, "fresh")
takes_complex(stack_p)
def stack(values, axis=0):
    values = _joined(values, axis, "tg.stack")
    shapes = {tuple(v.shape) if isinstance(v, Tensor) else np.shape(v) for v in values}
    if len(shapes) > 1 and all(None not in s for s in shapes):
        raise ValueError(f"stack: all tensors in values must have the same shape, got "
                         f"{sorted(shapes)}.")
    return innermost.process(stack_p, *values, axis=axis)
defvjp_all(stack_p, lambda ct, ans, *xs, axis: [
    reshape_as(piece, x) for piece, x in zip(split(ct, len(xs), axis=axis), xs)])
def _stack_batch(values, batched, axis):
    values = repeat_unbatched(values, batched)
    return stack(values, axis=batch_axis(axis, values[0].ndim)), True   # an axis of the result
defbatch(stack_p, _stack_batch)


def _split_kernel(x, sizes, axis):
    return tuple(backend.xp.split(x, np.cumsum(sizes)[:-1].tolist(), axis=axis))

# split: cut into pieces along an axis (TensorFlow's sizes convention).
# The cotangent is the pieces' cotangents concatenated; unused pieces count as zeros.
split_p = primitive("split", _split_kernel, multiple_results=True)
defeffect(split_p, "view")
takes_complex(split_p)
def split(x, num_or_size_splits, axis=0):
    """Split ``x`` into ``num`` equal pieces, or pieces of the listed sizes."""
    x = operand(x, "x", "tg.split")
    axis = checked_axis(axis, x.ndim, "tg.split")
    length = x.shape[axis]
    if length is None:
        raise ValueError(f"split: the size of axis {axis} of {x.name} is unknown; split needs it.")
    if not isinstance(num_or_size_splits, (list, tuple)) and not (
            isinstance(num_or_size_splits, Tensor) and num_or_size_splits.ndim == 1):
        num_or_size_splits = validate.integer(num_or_size_splits, "num_or_size_splits",
                                              "tg.split", minimum=1)
        if length % num_or_size_splits:
            raise ValueError(f"split: axis {axis} of x (size {length}) cannot be cut into "
                             f"{num_or_size_splits} equal pieces (num_or_size_splits).")
        sizes = (length // num_or_size_splits,) * num_or_size_splits
    else:
        sizes = tuple(validate.integer(s, "num_or_size_splits", "tg.split", minimum=0)
                      for s in num_or_size_splits)
        if sum(sizes) != length or min(sizes, default=0) < 0:
            raise ValueError(f"split: sizes {list(sizes)} (num_or_size_splits) do not add up "
                             f"to {length}, the size of axis {axis}.")
    return list(innermost.process(split_p, x, sizes=sizes, axis=axis))
defvjp_all(split_p, lambda cts, ans, x, sizes, axis: [concat(cts, axis=axis)])
defbatch(split_p, lambda values, batched, sizes, axis: (
    tuple(innermost.process(split_p, values[0], sizes=sizes, axis=axis + 1)), True))
