"""Sparse gradients.

The gradient of ``gather(params, indices)`` with respect to a big embedding
table is zero except in the gathered rows. ``IndexedSlices`` stores just those
rows (``values``) and where they go (``indices``), like TensorFlow's class of
the same name. It becomes a dense tensor only when it has to be added to a
dense gradient, or when you ask (``to_dense()``, ``numpy()``).
"""
from .. import backend


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


from .misc import zeros  # noqa: E402
from .shape import index_add  # noqa: E402
