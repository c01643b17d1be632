"""``Op`` and ``Node``: an operation, and one recorded application of it.

An ``Op`` holds every fact about an operation: its forward computation, its VJP and
JVP rules, its batching rule, what the graph optimiser may assume. Its module sets
them with the functions of ``teachgrad.ops.core.declare``, right after the forward
computation; the backward engine runs its VJP rules through one function,
``teachgrad.autodiff.rule_calls.call_vjp``. A ``Node`` is what ``bind`` records each
time the op runs: the engine only ever sees Nodes.
"""
import itertools

_new_node_id = itertools.count().__next__


class Op:
    """A differentiable primitive: a forward kernel and its derivative rules."""

    __slots__ = ("name", "forward", "multiple_results", "vjp_rules", "vjp_all",
                 "jvp", "differentiable", "accepts_sparse", "accepts_missing", "shape_rule",
                 "effect", "elementwise", "shape_only_inputs", "array_rules", "array_jvp",
                 "fused", "batch_rule", "batch_rule_takes_frame", "rule_recomputes",
                 "takes_complex", "complex_refusal")

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
        # May its VJP rules be handed raw arrays when nothing records them? Set by who
        # declares them: teachgrad's ``declare.defvjp``, yes; ``tg.ops.defvjp``, no.
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
        self.rule_recomputes = False   # see ``recomputes_in_rule``
        # Do its rules hold for complex inputs (``takes_complex``)? Until an op says so it
        # refuses them (``teachgrad.ops.core.dtype_check``), with ``complex_refusal`` as why.
        self.takes_complex = False
        self.complex_refusal = None

    def __repr__(self):
        return f"<op {self.name}>"


def arrays_of(tensors):
    """The raw arrays of ``tensors`` (the one- and two-input cases spelled out: this
    runs for each node of a backward pass on arrays)."""
    if len(tensors) == 2:
        return (tensors[0].value, tensors[1].value)
    if len(tensors) == 1:
        return (tensors[0].value,)
    return tuple([t.value for t in tensors])


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
