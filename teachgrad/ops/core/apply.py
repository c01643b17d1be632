"""How an op is applied: ``bind``, and the interpreters it hands the op to.

Each way of running ops is an **interpreter**, an object with one method,
``process(op, args, params)``, that applies an op to its arguments:

* ``Eager``: compute now, on the inputs' arrays, and hand the application (a
  ``Node``: op, inputs, outputs, params) to every recorder of eager ops (a
  ``GradientTape``, a ``ForwardAccumulator``, a ``tg.debug`` check; see
  ``teachgrad.ops.core.recorder``);
* ``BuildGraph``: add a node to the graph being built (``graph.as_default()``,
  ``tg.function``) instead of computing, and hand it to that graph's recorders;
* ``Batching``: inside ``tg.vectorized_map``, run the op's batching rule when an input
  is one of a running map's BatchedTensors (else hand the op to the interpreter below);
* ``OnArrays``: a backward pass that nothing records runs its VJP rules on raw arrays.

``bind(op, *args)`` asks the calling thread's state (``teachgrad.state``) for its
innermost interpreter and hands the op over, as autodidax's ``bind`` asks its trace
stack. Which interpreter is innermost follows from the state's fields (``graph``,
``batching``, ``arrays``); ``override`` forgets it when they change, and the next op
works it out again (``interpreter_for``).

How an op is declared (``primitive``, ``defvjp``, ``defjvp``, ``defbatch``,
``defeffect``, ...) is ``teachgrad.ops.core.declare``; converting its inputs and naming
what was wrong is ``teachgrad.ops.core.inputs``.
"""
import sys

from ... import backend
from ...state import override, per_thread
from ...tensor import Tensor
from .batching import BatchedTensor, batched_at, innermost_frame
from .dtype_check import check_complex
from .inputs import as_arrays, batch_inputs, convert_inputs, input_error, with_context
from .op import Node
from .recorder import ANY_GRAPH, hand_to_recorders


def bind(op, *args, **params):
    """Apply ``op`` to ``args`` now: hand it to this thread's innermost interpreter.

    Python scalars and arrays among ``args`` become constant tensors; a
    Variable is read through its current snapshot. While a graph is being
    built (``graph.as_default()``, ``tg.function``) the op adds a node to it
    instead of computing.
    """
    now = per_thread.state
    interpreter = now.interpreter
    if interpreter is None:   # the mode changed (``override``): which one runs now?
        interpreter = now.interpreter = interpreter_for(now)
    return interpreter.process(op, args, params)


def interpreter_for(now):
    """The innermost interpreter of the state ``now``: a backward pass on arrays, else a
    running ``tg.vectorized_map`` over the graph being built or eager computation."""
    if now.arrays:
        return ON_ARRAYS
    below = Eager(now) if now.graph is None else BuildGraph(now.graph)
    return Batching(below) if now.batching else below


class Eager:
    """Computes each op on its inputs' arrays, and hands its Node to the recorders of
    ``state`` (the ``RecordingState`` of the thread it computes for)."""

    __slots__ = ("state",)

    def __init__(self, state):
        self.state = state

    def process(self, op, args, params):
        given = args
        for a in args:
            if type(a) is not Tensor:
                try:
                    args = convert_inputs(args)
                except (TypeError, ValueError) as error:
                    raise input_error(f"tg.{op.name}", args, error, public_caller()) from None
                break
        if not op.takes_complex:
            check_complex(op, args, given)
        try:
            # The one- and two-input cases are spelled out: this line runs for every op,
            # and building a list of values costs more than the numpy call on a scalar.
            if len(args) == 2:
                out = op.forward(args[0].value, args[1].value, **params)
            elif len(args) == 1:
                out = op.forward(args[0].value, **params)
            else:
                out = op.forward(*[t.value for t in args], **params)
        except (ValueError, TypeError) as error:
            shapes = ", ".join(str(t.shape) for t in args)
            raise with_context(error, op.name, shapes) from None
        outputs = tuple(map(Tensor, out)) if op.multiple_results else (Tensor(out),)
        now = self.state
        if now.recorders:   # ``hand_to_recorders``, spelled out: this runs for every op
            node = Node(op, args, outputs, params)
            if now.control_context is not None:
                node.context = now.control_context
            for recorder in now.recorders:
                if recorder.graph is None or recorder.graph is ANY_GRAPH:
                    recorder.record(node)
        return outputs if op.multiple_results else outputs[0]


class BuildGraph:
    """Adds each op to ``graph`` as a node (see ``add_to_graph``)."""

    __slots__ = ("graph",)

    def __init__(self, graph):
        self.graph = graph

    def process(self, op, args, params):
        return add_to_graph(op, args, params)


class Batching:
    """Inside ``tg.vectorized_map``: an op given BatchedTensors of a running map (its
    *frame*; see ``teachgrad.ops.core.batching``) runs its batching rule on the batches,
    seen by the recorders entered before the map, and its application as the mapped
    function sees it goes to the recorders entered inside it. Other ops go to the
    interpreter ``below`` (eager computation, or the graph being built)."""

    __slots__ = ("below",)

    def __init__(self, below):
        self.below = below

    def process(self, op, args, params):
        frame = innermost_frame(args)
        if frame is None:
            return self.below.process(op, args, params)
        args = batch_inputs(args)
        now = per_thread.state
        values = [a.batched if batched_at(a, frame) else a for a in args]
        batched = [batched_at(a, frame) for a in args]
        outer = tuple(f for f in now.batching if f.entry < frame.entry)
        # A tg.debug check looks at values, wherever it was entered: it sees the batches.
        sees_batches = tuple(r for r in now.recorders if r.entry < frame.entry
                             or getattr(r, "checks_ops", False))
        inner = tuple(r for r in now.recorders if r not in sees_batches)
        with override(batching=outer, recorders=sees_batches):
            result = NotImplemented
            if op.batch_rule_takes_frame:
                result = op.batch_rule(frame, values, batched, **params)
            elif op.batch_rule is not None:
                result = op.batch_rule(values, batched, **params)
            if result is NotImplemented:
                result = frame.fallback(op)(values, batched, **params)
        out, out_batched = result
        if not op.multiple_results:
            out, out_batched = (out,), (out_batched,)
        elif isinstance(out_batched, bool):
            out_batched = (out_batched,) * len(out)
        outputs = tuple(BatchedTensor(o, frame) if b else o for o, b in zip(out, out_batched))
        if inner:
            with override(recorders=inner):
                hand_to_recorders(Node(op, tuple(args), outputs, params), now.graph)
        return outputs if op.multiple_results else outputs[0]


class OnArrays:
    """Applies each op to raw arrays and returns raw arrays: no Tensor, no Node.

    This is how a VJP rule runs when nothing records the backward pass (the engine
    sets ``state.arrays``; see ``teachgrad.autodiff.engine``): the same rule code that
    builds differentiable Tensors for a second derivative then costs only its
    kernels, as in HIPS autograd, where an op called on unboxed values just computes.
    The arguments may still be Tensors (a constant a rule made, a value it closed
    over) or Python numbers (``ct * 2``); they are read as ``bind`` reads them.

    Which rules it runs is decided by who declared them: those of teachgrad's op
    families (``teachgrad.ops.core.declare``'s verbs), but not those marked
    ``rules_need_tensors`` (control flow, traced calls, custom gradients) nor any a user
    declares with ``tg.ops.defvjp``/``defjvp``/``defvjp_all``: the engine hands those
    Tensors, with this interpreter switched off (``op.array_rules``).
    """

    __slots__ = ()

    def process(self, op, args, params):
        values = args
        for a in args:   # arrays, as a rule's are, go straight to the kernel
            if isinstance(a, Tensor) or not hasattr(a, "dtype"):
                values = as_arrays(op, args)
                break
        try:
            out = op.forward(*values, **params)
        except (ValueError, TypeError) as error:
            shapes = ", ".join(str(getattr(v, "shape", ())) for v in values)
            raise with_context(error, op.name, shapes) from None
        return tuple(out) if op.multiple_results else out


ON_ARRAYS = OnArrays()


def public_caller():
    """The frame of the public function that called ``bind`` (``tg.exp``'s): its
    argument names say which input was wrong."""
    frame = sys._getframe(1)
    while frame.f_code in _INTERPRETING:
        frame = frame.f_back
    return frame


_INTERPRETING = {bind.__code__, Eager.process.__code__, Batching.process.__code__}


def add_to_graph(op, args, params, name=None):
    """Add a node applying ``op`` to the graph being built (named ``name`` or after
    the op), and hand it to the recorders entered in that graph."""
    now = per_thread.state
    graph = now.graph
    outputs = graph.add_node(op, args, params, name=name)
    if now.recorders:
        node = outputs[0].node if op.multiple_results else outputs.node
        hand_to_recorders(node, graph)
    return outputs


def leading_axes_rule(op):
    """The batching rule of an op that treats leading axes as a batch already (identity,
    casts, zeros_like, numpy's matrix functions): apply it to the batch as it is. Multiple
    results of several inputs are batched where their input is (identity_n's); those of
    one input all are (eigh's, svd's)."""
    def rule(values, batched, **params):
        several = op.multiple_results and len(values) > 1
        return bind(op, *values, **params), (tuple(batched) if several else True)
    return rule


def xp():
    """The backend's array namespace (numpy or cupy)."""
    return backend.xp
