"""The gradient of a call of a traced function (``tg.function``).

A call of a traced function is one ``call`` node, eagerly or in a graph. Its
VJP rule is the gradient of the function's body, traced once as a function of
its own, ``(*inputs, *captured Variables, *output cotangents) -> input
cotangents`` (TensorFlow's SymbolicGradient), and then called like any traced
function: with another ``call`` node, so the gradient of the gradient works
the same way. An input the body's outputs do not depend on gets None, as in
eager code.
"""
from .. import nest
from ..graph.concrete import ConcreteFunction, FuncGraph, call_p
from ..graph.graph import placeholder
from ..ops.core import bind
from ..ops.declare import defvjp_all, rules_need_tensors
from ..state import override, state
from .gradients import gradients


def gradient_function(function):
    """The traced gradient of ``function`` (a ConcreteFunction), traced on first use."""
    if function.gradient is None:
        function.gradient = _trace_gradient(function)
    return function.gradient


def _call_op_vjp(cts, ans, *inputs, function):
    grad_fn = gradient_function(function)
    floats = [g for g, out in zip(cts, function.outputs) if out.dtype.kind == "f"]
    computed = iter(bind(call_p, *inputs, *floats, function=grad_fn) if grad_fn.outputs else ())
    # The gradient function returns nothing for an input the body's outputs do not
    # depend on: that input's cotangent is None (unconnected), as TensorFlow's.
    float_grads = iter([None if g is None else next(computed) for g in grad_fn.structure])
    return [next(float_grads) if x.dtype.kind == "f" else None for x in inputs]

rules_need_tensors(defvjp_all(call_p, _call_op_vjp))   # runs a graph


def _trace_gradient(function):
    """Trace the gradient of ``function``'s body as a function of its own:
    ``(*inputs, *captured variables, *output cotangents) -> input cotangents``,
    one per floating-point input; None (and no output) for an unconnected input."""
    n_args = len(function.inputs)
    variables = list(function.captured_variables)
    float_outputs = [i for i, t in enumerate(function.outputs) if t.dtype.kind == "f"]

    def gradient_body(*args):
        graph = state.graph
        inputs = list(args[:n_args + len(variables)])
        cotangents = list(args[n_args + len(variables):])
        if isinstance(graph, FuncGraph):
            graph.bind_variables(variables, inputs[n_args:])
        outputs = [o for o in nest.flatten(function.python_function(*inputs[:n_args]))
                   if o is not None]
        ys = [graph.as_graph_tensor(outputs[i], None) for i in float_outputs]
        xs = [x for x in inputs if x.dtype.kind == "f"]
        if not ys:
            return [None] * len(xs)
        return gradients(ys, xs, grad_ys=cotangents)

    graph = FuncGraph(f"{function.graph.name}_grad")
    # The trace runs inside the VJP rule of some call node, which marks the nodes it
    # makes as that node's gradient. This graph is a graph of its own, cached for every
    # call: its nodes belong to no outer rule, so the mark is cleared while it is traced.
    with override(gradient_of=None), graph.as_default():
        specs = function.inputs + function.graph.captures + [function.outputs[i]
                                                             for i in float_outputs]
        placeholders = [placeholder(t.dtype, t.shape, name=f"x{i}")
                        for i, t in enumerate(specs)]
        grads = list(gradient_body(*placeholders))
    # The body ran again only to be differentiated: the Variables it assigns (an
    # optimizer's step) are assigned by the function's own call, never by its gradient.
    graph.assignments.clear()
    return ConcreteFunction(gradient_body, graph, placeholders,
                            [g for g in grads if g is not None], grads,
                            optimize=function.optimize)
