"""The ``custom_gradient`` op that ``tg.custom_gradient`` (``custom.py``) binds.

``custom_gradient(*results, *args, *variables)`` gives back the results, with a VJP
given by ``grad_fn``. Here: its forward, its VJP rule (which calls ``grad_fn``), its
JVP (``grad_fn`` transposed), its batching rule, and ``checkable``, the op as
``tg.debug.verify_gradients`` judges it.
"""
from .. import nest, validate
from ..ops import BatchedTensor, IndexedSlices, sum as total
from ..ops.core.apply import innermost
from ..ops.core.declare import (
    defbatch,
    defjvp_all,
    defshape,
    defvjp_all,
    primitive,
    recomputes_in_rule,
    rules_need_tensors,
    takes_complex,
)
from ..ops.shape.reshape import repeat_like
from ..tensor import Tensor, constant


def _custom_forward(*arrays, n_results, **unused):
    return tuple(arrays[:n_results])


def _custom_shape(*inputs, n_results, **unused):
    return [(t.shape, t.dtype) for t in inputs[:n_results]]


def _custom_vjp(cts, ans, *inputs, n_results, n_args, grad_fn, variables, name,
                forward_mode_error=None, replay=None):
    upstream = list(cts)
    if variables:
        returned = grad_fn(*upstream, variables=list(variables))
        if not isinstance(returned, (list, tuple)) or len(returned) != 2:
            raise ValueError(f"The grad_fn of {name} uses variables, so it must return "
                             "(input gradients, variable gradients).")
        input_grads, variable_grads = returned
        variable_grads = list(nest.flatten(variable_grads))
        if len(variable_grads) != len(variables):
            raise ValueError(f"The grad_fn of {name} must return a gradient for each "
                             f"variable: expected {len(variables)}, returned "
                             f"{len(variable_grads)}.")
    else:
        input_grads, variable_grads = grad_fn(*upstream), []
    flat = [None] if input_grads is None else nest.flatten(input_grads)
    if len(flat) != n_args:
        raise ValueError(f"The grad_fn of custom_gradient function {name} is expected to "
                         f"return {n_args} gradients, but returned {len(flat)} instead.")
    grads = flat + variable_grads
    like = inputs[n_results:]
    return [None] * n_results + [_checked_gradient(g, x, i, name) for i, (g, x) in
                                 enumerate(zip(grads, like))]


def _checked_gradient(g, x, i, name):
    """The ``i``-th gradient a grad_fn returned, for the input ``x``: a tensor (a
    number or array is made one, of ``x``'s dtype), or None. (The engine checks
    its shape, as it does every rule's.)"""
    if g is not None and not isinstance(g, (Tensor, IndexedSlices)):
        g = constant(validate.tensor_like(g, f"the gradient {i} returned by grad_fn",
                                          f"tg.custom_gradient({name})", x.dtype))
    return g


def checkable(params):
    """A custom_gradient node as an op of its arguments alone, for
    ``tg.debug.verify_gradients``: its forward runs the decorated function again
    (``replay``, with the arguments replaced; Variables keep their values) and its
    VJP rule is the grad_fn, so that the grad_fn is judged by finite differences like
    any other rule. Gradients for Variables the function reads are not checked."""
    replay, n_results, n_args = params.get("replay"), params["n_results"], params["n_args"]
    if replay is None or n_args == 0:
        return None

    def forward(*args):
        return tuple(t.value for t in replay(*[Tensor(a) for a in args]))

    def rule(cts, ans, *args):
        rule_params = {k: params[k] for k in ("n_results", "n_args", "grad_fn", "variables",
                                              "name")}
        grads = _custom_vjp(cts, ans, *ans, *args, *params["variables"], **rule_params)
        return grads[n_results:n_results + n_args]
    rule.__wrapped__ = params["grad_fn"]   # where the rule is written: the grad_fn
    op = takes_complex(primitive("custom_gradient", forward, multiple_results=True))
    rules_need_tensors(defvjp_all(op, rule))   # the user's grad_fn: Tensors
    return op


def _custom_jvp(node, tangents):
    if node.params.get("forward_mode_error"):
        raise NotImplementedError(node.params["forward_mode_error"])
    from .forward import transposed_jvp
    return transposed_jvp(node, tangents, None)

# custom_gradient(*results, *args, *variables): the results again, with a VJP given by grad_fn.
custom_gradient_p = primitive("custom_gradient", _custom_forward, multiple_results=True)
defshape(custom_gradient_p, _custom_shape)
takes_complex(custom_gradient_p)   # the user's grad_fn decides
rules_need_tensors(defvjp_all(custom_gradient_p, _custom_vjp))   # calls grad_fn
recomputes_in_rule(custom_gradient_p)   # its grad_fn may run the function again
defjvp_all(custom_gradient_p, _custom_jvp)


def _custom_batch(frame, values, batched, n_results, n_args, grad_fn, variables, name,
                  forward_mode_error=None, replay=None):
    """Inside tg.vectorized_map, a custom gradient stays one: the op is applied to the
    batches, with a grad_fn that calls the user's inside the map again (its cotangents
    are the examples' views of the batch) and sums the gradients of values shared by
    every example over the batch (JAX batches custom_vjp the same way)."""
    def batched_grad_fn(*cts, variables=None):
        with frame.entered():
            upstream = [BatchedTensor(ct, frame) if b else ct
                        for ct, b in zip(cts, batched[:n_results])]
            returned = grad_fn(*upstream, variables=variables) if variables else grad_fn(*upstream)
        if not variables:
            return _for_batch(returned, batched[n_results:n_results + n_args], frame)
        input_grads, variable_grads = returned
        return (_for_batch(input_grads, batched[n_results:n_results + n_args], frame),
                _for_batch(variable_grads, batched[n_results + n_args:], frame))
    out = innermost.process(custom_gradient_p, *values, n_results=n_results, n_args=n_args,
               grad_fn=batched_grad_fn, variables=variables, name=name,
               forward_mode_error=forward_mode_error, replay=None)
    return out, tuple(batched[:n_results])
defbatch(custom_gradient_p, _custom_batch, takes_frame=True)


def _for_batch(grads, input_batched, frame):
    """The grad_fn's gradients (one example's view) as gradients of the batched op's
    inputs: a batch for a batched input, the sum over the batch for a shared one."""
    flat = [None] if grads is None else nest.flatten(grads)
    out = []
    for g, is_batched in zip(flat, input_batched):
        if g is not None and not isinstance(g, IndexedSlices):
            g = g.batched if isinstance(g, BatchedTensor) and g.frame is frame else \
                repeat_like(g if isinstance(g, Tensor) else constant(g), frame.like)
            if not is_batched:
                g = total(g, axis=0)
        out.append(g)
    return out
