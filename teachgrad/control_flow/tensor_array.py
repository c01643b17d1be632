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

The size may be known only when a graph runs (the rows of a placeholder of shape
``[None, 3]``): then the buffers are made by ``resize_rows`` (``ops/shape/rows.py``).
A ``dynamic_size`` array written at an index computed in a graph grows the same way,
at run time, to ``max(size, index + 1)`` rows: TensorFlow's everyday
``ta = ta.write(i, f(i))`` in a ``tg.function`` loop.

Every read and write goes through ``tensor_array_check`` (``teachgrad/ops/shape/updates.py``),
which raises TensorFlow's errors: writing an index twice, reading a cleared element
again, an index out of range. Elements of different shapes (``infer_shape=False``,
a split of unequal lengths) are kept one by one instead (``tensor_array_items.py``).

    ta = tg.TensorArray(tg.float32, size=3)
    ta = ta.write(0, 10.0).write(1, 20.0).write(2, 30.0)
    ta.stack()          # [10., 20., 30.]
"""
import numpy as np

from .. import dtypes, validate
from ..ops import cast, concat, gather, max as reduce_max, maximum, reshape, stack, zeros
from ..ops.shape.rows import resize_rows, row_count, row_indices
from ..ops.shape.updates import scatter_update, tensor_array_check
from ..state import state
from ..tensor import constant
from .tensor_array_args import (
    SITE,
    checked_element,
    full_shape,
    index_of,
    indices_of,
    known_int,
    known_value,
    lengths_of,
    merged,
    size_of,
)
from .tensor_array_items import Items, split_rows


class TensorArray:
    """A list of tensors of one dtype, written and read by index.

    Args:
      dtype: the elements' dtype (``tg.float32``, ...).
      size: the number of elements: an int, or an integer scalar tensor (in a
        graph, one known only when it runs).
      dynamic_size: may writes past the end grow the array? (In a graph too, at
        a computed index.)
      clear_after_read: does ``read(i)`` clear element ``i``, so that a second
        read is an error (TensorFlow's default)?
      element_shape: the elements' shape, None sizes for ones not known yet
        (``(None, 2, 3)``); None to take the first write's.
      infer_shape: do all elements have one shape? False lets them differ (kept
        one by one: indices must then be known when a graph is built).
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
            validate.shape(element_shape, "element_shape", SITE, unknown=True)
        self.infer_shape = validate.boolean(infer_shape, "infer_shape", SITE)
        self.name = validate.name(name, SITE)
        self.graph = state.graph   # where it was made: the graph its flows belong to
        self.closed = False
        n = size_of(size)
        self.items = None if self.infer_shape else Items.empty(known_int(n, "size"))
        self.marks = constant(np.zeros(n, np.int32)) if isinstance(n, int) else \
            resize_rows(constant(np.zeros(0, np.int32)), n, constant(np.int64(0)))
        self.buffer = None
        if self.items is None and full_shape(self.element_shape):
            self.buffer = self._zeros_buffer(self.element_shape)

    @classmethod
    def of_rows(cls, value, name="TensorArray"):
        """An array whose element ``i`` is row ``i`` of ``value``, readable any number of
        times (what a loop over ``value``'s rows reads from): ``value`` is its buffer."""
        ta = cls(value.dtype, size_of(value.shape[0]) if value.shape[0] is not None else
                 row_count(value), clear_after_read=False, name=name)
        return ta._new(value, ta.marks, tuple(value.shape[1:]))

    def _new(self, buffer, marks, element_shape=None, items=None):
        """A TensorArray like this one, with other flows."""
        ta = object.__new__(TensorArray)
        ta.__dict__.update(self.__dict__)
        ta.buffer, ta.marks, ta.graph = buffer, marks, state.graph
        ta.element_shape = element_shape if element_shape is not None else self.element_shape
        ta.items = items if items is not None else self.items
        return ta

    def __repr__(self):
        shape = "?" if self.element_shape is None else self.element_shape
        size = "?" if self._static_size() is None else self._static_size()
        return f"<tg.TensorArray {self.name!r}: {size} x {shape} {self.dtype}>"

    def _static_size(self):
        return len(self.items.values) if self.items is not None else self.marks.shape[0]

    def size(self, name=None):
        """The number of elements, as an int32 scalar tensor."""
        n = self._static_size()
        return constant(np.int32(n)) if n is not None else \
            cast(row_count(self.marks), dtypes.int32)

    def close(self, name=None):
        """Free the elements: any later use of this array is an error."""
        self._need_open("close")
        self.closed = True
        self.buffer = self.items = None

    # -- writing ----------------------------------------------------------------------
    def write(self, index, value, name=None):
        """A new TensorArray whose element ``index`` is ``value``."""
        self._need_open("write")
        value = checked_element(self, value, "value", "write")
        if self.items is not None:
            items = self.items.written([known_int(index, "write")], [value], self)
            return self._new(None, self.marks, items=items)
        index = index_of(index, "write")
        ta = self._allocated(value.shape)._grown_for(index)
        checked, marks = tensor_array_check(ta.marks, index, "write",
                                            dynamic=self.dynamic_size, array=self.name)
        return ta._new(scatter_update(ta.buffer, checked, value), marks)

    def scatter(self, indices, value, name=None):
        """A new TensorArray whose elements ``indices[k]`` are ``value[k]``."""
        self._need_open("scatter")
        value = checked_element(self, value, "value", "scatter", leading=True)
        indices = indices_of(indices)
        if self.items is not None:
            known = [int(i) for i in np.ravel(known_value(indices))]
            rows = [value[k] for k in range(len(known))]
            return self._new(None, self.marks, items=self.items.written(known, rows, self))
        ta = self._allocated(value.shape[1:])
        ta = ta._grown_for(indices)
        checked, marks = tensor_array_check(ta.marks, indices, "write",
                                            dynamic=self.dynamic_size, array=self.name)
        return ta._new(scatter_update(ta.buffer, checked, value), marks)

    def unstack(self, value, name=None):
        """A new TensorArray whose element ``i`` is ``value[i]``."""
        value = checked_element(self, value, "value", "unstack", leading=True)
        n, size = value.shape[0], self._static_size()
        if n is not None and size is not None and n > size and not self.dynamic_size:
            raise ValueError(f"{SITE}.unstack: Cannot unstack {n} tensors into a TensorArray "
                             f"of static size {size} ({self.name!r}). Give size={n}, or "
                             f"dynamic_size=True.")
        indices = constant(np.arange(n, dtype=np.int64)) if n is not None else \
            row_indices(value)
        return self.scatter(indices, value)

    def split(self, value, lengths, name=None):
        """A new TensorArray whose element ``i`` is the next ``lengths[i]`` rows of ``value``."""
        self._need_open("split")
        value = checked_element(self, value, "value", "split", leading=True, rows_free=True)
        lengths = lengths_of(lengths, value.shape, self._static_size(), self.dynamic_size,
                             self.name)
        pieces = split_rows(value, lengths)
        if self.infer_shape and len(set(lengths)) <= 1 and self.items is None:
            rows = reshape(value, (len(lengths), lengths[0] if lengths else 0)
                           + tuple(value.shape[1:]))
            return self.scatter(list(range(len(lengths))), rows)
        items = self.items if self.items is not None else Items.of_buffer(self, "split")
        ta = self._new(None, self.marks, items=items.written(list(range(len(lengths))),
                                                             pieces, self))
        ta.element_shape = None
        return ta

    # -- reading ----------------------------------------------------------------------
    def read(self, index, name=None):
        """Element ``index``; with clear_after_read, it may not be read again.

        (An element never written reads as zeros, as in TensorFlow 2.)"""
        self._need_open("read")
        if self.items is not None:
            return self.items.read([known_int(index, "read")], self,
                                   self.clear_after_read)[0]
        self._need_buffer("read")
        checked, marks = tensor_array_check(self.marks, index_of(index, "read"), "read",
                                            clear=self.clear_after_read, array=self.name)
        # TensorFlow's read clears in place; not so for an array of an enclosing graph
        # read in a loop body (the body's marks must not leak out of it).
        if self.clear_after_read and self.graph is state.graph:
            self.marks = marks
        return gather(self._pinned(), checked)

    def gather(self, indices, name=None):
        """The elements ``indices``, stacked: shape ``[len(indices), *element_shape]``."""
        self._need_open("gather")
        if self.items is not None:
            known = [int(i) for i in np.ravel(known_value(indices_of(indices)))]
            return stack(self.items.read(known, self, False))
        self._need_buffer("gather")
        checked, _ = tensor_array_check(self.marks, indices_of(indices), "gather",
                                        array=self.name)
        return gather(self._pinned(), checked)

    def stack(self, name=None):
        """All elements stacked into one tensor of shape ``[size, *element_shape]``."""
        self._need_open("stack")
        if self.items is not None:
            return self.items.stacked(self)
        self._need_buffer("stack")
        return self._pinned()

    def concat(self, name=None):
        """All elements joined along their first axis (elements of rank >= 1)."""
        self._need_open("concat")
        if self.items is not None:
            return self.items.concatenated(self)
        self._need_buffer("concat")
        if not self.element_shape:
            raise ValueError(f"{SITE}.concat: Concat saw a scalar shape at index 0 but "
                             f"requires at least vectors: the elements of {self.name!r} are "
                             f"scalars. Use stack() instead.")
        return reshape(self._pinned(), (-1,) + tuple(self.element_shape[1:]))

    def identity(self):
        return self

    # -- helpers ----------------------------------------------------------------------
    def _allocated(self, element_shape):
        """This array, with a buffer for elements of ``element_shape`` (the first write's,
        its unknown sizes filled in from element_shape=)."""
        if self.buffer is not None:
            return self
        if element_shape is not None and self.element_shape is not None:
            element_shape = merged(element_shape, self.element_shape)
        if not full_shape(element_shape):
            raise ValueError(f"{SITE}: the first write to {self.name!r} has shape "
                             f"{element_shape}, not fully known: give element_shape=.")
        element_shape = tuple(element_shape)
        return self._new(self._zeros_buffer(element_shape), self.marks, element_shape)

    def _zeros_buffer(self, element_shape):
        n = self._static_size()
        if n is not None:
            return zeros((n,) + tuple(element_shape), self.dtype)
        return resize_rows(zeros((0,) + tuple(element_shape), self.dtype),
                           row_count(self.marks), constant(np.int64(0)))

    def _grown_for(self, index):
        """With dynamic_size, this array grown to hold ``index`` (a scalar or 1-D): now when
        the index is known, when the graph runs if it is not."""
        if not self.dynamic_size:
            return self
        known, n = known_value(index), self._static_size()
        if known is not None and n is not None:
            if known.size == 0 or int(known.max()) < n:
                return self
            pad = int(known.max()) + 1 - n
            buffer = concat([self.buffer, zeros((pad,) + self.element_shape, self.dtype)])
            return self._new(buffer, concat([self.marks, constant(np.zeros(pad, np.int32))]))
        old, index = row_count(self.marks), cast(index, dtypes.int64)
        needed = index + 1 if index.shape == () else \
            reduce_max(concat([index + 1, constant(np.zeros(1, np.int64))]))
        new = maximum(old, needed)
        return self._new(resize_rows(self.buffer, new, old), resize_rows(self.marks, new, old))

    def _pinned(self):
        """The buffer, its row count pinned for gradients when it may change as a graph runs
        (an identity whose gradient is cut back to those rows: a loop's gradient then
        never mixes the buffers of two iterations' sizes). Eagerly, each iteration is
        recorded with its own sizes, so nothing needs pinning."""
        if state.graph is None or (self._static_size() is not None and not self.dynamic_size):
            return self.buffer
        rows = row_count(self.buffer)
        return resize_rows(self.buffer, rows, rows)

    def _need_open(self, method):
        if self.closed:
            raise RuntimeError(f"{SITE}.{method}: TensorArray {self.name!r} has already been "
                               f"closed. Make a new TensorArray.")

    def _need_buffer(self, method):
        if self.buffer is None:
            raise ValueError(f"{SITE}.{method}: {self.name!r} has not been written to and its "
                             f"element shape is not fully known: Could not read from "
                             f"TensorArray index 0 because it has not yet been written to. "
                             f"Write to it first, or give element_shape=.")
