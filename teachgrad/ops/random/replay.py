"""The gradient of a traced function sees the numbers its call drew.

``tg.function`` differentiates a call by tracing the Python function again, as a
gradient graph of its own (``teachgrad/graph/concrete.py``). Run again, a draw
would draw *new* numbers: a dropout mask in the gradient that is not the mask of
the forward pass, a silently wrong gradient. So a traced function returns its
draws as hidden extra outputs of its call, and while its gradient is traced each
draw it makes, in the same order, is *replayed*: it stands for the placeholder
fed with what the forward call drew, instead of a new node.

Every stateful draw goes through ``draw`` (``tg.random``, ``Generator``,
``tg.nn.dropout``). Draws inside a loop body or a branch are not replayed: they
belong to the loop's graph, not to the function's.
"""
import contextlib

from ...state import state
from ..core.apply import innermost, mode
from ..core.batching import BatchedTensor


class Replay:
    """The draws of one forward graph, handed out in order while ``graph`` is traced."""

    def __init__(self, graph, forward_draws, placeholders):
        self.graph = graph
        self.pending = list(zip(forward_draws, placeholders))

    def next(self, op):
        if not self.pending:
            raise RuntimeError(self._differs(op, "more draws than"))
        forward, placeholder = self.pending.pop(0)
        if forward.node.op is not op:
            raise RuntimeError(self._differs(op, f"a {op.name} where it drew a "
                                                 f"{forward.node.op.name}, unlike"))
        return placeholder

    @staticmethod
    def _differs(op, what):
        return (f"tg.function: traced again for its gradient, the function made {what} "
                f"when it was first traced (at {op.name}). Its random draws must not depend "
                f"on Python state that changes between traces.")


class Replaying:
    """The replay in progress, if any (one object for the process, as the seeds)."""

    def __init__(self):
        self.current = None

    @contextlib.contextmanager
    def of(self, replay):
        outer, self.current = self.current, replay
        try:
            yield replay
        finally:
            self.current = outer


REPLAYING = Replaying()


def draw(op, *args, **params):
    """``innermost.process(op, ...)`` for a stateful draw, unless a gradient's trace replays it. In a
    traced function's graph the draw is noted in its ``draws`` (the hidden outputs).
    Inside ``tg.vectorized_map`` each example draws its own numbers (``per_example``)."""
    if not args and "shape" in params and any(f.draws_apart for f in state.batching):
        return per_example(op, params)
    graph = state.graph
    replay = REPLAYING.current
    if replay is not None and graph is replay.graph:
        return replay.next(op)
    out = innermost.process(op, *args, **params)
    draws = getattr(graph, "draws", None)
    if draws is not None and getattr(out, "graph", None) is graph:
        draws.append(out)
    return out


def per_example(op, params):
    """A draw of ``params["shape"]`` inside a running ``tg.vectorized_map``: as
    TensorFlow's pfor does, one draw of the batch's size in front, so that each example
    has numbers of its own (a draw shared by every example would make them all alike).
    The maps a transformation runs over its own directions (``tg.jacfwd``'s tangents,
    a Jacobian's seeds) are not examples: their directions share the draw."""
    frames = state.batching
    k = max(i for i, f in enumerate(frames) if f.draws_apart)
    frame = frames[k]
    if frame.size is None:
        raise NotImplementedError(
            f"tg.vectorized_map: a random draw ({op.name}) inside the mapped function needs "
            f"the batch size, which this graph learns only when it runs. Give the batch a "
            f"known size (no None in the placeholder's first dimension), or draw outside "
            f"the map with the batch's size in front and map over the draw.")
    batch_shape = (frame.size,) + tuple(params["shape"])
    with mode(batching=frames[:k], recorders=state.recorders_before(frame.entry)):
        batch = draw(op, **dict(params, shape=batch_shape))
    return BatchedTensor(batch, frame)
