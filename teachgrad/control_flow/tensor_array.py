"""``tg.TensorArray``: a list of tensors that loops can write, one element per iteration.

A TensorArray is two tensors, its *flows*:

* ``buffer``, shape ``[size, *element_shape]``: element ``i`` is ``buffer[i]``;
* ``marks``, shape ``[size]`` (int32): 0 unwritten, 1 written, 2 read and cleared.

It is functional, as in TensorFlow 2: ``ta.write(i, x)`` does not change ``ta`` but
returns a new TensorArray whose buffer is ``scatter_update(buffer, i, x)`` (an op
whose gradient reads row ``i`` of the cotangent back for ``x``), and ``ta.read(i)``
is ``gather(buffer, i)`` (whose gradient scatters the cotangent into row ``i``).
So gradients flow through writes, reads, ``stack`` and ``unstack`` with no special
machinery, eagerly and in graphs, and a TensorArray can be a ``tg.while_loop``
variable: the loop carries its two flows (see ``array_loops.py``).

Every read and write goes through ``tensor_array_check`` (``teachgrad/ops/shape/updates.py``),
which raises TensorFlow's errors: writing an index twice, reading a cleared element
again, an index out of range.

    ta = tg.TensorArray(tg.float32, size=3)
    ta = ta.write(0, 10.0).write(1, 20.0).write(2, 30.0)
    ta.stack()          # [10., 20., 30.]
"""
import numpy as np

from .. import validate
from ..backend import to_numpy
from ..ops import cast, concat, gather, reshape, zeros
from ..ops.shape.updates import scatter_update, tensor_array_check
from ..state import state
from ..tensor import SymbolicTensor, Tensor, constant
from .subgraph import as_tensor

SITE = "tg.TensorArray"


class TensorArray:
    """A list of same-shaped tensors of one dtype, written and read by index.

    Args:
      dtype: the elements' dtype (``tg.float32``, ...).
      size: the number of elements (an int, or an integer scalar tensor).
      dynamic_size: may writes past the end grow the array? (Only where the
        index is known when written: eagerly, or a Python int in a graph.)
      clear_after_read: does ``read(i)`` clear element ``i``, so that a second
        read is an error (TensorFlow's default)?
      element_shape: the elements' shape; None to take the first write's.
      name: the name errors use.
    """

    def __init__(self, dtype, size=0, dynamic_size=False, clear_after_read=True,
                 element_shape=None, infer_shape=True, name="TensorArray"):
        self.dtype = validate.dtype(dtype, "dtype", SITE)
        if self.dtype is None:
            validate.fail(TypeError, SITE, "dtype", "a data type", dtype)
        self.dynamic_size = validate.boolean(dynamic_size, "dynamic_size", SITE)
        self.clear_after_read = validate.boolean(
            True if clear_after_read is None else clear_after_read, "clear_after_read", SITE)
        self.element_shape = None if element_shape is None else \
            validate.shape(element_shape, "element_shape", SITE)
        self.infer_shape = infer_shape
        self.name = name
        self.graph = state.graph   # where it was made: the graph its flows belong to
        n = _size(size)
        self.marks = constant(np.zeros(n, np.int32))
        self.buffer = None if self.element_shape is None else \
            zeros((n,) + self.element_shape, self.dtype)

    def _new(self, buffer, marks, element_shape=None):
        """A TensorArray like this one, with other flows."""
        ta = object.__new__(TensorArray)
        ta.__dict__.update(self.__dict__)
        ta.buffer, ta.marks, ta.graph = buffer, marks, state.graph
        ta.element_shape = element_shape if element_shape is not None else self.element_shape
        return ta

    def __repr__(self):
        shape = "?" if self.element_shape is None else self.element_shape
        return f"<tg.TensorArray {self.name!r}: {self._static_size()} x {shape} {self.dtype}>"

    def _static_size(self):
        return self.marks.shape[0]

    def size(self, name=None):
        """The number of elements, as an int32 scalar tensor."""
        return constant(np.int32(self._static_size()))

    # -- writing ----------------------------------------------------------------------
    def write(self, index, value, name=None):
        """A new TensorArray whose element ``index`` is ``value``."""
        value = self._element(value, "value", "write")
        ta = self._allocated(value.shape)._grown_for(index, 1)
        checked, marks = tensor_array_check(ta.marks, _index(index, "write"), "write",
                                            dynamic=self.dynamic_size, array=self.name)
        return ta._new(scatter_update(ta.buffer, checked, value), marks)

    def scatter(self, indices, value, name=None):
        """A new TensorArray whose elements ``indices[k]`` are ``value[k]``."""
        value = self._element(value, "value", "scatter", leading=True)
        indices = _indices(indices)
        ta = self._allocated(value.shape[1:])
        ta = ta._grown_for(indices, 1)
        checked, marks = tensor_array_check(ta.marks, indices, "write",
                                            dynamic=self.dynamic_size, array=self.name)
        return ta._new(scatter_update(ta.buffer, checked, value), marks)

    def unstack(self, value, name=None):
        """A new TensorArray whose element ``i`` is ``value[i]``."""
        value = self._element(value, "value", "unstack", leading=True)
        if value.shape[0] is None:
            raise ValueError(f"{SITE}.unstack: the length of `value` must be known "
                             f"(got shape {value.shape}).")
        return self.scatter(constant(np.arange(value.shape[0], dtype=np.int64)), value)

    # -- reading ----------------------------------------------------------------------
    def read(self, index, name=None):
        """Element ``index``; with clear_after_read, it may not be read again.

        (An element never written reads as zeros, as in TensorFlow 2.)"""
        self._need_buffer("read")
        checked, marks = tensor_array_check(self.marks, _index(index, "read"), "read",
                                            clear=self.clear_after_read, array=self.name)
        # TensorFlow's read clears in place; not so for an array of an enclosing graph
        # read in a loop body (the body's marks must not leak out of it).
        if self.clear_after_read and self.graph is state.graph:
            self.marks = marks
        return gather(self.buffer, checked)

    def gather(self, indices, name=None):
        """The elements ``indices``, stacked: shape ``[len(indices), *element_shape]``."""
        self._need_buffer("gather")
        checked, _ = tensor_array_check(self.marks, _indices(indices), "gather",
                                        array=self.name)
        return gather(self.buffer, checked)

    def stack(self, name=None):
        """All elements stacked into one tensor of shape ``[size, *element_shape]``."""
        self._need_buffer("stack")
        return self.buffer

    def concat(self, name=None):
        """All elements joined along their first axis (elements of rank >= 1)."""
        self._need_buffer("concat")
        if not self.element_shape:
            raise ValueError(f"{SITE}.concat: the elements of {self.name!r} are scalars; "
                             f"concat joins along their first axis. Use stack() instead.")
        return reshape(self.buffer, (-1,) + tuple(self.element_shape[1:]))

    def identity(self):
        return self

    # -- helpers ----------------------------------------------------------------------
    def _element(self, value, argument, method, leading=False):
        """``value`` checked against the array's dtype and element shape."""
        where = f"{SITE}.{method}"
        if isinstance(value, (bool, int, float)):
            value = constant(value, self.dtype)
        elif not isinstance(value, Tensor):
            value = as_tensor(value, name=argument, where=where)
            if value.dtype != self.dtype and value.dtype.kind == self.dtype.kind:
                value = cast(value, self.dtype)
        if value.dtype != self.dtype:
            raise TypeError(f"{where}: TensorArray {self.name!r} has dtype {self.dtype} but "
                            f"`{argument}` has dtype {value.dtype}. Cast it with "
                            f"tg.cast({argument}, {self.dtype.name!r}) first.")
        shape = value.shape
        if leading and (shape is None or len(shape) == 0):
            raise ValueError(f"{where}: `{argument}` must have a leading axis (one entry per "
                             f"element), got shape {shape}.")
        element = None if shape is None else tuple(shape[1:] if leading else shape)
        if self.element_shape is not None and element is not None and \
                not _fits(element, self.element_shape):
            raise ValueError(f"{where}: TensorArray {self.name!r} holds elements of shape "
                             f"{self.element_shape} but `{argument}` gives elements of "
                             f"shape {element}. Write tensors of the element shape.")
        return value

    def _allocated(self, element_shape):
        """This array, with a buffer for elements of ``element_shape`` (the first write's)."""
        if self.buffer is not None:
            return self
        if element_shape is None or None in element_shape:
            raise ValueError(f"{SITE}: the first write to {self.name!r} has shape "
                             f"{element_shape}, not fully known: give element_shape=.")
        element_shape = tuple(element_shape)
        return self._new(zeros((self._static_size(),) + element_shape, self.dtype),
                         self.marks, element_shape)

    def _grown_for(self, index, extra):
        """With dynamic_size, this array grown to hold ``index`` (when it is known now)."""
        known = _known_value(index)
        if not self.dynamic_size or known is None or known.size == 0:
            return self
        needed = int(known.max()) + extra
        n = self._static_size()
        if needed <= n:
            return self
        pad = needed - n
        buffer = concat([self.buffer, zeros((pad,) + self.element_shape, self.dtype)])
        return self._new(buffer, concat([self.marks, constant(np.zeros(pad, np.int32))]))

    def _need_buffer(self, method):
        if self.buffer is None:
            raise ValueError(f"{SITE}.{method}: {self.name!r} has not been written to and its "
                             f"element shape is unknown. Write to it first, or give "
                             f"element_shape=.")


def _size(size):
    if size is None:
        validate.fail(TypeError, SITE, "size", "an int >= 0 (0 with dynamic_size=True, to "
                      "grow as it is written)", size)
    value = _known_value(size) if isinstance(size, Tensor) else size
    if value is None:
        raise ValueError(f"{SITE}: in a graph, size must be known when the graph is built "
                         f"(a Python int), got the tensor {size.name}.")
    if isinstance(value, np.ndarray):
        value = value.item() if value.ndim == 0 and value.dtype.kind in "iu" else value
    return validate.integer(value, "size", SITE, minimum=0)


def _index(index, method):
    if isinstance(index, Tensor):
        if index.dtype.kind not in "iu" or index.shape not in ((), None):
            raise TypeError(f"{SITE}.{method}: `index` must be an integer scalar, got dtype "
                            f"{index.dtype} and shape {index.shape}.")
        return index
    validate.integer(index, "index", f"{SITE}.{method}")
    return constant(np.int64(index))


def _indices(indices):
    indices = indices if isinstance(indices, Tensor) else \
        constant(np.asarray(indices, dtype=np.int64).reshape(-1))
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{SITE}: `indices` must be integers, got {indices.dtype}.")
    return indices


def _known_value(index):
    """The index's value if it is known now (a number, an eager tensor or a graph's
    constant), else None."""
    if isinstance(index, SymbolicTensor):
        node = index.node
        return to_numpy(node.params["value"]) if node.op.name == "const" else None
    if isinstance(index, Tensor):
        return index.numpy()
    return to_numpy(index)


def _fits(shape, expected):
    return len(shape) == len(expected) and all(
        a is None or b is None or a == b for a, b in zip(shape, expected))



