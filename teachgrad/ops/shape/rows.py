"""Row counts known only when a graph runs: what loops over an unknown length are made of.

A placeholder of shape ``[None, 3]`` has a number of rows that the graph learns
when it runs. A loop over those rows (``tg.scan``, ``tg.map_fn``) needs that number
as a tensor, and a TensorArray of that many elements needs buffers of that many
rows. Three small ops give them:

* ``row_count(x)``: ``x.shape[0]`` as an int64 scalar tensor (no gradient);
* ``row_indices(x)``: ``[0, 1, ..., x.shape[0] - 1]`` (no gradient);
* ``resize_rows(x, n, x_rows)``: the first ``n`` rows of ``x``, with rows of zeros
  after them if ``x`` has fewer than ``n``. A TensorArray of ``n`` elements starts as
  ``resize_rows`` of an empty buffer, and a ``dynamic_size`` array written past its end
  grows by it.

``resize_rows`` is linear in ``x``, and its transpose is ``resize_rows`` back to
``x_rows`` rows: the cotangent of the rows that were kept passes, that of the padding
is dropped. ``x_rows`` (``x``'s own row count, given by the caller) is there so the
rule reads two integers and never ``x`` itself: a loop's gradient then saves two
numbers per iteration for it, not a buffer whose size changes from one to the next.
"""
import numpy as np

from ... import backend, dtypes
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
from .rearrange import moveaxis


def _rows_of(x):
    if x.shape is None or len(x.shape) == 0:
        raise ValueError(f"row_count: expected a tensor with a leading axis, got shape "
                         f"{x.shape}.")


# row_count(x): the length of x's first axis, as an int64 scalar.
row_count_p = not_differentiable(primitive(
    "row_count", lambda x: backend.xp.asarray(x.shape[0], dtype=np.int64)))
defeffect(row_count_p, "fresh", shape_only_inputs=(0,))
defshape(row_count_p, lambda x: [((), dtypes.int64)])
def row_count(x):
    """The number of rows of ``x`` (its first axis), known when the graph runs."""
    _rows_of(x)
    return innermost.process(row_count_p, x)


def _rows_batch(op):
    """Under vmap: every example has the batch's axis 1 rows (one value for them all)."""
    return lambda values, batched: (innermost.process(op, moveaxis(values[0], 0, 1)), False)
defbatch(row_count_p, _rows_batch(row_count_p))


# row_indices(x): 0, 1, ..., x.shape[0] - 1 (int64).
row_indices_p = not_differentiable(primitive(
    "row_indices", lambda x: backend.xp.arange(x.shape[0], dtype=np.int64)))
defeffect(row_indices_p, "fresh", shape_only_inputs=(0,))
defshape(row_indices_p, lambda x: [((x.shape[0],), dtypes.int64)])
def row_indices(x):
    """The index of each row of ``x``: ``[0, ..., x.shape[0] - 1]``."""
    _rows_of(x)
    return innermost.process(row_indices_p, x)
defbatch(row_indices_p, _rows_batch(row_indices_p))


def _resize_kernel(x, n, x_rows):
    n = int(n)
    if n < 0:
        raise ValueError(f"resize_rows: the number of rows must be >= 0, got {n}.")
    xp = backend.xp
    kept = x[:n]
    if kept.shape[0] == n:
        return xp.array(kept, copy=True)
    pad = xp.zeros((n - kept.shape[0],) + tuple(x.shape[1:]), dtype=x.dtype)
    return xp.concatenate([kept, pad])


def _known_count(n):
    """``n``'s value if the graph knows it now (a constant), else None."""
    node = getattr(n, "node", None)
    if node is not None and node.op.name == "const":
        return int(np.asarray(backend.to_numpy(node.params["value"])))
    value = getattr(n, "value", None)
    return None if value is None else int(np.asarray(backend.to_numpy(value)))


def _resize_shape(x, n, x_rows):
    rows = _known_count(n)
    rest = None if x.shape is None else tuple(x.shape[1:])
    return [(None if rest is None else (rows,) + rest, x.dtype)]


# resize_rows(x, n, x_rows): x's first n rows, padded with zero rows to n
# (x_rows: x's own row count, which the gradient resizes back to).
resize_rows_p = primitive("resize_rows", _resize_kernel)
defeffect(resize_rows_p, "fresh")
takes_complex(resize_rows_p)
defshape(resize_rows_p, _resize_shape)
def resize_rows(x, n, x_rows):
    """``x`` cut or zero-padded to ``n`` rows; ``x_rows`` is ``x``'s row count (the size its
    gradient goes back to): $\\partial/\\partial x$ is ``resize_rows(ct, x_rows, n)``."""
    _rows_of(x)
    return innermost.process(resize_rows_p, x, n, x_rows)
defvjp(resize_rows_p, lambda ct, ans, x, n, x_rows: resize_rows(ct, x_rows, n), None, None)
defjvp(resize_rows_p, lambda x_dot, ans, x, n, x_rows: resize_rows(x_dot, n, x_rows), None,
       None)


def _resize_batch(values, batched):
    """One size for every example: resize the batch's axis 1. Sizes that differ from
    example to example give examples of different shapes, so they run one by one."""
    (x, n, x_rows), (x_batched, n_batched, rows_batched) = values, batched
    if n_batched or rows_batched or not x_batched:
        return NotImplemented
    return moveaxis(innermost.process(resize_rows_p, moveaxis(x, 0, 1), n, x_rows), 1, 0), True
defbatch(resize_rows_p, _resize_batch)
