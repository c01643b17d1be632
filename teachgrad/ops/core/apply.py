"""How an op is applied: the interpreters, and the innermost one each op goes to.

Each way of running ops is an **interpreter**, an object with one method,
``process(op, *args, **params)``, that applies an op to its arguments:

* ``Eager``: compute now, and hand the application (a ``Node``) to every recorder of
  eager ops (a tape, an accumulator, a ``tg.debug`` check: ``ops.core.recorder``);
* ``BuildGraph``: add a node to the graph being built (``graph.as_default()``,
  ``tg.function``) instead of computing, and hand it to that graph's recorders;
* ``Batching``: one per running ``tg.vectorized_map``: run the op's batching rule when
  an input is one of that map's BatchedTensors (else hand the op to the interpreter
  below it: an outer map's, the graph being built, or eager computation);
* ``OnArrays``: a backward pass that nothing records runs its VJP rules on raw arrays.

Every op function ends in ``innermost.process(op, *args, **params)``, the calling
thread's innermost interpreter (``tg.multiply(x, y)`` is ``innermost.process(multiply_p,
x, y)``), as autodidax's ``bind`` finds the top of its trace stack. It follows from the
thread's state (``graph``, ``batching``, ``arrays``); ``mode(...)`` changes those fields
for a block and switches the interpreter with them (``interpreter_for``). ``bind`` is the
same call as a function, for ops written outside teachgrad (``tg.ops.bind``).
Declaring an op is ``ops.core.declare``; converting its inputs, ``ops.core.inputs``.
"""
import threading

from ...state import override, per_thread
from ...tensor import Tensor
from .batching import BatchedTensor, batched_at, innermost_frame
from .dtype_check import check_complex
from .inputs import (
    as_arrays,
    batch_inputs,
    convert_inputs,
    input_error,
    public_caller,
    with_context,
)
from .op import Node
from .recorder import ANY_GRAPH, hand_to_recorders


class Innermost(threading.local):
    """The calling thread's innermost interpreter's ``process`` (each op function calls
    ``innermost.process``). A thread's first read works it out from the thread's state
    (a new thread computes eagerly); ``mode`` switches it."""

    def __init__(self):
        self.process = interpreter_for(per_thread.state).process

    @property
    def interpreter(self):
        return self.process.__self__


def bind(op, *args, **params):
    """Apply ``op`` to ``args`` now: hand it to this thread's innermost interpreter.

    Python scalars and arrays among ``args`` become constant tensors; a
    Variable is read through its current snapshot. While a graph is being
    built (``graph.as_default()``, ``tg.function``) the op adds a node to it
    instead of computing. (teachgrad's own op functions call
    ``innermost.process`` directly: the same call, one frame shorter.)
    """
    return innermost.process(op, *args, **params)


class mode(override):
    """``override`` for the fields that choose the interpreter (``graph``, ``batching``,
    ``arrays``): for the block, ops go to the interpreter those fields give.

    >>> with mode(graph=g):
    ...     y = x * 2   # a node of g
    """

    __slots__ = ("outer", "interpreter")
    switches_mode = True

    def __init__(self, interpreter=None, **fields):
        """``interpreter``: the one those fields give, when the caller has it at hand (a
        map's ``Batching`` running a rule on the interpreter below it); else it is worked
        out from the fields (``interpreter_for``)."""
        self.fields = fields
        self.interpreter = interpreter

    def __enter__(self):
        self.outer = innermost.process   # read before the fields change (see Innermost)
        owner = override.__enter__(self)
        innermost.process = (self.interpreter or interpreter_for(owner)).process
        return owner

    def __exit__(self, *exc_info):
        override.__exit__(self, *exc_info)
        innermost.process = self.outer
        return False


def unobserved():
    """A block that nothing the user set up sees: no graph or recorder (nor a
    ``tg.viz.record()`` block, one of them), and no enclosing gradient rule or loop
    iteration (for a check's own computations)."""
    return mode(graph=None, recorders=(), gradient_of=None, control_context=None,
                arrays=False)


def interpreter_for(now):
    """The innermost interpreter of the state ``now``: a backward pass on arrays, else one
    ``Batching`` per running ``tg.vectorized_map`` (``now.batching``; the last entered
    innermost) over the graph being built or eager computation."""
    if now.arrays:
        return ON_ARRAYS
    interpreter = Eager(now) if now.graph is None else BuildGraph(now.graph)
    frames = ()
    for frame in sorted(set(now.batching), key=lambda f: f.entry):
        interpreter = Batching(frame, interpreter, frames, now)
        frames += (frame,)
    return interpreter


class Eager:
    """Computes each op on its inputs' arrays, and hands its Node to the recorders of
    ``state`` (the ``RecordingState`` of the thread it computes for)."""

    __slots__ = ("state",)

    def __init__(self, state):
        self.state = state

    def process(self, op, *args, **params):
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

    def process(self, op, *args, **params):
        return add_to_graph(op, args, params)


class Batching:
    """One running ``tg.vectorized_map`` (its *frame*; see ``teachgrad.ops.core.batching``),
    as JAX has one BatchTrace per level. An op given one of the frame's BatchedTensors
    runs its batching rule on the batches, and the interpreter ``below`` (an outer map's,
    the graph being built, or eager computation) runs the ops the rule applies. The
    recorders entered before the map see those ops on the batches; the op's application
    as the mapped function wrote it goes to the recorders entered inside the map. An op
    none of whose inputs is batched here goes straight to ``below``."""

    __slots__ = ("frame", "below", "outer_frames", "state", "_split_of", "_split")

    def __init__(self, frame, below, outer_frames, state):
        self.frame = frame
        self.below = below
        self.outer_frames = outer_frames   # the maps running around this one
        self.state = state
        self._split_of = None   # the recorder stack ``_split`` was worked out for

    def process(self, op, *args, **params):
        frame = self.frame
        mine = False
        for a in args:
            if isinstance(a, BatchedTensor):
                if a.frame is frame:
                    mine = True
                elif a.frame not in self.outer_frames:
                    innermost_frame((a,))   # a map that returned: says so
        if not mine:
            return self.below.process(op, *args, **params)
        args = batch_inputs(args)
        values = [a.batched if batched_at(a, frame) else a for a in args]
        batched = [batched_at(a, frame) for a in args]
        now = self.state
        sees_batches, inner = self.recorders_split(now.recorders)
        with mode(batching=self.outer_frames, recorders=sees_batches,
                  interpreter=self.below):
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

    def recorders_split(self, recorders):
        """``recorders`` as (those that see the batches: entered before the map, the
        tg.debug checks, which look at values wherever they were entered, and the
        ``tg.viz.record()`` blocks, which hear every backward pass; those that see the
        mapped function's ops). Worked out again only when the stack changed (a tape
        entered inside the map, a block that sets recorders aside)."""
        if recorders is not self._split_of:
            entry = self.frame.entry
            sees = tuple(r for r in recorders if r.entry < entry or getattr(
                r, "checks_ops", False) or getattr(r, "hears_backward", False))
            self._split = sees, tuple(r for r in recorders if r not in sees)
            self._split_of = recorders
        return self._split


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

    def process(self, op, *args, **params):
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
innermost = Innermost()


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
        return innermost.process(op, *values, **params), (tuple(batched) if several else True)
    return rule
