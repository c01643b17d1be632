"""How an op is declared, applied, and recorded.

An ``Op`` is a name plus three pieces of math:

* ``forward``: computes the output arrays from the input arrays with the
  backend's namespace (the only place that touches arrays directly);
* VJP rules: given the cotangent ``ct`` of the output, the input's cotangent.
  They are written with teachgrad ops, so they can be differentiated again;
* optionally a JVP rule (forward mode); without one, forward mode transposes
  the VJP rule.

``bind(op, *args)`` runs the forward computation and, when some
``GradientTape`` is recording, hands each tape a ``Node``: the record of one
application of an op (op, inputs, outputs, params). The backward engine only
ever sees Nodes.
"""
import itertools
import sys

from .. import backend, validate
from ..state import override, state
from ..tensor import (SymbolicTensor, Tensor, Variable, as_array, convert_to_tensor,
                      holds_tensor, packed)
from .batching import BatchedTensor, batched_at, innermost_frame

_new_node_id = itertools.count().__next__


class Op:
    """A differentiable primitive: a forward kernel and its derivative rules."""

    __slots__ = ("name", "forward", "multiple_results", "vjp_rules", "vjp_all",
                 "jvp", "differentiable", "accepts_sparse", "accepts_missing", "shape_rule",
                 "effect", "elementwise", "shape_only_inputs", "array_rules", "array_jvp",
                 "fused", "batch_rule", "batch_rule_takes_frame")

    def __init__(self, name, forward, multiple_results=False):
        self.name = name
        self.forward = forward
        self.multiple_results = multiple_results
        self.vjp_rules = None   # one rule per input: rule(ct, ans, *inputs, **params)
        self.vjp_all = None     # or one rule returning every input's cotangent
        self.jvp = None
        self.differentiable = True
        self.accepts_sparse = False  # may its rules receive an IndexedSlices ct?
        # With several outputs, an output that got no gradient is handed to the rule as
        # zeros, unless the op takes None there (control flow: saves building zeros).
        self.accepts_missing = False
        # In a graph, output shapes and dtypes are found by running `forward` on
        # stand-in arrays, unless the op gives a rule: rule(*inputs, **params)
        # -> [(shape, dtype), ...]. Cheaper for matmul, and needed for ops whose
        # forward cannot run on stand-ins (placeholders, function calls).
        self.shape_rule = None
        # What the graph optimiser may assume (see ``defeffect``): nothing, by default.
        self.effect = None
        self.elementwise = None
        self.shape_only_inputs = ()
        # May its VJP rules be handed raw arrays when nothing records them? (See
        # ``rules_take_arrays``: set by defvjp and defvjp_all.)
        self.array_rules = False
        # And its JVP rule, when no one sees the tangents computed (set by defjvp)?
        self.array_jvp = False
        # Is it a fused op: one kernel for what several ops would compute (tanh_grad's
        # ``(1 - y * y) * g``)? Drawings and steppers then show that algebra beside its
        # name (``fused_op``).
        self.fused = False
        # How to apply it to a batch inside tg.vectorized_map (see ``defbatch``); None:
        # once per example, in a loop.
        self.batch_rule = None
        self.batch_rule_takes_frame = False

    def __repr__(self):
        return f"<op {self.name}>"

    def vjp(self, node, output_grads, needed, arrays=False):
        """Input cotangents for ``node``, given its outputs' cotangents.

        ``needed[i]`` says whether input i leads to a source; rules for the
        others are not run at all (that saves, e.g., the gradient of a matmul
        with respect to the input data). ``arrays=True`` hands the rule the node's
        raw arrays instead of its Tensors (the cotangents are arrays then too).
        """
        if not self.differentiable:
            return [None] * len(node.inputs)
        inputs, params = node.inputs, node.params
        if self.multiple_results:
            ct, ans = tuple(output_grads), node.outputs
            if arrays:
                ans = tuple([t._value for t in ans])
        else:
            ct, ans = output_grads[0], node.outputs[0]
            if arrays:
                ans = ans._value
        if arrays:
            inputs = _values(inputs)
        rules = self.vjp_rules
        if rules is not None:
            # A plain loop: it runs once per node of every backward pass, and costs less
            # than a comprehension over zip() on the two inputs of most ops.
            grads = [None] * len(rules)
            for i, rule in enumerate(rules):
                if needed[i]:
                    grads[i] = rule(ct, ans, *inputs, **params)
            return grads
        if self.vjp_all is not None:
            grads = list(self.vjp_all(ct, ans, *inputs, **params))
            if len(grads) != len(needed):
                raise ValueError(f"The VJP rule of {node.name} returned {len(grads)} "
                                 f"gradients for {len(needed)} inputs.")
            return [grad if need else None for grad, need in zip(grads, needed)]
        raise LookupError(
            f"No gradient defined for operation '{node.name}' (op type: {self.name}). "
            f"Define one with tg.ops.defvjp(<the op>, rule, ...), or wrap the input in "
            f"tg.stop_gradient(...) if it should be treated as a constant.")


def _values(tensors):
    """The raw arrays of ``tensors`` (the one- and two-input cases spelled out: this
    runs for each node of a backward pass on arrays)."""
    if len(tensors) == 2:
        return (tensors[0]._value, tensors[1]._value)
    if len(tensors) == 1:
        return (tensors[0]._value,)
    return tuple([t._value for t in tensors])


class Node:
    """One recorded application of an op: what the backward engine walks.

    The same protocol serves the tape (where a Node is made when an op runs)
    and graphs (where a Node is an operation in the graph).
    """

    # `source` (where user code made the node) is set only while a tg.debug check
    # runs, and is left unset otherwise: read it with tg.debug.source_of(node).
    __slots__ = ("op", "inputs", "outputs", "params", "id", "number", "label", "grad_of",
                 "context", "source")

    def __init__(self, op, inputs, outputs, params):
        self.op = op
        self.inputs = inputs
        self.outputs = outputs
        self.params = params
        self.id = _new_node_id()   # creation order, process-wide: for sorting
        self.number = None     # its number on the tape that recorded it (see ``name``)
        self.label = None      # a graph gives its nodes unique readable names
        self.grad_of = None    # in a graph: the forward node whose VJP rule made this one
        self.context = None    # on a tape: the loop iteration or cond branch that ran it

    @property
    def name(self):
        """A graph node's unique name (``mul_1``); for a node on a tape, its op and its
        number there (``multiply_0``: the tape's first op), the same in every run."""
        if self.label:
            return self.label
        return f"{self.op.name}_{self.id if self.number is None else self.number}"

    def __repr__(self):
        return f"<node {self.name}>"


def primitive(name, forward, multiple_results=False):
    """Declare a new op. Give it derivative rules with ``defvjp``."""
    return Op(name, forward, multiple_results)


def defvjp(op, *rules):
    """Give ``op`` one VJP rule per input: ``rule(ct, ans, *inputs, **params)``, where
    ``ct`` is the cotangent of the output and ``ans`` the output itself.

    ``None`` in place of a rule marks an input that carries no gradient (an
    index, say).
    """
    op.vjp_rules = tuple(rule if rule is not None else _no_gradient for rule in rules)
    op.array_rules = rules_take_arrays(rules)
    return op


def defjvp(op, *rules):
    """Give ``op`` a native JVP: one rule per input, ``rule(x_dot, ans, *inputs, **params)``,
    returning that input's contribution to the output tangent (of the output's
    shape); the contributions add up. ``None`` marks an input without one.

    Without native rules, forward mode transposes the VJP rules instead. Like VJP
    rules, teachgrad's own JVP rules may run on raw arrays when nothing sees the
    tangents they compute (``op.jvp(node, tangents, arrays=True)``: the tangents are
    arrays, and the rule is handed the node's arrays; see ``rules_take_arrays``).
    """
    def jvp(node, tangents, arrays=False):
        ans, inputs = node.outputs[0], node.inputs
        if arrays:
            ans, inputs = ans._value, _values(inputs)
        parts = [rule(t, ans, *inputs, **node.params)
                 for rule, t in zip(rules, tangents) if t is not None and rule is not None]
        if not parts:
            return [None]
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        return [total]
    op.jvp = jvp
    op.array_jvp = rules_take_arrays(rules)
    return op


def defeffect(op, effect, elementwise=None, shape_only_inputs=()):
    """Tell the graph optimiser (``teachgrad.graph.optimize``) what it may assume about
    ``op``. Without this it assumes nothing, and leaves the op alone.

    Args:
      effect: ``"fresh"``: pure (outputs depend on inputs and params alone), and each
        output is a new array nobody else holds, so it may be overwritten after its
        last reader; ``"view"``: pure, but an output may be (a view of) an input, and
        the op may keep one; ``"reduction"``: pure, keeps no alias of its inputs, but
        its output may be shared (a full reduction gives a numpy scalar).
      elementwise: for an op whose every output entry depends only on the entries at
        the same position of its inputs, how to write it as steps of a fused
        elementwise program: numpy's ufunc name (``"add"``), or a function
        ``steps(emit, *inputs)`` calling ``emit(ufunc_name, *args)`` for each step.
      shape_only_inputs: the inputs of which only the shape is read, never the values
        (``zeros_like``'s): with the shape known, constant folding treats them as constant.
    """
    # A wrong word here would let the optimiser assume too much, silently: refuse it.
    if effect not in _EFFECTS:
        raise ValueError(f"defeffect({op.name}): `effect` must be one of {', '.join(_EFFECTS)}, "
                         f"got {effect!r}.")
    if elementwise is not None and not (isinstance(elementwise, str) or callable(elementwise)):
        raise TypeError(f"defeffect({op.name}): `elementwise` must be a numpy ufunc's name or "
                        f"a function steps(emit, *inputs), got {type(elementwise).__name__}.")
    shape_only_inputs = tuple(shape_only_inputs)
    if not all(type(i) is int and i >= 0 for i in shape_only_inputs):
        raise TypeError(f"defeffect({op.name}): `shape_only_inputs` must be input positions "
                        f"(ints >= 0), got {shape_only_inputs!r}.")
    op.effect = effect
    op.elementwise = elementwise
    op.shape_only_inputs = shape_only_inputs
    return op


_EFFECTS = ("fresh", "view", "reduction")


def fused_op(op):
    """Mark ``op`` as a fused op: one kernel for the algebra of several ops (kept because
    one step of the backward pass costs less than three). Its elementwise recipe
    (``defeffect``) is that algebra, written once: the graph optimiser fuses it, and
    drawings and steppers show it beside the op's name (``tanh_grad: (1 - y * y) * g``),
    so a student still sees the math the one node stands for."""
    if not callable(op.elementwise):
        raise TypeError(f"fused_op({op.name}): give it an elementwise recipe first "
                        f"(defeffect(op, ..., elementwise=steps)): it is the algebra shown.")
    op.fused = True
    return op


def defbatch(op, rule, takes_frame=False):
    """Give ``op`` a batching rule, for ``tg.vectorized_map``:
    ``rule(values, batched, **params) -> (outputs, out_batched)``.

    ``values`` are the op's inputs for a whole batch: where ``batched[i]`` is True,
    input i holds every example, stacked on axis 0; where False, one value shared by
    all. The rule computes every example's output at once with teachgrad ops, and says
    whether each output is batched (a bool, or one per output). For example, ``sum``
    over an example's ``axis`` is a sum over ``axis + 1`` of the batch::

        defbatch(sum_p, lambda values, batched, axis, keepdims:
                 (sum(values[0], batch_axis(axis, values[0].ndim - 1), keepdims), True))

    A rule may return ``NotImplemented`` for arguments it does not handle. A rule that
    calls user code on one example's view again (a custom gradient's grad_fn) declares
    ``takes_frame=True`` and gets the running map first: ``rule(frame, values, ...)``,
    to re-enter it with ``frame.entered()``. Ops declared
    elementwise (``defeffect(..., elementwise=...)``) batch by broadcasting without a
    rule; any other op without one runs once per example, in a loop.
    """
    op.batch_rule = rule
    op.batch_rule_takes_frame = takes_frame
    return op


def leading_axes_rule(op):
    """The batching rule of an op that treats leading axes as a batch already (identity,
    casts, zeros_like, numpy's matrix functions): apply it to the batch as it is. Multiple
    results of several inputs are batched where their input is (identity_n's); those of
    one input all are (eigh's, svd's)."""
    def rule(values, batched, **params):
        several = op.multiple_results and len(values) > 1
        return bind(op, *values, **params), (tuple(batched) if several else True)
    return rule


def defvjp_all(op, rule):
    """Give ``op`` one rule returning all input cotangents (for variadic ops)."""
    op.vjp_all = rule
    op.array_rules = rules_take_arrays((rule,))
    return op


def rules_take_arrays(rules):
    """May these VJP (or JVP) rules run on raw arrays (``on_arrays``) when nothing
    records them?

    Yes for the rules teachgrad declares (written with teachgrad ops and the
    attributes a numpy array has too: ``shape``, ``ndim``, ``dtype``, operators;
    ``tests/test_unboxed_rules.py`` runs each both ways). No for anyone else's: a
    student's rule may call ``x.numpy()``, as lesson 6's does, and gets Tensors. An op of
    teachgrad's whose rule needs Tensors (one that calls user code or runs a graph)
    says so with ``rules_need_tensors``.
    """
    return all((getattr(rule, "__module__", None) or "").startswith("teachgrad.")
               for rule in rules if rule is not None)


def rules_need_tensors(op):
    """Mark ``op``'s VJP rules as needing Tensors even when nothing records them (they
    call user code, or run a graph): the engine boxes their cotangents for them."""
    op.array_rules = False
    return op


def not_differentiable(op):
    """Mark ``op`` as having zero derivative everywhere (comparisons, indices)."""
    op.differentiable = False
    return op


def _no_gradient(ct, ans, *inputs, **params):
    return None


def bind(op, *args, **params):
    """Apply ``op`` to ``args`` now, and hand the application to every recorder.

    Python scalars and arrays among ``args`` become constant tensors; a
    Variable is read through its current snapshot. While a graph is being
    built (``graph.as_default()``, ``tg.function``) the op adds a node to it
    instead of computing.
    """
    if state.arrays:
        return on_arrays(op, args, params)
    if state.batching:   # inside tg.vectorized_map: does an input differ by example?
        frame = innermost_frame(args)
        if frame is not None:
            return batch_bind(op, _batch_inputs(args), params, frame)
    if state.graph is not None:
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
            out = op.forward(args[0]._value, args[1]._value, **params)
        elif len(args) == 1:
            out = op.forward(args[0]._value, **params)
        else:
            out = op.forward(*[t._value for t in args], **params)
    except (ValueError, TypeError) as error:
        shapes = ", ".join(str(t.shape) for t in args)
        raise with_context(error, op.name, shapes) from None
    outputs = tuple(map(Tensor, out)) if op.multiple_results else (Tensor(out),)
    if state.recorders:
        hand_to_recorders(Node(op, args, outputs, params), None)
    return outputs if op.multiple_results else outputs[0]


def batch_bind(op, args, params, frame):
    """Apply ``op`` to ``args``, some of them BatchedTensors of ``frame`` (a running
    ``tg.vectorized_map``; see ``teachgrad.ops.batching``): run its batching rule on the
    batches, seen by the recorders entered before the map, and hand the application as
    the mapped function sees it to the recorders entered inside it."""
    values = [a.batched if batched_at(a, frame) else a for a in args]
    batched = [batched_at(a, frame) for a in args]
    outer = tuple(f for f in state.batching if f.entry < frame.entry)
    # A tg.debug check looks at values, wherever it was entered: it sees the batches.
    sees_batches = tuple(r for r in state.recorders if r.entry < frame.entry
                         or getattr(r, "checks_ops", False))
    inner = tuple(r for r in state.recorders if r not in sees_batches)
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
            hand_to_recorders(Node(op, tuple(args), outputs, params), state.graph)
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
                a = a._snapshot
            elif isinstance(a, SymbolicTensor):
                raise RuntimeError(f"{op.name}: a gradient rule run on arrays was given "
                                   f"the graph tensor {a.name}.")
            a = a._value
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
    graph = state.graph
    outputs = graph.add_node(op, args, params, name=name)
    if state.recorders:
        node = outputs[0].node if op.multiple_results else outputs.node
        hand_to_recorders(node, graph)
    return outputs


def hand_to_recorders(node, graph):
    """Give ``node`` (made in ``graph``, None when eager) to each recorder that watches
    that context. Tapes see it before the accumulators entered after them compute
    tangents from it."""
    if state.control_context is not None:
        node.context = state.control_context
    for recorder in state.recorders:
        if recorder.graph is graph or recorder.graph is ANY_GRAPH:
            recorder.record(node)


#: The ``graph`` of a recorder that sees ops in every context (debug checks, watchers).
ANY_GRAPH = "any graph"


def note_variable_read(variable, tensor, graph=None):
    """Tell the recorders of ``graph``'s context that an op read ``variable`` through
    ``tensor`` (its snapshot eagerly, its read node in a graph)."""
    for recorder in state.recorders:
        if recorder.graph is graph or recorder.graph is ANY_GRAPH:
            recorder.read_variable(variable, tensor)


def note_capture(outer, inner, graph):
    """Tell the recorders of ``graph`` (a loop body or branch being built) that it
    captured ``outer``, a tensor of an enclosing graph, as ``inner``: for them
    ``inner`` is ``outer`` (TensorFlow records a capture as an identity)."""
    for recorder in state.recorders:
        if recorder.graph is graph:
            recorder.capture(outer, inner)


def note_new_output(node, tensor, graph):
    """Tell the recorders of ``graph`` that ``node`` (a While or If) gained the output
    ``tensor`` while a gradient was built: a tape that recorded the node must know
    who made it, or a gradient of that gradient would stop there."""
    for recorder in state.recorders:
        if recorder.graph is graph:
            recorder.output_added(node, tensor)


def input_error(where, args, error, caller):
    """``error``, raised converting one of ``args`` to a tensor, said again naming that
    argument (``tg.exp: `x` must be numbers ...``) when a validator can say what was
    wrong. Its name is the one it has in ``caller``, the frame of the public function
    that was given it (looked up only now, when there is an error to explain)."""
    code = caller.f_code
    parameters = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount
                                  + bool(code.co_flags & 4)]   # with a *args
    names = {k: v for k, v in caller.f_locals.items() if k in parameters}
    for i, a in enumerate(args):
        if not isinstance(a, Tensor):
            name = next((k for k, v in names.items() if v is a), None) or next(
                (f"{k}[{j}]" for k, v in names.items() if isinstance(v, (list, tuple))
                 for j, e in enumerate(v) if e is a), f"input {i}")
            try:
                if type(a) in (list, tuple) and holds_tensor(a):
                    packed(a, name, where)
                else:
                    validate.tensor_like(a, name, where)
            except (TypeError, ValueError) as named:
                return named
    return error


def operand(x, name, where):
    """``x`` as something with a shape (for an op that reads it before ``bind``): a
    Python number or (nested) list becomes a constant tensor, checked."""
    if hasattr(x, "ndim"):
        return x
    if type(x) in (list, tuple) and holds_tensor(x):
        return packed(x, name, where)   # tg.stack of its entries: differentiable
    return Tensor(validate.tensor_like(x, name, where))


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
    if state.graph is None:
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
        snapshot = value._snapshot
        if state.recorders:
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


def xp():
    """The backend's array namespace (numpy or cupy)."""
    return backend.xp


def with_context(error, where, shapes):
    """``error`` again, saying where it happened: ``where`` (the op or node that
    failed) and the shapes of its inputs.

    The error keeps its type, so ``except TypeError`` catches it as before. It is
    rebuilt around the longer message when its type takes just a message; a type
    whose constructor wants more (numpy's casting errors want the dtypes) is kept
    as it is and gets the context as a note, printed under it in the traceback.
    """
    try:
        return type(error)(f"{where}: {error} (input shapes: {shapes})")
    except Exception:
        note = f"Raised by {where} (input shapes: {shapes})."
        if hasattr(error, "add_note"):   # Python 3.11+
            error.add_note(note)
        else:
            error.__notes__ = [*getattr(error, "__notes__", ()), note]
        return error
