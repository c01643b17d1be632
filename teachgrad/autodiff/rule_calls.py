"""Calling a node's VJP rule: the boundary between Tensors and raw arrays.

``call_vjp`` runs a rule for the inputs that lead to a source and checks the shapes
it returned. When nothing records the backward pass, rules run on raw arrays
(``state.arrays``, see ``teachgrad.ops.core.on_arrays``): ``unboxed`` and
``boxed`` convert a cotangent at the edges, and a rule that needs Tensors (one
that calls user code or runs a graph) gets them boxed (``_on_tensors``).
"""
from ..ops import IndexedSlices, zeros_like
from ..ops.core.apply import mode
from ..ops.core.grad_util import compatible
from ..state import override, state
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
    """Run ``node``'s VJP rule for the inputs that lead to a source (on raw arrays with
    ``arrays=True``: the cotangents are arrays, and so are the rule's results)."""
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
    if arrays:
        in_grads = op.vjp(node, out_grads, needed, True) if op.array_rules \
            else _on_tensors(op, node, out_grads, needed)
    elif rule_marks_read():
        with override(gradient_of=node):
            in_grads = op.vjp(node, out_grads, needed)
    else:
        in_grads = op.vjp(node, out_grads, needed)
    for x, g in zip(node.inputs, in_grads):
        if g is not None and g.shape != x.shape and not compatible(g.shape, x.shape):
            i = next(i for i, h in enumerate(in_grads) if h is g)
            raise ValueError(
                f"Incompatible shapes between op input and calculated input gradient. "
                f"Forward operation: {node.name}. Input index: {i}. Original input shape: "
                f"{tuple(x.shape)}. Calculated input gradient shape: {tuple(g.shape)}.")
    return in_grads


def _on_tensors(op, node, out_grads, needed):
    """Run a rule that needs Tensors (``rules_need_tensors``) in a pass on arrays: its
    cotangents boxed, its ops on Tensors, its results back to arrays."""
    with mode(arrays=False):
        in_grads = op.vjp(node, [boxed(g) for g in out_grads], needed)
    return [unboxed(g) for g in in_grads]
