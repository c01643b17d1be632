"""Indexing, and the sparse gradients it gives.

``x[key]`` and ``gather(params, indices)`` pick entries; their VJPs scatter the
cotangent back (``index_add``, ``scatter_add``: the transposes of picking).

The gradient of ``gather(params, indices)`` with respect to a big embedding
table is zero except in the gathered rows. ``IndexedSlices`` stores just those
rows (``values``) and where they go (``indices``), like TensorFlow's class of
the same name. It becomes a dense tensor only when it has to be added to a
dense gradient, or when you ask (``to_dense()``, ``numpy()``).
"""
import numpy as np

from ... import backend, validate
from ...tensor import Tensor
from ..core.apply import innermost
from ..core.declare import defbatch, defeffect, defjvp, defshape, defvjp, primitive, takes_complex
from ..core.grad_util import known, value_of
from ..core.inputs import operand
from ..core.shape_inference import STAND_IN_SIZES, infer_by_stand_ins
from ..elementwise.casts import zeros, zeros_like
from .along_axis import take_along_axis
from .reshape import broadcast_to, checked_axis, repeat_like, reshape, transpose


class IndexedSlices:
    """``dense[indices[i]] += values[i]`` for each i, on zeros of ``dense_shape``."""

    __slots__ = ("values", "indices", "dense_shape")

    def __init__(self, values, indices, dense_shape):
        self.values = values            # Tensor: (len(indices),) + dense_shape[1:]
        self.indices = indices          # backend int array, 1-D
        self.dense_shape = tuple(dense_shape)

    @property
    def shape(self):
        return self.dense_shape

    @property
    def dtype(self):
        return self.values.dtype

    def to_dense(self):
        """The dense Tensor (repeated indices add up); differentiable in ``values``."""
        return index_add(zeros(self.dense_shape, self.values.dtype), self.values, self.indices)

    def numpy(self):
        return self.to_dense().numpy()

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def __repr__(self):
        return (f"tg.IndexedSlices(indices={backend.to_numpy(self.indices).tolist()}, "
                f"values shape={self.values.shape}, dense_shape={self.dense_shape})")


def _index_array(key):
    """Turn Tensors inside an index into backend arrays."""
    if isinstance(key, tuple):
        return tuple(_index_array(k) for k in key)
    if isinstance(key, Tensor):
        if key.value is None:   # a graph's tensor, or one that differs by example
            raise TypeError(
                "An index whose value is not known here (a graph tensor, or one that "
                "differs from example to example in tg.vectorized_map) can only be a lone "
                "integer tensor, x[i]. Inside a tuple or as a mask, pick with tg.gather "
                "or tg.take_along_axis instead.")
        return key.value
    if isinstance(key, list):
        array = backend.xp.asarray(key)
        return array.astype(np.intp) if array.size == 0 else array  # x[[]] picks nothing
    return key


def _index_add_kernel(x, values, key):
    out = backend.xp.array(x, copy=True)
    if _is_basic(key):   # slices and ints pick each entry once: a plain += is right
        out[key] += values
    else:                # index arrays may repeat an entry: add.at adds every copy
        backend.xp.add.at(out, key, values)
    return out


def _is_basic(key):
    """Is ``key`` numpy's basic indexing (ints, slices, None, ...), which never picks an
    entry twice?"""
    parts = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))
               and not isinstance(k, bool) for k in parts)

# index_add(x, values, key): x with `values` added at x[key] (repeated indices add up).
# It is the transpose of indexing, so it is what indexing's VJP uses.
index_add_p = primitive("index_add", _index_add_kernel)
defeffect(index_add_p, "fresh")
takes_complex(index_add_p)
def index_add(x, values, key):
    return innermost.process(index_add_p, x, values, key=_index_array(key))
defvjp(index_add_p,
       lambda ct, ans, x, values, key: ct,
       lambda ct, ans, x, values, key: getitem(ct, key))
defjvp(index_add_p,
       lambda x_dot, ans, x, values, key: x_dot,
       lambda v_dot, ans, x, values, key: index_add(zeros_like(ans), v_dot, key))
defshape(index_add_p, lambda x, values, key: [(x.shape, x.dtype)])


def _index_add_batch(values, batched, key):
    """Add at ``batch[:, key]``; shared values broadcast along the batch axis as numpy
    adds them, a shared ``x`` is repeated for every example first."""
    (x, v), (x_batched, v_batched) = values, batched
    key = _batch_key(key)
    if key is None:
        return NotImplemented
    x = x if x_batched else repeat_like(x, v)
    return innermost.process(index_add_p, x, v, key=key), True
defbatch(index_add_p, _index_add_batch)


def _is_row_index(key):
    """Does ``x[key]`` pick whole rows (an int or 1-D int array on axis 0)?"""
    if isinstance(key, (int, np.integer)):
        return True
    return getattr(key, "dtype", None) is not None and key.dtype.kind in "iu" and key.ndim <= 1


# x[key]: numpy indexing. Picking rows gives a sparse gradient (IndexedSlices);
# any other index scatters the cotangent back into zeros.
getitem_p = primitive("getitem", lambda x, key: x[key])
defeffect(getitem_p, "view")
takes_complex(getitem_p)
def getitem(x, key):
    if isinstance(key, Tensor) and key.value is None and key.dtype.kind in "iu":
        return gather(x, key, axis=0)   # x[i], i known only when a graph runs or per example
    if isinstance(key, tuple) and any(isinstance(k, Tensor) and k.value is None for k in key):
        return _pick_by_indices(x, key)
    return innermost.process(getitem_p, x, key=_index_array(key))


def _pick_by_indices(x, key):
    """``x[i, j, ...]`` with integer index arrays, some known only when a graph runs (or
    differing by example in tg.vectorized_map): a gather of the flattened leading axes at
    the flat positions ``(i * n_j + j) * ...``, as numpy's advanced indexing picks them."""
    x = operand(x, "x", "tg.getitem")
    sizes = x.shape[:len(key)] if x.shape is not None else None
    if sizes is None or None in sizes or not all(_integer_index(k) for k in key):
        _index_array(key)   # raises, saying what works instead
    flat = None
    for k, n in zip(key, sizes):
        k = k if isinstance(k, Tensor) else Tensor(backend.xp.asarray(k, dtype=np.int64))
        k = (k + n) % n    # numpy's negative indices count from the end
        flat = k if flat is None else flat * n + k
    rows = reshape(x, (int(np.prod(sizes)),) + tuple(x.shape[len(key):]))
    return gather(rows, flat, axis=0)


def _integer_index(k):
    """Is ``k`` an integer index array (a tensor, a list or an array of ints, or an int)?"""
    if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
        return True
    dtype = getattr(k, "dtype", None) if not isinstance(k, list) else np.asarray(k).dtype
    return dtype is not None and dtype.kind in "iu"

def _getitem_vjp(ct, ans, x, key):
    if not known(x.shape):
        return index_add(zeros_like(x, dtype=ct.dtype), ct, key)
    if _is_row_index(key):
        rows = backend.xp.reshape(backend.xp.asarray(key), (-1,))
        return IndexedSlices(reshape(ct, (rows.shape[0],) + x.shape[1:]), rows, x.shape)
    return index_add(zeros(x.shape, ct.dtype), ct, key)
defvjp(getitem_p, _getitem_vjp)
defjvp(getitem_p, lambda x_dot, ans, x, key: getitem(x_dot, key))


def _getitem_shape(x, key):
    # Unknown sizes must be large enough for the integer indices in the key.
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
defshape(getitem_p, _getitem_shape)


def _batch_key(key):
    """Every example's ``x[key]`` is ``batch[:, key]``, unless the key's arrays are split
    by a slice (numpy then puts their axes first): None for those (they loop)."""
    parts = key if isinstance(key, tuple) else (key,)
    arrays = [i for i, k in enumerate(parts) if getattr(k, "ndim", 0) > 0
              or isinstance(k, (list, np.ndarray))]
    if arrays and arrays[-1] - arrays[0] + 1 != len(arrays):
        return None
    return (slice(None),) + parts


def _getitem_batch(values, batched, key):
    key = _batch_key(key)
    return NotImplemented if key is None else (getitem(values[0], key), True)
defbatch(getitem_p, _getitem_batch)


# gather(params, indices, axis): the entries of `params` at `indices` along `axis`.
# Along axis 0 its gradient is sparse: only the gathered rows get cotangents.
gather_p = primitive("gather", lambda p, i, axis: backend.xp.take(p, i, axis=axis))
defeffect(gather_p, "fresh")
takes_complex(gather_p)
def gather(params, indices, axis=0):
    params = operand(params, "params", "tg.gather")
    axis = checked_axis(axis, params.ndim, "tg.gather")
    if not isinstance(indices, Tensor):
        indices = Tensor(validate.tensor_like(indices, "indices", "tg.gather"))
    if indices.dtype.kind not in "iu":
        raise TypeError(f"gather: indices must be integers, got {indices.dtype}.")
    n = params.shape[axis]
    idx = indices.value
    if idx is not None and n is not None and idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"gather: indices must lie in [-{n}, {n}) for axis {axis} of "
                         f"size {n}, got values from {idx.min()} to {idx.max()}.")
    return innermost.process(gather_p, params, indices, axis=axis)

def _gather_vjp(ct, ans, params, indices, axis):
    index_values = value_of(indices)   # None in a graph (a raw array on arrays)
    if axis == 0 and index_values is not None and known(params.shape):
        rows = backend.xp.reshape(index_values, (-1,))
        return IndexedSlices(reshape(ct, (rows.shape[0],) + params.shape[1:]), rows, params.shape)
    return scatter_add(zeros_like(params, dtype=ct.dtype), indices, ct, axis=axis)
defvjp(gather_p, _gather_vjp, None)


def _gather_batch(values, batched, axis):
    (params, indices), (params_batched, indices_batched) = values, batched
    if params_batched and not indices_batched:
        return gather(params, indices, axis=axis + 1), True
    if indices_batched and not params_batched:   # the batch lands where `axis` was
        out = gather(params, indices, axis=axis)
        return transpose(out, (axis,) + tuple(a for a in range(out.ndim) if a != axis)), True
    return _gather_both_batched(params, indices, axis)
defbatch(gather_p, _gather_batch)


def _gather_both_batched(params, indices, axis):
    """Each example's indices into its own params: the indices flattened, spread along
    the other axes of params (adding zeros repeated along a batch of unknown size: a
    graph's ``[None, ...]``), and taken along the gathered axis (``take_along_axis``,
    whose kernel checks the range as gather's does). Other sizes unknown: a loop."""
    if None in (params.shape, indices.shape) or not known(params.shape[1:] + indices.shape[1:]):
        return NotImplemented
    b, pre, post = params.shape[0], tuple(params.shape[1:axis + 1]), tuple(params.shape[axis + 2:])
    picked, m = tuple(indices.shape[1:]), int(np.prod(indices.shape[1:], dtype=np.int64))
    if b is None and m == 0:   # reshape cannot infer the size of a batch of empty rows
        return NotImplemented
    lead = -1 if b is None else b
    spread = reshape(indices, (lead,) + (1,) * len(pre) + (m,) + (1,) * len(post))
    if b is not None:
        spread = broadcast_to(spread, (b,) + pre + (m,) + post)
    elif pre or post:
        spread = spread + repeat_like(zeros(pre + (m,) + post, indices.dtype), params)
    out = take_along_axis(params, spread, axis + 1)
    return reshape(out, (lead,) + pre + picked + post), True


def _scatter_add_kernel(x, indices, values, axis):
    out = backend.xp.array(x, copy=True)
    if values.size == 0:
        return out
    backend.xp.add.at(out, (slice(None),) * axis + (indices,), values)
    return out

# scatter_add(x, indices, values, axis): x with `values` added at `indices` along `axis`,
# the transpose of gather (its indices are a tensor, so it also works in graphs).
scatter_add_p = primitive("scatter_add", _scatter_add_kernel)
defeffect(scatter_add_p, "fresh")
takes_complex(scatter_add_p)
def scatter_add(x, indices, values, axis=0):
    axis = checked_axis(axis, x.ndim)
    return innermost.process(scatter_add_p, x, indices, values, axis=axis)
defvjp(scatter_add_p,
       lambda ct, ans, x, indices, values, axis: ct,
       None,
       lambda ct, ans, x, indices, values, axis: gather(ct, indices, axis=axis))


def _scatter_add_batch(values, batched, axis):
    """Shared indices: add along ``axis + 1`` of the batch. Indices that differ from
    example to example would scatter each example differently: those loop."""
    (x, indices, v), (x_batched, indices_batched, _) = values, batched
    if indices_batched:
        return NotImplemented
    x = x if x_batched else repeat_like(x, v)   # shared values broadcast as they are added
    return innermost.process(scatter_add_p, x, indices, v, axis=axis + 1), True
defbatch(scatter_add_p, _scatter_add_batch)
