"""``tg.function``: trace Python into a graph once, then run the graph.

The first call with a new *input signature* (the shapes and dtypes of the
tensor arguments, and the values of the other arguments) runs the Python
function on placeholders inside a fresh graph: that is tracing. Later calls
with the same signature skip Python and run the traced graph.

A traced function is used through one op, ``call`` (``concrete.py``, with the
traced graphs): eagerly its kernel runs the graph, and a tape records it like any
other op; inside another graph it is one node. The traces are cached by input
signature (``signature.py``).

Variables the function reads become extra inputs of ``call``, fed with their
current values at each call, so gradients reach them.
"""
import functools
import inspect
import threading
import warnings

from .. import nest, validate
from ..ops.core.apply import innermost
from ..ops.core.batching import BatchedTensor
from ..state import state
from ..tensor import Tensor, to_array
from .concrete import ConcreteFunction, FuncGraph, call_p
from .graph import placeholder
from .retrace import Retracing, drop_oldest
from .signature import (
    checked_signature,
    input_signature,
    is_tensor_argument,
    signature_key,
    variables_key,
)


class Function:
    """A Python function traced into graphs, one per input signature.

    Use it as a decorator: ``@tg.function``. ``f.get_concrete_function(*args)``
    and ``f.graph`` (the most recent trace) expose the graphs for drawing.
    ``optimize``: see ``tg.function``.
    """

    def __init__(self, python_function, optimize=True, input_signature=None):
        functools.update_wrapper(self, python_function)
        self.python_function = python_function
        self.input_signature = input_signature   # TensorSpecs: one trace for every call
        if optimize is not False:
            from .optimize import resolve
            optimize = resolve(optimize)   # the pass names (fails now on an unknown one)
        self.optimize = optimize
        self._traces = {}
        # Threads share the traces; one traces at a time (a trace builds one graph, and
        # two threads tracing the same key would each add it to the cache).
        self._tracing = threading.RLock()
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
        return self._concrete(input_signature(args, kwargs)[0], args, kwargs)

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
            with self._tracing:
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
        if self.input_signature is not None:   # one trace, on the signature's shapes
            key, tensors = signature_key(self.input_signature, args, kwargs, "tg.function")
            concrete = self._traces.get(key)
            if concrete is None:
                with self._tracing:
                    concrete = self._traces.get(key) or self._trace(tensors, {}, key)
                    self._traces[key] = concrete
            self._last = concrete
        else:
            key, tensors = input_signature(args, kwargs)
            concrete = self._concrete(key, args, kwargs)
        outputs = iter(innermost.process(call_p, *tensors, *concrete.captured_variables, function=concrete))
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
                if variables_key(a) is not None:
                    traced.append(a)   # the Variable itself: read (captured) and assigned
                elif is_tensor_argument(a):
                    t = a if isinstance(a, Tensor) else Tensor(to_array(a, None, name,
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
    in the trace: the function whose gradient ``graph.concrete.gradient_function`` traces."""
    slots = [i for i, a in enumerate(traced) if any(a is p for p in placeholders)]

    @functools.wraps(python_function)
    def body(*tensors):
        values = list(traced)
        for i, t in zip(slots, tensors):
            values[i] = t
        return python_function(*values[:n_args], **dict(zip(keys, values[n_args:])))
    return body


def function(python_function=None, optimize=True, input_signature=None):
    """Trace ``python_function`` into a graph per input signature: ``@tg.function``.

    Args:
      optimize: run the traced graph through the optimisation passes (pruning,
        constant folding, common-subexpression elimination, elementwise fusion,
        buffer reuse; see ``teachgrad.graph.optimize``) before it runs: True
        (the default), False to run it as traced, or the names of the passes to
        run, e.g. ``("fold", "cse")``. Also ``@tg.function(optimize=False)``.
      input_signature: a list of ``tg.TensorSpec``, one per argument: the function is
        traced once, on placeholders of those shapes (``(None, 2)``: any number of
        rows), and each call's arguments must fit them.
    """
    signature = checked_signature(input_signature, "tg.function")
    if python_function is None:
        return functools.partial(function, optimize=optimize, input_signature=signature)
    validate.callable_(python_function, "python_function", "tg.function")
    return Function(python_function, optimize=optimize, input_signature=signature)
