"""Stacks of per-iteration values: what a loop keeps for its gradient.

The forward loop appends, each iteration, the values that the body's
gradient will need; the backward loop reads them back from the last
iteration to the first. A stack becomes one array with the iteration as its
first axis. Values whose shapes differ between iterations (an inner loop
that ran a different number of times, say) are padded with zeros to the
largest shape: the backward loop only reads the entries that were written.
"""
import numpy as np

from .. import backend


def stack_values(values, shape, dtype):
    """One array from a list of per-iteration arrays (``shape``/``dtype`` for an empty list).

    ``None`` entries (an untaken cond branch's intermediates) become zeros.
    """
    xp = backend.xp
    present = [v for v in values if v is not None]
    if not present:
        known = () if shape is None else tuple(0 if d is None else d for d in shape)
        return xp.zeros((len(values),) + known, dtype=dtype)
    shapes = {np.shape(v) for v in present}
    if len(shapes) == 1:
        (common,) = shapes
        if len(present) == len(values):
            return xp.stack(values)
    else:
        ranks = {len(s) for s in shapes}
        if len(ranks) != 1:
            raise ValueError(f"A loop intermediate changes rank between iterations "
                             f"({sorted(shapes)}); its gradient cannot be taken.")
        common = tuple(max(sizes) for sizes in zip(*shapes))
    out = xp.zeros((len(values),) + common, dtype=present[0].dtype)
    for i, v in enumerate(values):
        if v is not None:
            out[(i,) + tuple(slice(0, n) for n in np.shape(v))] = v
    return out


def stack_shape(tensor):
    """The shape of the stack of ``tensor``'s per-iteration values: a first axis of
    unknown length (the number of iterations), then its own."""
    return None if tensor.shape is None else (None,) + tuple(tensor.shape)
