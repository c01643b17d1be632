"""Common-subexpression elimination: compute each distinct thing once.

Two nodes with the same op, the same inputs and equal params compute the same
values, so the second can use the first one's outputs. Gradient graphs repeat
themselves often: the VJP rules of ``x * x`` build ``g * x`` twice, every
``unbroadcast`` of the same cotangent sums it the same way, every rule that
needs the constant 2 makes its own. Walking the nodes in creation order, each
node is looked up by its *key* (op, the tensors it reads after merging, params);
a node whose key was seen before is dropped and its outputs stand for the
earlier node's.

Params are compared by value: numbers, strings, dtypes, tuples, and arrays
(dtype, shape and bytes, so ``0.0`` and ``-0.0`` stay apart; large arrays by
identity). Anything else (a loop's traced body, a function) is equal only to
itself. Only pure ops are merged (see ``effects.py``), never placeholders.

One exception keeps ``tg.recompute_grad`` working: the nodes its gradient rule
recomputes look exactly like the forward ones, and merging them would keep the
forward's values alive until the backward pass, the very memory it is there to
save. Nodes made by a custom gradient's rule are merged only among themselves.
"""
import numbers

import numpy as np

from ... import backend
from ..graph import placeholder_p
from . import effects
from .rewrite import Rewriter

#: Arrays in params up to this many bytes are compared by value; larger ones by identity.
MAX_COMPARED_BYTES = 1 << 16


def eliminate_common_subexpressions(fn):
    """``fn`` with each node that repeats an earlier one (same key) dropped."""
    rw = Rewriter(fn)
    seen = {}                          # key -> the node of the new graph computing it
    for node in fn.nodes:
        inputs = rw.inputs_of(node)
        key = node_key(node, inputs)
        earlier = seen.get(key) if key is not None else None
        if earlier is not None:
            rw.alias_outputs(node, earlier)
            rw.note("merged", node, earlier)
            continue
        new = rw.copy(node, inputs)
        if key is not None:
            seen[key] = new
    return rw.finish()


def node_key(node, inputs):
    """What makes ``node`` (reading the new graph's ``inputs``) equal to another, or
    None for a node that must never be merged."""
    if node.op is placeholder_p or not effects.is_pure(node.op):
        return None
    return (node.op, tuple(x.id for x in inputs), freeze(node.params), _rule_group(node))


def _rule_group(node):
    """Nodes made by a rule that recomputes (a custom gradient's: ``recomputes_in_rule``)
    form a group of their own."""
    forward = node.grad_of
    if forward is not None and forward.op.rule_recomputes:
        return id(forward)
    return None


def freeze(value):
    """A hashable stand-in for ``value`` that is equal exactly when the values are."""
    if value is None or isinstance(value, (bool, str, np.dtype, type)):
        return (type(value), value)
    if isinstance(value, numbers.Number) and not isinstance(value, np.ndarray):
        if value != value:   # NaN: equal only to itself
            return ("id", id(value))
        return (type(value), value)
    if isinstance(value, (tuple, list)):
        return (type(value), tuple(freeze(v) for v in value))
    if isinstance(value, dict):
        return (dict, tuple(sorted((k, freeze(v)) for k, v in value.items())))
    if isinstance(value, slice):
        return (slice, freeze(value.start), freeze(value.stop), freeze(value.step))
    if isinstance(value, (np.ndarray, backend.xp.ndarray)):
        if value.nbytes > MAX_COMPARED_BYTES:
            return ("id", id(value))
        host = backend.to_numpy(value)
        if host.dtype.kind == "O":
            return ("id", id(value))
        return ("array", host.dtype.str, host.shape, np.ascontiguousarray(host).tobytes())
    return ("id", id(value))   # a traced loop body, a function, a Variable: only itself
