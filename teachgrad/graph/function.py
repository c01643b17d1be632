"""``tg.function``: trace Python into a graph once, then run the graph.

The first call with a new *input signature* (the shapes and dtypes of the
tensor arguments, and the values of the other arguments) runs the Python
function on placeholders inside a fresh graph: that is tracing. Later calls
with the same signature skip Python and run the traced graph.

A traced function is used through one op, ``call``: eagerly its kernel runs the
graph, and a tape records it like any other op; inside another graph it is one
node. Its VJP rule (``teachgrad.autodiff.function_gradient``) is the gradient of
the body, traced as a function of its own (TensorFlow's SymbolicGradient), so
gradients of gradients work too.

Variables the function reads become extra inputs of ``call``, fed with their
current values at each call, so gradients reach them.
"""
import functools
import inspect
import warnings

import numpy as np

from .. import nest, validate
from ..ops.arithmetic import add, subtract
from ..ops.batching import BatchedTensor
from ..ops.core import bind, note_variable_read, primitive
from ..ops.grad_util import compatible
from ..state import state
from ..tensor import SymbolicTensor, Tensor, Variable, _to_array
from .graph import Graph, placeholder
from .retrace import Retracing, drop_oldest
from .session import plan_for
from ..ops.declare import defshape


class FuncGraph(Graph):
    """The graph of a traced function: each Variable it reads becomes an input."""

    def __init__(self, name):
        super().__init__()
        self.name = name
        self.captured_variables = []   # in the order the body first read them
        self.captures = []             # the placeholders that stand for them
        self.assignments = {}          # Variable id -> (Variable, its new value), in order

    def read_variable(self, variable):
        read = self._variable_reads.get(variable.id)
        if read is None:
            with self.as_default():
                read = placeholder(variable.dtype, variable.shape,
                                   name=variable.name or "variable")
            self._variable_reads[variable.id] = read
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
                value = Tensor(_to_array(value, variable.dtype, argument, where))
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
        self._variable_reads[variable.id] = new
        return variable

    def bind_variables(self, variables, tensors):
        """Let reads of ``variables`` in this graph give ``tensors`` (already inputs)."""
        for v, t in zip(variables, tensors):
            self._variable_reads[v.id] = t


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

    def run(self, arrays):
        """Run the graph on ``arrays`` (explicit inputs, then captured variables' values)."""
        if self.optimize is not False and not state.checks():
            return self.optimized.run(arrays)
        feeds = dict(zip([t.id for t in self.inputs + self.graph.captures], arrays))
        fetch_ids = [t.id for t in self.outputs + self.assigned_values]
        values = plan_for(self.graph, fetch_ids, set(feeds)).run(feeds)
        results = [values[i] for i in fetch_ids]
        n = len(self.outputs)
        for variable, array in zip(self.assigned_variables, results[n:]):
            variable.assign(array)    # after the whole graph ran: reads saw the old values
        return tuple(results[:n])


def _optimized_copy(function, passes):
    """``function`` with its graph run through the optimisation passes."""
    from .optimize import GraphFunction, optimize
    n = len(function.inputs)
    outputs = len(function.outputs)
    traced = GraphFunction(function.graph, function.inputs + function.graph.captures,
                           function.outputs + function.assigned_values)
    fn, report = optimize(traced, passes)
    fn.graph.captures = fn.inputs[n:]
    fn.graph.captured_variables = list(function.captured_variables)
    copy = ConcreteFunction(function.python_function, fn.graph, fn.inputs[:n],
                            fn.outputs[:outputs], function.structure, optimize=False)
    copy.assigned_variables = list(function.assigned_variables)
    copy.assigned_values = list(fn.outputs[outputs:])
    copy.report = report
    return copy


def _call_kernel(*arrays, function):
    return function.run(arrays)


def _call_shape(*inputs, function):
    return [(t.shape, t.dtype) for t in function.outputs]


# call(*inputs, function): run a traced function. Its gradient is the gradient of the body,
# traced as a function of its own: teachgrad.autodiff.function_gradient gives it its rule.
call_p = primitive("call", _call_kernel, multiple_results=True)
defshape(call_p, _call_shape)


class Function:
    """A Python function traced into graphs, one per input signature.

    Use it as a decorator: ``@tg.function``. ``f.get_concrete_function(*args)``
    and ``f.graph`` (the most recent trace) expose the graphs for drawing.
    ``optimize``: see ``tg.function``.
    """

    def __init__(self, python_function, optimize=True):
        functools.update_wrapper(self, python_function)
        self.python_function = python_function
        if optimize is not False:
            from .optimize import resolve
            optimize = resolve(optimize)   # the pass names (fails now on an unknown one)
        self.optimize = optimize
        self._traces = {}
        self._last = None
        self._retracing = Retracing()
        try:
            self._parameters = inspect.signature(python_function)
        except (TypeError, ValueError):   # a builtin: positional arguments only
            self._parameters = None
        # A call with exactly this many positional arguments and no keywords needs no
        # binding to the parameters (the common case, kept fast); -1: always bind.
        plain = self._parameters is not None and all(
            p.kind is p.POSITIONAL_OR_KEYWORD for p in self._parameters.parameters.values())
        self._positional = len(self._parameters.parameters) if plain else -1

    @property
    def graph(self):
        """The graph of the most recent trace (None before the first call)."""
        return self._last.graph if self._last else None

    @property
    def last_concrete_function(self):
        """The most recent trace: its graph, inputs and outputs (None before the first call)."""
        return self._last

    @property
    def trace_count(self):
        return len(self._traces)

    def get_concrete_function(self, *args, **kwargs):
        """The traced graph for these arguments (tracing it if needed)."""
        args, kwargs = self._canonical(args, kwargs)
        return self._concrete(_signature(args, kwargs)[0], args, kwargs)

    def _canonical(self, args, kwargs):
        """The call's arguments as the function's parameters take them: keyword
        arguments given for positional parameters, and defaults, made positional, so
        that ``f(x, 2.0)``, ``f(x, b=2.0)`` and (with ``b=2.0`` the default) ``f(x)``
        are one signature."""
        if self._parameters is None:
            return args, kwargs
        try:
            bound = self._parameters.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"tg.function: calling {self.python_function.__name__}"
                            f"{self._parameters}: {error}.") from None
        bound.apply_defaults()
        return bound.args, bound.kwargs

    def _concrete(self, key, args, kwargs):
        concrete = self._traces.get(key)
        if concrete is None:
            concrete = self._retrace(key, args, kwargs)
        self._last = concrete
        return concrete

    def _retrace(self, key, args, kwargs):
        """The trace for a key not in the cache: a shape-generic one that serves it, or a
        new one (see ``retrace``: relaxed shapes, a bounded cache, a warning naming why)."""
        offset, retracing = int(bool(kwargs)), self._retracing
        concrete = self._traces.get(retracing.relax(key, offset))
        if concrete is not None:
            return concrete
        key = retracing.note(key, offset)
        concrete = self._traces.get(key)
        if concrete is None:
            names = self._argument_names(len(args)) + sorted(kwargs)
            message = retracing.warning(self.python_function.__name__, len(self._traces) + 1,
                                        key, offset, names)
            concrete = self._traces[key] = self._trace(args, kwargs, key[offset:])
            drop_oldest(self._traces)
            if message:
                warnings.warn(message, stacklevel=4)
        retracing.last = key
        return concrete

    def __call__(self, *args, **kwargs):
        if state.batching and any(isinstance(a, BatchedTensor) for a in
                                  nest.flatten([args, kwargs])):
            # Inside tg.vectorized_map, with an argument that differs by example: run the
            # Python function, whose ops the map batches (a trace would fix one example).
            return self.python_function(*args, **kwargs)
        if kwargs or len(args) != self._positional:
            args, kwargs = self._canonical(args, kwargs)
        key, tensors = _signature(args, kwargs)
        concrete = self._concrete(key, args, kwargs)
        outputs = iter(bind(call_p, *tensors, *concrete.captured_variables, function=concrete))
        return nest.pack_sequence_as(concrete.structure, [
            None if leaf is None else next(outputs) for leaf in nest.flatten(concrete.structure)])

    def _trace(self, args, kwargs, entries):
        """Trace the function on placeholders; ``entries`` (one per argument, from the
        key) give their shapes: None for a size a shape-generic trace leaves open."""
        graph = FuncGraph(self.python_function.__name__)
        with graph.as_default():
            placeholders = []
            names = self._argument_names(len(args)) + sorted(kwargs)
            traced = []
            values = list(args) + [kwargs[k] for k in sorted(kwargs)]
            for name, a, entry in zip(names, values, entries):
                if _variables_key(a) is not None:
                    traced.append(a)   # the Variable itself: read (captured) and assigned
                elif _is_tensor_argument(a):
                    t = a if isinstance(a, Tensor) else Tensor(_to_array(a, None, name,
                                                                         "tg.function"))
                    p = placeholder(t.dtype, entry[0], name=name)
                    placeholders.append(p)
                    traced.append(p)
                else:
                    traced.append(a)
            traced_kwargs = dict(zip(sorted(kwargs), traced[len(args):]))
            result = self.python_function(*traced[:len(args)], **traced_kwargs)
            # Tensors (and numbers) in the result become outputs; a None stays None.
            outputs = [graph.as_graph_tensor(o, None) for o in nest.flatten(result)
                       if o is not None]
        body = _of_tensors(self.python_function, traced, len(args), sorted(kwargs),
                           placeholders)
        return ConcreteFunction(body, graph, placeholders, outputs, result,
                                optimize=self.optimize)


    def _argument_names(self, count):
        """The placeholders' names: the Python parameters' (``x``, ``w``); the extra
        arguments of a ``*args`` parameter ``args_0``, ``args_1``, ...; ``arg3`` when
        the function's signature is unknown."""
        names = []
        if self._parameters is not None:
            for p in self._parameters.parameters.values():
                if p.kind is p.VAR_POSITIONAL:
                    names += [f"{p.name}_{i}" for i in range(count - len(names))]
                elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                    names.append(p.name)
        return (names + [f"arg{i}" for i in range(len(names), count)])[:count]


def _of_tensors(python_function, traced, n_args, keys, placeholders):
    """``python_function`` as a function of its tensor arguments alone (those traced as
    ``placeholders``), its other arguments (Python values, Variables) bound as they were
    in the trace: the function whose gradient ``function_gradient`` traces."""
    slots = [i for i, a in enumerate(traced) if any(a is p for p in placeholders)]

    @functools.wraps(python_function)
    def body(*tensors):
        values = list(traced)
        for i, t in zip(slots, tensors):
            values[i] = t
        return python_function(*values[:n_args], **dict(zip(keys, values[n_args:])))
    return body


def _is_tensor_argument(a):
    return isinstance(a, (Tensor, np.ndarray)) or (
        isinstance(a, (list, tuple)) and a and all(isinstance(v, (int, float)) for v in a))


def _signature(args, kwargs=None):
    """The cache key of a call, and its tensor arguments (positional ones first, then
    keyword ones by name). Python values are keyed by type as well as value: 1, 1.0
    and True are equal in Python, yet trace different graphs."""
    key, tensors = [], []
    values = list(args)
    if kwargs:   # keyword arguments by name, after the positional ones (a marker between)
        key.append(tuple(sorted(kwargs)))
        values += [kwargs[k] for k in sorted(kwargs)]
    for i, a in enumerate(values):
        variables = _variables_key(a)
        if variables is not None:
            key.append(("variables", variables))
        elif isinstance(a, Tensor):
            key.append((a.shape, a.dtype))
            tensors.append(a)
        elif _is_tensor_argument(a):
            t = Tensor(_to_array(a, None, _argument_name(i, args, kwargs), "tg.function"))
            key.append((t.shape, t.dtype))
            tensors.append(t)
        else:
            try:
                hash(a)
            except TypeError:
                validate.fail(TypeError, "tg.function", _argument_name(i, args, kwargs),
                              "a tensor, an array or a hashable Python value (a number, a "
                              "string, a tuple)", a)
            key.append(("value", _value_key(a)))
    return tuple(key), tensors


def _variables_key(a):
    """For a Variable argument, or a list or tuple of them (a model's weights): a key
    telling them apart by identity; None for anything else.

    As in TensorFlow 2, a Variable passed to a traced function stays that Variable: the
    body reads it as it reads one it closes over (a capture, fed its current value at
    each call), and can assign it (``opt.apply_gradients`` in a train step). A
    placeholder would stand for its value only, and could not be assigned."""
    if isinstance(a, Variable):
        return a.id
    if isinstance(a, (list, tuple)) and a and all(isinstance(v, Variable) for v in a):
        return (type(a), tuple(v.id for v in a))
    return None


def _argument_name(i, args, kwargs):
    return f"argument {i}" if i < len(args) else sorted(kwargs)[i - len(args)]


def _value_key(value):
    """A Python value as a cache key that tells types apart, also inside tuples."""
    if isinstance(value, tuple):
        return (type(value), tuple(_value_key(v) for v in value))
    if isinstance(value, frozenset):
        return (type(value), frozenset(_value_key(v) for v in value))
    return (type(value), value)


def function(python_function=None, optimize=True):
    """Trace ``python_function`` into a graph per input signature: ``@tg.function``.

    Args:
      optimize: run the traced graph through the optimisation passes (pruning,
        constant folding, common-subexpression elimination, elementwise fusion,
        buffer reuse; see ``teachgrad.graph.optimize``) before it runs: True
        (the default), False to run it as traced, or the names of the passes to
        run, e.g. ``("fold", "cse")``. Also ``@tg.function(optimize=False)``.
    """
    if python_function is None:
        return functools.partial(function, optimize=optimize)
    validate.callable_(python_function, "python_function", "tg.function")
    return Function(python_function, optimize=optimize)
