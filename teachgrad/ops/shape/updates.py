"""Functional updates: a copy of a tensor with some rows replaced.

``scatter_update(x, indices, values)`` is ``x`` with ``x[indices] = values``,
computed out of place, so autodiff can see it as an ordinary op. It is what a
``tg.TensorArray`` write is made of: the array is a buffer tensor of shape
``[size, *element_shape]`` and writing element ``i`` makes a new buffer.

Its derivative splits the cotangent ``ct`` of the new buffer in two:

* the rows that were replaced came from ``values``: ``ct_values = ct[indices]``;
* the other rows came from ``x``: ``ct_x`` is ``ct`` with the replaced rows zeroed,
  i.e. ``scatter_update(ct, indices, 0)``, the same op again (so it is
  differentiable again, to any order).

``tensor_array_check`` guards a TensorArray's reads and writes. It carries no
gradient: it checks an index against the array's *marks* (one int per element:
0 unwritten, 1 written, 2 read and cleared), raises TensorFlow's errors for a
write to an element written before, a second read of a cleared element, or an
index out of range, and returns the index (so every read and write that uses
it depends on the check, in a graph too) and the updated marks.
"""
import numpy as np

from ... import backend
from ..core.apply import innermost
from ..core.declare import (
    defbatch,
    defeffect,
    defjvp,
    defshape,
    defvjp,
    not_differentiable,
    primitive,
    takes_complex,
)
from ..elementwise.casts import zeros_like
from .indexing import gather
from .rearrange import moveaxis
from .reshape import repeat_like

UNWRITTEN, WRITTEN, CLEARED = 0, 1, 2


def _scatter_update_kernel(x, indices, values):
    out = backend.xp.array(x, copy=True)
    out[indices] = values
    return out

# scatter_update(x, indices, values): x with its rows at `indices` replaced by `values`
# (indices a scalar or a 1-D int tensor of distinct rows).
scatter_update_p = primitive("scatter_update", _scatter_update_kernel)
defeffect(scatter_update_p, "fresh")
takes_complex(scatter_update_p)
def scatter_update(x, indices, values):
    """A copy of ``x`` whose rows ``indices`` are ``values``:
    $\\partial/\\partial x$ passes the other rows, $\\partial/\\partial v$ the replaced ones."""
    return innermost.process(scatter_update_p, x, indices, values)
defvjp(scatter_update_p,
       lambda ct, ans, x, indices, values: scatter_update(ct, indices, zeros_like(values)),
       None,
       lambda ct, ans, x, indices, values: gather(ct, indices))
defjvp(scatter_update_p,
       lambda x_dot, ans, x, indices, values: scatter_update(x_dot, indices, zeros_like(values)),
       None,
       lambda v_dot, ans, x, indices, values: scatter_update(zeros_like(ans), indices, v_dot))
defshape(scatter_update_p, lambda x, indices, values: [(x.shape, x.dtype)])


def _scatter_update_batch(values, batched):
    """Shared indices: the rows are axis 1 of the batch, so move them to the front,
    replace them (the batch axis of ``values`` after the indices' axes; shared values
    repeated along it, so that the op's VJP, which gives ``values`` a cotangent of the
    rows' shape, sees one shape), and move them back. Indices that differ from example
    to example loop."""
    (x, indices, v), (x_batched, indices_batched, v_batched) = values, batched
    if indices_batched or indices.shape is None:
        return NotImplemented
    x = x if x_batched else repeat_like(x, v)
    at = indices.ndim   # where the batch axis goes in the rows' values
    if v_batched or v.ndim >= at:
        v = moveaxis(v if v_batched else repeat_like(v, x), 0, at)
    out = innermost.process(scatter_update_p, moveaxis(x, 0, 1), indices, v)
    return moveaxis(out, 1, 0), True
defbatch(scatter_update_p, _scatter_update_batch)


def check_marks(found, wanted, action, clear=False, dynamic=False, array="TensorArray"):
    """Raise TensorFlow's error if ``action`` ("write", "read", "gather") at the indices
    ``wanted`` (ints) is not allowed by the marks ``found`` (a numpy array)."""
    size = found.shape[0]
    if action == "rows" and len(wanted) != size:
        raise ValueError(f"TensorArray {array!r}: Input value must have first dimension equal "
                         f"to the array size ({len(wanted)} vs. {size}): every tensor of "
                         f"elems must have the same number of rows.")
    for i in wanted:
        if not 0 <= i < size:
            raise IndexError(_out_of_range(array, action, i, size, dynamic))
    if action == "write":
        for k, i in enumerate(wanted):
            if found[i] == WRITTEN or i in wanted[:k]:
                raise ValueError(f"TensorArray {array!r}: Could not write to TensorArray index "
                                 f"{i} because it has already been written to. A TensorArray "
                                 f"element is written once: write each index one time (use "
                                 f"the TensorArray that write returned).")
            if found[i] == CLEARED:
                raise ValueError(f"TensorArray {array!r}: Could not write to TensorArray index "
                                 f"{i} because it has already been read.")
    elif action == "read":
        for i in wanted:
            if found[i] == CLEARED:
                raise ValueError(f"TensorArray {array!r}: Could not read index {i} twice "
                                 f"because it was cleared after a previous read (perhaps try "
                                 f"setting clear_after_read = false?).")


def _check_kernel(marks, indices, action, clear, dynamic, array):
    wanted = [int(i) for i in np.ravel(backend.to_numpy(indices))]
    check_marks(backend.to_numpy(marks), wanted, action, clear, dynamic, array)
    if action == "write" or (action == "read" and clear):
        marks = backend.xp.array(marks, copy=True)
        marks[indices] = WRITTEN if action == "write" else CLEARED
    return indices, marks


def _out_of_range(array, action, i, size, dynamic):
    if action == "write" and dynamic:
        return (f"TensorArray {array!r}: Tried to write to index {i} but array size is: {size}. "
                f"A dynamic_size TensorArray grows when the index is known as it is written "
                f"(eagerly, or a Python int); in a graph a computed index cannot grow it: "
                f"give it a size= large enough (a loop's maximum_iterations, say).")
    if action == "write":
        return (f"TensorArray {array!r}: Tried to write to index {i} but array is not "
                f"resizeable and size is: {size}. Give a larger size=, or dynamic_size=True.")
    return (f"TensorArray {array!r}: Tried to {action} from index {i} but array size is: "
            f"{size}. Indices run from 0 to size - 1.")

# tensor_array_check(marks, indices): (indices, new marks), after checking that the
# `action` ("write", "read", "gather"; "rows": indices that are every row) is allowed at
# those indices. No gradient.
tensor_array_check_p = not_differentiable(primitive("tensor_array_check", _check_kernel,
                                                    multiple_results=True))
takes_complex(tensor_array_check_p)
def tensor_array_check(marks, indices, action, clear=False, dynamic=False, array="TensorArray"):
    return innermost.process(tensor_array_check_p, marks, indices, action=action, clear=clear,
                dynamic=dynamic, array=array)
defshape(tensor_array_check_p, lambda marks, indices, **params: [
 (indices.shape, indices.dtype), (marks.shape, marks.dtype)])
