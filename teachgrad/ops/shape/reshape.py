"""Ops that move entries around without changing them: their VJPs move the
cotangent back (reshape it back, transpose it back); joining and cutting along an
axis are in ``join_split.py``.

Here too are the three helpers every VJP rule uses to bring a cotangent to an
input's shape. When ``x`` of shape (3, 1) is broadcast against (4, 3, 5), each
entry of ``x`` was used many times, so its gradient is the *sum* of the
cotangents of all its copies: sum over the added leading axes and over the
axes where ``x`` had size 1, then reshape back to ``x.shape`` (``unbroadcast``).
In a graph whose shapes are not all known yet, they use ops that read the
shape when the graph runs (``sum_like``, ``reshape_like``, ``broadcast_like``).
"""
import numpy as np

from ... import backend, validate
from ..core.apply import innermost
from ..core.batching import batch_axis
from ..core.declare import defbatch, defeffect, defjvp, defshape, defvjp, primitive, takes_complex
from ..core.grad_util import known
from ..core.inputs import operand
from ..elementwise.casts import cast, zeros


def checked_axis(axis, ndim, where="tg", name="axis"):
    """One axis, checked (an int in range) and made non-negative."""
    if type(axis) is not int or not -ndim <= axis < max(ndim, 1):
        axis = validate.one_axis(axis, ndim, name, where)
    return axis % ndim if ndim else 0


# -- lining batches up, for the batching rules (tg.vectorized_map) --------------

# repeat_like(value, like): ``value`` repeated along a new axis 0, as long as ``like``'s
# (known when the graph runs). Its cotangent is summed over that axis.
repeat_like_p = primitive("repeat_like", lambda value, like: backend.xp.broadcast_to(
    value, (like.shape[0],) + value.shape))
defeffect(repeat_like_p, "view", shape_only_inputs=(1,))
takes_complex(repeat_like_p)
def repeat_like(value, like): return innermost.process(repeat_like_p, value, like)
defvjp(repeat_like_p, lambda ct, ans, value, like: ct.sum(axis=0), None)
defjvp(repeat_like_p, lambda v_dot, ans, value, like: repeat_like(v_dot, like), None)
defshape(repeat_like_p, lambda value, like: [(
 None if value.shape is None or like.shape is None else (like.shape[0],) + tuple(value.shape),
 value.dtype)])


def _repeat_like_batch(values, batched):
    """Each example repeats ``value`` as long as ``like``'s axis 0 (axis 1 of a batch);
    a batch of values keeps its batch axis in front of the repeats."""
    (value, like), (value_batched, like_batched) = values, batched
    out = repeat_like(value, _swap_first_two(like) if like_batched else like)
    return (_swap_first_two(out), True) if value_batched else (out, False)
defbatch(repeat_like_p, _repeat_like_batch)


def _swap_first_two(x):
    return transpose(x, (1, 0) + tuple(range(2, x.ndim)))


def repeat_unbatched(values, batched):
    """``values`` with each unbatched one (shared by every example) repeated along a new
    axis 0, as long as the batched ones'."""
    like = next(v for v, b in zip(values, batched) if b)
    return [v if b else repeat_like(v, like) for v, b in zip(values, batched)]


def move_to_rank(x, rank):
    """A batch ``x`` (batch on axis 0) with size-1 axes after the batch axis until each
    example has ``rank`` axes: so it broadcasts against unbatched values of that rank."""
    while x.ndim - 1 < rank:
        x = expand_dims(x, 1)
    return x


def shifted_axes_rule(op, name="axes"):
    """The batching rule of an op whose param ``name`` is one example's axes (an int or
    a tuple of ints; None: every axis): the same axes, one further right, on the batch.
    Unbatched inputs are repeated for every example first."""
    def rule(values, batched, **params):
        values = repeat_unbatched(values, batched)
        params = dict(params, **{name: batch_axis(params[name], values[0].ndim - 1)})
        return innermost.process(op, *values, **params), True
    return rule


# reshape: same entries, new shape.  The cotangent is reshaped back.
reshape_p = primitive("reshape", lambda x, shape: backend.xp.reshape(x, shape))
defeffect(reshape_p, "view")
takes_complex(reshape_p)
def reshape(x, shape):
    if type(shape) is not tuple or not all(type(n) is int and n >= -1 for n in shape):
        shape = validate.shape(shape, "shape", "tg.reshape", inferred=True)
    return innermost.process(reshape_p, x, shape=shape)
defvjp(reshape_p, lambda ct, ans, x, shape: reshape_as(ct, x))


def _reshape_shape(x, shape):
    if -1 in shape:   # the inferred size is known only when every input size is
        if x.shape is not None and None not in x.shape:
            known_part = int(np.prod([n for n in shape if n != -1]))
            size = int(np.prod(x.shape))
            if known_part == 0 or size % known_part:
                raise ValueError(f"cannot reshape a tensor of shape {x.shape} into {shape}")
            shape = tuple(size // known_part if n == -1 else n for n in shape)
        else:
            shape = tuple(None if n == -1 else n for n in shape)
    elif x.shape is not None and None not in x.shape and int(np.prod(x.shape)) != int(np.prod(shape)):
        raise ValueError(f"cannot reshape a tensor of shape {x.shape} into {shape}")
    return [(shape, x.dtype)]
defshape(reshape_p, _reshape_shape)
defjvp(reshape_p, lambda x_dot, ans, x, shape: reshape(x_dot, shape))
defbatch(reshape_p, lambda values, batched, shape: (
    reshape(values[0], (_batch_size(values[0]),) + tuple(shape)), True))


def _batch_size(batch):
    """The size of ``batch``'s axis 0, or -1 (inferred) when a graph does not know it."""
    return -1 if batch.shape[0] is None else batch.shape[0]

# transpose: permute axes.  The cotangent is permuted back by the inverse permutation.
transpose_p = primitive("transpose", lambda x, axes: backend.xp.transpose(x, axes))
defeffect(transpose_p, "view")
takes_complex(transpose_p)
def transpose(x, axes=None):
    x = operand(x, "x", "tg.transpose")
    ndim = x.ndim
    if axes is not None and not isinstance(axes, (list, tuple)):
        validate.fail(TypeError, "tg.transpose", "axes", "a permutation of the axes (a "
                      "list or tuple of integers) or None", axes)
    axes = tuple(reversed(range(ndim))) if axes is None else tuple(
        checked_axis(a, ndim, "tg.transpose", "axes") for a in axes)
    if sorted(axes) != list(range(ndim)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the {ndim} axes.")
    return innermost.process(transpose_p, x, axes=axes)
defvjp(transpose_p, lambda ct, ans, x, axes: transpose(ct, tuple(np.argsort(axes))))
defjvp(transpose_p, lambda x_dot, ans, x, axes: transpose(x_dot, axes))
defbatch(transpose_p, lambda values, batched, axes: (
    transpose(values[0], (0,) + tuple(a + 1 for a in axes)), True))


def swap_last_two(x):
    """Matrix transpose of the last two axes (for batched matmul rules)."""
    axes = list(range(x.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return transpose(x, axes)


# expand_dims: insert a size-1 axis.  squeeze: remove size-1 axes.  Both VJPs reshape back.
expand_dims_p = primitive("expand_dims", lambda x, axis: backend.xp.expand_dims(x, axis))
defeffect(expand_dims_p, "view")
takes_complex(expand_dims_p)
def expand_dims(x, axis):
    if type(axis) is not int or not -64 <= axis < 64:   # a tuple of new axes is numpy's too
        x = operand(x, "x", "tg.expand_dims")
        added = len(axis) if isinstance(axis, (list, tuple)) else 1
        validate.axis(axis, x.ndim + added, "axis", "tg.expand_dims")
    return innermost.process(expand_dims_p, x, axis=axis)
defvjp(expand_dims_p, lambda ct, ans, x, axis: reshape_as(ct, x))
defjvp(expand_dims_p, lambda x_dot, ans, x, axis: expand_dims(x_dot, axis))
defbatch(expand_dims_p, lambda values, batched, axis: (   # axes of the result
    expand_dims(values[0], batch_axis(axis, values[0].ndim - 1 + (
        len(axis) if isinstance(axis, (tuple, list)) else 1))), True))

squeeze_p = primitive("squeeze", lambda x, axis: backend.xp.squeeze(x, axis))
defeffect(squeeze_p, "view")
takes_complex(squeeze_p)
def squeeze(x, axis=None):
    if axis is not None:
        x = operand(x, "x", "tg.squeeze")
        axis = validate.axis(axis, x.ndim, "axis", "tg.squeeze")
        axis = tuple(axis) if isinstance(axis, tuple) else (axis,)
        for a in axis:
            if x.shape[a] not in (1, None):
                raise ValueError(f"squeeze: axis {a} has size {x.shape[a]}, not 1 (shape {x.shape}).")
    return innermost.process(squeeze_p, x, axis=axis)
defvjp(squeeze_p, lambda ct, ans, x, axis: reshape_as(ct, x))
defjvp(squeeze_p, lambda x_dot, ans, x, axis: reshape_as(x_dot, ans))
defbatch(squeeze_p, lambda values, batched, axis: (
    squeeze(values[0], batch_axis(axis, values[0].ndim - 1) if axis is not None else tuple(
        i + 1 for i, n in enumerate(values[0].shape[1:]) if n == 1)), True))

# broadcast_to: repeat along new or size-1 axes.  The cotangent is summed back.
broadcast_to_p = primitive("broadcast_to", lambda x, shape: backend.xp.broadcast_to(x, shape))
defeffect(broadcast_to_p, "view")
takes_complex(broadcast_to_p)
def broadcast_to(x, shape):
    return innermost.process(broadcast_to_p, x, shape=validate.shape(shape, "shape", "tg.broadcast_to"))
defvjp(broadcast_to_p, lambda ct, ans, x, shape: unbroadcast(ct, x))
defjvp(broadcast_to_p, lambda x_dot, ans, x, shape: broadcast_to(x_dot, shape))
def _broadcast_to_batch(values, batched, shape):
    x = move_to_rank(values[0], len(shape))
    if x.shape[0] is None:   # a graph's batch of unknown size: add zeros repeated along it
        return x + repeat_like(zeros(shape, x.dtype), x), True
    return broadcast_to(x, (x.shape[0],) + tuple(shape)), True
defbatch(broadcast_to_p, _broadcast_to_batch)


# The same three moves with the target shape read from a tensor when the op
# runs: what VJP rules use in graphs whose shapes are not all known yet.
reshape_like_p = primitive("reshape_like", lambda g, x: backend.xp.reshape(g, x.shape))
defeffect(reshape_like_p, "view", shape_only_inputs=(1,))
takes_complex(reshape_like_p)
def reshape_like(g, x): return innermost.process(reshape_like_p, g, x)
defvjp(reshape_like_p, lambda ct, ans, g, x: reshape_as(ct, g), None)
defshape(reshape_like_p, lambda g, x: [(x.shape, g.dtype)])
defbatch(reshape_like_p, lambda values, batched, **params: _to_example_shape(
    reshape_like, reshape, values, batched))

broadcast_like_p = primitive("broadcast_like", lambda g, x: backend.xp.broadcast_to(g, x.shape))
defeffect(broadcast_like_p, "view", shape_only_inputs=(1,))
takes_complex(broadcast_like_p)
def broadcast_like(g, x): return innermost.process(broadcast_like_p, g, x)
defvjp(broadcast_like_p, lambda ct, ans, g, x: unbroadcast(ct, g), None)
defshape(broadcast_like_p, lambda g, x: [(x.shape, g.dtype)])
defbatch(broadcast_like_p, lambda values, batched, **params: _to_example_shape(
    broadcast_like, broadcast_to, values, batched))


def _sum_like_kernel(g, x):
    lead = g.ndim - x.ndim
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(x.shape) if n == 1 and g.shape[lead + i] != 1)
    return backend.xp.reshape(backend.xp.sum(g, axis=axes), x.shape)

sum_like_p = primitive("sum_like", _sum_like_kernel)
defeffect(sum_like_p, "reduction", shape_only_inputs=(1,))
takes_complex(sum_like_p)
def sum_like(g, x):
    """Sum ``g`` down to the shape ``x`` has when the op runs (unbroadcast)."""
    return innermost.process(sum_like_p, g, x)
defvjp(sum_like_p, lambda ct, ans, g, x: broadcast_as(ct, g), None)
defshape(sum_like_p, lambda g, x: [(x.shape, g.dtype)])
defbatch(sum_like_p, lambda values, batched, **params: _to_example_shape(
    sum_like, unbroadcast, values, batched))


def _to_example_shape(op_like, op_to_shape, values, batched):
    """The batching rule of reshape_like, broadcast_like and sum_like: ``g`` brought to
    the shape of one example of ``x``. A batched ``g`` keeps its batch (the target is
    then the batch's shape: the examples' with the batch in front); an unbatched one
    stays unbatched, whatever ``x`` is."""
    (g, x), (g_batched, x_batched) = values, batched
    example = x.shape[1:] if x_batched else x.shape
    if not g_batched:
        if known(example):
            return op_to_shape(g, tuple(example)) if op_to_shape is not unbroadcast else \
                unbroadcast(g, _ShapeOnly(example, g.dtype)), False
        return NotImplemented   # the shape is known only when the graph runs: loop
    if op_like is broadcast_like:
        g = move_to_rank(g, len(example))
    if op_like is sum_like and g.ndim - 1 > len(example):   # the example's leading axes
        g = g.sum(axis=tuple(range(1, g.ndim - len(example))))
    target = (g.shape[0],) + tuple(example)
    if known(target):
        if op_to_shape is unbroadcast:
            return unbroadcast(g, _ShapeOnly(target, g.dtype)), True
        return op_to_shape(g, target), True
    return NotImplemented


class _ShapeOnly:
    """A stand-in with just a shape and dtype, for ``unbroadcast``'s target."""
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype
        self.ndim = len(self.shape)


# -- bringing a cotangent to an input's shape ---------------------------------

def unbroadcast(g, x):
    """Sum ``g`` down to ``x``'s shape, and cast it to ``x``'s dtype."""
    if g is None:
        return None
    if g.shape == x.shape and g.dtype == x.dtype and known(x.shape):
        return g   # the common case: nothing was broadcast
    if not (known(g.shape) and known(x.shape)):
        g = sum_like(g, x)
    elif g.shape != x.shape:
        lead = g.ndim - x.ndim
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(x.shape) if n == 1 and g.shape[lead + i] != 1)
        if axes:
            g = g.sum(axis=axes)   # the method: reduction.py attaches it
        if g.shape != x.shape:
            g = reshape(g, x.shape)
    if g.dtype != x.dtype:
        g = cast(g, x.dtype)
    return g


def reshape_as(g, x):
    """``g`` reshaped to ``x``'s shape."""
    return reshape(g, x.shape) if known(x.shape) else reshape_like(g, x)


def broadcast_as(g, x):
    """``g`` broadcast to ``x``'s shape."""
    if g.shape == x.shape and known(x.shape):
        return g
    return broadcast_to(g, x.shape) if known(x.shape) else broadcast_like(g, x)
