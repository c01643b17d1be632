"""How an op is declared, applied, and recorded.

An ``Op`` is a name plus three pieces of math:

* ``forward``: computes the output arrays from the input arrays with the
  backend's namespace (the only place that touches arrays directly);
* VJP rules: given the cotangent ``g`` of the output, the input's cotangent.
  They are written with teachgrad ops, so they can be differentiated again;
* optionally a JVP rule (forward mode); without one, forward mode transposes
  the VJP rule.

``bind(op, *args)`` runs the forward computation and, when some
``GradientTape`` is recording, hands each tape a ``Node``: the record of one
application of an op (op, inputs, outputs, params). The backward engine only
ever sees Nodes.
"""
import contextlib
import itertools

from .. import backend
from ..tensor import SymbolicTensor, Tensor, Variable, convert_to_tensor

_new_node_id = itertools.count().__next__

#: Tapes that are recording now, innermost last. ``GradientTape`` manages it.
active_tapes = []

#: Forward-mode accumulators that are active now, in the order they were entered.
active_accumulators = []

#: Lists collecting the Variables that ops read (custom_gradient uses them).
variable_watchers = []


def note_variable_read(variable):
    """Tell each variable watcher that an op read ``variable``."""
    for watcher in variable_watchers:
        if all(v is not variable for v in watcher):
            watcher.append(variable)

#: Tapes and accumulators are ordered by when they were entered: each one only
#: sees the derivative computations of those entered after it.
_entry_counter = itertools.count()


def next_entry():
    """A number later than every tape or accumulator entered so far."""
    return next(_entry_counter)


@contextlib.contextmanager
def recorders_entered_before(order):
    """Only tapes and accumulators entered before ``order`` record in the block.

    A forward-mode accumulator computes its tangents inside this block, so the
    accumulators and tapes entered after it do not see that computation, while
    those entered before it do (which is how higher-order derivatives nest).
    """
    tapes, accumulators = active_tapes[:], active_accumulators[:]
    active_tapes[:] = [t for t in tapes if t._entered < order]
    active_accumulators[:] = [a for a in accumulators if a._entered < order]
    try:
        yield
    finally:
        active_tapes[:] = tapes
        active_accumulators[:] = accumulators


#: Graphs being built now (``with graph.as_default():``), innermost last. While
#: one is, ops add nodes to it instead of computing.
default_graphs = []

#: The eager loop iteration or cond branch running now (see control_flow), if
#: any: nodes recorded meanwhile carry it, so the visualizers can show it.
control_context = None

#: The forward node whose VJP rule is running, if any: graphs label the
#: gradient nodes it creates with it.
gradient_of = None

#: Debugging checks that see every op as it runs (``tg.debug.check_numerics``,
#: ``verify_gradients``): objects with ``ran(node)`` and ``built(node)``. Empty
#: unless one is on, so when off they cost one list test per op.
op_checks = []


class Op:
    """A differentiable primitive: a forward kernel and its derivative rules."""

    __slots__ = ("name", "forward", "multiple_results", "vjp_rules", "vjp_all",
                 "jvp", "differentiable", "accepts_sparse", "accepts_missing", "shape_rule")

    def __init__(self, name, forward, multiple_results=False):
        self.name = name
        self.forward = forward
        self.multiple_results = multiple_results
        self.vjp_rules = None   # one rule per input: rule(g, ans, *inputs, **params)
        self.vjp_all = None     # or one rule returning every input's cotangent
        self.jvp = None
        self.differentiable = True
        self.accepts_sparse = False  # may its rules receive an IndexedSlices g?
        # With several outputs, an output that got no gradient is handed to the rule as
        # zeros, unless the op takes None there (control flow: saves building zeros).
        self.accepts_missing = False
        # In a graph, output shapes and dtypes are found by running `forward` on
        # stand-in arrays, unless the op gives a rule: rule(*inputs, **params)
        # -> [(shape, dtype), ...]. Cheaper for matmul, and needed for ops whose
        # forward cannot run on stand-ins (placeholders, function calls).
        self.shape_rule = None

    def __repr__(self):
        return f"<op {self.name}>"

    def vjp(self, node, output_grads, needed):
        """Input cotangents for ``node``, given its outputs' cotangents.

        ``needed[i]`` says whether input i leads to a source; rules for the
        others are not run at all (that saves, e.g., the gradient of a matmul
        with respect to the input data).
        """
        if not self.differentiable:
            return [None] * len(node.inputs)
        if self.multiple_results:
            g, ans = tuple(output_grads), node.outputs
        else:
            g, ans = output_grads[0], node.outputs[0]
        inputs, params = node.inputs, node.params
        rules = self.vjp_rules
        if rules is not None:
            if len(rules) == 1:
                return [rules[0](g, ans, *inputs, **params) if needed[0] else None]
            return [rule(g, ans, *inputs, **params) if need else None
                    for rule, need in zip(rules, needed)]
        if self.vjp_all is not None:
            grads = list(self.vjp_all(g, ans, *inputs, **params))
            if len(grads) != len(needed):
                raise ValueError(f"The VJP rule of {node.name} returned {len(grads)} "
                                 f"gradients for {len(needed)} inputs.")
            return [grad if need else None for grad, need in zip(grads, needed)]
        raise LookupError(
            f"No gradient defined for operation '{node.name}' (op type: {self.name}). "
            f"Define one with tg.ops.defvjp(<the op>, rule, ...), or wrap the input in "
            f"tg.stop_gradient(...) if it should be treated as a constant.")


class Node:
    """One recorded application of an op: what the backward engine walks.

    The same protocol serves the tape (where a Node is made when an op runs)
    and graphs (where a Node is an operation in the graph).
    """

    # `source` (where user code made the node) is set only while a tg.debug check
    # runs, and is left unset otherwise: read it with tg.debug.source_of(node).
    __slots__ = ("op", "inputs", "outputs", "params", "id", "label", "grad_of", "context",
                 "source")

    def __init__(self, op, inputs, outputs, params):
        self.op = op
        self.inputs = inputs
        self.outputs = outputs
        self.params = params
        self.id = _new_node_id()
        self.label = None      # a graph gives its nodes unique readable names
        self.grad_of = None    # in a graph: the forward node whose VJP rule made this one
        self.context = None    # on a tape: the loop iteration or cond branch that ran it

    @property
    def name(self):
        return self.label or f"{self.op.name}_{self.id}"

    def __repr__(self):
        return f"<node {self.name}>"


def primitive(name, forward, multiple_results=False):
    """Declare a new op. Give it derivative rules with ``defvjp``."""
    return Op(name, forward, multiple_results)


def defvjp(op, *rules):
    """Give ``op`` one VJP rule per input: ``rule(g, ans, *inputs, **params)``.

    ``None`` in place of a rule marks an input that carries no gradient (an
    index, say).
    """
    op.vjp_rules = tuple(rule if rule is not None else _no_gradient for rule in rules)
    return op


def defjvp(op, *rules):
    """Give ``op`` a native JVP: one rule per input, ``rule(x_dot, ans, *inputs, **params)``,
    returning that input's contribution to the output tangent (of the output's
    shape); the contributions add up. ``None`` marks an input without one.

    Without native rules, forward mode transposes the VJP rules instead.
    """
    def jvp(node, tangents):
        ans = node.outputs[0]
        parts = [rule(t, ans, *node.inputs, **node.params)
                 for rule, t in zip(rules, tangents) if t is not None and rule is not None]
        if not parts:
            return [None]
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        return [total]
    op.jvp = jvp
    return op


def defvjp_all(op, rule):
    """Give ``op`` one rule returning all input cotangents (for variadic ops)."""
    op.vjp_all = rule
    return op


def not_differentiable(op):
    """Mark ``op`` as having zero derivative everywhere (comparisons, indices)."""
    op.differentiable = False
    return op


def _no_gradient(g, ans, *inputs, **params):
    return None


def bind(op, *args, **params):
    """Apply ``op`` to ``args`` now, recording it on every tape that watches an input.

    Python scalars and arrays among ``args`` become constant tensors; a
    Variable is read through its current snapshot. Inside
    ``graph.as_default()`` the op is added to the graph instead.
    """
    if default_graphs:
        return add_to_graph(op, args, params)
    for a in args:
        if type(a) is not Tensor:
            args = _convert_inputs(args)
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
    if op.multiple_results:
        outputs = tuple(map(Tensor, out))
        if active_tapes or active_accumulators or op_checks:
            _record(op, args, outputs, params)
        return outputs
    result = Tensor(out)
    if active_tapes or active_accumulators or op_checks:
        _record(op, args, (result,), params)
    return result


def add_to_graph(op, args, params, name=None):
    """Add a node applying ``op`` to the graph being built (named ``name`` or after
    the op), and let active forward-mode accumulators give it tangents."""
    outputs = default_graphs[-1].add_node(op, args, params, name=name)
    if op_checks:
        node = outputs[0].node if op.multiple_results else outputs.node
        for check in op_checks:
            check.built(node)
    if active_accumulators:
        node = outputs[0].node if op.multiple_results else outputs.node
        for accumulator in list(active_accumulators):
            accumulator._accumulate(node)
    return outputs


def _record(op, inputs, outputs, params):
    node = Node(op, inputs, outputs, params)
    if control_context is not None:
        node.context = control_context
    if op_checks:
        for check in op_checks:
            check.ran(node)
    if len(active_tapes) == 1:
        active_tapes[0]._record(node)
    else:
        for tape in active_tapes:
            tape._record(node)
    if active_accumulators:   # (copied: an accumulator may leave the list meanwhile)
        for accumulator in list(active_accumulators):
            accumulator._accumulate(node)


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


def _as_input(value, like):
    if (type(value) is float or type(value) is int) and like is not None \
            and like.dtype.kind == "f":
        # The commonest case, `x * 2.0` or `y - 1`, ahead of the checks below: what
        # convert_to_tensor makes of a number next to a float tensor.
        return Tensor(backend.scalar(value, like.dtype))
    if isinstance(value, Variable):
        snapshot = value._snapshot
        if variable_watchers:
            note_variable_read(value)
        for tape in active_tapes:
            tape._record_read(value, snapshot)
        for accumulator in active_accumulators:
            accumulator._record_read(value, snapshot)
        return snapshot
    if isinstance(value, SymbolicTensor):
        raise RuntimeError(
            f"{value.name} belongs to a graph and has no value here. Build ops on it inside "
            f"`with graph.as_default():`, or evaluate it with tg.Session(graph).run(...).")
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
