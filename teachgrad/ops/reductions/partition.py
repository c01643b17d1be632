"""numpy's ``partition`` and ``argpartition``: the k-th smallest entry in its sorted
place, the smaller ones before it and the larger ones after (in no promised order).

``argpartition`` gives the indices that do it (integers: never differentiated), and
``partition`` takes them: ``take_along_axis(a, argpartition(a, kth))``, numpy's own
arrangement to the entry. It only moves entries, so its gradient moves each
cotangent back to where its entry came from (``take_along_axis``'s VJP).
"""
from ... import backend, validate
from ..core.apply import innermost
from ..core.declare import defbatch, defeffect, not_differentiable, primitive
from ..shape.along_axis import take_along_axis
from ..shape.reshape import shifted_axes_rule
from .scans import flat_or_axis


def _kth(kth, x, axis, where):
    """``kth`` (an int or a sequence of ints, negative from the end) as a tuple of
    positions in range along ``axis``."""
    length = x.shape[axis]
    many = isinstance(kth, (list, tuple))
    ks = [validate.integer(k, "kth", where) for k in (kth if many else [kth])]
    if many and not ks:
        validate.fail(ValueError, where, "kth", "at least one position", kth)
    if length == 0:
        validate.fail(ValueError, where, "a", f"a tensor with entries along axis {axis} "
                      f"(there is no k-th entry of none)", x)
    if length is not None and any(not -length <= k < length for k in ks):
        validate.fail(ValueError, where, "kth", f"positions in [{-length}, {length}) (the "
                      f"length of axis {axis})", kth)
    return tuple(ks)


# argpartition: the indices that partition x along an axis around positions kth.
argpartition_p = not_differentiable(primitive(
    "argpartition", lambda x, kth, axis: backend.xp.argpartition(x, kth, axis=axis)))
defeffect(argpartition_p, "fresh")
def argpartition(a, kth, axis=-1):
    """The indices that partition ``a`` along ``axis`` (None: flattened) around the
    positions ``kth`` (numpy's ``argpartition``): an integer tensor, never differentiated."""
    x, axis = flat_or_axis(a, axis, "tg.argpartition")
    return innermost.process(argpartition_p, x, kth=_kth(kth, x, axis, "tg.argpartition"), axis=axis)
defbatch(argpartition_p, shifted_axes_rule(argpartition_p, "axis"))


def partition(a, kth, axis=-1):
    r"""``a`` partitioned along ``axis`` (None: flattened): the entry at each position
    in ``kth`` is the one sorting would put there, smaller entries come before it and
    larger after (numpy's ``partition``). It is ``take_along_axis(a, argpartition(a,
    kth))``; VJP: each cotangent goes back to its entry's place."""
    x, axis = flat_or_axis(a, axis, "tg.partition")
    if x.ndim == 0:
        validate.fail(ValueError, "tg.partition", "a", "a tensor with at least one axis", a)
    return take_along_axis(x, argpartition(x, kth, axis), axis)
