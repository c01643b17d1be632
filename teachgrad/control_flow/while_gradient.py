"""The pieces of a While node's gradient, the backward loop (assembled in ``while_node``).

Its loop variables are a counter, ``maximum_iterations`` and ``total_iters``
(carried along, as TensorFlow does), the cotangents of the loop variables, and,
for each tensor the body reads from outside the loop, the sum of its
per-iteration gradients. The body's gradient needs values the forward loop
computed (``tanh(h)`` to differentiate ``tanh``, say): the forward While *saves*
those intermediates, one stack entry per iteration, and the backward loop reads
entry ``total_iters - 1 - counter`` of each stack. Only the intermediates that
the gradient actually reads are saved.
"""
import numpy as np

from .. import dtypes
from ..autodiff.engine import backward
from ..autodiff.pending import trainable
from ..ops import IndexedSlices, gather, zeros, zeros_like
from ..ops.shape.rows import resize_rows, row_count
from ..state import state
from .outputs import add_output
from .stacks import stack_shape
from .subgraph import MirrorGraph, differentiable_sources, trace


def carriers(body, gs, stack_grads):
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


def saved_stack(loop, tensor):
    """The While output stacking ``tensor``'s per-iteration values (added if new)."""
    for k, t in enumerate(loop.saved):
        if t is tensor:
            return loop.node.outputs[loop.n_vars + 1 + k]
    loop.saved.append(tensor)
    return add_output(loop.node, stack_shape(tensor), tensor.dtype)


def _dense(g):
    return g.to_dense() if isinstance(g, IndexedSlices) else g


def _zeros_for(t):
    return zeros(t.shape, t.dtype) if t.shape is not None and None not in t.shape \
        else zeros_like(t)


# Ops that read a buffer whose row count may change from iteration to iteration
# without their gradients reading the buffer itself: a TensorArray's growth and its
# pinned reads (``resize_rows`` with the counts given, ``ops/shape/rows.py``).
_ROW_SAFE = frozenset({"resize_rows", "row_count", "row_indices"})


def _rows_pinned(body, j):
    """Does the body read loop variable ``j`` only through row-safe ops? Then its
    gradient never needs its saved per-iteration values (which a loop stacks padded
    to the largest), only their row counts, saved exactly."""
    x = body.inputs[j]
    return all(node.op.name in _ROW_SAFE for node in body.graph.get_operations()
               if any(t is x for t in node.inputs))


def check_fixed_shapes(body, loop, inputs, float_vars):
    """A loop variable that carries a cotangent must keep its shape (its saved values
    stack), unless only row-safe ops read it (a growing TensorArray's buffer). Returns
    the variables whose leading size may change: their gradients are cut to size."""
    growing = []
    for j in float_vars:
        if body.inputs[j].shape == inputs[j].shape:
            continue
        if _rows_pinned(body, j) and body.inputs[j].shape[1:] == inputs[j].shape[1:]:
            growing.append(j)
            continue
        raise NotImplementedError(
            f"The gradient of while_loop {loop.name!r} is not supported: its loop variable "
            f"{j} may change shape between iterations (shape invariant "
            f"{body.inputs[j].shape}), so the values saved per iteration do not stack. "
            f"Keep the loop variables' shapes fixed, or differentiate eagerly with a "
            f"GradientTape, which records each iteration as it runs.")
    return growing


def cut_to_size(grads, inputs, growing):
    """The gradients of growing loop variables with the rows of their inputs."""
    for j in growing:
        if grads[j] is not None:
            grads[j] = resize_rows(grads[j], row_count(inputs[j]), row_count(grads[j]))
    return grads


def backward_loop(body, loop, stack_grads, float_vars, float_captures):
    """The backward loop's ``cond`` and ``body``, traced: run while counter < total_iters,
    each iteration one backward pass through the forward body, fed its saved values."""
    outer = state.graph
    grad_graph = MirrorGraph(f"{loop.name}_body_grad", outer, body.graph,
                             lambda t: gather(grad_graph.as_graph_tensor(saved_stack(loop, t),
                                                                          None),
                                              grad_graph.index))

    def gradient_body(counter, limit, total_iters, *rest):
        grad_graph.index = total_iters - 1 - counter
        var_grads, capture_grads = _body_gradients(body, grad_graph, stack_grads, float_vars,
                                                   float_captures, rest[:len(float_vars)])
        sums = rest[len(float_vars):]
        return [counter + 1, limit, total_iters, *var_grads,
                *[s + g for s, g in zip(sums, capture_grads)]]

    specs = _backward_specs(body, float_vars, float_captures)
    grad_cond, _ = trace(lambda counter, limit, total_iters, *rest: counter < total_iters,
                         specs, f"{loop.name}_grad_cond", outer=outer)
    grad_body, _ = trace(gradient_body, specs, grad_graph.name, graph=grad_graph)
    return grad_cond, grad_body


def _body_gradients(body, grad_graph, stack_grads, float_vars, float_captures, cotangents):
    """One backward iteration: the cotangents of the body's carrying inputs and of the
    captures it reads, from those of its outputs (and of the saved values, second order)."""
    cotangents = list(cotangents)
    ys = [body.outputs[j] for j in float_vars]
    for saved, g in stack_grads:   # second order: cotangents of the saved values
        ys.append(saved)
        cotangents.append(gather(grad_graph.as_graph_tensor(g, None), grad_graph.index))
    xs = [body.inputs[j] for j in float_vars] + \
        [body.graph.internal[c] for c in float_captures]
    grads = backward(ys, cotangents, xs, body.graph.producer)
    grads = [grad_graph.as_graph_tensor(_dense(g), None) if g is not None else
             grad_graph.as_graph_tensor(_zeros_for(x), None) for g, x in zip(grads, xs)]
    return grads[:len(float_vars)], grads[len(float_vars):]


def _backward_specs(body, float_vars, float_captures):
    """The backward loop's variables: counter, limit, total, cotangents, capture sums."""
    int64 = dtypes.int64
    return ([((), int64, "counter"), ((), int64, "maximum_iterations"),
             ((), int64, "total_iterations")]
            + [(body.inputs[j].shape, body.inputs[j].dtype, f"grad_{j}") for j in float_vars]
            + [(body.external[c].shape, body.external[c].dtype, f"capture_grad_{c}")
               for c in float_captures])


def backward_start(cts, ans, body, loop, float_vars, float_captures):
    """The backward loop's first values: counter 0, the forward loop's iteration count
    (as limit and total), the cotangents of its results, zero sums for the captures."""
    total = ans[loop.n_vars]
    start = [state.graph.as_graph_tensor(np.asarray(0, dtype=np.int64), None), total, total]
    start += [_dense(cts[j]) if cts[j] is not None else zeros_like(ans[j]) for j in float_vars]
    start += [_zeros_for(body.external[c]) for c in float_captures]
    return start


def input_grads(outputs, n_inputs, cond, loop, float_vars, float_captures):
    """The While node's input gradients, read off the backward loop's final values."""
    grads = [None] * n_inputs
    for k, j in enumerate(float_vars):
        grads[j] = outputs[3 + k]
    first_capture = loop.n_vars + int(loop.has_limit) + len(cond.external)
    for k, c in enumerate(float_captures):
        grads[first_capture + c] = outputs[3 + len(float_vars) + k]
    return grads
