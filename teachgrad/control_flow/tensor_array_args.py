"""What a ``tg.TensorArray`` is given, checked: its size, indices, lengths and shapes.

A size or an index may be a Python int, an eager tensor or a graph tensor. Where its
value is known now (a number, an eager tensor, a graph's constant), the array uses it
at once (to size a buffer, to grow a ``dynamic_size`` array); where it is known only
when the graph runs, the array's ops take it as a tensor.
"""
import numpy as np

from .. import dtypes, validate
from ..backend import to_numpy
from ..ops import cast
from ..tensor import SymbolicTensor, Tensor, constant
from .subgraph import as_tensor

SITE = "tg.TensorArray"


def known_value(value):
    """``value`` as a numpy array if it is known now (a number, an eager tensor or a
    graph's constant), else None."""
    if isinstance(value, SymbolicTensor):
        node = value.node
        return to_numpy(node.params["value"]) if node.op.name == "const" else None
    if isinstance(value, Tensor):
        return value.numpy()
    return np.asarray(to_numpy(value))


def size_of(size):
    """``size`` as an int when it is known now, else as an int64 scalar tensor."""
    if size is None:
        validate.fail(TypeError, SITE, "size", "an int >= 0 (0 with dynamic_size=True, to "
                      "grow as it is written)", size)
    if isinstance(size, Tensor):
        if size.dtype.kind not in "iu" or size.shape not in ((), None):
            validate.fail(TypeError, SITE, "size", "an integer scalar", size)
        value = known_value(size)
        if value is None:   # known when the graph runs
            return size if size.dtype == dtypes.int64 else cast(size, dtypes.int64)
        size = value.item()
    return validate.integer(size, "size", SITE, minimum=0)


def index_of(index, method):
    """A scalar index as an integer tensor."""
    if isinstance(index, Tensor):
        if index.dtype.kind not in "iu" or index.shape not in ((), None):
            raise TypeError(f"{SITE}.{method}: `index` must be an integer scalar, got dtype "
                            f"{index.dtype} and shape {index.shape}.")
        return index
    validate.integer(index, "index", f"{SITE}.{method}")
    return constant(np.int64(index))


def indices_of(indices):
    """Indices (a list or an integer tensor) as a 1-D integer tensor."""
    indices = indices if isinstance(indices, Tensor) else \
        constant(np.asarray(indices, dtype=np.int64).reshape(-1))
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{SITE}: `indices` must be integers, got {indices.dtype}.")
    return indices


def known_int(index, method):
    """An index that must be known now (an array whose elements differ in shape keeps
    them in a Python list): its int value."""
    value = known_value(index)
    if value is None:
        raise ValueError(f"{SITE}.{method}: this array keeps elements of different shapes "
                         f"(infer_shape=False, or a split of unequal lengths), so its indices "
                         f"must be known when the graph is built (Python ints), got "
                         f"{index.name}. Give every element one shape to index it with "
                         f"tensors.")
    if np.ndim(value) != 0 or np.asarray(value).dtype.kind not in "iu":
        raise TypeError(f"{SITE}.{method}: `index` must be an integer scalar, got {value!r}.")
    return int(value)


def lengths_of(lengths, value_shape, size, dynamic, name):
    """split's ``lengths`` as a list of ints, checked as TensorFlow checks them."""
    known = known_value(lengths)
    if known is None:
        raise ValueError(f"{SITE}.split: `lengths` must be known when the graph is built "
                         f"(a list of ints), got {lengths.name}.")
    known = np.asarray(known)
    if known.ndim != 1 or known.dtype.kind not in "iu":
        raise ValueError(f"{SITE}.split: Expected lengths to be a vector of ints, received "
                         f"shape: {list(known.shape)} (dtype {known.dtype}).")
    if value_shape is None or len(value_shape) == 0:
        raise ValueError(f"{SITE}.split: Expected value to be at least a vector, but received "
                         f"shape: {list(value_shape or ())}.")
    out = [int(n) for n in known]
    if any(n < 0 for n in out):
        raise ValueError(f"{SITE}.split: lengths must be >= 0, got {out}.")
    if value_shape[0] is not None and sum(out) != value_shape[0]:
        raise ValueError(f"{SITE}.split: Expected sum of lengths to be equal to "
                         f"values.shape[0], but sum of lengths is {sum(out)} and value's "
                         f"shape is: {list(value_shape)}.")
    if size is not None and len(out) != size and not (dynamic and len(out) > size):
        raise ValueError(f"{SITE}.split: TensorArray's size is not equal to the size of "
                         f"lengths ({size} vs. {len(out)}), and the TensorArray {name!r} is "
                         f"not marked as dynamically resizeable.")
    return out


def fits(shape, expected):
    """Could ``shape`` be ``expected`` (None: a size not known)?"""
    return len(shape) == len(expected) and all(
        a is None or b is None or a == b for a, b in zip(shape, expected))


def merged(shape, expected):
    """``expected`` with its unknown sizes taken from ``shape`` (which fits it)."""
    return tuple(b if b is not None else a for a, b in zip(shape, expected))


def full_shape(shape):
    """Is ``shape`` known in every size?"""
    return shape is not None and None not in shape


def checked_element(ta, value, argument, method, leading=False, rows_free=False):
    """``value`` (for ``ta.method``) as a tensor, checked against the array's dtype and
    element shape (``leading``: a stack of elements; ``rows_free``: of any number of rows)."""
    where = f"{SITE}.{method}"
    if isinstance(value, (bool, int, float)):
        value = constant(value, ta.dtype)
    elif not isinstance(value, Tensor):
        value = as_tensor(value, name=argument, where=where)
        if value.dtype != ta.dtype and value.dtype.kind == ta.dtype.kind:
            value = cast(value, ta.dtype)
    if value.dtype != ta.dtype:
        raise TypeError(f"{where}: TensorArray {ta.name!r} has dtype {ta.dtype} but "
                        f"`{argument}` has dtype {value.dtype}. Cast it with "
                        f"tg.cast({argument}, {ta.dtype.name!r}) first.")
    shape = value.shape
    if leading and (shape is None or len(shape) == 0):
        raise ValueError(f"{where}: Expected `{argument}` to be at least a vector (one "
                         f"entry per element), but received shape: {shape}.")
    if rows_free:
        return value
    element = None if shape is None else tuple(shape[1:] if leading else shape)
    expected = ta.element_shape
    if expected is not None and element is not None and not fits(element, expected):
        raise ValueError(f"{where}: TensorArray {ta.name!r} holds elements of shape "
                         f"{expected} but `{argument}` gives elements of shape "
                         f"{element}. Write tensors of the element shape"
                         + (" (or make it with infer_shape=False)." if ta.infer_shape
                            else "."))
    return value
