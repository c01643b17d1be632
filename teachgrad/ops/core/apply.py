"""How an op is applied and recorded: ``bind``, and the recorders' hand-off.

``bind(op, *args)`` runs the op's forward computation on the arguments' arrays and,
when something records (a ``GradientTape``, a ``ForwardAccumulator``, a ``tg.debug``
check), hands each recorder a ``Node``: the record of one application of an op (op,
inputs, outputs, params). It dispatches on what runs now (``teachgrad.state``): a
backward pass on raw arrays (``on_arrays``), a ``tg.vectorized_map`` (``batch_bind``),
a graph being built (``add_to_graph``), or eager computation.

How an op is declared (``primitive``, ``defvjp``, ``defjvp``, ``defbatch``,
``defeffect``, ...) is ``teachgrad.ops.core.declare``; converting its inputs and naming
what was wrong is ``teachgrad.ops.core.inputs``.
"""
import sys

from ... import backend
from ...state import override, per_thread
from ...tensor import SymbolicTensor, Tensor, Variable, as_array, convert_to_tensor
from .batching import BatchedTensor, batched_at, innermost_frame
from .inputs import input_error, with_context
from .op import Node


def bind(op, *args, **params):
    """Apply ``op`` to ``args`` now, and hand the application to every recorder.

    Python scalars and arrays among ``args`` become constant tensors; a
    Variable is read through its current snapshot. While a graph is being
    built (``graph.as_default()``, ``tg.function``) the op adds a node to it
    instead of computing.
    """
    now = per_thread.state
    if now.arrays:
        return on_arrays(op, args, params)
    if now.batching:   # inside tg.vectorized_map: does an input differ by example?
        frame = innermost_frame(args)
        if frame is not None:
            return batch_bind(op, _batch_inputs(args), params, frame)
    if now.graph is not None:
        return add_to_graph(op, args, params)
    for a in args:
        if type(a) is not Tensor:
            try:
                args = _convert_inputs(args)
            except (TypeError, ValueError) as error:
                raise input_error(f"tg.{op.name}", args, error, sys._getframe(1)) from None
            break
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
    if now.recorders:
        hand_to_recorders(Node(op, args, outputs, params), None)
    return outputs if op.multiple_results else outputs[0]


def batch_bind(op, args, params, frame):
    """Apply ``op`` to ``args``, some of them BatchedTensors of ``frame`` (a running
    ``tg.vectorized_map``; see ``teachgrad.ops.core.batching``): run its batching rule on the
    batches, seen by the recorders entered before the map, and hand the application as
    the mapped function sees it to the recorders entered inside it."""
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


def on_arrays(op, args, params):
    """Apply ``op`` to raw arrays and return raw arrays: no Tensor, no Node.

    This is how a VJP rule runs when nothing records the backward pass (the engine
    sets ``state.arrays``; see ``teachgrad.autodiff.engine``): the same rule code that
    builds differentiable Tensors for a second derivative then costs only its
    kernels, as in HIPS autograd, where an op called on unboxed values just computes.
    The arguments may still be Tensors (a constant a rule made, a value it closed
    over) or Python numbers (``ct * 2``); they are read as ``bind`` reads them.
    """
    values = args
    for a in args:   # arrays, as a rule's are, go straight to the kernel
        if isinstance(a, Tensor) or not hasattr(a, "dtype"):
            values = _as_arrays(op, args)
            break
    try:
        out = op.forward(*values, **params)
    except (ValueError, TypeError) as error:
        shapes = ", ".join(str(getattr(v, "shape", ())) for v in values)
        raise with_context(error, op.name, shapes) from None
    return tuple(out) if op.multiple_results else out


def _as_arrays(op, args):
    """``args`` of an op run on arrays (``on_arrays``), each as a raw array: a Tensor's
    value, and a Python number as ``bind`` converts it (the dtype of the first float
    array beside it)."""
    values, numbers = [], False
    for a in args:
        if isinstance(a, Tensor):
            if isinstance(a, Variable):
                a = a.snapshot
            elif isinstance(a, SymbolicTensor):
                raise RuntimeError(f"{op.name}: a gradient rule run on arrays was given "
                                   f"the graph tensor {a.name}.")
            a = a.value
        elif not hasattr(a, "dtype"):   # a Python number or list: converted below
            numbers = True
        values.append(a)
    if numbers:
        like = next((v for v in values if getattr(v, "dtype", None) is not None
                     and v.dtype.kind == "f"), None)
        values = [v if hasattr(v, "dtype") else as_array(v, like) for v in values]
    return values


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


def hand_to_recorders(node, graph):
    """Give ``node`` (made in ``graph``, None when eager) to each recorder that watches
    that context. Tapes see it before the accumulators entered after them compute
    tangents from it."""
    now = per_thread.state
    if now.control_context is not None:
        node.context = now.control_context
    for recorder in now.recorders:
        if recorder.graph is graph or recorder.graph is ANY_GRAPH:
            recorder.record(node)


#: The ``graph`` of a recorder that sees ops in every context (debug checks, watchers).
ANY_GRAPH = "any graph"


def note_variable_read(variable, tensor, graph=None):
    """Tell the recorders of ``graph``'s context that an op read ``variable`` through
    ``tensor`` (its snapshot eagerly, its read node in a graph)."""
    for recorder in per_thread.state.recorders:
        if recorder.graph is graph or recorder.graph is ANY_GRAPH:
            recorder.read_variable(variable, tensor)


def note_capture(outer, inner, graph):
    """Tell the recorders of ``graph`` (a loop body or branch being built) that it
    captured ``outer``, a tensor of an enclosing graph, as ``inner``: for them
    ``inner`` is ``outer`` (TensorFlow records a capture as an identity)."""
    for recorder in per_thread.state.recorders:
        if recorder.graph is graph:
            recorder.capture(outer, inner)


def note_new_output(node, tensor, graph):
    """Tell the recorders of ``graph`` that ``node`` (a While or If) gained the output
    ``tensor`` while a gradient was built: a tape that recorded the node must know
    who made it, or a gradient of that gradient would stop there."""
    for recorder in per_thread.state.recorders:
        if recorder.graph is graph:
            recorder.output_added(node, tensor)


def _convert_inputs(args):
    if len(args) == 2:   # a binary op, `x * 2.0`: the commonest case, spelled out
        x, y = args
        like = x if isinstance(x, Tensor) else y if isinstance(y, Tensor) else None
        return (x if type(x) is Tensor else _as_input(x, like),
                y if type(y) is Tensor else _as_input(y, like))
    like = None   # the first tensor: Python scalars take its dtype
    for a in args:
        if isinstance(a, Tensor):
            like = a
            break
    return tuple([a if type(a) is Tensor else _as_input(a, like) for a in args])


def _batch_inputs(args):
    """``args`` of an op inside tg.vectorized_map as tensors for its batching rule. While
    a graph is built, a Variable stays one: the graph reads it when the rule's ops are
    added (eagerly, its snapshot is read here, as ``bind`` reads it)."""
    if per_thread.state.graph is None:
        return _convert_inputs(args)
    like = next((a for a in args if isinstance(a, Tensor)), None)
    return tuple([a if isinstance(a, Tensor) else _as_input(a, like) for a in args])


def _as_input(value, like):
    if (type(value) is float or type(value) is int) and like is not None \
            and like.dtype.kind == "f":
        # The commonest case, `x * 2.0` or `y - 1`, ahead of the checks below: what
        # convert_to_tensor makes of a number next to a float tensor.
        return Tensor(backend.scalar(value, like.dtype))
    if isinstance(value, Variable):
        snapshot = value.snapshot
        if per_thread.state.recorders:
            note_variable_read(value, snapshot)
        return snapshot
    if isinstance(value, SymbolicTensor):
        raise RuntimeError(
            f"{value.name} belongs to a graph and has no value here. Build ops on it inside "
            f"`with graph.as_default():`, or evaluate it with tg.Session(graph).run(...).")
    if isinstance(value, BatchedTensor):   # used after its map returned?
        innermost_frame((value,))
    if isinstance(value, Tensor):  # a Tensor subclass other than Variable
        return value
    return convert_to_tensor(value, like)


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
