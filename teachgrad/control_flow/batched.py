"""``tg.cond`` and ``tg.while_loop`` inside ``tg.vectorized_map``.

Inside a map, a predicate may differ from example to example: one example takes the
true branch, another the false one; one example's loop stops while another's goes on.
So, as JAX does:

* a ``cond`` whose predicate is batched runs **both** branches and keeps, for each
  example, the result of its branch: ``tg.where(pred, true_result, false_result)``.
  Gradients follow the same selection, so each example's gradient is its branch's;
  differentiated inside the map, each branch's gradient is selected too, so what the
  untaken branch computes (a nan at ``sqrt(0)``) never reaches it (``branch_masks``).
* a ``while_loop`` runs while **any** example's predicate holds; in each iteration an
  example whose predicate no longer holds keeps its loop variables unchanged
  (``tg.where(pred, new, old)``). Each example ends with the values its own loop gives.

Eagerly this is a Python loop of ordinary, recorded ops. While a graph is built it is
still one While node: the loop runs on the whole batch, with ``cond`` and ``body``
calling the user's functions inside the map again. Which loop variables must hold a
batch is found first, by tracing ``cond`` and ``body`` until no new one turns batched
(a counter that never meets a batched value stays one number, as JAX's fixpoint finds).
A tape entered inside the map (``tg.vmap(tg.grad(f))``) sees that While node as one op
of the examples' values, whose gradient is the batch's loop's (``batched_gradient``).
"""
import contextlib
import threading

from .. import nest
from ..ops import any as any_of, where
from ..ops.core.apply import mode
from ..ops.core.batching import BatchedTensor, batched_at, unbatchable_gradient
from ..ops.core.declare import defbatch
from ..ops.shape.reshape import repeat_like
from ..state import state
from ..tensor import Tensor
from .batched_gradient import inner_tapes, record_loop
from .branch_masks import branch_edges
from .subgraph import as_tensor, trace


def inside_map(*values):
    """Do ``cond`` / ``while_loop`` with these values need the batched path? Inside a
    map: when one of them differs by example, or when a graph is being built (its
    branches and bodies may read the map's values)."""
    if not state.batching:
        return False
    return state.graph is not None or any(
        isinstance(v, BatchedTensor) for v in nest.flatten(values))


def select(pred, when_true, when_false, what):
    """For each example, ``when_true``'s leaves where ``pred`` holds, else ``when_false``'s."""
    nest.assert_same_structure(when_true, when_false, what)
    leaves = [where(pred, t, f) for t, f in zip(nest.flatten(when_true),
                                               nest.flatten(when_false))]
    return nest.pack_sequence_as(when_true, leaves)


_LOWERING = threading.local()   # the frames whose loops are lowered for a tape inside


@contextlib.contextmanager
def lowering(frame, tapes):
    """While a loop is lowered for a tape inside ``frame`` (see ``batched_gradient``)."""
    before = getattr(_LOWERING, "frames", ())
    _LOWERING.frames = before + ((frame,) if tapes else ())
    try:
        yield
    finally:
        _LOWERING.frames = before


def batched_cond(pred, true_fn, false_fn):
    """Both branches, each example's result chosen by its ``pred``."""
    pred = as_tensor(pred, name="pred", where="tg.cond")
    if isinstance(pred, BatchedTensor) and pred.frame in getattr(_LOWERING, "frames", ()):
        raise NotImplementedError(
            "A per-example tg.cond inside a per-example tg.while_loop, differentiated inside "
            "tg.vectorized_map while a graph is built, is not supported: the loop's "
            "gradient is taken on the batch, where the untaken branch's gradient (a nan at "
            "sqrt(0)) is not masked. Use tg.where, differentiate outside the map, or run "
            "eagerly.")
    with branch_edges(pred, True):
        when_true = true_fn()
    with branch_edges(pred, False):
        when_false = false_fn()
    return select(pred, when_true, when_false,
                  "the results of true_fn and false_fn (tg.cond inside tg.vectorized_map)")


def any_example(pred):
    """A bool that holds when ``pred`` holds for some example of every map it is
    batched in (a plain bool tensor: a loop's condition)."""
    while isinstance(pred, BatchedTensor):
        pred = any_of(pred.batched)
    return pred


def eager_batched_while(cond, body, call, flat, structure, maximum_iterations):
    """The loop for a whole batch, eagerly: until no example's ``cond`` holds."""
    iteration = 0
    while maximum_iterations is None or iteration < maximum_iterations:
        pred = as_tensor(call(cond, structure, flat), name="cond's result",
                         where="tg.while_loop")
        if not bool(any_example(pred)):
            break
        new = nest.flatten(call(body, structure, flat))
        if len(new) != len(flat):
            raise ValueError(f"tg.while_loop: body returned {len(new)} loop variables for "
                             f"{len(flat)}; it must return them all, in loop_vars' structure.")
        flat = [where(pred, n, o) if isinstance(pred, BatchedTensor) else n
                for n, o in zip(new, flat)]
        iteration += 1
    return nest.pack_sequence_as(structure, flat)


def graph_batched_while(loop, cond, body, call, flat, structure, maximum_iterations, name):
    """The loop for a whole batch in a graph: one While node over the batches of every
    loop variable, whose ``cond`` and ``body`` run the user's inside the map."""
    frame = state.batching[-1]
    tapes = inner_tapes(frame)
    # Differentiated inside the map, every loop variable holds a batch: each example's
    # gradient is a row of the batch's (batched_gradient).
    need = [True] * len(flat) if tapes else \
        _batched_loop_vars(cond, body, call, flat, structure, frame)

    def views(batches):
        return [BatchedTensor(b, frame) if n else b for b, n in zip(batches, need)]

    def lowered_cond(*batches):
        with frame.entered():
            pred = call(cond, structure, views(batches))
        return any_example(pred) if batched_at(pred, frame) else pred

    def lowered_body(*batches):
        with frame.entered():
            old = views(batches)
            pred = call(cond, structure, old)
            new = nest.flatten(call(body, structure, old))
            if batched_at(pred, frame):
                new = [where(pred, n, o) for n, o in zip(new, old)]
        return [to_batch(v, frame) if n else v for v, n in zip(new, need)]

    with mode(batching=state.batching[:-1],
                  recorders=state.recorders_before(frame.entry)), lowering(frame, tapes):
        batches = [to_batch(v, frame) if n else v for v, n in zip(flat, need)]
        result = nest.flatten(loop(lowered_cond, lowered_body, batches,
                                   maximum_iterations=maximum_iterations, name=name))
    if tapes:
        return nest.pack_sequence_as(structure, record_loop(frame, tapes[0], flat, batches,
                                                            result[0].node.outputs))
    return nest.pack_sequence_as(structure, views(result))


def _batched_loop_vars(cond, body, call, flat, structure, frame):
    """Which loop variables hold a batch: those given batched, those the body makes
    batched from them, and all of them when the predicate is batched (a finished
    example must keep its values: a selection per example). Found by tracing ``cond``
    and ``body`` in graphs that are thrown away, until nothing changes."""
    need = [batched_at(v, frame) for v in flat]
    while True:
        found = []

        def probe(*inputs):
            with frame.entered():
                views = [BatchedTensor(t, frame) if n else t for t, n in zip(inputs, need)]
                pred = call(cond, structure, views)
                new = nest.flatten(call(body, structure, views))
            found.extend(batched_at(pred, frame) or batched_at(v, frame) for v in new)

        with mode(batching=state.batching[:-1]):
            trace(probe, [(_lowered_shape(v, n, frame), v.dtype, f"loop_var_{k}")
                          for k, (v, n) in enumerate(zip(flat, need))], "batched_probe")
        grown = [n or f for n, f in zip(need, found)]
        if grown == need:
            return need
        need = grown


def _lowered_shape(value, batched, frame):
    example = value.shape if value.shape is None else tuple(value.shape)
    if not batched or example is None:
        return example
    return (frame.like.shape[0],) + example


def refuse_batching(op, kind):
    """Give ``op`` (the While or If op) its batching rule, which refuses. The ``cond``
    and ``while_loop`` above never bind them with a map's values (they batch their bodies
    themselves); only their own gradients in a graph do (a tape's gradient or
    tg.gradients mapped over cotangents), and the subgraphs those trace are one
    example's: refused, clearly."""
    def rule(values, batched, **params):
        raise unbatchable_gradient(f"a {kind} node")
    defbatch(op, rule)


def to_batch(value, frame):
    """``value`` as a batch of ``frame``: its batch if it has one, else repeated."""
    if batched_at(value, frame):
        return value.batched
    value = value if isinstance(value, Tensor) else as_tensor(value)
    return repeat_like(value, frame.like)
