"""Calling a node's VJP rule: the boundary between Tensors and raw arrays.

``call_vjp`` is the one function between the backward engine and a VJP rule: it runs
a node's rules for the inputs that lead to a source. On the way

* the cotangents are put in the form the rule takes (``rule_cotangents``: zeros for an
  unused output of several, dense for a rule that takes no IndexedSlices);
* a graph being built, or a tg.debug check, learns which node's rule made the ops it
  sees (``state.gradient_of``);
* the shapes the rule returned are checked against the inputs'.

When nothing records the backward pass, rules run on raw arrays (``state.arrays``, see
``teachgrad.ops.core.on_arrays``): ``unboxed`` and ``boxed`` convert a cotangent at the
edges, and a rule that needs Tensors (one that calls user code or runs a graph) gets
them boxed (``_on_tensors``).
"""
from ..ops import IndexedSlices, zeros_like
from ..ops.core.apply import mode
from ..ops.core.grad_util import compatible
from ..ops.core.op import arrays_of
from ..state import override, per_thread, state
from ..tensor import Tensor
from .pending import trainable


def rule_marks_read():
    """Does anything read which forward node's rule made an op? A graph being built
    groups gradient nodes under it, and a tg.debug check notes it; eagerly, with no
    check on, nothing does, and the mark is not set."""
    return state.graph is not None or bool(state.recorders and state.checks())


def unboxed(g):
    """A cotangent's raw array (an IndexedSlices keeps its form, with raw values)."""
    if type(g) is IndexedSlices:
        return IndexedSlices(unboxed(g.values), g.indices, g.dense_shape)
    return g.value if isinstance(g, Tensor) else g


def boxed(g):
    """A cotangent computed on raw arrays as a Tensor (or IndexedSlices of one)."""
    if g is None or isinstance(g, Tensor):
        return g
    if type(g) is IndexedSlices:
        return IndexedSlices(boxed(g.values), g.indices, g.dense_shape)
    return Tensor(g)


def call_vjp(node, out_grads, needed, arrays=False):
    """Input cotangents for ``node`` from its outputs' cotangents ``out_grads``: the one
    place the backward engine (and every other caller) runs an op's VJP rules.

    ``needed[i]`` says whether input i leads to a source; rules for the others are not
    run at all (that saves, e.g., the gradient of a matmul with respect to the input
    data). With ``arrays=True`` the cotangents are raw arrays and the rules are handed
    the node's arrays instead of its Tensors (their results are arrays too).
    """
    op = node.op
    if not op.differentiable:
        return [None] * len(node.inputs)
    if op.multiple_results or type(out_grads[0]) is IndexedSlices:
        out_grads = rule_cotangents(node, out_grads)
    inputs, params = node.inputs, node.params
    if arrays:
        if not op.array_rules:
            return _on_tensors(node, out_grads, needed)
        inputs = arrays_of(inputs)
    elif per_thread.state.gradient_of is not node and rule_marks_read():
        with override(gradient_of=node):   # the same call, with the mark set
            return call_vjp(node, out_grads, needed)
    if op.multiple_results:
        ct, ans = tuple(out_grads), node.outputs
        if arrays:
            ans = tuple([t.value for t in ans])
    else:
        ct, ans = out_grads[0], node.outputs[0]
        if arrays:
            ans = ans.value
    rules = op.vjp_rules
    if rules is not None:
        # A plain loop, which also checks each result's shape: it runs once per node of
        # every backward pass, and costs less than comprehensions over zip().
        in_grads = [None] * len(rules)
        for i, rule in enumerate(rules):
            if needed[i]:
                g = in_grads[i] = rule(ct, ans, *inputs, **params)
                if g is not None and g.shape != node.inputs[i].shape:
                    _check_shape(node, in_grads, i)
        return in_grads
    if op.vjp_all is not None:
        return _all_at_once(node, op.vjp_all(ct, ans, *inputs, **params), needed)
    raise _no_rule(node)


def rule_cotangents(node, out_grads):
    """``out_grads`` in the form ``node``'s rule takes: for several outputs, zeros for
    those that got none (unless the op accepts None there), and dense cotangents for an
    op whose rules do not accept an IndexedSlices."""
    op = node.op
    if op.multiple_results:
        if not op.accepts_missing:
            # A rule for several outputs needs a cotangent for each: unused ones are zero.
            out_grads = [zeros_like(t) if g is None and trainable(t) else g
                         for g, t in zip(out_grads, node.outputs)]
        if not op.accepts_sparse and IndexedSlices in map(type, out_grads):
            out_grads = [g.to_dense() if type(g) is IndexedSlices else g for g in out_grads]
    elif type(out_grads[0]) is IndexedSlices and not op.accepts_sparse:
        out_grads = [out_grads[0].to_dense()]
    return out_grads


def _no_rule(node):
    """The error for an op declared without a VJP rule."""
    return LookupError(
        f"No gradient defined for operation '{node.name}' (op type: {node.op.name}). "
        f"Define one with tg.ops.defvjp(<the op>, rule, ...), or wrap the input in "
        f"tg.stop_gradient(...) if it should be treated as a constant.")


def _all_at_once(node, grads, needed):
    """The cotangents a ``vjp_all`` rule returned, for the inputs that need one, their
    shapes checked as ``call_vjp`` checks one rule's."""
    grads = list(grads)
    if len(grads) != len(needed):
        raise ValueError(f"The VJP rule of {node.name} returned {len(grads)} "
                         f"gradients for {len(needed)} inputs.")
    in_grads = [grad if need else None for grad, need in zip(grads, needed)]
    for i, g in enumerate(in_grads):
        if g is not None and g.shape != node.inputs[i].shape:
            _check_shape(node, in_grads, i)
    return in_grads


def _check_shape(node, in_grads, i):
    """The cotangent of input ``i`` has another shape than the input: an error, unless
    the two are compatible (a graph's unknown dimensions)."""
    x, g = node.inputs[i], in_grads[i]
    if not compatible(g.shape, x.shape):
        i = next(i for i, h in enumerate(in_grads) if h is g)   # the first that is g
        raise ValueError(
            f"Incompatible shapes between op input and calculated input gradient. "
            f"Forward operation: {node.name}. Input index: {i}. Original input shape: "
            f"{tuple(x.shape)}. Calculated input gradient shape: {tuple(g.shape)}.")


def _on_tensors(node, out_grads, needed):
    """Run a rule that needs Tensors (``rules_need_tensors``) in a pass on arrays: its
    cotangents boxed, its ops on Tensors, its results back to arrays."""
    with mode(arrays=False):
        in_grads = call_vjp(node, [boxed(g) for g in out_grads], needed)
    return [unboxed(g) for g in in_grads]
