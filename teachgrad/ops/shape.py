"""Ops that move entries around without changing them: their VJPs move the
cotangent back (reshape it back, transpose it back, split what was joined,
scatter what was gathered)."""
import numpy as np

from .. import backend
from ..tensor import Tensor
from .core import bind, defjvp, defvjp, defvjp_all, primitive


def _axis(axis, ndim):
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis} is out of range for a tensor of rank {ndim}.")
    return axis % ndim if ndim else 0


# reshape: same entries, new shape.  The cotangent is reshaped back.
reshape_p = primitive("reshape", lambda x, shape: backend.xp.reshape(x, shape))
def reshape(x, shape):
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(n) for n in shape)
    return bind(reshape_p, x, shape=shape)
defvjp(reshape_p, lambda g, ans, x, shape: reshape_as(g, x))


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
reshape_p.shape_rule = _reshape_shape
defjvp(reshape_p, lambda x_dot, ans, x, shape: reshape(x_dot, shape))

# transpose: permute axes.  The cotangent is permuted back by the inverse permutation.
transpose_p = primitive("transpose", lambda x, axes: backend.xp.transpose(x, axes))
def transpose(x, axes=None):
    ndim = x.ndim if isinstance(x, Tensor) else np.ndim(x)
    axes = tuple(reversed(range(ndim))) if axes is None else tuple(_axis(a, ndim) for a in axes)
    if sorted(axes) != list(range(ndim)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the {ndim} axes.")
    return bind(transpose_p, x, axes=axes)
defvjp(transpose_p, lambda g, ans, x, axes: transpose(g, tuple(np.argsort(axes))))
defjvp(transpose_p, lambda x_dot, ans, x, axes: transpose(x_dot, axes))


def swap_last_two(x):
    """Matrix transpose of the last two axes (for batched matmul rules)."""
    axes = list(range(x.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return transpose(x, axes)


# expand_dims: insert a size-1 axis.  squeeze: remove size-1 axes.  Both VJPs reshape back.
expand_dims_p = primitive("expand_dims", lambda x, axis: backend.xp.expand_dims(x, axis))
def expand_dims(x, axis):
    return bind(expand_dims_p, x, axis=axis)
defvjp(expand_dims_p, lambda g, ans, x, axis: reshape_as(g, x))
defjvp(expand_dims_p, lambda x_dot, ans, x, axis: expand_dims(x_dot, axis))

squeeze_p = primitive("squeeze", lambda x, axis: backend.xp.squeeze(x, axis))
def squeeze(x, axis=None):
    if axis is not None:
        axis = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
        for a in axis:
            if x.shape[a] not in (1, None):
                raise ValueError(f"squeeze: axis {a} has size {x.shape[a]}, not 1 (shape {x.shape}).")
    return bind(squeeze_p, x, axis=axis)
defvjp(squeeze_p, lambda g, ans, x, axis: reshape_as(g, x))
defjvp(squeeze_p, lambda x_dot, ans, x, axis: reshape_as(x_dot, ans))

# broadcast_to: repeat along new or size-1 axes.  The cotangent is summed back.
broadcast_to_p = primitive("broadcast_to", lambda x, shape: backend.xp.broadcast_to(x, shape))
def broadcast_to(x, shape):
    return bind(broadcast_to_p, x, shape=tuple(int(n) for n in shape))
defvjp(broadcast_to_p, lambda g, ans, x, shape: unbroadcast(g, x))
defjvp(broadcast_to_p, lambda x_dot, ans, x, shape: broadcast_to(x_dot, shape))


# The same three moves with the target shape read from a tensor when the op
# runs: what VJP rules use in graphs whose shapes are not all known yet.
reshape_like_p = primitive("reshape_like", lambda g, x: backend.xp.reshape(g, x.shape))
def reshape_like(g, x): return bind(reshape_like_p, g, x)
defvjp(reshape_like_p, lambda ct, ans, g, x: reshape_as(ct, g), None)
reshape_like_p.shape_rule = lambda g, x: [(x.shape, g.dtype)]

broadcast_like_p = primitive("broadcast_like", lambda g, x: backend.xp.broadcast_to(g, x.shape))
def broadcast_like(g, x): return bind(broadcast_like_p, g, x)
defvjp(broadcast_like_p, lambda ct, ans, g, x: unbroadcast(ct, g), None)
broadcast_like_p.shape_rule = lambda g, x: [(x.shape, g.dtype)]


def _sum_like_kernel(g, x):
    lead = g.ndim - x.ndim
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(x.shape) if n == 1 and g.shape[lead + i] != 1)
    return backend.xp.reshape(backend.xp.sum(g, axis=axes), x.shape)

sum_like_p = primitive("sum_like", _sum_like_kernel)
def sum_like(g, x):
    """Sum ``g`` down to the shape ``x`` has when the op runs (unbroadcast)."""
    return bind(sum_like_p, g, x)
defvjp(sum_like_p, lambda ct, ans, g, x: broadcast_as(ct, g), None)
sum_like_p.shape_rule = lambda g, x: [(x.shape, g.dtype)]


# concat: join along an existing axis.  The cotangent is split at the same places.
concat_p = primitive("concat", lambda *xs, axis: backend.xp.concatenate(xs, axis=axis))
def concat(values, axis=0):
    values = list(values)
    if not values:
        raise ValueError("concat needs at least one tensor.")
    return bind(concat_p, *values, axis=axis)
def _concat_vjp(g, ans, *xs, axis):
    sizes = [x.shape[axis] for x in xs]
    if None in sizes:
        raise ValueError("The gradient of concat needs the sizes along the joined axis; give the "
                         "placeholders of its inputs a known size there.")
    return split(g, sizes, axis=axis)
defvjp_all(concat_p, _concat_vjp)

# stack: join along a new axis.  The cotangent is split along it and squeezed.
stack_p = primitive("stack", lambda *xs, axis: backend.xp.stack(xs, axis=axis))
def stack(values, axis=0):
    values = list(values)
    if not values:
        raise ValueError("stack needs at least one tensor.")
    shapes = {tuple(v.shape) if isinstance(v, Tensor) else np.shape(v) for v in values}
    if len(shapes) > 1 and all(None not in s for s in shapes):
        raise ValueError(f"stack: all tensors must have the same shape, got {sorted(shapes)}.")
    return bind(stack_p, *values, axis=axis)
defvjp_all(stack_p, lambda g, ans, *xs, axis: [
    reshape_as(piece, x) for piece, x in zip(split(g, len(xs), axis=axis), xs)])


def _split_kernel(x, sizes, axis):
    return tuple(backend.xp.split(x, np.cumsum(sizes)[:-1].tolist(), axis=axis))

# split: cut into pieces along an axis (TensorFlow's sizes convention).
# The cotangent is the pieces' cotangents concatenated; unused pieces count as zeros.
split_p = primitive("split", _split_kernel, multiple_results=True)
def split(x, num_or_size_splits, axis=0):
    """Split ``x`` into ``num`` equal pieces, or pieces of the listed sizes."""
    axis = _axis(axis, x.ndim)
    length = x.shape[axis]
    if length is None:
        raise ValueError(f"split: the size of axis {axis} of {x.name} is unknown; split needs it.")
    if isinstance(num_or_size_splits, int):
        if num_or_size_splits <= 0 or length % num_or_size_splits:
            raise ValueError(f"split: axis {axis} of size {length} cannot be cut into "
                             f"{num_or_size_splits} equal pieces.")
        sizes = (length // num_or_size_splits,) * num_or_size_splits
    else:
        sizes = tuple(int(s) for s in num_or_size_splits)
        if sum(sizes) != length or min(sizes, default=0) < 0:
            raise ValueError(f"split: sizes {list(sizes)} do not add up to {length}, "
                             f"the size of axis {axis}.")
    return list(bind(split_p, x, sizes=sizes, axis=axis))
defvjp_all(split_p, lambda gs, ans, x, sizes, axis: [concat(gs, axis=axis)])


def _index_array(key):
    """Turn Tensors inside an index into backend arrays."""
    if isinstance(key, tuple):
        return tuple(_index_array(k) for k in key)
    if isinstance(key, Tensor):
        return key._value
    if isinstance(key, list):
        array = backend.xp.asarray(key)
        return array.astype(np.intp) if array.size == 0 else array  # x[[]] picks nothing
    return key


def _index_add_kernel(x, values, key):
    out = backend.xp.array(x, copy=True)
    backend.xp.add.at(out, key, values)
    return out

# index_add(x, values, key): x with `values` added at x[key] (repeated indices add up).
# It is the transpose of indexing, so it is what indexing's VJP uses.
index_add_p = primitive("index_add", _index_add_kernel)
def index_add(x, values, key):
    return bind(index_add_p, x, values, key=_index_array(key))
defvjp(index_add_p,
       lambda g, ans, x, values, key: g,
       lambda g, ans, x, values, key: getitem(g, key))
defjvp(index_add_p,
       lambda x_dot, ans, x, values, key: x_dot,
       lambda v_dot, ans, x, values, key: index_add(zeros_like(ans), v_dot, key))
index_add_p.shape_rule = lambda x, values, key: [(x.shape, x.dtype)]


def _is_row_index(key):
    """Does ``x[key]`` pick whole rows (an int or 1-D int array on axis 0)?"""
    if isinstance(key, (int, np.integer)):
        return True
    return getattr(key, "dtype", None) is not None and key.dtype.kind in "iu" and key.ndim <= 1


# x[key]: numpy indexing. Picking rows gives a sparse gradient (IndexedSlices);
# any other index scatters the cotangent back into zeros.
getitem_p = primitive("getitem", lambda x, key: x[key])
def getitem(x, key):
    return bind(getitem_p, x, key=_index_array(key))

def _getitem_vjp(g, ans, x, key):
    if not known(x.shape):
        return index_add(zeros_like(x, dtype=g.dtype), g, key)
    if _is_row_index(key):
        rows = backend.xp.reshape(backend.xp.asarray(key), (-1,))
        return IndexedSlices(reshape(g, (rows.shape[0],) + x.shape[1:]), rows, x.shape)
    return index_add(zeros(x.shape, g.dtype), g, key)
defvjp(getitem_p, _getitem_vjp)
defjvp(getitem_p, lambda x_dot, ans, x, key: getitem(x_dot, key))


def _getitem_shape(x, key):
    # Unknown sizes must be large enough for the integer indices in the key.
    from ..graph.graph import STAND_IN_SIZES, infer_by_stand_ins
    parts = key if isinstance(key, tuple) else (key,)
    largest = max([int(np.max(np.abs(k))) for k in parts
                   if getattr(k, "dtype", None) is not None and k.dtype.kind in "iu" and k.size]
                  + [abs(k) for k in parts if isinstance(k, (int, np.integer))] + [0])
    sizes = tuple(largest + s for s in STAND_IN_SIZES)
    try:
        return infer_by_stand_ins(getitem_p, (x,), {"key": key}, sizes)
    except ValueError:
        if x.shape is not None and None not in x.shape:
            raise   # every size is known: the index really does not fit
        # e.g. a boolean mask over several unknown sizes: the shape is known only at run time
        return [(None, x.dtype)]
getitem_p.shape_rule = _getitem_shape


# gather(params, indices, axis): the entries of `params` at `indices` along `axis`.
# Along axis 0 its gradient is sparse: only the gathered rows get cotangents.
gather_p = primitive("gather", lambda p, i, axis: backend.xp.take(p, i, axis=axis))
def gather(params, indices, axis=0):
    axis = _axis(axis, params.ndim)
    if not isinstance(indices, Tensor):
        indices = Tensor(backend.xp.asarray(indices))
    if indices.dtype.kind not in "iu":
        raise TypeError(f"gather: indices must be integers, got {indices.dtype}.")
    n = params.shape[axis]
    idx = indices._value
    if idx is not None and n is not None and idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"gather: indices must lie in [-{n}, {n}) for axis {axis} of "
                         f"size {n}, got values from {idx.min()} to {idx.max()}.")
    return bind(gather_p, params, indices, axis=axis)

def _gather_vjp(g, ans, params, indices, axis):
    if axis == 0 and indices._value is not None and known(params.shape):
        rows = backend.xp.reshape(indices._value, (-1,))
        return IndexedSlices(reshape(g, (rows.shape[0],) + params.shape[1:]), rows, params.shape)
    return scatter_add(zeros_like(params, dtype=g.dtype), indices, g, axis=axis)
defvjp(gather_p, _gather_vjp, None)


def _scatter_add_kernel(x, indices, values, axis):
    out = backend.xp.array(x, copy=True)
    if values.size == 0:
        return out
    backend.xp.add.at(out, (slice(None),) * axis + (indices,), values)
    return out

# scatter_add(x, indices, values, axis): x with `values` added at `indices` along `axis`,
# the transpose of gather (its indices are a tensor, so it also works in graphs).
scatter_add_p = primitive("scatter_add", _scatter_add_kernel)
def scatter_add(x, indices, values, axis=0):
    axis = _axis(axis, x.ndim)
    return bind(scatter_add_p, x, indices, values, axis=axis)
defvjp(scatter_add_p,
       lambda g, ans, x, indices, values, axis: g,
       None,
       lambda g, ans, x, indices, values, axis: gather(g, indices, axis=axis))


# Imported last: these modules use the ops above.
from .grad_util import broadcast_as, known, reshape_as, unbroadcast  # noqa: E402
from .misc import zeros, zeros_like  # noqa: E402
from .sparse import IndexedSlices  # noqa: E402
