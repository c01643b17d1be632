"""Custom gradients: ``tg.custom_gradient``, ``tg.recompute_grad``, ``tg.grad_pass_through``.

``@tg.custom_gradient`` lets ``f`` return ``(y, grad_fn)``: ``y`` is computed by
``f``'s own ops, but its gradient is whatever ``grad_fn(*upstream)`` says. The
result passes through one ``custom_gradient`` op whose inputs are ``y``, ``f``'s
arguments and the Variables ``f`` read, and whose outputs are ``y`` again. Its
VJP rule calls ``grad_fn``: nothing flows back into ``f``'s own ops, everything
flows to the arguments and Variables. Because it is an ordinary op, it works on
the tape, in graphs and (by transposing ``grad_fn``) in forward mode.

This module runs ``f``, finds the Variables it read, and binds the op; the op itself
and its rules are in ``custom_op.py``.
"""
import contextlib
import functools
import inspect
import warnings

from .. import nest, validate
from ..ops import identity
from ..ops.core.apply import innermost
from ..ops.core.recorder import ANY_GRAPH
from ..state import override, state
from ..tensor import Tensor
from .custom_op import custom_gradient_p

__all__ = ["custom_gradient", "recompute_grad", "grad_pass_through", "VariableWatcher"]


class VariableWatcher:
    """A recorder that lists the Variables ops read, in every context, in the order
    first read: how ``custom_gradient`` finds the Variables its function uses."""

    graph = ANY_GRAPH
    differentiates = False

    def __init__(self):
        self.entry = state.next_entry()
        self.variables = []

    def record(self, node):
        """Ops themselves do not matter here, only the Variables they read."""

    def capture(self, outer, inner):
        """Captures carry no Variable."""

    def output_added(self, node, tensor):
        """Nor do outputs added later."""

    def read_variable(self, variable, tensor):
        if all(v is not variable for v in self.variables):
            self.variables.append(variable)


@contextlib.contextmanager
def _watch_variables():
    watcher = VariableWatcher()
    state.push(watcher)
    try:
        yield watcher.variables
    finally:
        state.remove(watcher)


def _takes_variables(grad_fn):
    try:
        params = inspect.signature(grad_fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "variables" or p.kind is p.VAR_KEYWORD for p in params)


def _apply(f, args, kwargs, forward_mode_error=None, record_forward=True, internal=False,
           derivative=True):
    """Run ``f`` and put its result through the custom_gradient op. ``derivative``:
    the grad_fn means to be ``f``'s derivative (so verify_gradients checks it; not so
    for grad_pass_through)."""
    name = getattr(f, "__name__", "custom_gradient")
    with _watch_variables() as read:
        if record_forward:
            returned = f(*args, **kwargs)
        else:
            # Record nothing of f itself (the Variables it reads are still noted).
            with override(recorders=state.without_derivatives()):
                returned = f(*args, **kwargs)
    if not (isinstance(returned, (tuple, list)) and len(returned) == 2
            and callable(returned[1])):
        raise TypeError(f"tg.custom_gradient: `f` ({name}) must return a pair (y, grad_fn), "
                        f"the result and the function giving its gradient, but it returned "
                        f"{validate.describe(returned)}. End {name} with `return y, grad_fn`.")
    result, grad_fn = returned
    flat_args = nest.flatten(args)
    variables = [v for v in read if all(v is not a for a in flat_args)]
    takes_variables = _takes_variables(grad_fn)
    if variables and not takes_variables:
        names = ", ".join(v.name or f"<Variable shape={v.shape}>" for v in variables)
        raise TypeError(f"@tg.custom_gradient grad_fn must accept keyword argument "
                        f"'variables', since {name} uses variables: {names}.")
    if not internal and takes_variables and not variables:
        warnings.warn(f"@tg.custom_gradient grad_fn of {name} has 'variables' in its "
                      "signature, but no Variables were used in the forward pass.",
                      stacklevel=3)
    flat_result = nest.flatten(result)
    for r in flat_result:
        if not isinstance(r, Tensor):
            raise TypeError(f"{name} must return tensors (and a grad_fn), got "
                            f"{type(r).__name__}.")
    def replay(*new_args):   # f again at other arguments (what verify_gradients differences)
        new = nest.pack_sequence_as(args, list(new_args))
        return nest.flatten(f(*new, **kwargs)[0])
    outputs = innermost.process(custom_gradient_p, *flat_result, *flat_args, *variables,
                   n_results=len(flat_result), n_args=len(flat_args), grad_fn=grad_fn,
                   variables=tuple(variables), name=name,
                   forward_mode_error=forward_mode_error,
                   replay=replay if derivative else None)
    return nest.pack_sequence_as(result, list(outputs))


def custom_gradient(f=None):
    """Decorator: ``f(*x)`` returns ``(y, grad_fn)``; ``y``'s gradient is ``grad_fn``'s.

    ``grad_fn(*upstream)`` gets one cotangent per (flattened) ``y`` and returns
    one gradient per argument (None for none). If ``f`` reads Variables that are
    not arguments, ``grad_fn(*upstream, variables=None)`` gets them and returns
    ``(input_grads, variable_grads)``. For example::

        @tg.custom_gradient
        def log1pexp(x):
            e = tg.exp(x)
            def grad_fn(upstream):
                return upstream * (1 - 1 / (1 + e))   # stable where e overflows
            return tg.log(1 + e), grad_fn
    """
    if f is None:
        return custom_gradient
    validate.callable_(f, "f", "tg.custom_gradient")

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        return _apply(f, args, kwargs)
    return decorated


def recompute_grad(f):
    """``f`` whose intermediate values are not kept: the backward pass recomputes them.

    Only ``f``'s inputs are recorded; when the gradient is needed, ``f`` runs again
    on a local tape. Memory falls, time rises by about one more forward pass.
    Forward mode is not supported (there is nothing recorded to transpose).
    """
    validate.callable_(f, "f", "tg.recompute_grad")
    @functools.wraps(f)
    def decorated(*args, **kwargs):
        def forward(*xs, **kw):
            result = f(*xs, **kw)

            def grad_fn(*upstream, variables=None):
                from .gradients import gradients
                from .tape import GradientTape
                # Each argument gets a copy of its own, so that f(x, x) gives x the sum
                # of the two arguments' gradients, not twice the total.
                inputs = [identity(x) if isinstance(x, Tensor) else x for x in xs]
                sources = inputs + list(variables or [])
                if state.graph is not None:   # in a graph: recompute as graph nodes
                    recomputed = f(*inputs, **kw)
                    # stop_gradients keeps the walk inside the recomputed nodes: without
                    # it, a Variable that also fed the inputs' history would count twice.
                    grads = gradients(nest.flatten(recomputed), sources, grad_ys=list(upstream),
                                      stop_gradients=[x for x in inputs if isinstance(x, Tensor)],
                                      unconnected_gradients="zero")
                else:
                    with GradientTape() as tape:
                        tape.watch([x for x in sources if isinstance(x, Tensor)])
                        recomputed = f(*inputs, **kw)
                    grads = tape.gradient(nest.flatten(recomputed), sources,
                                          output_gradients=list(upstream),
                                          unconnected_gradients="zero")
                if variables:
                    return grads[:len(inputs)], grads[len(inputs):]
                return grads
            return result, grad_fn
        return _apply(forward, args, kwargs, record_forward=False, internal=True,
                      forward_mode_error=(
            f"recompute_grad tried to transpose the gradient of {f.__name__}: its "
            f"intermediate values are not kept, so there is nothing to transpose. Do not "
            f"use recompute_grad in forward-mode autodiff."))
    return decorated


def grad_pass_through(f):
    """``f`` in the forward pass, the identity in the backward pass.

    Variables that ``f`` uses get no gradient. For example a straight-through
    estimator: ``tg.grad_pass_through(tg.round)(x)`` rounds, yet passes the
    gradient through as if it did not.
    """
    validate.callable_(f, "f", "tg.grad_pass_through")
    @functools.wraps(f)
    def decorated(*args, **kwargs):
        def forward(*xs, **kw):
            def grad_fn(*upstream, variables=None):
                if variables:
                    return list(upstream), [None] * len(variables)
                return list(upstream)
            return f(*xs, **kw), grad_fn
        return _apply(forward, args, kwargs, internal=True, derivative=False)
    return decorated
