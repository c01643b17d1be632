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
one block. ``teachgrad.ops.core.apply`` applies ops (its interpreters); the backward engine only
ever sees ``Node``s, the records of applications.

**Which rules run on arrays.** A backward pass that nothing records runs its rules in
the ``OnArrays`` interpreter (``teachgrad.ops.core.apply``): they are handed raw arrays
and their ops return arrays, making no Tensor. Who declares a rule decides whether it
may be: the verbs of this module are teachgrad's own, used by its op families, whose
rules are written with teachgrad ops and what an array has too (``shape``, ``ndim``,
``dtype``, operators; ``tests/test_unboxed_rules.py`` runs each both ways), so a rule
declared here runs on arrays. The exceptions say so with ``rules_need_tensors`` (rules
that call user code or run a graph). The verbs a user calls, ``tg.ops.defvjp``,
``tg.ops.defjvp`` and ``tg.ops.defvjp_all`` (``teachgrad.ops.core.user_rules``),
declare rules that always get Tensors: a rule of yours may call ``x.numpy()``, as
lesson 6's does.
"""

from .op import Op, arrays_of


def primitive(name, forward, multiple_results=False):
    """Declare a new op. Give it derivative rules with ``defvjp``."""
    return Op(name, forward, multiple_results)


def defvjp(op, *rules):
    """Give ``op`` one VJP rule per input: ``rule(ct, ans, *inputs, **params)``, where
    ``ct`` is the cotangent of the output and ``ans`` the output itself.

    ``None`` in place of a rule marks an input that carries no gradient (an
    index, say). The rules run on raw arrays when nothing records the backward pass
    (see the module's docstring); ``tg.ops.defvjp`` gives a user's rules Tensors.
    """
    op.vjp_rules = tuple(rule if rule is not None else _no_gradient for rule in rules)
    op.array_rules = True
    return op


def defjvp(op, *rules):
    """Give ``op`` a native JVP: one rule per input, ``rule(x_dot, ans, *inputs, **params)``,
    returning that input's contribution to the output tangent (of the output's
    shape); the contributions add up. ``None`` marks an input without one.

    Without native rules, forward mode transposes the VJP rules instead. Like VJP
    rules declared here, these run on raw arrays when nothing sees the tangents they
    compute (``op.jvp(node, tangents, on_arrays=True)``: the tangents are arrays, and
    the rule is handed the node's arrays); ``tg.ops.defjvp`` gives a user's Tensors.
    """
    def jvp(node, tangents, on_arrays=False):
        ans, inputs = node.outputs[0], node.inputs
        if on_arrays:
            ans, inputs = ans.value, arrays_of(inputs)
        parts = [rule(t, ans, *inputs, **node.params)
                 for rule, t in zip(rules, tangents) if t is not None and rule is not None]
        if not parts:
            return [None]
        total = parts[0]
        for part in parts[1:]:
            total = total + part
        return [total]
    op.jvp = jvp
    op.array_jvp = True
    return op


def defshape(op, rule):
    """Give ``op`` a shape rule: ``rule(*inputs, **params) -> [(shape, dtype), ...]``, one
    per output. In a graph, output shapes and dtypes come from it instead of running
    ``forward`` on stand-in arrays: cheaper for matmul, and needed for ops whose forward
    cannot run on stand-ins (placeholders, function calls, loops)."""
    op.shape_rule = rule
    return op


def defjvp_all(op, jvp):
    """Give ``op`` one forward-mode rule for all its outputs: ``jvp(node, tangents)`` returns
    one output tangent per output (None for none). For ops whose JVP is not a sum of
    one rule per input (a custom gradient's, einsum's). It is handed the node itself,
    so it always sees Tensors."""
    op.jvp = jvp
    op.array_jvp = False
    return op


def accepts(op, sparse=False, missing=False):
    """Say what ``op``'s VJP rule may be handed: ``sparse``, an IndexedSlices cotangent (the
    engine densifies it otherwise); ``missing``, None for an output that got no gradient,
    among several (the engine makes zeros otherwise; control flow saves building them)."""
    op.accepts_sparse = sparse
    op.accepts_missing = missing
    return op


def recomputes_in_rule(op):
    """Mark ``op``'s VJP rule as recomputing (a custom gradient's grad_fn may run the
    function again): the graph optimiser keeps the nodes the rule makes as a group of their
    own, never merged with equal nodes elsewhere (a recomputation must not be undone)."""
    op.rule_recomputes = True
    return op


def defeffect(op, effect, elementwise=None, shape_only_inputs=()):
    """Tell the graph optimiser (``teachgrad.graph.optimize``) what it may assume about
    ``op``. Without this it assumes nothing, and leaves the op alone.

    Args:
      effect: ``"fresh"``: pure (outputs depend on inputs and params alone), and each
        output is a new array nobody else holds, so it may be overwritten after its
        last reader; ``"view"``: pure, but an output may be (a view of) an input, and
        the op may keep one; ``"reduction"``: pure, keeps no alias of its inputs, but
        its output may be shared (a full reduction gives a numpy scalar);
        ``"stateful"``: not pure, and what it does when it runs matters (``tg.print``
        writes, a ``tg.random`` draw advances its generator): never folded, merged or
        fused, and a traced function runs it on every call, in program order, even
        when no output needs it.
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


_EFFECTS = ("fresh", "view", "reduction", "stateful")


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
    """Give ``op`` one rule returning all input cotangents (for variadic ops); it runs
    on arrays as ``defvjp``'s rules do."""
    op.vjp_all = rule
    op.array_rules = True
    return op


def rules_need_tensors(op):
    """Mark the rules just declared for ``op`` as needing Tensors even when nothing
    records them (they call user code, or run a graph): the engine boxes their
    cotangents, and forward mode its tangents, for them. Wrap the declaration in it:
    ``rules_need_tensors(defvjp_all(op, rule))``."""
    op.array_rules = False
    op.array_jvp = False
    return op


def takes_complex(op):
    """Declare that ``op`` computes and differentiates complex inputs too: its rules
    follow TensorFlow's convention (``teachgrad.dtypes``; a holomorphic op's VJP multiplies
    by the conjugate of its derivative). An op that has not said so refuses complex
    input with a TypeError (``teachgrad.ops.core.dtype_check``), never giving a quietly
    real result."""
    op.takes_complex = True
    return op


def refuses_complex(op, why):
    """Say why ``op`` refuses complex input (``why`` ends the TypeError's message):
    for the ordering ops, complex numbers have no order, as in numpy and TensorFlow."""
    op.complex_refusal = why
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
