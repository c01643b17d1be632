"""A TensorArray whose elements may differ in shape: its elements kept one by one.

``tg.TensorArray(..., infer_shape=False)`` lets element 0 be a scalar and element 1
a matrix, and ``ta.split(value, lengths=[2, 0, 1])`` makes elements of 2, 0 and 1
rows. Such elements do not fit in one buffer tensor, so the array keeps them as a
Python list of tensors (``Items``), with the same marks (written, read and cleared)
and the same errors as a buffered array. Reads and writes then pick list entries
at indices known when the graph is built, and gradients flow through them as through
any op on the tensors written.

A ``concat`` of elements of different leading lengths joins them (the reason to
keep them so); a ``stack`` needs them all of one shape, as TensorFlow's does.
"""
import numpy as np

from ..ops import concat, stack, zeros
from ..ops.shape.updates import CLEARED, WRITTEN, check_marks
from .tensor_array_args import SITE, known_value


class Items:
    """The elements (None: not written yet) and their marks (0, 1 written, 2 cleared)."""

    __slots__ = ("values", "marks")

    def __init__(self, values, marks):
        self.values = list(values)
        self.marks = np.array(marks, dtype=np.int32)

    @classmethod
    def empty(cls, size):
        return cls([None] * size, np.zeros(size, np.int32))

    @classmethod
    def of_buffer(cls, ta, method):
        """A buffered array's elements one by one (known only for a fresh array, or
        eagerly: its marks say which were written)."""
        n = ta.marks.shape[0]
        marks = known_value(ta.marks)
        if n is None or marks is None:
            raise ValueError(f"{SITE}.{method}: {ta.name!r} would need to keep elements of "
                             f"different shapes, but which of its elements are written is "
                             f"known only when the graph runs. Split into a new TensorArray.")
        return cls([None if marks[i] == 0 else ta.buffer[i] for i in range(n)], marks)

    def grown(self, needed):
        """These items with room for ``needed`` elements."""
        pad = max(needed - len(self.values), 0)
        return Items(self.values + [None] * pad, np.concatenate([self.marks,
                                                                 np.zeros(pad, np.int32)]))

    def written(self, indices, values, ta):
        """New items with ``values[k]`` at ``indices[k]``."""
        items = self.grown(max(indices) + 1) if ta.dynamic_size and indices else self
        check_marks(items.marks, indices, "write", dynamic=ta.dynamic_size, array=ta.name)
        out = Items(items.values, items.marks)
        for i, v in zip(indices, values):
            out.values[i] = v
            out.marks[i] = WRITTEN
        return out

    def read(self, indices, ta, clear):
        """The elements at ``indices`` (zeros for one never written, when the element
        shape is known); ``clear`` marks them cleared here."""
        check_marks(self.marks, indices, "read", array=ta.name)
        out = [self.element(i, ta) for i in indices]
        if clear:
            self.marks[indices] = CLEARED
        return out

    def element(self, i, ta):
        value = self.values[i]
        if value is not None:
            return value
        shape = ta.element_shape
        if shape is None or None in shape:
            raise ValueError(f"TensorArray {ta.name!r}: Could not read from TensorArray index "
                             f"{i} because it has not yet been written to (and its element "
                             f"shape is not known, so it cannot read as zeros).")
        return zeros(shape, ta.dtype)

    def stacked(self, ta):
        values = self.read(list(range(len(self.values))), ta, False)
        _one_shape([tuple(v.shape) for v in values], ta, "stack", "",
                   " Stack elements of one shape, or join them along their first axis with "
                   "concat().")
        if not values:
            return zeros((0,) + tuple(ta.element_shape or ()), ta.dtype)
        return stack(values)

    def concatenated(self, ta):
        values = self.read(list(range(len(self.values))), ta, False)
        for k, v in enumerate(values):
            if len(v.shape) == 0:
                raise ValueError(f"{SITE}.concat: Concat saw a scalar shape at index {k} but "
                                 f"requires at least vectors (it joins the elements along "
                                 f"their first axis). Use stack() for scalars.")
        _one_shape([tuple(v.shape[1:]) for v in values], ta, "concat",
                   "(excepting dimension 0) ", "")
        if not values:
            return zeros((0,) + tuple((ta.element_shape or (0,))[1:]), ta.dtype)
        return concat(values)


def _one_shape(shapes, ta, method, which, advice):
    """TensorFlow's error if the elements' ``shapes`` differ."""
    for k, shape in enumerate(shapes):
        if shape != shapes[0]:
            raise ValueError(f"{SITE}.{method}: TensorArray {ta.name!r} has inconsistent "
                             f"shapes. Index 0 has {which}shape: {list(shapes[0])} but index "
                             f"{k} has {which}shape: {list(shape)}.{advice}")


def split_rows(value, lengths):
    """``value``'s rows cut into pieces of ``lengths`` rows."""
    starts = np.concatenate([[0], np.cumsum(lengths)]).astype(int)
    return [value[int(a):int(b)] for a, b in zip(starts[:-1], starts[1:])]
