"""Facts about shapes that VJP rules and the engines check, with no op in them.

In a graph a dimension may be unknown (None) until the graph runs, so "the
same shape" means "could be the same shape" (``compatible``). The helpers
that move a cotangent to an input's shape (``unbroadcast``, ``reshape_as``,
``broadcast_as``) are ops of their own kind and live with the shape ops.
"""
from ... import validate
from ...tensor import Tensor, holds_tensor, packed


def known(shape):
    """Is every dimension of ``shape`` known?"""
    return shape is not None and None not in shape


def compatible(a, b):
    """Could shapes ``a`` and ``b`` (None = unknown) be the same?"""
    if a is None or b is None or a == b:
        return True
    return len(a) == len(b) and all(p is None or q is None or p == q for p, q in zip(a, b))


def broadcastable(*shapes):
    """Could ``shapes`` (None = unknown) broadcast together, as numpy's rules say?"""
    if any(s is None for s in shapes):
        return True
    n = max(len(s) for s in shapes)
    for dims in zip(*[(1,) * (n - len(s)) + tuple(s) for s in shapes]):
        if len({d for d in dims if d is not None and d != 1}) > 1:
            return False
    return True


def require_same_shape(op_name, first, second, names):
    """Raise a ValueError unless tensors ``first`` and ``second`` (called ``names``) could
    have one shape: the fused gradient ops (tanh_grad, relu_grad...) take no broadcasting."""
    if not compatible(first.shape, second.shape):
        raise ValueError(f"{op_name}: {names[0]} and {names[1]} must have the same shape, got "
                         f"{first.shape} and {second.shape}.")


def value_of(t):
    """The array a rule's argument holds: a Tensor's value (None for a graph tensor), or
    the argument itself when the rule runs on raw arrays (``core.on_arrays``). For a
    rule that must look at a value (is the exponent 0? are the indices known?)."""
    return t.value if isinstance(t, Tensor) else t


def as_tensor(x, name, where):
    """``x`` (the argument ``name`` of ``where``) as a Tensor, for an op that reads its
    shape before it hands itself over: a number or nested list becomes a constant (checked, with a
    message naming the argument); a Tensor, Variable or symbolic tensor is kept; a list
    holding tensors is their ``tg.stack``."""
    if isinstance(x, Tensor):
        return x
    if type(x) in (list, tuple) and holds_tensor(x):
        return packed(x, name, where)   # tg.stack of its entries: differentiable
    return Tensor(validate.tensor_like(x, name, where))


#: The most entries an op that makes entries from counts (repeat, tile, pad, arange,
#: linspace) makes: a count that is wrong (10**12) is an error, not a machine out of memory.
MAX_ENTRIES = 2 ** 31


def check_entries(entries, name, value, where):
    """Refuse (ValueError naming ``name``) a result of more than ``MAX_ENTRIES`` entries."""
    if entries > MAX_ENTRIES:
        validate.fail(ValueError, where, name, "a count giving at most 2**31 entries", value,
                      f"It would make {entries} entries.")
