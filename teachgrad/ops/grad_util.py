"""Facts about shapes that VJP rules and the engines check, with no op in them.

In a graph a dimension may be unknown (None) until the graph runs, so "the
same shape" means "could be the same shape" (``compatible``). The helpers
that move a cotangent to an input's shape (``unbroadcast``, ``reshape_as``,
``broadcast_as``) are ops of their own kind and live with the shape ops.
"""
from ..tensor import Tensor, convert_to_tensor


def known(shape):
    """Is every dimension of ``shape`` known?"""
    return shape is not None and None not in shape


def compatible(a, b):
    """Could shapes ``a`` and ``b`` (None = unknown) be the same?"""
    if a is None or b is None or a == b:
        return True
    return len(a) == len(b) and all(p is None or q is None or p == q for p, q in zip(a, b))


def require_same_shape(op_name, first, second, names):
    """Raise a ValueError unless tensors ``first`` and ``second`` (called ``names``) could
    have one shape: the fused gradient ops (tanh_grad, relu_grad...) take no broadcasting."""
    if not compatible(first.shape, second.shape):
        raise ValueError(f"{op_name}: {names[0]} and {names[1]} must have the same shape, got "
                         f"{first.shape} and {second.shape}.")


def as_tensor(x):
    """``x`` as a Tensor, for an op that reads its shape before ``bind`` (a number or a
    nested list becomes a constant; a Tensor, Variable or symbolic tensor is kept)."""
    return x if isinstance(x, Tensor) else convert_to_tensor(x)
