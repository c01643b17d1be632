"""The While node: one node for a whole loop in a graph, and its gradient.

It holds two traced subgraphs, ``cond`` (loop variables -> bool) and ``body``
(loop variables -> loop variables). Its kernel runs them until ``cond`` is false
or ``maximum_iterations`` is reached; the graph does not grow with the number of
iterations.

The gradient of a While node is **another While node** that runs the body's
gradient once per forward iteration, from the last iteration to the first (its
pieces are built in ``while_gradient.py``). Because the gradient is itself a While
node of the same kind, its own gradient (a second derivative through the loop)
comes out the same way.
"""
import numpy as np

from .. import backend, dtypes
from ..autodiff import events
from ..graph.session import plan_for
from ..ops.core.apply import add_to_graph
from ..ops.core.declare import (
    accepts,
    defshape,
    defvjp_all,
    primitive,
    rules_need_tensors,
    takes_complex,
)
from . import batched
from .stacks import stack_shape, stack_values
from .while_gradient import (
    backward_loop,
    backward_start,
    carriers,
    check_fixed_shapes,
    cut_to_size,
    input_grads,
)


class LoopState:
    """What a While node knows beyond its subgraphs (its ``loop`` parameter)."""

    def __init__(self, name, n_vars, has_limit, direction):
        self.name = name
        self.n_vars = n_vars
        self.has_limit = has_limit
        self.direction = direction   # "forward", or "backward" for a gradient loop
        self.saved = []              # body tensors stacked per iteration for the gradient
        self.node = None
        self.grows = False           # a gradient loop whose cotangents change row count

    def __repr__(self):
        return f"<loop {self.name}: {self.n_vars} variables, {len(self.saved)} saved>"


def build_while(cond_traced, body_traced, loop_vars, limit, name, direction):
    """Add a While node running ``body_traced`` while ``cond_traced`` holds."""
    loop = LoopState(name, len(loop_vars), limit is not None, direction)
    inputs = list(loop_vars) + ([limit] if limit is not None else []) \
        + list(cond_traced.external) + list(body_traced.external)
    outputs = add_to_graph(while_p, inputs, {"cond": cond_traced, "body": body_traced,
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


def _while_shapes(*inputs, cond, body, loop):
    return ([(t.shape, t.dtype) for t in body.inputs] + [((), dtypes.int64)]
            + [(stack_shape(t), t.dtype) for t in loop.saved])


def _while_vjp(cts, ans, *inputs, cond, body, loop):
    """A While node's gradient: a While node running the body's gradient backward."""
    loop.node = ans[0].node   # (a forward-mode accumulator gets here before build_while ends)
    if loop.grows:
        raise NotImplementedError(
            f"The gradient of {loop.name!r} (itself the gradient of a while_loop whose "
            f"TensorArray grows at a computed index) is not supported: its cotangents change "
            f"size from iteration to iteration. For a second derivative, give the "
            f"TensorArray a fixed size= (the loop's number of iterations), or differentiate "
            f"eagerly with nested GradientTapes.")
    stack_grads = [(loop.saved[k], g) for k, g in enumerate(cts[loop.n_vars + 1:])
                   if g is not None]
    float_vars, float_captures = carriers(body, cts, stack_grads)
    if not float_vars and not float_captures:
        return [None] * len(inputs)
    growing = check_fixed_shapes(body, loop, inputs, float_vars)
    grad_cond, grad_body = backward_loop(body, loop, stack_grads, float_vars, float_captures)
    start = backward_start(cts, ans, body, loop, float_vars, float_captures)
    outputs = build_while(grad_cond, grad_body, start, None, f"{loop.name}_grad", "backward")
    outputs[0].node.params["loop"].grows = bool(growing)
    return cut_to_size(input_grads(outputs, len(inputs), cond, loop, float_vars,
                                   float_captures), inputs, growing)


# While(*loop_vars, [maximum_iterations], *cond captures, *body captures; cond, body, loop):
# the final loop variables, the number of iterations run, then one stack per saved value.
while_p = primitive("While", _while_kernel, multiple_results=True)
takes_complex(while_p)
defshape(while_p, _while_shapes)
accepts(while_p, missing=True)
rules_need_tensors(defvjp_all(while_p, _while_vjp))   # builds and runs loops
batched.refuse_batching(while_p, "While")
