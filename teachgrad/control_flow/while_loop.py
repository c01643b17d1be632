"""``tg.while_loop``: a loop whose gradient is taken through every iteration.

Eagerly, the loop is plain Python: each iteration's ops are recorded on the
tape like any others (tagged with their iteration, so the BackpropStepper can
show it), and the backward engine walks back through all of them.

In a graph, the loop is **one While node** holding two subgraphs: ``cond``
(loop variables -> bool) and ``body`` (loop variables -> loop variables). Its
kernel runs them until ``cond`` is false or ``maximum_iterations`` is reached;
the graph does not grow with the number of iterations.

The gradient of a While node is **another While node** that runs the body's
gradient once per forward iteration, from the last iteration to the first.
Its loop variables are a counter, ``maximum_iterations`` and ``total_iters``
(carried along, as TensorFlow does), the cotangents of the loop variables,
and, for each tensor the body reads from outside the loop, the sum of its
per-iteration gradients. The body's gradient needs values the forward loop
computed (``tanh(h)`` to differentiate ``tanh``, say): the forward While
*saves* those intermediates, one stack entry per iteration, and the backward
loop reads entry ``total_iters - 1 - counter`` of each stack. Only the
intermediates that the gradient actually reads are saved.

Because the gradient is itself a While node of the same kind, its own
gradient (a second derivative through the loop) comes out the same way.
"""
import numpy as np

from .. import backend, dtypes, nest, validate
from ..autodiff import events
from ..autodiff.engine import backward
from ..autodiff.pending import trainable
from ..graph.session import plan_for
from ..ops import IndexedSlices, gather, zeros, zeros_like
from ..ops import core
from ..state import state
from ..ops.core import defvjp_all, primitive, rules_need_tensors
from . import array_loops, batched
from .outputs import add_output
from .stacks import stack_values
from ..tensor import SymbolicTensor, Tensor
from .structure import align, check_dtype, check_same_structure, check_shape, paths
from .subgraph import MirrorGraph, as_tensor, differentiable_sources, entered, trace
from ..ops.declare import accepts, defshape


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
        if not _truth(_call(cond, loop_vars, flat), "while_loop's cond"):
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
class LoopState:
    """What a While node knows beyond its subgraphs (its ``loop`` parameter)."""

    def __init__(self, name, n_vars, has_limit, direction):
        self.name = name
        self.n_vars = n_vars
        self.has_limit = has_limit
        self.direction = direction   # "forward", or "backward" for a gradient loop
        self.saved = []              # body tensors stacked per iteration for the gradient
        self.node = None

    def __repr__(self):
        return f"<loop {self.name}: {self.n_vars} variables, {len(self.saved)} saved>"


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


def build_while(cond_traced, body_traced, loop_vars, limit, name, direction):
    """Add a While node running ``body_traced`` while ``cond_traced`` holds."""
    loop = LoopState(name, len(loop_vars), limit is not None, direction)
    inputs = list(loop_vars) + ([limit] if limit is not None else []) \
        + list(cond_traced.external) + list(body_traced.external)
    outputs = core.add_to_graph(while_p, inputs, {"cond": cond_traced, "body": body_traced,
                                                  "loop": loop}, name=name)
    loop.node = outputs[0].node
    return outputs


def _while_kernel(*arrays, cond, body, loop):
    n = loop.n_vars
    values = list(arrays[:n])
    k = n
    limit = None
    if loop.has_limit:
        limit, k = int(arrays[n]), n + 1
    cond_captures = list(arrays[k:k + len(cond.external)])
    body_captures = list(arrays[k + len(cond.external):])
    pred_id = cond.outputs[0].id
    cond_ids = cond.feed_ids
    cond_plan = plan_for(cond.graph, [pred_id], set(cond_ids))
    out_ids = [t.id for t in body.outputs]
    saved_ids = [t.id for t in loop.saved]
    body_ids = body.feed_ids
    body_plan = plan_for(body.graph, out_ids + saved_ids, set(body_ids))
    stacks = [[] for _ in saved_ids]
    observer = events.current_observer()
    total = int(values[2]) if loop.direction == "backward" else None
    i = 0
    while limit is None or i < limit:
        if not bool(cond_plan.run(dict(zip(cond_ids, values + cond_captures)))[pred_id]):
            break
        if observer is not None:
            iteration = i if total is None else total - 1 - i
            observer(events.LoopIteration(loop.node, loop.direction, iteration, tuple(values)))
        results = body_plan.run(dict(zip(body_ids, values + body_captures)))
        for stack, t in zip(stacks, saved_ids):
            stack.append(results[t])
        values = [results[t] for t in out_ids]
        i += 1
    return (*values, backend.xp.asarray(i, dtype=np.int64),   # on the backend's device
            *[stack_values(s, t.shape, t.dtype) for s, t in zip(stacks, loop.saved)])


def _stack_shape(tensor):
    return None if tensor.shape is None else (None,) + tuple(tensor.shape)


def _while_shapes(*inputs, cond, body, loop):
    return ([(t.shape, t.dtype) for t in body.inputs] + [((), dtypes.int64)]
            + [(_stack_shape(t), t.dtype) for t in loop.saved])


def saved_stack(loop, tensor):
    """The While output stacking ``tensor``'s per-iteration values (added if new)."""
    for k, t in enumerate(loop.saved):
        if t is tensor:
            return loop.node.outputs[loop.n_vars + 1 + k]
    loop.saved.append(tensor)
    return add_output(loop.node, _stack_shape(tensor), tensor.dtype)


def _dense(g):
    return g.to_dense() if isinstance(g, IndexedSlices) else g


def _zeros_for(t):
    return zeros(t.shape, t.dtype) if t.shape is not None and None not in t.shape \
        else zeros_like(t)


def _carriers(body, gs, stack_grads):
    """Which loop variables and captures the backward loop must carry cotangents for.

    A loop variable carries one if its output got a gradient, or if the body
    feeds it into another loop variable that carries one (found by iterating
    to a fixed point); a capture gets a gradient if a carrying variable's body
    output depends on it. The others get None, as in the unrolled loop, and
    nothing is saved for them.
    """
    n = len(body.inputs)
    carrying = {j for j in range(n) if gs[j] is not None and trainable(body.inputs[j])}
    seeded = [t for t, _ in stack_grads]
    while True:
        reached = differentiable_sources(body.graph, [body.outputs[j] for j in carrying] + seeded)
        grown = carrying | {j for j in range(n) if body.inputs[j].id in reached
                            and trainable(body.inputs[j])}
        if grown == carrying:
            break
        carrying = grown
    captures = [c for c, t in enumerate(body.graph.internal) if t.id in reached]
    return sorted(carrying), captures


def _while_vjp(cts, ans, *inputs, cond, body, loop):
    n = loop.n_vars
    loop.node = ans[0].node   # (a forward-mode accumulator gets here before build_while ends)
    total = ans[n]
    stack_grads = [(loop.saved[k], g) for k, g in enumerate(cts[n + 1:]) if g is not None]
    float_vars, float_captures = _carriers(body, cts, stack_grads)
    if not float_vars and not float_captures:
        return [None] * len(inputs)
    for j in float_vars:
        if body.inputs[j].shape != inputs[j].shape:
            raise NotImplementedError(
                f"The gradient of while_loop {loop.name!r} is not supported: its loop variable "
                f"{j} may change shape between iterations (shape invariant "
                f"{body.inputs[j].shape}), so the values saved per iteration do not stack. "
                f"Keep the loop variables' shapes fixed, or differentiate eagerly with a "
                f"GradientTape, which records each iteration as it runs.")
    outer = state.graph
    grad_graph = MirrorGraph(f"{loop.name}_body_grad", outer, body.graph,
                             lambda t: gather(grad_graph.as_graph_tensor(saved_stack(loop, t),
                                                                          None),
                                              grad_graph.index))

    def gradient_body(counter, limit, total_iters, *rest):
        grad_graph.index = total_iters - 1 - counter
        cotangents = list(rest[:len(float_vars)])
        sums = rest[len(float_vars):]
        ys = [body.outputs[j] for j in float_vars]
        for saved, g in stack_grads:   # second order: cotangents of the saved values
            ys.append(saved)
            cotangents.append(gather(grad_graph.as_graph_tensor(g, None), grad_graph.index))
        xs = [body.inputs[j] for j in float_vars] + \
            [body.graph.internal[c] for c in float_captures]
        grads = backward(ys, cotangents, xs, body.graph.producer)
        grads = [grad_graph.as_graph_tensor(_dense(g), None) if g is not None else
                 grad_graph.as_graph_tensor(_zeros_for(x), None) for g, x in zip(grads, xs)]
        var_grads, capture_grads = grads[:len(float_vars)], grads[len(float_vars):]
        return [counter + 1, limit, total_iters, *var_grads,
                *[s + g for s, g in zip(sums, capture_grads)]]

    int64 = dtypes.int64
    specs = ([((), int64, "counter"), ((), int64, "maximum_iterations"),
              ((), int64, "total_iterations")]
             + [(body.inputs[j].shape, body.inputs[j].dtype, f"grad_{j}") for j in float_vars]
             + [(body.external[c].shape, body.external[c].dtype, f"capture_grad_{c}")
                for c in float_captures])
    grad_cond, _ = trace(lambda counter, limit, total_iters, *rest: counter < total_iters,
                         specs, f"{loop.name}_grad_cond", outer=outer)
    grad_body, _ = trace(gradient_body, specs, grad_graph.name, graph=grad_graph)

    start = [outer.as_graph_tensor(np.asarray(0, dtype=np.int64), None), total, total]
    start += [_dense(cts[j]) if cts[j] is not None else zeros_like(ans[j]) for j in float_vars]
    start += [_zeros_for(body.external[c]) for c in float_captures]
    outputs = build_while(grad_cond, grad_body, start, None, f"{loop.name}_grad", "backward")

    grads = [None] * len(inputs)
    for k, j in enumerate(float_vars):
        grads[j] = outputs[3 + k]
    first_capture = n + int(loop.has_limit) + len(cond.external)
    for k, c in enumerate(float_captures):
        grads[first_capture + c] = outputs[3 + len(float_vars) + k]
    return grads


# While(*loop_vars, [maximum_iterations], *cond captures, *body captures; cond, body, loop):
# the final loop variables, the number of iterations run, then one stack per saved value.
while_p = primitive("While", _while_kernel, multiple_results=True)
defshape(while_p, _while_shapes)
accepts(while_p, missing=True)
rules_need_tensors(defvjp_all(while_p, _while_vjp))   # builds and runs loops
core.defbatch(while_p, batched.unbatchable_node("While"))
