"""TensorArrays as ``tg.while_loop`` variables: the loop carries their flows.

A loop variable must be a tensor, so a TensorArray in ``loop_vars`` enters the
loop as its two flows, ``(buffer, marks)``. ``cond`` and ``body`` still see
TensorArrays: before calling them the flows are wrapped back into TensorArrays
like the ones given (same dtype, element shape, options), and what ``body``
returns is unwrapped to flows again. This is what TensorFlow's ``while_loop`` does
with a TensorArray's ``flow``, and it keeps the loop itself unchanged: eagerly an
iteration is recorded like any other, and in a graph the loop is still one While
node whose gradient is a While node too (backprop through time).

An array with ``dynamic_size`` may grow, eagerly and in a graph (at a computed
index, when the graph runs), so its flows get shape invariants with an unknown
leading size. An array of elements of different shapes (``infer_shape=False``)
is kept one by one, not in flows, so it cannot be a loop variable.
"""
from .. import nest
from ..ops.core.apply import unobserved
from ..state import state
from .structure import check_same_structure, paths
from .subgraph import trace
from .tensor_array import TensorArray


def has_arrays(structure):
    """Does ``structure`` hold a TensorArray?"""
    return any(isinstance(leaf, TensorArray) for leaf in nest.flatten(structure))


def to_flows(structure, like=None, where="tg.while_loop"):
    """``structure`` with each TensorArray replaced by its flows ``(buffer, marks)``.

    With ``like`` (the loop_vars), the places that hold arrays there must hold
    arrays here too, of the same dtype.
    """
    leaves = nest.flatten(structure)
    likes = nest.flatten(like) if like is not None else leaves
    names = paths(like if like is not None else structure, "loop_vars")
    out = []
    for path, leaf, model in zip(names, leaves, likes):
        if isinstance(model, TensorArray) != isinstance(leaf, TensorArray):
            raise TypeError(f"{where}: {path} is a TensorArray in loop_vars, so the body must "
                            f"return a TensorArray there (the one write returned), got "
                            f"{leaf!r:.80}." if isinstance(model, TensorArray) else
                            f"{where}: {path} is not a TensorArray in loop_vars, but the "
                            f"body returned one there.")
        if isinstance(leaf, TensorArray):
            if leaf.items is not None or leaf.closed:
                raise TypeError(f"{where}: the TensorArray {path} ({leaf.name!r}) " + (
                    "is closed." if leaf.closed else
                    "keeps elements of different shapes one by one (infer_shape=False, or a "
                    "split of unequal lengths), so a loop cannot carry it. Give its elements "
                    "one shape (infer_shape=True) to write it in a loop."))
            if leaf.dtype != model.dtype:
                raise TypeError(f"{where}: the TensorArray {path} enters as {model.dtype} but "
                                f"comes back as {leaf.dtype}.")
            if leaf.buffer is None:
                raise ValueError(f"{where}: the TensorArray {path} ({leaf.name!r}) has no "
                                 f"element shape yet, so the loop cannot carry it. Give it "
                                 f"element_shape=, or write to it before the loop.")
            out.append((leaf.buffer, leaf.marks))
        else:
            out.append(leaf)
    return nest.pack_sequence_as(structure, out) if nest.is_nested(structure) else out[0]


def from_flows(like, structure):
    """``structure`` (flows in place of arrays) with TensorArrays like ``like``'s again."""
    leaves = nest.flatten(like)
    flows = nest.flatten(structure)
    out, k = [], 0
    for leaf in leaves:
        if isinstance(leaf, TensorArray):
            buffer, marks = flows[k], flows[k + 1]
            out.append(leaf._new(buffer, marks))
            k += 2
        else:
            out.append(flows[k])
            k += 1
    return nest.pack_sequence_as(like, out) if nest.is_nested(like) else out[0]


def _with_element_shapes(body, loop_vars):
    """``loop_vars`` with a buffer for each array not written yet, shaped like what the
    body writes to it (TensorFlow infers the element shape from the first write too).

    The body is called once to see that: eagerly with nothing recording, in a graph
    traced into a subgraph that is then thrown away.
    """
    leaves = nest.flatten(loop_vars)
    if all(not isinstance(v, TensorArray) or v.buffer is not None for v in leaves):
        return loop_vars
    # copies: a read in the body must not clear an element of the arrays given
    copies = [v._new(v.buffer, v.marks) if isinstance(v, TensorArray) else v for v in leaves]
    copies = nest.pack_sequence_as(loop_vars, copies) if nest.is_nested(loop_vars) else copies[0]
    if state.graph is None:
        with unobserved():
            result = _spread(body, loop_vars, copies)
    else:
        results = []   # (the traced function returns None: its graph is thrown away)
        trace(lambda: results.append(_spread(body, loop_vars, copies)), [], "shapes")
        result = results[0]
    if isinstance(loop_vars, (list, tuple)) and len(loop_vars) == 1 \
            and not nest.is_nested(result):
        result = [result]
    check_same_structure(loop_vars, result, "while_loop", "loop_vars", "the body's result")
    shaped = [v._allocated(r.element_shape) if isinstance(v, TensorArray) and v.buffer is None
              and isinstance(r, TensorArray) and r.element_shape is not None else v
              for v, r in zip(leaves, nest.flatten(result))]
    return nest.pack_sequence_as(loop_vars, shaped) if nest.is_nested(loop_vars) else shaped[0]


def _spread(fn, like, values):
    """Call ``fn`` as while_loop does: a list/tuple of loop variables is spread."""
    if isinstance(like, (list, tuple)) and not hasattr(like, "_fields"):
        return fn(*values)
    return fn(values)


def _invariants(loop_vars, shape_invariants):
    """Shape invariants for the flows: the user's for other variables, and for arrays
    their flows' shapes (an unknown leading size for a dynamic_size array, eagerly)."""
    leaves = nest.flatten(loop_vars)
    if shape_invariants is None:
        if not any(isinstance(v, TensorArray) and v.dynamic_size for v in leaves):
            return None
        given = [None if isinstance(v, TensorArray) else _shape(v) for v in leaves]
    else:
        given = _given(shape_invariants, loop_vars)
    out = []
    for leaf, shape in zip(leaves, given):
        if isinstance(leaf, TensorArray):
            n = None if leaf.dynamic_size else leaf.marks.shape[0]
            out.append(((n,) + tuple(leaf.buffer.shape[1:]), (n,)))
        else:
            out.append(shape)
    return nest.pack_sequence_as(loop_vars, out) if nest.is_nested(loop_vars) else out[0]


def _shape(value):
    shape = getattr(value, "shape", ())
    return None if shape is None else tuple(shape)


def _given(shape_invariants, loop_vars):
    """The user's invariant for each leaf of loop_vars (a shape is not spread further)."""
    if isinstance(loop_vars, dict):
        return [s for key in loop_vars for s in _given(shape_invariants[key], loop_vars[key])]
    if isinstance(loop_vars, (list, tuple)):
        return [s for v, sv in zip(loop_vars, shape_invariants) for s in _given(sv, v)]
    return [shape_invariants]


def while_with_arrays(while_loop, cond, body, loop_vars, maximum_iterations,
                      shape_invariants, name):
    """``while_loop`` over ``loop_vars`` holding TensorArrays, run on their flows."""
    loop_vars = _with_element_shapes(body, loop_vars)
    flows = to_flows(loop_vars)

    def inner_cond(plain):
        return _spread(cond, loop_vars, from_flows(loop_vars, plain))

    def inner_body(plain):
        result = _spread(body, loop_vars, from_flows(loop_vars, plain))
        if isinstance(loop_vars, (list, tuple)) and len(loop_vars) == 1 \
                and not nest.is_nested(result):
            result = type(loop_vars)([result])
        check_same_structure(loop_vars, result, "while_loop", "loop_vars", "the body's result")
        return [to_flows(result, loop_vars)]

    invariants = _invariants(loop_vars, shape_invariants)
    final = while_loop(inner_cond, inner_body, [flows], maximum_iterations,
                       None if invariants is None else [invariants], name)
    return from_flows(loop_vars, final[0])

