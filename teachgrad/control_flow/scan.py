"""``tg.scan``, ``tg.foldl``, ``tg.foldr`` and ``tg.map_fn``: loops over a tensor's rows.

Each is a ``tg.while_loop`` over a counter ``i``, reading row ``i`` of ``elems``
from a TensorArray (``unstack``) and writing what ``fn`` returns to another
(``write``), as TensorFlow builds them. So eagerly every iteration is recorded on
the tape, and in a graph the whole thing is **one While node** whose gradient is
another While node: backpropagation through time, one backward iteration per
forward one, in reverse.

    tg.scan(lambda a, x: a + x, tg.constant([1, 2, 3, 4, 5, 6]))   # [1, 3, 6, 10, 15, 21]
    tg.foldl(lambda a, x: a + x, tg.constant([1, 2, 3, 4, 5, 6]))  # 21

``elems`` may be a nested structure of tensors (all with the same number of rows),
and so may the accumulator: ``fn(carry, x)`` gets both in their structures.
"""
import numpy as np

from .. import nest, validate
from ..ops import gather
from ..ops.shape.rows import row_count, row_indices
from ..ops.shape.updates import tensor_array_check
from ..state import state
from ..tensor import Tensor, constant
from .structure import check_dtype, check_same_structure, paths
from .subgraph import as_tensor
from .tensor_array import TensorArray
from .while_loop import while_loop


def _rows(elems, where):
    """The leaves of ``elems`` as tensors, and their common number of rows: an int, or
    (a graph's placeholder of shape ``[None, ...]``) an int64 tensor known when it runs."""
    if elems is None or (nest.is_nested(elems) and not nest.flatten(elems)):
        validate.fail(ValueError, where, "elems", "a tensor (or a nested structure of "
                      "tensors) to loop over", elems)
    flat = [_tensor(e, "elems", where) for e in nest.flatten(elems)]
    lengths = []
    for path, t in zip(paths(elems, "elems"), flat):
        if t.shape is None or len(t.shape) == 0:
            raise ValueError(f"{where}: {path} must have a leading axis to loop over, got "
                             f"shape {t.shape}.")
        lengths.append(t.shape[0])
    known = {n for n in lengths if n is not None}
    if len(known) > 1:
        raise ValueError(f"{where}: the tensors of `elems` must all have the same number of "
                         f"rows (their first axis), got {lengths} for "
                         f"{paths(elems, 'elems')}.")
    if known:   # the others are checked against it when the graph runs
        return flat, known.pop()
    return flat, row_count(flat[0])


def _tensor(value, argument, where):
    if state.graph is not None and isinstance(value, Tensor):
        return state.graph.as_graph_tensor(value, None)
    return as_tensor(value, name=argument, where=where)


def _unstacked(flat, n):
    """The rows of each of ``flat`` to read; where a length is known only when the graph
    runs, it is checked then to be ``n`` (TensorFlow's unstack error otherwise)."""
    arrays = []
    for k, t in enumerate(flat):
        if (t.shape[0] == n) if isinstance(n, int) else k == 0:   # n is its length
            arrays.append(TensorArray.of_rows(t, "elems"))
            continue
        marks = TensorArray(t.dtype, n, name="elems").marks
        checked, _ = tensor_array_check(marks, row_indices(t), "rows", array="elems")
        arrays.append(TensorArray.of_rows(gather(t, checked), "elems"))
    return arrays


def _row(elems, inputs, index):
    return nest.pack_sequence_as(elems, [ta.read(index) for ta in inputs])


def _checked_carry(where, carry, result, before, label):
    """``fn``'s new carry, checked to keep the carry's structure, dtypes and shapes
    (``label``: what the messages call the carry: where its first value came from)."""
    check_same_structure(carry, result, f"{where}: fn", label,
                         "fn's result")
    after = [as_tensor(v, like, "fn's result", where) if not isinstance(v, Tensor) else v
             for v, like in zip(nest.flatten(result), before)]
    for path, a, b in zip(paths(carry, label), before, after):
        check_dtype(path, a.dtype, b.dtype, f"{where}: fn")
        if a.shape is not None and b.shape is not None and tuple(a.shape) != tuple(b.shape):
            raise ValueError(f"{where}: fn changes the shape of {path} from {a.shape} to "
                             f"{b.shape}. The carry must keep its shape from step to step.")
    return after


def _loop(fn, elems, initializer, reverse, keep, where, name):
    """The shared loop: returns the carry's structure, its final leaves, and (``keep``)
    the TensorArrays of its value after each step."""
    validate.callable_(fn, "fn", where)
    flat, n = _rows(elems, where)
    inputs = _unstacked(flat, n)

    def order(i):
        return n - 1 - i if reverse else i

    if initializer is None:
        if isinstance(n, int) and n == 0:
            raise ValueError(f"{where}: elems is empty and there is no initializer, so there "
                             f"is no first value to start from. Give initializer=.")
        carry, start = _row(elems, inputs, order(0)), 1
    else:
        carry, start = initializer, 0
    carry_flat = [_tensor(c, "initializer", where) for c in nest.flatten(carry)]
    outputs = [TensorArray(c.dtype, n, element_shape=c.shape, name="outputs")
               for c in carry_flat] if keep else []
    if keep and initializer is None:
        outputs = [ta.write(order(0), c) for ta, c in zip(outputs, carry_flat)]

    def body(i, values, outs):
        x = _row(elems, inputs, order(i))
        new = _checked_carry(where, carry, fn(nest.pack_sequence_as(carry, values), x), values,
                             "carry (from elems[0])" if initializer is None else
                             "carry (from initializer)")
        return i + 1, new, [ta.write(order(i), v) for ta, v in zip(outs, new)]

    if isinstance(n, int) and n == 0:   # no rows: TensorFlow's empty stack, no loop to trace
        return carry, carry_flat, outputs
    _, final, outputs = while_loop(lambda i, values, outs: i < n, body,
                                   [constant(np.int64(start)), carry_flat, outputs],
                                   name=name or where[3:])
    return carry, final, outputs


def scan(fn, elems, initializer=None, parallel_iterations=None, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """Each step's carry, stacked: ``out[i] = fn(out[i - 1], elems[i])``.

    Without ``initializer``, ``out[0] = elems[0]`` (and fn gets the structure of
    elems as carry). ``reverse=True`` runs from the last row to the first (``out``
    still lines up with ``elems``). ``parallel_iterations``, ``back_prop``,
    ``swap_memory`` and ``infer_shape`` are TensorFlow's, accepted and unused.

        a, b = tg.scan(lambda a, _: (a[1], a[0] + a[1]), tg.constant([1, 0, 0, 0, 0, 0]),
                       (tg.constant(0), tg.constant(1)))    # a: [1, 1, 2, 3, 5, 8]
    """
    validate.flags("tg.scan", back_prop=back_prop, swap_memory=swap_memory,
                   infer_shape=infer_shape, reverse=reverse, name=name)
    carry, _, outputs = _loop(fn, elems, initializer, reverse, True, "tg.scan", name)
    return nest.pack_sequence_as(carry, [ta.stack() for ta in outputs])


def foldl(fn, elems, initializer=None, parallel_iterations=None, back_prop=True,
          swap_memory=False, name=None):
    """``fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n-1])``: the last carry
    of a scan, from the first row to the last."""
    validate.flags("tg.foldl", back_prop=back_prop, swap_memory=swap_memory, name=name)
    carry, final, _ = _loop(fn, elems, initializer, False, False, "tg.foldl", name)
    return nest.pack_sequence_as(carry, final)


def foldr(fn, elems, initializer=None, parallel_iterations=None, back_prop=True,
          swap_memory=False, name=None):
    """foldl from the last row to the first: ``fn(...fn(initializer, elems[n-1])..., elems[0])``."""
    validate.flags("tg.foldr", back_prop=back_prop, swap_memory=swap_memory, name=name)
    carry, final, _ = _loop(fn, elems, initializer, True, False, "tg.foldr", name)
    return nest.pack_sequence_as(carry, final)


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None, fn_output_signature=None):
    """``fn`` applied to each row of ``elems``, the results stacked: ``out[i] = fn(elems[i])``.

    ``fn_output_signature`` (or TF1's ``dtype``): the dtypes of what fn returns, in
    its structure, when it differs from elems'; the element shapes are taken from
    fn's first result.

        tg.map_fn(lambda t: t * t, tg.constant([1, 2, 3, 4, 5, 6]))   # [1, 4, 9, 16, 25, 36]
    """
    where = "tg.map_fn"
    validate.flags(where, back_prop=back_prop, swap_memory=swap_memory,
                   infer_shape=infer_shape, name=name)
    validate.callable_(fn, "fn", where)
    flat, n = _rows(elems, where)
    if isinstance(n, int) and n == 0:
        raise ValueError(f"{where}: elems is empty, so fn never runs and the shape of its "
                         f"results is unknown. Handle the empty case before calling map_fn.")
    inputs = _unstacked(flat, n)
    signature = fn_output_signature if fn_output_signature is not None else dtype
    structure = elems if signature is None else signature
    dtypes = [t.dtype for t in flat] if signature is None else \
        [validate.dtype(d, "fn_output_signature" if fn_output_signature is not None
                        else "dtype", where) for d in nest.flatten(signature)]
    outputs = [TensorArray(d, n, name="outputs") for d in dtypes]

    def body(i, outs):
        result = fn(_row(elems, inputs, i))
        check_same_structure(structure, result, f"{where}: fn", "fn_output_signature (by "
                             "default, the structure of elems)", "fn's result")
        values = [as_tensor(v, constant(np.zeros((), d)), "fn's result", where)
                  for v, d in zip(nest.flatten(result), dtypes)]
        for path, d, v in zip(paths(structure, "result"), dtypes, values):
            check_dtype(path, d, v.dtype, f"{where}: fn (give fn_output_signature= when fn "
                                          f"returns other dtypes than elems)")
        return i + 1, [ta.write(i, v) for ta, v in zip(outs, values)]

    _, outputs = while_loop(lambda i, outs: i < n, body, [constant(np.int64(0)), outputs],
                            name=name or "map")
    return nest.pack_sequence_as(structure, [ta.stack() for ta in outputs])
