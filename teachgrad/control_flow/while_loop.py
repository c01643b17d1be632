"""``tg.while_loop``: a loop whose gradient is taken through every iteration.

Eagerly, the loop is plain Python: each iteration's ops are recorded on the
tape like any others (tagged with their iteration, so the BackpropStepper can
show it), and the backward engine walks back through all of them.

In a graph, the loop is **one While node** holding two subgraphs: ``cond``
(loop variables -> bool) and ``body`` (loop variables -> loop variables). This
file traces them and checks them against the loop variables; the node itself, its
kernel and its gradient (another While node) are in ``while_node.py`` and
``while_gradient.py``.
"""
import numpy as np

from .. import dtypes, nest, validate
from ..autodiff import events
from ..state import state
from ..tensor import SymbolicTensor, Tensor
from . import array_loops, batched
from .structure import align, check_dtype, check_same_structure, check_shape, paths
from .subgraph import as_tensor, entered, trace
from .while_node import build_while


class EagerLoop:
    """An eager ``while_loop`` as the tape's ops remember it (for the visualizers)."""

    def __init__(self, name):
        self.name = name
        self.iterations = 0

    def __repr__(self):
        return f"<while_loop {self.name!r}: {self.iterations} iterations>"


class Iteration:
    """The context of the ops recorded during one eager iteration."""

    __slots__ = ("loop", "iteration")

    def __init__(self, loop, iteration):
        self.loop = loop
        self.iteration = iteration


def while_loop(cond, body, loop_vars, maximum_iterations=None, shape_invariants=None,
               name="while"):
    """Repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` is true.

    Args:
      cond: a function of the loop variables returning a scalar bool.
      body: a function of the loop variables returning new values for them,
        in the same nested structure, with the same dtypes and shapes.
      loop_vars: a tensor, or a list/tuple (possibly nested, dicts too) of
        tensors, Variables' values or numbers. A list or tuple is spread into
        the arguments of ``cond`` and ``body``; anything else is passed as one
        argument.
      maximum_iterations: stop after this many iterations even if ``cond`` is
        still true (an int or an integer scalar tensor).
      shape_invariants: in graphs, the shapes the loop variables may take, in
        the structure of ``loop_vars``: None for a size that may change.
      name: the name of the While node in graphs.

    Returns:
      The final loop variables, in the structure of ``loop_vars``.

        i, x = tg.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * x),
                             [tg.constant(0), tg.constant(2.0)])     # x = 256.0
    """
    validate.flags("tg.while_loop", name=name)
    for argument, fn in (("cond", cond), ("body", body)):
        validate.callable_(fn, argument, "tg.while_loop", "while_loop needs functions for cond "
                           "and body (cond returns a bool, body the new loop_vars).")
    if loop_vars is None or (nest.is_nested(loop_vars) and not nest.flatten(loop_vars)):
        raise ValueError("while_loop needs at least one loop variable in loop_vars.")
    if array_loops.has_arrays(loop_vars):   # TensorArrays travel as their flows
        return array_loops.while_with_arrays(while_loop, cond, body, loop_vars,
                                             maximum_iterations, shape_invariants, name)
    if batched.inside_map(loop_vars):   # some example's loop may stop before another's
        return _batched_while(cond, body, loop_vars, maximum_iterations, name)
    if state.graph is not None:
        return _graph_while(cond, body, loop_vars, maximum_iterations, shape_invariants, name)
    return _eager_while(cond, body, loop_vars, maximum_iterations, shape_invariants, name)


def _batched_while(cond, body, loop_vars, maximum_iterations, name):
    """A loop inside tg.vectorized_map (see ``batched``): until no example's cond holds."""
    flat = [as_tensor(v) for v in nest.flatten(loop_vars)]
    if state.graph is not None:
        return batched.graph_batched_while(while_loop, cond, body, _call, flat, loop_vars,
                                           maximum_iterations, name)
    return batched.eager_batched_while(cond, body, _call, flat, loop_vars,
                                       _iteration_limit(maximum_iterations))


def _call(fn, structure, values):
    """Call ``fn`` on loop variables: a list/tuple spreads into arguments."""
    args = nest.pack_sequence_as(structure, values)
    if isinstance(structure, (list, tuple)) and not hasattr(structure, "_fields"):
        return fn(*args)
    return fn(args)


def _body_result(result, loop_vars):
    """Let a body with one loop variable in a list return the bare tensor."""
    if (isinstance(loop_vars, (list, tuple)) and len(loop_vars) == 1
            and not nest.is_nested(result)):
        return type(loop_vars)([result]) if not hasattr(loop_vars, "_fields") else result
    return align(result, loop_vars)


def _numbers_like(result, placeholders):
    """In a graph body, a Python number returned for a loop variable takes its dtype."""
    leaves = nest.flatten(result)
    if len(leaves) != len(placeholders):
        return result   # the structure check reports it
    graph = state.graph
    return nest.pack_sequence_as(result, [
        leaf if isinstance(leaf, Tensor) else graph.as_graph_tensor(
            leaf if isinstance(leaf, (bool, int, float)) else
            validate.tensor_like(leaf, "the body's result", "tg.while_loop"), like)
        for leaf, like in zip(leaves, placeholders)])


def _check_body(result, loop_vars, before, after, invariants):
    for path, a, b, inv in zip(paths(loop_vars, "loop_vars"), before, after, invariants):
        check_dtype(path, a.dtype, b.dtype, "while_loop")
        check_shape(path, inv, b.shape, "while_loop")


def _iteration_limit(maximum_iterations):
    if maximum_iterations is None:
        return None
    value = maximum_iterations.numpy() if hasattr(maximum_iterations, "numpy") else \
        maximum_iterations
    if np.ndim(value) != 0 or np.asarray(value).dtype.kind not in "iu":
        validate.fail(TypeError, "tg.while_loop", "maximum_iterations", "an integer scalar "
                      "(or None)", maximum_iterations)
    return validate.integer(np.asarray(value).item(), "maximum_iterations", "tg.while_loop",
                            minimum=0)


_NO_BOOL = ("tg.while_loop: `cond` must return a scalar bool (a comparison such as i < n), "
            "but it returned None. Did cond forget its `return`?")


def _truth(pred, where):
    """A cond result as a Python bool (eager)."""
    if isinstance(pred, (bool, np.bool_)):
        return bool(pred)
    if pred is None:
        raise TypeError(_NO_BOOL)
    pred = as_tensor(pred, name="what cond returned")
    if pred.dtype != dtypes.bool_ or pred.shape != ():
        raise TypeError(f"{where} must return a scalar bool, got a tensor of dtype "
                        f"{pred.dtype} and shape {tuple(pred.shape)}. Compare with tg.less, "
                        f"tg.greater, ... and reduce with tg.all/any-style ops first.")
    return bool(pred.numpy())


# -- eager ----------------------------------------------------------------------------------
def _eager_while(cond, body, loop_vars, maximum_iterations, shape_invariants, name):
    limit = _iteration_limit(maximum_iterations)
    flat = [as_tensor(v) for v in nest.flatten(loop_vars)]
    invariants = _invariants(loop_vars, flat, shape_invariants)
    record = EagerLoop(name)
    observer = events.current_observer()
    i = 0
    while limit is None or i < limit:
        pred = _call(cond, loop_vars, flat)
        if isinstance(pred, batched.BatchedTensor):   # cond read a per-example value
            rest = None if limit is None else limit - i
            return batched.eager_batched_while(cond, body, _call, flat, loop_vars, rest)
        if not _truth(pred, "while_loop's cond"):
            break
        if observer is not None:
            observer(events.LoopIteration(record, "forward", i, tuple(flat)))
        with entered(Iteration(record, i)):
            result = _body_result(_call(body, loop_vars, flat), loop_vars)
        check_same_structure(loop_vars, result, "while_loop", "loop_vars", "the body's result")
        new = [as_tensor(v, like, "the body's result") for v, like in
               zip(nest.flatten(result), flat)]
        _check_body(result, loop_vars, flat, new, invariants)
        flat = new
        i += 1
    record.iterations = i
    return nest.pack_sequence_as(loop_vars, flat)


# -- graphs ---------------------------------------------------------------------------------
def _graph_while(cond, body, loop_vars, maximum_iterations, shape_invariants, name):
    graph = state.graph
    flat = [graph.as_graph_tensor(v, None) for v in nest.flatten(loop_vars)]
    invariants = _invariants(loop_vars, flat, shape_invariants)
    specs = [(inv, t.dtype, f"loop_var_{k}") for k, (t, inv) in enumerate(zip(flat, invariants))]

    cond_traced, pred = trace(lambda *xs: _call(cond, loop_vars, xs), specs, f"{name}_cond")
    if len(cond_traced.outputs) != 1 or nest.is_nested(pred):
        raise TypeError(_NO_BOOL if pred is None else
                        f"while_loop's cond must return one scalar bool, got {pred!r}.")
    _check_predicate(cond_traced.outputs[0], "while_loop's cond")
    body_traced, result = trace(
        lambda *xs: _numbers_like(_body_result(_call(body, loop_vars, xs), loop_vars), xs),
        specs, f"{name}_body")
    check_same_structure(loop_vars, result, "while_loop", "loop_vars", "the body's result")
    for path, t, out, inv in zip(paths(loop_vars, "loop_vars"), flat, body_traced.outputs,
                                 invariants):
        check_dtype(path, t.dtype, out.dtype, "while_loop")
        check_shape(path, inv, out.shape, "while_loop")

    limit = None
    if maximum_iterations is not None:
        if not isinstance(maximum_iterations, SymbolicTensor):   # known now: checked now
            maximum_iterations = _iteration_limit(maximum_iterations)
        limit = graph.as_graph_tensor(maximum_iterations, None)
        if limit.dtype.kind not in "iu" or limit.shape not in ((), None):
            raise TypeError(f"maximum_iterations must be an integer scalar, got {limit!r}.")
    outputs = build_while(cond_traced, body_traced, flat, limit, name, "forward")
    return nest.pack_sequence_as(loop_vars, list(outputs[:len(flat)]))


def _invariants(loop_vars, flat, shape_invariants):
    """The shape each loop variable must keep: its own, unless shape_invariants relaxes it."""
    if shape_invariants is None:
        return [None if t.shape is None else tuple(t.shape) for t in flat]
    try:
        invariants = [None if s is None else tuple(s)
                      for s in _flatten_shapes(shape_invariants, loop_vars)]
    except (KeyError, IndexError, TypeError):
        raise ValueError(f"while_loop: shape_invariants must follow the structure of "
                         f"loop_vars, with a shape (a tuple, None for a size that may "
                         f"change) in place of each tensor; got {shape_invariants!r}.") from None
    for path, t, inv in zip(paths(loop_vars, "loop_vars"), flat, invariants):
        check_shape(path, inv, t.shape, "while_loop's shape_invariants")
    return invariants


def _flatten_shapes(shape_invariants, loop_vars):
    """The shape invariants' leaves (a shape is a tuple, so it is not spread further)."""
    if isinstance(loop_vars, dict):
        return [s for k in loop_vars for s in _flatten_shapes(shape_invariants[k], loop_vars[k])]
    if isinstance(loop_vars, (list, tuple)):
        if len(loop_vars) != len(shape_invariants):
            raise IndexError
        return [s for v, sv in zip(loop_vars, shape_invariants) for s in _flatten_shapes(sv, v)]
    return [shape_invariants]


def _check_predicate(pred, where):
    if pred.dtype != dtypes.bool_ or pred.shape not in ((), None):
        raise TypeError(f"{where} must return a scalar bool, got dtype {pred.dtype} and shape "
                        f"{pred.shape}.")
