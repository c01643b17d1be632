"""How an op is declared: an ``Op`` and every fact about it, set in its block.

An ``Op`` is a name plus the math that defines it:

* ``forward``: computes the output arrays from the input arrays with the
  backend's namespace (the only place that touches arrays directly);
* VJP rules (``defvjp``): given the cotangent ``ct`` of the output, the input's
  cotangent. They are written with teachgrad ops, so they can be differentiated again;
* optionally a JVP rule (``defjvp``, forward mode); without one, forward mode
  transposes the VJP rule;
* optionally a batching rule (``defbatch``, for ``tg.vectorized_map``);
* what the graph optimiser may assume (``defeffect``), and whether it is a fused op.

An op's module declares all of them right after its forward computation: one op,
one block. ``teachgrad.ops.core`` applies ops (``bind``); the backward engine only
ever sees ``Node``s, the records of applications.
"""
import itertools


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


def declares_no_gradient(op, i):
    """Did ``op``'s declaration say its input ``i`` carries no gradient (``None`` in place
    of a rule in ``defvjp``)?"""
    return op.vjp_rules is not None and op.vjp_rules[i] is _no_gradient


def _no_gradient(ct, ans, *inputs, **params):
    return None
