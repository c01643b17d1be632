"""Per-example gradients of a while loop lowered over a batch, in a graph.

``tg.vmap(tg.grad(f))``, where ``f`` runs a ``tg.while_loop`` whose condition reads
per-example values: in a graph the loop is one While node over the whole batch
(``batched.graph_batched_while``), built where the tape inside the map cannot see it.
So the tape is handed one node for the whole loop, as the mapped function sees it: its
inputs are each example's loop variables and the per-example values the loop
captures, its outputs each example's final loop variables. Its gradient is the While
node's own gradient (the backward While loop), taken on the batches: the examples
never mix inside the loop (a finished one is frozen by a selection), so the gradient of
the batch's loop, seeded with every example's cotangent, holds every example's gradient
in its rows::

    per-example gradient of example i  =  row i of  d(sum_k ct_k . loop_k(x_k)) / dx

A value shared by every example (not mapped) and read inside the loop would need its
gradient per example, which the batch's loop sums over the examples: that case is
refused, saying what to do, as are nested tapes (a second derivative) and forward
mode inside the map.
"""
from .. import dtypes
from ..autodiff.engine import backward
from ..ops import IndexedSlices, zeros_like
from ..ops.core.apply import mode
from ..ops.core.batching import BatchedTensor
from ..ops.core.declare import defvjp_all, primitive, rules_need_tensors
from ..ops.core.op import Node
from ..ops.core.recorder import hand_to_recorders
from ..ops.shape.reshape import repeat_like
from ..state import override, state


def inner_tapes(frame):
    """The recorders differentiating inside ``frame``'s map, checked: one tape, which
    this module can serve, or a clear error."""
    inside = [r for r in state.recorders if r.differentiates and r.entry > frame.entry]
    if inside and (len(inside) > 1 or not hasattr(inside[0], "gradient")):
        raise NotImplementedError(
            "tg.while_loop inside tg.vectorized_map, differentiated inside the mapped "
            "function by nested tapes (a second derivative) or by a forward-mode "
            "accumulator, is not supported while a graph is built. Take one gradient "
            "inside the map (tg.vmap(tg.grad(f))), differentiate outside it "
            "(tg.grad of the vectorized function), or run eagerly.")
    return inside


def record_loop(frame, tape, given, batches, outputs):
    """Hand ``tape`` one node for the lowered loop: ``given`` are the loop variables
    as the mapped function passed them, ``batches`` the While node's batched loop
    variables, ``outputs`` its outputs. Returns each example's final loop variables."""
    n = len(given)
    node = outputs[0].node
    finals = list(outputs[:n])
    inputs, sources, seen = [], [], {}
    pairs = list(zip(given, batches)) + [(_view_of(c, frame, tape), c) for c in node.inputs[n:]]
    for value, batch in pairs:
        if value is None:
            continue
        inputs.append(value)
        sources.append(_source(value, batch, seen))
    views = tuple(BatchedTensor(f, frame) for f in finals)
    graph = state.graph

    def grad_fn(*cts):
        with mode(batching=tuple(f for f in state.batching if f.entry < frame.entry),
                      recorders=state.recorders_before(frame.entry)):
            seeds = [zeros_like(f) if ct is None else _batch_of(ct, frame)
                     for ct, f in zip(cts, finals)]
            wanted = [s for s in sources if s is not None]
            grads = iter(backward(finals, seeds, wanted, graph.producer))
            grads = [None if s is None else next(grads) for s in sources]
        return [None if g is None else BatchedTensor(_dense(g), frame) for g in grads]

    with override(recorders=(tape,)):
        hand_to_recorders(Node(per_example_while_p, tuple(inputs), views,
                               {"grad_fn": grad_fn}), graph)
    return list(views)


def _no_kernel(*arrays, grad_fn):
    raise RuntimeError("per_example_while stands for a lowered loop on a tape; the graph "
                       "runs the While node itself.")


def _per_example_vjp(cts, ans, *inputs, grad_fn):
    return grad_fn(*cts)


# per_example_while(*per-example inputs; grad_fn): a batch's While node as the mapped
# function sees it. Only a tape inside the map records it; its VJP is the batch's loop's.
per_example_while_p = primitive("per_example_while", _no_kernel, multiple_results=True)
rules_need_tensors(defvjp_all(per_example_while_p, _per_example_vjp))   # builds a loop


def _view_of(capture, frame, tape):
    """The per-example value whose batch the loop captured as ``capture`` (None when the
    tape cannot need its gradient: not a float, or a shared value the tape ignores)."""
    if not dtypes.is_floating(capture.dtype):
        return None
    views = frame.views.get(capture.id)
    if views is None:
        if tape.is_watched(capture):
            raise NotImplementedError(
                f"tg.while_loop inside tg.vectorized_map reads {capture.name or 'a value'}, "
                f"shared by every example, and the tape inside the mapped function "
                f"differentiates it: in a graph its per-example gradient is not supported. "
                f"Map it too (in_axes=0 over a copy per example, tg.repeat), differentiate "
                f"outside the map, or run eagerly.")
        return None
    if len(views) > 1:
        raise _ambiguous()
    return views[0]


def _ambiguous():
    return NotImplementedError(
        "tg.while_loop inside tg.vectorized_map reads one batch through several "
        "per-example values (the same tensor mapped as two arguments?), differentiated "
        "inside the mapped function in a graph: which one's gradient it is is ambiguous. "
        "Pass a copy (tg.identity) for each argument, or run eagerly.")


def _source(value, batch, seen):
    """What to differentiate for ``value`` (fed to the loop as ``batch``): the batch,
    once (the loop's gradient for it is the total over every place the loop reads it),
    or None (an integer, or a batch already counted)."""
    if not dtypes.is_floating(batch.dtype):
        return None
    if batch.id in seen:
        if seen[batch.id] is not value:
            raise _ambiguous()
        return None
    seen[batch.id] = value
    return batch


def _batch_of(ct, frame):
    ct = _dense(ct)
    if isinstance(ct, BatchedTensor) and ct.frame is frame:
        return ct.batched
    return repeat_like(ct, frame.like)


def _dense(g):
    return g.to_dense() if isinstance(g, IndexedSlices) else g
