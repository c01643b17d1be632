"""Constant folding: compute now what would come out the same on every run.

A node whose inputs are all constants gives the same result each time the
function runs, so the optimiser runs its kernel once, now, and puts a constant
in its place. Folding feeds itself: in creation order, a node whose inputs were
just folded is folded in turn. A gradient graph is full of such chains: the
seed of ``tg.gradients`` is ``ones_like(loss)``, and the VJP of ``mean`` divides
it by the count and broadcasts it back, all before touching a single input::

    ones_like(loss) -> negative -> divide(., 64) -> broadcast_to((64,))
    becomes  Const [-0.0156, ...]

``ones_like`` reads only its input's shape: when that shape is fully known,
the input counts as constant here (so do the other shape-only inputs listed in
``shape_only_inputs`` in the op's ``defeffect``).

What is never folded: impure ops (placeholders, Variable reads, calls, loops,
see ``effects.py``), and results larger than ``MAX_FOLDED_BYTES``, which would
make the graph hold a big array instead of computing it when needed. A kernel
that fails (or warns) now is left in place, to fail (or warn) when it runs.
"""
import warnings

import numpy as np

from ... import backend
from ..graph import const_p
from . import effects
from .rewrite import Rewriter

#: The largest result (all outputs together) folded into a constant, in bytes.
MAX_FOLDED_BYTES = 1 << 20


def fold_constants(fn, max_bytes=None):
    """``fn`` with every foldable node replaced by constants holding its results."""
    limit = MAX_FOLDED_BYTES if max_bytes is None else max_bytes
    rw = Rewriter(fn)
    values = {}          # tensor id (old graph) -> its constant value
    for node in fn.nodes:
        if node.op is const_p:
            values[node.outputs[0].id] = node.params["value"]
            rw.copy(node)
            continue
        results = _try_fold(node, values, limit)
        if results is None:
            rw.copy(node)
            continue
        for t, value in zip(node.outputs, results):
            values[t.id] = value
            rw.constant(t, value)
        rw.note("folded", node, rw[node.outputs[0]].node)
    return rw.finish()


def _try_fold(node, values, limit):
    """The output arrays of ``node`` computed now, or None if it must not be folded."""
    if not effects.is_pure(node.op) or not node.outputs:
        return None
    shape_only = node.op.shape_only_inputs
    args = []
    for k, x in enumerate(node.inputs):
        if x.id in values:
            args.append(values[x.id])
        elif k in shape_only and x.shape is not None and None not in x.shape:
            args.append(np.broadcast_to(np.zeros((), x.dtype), x.shape))
        else:
            return None
    if not args:
        return None
    xp = backend.xp
    try:
        with np.errstate(all="raise"), warnings.catch_warnings():
            warnings.simplefilter("error")
            out = node.op.forward(*[xp.asarray(a) for a in args], **node.params)
    except Exception:   # noqa: BLE001 -- whatever it is, it happens at run time instead
        return None
    outs = list(out) if node.op.multiple_results else [out]
    arrays = [xp.array(o, copy=True) for o in outs]   # owned, contiguous, never a view
    if sum(a.nbytes for a in arrays) > limit:
        return None
    for a, t in zip(arrays, node.outputs):
        if a.dtype != t.dtype or not _fits(a.shape, t.shape):
            return None   # not what the graph says it makes: leave it alone
    return arrays


def _fits(shape, spec):
    """Does an array of ``shape`` fit a graph tensor's shape ``spec`` (None = unknown)?"""
    return spec is None or (len(shape) == len(spec) and
                            all(d is None or d == n for d, n in zip(spec, shape)))
