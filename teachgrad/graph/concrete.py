"""A traced function's graph and its call: ``FuncGraph`` (the graph a ``tg.function``
traces into, with the Variables it reads and assigns), ``ConcreteFunction`` (one
traced graph, its placeholders and outputs, optimised on first run) and the op
``call`` that runs one, eagerly or as one node of another graph.

``call``'s VJP rule, declared with it at the end of this file, is the gradient of
the body, traced as a function of its own (TensorFlow's SymbolicGradient) and then
called like any traced function: with another ``call`` node, so the gradient of the
gradient works the same way. An input the body's outputs do not depend on gets None,
as in eager code.
"""
from .. import nest, validate
from ..autodiff.gradients import gradients
from ..ops.core.apply import innermost
from ..ops.core.declare import defshape, defvjp_all, primitive, rules_need_tensors, takes_complex
from ..ops.core.grad_util import compatible
from ..ops.core.recorder import note_variable_read
from ..ops.elementwise.arithmetic import add, subtract
from ..ops.random.replay import REPLAYING, Replay
from ..state import override, state
from ..tensor import SymbolicTensor, Tensor, to_array
from .graph import Graph, placeholder
from .session import plan_for


class FuncGraph(Graph):
    """The graph of a traced function: each Variable it reads becomes an input. Its
    effects (``tg.print``, random draws) run on every call."""

    runs_effects = True

    def __init__(self, name):
        super().__init__()
        self.name = name
        self.captured_variables = []   # in the order the body first read them
        self.captures = []             # the placeholders that stand for them
        self.assignments = {}          # Variable id -> (Variable, its new value), in order
        self.draws = []                # the random draws made here, in order (replay.py)

    def read_variable(self, variable):
        read = self.variable_reads.get(variable.id)
        if read is None:
            with self.as_default():
                read = placeholder(variable.dtype, variable.shape,
                                   name=variable.name or "variable")
            self.variable_reads[variable.id] = read
            self.captured_variables.append(variable)
            self.captures.append(read)
        note_variable_read(variable, read, self)
        return read

    def assign_variable(self, variable, value, sign=0):
        """Record ``variable``'s new value (``sign`` 1 or -1: the old value plus or minus
        ``value``): the function assigns it each time it runs, after computing its
        outputs. Later reads of the Variable in this function give the new value."""
        where = "Variable.assign" + {0: "", 1: "_add", -1: "_sub"}[sign]
        argument = "value" if sign == 0 else "delta"
        with self.as_default():
            if isinstance(value, Tensor) and not isinstance(value, SymbolicTensor) \
                    and value.dtype != variable.dtype:
                value = Tensor(to_array(value, variable.dtype, argument, where))
            new = self.as_graph_tensor(value, variable)
            if new.dtype != variable.dtype:
                validate.fail(TypeError, where, argument, f"a tensor of the Variable's dtype "
                              f"{variable.dtype}", new)
            if sign:
                old = self.read_variable(variable)
                new = add(old, new) if sign > 0 else subtract(old, new)
            if not compatible(new.shape, variable.shape):
                validate.fail(ValueError, where, argument, f"a value of the Variable's shape "
                              f"{variable.shape}", new)
        self.assignments[variable.id] = (variable, new)
        self.variable_reads[variable.id] = new
        return variable

    def bind_variables(self, variables, tensors):
        """Let reads of ``variables`` in this graph give ``tensors`` (already inputs)."""
        for v, t in zip(variables, tensors):
            self.variable_reads[v.id] = t


class ConcreteFunction:
    """One traced graph of a ``tg.function``: its placeholders, outputs and how to run it.

    ``graph`` is the graph as traced. Unless ``optimize`` is False, it runs as
    ``optimized``: a copy rewritten by the passes of ``teachgrad.graph.optimize``
    (``optimize`` may also name the passes to run). tg.debug checks, when on,
    see the graph as traced.
    """

    def __init__(self, python_function, graph, inputs, outputs, structure, optimize=True):
        self.python_function = python_function
        self.graph = graph
        self.inputs = inputs            # placeholders, one per tensor argument
        self.outputs = outputs          # flat list of output tensors
        self.structure = structure      # how to pack the outputs back
        self.optimize = optimize
        self.report = None              # on an optimised copy: the node counts per pass
        self.gradient = None            # the traced gradient, made on first use (autodiff)
        self._optimized = None
        # the Variables the function assigns, and their new values (run with the outputs)
        assigned = list(getattr(graph, "assignments", {}).values())
        self.assigned_variables = [v for v, _ in assigned]
        self.assigned_values = [t for _, t in assigned]
        # what its random draws drew: hidden outputs of its call, for its gradient to see
        self.draws = list(getattr(graph, "draws", ()))

    @property
    def captured_variables(self):
        return self.graph.captured_variables

    @property
    def optimized(self):
        """This function with its graph optimised (made on first use): what runs when
        ``optimize`` is on, and the "after" picture, ``tg.viz.draw(f.optimized)``."""
        if self._optimized is None:
            passes = True if self.optimize is False else self.optimize
            self._optimized = _optimized_copy(self, passes)
        return self._optimized

    def optimized_recording(self):
        """``optimized``, made by an optimiser run that keeps each pass's graphs on its
        report (``report.passes[i].before``/``.after``, for ``tg.viz.PassStepper``). Made
        before the first call, it is the very copy the function then runs."""
        copy = self._optimized
        if copy is None or not copy.report.passes or copy.report.passes[0].before is None:
            passes = True if self.optimize is False else self.optimize
            self._optimized = _optimized_copy(self, passes, record=True)
        return self._optimized

    def run(self, arrays):
        """Run the graph on ``arrays`` (explicit inputs, then captured variables' values)."""
        if self.optimize is not False and not state.checks():
            return self.optimized.run(arrays)
        feeds = dict(zip([t.id for t in self.inputs + self.graph.captures], arrays))
        fetch_ids = [t.id for t in self.outputs + self.draws + self.assigned_values]
        values = plan_for(self.graph, fetch_ids, set(feeds)).run(feeds)
        results = [values[i] for i in fetch_ids]
        n = len(self.outputs) + len(self.draws)
        for variable, array in zip(self.assigned_variables, results[n:]):
            variable.assign(array)    # after the whole graph ran: reads saw the old values
        return tuple(results[:n])     # the outputs, then the draws (hidden)


def traced_graph_function(function):
    """``function``'s graph as traced, as the passes take it (a GraphFunction fed through
    the inputs, then the captured Variables; returning the outputs, then the Variables'
    new values): what ``tg.viz.PassStepper`` runs the optimiser on, recording."""
    from .optimize import GraphFunction
    return GraphFunction(function.graph, function.inputs + function.graph.captures,
                         function.outputs + function.draws + function.assigned_values)


def _optimized_copy(function, passes, record=False):
    """``function`` with its graph run through the optimisation passes (``record``: keep
    each pass's graphs on the report)."""
    from .optimize import optimize
    n = len(function.inputs)
    outputs, draws = len(function.outputs), len(function.outputs) + len(function.draws)
    fn, report = optimize(traced_graph_function(function), passes, record)
    fn.graph.captures = fn.inputs[n:]
    fn.graph.captured_variables = list(function.captured_variables)
    copy = ConcreteFunction(function.python_function, fn.graph, fn.inputs[:n],
                            fn.outputs[:outputs], function.structure, optimize=False)
    copy.draws = list(fn.outputs[outputs:draws])
    copy.assigned_variables = list(function.assigned_variables)
    copy.assigned_values = list(fn.outputs[draws:])
    copy.report = report
    return copy


def _call_kernel(*arrays, function):
    return function.run(arrays)


def _call_shape(*inputs, function):
    return [(t.shape, t.dtype) for t in function.outputs + function.draws]


# call(*inputs, function): run a traced function. Its gradient is the gradient of the body,
# traced as a function of its own (below).
call_p = primitive("call", _call_kernel, multiple_results=True)
takes_complex(call_p)
defshape(call_p, _call_shape)


def gradient_function(function):
    """The traced gradient of ``function`` (a ConcreteFunction), traced on first use."""
    if function.gradient is None:
        function.gradient = _trace_gradient(function)
    return function.gradient


def _call_op_vjp(cts, ans, *inputs, function):
    grad_fn = gradient_function(function)
    floats = [g for g, out in zip(cts, function.outputs) if out.dtype.kind in "fc"]
    drawn = ans[len(function.outputs):]     # what this call drew: its gradient replays it
    computed = iter(innermost.process(call_p, *inputs, *floats, *drawn, function=grad_fn)
                    if grad_fn.outputs else ())
    # The gradient function returns nothing for an input the body's outputs do not
    # depend on: that input's cotangent is None (unconnected), as TensorFlow's.
    float_grads = iter([None if g is None else next(computed) for g in grad_fn.structure])
    return [next(float_grads) if x.dtype.kind in "fc" else None for x in inputs]

rules_need_tensors(defvjp_all(call_p, _call_op_vjp))   # runs a graph


def _trace_gradient(function):
    """Trace the gradient of ``function``'s body as a function of its own:
    ``(*inputs, *captured variables, *output cotangents, *draws) -> input cotangents``,
    one per floating-point input; None (and no output) for an unconnected input. The
    body's random draws are replayed: they are the numbers its call drew (replay.py)."""
    n_args = len(function.inputs)
    variables = list(function.captured_variables)
    float_outputs = [i for i, t in enumerate(function.outputs) if t.dtype.kind in "fc"]
    n_in = n_args + len(variables)
    n_ct = n_in + len(float_outputs)

    def gradient_body(*args):
        graph = state.graph
        inputs = list(args[:n_in])
        cotangents = list(args[n_in:n_ct])
        if isinstance(graph, FuncGraph):
            graph.bind_variables(variables, inputs[n_args:])
        with REPLAYING.of(Replay(graph, function.draws, args[n_ct:])):
            result = function.python_function(*inputs[:n_args])
        outputs = [o for o in nest.flatten(result) if o is not None]
        ys = [graph.as_graph_tensor(outputs[i], None) for i in float_outputs]
        xs = [x for x in inputs if x.dtype.kind in "fc"]
        if not ys:
            return [None] * len(xs)
        return gradients(ys, xs, grad_ys=cotangents)

    graph = FuncGraph(f"{function.graph.name}_grad")
    # The trace runs inside the VJP rule of some call node, which marks the nodes it
    # makes as that node's gradient. This graph is a graph of its own, cached for every
    # call: its nodes belong to no outer rule, so the mark is cleared while it is traced.
    with override(gradient_of=None), graph.as_default():
        specs = function.inputs + function.graph.captures + [
            function.outputs[i] for i in float_outputs] + function.draws
        placeholders = [placeholder(t.dtype, t.shape, name=f"x{i}")
                        for i, t in enumerate(specs)]
        grads = list(gradient_body(*placeholders))
    # The body ran again only to be differentiated: the Variables it assigns (an
    # optimizer's step) are assigned by the function's own call, never by its gradient.
    graph.assignments.clear()
    # Nor does it print again: its effects run only where a gradient needs their outputs.
    graph.runs_effects = False
    return ConcreteFunction(gradient_body, graph, placeholders,
                            [g for g in grads if g is not None], grads,
                            optimize=function.optimize)
