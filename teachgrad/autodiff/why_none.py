"""Why ``GradientTape.gradient`` gave a source None, when a usual slip explains it: a tape
never entered, a source that is not a float, a forgotten ``tape.watch``. Said once, in a
warning (``GradientTape(explain_none=...)``)."""
import warnings

from .. import dtypes
from ..tensor import Variable


def warn_why_none(tape, sources, grads):
    """Warn, for each source whose gradient is None, of the slip that explains it."""
    for i, (s, g) in enumerate(zip(sources, grads)):
        if g is not None:
            continue
        reason = why_none(tape, s)
        if reason:
            label = s.name or ("the source" if len(sources) == 1 else f"source {i}")
            warnings.warn(f"GradientTape.gradient: the gradient with respect to {label} "
                          f"is None: {reason}", stacklevel=4)


def why_none(tape, source):
    """The slip that gives ``source`` no gradient on ``tape``, in words (None: the target
    just does not depend on it, which is not a mistake)."""
    if not tape.recording_spans():
        return ("the tape was never entered, so it recorded nothing. Compute the target "
                "inside `with tg.GradientTape() as tape:`.")
    if not dtypes.is_differentiable(source.dtype):
        return (f"it has dtype {source.dtype}, and only floating-point tensors get gradients. "
                f"Make it from a float (3.0, not 3) or tg.cast it to tg.float32/tg.float64.")
    if isinstance(source, Variable):
        if tape.is_watched(source):
            return None
        if not source.trainable:
            return ("it is a Variable made with trainable=False, which tapes do not watch by "
                    "themselves. Call tape.watch on it inside the `with` block (or make it "
                    "trainable).")
        if not tape.watches_accessed_variables:
            return ("the tape was made with watch_accessed_variables=False, so it watches "
                    "only what tape.watch was given. Call tape.watch on it inside the "
                    "`with` block.")
        return None   # trainable and never read in the block: the target does not use it
    if not tape.is_watched(source):
        return ("the tape does not watch it: only Variables are watched by themselves. Call "
                "tape.watch on it inside the `with` block, before it is used.")
    return None
